//! [`HttpClientConfig`]: how the HTTP client connects, shared by every HTTP request the crate
//! makes (the Streamable HTTP transport's and the OAuth client's own): proxies, TLS roots and
//! client certificates, connect and read timeouts, default headers.
//!
//! **Proxies.** By default ([`ProxyConfig::Environment`]) the proxy comes from the environment
//! the way curl and reqwest read it: `HTTPS_PROXY` / `https_proxy` for `https://` URLs,
//! `HTTP_PROXY` / `http_proxy` for `http://` URLs, `ALL_PROXY` / `all_proxy` for both, and
//! `NO_PROXY` / `no_proxy` (comma-separated domains, matching subdomains too, IP addresses or
//! CIDR blocks, `*` for everything) to bypass them. The environment is read once, when the
//! client is built. Inside a CGI program (`REQUEST_METHOD` set) the environment's proxies are
//! ignored (the "httpoxy" attack). [`ProxyConfig::None`] turns proxies off;
//! [`ProxyConfig::Rules`] sets them explicitly. Proxies are `http://` proxies (`https://`
//! proxy URLs are refused); `https://` destinations are tunnelled with `CONNECT` (TLS runs end
//! to end, through the tunnel), `http://` destinations are forwarded (the request goes to the
//! proxy in absolute form). Credentials in the proxy URL (`http://user:pass@proxy:3128`) are
//! sent as `Proxy-Authorization: Basic`.
//!
//! **TLS** (feature `https`): the server's certificate is checked against the Mozilla roots
//! compiled in (webpki-roots) unless [`TlsConfig::webpki_roots`] is off, plus the platform's
//! store with [`TlsConfig::native_roots`] (feature `native-roots`), plus the
//! [`TlsConfig::root_certificates`] added; [`TlsConfig::client_identity_pem`] presents a
//! client certificate (mutual TLS). A complete [`rustls::ClientConfig`] of one's own
//! ([`TlsConfig::rustls_config`]) replaces all of these.
//!
//! **Connections of one's own**: a [`Connector`] ([`HttpClientConfig::connector`]) opens the
//! connections instead of the client's TCP dialer (Unix sockets, tunnels, in-memory pipes);
//! TLS still runs over its streams, the connect timeout still bounds it, proxies are ignored
//! (see [`connector`](super::connector)).

use std::fmt;
#[cfg(feature = "https")]
use std::sync::Arc;
use std::time::Duration;

use http::{HeaderMap, HeaderName, HeaderValue};

use super::connector::{Connector, CustomConnector};

/// The default connect timeout: 10 s. It bounds making a connection: the TCP connection, a
/// proxy's `CONNECT` and the TLS handshake.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// The default read timeout: none. When set, it bounds every wait for response data (see
/// [`HttpClientConfig::read_timeout`]); long-lived SSE streams make a default bound wrong for
/// servers that send no keep-alive events, as in reqwest and curl.
pub const DEFAULT_READ_TIMEOUT: Option<Duration> = None;
/// The default idle time of a pooled connection before it is closed: 90 s.
pub const DEFAULT_POOL_IDLE_TIMEOUT: Duration = Duration::from_secs(90);
/// The default TCP keep-alive time: 60 s.
pub const DEFAULT_TCP_KEEPALIVE: Duration = Duration::from_secs(60);

/// How the HTTP client connects (see the [module docs](self)). Used by
/// [`HttpConfig::client`](super::HttpConfig::client) (the Streamable HTTP transport) and
/// `OAuthConfig::http_client` (the OAuth client's own requests, feature `oauth`): give both
/// the same value.
///
/// ```
/// use std::time::Duration;
/// use ferromcp_client::transport::http::{HttpClientConfig, ProxyConfig, ProxyRules};
///
/// let config = HttpClientConfig::default()
///     .connect_timeout(Duration::from_secs(3))
///     .read_timeout(Some(Duration::from_secs(60)))
///     .proxy(ProxyConfig::Rules(
///         ProxyRules::default().all("http://proxy.internal:3128").no_proxy("localhost, .corp"),
///     ))
///     .default_header(http::header::USER_AGENT, http::HeaderValue::from_static("my-agent/1"));
/// assert_eq!(config.connect_timeout, Duration::from_secs(3));
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct HttpClientConfig {
    /// How long making a connection may take: TCP connect, proxy `CONNECT` and TLS handshake
    /// ([`DEFAULT_CONNECT_TIMEOUT`]).
    pub connect_timeout: Duration,
    /// The longest wait for response data ([`DEFAULT_READ_TIMEOUT`]: none). The response
    /// head must arrive within `connect_timeout + read_timeout` of sending the request, and
    /// each further piece of the body within `read_timeout` of the previous one; a stream that
    /// stays silent longer fails (the Streamable HTTP transport then resumes it, as for any
    /// broken stream). Set it above the server's SSE keep-alive interval.
    pub read_timeout: Option<Duration>,
    /// How long an idle pooled connection is kept ([`DEFAULT_POOL_IDLE_TIMEOUT`]).
    pub pool_idle_timeout: Duration,
    /// The TCP keep-alive time ([`DEFAULT_TCP_KEEPALIVE`]).
    pub tcp_keepalive: Duration,
    /// Headers added to every request the client sends (MCP requests and the OAuth client's
    /// own), unless the request sets the same header itself: a `User-Agent`, a gateway's API
    /// key. Credentials here go to every host the client talks to, OAuth servers included;
    /// `HttpConfig::header` sends a header to the MCP endpoint only.
    pub default_headers: HeaderMap,
    /// The proxy settings ([`ProxyConfig::Environment`] by default).
    pub proxy: ProxyConfig,
    /// The TLS settings (feature `https`).
    pub tls: TlsConfig,
    /// The connector of one's own ([`HttpClientConfig::connector`]); `None`: TCP, through the
    /// proxies.
    pub(crate) connector: Option<CustomConnector>,
}

