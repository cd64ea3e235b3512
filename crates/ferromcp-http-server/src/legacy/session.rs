//! Handshake-era sessions: [`Session`], [`SessionStore`] and the in-memory store.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use ferromcp_dispatch::{Dispatcher, JsonRpcDispatcher};

use super::streams::Streams;
use super::transport::Inbox;
use ferromcp_server::CallerId;
use ferromcp_server::Connection;

/// One live handshake-era session (`Mcp-Session-Id`): a dispatcher fed by the session's
/// POSTs, its connection, and its SSE streams.
pub struct Session {
    pub(crate) id: String,
    /// `id` as the `Mcp-Session-Id` value of every response (made once; cloning it shares
    /// the bytes). `None` if the id is not a valid header value.
    pub(crate) id_header: Option<http::HeaderValue>,
    pub(crate) principal: Option<CallerId>,
    pub(crate) created: Instant,
    /// Milliseconds since `created` of the last request.
    last_seen: AtomicU64,
    pub(crate) connection: Connection,
    pub(crate) dispatcher: JsonRpcDispatcher,
    pub(crate) inbox: Arc<Inbox>,
    pub(crate) streams: Arc<Streams>,
    terminated: AtomicBool,
    /// Whether a request (or a GET) came after the one that created the session.
    used: AtomicBool,
    /// The session's place under its client's cap, given back when it ends.
    slot: Mutex<Option<SessionSlot>>,
}

/// The timeouts that end a session (from [`HttpConfig`](crate::HttpConfig)).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Timeouts {
    /// Not initialized this long after creation.
    pub(crate) init: Duration,
    /// No request (nor GET) after the `initialize` that created it for this long.
    pub(crate) first_request: Duration,
    /// No request for this long, nothing in flight, no GET stream.
    pub(crate) idle: Duration,
}

impl Timeouts {
    pub(crate) fn of(c: &crate::HttpConfig) -> Self {
        Self {
            init: c.init_timeout,
            first_request: c.first_request_timeout,
            idle: c.idle_timeout,
        }
    }
}

impl Session {
    pub(crate) fn new(
        id: String,
        principal: Option<CallerId>,
        connection: Connection,
        dispatcher: JsonRpcDispatcher,
        inbox: Arc<Inbox>,
        streams: Arc<Streams>,
        slot: Option<SessionSlot>,
    ) -> Self {
        Self {
            id_header: http::HeaderValue::from_str(&id).ok(),
            id,
            principal,
            created: Instant::now(),
            last_seen: AtomicU64::new(0),
            connection,
            dispatcher,
            inbox,
            streams,
            terminated: AtomicBool::new(false),
            used: AtomicBool::new(false),
            slot: Mutex::new(slot),
        }
    }

    /// The session id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The session's connection (negotiated version, client info, state).
    pub fn connection(&self) -> &Connection {
        &self.connection
    }

    /// Whether the session has ended.
    pub fn is_terminated(&self) -> bool {
        self.terminated.load(Ordering::Acquire)
    }

    pub(crate) fn touch(&self) {
        self.touch_at(self.created.elapsed());
    }

    /// Records a request `age` after the session was created.
    fn touch_at(&self, age: Duration) {
        let ms = u64::try_from(age.as_millis()).unwrap_or(u64::MAX);
        self.last_seen.store(ms, Ordering::Relaxed);
    }

    /// Records that the client used the session after creating it: a request other than
    /// its `initialize`, or a GET. Until then the session ends after
    /// [`Timeouts::first_request`].
    pub(crate) fn mark_used(&self) {
        self.used.store(true, Ordering::Relaxed);
    }

    /// Whether the session should be ended: not initialized within the init timeout, never
    /// used (no request after `initialize`, nothing in flight, no GET stream) within the
    /// first-request timeout, or idle (no request, nothing in flight, no GET stream) for the
    /// idle timeout.
    pub(crate) fn expired(&self, t: Timeouts) -> bool {
        self.expired_at(self.created.elapsed(), t)
    }

    /// [`expired`](Self::expired) at `age` after the session was created.
    fn expired_at(&self, age: Duration, t: Timeouts) -> bool {
        // A 2024-11-05 HTTP+SSE session lives as long as its one stream: a client cannot
        // attach another to it.
        if self.streams.is_legacy_sse() && self.streams.standalone_gone() {
            return true;
        }
        if !self.connection.is_initialized() && age > t.init {
            return true;
        }
        if !self.used.load(Ordering::Relaxed) && age > t.first_request && self.streams.is_quiet() {
            return true;
        }
        let last = Duration::from_millis(self.last_seen.load(Ordering::Relaxed));
        age.saturating_sub(last) > t.idle && self.streams.is_quiet()
    }

    /// For a request on the session: `true` (and the session's idle time restarts) when it
    /// has not expired. One clock read for both.
    pub(crate) fn admit(&self, t: Timeouts) -> bool {
        let age = self.created.elapsed();
        if self.expired_at(age, t) {
            return false;
        }
        self.touch_at(age);
        true
    }

    /// Ends the session: the dispatcher stops (in-flight requests are answered -32000 on
    /// their streams), the GET stream closes. Idempotent.
    pub(crate) fn terminate(&self) {
        if self.terminated.swap(true, Ordering::AcqRel) {
            return;
        }
        self.dispatcher.close();
        self.inbox.close();
        self.streams.close_standalone();
        // Its client may open another session at once.
        drop(
            self.slot
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take(),
        );
    }
}

impl fmt::Debug for Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Session")
            .field("id", &self.id)
            .field("connection", &self.connection)
            .field("terminated", &self.is_terminated())
            .finish_non_exhaustive()
    }
}

