//! Per-call options.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use ferromcp_dispatch::{Progress, ProgressCallback};
use ferromcp_types::mcp::{LoggingMessageNotificationParams, Meta};

use crate::cache::CacheMode;

/// Receives the log records (`notifications/message`) the server sends in relation to one
/// request (see [`RequestOptions::on_log`]).
pub type LogCallback = Arc<dyn Fn(LoggingMessageNotificationParams) + Send + Sync>;

/// Options for one call.
///
/// ```
/// use std::time::Duration;
/// use ferromcp_client::{CacheMode, RequestOptions};
///
/// let opts = RequestOptions::new()
///     .timeout(Duration::from_secs(10))
///     .max_total_timeout(Duration::from_secs(120))
///     .cache(CacheMode::Bypass)
///     .on_progress(|p| eprintln!("{}/{:?}", p.progress, p.total));
/// # let _ = opts;
/// ```
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct RequestOptions {
    /// Fails the call with -32001 when no answer (or progress) comes within this time; the
    /// client's default applies when unset.
    pub timeout: Option<Duration>,
    /// Fails the call with -32001 after this time, whatever progress arrives; the client's
    /// default ([`DEFAULT_MAX_TOTAL_TIMEOUT`](crate::DEFAULT_MAX_TOTAL_TIMEOUT), 10 minutes,
    /// set with [`ClientBuilder::max_total_timeout`](crate::ClientBuilder::max_total_timeout))
    /// applies when unset. `Duration::MAX` lifts it for this call.
    pub max_total_timeout: Option<Duration>,
    /// Receives the server's progress reports for this call (every round of a multi-round
    /// call).
    pub on_progress: Option<ProgressCallback>,
    /// Receives the log records the server sends in relation to this call (see
    /// [`RequestOptions::on_log`]).
    pub on_log: Option<LogCallback>,
    /// How the call uses the response cache.
    pub cache: CacheMode,
    /// Extra `_meta` keys for the request (a call with extra `_meta` refreshes the cache
    /// rather than reading it).
    pub meta: Option<Meta>,
}

impl RequestOptions {
    /// The defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the per-request timeout (restarted by progress).
    #[must_use]
    pub fn timeout(mut self, d: Duration) -> Self {
        self.timeout = Some(d);
        self
    }

    /// Sets the maximum total time (overrides the client's default; `Duration::MAX` lifts
    /// it).
    #[must_use]
    pub fn max_total_timeout(mut self, d: Duration) -> Self {
        self.max_total_timeout = Some(d);
        self
    }

    /// Receives progress reports.
    #[must_use]
    pub fn on_progress(mut self, f: impl Fn(Progress) + Send + Sync + 'static) -> Self {
        self.on_progress = Some(Arc::new(f));
        self
    }

    /// Receives the log records (`notifications/message`) the server sends in relation to this
    /// call (every round of a multi-round call), instead of the client's notification
    /// handlers: the records that come on the request's own Streamable HTTP response stream
    /// (at 2026-07-28 every record of a request does), or that an in-process server sends
    /// while handling it. Records whose request the transport cannot tell (stdio) reach the
    /// notification handlers as before. Runs on the dispatcher's read loop: it must be quick
    /// and must not block.
    #[must_use]
    pub fn on_log(
        mut self,
        f: impl Fn(LoggingMessageNotificationParams) + Send + Sync + 'static,
    ) -> Self {
        self.on_log = Some(Arc::new(f));
        self
    }

    /// Sets the cache mode.
    #[must_use]
    pub fn cache(mut self, mode: CacheMode) -> Self {
        self.cache = mode;
        self
    }

    /// Adds `_meta` keys to the request.
    #[must_use]
    pub fn meta(mut self, meta: Meta) -> Self {
        self.meta = Some(meta);
        self
    }

    /// The cache mode in effect: extra `_meta` turns `Use` into `Refresh`.
    pub(crate) fn effective_cache(&self) -> CacheMode {
        match (self.cache, &self.meta) {
            (CacheMode::Use, Some(m)) if !m.is_empty() => CacheMode::Refresh,
            (mode, _) => mode,
        }
    }
}

impl fmt::Debug for RequestOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestOptions")
            .field("timeout", &self.timeout)
            .field("max_total_timeout", &self.max_total_timeout)
            .field("on_progress", &self.on_progress.is_some())
            .field("on_log", &self.on_log.is_some())
            .field("cache", &self.cache)
            .field("meta", &self.meta)
            .finish()
    }
}
