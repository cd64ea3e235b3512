//! [`HttpConfig`]: the settings of the Streamable HTTP server, each with a default.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use super::event_store::{EventStore, InMemoryEventStore};
use super::legacy::session::{InMemorySessionStore, SessionStore};

/// The default MCP endpoint path.
pub const DEFAULT_PATH: &str = "/mcp";
/// The default path of the 2024-11-05 HTTP+SSE stream ([`HttpConfig::legacy_sse`](field@HttpConfig::legacy_sse)).
pub const DEFAULT_LEGACY_SSE_PATH: &str = "/sse";
/// The default path the 2024-11-05 HTTP+SSE clients POST their messages to.
pub const DEFAULT_LEGACY_MESSAGES_PATH: &str = "/messages";
/// The default bound on a request body: 4 MiB.
pub const DEFAULT_MAX_BODY_SIZE: usize = 4 * 1024 * 1024;
/// The default bound on live handshake-era sessions.
pub const DEFAULT_MAX_SESSIONS: usize = 4096;
/// The default idle timeout of a handshake-era session.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(30 * 60);
/// The default time a session may stay uninitialized after `initialize` was answered.
pub const DEFAULT_INIT_TIMEOUT: Duration = Duration::from_secs(30);
/// The default time a session may go without a request (or a GET) after the `initialize`
/// that created it.
pub const DEFAULT_FIRST_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// The default bound on live handshake-era sessions of one principal (with a
/// [`CallerId`](ferromcp_server::CallerId), e.g. a verified token).
pub const DEFAULT_MAX_SESSIONS_PER_PRINCIPAL: usize = 64;
/// The default bound on live handshake-era sessions of one peer address (requests without a
/// [`CallerId`](ferromcp_server::CallerId)).
pub const DEFAULT_MAX_SESSIONS_PER_PEER: usize = 64;

/// The address of the TCP peer a request came from, in the request's extensions (the
/// kernel's type: its request spans read it for `client.address`).
///
/// [`HttpServer`](super::HttpServer) records it on every request; a service mounted elsewhere
/// (axum, hyper) gets it only if the application inserts it, e.g. from axum's `ConnectInfo`.
/// It keys [`HttpConfig::max_sessions_per_peer`] for requests without a
/// [`CallerId`](ferromcp_server::CallerId): IPv4 addresses one by one, IPv6 addresses by
/// their /64 prefix (one host usually holds a whole /64). Requests without it all count as
/// one peer (so an unknown peer cannot escape the cap by being unknown).
pub use ferromcp_server::PeerAddr;
/// The default bound on requests in flight in one session.
pub const DEFAULT_MAX_IN_FLIGHT: usize = 64;
/// The default bound on inbound messages queued for one session's dispatcher.
pub const DEFAULT_INBOUND_QUEUE: usize = 256;
/// The default bound on SSE frames queued for one stream; a stream whose client reads
/// slower than this is closed (its events stay in the event store for resumption).
pub const DEFAULT_STREAM_QUEUE: usize = 256;
/// The default keep-alive comment interval on SSE streams.
pub const DEFAULT_KEEP_ALIVE: Duration = Duration::from_secs(15);
/// How long a 2026-07-28 request may run before its response turns into an SSE stream
/// (when it has emitted nothing).
pub const DEFAULT_SSE_DEFERRAL: Duration = Duration::from_secs(1);
/// The `retry` (milliseconds) sent in priming events.
pub const DEFAULT_RETRY_MS: u64 = 1000;
/// The default time a request body may take to arrive in full: 30 seconds.
pub const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(30);
/// The default time a request head may take to arrive, counted from the connection's opening
/// or the end of its previous exchange (so an idle kept-alive connection is closed too): 30
/// seconds.
pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(30);

