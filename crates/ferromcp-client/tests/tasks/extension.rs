//! The 2026-07-28 tasks extension (SEP-2663): unsolicited tasks behind a plain call, calls as
//! tasks, input answered with `tasks/update` (bounded), failure and cancellation, no `tasks/list`,
//! and an MRTR round before the task.

use std::time::Duration;

use crate::common::*;
use crate::script::{Script, connect_script, tasks_client, text};
use ferromcp_client::{Client, ClientError, Lifecycle, ToolCall};
use ferromcp_types::jsonrpc::ErrorCode;
use ferromcp_types::mcp::TaskStatus;
use serde_json::{Value, json};

/// SEP-2663 › Polymorphic Results: a plain `tools/call` answered with a task handle is
/// polled with `tasks/get` to completion and returns the inlined result; no `tasks/result`.
#[tokio::test]
async fn ext_plain_call_waits_for_an_unsolicited_task() {
    within(async {
        let script = Script::new(Some(5));
        let client = connect_script(tasks_client(), &script, Lifecycle::Modern).await;
        let r = client.call_tool("slow", json!({})).await.unwrap();
        assert_eq!(text(&r), "done task-1");
        assert_eq!(script.count("tasks/get"), 3);
        assert_eq!(script.count("tasks/result"), 0);
        // Every task request names the task and carries the envelope.
        for p in script.params_of("tasks/get") {
            assert_eq!(p["taskId"], "task-1");
            assert_eq!(
                p["_meta"]["io.modelcontextprotocol/protocolVersion"],
                "2026-07-28"
            );
        }
        // The typed and raw paths wait too.
        let r: Value = client
            .send_request("tools/call", json!({"name": "slow"}), Default::default())
            .await
            .unwrap();
        assert_eq!(r["content"][0]["text"], "done task-2");
    })
    .await;
}

/// SEP-2663 › Task Creation and › Task Polling: `call_tool_as_task` hands back the handle
/// (id, TTL and poll hints from `ttlMs` / `pollIntervalMs`), `status` polls once, `wait`
/// finishes; a server that answers at once gives the result.
#[tokio::test]
async fn ext_call_tool_as_task_returns_the_handle() {
    within(async {
        let script = Script::new(Some(5));
        let client = connect_script(tasks_client(), &script, Lifecycle::Modern).await;
        let call = client.call_tool_as_task("slow", json!({})).await.unwrap();
        let task = call.task().unwrap().clone();
        assert_eq!(task.id(), "task-1");
        assert_eq!(task.ttl(), Some(Duration::from_secs(60)));
        assert_eq!(task.poll_interval(), Some(Duration::from_millis(5)));
        assert_eq!(task.info().unwrap().status, TaskStatus::Working);
        assert_eq!(script.count("tasks/get"), 0);
        let s = task.status().await.unwrap();
        assert_eq!(s.info.status, TaskStatus::Working);
        assert!(s.result.is_none());
        let r = call.result().await.unwrap();
        assert_eq!(text(&r), "done task-1");
        assert_eq!(task.info().unwrap().status, TaskStatus::Completed);
        // The immediate-result shortcut.
        match client.call_tool_as_task("plain", json!({})).await.unwrap() {
            ToolCall::Complete(r) => assert_eq!(text(&r), "plain plain"),
            other => panic!("{other:?}"),
        }
        // A handle by id (e.g. persisted): resumes polling.
        let again = client.task("task-1");
        assert!(again.info().is_none());
        assert_eq!(
            again.wait().await.unwrap().content,
            r_content("done task-1")
        );
    })
    .await;
}

fn r_content(t: &str) -> Vec<ferromcp_types::mcp::ContentBlock> {
    vec![ferromcp_types::mcp::ContentBlock::text(t)]
}

/// SEP-2663 › Task Update Requests: an `input_required` task's `inputRequests` are answered
/// by the client's handlers and sent with `tasks/update`; a key still shown after the ack is
/// not answered twice; the task then completes with the answer.
#[tokio::test]
async fn ext_input_is_answered_with_tasks_update() {
    within(async {
        let script = Script::new(Some(5));
        let client = connect_script(tasks_client(), &script, Lifecycle::Modern).await;
        let r = client.call_tool("ask", json!({})).await.unwrap();
        assert_eq!(
            text(&r),
            r#"answered {"action":"accept","content":{"confirm":true}}"#
        );
        let updates = script.params_of("tasks/update");
        assert_eq!(updates.len(), 1, "{updates:?}");
        assert_eq!(updates[0]["taskId"], "task-1");
        assert_eq!(
            updates[0]["inputResponses"],
            json!({"confirm": {"action": "accept", "content": {"confirm": true}}})
        );
        // The poll after the ack still showed the key: it was not answered again.
        assert!(script.count("tasks/get") >= 3);
    })
    .await;
}

