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
//! | `/register` | RFC 7591 dynamic client registration |
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
//! loopback `http`; refresh tokens are bound to their client; the token and registration
//! endpoints are rate limited per peer ([`DEFAULT_TOKEN_RATE_LIMIT`]); tokens, codes and
//! secrets are never logged and stored only as hashes.
//!
//! The login-and-consent step is a [`ConsentHook`]; [`AutoApprove`] (the default) approves
//! headlessly. Storage is an [`AuthStore`]; [`InMemoryAuthStore`] is the default
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

mod authorize;
mod cimd;
mod client_auth;
mod consent;
mod keys;
mod oauth_error;
mod rate;
#[cfg(feature = "redis")]
mod redis_store;
mod register;
mod request;
mod revoke;
mod serve;
mod store;
mod token;

use std::collections::HashMap;
use std::convert::Infallible;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ferromcp_dispatch::{BoxError, BoxFuture};
use http::header::{ACCESS_CONTROL_ALLOW_ORIGIN, ALLOW, CACHE_CONTROL, CONTENT_TYPE, HeaderValue};
use http::{Method, Request, Response, StatusCode};
use http_body::Body;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use ferromcp_http_server::McpBody;
use ferromcp_http_server::auth::{AuthConfig, AuthError, Principal, TokenVerifier};

pub use consent::{AuthorizationRequest, AutoApprove, Consent, ConsentHook};
pub use rate::{DEFAULT_TOKEN_RATE_LIMIT, RateLimit};
#[cfg(feature = "redis")]
pub use redis_store::RedisAuthStore;
pub use serve::AuthHttpServer;
pub use store::{
    AuthStore, ClientRecord, DEFAULT_MAX_RECORDS, GrantRecord, InMemoryAuthStore, StoreError, Taken,
};

/// The default lifetime of an authorization code: 60 seconds.
pub const DEFAULT_CODE_TTL: Duration = Duration::from_secs(60);
/// The default lifetime of an access token: 1 hour.
pub const DEFAULT_ACCESS_TOKEN_TTL: Duration = Duration::from_secs(3600);
/// The default lifetime of a grant's refresh tokens (not extended by rotation): 30 days.
pub const DEFAULT_REFRESH_TOKEN_TTL: Duration = Duration::from_secs(30 * 24 * 3600);
/// The default time a request waits for a login page's decision: 10 minutes.
pub const DEFAULT_PENDING_TTL: Duration = Duration::from_secs(600);
/// The default bound on requests waiting for a login page's decision.
pub const DEFAULT_MAX_PENDING: usize = 1000;
/// The default bound on a token, revocation or registration request body: 64 KiB.
pub const DEFAULT_MAX_FORM_SIZE: usize = 64 * 1024;
/// The default bound on a client ID metadata document: 5 KiB.
pub const DEFAULT_CIMD_MAX_SIZE: usize = 5 * 1024;
/// The default time limit on fetching a client ID metadata document: 5 seconds.
pub const DEFAULT_CIMD_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a fetched client ID metadata document is reused: 5 minutes.
pub const DEFAULT_CIMD_CACHE_TTL: Duration = Duration::from_secs(300);

/// The grant types the server knows (no implicit, no password).
const GRANT_TYPES: [&str; 3] = ["authorization_code", "refresh_token", "client_credentials"];
/// The client authentication methods at the token and revocation endpoints.
const AUTH_METHODS: [&str; 4] = [
    "client_secret_basic",
    "client_secret_post",
    "private_key_jwt",
    "none",
];

