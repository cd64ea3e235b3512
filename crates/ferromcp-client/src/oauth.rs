//! OAuth 2.1 authorization for the HTTP transport (`oauth` feature): the MCP
//! authorization flow of the 2025-11-25 revision, run before connecting.
//!
//! [`authorize`] probes the server with an unauthenticated `initialize` POST; on a 401 it
//! discovers the protected-resource metadata (RFC 9728: `resource_metadata` from
//! `WWW-Authenticate`, else the path-suffixed then the root well-known URL; a server with
//! none, and none named in the challenge, gets the 2025-03-26 discovery), checks its
//! `resource` against the server URL, discovers the authorization server's metadata
//! (RFC 8414 then OpenID Connect discovery, in the spec's order) and checks its `issuer`,
//! registers the client (pre-registered credentials, else dynamic client registration),
//! runs the authorization-code flow with PKCE S256 through an [`AuthorizationHandler`] (a
//! server without S256 in `code_challenge_methods_supported` is refused), sends `resource`
//! on both requests, and exchanges the code (`client_secret_basic`, `client_secret_post` or
//! `none`). The tokens go to a [`TokenStore`].
//!
//! [`OAuthProvider`] is the usual entry: attached with
//! [`HttpTransport::auth`](crate::HttpTransport::auth), it sends `Authorization: Bearer` on
//! every request, runs the flow on a 401 and retries, and steps up on a 403
//! `insufficient_scope` (bounded by [`MAX_AUTH_RETRIES`](crate::transport::http::MAX_AUTH_RETRIES)
//! per request, and never for scopes already granted). [`authorize`] runs the flow up front
//! instead, from an `initialize` probe.
//!
//! On a 401 with a refresh token from the full flow, the provider first tries the
//! `refresh_token` grant (once: a 401 right after a refresh runs the whole flow).
//!
//! Endpoints must be `https` except on loopback hosts. Not built yet: refreshing ahead of
//! `expires_in` (expiry is noticed by the 401), client ID metadata documents, the
//! client-credentials, token-exchange and JWT-bearer grants, and DPoP.

use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use bytes::Bytes;
use http::{HeaderValue, Method, Request, StatusCode, header};
use http_body_util::{BodyExt, Full, Limited};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use url::Url;

use crate::transport::http::client::{HttpClient, build};
use crate::transport::http::{AuthProvider, HttpConfig};

/// The largest metadata or token response read.
const MAX_BODY: usize = 256 * 1024;
/// The bound on one OAuth HTTP exchange.
const EXCHANGE_TIMEOUT: Duration = Duration::from_secs(10);

/// Why the authorization flow stopped.
#[derive(Debug, thiserror::Error)]
pub enum OAuthError {
    /// A URL is malformed or not allowed (plain `http` off loopback).
    #[error("bad URL: {0}")]
    Url(String),
    /// An HTTP exchange failed.
    #[error("HTTP: {0}")]
    Http(String),
    /// Metadata was missing, malformed or failed a check.
    #[error("discovery: {0}")]
    Discovery(String),
    /// The authorization server refused or answered badly.
    #[error("authorization: {0}")]
    Authorization(String),
}

type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The redirect's parameters, as the authorization hook saw them.
#[derive(Debug, Clone)]
pub struct AuthorizationResponse {
    /// `code`.
    pub code: String,
    /// `state` (checked against the one sent).
    pub state: Option<String>,
    /// `iss` (RFC 9207), when the redirect carries it: compared with the recorded issuer.
    pub iss: Option<String>,
}

/// The application's part of the flow: open `url` (a browser, or a headless agent) and
/// return the `code` and `state` the authorization server redirected to `redirect_uri` with.
pub trait AuthorizationHandler: Send + Sync {
    /// Runs the user-facing step for the authorization URL.
    fn authorize<'a>(
        &'a self,
        url: &'a str,
    ) -> BoxFuture<'a, Result<AuthorizationResponse, OAuthError>>;
}

/// A headless [`AuthorizationHandler`] for authorization servers that redirect at once
/// (test servers, pre-approved clients): GETs the authorization URL without following the
/// redirect and reads `code` and `state` from its `Location`.
#[derive(Debug, Default, Clone, Copy)]
pub struct RedirectReadingHandler;

