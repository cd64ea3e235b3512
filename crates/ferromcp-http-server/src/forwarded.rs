//! The client's address behind trusted reverse proxies: [`IpRange`] and
//! [`HttpConfig::client_addr`](crate::HttpConfig::client_addr).
//!
//! Behind a reverse proxy every request comes from the proxy's address, so the per-peer caps
//! would count all clients as one. When the TCP peer is a proxy the configuration trusts
//! ([`HttpConfig::trusted_proxies`](crate::HttpConfig::trusted_proxies)), the client is read
//! from `X-Forwarded-For`: the rightmost address that is not itself a trusted proxy (each
//! proxy appends the address it got the request from, so the entries to the left of that one
//! are whatever the client chose to send, and are ignored). A header that cannot be read
//! leaves the proxy's own address: a request never escapes its cap by sending nonsense.

use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::str::FromStr;

use http::HeaderMap;

/// A range of IP addresses: one address (`10.0.0.7`, `::1`) or a CIDR block (`10.0.0.0/8`,
/// `fd00::/8`). IPv4-mapped IPv6 addresses match the IPv4 ranges.
///
/// ```
/// use ferromcp_http_server::IpRange;
///
/// let r: IpRange = "10.0.0.0/8".parse().unwrap();
/// assert!(r.contains("10.1.2.3".parse().unwrap()));
/// assert!(!r.contains("11.0.0.1".parse().unwrap()));
/// assert!("10.0.0.0/33".parse::<IpRange>().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct IpRange {
    addr: IpAddr,
    prefix: u8,
}

impl IpRange {
    /// The range of `addr`'s first `prefix` bits (at most 32 for IPv4, 128 for IPv6).
    pub fn new(addr: IpAddr, prefix: u8) -> Result<Self, String> {
        let bits = if addr.is_ipv4() { 32 } else { 128 };
        if prefix > bits {
            return Err(format!("a /{prefix} prefix is longer than {bits} bits"));
        }
        Ok(Self { addr, prefix })
    }

    /// Whether `ip` is in the range.
    pub fn contains(&self, ip: IpAddr) -> bool {
        match (self.addr, unmapped(ip)) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => {
                let mask = u32::MAX
                    .checked_shl(32 - u32::from(self.prefix))
                    .unwrap_or(0);
                u32::from(net) & mask == u32::from(ip) & mask
            }
            (IpAddr::V4(_), IpAddr::V6(_)) => false,
            // An IPv6 range wider than the IPv4-mapped block can hold IPv4 clients too.
            (IpAddr::V6(net), _) => {
                let ip = match ip {
                    IpAddr::V4(v4) => v4.to_ipv6_mapped(),
                    IpAddr::V6(v6) => v6,
                };
                let mask = u128::MAX
                    .checked_shl(128 - u32::from(self.prefix))
                    .unwrap_or(0);
                u128::from(net) & mask == u128::from(ip) & mask
            }
        }
    }
}

impl FromStr for IpRange {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let (addr, prefix) = match s.split_once('/') {
            Some((a, p)) => {
                let p: u8 = p
                    .parse()
                    .map_err(|_| format!("{s:?}: the prefix length is not a number"))?;
                (a, Some(p))
            }
            None => (s, None),
        };
        let addr: IpAddr = addr
            .parse()
            .map_err(|_| format!("{s:?} is not an IP address or CIDR block"))?;
        let range = match (addr, prefix) {
            // An IPv4-mapped address, or a block within the mapped /96: the IPv4 range.
            (IpAddr::V6(v6), p) if v6.to_ipv4_mapped().is_some() && p.is_none_or(|p| p >= 96) => {
                let v4 = v6.to_ipv4_mapped().map_or(addr, IpAddr::V4);
                Self::new(v4, p.map_or(32, |p| p.saturating_sub(96)))
            }
            (_, Some(p)) => Self::new(addr, p),
            (_, None) => Self::new(addr, if addr.is_ipv4() { 32 } else { 128 }),
        };
        range.map_err(|e| format!("{s:?}: {e}"))
    }
}

impl fmt::Display for IpRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.addr, self.prefix)
    }
}

