//! The 2024-11-05 HTTP+SSE transport, for old clients and old servers:
//! `cargo run -p ferromcp --example legacy_sse -- 127.0.0.1:8080`.
//!
//! The server serves Streamable HTTP at `/mcp` and, turned on with
//! `HttpConfig::legacy_sse(true)`, the old transport next to it: a GET on `/sse` opens a
//! stream whose first event (`endpoint`) names `/messages?sessionId=…`, where the client POSTs
//! its messages; the answers come back on the stream. Same checks and limits as `/mcp`.
//!
//! The first line on stdout is the stream's URL (e.g. `http://127.0.0.1:8080/sse`). Then the
//! example is its own client twice: once choosing the old transport
//! (`HttpTransport::legacy_sse`), once with a plain `HttpTransport`, whose `initialize` POST
//! the stream URL refuses (405) so that it falls back to the old transport, as the spec's
//! backwards-compatibility rules say. It prints each result and goes on serving: point
//! `ferromcp inspect http://127.0.0.1:8080/sse` or an old SDK's SSE client at it.
#![allow(clippy::print_stdout)]

use std::io::Write;

use ferromcp::client::HttpTransport;
use ferromcp::server::http::{HttpConfig, HttpServer};
use ferromcp::server::mcp_server::{Args, ToolSpec};
use ferromcp::types::mcp::{CallToolResult, ContentBlock};
use ferromcp::{Client, McpServer};
use serde_json::json;

/// Two numbers to add.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct AddArgs {
    /// The first number.
    a: f64,
    /// The second number.
    b: f64,
}

async fn add(Args(args): Args<AddArgs>) -> String {
    (args.a + args.b).to_string()
}

fn first_text(r: &CallToolResult) -> String {
    match r.content.first() {
        Some(ContentBlock::Text(t)) => t.text.clone(),
        _ => String::new(),
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:8080".to_owned());
    let server = McpServer::builder("legacy-sse-example", "1.0.0")
        .tool(ToolSpec::new("add").description("Adds two numbers."), add)
        .build()?;
    // `legacy_sse_paths("/old/sse", "/old/messages")` would serve it elsewhere.
    let config = HttpConfig::default().legacy_sse(true);
    let http = HttpServer::bind(addr.as_str(), server.server().clone(), config).await?;
    let url = format!("http://{}/sse", http.local_addr());
    println!("{url}");
    std::io::stdout().flush()?;
    let serving = tokio::spawn(http.run());

    // The old transport, chosen explicitly.
    let client = Client::builder()
        .connect(HttpTransport::legacy_sse(&url)?)
        .await?;
    let r = client.call_tool("add", json!({"a": 2, "b": 3})).await?;
    println!("explicit HTTP+SSE: add = {}", first_text(&r));
    client.shutdown().await;

    // A plain transport on the same URL: its `initialize` POST is refused, it falls back.
    let client = Client::builder().connect(HttpTransport::new(&url)?).await?;
    let r = client.call_tool("add", json!({"a": 4, "b": 5})).await?;
    println!(
        "fallback to HTTP+SSE: add = {} (protocol {})",
        first_text(&r),
        client.session().protocol_version
    );
    client.shutdown().await;
    std::io::stdout().flush()?;

    serving.await??;
    Ok(())
}
