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
//! - nesting depth is bounded ([`DEFAULT_MAX_DEPTH`], settable) before anything is parsed;
//! - invalid UTF-8 is a parse error.

use std::fmt;

use serde::Deserialize;
use serde::de::{self, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;

use super::{
    ErrorObject, ErrorResponse, Message, Notification, Payload, Request, RequestId, Response,
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
        check_depth(bytes, self.max_depth)?;
        let text = utf8(bytes)?;
        if first_non_ws(bytes) == Some(b'[') {
            let entries: Vec<Box<RawValue>> = parse_unbounded(text)?;
            if entries.is_empty() {
                return Err(DecodeError::invalid(None, "empty batch"));
            }
            let decoded = entries
                .iter()
                .map(|raw| decode_message(raw.get()))
                .collect();
            return Ok(Frame::Batch(decoded));
        }
        decode_message(text).map(Frame::Single)
    }

    /// Decodes one message; a batch is an invalid request here.
    pub fn decode_message(&self, bytes: &[u8]) -> Result<Message, DecodeError> {
        check_depth(bytes, self.max_depth)?;
        let text = utf8(bytes)?;
        if first_non_ws(bytes) == Some(b'[') {
            // Still a parse error when the batch is not JSON at all.
            let _: IgnoredAny = parse_unbounded(text)?;
            return Err(DecodeError::invalid(None, "batches are not supported here"));
        }
        decode_message(text)
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
                            Some(Payload::Raw(raw))
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
                            result: Payload::Raw(result),
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

/// The first key that appears twice in one object anywhere in `text` (JSON whose depth is
/// already bounded), so that `params` and `result` are never read first-wins by one parser
/// and last-wins by another (the Go SDK's GHSA-wvj2-96wp-fq3f). Content serde_json cannot
/// scan (a number beyond `f64`, a lone surrogate escape) ends the scan without a finding:
/// reading it into a value fails later anyway.
fn duplicate_key(text: &str) -> Option<String> {
    use std::borrow::Cow;
    use std::collections::HashSet;

    use serde::de::{DeserializeSeed, SeqAccess};

    const FOUND: &str = "\u{0}duplicate key";

    struct Scan<'a>(&'a mut Option<String>);

    impl<'de> DeserializeSeed<'de> for Scan<'_> {
        type Value = ();
        fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
            d.deserialize_any(self)
        }
    }

    struct KeySeed;

    impl<'de> DeserializeSeed<'de> for KeySeed {
        type Value = Cow<'de, str>;
        fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Cow<'de, str>, D::Error> {
            d.deserialize_str(self)
        }
    }

    impl<'de> Visitor<'de> for KeySeed {
        type Value = Cow<'de, str>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a key")
        }
        fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Cow<'de, str>, E> {
            Ok(Cow::Borrowed(v))
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<Cow<'de, str>, E> {
            Ok(Cow::Owned(v.to_owned()))
        }
    }

    impl<'de> Visitor<'de> for Scan<'_> {
        type Value = ();
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("JSON")
        }
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
            Ok(())
        }
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
            Ok(())
        }
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
            Ok(())
        }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
            Ok(())
        }
        fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
            Ok(())
        }
        fn visit_unit<E: de::Error>(self) -> Result<(), E> {
            Ok(())
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<(), A::Error> {
            let out = self.0;
            while a.next_element_seed(Scan(&mut *out))?.is_some() {}
            Ok(())
        }
        fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<(), A::Error> {
            let out = self.0;
            // Small objects (the usual case) are checked by a linear search over keys kept on
            // the stack; past 16 keys, a hash set.
            const FEW: usize = 16;
            let mut few: [Option<Cow<'de, str>>; FEW] = Default::default();
            let mut len = 0;
            let mut many: HashSet<Cow<'de, str>> = HashSet::new();
            while let Some(key) = a.next_key_seed(KeySeed)? {
                let seen = if len < FEW {
                    let seen = few[..len].iter().flatten().any(|k| *k == key);
                    few[len] = Some(key.clone());
                    len += 1;
                    seen
                } else {
                    if many.is_empty() {
                        many.extend(few.iter_mut().filter_map(Option::take));
                    }
                    !many.insert(key.clone())
                };
                if seen {
                    *out = Some(key.into_owned());
                    return Err(de::Error::custom(FOUND));
                }
                a.next_value_seed(Scan(&mut *out))?;
            }
            Ok(())
        }
    }

    if !text.contains('{') {
        return None;
    }
    let mut found = None;
    let mut d = serde_json::Deserializer::from_str(text);
    let _ = Scan(&mut found).deserialize(&mut d);
    found
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
