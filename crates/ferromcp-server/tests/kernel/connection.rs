//! `Connection` and `RequestPeer`: per-connection state, cleanup hooks, notifications,
//! server→client requests, progress, cancellation and what a handler sees of its request.

use std::sync::Arc;

use crate::common::{Transport, assert_code, connect, init_params, serve_raw, within};
use crate::support::{Log, ladder_server, record};
use ferromcp_dispatch::{
    DirectDispatcher, Dispatcher, DispatcherConfig, JsonRpcDispatcher, memory_pair,
};
use ferromcp_server::{CLEANUP_TIMEOUT, Connection, RequestContext, Server};
use ferromcp_types::ProtocolVersion;
use ferromcp_types::jsonrpc::{ErrorCode, ErrorObject, Payload};
use serde_json::{Value, json};
use tokio::sync::mpsc;

/// Typed per-connection state is shared across the requests of one connection, and not
/// across connections.
#[tokio::test]
async fn connection_state_is_shared_across_requests() {
    within(async {
        let server = ladder_server();
        for t in Transport::ALL {
            let c = connect(t, &server).await;
            c.initialize().await;
            for n in 1..=3 {
                assert_eq!(c.ok("acme/count", None).await, json!({ "n": n }), "{t:?}");
            }
            c.shutdown().await;
            let c = connect(t, &server).await;
            c.initialize().await;
            assert_eq!(c.ok("acme/count", None).await, json!({"n": 1}), "{t:?}");
            c.shutdown().await;
        }

        let (out, _peer) = DirectDispatcher::pair();
        let conn = Connection::for_handshake(Arc::new(out), true, ProtocolVersion::LATEST);
        assert!(conn.state::<u32>().is_none());
        conn.insert_state(7_u32);
        assert_eq!(*conn.state::<u32>().unwrap(), 7);
        assert!(conn.state::<u64>().is_none());
        let clone = conn.clone();
        clone.insert_state(8_u32);
        assert_eq!(*conn.state::<u32>().unwrap(), 8, "clones share state");
    })
    .await;
}

/// Cleanup hooks run when the connection closes, newest first.
#[tokio::test]
async fn connection_cleanup_hooks_run_on_close() {
    within(async {
        for t in Transport::ALL {
            let log: Log = Arc::default();
            let hooks = log.clone();
            let server = Server::builder("close", "0")
                .on_request("acme/hook", move |ctx: RequestContext, p: Value| {
                    let log = hooks.clone();
                    async move {
                        let name = p["name"].as_str().unwrap().to_owned();
                        ctx.connection().on_close(move || async move {
                            record(&log, name);
                        });
                        Ok(json!({}))
                    }
                })
                .build()
                .unwrap();
            let c = connect(t, &server).await;
            c.initialize().await;
            c.ok("acme/hook", Some(json!({"name": "first"}))).await;
            c.ok("acme/hook", Some(json!({"name": "second"}))).await;
            assert!(log.lock().unwrap().is_empty());
            c.shutdown().await;
            assert_eq!(*log.lock().unwrap(), ["second", "first"], "{t:?}");
        }
    })
    .await;
}

/// Cleanup is bounded: a hook that never finishes holds `close` for at most
/// `CLEANUP_TIMEOUT`; a second `close` finds no hooks.
#[tokio::test(start_paused = true)]
async fn connection_cleanup_is_bounded() {
    within(async {
        let (out, _peer) = DirectDispatcher::pair();
        let conn = Connection::for_handshake(Arc::new(out), true, ProtocolVersion::LATEST);
        conn.on_close(std::future::pending::<()>);
        let started = tokio::time::Instant::now();
        conn.close().await;
        let took = started.elapsed();
        assert!(took >= CLEANUP_TIMEOUT, "{took:?}");
        assert!(took < CLEANUP_TIMEOUT * 2, "{took:?}");
        let started = tokio::time::Instant::now();
        conn.close().await;
        assert!(started.elapsed() < CLEANUP_TIMEOUT);
    })
    .await;
}

