//! An embedded OAuth 2.1 authorization server (feature `auth-server`), so a protected MCP
//! server and a real OAuth flow run end to end on one machine with no external identity
//! provider.
//!
//! [`AuthorizationServer`] answers, under its issuer URL:
//!
//! | path | what |
//! |---|---|
//! | `/.well-known/oauth-authorization-server` | RFC 8414 metadata (`code_challenge_methods_supported: ["S256"]`, `authorization_response_iss_parameter_supported`, `client_id_metadata_document_supported`) |
//! | `/authorize` | authorization code with PKCE S256 only, exact `redirect_uri` match, `state` carried, `iss` (RFC 9207) in every redirect, `resource` (RFC 8707) bound to the code |
//! | `/token` | `authorization_code`, `refresh_token` (rotated on every use), `client_credentials`; client authentication `client_secret_basic`, `client_secret_post`, `private_key_jwt`, `none` |
//! | `/register` | RFC 7591 dynamic client registration (authorization code and refresh token only; `client_credentials` clients are the operator's: [`AuthServerConfig::client`], [`AuthorizationServer::register_client`]) |
//! | `/revoke` | RFC 7009 revocation |
//! | `/jwks` | the signing keys (current and previous, after [`rotate_keys`](AuthorizationServer::rotate_keys)) |
//!
//! A `client_id` that is an `https` URL is a client ID metadata document, fetched with SSRF
//! protections (see [`AuthServerConfig::cimd_allow_loopback`]).
//!
//! Access tokens are ES256 JWTs (RFC 9068, `typ: at+jwt`) with `iss`, `sub`, `aud` (the
//! resource asked for), `client_id`, `scope`, `iat`, `exp` and `jti`: any JWT library checks
//! them against `/jwks`, and so does [`JwtVerifier`](ferromcp_http_server::auth::JwtVerifier);
//! [`AuthorizationServer::verifier`] checks them in process, revocation included.
//!
//! Safe by default: codes are single-use and live [`DEFAULT_CODE_TTL`] (a replayed code
//! revokes every token issued from it, as does a replayed refresh token); PKCE S256 is
//! required; there is no implicit or password grant; redirect URIs must be `https` or
//! loopback `http`; refresh tokens are bound to their client; the authorization, token,
//! revocation and registration endpoints are rate limited per caller address
//! ([`DEFAULT_AUTHORIZE_RATE_LIMIT`], [`DEFAULT_TOKEN_RATE_LIMIT`]; a request whose address
//! is unknown is refused, see [`AuthServerConfig::peer_address`]); self-registered clients
//! are bounded in total ([`DEFAULT_MAX_CLIENTS`]) and per source address
//! ([`DEFAULT_MAX_CLIENTS_PER_SOURCE`]) and expire unused ([`DEFAULT_UNUSED_CLIENT_TTL`]);
//! only operator-registered clients get `client_credentials` tokens (tokens with no user
//! behind them); `/authorize` never redirects an error to the redirect URI of a client
//! anyone could have registered (an error page instead: no open redirector); a login page's
//! pending request is bound to the browser that started it by a cookie; tokens, codes and
//! secrets are never logged and stored only as hashes.
//!
//! The login-and-consent step is a [`ConsentHook`]; [`AutoApprove`] (the default) approves
//! headlessly, and so only on loopback unless
//! [`allow_auto_approve_off_loopback`](AuthServerConfig::allow_auto_approve_off_loopback)
//! says otherwise. Storage is an [`AuthStore`]; [`InMemoryAuthStore`] is the default
//! (with the `redis` feature, `RedisAuthStore` shares it between nodes, which then share a
//! [`signing_key`](AuthServerConfig::signing_key) as well).
//!
//! [`AuthHttpServer`] serves an MCP server and its authorization server on one listener:
//!
//! ```no_run
//! # async fn demo(server: ferromcp_server::Server) -> std::io::Result<()> {
//! use ferromcp_auth_server::{AuthHttpServer, AuthServerConfig};
//! use ferromcp_http_server::HttpConfig;
//!
//! let config = AuthServerConfig::default().scopes_supported(["mcp:read", "mcp:write"]);
//! let server = AuthHttpServer::bind("127.0.0.1:8000", server, HttpConfig::default(), config)
//!     .await?;
//! server.run().await
//! # }
//! ```
#![cfg_attr(docsrs, feature(doc_cfg))]

mod authorize;
mod cimd;
mod client_auth;
mod config;
mod consent;
mod keys;
mod oauth_error;
mod pending;
mod rate;
#[cfg(feature = "redis")]
mod redis_store;
mod register;
mod request;
mod revoke;
mod serve;
mod store;
mod token;