/// The settings of the Streamable HTTP server.
///
/// ```
/// use ferromcp_http_server::HttpConfig;
///
/// let config = HttpConfig::default()
///     .path("/api/mcp")
///     .json_response(true)
///     .allowed_hosts(["example.com"])
///     .max_body_size(1 << 20);
/// assert_eq!(config.path, "/api/mcp");
/// ```
#[derive(Clone)]
#[non_exhaustive]
pub struct HttpConfig {
    /// The MCP endpoint path used by [`serve_http`](super::serve_http) (default `/mcp`); the
    /// service itself answers on whatever path it is mounted at.
    pub path: String,
    /// Handshake era without sessions: every POST is served on its own, there is no GET
    /// stream and no server→client request (default `false`).
    pub stateless: bool,
    /// Answer requests with one JSON object, never an SSE stream (default `false`).
    pub json_response: bool,
    /// Allowed `Host` header values (DNS-rebinding protection; 421 otherwise). `host:*`
    /// matches any port. `None` (the default) means the loopback names: `localhost`,
    /// `127.0.0.1` and `[::1]` on the bound port for [`HttpServer`](super::HttpServer) and
    /// [`serve_http`](super::serve_http) (whatever address they bind), on any port for a
    /// mounted [`McpHttpService`](super::McpHttpService), which does not know its port. A
    /// public deployment names its hosts, or calls [`disable_host_checks`](Self::disable_host_checks).
    pub allowed_hosts: Option<Vec<String>>,
    /// Allowed `Origin` header values (403 otherwise; a missing `Origin` is always allowed).
    /// `scheme://host:*` matches any port. `None` (the default) means the loopback origins
    /// (`http://localhost`, `http://127.0.0.1`, `http://[::1]`), on the bound port or, for a
    /// mounted service, any port.
    pub allowed_origins: Option<Vec<String>>,
    /// DNS-rebinding protection for the lists left unset (default `true`): `false` (set by
    /// [`disable_host_checks`](Self::disable_host_checks)) accepts any `Host` or `Origin` a
    /// list does not name, and the service logs a warning when it is made.
    pub host_checks: bool,
    /// The largest request body, in bytes (default 4 MiB; 413 above it).
    pub max_body_size: usize,
    /// The deepest JSON nesting accepted in a body (default 128).
    pub max_json_depth: usize,
    /// The most live handshake-era sessions (default 4096; 503 above it).
    pub max_sessions: usize,
    /// The most live handshake-era sessions of one principal, the request's
    /// [`CallerId`](ferromcp_server::CallerId) (with `auth`: the verified token's issuer,
    /// subject and client) (default [`DEFAULT_MAX_SESSIONS_PER_PRINCIPAL`]; 429 above it).
    pub max_sessions_per_principal: usize,
    /// The most live handshake-era sessions of one peer, for requests without a
    /// [`CallerId`](ferromcp_server::CallerId): keyed by [`PeerAddr`] (requests without one
    /// share one count) (default [`DEFAULT_MAX_SESSIONS_PER_PEER`]; 429 above it). Behind a
    /// reverse proxy every client has the proxy's address: raise it, or authenticate.
    pub max_sessions_per_peer: usize,
    /// A session nobody used for this long is ended (default 30 minutes).
    pub idle_timeout: Duration,
    /// A session that is still not initialized this long after creation is ended (default
    /// 30 seconds).
    pub init_timeout: Duration,
    /// A session that got no request (other than its `initialize`; notifications do not
    /// count) and no GET this long after creation is ended (default
    /// [`DEFAULT_FIRST_REQUEST_TIMEOUT`]), so sessions opened and left unused do not hold
    /// their slot for the whole idle timeout.
    pub first_request_timeout: Duration,
    /// The most requests in flight in one session (default 64; 429 above it).
    pub max_in_flight: usize,
    /// The most inbound messages queued for one session (default 256; 503 above it).
    pub inbound_queue: usize,
    /// The most SSE frames queued for one stream (default 256).
    pub stream_queue: usize,
    /// The keep-alive comment interval on SSE streams (default 15 s).
    pub keep_alive: Duration,
    /// How long a 2026-07-28 request may run silently before its response becomes an SSE
    /// stream (default 1 s).
    pub sse_deferral: Duration,
    /// The `retry` field of priming events, in milliseconds (default 1000).
    pub retry_ms: u64,
    /// The longest a request body may take to arrive in full (default 30 s): a body that
    /// stalls is cut off with 408 and the connection closed.
    pub body_timeout: Duration,
    /// The longest a request head may take to arrive, the wait for the next request on an
    /// idle kept-alive connection included (default 30 s; the connection is closed).
    /// Applied by [`HttpServer`](super::HttpServer); a mounted service's server sets its own.
    pub header_read_timeout: Duration,
    /// The most connections open at once (default 1024; one more is answered 503 and
    /// closed). Applied by [`HttpServer`](super::HttpServer) as it accepts.
    pub max_connections: usize,
    /// The most connections open at once from one peer address (default 256; IPv6 by /64).
    /// Behind a reverse proxy every connection comes from the proxy: raise it to
    /// [`max_connections`](Self::max_connections) there.
    pub max_connections_per_peer: usize,
    /// The reverse proxies whose `X-Forwarded-For` is believed (default none): for a
    /// request from one of them, [`PeerAddr`] is the client that header names (see
    /// [`client_addr`](Self::client_addr)), so the per-peer session caps count clients, not
    /// the proxy. Connections are counted before any header is read: the per-connection cap
    /// still sees the proxy (raise [`max_connections_per_peer`](Self::max_connections_per_peer)).
    pub trusted_proxies: Vec<crate::IpRange>,
    /// Where handshake-era SSE events are kept for resumption (`None`: not resumable).
    /// Default: an [`InMemoryEventStore`].
    pub event_store: Option<Arc<dyn EventStore>>,
    /// Where live handshake-era sessions are kept. Default: an [`InMemorySessionStore`].
    pub session_store: Arc<dyn SessionStore>,
    /// Check `Mcp-Param-*` headers of `tools/call` against the tool's `x-mcp-header`
    /// annotations, as the server's tool registry holds them (default `true`; see
    /// [`ToolHeaders`](ferromcp_server::tool_headers::ToolHeaders)).
    pub check_param_headers: bool,
    /// OAuth 2.1 resource-server checks on every request (feature `auth`; `None`: off, the
    /// default). See [`crate::auth`].
    #[cfg(feature = "auth")]
    pub auth: Option<Arc<crate::auth::AuthConfig>>,
    /// Also serve the 2024-11-05 HTTP+SSE transport (default `false`): a GET on
    /// [`legacy_sse_path`](Self::legacy_sse_path) opens a session whose stream first names
    /// [`legacy_messages_path`](Self::legacy_messages_path) (with a `sessionId` query
    /// parameter), where the client POSTs its messages. Same checks and limits as
    /// Streamable HTTP: Host/Origin, auth, body size and time, the session caps (a GET is a
    /// session), the stream queue and keep-alive; a session ends when its stream closes.
    pub legacy_sse: bool,
    /// The path of the 2024-11-05 HTTP+SSE stream (default [`DEFAULT_LEGACY_SSE_PATH`]).
    pub legacy_sse_path: String,
    /// The path 2024-11-05 HTTP+SSE clients POST to (default
    /// [`DEFAULT_LEGACY_MESSAGES_PATH`]).
    pub legacy_messages_path: String,
}

