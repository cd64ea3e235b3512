//! The Streamable HTTP client transport (feature `http`, on by default), both eras.
//!
//! [`HttpTransport`] is a [`Transport`]: it runs a [`JsonRpcDispatcher`] over a message-stream
//! pair whose outbound side turns every message into a POST to the MCP endpoint and whose
//! inbound side carries what the responses hold.
//!
//! - **POSTs run concurrently** (up to [`HttpConfig::max_concurrent_requests`] requests in
//!   flight); each request's response, `application/json` or `text/event-stream`, feeds the
//!   dispatcher: progress, logs and server→client requests first, then the answer.
//!   Notifications and responses are posted in order (a 202 is expected; a 200 with a body is
//!   tolerated). An HTTP error carrying a JSON-RPC error is that request's error; an HTTP
//!   error without one is -32603 (`data.httpStatus`); a failed connection or a broken stream
//!   that cannot be resumed is -32000: callers never hang.
//! - **Headers**: `Accept: application/json, text/event-stream`, `Content-Type:
//!   application/json`, the static headers of the config (e.g. `Authorization`) and the
//!   call's own ([`CallOptions::header`](ferromcp_dispatch::CallOptions::header)) on every
//!   request. Handshake era: after `initialize`, `MCP-Protocol-Version: <negotiated>` and the
//!   `Mcp-Session-Id` the server assigned. Modern era (a request whose `params._meta` carries
//!   the 2026-07-28 envelope): `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` (`tools/call`
//!   and `prompts/get` name, `resources/read` uri) and `Mcp-Param-{Name}` for tool arguments
//!   annotated `x-mcp-header`, values in the `=?base64?…?=` sentinel when not plain ASCII.
//!   The transport learns the annotations from the modern `tools/list` results it carries,
//!   and drops tools whose annotations are invalid from those results (with a warning), as
//!   the spec requires of HTTP clients. A `tools/call` refused with -32020 (header mismatch:
//!   say, a tool called before it was listed) makes the transport read `tools/list` itself
//!   and retry the call once with the right headers.
//! - **Handshake-era sessions**: the standalone GET stream is opened after
//!   `notifications/initialized` (400, 404, 405 and 409 end it silently); SSE streams (POST or
//!   GET) that end before their answer are resumed with GET + `Last-Event-ID` after the
//!   server's `retry` delay, with backoff, [`HttpConfig::max_reconnect_attempts`] times in a
//!   row. [`ResumptionHooks`](ferromcp_dispatch::ResumptionHooks) on a call see every event
//!   id, and a call whose hooks give a token resumes that stream instead of posting.
//! - **Session expiry** (2025-11-25 "Session Management" 4): a 404 to a request that carried
//!   the session id makes the transport start a new session itself, replaying the original
//!   `initialize` params without a session id, sending `notifications/initialized`, reopening
//!   the GET stream, and then retrying the request once, transparently. The client above sees
//!   nothing, except that server-side session state (log level, subscriptions) is gone. When
//!   re-initializing fails, or is turned off ([`HttpConfig::reinitialize_on_expiry`]), the
//!   request fails with -32600 "Session terminated" (`data.sessionExpired: true`).
//! - **Cancellation**: in the handshake era the dispatcher's `notifications/cancelled` is
//!   posted and the request's response stream is dropped; in the modern era the
//!   notification is not sent: dropping the call aborts its POST, which closes the response
//!   stream, the 2026-07-28 cancellation signal.
//! - **Shutdown**: every POST and the GET stream are aborted, then the session is ended with
//!   DELETE (405 ignored), bounded by [`HttpConfig::shutdown_timeout`].
//! - **Connections**: hyper 1's HTTP/1.1 client through hyper-util's pooling client,
//!   `TCP_NODELAY` and TCP keep-alive on every connection, a connect timeout, idle connections
//!   reused; https through rustls with the webpki roots (feature `https`). Proxies (from the
//!   environment by default), more roots, client certificates, a read timeout and default
//!   headers are [`HttpClientConfig`] settings ([`HttpConfig::client`]; see [`config`]). A
//!   [`Connector`] of one's own ([`HttpClientConfig::connector`]) opens the connections
//!   instead of TCP: Unix sockets, tunnels, in-memory pipes (see [`connector`]).
//!   Redirects are not followed, so static headers never leak to another origin.
//! - **The 2024-11-05 HTTP+SSE transport**: chosen with
//!   [`HttpTransport::legacy_sse`](method@HttpTransport::legacy_sse), or reached by falling
//!   back when the `initialize` POST is refused with 400, 404 or 405
//!   ([`HttpConfig::legacy_sse_fallback`](field@HttpConfig::legacy_sse_fallback)); an
//!   `endpoint` on another origin is refused.
//! - **Bounds**: JSON bodies ([`HttpConfig::max_body_size`]), SSE events
//!   ([`HttpConfig::max_event_size`]), error bodies (64 KiB).
//!
//! ```no_run
//! # async fn demo() -> Result<(), ferromcp_client::ClientError> {
//! use ferromcp_client::{Client, HttpTransport};
//! use http::HeaderValue;
//!
//! let transport = HttpTransport::new("http://127.0.0.1:8000/mcp")?
//!     .header(http::header::AUTHORIZATION, HeaderValue::from_static("Bearer t0ken"));
//! let client = Client::builder().connect(transport).await?;
//! let tools = client.list_tools(None).await?;
//! # let _ = tools;
//! client.shutdown().await;
//! # Ok(()) }
//! ```

