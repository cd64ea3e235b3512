//! A tool server over Streamable HTTP, both protocol eras on one endpoint:
//! `cargo run -p ferromcp --example http_server -- 127.0.0.1:8080`.
//!
//! The address is the first argument (default `127.0.0.1:8080`; port 0 picks a free port).
//! The first line on stdout is the MCP endpoint's URL, e.g. `http://127.0.0.1:8080/mcp`;
//! point any MCP client at it (`ferromcp inspect http://127.0.0.1:8080/mcp`).
//!
//! Only loopback `Host`/`Origin` values are answered (DNS-rebinding protection), whatever
//! address is bound: a public deployment names its hosts with `HttpConfig::allowed_hosts`.
#![allow(clippy::print_stdout)]

use std::io::Write;

use ferromcp::McpServer;
use ferromcp::server::http::{HttpConfig, HttpServer};
use ferromcp::server::mcp_server::{Args, ToolSpec};

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

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:8080".to_owned());
    let server = McpServer::builder("http-example", "1.0.0")
        .tool(ToolSpec::new("add").description("Adds two numbers."), add)
        .build()?;
    // `serve_http(addr, server)` is the one-liner; binding first tells the bound address
    // (useful with port 0) and lets the settings be changed: path, JSON-only responses,
    // stateless mode, allowed hosts, limits.
    let config = HttpConfig::default();
    let http = HttpServer::bind(addr.as_str(), server.server().clone(), config).await?;
    println!(
        "http://{}{}",
        http.local_addr(),
        http.service().config().path
    );
    std::io::stdout().flush()?;
    http.run().await?;
    Ok(())
}
