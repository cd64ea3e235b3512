//! Slow and stalled clients (the security issue's "stalled bodies and connections"): a request
//! body or head that stops arriving is cut off, idle kept-alive connections are closed, and
//! open connections are capped per peer address and in total, so that hundreds of stalled
//! connections do not keep a normal client from being served. Distinct peers are distinct
//! loopback addresses (127.0.0.2, 127.0.0.3, …: Linux routes all of 127.0.0.0/8 to `lo`).
#![allow(clippy::unwrap_used, clippy::panic)]

mod http_support;

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ferromcp_http_server::{
    DEFAULT_BODY_TIMEOUT, DEFAULT_HEADER_READ_TIMEOUT, DEFAULT_MAX_CONNECTIONS,
    DEFAULT_MAX_CONNECTIONS_PER_PEER, HttpConfig, McpHttpService,
};
use http_support::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

async fn within<F: std::future::Future>(f: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(60), f)
        .await
        .unwrap()
}

/// A connection to `addr` from the loopback address `127.0.0.<host>`.
async fn connect_from(host: u8, addr: SocketAddr) -> TcpStream {
    let socket = TcpSocket::new_v4().unwrap();
    socket
        .bind(SocketAddr::from((Ipv4Addr::new(127, 0, 0, host), 0)))
        .unwrap();
    socket.connect(addr).await.unwrap()
}

/// The head of an `initialize` POST that declares `len` body bytes.
fn head(addr: SocketAddr, len: usize) -> String {
    format!(
        "POST /mcp HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\n\
         accept: application/json, text/event-stream\r\ncontent-length: {len}\r\n\r\n"
    )
}

/// Sends a head and the first bytes of its body, then stalls.
async fn stall_in_body(s: &mut TcpStream, addr: SocketAddr) {
    s.write_all(head(addr, 1000).as_bytes()).await.unwrap();
    s.write_all(br#"{"jsonrpc":"2.0","#).await.unwrap();
}

/// Sends part of a request head, then stalls.
async fn stall_in_head(s: &mut TcpStream, addr: SocketAddr) {
    let part = format!("POST /mcp HTTP/1.1\r\nhost: {addr}\r\ncontent-ty");
    s.write_all(part.as_bytes()).await.unwrap();
}

/// What the server did with a connection within `wait`: `None` if it is still open and
/// silent, else what it wrote before closing it (possibly nothing).
async fn closed_within(s: &mut TcpStream, wait: Duration) -> Option<String> {
    let mut got = Vec::new();
    let mut buf = [0u8; 1024];
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        match tokio::time::timeout_at(deadline, s.read(&mut buf)).await {
            Err(_) => return None,
            Ok(Ok(0)) | Ok(Err(_)) => return Some(String::from_utf8_lossy(&got).into_owned()),
            Ok(Ok(n)) => got.extend_from_slice(&buf[..n]),
        }
    }
}

