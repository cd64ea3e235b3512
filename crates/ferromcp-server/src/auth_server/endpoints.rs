//! `/authorize`, `/token`, `/register` and `/revoke`.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};

use ferromcp_dispatch::BoxError;
use http::header::{CACHE_CONTROL, CONTENT_TYPE, HeaderValue, LOCATION, RETRY_AFTER};
use http::{Method, Request, Response, StatusCode};
use http_body::Body;
use http_body_util::{BodyExt, Limited};
use serde_json::{Value, json};

use super::client_auth;
use super::consent::{AuthorizationRequest, Consent};
use super::store::{ClientRecord, GrantRecord, Taken, now_secs};
use super::{AuthorizationServer, GRANT_TYPES, random_token, sha256_hex};
use crate::http::McpBody;

/// An OAuth error response (RFC 6749 §5.2 and friends). The description never holds a
/// token, code or secret.
#[derive(Debug, Clone)]
pub(crate) struct OAuthError {
    pub(crate) status: StatusCode,
    pub(crate) error: &'static str,
    pub(crate) description: String,
    /// `WWW-Authenticate: Basic` on a failed Basic authentication.
    pub(crate) basic_challenge: bool,
    pub(crate) retry_after: Option<u64>,
}

impl OAuthError {
    pub(crate) fn new(error: &'static str, description: impl Into<String>) -> Self {
        Self {
            status: StatusCode::BAD_REQUEST,
            error,
            description: description.into(),
            basic_challenge: false,
            retry_after: None,
        }
    }

    pub(crate) fn invalid_request(d: impl Into<String>) -> Self {
        Self::new("invalid_request", d)
    }

    pub(crate) fn invalid_grant(d: impl Into<String>) -> Self {
        Self::new("invalid_grant", d)
    }

    pub(crate) fn invalid_client(d: impl Into<String>) -> Self {
        Self {
            status: StatusCode::UNAUTHORIZED,
            ..Self::new("invalid_client", d)
        }
    }

    pub(crate) fn server(d: impl Into<String>) -> Self {
        let d = d.into();
        tracing::error!(error = %d, "authorization server failure");
        Self {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            ..Self::new("server_error", "internal error")
        }
    }

    fn response(&self) -> Response<McpBody> {
        let body = json!({"error": self.error, "error_description": self.description});
        let mut r = no_store_json(self.status, &body);
        if self.basic_challenge {
            r.headers_mut().insert(
                http::header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Basic realm=\"token\""),
            );
        }
        if let Some(s) = self.retry_after {
            if let Ok(v) = HeaderValue::from_str(&s.to_string()) {
                r.headers_mut().insert(RETRY_AFTER, v);
            }
        }
        r
    }
}

/// A JSON response with `Cache-Control: no-store` (token responses must not be cached).
fn no_store_json(status: StatusCode, body: &Value) -> Response<McpBody> {
    let mut r = Response::new(McpBody::full(body.to_string()));
    *r.status_mut() = status;
    r.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    r.headers_mut()
        .insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r.headers_mut()
        .insert(http::header::PRAGMA, HeaderValue::from_static("no-cache"));
    r
}

