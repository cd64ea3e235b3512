//! The client side of tasks, in both eras, against a scripted task server that shows every
//! request on the wire.
//!
//! Spec: 2025-11-25 basic/utilities/tasks (core tasks: capabilities, tool-level negotiation,
//! creating / getting / retrieving / listing / cancelling tasks, input_required, status
//! notifications); the 2026-07-28 `io.modelcontextprotocol/tasks` extension (SEP-2663:
//! server-directed creation, polymorphic results, `tasks/get` with inlined payloads,
//! `tasks/update`, acknowledgement-only `tasks/cancel`, no `tasks/list` / `tasks/result`).

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use ferromcp_client::{
    Client, ClientBuilder, ClientError, Lifecycle, TaskConfig, ToolCall, tasks::TaskInfo,
};
use ferromcp_dispatch::{CallOptions, DispatchContext, HandlerError, Outbound, handler_fn};
use ferromcp_types::jsonrpc::{ErrorCode, ErrorObject, Payload};
use ferromcp_types::mcp::{ElicitAction, ElicitResult, ElicitValue, TaskStatus};
use serde_json::{Value, json};
use tokio::time::Instant;

const CREATED: &str = "2026-07-28T10:00:00Z";

/// One task of the scripted server.
struct FakeTask {
    tool: String,
    status: &'static str,
    polls: u32,
    /// 2026: the keys of the input requests outstanding, and the answers received.
    pending: Vec<String>,
    answers: BTreeMap<String, Value>,
    /// 2026: polls that still show an answered request (the ack is eventually consistent).
    stale_polls: u32,
}

/// A task server scripted by tool name; it logs every request with the (tokio) time it came.
struct Script {
    hint_ms: Option<u64>,
    /// 2025-11-25: declare `tasks` (list, cancel, requests.tools.call).
    declare: bool,
    page_size: usize,
    log: Mutex<Vec<(String, Value, Instant)>>,
    tasks: Mutex<BTreeMap<String, FakeTask>>,
    next: AtomicUsize,
}

impl Script {
    fn new(hint_ms: Option<u64>) -> Arc<Self> {
        Arc::new(Self {
            hint_ms,
            declare: true,
            page_size: 2,
            log: Mutex::default(),
            tasks: Mutex::default(),
            next: AtomicUsize::new(1),
        })
    }

    fn undeclared() -> Arc<Self> {
        Arc::new(Self {
            declare: false,
            ..Arc::into_inner(Self::new(None)).unwrap()
        })
    }

    /// The methods received, in order.
    fn methods(&self) -> Vec<String> {
        self.log
            .lock()
            .unwrap()
            .iter()
            .map(|(m, _, _)| m.clone())
            .collect()
    }

    /// The params of every request of `method`.
    fn params_of(&self, method: &str) -> Vec<Value> {
        self.log
            .lock()
            .unwrap()
            .iter()
            .filter(|(m, _, _)| m == method)
            .map(|(_, p, _)| p.clone())
            .collect()
    }

    fn times_of(&self, method: &str) -> Vec<Instant> {
        self.log
            .lock()
            .unwrap()
            .iter()
            .filter(|(m, _, _)| m == method)
            .map(|(_, _, t)| *t)
            .collect()
    }

    fn count(&self, method: &str) -> usize {
        self.params_of(method).len()
    }

    fn task_json(&self, id: &str, t: &FakeTask, modern: bool) -> Value {
        let mut v = json!({
            "taskId": id,
            "status": t.status,
            "createdAt": CREATED,
            "lastUpdatedAt": CREATED,
        });
        let (ttl, poll) = if modern {
            ("ttlMs", "pollIntervalMs")
        } else {
            ("ttl", "pollInterval")
        };
        v[ttl] = json!(60_000);
        if let Some(h) = self.hint_ms {
            v[poll] = json!(h);
        }
        if t.tool == "fail" && t.status == "failed" {
            v["statusMessage"] = json!("it broke");
        }
        v
    }

    fn tools() -> Value {
        let tool = |name: &str, support: Option<&str>| {
            let mut t = json!({"name": name, "inputSchema": {"type": "object"}});
            if let Some(s) = support {
                t["execution"] = json!({"taskSupport": s});
            }
            t
        };
        json!({"tools": [
            tool("slow", Some("optional")),
            tool("ask", Some("optional")),
            tool("fail", Some("optional")),
            tool("forever", Some("optional")),
            tool("notify", Some("optional")),
            tool("greedy", Some("optional")),
            tool("req", Some("required")),
            tool("forb", Some("forbidden")),
            tool("plain", None),
        ]})
    }

