//! [`OAuthProvider`]: the OAuth client as the HTTP transport's [`AuthProvider`].

use std::sync::{Mutex, MutexGuard};

use http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use url::Url;

use super::discovery::{Challenge, challenges_of, parse_challenge, parse_url};
use super::flow::{Obtained, flow};
use super::guard::{self, HttpClient};
use super::jwt::{DpopKey, NonceFor};
use super::token::{DPOP, DPOP_NONCE, TokenGrant};
use super::{Grant, OAuthConfig, OAuthError, Tokens};
use crate::transport::http::AuthProvider;

/// The OAuth client as the HTTP transport's [`AuthProvider`]: attach it with
/// [`HttpTransport::auth`](crate::HttpTransport::auth).
///
/// - Every request to the MCP server carries the token (`Authorization: Bearer`, or
///   `Authorization: DPoP` with a fresh `DPoP` proof); a request to another origin never
///   does.
/// - A token about to expire (within [`OAuthConfig::refresh_margin`]) is refreshed before the
///   request: the `refresh_token` grant, or the configured non-interactive grant again.
/// - A 401 runs the flow (after one `refresh_token` attempt) and the request is retried; a
///   401 `use_dpop_nonce` is retried with the server's `DPoP-Nonce`; a 403
///   `insufficient_scope` runs the flow again with the union of the granted and the
///   challenged scopes (step-up) — unless that union adds nothing, so a server that keeps
///   refusing is not re-authorized in a loop.
///
/// ```no_run
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// use std::sync::Arc;
/// use ferromcp_client::oauth::{OAuthConfig, OAuthProvider, RedirectReadingHandler};
/// use ferromcp_client::{Client, HttpTransport};
///
/// let url = "https://mcp.example/mcp";
/// let cfg = OAuthConfig::new("http://127.0.0.1:8976/callback", RedirectReadingHandler);
/// let provider = Arc::new(OAuthProvider::new(url, cfg)?);
/// let client = Client::builder()
///     .connect(HttpTransport::new(url)?.auth(provider.clone()))
///     .await?;
/// # let _ = client;
/// # Ok(()) }
/// ```
pub struct OAuthProvider {
    server: Url,
    http: HttpClient,
    cfg: OAuthConfig,
    dpop: Option<DpopKey>,
    state: Mutex<State>,
    flow_lock: tokio::sync::Mutex<()>,
}

#[derive(Default)]
struct State {
    tokens: Option<Tokens>,
    /// The scope granted (the token response's), else the one asked for.
    scope: Option<String>,
    /// The client at the token endpoint, for the refresh grant.
    grant: Option<TokenGrant>,
    /// The current token came from a refresh: a 401 now runs the whole flow.
    refreshed: bool,
    /// The last challenge, to run a non-interactive grant again ahead of expiry.
    challenge: Challenge,
    /// Refreshing the current token ahead of expiry failed: wait for the 401.
    ahead_failed: bool,
    /// The token endpoint refused the configured non-interactive grant: its inputs are fixed,
    /// so it is not tried again (SEP-1933: errors are surfaced, not retried).
    refused: bool,
}

impl std::fmt::Debug for OAuthProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthProvider")
            .field("server", &self.server.as_str())
            .field("dpop", &self.dpop.is_some())
            .finish_non_exhaustive()
    }
}

impl OAuthProvider {
    /// A provider for the MCP server at `server_url` (the transport's URL). Tokens the store
    /// holds for that URL are used while they are valid (a DPoP-bound one is not: its key
    /// was another provider's); their refresh token is not, since refreshing needs the
    /// authorization server this provider has not discovered yet: when such a token expires,
    /// the server's 401 runs the flow.
    pub fn new(server_url: &str, cfg: OAuthConfig) -> Result<Self, OAuthError> {
        let server = parse_url(server_url)?;
        let http = guard::client(&server, &cfg).map_err(|e| OAuthError::Http(e.to_string()))?;
        let dpop = if cfg.dpop {
            Some(DpopKey::generate()?)
        } else {
            None
        };
        let stored = cfg
            .store
            .load(server.as_str())
            .filter(|t| !t.is_dpop() && !t.expires_within(std::time::Duration::ZERO));
        let state = State {
            scope: stored.as_ref().and_then(|t| t.scope.clone()),
            tokens: stored,
            ..State::default()
        };
        Ok(Self {
            server,
            http,
            cfg,
            dpop,
            state: Mutex::new(state),
            flow_lock: tokio::sync::Mutex::new(()),
        })
    }