impl AuthorizationHandler for RedirectReadingHandler {
    fn authorize<'a>(
        &'a self,
        url: &'a str,
    ) -> BoxFuture<'a, Result<AuthorizationResponse, OAuthError>> {
        Box::pin(async move {
            let url = parse_url(url)?;
            let http = build(&HttpConfig::default(), url.scheme())
                .map_err(|e| OAuthError::Http(e.to_string()))?;
            let req = Request::builder()
                .method(Method::GET)
                .uri(url.as_str())
                .body(Full::new(Bytes::new()))
                .map_err(|e| OAuthError::Http(e.to_string()))?;
            let resp = tokio::time::timeout(EXCHANGE_TIMEOUT, http.request(req))
                .await
                .map_err(|_| OAuthError::Http("authorization request timed out".into()))?
                .map_err(|e| OAuthError::Http(e.to_string()))?;
            if !resp.status().is_redirection() {
                return Err(OAuthError::Authorization(format!(
                    "the authorization endpoint answered {} instead of a redirect",
                    resp.status()
                )));
            }
            let location = resp
                .headers()
                .get(header::LOCATION)
                .and_then(|v| v.to_str().ok())
                .ok_or_else(|| OAuthError::Authorization("redirect without Location".into()))?;
            let target = url
                .join(location)
                .map_err(|e| OAuthError::Authorization(format!("redirect Location: {e}")))?;
            let mut code = None;
            let mut state = None;
            let mut error = None;
            let mut iss = None;
            for (k, v) in target.query_pairs() {
                match k.as_ref() {
                    "code" => code = Some(v.into_owned()),
                    "state" => state = Some(v.into_owned()),
                    "error" => error = Some(v.into_owned()),
                    "iss" => iss = Some(v.into_owned()),
                    _ => {}
                }
            }
            match (code, error) {
                (Some(code), _) => Ok(AuthorizationResponse { code, state, iss }),
                (None, Some(e)) => Err(OAuthError::Authorization(format!(
                    "the authorization server refused: {e}"
                ))),
                (None, None) => Err(OAuthError::Authorization(
                    "the redirect carries no code".into(),
                )),
            }
        })
    }
}

/// Tokens from the token endpoint.
#[derive(Debug, Clone)]
pub struct Tokens {
    /// `access_token`.
    pub access_token: String,
    /// `refresh_token`, when issued.
    pub refresh_token: Option<String>,
    /// `expires_in`, seconds.
    pub expires_in: Option<u64>,
    /// `scope`, when given.
    pub scope: Option<String>,
}

/// Where tokens are kept between runs; [`MemoryTokenStore`] by default.
pub trait TokenStore: Send + Sync {
    /// The stored tokens for `resource`.
    fn load(&self, resource: &str) -> Option<Tokens>;
    /// Stores tokens for `resource`.
    fn save(&self, resource: &str, tokens: &Tokens);
}

/// A process-local [`TokenStore`].
#[derive(Debug, Default)]
pub struct MemoryTokenStore(Mutex<Vec<(String, Tokens)>>);

impl TokenStore for MemoryTokenStore {
    fn load(&self, resource: &str) -> Option<Tokens> {
        let map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        map.iter()
            .find(|(r, _)| r == resource)
            .map(|(_, t)| t.clone())
    }
    fn save(&self, resource: &str, tokens: &Tokens) {
        let mut map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        map.retain(|(r, _)| r != resource);
        map.push((resource.to_owned(), tokens.clone()));
    }
}

/// Pre-registered client credentials.
#[derive(Debug, Clone)]
pub struct ClientCredentials {
    /// `client_id`.
    pub client_id: String,
    /// `client_secret`, for a confidential client.
    pub client_secret: Option<String>,
}

/// What the flow needs from the application.
pub struct OAuthConfig {
    /// The redirect URI registered (or to register) for the client.
    pub redirect_uri: String,
    /// `client_name` for dynamic registration.
    pub client_name: String,
    /// Pre-registered credentials; without them the client registers dynamically.
    pub credentials: Option<ClientCredentials>,
    /// The authorization step.
    pub handler: Box<dyn AuthorizationHandler>,
    /// Where tokens go.
    pub store: Box<dyn TokenStore>,
}

