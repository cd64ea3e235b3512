//! The handshake-era wire of the Streamable HTTP server (MCP 2025-11-25
//! "basic/transports" §Streamable HTTP: Sending Messages, Listening for Messages, Multiple
//! Connections, Session Management, Protocol Version Header; stateless and JSON-response
//! modes).
#![allow(clippy::unwrap_used, clippy::panic)]

mod http_support;

use std::sync::atomic::Ordering;
use std::time::Duration;

use ferromcp_http_server::HttpConfig;
use http::Method;
use http_support::*;
use serde_json::json;

async fn within<F: std::future::Future>(f: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(30), f)
        .await
        .unwrap()
}

/// §Session Management 1: `initialize` answered on an SSE stream with a session id of
/// visible ASCII from a CSPRNG (128 bits, hex).
#[tokio::test]
async fn initialize_mints_a_session() {
    within(async {
        let (addr, _) = start(HttpConfig::default()).await;
        let a = open_session(addr, "2025-11-25").await;
        let b = open_session(addr, "2025-06-18").await;
        assert_ne!(a, b);
        assert_eq!(a.len(), 32);
        assert!(a.bytes().all(|c| (0x21..=0x7e).contains(&c)));
    })
    .await;
}

/// §Session Management 2–3: a non-initialize POST without a session id → 400; an unknown
/// session → 404.
#[tokio::test]
async fn missing_and_unknown_sessions() {
    within(async {
        let (addr, _) = start(HttpConfig::default()).await;
        let resp = post(addr, &[], &call(1, "echo", json!({}))).await;
        assert_eq!(resp.status(), 400);
        let resp = post(
            addr,
            &[("mcp-session-id", "nope")],
            &call(1, "echo", json!({})),
        )
        .await;
        assert_eq!(resp.status(), 404);
        let resp = send(
            addr,
            Method::GET,
            &[("mcp-session-id", "nope"), ("accept", "text/event-stream")],
            "",
        )
        .await;
        assert_eq!(resp.status(), 404);
    })
    .await;
}

/// §Sending Messages 5–6: a request gets an SSE stream (priming event with `retry`, then the
/// response, then the end); notifications → 202; responses echo `Mcp-Session-Id`.
#[tokio::test]
async fn request_stream_and_priming() {
    within(async {
        let (addr, _) = start(HttpConfig::default().retry_ms(1500)).await;
        let sid = open_session(addr, "2025-11-25").await;
        let resp = post(
            addr,
            &[("mcp-session-id", &sid)],
            &call(2, "echo", json!({"text":"yo"})),
        )
        .await;
        assert_eq!(resp.status(), 200);
        assert_eq!(
            header(&resp, "mcp-session-id").as_deref(),
            Some(sid.as_str())
        );
        let mut sse = Sse::new(resp);
        let prime = sse.next_event().await.unwrap();
        assert!(prime.data.is_empty() && prime.id.is_some());
        assert_eq!(sse.parser.retry(), Some(1500));
        let rest = sse.rest().await;
        assert_eq!(rest.len(), 1);
        assert_eq!(rest[0]["result"]["content"][0]["text"], "yo");
    })
    .await;
}

/// §Sending Messages 2 and §Listening 2: Accept rules → 406.
#[tokio::test]
async fn accept_rules_406() {
    within(async {
        let (addr, _) = start(HttpConfig::default()).await;
        let resp = post(
            addr,
            &[("accept", "application/json")],
            &initialize(1, "2025-11-25"),
        )
        .await;
        assert_eq!(resp.status(), 406);
        let sid = open_session(addr, "2025-11-25").await;
        let resp = send(
            addr,
            Method::GET,
            &[("mcp-session-id", &sid), ("accept", "application/json")],
            "",
        )
        .await;
        assert_eq!(resp.status(), 406);
    })
    .await;
}

/// §Listening for Messages: one GET stream per session (a second → 409); messages not related
/// to a request travel on it.
#[tokio::test]
async fn standalone_stream_and_conflict() {
    within(async {
        let (addr, _) = start(HttpConfig::default()).await;
        let sid = open_session(addr, "2025-11-25").await;
        let get = [
            ("mcp-session-id", sid.as_str()),
            ("accept", "text/event-stream"),
        ];
        let resp = send(addr, Method::GET, &get, "").await;
        assert_eq!(resp.status(), 200);
        let mut stream = Sse::new(resp);
        let again = send(addr, Method::GET, &get, "").await;
        assert_eq!(again.status(), 409);
        let resp = post(
            addr,
            &[("mcp-session-id", &sid)],
            &call(3, "broadcast", json!({})),
        )
        .await;
        let rest = Sse::new(resp).rest().await;
        assert_eq!(
            rest.len(),
            1,
            "the request stream holds only the response: {rest:?}"
        );
        let note = stream.next_json().await.unwrap();
        assert_eq!(note["method"], "notifications/tools/list_changed");
    })
    .await;
}

