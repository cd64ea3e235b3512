//! Tasks at 2025-11-25 (core tasks, "Utilities › Tasks"), through the public API of the
//! high-level server, in process: the `tasks` capability, task-augmented `tools/call`
//! (`params.task`) answering `CreateTaskResult`, `tasks/get`, `tasks/result` (blocking, with
//! the related-task `_meta`), `tasks/list`, `tasks/cancel`, `execution.taskSupport`
//! mismatches (-32601), input requests from inside a task carrying the related-task
//! `_meta`, and sessions as the authorization context.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::sync::{Arc, Mutex};
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

const LIMIT: Duration = Duration::from_secs(30);

async fn within<F: std::future::Future>(f: F) -> F::Output {
    tokio::time::timeout(LIMIT, f).await.expect("timed out")
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Secs {
    /// Seconds to work.
    seconds: u64,
}

fn server(settings: TaskSettings) -> McpServer {
    McpServer::builder("tasks", "1")
        .tool("plain", || async { "plain result" })
        .tool(
            ToolSpec::new("work").task_support(TaskSupport::Optional),
            |Args(a): Args<Secs>| async move {
                tokio::time::sleep(Duration::from_secs(a.seconds)).await;
                format!("worked {}s", a.seconds)
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
        .tasks(settings)
        .build()
        .unwrap()
}

type Asked = Arc<Mutex<Vec<(String, Value)>>>;

struct Client {
    peer: DirectDispatcher,
    asked: Asked,
}

impl Client {
    /// A 2025-11-25 client that answers elicitations with `{"name": "Ada"}`.
    async fn connect(server: &McpServer) -> Self {
        let peer = server.server().in_process(Era::Handshake);
        let asked: Asked = Arc::default();
        let log = asked.clone();
        let notes = asked.clone();
        let handler = handler_fn(move |_, method: String, params: Option<Payload>| {
            let params = params.map_or(Value::Null, |p| p.into_value().unwrap());
            log.lock().unwrap().push((method.clone(), params));
            async move {
                if method == "elicitation/create" {
                    Ok(Payload::from_value(
                        json!({"action": "accept", "content": {"name": "Ada"}}),
                    ))
                } else {
                    Err(ErrorObject::method_not_found(&method).into())
                }
            }
        })
        .on_notify(move |_, method: String, params: Option<Payload>| {
            let params = params.map_or(Value::Null, |p| p.into_value().unwrap());
            notes.lock().unwrap().push((method, params));
            async {}
        })
        .into_arc();
        let runner = peer.clone();
        tokio::spawn(async move { runner.run(handler).await });
        let c = Self { peer, asked };
        let init = json!({"protocolVersion": "2025-11-25",
            "capabilities": {"elicitation": {}, "tasks": {}},
            "clientInfo": {"name": "t", "version": "1"}});
        c.request("initialize", init).await.unwrap();
        c.peer.notify("notifications/initialized", None).await;
        c
    }

    async fn request(&self, method: &str, params: Value) -> Result<Value, ErrorObject> {
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

    async fn task_call(&self, name: &str, args: Value, task: Value) -> Result<Value, ErrorObject> {
        self.request(
            "tools/call",
            json!({"name": name, "arguments": args, "task": task}),
        )
        .await
    }
}

fn code(e: &ErrorObject) -> i32 {
    e.code.0
}

/// Tasks › Capabilities: a server with task-capable tools announces `tasks` (`list`,
/// `cancel`, `requests.tools.call`) at 2025-11-25 and lists `execution.taskSupport`; a server
/// without them announces nothing.
#[tokio::test]
async fn tasks_capability_and_tool_execution_in_the_handshake() {
    within(async {
        let c = Client::connect(&server(TaskSettings::new())).await;
        let s = server(TaskSettings::new());
        let peer = s.server().in_process(Era::Handshake);
        let init = peer
            .send_request(
                "initialize",
                Some(Payload::from_value(json!({"protocolVersion": "2025-11-25",
                    "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}))),
                CallOptions::new(),
            )
            .await
            .unwrap()
            .into_value()
            .unwrap();
        assert_eq!(
            init["capabilities"]["tasks"],
            json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}})
        );
        assert!(init["capabilities"].get("extensions").is_none());
        let tools = c.request("tools/list", json!({})).await.unwrap();
        let exec: Vec<Value> = tools["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["execution"]["taskSupport"].clone())
            .collect();
        assert_eq!(
            exec,
            [
                Value::Null,
                json!("optional"),
                json!("required"),
                json!("optional")
            ]
        );
        let plain = McpServer::builder("p", "1")
            .tool("x", || async { "x" })
            .build()
            .unwrap();
        let caps = plain
            .server()
            .capabilities(ferromcp_types::ProtocolVersion::V2025_11_25);
        assert!(caps.tasks.is_none());
    })
    .await;
}

/// Tasks › Creating tasks, Getting task status, Retrieving results: `params.task` makes a
/// `CreateTaskResult`; `tasks/get` reports the task (`ttl` as asked, `pollInterval`);
/// `tasks/result` blocks until it is done and answers the tool result with the related-task
/// `_meta`.
#[tokio::test(start_paused = true)]
async fn task_augmented_call_get_and_blocking_result() {
    within(async {
        let c = Client::connect(&server(TaskSettings::new())).await;
        let created = c
            .task_call("work", json!({"seconds": 5}), json!({"ttl": 60_000}))
            .await
            .unwrap();
        let task = &created["task"];
        assert_eq!(task["status"], "working");
        assert_eq!(task["ttl"], 60_000);
        assert_eq!(task["pollInterval"], 500);
        assert!(task["createdAt"].as_str().unwrap().ends_with('Z'));
        let id = task["taskId"].as_str().unwrap().to_owned();

        let got = c.request("tasks/get", json!({"taskId": id})).await.unwrap();
        assert_eq!(got["status"], "working");
        assert!(got.get("resultType").is_none());

        let result = c
            .request("tasks/result", json!({"taskId": id}))
            .await
            .unwrap();
        assert_eq!(result["content"][0]["text"], "worked 5s");
        assert_eq!(
            result["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
            json!(id)
        );
        let got = c.request("tasks/get", json!({"taskId": id})).await.unwrap();
        assert_eq!(got["status"], "completed");
    })
    .await;
}

/// Tasks › Tool-level negotiation: a forbidden tool called as a task and a required tool
/// called without one are -32601; an optional tool without `params.task` answers plainly.
#[tokio::test(start_paused = true)]
async fn task_support_mismatches_are_method_not_found() {
    within(async {
        let c = Client::connect(&server(TaskSettings::new())).await;
        let e = c
            .task_call("plain", json!({}), json!({}))
            .await
            .unwrap_err();
        assert_eq!(code(&e), -32601);
        let e = c
            .request("tools/call", json!({"name": "must_task", "arguments": {}}))
            .await
            .unwrap_err();
        assert_eq!(code(&e), -32601);
        let r = c
            .request(
                "tools/call",
                json!({"name": "work", "arguments": {"seconds": 0}}),
            )
            .await
            .unwrap();
        assert_eq!(r["content"][0]["text"], "worked 0s");
        let r = c
            .task_call("must_task", json!({}), json!({}))
            .await
            .unwrap();
        assert_eq!(r["task"]["status"], "working");
        // tasks/update belongs to 2026-07-28.
        let e = c
            .request("tasks/update", json!({"taskId": "x", "inputResponses": {}}))
            .await
            .unwrap_err();
        assert_eq!(code(&e), -32601);
    })
    .await;
}

/// Tasks › Listing and Cancelling: tasks/list shows the requester's tasks; tasks/cancel
/// moves a working task to `cancelled` before answering; cancelling a finished task is
/// -32602, as is an unknown id.
#[tokio::test(start_paused = true)]
async fn list_and_cancel() {
    within(async {
        let c = Client::connect(&server(TaskSettings::new())).await;
        let a = c
            .task_call("work", json!({"seconds": 100}), json!({}))
            .await
            .unwrap();
        let b = c
            .task_call("work", json!({"seconds": 0}), json!({}))
            .await
            .unwrap();
        let (a, b) = (
            a["task"]["taskId"].as_str().unwrap().to_owned(),
            b["task"]["taskId"].as_str().unwrap().to_owned(),
        );
        let listed = c.request("tasks/list", json!({})).await.unwrap();
        let mut ids: Vec<&str> = listed["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["taskId"].as_str().unwrap())
            .collect();
        ids.sort_unstable();
        let mut want = vec![a.as_str(), b.as_str()];
        want.sort_unstable();
        assert_eq!(ids, want);

        let cancelled = c
            .request("tasks/cancel", json!({"taskId": a}))
            .await
            .unwrap();
        assert_eq!(cancelled["status"], "cancelled");
        let e = c
            .request("tasks/cancel", json!({"taskId": a}))
            .await
            .unwrap_err();
        assert_eq!(code(&e), -32602);
        let e = c
            .request("tasks/get", json!({"taskId": "nope"}))
            .await
            .unwrap_err();
        assert_eq!(code(&e), -32602);
        let e = c
            .request("tasks/result", json!({"taskId": a}))
            .await
            .unwrap_err();
        assert_eq!(code(&e), -32800);
    })
    .await;
}

/// Tasks › Input required: an elicitation from inside a task is sent with the related-task
/// `_meta` (off HTTP, on the connection) and the answer reaches the handler.
#[tokio::test(start_paused = true)]
async fn input_from_inside_a_task_carries_the_related_task() {
    within(async {
        let c = Client::connect(&server(TaskSettings::new())).await;
        let created = c.task_call("ask", json!({}), json!({})).await.unwrap();
        let id = created["task"]["taskId"].as_str().unwrap().to_owned();
        let result = c
            .request("tasks/result", json!({"taskId": id}))
            .await
            .unwrap();
        assert_eq!(result["content"][0]["text"], "hello \"Ada\"");
        let asked = c.asked.lock().unwrap().clone();
        let (method, params) = asked
            .iter()
            .find(|(m, _)| m == "elicitation/create")
            .unwrap();
        assert_eq!(method, "elicitation/create");
        assert_eq!(
            params["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
            json!(id)
        );
    })
    .await;
}

/// Tasks › TTL: `params.task.ttl` longer than the server's maximum is cut to it.
#[tokio::test(start_paused = true)]
async fn requested_ttl_is_capped_by_the_setting() {
    within(async {
        let settings = TaskSettings::new().max_ttl(Duration::from_secs(60));
        let c = Client::connect(&server(settings)).await;
        let created = c
            .task_call("work", json!({"seconds": 1}), json!({"ttl": 999_999_999}))
            .await
            .unwrap();
        assert_eq!(created["task"]["ttl"], 60_000);
    })
    .await;
}

/// Tasks › Task status notification: when a task finishes, the creating connection gets
/// `notifications/tasks/status` with the final task (and no related-task `_meta`).
#[tokio::test(start_paused = true)]
async fn final_status_notification_to_the_creating_connection() {
    within(async {
        let c = Client::connect(&server(TaskSettings::new())).await;
        let created = c
            .task_call("work", json!({"seconds": 1}), json!({}))
            .await
            .unwrap();
        let id = created["task"]["taskId"].as_str().unwrap().to_owned();
        c.request("tasks/result", json!({"taskId": id}))
            .await
            .unwrap();
        let note = loop {
            let seen = c.asked.lock().unwrap().clone();
            if let Some((_, p)) = seen.iter().find(|(m, _)| m == "notifications/tasks/status") {
                break p.clone();
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        };
        assert_eq!(note["taskId"], json!(id));
        assert_eq!(note["status"], "completed");
        assert!(note.get("_meta").is_none());
    })
    .await;
}

/// Tasks › Listing tasks: pages of `list_page_size` tasks with an opaque `nextCursor`; a
/// cursor the server did not make is -32602.
#[tokio::test(start_paused = true)]
async fn tasks_list_pages_with_cursors() {
    within(async {
        let c = Client::connect(&server(TaskSettings::new().list_page_size(1))).await;
        for _ in 0..2 {
            c.task_call("work", json!({"seconds": 100}), json!({}))
                .await
                .unwrap();
        }
        let first = c.request("tasks/list", json!({})).await.unwrap();
        assert_eq!(first["tasks"].as_array().unwrap().len(), 1);
        let cursor = first["nextCursor"].clone();
        assert!(cursor.is_string());
        let second = c
            .request("tasks/list", json!({"cursor": cursor}))
            .await
            .unwrap();
        assert_eq!(second["tasks"].as_array().unwrap().len(), 1);
        assert!(second.get("nextCursor").is_none());
        assert_ne!(first["tasks"][0]["taskId"], second["tasks"][0]["taskId"]);
        let e = c
            .request("tasks/list", json!({"cursor": "forged"}))
            .await
            .unwrap_err();
        assert_eq!(code(&e), -32602);
    })
    .await;
}

/// Tasks › Creating tasks: a task-augmented call whose arguments do not fit the schema is
/// still answered with a task (the receiver accepted the task-augmented request), which ends
/// with the tool error: Tasks › Task Status Lifecycle, a tool result with `isError: true`
/// moves the task to `failed` (with a status message), and `tasks/result` answers that
/// result.
#[tokio::test(start_paused = true)]
async fn invalid_arguments_in_a_requested_task_fail_it_with_the_tool_error() {
    within(async {
        let c = Client::connect(&server(TaskSettings::new())).await;
        let created = c
            .task_call("work", json!({"seconds": "soon"}), json!({}))
            .await
            .unwrap();
        let id = created["task"]["taskId"].as_str().unwrap().to_owned();
        let result = c
            .request("tasks/result", json!({"taskId": id}))
            .await
            .unwrap();
        assert_eq!(result["isError"], true);
        let got = c.request("tasks/get", json!({"taskId": id})).await.unwrap();
        assert_eq!(got["status"], "failed", "{got}");
        assert!(got["statusMessage"].is_string(), "{got}");
        assert!(
            result["content"][0]["text"]
                .as_str()
                .unwrap()
                .contains("seconds")
        );
    })
    .await;
}

fn task_id(created: &Value) -> String {
    created["task"]["taskId"].as_str().unwrap().to_owned()
}

fn listed_ids(listed: &Value) -> Vec<String> {
    listed["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["taskId"].as_str().unwrap().to_owned())
        .collect()
}

/// TL07: without a principal and a session id, a long-lived connection (stdio, in-memory)
/// owns its tasks: another connection to the same server neither lists nor reads them
/// (-32602, as for an unknown task), and lists only its own.
#[tokio::test(start_paused = true)]
async fn tl07_each_connection_owns_its_tasks() {
    within(async {
        let s = server(TaskSettings::new());
        let a = Client::connect(&s).await;
        let b = Client::connect(&s).await;
        let mine = task_id(
            &a.task_call("work", json!({"seconds": 100}), json!({}))
                .await
                .unwrap(),
        );
        let theirs = task_id(
            &b.task_call("work", json!({"seconds": 100}), json!({}))
                .await
                .unwrap(),
        );
        let listed = a.request("tasks/list", json!({})).await.unwrap();
        assert_eq!(listed_ids(&listed), std::slice::from_ref(&mine));
        let listed = b.request("tasks/list", json!({})).await.unwrap();
        assert_eq!(listed_ids(&listed), std::slice::from_ref(&theirs));
        for method in ["tasks/get", "tasks/cancel"] {
            let e = b
                .request(method, json!({"taskId": mine}))
                .await
                .unwrap_err();
            assert_eq!(code(&e), -32602, "{method}");
        }
        let got = a
            .request("tasks/get", json!({"taskId": mine}))
            .await
            .unwrap();
        assert_eq!(got["status"], "working");
    })
    .await;
}

/// TL08: finished tasks count against their owner's retention cap: beyond it the owner's
/// oldest finished task is dropped (gone from tasks/list and tasks/get); when every task it
/// holds is unfinished, one more is refused with -32600; another owner is unaffected.
#[tokio::test(start_paused = true)]
async fn tl08_finished_tasks_count_against_the_owners_retention_cap() {
    within(async {
        let s = server(
            TaskSettings::new()
                .max_retained_per_owner(3)
                .max_active_per_principal(10),
        );
        let a = Client::connect(&s).await;
        let mut ids = Vec::new();
        for _ in 0..3 {
            let id = task_id(
                &a.task_call("work", json!({"seconds": 0}), json!({}))
                    .await
                    .unwrap(),
            );
            a.request("tasks/result", json!({"taskId": id}))
                .await
                .unwrap();
            // Distinct expiry instants (the oldest finished task goes first).
            tokio::time::sleep(Duration::from_millis(5)).await;
            ids.push(id);
        }
        let fourth = task_id(
            &a.task_call("work", json!({"seconds": 100}), json!({}))
                .await
                .unwrap(),
        );
        let listed = a.request("tasks/list", json!({})).await.unwrap();
        let mut got = listed_ids(&listed);
        got.sort_unstable();
        let mut want = vec![ids[1].clone(), ids[2].clone(), fourth.clone()];
        want.sort_unstable();
        assert_eq!(got, want);
        let e = a
            .request("tasks/get", json!({"taskId": ids[0]}))
            .await
            .unwrap_err();
        assert_eq!(code(&e), -32602);
        // Two more unfinished: the finished ones go first, then nothing is left to drop.
        for _ in 0..2 {
            a.task_call("work", json!({"seconds": 100}), json!({}))
                .await
                .unwrap();
        }
        let e = a
            .task_call("work", json!({"seconds": 100}), json!({}))
            .await
            .unwrap_err();
        assert_eq!(code(&e), -32600);
        assert!(e.message.contains("at most 3"), "{}", e.message);
        // Another connection has its own cap.
        let b = Client::connect(&s).await;
        b.task_call("work", json!({"seconds": 100}), json!({}))
            .await
            .unwrap();
    })
    .await;
}

/// TL09: the store's total cap counts finished tasks too, and one owner's finished tasks
/// cannot fill it: with a retention cap per owner below the store's capacity, an owner that
/// keeps creating tasks recycles its own slots and another owner is still served; once the
/// store is full of several owners' tasks, one more is refused with -32600.
#[tokio::test(start_paused = true)]
async fn tl09_one_owner_cannot_fill_the_store_with_finished_tasks() {
    within(async {
        let s = server(
            TaskSettings::new()
                .store(ferromcp_server::tasks::MemoryTaskStore::with_capacity(4))
                .max_retained_per_owner(2),
        );
        let a = Client::connect(&s).await;
        for _ in 0..20 {
            let id = task_id(
                &a.task_call("work", json!({"seconds": 0}), json!({}))
                    .await
                    .unwrap(),
            );
            a.request("tasks/result", json!({"taskId": id}))
                .await
                .unwrap();
        }
        let listed = a.request("tasks/list", json!({})).await.unwrap();
        assert_eq!(listed_ids(&listed).len(), 2);
        let b = Client::connect(&s).await;
        b.task_call("work", json!({"seconds": 0}), json!({}))
            .await
            .unwrap();
        b.task_call("work", json!({"seconds": 0}), json!({}))
            .await
            .unwrap();
        // The store holds 4 tasks (2 of each owner): a third owner is refused.
        let c = Client::connect(&s).await;
        let e = c
            .task_call("work", json!({"seconds": 0}), json!({}))
            .await
            .unwrap_err();
        assert_eq!(code(&e), -32600);
        assert!(e.message.contains("full"), "{}", e.message);
    })
    .await;
}