impl Default for HttpConfig {
    fn default() -> Self {
        Self {
            path: DEFAULT_PATH.to_owned(),
            stateless: false,
            json_response: false,
            allowed_hosts: None,
            allowed_origins: None,
            host_checks: true,
            max_body_size: DEFAULT_MAX_BODY_SIZE,
            max_json_depth: ferromcp_types::jsonrpc::DEFAULT_MAX_DEPTH,
            max_sessions: DEFAULT_MAX_SESSIONS,
            max_sessions_per_principal: DEFAULT_MAX_SESSIONS_PER_PRINCIPAL,
            max_sessions_per_peer: DEFAULT_MAX_SESSIONS_PER_PEER,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            init_timeout: DEFAULT_INIT_TIMEOUT,
            first_request_timeout: DEFAULT_FIRST_REQUEST_TIMEOUT,
            max_in_flight: DEFAULT_MAX_IN_FLIGHT,
            inbound_queue: DEFAULT_INBOUND_QUEUE,
            stream_queue: DEFAULT_STREAM_QUEUE,
            keep_alive: DEFAULT_KEEP_ALIVE,
            sse_deferral: DEFAULT_SSE_DEFERRAL,
            retry_ms: DEFAULT_RETRY_MS,
            body_timeout: DEFAULT_BODY_TIMEOUT,
            header_read_timeout: DEFAULT_HEADER_READ_TIMEOUT,
            max_connections: super::conn_limit::DEFAULT_MAX_CONNECTIONS,
            max_connections_per_peer: super::conn_limit::DEFAULT_MAX_CONNECTIONS_PER_PEER,
            trusted_proxies: Vec::new(),
            event_store: Some(Arc::new(InMemoryEventStore::default())),
            session_store: Arc::new(InMemorySessionStore::default()),
            check_param_headers: true,
            #[cfg(feature = "auth")]
            auth: None,
            legacy_sse: false,
            legacy_sse_path: DEFAULT_LEGACY_SSE_PATH.to_owned(),
            legacy_messages_path: DEFAULT_LEGACY_MESSAGES_PATH.to_owned(),
        }
    }
}

