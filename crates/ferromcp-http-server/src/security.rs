//! DNS-rebinding protection: the `Host` and `Origin` allowlists (MCP 2025-11-25 and
//! 2026-07-28 "Streamable HTTP › Security Warning").

use std::net::SocketAddr;

use http::HeaderMap;
use http::header::{HOST, ORIGIN};

use super::config::HttpConfig;

/// Why a request failed the rebinding checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rejection {
    /// 421 Misdirected Request.
    Host,
    /// 403 Forbidden.
    Origin,
}

/// `pattern` matches `value` exactly (ASCII case-insensitively), or, for `base:*`, any
/// `base:port`.
fn matches(pattern: &str, value: &str) -> bool {
    if let Some(base) = pattern.strip_suffix(":*") {
        return value.len() > base.len() + 1
            && value[..base.len()].eq_ignore_ascii_case(base)
            && value.as_bytes()[base.len()] == b':'
            && value[base.len() + 1..].bytes().all(|b| b.is_ascii_digit());
    }
    pattern.eq_ignore_ascii_case(value)
}

/// Checks `Host` (a missing one fails when the list is on) and `Origin` (a missing one
/// passes).
pub(crate) fn check(
    config: &HttpConfig,
    headers: &HeaderMap,
    uri_host: Option<&str>,
) -> Result<(), Rejection> {
    if let Some(hosts) = &config.allowed_hosts {
        // HTTP/1.1 carries `Host`; HTTP/2 the URI authority.
        let host = headers.get(HOST).and_then(|v| v.to_str().ok()).or(uri_host);
        if !host.is_some_and(|h| hosts.iter().any(|p| matches(p, h))) {
            return Err(Rejection::Host);
        }
    }
    if let Some(origins) = &config.allowed_origins {
        if let Some(origin) = headers.get(ORIGIN) {
            let ok = origin
                .to_str()
                .is_ok_and(|o| origins.iter().any(|p| matches(p, o)));
            if !ok {
                return Err(Rejection::Origin);
            }
        }
    }
    Ok(())
}

/// Applies the loopback defaults for a loopback bind, or warns about a wider bind that has no
/// allowlists.
pub(crate) fn secure_for_bind(config: HttpConfig, addr: SocketAddr) -> HttpConfig {
    if addr.ip().is_loopback() {
        return config.with_loopback_defaults();
    }
    if config.allowed_hosts.is_none() || config.allowed_origins.is_none() {
        tracing::warn!(
            %addr,
            "serving MCP over HTTP on a non-loopback address without Host and Origin \
             allowlists: DNS-rebinding protection is off (set HttpConfig::allowed_hosts and \
             allowed_origins)"
        );
    }
    config
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn port_wildcards() {
        assert!(matches("localhost:*", "localhost:8080"));
        assert!(matches("localhost:*", "LOCALHOST:1"));
        assert!(!matches("localhost:*", "localhost"));
        assert!(!matches("localhost:*", "localhost:80.evil.com"));
        assert!(!matches("localhost:*", "localhostx:80"));
        assert!(matches("http://[::1]:*", "http://[::1]:3000"));
        assert!(matches("example.com", "example.com"));
    }
}

#[cfg(test)]
mod bind_tests {
    use super::secure_for_bind;
    use crate::HttpConfig;

    /// Loopback binds get the loopback allowlists; a wider bind keeps what it was given (and
    /// logs a warning when that is nothing).
    #[test]
    fn loopback_defaults_only_for_loopback() {
        let lo = secure_for_bind(HttpConfig::default(), ([127, 0, 0, 1], 8000).into());
        assert!(lo.allowed_hosts.is_some() && lo.allowed_origins.is_some());
        let wide = secure_for_bind(HttpConfig::default(), ([10, 0, 0, 1], 8000).into());
        assert!(wide.allowed_hosts.is_none() && wide.allowed_origins.is_none());
        let set = HttpConfig::default().allowed_hosts(["a"]);
        let lo = secure_for_bind(set, ([127, 0, 0, 1], 8000).into());
        assert_eq!(lo.allowed_hosts, Some(vec!["a".to_owned()]));
    }
}
