//! Scale-out of handshake-era sessions (feature `redis`, off by default): a
//! [`SessionStore`](super::SessionStore) and an [`EventStore`](super::EventStore) in Redis,
//! so that several server processes sharing one Redis serve the same `Mcp-Session-Id`.
//!
//! ```no_run
//! # async fn demo(server: ferromcp_server::Server) -> Result<(), Box<dyn std::error::Error>> {
//! use ferromcp_http_server::{HttpConfig, HttpServer};
//! use ferromcp_http_server::redis::{RedisConfig, RedisStores};
//!
//! let stores = RedisStores::connect(RedisConfig::new("redis://127.0.0.1:6379")).await?;
//! let config = stores.apply(HttpConfig::default());
//! HttpServer::bind("0.0.0.0:8000", server, config).await?.run().await?;
//! # Ok(()) }
//! ```
//!
//! # The model: owner-routed sessions, one shared event log
//!
//! - **Ownership.** A session's live state (its dispatcher, its `Connection`: negotiated
//!   version, client info and capabilities, log level, subscriptions, in-flight requests)
//!   lives on the node that answered its `initialize`, the *owner*, and never moves. Redis
//!   holds the session record `{ns}:s:{id}`: the owning node, the principal that created it
//!   and the negotiated protocol version, expiring after the idle timeout (refreshed by
//!   requests on any node, each node at most once per quarter of the timeout; keys live
//!   for the timeout plus that quarter from their last refresh).
//! - **Either node checks.** A request naming a session that is not held locally is looked
//!   up in Redis: no record (never existed, ended, expired), a record of another principal,
//!   or a record whose owner stopped sending heartbeats, all get 404 (the last case also
//!   deletes the record, so the client re-initializes).
//! - **Events.** Every event of every SSE stream is appended (`XADD`) by the owner to a Redis
//!   stream per SSE stream before it is sent (see [`RedisEventStore`]), but for a request
//!   stream's priming event: its id is known before it is stored, so it is sent at once and
//!   appended with the stream's next event (the response, for a request answered at once),
//!   one round trip for both.
//! - **Resumption on any node.** A GET with `Last-Event-ID`, on any node (the owner
//!   included), replays the stored events after that id (`XRANGE`) and then tails the
//!   stream (`XREAD BLOCK` from the last entry replayed) until the request's response
//!   event: a stream dropped on one node resumes on another with every event exactly once,
//!   even while the request is still running on the owner. Every tail of a node reads
//!   through one shared blocking connection (one `XREAD BLOCK` over all its tailed streams,
//!   fanned out in the process): a node holds three Redis connections (commands, its inbox
//!   reader, the tail reader) however many streams it serves.
//! - **Requests on another node are forwarded.** A POST reaching a node that does not own
//!   the session is appended to the owner's inbox stream `{ns}:n:{node}:in`; the owner feeds
//!   it to the session's dispatcher exactly as if it had been posted there. For a request,
//!   the receiving node first stores a priming event on a fresh stream of the session, then
//!   answers the client with that stream tailed from Redis (so that stream is resumable on
//!   any node too). Notifications and responses get 202 once queued. A GET without
//!   `Last-Event-ID` opens a tail of the session's standalone stream; a DELETE deletes the
//!   record and tells the owner to end the session.
//!
//! # What is and is not guaranteed
//!
//! - Guaranteed: ownership and principal checks on every node; no event lost or repeated
//!   across a resume on any node while the owner lives (the tail reads Redis from the last
//!   id delivered, so the replay/live boundary has no race); event ids never replay another
//!   stream's or session's events (forged or foreign ids are 400); all keys expire with the
//!   session idle timeout and are deleted when the session ends.
//! - Not supported: moving a live session. If the owner process dies, its in-flight
//!   requests die with it: a resume replays everything the owner stored and then ends the
//!   stream without a response once the owner's heartbeat lapses (about 3 heartbeat
//!   periods), and the session's next request gets 404 so the client re-initializes
//!   (MCP 2025-11-25 "Session Management" 4). Forwarded requests do not carry the original
//!   request's HTTP headers other than `MCP-Protocol-Version` (and the [`CallerId`]), and
//!   they cannot close their SSE stream early (`SseStreamControl::close` returns false).
//!   The standalone stream is not exclusive across nodes (no 409 for a second GET on
//!   another node), and a GET stream held open on a node that does not own the session does
//!   not keep the session alive nor counts as its first use
//!   ([`HttpConfig::first_request_timeout`]; requests on any node do). JSON-response mode is
//!   answered from the tail as one JSON body. Redis Cluster (multi-slot keys) is not
//!   supported; use one Redis (with replicas as you wish).
//!
//!
//! # Deployment
//!
//! One Redis (5.0 or later, for streams) reachable by every node; no sticky routing needed.
//! `ferromcp serve --http ADDR --redis URL` runs the demo server this way (the CLI's `redis`
//! feature). Every node of a deployment uses the same [`RedisConfig::namespace`] and the
//! same idle timeout.
//!
//! These stores route handshake-era sessions; 2026-07-28 requests have no session, so each
//! may reach any node. For their tasks to be served by any node, give the server a shared
//! task store too: `ferromcp_server::tasks::RedisTaskStore` (the server's `redis` feature)
//! in its `TaskSettings`, as `--redis` does.
//!
//! [`CallerId`]: ferromcp_server::CallerId