    fn result_text(text: &str) -> Value {
        json!({"content": [{"type": "text", "text": text}]})
    }

    /// Advances a task on a `tasks/get`.
    fn advance(t: &mut FakeTask, modern: bool) {
        t.polls += 1;
        if t.status != "working" && t.status != "input_required" {
            return;
        }
        match t.tool.as_str() {
            "slow" | "req" if t.polls >= 3 => t.status = "completed",
            "fail" if t.polls >= 2 => t.status = "failed",
            "ask" if modern => {
                if t.polls == 1 {
                    t.status = "input_required";
                    t.pending = vec!["confirm".into()];
                } else if !t.answers.is_empty() {
                    if t.stale_polls > 0 {
                        t.stale_polls -= 1;
                    } else {
                        t.pending.clear();
                        t.status = "completed";
                    }
                }
            }
            "ask" => t.status = "input_required",
            "compose" => t.status = "completed",
            "greedy" => {
                t.status = "input_required";
                t.pending = vec![format!("q{}", t.polls)];
            }
            _ => {}
        }
    }

    fn detailed(&self, id: &str, t: &FakeTask) -> Value {
        let mut v = self.task_json(id, t, true);
        v["resultType"] = json!("complete");
        match t.status {
            "completed" => {
                let text = if t.tool == "ask" || t.tool == "compose" {
                    format!("answered {}", t.answers["confirm"])
                } else {
                    format!("done {id}")
                };
                v["result"] = Self::result_text(&text);
            }
            "failed" => v["error"] = json!({"code": -32603, "message": "boom"}),
            "input_required" => {
                let requests: serde_json::Map<String, Value> = t
                    .pending
                    .iter()
                    .map(|k| {
                        (
                            k.clone(),
                            json!({"method": "elicitation/create", "params": {
                                "mode": "form",
                                "message": format!("question {k}"),
                                "requestedSchema": {"type": "object", "properties": {
                                    "confirm": {"type": "boolean"}
                                }}
                            }}),
                        )
                    })
                    .collect();
                v["inputRequests"] = Value::Object(requests);
            }
            _ => {}
        }
        v
    }

    fn create(&self, tool: &str) -> String {
        let id = format!("task-{}", self.next.fetch_add(1, Ordering::SeqCst));
        self.tasks.lock().unwrap().insert(
            id.clone(),
            FakeTask {
                tool: tool.to_owned(),
                status: "working",
                polls: 0,
                pending: Vec::new(),
                answers: BTreeMap::new(),
                stale_polls: 1,
            },
        );
        id
    }