/// A complete `initialize` exchange on `s`: the status line of its answer.
async fn exchange(s: &mut TcpStream, addr: SocketAddr) -> String {
    let body = initialize(1, "2025-11-25").to_string();
    let req = head(addr, body.len()) + &body;
    if s.write_all(req.as_bytes()).await.is_err() {
        return "write failed".to_owned();
    }
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while !got.windows(2).any(|w| w == b"\r\n") {
        match tokio::time::timeout(WAIT, s.read(&mut buf)).await.unwrap() {
            Ok(0) | Err(_) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
    }
    let text = String::from_utf8_lossy(&got).into_owned();
    text.lines().next().unwrap_or_default().to_owned()
}

/// Serves `config` as a service mounted in axum.
async fn mounted(config: HttpConfig) -> SocketAddr {
    let svc = McpHttpService::new(test_server(Arc::default()), config);
    let app = axum::Router::new().route_service("/mcp", svc);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    addr
}

/// S48: a request body that stops arriving is cut off once the body timeout (default 30 s,
/// here 300 ms) has passed since its head: 408, and the connection is closed; bound or
/// mounted in axum. A body that arrives in time is served.
#[tokio::test]
async fn s48_stalled_body_is_cut_off_with_408() {
    within(async {
        assert_eq!(DEFAULT_BODY_TIMEOUT, Duration::from_secs(30));
        assert_eq!(HttpConfig::default().body_timeout, DEFAULT_BODY_TIMEOUT);
        let timeout = Duration::from_millis(300);
        let config = HttpConfig::default().body_timeout(timeout);
        let (bound, _) = start(config.clone()).await;
        let mounted = mounted(config).await;
        for addr in [bound, mounted] {
            let mut s = TcpStream::connect(addr).await.unwrap();
            let began = Instant::now();
            stall_in_body(&mut s, addr).await;
            let answer = closed_within(&mut s, Duration::from_secs(10)).await;
            let took = began.elapsed();
            let answer = answer.expect("the stalled connection was never closed");
            assert!(answer.starts_with("HTTP/1.1 408"), "{addr}: {answer:?}");
            assert!(took >= timeout, "cut off after {took:?}");
            assert!(took < Duration::from_secs(5), "cut off only after {took:?}");
            // In time: served.
            let mut s = TcpStream::connect(addr).await.unwrap();
            assert!(exchange(&mut s, addr).await.starts_with("HTTP/1.1 200"));
        }
    })
    .await;
}

/// S49: a request head that stops arriving, a connection that never sends one, and a
/// kept-alive connection left idle after its exchange are closed once the header-read
/// timeout (default 30 s, here 300 ms) has passed.
#[tokio::test]
async fn s49_stalled_head_and_idle_connections_are_closed() {
    within(async {
        assert_eq!(DEFAULT_HEADER_READ_TIMEOUT, Duration::from_secs(30));
        assert_eq!(
            HttpConfig::default().header_read_timeout,
            DEFAULT_HEADER_READ_TIMEOUT
        );
        let timeout = Duration::from_millis(300);
        let (addr, _) = start(HttpConfig::default().header_read_timeout(timeout)).await;
        let mut partial = TcpStream::connect(addr).await.unwrap();
        stall_in_head(&mut partial, addr).await;
        let mut silent = TcpStream::connect(addr).await.unwrap();
        let mut idle = TcpStream::connect(addr).await.unwrap();
        assert!(exchange(&mut idle, addr).await.starts_with("HTTP/1.1 200"));
        let began = Instant::now();
        for (what, s) in [
            ("partial head", &mut partial),
            ("nothing sent", &mut silent),
            ("idle after an exchange", &mut idle),
        ] {
            let closed = closed_within(s, Duration::from_secs(10)).await;
            assert!(closed.is_some(), "{what}: never closed");
        }
        assert!(
            began.elapsed() < Duration::from_secs(5),
            "{:?}",
            began.elapsed()
        );
    })
    .await;
}

/// S50: connections from one peer address are capped (default 256, here 3): one more is
/// answered 503 and closed at once, while other peers are served; when one of the peer's
/// connections ends, its slot is free again.
#[tokio::test]
async fn s50_connections_per_peer_are_capped() {
    within(async {
        assert_eq!(DEFAULT_MAX_CONNECTIONS_PER_PEER, 256);
        assert_eq!(
            HttpConfig::default().max_connections_per_peer,
            DEFAULT_MAX_CONNECTIONS_PER_PEER
        );
        let (addr, _) = start(HttpConfig::default().max_connections_per_peer(3)).await;
        let mut held = Vec::new();
        for _ in 0..3 {
            held.push(connect_from(2, addr).await);
        }
        let mut over = connect_from(2, addr).await;
        let refused = closed_within(&mut over, Duration::from_secs(5)).await;
        let refused = refused.expect("a 4th connection from the peer was kept");
        assert!(
            refused.is_empty() || refused.starts_with("HTTP/1.1 503"),
            "{refused:?}"
        );
        // The peer's held connections are still open; another peer is served.
        for s in &mut held {
            assert_eq!(closed_within(s, Duration::from_millis(50)).await, None);
        }
        let mut other = connect_from(3, addr).await;
        assert!(exchange(&mut other, addr).await.starts_with("HTTP/1.1 200"));
        // One of the three ends: the peer may connect again.
        drop(held.pop());
        let mut served = false;
        for _ in 0..50 {
            let mut again = connect_from(2, addr).await;
            if exchange(&mut again, addr).await.starts_with("HTTP/1.1 200") {
                served = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(served, "the freed slot was never reused");
    })
    .await;
}

/// S50: connections are capped in total (default 1024, here 4): with four open from four
/// peers, a fifth peer's connection is answered 503 and closed; when one ends, the next is
/// served.
#[tokio::test]
async fn s50_connections_in_total_are_capped() {
    within(async {
        assert_eq!(DEFAULT_MAX_CONNECTIONS, 1024);
        assert_eq!(
            HttpConfig::default().max_connections,
            DEFAULT_MAX_CONNECTIONS
        );
        let (addr, _) = start(HttpConfig::default().max_connections(4)).await;
        let mut held = Vec::new();
        for host in 2..6 {
            held.push(connect_from(host, addr).await);
        }
        let mut over = connect_from(6, addr).await;
        let refused = closed_within(&mut over, Duration::from_secs(5)).await;
        let refused = refused.expect("a 5th connection was kept");
        assert!(
            refused.is_empty() || refused.starts_with("HTTP/1.1 503"),
            "{refused:?}"
        );
        drop(held.pop());
        let mut served = false;
        for _ in 0..50 {
            let mut again = connect_from(6, addr).await;
            if exchange(&mut again, addr).await.starts_with("HTTP/1.1 200") {
                served = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(served, "the freed slot was never reused");
    })
    .await;
}

/// S51: 300 stalled connections from ten peers (half stalled in the head, half in the
/// body) and one more peer opening 300 (256 kept, the rest refused at once), with the default
/// caps: a normal client is served while they are all held (20 requests, each well under a
/// second), and every stalled connection is closed once the timeouts (here 4 s) pass.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s51_hundreds_of_stalled_connections_do_not_starve_a_normal_client() {
    within(async {
        let timeout = Duration::from_secs(4);
        let config = HttpConfig::default()
            .body_timeout(timeout)
            .header_read_timeout(timeout);
        let (addr, _) = start(config).await;
        let opened = Instant::now();
        let mut stalled = Vec::new();
        for i in 0..300usize {
            let host = 2 + (i % 10) as u8;
            let mut s = connect_from(host, addr).await;
            if i % 2 == 0 {
                stall_in_head(&mut s, addr).await;
            } else {
                stall_in_body(&mut s, addr).await;
            }
            stalled.push(s);
        }
        let mut greedy = Vec::new();
        for _ in 0..300 {
            greedy.push(connect_from(20, addr).await);
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
        // The greedy peer: 256 kept (silent), 44 refused at once.
        let mut refused = 0;
        for s in &mut greedy {
            if closed_within(s, Duration::from_millis(2)).await.is_some() {
                refused += 1;
            }
        }
        assert_eq!(
            refused,
            300 - DEFAULT_MAX_CONNECTIONS_PER_PEER,
            "the per-peer cap"
        );
        let began = Instant::now();
        let mut worst = Duration::ZERO;
        for i in 0..20 {
            let t = Instant::now();
            let resp = post(addr, &[], &initialize(i, "2025-11-25")).await;
            assert_eq!(resp.status(), 200, "request {i}");
            let _ = text(resp).await;
            worst = worst.max(t.elapsed());
        }
        let served = began.elapsed();
        assert!(
            opened.elapsed() < timeout,
            "served only after {:?}: the stalled connections were already cut off",
            opened.elapsed()
        );
        assert!(worst < Duration::from_secs(1), "slowest request {worst:?}");
        // Every stalled connection is cut off after the timeouts.
        for (i, s) in stalled.iter_mut().enumerate() {
            let closed = closed_within(s, Duration::from_secs(10)).await;
            assert!(closed.is_some(), "stalled connection {i} never closed");
        }
        for s in &mut greedy {
            assert!(closed_within(s, Duration::from_secs(10)).await.is_some());
        }
        eprintln!(
            "s51: 20 requests served among 556 held connections in {served:?}, slowest \
             {worst:?}; all cut off {:?} after opening",
            opened.elapsed()
        );
    })
    .await;
}
