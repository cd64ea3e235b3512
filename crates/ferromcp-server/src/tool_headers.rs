//! The `x-mcp-header` annotations of a tool's `inputSchema` (MCP 2026-07-28 "Streamable HTTP ›
//! Custom Headers from Tool Parameters"), read once when a tool is registered, and
//! [`ToolHeaders`], where a transport finds them by tool name.

use std::collections::HashMap;
use std::sync::Arc;

use ferromcp_types::mcp::{JsonObject, Tool};
use serde_json::Value;

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

/// Where the `x-mcp-header` annotations of a server's tools are found by tool name, without
/// calling the server: the high-level server's tool registry answers (kept current as tools
/// are added, replaced and removed); a low-level server may set its own with
/// [`ServerBuilder::tool_headers`](crate::ServerBuilder::tool_headers). The HTTP transport
/// checks a 2026-07-28 `tools/call`'s `Mcp-Param-*` headers against them.
pub trait ToolHeaders: Send + Sync + 'static {
    /// The annotations of tool `name`; `None` when the server has no such tool.
    fn param_headers(&self, tool: &str) -> Option<Arc<[ParamHeader]>>;
}

/// The annotations of a fixed set of tools, read once: for a low-level server that serves
/// `tools/list` itself.
///
/// ```
/// use std::sync::Arc;
/// use ferromcp_server::Server;
/// use ferromcp_server::tool_headers::FixedToolHeaders;
/// use ferromcp_types::mcp::Tool;
///
/// let schema = serde_json::json!({"type": "object", "properties": {
///     "region": {"type": "string", "x-mcp-header": "Region"}}});
/// let tools = vec![Tool::new("deploy", schema.as_object().unwrap().clone())];
/// let server = Server::builder("low", "1")
///     .tool_headers(Arc::new(FixedToolHeaders::new(&tools)))
///     .build()
///     .unwrap();
/// assert_eq!(server.tool_param_headers("deploy").unwrap()[0].name, "Region");
/// assert!(server.tool_param_headers("other").is_none());
/// ```
#[derive(Debug, Clone, Default)]
pub struct FixedToolHeaders(HashMap<String, Arc<[ParamHeader]>>);

impl FixedToolHeaders {
    /// The annotations of `tools`.
    pub fn new<'a>(tools: impl IntoIterator<Item = &'a Tool>) -> Self {
        Self(
            tools
                .into_iter()
                .map(|t| (t.name.clone(), param_headers(&t.input_schema).into()))
                .collect(),
        )
    }
}

impl ToolHeaders for FixedToolHeaders {
    fn param_headers(&self, tool: &str) -> Option<Arc<[ParamHeader]>> {
        self.0.get(tool).cloned()
    }
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