/// A plain-text 400 page: an authorization request that cannot be redirected (unknown
/// client, unregistered redirect URI) is never redirected.
pub(crate) fn error_page(why: &str) -> Response<McpBody> {
    let mut r = Response::new(McpBody::full(format!(
        "Authorization request refused: {why}\n"
    )));
    *r.status_mut() = StatusCode::BAD_REQUEST;
    r.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    // The reason may quote request input: plain text, never sniffed as HTML.
    r.headers_mut().insert(
        http::header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    no_framing(&mut r);
    r
}

/// Clickjacking protection for pages shown to the user (SV-A10): not framed by other sites
/// (`X-Frame-Options: DENY`, CSP `frame-ancestors 'none'`) and not cached, unless the
/// page sets its own.
fn no_framing(r: &mut Response<McpBody>) {
    let h = r.headers_mut();
    h.entry(http::header::X_FRAME_OPTIONS)
        .or_insert(HeaderValue::from_static("DENY"));
    h.entry(http::header::CONTENT_SECURITY_POLICY)
        .or_insert(HeaderValue::from_static("frame-ancestors 'none'"));
    h.entry(CACHE_CONTROL)
        .or_insert(HeaderValue::from_static("no-store"));
}

/// Parameters of a query or form: each at most once (OAuth 2.1 §3.1: parameters must not
/// be repeated).
pub(crate) type Params = HashMap<String, String>;

fn parse_params(text: &[u8]) -> Result<Params, OAuthError> {
    let mut out = Params::new();
    for (k, v) in url::form_urlencoded::parse(text) {
        if out.insert(k.clone().into_owned(), v.into_owned()).is_some() {
            return Err(OAuthError::invalid_request(format!(
                "parameter {k:?} repeated"
            )));
        }
    }
    // Empty values count as absent (RFC 6749 §3.1).
    out.retain(|_, v| !v.is_empty());
    Ok(out)
}

/// Reads a body of at most `limit` bytes.
async fn read_limited<B>(body: B, limit: usize) -> Result<Vec<u8>, OAuthError>
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    match Limited::new(body, limit).collect().await {
        Ok(b) => Ok(b.to_bytes().to_vec()),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => Err(OAuthError {
            status: StatusCode::PAYLOAD_TOO_LARGE,
            ..OAuthError::invalid_request(format!("body larger than {limit} bytes"))
        }),
        Err(_) => Err(OAuthError::invalid_request("unreadable body")),
    }
}

/// A POST with an `application/x-www-form-urlencoded` body: its parameters.
async fn read_form<B>(
    server: &AuthorizationServer,
    req: Request<B>,
) -> Result<(http::request::Parts, Params), OAuthError>
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    let (parts, body) = req.into_parts();
    if parts.method != Method::POST {
        return Err(OAuthError {
            status: StatusCode::METHOD_NOT_ALLOWED,
            ..OAuthError::invalid_request("use POST")
        });
    }
    if parts.uri.query().is_some_and(|q| !q.is_empty()) {
        return Err(OAuthError::invalid_request(
            "parameters go in the body, not the query",
        ));
    }
    let ct = parts
        .headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    if !ct.split(';').next().is_some_and(|m| {
        m.trim()
            .eq_ignore_ascii_case("application/x-www-form-urlencoded")
    }) {
        return Err(OAuthError::invalid_request(
            "Content-Type must be application/x-www-form-urlencoded",
        ));
    }
    let bytes = read_limited(body, server.inner().config.max_form_size).await?;
    Ok((parts, parse_params(&bytes)?))
}

/// The peer's address, as the serving loop recorded it (a `SocketAddr` extension).
fn peer<B>(req: &Request<B>) -> Option<IpAddr> {
    req.extensions().get::<SocketAddr>().map(SocketAddr::ip)
}

fn rate_limited(wait: std::time::Duration) -> OAuthError {
    OAuthError {
        status: StatusCode::TOO_MANY_REQUESTS,
        retry_after: Some(wait.as_secs().max(1)),
        ..OAuthError::new("slow_down", "too many requests; retry later")
    }
}

