//! The address guard of the OAuth client's own fetches (protected-resource and
//! authorization-server metadata, registration, token requests): SSRF protection.
//!
//! With [`AddressPolicy::Auto`] (the default), when the MCP server's host is on a public
//! address, every connection the OAuth client makes must go to a public address: loopback,
//! private (RFC 1918), link-local (169.254/16, including the cloud metadata address
//! 169.254.169.254, and fe80::/10), unique-local (fc00::/7), shared (100.64/10), unspecified,
//! broadcast, multicast, documentation and reserved ranges, and IPv4-mapped or NAT64 IPv6
//! forms of them, are refused ([`ferromcp_types::net::is_public`], the classification the
//! embedded authorization server shares). When the MCP server's host is itself loopback,
//! private or link-local (local development), any address is allowed.
//!
//! The check is made at connect time on the addresses actually connected to: names are
//! resolved by the connector's own resolver, which refuses a name if any of its addresses is
//! refused (so a name cannot be re-bound between check and connect), and IP-literal hosts
//! (which the connector does not resolve) are checked before connecting.
//!
//! Through a proxy ([`OAuthConfig::http_client`](super::OAuthConfig::http_client)'s proxy
//! settings, the environment's by default), the proxy resolves names: only IP-literal hosts
//! are checked (before the proxy is asked); the proxy's own address is configuration and is
//! not checked. With a [`Connector`](crate::transport::http::Connector) of one's own, which
//! resolves names (if at all) itself, likewise only IP-literal hosts are checked, before the
//! connector is called.

use std::future::Future;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use http::Uri;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::connect::dns::Name;
use tokio::net::TcpStream;
use url::Url;

use ferromcp_types::net::{is_loopback_host, is_public};

use crate::transport::http::client::{BoxError, Dial, build_with, configure_tcp, dial_with};

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// Which addresses the OAuth client's own fetches (metadata, registration, tokens) may
/// connect to: [`OAuthConfig::address_policy`](super::OAuthConfig::address_policy).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum AddressPolicy {
    /// Public addresses only when the MCP server's host is on a public address; any address
    /// when it is itself loopback, private or link-local (local development). The default.
    #[default]
    Auto,
    /// Public addresses only, whatever the MCP server's address (a server-side deployment,
    /// where nothing the OAuth client reaches should be internal).
    PublicOnly,
    /// No address check (the application vouches for every server it talks to).
    Any,
}

/// A URL host as the connector sees it: IPv6 without brackets, names in lower case.
fn bare(host: &str) -> String {
    host.trim_start_matches('[')
        .trim_end_matches(']')
        .to_ascii_lowercase()
}

/// The guard of one OAuth client: the policy and the MCP server's host.
pub(super) struct Guard {
    policy: AddressPolicy,
    server_host: String,
    /// Hosts let through whatever they resolve to (lower case).
    trusted: Vec<String>,
    /// Whether only public addresses are allowed (decided once, from the server's host).
    public_only: tokio::sync::OnceCell<bool>,
}

impl Guard {
    pub(super) fn new(server: &Url, policy: AddressPolicy, trusted: &[String]) -> Self {
        Self {
            policy,
            server_host: bare(server.host_str().unwrap_or_default()),
            trusted: trusted.iter().map(|h| bare(h)).collect(),
            public_only: tokio::sync::OnceCell::new(),
        }
    }

    async fn public_only(&self) -> io::Result<bool> {
        match self.policy {
            AddressPolicy::Any => Ok(false),
            AddressPolicy::PublicOnly => Ok(true),
            AddressPolicy::Auto => self
                .public_only
                .get_or_try_init(|| server_is_public(&self.server_host))
                .await
                .copied(),
        }
    }

    /// Refuses `host` when only public addresses are allowed and any of `addrs` is not.
    async fn check(&self, host: &str, addrs: &[IpAddr]) -> io::Result<()> {
        if self.trusted.iter().any(|t| t == host) || !self.public_only().await? {
            return Ok(());
        }
        match addrs.iter().find(|ip| !is_public(**ip)) {
            None if !addrs.is_empty() => Ok(()),
            found => {
                let what = found.map_or_else(|| "no address".to_owned(), ToString::to_string);
                Err(io::Error::new(
                    io::ErrorKind::PermissionDenied,
                    format!(
                        "{host} resolves to a non-public address ({what}); refused because the \
                         MCP server is on a public address (OAuthConfig::address_policy)"
                    ),
                ))
            }
        }
    }
}

