//! The dispatcher contract, run against both dispatchers: `JsonRpcDispatcher` over an
//! in-memory message-stream pair, and the in-process `DirectDispatcher` pair.
//!
//! Each case names what it covers: JSON-RPC 2.0 (§4 request objects, §5 response objects,
//! §5.1 error codes), MCP "Base Protocol" (request ids, `_meta`), "Utilities › Cancellation"
//! and "Utilities › Progress". Cases that depend on the wire (framing, exact encoding,
//! concurrency bounds) are JSON-RPC-only and live in `contract_jsonrpc.rs`.

#![allow(clippy::unwrap_used, clippy::panic, reason = "test assertions")]

#[macro_use]
mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use ferromcp_dispatch::*;
use ferromcp_jsonrpc::{ErrorCode, ErrorObject, Payload};
use serde_json::{Value, json};
use tokio::sync::mpsc;

contract_paused!(
    timeout_gives_32001_and_cancels_the_handler,
    progress_restarts_the_timeout,
    max_total_timeout_holds_while_progress_arrives,
);

contract!(
    intercept_sees_notifications_in_order,
    intercept_can_consume,
    no_back_channel_gives_32600,
    sends_related_to_an_answered_request_are_refused,
    progress_reaches_the_callback,
    kept_progress_route_outlives_the_answer_until_released,
    progress_after_the_answer_is_dropped_without_keep,
    no_progress_token_makes_progress_a_no_op,
    abandoning_a_call_cancels_the_peer_handler,
    cancellation_works_server_to_client,
    cancel_on_abandon_off_leaves_the_handler_running,
    explicit_cancel_notification_cancels,
    close_fans_out_32000,
    notify_after_close_is_dropped,
    handler_errors_map_at_one_boundary,
    panicking_handler_gives_32603_and_serving_continues,
    thousand_concurrent_requests_both_ways,
    run_twice_is_refused,
);

/// Dispatcher contract: the intercept sees every notification synchronously, in order.
async fn intercept_sees_notifications_in_order(kind: Kind) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let server = handler_fn(|_, _, _| async { Ok(Payload::empty_object()) })
        .intercept(move |method, params| {
            let n = params
                .and_then(|p| p.parse::<Value>().ok())
                .map(|v| v["n"].clone());
            log.lock().unwrap().push((method.to_owned(), n));
            std::ops::ControlFlow::Continue(())
        })
        .into_arc();
    let conn = Conn::new(kind, echo_handler(), server);
    for n in 0..100 {
        conn.client
            .notify("notifications/message", Some(json!({"n": n}).into()))
            .await;
    }
    // A round trip: every earlier notification has been read by now.
    conn.client
        .send_request("barrier", None, CallOptions::new())
        .await
        .unwrap();
    let seen = seen.lock().unwrap().clone();
    let expected: Vec<_> = (0..100)
        .map(|n| ("notifications/message".to_owned(), Some(json!(n))))
        .collect();
    assert_eq!(seen, expected, "{kind:?}");
}

/// Dispatcher contract: a consumed notification does not reach `on_notify`.
async fn intercept_can_consume(kind: Kind) {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let server = handler_fn(|_, _, _| async { Ok(Payload::empty_object()) })
        .intercept(|method, _| {
            if method == "eaten" {
                std::ops::ControlFlow::Break(())
            } else {
                std::ops::ControlFlow::Continue(())
            }
        })
        .on_notify(move |ctx, method, _| {
            let tx = tx.clone();
            async move {
                assert!(ctx.request_id().is_none());
                let _ = tx.send(method);
            }
        })
        .into_arc();
    let conn = Conn::new(kind, echo_handler(), server);
    conn.client.notify("eaten", None).await;
    conn.client.notify("kept", None).await;
    assert_eq!(rx.recv().await.unwrap(), "kept");
    conn.client
        .send_request("barrier", None, CallOptions::new())
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert!(
        rx.try_recv().is_err(),
        "{kind:?}: the consumed one reached on_notify"
    );
}

