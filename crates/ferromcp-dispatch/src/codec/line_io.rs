//! The async adapter of the line codec over [`tokio::io::AsyncRead`].

use std::ops::Range;

use bytes::Bytes;
use ferromcp_jsonrpc::{DecodeError, Decoder, Message};
use tokio::io::{AsyncRead, AsyncReadExt};

use super::line::{LineDecoder, LineError, decode_line};

/// The default size of a [`LineReader`]'s read buffer: 64 KiB.
pub const DEFAULT_READ_CAPACITY: usize = 64 * 1024;

/// Reads newline-delimited frames from an async reader.
///
/// One `read` call fills a large reused buffer (64 KiB by default) that may hold many messages;
/// the only allocation per frame is the frame itself. The stream's last line is yielded even
/// without a final newline.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// use ferromcp_dispatch::codec::LineReader;
///
/// let mut r = LineReader::new(&b"{\"a\":1}\n\n{\"b\":2}"[..]);
/// assert_eq!(&r.next_frame().await.unwrap().unwrap()[..], b"{\"a\":1}");
/// assert_eq!(&r.next_frame().await.unwrap().unwrap()[..], b"{\"b\":2}");
/// assert!(r.next_frame().await.is_none());
/// # });
/// ```
pub struct LineReader<R> {
    reader: R,
    decoder: LineDecoder,
    read_buf: Box<[u8]>,
    eof: bool,
}

/// Shows the framing state, not the buffers.
impl<R: std::fmt::Debug> std::fmt::Debug for LineReader<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LineReader")
            .field("reader", &self.reader)
            .field("decoder", &self.decoder)
            .field("read_capacity", &self.read_buf.len())
            .field("eof", &self.eof)
            .finish()
    }
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    /// A reader with the default line bound and read buffer.
    pub fn new(reader: R) -> Self {
        Self::with_decoder(reader, LineDecoder::new())
    }

    /// A reader that frames with `decoder` (for its line bound).
    pub fn with_decoder(reader: R, decoder: LineDecoder) -> Self {
        Self::with_capacity(reader, decoder, DEFAULT_READ_CAPACITY)
    }

    /// A reader with a read buffer of `capacity` bytes (at least 1).
    pub fn with_capacity(reader: R, decoder: LineDecoder, capacity: usize) -> Self {
        Self {
            reader,
            decoder,
            read_buf: vec![0; capacity.max(1)].into_boxed_slice(),
            eof: false,
        }
    }

    /// The next frame; `None` once the reader is exhausted.
    ///
    /// Cancel-safe: if the future is dropped before it completes, no bytes are lost.
    /// After an I/O error, the next call reads again.
    pub async fn next_frame(&mut self) -> Option<Result<Bytes, LineError>> {
        let span = self.next_span().await?;
        Some(span.map(|span| Bytes::copy_from_slice(self.decoder.span(span))))
    }

    /// Like [`next_frame`](Self::next_frame), but the frame stays in the decoder's buffer:
    /// read it with [`span`](Self::span) before the next call. Saves a copy per frame.
    pub(crate) async fn next_span(&mut self) -> Option<Result<Range<usize>, LineError>> {
        loop {
            if let Some(frame) = self.decoder.next_span() {
                return Some(frame);
            }
            if self.eof {
                return self.decoder.finish_span();
            }
            match self.reader.read(&mut self.read_buf).await {
                Ok(0) => self.eof = true,
                Ok(n) => self.decoder.feed(&self.read_buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Some(Err(LineError::Io(e))),
            }
        }
    }

    /// The bytes of the frame [`next_span`](Self::next_span) just returned.
    pub(crate) fn span(&self, span: Range<usize>) -> &[u8] {
        self.decoder.span(span)
    }

    /// The next frame decoded into a message with `decoder`; `None` once the reader is
    /// exhausted. The outer error is the framing's, the inner one the message's.
    pub async fn next_message(
        &mut self,
        decoder: &Decoder,
    ) -> Option<Result<Result<Message, DecodeError>, LineError>> {
        let frame = self.next_frame().await?;
        Some(frame.map(|bytes| decode_line(decoder, &bytes)))
    }

    /// The framing state (for its line bound and buffered length).
    pub fn decoder(&self) -> &LineDecoder {
        &self.decoder
    }

    /// The underlying reader.
    pub fn get_ref(&self) -> &R {
        &self.reader
    }

    /// The underlying reader, mutably. Reading from it directly loses framing.
    pub fn get_mut(&mut self) -> &mut R {
        &mut self.reader
    }

    /// The underlying reader; bytes already buffered are dropped.
    pub fn into_inner(self) -> R {
        self.reader
    }
}
