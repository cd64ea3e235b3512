//! The client side of tasks against ferromcp's own McpServer with task support, in both
//! eras, in process, over a message stream and over Streamable HTTP.
//!
//! Spec: 2025-11-25 basic/utilities/tasks (task-augmented `tools/call`, `tasks/get`,
//! `tasks/result`, `tasks/list`, `tasks/cancel`, input requests with related-task metadata,
//! tool-level negotiation) and the 2026-07-28 `io.modelcontextprotocol/tasks` extension
//! (SEP-2663: server-directed task handles, `tasks/get` with the result inlined,
//! `tasks/update`, `tasks/cancel` acknowledgements, the `Mcp-Name: <taskId>` routing header).

#![cfg(feature = "http")]
#![allow(clippy::unwrap_used, clippy::panic)]

mod common;
mod http_support;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use ferromcp_client::{
    Client, ClientBuilder, ClientError, Connected, HttpTransport, Lifecycle, TaskConfig, ToolCall,
};
use ferromcp_http_server::HttpConfig as ServerConfig;
use ferromcp_server::mcp_server::{RawArgs, ToolSpec};
use ferromcp_server::tasks::TaskSettings;
use ferromcp_server::{McpServer, RequestContext};
use ferromcp_types::Era;
use ferromcp_types::mcp::{
    CallToolResult, ElicitAction, ElicitResult, ElicitValue, ElicitationSchema, TaskStatus,
    TaskSupport,
};
use http_support::{Flags, TestServer, first_text, start_with, within};
use serde_json::{Value, json};

async fn slow(RawArgs(args): RawArgs) -> String {
    let ms = args.get("ms").and_then(Value::as_u64).unwrap_or(0);
    tokio::time::sleep(Duration::from_millis(ms)).await;
    format!("slept {ms}")
}

async fn ask(ctx: RequestContext) -> CallToolResult {
    let schema: ElicitationSchema = serde_json::from_value(json!({
        "type": "object",
        "properties": {"confirm": {"type": "boolean"}}
    }))
    .unwrap();
    match ctx.elicit_form_raw("Confirm?", schema).await {
        Ok(answer) => CallToolResult::text(format!(
            "answer {}",
            serde_json::to_string(&answer.content).unwrap()
        )),
        Err(e) => CallToolResult::error(format!("{}: {}", e.code.0, e.message)),
    }
}

async fn broken() -> Result<String, String> {
    Err("the tool broke".into())
}

/// The task-capable server: `slow {ms}` and `ask` (optional), `needs` (required), `broken`
/// (optional, a tool error), `plain` (no task support).
fn server() -> McpServer {
    server_with(TaskSettings::new().poll_interval(Duration::from_millis(20)))
}

fn server_with(settings: TaskSettings) -> McpServer {
    McpServer::builder("tasks-server", "1.0.0")
        .tool(
            ToolSpec::new("slow").task_support(TaskSupport::Optional),
            slow,
        )
        .tool(
            ToolSpec::new("ask").task_support(TaskSupport::Optional),
            ask,
        )
        .tool(
            ToolSpec::new("needs").task_support(TaskSupport::Required),
            || async { "needed a task" },
        )
        .tool(
            ToolSpec::new("broken").task_support(TaskSupport::Optional),
            broken,
        )
        .tool(ToolSpec::new("plain"), || async { "plain" })
        .tasks(settings)
        .build()
        .unwrap()
}

fn builder(era: Era) -> ClientBuilder {
    Client::builder()
        .lifecycle(match era {
            Era::Modern => Lifecycle::Modern,
            _ => Lifecycle::Handshake,
        })
        .tasks(TaskConfig::new().initial_poll_interval(Duration::from_millis(10)))
        .on_elicitation(|_p| async {
            Ok(
                ElicitResult::new(ElicitAction::Accept).with_content(BTreeMap::from([(
                    "confirm".into(),
                    ElicitValue::Boolean(true),
                )])),
            )
        })
}

#[derive(Debug, Clone, Copy)]
enum Via {
    InProcess,
    Stream,
}

async fn connect(server: &McpServer, era: Era, via: Via) -> Client {
    match via {
        Via::InProcess => builder(era)
            .connect(Connected::new(Arc::new(server.server().in_process(era))))
            .await
            .unwrap(),
        Via::Stream => {
            let client_end = common::serve(server.server().clone());
            builder(era)
                .connect_stream(client_end.source, client_end.sink)
                .await
                .unwrap()
        }
    }
}

