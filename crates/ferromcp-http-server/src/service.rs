//! [`McpHttpService`]: the tower service at the MCP endpoint. It runs the security checks,
//! routes each request to its era's wire, and reads bodies under the limit.

use std::convert::Infallible;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::task::{Context, Poll};

use ferromcp_dispatch::{BoxError, BoxFuture};
use ferromcp_types::ProtocolVersion;
use http::header::{ALLOW, CONNECTION, CONTENT_LENGTH, HeaderValue};
use http::{Method, Request, Response, StatusCode};
use http_body::Body;
use tokio::sync::OnceCell;

use super::body::{BodyError, McpBody, http_error, read_body};
use super::config::HttpConfig;
use super::headers::{self, MCP_PROTOCOL_VERSION};
use super::security::{self, Rejection};
use super::timers::Timers;
use super::{legacy, modern};
use ferromcp_server::Server;

/// The most body bytes read from a request whose token check failed, before its 401 or 403 is
/// sent (a larger body is not read; the connection then closes).
#[cfg(feature = "auth")]
const UNAUTHENTICATED_DRAIN_LIMIT: usize = 64 * 1024;

/// What every request of one service shares.
pub(crate) struct Shared {
    pub(crate) server: Server,
    pub(crate) config: HttpConfig,
    lifespan: OnceCell<bool>,
    sweeper: AtomicBool,
    /// The 2026-07-28 runner, shared by every exchange of that era.
    pub(crate) modern_runner: Arc<ferromcp_server::ServerRunner>,
    /// Timers reused across requests.
    pub(crate) timers: Timers,
    /// Live handshake-era sessions per principal or peer.
    pub(crate) session_slots: Arc<legacy::session::SessionSlots>,
}

/// The Streamable HTTP endpoint as a tower [`Service`](tower_service::Service): serves both
/// eras of MCP on one path.
///
/// - A POST whose `MCP-Protocol-Version` header names 2026-07-28 (or a version ferromcp does
///   not serve) goes to the 2026-07-28 entry: one POST, one exchange.
/// - Everything else speaks the handshake-era wire (≤ 2025-11-25): sessions, the GET
///   stream, DELETE, resumable SSE streams.
/// - With [`HttpConfig::legacy_sse`](field@HttpConfig::legacy_sse), requests whose path is the HTTP+SSE stream's or
///   messages path speak the 2024-11-05 HTTP+SSE transport (mount the service at those
///   paths too).
///
/// Cheap to clone (clones share sessions). Mount it in axum with
/// `Router::new().route_service("/mcp", service)`, or serve it with
/// [`serve_http`](super::serve_http) / [`HttpServer`](super::HttpServer). The server's
/// lifespan is entered on the first request.
#[derive(Clone)]
pub struct McpHttpService {
    shared: Arc<Shared>,
}

impl fmt::Debug for McpHttpService {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpHttpService")
            .field("server", &self.shared.server)
            .field("config", &self.shared.config)
            .finish()
    }
}

impl McpHttpService {
    /// A service serving `server` with `config`. Mounted as it is, it does not know its
    /// port: unset `Host`/`Origin` allowlists accept the loopback names on any port
    /// ([`HttpConfig::bound_to`] names the port; [`serve_http`](super::serve_http) does that).
    /// Logs a warning when DNS-rebinding protection is off
    /// ([`HttpConfig::disable_host_checks`]).
    pub fn new(server: Server, config: HttpConfig) -> Self {
        security::warn_if_off(&config);
        Self {
            shared: Arc::new(Shared {
                modern_runner: Arc::new(ferromcp_server::ServerRunner::modern_exchange(
                    server.clone(),
                )),
                server,
                config,
                lifespan: OnceCell::new(),
                sweeper: AtomicBool::new(false),
                timers: Timers::default(),
                session_slots: Arc::default(),
            }),
        }
    }

    /// The settings in force.
    pub fn config(&self) -> &HttpConfig {
        &self.shared.config
    }

    /// How many handshake-era sessions are live.
    pub fn session_count(&self) -> usize {
        self.shared.config.session_store.len()
    }

    /// Serves one HTTP request.
    pub async fn handle<B>(&self, req: Request<B>) -> Response<McpBody>
    where
        B: Body + Send + 'static,
        B::Data: Send,
        B::Error: Into<BoxError>,
    {
        handle(self.shared.clone(), req).await
    }
}

impl<B> tower_service::Service<Request<B>> for McpHttpService
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    type Response = Response<McpBody>;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Response<McpBody>, Infallible>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        let shared = self.shared.clone();
        Box::pin(async move { Ok(handle(shared, req).await) })
    }
}

fn method_not_allowed(allow: &'static str) -> Response<McpBody> {
    let mut r = http_error(StatusCode::METHOD_NOT_ALLOWED, "Method Not Allowed");
    r.headers_mut()
        .insert(ALLOW, HeaderValue::from_static(allow));
    r
}

