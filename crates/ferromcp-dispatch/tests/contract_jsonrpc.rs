//! `JsonRpcDispatcher` cases that depend on the wire: exact encoding, framing errors, end of
//! stream, the concurrency bound, cancel modes and inline methods. The test drives one end of
//! an in-memory message-stream pair by hand.

#![allow(clippy::unwrap_used, clippy::panic, reason = "test assertions")]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use common::{Counter, echo_handler, field, ms, timed};
use ferromcp_dispatch::*;
use ferromcp_jsonrpc::{
    DecodeError, ErrorCode, Message, Notification, Payload, Request, RequestId,
};
use serde_json::{Value, json};

/// A dispatcher serving `handler`, and the raw end the test speaks through.
fn raw_peer(
    handler: Arc<dyn Handler>,
    config: DispatcherConfig,
) -> (JsonRpcDispatcher, MemoryTransport) {
    let (raw, end) = memory_pair(64);
    let d = JsonRpcDispatcher::new(end.source, end.sink, config);
    let run = d.clone();
    tokio::spawn(async move { run.run(handler).await });
    (d, raw)
}

async fn send(raw: &MemoryTransport, m: impl Into<Message>) {
    raw.sink
        .send(TransportMessage::from(m.into()))
        .await
        .unwrap();
}

async fn recv(raw: &mut MemoryTransport) -> TransportMessage {
    raw.source
        .recv()
        .await
        .expect("a message")
        .expect("decoded")
}

fn json_of(m: &Message) -> Value {
    serde_json::from_slice(&m.to_vec()).unwrap()
}

fn req(id: impl Into<RequestId>, method: &str, params: Value) -> Request {
    Request::new(id, method, Some(params.into()))
}

/// Base Protocol › `_meta`; Utilities › Progress: outbound requests always carry
/// `params._meta`; with a progress callback the request id is the progress token; a caller's
/// id goes on the wire verbatim.
#[tokio::test]
async fn outbound_requests_carry_meta_and_verbatim_ids() {
    timed(async {
        let (d, mut raw) = raw_peer(echo_handler(), DispatcherConfig::default());
        let call = tokio::spawn(d.send_request("a", None, CallOptions::new()));
        let m = recv(&mut raw).await;
        assert_eq!(
            json_of(&m.message),
            json!({"jsonrpc": "2.0", "id": 1, "method": "a", "params": {"_meta": {}}})
        );
        send(&raw, Message::response(1.into(), json!({}))).await;
        call.await.unwrap().unwrap();

        let opts = CallOptions::new().request_id("7").on_progress(|_| {});
        let call = tokio::spawn(d.send_request("b", Some(json!({"x": 1}).into()), opts));
        let m = recv(&mut raw).await;
        assert_eq!(
            json_of(&m.message),
            json!({"jsonrpc": "2.0", "id": "7", "method": "b",
                   "params": {"x": 1, "_meta": {"progressToken": "7"}}})
        );
        // JSON-RPC 2.0 §5: the response's id correlates by value: 7 answers "7".
        send(&raw, Message::response(7.into(), json!({"ok": 1}))).await;
        assert_eq!(field(&call.await.unwrap().unwrap(), "ok"), json!(1));
    })
    .await;
}

/// Utilities › Cancellation: a timeout (-32001) and an abandoned call each send a courtesy
/// `notifications/cancelled` naming the request; with cancel-on-abandon off, nothing is sent.
#[tokio::test]
async fn timeouts_and_abandoned_calls_send_courtesy_cancels() {
    timed(async {
        let (d, mut raw) = raw_peer(echo_handler(), DispatcherConfig::default());
        let e = d
            .send_request("a", None, CallOptions::new().timeout(ms(20)))
            .await
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::REQUEST_TIMEOUT);
        recv(&mut raw).await; // the request
        let v = json_of(&recv(&mut raw).await.message);
        assert_eq!(v["method"], json!("notifications/cancelled"));
        assert_eq!(v["params"]["requestId"], json!(1));

        let call = tokio::spawn(d.send_request("b", None, CallOptions::new()));
        recv(&mut raw).await;
        call.abort();
        let v = json_of(&recv(&mut raw).await.message);
        assert_eq!(v["params"]["requestId"], json!(2));
        assert_eq!(v["params"]["reason"], json!("caller cancelled"));

        let opts = CallOptions::new().timeout(ms(20)).cancel_on_abandon(false);
        assert!(d.send_request("c", None, opts).await.is_err());
        recv(&mut raw).await;
        assert!(raw.source.recv().now_or_never_is_pending().await);
    })
    .await;
}

