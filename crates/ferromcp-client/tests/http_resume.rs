//! Resumability of the HTTP client transport against ferromcp's server (2025-11-25
//! "Transports › Streamable HTTP › Resumability and Redelivery", "Sending Messages" 6: the
//! client honours `retry` and resumes with GET + `Last-Event-ID`).

#![cfg(feature = "http")]
#![allow(clippy::unwrap_used, clippy::panic)]

mod http_support;

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use ferromcp_client::{Client, HttpTransport, Lifecycle};
use ferromcp_dispatch::{CallOptions, ResumptionHooks};
use ferromcp_http_server::HttpConfig as ServerConfig;
use ferromcp_types::jsonrpc::Payload;
use http::Method;
use http_support::{first_text, start, within};
use serde_json::json;

fn server_config() -> ServerConfig {
    let mut config = ServerConfig::default();
    config.retry_ms = 50;
    config
}

async fn handshake_client(url: &str) -> Client {
    Client::builder()
        .lifecycle(Lifecycle::Handshake)
        .connect(HttpTransport::new(url).unwrap())
        .await
        .unwrap()
}

/// A POST's SSE stream that breaks after the priming event is resumed with GET +
/// `Last-Event-ID` (the priming event's id), and the answer arrives on the resumed stream.
#[tokio::test]
async fn broken_post_stream_is_resumed() {
    within(async {
        let srv = start(server_config()).await;
        let client = handshake_client(&srv.url()).await;
        srv.cut_next_sse.store(true, Ordering::SeqCst);
        let r = client.call_tool("wait", json!({"ms": 300})).await.unwrap();
        assert_eq!(first_text(&r), "waited");
        let resumes: Vec<_> = srv
            .seen()
            .into_iter()
            .filter(|s| s.method == Method::GET && s.header("last-event-id").is_some())
            .collect();
        assert_eq!(resumes.len(), 1, "{resumes:?}");
        assert!(resumes[0].header("mcp-session-id").is_some());
        client.shutdown().await;
    })
    .await;
}

#[derive(Default)]
struct Tokens {
    seen: Mutex<Vec<String>>,
    resume: Mutex<Option<String>>,
}

impl ResumptionHooks for Tokens {
    fn on_token(&self, token: &str) {
        self.seen.lock().unwrap().push(token.to_owned());
    }
    fn resume_from(&self) -> Option<String> {
        self.resume.lock().unwrap().clone()
    }
}

/// Resumption hooks see every event id of the request's stream; a request whose hooks hold a
/// token continues that stream with GET + `Last-Event-ID` instead of posting again.
#[tokio::test]
async fn resumption_hooks_see_tokens_and_resume() {
    within(async {
        let srv = start(server_config()).await;
        let client = handshake_client(&srv.url()).await;
        let hooks = Arc::new(Tokens::default());
        let params = || Payload::from_value(json!({"name": "wait", "arguments": {"ms": 300}}));
        let opts = CallOptions::new()
            .request_id("first")
            .resumption(hooks.clone());
        let first = client
            .dispatcher()
            .send_request("tools/call", Some(params()), opts);
        // Abandon the call after its priming event: the server keeps running it.
        let _ = tokio::time::timeout(std::time::Duration::from_millis(100), first).await;
        let token = hooks.seen.lock().unwrap().first().cloned().unwrap();
        *hooks.resume.lock().unwrap() = Some(token);
        let posts_before = srv
            .seen()
            .iter()
            .filter(|s| s.method == Method::POST)
            .count();
        let opts = CallOptions::new()
            .request_id("first")
            .resumption(hooks.clone());
        let answer = client
            .dispatcher()
            .send_request("tools/call", Some(params()), opts)
            .await
            .unwrap();
        let text = answer.into_value().unwrap()["content"][0]["text"].clone();
        assert_eq!(text, "waited");
        let seen = srv.seen();
        let posts_after = seen.iter().filter(|s| s.method == Method::POST).count();
        assert_eq!(
            posts_before, posts_after,
            "the resumed call was posted again"
        );
        assert!(
            seen.iter()
                .any(|s| s.method == Method::GET && s.header("last-event-id").is_some())
        );
        client.shutdown().await;
    })
    .await;
}
