//! A sans-IO parser for the `text/event-stream` format (WHATWG HTML §9.2 "Server-sent
//! events", as used by MCP Streamable HTTP).

use std::borrow::Cow;
use std::collections::VecDeque;

/// The default bound on the size of one event: 4 MiB.
pub const DEFAULT_MAX_EVENT_SIZE: usize = 4 * 1024 * 1024;

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// One server-sent event.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SseEvent {
    /// The `id` field of this event, if it had one (the stream's last event id, which persists
    /// across events, is [`SseParser::last_event_id`]).
    pub id: Option<String>,
    /// The event type; `None` means the default type, `"message"`.
    pub event: Option<String>,
    /// The data: the event's `data` lines joined with `\n`.
    pub data: String,
    /// The `retry` field of this event (reconnection time in milliseconds), if it had a valid
    /// one.
    pub retry: Option<u64>,
}

impl SseEvent {
    /// An event of the default type with `data` and no id.
    pub fn new(data: impl Into<String>) -> Self {
        Self {
            data: data.into(),
            ..Self::default()
        }
    }

    /// Sets the id.
    #[must_use]
    pub fn with_id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }

    /// Sets the event type.
    #[must_use]
    pub fn with_event(mut self, event: impl Into<String>) -> Self {
        self.event = Some(event.into());
        self
    }

    /// Sets the reconnection time, in milliseconds.
    #[must_use]
    pub fn with_retry(mut self, retry_ms: u64) -> Self {
        self.retry = Some(retry_ms);
        self
    }

    /// The event type, `"message"` when none was given.
    pub fn event_type(&self) -> &str {
        match &self.event {
            Some(event) => event,
            None => "message",
        }
    }
}

/// Why an event could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SseError {
    /// The event (its data and type plus the line being read) grew past the limit. It was
    /// dropped (an `id` it carried is not committed as the last event id) and parsing resumes
    /// after the blank line that ends it.
    #[error("event larger than {limit} bytes")]
    TooLarge {
        /// The event-size bound that was exceeded.
        limit: usize,
    },
}

/// A sans-IO parser for an event stream: feed it chunks as they arrive (split anywhere, even
/// inside a `\r\n` pair or a UTF-8 sequence) and pull events.
///
/// It follows WHATWG HTML §9.2.6 "Interpreting an event stream": lines end with `\r\n`, `\n`
/// or `\r`; a leading UTF-8 BOM is ignored; lines starting with `:` are comments; a line
/// without a colon is a field with an empty value; one space after the colon is stripped;
/// `data` lines are joined with `\n`; `retry` is honoured only when it is all ASCII digits;
/// an `id` containing NUL is ignored; unknown fields are ignored. A blank line dispatches the
/// event, unless no `data` field was seen, in which case nothing is dispatched but the last
/// event id is still updated. Invalid UTF-8 becomes U+FFFD. An event left unterminated when
/// the stream ends is discarded, as the spec requires.
///
/// Memory is bounded: an event whose data and type plus the line being read exceed
/// [`max_event_size`](Self::max_event_size) yields [`SseError::TooLarge`] and is skipped up
/// to its end. Pull events with [`next_event`](Self::next_event) after each
/// [`feed`](Self::feed).
///
/// ```
/// use ferromcp_dispatch::codec::{SseEvent, SseParser};
///
/// let mut p = SseParser::new();
/// p.feed(b"id: 7\r\ndata: {\"a\":\r");
/// p.feed(b"\ndata: 1}\r\n\r\n");
/// let e = p.next_event().unwrap().unwrap();
/// assert_eq!(e, SseEvent::new("{\"a\":\n1}").with_id("7"));
/// assert_eq!(p.last_event_id(), Some("7"));
/// ```
pub struct SseParser {
    max_event_size: usize,
    /// The incomplete line carried over from the previous chunk.
    line: Vec<u8>,
    /// The previous chunk ended in `\r`: a `\n` starting the next one belongs to it.
    pending_cr: bool,
    /// No line has been completed yet (a BOM may lead the first one).
    first_line: bool,
    /// Skipping the rest of an event that grew too large.
    skipping: bool,
    /// While skipping: the current line has bytes (so it does not end the event).
    skip_line_nonempty: bool,
    data: String,
    /// The event type buffer (empty means "message").
    event: String,
    /// This event's own `id` and `retry` fields.
    event_id: Option<String>,
    event_retry: Option<u64>,
    /// The spec's "last event ID buffer" (persists across events) and the last event ID
    /// string it is committed to on each blank line.
    id_buffer: String,
    last_event_id: String,
    reconnection_time: Option<u64>,
    ready: VecDeque<Result<SseEvent, SseError>>,
}

