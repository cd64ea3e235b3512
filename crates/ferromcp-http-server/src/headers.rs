//! Header names, media-type checks and the `=?base64?…?=` sentinel of MCP 2026-07-28.

use http::HeaderMap;
use http::header::{ACCEPT, CONTENT_TYPE, HeaderName};

use ferromcp_types::mcp::headers as names;

/// `MCP-Protocol-Version` ([`ferromcp_types::mcp::headers::MCP_PROTOCOL_VERSION`]).
pub const MCP_PROTOCOL_VERSION: HeaderName = HeaderName::from_static(names::MCP_PROTOCOL_VERSION);
/// `Mcp-Session-Id` (handshake era only; [`ferromcp_types::mcp::headers::MCP_SESSION_ID`]).
pub const MCP_SESSION_ID: HeaderName = HeaderName::from_static(names::MCP_SESSION_ID);
/// `Mcp-Method` (2026-07-28; [`ferromcp_types::mcp::headers::MCP_METHOD`]).
pub const MCP_METHOD: HeaderName = HeaderName::from_static(names::MCP_METHOD);
/// `Mcp-Name` (2026-07-28): the `name` of `tools/call` and `prompts/get`, the `uri` of
/// `resources/read` ([`ferromcp_types::mcp::headers::MCP_NAME`]).
pub const MCP_NAME: HeaderName = HeaderName::from_static(names::MCP_NAME);
/// The prefix of the `Mcp-Param-{Name}` headers (2026-07-28), lower case: the re-export of
/// [`ferromcp_types::mcp::headers::MCP_PARAM_PREFIX`].
pub use ferromcp_types::mcp::headers::MCP_PARAM_PREFIX;
/// `Last-Event-ID` (handshake-era resumption; [`ferromcp_types::mcp::headers::LAST_EVENT_ID`]).
pub const LAST_EVENT_ID: HeaderName = HeaderName::from_static(names::LAST_EVENT_ID);
/// `X-Accel-Buffering` (sent as `no` on SSE responses).
pub const X_ACCEL_BUFFERING: HeaderName = HeaderName::from_static("x-accel-buffering");

/// `application/json`.
pub(crate) const JSON: &str = "application/json";
/// `text/event-stream`.
pub(crate) const EVENT_STREAM: &str = "text/event-stream";

/// The single value of a header, as text (trimmed); `Err(())` when it appears more than once
/// or is not visible ASCII. Borrowed: the hot path reads it without an allocation.
pub(crate) fn single<'h>(headers: &'h HeaderMap, name: &HeaderName) -> Result<Option<&'h str>, ()> {
    let mut values = headers.get_all(name).iter();
    let Some(first) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err(());
    }
    first.to_str().map(|s| Some(s.trim())).map_err(|_| ())
}

/// The first value of a header as text (trimmed), if it is text.
pub(crate) fn first<'h>(headers: &'h HeaderMap, name: &HeaderName) -> Option<&'h str> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
}

/// Whether the request's `Content-Type` is `application/json` (parameters such as
/// `charset` allowed).
pub(crate) fn is_json_content(headers: &HeaderMap) -> bool {
    let Some(value) = headers.get(CONTENT_TYPE) else {
        return false;
    };
    // The value nearly every client sends, answered without splitting.
    if value.as_bytes().eq_ignore_ascii_case(JSON.as_bytes()) {
        return true;
    }
    value
        .to_str()
        .ok()
        .and_then(|v| v.split(';').next())
        .is_some_and(|t| t.trim().eq_ignore_ascii_case(JSON))
}

/// The `Accept` value the MCP specification tells clients to send, as most do.
const COMMON_ACCEPT: &[u8] = b"application/json, text/event-stream";

/// Whether the `Accept` header admits `wanted` (`type/subtype`); `*/*` and `type/*` count,
/// a `q=0` entry does not.
pub(crate) fn accepts(headers: &HeaderMap, wanted: &str) -> bool {
    accepts_each(headers, [wanted])[0]
}

/// [`accepts`] for several media types in one pass over the `Accept` header (the POST
/// checks ask for `application/json` and `text/event-stream` together).
pub(crate) fn accepts_each<const N: usize>(headers: &HeaderMap, wanted: [&str; N]) -> [bool; N] {
    let mut found = [false; N];
    // Byte-wise splitting: `Accept` is visible ASCII once `to_str` has passed, and the
    // separators and whitespace are single bytes.
    for value in headers.get_all(ACCEPT).iter() {
        if value.as_bytes().eq_ignore_ascii_case(COMMON_ACCEPT) {
            // The common value, without splitting: two ranges, no parameters.
            for (hit, wanted) in found.iter_mut().zip(wanted) {
                *hit = *hit
                    || media_range_admits(b"application/json", wanted.as_bytes())
                    || media_range_admits(b"text/event-stream", wanted.as_bytes());
            }
            continue;
        }
        let Ok(value) = value.to_str() else { continue };
        for entry in value.as_bytes().split(|&b| b == b',') {
            let mut parts = entry.split(|&b| b == b';');
            let range = parts.next().unwrap_or_default().trim_ascii();
            let refused = parts.any(|p| {
                p.trim_ascii().strip_prefix(b"q=").is_some_and(|q| {
                    std::str::from_utf8(q)
                        .ok()
                        .and_then(|q| q.trim().parse::<f32>().ok())
                        .is_some_and(|q| q <= 0.0)
                })
            });
            if refused {
                continue;
            }
            for (hit, wanted) in found.iter_mut().zip(wanted) {
                *hit = *hit || media_range_admits(range, wanted.as_bytes());
            }
        }
        if found.iter().all(|f| *f) {
            break;
        }
    }
    found
}

