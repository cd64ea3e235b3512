//! What a forwarded request tells its front request while it runs (progress, log records,
//! task status): queued at most `Backend::max_queued_reports` at a time, the ones beyond
//! dropped and counted (C61); progress that reaches the front increases with each
//! notification, whatever was dropped and whatever the backend sent (C62).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::{Arc, Mutex};

use common::{DEADLINE, text};
use ferromcp_client::{Client, Connected, Lifecycle, RequestOptions};
use ferromcp_compose::{Backend, Composer, DEFAULT_MAX_QUEUED_REPORTS};
use ferromcp_server::mcp_server::RawArgs;
use ferromcp_server::{McpServer, RequestContext};
use ferromcp_types::Era;
use ferromcp_types::mcp::LoggingLevel;
use serde_json::{Value, json};
use tokio::time::timeout;
use tracing::field::{Field, Visit};
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::{Layer, Registry};

/// Reports one flood sends: as many progress notifications and as many log records.
const FLOOD: usize = 300;

/// A backend whose `flood` sends progress 1..=FLOOD and a log record after each, as fast as it
/// can (in process: each lands in the forwarded request's queue at once), and whose `wobble`
/// reports the progress values of its `values` argument as given.
fn flooding() -> McpServer {
    McpServer::builder("f", "1")
        .tool("flood", |ctx: RequestContext| async move {
            for i in 1..=FLOOD {
                #[allow(clippy::cast_precision_loss)]
                ctx.progress(i as f64, None, None).await;
                ctx.log(LoggingLevel::Info, None, json!(i)).await;
            }
            "flooded".to_owned()
        })
        .tool(
            "wobble",
            |ctx: RequestContext, RawArgs(a): RawArgs| async move {
                let values = a.get("values").and_then(Value::as_array).cloned();
                for v in values.unwrap_or_default() {
                    ctx.progress(v.as_f64().unwrap_or_default(), None, None)
                        .await;
                }
                "wobbled".to_owned()
            },
        )
        .build()
        .unwrap()
}

/// Counts the `debug` lines of dropped reports, per mount, keeping the running total each
/// line carries.
#[derive(Clone, Default)]
struct Drops(Arc<Mutex<Vec<(String, u64)>>>);

#[derive(Default)]
struct DropLine {
    mount: Option<String>,
    dropped: Option<u64>,
}

impl Visit for DropLine {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "mount" {
            self.mount = Some(value.to_owned());
        }
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        if field.name() == "dropped" {
            self.dropped = Some(value);
        }
    }
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "mount" {
            self.mount = Some(format!("{value:?}").trim_matches('"').to_owned());
        }
    }
}

impl<S: tracing::Subscriber> Layer<S> for Drops {
    fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
        let mut line = DropLine::default();
        event.record(&mut line);
        if let (Some(mount), Some(dropped)) = (line.mount, line.dropped) {
            self.0.lock().unwrap().push((mount, dropped));
        }
    }
}

impl Drops {
    /// Forgets the lines seen (a new composed server counts from 0).
    fn clear(&self) {
        self.0.lock().unwrap().clear();
    }

    /// The reports `mount` dropped: the last running total logged (0 when none was).
    fn of(&self, mount: &str) -> u64 {
        let lines = self.0.lock().unwrap();
        let totals = lines.iter().filter(|(m, _)| m == mount);
        let (count, last) = totals.fold((0, 0), |(n, _), (_, d)| (n + 1, *d));
        assert_eq!(
            count, last,
            "one line per dropped report, with the running total"
        );
        last
    }
}

/// What one front call received: its answer, its progress values and its log records.
async fn call(client: &Client, tool: &str, args: Value) -> (String, Vec<f64>, usize) {
    let progress = Arc::new(Mutex::new(Vec::new()));
    let logs = Arc::new(Mutex::new(0usize));
    let (p, l) = (progress.clone(), logs.clone());
    let opts = RequestOptions::new()
        .on_progress(move |n| p.lock().unwrap().push(n.progress))
        .on_log(move |_| *l.lock().unwrap() += 1);
    let r = client.call_tool_with(tool, args, opts).await.unwrap();
    let progress = progress.lock().unwrap().clone();
    let logs = *logs.lock().unwrap();
    (text(&r), progress, logs)
}

