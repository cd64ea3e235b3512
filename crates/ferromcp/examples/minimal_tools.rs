//! A minimal tool server over stdio: `cargo run -p ferromcp --example minimal_tools`.

use ferromcp::McpServer;
use ferromcp::server::mcp_server::Args;

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
    let server = McpServer::builder("minimal", "1.0.0")
        .tool("add", add)
        .build()?;
    ferromcp::server::serve_stdio(server.server()).await?;
    Ok(())
}
