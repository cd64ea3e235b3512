//! The transport seam: anything that yields a [`Dispatcher`] can carry a client.
//!
//! A [`Transport`] opens into a [`Connected`]: the dispatcher the client sends through and
//! serves the server's messages with, plus an optional [`TransportShutdown`] hook that runs
//! when the client shuts down (the stdio child's close-wait-terminate-kill sequence). The
//! transports here are:
//!
//! - [`StdioTransport`]: a child process speaking newline-delimited JSON on its stdin/stdout;
//! - [`StreamTransport`]: any [`MessageSource`] + [`MessageSink`] pair (in-memory streams,
//!   sockets framed with `line_transport`), run by a [`JsonRpcDispatcher`];
//! - [`Connected`] itself: any ready [`Dispatcher`], such as the client half of a
//!   [`DirectDispatcher`](ferromcp_dispatch::DirectDispatcher) pair.
//!
//! - [`HttpTransport`] (feature `http`): Streamable HTTP, both eras (see [`http`]). It plugs
//!   in the same way: a dispatcher over its own message stream, and a shutdown hook that ends
//!   the session.

#[cfg(feature = "http")]
pub mod http;
mod stdio;

use std::fmt;
use std::sync::Arc;

use ferromcp_dispatch::{
    BoxFuture, Dispatcher, DispatcherConfig, JsonRpcDispatcher, MessageSink, MessageSource,
    TransportInfo, TransportKind,
};

use crate::error::ClientError;

#[cfg(feature = "http")]
pub use self::http::HttpTransport;
pub use stdio::{DEFAULT_SHUTDOWN_GRACE, StderrMode, StdioTransport};

/// Runs when the client shuts down, after the dispatcher is closed: ends the transport
/// (closes a child's stdin and waits for it, ends an HTTP session, ...). Must finish in
/// bounded time.
pub trait TransportShutdown: Send + Sync + 'static {
    /// Ends the transport.
    fn shutdown(&self) -> BoxFuture<'_, ()>;
}

/// Something a client can connect over.
pub trait Transport: Send + 'static {
    /// Opens the transport: starts the process, opens the stream, builds the dispatcher.
    fn open(self) -> BoxFuture<'static, Result<Connected, ClientError>>;
}

/// An open transport: the dispatcher the client runs on, and how to shut the transport down.
///
/// It is itself a [`Transport`] (it opens into itself), so a ready dispatcher can be handed to
/// [`ClientBuilder::connect`](crate::ClientBuilder::connect) directly.
///
/// ```
/// use std::sync::Arc;
/// use ferromcp_client::Connected;
/// use ferromcp_dispatch::DirectDispatcher;
///
/// let (client_half, _server_half) = DirectDispatcher::pair();
/// let connected = Connected::new(Arc::new(client_half));
/// # let _ = connected;
/// ```
#[must_use]
pub struct Connected {
    pub(crate) dispatcher: Arc<dyn Dispatcher>,
    pub(crate) shutdown: Option<Box<dyn TransportShutdown>>,
    pub(crate) network: NetworkPeer,
    /// Reads the transport's session id (the handshake-era `Mcp-Session-Id`), for the
    /// `mcp.session.id` of the client's spans (feature `otel`).
    #[cfg(feature = "otel")]
    pub(crate) session_id: Option<SessionIdSource>,
}

/// Reads a transport's current session id, when it has one.
#[cfg(feature = "otel")]
pub(crate) type SessionIdSource = Arc<dyn Fn() -> Option<String> + Send + Sync>;

/// How a transport reaches the server, as the OpenTelemetry semantic conventions for MCP
/// describe it: the client's spans and metrics carry these (`network.transport`,
/// `network.protocol.name`, `network.protocol.version`, `server.address`, `server.port`).
/// The stdio and Streamable HTTP transports fill it in; a custom transport may, with
/// [`Connected::with_network`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct NetworkPeer {
    /// `network.transport`: `pipe` for stdio, `tcp` for HTTP.
    pub transport: Option<&'static str>,
    /// `network.protocol.name`: `http` for Streamable HTTP.
    pub protocol: Option<&'static str>,
    /// `network.protocol.version`: the HTTP version.
    pub protocol_version: Option<&'static str>,
    /// `server.address`: the server's host.
    pub server_address: Option<String>,
    /// `server.port`: the server's port.
    pub server_port: Option<u16>,
}

