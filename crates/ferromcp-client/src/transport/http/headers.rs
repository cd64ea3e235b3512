//! Request metadata headers (MCP 2026-07-28 "Streamable HTTP › Request Metadata"): the
//! `=?base64?…?=` sentinel, `Mcp-Method` / `Mcp-Name`, and the `Mcp-Param-{Name}` headers of
//! tool arguments annotated with `x-mcp-header`.

use std::collections::HashMap;

use ferromcp_types::mcp::headers as names;
use ferromcp_types::mcp::{JsonObject, META_PROTOCOL_VERSION};
use http::header::HeaderName;
use http::{HeaderMap, HeaderValue};
use serde_json::Value;

/// `MCP-Protocol-Version` ([`ferromcp_types::mcp::headers::MCP_PROTOCOL_VERSION`]).
pub const MCP_PROTOCOL_VERSION: HeaderName = HeaderName::from_static(names::MCP_PROTOCOL_VERSION);
/// `Mcp-Session-Id` (handshake era; [`ferromcp_types::mcp::headers::MCP_SESSION_ID`]).
pub const MCP_SESSION_ID: HeaderName = HeaderName::from_static(names::MCP_SESSION_ID);
/// `Mcp-Method` (2026-07-28; [`ferromcp_types::mcp::headers::MCP_METHOD`]).
pub const MCP_METHOD: HeaderName = HeaderName::from_static(names::MCP_METHOD);
/// `Mcp-Name` (2026-07-28; [`ferromcp_types::mcp::headers::MCP_NAME`]).
pub const MCP_NAME: HeaderName = HeaderName::from_static(names::MCP_NAME);
/// `Last-Event-ID` (handshake-era resumption; [`ferromcp_types::mcp::headers::LAST_EVENT_ID`]).
pub const LAST_EVENT_ID: HeaderName = HeaderName::from_static(names::LAST_EVENT_ID);
/// The prefix of the `Mcp-Param-{Name}` headers (2026-07-28), lower case: the re-export of
/// [`ferromcp_types::mcp::headers::MCP_PARAM_PREFIX`].
pub use ferromcp_types::mcp::headers::MCP_PARAM_PREFIX;

/// The most `properties` steps followed when looking for annotations.
const MAX_DEPTH: usize = 32;
/// The largest integer a header may carry (JavaScript's safe range).
const MAX_SAFE_INTEGER: i64 = (1 << 53) - 1;

/// Encodes a header value, using the Base64 sentinel `=?base64?{b64}?=` when the value is not
/// plain visible ASCII (non-ASCII, control characters, leading or trailing whitespace) or
/// looks like the sentinel itself (2026-07-28 "Value Encoding").
///
/// ```
/// use ferromcp_client::transport::http::encode_header_value;
///
/// assert_eq!(encode_header_value("us-west1"), "us-west1");
/// assert_eq!(encode_header_value("Hello, 世界"), "=?base64?SGVsbG8sIOS4lueVjA==?=");
/// assert_eq!(encode_header_value(" padded "), "=?base64?IHBhZGRlZCA=?=");
/// assert_eq!(encode_header_value("=?base64?literal?="), "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=");
/// ```
pub fn encode_header_value(value: &str) -> String {
    let plain = value
        .bytes()
        .all(|b| b == b' ' || b == b'\t' || (0x21..=0x7e).contains(&b));
    let trimmed = value.trim_matches(|c| c == ' ' || c == '\t').len() == value.len();
    let sentinel = value.starts_with("=?base64?") && value.ends_with("?=");
    if plain && trimmed && !sentinel {
        value.to_owned()
    } else {
        format!("=?base64?{}?=", base64(value.as_bytes()))
    }
}

/// Standard Base64 with padding (RFC 4648 §4).
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// One `x-mcp-header` annotation: the header's name part and the property path to its value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ParamHeader {
    pub(crate) name: String,
    pub(crate) path: Vec<String>,
}

/// The `x-mcp-header` annotations of a tool's `inputSchema`, or why the tool definition is
/// invalid (2026-07-28 "Custom Headers from Tool Parameters › Schema Extension"): a name that
/// is empty, not an RFC 9110 token, or not unique (case-insensitively); an annotation on a
/// non-primitive or `number` parameter; or one that is not reachable through `properties`
/// keys alone.
pub(crate) fn tool_param_headers(input_schema: &JsonObject) -> Result<Vec<ParamHeader>, String> {
    let mut out = Vec::new();
    walk(input_schema, &mut Vec::new(), true, &mut out)?;
    let mut seen = std::collections::HashSet::new();
    for h in &out {
        if !seen.insert(h.name.to_ascii_lowercase()) {
            return Err(format!("x-mcp-header {:?} is not unique", h.name));
        }
    }
    Ok(out)
}

