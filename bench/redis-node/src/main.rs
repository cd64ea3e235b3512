//! `ferromcp-bench-redis-node`: the load benchmark's scale-out row (issue 19 point 7). The
//! bench server's tools (`add`, `echo`) served over Streamable HTTP with the Redis session and
//! event stores (`ferromcp_http_server::redis`), so that two processes sharing one Redis
//! serve the same sessions: a request reaching the node that does not own its session is
//! forwarded through Redis. Without `--redis` it serves with the in-memory stores (the
//! one-node baseline of the same binary).
//!
//! ```text
//! ferromcp-bench-redis-node http ADDR [--redis URL]
//! ```

use std::process::ExitCode;

use ferromcp_http_server::redis::{RedisConfig, RedisStores};
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

/// The bound on live sessions (as the bench server's).
const MAX_SESSIONS: usize = 20_000;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (addr, redis) = match args.as_slice() {
        ["http", addr] => (*addr, None),
        ["http", addr, "--redis", url] => (*addr, Some(*url)),
        _ => return fail("usage: ferromcp-bench-redis-node http ADDR [--redis URL]"),
    };
    let server = McpServer::builder("ferromcp-bench-redis-node", env!("CARGO_PKG_VERSION"))
        .tool("add", |Args(a): Args<AddArgs>| async move {
            (a.a + a.b).to_string()
        })
        .tool("echo", |Args(e): Args<EchoArgs>| async move { e.text })
        .build();
    let server = match server {
        Ok(s) => s,
        Err(e) => return fail(&e.to_string()),
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return fail(&format!("cannot start the async runtime: {e}")),
    };
    let served = runtime.block_on(async {
        let defaults = HttpConfig::default();
        let mut config = HttpConfig::default()
            .max_sessions(MAX_SESSIONS)
            .max_sessions_per_peer(MAX_SESSIONS)
            .max_connections_per_peer(defaults.max_connections);
        if let Some(url) = redis {
            let stores = RedisStores::connect(RedisConfig::new(url))
                .await
                .map_err(|e| format!("redis {url}: {e}"))?;
            config = stores.apply(config);
        }
        HttpServer::bind(addr, server.server().clone(), config)
            .await
            .map_err(|e| e.to_string())?
            .run()
            .await
            .map_err(|e| format!("serving {addr}: {e}"))
    });
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fail(&e),
    }
}

fn fail(message: &str) -> ExitCode {
    eprintln!("ferromcp-bench-redis-node: {message}");
    ExitCode::FAILURE
}
