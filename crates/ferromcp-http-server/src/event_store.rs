//! [`EventStore`]: where handshake-era SSE events are kept so that a client can resume a
//! stream with `Last-Event-ID` (MCP 2025-11-25 "Streamable HTTP › Resumability and
//! Redelivery"), and [`InMemoryEventStore`], the bounded default.

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use bytes::Bytes;
use ferromcp_dispatch::BoxFuture;

use super::legacy::session::SessionIdHash;

/// One stored event: its id and its data (a JSON-RPC message's text; empty for a priming
/// event).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct StoredEvent {
    /// The event id, unique across the session's streams.
    pub id: String,
    /// The event's data.
    pub data: Bytes,
}

/// What a `Last-Event-ID` resumes: the stream the event belongs to and that stream's events
/// after it, oldest first.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Replay {
    /// The stream the event id belongs to.
    pub stream: String,
    /// The stream's later events.
    pub events: Vec<StoredEvent>,
}

/// Stores the SSE events of handshake-era sessions for resumption.
///
/// Event ids must be unique across all streams of a session and let
/// [`replay_after`](EventStore::replay_after) find the stream they belong to; replay must
/// never return another stream's events. A store shared by several nodes (Redis) lets any
/// node answer a resume.
pub trait EventStore: Send + Sync + 'static {
    /// Stores an event of `stream` in `session`, returning its id.
    fn store<'a>(&'a self, session: &'a str, stream: &'a str, data: Bytes)
    -> BoxFuture<'a, String>;

    /// The stream of event `last_event_id` and its events after it; `None` when the id is
    /// unknown (never issued, evicted, or of another session).
    fn replay_after<'a>(
        &'a self,
        session: &'a str,
        last_event_id: &'a str,
    ) -> BoxFuture<'a, Option<Replay>>;

    /// Forgets a session's events (the session ended).
    fn forget<'a>(&'a self, session: &'a str) -> BoxFuture<'a, ()>;

    /// The id of the priming event of `stream`, a request stream of `session` opened just
    /// now (no event stored on it yet), given without waiting; `None` (the default): the
    /// priming event is stored with [`store`](EventStore::store) before it is sent, like any
    /// event.
    ///
    /// With an id, the priming event is sent at once and written with the stream's next event
    /// by [`store_primed`](EventStore::store_primed) (one write where a store does I/O:
    /// a request answered at once costs one write, not two). A store that gives an id must
    /// resolve it in [`replay_after`](EventStore::replay_after) from the moment it gives it,
    /// on every node sharing the store, even before the event is written (a client may
    /// resume with it at once): as the stream with no event after it until more are stored;
    /// and never in another session. A store without I/O may simply store the event here.
    fn priming_id(&self, session: &str, stream: &str) -> Option<String> {
        let _ = (session, stream);
        None
    }

    /// Stores the priming event of `stream` whose id [`priming_id`](EventStore::priming_id)
    /// gave (unless it is stored already), then `data`, the stream's next event, in that
    /// order and in one write where the store can; returns `data`'s id. Called at most once
    /// per stream, before any other event of it is stored.
    ///
    /// The default stores `data` alone with [`store`](EventStore::store): right for a store
    /// that stores the priming event in `priming_id`, or gives no id there.
    fn store_primed<'a>(
        &'a self,
        session: &'a str,
        stream: &'a str,
        data: Bytes,
    ) -> BoxFuture<'a, String> {
        self.store(session, stream, data)
    }
}

/// The default bound on events kept per session by [`InMemoryEventStore`].
pub const DEFAULT_EVENTS_PER_SESSION: usize = 1024;

/// An in-memory [`EventStore`] keeping the latest events of each session (default
/// [`DEFAULT_EVENTS_PER_SESSION`]); older events are evicted, and resuming from one of them
/// fails. Event ids are `{stream}-{n}`, `n` counting up per session.
pub struct InMemoryEventStore {
    per_session: usize,
    sessions: Mutex<HashMap<String, SessionEvents, SessionIdHash>>,
}

#[derive(Default)]
struct SessionEvents {
    next: u64,
    /// Each event's number, stream and data; consecutive events of one stream share its
    /// name.
    events: VecDeque<(u64, Arc<str>, Bytes)>,
}

impl Default for InMemoryEventStore {
    fn default() -> Self {
        Self::new(DEFAULT_EVENTS_PER_SESSION)
    }
}

impl InMemoryEventStore {
    /// A store keeping at most `per_session` events per session (at least 1).
    pub fn new(per_session: usize) -> Self {
        Self {
            per_session: per_session.max(1),
            sessions: Mutex::new(HashMap::default()),
        }
    }

    /// How many events are stored, over all sessions.
    pub fn len(&self) -> usize {
        self.lock().values().map(|s| s.events.len()).sum()
    }

    /// Whether nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, SessionEvents, SessionIdHash>> {
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn store_now(&self, session: &str, stream: &str, data: Bytes) -> String {
        let mut map = self.lock();
        // Looked up by `&str` first: the key is copied only for a session's first event.
        let s = match map.get_mut(session) {
            Some(s) => s,
            None => map.entry(session.to_owned()).or_default(),
        };
        let n = s.next;
        s.next += 1;
        if s.events.len() >= self.per_session {
            s.events.pop_front();
        }
        let name = match s.events.back() {
            Some((_, last, _)) if **last == *stream => last.clone(),
            _ => Arc::from(stream),
        };
        s.events.push_back((n, name, data));
        event_id(stream, n)
    }

