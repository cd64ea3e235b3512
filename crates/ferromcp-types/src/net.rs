//! Address classification for SSRF guards: which IP addresses are public (global unicast),
//! and which URL hosts are loopback.
//!
//! One implementation for every fetch ferromcp makes to a URL a peer chose: the OAuth
//! client's address guard (`ferromcp-client`, feature `oauth`) and the embedded
//! authorization server's client ID metadata document fetch (`ferromcp-auth-server`); and
//! one loopback-host rule ([`is_loopback_host`]) for every place plain `http` is allowed
//! only to this machine (OAuth endpoints and redirect URIs in the client, the authorization
//! server's issuer, redirect URIs and metadata documents, the resource server's JWKS URL).
//!
//! Not public, by [`is_public`]: IPv4 unspecified and "this network" (0.0.0.0/8), loopback
//! (127/8), private (10/8, 172.16/12, 192.168/16), shared (100.64/10, CGNAT), link-local
//! (169.254/16, including the cloud metadata address 169.254.169.254), IETF protocol
//! assignments (192.0.0.0/24), documentation (192.0.2/24, 198.51.100/24, 203.0.113/24),
//! benchmarking (198.18/15), multicast (224/4), reserved (240/4) and broadcast. An IPv6
//! address is public only inside the global unicast space 2000::/3, so unspecified, loopback
//! (::1), IPv4-compatible (::/96) and IPv4-translated (::ffff:0:0:0/96) forms, the rest of
//! ::/8, discard-only (100::/64), unique local (fc00::/7), link-local (fe80::/10), site-local
//! (fec0::/10), multicast (ff00::/8) and every unassigned block are not; inside it,
//! documentation (2001:db8::/32, 3fff::/20) and the IETF protocol assignments 2001::/23
//! (benchmarking 2001:2::/48, ORCHID, …) are not either.
//!
//! An IPv6 address that carries an IPv4 address the network delivers to is judged by that
//! IPv4 address (and, when it carries two, by both): IPv4-mapped (`::ffff:a.b.c.d`), NAT64
//! with the well-known prefix (`64:ff9b::a.b.c.d`, RFC 6052), 6to4 (`2002:AABB:CCDD::/48`,
//! the IPv4 address in bits 16..48, RFC 3056) and Teredo (`2001:0:SSSS:SSSS::/64` with the
//! server's IPv4 address in bits 32..64 and the client's, inverted, in the last 32 bits,
//! RFC 4380). The rest of 64:ff9b::/32 (the local-use 64:ff9b:1::/48 of RFC 8215 among it)
//! is not public: where the IPv4 address sits there is the network's choice, so the guard
//! cannot tell which address it reaches, and refuses.
//!
//! ```
//! use std::net::IpAddr;
//! use ferromcp_types::net::{is_loopback, is_loopback_host, is_public};
//!
//! let ip = |s: &str| s.parse::<IpAddr>().unwrap();
//! assert!(is_public(ip("93.184.216.34")));
//! assert!(!is_public(ip("169.254.169.254")));
//! assert!(!is_public(ip("::ffff:10.0.0.1")));
//! assert!(!is_public(ip("2002:a00:1::1"))); // 6to4 of 10.0.0.1
//! assert!(is_loopback(ip("::ffff:127.0.0.1")));
//! assert!(is_loopback_host("[::1]"));
//! assert!(!is_loopback_host("localhost.example.com"));
//! ```

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Whether `ip` is a public (global unicast) address: none of the ranges the
/// [module](self) lists, and any IPv4 address it carries public too.
#[must_use]
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => is_public_v6(v6),
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