/// Whether one media range (`type/subtype`, `type/*` or `*/*`) admits `wanted`.
fn media_range_admits(range: &[u8], wanted: &[u8]) -> bool {
    if range.eq_ignore_ascii_case(wanted) || range == b"*/*" {
        return true;
    }
    let wtype = match wanted.iter().position(|&b| b == b'/') {
        Some(i) => &wanted[..i],
        None => wanted,
    };
    range
        .strip_suffix(b"/*")
        .is_some_and(|t| t.eq_ignore_ascii_case(wtype))
}

/// Decodes a header value that may use the `=?base64?{Base64}?=` sentinel (MCP 2026-07-28
/// "Value Encoding"); `None` when the sentinel holds invalid Base64 or invalid UTF-8.
pub fn decode_header_value(value: &str) -> Option<String> {
    match value
        .strip_prefix("=?base64?")
        .and_then(|v| v.strip_suffix("?="))
    {
        Some(b64) => String::from_utf8(base64_decode(b64)?).ok(),
        None => Some(value.to_owned()),
    }
}

/// Standard Base64 (RFC 4648 §4), strictly: the length is a multiple of 4 and `=` appears
/// only as the final one or two characters (SEP-2243's table rejects unpadded values).
fn base64_decode(text: &str) -> Option<Vec<u8>> {
    fn value(c: u8) -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    }
    let bytes = text.trim_end_matches('=').as_bytes();
    if !text.len().is_multiple_of(4) || text.len() - bytes.len() > 2 {
        return None;
    }
    let mut out = Vec::with_capacity(bytes.len() * 3 / 4);
    for chunk in bytes.chunks(4) {
        let mut acc = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            acc |= value(c)? << (18 - 6 * i);
        }
        let [_, a, b, c] = acc.to_be_bytes();
        out.push(a);
        if chunk.len() > 2 {
            out.push(b);
        }
        if chunk.len() > 3 {
            out.push(c);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentinel_round_trips_the_spec_examples() {
        assert_eq!(
            decode_header_value("=?base64?SGVsbG8sIOS4lueVjA==?=").as_deref(),
            Some("Hello, 世界")
        );
        assert_eq!(
            decode_header_value("=?base64?IHBhZGRlZCA=?=").as_deref(),
            Some(" padded ")
        );
        assert_eq!(
            decode_header_value("=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=").as_deref(),
            Some("=?base64?literal?=")
        );
        assert_eq!(decode_header_value("us-west1").as_deref(), Some("us-west1"));
        assert_eq!(decode_header_value("=?base64?!!?="), None);
        // Unpadded and misplaced padding are rejected (SEP-2243's test table).
        assert_eq!(decode_header_value("=?base64?SGVsbG8?="), None);
        assert_eq!(decode_header_value("=?base64?SGVs!!!bG8=?="), None);
        assert_eq!(decode_header_value("=?base64?SG=sbG8=?="), None);
        assert_eq!(
            decode_header_value("=?base64?SGVsbG8=?=").as_deref(),
            Some("Hello")
        );
        assert_eq!(decode_header_value("=?base64??=").as_deref(), Some(""));
    }

    /// MCP 2025-11-25 "Streamable HTTP › Sending Messages to the Server": the Accept rules
    /// the POST and GET checks apply.
    #[test]
    fn accept_rules() {
        let mut h = HeaderMap::new();
        h.insert(
            ACCEPT,
            "application/json, text/event-stream"
                .parse()
                .unwrap_or_else(|_| unreachable!()),
        );
        assert!(accepts(&h, JSON) && accepts(&h, EVENT_STREAM));
        h.insert(
            ACCEPT,
            "text/*;q=0.5".parse().unwrap_or_else(|_| unreachable!()),
        );
        assert!(accepts(&h, EVENT_STREAM) && !accepts(&h, JSON));
        h.insert(ACCEPT, "*/*;q=0".parse().unwrap_or_else(|_| unreachable!()));
        assert!(!accepts(&h, JSON));
        // The common value (its fast path) and the same ranges spelled otherwise agree.
        for value in [
            "application/json, text/event-stream",
            "Application/JSON, Text/Event-Stream",
            "application/json,text/event-stream",
            "text/event-stream ; charset=utf-8 , application/json",
        ] {
            h.insert(ACCEPT, value.parse().unwrap_or_else(|_| unreachable!()));
            assert_eq!(
                accepts_each(&h, [JSON, EVENT_STREAM, "text/html"]),
                [true, true, false],
                "{value}"
            );
        }
        // Several Accept headers count together; one refusal does not hide the other's range.
        h.insert(
            ACCEPT,
            "application/json"
                .parse()
                .unwrap_or_else(|_| unreachable!()),
        );
        h.append(
            ACCEPT,
            "text/event-stream, application/json;q=0"
                .parse()
                .unwrap_or_else(|_| unreachable!()),
        );
        assert_eq!(accepts_each(&h, [JSON, EVENT_STREAM]), [true, true]);
        h.remove(ACCEPT);
        assert_eq!(accepts_each(&h, [JSON, EVENT_STREAM]), [false, false]);
    }
}