/// Utilities › Progress: `notifications/progress` for a pending request reaches its callback
/// (token "7" correlates with id 7); progress for unknown tokens is dropped.
#[tokio::test]
async fn inbound_progress_reaches_the_pending_callback() {
    timed(async {
        let (d, mut raw) = raw_peer(echo_handler(), DispatcherConfig::default());
        let got = Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink = got.clone();
        let opts = CallOptions::new()
            .request_id(7)
            .on_progress(move |p| sink.lock().unwrap().push(p.progress));
        let call = tokio::spawn(d.send_request("b", None, opts));
        recv(&mut raw).await;
        for (token, p) in [(json!("7"), 1), (json!(99), 2), (json!(7), 3)] {
            let params = json!({"progressToken": token, "progress": p, "total": "bad"});
            send(
                &raw,
                Notification::new(utility::PROGRESS, Some(params.into())),
            )
            .await;
        }
        send(&raw, Message::response(7.into(), json!({}))).await;
        call.await.unwrap().unwrap();
        assert_eq!(*got.lock().unwrap(), vec![1.0, 3.0]);
    })
    .await;
}

/// JSON-RPC 2.0 §5: late and unknown responses are dropped and the loop goes on.
#[tokio::test]
async fn unknown_responses_are_dropped() {
    timed(async {
        let (_d, mut raw) = raw_peer(echo_handler(), DispatcherConfig::default());
        send(&raw, Message::response(999.into(), json!({}))).await;
        send(
            &raw,
            Message::error(None, ferromcp_jsonrpc::ErrorObject::parse_error("x")),
        )
        .await;
        send(&raw, req(1, "echo", json!({}))).await;
        let m = recv(&mut raw).await;
        assert!(matches!(m.message, Message::Response(r) if r.id == RequestId::from(1)));
    })
    .await;
}

/// JSON-RPC 2.0 §5.1: a framing error is answered -32700 with a null id; a valid JSON value
/// that is not a request is -32600, with its id when it had one.
#[tokio::test]
async fn framing_errors_are_answered() {
    timed(async {
        let (_d, mut raw) = raw_peer(echo_handler(), DispatcherConfig::default());
        raw.sink
            .send_decode_error(DecodeError::Parse("bad".into()))
            .await
            .unwrap();
        let m = recv(&mut raw).await;
        let v = json_of(&m.message);
        assert_eq!(
            (v["id"].clone(), v["error"]["code"].clone()),
            (Value::Null, json!(-32700))
        );
        let e = Message::from_slice(br#"{"jsonrpc":"1.0","id":4,"method":"x"}"#).unwrap_err();
        raw.sink.send_decode_error(e).await.unwrap();
        let v = json_of(&recv(&mut raw).await.message);
        assert_eq!(
            (v["id"].clone(), v["error"]["code"].clone()),
            (json!(4), json!(-32600))
        );
        // And the loop keeps serving.
        send(&raw, req(5, "echo", json!({}))).await;
        assert_eq!(recv(&mut raw).await.message.id(), Some(&RequestId::from(5)));
    })
    .await;
}

/// Dispatcher contract: at end of stream every pending caller gets -32000, in-flight handlers
/// are cancelled and answered -32000, and `run` returns.
#[tokio::test]
async fn eof_fans_out_and_answers_in_flight() {
    timed(async {
        let cancelled = Counter::new();
        let seen = cancelled.clone();
        let handler = handler_fn(move |ctx, _, _| {
            let seen = seen.clone();
            async move {
                ctx.cancellation().cancelled().await;
                seen.add();
                std::future::pending().await
            }
        })
        .into_arc();
        let (raw, end) = memory_pair(64);
        let d = JsonRpcDispatcher::new(end.source, end.sink, DispatcherConfig::default());
        let run = {
            let d = d.clone();
            tokio::spawn(async move { d.run(handler).await })
        };
        let MemoryTransport {
            mut source, sink, ..
        } = raw;
        let call = tokio::spawn(d.send_request("x", None, CallOptions::new()));
        source.recv().await.unwrap().unwrap();
        sink.send(Message::from(req(1, "slow", json!({}))).into())
            .await
            .unwrap();
        tokio::time::sleep(ms(20)).await;
        drop(sink); // end of stream
        run.await.unwrap().unwrap();
        assert_eq!(
            call.await.unwrap().unwrap_err().code,
            ErrorCode::CONNECTION_CLOSED
        );
        let m = source.recv().await.unwrap().unwrap();
        let v = json_of(&m.message);
        assert_eq!(
            (v["id"].clone(), v["error"]["code"].clone()),
            (json!(1), json!(-32000))
        );
        assert!(d.is_closed());
    })
    .await;
}

/// The concurrency bound (DESIGN "Bounded by default"): at most `max_concurrent_requests`
/// handlers run at once; the rest wait and are all served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_handlers_are_bounded() {
    timed(async {
        let running = Arc::new(AtomicUsize::new(0));
        let peak = Arc::new(AtomicUsize::new(0));
        let (r, p) = (running.clone(), peak.clone());
        let handler = handler_fn(move |_, _, _| {
            let (r, p) = (r.clone(), p.clone());
            async move {
                let now = r.fetch_add(1, Ordering::SeqCst) + 1;
                p.fetch_max(now, Ordering::SeqCst);
                tokio::time::sleep(ms(30)).await;
                r.fetch_sub(1, Ordering::SeqCst);
                Ok(Payload::empty_object())
            }
        })
        .into_arc();
        let config = DispatcherConfig::default().max_concurrent_requests(2);
        let (_d, mut raw) = raw_peer(handler, config);
        for i in 0..8 {
            send(&raw, req(i, "work", json!({}))).await;
        }
        for _ in 0..8 {
            assert!(matches!(recv(&mut raw).await.message, Message::Response(_)));
        }
        assert_eq!(peak.load(Ordering::SeqCst), 2);
    })
    .await;
}

