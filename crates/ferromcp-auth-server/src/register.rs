//! `/register`: dynamic client registration (RFC 7591), and the client-metadata checks it
//! shares with client ID metadata documents.

use ferromcp_dispatch::BoxError;
use http::{Method, Request, Response, StatusCode};
use http_body::Body;
use serde_json::{Value, json};

use std::net::IpAddr;

use super::oauth_error::{OAuthError, no_store_json, rate_limited};
use super::request::read_limited;
use super::store::{Admission, ClientLimits, ClientRecord, Registration, now_secs};
use super::{AuthorizationServer, GRANT_TYPES, random_token, sha256_hex};
use ferromcp_http_server::McpBody;

/// `POST /register` (RFC 7591).
pub(super) async fn register<B>(
    server: &AuthorizationServer,
    req: Request<B>,
    peer: IpAddr,
) -> Response<McpBody>
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    match register_inner(server, req, peer).await {
        Ok(v) => no_store_json(StatusCode::CREATED, &v),
        Err(e) => e.response(),
    }
}

/// The most redirect URIs one client may register.
const MAX_REDIRECT_URIS: usize = 16;

async fn register_inner<B>(
    server: &AuthorizationServer,
    req: Request<B>,
    peer: IpAddr,
) -> Result<Value, OAuthError>
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    if !server.inner().config.dynamic_registration {
        return Err(OAuthError {
            status: StatusCode::NOT_FOUND,
            ..OAuthError::invalid_request("dynamic registration is closed")
        });
    }
    server
        .inner()
        .register_limiter
        .check(peer)
        .map_err(rate_limited)?;
    let (parts, body) = req.into_parts();
    if parts.method != Method::POST {
        return Err(OAuthError {
            status: StatusCode::METHOD_NOT_ALLOWED,
            ..OAuthError::invalid_request("use POST")
        });
    }
    let bytes = read_limited(body, &server.inner().config).await?;
    let meta: Value = serde_json::from_slice(&bytes)
        .map_err(|e| OAuthError::new("invalid_client_metadata", format!("not JSON: {e}")))?;
    let mut client = client_from_metadata(&meta, random_token(16).map_err(OAuthError::server)?)?;
    let c = &server.inner().config;
    client.registration = Registration::Dynamic;
    client.source = Some(peer.to_string());
    client.expires_at = Some(client.issued_at + c.unused_client_ttl.as_secs());
    let mut out = meta.as_object().cloned().unwrap_or_default();
    let secret = if matches!(
        client.auth_method.as_str(),
        "client_secret_basic" | "client_secret_post"
    ) {
        let s = random_token(32).map_err(OAuthError::server)?;
        client.secret_hash = Some(sha256_hex(s.as_bytes()));
        Some(s)
    } else {
        None
    };
    out.insert("client_id".into(), json!(client.client_id));
    out.insert("client_id_issued_at".into(), json!(client.issued_at));
    out.insert("redirect_uris".into(), json!(client.redirect_uris));
    out.insert("grant_types".into(), json!(client.grant_types));
    out.insert("response_types".into(), json!(["code"]));
    out.insert(
        "token_endpoint_auth_method".into(),
        json!(client.auth_method),
    );
    if let Some(s) = &client.scope {
        out.insert("scope".into(), json!(s.join(" ")));
    }
    if let Some(s) = secret {
        out.insert("client_secret".into(), json!(s));
        out.insert("client_secret_expires_at".into(), json!(0));
    }
    let limits = ClientLimits::new(c.max_clients, c.max_clients_per_source, c.unused_client_ttl);
    let admission = c
        .store
        .add_dynamic_client(client, limits)
        .await
        .map_err(|e| OAuthError::server(e.0))?;
    let why = match admission {
        Admission::Stored => return Ok(Value::Object(out)),
        Admission::SourceFull => "too many clients registered from this address; retry later",
        _ => "too many registered clients; retry later",
    };
    tracing::warn!(peer = %peer, ?admission, "client registration refused");
    Err(OAuthError {
        status: StatusCode::TOO_MANY_REQUESTS,
        retry_after: Some(c.unused_client_ttl.as_secs().clamp(1, 3600)),
        ..OAuthError::new("temporarily_unavailable", why)
    })
}

