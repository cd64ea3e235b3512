//! Load on loopback and in memory, bounded in count and time (the L-list of the robustness
//! plan, `docs/requirements.md`), with a ledger: every request id ends exactly once, no
//! response reaches the wrong client, sessions, in-flight handlers, file descriptors and
//! memory return to their baseline, and a canary request stays answered throughout.
//!
//! Sizes: 1,000 concurrent Streamable HTTP sessions and 10,000 requests in flight by default
//! (a few seconds in a debug build). `FERROMCP_LOAD_SCALE=N` multiplies both, for a manual
//! soak. Timing assertions are deliberately loose (a loaded 2-core machine): the canary must
//! be answered within seconds, not milliseconds; its worst latency is printed.
#![allow(clippy::unwrap_used, clippy::panic, clippy::cast_possible_truncation)]

mod http_support;

use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ferromcp_dispatch::{DispatcherConfig, MessageSink, MessageSource, memory_pair};
use ferromcp_http_server::{HttpConfig, InMemorySessionStore, SessionStore};
use ferromcp_server::{Server, StreamConfig, serve_stream};
use ferromcp_types::jsonrpc::{Message, Notification, Payload, Request};
use ferromcp_types::mcp::methods::CallTool;
use ferromcp_types::mcp::{CallToolRequestParams, CallToolResult};
use http::Method;
use http_support::*;
use serde_json::{Value, json};
use tokio::task::JoinSet;

