//! Faults between ferromcp's HTTP client and its server, end to end (F04 and F10 of the
//! robustness plan, `docs/requirements.md`): a handler slower than the client's timeout,
//! and a session the server expired while the client was idle.
//!
//! Spec: 2025-11-25 "basic/lifecycle" §Timeouts (the sender SHOULD cancel on timeout;
//! a maximum total timeout); "basic/transports" §Session Management 3–4 (404 after expiry,
//! then a new session); 2026-07-28 "basic/patterns/cancellation".
#![cfg(feature = "http")]
#![allow(clippy::unwrap_used, clippy::panic)]

mod http_support;

use std::sync::atomic::Ordering;
use std::time::Duration;

use ferromcp_client::{Client, HttpTransport, Lifecycle, RequestOptions};
use ferromcp_http_server::HttpConfig as ServerConfig;
use ferromcp_types::jsonrpc::ErrorCode;
use http::Method;
use http_support::{first_text, start, within};
use serde_json::json;

/// F04 (SV-P08, SV-P07): in each era, a handler slower than the request timeout gives the
/// caller -32001, and the server's handler is cancelled (it never runs to its end); the
/// same holds for the maximum total timeout; the client keeps working.
#[tokio::test]
async fn f04_slow_handler_times_out_and_is_cancelled_on_the_server() {
    within(async {
        for mode in [Lifecycle::Handshake, Lifecycle::Modern] {
            let srv = start(ServerConfig::default()).await;
            let client = Client::builder()
                .lifecycle(mode)
                .connect(HttpTransport::new(srv.url()).unwrap())
                .await
                .unwrap();
            for opts in [
                RequestOptions::new().timeout(Duration::from_millis(200)),
                RequestOptions::new().max_total_timeout(Duration::from_millis(200)),
            ] {
                let err = client
                    .call_tool_with("wait", json!({"ms": 1_000}), opts)
                    .await
                    .unwrap_err();
                assert_eq!(
                    err.code(),
                    Some(ErrorCode::REQUEST_TIMEOUT),
                    "{mode:?}: {err:?}"
                );
            }
            // Past the handlers' own end: cancelled (signalled or dropped), none finished.
            tokio::time::sleep(Duration::from_millis(1_300)).await;
            assert_eq!(srv.flags.finished.load(Ordering::SeqCst), 0, "{mode:?}");
            // The control: an undisturbed call runs to its end.
            client.call_tool("wait", json!({"ms": 10})).await.unwrap();
            assert_eq!(srv.flags.finished.load(Ordering::SeqCst), 1, "{mode:?}");
            let r = client
                .call_tool("echo", json!({"text": "alive"}))
                .await
                .unwrap();
            assert_eq!(first_text(&r), "alive");
            client.shutdown().await;
        }
    })
    .await;
}

/// F10 (SV-S04, CL-H03): the server expires an idle session (its idle timeout passes); the
/// next call meets the 404, and the client starts a new session and retries, transparently.
#[tokio::test]
async fn f10_session_expiry_then_the_client_reinitializes() {
    within(async {
        let config = ServerConfig::default().idle_timeout(Duration::from_millis(200));
        let srv = start(config).await;
        let client = Client::builder()
            .lifecycle(Lifecycle::Handshake)
            .connect(HttpTransport::new(srv.url()).unwrap().config(
                ferromcp_client::transport::http::HttpConfig::default().standalone_stream(false),
            ))
            .await
            .unwrap();
        let r = client
            .call_tool("echo", json!({"text": "one"}))
            .await
            .unwrap();
        assert_eq!(first_text(&r), "one");
        let first_sid = srv
            .seen()
            .iter()
            .rev()
            .find_map(|s| s.header("mcp-session-id").map(str::to_owned))
            .unwrap();
        tokio::time::sleep(Duration::from_millis(600)).await;
        let before = srv.seen().len();
        let r = client
            .call_tool("echo", json!({"text": "two"}))
            .await
            .unwrap();
        assert_eq!(first_text(&r), "two");
        let after: Vec<_> = srv.seen().into_iter().skip(before).collect();
        let posts: Vec<_> = after.iter().filter(|s| s.method == Method::POST).collect();
        assert_eq!(posts[0].header("mcp-session-id"), Some(first_sid.as_str()));
        assert!(
            posts[1].header("mcp-session-id").is_none(),
            "a fresh initialize"
        );
        let new_sid = posts.last().unwrap().header("mcp-session-id").unwrap();
        assert_ne!(new_sid, first_sid);
        client.shutdown().await;
    })
    .await;
}