fn increasing(values: &[f64]) -> bool {
    values.windows(2).all(|w| w[1] > w[0])
}

/// C61: a backend flooding one forwarded call with progress and log records, faster than the
/// front sends them on, fills the call's report queue (`Backend::max_queued_reports`): the
/// call still completes, the reports beyond the bound are dropped and counted (one `debug`
/// line each, with the backend's running total), and every report is either received by the
/// front or counted as dropped; the progress the front receives still increases. With a
/// bound above the flood nothing is dropped. Both backend eras.
#[tokio::test]
async fn c61_a_flooding_backend_is_bounded_by_its_report_queue() {
    let drops = Drops::default();
    let _guard = tracing::subscriber::set_default(Registry::default().with(drops.clone()));
    timeout(DEADLINE, async {
        // The large bound is above the default: a setting ignored would drop there.
        const { assert!(DEFAULT_MAX_QUEUED_REPORTS < 2 * FLOOD) };
        for era in common::ERAS {
            drops.clear();
            let server = flooding();
            let composed = Composer::builder("hub", "1")
                .mount(
                    "small",
                    Backend::in_process_era(&server, era).max_queued_reports(4),
                )
                .mount(
                    "large",
                    Backend::in_process_era(&server, era).max_queued_reports(2 * FLOOD),
                )
                .build()
                .await
                .unwrap();
            let client = Client::builder()
                .lifecycle(Lifecycle::Handshake)
                .connect(Connected::new(Arc::new(
                    composed.server().server().in_process(Era::Handshake),
                )))
                .await
                .unwrap();
            client.set_logging_level(LoggingLevel::Debug).await.unwrap();

            let (answer, progress, logs) = call(&client, "small_flood", json!({})).await;
            assert_eq!(answer, "flooded", "{era:?}");
            let dropped = drops.of("small");
            assert!(dropped > 0, "{era:?}: a queue of 4 overflows");
            assert!(!progress.is_empty(), "{era:?}: the queue drains");
            assert!(increasing(&progress), "{era:?}: {progress:?}");
            assert_eq!(
                progress.len() + logs + usize::try_from(dropped).unwrap(),
                2 * FLOOD,
                "{era:?}: each report received or counted dropped"
            );

            let (answer, progress, logs) = call(&client, "large_flood", json!({})).await;
            assert_eq!(answer, "flooded");
            assert_eq!(drops.of("large"), 0, "{era:?}: nothing dropped");
            assert_eq!((progress.len(), logs), (FLOOD, FLOOD), "{era:?}");
            assert!(increasing(&progress), "{era:?}");
            client.shutdown().await;
            composed.shutdown().await;
        }
    })
    .await
    .expect("within the deadline");
}

/// C62: progress must increase with each notification: a backend that repeats or lowers its
/// progress has those reports left out on the front (the rest passes on as sent).
#[tokio::test]
async fn c62_backend_progress_that_does_not_increase_is_left_out() {
    timeout(DEADLINE, async {
        for era in common::ERAS {
            let server = flooding();
            let composed = Composer::builder("hub", "1")
                .mount("f", Backend::in_process_era(&server, era))
                .build()
                .await
                .unwrap();
            for front in common::ERAS {
                let client = common::front_client(composed.server(), front).await;
                let values = json!({"values": [0, 1, 3, 2, 3, 3.5, 1, 4]});
                let (answer, progress, _) = call(&client, "f_wobble", values).await;
                assert_eq!(answer, "wobbled");
                assert_eq!(
                    progress,
                    [0.0, 1.0, 3.0, 3.5, 4.0],
                    "{era:?} backend, {front:?} front"
                );
                client.shutdown().await;
            }
            composed.shutdown().await;
        }
    })
    .await
    .expect("within the deadline");
}
