//! Security checks and limits of the Streamable HTTP server (MCP 2025-11-25 and 2026-07-28
//! "Streamable HTTP › Security Warning"; ferromcp's bounded-by-default rules: body size,
//! content type, sessions, timeouts, in-flight requests, queues).
#![allow(clippy::unwrap_used, clippy::panic)]

mod http_support;

use std::time::Duration;

use ferromcp_http_server::{DEFAULT_MAX_BODY_SIZE, HttpConfig};
use http::Method;
use http_support::*;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

async fn within<F: std::future::Future>(f: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(30), f)
        .await
        .unwrap()
}

/// Security Warning 1: on a loopback bind, a foreign Host → 421 and a foreign Origin → 403;
/// loopback origins and a missing Origin pass.
#[tokio::test]
async fn dns_rebinding_protection_on_loopback() {
    within(async {
        let (addr, _) = start(HttpConfig::default()).await;
        let body = initialize(1, "2025-11-25");
        assert_eq!(
            post(addr, &[("host", "evil.example:80")], &body)
                .await
                .status(),
            421
        );
        assert_eq!(post(addr, &[("host", "")], &body).await.status(), 421);
        assert_eq!(
            post(addr, &[("origin", "http://evil.example")], &body)
                .await
                .status(),
            403
        );
        let ok = format!("http://localhost:{}", addr.port());
        assert_eq!(post(addr, &[("origin", &ok)], &body).await.status(), 200);
        let local = format!("localhost:{}", addr.port());
        assert_eq!(post(addr, &[("host", &local)], &body).await.status(), 200);
        // The 2026-07-28 entry and GET are checked as well.
        let h = [
            ("host", "evil.example"),
            ("mcp-protocol-version", "2026-07-28"),
        ];
        assert_eq!(post(addr, &h, &body).await.status(), 421);
        let h = [
            ("origin", "http://evil.example"),
            ("accept", "text/event-stream"),
        ];
        assert_eq!(send(addr, Method::GET, &h, "").await.status(), 403);
    })
    .await;
}

/// Explicit allowlists replace the loopback defaults.
#[tokio::test]
async fn explicit_allowlists() {
    within(async {
        let config = HttpConfig::default()
            .allowed_hosts(["mcp.example"])
            .allowed_origins(["https://app.example"]);
        let (addr, _) = start(config).await;
        let body = initialize(1, "2025-11-25");
        assert_eq!(post(addr, &[], &body).await.status(), 421);
        let h = [("host", "mcp.example"), ("origin", "https://app.example")];
        assert_eq!(post(addr, &h, &body).await.status(), 200);
    })
    .await;
}

/// ferromcp: a POST without `application/json` content → 415 (both eras).
#[tokio::test]
async fn content_type_415() {
    within(async {
        let (addr, _) = start(HttpConfig::default()).await;
        let body = initialize(1, "2025-11-25");
        assert_eq!(
            post(addr, &[("content-type", "text/plain")], &body)
                .await
                .status(),
            415
        );
        assert_eq!(
            post(addr, &[("content-type", "")], &body).await.status(),
            415
        );
        let h = [
            ("content-type", "text/plain"),
            ("mcp-protocol-version", "2026-07-28"),
        ];
        assert_eq!(post(addr, &h, &body).await.status(), 415);
        let h = [("content-type", "application/json; charset=utf-8")];
        assert_eq!(post(addr, &h, &body).await.status(), 200);
    })
    .await;
}

/// The body limit (default 4 MiB): a declared length over it → 413; a chunked body is
/// counted as it streams → 413.
#[tokio::test]
async fn body_limit_413() {
    within(async {
        assert_eq!(HttpConfig::default().max_body_size, DEFAULT_MAX_BODY_SIZE);
        let (addr, _) = start(HttpConfig::default().max_body_size(1024)).await;
        let big = format!("{{\"pad\":\"{}\"}}", "x".repeat(2000));
        assert_eq!(send(addr, Method::POST, &[], big).await.status(), 413);
        // Chunked: no Content-Length to trust.
        let mut s = TcpStream::connect(addr).await.unwrap();
        let head = format!(
            "POST /mcp HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\n\
             accept: application/json, text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
        );
        s.write_all(head.as_bytes()).await.unwrap();
        let chunk = "y".repeat(600);
        for _ in 0..3 {
            let frame = format!("{:x}\r\n{chunk}\r\n", chunk.len());
            if s.write_all(frame.as_bytes()).await.is_err() {
                break;
            }
        }
        let mut buf = vec![0u8; 256];
        let n = tokio::time::timeout(WAIT, s.read(&mut buf))
            .await
            .unwrap()
            .unwrap();
        let text = String::from_utf8_lossy(&buf[..n]);
        assert!(text.starts_with("HTTP/1.1 413"), "{text}");
    })
    .await;
}

/// The session cap → 503 with a clear body.
#[tokio::test]
async fn session_cap_503() {
    within(async {
        let (addr, _) = start(HttpConfig::default().max_sessions(2)).await;
        open_session(addr, "2025-11-25").await;
        open_session(addr, "2025-11-25").await;
        let resp = post(addr, &[], &initialize(1, "2025-11-25")).await;
        assert_eq!(resp.status(), 503);
        assert!(text(resp).await.contains("Too many sessions"));
    })
    .await;
}

