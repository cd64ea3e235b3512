//! [`JwtVerifier`]: JWT access tokens (RFC 9068) checked against the authorization server's
//! JWKS.
//!
//! The JWKS is fetched on first use, re-fetched when older than the refresh period (key
//! rotation; the old set stays in use if the re-fetch fails) and when a token names an
//! unknown `kid` (at most once per [`min_refetch`](JwtVerifierBuilder::min_refetch), so a
//! flood of made-up `kid`s does not become a flood of fetches). One fetch runs at a time.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use ferromcp_dispatch::BoxFuture;
use http::Uri;
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::jwk::{Jwk, JwkSet, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::{Map, Value};
use tokio::sync::{Mutex, RwLock};

use super::fetch::{self, Fetcher};
use super::{AuthError, Principal, TokenVerifier};

/// The default clock-skew allowance for `exp` and `nbf`: 30 seconds.
pub const DEFAULT_LEEWAY: Duration = Duration::from_secs(30);
/// The default age after which the JWKS is re-fetched: 5 minutes.
pub const DEFAULT_JWKS_REFRESH: Duration = Duration::from_secs(300);
/// The default shortest time between two fetches caused by unknown `kid`s: 30 seconds.
pub const DEFAULT_JWKS_MIN_REFETCH: Duration = Duration::from_secs(30);

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

/// One usable key of the set.
struct Key {
    kid: Option<String>,
    alg: Option<Algorithm>,
    key: DecodingKey,
}

struct KeySet {
    keys: Vec<Key>,
    fetched: Instant,
}

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
    refresh: Duration,
    min_refetch: Duration,
    fetcher: Fetcher,
    keys: RwLock<Option<Arc<KeySet>>>,
    /// Held while fetching; remembers when the last fetch started.
    fetching: Mutex<Option<Instant>>,
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

    /// Sets the shortest time between fetches caused by unknown `kid`s (default 30 s).
    pub fn min_refetch(mut self, min_refetch: Duration) -> Self {
        self.min_refetch = min_refetch;
        self
    }

    /// Sets the JWKS request timeout (default 10 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The verifier; fails on a JWKS URL that is not `https` (or `http` to a loopback
    /// host), or when TLS cannot be set up.
    pub fn build(self) -> Result<JwtVerifier, String> {
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
        Ok(JwtVerifier {
            issuer: self.issuer,
            audiences: self.audiences,
            jwks_url,
            algorithms,
            leeway: self.leeway,
            refresh: self.refresh,
            min_refetch: self.min_refetch,
            fetcher: Fetcher::new(self.timeout)?,
            keys: RwLock::new(None),
            fetching: Mutex::new(None),
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
            timeout: Duration::from_secs(10),
        }
    }

    /// The key set in use, fetching it when there is none or it is older than the refresh
    /// period (a failed periodic re-fetch keeps the old set).
    async fn current(&self) -> Result<Arc<KeySet>, AuthError> {
        let cached = self.keys.read().await.clone();
        match cached {
            Some(set) if set.fetched.elapsed() < self.refresh => Ok(set),
            Some(set) => match self.refetch(Some(set.fetched), Duration::ZERO).await {
                Ok(fresh) => Ok(fresh),
                Err(e) => {
                    tracing::warn!(error = %e, "JWKS re-fetch failed; keeping the old keys");
                    Ok(set)
                }
            },
            None => self.refetch(None, Duration::ZERO).await,
        }
    }

    /// Fetches the set unless another task already replaced `seen` meanwhile, or a fetch
    /// started less than `spacing` ago (then the current set is returned).
    async fn refetch(
        &self,
        seen: Option<Instant>,
        spacing: Duration,
    ) -> Result<Arc<KeySet>, AuthError> {
        let mut last = self.fetching.lock().await;
        if let Some(set) = self.keys.read().await.clone() {
            let replaced = seen.is_none_or(|s| set.fetched > s);
            let too_soon = last.is_some_and(|l| l.elapsed() < spacing);
            if replaced || too_soon {
                return Ok(set);
            }
        }
        *last = Some(Instant::now());
        let body = self
            .fetcher
            .get(&self.jwks_url)
            .await
            .map_err(AuthError::Unavailable)?;
        let set: JwkSet = serde_json::from_slice(&body)
            .map_err(|e| AuthError::Unavailable(format!("JWKS is not a JWK set: {e}")))?;
        let keys: Vec<Key> = set.keys.iter().filter_map(usable).collect();
        tracing::debug!(keys = keys.len(), "JWKS fetched");
        let set = Arc::new(KeySet {
            keys,
            fetched: Instant::now(),
        });
        *self.keys.write().await = Some(set.clone());
        Ok(set)
    }

    async fn verify_token(&self, token: &str) -> Result<Principal, AuthError> {
        let header = jsonwebtoken::decode_header(token)
            .map_err(|_| AuthError::invalid("malformed token"))?;
        if !self.algorithms.contains(&header.alg) {
            return Err(AuthError::invalid("signature algorithm not accepted"));
        }
        let mut set = self.current().await?;
        let kid = header.kid.as_deref();
        if kid.is_some() && !set.keys.iter().any(|k| k.kid.as_deref() == kid) {
            set = self.refetch(Some(set.fetched), self.min_refetch).await?;
        }
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

/// A JWK usable for signatures: not marked for encryption, not a symmetric key, parseable.
fn usable(jwk: &Jwk) -> Option<Key> {
    if matches!(jwk.common.public_key_use, Some(PublicKeyUse::Encryption)) {
        return None;
    }
    if matches!(
        jwk.algorithm,
        jsonwebtoken::jwk::AlgorithmParameters::OctetKey(_)
    ) {
        return None;
    }
    if let jsonwebtoken::jwk::AlgorithmParameters::OctetKeyPair(p) = &jwk.algorithm {
        // Ed25519 only, and exactly 32 bytes: the verifier slices the key unchecked.
        let x = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(p.x.trim_end_matches('='));
        if p.curve != jsonwebtoken::jwk::EllipticCurve::Ed25519 || x.map_or(true, |x| x.len() != 32)
        {
            return None;
        }
    }
    let alg = match jwk.common.key_algorithm {
        Some(ka) => Some(Algorithm::from_str(&ka.to_string()).ok()?),
        None => None,
    };
    let key = DecodingKey::from_jwk(jwk).ok()?;
    Some(Key {
        kid: jwk.common.key_id.clone(),
        alg,
        key,
    })
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
}

impl fmt::Debug for JwtVerifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JwtVerifier")
            .field("issuer", &self.issuer)
            .field("audiences", &self.audiences)
            .field("jwks_url", &self.jwks_url)
            .field("algorithms", &self.algorithms)
            .field("leeway", &self.leeway)
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
