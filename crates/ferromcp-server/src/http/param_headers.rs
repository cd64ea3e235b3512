//! `Mcp-Param-{Name}` headers (MCP 2026-07-28 "Streamable HTTP › Custom Headers from Tool
//! Parameters"): the `x-mcp-header` annotations of a tool's `inputSchema`, and the check that
//! the headers match the call's arguments.

use ferromcp_types::jsonrpc::ErrorObject;
use ferromcp_types::mcp::JsonObject;
use http::HeaderMap;
use serde_json::Value;

use super::headers::{MCP_PARAM_PREFIX, decode_header_value};

/// One annotated parameter: the header's name part and the property path to its value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamHeader {
    /// The `x-mcp-header` value (the `{Name}` of `Mcp-Param-{Name}`).
    pub name: String,
    /// The chain of `properties` keys from the schema root to the parameter.
    pub path: Vec<String>,
}

/// The `x-mcp-header` annotations reachable from the schema root through `properties` only
/// (annotations elsewhere are ignored: they make the tool invalid for clients, which then do
/// not call it over HTTP).
pub fn param_headers(input_schema: &JsonObject) -> Vec<ParamHeader> {
    let mut out = Vec::new();
    walk(input_schema, &mut Vec::new(), &mut out);
    out
}

fn walk(schema: &JsonObject, path: &mut Vec<String>, out: &mut Vec<ParamHeader>) {
    if path.len() > 32 {
        return;
    }
    let Some(Value::Object(props)) = schema.get("properties") else {
        return;
    };
    for (key, sub) in props {
        let Value::Object(sub) = sub else { continue };
        path.push(key.clone());
        if let Some(Value::String(name)) = sub.get("x-mcp-header") {
            out.push(ParamHeader {
                name: name.clone(),
                path: path.clone(),
            });
        }
        walk(sub, path, out);
        path.pop();
    }
}

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
                ann.name
            )));
        }
        let header = match raw {
            None => None,
            Some(raw) => Some(
                raw.to_str()
                    .ok()
                    .and_then(|s| decode_header_value(s.trim()))
                    .ok_or_else(|| {
                        mismatch(&format!("Mcp-Param-{} has invalid characters", ann.name))
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
                ann.name
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
                "Mcp-Param-{} header value '{header}' does not match the argument",
                ann.name
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn finds_nested_properties_only() {
        let Value::Object(schema) = json!({"type":"object","properties":{
            "region":{"type":"string","x-mcp-header":"Region"},
            "cfg":{"type":"object","properties":{"id":{"type":"integer","x-mcp-header":"Id"}}},
            "list":{"type":"array","items":{"x-mcp-header":"Nope"}}
        }}) else {
            unreachable!()
        };
        let mut found = param_headers(&schema);
        found.sort_by(|a, b| a.name.cmp(&b.name));
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].path, ["cfg", "id"]);
        assert_eq!(found[1].path, ["region"]);
    }
}
