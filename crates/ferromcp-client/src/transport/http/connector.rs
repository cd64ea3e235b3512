//! [`Connector`]: bring your own connection. The HTTP client normally opens TCP connections
//! itself (through a proxy when the [`ProxyConfig`](super::ProxyConfig) says so); a
//! `Connector` set with [`HttpClientConfig::connector`](super::HttpClientConfig::connector)
//! replaces that step and hands back any byte stream instead: a Unix socket, an SSH tunnel's
//! channel, an in-memory pipe, a connection made through a corporate SOCKS library or a
//! resolver of one's own, a test double. HTTP/1.1 (and, for `https` URLs, TLS) then runs over
//! that stream as over a TCP connection.
//!
//! How it composes with the other [`HttpClientConfig`](super::HttpClientConfig) settings:
//!
//! - **TLS**: for `https` targets the client still runs TLS over the returned stream, with the
//!   [`TlsConfig`](super::TlsConfig) (roots, client certificate, a `rustls::ClientConfig` of
//!   one's own) and the URL's host as the server name, unless the connector says its streams
//!   are already secure ([`Connector::handles_tls`]). `http` targets get plain HTTP over the
//!   stream.
//! - **Connect timeout**: bounds the connector's `connect` and the TLS handshake over its
//!   stream, as it bounds TCP connect and TLS otherwise; a connector that never returns fails
//!   with "connecting timed out after …".
//! - **Proxies are ignored**: the connector decides where the bytes go, so neither
//!   [`ProxyConfig`](super::ProxyConfig) nor the environment's `HTTP(S)_PROXY` apply, and no
//!   `Proxy-Authorization` is ever sent.
//! - **TCP settings** (`TCP_NODELAY`, [`tcp_keepalive`](super::HttpClientConfig::tcp_keepalive))
//!   are the connector's business: the client sees only a byte stream.
//! - **Pooling, read timeout, default headers** apply as usual: a connection is made once per
//!   pooled connection and reused for later requests (keep-alive).
//! - **The OAuth client** (`OAuthConfig::with_http_client`, feature `oauth`) uses the
//!   connector for its own requests too. Its address guard can no longer see the addresses
//!   connected to (the connector resolves names, if at all): it checks IP-literal hosts
//!   before calling the connector, as it does through a proxy.

use std::fmt;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;

use http::Uri;
use tokio::io::{AsyncRead, AsyncWrite};

/// Opens the connections of the HTTP client (see the [module docs](self) for how it composes
/// with TLS, timeouts and proxies). Set with
/// [`HttpClientConfig::connector`](super::HttpClientConfig::connector).
///
/// `connect` runs once per new pooled connection, not per request: the client keeps
/// connections alive and reuses them. An error it returns fails the request that needed the
/// connection, as a transport error whose message carries the error's text.
///
/// ```
/// use std::io;
/// use ferromcp_client::transport::http::{Connector, HttpClientConfig, Target};
/// use tokio::net::TcpStream;
///
/// /// Sends every connection to one address, whatever the URL's host (curl's `--connect-to`).
/// struct ConnectTo(std::net::SocketAddr);
///
/// impl Connector for ConnectTo {
///     type Stream = TcpStream;
///
///     async fn connect(&self, target: &Target) -> io::Result<TcpStream> {
///         let _ = (target.host(), target.port()); // "mcp.internal", 443 for https://mcp.internal/mcp
///         let tcp = TcpStream::connect(self.0).await?;
///         tcp.set_nodelay(true)?;
///         Ok(tcp)
///     }
/// }
///
/// let config = HttpClientConfig::default().connector(ConnectTo(([10, 0, 0, 7], 8443).into()));
/// # let _ = config;
/// ```
pub trait Connector: Send + Sync + 'static {
    /// The byte stream of a connection.
    type Stream: AsyncRead + AsyncWrite + Send + Unpin + 'static;

    /// Opens a connection to `target`.
    fn connect(&self, target: &Target) -> impl Future<Output = io::Result<Self::Stream>> + Send;

    /// Whether the streams returned for `https` targets are already secure (the connector
    /// runs TLS itself, or the transport is trusted as it is): then the client runs no TLS
    /// of its own over them and the [`TlsConfig`](super::TlsConfig) is not used. The default,
    /// `false`, has the client run TLS over the stream.
    fn handles_tls(&self) -> bool {
        false
    }
}

