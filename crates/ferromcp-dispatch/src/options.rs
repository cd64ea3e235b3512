//! Per-call options for outbound requests, and progress reports.

use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use ferromcp_jsonrpc::{RawJson, RequestId};
use http::{HeaderMap, HeaderName, HeaderValue};

/// One progress report for an in-flight request (`notifications/progress`).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Progress {
    /// Progress so far; increases with every report.
    pub progress: f64,
    /// The total, when known.
    pub total: Option<f64>,
    /// A human-readable message.
    pub message: Option<String>,
}

impl Progress {
    /// A report with the given values.
    pub fn new(progress: f64, total: Option<f64>, message: Option<String>) -> Self {
        Self {
            progress,
            total,
            message,
        }
    }
}

/// Receives the progress reports the peer sends for one outbound request. It runs on the
/// dispatcher's read loop, so it must be quick and must not block.
pub type ProgressCallback = Arc<dyn Fn(Progress) + Send + Sync>;

/// Receives an outbound request's id once the dispatcher has assigned it (minted, or the
/// caller's [`CallOptions::request_id`]), before the request is written: to record it on a
/// trace span, for example. It must be quick and must not block.
pub type IdCallback = Arc<dyn Fn(&RequestId) + Send + Sync>;

/// Keeps a request's progress route open after its answer, for as long as any clone of it
/// lives (or until [`KeepProgress::release`]).
///
/// Normally progress for a request stops reaching its [`CallOptions::on_progress`] callback
/// once the answer arrives. A request whose answer starts work that goes on reporting under
/// the same progress token (the request id) passes one of these with
/// [`CallOptions::keep_progress`]: when the request is answered with a result, the callback
/// stays registered for that token until the last clone is dropped or `release` is called.
/// An error answer, a timeout or an abandoned request keeps nothing, nor does a holder
/// released before the answer. A holder serves one request: using it for another ends the
/// earlier route when the later one is answered.
///
/// ```
/// use ferromcp_dispatch::{CallOptions, KeepProgress};
///
/// let keep = KeepProgress::new();
/// let opts = CallOptions::new().on_progress(|_| {}).keep_progress(keep.clone());
/// assert!(opts.keep_progress.is_some());
/// keep.release(); // progress after the answer is no longer routed
/// assert!(keep.is_released());
/// ```
#[derive(Clone, Default)]
pub struct KeepProgress {
    inner: Arc<KeepInner>,
}

/// Ends a kept route.
type Release = Box<dyn FnOnce() + Send>;

#[derive(Default)]
struct KeepInner {
    state: Mutex<KeepState>,
}

#[derive(Default)]
struct KeepState {
    released: bool,
    release: Option<Release>,
}

impl KeepInner {
    fn release(&self) {
        let release = {
            let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
            state.released = true;
            state.release.take()
        };
        if let Some(release) = release {
            release();
        }
    }
}

impl Drop for KeepInner {
    fn drop(&mut self) {
        self.release();
    }
}

impl KeepProgress {
    /// A holder that keeps nothing until a request using it is answered.
    pub fn new() -> Self {
        Self::default()
    }

    /// Ends the kept route now, for every clone: later progress is dropped.
    pub fn release(&self) {
        self.inner.release();
    }

    /// Whether [`KeepProgress::release`] was called (or the route otherwise ended).
    pub fn is_released(&self) -> bool {
        self.inner
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .released
    }

    /// Hands over how to end the route (dispatchers call this when the answer arrives);
    /// `false` when already released, in which case the caller must keep nothing.
    pub(crate) fn arm(&self, release: Release) -> bool {
        let mut state = self
            .inner
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if state.released {
            return false;
        }
        // One request per holder: a second arming ends the first route.
        let previous = state.release.replace(release);
        drop(state);
        if let Some(previous) = previous {
            previous();
        }
        true
    }
}

impl fmt::Debug for KeepProgress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeepProgress")
            .field("released", &self.is_released())
            .finish()
    }
}

/// Resumption hooks for the HTTP client transport (handshake-era resumable SSE streams). Other
/// transports ignore them.
pub trait ResumptionHooks: Send + Sync {
    /// A new resumption token (an SSE event id) arrived for the request's stream.
    fn on_token(&self, token: &str);
    /// The token to resume from, when the request continues an earlier stream.
    fn resume_from(&self) -> Option<String>;
}