async fn handle<B>(shared: Arc<Shared>, req: Request<B>) -> Response<McpBody>
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    let entered = *shared
        .lifespan
        .get_or_init(|| async {
            match shared.server.enter_lifespan().await {
                Ok(()) => true,
                Err(e) => {
                    tracing::error!(error = %e, "the server's lifespan set-up failed");
                    false
                }
            }
        })
        .await;
    if !entered {
        return http_error(StatusCode::INTERNAL_SERVER_ERROR, "server set-up failed");
    }
    start_sweeper(&shared);
    let (mut parts, body) = req.into_parts();
    if !shared.config.trusted_proxies.is_empty()
        && let Some(crate::PeerAddr(peer)) = parts.extensions.get::<crate::PeerAddr>().copied()
    {
        let client = shared.config.client_addr(peer, &parts.headers);
        parts.extensions.insert(crate::PeerAddr(client));
    }
    match security::check(
        &shared.config,
        &parts.headers,
        parts.uri.authority().map(|a| a.as_str()),
    ) {
        Err(Rejection::Host) => {
            return http_error(StatusCode::MISDIRECTED_REQUEST, "Invalid Host header");
        }
        Err(Rejection::Origin) => {
            return http_error(StatusCode::FORBIDDEN, "Invalid Origin header");
        }
        Ok(()) => {}
    }
    #[cfg(feature = "auth")]
    if let Some(auth) = &shared.config.auth
        && let Err(r) = crate::auth::check::authenticate(auth, &mut parts).await
    {
        // Read the body (within its limit) before answering: a 401 sent while the request
        // body is still unread makes hyper close the connection, and a client that reuses
        // it for its authorized retry then sees a disconnect instead of an answer.
        let declared = parts
            .headers
            .get(CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        // Bounded far below the body limit: an unauthenticated caller gets no large reads.
        let drain = shared.config.max_body_size.min(UNAUTHENTICATED_DRAIN_LIMIT);
        let mut r = r;
        if let Err(BodyError::TimedOut) =
            read_body(body, declared, drain, shared.config.body_timeout).await
        {
            r.headers_mut()
                .insert(CONNECTION, HeaderValue::from_static("close"));
        }
        return r;
    }
    // The 2024-11-05 HTTP+SSE paths, when served: GET opens a stream, POST sends a message.
    let legacy_sse = shared.config.is_legacy_sse_path(parts.uri.path());
    if legacy_sse {
        let is_stream = parts.uri.path() == shared.config.legacy_sse_path;
        match (is_stream, &parts.method) {
            (true, &Method::GET) => return legacy::sse::get(&shared, Arc::new(parts)).await,
            (true, _) => return method_not_allowed("GET"),
            (false, &Method::POST) => {}
            (false, _) => return method_not_allowed("POST"),
        }
    }
    // Era routing by header: a served handshake version (or none) is the handshake wire;
    // 2026-07-28, or a value ferromcp does not serve, goes to the 2026-07-28 entry, whose
    // version rung answers -32022 with the supported list.
    let header = headers::first(&parts.headers, &MCP_PROTOCOL_VERSION);
    let version = header.map(ProtocolVersion::parse);
    let modern = match version {
        None => false,
        Some(Some(v)) => v.is_modern(),
        Some(None) => true,
    };
    let is_post = parts.method == Method::POST;
    if !is_post && !legacy_sse {
        if matches!(version, Some(None)) {
            return http_error(
                StatusCode::BAD_REQUEST,
                "Bad Request: unsupported MCP-Protocol-Version",
            );
        }
        if modern {
            return method_not_allowed("POST");
        }
        let parts = Arc::new(parts);
        return match parts.method {
            Method::GET => legacy::get(&shared, parts).await,
            Method::DELETE => legacy::delete(&shared, &parts).await,
            _ => method_not_allowed("GET, POST, DELETE"),
        };
    }
    if !headers::is_json_content(&parts.headers) {
        return http_error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Unsupported Media Type: Content-Type must be application/json",
        );
    }
    let declared = parts
        .headers
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    let limit = shared.config.max_body_size;
    let bytes = match read_body(body, declared, limit, shared.config.body_timeout).await {
        Ok(b) => b,
        Err(BodyError::TooLarge) => {
            return http_error(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!(
                    "Request body too large (limit {} bytes)",
                    shared.config.max_body_size
                ),
            );
        }
        Err(BodyError::Read) => return http_error(StatusCode::BAD_REQUEST, "Bad Request: body"),
        Err(BodyError::TimedOut) => {
            // The rest of the body may still come: the connection is not reused.
            let mut r = http_error(
                StatusCode::REQUEST_TIMEOUT,
                "Request Timeout: the body did not arrive in time",
            );
            r.headers_mut()
                .insert(CONNECTION, HeaderValue::from_static("close"));
            return r;
        }
    };
    // Decoded once: the scope check decides on the very message the wire dispatches.
    let decoded = ferromcp_types::jsonrpc::Decoder::new()
        .max_depth(shared.config.max_json_depth)
        .decode_message(&bytes);
    #[cfg(feature = "auth")]
    if let Some(auth) = &shared.config.auth
        && let Err(r) = crate::auth::check::check_scopes(auth, &parts, decoded.as_ref().ok())
    {
        return r;
    }
    let parts = Arc::new(parts);
    if legacy_sse {
        legacy::sse::post(&shared, parts, decoded).await
    } else if modern {
        modern::post(&shared, parts, decoded).await
    } else {
        legacy::post(&shared, parts, decoded).await
    }
}

/// Starts the session sweeper once (stateful services only). It holds the service weakly and
/// stops when the service is dropped.
fn start_sweeper(shared: &Arc<Shared>) {
    if (shared.config.stateless && !shared.config.legacy_sse)
        || shared.sweeper.swap(true, Ordering::AcqRel)
    {
        return;
    }
    let weak: Weak<Shared> = Arc::downgrade(shared);
    let period = shared
        .config
        .init_timeout
        .min(shared.config.first_request_timeout)
        .min(shared.config.idle_timeout)
        .clamp(
            std::time::Duration::from_millis(50),
            std::time::Duration::from_secs(30),
        );
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(period);
        tick.tick().await;
        loop {
            tick.tick().await;
            let Some(shared) = weak.upgrade() else { return };
            legacy::sweep(&shared);
        }
    });
}
