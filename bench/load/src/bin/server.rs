//! `ferromcp-bench-server`: ferromcp's side of the load benchmark with exactly what the rmcp
//! peer (`bench/peers/rmcp-server`) has: a high-level `McpServer` with the tools `add` and
//! `echo`, served over stdio or Streamable HTTP on a current-thread runtime, `ferromcp-server`
//! with its default features only. The demo server (`ferromcp serve`) is measured beside it:
//! it carries 30-odd tools and the whole CLI (client, OAuth, authorization server), which
//! shows in cold start and RSS, not in the per-call rows.
//!
//! ```text
//! ferromcp-bench-server stdio
//! ferromcp-bench-server http ADDR [--stateless]
//! ```

use std::process::ExitCode;

use ferromcp_http_server::{HttpConfig, HttpServer};
use ferromcp_server::McpServer;
use ferromcp_server::mcp_server::Args;
use schemars::JsonSchema;
use serde::Deserialize;

/// Two numbers to add.
#[derive(Deserialize, JsonSchema)]
struct AddArgs {
    /// The first number.
    a: f64,
    /// The second number.
    b: f64,
}

/// Text to echo.
#[derive(Deserialize, JsonSchema)]
struct EchoArgs {
    /// The text.
    text: String,
}

fn server() -> Result<McpServer, String> {
    McpServer::builder("ferromcp-bench-server", env!("CARGO_PKG_VERSION"))
        .tool("add", |Args(a): Args<AddArgs>| async move {
            (a.a + a.b).to_string()
        })
        .tool("echo", |Args(e): Args<EchoArgs>| async move { e.text })
        .build()
        .map_err(|e| e.to_string())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return fail(&format!("cannot start the async runtime: {e}")),
    };
    let server = match server() {
        Ok(s) => s,
        Err(e) => return fail(&e),
    };
    let served = match args.as_slice() {
        ["stdio"] => runtime
            .block_on(ferromcp_server::serve_stdio(server.server()))
            .map_err(|e| e.to_string()),
        ["http", addr, rest @ ..] => {
            let stateless = match rest {
                [] => false,
                ["--stateless"] => true,
                _ => return fail("usage: ferromcp-bench-server http ADDR [--stateless]"),
            };
            // The load driver is one peer opening up to thousands of sessions and many
            // connections: the per-peer caps (abuse limits) would refuse it, so they are the
            // totals here.
            let defaults = HttpConfig::default();
            let config = HttpConfig::default()
                .stateless(stateless)
                .max_sessions_per_peer(defaults.max_sessions)
                .max_connections_per_peer(defaults.max_connections);
            runtime
                .block_on(async {
                    HttpServer::bind(*addr, server.server().clone(), config)
                        .await?
                        .run()
                        .await
                })
                .map_err(|e| format!("serving {addr}: {e}"))
        }
        _ => return fail("usage: ferromcp-bench-server stdio | http ADDR [--stateless]"),
    };
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fail(&e),
    }
}

fn fail(message: &str) -> ExitCode {
    eprintln!("ferromcp-bench-server: {message}");
    ExitCode::FAILURE
}