const ERAS: [Era; 2] = [Era::Handshake, Era::Modern];
const VIAS: [Via; 2] = [Via::InProcess, Via::Stream];

/// 2025-11-25 tasks › Creating Tasks / Getting Tasks / Retrieving Task Results and SEP-2663
/// › Task Creation / Task Polling: a task-capable tool called as a task gives a handle
/// (TTL and poll hints from the server), which is polled to its result.
#[tokio::test]
async fn real_task_is_polled_to_its_result() {
    within(async {
        let s = server();
        for era in ERAS {
            for via in VIAS {
                let client = connect(&s, era, via).await;
                let call = client
                    .call_tool_as_task("slow", json!({"ms": 50}))
                    .await
                    .unwrap();
                let task = call
                    .task()
                    .unwrap_or_else(|| panic!("{era:?} {via:?}: {call:?}"));
                assert!(task.ttl().is_some(), "{era:?} {via:?}");
                assert_eq!(task.poll_interval(), Some(Duration::from_millis(20)));
                let status = task.status().await.unwrap();
                assert_eq!(status.info.task_id, task.id());
                let r = call.result().await.unwrap();
                assert_eq!(first_text(&r), "slept 50", "{era:?} {via:?}");
            }
        }
    })
    .await;
}

/// SEP-2663 › Polymorphic Results: at 2026-07-28 a plain `call_tool` of a task-capable tool
/// comes back as a task handle, which the client waits for; 2025-11-25 tasks › Tool-Level
/// Negotiation: a plain call of an optional tool is synchronous, and one of a `required`
/// tool runs as a task.
#[tokio::test]
async fn real_plain_calls_in_both_eras() {
    within(async {
        let s = server();
        for via in VIAS {
            let client = connect(&s, Era::Modern, via).await;
            let r = client.call_tool("slow", json!({"ms": 30})).await.unwrap();
            assert_eq!(first_text(&r), "slept 30", "{via:?}");
            let r = client.call_tool("needs", json!({})).await.unwrap();
            assert_eq!(first_text(&r), "needed a task", "{via:?}");

            let client = connect(&s, Era::Handshake, via).await;
            let r = client.call_tool("slow", json!({"ms": 1})).await.unwrap();
            assert_eq!(first_text(&r), "slept 1");
            client.list_tools(None).await.unwrap();
            let r = client.call_tool("needs", json!({})).await.unwrap();
            assert_eq!(first_text(&r), "needed a task", "{via:?}");
            let err = client
                .call_tool_as_task("plain", json!({}))
                .await
                .unwrap_err();
            assert!(matches!(err, ClientError::TaskRefused { .. }), "{err:?}");
        }
    })
    .await;
}

/// SEP-2663 › Task Update Requests and 2025-11-25 tasks › Input Required Status: a task's
/// elicitation is answered by the client's elicitation handler (`tasks/update` at
/// 2026-07-28; a live request related to the task at 2025-11-25).
#[tokio::test]
async fn real_task_input_is_answered() {
    within(async {
        let s = server();
        for era in ERAS {
            for via in VIAS {
                let client = connect(&s, era, via).await;
                let call = client.call_tool_as_task("ask", json!({})).await.unwrap();
                assert!(call.task().is_some(), "{era:?} {via:?}");
                let r = call.result().await.unwrap();
                assert_eq!(
                    first_text(&r),
                    r#"answer {"confirm":true}"#,
                    "{era:?} {via:?}"
                );
            }
        }
    })
    .await;
}

/// 2025-11-25 tasks › Cancelling Tasks and SEP-2663 › Task Cancellation: a cancelled task
/// ends `cancelled`, and waiting for it says so; a tool error is the tool's result with
/// `isError` (SEP-2663 › Task Status: `completed`, not `failed`).
#[tokio::test]
async fn real_cancel_and_tool_error() {
    within(async {
        let s = server();
        for era in ERAS {
            let client = connect(&s, era, Via::InProcess).await;
            let call = client
                .call_tool_as_task("slow", json!({"ms": 60_000}))
                .await
                .unwrap();
            let task = call.task().unwrap();
            task.cancel().await.unwrap();
            let err = task.wait().await.unwrap_err();
            assert!(
                matches!(
                    err,
                    ClientError::TaskEnded {
                        status: Some(TaskStatus::Cancelled),
                        ..
                    }
                ),
                "{era:?}: {err:?}"
            );
            assert_eq!(task.info().unwrap().status, TaskStatus::Cancelled);

            let call = client.call_tool_as_task("broken", json!({})).await.unwrap();
            let handle = call.task().unwrap().clone();
            let r = call.result().await.unwrap();
            assert_eq!(r.is_error, Some(true), "{era:?}");
            let status = handle.info().unwrap().status;
            match era {
                Era::Modern => assert_eq!(status, TaskStatus::Completed),
                // 2025-11-25: "should reach failed"; either way the result is the tool's.
                _ => assert!(status.is_terminal(), "{status:?}"),
            }
        }
    })
    .await;
}

