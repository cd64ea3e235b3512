//! Settings of one subscription: [`ListenOptions`] (buffer, acknowledgment wait, the
//! reconnection policy) and their defaults.

use std::time::Duration;

/// The default bound on unread events of one subscription: 256.
pub const DEFAULT_LISTEN_BUFFER: usize = 256;
/// The default bound on reconnection attempts in a row: 5.
pub const DEFAULT_MAX_RECONNECTS: u32 = 5;
/// The default delay before the first reconnection attempt: 500 ms.
pub const DEFAULT_RECONNECT_DELAY: Duration = Duration::from_millis(500);
/// The default cap on the reconnection delay: 30 s.
pub const DEFAULT_MAX_RECONNECT_DELAY: Duration = Duration::from_secs(30);
/// The default wait for the server's acknowledgment: 30 s.
pub const DEFAULT_ACK_TIMEOUT: Duration = Duration::from_secs(30);

/// Settings of one subscription.
///
/// ```
/// use std::time::Duration;
/// use ferromcp_client::listen::ListenOptions;
///
/// let opts = ListenOptions::new()
///     .buffer(64)
///     .max_reconnects(10)
///     .reconnect_delay(Duration::from_millis(200));
/// assert_eq!(opts.buffer, 64);
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ListenOptions {
    /// How many events may wait unread (default [`DEFAULT_LISTEN_BUFFER`]); more are
    /// reported as [`ListenEvent::Lagged`].
    ///
    /// [`ListenEvent::Lagged`]: super::ListenEvent::Lagged
    pub buffer: usize,
    /// How long opening (or re-opening) waits for the acknowledgment (default
    /// [`DEFAULT_ACK_TIMEOUT`]).
    pub ack_timeout: Duration,
    /// Reconnection attempts in a row before the subscription ends (default
    /// [`DEFAULT_MAX_RECONNECTS`]; 0 turns reconnection off).
    pub max_reconnects: u32,
    /// The delay before the first reconnection attempt, doubled per failed attempt (default
    /// [`DEFAULT_RECONNECT_DELAY`]).
    pub reconnect_delay: Duration,
    /// The cap on the reconnection delay (default [`DEFAULT_MAX_RECONNECT_DELAY`]).
    pub max_reconnect_delay: Duration,
    /// At 2025-11-25, emulate the subscription with `resources/subscribe` and the session's
    /// notifications (default `true`); when off, listening there fails.
    pub handshake_fallback: bool,
}

impl Default for ListenOptions {
    fn default() -> Self {
        Self {
            buffer: DEFAULT_LISTEN_BUFFER,
            ack_timeout: DEFAULT_ACK_TIMEOUT,
            max_reconnects: DEFAULT_MAX_RECONNECTS,
            reconnect_delay: DEFAULT_RECONNECT_DELAY,
            max_reconnect_delay: DEFAULT_MAX_RECONNECT_DELAY,
            handshake_fallback: true,
        }
    }
}

impl ListenOptions {
    /// The defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the bound on unread events (at least 1).
    #[must_use]
    pub fn buffer(mut self, n: usize) -> Self {
        self.buffer = n.max(1);
        self
    }

    /// Sets how long (re-)opening waits for the acknowledgment.
    #[must_use]
    pub fn ack_timeout(mut self, d: Duration) -> Self {
        self.ack_timeout = d;
        self
    }

    /// Sets the bound on reconnection attempts in a row (0: never reconnect).
    #[must_use]
    pub fn max_reconnects(mut self, n: u32) -> Self {
        self.max_reconnects = n;
        self
    }

    /// Sets the first reconnection delay.
    #[must_use]
    pub fn reconnect_delay(mut self, d: Duration) -> Self {
        self.reconnect_delay = d;
        self
    }

    /// Sets the cap on the reconnection delay.
    #[must_use]
    pub fn max_reconnect_delay(mut self, d: Duration) -> Self {
        self.max_reconnect_delay = d;
        self
    }

    /// Turns the 2025-11-25 fallback on or off.
    #[must_use]
    pub fn handshake_fallback(mut self, on: bool) -> Self {
        self.handshake_fallback = on;
        self
    }

    /// The delay before reconnection attempt `attempt` (1-based).
    pub(super) fn backoff(&self, attempt: u32) -> Duration {
        let factor = 1u32 << attempt.saturating_sub(1).min(16);
        self.reconnect_delay
            .saturating_mul(factor)
            .min(self.max_reconnect_delay.max(self.reconnect_delay))
    }
}
