//! The response cache (MCP 2026-07-28 "Caching", SEP-2549).
//!
//! Cacheable: `tools/list`, `prompts/list`, `resources/list`, `resources/templates/list` (the
//! cursor-less first page only), `resources/read` (keyed by URI) and `server/discover`.
//!
//! - The server's `ttlMs` and `cacheScope` hints are honoured only on modern-era connections
//!   (capped at [`CacheConfig::max_ttl`], 24 h by default; 0 means "do not cache"); on
//!   handshake-era connections [`CacheConfig::default_ttl`] applies (0 by default: no caching).
//! - `private` entries (and entries without a scope) belong to the client's partition key (set
//!   it to something derived from the credential, see
//!   [`Client::set_cache_partition`](crate::Client::set_cache_partition)); `public` entries
//!   are shared by every partition.
//! - List-changed notifications evict the matching list (resources also evicts the
//!   templates list); `notifications/resources/updated` evicts that URI. At 2026-07-28 these
//!   arrive only on `subscriptions/listen` streams ([`Client::listen`](crate::Client::listen));
//!   without one, entries live until their TTL. A listen stream that had to be reconnected
//!   evicts everything it covers (changes in the gap were not seen).
//! - Generation counters: a response that was in flight when its entry was evicted is not
//!   stored.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use ferromcp_types::mcp::methods;
use ferromcp_types::mcp::{CacheScope, JsonObject};
use serde_json::Value;
use tokio::time::Instant;

/// The longest any entry is kept, whatever the server says.
pub const MAX_CACHE_TTL: Duration = Duration::from_secs(24 * 60 * 60);

/// How one call uses the cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum CacheMode {
    /// Answer from the cache when a fresh entry exists; store the response (the default).
    #[default]
    Use,
    /// Always ask the server; store the response.
    Refresh,
    /// Neither read nor write the cache.
    Bypass,
}

/// Response cache settings.
///
/// ```
/// use std::time::Duration;
/// use ferromcp_client::CacheConfig;
///
/// let config = CacheConfig::default()
///     .default_ttl(Duration::from_secs(30))
///     .max_entries(256);
/// assert!(config.enabled);
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct CacheConfig {
    /// Whether the cache is on (default `true`).
    pub enabled: bool,
    /// The TTL used when no hint applies (handshake-era connections, or a modern result
    /// without `ttlMs`); zero (the default) means such results are not cached.
    pub default_ttl: Duration,
    /// The cap on any TTL (default [`MAX_CACHE_TTL`]).
    pub max_ttl: Duration,
    /// How many entries are kept at most (default 1024); the soonest to expire goes first.
    /// It also bounds what evictions remember: at most four times as many evicted slots
    /// (at least 64) are tracked, so a server that names endless distinct URIs in
    /// `notifications/resources/updated` cannot grow the cache.
    pub max_entries: usize,
}

impl Default for CacheConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            default_ttl: Duration::ZERO,
            max_ttl: MAX_CACHE_TTL,
            max_entries: 1024,
        }
    }
}

impl CacheConfig {
    /// A disabled cache.
    pub fn disabled() -> Self {
        Self {
            enabled: false,
            ..Self::default()
        }
    }

    /// Turns the cache on or off.
    #[must_use]
    pub fn enabled(mut self, on: bool) -> Self {
        self.enabled = on;
        self
    }

    /// Sets the TTL used when no server hint applies.
    #[must_use]
    pub fn default_ttl(mut self, ttl: Duration) -> Self {
        self.default_ttl = ttl;
        self
    }

    /// Sets the cap on any TTL (never above [`MAX_CACHE_TTL`]).
    #[must_use]
    pub fn max_ttl(mut self, ttl: Duration) -> Self {
        self.max_ttl = ttl.min(MAX_CACHE_TTL);
        self
    }

    /// Sets the entry bound.
    #[must_use]
    pub fn max_entries(mut self, n: usize) -> Self {
        self.max_entries = n;
        self
    }
}

/// Where an entry lives: the method and its params key (the URI for `resources/read`, empty
/// otherwise).
type Slot = (&'static str, String);

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    slot: Slot,
    /// `None` for public entries, the partition for private ones.
    partition: Option<String>,
}

struct Entry {
    value: Value,
    expires: Instant,
}

#[derive(Default)]
struct State {
    entries: HashMap<Key, Entry>,
    /// Bumped by every eviction of a slot.
    generations: HashMap<Slot, u64>,
    /// Bumped by [`ResponseCache::clear`].
    epoch: u64,
    partition: String,
}

/// A snapshot taken before a request, checked before its response is stored.
#[derive(Debug, Clone)]
pub(crate) struct Ticket {
    slot: Slot,
    generation: u64,
    epoch: u64,
}