/// 2025-11-25 tasks › Listing Tasks: every task of the session, over more than one page;
/// SEP-2663 has no `tasks/list`.
#[tokio::test]
async fn real_list_tasks_pages() {
    within(async {
        let s = server_with(TaskSettings::new().max_active_per_principal(1_000));
        let client = connect(&s, Era::Handshake, Via::InProcess).await;
        let mut ids = Vec::new();
        let n = ferromcp_server::tasks::TASK_LIST_PAGE_SIZE + 3;
        for _ in 0..n {
            match client.call_tool_as_task("slow", json!({})).await.unwrap() {
                ToolCall::Task(t) => ids.push(t.id().to_owned()),
                other => panic!("{other:?}"),
            }
        }
        let first = client.list_tasks(None).await.unwrap();
        assert!(first.next_cursor.is_some());
        let all = client.list_all_tasks().await.unwrap();
        let mut listed: Vec<String> = all.into_iter().map(|t| t.task_id).collect();
        listed.sort();
        ids.sort();
        assert_eq!(listed, ids);

        let client = connect(&s, Era::Modern, Via::InProcess).await;
        let err = client.list_all_tasks().await.unwrap_err();
        assert!(matches!(err, ClientError::NotAvailable { .. }), "{err:?}");
    })
    .await;
}

async fn start_http(s: &McpServer) -> TestServer {
    start_with(
        s.server().clone(),
        ServerConfig::default(),
        Arc::new(Flags::default()),
    )
    .await
}

