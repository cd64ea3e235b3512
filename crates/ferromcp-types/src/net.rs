//! Address classification for SSRF guards: which IP addresses are public (global unicast).
//!
//! One implementation for every fetch ferromcp makes to a URL a peer chose: the OAuth
//! client's address guard (`ferromcp-client`, feature `oauth`) and the embedded authorization
//! server's client ID metadata document fetch (`ferromcp-auth-server`).
//!
//! Not public, by [`is_public`]: IPv4 unspecified and "this network" (0.0.0.0/8), loopback
//! (127/8), private (10/8, 172.16/12, 192.168/16), shared (100.64/10, CGNAT), link-local
//! (169.254/16, including the cloud metadata address 169.254.169.254), IETF protocol
//! assignments (192.0.0.0/24), documentation (192.0.2/24, 198.51.100/24, 203.0.113/24),
//! benchmarking (198.18/15), multicast (224/4), reserved (240/4) and broadcast; IPv6
//! unspecified, loopback (::1), IPv4-compatible and other addresses under ::/96, unique local
//! (fc00::/7), link-local (fe80::/10), site-local (fec0::/10), documentation (2001:db8::/32,
//! 3fff::/20), NAT64 (64:ff9b::/32, which may reach a private IPv4 address) and multicast
//! (ff00::/8); an IPv4-mapped IPv6 address (::ffff:a.b.c.d) is judged by its IPv4 address.
//!
//! ```
//! use std::net::IpAddr;
//! use ferromcp_types::net::{is_loopback, is_public};
//!
//! let ip = |s: &str| s.parse::<IpAddr>().unwrap();
//! assert!(is_public(ip("93.184.216.34")));
//! assert!(!is_public(ip("169.254.169.254")));
//! assert!(!is_public(ip("::ffff:10.0.0.1")));
//! assert!(is_loopback(ip("::ffff:127.0.0.1")));
//! ```

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Whether `ip` is a public (global unicast) address: none of the ranges the
/// [module](self) lists.
#[must_use]
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => is_public_v4(v4),
            None => is_public_v6(v6),
        },
    }
}

/// Whether `ip` is a loopback address: 127/8, ::1, or an IPv4-mapped form of 127/8.
#[must_use]
pub fn is_loopback(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_loopback(),
        IpAddr::V6(v6) => {
            v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
    }
}

fn is_public_v4(v4: Ipv4Addr) -> bool {
    let o = v4.octets();
    !(v4.is_unspecified()
        || v4.is_loopback()
        || v4.is_private()
        || v4.is_link_local()
        || v4.is_broadcast()
        || v4.is_documentation()
        || v4.is_multicast()
        || o[0] == 0 // 0.0.0.0/8 "this network"
        || (o[0] == 100 && (o[1] & 0xc0) == 64) // 100.64.0.0/10 shared (CGNAT)
        || (o[0] == 192 && o[1] == 0 && o[2] == 0) // 192.0.0.0/24 IETF protocol assignments
        || (o[0] == 198 && (o[1] & 0xfe) == 18) // 198.18.0.0/15 benchmarking
        || o[0] >= 240) // 240.0.0.0/4 reserved
}

fn is_public_v6(v6: Ipv6Addr) -> bool {
    let s = v6.segments();
    !(v6.is_unspecified()
        || v6.is_loopback()
        || v6.is_multicast()
        || (s[0] & 0xfe00) == 0xfc00 // fc00::/7 unique local
        || (s[0] & 0xffc0) == 0xfe80 // fe80::/10 link-local
        || (s[0] & 0xffc0) == 0xfec0 // fec0::/10 site-local (deprecated)
        || (s[0] == 0x2001 && s[1] == 0x0db8) // 2001:db8::/32 documentation
        || (s[0] == 0x3fff && (s[1] & 0xf000) == 0) // 3fff::/20 documentation (RFC 9637)
        || (s[0] == 0x64 && s[1] == 0xff9b) // 64:ff9b::/32 NAT64 (may reach private IPv4)
        || s[..6] == [0; 6]) // ::/96: IPv4-compatible and other reserved low addresses
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn non_public_addresses() {
        for s in [
            // IPv4
            "0.0.0.0",
            "0.1.2.3",
            "127.0.0.1",
            "127.255.255.254",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "100.127.255.255",
            "192.0.0.1",
            "192.0.2.1",
            "198.51.100.1",
            "203.0.113.1",
            "198.18.0.1",
            "198.19.255.255",
            "224.0.0.1",
            "239.255.255.255",
            "240.0.0.1",
            "255.255.255.255",
            // IPv6
            "::",
            "::1",
            "::a00:1",
            "fc00::1",
            "fd00::1",
            "fe80::1",
            "febf::1",
            "fec0::1",
            "ff02::1",
            "2001:db8::1",
            "3fff::1",
            "3fff:fff:ffff::1",
            "64:ff9b::a00:1",
            "64:ff9b:1::1",
            // IPv4-mapped IPv6: judged by the IPv4 address
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "::ffff:169.254.169.254",
            "::ffff:100.64.0.1",
            "::ffff:0.0.0.0",
        ] {
            assert!(!is_public(ip(s)), "{s} is not public");
        }
    }

    #[test]
    fn public_addresses() {
        for s in [
            "93.184.216.34",
            "8.8.8.8",
            "1.1.1.1",
            "100.63.255.255",
            "100.128.0.0",
            "172.15.255.255",
            "172.32.0.0",
            "192.0.1.1",
            "198.17.255.255",
            "198.20.0.0",
            "223.255.255.255",
            "2606:4700::1111",
            "2606:2800:220:1::1",
            "2001:4860:4860::8888",
            "3fff:1000::1",
            "2001:db9::1",
            "::ffff:8.8.8.8",
        ] {
            assert!(is_public(ip(s)), "{s} is public");
        }
    }

    #[test]
    fn loopback_addresses() {
        for s in ["127.0.0.1", "127.1.2.3", "::1", "::ffff:127.0.0.1"] {
            assert!(is_loopback(ip(s)), "{s} is loopback");
        }
        for s in [
            "10.0.0.1",
            "::",
            "::ffff:10.0.0.1",
            "fe80::1",
            "93.184.216.34",
        ] {
            assert!(!is_loopback(ip(s)), "{s} is not loopback");
        }
    }
}