impl std::fmt::Debug for OAuthConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthConfig")
            .field("redirect_uri", &self.redirect_uri)
            .field("client_name", &self.client_name)
            .finish_non_exhaustive()
    }
}

/// Runs the flow for the MCP server at `server_url`: `Ok(None)` when the server did not ask
/// for authorization (no 401), `Ok(Some(tokens))` once authorized.
pub async fn authorize(server_url: &str, cfg: &OAuthConfig) -> Result<Option<Tokens>, OAuthError> {
    let server = parse_url(server_url)?;
    let http = build(&HttpConfig::default(), server.scheme())
        .map_err(|e| OAuthError::Http(e.to_string()))?;
    let (status, www) = probe(&http, &server).await?;
    if status != StatusCode::UNAUTHORIZED {
        return Ok(None);
    }
    let challenge = www.as_deref().map(parse_challenge).unwrap_or_default();
    flow(&http, &server, &challenge, cfg)
        .await
        .map(|(t, _, _)| Some(t))
}

/// The flow after a challenge: the tokens and the scope requested.
async fn flow(
    http: &HttpClient,
    server: &Url,
    challenge: &Challenge,
    cfg: &OAuthConfig,
) -> Result<(Tokens, Option<String>, TokenGrant), OAuthError> {
    let http = http.clone();
    let server = server.clone();

    // Protected-resource metadata (RFC 9728).
    let found = discover_prm(&http, &server, challenge.resource_metadata.as_deref()).await?;
    let (prm, resource, asm) = match found {
        Some(prm) => {
            let resource = prm
                .get("resource")
                .and_then(Value::as_str)
                .ok_or_else(|| {
                    OAuthError::Discovery("protected-resource metadata has no `resource`".into())
                })?
                .to_owned();
            if !resource_matches(&resource, &server) {
                return Err(OAuthError::Discovery(format!(
                    "protected-resource metadata is for {resource}, not {server}"
                )));
            }
            let issuer = prm
                .get("authorization_servers")
                .and_then(Value::as_array)
                .and_then(|a| a.first())
                .and_then(Value::as_str)
                .ok_or_else(|| OAuthError::Discovery("no `authorization_servers`".into()))?
                .to_owned();
            // Authorization-server metadata (RFC 8414, then OIDC).
            let asm = discover_as(&http, &issuer).await?;
            (prm, resource, asm)
        }
        // A 2025-03-26 server (no protected-resource metadata, and none named in the
        // challenge): the authorization server is the MCP server's origin, its metadata at
        // the root well-known path, else the default endpoints /authorize, /token, /register.
        None => (
            json!({}),
            server.to_string(),
            legacy_as(&http, &server).await?,
        ),
    };
    let methods = asm
        .get("code_challenge_methods_supported")
        .and_then(Value::as_array);
    if !methods.is_some_and(|m| m.iter().any(|v| v == "S256")) {
        return Err(OAuthError::Discovery(
            "the authorization server does not advertise PKCE S256".into(),
        ));
    }
    let authorization_endpoint = endpoint(&asm, "authorization_endpoint")?;
    let token_endpoint = endpoint(&asm, "token_endpoint")?;

    // Registration.
    let (client_id, client_secret, registered_method) = match &cfg.credentials {
        Some(c) => (c.client_id.clone(), c.client_secret.clone(), None),
        None => {
            let reg = asm
                .get("registration_endpoint")
                .and_then(Value::as_str)
                .ok_or_else(|| {
                    OAuthError::Authorization(
                        "no pre-registered credentials and no registration_endpoint".into(),
                    )
                })?;
            let reg = parse_url(reg)?;
            // SEP-837: `native` for a loopback redirect (desktop and CLI apps), else `web`.
            let application_type = match Url::parse(&cfg.redirect_uri) {
                Ok(u) if is_loopback(&u) => "native",
                _ => "web",
            };
            let body = json!({
                "application_type": application_type,
                "client_name": cfg.client_name,
                "redirect_uris": [cfg.redirect_uri],
                "grant_types": ["authorization_code", "refresh_token"],
                "response_types": ["code"],
                "token_endpoint_auth_method": "none",
            });
            let (status, answer) = send(
                &http,
                Method::POST,
                &reg,
                Some(("application/json", body.to_string())),
                None,
            )
            .await?;
            if !status.is_success() {
                return Err(OAuthError::Authorization(format!(
                    "client registration answered {status}"
                )));
            }
            let v: Value = serde_json::from_slice(&answer)
                .map_err(|e| OAuthError::Authorization(format!("registration answer: {e}")))?;
            let id = v.get("client_id").and_then(Value::as_str).ok_or_else(|| {
                OAuthError::Authorization("registration without client_id".into())
            })?;
            let secret = v
                .get("client_secret")
                .and_then(Value::as_str)
                .map(str::to_owned);
            let method = v
                .get("token_endpoint_auth_method")
                .and_then(Value::as_str)
                .map(str::to_owned);
            (id.to_owned(), secret, method)
        }
    };

    // Scope: the challenge's, else the resource's scopes_supported, else none.
    let scope = challenge.scope.clone().or_else(|| {
        prm.get("scopes_supported")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join(" ")
            })
    });
    let scope = scope.filter(|s| !s.is_empty());

    // Authorization request with PKCE S256.
    let verifier = random_token(32)?;
    let challenge_s256 = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
    let state = random_token(16)?;
    let mut auth_url = authorization_endpoint.clone();
    {
        let mut q = auth_url.query_pairs_mut();
        q.append_pair("response_type", "code")
            .append_pair("client_id", &client_id)
            .append_pair("redirect_uri", &cfg.redirect_uri)
            .append_pair("code_challenge", &challenge_s256)
            .append_pair("code_challenge_method", "S256")
            .append_pair("state", &state)
            .append_pair("resource", &resource);
        if let Some(s) = &scope {
            q.append_pair("scope", s);
        }
    }
    let answer = cfg.handler.authorize(auth_url.as_str()).await?;
    if answer.state.as_deref() != Some(state.as_str()) {
        return Err(OAuthError::Authorization(
            "the redirect's state does not match".into(),
        ));
    }
    // RFC 9207: a present `iss` must equal the metadata's issuer exactly (no normalization);
    // an advertised one must be present.
    let recorded_issuer = asm
        .get("issuer")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let iss_advertised = asm
        .get("authorization_response_iss_parameter_supported")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    match answer.iss.as_deref() {
        Some(iss) if iss != recorded_issuer => {
            return Err(OAuthError::Authorization(format!(
                "the redirect's iss {iss:?} is not the issuer {recorded_issuer:?}"
            )));
        }
        None if iss_advertised => {
            return Err(OAuthError::Authorization(
                "the authorization server advertises iss but the redirect has none".into(),
            ));
        }
        _ => {}
    }

    // Token request.
    let auth_methods: Vec<String> = asm
        .get("token_endpoint_auth_methods_supported")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_else(|| vec!["client_secret_basic".to_owned()]);
    let method = match (&client_secret, registered_method) {
        (None, _) => "none".to_owned(),
        (Some(_), Some(m)) => m,
        (Some(_), None) if auth_methods.iter().any(|m| m == "client_secret_basic") => {
            "client_secret_basic".to_owned()
        }
        (Some(_), None) if auth_methods.iter().any(|m| m == "client_secret_post") => {
            "client_secret_post".to_owned()
        }
        (Some(_), None) if auth_methods.iter().any(|m| m == "none") => "none".to_owned(),
        (Some(_), None) => "client_secret_basic".to_owned(),
    };
    let grant = TokenGrant {
        token_endpoint,
        client_id,
        client_secret,
        method,
        resource: resource.clone(),
    };
    let tokens = grant
        .request(
            &http,
            &[
                ("grant_type", "authorization_code"),
                ("code", &answer.code),
                ("redirect_uri", &cfg.redirect_uri),
                ("code_verifier", &verifier),
            ],
        )
        .await?;
    cfg.store.save(&resource, &tokens);
    Ok((tokens, scope, grant))
}

