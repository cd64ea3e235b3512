//! 2025-11-25 core tasks: the client's task capability in both eras, then creating, polling,
//! fetching, tool-level negotiation, `input_required` answered during `tasks/result`, listing by
//! cursor, cancellation and failure.

use std::time::Duration;

use crate::common::*;
use crate::script::{BOTH, Script, connect_script, tasks_client, text};
use ferromcp_client::{Client, ClientError, Lifecycle, tasks::TaskInfo};
use ferromcp_types::jsonrpc::ErrorCode;
use ferromcp_types::mcp::TaskStatus;
use serde_json::{Value, json};

/// 2025-11-25 tasks › Capabilities (client `tasks`) and SEP-2663 › Capability Negotiation
/// (the extension in the per-request `clientCapabilities`): declared only when enabled, each
/// era its own way.
#[tokio::test]
async fn task_support_is_declared_per_era_when_enabled() {
    within(async {
        let script = Script::new(None);
        let client = connect_script(tasks_client(), &script, Lifecycle::Handshake).await;
        let init = &script.params_of("initialize")[0]["capabilities"];
        assert_eq!(init["tasks"], json!({}));
        assert!(init.get("extensions").is_none(), "{init}");
        assert_eq!(client.capabilities().tasks.as_ref().map(|_| ()), Some(()));

        let script = Script::new(None);
        let client = connect_script(tasks_client(), &script, Lifecycle::Modern).await;
        client.list_tools(None).await.unwrap();
        let caps = &script.params_of("tools/list")[0]["_meta"]
            ["io.modelcontextprotocol/clientCapabilities"];
        assert_eq!(caps["extensions"]["io.modelcontextprotocol/tasks"], json!({}));
        assert!(caps.get("tasks").is_none(), "{caps}");

        for era in BOTH {
            let script = Script::new(None);
            let client = connect_script(Client::builder(), &script, era).await;
            client.list_tools(None).await.unwrap();
            let caps = serde_json::to_value(client.capabilities()).unwrap();
            assert!(caps.get("tasks").is_none() && caps.get("extensions").is_none());
        }
    })
    .await;
}

/// 2025-11-25 tasks › Creating Tasks, › Getting Tasks, › Retrieving Task Results: the call
/// carries `params.task` (with the requested TTL), polls `tasks/get` until terminal, then
/// fetches the result with `tasks/result`.
#[tokio::test]
async fn core_task_is_polled_then_fetched() {
    within(async {
        let script = Script::new(Some(5));
        let client = connect_script(tasks_client(), &script, Lifecycle::Handshake).await;
        let call = client
            .call_tool_as_task_with(
                "slow",
                json!({"x": 1}),
                Some(Duration::from_secs(90)),
                Default::default(),
            )
            .await
            .unwrap();
        let calls = script.params_of("tools/call");
        assert_eq!(calls[0]["task"], json!({"ttl": 90_000}));
        assert_eq!(calls[0]["arguments"], json!({"x": 1}));
        let task = call.task().unwrap().clone();
        assert_eq!(task.ttl(), Some(Duration::from_secs(60)));
        let r = call.result().await.unwrap();
        assert_eq!(text(&r), "done task-1");
        let methods = script.methods();
        let tail: Vec<&str> = methods.iter().rev().take(4).map(String::as_str).collect();
        assert_eq!(
            tail,
            ["tasks/result", "tasks/get", "tasks/get", "tasks/get"]
        );
        // The task's result meta comes through.
        assert!(r.meta.is_some());
        // `result()` on a handle is one blocking `tasks/result`.
        let r = client.task("task-1").result().await.unwrap();
        assert_eq!(text(&r), "done task-1");
    })
    .await;
}

