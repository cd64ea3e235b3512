//! Resumable handshake-era streams (MCP 2025-11-25 "basic/transports" §Resumability and
//! Redelivery, §Sending Messages 6 priming events, §Listening for Messages).
#![allow(clippy::unwrap_used, clippy::panic)]

mod http_support;

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use ferromcp_http_server::{HttpConfig, InMemoryEventStore};
use http::Method;
use http_support::*;
use serde_json::json;

async fn within<F: std::future::Future>(f: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(30), f)
        .await
        .unwrap()
}

async fn resume(
    addr: std::net::SocketAddr,
    sid: &str,
    last: &str,
) -> http::Response<hyper::body::Incoming> {
    let h = [
        ("mcp-session-id", sid),
        ("accept", "text/event-stream"),
        ("last-event-id", last),
    ];
    send(addr, Method::GET, &h, "").await
}

/// Resumability 2: after a disconnect, GET with `Last-Event-ID` replays the rest of that
/// stream (here the response that came while the client was away), then ends.
#[tokio::test]
async fn resume_a_request_stream_after_it_finished() {
    within(async {
        let (addr, _) = start(HttpConfig::default()).await;
        let sid = open_session(addr, "2025-11-25").await;
        let resp = post(
            addr,
            &[("mcp-session-id", &sid)],
            &call(5, "wait", json!({"ms": 100})),
        )
        .await;
        let mut sse = Sse::new(resp);
        let prime = sse.next_event().await.unwrap();
        let last = prime.id.unwrap();
        drop(sse);
        tokio::time::sleep(Duration::from_millis(400)).await;
        let resp = resume(addr, &sid, &last).await;
        assert_eq!(resp.status(), 200);
        let events = Sse::new(resp).rest().await;
        assert_eq!(events.len(), 1, "{events:?}");
        assert_eq!(events[0]["id"], 5);
        assert_eq!(events[0]["result"]["content"][0]["text"], "waited");
    })
    .await;
}

/// Resumability 2: resuming a stream whose request is still running continues it live.
#[tokio::test]
async fn resume_continues_live() {
    within(async {
        let (addr, _) = start(HttpConfig::default()).await;
        let sid = open_session(addr, "2025-11-25").await;
        let resp = post(
            addr,
            &[("mcp-session-id", &sid)],
            &call(6, "wait", json!({"ms": 500})),
        )
        .await;
        let mut sse = Sse::new(resp);
        let last = sse.next_event().await.unwrap().id.unwrap();
        drop(sse);
        tokio::time::sleep(Duration::from_millis(50)).await;
        let events = Sse::new(resume(addr, &sid, &last).await).rest().await;
        assert_eq!(events.len(), 1);
        assert_eq!(events[0]["id"], 6);
    })
    .await;
}

/// Resumability 1–2: event ids are unique across the session's streams, and a replay holds
/// only the resumed stream's events.
#[tokio::test]
async fn replay_holds_only_that_stream() {
    within(async {
        let (addr, _) = start(HttpConfig::default()).await;
        let sid = open_session(addr, "2025-11-25").await;
        let mut ids = HashSet::new();
        let mut primes = Vec::new();
        for id in [10, 11] {
            let resp = post(
                addr,
                &[("mcp-session-id", &sid)],
                &call(id, "echo", json!({"text": id.to_string()})),
            )
            .await;
            let mut sse = Sse::new(resp);
            while let Some(e) = sse.next_event().await {
                assert!(ids.insert(e.id.clone().unwrap()), "duplicate event id");
                if e.data.is_empty() {
                    primes.push(e.id.unwrap());
                }
            }
        }
        let events = Sse::new(resume(addr, &sid, &primes[0]).await).rest().await;
        assert_eq!(events.len(), 1);
        assert_eq!(events[0]["id"], 10);
    })
    .await;
}

/// ferromcp's bar: an unknown `Last-Event-ID` is a 400, not an empty stream.
#[tokio::test]
async fn unknown_last_event_id_is_400() {
    within(async {
        let (addr, _) = start(HttpConfig::default()).await;
        let sid = open_session(addr, "2025-11-25").await;
        for bogus in ["r99-99", "nothing", "g-12345"] {
            assert_eq!(resume(addr, &sid, bogus).await.status(), 400);
        }
    })
    .await;
}

