//! Client ID metadata documents (draft-ietf-oauth-client-id-metadata-document): a
//! `client_id` that is an `https` URL names a JSON document describing the client, fetched
//! here with SSRF protections:
//!
//! - `https` only (with [`AuthServerConfig::cimd_allow_loopback`](super::AuthServerConfig):
//!   also `http` to a loopback host), a path, no fragment, no credentials;
//! - the host must resolve only to global addresses: loopback (unless allowed), private,
//!   link-local, shared, documentation, multicast and reserved ranges are refused, checked
//!   by the connector's own resolver so the checked address is the one connected to (no
//!   DNS rebinding between check and connect); IP-literal hosts are checked the same way;
//! - redirects are not followed (a 3xx is a failure);
//! - the body is bounded ([`cimd_max_size`](super::AuthServerConfig::cimd_max_size)) and
//!   the whole fetch is time-limited ([`cimd_timeout`](super::AuthServerConfig::cimd_timeout));
//! - the document's `client_id` must equal the URL exactly; it may not use shared secrets
//!   (`none` or `private_key_jwt` only); its redirect URIs follow the registration rules.
//!
//! Documents are cached for [`DEFAULT_CIMD_CACHE_TTL`](super::DEFAULT_CIMD_CACHE_TTL).

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Mutex;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use ferromcp_dispatch::BoxFuture;
use ferromcp_types::net::{is_loopback, is_public};
use http::header::ACCEPT;
use http::{Request, StatusCode};
use http_body_util::{BodyExt, Empty, Limited};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::connect::dns::Name;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;
use tokio::time::Instant;

use super::store::ClientRecord;
use super::{AuthServerConfig, DEFAULT_CIMD_CACHE_TTL};

/// The most documents cached.
const MAX_CACHED: usize = 1000;

/// Whether `ip` may be connected to: a public address
/// ([`ferromcp_types::net::is_public`]), or a loopback one when allowed.
fn ip_allowed(ip: IpAddr, allow_loopback: bool) -> bool {
    is_public(ip) || (allow_loopback && is_loopback(ip))
}

/// A resolver that refuses names resolving to addresses [`ip_allowed`] refuses.
#[derive(Clone)]
struct SafeResolver {
    allow_loopback: bool,
}

impl tower_service::Service<Name> for SafeResolver {
    type Response = std::vec::IntoIter<SocketAddr>;
    type Error = std::io::Error;
    type Future = BoxFuture<'static, Result<Self::Response, Self::Error>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, name: Name) -> Self::Future {
        let allow = self.allow_loopback;
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let addrs: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            // Every address must pass: a name mixing public and private answers is refused.
            if addrs.is_empty() || addrs.iter().any(|a| !ip_allowed(a.ip(), allow)) {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::PermissionDenied,
                    "the host resolves to a non-public address",
                ));
            }
            Ok(addrs.into_iter())
        })
    }
}

type Connector = hyper_rustls::HttpsConnector<HttpConnector<SafeResolver>>;

pub(crate) struct CimdFetcher {
    client: Client<Connector, Empty<Bytes>>,
    allow_loopback: bool,
    max_size: usize,
    timeout: Duration,
    cache: Mutex<HashMap<String, (ClientRecord, Instant)>>,
}

impl CimdFetcher {
    pub(crate) fn new(config: &AuthServerConfig) -> Result<Self, String> {
        let resolver = SafeResolver {
            allow_loopback: config.cimd_allow_loopback,
        };
        let mut tcp = HttpConnector::new_with_resolver(resolver);
        tcp.set_connect_timeout(Some(config.cimd_timeout));
        tcp.enforce_http(false);
        let connector = hyper_rustls::HttpsConnectorBuilder::new()
            .with_provider_and_webpki_roots(rustls::crypto::ring::default_provider())
            .map_err(|e| format!("TLS configuration: {e}"))?
            .https_or_http()
            .enable_http1()
            .wrap_connector(tcp);
        Ok(Self {
            client: Client::builder(TokioExecutor::new()).build(connector),
            allow_loopback: config.cimd_allow_loopback,
            max_size: config.cimd_max_size,
            timeout: config.cimd_timeout,
            cache: Mutex::new(HashMap::new()),
        })
    }

