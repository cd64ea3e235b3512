//! `/token`: the authorization-code, refresh-token and client-credentials grants.

use std::net::IpAddr;

use ferromcp_dispatch::BoxError;
use http::{Request, Response, StatusCode};
use http_body::Body;
use serde_json::Value;

use super::authorize::{check_resource, check_scopes};
use super::client_auth;
use super::oauth_error::{OAuthError, no_store_json, rate_limited};
use super::request::{Params, read_form};
use super::store::{ClientRecord, GrantRecord, Registration, Taken, now_secs};
use super::{AuthorizationServer, GRANT_TYPES, random_token, sha256_hex};
use ferromcp_http_server::McpBody;

/// `POST /token`.
pub(super) async fn token<B>(
    server: &AuthorizationServer,
    req: Request<B>,
    peer: IpAddr,
) -> Response<McpBody>
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    match token_inner(server, req, peer).await {
        Ok(v) => no_store_json(StatusCode::OK, &v),
        Err(e) => e.response(),
    }
}

async fn token_inner<B>(
    server: &AuthorizationServer,
    req: Request<B>,
    peer: IpAddr,
) -> Result<Value, OAuthError>
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    server
        .inner()
        .token_limiter
        .check(peer)
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
    let issued = match grant_type.as_str() {
        "authorization_code" => code_grant(server, &client, &form).await?,
        "refresh_token" => refresh_grant(server, &client, &form).await?,
        _ => return client_credentials(server, &client, &form).await,
    };
    keep_alive(server, client).await;
    Ok(issued)
}

/// A self-registered client just issued a token lives on: `refresh_token_ttl` (at least
/// `unused_client_ttl`) from now, rewritten when less than half of that is left.
async fn keep_alive(server: &AuthorizationServer, mut client: ClientRecord) {
    let c = &server.inner().config;
    let Some(expires) = client.expires_at else {
        return;
    };
    if client.registration != Registration::Dynamic {
        return;
    }
    let life = c.refresh_token_ttl.max(c.unused_client_ttl).as_secs();
    let now = now_secs();
    if expires.saturating_sub(now) >= life / 2 {
        return;
    }
    client.expires_at = Some(now.saturating_add(life));
    if let Err(e) = c.store.put_client(client).await {
        tracing::warn!(error = %e, "could not extend a registered client's lifetime");
    }
}

/// A named `resource` must be the grant's own (RFC 8707 §2.2: the token is for it).
fn same_resource(form: &Params, grant: &GrantRecord) -> Result<(), OAuthError> {
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
    // A token with no user behind it: only for clients the operator registered, never for
    // a self-registered or metadata-document client (whatever its record says).
    if client.registration != Registration::Operator {
        return Err(OAuthError::new(
            "unauthorized_client",
            "client_credentials is only for clients the operator registered",
        ));
    }
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
