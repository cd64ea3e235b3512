//! Tasks at 2026-07-28: the `io.modelcontextprotocol/tasks` extension (SEP-2663), through
//! the public API of the high-level server, in process (and over HTTP for principals):
//! server-directed creation, `tasks/get` with the payload inlined, `tasks/update` input,
//! acknowledgement-only `tasks/cancel`, capability gating (-32021), the removed methods
//! (-32601), TTL, the per-principal cap, cancellation reaching the handler, and a task
//! outliving the connection that created it.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use ferromcp_dispatch::{CallOptions, DirectDispatcher, Dispatcher, Outbound, handler_fn};
use ferromcp_server::McpServer;
use ferromcp_server::RequestContext;
use ferromcp_server::mcp_server::{Args, ToolError, ToolSpec};
use ferromcp_server::tasks::TaskSettings;
use ferromcp_types::Era;
use ferromcp_types::jsonrpc::{ErrorObject, Payload};
use ferromcp_types::mcp::{ElicitationSchema, TaskSupport};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

const LIMIT: Duration = Duration::from_secs(30);

async fn within<F: std::future::Future>(f: F) -> F::Output {
    tokio::time::timeout(LIMIT, f).await.expect("timed out")
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Secs {
    /// Seconds to work.
    seconds: u64,
}

/// A server with task tools; `cancelled` records that a handler saw its cancellation.
fn server(settings: TaskSettings, cancelled: Arc<AtomicBool>) -> McpServer {
    McpServer::builder("tasks", "1")
        .tool("plain", || async { "plain result" })
        .tool(
            ToolSpec::new("work").task_support(TaskSupport::Optional),
            move |Args(a): Args<Secs>, cancel: CancellationToken| {
                let cancelled = cancelled.clone();
                async move {
                    tokio::select! {
                        () = tokio::time::sleep(Duration::from_secs(a.seconds)) => {
                            Ok(format!("worked {}s", a.seconds))
                        }
                        () = cancel.cancelled() => {
                            cancelled.store(true, Ordering::SeqCst);
                            Err(ToolError::Message("stopped".into()))
                        }
                    }
                }
            },
        )
        .tool(
            ToolSpec::new("must_task").task_support(TaskSupport::Required),
            || async { "required done" },
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
        .tool(
            ToolSpec::new("boom").task_support(TaskSupport::Optional),
            || async {
                Err::<String, _>(ToolError::protocol(ErrorObject::internal_error("broke")))
            },
        )
        .tasks(settings)
        .build()
        .unwrap()
}

fn task_caps() -> Value {
    json!({"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}})
}

type Notes = Arc<std::sync::Mutex<Vec<(String, Value)>>>;

struct Client {
    peer: DirectDispatcher,
    caps: Value,
    /// The notifications received.
    notes: Notes,
}

impl Client {
    fn connect(server: &McpServer, caps: Value) -> Self {
        let peer = server.server().in_process(Era::Modern);
        let notes: Notes = Arc::default();
        let log = notes.clone();
        let handler = handler_fn(|_, method: String, _| async move {
            Err(ErrorObject::method_not_found(&method).into())
        })
        .on_notify(move |_, method: String, params: Option<Payload>| {
            let params = params.map_or(Value::Null, |p| p.into_value().unwrap());
            log.lock().unwrap().push((method, params));
            async {}
        })
        .into_arc();
        let runner = peer.clone();
        tokio::spawn(async move { runner.run(handler).await });
        Self { peer, caps, notes }
    }

    /// Waits for a notification `method` whose params satisfy `pick`.
    async fn note(&self, method: &str, pick: impl Fn(&Value) -> bool) -> Value {
        loop {
            let found = self
                .notes
                .lock()
                .unwrap()
                .iter()
                .find(|(m, p)| m == method && pick(p))
                .map(|(_, p)| p.clone());
            if let Some(p) = found {
                return p;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    async fn request(&self, method: &str, mut params: Value) -> Result<Value, ErrorObject> {
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": self.caps,
        });
        let r = self
            .peer
            .send_request(
                method,
                Some(Payload::from_value(params)),
                CallOptions::new(),
            )
            .await?;
        Ok(r.into_value().unwrap())
    }

    async fn call(&self, name: &str, args: Value) -> Result<Value, ErrorObject> {
        self.request("tools/call", json!({"name": name, "arguments": args}))
            .await
    }

    async fn get(&self, id: &str) -> Result<Value, ErrorObject> {
        self.request("tasks/get", json!({"taskId": id})).await
    }

    /// Polls until the task has `status` (or is finished).
    async fn until(&self, id: &str, status: &str) -> Value {
        loop {
            let t = self.get(id).await.unwrap();
            let s = t["status"].as_str().unwrap().to_owned();
            if s == status || ["completed", "failed", "cancelled"].contains(&s.as_str()) {
                return t;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

fn code(e: &ErrorObject) -> i32 {
    e.code.0
}

/// SEP-2663 "Task Creation" and "Getting Task Status": a declaring client gets a flat
/// CreateTaskResult; tasks/get answers working, then completed with the result inlined
/// (`resultType: "complete"`, `ttlMs`, `pollIntervalMs`, no related-task `_meta`).
#[tokio::test(start_paused = true)]
async fn sep2663_create_poll_and_inlined_result() {
    within(async {
        let s = server(TaskSettings::new(), Arc::default());
        let c = Client::connect(&s, task_caps());
        let created = c.call("work", json!({"seconds": 5})).await.unwrap();
        assert_eq!(created["resultType"], "task");
        assert!(created.get("task").is_none(), "flat, no wrapper: {created}");
        assert_eq!(created["status"], "working");
        assert_eq!(created["ttlMs"], 3_600_000);
        assert_eq!(created["pollIntervalMs"], 500);
        assert!(created.get("ttl").is_none() && created.get("content").is_none());
        let id = created["taskId"].as_str().unwrap().to_owned();
        assert_eq!(id.len(), 32, "128 random bits in hex");

        let working = c.get(&id).await.unwrap();
        assert_eq!(working["resultType"], "complete");
        assert_eq!(working["status"], "working");
        assert!(working.get("result").is_none());

        let done = c.until(&id, "completed").await;
        assert_eq!(done["status"], "completed");
        assert_eq!(done["result"]["content"][0]["text"], "worked 5s");
        assert!(done["result"]["_meta"]["io.modelcontextprotocol/related-task"].is_null());
        assert!(done.get("requestState").is_none());
    })
    .await;
}

/// SEP-2663 "Capability negotiation": without the extension in the request's capabilities a
/// task-capable tool answers plainly, a required one is -32021 naming the extension, and the
/// tasks methods are -32021; tasks/list and tasks/result do not exist (-32601).
#[tokio::test(start_paused = true)]
async fn sep2663_gating_required_tools_and_removed_methods() {
    within(async {
        let s = server(TaskSettings::new(), Arc::default());
        let plain = Client::connect(&s, json!({}));
        let r = plain.call("work", json!({"seconds": 0})).await.unwrap();
        assert_eq!(r["resultType"], "complete");
        assert_eq!(r["content"][0]["text"], "worked 0s");

        let e = plain.call("must_task", json!({})).await.unwrap_err();
        assert_eq!(code(&e), -32021);
        assert!(
            e.data.unwrap()["requiredCapabilities"]["extensions"]["io.modelcontextprotocol/tasks"]
                .is_object()
        );
        for method in ["tasks/get", "tasks/cancel"] {
            let e = plain
                .request(method, json!({"taskId": "x"}))
                .await
                .unwrap_err();
            assert_eq!(code(&e), -32021, "{method}");
        }
        let e = plain
            .request("tasks/update", json!({"taskId": "x", "inputResponses": {}}))
            .await
            .unwrap_err();
        assert_eq!(code(&e), -32021);

        let c = Client::connect(&s, task_caps());
        for method in ["tasks/list", "tasks/result"] {
            let e = c.request(method, json!({"taskId": "x"})).await.unwrap_err();
            assert_eq!(code(&e), -32601, "{method}");
        }
        let e = c.get("no-such-task").await.unwrap_err();
        assert_eq!(code(&e), -32602);
        // A legacy `task` param does not make a forbidden tool a task.
        let r = c
            .request(
                "tools/call",
                json!({"name": "plain", "arguments": {}, "task": {"ttl": 1000}}),
            )
            .await
            .unwrap();
        assert_eq!(r["resultType"], "complete");
        let r = c.call("must_task", json!({})).await.unwrap();
        assert_eq!(r["resultType"], "task");
    })
    .await;
}

/// SEP-2663 "Task Update Requests": an input request from the handler parks the task in
/// `input_required` with the request in `inputRequests`; `tasks/update` acknowledges, ignores
/// unknown keys, and the task resumes to completion with the answer.
#[tokio::test(start_paused = true)]
async fn sep2663_input_required_then_tasks_update_resumes() {
    within(async {
        let s = server(TaskSettings::new(), Arc::default());
        let c = Client::connect(&s, task_caps());
        let created = c.call("ask", json!({})).await.unwrap();
        let id = created["taskId"].as_str().unwrap().to_owned();
        let parked = c.until(&id, "input_required").await;
        assert_eq!(parked["status"], "input_required");
        let requests = parked["inputRequests"].as_object().unwrap();
        assert_eq!(requests.len(), 1);
        let (key, request) = requests.iter().next().unwrap();
        assert_eq!(request["method"], "elicitation/create");
        assert_eq!(request["params"]["message"], "Name?");

        let ack = c
            .request(
                "tasks/update",
                json!({"taskId": id, "inputResponses": {
                    "unknown": {"ignored": true},
                    key.as_str(): {"action": "accept", "content": {"name": "Ada"}},
                }}),
            )
            .await
            .unwrap();
        assert_eq!(
            ack,
            json!({"resultType": "complete", "_meta": ack["_meta"]})
        );
        assert!(ack.get("taskId").is_none() && ack.get("status").is_none());
        let done = c.until(&id, "completed").await;
        assert_eq!(done["result"]["content"][0]["text"], "hello \"Ada\"");
    })
    .await;
}

/// SEP-2663 "Task Cancellation": tasks/cancel acknowledges (also on a finished task), the
/// task settles to `cancelled`, and the handler's cancellation token is raised.
#[tokio::test(start_paused = true)]
async fn sep2663_cancel_reaches_the_handler() {
    within(async {
        let seen = Arc::new(AtomicBool::new(false));
        let s = server(TaskSettings::new(), seen.clone());
        let c = Client::connect(&s, task_caps());
        let created = c.call("work", json!({"seconds": 600})).await.unwrap();
        let id = created["taskId"].as_str().unwrap().to_owned();
        tokio::time::sleep(Duration::from_millis(10)).await;
        let ack = c
            .request("tasks/cancel", json!({"taskId": id}))
            .await
            .unwrap();
        assert_eq!(ack["resultType"], "complete");
        assert!(ack.get("status").is_none());
        assert_eq!(c.get(&id).await.unwrap()["status"], "cancelled");
        tokio::time::sleep(Duration::from_millis(10)).await;
        assert!(
            seen.load(Ordering::SeqCst),
            "the handler saw the cancellation"
        );
        // Still cancelled (the handler's own answer does not overwrite it); idempotent ack.
        assert_eq!(c.get(&id).await.unwrap()["status"], "cancelled");
        let again = c
            .request("tasks/cancel", json!({"taskId": id}))
            .await
            .unwrap();
        assert_eq!(again["resultType"], "complete");
    })
    .await;
}

/// SEP-2663 "failed": a protocol error of the handler fails the task with the JSON-RPC error
/// inlined and no result.
#[tokio::test(start_paused = true)]
async fn sep2663_protocol_error_fails_the_task() {
    within(async {
        let s = server(TaskSettings::new(), Arc::default());
        let c = Client::connect(&s, task_caps());
        let created = c.call("boom", json!({})).await.unwrap();
        let id = created["taskId"].as_str().unwrap().to_owned();
        let failed = c.until(&id, "failed").await;
        assert_eq!(failed["status"], "failed");
        assert_eq!(failed["error"]["code"], -32603);
        assert_eq!(failed["error"]["message"], "broke");
        assert!(failed.get("result").is_none());
    })
    .await;
}

/// SEP-2663 TTL: a task stays readable until `ttlMs` after its creation and is gone after
/// (-32602), measured on the paused clock.
#[tokio::test(start_paused = true)]
async fn sep2663_results_kept_until_ttl_then_expire() {
    within(async {
        let settings = TaskSettings::new().default_ttl(Duration::from_secs(10));
        let s = server(settings, Arc::default());
        let c = Client::connect(&s, task_caps());
        let created = c.call("work", json!({"seconds": 1})).await.unwrap();
        assert_eq!(created["ttlMs"], 10_000);
        let id = created["taskId"].as_str().unwrap().to_owned();
        c.until(&id, "completed").await;
        tokio::time::sleep(Duration::from_secs(8)).await;
        assert_eq!(c.get(&id).await.unwrap()["status"], "completed");
        tokio::time::sleep(Duration::from_secs(2)).await;
        assert_eq!(code(&c.get(&id).await.unwrap_err()), -32602);
    })
    .await;
}

/// Security: unfinished tasks per principal are capped (setting `max_active_per_principal`);
/// one more is refused with -32600, and a finished task frees its slot.
#[tokio::test(start_paused = true)]
async fn per_principal_cap_on_unfinished_tasks() {
    within(async {
        let settings = TaskSettings::new().max_active_per_principal(2);
        let s = server(settings, Arc::default());
        let c = Client::connect(&s, task_caps());
        let a = c.call("work", json!({"seconds": 1})).await.unwrap();
        c.call("work", json!({"seconds": 100})).await.unwrap();
        let e = c.call("work", json!({"seconds": 1})).await.unwrap_err();
        assert_eq!(code(&e), -32600);
        assert!(e.message.contains("at most 2"), "{}", e.message);
        c.until(a["taskId"].as_str().unwrap(), "completed").await;
        let r = c.call("work", json!({"seconds": 1})).await.unwrap();
        assert_eq!(r["resultType"], "task");
    })
    .await;
}

/// SEP-2663 "Crash resilience": a task outlives the connection that created it; a new
/// connection polls it to completion.
#[tokio::test(start_paused = true)]
async fn task_outlives_the_connection_that_created_it() {
    within(async {
        let s = server(TaskSettings::new(), Arc::default());
        let first = Client::connect(&s, task_caps());
        let created = first.call("work", json!({"seconds": 3})).await.unwrap();
        let id = created["taskId"].as_str().unwrap().to_owned();
        first.peer.close();
        drop(first);
        tokio::time::sleep(Duration::from_millis(100)).await;
        let second = Client::connect(&s, task_caps());
        let done = second.until(&id, "completed").await;
        assert_eq!(done["result"]["content"][0]["text"], "worked 3s");
    })
    .await;
}

/// Capabilities: the extension is announced under `extensions` (never `tasks`) at
/// 2026-07-28, and only by a server that serves tasks.
#[tokio::test]
async fn sep2663_extension_announced_only_with_task_tools() {
    let s = server(TaskSettings::new(), Arc::default());
    let caps = s
        .server()
        .capabilities(ferromcp_types::ProtocolVersion::V2026_07_28);
    assert!(
        caps.extensions
            .unwrap()
            .contains_key("io.modelcontextprotocol/tasks")
    );
    assert!(caps.tasks.is_none());
    let none = McpServer::builder("t", "1")
        .tool("plain", || async { "x" })
        .build()
        .unwrap();
    let caps = none
        .server()
        .capabilities(ferromcp_types::ProtocolVersion::V2026_07_28);
    assert!(
        caps.extensions
            .is_none_or(|e| !e.contains_key("io.modelcontextprotocol/tasks"))
    );
    assert!(!none.server().handles("tasks/get"));
}

/// Sets a flag when dropped: shows that a handler's future was dropped.
struct DropFlag(Arc<AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// Cancellation: a handler that ignores its cancellation token is dropped once
/// `cancel_grace` has passed, not before.
#[tokio::test(start_paused = true)]
async fn a_handler_ignoring_cancel_is_dropped_after_the_grace() {
    within(async {
        let dropped = Arc::new(AtomicBool::new(false));
        let flag = dropped.clone();
        let s = McpServer::builder("grace", "1")
            .tool(
                ToolSpec::new("stubborn").task_support(TaskSupport::Optional),
                move || {
                    let guard = DropFlag(flag.clone());
                    async move {
                        let _guard = guard;
                        tokio::time::sleep(Duration::from_secs(600)).await;
                        "finished"
                    }
                },
            )
            .tasks(TaskSettings::new().cancel_grace(Duration::from_secs(2)))
            .build()
            .unwrap();
        let c = Client::connect(&s, task_caps());
        let created = c.call("stubborn", json!({})).await.unwrap();
        let id = created["taskId"].as_str().unwrap().to_owned();
        tokio::time::sleep(Duration::from_millis(10)).await;
        c.request("tasks/cancel", json!({"taskId": id}))
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert!(!dropped.load(Ordering::SeqCst), "still within the grace");
        tokio::time::sleep(Duration::from_millis(1100)).await;
        assert!(dropped.load(Ordering::SeqCst), "dropped after the grace");
        assert_eq!(c.get(&id).await.unwrap()["status"], "cancelled");
    })
    .await;
}

/// Limits: the in-memory store holds at most `MemoryTaskStore::with_capacity` tasks (finished
/// ones too, until their TTL); one more is refused with -32600.
#[tokio::test(start_paused = true)]
async fn memory_store_capacity_is_a_limit() {
    within(async {
        let settings =
            TaskSettings::new().store(ferromcp_server::tasks::MemoryTaskStore::with_capacity(2));
        let s = server(settings, Arc::default());
        let c = Client::connect(&s, task_caps());
        let a = c.call("work", json!({"seconds": 0})).await.unwrap();
        c.call("work", json!({"seconds": 0})).await.unwrap();
        c.until(a["taskId"].as_str().unwrap(), "completed").await;
        let e = c.call("work", json!({"seconds": 0})).await.unwrap_err();
        assert_eq!(code(&e), -32600);
        assert!(e.message.contains("full"), "{}", e.message);
    })
    .await;
}

/// SEP-2663 "Task Status Notifications": a listen stream asking for `taskIds` is
/// acknowledged with the requester's own tasks (at most `list_page_size`; unknown ids left
/// out) and gets `notifications/tasks` with the task as tasks/get shows it, tagged with the
/// subscription id; without the extension such a listen is -32021.
#[tokio::test(start_paused = true)]
async fn sep2663_status_notifications_on_a_listen_stream() {
    within(async {
        let s = server(TaskSettings::new().list_page_size(2), Arc::default());
        let c = Arc::new(Client::connect(&s, task_caps()));
        let a = c.call("work", json!({"seconds": 2})).await.unwrap();
        let b = c.call("work", json!({"seconds": 2})).await.unwrap();
        let (a, b) = (
            a["taskId"].as_str().unwrap().to_owned(),
            b["taskId"].as_str().unwrap().to_owned(),
        );
        let listener = c.clone();
        let ids = json!(["not-a-task", a, b]);
        let stream = tokio::spawn(async move {
            listener
                .request(
                    "subscriptions/listen",
                    json!({"notifications": {"taskIds": ids}}),
                )
                .await
        });
        let ack = c
            .note("notifications/subscriptions/acknowledged", |_| true)
            .await;
        assert_eq!(ack["notifications"]["taskIds"], json!([a]));
        let done = c
            .note("notifications/tasks", |p| p["status"] == "completed")
            .await;
        assert_eq!(done["taskId"], json!(a));
        assert_eq!(done["result"]["content"][0]["text"], "worked 2s");
        assert!(done.get("resultType").is_none());
        assert!(done["_meta"]["io.modelcontextprotocol/subscriptionId"].is_number());
        c.until(&b, "completed").await;
        tokio::time::sleep(Duration::from_millis(50)).await;
        let about_b = c
            .notes
            .lock()
            .unwrap()
            .iter()
            .filter(|(m, p)| m == "notifications/tasks" && p["taskId"] == json!(b))
            .count();
        assert_eq!(
            about_b, 0,
            "b was not agreed (page size 2, one slot taken by an unknown id)"
        );
        stream.abort();

        let plain = Client::connect(&s, json!({}));
        let e = plain
            .request(
                "subscriptions/listen",
                json!({"notifications": {"taskIds": [a]}}),
            )
            .await
            .unwrap_err();
        assert_eq!(code(&e), -32021);
    })
    .await;
}

/// SEP-2663 `statusMessage`: a handler running as a task sets the message `tasks/get` shows
/// and knows its task id; outside a task the same handler records nothing.
#[tokio::test(start_paused = true)]
async fn status_messages_from_inside_a_task() {
    within(async {
        let s = McpServer::builder("status", "1")
            .tool(
                ToolSpec::new("report").task_support(TaskSupport::Optional),
                |ctx: RequestContext| async move {
                    let recorded = ctx.set_task_status("halfway there").await;
                    tokio::time::sleep(Duration::from_secs(5)).await;
                    format!("{recorded} {}", ctx.task_id().unwrap_or("no task"))
                },
            )
            .build()
            .unwrap();
        let c = Client::connect(&s, task_caps());
        let created = c.call("report", json!({})).await.unwrap();
        let id = created["taskId"].as_str().unwrap().to_owned();
        tokio::time::sleep(Duration::from_secs(1)).await;
        let working = c.get(&id).await.unwrap();
        assert_eq!(working["status"], "working");
        assert_eq!(working["statusMessage"], "halfway there");
        let done = c.until(&id, "completed").await;
        assert_eq!(done["result"]["content"][0]["text"], format!("true {id}"));

        let plain = Client::connect(&s, json!({}));
        let r = plain.call("report", json!({})).await.unwrap();
        assert_eq!(r["content"][0]["text"], "false no task");
    })
    .await;
}
