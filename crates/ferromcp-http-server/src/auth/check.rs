//! The resource-server checks of the HTTP service (feature `auth`): bearer token on every
//! request, scopes by method and tool, challenges, and the RFC 9728 metadata document.
//! What is checked and answered is described in [`crate::auth`].

use ferromcp_types::jsonrpc::{Message, Payload};
use ferromcp_types::mcp::methods::TOOLS_CALL;
use http::header::{
    ACCESS_CONTROL_ALLOW_ORIGIN, ALLOW, AUTHORIZATION, CACHE_CONTROL, CONTENT_TYPE, HeaderValue,
    RETRY_AFTER, WWW_AUTHENTICATE,
};
use http::{Method, Response, StatusCode};
use serde::Deserialize;
use serde_json::value::RawValue;

use ferromcp_server::CallerId;

use crate::auth::{AuthConfig, AuthError, Principal};
use crate::body::McpBody;

/// Authenticates a request: on success the [`Principal`] (and its session binding) is in
/// `parts.extensions`; otherwise the response to send.
#[allow(
    clippy::result_large_err,
    reason = "the error is the HTTP response itself, built once on a cold path"
)]
pub(crate) async fn authenticate(
    config: &AuthConfig,
    parts: &mut http::request::Parts,
) -> Result<(), Response<McpBody>> {
    // Whatever an outer layer recorded, only the verified token speaks for the caller here.
    parts.extensions.remove::<Principal>();
    parts.extensions.remove::<CallerId>();
    let in_query = parts.uri.query().is_some_and(|q| {
        q.split('&')
            .any(|kv| kv.split('=').next() == Some("access_token"))
    });
    let mut values = parts.headers.get_all(AUTHORIZATION).iter();
    let Some(value) = values.next() else {
        // A token in the query string is never read: the request is unauthenticated.
        return Err(challenge(
            config,
            StatusCode::UNAUTHORIZED,
            None,
            None,
            None,
        ));
    };
    if in_query {
        let d = "access tokens are not accepted in the query string";
        return Err(challenge(
            config,
            StatusCode::BAD_REQUEST,
            Some("invalid_request"),
            Some(d),
            None,
        ));
    }
    if values.next().is_some() {
        let d = "more than one Authorization header";
        return Err(invalid_token(config, d));
    }
    let Some(text) = value.to_str().ok() else {
        return Err(invalid_token(config, "malformed Authorization header"));
    };
    let (scheme, rest) = text.split_once(' ').unwrap_or((text, ""));
    if !scheme.eq_ignore_ascii_case("bearer") {
        // No bearer credentials at all (RFC 6750 §3.1: no error code).
        return Err(challenge(
            config,
            StatusCode::UNAUTHORIZED,
            None,
            None,
            None,
        ));
    }
    let token = rest.trim_matches(' ');
    if !is_b64token(token) {
        return Err(invalid_token(config, "malformed bearer token"));
    }
    let principal = match config.verifier.verify(token).await {
        Ok(p) => p,
        Err(AuthError::InvalidToken(why)) => {
            tracing::debug!(reason = %why, "bearer token refused");
            return Err(invalid_token(config, &why));
        }
        Err(e) => {
            tracing::warn!(error = %e, "bearer token could not be verified");
            let mut r = plain(
                StatusCode::SERVICE_UNAVAILABLE,
                "temporarily_unavailable",
                "token verification is unavailable; try again later",
            );
            if let Some(wait) = config.verifier.retry_after() {
                // Whole seconds, rounded up, at least 1 (RFC 9110 §10.2.3).
                let secs = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
                r.headers_mut()
                    .insert(RETRY_AFTER, HeaderValue::from(secs.max(1)));
            }
            return Err(r);
        }
    };
    // Expiry is the verifier's to check (with its clock-skew leeway); a principal more than
    // a minute past its expiry is refused here too, whatever the verifier said.
    let slack = std::time::Duration::from_secs(60);
    if principal
        .expires_at
        .and_then(|e| e.checked_add(slack))
        .is_some_and(|e| e <= std::time::SystemTime::now())
    {
        return Err(invalid_token(config, "token expired"));
    }
    if !config.satisfies(&principal, &config.required_scopes) {
        return Err(insufficient(config, &config.required_scopes));
    }
    parts.extensions.insert(CallerId(principal.binding_key()));
    parts.extensions.insert(principal);
    // No token passthrough: handlers get the verified principal, never the raw token.
    parts.headers.remove(AUTHORIZATION);
    Ok(())
}