mod events;
mod remote;
mod sessions;
mod tails;

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use redis::aio::{ConnectionManager, MultiplexedConnection};

pub use events::RedisEventStore;
pub use sessions::RedisSessionStore;

pub(crate) use remote::{intercept, register};

use super::config::{DEFAULT_IDLE_TIMEOUT, HttpConfig};

/// The default key prefix.
pub const DEFAULT_NAMESPACE: &str = "ferromcp";
/// The default bound on events kept per SSE stream (`XADD MAXLEN ~`).
pub const DEFAULT_EVENTS_PER_STREAM: usize = 1024;
/// The default interval of a node's heartbeat; a node is taken for dead after three missed.
pub const DEFAULT_HEARTBEAT: Duration = Duration::from_secs(1);

/// The settings of the Redis stores.
///
/// ```
/// use std::time::Duration;
/// use ferromcp_http_server::redis::RedisConfig;
///
/// let config = RedisConfig::new("redis://127.0.0.1:6379")
///     .namespace("mcp-prod")
///     .idle_timeout(Duration::from_secs(600));
/// assert_eq!(config.namespace, "mcp-prod");
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RedisConfig {
    /// The Redis URL (`redis://host:port/db`, with credentials if any).
    pub url: String,
    /// The prefix of every key (default [`DEFAULT_NAMESPACE`]); deployments sharing a Redis
    /// use different ones.
    pub namespace: String,
    /// How long an unused session and its events are kept; [`RedisStores::apply`] sets the
    /// HTTP server's idle timeout to the same value (default 30 minutes, as
    /// [`HttpConfig::idle_timeout`]).
    pub idle_timeout: Duration,
    /// The events kept per SSE stream (default [`DEFAULT_EVENTS_PER_STREAM`]).
    pub events_per_stream: usize,
    /// The heartbeat interval of this node (default [`DEFAULT_HEARTBEAT`]).
    pub heartbeat: Duration,
    /// This node's id in session records (default: random).
    pub node_id: Option<String>,
}

