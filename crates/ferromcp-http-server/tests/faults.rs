//! Fault injection against the Streamable HTTP server (the F-list of the robustness plan,
//! `docs/requirements.md`): a client that disconnects mid-request in each era, a handler
//! that panics, a reader too slow for its stream, and a stream dropped and resumed.
//!
//! Spec: 2025-11-25 "basic/transports" §Sending Messages 6 (disconnect is not cancellation),
//! §Resumability and Redelivery; 2026-07-28 "basic/transports/streamable-http" §Cancellation
//! (closing the stream is cancellation); "basic/index" §Responses (-32603).
#![allow(clippy::unwrap_used, clippy::panic)]

mod http_support;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use ferromcp_http_server::{HttpConfig, HttpServer};
use ferromcp_server::Server;
use ferromcp_types::jsonrpc::Payload;
use ferromcp_types::mcp::methods::{CallTool, ListTools};
use ferromcp_types::mcp::{
    CallToolRequestParams, CallToolResult, JsonObject, ListToolsResult, PaginatedRequestParams,
    Tool,
};
use http::{Method, Request, Response};
use http_body_util::Full;
use http_support::*;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};

async fn within<F: std::future::Future>(f: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(60), f)
        .await
        .unwrap()
}

/// What the fault server's handlers did.
#[derive(Default)]
struct Counters {
    /// `ticks` notifications handed to the session (each `notify` returned).
    emitted: AtomicUsize,
    /// Handlers that ran to their end (result returned).
    finished: AtomicUsize,
    /// Handlers that saw their cancellation.
    cancelled: AtomicUsize,
}

fn object(v: Value) -> JsonObject {
    match v {
        Value::Object(m) => m,
        _ => JsonObject::new(),
    }
}

/// Tools: `ticks {n, ms, pad}` sends `n` related notifications `{"i": i, "pad": "x"*pad}`,
/// `ms` apart, then answers `ticked n`, stopping (and counting) on cancellation; `boom`
/// panics; `wait {ms}` sleeps; `echo {text}`.
fn fault_server(counters: Arc<Counters>) -> Server {
    let tools = vec![
        Tool::new("ticks", object(json!({"type":"object"}))),
        Tool::new("boom", object(json!({"type":"object"}))),
        Tool::new("wait", object(json!({"type":"object"}))),
        Tool::new("echo", object(json!({"type":"object"}))),
    ];
    Server::builder("faults", "1.0.0")
        .on::<ListTools, _, _, _>(move |_ctx, _p: PaginatedRequestParams| {
            let tools = tools.clone();
            async move { Ok(ListToolsResult::new(tools)) }
        })
        .on::<CallTool, _, _, _>(move |ctx, p: CallToolRequestParams| {
            let counters = counters.clone();
            async move {
                let num = |k: &str| {
                    p.arguments
                        .as_ref()
                        .and_then(|a| a.get(k))
                        .and_then(Value::as_u64)
                        .unwrap_or(0)
                };
                Ok(match p.name.as_str() {
                    "ticks" => {
                        let pad = "x".repeat(usize::try_from(num("pad")).unwrap());
                        for i in 0..num("n") {
                            if ctx.cancellation().is_cancelled() {
                                counters.cancelled.fetch_add(1, Ordering::SeqCst);
                                return Ok(CallToolResult::error("cancelled"));
                            }
                            let params = json!({"level":"info","data":{"i": i, "pad": pad}});
                            ctx.peer()
                                .notify("notifications/message", Some(Payload::from(params)))
                                .await;
                            counters.emitted.fetch_add(1, Ordering::SeqCst);
                            if num("ms") > 0 {
                                tokio::select! {
                                    () = ctx.cancellation().cancelled() => {}
                                    () = tokio::time::sleep(Duration::from_millis(num("ms"))) => {}
                                }
                            }
                        }
                        counters.finished.fetch_add(1, Ordering::SeqCst);
                        CallToolResult::text(format!("ticked {}", num("n")))
                    }
                    "boom" => panic!("the boom tool panics on purpose"),
                    "wait" => {
                        tokio::time::sleep(Duration::from_millis(num("ms"))).await;
                        CallToolResult::text("waited")
                    }
                    _ => CallToolResult::text(
                        p.arguments
                            .as_ref()
                            .and_then(|a| a.get("text"))
                            .and_then(Value::as_str)
                            .unwrap_or_default(),
                    ),
                })
            }
        })
        .build()
        .unwrap()
}