    async fn handle(
        self: Arc<Self>,
        ctx: DispatchContext,
        method: String,
        params: Option<Payload>,
    ) -> Result<Value, HandlerError> {
        let p = params
            .map(|p| p.into_value().unwrap())
            .unwrap_or(Value::Null);
        self.log
            .lock()
            .unwrap()
            .push((method.clone(), p.clone(), Instant::now()));
        let modern = p.pointer("/_meta/io.modelcontextprotocol~1protocolVersion")
            == Some(&json!("2026-07-28"));
        let task_id = p["taskId"].as_str().unwrap_or_default().to_owned();
        let not_found = || -> HandlerError {
            ErrorObject::invalid_params("Failed to retrieve task: Task not found").into()
        };
        match method.as_str() {
            "initialize" => {
                let mut caps = json!({"tools": {}});
                if self.declare {
                    caps["tasks"] =
                        json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}});
                }
                Ok(json!({
                    "protocolVersion": "2025-11-25",
                    "capabilities": caps,
                    "serverInfo": {"name": "tasks", "version": "1"}
                }))
            }
            "server/discover" => Ok(json!({
                "resultType": "complete",
                "supportedVersions": ["2026-07-28"],
                "capabilities": {"tools": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}},
            })),
            "tools/list" => Ok(Self::tools()),
            "tools/call" => {
                let name = p["name"].as_str().unwrap_or_default().to_owned();
                if name == "plain" || name == "forb" {
                    return Ok(Self::result_text(&format!("plain {name}")));
                }
                if modern && name == "compose" {
                    let Some(answer) = p.pointer("/inputResponses/user_name").cloned() else {
                        return Ok(json!({
                            "resultType": "input_required",
                            "inputRequests": {"user_name": {"method": "elicitation/create", "params": {
                                "mode": "form",
                                "message": "Your name?",
                                "requestedSchema": {"type": "object", "properties": {
                                    "confirm": {"type": "boolean"}
                                }}
                            }}},
                            "requestState": "round-1"
                        }));
                    };
                    let id = self.create(&name);
                    let mut tasks = self.tasks.lock().unwrap();
                    let t = tasks.get_mut(&id).unwrap();
                    t.answers.insert("confirm".into(), answer);
                    let mut v = self.task_json(&id, t, true);
                    v["resultType"] = json!("task");
                    return Ok(v);
                }
                if modern {
                    let declared = p
                        .pointer("/_meta/io.modelcontextprotocol~1clientCapabilities/extensions/io.modelcontextprotocol~1tasks")
                        .is_some();
                    if !declared {
                        return Ok(Self::result_text(&format!("sync {name}")));
                    }
                    let id = self.create(&name);
                    let mut v = {
                        let tasks = self.tasks.lock().unwrap();
                        self.task_json(&id, &tasks[&id], true)
                    };
                    v["resultType"] = json!("task");
                    self.spawn_notifier(&name, &id, ctx, true);
                    return Ok(v);
                }
                if p.get("task").is_none() {
                    if name == "req" {
                        return Err(ErrorObject::method_not_found("tools/call").into());
                    }
                    return Ok(Self::result_text(&format!("sync {name}")));
                }
                let id = self.create(&name);
                let v = {
                    let tasks = self.tasks.lock().unwrap();
                    self.task_json(&id, &tasks[&id], false)
                };
                self.spawn_notifier(&name, &id, ctx, false);
                Ok(json!({"task": v}))
            }
            "tasks/get" => {
                let mut tasks = self.tasks.lock().unwrap();
                let t = tasks.get_mut(&task_id).ok_or_else(not_found)?;
                Self::advance(t, modern);
                Ok(if modern {
                    self.detailed(&task_id, t)
                } else {
                    self.task_json(&task_id, t, false)
                })
            }
            "tasks/update" if modern => {
                let mut tasks = self.tasks.lock().unwrap();
                let t = tasks.get_mut(&task_id).ok_or_else(not_found)?;
                if let Some(answers) = p["inputResponses"].as_object() {
                    for (k, v) in answers {
                        if t.pending.contains(k) {
                            t.answers.insert(k.clone(), v.clone());
                        }
                    }
                }
                Ok(json!({"resultType": "complete"}))
            }
            "tasks/cancel" => {
                let mut tasks = self.tasks.lock().unwrap();
                let t = tasks.get_mut(&task_id).ok_or_else(not_found)?;
                if modern {
                    if t.status == "working" || t.status == "input_required" {
                        t.status = "cancelled";
                    }
                    return Ok(json!({"resultType": "complete"}));
                }
                if t.status != "working" && t.status != "input_required" {
                    return Err(ErrorObject::invalid_params(format!(
                        "Cannot cancel task: already in terminal status '{}'",
                        t.status
                    ))
                    .into());
                }
                t.status = "cancelled";
                Ok(self.task_json(&task_id, t, false))
            }
            "tasks/result" if !modern => self.payload(&ctx, &task_id).await,
            "tasks/list" if !modern => {
                let start: usize = p["cursor"].as_str().map_or(0, |c| c.parse().unwrap());
                let tasks = self.tasks.lock().unwrap();
                let page: Vec<Value> = tasks
                    .iter()
                    .skip(start)
                    .take(self.page_size)
                    .map(|(id, t)| self.task_json(id, t, false))
                    .collect();
                let mut v = json!({ "tasks": page });
                if start + self.page_size < tasks.len() {
                    v["nextCursor"] = json!((start + self.page_size).to_string());
                }
                Ok(v)
            }
            _ => Err(ErrorObject::method_not_found(&method).into()),
        }
    }

    /// `tasks/result` (2025-11-25): for `ask`, an elicitation with related-task metadata
    /// first; then the result (or the error) once terminal.
    async fn payload(&self, ctx: &DispatchContext, task_id: &str) -> Result<Value, HandlerError> {
        let tool = {
            let tasks = self.tasks.lock().unwrap();
            let t = tasks
                .get(task_id)
                .ok_or_else(|| HandlerError::from(ErrorObject::invalid_params("Task not found")))?;
            t.tool.clone()
        };
        if tool == "ask" {
            let answer = ctx
                .send_request(
                    "elicitation/create",
                    Some(Payload::from(json!({
                        "mode": "form",
                        "message": "Confirm?",
                        "requestedSchema": {"type": "object", "properties": {
                            "confirm": {"type": "boolean"}
                        }},
                        "_meta": {"io.modelcontextprotocol/related-task": {"taskId": task_id}}
                    }))),
                    CallOptions::new(),
                )
                .await
                .map_err(HandlerError::from)?;
            let answer = answer.into_value().unwrap();
            let mut tasks = self.tasks.lock().unwrap();
            let t = tasks.get_mut(task_id).unwrap();
            t.status = "completed";
            t.answers.insert("confirm".into(), answer);
        }
        let tasks = self.tasks.lock().unwrap();
        let t = &tasks[task_id];
        let related = json!({"io.modelcontextprotocol/related-task": {"taskId": task_id}});
        match t.status {
            "failed" => Err(ErrorObject::new(ErrorCode(-32603), "boom").into()),
            _ => {
                let text = match t.answers.get("confirm") {
                    Some(a) => format!("answered {a}"),
                    None => format!("done {task_id}"),
                };
                let mut v = Self::result_text(&text);
                v["_meta"] = related;
                Ok(v)
            }
        }
    }

    /// `notify`: completes the task 200 ms after creation and says so with a status
    /// notification (2025-11-25 `notifications/tasks/status`, 2026 `notifications/tasks`).
    fn spawn_notifier(self: &Arc<Self>, tool: &str, id: &str, ctx: DispatchContext, modern: bool) {
        if tool != "notify" {
            return;
        }
        let this = self.clone();
        let id = id.to_owned();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(200)).await;
            let params = {
                let mut tasks = this.tasks.lock().unwrap();
                let t = tasks.get_mut(&id).unwrap();
                t.status = "completed";
                if modern {
                    let mut v = this.detailed(&id, t);
                    v.as_object_mut().unwrap().remove("resultType");
                    v
                } else {
                    this.task_json(&id, t, false)
                }
            };
            let method = if modern {
                "notifications/tasks"
            } else {
                "notifications/tasks/status"
            };
            ctx.notify(method, Some(Payload::from(params))).await;
        });
    }
}