/// Utilities › Cancellation, signal mode: the handler only sees its signal, runs to the end,
/// and the cancelled request is never answered.
#[tokio::test]
async fn signal_mode_raises_the_signal_and_never_answers() {
    timed(async {
        let finished = Arc::new(AtomicBool::new(false));
        let f = finished.clone();
        let handler = handler_fn(move |ctx, method, _| {
            let f = f.clone();
            async move {
                if method == "slow" {
                    ctx.cancellation().cancelled().await;
                    f.store(true, Ordering::SeqCst);
                }
                Ok(Payload::empty_object())
            }
        })
        .into_arc();
        let config = DispatcherConfig::default().cancel_mode(CancelMode::Signal);
        let (_d, mut raw) = raw_peer(handler, config);
        send(&raw, req("a", "slow", json!({}))).await;
        let cancel = json!({"requestId": "a", "reason": "user"});
        send(
            &raw,
            Notification::new(utility::CANCELLED, Some(cancel.into())),
        )
        .await;
        send(&raw, req("b", "fast", json!({}))).await;
        let m = recv(&mut raw).await;
        assert_eq!(m.message.id(), Some(&RequestId::from("b")));
        while !finished.load(Ordering::SeqCst) {
            tokio::time::sleep(ms(5)).await;
        }
        assert!(raw.source.recv().now_or_never_is_pending().await);
    })
    .await;
}

/// Utilities › Cancellation, signal mode: a handler that first looks at its signal after the
/// peer cancelled finds it raised (the dispatcher makes the signal on first use).
#[tokio::test]
async fn signal_mode_signal_is_raised_for_a_handler_that_looks_late() {
    timed(async {
        let (go_tx, go_rx) = tokio::sync::watch::channel(false);
        let (seen_tx, mut seen_rx) = tokio::sync::mpsc::channel(1);
        let handler = handler_fn(move |ctx, method, _| {
            let mut go = go_rx.clone();
            let seen = seen_tx.clone();
            async move {
                if method == "slow" {
                    let _ = go.wait_for(|open| *open).await;
                    let _ = seen.send(ctx.cancellation().is_cancelled()).await;
                }
                Ok(Payload::empty_object())
            }
        })
        .into_arc();
        let config = DispatcherConfig::default().cancel_mode(CancelMode::Signal);
        let (_d, mut raw) = raw_peer(handler, config);
        send(&raw, req("a", "slow", json!({}))).await;
        let cancel = json!({"requestId": "a", "reason": "user"});
        send(
            &raw,
            Notification::new(utility::CANCELLED, Some(cancel.into())),
        )
        .await;
        // Messages are read in order: once "b" is answered, the cancellation was handled.
        send(&raw, req("b", "fast", json!({}))).await;
        let m = recv(&mut raw).await;
        assert_eq!(m.message.id(), Some(&RequestId::from("b")));
        go_tx.send(true).unwrap();
        assert_eq!(seen_rx.recv().await, Some(true));
        assert!(raw.source.recv().now_or_never_is_pending().await);
    })
    .await;
}

