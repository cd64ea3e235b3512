//! The harness the kernel's integration tests share: a typed client over each transport the
//! kernel runs on, and a raw frame-level client for in-memory streams.

#![allow(
    dead_code,
    unreachable_pub,
    reason = "each test binary uses a different part of the harness"
)]

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use ferromcp_dispatch::{
    CallOptions, DirectDispatcher, Dispatcher, DispatcherConfig, Handler, HandlerError,
    JsonRpcDispatcher, MemorySink, MemorySource, MessageSink, MessageSource, Outbound,
    TransportMessage, handler_fn, memory_pair,
};
use ferromcp_server::{Connection, ServeError, Server, ServerRunner, StreamConfig, serve_stream};
use ferromcp_types::ProtocolVersion;
use ferromcp_types::jsonrpc::{ErrorCode, ErrorObject, Message, Notification, Payload, Request};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// How long any test may take before it counts as hung.
pub const LIMIT: Duration = Duration::from_secs(10);

/// Runs `f`, failing the test if it does not finish within [`LIMIT`].
pub async fn within<F: Future>(f: F) -> F::Output {
    match tokio::time::timeout(LIMIT, f).await {
        Ok(v) => v,
        Err(_) => panic!("timed out after {LIMIT:?}"),
    }
}

/// The params of a handshake `initialize` asking for `version`.
pub fn init_params(version: &str) -> Value {
    json!({
        "protocolVersion": version,
        "capabilities": {},
        "clientInfo": {"name": "kernel-tests", "version": "0.0.1"},
    })
}

/// The 2026-07-28 request envelope (`params._meta`), with empty client capabilities.
pub fn envelope() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    })
}

/// `params` with the 2026-07-28 envelope merged into its `_meta`.
pub fn modern(params: Value) -> Value {
    modern_with(params, envelope())
}

/// `params` with `meta` merged into its `_meta`.
pub fn modern_with(mut params: Value, meta: Value) -> Value {
    let Value::Object(map) = &mut params else {
        panic!("params must be an object");
    };
    let slot = map.entry("_meta").or_insert_with(|| json!({}));
    if let (Value::Object(slot), Value::Object(meta)) = (slot, meta) {
        slot.extend(meta);
    }
    params
}

/// The transports the ladder is checked on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// `DirectDispatcher::pair()`, server side `ServerRunner::handshake`.
    Direct,
    /// `JsonRpcDispatcher` on `memory_pair()`, server side `ServerRunner::handshake`.
    JsonRpc,
    /// `JsonRpcDispatcher` client against `serve_stream` on `memory_pair()`.
    Stream,
}

impl Transport {
    /// Every transport.
    pub const ALL: [Transport; 3] = [Transport::Direct, Transport::JsonRpc, Transport::Stream];
}

/// A notification the client received: method and params.
pub type Received = (String, Option<Value>);

/// The client side's handler: answers `roots/list`, records notifications.
fn client_handler(tx: mpsc::UnboundedSender<Received>) -> Arc<dyn Handler> {
    handler_fn(|_ctx, method, _params| async move {
        match method.as_str() {
            "roots/list" => Ok(Payload::from(json!({"roots": []}))),
            _ => Err(HandlerError::from(ErrorObject::method_not_found(&method))),
        }
    })
    .on_notify(move |_ctx, method, params| {
        let tx = tx.clone();
        async move {
            let _ = tx.send((method, params.and_then(|p| p.into_value().ok())));
        }
    })
    .into_arc()
}

/// A typed client connected to a server over one [`Transport`].
pub struct Client {
    /// The transport in use.
    pub transport: Transport,
    outbound: Arc<dyn Outbound>,
    closer: Box<dyn Fn() + Send + Sync>,
    /// Notifications the server sent.
    pub notifications: mpsc::UnboundedReceiver<Received>,
    /// The server's runner (not for [`Transport::Stream`]).
    pub runner: Option<Arc<ServerRunner>>,
    server: JoinHandle<()>,
}