    /// The current tokens, if any.
    pub fn tokens(&self) -> Option<Tokens> {
        self.state().tokens.clone()
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Installs what a flow obtained.
    fn install(&self, got: Obtained, challenge: &Challenge) {
        self.cfg.store.save(self.server.as_str(), &got.tokens);
        let mut s = self.state();
        s.scope = got.tokens.scope.clone().or(got.scope);
        s.grant = Some(got.grant);
        s.tokens = Some(got.tokens);
        s.refreshed = false;
        s.ahead_failed = false;
        s.challenge = challenge.clone();
    }

    async fn run_flow(&self, challenge: &Challenge) -> Result<(), OAuthError> {
        if self.state().refused {
            return Err(OAuthError::Refused(
                "the authorization server refused this grant before; not trying again".into(),
            ));
        }
        // Boxed (a cold path): the flow's future is some 3 KB, which would otherwise sit in
        // the challenge handling's future and in every request future that awaits it.
        let got = match Box::pin(flow(
            &self.http,
            &self.server,
            challenge,
            &self.cfg,
            self.dpop.as_ref(),
        ))
        .await
        {
            Ok(got) => got,
            Err(e) => {
                if matches!(e, OAuthError::Refused(_))
                    && !matches!(self.cfg.grant, Grant::AuthorizationCode)
                {
                    self.state().refused = true;
                }
                return Err(e);
            }
        };
        self.install(got, challenge);
        Ok(())
    }

    async fn handle(&self, status: StatusCode, headers: &HeaderMap) -> Result<bool, OAuthError> {
        let all = challenges_of(headers);
        // RFC 9449 §9: a resource server's `use_dpop_nonce` is retried with its nonce (the
        // transport bounds the retries per request).
        if status == StatusCode::UNAUTHORIZED
            && let Some(dpop) = &self.dpop
            && all
                .iter()
                .any(|c| c.error.as_deref() == Some("use_dpop_nonce"))
        {
            let nonce = headers.get(DPOP_NONCE).and_then(|v| v.to_str().ok());
            return Ok(match nonce {
                Some(n) => {
                    dpop.set_nonce(NonceFor::ResourceServer, n);
                    true
                }
                None => false,
            });
        }
        let challenge = all
            .iter()
            .find(|c| {
                c.scheme.eq_ignore_ascii_case("bearer") || c.scheme.eq_ignore_ascii_case("dpop")
            })
            .or(all.first())
            .cloned()
            .unwrap_or_default();
        self.handle_challenge(status, challenge).await
    }

    async fn handle_challenge(
        &self,
        status: StatusCode,
        mut challenge: Challenge,
    ) -> Result<bool, OAuthError> {
        let _one_at_a_time = self.flow_lock.lock().await;
        if status == StatusCode::FORBIDDEN {
            if challenge.error.as_deref() != Some("insufficient_scope") {
                return Ok(false);
            }
            // Step-up: the union of what was granted and what is asked for.
            let (granted, have_token) = {
                let s = self.state();
                (s.scope.clone().unwrap_or_default(), s.tokens.is_some())
            };
            let mut scopes: Vec<&str> = granted.split_whitespace().collect();
            let before = scopes.len();
            for s in challenge
                .scope
                .as_deref()
                .unwrap_or_default()
                .split_whitespace()
            {
                if !scopes.contains(&s) {
                    scopes.push(s);
                }
            }
            if scopes.len() == before && have_token {
                tracing::debug!("403 insufficient_scope for scopes already granted: giving up");
                return Ok(false);
            }
            challenge.scope = Some(scopes.join(" "));
        } else if status != StatusCode::UNAUTHORIZED {
            return Ok(false);
        } else if self.try_refresh(false).await {
            return Ok(true);
        }
        self.run_flow(&challenge).await?;
        Ok(true)
    }

    /// The `refresh_token` grant. On a 401 (`ahead` false) only once per token from the full
    /// flow; ahead of expiry whenever there is a refresh token. False when there is nothing
    /// to refresh or it failed.
    async fn try_refresh(&self, ahead: bool) -> bool {
        let (grant, refresh_token) = {
            let s = self.state();
            if s.refreshed && !ahead {
                return false;
            }
            let rt = s.tokens.as_ref().and_then(|t| t.refresh_token.clone());
            match (s.grant.clone(), rt) {
                (Some(g), Some(rt)) => (g, rt),
                _ => return false,
            }
        };
        let tokens = match grant
            .request(
                &self.http,
                &[
                    ("grant_type", "refresh_token"),
                    ("refresh_token", &refresh_token),
                ],
            )
            .await
        {
            Ok(t) => t,
            Err(e) => {
                tracing::debug!(error = %e, "refresh failed");
                return false;
            }
        };
        let mut tokens = tokens;
        // RFC 6749 §6: the server may keep the refresh token (and not send it again).
        if tokens.refresh_token.is_none() {
            tokens.refresh_token = Some(refresh_token);
        }
        self.cfg.store.save(self.server.as_str(), &tokens);
        let mut s = self.state();
        if let Some(scope) = &tokens.scope {
            s.scope = Some(scope.clone());
        }
        s.tokens = Some(tokens);
        s.refreshed = true;
        s.ahead_failed = false;
        true
    }

    /// Refreshes a token about to expire (see [`OAuthConfig::refresh_margin`]).
    async fn refresh_ahead(&self) {
        let due = |s: &State| {
            !s.ahead_failed
                && s.tokens
                    .as_ref()
                    .is_some_and(|t| t.expires_within(self.cfg.refresh_margin))
        };
        if !due(&self.state()) {
            return;
        }
        let _one_at_a_time = self.flow_lock.lock().await;
        if !due(&self.state()) {
            return;
        }
        if self.try_refresh(true).await {
            tracing::debug!("token refreshed ahead of expiry");
            return;
        }
        if !matches!(self.cfg.grant, Grant::AuthorizationCode) {
            let challenge = self.state().challenge.clone();
            match self.run_flow(&challenge).await {
                Ok(()) => {
                    tracing::debug!("token renewed ahead of expiry");
                    return;
                }
                Err(e) => tracing::debug!(error = %e, "renewing ahead of expiry failed"),
            }
        }
        self.state().ahead_failed = true;
    }

    /// `Authorization` for the current token, and the token when it is DPoP-bound.
    fn credentials(&self) -> Option<(HeaderValue, Option<String>)> {
        let s = self.state();
        let t = s.tokens.as_ref()?;
        // DPoP only for a token the grant asked to bind (a proof went with the request).
        let bound = s.grant.as_ref().is_some_and(|g| g.dpop.is_some());
        let dpop = t.is_dpop() && bound && self.dpop.is_some();
        let scheme = if dpop { "DPoP" } else { "Bearer" };
        let mut v = HeaderValue::from_str(&format!("{scheme} {}", t.access_token)).ok()?;
        v.set_sensitive(true);
        Some((v, dpop.then(|| t.access_token.clone())))
    }
}

/// Whether `uri` is on `server`'s origin (scheme, host, port).
fn same_origin(uri: &Uri, server: &Url) -> bool {
    Url::parse(&uri.to_string()).is_ok_and(|u| u.origin() == server.origin())
}

impl AuthProvider for OAuthProvider {
    fn authorization(&self) -> Option<HeaderValue> {
        self.credentials().map(|(v, _)| v)
    }

