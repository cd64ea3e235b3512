//! [`AuthServerConfig`]: the authorization server's settings, each with a default.

use std::fmt;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use super::consent::{AutoApprove, ConsentHook};
use super::rate::{DEFAULT_AUTHORIZE_RATE_LIMIT, DEFAULT_TOKEN_RATE_LIMIT, RateLimit};
use super::store::{AuthStore, ClientRecord, InMemoryAuthStore};

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
/// The default bound on self-registered (RFC 7591) clients alive at once: 10,000. Past it,
/// registration answers 429 until unused ones expire.
pub const DEFAULT_MAX_CLIENTS: usize = 10_000;
/// The default bound on registrations from one source address (an IPv4 address or an IPv6
/// /64) within [`DEFAULT_UNUSED_CLIENT_TTL`]: 10. Past it, registration answers 429.
pub const DEFAULT_MAX_CLIENTS_PER_SOURCE: usize = 10;
/// The default lifetime of a self-registered client that has not been issued a token: 1
/// hour. Once used, it lives [`refresh_token_ttl`](AuthServerConfig::refresh_token_ttl)
/// past its last token.
pub const DEFAULT_UNUSED_CLIENT_TTL: Duration = Duration::from_secs(3600);

/// How the server reads the caller's address from a request: the key of its rate limits and
/// of the per-source registration bound (see [`AuthServerConfig::peer_address`]).
pub type PeerAddressFn = Arc<dyn Fn(&http::request::Parts) -> Option<IpAddr> + Send + Sync>;

/// The settings of an [`AuthorizationServer`](super::AuthorizationServer), each with a default.
#[derive(Clone)]
#[non_exhaustive]
pub struct AuthServerConfig {
    /// The issuer URL (`https://…`, or `http://` on loopback; no query, no fragment, no
    /// trailing slash). [`AuthHttpServer`](super::AuthHttpServer) fills in `http://<bound address>` when unset.
    pub issuer: Option<String>,
    /// The resources (RFC 8707, the MCP endpoints' canonical URLs) tokens may be issued
    /// for. A request naming another is refused (`invalid_target`); a request naming none
    /// gets the only one when there is exactly one. [`AuthHttpServer`](super::AuthHttpServer) adds its own.
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
    /// [`DEFAULT_TOKEN_RATE_LIMIT`]), shared with the revocation endpoint; the registration
    /// endpoint has its own bucket of the same size.
    pub token_rate_limit: RateLimit,
    /// The rate limit of the authorization endpoint, per peer address (default
    /// [`DEFAULT_AUTHORIZE_RATE_LIMIT`]); past it, a 429 page.
    pub authorize_rate_limit: RateLimit,
    /// How the caller's address is read (default: `None`, the
    /// [`SocketAddr`](std::net::SocketAddr) in the request's extensions, which
    /// [`AuthHttpServer`](super::AuthHttpServer) puts there). A server mounted elsewhere sets this (for axum:
    /// `parts.extensions.get::<ConnectInfo<SocketAddr>>().map(|c| c.0.ip())`, or the client
    /// address a trusted proxy reports). A request whose address cannot be read is refused
    /// with a server error (and an error log) rather than sharing one rate-limit bucket with
    /// every other caller.
    pub peer_address: Option<PeerAddressFn>,
    /// Whether `/register` (RFC 7591) is open (default `true`). Self-registered clients
    /// may use the authorization-code and refresh-token grants only, never
    /// `client_credentials`.
    pub dynamic_registration: bool,
    /// The most self-registered clients alive at once (default [`DEFAULT_MAX_CLIENTS`]).
    pub max_clients: usize,
    /// The most registrations from one source address within
    /// [`unused_client_ttl`](Self::unused_client_ttl) (default
    /// [`DEFAULT_MAX_CLIENTS_PER_SOURCE`]).
    pub max_clients_per_source: usize,
    /// How long a self-registered client lives without being issued a token (default
    /// [`DEFAULT_UNUSED_CLIENT_TTL`]).
    pub unused_client_ttl: Duration,
    /// Clients the operator registered (see [`client`](Self::client)): the only ones that
    /// may use the `client_credentials` grant.
    pub clients: Vec<ClientRecord>,
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
    /// Lets a hook that approves without a user ([`AutoApprove`]) run off loopback: an
    /// issuer or a bound address that is not loopback (default `false`: the server refuses
    /// to start, since anyone who can reach `/authorize` would get tokens).
    pub allow_auto_approve_off_loopback: bool,
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
            authorize_rate_limit: DEFAULT_AUTHORIZE_RATE_LIMIT,
            peer_address: None,
            dynamic_registration: true,
            max_clients: DEFAULT_MAX_CLIENTS,
            max_clients_per_source: DEFAULT_MAX_CLIENTS_PER_SOURCE,
            unused_client_ttl: DEFAULT_UNUSED_CLIENT_TTL,
            clients: Vec::new(),
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
            allow_auto_approve_off_loopback: false,
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

    /// Registers a client as the operator: the only way, with
    /// [`AuthorizationServer::register_client`](super::AuthorizationServer::register_client),
    /// to a client allowed the `client_credentials` grant (a token with no user behind it).
    /// The record is marked [`Registration::Operator`](super::Registration::Operator) and
    /// never expires.
    ///
    /// ```
    /// use ferromcp_auth_server::{AuthServerConfig, ClientRecord};
    ///
    /// let config = AuthServerConfig::new("https://as.example").client(
    ///     ClientRecord::confidential("batch-job", "a long random secret", vec![])
    ///         .grant_types(["client_credentials"])
    ///         .scope(["mcp"]),
    /// );
    /// # let _ = config;
    /// ```
    #[must_use]
    pub fn client(mut self, client: ClientRecord) -> Self {
        self.clients.push(client.operator());
        self
    }

    /// Sets how the caller's address is read (see
    /// [`peer_address`](Self#structfield.peer_address)).
    #[must_use]
    pub fn peer_address(
        mut self,
        read: impl Fn(&http::request::Parts) -> Option<IpAddr> + Send + Sync + 'static,
    ) -> Self {
        self.peer_address = Some(Arc::new(read));
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
        /// Sets the authorization-endpoint rate limit.
        authorize_rate_limit: RateLimit,
        /// Opens or closes dynamic registration.
        dynamic_registration: bool,
        /// Sets the bound on self-registered clients alive at once.
        max_clients: usize,
        /// Sets the bound on registrations per source address.
        max_clients_per_source: usize,
        /// Sets the lifetime of self-registered clients never issued a token.
        unused_client_ttl: Duration,
        /// Lets an approve-everything consent hook run off loopback (see the field).
        allow_auto_approve_off_loopback: bool,
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
            .field("authorize_rate_limit", &self.authorize_rate_limit)
            .field("max_clients", &self.max_clients)
            .field("max_clients_per_source", &self.max_clients_per_source)
            .finish_non_exhaustive()
    }
}
