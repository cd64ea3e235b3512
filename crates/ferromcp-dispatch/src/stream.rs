//! A newline-delimited JSON transport over any byte stream: stdio, child processes, sockets.
//!
//! MCP "Transports › stdio": messages are JSON-RPC messages delimited by newlines and must not
//! contain embedded newlines. [`line_transport`] splits an [`AsyncRead`] and an [`AsyncWrite`]
//! into a [`LineSource`] and a [`LineSink`]:
//!
//! - The source reads many messages per `read` call (a reused buffer,
//!   [`LineTransportConfig::read_buffer_size`]), frames them with the bounded
//!   [`LineReader`], and decodes each frame in one pass. A line that is too long or does not
//!   decode becomes one `Err(DecodeError)` item, so the dispatcher can answer it (-32700 or
//!   -32600 with a null id), and the stream goes on.
//! - The sink puts messages on one bounded queue (backpressure when full). A single writer task
//!   drains everything queued into one buffer and writes and flushes it once per burst: one hop
//!   per message, one write per burst.

use std::fmt;

use ferromcp_jsonrpc::{DEFAULT_MAX_DEPTH, DecodeError, Decoder, Frame, Message};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot};

use crate::BoxFuture;
use crate::codec::{
    DEFAULT_MAX_LINE_LEN, DEFAULT_READ_CAPACITY, LineDecoder, LineError, LineReader, LineWriter,
};
use crate::error::TransportClosed;
use crate::transport::{Inbound, MessageSink, MessageSource, TransportMessage};

/// The default capacity of a [`LineSink`]'s outbound queue, in messages.
pub const DEFAULT_OUTBOUND_CAPACITY: usize = 1024;

/// The writer stops draining the queue into one burst once this many bytes are buffered, so
/// a queue of large messages is written in slices instead of being copied whole.
const MAX_BURST_BYTES: usize = 1024 * 1024;

/// The settings of a [`line_transport`].
///
/// ```
/// use ferromcp_dispatch::LineTransportConfig;
///
/// let config = LineTransportConfig::default()
///     .max_line_len(1024 * 1024)
///     .max_depth(64)
///     .outbound_capacity(256)
///     .read_buffer_size(16 * 1024)
///     .allow_batches(true);
/// assert_eq!(config.max_line_len, 1024 * 1024);
/// assert_eq!(LineTransportConfig::default().max_depth, 128);
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct LineTransportConfig {
    /// The longest line accepted, in bytes, without its terminator (default 4 MiB). A longer
    /// line is discarded as it arrives (never buffered whole) and reported as one
    /// [`DecodeError::Parse`] item.
    pub max_line_len: usize,
    /// The deepest JSON nesting accepted (default 128, clamped to
    /// `1..=`[`MAX_SETTABLE_DEPTH`](ferromcp_jsonrpc::MAX_SETTABLE_DEPTH)).
    pub max_depth: usize,
    /// How many outbound messages may wait for the writer before [`MessageSink::send`] waits
    /// (default 1024, at least 1).
    pub outbound_capacity: usize,
    /// The size of the buffer one `read` call fills (default 64 KiB, at least 1).
    pub read_buffer_size: usize,
    /// Whether a JSON-RPC batch (a line holding a top-level array) is split into its entries
    /// (default `false`).
    ///
    /// When `false`, a batch line is one [`DecodeError::Invalid`] item with a null id: MCP
    /// dropped batches in revision 2025-06-18, and the entries of a split batch cannot be told
    /// from single messages downstream, so the protocol version cannot decide. When `true`,
    /// each entry is yielded in turn (a bad entry as an `Err` item) and each answer is written
    /// as its own line, not as a batch array.
    pub allow_batches: bool,
}

impl Default for LineTransportConfig {
    fn default() -> Self {
        Self {
            max_line_len: DEFAULT_MAX_LINE_LEN,
            max_depth: DEFAULT_MAX_DEPTH,
            outbound_capacity: DEFAULT_OUTBOUND_CAPACITY,
            read_buffer_size: DEFAULT_READ_CAPACITY,
            allow_batches: false,
        }
    }
}

impl LineTransportConfig {
    /// Sets the longest line accepted, in bytes.
    #[must_use]
    pub fn max_line_len(mut self, n: usize) -> Self {
        self.max_line_len = n;
        self
    }

    /// Sets the deepest JSON nesting accepted.
    #[must_use]
    pub fn max_depth(mut self, depth: usize) -> Self {
        self.max_depth = depth;
        self
    }

    /// Sets the capacity of the outbound queue, in messages.
    #[must_use]
    pub fn outbound_capacity(mut self, n: usize) -> Self {
        self.outbound_capacity = n;
        self
    }

