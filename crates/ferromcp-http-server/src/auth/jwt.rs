//! [`JwtVerifier`]: JWT access tokens (RFC 9068) checked against the authorization server's
//! JWKS.
//!
//! The JWKS is fetched on first use, re-fetched in the background when older than the
//! refresh period (key rotation) and when a token names an unknown `kid` (at most once per
//! [`min_refetch`](JwtVerifierBuilder::min_refetch), so a flood of made-up `kid`s does not
//! become a flood of fetches). One fetch runs at a time, and a request whose key is known
//! never waits for it. Failed fetches back off exponentially (from `min_refetch` up to
//! [`max_backoff`](JwtVerifierBuilder::max_backoff)); the last good set stays in use for
//! [`stale_grace`](JwtVerifierBuilder::stale_grace) past the refresh period, after which
//! tokens are refused with 503 until a fetch succeeds.

use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use ferromcp_dispatch::BoxFuture;
use http::Uri;
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, Validation};
use serde_json::{Map, Value};

use super::fetch::{self, Fetcher};
use super::jwks::{Key, KeyCache, Timing};
use super::{AuthError, Principal, TokenVerifier};

/// The default clock-skew allowance for `exp` and `nbf`: 30 seconds.
pub const DEFAULT_LEEWAY: Duration = Duration::from_secs(30);
/// The default age after which the JWKS is re-fetched: 5 minutes.
pub const DEFAULT_JWKS_REFRESH: Duration = Duration::from_secs(300);
/// The default shortest time between two fetches caused by unknown `kid`s, and the first
/// backoff step after a failed fetch: 30 seconds.
pub const DEFAULT_JWKS_MIN_REFETCH: Duration = Duration::from_secs(30);
/// The default largest wait between fetches after repeated failures: 5 minutes (the backoff
/// doubles from [`DEFAULT_JWKS_MIN_REFETCH`] up to it).
pub const DEFAULT_JWKS_MAX_BACKOFF: Duration = Duration::from_secs(300);
/// The default time past the refresh period during which the last good JWKS is still used
/// when it cannot be re-fetched: 1 hour. Long enough to ride out an authorization-server
/// outage or redeploy; short enough that a key rotated out during an outage is not trusted
/// for longer than an access token's usual lifetime. Past it, tokens are refused (503).
pub const DEFAULT_JWKS_STALE_GRACE: Duration = Duration::from_secs(3600);
/// The default JWKS request timeout, which also bounds how long a request waits for a
/// fetch: 10 seconds.
pub const DEFAULT_JWKS_TIMEOUT: Duration = Duration::from_secs(10);

/// The signature algorithms accepted by default: the asymmetric ones (never `HS*`: a JWKS
/// names public keys).
const DEFAULT_ALGORITHMS: [Algorithm; 9] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

/// Verifies JWT access tokens: signature (RS*/PS*/ES256/ES384/EdDSA) against the JWKS,
/// `exp` (required) and `nbf` with a small leeway, `iss` equal to the configured issuer,
/// `aud` naming the configured audience (this server's canonical resource URL, RFC 8707),
/// and a `sub`. Scopes are read from `scope` (space-separated) or `scp`.
///
/// ```no_run
/// use ferromcp_http_server::auth::JwtVerifier;
///
/// let verifier = JwtVerifier::builder(
///     "https://auth.example.com",
///     "https://auth.example.com/.well-known/jwks.json",
///     "https://mcp.example.com/mcp",
/// )
/// .build()
/// .expect("valid settings");
/// ```
pub struct JwtVerifier {
    issuer: String,
    audiences: Vec<String>,
    jwks_url: Uri,
    algorithms: Vec<Algorithm>,
    leeway: Duration,
    timing: Timing,
    keys: KeyCache,
}

/// Builds a [`JwtVerifier`].
#[derive(Debug, Clone)]
#[must_use]
pub struct JwtVerifierBuilder {
    issuer: String,
    audiences: Vec<String>,
    jwks_url: String,
    algorithms: Vec<Algorithm>,
    leeway: Duration,
    refresh: Duration,
    min_refetch: Duration,
    max_backoff: Duration,
    stale_grace: Duration,
    timeout: Duration,
}

impl JwtVerifierBuilder {
    /// Also accepts tokens naming `audience` (e.g. the resource URL with another spelling).
    pub fn audience(mut self, audience: impl Into<String>) -> Self {
        self.audiences.push(audience.into());
        self
    }

    /// Replaces the accepted signature algorithms (`HS*` are always refused).
    pub fn algorithms(mut self, algorithms: impl IntoIterator<Item = Algorithm>) -> Self {
        self.algorithms = algorithms.into_iter().collect();
        self
    }

