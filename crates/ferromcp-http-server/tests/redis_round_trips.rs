//! Issue 19 point 7 (feature `redis`): the owning node stores a request stream's priming
//! event with the stream's next event, one Redis round trip per `tools/call` answered at
//! once (B72), while resumability keeps its guarantees: the priming id resumes on any node
//! before and after the answer exists, a progress-then-answer stream resumes mid-way, every
//! event exactly once and in order, and a dead owner's stream ends as before (B73); the
//! retention bound still refuses a trimmed priming id (S99). Needs a Redis at
//! `FERROMCP_TEST_REDIS_URL` (default `redis://127.0.0.1:6379`; `.ci/run` starts one);
//! without one every test prints a notice and passes, or fails when
//! `FERROMCP_REQUIRE_REDIS=1` (as `.ci/run` sets).
#![cfg(feature = "redis")]
#![allow(clippy::unwrap_used, clippy::panic)]

mod http_support;
#[path = "redis_node/reach.rs"]
mod redis_reach;
#[path = "redis_node/server.rs"]
mod redis_server;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ferromcp_http_server::redis::{RedisConfig, RedisStores};
use ferromcp_http_server::{HttpConfig, HttpServer};
use http::Method;
use http_support::{Sse, call, open_session, post, send};
use redis_reach::{namespace, redis_up, redis_url};
use redis_server::server;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

async fn within<F: std::future::Future>(f: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(60), f)
        .await
        .unwrap()
}

struct Node {
    addr: SocketAddr,
    stores: RedisStores,
    accept: JoinHandle<std::io::Result<()>>,
}

async fn node_with(config: RedisConfig) -> Node {
    let stores = RedisStores::connect(config).await.unwrap();
    let srv = HttpServer::bind("127.0.0.1:0", server(), stores.apply(HttpConfig::default()))
        .await
        .unwrap();
    let addr = srv.local_addr();
    Node {
        addr,
        stores,
        accept: tokio::spawn(srv.run()),
    }
}