/// IPv4-mapped IPv6 addresses as IPv4.
fn unmapped(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

/// The client of a request whose TCP peer is `peer` (see the module docs).
pub(crate) fn client_addr(
    trusted: &[IpRange],
    peer: SocketAddr,
    headers: &HeaderMap,
) -> SocketAddr {
    let is_trusted = |ip: IpAddr| trusted.iter().any(|r| r.contains(ip));
    if !is_trusted(peer.ip()) {
        return peer;
    }
    // Every X-Forwarded-For line, in order, is one comma-separated list; read it from the end.
    let mut entries = Vec::new();
    for value in headers.get_all("x-forwarded-for") {
        let Ok(text) = value.to_str() else {
            return peer;
        };
        entries.extend(text.split(',').map(str::trim));
    }
    for entry in entries.iter().rev() {
        let Some(ip) = parse_entry(entry) else {
            return peer;
        };
        if !is_trusted(ip) {
            return SocketAddr::new(unmapped(ip), 0);
        }
    }
    // Only proxies (or no header): the request comes from the proxies themselves.
    peer
}

/// One `X-Forwarded-For` entry: an address, with or without a port (`1.2.3.4:5`,
/// `[::1]:5`, `::1`).
fn parse_entry(entry: &str) -> Option<IpAddr> {
    if let Ok(ip) = entry.parse() {
        return Some(ip);
    }
    if let Ok(sa) = entry.parse::<SocketAddr>() {
        return Some(sa.ip());
    }
    entry
        .strip_prefix('[')
        .and_then(|e| e.strip_suffix(']'))
        .and_then(|e| e.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(s: &str) -> IpRange {
        s.parse().unwrap_or_else(|e| unreachable!("{e}"))
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap_or_else(|e| unreachable!("{e}"))
    }

    #[test]
    fn ranges_parse_and_match() {
        assert!(r("10.0.0.0/8").contains(ip("10.255.0.1")));
        assert!(!r("10.0.0.0/8").contains(ip("11.0.0.1")));
        assert!(r("10.0.0.7").contains(ip("10.0.0.7")));
        assert!(!r("10.0.0.7").contains(ip("10.0.0.8")));
        assert!(r("0.0.0.0/0").contains(ip("8.8.8.8")));
        assert!(!r("0.0.0.0/0").contains(ip("::1")));
        assert!(r("fd00::/8").contains(ip("fd12::1")));
        assert!(r("::/0").contains(ip("2001:db8::1")));
        assert!(r("127.0.0.1").contains(ip("::ffff:127.0.0.1")), "mapped");
        assert!(
            r("::ffff:10.0.0.0/104").contains(ip("10.0.0.1")),
            "mapped range"
        );
        assert!(r("::ffff:10.0.0.0/104").contains(ip("::ffff:10.0.0.1")));
        assert!(!r("::ffff:10.0.0.0/104").contains(ip("11.0.0.1")));
        assert!(
            r("::/0").contains(ip("10.0.0.1")),
            "IPv4 inside an IPv6 range"
        );
        for bad in [
            "10.0.0.0/33",
            "::/129",
            "10.0.0/8",
            "x",
            "10.0.0.0/",
            "10.0.0.0/-1",
            "",
        ] {
            assert!(bad.parse::<IpRange>().is_err(), "{bad}");
        }
        assert_eq!(r("10.0.0.0/8").to_string(), "10.0.0.0/8");
    }

    fn headers(lines: &[&str]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for l in lines {
            h.append(
                "x-forwarded-for",
                l.parse().unwrap_or_else(|_| unreachable!()),
            );
        }
        h
    }

    #[test]
    fn the_rightmost_untrusted_entry_is_the_client() {
        let trusted = [r("10.0.0.0/8")];
        let proxy: SocketAddr = "10.0.0.1:4000".parse().unwrap_or_else(|_| unreachable!());
        let at = |lines: &[&str]| client_addr(&trusted, proxy, &headers(lines)).ip();
        assert_eq!(at(&["203.0.113.9"]), ip("203.0.113.9"));
        // What the client sent itself stands to the left of what the proxy appended.
        assert_eq!(at(&["1.1.1.1, 203.0.113.9"]), ip("203.0.113.9"));
        assert_eq!(at(&["1.1.1.1", "203.0.113.9, 10.0.0.2"]), ip("203.0.113.9"));
        assert_eq!(at(&["[2001:db8::1]:443"]), ip("2001:db8::1"));
        assert_eq!(at(&["203.0.113.9:5555"]), ip("203.0.113.9"));
        // Nothing to read, only proxies, or an entry that is not an address: the proxy.
        assert_eq!(at(&[]), proxy.ip());
        assert_eq!(at(&["10.0.0.3"]), proxy.ip());
        assert_eq!(at(&["203.0.113.9, unknown"]), proxy.ip());
        assert_eq!(at(&["203.0.113.9, "]), proxy.ip());
        // An untrusted peer's header is ignored.
        let direct: SocketAddr = "198.51.100.1:1".parse().unwrap_or_else(|_| unreachable!());
        let h = headers(&["203.0.113.9"]);
        assert_eq!(client_addr(&trusted, direct, &h), direct);
        assert_eq!(client_addr(&[], proxy, &h), proxy);
    }
}