/// Whether the MCP server's host is public: an IP literal by its address, a loopback name
/// (`localhost`, `*.localhost`: [`is_loopback_host`]) is not, a name by its addresses
/// (public unless every one is loopback, private or link-local: a name mixing both is
/// treated as public, the stricter side).
async fn server_is_public(host: &str) -> io::Result<bool> {
    if let Ok(ip) = host.parse::<IpAddr>() {
        return Ok(is_public(ip));
    }
    if is_loopback_host(host) {
        return Ok(false);
    }
    let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host, 0)).await?.collect();
    Ok(addrs.is_empty() || addrs.iter().any(|a| is_public(a.ip())))
}

/// The resolver: resolves, then lets the guard refuse.
#[derive(Clone)]
pub(super) struct GuardedResolver(Arc<Guard>);

impl tower_service::Service<Name> for GuardedResolver {
    type Response = std::vec::IntoIter<SocketAddr>;
    type Error = io::Error;
    type Future = BoxFuture<Result<Self::Response, Self::Error>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, name: Name) -> Self::Future {
        let guard = self.0.clone();
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let addrs: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let ips: Vec<IpAddr> = addrs.iter().map(SocketAddr::ip).collect();
            guard.check(&host, &ips).await?;
            Ok(addrs.into_iter())
        })
    }
}

/// The dialer: IP-literal hosts (which the connector does not resolve) are checked here;
/// names go through [`GuardedResolver`]. Through a proxy, which resolves names itself, only
/// IP-literal destinations can be checked; the proxy's own address is not (configuration).
struct GuardedDial {
    guard: Arc<Guard>,
    inner: HttpConnector<GuardedResolver>,
}

impl GuardedDial {
    async fn check_literal(guard: &Guard, dst: &Uri) -> io::Result<()> {
        let host = bare(dst.host().unwrap_or_default());
        if let Ok(ip) = host.parse::<IpAddr>() {
            guard.check(&host, &[ip]).await?;
        }
        Ok(())
    }
}

impl Dial for GuardedDial {
    fn dial(&self, dst: Uri) -> BoxFuture<Result<TcpStream, BoxError>> {
        let guard = self.guard.clone();
        let inner = self.inner.clone();
        Box::pin(async move {
            Self::check_literal(&guard, &dst).await?;
            dial_with(inner, dst).await
        })
    }

    fn check_unresolved(&self, dst: &Uri) -> BoxFuture<io::Result<()>> {
        let guard = self.guard.clone();
        let dst = dst.clone();
        Box::pin(async move { Self::check_literal(&guard, &dst).await })
    }
}

pub(super) use crate::transport::http::client::HttpClient;

/// The OAuth client's HTTP client for the MCP server at `server`: `cfg`'s connection
/// settings, guarded by its address policy.
pub(super) fn client(server: &Url, cfg: &super::OAuthConfig) -> io::Result<HttpClient> {
    let guard = Arc::new(Guard::new(server, cfg.address_policy, &cfg.trusted_hosts));
    let mut tcp = HttpConnector::new_with_resolver(GuardedResolver(guard.clone()));
    configure_tcp(&mut tcp, &cfg.http_client);
    build_with(
        &cfg.http_client,
        Arc::new(GuardedDial { guard, inner: tcp }),
        usize::MAX,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_server_address_decides_in_auto_mode() {
        let check = |server: &str, to: &str| {
            let server = Url::parse(server).ok();
            let to: IpAddr = to.parse().unwrap_or(IpAddr::from([0, 0, 0, 0]));
            async move {
                let Some(server) = server else { return false };
                Guard::new(&server, AddressPolicy::Auto, &[])
                    .check("host", &[to])
                    .await
                    .is_ok()
            }
        };
        // A public server: only public addresses.
        assert!(!check("https://93.184.216.34/mcp", "169.254.169.254").await);
        assert!(!check("https://[2606:4700::1111]/mcp", "10.0.0.1").await);
        assert!(check("https://93.184.216.34/mcp", "8.8.8.8").await);
        // S130: nor an internal IPv4 address inside 6to4, Teredo or NAT64.
        for to in [
            "2002:a9fe:a9fe::1",
            "2001:0:808:808::f5ff:fffe",
            "64:ff9b::a00:1",
        ] {
            assert!(!check("https://93.184.216.34/mcp", to).await, "{to}");
        }
        // A local server: anything.
        assert!(check("http://127.0.0.1:8080/mcp", "10.0.0.1").await);
        assert!(check("http://localhost:8080/mcp", "169.254.169.254").await);
        assert!(check("https://192.168.1.20/mcp", "127.0.0.1").await);
    }
}