/// 2025-11-25 tasks › Tool-Level Negotiation: `forbidden` (or absent) is refused locally;
/// `required` makes a plain call run as a task (or is refused when tasks are off); a server
/// without `tasks.requests.tools.call` gets no task-augmented call.
#[tokio::test]
async fn core_tool_level_negotiation() {
    within(async {
        let script = Script::new(Some(1));
        let client = connect_script(tasks_client(), &script, Lifecycle::Handshake).await;
        for tool in ["forb", "plain"] {
            let err = client.call_tool_as_task(tool, json!({})).await.unwrap_err();
            assert!(
                matches!(&err, ClientError::TaskRefused { tool: t, .. } if t == tool),
                "{err:?}"
            );
        }
        // The client listed the tools to learn their support, and called nothing.
        assert_eq!(script.count("tools/list"), 1);
        assert_eq!(script.count("tools/call"), 0);
        // A required tool runs as a task on a plain call.
        let r = client.call_tool("req", json!({})).await.unwrap();
        assert_eq!(text(&r), "done task-1");
        assert!(script.params_of("tools/call")[0].get("task").is_some());

        // Tasks off: a required tool is refused with a clear error, once the client knows.
        let script = Script::new(None);
        let client = connect_script(Client::builder(), &script, Lifecycle::Handshake).await;
        client.list_tools(None).await.unwrap();
        let err = client.call_tool("req", json!({})).await.unwrap_err();
        assert!(
            matches!(&err, ClientError::TaskRefused { detail, .. } if detail.contains("ClientBuilder::tasks")),
            "{err:?}"
        );

        // A server without the capability.
        let script = Script::undeclared();
        let client = connect_script(tasks_client(), &script, Lifecycle::Handshake).await;
        let err = client.call_tool_as_task("slow", json!({})).await.unwrap_err();
        assert!(matches!(err, ClientError::NotAvailable { .. }), "{err:?}");
        let err = client.list_all_tasks().await.unwrap_err();
        assert!(matches!(err, ClientError::NotAvailable { .. }), "{err:?}");
        assert_eq!(script.count("tools/call") + script.count("tasks/list"), 0);
    })
    .await;
}

/// 2025-11-25 tasks › Input Required Status: on `input_required` the client opens
/// `tasks/result`; the server's elicitation (with related-task metadata) is answered by the
/// elicitation handler; the result follows.
#[tokio::test]
async fn core_input_required_is_answered_during_tasks_result() {
    within(async {
        let script = Script::new(Some(5));
        let client = connect_script(tasks_client(), &script, Lifecycle::Handshake).await;
        let call = client.call_tool_as_task("ask", json!({})).await.unwrap();
        let r = call.result().await.unwrap();
        assert_eq!(
            text(&r),
            r#"answered {"action":"accept","content":{"confirm":true}}"#
        );
        assert_eq!(script.count("tasks/result"), 1);
    })
    .await;
}

/// 2025-11-25 tasks › Listing Tasks: `tasks/list` pages are followed to the end; the page
/// bound (`max_pages`) applies.
#[tokio::test]
async fn core_list_tasks_follows_cursors() {
    within(async {
        let script = Script::new(Some(1));
        let client = connect_script(tasks_client(), &script, Lifecycle::Handshake).await;
        for _ in 0..5 {
            client
                .call_tool_as_task("forever", json!({}))
                .await
                .unwrap();
        }
        let page = client.list_tasks(None).await.unwrap();
        assert_eq!(page.tasks.len(), 2);
        assert_eq!(page.next_cursor.as_deref(), Some("2"));
        let all = client.list_all_tasks().await.unwrap();
        let ids: Vec<&str> = all.iter().map(|t| t.task_id.as_str()).collect();
        assert_eq!(ids, ["task-1", "task-2", "task-3", "task-4", "task-5"]);
        let cursors: Vec<Value> = script
            .params_of("tasks/list")
            .iter()
            .map(|p| p["cursor"].clone())
            .collect();
        assert_eq!(cursors, [Value::Null, Value::Null, json!("2"), json!("4")]);

        let client =
            connect_script(tasks_client().max_pages(2), &script, Lifecycle::Handshake).await;
        let err = client.list_all_tasks().await.unwrap_err();
        assert!(matches!(err, ClientError::Pagination { .. }), "{err:?}");
    })
    .await;
}

/// 2025-11-25 tasks › Cancelling Tasks (the answer is the cancelled task; a terminal task's
/// cancellation is -32602) and › Task Execution Errors (`tasks/result` returns the error).
#[tokio::test]
async fn core_cancel_and_failure() {
    within(async {
        let script = Script::new(Some(1));
        let client = connect_script(tasks_client(), &script, Lifecycle::Handshake).await;
        let call = client
            .call_tool_as_task("forever", json!({}))
            .await
            .unwrap();
        let task = call.task().unwrap();
        task.cancel().await.unwrap();
        assert_eq!(task.info().unwrap().status, TaskStatus::Cancelled);
        let err = task.cancel().await.unwrap_err();
        assert_eq!(err.code(), Some(ErrorCode::INVALID_PARAMS));
        let err = task.wait().await.unwrap_err();
        assert!(matches!(err, ClientError::TaskEnded { .. }), "{err:?}");

        let call = client.call_tool_as_task("fail", json!({})).await.unwrap();
        let err = call.result().await.unwrap_err();
        assert_eq!(err.code(), Some(ErrorCode(-32603)), "{err:?}");
        let info: TaskInfo = client.task("task-2").status().await.unwrap().info;
        assert_eq!(info.status, TaskStatus::Failed);
        assert_eq!(info.status_message.as_deref(), Some("it broke"));
    })
    .await;
}