impl Default for HttpClientConfig {
    fn default() -> Self {
        Self {
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            read_timeout: DEFAULT_READ_TIMEOUT,
            pool_idle_timeout: DEFAULT_POOL_IDLE_TIMEOUT,
            tcp_keepalive: DEFAULT_TCP_KEEPALIVE,
            default_headers: HeaderMap::new(),
            proxy: ProxyConfig::default(),
            tls: TlsConfig::default(),
            connector: None,
        }
    }
}

impl HttpClientConfig {
    /// Sets the connect timeout.
    #[must_use]
    pub fn connect_timeout(mut self, value: Duration) -> Self {
        self.connect_timeout = value;
        self
    }

    /// Sets the read timeout (`None`: no bound).
    #[must_use]
    pub fn read_timeout(mut self, value: Option<Duration>) -> Self {
        self.read_timeout = value;
        self
    }

    /// Sets the idle timeout of pooled connections.
    #[must_use]
    pub fn pool_idle_timeout(mut self, value: Duration) -> Self {
        self.pool_idle_timeout = value;
        self
    }

    /// Sets the TCP keep-alive time.
    #[must_use]
    pub fn tcp_keepalive(mut self, value: Duration) -> Self {
        self.tcp_keepalive = value;
        self
    }

    /// Adds a header sent on every request (credentials are marked sensitive, so debug output
    /// never shows them).
    #[must_use]
    pub fn default_header(mut self, name: HeaderName, value: HeaderValue) -> Self {
        let value = sensitive(&name, value);
        self.default_headers.append(name, value);
        self
    }

    /// Sets the proxy settings.
    #[must_use]
    pub fn proxy(mut self, value: ProxyConfig) -> Self {
        self.proxy = value;
        self
    }

    /// Sets the TLS settings.
    #[must_use]
    pub fn tls(mut self, value: TlsConfig) -> Self {
        self.tls = value;
        self
    }

    /// Opens connections with `connector` instead of TCP (a Unix socket, a tunnel, an
    /// in-memory pipe): see [`Connector`] and the [`connector`](super::connector) module for
    /// how it composes with TLS (still run over its streams for `https`, unless
    /// [`Connector::handles_tls`]), the connect timeout (still applies) and proxies (ignored).
    /// Clones of this config share the connector.
    #[must_use]
    pub fn connector(mut self, connector: impl Connector) -> Self {
        self.connector = Some(CustomConnector::new(connector));
        self
    }

    /// Whether a [`Connector`] of one's own opens the connections.
    pub fn has_connector(&self) -> bool {
        self.connector.is_some()
    }
}

/// Marks credentials (`Authorization`, `Proxy-Authorization`, `Cookie`) sensitive, so that
/// debug output never shows them.
pub(super) fn sensitive(name: &HeaderName, mut value: HeaderValue) -> HeaderValue {
    use http::header::{AUTHORIZATION, COOKIE, PROXY_AUTHORIZATION};
    if [AUTHORIZATION, PROXY_AUTHORIZATION, COOKIE].contains(name) {
        value.set_sensitive(true);
    }
    value
}

/// Where requests go through a proxy.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub enum ProxyConfig {
    /// The proxies of the environment (`HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY`, `NO_PROXY`,
    /// upper or lower case), read when the client is built. The default, as in curl and
    /// reqwest.
    #[default]
    Environment,
    /// No proxy, whatever the environment says.
    None,
    /// These proxies, and not the environment's.
    Rules(ProxyRules),
}

