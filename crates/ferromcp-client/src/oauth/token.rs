//! Token requests (OAuth 2.1 §3.2): the client authentication methods and DPoP proofs with
//! the authorization server's nonce (RFC 9449 §5, §8).

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use http::{HeaderName, HeaderValue, Method, StatusCode};
use serde_json::Value;
use url::Url;

use super::discovery::{Limits, send};
use super::guard::HttpClient;
use super::jwt::{DpopKey, NonceFor};
use super::{ClientKey, OAuthError, Tokens, now_secs};

/// `client_assertion_type` of `private_key_jwt` (RFC 7523 §2.2).
const JWT_ASSERTION_TYPE: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
/// The `DPoP` header.
pub(super) const DPOP: HeaderName = HeaderName::from_static("dpop");
/// The `DPoP-Nonce` header.
pub(super) const DPOP_NONCE: HeaderName = HeaderName::from_static("dpop-nonce");

/// How the client authenticates at a token endpoint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum AuthMethod {
    None,
    SecretBasic,
    SecretPost,
    PrivateKeyJwt,
}

/// A client at one token endpoint: everything a token request needs besides its grant.
#[derive(Clone, Debug)]
pub(super) struct TokenGrant {
    pub(super) token_endpoint: Url,
    /// The authorization server's issuer: the `aud` of client assertions.
    pub(super) issuer: String,
    pub(super) client_id: String,
    pub(super) client_secret: Option<String>,
    pub(super) private_key: Option<ClientKey>,
    pub(super) method: AuthMethod,
    /// `resource` (RFC 8707), sent on every request.
    pub(super) resource: Option<String>,
    /// The DPoP key when tokens are DPoP-bound.
    pub(super) dpop: Option<DpopKey>,
    /// The bounds on each exchange.
    pub(super) limits: Limits,
}

/// The method for a client with (or without) a secret or key, given what the server lists
/// in `token_endpoint_auth_methods_supported` (OAuth 2.1 §2.4: `client_secret_basic` when
/// the list is absent) and what registration said.
pub(super) fn choose_method(
    secret: bool,
    key: bool,
    registered: Option<&str>,
    supported: &[&str],
) -> AuthMethod {
    let named = |m: &str| match m {
        "client_secret_basic" => Some(AuthMethod::SecretBasic),
        "client_secret_post" => Some(AuthMethod::SecretPost),
        "private_key_jwt" => Some(AuthMethod::PrivateKeyJwt),
        "none" => Some(AuthMethod::None),
        _ => None,
    };
    if let Some(m) = registered.and_then(named) {
        return m;
    }
    if key {
        return AuthMethod::PrivateKeyJwt;
    }
    if !secret {
        return AuthMethod::None;
    }
    let supported: Vec<&str> = if supported.is_empty() {
        vec!["client_secret_basic"]
    } else {
        supported.to_vec()
    };
    for m in ["client_secret_basic", "client_secret_post", "none"] {
        if supported.contains(&m) {
            return named(m).unwrap_or(AuthMethod::None);
        }
    }
    AuthMethod::SecretBasic
}

impl TokenGrant {
    /// One token request with the grant's `params`; a `use_dpop_nonce` answer is retried
    /// once with the server's nonce.
    pub(super) async fn request(
        &self,
        http: &HttpClient,
        params: &[(&str, &str)],
    ) -> Result<Tokens, OAuthError> {
        let mut nonce_retried = false;
        loop {
            let (form, headers) = self.prepare(params)?;
            let answer = send(
                http,
                self.limits,
                Method::POST,
                &self.token_endpoint,
                Some(("application/x-www-form-urlencoded", form)),
                &headers,
            )
            .await?;
            let nonce = answer
                .headers
                .get(DPOP_NONCE)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            let body: Value = serde_json::from_slice(&answer.body).unwrap_or(Value::Null);
            if !answer.status.is_success() {
                let error = body.get("error").and_then(Value::as_str).unwrap_or("");
                if let (Some(dpop), Some(nonce)) = (&self.dpop, &nonce)
                    && error == "use_dpop_nonce"
                    && answer.status == StatusCode::BAD_REQUEST
                    && !nonce_retried
                {
                    dpop.set_nonce(NonceFor::AuthorizationServer, nonce);
                    nonce_retried = true;
                    continue;
                }
                let description = body
                    .get("error_description")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                let what = format!(
                    "{} answered {}: {error} {description}",
                    self.token_endpoint, answer.status
                );
                return Err(
                    if !error.is_empty() && matches!(answer.status.as_u16(), 400 | 401) {
                        OAuthError::Refused(what)
                    } else {
                        OAuthError::Authorization(what)
                    },
                );
            }
            if let (Some(dpop), Some(nonce)) = (&self.dpop, &nonce) {
                dpop.set_nonce(NonceFor::AuthorizationServer, nonce);
            }
            return parse_tokens(&body);
        }
    }