/// Where a connection goes: the scheme, host and port of the request's URL.
#[derive(Debug, Clone)]
pub struct Target {
    uri: Uri,
    host: String,
    port: u16,
}

impl Target {
    /// The target of a URL (an absolute one: it needs a host). The port is the URL's, or the
    /// scheme's default (443 for `https`, 80 otherwise).
    pub fn new(uri: Uri) -> io::Result<Self> {
        let host = uri
            .host()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "the URL has no host"))?
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_owned();
        let https = uri.scheme_str() == Some("https");
        let port = uri.port_u16().unwrap_or(if https { 443 } else { 80 });
        Ok(Self { uri, host, port })
    }

    /// The URL the connection is for (scheme and authority; the path is not meaningful).
    pub fn uri(&self) -> &Uri {
        &self.uri
    }

    /// The scheme: `http` or `https`.
    pub fn scheme(&self) -> &str {
        self.uri.scheme_str().unwrap_or("http")
    }

    /// Whether the scheme is `https`.
    pub fn is_https(&self) -> bool {
        self.scheme() == "https"
    }

    /// The host, as in the URL (IPv6 addresses without their brackets). Not resolved.
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The port: the URL's, or the scheme's default.
    pub fn port(&self) -> u16 {
        self.port
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.host.contains(':') {
            write!(f, "{}://[{}]:{}", self.scheme(), self.host, self.port)
        } else {
            write!(f, "{}://{}:{}", self.scheme(), self.host, self.port)
        }
    }
}

/// A byte stream of any connector.
pub(crate) trait Io: AsyncRead + AsyncWrite + Send + Unpin + 'static {}

impl<T: AsyncRead + AsyncWrite + Send + Unpin + 'static> Io for T {}

pub(crate) type BoxIo = Box<dyn Io>;

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// [`Connector`] with its stream and future boxed (one box each per connection).
trait DynConnector: Send + Sync + 'static {
    fn connect_boxed(self: Arc<Self>, target: Target) -> BoxFuture<io::Result<BoxIo>>;
    fn handles_tls(&self) -> bool;
}

impl<C: Connector> DynConnector for C {
    fn connect_boxed(self: Arc<Self>, target: Target) -> BoxFuture<io::Result<BoxIo>> {
        Box::pin(async move {
            let io = self.connect(&target).await?;
            Ok(Box::new(io) as BoxIo)
        })
    }

    fn handles_tls(&self) -> bool {
        Connector::handles_tls(self)
    }
}

/// The connector of an [`HttpClientConfig`](super::HttpClientConfig): shared by its clones.
#[derive(Clone)]
pub(crate) struct CustomConnector(Arc<dyn DynConnector>);

impl CustomConnector {
    pub(crate) fn new(connector: impl Connector) -> Self {
        Self(Arc::new(connector))
    }

    /// Opens a connection to `target`; an error names the target and the connector.
    pub(crate) async fn connect(&self, target: Target) -> io::Result<BoxIo> {
        let shown = target.to_string();
        self.0.clone().connect_boxed(target).await.map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("the connector failed to connect to {shown}: {e}"),
            )
        })
    }

    pub(crate) fn handles_tls(&self) -> bool {
        self.0.handles_tls()
    }
}

impl fmt::Debug for CustomConnector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Connector")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_fill_in_default_ports_and_unbracket_ipv6_hosts() {
        let t = |u: &'static str| Target::new(Uri::from_static(u));
        let a = t("https://mcp.example/mcp").unwrap();
        assert_eq!(
            (a.scheme(), a.host(), a.port(), a.is_https()),
            ("https", "mcp.example", 443, true)
        );
        assert_eq!(a.to_string(), "https://mcp.example:443");
        let b = t("http://[::1]:8080/").unwrap();
        assert_eq!((b.host(), b.port(), b.is_https()), ("::1", 8080, false));
        assert_eq!(b.to_string(), "http://[::1]:8080");
        assert_eq!(t("http://h/").unwrap().port(), 80);
        assert!(t("/relative").is_err());
    }
}