/// §Sending Messages 6 and §Multiple Connections: a server→client request travels on the
/// request's stream; the client's response comes back as a POST (202).
#[tokio::test]
async fn server_to_client_request_on_the_request_stream() {
    within(async {
        let (addr, _) = start(HttpConfig::default()).await;
        let sid = open_session(addr, "2025-11-25").await;
        let resp = post(
            addr,
            &[("mcp-session-id", &sid)],
            &call(4, "ask", json!({})),
        )
        .await;
        let mut sse = Sse::new(resp);
        let ask = sse.next_json().await.unwrap();
        assert_eq!(ask["method"], "roots/list");
        let answer =
            json!({"jsonrpc":"2.0","id":ask["id"],"result":{"roots":[{"uri":"file:///r"}]}});
        let r = post(addr, &[("mcp-session-id", &sid)], &answer).await;
        assert_eq!(r.status(), 202);
        let done = sse.next_json().await.unwrap();
        assert_eq!(done["id"], 4);
        assert!(
            done["result"]["content"][0]["text"]
                .as_str()
                .unwrap()
                .contains("file:///r")
        );
        assert!(sse.next_json().await.is_none());
    })
    .await;
}

/// §Session Management 5 and 3: DELETE ends the session (200), then 404.
#[tokio::test]
async fn delete_then_404() {
    within(async {
        let (addr, _) = start(HttpConfig::default()).await;
        let sid = open_session(addr, "2025-11-25").await;
        let resp = send(addr, Method::DELETE, &[("mcp-session-id", &sid)], "").await;
        assert_eq!(resp.status(), 200);
        let resp = post(
            addr,
            &[("mcp-session-id", &sid)],
            &call(1, "echo", json!({})),
        )
        .await;
        assert_eq!(resp.status(), 404);
        let resp = send(addr, Method::DELETE, &[("mcp-session-id", &sid)], "").await;
        assert_eq!(resp.status(), 404);
    })
    .await;
}

/// §Protocol Version Header: an unsupported version → 400; an older supported one inside a
/// session is accepted; no header means 2025-03-26.
#[tokio::test]
async fn protocol_version_header() {
    within(async {
        let (addr, _) = start(HttpConfig::default()).await;
        let sid = open_session(addr, "2025-11-25").await;
        let resp = post(
            addr,
            &[
                ("mcp-session-id", &sid),
                ("mcp-protocol-version", "1999-01-01"),
            ],
            &call(1, "echo", json!({})),
        )
        .await;
        assert_eq!(resp.status(), 400);
        let resp = send(
            addr,
            Method::GET,
            &[
                ("mcp-session-id", &sid),
                ("mcp-protocol-version", "bogus"),
                ("accept", "text/event-stream"),
            ],
            "",
        )
        .await;
        assert_eq!(resp.status(), 400);
        let resp = post(
            addr,
            &[
                ("mcp-session-id", &sid),
                ("mcp-protocol-version", "2025-03-26"),
            ],
            &call(2, "echo", json!({"text":"old"})),
        )
        .await;
        assert_eq!(resp.status(), 200);
        let rest = Sse::new(resp).rest().await;
        assert_eq!(rest[0]["result"]["content"][0]["text"], "old");
    })
    .await;
}

/// Cancellation on this wire: a request the client cancelled is answered -32800 so its
/// stream ends.
#[tokio::test]
async fn cancelled_request_answered_32800() {
    within(async {
        let (addr, _) = start(HttpConfig::default()).await;
        let sid = open_session(addr, "2025-11-25").await;
        let resp = post(
            addr,
            &[("mcp-session-id", &sid)],
            &call(9, "wait", json!({})),
        )
        .await;
        let mut sse = Sse::new(resp);
        let _prime = sse.next_event().await.unwrap();
        let cancel =
            json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}});
        assert_eq!(
            post(addr, &[("mcp-session-id", &sid)], &cancel)
                .await
                .status(),
            202
        );
        let rest = sse.rest().await;
        assert_eq!(rest.len(), 1);
        assert_eq!(rest[0]["error"]["code"], -32800);
    })
    .await;
}

