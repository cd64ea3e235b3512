//! Handshake-era session slots cannot be hogged: live sessions are capped per peer address
//! (requests without a principal, S53) and per principal (S54), on top of the total cap; a
//! session that never sends a request after its `initialize` ends after the first-request
//! timeout, not the idle timeout (S55). Behind a trusted reverse proxy, the peer is the
//! client its `X-Forwarded-For` names (S104).
#![allow(clippy::unwrap_used, clippy::panic)]

mod http_support;

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use ferromcp_http_server::{DEFAULT_MAX_SESSIONS_PER_PEER, HttpConfig, McpHttpService};
use http_body_util::Full;
use http_support::*;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::net::TcpSocket;

async fn within<F: std::future::Future>(f: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(120), f)
        .await
        .unwrap()
}

/// POSTs `body` to `addr` from the local address `from` (any 127.0.0.0/8 address is this
/// host on Linux), on a fresh connection.
async fn post_from(
    from: Ipv4Addr,
    addr: SocketAddr,
    headers: &[(&str, &str)],
    body: &Value,
) -> http::Response<Incoming> {
    let socket = TcpSocket::new_v4().unwrap();
    socket.bind(SocketAddr::new(IpAddr::V4(from), 0)).unwrap();
    let stream = socket.connect(addr).await.unwrap();
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(conn);
    let mut req = http::Request::post("/mcp")
        .header("host", addr.to_string())
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let req = req.body(Full::new(Bytes::from(body.to_string()))).unwrap();
    sender.send_request(req).await.unwrap()
}

/// An `initialize` from `from`: its status (and the session id when one was created).
async fn init_from(from: Ipv4Addr, addr: SocketAddr, extra: &[(&str, &str)]) -> (u16, String) {
    let resp = post_from(from, addr, extra, &initialize(1, "2025-11-25")).await;
    let status = resp.status().as_u16();
    let sid = header(&resp, "mcp-session-id").unwrap_or_default();
    let body = text(resp).await;
    if status == 429 {
        assert!(body.contains("Too many sessions for this"), "{body}");
    }
    (status, sid)
}

/// One peer opening thousands of sessions gets its cap's worth (then 429), and a client from
/// another address is still served, although the peer asked for more than the total cap.
#[tokio::test]
async fn s53_one_peer_cannot_take_every_session_slot() {
    within(async {
        assert_eq!(DEFAULT_MAX_SESSIONS_PER_PEER, 64);
        let config = HttpConfig::default().max_sessions(1000);
        assert_eq!(config.max_sessions_per_peer, DEFAULT_MAX_SESSIONS_PER_PEER);
        let (addr, _) = start(config).await;
        let hog = Ipv4Addr::new(127, 0, 0, 1);
        let mut opened = 0;
        let mut refused = 0;
        // 2048 initializes, 16 at a time.
        for _ in 0..128 {
            let batch = (0..16).map(|_| init_from(hog, addr, &[]));
            for (status, _) in futures_join_all(batch).await {
                match status {
                    200 => opened += 1,
                    429 => refused += 1,
                    other => panic!("unexpected status {other}"),
                }
            }
        }
        assert_eq!(opened, DEFAULT_MAX_SESSIONS_PER_PEER);
        assert_eq!(refused, 2048 - DEFAULT_MAX_SESSIONS_PER_PEER);
        // Another peer is served, and gets its own cap.
        let other = Ipv4Addr::new(127, 0, 0, 2);
        let (status, sid) = init_from(other, addr, &[]).await;
        assert_eq!(status, 200);
        let resp = post_from(
            other,
            addr,
            &[
                ("mcp-session-id", &sid),
                ("mcp-protocol-version", "2025-11-25"),
            ],
            &call(2, "echo", json!({"text": "still served"})),
        )
        .await;
        assert_eq!(resp.status(), 200);
        let events = Sse::new(resp).rest().await;
        assert_eq!(
            events[0]["result"]["content"][0]["text"], "still served",
            "{events:?}"
        );
    })
    .await;
}