/// The input-round limit (`max_rounds`) bounds the `tasks/update`s of one wait.
#[tokio::test]
async fn ext_input_rounds_are_bounded() {
    within(async {
        let script = Script::new(Some(1));
        let client = connect_script(tasks_client().max_rounds(2), &script, Lifecycle::Modern).await;
        let err = client.call_tool("greedy", json!({})).await.unwrap_err();
        assert!(
            matches!(err, ClientError::RoundsExceeded { rounds: 2, .. }),
            "{err:?}"
        );
        assert_eq!(script.count("tasks/update"), 2);
    })
    .await;
}

/// SEP-2663 › Task Status (`failed` inlines the JSON-RPC error) and › Task Cancellation
/// (acknowledgement only; the status shows through `tasks/get`).
#[tokio::test]
async fn ext_failure_and_cancellation() {
    within(async {
        let script = Script::new(Some(1));
        let client = connect_script(tasks_client(), &script, Lifecycle::Modern).await;
        let err = client.call_tool("fail", json!({})).await.unwrap_err();
        assert_eq!(err.code(), Some(ErrorCode(-32603)), "{err:?}");
        assert_eq!(err.as_protocol().unwrap().message, "boom");

        let task = client
            .call_tool_as_task("forever", json!({}))
            .await
            .unwrap();
        let task = task.task().unwrap();
        task.cancel().await.unwrap();
        assert_eq!(script.params_of("tasks/cancel")[0]["taskId"], task.id());
        assert_eq!(
            task.status().await.unwrap().info.status,
            TaskStatus::Cancelled
        );
        let err = task.wait().await.unwrap_err();
        assert!(
            matches!(
                err,
                ClientError::TaskEnded {
                    status: Some(TaskStatus::Cancelled),
                    ..
                }
            ),
            "{err:?}"
        );
        // An unknown task: the server's -32602 passes through.
        let err = client.task("nope").status().await.unwrap_err();
        assert_eq!(err.code(), Some(ErrorCode::INVALID_PARAMS));
    })
    .await;
}

/// SEP-2663 removes `tasks/list`; and a client that did not declare the extension rejects a
/// task handle ("MUST NOT return CreateTaskResult to a client that did not include the
/// extension").
#[tokio::test]
async fn ext_has_no_list_and_needs_the_extension() {
    within(async {
        let script = Script::new(None);
        let client = connect_script(tasks_client(), &script, Lifecycle::Modern).await;
        let err = client.list_tasks(None).await.unwrap_err();
        assert!(matches!(err, ClientError::NotAvailable { .. }), "{err:?}");
        assert_eq!(script.count("tasks/list"), 0);

        // Without the extension the scripted server answers synchronously...
        let script = Script::new(None);
        let client = connect_script(Client::builder(), &script, Lifecycle::Modern).await;
        let r = client.call_tool("slow", json!({})).await.unwrap();
        assert_eq!(text(&r), "sync slow");
        let err = client
            .call_tool_as_task("slow", json!({}))
            .await
            .unwrap_err();
        assert!(matches!(err, ClientError::NotAvailable { .. }), "{err:?}");
    })
    .await;
}

/// SEP-2663 › Task Creation ("servers that use multi round-trip requests in conjunction with
/// task creation SHOULD resolve all MRTR exchanges synchronously before responding with a
/// CreateTaskResult"): the client drives the `input_required` round (echoing
/// `requestState`), then waits for the task the final round returns.
#[tokio::test]
async fn ext_mrtr_round_then_task() {
    within(async {
        let script = Script::new(Some(1));
        let client = connect_script(tasks_client(), &script, Lifecycle::Modern).await;
        let r = client.call_tool("compose", json!({})).await.unwrap();
        assert_eq!(
            text(&r),
            r#"answered {"action":"accept","content":{"confirm":true}}"#
        );
        let calls = script.params_of("tools/call");
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[1]["requestState"], "round-1");
        assert!(script.count("tasks/get") >= 1);
    })
    .await;
}
