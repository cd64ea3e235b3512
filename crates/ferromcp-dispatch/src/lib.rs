//! MCP-agnostic dispatchers: the layer between MCP semantics and the wire.
//!
//! A dispatcher knows nothing of MCP. A request is a method name and a JSON payload; a result
//! is a JSON payload or an [`ErrorObject`](ferromcp_jsonrpc::ErrorObject). Inside it
//! sit JSON-RPC framing, id allocation and correlation, timeouts, cancellation both ways,
//! progress, and the single boundary where handler failures become wire errors.
//!
//! - [`Outbound`] sends requests and notifications; [`Dispatcher`] adds the run loop that
//!   serves the peer's messages with a [`Handler`].
//! - [`DispatchContext`] is what a handler gets: an `Outbound` bound to the inbound request,
//!   the request id, the transport's description, HTTP request parts, a cancellation signal
//!   and progress reporting.
//! - [`JsonRpcDispatcher`] speaks JSON-RPC 2.0 over the message-stream contract
//!   ([`MessageSource`], [`MessageSink`], [`TransportMessage`]) that every transport
//!   implements; [`memory_pair`] is an in-memory transport.
//! - [`DirectDispatcher`] is an in-process pair with no serialization.
//! - [`SingleExchange`] serves one request of a transport whose exchanges carry one request
//!   each (a 2026-07-28 or stateless HTTP POST), through the same error boundary.
//!
//! The only protocol methods this crate names are the JSON-RPC utilities it implements:
//! [`utility::CANCELLED`], [`utility::PROGRESS`] and `params._meta.progressToken`.
#![cfg_attr(docsrs, feature(doc_cfg))]

mod boundary;
pub mod codec;
mod context;
mod direct;
mod dispatcher;
mod error;
mod exchange;
mod handler;
mod jsonrpc;
mod options;
mod stream;
mod transport;
pub mod utility;
mod wait;

pub use context::{DispatchContext, DispatchContextBuilder, TransportInfo, TransportKind};
pub use direct::DirectDispatcher;
pub use dispatcher::{BoxFuture, Dispatcher, Outbound};
pub use error::{BoxError, HandlerError, Overloaded, RunError, SendRefused, TransportClosed};
pub use exchange::SingleExchange;
pub use handler::{FnHandler, Handler, handler_fn};
pub use jsonrpc::{
    CancelMode, DEFAULT_MAX_CONCURRENT_REQUESTS, DEFAULT_MAX_QUEUED_REQUESTS,
    DEFAULT_MAX_UNWRITTEN_ANSWERS, DispatcherConfig, InboundLoad, JsonRpcDispatcher,
};
pub use options::{
    CallOptions, IdCallback, KeepProgress, Progress, ProgressCallback, ResumptionHooks,
};
pub use stream::{
    DEFAULT_OUTBOUND_CAPACITY, LineSink, LineSource, LineTransportConfig, line_transport,
};
pub use transport::{
    Inbound, MemorySink, MemorySource, MemoryTransport, MessageMeta, MessageSink, MessageSource,
    TransportMessage, memory_pair,
};
