//! Scale-out (feature `redis`): two ferromcp nodes sharing one Redis serve the same
//! handshake-era session. Needs a Redis at `FERROMCP_TEST_REDIS_URL` (default
//! `redis://127.0.0.1:6379`; `.ci/run` starts one); without one every test prints a notice
//! and passes, or fails when `FERROMCP_REQUIRE_REDIS=1` (as `.ci/run` sets).
#![cfg(feature = "redis")]
#![allow(clippy::unwrap_used, clippy::panic)]

mod http_support;
#[path = "redis_node/reach.rs"]
mod redis_reach;
#[path = "redis_node/server.rs"]
mod redis_server;

use std::net::SocketAddr;
use std::time::Duration;

use bytes::Bytes;
use ferromcp_http_server::redis::{RedisConfig, RedisStores};
use ferromcp_http_server::{HttpConfig, HttpServer, McpHttpService};
use ferromcp_server::CallerId;
use http::Method;
use http_body_util::Full;
use http_support::{Sse, call, header, open_session, post, send};
use redis_reach::{namespace, redis_up, redis_url};
use redis_server::server;
use serde_json::{Value, json};
use tokio::task::JoinHandle;

async fn within<F: std::future::Future>(f: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(60), f)
        .await
        .unwrap()
}

fn redis_config(ns: &str, idle: Duration) -> RedisConfig {
    RedisConfig::new(redis_url())
        .namespace(ns)
        .idle_timeout(idle)
        .heartbeat(Duration::from_millis(100))
}

/// One node: its stores and its HTTP server on a free loopback port.
struct Node {
    addr: SocketAddr,
    stores: RedisStores,
    accept: JoinHandle<std::io::Result<()>>,
}

async fn node(ns: &str, idle: Duration) -> Node {
    node_with(redis_config(ns, idle), HttpConfig::default()).await
}

async fn node_with(config: RedisConfig, http: HttpConfig) -> Node {
    let stores = RedisStores::connect(config).await.unwrap();
    let config = stores.apply(http);
    let srv = HttpServer::bind("127.0.0.1:0", server(), config)
        .await
        .unwrap();
    let addr = srv.local_addr();
    Node {
        addr,
        stores,
        accept: tokio::spawn(srv.run()),
    }
}

fn resume_headers<'a>(sid: &'a str, last: &'a str) -> [(&'static str, &'a str); 3] {
    [
        ("mcp-session-id", sid),
        ("accept", "text/event-stream"),
        ("last-event-id", last),
    ]
}

/// Every event with data until the end of the stream: (id, JSON).
async fn collect(sse: &mut Sse) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    while let Some(e) = sse.next_event().await {
        if !e.data.is_empty() {
            out.push((e.id.unwrap(), serde_json::from_str(&e.data).unwrap()));
        }
    }
    out
}

/// The countdown values of log notifications, in order.
fn ticks(events: &[(String, Value)]) -> Vec<u64> {
    events
        .iter()
        .filter(|(_, v)| v["method"] == "notifications/message")
        .map(|(_, v)| v["params"]["data"].as_u64().unwrap())
        .collect()
}

/// Reads a countdown's stream up to (and including) `k` ticks; returns the events and the
/// last id seen.
async fn read_ticks(sse: &mut Sse, k: usize) -> (Vec<(String, Value)>, String) {
    let mut seen = Vec::new();
    let mut last = String::new();
    while ticks(&seen).len() < k {
        let e = sse.next_event().await.unwrap();
        last = e.id.clone().unwrap();
        if !e.data.is_empty() {
            seen.push((last.clone(), serde_json::from_str(&e.data).unwrap()));
        }
    }
    (seen, last)
}

