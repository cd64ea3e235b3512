//! Progress on tasks, against ferromcp's own McpServer over a message stream.
//!
//! Spec: 2025-11-25 basic/utilities/tasks › Task Progress Notifications ("The `progressToken`
//! provided in the initial request remains valid throughout the task lifetime"), with
//! basic/utilities/progress; and SEP-2663 (the 2026-07-28 tasks extension: progress is "not
//! supported on tasks in general"). The server keeps reporting under the original token
//! after answering `tools/call` with a `CreateTaskResult`, and stops once the task is
//! terminal; the client routes those reports to the call's `on_progress` callback while its
//! `TaskHandle` lives and the task is not terminal.

#![allow(clippy::unwrap_used, clippy::panic, reason = "test assertions")]

mod common;

use std::sync::Arc;
use std::time::Duration;

use ferromcp_client::{Client, Connected, Lifecycle, RequestOptions, TaskConfig, ToolCall};
use ferromcp_dispatch::{
    CallOptions, DispatcherConfig, JsonRpcDispatcher, KeepProgress, Progress, handler_fn,
};
use ferromcp_dispatch::{Dispatcher, Outbound};
use ferromcp_server::McpServer;
use ferromcp_server::mcp_server::{ProgressReporter, ToolSpec};
use ferromcp_server::tasks::TaskSettings;
use ferromcp_types::Era;
use ferromcp_types::jsonrpc::Payload;
use ferromcp_types::mcp::{CallToolResult, TaskSupport};
use serde_json::json;
use tokio::sync::{Semaphore, mpsc};

const LIMIT: Duration = Duration::from_secs(20);

async fn within<F: Future>(f: F) -> F::Output {
    match tokio::time::timeout(LIMIT, f).await {
        Ok(v) => v,
        Err(_) => panic!("timed out after {LIMIT:?}"),
    }
}

/// How many reports `steps` sends.
const STEPS: u32 = 5;

/// Gates the test opens: `start` lets `steps` begin reporting (so every report comes after
/// the `CreateTaskResult`); `late` lets the job `steps` leaves behind report once more after
/// the task ended, and `late_done` says it has tried.
#[derive(Clone)]
struct Gates {
    start: Arc<Semaphore>,
    late: Arc<Semaphore>,
    late_done: Arc<Semaphore>,
}

impl Gates {
    fn new() -> Self {
        Self {
            start: Arc::new(Semaphore::new(0)),
            late: Arc::new(Semaphore::new(0)),
            late_done: Arc::new(Semaphore::new(0)),
        }
    }
}

/// A task-capable server with `steps`: once `start` opens it reports `1..=STEPS` of `STEPS`
/// and returns "done", leaving behind a job that holds its progress reporter and reports
/// 99 when `late` opens.
fn server(gates: &Gates) -> McpServer {
    let gates = gates.clone();
    McpServer::builder("progress-server", "1.0.0")
        .tool(
            ToolSpec::new("steps").task_support(TaskSupport::Optional),
            move |report: ProgressReporter| {
                let gates = gates.clone();
                async move {
                    gates.start.acquire().await.unwrap().forget();
                    for i in 1..=STEPS {
                        let message = format!("step {i}");
                        report
                            .report(f64::from(i), Some(f64::from(STEPS)), Some(&message))
                            .await;
                    }
                    tokio::spawn(async move {
                        gates.late.acquire().await.unwrap().forget();
                        report.report(99.0, None, Some("after the end")).await;
                        gates.late_done.add_permits(1);
                    });
                    "done"
                }
            },
        )
        .tasks(TaskSettings::new().poll_interval(Duration::from_millis(10)))
        .build()
        .unwrap()
}

/// Serves `server` on one end of an in-memory message stream; returns the other end.
fn serve(server: &McpServer) -> ferromcp_dispatch::MemoryTransport {
    common::serve(server.server().clone())
}