/// RFC 6750 `b64token`: `1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="`.
fn is_b64token(t: &str) -> bool {
    let body = t.trim_end_matches('=');
    !body.is_empty()
        && body
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~+/".contains(&b))
}

/// The `name` of a `tools/call`'s params, kept raw: the other fields are skipped without
/// being built (serde_json skips them iteratively, at any depth the transport admitted).
#[derive(Deserialize)]
struct ToolName<'a> {
    #[serde(borrow)]
    name: Option<&'a RawValue>,
}

/// The tool a `tools/call` names, as the server's own parameter type reads it (`name`, a
/// string); `None` when the params do not name one that way.
fn tool_name(params: Option<&Payload>) -> Option<String> {
    match params? {
        Payload::Raw(raw) => {
            let name = serde_json::from_str::<ToolName<'_>>(raw.get()).ok()?.name?;
            serde_json::from_str::<String>(name.get()).ok()
        }
        Payload::Value(v) => v.get("name")?.as_str().map(str::to_owned),
    }
}

/// Checks the per-method and per-tool scopes of `message`, the message the transport
/// decoded (and will dispatch): 403 `insufficient_scope`, with every scope the request
/// needs, when one is missing.
///
/// The check never lets a message through undecided. A `tools/call` whose tool cannot be
/// read (params missing, not an object, `name` not a string) needs what any tool could
/// need: its method's scopes and every scope of [`AuthConfig::tool_scopes`]. A body the
/// transport could not decode (`None`) is dispatched nowhere: the transport answers it
/// with its own error.
#[allow(
    clippy::result_large_err,
    reason = "the error is the HTTP response itself, built once on a cold path"
)]
pub(crate) fn check_scopes(
    config: &AuthConfig,
    parts: &http::request::Parts,
    message: Option<&Message>,
) -> Result<(), Response<McpBody>> {
    if config.method_scopes.is_empty() && config.tool_scopes.is_empty() {
        return Ok(());
    }
    let Some(method) = message.and_then(Message::method) else {
        // Undecodable (never dispatched), or a response: no method, no scope.
        return Ok(());
    };
    let Some(principal) = parts.extensions.get::<Principal>() else {
        // `authenticate` ran first and records a principal on success: without one there is
        // nothing the request may do.
        return Err(insufficient(config, &config.scopes_for(Some(method), None)));
    };
    let mut required = config.scopes_for(Some(method), None);
    if method == TOOLS_CALL && !config.tool_scopes.is_empty() {
        let params = match message {
            Some(Message::Request(r)) => r.params.as_ref(),
            Some(Message::Notification(n)) => n.params.as_ref(),
            _ => None,
        };
        let extra: Vec<&String> = match tool_name(params) {
            Some(tool) => config
                .tool_scopes
                .get(&tool)
                .into_iter()
                .flatten()
                .collect(),
            None => {
                let mut all: Vec<&String> = config.tool_scopes.values().flatten().collect();
                all.sort_unstable();
                all
            }
        };
        for s in extra {
            if !required.contains(s) {
                required.push(s.clone());
            }
        }
    }
    if !config.satisfies(principal, &required) {
        return Err(insufficient(config, &required));
    }
    Ok(())
}