/// Ending a session gives its slot back to its peer at once (DELETE), and a small cap is
/// honoured exactly.
#[tokio::test]
async fn s53_a_deleted_session_frees_its_peers_slot() {
    within(async {
        let (addr, _) = start(HttpConfig::default().max_sessions_per_peer(2)).await;
        let me = Ipv4Addr::new(127, 0, 0, 3);
        let (s1, sid) = init_from(me, addr, &[]).await;
        let (s2, _) = init_from(me, addr, &[]).await;
        let (s3, _) = init_from(me, addr, &[]).await;
        assert_eq!((s1, s2, s3), (200, 200, 429));
        let resp = send(
            addr,
            http::Method::DELETE,
            &[
                ("mcp-session-id", &sid),
                ("mcp-protocol-version", "2025-11-25"),
            ],
            "",
        )
        .await;
        assert_eq!(resp.status(), 200);
        assert_eq!(init_from(me, addr, &[]).await.0, 200);
    })
    .await;
}

/// A service mounted without the peer address (no `PeerAddr` in the request's extensions,
/// as in an axum router) counts every caller without a principal as one peer: the cap still
/// holds, it cannot be escaped by being unknown.
#[tokio::test]
async fn s53_without_a_peer_address_every_caller_shares_one_cap() {
    within(async {
        let svc = McpHttpService::new(
            test_server(Arc::new(Flags::default())),
            HttpConfig::default().max_sessions_per_peer(3),
        );
        let mut statuses = Vec::new();
        for _ in 0..5 {
            let req = http::Request::post("/mcp")
                .header("host", "localhost")
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .body(Full::new(Bytes::from(
                    initialize(1, "2025-11-25").to_string(),
                )))
                .unwrap();
            statuses.push(svc.handle(req).await.status().as_u16());
        }
        assert_eq!(statuses, [200, 200, 200, 429, 429]);
        assert_eq!(svc.session_count(), 3);
    })
    .await;
}

/// With `auth`, one principal's sessions are capped whatever address they come from, and
/// another principal is still served.
#[cfg(feature = "auth")]
#[tokio::test]
async fn s54_one_principal_is_capped_another_is_served() {
    use ferromcp_http_server::auth::{AuthConfig, Principal, StaticVerifier};
    use ferromcp_http_server::{DEFAULT_MAX_SESSIONS_PER_PRINCIPAL, HttpServer};
    within(async {
        assert_eq!(DEFAULT_MAX_SESSIONS_PER_PRINCIPAL, 64);
        let verifier = StaticVerifier::new()
            .token("alice-token", Principal::new("alice"))
            .token("bob-token", Principal::new("bob"));
        let auth = AuthConfig::new("https://mcp.example/mcp", verifier)
            .authorization_server("https://as.example");
        let config = HttpConfig::default()
            .auth(auth)
            .max_sessions_per_principal(3)
            // The peer cap does not apply to authenticated requests.
            .max_sessions_per_peer(1);
        let srv = HttpServer::bind(
            "127.0.0.1:0",
            test_server(Arc::new(Flags::default())),
            config,
        )
        .await
        .unwrap();
        let addr = srv.local_addr();
        tokio::spawn(srv.run());
        let alice = [("authorization", "Bearer alice-token")];
        let mut statuses = Vec::new();
        for i in 0..5u8 {
            let from = Ipv4Addr::new(127, 0, 1, 1 + i);
            statuses.push(init_from(from, addr, &alice).await.0);
        }
        assert_eq!(statuses, [200, 200, 200, 429, 429]);
        let bob = [("authorization", "Bearer bob-token")];
        let local = Ipv4Addr::new(127, 0, 0, 1);
        assert_eq!(init_from(local, addr, &bob).await.0, 200);
        assert_eq!(init_from(local, addr, &bob).await.0, 200);
    })
    .await;
}