/// Whether `uri` may be registered as a redirect URI: absolute, no fragment, and `https`
/// or `http` to a loopback host; a private-use scheme (`com.example.app:/cb`, RFC 8252 §7.1)
/// only with a dot in the scheme.
pub(crate) fn redirect_uri_allowed(uri: &str) -> bool {
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

/// A client by id: registered in the store, or (an `https` URL) its metadata document.
pub(crate) async fn find_client(
    server: &AuthorizationServer,
    client_id: &str,
) -> Result<Option<ClientRecord>, OAuthError> {
    let store = &server.inner().config.store;
    if let Some(c) = store
        .client(client_id)
        .await
        .map_err(|e| OAuthError::server(e.0))?
    {
        return Ok(Some(c));
    }
    if server.inner().config.client_id_metadata_documents && client_id.contains("://") {
        return server
            .inner()
            .cimd
            .client(client_id)
            .await
            .map(Some)
            .map_err(|e| {
                tracing::info!(client = client_id, error = %e, "client ID metadata document refused");
                OAuthError::new("invalid_client", format!("client metadata document: {e}"))
            });
    }
    Ok(None)
}

/// Scopes: the requested ones (or the defaults), each supported and allowed to the client.
fn check_scopes(
    server: &AuthorizationServer,
    client: &ClientRecord,
    requested: Option<&String>,
) -> Result<Vec<String>, OAuthError> {
    let c = &server.inner().config;
    let scopes: Vec<String> = match requested {
        Some(s) => {
            let mut v: Vec<String> = Vec::new();
            for x in s.split(' ').filter(|x| !x.is_empty()) {
                if !v.iter().any(|y| y == x) {
                    v.push(x.to_owned());
                }
            }
            v
        }
        None => c.default_scopes.clone(),
    };
    for s in &scopes {
        let supported = c.scopes_supported.iter().any(|x| x == s);
        let allowed = client
            .scope
            .as_ref()
            .is_none_or(|a| a.iter().any(|x| x == s));
        if !supported || !allowed {
            return Err(OAuthError::new(
                "invalid_scope",
                format!("scope {s:?} is not available to this client"),
            ));
        }
    }
    Ok(scopes)
}

/// The resource (RFC 8707): the one named (exactly one of the configured resources), or
/// the only configured one when none is named.
fn check_resource(
    server: &AuthorizationServer,
    named: Option<&String>,
) -> Result<String, OAuthError> {
    let resources = &server.inner().config.resources;
    match named {
        Some(r) if resources.iter().any(|x| x == r) => Ok(r.clone()),
        Some(r) => Err(OAuthError::new(
            "invalid_target",
            format!("unknown resource {r:?}"),
        )),
        None if resources.len() == 1 => Ok(resources[0].clone()),
        None => Err(OAuthError::new(
            "invalid_target",
            "name the resource (RFC 8707 `resource`)",
        )),
    }
}

/// A PKCE code challenge: 43–128 characters of `[A-Za-z0-9-._~]` (RFC 7636 §4.2).
fn challenge_ok(c: &str) -> bool {
    (43..=128).contains(&c.len())
        && c.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~".contains(&b))
}

/// A redirect to `redirect_uri` with `params`, `state` and `iss` (RFC 9207).
fn redirect(
    server: &AuthorizationServer,
    redirect_uri: &str,
    params: &[(&str, &str)],
    state: Option<&str>,
) -> Response<McpBody> {
    let Ok(mut u) = url::Url::parse(redirect_uri) else {
        return error_page("bad redirect URI");
    };
    {
        let mut q = u.query_pairs_mut();
        for (k, v) in params {
            q.append_pair(k, v);
        }
        if let Some(s) = state {
            q.append_pair("state", s);
        }
        q.append_pair("iss", server.issuer());
    }
    let mut r = Response::new(McpBody::empty());
    *r.status_mut() = StatusCode::FOUND;
    match HeaderValue::from_str(u.as_str()) {
        Ok(v) => {
            r.headers_mut().insert(LOCATION, v);
        }
        Err(_) => return error_page("bad redirect URI"),
    }
    r.headers_mut()
        .insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

fn redirect_error(
    server: &AuthorizationServer,
    redirect_uri: &str,
    e: &OAuthError,
    state: Option<&str>,
) -> Response<McpBody> {
    redirect(
        server,
        redirect_uri,
        &[("error", e.error), ("error_description", &e.description)],
        state,
    )
}

/// `GET /authorize` (also a form POST).
pub(crate) async fn authorize<B>(server: &AuthorizationServer, req: Request<B>) -> Response<McpBody>
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    let (parts, body) = req.into_parts();
    let params = match parts.method {
        // Not HEAD: an authorization request has effects (a code, a pending request).
        Method::GET => parse_params(parts.uri.query().unwrap_or("").as_bytes()),
        Method::POST => match read_limited(body, server.inner().config.max_form_size).await {
            Ok(b) => parse_params(&b),
            Err(e) => Err(e),
        },
        _ => Err(OAuthError::invalid_request("use GET or POST")),
    };
    let params = match params {
        Ok(p) => p,
        Err(e) => return error_page(&e.description),
    };
    // Until the client and its redirect URI are known, nothing is redirected.
    let Some(client_id) = params.get("client_id") else {
        return error_page("no client_id");
    };
    let client = match find_client(server, client_id).await {
        Ok(Some(c)) => c,
        Ok(None) => return error_page("unknown client"),
        Err(e) => return error_page(&e.description),
    };
    let redirect_uri = match params.get("redirect_uri") {
        Some(r) if client.redirect_uris.iter().any(|x| x == r) => r.clone(),
        Some(_) => return error_page("redirect_uri is not registered for this client"),
        None if client.redirect_uris.len() == 1 => client.redirect_uris[0].clone(),
        None => return error_page("redirect_uri is required"),
    };
    let state = params.get("state").cloned();
    let state = state.as_deref();
    let fail = |e: OAuthError| redirect_error(server, &redirect_uri, &e, state);
    match params.get("response_type").map(String::as_str) {
        Some("code") => {}
        Some(_) => {
            return fail(OAuthError::new(
                "unsupported_response_type",
                "only response_type=code is supported",
            ));
        }
        None => return fail(OAuthError::invalid_request("no response_type")),
    }
    if !client.allows_grant("authorization_code") {
        return fail(OAuthError::new(
            "unauthorized_client",
            "the client may not use the authorization-code grant",
        ));
    }
    let Some(challenge) = params.get("code_challenge") else {
        return fail(OAuthError::invalid_request(
            "PKCE is required (code_challenge)",
        ));
    };
    if params.get("code_challenge_method").map(String::as_str) != Some("S256") {
        return fail(OAuthError::invalid_request(
            "code_challenge_method must be S256",
        ));
    }
    if !challenge_ok(challenge) {
        return fail(OAuthError::invalid_request("malformed code_challenge"));
    }
    let scopes = match check_scopes(server, &client, params.get("scope")) {
        Ok(s) => s,
        Err(e) => return fail(e),
    };
    let resource = match check_resource(server, params.get("resource")) {
        Ok(r) => r,
        Err(e) => return fail(e),
    };
    let request_id = match random_token(16) {
        Ok(id) => id,
        Err(e) => return fail(OAuthError::server(e)),
    };
    let request = AuthorizationRequest {
        request_id,
        client_id: client.client_id.clone(),
        client_name: client.client_name.clone(),
        redirect_uri: redirect_uri.clone(),
        scopes,
        resource,
    };
    let consent = server
        .inner()
        .config
        .consent
        .consent(&request, &parts)
        .await;
    let held = Held {
        code_challenge: challenge.clone(),
        state: state.map(str::to_owned),
        redirect_uri_sent: params.contains_key("redirect_uri"),
    };
    match consent {
        Consent::Respond(mut page) => {
            if server.add_pending(request, held) {
                no_framing(&mut page);
                page
            } else {
                fail(OAuthError::new(
                    "temporarily_unavailable",
                    "too many pending authorization requests",
                ))
            }
        }
        decided => finish(server, &request, &held, decided).await,
    }
}

/// What an authorization request carries besides what the user is shown.
pub(crate) struct Held {
    pub(crate) code_challenge: String,
    pub(crate) state: Option<String>,
    /// Whether the request named its `redirect_uri` (then the token request must repeat it;
    /// OAuth 2.1 §4.1.3).
    pub(crate) redirect_uri_sent: bool,
}

/// Completes an authorization request: a code on approval, `access_denied` otherwise.
pub(crate) async fn finish(
    server: &AuthorizationServer,
    request: &AuthorizationRequest,
    held: &Held,
    consent: Consent,
) -> Response<McpBody> {
    let state = held.state.as_deref();
    let fail = |e: OAuthError| redirect_error(server, &request.redirect_uri, &e, state);
    let (subject, approved) = match consent {
        Consent::Approve { subject, scopes } => (subject, scopes),
        Consent::Deny | Consent::Respond(_) => {
            return fail(OAuthError::new("access_denied", "the user refused"));
        }
    };
    let scopes: Vec<String> = request
        .scopes
        .iter()
        .filter(|s| approved.contains(s))
        .cloned()
        .collect();
    let (code, grant_id) = match (random_token(32), random_token(16)) {
        (Ok(c), Ok(g)) => (c, g),
        (Err(e), _) | (_, Err(e)) => return fail(OAuthError::server(e)),
    };
    let grant = GrantRecord {
        grant_id,
        client_id: request.client_id.clone(),
        subject,
        scopes,
        resource: request.resource.clone(),
        redirect_uri: held.redirect_uri_sent.then(|| request.redirect_uri.clone()),
        code_challenge: Some(held.code_challenge.clone()),
        expires_at: now_secs() + server.inner().config.code_ttl.as_secs(),
    };
    if let Err(e) = server
        .inner()
        .config
        .store
        .put_code(sha256_hex(code.as_bytes()), grant)
        .await
    {
        return fail(OAuthError::server(e.0));
    }
    redirect(server, &request.redirect_uri, &[("code", &code)], state)
}

/// `POST /token`.
pub(crate) async fn token<B>(server: &AuthorizationServer, req: Request<B>) -> Response<McpBody>
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    match token_inner(server, req).await {
        Ok(v) => no_store_json(StatusCode::OK, &v),
        Err(e) => e.response(),
    }
}

