//! The HTTP client transport against ferromcp's Streamable HTTP server, 2026-07-28 era
//! (2026-07-28 "Transports › Streamable HTTP": Sending Messages, Request Metadata › Standard
//! Request Headers, Custom Headers from Tool Parameters, Value Encoding, Cancellation,
//! Backward Compatibility).

#![cfg(feature = "http")]
#![allow(clippy::unwrap_used, clippy::panic)]

mod http_support;

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ferromcp_client::{Client, HttpTransport, Lifecycle, RequestOptions};
use ferromcp_http_server::HttpConfig as ServerConfig;
use ferromcp_types::Era;
use http::Method;
use http_support::{first_text, start, within};
use serde_json::json;

async fn connect(url: &str, mode: Lifecycle) -> Client {
    Client::builder()
        .lifecycle(mode)
        .connect(HttpTransport::new(url).unwrap())
        .await
        .unwrap()
}

/// `server/discover`, then calls with the envelope; every POST carries `MCP-Protocol-Version:
/// 2026-07-28` and `Mcp-Method`, never a session id; `tools/call` carries `Mcp-Name`; no
/// GET stream and no DELETE in this era.
#[tokio::test]
async fn modern_headers_and_calls() {
    within(async {
        let srv = start(ServerConfig::default()).await;
        let client = connect(&srv.url(), Lifecycle::Modern).await;
        assert_eq!(client.session().era, Era::Modern);
        let r = client
            .call_tool("echo", json!({"text": "hi"}))
            .await
            .unwrap();
        assert_eq!(first_text(&r), "hi");
        client.shutdown().await;

        let seen = srv.seen();
        assert!(seen.iter().all(|s| s.method == Method::POST), "{seen:?}");
        for s in &seen {
            assert_eq!(s.header("mcp-protocol-version"), Some("2026-07-28"));
            assert!(s.header("mcp-session-id").is_none());
            assert!(s.header("mcp-method").is_some());
        }
        assert_eq!(srv.with_mcp_method("server/discover").len(), 1);
        let call = &srv.with_mcp_method("tools/call")[0];
        assert_eq!(call.header("mcp-name"), Some("echo"));
    })
    .await;
}

/// `Mcp-Param-{Name}` headers mirror `x-mcp-header` arguments once the tool was listed;
/// a tool with an invalid annotation is dropped from `tools/list`; a non-ASCII name goes in
/// the Base64 sentinel.
#[tokio::test]
async fn param_headers_sentinel_and_invalid_tools() {
    within(Box::pin(async {
        let srv = start(ServerConfig::default()).await;
        let client = connect(&srv.url(), Lifecycle::Modern).await;
        let tools = client.list_tools(None).await.unwrap();
        let names: Vec<_> = tools.tools.iter().map(|t| t.name.as_str()).collect();
        assert!(
            names.contains(&"region") && !names.contains(&"broken"),
            "{names:?}"
        );

        let r = client
            .call_tool("region", json!({"region": "eu-west-1", "n": 7}))
            .await
            .unwrap();
        assert_eq!(first_text(&r), "ok");
        let call = srv.with_mcp_method("tools/call").pop().unwrap();
        assert_eq!(call.header("mcp-param-region"), Some("eu-west-1"));
        assert_eq!(call.header("mcp-param-n"), Some("7"));

        let r = client
            .call_tool("region", json!({"region": "Zürich"}))
            .await
            .unwrap();
        assert_eq!(first_text(&r), "ok");
        let call = srv.with_mcp_method("tools/call").pop().unwrap();
        assert_eq!(
            call.header("mcp-param-region"),
            Some("=?base64?WsO8cmljaA==?=")
        );
        assert!(call.header("mcp-param-n").is_none());

        let r = client.call_tool("héllo", json!({})).await.unwrap();
        assert_eq!(r.is_error, Some(true));
        let call = srv.with_mcp_method("tools/call").pop().unwrap();
        assert_eq!(call.header("mcp-name"), Some("=?base64?aMOpbGxv?="));
        client.shutdown().await;
    }))
    .await;
}

/// Progress rides the POST's SSE stream in this era too.
#[tokio::test]
async fn modern_progress() {
    within(async {
        let srv = start(ServerConfig::default()).await;
        let client = connect(&srv.url(), Lifecycle::Modern).await;
        let reports = Arc::new(Mutex::new(Vec::new()));
        let r2 = reports.clone();
        let opts = RequestOptions::new().on_progress(move |p| r2.lock().unwrap().push(p.progress));
        let r = client
            .call_tool_with("progress", json!({}), opts)
            .await
            .unwrap();
        assert_eq!(first_text(&r), "done");
        assert_eq!(*reports.lock().unwrap(), vec![1.0, 2.0]);
        client.shutdown().await;
    })
    .await;
}

