//! `Mcp-Param-{Name}` headers (MCP 2026-07-28 "Streamable HTTP › Custom Headers from Tool
//! Parameters"): the check that the headers match the call's arguments, against the tool's
//! `x-mcp-header` annotations (see [`ferromcp_server::tool_headers`]).

use ferromcp_types::jsonrpc::{ErrorObject, echo};
use http::HeaderMap;
use serde_json::Value;

use super::headers::{MCP_PARAM_PREFIX, decode_header_value};
use ferromcp_server::tool_headers::ParamHeader;

fn mismatch(text: &str) -> ErrorObject {
    ErrorObject::new(
        ferromcp_types::jsonrpc::ErrorCode::HEADER_MISMATCH,
        format!("Header mismatch: {text}"),
    )
}

/// Checks the `Mcp-Param-*` headers against `arguments`: every annotated parameter with a
/// non-null value needs its header, decoded from the Base64 sentinel if encoded, equal to the
/// value (integers compared numerically). -32020 otherwise.
pub fn check_param_headers(
    annotations: &[ParamHeader],
    headers: &HeaderMap,
    arguments: Option<&Value>,
) -> Result<(), ErrorObject> {
    for ann in annotations {
        let mut value = arguments;
        for key in &ann.path {
            value = value.and_then(|v| v.get(key));
        }
        let header_name = format!("{MCP_PARAM_PREFIX}{}", ann.name.to_ascii_lowercase());
        let mut values = headers.get_all(header_name.as_str()).iter();
        let raw = values.next();
        if values.next().is_some() {
            return Err(mismatch(&format!(
                "Mcp-Param-{} appears more than once",
                echo(&ann.name)
            )));
        }
        let header = match raw {
            None => None,
            Some(raw) => Some(
                raw.to_str()
                    .ok()
                    .and_then(|s| decode_header_value(s.trim()))
                    .ok_or_else(|| {
                        mismatch(&format!(
                            "Mcp-Param-{} has invalid characters",
                            echo(&ann.name)
                        ))
                    })?,
            ),
        };
        let value = match value {
            None | Some(Value::Null) => continue,
            Some(v) => v,
        };
        let Some(header) = header else {
            return Err(mismatch(&format!(
                "Mcp-Param-{} is missing but the argument is present",
                echo(&ann.name)
            )));
        };
        let equal = match value {
            Value::String(s) => *s == header,
            Value::Bool(b) => header == if *b { "true" } else { "false" },
            Value::Number(n) => header
                .parse::<f64>()
                .ok()
                .zip(n.as_f64())
                .is_some_and(|(h, v)| h == v),
            _ => false,
        };
        if !equal {
            return Err(mismatch(&format!(
                "Mcp-Param-{} header value '{}' does not match the argument",
                echo(&ann.name),
                echo(&header)
            )));
        }
    }
    Ok(())
}
