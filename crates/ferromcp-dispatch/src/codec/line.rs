//! Newline-delimited JSON: the framing of the MCP stdio transport.
//!
//! MCP "Transports › stdio": messages are delimited by newlines and must not contain embedded
//! newlines. The decoder also tolerates `\r\n`, skips blank lines, and bounds the length of a
//! line; the encoder guarantees that what it writes never contains a newline inside a message.

use std::ops::Range;

use bytes::Bytes;
use ferromcp_jsonrpc::{DecodeError, Decoder, Message, Payload};

/// The default bound on the length of one line: 4 MiB.
pub const DEFAULT_MAX_LINE_LEN: usize = 4 * 1024 * 1024;

/// A buffer whose capacity grew past this while holding a large line is released once empty,
/// so an idle connection does not keep a multi-megabyte buffer alive.
const RELEASE_CAPACITY: usize = 1024 * 1024;

/// The capacity an empty buffer is shrunk back to.
const IDLE_CAPACITY: usize = 64 * 1024;

/// Why a line could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LineError {
    /// A line was longer than the limit. Its bytes were discarded (never buffered whole) and
    /// reading continues with the next line.
    #[error("line longer than {limit} bytes")]
    TooLong {
        /// The line-length bound that was exceeded.
        limit: usize,
    },
    /// The underlying reader failed.
    #[error("read failed: {0}")]
    Io(#[from] std::io::Error),
}

/// A sans-IO decoder for newline-delimited frames: feed it bytes as they arrive, in chunks
/// split anywhere, and pull complete frames.
///
/// - A frame is the bytes of one line without its `\n` and without a `\r` just before it.
/// - Empty and whitespace-only lines (space, tab, `\r`) are skipped silently.
/// - A line longer than [`max_line_len`](Self::max_line_len) yields one
///   [`LineError::TooLong`] and is skipped: once the incomplete line is known to be too long
///   its bytes are dropped, and bytes are discarded up to the next `\n`, so the buffer never
///   holds much more than the limit plus the last chunk fed.
/// - Bytes are not checked for UTF-8; that is the JSON decoder's job (it answers -32700).
///
/// Call [`next_frame`](Self::next_frame) until it returns `None` after each
/// [`feed`](Self::feed); memory is bounded only if complete lines are pulled.
///
/// ```
/// use ferromcp_dispatch::codec::LineDecoder;
///
/// let mut d = LineDecoder::new();
/// d.feed(b"{\"a\":1}\r\n\n{\"b\"");
/// assert_eq!(&d.next_frame().unwrap().unwrap()[..], b"{\"a\":1}");
/// assert!(d.next_frame().is_none());
/// d.feed(b":2}\n");
/// assert_eq!(&d.next_frame().unwrap().unwrap()[..], b"{\"b\":2}");
/// ```
pub struct LineDecoder {
    buf: Vec<u8>,
    /// Start of the bytes not yet consumed.
    pos: usize,
    /// `buf[pos..scanned]` is known to hold no newline.
    scanned: usize,
    max_line_len: usize,
    /// Dropping bytes up to the next newline (the current line is too long).
    discarding: bool,
    /// A too-long line ended in the last `feed`; report it before anything else.
    pending_too_long: bool,
}

/// Shows sizes and state, not the buffered bytes.
impl std::fmt::Debug for LineDecoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LineDecoder")
            .field("max_line_len", &self.max_line_len)
            .field("buffered_len", &self.buffered_len())
            .field("discarding", &self.discarding)
            .finish_non_exhaustive()
    }
}

impl Default for LineDecoder {
    fn default() -> Self {
        Self::new()
    }
}

impl LineDecoder {
    /// A decoder with the default line bound ([`DEFAULT_MAX_LINE_LEN`]).
    pub fn new() -> Self {
        Self::with_max_line_len(DEFAULT_MAX_LINE_LEN)
    }

