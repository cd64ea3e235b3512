//! OAuth 2.1 authorization for the HTTP transport (`oauth` feature): the MCP
//! authorization flow of the 2025-11-25 revision and its extensions.
//!
//! [`OAuthProvider`] is the usual entry: attached with
//! [`HttpTransport::auth`](crate::HttpTransport::auth), it puts the credentials on every
//! request (POSTs, the GET streams, the session DELETE; never on another origin), runs the
//! flow on a 401 and retries, and steps up on a 403 `insufficient_scope` (bounded by
//! [`MAX_AUTH_RETRIES`](crate::transport::http::MAX_AUTH_RETRIES) per request, and never for
//! scopes already granted). [`authorize`] runs the flow up front instead, from an
//! `initialize` probe.
//!
//! The flow: on a 401, discover the protected-resource metadata (RFC 9728: `resource_metadata`
//! from `WWW-Authenticate` — only on the MCP server's origin —, else the path-suffixed then the
//! root well-known URL; a server with none gets the 2025-03-26 discovery), check its `resource`
//! against the server URL, discover the authorization server's metadata (RFC 8414 then OpenID
//! Connect discovery, in the spec's order) and check its `issuer`, choose the scope (the
//! challenge's, else `scopes_supported`), then run the configured [`Grant`]:
//!
//! - [`Grant::AuthorizationCode`] (the default): the client is identified in the spec's
//!   order — pre-registered [`ClientCredentials`], else a client ID metadata document URL
//!   ([`OAuthConfig::client_metadata_url`], when the server advertises
//!   `client_id_metadata_document_supported`), else dynamic client registration (RFC 7591) —
//!   then the authorization request with PKCE S256 (a server without S256 is refused) and
//!   `resource` goes through an [`AuthorizationHandler`], the redirect's `state` and RFC 9207
//!   `iss` are checked, and the code is exchanged.
//! - [`Grant::ClientCredentials`] (RFC 6749 §4.4, SEP-1046), with a client secret or a
//!   private key (`private_key_jwt`, RFC 7523 §2.2, ES256 or RS256).
//! - [`Grant::JwtBearer`] (RFC 7523 §2.1) with an assertion from elsewhere, such as a
//!   workload identity token (SEP-1933).
//! - [`Grant::EnterpriseManaged`] (SEP-990): an RFC 8693 token exchange of the enterprise
//!   IdP's ID token for an identity assertion JWT authorization grant (ID-JAG) at the IdP,
//!   then the JWT bearer grant with it at the authorization server.
//!
//! Token requests carry `resource` (RFC 8707) and authenticate with `client_secret_basic`,
//! `client_secret_post`, `private_key_jwt` or `none`. When the authorization server lists
//! ES256 in `dpop_signing_alg_values_supported` (and [`OAuthConfig::dpop`] is on), tokens are
//! DPoP-bound (RFC 9449): a fresh P-256 key per provider, a proof on the token request and on
//! every request to the MCP server (`Authorization: DPoP`, `ath`), and a server-provided
//! `DPoP-Nonce` is retried with (`use_dpop_nonce`, bounded) at both servers.
//!
//! Tokens go to a [`TokenStore`] under the MCP server URL, with their expiry. The provider
//! refreshes a token [`OAuthConfig::refresh_margin`] before it expires (the `refresh_token`
//! grant, or the non-interactive grant again), and on a 401 tries the `refresh_token` grant
//! once before running the whole flow. Every endpoint must be `https` except on loopback
//! hosts. When the MCP server is on a public address, the flow's own fetches connect only to
//! public addresses (checked at connect time on the resolved addresses: no loopback, private,
//! link-local or cloud-metadata address); see [`AddressPolicy`].

mod discovery;
mod flow;
mod guard;
mod headless;
mod jwt;
mod loopback;
mod provider;
mod token;

use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::transport::http::HttpClientConfig;

pub use guard::AddressPolicy;
pub use headless::{FlowHttp, RedirectReadingHandler};
pub use jwt::{ClientKey, SigningAlgorithm};
pub use loopback::{DEFAULT_LOOPBACK_MAX_HEAD, DEFAULT_LOOPBACK_TIMEOUT, LoopbackHandler};
pub use provider::OAuthProvider;