/// Where live sessions are kept. The in-memory store keeps them in this process; a shared
/// store (Redis, behind a feature to come) would record ownership so that any node can
/// route a session's requests.
pub trait SessionStore: Send + Sync + 'static {
    /// Adds a session.
    fn insert(&self, session: Arc<Session>);
    /// The session with this id.
    fn get(&self, id: &str) -> Option<Arc<Session>>;
    /// Removes and returns the session with this id.
    fn remove(&self, id: &str) -> Option<Arc<Session>>;
    /// How many sessions are kept.
    fn len(&self) -> usize;
    /// Whether no session is kept.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Every session (for the sweeper).
    fn all(&self) -> Vec<Arc<Session>>;
    /// The Redis store this is, when sessions are shared by several nodes (feature
    /// `redis`): the HTTP server then forwards requests for sessions owned by other nodes
    /// and serves resumptions from Redis. `None` by default.
    #[cfg(feature = "redis")]
    fn redis(&self) -> Option<&crate::redis::RedisSessionStore> {
        None
    }
}

/// The default [`SessionStore`]: a map in this process.
#[derive(Default)]
pub struct InMemorySessionStore {
    map: Mutex<HashMap<String, Arc<Session>, SessionIdHash>>,
}

impl fmt::Debug for InMemorySessionStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InMemorySessionStore")
            .field("sessions", &self.len())
            .finish()
    }
}

impl InMemorySessionStore {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Session>, SessionIdHash>> {
        self.map.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl SessionStore for InMemorySessionStore {
    fn insert(&self, session: Arc<Session>) {
        self.lock().insert(session.id.clone(), session);
    }

    fn get(&self, id: &str) -> Option<Arc<Session>> {
        self.lock().get(id).cloned()
    }

    fn remove(&self, id: &str) -> Option<Arc<Session>> {
        self.lock().remove(id)
    }

    fn len(&self) -> usize {
        self.lock().len()
    }

    fn all(&self) -> Vec<Arc<Session>> {
        self.lock().values().cloned().collect()
    }
}

/// Live sessions per client (principal, or peer address without one), for the per-client
/// caps ([`HttpConfig::max_sessions_per_principal`](crate::HttpConfig::max_sessions_per_principal),
/// [`HttpConfig::max_sessions_per_peer`](crate::HttpConfig::max_sessions_per_peer)). Counted
/// on this node.
#[derive(Debug, Default)]
pub(crate) struct SessionSlots {
    counts: Mutex<HashMap<String, usize>>,
}

impl SessionSlots {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, usize>> {
        self.counts.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A place for one more session of `client`, or `None` when it holds `limit` already.
    pub(crate) fn take(self: &Arc<Self>, client: String, limit: usize) -> Option<SessionSlot> {
        let mut counts = self.lock();
        let n = counts.entry(client.clone()).or_insert(0);
        if *n >= limit {
            if *n == 0 {
                counts.remove(&client);
            }
            return None;
        }
        *n += 1;
        Some(SessionSlot {
            slots: self.clone(),
            client,
        })
    }

    /// How many sessions `client` holds.
    #[cfg(test)]
    fn held(&self, client: &str) -> usize {
        self.lock().get(client).copied().unwrap_or(0)
    }
}

/// One session's place under its client's cap; given back when dropped (the session ended).
#[derive(Debug)]
pub(crate) struct SessionSlot {
    slots: Arc<SessionSlots>,
    client: String,
}

impl Drop for SessionSlot {
    fn drop(&mut self) {
        let mut counts = self.slots.lock();
        if let Some(n) = counts.get_mut(&self.client) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                counts.remove(&self.client);
            }
        }
    }
}

/// The hasher of maps keyed by session id (the in-memory session and event stores).
///
/// Those keys are made by the server from 128 random bits, so no client can choose keys
/// that collide, and a lookup of a client's made-up id costs one probe like any miss: the
/// flooding resistance of the standard `SipHash` buys nothing there, and a multiply-rotate
/// hash is several times cheaper on every request.
#[derive(Default, Clone, Copy)]
pub(crate) struct SessionIdHasher(u64);

/// Builds [`SessionIdHasher`]s.
pub(crate) type SessionIdHash = std::hash::BuildHasherDefault<SessionIdHasher>;

impl std::hash::Hasher for SessionIdHasher {
    fn write(&mut self, bytes: &[u8]) {
        // FxHash's step (rotate, xor, multiply by an odd constant), eight bytes at a time.
        const K: u64 = 0x51_7c_c1_b7_27_22_0a_95;
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(c);
            self.0 = (self.0.rotate_left(5) ^ u64::from_le_bytes(word)).wrapping_mul(K);
        }
        for &b in chunks.remainder() {
            self.0 = (self.0.rotate_left(5) ^ u64::from(b)).wrapping_mul(K);
        }
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// A fresh session id: 128 bits from the OS CSPRNG, as 32 lowercase hex digits (visible
/// ASCII).
pub(crate) fn new_session_id() -> Option<String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).ok()?;
    let mut s = String::with_capacity(32);
    for b in bytes {
        s.push(char::from(b"0123456789abcdef"[usize::from(b >> 4)]));
        s.push(char::from(b"0123456789abcdef"[usize::from(b & 15)]));
    }
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_counted_per_client_and_given_back() {
        let slots = Arc::new(SessionSlots::default());
        let a1 = slots.take("a".into(), 2);
        let a2 = slots.take("a".into(), 2);
        assert!(a1.is_some() && a2.is_some());
        assert!(slots.take("a".into(), 2).is_none());
        assert!(slots.take("b".into(), 2).is_some());
        drop(a1);
        assert_eq!(slots.held("a"), 1);
        assert!(slots.take("a".into(), 2).is_some());
        assert!(slots.take("z".into(), 0).is_none());
        assert_eq!(slots.held("z"), 0);
    }
}
