//! What a mount connects to ([`Backend`]) and the per-backend limits.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use ferromcp_client::{ClientError, Connected, Lifecycle, StdioTransport, Transport};
use ferromcp_dispatch::BoxFuture;
use ferromcp_server::McpServer;
use ferromcp_types::Era;

/// The default bound on one forwarded request to a backend (restarted by the backend's
/// progress; see [`Backend::timeout`]).
pub const DEFAULT_BACKEND_TIMEOUT: Duration = Duration::from_secs(60);

/// The default bound on connecting to a backend and listing what it offers
/// ([`Backend::connect_timeout`]).
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// The default number of requests forwarded to one backend at a time
/// ([`Backend::max_in_flight`]); more are refused at once with -32603.
pub const DEFAULT_MAX_IN_FLIGHT_PER_BACKEND: usize = 64;

/// The default number of a backend's resources the front's clients may subscribe to
/// through it ([`Backend::max_subscriptions`]); more are refused with -32603.
pub const DEFAULT_MAX_SUBSCRIPTIONS_PER_BACKEND: usize = 256;

/// The default number of front tasks forwarded to one backend's tasks at a time
/// ([`Backend::max_tasks`]); one more task-run call is refused with -32603.
pub const DEFAULT_MAX_TASKS_PER_BACKEND: usize = 64;

/// The default number of reports (the backend's progress, its log records related to the
/// request, the status messages of a backend task it follows) one forwarded request may
/// queue for its front request ([`Backend::max_queued_reports`]); more are dropped.
pub const DEFAULT_MAX_QUEUED_REPORTS: usize = 64;

/// Which of a backend's tools the front serves (see [`Backend::tool_filter`]).
pub(crate) type ToolFilter = dyn Fn(&str) -> bool + Send + Sync;

type Open = dyn Fn() -> BoxFuture<'static, Result<Connected, ClientError>> + Send + Sync;

/// A server to mount: how to reach it, and its limits.
///
/// - [`Backend::in_process`]: an [`McpServer`] in this process (no transport; served at
///   2026-07-28, or in the era [`Backend::in_process_era`] names).
/// - [`Backend::command`] / [`Backend::stdio`]: a child process over stdio.
/// - `Backend::http` / `Backend::legacy_sse` (feature `http`): a Streamable HTTP endpoint, or
///   the 2024-11-05 HTTP+SSE transport.
/// - [`Backend::transport`]: any client [`Transport`], opened by a function.
///
/// A remote backend's era is negotiated ([`Lifecycle::Auto`]: 2026-07-28 when it speaks it,
/// the handshake otherwise).
#[derive(Clone)]
pub struct Backend {
    pub(crate) open: Arc<Open>,
    pub(crate) lifecycle: Lifecycle,
    pub(crate) timeout: Duration,
    pub(crate) connect_timeout: Duration,
    pub(crate) max_in_flight: usize,
    pub(crate) max_subscriptions: usize,
    pub(crate) max_tasks: usize,
    pub(crate) max_queued_reports: usize,
    pub(crate) tool_filter: Option<Arc<ToolFilter>>,
}

impl Backend {
    /// A backend reached through the transport `open` returns (called once per connection).
    pub fn transport<T, F>(open: F) -> Self
    where
        T: Transport,
        F: Fn() -> T + Send + Sync + 'static,
    {
        Self::from_open(Arc::new(move || open().open()), Lifecycle::Auto)
    }

    /// An [`McpServer`] in this process, served at 2026-07-28.
    pub fn in_process(server: &McpServer) -> Self {
        Self::in_process_era(server, Era::Modern)
    }

