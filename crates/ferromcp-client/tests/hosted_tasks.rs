//! Client-hosted tasks (MCP 2025-11-25 › Tasks): the server sends task-augmented
//! `elicitation/create` and `sampling/createMessage` to the client (with the server API
//! `RequestContext::elicit_as_task` / `create_message_as_task`), and polls them with
//! `tasks/get`, `tasks/result`, `tasks/list` and `tasks/cancel`, which the client answers.
//!
//! Spec: 2025-11-25 basic/utilities/tasks: Capabilities › Client Capabilities; Capability
//! Negotiation; Creating Tasks; Getting Tasks; Retrieving Task Results; Listing Tasks;
//! Cancelling Tasks; Task Status Notification; Behavior Requirements (Task Support and
//! Handling, Result Retrieval, Task Cancellation, TTL and Resource Management); Security
//! Considerations › Resource Management. The 2026-07-28 tasks extension has no client-hosted
//! tasks.

#![cfg(feature = "http")]
#![allow(clippy::unwrap_used, clippy::panic)]

mod common;
mod http_support;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use ferromcp_client::{
    Client, ClientBuilder, Connected, HostedTaskConfig, HttpTransport, Lifecycle, RequestOptions,
    TaskConfig,
};
use ferromcp_dispatch::HandlerError;
use ferromcp_http_server::HttpConfig as ServerConfig;
use ferromcp_server::mcp_server::ToolSpec;
use ferromcp_server::{McpServer, RequestContext, Server};
use ferromcp_types::Era;
use ferromcp_types::jsonrpc::ErrorObject;
use ferromcp_types::mcp::{
    CallToolResult, CreateMessageRequestParams, CreateMessageResult, ElicitAction,
    ElicitRequestFormParams, ElicitResult, ElicitValue, ElicitationSchema, RequestParams, Role,
    SamplingContent, SamplingMessage, Task, TaskStatus,
};
use http_support::{Flags, first_text, start_with, within};
use serde_json::{Value, json};

fn form(message: &str) -> ElicitRequestFormParams {
    let schema: ElicitationSchema = serde_json::from_value(json!({
        "type": "object",
        "properties": {"confirm": {"type": "boolean"}}
    }))
    .unwrap();
    ElicitRequestFormParams::new(message, schema)
}

fn code(e: &ErrorObject) -> i64 {
    i64::from(e.code.0)
}

fn sampling_params(text: &str) -> CreateMessageRequestParams {
    CreateMessageRequestParams::new(vec![SamplingMessage::user_text(text)], 100)
}

fn json_result(v: &Value) -> CallToolResult {
    CallToolResult::text(v.to_string())
}

/// `elicit`: an elicitation as a client-hosted task, polled to its answer.
async fn elicit_tool(ctx: RequestContext) -> CallToolResult {
    let task = match ctx.elicit_as_task(form("quick"), None).await {
        Ok(t) => t,
        Err(e) => return json_result(&json!({"error": code(&e), "data": e.data})),
    };
    let created = task.last();
    match task.wait().await {
        Ok(r) => json_result(&json!({
            "created": created.status,
            "ttl": created.ttl,
            "action": r.action,
            "content": r.content,
            "final": task.last().status,
        })),
        Err(e) => json_result(&json!({"error": code(&e), "message": e.message})),
    }
}

/// `sample`: a sampling request as a client-hosted task, polled to its answer.
async fn sample_tool(ctx: RequestContext) -> CallToolResult {
    let task = match ctx
        .create_message_as_task(sampling_params("hello"), None)
        .await
    {
        Ok(t) => t,
        Err(e) => return json_result(&json!({"error": code(&e), "data": e.data})),
    };
    match task.wait().await {
        Ok(r) => json_result(&json!({"model": r.model, "content": r.content})),
        Err(e) => json_result(&json!({"error": code(&e), "message": e.message})),
    }
}