/// Utilities › Cancellation + timeouts: a timeout gives -32001 and the peer's handler is
/// cancelled (courtesy `notifications/cancelled`).
async fn timeout_gives_32001_and_cancels_the_handler(kind: Kind) {
    let (watch, dropped) = DropWatch::new();
    let conn = Conn::new(kind, echo_handler(), watch.handler());
    let e = conn
        .client
        .send_request("forever", None, CallOptions::new().timeout(ms(50)))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::REQUEST_TIMEOUT, "{kind:?}");
    dropped.wait(1).await;
}

/// Utilities › Progress: progress restarts the per-request timeout.
async fn progress_restarts_the_timeout(kind: Kind) {
    let server = handler_fn(|ctx, _, _| async move {
        for i in 0..8 {
            tokio::time::sleep(ms(25)).await;
            ctx.progress(f64::from(i), None, None).await;
        }
        Ok(Payload::empty_object())
    })
    .into_arc();
    let conn = Conn::new(kind, echo_handler(), server);
    let r = conn
        .client
        .send_request(
            "slow",
            None,
            CallOptions::new().timeout(ms(120)).on_progress(|_| {}),
        )
        .await;
    assert!(r.is_ok(), "{kind:?}: {r:?}");
}

/// Utilities › Progress: the maximum total timeout holds even while progress arrives.
async fn max_total_timeout_holds_while_progress_arrives(kind: Kind) {
    let server = handler_fn(|ctx, _, _| async move {
        loop {
            tokio::time::sleep(ms(10)).await;
            ctx.progress(1.0, None, None).await;
        }
    })
    .into_arc();
    let conn = Conn::new(kind, echo_handler(), server);
    let started = tokio::time::Instant::now();
    let e = conn
        .client
        .send_request(
            "chatty",
            None,
            CallOptions::new()
                .timeout(ms(60))
                .max_total_timeout(ms(200))
                .on_progress(|_| {}),
        )
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::REQUEST_TIMEOUT, "{kind:?}");
    assert!(
        started.elapsed() >= ms(190),
        "{kind:?}: {:?}",
        started.elapsed()
    );
}

/// Dispatcher contract: sending a request where there is no back channel fails with -32600.
async fn no_back_channel_gives_32600(kind: Kind) {
    let server = handler_fn(|ctx, _, _| async move {
        assert!(!ctx.transport().can_send_requests);
        let e = ctx
            .send_request("sampling", None, CallOptions::new())
            .await
            .unwrap_err();
        assert_eq!(SendRefused::of(&e), Some(SendRefused::NoBackChannel));
        // Notifications still flow.
        ctx.notify("notifications/message", None).await;
        Ok(json!({"code": e.code.0}).into())
    })
    .into_arc();
    let conn = Conn::with(kind, echo_handler(), server, Setup::no_back_channel());
    let r = conn
        .client
        .send_request("x", None, CallOptions::new())
        .await
        .unwrap();
    assert_eq!(field(&r, "code"), json!(-32600), "{kind:?}");
}