fn assert_exactly_once(all: &[(String, Value)], n: u64, id: i64) {
    let want: Vec<u64> = (0..n).rev().collect();
    assert_eq!(
        ticks(all),
        want,
        "every tick exactly once, in order: {all:?}"
    );
    let ids: std::collections::HashSet<_> = all.iter().map(|(i, _)| i.clone()).collect();
    assert_eq!(ids.len(), all.len(), "no event id twice");
    let (_, last) = all.last().unwrap();
    assert_eq!(last["id"], id);
    assert_eq!(last["result"]["content"][0]["text"], "liftoff");
}

/// The scenario: a session opened on node A, a long tool call read in part, node A
/// gone from the client's view (its listener stopped, the stream dropped), the stream
/// resumed on node B with `Last-Event-ID`: every event exactly once, then the result,
/// while the request keeps running on A.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stream_dropped_on_a_resumes_on_b() {
    if !redis_up("stream_dropped_on_a_resumes_on_b").await {
        return;
    }
    within(async {
        let ns = namespace("resume");
        let a = node(&ns, Duration::from_secs(60)).await;
        let b = node(&ns, Duration::from_secs(60)).await;
        let sid = open_session(a.addr, "2025-11-25").await;
        let resp = post(
            a.addr,
            &[("mcp-session-id", &sid)],
            &call(7, "countdown", json!({"n": 12, "ms": 60})),
        )
        .await;
        let mut sse = Sse::new(resp);
        let (mut seen, last) = read_ticks(&mut sse, 4).await;
        drop(sse);
        a.accept.abort();
        let resp = send(b.addr, Method::GET, &resume_headers(&sid, &last), "").await;
        assert_eq!(resp.status(), 200);
        assert_eq!(
            header(&resp, "mcp-session-id").as_deref(),
            Some(sid.as_str())
        );
        seen.extend(collect(&mut Sse::new(resp)).await);
        assert_exactly_once(&seen, 12, 7);
    })
    .await;
}

/// A request with the session id on node B while A lives is forwarded to A (the session's
/// owner); its stream (served by B from Redis) resumes on A; DELETE on B ends the session
/// on both nodes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_on_b_are_forwarded_to_the_owner() {
    if !redis_up("requests_on_b_are_forwarded_to_the_owner").await {
        return;
    }
    within(async {
        let ns = namespace("forward");
        let a = node(&ns, Duration::from_secs(60)).await;
        let b = node(&ns, Duration::from_secs(60)).await;
        let sid = open_session(a.addr, "2025-11-25").await;
        let h = [("mcp-session-id", sid.as_str())];
        let resp = post(b.addr, &h, &call(2, "echo", json!({"text": "via b"}))).await;
        assert_eq!(resp.status(), 200);
        let got = Sse::new(resp).rest().await;
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(got[0]["result"]["content"][0]["text"], "via b");

        // A forwarded stream, dropped on B, resumed on A.
        let resp = post(b.addr, &h, &call(3, "countdown", json!({"n": 8, "ms": 50}))).await;
        let mut sse = Sse::new(resp);
        let (mut seen, last) = read_ticks(&mut sse, 3).await;
        drop(sse);
        let resp = send(a.addr, Method::GET, &resume_headers(&sid, &last), "").await;
        assert_eq!(resp.status(), 200);
        seen.extend(collect(&mut Sse::new(resp)).await);
        assert_exactly_once(&seen, 8, 3);

        // A notification through B is accepted; a forged event id is refused.
        let note = json!({"jsonrpc":"2.0","method":"notifications/roots/list_changed"});
        assert_eq!(post(b.addr, &h, &note).await.status(), 202);
        let forged = format!("{}-0", last.split(':').next().unwrap());
        let resp = send(b.addr, Method::GET, &resume_headers(&sid, &forged), "").await;
        assert_eq!(resp.status(), 400);

        // DELETE on B: the session is gone on both nodes.
        let resp = send(b.addr, Method::DELETE, &h, "").await;
        assert_eq!(resp.status(), 200);
        tokio::time::sleep(Duration::from_millis(300)).await;
        for addr in [a.addr, b.addr] {
            let resp = post(addr, &h, &call(4, "echo", json!({}))).await;
            assert_eq!(resp.status(), 404);
        }
    })
    .await;
}

