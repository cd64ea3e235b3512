//! Tests of [`Streams`](super::Streams): frames, queue bounds, early closes, and when the
//! priming event is stored.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::sync::Arc;

use ferromcp_dispatch::{MessageMeta, TransportMessage};
use ferromcp_types::jsonrpc::{Message, Notification, RequestId};

use super::Streams;
use crate::event_store::{EventStore, InMemoryEventStore};

/// The frames written straight from a message's stored encoding are the ones the SSE
/// codec writes (MCP 2025-11-25 "Streamable HTTP": one JSON-RPC message per event), for
/// compact JSON and for a raw payload holding line breaks; an id that would split the
/// frame is refused.
#[test]
fn message_frames_match_the_codec() {
    use ferromcp_dispatch::codec::encode_message_event;
    use ferromcp_types::jsonrpc::Payload;

    let raw = serde_json::value::RawValue::from_string("{\n\"a\":\r\n [1, 2]\n}".into()).unwrap();
    let long = "x".repeat(100);
    for message in [
        Message::response(RequestId::from(3), Payload::empty_object()),
        Message::response(RequestId::from("q"), Payload::from(raw)),
        Message::Notification(Notification::new(
            "notifications/message",
            Some(Payload::from(serde_json::json!({ "data": long }))),
        )),
    ] {
        let mut expected = Vec::new();
        encode_message_event(&mut expected, Some("r4-17"), &message).unwrap();
        let frame = super::message_frame("r4-17", &message.to_vec()).unwrap();
        assert_eq!(
            String::from_utf8(frame).unwrap(),
            String::from_utf8(expected).unwrap()
        );
    }
    assert!(super::message_frame("a\nb", b"{}").is_none());
    assert!(super::message_frame("a\0b", b"{}").is_none());
}

fn note(related: &RequestId) -> TransportMessage {
    TransportMessage::new(
        Message::Notification(Notification::new("notifications/message", None)),
        MessageMeta::related_to(related.clone()),
    )
}

/// The per-stream queue bound: a client that does not read is cut off once its queue is
/// full; later events are still stored for resumption, and the answer still ends the
/// request.
#[tokio::test]
async fn a_full_stream_queue_detaches_the_stream() {
    tokio::time::timeout(std::time::Duration::from_secs(10), detaches())
        .await
        .unwrap();
}

async fn detaches() {
    let store = Arc::new(InMemoryEventStore::new(100));
    let streams = Streams::new("s".into(), Some(store.clone()), 1000, 2);
    let id = RequestId::from(1);
    let mut rx = streams.open_request(&id).await.unwrap();
    for _ in 0..5 {
        streams.route(note(&id)).await;
    }
    let mut got = 0;
    while rx.try_recv().is_some() {
        got += 1;
    }
    assert_eq!(got, 2, "priming + one event fit the queue of 2");
    assert_eq!(store.len(), 6, "priming + 5 notifications stored");
    assert_eq!(streams.in_flight(), 1);
    let answer = Message::response(id.clone(), ferromcp_types::jsonrpc::Payload::empty_object());
    streams.route(TransportMessage::from(answer)).await;
    assert_eq!(streams.in_flight(), 0);
    let replay = store.replay_after("s", "r0-0").await.unwrap();
    assert_eq!(replay.events.len(), 6);
}

/// A store that gives a priming id before storing it (as the Redis one does).
#[derive(Default)]
struct Deferring(std::sync::Mutex<Vec<String>>);

impl EventStore for Deferring {
    fn store<'a>(
        &'a self,
        _: &'a str,
        stream: &'a str,
        data: bytes::Bytes,
    ) -> ferromcp_dispatch::BoxFuture<'a, String> {
        let mut log = self.0.lock().unwrap();
        log.push(format!("store {}", data.len()));
        let id = format!("{stream}-{}", log.len());
        Box::pin(std::future::ready(id))
    }

    fn replay_after<'a>(
        &'a self,
        _: &'a str,
        _: &'a str,
    ) -> ferromcp_dispatch::BoxFuture<'a, Option<crate::event_store::Replay>> {
        Box::pin(std::future::ready(None))
    }

    fn forget<'a>(&'a self, _: &'a str) -> ferromcp_dispatch::BoxFuture<'a, ()> {
        Box::pin(std::future::ready(()))
    }

    fn priming_id(&self, _: &str, stream: &str) -> Option<String> {
        Some(format!("{stream}-p"))
    }

    fn store_primed<'a>(
        &'a self,
        _: &'a str,
        stream: &'a str,
        data: bytes::Bytes,
    ) -> ferromcp_dispatch::BoxFuture<'a, String> {
        let mut log = self.0.lock().unwrap();
        log.push(format!("primed {}", data.len()));
        let id = format!("{stream}-{}", log.len());
        Box::pin(std::future::ready(id))
    }
}

/// With a store that gives the priming id before storing it, the priming event goes out
/// at once, unstored, and is stored with the stream's next event (one `store_primed`),
/// whatever that event is; later events are stored alone; the GET stream's priming
/// event is stored at once.
#[tokio::test]
async fn the_priming_event_is_stored_with_the_next_event() {
    tokio::time::timeout(std::time::Duration::from_secs(10), async {
        let store = Arc::new(Deferring::default());
        let streams = Streams::new("s".into(), Some(store.clone()), 1000, 16);
        let id = RequestId::from(1);
        let mut rx = streams.open_request(&id).await.unwrap();
        let prime = rx.recv().await.unwrap();
        assert!(prime.starts_with(b"id: r0-p\n"), "{prime:?}");
        assert!(store.0.lock().unwrap().is_empty(), "not stored yet");
        streams.route(note(&id)).await;
        let answer =
            Message::response(id.clone(), ferromcp_types::jsonrpc::Payload::empty_object());
        streams.route(TransportMessage::from(answer)).await;
        let log = store.0.lock().unwrap().clone();
        assert!(log[0].starts_with("primed "), "{log:?}");
        assert!(log[1].starts_with("store "), "{log:?}");
        assert_eq!(log.len(), 2);
        // Answered at once: the priming event goes with the response.
        let id = RequestId::from(2);
        let _rx = streams.open_request(&id).await.unwrap();
        let answer =
            Message::response(id.clone(), ferromcp_types::jsonrpc::Payload::empty_object());
        streams.route(TransportMessage::from(answer)).await;
        assert!(store.0.lock().unwrap()[2].starts_with("primed "));
        let _get = streams.open_standalone().await.unwrap();
        assert_eq!(store.0.lock().unwrap()[3], "store 0");
    })
    .await
    .unwrap();
}

/// `MessageMeta::close_sse_stream`: the stream closes after that message (resumable
/// streams only); the request stays in flight.
#[tokio::test]
async fn close_sse_stream_flag_closes_after_the_message() {
    tokio::time::timeout(std::time::Duration::from_secs(10), async {
        let store = Arc::new(InMemoryEventStore::new(100));
        let streams = Streams::new("s".into(), Some(store), 1000, 16);
        let id = RequestId::from(7);
        let mut rx = streams.open_request(&id).await.unwrap();
        let mut closing = note(&id);
        closing.meta.close_sse_stream = true;
        streams.route(closing).await;
        streams.route(note(&id)).await;
        let mut got = 0;
        while rx.recv().await.is_some() {
            got += 1;
        }
        assert_eq!(got, 2, "priming and the closing message, then the end");
        assert_eq!(streams.in_flight(), 1);
    })
    .await
    .unwrap();
}
