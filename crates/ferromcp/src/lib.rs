//! ferromcp: a Rust SDK for the Model Context Protocol (MCP).
//!
//! Servers and clients for every protocol revision from 2024-11-05 to 2026-07-28 — the
//! handshake era and the handshake-less era — served from one binary over stdio, Streamable
//! HTTP and in-process.
//!
//! - [`types`]: JSON-RPC envelopes, every MCP type, [`ProtocolVersion`].
//! - [`dispatch`]: the MCP-agnostic dispatchers and codecs.
//! - [`server`] (feature `server`): [`McpServer`] (tools, resources and prompts as plain async
//!   functions), the low-level `Server`, the kernel, stdio and (feature `http`) Streamable HTTP.
//! - [`client`] (feature `client`): [`Client`] over stdio, message streams or in-process; its
//!   Streamable HTTP transport with feature `client-http` (plain HTTP) or `client-https` (also
//!   https, rustls). Feature `oauth` adds OAuth 2.1 authorization for that transport
//!   (`client::oauth`: discovery, registration, PKCE, a loopback browser redirect).
//!
//! Default features: `server`, `http` and `macros`, what a tool server over stdio or
//! Streamable HTTP needs; the client, TLS, Redis and OpenTelemetry are opt-in.
//! - [`testing`] (feature `test-util`): call a server in-process, in either era.
//! - [`compose`] (feature `compose`): mount servers into one, each under a name.
//!
//! A tool server in a few lines:
//!
//! ```no_run
//! use ferromcp::server::mcp_server::Args;
//! use ferromcp::McpServer;
//!
//! /// Two numbers.
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct AddArgs {
//!     /// The first number.
//!     a: f64,
//!     /// The second number.
//!     b: f64,
//! }
//!
//! async fn add(Args(args): Args<AddArgs>) -> String {
//!     (args.a + args.b).to_string()
//! }
//!
//! #[tokio::main(flavor = "current_thread")]
//! async fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let server = McpServer::builder("calculator", "1.0.0").tool("add", add).build()?;
//!     ferromcp::server::serve_stdio(server.server()).await?;
//!     Ok(())
//! }
//! ```
#![cfg_attr(docsrs, feature(doc_cfg))]

pub use ferromcp_dispatch as dispatch;
pub use ferromcp_types as types;
pub use ferromcp_types::{Era, ProtocolVersion};

/// The server: `ferromcp-server` (kernel, low-level and high-level server, stdio), with the
/// Streamable HTTP transport as [`server::http`] (feature `http`) and the embedded
/// authorization server as [`server::auth_server`] (feature `auth-server`).
#[cfg(feature = "server")]
pub mod server {
    /// The embedded OAuth 2.1 authorization server (`ferromcp-auth-server`).
    #[cfg(feature = "auth-server")]
    pub use ferromcp_auth_server as auth_server;
    /// The Streamable HTTP server (`ferromcp-http-server`).
    #[cfg(feature = "http")]
    pub use ferromcp_http_server as http;
    pub use ferromcp_server::*;
}
#[cfg(feature = "server")]
pub use ferromcp_server::{McpServer, RequestContext, Server};

#[cfg(feature = "client")]
pub use ferromcp_client as client;
#[cfg(feature = "client")]
pub use ferromcp_client::{Client, ClientError};

#[cfg(feature = "macros")]
pub use ferromcp_macros::ferromcp_tool as tool;

/// Server composition (`ferromcp-compose`): mount in-process and remote servers into one
/// under a name, in either era.
#[cfg(feature = "compose")]
pub use ferromcp_compose as compose;

#[cfg(feature = "test-util")]
pub mod testing;

/// The README's examples, compiled as doctests so they cannot rot.
#[cfg(all(
    doctest,
    feature = "http",
    feature = "client-http",
    feature = "macros",
    feature = "compose"
))]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;