/// The default [`OAuthConfig::max_response_size`]: 256 KiB.
pub const DEFAULT_MAX_RESPONSE_SIZE: usize = 256 * 1024;
/// The default [`OAuthConfig::exchange_timeout`]: 10 s.
pub const DEFAULT_EXCHANGE_TIMEOUT: Duration = Duration::from_secs(10);
/// The default [`OAuthConfig::refresh_margin`]: 60 s.
pub const DEFAULT_REFRESH_MARGIN: Duration = Duration::from_secs(60);

/// Why the authorization flow stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OAuthError {
    /// A URL is malformed or not allowed (plain `http` off loopback, another origin).
    #[error("bad URL: {0}")]
    Url(String),
    /// An HTTP exchange failed.
    #[error("HTTP: {0}")]
    Http(String),
    /// Metadata was missing, malformed or failed a check.
    #[error("discovery: {0}")]
    Discovery(String),
    /// The authorization server refused or answered badly.
    #[error("authorization: {0}")]
    Authorization(String),
    /// A token endpoint refused the grant with an OAuth error response (`invalid_grant`,
    /// `invalid_client`, `unauthorized_client`, `invalid_scope`, …; RFC 6749 §5.2).
    #[error("refused: {0}")]
    Refused(String),
    /// The configuration cannot work (a missing credential or key, a bad key).
    #[error("configuration: {0}")]
    Config(String),
}

type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The redirect's parameters, as the authorization hook saw them.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct AuthorizationResponse {
    /// `code`.
    pub code: String,
    /// `state` (checked against the one sent).
    pub state: Option<String>,
    /// `iss` (RFC 9207), when the redirect carries it: compared with the recorded issuer.
    pub iss: Option<String>,
}

impl AuthorizationResponse {
    /// A response with `code` and `state` (no `iss`).
    pub fn new(code: impl Into<String>, state: Option<String>) -> Self {
        Self {
            code: code.into(),
            state,
            iss: None,
        }
    }

    /// Sets `iss`.
    #[must_use]
    pub fn with_iss(mut self, iss: Option<String>) -> Self {
        self.iss = iss;
        self
    }

    /// Reads `code`, `state`, `iss` (or `error`) from the redirect URL the authorization
    /// server sent the user agent to.
    pub fn from_redirect(url: &str) -> Result<Self, OAuthError> {
        let target = url::Url::parse(url)
            .map_err(|e| OAuthError::Authorization(format!("redirect URL: {e}")))?;
        let mut code = None;
        let mut state = None;
        let mut error = None;
        let mut iss = None;
        for (k, v) in target.query_pairs() {
            match k.as_ref() {
                "code" => code = Some(v.into_owned()),
                "state" => state = Some(v.into_owned()),
                "error" => error = Some(v.into_owned()),
                "iss" => iss = Some(v.into_owned()),
                _ => {}
            }
        }
        match (code, error) {
            (Some(code), _) => Ok(Self { code, state, iss }),
            (None, Some(e)) => Err(OAuthError::Authorization(format!(
                "the authorization server refused: {e}"
            ))),
            (None, None) => Err(OAuthError::Authorization(
                "the redirect carries no code".into(),
            )),
        }
    }
}

/// The application's part of the authorization-code flow: open `url` (a browser, or a
/// headless agent) and return the `code` and `state` the authorization server redirected to
/// the redirect URI with.
pub trait AuthorizationHandler: Send + Sync {
    /// Runs the user-facing step for the authorization URL.
    fn authorize<'a>(
        &'a self,
        url: &'a str,
    ) -> BoxFuture<'a, Result<AuthorizationResponse, OAuthError>>;

    /// Runs the user-facing step with the flow's own HTTP client at hand (its connection
    /// settings and address guard), for a handler that fetches the authorization URL itself:
    /// what the flow calls. By default [`authorize`](Self::authorize), which does not use it.
    fn authorize_with<'a>(
        &'a self,
        url: &'a str,
        http: &'a FlowHttp,
    ) -> BoxFuture<'a, Result<AuthorizationResponse, OAuthError>> {
        let _ = http;
        self.authorize(url)
    }
}