    /// Sets the clock-skew allowance for `exp` and `nbf` (default 30 s).
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway;
        self
    }

    /// Sets the age after which the JWKS is re-fetched (default 5 minutes).
    pub fn refresh(mut self, refresh: Duration) -> Self {
        self.refresh = refresh;
        self
    }

    /// Sets the shortest time between fetches caused by unknown `kid`s, which is also the
    /// first backoff step after a failed fetch (default 30 s).
    pub fn min_refetch(mut self, min_refetch: Duration) -> Self {
        self.min_refetch = min_refetch;
        self
    }

    /// Sets the largest wait between fetches after repeated failures (default 5 minutes;
    /// the wait doubles from [`min_refetch`](Self::min_refetch) up to it).
    pub fn max_backoff(mut self, max_backoff: Duration) -> Self {
        self.max_backoff = max_backoff;
        self
    }

    /// Sets how long past the refresh period the last good JWKS is still used when it cannot
    /// be re-fetched (default 1 hour). Past it, tokens are refused with 503 until a fetch
    /// succeeds.
    pub fn stale_grace(mut self, stale_grace: Duration) -> Self {
        self.stale_grace = stale_grace;
        self
    }

    /// Sets the JWKS request timeout, which also bounds how long a request waits for a fetch
    /// (default 10 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The verifier; fails on a JWKS URL that is not `https` (or `http` to a loopback
    /// host), or when TLS cannot be set up.
    pub fn build(self) -> Result<JwtVerifier, String> {
        // jsonwebtoken's cryptography: ring, unless the application installed another provider.
        ferromcp_jwt::install();
        let jwks_url: Uri = self
            .jwks_url
            .parse()
            .map_err(|e| format!("invalid JWKS URL: {e}"))?;
        if !fetch::allowed(&jwks_url) {
            return Err("the JWKS URL must be https (or http to a loopback host)".to_owned());
        }
        let algorithms: Vec<Algorithm> = self
            .algorithms
            .into_iter()
            .filter(|a| !matches!(a, Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512))
            .collect();
        if algorithms.is_empty() {
            return Err("no asymmetric signature algorithm accepted".to_owned());
        }
        let timing = Timing {
            refresh: self.refresh,
            min_refetch: self.min_refetch,
            max_backoff: self.max_backoff,
            stale_grace: self.stale_grace,
            timeout: self.timeout,
        };
        let fetcher = Fetcher::new(self.timeout)?;
        Ok(JwtVerifier {
            issuer: self.issuer,
            audiences: self.audiences,
            keys: KeyCache::new(jwks_url.clone(), fetcher, timing),
            jwks_url,
            algorithms,
            leeway: self.leeway,
            timing,
        })
    }
}

impl JwtVerifier {
    /// A builder: tokens must be issued by `issuer` (`iss`, compared exactly), signed by a
    /// key of the JWKS at `jwks_url`, and name `audience` (this MCP endpoint's canonical
    /// URL) in `aud`.
    pub fn builder(
        issuer: impl Into<String>,
        jwks_url: impl Into<String>,
        audience: impl Into<String>,
    ) -> JwtVerifierBuilder {
        JwtVerifierBuilder {
            issuer: issuer.into(),
            audiences: vec![audience.into()],
            jwks_url: jwks_url.into(),
            algorithms: DEFAULT_ALGORITHMS.to_vec(),
            leeway: DEFAULT_LEEWAY,
            refresh: DEFAULT_JWKS_REFRESH,
            min_refetch: DEFAULT_JWKS_MIN_REFETCH,
            max_backoff: DEFAULT_JWKS_MAX_BACKOFF,
            stale_grace: DEFAULT_JWKS_STALE_GRACE,
            timeout: DEFAULT_JWKS_TIMEOUT,
        }
    }

    async fn verify_token(&self, token: &str) -> Result<Principal, AuthError> {
        ferromcp_jwt::install();
        let header = jsonwebtoken::decode_header(token)
            .map_err(|_| AuthError::invalid("malformed token"))?;
        if !self.algorithms.contains(&header.alg) {
            return Err(AuthError::invalid("signature algorithm not accepted"));
        }
        let kid = header.kid.as_deref();
        let set = self.keys.keys_for(kid).await?;
        let candidates: Vec<&Key> = set
            .keys
            .iter()
            .filter(|k| kid.is_none() || k.kid.as_deref() == kid)
            .filter(|k| k.alg.is_none_or(|a| a == header.alg))
            .collect();
        if candidates.is_empty() {
            return Err(AuthError::invalid("no key for the token's kid"));
        }
        let mut validation = Validation::new(header.alg);
        validation.algorithms = vec![header.alg];
        validation.leeway = self.leeway.as_secs();
        validation.validate_exp = true;
        validation.validate_nbf = true;
        validation.set_issuer(&[&self.issuer]);
        validation.set_audience(&self.audiences);
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        let mut last = AuthError::invalid("bad signature");
        for key in candidates {
            match jsonwebtoken::decode::<Map<String, Value>>(token, &key.key, &validation) {
                Ok(data) => return principal(data.claims, self.leeway),
                Err(e) => {
                    let why = describe(e.kind());
                    last = AuthError::invalid(why);
                    if !matches!(e.kind(), ErrorKind::InvalidSignature) {
                        break;
                    }
                }
            }
        }
        Err(last)
    }
}

