//! What a forwarded request tells its front request while it runs: the backend request's
//! progress and log records, and the status messages of a backend task it follows.

use std::sync::Arc;

use ferromcp_client::RequestOptions;
use ferromcp_dispatch::Progress;
use ferromcp_server::RequestContext;
use ferromcp_types::mcp::{LoggingLevel, LoggingMessageNotificationParams};
use serde_json::Value;
use tokio::sync::mpsc;

/// The reports one forwarded request may queue before more are dropped (progress and log
/// records are advisory; the queue drains while the request runs).
pub(crate) const REPORT_QUEUE: usize = 64;

/// One report for the front request.
pub(crate) enum Report {
    /// The backend request's progress, as it came.
    Progress(Progress),
    /// A log record the backend sent in relation to the request.
    Log(LoggingLevel, String, Value),
    /// A new status message of the backend task the request follows.
    Status(String),
}

/// The name a backend's log record carries on the front: the mount, then the backend's own
/// logger (`{mount}/{logger}`).
pub(crate) fn front_logger(mount: &str, log: &LoggingMessageNotificationParams) -> String {
    log.logger
        .as_deref()
        .map_or_else(|| mount.to_owned(), |l| format!("{mount}/{l}"))
}

/// `opts` with the backend request's progress and related log records queued on `reports`.
pub(crate) fn reporting(
    opts: RequestOptions,
    reports: &mpsc::Sender<Report>,
    mount: &Arc<str>,
) -> RequestOptions {
    let (progress, logs, mount) = (reports.clone(), reports.clone(), mount.clone());
    opts.on_progress(move |p| {
        // A full queue drops a report.
        let _ = progress.try_send(Report::Progress(p));
    })
    .on_log(move |log| {
        let logger = front_logger(&mount, &log);
        if logs
            .try_send(Report::Log(log.level, logger, log.data))
            .is_err()
        {
            tracing::debug!(mount = %mount, "a backend log record dropped: the report queue is full");
        }
    })
}

/// Passes `report` on to the front request `ctx`. A log record goes at the level the front
/// request lets through. A status message becomes the front task's status message when `ctx`
/// runs as a task, else a progress notification (with the message, its progress one past the
/// last reported, as progress must increase). `last` is the last progress reported on `ctx`.
pub(crate) async fn report(ctx: &RequestContext, report: Report, last: &mut f64) {
    match report {
        Report::Progress(p) => {
            *last = p.progress;
            ctx.progress(p.progress, p.total, p.message.as_deref())
                .await;
        }
        Report::Log(level, logger, data) => ctx.log(level, Some(&logger), data).await,
        Report::Status(message) => {
            if ctx.task_id().is_some() {
                ctx.set_task_status(message).await;
            } else {
                *last = last.floor() + 1.0;
                ctx.progress(*last, None, Some(&message)).await;
            }
        }
    }
}
