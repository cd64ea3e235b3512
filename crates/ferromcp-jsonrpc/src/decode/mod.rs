//! One-pass, strict decoding of JSON-RPC envelopes.
//!
//! The envelope's fields are read directly (`jsonrpc`, `id`, `method`, `params`, `result`,
//! `error`); `params` and `result` stay raw JSON text. There is no untagged or flattened
//! buffering and no error value is built on the happy path. Decoding is strict where it
//! matters for safety:
//!
//! - keys are case-sensitive (`"Method"` is not `"method"`);
//! - a duplicate envelope key is rejected, so two parsers can never disagree about which
//!   `method` or `id` a message carries;
//! - nesting depth is bounded ([`DEFAULT_MAX_DEPTH`], settable) before serde_json parses
//!   anything, and the hand-read path never nests deeper;
//! - invalid UTF-8 is a parse error.
//!
//! The usual message (a request, notification or success response written plainly) is read
//! by hand in one pass over the bytes ([`decode_plain`]), with its grammar, duplicate-key and
//! depth checks folded into the same scan (`scan.rs`), so the kept `params` or `result` text
//! is not parsed again; anything else takes the serde_json path, which decides it as it
//! always has. Duplicate keys inside `params` and `result` are found by that byte scanner,
//! which compares keys by their decoded value.

use serde_json::value::RawValue;

use super::scan::{Checked, Scanner};
use super::{
    ErrorObject, ErrorResponse, Message, Notification, Payload, RawJson, Request, RequestId,
    Response,
};

mod full_path;
#[cfg(test)]
mod tests;

use full_path::{check_depth, decode_full, decode_message, parse_unbounded, utf8};

/// The default bound on JSON nesting depth (objects and arrays, the envelope included).
pub const DEFAULT_MAX_DEPTH: usize = 128;

/// The largest nesting depth a [`Decoder`] accepts as a setting; larger settings are clamped.
pub const MAX_SETTABLE_DEPTH: usize = 512;

/// Why a frame could not be decoded into a message.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// Not JSON, or not UTF-8: answered with -32700 and a null id.
    #[error("parse error: {0}")]
    Parse(String),
    /// Nested deeper than the decoder allows: answered with -32700 and a null id.
    #[error("JSON nesting deeper than {limit} levels")]
    TooDeep {
        /// The depth bound that was exceeded.
        limit: usize,
    },
    /// Valid JSON that is not a valid JSON-RPC message: answered with -32600, carrying the id
    /// when one could be read.
    #[error("invalid request: {reason}")]
    Invalid {
        /// The id of the offending message, when it could be read.
        id: Option<RequestId>,
        /// What is wrong with it.
        reason: String,
    },
}

impl DecodeError {
    /// The id of the offending message, when known.
    pub fn id(&self) -> Option<&RequestId> {
        match self {
            Self::Invalid { id, .. } => id.as_ref(),
            _ => None,
        }
    }

    /// The protocol error that answers this failure.
    pub fn to_error_object(&self) -> ErrorObject {
        match self {
            Self::Parse(_) | Self::TooDeep { .. } => ErrorObject::parse_error(self.to_string()),
            Self::Invalid { .. } => ErrorObject::invalid_request(self.to_string()),
        }
    }

    /// The error response that answers this failure.
    pub fn to_response(&self) -> ErrorResponse {
        ErrorResponse {
            id: self.id().cloned(),
            error: self.to_error_object(),
        }
    }

    fn invalid(id: Option<RequestId>, reason: impl Into<String>) -> Self {
        Self::Invalid {
            id,
            reason: reason.into(),
        }
    }
}

/// One decoded frame: a single message, or a batch (a top-level JSON array) whose entries
/// decoded one by one.
#[derive(Debug, Clone, PartialEq)]
pub enum Frame {
    /// A single message.
    Single(Message),
    /// A JSON-RPC batch; each entry is a message or the reason it is not one.
    Batch(Vec<Result<Message, DecodeError>>),
}

/// A configured envelope decoder.
///
/// ```
/// use ferromcp_jsonrpc::{Decoder, Frame, Message};
///
/// let d = Decoder::new();
/// let Frame::Single(Message::Request(r)) =
///     d.decode(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).unwrap()
/// else { panic!() };
/// assert_eq!(r.method, "ping");
/// assert!(Decoder::new().max_depth(2).decode(br#"{"jsonrpc":"2.0","method":"x","params":{"a":[]}}"#).is_err());
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Decoder {
    max_depth: usize,
}

impl Default for Decoder {
    fn default() -> Self {
        Self::new()
    }
}

impl Decoder {
    /// A decoder with the default depth bound.
    pub const fn new() -> Self {
        Self {
            max_depth: DEFAULT_MAX_DEPTH,
        }
    }

    /// Sets the nesting depth bound (clamped to `1..=`[`MAX_SETTABLE_DEPTH`]).
    #[must_use]
    pub const fn max_depth(mut self, depth: usize) -> Self {
        self.max_depth = if depth == 0 {
            1
        } else if depth > MAX_SETTABLE_DEPTH {
            MAX_SETTABLE_DEPTH
        } else {
            depth
        };
        self
    }

    /// The nesting depth bound in force.
    pub const fn depth_limit(&self) -> usize {
        self.max_depth
    }