/// The RFC 9728 protected-resource metadata response when `path` is one of its well-known
/// paths (`None` otherwise): for an application that serves its own routes next to the MCP
/// endpoint (the embedded authorization server does).
pub fn metadata_response(
    config: &AuthConfig,
    method: &Method,
    path: &str,
) -> Option<Response<McpBody>> {
    if !config.metadata_paths().iter().any(|p| p == path) {
        return None;
    }
    let mut r = if *method == Method::GET || *method == Method::HEAD {
        let body = serde_json::to_vec(&config.metadata()).unwrap_or_default();
        let mut r = Response::new(McpBody::full(body));
        r.headers_mut()
            .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        r.headers_mut()
            .insert(CACHE_CONTROL, HeaderValue::from_static("max-age=3600"));
        r
    } else {
        let mut r = Response::new(McpBody::empty());
        *r.status_mut() = StatusCode::METHOD_NOT_ALLOWED;
        r.headers_mut()
            .insert(ALLOW, HeaderValue::from_static("GET, HEAD"));
        r
    };
    // Browser-based clients read it cross-origin; it holds nothing secret.
    r.headers_mut()
        .insert(ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
    Some(r)
}

fn invalid_token(config: &AuthConfig, why: &str) -> Response<McpBody> {
    challenge(
        config,
        StatusCode::UNAUTHORIZED,
        Some("invalid_token"),
        Some(why),
        None,
    )
}

fn insufficient(config: &AuthConfig, scopes: &[String]) -> Response<McpBody> {
    challenge(
        config,
        StatusCode::FORBIDDEN,
        Some("insufficient_scope"),
        Some("the token lacks a scope this operation needs"),
        Some(scopes),
    )
}

/// A challenge: `Bearer [error="…", ]resource_metadata="…"[, scope="…"][, error_description="…"]`.
/// The 401 scope hint is the scopes every request needs, else the advertised ones.
fn challenge(
    config: &AuthConfig,
    status: StatusCode,
    error: Option<&str>,
    description: Option<&str>,
    scopes: Option<&[String]>,
) -> Response<McpBody> {
    let mut params: Vec<String> = Vec::new();
    if let Some(e) = error {
        params.push(format!("error=\"{e}\""));
    }
    params.push(format!(
        "resource_metadata=\"{}\"",
        quoted(&config.resource_metadata_url())
    ));
    let hint = match scopes {
        Some(s) => s.to_vec(),
        None if !config.required_scopes.is_empty() => config.required_scopes.clone(),
        None => config.metadata().scopes_supported,
    };
    if !hint.is_empty() {
        params.push(format!("scope=\"{}\"", quoted(&hint.join(" "))));
    }
    if let Some(d) = description {
        params.push(format!("error_description=\"{}\"", quoted(d)));
    }
    let header = format!("Bearer {}", params.join(", "));
    let mut r = plain(
        status,
        error.unwrap_or("invalid_token"),
        description.unwrap_or("authentication required"),
    );
    match HeaderValue::from_str(&header) {
        Ok(v) => {
            r.headers_mut().insert(WWW_AUTHENTICATE, v);
        }
        Err(_) => {
            r.headers_mut()
                .insert(WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
    }
    r
}

/// An OAuth-style JSON error body.
fn plain(status: StatusCode, error: &str, description: &str) -> Response<McpBody> {
    let body = serde_json::json!({"error": error, "error_description": description});
    let mut r = Response::new(McpBody::full(body.to_string()));
    *r.status_mut() = status;
    r.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    r
}

/// Text safe inside an RFC 6750 quoted auth-param: printable ASCII without `"` and `\`
/// (anything else, CR/LF included, becomes `?`).
fn quoted(s: &str) -> String {
    s.chars()
        .map(|c| {
            if (' '..='~').contains(&c) && c != '"' && c != '\\' {
                c
            } else {
                '?'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_strips_injection() {
        assert_eq!(quoted("a\"b\r\nc\\é"), "a?b??c??");
    }

    #[test]
    fn b64token_charset() {
        assert!(is_b64token("abc.DEF-_~+/=="));
        assert!(!is_b64token(""));
        assert!(!is_b64token("a b"));
        assert!(!is_b64token("=="));
    }
}
