//! Client authentication at the token and revocation endpoints: `client_secret_basic`,
//! `client_secret_post`, `private_key_jwt` (RFC 7523 assertions, single use) and `none`.
//! A client uses exactly one method, the one it registered.

use std::collections::HashMap;
use std::sync::Mutex;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use http::header::AUTHORIZATION;
use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::Value;

use super::AuthorizationServer;
use super::oauth_error::OAuthError;
use super::request::{Params, find_client};
use super::store::{ClientRecord, now_secs};

/// The assertion signing algorithms accepted for `private_key_jwt`.
pub(crate) const ASSERTION_ALGS: [&str; 6] = ["ES256", "ES384", "RS256", "PS256", "EdDSA", "RS512"];

const JWT_BEARER: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
/// The longest an assertion may live (from now to its `exp`).
const MAX_ASSERTION_LIFETIME: u64 = 600;
/// The most assertion ids remembered (replay protection) before expired ones are dropped.
const MAX_SEEN: usize = 100_000;

/// Assertion `jti`s seen, until their `exp`.
#[derive(Default)]
pub(crate) struct SeenAssertions(Mutex<HashMap<String, u64>>);

impl SeenAssertions {
    /// Records `key`; `false` when it was seen already (or the table is full of live ids).
    fn first_use(&self, key: String, exp: u64) -> bool {
        let mut m = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let now = now_secs();
        if m.len() >= MAX_SEEN {
            m.retain(|_, e| *e >= now);
            if m.len() >= MAX_SEEN {
                return false;
            }
        }
        match m.get(&key) {
            Some(e) if *e >= now => false,
            _ => {
                m.insert(key, exp);
                true
            }
        }
    }
}

/// Constant-time equality of two byte strings (the length is not hidden).
pub(crate) fn ct_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn pct_decode(s: &str) -> String {
    url::form_urlencoded::parse(format!("x={s}").as_bytes())
        .next()
        .map(|(_, v)| v.into_owned())
        .unwrap_or_default()
}

/// Authenticates the client of a token or revocation request.
pub(crate) async fn authenticate(
    server: &AuthorizationServer,
    parts: &http::request::Parts,
    form: &Params,
) -> Result<ClientRecord, OAuthError> {
    let mut headers = parts.headers.get_all(AUTHORIZATION).iter();
    let basic = match headers.next() {
        None => None,
        Some(_) if headers.next().is_some() => {
            return Err(OAuthError::invalid_request(
                "more than one Authorization header",
            ));
        }
        Some(v) => {
            let text = v.to_str().unwrap_or_default();
            let (scheme, rest) = text.split_once(' ').unwrap_or((text, ""));
            if !scheme.eq_ignore_ascii_case("basic") {
                return Err(OAuthError::invalid_request(
                    "only Basic client authentication goes in the Authorization header",
                ));
            }
            let decoded = STANDARD
                .decode(rest.trim())
                .ok()
                .and_then(|b| String::from_utf8(b).ok())
                .ok_or_else(|| basic_failure("malformed Basic credentials"))?;
            let (id, secret) = decoded
                .split_once(':')
                .ok_or_else(|| basic_failure("malformed Basic credentials"))?;
            Some((pct_decode(id), pct_decode(secret)))
        }
    };
    let post = form.get("client_secret");
    let assertion = form.get("client_assertion");
    let count = usize::from(basic.is_some())
        + usize::from(post.is_some())
        + usize::from(assertion.is_some());
    if count > 1 {
        return Err(OAuthError::invalid_request(
            "use exactly one client authentication method",
        ));
    }
    let form_id = form.get("client_id");
    let (client, method) = if let Some((id, secret)) = basic {
        if form_id.is_some_and(|f| *f != id) {
            return Err(basic_failure(
                "client_id differs from the authenticated client",
            ));
        }
        let c = load(server, &id).await.map_err(|mut e| {
            e.basic_challenge = true;
            e
        })?;
        check_secret(&c, &secret).map_err(|mut e| {
            e.basic_challenge = true;
            e
        })?;
        (c, "client_secret_basic")
    } else if let Some(secret) = post {
        let id = form_id.ok_or_else(|| OAuthError::invalid_request("no client_id"))?;
        let c = load(server, id).await?;
        check_secret(&c, secret)?;
        (c, "client_secret_post")
    } else if let Some(assertion) = assertion {
        if form.get("client_assertion_type").map(String::as_str) != Some(JWT_BEARER) {
            return Err(OAuthError::invalid_request(
                "client_assertion_type must be jwt-bearer",
            ));
        }
        let c = check_assertion(server, assertion, form_id).await?;
        (c, "private_key_jwt")
    } else {
        let id = form_id.ok_or_else(|| OAuthError::invalid_client("no client authentication"))?;
        (load(server, id).await?, "none")
    };
    if client.auth_method != method {
        return Err(OAuthError::invalid_client(format!(
            "the client authenticates with {}",
            client.auth_method
        )));
    }
    Ok(client)
}

