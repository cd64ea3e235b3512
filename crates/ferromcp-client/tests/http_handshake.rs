//! The HTTP client transport against ferromcp's Streamable HTTP server, handshake era
//! (2025-11-25 "Transports › Streamable HTTP": Sending Messages, Listening for Messages,
//! Session Management, Protocol Version Header).

#![cfg(feature = "http")]
#![allow(clippy::unwrap_used, clippy::panic)]

mod http_support;

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ferromcp_client::transport::http::HttpConfig;
use ferromcp_client::{Client, HttpTransport, Lifecycle, RequestOptions};
use ferromcp_dispatch::CallOptions;
use ferromcp_http_server::HttpConfig as ServerConfig;
use ferromcp_types::Era;
use ferromcp_types::jsonrpc::Payload;
use ferromcp_types::mcp::ListRootsResult;
use http::{HeaderName, HeaderValue, Method};
use http_support::{first_text, start, within};
use serde_json::json;

async fn handshake_client(url: &str) -> Client {
    let transport = HttpTransport::new(url).unwrap().header(
        HeaderName::from_static("x-static"),
        HeaderValue::from_static("yes"),
    );
    Client::builder()
        .lifecycle(Lifecycle::Handshake)
        .on_roots(|| async { Ok(ListRootsResult::new(Vec::new())) })
        .connect(transport)
        .await
        .unwrap()
}

/// initialize → session id; later requests carry `Mcp-Session-Id` and the negotiated
/// `MCP-Protocol-Version`; every POST carries the Accept pair, the JSON content type and the
/// static headers; tools/list and tools/call work; DELETE on shutdown.
#[tokio::test]
async fn handshake_session_headers_calls_and_delete() {
    within(async {
        let srv = start(ServerConfig::default()).await;
        let client = handshake_client(&srv.url()).await;
        assert_eq!(client.session().era, Era::Handshake);
        let tools = client.list_tools(None).await.unwrap();
        assert!(tools.tools.iter().any(|t| t.name == "echo"));
        let r = client
            .call_tool("echo", json!({"text": "hi"}))
            .await
            .unwrap();
        assert_eq!(first_text(&r), "hi");
        client.shutdown().await;

        let seen = srv.seen();
        let posts: Vec<_> = seen.iter().filter(|s| s.method == Method::POST).collect();
        assert!(posts.len() >= 4, "{posts:?}");
        for p in &posts {
            assert_eq!(
                p.header("accept"),
                Some("application/json, text/event-stream")
            );
            assert_eq!(p.header("content-type"), Some("application/json"));
            assert_eq!(p.header("x-static"), Some("yes"));
        }
        // initialize: no session, no version header.
        assert!(posts[0].header("mcp-session-id").is_none());
        assert!(posts[0].header("mcp-protocol-version").is_none());
        let session = posts[1].header("mcp-session-id").unwrap().to_owned();
        for p in &posts[1..] {
            assert_eq!(p.header("mcp-session-id"), Some(session.as_str()));
            assert_eq!(p.header("mcp-protocol-version"), Some("2025-11-25"));
            assert!(p.header("mcp-method").is_none());
        }
        let delete = seen.iter().find(|s| s.method == Method::DELETE).unwrap();
        assert_eq!(delete.header("mcp-session-id"), Some(session.as_str()));
        // The standalone GET stream was opened with the session.
        let get = seen.iter().find(|s| s.method == Method::GET).unwrap();
        assert_eq!(get.header("mcp-session-id"), Some(session.as_str()));
        assert_eq!(get.header("accept"), Some("text/event-stream"));
    })
    .await;
}

/// Progress notifications on the POST's SSE stream reach the caller's callback; a
/// server→client request (roots/list) on the stream is answered with a POST.
#[tokio::test]
async fn progress_and_server_to_client_request() {
    within(async {
        let srv = start(ServerConfig::default()).await;
        let client = handshake_client(&srv.url()).await;
        let reports = Arc::new(Mutex::new(Vec::new()));
        let r2 = reports.clone();
        let opts = RequestOptions::new().on_progress(move |p| r2.lock().unwrap().push(p.progress));
        let r = client
            .call_tool_with("progress", json!({}), opts)
            .await
            .unwrap();
        assert_eq!(first_text(&r), "done");
        assert_eq!(*reports.lock().unwrap(), vec![1.0, 2.0]);

        let r = client.call_tool("ask", json!({})).await.unwrap();
        assert_eq!(first_text(&r), r#"{"roots":[]}"#);
        client.shutdown().await;
    })
    .await;
}

/// Calls run concurrently: 8 calls sleeping 400 ms each finish in far less than 8 × 400 ms.
#[tokio::test]
async fn concurrent_calls_overlap() {
    within(async {
        let srv = start(ServerConfig::default()).await;
        let client = handshake_client(&srv.url()).await;
        let started = Instant::now();
        let calls = (0..8).map(|_| {
            let c = client.clone();
            async move { c.call_tool("wait", json!({"ms": 400})).await }
        });
        for r in futures_join_all(calls).await {
            assert_eq!(first_text(&r.unwrap()), "waited");
        }
        let took = started.elapsed();
        assert!(took < Duration::from_millis(8 * 400 / 2), "took {took:?}");
        client.shutdown().await;
    })
    .await;
}

async fn futures_join_all<F: std::future::Future + Send + 'static>(
    futs: impl Iterator<Item = F>,
) -> Vec<F::Output>
where
    F::Output: Send,
{
    let handles: Vec<_> = futs.map(tokio::spawn).collect();
    let mut out = Vec::new();
    for h in handles {
        out.push(h.await.unwrap());
    }
    out
}

