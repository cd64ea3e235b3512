//! Attacks on the Streamable HTTP server (the S-list of the robustness plan,
//! `docs/requirements.md`) that the limit and auth suites (`tests/http_limits.rs`,
//! `tests/http_auth/`) do not already cover: Host and Origin edge cases and the order of
//! the checks (before any session lookup, body read or allocation), session-id entropy and
//! guessing, session fixation, and event ids from another session.
//!
//! Spec: 2025-11-25 "basic/transports" §Security Warning, §Session Management 1 and 3,
//! §Resumability 2; 2025-11-25 security best practices §Session Hijacking.
#![allow(clippy::unwrap_used, clippy::panic)]

mod http_support;

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use ferromcp_http_server::{HttpConfig, InMemorySessionStore, SessionStore};
use http::Method;
use http_support::*;
use serde_json::json;

async fn within<F: std::future::Future>(f: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(60), f)
        .await
        .unwrap()
}

async fn start_counted(config: HttpConfig) -> (std::net::SocketAddr, Arc<InMemorySessionStore>) {
    let store = Arc::new(InMemorySessionStore::default());
    let (addr, _) = start(config.session_store(store.clone())).await;
    (addr, store)
}

/// S02 (SV-H01, V1–V5): the opaque `null` origin, unparseable origins and lookalikes of the
/// loopback names are refused with 403 on a loopback bind.
#[tokio::test]
async fn s02_hostile_origins_are_403() {
    within(async {
        let (addr, store) = start_counted(HttpConfig::default()).await;
        let body = initialize(1, "2025-11-25");
        let port = addr.port();
        let hostile = [
            "null".to_owned(),
            "not a url".to_owned(),
            "http://".to_owned(),
            "http://evil.example".to_owned(),
            format!("http://localhost.evil.example:{port}"),
            format!("http://evil-localhost:{port}"),
            format!("http://127.0.0.1.evil.example:{port}"),
            format!("http://localhost@evil.example:{port}"),
            format!("file://localhost:{port}"),
        ];
        for origin in &hostile {
            let resp = post(addr, &[("origin", origin)], &body).await;
            assert_eq!(resp.status(), 403, "Origin {origin:?}");
        }
        assert_eq!(store.len(), 0, "no session for a refused request");
    })
    .await;
}

/// S03 (SV-H01): loopback origins on the bound port, IPv6 `[::1]`, and case variants of the
/// scheme and host pass; so does a request without `Origin` (S04).
#[tokio::test]
async fn s03_s04_loopback_origins_and_no_origin_pass() {
    within(async {
        let (addr, _) = start(HttpConfig::default()).await;
        let body = initialize(1, "2025-11-25");
        let port = addr.port();
        let fine = [
            format!("http://localhost:{port}"),
            format!("http://127.0.0.1:{port}"),
            format!("http://[::1]:{port}"),
            format!("http://LOCALHOST:{port}"),
        ];
        for origin in &fine {
            let resp = post(addr, &[("origin", origin)], &body).await;
            assert_eq!(resp.status(), 200, "Origin {origin:?}");
        }
        let resp = post(addr, &[("origin", "")], &body).await;
        assert_eq!(resp.status(), 200, "no Origin");
        let resp = post(addr, &[("host", &format!("[::1]:{port}"))], &body).await;
        assert_eq!(resp.status(), 200, "Host [::1]");
    })
    .await;
}

