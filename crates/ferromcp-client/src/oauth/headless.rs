//! Headless authorization: [`FlowHttp`], the flow's own HTTP client as an
//! [`AuthorizationHandler`] may use it, and [`RedirectReadingHandler`], which reads the
//! redirect of an authorization server that redirects at once.

use std::fmt;

use bytes::Bytes;
use http::{Method, Request, Response, header};
use http_body_util::Full;

use super::discovery::{Limits, error_chain, parse_url};
use super::guard::HttpClient;
use super::{
    AuthorizationHandler, AuthorizationResponse, BoxFuture, DEFAULT_EXCHANGE_TIMEOUT,
    DEFAULT_MAX_RESPONSE_SIZE, OAuthError,
};
use crate::transport::http::HttpClientConfig;
use crate::transport::http::client::build;

/// The OAuth flow's own HTTP client, lent to
/// [`AuthorizationHandler::authorize_with`]: the connection settings of
/// [`OAuthConfig::http_client`](super::OAuthConfig::http_client) (proxy, TLS roots, a
/// [`Connector`](crate::transport::http::Connector) of one's own, default headers), the
/// address guard of [`OAuthConfig::address_policy`](super::OAuthConfig::address_policy), and
/// the bound of [`OAuthConfig::exchange_timeout`](super::OAuthConfig::exchange_timeout).
#[derive(Clone)]
pub struct FlowHttp {
    http: HttpClient,
    limits: Limits,
}

impl fmt::Debug for FlowHttp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FlowHttp")
            .field("timeout", &self.limits.timeout)
            .finish_non_exhaustive()
    }
}

impl FlowHttp {
    pub(super) fn new(http: HttpClient, limits: Limits) -> Self {
        Self { http, limits }
    }

    /// GETs `url` (`https`, or `http` on a loopback host) without following a redirect,
    /// bounded by the exchange timeout: the answer's status and headers (its body is not
    /// read).
    pub async fn get(&self, url: &str) -> Result<Response<()>, OAuthError> {
        let url = parse_url(url)?;
        let req = Request::builder()
            .method(Method::GET)
            .uri(url.as_str())
            .body(Full::new(Bytes::new()))
            .map_err(|e| OAuthError::Http(e.to_string()))?;
        let resp = tokio::time::timeout(self.limits.timeout, self.http.request(req))
            .await
            .map_err(|_| OAuthError::Http(format!("{url}: timed out")))?
            .map_err(|e| OAuthError::Http(format!("{url}: {}", error_chain(&e))))?;
        Ok(resp.map(|_| ()))
    }
}

/// A headless [`AuthorizationHandler`] for authorization servers that redirect at once
/// (test servers, pre-approved clients): GETs the authorization URL without following the
/// redirect and reads `code`, `state` and `iss` from its `Location`. In a flow it GETs
/// through the flow's own HTTP client ([`FlowHttp`]: the configured connection settings and
/// address guard); called on its own ([`authorize`](AuthorizationHandler::authorize)),
/// through a client of the default settings.
#[derive(Debug, Default, Clone, Copy)]
pub struct RedirectReadingHandler;

impl RedirectReadingHandler {
    async fn read_redirect(
        http: &FlowHttp,
        url: &str,
    ) -> Result<AuthorizationResponse, OAuthError> {
        let resp = http.get(url).await?;
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
        let target = parse_url(url)?
            .join(location)
            .map_err(|e| OAuthError::Authorization(format!("redirect Location: {e}")))?;
        AuthorizationResponse::from_redirect(target.as_str())
    }
}

impl AuthorizationHandler for RedirectReadingHandler {
    fn authorize<'a>(
        &'a self,
        url: &'a str,
    ) -> BoxFuture<'a, Result<AuthorizationResponse, OAuthError>> {
        Box::pin(async move {
            let http = build(&HttpClientConfig::default(), 1)
                .map_err(|e| OAuthError::Http(e.to_string()))?;
            let limits = Limits {
                max_body: DEFAULT_MAX_RESPONSE_SIZE,
                timeout: DEFAULT_EXCHANGE_TIMEOUT,
            };
            Self::read_redirect(&FlowHttp::new(http, limits), url).await
        })
    }

    fn authorize_with<'a>(
        &'a self,
        url: &'a str,
        http: &'a FlowHttp,
    ) -> BoxFuture<'a, Result<AuthorizationResponse, OAuthError>> {
        Box::pin(Self::read_redirect(http, url))
    }
}