pub(crate) mod client;
pub mod config;
mod conn;
pub mod connector;
mod engine;
mod headers;
mod sse;
mod stream;

use std::fmt;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use ferromcp_dispatch::{
    BoxFuture, DispatcherConfig, Inbound, JsonRpcDispatcher, MessageSink, MessageSource,
    TransportClosed, TransportInfo, TransportKind, TransportMessage,
};
use http::{HeaderMap, HeaderName, HeaderValue, Uri};
use tokio::sync::mpsc;

use super::{Connected, Transport, TransportShutdown};
use crate::error::ClientError;
use engine::Engine;

#[cfg(feature = "https")]
pub use config::ClientIdentity;
pub use config::{
    DEFAULT_CONNECT_TIMEOUT, DEFAULT_POOL_IDLE_TIMEOUT, DEFAULT_READ_TIMEOUT,
    DEFAULT_TCP_KEEPALIVE, HttpClientConfig, ProxyConfig, ProxyRules, TlsConfig,
};
pub use connector::{Connector, Target};
pub use headers::{
    LAST_EVENT_ID, MCP_METHOD, MCP_NAME, MCP_PARAM_PREFIX, MCP_PROTOCOL_VERSION, MCP_SESSION_ID,
    encode_header_value,
};

/// The default bound on a JSON response body: 16 MiB.
pub const DEFAULT_MAX_BODY_SIZE: usize = 16 * 1024 * 1024;
/// The default bound on one SSE event: 4 MiB.
pub const DEFAULT_MAX_EVENT_SIZE: usize = ferromcp_dispatch::codec::DEFAULT_MAX_EVENT_SIZE;
/// The default bound on requests in flight at once: 64.
pub const DEFAULT_MAX_CONCURRENT_REQUESTS: usize = 64;
/// The default bound on SSE reconnections in a row: 5.
pub const DEFAULT_MAX_RECONNECT_ATTEMPTS: u32 = 5;
/// The default bound on the wait for a 2024-11-05 HTTP+SSE stream and its `endpoint` event:
/// 10 s.
pub const DEFAULT_LEGACY_ENDPOINT_TIMEOUT: Duration = Duration::from_secs(10);
/// The reconnection delay when the server sent no `retry`: 1 s.
pub const DEFAULT_RETRY: Duration = Duration::from_secs(1);

