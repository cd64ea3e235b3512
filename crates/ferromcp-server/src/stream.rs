//! Serving both eras on one message stream (stdio, in-memory): the first request decides and
//! locks the era for the connection.

use std::collections::VecDeque;
use std::fmt;
use std::sync::Arc;

use ferromcp_dispatch::{
    BoxError, Dispatcher, DispatcherConfig, Inbound, JsonRpcDispatcher, MessageSink, MessageSource,
    Outbound, TransportInfo, TransportKind, TransportMessage,
};
use ferromcp_types::jsonrpc::{Message, Payload};
use ferromcp_types::mcp::methods;
use ferromcp_types::{Era, ProtocolVersion};
use serde::Deserialize;
use serde::de::IgnoredAny;

use crate::connection::Connection;
use crate::runner::ServerRunner;
use crate::server::Server;

/// How many frames that arrive before the first request are kept and replayed into the chosen
/// loop; later ones are dropped (with a debug log).
pub const DEFAULT_REPLAY_LIMIT: usize = 8;

/// Settings of [`serve_stream`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct StreamConfig {
    /// The dispatcher's settings (concurrency, cancellation mode, shutdown grace).
    pub dispatcher: DispatcherConfig,
    /// The kind of transport, as handlers see it.
    pub kind: TransportKind,
    /// How many frames before the first request are replayed (default
    /// [`DEFAULT_REPLAY_LIMIT`]).
    pub replay_limit: usize,
}

impl Default for StreamConfig {
    fn default() -> Self {
        Self {
            dispatcher: DispatcherConfig::default(),
            kind: TransportKind::InMemory,
            replay_limit: DEFAULT_REPLAY_LIMIT,
        }
    }
}

impl StreamConfig {
    /// Sets the dispatcher's settings.
    #[must_use]
    pub fn dispatcher(mut self, config: DispatcherConfig) -> Self {
        self.dispatcher = config;
        self
    }

    /// Sets the transport kind handlers see.
    #[must_use]
    pub fn kind(mut self, kind: TransportKind) -> Self {
        self.kind = kind;
        self
    }

    /// Sets how many frames before the first request are replayed.
    #[must_use]
    pub fn replay_limit(mut self, n: usize) -> Self {
        self.replay_limit = n;
        self
    }
}

/// Why serving a stream stopped with an error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// The lifespan's set-up failed.
    #[error("server set-up failed: {0}")]
    Setup(BoxError),
    /// The dispatcher could not run.
    #[error(transparent)]
    Dispatch(#[from] ferromcp_dispatch::RunError),
    /// The transport could not be opened.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// Which era the opening request chose: modern if and only if it is not `initialize` and its
/// `params._meta` carries `io.modelcontextprotocol/protocolVersion`.
pub fn era_of_opening_request(method: &str, params: Option<&Payload>) -> Era {
    #[derive(Deserialize)]
    struct Params {
        #[serde(rename = "_meta")]
        meta: Option<MetaKeys>,
    }
    #[derive(Deserialize)]
    struct MetaKeys {
        #[serde(rename = "io.modelcontextprotocol/protocolVersion")]
        version: Option<IgnoredAny>,
    }
    if method == methods::INITIALIZE {
        return Era::Handshake;
    }
    let modern = params
        .and_then(|p| p.parse::<Params>().ok())
        .and_then(|p| p.meta)
        .is_some_and(|m| m.version.is_some());
    if modern { Era::Modern } else { Era::Handshake }
}

/// Tells a handshake-era connection about list changes (once it is initialized) and about
/// updates of the resources it subscribed to, until the connection ends.
pub(crate) async fn forward_changes(
    mut changes: tokio::sync::broadcast::Receiver<crate::server::Change>,
    connection: Connection,
) {
    use tokio::sync::broadcast::error::RecvError;
    loop {
        let (method, params) = match changes.recv().await {
            Ok(change) => change,
            Err(RecvError::Lagged(n)) => {
                tracing::debug!(missed = n, "a slow connection missed change notifications");
                continue;
            }
            Err(RecvError::Closed) => return,
        };
        if !connection.is_initialized() {
            continue;
        }
        if method == methods::NOTIFICATION_RESOURCES_UPDATED {
            let uri = params
                .as_ref()
                .and_then(|p| p.get("uri"))
                .and_then(|u| u.as_str());
            if !uri.is_some_and(|u| connection.is_subscribed(u)) {
                continue;
            }
        }
        connection.notify(method, params.map(Payload::from)).await;
    }
}

/// A source that yields buffered frames first, then the rest of the stream.
struct Replay<S> {
    buffered: VecDeque<Inbound>,
    rest: S,
}

impl<S: MessageSource> MessageSource for Replay<S> {
    async fn recv(&mut self) -> Option<Inbound> {
        match self.buffered.pop_front() {
            Some(item) => Some(item),
            None => self.rest.recv().await,
        }
    }
}

impl<S> fmt::Debug for Replay<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Replay")
            .field("buffered", &self.buffered.len())
            .finish_non_exhaustive()
    }
}

