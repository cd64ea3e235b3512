//! Notifications: never answered, `notifications/initialized`, what is dropped before
//! initialization, failing handlers.

use crate::common::{Transport, connect, handshake_raw, init_params, within};
use crate::support::{ladder_server, notes_server};
use serde_json::json;
use tokio::sync::mpsc;

/// Notifications are never answered: not when the handler fails, not when none is
/// registered, not when the params are invalid.
#[tokio::test]
async fn notifications_are_never_answered() {
    within(async {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let (mut raw, _runner, _task) = handshake_raw(&notes_server(tx));
        raw.ok(1, "initialize", Some(init_params("2025-11-25")))
            .await;
        raw.notify("notifications/initialized", None).await;
        raw.notify("acme/fail", Some(json!({}))).await;
        raw.notify("acme/unknown", Some(json!({"x": 1}))).await;
        raw.notify("notifications/progress", Some(json!({"progress": "bad"})))
            .await;
        raw.notify(
            "notifications/roots/list_changed",
            Some(json!("not an object")),
        )
        .await;
        raw.notify("acme/note", Some(json!({"n": 1}))).await;
        assert_eq!(within(rx.recv()).await.unwrap(), json!({"n": 1}));
        // The first frame back is the answer to the ping: nothing answered the notifications.
        assert_eq!(raw.ok(2, "ping", None).await, json!({}));
        assert!(raw.seen.is_empty(), "unexpected frames: {:?}", raw.seen);
    })
    .await;
}

/// `notifications/initialized` marks the connection ready (without `initialize`), and a
/// registered spec notification handler runs once the connection is ready.
#[tokio::test]
async fn initialized_notification_marks_the_connection_ready() {
    within(async {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let server = notes_server(tx);
        let c = connect(Transport::Direct, &server).await;
        let conn = c.runner.as_ref().unwrap().connection().unwrap().clone();
        assert!(!conn.is_initialized());
        c.notify("notifications/initialized", None).await;
        assert!(conn.is_initialized());
        assert!(!conn.handshake_done());
        c.notify("notifications/roots/list_changed", None).await;
        assert_eq!(within(rx.recv()).await.unwrap(), json!("roots changed"));
        c.shutdown().await;

        // Over JSON-RPC, a request right behind the notification sees the ready connection.
        let (mut raw, _runner, _task) = handshake_raw(&ladder_server());
        raw.notify("notifications/initialized", None).await;
        raw.ok(1, "tools/list", None).await;
    })
    .await;
}

/// Before initialization, notifications other than `notifications/initialized` are dropped:
/// their handlers never see them, even when `initialize` follows right behind.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notifications_before_initialization_are_dropped() {
    within(async {
        for round in 0..20 {
            let (tx, mut rx) = mpsc::unbounded_channel();
            let (mut raw, _runner, _task) = handshake_raw(&notes_server(tx));
            raw.notify("acme/note", Some(json!({"n": "early"}))).await;
            raw.request(1, "initialize", Some(init_params("2025-11-25")))
                .await;
            raw.notify("acme/note", Some(json!({"n": "late"}))).await;
            raw.answer(1).await.unwrap();
            assert_eq!(
                within(rx.recv()).await.unwrap(),
                json!({"n": "late"}),
                "round {round}"
            );
            raw.ok(2, "ping", None).await;
            tokio::task::yield_now().await;
            assert!(
                rx.try_recv().is_err(),
                "round {round}: the early note was seen"
            );
        }
        // Direct dispatcher: the same, without a race to lose.
        let (tx, mut rx) = mpsc::unbounded_channel();
        let c = connect(Transport::Direct, &notes_server(tx)).await;
        c.notify("acme/note", Some(json!({"n": "early"}))).await;
        c.initialize().await;
        c.notify("acme/note", Some(json!({"n": "late"}))).await;
        assert_eq!(within(rx.recv()).await.unwrap(), json!({"n": "late"}));
        assert!(rx.try_recv().is_err());
        c.shutdown().await;
    })
    .await;
}

/// A failing notification handler is only logged: the connection goes on.
#[tokio::test]
async fn failing_notification_handler_is_only_logged() {
    within(async {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let server = notes_server(tx);
        for t in Transport::ALL {
            let c = connect(t, &server).await;
            c.initialize().await;
            c.notify("acme/fail", Some(json!({}))).await;
            c.notify("acme/note", Some(json!({"n": 2}))).await;
            assert_eq!(within(rx.recv()).await.unwrap(), json!({"n": 2}));
            c.ok("ping", None).await;
            c.shutdown().await;
        }
    })
    .await;
}