/// Connects a client to `server` over `transport`.
pub async fn connect(transport: Transport, server: &Server) -> Client {
    let (tx, notifications) = mpsc::unbounded_channel();
    let handler = client_handler(tx);
    match transport {
        Transport::Direct => {
            let (client, srv) = DirectDispatcher::pair();
            let conn = Connection::for_handshake(
                Arc::new(srv.clone()),
                true,
                ProtocolVersion::LATEST_HANDSHAKE,
            );
            let runner = Arc::new(ServerRunner::handshake(server.clone(), conn));
            let r = runner.clone();
            let server = tokio::spawn(async move {
                let _ = srv.run(r.clone()).await;
                r.close().await;
            });
            let c = client.clone();
            tokio::spawn(async move {
                let _ = c.run(handler).await;
            });
            let closing = client.clone();
            Client {
                transport,
                outbound: Arc::new(client),
                closer: Box::new(move || closing.close()),
                notifications,
                runner: Some(runner),
                server,
            }
        }
        Transport::JsonRpc | Transport::Stream => {
            let (a, b) = memory_pair(64);
            let (server, runner) = if transport == Transport::JsonRpc {
                let srv = JsonRpcDispatcher::new(b.source, b.sink, DispatcherConfig::default());
                let conn = Connection::for_handshake(
                    Arc::new(srv.clone()),
                    true,
                    ProtocolVersion::LATEST_HANDSHAKE,
                );
                let runner = Arc::new(ServerRunner::handshake(server.clone(), conn));
                let r = runner.clone();
                let task = tokio::spawn(async move {
                    let _ = srv.run(r.clone()).await;
                    r.close().await;
                });
                (task, Some(runner))
            } else {
                let server = server.clone();
                let task = tokio::spawn(async move {
                    let _ = serve_stream(&server, b.source, b.sink, StreamConfig::default()).await;
                });
                (task, None)
            };
            let client = JsonRpcDispatcher::new(a.source, a.sink, DispatcherConfig::default());
            let c = client.clone();
            tokio::spawn(async move {
                let _ = c.run(handler).await;
            });
            let closing = client.clone();
            Client {
                transport,
                outbound: Arc::new(client),
                closer: Box::new(move || closing.close()),
                notifications,
                runner,
                server,
            }
        }
    }
}

impl Client {
    /// Sends a request and waits for its answer.
    pub async fn call(&self, method: &str, params: Option<Value>) -> Result<Value, ErrorObject> {
        let answer =
            self.outbound
                .send_request(method, params.map(Payload::from), CallOptions::new());
        within(answer)
            .await
            .map(|p| p.into_value().unwrap_or(Value::Null))
    }

    /// Sends a request and returns its answer as the client's dispatcher got it (raw text or
    /// a value).
    pub async fn payload(
        &self,
        method: &str,
        params: Option<Value>,
    ) -> Result<Payload, ErrorObject> {
        let answer =
            self.outbound
                .send_request(method, params.map(Payload::from), CallOptions::new());
        within(answer).await
    }

    /// Sends a request that must fail, and returns its error.
    pub async fn fail(&self, method: &str, params: Option<Value>) -> ErrorObject {
        match self.call(method, params).await {
            Ok(v) => panic!(
                "{method} on {:?}: expected an error, got {v}",
                self.transport
            ),
            Err(e) => e,
        }
    }

    /// Sends a request that must succeed, and returns its result.
    pub async fn ok(&self, method: &str, params: Option<Value>) -> Value {
        match self.call(method, params).await {
            Ok(v) => v,
            Err(e) => panic!(
                "{method} on {:?}: expected a result, got {e:?}",
                self.transport
            ),
        }
    }

    /// Sends a notification.
    pub async fn notify(&self, method: &str, params: Option<Value>) {
        within(self.outbound.notify(method, params.map(Payload::from))).await;
    }

    /// The handshake: `initialize` at `version`, then `notifications/initialized`. Returns the
    /// `initialize` result.
    pub async fn initialize_at(&self, version: &str) -> Value {
        let result = self.ok("initialize", Some(init_params(version))).await;
        self.notify("notifications/initialized", None).await;
        result
    }

    /// The handshake at the latest handshake version.
    pub async fn initialize(&self) -> Value {
        self.initialize_at(ProtocolVersion::LATEST_HANDSHAKE.as_str())
            .await
    }

    /// The next notification the server sent.
    pub async fn next_notification(&mut self) -> Received {
        within(self.notifications.recv())
            .await
            .expect("the client's notification channel closed")
    }

    /// Closes the connection and waits until the server side has finished (cleanup included).
    pub async fn shutdown(self) {
        let Client {
            outbound,
            closer,
            server,
            ..
        } = self;
        closer();
        drop(closer);
        drop(outbound);
        within(server).await.expect("the server task panicked");
    }
}

/// Asserts that `e` carries `code`.
#[track_caller]
pub fn assert_code(e: &ErrorObject, code: ErrorCode) {
    assert_eq!(e.code, code, "unexpected error {e:?}");
}

