//! The message-stream contract every transport speaks, and an in-memory transport pair.
//!
//! A transport turns bytes into a stream of [`TransportMessage`]s (a [`MessageSource`]) and
//! takes outbound messages through a [`MessageSink`]. Each message carries [`MessageMeta`]:
//! the request it relates to, the HTTP request it came in on, and transport flags.

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use ferromcp_jsonrpc::{DecodeError, Message, RequestId};
use http::HeaderMap;
use tokio::sync::mpsc;

use crate::BoxFuture;
use crate::error::TransportClosed;
use crate::options::ResumptionHooks;

/// A message plus what the transport knows about it.
#[derive(Debug, Clone)]
pub struct TransportMessage {
    /// The JSON-RPC message.
    pub message: Message,
    /// Transport metadata.
    pub meta: MessageMeta,
}

impl TransportMessage {
    /// A message with the given metadata.
    pub fn new(message: Message, meta: MessageMeta) -> Self {
        Self { message, meta }
    }
}

impl From<Message> for TransportMessage {
    fn from(message: Message) -> Self {
        Self {
            message,
            meta: MessageMeta::default(),
        }
    }
}

/// Transport metadata carried with a message, in either direction.
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct MessageMeta {
    /// Outbound: the inbound request this message belongs to (its response, or a request or
    /// notification sent while handling it), so HTTP can put it on that request's stream.
    /// Inbound: the request of this side whose response stream the message came on (an HTTP
    /// client reading a POST's SSE stream), offered to
    /// [`Handler::intercept_related_notification`](crate::Handler::intercept_related_notification).
    pub related_request_id: Option<RequestId>,
    /// Inbound: the parts of the HTTP request the message came in.
    pub http: Option<Arc<http::request::Parts>>,
    /// Inbound: overrides whether the peer can be sent requests while this message is handled
    /// (an HTTP JSON-response or stateless exchange has no back channel).
    pub can_send_requests: Option<bool>,
    /// Outbound: close the SSE stream this message is written to, after writing it.
    pub close_sse_stream: bool,
    /// Outbound: extra HTTP headers for the request carrying this message (HTTP client).
    pub headers: Option<HeaderMap>,
    /// Outbound: resumption hooks for the request carrying this message (HTTP client).
    pub resumption: Option<Arc<dyn ResumptionHooks>>,
}

impl MessageMeta {
    /// Metadata relating a message to an inbound request.
    pub fn related_to(id: RequestId) -> Self {
        Self {
            related_request_id: Some(id),
            ..Self::default()
        }
    }
}

impl fmt::Debug for MessageMeta {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MessageMeta")
            .field("related_request_id", &self.related_request_id)
            .field("http", &self.http.as_ref().map(|p| &p.uri))
            .field("can_send_requests", &self.can_send_requests)
            .field("close_sse_stream", &self.close_sse_stream)
            .field("headers", &self.headers)
            .field("resumption", &self.resumption.is_some())
            .finish()
    }
}

/// One item of an inbound stream: a message, or a frame that failed to decode.
pub type Inbound = Result<TransportMessage, DecodeError>;

/// The inbound half of a transport.
///
/// `recv` need not be cancel-safe: the dispatcher keeps a pending `recv` future alive until it
/// completes, and drops it only when the connection shuts down.
pub trait MessageSource: Send + 'static {
    /// The next inbound item; `None` at end of stream.
    fn recv(&mut self) -> impl Future<Output = Option<Inbound>> + Send;
}

/// The outbound half of a transport, shared by every task that sends on the connection.
pub trait MessageSink: Send + Sync + 'static {
    /// Writes one message; waits while the transport applies backpressure.
    fn send(&self, msg: TransportMessage) -> BoxFuture<'_, Result<(), TransportClosed>>;
}

impl<S: MessageSink + ?Sized> MessageSink for Arc<S> {
    fn send(&self, msg: TransportMessage) -> BoxFuture<'_, Result<(), TransportClosed>> {
        (**self).send(msg)
    }
}

/// The inbound half of an in-memory transport.
#[derive(Debug)]
pub struct MemorySource {
    rx: mpsc::Receiver<Inbound>,
}

/// The outbound half of an in-memory transport.
#[derive(Debug, Clone)]
pub struct MemorySink {
    tx: mpsc::Sender<Inbound>,
}

impl MemorySink {
    /// Delivers a decode failure to the other end, as a transport that failed to frame a
    /// message would.
    pub async fn send_decode_error(&self, e: DecodeError) -> Result<(), TransportClosed> {
        self.tx.send(Err(e)).await.map_err(|_| TransportClosed)
    }
}

impl MessageSource for MemorySource {
    async fn recv(&mut self) -> Option<Inbound> {
        self.rx.recv().await
    }
}

impl MessageSink for MemorySink {
    fn send(&self, msg: TransportMessage) -> BoxFuture<'_, Result<(), TransportClosed>> {
        Box::pin(async move { self.tx.send(Ok(msg)).await.map_err(|_| TransportClosed) })
    }
}

/// One end of an in-memory transport: what the other end sends arrives at `source`.
#[derive(Debug)]
#[non_exhaustive]
pub struct MemoryTransport {
    /// Messages from the other end.
    pub source: MemorySource,
    /// Messages to the other end.
    pub sink: MemorySink,
}

/// Two connected in-memory transport ends. Each direction is a bounded channel of `capacity`
/// messages (at least 1); messages move without serialization. The stream ends for one side
/// when every sink of the other side is dropped.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// use ferromcp_dispatch::{memory_pair, MessageSink, MessageSource};
/// use ferromcp_jsonrpc::{Message, Notification};
///
/// let (a, mut b) = memory_pair(16);
/// a.sink.send(Message::from(Notification::new("ping", None)).into()).await.unwrap();
/// let got = b.source.recv().await.unwrap().unwrap();
/// assert_eq!(got.message.method(), Some("ping"));
/// # });
/// ```
pub fn memory_pair(capacity: usize) -> (MemoryTransport, MemoryTransport) {
    let (a_tx, b_rx) = mpsc::channel(capacity.max(1));
    let (b_tx, a_rx) = mpsc::channel(capacity.max(1));
    (
        MemoryTransport {
            source: MemorySource { rx: a_rx },
            sink: MemorySink { tx: a_tx },
        },
        MemoryTransport {
            source: MemorySource { rx: b_rx },
            sink: MemorySink { tx: b_tx },
        },
    )
}
