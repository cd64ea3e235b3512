//! The JWKS cache behind [`JwtVerifier`](super::JwtVerifier): the last good key set, and
//! when to fetch the next one.
//!
//! - **One fetch in flight.** A fetch runs in its own task; a request never holds a lock
//!   across it.
//! - **Requests never queue behind a fetch when they can be answered.** A token whose key is
//!   in a usable set is checked against it at once, even while that set is being refreshed
//!   (stale-while-revalidate). Only a request that cannot be decided without the fetch — its
//!   `kid` is unknown, or no usable set exists (first use, or the last good set is past its
//!   grace) — waits, and only for a fetch that is in flight (or that it started), at most the
//!   fetch timeout. When no fetch may start (spacing, backoff), it is answered at once: 401
//!   for an unknown `kid`, 503 when no usable set exists.
//! - **Spaced fetches.** An unknown `kid` starts a fetch at most once per `min_refetch`
//!   after the last one ended; after a failed fetch the next one (of any cause) waits
//!   `min_refetch`, then twice that, doubling up to `max_backoff`.
//! - **Bounded staleness.** A failed refresh keeps the last good set; it is used until
//!   `refresh + stale_grace` after it was fetched, after which tokens are refused with 503
//!   (fail closed: the keys may have been rotated out meanwhile) until a fetch succeeds.

use std::str::FromStr;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use base64::Engine as _;
use http::Uri;
use jsonwebtoken::jwk::{Jwk, JwkSet, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey};
use tokio::sync::watch;

use super::AuthError;
use super::fetch::Fetcher;

/// One usable key of the set.
pub(super) struct Key {
    pub(super) kid: Option<String>,
    pub(super) alg: Option<Algorithm>,
    pub(super) key: DecodingKey,
}

/// A fetched key set.
pub(super) struct KeySet {
    pub(super) keys: Vec<Key>,
    fetched: Instant,
}

impl KeySet {
    /// Whether a token naming `kid` can be checked against this set (a token without a
    /// `kid` is tried against every key).
    fn knows(&self, kid: Option<&str>) -> bool {
        kid.is_none() || self.keys.iter().any(|k| k.kid.as_deref() == kid)
    }
}

/// The cache's timing settings.
#[derive(Debug, Clone, Copy)]
pub(super) struct Timing {
    /// The age after which the set is re-fetched.
    pub(super) refresh: Duration,
    /// The spacing of unknown-`kid` fetches, and the first backoff step.
    pub(super) min_refetch: Duration,
    /// The largest backoff after failed fetches.
    pub(super) max_backoff: Duration,
    /// How long past `refresh` a set is still used when it could not be refreshed.
    pub(super) stale_grace: Duration,
    /// The fetch timeout, and the longest a request waits for a fetch.
    pub(super) timeout: Duration,
}

impl Timing {
    /// The wait before the next fetch after `failures` consecutive failed ones (≥ 1).
    fn backoff(&self, failures: u32) -> Duration {
        let factor = 1u32 << failures.saturating_sub(1).min(20);
        let cap = self.max_backoff.max(self.min_refetch);
        self.min_refetch.saturating_mul(factor).min(cap)
    }
}

/// `t + d`, or `None` past the end of time (then "never").
fn later(t: Instant, d: Duration) -> Option<Instant> {
    t.checked_add(d)
}

/// Why a fetch is wanted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cause {
    /// The set is older than the refresh period.
    Stale,
    /// A token names a `kid` the set does not have.
    UnknownKid,
    /// There is no usable set.
    NoKeys,
}

#[derive(Default)]
struct State {
    /// The last good set.
    keys: Option<Arc<KeySet>>,
    in_flight: bool,
    /// When the last fetch ended.
    last_done: Option<Instant>,
    /// Consecutive failed fetches.
    failures: u32,
    /// No fetch before this (backoff after a failure).
    retry_at: Option<Instant>,
    /// Why the last fetch failed.
    last_error: Option<String>,
}

impl State {
    /// The last good set while it may still be used.
    fn usable(&self, now: Instant, t: &Timing) -> Option<Arc<KeySet>> {
        self.keys
            .as_ref()
            .filter(|s| {
                later(s.fetched, t.refresh.saturating_add(t.stale_grace)).is_none_or(|e| now < e)
            })
            .cloned()
    }

