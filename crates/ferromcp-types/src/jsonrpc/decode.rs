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

use std::fmt;

use serde::Deserialize;
use serde::de::{self, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;

use super::scan::{self, Checked, Scanner};
use super::{
    ErrorObject, ErrorResponse, Message, Notification, Payload, RawJson, Request, RequestId,
    Response,
};

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
/// use ferromcp_types::jsonrpc::{Decoder, Frame, Message};
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

/// [`Decoder::decode_message`] for any input, through serde_json: the path every message
/// that [`decode_plain`] declines takes.
fn decode_full(bytes: &[u8], max_depth: usize) -> Result<Message, DecodeError> {
    check_depth(bytes, max_depth)?;
    let text = utf8(bytes)?;
    if first_non_ws(bytes) == Some(b'[') {
        // Still a parse error when the batch is not JSON at all.
        let _: IgnoredAny = parse_unbounded(text)?;
        return Err(DecodeError::invalid(None, "batches are not supported here"));
    }
    decode_message(text)
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

/// Rejects input nested deeper than `limit`, in one pass over the bytes and before any
/// parsing, so deep input costs neither stack nor allocation.
fn check_depth(bytes: &[u8], limit: usize) -> Result<(), DecodeError> {
    if bytes.len() <= limit {
        return Ok(()); // Each level needs at least one byte.
    }
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for &b in bytes {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' | b'[' => {
                depth += 1;
                if depth > limit {
                    return Err(DecodeError::TooDeep { limit });
                }
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

/// Parses with serde_json's own recursion guard off: [`check_depth`] has already bounded the
/// nesting, and the bound may be set above serde_json's fixed one.
fn parse_unbounded<'de, T: Deserialize<'de>>(text: &'de str) -> Result<T, DecodeError> {
    let mut de = serde_json::Deserializer::from_str(text);
    de.disable_recursion_limit();
    let value = T::deserialize(&mut de).map_err(|e| classify(&e))?;
    de.end().map_err(|e| classify(&e))?;
    Ok(value)
}

fn classify(e: &serde_json::Error) -> DecodeError {
    match e.classify() {
        serde_json::error::Category::Data => DecodeError::invalid(None, e.to_string()),
        _ => DecodeError::Parse(e.to_string()),
    }
}

/// The whole input must be UTF-8, skipped values included: serde_json does not check the
/// strings it skips, and two parsers must never disagree about what a message is. Checking
/// once here also lets the parse run on `&str`, where serde_json skips its own checks.
fn utf8(bytes: &[u8]) -> Result<&str, DecodeError> {
    std::str::from_utf8(bytes).map_err(|e| DecodeError::Parse(format!("invalid UTF-8: {e}")))
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

/// The first key that appears twice in one object anywhere in `text` (JSON already read by
/// serde_json, its depth already bounded), so that `params` and `result` are never read
/// first-wins by one parser and last-wins by another (the Go SDK's GHSA-wvj2-96wp-fq3f).
/// Keys compare by their decoded value (`"k"` and `"\u006b"` are the same key).
fn duplicate_key(text: &str) -> Option<String> {
    scan::duplicate_key(text, MAX_SETTABLE_DEPTH)
}

fn decode_message(text: &str) -> Result<Message, DecodeError> {
    if first_non_ws(text.as_bytes()) != Some(b'{') {
        // Still a parse error when the input is not JSON at all.
        let _: IgnoredAny = parse_unbounded(text)?;
        return Err(DecodeError::invalid(
            None,
            "a message must be a JSON object",
        ));
    }
    let env: Envelope = parse_unbounded(text)?;
    env.classify()
}

/// The envelope's fields as read in one pass.
#[derive(Default)]
struct Envelope {
    jsonrpc: Option<Field>,
    id: Option<Field>,
    method: Option<Field>,
    params: Option<Box<RawValue>>,
    result: Option<Box<RawValue>>,
    error: Option<Box<RawValue>>,
    duplicate: Option<&'static str>,
}

impl Envelope {
    fn classify(self) -> Result<Message, DecodeError> {
        // `Some(None)` is an explicit null id.
        let id: Option<Option<RequestId>> = match self.id {
            None => None,
            Some(Field::Null) => Some(None),
            Some(Field::Int(n)) => Some(Some(RequestId::Number(n))),
            Some(Field::Str(s)) => Some(Some(RequestId::String(s.into()))),
            Some(Field::Other(kind)) => {
                let reason = format!("a request id must be an integer or a string, not {kind}");
                return Err(DecodeError::invalid(None, reason));
            }
        };
        let known = id.clone().flatten();
        let fail = |reason: &str| Err(DecodeError::invalid(known.clone(), reason));
        if let Some(key) = self.duplicate {
            return fail(&format!("duplicate key {key:?} in message"));
        }
        match self.jsonrpc {
            Some(Field::Str(v)) if v == "2.0" => {}
            Some(_) => return fail(r#""jsonrpc" must be "2.0""#),
            None => return fail(r#"missing "jsonrpc": "2.0""#),
        }
        match self.method {
            Some(Field::Str(method)) => {
                if self.result.is_some() || self.error.is_some() {
                    return fail(r#"a request must not carry "result" or "error""#);
                }
                let params = match self.params {
                    None => None,
                    Some(raw) => match first_non_ws(raw.get().as_bytes()) {
                        Some(b'{' | b'[') => {
                            if let Some(key) = duplicate_key(raw.get()) {
                                return fail(&format!("duplicate key {key:?} in params"));
                            }
                            Some(Payload::Raw(raw.into()))
                        }
                        Some(b'n') => None, // `"params": null` is read as absent.
                        _ => return fail(r#""params" must be an object"#),
                    },
                };
                match id {
                    None => Ok(Message::Notification(Notification { method, params })),
                    Some(None) => fail("a request id must not be null"),
                    Some(Some(id)) => Ok(Message::Request(Request { id, method, params })),
                }
            }
            Some(_) => fail(r#""method" must be a string"#),
            None if self.params.is_some() => fail(r#""params" without "method""#),
            None => match (self.result, self.error) {
                (Some(_), Some(_)) => {
                    fail(r#"a response must not carry both "result" and "error""#)
                }
                (Some(result), None) => match duplicate_key(result.get()) {
                    Some(key) => fail(&format!("duplicate key {key:?} in result")),
                    None => match known {
                        Some(id) => Ok(Message::Response(Response {
                            id,
                            result: Payload::Raw(result.into()),
                        })),
                        None => fail("a response needs a non-null id"),
                    },
                },
                (None, Some(error)) => match serde_json::from_str::<ErrorObject>(error.get()) {
                    Ok(error) => Ok(Message::Error(ErrorResponse { id: known, error })),
                    Err(e) => fail(&format!("invalid error object: {e}")),
                },
                (None, None) => fail(r#"a message needs "method", "result" or "error""#),
            },
        }
    }
}

/// Reads a JSON value of any kind, keeping what a field needs and remembering values of the
/// wrong kind instead of failing the whole parse, so the message can still be answered.
enum Field {
    Int(i64),
    Str(String),
    Null,
    Other(&'static str),
}

impl<'de> Deserialize<'de> for Field {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Field;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Field, E> {
                Ok(Field::Str(v.to_owned()))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Field, E> {
                Ok(Field::Str(v))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Field, E> {
                Ok(Field::Int(v))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Field, E> {
                Ok(i64::try_from(v).map_or(Field::Other("an integer out of range"), Field::Int))
            }
            fn visit_f64<E>(self, _: f64) -> Result<Field, E> {
                Ok(Field::Other("a fractional number"))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Field, E> {
                Ok(Field::Other("a boolean"))
            }
            fn visit_unit<E>(self) -> Result<Field, E> {
                Ok(Field::Null)
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut a: A) -> Result<Field, A::Error> {
                while a.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Field::Other("an array"))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Field, A::Error> {
                while a.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Field::Other("an object"))
            }
        }
        d.deserialize_any(V)
    }
}

/// An envelope key, matched exactly (keys are case-sensitive) without allocating.
#[derive(Clone, Copy, PartialEq)]
enum Key {
    JsonRpc,
    Id,
    Method,
    Params,
    Result,
    Error,
    Other,
}

impl Key {
    fn name(self) -> &'static str {
        match self {
            Key::JsonRpc => "jsonrpc",
            Key::Id => "id",
            Key::Method => "method",
            Key::Params => "params",
            Key::Result => "result",
            Key::Error => "error",
            Key::Other => "",
        }
    }
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Key;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Key, E> {
                Ok(match v {
                    "jsonrpc" => Key::JsonRpc,
                    "id" => Key::Id,
                    "method" => Key::Method,
                    "params" => Key::Params,
                    "result" => Key::Result,
                    "error" => Key::Error,
                    _ => Key::Other,
                })
            }
        }
        d.deserialize_identifier(V)
    }
}

impl<'de> Deserialize<'de> for Envelope {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Envelope;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON-RPC message object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Envelope, A::Error> {
                let mut env = Envelope::default();
                let mut seen = [false; 6];
                while let Some(key) = map.next_key::<Key>()? {
                    if key == Key::Other {
                        map.next_value::<IgnoredAny>()?;
                        continue;
                    }
                    let slot = &mut seen[key as usize];
                    if *slot {
                        env.duplicate.get_or_insert(key.name());
                        map.next_value::<IgnoredAny>()?;
                        continue;
                    }
                    *slot = true;
                    match key {
                        Key::JsonRpc => env.jsonrpc = Some(map.next_value()?),
                        Key::Id => env.id = Some(map.next_value()?),
                        Key::Method => env.method = Some(map.next_value()?),
                        Key::Params => env.params = Some(map.next_value()?),
                        Key::Result => env.result = Some(map.next_value()?),
                        Key::Error | Key::Other => env.error = Some(map.next_value()?),
                    }
                }
                Ok(env)
            }
        }
        d.deserialize_map(V)
    }
}

#[cfg(test)]
mod tests {
    //! The hand-read path against the full one: whatever [`decode_plain`] accepts, the full
    //! path accepts as the same message, with payloads kept as the same text.

    use super::*;

    /// Messages the hand-read path must take (so it is what runs in practice).
    const PLAIN: &[&str] = &[
        r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}"#,
        r#"{"jsonrpc":"2.0","id":"abc","method":"ping"}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","method":"x","params":null}"#,
        r#"{"jsonrpc":"2.0","id":0,"method":"x","params":[1,{"a":[]}]}"#,
        r#"{"jsonrpc":"2.0","id":-12,"method":"x","params":{}}"#,
        r#"{"jsonrpc":"2.0","id":9223372036854775807,"method":"x"}"#,
        r#" { "method" : "x" , "id" : 1 , "jsonrpc" : "2.0" , "params" : { "a" : "b" } } "#,
        r#"{"id":3,"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"hi"}]}}"#,
        r#"{"jsonrpc":"2.0","id":"r","result":[]}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"s":"a\"b\u00e9\ud83d\ude00","n":-1.5e3}}"#,
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"caf\u{e9}\"}",
        // Valid `RawValue`s that do not read as Rust values: a lone surrogate, a huge number.
        r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"s":"\ud800","n":1e400}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"x","params":[true,false,null,-0,0.5E+2,"\/\b"]}"#,
    ];

    /// Messages it must leave to the full path (each an error or an unusual form).
    const DECLINED: &[&str] = &[
        r#"{"jsonrpc":"2.0","id":-0,"method":"x"}"#,
        r#"{"jsonrpc":"2.0","id":01,"method":"x"}"#,
        r#"{"jsonrpc":"2.0","id":1.0,"method":"x"}"#,
        r#"{"jsonrpc":"2.0","id":1e2,"method":"x"}"#,
        r#"{"jsonrpc":"2.0","id":9223372036854775808,"method":"x"}"#,
        r#"{"jsonrpc":"2.0","id":-9223372036854775808,"method":"x"}"#,
        r#"{"jsonrpc":"2.0","id":null,"method":"x"}"#,
        r#"{"jsonrpc":"2.0","id":"\u0061","method":"x"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"\u0070ing"}"#,
        r#"{"jsonrpc":"2.0","id":1,"\u006dethod":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"x","extra":1}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"x","method":"y"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":1,"a":2}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":1,}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":01}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":tru}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":nulls}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"x","params":[1.]}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"x","params":[-]}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"x","params":[1e+]}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"x","params":["\x"]}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"x","params":["\u12"]}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{"a":[1,]}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"x","params":"s"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"x",}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"x"} x"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"x""#,
        r#"{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":""}}"#,
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":""}}"#,
        r#"{"jsonrpc":"2.0","result":{}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":1}"#,
        r#"{"jsonrpc":"2.0","method":"x","result":{}}"#,
        r#"{"jsonrpc":"2.0","params":{},"result":{}}"#,
        r#"{"jsonrpc":"1.0","id":1,"method":"x"}"#,
        r#"{"id":1,"method":"x"}"#,
        r#"{}"#,
        r#"[{"jsonrpc":"2.0","id":1,"method":"x"}]"#,
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\tb\"}",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":{\"a\":\"\n\"}}",
    ];

    fn assert_same(text: &str, plain: &Message) {
        let full = decode_full(text.as_bytes(), DEFAULT_MAX_DEPTH);
        assert_eq!(full.as_ref(), Ok(plain), "{text}");
        // Payloads are kept as the same text, not just equal JSON.
        assert_eq!(
            format!("{full:?}"),
            format!("{:?}", Ok::<_, ()>(plain)),
            "{text}"
        );
    }

    #[test]
    fn the_plain_path_takes_common_messages_and_agrees_with_the_full_one() {
        for text in PLAIN {
            let Some(plain) = decode_plain(text.as_bytes(), DEFAULT_MAX_DEPTH) else {
                panic!("declined: {text}");
            };
            assert_same(text, &plain);
        }
    }

    #[test]
    fn the_plain_path_declines_what_it_does_not_read_exactly() {
        for text in DECLINED {
            assert_eq!(
                decode_plain(text.as_bytes(), DEFAULT_MAX_DEPTH),
                None,
                "{text}"
            );
        }
        // Invalid UTF-8 anywhere.
        let bad = b"{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":{\"a\":\"\xff\"}}";
        assert_eq!(decode_plain(bad, DEFAULT_MAX_DEPTH), None);
    }

    /// Bytes that matter to the grammar, for mutations.
    const PIECES: &[&str] = &[
        "{",
        "}",
        "[",
        "]",
        ",",
        ":",
        "\"",
        "\\",
        " ",
        "\n",
        "\t",
        "0",
        "1",
        "-",
        ".",
        "e",
        "null",
        "true",
        "a",
        "\\u0061",
        "\\ud800",
        "\\x",
        "+",
        "E",
        "fals",
        "\"a\":1",
        "\"id\":",
        "\"method\":",
        "\"params\":",
        "\"result\":",
        "\"jsonrpc\":\"2.0\"",
        "\u{0}",
        "\u{1f}",
        "\u{7f}",
        "\u{e9}",
    ];

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(1024))]

        /// Any mutation of a message the plain path reads either is declined by it or reads
        /// as the full path reads it, payloads kept as the same text (the plain path's
        /// payloads are checked by its own scanner only, so this is what guards that check).
        #[test]
        fn mutated_messages_never_make_the_paths_disagree(
            base in 0..PLAIN.len(),
            edits in proptest::collection::vec((0..200usize, 0..3u8, 0..PIECES.len()), 1..4),
        ) {
            let text = crate::jsonrpc::scan::mutate(PLAIN[base], &edits, PIECES);
            if let Some(plain) = decode_plain(text.as_bytes(), DEFAULT_MAX_DEPTH) {
                let full = decode_full(text.as_bytes(), DEFAULT_MAX_DEPTH);
                proptest::prop_assert_eq!(
                    format!("{full:?}"),
                    format!("{:?}", Ok::<_, ()>(plain)),
                    "{}",
                    text
                );
            }
        }
    }

    #[test]
    fn the_plain_path_keeps_the_depth_bound() {
        // The envelope is level 1, `params` level 2.
        let nested = |levels: usize| {
            let inner = "{\"a\":".repeat(levels - 2) + "1" + &"}".repeat(levels - 2);
            format!(r#"{{"jsonrpc":"2.0","method":"x","params":{{"a":{inner}}}}}"#)
        };
        for limit in [3, 10, DEFAULT_MAX_DEPTH] {
            let ok = nested(limit);
            let plain = decode_plain(ok.as_bytes(), limit);
            assert!(plain.is_some(), "depth {limit} within {limit}");
            assert_eq!(decode_plain(nested(limit + 1).as_bytes(), limit), None);
            let d = Decoder::new().max_depth(limit);
            assert_eq!(
                d.decode_message(nested(limit + 1).as_bytes()),
                Err(DecodeError::TooDeep { limit })
            );
        }
        assert_eq!(
            decode_plain(br#"{"jsonrpc":"2.0","method":"x","params":{}}"#, 1),
            None
        );
    }
}