/// Methods marked inline finish before the next message is read.
#[tokio::test]
async fn inline_methods_finish_before_the_next_message_is_read() {
    timed(async {
        let done = Arc::new(AtomicBool::new(false));
        let order_ok = Arc::new(AtomicBool::new(false));
        let (d1, d2) = (done.clone(), order_ok.clone());
        let handler = handler_fn(move |_, _, _| {
            let d1 = d1.clone();
            async move {
                tokio::time::sleep(ms(30)).await;
                d1.store(true, Ordering::SeqCst);
                Ok(Payload::empty_object())
            }
        })
        .inline("initialize")
        .intercept(move |_, _| {
            d2.store(done.load(Ordering::SeqCst), Ordering::SeqCst);
            std::ops::ControlFlow::Continue(())
        })
        .into_arc();
        let (_d, mut raw) = raw_peer(handler, DispatcherConfig::default());
        send(&raw, req(1, "initialize", json!({}))).await;
        send(&raw, Notification::new("notifications/initialized", None)).await;
        recv(&mut raw).await;
        send(&raw, req(2, "barrier", json!({}))).await;
        recv(&mut raw).await;
        assert!(
            order_ok.load(Ordering::SeqCst),
            "the notification was read before initialize finished"
        );
    })
    .await;
}

/// Transport metadata: answers and the handler's own messages relate to the inbound request;
/// the handler sees the HTTP parts and a per-message back-channel override.
#[tokio::test]
async fn metadata_flows_both_ways() {
    timed(async {
        let handler = handler_fn(|ctx, _, _| async move {
            let uri = ctx.http_parts().map(|p| p.uri.to_string());
            ctx.notify("notifications/message", None).await;
            Ok(json!({"uri": uri, "can": ctx.transport().can_send_requests}).into())
        })
        .into_arc();
        let (_d, mut raw) = raw_peer(handler, DispatcherConfig::default());
        let (parts, ()) = http::Request::builder()
            .uri("/mcp")
            .body(())
            .unwrap()
            .into_parts();
        let mut meta = MessageMeta::default();
        meta.http = Some(Arc::new(parts));
        meta.can_send_requests = Some(false);
        raw.sink
            .send(TransportMessage::new(
                req("r1", "x", json!({})).into(),
                meta,
            ))
            .await
            .unwrap();
        let n = recv(&mut raw).await;
        assert_eq!(n.message.method(), Some("notifications/message"));
        assert_eq!(n.meta.related_request_id, Some(RequestId::from("r1")));
        let r = recv(&mut raw).await;
        assert_eq!(r.meta.related_request_id, Some(RequestId::from("r1")));
        assert_eq!(
            json_of(&r.message)["result"],
            json!({"uri": "/mcp", "can": false})
        );
    })
    .await;
}

/// JSON-RPC 2.0 §4: a request whose id is already in flight is refused with -32600.
#[tokio::test]
async fn duplicate_inbound_ids_are_refused() {
    timed(async {
        let (gate, started) = common::Gate::new();
        let (_d, mut raw) = raw_peer(gate.handler(), DispatcherConfig::default());
        send(&raw, req(1, "hold", json!({}))).await;
        started.wait(1).await;
        send(&raw, req("1", "hold", json!({}))).await;
        let v = json_of(&recv(&mut raw).await.message);
        assert_eq!(v["error"]["code"], json!(-32600));
        gate.open();
        let v = json_of(&recv(&mut raw).await.message);
        assert_eq!(v["id"], json!(1));
        assert!(v.get("result").is_some());
    })
    .await;
}