/// Serves `server` on one message stream until it ends, in whichever era the first request
/// chooses; the era is then locked for the life of the stream.
///
/// - Handshake era: one [`Connection`] driven by `initialize`; a later request that carries
///   the 2026-07-28 envelope is answered with -32600.
/// - Modern era: each request gets a connection built from its own envelope; `initialize` is
///   answered with -32022; server→client requests are refused and change notifications are
///   not sent outside `subscriptions/listen` streams.
///
/// Frames that arrive before the first request (at most `replay_limit`) are replayed into the
/// chosen loop; framing errors before it are answered at once. The lifespan is entered before
/// serving and left after.
pub async fn serve_stream<S, K>(
    server: &Server,
    mut source: S,
    sink: K,
    config: StreamConfig,
) -> Result<(), ServeError>
where
    S: MessageSource,
    K: MessageSink,
{
    let mut buffered = VecDeque::new();
    let era = loop {
        match source.recv().await {
            None => break Era::Handshake,
            Some(Ok(TransportMessage {
                message: Message::Request(r),
                meta,
            })) => {
                let era = era_of_opening_request(&r.method, r.params.as_ref());
                buffered.push_back(Ok(TransportMessage::new(Message::Request(r), meta)));
                break era;
            }
            Some(Err(e)) => {
                // Answer a framing error now, so a client does not wait on it.
                if sink
                    .send(Message::Error(e.to_response()).into())
                    .await
                    .is_err()
                {
                    return Ok(());
                }
            }
            Some(item) if buffered.len() < config.replay_limit => buffered.push_back(item),
            Some(_) => tracing::debug!("frame before the first request dropped (replay limit)"),
        }
    };
    let source = Replay {
        buffered,
        rest: source,
    };
    let can_send = era == Era::Handshake;
    let dispatcher_config = config
        .dispatcher
        .transport(TransportInfo::new(config.kind, can_send));
    let dispatcher = JsonRpcDispatcher::new(source, sink, dispatcher_config);
    let outbound: Arc<dyn Outbound> = Arc::new(dispatcher.clone());
    tracing::debug!(?era, "stream era locked");
    run_connection(server, &dispatcher, outbound, era, can_send).await
}

/// Serves one connection of `era` on a dispatcher, inside the server's lifespan: a
/// handshake-era connection (told about list changes and subscribed resource updates), or a
/// modern-era runner (change notifications travel only on `subscriptions/listen` streams).
/// `outbound` is the dispatcher as the connection's standalone channel.
pub(crate) async fn run_connection<D: Dispatcher>(
    server: &Server,
    dispatcher: &D,
    outbound: Arc<dyn Outbound>,
    era: Era,
    can_send: bool,
) -> Result<(), ServeError> {
    let mut forwarder = None;
    let runner = match era {
        Era::Handshake => {
            let connection =
                Connection::for_handshake(outbound, can_send, ProtocolVersion::LATEST_HANDSHAKE);
            let changes = server.subscribe_changes();
            forwarder = Some(tokio::spawn(forward_changes(changes, connection.clone())));
            ServerRunner::handshake(server.clone(), connection)
        }
        Era::Modern => ServerRunner::modern(server.clone(), outbound),
    };
    if let Err(e) = server.enter_lifespan().await {
        if let Some(task) = forwarder {
            task.abort();
        }
        return Err(ServeError::Setup(e));
    }
    let runner = Arc::new(runner);
    let result = dispatcher.run(runner.clone()).await;
    if let Some(task) = forwarder {
        task.abort();
    }
    runner.close().await;
    server.exit_lifespan().await;
    result.map_err(ServeError::from)
}

/// How long in-flight requests may run on after stdin closes before they are cancelled.
pub const DEFAULT_STDIO_SHUTDOWN_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// Serves `server` on the process's stdin and stdout (MCP "Transports › stdio") until stdin
/// closes, in whichever era the first request chooses.
///
/// While serving, stdout carries protocol messages only (see [`crate::stdio`]). At end of
/// input, in-flight requests get [`DEFAULT_STDIO_SHUTDOWN_GRACE`] to finish before they are
/// cancelled; queued output is flushed before this returns.
#[cfg(any(unix, windows))]
pub async fn serve_stdio(server: &Server) -> Result<(), ServeError> {
    let config = StreamConfig::default()
        .dispatcher(DispatcherConfig::default().shutdown_grace(DEFAULT_STDIO_SHUTDOWN_GRACE));
    serve_stdio_with(
        server,
        ferromcp_dispatch::LineTransportConfig::default(),
        config,
    )
    .await
}

/// [`serve_stdio`] with explicit line-framing and stream settings (the transport kind is
/// always stdio).
#[cfg(any(unix, windows))]
pub async fn serve_stdio_with(
    server: &Server,
    line: ferromcp_dispatch::LineTransportConfig,
    config: StreamConfig,
) -> Result<(), ServeError> {
    let (source, sink) = crate::stdio::stdio_transport(line)?;
    let flush = sink.clone();
    let result = serve_stream(server, source, sink, config.kind(TransportKind::Stdio)).await;
    // The peer may already be gone; there is nothing left to tell it then.
    let _ = flush.close().await;
    result
}
