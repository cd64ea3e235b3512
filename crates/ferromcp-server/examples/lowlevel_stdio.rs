//! A small server on the low-level `Server`, served over stdio in both protocol eras.
//!
//! Run it and type (or pipe) newline-delimited JSON-RPC:
//!
//! ```text
//! cargo run -p ferromcp-server --example lowlevel_stdio
//! {"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}
//! ```

use ferromcp_server::{RequestContext, Server, serve_stdio};
use ferromcp_types::mcp::methods::{CallTool, ListTools};
use ferromcp_types::mcp::{
    CallToolRequestParams, CallToolResult, ListToolsResult, PaginatedRequestParams, Tool,
};

async fn call(_ctx: RequestContext, p: CallToolRequestParams) -> CallToolResult {
    match p.name.as_str() {
        "shout" => {
            let text = p
                .arguments
                .as_ref()
                .and_then(|a| a.get("text"))
                .and_then(|t| t.as_str());
            CallToolResult::text(text.unwrap_or_default().to_uppercase())
        }
        other => CallToolResult::error(format!("unknown tool {other}")),
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = Server::builder("shouter", "1.0.0")
        .on::<ListTools, _, _, _>(|_ctx, _p: PaginatedRequestParams| async {
            let schema = serde_json::json!({
                "type": "object",
                "properties": {"text": {"type": "string"}},
                "required": ["text"],
            });
            let schema = schema.as_object().cloned().unwrap_or_default();
            Ok(ListToolsResult::new(vec![Tool::new("shout", schema)]))
        })
        .on::<CallTool, _, _, _>(|ctx, p| async move { Ok(call(ctx, p).await) })
        .build()?;
    serve_stdio(&server).await?;
    Ok(())
}
