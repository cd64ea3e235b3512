//! What a forwarded request tells its front request while it runs: the backend request's
//! progress and log records, and the status messages of a backend task it follows.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use ferromcp_client::RequestOptions;
use ferromcp_dispatch::Progress;
use ferromcp_server::RequestContext;
use ferromcp_types::mcp::{LoggingLevel, LoggingMessageNotificationParams};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio::sync::mpsc::error::TrySendError;

/// The progress last reported on a front request before any was: every progress is above it.
pub(crate) const NO_PROGRESS: f64 = f64::NEG_INFINITY;

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

/// Queues `report` for the front request. A full queue drops it (progress, log records and
/// status messages are advisory; the queue drains while the request runs): counted on the
/// backend's `dropped` and logged at debug level with that running total. A queue already
/// closed (the request ended) takes nothing more.
pub(crate) fn queue(tx: &mpsc::Sender<Report>, report: Report, dropped: &AtomicU64, mount: &str) {
    if let Err(TrySendError::Full(_)) = tx.try_send(report) {
        let dropped = dropped.fetch_add(1, Ordering::Relaxed).saturating_add(1);
        tracing::debug!(
            mount,
            dropped,
            "a backend report dropped: the report queue is full (Backend::max_queued_reports)"
        );
    }
}

/// `opts` with the backend request's progress and related log records queued on `reports`
/// (drops counted on `dropped`).
pub(crate) fn reporting(
    opts: RequestOptions,
    reports: &mpsc::Sender<Report>,
    mount: &Arc<str>,
    dropped: &Arc<AtomicU64>,
) -> RequestOptions {
    let (progress, logs) = (reports.clone(), reports.clone());
    let (p_mount, p_dropped) = (mount.clone(), dropped.clone());
    let (mount, dropped) = (mount.clone(), dropped.clone());
    opts.on_progress(move |p| queue(&progress, Report::Progress(p), &p_dropped, &p_mount))
        .on_log(move |log| {
            let logger = front_logger(&mount, &log);
            queue(
                &logs,
                Report::Log(log.level, logger, log.data),
                &dropped,
                &mount,
            );
        })
}

/// Passes `report` on to the front request `ctx`. Progress must increase with each
/// notification (whatever was dropped on the way): the backend's progress goes on only when it
/// is above the last reported (a backend that repeats or goes back has those left out). A log
/// record goes at the level the front request lets through. A status message becomes the
/// front task's status message when `ctx` runs as a task, else a progress notification (with
/// the message, its progress the next whole number above the last reported). `last` is the
/// last progress reported on `ctx` ([`NO_PROGRESS`] before any).
pub(crate) async fn report(ctx: &RequestContext, report: Report, last: &mut f64) {
    match report {
        Report::Progress(p) => {
            // NaN compares as nothing: left out too.
            if p.progress.partial_cmp(last) != Some(std::cmp::Ordering::Greater) {
                tracing::debug!(
                    progress = p.progress,
                    last = *last,
                    "backend progress left out: it does not increase"
                );
                return;
            }
            *last = p.progress;
            ctx.progress(p.progress, p.total, p.message.as_deref())
                .await;
        }
        Report::Log(level, logger, data) => ctx.log(level, Some(&logger), data).await,
        Report::Status(message) => {
            if ctx.task_id().is_some() {
                ctx.set_task_status(message).await;
            } else {
                *last = last.max(0.0).floor() + 1.0;
                ctx.progress(*last, None, Some(&message)).await;
            }
        }
    }
}
