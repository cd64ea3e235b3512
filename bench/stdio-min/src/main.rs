//! `ferromcp-bench-stdio`: the load benchmark's stdio-only ferromcp server (issue 19 point 5).
//! The same tools as `ferromcp-bench-server` (`add`, `echo`, `size`), served over stdio on a
//! current-thread runtime, with `ferromcp-server` built without its default features and no
//! HTTP crate: what a stdio-only server needs and nothing more. The load driver measures its
//! cold start (spawn → `initialize` answered), its RSS at rest and its stripped size against
//! rmcp's.
//!
//! ```text
//! ferromcp-bench-stdio
//! ```

use std::process::ExitCode;

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

fn main() -> ExitCode {
    let server = McpServer::builder("ferromcp-bench-stdio", env!("CARGO_PKG_VERSION"))
        .tool("add", |Args(a): Args<AddArgs>| async move {
            (a.a + a.b).to_string()
        })
        .tool("echo", |Args(e): Args<EchoArgs>| async move { e.text })
        .tool("size", |Args(e): Args<EchoArgs>| async move {
            e.text.len().to_string()
        })
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
    match runtime.block_on(ferromcp_server::serve_stdio(server.server())) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fail(&e.to_string()),
    }
}

fn fail(message: &str) -> ExitCode {
    eprintln!("ferromcp-bench-stdio: {message}");
    ExitCode::FAILURE
}