/// The settings of an [`AuthorizationServer`], each with a default.
#[derive(Clone)]
#[non_exhaustive]
pub struct AuthServerConfig {
    /// The issuer URL (`https://…`, or `http://` on loopback; no query, no fragment, no
    /// trailing slash). [`AuthHttpServer`] fills in `http://<bound address>` when unset.
    pub issuer: Option<String>,
    /// The resources (RFC 8707, the MCP endpoints' canonical URLs) tokens may be issued
    /// for. A request naming another is refused (`invalid_target`); a request naming none
    /// gets the only one when there is exactly one. [`AuthHttpServer`] adds its own.
    pub resources: Vec<String>,
    /// The scopes clients may ask for.
    pub scopes_supported: Vec<String>,
    /// The scopes granted when a request names none.
    pub default_scopes: Vec<String>,
    /// Lifetime of authorization codes (default [`DEFAULT_CODE_TTL`]).
    pub code_ttl: Duration,
    /// Lifetime of access tokens (default [`DEFAULT_ACCESS_TOKEN_TTL`]).
    pub access_token_ttl: Duration,
    /// Lifetime of a grant's refresh tokens (default [`DEFAULT_REFRESH_TOKEN_TTL`]).
    pub refresh_token_ttl: Duration,
    /// The rate limit of the token endpoint, per peer address (default
    /// [`DEFAULT_TOKEN_RATE_LIMIT`]); the registration endpoint has its own bucket of the
    /// same size.
    pub token_rate_limit: RateLimit,
    /// Whether `/register` (RFC 7591) is open (default `true`).
    pub dynamic_registration: bool,
    /// Whether URL client ids are fetched as client ID metadata documents (default `true`).
    pub client_id_metadata_documents: bool,
    /// Allows client ID metadata documents at `http` loopback URLs and resolving to
    /// loopback addresses (tests and local development; default `false`: `https` only, and
    /// never to a loopback, private, link-local or otherwise non-global address).
    pub cimd_allow_loopback: bool,
    /// The largest client ID metadata document read (default [`DEFAULT_CIMD_MAX_SIZE`]).
    pub cimd_max_size: usize,
    /// The time limit on fetching one (default [`DEFAULT_CIMD_TIMEOUT`]).
    pub cimd_timeout: Duration,
    /// The largest token / revocation / registration body (default [`DEFAULT_MAX_FORM_SIZE`]).
    pub max_form_size: usize,
    /// The longest a request body may take to arrive (default
    /// [`DEFAULT_BODY_TIMEOUT`](ferromcp_http_server::DEFAULT_BODY_TIMEOUT), 30 s; 408).
    pub body_timeout: Duration,
    /// The most requests waiting for a login page's decision (default
    /// [`DEFAULT_MAX_PENDING`]).
    pub max_pending: usize,
    /// How long a request waits for a login page's decision (default
    /// [`DEFAULT_PENDING_TTL`]).
    pub pending_ttl: Duration,
    /// The signing key to start with (a P-256 private key, PKCS#8 DER); `None` (the
    /// default): a fresh random key. Nodes sharing a store share this key too, so each
    /// verifies the others' tokens.
    pub signing_key: Option<Arc<[u8]>>,
    /// Where clients, codes, refresh tokens and revocations are kept.
    pub store: Arc<dyn AuthStore>,
    /// The login-and-consent step (default [`AutoApprove`]).
    pub consent: Arc<dyn ConsentHook>,
}