async fn as_principal(
    svc: &McpHttpService,
    who: &str,
    sid: Option<&str>,
    body: &Value,
) -> http::Response<ferromcp_http_server::McpBody> {
    let mut req = http::Request::builder()
        .method(Method::POST)
        .uri("/mcp")
        // A mounted service answers loopback Host names only, by default.
        .header("host", "localhost")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25");
    if let Some(sid) = sid {
        req = req.header("mcp-session-id", sid);
    }
    let mut req = req.body(Full::new(Bytes::from(body.to_string()))).unwrap();
    req.extensions_mut().insert(CallerId(who.to_owned()));
    svc.handle(req).await
}

/// A session created by principal X is 404 for principal Y on both nodes, and served for X
/// on both.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_foreign_principal_gets_404_on_both_nodes() {
    if !redis_up("a_foreign_principal_gets_404_on_both_nodes").await {
        return;
    }
    within(async {
        let ns = namespace("principal");
        let idle = Duration::from_secs(60);
        let sa = RedisStores::connect(redis_config(&ns, idle)).await.unwrap();
        let sb = RedisStores::connect(redis_config(&ns, idle)).await.unwrap();
        let a = McpHttpService::new(server(), sa.apply(HttpConfig::default()));
        let b = McpHttpService::new(server(), sb.apply(HttpConfig::default()));
        let init = http_support::initialize(1, "2025-11-25");
        let resp = as_principal(&a, "x", None, &init).await;
        assert_eq!(resp.status(), 200);
        let sid = resp.headers()["mcp-session-id"]
            .to_str()
            .unwrap()
            .to_owned();
        drop(resp);
        let note = json!({"jsonrpc":"2.0","method":"notifications/initialized"});
        for svc in [&a, &b] {
            let resp = as_principal(svc, "y", Some(&sid), &note).await;
            assert_eq!(resp.status(), 404);
        }
        for svc in [&a, &b] {
            let resp = as_principal(svc, "x", Some(&sid), &note).await;
            assert_eq!(resp.status(), 202);
        }
    })
    .await;
}

/// Idle sessions are evicted on both nodes and their Redis keys expire.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_sessions_expire_everywhere() {
    if !redis_up("idle_sessions_expire_everywhere").await {
        return;
    }
    within(async {
        let ns = namespace("ttl");
        let a = node(&ns, Duration::from_millis(700)).await;
        let b = node(&ns, Duration::from_millis(700)).await;
        let sid = open_session(a.addr, "2025-11-25").await;
        let h = [("mcp-session-id", sid.as_str())];
        let resp = post(b.addr, &h, &call(2, "echo", json!({"text": "x"}))).await;
        assert_eq!(resp.status(), 200);
        assert_eq!(Sse::new(resp).rest().await.len(), 1);
        tokio::time::sleep(Duration::from_millis(2500)).await;
        for addr in [b.addr, a.addr] {
            let resp = post(addr, &h, &call(3, "echo", json!({}))).await;
            assert_eq!(resp.status(), 404);
        }
        let client = redis::Client::open(redis_url()).unwrap();
        let mut c = client.get_multiplexed_async_connection().await.unwrap();
        let left: Vec<String> = redis::cmd("KEYS")
            .arg(format!("{ns}:[se]:*"))
            .query_async(&mut c)
            .await
            .unwrap();
        assert!(left.is_empty(), "keys left: {left:?}");
    })
    .await;
}

/// The PTTL (ms) of a key; negative when it has none or is gone.
async fn pttl(key: &str) -> i64 {
    let client = redis::Client::open(redis_url()).unwrap();
    let mut c = client.get_multiplexed_async_connection().await.unwrap();
    redis::cmd("PTTL")
        .arg(key)
        .query_async(&mut c)
        .await
        .unwrap()
}

