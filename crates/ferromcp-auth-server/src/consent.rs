//! The login-and-consent step of `/authorize`: a [`ConsentHook`] decides, for a request the
//! server has already validated (client, redirect URI, PKCE, scopes, resource), who the
//! user is and what they approve.
//!
//! [`AutoApprove`] (the default) approves every request at once as one fixed user: for
//! tests and local development. A real deployment plugs its own hook:
//!
//! 1. the hook returns [`Consent::Respond`] with its login / consent page (an HTML form),
//!    carrying [`AuthorizationRequest::request_id`] (e.g. in a hidden field);
//! 2. the form posts to a route of the application, which checks the user's credentials
//!    (and its own CSRF token), then calls
//!    [`AuthorizationServer::approve`](super::AuthorizationServer::approve) with the
//!    request id, **the headers of that browser request**, the user's subject and the
//!    scopes they approved — or [`deny`](super::AuthorizationServer::deny) — and sends back
//!    the response it returns.
//!
//! **Browser binding.** The login page's response carries a cookie `/authorize` sets
//! (`ferromcp-consent`, or `__Host-ferromcp-consent` with an `https` issuer; random,
//! `HttpOnly`, `SameSite=Lax`, `Path=/`, `Secure` with `https`). `approve` and `deny`
//! complete the request only when the headers they are given carry that cookie: otherwise
//! a 403 page, and the request stays pending. So the request id alone (it is in the page,
//! and may leak) does not let someone else finish the flow, and a page of another site
//! cannot make the user's browser post an approval (a `SameSite=Lax` cookie is not sent
//! on a cross-site POST). Keep the login form on the authorization server's origin and
//! pass the form post's own headers; an application that shows its consent in a later step
//! reads the request with
//! [`pending_request`](super::AuthorizationServer::pending_request), which checks the
//! cookie too.
//!
//! **What to show.** A [`Dynamic`](Registration::Dynamic) or
//! [`MetadataDocument`](Registration::MetadataDocument) client may have been registered by
//! anyone under any `client_name`: show where the user will be sent
//! ([`AuthorizationRequest::redirect_uri`]'s host) and the scopes, HTML-escaped.
//!
//! ```
//! use ferromcp_dispatch::BoxFuture;
//! use ferromcp_auth_server::{
//!     AuthorizationRequest, AuthorizationServer, Consent, ConsentHook,
//! };
//! use ferromcp_http_server::McpBody;
//!
//! struct LoginPage;
//!
//! impl ConsentHook for LoginPage {
//!     fn consent<'a>(
//!         &'a self,
//!         request: &'a AuthorizationRequest,
//!         _http: &'a http::request::Parts,
//!     ) -> BoxFuture<'a, Consent> {
//!         // The request id is base64url: safe in HTML as it is. Anything else shown (the
//!         // client's name, the scopes) must be HTML-escaped.
//!         let page = format!(
//!             r#"<form method="post" action="/login">
//!                  <input type="hidden" name="request" value="{}">
//!                  <input name="user"> <input name="password" type="password">
//!                  <button>Allow</button></form>"#,
//!             request.request_id
//!         );
//!         let mut r = http::Response::new(McpBody::full(page));
//!         r.headers_mut().insert(
//!             http::header::CONTENT_TYPE,
//!             http::HeaderValue::from_static("text/html; charset=utf-8"),
//!         );
//!         Box::pin(async move { Consent::Respond(r) })
//!     }
//! }
//!
//! /// The application's `POST /login`, once it has checked the password (and its CSRF
//! /// token): the redirect back to the client.
//! async fn on_login(
//!     server: &AuthorizationServer,
//!     form_post: &http::HeaderMap,
//!     request_id: &str,
//!     user: &str,
//! ) -> http::Response<McpBody> {
//!     server
//!         .approve(request_id, form_post, user, vec!["mcp".to_owned()])
//!         .await
//! }
//! ```
//!
//! Pending requests expire after
//! [`pending_ttl`](super::AuthServerConfig::pending_ttl) (default
//! [`DEFAULT_PENDING_TTL`](super::DEFAULT_PENDING_TTL)) and can be completed once.