/// `block-result`: `tasks/result` right after creation, while the client's handler (50 ms)
/// still runs; the status seen before and after.
async fn block_result_tool(ctx: RequestContext) -> CallToolResult {
    let task = ctx.elicit_as_task(form("slow"), None).await.unwrap();
    let before = task.status().await.unwrap().status;
    let started = tokio::time::Instant::now();
    let r = task.result().await.unwrap();
    let waited = started.elapsed().as_millis();
    let after = task.status().await.unwrap().status;
    json_result(&json!({
        "before": before, "action": r.action, "waited_ms": waited, "after": after,
    }))
}

/// `fail`: an elicitation task whose client handler fails.
async fn fail_tool(ctx: RequestContext) -> CallToolResult {
    let task = ctx.elicit_as_task(form("fail"), None).await.unwrap();
    let e = task.wait().await.unwrap_err();
    let last = task.last();
    json_result(&json!({
        "error": code(&e), "message": e.message, "status": last.status,
        "status_message": last.status_message,
    }))
}

/// `cancel`: a blocking elicitation task, cancelled; then its result and a second cancel.
async fn cancel_tool(ctx: RequestContext) -> CallToolResult {
    let task = ctx.elicit_as_task(form("block"), None).await.unwrap();
    // Let the client's handler start (the paused clock advances once all else is idle).
    tokio::time::sleep(Duration::from_millis(10)).await;
    let cancelled = task.cancel().await.unwrap();
    let result = task.result().await.unwrap_err();
    let again = task.cancel().await.unwrap_err();
    let got = task.status().await.unwrap();
    json_result(&json!({
        "cancelled": cancelled.status,
        "result": code(&result),
        "again": code(&again),
        "again_message": again.message,
        "status": got.status,
    }))
}

/// `list`: five quick tasks, then every page of `tasks/list`, then a forged cursor.
async fn list_tool(ctx: RequestContext) -> CallToolResult {
    let mut created = Vec::new();
    for _ in 0..5 {
        created.push(ctx.elicit_as_task(form("quick"), None).await.unwrap().id());
    }
    let mut listed = Vec::new();
    let mut pages = 0;
    let mut cursor = None;
    loop {
        let page = ctx.list_client_tasks(cursor).await.unwrap();
        pages += 1;
        listed.extend(page.tasks.into_iter().map(|t: Task| t.task_id));
        match page.next_cursor {
            Some(c) => cursor = Some(c),
            None => break,
        }
    }
    let forged = ctx
        .list_client_tasks(Some("not-a-cursor".into()))
        .await
        .unwrap_err();
    json_result(&json!({
        "created": created, "listed": listed, "pages": pages, "forged": code(&forged),
    }))
}

/// `retain`: five quick tasks, each finished before the next; then what is listed,
/// whether the first can still be read, and whether one more task fits.
async fn retain_tool(ctx: RequestContext) -> CallToolResult {
    let mut tasks = Vec::new();
    for _ in 0..5 {
        let task = ctx.elicit_as_task(form("quick"), None).await.unwrap();
        task.wait().await.unwrap();
        tasks.push(task);
    }
    let created: Vec<String> = tasks.iter().map(|t| t.id()).collect();
    let listed: Vec<String> = ctx
        .list_client_tasks(None)
        .await
        .unwrap()
        .tasks
        .into_iter()
        .map(|t| t.task_id)
        .collect();
    let first = tasks[0].status().await.unwrap_err();
    let more = ctx.elicit_as_task(form("quick"), None).await.is_ok();
    json_result(&json!({
        "created": created, "listed": listed, "first": code(&first), "more": more,
    }))
}

