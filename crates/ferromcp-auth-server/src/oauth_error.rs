//! OAuth error responses (RFC 6749 §5.2) and the other responses every endpoint writes:
//! `no-store` JSON, the plain-text error page, the anti-framing headers.

use http::header::{CACHE_CONTROL, CONTENT_TYPE, HeaderValue, RETRY_AFTER};
use http::{Response, StatusCode};
use serde_json::{Value, json};

use ferromcp_http_server::McpBody;

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

    pub(super) fn response(&self) -> Response<McpBody> {
        let body = json!({"error": self.error, "error_description": self.description});
        let mut r = no_store_json(self.status, &body);
        if self.basic_challenge {
            r.headers_mut().insert(
                http::header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Basic realm=\"token\""),
            );
        }
        if let Some(s) = self.retry_after
            && let Ok(v) = HeaderValue::from_str(&s.to_string())
        {
            r.headers_mut().insert(RETRY_AFTER, v);
        }
        r
    }
}

/// A JSON response with `Cache-Control: no-store` (token responses must not be cached).
pub(super) fn no_store_json(status: StatusCode, body: &Value) -> Response<McpBody> {
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
pub(super) fn error_page(why: &str) -> Response<McpBody> {
    error_page_status(StatusCode::BAD_REQUEST, why)
}

/// The error page with another status.
pub(crate) fn error_page_status(status: StatusCode, why: &str) -> Response<McpBody> {
    let mut r = Response::new(McpBody::full(format!(
        "Authorization request refused: {why}\n"
    )));
    *r.status_mut() = status;
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
pub(super) fn no_framing(r: &mut Response<McpBody>) {
    let h = r.headers_mut();
    h.entry(http::header::X_FRAME_OPTIONS)
        .or_insert(HeaderValue::from_static("DENY"));
    h.entry(http::header::CONTENT_SECURITY_POLICY)
        .or_insert(HeaderValue::from_static("frame-ancestors 'none'"));
    h.entry(CACHE_CONTROL)
        .or_insert(HeaderValue::from_static("no-store"));
}

pub(super) fn rate_limited(wait: std::time::Duration) -> OAuthError {
    OAuthError {
        status: StatusCode::TOO_MANY_REQUESTS,
        retry_after: Some(wait.as_secs().max(1)),
        ..OAuthError::new("slow_down", "too many requests; retry later")
    }
}