/// S05 + S39 (V24): the Host and Origin checks run first on every method: a bad Host or
/// Origin with a live session id is refused (421/403) without touching the session (it
/// still serves), with an unknown session id it is refused before the lookup (not 404),
/// and with an oversized body before the body is read (not 413); none of it creates a
/// session.
#[tokio::test]
async fn s05_s39_origin_and_host_checks_come_first_and_allocate_nothing() {
    within(async {
        let (addr, store) = start_counted(HttpConfig::default().max_body_size(1024)).await;
        let sid = open_session(addr, "2025-11-25").await;
        assert_eq!(store.len(), 1);
        let evil_origin = ("origin", "http://evil.example");
        let evil_host = ("host", "evil.example");
        let echo = call(2, "echo", json!({"text": "x"}));
        for method in [Method::POST, Method::GET, Method::DELETE] {
            for (bad, status) in [(evil_origin, 403), (evil_host, 421)] {
                let h = [
                    ("mcp-session-id", sid.as_str()),
                    ("accept", "application/json, text/event-stream"),
                    bad,
                ];
                let resp = send(addr, method.clone(), &h, echo.to_string()).await;
                assert_eq!(resp.status(), status, "{method} with {bad:?}");
                let h = [("mcp-session-id", "0123456789abcdef0123456789abcdef"), bad];
                let resp = send(addr, method.clone(), &h, echo.to_string()).await;
                assert_eq!(
                    resp.status(),
                    status,
                    "{method} unknown session with {bad:?}"
                );
            }
        }
        let big = format!("{{\"pad\":\"{}\"}}", "x".repeat(4096));
        let resp = send(addr, Method::POST, &[evil_host], big.clone()).await;
        assert_eq!(resp.status(), 421, "Host before the body limit");
        let resp = send(addr, Method::POST, &[("content-type", "text/plain")], big).await;
        assert_eq!(resp.status(), 415, "content type before the body limit");
        // Flood: refused requests of every kind allocate no session.
        for i in 0..50 {
            let unknown = format!("{i:032x}");
            for h in [
                vec![evil_host],
                vec![evil_origin],
                vec![("content-type", "text/plain")],
                vec![("mcp-session-id", unknown.as_str())],
            ] {
                let resp = post(addr, &h, &initialize(i, "2025-11-25")).await;
                assert!(resp.status().is_client_error(), "{h:?}: {}", resp.status());
            }
        }
        assert_eq!(store.len(), 1, "refused requests allocated sessions");
        // The session was never touched.
        let resp = post(addr, &[("mcp-session-id", &sid)], &echo).await;
        let events = Sse::new(resp).rest().await;
        assert_eq!(events[0]["result"]["content"][0]["text"], "x");
    })
    .await;
}

/// S30 + S31 (SV-S01, SV-S02): session ids are 128 random bits: 32 characters, visible
/// ASCII only (0x21–0x7E), all distinct, with no shared structure (every position takes
/// many values across ids); guessed ids get 404.
#[tokio::test]
async fn s30_s31_session_ids_are_random_visible_ascii_and_unguessable() {
    within(async {
        // 300 sessions from one address: above the default per-peer cap (S53).
        let (addr, _) = start(HttpConfig::default().max_sessions_per_peer(300)).await;
        let mut ids = HashSet::new();
        for i in 0..300 {
            let resp = post(addr, &[], &initialize(i, "2025-11-25")).await;
            assert_eq!(resp.status(), 200);
            let sid = header(&resp, "mcp-session-id").unwrap();
            assert!(sid.len() >= 32, "{sid}: at least 128 bits as hex");
            assert!(sid.bytes().all(|b| (0x21..=0x7e).contains(&b)), "{sid:?}");
            assert!(ids.insert(sid), "a session id repeated");
        }
        let ids: Vec<Vec<u8>> = ids.into_iter().map(String::into_bytes).collect();
        let width = ids.iter().map(Vec::len).min().unwrap();
        for pos in 0..width {
            let distinct: HashSet<u8> = ids.iter().map(|id| id[pos]).collect();
            assert!(
                distinct.len() >= 10,
                "position {pos} takes only {distinct:?}"
            );
        }
        for guess in [
            "1",
            "00000000000000000000000000000000",
            "ffffffffffffffffffffffffffffffff",
        ] {
            let resp = post(
                addr,
                &[("mcp-session-id", guess)],
                &call(1, "echo", json!({})),
            )
            .await;
            assert_eq!(resp.status(), 404, "{guess}");
        }
    })
    .await;
}

/// S32 (session fixation, SV-S01): a session id the client puts on `initialize` is never
/// adopted: the server refuses the request or mints its own, and the client's id stays
/// unknown.
#[tokio::test]
async fn s32_client_chosen_session_id_is_never_adopted() {
    within(async {
        let (addr, store) = start_counted(HttpConfig::default()).await;
        let chosen = "attacker-chosen-session-id-0001";
        let resp = post(
            addr,
            &[("mcp-session-id", chosen)],
            &initialize(1, "2025-11-25"),
        )
        .await;
        if resp.status() == 200 {
            let minted = header(&resp, "mcp-session-id").unwrap();
            assert_ne!(minted, chosen);
        } else {
            assert!(resp.status().is_client_error(), "{}", resp.status());
            assert_eq!(store.len(), 0);
        }
        let resp = post(
            addr,
            &[("mcp-session-id", chosen)],
            &call(2, "echo", json!({})),
        )
        .await;
        assert_eq!(resp.status(), 404);
    })
    .await;
}