/// JSON-RPC 2.0 §4 and B12: the refusal of a duplicate id carries the id in `id` only; its
/// message never echoes a 64 KiB id.
#[tokio::test]
async fn duplicate_huge_ids_are_not_echoed_in_the_message() {
    timed(async {
        let (gate, started) = common::Gate::new();
        let (_d, mut raw) = raw_peer(gate.handler(), DispatcherConfig::default());
        let id = "i".repeat(64 * 1024);
        send(&raw, req(id.as_str(), "hold", json!({}))).await;
        started.wait(1).await;
        send(&raw, req(id.as_str(), "hold", json!({}))).await;
        let v = json_of(&recv(&mut raw).await.message);
        assert_eq!(v["error"]["code"], json!(-32600));
        assert_eq!(v["id"], json!(id));
        let message = v["error"]["message"].as_str().unwrap_or_default();
        assert!(message.len() <= 256, "echoed {} bytes", message.len());
        gate.open();
        let v = json_of(&recv(&mut raw).await.message);
        assert!(v.get("result").is_some());
    })
    .await;
}

/// Shutdown grace: in-flight handlers get time to finish and answer normally.
#[tokio::test]
async fn shutdown_grace_lets_handlers_finish() {
    timed(async {
        let started = Counter::new();
        let seen = started.clone();
        let handler = handler_fn(move |_, _, _| {
            let seen = seen.clone();
            async move {
                seen.add();
                tokio::time::sleep(ms(30)).await;
                Ok(json!({"done": true}).into())
            }
        })
        .into_arc();
        let config = DispatcherConfig::default().shutdown_grace(Duration::from_secs(2));
        let (d, mut raw) = raw_peer(handler, config);
        send(&raw, req(1, "x", json!({}))).await;
        started.wait(1).await;
        d.close();
        let v = json_of(&recv(&mut raw).await.message);
        assert_eq!(v["result"], json!({"done": true}));
    })
    .await;
}

trait PendingExt {
    async fn now_or_never_is_pending(self) -> bool;
}

impl<F: std::future::Future> PendingExt for F {
    async fn now_or_never_is_pending(self) -> bool {
        tokio::time::timeout(ms(20), self).await.is_err()
    }
}

/// Dispatcher contract (MCP "Transports › stdio", shutdown): requests still queued behind the
/// concurrency limit when the peer ends its stream are served within the shutdown grace, not
/// dropped unanswered.
#[tokio::test]
async fn eof_serves_queued_requests_within_the_grace() {
    timed(async {
        let handler = handler_fn(|_, _, params| async move {
            tokio::time::sleep(ms(5)).await;
            Ok(params.unwrap_or_else(Payload::empty_object))
        })
        .into_arc();
        let config = DispatcherConfig::default()
            .max_concurrent_requests(2)
            .shutdown_grace(Duration::from_secs(5));
        let (_d, mut raw) = raw_peer(handler, config);
        for i in 1..=6 {
            send(&raw, req(i, "x", json!({"i": i}))).await;
        }
        let MemoryTransport {
            ref mut source,
            sink,
            ..
        } = raw;
        drop(sink); // end of stream, with requests queued
        let mut answered = Vec::new();
        for _ in 1..=6 {
            let m = source.recv().await.unwrap().unwrap();
            let v = json_of(&m.message);
            assert_eq!(v["result"]["i"], v["id"], "{v}");
            answered.push(v["id"].as_i64().unwrap());
        }
        answered.sort_unstable();
        assert_eq!(answered, [1, 2, 3, 4, 5, 6]);
    })
    .await;
}

/// Dispatcher contract: without a shutdown grace, requests that never started are answered
/// -32000 (connection closed) at end of stream, like the in-flight ones.
#[tokio::test]
async fn eof_without_grace_answers_queued_requests_connection_closed() {
    timed(async {
        let handler = handler_fn(|_, _, _| std::future::pending()).into_arc();
        // Two run (and never finish), the third waits for a slot.
        let config = DispatcherConfig::default()
            .max_concurrent_requests(2)
            .shutdown_grace(Duration::ZERO);
        let (_d, mut raw) = raw_peer(handler, config);
        for i in 1..=3 {
            send(&raw, req(i, "x", json!({}))).await;
        }
        tokio::time::sleep(ms(20)).await;
        let MemoryTransport {
            ref mut source,
            sink,
            ..
        } = raw;
        drop(sink);
        let mut answered = Vec::new();
        for _ in 1..=3 {
            let m = source.recv().await.unwrap().unwrap();
            let v = json_of(&m.message);
            assert_eq!(v["error"]["code"], json!(-32000), "{v}");
            answered.push(v["id"].as_i64().unwrap());
        }
        answered.sort_unstable();
        assert_eq!(answered, [1, 2, 3]);
    })
    .await;
}
