//! The Streamable HTTP server transport of ferromcp: both eras of MCP on one endpoint, for a
//! [`Server`] built with `ferromcp-server` (a stdio-only server does not compile this crate).
//!
//! - [`McpHttpService`]: a tower service; mount it in axum
//!   (`Router::new().route_service("/mcp", service)`) or any tower/hyper stack.
//! - [`serve_http`]: the one-liner; [`HttpServer`] binds first (port 0 in tests) and tells the
//!   local address. Every accepted connection gets `TCP_NODELAY` and keep-alive; connections
//!   are capped per peer and in total ([`ConnectionLimits`]), and a request head or body that
//!   stalls is cut off.
//! - [`HttpConfig`]: path, stateless and JSON-response modes, Host/Origin allowlists (loopback
//!   names only by default, bound or mounted), and every limit.
//! - Era routing: a POST whose `MCP-Protocol-Version` header names 2026-07-28, or a version
//!   ferromcp does not serve, takes the 2026-07-28 entry (one POST, one exchange, routing
//!   headers checked, a disconnect cancels); everything else takes the handshake-era wire
//!   (sessions, the GET stream, DELETE, resumable streams through an [`EventStore`]).
//! - The 2024-11-05 HTTP+SSE transport, off by default ([`HttpConfig::legacy_sse`](field@HttpConfig::legacy_sse)): a GET on
//!   `/sse` opens a session's stream, whose `endpoint` event names `/messages?sessionId=…`
//!   for the client's POSTs; served next to Streamable HTTP with the same checks and limits.
//!
//! ```no_run
//! # async fn demo(server: ferromcp_server::Server) -> std::io::Result<()> {
//! ferromcp_http_server::serve_http("127.0.0.1:8000", server).await
//! # }
//! ```
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(feature = "auth")]
pub mod auth;
mod body;
mod config;
mod conn_limit;
mod event_store;
mod exchange;
mod forwarded;
mod frames;
mod headers;
mod legacy;
mod modern;
mod param_headers;
#[cfg(feature = "redis")]
pub mod redis;
mod security;
mod service;
mod timers;

use std::future::Future;
use std::io;
use std::net::SocketAddr;

use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpStream, ToSocketAddrs};

pub use body::McpBody;
pub use config::{
    DEFAULT_BODY_TIMEOUT, DEFAULT_FIRST_REQUEST_TIMEOUT, DEFAULT_HEADER_READ_TIMEOUT,
    DEFAULT_IDLE_TIMEOUT, DEFAULT_INBOUND_QUEUE, DEFAULT_INIT_TIMEOUT, DEFAULT_KEEP_ALIVE,
    DEFAULT_LEGACY_MESSAGES_PATH, DEFAULT_LEGACY_SSE_PATH, DEFAULT_MAX_BODY_SIZE,
    DEFAULT_MAX_IN_FLIGHT, DEFAULT_MAX_SESSIONS, DEFAULT_MAX_SESSIONS_PER_PEER,
    DEFAULT_MAX_SESSIONS_PER_PRINCIPAL, DEFAULT_PATH, DEFAULT_RETRY_MS, DEFAULT_SSE_DEFERRAL,
    DEFAULT_STREAM_QUEUE, HttpConfig, PeerAddr,
};
pub use conn_limit::{
    ConnectionLimits, ConnectionPermit, DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_CONNECTIONS_PER_PEER,
    refuse_connection,
};
pub use event_store::{
    DEFAULT_EVENTS_PER_SESSION, EventStore, InMemoryEventStore, Replay, StoredEvent,
};
pub use ferromcp_server::CallerId;
pub use ferromcp_server::tool_headers::{ParamHeader, param_headers};
pub use forwarded::IpRange;
pub use headers::{
    LAST_EVENT_ID, MCP_METHOD, MCP_NAME, MCP_PARAM_PREFIX, MCP_PROTOCOL_VERSION, MCP_SESSION_ID,
    X_ACCEL_BUFFERING, decode_header_value,
};
pub use legacy::session::{InMemorySessionStore, Session, SessionStore};
pub use legacy::streams::SseStreamControl;
pub use param_headers::check_param_headers;
pub use service::McpHttpService;

use ferromcp_server::Server;

/// Serves `server` over Streamable HTTP at `addr`, path `/mcp`, with the default settings,
/// until the listener fails.
pub async fn serve_http(addr: impl ToSocketAddrs, server: Server) -> io::Result<()> {
    HttpServer::bind(addr, server, HttpConfig::default())
        .await?
        .run()
        .await
}

/// [`serve_http`] with explicit settings.
pub async fn serve_http_with(
    addr: impl ToSocketAddrs,
    server: Server,
    config: HttpConfig,
) -> io::Result<()> {
    HttpServer::bind(addr, server, config).await?.run().await
}