use std::convert::Infallible;
use std::fmt;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ferromcp_dispatch::{BoxError, BoxFuture};
use ferromcp_types::net::is_loopback_host;
use http::header::{ACCESS_CONTROL_ALLOW_ORIGIN, ALLOW, CACHE_CONTROL, CONTENT_TYPE, HeaderValue};
use http::{Method, Request, Response, StatusCode};
use http_body::Body;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use ferromcp_http_server::McpBody;
use ferromcp_http_server::auth::{AuthConfig, AuthError, Principal, TokenVerifier};

pub use config::{
    AuthServerConfig, DEFAULT_ACCESS_TOKEN_TTL, DEFAULT_CIMD_CACHE_TTL, DEFAULT_CIMD_MAX_SIZE,
    DEFAULT_CIMD_TIMEOUT, DEFAULT_CODE_TTL, DEFAULT_MAX_CLIENTS, DEFAULT_MAX_CLIENTS_PER_SOURCE,
    DEFAULT_MAX_FORM_SIZE, DEFAULT_MAX_PENDING, DEFAULT_PENDING_TTL, DEFAULT_REFRESH_TOKEN_TTL,
    DEFAULT_UNUSED_CLIENT_TTL, PeerAddressFn,
};
pub use consent::{AuthorizationRequest, AutoApprove, Consent, ConsentHook};
pub use rate::{DEFAULT_AUTHORIZE_RATE_LIMIT, DEFAULT_TOKEN_RATE_LIMIT, RateLimit};
#[cfg(feature = "redis")]
pub use redis_store::RedisAuthStore;
pub use serve::AuthHttpServer;
pub use store::{
    Admission, AuthStore, ClientLimits, ClientRecord, DEFAULT_MAX_RECORDS, GrantRecord,
    InMemoryAuthStore, Registration, StoreError, Taken,
};

/// The grant types the server knows (no implicit, no password).
const GRANT_TYPES: [&str; 3] = ["authorization_code", "refresh_token", "client_credentials"];
/// The client authentication methods at the token and revocation endpoints.
const AUTH_METHODS: [&str; 4] = [
    "client_secret_basic",
    "client_secret_post",
    "private_key_jwt",
    "none",
];

/// Why an [`AuthorizationServer`] could not be built.
#[derive(Debug, Clone, thiserror::Error)]
#[error("authorization server: {0}")]
pub struct AuthServerError(pub String);

pub(crate) struct Inner {
    pub(crate) config: AuthServerConfig,
    pub(crate) issuer: String,
    /// The issuer's path (`""` for an origin issuer): endpoints live under it.
    pub(crate) base_path: String,
    pub(crate) keys: keys::Keys,
    pub(crate) token_limiter: rate::Limiter,
    pub(crate) register_limiter: rate::Limiter,
    pub(crate) authorize_limiter: rate::Limiter,
    pending: pending::PendingTable,
    pub(crate) assertions: client_auth::SeenAssertions,
    pub(crate) cimd: cimd::CimdFetcher,
}

/// The embedded OAuth 2.1 authorization server (see the [module docs](self)). Cheap to
/// clone; also a tower service (mount it in axum with `Router::fallback_service`, or route
/// its [`paths`](Self::paths)).
#[derive(Clone)]
pub struct AuthorizationServer {
    inner: Arc<Inner>,
}

impl fmt::Debug for AuthorizationServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuthorizationServer")
            .field("issuer", &self.inner.issuer)
            .finish_non_exhaustive()
    }
}

impl AuthorizationServer {
    /// A server with these settings; fails without an issuer, with an issuer that is not
    /// `https` (or `http` on loopback) or has a query or fragment, with a signing key that
    /// is not a P-256 PKCS#8 key, or when the OS random source fails.
    pub fn new(config: AuthServerConfig) -> Result<Self, AuthServerError> {
        let issuer = config
            .issuer
            .clone()
            .ok_or_else(|| AuthServerError("no issuer URL".to_owned()))?;
        let url = url::Url::parse(&issuer)
            .map_err(|e| AuthServerError(format!("issuer URL {issuer:?}: {e}")))?;
        let secure = url.scheme() == "https" || (url.scheme() == "http" && is_loopback_url(&url));
        if !secure || url.query().is_some() || url.fragment().is_some() || issuer.ends_with('/') {
            return Err(AuthServerError(format!(
                "issuer {issuer:?} must be https (http on loopback only), without query, \
                 fragment or trailing slash"
            )));
        }
        if !is_loopback_url(&url) {
            check_auto_approve(&config, &issuer)?;
        }
        let base_path = url.path().trim_end_matches('/').to_owned();
        let cimd = cimd::CimdFetcher::new(&config).map_err(AuthServerError)?;
        Ok(Self {
            inner: Arc::new(Inner {
                keys: match &config.signing_key {
                    Some(der) => keys::Keys::from_pkcs8(der),
                    None => keys::Keys::generate(),
                }
                .map_err(AuthServerError)?,
                token_limiter: rate::Limiter::new(config.token_rate_limit),
                register_limiter: rate::Limiter::new(config.token_rate_limit),
                authorize_limiter: rate::Limiter::new(config.authorize_rate_limit),
                pending: pending::PendingTable::default(),
                assertions: client_auth::SeenAssertions::default(),
                cimd,
                issuer,
                base_path,
                config,
            }),
        })
    }