/// `cap`: blocking tasks up to the client's bound and one more; a slot frees on cancel.
async fn cap_tool(ctx: RequestContext) -> CallToolResult {
    let first = ctx.elicit_as_task(form("block"), None).await.unwrap();
    let _second = ctx.elicit_as_task(form("block"), None).await.unwrap();
    let over = ctx.elicit_as_task(form("block"), None).await.unwrap_err();
    first.cancel().await.unwrap();
    let after = ctx.elicit_as_task(form("block"), None).await;
    json_result(&json!({
        "over": code(&over), "message": over.message, "after_cancel": after.is_ok(),
    }))
}

/// `ttl`: a blocking task kept 50 ms, looked at after 200 ms; and a long ttl, capped.
async fn ttl_tool(ctx: RequestContext) -> CallToolResult {
    let short = ctx
        .elicit_as_task(form("block"), Some(Duration::from_millis(50)))
        .await
        .unwrap();
    let granted = short.last().ttl;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let gone = short.status().await.unwrap_err();
    let long = ctx
        .elicit_as_task(form("quick"), Some(Duration::from_secs(24 * 3600)))
        .await
        .unwrap();
    json_result(&json!({
        "granted": granted, "gone": code(&gone), "message": gone.message,
        "capped": long.last().ttl,
    }))
}

fn server() -> McpServer {
    McpServer::builder("hosting-server", "1.0.0")
        .tool(ToolSpec::new("elicit"), elicit_tool)
        .tool(ToolSpec::new("sample"), sample_tool)
        .tool(ToolSpec::new("cancel"), cancel_tool)
        .tool(ToolSpec::new("fail"), fail_tool)
        .tool(ToolSpec::new("block-result"), block_result_tool)
        .tool(ToolSpec::new("retain"), retain_tool)
        .tool(ToolSpec::new("list"), list_tool)
        .tool(ToolSpec::new("cap"), cap_tool)
        .tool(ToolSpec::new("ttl"), ttl_tool)
        .tool(ToolSpec::new("caps"), |ctx: RequestContext| async move {
            json_result(&serde_json::to_value(ctx.connection().client_capabilities()).unwrap())
        })
        .build()
        .unwrap()
}

/// Counts the client handlers that ran and those dropped before their end.
#[derive(Default)]
struct Seen {
    started: AtomicUsize,
    dropped: AtomicUsize,
}

struct DropGuard(Arc<Seen>);

impl Drop for DropGuard {
    fn drop(&mut self) {
        self.0.dropped.fetch_add(1, Ordering::SeqCst);
    }
}