/// Issue 19 point 7: requests on the owning node do not refresh the session record's nor the
/// event index's TTL on every request, only once per quarter of the idle timeout (before,
/// each request sent a `PEXPIRE` of the record and an `SADD` + `PEXPIRE` per event).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ttls_are_not_refreshed_on_every_request() {
    if !redis_up("ttls_are_not_refreshed_on_every_request").await {
        return;
    }
    within(async {
        let ns = namespace("refresh");
        let a = node(&ns, Duration::from_secs(60)).await;
        let sid = open_session(a.addr, "2025-11-25").await;
        let h = [("mcp-session-id", sid.as_str())];
        let record = format!("{ns}:s:{sid}");
        let index = format!("{ns}:e:{sid}");
        let resp = post(a.addr, &h, &call(2, "echo", json!({"text": "x"}))).await;
        assert_eq!(Sse::new(resp).rest().await.len(), 1);
        let (r1, i1) = (pttl(&record).await, pttl(&index).await);
        assert!(r1 > 0 && i1 > 0, "{r1} {i1}");
        tokio::time::sleep(Duration::from_millis(600)).await;
        for id in 3..6 {
            let resp = post(a.addr, &h, &call(id, "echo", json!({"text": "y"}))).await;
            assert_eq!(Sse::new(resp).rest().await.len(), 1);
        }
        let (r2, i2) = (pttl(&record).await, pttl(&index).await);
        assert!(r2 > 0 && r2 <= r1 - 500, "record refreshed: {r1} then {r2}");
        assert!(i2 > 0 && i2 <= i1 - 500, "index refreshed: {i1} then {i2}");
    })
    .await;
}

/// Issue 19 point 7: a session kept busy past its idle timeout (on the owner and through
/// the other node) stays alive on both nodes, though TTLs are refreshed only now and then;
/// left idle afterwards, it expires everywhere.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn busy_sessions_outlive_the_idle_timeout_then_expire() {
    if !redis_up("busy_sessions_outlive_the_idle_timeout_then_expire").await {
        return;
    }
    within(async {
        let ns = namespace("busy");
        let idle = Duration::from_millis(800);
        let a = node(&ns, idle).await;
        let b = node(&ns, idle).await;
        let sid = open_session(a.addr, "2025-11-25").await;
        let h = [("mcp-session-id", sid.as_str())];
        // 3 s of requests, 100 ms apart, every fifth one through B.
        for id in 2..32 {
            let addr = if id % 5 == 0 { b.addr } else { a.addr };
            let resp = post(addr, &h, &call(id, "echo", json!({"text": "busy"}))).await;
            assert_eq!(resp.status(), 200, "request {id}");
            assert_eq!(Sse::new(resp).rest().await.len(), 1);
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        for addr in [b.addr, a.addr] {
            let resp = post(addr, &h, &call(40, "echo", json!({"text": "still"}))).await;
            assert_eq!(resp.status(), 200);
            assert_eq!(Sse::new(resp).rest().await.len(), 1);
        }
        tokio::time::sleep(Duration::from_millis(2500)).await;
        for addr in [b.addr, a.addr] {
            let resp = post(addr, &h, &call(41, "echo", json!({}))).await;
            assert_eq!(resp.status(), 404);
        }
        let client = redis::Client::open(redis_url()).unwrap();
        let mut c = client.get_multiplexed_async_connection().await.unwrap();
        let left: Vec<String> = redis::cmd("KEYS")
            .arg(format!("{ns}:[se]:*"))
            .query_async(&mut c)
            .await
            .unwrap();
        assert!(left.is_empty(), "keys left: {left:?}");
    })
    .await;
}

