//! Multi-round requests over Streamable HTTP at 2026-07-28 ("Base Protocol › Patterns ›
//! Multi-round requests", server requirements: request state integrity): the sealed
//! `requestState` is bound to the authenticated principal an authentication layer records.
#![allow(clippy::unwrap_used, clippy::panic)]

mod elicitation_support;

use std::net::SocketAddr;
use std::time::Duration;

use axum::Router;
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use elicitation_support::server;
use ferromcp_http_server::{HttpConfig, McpHttpService};
use ferromcp_server::CallerId;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::net::TcpStream;

/// A stand-in for an authentication layer: the `x-user` header becomes the principal.
async fn principal(mut req: Request, next: Next) -> Response {
    if let Some(user) = req.headers().get("x-user").and_then(|v| v.to_str().ok()) {
        let p = CallerId(user.to_owned());
        req.extensions_mut().insert(p);
    }
    next.run(req).await
}

async fn mounted() -> SocketAddr {
    let svc = McpHttpService::new(server().server().clone(), HttpConfig::default());
    let app = Router::new()
        .route_service("/mcp", svc)
        .layer(axum::middleware::from_fn(principal));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    addr
}

/// POSTs a 2026-07-28 `tools/call` of `hello` as `user`; the JSON-RPC response (read from a
/// JSON body or the last event of an SSE body).
async fn call_hello(addr: SocketAddr, user: &str, extra: Value) -> Value {
    let mut params = json!({"name": "hello", "arguments": {}, "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
    }});
    if let Value::Object(m) = extra {
        for (k, v) in m {
            params[k] = v;
        }
    }
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params});
    let stream = TcpStream::connect(addr).await.unwrap();
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(conn);
    let req = hyper::Request::post("/mcp")
        .header("host", addr.to_string())
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "hello")
        .header("x-user", user)
        .body(Full::new(bytes::Bytes::from(body.to_string())))
        .unwrap();
    let resp = sender.send_request(req).await.unwrap();
    let bytes = resp.into_body().collect().await.unwrap().to_bytes();
    let text = String::from_utf8(bytes.to_vec()).unwrap();
    let json = text
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(str::trim)
        .rfind(|d| !d.is_empty())
        .unwrap_or(&text);
    serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// A state issued to one principal does not open for another (-32602); for its own
/// principal the retry completes.
#[tokio::test]
async fn request_state_is_bound_to_the_principal() {
    tokio::time::timeout(Duration::from_secs(30), async {
        let addr = mounted().await;
        let r = call_hello(addr, "alice", json!({})).await;
        assert_eq!(r["result"]["resultType"], "input_required", "{r}");
        let retry = json!({
            "inputResponses": {"user_name": {"action": "accept", "content": {"name": "Al"}}},
            "requestState": r["result"]["requestState"],
        });
        let e = call_hello(addr, "bob", retry.clone()).await;
        assert_eq!(e["error"]["code"], -32602, "{e}");
        let ok = call_hello(addr, "alice", retry).await;
        assert_eq!(ok["result"]["content"][0]["text"], "Hello, Al!", "{ok}");
    })
    .await
    .unwrap();
}
