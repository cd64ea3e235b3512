//! `/revoke` (RFC 7009).

use std::net::IpAddr;

use ferromcp_dispatch::BoxError;
use http::{Request, Response, StatusCode};
use http_body::Body;
use serde_json::{Value, json};

use super::client_auth;
use super::oauth_error::{OAuthError, no_store_json, rate_limited};
use super::request::read_form;
use super::{AuthorizationServer, sha256_hex};
use ferromcp_http_server::McpBody;

/// `POST /revoke` (RFC 7009): the client authenticates as at the token endpoint; a token
/// it does not own, or an unknown one, is answered 200 all the same, and nothing happens.
pub(super) async fn revoke<B>(
    server: &AuthorizationServer,
    req: Request<B>,
    peer: IpAddr,
) -> Response<McpBody>
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    let result: Result<(), OAuthError> = async {
        server
            .inner()
            .token_limiter
            .check(peer)
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