    /// Sets the size of the read buffer, in bytes.
    #[must_use]
    pub fn read_buffer_size(mut self, n: usize) -> Self {
        self.read_buffer_size = n;
        self
    }

    /// Sets whether batches are split into their entries.
    #[must_use]
    pub fn allow_batches(mut self, allow: bool) -> Self {
        self.allow_batches = allow;
        self
    }
}

type BoxReader = Box<dyn AsyncRead + Unpin + Send>;
type BoxWriter = Box<dyn AsyncWrite + Unpin + Send>;

/// Splits a byte stream into a newline-delimited JSON-RPC transport.
///
/// The writer task is spawned on the current tokio runtime; it ends, after flushing and
/// shutting the write half down, when every [`LineSink`] clone is dropped or
/// [`LineSink::close`] is called. The reader is only read while [`LineSource::recv`] is
/// polled.
///
/// # Panics
///
/// Outside a tokio runtime, as [`tokio::spawn`] does.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// use ferromcp_dispatch::{LineTransportConfig, MessageSink, MessageSource, line_transport};
/// use ferromcp_jsonrpc::{Message, Notification};
///
/// let (client, server) = tokio::io::duplex(1024);
/// let (client_read, client_write) = tokio::io::split(client);
/// let (server_read, server_write) = tokio::io::split(server);
/// let (_client_source, client_sink) =
///     line_transport(client_read, client_write, LineTransportConfig::default());
/// let (mut server_source, _server_sink) =
///     line_transport(server_read, server_write, LineTransportConfig::default());
///
/// client_sink.send(Message::from(Notification::new("ping", None)).into()).await.unwrap();
/// let got = server_source.recv().await.unwrap().unwrap();
/// assert_eq!(got.message.method(), Some("ping"));
/// # });
/// ```
#[allow(
    clippy::needless_pass_by_value,
    reason = "taken by value like every config, so that it may grow fields that are not Copy"
)]
pub fn line_transport(
    reader: impl AsyncRead + Unpin + Send + 'static,
    writer: impl AsyncWrite + Unpin + Send + 'static,
    config: LineTransportConfig,
) -> (LineSource, LineSink) {
    let source = LineSource::new(Box::new(reader), &config);
    let (tx, rx) = mpsc::channel(config.outbound_capacity.max(1));
    tokio::spawn(write_loop(rx, Box::new(writer)));
    (source, LineSink { tx })
}

/// The inbound half of a [`line_transport`]: one item per line (or per batch entry).
pub struct LineSource {
    reader: LineReader<BoxReader>,
    decoder: Decoder,
    allow_batches: bool,
    /// The entries of a batch not yet yielded.
    pending: std::vec::IntoIter<Result<Message, DecodeError>>,
    /// The stream ended (end of file or a read error).
    done: bool,
}

impl fmt::Debug for LineSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LineSource")
            .field("max_line_len", &self.reader.decoder().max_line_len())
            .field("max_depth", &self.decoder.depth_limit())
            .field("allow_batches", &self.allow_batches)
            .field("pending", &self.pending.len())
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}

impl LineSource {
    fn new(reader: BoxReader, config: &LineTransportConfig) -> Self {
        let framing = LineDecoder::with_max_line_len(config.max_line_len);
        Self {
            reader: LineReader::with_capacity(reader, framing, config.read_buffer_size),
            decoder: Decoder::new().max_depth(config.max_depth),
            allow_batches: config.allow_batches,
            pending: Vec::new().into_iter(),
            done: false,
        }
    }

    /// The next item; `None` at end of stream. A read error ends the stream (it is logged).
    async fn next_item(&mut self) -> Option<Inbound> {
        loop {
            if let Some(entry) = self.pending.next() {
                return Some(entry.map(TransportMessage::from));
            }
            if self.done {
                return None;
            }
            // The frame is decoded where it was framed, without a copy.
            let span = match self.reader.next_span().await {
                None => {
                    self.done = true;
                    return None;
                }
                Some(Ok(span)) => span,
                Some(Err(LineError::TooLong { limit })) => {
                    return Some(Err(DecodeError::Parse(format!(
                        "line longer than {limit} bytes"
                    ))));
                }
                Some(Err(e)) => {
                    tracing::warn!(error = %e, "reading the line transport failed; closing it");
                    self.done = true;
                    return None;
                }
            };
            let frame = self.reader.span(span);
            if !self.allow_batches {
                return Some(
                    self.decoder
                        .decode_message(frame)
                        .map(TransportMessage::from),
                );
            }
            match self.decoder.decode(frame) {
                Ok(Frame::Single(message)) => return Some(Ok(message.into())),
                Ok(Frame::Batch(entries)) => self.pending = entries.into_iter(),
                Err(e) => return Some(Err(e)),
            }
        }
    }
}

