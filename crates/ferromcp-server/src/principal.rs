//! [`Principal`]: the authenticated caller of a request, as a verified access token
//! describes it. An authentication layer (the HTTP server's resource-server check, in
//! `ferromcp-http-server`, which the kernel carries into the request context) or a middleware
//! layer (on any transport) puts it in the request context's extensions; handlers read it with
//! [`RequestContext::principal`](crate::RequestContext::principal) or the `Principal` tool
//! extractor.

use std::collections::BTreeSet;
use std::fmt;
use std::time::SystemTime;

use serde_json::{Map, Value};

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