    /// The issuer URL.
    pub fn issuer(&self) -> &str {
        &self.inner.issuer
    }

    /// The settings in force.
    pub fn config(&self) -> &AuthServerConfig {
        &self.inner.config
    }

    /// The URL of an endpoint (`/token`, …) under the issuer.
    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.inner.issuer)
    }

    /// The token endpoint's URL (the audience of `private_key_jwt` assertions).
    pub fn token_endpoint(&self) -> String {
        self.url("/token")
    }

    /// The paths this server answers (metadata, endpoints, JWKS).
    pub fn paths(&self) -> Vec<String> {
        let b = &self.inner.base_path;
        let mut out = vec![format!("/.well-known/oauth-authorization-server{b}")];
        out.extend(
            ["/authorize", "/token", "/register", "/revoke", "/jwks"]
                .iter()
                .map(|p| format!("{b}{p}")),
        );
        out
    }

    /// The RFC 8414 metadata document.
    pub fn metadata(&self) -> Value {
        let c = &self.inner.config;
        let mut m = json!({
            "issuer": self.inner.issuer,
            "authorization_endpoint": self.url("/authorize"),
            "token_endpoint": self.url("/token"),
            "revocation_endpoint": self.url("/revoke"),
            "jwks_uri": self.url("/jwks"),
            "scopes_supported": c.scopes_supported,
            "response_types_supported": ["code"],
            "response_modes_supported": ["query"],
            "grant_types_supported": GRANT_TYPES,
            "token_endpoint_auth_methods_supported": AUTH_METHODS,
            "token_endpoint_auth_signing_alg_values_supported": client_auth::ASSERTION_ALGS,
            "revocation_endpoint_auth_methods_supported": AUTH_METHODS,
            "code_challenge_methods_supported": ["S256"],
            "authorization_response_iss_parameter_supported": true,
            "client_id_metadata_document_supported": c.client_id_metadata_documents,
        });
        if c.dynamic_registration {
            m["registration_endpoint"] = json!(self.url("/register"));
        }
        m
    }

    /// The JWKS document (the current signing key, and the previous one after a rotation).
    pub fn jwks(&self) -> Value {
        self.inner.keys.jwks()
    }

    /// Rotates the signing key: a new key signs from now on; the previous one stays in the
    /// JWKS (tokens it signed keep verifying until they expire); the one before is dropped.
    pub fn rotate_keys(&self) -> Result<(), AuthServerError> {
        self.inner.keys.rotate().map_err(AuthServerError)
    }

    /// A verifier for tokens this server issued for `resource`: signature, expiry, issuer,
    /// audience, and revocation (a revoked grant's tokens are refused at once).
    pub fn verifier(&self, resource: impl Into<String>) -> LocalVerifier {
        LocalVerifier {
            server: self.clone(),
            resource: resource.into(),
        }
    }

    /// The resource-server settings for `resource`, protected by this server: its issuer as
    /// the authorization server, its scopes as `scopes_supported`, and
    /// [`verifier`](Self::verifier) as the verifier.
    pub fn resource_auth(&self, resource: impl Into<String>) -> AuthConfig {
        let resource = resource.into();
        AuthConfig::new(resource.clone(), self.verifier(resource))
            .authorization_server(self.inner.issuer.clone())
            .scopes_supported(self.inner.config.scopes_supported.clone())
    }

    /// Registers (or replaces) a client as the operator, in the store: marked
    /// [`Registration::Operator`], never expiring, and so allowed the grants it lists,
    /// `client_credentials` included (see [`AuthServerConfig::client`]). A Rust API, not an
    /// endpoint: there is no HTTP route to it.
    pub async fn register_client(&self, client: ClientRecord) -> Result<(), StoreError> {
        self.inner.config.store.put_client(client.operator()).await
    }

    pub(crate) fn inner(&self) -> &Inner {
        &self.inner
    }

    /// Whether `path` is one of this server's.
    pub fn owns(&self, path: &str) -> bool {
        self.paths().iter().any(|p| p == path)
    }

    /// Serves one request; a path that is not one of [`paths`](Self::paths) gets 404.
    ///
    /// The authorization, token, revocation and registration endpoints are rate limited per
    /// caller address, read by [`AuthServerConfig::peer_address`] or from a
    /// [`SocketAddr`](std::net::SocketAddr) in the request's extensions ([`AuthHttpServer`]
    /// puts it there). A request to one of them whose address cannot be read gets a 500
    /// (and an error log: the server is mounted without telling it who calls), never a
    /// bucket shared by every caller.
    pub async fn handle<B>(&self, req: Request<B>) -> Response<McpBody>
    where
        B: Body + Send + 'static,
        B::Data: Send,
        B::Error: Into<BoxError>,
    {
        let path = req.uri().path().to_owned();
        let b = self.inner.base_path.as_str();
        let method = req.method().clone();
        if path == format!("/.well-known/oauth-authorization-server{b}") {
            return get_json(&method, &self.metadata(), "max-age=3600");
        }
        let Some(rest) = path.strip_prefix(b) else {
            return not_found();
        };
        if rest == "/jwks" {
            return get_json(&method, &self.jwks(), "max-age=60");
        }
        if !["/authorize", "/token", "/register", "/revoke"].contains(&rest) {
            return not_found();
        }
        let (parts, body) = req.into_parts();
        let Some(peer) = request::peer(self, &parts) else {
            tracing::error!(
                "authorization server: no caller address (mounted without a SocketAddr \
                 extension; set AuthServerConfig::peer_address); request refused"
            );
            let why = "the server cannot tell callers apart (no peer address)";
            return if rest == "/authorize" {
                oauth_error::error_page_status(StatusCode::INTERNAL_SERVER_ERROR, why)
            } else {
                oauth_error::OAuthError {
                    status: StatusCode::INTERNAL_SERVER_ERROR,
                    ..oauth_error::OAuthError::new("server_error", why)
                }
                .response()
            };
        };
        let req = Request::from_parts(parts, body);
        match rest {
            "/authorize" => authorize::authorize(self, req, peer).await,
            "/token" => token::token(self, req, peer).await,
            "/register" => register::register(self, req, peer).await,
            _ => revoke::revoke(self, req, peer).await,
        }
    }

    /// Signs an access token for `grant` and, when asked, stores a refresh token: the
    /// token response.
    pub(crate) async fn issue(
        &self,
        grant: &store::GrantRecord,
        refresh: bool,
    ) -> Result<Value, oauth_error::OAuthError> {
        let c = &self.inner.config;
        let now = store::now_secs();
        let exp = now + c.access_token_ttl.as_secs();
        let scope = grant.scopes.join(" ");
        let claims = json!({
            "iss": self.inner.issuer,
            "sub": grant.subject,
            "aud": grant.resource,
            "client_id": grant.client_id,
            "scope": scope,
            "iat": now,
            "exp": exp,
            "jti": random_token(16).map_err(oauth_error::OAuthError::server)?,
            "gid": grant.grant_id,
        });
        let access = self
            .inner
            .keys
            .sign(&claims)
            .map_err(oauth_error::OAuthError::server)?;
        let mut out = json!({
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": c.access_token_ttl.as_secs(),
        });
        if !scope.is_empty() {
            out["scope"] = json!(scope);
        }
        if refresh {
            let token = random_token(32).map_err(oauth_error::OAuthError::server)?;
            let mut record = grant.clone();
            record.redirect_uri = None;
            record.code_challenge = None;
            self.inner
                .config
                .store
                .put_refresh(sha256_hex(token.as_bytes()), record)
                .await
                .map_err(|e| oauth_error::OAuthError::server(e.0))?;
            out["refresh_token"] = json!(token);
        }
        Ok(out)
    }

    /// Revokes `grant_id` for as long as any of its tokens can live.
    pub(crate) async fn revoke_grant(&self, grant_id: &str) -> Result<(), StoreError> {
        let c = &self.inner.config;
        let until = store::now_secs()
            + c.refresh_token_ttl.as_secs()
            + c.access_token_ttl.as_secs()
            + c.code_ttl.as_secs();
        tracing::info!(grant = grant_id, "grant revoked");
        c.store.revoke_grant(grant_id, until).await
    }
}