/// MCP Base Protocol › Requests (a message relates to a request only while it is
/// outstanding; the Python SDK v2's `can_send_request` rule): once the handler has
/// returned, its context refuses `send_request` with -32600 marked
/// `SendRefused::RequestAnswered` and drops progress; a notification still reaches the
/// peer, no longer related to the finished request.
async fn sends_related_to_an_answered_request_are_refused(kind: Kind) {
    let (seen_tx, mut seen_rx) = mpsc::unbounded_channel::<String>();
    let client = handler_fn(|_ctx, _method, _params| async { Ok(Payload::empty_object()) })
        .on_notify(move |_ctx, method, _params| {
            let seen = seen_tx.clone();
            async move {
                let _ = seen.send(method);
            }
        })
        .into_arc();
    let saved: Arc<Mutex<Option<DispatchContext>>> = Arc::new(Mutex::new(None));
    let server = handler_fn(move |ctx: DispatchContext, method, _params| {
        let saved = saved.clone();
        async move {
            if method == "start" {
                assert!(ctx.can_send_request() && !ctx.is_answered());
                *saved.lock().unwrap() = Some(ctx);
                return Ok(Payload::empty_object());
            }
            let started = saved.lock().unwrap().clone().unwrap();
            assert!(started.is_answered() && !started.can_send_request());
            let e = started
                .send_request("ping", None, CallOptions::new())
                .await
                .unwrap_err();
            // Unrelated now: it still reaches the client, on the standalone channel.
            started.notify("notifications/late", None).await;
            started.progress(1.0, None, None).await;
            // The live request still reaches the client.
            ctx.notify("notifications/live", None).await;
            Ok(
                json!({"code": e.code.0, "refused": SendRefused::of(&e).map(|r| r.as_str())})
                    .into(),
            )
        }
    })
    .into_arc();
    let conn = Conn::new(kind, client, server);
    let (progress_tx, mut progress_rx) = mpsc::unbounded_channel();
    // The caller keeps the token's route open: only the callee's refusal stops the report.
    let keep = KeepProgress::new();
    conn.client
        .send_request(
            "start",
            None,
            CallOptions::new()
                .on_progress(move |p| progress_tx.send(p.progress).unwrap())
                .keep_progress(keep.clone()),
        )
        .await
        .unwrap();
    let r = conn
        .client
        .send_request("late", None, CallOptions::new())
        .await
        .unwrap();
    assert_eq!(field(&r, "code"), json!(-32600), "{kind:?}");
    assert_eq!(field(&r, "refused"), json!("requestAnswered"), "{kind:?}");
    // Both notifications reach the client; progress does not.
    let mut seen = vec![seen_rx.recv().await.unwrap(), seen_rx.recv().await.unwrap()];
    tokio::time::sleep(ms(50)).await;
    while let Ok(m) = seen_rx.try_recv() {
        seen.push(m);
    }
    seen.sort();
    assert_eq!(
        seen,
        ["notifications/late", "notifications/live"],
        "{kind:?}"
    );
    assert!(
        progress_rx.try_recv().is_err(),
        "{kind:?}: progress after the answer"
    );
}

/// Utilities › Progress: the handler's reports reach the caller's callback, in order.
async fn progress_reaches_the_callback(kind: Kind) {
    let server = handler_fn(|ctx, _, _| async move {
        assert!(ctx.progress_token().is_some());
        for i in 1..=3 {
            ctx.progress(f64::from(i), Some(3.0), Some(&format!("step {i}")))
                .await;
        }
        Ok(Payload::empty_object())
    })
    .into_arc();
    let conn = Conn::new(kind, echo_handler(), server);
    let got = Arc::new(Mutex::new(Vec::new()));
    let sink = got.clone();
    conn.client
        .send_request(
            "work",
            None,
            CallOptions::new().on_progress(move |p| sink.lock().unwrap().push(p)),
        )
        .await
        .unwrap();
    let got = got.lock().unwrap().clone();
    let expected: Vec<Progress> = (1..=3)
        .map(|i| Progress::new(f64::from(i), Some(3.0), Some(format!("step {i}"))))
        .collect();
    assert_eq!(got, expected, "{kind:?}");
}

/// A server whose `start` handler answers at once but keeps its context, and whose
/// `emit {n}` handler reports progress `n` through that kept context before answering (so
/// the report is on the wire, and delivered, before `emit`'s answer).
fn late_progress_server() -> Arc<dyn Handler> {
    let saved: Arc<Mutex<Option<DispatchContext>>> = Arc::new(Mutex::new(None));
    handler_fn(move |ctx, method, params| {
        let saved = saved.clone();
        async move {
            if method == "start" {
                *saved.lock().unwrap() = Some(ctx);
                if params.is_some_and(|p| field(&p, "fail") == json!(true)) {
                    return Err(ErrorObject::internal_error("start failed").into());
                }
            } else {
                let n = field(params.as_ref().unwrap(), "n").as_f64().unwrap();
                let started = saved.lock().unwrap().clone().unwrap();
                // The answered request's context sends nothing more; work that outlives it
                // reports under its token through a context of its own.
                let late = DispatchContext::builder(Arc::new(ctx.clone()), ctx.transport().clone())
                    .progress_of(&started)
                    .build();
                late.progress(n, None, None).await;
            }
            Ok(Payload::empty_object())
        }
    })
    .into_arc()
}