/// The handler of a non-interactive configuration: refuses, since no user is there.
#[derive(Debug, Default, Clone, Copy)]
struct NoInteraction;

impl AuthorizationHandler for NoInteraction {
    fn authorize<'a>(
        &'a self,
        _url: &'a str,
    ) -> BoxFuture<'a, Result<AuthorizationResponse, OAuthError>> {
        Box::pin(async {
            Err(OAuthError::Config(
                "this configuration has no authorization handler (non-interactive grant)".into(),
            ))
        })
    }
}

/// Tokens from the token endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Tokens {
    /// `access_token`.
    pub access_token: String,
    /// `token_type`: `Bearer`, or `DPoP` for a DPoP-bound token.
    pub token_type: String,
    /// `refresh_token`, when issued.
    pub refresh_token: Option<String>,
    /// `expires_in`, seconds.
    pub expires_in: Option<u64>,
    /// When the access token expires, seconds since the Unix epoch (from `expires_in` at
    /// receipt): what the provider refreshes ahead of, and what a store persists.
    pub expires_at: Option<u64>,
    /// `scope`, when given.
    pub scope: Option<String>,
}

impl Tokens {
    /// A `Bearer` access token without expiry, refresh token or scope.
    pub fn new(access_token: impl Into<String>) -> Self {
        Self {
            access_token: access_token.into(),
            token_type: "Bearer".to_owned(),
            refresh_token: None,
            expires_in: None,
            expires_at: None,
            scope: None,
        }
    }

    /// Whether the token is DPoP-bound (`token_type` `DPoP`).
    pub fn is_dpop(&self) -> bool {
        self.token_type.eq_ignore_ascii_case("dpop")
    }

    /// Whether the token expires within `margin` from now (false without an expiry).
    pub fn expires_within(&self, margin: Duration) -> bool {
        self.expires_at
            .is_some_and(|at| at <= now_secs().saturating_add(margin.as_secs()))
    }
}

/// Seconds since the Unix epoch.
fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Where tokens are kept between runs; [`MemoryTokenStore`] by default. Keys are the MCP
/// server URL the provider was made for, as parsed (`https://h` is `https://h/`). Tokens
/// are secrets: a persistent store should keep them encrypted or in the platform's keychain.
pub trait TokenStore: Send + Sync {
    /// The stored tokens for the MCP server at `server`.
    fn load(&self, server: &str) -> Option<Tokens>;
    /// Stores tokens for the MCP server at `server`.
    fn save(&self, server: &str, tokens: &Tokens);
}

/// A process-local [`TokenStore`].
#[derive(Debug, Default)]
pub struct MemoryTokenStore(Mutex<Vec<(String, Tokens)>>);

impl TokenStore for MemoryTokenStore {
    fn load(&self, server: &str) -> Option<Tokens> {
        let map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        map.iter()
            .find(|(r, _)| r == server)
            .map(|(_, t)| t.clone())
    }
    fn save(&self, server: &str, tokens: &Tokens) {
        let mut map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        map.retain(|(r, _)| r != server);
        map.push((server.to_owned(), tokens.clone()));
    }
}

/// A registered client: its `client_id` and how it authenticates at the token endpoint
/// (a secret for `client_secret_basic`/`client_secret_post`, a private key for
/// `private_key_jwt`, or nothing for a public client).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ClientCredentials {
    /// `client_id`.
    pub client_id: String,
    /// `client_secret`, for a confidential client.
    pub client_secret: Option<String>,
    /// The private key of `private_key_jwt` (RFC 7523 §2.2); preferred over the secret.
    pub private_key: Option<ClientKey>,
}

impl ClientCredentials {
    /// A public client (`none`).
    pub fn new(client_id: impl Into<String>) -> Self {
        Self {
            client_id: client_id.into(),
            client_secret: None,
            private_key: None,
        }
    }