/// What a token request needs besides its grant: the endpoint, the client and how it
/// authenticates, and the resource.
#[derive(Clone)]
struct TokenGrant {
    token_endpoint: Url,
    client_id: String,
    client_secret: Option<String>,
    method: String,
    resource: String,
}

impl TokenGrant {
    async fn request(
        &self,
        http: &HttpClient,
        params: &[(&str, &str)],
    ) -> Result<Tokens, OAuthError> {
        let mut basic = None;
        let form_body = {
            let mut form = url::form_urlencoded::Serializer::new(String::new());
            for (k, v) in params {
                form.append_pair(k, v);
            }
            form.append_pair("resource", &self.resource);
            match (self.method.as_str(), &self.client_secret) {
                ("client_secret_basic", Some(secret)) => {
                    let enc = |s: &str| {
                        url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>()
                    };
                    basic = Some(format!(
                        "Basic {}",
                        STANDARD.encode(format!("{}:{}", enc(&self.client_id), enc(secret)))
                    ));
                }
                ("client_secret_post", Some(secret)) => {
                    form.append_pair("client_id", &self.client_id)
                        .append_pair("client_secret", secret);
                }
                _ => {
                    form.append_pair("client_id", &self.client_id);
                }
            }
            form.finish()
        };
        let (status, body) = send(
            http,
            Method::POST,
            &self.token_endpoint,
            Some(("application/x-www-form-urlencoded", form_body)),
            basic,
        )
        .await?;
        if !status.is_success() {
            return Err(OAuthError::Authorization(format!(
                "token endpoint answered {status}: {}",
                String::from_utf8_lossy(&body)
            )));
        }
        let v: Value = serde_json::from_slice(&body)
            .map_err(|e| OAuthError::Authorization(format!("token answer: {e}")))?;
        Ok(Tokens {
            access_token: v
                .get("access_token")
                .and_then(Value::as_str)
                .ok_or_else(|| {
                    OAuthError::Authorization("token answer without access_token".into())
                })?
                .to_owned(),
            refresh_token: v
                .get("refresh_token")
                .and_then(Value::as_str)
                .map(str::to_owned),
            expires_in: v.get("expires_in").and_then(Value::as_u64),
            scope: v.get("scope").and_then(Value::as_str).map(str::to_owned),
        })
    }
}