/// S40 + F06 (SV-S07): an event id from session A resumed in session B is refused with a
/// 4xx and leaks none of A's events; overlong and path-like ids are refused too.
#[tokio::test]
async fn s40_event_ids_from_another_session_are_refused() {
    within(async {
        let (addr, _) = start(HttpConfig::default()).await;
        let a = open_session(addr, "2025-11-25").await;
        let b = open_session(addr, "2025-11-25").await;
        let resp = post(
            addr,
            &[("mcp-session-id", &a)],
            &call(3, "echo", json!({"text": "secret of A"})),
        )
        .await;
        let mut sse = Sse::new(resp);
        let mut a_ids = Vec::new();
        while let Some(e) = sse.next_event().await {
            a_ids.push(e.id.unwrap());
        }
        assert!(!a_ids.is_empty());
        let long = "9".repeat(10_000);
        let mut hostile: Vec<&str> = a_ids.iter().map(String::as_str).collect();
        hostile.extend(["../../etc/passwd", "%2e%2e%2f", long.as_str(), "-1", ""]);
        for last in hostile {
            let h = [
                ("mcp-session-id", b.as_str()),
                ("accept", "text/event-stream"),
                ("last-event-id", last),
            ];
            let resp = send(addr, Method::GET, &h, "").await;
            if last.is_empty() {
                // No Last-Event-ID at all: B's own standalone stream, with nothing of A's.
                assert_eq!(resp.status(), 200);
                continue;
            }
            let status = resp.status();
            let body = tokio::time::timeout(Duration::from_millis(500), text(resp)).await;
            assert!(
                status.is_client_error(),
                "Last-Event-ID {last:.40}: {status}"
            );
            if let Ok(body) = body {
                assert!(!body.contains("secret of A"), "{body}");
            }
        }
    })
    .await;
}

/// Every event's fields, as text.
#[derive(Clone, Default)]
struct Capture(Arc<std::sync::Mutex<String>>);

struct Visit<'a>(&'a mut String);

impl tracing::field::Visit for Visit<'_> {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        self.0.push_str(&format!("{}={value:?} ", field.name()));
    }
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Capture {
    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        if *event.metadata().level() <= tracing::Level::WARN {
            event.record(&mut Visit(&mut self.0.lock().unwrap()));
        }
    }
}

/// Captured log output so far, cleared.
fn take(capture: &Capture) -> String {
    std::mem::take(&mut *capture.0.lock().unwrap())
}

/// S06 (SV-H02): a loopback bind is quiet; binding every interface without allowlists logs a
/// warning and answers loopback names only (a foreign Host is 421 there too: a public
/// deployment names its hosts); with allowlists it is quiet; `disable_host_checks` logs a
/// warning, bound or mounted, and then accepts any Host.
#[tokio::test(flavor = "current_thread")]
async fn s06_wide_bind_without_allowlists_warns() {
    use ferromcp_http_server::{HttpServer, McpHttpService};
    use tracing_subscriber::layer::SubscriberExt as _;
    let capture = Capture::default();
    let subscriber = tracing_subscriber::registry().with(capture.clone());
    let _guard = tracing::subscriber::set_default(subscriber);
    within(async {
        let flags = Arc::default();
        let srv = HttpServer::bind("127.0.0.1:0", test_server(flags), HttpConfig::default())
            .await
            .unwrap();
        drop(srv);
        assert_eq!(take(&capture), "", "a loopback bind is quiet");

        let flags = Arc::default();
        let srv = HttpServer::bind("0.0.0.0:0", test_server(flags), HttpConfig::default())
            .await
            .unwrap();
        let logs = take(&capture);
        assert!(
            logs.contains("allowed_hosts"),
            "no warning for a wide bind without allowlists: {logs:?}"
        );
        let port = srv.local_addr().port();
        tokio::spawn(srv.run());
        let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
        let body = initialize(1, "2025-11-25");
        let lan = format!("192.0.2.7:{port}");
        let resp = post(addr, &[("host", &lan)], &body).await;
        assert_eq!(resp.status(), 421, "a wide bind names no host: {lan}");
        let local = format!("localhost:{port}");
        assert_eq!(post(addr, &[("host", &local)], &body).await.status(), 200);

        let flags = Arc::default();
        let config = HttpConfig::default()
            .allowed_hosts(["mcp.example"])
            .allowed_origins(["https://app.example"]);
        let srv = HttpServer::bind("0.0.0.0:0", test_server(flags), config)
            .await
            .unwrap();
        drop(srv);
        assert_eq!(take(&capture), "", "allowlists set: no warning");

        let flags = Arc::default();
        let off = HttpConfig::default().disable_host_checks();
        let srv = HttpServer::bind("127.0.0.1:0", test_server(flags), off.clone())
            .await
            .unwrap();
        let logs = take(&capture);
        assert!(logs.contains("disable_host_checks"), "bound: {logs:?}");
        let addr = srv.local_addr();
        tokio::spawn(srv.run());
        let resp = post(addr, &[("host", "evil.example")], &body).await;
        assert_eq!(resp.status(), 200, "checks off");
        let _svc = McpHttpService::new(test_server(Arc::default()), off);
        let logs = take(&capture);
        assert!(logs.contains("disable_host_checks"), "mounted: {logs:?}");
    })
    .await;
}