    /// A decoder that rejects lines longer than `max` bytes (at least 1).
    pub fn with_max_line_len(max: usize) -> Self {
        Self {
            buf: Vec::new(),
            pos: 0,
            scanned: 0,
            max_line_len: max.max(1),
            discarding: false,
            pending_too_long: false,
        }
    }

    /// The line-length bound in force (a frame never exceeds it; the line terminator is not
    /// counted).
    pub fn max_line_len(&self) -> usize {
        self.max_line_len
    }

    /// How many bytes the decoder currently holds. After pulling every frame this is at most
    /// `max_line_len() + 1` (an incomplete line that may still end in `\r\n`).
    pub fn buffered_len(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// Whether the decoder is dropping the rest of a line that is too long.
    pub fn is_discarding(&self) -> bool {
        self.discarding
    }

    /// Appends bytes read from the stream.
    pub fn feed(&mut self, mut data: &[u8]) {
        if self.discarding {
            match find_newline(data) {
                None => return,
                Some(i) => {
                    self.discarding = false;
                    self.pending_too_long = true;
                    data = &data[i + 1..];
                }
            }
        }
        if data.is_empty() {
            return;
        }
        self.compact();
        self.buf.extend_from_slice(data);
    }

    /// The next complete frame, or `None` when more bytes are needed.
    pub fn next_frame(&mut self) -> Option<Result<Bytes, LineError>> {
        let span = self.next_span()?;
        Some(span.map(|span| Bytes::copy_from_slice(&self.buf[span])))
    }

    /// Like [`next_frame`](Self::next_frame), but the frame is left in the buffer: the range
    /// is valid (see [`span`](Self::span)) until the decoder is next changed. Saves the copy
    /// when the frame is decoded at once.
    pub(crate) fn next_span(&mut self) -> Option<Result<Range<usize>, LineError>> {
        if self.pending_too_long {
            self.pending_too_long = false;
            return Some(Err(self.too_long()));
        }
        loop {
            let Some(i) = find_newline(&self.buf[self.scanned..]) else {
                self.scanned = self.buf.len();
                // One byte of slack: the line may still end in `\r\n`.
                if self.buffered_len() > self.max_line_len.saturating_add(1) {
                    self.buf.truncate(self.pos);
                    self.scanned = self.pos;
                    self.discarding = true;
                    self.compact();
                }
                return None;
            };
            let newline = self.scanned + i;
            let start = self.pos;
            self.pos = newline + 1;
            self.scanned = self.pos;
            let end = trim_cr(&self.buf, start, newline);
            if end - start > self.max_line_len {
                return Some(Err(self.too_long()));
            }
            if is_blank(&self.buf[start..end]) {
                continue;
            }
            return Some(Ok(start..end));
        }
    }

    /// The bytes of a frame that [`next_span`](Self::next_span) or
    /// [`finish_span`](Self::finish_span) just returned.
    pub(crate) fn span(&self, span: Range<usize>) -> &[u8] {
        &self.buf[span]
    }

    /// Ends the stream: yields what is left, including the last line when it was not
    /// terminated by a newline (or the error for a too-long one), then resets the decoder.
    /// Call it until it returns `None`.
    pub fn finish(&mut self) -> Option<Result<Bytes, LineError>> {
        let out = self
            .finish_span()
            .map(|span| span.map(|span| Bytes::copy_from_slice(&self.buf[span])));
        if self.pos == self.buf.len() {
            self.clear();
        }
        out
    }

    /// Like [`finish`](Self::finish), but the frame is left in the buffer (as with
    /// [`next_span`](Self::next_span)); the decoder is reset by the call that returns `None`.
    pub(crate) fn finish_span(&mut self) -> Option<Result<Range<usize>, LineError>> {
        if let Some(frame) = self.next_span() {
            return Some(frame);
        }
        if std::mem::take(&mut self.discarding) {
            self.clear();
            return Some(Err(self.too_long()));
        }
        let start = self.pos;
        let end = trim_cr(&self.buf, start, self.buf.len());
        // The rest is consumed: the next call finds nothing and resets.
        self.pos = self.buf.len();
        self.scanned = self.pos;
        if end - start > self.max_line_len {
            Some(Err(self.too_long()))
        } else if is_blank(&self.buf[start..end]) {
            self.clear();
            None
        } else {
            Some(Ok(start..end))
        }
    }

    fn too_long(&self) -> LineError {
        LineError::TooLong {
            limit: self.max_line_len,
        }
    }

    fn clear(&mut self) {
        self.buf.clear();
        self.pos = 0;
        self.scanned = 0;
        self.release();
    }

    /// Moves the unconsumed bytes to the front of the buffer.
    fn compact(&mut self) {
        if self.pos == 0 {
            return;
        }
        if self.pos == self.buf.len() {
            self.buf.clear();
            self.release();
        } else {
            self.buf.copy_within(self.pos.., 0);
            self.buf.truncate(self.buf.len() - self.pos);
        }
        self.scanned -= self.pos;
        self.pos = 0;
    }

    fn release(&mut self) {
        if self.buf.is_empty() && self.buf.capacity() > RELEASE_CAPACITY {
            self.buf.shrink_to(IDLE_CAPACITY);
        }
    }
}

/// One in every byte of a word.
const LOW_BITS: u64 = u64::from_ne_bytes([0x01; 8]);
/// The top bit of every byte of a word.
const HIGH_BITS: u64 = u64::from_ne_bytes([0x80; 8]);

/// The top bit of each byte of `word` that equals `byte`, and maybe of bytes above such a
/// byte (the borrow of the subtraction can spread upwards, never downwards): the lowest set
/// bit is always an exact match.
fn bytes_equal(word: u64, byte: u8) -> u64 {
    let x = word ^ (LOW_BITS * u64::from(byte));
    x.wrapping_sub(LOW_BITS) & !x & HIGH_BITS
}

/// The index of the first byte of `bytes` for which `found` (built from [`bytes_equal`])
/// marks a match, scanning eight bytes at a time: lines and encoded messages are long, and
/// this search runs over every byte read and written.
fn find_bytes(bytes: &[u8], found: impl Fn(u64) -> u64, is: impl Fn(u8) -> bool) -> Option<usize> {
    let mut chunks = bytes.chunks_exact(8);
    let mut offset = 0;
    for chunk in &mut chunks {
        let mut word = [0; 8];
        word.copy_from_slice(chunk);
        let hits = found(u64::from_le_bytes(word));
        if hits != 0 {
            // Little-endian: the lowest bit is the first byte.
            return Some(offset + (hits.trailing_zeros() / 8) as usize);
        }
        offset += 8;
    }
    let tail = chunks.remainder();
    tail.iter().position(|&b| is(b)).map(|i| offset + i)
}

fn find_newline(bytes: &[u8]) -> Option<usize> {
    find_bytes(bytes, |w| bytes_equal(w, b'\n'), |b| b == b'\n')
}

/// The first `\n` or `\r` in `bytes`.
fn find_line_break(bytes: &[u8]) -> Option<usize> {
    find_either(bytes, b'\n', b'\r')
}

/// The index of the first byte of `bytes` that is `a` or `b`, eight bytes at a time.
pub(crate) fn find_either(bytes: &[u8], a: u8, b: u8) -> Option<usize> {
    find_bytes(
        bytes,
        |w| bytes_equal(w, a) | bytes_equal(w, b),
        |x| x == a || x == b,
    )
}

/// The end of `buf[start..end]` without one `\r` at its end.
fn trim_cr(buf: &[u8], start: usize, end: usize) -> usize {
    if end > start && buf[end - 1] == b'\r' {
        end - 1
    } else {
        end
    }
}

/// Whether a line holds only JSON whitespace (the `\n` is already gone).
fn is_blank(line: &[u8]) -> bool {
    line.iter().all(|&b| matches!(b, b' ' | b'\t' | b'\r'))
}

/// Decodes one frame into a message with `decoder` (a batch is an invalid request here; use
/// [`Decoder::decode`] where batches are allowed).
pub fn decode_line(decoder: &Decoder, frame: &[u8]) -> Result<Message, DecodeError> {
    decoder.decode_message(frame)
}

/// Encodes messages as newline-delimited JSON into one buffer, so that a burst of messages is
/// written (and flushed) once.
///
/// Every message is written compactly followed by `\n`. Any `\n` or `\r` inside an encoded
/// message (which can only be insignificant whitespace in raw JSON payloads, since valid JSON
/// strings cannot hold raw control characters) is replaced by a space, so a message never
/// spans two lines.
///
/// ```
/// use ferromcp_dispatch::codec::LineWriter;
/// use ferromcp_jsonrpc::{Message, Request};
///
/// let mut w = LineWriter::new();
/// w.push(&Message::from(Request::new(1, "ping", None)));
/// w.push_encoded(b"{\"jsonrpc\":\"2.0\",\n\"method\":\"x\"}");
/// assert_eq!(
///     w.as_bytes(),
///     b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n{\"jsonrpc\":\"2.0\", \"method\":\"x\"}\n"
/// );
/// ```
#[derive(Default)]
pub struct LineWriter {
    buf: Vec<u8>,
}

/// Shows the pending length, not the bytes.
impl std::fmt::Debug for LineWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LineWriter")
            .field("len", &self.buf.len())
            .finish()
    }
}

