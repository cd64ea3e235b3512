//! A tiny MCP server written with rmcp 3.11, for ferromcp's client to talk to: on stdio, or with
//! `--http PORT` over Streamable HTTP at http://127.0.0.1:PORT/mcp (handshake-era sessions and
//! stateless 2026-07-28 on the same endpoint). It serves whatever revisions rmcp serves
//! (2025-11-25 with `initialize`, 2026-07-28 with `server/discover`). Contents: tools `add` (a + b), `echo` (text), `fail` (an error result);
//! resource `interop://hello` (text); prompt `greet` (argument `name`) — the same in every interop
//! peer server.

use std::sync::Arc;

use rmcp::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData,
    GetPromptRequestParams, GetPromptResponse, GetPromptResult, Implementation, JsonObject,
    ListPromptsResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams, Prompt,
    PromptArgument, PromptMessage, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, Resource, ResourceContents, Role, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer, ServiceExt};
use rmcp::transport::streamable_http_server::{
    StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
};
use serde_json::{Value, json};

#[derive(Clone)]
struct Peer;

fn schema(value: Value) -> Arc<JsonObject> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(JsonObject::new()),
    }
}

fn number(args: &JsonObject, key: &str) -> Result<f64, ErrorData> {
    args.get(key)
        .and_then(Value::as_f64)
        .ok_or_else(|| ErrorData::invalid_params(format!("`{key}` must be a number"), None))
}

impl ServerHandler for Peer {
    fn get_info(&self) -> ServerConfig {
        let caps = ServerCapabilities::builder()
            .enable_tools()
            .enable_resources()
            .enable_prompts()
            .build();
        ServerConfig::new(caps).with_server_info(Implementation::new("rmcp-interop-peer", "0.0.0"))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(vec![
            Tool::new(
                "add",
                "Adds two numbers.",
                schema(json!({"type": "object",
                    "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                    "required": ["a", "b"]})),
            ),
            Tool::new(
                "echo",
                "Returns its text.",
                schema(json!({"type": "object",
                    "properties": {"text": {"type": "string"}}, "required": ["text"]})),
            ),
            Tool::new(
                "fail",
                "Always returns an error result.",
                schema(json!({"type": "object"})),
            ),
        ]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.unwrap_or_default();
        let result = match request.name.as_ref() {
            "add" => {
                let sum = number(&args, "a")? + number(&args, "b")?;
                CallToolResult::success(vec![ContentBlock::text(sum.to_string())])
            }
            "echo" => {
                let text = args.get("text").and_then(Value::as_str).unwrap_or_default();
                CallToolResult::success(vec![ContentBlock::text(text)])
            }
            "fail" => {
                CallToolResult::error(vec![ContentBlock::text("rmcp peer: intended failure")])
            }
            other => {
                return Err(ErrorData::invalid_params(
                    format!("unknown tool {other}"),
                    None,
                ));
            }
        };
        Ok(result.into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let mut hello = Resource::new("interop://hello", "hello");
        hello.mime_type = Some("text/plain".into());
        Ok(ListResourcesResult::with_all_items(vec![hello]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        if request.uri != "interop://hello" {
            return Err(ErrorData::resource_not_found("no such resource", None));
        }
        let contents = ResourceContents::text("hello from rmcp", "interop://hello")
            .with_mime_type("text/plain");
        Ok(ReadResourceResult::new(vec![contents]).into())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let arg = PromptArgument::new("name").with_required(true);
        Ok(ListPromptsResult::with_all_items(vec![Prompt::new(
            "greet",
            Some("Greets someone."),
            Some(vec![arg]),
        )]))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        if request.name != "greet" {
            return Err(ErrorData::invalid_params("no such prompt", None));
        }
        let name = request
            .arguments
            .as_ref()
            .and_then(|a| a.get("name"))
            .and_then(Value::as_str)
            .unwrap_or("nobody")
            .to_owned();
        let message = PromptMessage::new_text(Role::User, format!("Say hello to {name}."));
        Ok(GetPromptResult::new(vec![message]).into())
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [] => serve_stdio().await,
        [flag, port] if flag == "--http" => serve_http(port).await,
        _ => fail("usage: ferromcp-interop-rmcp-server [--http PORT]"),
    }
}

fn fail(message: &str) -> ! {
    eprintln!("rmcp-interop-peer: {message}");
    std::process::exit(1);
}

async fn serve_stdio() {
    let service = match Peer.serve(rmcp::transport::stdio()).await {
        Ok(service) => service,
        Err(e) => fail(&e.to_string()),
    };
    let _ = service.waiting().await;
}

async fn serve_http(port: &str) {
    let service = StreamableHttpService::new(
        || Ok(Peer),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let router = axum::Router::new().nest_service("/mcp", service);
    let listener = match tokio::net::TcpListener::bind(format!("127.0.0.1:{port}")).await {
        Ok(listener) => listener,
        Err(e) => fail(&format!("cannot listen on 127.0.0.1:{port}: {e}")),
    };
    if let Err(e) = axum::serve(listener, router).await {
        fail(&e.to_string());
    }
}