/// The OAuth client as the HTTP transport's [`AuthProvider`]: runs the flow on a 401 (the
/// challenge's `scope`, else `scopes_supported`), and again on a 403 `insufficient_scope`
/// with the union of the granted and the challenged scopes (step-up) — unless that union
/// adds nothing, so a server that keeps refusing is not re-authorized in a loop. Attach it
/// with [`HttpTransport::auth`](crate::HttpTransport::auth).
pub struct OAuthProvider {
    server: Url,
    http: HttpClient,
    cfg: OAuthConfig,
    current: Mutex<Option<(HeaderValue, Option<String>)>>,
    /// The grant and refresh token for a 401, and whether the last token came from a
    /// refresh (a 401 right after one runs the whole flow instead).
    refresh: Mutex<(Option<(TokenGrant, String)>, bool)>,
    flow_lock: tokio::sync::Mutex<()>,
}

impl std::fmt::Debug for OAuthProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthProvider")
            .field("server", &self.server.as_str())
            .finish_non_exhaustive()
    }
}

impl OAuthProvider {
    /// A provider for the MCP server at `server_url` (the transport's URL).
    pub fn new(server_url: &str, cfg: OAuthConfig) -> Result<Self, OAuthError> {
        let server = parse_url(server_url)?;
        let http = build(&HttpConfig::default(), server.scheme())
            .map_err(|e| OAuthError::Http(e.to_string()))?;
        Ok(Self {
            server,
            http,
            cfg,
            current: Mutex::new(None),
            refresh: Mutex::new((None, false)),
            flow_lock: tokio::sync::Mutex::new(()),
        })
    }

    fn granted_scope(&self) -> Option<Option<String>> {
        let cur = self.current.lock().unwrap_or_else(|p| p.into_inner());
        cur.as_ref().map(|(_, s)| s.clone())
    }