/// A client with sampling and elicitation handlers: `quick` answers at once, `block` never
/// does (until dropped).
fn builder(era: Era, seen: &Arc<Seen>, tasks: TaskConfig) -> ClientBuilder {
    let s = seen.clone();
    Client::builder()
        .lifecycle(match era {
            Era::Modern => Lifecycle::Modern,
            _ => Lifecycle::Handshake,
        })
        .tasks(tasks)
        .on_elicitation(move |p| {
            let s = s.clone();
            async move {
                s.started.fetch_add(1, Ordering::SeqCst);
                if p.message() == "slow" {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                if p.message() == "fail" {
                    return Err(ErrorObject::invalid_params("the user's form broke"));
                }
                if p.message() == "block" {
                    let _guard = DropGuard(s);
                    std::future::pending::<()>().await;
                }
                Ok(
                    ElicitResult::new(ElicitAction::Accept).with_content(BTreeMap::from([(
                        "confirm".into(),
                        ElicitValue::Boolean(true),
                    )])),
                )
            }
        })
        .on_sampling(|p: CreateMessageRequestParams| async move {
            let text = serde_json::to_value(&p.messages).unwrap().to_string();
            Ok(CreateMessageResult::new(
                Role::Assistant,
                SamplingContent::text(format!("sampled {}", text.len())),
                "test-model",
            ))
        })
}

fn hosting() -> TaskConfig {
    hosting_at_most(2)
}

fn hosting_at_most(max_active: usize) -> TaskConfig {
    TaskConfig::new().hosted(
        HostedTaskConfig::new()
            .poll_interval(Duration::from_millis(20))
            .max_active(max_active)
            .list_page_size(2)
            .max_ttl(Duration::from_secs(1)),
    )
}

async fn in_process(era: Era, seen: &Arc<Seen>, tasks: TaskConfig) -> Client {
    let s = server();
    builder(era, seen, tasks)
        .connect(Connected::new(Arc::new(s.server().in_process(era))))
        .await
        .unwrap()
}

async fn call(client: &Client, tool: &str) -> Value {
    let r = client.call_tool(tool, json!({})).await.unwrap();
    serde_json::from_str(&first_text(&r)).unwrap()
}

/// Capabilities › Client Capabilities: with hosting on, the client declares `tasks.list`,
/// `tasks.cancel` and `tasks.requests.{sampling.createMessage, elicitation.create}`, and the
/// server sees them; at 2026-07-28 nothing client-hosted is declared (the extension has no
/// client-hosted tasks); without hosting only the requestor's empty `tasks` is declared.
#[tokio::test(start_paused = true)]
async fn capability_declared_in_the_handshake_era_only() {
    within(async {
        let seen = Arc::new(Seen::default());
        let client = in_process(Era::Handshake, &seen, hosting()).await;
        let expected = json!({
            "list": {}, "cancel": {},
            "requests": {"sampling": {"createMessage": {}}, "elicitation": {"create": {}}}
        });
        let declared = serde_json::to_value(client.capabilities()).unwrap();
        assert_eq!(declared["tasks"], expected);
        assert_eq!(call(&client, "caps").await["tasks"], expected);

        let modern = in_process(Era::Modern, &seen, hosting()).await;
        let declared = serde_json::to_value(modern.capabilities()).unwrap();
        assert!(declared.get("tasks").is_none(), "{declared}");

        let plain = in_process(Era::Handshake, &seen, TaskConfig::new()).await;
        let declared = serde_json::to_value(plain.capabilities()).unwrap();
        assert_eq!(declared["tasks"], json!({}));
    })
    .await;
}

/// Creating Tasks; Getting Tasks; Retrieving Task Results: an McpServer tool sends
/// `elicitation/create` and `sampling/createMessage` as tasks; the client answers a
/// `CreateTaskResult` (status `working`), runs its handler, and the server polls `tasks/get`
/// to `completed` and reads the handler's answer with `tasks/result` (in process).
#[tokio::test(start_paused = true)]
async fn task_augmented_elicitation_and_sampling_in_process() {
    within(async {
        let seen = Arc::new(Seen::default());
        let client = in_process(Era::Handshake, &seen, hosting()).await;
        let r = call(&client, "elicit").await;
        assert_eq!(r["created"], "working", "{r}");
        assert_eq!(r["ttl"], 1000, "the default ttl is capped by max_ttl: {r}");
        assert_eq!(r["action"], "accept", "{r}");
        assert_eq!(r["content"], json!({"confirm": true}), "{r}");
        assert_eq!(r["final"], "completed", "{r}");
        let r = call(&client, "sample").await;
        assert_eq!(r["model"], "test-model", "{r}");
        assert!(
            r["content"]["text"]
                .as_str()
                .unwrap()
                .starts_with("sampled"),
            "{r}"
        );
    })
    .await;
}

/// The same over Streamable HTTP (handshake era): the task requests travel on the tool
/// call's SSE stream and the client answers them with POSTs.
#[tokio::test]
async fn task_augmented_elicitation_and_sampling_over_http() {
    within(async {
        let s = server();
        let srv = start_with(
            s.server().clone(),
            ServerConfig::default(),
            Arc::new(Flags::default()),
        )
        .await;
        let seen = Arc::new(Seen::default());
        let client = builder(Era::Handshake, &seen, hosting())
            .connect(HttpTransport::new(srv.url()).unwrap())
            .await
            .unwrap();
        let r = call(&client, "elicit").await;
        assert_eq!(r["action"], "accept", "{r}");
        assert_eq!(r["final"], "completed", "{r}");
        let r = call(&client, "sample").await;
        assert_eq!(r["model"], "test-model", "{r}");
        let r = call(&client, "cancel").await;
        assert_eq!(r["cancelled"], "cancelled", "{r}");
        client.shutdown().await;
    })
    .await;
}

/// Result Retrieval (a `tasks/result` for a non-terminal task MUST block until it ends):
/// asked while the client's handler still runs, `tasks/result` answers once it has finished.
#[tokio::test(start_paused = true)]
async fn tasks_result_blocks_until_the_task_ends() {
    within(async {
        let seen = Arc::new(Seen::default());
        let client = in_process(Era::Handshake, &seen, hosting()).await;
        let r = call(&client, "block-result").await;
        assert_eq!(r["before"], "working", "{r}");
        assert_eq!(r["action"], "accept", "{r}");
        assert!(r["waited_ms"].as_u64().unwrap() >= 40, "{r}");
        assert_eq!(r["after"], "completed", "{r}");
    })
    .await;
}

/// Task Execution Errors; Result Retrieval (a JSON-RPC error of the underlying request is
/// what `tasks/result` returns): a failing client handler moves the task to `failed` with a
/// status message, and `tasks/result` answers the handler's error.
#[tokio::test(start_paused = true)]
async fn a_failing_handler_fails_the_task_with_its_error() {
    within(async {
        let seen = Arc::new(Seen::default());
        let client = in_process(Era::Handshake, &seen, hosting()).await;
        let r = call(&client, "fail").await;
        assert_eq!(r["error"], -32602, "{r}");
        assert_eq!(r["message"], "the user's form broke", "{r}");
        assert_eq!(r["status"], "failed", "{r}");
        assert_eq!(r["status_message"], "the user's form broke", "{r}");
    })
    .await;
}

/// Cancelling Tasks; Task Cancellation: `tasks/cancel` moves the task to `cancelled` and
/// drops the client's handler; `tasks/result` then answers the cancellation error; a second
/// cancel of the now terminal task is -32602.
#[tokio::test(start_paused = true)]
async fn cancel_reaches_the_client_handler() {
    within(async {
        let seen = Arc::new(Seen::default());
        let client = in_process(Era::Handshake, &seen, hosting()).await;
        let r = call(&client, "cancel").await;
        assert_eq!(r["cancelled"], "cancelled", "{r}");
        assert_eq!(r["status"], "cancelled", "{r}");
        assert_eq!(r["result"], -32800, "{r}");
        assert_eq!(r["again"], -32602, "{r}");
        assert!(
            r["again_message"].as_str().unwrap().contains("cancelled"),
            "{r}"
        );
        while seen.dropped.load(Ordering::SeqCst) == 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        assert_eq!(seen.started.load(Ordering::SeqCst), 1);
        assert_eq!(seen.dropped.load(Ordering::SeqCst), 1);
    })
    .await;
}

/// Listing Tasks: five tasks in pages of two (3 pages, `nextCursor` until the last), in
/// creation order; an unknown cursor is -32602.
#[tokio::test(start_paused = true)]
async fn list_is_paginated() {
    within(async {
        let seen = Arc::new(Seen::default());
        let client = in_process(Era::Handshake, &seen, hosting_at_most(8)).await;
        let r = call(&client, "list").await;
        assert_eq!(r["pages"], 3, "{r}");
        assert_eq!(r["listed"], r["created"], "{r}");
        assert_eq!(r["forged"], -32602, "{r}");
        let ids = r["created"].as_array().unwrap();
        assert!(ids.iter().all(|id| id.as_str().unwrap().len() == 32), "{r}");
    })
    .await;
}

/// Security Considerations › Resource Management (concurrent tasks): with `max_active(2)` a
/// third unfinished task is refused with -32600; cancelling one frees its slot.
#[tokio::test(start_paused = true)]
async fn concurrency_cap_refuses_one_more() {
    within(async {
        let seen = Arc::new(Seen::default());
        let client = in_process(Era::Handshake, &seen, hosting()).await;
        let r = call(&client, "cap").await;
        assert_eq!(r["over"], -32600, "{r}");
        assert!(r["message"].as_str().unwrap().contains("at most 2"), "{r}");
        assert_eq!(r["after_cancel"], true, "{r}");
    })
    .await;
}

/// Security Considerations › Resource Management (retention): with `max_retained(3)` five
/// finished tasks leave the newest three, in order (the oldest were evicted before their
/// TTL); a new task still fits (it evicts another finished one).
#[tokio::test(start_paused = true)]
async fn retention_bound_evicts_the_oldest_finished_tasks() {
    within(async {
        let seen = Arc::new(Seen::default());
        let tasks = TaskConfig::new().hosted(
            HostedTaskConfig::new()
                .poll_interval(Duration::from_millis(20))
                .max_retained(3),
        );
        let client = in_process(Era::Handshake, &seen, tasks).await;
        let r = call(&client, "retain").await;
        let created = r["created"].as_array().unwrap();
        assert_eq!(r["listed"], json!(created[2..]), "{r}");
        assert_eq!(r["first"], -32602, "{r}");
        assert_eq!(r["more"], true, "{r}");
    })
    .await;
}

/// TTL and Resource Management: a task is kept for the ttl the server asked for (50 ms);
/// after it the client forgets it (`tasks/get` -32602) and drops its still-running handler;
/// a ttl above the client's `max_ttl` (1 s) is granted as 1 s.
#[tokio::test(start_paused = true)]
async fn ttl_expiry_and_cap() {
    within(async {
        let seen = Arc::new(Seen::default());
        let client = in_process(Era::Handshake, &seen, hosting()).await;
        let r = call(&client, "ttl").await;
        assert_eq!(r["granted"], 50, "{r}");
        assert_eq!(r["gone"], -32602, "{r}");
        assert!(r["message"].as_str().unwrap().contains("not found"), "{r}");
        assert_eq!(r["capped"], 1000, "{r}");
        assert_eq!(seen.dropped.load(Ordering::SeqCst), 1);
    })
    .await;
}

/// Capability Negotiation (requestors SHOULD only augment requests the receiver declared):
/// a client without hosting makes `elicit_as_task` / `create_message_as_task` fail with
/// -32021 naming `tasks.requests.*` (nothing is sent); at 2026-07-28 they are -32600.
#[tokio::test(start_paused = true)]
async fn undeclared_is_refused_clearly() {
    within(async {
        let seen = Arc::new(Seen::default());
        let client = in_process(Era::Handshake, &seen, TaskConfig::new()).await;
        let r = call(&client, "elicit").await;
        assert_eq!(r["error"], -32021, "{r}");
        assert_eq!(
            r["data"]["requiredCapabilities"]["tasks"]["requests"]["elicitation"],
            json!({"create": {}}),
            "{r}"
        );
        let r = call(&client, "sample").await;
        assert_eq!(r["error"], -32021, "{r}");
        assert_eq!(
            r["data"]["requiredCapabilities"]["tasks"]["requests"]["sampling"],
            json!({"createMessage": {}}),
            "{r}"
        );
        assert_eq!(seen.started.load(Ordering::SeqCst), 0);

        let modern = in_process(Era::Modern, &seen, hosting()).await;
        let r = call(&modern, "elicit").await;
        assert_eq!(r["error"], -32600, "{r}");
    })
    .await;
}

/// Task Support and Handling (receivers that do not declare the task capability for a
/// request type MUST process it normally, ignoring the task metadata); Task Status
/// Notification: a hosting client sends `notifications/tasks/status` when its task ends;
/// Related Task Metadata: its `tasks/result` answer carries the related-task key.
/// (A low-level server: it sends the raw requests and sees the notifications.)
#[tokio::test(start_paused = true)]
async fn undeclared_task_metadata_is_ignored_and_status_is_notified() {
    within(async {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Value>();
        let server = Server::builder("raw", "1.0.0")
            .on_request(
                "test/raw-elicit",
                |ctx: RequestContext, _p: RequestParams| async move {
                    let mut params = serde_json::to_value(form("quick")).unwrap();
                    params["task"] = json!({"ttl": 1000});
                    let payload = ferromcp_types::jsonrpc::Payload::from_serialize(&params)
                        .map_err(HandlerError::internal)?;
                    let answer = ctx
                        .peer()
                        .send_request(
                            "elicitation/create",
                            Some(payload),
                            ferromcp_dispatch::CallOptions::new(),
                        )
                        .await?;
                    Ok::<Value, HandlerError>(answer.into_value().unwrap())
                },
            )
            .on_request(
                "test/raw-result",
                |ctx: RequestContext, p: Value| async move {
                    let payload = ferromcp_types::jsonrpc::Payload::from_serialize(&p)
                        .map_err(HandlerError::internal)?;
                    let answer = ctx
                        .peer()
                        .send_request(
                            "tasks/result",
                            Some(payload),
                            ferromcp_dispatch::CallOptions::new(),
                        )
                        .await?;
                    Ok::<Value, HandlerError>(answer.into_value().unwrap())
                },
            )
            .on_request(
                "test/sample-task",
                |ctx: RequestContext, _p: RequestParams| async move {
                    let task = ctx
                        .create_message_as_task(sampling_params("hi"), None)
                        .await?;
                    let id = task.id();
                    let r = task.wait().await?;
                    Ok::<Value, HandlerError>(json!({"id": id, "model": r.model}))
                },
            )
            .on_notification_method(
                "notifications/tasks/status",
                move |_ctx: RequestContext, p: Value| {
                    let tx = tx.clone();
                    async move {
                        let _ = tx.send(p);
                        Ok(())
                    }
                },
            )
            .build()
            .unwrap();
        let connect = |tasks: TaskConfig| {
            let server = server.clone();
            let seen = Arc::new(Seen::default());
            async move {
                let client_end = common::serve(server);
                builder(Era::Handshake, &seen, tasks)
                    .connect_stream(client_end.source, client_end.sink)
                    .await
                    .unwrap()
            }
        };
        let plain = connect(TaskConfig::new()).await;
        let answer = plain
            .send_request("test/raw-elicit", json!({}), RequestOptions::new())
            .await
            .unwrap();
        assert_eq!(answer["action"], "accept", "{answer}");
        assert!(answer.get("task").is_none(), "{answer}");

        let hosting_client = connect(hosting()).await;
        let answer = hosting_client
            .send_request("test/raw-elicit", json!({}), RequestOptions::new())
            .await
            .unwrap();
        assert_eq!(answer["task"]["status"], "working", "{answer}");
        // Related Task Metadata: `tasks/result` carries the related-task key.
        let task_id = answer["task"]["taskId"].clone();
        let result = hosting_client
            .send_request(
                "test/raw-result",
                json!({"taskId": task_id}),
                RequestOptions::new(),
            )
            .await
            .unwrap();
        assert_eq!(result["action"], "accept", "{result}");
        assert_eq!(
            result["_meta"]["io.modelcontextprotocol/related-task"]["taskId"], task_id,
            "{result}"
        );
        let answer = hosting_client
            .send_request("test/sample-task", json!({}), RequestOptions::new())
            .await
            .unwrap();
        assert_eq!(answer["model"], "test-model", "{answer}");
        let id = answer["id"].as_str().unwrap().to_owned();
        loop {
            let n = rx.recv().await.unwrap();
            if n["taskId"] == id.as_str() {
                assert_eq!(n["status"], json!(TaskStatus::Completed), "{n}");
                break;
            }
        }
    })
    .await;
}