use ferromcp_dispatch::BoxFuture;
use http::Response;

use super::store::Registration;
use ferromcp_http_server::McpBody;

/// A validated authorization request, as shown to the user.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct AuthorizationRequest {
    /// The pending request's id (for [`AuthorizationServer::approve`](super::AuthorizationServer::approve)).
    pub request_id: String,
    /// The client asking.
    pub client_id: String,
    /// Its `client_name`, when registered.
    pub client_name: Option<String>,
    /// Where the user will be sent back (exactly one of the client's registered URIs).
    pub redirect_uri: String,
    /// The scopes asked for (after defaults).
    pub scopes: Vec<String>,
    /// The resource (RFC 8707) the tokens will be for.
    pub resource: String,
    /// How the client was registered: anyone may have registered a
    /// [`Dynamic`](Registration::Dynamic) or [`MetadataDocument`](Registration::MetadataDocument)
    /// client under any name, so a consent page shows the redirect URI's host
    /// prominently, not only the client's self-chosen name.
    pub registration: Registration,
}

/// What the user decided.
#[non_exhaustive]
pub enum Consent {
    /// Approved, as `subject`, for `scopes` (a subset of the requested ones: more is cut to
    /// what was requested).
    Approve {
        /// The user's stable identifier (the tokens' `sub`).
        subject: String,
        /// The approved scopes.
        scopes: Vec<String>,
    },
    /// Refused: the client gets `error=access_denied`.
    Deny,
    /// Not decided yet: send this response (a login or consent page); the application
    /// completes the request later with `approve` or `deny`.
    Respond(Response<McpBody>),
}

impl std::fmt::Debug for Consent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Approve { subject, scopes } => f
                .debug_struct("Approve")
                .field("subject", subject)
                .field("scopes", scopes)
                .finish(),
            Self::Deny => f.write_str("Deny"),
            Self::Respond(r) => f.debug_tuple("Respond").field(&r.status()).finish(),
        }
    }
}

/// The login-and-consent step (see the module docs for plugging a real login page).
pub trait ConsentHook: Send + Sync + 'static {
    /// Decides on `request`; `http` is the browser's request (cookies, headers).
    fn consent<'a>(
        &'a self,
        request: &'a AuthorizationRequest,
        http: &'a http::request::Parts,
    ) -> BoxFuture<'a, Consent>;

    /// Whether this hook approves requests without asking anyone (default `false`;
    /// [`AutoApprove`]: `true`). The server refuses to start with such a hook off loopback
    /// unless [`allow_auto_approve_off_loopback`](super::AuthServerConfig::allow_auto_approve_off_loopback)
    /// is set.
    fn approves_without_user(&self) -> bool {
        false
    }
}

/// Approves every request headlessly as one user, for every requested scope. For tests
/// and local development only: anyone who can reach `/authorize` gets tokens, so the
/// server refuses to start with it on an issuer or bound address that is not loopback,
/// unless [`allow_auto_approve_off_loopback`](super::AuthServerConfig::allow_auto_approve_off_loopback)
/// is set.
#[derive(Debug, Clone)]
pub struct AutoApprove {
    subject: String,
}

impl AutoApprove {
    /// Approves as `subject`.
    pub fn new(subject: impl Into<String>) -> Self {
        Self {
            subject: subject.into(),
        }
    }
}

impl Default for AutoApprove {
    fn default() -> Self {
        Self::new("local-user")
    }
}

impl ConsentHook for AutoApprove {
    fn consent<'a>(
        &'a self,
        request: &'a AuthorizationRequest,
        _http: &'a http::request::Parts,
    ) -> BoxFuture<'a, Consent> {
        let c = Consent::Approve {
            subject: self.subject.clone(),
            scopes: request.scopes.clone(),
        };
        Box::pin(async move { c })
    }

    fn approves_without_user(&self) -> bool {
        true
    }
}