/// The multiplier of the default sizes (`FERROMCP_LOAD_SCALE`, default 1).
fn scale() -> usize {
    std::env::var("FERROMCP_LOAD_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1)
        .max(1)
}

/// The bound on a whole load test.
const BUDGET: Duration = Duration::from_secs(120);

/// The loose bound on one canary round trip while under load.
const CANARY_SLO: Duration = Duration::from_secs(5);

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

fn rss_kib() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

/// Waits (up to 10 s) until `f` holds; the last value it saw otherwise.
async fn settles(mut f: impl FnMut() -> bool) -> bool {
    for _ in 0..500 {
        if f() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    f()
}

/// A small deterministic generator (xorshift64*), so a failing run can be replayed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Runs `ping` on its own session every 20 ms until `stop`; returns the worst latency.
fn canary(
    addr: SocketAddr,
    sid: String,
    stop: Arc<AtomicBool>,
) -> tokio::task::JoinHandle<Duration> {
    tokio::spawn(async move {
        let mut worst = Duration::ZERO;
        let mut id = 1_000_000;
        while !stop.load(Ordering::SeqCst) {
            id += 1;
            let started = Instant::now();
            let ping = json!({"jsonrpc":"2.0","id":id,"method":"ping"});
            let resp = post(addr, &[("mcp-session-id", &sid)], &ping).await;
            let events = Sse::new(resp).rest().await;
            assert_eq!(
                events.first().map(|e| &e["id"]),
                Some(&json!(id)),
                "{events:?}"
            );
            worst = worst.max(started.elapsed());
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        worst
    })
}

/// L02 + L01 (V10, V14, V16, SV-H11): 1,000 Streamable HTTP sessions live at once, each
/// calling `echo` with its own nonce concurrently; every response carries that session's id
/// and nonce (no cross-talk); the session cap holds exactly; after DELETE the session store
/// is empty, unknown session ids get 404 and allocate nothing, every slot is free again,
/// and file descriptors and memory return to their baseline; a canary session stays
/// answered throughout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(not(target_os = "linux"), ignore = "reads /proc (Linux only)")]
async fn l02_thousand_concurrent_sessions_with_a_ledger_and_back_to_baseline() {
    tokio::time::timeout(BUDGET, async {
        let sessions = 1000 * scale();
        let store = Arc::new(InMemorySessionStore::default());
        // Every connection comes from 127.0.0.1: the per-peer connection cap is the total.
        let config = HttpConfig::default()
            .max_sessions(sessions + 1)
            // Every session comes from 127.0.0.1: the total cap is the one tested here.
            .max_sessions_per_peer(sessions + 1)
            .max_connections(sessions + 64)
            .max_connections_per_peer(sessions + 64)
            .session_store(store.clone());
        let (addr, _) = start(config).await;
        // The canary's session is the baseline's one live session.
        let canary_sid = open_session(addr, "2025-11-25").await;
        tokio::time::sleep(Duration::from_millis(100)).await;
        let fds_before = open_fds();
        let rss_before = rss_kib();
        let stop = Arc::new(AtomicBool::new(false));
        let canary_task = canary(addr, canary_sid, stop.clone());

        // Open every session (at most 200 handshakes at a time).
        let mut sids = Vec::with_capacity(sessions);
        let mut set = JoinSet::new();
        for i in 0..sessions {
            if set.len() >= 200 {
                sids.push(set.join_next().await.unwrap().unwrap());
            }
            set.spawn(async move { (i, open_session(addr, "2025-11-25").await) });
        }
        while let Some(r) = set.join_next().await {
            sids.push(r.unwrap());
        }
        assert_eq!(store.len(), sessions + 1);
        // The cap holds: one more is refused.
        let resp = post(addr, &[], &initialize(1, "2025-11-25")).await;
        assert_eq!(resp.status(), 503);
        assert_eq!(store.len(), sessions + 1);

        // Every session calls at once; the ledger checks id and nonce per session.
        let ledger = Arc::new(Mutex::new(HashMap::<usize, usize>::new()));
        let mut set = JoinSet::new();
        for (i, sid) in sids.clone() {
            let ledger = ledger.clone();
            set.spawn(async move {
                let nonce = format!("session-{i}-{}", sid.len() * 7919 + i);
                let id = (i * 3 + 11) as i64;
                let resp = post(
                    addr,
                    &[("mcp-session-id", &sid)],
                    &call(id, "echo", json!({"text": nonce})),
                )
                .await;
                let events = Sse::new(resp).rest().await;
                assert_eq!(events.len(), 1, "{events:?}");
                assert_eq!(events[0]["id"], id, "the answer to this session's request");
                assert_eq!(
                    events[0]["result"]["content"][0]["text"], nonce,
                    "no cross-talk"
                );
                *ledger.lock().unwrap().entry(i).or_default() += 1;
            });
        }
        while let Some(r) = set.join_next().await {
            r.unwrap();
        }
        let ledger = ledger.lock().unwrap().clone();
        assert_eq!(ledger.len(), sessions);
        assert!(
            ledger.values().all(|n| *n == 1),
            "every request ended exactly once"
        );

        // Close them all.
        let mut set = JoinSet::new();
        for (_, sid) in sids {
            set.spawn(async move {
                let resp = send(addr, Method::DELETE, &[("mcp-session-id", &sid)], "").await;
                assert!(resp.status().is_success(), "{}", resp.status());
            });
            if set.len() >= 200 {
                set.join_next().await.unwrap().unwrap();
            }
        }
        while let Some(r) = set.join_next().await {
            r.unwrap();
        }
        assert!(
            settles(|| store.len() == 1).await,
            "sessions left: {}",
            store.len()
        );

        // Guessed session ids: 404, nothing allocated.
        let mut rng = Rng(0x5eed);
        for _ in 0..200 {
            let guess = format!("{:016x}{:016x}", rng.next(), rng.next());
            let resp = post(
                addr,
                &[("mcp-session-id", &guess)],
                &call(1, "echo", json!({})),
            )
            .await;
            assert_eq!(resp.status(), 404);
        }
        assert_eq!(store.len(), 1);

        stop.store(true, Ordering::SeqCst);
        let worst = canary_task.await.unwrap();
        eprintln!("canary worst latency under load: {worst:?}");
        assert!(worst < CANARY_SLO, "the canary took {worst:?}");

        // Every slot is free again: as many sessions as before can be opened.
        let again = open_session(addr, "2025-11-25").await;
        send(addr, Method::DELETE, &[("mcp-session-id", &again)], "").await;

        let fds_ok = settles(|| open_fds() <= fds_before + 8).await;
        assert!(fds_ok, "fds: {} before, {} after", fds_before, open_fds());
        let rss_after = rss_kib();
        eprintln!("RSS: {rss_before} KiB before, {rss_after} KiB after {sessions} sessions");
        // Freed memory is not always returned to the OS; the bound catches a per-session leak
        // of more than ~64 KiB (the sessions' event stores, connections, tasks).
        assert!(
            rss_after < rss_before + 64 * sessions,
            "RSS grew from {rss_before} KiB to {rss_after} KiB"
        );
    })
    .await
    .unwrap();
}

/// Per-handler accounting of the storm server.
#[derive(Default)]
struct Storm {
    started: AtomicUsize,
    ended: AtomicUsize,
    /// Ids whose handler slept to the end (and so may be answered).
    completed: Mutex<HashSet<i64>>,
}

/// Counts a handler's end however it ends (result, cancellation, drop).
struct EndGuard(Arc<Storm>);

impl Drop for EndGuard {
    fn drop(&mut self) {
        self.0.ended.fetch_add(1, Ordering::SeqCst);
    }
}

fn storm_server(storm: Arc<Storm>) -> Server {
    Server::builder("storm", "1.0.0")
        .on::<CallTool, _, _, _>(move |ctx, p: CallToolRequestParams| {
            let storm = storm.clone();
            async move {
                storm.started.fetch_add(1, Ordering::SeqCst);
                let _guard = EndGuard(storm.clone());
                let arg = |k: &str| {
                    p.arguments
                        .as_ref()
                        .and_then(|a| a.get(k))
                        .and_then(Value::as_i64)
                };
                let id = arg("id").unwrap_or(-1);
                let ms = arg("ms").unwrap_or(0).unsigned_abs();
                tokio::select! {
                    () = ctx.cancellation().cancelled() => Ok(CallToolResult::error("cancelled")),
                    () = tokio::time::sleep(Duration::from_millis(ms)) => {
                        storm.completed.lock().unwrap().insert(id);
                        Ok(CallToolResult::text(format!("done {id}")))
                    }
                }
            }
        })
        .build()
        .unwrap()
}

fn cancel(id: i64) -> Message {
    Message::Notification(Notification::new(
        "notifications/cancelled",
        Some(Payload::from(json!({"requestId": id, "reason": "storm"}))),
    ))
}

/// L07 + L08 (SV-P07, V13): 10,000 `tools/call` requests in flight on one 2025-11-25 stream
/// and a cancellation storm (about five in eight cancelled at random moments: before the request is
/// sent, while it runs, after it ended, twice; plus cancellations of ids never sent). The
/// ledger: every request not cancelled is answered exactly once with its own id and nonce;
/// a handler that honoured its cancellation is never answered; no id is answered twice;
/// every handler that started has ended; a canary `ping` on the same stream is answered
/// throughout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn l07_ten_thousand_in_flight_with_a_cancellation_storm() {
    tokio::time::timeout(BUDGET, async {
        let n = 10_000 * scale() as i64;
        let storm = Arc::new(Storm::default());
        let server = storm_server(storm.clone());
        let (client, server_end) = memory_pair(1024);
        let config = StreamConfig::default().dispatcher(
            DispatcherConfig::default().max_concurrent_requests(2 * n as usize),
        );
        let serving = tokio::spawn(async move {
            serve_stream(&server, server_end.source, server_end.sink, config).await
        });
        let sink = client.sink;
        let mut source = client.source;
        let init = json!({"protocolVersion":"2025-11-25","capabilities":{},
                          "clientInfo":{"name":"storm","version":"1"}});
        sink.send(Message::Request(Request::new(0, "initialize", Some(Payload::from(init)))).into())
            .await
            .unwrap();
        let first = source.recv().await.unwrap().unwrap();
        assert!(matches!(first.message, Message::Response(_)), "{:?}", first.message);
        sink.send(Message::Notification(Notification::new("notifications/initialized", None)).into())
            .await
            .unwrap();

        // The reader: every response, per id; canary answers timed.
        let answers: Arc<Mutex<HashMap<i64, Vec<Value>>>> = Arc::default();
        let pings: Arc<Mutex<HashMap<i64, Instant>>> = Arc::default();
        let worst_ping = Arc::new(Mutex::new(Duration::ZERO));
        let reader = {
            let answers = answers.clone();
            let pings = pings.clone();
            let worst_ping = worst_ping.clone();
            tokio::spawn(async move {
                while let Some(frame) = source.recv().await {
                    let Ok(frame) = frame else { continue };
                    let v: Value = serde_json::from_slice(&frame.message.to_vec()).unwrap();
                    let Some(id) = v["id"].as_i64() else { continue };
                    if let Some(sent) = pings.lock().unwrap().remove(&id) {
                        let mut w = worst_ping.lock().unwrap();
                        *w = (*w).max(sent.elapsed());
                        continue;
                    }
                    answers.lock().unwrap().entry(id).or_default().push(v);
                }
            })
        };

        // The storm plan: for each id, maybe a cancellation before, during or after; some twice.
        let mut rng = Rng(0xC0FFEE);
        let mut plan: Vec<(u64, Message)> = Vec::new(); // (at ms, frame)
        let mut cancelled = HashSet::new();
        for id in 1..=n {
            let at = rng.below(400);
            let ms = rng.below(300);
            let params = json!({"name":"wait","arguments":{"id": id, "ms": ms}});
            plan.push((at, Message::Request(Request::new(id, "tools/call", Some(Payload::from(params))))));
            match rng.below(8) {
                0 => plan.push((at.saturating_sub(1 + rng.below(50)), cancel(id))), // before
                1 | 2 => plan.push((at + rng.below(ms + 1), cancel(id))),         // while running
                3 => plan.push((at + ms + 50 + rng.below(100), cancel(id))),      // after
                4 => {
                    let t = at + rng.below(ms + 1);
                    plan.push((t, cancel(id)));
                    plan.push((t + rng.below(20), cancel(id))); // twice
                }
                _ => continue,
            }
            cancelled.insert(id);
        }
        for k in 0..(n / 10) {
            plan.push((rng.below(600), cancel(n + 1_000_000 + k))); // never sent
        }
        plan.sort_by_key(|(at, _)| *at);

        let started = Instant::now();
        let mut ping_id = 10_000_000;
        let mut next_ping = Duration::ZERO;
        for (at, frame) in plan {
            let due = Duration::from_millis(at);
            if let Some(wait) = due.checked_sub(started.elapsed()) {
                tokio::time::sleep(wait).await;
            }
            if started.elapsed() >= next_ping {
                ping_id += 1;
                pings.lock().unwrap().insert(ping_id, Instant::now());
                sink.send(Message::Request(Request::new(ping_id, "ping", None)).into())
                    .await
                    .unwrap();
                next_ping = started.elapsed() + Duration::from_millis(25);
            }
            sink.send(frame.into()).await.unwrap();
        }

        // Quiesce: every handler that started has ended, then the answers stop changing.
        let ended = settles(|| {
            let s = storm.started.load(Ordering::SeqCst);
            s == storm.ended.load(Ordering::SeqCst) && s > 0
        })
        .await;
        assert!(ended, "handlers still running: {} started, {} ended",
            storm.started.load(Ordering::SeqCst), storm.ended.load(Ordering::SeqCst));
        let expected_min = n as usize - cancelled.len();
        assert!(settles(|| answers.lock().unwrap().len() >= expected_min).await);
        tokio::time::sleep(Duration::from_millis(300)).await;

        // A last canary after the storm.
        ping_id += 1;
        pings.lock().unwrap().insert(ping_id, Instant::now());
        sink.send(Message::Request(Request::new(ping_id, "ping", None)).into()).await.unwrap();
        assert!(settles(|| pings.lock().unwrap().is_empty()).await, "a ping went unanswered");

        let answers = answers.lock().unwrap().clone();
        let completed = storm.completed.lock().unwrap().clone();
        let mut answered_cancelled = 0;
        for id in 1..=n {
            let got = answers.get(&id).map_or(&[][..], Vec::as_slice);
            assert!(got.len() <= 1, "id {id} answered {} times: {got:?}", got.len());
            if let Some(v) = got.first() {
                assert_eq!(v["id"], id);
                assert_eq!(v["result"]["content"][0]["text"], format!("done {id}"), "{v}");
                assert!(completed.contains(&id), "id {id} answered though its handler was cancelled");
                if cancelled.contains(&id) {
                    answered_cancelled += 1;
                }
            } else {
                assert!(cancelled.contains(&id), "id {id} (never cancelled) got no answer");
            }
        }
        assert!(answers.keys().all(|id| (1..=n).contains(id)), "answers to ids never sent");
        let honoured = cancelled.len() - answered_cancelled;
        eprintln!(
            "storm: {n} requests, {} cancelled ({honoured} honoured, {answered_cancelled} had already ended), worst ping {:?}",
            cancelled.len(),
            *worst_ping.lock().unwrap()
        );
        assert!(honoured > 0, "the storm cancelled nothing in flight");
        assert_eq!(storm.started.load(Ordering::SeqCst), storm.ended.load(Ordering::SeqCst));
        let worst = *worst_ping.lock().unwrap();
        assert!(worst < CANARY_SLO, "a canary ping took {worst:?}");

        drop(sink);
        let _ = tokio::time::timeout(Duration::from_secs(10), serving).await;
        reader.abort();
    })
    .await
    .unwrap();
}