/// `notify` never fails after the connection closed (direct and JSON-RPC dispatchers).
#[tokio::test]
async fn connection_notify_never_fails_after_close() {
    within(async {
        let (out, peer) = DirectDispatcher::pair();
        let conn = Connection::for_handshake(Arc::new(out.clone()), true, ProtocolVersion::LATEST);
        out.close();
        assert!(peer.is_closed());
        conn.notify("acme/after-close", None).await;
        conn.notify_tools_list_changed().await;
        conn.notify_resource_updated("file:///x").await;

        let (a, _b) = memory_pair(4);
        let d = JsonRpcDispatcher::new(a.source, a.sink, DispatcherConfig::default());
        let conn = Connection::for_handshake(Arc::new(d.clone()), true, ProtocolVersion::LATEST);
        d.close();
        conn.notify("acme/after-close", Some(Payload::from(json!({}))))
            .await;
        conn.notify_prompts_list_changed().await;

        // Even with the other end gone.
        let (a, b) = memory_pair(4);
        drop(b);
        let d = JsonRpcDispatcher::new(a.source, a.sink, DispatcherConfig::default());
        let conn = Connection::for_handshake(Arc::new(d), true, ProtocolVersion::LATEST);
        conn.notify("acme/peer-gone", None).await;
    })
    .await;
}

/// A connection that cannot send server→client requests answers them with -32600; one that
/// can reaches the client.
#[tokio::test]
async fn connection_server_requests_need_a_back_channel() {
    within(async {
        let server = Server::builder("s2c", "0")
            .on_request("acme/roots", |ctx: RequestContext, _p: Value| async move {
                let via_peer = ctx
                    .peer()
                    .send_request("roots/list", None, Default::default())
                    .await;
                let via_connection = ctx
                    .connection()
                    .send_request("roots/list", None, Default::default())
                    .await;
                let show = |r: Result<Payload, ErrorObject>| match r {
                    Ok(p) => p.into_value().unwrap(),
                    Err(e) => json!({"code": e.code.0}),
                };
                Ok(json!({
                    "peer": show(via_peer),
                    "connection": show(via_connection),
                }))
            })
            .build()
            .unwrap();
        for t in Transport::ALL {
            let c = connect(t, &server).await;
            c.initialize().await;
            let r = c.ok("acme/roots", None).await;
            assert_eq!(r["peer"], json!({"roots": []}), "{t:?}");
            assert_eq!(r["connection"], json!({"roots": []}), "{t:?}");
            c.shutdown().await;
        }

        let (out, _peer) = DirectDispatcher::pair();
        let conn = Connection::for_handshake(Arc::new(out), false, ProtocolVersion::LATEST);
        let e = conn
            .send_request("roots/list", None, Default::default())
            .await
            .unwrap_err();
        assert_code(&e, ErrorCode::INVALID_REQUEST);
        assert!(!conn.can_send_requests());
    })
    .await;
}

/// `ctx.peer().notify` relates the notification to the request being handled (the
/// outbound `MessageMeta.related_request_id` carries its id); `ctx.connection().notify` goes
/// to the standalone channel, unrelated.
#[tokio::test]
async fn peer_notifications_are_related_to_the_request() {
    within(async {
        let server = Server::builder("route", "0")
            .on_request("acme/route", |ctx: RequestContext, _p: Value| async move {
                ctx.peer().notify("acme/related", None).await;
                ctx.connection().notify("acme/standalone", None).await;
                Ok(json!({}))
            })
            .build()
            .unwrap();
        let (mut raw, _task) = serve_raw(&server);
        raw.ok(1, "initialize", Some(init_params("2025-11-25")))
            .await;
        raw.notify("notifications/initialized", None).await;
        raw.ok(7, "acme/route", None).await;
        assert_eq!(raw.seen.len(), 2, "{:?}", raw.seen);
        let related = &raw.seen[0];
        assert_eq!(related.message.method(), Some("acme/related"));
        assert_eq!(related.meta.related_request_id, Some(7.into()));
        let standalone = &raw.seen[1];
        assert_eq!(standalone.message.method(), Some("acme/standalone"));
        assert_eq!(standalone.meta.related_request_id, None);
    })
    .await;
}