/// A bound Streamable HTTP server: bind (port 0 picks a free port), read the local address,
/// then [`run`](HttpServer::run).
///
/// Binding fills in the `Host`/`Origin` allowlists the config leaves unset with the loopback
/// names on the bound port (DNS-rebinding protection, [`HttpConfig::bound_to`]): binding a
/// wider address without allowlists answers loopback names only and logs a warning.
#[derive(Debug)]
pub struct HttpServer {
    listener: TcpListener,
    service: McpHttpService,
    local: SocketAddr,
}

impl HttpServer {
    /// Binds `addr` to serve `server` with `config`.
    pub async fn bind(
        addr: impl ToSocketAddrs,
        server: Server,
        config: HttpConfig,
    ) -> io::Result<Self> {
        let listener = TcpListener::bind(addr).await?;
        let local = listener.local_addr()?;
        let config = security::secure_for_bind(config, local);
        Ok(Self {
            listener,
            service: McpHttpService::new(server, config),
            local,
        })
    }

    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// The service this server runs.
    pub fn service(&self) -> &McpHttpService {
        &self.service
    }

    /// Accepts and serves connections until accepting fails.
    pub async fn run(self) -> io::Result<()> {
        self.run_until(std::future::pending()).await
    }

    /// Accepts and serves connections until `shutdown` completes (then stops accepting;
    /// connections already accepted are served to their end) or accepting fails.
    pub async fn run_until(self, shutdown: impl Future<Output = ()>) -> io::Result<()> {
        let mut shutdown = std::pin::pin!(shutdown);
        let config = self.service.config();
        let limits = ConnectionLimits::new(config.max_connections, config.max_connections_per_peer);
        loop {
            let accepted = tokio::select! {
                () = &mut shutdown => return Ok(()),
                a = self.listener.accept() => a,
            };
            let (stream, peer) = match accepted {
                Ok(c) => c,
                Err(e) if is_transient(&e) => {
                    tracing::debug!(error = %e, "accept failed; continuing");
                    tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                    continue;
                }
                Err(e) => return Err(e),
            };
            let Some(permit) = limits.try_acquire(peer.ip()) else {
                tracing::debug!(%peer, "connection refused: at the connection cap");
                refuse_connection(stream);
                continue;
            };
            tune(&stream);
            let service = self.service.clone();
            tokio::spawn(async move {
                serve_connection(stream, peer, service).await;
                drop(permit);
            });
        }
    }
}

/// Whether an accept error is one after which a listener should keep accepting (EMFILE and
/// ENFILE included), as [`HttpServer::run`] does: for an application with its own accept loop.
pub fn is_transient(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::Interrupted
            | io::ErrorKind::WouldBlock
    ) || e.raw_os_error().is_some_and(|c| c == 24 || c == 23) // EMFILE, ENFILE
}

/// `TCP_NODELAY` (no 40 ms delayed-ACK stall on small SSE frames) and TCP keep-alive.
fn tune(stream: &TcpStream) {
    if let Err(e) = stream.set_nodelay(true) {
        tracing::debug!(error = %e, "TCP_NODELAY could not be set");
    }
    #[cfg(unix)]
    if let Err(e) = rustix::net::sockopt::set_socket_keepalive(stream, true) {
        tracing::debug!(error = %e, "SO_KEEPALIVE could not be set");
    }
    #[cfg(windows)]
    if let Err(e) = socket2::SockRef::from(stream).set_keepalive(true) {
        tracing::debug!(error = %e, "SO_KEEPALIVE could not be set");
    }
}

async fn serve_connection(stream: TcpStream, peer: SocketAddr, service: McpHttpService) {
    let path = service.config().path.clone();
    let header_read_timeout = service.config().header_read_timeout;
    let svc = hyper::service::service_fn(move |mut req: http::Request<Incoming>| {
        let service = service.clone();
        req.extensions_mut().insert(PeerAddr(peer));
        let on_path =
            req.uri().path() == path || service.config().is_legacy_sse_path(req.uri().path());
        async move {
            #[cfg(feature = "auth")]
            if let Some(auth) = &service.config().auth {
                let (method, path) = (req.method(), req.uri().path());
                if let Some(r) = auth::check::metadata_response(auth, method, path) {
                    return Ok(r);
                }
            }
            if !on_path {
                let mut r = http::Response::new(McpBody::full("Not Found"));
                *r.status_mut() = http::StatusCode::NOT_FOUND;
                return Ok::<_, std::convert::Infallible>(r);
            }
            Ok(service.handle(req).await)
        }
    });
    // The timer arms hyper's header-read timeout: a client that never finishes its request
    // head, or leaves a kept-alive connection idle, does not hold the connection forever.
    let conn = hyper::server::conn::http1::Builder::new()
        .keep_alive(true)
        .timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(header_read_timeout)
        .serve_connection(TokioIo::new(stream), svc);
    if let Err(e) = conn.await {
        tracing::debug!(error = %e, "HTTP connection ended with an error");
    }
}