/// A frame-level client on one end of an in-memory stream.
pub struct Raw {
    /// Frames to the server.
    pub sink: MemorySink,
    /// Frames from the server.
    pub source: MemorySource,
    /// Notifications (and server requests) read while waiting for answers, in order.
    pub seen: Vec<TransportMessage>,
}

/// Serves `server` with [`serve_stream`] on an in-memory stream; returns the client's end and
/// the serving task.
pub fn serve_raw(server: &Server) -> (Raw, JoinHandle<Result<(), ServeError>>) {
    let (a, b) = memory_pair(64);
    let server = server.clone();
    let task = tokio::spawn(async move {
        serve_stream(&server, b.source, b.sink, StreamConfig::default()).await
    });
    (Raw::new(a.sink, a.source), task)
}

/// Serves `server` with a handshake [`ServerRunner`] on a [`JsonRpcDispatcher`] over an
/// in-memory stream; returns the client's end, the runner and the serving task.
pub fn handshake_raw(server: &Server) -> (Raw, Arc<ServerRunner>, JoinHandle<()>) {
    let (a, b) = memory_pair(64);
    let srv = JsonRpcDispatcher::new(b.source, b.sink, DispatcherConfig::default());
    let conn = Connection::for_handshake(
        Arc::new(srv.clone()),
        true,
        ProtocolVersion::LATEST_HANDSHAKE,
    );
    let runner = Arc::new(ServerRunner::handshake(server.clone(), conn));
    let r = runner.clone();
    let task = tokio::spawn(async move {
        let _ = srv.run(r.clone()).await;
        r.close().await;
    });
    (Raw::new(a.sink, a.source), runner, task)
}

impl Raw {
    /// A raw client on the given ends.
    pub fn new(sink: MemorySink, source: MemorySource) -> Self {
        Self {
            sink,
            source,
            seen: Vec::new(),
        }
    }

    /// Sends one frame.
    pub async fn send(&self, message: Message) {
        within(self.sink.send(message.into()))
            .await
            .expect("the server's end is gone");
    }

    /// Sends a request frame.
    pub async fn request(&self, id: i64, method: &str, params: Option<Value>) {
        self.send(Message::Request(Request::new(
            id,
            method,
            params.map(Payload::from),
        )))
        .await;
    }

    /// Sends a notification frame.
    pub async fn notify(&self, method: &str, params: Option<Value>) {
        self.send(Message::Notification(Notification::new(
            method,
            params.map(Payload::from),
        )))
        .await;
    }

    /// The next frame from the server.
    pub async fn next(&mut self) -> TransportMessage {
        within(self.source.recv())
            .await
            .expect("the server closed the stream")
            .expect("the server sent an undecodable frame")
    }

    /// Waits for the answer to request `id`, keeping the notifications read on the way in
    /// [`Raw::seen`]. An answer to any other request fails the test.
    pub async fn answer(&mut self, id: i64) -> Result<Value, ErrorObject> {
        loop {
            let frame = self.next().await;
            match &frame.message {
                Message::Response(r) => {
                    assert_eq!(r.id, id.into(), "answer to an unexpected request");
                    return Ok(r.result.clone().into_value().unwrap_or(Value::Null));
                }
                Message::Error(e) => {
                    assert_eq!(e.id, Some(id.into()), "error for an unexpected request");
                    return Err(e.error.clone());
                }
                _ => self.seen.push(frame),
            }
        }
    }

    /// Sends a request and waits for its answer.
    pub async fn call(
        &mut self,
        id: i64,
        method: &str,
        params: Option<Value>,
    ) -> Result<Value, ErrorObject> {
        self.request(id, method, params).await;
        self.answer(id).await
    }

    /// Sends a request that must succeed.
    pub async fn ok(&mut self, id: i64, method: &str, params: Option<Value>) -> Value {
        match self.call(id, method, params).await {
            Ok(v) => v,
            Err(e) => panic!("{method}: expected a result, got {e:?}"),
        }
    }

    /// Sends a request that must fail.
    pub async fn fail(&mut self, id: i64, method: &str, params: Option<Value>) -> ErrorObject {
        match self.call(id, method, params).await {
            Ok(v) => panic!("{method}: expected an error, got {v}"),
            Err(e) => e,
        }
    }

    /// The methods of the notifications seen so far, emptying [`Raw::seen`].
    pub fn take_seen_methods(&mut self) -> Vec<String> {
        self.seen
            .drain(..)
            .filter_map(|f| f.message.method().map(str::to_owned))
            .collect()
    }
}