/// How the client reaches the server.
#[derive(Debug, Clone, Copy)]
enum Via {
    /// JSON-RPC over an in-memory message stream (`JsonRpcDispatcher`).
    Stream,
    /// In process (`DirectDispatcher`, no serialization).
    InProcess,
}

const VIAS: [Via; 2] = [Via::Stream, Via::InProcess];

async fn connect(server: &McpServer, lifecycle: Lifecycle, via: Via) -> Client {
    let builder = Client::builder()
        .lifecycle(lifecycle)
        .tasks(TaskConfig::new().initial_poll_interval(Duration::from_millis(10)));
    match via {
        Via::Stream => {
            let end = serve(server);
            builder.connect_stream(end.source, end.sink).await.unwrap()
        }
        Via::InProcess => {
            let era = match lifecycle {
                Lifecycle::Modern => Era::Modern,
                _ => Era::Handshake,
            };
            builder
                .connect(Connected::new(Arc::new(server.server().in_process(era))))
                .await
                .unwrap()
        }
    }
}

fn text(r: &CallToolResult) -> String {
    let v = serde_json::to_value(r).unwrap();
    v["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

fn expected() -> Vec<Progress> {
    (1..=STEPS)
        .map(|i| {
            Progress::new(
                f64::from(i),
                Some(f64::from(STEPS)),
                Some(format!("step {i}")),
            )
        })
        .collect()
}

fn drain(rx: &mut mpsc::UnboundedReceiver<Progress>) -> Vec<Progress> {
    let mut got = Vec::new();
    while let Ok(p) = rx.try_recv() {
        got.push(p);
    }
    got
}

/// 2025-11-25 Tasks › Task Progress Notifications: the tool reports only after the client
/// holds the `CreateTaskResult`, and every report reaches the call's `on_progress`, in order,
/// until the task completes; the task's late report (after it is terminal) is not sent.
#[tokio::test]
async fn progress_after_create_task_result_reaches_the_callback_until_completion() {
    within(async {
        for via in VIAS {
            let gates = Gates::new();
            let s = server(&gates);
            let client = connect(&s, Lifecycle::Handshake, via).await;
            let (tx, mut rx) = mpsc::unbounded_channel();
            let opts = RequestOptions::new().on_progress(move |p| tx.send(p).unwrap());
            let call = client
                .call_tool_as_task_with("steps", json!({}), None, opts)
                .await
                .unwrap();
            let ToolCall::Task(handle) = call else {
                panic!("{via:?}: not a task: {call:?}");
            };
            assert!(
                drain(&mut rx).is_empty(),
                "no report before the gate opens ({via:?})"
            );
            gates.start.add_permits(1);
            let result = handle.wait().await.unwrap();
            assert_eq!(text(&result), "done");
            // The reports were sent before the task ended, so before the terminal `tasks/get`.
            assert_eq!(drain(&mut rx), expected(), "{via:?}");
            assert!(handle.info().unwrap().is_terminal());

            // The handle lives on, but the task is terminal: nothing more is routed (and the
            // server sends nothing more).
            gates.late.add_permits(1);
            gates.late_done.acquire().await.unwrap().forget();
            client.ping().await.unwrap();
            assert!(
                drain(&mut rx).is_empty(),
                "progress after the task ended ({via:?})"
            );
        }
    })
    .await;
}

/// 2025-11-25 Tasks › Task Progress Notifications: the kept route belongs to the handle;
/// once every handle is dropped, the task's reports no longer reach the callback.
#[tokio::test]
async fn no_progress_is_routed_after_the_handle_is_dropped() {
    within(async {
        for via in VIAS {
            let gates = Gates::new();
            let s = server(&gates);
            let client = connect(&s, Lifecycle::Handshake, via).await;
            let (tx, mut rx) = mpsc::unbounded_channel();
            let opts = RequestOptions::new().on_progress(move |p| tx.send(p).unwrap());
            let call = client
                .call_tool_as_task_with("steps", json!({}), None, opts)
                .await
                .unwrap();
            let id = call.task().unwrap().id().to_owned();
            drop(call);
            gates.start.add_permits(1);
            // A fresh handle (no progress route) waits for the end: the stream is ordered, so
            // every report was read before the terminal status.
            let result = client.task(id).wait().await.unwrap();
            assert_eq!(text(&result), "done");
            assert!(
                drain(&mut rx).is_empty(),
                "progress after the handle dropped ({via:?})"
            );
        }
    })
    .await;
}

/// SEP-2663: at 2026-07-28 progress is not supported on tasks; a task-handle call gets no
/// reports from the task (and the call still completes).
#[tokio::test]
async fn modern_tasks_report_no_progress() {
    within(async {
        for via in VIAS {
            let gates = Gates::new();
            let s = server(&gates);
            let client = connect(&s, Lifecycle::Modern, via).await;
            let (tx, mut rx) = mpsc::unbounded_channel();
            let opts = RequestOptions::new().on_progress(move |p| tx.send(p).unwrap());
            let call = client
                .call_tool_as_task_with("steps", json!({}), None, opts)
                .await
                .unwrap();
            let ToolCall::Task(handle) = call else {
                panic!("{via:?}: not a task: {call:?}");
            };
            gates.start.add_permits(1);
            assert_eq!(text(&handle.wait().await.unwrap()), "done");
            assert!(
                drain(&mut rx).is_empty(),
                "progress on a 2026-07-28 task ({via:?})"
            );
        }
    })
    .await;
}

/// 2025-11-25 Tasks › Task Progress Notifications, the server's side alone: a raw client
/// that keeps its progress route forever sees the task's reports under the original token
/// (the `tools/call` request id) after the `CreateTaskResult`, and none once the task is
/// terminal.
#[tokio::test]
async fn server_reports_under_the_original_token_until_terminal() {
    within(async {
        let gates = Gates::new();
        let s = server(&gates);
        let end = serve(&s);
        let raw = JsonRpcDispatcher::new(end.source, end.sink, DispatcherConfig::default());
        let r = raw.clone();
        tokio::spawn(async move {
            let quiet = handler_fn(|_, _, _| async { Ok(Payload::empty_object()) });
            r.run(quiet.into_arc()).await
        });
        let init = json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {"tasks": {}},
            "clientInfo": {"name": "raw", "version": "0"}
        });
        raw.send_request("initialize", Some(init.into()), CallOptions::new())
            .await
            .unwrap();
        raw.notify("notifications/initialized", None).await;

        let (tx, mut rx) = mpsc::unbounded_channel();
        let keep = KeepProgress::new();
        let call = json!({"name": "steps", "arguments": {}, "task": {}});
        let created = raw
            .send_request(
                "tools/call",
                Some(call.into()),
                CallOptions::new()
                    .request_id("call-1")
                    .on_progress(move |p| tx.send(p).unwrap())
                    .keep_progress(keep.clone()),
            )
            .await
            .unwrap()
            .into_value()
            .unwrap();
        let task_id = created["task"]["taskId"].as_str().unwrap().to_owned();
        gates.start.add_permits(1);
        loop {
            let got = raw
                .send_request(
                    "tasks/get",
                    Some(json!({"taskId": task_id}).into()),
                    CallOptions::new(),
                )
                .await
                .unwrap()
                .into_value()
                .unwrap();
            if got["status"] == "completed" {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(drain(&mut rx), expected());
        gates.late.add_permits(1);
        gates.late_done.acquire().await.unwrap().forget();
        // Anything the late report wrote is on the stream before this answer.
        raw.send_request("ping", None, CallOptions::new())
            .await
            .unwrap();
        assert!(
            drain(&mut rx).is_empty(),
            "the server reported after the end"
        );
        assert!(!keep.is_released());
        raw.close();
    })
    .await;
}