/// Shows sizes and state, not the buffered bytes.
impl std::fmt::Debug for SseParser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SseParser")
            .field("max_event_size", &self.max_event_size)
            .field("buffered_len", &self.buffered_len())
            .field("skipping", &self.skipping)
            .field("last_event_id", &self.last_event_id)
            .field("retry", &self.reconnection_time)
            .field("ready", &self.ready.len())
            .finish_non_exhaustive()
    }
}

impl Default for SseParser {
    fn default() -> Self {
        Self::new()
    }
}

impl SseParser {
    /// A parser with the default event-size bound ([`DEFAULT_MAX_EVENT_SIZE`]).
    pub fn new() -> Self {
        Self::with_max_event_size(DEFAULT_MAX_EVENT_SIZE)
    }

    /// A parser that rejects events larger than `max` bytes (at least 1).
    pub fn with_max_event_size(max: usize) -> Self {
        Self {
            max_event_size: max.max(1),
            line: Vec::new(),
            pending_cr: false,
            first_line: true,
            skipping: false,
            skip_line_nonempty: false,
            data: String::new(),
            event: String::new(),
            event_id: None,
            event_retry: None,
            id_buffer: String::new(),
            last_event_id: String::new(),
            reconnection_time: None,
            ready: VecDeque::new(),
        }
    }

    /// Sets the last event id, as when resuming a stream with `Last-Event-ID`.
    #[must_use]
    pub fn with_last_event_id(mut self, id: impl Into<String>) -> Self {
        self.last_event_id = id.into();
        self.id_buffer.clone_from(&self.last_event_id);
        self
    }

    /// The event-size bound in force.
    pub fn max_event_size(&self) -> usize {
        self.max_event_size
    }

    /// The stream's last event id (to send as `Last-Event-ID` when reconnecting): the last
    /// `id` field seen, committed when its event ended, even an event with no data. `None`
    /// when it is empty.
    pub fn last_event_id(&self) -> Option<&str> {
        Some(self.last_event_id.as_str()).filter(|id| !id.is_empty())
    }

    /// The reconnection time from the last valid `retry` field, in milliseconds.
    pub fn retry(&self) -> Option<u64> {
        self.reconnection_time
    }

    /// How many bytes the event being read holds (partial line, data and type); events that
    /// are complete but not yet pulled are not counted.
    pub fn buffered_len(&self) -> usize {
        self.line.len() + self.data.len() + self.event.len()
    }

    /// The next complete event, or `None` when more bytes are needed.
    pub fn next_event(&mut self) -> Option<Result<SseEvent, SseError>> {
        self.ready.pop_front()
    }

    /// Parses a chunk of the stream.
    pub fn feed(&mut self, mut chunk: &[u8]) {
        if chunk.is_empty() {
            return; // Keep a pending `\r`: its `\n` may come in the next chunk.
        }
        if std::mem::take(&mut self.pending_cr) {
            chunk = chunk.strip_prefix(b"\n").unwrap_or(chunk);
        }
        while let Some(i) = chunk.iter().position(|&b| b == b'\n' || b == b'\r') {
            let (head, rest) = chunk.split_at(i);
            self.end_line(head);
            chunk = match rest {
                [b'\r', b'\n', tail @ ..] => tail,
                [b'\r'] => {
                    self.pending_cr = true;
                    &[]
                }
                [_, tail @ ..] => tail,
                [] => &[],
            };
        }
        if chunk.is_empty() {
            return;
        }
        if self.skipping {
            self.skip_line_nonempty = true;
        } else if self.event_size() + self.line.len() + chunk.len() > self.max_event_size {
            self.overflow();
            self.skip_line_nonempty = true;
        } else {
            self.line.extend_from_slice(chunk);
        }
    }

