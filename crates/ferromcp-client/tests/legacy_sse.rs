//! The 2024-11-05 HTTP+SSE client transport: chosen explicitly or reached by the fallback of
//! MCP 2025-03-26 "Backwards Compatibility" (C34, C35), an `endpoint` on another origin
//! refused (C36), a stream without its `endpoint` event given up (C37), requests failed when
//! the stream ends (C38).
#![allow(clippy::unwrap_used, clippy::panic)]

mod http_support;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use ferromcp_client::transport::http::{DEFAULT_LEGACY_ENDPOINT_TIMEOUT, HttpConfig};
use ferromcp_client::{Client, HttpTransport};
use ferromcp_http_server::HttpServer;
use ferromcp_types::mcp::ListRootsResult;
use http_support::{Flags, first_text, test_server, within};
use serde_json::json;
use tokio::net::TcpListener;

/// ferromcp's server with the 2024-11-05 HTTP+SSE transport on: its address.
async fn sse_server() -> SocketAddr {
    let config = ferromcp_http_server::HttpConfig::default().legacy_sse(true);
    let srv = HttpServer::bind(
        "127.0.0.1:0",
        test_server(Arc::new(Flags::default())),
        config,
    )
    .await
    .unwrap();
    let addr = srv.local_addr();
    tokio::spawn(srv.run());
    addr
}

async fn connect(t: HttpTransport) -> Result<Client, ferromcp_client::ClientError> {
    Client::builder()
        .on_roots(|| async { Ok(ListRootsResult::new(Vec::new())) })
        .connect(t)
        .await
}

/// C34: `HttpTransport::legacy_sse` speaks the old transport from the start: the handshake
/// (2024-11-05 is accepted), calls, a server→client request, shutdown.
#[tokio::test]
async fn c34_the_http_sse_transport_reaches_a_2024_11_05_server() {
    within(Box::pin(async {
        let addr = sse_server().await;
        let t = HttpTransport::legacy_sse(format!("http://{addr}/sse")).unwrap();
        let client = connect(t).await.unwrap();
        assert_eq!(client.session().era, ferromcp_types::Era::Handshake);
        let tools = client.list_tools(None).await.unwrap();
        assert!(tools.tools.iter().any(|t| t.name == "echo"));
        let r = client
            .call_tool("echo", json!({"text": "old"}))
            .await
            .unwrap();
        assert_eq!(first_text(&r), "old");
        let r = client.call_tool("ask", json!({})).await.unwrap();
        assert!(!r.is_error.unwrap_or(false));
        client.shutdown().await;
    }))
    .await;
}

/// C35: a plain `HttpTransport` on an HTTP+SSE server's URL falls back: its `initialize`
/// POST is refused (405), it GETs the URL, reads `endpoint`, and goes on over the old
/// transport; with the fallback off the connect fails, and on a URL that offers no stream
/// either the original refusal is the error.
#[tokio::test]
async fn c35_a_refused_initialize_falls_back_to_http_sse() {
    within(Box::pin(async {
        let addr = sse_server().await;
        let url = format!("http://{addr}/sse");
        let client = connect(HttpTransport::new(&url).unwrap()).await.unwrap();
        let r = client
            .call_tool("echo", json!({"text": "fell back"}))
            .await
            .unwrap();
        assert_eq!(first_text(&r), "fell back");
        client.shutdown().await;
        let off = HttpTransport::new(&url)
            .unwrap()
            .config(HttpConfig::default().legacy_sse_fallback(false));
        assert!(connect(off).await.is_err());
        // A URL with no stream either: the refusal stands (404), not the fallback's error.
        let nowhere = HttpTransport::new(format!("http://{addr}/nowhere")).unwrap();
        let e = connect(nowhere).await.err().unwrap().to_string();
        assert!(e.contains("404") && !e.contains("HTTP+SSE"), "{e}");
    }))
    .await;
}

/// A fake HTTP+SSE server on raw sockets: other methods answer 405; a GET answers an event
/// stream (read to the connection's end) that sends `first` (if any), then only keep-alive
/// comments. Returns its address.
async fn fake(first: Option<String>) -> SocketAddr {
    fake_for(first, Duration::MAX).await
}