impl LineWriter {
    /// An empty writer.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty writer with room for `capacity` bytes.
    pub fn with_capacity(capacity: usize) -> Self {
        Self {
            buf: Vec::with_capacity(capacity),
        }
    }

    /// Appends `message` and a newline.
    pub fn push(&mut self, message: &Message) {
        let start = self.buf.len();
        message.write_to(&mut self.buf);
        // Only a payload kept verbatim can hold a raw line break: the encoder writes
        // everything else compactly, escaping control characters inside strings.
        if carries_raw_payload(message) {
            flatten_newlines(&mut self.buf[start..]);
        }
        self.buf.push(b'\n');
    }

    /// Appends an already encoded JSON message and a newline.
    pub fn push_encoded(&mut self, json: &[u8]) {
        let start = self.buf.len();
        self.buf.extend_from_slice(json);
        self.end_line(start);
    }

    fn end_line(&mut self, start: usize) {
        flatten_newlines(&mut self.buf[start..]);
        self.buf.push(b'\n');
    }

    /// The bytes waiting to be written.
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf
    }

    /// How many bytes are waiting to be written.
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    /// Whether nothing is waiting to be written.
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// Drops the bytes waiting to be written (after writing them elsewhere).
    pub fn clear(&mut self) {
        self.buf.clear();
        if self.buf.capacity() > RELEASE_CAPACITY {
            self.buf.shrink_to(IDLE_CAPACITY);
        }
    }

    /// Writes everything pushed so far in one `write_all`, flushes once, and empties the
    /// buffer. Not cancel-safe: if the future is dropped midway, part of the buffer may have
    /// been written and the buffer is kept.
    pub async fn flush_to<W>(&mut self, writer: &mut W) -> std::io::Result<()>
    where
        W: tokio::io::AsyncWrite + Unpin + ?Sized,
    {
        use tokio::io::AsyncWriteExt;
        if !self.buf.is_empty() {
            writer.write_all(&self.buf).await?;
            self.clear();
        }
        writer.flush().await
    }
}

