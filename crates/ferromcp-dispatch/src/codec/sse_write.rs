//! Encoding server-sent events, one frame in one buffer.

use std::io::Write as _;

use ferromcp_jsonrpc::Message;

use super::line::flatten_newlines;
use super::sse::SseEvent;

/// Why an event could not be encoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SseWriteError {
    /// The id or event type holds a character that would split or corrupt the frame: `\n` or
    /// `\r` (in either), or NUL (in an id, which a parser would ignore).
    #[error("the {field} of an event must not contain line breaks or NUL")]
    InvalidField {
        /// `"id"` or `"event"`.
        field: &'static str,
    },
}

impl SseEvent {
    /// Appends this event, as one complete frame, to `out`: `id:`, `event:`, `retry:`, one
    /// `data:` line per line of data (split on `\n`, `\r\n` and `\r`), and the blank line that
    /// ends it.
    ///
    /// An id or event type that would split the frame is rejected, not rewritten (an altered id
    /// would break resumption): see [`SseWriteError`]. Nothing is appended on error. An empty
    /// event type is omitted (it means `"message"`).
    ///
    /// Parsing the frame gives this event back, with the data's line ends as `\n` and an empty
    /// event type as `None`.
    ///
    /// ```
    /// use ferromcp_dispatch::codec::SseEvent;
    ///
    /// let mut out = Vec::new();
    /// SseEvent::new("a\nb").with_id("1").encode(&mut out).unwrap();
    /// assert_eq!(out, b"id: 1\ndata: a\ndata: b\n\n");
    /// assert!(SseEvent::new("x").with_id("1\n2").encode(&mut out).is_err());
    /// ```
    pub fn encode(&self, out: &mut Vec<u8>) -> Result<(), SseWriteError> {
        let id = self.id.as_deref();
        let event = self.event.as_deref().filter(|e| !e.is_empty());
        if id.is_some_and(|id| id.bytes().any(|b| matches!(b, b'\n' | b'\r' | 0))) {
            return Err(SseWriteError::InvalidField { field: "id" });
        }
        if event.is_some_and(|e| e.bytes().any(|b| matches!(b, b'\n' | b'\r'))) {
            return Err(SseWriteError::InvalidField { field: "event" });
        }
        out.reserve(self.data.len() + 32);
        write_header(out, id, event, self.retry);
        let mut data = self.data.as_bytes();
        loop {
            let end = data.iter().position(|&b| b == b'\n' || b == b'\r');
            out.extend_from_slice(b"data: ");
            out.extend_from_slice(&data[..end.unwrap_or(data.len())]);
            out.push(b'\n');
            let Some(end) = end else { break };
            let skip = if data[end..].starts_with(b"\r\n") {
                2
            } else {
                1
            };
            data = &data[end + skip..];
        }
        out.push(b'\n');
        Ok(())
    }

    /// This event as one frame (see [`encode`](Self::encode)).
    pub fn to_bytes(&self) -> Result<Vec<u8>, SseWriteError> {
        let mut out = Vec::with_capacity(self.data.len() + 32);
        self.encode(&mut out)?;
        Ok(out)
    }
}

fn write_header(out: &mut Vec<u8>, id: Option<&str>, event: Option<&str>, retry: Option<u64>) {
    if let Some(id) = id {
        out.extend_from_slice(b"id: ");
        out.extend_from_slice(id.as_bytes());
        out.push(b'\n');
    }
    if let Some(event) = event {
        out.extend_from_slice(b"event: ");
        out.extend_from_slice(event.as_bytes());
        out.push(b'\n');
    }
    if let Some(retry) = retry {
        // Writing into a Vec cannot fail.
        let _ = writeln!(out, "retry: {retry}");
    }
}

/// Appends a JSON-RPC message as one event of the default type to `out`, encoding the message
/// straight into the frame (one `data:` line; line breaks inside raw JSON payloads, which can
/// only be whitespace, become spaces). An id that would split the frame is rejected and
/// nothing is appended.
///
/// ```
/// use ferromcp_dispatch::codec::encode_message_event;
/// use ferromcp_jsonrpc::{Message, Request};
///
/// let mut out = Vec::new();
/// encode_message_event(&mut out, Some("s1-4"), &Message::from(Request::new(4, "ping", None)))
///     .unwrap();
/// assert_eq!(out, b"id: s1-4\ndata: {\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\"}\n\n");
/// ```
pub fn encode_message_event(
    out: &mut Vec<u8>,
    id: Option<&str>,
    message: &Message,
) -> Result<(), SseWriteError> {
    if id.is_some_and(|id| id.bytes().any(|b| matches!(b, b'\n' | b'\r' | 0))) {
        return Err(SseWriteError::InvalidField { field: "id" });
    }
    write_header(out, id, None, None);
    out.extend_from_slice(b"data: ");
    let start = out.len();
    message.write_to(out);
    flatten_newlines(&mut out[start..]);
    out.extend_from_slice(b"\n\n");
    Ok(())
}

/// Appends a comment frame (ignored by parsers; used as a keep-alive) to `out`. Every line of
/// `text` becomes its own comment line, so the text cannot end or split an event.
///
/// ```
/// use ferromcp_dispatch::codec::encode_comment;
///
/// let mut out = Vec::new();
/// encode_comment(&mut out, "ping\nok");
/// assert_eq!(out, b": ping\n: ok\n\n");
/// ```
pub fn encode_comment(out: &mut Vec<u8>, text: &str) {
    let mut text = text.as_bytes();
    loop {
        let end = text.iter().position(|&b| b == b'\n' || b == b'\r');
        out.extend_from_slice(b": ");
        out.extend_from_slice(&text[..end.unwrap_or(text.len())]);
        out.push(b'\n');
        let Some(end) = end else { break };
        let skip = if text[end..].starts_with(b"\r\n") {
            2
        } else {
            1
        };
        text = &text[end + skip..];
    }
    out.push(b'\n');
}