    async fn handle(&self, status: StatusCode, www: Option<&str>) -> Result<bool, OAuthError> {
        let _one_at_a_time = self.flow_lock.lock().await;
        let mut challenge = www.map(parse_challenge).unwrap_or_default();
        if status == StatusCode::FORBIDDEN {
            if challenge.error.as_deref() != Some("insufficient_scope") {
                return Ok(false);
            }
            // Step-up: the union of what was granted and what is asked for.
            let granted = self.granted_scope().flatten().unwrap_or_default();
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
            if scopes.len() == before && self.granted_scope().is_some() {
                tracing::debug!("403 insufficient_scope for scopes already granted: giving up");
                return Ok(false);
            }
            challenge.scope = Some(scopes.join(" "));
        } else if status != StatusCode::UNAUTHORIZED {
            return Ok(false);
        } else if let Some(refreshed) = self.try_refresh().await {
            return Ok(refreshed);
        }
        let (tokens, scope, grant) = flow(&self.http, &self.server, &challenge, &self.cfg).await?;
        *self.refresh.lock().unwrap_or_else(|p| p.into_inner()) =
            (tokens.refresh_token.clone().map(|rt| (grant, rt)), false);
        let value =
            HeaderValue::from_str(&format!("Bearer {}", tokens.access_token)).map_err(|_| {
                OAuthError::Authorization("the access token is not a header value".into())
            })?;
        let scope = tokens.scope.clone().or(scope);
        *self.current.lock().unwrap_or_else(|p| p.into_inner()) = Some((value, scope));
        Ok(true)
    }
}

impl OAuthProvider {
    /// On a 401: the `refresh_token` grant, once per token from the full flow. `None` when
    /// there is nothing to refresh (or it failed): run the flow.
    async fn try_refresh(&self) -> Option<bool> {
        let (grant, refresh_token) = {
            let mut r = self.refresh.lock().unwrap_or_else(|p| p.into_inner());
            if r.1 {
                return None;
            }
            r.0.take()?
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
                tracing::debug!(error = %e, "refresh failed: authorizing again");
                return None;
            }
        };
        let value = HeaderValue::from_str(&format!("Bearer {}", tokens.access_token)).ok()?;
        self.cfg.store.save(&grant.resource, &tokens);
        let granted = self.granted_scope().flatten();
        *self.current.lock().unwrap_or_else(|p| p.into_inner()) =
            Some((value, tokens.scope.clone().or(granted)));
        *self.refresh.lock().unwrap_or_else(|p| p.into_inner()) =
            (tokens.refresh_token.map(|rt| (grant, rt)), true);
        Some(true)
    }
}

impl AuthProvider for OAuthProvider {
    fn authorization(&self) -> Option<HeaderValue> {
        let cur = self.current.lock().unwrap_or_else(|p| p.into_inner());
        cur.as_ref().map(|(v, _)| v.clone())
    }

    fn on_challenge<'a>(
        &'a self,
        status: StatusCode,
        www_authenticate: Option<&'a str>,
    ) -> ferromcp_dispatch::BoxFuture<'a, bool> {
        Box::pin(async move {
            match self.handle(status, www_authenticate).await {
                Ok(retry) => retry,
                Err(e) => {
                    tracing::warn!(error = %e, "OAuth authorization failed");
                    false
                }
            }
        })
    }
}

/// Parses a URL and requires `https` unless the host is loopback.
fn parse_url(text: &str) -> Result<Url, OAuthError> {
    let url = Url::parse(text).map_err(|e| OAuthError::Url(format!("{text}: {e}")))?;
    match url.scheme() {
        "https" => Ok(url),
        "http" if is_loopback(&url) => Ok(url),
        _ => Err(OAuthError::Url(format!(
            "{text}: OAuth endpoints must use https (plain http only on loopback)"
        ))),
    }
}

fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

fn endpoint(meta: &Value, key: &str) -> Result<Url, OAuthError> {
    let text = meta.get(key).and_then(Value::as_str).ok_or_else(|| {
        OAuthError::Discovery(format!("authorization-server metadata has no {key}"))
    })?;
    parse_url(text)
}

/// `resource` must name the server: the same origin, and a path equal to or a prefix (at a
/// segment boundary) of the server URL's.
fn resource_matches(resource: &str, server: &Url) -> bool {
    let Ok(r) = Url::parse(resource) else {
        return false;
    };
    if r.origin() != server.origin() {
        return false;
    }
    let rp = r.path().trim_end_matches('/');
    let sp = server.path().trim_end_matches('/');
    rp.is_empty() || sp == rp || sp.starts_with(&format!("{rp}/"))
}

#[derive(Debug, Default)]
struct Challenge {
    error: Option<String>,
    resource_metadata: Option<String>,
    scope: Option<String>,
}