/// The owner dies (its heartbeat stops): a resume on B replays what A stored and ends; the
/// session is then 404 (the client re-initializes).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_owner_loses_its_sessions() {
    if !redis_up("a_dead_owner_loses_its_sessions").await {
        return;
    }
    within(async {
        let ns = namespace("dead");
        let a = node(&ns, Duration::from_secs(60)).await;
        let b = node(&ns, Duration::from_secs(60)).await;
        let sid = open_session(a.addr, "2025-11-25").await;
        let resp = post(
            a.addr,
            &[("mcp-session-id", &sid)],
            &call(5, "countdown", json!({"n": 100, "ms": 30})),
        )
        .await;
        let mut sse = Sse::new(resp);
        let (seen, last) = read_ticks(&mut sse, 2).await;
        drop(sse);
        a.accept.abort();
        a.stores.sessions.shutdown().await;
        let resp = send(b.addr, Method::GET, &resume_headers(&sid, &last), "").await;
        let rest = collect(&mut Sse::new(resp)).await;
        let all: Vec<_> = seen.into_iter().chain(rest).collect();
        let t = ticks(&all);
        let want: Vec<u64> = (0..100).rev().take(t.len()).collect();
        assert_eq!(t, want, "a gapless prefix");
        let h = [("mcp-session-id", sid.as_str())];
        let resp = post(b.addr, &h, &call(6, "echo", json!({}))).await;
        assert_eq!(resp.status(), 404);
    })
    .await;
}

/// Retention is bounded per stream (`XADD MAXLEN ~`): after many events, resuming from
/// the first one fails (400) while a recent one still resumes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retention_is_bounded_per_stream() {
    if !redis_up("retention_is_bounded_per_stream").await {
        return;
    }
    within(async {
        let ns = namespace("retention");
        let config = redis_config(&ns, Duration::from_secs(60)).events_per_stream(10);
        let a = node_with(config, HttpConfig::default()).await;
        let sid = open_session(a.addr, "2025-11-25").await;
        let h = [("mcp-session-id", sid.as_str())];
        let resp = post(
            a.addr,
            &h,
            &call(2, "countdown", json!({"n": 400, "ms": 0})),
        )
        .await;
        let mut sse = Sse::new(resp);
        let first = sse.next_event().await.unwrap().id.unwrap();
        let all = collect(&mut sse).await;
        assert_eq!(ticks(&all).len(), 400);
        let resp = send(a.addr, Method::GET, &resume_headers(&sid, &first), "").await;
        assert_eq!(resp.status(), 400, "the priming event was trimmed");
        let (recent, _) = &all[all.len() - 3];
        let resp = send(a.addr, Method::GET, &resume_headers(&sid, recent), "").await;
        assert_eq!(resp.status(), 200);
        let rest = collect(&mut Sse::new(resp)).await;
        assert_eq!(rest.len(), 2, "{rest:?}");
        let client = redis::Client::open(redis_url()).unwrap();
        let mut c = client.get_multiplexed_async_connection().await.unwrap();
        let keys: Vec<String> = redis::cmd("KEYS")
            .arg(format!("{ns}:e:{sid}:*"))
            .query_async(&mut c)
            .await
            .unwrap();
        for key in keys {
            let len: usize = redis::cmd("XLEN")
                .arg(&key)
                .query_async(&mut c)
                .await
                .unwrap();
            assert!(len < 400, "{key} holds {len} entries");
            let ttl: i64 = redis::cmd("PTTL")
                .arg(&key)
                .query_async(&mut c)
                .await
                .unwrap();
            // The idle timeout plus the refresh slack (a quarter of it).
            assert!(
                ttl > 0 && ttl <= 75_000,
                "{key} expires with the session: {ttl}"
            );
        }
    })
    .await;
}