    /// An [`McpServer`] in this process, served in `era` (the handshake era runs
    /// `initialize` and sends live server→client requests).
    pub fn in_process_era(server: &McpServer, era: Era) -> Self {
        let server = server.clone();
        let lifecycle = match era {
            Era::Handshake => Lifecycle::Handshake,
            Era::Modern => Lifecycle::Modern,
        };
        let open = move || -> BoxFuture<'static, Result<Connected, ClientError>> {
            let dispatcher = server.server().in_process(era);
            Box::pin(async move { Ok(Connected::new(Arc::new(dispatcher))) })
        };
        Self::from_open(Arc::new(open), lifecycle)
    }

    /// A child process started as `program args…`, over stdio.
    pub fn command<I, A>(program: impl Into<String>, args: I) -> Self
    where
        I: IntoIterator<Item = A>,
        A: Into<String>,
    {
        let program = program.into();
        let args: Vec<String> = args.into_iter().map(Into::into).collect();
        Self::stdio(move || StdioTransport::new(&program).args(&args))
    }

    /// A child process over stdio, as `transport` builds it (environment, working directory,
    /// stderr…).
    pub fn stdio<F>(transport: F) -> Self
    where
        F: Fn() -> StdioTransport + Send + Sync + 'static,
    {
        Self::transport(transport)
    }

    /// A Streamable HTTP endpoint (it falls back to the 2024-11-05 HTTP+SSE transport when
    /// the server refuses the first POST). Fails when `url` is not an http(s) URL.
    #[cfg(feature = "http")]
    pub fn http(url: &str) -> Result<Self, ClientError> {
        let transport = ferromcp_client::HttpTransport::new(url)?;
        Ok(Self::transport(move || transport.clone()))
    }

    /// A server speaking the 2024-11-05 HTTP+SSE transport, whose event stream is at `url`.
    #[cfg(feature = "http")]
    pub fn legacy_sse(url: &str) -> Result<Self, ClientError> {
        let transport = ferromcp_client::HttpTransport::legacy_sse(url)?;
        Ok(Self::transport(move || transport.clone()))
    }

    fn from_open(open: Arc<Open>, lifecycle: Lifecycle) -> Self {
        Self {
            open,
            lifecycle,
            timeout: DEFAULT_BACKEND_TIMEOUT,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            max_in_flight: DEFAULT_MAX_IN_FLIGHT_PER_BACKEND,
            max_subscriptions: DEFAULT_MAX_SUBSCRIPTIONS_PER_BACKEND,
            max_tasks: DEFAULT_MAX_TASKS_PER_BACKEND,
            max_queued_reports: DEFAULT_MAX_QUEUED_REPORTS,
            tool_filter: None,
        }
    }

    /// The client lifecycle (default: [`Lifecycle::Auto`] for remote backends, the chosen era
    /// in-process).
    #[must_use]
    pub fn lifecycle(mut self, lifecycle: Lifecycle) -> Self {
        self.lifecycle = lifecycle;
        self
    }

    /// Bounds each forwarded request (default [`DEFAULT_BACKEND_TIMEOUT`]); the front answers
    /// a request that runs out with -32001.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Bounds connecting and listing at build (default [`DEFAULT_CONNECT_TIMEOUT`]).
    #[must_use]
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// How many requests may be forwarded to this backend at a time (default
    /// [`DEFAULT_MAX_IN_FLIGHT_PER_BACKEND`], at least 1); more are refused at once.
    #[must_use]
    pub fn max_in_flight(mut self, n: usize) -> Self {
        self.max_in_flight = n.max(1);
        self
    }
}

impl Backend {
    /// How many of this backend's resources the front's clients may subscribe to through it,
    /// all clients together (default [`DEFAULT_MAX_SUBSCRIPTIONS_PER_BACKEND`]); one more
    /// subscription is refused. Each is a `resources/subscribe` (handshake era) or a
    /// `subscriptions/listen` stream (2026-07-28) to the backend, kept while it lives.
    #[must_use]
    pub fn max_subscriptions(mut self, n: usize) -> Self {
        self.max_subscriptions = n;
        self
    }

    /// How many backend tasks the front's tasks may follow at a time on this backend, all
    /// clients together (default [`DEFAULT_MAX_TASKS_PER_BACKEND`]): a call of a task-capable
    /// backend tool run as a front task (or of a task-required one, however called), and a
    /// plain call a 2026-07-28 backend turns into a task, takes one until the backend task
    /// ends; one more is refused with -32603 naming the backend (a backend task already made
    /// is cancelled).
    #[must_use]
    pub fn max_tasks(mut self, n: usize) -> Self {
        self.max_tasks = n;
        self
    }

    /// How many reports one forwarded request may queue for its front request while the
    /// front sends the earlier ones (default [`DEFAULT_MAX_QUEUED_REPORTS`], at least 1): the
    /// backend's progress, its log records related to the request, and the status messages
    /// of a backend task the request follows. A backend that sends faster than the front's
    /// client takes them has the ones beyond dropped (each counted on a `debug` line of the
    /// `ferromcp_compose` target, with this backend's running total); the request itself
    /// goes on, and the progress the front reports still increases.
    #[must_use]
    pub fn max_queued_reports(mut self, n: usize) -> Self {
        self.max_queued_reports = n.max(1);
        self
    }

    /// Serves only the backend tools whose (backend) name `keep` accepts, now and after the
    /// backend's list changes; the others are neither listed nor callable through the front.
    #[must_use]
    pub fn tool_filter(mut self, keep: impl Fn(&str) -> bool + Send + Sync + 'static) -> Self {
        self.tool_filter = Some(Arc::new(keep));
        self
    }
}

impl fmt::Debug for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Backend")
            .field("lifecycle", &self.lifecycle)
            .field("timeout", &self.timeout)
            .field("max_in_flight", &self.max_in_flight)
            .field("max_queued_reports", &self.max_queued_reports)
            .finish_non_exhaustive()
    }
}
