//! The Streamable HTTP endpoint mounted in an axum `Router`, next to the application's own
//! routes: `cargo run -p ferromcp --example axum_mount -- 127.0.0.1:8080`.
//!
//! The address is the first argument (default `127.0.0.1:8080`; port 0 picks a free port).
//! The first line on stdout is the MCP endpoint's URL; `GET /health` answers `ok`.
#![allow(clippy::print_stdout)]

use std::io::Write;
use std::net::SocketAddr;

use axum::Router;
use axum::extract::{ConnectInfo, Request};
use axum::middleware::Next;
use axum::response::Response;
use axum::routing::get;
use ferromcp::McpServer;
use ferromcp::server::http::{HttpConfig, McpHttpService, PeerAddr};
use ferromcp::server::mcp_server::{Args, ToolSpec};

/// A text to echo.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct EchoArgs {
    /// What to echo back.
    text: String,
}

async fn echo(Args(args): Args<EchoArgs>) -> String {
    args.text
}

/// Records the TCP peer's address as [`PeerAddr`]. `HttpServer` does this itself; a mounted
/// service cannot see the socket, so the application passes it on. Without it every client
/// counts as one peer for the per-peer session cap (`HttpConfig::max_sessions_per_peer`),
/// so a handful of clients would lock everyone else out.
async fn peer_addr(
    ConnectInfo(addr): ConnectInfo<SocketAddr>,
    mut request: Request,
    next: Next,
) -> Response {
    request.extensions_mut().insert(PeerAddr(addr));
    next.run(request).await
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:8080".to_owned());
    let server = McpServer::builder("axum-example", "1.0.0")
        .tool(ToolSpec::new("echo").description("Echoes its text."), echo)
        .build()?;

    let listener = tokio::net::TcpListener::bind(addr.as_str()).await?;
    let local = listener.local_addr()?;
    // Allowed hosts (DNS-rebinding protection): a request whose `Host` is not allowed is
    // answered 421, one whose `Origin` is not allowed 403. A mounted service does not know
    // its port, so by default it allows the loopback names (localhost, 127.0.0.1, [::1]) on
    // any port; `bound_to(local)` pins them to this listener's port. A public deployment
    // names its own: `.allowed_hosts(["mcp.example.com"])` and
    // `.allowed_origins(["https://app.example.com"])`. Behind a proxy that checks them,
    // `.disable_host_checks()` turns the checks off.
    let config = HttpConfig::default().bound_to(local);
    let mcp = McpHttpService::new(server.server().clone(), config);

    let app = Router::new()
        .route("/health", get(|| async { "ok" }))
        .route_service("/mcp", mcp)
        .layer(axum::middleware::from_fn(peer_addr));

    println!("http://{local}/mcp");
    std::io::stdout().flush()?;
    // `with_connect_info` makes `ConnectInfo<SocketAddr>` available to `peer_addr`.
    axum::serve(
        listener,
        app.into_make_service_with_connect_info::<SocketAddr>(),
    )
    .await?;
    Ok(())
}