fn is_token(s: &str) -> bool {
    !s.is_empty()
        && s.bytes().all(|b| {
            b.is_ascii_alphanumeric()
                || matches!(
                    b,
                    b'!' | b'#'
                        | b'$'
                        | b'%'
                        | b'&'
                        | b'\''
                        | b'*'
                        | b'+'
                        | b'-'
                        | b'.'
                        | b'^'
                        | b'_'
                        | b'`'
                        | b'|'
                        | b'~'
                )
        })
}

/// Walks a schema. `reachable` is false under any keyword other than a `properties` chain:
/// an annotation found there makes the tool invalid.
fn walk(
    schema: &JsonObject,
    path: &mut Vec<String>,
    reachable: bool,
    out: &mut Vec<ParamHeader>,
) -> Result<(), String> {
    if path.len() > MAX_DEPTH {
        return Ok(());
    }
    if let Some(name) = schema.get("x-mcp-header") {
        if !reachable || path.is_empty() {
            return Err("x-mcp-header on a parameter not reachable through properties".into());
        }
        let Value::String(name) = name else {
            return Err("x-mcp-header is not a string".into());
        };
        if !is_token(name) {
            return Err(format!("x-mcp-header {name:?} is not a header token"));
        }
        let primitive = match schema.get("type") {
            Some(Value::String(t)) => matches!(t.as_str(), "string" | "integer" | "boolean"),
            _ => false,
        };
        if !primitive {
            return Err(format!(
                "x-mcp-header {name:?} is on a parameter whose type is not string, integer or boolean"
            ));
        }
        out.push(ParamHeader {
            name: name.clone(),
            path: path.clone(),
        });
    }
    for (key, sub) in schema {
        match (key.as_str(), sub) {
            ("properties", Value::Object(props)) => {
                for (prop, sub) in props {
                    if let Value::Object(sub) = sub {
                        path.push(prop.clone());
                        let r = walk(sub, path, reachable, out);
                        path.pop();
                        r?;
                    }
                }
            }
            (_, Value::Object(sub)) => walk_unreachable(sub, path, out)?,
            (_, Value::Array(items)) => {
                for item in items {
                    if let Value::Object(sub) = item {
                        walk_unreachable(sub, path, out)?;
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}

fn walk_unreachable(
    sub: &JsonObject,
    path: &mut Vec<String>,
    out: &mut Vec<ParamHeader>,
) -> Result<(), String> {
    // A nested keyword ("items", "oneOf", "$defs", ...) adds a level without a property name.
    path.push(String::new());
    let r = walk(sub, path, false, out);
    path.pop();
    r
}

/// The annotations of the tools seen in `tools/list` results, by tool name.
#[derive(Debug, Default)]
pub(crate) struct ToolHeaders {
    by_tool: HashMap<String, Vec<ParamHeader>>,
}

impl ToolHeaders {
    /// Records the annotations of every valid tool in a `tools/list` result and removes the
    /// invalid ones from it (with a warning). Returns whether the result changed.
    pub(crate) fn observe_list(&mut self, result: &mut Value) -> bool {
        let Some(Value::Array(tools)) = result.get_mut("tools") else {
            return false;
        };
        let before = tools.len();
        tools.retain(|tool| {
            let name = tool.get("name").and_then(Value::as_str).unwrap_or_default();
            let schema = tool.get("inputSchema").and_then(Value::as_object);
            let headers = match schema.map(tool_param_headers) {
                None => Ok(Vec::new()),
                Some(r) => r,
            };
            match headers {
                Ok(h) => {
                    if h.is_empty() {
                        self.by_tool.remove(name);
                    } else {
                        self.by_tool.insert(name.to_owned(), h);
                    }
                    true
                }
                Err(why) => {
                    tracing::warn!(tool = name, reason = %why, "tool definition rejected: invalid x-mcp-header");
                    self.by_tool.remove(name);
                    false
                }
            }
        });
        tools.len() != before
    }

    /// The `Mcp-Param-*` headers for a call of `tool` with `arguments`.
    pub(crate) fn headers_for(&self, tool: &str, arguments: Option<&Value>, out: &mut HeaderMap) {
        let Some(anns) = self.by_tool.get(tool) else {
            return;
        };
        for ann in anns {
            let mut value = arguments;
            for key in &ann.path {
                value = value.and_then(|v| v.get(key));
            }
            let text = match value {
                Some(Value::String(s)) => encode_header_value(s),
                Some(Value::Bool(b)) => b.to_string(),
                Some(Value::Number(n)) => match n.as_i64() {
                    Some(i) if i.abs() <= MAX_SAFE_INTEGER => i.to_string(),
                    _ => continue,
                },
                _ => continue,
            };
            let name = format!("{MCP_PARAM_PREFIX}{}", ann.name);
            if let (Ok(name), Ok(value)) = (
                HeaderName::from_bytes(name.as_bytes()),
                HeaderValue::from_str(&text),
            ) {
                out.append(name, value);
            }
        }
    }
}

/// What the transport reads from an outbound request's params: the envelope's protocol
/// version (present only in the modern era) and the `Mcp-Name` source.
#[derive(Debug, Default)]
pub(crate) struct RequestFacts {
    pub(crate) modern_version: Option<String>,
    pub(crate) name: Option<String>,
}

/// Reads the envelope version and the name/uri, and adds the `Mcp-Method`, `Mcp-Name` and
/// `Mcp-Param-*` headers of a modern-era request.
pub(crate) fn modern_headers(
    method: &str,
    params: Option<&Value>,
    tools: &ToolHeaders,
    out: &mut HeaderMap,
) -> RequestFacts {
    let mut facts = RequestFacts::default();
    let Some(params) = params else { return facts };
    facts.modern_version = params
        .get("_meta")
        .and_then(|m| m.get(META_PROTOCOL_VERSION))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let name_key = match method {
        "tools/call" | "prompts/get" => Some("name"),
        "resources/read" => Some("uri"),
        // The tasks extension (SEP-2663): route by task.
        "tasks/get" | "tasks/update" | "tasks/cancel" => Some("taskId"),
        _ => None,
    };
    facts.name = name_key
        .and_then(|k| params.get(k))
        .and_then(Value::as_str)
        .map(str::to_owned);
    if facts.modern_version.is_none() {
        return facts;
    }
    if let Ok(v) = HeaderValue::from_str(&encode_header_value(method)) {
        out.insert(MCP_METHOD, v);
    }
    if let Some(name) = &facts.name {
        if let Ok(v) = HeaderValue::from_str(&encode_header_value(name)) {
            out.insert(MCP_NAME, v);
        }
        if method == "tools/call" {
            tools.headers_for(name, params.get("arguments"), out);
        }
    }
    facts
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn obj(v: &Value) -> JsonObject {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn spec_encoding_examples() {
        assert_eq!(
            encode_header_value("line1\nline2"),
            "=?base64?bGluZTEKbGluZTI=?="
        );
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
    }

    #[test]
    fn annotations_valid_and_invalid() {
        let ok = obj(&json!({"type":"object","properties":{
            "region":{"type":"string","x-mcp-header":"Region"},
            "nested":{"type":"object","properties":{"n":{"type":"integer","x-mcp-header":"N"}}}
        }}));
        let h = tool_param_headers(&ok).unwrap();
        assert_eq!(h.len(), 2);
        for bad in [
            json!({"properties":{"a":{"type":"number","x-mcp-header":"A"}}}),
            json!({"properties":{"a":{"type":"string","x-mcp-header":""}}}),
            json!({"properties":{"a":{"type":"string","x-mcp-header":"a b"}}}),
            json!({"properties":{"a":{"type":"string","x-mcp-header":"X"},"b":{"type":"string","x-mcp-header":"x"}}}),
            json!({"properties":{"a":{"type":"array","items":{"type":"string","x-mcp-header":"A"}}}}),
            json!({"oneOf":[{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}]}),
        ] {
            assert!(tool_param_headers(&obj(&bad)).is_err(), "{bad}");
        }
    }

    #[test]
    fn headers_from_arguments() {
        let mut tools = ToolHeaders::default();
        let mut list = json!({"tools":[
            {"name":"t","inputSchema":{"type":"object","properties":{
                "r":{"type":"string","x-mcp-header":"Region"},
                "n":{"type":"integer","x-mcp-header":"N"},
                "b":{"type":"boolean","x-mcp-header":"B"}}}},
            {"name":"bad","inputSchema":{"properties":{"x":{"type":"number","x-mcp-header":"X"}}}}
        ]});
        assert!(tools.observe_list(&mut list));
        assert_eq!(list["tools"].as_array().unwrap().len(), 1);
        let mut out = HeaderMap::new();
        let params = json!({"name":"t","arguments":{"r":"ü","n":42,"b":true},
            "_meta":{META_PROTOCOL_VERSION:"2026-07-28"}});
        let facts = modern_headers("tools/call", Some(&params), &tools, &mut out);
        assert_eq!(facts.modern_version.as_deref(), Some("2026-07-28"));
        assert_eq!(out["mcp-method"], "tools/call");
        assert_eq!(out["mcp-name"], "t");
        assert_eq!(out["mcp-param-region"], "=?base64?w7w=?=");
        assert_eq!(out["mcp-param-n"], "42");
        assert_eq!(out["mcp-param-b"], "true");
    }
}