/// The cache itself, shared by the client and its dispatcher handler.
pub(crate) struct ResponseCache {
    config: CacheConfig,
    state: Mutex<State>,
}

fn lock(m: &Mutex<State>) -> MutexGuard<'_, State> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The static name of a cacheable method.
fn cacheable(method: &str) -> Option<&'static str> {
    [
        methods::TOOLS_LIST,
        methods::PROMPTS_LIST,
        methods::RESOURCES_LIST,
        methods::RESOURCES_TEMPLATES_LIST,
        methods::RESOURCES_READ,
        methods::SERVER_DISCOVER,
    ]
    .into_iter()
    .find(|m| *m == method)
}

/// The cache slot of a request, or `None` when it is not cacheable (a cursor page, an
/// unknown method, a read without a URI, a retry carrying input responses).
pub(crate) fn slot_of(method: &str, params: &JsonObject) -> Option<Slot> {
    let method = cacheable(method)?;
    if params.get("cursor").is_some_and(|c| !c.is_null())
        || params.contains_key("inputResponses")
        || params.contains_key("requestState")
    {
        return None;
    }
    let key = if method == methods::RESOURCES_READ {
        params.get("uri")?.as_str()?.to_owned()
    } else {
        String::new()
    };
    Some((method, key))
}

impl ResponseCache {
    pub(crate) fn new(config: CacheConfig) -> Self {
        Self {
            config,
            state: Mutex::new(State::default()),
        }
    }

    pub(crate) fn enabled(&self) -> bool {
        self.config.enabled
    }

    pub(crate) fn set_partition(&self, partition: String) {
        let mut state = lock(&self.state);
        if state.partition != partition {
            // Entries of the old partition stay, unreachable, until they expire or are evicted.
            state.partition = partition;
        }
    }

    /// A fresh entry for `slot`: the public one, else the current partition's private one.
    pub(crate) fn get(&self, slot: &Slot) -> Option<Value> {
        if !self.config.enabled {
            return None;
        }
        let mut state = lock(&self.state);
        let now = Instant::now();
        let private = Some(state.partition.clone());
        for partition in [None, private] {
            let key = Key {
                slot: slot.clone(),
                partition,
            };
            match state.entries.get(&key) {
                Some(e) if e.expires > now => return Some(e.value.clone()),
                Some(_) => {
                    state.entries.remove(&key);
                }
                None => {}
            }
        }
        None
    }

    /// Takes the generation of `slot` before its request goes out.
    pub(crate) fn ticket(&self, slot: Slot) -> Ticket {
        let state = lock(&self.state);
        let generation = state.generations.get(&slot).copied().unwrap_or(0);
        Ticket {
            slot,
            generation,
            epoch: state.epoch,
        }
    }

    /// Stores a complete result under the ticket's slot, unless the slot was evicted since the
    /// ticket was taken or the result's hints say not to. `honour_hints` is true on
    /// modern-era connections.
    pub(crate) fn put(&self, ticket: Ticket, value: &Value, honour_hints: bool) {
        if !self.config.enabled {
            return;
        }
        let (ttl, scope) = if honour_hints {
            let ttl = value
                .get("ttlMs")
                .map(|t| Duration::from_millis(t.as_u64().unwrap_or(0)))
                .unwrap_or(self.config.default_ttl);
            let scope = value
                .get("cacheScope")
                .and_then(|s| serde_json::from_value::<CacheScope>(s.clone()).ok())
                .unwrap_or(CacheScope::Private);
            (ttl, scope)
        } else {
            (self.config.default_ttl, CacheScope::Private)
        };
        let ttl = ttl.min(self.config.max_ttl);
        if ttl.is_zero() {
            return;
        }
        let mut state = lock(&self.state);
        if state.generations.get(&ticket.slot).copied().unwrap_or(0) != ticket.generation
            || state.epoch != ticket.epoch
        {
            tracing::debug!(
                method = ticket.slot.0,
                "stale response not cached: evicted meanwhile"
            );
            return;
        }
        let now = Instant::now();
        if state.entries.len() >= self.config.max_entries {
            state.entries.retain(|_, e| e.expires > now);
        }
        if state.entries.len() >= self.config.max_entries {
            let soonest = state
                .entries
                .iter()
                .min_by_key(|(_, e)| e.expires)
                .map(|(k, _)| k.clone());
            if let Some(k) = soonest {
                state.entries.remove(&k);
            }
        }
        if self.config.max_entries == 0 {
            return;
        }
        let partition = match scope {
            CacheScope::Public => None,
            _ => Some(state.partition.clone()),
        };
        let key = Key {
            slot: ticket.slot,
            partition,
        };
        state.entries.insert(
            key,
            Entry {
                value: value.clone(),
                expires: now + ttl,
            },
        );
    }

