//! Tasks over Streamable HTTP, both eras ("Utilities › Tasks › Security": tasks are bound to
//! the authorization context that created them): another principal (2026-07-28, the
//! principal an authentication layer records) or another session (2025-11-25) can neither
//! see, read, answer nor cancel a task; and at 2025-11-25 a task's input request travels on
//! the stream of the pending `tasks/result`, with the related-task `_meta`.
#![allow(clippy::unwrap_used, clippy::panic)]

mod http_support;

use std::net::SocketAddr;
use std::time::Duration;

use axum::Router;
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use ferromcp_http_server::{HttpConfig, McpHttpService};
use ferromcp_server::CallerId;
use ferromcp_server::mcp_server::{Args, ToolError, ToolSpec};
use ferromcp_server::{McpServer, RequestContext};
use ferromcp_types::mcp::{ElicitationSchema, TaskSupport};
use http_support::{Sse, header, json_body, post};
use serde_json::{Value, json};

async fn within<F: std::future::Future>(f: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(30), f)
        .await
        .expect("timed out")
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Secs {
    /// Seconds to work.
    seconds: u64,
}

fn server() -> McpServer {
    McpServer::builder("tasks-http", "1")
        .tool(
            ToolSpec::new("work").task_support(TaskSupport::Optional),
            |Args(a): Args<Secs>| async move {
                tokio::time::sleep(Duration::from_secs(a.seconds)).await;
                format!("worked {}s", a.seconds)
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

/// A stand-in for an authentication layer: the `x-user` header becomes the principal.
async fn principal(mut req: Request, next: Next) -> Response {
    if let Some(user) = req.headers().get("x-user").and_then(|v| v.to_str().ok()) {
        let p = CallerId(user.to_owned());
        req.extensions_mut().insert(p);
    }
    next.run(req).await
}

async fn mounted(server: &McpServer) -> SocketAddr {
    let svc = McpHttpService::new(server.server().clone(), HttpConfig::default());
    let app = Router::new()
        .route_service("/mcp", svc)
        .layer(axum::middleware::from_fn(principal));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    addr
}

/// The JSON-RPC response of a POST (a JSON body, or the last event of an SSE body).
async fn answer(resp: http::Response<hyper::body::Incoming>) -> Value {
    if header(&resp, "content-type").as_deref() == Some("text/event-stream") {
        Sse::new(resp).rest().await.pop().unwrap()
    } else {
        json_body(resp).await
    }
}

/// A 2026-07-28 request as `user`, declaring the tasks extension.
async fn modern(addr: SocketAddr, user: &str, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities":
            {"extensions": {"io.modelcontextprotocol/tasks": {}}},
    });
    let name = params
        .get("name")
        .or_else(|| params.get("taskId"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let mut headers = vec![
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", method),
        ("x-user", user),
    ];
    if let Some(name) = &name {
        headers.push(("mcp-name", name.as_str()));
    }
    answer(post(addr, &headers, &body).await).await
}

/// SEP-2663 / 2025-11-25 "Security › Task isolation": a task created by alice is invisible
/// to bob (-32602, as for an unknown task) for tasks/get, tasks/update and tasks/cancel, and
/// bob's cancel does not touch it.
#[tokio::test]
async fn another_principal_cannot_see_answer_or_cancel_a_task() {
    within(async {
        let addr = mounted(&server()).await;
        let created = modern(
            addr,
            "alice",
            "tools/call",
            json!({"name": "work", "arguments": {"seconds": 30}}),
        )
        .await;
        let id = created["result"]["taskId"].as_str().unwrap().to_owned();
        for (method, params) in [
            ("tasks/get", json!({"taskId": id})),
            ("tasks/cancel", json!({"taskId": id})),
            ("tasks/update", json!({"taskId": id, "inputResponses": {}})),
        ] {
            let r = modern(addr, "bob", method, params).await;
            assert_eq!(r["error"]["code"], -32602, "{method}: {r}");
        }
        let mine = modern(addr, "alice", "tasks/get", json!({"taskId": id})).await;
        assert_eq!(mine["result"]["status"], "working");
        let ack = modern(addr, "alice", "tasks/cancel", json!({"taskId": id})).await;
        assert_eq!(ack["result"]["resultType"], "complete");
        let gone = modern(addr, "alice", "tasks/get", json!({"taskId": id})).await;
        assert_eq!(gone["result"]["status"], "cancelled");
    })
    .await;
}

/// A 2025-11-25 session that declares elicitation; its id.
async fn session(addr: SocketAddr) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}, "tasks": {}},
        "clientInfo": {"name": "t", "version": "1"}}});
    let resp = post(addr, &[], &init).await;
    let sid = header(&resp, "mcp-session-id").unwrap();
    answer(resp).await;
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let resp = post(addr, &handshake_headers(&sid), &note).await;
    assert_eq!(resp.status(), 202);
    sid
}

fn handshake_headers(sid: &str) -> [(&'static str, &str); 2] {
    [
        ("mcp-session-id", sid),
        ("mcp-protocol-version", "2025-11-25"),
    ]
}

async fn handshake(addr: SocketAddr, sid: &str, id: i64, method: &str, params: Value) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    answer(post(addr, &handshake_headers(sid), &body).await).await
}