impl MessageSource for LineSource {
    fn recv(&mut self) -> impl Future<Output = Option<Inbound>> + Send {
        self.next_item()
    }
}

/// What the writer task is asked to do.
enum Outgoing {
    /// Write a message.
    Message(Message),
    /// Flush, shut the write half down, end, and report.
    Close(oneshot::Sender<Result<(), TransportClosed>>),
}

/// The outbound half of a [`line_transport`]. Cheap to clone; clones share one queue and one
/// writer.
///
/// [`send`](MessageSink::send) waits while the queue is full, and fails with
/// [`TransportClosed`] once the writer has failed or the transport was closed. A message that
/// `send` accepted is written unless the writer fails first.
#[derive(Clone)]
pub struct LineSink {
    tx: mpsc::Sender<Outgoing>,
}

impl fmt::Debug for LineSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LineSink")
            .field("closed", &self.tx.is_closed())
            .field("queue_capacity", &self.tx.max_capacity())
            .finish()
    }
}

impl LineSink {
    /// Writes out every message accepted before this call, shuts the write half down, and ends
    /// the writer. Afterwards every `send` fails with [`TransportClosed`].
    ///
    /// Returns `Err(TransportClosed)` when the transport had already closed or the final write
    /// failed. When this returns, the writer has been dropped.
    pub async fn close(&self) -> Result<(), TransportClosed> {
        let (done_tx, done_rx) = oneshot::channel();
        self.tx
            .send(Outgoing::Close(done_tx))
            .await
            .map_err(|_| TransportClosed)?;
        done_rx.await.unwrap_or(Err(TransportClosed))
    }

    /// Whether the writer has ended: `send` will fail.
    pub fn is_closed(&self) -> bool {
        self.tx.is_closed()
    }
}

impl MessageSink for LineSink {
    fn send(&self, msg: TransportMessage) -> BoxFuture<'_, Result<(), TransportClosed>> {
        // Most sends find room in the queue: answer them with a zero-sized future, which
        // `Box::pin` does not allocate. `try_send` finds no room while others wait for some,
        // so it does not overtake them.
        match self.tx.try_send(Outgoing::Message(msg.message)) {
            Ok(()) => Box::pin(Finished::<true>),
            Err(mpsc::error::TrySendError::Closed(_)) => Box::pin(Finished::<false>),
            Err(mpsc::error::TrySendError::Full(item)) => {
                Box::pin(async move { self.tx.send(item).await.map_err(|_| TransportClosed) })
            }
        }
    }
}

/// A send that has already finished: sent (`true`) or refused because the transport is
/// closed (`false`).
struct Finished<const SENT: bool>;

impl<const SENT: bool> Future for Finished<SENT> {
    type Output = Result<(), TransportClosed>;

    fn poll(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        std::task::Poll::Ready(if SENT { Ok(()) } else { Err(TransportClosed) })
    }
}

/// The writer task: waits for a message, drains whatever else is queued into one buffer,
/// writes and flushes it once, and repeats.
async fn write_loop(mut rx: mpsc::Receiver<Outgoing>, mut writer: BoxWriter) {
    let mut buf = LineWriter::new();
    while let Some(first) = rx.recv().await {
        let mut close = None;
        let mut next = Some(first);
        while let Some(item) = next.take() {
            match item {
                Outgoing::Message(message) => buf.push(&message),
                Outgoing::Close(done) => {
                    close = Some(done);
                    break;
                }
            }
            if buf.len() < MAX_BURST_BYTES {
                next = rx.try_recv().ok();
            }
        }
        if let Err(e) = buf.flush_to(&mut writer).await {
            tracing::warn!(error = %e, "writing the line transport failed; closing it");
            // Fail every waiting sender now, and any `close` that is queued.
            rx.close();
            return;
        }
        if let Some(done) = close {
            rx.close();
            let result = shutdown(writer).await;
            let _ = done.send(result);
            return;
        }
    }
    // Every sink was dropped.
    let _ = shutdown(writer).await;
}

/// Shuts the write half down and drops it.
async fn shutdown(mut writer: BoxWriter) -> Result<(), TransportClosed> {
    let result = writer.shutdown().await;
    drop(writer);
    result.map_err(|e| {
        tracing::debug!(error = %e, "shutting the line transport's writer down failed");
        TransportClosed
    })
}
