//! Unit tests of the subscription machinery: backoff, the `Lagged` marker, handshake-era
//! routing, and what is reconnected.

use std::time::Duration;

use ferromcp_types::jsonrpc::ErrorObject;

use super::driver::retryable;
use super::listener::Listener;
use super::registry::covers;
use super::*;
use crate::error::ClientError;

/// The reconnection delay doubles per attempt from `reconnect_delay`, capped.
#[test]
fn backoff_doubles_and_is_capped() {
    let opts = ListenOptions::new()
        .reconnect_delay(Duration::from_millis(100))
        .max_reconnect_delay(Duration::from_millis(350));
    let delays: Vec<u128> = (1..=5).map(|a| opts.backoff(a).as_millis()).collect();
    assert_eq!(delays, [100, 200, 350, 350, 350]);
    let huge = ListenOptions::new().backoff(u32::MAX);
    assert_eq!(huge, DEFAULT_MAX_RECONNECT_DELAY);
}

/// Overflow keeps the order: queued events, then one `Lagged` count, then what came after
/// the reader made room; the end always fits.
#[test]
fn lagged_marker_keeps_its_place() {
    let l = Listener::new(1, SubscriptionFilter::new());
    l.push(ListenEvent::ToolListChanged);
    l.push(ListenEvent::PromptListChanged);
    l.push(ListenEvent::PromptListChanged);
    l.end(ListenEnd::ServerClosed);
    l.push(ListenEvent::ResourceListChanged);
    let q: Vec<ListenEvent> = lock(&l.state).queue.drain(..).collect();
    assert_eq!(
        q,
        [
            ListenEvent::ToolListChanged,
            ListenEvent::Lagged(2),
            ListenEvent::Ended(ListenEnd::ServerClosed),
        ]
    );
}

/// Handshake-era routing: the asked-for kinds; updates of a subscribed URI or one under it.
#[test]
fn handshake_routing_covers() {
    let f = SubscriptionFilter::new()
        .with_prompts_list_changed(true)
        .with_resource_subscriptions(vec!["file:///dir/".into()]);
    let updated = |u: &str| ListenEvent::ResourceUpdated(u.into());
    assert!(covers(&f, &ListenEvent::PromptListChanged));
    assert!(!covers(&f, &ListenEvent::ToolListChanged));
    assert!(covers(&f, &updated("file:///dir/")));
    assert!(covers(&f, &updated("file:///dir/a.txt")));
    assert!(!covers(&f, &updated("file:///other")));
}

/// Only connection-level failures (and transient HTTP statuses) are reconnected.
#[test]
fn what_is_retried() {
    let e = |o: ErrorObject| ClientError::Protocol(o);
    assert!(retryable(&e(ErrorObject::connection_closed())));
    assert!(retryable(&e(ErrorObject::request_timeout())));
    let http =
        |status: u16| {
            e(ErrorObject::internal_error("HTTP")
                .with_data(serde_json::json!({"httpStatus": status})))
        };
    assert!(retryable(&http(503)));
    assert!(retryable(&http(429)));
    assert!(!retryable(&http(403)));
    let closed_400 =
        ErrorObject::connection_closed().with_data(serde_json::json!({"httpStatus": 400}));
    assert!(
        !retryable(&e(closed_400)),
        "-32000 in an HTTP 400 is the server's answer"
    );
    assert!(!retryable(&e(ErrorObject::method_not_found(
        "subscriptions/listen"
    ))));
    assert!(!retryable(&ClientError::not_available("x", "y")));
}
