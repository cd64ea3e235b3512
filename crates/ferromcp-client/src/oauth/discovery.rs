//! Discovery: URL rules, `WWW-Authenticate` challenges, protected-resource metadata
//! (RFC 9728), authorization-server metadata (RFC 8414, OpenID Connect discovery), and the
//! HTTP exchanges they use.

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue, Method, Request, StatusCode, header};
use http_body_util::{BodyExt, Full, Limited};
use serde_json::{Value, json};
use url::Url;

use std::time::Duration;

use super::guard::HttpClient;
use super::{OAuthConfig, OAuthError};

/// Parses a URL and requires `https` unless the host is loopback.
pub(super) fn parse_url(text: &str) -> Result<Url, OAuthError> {
    let url = Url::parse(text).map_err(|e| OAuthError::Url(format!("{text}: {e}")))?;
    match url.scheme() {
        "https" => Ok(url),
        "http" if is_loopback(&url) => Ok(url),
        _ => Err(OAuthError::Url(format!(
            "{text}: OAuth endpoints must use https (plain http only on loopback)"
        ))),
    }
}

/// Whether the URL's host is a loopback name or address
/// ([`ferromcp_types::net::is_loopback_host`], S131).
pub(super) fn is_loopback(url: &Url) -> bool {
    url.host_str()
        .is_some_and(ferromcp_types::net::is_loopback_host)
}

pub(super) fn endpoint(meta: &Value, key: &str) -> Result<Url, OAuthError> {
    let text = meta.get(key).and_then(Value::as_str).ok_or_else(|| {
        OAuthError::Discovery(format!("authorization-server metadata has no {key}"))
    })?;
    parse_url(text)
}

/// `resource` must name the server: the same origin, and a path equal to or a prefix (at a
/// segment boundary) of the server URL's.
pub(super) fn resource_matches(resource: &str, server: &Url) -> bool {
    let Ok(r) = Url::parse(resource) else {
        return false;
    };
    if r.origin() != server.origin() {
        return false;
    }
    let rp = r.path().trim_end_matches('/');
    let sp = server.path().trim_end_matches('/');
    rp.is_empty() || sp == rp || sp.starts_with(&format!("{rp}/"))
}

/// The bounds on one exchange with an OAuth endpoint.
#[derive(Debug, Clone, Copy)]
pub(super) struct Limits {
    pub(super) max_body: usize,
    pub(super) timeout: Duration,
}

impl Limits {
    pub(super) fn of(cfg: &OAuthConfig) -> Self {
        Self {
            max_body: cfg.max_response_size,
            timeout: cfg.exchange_timeout,
        }
    }
}

/// One challenge of a `WWW-Authenticate` header (RFC 9110 §11.6.1): its scheme and the
/// parameters the flow uses.
#[derive(Debug, Default, Clone)]
pub(super) struct Challenge {
    /// `Bearer`, `DPoP`, … (empty when the header had parameters only).
    pub(super) scheme: String,
    pub(super) error: Option<String>,
    pub(super) resource_metadata: Option<String>,
    pub(super) scope: Option<String>,
}

/// Every challenge of one `WWW-Authenticate` value (`Bearer a="1", DPoP b="2"`).
pub(super) fn parse_challenges(header: &str) -> Vec<Challenge> {
    let mut out: Vec<Challenge> = Vec::new();
    let mut rest = header.trim();
    loop {
        rest = rest.trim_start_matches([' ', ',', '\t']);
        if rest.is_empty() {
            break;
        }
        let end = rest.find([' ', '=', ',', '\t']).unwrap_or(rest.len());
        let token = &rest[..end];
        let after = rest[end..].trim_start_matches([' ', '\t']);
        if !after.starts_with('=') || after.starts_with("==") {
            // A scheme (or a token68, which nothing here uses).
            out.push(Challenge {
                scheme: token.to_owned(),
                ..Challenge::default()
            });
            rest = &rest[end..];
            continue;
        }
        let key = token.to_ascii_lowercase();
        rest = after[1..].trim_start_matches([' ', '\t']);
        let value;
        if let Some(stripped) = rest.strip_prefix('"') {
            let mut v = String::new();
            let mut chars = stripped.char_indices();
            let mut end = stripped.len();
            while let Some((i, c)) = chars.next() {
                match c {
                    '\\' => {
                        if let Some((_, n)) = chars.next() {
                            v.push(n);
                        }
                    }
                    '"' => {
                        end = i + 1;
                        break;
                    }
                    c => v.push(c),
                }
            }
            value = v;
            rest = &stripped[end.min(stripped.len())..];
        } else {
            let end = rest.find(',').unwrap_or(rest.len());
            value = rest[..end].trim().to_owned();
            rest = &rest[end..];
        }
        if out.is_empty() {
            out.push(Challenge::default());
        }
        if let Some(c) = out.last_mut() {
            match key.as_str() {
                "resource_metadata" => c.resource_metadata = Some(value),
                "scope" => c.scope = Some(value),
                "error" => c.error = Some(value),
                _ => {}
            }
        }
    }
    out
}

