//! What protects the web inspector (see docs/SECURITY.md): a random token on every request,
//! compared in constant time; the `Host` header checked against the bound loopback address
//! (DNS rebinding); the `Origin` header, when present, checked against the page's own origin
//! (cross-site requests); a loopback listen address unless the operator says otherwise; and
//! the limits of [`Limits`].
//!
//! Starting a stdio command from the page is the power CVE-2025-49596 handed to any web page
//! through the official Inspector's proxy: every route, the event stream included, passes
//! [`Guard::check`] before anything else.

use std::net::SocketAddr;

/// The default address the inspector listens on.
pub(crate) const DEFAULT_LISTEN: &str = "127.0.0.1:6280";
/// The default bound on one API request's body (413 beyond).
pub(crate) const DEFAULT_MAX_BODY: usize = 4 * 1024 * 1024;
/// The default bound on servers connected at once (the page's connect refused beyond).
pub(crate) const DEFAULT_MAX_SERVERS: usize = 8;
/// The default bound on server→client requests (elicitation, sampling) waiting for the
/// user at once, over all servers; beyond, a new one is refused with an error to the server.
pub(crate) const DEFAULT_MAX_PENDING: usize = 16;
/// The default bound on one server's waiting requests.
pub(crate) const DEFAULT_MAX_PENDING_PER_SERVER: usize = 8;
/// The default number of events kept for replay to a new page (oldest dropped first).
pub(crate) const DEFAULT_EVENT_BUFFER: usize = 2000;
/// The default bound on one logged message's JSON text (longer texts are cut).
pub(crate) const DEFAULT_MAX_EVENT_BYTES: usize = 256 * 1024;
/// The default bound on event streams open at once (a new one beyond: 429).
pub(crate) const DEFAULT_MAX_EVENT_STREAMS: usize = 8;
/// The default bound on the page's requests to servers (`/api/request`) in flight at once,
/// over all servers; beyond, 429.
pub(crate) const DEFAULT_MAX_REQUESTS: usize = 64;
/// The default bound on the page's requests in flight to one server; beyond, 429.
pub(crate) const DEFAULT_MAX_REQUESTS_PER_SERVER: usize = 16;
/// The default time a server→client request waits for the user's answer.
pub(crate) const DEFAULT_ANSWER_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(600);

/// The inspector's limits: each one a `DEFAULT_` const and a command-line flag.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub(crate) struct Limits {
    /// Bound on one API request's body.
    pub(crate) max_body: usize,
    /// Bound on connected servers.
    pub(crate) max_servers: usize,
    /// Bound on waiting server→client requests, in total.
    pub(crate) max_pending: usize,
    /// Bound on one server's waiting server→client requests.
    pub(crate) max_pending_per_server: usize,
    /// Events kept for replay.
    pub(crate) event_buffer: usize,
    /// Bound on one event's message text.
    pub(crate) max_event_bytes: usize,
    /// Bound on event streams open at once.
    pub(crate) max_event_streams: usize,
    /// Bound on the page's requests in flight, in total.
    pub(crate) max_requests: usize,
    /// Bound on the page's requests in flight to one server.
    pub(crate) max_requests_per_server: usize,
    /// How long a server→client request waits for the user.
    pub(crate) answer_timeout: std::time::Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_body: DEFAULT_MAX_BODY,
            max_servers: DEFAULT_MAX_SERVERS,
            max_pending: DEFAULT_MAX_PENDING,
            max_pending_per_server: DEFAULT_MAX_PENDING_PER_SERVER,
            event_buffer: DEFAULT_EVENT_BUFFER,
            max_event_bytes: DEFAULT_MAX_EVENT_BYTES,
            max_event_streams: DEFAULT_MAX_EVENT_STREAMS,
            max_requests: DEFAULT_MAX_REQUESTS,
            max_requests_per_server: DEFAULT_MAX_REQUESTS_PER_SERVER,
            answer_timeout: DEFAULT_ANSWER_TIMEOUT,
        }
    }
}

/// A fresh random token: 32 bytes from the OS, hex-encoded.
pub(crate) fn new_token() -> Result<String, String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| format!("no randomness for the token: {e}"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Compares `a` and `b` in time that depends on their lengths only, not on where they
/// differ.
pub(crate) fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    let mut diff = u8::from(a.len() != b.len());
    for (i, x) in a.iter().enumerate() {
        let y = b.get(i).copied().unwrap_or(0);
        diff |= x ^ y;
    }
    diff == 0
}