    fn on_challenge<'a>(
        &'a self,
        status: StatusCode,
        www_authenticate: Option<&'a str>,
    ) -> ferromcp_dispatch::BoxFuture<'a, bool> {
        Box::pin(async move {
            let challenge = www_authenticate.map(parse_challenge).unwrap_or_default();
            match self.handle_challenge(status, challenge).await {
                Ok(retry) => retry,
                Err(e) => {
                    tracing::warn!(error = %e, "OAuth authorization failed");
                    false
                }
            }
        })
    }

    fn prepare(&self) -> ferromcp_dispatch::BoxFuture<'_, ()> {
        Box::pin(self.refresh_ahead())
    }

    fn apply(&self, method: &Method, uri: &Uri, headers: &mut HeaderMap) {
        if !same_origin(uri, &self.server) {
            tracing::warn!(%uri, "not sending OAuth credentials to another origin");
            headers.remove(header::AUTHORIZATION);
            return;
        }
        let Some((value, dpop_token)) = self.credentials() else {
            return;
        };
        headers.insert(header::AUTHORIZATION, value);
        headers.remove(DPOP);
        if let (Some(token), Some(key)) = (dpop_token, &self.dpop) {
            match key.proof(
                method.as_str(),
                &uri.to_string(),
                Some(&token),
                NonceFor::ResourceServer,
            ) {
                Ok(proof) => {
                    if let Ok(v) = HeaderValue::from_str(&proof) {
                        headers.insert(DPOP, v);
                    }
                }
                Err(e) => tracing::warn!(error = %e, "no DPoP proof"),
            }
        }
    }

    fn on_challenge_response<'a>(
        &'a self,
        status: StatusCode,
        headers: &'a HeaderMap,
    ) -> ferromcp_dispatch::BoxFuture<'a, bool> {
        Box::pin(async move {
            match self.handle(status, headers).await {
                Ok(retry) => retry,
                Err(e) => {
                    tracing::warn!(error = %e, "OAuth authorization failed");
                    false
                }
            }
        })
    }

    fn observe(&self, status: StatusCode, headers: &HeaderMap) {
        // RFC 9449 §9: a resource server may hand out the next nonce on any response.
        if status != StatusCode::UNAUTHORIZED
            && let Some(dpop) = &self.dpop
            && let Some(n) = headers.get(DPOP_NONCE).and_then(|v| v.to_str().ok())
        {
            dpop.set_nonce(NonceFor::ResourceServer, n);
        }
    }
}