async fn connect_script(builder: ClientBuilder, script: &Arc<Script>, era: Lifecycle) -> Client {
    let s = script.clone();
    let handler = handler_fn(move |ctx, method, params| {
        let s = s.clone();
        async move { s.handle(ctx, method, params).await.map(Payload::from) }
    })
    .into_arc();
    builder
        .lifecycle(era)
        .connect(raw_server(handler))
        .await
        .unwrap()
}

fn tasks_client() -> ClientBuilder {
    Client::builder()
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

fn text(r: &ferromcp_types::mcp::CallToolResult) -> String {
    r.content[0].as_text().unwrap().to_owned()
}

const BOTH: [Lifecycle; 2] = [Lifecycle::Handshake, Lifecycle::Modern];

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

/// SEP-2663 › Task Polling ("clients SHOULD respect pollIntervalMs") and 2025-11-25 tasks ›
/// Getting Tasks (`pollInterval`): the polls come at the hinted interval (paused clock).
#[tokio::test(start_paused = true)]
async fn polling_honours_the_servers_interval_hint() {
    within(async {
        for era in BOTH {
            let script = Script::new(Some(2_000));
            let client = connect_script(tasks_client(), &script, era).await;
            let task = client.call_tool_as_task("slow", json!({})).await.unwrap();
            let created = Instant::now();
            task.result().await.unwrap();
            let times = script.times_of("tasks/get");
            assert_eq!(times.len(), 3, "{era:?}");
            // Handles poll at once; then the hint's interval between polls.
            assert!(times[0] - created < Duration::from_millis(100), "{era:?}");
            for w in times.windows(2) {
                let gap = w[1] - w[0];
                assert!(
                    gap >= Duration::from_millis(2_000) && gap < Duration::from_millis(2_100),
                    "{era:?}: {gap:?}"
                );
            }
        }
    })
    .await;
}

/// Polling without a hint backs off from the initial interval, doubling; the seed state of
/// an unsolicited task counts as the first poll (paused clock).
#[tokio::test(start_paused = true)]
async fn polling_without_a_hint_backs_off() {
    within(async {
        let script = Script::new(None);
        let client = connect_script(
            Client::builder().tasks(
                TaskConfig::new()
                    .initial_poll_interval(Duration::from_millis(100))
                    .max_poll_interval(Duration::from_millis(300)),
            ),
            &script,
            Lifecycle::Modern,
        )
        .await;
        let start = Instant::now();
        client.call_tool("slow", json!({})).await.unwrap();
        let times: Vec<u128> = script
            .times_of("tasks/get")
            .iter()
            .map(|t| (*t - start).as_millis())
            .collect();
        // 100, then +200, then +300 (the ceiling).
        assert_eq!(times.len(), 3);
        let expect = [100, 300, 600];
        for (got, want) in times.iter().zip(expect) {
            assert!(got.abs_diff(want) < 20, "{times:?}");
        }
    })
    .await;
}

/// The polling limits: a server's hint above `max_poll_interval` is lowered to it, one below
/// `min_poll_interval` raised to it (paused clock).
#[tokio::test(start_paused = true)]
async fn polling_interval_limits_clamp_the_hint() {
    within(async {
        for (hint, want) in [(3_600_000, 1_000), (0, 50)] {
            let script = Script::new(Some(hint));
            let client = connect_script(
                Client::builder().tasks(
                    TaskConfig::new()
                        .min_poll_interval(Duration::from_millis(50))
                        .max_poll_interval(Duration::from_secs(1)),
                ),
                &script,
                Lifecycle::Modern,
            )
            .await;
            client.call_tool("slow", json!({})).await.unwrap();
            let times = script.times_of("tasks/get");
            for w in times.windows(2) {
                let gap = (w[1] - w[0]).as_millis();
                assert!(gap.abs_diff(want) < 20, "hint {hint}: {gap}");
            }
        }
    })
    .await;
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

/// 2025-11-25 tasks › Task Status Notification and SEP-2663 › Task Status Notifications: a
/// status notification ends the wait early, long before the (hour-long) hinted interval.
#[tokio::test]
async fn status_notification_ends_the_wait_early() {
    within(async {
        for era in BOTH {
            let script = Script::new(Some(3_600_000));
            let client = connect_script(
                tasks_client()
                    .tasks(TaskConfig::new().max_poll_interval(Duration::from_secs(3600))),
                &script,
                era,
            )
            .await;
            let started = std::time::Instant::now();
            let r = client
                .call_tool_as_task("notify", json!({}))
                .await
                .unwrap()
                .result()
                .await
                .unwrap();
            assert_eq!(text(&r), "done task-1", "{era:?}");
            assert!(started.elapsed() < Duration::from_secs(10), "{era:?}");
        }
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

/// `TaskHandle::wait_with` reports every polled state (2025-11-25 tasks › Task Status /
/// SEP-2663 › Task Status): statuses in order, with the input requests of `input_required`.
#[tokio::test]
async fn wait_with_reports_each_polled_state() {
    within(async {
        for (era, tool, want) in [
            (
                Lifecycle::Handshake,
                "slow",
                vec![
                    TaskStatus::Working,
                    TaskStatus::Working,
                    TaskStatus::Completed,
                ],
            ),
            (
                Lifecycle::Modern,
                "ask",
                vec![
                    TaskStatus::InputRequired,
                    TaskStatus::InputRequired,
                    TaskStatus::Completed,
                ],
            ),
        ] {
            let script = Script::new(Some(1));
            let client = connect_script(tasks_client(), &script, era).await;
            let call = client.call_tool_as_task(tool, json!({})).await.unwrap();
            let mut seen = Vec::new();
            let mut asked = 0;
            call.task()
                .unwrap()
                .wait_with(|s| {
                    seen.push(s.info.status);
                    asked += s.input_requests.as_ref().map_or(0, |r| r.len());
                })
                .await
                .unwrap();
            assert_eq!(seen, want, "{era:?}");
            let want_asked = if era == Lifecycle::Modern { 2 } else { 0 };
            assert_eq!(asked, want_asked, "{era:?}");
        }
    })
    .await;
}