    /// Evicts every entry of a list method (all partitions).
    pub(crate) fn evict_list(&self, method: &'static str) {
        self.evict(method, "");
    }

    /// Evicts every entry of `(method, key)` (all partitions) and bumps its generation.
    pub(crate) fn evict(&self, method: &str, key: &str) {
        let Some(method) = cacheable(method) else {
            return;
        };
        let slot = (method, key.to_owned());
        let mut state = lock(&self.state);
        state.entries.retain(|k, _| k.slot != slot);
        // Bounded: past the cap, forget every slot's counter and bump the epoch instead, which
        // discards every in-flight response (correct, if less precise) at no memory cost.
        let tracked = self.config.max_entries.saturating_mul(4).max(64);
        if state.generations.len() >= tracked && !state.generations.contains_key(&slot) {
            state.generations.clear();
            state.epoch += 1;
        }
        *state.generations.entry(slot).or_insert(0) += 1;
    }

    /// Empties the cache; every in-flight response is discarded too.
    pub(crate) fn clear(&self) {
        let mut state = lock(&self.state);
        state.epoch += 1;
        state.entries.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn slot() -> Slot {
        (methods::TOOLS_LIST, String::new())
    }

    #[tokio::test]
    async fn stale_in_flight_response_is_not_stored() {
        let cache = ResponseCache::new(CacheConfig::default());
        let ticket = cache.ticket(slot());
        cache.evict_list(methods::TOOLS_LIST);
        cache.put(ticket, &json!({"tools": [], "ttlMs": 60000}), true);
        assert!(cache.get(&slot()).is_none());
        let ticket = cache.ticket(slot());
        cache.put(ticket, &json!({"tools": [], "ttlMs": 60000}), true);
        assert!(cache.get(&slot()).is_some());
    }

    /// Security issue, item 11 (a hostile server): `notifications/resources/updated` naming
    /// endless distinct URIs does not grow the cache's memory of evictions past its bound,
    /// and a response in flight across such a flood is still not stored.
    #[tokio::test]
    async fn evictions_of_endless_distinct_uris_stay_bounded() {
        let cache = ResponseCache::new(CacheConfig::default().max_entries(16));
        let read = (methods::RESOURCES_READ, "a://kept".to_owned());
        let in_flight = cache.ticket(read.clone());
        for i in 0..100_000 {
            cache.evict(methods::RESOURCES_READ, &format!("a://{i}"));
            assert!(lock(&cache.state).generations.len() <= 64, "at {i}");
        }
        cache.evict(methods::RESOURCES_READ, "a://kept");
        cache.put(in_flight, &json!({"contents": [], "ttlMs": 60000}), true);
        assert!(
            cache.get(&read).is_none(),
            "stale in-flight response stored"
        );
        let fresh = cache.ticket(read.clone());
        cache.put(fresh, &json!({"contents": [], "ttlMs": 60000}), true);
        assert!(cache.get(&read).is_some());
    }

    #[tokio::test]
    async fn private_entries_are_partitioned_public_ones_shared() {
        let cache = ResponseCache::new(CacheConfig::default());
        cache.set_partition("alice".into());
        let t = cache.ticket(slot());
        cache.put(
            t,
            &json!({"tools": [], "ttlMs": 60000, "cacheScope": "private"}),
            true,
        );
        assert!(cache.get(&slot()).is_some());
        cache.set_partition("bob".into());
        assert!(cache.get(&slot()).is_none());
        let read = (methods::RESOURCES_READ, "a://b".to_owned());
        let t = cache.ticket(read.clone());
        cache.put(
            t,
            &json!({"contents": [], "ttlMs": 60000, "cacheScope": "public"}),
            true,
        );
        cache.set_partition("carol".into());
        assert!(cache.get(&read).is_some());
    }

    #[tokio::test]
    async fn hints_only_on_modern_connections_and_ttl_zero_is_not_cached() {
        let cache = ResponseCache::new(CacheConfig::default());
        let t = cache.ticket(slot());
        cache.put(t, &json!({"tools": [], "ttlMs": 60000}), false);
        assert!(cache.get(&slot()).is_none());
        let t = cache.ticket(slot());
        cache.put(t, &json!({"tools": [], "ttlMs": 0}), true);
        assert!(cache.get(&slot()).is_none());
    }

    #[test]
    fn cursor_pages_and_retries_are_not_cacheable() {
        let params = |v: Value| v.as_object().cloned().unwrap_or_default();
        assert!(slot_of(methods::TOOLS_LIST, &params(json!({"cursor": "2"}))).is_none());
        assert!(slot_of(methods::TOOLS_CALL, &params(json!({}))).is_none());
        assert_eq!(
            slot_of(methods::RESOURCES_READ, &params(json!({"uri": "x://y"}))),
            Some((methods::RESOURCES_READ, "x://y".to_owned()))
        );
    }
}