impl<B> tower_service::Service<Request<B>> for AuthorizationServer
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
        let me = self.clone();
        Box::pin(async move { Ok(me.handle(req).await) })
    }
}

/// Checks tokens issued by an [`AuthorizationServer`] for one resource, in process (see
/// [`AuthorizationServer::verifier`]).
#[derive(Clone)]
pub struct LocalVerifier {
    server: AuthorizationServer,
    resource: String,
}

impl fmt::Debug for LocalVerifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LocalVerifier")
            .field("issuer", &self.server.issuer())
            .field("resource", &self.resource)
            .finish()
    }
}

impl TokenVerifier for LocalVerifier {
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Principal, AuthError>> {
        Box::pin(async move {
            let claims = self
                .server
                .inner
                .keys
                .verify(token)
                .map_err(AuthError::invalid)?;
            let s = |k: &str| claims.get(k).and_then(Value::as_str).map(str::to_owned);
            if s("iss").as_deref() != Some(self.server.issuer()) {
                return Err(AuthError::invalid("issuer mismatch"));
            }
            let audience: Vec<String> = match claims.get("aud") {
                Some(Value::String(a)) => vec![a.clone()],
                Some(Value::Array(a)) => a
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect(),
                _ => Vec::new(),
            };
            if !audience.iter().any(|a| a == &self.resource) {
                return Err(AuthError::invalid("token not issued for this resource"));
            }
            if let Some(gid) = s("gid") {
                match self.server.inner.config.store.is_revoked(&gid).await {
                    Ok(false) => {}
                    Ok(true) => return Err(AuthError::invalid("token revoked")),
                    Err(e) => return Err(AuthError::Unavailable(e.0)),
                }
            }
            let subject = s("sub").ok_or_else(|| AuthError::invalid("no sub"))?;
            let mut p = Principal::new(subject)
                .issuer(self.server.issuer())
                .audience(audience)
                .scopes(
                    s("scope")
                        .unwrap_or_default()
                        .split(' ')
                        .filter(|x| !x.is_empty())
                        .map(str::to_owned)
                        .collect::<Vec<_>>(),
                );
            if let Some(c) = s("client_id") {
                p = p.client_id(c);
            }
            if let Some(exp) = claims.get("exp").and_then(Value::as_u64) {
                p = p.expires_at(UNIX_EPOCH + Duration::from_secs(exp));
            }
            Ok(p.claims(claims))
        })
    }
}