impl NetworkPeer {
    /// A child process's standard input and output.
    pub fn pipe() -> Self {
        Self {
            transport: Some("pipe"),
            ..Self::default()
        }
    }

    /// HTTP/1.1 over TCP to `host`:`port`.
    pub fn http(host: impl Into<String>, port: u16) -> Self {
        Self {
            transport: Some("tcp"),
            protocol: Some("http"),
            protocol_version: Some("1.1"),
            server_address: Some(host.into()),
            server_port: Some(port),
        }
    }
}

impl Connected {
    /// A transport that is just a dispatcher: shutting down closes it.
    pub fn new(dispatcher: Arc<dyn Dispatcher>) -> Self {
        Self {
            dispatcher,
            shutdown: None,
            network: NetworkPeer::default(),
            #[cfg(feature = "otel")]
            session_id: None,
        }
    }

    /// Says how to read the transport's session id (for the client's spans).
    #[cfg(all(feature = "otel", feature = "http"))]
    pub(crate) fn with_session_id(mut self, source: SessionIdSource) -> Self {
        self.session_id = Some(source);
        self
    }

    /// Says how the transport reaches the server (see [`NetworkPeer`]).
    pub fn with_network(mut self, network: NetworkPeer) -> Self {
        self.network = network;
        self
    }

    /// Adds the hook that ends the transport when the client shuts down.
    pub fn with_shutdown(mut self, hook: impl TransportShutdown) -> Self {
        self.shutdown = Some(Box::new(hook));
        self
    }

    /// The dispatcher.
    pub fn dispatcher(&self) -> &Arc<dyn Dispatcher> {
        &self.dispatcher
    }

    /// Closes the dispatcher and runs the shutdown hook (for a transport that was opened but
    /// never handed to a client).
    pub async fn close(self) {
        self.dispatcher.close();
        if let Some(hook) = self.shutdown {
            hook.shutdown().await;
        }
    }
}

impl fmt::Debug for Connected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Connected")
            .field("shutdown", &self.shutdown.is_some())
            .finish_non_exhaustive()
    }
}

impl Transport for Connected {
    fn open(self) -> BoxFuture<'static, Result<Connected, ClientError>> {
        Box::pin(std::future::ready(Ok(self)))
    }
}

/// A message-stream pair run by a [`JsonRpcDispatcher`].
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// use ferromcp_client::StreamTransport;
/// use ferromcp_dispatch::memory_pair;
///
/// let (client_end, _server_end) = memory_pair(64);
/// let transport = StreamTransport::new(client_end.source, client_end.sink);
/// # let _ = transport;
/// # });
/// ```
pub struct StreamTransport<S, K> {
    source: S,
    sink: K,
    config: DispatcherConfig,
}

impl<S: MessageSource, K: MessageSink> StreamTransport<S, K> {
    /// A transport over `source` and `sink`, described to handlers as in-memory.
    pub fn new(source: S, sink: K) -> Self {
        Self {
            source,
            sink,
            config: DispatcherConfig::default()
                .transport(TransportInfo::new(TransportKind::InMemory, true)),
        }
    }

    /// Sets the dispatcher's configuration (concurrency bound, transport description).
    #[must_use]
    pub fn config(mut self, config: DispatcherConfig) -> Self {
        self.config = config;
        self
    }
}

impl<S, K> fmt::Debug for StreamTransport<S, K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StreamTransport")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl<S: MessageSource, K: MessageSink> Transport for StreamTransport<S, K> {
    fn open(self) -> BoxFuture<'static, Result<Connected, ClientError>> {
        let dispatcher = JsonRpcDispatcher::new(self.source, self.sink, self.config);
        Box::pin(std::future::ready(Ok(Connected::new(Arc::new(dispatcher)))))
    }
}