/// Explicit proxy rules: a proxy URL per destination scheme and the hosts that bypass them.
///
/// ```
/// use ferromcp_client::transport::http::ProxyRules;
///
/// // What `HTTPS_PROXY=http://proxy:3128 NO_PROXY=localhost` in the environment would say,
/// // without touching the process environment.
/// let vars = [("HTTPS_PROXY", "http://proxy:3128"), ("NO_PROXY", "localhost")];
/// let rules = ProxyRules::from_vars(|name| {
///     vars.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string())
/// });
/// assert_eq!(rules.https.as_deref(), Some("http://proxy:3128"));
/// assert_eq!(rules.http, None);
/// ```
#[derive(Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ProxyRules {
    /// The proxy of `http://` destinations (an `http://` URL, optionally with
    /// `user:password@` for basic authentication).
    pub http: Option<String>,
    /// The proxy of `https://` destinations (same form).
    pub https: Option<String>,
    /// The hosts that bypass the proxies, in `NO_PROXY` syntax: comma-separated domains
    /// (matching their subdomains too; a leading dot is allowed), IP addresses, CIDR blocks,
    /// or `*` for every host.
    pub no_proxy: String,
}

impl fmt::Debug for ProxyRules {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Proxy URLs may carry credentials.
        let shown = |u: &Option<String>| u.as_deref().map(redact_userinfo);
        f.debug_struct("ProxyRules")
            .field("http", &shown(&self.http))
            .field("https", &shown(&self.https))
            .field("no_proxy", &self.no_proxy)
            .finish()
    }
}

/// A proxy URL with any `user:password@` replaced by `***@`.
fn redact_userinfo(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let authority_end = rest.find('/').unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => format!("{scheme}://***@{}", &rest[at + 1..]),
        None => url.to_owned(),
    }
}

impl ProxyRules {
    /// Sends `http://` and `https://` destinations through the proxy at `url`.
    #[must_use]
    pub fn all(mut self, url: impl Into<String>) -> Self {
        let url = url.into();
        self.http = Some(url.clone());
        self.https = Some(url);
        self
    }

    /// Sends `http://` destinations through the proxy at `url`.
    #[must_use]
    pub fn http(mut self, url: impl Into<String>) -> Self {
        self.http = Some(url.into());
        self
    }

    /// Sends `https://` destinations through the proxy at `url`.
    #[must_use]
    pub fn https(mut self, url: impl Into<String>) -> Self {
        self.https = Some(url.into());
        self
    }

    /// Sets the hosts that bypass the proxies (`NO_PROXY` syntax).
    #[must_use]
    pub fn no_proxy(mut self, list: impl Into<String>) -> Self {
        self.no_proxy = list.into();
        self
    }

    /// The rules the process environment gives (what [`ProxyConfig::Environment`] uses).
    pub fn from_env() -> Self {
        Self::from_vars(|name| std::env::var(name).ok())
    }

    /// The rules the variables `lookup` gives, read as [`ProxyConfig::Environment`] reads
    /// the environment: upper case first, then lower case; `ALL_PROXY` for the schemes without
    /// their own; nothing when `REQUEST_METHOD` is set (CGI). Empty values count as unset.
    pub fn from_vars(lookup: impl Fn(&str) -> Option<String>) -> Self {
        if lookup("REQUEST_METHOD").is_some() {
            return Self::default();
        }
        let first = |names: [&str; 2]| {
            names
                .into_iter()
                .filter_map(&lookup)
                .map(|v| v.trim().to_owned())
                .find(|v| !v.is_empty())
        };
        let all = first(["ALL_PROXY", "all_proxy"]);
        Self {
            http: first(["HTTP_PROXY", "http_proxy"]).or_else(|| all.clone()),
            https: first(["HTTPS_PROXY", "https_proxy"]).or(all),
            no_proxy: first(["NO_PROXY", "no_proxy"]).unwrap_or_default(),
        }
    }
}

/// The TLS settings of the HTTP client (used with the `https` feature).
#[derive(Clone)]
#[non_exhaustive]
pub struct TlsConfig {
    /// Trust the Mozilla root certificates compiled in (webpki-roots). Default `true`.
    pub webpki_roots: bool,
    /// Trust the platform's certificate store too (feature `native-roots`; without it,
    /// building a client with this set fails). Default `false`.
    pub native_roots: bool,
    /// More trusted root certificates, DER (a private CA).
    #[cfg(feature = "https")]
    pub root_certificates: Vec<rustls::pki_types::CertificateDer<'static>>,
    /// The client certificate chain and key presented to servers that ask (mutual TLS).
    #[cfg(feature = "https")]
    pub client_identity: Option<ClientIdentity>,
    /// A complete rustls configuration of one's own: replaces every other TLS setting. Its
    /// ALPN protocols should be empty or offer `http/1.1` (the client speaks HTTP/1.1 only).
    #[cfg(feature = "https")]
    pub rustls_config: Option<Arc<rustls::ClientConfig>>,
}

