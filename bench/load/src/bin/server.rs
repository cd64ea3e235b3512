//! `ferromcp-bench-server`: ferromcp's side of the load benchmark with exactly what the rmcp
//! peer (`bench/peers/rmcp-server`) has: a high-level `McpServer` with the tools `add` and
//! `echo`, served over stdio or Streamable HTTP on a current-thread runtime, `ferromcp-server`
//! with its default features only. The demo server (`ferromcp serve`) is measured beside it:
//! it carries 30-odd tools and the whole CLI (client, OAuth, authorization server), which
//! shows in cold start and RSS, not in the per-call rows.
//!
//! It also has `size` (the length of its `text` in bytes: a big argument with a small answer),
//! and `--tools N` registers N more tools (`t0`…, the `echo` argument type) for the
//! registry-size curves. Its bounds are raised for the big-payload rows (64 MiB lines and
//! bodies) and the idle-session curve (20,000 sessions), as the rmcp peer's are.
//!
//! ```text
//! ferromcp-bench-server stdio [--tools N]
//! ferromcp-bench-server http ADDR [--stateless] [--tools N]
//! ```

use std::process::ExitCode;

use ferromcp_dispatch::{DispatcherConfig, LineTransportConfig};
use ferromcp_http_server::{HttpConfig, HttpServer};
use ferromcp_server::mcp_server::Args;
use ferromcp_server::{DEFAULT_STDIO_SHUTDOWN_GRACE, McpServer, StreamConfig, serve_stdio_with};
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

/// The bound on a stdio line and an HTTP body: 64 MiB (the big-payload rows send 4 MiB).
const MAX_MESSAGE: usize = 64 << 20;
/// The bound on live sessions (the idle-session curve goes to 10,000).
const MAX_SESSIONS: usize = 20_000;

fn server(extra: usize) -> Result<McpServer, String> {
    let mut b = McpServer::builder("ferromcp-bench-server", env!("CARGO_PKG_VERSION"))
        .tool("add", |Args(a): Args<AddArgs>| async move {
            (a.a + a.b).to_string()
        })
        .tool("echo", |Args(e): Args<EchoArgs>| async move { e.text })
        .tool("size", |Args(e): Args<EchoArgs>| async move {
            e.text.len().to_string()
        });
    for i in 0..extra {
        b = b.tool(
            format!("t{i}"),
            |Args(e): Args<EchoArgs>| async move { e.text },
        );
    }
    b.build().map_err(|e| e.to_string())
}

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut extra = 0;
    if let Some(i) = args.iter().position(|a| a == "--tools") {
        extra = match args.get(i + 1).map(|n| n.parse()) {
            Some(Ok(n)) => n,
            _ => return fail("--tools needs a number"),
        };
        args.drain(i..i + 2);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return fail(&format!("cannot start the async runtime: {e}")),
    };
    let server = match server(extra) {
        Ok(s) => s,
        Err(e) => return fail(&e),
    };
    let served = match args.as_slice() {
        ["stdio"] => {
            let line = LineTransportConfig::default().max_line_len(MAX_MESSAGE);
            let config = StreamConfig::default().dispatcher(
                DispatcherConfig::default().shutdown_grace(DEFAULT_STDIO_SHUTDOWN_GRACE),
            );
            runtime
                .block_on(serve_stdio_with(server.server(), line, config))
                .map_err(|e| e.to_string())
        }
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
                .max_body_size(MAX_MESSAGE)
                .max_sessions(MAX_SESSIONS)
                .max_sessions_per_peer(MAX_SESSIONS)
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
        _ => {
            return fail(
                "usage: ferromcp-bench-server stdio | http ADDR [--stateless] [--tools N]",
            );
        }
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
