//! MCP server: the per-connection kernel, the low-level server, and the stdio transport.
//!
//! - [`Server`]: a table of method handlers, the server's info, capabilities derived from what
//!   is registered, middleware, cache hints and a lifespan.
//! - [`ServerRunner`]: the per-connection kernel that runs requests through the ladder
//!   (surface validation, `initialize`, handler lookup, the init gate, typed params, result
//!   shaping) on any dispatcher.
//! - [`Connection`] (per connection) and [`RequestPeer`] / [`RequestContext`] (per request).
//! - [`serve_stream`] serves both eras on one message stream, locking the era from the first
//!   request; the stdio transport builds on it.
//!
//! The Streamable HTTP transport is the crate `ferromcp-http-server`, and the embedded OAuth
//! authorization server `ferromcp-auth-server`: a stdio server compiles neither.
#![cfg_attr(docsrs, feature(doc_cfg))]

mod caller;
mod connection;
mod context;
mod deserialize_reason;
mod envelope;
mod handler_fn;
// The `elicit_schema` fuzz body needs the crate-private form builder: only in tests and in
// cargo-fuzz builds (`--cfg fuzzing`), never in the public API (see the module).
#[cfg(any(test, fuzzing))]
#[doc(hidden)]
pub mod fuzzing;
mod in_process;
pub mod jsonschema;
pub mod mcp_server;
pub mod middleware;
#[cfg(feature = "otel")]
pub mod otel;
mod principal;
pub mod request_state;
mod result_body;
mod result_shaping;
mod runner;
mod server;
mod stream;
pub mod tasks;
pub mod tool_headers;
pub mod uri_template;

pub use caller::{CallerId, PeerAddr};
pub use connection::{
    CLEANUP_TIMEOUT, Connection, DEFAULT_MAX_SUBSCRIPTION_URI_LEN, DEFAULT_MAX_SUBSCRIPTIONS,
    SubscriptionLimits, no_back_channel,
};
pub use context::{RequestContext, RequestPeer};
pub use mcp_server::{McpServer, McpServerBuilder};
pub use middleware::{McpParams, McpRequest, McpResultBody, Middleware, Next};
pub use principal::Principal;
pub use runner::ServerRunner;
pub use server::{
    BuildError, CACHEABLE_METHODS, CacheHint, DEFAULT_CLIENT_REQUEST_TIMEOUT, Server, ServerBuilder,
};
pub use stream::{
    DEFAULT_REPLAY_LIMIT, DEFAULT_STDIO_SHUTDOWN_GRACE, ServeError, StreamConfig,
    era_of_opening_request, serve_stream,
};
#[cfg(any(unix, windows))]
pub use stream::{serve_stdio, serve_stdio_with};

#[cfg(any(unix, windows))]
pub mod stdio;