async fn token_inner<B>(server: &AuthorizationServer, req: Request<B>) -> Result<Value, OAuthError>
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    server
        .inner()
        .token_limiter
        .check(peer(&req))
        .map_err(rate_limited)?;
    let (parts, form) = read_form(server, req).await?;
    let grant_type = form
        .get("grant_type")
        .ok_or_else(|| OAuthError::invalid_request("no grant_type"))?
        .clone();
    if !GRANT_TYPES.contains(&grant_type.as_str()) {
        return Err(OAuthError::new(
            "unsupported_grant_type",
            format!("grant_type {grant_type:?} is not supported"),
        ));
    }
    let client = client_auth::authenticate(server, &parts, &form).await?;
    if !client.allows_grant(&grant_type) {
        return Err(OAuthError::new(
            "unauthorized_client",
            format!("the client may not use {grant_type}"),
        ));
    }
    match grant_type.as_str() {
        "authorization_code" => code_grant(server, &client, &form).await,
        "refresh_token" => refresh_grant(server, &client, &form).await,
        _ => client_credentials(server, &client, &form).await,
    }
}

/// A named `resource` must be the grant's own (RFC 8707 §2.2: the token is for it).
fn same_resource(form: &super::endpoints::Params, grant: &GrantRecord) -> Result<(), OAuthError> {
    match form.get("resource") {
        Some(r) if *r != grant.resource => Err(OAuthError::new(
            "invalid_target",
            "resource differs from the one authorized",
        )),
        _ => Ok(()),
    }
}