/// The `resource_metadata` and `scope` parameters of a Bearer challenge.
fn parse_challenge(header: &str) -> Challenge {
    let mut out = Challenge::default();
    let mut rest = header.trim();
    if rest.len() >= 6 && rest[..6].eq_ignore_ascii_case("bearer") {
        rest = &rest[6..];
    }
    loop {
        rest = rest.trim_start_matches([' ', ',']);
        let Some(eq) = rest.find('=') else { break };
        let key = rest[..eq].trim().to_ascii_lowercase();
        rest = &rest[eq + 1..];
        let value;
        if let Some(stripped) = rest.strip_prefix('"') {
            let mut v = String::new();
            let mut chars = stripped.char_indices();
            let mut end = stripped.len();
            while let Some((i, c)) = chars.next() {
                match c {
                    '\\' => {
                        if let Some((_, n)) = chars.next() {
                            v.push(n);
                        }
                    }
                    '"' => {
                        end = i + 1;
                        break;
                    }
                    c => v.push(c),
                }
            }
            value = v;
            rest = &stripped[end.min(stripped.len())..];
        } else {
            let end = rest.find(',').unwrap_or(rest.len());
            value = rest[..end].trim().to_owned();
            rest = &rest[end..];
        }
        match key.as_str() {
            "resource_metadata" => out.resource_metadata = Some(value),
            "scope" => out.scope = Some(value),
            "error" => out.error = Some(value),
            _ => {}
        }
    }
    out
}

async fn probe(
    http: &HttpClient,
    server: &Url,
) -> Result<(StatusCode, Option<String>), OAuthError> {
    let body = json!({
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "ferromcp-oauth-probe", "version": env!("CARGO_PKG_VERSION")},
        }
    });
    let req = Request::builder()
        .method(Method::POST)
        .uri(server.as_str())
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::ACCEPT, "application/json, text/event-stream")
        .body(Full::new(Bytes::from(body.to_string())))
        .map_err(|e| OAuthError::Http(e.to_string()))?;
    let resp = tokio::time::timeout(EXCHANGE_TIMEOUT, http.request(req))
        .await
        .map_err(|_| OAuthError::Http("probe timed out".into()))?
        .map_err(|e| OAuthError::Http(e.to_string()))?;
    let www = resp
        .headers()
        .get(header::WWW_AUTHENTICATE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    Ok((resp.status(), www))
}

/// One exchange: the status and (bounded) body.
async fn send(
    http: &HttpClient,
    method: Method,
    url: &Url,
    body: Option<(&str, String)>,
    authorization: Option<String>,
) -> Result<(StatusCode, Bytes), OAuthError> {
    let mut req = Request::builder()
        .method(method)
        .uri(url.as_str())
        .header(header::ACCEPT, "application/json");
    if let Some(a) = authorization {
        req = req.header(header::AUTHORIZATION, a);
    }
    let payload = match body {
        Some((ct, b)) => {
            req = req.header(header::CONTENT_TYPE, ct);
            Bytes::from(b)
        }
        None => Bytes::new(),
    };
    let req = req
        .body(Full::new(payload))
        .map_err(|e| OAuthError::Http(e.to_string()))?;
    let exchange = async {
        let resp = http
            .request(req)
            .await
            .map_err(|e| OAuthError::Http(format!("{url}: {e}")))?;
        let status = resp.status();
        let body = Limited::new(resp.into_body(), MAX_BODY)
            .collect()
            .await
            .map_err(|e| OAuthError::Http(format!("{url}: {e}")))?
            .to_bytes();
        Ok((status, body))
    };
    tokio::time::timeout(EXCHANGE_TIMEOUT, exchange)
        .await
        .map_err(|_| OAuthError::Http(format!("{url}: timed out")))?
}

/// GETs a JSON document; `None` on a non-success status.
async fn get_json(http: &HttpClient, url: &Url) -> Result<Option<Value>, OAuthError> {
    let (status, body) = send(http, Method::GET, url, None, None).await?;
    if !status.is_success() {
        return Ok(None);
    }
    serde_json::from_slice(&body)
        .map(Some)
        .map_err(|e| OAuthError::Discovery(format!("{url}: {e}")))
}

fn with_path(base: &Url, path: &str) -> Url {
    let mut u = base.clone();
    u.set_path(path);
    u.set_query(None);
    u.set_fragment(None);
    u
}