/// The idle timeout ends a quiet session (then 404) and frees its slot.
#[tokio::test]
async fn idle_timeout_evicts() {
    within(async {
        let config = HttpConfig::default()
            .idle_timeout(Duration::from_millis(150))
            .max_sessions(1);
        let (addr, _) = start(config).await;
        let sid = open_session(addr, "2025-11-25").await;
        tokio::time::sleep(Duration::from_millis(400)).await;
        let resp = post(
            addr,
            &[("mcp-session-id", &sid)],
            &call(1, "echo", json!({})),
        )
        .await;
        assert_eq!(resp.status(), 404);
        open_session(addr, "2025-11-25").await;
    })
    .await;
}

/// The pre-initialize timeout ends a session whose handshake never completed.
#[tokio::test]
async fn init_timeout_evicts() {
    within(async {
        let config = HttpConfig::default().init_timeout(Duration::from_millis(100));
        let (addr, _) = start(config).await;
        // An initialize the kernel rejects (no capabilities): the session is never ready.
        let bad = json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}});
        let resp = post(addr, &[], &bad).await;
        let sid = header(&resp, "mcp-session-id").unwrap();
        let events = Sse::new(resp).rest().await;
        assert_eq!(events[0]["error"]["code"], -32602);
        tokio::time::sleep(Duration::from_millis(400)).await;
        let resp = post(addr, &[("mcp-session-id", &sid)], &call(2, "echo", json!({}))).await;
        assert_eq!(resp.status(), 404);
    })
    .await;
}

/// The per-session in-flight cap → 429.
#[tokio::test]
async fn in_flight_cap_429() {
    within(async {
        let (addr, _) = start(HttpConfig::default().max_in_flight(1)).await;
        let sid = open_session(addr, "2025-11-25").await;
        let first = post(
            addr,
            &[("mcp-session-id", &sid)],
            &call(1, "wait", json!({"ms": 300})),
        )
        .await;
        assert_eq!(first.status(), 200);
        let second = post(
            addr,
            &[("mcp-session-id", &sid)],
            &call(2, "echo", json!({})),
        )
        .await;
        assert_eq!(second.status(), 429);
        let body = json_body(second).await;
        assert_eq!(body["error"]["code"], -32600);
        // Marked as the dispatcher's overload refusal is (`ferromcp_dispatch::Overloaded`).
        assert_eq!(body["error"]["data"]["overloaded"]["limit"], 1, "{body}");
        Sse::new(first).rest().await;
        let third = post(
            addr,
            &[("mcp-session-id", &sid)],
            &call(3, "echo", json!({"text":"ok"})),
        )
        .await;
        assert_eq!(third.status(), 200);
    })
    .await;
}

/// The per-session inbound queue: with the dispatcher busy, queued messages beyond the
/// bound → 503.
#[tokio::test]
async fn inbound_queue_503() {
    within(async {
        let config = HttpConfig::default().max_in_flight(1).inbound_queue(1);
        let (addr, _) = start(config).await;
        let sid = open_session(addr, "2025-11-25").await;
        let busy = post(
            addr,
            &[("mcp-session-id", &sid)],
            &call(1, "wait", json!({"ms": 500})),
        )
        .await;
        let note = json!({"jsonrpc":"2.0","method":"notifications/custom"});
        let mut saw_503 = false;
        for _ in 0..10 {
            let r = post(addr, &[("mcp-session-id", &sid)], &note).await;
            if r.status() == 503 {
                saw_503 = true;
                break;
            }
            assert_eq!(r.status(), 202);
        }
        assert!(saw_503, "the inbound queue never filled");
        drop(busy);
    })
    .await;
}

/// A request on another path of [`HttpServer`] → 404.
#[tokio::test]
async fn other_paths_404() {
    within(async {
        let (addr, _) = start(HttpConfig::default()).await;
        let resp = send_path(addr, Method::POST, "/other", &[], "{}").await;
        assert_eq!(resp.status(), 404);
        let (addr, _) = start(HttpConfig::default().path("/api")).await;
        let resp = send_path(
            addr,
            Method::POST,
            "/api",
            &[],
            initialize(1, "2025-11-25").to_string(),
        )
        .await;
        assert_eq!(resp.status(), 200);
    })
    .await;
}

/// `HttpServer::run_until`: after the shutdown signal no new connection is accepted.
#[tokio::test]
async fn run_until_stops_accepting() {
    within(async {
        let srv = ferromcp_http_server::HttpServer::bind(
            "127.0.0.1:0",
            test_server(std::sync::Arc::default()),
            HttpConfig::default(),
        )
        .await
        .unwrap();
        let addr = srv.local_addr();
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(srv.run_until(async {
            let _ = rx.await;
        }));
        assert_eq!(
            post(addr, &[], &initialize(1, "2025-11-25")).await.status(),
            200
        );
        tx.send(()).unwrap();
        task.await.unwrap().unwrap();
        assert!(TcpStream::connect(addr).await.is_err());
    })
    .await;
}
