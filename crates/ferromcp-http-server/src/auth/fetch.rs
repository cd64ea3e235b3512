//! A small HTTP(S) GET for the JWKS: hyper-util's pooling legacy client over rustls (ring
//! provider, compiled-in webpki roots), with a timeout and a body limit.

use std::time::Duration;

use bytes::Bytes;
use http::header::ACCEPT;
use http::{Request, StatusCode, Uri};
use http_body_util::{BodyExt, Empty, Limited};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

type Connector = hyper_rustls::HttpsConnector<HttpConnector>;

/// The largest JWKS document read.
const MAX_BODY: usize = 1024 * 1024;

/// A GET-only client for one JWKS URL.
#[derive(Clone)]
pub(crate) struct Fetcher {
    client: Client<Connector, Empty<Bytes>>,
    timeout: Duration,
}

impl Fetcher {
    /// A client with this request timeout.
    pub(crate) fn new(timeout: Duration) -> Result<Self, String> {
        let mut tcp = HttpConnector::new();
        tcp.set_nodelay(true);
        tcp.set_connect_timeout(Some(timeout));
        tcp.enforce_http(false);
        let connector = hyper_rustls::HttpsConnectorBuilder::new()
            .with_provider_and_webpki_roots(rustls::crypto::ring::default_provider())
            .map_err(|e| format!("TLS configuration: {e}"))?
            .https_or_http()
            .enable_http1()
            .wrap_connector(tcp);
        Ok(Self {
            client: Client::builder(TokioExecutor::new()).build(connector),
            timeout,
        })
    }

    /// GETs `uri` and returns the body of a 200 response (at most 1 MiB).
    pub(crate) async fn get(&self, uri: &Uri) -> Result<Bytes, String> {
        let req = Request::get(uri.clone())
            .header(ACCEPT, "application/json, application/jwk-set+json")
            .body(Empty::new())
            .map_err(|e| format!("bad JWKS request: {e}"))?;
        let fetch = async {
            let resp = self
                .client
                .request(req)
                .await
                .map_err(|e| format!("JWKS fetch failed: {e}"))?;
            if resp.status() != StatusCode::OK {
                return Err(format!("JWKS fetch answered {}", resp.status()));
            }
            Limited::new(resp.into_body(), MAX_BODY)
                .collect()
                .await
                .map(|b| b.to_bytes())
                .map_err(|e| format!("JWKS body: {e}"))
        };
        tokio::time::timeout(self.timeout, fetch)
            .await
            .map_err(|_| "JWKS fetch timed out".to_owned())?
    }
}

/// Whether `uri` may be fetched: `https`, or `http` to a loopback host (development).
pub(crate) fn allowed(uri: &Uri) -> bool {
    match uri.scheme_str() {
        Some("https") => uri.host().is_some(),
        Some("http") => uri
            .host()
            .is_some_and(ferromcp_types::net::is_loopback_host),
        _ => false,
    }
}