/// Whether a URL's host (as [`url::Url::host_str`] or [`http::Uri::host`] give it) names
/// this machine: `localhost` or a name under it (`app.localhost`, RFC 6761), any case; an
/// IPv4 address in 127/8; `::1` or an IPv4-mapped loopback address, bracketed or not.
///
/// Nothing else: not `localhost.example.com`, not `127.0.0.1.nip.io` (names that only
/// *resolve* to loopback, today), not `localhost.` or a name with an empty label, not
/// `127.1` or other shorthand IPv4 forms, not a bracketed IPv4 address.
///
/// [`url::Url::host_str`]: https://docs.rs/url/latest/url/struct.Url.html#method.host_str
/// [`http::Uri::host`]: https://docs.rs/http/latest/http/uri/struct.Uri.html#method.host
#[must_use]
pub fn is_loopback_host(host: &str) -> bool {
    if let Some(inner) = host.strip_prefix('[') {
        return inner
            .strip_suffix(']')
            .and_then(|a| a.parse::<Ipv6Addr>().ok())
            .is_some_and(|v6| is_loopback(IpAddr::V6(v6)));
    }
    if let Ok(ip) = host.parse::<IpAddr>() {
        return is_loopback(ip);
    }
    let mut labels = host.rsplit('.');
    labels
        .next()
        .is_some_and(|last| last.eq_ignore_ascii_case("localhost"))
        && labels.all(|label| {
            !label.is_empty()
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-')
        })
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

/// The IPv4 address in the 32 bits of `v6`'s segments `hi` and `hi + 1`.
fn v4_at(s: &[u16; 8], hi: usize) -> Ipv4Addr {
    let [a, b] = s[hi].to_be_bytes();
    let [c, d] = s[hi + 1].to_be_bytes();
    Ipv4Addr::new(a, b, c, d)
}

fn is_public_v6(v6: Ipv6Addr) -> bool {
    let s = v6.segments();
    if let Some(v4) = v6.to_ipv4_mapped() {
        return is_public_v4(v4); // ::ffff:0:0/96 IPv4-mapped
    }
    if s[0] == 0x64 && s[1] == 0xff9b {
        // 64:ff9b::/96 NAT64 well-known prefix: the IPv4 address in the last 32 bits. The
        // rest of 64:ff9b::/32 (local-use 64:ff9b:1::/48) places it where the network chose.
        return s[2..6] == [0; 4] && is_public_v4(v4_at(&s, 6));
    }
    if s[0] == 0x2002 {
        return is_public_v4(v4_at(&s, 1)); // 2002::/16 6to4
    }
    if s[0] == 0x2001 && s[1] == 0 {
        // 2001::/32 Teredo: the server's IPv4 address, then the client's, inverted.
        let client = Ipv4Addr::from(!u32::from(v4_at(&s, 6)));
        return is_public_v4(v4_at(&s, 2)) && is_public_v4(client);
    }
    // 2001::/23 IETF protocol assignments, 2001:db8::/32 documentation.
    let special_2001 = s[0] == 0x2001 && (s[1] < 0x0200 || s[1] == 0x0db8);
    (s[0] & 0xe000) == 0x2000 // 2000::/3 global unicast: nothing outside it is public
        && !special_2001
        && !(s[0] == 0x3fff && (s[1] & 0xf000) == 0) // 3fff::/20 documentation (RFC 9637)
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
            "100::1",
            "200::1",
            "4000::1",
            "2001:2::1",
            "2001:10::1",
            "2001:1ff::1",
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
            "2001:200::1",
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

    /// S130: an IPv6 address carrying an IPv4 address is judged by that IPv4 address.
    #[test]
    fn s130_embedded_ipv4_is_judged_by_its_ipv4() {
        // (embedding, public IPv4 form, private form, loopback form, link-local form)
        let private = [
            // 6to4: 2002:AABB:CCDD::/48
            "2002:a00:1::1",
            "2002:7f00:1::",
            "2002:a9fe:a9fe::1",
            "2002:c0a8:101:1::1",
            "2002:6440:1::1",
            "2002:0:0::1",
            // Teredo, client private (inverted: 10.0.0.1 -> f5ff:fffe), server public
            "2001:0:808:808:0:0:f5ff:fffe",
            // Teredo, client loopback (127.0.0.1 -> 80ff:fffe)
            "2001:0:808:808::80ff:fffe",
            // Teredo, server private (192.168.1.1), client public (8.8.8.8 -> f7f7:f7f7)
            "2001:0:c0a8:101::f7f7:f7f7",
            // Teredo, client link-local (169.254.169.254 -> 5601:5601)
            "2001:0:808:808:8000:ffff:5601:5601",
            // NAT64 well-known prefix
            "64:ff9b::7f00:1",
            "64:ff9b::a9fe:a9fe",
            "64:ff9b::c0a8:101",
            // NAT64 outside the /96, and the local-use /48: cannot tell, refused
            "64:ff9b:0:0:1::808:808",
            "64:ff9b:1::808:808",
            "64:ff9b:1:ffff::808:808",
            // IPv4-mapped, IPv4-compatible (deprecated), IPv4-translated (SIIT)
            "::ffff:192.168.0.1",
            "::ffff:127.0.0.2",
            "::808:808",
            "::127.0.0.1",
            "::ffff:0:a00:1",
            "::ffff:0:808:808",
        ];
        for s in private {
            assert!(!is_public(ip(s)), "{s} is not public");
        }
        for s in [
            "2002:808:808::1",
            "2002:5db8:d822:1::1",
            "2001:0:808:808::f7f7:f7f7",
            "64:ff9b::808:808",
            "64:ff9b::5db8:d822",
            "::ffff:93.184.216.34",
        ] {
            assert!(is_public(ip(s)), "{s} is public");
        }
        // None of them is loopback: only 127/8, ::1 and ::ffff:127/8 are.
        for s in [
            "2002:7f00:1::",
            "2001:0:808:808::80ff:fffe",
            "64:ff9b::7f00:1",
        ] {
            assert!(!is_loopback(ip(s)), "{s} is not loopback");
        }
    }

    /// S131: the one rule for "this URL's host is this machine".
    #[test]
    fn s131_loopback_hosts() {
        for h in [
            "localhost",
            "LocalHost",
            "app.localhost",
            "a.b-c.LOCALHOST",
            "127.0.0.1",
            "127.255.0.9",
            "[::1]",
            "::1",
            "[0:0:0:0:0:0:0:1]",
            "[::ffff:127.0.0.1]",
            "[::ffff:7f00:1]",
        ] {
            assert!(is_loopback_host(h), "{h} is loopback");
        }
        for h in [
            "",
            "localhost.",
            ".localhost",
            "a..localhost",
            "app.localhost.",
            "localhost.example.com",
            "localhostx",
            "xlocalhost",
            "my_app.localhost",
            "app localhost",
            "127.0.0.1.nip.io",
            "127.1",
            "0x7f.0.0.1",
            "0177.0.0.1",
            "127.0.0.1:80",
            "[127.0.0.1]",
            "[localhost]",
            "[::1",
            "::1]",
            "[::2]",
            "[fe80::1]",
            "[::]",
            "0.0.0.0",
            "10.0.0.1",
            "[2002:7f00:1::]",
            "[64:ff9b::7f00:1]",
            "[::127.0.0.1]",
            "example.com",
        ] {
            assert!(!is_loopback_host(h), "{h} is not loopback");
        }
    }
}