/// The challenge the flow follows: the first `Bearer` or `DPoP` one (else the first).
pub(super) fn parse_challenge(header: &str) -> Challenge {
    let all = parse_challenges(header);
    all.iter()
        .find(|c| c.scheme.eq_ignore_ascii_case("bearer") || c.scheme.eq_ignore_ascii_case("dpop"))
        .or(all.first())
        .cloned()
        .unwrap_or_default()
}

/// Every challenge of every `WWW-Authenticate` header of a response.
pub(super) fn challenges_of(headers: &HeaderMap) -> Vec<Challenge> {
    headers
        .get_all(header::WWW_AUTHENTICATE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(parse_challenges)
        .collect()
}

/// The unauthenticated `initialize` POST of [`authorize`](super::authorize).
pub(super) async fn probe(
    http: &HttpClient,
    server: &Url,
    limits: Limits,
) -> Result<(StatusCode, Option<String>), OAuthError> {
    let body = json!({
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "ferromcp-oauth-probe", "version": env!("CARGO_PKG_VERSION")},
        }
    });
    let req = Request::builder()
        .method(Method::POST)
        .uri(server.as_str())
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::ACCEPT, "application/json, text/event-stream")
        .body(Full::new(Bytes::from(body.to_string())))
        .map_err(|e| OAuthError::Http(e.to_string()))?;
    let resp = tokio::time::timeout(limits.timeout, http.request(req))
        .await
        .map_err(|_| OAuthError::Http("probe timed out".into()))?
        .map_err(|e| OAuthError::Http(format!("{server}: {}", error_chain(&e))))?;
    let www = resp
        .headers()
        .get(header::WWW_AUTHENTICATE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    Ok((resp.status(), www))
}

/// An error and its sources (hyper's connect errors say why only in their sources, e.g. the
/// address guard's refusal).
pub(super) fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = s.source();
    }
    out
}

/// One answer: status, headers and (bounded) body.
pub(super) struct Answer {
    pub(super) status: StatusCode,
    pub(super) headers: HeaderMap,
    pub(super) body: Bytes,
}

/// One exchange, bounded by `limits`.
pub(super) async fn send(
    http: &HttpClient,
    limits: Limits,
    method: Method,
    url: &Url,
    body: Option<(&str, String)>,
    extra: &[(HeaderName, HeaderValue)],
) -> Result<Answer, OAuthError> {
    let mut req = Request::builder()
        .method(method)
        .uri(url.as_str())
        .header(header::ACCEPT, "application/json");
    for (k, v) in extra {
        req = req.header(k, v);
    }
    let payload = match body {
        Some((ct, b)) => {
            req = req.header(header::CONTENT_TYPE, ct);
            Bytes::from(b)
        }
        None => Bytes::new(),
    };
    let req = req
        .body(Full::new(payload))
        .map_err(|e| OAuthError::Http(e.to_string()))?;
    let exchange = async {
        let resp = http
            .request(req)
            .await
            .map_err(|e| OAuthError::Http(format!("{url}: {}", error_chain(&e))))?;
        let status = resp.status();
        let headers = resp.headers().clone();
        let body = Limited::new(resp.into_body(), limits.max_body)
            .collect()
            .await
            .map_err(|e| OAuthError::Http(format!("{url}: {e}")))?
            .to_bytes();
        Ok(Answer {
            status,
            headers,
            body,
        })
    };
    tokio::time::timeout(limits.timeout, exchange)
        .await
        .map_err(|_| OAuthError::Http(format!("{url}: timed out")))?
}

/// GETs a JSON document; `None` on a non-success status.
pub(super) async fn get_json(
    http: &HttpClient,
    limits: Limits,
    url: &Url,
) -> Result<Option<Value>, OAuthError> {
    let a = send(http, limits, Method::GET, url, None, &[]).await?;
    if !a.status.is_success() {
        return Ok(None);
    }
    serde_json::from_slice(&a.body)
        .map(Some)
        .map_err(|e| OAuthError::Discovery(format!("{url}: {e}")))
}

pub(super) fn with_path(base: &Url, path: &str) -> Url {
    let mut u = base.clone();
    u.set_path(path);
    u.set_query(None);
    u.set_fragment(None);
    u
}

/// The protected-resource metadata: from the challenge's `resource_metadata` (which must be
/// on the MCP server's origin: a challenge cannot send the client, and what it learns there,
/// elsewhere), else the path-suffixed then the root well-known URL. `None` when the server
/// has none (and named none).
pub(super) async fn discover_prm(
    http: &HttpClient,
    limits: Limits,
    server: &Url,
    from_header: Option<&str>,
) -> Result<Option<Value>, OAuthError> {
    let mut candidates = Vec::new();
    let named = from_header.is_some();
    if let Some(h) = from_header {
        let u = parse_url(h)?;
        if u.origin() != server.origin() {
            return Err(OAuthError::Url(format!(
                "resource_metadata {u} is not on the MCP server's origin {}: refused",
                server.origin().ascii_serialization()
            )));
        }
        candidates.push(u);
    } else {
        let path = server.path().trim_end_matches('/');
        if !path.is_empty() {
            candidates.push(with_path(
                server,
                &format!("/.well-known/oauth-protected-resource{path}"),
            ));
        }
        candidates.push(with_path(server, "/.well-known/oauth-protected-resource"));
    }
    for url in candidates {
        if let Some(v) = get_json(http, limits, &url).await? {
            return Ok(Some(v));
        }
    }
    if named {
        return Err(OAuthError::Discovery(
            "the challenge's resource_metadata could not be fetched".into(),
        ));
    }
    Ok(None)
}

