//! A token-bucket rate limit per caller (peer IP address, IPv6 by /64), for the
//! authorization, token, revocation and registration endpoints. Runs on the tokio clock (tests pause it).

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

/// A rate limit: at most `burst` requests at once, refilled at `burst` per `period`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct RateLimit {
    /// The bucket size (requests allowed back to back).
    pub burst: u32,
    /// The time in which a whole bucket refills.
    pub period: Duration,
}

impl RateLimit {
    /// `burst` requests per `period`.
    pub fn new(burst: u32, period: Duration) -> Self {
        Self { burst, period }
    }
}

/// The default token-endpoint limit: 60 requests per minute per peer address.
pub const DEFAULT_TOKEN_RATE_LIMIT: RateLimit = RateLimit {
    burst: 60,
    period: Duration::from_secs(60),
};

/// The default authorization-endpoint limit: 30 requests per minute per peer address (a
/// person's browser makes a few).
pub const DEFAULT_AUTHORIZE_RATE_LIMIT: RateLimit = RateLimit {
    burst: 30,
    period: Duration::from_secs(60),
};

/// The most callers tracked; past it, full (idle) buckets are forgotten first, then the
/// oldest.
const MAX_KEYS: usize = 10_000;

pub(crate) struct Limiter {
    limit: RateLimit,
    buckets: Mutex<HashMap<IpAddr, (f64, Instant)>>,
}

impl Limiter {
    pub(crate) fn new(limit: RateLimit) -> Self {
        Self {
            limit,
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// Takes one request from `key`'s bucket: `Err(wait)` when it is empty.
    pub(crate) fn check(&self, key: IpAddr) -> Result<(), Duration> {
        let burst = f64::from(self.limit.burst.max(1));
        let rate = burst / self.limit.period.as_secs_f64().max(1e-3);
        let now = Instant::now();
        let mut b = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        if b.len() >= MAX_KEYS && !b.contains_key(&key) {
            b.retain(|_, (tokens, at)| {
                *tokens + now.duration_since(*at).as_secs_f64() * rate < burst
            });
            if b.len() >= MAX_KEYS
                && let Some(oldest) = b.iter().min_by_key(|(_, (_, at))| *at).map(|(k, _)| *k)
            {
                b.remove(&oldest);
            }
        }
        let (tokens, at) = b.entry(key).or_insert((burst, now));
        *tokens = (*tokens + now.duration_since(*at).as_secs_f64() * rate).min(burst);
        *at = now;
        if self.limit.burst == 0 || *tokens < 1.0 {
            let wait = (1.0 - *tokens) / rate;
            return Err(Duration::from_secs_f64(wait.max(0.001)));
        }
        *tokens -= 1.0;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bucket empties after `burst` requests and refills over `period` (paused clock).
    #[tokio::test(start_paused = true)]
    async fn bucket_empties_and_refills() {
        let l = Limiter::new(RateLimit::new(2, Duration::from_secs(10)));
        let ip = IpAddr::from([127, 0, 0, 1]);
        assert!(l.check(ip).is_ok() && l.check(ip).is_ok());
        let wait = l.check(ip).unwrap_err();
        assert!(
            wait <= Duration::from_secs(5) && wait > Duration::ZERO,
            "{wait:?}"
        );
        assert!(l.check(IpAddr::from([10, 0, 0, 1])).is_ok(), "per peer");
        tokio::time::advance(Duration::from_secs(5)).await;
        assert!(l.check(ip).is_ok());
        assert!(l.check(ip).is_err());
        let zero = Limiter::new(RateLimit::new(0, Duration::from_secs(1)));
        assert!(zero.check(ip).is_err());
    }
}