/// Resumability with the GET stream: events sent while it was away are replayed, and it goes
/// on live.
#[tokio::test]
async fn resume_the_standalone_stream() {
    within(async {
        let (addr, _) = start(HttpConfig::default()).await;
        let sid = open_session(addr, "2025-11-25").await;
        let get = [
            ("mcp-session-id", sid.as_str()),
            ("accept", "text/event-stream"),
        ];
        let mut stream = Sse::new(send(addr, Method::GET, &get, "").await);
        let last = stream.next_event().await.unwrap().id.unwrap();
        drop(stream);
        tokio::time::sleep(Duration::from_millis(50)).await;
        let broadcast = |id| call(id, "broadcast", json!({}));
        Sse::new(post(addr, &[("mcp-session-id", &sid)], &broadcast(20)).await)
            .rest()
            .await;
        let mut resumed = Sse::new(resume(addr, &sid, &last).await);
        let replayed = resumed.next_json().await.unwrap();
        assert_eq!(replayed["method"], "notifications/tools/list_changed");
        Sse::new(post(addr, &[("mcp-session-id", &sid)], &broadcast(21)).await)
            .rest()
            .await;
        let live = resumed.next_json().await.unwrap();
        assert_eq!(live["method"], "notifications/tools/list_changed");
    })
    .await;
}

/// The event store's bound: an evicted event can no longer be resumed from (400).
#[tokio::test]
async fn evicted_events_cannot_be_resumed() {
    within(async {
        let store = Arc::new(InMemoryEventStore::new(3));
        let (addr, _) = start(HttpConfig::default().event_store(Some(store.clone()))).await;
        let sid = open_session(addr, "2025-11-25").await;
        let resp = post(
            addr,
            &[("mcp-session-id", &sid)],
            &call(30, "echo", json!({"text": "a"})),
        )
        .await;
        let mut sse = Sse::new(resp);
        let first = sse.next_event().await.unwrap().id.unwrap();
        sse.rest().await;
        for id in 31..34 {
            let r = post(
                addr,
                &[("mcp-session-id", &sid)],
                &call(id, "echo", json!({"text": "b"})),
            )
            .await;
            Sse::new(r).rest().await;
        }
        assert!(store.len() <= 3);
        assert_eq!(resume(addr, &sid, &first).await.status(), 400);
    })
    .await;
}

/// Priming events are for clients of 2025-11-25 and later: an older session gets none.
#[tokio::test]
async fn no_priming_for_older_clients() {
    within(async {
        let (addr, _) = start(HttpConfig::default()).await;
        let sid = open_session(addr, "2025-03-26").await;
        let resp = post(
            addr,
            &[("mcp-session-id", &sid)],
            &call(1, "echo", json!({"text": "x"})),
        )
        .await;
        let mut sse = Sse::new(resp);
        let first = sse.next_event().await.unwrap();
        assert!(!first.data.is_empty(), "no priming event");
    })
    .await;
}

/// §Sending Messages 6 (SEP-1699 polling): a handler closes its stream before answering;
/// the client resumes with GET and `Last-Event-ID` and receives the rest, response included.
#[tokio::test]
async fn handler_closes_its_stream_and_the_client_polls() {
    within(async {
        let (addr, _) = start(HttpConfig::default()).await;
        let sid = open_session(addr, "2025-11-25").await;
        let resp = post(
            addr,
            &[("mcp-session-id", &sid)],
            &call(40, "reconnect", json!({})),
        )
        .await;
        let mut sse = Sse::new(resp);
        let prime = sse.next_event().await.unwrap();
        assert_eq!(sse.parser.retry(), Some(1000));
        assert!(sse.next_event().await.is_none(), "closed before the answer");
        tokio::time::sleep(Duration::from_millis(300)).await;
        let events = Sse::new(resume(addr, &sid, &prime.id.unwrap()).await)
            .rest()
            .await;
        assert_eq!(events.len(), 2, "{events:?}");
        assert_eq!(events[0]["method"], "notifications/message");
        assert_eq!(events[1]["result"]["content"][0]["text"], "closed=true");
    })
    .await;
}

/// Without an event store a stream cannot be resumed, so it is not closed early.
#[tokio::test]
async fn no_early_close_without_an_event_store() {
    within(async {
        let (addr, _) = start(HttpConfig::default().event_store(None)).await;
        let sid = open_session(addr, "2025-11-25").await;
        let resp = post(
            addr,
            &[("mcp-session-id", &sid)],
            &call(41, "reconnect", json!({})),
        )
        .await;
        let events = Sse::new(resp).rest().await;
        assert_eq!(events.len(), 2);
        assert_eq!(events[1]["result"]["content"][0]["text"], "closed=false");
    })
    .await;
}
