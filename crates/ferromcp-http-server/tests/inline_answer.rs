//! Issue 19, point 2: a 2026-07-28 request whose handler finishes in its first poll is
//! answered inline, on the task serving the HTTP request (no task spawned, one JSON write);
//! a handler that waits still runs on a task of its own and is answered when it finishes.
//! The error boundary holds on the inline path too (a panic is -32603).
#![allow(clippy::unwrap_used, clippy::panic)]

use std::time::Duration;

use ferromcp_http_server::{HttpConfig, McpHttpService};
use ferromcp_server::Server;
use ferromcp_types::mcp::methods::{CallTool, ListTools};
use ferromcp_types::mcp::{
    CallToolRequestParams, CallToolResult, JsonObject, ListToolsResult, PaginatedRequestParams,
    Tool,
};
use http::Request;
use http_body_util::{BodyExt, Full};
use serde_json::{Value, json};

async fn within<F: std::future::Future>(f: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(30), f)
        .await
        .unwrap()
}

fn object(v: Value) -> JsonObject {
    match v {
        Value::Object(m) => m,
        _ => JsonObject::new(),
    }
}

/// Tools: `task` answers the id of the tokio task its handler runs on at once; `later`
/// sleeps 20 ms first; `boom` panics.
fn server() -> Server {
    let tools = vec![
        Tool::new("task", object(json!({"type":"object"}))),
        Tool::new("later", object(json!({"type":"object"}))),
        Tool::new("boom", object(json!({"type":"object"}))),
    ];
    Server::builder("inline", "1.0.0")
        .on::<ListTools, _, _, _>(move |_ctx, _p: PaginatedRequestParams| {
            let tools = tools.clone();
            async move { Ok(ListToolsResult::new(tools)) }
        })
        .on::<CallTool, _, _, _>(move |_ctx, p: CallToolRequestParams| async move {
            if p.name == "later" {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            if p.name == "boom" {
                panic!("the boom tool panics on purpose");
            }
            let id = tokio::task::try_id().map(|i| i.to_string());
            Ok(CallToolResult::text(id.unwrap_or_default()))
        })
        .build()
        .unwrap()
}

fn modern_request(tool: &str) -> Request<Full<bytes::Bytes>> {
    let body = json!({"jsonrpc":"2.0","id":1,"method":"tools/call",
        "params":{"name":tool,"arguments":{},"_meta":{
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"}}}});
    Request::post("/mcp")
        .header("host", "localhost")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", tool)
        .body(Full::new(bytes::Bytes::from(body.to_string())))
        .unwrap()
}

/// Serves `tool` on a task of its own; answers (the task's id, the response as JSON).
async fn call_on_a_task(service: McpHttpService, tool: &'static str) -> (String, u16, Value) {
    tokio::spawn(async move {
        let me = tokio::task::id().to_string();
        let resp = service.handle(modern_request(tool)).await;
        let status = resp.status().as_u16();
        let ctype = resp.headers()["content-type"].to_str().unwrap().to_owned();
        assert!(ctype.starts_with("application/json"), "{ctype}");
        let body = resp.into_body().collect().await.unwrap().to_bytes();
        (me, status, serde_json::from_slice(&body).unwrap())
    })
    .await
    .unwrap()
}

/// A handler that finishes in its first poll runs on the task serving the request: it was
/// polled inline, not spawned (before issue 19 point 2, every request had a task of its own).
#[tokio::test]
async fn first_poll_answer_is_inline() {
    within(async {
        let service = McpHttpService::new(server(), HttpConfig::default());
        let (me, status, v) = call_on_a_task(service, "task").await;
        assert_eq!(status, 200);
        assert_eq!(v["result"]["content"][0]["text"], me.as_str(), "{v}");
    })
    .await;
}

/// A handler that waits is moved onto a task of its own and still answered (plain JSON).
#[tokio::test]
async fn pending_handler_runs_on_its_own_task() {
    within(async {
        let service = McpHttpService::new(server(), HttpConfig::default());
        let (me, status, v) = call_on_a_task(service, "later").await;
        assert_eq!(status, 200);
        let text = v["result"]["content"][0]["text"].as_str().unwrap();
        assert!(!text.is_empty(), "{v}");
        assert_ne!(text, me, "{v}");
    })
    .await;
}

/// The error boundary on the inline path: a handler that panics in its first poll is -32603
/// and the service serves the next request.
#[tokio::test]
async fn inline_panic_is_32603() {
    within(async {
        let service = McpHttpService::new(server(), HttpConfig::default());
        let (_, _, v) = call_on_a_task(service.clone(), "boom").await;
        assert_eq!(v["error"]["code"], -32603, "{v}");
        let (me, status, v) = call_on_a_task(service, "task").await;
        assert_eq!(status, 200);
        assert_eq!(v["result"]["content"][0]["text"], me.as_str(), "{v}");
    })
    .await;
}