/// Dropping a call sends `notifications/cancelled` (handshake era): the server drops the
/// handler, which never finishes.
#[tokio::test]
async fn dropped_call_is_cancelled() {
    within(async {
        let srv = start(ServerConfig::default()).await;
        let client = handshake_client(&srv.url()).await;
        let call = client.call_tool("wait", json!({"ms": 600}));
        let _ = tokio::time::timeout(Duration::from_millis(200), call).await;
        tokio::time::sleep(Duration::from_millis(800)).await;
        assert_eq!(srv.flags.finished.load(Ordering::SeqCst), 0);
        // The control: an undisturbed call finishes.
        client.call_tool("wait", json!({"ms": 10})).await.unwrap();
        assert_eq!(srv.flags.finished.load(Ordering::SeqCst), 1);
        client.shutdown().await;
    })
    .await;
}

/// A 404 to the session id starts a new session (a fresh `initialize` without a session id)
/// and the request is retried transparently (2025-11-25 "Session Management" 4).
#[tokio::test]
async fn session_404_reinitializes_and_retries() {
    within(async {
        let srv = start(ServerConfig::default()).await;
        let client = handshake_client(&srv.url()).await;
        client.list_tools(None).await.unwrap();
        let before = srv.seen();
        let old = before[1].header("mcp-session-id").unwrap().to_owned();
        srv.forget_next.store(true, Ordering::SeqCst);
        let r = client
            .call_tool("echo", json!({"text": "again"}))
            .await
            .unwrap();
        assert_eq!(first_text(&r), "again");
        let after: Vec<_> = srv.seen().into_iter().skip(before.len()).collect();
        let posts: Vec<_> = after.iter().filter(|s| s.method == Method::POST).collect();
        // The refused call, initialize (no session), initialized, the retried call.
        assert!(posts.len() >= 4, "{posts:?}");
        assert_eq!(posts[0].header("mcp-session-id"), Some(old.as_str()));
        assert!(posts[1].header("mcp-session-id").is_none());
        let new = posts.last().unwrap().header("mcp-session-id").unwrap();
        assert_ne!(new, old);
        client.shutdown().await;
    })
    .await;
}

/// With re-initialization off, a 404 fails the request with "Session terminated".
#[tokio::test]
async fn session_404_without_reinit_is_an_error() {
    within(async {
        let srv = start(ServerConfig::default()).await;
        let transport = HttpTransport::new(srv.url())
            .unwrap()
            .config(HttpConfig::default().reinitialize_on_expiry(false));
        let client = Client::builder()
            .lifecycle(Lifecycle::Handshake)
            .connect(transport)
            .await
            .unwrap();
        srv.forget_next.store(true, Ordering::SeqCst);
        let e = client.list_tools(None).await.unwrap_err();
        let e = e.as_protocol().unwrap();
        assert_eq!(e.code.0, -32600);
        assert_eq!(e.data.as_ref().unwrap()["sessionExpired"], true);
        client.shutdown().await;
    })
    .await;
}

/// Headers given through `CallOptions` ride on that request only.
#[tokio::test]
async fn call_option_headers() {
    within(async {
        let srv = start(ServerConfig::default()).await;
        let client = handshake_client(&srv.url()).await;
        let opts = CallOptions::new().header(
            HeaderName::from_static("x-per-call"),
            HeaderValue::from_static("1"),
        );
        let params = Payload::from_value(json!({}));
        client
            .dispatcher()
            .send_request("tools/list", Some(params), opts)
            .await
            .unwrap();
        let seen = srv.seen();
        let tagged: Vec<_> = seen
            .iter()
            .filter(|s| s.header("x-per-call") == Some("1"))
            .collect();
        assert_eq!(tagged.len(), 1);
        client.shutdown().await;
    })
    .await;
}

/// A server that is not there: the connect fails promptly instead of hanging.
#[tokio::test]
async fn connection_refused_fails_the_connect() {
    within(async {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        drop(listener);
        let transport = HttpTransport::new(format!("http://{addr}/mcp")).unwrap();
        let e = Client::builder()
            .lifecycle(Lifecycle::Handshake)
            .connect(transport)
            .await
            .unwrap_err();
        assert_eq!(e.code().map(|c| c.0), Some(-32000), "{e}");
    })
    .await;
}