/// Whether `addr` is a loopback address (127.0.0.0/8, ::1).
pub(crate) fn is_loopback(addr: &SocketAddr) -> bool {
    addr.ip().is_loopback()
}

/// Why a request was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// No token, or a wrong one: 401.
    Token,
    /// A `Host` that is not the bound address: 421 (DNS rebinding).
    Host,
    /// A cross-site `Origin`: 403.
    Origin,
}

impl Refusal {
    /// The HTTP status.
    pub(crate) fn status(self) -> u16 {
        match self {
            Self::Token => 401,
            Self::Host => 421,
            Self::Origin => 403,
        }
    }

    /// The response body.
    pub(crate) fn message(self) -> &'static str {
        match self {
            Self::Token => "missing or wrong inspector token",
            Self::Host => "Host is not this inspector's address (DNS rebinding?)",
            Self::Origin => "cross-site Origin refused",
        }
    }
}

/// The checks every request passes.
#[derive(Debug, Clone)]
pub(crate) struct Guard {
    token: String,
    /// The `Host` values accepted: `127.0.0.1:PORT`, `localhost:PORT` ([::1]:PORT for IPv6),
    /// or the bound address for a non-loopback bind; and the `--allow-host` names.
    hosts: Vec<String>,
    /// The origins accepted: `http://` + each host.
    origins: Vec<String>,
}

impl Guard {
    /// The guard of a listener bound to `addr`, with `token`; `allow_hosts` (`--allow-host`):
    /// more names it is reached by, `NAME` (on the listener's port) or `NAME:PORT` (as is,
    /// e.g. behind a proxy).
    pub(crate) fn new(addr: SocketAddr, token: String, allow_hosts: &[String]) -> Self {
        let port = addr.port();
        let mut hosts = vec![addr.to_string()];
        if addr.ip().is_loopback() {
            hosts.push(format!("localhost:{port}"));
        }
        for h in allow_hosts {
            let h = if has_port(h) {
                h.clone()
            } else {
                format!("{h}:{port}")
            };
            if !hosts.iter().any(|x| x.eq_ignore_ascii_case(&h)) {
                hosts.push(h);
            }
        }
        let origins = hosts.iter().map(|h| format!("http://{h}")).collect();
        Self {
            token,
            hosts,
            origins,
        }
    }

    /// The origin the page is served from (its first accepted origin).
    pub(crate) fn origin(&self) -> &str {
        self.origins.first().map_or("", String::as_str)
    }

    /// Every origin accepted (the page's first).
    pub(crate) fn origins(&self) -> &[String] {
        &self.origins
    }

    /// The token.
    pub(crate) fn token(&self) -> &str {
        &self.token
    }

    /// Whether `host` (the `Host` header) names this listener.
    pub(crate) fn host_ok(&self, host: Option<&str>) -> bool {
        host.is_some_and(|h| self.hosts.iter().any(|a| a.eq_ignore_ascii_case(h)))
    }

    /// Checks a request: its `Host`, its `Origin` when present, and the token from the
    /// `X-Inspector-Token` header or the `token` query parameter. Host and Origin come
    /// first, so a rebinding page learns nothing about the token.
    pub(crate) fn check(
        &self,
        host: Option<&str>,
        origin: Option<&str>,
        header_token: Option<&str>,
        query: Option<&str>,
    ) -> Result<(), Refusal> {
        if !self.host_ok(host) {
            return Err(Refusal::Host);
        }
        if let Some(o) = origin
            && !self.origins.iter().any(|a| a.eq_ignore_ascii_case(o))
        {
            return Err(Refusal::Origin);
        }
        let given = header_token.or_else(|| query.and_then(|q| query_param(q, "token")));
        match given {
            Some(t) if constant_time_eq(t.as_bytes(), self.token.as_bytes()) => Ok(()),
            _ => Err(Refusal::Token),
        }
    }
}