    /// A client with a secret.
    #[must_use]
    pub fn with_secret(mut self, secret: impl Into<String>) -> Self {
        self.client_secret = Some(secret.into());
        self
    }

    /// A client that signs a JWT assertion with `key` (`private_key_jwt`).
    #[must_use]
    pub fn with_private_key(mut self, key: ClientKey) -> Self {
        self.private_key = Some(key);
        self
    }
}

/// How the client gets its tokens.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub enum Grant {
    /// The authorization-code grant with PKCE S256 through the configured
    /// [`AuthorizationHandler`] (OAuth 2.1 §4.1; MCP 2025-11-25 "Authorization Flow").
    #[default]
    AuthorizationCode,
    /// The client-credentials grant (OAuth 2.1 §4.2, SEP-1046): needs
    /// [`ClientCredentials`] with a secret or a private key.
    ClientCredentials,
    /// The JWT bearer grant (RFC 7523 §2.1) with `assertion`, a JWT issued elsewhere — such
    /// as a workload identity token (SEP-1933). A refused assertion is reported, not retried
    /// with another grant.
    JwtBearer {
        /// The JWT sent as `assertion`.
        assertion: String,
    },
    /// Enterprise-managed authorization (SEP-990).
    EnterpriseManaged(EnterpriseGrant),
}

/// The enterprise IdP side of [`Grant::EnterpriseManaged`] (SEP-990): the client exchanges
/// the user's ID token at the IdP's token endpoint (RFC 8693, `requested_token_type`
/// `urn:ietf:params:oauth:token-type:id-jag`, `audience` the authorization server's issuer,
/// `resource` the MCP server) and presents the ID-JAG to the authorization server with the
/// JWT bearer grant (RFC 7523), authenticating with its [`ClientCredentials`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct EnterpriseGrant {
    /// The IdP's token endpoint.
    pub idp_token_endpoint: String,
    /// The ID token the user got from the IdP at sign-in (`subject_token`).
    pub id_token: String,
    /// The client's `client_id` at the IdP.
    pub idp_client_id: String,
    /// The client's secret at the IdP (`client_secret_basic`), if it has one.
    pub idp_client_secret: Option<String>,
}

impl EnterpriseGrant {
    /// The IdP's token endpoint, the user's ID token and the client's id at the IdP.
    pub fn new(
        idp_token_endpoint: impl Into<String>,
        id_token: impl Into<String>,
        idp_client_id: impl Into<String>,
    ) -> Self {
        Self {
            idp_token_endpoint: idp_token_endpoint.into(),
            id_token: id_token.into(),
            idp_client_id: idp_client_id.into(),
            idp_client_secret: None,
        }
    }

    /// The client's secret at the IdP.
    #[must_use]
    pub fn with_idp_client_secret(mut self, secret: impl Into<String>) -> Self {
        self.idp_client_secret = Some(secret.into());
        self
    }
}

