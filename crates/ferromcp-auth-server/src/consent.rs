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
//!    request id, the user's subject and the scopes they approved — or
//!    [`deny`](super::AuthorizationServer::deny) — and sends back the redirect response it
//!    returns.
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
//!     request_id: &str,
//!     user: &str,
//! ) -> http::Response<McpBody> {
//!     server.approve(request_id, user, vec!["mcp".to_owned()]).await
//! }
//! ```
//!
//! Pending requests expire after
//! [`pending_ttl`](super::AuthServerConfig::pending_ttl) (default
//! [`DEFAULT_PENDING_TTL`](super::DEFAULT_PENDING_TTL)) and can be completed once.

use ferromcp_dispatch::BoxFuture;
use http::Response;

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
}

/// Approves every request headlessly as one user, for every requested scope. For tests
/// and local development only: anyone who can reach `/authorize` gets tokens.
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
}