async fn code_grant(
    server: &AuthorizationServer,
    client: &ClientRecord,
    form: &Params,
) -> Result<Value, OAuthError> {
    let code = form
        .get("code")
        .ok_or_else(|| OAuthError::invalid_request("no code"))?;
    let verifier = form
        .get("code_verifier")
        .ok_or_else(|| OAuthError::invalid_request("PKCE is required (code_verifier)"))?;
    let store = &server.inner().config.store;
    let grant = match store
        .take_code(&sha256_hex(code.as_bytes()))
        .await
        .map_err(|e| OAuthError::server(e.0))?
    {
        Taken::Fresh(g) => g,
        Taken::Replayed(g) => {
            // A code used twice: someone else may hold it; every token issued from it goes.
            tracing::warn!(
                client = %g.client_id,
                "authorization code replayed; revoking its grant"
            );
            server
                .revoke_grant(&g.grant_id)
                .await
                .map_err(|e| OAuthError::server(e.0))?;
            return Err(OAuthError::invalid_grant("the code was already used"));
        }
        Taken::Missing => return Err(OAuthError::invalid_grant("unknown or expired code")),
    };
    if grant.client_id != client.client_id {
        return Err(OAuthError::invalid_grant(
            "the code was issued to another client",
        ));
    }
    if form.get("redirect_uri") != grant.redirect_uri.as_ref() {
        return Err(OAuthError::invalid_grant(
            "redirect_uri differs from the authorization request's",
        ));
    }
    let expected = grant.code_challenge.as_deref().unwrap_or_default();
    let computed = {
        use base64::Engine as _;
        use sha2::Digest as _;
        base64::engine::general_purpose::URL_SAFE_NO_PAD
            .encode(sha2::Sha256::digest(verifier.as_bytes()))
    };
    if !(43..=128).contains(&verifier.len())
        || !client_auth::ct_eq(computed.as_bytes(), expected.as_bytes())
    {
        return Err(OAuthError::invalid_grant("PKCE verification failed"));
    }
    same_resource(form, &grant)?;
    let refresh = client.allows_grant("refresh_token");
    let mut record = grant;
    record.expires_at = now_secs() + server.inner().config.refresh_token_ttl.as_secs();
    server.issue(&record, refresh).await
}