/// What the flow needs from the application. Build it with [`OAuthConfig::new`] (the
/// interactive authorization-code flow) or [`OAuthConfig::with_grant`] (a non-interactive
/// grant), then the `with_*` methods.
#[non_exhaustive]
pub struct OAuthConfig {
    /// How tokens are obtained (default [`Grant::AuthorizationCode`]).
    pub grant: Grant,
    /// The redirect URI registered (or to register) for the client (authorization code).
    pub redirect_uri: String,
    /// `client_name` for dynamic registration (default `ferromcp`).
    pub client_name: String,
    /// Pre-registered credentials: used first. Without them the authorization-code flow uses
    /// the client ID metadata document URL, else dynamic registration.
    pub credentials: Option<ClientCredentials>,
    /// An `https` URL serving this client's metadata document
    /// (draft-ietf-oauth-client-id-metadata-document): used as the `client_id` when the
    /// authorization server advertises `client_id_metadata_document_supported`.
    pub client_metadata_url: Option<String>,
    /// DPoP-bind tokens when the authorization server supports ES256 proofs (default on).
    pub dpop: bool,
    /// How long before expiry a token is refreshed (default [`DEFAULT_REFRESH_MARGIN`]).
    pub refresh_margin: Duration,
    /// The largest metadata, registration or token response read (default
    /// [`DEFAULT_MAX_RESPONSE_SIZE`]); a larger one fails the flow.
    pub max_response_size: usize,
    /// The bound on one HTTP exchange with a metadata, registration or token endpoint
    /// (default [`DEFAULT_EXCHANGE_TIMEOUT`]).
    pub exchange_timeout: Duration,
    /// Which addresses the flow's own fetches (metadata, registration, tokens) may connect
    /// to (default [`AddressPolicy::Auto`]: only public ones when the MCP server is on a
    /// public address). Checked at connect time on the resolved addresses.
    pub address_policy: AddressPolicy,
    /// Hosts (names or IP literals, compared case-insensitively) let through whatever they
    /// resolve to: e.g. an internal authorization server of a public MCP server.
    pub trusted_hosts: Vec<String>,
    /// How the flow's own requests connect (and those of a handler that uses [`FlowHttp`],
    /// such as [`RedirectReadingHandler`]): proxies, TLS roots and client certificate,
    /// timeouts, default headers. Give it the MCP transport's
    /// [`HttpConfig::client`](crate::transport::http::HttpConfig::client). Directly, the
    /// address policy checks every address connected to; through a proxy (which resolves
    /// names itself) only IP-literal hosts can be checked, and the proxy's own address is
    /// not (it is configuration). The same holds for a
    /// [`Connector`](crate::transport::http::Connector) of one's own
    /// ([`HttpClientConfig::connector`]): the flow's requests go through it, and only
    /// IP-literal hosts are checked, before it is called.
    pub http_client: HttpClientConfig,
    /// The authorization step (authorization code).
    pub handler: Box<dyn AuthorizationHandler>,
    /// Where tokens go (default [`MemoryTokenStore`]).
    pub store: Box<dyn TokenStore>,
}

impl std::fmt::Debug for OAuthConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthConfig")
            .field("grant", &grant_name(&self.grant))
            .field("redirect_uri", &self.redirect_uri)
            .field("client_name", &self.client_name)
            .field("client_metadata_url", &self.client_metadata_url)
            .field("dpop", &self.dpop)
            .field("address_policy", &self.address_policy)
            .field("trusted_hosts", &self.trusted_hosts)
            .finish_non_exhaustive()
    }
}

fn grant_name(g: &Grant) -> &'static str {
    match g {
        Grant::AuthorizationCode => "authorization_code",
        Grant::ClientCredentials => "client_credentials",
        Grant::JwtBearer { .. } => "jwt-bearer",
        Grant::EnterpriseManaged(_) => "enterprise-managed",
    }
}

impl OAuthConfig {
    /// The authorization-code flow: `handler` takes the user through the authorization URL
    /// and returns the redirect to `redirect_uri`.
    ///
    /// ```
    /// use ferromcp_client::oauth::{OAuthConfig, RedirectReadingHandler};
    /// let cfg = OAuthConfig::new("http://127.0.0.1:8976/callback", RedirectReadingHandler)
    ///     .with_client_name("my-agent")
    ///     .with_client_metadata_url("https://agent.example/oauth/client.json");
    /// # let _ = cfg;
    /// ```
    pub fn new(
        redirect_uri: impl Into<String>,
        handler: impl AuthorizationHandler + 'static,
    ) -> Self {
        Self {
            grant: Grant::AuthorizationCode,
            redirect_uri: redirect_uri.into(),
            client_name: "ferromcp".to_owned(),
            credentials: None,
            client_metadata_url: None,
            dpop: true,
            refresh_margin: DEFAULT_REFRESH_MARGIN,
            max_response_size: DEFAULT_MAX_RESPONSE_SIZE,
            exchange_timeout: DEFAULT_EXCHANGE_TIMEOUT,
            address_policy: AddressPolicy::Auto,
            trusted_hosts: Vec::new(),
            http_client: HttpClientConfig::default(),
            handler: Box::new(handler),
            store: Box::new(MemoryTokenStore::default()),
        }
    }