/// Progress reported through the context reaches the client as `notifications/progress`
/// with the request's token, related to the request; without a token it is a no-op.
#[tokio::test]
async fn context_progress_uses_the_requests_token() {
    within(async {
        let server = Server::builder("progress", "0")
            .on_request("acme/slow", |ctx: RequestContext, _p: Value| async move {
                ctx.progress(0.5, Some(1.0), Some("half")).await;
                Ok(json!({}))
            })
            .build()
            .unwrap();
        let (mut raw, _task) = serve_raw(&server);
        raw.ok(1, "initialize", Some(init_params("2025-11-25")))
            .await;
        raw.notify("notifications/initialized", None).await;
        raw.ok(2, "acme/slow", None).await;
        assert!(raw.seen.is_empty(), "{:?}", raw.seen);
        let params = json!({"_meta": {"progressToken": "tok"}});
        raw.ok(3, "acme/slow", Some(params)).await;
        assert_eq!(raw.seen.len(), 1, "{:?}", raw.seen);
        let frame = raw.seen.remove(0);
        assert_eq!(frame.meta.related_request_id, Some(3.into()));
        let ferromcp_types::jsonrpc::Message::Notification(n) = frame.message else {
            panic!("expected a notification");
        };
        assert_eq!(n.method, "notifications/progress");
        assert_eq!(
            n.params.unwrap().into_value().unwrap(),
            json!({"progressToken": "tok", "progress": 0.5, "total": 1.0, "message": "half"})
        );
    })
    .await;
}

/// A request the client cancels is never answered, its handler sees the cancellation, and
/// the connection goes on.
#[tokio::test]
async fn cancelled_requests_are_not_answered() {
    within(async {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let server = Server::builder("cancel", "0")
            .on_request("acme/wait", move |ctx: RequestContext, _p: Value| {
                let tx = tx.clone();
                async move {
                    let _ = tx.send(());
                    ctx.cancellation().cancelled().await;
                    Ok(json!({}))
                }
            })
            .build()
            .unwrap();
        let (mut raw, _task) = serve_raw(&server);
        raw.ok(1, "initialize", Some(init_params("2025-11-25")))
            .await;
        raw.notify("notifications/initialized", None).await;
        raw.request(2, "acme/wait", None).await;
        within(rx.recv()).await.unwrap();
        raw.notify(
            "notifications/cancelled",
            Some(json!({"requestId": 2, "reason": "changed my mind"})),
        )
        .await;
        assert_eq!(raw.ok(3, "ping", None).await, json!({}));
        assert!(raw.seen.is_empty(), "{:?}", raw.seen);
    })
    .await;
}

/// What a request handler sees of itself: method, request id, protocol version, `_meta`.
#[tokio::test]
async fn request_context_describes_the_request() {
    within(async {
        let server = Server::builder("ctx", "0")
            .on_request("acme/me", |ctx: RequestContext, _p: Value| async move {
                Ok(json!({
                    "method": ctx.method(),
                    "id": ctx.request_id().map(ToString::to_string),
                    "version": ctx.protocol_version().as_str(),
                    "meta": ctx.meta().map(|m| Value::Object(m.as_map().clone())),
                    "cancelled": ctx.cancellation().is_cancelled(),
                }))
            })
            .build()
            .unwrap();
        let (mut raw, _task) = serve_raw(&server);
        raw.ok(1, "initialize", Some(init_params("2025-06-18")))
            .await;
        let r = raw
            .ok(42, "acme/me", Some(json!({"_meta": {"k": "v"}})))
            .await;
        assert_eq!(
            r,
            json!({
                "method": "acme/me",
                "id": "42",
                "version": "2025-06-18",
                "meta": {"k": "v"},
                "cancelled": false,
            })
        );
    })
    .await;
}