/// [`fake`] whose streams end after `open_for`, and whose `/messages` accepts POSTs (202)
/// without ever answering them.
async fn fake_for(first: Option<String>, open_for: Duration) -> SocketAddr {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((mut s, _)) = listener.accept().await else {
                return;
            };
            let first = first.clone();
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut buf = [0u8; 1024];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match s.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                if head.starts_with(b"POST /messages") {
                    let _ = s
                        .write_all(b"HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                        .await;
                    return;
                }
                if !head.starts_with(b"GET ") {
                    let _ = s
                        .write_all(b"HTTP/1.1 405 Method Not Allowed\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                        .await;
                    return;
                }
                let mut out = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n".to_vec();
                out.extend_from_slice(first.unwrap_or_default().as_bytes());
                if s.write_all(&out).await.is_err() {
                    return;
                }
                let until = tokio::time::Instant::now() + open_for.min(Duration::from_secs(3600));
                while tokio::time::Instant::now() < until {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    if s.write_all(b":\n\n").await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    addr
}

/// C36: an `endpoint` on another origin (another port here, where a listener counts
/// connections) is refused, explicitly chosen or by the fallback: the connect fails and no
/// message is POSTed there.
#[tokio::test]
async fn c36_an_endpoint_on_another_origin_is_refused() {
    within(Box::pin(async {
        let elsewhere = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let other = elsewhere.local_addr().unwrap();
        let hits = Arc::new(AtomicUsize::new(0));
        let h = hits.clone();
        tokio::spawn(async move {
            while elsewhere.accept().await.is_ok() {
                h.fetch_add(1, Ordering::SeqCst);
            }
        });
        for endpoint in [
            format!("http://{other}/messages?sessionId=x"),
            format!("//{other}/messages"),
            "http://evil.example/messages".to_owned(),
        ] {
            let addr = fake(Some(format!("event: endpoint\ndata: {endpoint}\n\n"))).await;
            let url = format!("http://{addr}/sse");
            let e = connect(HttpTransport::legacy_sse(&url).unwrap()).await;
            let e = e.err().unwrap().to_string();
            assert!(e.contains("another origin"), "{e}");
            assert!(connect(HttpTransport::new(&url).unwrap()).await.is_err());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert_eq!(
            hits.load(Ordering::SeqCst),
            0,
            "a message went to the other origin"
        );
    }))
    .await;
}

/// C37: a stream whose first event is not `endpoint`, or that sends none (keep-alive
/// comments only), is given up: at once, or after `legacy_endpoint_timeout`.
#[tokio::test]
async fn c37_a_stream_without_its_endpoint_event_is_given_up() {
    within(Box::pin(async {
        assert_eq!(DEFAULT_LEGACY_ENDPOINT_TIMEOUT, Duration::from_secs(10));
        let addr = fake(Some("event: message\ndata: {}\n\n".into())).await;
        let t = HttpTransport::legacy_sse(format!("http://{addr}/sse")).unwrap();
        let e = connect(t).await.err().unwrap().to_string();
        assert!(e.contains("not \"endpoint\""), "{e}");

        let addr = fake(None).await;
        let t = HttpTransport::legacy_sse(format!("http://{addr}/sse"))
            .unwrap()
            .config(HttpConfig::default().legacy_endpoint_timeout(Duration::from_millis(300)));
        let started = tokio::time::Instant::now();
        let e = connect(t).await.err().unwrap().to_string();
        assert!(e.contains("in time"), "{e}");
        assert!(started.elapsed() < Duration::from_secs(5));
    }))
    .await;
}

/// C38: requests waiting for their answer fail (-32000) when the stream ends, instead of
/// hanging: here the `initialize` POSTed to a server that accepts and never answers.
#[tokio::test]
async fn c38_requests_fail_when_the_stream_ends() {
    within(async {
        let first = "event: endpoint\ndata: /messages?sessionId=s\n\n".to_owned();
        let addr = fake_for(Some(first), Duration::from_millis(500)).await;
        let t = HttpTransport::legacy_sse(format!("http://{addr}/sse")).unwrap();
        let started = tokio::time::Instant::now();
        let e = connect(t).await.err().unwrap().to_string();
        assert!(e.contains("stream ended"), "{e}");
        assert!(started.elapsed() < Duration::from_secs(10));
    })
    .await;
}
