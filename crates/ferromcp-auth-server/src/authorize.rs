//! `/authorize`: the authorization request (OAuth 2.1 §4.1.1, PKCE S256), the user's
//! consent, and the redirect back with a code or an error.

use std::net::IpAddr;

use ferromcp_dispatch::BoxError;
use http::header::{CACHE_CONTROL, HeaderValue, LOCATION, RETRY_AFTER};
use http::{Method, Request, Response, StatusCode};
use http_body::Body;

use super::consent::{AuthorizationRequest, Consent};
use super::oauth_error::{OAuthError, error_page, error_page_status, no_framing};
use super::pending::set_cookie;
use super::request::{find_client, parse_params, read_limited};
use super::store::{ClientRecord, GrantRecord, Registration, now_secs};
use super::{AuthorizationServer, random_token, sha256_hex};
use ferromcp_http_server::McpBody;

/// Scopes: the requested ones (or the defaults), each supported and allowed to the client.
pub(super) fn check_scopes(
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
pub(super) fn check_resource(
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

/// The error page instead of a redirect: for a client the operator did not register, an
/// error found at `/authorize` (before anyone was asked) is shown here, so the server's
/// origin never bounces a browser to a URI anyone could have registered (an open
/// redirector for phishing links).
fn error_here(e: &OAuthError) -> Response<McpBody> {
    let status = if e.error == "temporarily_unavailable" {
        StatusCode::SERVICE_UNAVAILABLE
    } else {
        StatusCode::BAD_REQUEST
    };
    error_page_status(status, &format!("{}: {}", e.error, e.description))
}

/// `GET /authorize` (also a form POST).
pub(super) async fn authorize<B>(
    server: &AuthorizationServer,
    req: Request<B>,
    peer: IpAddr,
) -> Response<McpBody>
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    if let Err(wait) = server.inner().authorize_limiter.check(peer) {
        let mut r = error_page_status(StatusCode::TOO_MANY_REQUESTS, "too many requests");
        if let Ok(v) = HeaderValue::from_str(&wait.as_secs().max(1).to_string()) {
            r.headers_mut().insert(RETRY_AFTER, v);
        }
        return r;
    }
    let (parts, body) = req.into_parts();
    let params = match parts.method {
        // Not HEAD: an authorization request has effects (a code, a pending request).
        Method::GET => parse_params(parts.uri.query().unwrap_or("").as_bytes()),
        Method::POST => match read_limited(body, &server.inner().config).await {
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
    let trusted = client.registration == Registration::Operator;
    let fail = |e: OAuthError| {
        if trusted {
            redirect_error(server, &redirect_uri, &e, state)
        } else {
            error_here(&e)
        }
    };
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
        registration: client.registration,
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
        Consent::Respond(mut page) => match server.add_pending(request, held, &parts.headers) {
            Ok(Some(cookie)) => {
                set_cookie(&mut page, cookie);
                no_framing(&mut page);
                page
            }
            Ok(None) => fail(OAuthError::new(
                "temporarily_unavailable",
                "too many pending authorization requests",
            )),
            Err(e) => fail(OAuthError::server(e)),
        },
        // Refused at once, with no page: for a client anyone could have registered, no
        // redirect either.
        Consent::Deny if !trusted => error_here(&OAuthError::new("access_denied", "refused")),
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
pub(super) async fn finish(
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
