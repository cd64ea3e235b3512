//! Tasks end to end: ferromcp's client against ferromcp's server over Streamable HTTP, in
//! both eras ("Utilities › Tasks" at 2025-11-25, the `io.modelcontextprotocol/tasks`
//! extension at 2026-07-28): a task's result awaited by polling, an elicitation answered from
//! inside a task (on the `tasks/result` stream at 2025-11-25, with `tasks/update` at
//! 2026-07-28), and cancellation.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::time::Duration;

use ferromcp_client::{Client, HttpTransport, Lifecycle, TaskConfig, ToolCall};
use ferromcp_http_server::{HttpConfig, HttpServer};
use ferromcp_server::mcp_server::{Args, ToolError, ToolSpec};
use ferromcp_server::{McpServer, RequestContext};
use ferromcp_types::mcp::{ElicitAction, ElicitResult, ElicitationSchema, TaskStatus, TaskSupport};
use serde_json::json;

async fn within<F: std::future::Future>(f: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(30), f)
        .await
        .expect("timed out")
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Millis {
    /// How long to work, in milliseconds.
    ms: u64,
}

fn server() -> McpServer {
    McpServer::builder("tasks-e2e", "1")
        .tool(
            ToolSpec::new("work").task_support(TaskSupport::Optional),
            |Args(a): Args<Millis>| async move {
                tokio::time::sleep(Duration::from_millis(a.ms)).await;
                format!("worked {}ms", a.ms)
            },
        )
        .tool(
            ToolSpec::new("ask").task_support(TaskSupport::Optional),
            |ctx: RequestContext| async move {
                let schema: ElicitationSchema = serde_json::from_value(
                    json!({"type": "object", "properties": {"name": {"type": "string"}}}),
                )
                .unwrap();
                let answer = ctx
                    .elicit_form_raw("Name?", schema)
                    .await
                    .map_err(ToolError::protocol)?;
                let name = answer.content.as_ref().and_then(|c| c.get("name")).cloned();
                Ok::<_, ToolError>(format!("hello {}", serde_json::to_string(&name).unwrap()))
            },
        )
        .build()
        .unwrap()
}

async fn url() -> String {
    let srv = HttpServer::bind(
        "127.0.0.1:0",
        server().server().clone(),
        HttpConfig::default(),
    )
    .await
    .unwrap();
    let url = format!("http://{}/mcp", srv.local_addr());
    tokio::spawn(srv.run());
    url
}

async fn client(url: &str, lifecycle: Lifecycle) -> Client {
    Client::builder()
        .lifecycle(lifecycle)
        .tasks(TaskConfig::new())
        .on_elicitation(|_params| async {
            let content: std::collections::BTreeMap<String, ferromcp_types::mcp::ElicitValue> =
                serde_json::from_value(json!({"name": "Ada"})).unwrap();
            Ok(ElicitResult::new(ElicitAction::Accept).with_content(content))
        })
        .connect(HttpTransport::new(url).unwrap())
        .await
        .unwrap()
}

fn text(r: &ferromcp_types::mcp::CallToolResult) -> String {
    r.content[0].as_text().unwrap_or_default().to_owned()
}

/// Both eras: a task handle, its result awaited by polling, and an elicitation answered
/// from inside a task.
#[tokio::test]
async fn client_and_server_agree_on_tasks_in_both_eras() {
    within(async {
        let url = url().await;
        for lifecycle in [Lifecycle::Handshake, Lifecycle::Modern] {
            let c = client(&url, lifecycle).await;
            let ToolCall::Task(task) = c
                .call_tool_as_task("work", json!({"ms": 200}))
                .await
                .unwrap()
            else {
                panic!("{lifecycle:?}: not a task");
            };
            assert_eq!(task.id().len(), 32);
            let result = task.wait().await.unwrap();
            assert_eq!(text(&result), "worked 200ms", "{lifecycle:?}");

            let ToolCall::Task(asking) = c.call_tool_as_task("ask", json!({})).await.unwrap()
            else {
                panic!("{lifecycle:?}: not a task");
            };
            let result = asking.wait().await.unwrap();
            assert_eq!(text(&result), "hello \"Ada\"", "{lifecycle:?}");
        }
    })
    .await;
}

/// Both eras: a task cancelled by the client ends `cancelled` at the server.
#[tokio::test]
async fn client_cancels_a_server_task_in_both_eras() {
    within(async {
        let url = url().await;
        for lifecycle in [Lifecycle::Handshake, Lifecycle::Modern] {
            let c = client(&url, lifecycle).await;
            let ToolCall::Task(task) = c
                .call_tool_as_task("work", json!({"ms": 60_000}))
                .await
                .unwrap()
            else {
                panic!("{lifecycle:?}: not a task");
            };
            task.cancel().await.unwrap();
            let state = task.status().await.unwrap();
            assert_eq!(state.info.status, TaskStatus::Cancelled, "{lifecycle:?}");
        }
    })
    .await;
}
