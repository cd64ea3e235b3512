//! The gateway's `[health]` table and the supervision of each backend: how often a mounted
//! backend is pinged, how long a ping may take, and the backoff between tries of a backend
//! that failed to start or died.
//!
//! ```toml
//! [health]
//! ping_interval = 2     # seconds between two pings of a mounted backend
//! ping_timeout = 10     # seconds a ping may take before the backend counts as down
//! backoff_min = 1       # first wait before a failed backend is tried again (doubles)
//! backoff_max = 60      # longest wait between two tries
//! ```

use std::sync::Arc;
use std::time::Duration;

use ferromcp_compose::{Backend, Composer};
use serde::Deserialize;
use tokio::sync::watch;

/// The default `[health] ping_interval`: how often a mounted backend is pinged.
pub(crate) const DEFAULT_PING_INTERVAL: Duration = Duration::from_secs(2);
/// The default `[health] ping_timeout`: how long a ping may take before the backend counts
/// as down.
pub(crate) const DEFAULT_PING_TIMEOUT: Duration = Duration::from_secs(10);
/// The default `[health] backoff_min`: the first wait before a backend that failed or died is
/// tried again; it doubles up to `backoff_max`.
pub(crate) const DEFAULT_BACKOFF_MIN: Duration = Duration::from_secs(1);
/// The default `[health] backoff_max`: the longest wait between two tries of a backend.
pub(crate) const DEFAULT_BACKOFF_MAX: Duration = Duration::from_secs(60);

/// The `[health]` table as written (seconds).
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(super) struct HealthConfig {
    ping_interval: f64,
    ping_timeout: f64,
    backoff_min: f64,
    backoff_max: f64,
}

impl Default for HealthConfig {
    fn default() -> Self {
        Self {
            ping_interval: DEFAULT_PING_INTERVAL.as_secs_f64(),
            ping_timeout: DEFAULT_PING_TIMEOUT.as_secs_f64(),
            backoff_min: DEFAULT_BACKOFF_MIN.as_secs_f64(),
            backoff_max: DEFAULT_BACKOFF_MAX.as_secs_f64(),
        }
    }
}

/// The checked `[health]` settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Health {
    pub(super) ping_interval: Duration,
    pub(super) ping_timeout: Duration,
    pub(super) backoff_min: Duration,
    pub(super) backoff_max: Duration,
}

impl Default for Health {
    fn default() -> Self {
        Self {
            ping_interval: DEFAULT_PING_INTERVAL,
            ping_timeout: DEFAULT_PING_TIMEOUT,
            backoff_min: DEFAULT_BACKOFF_MIN,
            backoff_max: DEFAULT_BACKOFF_MAX,
        }
    }
}

impl HealthConfig {
    /// The settings, or why they cannot be used: every value a positive number of seconds,
    /// `backoff_min` at most `backoff_max`.
    pub(super) fn check(&self) -> Result<Health, String> {
        let secs = |name: &str, v: f64| {
            Duration::try_from_secs_f64(v)
                .ok()
                .filter(|d| !d.is_zero())
                .ok_or_else(|| format!("[health] `{name}` must be a positive number of seconds"))
        };
        let health = Health {
            ping_interval: secs("ping_interval", self.ping_interval)?,
            ping_timeout: secs("ping_timeout", self.ping_timeout)?,
            backoff_min: secs("backoff_min", self.backoff_min)?,
            backoff_max: secs("backoff_max", self.backoff_max)?,
        };
        if health.backoff_min > health.backoff_max {
            return Err("[health] `backoff_min` must not exceed `backoff_max`".to_owned());
        }
        Ok(health)
    }
}

/// Mounts `name` once, reporting the outcome.
pub(super) async fn try_mount(composed: &Composer, name: &str, backend: &Backend) -> bool {
    match composed.mount(name, backend.clone()).await {
        Ok(()) => {
            status!("ferromcp gateway: {name}: up");
            true
        }
        Err(e) => {
            status!("ferromcp gateway: {name}: {e}");
            false
        }
    }
}

/// Keeps one backend mounted (`up`: it is now): pings it every `ping_interval`, and when it
/// fails to start or dies, unmounts it (its tools leave the front, whose clients are told)
/// and tries again with backoff. The settings are read from `health` at each step, so a
/// config reload applies to running backends. Runs until aborted.
pub(super) async fn supervise(
    composed: Arc<Composer>,
    name: String,
    backend: Backend,
    mut up: bool,
    health: watch::Receiver<Health>,
) {
    let now = || *health.borrow();
    let mut delay = now().backoff_min;
    loop {
        if up {
            delay = now().backoff_min;
            loop {
                let Health {
                    ping_interval,
                    ping_timeout,
                    ..
                } = now();
                tokio::time::sleep(ping_interval).await;
                match tokio::time::timeout(ping_timeout, composed.ping(&name)).await {
                    Ok(Some(Ok(()))) => {}
                    Ok(None) => return,
                    Ok(Some(Err(e))) => {
                        status!("ferromcp gateway: {name}: down: {e}");
                        break;
                    }
                    Err(_) => {
                        status!("ferromcp gateway: {name}: down: no answer to a ping");
                        break;
                    }
                }
            }
            composed.unmount(&name).await;
        }
        let Health {
            backoff_min,
            backoff_max,
            ..
        } = now();
        delay = delay.clamp(backoff_min, backoff_max);
        status!(
            "ferromcp gateway: {name}: trying again in {} s",
            delay.as_secs_f64()
        );
        tokio::time::sleep(delay).await;
        delay = (delay * 2).min(backoff_max);
        up = try_mount(&composed, &name, &backend).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Zero, negative and inverted settings are refused, naming the key; the defaults are
    /// the `DEFAULT_` constants.
    #[test]
    fn health_settings_are_checked() {
        assert_eq!(HealthConfig::default().check(), Ok(Health::default()));
        let bad = |c: HealthConfig, key: &str| {
            let e = c.check().err().unwrap_or_default();
            assert!(e.contains(key), "{e}");
        };
        let d = HealthConfig::default();
        bad(
            HealthConfig {
                ping_interval: 0.0,
                ..d
            },
            "ping_interval",
        );
        bad(
            HealthConfig {
                ping_timeout: -1.0,
                ..d
            },
            "ping_timeout",
        );
        bad(
            HealthConfig {
                backoff_min: f64::NAN,
                ..d
            },
            "backoff_min",
        );
        bad(
            HealthConfig {
                backoff_min: 5.0,
                backoff_max: 1.0,
                ..d
            },
            "must not exceed",
        );
    }
}