/// The settings of an [`HttpTransport`].
///
/// ```
/// use std::time::Duration;
/// use ferromcp_client::transport::http::HttpConfig;
///
/// let config = HttpConfig::default()
///     .connect_timeout(Duration::from_secs(3))
///     .read_timeout(Some(Duration::from_secs(120)))
///     .max_concurrent_requests(16)
///     .standalone_stream(false);
/// assert_eq!(config.max_concurrent_requests, 16);
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct HttpConfig {
    /// Headers sent on every request to the MCP endpoint (e.g. `Authorization`).
    pub headers: HeaderMap,
    /// How the HTTP client connects: proxies, TLS roots and client certificate, connect and
    /// read timeouts, default headers, pooling ([`HttpClientConfig`]).
    pub client: HttpClientConfig,
    /// The largest JSON response body, in bytes (default 16 MiB).
    pub max_body_size: usize,
    /// The largest SSE event, in bytes (default 4 MiB); larger events are dropped.
    pub max_event_size: usize,
    /// How many requests may be in flight at once (default 64); sending waits beyond that.
    /// `subscriptions/listen` streams do not count.
    pub max_concurrent_requests: usize,
    /// How many times in a row a broken SSE stream is reconnected (default 5).
    pub max_reconnect_attempts: u32,
    /// The reconnection delay when the server sent no `retry` (default 1 s); it doubles with
    /// every failed attempt.
    pub default_retry: Duration,
    /// The cap on the reconnection delay (default 30 s).
    pub max_retry: Duration,
    /// Open the standalone GET stream of a handshake-era session (default `true`).
    pub standalone_stream: bool,
    /// Start a new session when the server answers 404 to the session id, then retry the
    /// request (default `true`).
    pub reinitialize_on_expiry: bool,
    /// The bound on the session DELETE at shutdown (default 5 s).
    pub shutdown_timeout: Duration,
    /// The authorization hook ([`HttpTransport::auth`]).
    pub(crate) auth: Option<AuthHook>,
    /// Fall back to the 2024-11-05 HTTP+SSE transport when the `initialize` POST is refused
    /// with 400, 404 or 405 (default `true`; MCP 2025-03-26 "Backwards Compatibility"): GET
    /// the same URL and, when its stream's first event is `endpoint`, speak that transport.
    pub legacy_sse_fallback: bool,
    /// How long opening a 2024-11-05 HTTP+SSE stream may take, up to its `endpoint` event
    /// (default [`DEFAULT_LEGACY_ENDPOINT_TIMEOUT`]).
    pub legacy_endpoint_timeout: Duration,
}

/// At most this many challenges (401, or 403 `insufficient_scope`) are handed to the
/// [`AuthProvider`] per request, so a server that never accepts cannot loop the client.
pub const MAX_AUTH_RETRIES: u32 = 3;

/// Supplies the `Authorization` header and answers the server's challenges: the OAuth
/// client (`oauth` feature, `oauth::OAuthProvider`) or an application's own.
pub trait AuthProvider: Send + Sync {
    /// The `Authorization` value for the next request, if any.
    fn authorization(&self) -> Option<HeaderValue>;
    /// Handles a 401, or a 403 (`www_authenticate` carries its `WWW-Authenticate`):
    /// `true` when new credentials are ready and the request should be retried.
    fn on_challenge<'a>(
        &'a self,
        status: http::StatusCode,
        www_authenticate: Option<&'a str>,
    ) -> BoxFuture<'a, bool>;

    /// Runs before every request (POSTs, the GET streams, the session DELETE): a provider
    /// refreshes credentials that are about to expire here. The default does nothing.
    fn prepare(&self) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }

    /// Puts the credentials of one request, `method` on `uri`, into `headers`. The default
    /// sets `Authorization` from [`authorization`](Self::authorization) (marked sensitive); a
    /// provider that binds tokens to requests (DPoP, RFC 9449) adds a fresh proof here.
    fn apply(&self, method: &http::Method, uri: &Uri, headers: &mut HeaderMap) {
        let _ = (method, uri);
        if let Some(mut v) = self.authorization() {
            v.set_sensitive(true);
            headers.insert(http::header::AUTHORIZATION, v);
        }
    }

    /// Handles a 401 or 403 with all of the response's headers (a DPoP server's
    /// `DPoP-Nonce`, several `WWW-Authenticate` challenges). The default hands the first
    /// `WWW-Authenticate` to [`on_challenge`](Self::on_challenge).
    fn on_challenge_response<'a>(
        &'a self,
        status: http::StatusCode,
        headers: &'a HeaderMap,
    ) -> BoxFuture<'a, bool> {
        let www = headers
            .get(http::header::WWW_AUTHENTICATE)
            .and_then(|v| v.to_str().ok());
        self.on_challenge(status, www)
    }

    /// Sees the status and headers of every response (a server may hand out a new DPoP
    /// nonce on any of them). The default ignores them.
    fn observe(&self, status: http::StatusCode, headers: &HeaderMap) {
        let _ = (status, headers);
    }
}