/// The 2025-03-26 discovery: metadata at the server origin's root well-known path (its
/// `issuer` is not checked: there is no recorded issuer to compare with), else the default
/// endpoints, which the 2025-03-26 revision implies support PKCE S256.
pub(super) async fn legacy_as(
    http: &HttpClient,
    limits: Limits,
    server: &Url,
) -> Result<Value, OAuthError> {
    let url = with_path(server, "/.well-known/oauth-authorization-server");
    if let Some(v) = get_json(http, limits, &url).await? {
        return Ok(v);
    }
    let at = |p: &str| with_path(server, p).to_string();
    Ok(json!({
        "authorization_endpoint": at("/authorize"),
        "token_endpoint": at("/token"),
        "registration_endpoint": at("/register"),
        "code_challenge_methods_supported": ["S256"],
    }))
}

/// Authorization-server metadata for `issuer` (RFC 8414 §3.1, then OpenID Connect
/// discovery, in the 2025-11-25 spec's order); its `issuer` must be the one asked for.
pub(super) async fn discover_as(
    http: &HttpClient,
    limits: Limits,
    issuer: &str,
) -> Result<Value, OAuthError> {
    let base = parse_url(issuer)?;
    let path = base.path().trim_end_matches('/').to_owned();
    let candidates = if path.is_empty() {
        vec![
            with_path(&base, "/.well-known/oauth-authorization-server"),
            with_path(&base, "/.well-known/openid-configuration"),
        ]
    } else {
        vec![
            with_path(
                &base,
                &format!("/.well-known/oauth-authorization-server{path}"),
            ),
            with_path(&base, &format!("/.well-known/openid-configuration{path}")),
            with_path(&base, &format!("{path}/.well-known/openid-configuration")),
        ]
    };
    for url in candidates {
        if let Some(v) = get_json(http, limits, &url).await? {
            let got = v.get("issuer").and_then(Value::as_str).unwrap_or_default();
            if got.trim_end_matches('/') != issuer.trim_end_matches('/') {
                return Err(OAuthError::Discovery(format!(
                    "authorization-server metadata issuer {got:?} is not {issuer}"
                )));
            }
            return Ok(v);
        }
    }
    Err(OAuthError::Discovery(format!(
        "no authorization-server metadata for {issuer}"
    )))
}

/// A string list of a metadata document.
pub(super) fn strings<'a>(meta: &'a Value, key: &str) -> Vec<&'a str> {
    meta.get(key)
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenge_parameters() {
        let c = parse_challenge(
            r#"Bearer error="insufficient_scope", scope="a b", resource_metadata="http://x/y""#,
        );
        assert_eq!(c.scheme, "Bearer");
        assert_eq!(c.scope.as_deref(), Some("a b"));
        assert_eq!(c.resource_metadata.as_deref(), Some("http://x/y"));
        assert_eq!(c.error.as_deref(), Some("insufficient_scope"));
    }

    /// RFC 9110 §11.6.1: one header may carry several challenges.
    #[test]
    fn several_challenges_in_one_header() {
        let all = parse_challenges(
            r#"Bearer realm="x", scope="a", DPoP error="use_dpop_nonce", algs="ES256""#,
        );
        assert_eq!(all.len(), 2);
        assert_eq!(all[0].scheme, "Bearer");
        assert_eq!(all[0].scope.as_deref(), Some("a"));
        assert_eq!(all[1].scheme, "DPoP");
        assert_eq!(all[1].error.as_deref(), Some("use_dpop_nonce"));
        let dpop = parse_challenge(r#"DPoP resource_metadata="http://h/m""#);
        assert_eq!(dpop.scheme, "DPoP");
        assert_eq!(dpop.resource_metadata.as_deref(), Some("http://h/m"));
    }

    #[test]
    fn resource_check() {
        let s = Url::parse("http://localhost:3000/mcp").unwrap();
        assert!(resource_matches("http://localhost:3000/mcp", &s));
        assert!(resource_matches("http://localhost:3000/", &s));
        assert!(!resource_matches("http://localhost:3000/other", &s));
        assert!(!resource_matches("http://evil.example/mcp", &s));
    }

    #[test]
    fn https_required_off_loopback() {
        assert!(parse_url("http://example.com/x").is_err());
        assert!(parse_url("http://127.0.0.1/x").is_ok());
        assert!(parse_url("https://example.com/x").is_ok());
    }
}
