//! The full path: any frame, through serde_json, decided strictly (depth bounded before the
//! parse, the whole input UTF-8, duplicate keys rejected); the path every message that the
//! hand-read [`decode_plain`](super::decode_plain) declines takes.

use std::fmt;

use serde::Deserialize;
use serde::de::{self, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;

use super::{DecodeError, MAX_SETTABLE_DEPTH, first_non_ws};
use crate::scan;
use crate::{
    ErrorObject, ErrorResponse, Message, Notification, Payload, Request, RequestId, Response,
};

/// [`Decoder::decode_message`](super::Decoder::decode_message) for any input, through
/// serde_json: the path every message that [`decode_plain`](super::decode_plain) declines
/// takes.
pub(super) fn decode_full(bytes: &[u8], max_depth: usize) -> Result<Message, DecodeError> {
    check_depth(bytes, max_depth)?;
    let text = utf8(bytes)?;
    if first_non_ws(bytes) == Some(b'[') {
        // Still a parse error when the batch is not JSON at all.
        let _: IgnoredAny = parse_unbounded(text)?;
        return Err(DecodeError::invalid(None, "batches are not supported here"));
    }
    decode_message(text)
}

/// Rejects input nested deeper than `limit`, in one pass over the bytes and before any
/// parsing, so deep input costs neither stack nor allocation.
pub(super) fn check_depth(bytes: &[u8], limit: usize) -> Result<(), DecodeError> {
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
pub(super) fn parse_unbounded<'de, T: Deserialize<'de>>(text: &'de str) -> Result<T, DecodeError> {
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
pub(super) fn utf8(bytes: &[u8]) -> Result<&str, DecodeError> {
    std::str::from_utf8(bytes).map_err(|e| DecodeError::Parse(format!("invalid UTF-8: {e}")))
}

/// The first key that appears twice in one object anywhere in `text` (JSON already read by
/// serde_json, its depth already bounded), so that `params` and `result` are never read
/// first-wins by one parser and last-wins by another (the Go SDK's GHSA-wvj2-96wp-fq3f).
/// Keys compare by their decoded value (`"k"` and `"\u006b"` are the same key).
fn duplicate_key(text: &str) -> Option<String> {
    scan::duplicate_key(text, MAX_SETTABLE_DEPTH)
}

pub(super) fn decode_message(text: &str) -> Result<Message, DecodeError> {
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
