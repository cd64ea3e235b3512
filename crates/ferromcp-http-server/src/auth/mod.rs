//! OAuth 2.1 resource-server authorization for the Streamable HTTP server (feature `auth`).
//! [`Principal`], what a verified token says of its caller, is the server crate's
//! ([`ferromcp_server::Principal`]), so handlers read it without depending on HTTP.
//!
//! - [`TokenVerifier`]: turns a bearer token into a [`Principal`] or an [`AuthError`].
//!   [`JwtVerifier`] checks JWT access tokens against a JWKS (fetched, cached, re-fetched on
//!   an unknown `kid` and periodically in the background, with backoff and a bounded grace
//!   for the last good keys when the JWKS is down); [`StaticVerifier`] maps fixed tokens to principals
//!   (tests, development).
//! - [`AuthConfig`]: the resource's canonical URL (RFC 8707 audience), its authorization
//!   servers, the scopes every request needs and the per-method / per-tool scope map, and the
//!   verifier. Set it with [`HttpConfig::auth`](crate::HttpConfig::auth).
//!
//! With auth on, the HTTP server, on **every** request (after the `Host`/`Origin` checks,
//! before any session lookup, body read or dispatch):
//!
//! - refuses a token in the query string (`access_token=`): with no `Authorization` header it
//!   is ignored (401 as unauthenticated), with one it is a 400 `invalid_request`;
//! - answers a missing credential with 401 and
//!   `WWW-Authenticate: Bearer resource_metadata="…", scope="…"` (no `error`, RFC 6750 §3.1);
//! - answers a malformed header (not `Bearer`, empty, two `Authorization` headers) or a token
//!   the verifier rejects with 401 and `error="invalid_token"`; a verifier that cannot decide
//!   (JWKS unreachable) with 503;
//! - answers a token lacking a required scope with 403 `error="insufficient_scope"` and the
//!   full set of scopes the operation needs. The scope map is checked after the body is read,
//!   on the message the transport decoded (the one it dispatches, so the check and the wire
//!   never disagree on depth limits or shapes): [`AuthConfig::method_scopes`] by JSON-RPC
//!   method, [`AuthConfig::tool_scopes`] by the `name` of a `tools/call`. A `tools/call` whose
//!   tool cannot be read (no params, `name` not a string) needs every tool scope; a body that
//!   does not decode is never dispatched (the transport's 400);
//! - records the [`Principal`] in the request's extensions, where handlers read it through
//!   [`RequestContext::principal`](ferromcp_server::RequestContext::principal) or the
//!   [`Principal`] tool extractor, and records the [`CallerId`](ferromcp_server::CallerId)
//!   (its [`binding_key`](Principal::binding_key): issuer, subject, client) to which
//!   handshake-era sessions and 2026-07-28 `requestState`s are bound — a session used with
//!   another principal's token is 404, as if unknown.
//!
//! [`serve_http`](crate::serve_http) also serves the RFC 9728 metadata at
//! `/.well-known/oauth-protected-resource` and at the path-suffixed
//! `/.well-known/oauth-protected-resource<endpoint path>`; a service mounted elsewhere gets
//! the document from [`AuthConfig::metadata`].
//!
//! Tokens are never logged: [`Principal`] holds no token, and the `Debug` output of the
//! verifiers and of [`Principal`]'s claims is redacted.

pub(crate) mod check;
pub use check::metadata_response;
mod config;
mod fetch;
mod jwks;
mod jwt;

use std::fmt;
use std::time::SystemTime;

use ferromcp_dispatch::BoxFuture;
pub use ferromcp_server::Principal;

pub use config::{AuthConfig, ProtectedResourceMetadata, ScopeImplies};
pub use jwt::{
    DEFAULT_JWKS_MAX_BACKOFF, DEFAULT_JWKS_MIN_REFETCH, DEFAULT_JWKS_REFRESH,
    DEFAULT_JWKS_STALE_GRACE, DEFAULT_JWKS_TIMEOUT, DEFAULT_LEEWAY, JwtVerifier,
    JwtVerifierBuilder,
};

/// Why a token was not accepted. The messages never contain the token.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AuthError {
    /// The token is malformed, expired, not yet valid, wrongly signed, from another issuer,
    /// for another audience, or unknown: 401 `invalid_token`.
    #[error("invalid token: {0}")]
    InvalidToken(String),
    /// The token could not be checked now (e.g. the JWKS is unreachable): 503.
    #[error("token verification unavailable: {0}")]
    Unavailable(String),
}

impl AuthError {
    /// An [`AuthError::InvalidToken`].
    pub fn invalid(why: impl Into<String>) -> Self {
        Self::InvalidToken(why.into())
    }
}

/// Checks bearer tokens. Called on every authenticated request.
///
/// A verifier checks the token's integrity, expiry, issuer and audience (the token must be
/// issued for this resource server, RFC 8707); the HTTP layer checks scopes.
pub trait TokenVerifier: Send + Sync + 'static {
    /// Verifies `token` (the text after `Bearer `).
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Principal, AuthError>>;

    /// After an [`AuthError::Unavailable`], how long until a token may be checked again: sent
    /// to the client as `Retry-After` (whole seconds, at least 1) on the 503. `None` (the
    /// default) sends no `Retry-After`.
    fn retry_after(&self) -> Option<std::time::Duration> {
        None
    }
}

/// A verifier with a fixed table of tokens (tests and development; no expiry or audience
/// beyond what the table says). Tokens are compared in constant time per entry.
#[derive(Clone, Default)]
pub struct StaticVerifier {
    tokens: Vec<(String, Principal)>,
}

impl StaticVerifier {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// Accepts `token` as `principal`.
    #[must_use]
    pub fn token(mut self, token: impl Into<String>, principal: Principal) -> Self {
        self.tokens.push((token.into(), principal));
        self
    }
}

impl fmt::Debug for StaticVerifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StaticVerifier")
            .field("tokens", &self.tokens.len())
            .finish()
    }
}

/// Constant-time equality of two byte strings (the length is not hidden).
fn ct_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

impl TokenVerifier for StaticVerifier {
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Principal, AuthError>> {
        let found = self
            .tokens
            .iter()
            .filter(|(t, _)| ct_eq(t.as_bytes(), token.as_bytes()))
            .map(|(_, p)| p.clone())
            .next_back();
        let now = SystemTime::now();
        Box::pin(async move {
            match found {
                Some(p) if p.expires_at.is_some_and(|e| e <= now) => {
                    Err(AuthError::invalid("token expired"))
                }
                Some(p) => Ok(p),
                None => Err(AuthError::invalid("unknown token")),
            }
        })
    }
}