    /// A non-interactive grant (no authorization handler).
    ///
    /// ```
    /// use ferromcp_client::oauth::{ClientCredentials, Grant, OAuthConfig};
    /// let cfg = OAuthConfig::with_grant(Grant::ClientCredentials)
    ///     .with_credentials(ClientCredentials::new("svc").with_secret("s3cret"));
    /// # let _ = cfg;
    /// ```
    pub fn with_grant(grant: Grant) -> Self {
        let mut cfg = Self::new(String::new(), NoInteraction);
        cfg.grant = grant;
        cfg
    }

    /// Sets `client_name` (dynamic registration).
    #[must_use]
    pub fn with_client_name(mut self, name: impl Into<String>) -> Self {
        self.client_name = name.into();
        self
    }

    /// Sets pre-registered credentials.
    #[must_use]
    pub fn with_credentials(mut self, credentials: ClientCredentials) -> Self {
        self.credentials = Some(credentials);
        self
    }

    /// Sets the client ID metadata document URL.
    #[must_use]
    pub fn with_client_metadata_url(mut self, url: impl Into<String>) -> Self {
        self.client_metadata_url = Some(url.into());
        self
    }

    /// Turns DPoP on (when supported) or off.
    #[must_use]
    pub fn with_dpop(mut self, on: bool) -> Self {
        self.dpop = on;
        self
    }

    /// Sets how long before expiry a token is refreshed.
    #[must_use]
    pub fn with_refresh_margin(mut self, margin: Duration) -> Self {
        self.refresh_margin = margin;
        self
    }

    /// Sets the largest response read from an OAuth endpoint.
    #[must_use]
    pub fn with_max_response_size(mut self, bytes: usize) -> Self {
        self.max_response_size = bytes;
        self
    }

    /// Sets the bound on one HTTP exchange with an OAuth endpoint.
    #[must_use]
    pub fn with_exchange_timeout(mut self, timeout: Duration) -> Self {
        self.exchange_timeout = timeout;
        self
    }

    /// Sets which addresses the flow's own fetches may connect to.
    #[must_use]
    pub fn with_address_policy(mut self, policy: AddressPolicy) -> Self {
        self.address_policy = policy;
        self
    }

    /// Lets `host` (a name or an IP literal) through the address policy, whatever it
    /// resolves to.
    #[must_use]
    pub fn with_trusted_host(mut self, host: impl Into<String>) -> Self {
        self.trusted_hosts.push(host.into());
        self
    }

    /// Sets how the flow's own requests connect (the MCP transport's settings, typically).
    #[must_use]
    pub fn with_http_client(mut self, config: HttpClientConfig) -> Self {
        self.http_client = config;
        self
    }

    /// Sets the token store.
    #[must_use]
    pub fn with_store(mut self, store: impl TokenStore + 'static) -> Self {
        self.store = Box::new(store);
        self
    }
}

/// Runs the flow for the MCP server at `server_url`: `Ok(None)` when the server did not ask
/// for authorization (no 401), `Ok(Some(tokens))` once authorized. The tokens are also saved
/// to the configured store. They are `Bearer` tokens: a DPoP-bound token is useless without
/// its key, which only an [`OAuthProvider`] keeps, so this function never asks for one.
pub async fn authorize(server_url: &str, cfg: &OAuthConfig) -> Result<Option<Tokens>, OAuthError> {
    let server = discovery::parse_url(server_url)?;
    let http = guard::client(&server, cfg).map_err(|e| OAuthError::Http(e.to_string()))?;
    let (status, www) = discovery::probe(&http, &server, discovery::Limits::of(cfg)).await?;
    if status != http::StatusCode::UNAUTHORIZED {
        return Ok(None);
    }
    let challenge = www
        .as_deref()
        .map(discovery::parse_challenge)
        .unwrap_or_default();
    // Boxed: the flow's future is some 3 KB, which would otherwise sit inside this one (and
    // in every caller's).
    let got = Box::pin(flow::flow(&http, &server, &challenge, cfg, None)).await?;
    Ok(Some(got.tokens))
}