/// Options for one outbound request.
///
/// ```
/// use std::time::Duration;
/// use ferromcp_dispatch::CallOptions;
///
/// let opts = CallOptions::new()
///     .timeout(Duration::from_secs(30))
///     .max_total_timeout(Duration::from_secs(300))
///     .request_id("call-1")
///     .on_progress(|p| println!("{}", p.progress));
/// assert!(opts.cancels_on_abandon());
/// ```
#[derive(Clone)]
#[non_exhaustive]
pub struct CallOptions {
    /// Fails the request with -32001 when no answer comes within this time; progress for the
    /// request restarts the clock.
    pub timeout: Option<Duration>,
    /// Fails the request with -32001 after this time, whatever progress arrives.
    pub max_total_timeout: Option<Duration>,
    /// Sends the request under this id, verbatim, instead of a minted one.
    pub request_id: Option<RequestId>,
    /// Sends `notifications/cancelled` to the peer when the caller drops the request's future
    /// or it times out. On by default; callers turn it off for requests that must not be
    /// cancelled (MCP's `initialize` and `server/discover`).
    pub cancel_on_abandon: bool,
    /// Receives the peer's progress reports; the request id becomes the progress token.
    pub on_progress: Option<ProgressCallback>,
    /// Keeps `on_progress` receiving the peer's progress for this request's token after a
    /// successful answer, while the holder lives (see [`KeepProgress`]).
    pub keep_progress: Option<KeepProgress>,
    /// Extra HTTP headers, for HTTP transports (others ignore them).
    pub headers: Option<HeaderMap>,
    /// Resumption hooks, for the HTTP client transport. Setting them turns `cancel_on_abandon`
    /// off: an abandoned stream may be resumed.
    pub resumption: Option<Arc<dyn ResumptionHooks>>,
    /// Receives the request's id once assigned (see [`IdCallback`]).
    pub on_id: Option<IdCallback>,
    /// Members the request's params `_meta` is sent with (the text of a JSON object), after
    /// the progress token: written into raw params without a tree when they hold no `_meta`
    /// yet, else merged into theirs. For a caller that stamps the same members on every
    /// request (an MCP client's 2026-07-28 envelope): the params are copied once, with the
    /// token. The caller makes sure it holds no `progressToken` when `on_progress` is set.
    pub meta: Option<RawJson>,
}

impl Default for CallOptions {
    fn default() -> Self {
        Self {
            timeout: None,
            max_total_timeout: None,
            request_id: None,
            cancel_on_abandon: true,
            on_progress: None,
            keep_progress: None,
            headers: None,
            resumption: None,
            on_id: None,
            meta: None,
        }
    }
}

impl CallOptions {
    /// The defaults: no timeouts, a minted id, cancel on abandon.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the per-request timeout (restarted by progress).
    #[must_use]
    pub fn timeout(mut self, d: Duration) -> Self {
        self.timeout = Some(d);
        self
    }

    /// Sets the maximum total time, which progress does not extend.
    #[must_use]
    pub fn max_total_timeout(mut self, d: Duration) -> Self {
        self.max_total_timeout = Some(d);
        self
    }

    /// Sends the request under this id.
    #[must_use]
    pub fn request_id(mut self, id: impl Into<RequestId>) -> Self {
        self.request_id = Some(id.into());
        self
    }

    /// Whether dropping the request's future (or a timeout) sends `notifications/cancelled`.
    #[must_use]
    pub fn cancel_on_abandon(mut self, on: bool) -> Self {
        self.cancel_on_abandon = on;
        self
    }

    /// Whether the request will be cancelled on abandon, all options considered.
    pub fn cancels_on_abandon(&self) -> bool {
        self.cancel_on_abandon && self.resumption.is_none()
    }

    /// Receives the peer's progress reports for this request.
    #[must_use]
    pub fn on_progress(mut self, f: impl Fn(Progress) + Send + Sync + 'static) -> Self {
        self.on_progress = Some(Arc::new(f));
        self
    }

    /// Receives the request's id once the dispatcher has assigned it (see [`IdCallback`]).
    #[must_use]
    pub fn on_id(mut self, f: impl Fn(&RequestId) + Send + Sync + 'static) -> Self {
        self.on_id = Some(Arc::new(f));
        self
    }

    /// Keeps the progress route open after a successful answer while `keep` lives.
    #[must_use]
    pub fn keep_progress(mut self, keep: KeepProgress) -> Self {
        self.keep_progress = Some(keep);
        self
    }

    /// Adds an HTTP header (for HTTP transports).
    #[must_use]
    pub fn header(mut self, name: HeaderName, value: HeaderValue) -> Self {
        self.headers
            .get_or_insert_with(HeaderMap::new)
            .append(name, value);
        self
    }

    /// Sets the resumption hooks (for the HTTP client transport).
    #[must_use]
    pub fn resumption(mut self, hooks: Arc<dyn ResumptionHooks>) -> Self {
        self.resumption = Some(hooks);
        self
    }
}

impl fmt::Debug for CallOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallOptions")
            .field("timeout", &self.timeout)
            .field("max_total_timeout", &self.max_total_timeout)
            .field("request_id", &self.request_id)
            .field("cancel_on_abandon", &self.cancel_on_abandon)
            .field("on_progress", &self.on_progress.is_some())
            .field("keep_progress", &self.keep_progress)
            .field("headers", &self.headers)
            .field("resumption", &self.resumption.is_some())
            .field("on_id", &self.on_id.is_some())
            .field("meta", &self.meta)
            .finish()
    }
}