/// Over Streamable HTTP in both eras: a task is polled to its result and its input answered;
/// at 2026-07-28 `tasks/get`, `tasks/update` and `tasks/cancel` carry `Mcp-Name: <taskId>`
/// (SEP-2663 › Streamable HTTP: Routing Headers).
#[tokio::test]
async fn real_tasks_over_http() {
    within(async {
        let s = server();
        let srv = start_http(&s).await;
        for era in ERAS {
            let client = builder(era)
                .connect(HttpTransport::new(srv.url()).unwrap())
                .await
                .unwrap();
            let call = client
                .call_tool_as_task("slow", json!({"ms": 30}))
                .await
                .unwrap();
            let id = call.task().unwrap().id().to_owned();
            let r = call.result().await.unwrap();
            assert_eq!(first_text(&r), "slept 30", "{era:?}");
            let r = client
                .call_tool_as_task("ask", json!({}))
                .await
                .unwrap()
                .result()
                .await
                .unwrap();
            assert_eq!(first_text(&r), r#"answer {"confirm":true}"#, "{era:?}");
            if era == Era::Modern {
                let gets = srv.with_mcp_method("tasks/get");
                assert!(!gets.is_empty());
                assert!(
                    gets.iter()
                        .any(|g| g.header("mcp-name") == Some(id.as_str()))
                );
                let updates = srv.with_mcp_method("tasks/update");
                assert_eq!(updates.len(), 1);
                assert!(updates[0].header("mcp-name").is_some());
                let call = client
                    .call_tool_as_task("slow", json!({"ms": 60_000}))
                    .await
                    .unwrap();
                let task = call.task().unwrap();
                task.cancel().await.unwrap();
                let cancels = srv.with_mcp_method("tasks/cancel");
                assert_eq!(cancels[0].header("mcp-name"), Some(task.id()));
            }
            client.shutdown().await;
        }
    })
    .await;
}

/// SEP-2663 › Task Polling ("clients SHOULD persist task IDs so that polling can resume"):
/// a task created on one connection is picked up by id on another, after the first closed.
#[tokio::test]
async fn real_task_outlives_its_connection() {
    within(async {
        let s = server();
        for via in VIAS {
            let first = connect(&s, Era::Modern, via).await;
            let call = first
                .call_tool_as_task("slow", json!({"ms": 100}))
                .await
                .unwrap();
            let id = call.task().unwrap().id().to_owned();
            first.shutdown().await;
            drop(call);
            let second = connect(&s, Era::Modern, via).await;
            let task = second.task(id.clone());
            let r = task.wait().await.unwrap();
            assert_eq!(first_text(&r), "slept 100", "{via:?}");
            assert_eq!(task.info().unwrap().task_id, id);
        }
    })
    .await;
}

/// 2025-11-25 tasks › Getting Tasks ("requestors SHOULD respect the pollInterval") and
/// SEP-2663 › Task Polling (`pollIntervalMs`): against the server's own hint, on the paused
/// clock, the polls of a 5-second task come 2 seconds apart.
#[tokio::test(start_paused = true)]
async fn real_polls_follow_the_servers_hint() {
    within(async {
        let s = server_with(TaskSettings::new().poll_interval(Duration::from_secs(2)));
        for era in ERAS {
            let client = connect(&s, era, Via::InProcess).await;
            let call = client
                .call_tool_as_task("slow", json!({"ms": 5_000}))
                .await
                .unwrap();
            let task = call.task().unwrap().clone();
            assert_eq!(task.poll_interval(), Some(Duration::from_secs(2)));
            let start = tokio::time::Instant::now();
            let mut polls = Vec::new();
            let r = task
                .wait_with(|_| polls.push(start.elapsed().as_millis()))
                .await
                .unwrap();
            assert_eq!(first_text(&r), "slept 5000", "{era:?}");
            // At once, then every 2 s until the task (done at 5 s) is seen finished at 6 s; at
            // 2025-11-25 the server's final `notifications/tasks/status` ends the last wait at
            // 5 s instead.
            let last = if era == Era::Handshake { 5_000 } else { 6_000 };
            assert_eq!(polls.len(), 4, "{era:?}: {polls:?}");
            for (got, want) in polls.iter().zip([0, 2_000, 4_000, last]) {
                assert!(got.abs_diff(want) < 50, "{era:?}: {polls:?}");
            }
        }
    })
    .await;
}

/// SEP-2663 › Task Creation: `request_once_or_task` hands back the task a 2026-07-28 server
/// makes of a `tools/call` (where `request_once` waits for it inside the call): its status
/// can be polled, it can be cancelled, and it can be waited for; a plain answer is
/// `Complete`. At 2025-11-25 (no task asked for) the call is answered plainly.
#[tokio::test]
async fn real_request_once_or_task_hands_back_the_task() {
    use ferromcp_client::OnceOrTask;
    use ferromcp_types::mcp::CallToolRequestParams;
    use ferromcp_types::mcp::methods::CallTool;
    let call = |ms: u64| {
        let mut args = serde_json::Map::new();
        args.insert("ms".into(), json!(ms));
        CallToolRequestParams::new("slow").with_arguments(args)
    };
    within(async {
        let s = server();
        for via in VIAS {
            let client = connect(&s, Era::Modern, via).await;
            let opts = ferromcp_client::RequestOptions::new;
            let answer = client
                .request_once_or_task::<CallTool>(call(60_000), opts())
                .await
                .unwrap();
            let OnceOrTask::Task(task) = answer else {
                panic!("{via:?}: expected a task, got {answer:?}");
            };
            let status = task.status().await.unwrap();
            assert_eq!(status.info.status, TaskStatus::Working, "{via:?}");
            task.cancel().await.unwrap();
            let err = task.wait().await.unwrap_err();
            assert!(
                matches!(
                    err,
                    ClientError::TaskEnded {
                        status: Some(TaskStatus::Cancelled),
                        ..
                    }
                ),
                "{via:?}: {err:?}"
            );
            let answer = client
                .request_once_or_task::<CallTool>(call(20), opts())
                .await
                .unwrap();
            let OnceOrTask::Task(task) = answer else {
                panic!("{via:?}: expected a task, got {answer:?}");
            };
            assert_eq!(first_text(&task.wait().await.unwrap()), "slept 20");
            let plain = CallToolRequestParams::new("plain");
            match client
                .request_once_or_task::<CallTool>(plain, opts())
                .await
                .unwrap()
            {
                OnceOrTask::Complete(r) => assert_eq!(first_text(&r), "plain", "{via:?}"),
                other => panic!("{via:?}: expected the result, got {other:?}"),
            }
        }
        let client = connect(&s, Era::Handshake, Via::InProcess).await;
        match client
            .request_once_or_task::<CallTool>(call(1), ferromcp_client::RequestOptions::new())
            .await
            .unwrap()
        {
            OnceOrTask::Complete(r) => assert_eq!(first_text(&r), "slept 1"),
            other => panic!("expected the result, got {other:?}"),
        }
    })
    .await;
}