/// Cancellation (2026-07-28): dropping the call closes its response stream, which cancels
/// the handler; no `notifications/cancelled` is posted.
#[tokio::test]
async fn dropping_a_call_closes_its_stream() {
    within(async {
        let srv = start(ServerConfig::default()).await;
        let client = connect(&srv.url(), Lifecycle::Modern).await;
        let call = client.call_tool("wait", json!({"ms": 5000}));
        let _ = tokio::time::timeout(Duration::from_millis(300), call).await;
        for _ in 0..100 {
            if srv.flags.cancelled.load(Ordering::SeqCst) == 1 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert_eq!(srv.flags.cancelled.load(Ordering::SeqCst), 1);
        let seen = srv.seen();
        assert!(
            seen.iter().all(|s| s.header("mcp-method").is_some()),
            "a notification was posted: {seen:?}"
        );
        client.shutdown().await;
    })
    .await;
}

/// N calls in flight at once over the modern wire finish together.
#[tokio::test]
async fn modern_concurrent_calls() {
    within(async {
        let srv = start(ServerConfig::default()).await;
        let client = connect(&srv.url(), Lifecycle::Modern).await;
        let started = Instant::now();
        let tasks: Vec<_> = (0..8)
            .map(|_| {
                let c = client.clone();
                tokio::spawn(async move { c.call_tool("wait", json!({"ms": 400})).await })
            })
            .collect();
        for t in tasks {
            assert_eq!(first_text(&t.await.unwrap().unwrap()), "waited");
        }
        let took = started.elapsed();
        assert!(took < Duration::from_millis(1600), "took {took:?}");
        client.shutdown().await;
    })
    .await;
}

/// Auto against ferromcp picks the modern era (one discover, no initialize).
#[tokio::test]
async fn auto_picks_modern() {
    within(async {
        let srv = start(ServerConfig::default()).await;
        let client = connect(&srv.url(), Lifecycle::Auto).await;
        assert_eq!(client.session().era, Era::Modern);
        client.list_tools(None).await.unwrap();
        assert!(
            srv.seen()
                .iter()
                .all(|s| s.header("mcp-session-id").is_none())
        );
        client.shutdown().await;
    })
    .await;
}

/// Auto against a handshake-only server, which answers the 2026-07-28 probe with a bare 400
/// (2026-07-28 "Backward Compatibility"): it falls back to `initialize` and runs a session.
#[tokio::test]
async fn auto_falls_back_on_a_bare_400() {
    within(async {
        let srv = start(ServerConfig::default()).await;
        srv.legacy_only.store(true, Ordering::SeqCst);
        let client = connect(&srv.url(), Lifecycle::Auto).await;
        assert_eq!(client.session().era, Era::Handshake);
        let r = client
            .call_tool("echo", json!({"text": "old"}))
            .await
            .unwrap();
        assert_eq!(first_text(&r), "old");
        let last = srv.seen().pop().unwrap();
        assert!(last.header("mcp-session-id").is_some());
        assert_eq!(last.header("mcp-protocol-version"), Some("2025-11-25"));
        client.shutdown().await;
    })
    .await;
}

/// A call whose `Mcp-Param-*` headers the server refuses (-32020, the tool was never listed)
/// makes the transport re-read `tools/list` and retry once with the right headers
/// (2026-07-28 "Custom Headers from Tool Parameters › Client Behavior").
#[tokio::test]
async fn header_mismatch_relists_and_retries() {
    within(async {
        let srv = start(ServerConfig::default()).await;
        let client = connect(&srv.url(), Lifecycle::Modern).await;
        let r = client
            .call_tool("region", json!({"region": "ap-south-1"}))
            .await
            .unwrap();
        assert_eq!(first_text(&r), "ok");
        let calls = srv.with_mcp_method("tools/call");
        assert_eq!(calls.len(), 2);
        assert!(calls[0].header("mcp-param-region").is_none());
        assert_eq!(calls[1].header("mcp-param-region"), Some("ap-south-1"));
        assert_eq!(srv.with_mcp_method("tools/list").len(), 1);
        client.shutdown().await;
    })
    .await;
}
