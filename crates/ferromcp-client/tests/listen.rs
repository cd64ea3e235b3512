//! Change subscriptions against ferromcp's own McpServer, in process and over a message
//! stream: `subscriptions/listen` (2026-07-28 basic/patterns/subscriptions: §Opening a
//! Stream, §Acknowledgment, §Receiving Notifications, §Multiple Concurrent Subscriptions,
//! §Cancellation, §Graceful Closure), the response cache it invalidates (2026-07-28
//! server/utilities/caching), and the 2025-11-25 fallback on `resources/subscribe`
//! (2025-11-25 server/resources §Subscriptions, §List Changed Notification).

#![allow(clippy::unwrap_used, clippy::panic)]

mod listen_support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use ferromcp_client::listen::{ListenEnd, ListenEvent, ListenOptions, SubscriptionFilter};
use ferromcp_client::{ClientError, ServerNotification};
use ferromcp_server::Server;
use ferromcp_server::mcp_server::PromptSpec;
use ferromcp_types::Era;
use ferromcp_types::jsonrpc::{ErrorCode, Payload};
use ferromcp_types::mcp::methods::SubscriptionsListen;
use ferromcp_types::mcp::{META_SUBSCRIPTION_ID, Meta, SubscriptionsListenResult, methods};
use listen_support::*;
use serde_json::json;
use tokio::sync::Notify;

fn tools_and_a() -> SubscriptionFilter {
    SubscriptionFilter::new()
        .with_tools_list_changed(true)
        .with_resource_subscriptions(vec!["r://a".into()])
}

/// §Acknowledgment, §Receiving Notifications, caching: the acknowledged filter is reported;
/// only the asked-for changes arrive, typed; each evicts the cached `tools/list` or
/// `resources/read` before the event is seen; the client's notification handler sees them
/// too, but not the acknowledgment.
async fn events_arrive_and_evict_the_cache(via: Via) {
    let probe = Probe::default();
    let s = server(&probe);
    let (client, seen) = connect(s.server(), Era::Modern, via).await;

    // Cached: the second read and list are answered locally.
    client.list_tools(None).await.unwrap();
    client.read_resource("r://a").await.unwrap();
    client.list_tools(None).await.unwrap();
    client.read_resource("r://a").await.unwrap();
    assert_eq!(probe.calls(methods::TOOLS_LIST), 1);
    assert_eq!(probe.calls(methods::RESOURCES_READ), 1);

    let mut sub = client.listen(tools_and_a()).await.unwrap();
    assert_eq!(sub.era(), Era::Modern);
    assert_eq!(sub.acknowledged(), tools_and_a());
    assert_eq!(sub.requested(), &tools_and_a());

    s.add_prompt(
        PromptSpec::new("p2").description("not asked for"),
        || async { "x".to_string() },
    );
    s.notify_resource_updated("r://b");
    s.add_tool("t2", || async { "t2" }).unwrap();
    assert_eq!(sub.next().await, Some(ListenEvent::ToolListChanged));
    let tools = client.list_tools(None).await.unwrap();
    assert_eq!(probe.calls(methods::TOOLS_LIST), 2, "the list was evicted");
    assert!(tools.tools.iter().any(|t| t.name == "t2"));

    s.notify_resource_updated("r://a");
    assert_eq!(
        sub.next().await,
        Some(ListenEvent::ResourceUpdated("r://a".into()))
    );
    client.read_resource("r://a").await.unwrap();
    assert_eq!(
        probe.calls(methods::RESOURCES_READ),
        2,
        "the read was evicted"
    );
    assert!(sub.try_next().is_none(), "no prompt or r://b events");

    until(|| seen.all().len() >= 2).await;
    let seen = seen.all();
    assert_eq!(
        seen,
        [
            ServerNotification::ToolListChanged,
            ServerNotification::ResourceUpdated("r://a".into()),
        ]
    );
    drop(sub);
    client.shutdown().await;
}

#[tokio::test]
async fn subscriptions_listen_events_and_cache_eviction_in_process() {
    within(events_arrive_and_evict_the_cache(Via::InProcess)).await;
}

#[tokio::test]
async fn subscriptions_listen_events_and_cache_eviction_over_a_message_stream() {
    within(events_arrive_and_evict_the_cache(Via::Stream)).await;
}

/// §Cancellation: dropping the subscription cancels the listen request; the server's
/// handler stops.
async fn dropping_ends_the_server_side_subscription(via: Via) {
    let probe = Probe::default();
    let s = server(&probe);
    let (client, _) = connect(s.server(), Era::Modern, via).await;
    let sub = client.listen(tools_and_a()).await.unwrap();
    assert_eq!(probe.active(), 1);
    drop(sub);
    until(|| probe.active() == 0).await;
    // The connection is still usable, and no stream was reopened.
    client.list_tools(None).await.unwrap();
    assert_eq!(probe.started(), 1);
    client.shutdown().await;
}

