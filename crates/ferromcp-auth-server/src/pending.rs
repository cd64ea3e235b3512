//! Authorization requests waiting for a login page's decision, each bound to the browser
//! that started it by a cookie, and their completion
//! ([`approve`](AuthorizationServer::approve) / [`deny`](AuthorizationServer::deny)).
//!
//! When `/authorize` shows a login page ([`Consent::Respond`]), its response sets a random
//! cookie (`HttpOnly`, `SameSite=Lax`, `Path=/`, and `Secure` with an `https` issuer, then
//! named with the `__Host-` prefix); the pending request keeps the cookie's hash. Completing
//! it needs the same cookie: a request id that leaked (a log, a shared screen, a phishing
//! page that started the request itself) is useless from another browser.

use std::collections::HashMap;
use std::sync::Mutex;

use http::header::{COOKIE, HeaderValue, SET_COOKIE};
use http::{HeaderMap, Response, StatusCode};

use super::authorize::{self, Held};
use super::client_auth::ct_eq;
use super::consent::{AuthorizationRequest, Consent};
use super::oauth_error::error_page_status;
use super::{AuthorizationServer, random_token, sha256_hex};
use ferromcp_http_server::McpBody;

/// A request waiting for a login page's decision.
pub(crate) struct Pending {
    request: AuthorizationRequest,
    held: Held,
    /// The SHA-256 (hex) of the browser's binding cookie.
    binding: String,
    created: tokio::time::Instant,
}

/// The pending requests, by request id.
#[derive(Default)]
pub(crate) struct PendingTable(Mutex<HashMap<String, Pending>>);

/// The binding cookie's name: `__Host-` prefixed when it is `Secure`.
fn cookie_name(secure: bool) -> &'static str {
    if secure {
        "__Host-ferromcp-consent"
    } else {
        "ferromcp-consent"
    }
}

/// The binding cookie's value in these request headers, if any well-formed one.
fn cookie_value(headers: &HeaderMap, secure: bool) -> Option<String> {
    let name = cookie_name(secure);
    headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|c| c.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.to_owned())
        .filter(|v| {
            v.len() == 43
                && v.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-_".contains(&b))
        })
}

/// Why a pending request cannot be completed.
enum Refused {
    Unknown,
    OtherBrowser,
}

impl AuthorizationServer {
    fn secure_cookie(&self) -> bool {
        self.inner().issuer.starts_with("https://")
    }

    /// Records a request waiting for a login page, bound to the browser of `headers`: the
    /// `Set-Cookie` value to add to the page, or `None` when too many are pending.
    pub(crate) fn add_pending(
        &self,
        request: AuthorizationRequest,
        held: Held,
        headers: &HeaderMap,
    ) -> Result<Option<HeaderValue>, String> {
        let secure = self.secure_cookie();
        // One value per browser: a second tab's request reuses the cookie it already has.
        let value = match cookie_value(headers, secure) {
            Some(v) => v,
            None => random_token(32)?,
        };
        let c = &self.inner().config;
        let mut m = self
            .inner()
            .pending
            .0
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if m.len() >= c.max_pending {
            m.retain(|_, p| p.created.elapsed() < c.pending_ttl);
            if m.len() >= c.max_pending {
                return Ok(None);
            }
        }
        let cookie = format!(
            "{}={value}; Path=/; Max-Age={}; HttpOnly; SameSite=Lax{}",
            cookie_name(secure),
            c.pending_ttl.as_secs().max(1),
            if secure { "; Secure" } else { "" }
        );
        let header = HeaderValue::from_str(&cookie).map_err(|e| e.to_string())?;
        m.insert(
            request.request_id.clone(),
            Pending {
                request,
                held,
                binding: sha256_hex(value.as_bytes()),
                created: tokio::time::Instant::now(),
            },
        );
        Ok(Some(header))
    }

    /// Takes the pending request `id` if it is live and `headers` carry its cookie; a
    /// request asked for from another browser stays pending.
    fn take_pending(&self, id: &str, headers: &HeaderMap) -> Result<Pending, Refused> {
        let c = &self.inner().config;
        let mut m = self
            .inner()
            .pending
            .0
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let p = m.get(id).ok_or(Refused::Unknown)?;
        if p.created.elapsed() >= c.pending_ttl {
            m.remove(id);
            return Err(Refused::Unknown);
        }
        let Some(value) = cookie_value(headers, self.secure_cookie()) else {
            return Err(Refused::OtherBrowser);
        };
        if !ct_eq(
            sha256_hex(value.as_bytes()).as_bytes(),
            p.binding.as_bytes(),
        ) {
            return Err(Refused::OtherBrowser);
        }
        m.remove(id).ok_or(Refused::Unknown)
    }

    /// The pending request `request_id`, if it is live and `headers` (the browser's
    /// request) carry the cookie `/authorize` bound it to: for an application that shows
    /// its consent page in a later step.
    pub fn pending_request(
        &self,
        request_id: &str,
        headers: &HeaderMap,
    ) -> Option<AuthorizationRequest> {
        let c = &self.inner().config;
        let m = self
            .inner()
            .pending
            .0
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let p = m.get(request_id)?;
        let value = cookie_value(headers, self.secure_cookie())?;
        let bound = ct_eq(
            sha256_hex(value.as_bytes()).as_bytes(),
            p.binding.as_bytes(),
        );
        (bound && p.created.elapsed() < c.pending_ttl).then(|| p.request.clone())
    }

    /// Completes a pending request (see [`ConsentHook`](super::ConsentHook)) as approved by
    /// `subject` for `scopes` (cut to the requested ones): the redirect to send to the
    /// browser.
    ///
    /// `headers` are those of the browser's request completing it (the application's login
    /// form post): they must carry the cookie `/authorize` set with the login page, so the
    /// user who approves is the one who started the request. Without it (another browser,
    /// a forged post) the answer is a 403 page and the request stays pending; an unknown or
    /// expired request id gets a 400 page.
    pub async fn approve(
        &self,
        request_id: &str,
        headers: &HeaderMap,
        subject: impl Into<String>,
        scopes: Vec<String>,
    ) -> Response<McpBody> {
        let consent = Consent::Approve {
            subject: subject.into(),
            scopes,
        };
        self.complete(request_id, headers, consent).await
    }

    /// Completes a pending request as refused (`access_denied`); `headers` as for
    /// [`approve`](Self::approve).
    pub async fn deny(&self, request_id: &str, headers: &HeaderMap) -> Response<McpBody> {
        self.complete(request_id, headers, Consent::Deny).await
    }

    async fn complete(
        &self,
        request_id: &str,
        headers: &HeaderMap,
        consent: Consent,
    ) -> Response<McpBody> {
        match self.take_pending(request_id, headers) {
            Ok(p) => authorize::finish(self, &p.request, &p.held, consent).await,
            Err(Refused::Unknown) => error_page_status(
                StatusCode::BAD_REQUEST,
                "unknown or expired authorization request",
            ),
            Err(Refused::OtherBrowser) => {
                tracing::warn!("authorization request completed without its browser's cookie");
                error_page_status(
                    StatusCode::FORBIDDEN,
                    "this authorization request was started in another browser",
                )
            }
        }
    }
}

/// Adds the binding cookie to a login page.
pub(crate) fn set_cookie(page: &mut Response<McpBody>, cookie: HeaderValue) {
    page.headers_mut().append(SET_COOKIE, cookie);
}