/// Serves `config` as a mounted service (axum, `/mcp`) on 127.0.0.1:0.
async fn mounted(config: HttpConfig) -> std::net::SocketAddr {
    let svc = ferromcp_http_server::McpHttpService::new(test_server(Arc::default()), config);
    let app = axum::Router::new().route_service("/mcp", svc);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    addr
}

/// S46 (SV-H01): `McpHttpService` mounted in axum with the default settings checks Host and
/// Origin as a bound server does: only loopback names pass (on any port: a mounted service
/// does not know its own), a foreign Host is 421 and a foreign Origin 403, on every method
/// and both eras, and nothing is allocated for them; named lists replace the default.
#[tokio::test]
async fn s46_mounted_service_accepts_only_loopback_names_by_default() {
    within(async {
        let store = Arc::new(InMemorySessionStore::default());
        let addr = mounted(HttpConfig::default().session_store(store.clone())).await;
        let body = initialize(1, "2025-11-25");
        let port = addr.port();
        for host in [
            "evil.example".to_owned(),
            format!("evil.example:{port}"),
            format!("localhost.evil.example:{port}"),
            format!("192.0.2.7:{port}"),
            "".to_owned(),
        ] {
            let resp = post(addr, &[("host", &host)], &body).await;
            assert_eq!(resp.status(), 421, "Host {host:?}");
        }
        for origin in [
            "http://evil.example",
            "null",
            "http://localhost.evil.example",
        ] {
            let resp = post(addr, &[("origin", origin)], &body).await;
            assert_eq!(resp.status(), 403, "Origin {origin:?}");
        }
        let h = [
            ("host", "evil.example"),
            ("mcp-protocol-version", "2026-07-28"),
        ];
        assert_eq!(post(addr, &h, &body).await.status(), 421, "2026-07-28");
        let h = [
            ("origin", "http://evil.example"),
            ("accept", "text/event-stream"),
        ];
        assert_eq!(send(addr, Method::GET, &h, "").await.status(), 403, "GET");
        assert_eq!(store.len(), 0, "nothing allocated for refused requests");
        for (host, origin) in [
            (
                format!("localhost:{port}"),
                format!("http://localhost:{port}"),
            ),
            (
                format!("127.0.0.1:{port}"),
                "http://127.0.0.1:3000".to_owned(),
            ),
            (format!("[::1]:{port}"), "http://[::1]".to_owned()),
            ("LOCALHOST:8080".to_owned(), String::new()),
        ] {
            let resp = post(addr, &[("host", &host), ("origin", &origin)], &body).await;
            assert_eq!(resp.status(), 200, "Host {host:?}, Origin {origin:?}");
        }
        let named = mounted(
            HttpConfig::default()
                .allowed_hosts(["mcp.example"])
                .allowed_origins(["https://app.example"]),
        )
        .await;
        let h = [("host", "mcp.example"), ("origin", "https://app.example")];
        assert_eq!(post(named, &h, &body).await.status(), 200);
        assert_eq!(
            post(named, &[], &body).await.status(),
            421,
            "loopback not named"
        );
    })
    .await;
}

/// S47 (SV-H01): a bound server's loopback allowlists name its port: a loopback `Host` or
/// `Origin` on another port (another local service's page) is refused (421 / 403).
#[tokio::test]
async fn s47_loopback_allowlists_name_the_bound_port() {
    within(async {
        let (addr, _) = start(HttpConfig::default()).await;
        let body = initialize(1, "2025-11-25");
        let other = if addr.port() == 3000 { 3001 } else { 3000 };
        for origin in [
            format!("http://localhost:{other}"),
            format!("http://127.0.0.1:{other}"),
            format!("http://[::1]:{other}"),
            "http://localhost".to_owned(),
            format!("https://localhost:{other}"),
        ] {
            let resp = post(addr, &[("origin", &origin)], &body).await;
            assert_eq!(resp.status(), 403, "Origin {origin:?}");
        }
        for host in [
            format!("localhost:{other}"),
            format!("127.0.0.1:{other}"),
            "localhost".to_owned(),
        ] {
            let resp = post(addr, &[("host", &host)], &body).await;
            assert_eq!(resp.status(), 421, "Host {host:?}");
        }
        let origin = format!("http://localhost:{}", addr.port());
        assert_eq!(
            post(addr, &[("origin", &origin)], &body).await.status(),
            200
        );
    })
    .await;
}