macro_rules! setter {
    ($(#[$doc:meta] $name:ident: $ty:ty),* $(,)?) => {$(
        #[$doc]
        #[must_use]
        pub fn $name(mut self, value: $ty) -> Self {
            self.$name = value;
            self
        }
    )*};
}

impl HttpConfig {
    /// Sets the endpoint path used by [`serve_http`](super::serve_http).
    #[must_use]
    pub fn path(mut self, path: impl Into<String>) -> Self {
        self.path = path.into();
        self
    }

    /// Allows these `Host` values (replacing the list; turns the check on).
    #[must_use]
    pub fn allowed_hosts<I: IntoIterator<Item = S>, S: Into<String>>(mut self, hosts: I) -> Self {
        self.allowed_hosts = Some(hosts.into_iter().map(Into::into).collect());
        self
    }

    /// Allows these `Origin` values (replacing the list; turns the check on).
    #[must_use]
    pub fn allowed_origins<I: IntoIterator<Item = S>, S: Into<String>>(
        mut self,
        origins: I,
    ) -> Self {
        self.allowed_origins = Some(origins.into_iter().map(Into::into).collect());
        self
    }

    /// Turns DNS-rebinding protection (the `Host` and `Origin` checks) off: for a server
    /// behind a proxy that checks them. Clears both allowlists (a list set afterwards is
    /// checked again); the service logs a warning when it is made with the checks off.
    #[must_use]
    pub fn disable_host_checks(mut self) -> Self {
        self.allowed_hosts = None;
        self.allowed_origins = None;
        self.host_checks = false;
        self
    }

    /// Sets the event store (`None`: streams are not resumable).
    #[must_use]
    pub fn event_store(mut self, store: Option<Arc<dyn EventStore>>) -> Self {
        self.event_store = store;
        self
    }

    /// Protects the endpoint as an OAuth 2.1 resource server (feature `auth`); see
    /// [`crate::auth`]. [`serve_http`](super::serve_http) also serves the RFC 9728 metadata.
    #[cfg(feature = "auth")]
    #[must_use]
    pub fn auth(mut self, auth: crate::auth::AuthConfig) -> Self {
        self.auth = Some(Arc::new(auth));
        self
    }

    /// Sets the session store.
    #[must_use]
    pub fn session_store(mut self, store: Arc<dyn SessionStore>) -> Self {
        self.session_store = store;
        self
    }

    /// Sets the paths of the 2024-11-05 HTTP+SSE transport: the stream's and the one its
    /// clients POST to (see [`legacy_sse`](field@Self::legacy_sse)).
    #[must_use]
    pub fn legacy_sse_paths(mut self, sse: impl Into<String>, messages: impl Into<String>) -> Self {
        self.legacy_sse_path = sse.into();
        self.legacy_messages_path = messages.into();
        self
    }

    /// Whether `path` is one of the 2024-11-05 HTTP+SSE paths served (never when
    /// [`legacy_sse`](field@Self::legacy_sse) is off): for a router in front of the service.
    pub fn is_legacy_sse_path(&self, path: &str) -> bool {
        self.legacy_sse && (path == self.legacy_sse_path || path == self.legacy_messages_path)
    }