async fn node(ns: &str) -> Node {
    node_with(
        RedisConfig::new(redis_url())
            .namespace(ns)
            .heartbeat(Duration::from_millis(100)),
    )
    .await
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

/// A GET with `Last-Event-ID: last` on `addr`: its status and (when 200) its events.
async fn resume(addr: SocketAddr, sid: &str, last: &str) -> (u16, Vec<(String, Value)>) {
    let resp = send(addr, Method::GET, &resume_headers(sid, last), "").await;
    let status = resp.status().as_u16();
    if status != 200 {
        return (status, Vec::new());
    }
    (status, collect(&mut Sse::new(resp)).await)
}

/// POSTs `body` on `addr` and returns the priming event's id, the stream dropped after it.
async fn priming_id(addr: SocketAddr, sid: &str, body: &Value) -> String {
    let resp = post(addr, &[("mcp-session-id", sid)], body).await;
    let prime = Sse::new(resp).next_event().await.unwrap();
    assert!(prime.data.is_empty(), "the first event primes");
    prime.id.unwrap()
}

async fn redis_exists(key: &str) -> bool {
    let client = redis::Client::open(redis_url()).unwrap();
    let mut c = client.get_multiplexed_async_connection().await.unwrap();
    redis::cmd("EXISTS")
        .arg(key)
        .query_async::<i64>(&mut c)
        .await
        .unwrap()
        == 1
}

// ---- a counting proxy between a node and Redis ----

/// The commands of each read from a node's Redis connections (one read: one round trip,
/// the commands of a pipeline together), over every connection through the proxy.
type Reads = Arc<Mutex<Vec<Vec<String>>>>;

/// The name of the first complete RESP command in `buf` and its length; `None` until one
/// is complete.
fn take_command(buf: &[u8]) -> Option<(usize, String)> {
    fn line(buf: &[u8], at: usize) -> Option<(usize, &[u8])> {
        let end = buf[at..].windows(2).position(|w| w == b"\r\n")? + at;
        Some((end + 2, &buf[at..end]))
    }
    let (mut at, head) = line(buf, 0)?;
    let n: usize = std::str::from_utf8(head.strip_prefix(b"*")?)
        .ok()?
        .parse()
        .ok()?;
    let mut name = String::new();
    for i in 0..n {
        let (next, len) = line(buf, at)?;
        let len: usize = std::str::from_utf8(len.strip_prefix(b"$")?)
            .ok()?
            .parse()
            .ok()?;
        if buf.len() < next + len + 2 {
            return None;
        }
        if i == 0 {
            name = String::from_utf8_lossy(&buf[next..next + len]).to_uppercase();
        }
        at = next + len + 2;
    }
    Some((at, name))
}

/// A TCP proxy to the test Redis that logs the commands of every read from its clients.
async fn counting_proxy() -> (String, Reads) {
    let url = redis_url();
    let target = url
        .strip_prefix("redis://")
        .unwrap()
        .split('/')
        .next()
        .unwrap()
        .to_owned();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let reads = Reads::default();
    let log = reads.clone();
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            let Ok(server) = TcpStream::connect(&target).await else {
                continue;
            };
            let (mut cr, mut cw) = client.into_split();
            let (mut sr, mut sw) = server.into_split();
            tokio::spawn(async move { tokio::io::copy(&mut sr, &mut cw).await });
            let log = log.clone();
            tokio::spawn(async move {
                let mut pending = Vec::new();
                let mut chunk = vec![0u8; 64 * 1024];
                loop {
                    let n = match cr.read(&mut chunk).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => n,
                    };
                    pending.extend_from_slice(&chunk[..n]);
                    let mut names = Vec::new();
                    while let Some((used, name)) = take_command(&pending) {
                        pending.drain(..used);
                        names.push(name);
                    }
                    if !names.is_empty() {
                        log.lock().unwrap().push(names);
                    }
                    if sw.write_all(&chunk[..n]).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    (format!("redis://{addr}"), reads)
}

/// The proxy parses pipelines into their commands, across reads.
#[test]
fn the_proxy_reads_resp_commands() {
    let one = b"*3\r\n$4\r\nXADD\r\n$1\r\nk\r\n$0\r\n\r\n*1\r\n$4\r\nPING\r\n";
    let (used, name) = take_command(one).unwrap();
    assert_eq!(name, "XADD");
    let (rest, name) = take_command(&one[used..]).unwrap();
    assert_eq!((name.as_str(), used + rest), ("PING", one.len()));
    assert!(take_command(&one[..10]).is_none());
}

/// B72 (issue 19 point 7): on the owning node, a 2025-11-25 `tools/call` answered at once
/// costs one Redis round trip: the priming event and the response in one pipeline (before,
/// two: the priming event was stored before the request was dispatched). Counted by a
/// proxy between the node and Redis: the reads holding a command other than the blocking
/// `XREAD` of the node's inbox, over 20 sequential calls after a warm-up call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn b72_one_redis_round_trip_per_call_on_the_owning_node() {
    if !redis_up("b72_one_redis_round_trip_per_call_on_the_owning_node").await {
        return;
    }
    within(async {
        let (url, reads) = counting_proxy().await;
        let ns = namespace("roundtrips");
        // A long heartbeat: nothing periodic but the inbox's blocking read in the window.
        let config = RedisConfig::new(url)
            .namespace(&ns)
            .heartbeat(Duration::from_secs(60));
        let a = node_with(config).await;
        let sid = open_session(a.addr, "2025-11-25").await;
        let h = [("mcp-session-id", sid.as_str())];
        let resp = post(a.addr, &h, &call(2, "echo", json!({"text": "warm"}))).await;
        assert_eq!(Sse::new(resp).rest().await.len(), 1);
        let calls = 20;
        let from = reads.lock().unwrap().len();
        for id in 0..calls {
            let resp = post(a.addr, &h, &call(10 + id, "echo", json!({"text": "x"}))).await;
            let got = Sse::new(resp).rest().await;
            assert_eq!(got.len(), 1);
            assert_eq!(got[0]["result"]["content"][0]["text"], "x");
        }
        let window: Vec<Vec<String>> = reads.lock().unwrap()[from..]
            .iter()
            .filter(|cmds| cmds.iter().any(|c| c != "XREAD"))
            .cloned()
            .collect();
        let xadds = window.iter().flatten().filter(|c| *c == "XADD").count();
        let commands: usize = window.iter().map(Vec::len).sum();
        eprintln!(
            "{calls} calls: {} round trips, {commands} commands ({xadds} XADD): {window:?}",
            window.len()
        );
        assert_eq!(
            xadds,
            2 * calls as usize,
            "priming event and response stored"
        );
        assert!(
            window.len() <= calls as usize + 1,
            "at most one round trip per call: {} for {calls} calls",
            window.len()
        );
        a.accept.abort();
    })
    .await;
}

/// B73: the priming id of a request stream resumes on the other node before the answer
/// exists (nothing of the stream stored yet: the priming event waits for the response) and
/// after it, on both nodes: the response exactly once each time; the same id is unknown in
/// another session, and a priming id of a stream never opened is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn b73_priming_id_resumes_on_any_node_before_and_after_the_answer() {
    if !redis_up("b73_priming_id_resumes_on_any_node_before_and_after_the_answer").await {
        return;
    }
    within(async {
        let ns = namespace("priming");
        let a = node(&ns).await;
        let b = node(&ns).await;
        let sid = open_session(a.addr, "2025-11-25").await;

        // Before the answer: nothing stored yet, the resume on B waits for it.
        let p = priming_id(a.addr, &sid, &call(2, "wait", json!({"ms": 700}))).await;
        let (stream, _) = p.split_once(':').unwrap();
        assert!(
            !redis_exists(&format!("{ns}:e:{sid}:{stream}")).await,
            "the priming event is stored with the response, not before"
        );
        let (status, got) = resume(b.addr, &sid, &p).await;
        assert_eq!(status, 200);
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(got[0].1["id"], 2);
        assert_eq!(got[0].1["result"]["content"][0]["text"], "waited");

        // After the answer: replayed on either node, once.
        let p = priming_id(a.addr, &sid, &call(3, "wait", json!({"ms": 50}))).await;
        tokio::time::sleep(Duration::from_millis(400)).await;
        for addr in [b.addr, a.addr] {
            let (status, got) = resume(addr, &sid, &p).await;
            assert_eq!(status, 200);
            assert_eq!(got.len(), 1, "{got:?}");
            assert_eq!(got[0].1["id"], 3);
        }

        // An answer at once (echo): the priming id resumes to exactly the response.
        let p = priming_id(a.addr, &sid, &call(4, "echo", json!({"text": "e"}))).await;
        let (status, got) = resume(b.addr, &sid, &p).await;
        assert_eq!((status, got.len()), (200, 1), "{got:?}");
        assert_eq!(got[0].1["id"], 4);

        // Another session: the same id is unknown there; an unopened stream's too.
        let other = open_session(a.addr, "2025-11-25").await;
        for addr in [a.addr, b.addr] {
            assert_eq!(resume(addr, &other, &p).await.0, 400);
        }
        let unopened = format!("r999:{}", p.split_once(':').unwrap().1);
        assert_eq!(resume(b.addr, &sid, &unopened).await.0, 400);
    })
    .await;
}

/// B73: a stream that sends progress before its answer stores the priming event with the
/// first notification: resumed mid-way on the other node, and from the priming id once
/// finished, every event comes exactly once, in order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn b73_progress_then_answer_resumes_mid_way_exactly_once() {
    if !redis_up("b73_progress_then_answer_resumes_mid_way_exactly_once").await {
        return;
    }
    within(async {
        let ns = namespace("midway");
        let a = node(&ns).await;
        let b = node(&ns).await;
        let sid = open_session(a.addr, "2025-11-25").await;
        let resp = post(
            a.addr,
            &[("mcp-session-id", &sid)],
            &call(5, "countdown", json!({"n": 6, "ms": 80})),
        )
        .await;
        let mut sse = Sse::new(resp);
        let prime = sse.next_event().await.unwrap().id.unwrap();
        let mut seen = Vec::new();
        let mut last = prime.clone();
        while seen.len() < 2 {
            let e = sse.next_event().await.unwrap();
            last = e.id.clone().unwrap();
            seen.push((
                last.clone(),
                serde_json::from_str::<Value>(&e.data).unwrap(),
            ));
        }
        drop(sse);
        let (status, rest) = resume(b.addr, &sid, &last).await;
        assert_eq!(status, 200);
        seen.extend(rest);
        let ticks = |all: &[(String, Value)]| -> Vec<u64> {
            all.iter()
                .filter_map(|(_, v)| v["params"]["data"].as_u64())
                .collect()
        };
        assert_eq!(ticks(&seen), [5, 4, 3, 2, 1, 0], "{seen:?}");
        assert_eq!(seen.len(), 7, "six ticks and the answer: {seen:?}");
        assert_eq!(seen[6].1["result"]["content"][0]["text"], "liftoff");
        // From the priming id, on both nodes: the whole stream, once, in order.
        for addr in [b.addr, a.addr] {
            let (status, all) = resume(addr, &sid, &prime).await;
            assert_eq!(status, 200);
            assert_eq!(all, seen);
        }
    })
    .await;
}