/// Has the server report progress `n` on the `start` request, after `start` was answered.
async fn emit(conn: &Conn, n: u32) {
    conn.client
        .send_request("emit", Some(json!({"n": n}).into()), CallOptions::new())
        .await
        .unwrap();
}

/// Utilities › Progress, as MCP 2025-11-25 Tasks › Task Progress Notifications extends it (the
/// token stays valid after the answer): with `keep_progress`, reports the peer sends under
/// the request's token after a successful answer keep reaching the callback, in order, until
/// the holder is released; after that they are dropped.
async fn kept_progress_route_outlives_the_answer_until_released(kind: Kind) {
    let conn = Conn::new(kind, echo_handler(), late_progress_server());
    let (tx, mut rx) = mpsc::unbounded_channel();
    let keep = KeepProgress::new();
    conn.client
        .send_request(
            "start",
            None,
            CallOptions::new()
                .on_progress(move |p| tx.send(p.progress).unwrap())
                .keep_progress(keep.clone()),
        )
        .await
        .unwrap();
    for n in 1..=3 {
        emit(&conn, n).await;
    }
    for n in 1..=3 {
        assert_eq!(rx.try_recv(), Ok(f64::from(n)), "{kind:?}");
    }
    assert!(!keep.is_released());
    drop(keep); // the last clone: the route ends
    emit(&conn, 4).await;
    assert!(rx.try_recv().is_err(), "{kind:?}: progress after release");
}

/// Utilities › Progress: without `keep_progress`, reports after the answer are dropped; an
/// error answer, or a holder released before the answer, keeps nothing even with it.
async fn progress_after_the_answer_is_dropped_without_keep(kind: Kind) {
    let conn = Conn::new(kind, echo_handler(), late_progress_server());
    let (tx, mut rx) = mpsc::unbounded_channel();
    conn.client
        .send_request(
            "start",
            None,
            CallOptions::new().on_progress(move |p| tx.send(p.progress).unwrap()),
        )
        .await
        .unwrap();
    emit(&conn, 1).await;
    assert!(
        rx.try_recv().is_err(),
        "{kind:?}: progress after the answer"
    );

    let conn = Conn::new(kind, echo_handler(), late_progress_server());
    let (tx, mut rx) = mpsc::unbounded_channel();
    let keep = KeepProgress::new();
    let err = conn
        .client
        .send_request(
            "start",
            Some(json!({"fail": true}).into()),
            CallOptions::new()
                .on_progress(move |p| tx.send(p.progress).unwrap())
                .keep_progress(keep.clone()),
        )
        .await
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::INTERNAL_ERROR, "{kind:?}");
    emit(&conn, 1).await;
    assert!(
        rx.try_recv().is_err(),
        "{kind:?}: progress kept after an error answer"
    );

    let conn = Conn::new(kind, echo_handler(), late_progress_server());
    let (tx, mut rx) = mpsc::unbounded_channel();
    let keep = KeepProgress::new();
    keep.release();
    conn.client
        .send_request(
            "start",
            None,
            CallOptions::new()
                .on_progress(move |p| tx.send(p.progress).unwrap())
                .keep_progress(keep.clone()),
        )
        .await
        .unwrap();
    emit(&conn, 1).await;
    assert!(
        rx.try_recv().is_err(),
        "{kind:?}: progress kept by a holder released before the answer"
    );
}

