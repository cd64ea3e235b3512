//! A test kit for users of ferromcp: connect a [`Client`] to an [`McpServer`] in-process, in
//! either era, with no transport — the way ferromcp's own tests do it.
//!
//! ```
//! use ferromcp::testing::connect;
//! use ferromcp::{Era, McpServer};
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let server = McpServer::builder("t", "1").tool("hi", || async { "hello" }).build().unwrap();
//! for era in [Era::Handshake, Era::Modern] {
//!     let client = connect(&server, era).await.unwrap();
//!     let result = client.call_tool("hi", serde_json::json!({})).await.unwrap();
//!     assert_eq!(result.content[0].as_text(), Some("hello"));
//! }
//! # });
//! ```

use std::sync::Arc;

use ferromcp_client::{Client, ClientBuilder, ClientError, Connected, Lifecycle};
use ferromcp_server::McpServer;
use ferromcp_types::Era;

/// Connects a client to `server` in-process, in `era` (the handshake era runs `initialize`;
/// the modern era `server/discover` and the per-request envelope). Must be called inside a
/// tokio runtime.
pub async fn connect(server: &McpServer, era: Era) -> Result<Client, ClientError> {
    connect_with(server, era, Client::builder()).await
}

/// Like [`connect`], with a client configured by `builder` (handlers for sampling,
/// elicitation and roots, a log level…). The lifecycle is set from `era`.
pub async fn connect_with(
    server: &McpServer,
    era: Era,
    builder: ClientBuilder,
) -> Result<Client, ClientError> {
    let lifecycle = match era {
        Era::Handshake => Lifecycle::Handshake,
        Era::Modern => Lifecycle::Modern,
    };
    let dispatcher = server.server().in_process(era);
    builder
        .lifecycle(lifecycle)
        .connect(Connected::new(Arc::new(dispatcher)))
        .await
}
