//! OAuth 2.1 resource-server authorization for the Streamable HTTP server (feature `auth`).
//!
//! - [`TokenVerifier`]: turns a bearer token into a [`Principal`] or an [`AuthError`].
//!   [`JwtVerifier`] checks JWT access tokens against a JWKS (fetched, cached, re-fetched on
//!   an unknown `kid` and periodically); [`StaticVerifier`] maps fixed tokens to principals
//!   (tests, development).
//! - [`AuthConfig`]: the resource's canonical URL (RFC 8707 audience), its authorization
//!   servers, the scopes every request needs and the per-method / per-tool scope map, and the
//!   verifier. Set it with [`HttpConfig::auth`](crate::http::HttpConfig::auth).
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
//!   full set of scopes the operation needs. The scope map is checked after the body is read:
//!   [`AuthConfig::method_scopes`] by JSON-RPC method, [`AuthConfig::tool_scopes`] by the
//!   `name` of a `tools/call` (every message of a batch is checked);
//! - records the [`Principal`] in the request's extensions, where handlers read it through
//!   [`RequestContext::principal`](crate::RequestContext::principal) or the
//!   [`Principal`] tool extractor, and records the [`CallerId`](crate::CallerId)
//!   (its [`binding_key`](Principal::binding_key): issuer, subject, client) to which
//!   handshake-era sessions and 2026-07-28 `requestState`s are bound — a session used with
//!   another principal's token is 404, as if unknown.
//!
//! [`serve_http`](crate::http::serve_http) also serves the RFC 9728 metadata at
//! `/.well-known/oauth-protected-resource` and at the path-suffixed
//! `/.well-known/oauth-protected-resource<endpoint path>`; a service mounted elsewhere gets
//! the document from [`AuthConfig::metadata`].
//!
//! Tokens are never logged: [`Principal`] holds no token, and the `Debug` output of the
//! verifiers and of [`Principal`]'s claims is redacted.

mod config;
mod fetch;
mod jwt;

use std::collections::BTreeSet;
use std::fmt;
use std::time::SystemTime;

use ferromcp_dispatch::BoxFuture;
use serde_json::{Map, Value};

pub use config::{AuthConfig, ProtectedResourceMetadata, ScopeImplies};
pub use jwt::{
    DEFAULT_JWKS_MIN_REFETCH, DEFAULT_JWKS_REFRESH, DEFAULT_LEEWAY, JwtVerifier, JwtVerifierBuilder,
};

/// The authenticated caller of a request: who the token was issued to and what it allows.
#[derive(Clone, PartialEq)]
#[non_exhaustive]
pub struct Principal {
    /// The token's subject (`sub`).
    pub subject: String,
    /// The issuer (`iss`), when known.
    pub issuer: Option<String>,
    /// The OAuth client the token was issued to (`client_id`, or `azp`), when known.
    pub client_id: Option<String>,
    /// The scopes the token grants (`scope`, space-separated, or `scp`).
    pub scopes: BTreeSet<String>,
    /// The audiences the token names (`aud`).
    pub audience: Vec<String>,
    /// When the token expires (`exp`), when known.
    pub expires_at: Option<SystemTime>,
    /// Every claim of the token (values are redacted in `Debug`).
    pub claims: Map<String, Value>,
}

impl Principal {
    /// A principal with this subject and nothing else.
    pub fn new(subject: impl Into<String>) -> Self {
        Self {
            subject: subject.into(),
            issuer: None,
            client_id: None,
            scopes: BTreeSet::new(),
            audience: Vec::new(),
            expires_at: None,
            claims: Map::new(),
        }
    }

    /// Sets the issuer.
    #[must_use]
    pub fn issuer(mut self, issuer: impl Into<String>) -> Self {
        self.issuer = Some(issuer.into());
        self
    }

    /// Sets the client id.
    #[must_use]
    pub fn client_id(mut self, client_id: impl Into<String>) -> Self {
        self.client_id = Some(client_id.into());
        self
    }

    /// Adds scopes.
    #[must_use]
    pub fn scopes<I: IntoIterator<Item = S>, S: Into<String>>(mut self, scopes: I) -> Self {
        self.scopes.extend(scopes.into_iter().map(Into::into));
        self
    }

    /// Sets the audiences.
    #[must_use]
    pub fn audience<I: IntoIterator<Item = S>, S: Into<String>>(mut self, audience: I) -> Self {
        self.audience = audience.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the expiry.
    #[must_use]
    pub fn expires_at(mut self, at: SystemTime) -> Self {
        self.expires_at = Some(at);
        self
    }

    /// Sets the claims.
    #[must_use]
    pub fn claims(mut self, claims: Map<String, Value>) -> Self {
        self.claims = claims;
        self
    }

    /// Whether the token grants `scope`.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.contains(scope)
    }

    /// The identity sessions and request states are bound to: issuer, subject and client
    /// (an unambiguous JSON array), so the same subject under another issuer or client is
    /// another principal.
    pub fn binding_key(&self) -> String {
        serde_json::json!([self.issuer, self.subject, self.client_id]).to_string()
    }
}

impl fmt::Debug for Principal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Principal")
            .field("subject", &self.subject)
            .field("issuer", &self.issuer)
            .field("client_id", &self.client_id)
            .field("scopes", &self.scopes)
            .field("audience", &self.audience)
            .field("expires_at", &self.expires_at)
            .field("claims", &self.claims.keys().collect::<Vec<_>>())
            .finish()
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_redacts_claim_values() {
        let mut claims = Map::new();
        claims.insert("secret".into(), Value::String("hunter2".into()));
        let p = Principal::new("alice").claims(claims);
        let s = format!("{p:?}");
        assert!(s.contains("secret") && !s.contains("hunter2"), "{s}");
    }

    #[test]
    fn binding_key_separates_issuers_and_clients() {
        let a = Principal::new("u").issuer("https://a");
        let b = Principal::new("u").issuer("https://b");
        let c = Principal::new("u").issuer("https://a").client_id("c");
        assert_ne!(a.binding_key(), b.binding_key());
        assert_ne!(a.binding_key(), c.binding_key());
    }
}
