//! S56, scale-out (feature `redis`): streams served from Redis on a node that does not own the
//! session share that node's connections. Fifty resumptions held open at once through such a
//! node add at most a few Redis connections (one shared blocking reader per node), not one
//! each, and every one of them still gets its stream's live events. Needs a Redis at
//! `FERROMCP_TEST_REDIS_URL` (default `redis://127.0.0.1:6379`; `.ci/run` starts one); without
//! one the test prints a notice and passes, or fails when `FERROMCP_REQUIRE_REDIS=1` (as
//! `.ci/run` sets). One test in its own binary: it counts this process's connections.
#![cfg(all(feature = "redis", target_os = "linux"))]
#![allow(clippy::unwrap_used, clippy::panic)]

mod http_support;
#[path = "redis_node/reach.rs"]
mod redis_reach;
#[path = "redis_node/server.rs"]
mod redis_server;

use std::collections::HashSet;
use std::time::Duration;

use ferromcp_http_server::redis::{RedisConfig, RedisStores};
use ferromcp_http_server::{HttpConfig, HttpServer};
use http::Method;
use http_support::{Sse, call, open_session, post, send};
use redis_reach::{redis_up, redis_url};
use redis_server::server;
use serde_json::json;

/// This process's established TCP connections to the Redis port (from `/proc`).
fn redis_connections() -> usize {
    let port = redis::Client::open(redis_url())
        .ok()
        .and_then(|c| match c.get_connection_info().addr() {
            redis::ConnectionAddr::Tcp(_, p) => Some(*p),
            _ => None,
        })
        .unwrap_or(6379);
    let mut mine = HashSet::new();
    for fd in std::fs::read_dir("/proc/self/fd").unwrap().flatten() {
        if let Ok(link) = std::fs::read_link(fd.path()) {
            let link = link.to_string_lossy().into_owned();
            if let Some(inode) = link
                .strip_prefix("socket:[")
                .and_then(|s| s.strip_suffix(']'))
            {
                mine.insert(inode.to_owned());
            }
        }
    }
    let remote = format!(":{port:04X}");
    let mut n = 0;
    for table in ["/proc/self/net/tcp", "/proc/self/net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(table) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() > 9 && f[2].ends_with(&remote) && f[3] == "01" && mine.contains(f[9]) {
                n += 1;
            }
        }
    }
    n
}

async fn node(ns: &str) -> std::net::SocketAddr {
    let config = RedisConfig::new(redis_url())
        .namespace(ns)
        .heartbeat(Duration::from_millis(100));
    let stores = RedisStores::connect(config).await.unwrap();
    let srv = HttpServer::bind("127.0.0.1:0", server(), stores.apply(HttpConfig::default()))
        .await
        .unwrap();
    let addr = srv.local_addr();
    tokio::spawn(async move {
        let _stores = stores;
        srv.run().await
    });
    addr
}

/// Fifty resumptions of one long stream through a node that does not own the session, held
/// open together: this process's Redis connections grow by at most 3 (before, by one per
/// resumption), and each resumption gets the replayed event and then live ones.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s56_resumes_through_a_non_owner_share_its_redis_connections() {
    if !redis_up("s56_resumes_through_a_non_owner_share_its_redis_connections").await {
        return;
    }
    tokio::time::timeout(Duration::from_secs(60), async {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        let ns = format!("ferromcp-test-pool-{}-{nanos}", std::process::id());
        let a = node(&ns).await;
        let b = node(&ns).await;
        let sid = open_session(a, "2025-11-25").await;
        let resp = post(
            a,
            &[("mcp-session-id", &sid)],
            &call(7, "countdown", json!({"n": 400, "ms": 100})),
        )
        .await;
        let mut sse = Sse::new(resp);
        let mut first = None;
        while first.is_none() {
            let e = sse.next_event().await.unwrap();
            if !e.data.is_empty() {
                first = e.id;
            }
        }
        let first = first.unwrap();
        // Settle: the nodes' own connections (commands, inbox readers) are open.
        tokio::time::sleep(Duration::from_millis(300)).await;
        let before = redis_connections();
        let mut streams = Vec::new();
        for _ in 0..50 {
            let h = [
                ("mcp-session-id", sid.as_str()),
                ("accept", "text/event-stream"),
                ("last-event-id", first.as_str()),
            ];
            let resp = send(b, Method::GET, &h, "").await;
            assert_eq!(resp.status(), 200);
            streams.push(Sse::new(resp));
        }
        // Every resumption gets live events (the second tick after the one resumed from).
        for s in &mut streams {
            let mut ticks = 0;
            while ticks < 2 {
                let e = s.next_event().await.unwrap();
                if !e.data.is_empty() {
                    ticks += 1;
                }
            }
        }
        let during = redis_connections();
        eprintln!(
            "Redis connections of this process: {before} before, {during} with 50 resumptions open"
        );
        assert!(
            during <= before + 3,
            "{during} Redis connections with 50 resumptions open, {before} before"
        );
        drop(streams);
        drop(sse);
    })
    .await
    .unwrap();
}