/// Whether a `--allow-host` value ends in `:PORT` (`[v6]:PORT` for an IPv6 literal).
fn has_port(host: &str) -> bool {
    let tail = match host.rfind(']') {
        Some(i) => &host[i + 1..],
        None => host,
    };
    tail.rsplit_once(':')
        .is_some_and(|(_, p)| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

/// Checks one `--allow-host` value: `NAME` or `NAME:PORT`, a DNS name, an IPv4 address or a
/// bracketed IPv6 address; no scheme, path or wildcard.
pub(crate) fn valid_allow_host(host: &str) -> bool {
    let name = if has_port(host) {
        host.rsplit_once(':').map_or(host, |(n, _)| n)
    } else {
        host
    };
    if let Some(v6) = name.strip_prefix('[').and_then(|n| n.strip_suffix(']')) {
        return v6.parse::<std::net::Ipv6Addr>().is_ok();
    }
    !name.is_empty()
        && name.len() <= 253
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-'))
}

/// The raw value of `name` in a query string (tokens are hex: no decoding needed).
pub(crate) fn query_param<'a>(query: &'a str, name: &str) -> Option<&'a str> {
    query.split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        (k == name).then_some(v)
    })
}

#[cfg(test)]
mod tests {
    use super::{Guard, Refusal, constant_time_eq, new_token, query_param, valid_allow_host};

    /// S91: `--allow-host` values: NAME or NAME:PORT (names, IPv4, bracketed IPv6); NAME is
    /// accepted on the listener's port, NAME:PORT as given.
    #[test]
    fn s91_allow_host_values() {
        for ok in [
            "host.test",
            "host.test:8443",
            "10.0.0.5",
            "[::1]",
            "[fe80::1]:80",
        ] {
            assert!(valid_allow_host(ok), "{ok}");
        }
        for bad in [
            "", "http://h", "h/x", "*.h", "[::1", "[zz]:80", "h:p", "a b",
        ] {
            assert!(!valid_allow_host(bad), "{bad}");
        }
        let addr = "0.0.0.0:6280"
            .parse()
            .unwrap_or_else(|e| unreachable!("{e}"));
        let hosts = ["box.test".to_owned(), "[fe80::1]:81".to_owned()];
        let g = Guard::new(addr, "t".into(), &hosts);
        for host in [
            "0.0.0.0:6280",
            "box.test:6280",
            "BOX.test:6280",
            "[fe80::1]:81",
        ] {
            assert!(g.host_ok(Some(host)), "{host}");
        }
        for host in ["box.test", "box.test:1", "[fe80::1]:6280", "localhost:6280"] {
            assert!(!g.host_ok(Some(host)), "{host}");
        }
        let origin = Some("http://box.test:6280");
        assert_eq!(
            g.check(Some("box.test:6280"), origin, Some("t"), None),
            Ok(())
        );
    }

    /// S73: the token is compared whole, whatever its length; tokens are fresh and long.
    #[test]
    fn s73_token_comparison_and_generation() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"ab"));
        assert!(!constant_time_eq(b"ab", b"abc"));
        assert!(!constant_time_eq(b"", b"a"));
        let (a, b) = (new_token(), new_token());
        assert!(matches!((&a, &b), (Ok(x), Ok(y)) if x != y && x.len() == 64));
        assert_eq!(query_param("a=1&token=xyz", "token"), Some("xyz"));
        assert_eq!(query_param("tokens=1", "token"), None);
    }

    /// S74, S75: Host first (421), then Origin (403), then the token (401).
    #[test]
    fn s74_s75_guard_order_and_values() {
        let addr = "127.0.0.1:6280"
            .parse()
            .unwrap_or_else(|e| unreachable!("{e}"));
        let g = Guard::new(addr, "t0k".into(), &[]);
        let host = Some("127.0.0.1:6280");
        assert_eq!(g.check(host, None, Some("t0k"), None), Ok(()));
        assert_eq!(
            g.check(Some("localhost:6280"), None, None, Some("token=t0k")),
            Ok(())
        );
        assert_eq!(
            g.check(Some("evil.example:6280"), None, Some("t0k"), None),
            Err(Refusal::Host)
        );
        assert_eq!(g.check(None, None, Some("t0k"), None), Err(Refusal::Host));
        assert_eq!(
            g.check(Some("127.0.0.1:6281"), None, Some("t0k"), None),
            Err(Refusal::Host)
        );
        assert_eq!(
            g.check(host, Some("http://evil.example"), Some("t0k"), None),
            Err(Refusal::Origin)
        );
        assert_eq!(
            g.check(host, Some("null"), Some("t0k"), None),
            Err(Refusal::Origin)
        );
        assert_eq!(
            g.check(host, Some("http://127.0.0.1:6280"), Some("t0k"), None),
            Ok(())
        );
        assert_eq!(g.check(host, None, Some("t0K"), None), Err(Refusal::Token));
        assert_eq!(
            g.check(host, None, None, Some("token=")),
            Err(Refusal::Token)
        );
    }
}