#[tokio::test]
async fn subscriptions_listen_drop_cancels_in_process() {
    within(dropping_ends_the_server_side_subscription(Via::InProcess)).await;
}

#[tokio::test]
async fn subscriptions_listen_drop_cancels_over_a_message_stream() {
    within(dropping_ends_the_server_side_subscription(Via::Stream)).await;
}

/// §Cancellation: `close` ends it too, and waits.
#[tokio::test]
async fn subscriptions_listen_close_cancels() {
    within(async {
        let probe = Probe::default();
        let s = server(&probe);
        let (client, _) = connect(s.server(), Era::Modern, Via::Stream).await;
        let sub = client.listen(tools_and_a()).await.unwrap();
        sub.close().await;
        until(|| probe.active() == 0).await;
        client.shutdown().await;
    })
    .await;
}

/// §Multiple Concurrent Subscriptions: each subscription gets only the notifications that
/// carry its own subscription id.
#[tokio::test]
async fn subscriptions_listen_concurrent_subscriptions_are_demultiplexed() {
    within(async {
        let probe = Probe::default();
        let s = server(&probe);
        let (client, _) = connect(s.server(), Era::Modern, Via::InProcess).await;
        let mut tools = client
            .listen(SubscriptionFilter::new().with_tools_list_changed(true))
            .await
            .unwrap();
        let mut prompts = client
            .listen(SubscriptionFilter::new().with_prompts_list_changed(true))
            .await
            .unwrap();
        s.add_prompt(PromptSpec::new("p2").description("x"), || async {
            "x".to_string()
        });
        assert_eq!(prompts.next().await, Some(ListenEvent::PromptListChanged));
        s.add_tool("t2", || async { "t2" }).unwrap();
        assert_eq!(tools.next().await, Some(ListenEvent::ToolListChanged));
        assert!(tools.try_next().is_none());
        assert!(prompts.try_next().is_none());
        assert_eq!(probe.active(), 2);
        client.shutdown().await;
    })
    .await;
}

/// The buffer limit (`ListenOptions::buffer`): unread events beyond it are reported, in
/// order, as one `Lagged` count; the cache is evicted regardless.
#[tokio::test]
async fn subscriptions_listen_buffer_overflow_is_reported_as_lagged() {
    within(async {
        let probe = Probe::default();
        let s = server(&probe);
        let (client, seen) = connect(s.server(), Era::Modern, Via::InProcess).await;
        let filter = SubscriptionFilter::new()
            .with_resource_subscriptions(vec!["r://a".into(), "r://b".into()]);
        let mut sub = client
            .listen_with(filter, ListenOptions::new().buffer(2))
            .await
            .unwrap();
        client.read_resource("r://b").await.unwrap();
        for uri in ["r://a", "r://a", "r://a", "r://b"] {
            s.notify_resource_updated(uri);
        }
        until(|| seen.all().len() == 4).await;
        assert_eq!(
            sub.next().await,
            Some(ListenEvent::ResourceUpdated("r://a".into()))
        );
        assert_eq!(
            sub.next().await,
            Some(ListenEvent::ResourceUpdated("r://a".into()))
        );
        assert_eq!(sub.next().await, Some(ListenEvent::Lagged(2)));
        assert!(sub.try_next().is_none());
        client.read_resource("r://b").await.unwrap();
        assert_eq!(
            probe.calls(methods::RESOURCES_READ),
            2,
            "the lagged update still evicted r://b"
        );
        client.shutdown().await;
    })
    .await;
}

/// §Cancellation ("the underlying transport closes"): shutting the client down ends every
/// subscription with `ConnectionClosed`, then `next` gives `None`.
#[tokio::test]
async fn subscriptions_listen_connection_close_ends_the_subscription() {
    within(async {
        let probe = Probe::default();
        let s = server(&probe);
        let (client, _) = connect(s.server(), Era::Modern, Via::Stream).await;
        let mut sub = client.listen(tools_and_a()).await.unwrap();
        client.shutdown().await;
        assert_eq!(
            sub.next().await,
            Some(ListenEvent::Ended(ListenEnd::ConnectionClosed))
        );
        assert_eq!(sub.next().await, None);
        assert!(sub.is_ended());
        let again = client.listen(tools_and_a()).await;
        assert_eq!(
            again.unwrap_err().code(),
            Some(ErrorCode::CONNECTION_CLOSED)
        );
    })
    .await;
}

