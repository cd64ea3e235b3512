//! The embedded authorization server's endpoints under a stalled request body (the security
//! issue's "stalled bodies and connections"): a form or registration body that stops
//! arriving is cut off with 408 once `AuthServerConfig::body_timeout` has passed.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use ferromcp_auth_server::{AuthHttpServer, AuthServerConfig};
use ferromcp_http_server::{DEFAULT_BODY_TIMEOUT, HttpConfig};
use ferromcp_server::McpServer;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

async fn ping() -> String {
    "pong".to_owned()
}

/// What the server wrote before closing the connection, or what it wrote by `wait`.
async fn answer_within(s: &mut TcpStream, wait: Duration) -> String {
    let mut got = Vec::new();
    let mut buf = [0u8; 1024];
    let deadline = tokio::time::Instant::now() + wait;
    while let Ok(Ok(n)) = tokio::time::timeout_at(deadline, s.read(&mut buf)).await {
        if n == 0 {
            break;
        }
        got.extend_from_slice(&buf[..n]);
        if got.windows(4).any(|w| w == b"\r\n\r\n") {
            break;
        }
    }
    String::from_utf8_lossy(&got).into_owned()
}

/// S48: `/token` and `/register` bodies that stall after their first bytes are answered 408
/// once the body timeout (default 30 s, here 300 ms) has passed.
#[tokio::test]
async fn s48_stalled_authorization_server_bodies_are_cut_off() {
    tokio::time::timeout(Duration::from_secs(60), async {
        assert_eq!(
            AuthServerConfig::default().body_timeout,
            DEFAULT_BODY_TIMEOUT
        );
        let server = McpServer::builder("slow", "1.0.0")
            .tool("ping", ping)
            .build()
            .unwrap();
        let timeout = Duration::from_millis(300);
        let config = AuthServerConfig::default().body_timeout(timeout);
        let srv = AuthHttpServer::bind(
            "127.0.0.1:0",
            server.server().clone(),
            HttpConfig::default(),
            config,
        )
        .await
        .unwrap();
        let addr: SocketAddr = srv.local_addr();
        tokio::spawn(srv.run());
        for (path, ct, first) in [
            (
                "/token",
                "application/x-www-form-urlencoded",
                "grant_type=auth",
            ),
            ("/register", "application/json", "{\"redirect_uris\""),
        ] {
            let mut s = TcpStream::connect(addr).await.unwrap();
            let head = format!(
                "POST {path} HTTP/1.1\r\nhost: {addr}\r\ncontent-type: {ct}\r\n\
                 content-length: 1000\r\n\r\n{first}"
            );
            let began = Instant::now();
            s.write_all(head.as_bytes()).await.unwrap();
            let answer = answer_within(&mut s, Duration::from_secs(10)).await;
            let took = began.elapsed();
            assert!(answer.starts_with("HTTP/1.1 408"), "{path}: {answer:?}");
            assert!(took >= timeout, "{path}: cut off after {took:?}");
            assert!(took < Duration::from_secs(5), "{path}: only after {took:?}");
        }
        drop(server);
    })
    .await
    .unwrap();
}
