//! Shared harness: ferromcp servers over in-memory streams, in either era.

#![allow(
    dead_code,
    reason = "each test binary uses a different part of the harness"
)]
#![allow(clippy::unwrap_used, clippy::panic, unreachable_pub)]

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use ferromcp_client::{Client, ClientBuilder, Connected, Lifecycle};
use ferromcp_dispatch::{
    Dispatcher, DispatcherConfig, Handler, JsonRpcDispatcher, MemoryTransport, Outbound,
    memory_pair,
};
use ferromcp_server::{
    Connection, Server, ServerBuilder, ServerRunner, StreamConfig, serve_stream,
};
use ferromcp_types::ProtocolVersion;
use ferromcp_types::mcp::methods::{ListTools, Ping};
use ferromcp_types::mcp::{
    EmptyResult, JsonObject, ListToolsResult, PaginatedRequestParams, RequestParams, Tool,
};
use serde_json::{Value, json};

/// How long any test may take before it counts as hung.
pub const LIMIT: Duration = Duration::from_secs(20);

/// Runs `f`, failing the test if it does not finish within [`LIMIT`].
pub async fn within<F: Future>(f: F) -> F::Output {
    match tokio::time::timeout(LIMIT, f).await {
        Ok(v) => v,
        Err(_) => panic!("timed out after {LIMIT:?}"),
    }
}

/// A JSON object from a `json!` literal.
pub fn obj(v: Value) -> JsonObject {
    match v {
        Value::Object(m) => m,
        other => panic!("not an object: {other}"),
    }
}

/// A server builder with a `ping` and a one-tool `tools/list`.
pub fn base(name: &str) -> ServerBuilder {
    Server::builder(name, "1.0.0")
        .on::<Ping, _, _, _>(|_ctx, _p: RequestParams| async { Ok(EmptyResult::new()) })
}

/// Serves `server` with `serve_stream` (both eras, locked by the first request) on one end of
/// an in-memory pair; returns the other end.
pub fn serve(server: Server) -> MemoryTransport {
    let (client, server_end) = memory_pair(64);
    tokio::spawn(async move {
        let _ = serve_stream(
            &server,
            server_end.source,
            server_end.sink,
            StreamConfig::default(),
        )
        .await;
    });
    client
}

/// A legacy (handshake-only) server: a handshake runner on a JSON-RPC dispatcher, which
/// answers the modern probe with an error.
pub fn serve_legacy(server: Server) -> MemoryTransport {
    let (client, server_end) = memory_pair(64);
    let dispatcher = JsonRpcDispatcher::new(
        server_end.source,
        server_end.sink,
        DispatcherConfig::default(),
    );
    let outbound: Arc<dyn Outbound> = Arc::new(dispatcher.clone());
    let connection = Connection::for_handshake(outbound, true, ProtocolVersion::LATEST_HANDSHAKE);
    let runner: Arc<dyn Handler> = Arc::new(ServerRunner::handshake(server, connection));
    tokio::spawn(async move {
        let _ = dispatcher.run(runner).await;
    });
    client
}

/// Connects a client built by `builder` to `server` over `serve_stream`.
pub async fn connect(builder: ClientBuilder, server: Server) -> Client {
    let end = serve(server);
    builder.connect_stream(end.source, end.sink).await.unwrap()
}

/// Connects in the given lifecycle mode with default settings.
pub async fn connect_mode(mode: Lifecycle, server: Server) -> Client {
    connect(Client::builder().lifecycle(mode), server).await
}

/// A raw server: any dispatcher handler, on a JSON-RPC dispatcher over an in-memory pair.
pub fn raw_server(handler: Arc<dyn Handler>) -> Connected {
    let (client, server_end) = memory_pair(64);
    let dispatcher = JsonRpcDispatcher::new(
        server_end.source,
        server_end.sink,
        DispatcherConfig::default(),
    );
    tokio::spawn(async move {
        let _ = dispatcher.run(handler).await;
    });
    Connected::new(Arc::new(JsonRpcDispatcher::new(
        client.source,
        client.sink,
        DispatcherConfig::default(),
    )))
}

/// A counter shared with a server handler.
#[derive(Clone, Default)]
pub struct Counter(Arc<AtomicUsize>);

impl Counter {
    /// Adds one, returning the new value.
    pub fn bump(&self) -> usize {
        self.0.fetch_add(1, Ordering::SeqCst) + 1
    }

    /// The current value.
    pub fn get(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

/// A server whose `tools/list` counts its calls and lists one tool.
pub fn counting_tools(builder: ServerBuilder, counter: Counter) -> ServerBuilder {
    builder.on::<ListTools, _, _, _>(move |_ctx, _p: PaginatedRequestParams| {
        let counter = counter.clone();
        async move {
            let n = counter.bump();
            Ok(ListToolsResult::new(vec![Tool::without_arguments(
                format!("tool-{n}"),
            )]))
        }
    })
}

/// `{"type":"object"}` as a schema.
pub fn object_schema() -> JsonObject {
    obj(json!({"type": "object"}))
}
