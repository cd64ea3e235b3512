//! Task settings: [`TaskConfig`] (the polling intervals, client-hosted tasks) and its
//! defaults.

use std::time::Duration;

/// The first polling interval when the server gives no hint.
pub const DEFAULT_INITIAL_POLL_INTERVAL: Duration = Duration::from_millis(250);
/// The shortest polling interval, whatever the server hints.
pub const DEFAULT_MIN_POLL_INTERVAL: Duration = Duration::from_millis(50);
/// The longest polling interval, whatever the server hints (also the backoff's ceiling).
pub const DEFAULT_MAX_POLL_INTERVAL: Duration = Duration::from_secs(30);

/// Task settings, given to [`ClientBuilder::tasks`](crate::ClientBuilder::tasks).
///
/// ```
/// use std::time::Duration;
/// use ferromcp_client::TaskConfig;
///
/// let config = TaskConfig::new()
///     .initial_poll_interval(Duration::from_millis(100))
///     .max_poll_interval(Duration::from_secs(5));
/// assert_eq!(config.min_poll_interval, ferromcp_client::tasks::DEFAULT_MIN_POLL_INTERVAL);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TaskConfig {
    /// The first polling interval when the server gives no hint (default 250 ms); it doubles
    /// after every poll that changes nothing, up to `max_poll_interval`.
    pub initial_poll_interval: Duration,
    /// The floor of every polling interval (default 50 ms): a server's hint below it is
    /// raised to it.
    pub min_poll_interval: Duration,
    /// The ceiling of every polling interval (default 30 s): a server's hint above it is
    /// lowered to it.
    pub max_poll_interval: Duration,
    /// Client-hosted tasks (2025-11-25): when set, the server may send sampling and
    /// elicitation requests as tasks (see [`hosted_tasks`](crate::hosted_tasks)). Off by
    /// default. (Boxed: the builder, which every connect future holds, stays small.)
    pub hosted: Option<Box<crate::hosted_tasks::HostedTaskConfig>>,
}

impl Default for TaskConfig {
    fn default() -> Self {
        Self {
            initial_poll_interval: DEFAULT_INITIAL_POLL_INTERVAL,
            min_poll_interval: DEFAULT_MIN_POLL_INTERVAL,
            max_poll_interval: DEFAULT_MAX_POLL_INTERVAL,
            hosted: None,
        }
    }
}

impl TaskConfig {
    /// The defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the first polling interval without a server hint.
    #[must_use]
    pub fn initial_poll_interval(mut self, d: Duration) -> Self {
        self.initial_poll_interval = d;
        self
    }

    /// Sets the floor of the polling interval.
    #[must_use]
    pub fn min_poll_interval(mut self, d: Duration) -> Self {
        self.min_poll_interval = d;
        self
    }

    /// Sets the ceiling of the polling interval.
    #[must_use]
    pub fn max_poll_interval(mut self, d: Duration) -> Self {
        self.max_poll_interval = d;
        self
    }

    /// Hosts task-augmented sampling and elicitation requests from the server (2025-11-25,
    /// with the default [`HostedTaskConfig`](crate::HostedTaskConfig)); `false` turns it off.
    #[must_use]
    pub fn host_requests(mut self, on: bool) -> Self {
        self.hosted = on.then(Box::default);
        self
    }

    /// Hosts task-augmented sampling and elicitation requests with these limits.
    #[must_use]
    pub fn hosted(mut self, config: crate::hosted_tasks::HostedTaskConfig) -> Self {
        self.hosted = Some(Box::new(config));
        self
    }

    /// The next sleep: the server's hint when there is one, else the backoff (which doubles).
    pub(super) fn next_interval(&self, hint: Option<Duration>, backoff: &mut Duration) -> Duration {
        let max = self.max_poll_interval.max(self.min_poll_interval);
        let d = match hint {
            Some(hint) => hint,
            None => {
                let d = *backoff;
                *backoff = backoff.saturating_mul(2).min(max);
                d
            }
        };
        d.clamp(self.min_poll_interval, max)
    }
}