impl RedisConfig {
    /// Settings for the Redis at `url`, every other setting at its default.
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            namespace: DEFAULT_NAMESPACE.to_owned(),
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            events_per_stream: DEFAULT_EVENTS_PER_STREAM,
            heartbeat: DEFAULT_HEARTBEAT,
            node_id: None,
        }
    }

    /// Sets the key prefix.
    #[must_use]
    pub fn namespace(mut self, ns: impl Into<String>) -> Self {
        self.namespace = ns.into();
        self
    }

    /// Sets the idle timeout of sessions (and the TTL of their keys).
    #[must_use]
    pub fn idle_timeout(mut self, t: Duration) -> Self {
        self.idle_timeout = t;
        self
    }

    /// Sets the events kept per SSE stream (at least 1).
    #[must_use]
    pub fn events_per_stream(mut self, n: usize) -> Self {
        self.events_per_stream = n.max(1);
        self
    }

    /// Sets the heartbeat interval (at least 10 ms).
    #[must_use]
    pub fn heartbeat(mut self, t: Duration) -> Self {
        self.heartbeat = t.max(Duration::from_millis(10));
        self
    }

    /// Sets this node's id (visible ASCII letters, digits, `-` and `_`).
    #[must_use]
    pub fn node_id(mut self, id: impl Into<String>) -> Self {
        self.node_id = Some(id.into());
        self
    }
}

/// Why the Redis stores could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RedisStoreError {
    /// Redis could not be reached or answered with an error.
    #[error("redis: {0}")]
    Redis(#[from] redis::RedisError),
    /// A setting is invalid.
    #[error("invalid Redis store setting: {0}")]
    Config(String),
}

/// What the stores of one node share: the connection, the names, the timings.
pub(crate) struct Node {
    client: redis::Client,
    pub(crate) conn: ConnectionManager,
    pub(crate) ns: String,
    pub(crate) id: String,
    idle: Duration,
    per_stream: usize,
    pub(crate) heartbeat: Duration,
    /// The one blocking reader every live tail of this node shares.
    pub(crate) tails: tails::Tails,
    /// When this node last refreshed each key's TTL (see [`Node::due`]).
    refreshed: Mutex<Refreshed>,
}

/// The keys this node refreshed lately, and when.
#[derive(Default)]
struct Refreshed {
    at: HashMap<String, Instant>,
    /// The map's size after its last pruning: it is pruned again once it doubles.
    kept: usize,
}

/// How often at most a key's TTL is refreshed: a quarter of the idle timeout. Keys live
/// for the idle timeout plus this slack from their last refresh, so a key outlives its
/// last use by the idle timeout at least, by the timeout plus the slack at most.
const REFRESH_DIVISOR: u32 = 4;

impl Node {
    /// The TTL every key is given: the idle timeout plus the refresh slack.
    pub(crate) fn ttl_ms(&self) -> u64 {
        let slack = self.idle / REFRESH_DIVISOR;
        u64::try_from(self.idle.saturating_add(slack).as_millis())
            .unwrap_or(u64::MAX)
            .max(1)
    }

    /// Whether `key`'s TTL is due for a refresh (never refreshed by this node, or not for a
    /// quarter of the idle timeout); if so, it counts as refreshed now.
    pub(crate) fn due(&self, key: &str) -> bool {
        let now = Instant::now();
        let every = self.idle / REFRESH_DIVISOR;
        let mut r = self
            .refreshed
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(at) = r.at.get(key)
            && now.saturating_duration_since(*at) < every
        {
            return false;
        }
        r.at.insert(key.to_owned(), now);
        if r.at.len() > r.kept.saturating_mul(2).max(1024) {
            // Entries older than the interval are due anyway: dropping them changes nothing.
            r.at.retain(|_, at| now.saturating_duration_since(*at) < every);
            r.kept = r.at.len();
        }
        true
    }

    /// Marks `key` refreshed now (its TTL was just set).
    pub(crate) fn refreshed_now(&self, key: &str) {
        let mut r = self
            .refreshed
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        r.at.insert(key.to_owned(), Instant::now());
    }