/// §Sending Messages 6: a disconnect is not a cancellation in this era.
#[tokio::test]
async fn disconnect_does_not_cancel() {
    within(async {
        let (addr, flags) = start(HttpConfig::default()).await;
        let sid = open_session(addr, "2025-11-25").await;
        let resp = post(
            addr,
            &[("mcp-session-id", &sid)],
            &call(1, "wait", json!({"ms": 200})),
        )
        .await;
        let mut sse = Sse::new(resp);
        let _prime = sse.next_event().await.unwrap();
        drop(sse);
        for _ in 0..200 {
            if flags.finished.load(Ordering::SeqCst) == 1 {
                assert_eq!(flags.cancelled.load(Ordering::SeqCst), 0);
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("the request did not run to the end");
    })
    .await;
}

/// JSON-response mode: a request gets `application/json`; no back channel (-32600).
#[tokio::test]
async fn json_response_mode() {
    within(async {
        let (addr, _) = start(HttpConfig::default().json_response(true)).await;
        let resp = post(
            addr,
            &[("accept", "application/json")],
            &initialize(1, "2025-11-25"),
        )
        .await;
        assert_eq!(resp.status(), 200);
        assert_eq!(
            header(&resp, "content-type").as_deref(),
            Some("application/json")
        );
        let sid = header(&resp, "mcp-session-id").unwrap();
        assert_eq!(
            json_body(resp).await["result"]["protocolVersion"],
            "2025-11-25"
        );
        let note = json!({"jsonrpc":"2.0","method":"notifications/initialized"});
        assert_eq!(
            post(addr, &[("mcp-session-id", &sid)], &note)
                .await
                .status(),
            202
        );
        let v = json_body(
            post(
                addr,
                &[("mcp-session-id", &sid), ("accept", "application/json")],
                &call(2, "ask", json!({})),
            )
            .await,
        )
        .await;
        assert!(
            v["result"]["content"][0]["text"]
                .as_str()
                .unwrap()
                .starts_with("-32600")
        );
    })
    .await;
}

/// Stateless mode: no session, no handshake needed, a request gets its own stream; GET and
/// DELETE → 405.
#[tokio::test]
async fn stateless_mode() {
    within(async {
        let (addr, _) = start(HttpConfig::default().stateless(true)).await;
        let resp = post(
            addr,
            &[("mcp-protocol-version", "2025-11-25")],
            &call(1, "notify", json!({})),
        )
        .await;
        assert_eq!(resp.status(), 200);
        assert!(header(&resp, "mcp-session-id").is_none());
        let rest = Sse::new(resp).rest().await;
        assert_eq!(rest.len(), 2);
        assert_eq!(rest[1]["result"]["content"][0]["text"], "done");
        let resp = post(addr, &[], &call(2, "ask", json!({}))).await;
        let rest = Sse::new(resp).rest().await;
        assert!(
            rest[0]["result"]["content"][0]["text"]
                .as_str()
                .unwrap()
                .starts_with("-32600")
        );
        for m in [Method::GET, Method::DELETE] {
            assert_eq!(
                send(addr, m, &[("accept", "text/event-stream")], "")
                    .await
                    .status(),
                405
            );
        }
        let note = json!({"jsonrpc":"2.0","method":"notifications/initialized"});
        assert_eq!(post(addr, &[], &note).await.status(), 202);
    })
    .await;
}

/// A second `initialize` on a live session is rejected (-32600).
#[tokio::test]
async fn second_initialize_rejected() {
    within(async {
        let (addr, _) = start(HttpConfig::default()).await;
        let sid = open_session(addr, "2025-11-25").await;
        let resp = post(
            addr,
            &[("mcp-session-id", &sid)],
            &initialize(5, "2025-11-25"),
        )
        .await;
        let rest = Sse::new(resp).rest().await;
        assert_eq!(rest[0]["error"]["code"], -32600);
    })
    .await;
}

/// §Listening for Messages: the GET stream carries keep-alive comments and
/// `X-Accel-Buffering: no`; a session whose GET stream is open is not idle (no eviction).
#[tokio::test]
async fn get_stream_keep_alive_and_not_idle() {
    within(async {
        let config = HttpConfig::default()
            .keep_alive(Duration::from_millis(50))
            .idle_timeout(Duration::from_millis(100));
        let (addr, _) = start(config).await;
        let sid = open_session(addr, "2025-11-25").await;
        let get = [
            ("mcp-session-id", sid.as_str()),
            ("accept", "text/event-stream"),
        ];
        let resp = send(addr, Method::GET, &get, "").await;
        assert_eq!(header(&resp, "x-accel-buffering").as_deref(), Some("no"));
        let mut stream = Sse::new(resp);
        let _prime = stream.next_event().await.unwrap();
        tokio::time::sleep(Duration::from_millis(400)).await;
        let resp = post(
            addr,
            &[("mcp-session-id", &sid)],
            &call(1, "broadcast", json!({})),
        )
        .await;
        assert_eq!(resp.status(), 200, "the session outlived its idle timeout");
        Sse::new(resp).rest().await;
        let note = stream.next_json().await.unwrap();
        assert_eq!(note["method"], "notifications/tools/list_changed");
        let raw = String::from_utf8(stream.raw.clone()).unwrap();
        assert!(raw.contains(":\n\n"), "keep-alive comments: {raw:?}");
    })
    .await;
}