async fn refresh_grant(
    server: &AuthorizationServer,
    client: &ClientRecord,
    form: &Params,
) -> Result<Value, OAuthError> {
    let token = form
        .get("refresh_token")
        .ok_or_else(|| OAuthError::invalid_request("no refresh_token"))?;
    let store = &server.inner().config.store;
    let hash = sha256_hex(token.as_bytes());
    // Bound to the client: another client's attempt neither uses nor burns it.
    match store
        .refresh_grant(&hash)
        .await
        .map_err(|e| OAuthError::server(e.0))?
    {
        Some(g) if g.client_id != client.client_id => {
            return Err(OAuthError::invalid_grant(
                "the refresh token was issued to another client",
            ));
        }
        _ => {}
    }
    let grant = match store
        .take_refresh(&hash)
        .await
        .map_err(|e| OAuthError::server(e.0))?
    {
        Taken::Fresh(g) => g,
        Taken::Replayed(g) => {
            tracing::warn!(
                client = %g.client_id,
                "rotated refresh token reused; revoking its grant"
            );
            server
                .revoke_grant(&g.grant_id)
                .await
                .map_err(|e| OAuthError::server(e.0))?;
            return Err(OAuthError::invalid_grant(
                "the refresh token was already used",
            ));
        }
        Taken::Missing => {
            return Err(OAuthError::invalid_grant(
                "unknown or expired refresh token",
            ));
        }
    };
    if grant.client_id != client.client_id {
        return Err(OAuthError::invalid_grant(
            "the refresh token was issued to another client",
        ));
    }
    if store
        .is_revoked(&grant.grant_id)
        .await
        .map_err(|e| OAuthError::server(e.0))?
    {
        return Err(OAuthError::invalid_grant("the grant was revoked"));
    }
    same_resource(form, &grant)?;
    let mut record = grant;
    // A narrower scope may be asked for, never a wider one.
    if let Some(s) = form.get("scope") {
        let asked: Vec<String> = s
            .split(' ')
            .filter(|x| !x.is_empty())
            .map(str::to_owned)
            .collect();
        if let Some(x) = asked.iter().find(|x| !record.scopes.contains(x)) {
            return Err(OAuthError::new(
                "invalid_scope",
                format!("scope {x:?} was not granted"),
            ));
        }
        record.scopes = asked;
    }
    server.issue(&record, true).await
}

async fn client_credentials(
    server: &AuthorizationServer,
    client: &ClientRecord,
    form: &Params,
) -> Result<Value, OAuthError> {
    if client.auth_method == "none" {
        return Err(OAuthError::new(
            "unauthorized_client",
            "client_credentials needs an authenticated (confidential) client",
        ));
    }
    let scopes = check_scopes(server, client, form.get("scope"))?;
    let resource = check_resource(server, form.get("resource"))?;
    let grant = GrantRecord {
        grant_id: random_token(16).map_err(OAuthError::server)?,
        client_id: client.client_id.clone(),
        subject: client.client_id.clone(),
        scopes,
        resource,
        redirect_uri: None,
        code_challenge: None,
        expires_at: now_secs() + server.inner().config.access_token_ttl.as_secs(),
    };
    server.issue(&grant, false).await
}