async fn discover_prm(
    http: &HttpClient,
    server: &Url,
    from_header: Option<&str>,
) -> Result<Option<Value>, OAuthError> {
    let mut candidates = Vec::new();
    let named = from_header.is_some();
    if let Some(h) = from_header {
        let u = parse_url(h)?;
        if u.origin() != server.origin() {
            tracing::debug!(%u, "resource_metadata on another origin");
        }
        candidates.push(u);
    } else {
        let path = server.path().trim_end_matches('/');
        if !path.is_empty() {
            candidates.push(with_path(
                server,
                &format!("/.well-known/oauth-protected-resource{path}"),
            ));
        }
        candidates.push(with_path(server, "/.well-known/oauth-protected-resource"));
    }
    for url in candidates {
        if let Some(v) = get_json(http, &url).await? {
            return Ok(Some(v));
        }
    }
    if named {
        return Err(OAuthError::Discovery(
            "the challenge's resource_metadata could not be fetched".into(),
        ));
    }
    Ok(None)
}

/// The 2025-03-26 discovery: metadata at the server origin's root well-known path (its
/// `issuer` is not checked: there is no recorded issuer to compare with), else the default
/// endpoints, which the 2025-03-26 revision implies support PKCE S256.
async fn legacy_as(http: &HttpClient, server: &Url) -> Result<Value, OAuthError> {
    let url = with_path(server, "/.well-known/oauth-authorization-server");
    if let Some(v) = get_json(http, &url).await? {
        return Ok(v);
    }
    let at = |p: &str| with_path(server, p).to_string();
    Ok(json!({
        "authorization_endpoint": at("/authorize"),
        "token_endpoint": at("/token"),
        "registration_endpoint": at("/register"),
        "code_challenge_methods_supported": ["S256"],
    }))
}

async fn discover_as(http: &HttpClient, issuer: &str) -> Result<Value, OAuthError> {
    let base = parse_url(issuer)?;
    let path = base.path().trim_end_matches('/').to_owned();
    let candidates = if path.is_empty() {
        vec![
            with_path(&base, "/.well-known/oauth-authorization-server"),
            with_path(&base, "/.well-known/openid-configuration"),
        ]
    } else {
        vec![
            with_path(
                &base,
                &format!("/.well-known/oauth-authorization-server{path}"),
            ),
            with_path(&base, &format!("/.well-known/openid-configuration{path}")),
            with_path(&base, &format!("{path}/.well-known/openid-configuration")),
        ]
    };
    for url in candidates {
        if let Some(v) = get_json(http, &url).await? {
            let got = v.get("issuer").and_then(Value::as_str).unwrap_or_default();
            if got.trim_end_matches('/') != issuer.trim_end_matches('/') {
                return Err(OAuthError::Discovery(format!(
                    "authorization-server metadata issuer {got:?} is not {issuer}"
                )));
            }
            return Ok(v);
        }
    }
    Err(OAuthError::Discovery(format!(
        "no authorization-server metadata for {issuer}"
    )))
}

/// `bytes` random bytes, base64url.
fn random_token(bytes: usize) -> Result<String, OAuthError> {
    let mut buf = vec![0u8; bytes];
    getrandom::fill(&mut buf).map_err(|e| OAuthError::Authorization(format!("RNG: {e}")))?;
    Ok(URL_SAFE_NO_PAD.encode(buf))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenge_parameters() {
        let c = parse_challenge(
            r#"Bearer error="insufficient_scope", scope="a b", resource_metadata="http://x/y""#,
        );
        assert_eq!(c.scope.as_deref(), Some("a b"));
        assert_eq!(c.resource_metadata.as_deref(), Some("http://x/y"));
    }

    #[test]
    fn resource_check() {
        let s = Url::parse("http://localhost:3000/mcp").unwrap();
        assert!(resource_matches("http://localhost:3000/mcp", &s));
        assert!(resource_matches("http://localhost:3000/", &s));
        assert!(!resource_matches("http://localhost:3000/other", &s));
        assert!(!resource_matches("http://evil.example/mcp", &s));
    }

    #[test]
    fn https_required_off_loopback() {
        assert!(parse_url("http://example.com/x").is_err());
        assert!(parse_url("http://127.0.0.1/x").is_ok());
        assert!(parse_url("https://example.com/x").is_ok());
    }
}
