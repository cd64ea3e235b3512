//! The MCP Apps host of the web inspector (`io.modelcontextprotocol/ui`, SEP-1865): the page
//! script ([`APPS_HOST_JS`], `window.FerromcpApps.mount`) that renders a tool's app and speaks
//! the host side of the apps dialect, and the sandbox proxy page ([`SANDBOX_HTML`]) that the
//! inspector serves from a second loopback origin, with the headers of
//! [`sandbox_headers`].
//!
//! Layout of a rendered app: the inspector page (host origin) frames `sandbox.html` (sandbox
//! origin, `sandbox="allow-scripts allow-same-origin"`), which frames the app's HTML as a
//! `srcdoc` with `sandbox="allow-scripts"` (an opaque origin) and a Content-Security-Policy
//! `<meta>` built from the resource's `_meta.ui.csp`. A `srcdoc` document inherits the policy
//! of the page that frames it, so the header policy of `sandbox.html` is a ceiling: it allows
//! what any app may be granted (inline scripts and styles, http(s) sources), never plugins,
//! and only the host origin may frame it; the per-app `<meta>` policy narrows it to what the
//! app declared (SEP-1865's restrictive default when it declared nothing).
//!
//! The host's limits live in the page script; their defaults are mirrored here
//! (`DEFAULT_APP_*`) so that the documentation and a test keep the two in step.

/// The page script: `window.FerromcpApps.mount(container, opts)` (see the file's header for the
/// options and the handle it returns). Served as `application/javascript` from the host origin.
pub(crate) const APPS_HOST_JS: &str = include_str!("../../assets/apps_host/apps-host.js");

/// The sandbox proxy page, served at [`SANDBOX_PATH`] from the sandbox origin (another port
/// than the inspector page) with [`sandbox_headers`].
pub(crate) const SANDBOX_HTML: &str = include_str!("../../assets/apps_host/sandbox.html");

/// Where the page script looks for the sandbox page on the sandbox origin (its `sandboxPath`
/// option, this by default).
pub(crate) const SANDBOX_PATH: &str = "/sandbox.html";

/// Largest message an app may send the host (its JSON, in bytes); larger ones are refused.
/// Setting: the `maxMessageBytes` option of `mount`.
pub(crate) const DEFAULT_APP_MAX_MESSAGE_BYTES: u64 = 1024 * 1024;

/// How many server requests (`tools/call`, `resources/read`) one app may have the host forward
/// in any minute. Setting: the `maxCallsPerMinute` option of `mount`.
pub(crate) const DEFAULT_APP_MAX_CALLS_PER_MINUTE: u32 = 60;

/// How many forwarded server requests of one app may be in flight at once. Setting: the
/// `maxPendingCalls` option of `mount`.
pub(crate) const DEFAULT_APP_MAX_PENDING_CALLS: u32 = 8;

/// How long `teardown()` waits for the app to answer `ui/resource-teardown` before removing it
/// anyway. Setting: the `teardownTimeoutMs` option of `mount`.
pub(crate) const DEFAULT_APP_TEARDOWN_TIMEOUT_MS: u64 = 3000;

/// Whether `origin` is a plain `http(s)://host[:port]` origin, safe to put in a header.
fn is_plain_origin(origin: &str) -> bool {
    let Some(rest) = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))
    else {
        return false;
    };
    !rest.is_empty()
        && rest
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b':' | b'[' | b']'))
}

/// The Content-Security-Policy header of the sandbox page: the ceiling of every app's policy
/// (see the module docs), framed only by `host_origin`.
pub(crate) fn sandbox_csp(host_origin: &str) -> Option<String> {
    if !is_plain_origin(host_origin) {
        return None;
    }
    Some(format!(
        "default-src 'none'; \
         script-src 'self' 'unsafe-inline' http: https:; \
         style-src 'self' 'unsafe-inline' http: https:; \
         img-src 'self' data: http: https:; \
         font-src 'self' data: http: https:; \
         media-src 'self' data: http: https:; \
         connect-src http: https: ws: wss:; \
         frame-src http: https:; \
         base-uri 'self' http: https:; \
         object-src 'none'; \
         form-action 'none'; \
         frame-ancestors {host_origin}"
    ))
}

/// The response headers of the sandbox page for an inspector page at `host_origin` (e.g.
/// `http://127.0.0.1:6274`): its CSP ([`sandbox_csp`]), `nosniff`, no referrer, no caching.
/// `None` when `host_origin` is not a plain `http(s)://host[:port]`.
pub(crate) fn sandbox_headers(host_origin: &str) -> Option<Vec<(&'static str, String)>> {
    Some(vec![
        ("Content-Type", "text/html; charset=utf-8".to_owned()),
        ("Content-Security-Policy", sandbox_csp(host_origin)?),
        ("X-Content-Type-Options", "nosniff".to_owned()),
        ("Referrer-Policy", "no-referrer".to_owned()),
        ("Cache-Control", "no-store".to_owned()),
    ])
}

/// The host origin a sandbox page request names (`?host=<origin>`, as the page script builds
/// the URL from `location.origin`), when it is one of `allowed` (the origins the inspector
/// page is served from, e.g. `http://127.0.0.1:6274` and `http://localhost:6274`). The
/// inspector's sandbox server answers with [`sandbox_headers`] for it, or 403 on `None`.
pub(crate) fn requested_host_origin<'a>(query: &str, allowed: &[&'a str]) -> Option<&'a str> {
    let value = query
        .split('&')
        .find_map(|pair| pair.strip_prefix("host="))?;
    let origin = percent_decode(value)?;
    allowed.iter().copied().find(|a| *a == origin)
}

/// `%XX`-decodes `value` (and `+` as a space); `None` on a bad escape or non-UTF-8 bytes.
fn percent_decode(value: &str) -> Option<String> {
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'%' => {
                let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            _ => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests;
