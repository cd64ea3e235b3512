//! [`AuthHttpServer`]: an MCP server protected by the embedded authorization server, both
//! on one listener.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;

use http::{Response, StatusCode};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpStream, ToSocketAddrs};

use super::{AuthServerConfig, AuthorizationServer};
use ferromcp_http_server::auth::AuthConfig;
use ferromcp_http_server::{
    ConnectionLimits, HttpConfig, McpBody, McpHttpService, refuse_connection,
};
use ferromcp_server::Server;

/// A Streamable HTTP server whose MCP endpoint is protected by an embedded
/// [`AuthorizationServer`] on the same origin: the MCP endpoint at the config's path, the
/// RFC 9728 metadata naming the authorization server, and the authorization server's
/// metadata and endpoints.
///
/// Binding fills in what the address decides: the issuer (`http://<bound address>` when the
/// config has none), the resource (`<issuer origin><path>`, added to the authorization
/// server's resources), the resource-server settings (when `HttpConfig::auth` is unset:
/// [`AuthorizationServer::resource_auth`]) and the `Host`/`Origin` allowlists left unset
/// (the loopback names on the bound port, [`HttpConfig::bound_to`]). Binding a non-loopback
/// address with a consent hook that approves without a user (the default
/// [`AutoApprove`](super::AutoApprove)) fails unless
/// [`allow_auto_approve_off_loopback`](super::AuthServerConfig::allow_auto_approve_off_loopback)
/// is set.
#[derive(Debug)]
pub struct AuthHttpServer {
    listener: TcpListener,
    service: McpHttpService,
    auth: AuthorizationServer,
    resource: Arc<AuthConfig>,
    local: SocketAddr,
}

impl AuthHttpServer {
    /// Binds `addr` (port 0 picks a free port).
    pub async fn bind(
        addr: impl ToSocketAddrs,
        server: Server,
        http: HttpConfig,
        config: AuthServerConfig,
    ) -> io::Result<Self> {
        Self::bind_with(addr, server, http, config, |rs| rs).await
    }

    /// [`bind`](Self::bind), with the resource-server settings made from the bound
    /// authorization server passed through `customize` (required scopes, per-method and
    /// per-tool scopes, …) when `HttpConfig::auth` is unset.
    ///
    /// ```no_run
    /// # async fn demo(server: ferromcp_server::Server) -> std::io::Result<()> {
    /// use ferromcp_auth_server::{AuthHttpServer, AuthServerConfig};
    /// use ferromcp_http_server::HttpConfig;
    ///
    /// let config = AuthServerConfig::default().scopes_supported(["mcp", "admin"]);
    /// let server = AuthHttpServer::bind_with(
    ///     "127.0.0.1:0",
    ///     server,
    ///     HttpConfig::default(),
    ///     config,
    ///     |rs| rs.required_scopes(["mcp"]).tool_scopes("delete", ["admin"]),
    /// )
    /// .await?;
    /// # Ok(()) }
    /// ```
    pub async fn bind_with(
        addr: impl ToSocketAddrs,
        server: Server,
        mut http: HttpConfig,
        mut config: AuthServerConfig,
        customize: impl FnOnce(AuthConfig) -> AuthConfig,
    ) -> io::Result<Self> {
        let listener = TcpListener::bind(addr).await?;
        let local = listener.local_addr()?;
        if !local.ip().is_loopback() {
            super::check_auto_approve(&config, &format!("the bound address {local}"))
                .map_err(io::Error::other)?;
        }
        let issuer = config
            .issuer
            .get_or_insert_with(|| format!("http://{local}"))
            .clone();
        let origin = match url::Url::parse(&issuer) {
            Ok(u) => u.origin().ascii_serialization(),
            Err(e) => return Err(io::Error::other(format!("issuer {issuer:?}: {e}"))),
        };
        let resource = format!("{origin}{}", http.path);
        if !config.resources.contains(&resource) {
            config.resources.push(resource.clone());
        }
        let auth = AuthorizationServer::new(config).map_err(io::Error::other)?;
        let rs = match &http.auth {
            Some(a) => a.clone(),
            None => Arc::new(customize(auth.resource_auth(resource))),
        };
        http.auth = Some(rs.clone());
        // Unset Host/Origin allowlists: the loopback names on the bound port.
        let http = http.bound_to(local);
        Ok(Self {
            listener,
            service: McpHttpService::new(server, http),
            auth,
            resource: rs,
            local,
        })
    }

    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// The MCP endpoint's URL (the resource).
    pub fn resource(&self) -> &str {
        &self.resource.resource
    }