fn not_found() -> Response<McpBody> {
    let mut r = Response::new(McpBody::full("Not Found"));
    *r.status_mut() = StatusCode::NOT_FOUND;
    r
}

/// A cacheable public JSON document (GET/HEAD), readable cross-origin.
fn get_json(method: &Method, doc: &Value, cache: &'static str) -> Response<McpBody> {
    let mut r = if *method == Method::GET || *method == Method::HEAD {
        let mut r = Response::new(McpBody::full(doc.to_string()));
        r.headers_mut()
            .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        r.headers_mut()
            .insert(CACHE_CONTROL, HeaderValue::from_static(cache));
        r
    } else {
        let mut r = Response::new(McpBody::empty());
        *r.status_mut() = StatusCode::METHOD_NOT_ALLOWED;
        r.headers_mut()
            .insert(ALLOW, HeaderValue::from_static("GET, HEAD"));
        r
    };
    r.headers_mut()
        .insert(ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
    r
}

/// `n` random bytes from the OS, base64url.
pub(crate) fn random_token(n: usize) -> Result<String, String> {
    let mut b = vec![0u8; n];
    getrandom::fill(&mut b).map_err(|e| format!("OS random source: {e}"))?;
    Ok(URL_SAFE_NO_PAD.encode(b))
}

/// SHA-256, lowercase hex.
pub(crate) fn sha256_hex(data: &[u8]) -> String {
    Sha256::digest(data)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Refuses a consent hook that approves without a user off loopback (at `place`), unless
/// the operator allowed it.
pub(crate) fn check_auto_approve(
    config: &AuthServerConfig,
    place: &str,
) -> Result<(), AuthServerError> {
    if config.consent.approves_without_user() && !config.allow_auto_approve_off_loopback {
        return Err(AuthServerError(format!(
            "the consent hook approves every request without a user (AutoApprove), and \
             {place} is not loopback: anyone reaching /authorize would get tokens; plug a \
             real login (AuthServerConfig::consent) or, knowingly, set \
             allow_auto_approve_off_loopback(true)"
        )));
    }
    Ok(())
}

/// Whether the URL's host is a loopback name or address ([`is_loopback_host`], S131).
pub(crate) fn is_loopback_url(u: &url::Url) -> bool {
    u.host_str().is_some_and(is_loopback_host)
}