/// A low-level server whose listen handler acknowledges, then, when `stop` is notified,
/// either answers (graceful closure) or sends `notifications/cancelled` for the subscription
/// and stays pending; `opened` counts the listen requests.
fn scripted(stop: Arc<Notify>, graceful: bool, opened: Arc<AtomicUsize>) -> Server {
    Server::builder("scripted", "1.0.0")
        .on::<SubscriptionsListen, _, _, _>(move |ctx, p| {
            let stop = stop.clone();
            let opened = opened.clone();
            async move {
                opened.fetch_add(1, Ordering::SeqCst);
                let id = json!(ctx.request_id().unwrap());
                let ack = json!({"_meta": {META_SUBSCRIPTION_ID: id.clone()},
                                 "notifications": p.notifications});
                ctx.peer()
                    .notify(
                        methods::NOTIFICATION_SUBSCRIPTIONS_ACKNOWLEDGED,
                        Some(Payload::from_value(ack)),
                    )
                    .await;
                stop.notified().await;
                if !graceful {
                    let cancel = json!({"requestId": id.clone(), "reason": "shutting down"});
                    ctx.peer()
                        .notify(
                            methods::NOTIFICATION_CANCELLED,
                            Some(Payload::from_value(cancel)),
                        )
                        .await;
                    std::future::pending::<()>().await;
                }
                let mut meta = Meta::new();
                meta.insert(META_SUBSCRIPTION_ID, id);
                Ok(SubscriptionsListenResult::new().with_meta(meta))
            }
        })
        .build()
        .unwrap()
}

/// §Graceful Closure: the server's result ends the subscription with `ServerClosed`, and it
/// is not reopened.
#[tokio::test]
async fn subscriptions_listen_graceful_closure_is_reported_not_reconnected() {
    within(async {
        let stop = Arc::new(Notify::new());
        let opened = Arc::new(AtomicUsize::new(0));
        let server = scripted(stop.clone(), true, opened.clone());
        let (client, _) = connect(&server, Era::Modern, Via::Stream).await;
        let mut sub = client.listen(tools_and_a()).await.unwrap();
        stop.notify_one();
        assert_eq!(
            sub.next().await,
            Some(ListenEvent::Ended(ListenEnd::ServerClosed))
        );
        assert_eq!(sub.next().await, None);
        assert_eq!(opened.load(Ordering::SeqCst), 1);
        client.shutdown().await;
    })
    .await;
}

/// 2026-07-28 basic/patterns/cancellation: a server-sent `notifications/cancelled` for the
/// listen request ends the subscription with `ServerCancelled`.
#[tokio::test]
async fn subscriptions_listen_server_cancellation_ends_the_subscription() {
    within(async {
        let stop = Arc::new(Notify::new());
        let opened = Arc::new(AtomicUsize::new(0));
        let server = scripted(stop.clone(), false, opened.clone());
        let (client, _) = connect(&server, Era::Modern, Via::Stream).await;
        let mut sub = client.listen(tools_and_a()).await.unwrap();
        stop.notify_one();
        assert_eq!(
            sub.next().await,
            Some(ListenEvent::Ended(ListenEnd::ServerCancelled))
        );
        assert_eq!(opened.load(Ordering::SeqCst), 1);
        client.shutdown().await;
    })
    .await;
}

/// Opening fails with the server's error (here: no `subscriptions/listen` handler, -32601).
#[tokio::test]
async fn subscriptions_listen_refused_returns_the_servers_error() {
    within(async {
        let server = Server::builder("no-listen", "1.0.0").build().unwrap();
        let (client, _) = connect(&server, Era::Modern, Via::InProcess).await;
        let err = client.listen(tools_and_a()).await.unwrap_err();
        assert_eq!(err.code(), Some(ErrorCode::METHOD_NOT_FOUND), "{err}");
        client.shutdown().await;
    })
    .await;
}

/// §Acknowledgment ("MUST send ... as the first message"): a server that never acknowledges
/// fails the opening after `ack_timeout` (-32001), and the request is cancelled.
struct CountOnDrop(Arc<AtomicUsize>);

