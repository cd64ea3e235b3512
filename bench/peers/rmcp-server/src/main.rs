//! The rmcp 3.11 peer for ferromcp's load benchmark (`bench/run.sh`): tools `add` (numbers `a`,
//! `b`; one text block with the sum) and `echo` (string `text`; one text block with that text),
//! the same as `ferromcp serve`'s demo, and `size` (string `text`; its length in bytes: a big
//! argument with a small answer). `--tools N` registers N more tools (`t0`…, one string
//! argument each) for the registry-size curves.
//!
//! ```text
//! rmcp-bench-server stdio [--tools N]
//! rmcp-bench-server http 127.0.0.1:8000 [--stateless] [--tools N]
//! ```
//!
//! HTTP: rmcp's `StreamableHttpService` (default config: sessions with `LocalSessionManager`,
//! SSE responses) served by hyper's HTTP/1.1 connection loop, one task per connection, with
//! `TCP_NODELAY` set on every accepted socket (without it rmcp's SSE replies wait ~40 ms on
//! delayed ACKs, which would measure the kernel, not rmcp). `--stateless` turns
//! `legacy_session_mode` off. The runtime is tokio's default multi-thread one (`#[tokio::main]`),
//! as an rmcp application is usually written.

use std::sync::Arc;

use rmcp::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData,
    Implementation, JsonObject, ListToolsResult, PaginatedRequestParams, ServerCapabilities,
    ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer, ServiceExt};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::{Value, json};

#[derive(Clone)]
struct Peer {
    /// The tools `tools/list` answers with (built once, as an rmcp server with a fixed tool set
    /// would keep them).
    tools: Arc<Vec<Tool>>,
    /// How many `t{i}` tools there are (looked up by name, not by a scan).
    extra: usize,
}

impl Peer {
    fn new(extra: usize) -> Self {
        let text = || {
            schema(json!({"type": "object",
                "properties": {"text": {"type": "string"}}, "required": ["text"]}))
        };
        let mut tools = vec![
            Tool::new(
                "add",
                "Adds two numbers.",
                schema(json!({"type": "object",
                    "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                    "required": ["a", "b"]})),
            ),
            Tool::new("echo", "Returns its text.", text()),
            Tool::new("size", "Returns the length of its text in bytes.", text()),
        ];
        for i in 0..extra {
            tools.push(Tool::new(format!("t{i}"), "Returns its text.", text()));
        }
        Self {
            tools: Arc::new(tools),
            extra,
        }
    }
}

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

impl Peer {
    fn is_extra(&self, name: &str) -> bool {
        name.strip_prefix('t')
            .and_then(|n| n.parse::<usize>().ok())
            .is_some_and(|i| i < self.extra)
    }
}

impl ServerHandler for Peer {
    fn get_info(&self) -> ServerConfig {
        let caps = ServerCapabilities::builder().enable_tools().build();
        ServerConfig::new(caps).with_server_info(Implementation::new("rmcp-bench-peer", "0.0.0"))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools.as_ref().clone()))
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
            "size" => {
                let text = args.get("text").and_then(Value::as_str).unwrap_or_default();
                CallToolResult::success(vec![ContentBlock::text(text.len().to_string())])
            }
            name if name == "echo" || self.is_extra(name) => {
                let text = args.get("text").and_then(Value::as_str).unwrap_or_default();
                CallToolResult::success(vec![ContentBlock::text(text)])
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
}

async fn serve_stdio(peer: Peer) -> Result<(), Box<dyn std::error::Error>> {
    let service = peer.serve(rmcp::transport::stdio()).await?;
    service.waiting().await?;
    Ok(())
}

async fn serve_http(
    peer: Peer,
    addr: &str,
    stateless: bool,
) -> Result<(), Box<dyn std::error::Error>> {
    let mut config = StreamableHttpServerConfig::default();
    config.legacy_session_mode = !stateless;
    // The big-payload rows send up to 4 MiB of text (ferromcp's bench server raises its bound
    // the same way).
    config.max_request_body_bytes = MAX_BODY;
    let service = StreamableHttpService::new(
        move || Ok(peer.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let listener = tokio::net::TcpListener::bind(addr).await?;
    eprintln!("rmcp-bench-server: http://{}/mcp", listener.local_addr()?);
    loop {
        let (stream, _) = listener.accept().await?;
        stream.set_nodelay(true)?;
        let tower = service.clone();
        tokio::spawn(async move {
            let svc = hyper::service::service_fn(move |req| {
                let mut tower = tower.clone();
                async move { tower_service::Service::call(&mut tower, req).await }
            });
            let io = hyper_util::rt::TokioIo::new(stream);
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(io, svc)
                .await;
        });
    }
}

/// The request body bound over HTTP: 64 MiB.
const MAX_BODY: usize = 64 << 20;

#[tokio::main]
async fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut extra = 0;
    if let Some(i) = args.iter().position(|a| a == "--tools") {
        extra = args.get(i + 1).and_then(|n| n.parse().ok()).unwrap_or(0);
        args.drain(i..(i + 2).min(args.len()));
    }
    let peer = Peer::new(extra);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let result = match args.as_slice() {
        ["stdio"] => serve_stdio(peer).await,
        ["http", addr] => serve_http(peer, addr, false).await,
        ["http", addr, "--stateless"] => serve_http(peer, addr, true).await,
        _ => Err("usage: rmcp-bench-server stdio | http ADDR [--stateless] [--tools N]".into()),
    };
    if let Err(e) = result {
        eprintln!("rmcp-bench-server: {e}");
        std::process::exit(1);
    }
}
