//! Attacks on the Streamable HTTP server (the S-list of the robustness plan,
//! `docs/requirements.md`) that the limit and auth suites (`tests/http_limits.rs`,
//! `tests/http_auth.rs`) do not already cover: Host and Origin edge cases and the order of
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

/// S03 (SV-H01): loopback origins on any port, IPv6 `[::1]`, and case variants of the
/// scheme and host pass; so does a request without `Origin` (S04).
#[tokio::test]
async fn s03_s04_loopback_origins_and_no_origin_pass() {
    within(async {
        let (addr, _) = start(HttpConfig::default()).await;
        let body = initialize(1, "2025-11-25");
        let port = addr.port();
        let fine = [
            format!("http://localhost:{port}"),
            "http://localhost:9".to_owned(),
            format!("http://127.0.0.1:{port}"),
            "http://[::1]:8080".to_owned(),
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

/// S06 (SV-H02): binding a loopback address turns the Host/Origin allowlists on by itself
/// and logs no warning; binding every interface without allowlists logs a warning (ferromcp
/// warns rather than refuses: a server behind a reverse proxy may rely on the proxy).
#[tokio::test(flavor = "current_thread")]
async fn s06_wide_bind_without_allowlists_warns() {
    use ferromcp_http_server::HttpServer;
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
        assert_eq!(
            capture.0.lock().unwrap().as_str(),
            "",
            "a loopback bind is quiet"
        );
        let flags = Arc::default();
        let srv = HttpServer::bind("0.0.0.0:0", test_server(flags), HttpConfig::default())
            .await
            .unwrap();
        drop(srv);
        let logs = capture.0.lock().unwrap().clone();
        assert!(
            !logs.is_empty(),
            "no warning for a wide bind without allowlists"
        );
        let flags = Arc::default();
        let config = HttpConfig::default()
            .allowed_hosts(["mcp.example"])
            .allowed_origins(["https://app.example"]);
        capture.0.lock().unwrap().clear();
        let srv = HttpServer::bind("0.0.0.0:0", test_server(flags), config)
            .await
            .unwrap();
        drop(srv);
        assert_eq!(
            capture.0.lock().unwrap().as_str(),
            "",
            "allowlists set: no warning"
        );
    })
    .await;
}