    fn is_stale(&self, now: Instant, t: &Timing) -> bool {
        self.keys
            .as_ref()
            .is_some_and(|s| later(s.fetched, t.refresh).is_some_and(|e| now >= e))
    }

    fn unavailable(&self) -> AuthError {
        AuthError::Unavailable(match &self.last_error {
            Some(e) if self.keys.is_some() => {
                format!("the JWKS could not be refreshed and the last keys are too old: {e}")
            }
            Some(e) => e.clone(),
            None => "the JWKS is being fetched".to_owned(),
        })
    }
}

struct Inner {
    url: Uri,
    fetcher: Fetcher,
    timing: Timing,
    state: Mutex<State>,
    /// Bumped each time a fetch ends.
    done: watch::Sender<u64>,
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    async fn fetch(&self) -> Result<Vec<Key>, String> {
        let body = self.fetcher.get(&self.url).await?;
        let set: JwkSet =
            serde_json::from_slice(&body).map_err(|e| format!("JWKS is not a JWK set: {e}"))?;
        Ok(set.keys.iter().filter_map(usable).collect())
    }

    /// Records the end of a fetch and wakes its waiters.
    fn land(&self, result: Result<Vec<Key>, String>) {
        let now = Instant::now();
        {
            let mut st = self.lock();
            st.in_flight = false;
            st.last_done = Some(now);
            match result {
                Ok(keys) => {
                    tracing::debug!(keys = keys.len(), "JWKS fetched");
                    st.keys = Some(Arc::new(KeySet { keys, fetched: now }));
                    st.failures = 0;
                    st.retry_at = None;
                    st.last_error = None;
                }
                Err(e) => {
                    st.failures = st.failures.saturating_add(1);
                    let wait = self.timing.backoff(st.failures);
                    tracing::warn!(
                        error = %e,
                        failures = st.failures,
                        retry_in = ?wait,
                        "JWKS fetch failed; keeping the last good keys"
                    );
                    st.retry_at = later(now, wait);
                    st.last_error = Some(e);
                }
            }
        }
        self.done.send_modify(|g| *g = g.wrapping_add(1));
    }
}

/// Lands an abandoned fetch (its task dropped, e.g. at runtime shutdown) as a failure, so
/// `in_flight` never stays set.
struct Landing(Option<Arc<Inner>>);

impl Landing {
    fn finish(mut self, result: Result<Vec<Key>, String>) {
        if let Some(inner) = self.0.take() {
            inner.land(result);
        }
    }
}

impl Drop for Landing {
    fn drop(&mut self) {
        if let Some(inner) = self.0.take() {
            inner.land(Err("the JWKS fetch was abandoned".to_owned()));
        }
    }
}

/// The JWKS cache (see the module docs).
pub(super) struct KeyCache {
    inner: Arc<Inner>,
}

impl KeyCache {
    pub(super) fn new(url: Uri, fetcher: Fetcher, timing: Timing) -> Self {
        Self {
            inner: Arc::new(Inner {
                url,
                fetcher,
                timing,
                state: Mutex::new(State::default()),
                done: watch::channel(0).0,
            }),
        }
    }