fn basic_failure(d: &str) -> OAuthError {
    let mut e = OAuthError::invalid_client(d);
    e.basic_challenge = true;
    e
}

async fn load(server: &AuthorizationServer, id: &str) -> Result<ClientRecord, OAuthError> {
    match find_client(server, id).await {
        Ok(Some(c)) => Ok(c),
        Ok(None) => Err(OAuthError::invalid_client("unknown client")),
        Err(e) if e.error == "server_error" => Err(e),
        Err(e) => Err(OAuthError::invalid_client(e.description)),
    }
}

fn check_secret(c: &ClientRecord, secret: &str) -> Result<(), OAuthError> {
    let given = super::sha256_hex(secret.as_bytes());
    match &c.secret_hash {
        Some(h) if ct_eq(h.as_bytes(), given.as_bytes()) => Ok(()),
        _ => Err(OAuthError::invalid_client("client authentication failed")),
    }
}

/// A `private_key_jwt` assertion: signed by one of the client's keys, `iss` = `sub` = the
/// client, `aud` the token endpoint (or the issuer), a near `exp`, a `jti` never seen.
async fn check_assertion(
    server: &AuthorizationServer,
    assertion: &str,
    form_id: Option<&String>,
) -> Result<ClientRecord, OAuthError> {
    let fail = || OAuthError::invalid_client("client assertion refused");
    ferromcp_jwt::install();
    let header = jsonwebtoken::decode_header(assertion).map_err(|_| fail())?;
    if !ASSERTION_ALGS
        .iter()
        .any(|a| format!("{:?}", header.alg) == *a)
    {
        return Err(fail());
    }
    // The issuer names the client; the signature is checked below with its keys.
    let unverified: Value = assertion
        .split('.')
        .nth(1)
        .and_then(|p| {
            base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(p)
                .ok()
        })
        .and_then(|b| serde_json::from_slice(&b).ok())
        .ok_or_else(fail)?;
    let id = unverified
        .get("iss")
        .and_then(Value::as_str)
        .ok_or_else(fail)?
        .to_owned();
    if form_id.is_some_and(|f| *f != id) {
        return Err(fail());
    }
    let client = load(server, &id).await?;
    let keys: Vec<Jwk> = client
        .jwks
        .as_ref()
        .and_then(|j| j.get("keys"))
        .and_then(|k| serde_json::from_value(k.clone()).ok())
        .unwrap_or_default();
    let key = keys
        .iter()
        .find(|k| header.kid.is_none() || k.common.key_id == header.kid)
        .ok_or_else(fail)?;
    let decoding = DecodingKey::from_jwk(key).map_err(|_| fail())?;
    let mut v = Validation::new(header.alg);
    v.set_issuer(&[&id]);
    v.sub = Some(id.clone());
    v.set_audience(&[server.token_endpoint(), server.issuer().to_owned()]);
    v.set_required_spec_claims(&["exp", "iss", "sub", "aud"]);
    v.leeway = 30;
    if header.alg == Algorithm::HS256 {
        return Err(fail());
    }
    let claims = jsonwebtoken::decode::<Value>(assertion, &decoding, &v)
        .map_err(|_| fail())?
        .claims;
    let exp = claims.get("exp").and_then(Value::as_u64).ok_or_else(fail)?;
    if exp > now_secs() + MAX_ASSERTION_LIFETIME {
        return Err(OAuthError::invalid_client(
            "client assertion lives too long",
        ));
    }
    let jti = claims.get("jti").and_then(Value::as_str).ok_or_else(fail)?;
    if !server
        .inner()
        .assertions
        .first_use(format!("{id}\u{0}{jti}"), exp + 30)
    {
        return Err(OAuthError::invalid_client("client assertion replayed"));
    }
    Ok(client)
}