fn describe(kind: &ErrorKind) -> &'static str {
    match kind {
        ErrorKind::ExpiredSignature => "token expired",
        ErrorKind::ImmatureSignature => "token not yet valid",
        ErrorKind::InvalidIssuer => "wrong issuer",
        ErrorKind::InvalidAudience => "token not issued for this resource",
        ErrorKind::InvalidSignature => "bad signature",
        ErrorKind::MissingRequiredClaim(_) => "a required claim is missing",
        ErrorKind::InvalidAlgorithm => "algorithm does not match the key",
        _ => "malformed token",
    }
}

/// The latest `exp` or `iat` accepted: 9999-12-31T23:59:59Z. A token that claims a later one
/// is refused (it is absurd, and past it time arithmetic may overflow).
const MAX_NUMERIC_DATE: u64 = 253_402_300_799;

/// A NumericDate claim (`exp`, `iat`) as a time; `Ok(None)` when absent or not an integer
/// (the signature check already validated `exp`'s presence and value), an error when it
/// names a time past [`MAX_NUMERIC_DATE`].
fn numeric_date(claims: &Map<String, Value>, key: &str) -> Result<Option<SystemTime>, AuthError> {
    match claims.get(key).and_then(Value::as_u64) {
        None => Ok(None),
        Some(s) if s > MAX_NUMERIC_DATE => Err(AuthError::invalid(format!(
            "the token's {key} is out of range"
        ))),
        Some(s) => Ok(UNIX_EPOCH.checked_add(Duration::from_secs(s))),
    }
}

/// The principal a validated claim set describes. An `exp` or `iat` past
/// [`MAX_NUMERIC_DATE`], or an `iat` in the future (beyond `leeway`), is refused.
fn principal(claims: Map<String, Value>, leeway: Duration) -> Result<Principal, AuthError> {
    if let Some(issued) = numeric_date(&claims, "iat")?
        && SystemTime::now()
            .checked_add(leeway)
            .is_some_and(|latest| issued > latest)
    {
        return Err(AuthError::invalid("the token was issued in the future"));
    }
    let text = |k: &str| claims.get(k).and_then(Value::as_str).map(str::to_owned);
    let subject = text("sub").ok_or_else(|| AuthError::invalid("sub is not a string"))?;
    let mut p = Principal::new(subject);
    p.issuer = text("iss");
    p.client_id = text("client_id").or_else(|| text("azp"));
    let scopes: Vec<String> = match claims.get("scope").or_else(|| claims.get("scp")) {
        Some(Value::String(s)) => s.split_whitespace().map(str::to_owned).collect(),
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    };
    p.scopes = scopes.into_iter().collect();
    p.audience = match claims.get("aud") {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    };
    p.expires_at = numeric_date(&claims, "exp")?;
    p.claims = claims;
    Ok(p)
}

impl TokenVerifier for JwtVerifier {
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Principal, AuthError>> {
        Box::pin(self.verify_token(token))
    }

    /// The time until the JWKS may be fetched again (the backoff after failed fetches), or
    /// the fetch timeout while a fetch is in flight.
    fn retry_after(&self) -> Option<Duration> {
        Some(self.keys.retry_after())
    }
}

impl fmt::Debug for JwtVerifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JwtVerifier")
            .field("issuer", &self.issuer)
            .field("audiences", &self.audiences)
            .field("jwks_url", &self.jwks_url)
            .field("algorithms", &self.algorithms)
            .field("leeway", &self.leeway)
            .field("timing", &self.timing)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builder_refuses_plain_http_off_loopback_and_hmac_only() {
        let b = JwtVerifier::builder("https://as", "http://as.example/jwks", "https://rs/mcp");
        assert!(b.build().is_err());
        let b = JwtVerifier::builder("https://as", "http://127.0.0.1:1/jwks", "https://rs/mcp")
            .algorithms([Algorithm::HS256]);
        assert!(b.build().is_err());
    }

    #[test]
    fn scopes_from_scope_or_scp() {
        let c = serde_json::json!({"sub":"u","scope":"a b","aud":["x","y"],"exp":4_000_000_000u64});
        let Value::Object(m) = c else { return };
        let p = principal(m, DEFAULT_LEEWAY).ok();
        assert!(
            p.as_ref()
                .is_some_and(|p| p.has_scope("a") && p.has_scope("b"))
        );
        assert_eq!(p.map(|p| p.audience.len()), Some(2));
        let c = serde_json::json!({"sub":"u","scp":["c"]});
        let Value::Object(m) = c else { return };
        assert!(principal(m, DEFAULT_LEEWAY).is_ok_and(|p| p.has_scope("c")));
    }
}