/// Whether `message` carries a payload as raw text (which is written verbatim).
fn carries_raw_payload(message: &Message) -> bool {
    let payload = match message {
        Message::Request(r) => r.params.as_ref(),
        Message::Notification(n) => n.params.as_ref(),
        Message::Response(r) => Some(&r.result),
        Message::Error(_) => None,
    };
    matches!(payload, Some(Payload::Raw(_)))
}

/// Replaces line terminators with spaces: outside JSON strings they are whitespace, and inside
/// strings valid JSON cannot hold them raw.
pub(crate) fn flatten_newlines(bytes: &mut [u8]) {
    // Encoded messages rarely hold one: find the first quickly, rewrite from there.
    let Some(first) = find_line_break(bytes) else {
        return;
    };
    for b in &mut bytes[first..] {
        if *b == b'\n' || *b == b'\r' {
            *b = b' ';
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The word-at-a-time searches agree with a byte-by-byte search at every position and
    /// length (chunk boundaries, the tail, several matches, bytes that differ by one bit).
    #[test]
    fn word_searches_match_a_byte_search() {
        for len in 0..40 {
            for at in 0..len {
                for (hit, other) in [(b'\n', b'\r'), (b'\r', b'\n')] {
                    let mut bytes: Vec<u8> = (0..len)
                        .map(|i| [b'a', b'\x0b', 0x8a, b'x'][i % 4])
                        .collect();
                    bytes[at] = hit;
                    if at + 1 < len {
                        bytes[at + 1] = other;
                    }
                    let first_nl = bytes.iter().position(|&b| b == b'\n');
                    let first_any = bytes.iter().position(|&b| b == b'\n' || b == b'\r');
                    assert_eq!(find_newline(&bytes), first_nl, "{bytes:?}");
                    assert_eq!(find_line_break(&bytes), first_any, "{bytes:?}");
                }
            }
            let plain = vec![b'{'; len];
            assert_eq!(find_newline(&plain), None);
            assert_eq!(find_line_break(&plain), None);
        }
    }

    /// MCP Transports › stdio: messages must not contain embedded newlines. Line breaks in
    /// strings (values, keys, method names, ids, error messages) are escaped by the encoder, and
    /// raw payloads' line breaks are flattened: every message is exactly one line.
    #[test]
    fn every_message_is_one_line() {
        use ferromcp_jsonrpc::{ErrorObject, Notification, Request, RequestId};
        let nasty = "a\nb\rc\r\nd";
        let value = serde_json::json!({ nasty: [nasty, {"k\n": "\n"}] });
        let raw: Payload = serde_json::from_str("{\"a\":\n1,\r\"b\":[\r\n]}").unwrap();
        assert!(matches!(raw, Payload::Raw(_)));
        let id = RequestId::from(nasty);
        let messages = [
            Message::from(Request::new(
                id.clone(),
                nasty,
                Some(Payload::from(value.clone())),
            )),
            Message::from(Request::new(1, "m", Some(raw.clone()))),
            Message::from(Notification::new(nasty, Some(Payload::from(value.clone())))),
            Message::response(id.clone(), value.clone()),
            Message::response(2.into(), raw),
            Message::error(Some(id), ErrorObject::invalid_request(nasty.to_owned())),
        ];
        let mut w = LineWriter::new();
        for m in &messages {
            w.push(m);
        }
        let lines: Vec<&[u8]> = w.as_bytes().split(|&b| b == b'\n').collect();
        assert_eq!(
            lines.len(),
            messages.len() + 1,
            "{:?}",
            String::from_utf8_lossy(w.as_bytes())
        );
        for (line, m) in lines.iter().zip(&messages) {
            assert!(!line.contains(&b'\r'));
            let back = Message::from_slice(line).map_err(|e| e.to_string());
            assert_eq!(back.as_ref().map(Message::method), Ok(m.method()));
        }
    }

    /// MCP Transports › stdio: no message spans two lines, wherever its line breaks are.
    #[test]
    fn flatten_replaces_every_line_break() {
        for len in 0..40 {
            for at in 0..len {
                let mut bytes = vec![b' '; len];
                bytes[at] = b'\r';
                bytes[len - 1] = b'\n';
                flatten_newlines(&mut bytes);
                assert!(bytes.iter().all(|&b| b == b' '), "{bytes:?}");
            }
        }
    }
}