    /// Forgets the refresh times of `session`'s keys (the session ended).
    pub(crate) fn forget_refreshes(&self, session: &str) {
        let record = self.record_key(session);
        let events = self.index_key(session);
        let mut r = self
            .refreshed
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        r.at.retain(|k, _| {
            *k != record
                && !k
                    .strip_prefix(events.as_str())
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with(':'))
        });
    }
    pub(crate) fn record_key(&self, session: &str) -> String {
        format!("{}:s:{session}", self.ns)
    }
    pub(crate) fn events_key(&self, session: &str, stream: &str) -> String {
        format!("{}:e:{session}:{stream}", self.ns)
    }
    pub(crate) fn index_key(&self, session: &str) -> String {
        format!("{}:e:{session}", self.ns)
    }
    pub(crate) fn alive_key(&self, node: &str) -> String {
        format!("{}:n:{node}", self.ns)
    }
    pub(crate) fn inbox_key(&self, node: &str) -> String {
        format!("{}:n:{node}:in", self.ns)
    }
    /// How long a heartbeat proves a node alive.
    pub(crate) fn alive_ms(&self) -> u64 {
        u64::try_from(self.heartbeat.as_millis().saturating_mul(3)).unwrap_or(u64::MAX)
    }
    /// A connection of its own, for blocking reads (`XREAD BLOCK` would stall every command
    /// multiplexed behind it on the shared one): the node's inbox reader's.
    pub(crate) async fn blocking_conn(&self) -> redis::RedisResult<MultiplexedConnection> {
        let cfg = redis::AsyncConnectionConfig::new()
            .set_connection_timeout(Some(Duration::from_secs(2)))
            .set_response_timeout(None);
        self.client
            .get_multiplexed_async_connection_with_config(&cfg)
            .await
    }
}

/// The Redis [`SessionStore`](super::SessionStore) and [`EventStore`](super::EventStore) of
/// one node, connected.
#[derive(Clone)]
pub struct RedisStores {
    /// The session store (records ownership; serves forwarded requests for local sessions).
    pub sessions: Arc<RedisSessionStore>,
    /// The event store.
    pub events: Arc<RedisEventStore>,
}

impl fmt::Debug for RedisStores {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisStores")
            .field("node", &self.sessions.node_id())
            .finish_non_exhaustive()
    }
}

impl RedisStores {
    /// Connects to Redis and starts this node: its heartbeat and the reader of its inbox
    /// (requests forwarded by other nodes). Both stop when the session store is dropped or
    /// [`RedisSessionStore::shutdown`] is called.
    pub async fn connect(config: RedisConfig) -> Result<Self, RedisStoreError> {
        let id = match config.node_id {
            Some(id) => id,
            None => super::legacy::session::new_session_id()
                .ok_or_else(|| RedisStoreError::Config("no randomness for a node id".into()))?,
        };
        let ok = |s: &str| {
            !s.is_empty()
                && s.len() <= 64
                && s.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        };
        if !ok(&id) {
            return Err(RedisStoreError::Config(format!("node id {id:?}")));
        }
        if config.namespace.is_empty() || config.namespace.contains(char::is_whitespace) {
            return Err(RedisStoreError::Config("namespace".into()));
        }
        let client = redis::Client::open(config.url.as_str())?;
        let conn = ConnectionManager::new(client.clone()).await?;
        let block_ms = u64::try_from(config.heartbeat.as_millis())
            .unwrap_or(1000)
            .clamp(10, 1000);
        let node = Arc::new(Node {
            tails: tails::Tails::new(client.clone(), conn.clone(), block_ms),
            client,
            conn,
            ns: config.namespace,
            id,
            idle: config.idle_timeout,
            per_stream: config.events_per_stream.max(1),
            heartbeat: config.heartbeat,
            refreshed: Mutex::default(),
        });
        let sessions = RedisSessionStore::start(node.clone()).await?;
        Ok(Self {
            sessions,
            events: Arc::new(RedisEventStore { node }),
        })
    }

    /// `config` with these stores, and its idle timeout set to the stores' (so local
    /// eviction and key expiry agree).
    pub fn apply(&self, config: HttpConfig) -> HttpConfig {
        config
            .session_store(self.sessions.clone())
            .event_store(Some(self.events.clone()))
            .idle_timeout(self.sessions.node.idle)
    }
}