/// B73: the owner dies before the answer (and before anything of the stream was stored):
/// a resume on the other node with the priming id is served as before, a stream that ends
/// without a response once the owner's heartbeat lapses; the session is then 404.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn b73_owner_dead_before_the_answer_ends_the_resumed_stream() {
    if !redis_up("b73_owner_dead_before_the_answer_ends_the_resumed_stream").await {
        return;
    }
    within(async {
        let ns = namespace("deadprime");
        let a = node(&ns).await;
        let b = node(&ns).await;
        let sid = open_session(a.addr, "2025-11-25").await;
        let p = priming_id(a.addr, &sid, &call(6, "wait", json!({"ms": 20_000}))).await;
        a.accept.abort();
        a.stores.sessions.shutdown().await;
        let (status, got) = resume(b.addr, &sid, &p).await;
        assert_eq!(status, 200);
        assert!(got.is_empty(), "{got:?}");
        let resp = post(
            b.addr,
            &[("mcp-session-id", &sid)],
            &call(7, "echo", json!({})),
        )
        .await;
        assert_eq!(resp.status(), 404);
    })
    .await;
}

/// S99: the per-stream retention bound (`RedisConfig::events_per_stream`) still holds for a
/// priming event stored with the stream's next event: after many events the stream keeps
/// about the bound, and its trimmed priming id is refused (400), not taken for a priming
/// event not stored yet.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s99_a_trimmed_priming_id_is_refused() {
    if !redis_up("s99_a_trimmed_priming_id_is_refused").await {
        return;
    }
    within(async {
        let ns = namespace("trimprime");
        let config = RedisConfig::new(redis_url())
            .namespace(&ns)
            .heartbeat(Duration::from_millis(100))
            .events_per_stream(10);
        let a = node_with(config).await;
        let sid = open_session(a.addr, "2025-11-25").await;
        let resp = post(
            a.addr,
            &[("mcp-session-id", &sid)],
            &call(2, "countdown", json!({"n": 300, "ms": 0})),
        )
        .await;
        let mut sse = Sse::new(resp);
        let prime = sse.next_event().await.unwrap().id.unwrap();
        assert_eq!(collect(&mut sse).await.len(), 301);
        assert_eq!(resume(a.addr, &sid, &prime).await.0, 400, "trimmed away");
        let (stream, _) = prime.split_once(':').unwrap();
        let client = redis::Client::open(redis_url()).unwrap();
        let mut c = client.get_multiplexed_async_connection().await.unwrap();
        let len: usize = redis::cmd("XLEN")
            .arg(format!("{ns}:e:{sid}:{stream}"))
            .query_async(&mut c)
            .await
            .unwrap();
        assert!(len < 300, "the stream holds {len} entries");
    })
    .await;
}