/// Utilities › Progress: without a progress token, `progress` is a no-op.
async fn no_progress_token_makes_progress_a_no_op(kind: Kind) {
    let server = handler_fn(|ctx, _, _| async move {
        assert!(ctx.progress_token().is_none());
        ctx.progress(1.0, None, None).await;
        Ok(Payload::empty_object())
    })
    .into_arc();
    let (tx, mut rx) = mpsc::unbounded_channel();
    let client = handler_fn(|_, _, _| async { Ok(Payload::empty_object()) })
        .on_notify(move |_, m, _| {
            let tx = tx.clone();
            async move {
                let _ = tx.send(m);
            }
        })
        .into_arc();
    let conn = Conn::new(kind, client, server);
    conn.client
        .send_request("work", None, CallOptions::new())
        .await
        .unwrap();
    tokio::time::sleep(ms(20)).await;
    assert!(
        rx.try_recv().is_err(),
        "{kind:?}: progress was sent without a token"
    );
}

/// Utilities › Cancellation: a caller that drops its future cancels the peer's handler.
async fn abandoning_a_call_cancels_the_peer_handler(kind: Kind) {
    let (watch, dropped) = DropWatch::new();
    let conn = Conn::new(kind, echo_handler(), watch.handler());
    let call = tokio::spawn(
        conn.client
            .send_request("forever", None, CallOptions::new()),
    );
    watch.started.wait(1).await;
    call.abort();
    dropped.wait(1).await;
}

/// Utilities › Cancellation, server → client: a request the server sends through its context
/// times out and the client's handler is cancelled.
async fn cancellation_works_server_to_client(kind: Kind) {
    let (watch, dropped) = DropWatch::new();
    let server = handler_fn(|ctx, _, _| async move {
        let e = ctx
            .send_request("elicit", None, CallOptions::new().timeout(ms(50)))
            .await
            .unwrap_err();
        Ok(json!({"code": e.code.0}).into())
    })
    .into_arc();
    let conn = Conn::new(kind, watch.handler(), server);
    let r = conn
        .client
        .send_request("call", None, CallOptions::new())
        .await
        .unwrap();
    assert_eq!(field(&r, "code"), json!(-32001), "{kind:?}");
    dropped.wait(1).await;
}

/// Utilities › Cancellation: with cancel-on-abandon off, a timeout does not cancel the peer.
async fn cancel_on_abandon_off_leaves_the_handler_running(kind: Kind) {
    let (watch, dropped) = DropWatch::new();
    let conn = Conn::new(kind, echo_handler(), watch.handler());
    let e = conn
        .client
        .send_request(
            "init",
            None,
            CallOptions::new().timeout(ms(30)).cancel_on_abandon(false),
        )
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::REQUEST_TIMEOUT);
    if kind == Kind::JsonRpc {
        // Over the wire the handler runs on; in process the handler lives in the caller's
        // future, so it ends with it (but no cancellation is signalled to it first).
        tokio::time::sleep(ms(50)).await;
        assert_eq!(dropped.count(), 0, "{kind:?}");
    }
}

/// Utilities › Cancellation: `notifications/cancelled` for an in-flight request cancels its
/// handler, which is never answered; the caller gets -32800.
async fn explicit_cancel_notification_cancels(kind: Kind) {
    let (watch, dropped) = DropWatch::new();
    let conn = Conn::new(kind, echo_handler(), watch.handler());
    let call = tokio::spawn(conn.client.send_request(
        "forever",
        None,
        CallOptions::new().request_id("job"),
    ));
    watch.started.wait(1).await;
    conn.client
        .notify(
            utility::CANCELLED,
            Some(json!({"requestId": "job", "reason": "user"}).into()),
        )
        .await;
    let e = call.await.unwrap().unwrap_err();
    assert_eq!(e.code, ErrorCode::REQUEST_CANCELLED, "{kind:?}");
    dropped.wait(1).await;
}

/// Dispatcher contract: close fails every pending caller with -32000, on both sides.
async fn close_fans_out_32000(kind: Kind) {
    let (watch, _dropped) = DropWatch::new();
    let conn = Conn::new(kind, echo_handler(), watch.handler());
    let calls: Vec<_> = (0..3)
        .map(|_| {
            tokio::spawn(
                conn.client
                    .send_request("forever", None, CallOptions::new()),
            )
        })
        .collect();
    watch.started.wait(3).await;
    conn.server.close();
    for call in calls {
        let e = call.await.unwrap().unwrap_err();
        assert_eq!(e.code, ErrorCode::CONNECTION_CLOSED, "{kind:?}");
    }
    conn.client.close();
    let e = conn
        .client
        .send_request("late", None, CallOptions::new())
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::CONNECTION_CLOSED, "{kind:?}");
}