    fn event_size(&self) -> usize {
        self.data.len() + self.event.len()
    }

    /// A line ended; `head` is its part in the current chunk.
    fn end_line(&mut self, head: &[u8]) {
        if self.skipping {
            let empty = head.is_empty() && !self.skip_line_nonempty;
            self.skip_line_nonempty = false;
            if empty {
                self.skipping = false;
            }
            self.first_line = false;
            return;
        }
        if self.event_size() + self.line.len() + head.len() > self.max_event_size {
            self.overflow();
            self.first_line = false;
            return; // The line is complete: the next empty line ends the skipped event.
        }
        if self.line.is_empty() {
            self.process_line(head);
        } else {
            let mut line = std::mem::take(&mut self.line);
            line.extend_from_slice(head);
            self.process_line(&line);
            line.clear();
            self.line = line;
        }
        // Replacing invalid UTF-8 can grow a value up to threefold.
        if self.event_size() > self.max_event_size {
            self.overflow();
        }
    }

    fn process_line(&mut self, mut line: &[u8]) {
        if std::mem::take(&mut self.first_line) {
            line = line.strip_prefix(BOM).unwrap_or(line);
        }
        let (name, value) = match line.iter().position(|&b| b == b':') {
            Some(0) => return, // A comment.
            Some(i) => {
                let value = &line[i + 1..];
                (&line[..i], value.strip_prefix(b" ").unwrap_or(value))
            }
            None if line.is_empty() => return self.dispatch(),
            None => (line, &[][..]),
        };
        match name {
            b"data" => {
                self.data.push_str(&utf8(value));
                self.data.push('\n');
            }
            b"event" => {
                self.event.clear();
                self.event.push_str(&utf8(value));
            }
            b"id" if !value.contains(&0) => {
                let id = utf8(value);
                self.id_buffer.clear();
                self.id_buffer.push_str(&id);
                self.event_id = Some(id.into_owned());
            }
            b"retry" if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                // Digits only; a value too large for u64 is ignored like any invalid one.
                if let Some(ms) = std::str::from_utf8(value).ok().and_then(|s| s.parse().ok()) {
                    self.reconnection_time = Some(ms);
                    self.event_retry = Some(ms);
                }
            }
            _ => {}
        }
    }

    fn dispatch(&mut self) {
        self.last_event_id.clone_from(&self.id_buffer);
        let id = self.event_id.take();
        let retry = self.event_retry.take();
        if self.data.is_empty() {
            self.event.clear();
            return;
        }
        self.data.pop(); // The `\n` after the last data line.
        let event = Some(std::mem::take(&mut self.event)).filter(|e| !e.is_empty());
        let data = std::mem::take(&mut self.data);
        self.ready.push_back(Ok(SseEvent {
            id,
            event,
            data,
            retry,
        }));
    }

    /// The event grew too large: drop it and skip to its end.
    fn overflow(&mut self) {
        self.ready.push_back(Err(SseError::TooLarge {
            limit: self.max_event_size,
        }));
        self.data = String::new();
        self.event = String::new();
        self.line = Vec::new();
        self.event_id = None;
        self.event_retry = None;
        self.id_buffer.clone_from(&self.last_event_id);
        self.skipping = true;
        self.skip_line_nonempty = false;
    }
}

fn utf8(bytes: &[u8]) -> Cow<'_, str> {
    String::from_utf8_lossy(bytes)
}
