//! The scripted task server the client task tests run against (it shows every request on the
//! wire), and the helpers that connect a client to it.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::common::*;
use ferromcp_client::{Client, ClientBuilder, Lifecycle, TaskConfig};
use ferromcp_dispatch::{CallOptions, DispatchContext, HandlerError, Outbound, handler_fn};
use ferromcp_types::jsonrpc::{ErrorCode, ErrorObject, Payload};
use ferromcp_types::mcp::{ElicitAction, ElicitResult, ElicitValue};
use serde_json::{Value, json};
use tokio::time::Instant;

pub(crate) const CREATED: &str = "2026-07-28T10:00:00Z";

/// One task of the scripted server.
pub(crate) struct FakeTask {
    pub(crate) tool: String,
    pub(crate) status: &'static str,
    pub(crate) polls: u32,
    /// 2026: the keys of the input requests outstanding, and the answers received.
    pub(crate) pending: Vec<String>,
    pub(crate) answers: BTreeMap<String, Value>,
    /// 2026: polls that still show an answered request (the ack is eventually consistent).
    pub(crate) stale_polls: u32,
}

/// A task server scripted by tool name; it logs every request with the (tokio) time it came.
pub(crate) struct Script {
    pub(crate) hint_ms: Option<u64>,
    /// 2025-11-25: declare `tasks` (list, cancel, requests.tools.call).
    pub(crate) declare: bool,
    pub(crate) page_size: usize,
    pub(crate) log: Mutex<Vec<(String, Value, Instant)>>,
    pub(crate) tasks: Mutex<BTreeMap<String, FakeTask>>,
    pub(crate) next: AtomicUsize,
}

impl Script {
    pub(crate) fn new(hint_ms: Option<u64>) -> Arc<Self> {
        Arc::new(Self {
            hint_ms,
            declare: true,
            page_size: 2,
            log: Mutex::default(),
            tasks: Mutex::default(),
            next: AtomicUsize::new(1),
        })
    }

    pub(crate) fn undeclared() -> Arc<Self> {
        Arc::new(Self {
            declare: false,
            ..Arc::into_inner(Self::new(None)).unwrap()
        })
    }

    /// The methods received, in order.
    pub(crate) fn methods(&self) -> Vec<String> {
        self.log
            .lock()
            .unwrap()
            .iter()
            .map(|(m, _, _)| m.clone())
            .collect()
    }

    /// The params of every request of `method`.
    pub(crate) fn params_of(&self, method: &str) -> Vec<Value> {
        self.log
            .lock()
            .unwrap()
            .iter()
            .filter(|(m, _, _)| m == method)
            .map(|(_, p, _)| p.clone())
            .collect()
    }

    pub(crate) fn times_of(&self, method: &str) -> Vec<Instant> {
        self.log
            .lock()
            .unwrap()
            .iter()
            .filter(|(m, _, _)| m == method)
            .map(|(_, _, t)| *t)
            .collect()
    }

    pub(crate) fn count(&self, method: &str) -> usize {
        self.params_of(method).len()
    }

    pub(crate) fn task_json(&self, id: &str, t: &FakeTask, modern: bool) -> Value {
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

    pub(crate) fn tools() -> Value {
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

    pub(crate) fn result_text(text: &str) -> Value {
        json!({"content": [{"type": "text", "text": text}]})
    }

    /// Advances a task on a `tasks/get`.
    pub(crate) fn advance(t: &mut FakeTask, modern: bool) {
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

    pub(crate) fn detailed(&self, id: &str, t: &FakeTask) -> Value {
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

    pub(crate) fn create(&self, tool: &str) -> String {
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

    pub(crate) async fn handle(
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
    pub(crate) async fn payload(
        &self,
        ctx: &DispatchContext,
        task_id: &str,
    ) -> Result<Value, HandlerError> {
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
    pub(crate) fn spawn_notifier(
        self: &Arc<Self>,
        tool: &str,
        id: &str,
        ctx: DispatchContext,
        modern: bool,
    ) {
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

pub(crate) async fn connect_script(
    builder: ClientBuilder,
    script: &Arc<Script>,
    era: Lifecycle,
) -> Client {
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

pub(crate) fn tasks_client() -> ClientBuilder {
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

pub(crate) fn text(r: &ferromcp_types::mcp::CallToolResult) -> String {
    r.content[0].as_text().unwrap().to_owned()
}

pub(crate) const BOTH: [Lifecycle; 2] = [Lifecycle::Handshake, Lifecycle::Modern];
