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

/// The `Host` values a service accepts when its config names none and its port is unknown
/// (a mounted [`McpHttpService`](crate::McpHttpService)): the loopback names, on any port.
const LOOPBACK_HOSTS: [&str; 6] = [
    "localhost:*",
    "127.0.0.1:*",
    "[::1]:*",
    "localhost",
    "127.0.0.1",
    "[::1]",
];

/// The `Origin` values accepted when the config names none and the port is unknown.
const LOOPBACK_ORIGINS: [&str; 6] = [
    "http://localhost:*",
    "http://127.0.0.1:*",
    "http://[::1]:*",
    "http://localhost",
    "http://127.0.0.1",
    "http://[::1]",
];

/// `value` matches one of `list`, or of `default` when the list is unset.
fn allowed(list: Option<&Vec<String>>, default: &[&str], value: &str) -> bool {
    match list {
        Some(list) => list.iter().any(|p| matches(p, value)),
        None => default.iter().any(|p| matches(p, value)),
    }
}

/// Checks `Host` (a missing one fails) and `Origin` (a missing one passes) against the
/// allowlists; an unset list means the loopback names on any port, unless
/// [`HttpConfig::host_checks`] is off.
pub(crate) fn check(
    config: &HttpConfig,
    headers: &HeaderMap,
    uri_host: Option<&str>,
) -> Result<(), Rejection> {
    let hosts = config.allowed_hosts.as_ref();
    if hosts.is_some() || config.host_checks {
        // HTTP/1.1 carries `Host`; HTTP/2 the URI authority.
        let host = headers.get(HOST).and_then(|v| v.to_str().ok()).or(uri_host);
        if !host.is_some_and(|h| allowed(hosts, &LOOPBACK_HOSTS, h)) {
            return Err(Rejection::Host);
        }
    }
    let origins = config.allowed_origins.as_ref();
    if (origins.is_some() || config.host_checks)
        && let Some(origin) = headers.get(ORIGIN)
    {
        let ok = origin
            .to_str()
            .is_ok_and(|o| allowed(origins, &LOOPBACK_ORIGINS, o));
        if !ok {
            return Err(Rejection::Origin);
        }
    }
    Ok(())
}

/// The loopback `Host` values on `port` (and without a port when it is 80).
pub(crate) fn loopback_hosts(port: u16) -> Vec<String> {
    let mut out: Vec<String> = ["localhost", "127.0.0.1", "[::1]"]
        .iter()
        .map(|h| format!("{h}:{port}"))
        .collect();
    if port == 80 {
        out.extend(["localhost", "127.0.0.1", "[::1]"].map(str::to_owned));
    }
    out
}

/// The loopback `Origin` values on `port` (and without a port when it is 80).
pub(crate) fn loopback_origins(port: u16) -> Vec<String> {
    loopback_hosts(port)
        .into_iter()
        .map(|h| format!("http://{h}"))
        .collect()
}

/// The config of a server bound to `addr`: unset allowlists become the loopback names on
/// the bound port (whatever the address: a server on a wider address that names no hosts
/// answers only loopback names, and says so in the log).
pub(crate) fn secure_for_bind(mut config: HttpConfig, addr: SocketAddr) -> HttpConfig {
    if !config.host_checks {
        return config;
    }
    let port = addr.port();
    if !addr.ip().is_loopback()
        && (config.allowed_hosts.is_none() || config.allowed_origins.is_none())
    {
        tracing::warn!(
            %addr,
            "serving MCP over HTTP on a non-loopback address without Host and Origin \
             allowlists: only loopback names (localhost:{port}, 127.0.0.1:{port}, \
             [::1]:{port}) are accepted; name the hosts and origins clients use \
             (HttpConfig::allowed_hosts and allowed_origins), or turn the checks off with \
             HttpConfig::disable_host_checks behind a proxy that makes them"
        );
    }
    if config.allowed_hosts.is_none() {
        config.allowed_hosts = Some(loopback_hosts(port));
    }
    if config.allowed_origins.is_none() {
        config.allowed_origins = Some(loopback_origins(port));
    }
    config
}

/// Logs that DNS-rebinding protection is off, once per service made with it off.
pub(crate) fn warn_if_off(config: &HttpConfig) {
    if !config.host_checks && (config.allowed_hosts.is_none() || config.allowed_origins.is_none()) {
        tracing::warn!(
            "DNS-rebinding protection is off (HttpConfig::disable_host_checks): any Host and \
             Origin is accepted; only do this behind a proxy that checks them"
        );
    }
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

    /// Every bind gets the loopback allowlists on its port where the config names none; a
    /// named list is kept; with the checks off nothing is filled in.
    #[test]
    fn loopback_defaults_name_the_port() {
        let lo = secure_for_bind(HttpConfig::default(), ([127, 0, 0, 1], 8000).into());
        let hosts = lo.allowed_hosts.unwrap_or_default();
        assert!(hosts.contains(&"localhost:8000".to_owned()), "{hosts:?}");
        assert!(!hosts.iter().any(|h| h.ends_with(":*")), "{hosts:?}");
        let origins = lo.allowed_origins.unwrap_or_default();
        assert!(
            origins.contains(&"http://[::1]:8000".to_owned()),
            "{origins:?}"
        );
        let wide = secure_for_bind(HttpConfig::default(), ([10, 0, 0, 1], 8000).into());
        assert!(wide.allowed_hosts.is_some() && wide.allowed_origins.is_some());
        let set = HttpConfig::default().allowed_hosts(["a"]);
        let lo = secure_for_bind(set, ([127, 0, 0, 1], 8000).into());
        assert_eq!(lo.allowed_hosts, Some(vec!["a".to_owned()]));
        let off = HttpConfig::default().disable_host_checks();
        let off = secure_for_bind(off, ([127, 0, 0, 1], 8000).into());
        assert!(off.allowed_hosts.is_none() && off.allowed_origins.is_none());
        let port80 = secure_for_bind(HttpConfig::default(), ([127, 0, 0, 1], 80).into());
        assert!(
            port80
                .allowed_hosts
                .unwrap_or_default()
                .contains(&"localhost".to_owned())
        );
    }
}