/// An [`AuthProvider`] in the config (its `Debug` hides the provider).
#[derive(Clone)]
pub(crate) struct AuthHook(pub(crate) Arc<dyn AuthProvider>);

impl fmt::Debug for AuthHook {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("AuthProvider")
    }
}

impl Default for HttpConfig {
    fn default() -> Self {
        Self {
            headers: HeaderMap::new(),
            client: HttpClientConfig::default(),
            max_body_size: DEFAULT_MAX_BODY_SIZE,
            max_event_size: DEFAULT_MAX_EVENT_SIZE,
            max_concurrent_requests: DEFAULT_MAX_CONCURRENT_REQUESTS,
            max_reconnect_attempts: DEFAULT_MAX_RECONNECT_ATTEMPTS,
            default_retry: DEFAULT_RETRY,
            max_retry: Duration::from_secs(30),
            standalone_stream: true,
            reinitialize_on_expiry: true,
            shutdown_timeout: Duration::from_secs(5),
            auth: None,
            legacy_sse_fallback: true,
            legacy_endpoint_timeout: DEFAULT_LEGACY_ENDPOINT_TIMEOUT,
        }
    }
}

macro_rules! setters {
    ($($(#[$doc:meta])* $name:ident: $ty:ty;)*) => {$(
        $(#[$doc])*
        #[must_use]
        pub fn $name(mut self, value: $ty) -> Self {
            self.$name = value;
            self
        }
    )*};
}

use config::sensitive as guard;

impl HttpConfig {
    /// Adds a header sent on every request (credentials are marked sensitive).
    #[must_use]
    pub fn header(mut self, name: HeaderName, value: HeaderValue) -> Self {
        let value = guard(&name, value);
        self.headers.append(name, value);
        self
    }

    /// Sets how the HTTP client connects ([`HttpClientConfig`]).
    #[must_use]
    pub fn client(mut self, value: HttpClientConfig) -> Self {
        self.client = value;
        self
    }

    /// Sets the connect timeout ([`HttpClientConfig::connect_timeout`]).
    #[must_use]
    pub fn connect_timeout(mut self, value: Duration) -> Self {
        self.client.connect_timeout = value;
        self
    }

    /// Sets the read timeout ([`HttpClientConfig::read_timeout`]).
    #[must_use]
    pub fn read_timeout(mut self, value: Option<Duration>) -> Self {
        self.client.read_timeout = value;
        self
    }

    /// Sets the idle timeout of pooled connections.
    #[must_use]
    pub fn pool_idle_timeout(mut self, value: Duration) -> Self {
        self.client.pool_idle_timeout = value;
        self
    }

    /// Sets the TCP keep-alive time.
    #[must_use]
    pub fn tcp_keepalive(mut self, value: Duration) -> Self {
        self.client.tcp_keepalive = value;
        self
    }

    setters! {
        /// Sets the JSON body bound.
        max_body_size: usize;
        /// Sets the SSE event bound.
        max_event_size: usize;
        /// Sets the bound on requests in flight.
        max_concurrent_requests: usize;
        /// Sets the bound on reconnections in a row.
        max_reconnect_attempts: u32;
        /// Sets the reconnection delay used without a server `retry`.
        default_retry: Duration;
        /// Sets the cap on the reconnection delay.
        max_retry: Duration;
        /// Sets whether the standalone GET stream is opened.
        standalone_stream: bool;
        /// Sets whether an expired session is re-initialized.
        reinitialize_on_expiry: bool;
        /// Sets the bound on the shutdown DELETE.
        shutdown_timeout: Duration;
        /// Sets whether a refused `initialize` POST falls back to HTTP+SSE.
        legacy_sse_fallback: bool;
        /// Sets the bound on opening an HTTP+SSE stream, up to its `endpoint` event.
        legacy_endpoint_timeout: Duration;
    }
}

/// A Streamable HTTP connection to an MCP endpoint (see the [module docs](self)).
///
/// ```
/// use ferromcp_client::HttpTransport;
/// use ferromcp_client::transport::http::HttpConfig;
///
/// let t = HttpTransport::new("http://127.0.0.1:8000/mcp")
///     .unwrap()
///     .bearer_token("t0ken")
///     .unwrap()
///     .config(HttpConfig::default().max_concurrent_requests(8));
/// assert_eq!(t.url().path(), "/mcp");
/// assert!(HttpTransport::new("ftp://example.com").is_err());
/// ```
#[derive(Clone)]
pub struct HttpTransport {
    uri: Uri,
    config: HttpConfig,
    /// Speak the 2024-11-05 HTTP+SSE transport from the start.
    legacy_sse: bool,
}

impl fmt::Debug for HttpTransport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpTransport")
            .field("url", &self.uri)
            .field("headers", &self.config.headers.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

fn invalid(text: String) -> ClientError {
    ClientError::Transport(io::Error::new(io::ErrorKind::InvalidInput, text))
}

impl HttpTransport {
    /// A transport to the MCP endpoint at `url` (`http://` or `https://`), default settings.
    pub fn new(url: impl AsRef<str>) -> Result<Self, ClientError> {
        let url = url.as_ref();
        let uri: Uri = url
            .parse()
            .map_err(|e| invalid(format!("invalid MCP endpoint URL {url:?}: {e}")))?;
        match (uri.scheme_str(), uri.host()) {
            (Some("http" | "https"), Some(_)) => {}
            _ => {
                return Err(invalid(format!(
                    "the MCP endpoint URL {url:?} is not an http:// or https:// URL"
                )));
            }
        }
        Ok(Self {
            uri,
            config: HttpConfig::default(),
            legacy_sse: false,
        })
    }

    /// A transport speaking the 2024-11-05 HTTP+SSE transport to the stream at `url` (e.g.
    /// `http://127.0.0.1:8000/sse`): GET opens the stream, whose `endpoint` event names where
    /// messages are POSTed (on the same origin, or the connection is refused). [`new`](Self::new)
    /// reaches such servers too, by falling back when its `initialize` POST is refused.
    ///
    /// ```
    /// let t = ferromcp_client::HttpTransport::legacy_sse("http://127.0.0.1:8000/sse").unwrap();
    /// assert_eq!(t.url().path(), "/sse");
    /// ```
    pub fn legacy_sse(url: impl AsRef<str>) -> Result<Self, ClientError> {
        let mut t = Self::new(url)?;
        t.legacy_sse = true;
        Ok(t)
    }

    /// Replaces the settings (static headers added before are kept).
    #[must_use]
    pub fn config(mut self, config: HttpConfig) -> Self {
        let mut headers = std::mem::take(&mut self.config.headers);
        for (k, v) in &config.headers {
            headers.append(k, v.clone());
        }
        self.config = config;
        self.config.headers = headers;
        self
    }

    /// Adds a header sent on every request (credentials are marked sensitive).
    #[must_use]
    pub fn header(mut self, name: HeaderName, value: HeaderValue) -> Self {
        let value = guard(&name, value);
        self.config.headers.append(name, value);
        self
    }

    /// Sends `Authorization: Bearer <token>` on every request (marked sensitive, so it is not
    /// printed in debug output).
    pub fn bearer_token(self, token: &str) -> Result<Self, ClientError> {
        let value = HeaderValue::from_str(&format!("Bearer {token}"))
            .map_err(|_| invalid("the bearer token is not a valid header value".into()))?;
        Ok(self.header(http::header::AUTHORIZATION, value))
    }

    /// Takes the credentials from `provider` on every request (POSTs, GET streams, the session
    /// DELETE), and hands it a 401 or 403 before retrying that request (at most
    /// [`MAX_AUTH_RETRIES`] times per request).
    #[must_use]
    pub fn auth(mut self, provider: Arc<dyn AuthProvider>) -> Self {
        self.config.auth = Some(AuthHook(provider));
        self
    }

    /// The endpoint URL.
    pub fn url(&self) -> &Uri {
        &self.uri
    }
}

impl Transport for HttpTransport {
    fn open(self) -> BoxFuture<'static, Result<Connected, ClientError>> {
        Box::pin(async move {
            let scheme = self.uri.scheme_str().unwrap_or("http").to_owned();
            let host = self.uri.host().unwrap_or_default().to_owned();
            let port = self
                .uri
                .port_u16()
                .unwrap_or(if scheme == "https" { 443 } else { 80 });
            #[cfg(not(feature = "https"))]
            if scheme == "https"
                && !self
                    .config
                    .client
                    .connector
                    .as_ref()
                    .is_some_and(connector::CustomConnector::handles_tls)
            {
                return Err(ClientError::Transport(io::Error::new(
                    io::ErrorKind::Unsupported,
                    "https URLs need ferromcp-client's `https` feature",
                )));
            }
            let client = client::build(
                &self.config.client,
                self.config.max_concurrent_requests.max(1),
            )?;
            let (tx, rx) = mpsc::channel(256);
            let engine = Arc::new(Engine::new(client, self.uri, self.config, tx));
            if self.legacy_sse {
                engine
                    .open_legacy_sse()
                    .await
                    .map_err(|e| ClientError::Transport(io::Error::other(e)))?;
            }
            let config = DispatcherConfig::default()
                .transport(TransportInfo::new(TransportKind::StreamableHttp, true));
            let dispatcher = JsonRpcDispatcher::new(
                HttpSource { rx },
                HttpSink {
                    engine: engine.clone(),
                },
                config,
            );
            #[cfg(feature = "otel")]
            let session_id: super::SessionIdSource = {
                // Weak: the spans must not keep the engine alive after shutdown.
                let engine = Arc::downgrade(&engine);
                Arc::new(move || {
                    let engine = engine.upgrade()?;
                    let session = engine::lock(&engine.session);
                    session.id.as_ref()?.to_str().ok().map(str::to_owned)
                })
            };
            let connected = Connected::new(Arc::new(dispatcher))
                .with_shutdown(HttpShutdown { engine })
                .with_network(super::NetworkPeer::http(host, port));
            #[cfg(feature = "otel")]
            let connected = connected.with_session_id(session_id);
            Ok(connected)
        })
    }
}

/// What the POST responses and the GET stream carried.
struct HttpSource {
    rx: mpsc::Receiver<Inbound>,
}

impl MessageSource for HttpSource {
    async fn recv(&mut self) -> Option<Inbound> {
        self.rx.recv().await
    }
}

/// Posts outbound messages.
struct HttpSink {
    engine: Arc<Engine>,
}

impl MessageSink for HttpSink {
    fn send(&self, msg: TransportMessage) -> BoxFuture<'_, Result<(), TransportClosed>> {
        Box::pin(async move {
            if self.engine.send(msg).await {
                Ok(())
            } else {
                Err(TransportClosed)
            }
        })
    }
}

struct HttpShutdown {
    engine: Arc<Engine>,
}

impl TransportShutdown for HttpShutdown {
    fn shutdown(&self) -> BoxFuture<'_, ()> {
        Box::pin(self.engine.shutdown())
    }
}