    fn replay_now(&self, session: &str, last: &str) -> Option<Replay> {
        let (stream, n) = last.rsplit_once('-')?;
        let n: u64 = n.parse().ok()?;
        let map = self.lock();
        let s = map.get(session)?;
        // The event must still be stored (and belong to that stream).
        let start = s
            .events
            .iter()
            .position(|(m, st, _)| *m == n && &**st == stream)?;
        let events = s
            .events
            .iter()
            .skip(start + 1)
            .filter(|(_, st, _)| &**st == stream)
            .map(|(m, st, data)| StoredEvent {
                id: event_id(st, *m),
                data: data.clone(),
            })
            .collect();
        Some(Replay {
            stream: stream.to_owned(),
            events,
        })
    }
}

/// `{stream}-{n}`, written without the formatting machinery (this runs for every event).
fn event_id(stream: &str, n: u64) -> String {
    let mut id = String::with_capacity(stream.len() + 8);
    id.push_str(stream);
    id.push('-');
    super::legacy::streams::push_decimal(&mut id, n);
    id
}

impl fmt::Debug for InMemoryEventStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InMemoryEventStore")
            .field("per_session", &self.per_session)
            .field("sessions", &self.lock().len())
            .finish()
    }
}

impl EventStore for InMemoryEventStore {
    fn store<'a>(
        &'a self,
        session: &'a str,
        stream: &'a str,
        data: Bytes,
    ) -> BoxFuture<'a, String> {
        let id = self.store_now(session, stream, data);
        Box::pin(std::future::ready(id))
    }

    fn replay_after<'a>(
        &'a self,
        session: &'a str,
        last_event_id: &'a str,
    ) -> BoxFuture<'a, Option<Replay>> {
        let r = self.replay_now(session, last_event_id);
        Box::pin(std::future::ready(r))
    }

    fn forget<'a>(&'a self, session: &'a str) -> BoxFuture<'a, ()> {
        self.lock().remove(session);
        Box::pin(std::future::ready(()))
    }

    /// Stores the priming event now (no I/O to save) and returns its id; the stream's next
    /// event is then stored alone by the default [`store_primed`](EventStore::store_primed).
    fn priming_id(&self, session: &str, stream: &str) -> Option<String> {
        Some(self.store_now(session, stream, Bytes::new()))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// Event ids are `{stream}-{n}` (MCP 2025-11-25 "Resumability": unique across the
    /// session's streams, and naming the stream to resume).
    #[test]
    fn event_ids_name_stream_and_number() {
        assert_eq!(event_id("r0", 0), "r0-0");
        assert_eq!(event_id("r12", 1_234_567_890), "r12-1234567890");
        assert_eq!(event_id("g", u64::MAX), "g-18446744073709551615");
    }

    /// Replay returns the later events of the named stream only, for streams that
    /// alternate and repeat, and forgets a session's events on request.
    #[tokio::test]
    async fn replay_follows_one_stream() {
        let store = InMemoryEventStore::new(16);
        let a0 = store.store("s", "r0", Bytes::new()).await;
        let b0 = store.store("s", "r1", Bytes::from_static(b"b0")).await;
        let a1 = store.store("s", "r0", Bytes::from_static(b"a1")).await;
        let a2 = store.store("s", "r0", Bytes::from_static(b"a2")).await;
        assert_eq!([&*a0, &*b0, &*a1, &*a2], ["r0-0", "r1-1", "r0-2", "r0-3"]);
        let replay = store.replay_after("s", &a0).await.unwrap();
        assert_eq!(replay.stream, "r0");
        let ids: Vec<_> = replay.events.iter().map(|e| e.id.as_str()).collect();
        assert_eq!(ids, ["r0-2", "r0-3"]);
        assert_eq!(replay.events[1].data, Bytes::from_static(b"a2"));
        assert!(
            store
                .replay_after("s", &b0)
                .await
                .unwrap()
                .events
                .is_empty()
        );
        assert!(store.replay_after("other", &a0).await.is_none());
        store.forget("s").await;
        assert!(store.replay_after("s", &a0).await.is_none());
    }

    /// S99: a priming id given before the stream's next event (`priming_id`) is an event of
    /// the per-session bound like any other: it resolves at once, and is evicted (its resume
    /// then fails) once the session holds more than the bound.
    #[tokio::test]
    async fn s99_in_memory_priming_ids_count_against_the_bound() {
        let store = InMemoryEventStore::new(3);
        let p = store.priming_id("s", "r0").unwrap();
        let replay = store.replay_after("s", &p).await.unwrap();
        assert!(replay.events.is_empty());
        let a = store
            .store_primed("s", "r0", Bytes::from_static(b"a"))
            .await;
        let ids: Vec<_> = store
            .replay_after("s", &p)
            .await
            .unwrap()
            .events
            .into_iter()
            .map(|e| e.id)
            .collect();
        assert_eq!(ids, [a]);
        for _ in 0..2 {
            store.store("s", "r0", Bytes::from_static(b"b")).await;
        }
        assert_eq!(store.len(), 3);
        assert!(store.replay_after("s", &p).await.is_none(), "evicted");
    }
}