    /// The embedded authorization server.
    pub fn authorization_server(&self) -> &AuthorizationServer {
        &self.auth
    }

    /// The MCP service.
    pub fn service(&self) -> &McpHttpService {
        &self.service
    }

    /// Serves until accepting fails.
    pub async fn run(self) -> io::Result<()> {
        self.run_until(std::future::pending()).await
    }

    /// Serves until `shutdown` completes (connections already accepted are served to their
    /// end) or accepting fails.
    pub async fn run_until(self, shutdown: impl Future<Output = ()>) -> io::Result<()> {
        let mut shutdown = std::pin::pin!(shutdown);
        let http = self.service.config();
        let limits = ConnectionLimits::new(http.max_connections, http.max_connections_per_peer);
        let routes = Arc::new(Routes {
            service: self.service,
            auth: self.auth,
            resource: self.resource,
        });
        loop {
            let accepted = tokio::select! {
                () = &mut shutdown => return Ok(()),
                a = self.listener.accept() => a,
            };
            let (stream, peer) = match accepted {
                Ok(c) => c,
                Err(e) if ferromcp_http_server::is_transient(&e) => {
                    tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                    continue;
                }
                Err(e) => return Err(e),
            };
            // The MCP endpoint's connection caps hold for the whole listener.
            let Some(permit) = limits.try_acquire(peer.ip()) else {
                refuse_connection(stream);
                continue;
            };
            let _ = stream.set_nodelay(true);
            let routes = routes.clone();
            tokio::spawn(async move {
                serve_connection(stream, peer, routes).await;
                drop(permit);
            });
        }
    }
}

struct Routes {
    service: McpHttpService,
    auth: AuthorizationServer,
    resource: Arc<AuthConfig>,
}

async fn serve_connection(stream: TcpStream, peer: SocketAddr, routes: Arc<Routes>) {
    let header_read_timeout = routes.service.config().header_read_timeout;
    let svc = hyper::service::service_fn(move |mut req: http::Request<Incoming>| {
        let routes = routes.clone();
        async move {
            // The client's address (behind trusted proxies, the one they name) keys the
            // token endpoint's rate limit and the per-peer session caps.
            let client = routes.service.config().client_addr(peer, req.headers());
            req.extensions_mut().insert(client);
            req.extensions_mut()
                .insert(ferromcp_http_server::PeerAddr(client));
            let path = req.uri().path().to_owned();
            if routes.auth.owns(&path) {
                return Ok::<_, std::convert::Infallible>(routes.auth.handle(req).await);
            }
            if let Some(r) =
                ferromcp_http_server::auth::metadata_response(&routes.resource, req.method(), &path)
            {
                return Ok(r);
            }
            let config = routes.service.config();
            if path == config.path || config.is_legacy_sse_path(&path) {
                // The service reads the body (bounded) before any 401, so the connection
                // stays usable for the client's retry with its new token.
                return Ok(routes.service.handle(req).await);
            }
            let mut r = Response::new(McpBody::full("Not Found"));
            *r.status_mut() = StatusCode::NOT_FOUND;
            Ok(r)
        }
    });
    let conn = hyper::server::conn::http1::Builder::new()
        .keep_alive(true)
        .timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(header_read_timeout)
        .serve_connection(TokioIo::new(stream), svc);
    if let Err(e) = conn.await {
        tracing::debug!(error = %e, "HTTP connection ended with an error");
    }
}