impl Default for AuthServerConfig {
    fn default() -> Self {
        Self {
            issuer: None,
            resources: Vec::new(),
            scopes_supported: Vec::new(),
            default_scopes: Vec::new(),
            code_ttl: DEFAULT_CODE_TTL,
            access_token_ttl: DEFAULT_ACCESS_TOKEN_TTL,
            refresh_token_ttl: DEFAULT_REFRESH_TOKEN_TTL,
            token_rate_limit: DEFAULT_TOKEN_RATE_LIMIT,
            dynamic_registration: true,
            client_id_metadata_documents: true,
            cimd_allow_loopback: false,
            cimd_max_size: DEFAULT_CIMD_MAX_SIZE,
            cimd_timeout: DEFAULT_CIMD_TIMEOUT,
            max_form_size: DEFAULT_MAX_FORM_SIZE,
            body_timeout: ferromcp_http_server::DEFAULT_BODY_TIMEOUT,
            max_pending: DEFAULT_MAX_PENDING,
            pending_ttl: DEFAULT_PENDING_TTL,
            signing_key: None,
            store: Arc::new(InMemoryAuthStore::default()),
            consent: Arc::new(AutoApprove::default()),
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

impl AuthServerConfig {
    /// Settings for the issuer `issuer`.
    pub fn new(issuer: impl Into<String>) -> Self {
        Self {
            issuer: Some(issuer.into()),
            ..Self::default()
        }
    }

    /// Sets the issuer URL.
    #[must_use]
    pub fn issuer(mut self, issuer: impl Into<String>) -> Self {
        self.issuer = Some(issuer.into());
        self
    }

    /// Adds a resource tokens may be issued for.
    #[must_use]
    pub fn resource(mut self, resource: impl Into<String>) -> Self {
        self.resources.push(resource.into());
        self
    }

    /// Sets the scopes clients may ask for.
    #[must_use]
    pub fn scopes_supported<I: IntoIterator<Item = S>, S: Into<String>>(mut self, s: I) -> Self {
        self.scopes_supported = s.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the scopes granted when a request names none.
    #[must_use]
    pub fn default_scopes<I: IntoIterator<Item = S>, S: Into<String>>(mut self, s: I) -> Self {
        self.default_scopes = s.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the store.
    #[must_use]
    pub fn store(mut self, store: Arc<dyn AuthStore>) -> Self {
        self.store = store;
        self
    }

    /// Starts with this signing key (a P-256 private key, PKCS#8 DER).
    #[must_use]
    pub fn signing_key(mut self, pkcs8_der: impl Into<Arc<[u8]>>) -> Self {
        self.signing_key = Some(pkcs8_der.into());
        self
    }

    /// Sets the login-and-consent hook.
    #[must_use]
    pub fn consent(mut self, hook: impl ConsentHook) -> Self {
        self.consent = Arc::new(hook);
        self
    }

    setter! {
        /// Sets the code lifetime.
        code_ttl: Duration,
        /// Sets the access-token lifetime.
        access_token_ttl: Duration,
        /// Sets the refresh-token lifetime.
        refresh_token_ttl: Duration,
        /// Sets the token-endpoint rate limit.
        token_rate_limit: RateLimit,
        /// Opens or closes dynamic registration.
        dynamic_registration: bool,
        /// Turns client ID metadata documents on or off.
        client_id_metadata_documents: bool,
        /// Allows loopback client ID metadata documents (tests, development).
        cimd_allow_loopback: bool,
        /// Sets the client ID metadata document size limit.
        cimd_max_size: usize,
        /// Sets the client ID metadata document fetch time limit.
        cimd_timeout: Duration,
        /// Sets the form / registration body limit.
        max_form_size: usize,
        /// Sets the time a request body may take to arrive.
        body_timeout: Duration,
        /// Sets the bound on pending login-page requests.
        max_pending: usize,
        /// Sets how long a login-page request stays pending.
        pending_ttl: Duration,
    }
}

impl fmt::Debug for AuthServerConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuthServerConfig")
            .field("issuer", &self.issuer)
            .field("resources", &self.resources)
            .field("scopes_supported", &self.scopes_supported)
            .field("code_ttl", &self.code_ttl)
            .field("access_token_ttl", &self.access_token_ttl)
            .field("token_rate_limit", &self.token_rate_limit)
            .finish_non_exhaustive()
    }
}

/// Why an [`AuthorizationServer`] could not be built.
#[derive(Debug, Clone, thiserror::Error)]
#[error("authorization server: {0}")]
pub struct AuthServerError(pub String);

/// A request waiting for a login page's decision.
struct Pending {
    request: AuthorizationRequest,
    held: authorize::Held,
    created: tokio::time::Instant,
}

pub(crate) struct Inner {
    pub(crate) config: AuthServerConfig,
    pub(crate) issuer: String,
    /// The issuer's path (`""` for an origin issuer): endpoints live under it.
    pub(crate) base_path: String,
    pub(crate) keys: keys::Keys,
    pub(crate) token_limiter: rate::Limiter,
    pub(crate) register_limiter: rate::Limiter,
    pending: Mutex<HashMap<String, Pending>>,
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
                pending: Mutex::new(HashMap::new()),
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

    /// Completes a pending request (see [`ConsentHook`]) as approved by `subject` for
    /// `scopes` (cut to the requested ones): the redirect to send to the browser. An unknown
    /// or expired request id gets a 400 page.
    pub async fn approve(
        &self,
        request_id: &str,
        subject: impl Into<String>,
        scopes: Vec<String>,
    ) -> Response<McpBody> {
        let Some(p) = self.take_pending(request_id) else {
            return oauth_error::error_page("unknown or expired authorization request");
        };
        let consent = Consent::Approve {
            subject: subject.into(),
            scopes,
        };
        authorize::finish(self, &p.request, &p.held, consent).await
    }

    /// Completes a pending request as refused (`access_denied`).
    pub async fn deny(&self, request_id: &str) -> Response<McpBody> {
        let Some(p) = self.take_pending(request_id) else {
            return oauth_error::error_page("unknown or expired authorization request");
        };
        authorize::finish(self, &p.request, &p.held, Consent::Deny).await
    }

    fn take_pending(&self, id: &str) -> Option<Pending> {
        let mut m = self.inner.pending.lock().unwrap_or_else(|p| p.into_inner());
        let p = m.remove(id)?;
        (p.created.elapsed() < self.inner.config.pending_ttl).then_some(p)
    }

    /// Records a request waiting for a login page; `false` when too many are pending.
    pub(crate) fn add_pending(&self, request: AuthorizationRequest, held: authorize::Held) -> bool {
        let mut m = self.inner.pending.lock().unwrap_or_else(|p| p.into_inner());
        if m.len() >= self.inner.config.max_pending {
            m.retain(|_, p| p.created.elapsed() < self.inner.config.pending_ttl);
            if m.len() >= self.inner.config.max_pending {
                return false;
            }
        }
        m.insert(
            request.request_id.clone(),
            Pending {
                request,
                held,
                created: tokio::time::Instant::now(),
            },
        );
        true
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
    /// The token and registration rate limits are kept per peer address, read from a
    /// [`SocketAddr`](std::net::SocketAddr) in the request's extensions ([`AuthHttpServer`]
    /// puts it there); a server mounted elsewhere should insert it too, or every caller
    /// shares one bucket.
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
        match rest {
            "/jwks" => get_json(&method, &self.jwks(), "max-age=60"),
            "/authorize" => authorize::authorize(self, req).await,
            "/token" => token::token(self, req).await,
            "/register" => register::register(self, req).await,
            "/revoke" => revoke::revoke(self, req).await,
            _ => not_found(),
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

/// Whether the URL's host is a loopback name or address.
pub(crate) fn is_loopback_url(u: &url::Url) -> bool {
    match u.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}