    setter! {
        /// Serves the 2024-11-05 HTTP+SSE transport too (see the field).
        legacy_sse: bool,
        /// Sets stateless mode.
        stateless: bool,
        /// Sets JSON-response mode.
        json_response: bool,
        /// Sets the body limit, in bytes.
        max_body_size: usize,
        /// Sets the JSON nesting limit.
        max_json_depth: usize,
        /// Sets the session cap.
        max_sessions: usize,
        /// Sets the session cap per principal.
        max_sessions_per_principal: usize,
        /// Sets the session cap per peer address (requests without a principal).
        max_sessions_per_peer: usize,
        /// Sets the idle timeout of sessions.
        idle_timeout: Duration,
        /// Sets the pre-initialize timeout of sessions.
        init_timeout: Duration,
        /// Sets the time a session may go unused after its `initialize`.
        first_request_timeout: Duration,
        /// Sets the per-session in-flight cap.
        max_in_flight: usize,
        /// Sets the per-session inbound queue bound.
        inbound_queue: usize,
        /// Sets the per-stream SSE queue bound.
        stream_queue: usize,
        /// Sets the keep-alive comment interval.
        keep_alive: Duration,
        /// Sets the SSE deferral of 2026-07-28 responses.
        sse_deferral: Duration,
        /// Sets the `retry` of priming events, in milliseconds.
        retry_ms: u64,
        /// Sets whether `Mcp-Param-*` headers are checked.
        check_param_headers: bool,
        /// Sets the time a request body may take to arrive.
        body_timeout: Duration,
        /// Sets the time a request head may take to arrive.
        header_read_timeout: Duration,
        /// Sets the cap on open connections.
        max_connections: usize,
        /// Sets the cap on open connections per peer address.
        max_connections_per_peer: usize,
    }

    /// Believes `X-Forwarded-For` from these proxies (replacing the list); see
    /// [`trusted_proxies`](field@Self::trusted_proxies).
    #[must_use]
    pub fn trusted_proxies(mut self, proxies: impl IntoIterator<Item = crate::IpRange>) -> Self {
        self.trusted_proxies = proxies.into_iter().collect();
        self
    }

    /// The client of a request whose TCP peer is `peer`: `peer` itself, unless it is one of
    /// the [`trusted_proxies`](field@Self::trusted_proxies); then the rightmost
    /// `X-Forwarded-For` entry that is not a trusted proxy (port 0). A header that cannot
    /// be read, or names only proxies, leaves `peer`. An application that mounts the
    /// service behind its own listener calls this to fill [`PeerAddr`]; the service itself
    /// applies it to the `PeerAddr` it finds.
    pub fn client_addr(
        &self,
        peer: std::net::SocketAddr,
        headers: &http::HeaderMap,
    ) -> std::net::SocketAddr {
        super::forwarded::client_addr(&self.trusted_proxies, peer, headers)
    }

    /// The settings a server bound to `addr` uses: the `Host`/`Origin` allowlists left unset
    /// become the loopback names on `addr`'s port (a wider address without lists logs a
    /// warning: it answers loopback names only). For an application with its own listener
    /// that serves an [`McpHttpService`](super::McpHttpService).
    #[must_use]
    pub fn bound_to(self, addr: std::net::SocketAddr) -> Self {
        super::security::secure_for_bind(self, addr)
    }
}

impl HttpConfig {
    #[cfg(feature = "auth")]
    fn auth_debug(&self) -> Option<&crate::auth::AuthConfig> {
        self.auth.as_deref()
    }

    #[cfg(not(feature = "auth"))]
    fn auth_debug(&self) -> Option<()> {
        None
    }
}

impl fmt::Debug for HttpConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpConfig")
            .field("path", &self.path)
            .field("stateless", &self.stateless)
            .field("json_response", &self.json_response)
            .field("allowed_hosts", &self.allowed_hosts)
            .field("allowed_origins", &self.allowed_origins)
            .field("host_checks", &self.host_checks)
            .field("max_body_size", &self.max_body_size)
            .field("max_sessions", &self.max_sessions)
            .field(
                "max_sessions_per_principal",
                &self.max_sessions_per_principal,
            )
            .field("max_sessions_per_peer", &self.max_sessions_per_peer)
            .field("idle_timeout", &self.idle_timeout)
            .field("init_timeout", &self.init_timeout)
            .field("first_request_timeout", &self.first_request_timeout)
            .field("max_in_flight", &self.max_in_flight)
            .field("body_timeout", &self.body_timeout)
            .field("max_connections", &self.max_connections)
            .field("max_connections_per_peer", &self.max_connections_per_peer)
            .field("trusted_proxies", &self.trusted_proxies)
            .field("event_store", &self.event_store.is_some())
            .field("auth", &self.auth_debug())
            .field("legacy_sse", &self.legacy_sse)
            .finish_non_exhaustive()
    }
}