    /// Starts a fetch for `cause` unless one is in flight or it may not start yet. `true`
    /// when a fetch is in flight afterwards.
    fn start(&self, st: &mut State, cause: Cause, now: Instant) -> bool {
        if st.in_flight {
            return true;
        }
        if st.retry_at.is_some_and(|t| now < t) {
            return false;
        }
        let spaced = |t: Instant| later(t, self.inner.timing.min_refetch).is_none_or(|e| now < e);
        if cause == Cause::UnknownKid && st.last_done.is_some_and(spaced) {
            return false;
        }
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return false;
        };
        tracing::debug!(?cause, "fetching the JWKS");
        st.in_flight = true;
        let inner = self.inner.clone();
        rt.spawn(async move {
            let landing = Landing(Some(inner.clone()));
            let result = inner.fetch().await;
            landing.finish(result);
        });
        true
    }

    /// How long until a request refused as unavailable may be answered: the fetch timeout
    /// while a fetch is in flight, the rest of the backoff after a failed one, else the spacing
    /// of fetches (a fetch may start at once, and ends within the timeout).
    pub(super) fn retry_after(&self) -> Duration {
        let timing = self.inner.timing;
        let st = self.inner.lock();
        let now = Instant::now();
        match st.retry_at {
            _ if st.in_flight => timing.timeout,
            Some(t) if t > now => t - now,
            _ => timing
                .timeout
                .min(timing.min_refetch.max(Duration::from_secs(1))),
        }
    }

    /// A usable key set that knows `kid` (any usable set for a token without one).
    ///
    /// Errors: [`AuthError::InvalidToken`] when a fresh enough set does not know `kid`;
    /// [`AuthError::Unavailable`] when no usable set exists or the fetch that would decide
    /// did not end in time.
    pub(super) async fn keys_for(&self, kid: Option<&str>) -> Result<Arc<KeySet>, AuthError> {
        let timing = self.inner.timing;
        let mut ended = {
            let now = Instant::now();
            let mut st = self.inner.lock();
            if st.is_stale(now, &timing) {
                self.start(&mut st, Cause::Stale, now);
            }
            match st.usable(now, &timing) {
                Some(set) if set.knows(kid) => return Ok(set),
                Some(_) => {
                    if !self.start(&mut st, Cause::UnknownKid, now) {
                        return Err(unknown_kid());
                    }
                }
                None => {
                    if !self.start(&mut st, Cause::NoKeys, now) {
                        return Err(st.unavailable());
                    }
                }
            }
            // Subscribed under the lock: the fetch cannot land unseen.
            self.inner.done.subscribe()
        };
        // Bounded: the fetch itself ends within the timeout.
        let _ = tokio::time::timeout(timing.timeout, ended.changed()).await;
        let st = self.inner.lock();
        match st.usable(Instant::now(), &timing) {
            Some(set) if set.knows(kid) => Ok(set),
            Some(_) if st.failures == 0 && !st.in_flight => Err(unknown_kid()),
            _ => Err(st.unavailable()),
        }
    }
}

fn unknown_kid() -> AuthError {
    AuthError::invalid("no key for the token's kid")
}

/// A JWK usable for signatures: not marked for encryption, not a symmetric key, parseable.
fn usable(jwk: &Jwk) -> Option<Key> {
    if matches!(jwk.common.public_key_use, Some(PublicKeyUse::Encryption)) {
        return None;
    }
    if matches!(
        jwk.algorithm,
        jsonwebtoken::jwk::AlgorithmParameters::OctetKey(_)
    ) {
        return None;
    }
    if let jsonwebtoken::jwk::AlgorithmParameters::OctetKeyPair(p) = &jwk.algorithm {
        // Ed25519 only, and exactly 32 bytes: the verifier slices the key unchecked.
        let x = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(p.x.trim_end_matches('='));
        if p.curve != jsonwebtoken::jwk::EllipticCurve::Ed25519 || x.map_or(true, |x| x.len() != 32)
        {
            return None;
        }
    }
    let alg = match jwk.common.key_algorithm {
        Some(ka) => Some(Algorithm::from_str(&ka.to_string()).ok()?),
        None => None,
    };
    let key = DecodingKey::from_jwk(jwk).ok()?;
    Some(Key {
        kid: jwk.common.key_id.clone(),
        alg,
        key,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_from_min_refetch_up_to_the_cap() {
        let t = Timing {
            refresh: Duration::from_secs(300),
            min_refetch: Duration::from_secs(30),
            max_backoff: Duration::from_secs(300),
            stale_grace: Duration::from_secs(3600),
            timeout: Duration::from_secs(10),
        };
        let steps: Vec<u64> = (1..=7).map(|n| t.backoff(n).as_secs()).collect();
        assert_eq!(steps, [30, 60, 120, 240, 300, 300, 300]);
        assert_eq!(t.backoff(u32::MAX), Duration::from_secs(300));
        let huge = Timing {
            min_refetch: Duration::MAX,
            ..t
        };
        assert_eq!(huge.backoff(3), Duration::MAX);
    }
}