    /// The form body and headers of one token request.
    fn prepare(
        &self,
        params: &[(&str, &str)],
    ) -> Result<(String, Vec<(HeaderName, HeaderValue)>), OAuthError> {
        let mut headers: Vec<(HeaderName, HeaderValue)> = Vec::new();
        let mut form = url::form_urlencoded::Serializer::new(String::new());
        for (k, v) in params {
            form.append_pair(k, v);
        }
        if let Some(resource) = &self.resource {
            form.append_pair("resource", resource);
        }
        match (&self.method, &self.client_secret, &self.private_key) {
            (AuthMethod::SecretBasic, Some(secret), _) => {
                // RFC 6749 §2.3.1: both parts form-urlencoded before base64.
                let enc = |s: &str| {
                    url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>()
                };
                let basic = format!(
                    "Basic {}",
                    STANDARD.encode(format!("{}:{}", enc(&self.client_id), enc(secret)))
                );
                let mut v = HeaderValue::from_str(&basic).map_err(|_| {
                    OAuthError::Config("the client credentials are not a header value".into())
                })?;
                v.set_sensitive(true);
                headers.push((http::header::AUTHORIZATION, v));
            }
            (AuthMethod::SecretPost, Some(secret), _) => {
                form.append_pair("client_id", &self.client_id)
                    .append_pair("client_secret", secret);
            }
            (AuthMethod::PrivateKeyJwt, _, Some(key)) => {
                let assertion = key.assertion(&self.client_id, &self.issuer)?;
                form.append_pair("client_id", &self.client_id)
                    .append_pair("client_assertion_type", JWT_ASSERTION_TYPE)
                    .append_pair("client_assertion", &assertion);
            }
            (AuthMethod::PrivateKeyJwt, _, None) => {
                return Err(OAuthError::Config(
                    "private_key_jwt needs a client private key".into(),
                ));
            }
            _ => {
                if !self.client_id.is_empty() {
                    form.append_pair("client_id", &self.client_id);
                }
            }
        }
        if let Some(dpop) = &self.dpop {
            let proof = dpop.proof(
                "POST",
                self.token_endpoint.as_str(),
                None,
                NonceFor::AuthorizationServer,
            )?;
            let v = HeaderValue::from_str(&proof)
                .map_err(|_| OAuthError::Config("the DPoP proof is not a header".into()))?;
            headers.push((DPOP, v));
        }
        Ok((form.finish(), headers))
    }
}

/// A successful token response (OAuth 2.1 §3.2.3).
fn parse_tokens(v: &Value) -> Result<Tokens, OAuthError> {
    let text = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
    let access_token = text("access_token")
        .filter(|t| !t.is_empty())
        .ok_or_else(|| OAuthError::Authorization("token answer without access_token".into()))?;
    let expires_in = v.get("expires_in").and_then(Value::as_u64);
    Ok(Tokens {
        access_token,
        token_type: text("token_type").unwrap_or_else(|| "Bearer".to_owned()),
        refresh_token: text("refresh_token"),
        expires_in,
        expires_at: expires_in.map(|s| now_secs().saturating_add(s)),
        scope: text("scope"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn method_choice() {
        assert_eq!(choose_method(false, false, None, &[]), AuthMethod::None);
        assert_eq!(
            choose_method(true, false, None, &[]),
            AuthMethod::SecretBasic
        );
        assert_eq!(
            choose_method(true, false, None, &["client_secret_post"]),
            AuthMethod::SecretPost
        );
        assert_eq!(
            choose_method(true, true, None, &["private_key_jwt"]),
            AuthMethod::PrivateKeyJwt
        );
        assert_eq!(
            choose_method(true, false, Some("client_secret_post"), &[]),
            AuthMethod::SecretPost
        );
    }
}