/// `POST /revoke` (RFC 7009): the client authenticates as at the token endpoint; a token
/// it does not own, or an unknown one, is answered 200 all the same, and nothing happens.
pub(crate) async fn revoke<B>(server: &AuthorizationServer, req: Request<B>) -> Response<McpBody>
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    let result: Result<(), OAuthError> = async {
        server
            .inner()
            .token_limiter
            .check(peer(&req))
            .map_err(rate_limited)?;
        let (parts, form) = read_form(server, req).await?;
        let client = client_auth::authenticate(server, &parts, &form).await?;
        let token = form
            .get("token")
            .ok_or_else(|| OAuthError::invalid_request("no token"))?;
        let grant_id = if let Ok(claims) = server.inner().keys.verify(token) {
            let owner = claims.get("client_id").and_then(Value::as_str);
            claims
                .get("gid")
                .and_then(Value::as_str)
                .filter(|_| owner == Some(client.client_id.as_str()))
                .map(str::to_owned)
        } else {
            server
                .inner()
                .config
                .store
                .refresh_grant(&sha256_hex(token.as_bytes()))
                .await
                .map_err(|e| OAuthError::server(e.0))?
                .filter(|g| g.client_id == client.client_id)
                .map(|g| g.grant_id)
        };
        if let Some(g) = grant_id {
            server
                .revoke_grant(&g)
                .await
                .map_err(|e| OAuthError::server(e.0))?;
        }
        Ok(())
    }
    .await;
    match result {
        Ok(()) => no_store_json(StatusCode::OK, &json!({})),
        Err(e) => e.response(),
    }
}

/// `POST /register` (RFC 7591).
pub(crate) async fn register<B>(server: &AuthorizationServer, req: Request<B>) -> Response<McpBody>
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    match register_inner(server, req).await {
        Ok(v) => no_store_json(StatusCode::CREATED, &v),
        Err(e) => e.response(),
    }
}

/// The most redirect URIs one client may register.
const MAX_REDIRECT_URIS: usize = 16;

async fn register_inner<B>(
    server: &AuthorizationServer,
    req: Request<B>,
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
        .check(peer(&req))
        .map_err(rate_limited)?;
    let (parts, body) = req.into_parts();
    if parts.method != Method::POST {
        return Err(OAuthError {
            status: StatusCode::METHOD_NOT_ALLOWED,
            ..OAuthError::invalid_request("use POST")
        });
    }
    let bytes = read_limited(body, server.inner().config.max_form_size).await?;
    let meta: Value = serde_json::from_slice(&bytes)
        .map_err(|e| OAuthError::new("invalid_client_metadata", format!("not JSON: {e}")))?;
    let mut client = client_from_metadata(&meta, random_token(16).map_err(OAuthError::server)?)?;
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
    server
        .inner()
        .config
        .store
        .put_client(client)
        .await
        .map_err(|e| OAuthError::server(e.0))?;
    Ok(Value::Object(out))
}

/// Reads and checks client metadata (RFC 7591 §2; also a client ID metadata document's).
pub(crate) fn client_from_metadata(
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
    if auth_method == "none" && grant_types.iter().any(|g| g == "client_credentials") {
        return Err(bad(
            "client_credentials needs an authenticated client, not `none`".to_owned(),
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
    })
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
        assert!(!redirect_uri_allowed("http://app.example/cb"));
        assert!(!redirect_uri_allowed("https://app.example/cb#frag"));
        assert!(!redirect_uri_allowed("javascript:alert(1)"));
        assert!(!redirect_uri_allowed("/relative"));
    }

    #[test]
    fn repeated_parameters_are_refused() {
        assert!(parse_params(b"a=1&a=2").is_err());
        assert_eq!(parse_params(b"a=1&b=").unwrap().len(), 1);
    }
}