impl Drop for CountOnDrop {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[tokio::test]
async fn subscriptions_listen_without_acknowledgment_times_out() {
    within(async {
        let dropped = Arc::new(AtomicUsize::new(0));
        let d = dropped.clone();
        let server = Server::builder("mute", "1.0.0")
            .on::<SubscriptionsListen, _, _, _>(move |ctx, _p| {
                let d = d.clone();
                async move {
                    // Counts when the handler ends or is dropped (cancelled).
                    let _ended = CountOnDrop(d);
                    ctx.cancellation().cancelled().await;
                    Ok(SubscriptionsListenResult::new())
                }
            })
            .build()
            .unwrap();
        let (client, _) = connect(&server, Era::Modern, Via::Stream).await;
        let opts = ListenOptions::new().ack_timeout(std::time::Duration::from_millis(300));
        let err = client.listen_with(tools_and_a(), opts).await.unwrap_err();
        assert_eq!(err.code(), Some(ErrorCode::REQUEST_TIMEOUT), "{err}");
        until(|| dropped.load(Ordering::SeqCst) == 1).await;
        client.shutdown().await;
    })
    .await;
}

/// 2025-11-25 fallback: list changes from the session's notifications, resource updates
/// through `resources/subscribe` (2025-11-25 server/resources §Subscriptions); dropping the
/// subscription sends `resources/unsubscribe`; the cache is evicted as at 2026-07-28.
#[tokio::test]
async fn handshake_fallback_uses_resources_subscribe() {
    within(async {
        let probe = Probe::default();
        let s = server(&probe);
        let (client, _) = connect(s.server(), Era::Handshake, Via::InProcess).await;
        let mut sub = client.listen(tools_and_a()).await.unwrap();
        assert_eq!(sub.era(), Era::Handshake);
        assert_eq!(sub.acknowledged(), tools_and_a());
        // What was not asked for is not acknowledged (no empty URI list).
        let tools = SubscriptionFilter::new().with_tools_list_changed(true);
        assert_eq!(
            client.listen(tools.clone()).await.unwrap().acknowledged(),
            tools
        );
        assert_eq!(probe.calls(methods::RESOURCES_SUBSCRIBE), 1);
        // A second subscription to the same URI shares the server-side subscription.
        let second = client.listen(tools_and_a()).await.unwrap();
        assert_eq!(probe.calls(methods::RESOURCES_SUBSCRIBE), 1);

        s.add_prompt(PromptSpec::new("p2").description("x"), || async {
            "x".to_string()
        });
        s.add_tool("t2", || async { "t2" }).unwrap();
        assert_eq!(sub.next().await, Some(ListenEvent::ToolListChanged));
        s.notify_resource_updated("r://a");
        assert_eq!(
            sub.next().await,
            Some(ListenEvent::ResourceUpdated("r://a".into()))
        );
        assert!(sub.try_next().is_none(), "no prompt event: not asked for");

        drop(sub);
        tokio::task::yield_now().await;
        assert_eq!(
            probe.calls(methods::RESOURCES_UNSUBSCRIBE),
            0,
            "still used by the second subscription"
        );
        second.close().await;
        assert_eq!(probe.calls(methods::RESOURCES_UNSUBSCRIBE), 1);
        client.shutdown().await;
    })
    .await;
}

/// 2025-11-25 fallback over a message stream, and what a server does not declare is left out
/// of the acknowledged filter (2026-07-28 §Acknowledgment: unsupported types are omitted).
#[tokio::test]
async fn handshake_fallback_acknowledges_only_declared_capabilities() {
    within(async {
        let server = Server::builder("bare", "1.0.0")
            .on::<ferromcp_types::mcp::methods::ListTools, _, _, _>(|_ctx, _p| async {
                Ok(ferromcp_types::mcp::ListToolsResult::new(Vec::new()))
            })
            .build()
            .unwrap();
        let (client, _) = connect(&server, Era::Handshake, Via::Stream).await;
        let sub = client.listen(tools_and_a()).await.unwrap();
        assert_eq!(sub.acknowledged(), SubscriptionFilter::new());
        client.shutdown().await;
    })
    .await;
}

/// With the fallback off, listening at 2025-11-25 is refused clearly.
#[tokio::test]
async fn handshake_without_fallback_is_not_available() {
    within(async {
        let probe = Probe::default();
        let s = server(&probe);
        let (client, _) = connect(s.server(), Era::Handshake, Via::InProcess).await;
        let opts = ListenOptions::new().handshake_fallback(false);
        let err = client.listen_with(tools_and_a(), opts).await.unwrap_err();
        assert!(matches!(err, ClientError::NotAvailable { .. }), "{err}");
        client.shutdown().await;
    })
    .await;
}

/// A subscription can move between tasks: it and its `next` future are `Send`.
#[tokio::test]
async fn subscription_is_send() {
    within(async {
        let probe = Probe::default();
        let s = server(&probe);
        let (client, _) = connect(s.server(), Era::Modern, Via::InProcess).await;
        let mut sub = client.listen(tools_and_a()).await.unwrap();
        let handle = tokio::spawn(async move { sub.next().await });
        s.add_tool("t2", || async { "t2" }).unwrap();
        assert_eq!(handle.await.unwrap(), Some(ListenEvent::ToolListChanged));
        client.shutdown().await;
    })
    .await;
}