/// Reads and checks client metadata (RFC 7591 §2; also a client ID metadata document's).
pub(super) fn client_from_metadata(
    meta: &Value,
    client_id: String,
) -> Result<ClientRecord, OAuthError> {
    let bad = |d: String| OAuthError::new("invalid_client_metadata", d);
    let strings = |key: &str| -> Result<Option<Vec<String>>, OAuthError> {
        match meta.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Array(a)) => a
                .iter()
                .map(|v| {
                    v.as_str()
                        .map(str::to_owned)
                        .ok_or_else(|| bad(format!("{key} must hold strings")))
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
            Some(_) => Err(bad(format!("{key} must be an array"))),
        }
    };
    let redirect_uris = strings("redirect_uris")?.unwrap_or_default();
    if redirect_uris.len() > MAX_REDIRECT_URIS {
        return Err(OAuthError::new(
            "invalid_redirect_uri",
            format!("at most {MAX_REDIRECT_URIS} redirect URIs"),
        ));
    }
    if let Some(u) = redirect_uris.iter().find(|u| !redirect_uri_allowed(u)) {
        return Err(OAuthError::new(
            "invalid_redirect_uri",
            format!("{u:?}: redirect URIs must be https or loopback http, without fragment"),
        ));
    }
    let grant_types =
        strings("grant_types")?.unwrap_or_else(|| vec!["authorization_code".to_owned()]);
    if let Some(g) = grant_types
        .iter()
        .find(|g| !GRANT_TYPES.contains(&g.as_str()))
    {
        return Err(bad(format!(
            "grant type {g:?} is not supported (no implicit or password grants)"
        )));
    }
    if let Some(r) = strings("response_types")?
        .unwrap_or_default()
        .iter()
        .find(|r| *r != "code")
    {
        return Err(bad(format!("response type {r:?} is not supported")));
    }
    let auth_method = match meta.get("token_endpoint_auth_method") {
        None | Some(Value::Null) => "client_secret_basic".to_owned(),
        Some(Value::String(m)) if super::AUTH_METHODS.contains(&m.as_str()) => m.clone(),
        Some(m) => {
            return Err(bad(format!(
                "token_endpoint_auth_method {m} is not supported"
            )));
        }
    };
    if grant_types.iter().any(|g| g == "authorization_code") && redirect_uris.is_empty() {
        return Err(OAuthError::new(
            "invalid_redirect_uri",
            "the authorization-code grant needs redirect_uris",
        ));
    }
    // A client_credentials token has no user behind it: only the operator registers
    // clients for it (AuthServerConfig::client), never a client describing itself.
    if grant_types.iter().any(|g| g == "client_credentials") {
        return Err(bad(
            "client_credentials is only for clients the operator registered".to_owned(),
        ));
    }
    let jwks = meta.get("jwks").filter(|v| !v.is_null()).cloned();
    if auth_method == "private_key_jwt" {
        let ok = jwks
            .as_ref()
            .and_then(|j| j.get("keys"))
            .and_then(Value::as_array)
            .is_some_and(|k| !k.is_empty());
        if !ok {
            return Err(bad("private_key_jwt needs `jwks` with keys".to_owned()));
        }
    }
    if meta.get("jwks_uri").is_some_and(|v| !v.is_null()) {
        return Err(bad("jwks_uri is not supported; send `jwks`".to_owned()));
    }
    let scope = match meta.get("scope") {
        Some(Value::String(s)) => Some(
            s.split(' ')
                .filter(|x| !x.is_empty())
                .map(str::to_owned)
                .collect(),
        ),
        None | Some(Value::Null) => None,
        Some(_) => return Err(bad("scope must be a string".to_owned())),
    };
    Ok(ClientRecord {
        client_id,
        secret_hash: None,
        redirect_uris,
        auth_method,
        grant_types,
        scope,
        client_name: meta
            .get("client_name")
            .and_then(Value::as_str)
            .map(str::to_owned),
        jwks,
        issued_at: now_secs(),
        registration: Registration::Dynamic,
        source: None,
        expires_at: None,
    })
}

/// Whether `uri` may be registered as a redirect URI: absolute, no fragment, and `https`
/// or `http` to a loopback host; a private-use scheme (`com.example.app:/cb`, RFC 8252 §7.1)
/// only with a dot in the scheme.
fn redirect_uri_allowed(uri: &str) -> bool {
    let Ok(u) = url::Url::parse(uri) else {
        return false;
    };
    if u.fragment().is_some() {
        return false;
    }
    match u.scheme() {
        "https" => u.host().is_some(),
        "http" => super::is_loopback_url(&u),
        s => s.contains('.') && !u.cannot_be_a_base(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redirect_uri_rules() {
        assert!(redirect_uri_allowed("https://app.example/cb"));
        assert!(redirect_uri_allowed("http://127.0.0.1:3000/cb"));
        assert!(redirect_uri_allowed("http://localhost/cb"));
        assert!(redirect_uri_allowed("http://[::1]:9/cb"));
        // S131: the one loopback-host rule (names under localhost, IPv4-mapped loopback).
        assert!(redirect_uri_allowed("http://app.localhost:9/cb"));
        assert!(redirect_uri_allowed("http://[::ffff:127.0.0.1]:9/cb"));
        assert!(!redirect_uri_allowed("http://localhost.example.com/cb"));
        assert!(!redirect_uri_allowed("http://127.0.0.1.nip.io/cb"));
        assert!(!redirect_uri_allowed("http://[::ffff:10.0.0.1]/cb"));
        assert!(!redirect_uri_allowed("http://app.example/cb"));
        assert!(!redirect_uri_allowed("https://app.example/cb#frag"));
        assert!(!redirect_uri_allowed("javascript:alert(1)"));
        assert!(!redirect_uri_allowed("/relative"));
    }
}