/// A session whose client completes the handshake (`initialize`, then
/// `notifications/initialized`) and sends nothing more ends after the first-request timeout,
/// freeing its slot; a session that was used lives on (its idle timeout is 30 minutes).
#[tokio::test]
async fn s55_a_session_never_used_after_initialize_expires_quickly() {
    within(async {
        let config = HttpConfig::default()
            .first_request_timeout(Duration::from_millis(1000))
            .max_sessions_per_peer(2);
        let (addr, _) = start(config).await;
        let unused = open_session(addr, "2025-11-25").await;
        let used = open_session(addr, "2025-11-25").await;
        let h = |sid: &str| {
            vec![
                ("mcp-session-id", sid.to_owned()),
                ("mcp-protocol-version", "2025-11-25".to_owned()),
            ]
        };
        let resp = post(
            addr,
            &hdrs(&h(&used)),
            &call(2, "echo", json!({"text":"x"})),
        )
        .await;
        assert_eq!(resp.status(), 200);
        Sse::new(resp).rest().await;
        // The peer is at its cap.
        assert_eq!(
            post(addr, &[], &initialize(1, "2025-11-25")).await.status(),
            429
        );
        tokio::time::sleep(Duration::from_millis(2500)).await;
        let resp = post(addr, &hdrs(&h(&unused)), &call(3, "echo", json!({}))).await;
        assert_eq!(resp.status(), 404);
        let resp = post(
            addr,
            &hdrs(&h(&used)),
            &call(4, "echo", json!({"text":"y"})),
        )
        .await;
        assert_eq!(resp.status(), 200);
        // The expired session's slot is free again.
        open_session(addr, "2025-11-25").await;
    })
    .await;
}

/// Behind a reverse proxy every client has the proxy's address. With the proxy trusted
/// (`HttpConfig::trusted_proxies`), the per-peer cap counts the clients its
/// `X-Forwarded-For` names (the rightmost entry that is not a trusted proxy, so what a client
/// puts in the header itself is ignored); from an address that is not trusted, the header is
/// ignored and the connection's address is the peer.
#[tokio::test]
async fn s104_behind_a_trusted_proxy_the_per_peer_cap_counts_forwarded_clients() {
    within(async {
        let proxy = Ipv4Addr::new(127, 0, 0, 9);
        let trusted: ferromcp_http_server::IpRange = "127.0.0.9".parse().unwrap();
        let config = HttpConfig::default()
            .max_sessions_per_peer(1)
            .trusted_proxies([trusted]);
        let (addr, _) = start(config).await;
        let xff = |v: &'static str| [("x-forwarded-for", v)];
        assert_eq!(init_from(proxy, addr, &xff("203.0.113.1")).await.0, 200);
        assert_eq!(init_from(proxy, addr, &xff("203.0.113.2")).await.0, 200);
        // The same client again, even when it puts another address in front: its cap.
        assert_eq!(init_from(proxy, addr, &xff("203.0.113.1")).await.0, 429);
        assert_eq!(
            init_from(proxy, addr, &xff("198.51.100.7, 203.0.113.1"))
                .await
                .0,
            429
        );
        // A header that cannot be read counts as the proxy itself (a first session), once.
        assert_eq!(init_from(proxy, addr, &xff("not-an-address")).await.0, 200);
        assert_eq!(init_from(proxy, addr, &xff("nonsense")).await.0, 429);
        // A peer that is not a trusted proxy cannot pick its address with the header.
        let direct = Ipv4Addr::new(127, 0, 0, 10);
        assert_eq!(init_from(direct, addr, &xff("203.0.113.3")).await.0, 200);
        assert_eq!(init_from(direct, addr, &xff("203.0.113.4")).await.0, 429);
    })
    .await;
}

/// Joins futures without a dependency: spawned tasks, awaited in order.
async fn futures_join_all<F>(futures: impl Iterator<Item = F>) -> Vec<F::Output>
where
    F: std::future::Future + Send + 'static,
    F::Output: Send + 'static,
{
    let handles: Vec<_> = futures.map(tokio::spawn).collect();
    let mut out = Vec::with_capacity(handles.len());
    for h in handles {
        out.push(h.await.unwrap());
    }
    out
}