    /// Checks the URL itself (scheme, host, path).
    fn check_url(&self, id: &str) -> Result<url::Url, String> {
        let u = url::Url::parse(id).map_err(|e| format!("not a URL: {e}"))?;
        let scheme_ok = match u.scheme() {
            "https" => true,
            "http" => self.allow_loopback && super::is_loopback_url(&u),
            _ => false,
        };
        if !scheme_ok {
            return Err("the document URL must be https".to_owned());
        }
        if u.fragment().is_some() || !u.username().is_empty() || u.password().is_some() {
            return Err("the document URL may not have a fragment or credentials".to_owned());
        }
        if u.path() == "/" || u.path().is_empty() {
            return Err("the document URL must have a path".to_owned());
        }
        if u.as_str() != id {
            return Err("the document URL is not in normal form".to_owned());
        }
        let literal = match u.host() {
            Some(url::Host::Ipv4(ip)) => Some(IpAddr::V4(ip)),
            Some(url::Host::Ipv6(ip)) => Some(IpAddr::V6(ip)),
            Some(url::Host::Domain(_)) => None,
            None => return Err("the document URL has no host".to_owned()),
        };
        if literal.is_some_and(|ip| !ip_allowed(ip, self.allow_loopback)) {
            return Err("the document URL names a non-public address".to_owned());
        }
        Ok(u)
    }

    /// The client a document URL describes (cached).
    pub(crate) async fn client(&self, id: &str) -> Result<ClientRecord, String> {
        {
            let cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
            if let Some((c, at)) = cache.get(id)
                && at.elapsed() < DEFAULT_CIMD_CACHE_TTL
            {
                return Ok(c.clone());
            }
        }
        let url = self.check_url(id)?;
        let doc = tokio::time::timeout(self.timeout, self.fetch(&url))
            .await
            .map_err(|_| "fetching the document timed out".to_owned())??;
        let meta: Value =
            serde_json::from_slice(&doc).map_err(|e| format!("the document is not JSON: {e}"))?;
        if meta.get("client_id").and_then(Value::as_str) != Some(id) {
            return Err("the document's client_id is not its URL".to_owned());
        }
        if meta.get("client_secret").is_some() {
            return Err("a client metadata document may not hold a secret".to_owned());
        }
        let mut meta = meta;
        if meta.get("token_endpoint_auth_method").is_none() {
            meta["token_endpoint_auth_method"] = Value::from("none");
        }
        if meta.get("grant_types").is_none() {
            meta["grant_types"] = serde_json::json!(["authorization_code", "refresh_token"]);
        }
        let mut client = super::register::client_from_metadata(&meta, id.to_owned())
            .map_err(|e| e.description)?;
        client.registration = super::store::Registration::MetadataDocument;
        if !matches!(client.auth_method.as_str(), "none" | "private_key_jwt") {
            return Err("a client metadata document may only use none or private_key_jwt".into());
        }
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        if cache.len() >= MAX_CACHED {
            cache.retain(|_, (_, at)| at.elapsed() < DEFAULT_CIMD_CACHE_TTL);
            if cache.len() >= MAX_CACHED {
                cache.clear();
            }
        }
        cache.insert(id.to_owned(), (client.clone(), Instant::now()));
        Ok(client)
    }

    async fn fetch(&self, url: &url::Url) -> Result<Bytes, String> {
        let req = Request::get(url.as_str())
            .header(ACCEPT, "application/json")
            .body(Empty::new())
            .map_err(|e| format!("bad request: {e}"))?;
        let resp = self
            .client
            .request(req)
            .await
            .map_err(|e| format!("fetch failed: {}", error_chain(&e)))?;
        if resp.status().is_redirection() {
            return Err("the document URL redirects (redirects are not followed)".to_owned());
        }
        if resp.status() != StatusCode::OK {
            return Err(format!("the document URL answered {}", resp.status()));
        }
        Limited::new(resp.into_body(), self.max_size)
            .collect()
            .await
            .map(|b| b.to_bytes())
            .map_err(|_| format!("the document is larger than {} bytes", self.max_size))
    }
}

fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cur = c.source();
    }
    s
}

#[cfg(test)]
mod tests {
    use super::ip_allowed;

    #[test]
    fn loopback_only_when_allowed() {
        for ip in ["127.0.0.1", "::1", "::ffff:127.0.0.1"] {
            assert!(!ip_allowed(ip.parse().unwrap(), false), "{ip}");
            assert!(ip_allowed(ip.parse().unwrap(), true), "{ip}");
        }
        // S130: 6to4, Teredo and NAT64 forms of internal IPv4 addresses too.
        for ip in [
            "10.1.2.3",
            "169.254.169.254",
            "::ffff:10.0.0.1",
            "fe80::1",
            "2002:a9fe:a9fe::1",
            "2001:0:808:808::f5ff:fffe",
            "64:ff9b::a00:1",
            "2002:7f00:1::1",
        ] {
            assert!(!ip_allowed(ip.parse().unwrap(), true), "{ip}");
        }
        assert!(ip_allowed("93.184.216.34".parse().unwrap(), false));
        assert!(ip_allowed("2606:2800:220:1::1".parse().unwrap(), false));
    }
}
