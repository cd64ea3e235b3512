//! `McpHttpService` mounted in an axum `Router` (MCP "Streamable HTTP": a single MCP
//! endpoint path), and the principal seam: a layer in front records the caller, and
//! handshake-era sessions are bound to it (security best practices, "Session Hijacking").
#![allow(clippy::unwrap_used, clippy::panic)]

mod http_support;

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use ferromcp_http_server::{HttpConfig, McpHttpService};
use ferromcp_server::CallerId;
use http_support::*;
use serde_json::json;

async fn within<F: std::future::Future>(f: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(30), f)
        .await
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

async fn mounted(config: HttpConfig) -> std::net::SocketAddr {
    let svc = McpHttpService::new(test_server(Arc::new(Flags::default())), config);
    let app = Router::new()
        .route_service("/mcp", svc)
        .layer(axum::middleware::from_fn(principal));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    addr
}

/// Both eras through the router.
#[tokio::test]
async fn mounts_in_an_axum_router() {
    within(async {
        let addr = mounted(HttpConfig::default()).await;
        let h = modern_headers("echo");
        let resp = post(
            addr,
            &hdrs(&h),
            &modern_call(1, "echo", json!({"text":"axum"})),
        )
        .await;
        assert_eq!(resp.status(), 200);
        assert_eq!(
            json_body(resp).await["result"]["content"][0]["text"],
            "axum"
        );
        let sid = open_session(addr, "2025-11-25").await;
        let resp = post(
            addr,
            &[("mcp-session-id", &sid)],
            &call(2, "echo", json!({"text":"old"})),
        )
        .await;
        let events = Sse::new(resp).rest().await;
        assert_eq!(events[0]["result"]["content"][0]["text"], "old");
    })
    .await;
}

/// A session created by one principal is not found for another.
#[tokio::test]
async fn sessions_are_bound_to_their_principal() {
    within(async {
        let addr = mounted(HttpConfig::default()).await;
        let resp = post(addr, &[("x-user", "alice")], &initialize(1, "2025-11-25")).await;
        let sid = header(&resp, "mcp-session-id").unwrap();
        Sse::new(resp).rest().await;
        let as_bob = [("mcp-session-id", sid.as_str()), ("x-user", "bob")];
        assert_eq!(
            post(addr, &as_bob, &call(2, "echo", json!({})))
                .await
                .status(),
            404
        );
        let anonymous = [("mcp-session-id", sid.as_str())];
        assert_eq!(
            post(addr, &anonymous, &call(3, "echo", json!({})))
                .await
                .status(),
            404
        );
        let as_alice = [("mcp-session-id", sid.as_str()), ("x-user", "alice")];
        assert_eq!(
            post(addr, &as_alice, &call(4, "echo", json!({})))
                .await
                .status(),
            200
        );
    })
    .await;
}