async fn start_faults(config: HttpConfig) -> (SocketAddr, Arc<Counters>) {
    let counters = Arc::new(Counters::default());
    let srv = HttpServer::bind("127.0.0.1:0", fault_server(counters.clone()), config)
        .await
        .unwrap();
    let addr = srv.local_addr();
    tokio::spawn(srv.run());
    (addr, counters)
}

async fn eventually(what: &str, mut f: impl FnMut() -> bool) {
    for _ in 0..500 {
        if f() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("timed out waiting until {what}");
}

/// The `i` of a `ticks` notification.
fn tick(v: &Value) -> Option<u64> {
    (v["method"] == "notifications/message").then(|| v["params"]["data"]["i"].as_u64())?
}

async fn resume(addr: SocketAddr, sid: &str, last: &str) -> Response<Incoming> {
    let h = [
        ("mcp-session-id", sid),
        ("accept", "text/event-stream"),
        ("last-event-id", last),
    ];
    send(addr, Method::GET, &h, "").await
}

/// Reads up to `max` events with data; returns them and the last event id seen.
async fn read_some(sse: &mut Sse, max: usize, last: &mut String) -> Vec<Value> {
    let mut out = Vec::new();
    while out.len() < max {
        let Some(e) = sse.next_event().await else {
            break;
        };
        if let Some(id) = e.id {
            *last = id;
        }
        if !e.data.is_empty() {
            out.push(serde_json::from_str(&e.data).unwrap());
        }
    }
    out
}

/// POSTs on a fresh connection whose socket receive buffer is tiny, so a client that stops
/// reading pushes back on the server within a few frames.
async fn post_small_window(
    addr: SocketAddr,
    headers: &[(&str, &str)],
    body: &Value,
) -> Response<Incoming> {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let stream = socket.connect(addr).await.unwrap();
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(conn);
    let mut req = Request::builder()
        .method(Method::POST)
        .uri("/mcp")
        .header("host", addr.to_string())
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let req = req.body(Full::new(Bytes::from(body.to_string()))).unwrap();
    tokio::time::timeout(WAIT, sender.send_request(req))
        .await
        .unwrap()
        .unwrap()
}

/// F01 + F05 (SV-H09 2025-11-25, SV-S06, SV-S07): the client drops the connection twice in
/// the middle of a request; the handler is not cancelled and runs to the end; each resume
/// with `Last-Event-ID` continues that stream, and across the drops the client sees every
/// notification exactly once, in order, then the result.
#[tokio::test]
async fn f01_f05_handshake_disconnect_continues_and_resumes_without_gap_or_duplicate() {
    within(async {
        let (addr, counters) = start_faults(HttpConfig::default()).await;
        let sid = open_session(addr, "2025-11-25").await;
        let body = call(7, "ticks", json!({"n": 12, "ms": 40}));
        let resp = post(addr, &[("mcp-session-id", &sid)], &body).await;
        let mut sse = Sse::new(resp);
        let mut last = String::new();
        let mut seen = read_some(&mut sse, 3, &mut last).await;
        drop(sse); // disconnect mid-request
        tokio::time::sleep(Duration::from_millis(120)).await;
        assert_eq!(counters.cancelled.load(Ordering::SeqCst), 0);

        let mut sse = Sse::new(resume(addr, &sid, &last).await);
        seen.extend(read_some(&mut sse, 3, &mut last).await);
        drop(sse); // and again, on the resumed stream
        eventually("the handler ran to its end", || {
            counters.finished.load(Ordering::SeqCst) == 1
        })
        .await;
        assert_eq!(
            counters.cancelled.load(Ordering::SeqCst),
            0,
            "disconnect is not cancel"
        );

        let resp = resume(addr, &sid, &last).await;
        assert_eq!(resp.status(), 200);
        seen.extend(Sse::new(resp).rest().await);
        let ticks: Vec<u64> = seen.iter().filter_map(tick).collect();
        assert_eq!(ticks, (0..12).collect::<Vec<_>>(), "no gap, no duplicate");
        let last_message = seen.last().unwrap();
        assert_eq!(last_message["id"], 7, "{seen:?}");
        assert_eq!(last_message["result"]["content"][0]["text"], "ticked 12");
        assert_eq!(
            seen.len(),
            13,
            "nothing but the ticks and the result: {seen:?}"
        );

        // The session still serves.
        let resp = post(
            addr,
            &[("mcp-session-id", &sid)],
            &call(8, "echo", json!({"text": "ok"})),
        )
        .await;
        let events = Sse::new(resp).rest().await;
        assert_eq!(events[0]["result"]["content"][0]["text"], "ok");
    })
    .await;
}

/// F02 (SV-H09 2026-07-28, X26): closing the response stream cancels the handler; it sends
/// nothing more (its remaining notifications are never produced) and a new request is served.
#[tokio::test]
async fn f02_modern_disconnect_cancels_and_nothing_more_is_sent() {
    within(async {
        let config = HttpConfig::default().sse_deferral(Duration::from_millis(10));
        let (addr, counters) = start_faults(config).await;
        let h = modern_headers("ticks");
        let body = modern_call(1, "ticks", json!({"n": 1000, "ms": 20})).to_string();
        let (head, socket) = raw_post(addr, &hdrs(&h), &body).await;
        assert!(head.contains("text/event-stream"), "{head}");
        drop(socket);
        eventually("the handler saw its cancellation", || {
            counters.cancelled.load(Ordering::SeqCst) == 1
        })
        .await;
        let emitted = counters.emitted.load(Ordering::SeqCst);
        assert!(emitted < 1000, "the handler stopped early ({emitted} sent)");
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert_eq!(
            counters.emitted.load(Ordering::SeqCst),
            emitted,
            "nothing after cancel"
        );
        assert_eq!(counters.finished.load(Ordering::SeqCst), 0);

        let h = modern_headers("echo");
        let resp = post(
            addr,
            &hdrs(&h),
            &modern_call(2, "echo", json!({"text": "still"})),
        )
        .await;
        assert_eq!(resp.status(), 200);
        let v = json_body(resp).await;
        assert_eq!(v["result"]["content"][0]["text"], "still");
    })
    .await;
}

/// F03 (V11): a handler that panics gets -32603 for that request alone; a request in flight
/// on the same session completes and the session keeps serving (2025-11-25).
#[tokio::test]
async fn f03_handler_panic_is_32603_and_the_session_keeps_serving() {
    within(async {
        let (addr, _) = start_faults(HttpConfig::default()).await;
        let sid = open_session(addr, "2025-11-25").await;
        let slow = post(
            addr,
            &[("mcp-session-id", &sid)],
            &call(1, "wait", json!({"ms": 300})),
        )
        .await;
        let mut slow = Sse::new(slow);
        let resp = post(
            addr,
            &[("mcp-session-id", &sid)],
            &call(2, "boom", json!({})),
        )
        .await;
        let events = Sse::new(resp).rest().await;
        assert_eq!(events.len(), 1, "{events:?}");
        assert_eq!(events[0]["id"], 2);
        assert_eq!(events[0]["error"]["code"], -32603, "{events:?}");
        let resp = post(
            addr,
            &[("mcp-session-id", &sid)],
            &call(3, "echo", json!({"text": "after"})),
        )
        .await;
        let events = Sse::new(resp).rest().await;
        assert_eq!(events[0]["result"]["content"][0]["text"], "after");
        let events = slow.rest().await;
        assert_eq!(events[0]["id"], 1);
        assert_eq!(events[0]["result"]["content"][0]["text"], "waited");
    })
    .await;
}

/// F03 (V11), 2026-07-28: a panicking handler is -32603 and the server serves the next POST.
#[tokio::test]
async fn f03_modern_handler_panic_is_32603() {
    within(async {
        let (addr, _) = start_faults(HttpConfig::default()).await;
        for id in 1..=3 {
            let h = modern_headers("boom");
            let resp = post(addr, &hdrs(&h), &modern_call(id, "boom", json!({}))).await;
            let v = json_body(resp).await;
            assert_eq!(v["id"], id);
            assert_eq!(v["error"]["code"], -32603, "{v}");
        }
        let h = modern_headers("echo");
        let resp = post(
            addr,
            &hdrs(&h),
            &modern_call(9, "echo", json!({"text": "alive"})),
        )
        .await;
        assert_eq!(
            json_body(resp).await["result"]["content"][0]["text"],
            "alive"
        );
    })
    .await;
}

/// F08 (V13), 2026-07-28: a reader that stops reading pushes back on the handler (its
/// `notify` waits) instead of queueing without bound; once the reader catches up, every
/// notification arrives in order, then the result.
#[tokio::test]
async fn f08_modern_slow_reader_gets_backpressure_not_an_unbounded_queue() {
    within(async {
        let n: u64 = 1000;
        let config = HttpConfig::default()
            .sse_deferral(Duration::from_millis(10))
            .stream_queue(4);
        let (addr, counters) = start_faults(config).await;
        let h = modern_headers("ticks");
        let body = modern_call(1, "ticks", json!({"n": n, "pad": 16 * 1024}));
        let resp = post_small_window(addr, &hdrs(&h), &body).await;
        let mut sse = Sse::new(resp);
        let mut last = String::new();
        let first = read_some(&mut sse, 1, &mut last).await;
        assert_eq!(first.iter().filter_map(tick).next(), Some(0));
        // Stop reading: the producer must stall far below n (queue + socket buffers).
        tokio::time::sleep(Duration::from_millis(500)).await;
        let stalled = counters.emitted.load(Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert_eq!(
            counters.emitted.load(Ordering::SeqCst),
            stalled,
            "the producer waits"
        );
        assert!(
            stalled < 500,
            "{stalled} of {n} notifications went out unread"
        );
        let rest = sse.rest().await;
        let ticks: Vec<u64> = first.iter().chain(&rest).filter_map(tick).collect();
        assert_eq!(ticks, (0..n).collect::<Vec<_>>());
        assert_eq!(
            rest.last().unwrap()["result"]["content"][0]["text"],
            format!("ticked {n}")
        );
        assert_eq!(counters.finished.load(Ordering::SeqCst), 1);
    })
    .await;
}

/// F08 + F05 (V13, SV-S07), 2025-11-25: a reader too slow for its stream does not stall the
/// handler or grow a queue: the server closes the stream once `stream_queue` frames are
/// waiting (keeping the events for resumption), the handler finishes, and a resume delivers
/// the rest, with no gap and no duplicate.
#[tokio::test]
async fn f08_handshake_slow_reader_is_cut_off_and_resumes_without_gap() {
    within(async {
        let n: usize = 300;
        let config = HttpConfig::default().stream_queue(8);
        let (addr, counters) = start_faults(config).await;
        let sid = open_session(addr, "2025-11-25").await;
        let body = call(4, "ticks", json!({"n": n, "pad": 16 * 1024}));
        let resp = post_small_window(addr, &[("mcp-session-id", &sid)], &body).await;
        let mut sse = Sse::new(resp);
        let mut last = String::new();
        let prime = sse.next_event().await.unwrap();
        last = prime.id.unwrap_or(last);
        eventually("the handler finished despite the stalled reader", || {
            counters.finished.load(Ordering::SeqCst) == 1
        })
        .await;
        let mut seen = read_some(&mut sse, usize::MAX, &mut last).await;
        assert!(
            seen.len() < n,
            "the stream was cut off ({} of {n} delivered)",
            seen.len()
        );
        assert!(seen.iter().all(|v| v.get("result").is_none()));
        let resp = resume(addr, &sid, &last).await;
        assert_eq!(resp.status(), 200);
        seen.extend(Sse::new(resp).rest().await);
        let ticks: Vec<u64> = seen.iter().filter_map(tick).collect();
        assert_eq!(ticks.len(), n);
        assert_eq!(ticks, (0..n as u64).collect::<Vec<_>>());
        assert_eq!(seen.last().unwrap()["id"], 4);
    })
    .await;
}
