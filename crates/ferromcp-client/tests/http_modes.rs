//! The HTTP client transport against ferromcp's server in its other modes and failure paths
//! (2025-11-25 "Transports › Streamable HTTP": Listening for Messages (the GET stream),
//! Sending Messages 5 (JSON responses), Session Management 2 (400 without a session);
//! 2026-07-28 "Streamable HTTP › Sending Messages" 6).

#![cfg(feature = "http")]
#![allow(clippy::unwrap_used, clippy::panic)]

mod http_support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use ferromcp_client::{Client, HttpTransport, Lifecycle, ServerNotification};
use ferromcp_dispatch::CallOptions;
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

/// A notification the server sends on the standalone channel arrives over the GET stream.
#[tokio::test]
async fn standalone_get_stream_delivers_notifications() {
    within(async {
        let srv = start(ServerConfig::default()).await;
        let changed = Arc::new(AtomicUsize::new(0));
        let c2 = changed.clone();
        let client = Client::builder()
            .lifecycle(Lifecycle::Handshake)
            .on_notification(move |n| {
                let c2 = c2.clone();
                async move {
                    if matches!(n, ServerNotification::ToolListChanged) {
                        c2.fetch_add(1, Ordering::SeqCst);
                    }
                }
            })
            .connect(HttpTransport::new(srv.url()).unwrap())
            .await
            .unwrap();
        while !srv.seen().iter().any(|s| s.method == Method::GET) {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        let r = client.call_tool("broadcast", json!({})).await.unwrap();
        assert_eq!(first_text(&r), "sent");
        while changed.load(Ordering::SeqCst) == 0 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        client.shutdown().await;
    })
    .await;
}

/// JSON-response mode: answers come as one JSON object, in both eras.
#[tokio::test]
async fn json_response_mode_both_eras() {
    within(async {
        let mut config = ServerConfig::default();
        config.json_response = true;
        let srv = start(config).await;
        for mode in [Lifecycle::Handshake, Lifecycle::Modern] {
            let client = connect(&srv.url(), mode).await;
            let r = client
                .call_tool("echo", json!({"text": "j"}))
                .await
                .unwrap();
            assert_eq!(first_text(&r), "j");
            client.shutdown().await;
        }
    })
    .await;
}

/// Stateless mode: no session id, no GET stream (405 tolerated), calls work, no DELETE.
#[tokio::test]
async fn stateless_server() {
    within(async {
        let mut config = ServerConfig::default();
        config.stateless = true;
        let srv = start(config).await;
        let client = connect(&srv.url(), Lifecycle::Handshake).await;
        assert_eq!(client.session().era, Era::Handshake);
        let r = client
            .call_tool("echo", json!({"text": "s"}))
            .await
            .unwrap();
        assert_eq!(first_text(&r), "s");
        client.shutdown().await;
        assert!(srv.seen().iter().all(|s| s.method == Method::POST));
    })
    .await;
}

/// An HTTP error with a JSON-RPC error body is that request's error: a modern-era request
/// without the envelope gets 400 with -32602.
#[tokio::test]
async fn http_error_with_jsonrpc_body_is_surfaced() {
    within(async {
        let srv = start(ServerConfig::default()).await;
        let client = connect(&srv.url(), Lifecycle::Modern).await;
        // No envelope: the era's version header still goes, and the server refuses it.
        let e = client
            .dispatcher()
            .send_request("tools/list", None, CallOptions::new())
            .await
            .unwrap_err();
        assert_eq!(e.code.0, -32602, "{e:?}");
        assert!(e.message.contains("envelope"), "{e:?}");
        client.shutdown().await;
    })
    .await;
}

/// An HTTP error without a JSON-RPC body is -32603 with the status in `data`.
#[tokio::test]
async fn http_error_without_body() {
    within(async {
        let srv = start(ServerConfig::default()).await;
        let client = connect(&srv.url(), Lifecycle::Modern).await;
        srv.legacy_only.store(true, Ordering::SeqCst);
        let e = client.list_tools(None).await.unwrap_err();
        let e = e.as_protocol().unwrap();
        assert_eq!(e.code.0, -32603);
        assert_eq!(e.data.as_ref().unwrap()["httpStatus"], 400);
        client.shutdown().await;
    })
    .await;
}

/// Connection reuse: sequential calls share pooled keep-alive connections instead of one
/// connection per POST (rmcp #789's latency came from the opposite), in both eras and both
/// response modes (SSE streams are read to their end so that their connection is reused).
#[tokio::test]
async fn sequential_calls_reuse_connections() {
    within(async {
        let cases = [
            (Lifecycle::Modern, false),
            (Lifecycle::Modern, true),
            (Lifecycle::Handshake, false),
            (Lifecycle::Handshake, true),
        ];
        for (mode, json_response) in cases {
            let mut config = ServerConfig::default();
            config.json_response = json_response;
            let srv = start(config).await;
            let client = connect(&srv.url(), mode).await;
            for i in 0..20 {
                let text = i.to_string();
                let r = client
                    .call_tool("echo", json!({"text": text}))
                    .await
                    .unwrap();
                assert_eq!(first_text(&r), text);
            }
            let n = srv.connections.load(Ordering::SeqCst);
            // One for the POSTs, one for the handshake era's GET stream, one spare for a
            // POST that raced a connection back to the pool.
            assert!(
                n <= 3,
                "{n} connections ({mode:?}, json_response {json_response})"
            );
            client.shutdown().await;
        }
    })
    .await;
}