/// 2025-11-25 "Security › Task isolation" without authentication: the session is the
/// context; another session's tasks/get, tasks/result and tasks/cancel are -32602 and its
/// tasks/list is empty.
#[tokio::test]
async fn another_session_cannot_see_list_or_cancel_a_task() {
    within(async {
        let addr = mounted(&server()).await;
        let (a, b) = (session(addr).await, session(addr).await);
        let created = handshake(
            addr,
            &a,
            2,
            "tools/call",
            json!({"name": "work", "arguments": {"seconds": 30}, "task": {}}),
        )
        .await;
        let id = created["result"]["task"]["taskId"]
            .as_str()
            .unwrap()
            .to_owned();
        for method in ["tasks/get", "tasks/result", "tasks/cancel"] {
            let r = handshake(addr, &b, 3, method, json!({"taskId": id})).await;
            assert_eq!(r["error"]["code"], -32602, "{method}: {r}");
        }
        let listed = handshake(addr, &b, 4, "tasks/list", json!({})).await;
        assert_eq!(listed["result"]["tasks"], json!([]));
        let listed = handshake(addr, &a, 5, "tasks/list", json!({})).await;
        assert_eq!(listed["result"]["tasks"][0]["taskId"], json!(id));
        let cancelled = handshake(addr, &a, 6, "tasks/cancel", json!({"taskId": id})).await;
        assert_eq!(cancelled["result"]["status"], "cancelled");
    })
    .await;
}

/// 2025-11-25 "Tasks › Input required": the task's elicitation goes out on the SSE stream of
/// the pending tasks/result with the related-task `_meta`; once answered, the same stream
/// ends with the tool's result.
#[tokio::test]
async fn input_request_travels_on_the_tasks_result_stream() {
    within(async {
        let addr = mounted(&server()).await;
        let sid = session(addr).await;
        let created = handshake(
            addr,
            &sid,
            2,
            "tools/call",
            json!({"name": "ask", "arguments": {}, "task": {}}),
        )
        .await;
        let id = created["result"]["task"]["taskId"]
            .as_str()
            .unwrap()
            .to_owned();
        let body = json!({"jsonrpc": "2.0", "id": 3, "method": "tasks/result",
                          "params": {"taskId": id}});
        let resp = post(addr, &handshake_headers(&sid), &body).await;
        let mut stream = Sse::new(resp);
        let asked = stream.next_json().await.unwrap();
        assert_eq!(asked["method"], "elicitation/create");
        assert_eq!(
            asked["params"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
            json!(id)
        );
        let status = handshake(addr, &sid, 4, "tasks/get", json!({"taskId": id})).await;
        assert_eq!(status["result"]["status"], "input_required");
        let reply = json!({"jsonrpc": "2.0", "id": asked["id"],
                           "result": {"action": "accept", "content": {"name": "Ada"}}});
        let resp = post(addr, &handshake_headers(&sid), &reply).await;
        assert_eq!(resp.status(), 202);
        let result = stream.next_json().await.unwrap();
        assert_eq!(result["id"], 3);
        assert_eq!(result["result"]["content"][0]["text"], "hello \"Ada\"");
        assert_eq!(
            result["result"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
            json!(id)
        );
    })
    .await;
}

/// TL07: anonymous callers (no principal, stateless HTTP, so no session) share no identity:
/// `tasks/list` shows none of them anybody's tasks, while each reaches its own task by its id
/// (128 random bits) with tasks/get and tasks/result.
#[tokio::test]
async fn tl07_anonymous_callers_do_not_see_each_others_tasks() {
    within(async {
        let srv = ferromcp_http_server::HttpServer::bind(
            "127.0.0.1:0",
            server().server().clone(),
            HttpConfig::default().stateless(true).json_response(true),
        )
        .await
        .unwrap();
        let addr = srv.local_addr();
        tokio::spawn(srv.run());
        let h = [("mcp-protocol-version", "2025-11-25")];
        let rpc = |id: i64, method: &str, params: Value| {
            json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
        };
        let created = json_body(
            post(
                addr,
                &h,
                &rpc(
                    1,
                    "tools/call",
                    json!({"name": "work", "arguments": {"seconds": 0}, "task": {}}),
                ),
            )
            .await,
        )
        .await;
        let id = created["result"]["task"]["taskId"]
            .as_str()
            .unwrap_or_else(|| panic!("{created}"))
            .to_owned();
        assert_eq!(id.len(), 32);
        let listed = json_body(post(addr, &h, &rpc(2, "tasks/list", json!({}))).await).await;
        assert_eq!(listed["result"]["tasks"], json!([]), "{listed}");
        let result = json_body(
            post(addr, &h, &rpc(3, "tasks/result", json!({"taskId": id}))).await,
        )
        .await;
        assert_eq!(
            result["result"]["content"][0]["text"],
            "worked 0s",
            "{result}"
        );
        let got = json_body(post(addr, &h, &rpc(4, "tasks/get", json!({"taskId": id}))).await).await;
        assert_eq!(got["result"]["status"], "completed", "{got}");
    })
    .await;
}