/// JSON-response mode: a request forwarded to the owner is answered with one JSON body.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_response_mode_forwards_too() {
    if !redis_up("json_response_mode_forwards_too").await {
        return;
    }
    within(async {
        let ns = namespace("json");
        let idle = Duration::from_secs(60);
        let json = || HttpConfig::default().json_response(true);
        let a = node_with(redis_config(&ns, idle), json()).await;
        let b = node_with(redis_config(&ns, idle), json()).await;
        let resp = post(a.addr, &[], &http_support::initialize(1, "2025-11-25")).await;
        assert_eq!(resp.status(), 200);
        let sid = header(&resp, "mcp-session-id").unwrap();
        let h = [("mcp-session-id", sid.as_str())];
        let note = json!({"jsonrpc":"2.0","method":"notifications/initialized"});
        assert_eq!(post(b.addr, &h, &note).await.status(), 202);
        let resp = post(b.addr, &h, &call(2, "countdown", json!({"n": 3, "ms": 10}))).await;
        assert_eq!(resp.status(), 200);
        let v = http_support::json_body(resp).await;
        assert_eq!(v["id"], 2);
        assert_eq!(v["result"]["content"][0]["text"], "liftoff");
    })
    .await;
}

/// A node process (tests/bin/redis_node.rs) on a free loopback port; killed (SIGKILL) when
/// dropped.
struct Process {
    child: std::process::Child,
    addr: SocketAddr,
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn process(ns: &str) -> Process {
    use std::io::BufRead;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_ferromcp-redis-node"))
        .args(["127.0.0.1:0", &redis_url(), ns])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let line = tokio::task::spawn_blocking(move || {
        let mut line = String::new();
        std::io::BufReader::new(stdout)
            .read_line(&mut line)
            .unwrap();
        line
    })
    .await
    .unwrap();
    let addr = line
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("node said {line:?}"));
    Process { child, addr }
}

/// Two server processes sharing one Redis: a stream dropped on A resumes on B (A still
/// running the request) with every event once and the result; a request through B is
/// forwarded to A; then A is killed (SIGKILL) mid-request: a resume on B replays what A
/// stored, gapless, and ends; the session is then 404 on B.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_processes_share_a_session() {
    if !redis_up("two_processes_share_a_session").await {
        return;
    }
    within(async {
        let ns = namespace("procs");
        let mut a = process(&ns).await;
        let b = process(&ns).await;
        let sid = open_session(a.addr, "2025-11-25").await;
        let h = [("mcp-session-id", sid.as_str())];

        let resp = post(
            a.addr,
            &h,
            &call(2, "countdown", json!({"n": 10, "ms": 50})),
        )
        .await;
        let mut sse = Sse::new(resp);
        let (mut seen, last) = read_ticks(&mut sse, 3).await;
        drop(sse);
        let resp = send(b.addr, Method::GET, &resume_headers(&sid, &last), "").await;
        assert_eq!(resp.status(), 200);
        seen.extend(collect(&mut Sse::new(resp)).await);
        assert_exactly_once(&seen, 10, 2);

        let resp = post(b.addr, &h, &call(3, "echo", json!({"text": "from b"}))).await;
        let got = Sse::new(resp).rest().await;
        assert_eq!(got[0]["result"]["content"][0]["text"], "from b");

        let resp = post(
            a.addr,
            &h,
            &call(4, "countdown", json!({"n": 100, "ms": 40})),
        )
        .await;
        let mut sse = Sse::new(resp);
        let (seen, last) = read_ticks(&mut sse, 3).await;
        a.child.kill().unwrap();
        a.child.wait().unwrap();
        drop(sse);
        let resp = send(b.addr, Method::GET, &resume_headers(&sid, &last), "").await;
        assert_eq!(resp.status(), 200);
        let rest = collect(&mut Sse::new(resp)).await;
        let all: Vec<_> = seen.into_iter().chain(rest).collect();
        let t = ticks(&all);
        let want: Vec<u64> = (0..100).rev().take(t.len()).collect();
        assert_eq!(t, want, "a gapless prefix, no result");
        assert!(t.len() < 100);
        let resp = post(b.addr, &h, &call(5, "echo", json!({}))).await;
        assert_eq!(resp.status(), 404);
    })
    .await;
}
