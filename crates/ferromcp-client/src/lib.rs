//! MCP client: connect to any MCP server over a stdio child process, a message stream or any
//! dispatcher, in either protocol era.
//!
//! - [`Client`] / [`ClientBuilder`]: the lifecycle ([`Lifecycle::Handshake`] `initialize`,
//!   [`Lifecycle::Modern`] `server/discover` with the per-request envelope, or
//!   [`Lifecycle::Auto`], which probes and falls back), typed calls for every client→server
//!   method, pagination helpers, per-call [`RequestOptions`] (progress, timeouts, cache mode).
//! - Handlers for what the server asks ([`SamplingHandler`], [`ElicitationHandler`],
//!   [`RootsHandler`], [`NotificationHandler`]): they answer handshake-era server→client
//!   requests and the input requests of 2026-07-28 multi-round calls, which the client drives
//!   to completion (see [`multiround`]).
//! - A response cache honouring the 2026-07-28 cache hints ([`CacheConfig`], [`CacheMode`]).
//! - Change subscriptions ([`Client::listen`], [`listen`]): `subscriptions/listen` at
//!   2026-07-28, `resources/subscribe` and the session's notifications at 2025-11-25; their
//!   events evict the cache.
//! - Tasks ([`tasks`], [`ClientBuilder::tasks`]): tool calls that run as tasks in both eras
//!   (2025-11-25 core tasks, the 2026-07-28 `io.modelcontextprotocol/tasks` extension),
//!   awaited by polling with backoff, with input answered by the handlers; [`TaskHandle`].
//! - Transports ([`transport`]): [`StdioTransport`], [`StreamTransport`], or any ready
//!   dispatcher as [`Connected`]; Streamable HTTP in both eras with `HttpTransport` (feature
//!   `http`, on by default; `https` adds rustls; `native-roots` the platform's certificate
//!   store). Proxies (the environment's by default), private roots, client certificates,
//!   connect and read timeouts and default headers: `transport::http::HttpClientConfig`;
//!   connections of one's own (Unix sockets, tunnels, in-memory pipes):
//!   `transport::http::Connector`.
//! - OAuth 2.1 authorization for the HTTP transport (feature `oauth`, off by default):
//!   `oauth::OAuthProvider`, attached with `HttpTransport::auth`.
//!
//! ```no_run
//! # async fn demo() -> Result<(), ferromcp_client::ClientError> {
//! use ferromcp_client::{Client, StdioTransport};
//! use serde_json::json;
//!
//! let client = Client::builder()
//!     .connect(StdioTransport::new("ferromcp").arg("serve"))
//!     .await?;
//! let sum = client.call_tool("add", json!({"a": 1, "b": 2})).await?;
//! assert_eq!(sum.content[0].as_text(), Some("3"));
//! client.shutdown().await;
//! # Ok(()) }
//! ```
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod apps;
mod builder;
pub mod cache;
mod calls;
mod client;
mod error;
pub mod handlers;
pub mod hosted_tasks;
pub mod lifecycle;
pub mod listen;
pub mod multiround;
#[cfg(feature = "oauth")]
pub mod oauth;
mod options;
#[cfg(feature = "otel")]
pub mod otel;
mod pagination;
mod raw;
#[cfg(feature = "skills")]
pub mod skills;
pub mod tasks;
pub mod transport;

pub use builder::{
    ClientBuilder, DEFAULT_MAX_TOTAL_TIMEOUT, DEFAULT_PROBE_TIMEOUT, DEFAULT_REQUEST_TIMEOUT,
};
pub use cache::{CacheConfig, CacheMode, MAX_CACHE_TTL};
pub use client::{Client, SessionInfo};
pub use error::ClientError;
pub use handlers::{
    ElicitationHandler, NotificationHandler, RootsHandler, SamplingHandler, ServerNotification,
};
pub use hosted_tasks::HostedTaskConfig;
pub use lifecycle::Lifecycle;
pub use listen::{ListenEnd, ListenEvent, ListenOptions, Subscription};
pub use multiround::DEFAULT_MAX_ROUNDS;
pub use options::{LogCallback, RequestOptions};
pub use pagination::DEFAULT_MAX_PAGES;
pub use tasks::{OnceOrTask, TaskConfig, TaskHandle, TaskInfo, TaskState, ToolCall};
#[cfg(feature = "http")]
pub use transport::HttpTransport;
pub use transport::{
    Connected, NetworkPeer, StderrMode, StdioTransport, StreamTransport, Transport,
    TransportShutdown,
};