    /// Decodes one frame: a single message or a batch.
    pub fn decode(&self, bytes: &[u8]) -> Result<Frame, DecodeError> {
        if let Some(message) = decode_plain(bytes, self.max_depth) {
            return Ok(Frame::Single(message));
        }
        check_depth(bytes, self.max_depth)?;
        let text = utf8(bytes)?;
        if first_non_ws(bytes) == Some(b'[') {
            let entries: Vec<Box<RawValue>> = parse_unbounded(text)?;
            if entries.is_empty() {
                return Err(DecodeError::invalid(None, "empty batch"));
            }
            let decoded = entries
                .iter()
                .map(
                    |raw| match decode_plain(raw.get().as_bytes(), self.max_depth) {
                        Some(message) => Ok(message),
                        None => decode_message(raw.get()),
                    },
                )
                .collect();
            return Ok(Frame::Batch(decoded));
        }
        decode_message(text).map(Frame::Single)
    }

    /// Decodes one message; a batch is an invalid request here.
    pub fn decode_message(&self, bytes: &[u8]) -> Result<Message, DecodeError> {
        match decode_plain(bytes, self.max_depth) {
            Some(message) => Ok(message),
            None => decode_full(bytes, self.max_depth),
        }
    }
}

impl Message {
    /// Decodes one message with the default [`Decoder`].
    pub fn from_slice(bytes: &[u8]) -> Result<Message, DecodeError> {
        Decoder::new().decode_message(bytes)
    }
}

fn first_non_ws(bytes: &[u8]) -> Option<u8> {
    bytes
        .iter()
        .copied()
        .find(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
}
/// The common message, read by hand in one pass with no serde machinery: a request,
/// notification or success response whose envelope members are `jsonrpc`, `id`, `method`,
/// `params` and `result`, each once, holding strings without escapes and integer ids, with
/// `params` or `result` an object or array.
///
/// Anything else (an escape, a fraction, an unknown or repeated member, a duplicate key
/// inside `params`, any error at all) returns `None` and takes the full path, which decides
/// it exactly as before; so this path only ever accepts what that one accepts, with the same
/// result. The envelope's own grammar is checked here, and the scanner checks `params` and
/// `result` as fully as serde_json checks a [`RawValue`] on the full path, so their text
/// becomes a [`RawJson`] with no second parse.
fn decode_plain(bytes: &[u8], max_depth: usize) -> Option<Message> {
    let text = std::str::from_utf8(bytes).ok()?;
    let mut s = Scanner::new(text);
    s.skip_ws();
    // Most senders write this member first, exactly so: read it in one comparison.
    let mut jsonrpc = s.eat(br#"{"jsonrpc":"2.0","#);
    if !jsonrpc && !s.eat(b"{") {
        return None;
    }
    let mut id = None;
    let mut method = None;
    // `Some(None)` is `"params": null`.
    let mut params: Option<Option<Checked<'_>>> = None;
    let mut result = None;
    loop {
        s.skip_ws();
        let key = s.string()?.plain()?;
        s.skip_ws();
        if !s.eat(b":") {
            return None;
        }
        s.skip_ws();
        match key {
            "jsonrpc" if !jsonrpc => {
                if s.string()?.plain()? != "2.0" {
                    return None;
                }
                jsonrpc = true;
            }
            "id" if id.is_none() => id = Some(plain_id(&mut s)?),
            "method" if method.is_none() => method = Some(s.string()?.plain()?),
            "params" if params.is_none() => {
                params = Some(if s.eat(b"null") {
                    None
                } else {
                    Some(raw_container(&mut s, max_depth)?)
                });
            }
            "result" if result.is_none() => result = Some(raw_container(&mut s, max_depth)?),
            _ => return None,
        }
        s.skip_ws();
        match s.next_byte()? {
            b',' => {}
            b'}' => break,
            _ => return None,
        }
    }
    if !s.at_end() || !jsonrpc {
        return None;
    }
    let raw = |checked| Payload::Raw(RawJson::from_checked(checked));
    match (method, result) {
        (Some(method), None) => {
            let params = params.flatten().map(raw);
            let method = method.to_owned();
            Some(match id {
                Some(id) => Message::Request(Request { id, method, params }),
                None => Message::Notification(Notification { method, params }),
            })
        }
        (None, Some(result)) if params.is_none() => Some(Message::Response(Response {
            id: id?,
            result: raw(result),
        })),
        _ => None,
    }
}

/// An id that is a string without escapes or an integer in the `i64` range written the way
/// serde_json reads it as one (no leading zero, no fraction or exponent, not `-0`).
fn plain_id(s: &mut Scanner<'_>) -> Option<RequestId> {
    if s.peek() == Some(b'"') {
        return Some(RequestId::String(s.string()?.plain()?.into()));
    }
    let negative = s.eat(b"-");
    let mut n: u64 = 0;
    let mut digits = 0;
    while let Some(d @ b'0'..=b'9') = s.peek() {
        if digits > 0 && n == 0 {
            return None; // A leading zero.
        }
        n = n.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
        digits += 1;
        s.next_byte();
    }
    if digits == 0 || matches!(s.peek(), Some(b'.' | b'e' | b'E')) {
        return None;
    }
    let n = i64::try_from(n).ok()?;
    if !negative {
        Some(RequestId::Number(n))
    } else if n != 0 {
        Some(RequestId::Number(-n))
    } else {
        None // serde_json reads `-0` as a float.
    }
}

/// An object or array (checked for grammar, duplicate keys and depth, the envelope being one
/// level), as written.
fn raw_container<'a>(s: &mut Scanner<'a>, max_depth: usize) -> Option<Checked<'a>> {
    if !matches!(s.peek(), Some(b'{' | b'[')) {
        return None;
    }
    s.checked(max_depth.checked_sub(1)?).ok()
}
