//! The HTTP header names of MCP's Streamable HTTP transport, once for every crate.
//!
//! Header names are case-insensitive (RFC 9110 §5.1). The specification spells them in mixed
//! case (quoted in each constant's documentation); these constants are the lower-case
//! canonical form, the form `http::HeaderName::from_static` requires and HTTP/2 sends, so the
//! HTTP crates build their `HeaderName`s from them. Compare names received on the wire
//! case-insensitively.
//!
//! Plain `&str` constants: this crate has no HTTP dependency.
//!
//! ```
//! use ferromcp_types::mcp::headers::{MCP_PARAM_PREFIX, MCP_SESSION_ID};
//!
//! assert!(MCP_SESSION_ID.eq_ignore_ascii_case("Mcp-Session-Id"));
//! assert_eq!(format!("{MCP_PARAM_PREFIX}{}", "Region".to_ascii_lowercase()), "mcp-param-region");
//! ```

/// `MCP-Protocol-Version`: the protocol version of an HTTP request (every revision since
/// 2025-06-18).
pub const MCP_PROTOCOL_VERSION: &str = "mcp-protocol-version";
/// `Mcp-Session-Id`: the HTTP session of the handshake era (2025-03-26 to 2025-11-25).
pub const MCP_SESSION_ID: &str = "mcp-session-id";
/// `Mcp-Method` (2026-07-28): the JSON-RPC method of a request.
pub const MCP_METHOD: &str = "mcp-method";
/// `Mcp-Name` (2026-07-28): the `name` of `tools/call` and `prompts/get`, the `uri` of
/// `resources/read`.
pub const MCP_NAME: &str = "mcp-name";
/// The prefix of the `Mcp-Param-{Name}` headers (2026-07-28), which mirror the tool
/// arguments annotated with `x-mcp-header`. Lower case like the other constants: a header
/// name built from it is `mcp-param-` followed by the annotation's name (which the HTTP
/// crates lower-case too), and a received name matches it case-insensitively.
pub const MCP_PARAM_PREFIX: &str = "mcp-param-";
/// `Last-Event-ID`: the SSE event a handshake-era client resumes after.
pub const LAST_EVENT_ID: &str = "last-event-id";

#[cfg(test)]
mod tests {
    use super::*;

    /// Every name is lower case, as `http::HeaderName::from_static` requires.
    #[test]
    fn canonical_lower_case() {
        for name in [
            MCP_PROTOCOL_VERSION,
            MCP_SESSION_ID,
            MCP_METHOD,
            MCP_NAME,
            MCP_PARAM_PREFIX,
            LAST_EVENT_ID,
        ] {
            assert_eq!(name, name.to_ascii_lowercase());
        }
    }
}