/// Dispatcher contract: notify never fails after close.
async fn notify_after_close_is_dropped(kind: Kind) {
    let conn = Conn::new(kind, echo_handler(), echo_handler());
    conn.client.close();
    conn.client.notify("notifications/message", None).await;
    conn.server.notify("notifications/message", None).await;
}

/// JSON-RPC 2.0 §5.1: protocol errors pass through; invalid params → -32602 without internal
/// text; any other error → -32603 without internal text.
async fn handler_errors_map_at_one_boundary(kind: Kind) {
    let server = handler_fn(|_, method, _| async move {
        match method.as_str() {
            "protocol" => Err(ErrorObject::new(ErrorCode(-32042), "custom")
                .with_data(json!({"k": 1}))
                .into()),
            "params" => Err(HandlerError::invalid_params("field `x` secret detail")),
            _ => Err(HandlerError::internal("secret detail")),
        }
    })
    .into_arc();
    let conn = Conn::new(kind, echo_handler(), server);
    let call = |m: &'static str| conn.client.send_request(m, None, CallOptions::new());
    let e = call("protocol").await.unwrap_err();
    assert_eq!(
        e,
        ErrorObject::new(ErrorCode(-32042), "custom").with_data(json!({"k": 1}))
    );
    let e = call("params").await.unwrap_err();
    assert_eq!(
        (e.code, &*e.message, &e.data),
        (ErrorCode::INVALID_PARAMS, "Invalid params", &None)
    );
    let e = call("other").await.unwrap_err();
    assert_eq!(e.code, ErrorCode::INTERNAL_ERROR, "{kind:?}");
    assert!(!e.message.contains("secret"));
}

/// Dispatcher contract: a panicking handler gives -32603 and the next request is served.
async fn panicking_handler_gives_32603_and_serving_continues(kind: Kind) {
    let server = handler_fn(|_, method, _| async move {
        if method == "boom" {
            panic!("handler exploded");
        }
        Ok(json!({"ok": true}).into())
    })
    .into_arc();
    let conn = Conn::new(kind, echo_handler(), server);
    for _ in 0..3 {
        let e = conn
            .client
            .send_request("boom", None, CallOptions::new())
            .await
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::INTERNAL_ERROR, "{kind:?}");
        let r = conn
            .client
            .send_request("fine", None, CallOptions::new())
            .await
            .unwrap();
        assert_eq!(field(&r, "ok"), json!(true));
    }
}

/// JSON-RPC 2.0 §5 correlation under load: 1,000 concurrent requests in each direction all
/// complete with their own answers.
async fn thousand_concurrent_requests_both_ways(kind: Kind) {
    let conn = Conn::new(kind, echo_handler(), echo_handler());
    let mut calls = Vec::new();
    for n in 0..1000 {
        for side in [&conn.client, &conn.server] {
            let f = side.send_request("echo", Some(json!({"n": n}).into()), CallOptions::new());
            calls.push((n, tokio::spawn(f)));
        }
    }
    for (n, call) in calls {
        let r = call.await.unwrap().unwrap();
        assert_eq!(
            field(&field_payload(&r, "params"), "n"),
            json!(n),
            "{kind:?}"
        );
    }
}

/// Dispatcher contract: a dispatcher runs once.
async fn run_twice_is_refused(kind: Kind) {
    let conn = Conn::new(kind, echo_handler(), echo_handler());
    conn.client
        .send_request("ping", None, CallOptions::new())
        .await
        .unwrap();
    let again = conn.client.run(echo_handler()).await;
    assert_eq!(again, Err(RunError::AlreadyRunning));
}