impl Default for TlsConfig {
    fn default() -> Self {
        Self {
            webpki_roots: true,
            native_roots: false,
            #[cfg(feature = "https")]
            root_certificates: Vec::new(),
            #[cfg(feature = "https")]
            client_identity: None,
            #[cfg(feature = "https")]
            rustls_config: None,
        }
    }
}

impl fmt::Debug for TlsConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("TlsConfig");
        d.field("webpki_roots", &self.webpki_roots)
            .field("native_roots", &self.native_roots);
        #[cfg(feature = "https")]
        d.field("root_certificates", &self.root_certificates.len())
            .field("client_identity", &self.client_identity.is_some())
            .field("rustls_config", &self.rustls_config.is_some());
        d.finish()
    }
}

/// A client certificate chain and its private key (mutual TLS). Its `Debug` hides the key.
#[cfg(feature = "https")]
pub struct ClientIdentity {
    /// The certificate chain, leaf first.
    pub chain: Vec<rustls::pki_types::CertificateDer<'static>>,
    /// The private key (PKCS#8, PKCS#1 or SEC1).
    pub key: rustls::pki_types::PrivateKeyDer<'static>,
}

#[cfg(feature = "https")]
impl Clone for ClientIdentity {
    fn clone(&self) -> Self {
        Self {
            chain: self.chain.clone(),
            key: self.key.clone_key(),
        }
    }
}

#[cfg(feature = "https")]
impl fmt::Debug for ClientIdentity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientIdentity")
            .field("chain", &self.chain.len())
            .finish_non_exhaustive()
    }
}

/// A PEM input that held nothing usable.
#[cfg(feature = "https")]
fn pem_error(what: &str, e: impl fmt::Display) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, format!("{what} PEM: {e}"))
}

impl TlsConfig {
    /// Sets whether the compiled-in Mozilla roots are trusted.
    #[must_use]
    pub fn webpki_roots(mut self, value: bool) -> Self {
        self.webpki_roots = value;
        self
    }

    /// Sets whether the platform's certificate store is trusted (feature `native-roots`).
    #[must_use]
    pub fn native_roots(mut self, value: bool) -> Self {
        self.native_roots = value;
        self
    }

    /// Trusts one more root certificate, DER.
    #[cfg(feature = "https")]
    #[must_use]
    pub fn root_certificate(mut self, der: rustls::pki_types::CertificateDer<'static>) -> Self {
        self.root_certificates.push(der);
        self
    }

    /// Trusts every certificate of a PEM bundle (`-----BEGIN CERTIFICATE-----` blocks).
    /// Fails when the bundle holds none or one does not parse.
    #[cfg(feature = "https")]
    pub fn root_certificates_pem(mut self, pem: &[u8]) -> std::io::Result<Self> {
        use rustls::pki_types::pem::PemObject;
        let certs = rustls::pki_types::CertificateDer::pem_slice_iter(pem)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| pem_error("root certificate", e))?;
        if certs.is_empty() {
            return Err(pem_error("root certificate", "no certificate"));
        }
        self.root_certificates.extend(certs);
        Ok(self)
    }

    /// Presents the certificate chain of `cert_pem` (leaf first) with the private key of
    /// `key_pem` (PKCS#8, PKCS#1 or SEC1) to servers that ask for a client certificate.
    #[cfg(feature = "https")]
    pub fn client_identity_pem(mut self, cert_pem: &[u8], key_pem: &[u8]) -> std::io::Result<Self> {
        use rustls::pki_types::pem::PemObject;
        let chain = rustls::pki_types::CertificateDer::pem_slice_iter(cert_pem)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| pem_error("client certificate", e))?;
        if chain.is_empty() {
            return Err(pem_error("client certificate", "no certificate"));
        }
        let key = rustls::pki_types::PrivateKeyDer::from_pem_slice(key_pem)
            .map_err(|e| pem_error("client key", e))?;
        self.client_identity = Some(ClientIdentity { chain, key });
        Ok(self)
    }

    /// Uses this rustls configuration, as it is, for every TLS connection (bring your own:
    /// custom verifiers, key logging, a FIPS provider). The other TLS settings are ignored.
    #[cfg(feature = "https")]
    #[must_use]
    pub fn rustls_config(mut self, config: Arc<rustls::ClientConfig>) -> Self {
        self.rustls_config = Some(config);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proxy_credentials_never_show_in_debug_output() {
        let rules = ProxyRules::default()
            .http("http://user:s3cret@proxy:3128")
            .https("proxy:3128");
        let shown = format!("{rules:?}");
        assert!(!shown.contains("s3cret"), "{shown}");
        assert!(shown.contains("http://***@proxy:3128"), "{shown}");
        assert!(shown.contains("proxy:3128"), "{shown}");
    }
}
