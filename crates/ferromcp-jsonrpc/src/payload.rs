//! Params and results that stay unparsed until someone needs them typed.

use std::fmt;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;
use serde_json::value::RawValue;

use super::RequestId;
use super::message::write_id;
use super::scan::Checked;

/// The text of one valid JSON value, kept as written (no whitespace around it): what
/// [`Payload::Raw`] holds.
///
/// Every `RawJson` holds JSON that serde_json reads as a [`RawValue`]; the public
/// constructors check it ([`RawJson::from_string`]) or take it from a `RawValue` that was
/// checked when it was made. The decoder builds its payloads from text its own scanner has
/// already checked, so a decoded message's `params` or `result` is read once, not twice.
///
/// ```
/// use ferromcp_jsonrpc::{Payload, RawJson};
///
/// let raw = RawJson::from_string(r#"{"name": "echo"}"#.to_owned()).unwrap();
/// assert_eq!(raw.get(), r#"{"name": "echo"}"#);
/// assert!(RawJson::from_string("{\"name\":}".to_owned()).is_err());
///
/// // Serialized as written, not re-encoded.
/// assert_eq!(serde_json::to_string(&raw).unwrap(), r#"{"name": "echo"}"#);
/// let p = Payload::Raw(raw);
/// assert!(p.is_object());
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct RawJson(Box<str>);

impl RawJson {
    /// Checks that `json` is one JSON value (whitespace around it is dropped) and keeps it.
    ///
    /// # Errors
    ///
    /// The serde_json error when `json` is not a single valid JSON value.
    pub fn from_string(json: String) -> serde_json::Result<Self> {
        RawValue::from_string(json).map(Self::from)
    }

    /// Text the crate's own scanner has read through and found valid.
    ///
    /// Invariant: [`Checked`] is made only by the scanner in `scan.rs`, once it has read the
    /// text as one JSON value with no whitespace around it, checking everything serde_json
    /// checks when it builds a [`RawValue`] (full grammar, escapes, no control characters in
    /// strings; UTF-8 holds because the text is a `str`). That is the same invariant the
    /// public constructors establish, so nothing is checked again here.
    pub(super) fn from_checked(checked: Checked<'_>) -> Self {
        Self(checked.text().into())
    }

    /// Keeps `json` **without checking it**: the caller guarantees that it is one valid JSON
    /// value with no whitespace around it, the promise every `RawJson` keeps.
    ///
    /// For text made only of parts of JSON that was already checked, joined so that the
    /// whole is valid by construction: a member cut out of an object read from a `RawJson`,
    /// a member's value copied into a new object with keys the caller writes (escaped), where
    /// reading the result again would only repeat the check its parts passed (a relay's
    /// per-call cost, issue 23). Never for text that came from outside the program and was
    /// not read: use [`RawJson::from_string`] for that. Text that breaks the promise is
    /// written out as it is, and a peer reading it fails. Debug builds check it (and panic
    /// when it is not valid), so tests catch a caller that joins wrongly.
    ///
    /// ```
    /// use ferromcp_jsonrpc::RawJson;
    ///
    /// let params = RawJson::from_string(r#"{"a":[1,2],"b":true}"#.to_owned()).unwrap();
    /// // `[1,2]` is a member's value, cut where a walk over the checked text found its ends.
    /// let value = &params.get()[5..10];
    /// let joined = RawJson::from_valid_unchecked(format!(r#"{{"x":{value}}}"#));
    /// assert_eq!(joined.get(), r#"{"x":[1,2]}"#);
    /// ```
    pub fn from_valid_unchecked(json: String) -> Self {
        debug_assert!(
            RawValue::from_string(json.clone()).is_ok_and(|raw| raw.get() == json),
            "RawJson::from_valid_unchecked given text that is not one valid JSON value: {json}"
        );
        Self(json.into())
    }

    /// The JSON text, as written.
    pub fn get(&self) -> &str {
        &self.0
    }

    /// This object with `key: value` put before its members (`{"key":value,...}`), built
    /// from the two texts without reading them again; `None` when `self` is not an object.
    /// The caller makes sure the object has no member `key` already (JSON text may repeat a
    /// key, and readers disagree on which one wins).
    ///
    /// ```
    /// use ferromcp_jsonrpc::RawJson;
    ///
    /// let params = RawJson::from_string(r#"{"name":"add"}"#.to_owned()).unwrap();
    /// let meta = RawJson::from_string(r#"{"a":1}"#.to_owned()).unwrap();
    /// let both = params.with_first_member("_meta", &meta).unwrap();
    /// assert_eq!(both.get(), r#"{"_meta":{"a":1},"name":"add"}"#);
    /// assert!(meta.with_first_member("x", &meta).is_some());
    /// assert!(RawJson::from_string("[1]".to_owned()).unwrap().with_first_member("x", &meta).is_none());
    /// ```
    pub fn with_first_member(&self, key: &str, value: &RawJson) -> Option<RawJson> {
        let rest = self.0.strip_prefix('{')?;
        Some(Self(join_member(key, value, rest)))
    }

    /// This object with `key: value` put first in the object that is the value of its first
    /// member `outer`, when the text begins exactly `{"outer":{` (no whitespace, no escape in
    /// `outer`); `None` otherwise (read the object and change it instead). As with
    /// [`with_first_member`](Self::with_first_member), the caller makes sure that inner
    /// object has no member `key` already.
    ///
    /// ```
    /// use ferromcp_jsonrpc::RawJson;
    ///
    /// let token = RawJson::from_string("7".to_owned()).unwrap();
    /// let params = RawJson::from_string(r#"{"_meta":{"v":"x"},"name":"add"}"#.to_owned()).unwrap();
    /// let with = params.with_first_member_in("_meta", "progressToken", &token).unwrap();
    /// assert_eq!(with.get(), r#"{"_meta":{"progressToken":7,"v":"x"},"name":"add"}"#);
    /// let empty = RawJson::from_string(r#"{"_meta":{ },"a":1}"#.to_owned()).unwrap();
    /// let with = empty.with_first_member_in("_meta", "progressToken", &token).unwrap();
    /// assert_eq!(with.get(), r#"{"_meta":{"progressToken":7},"a":1}"#);
    /// let other = RawJson::from_string(r#"{"name":"add","_meta":{}}"#.to_owned()).unwrap();
    /// assert!(other.with_first_member_in("_meta", "progressToken", &token).is_none());
    /// ```
    pub fn with_first_member_in(&self, outer: &str, key: &str, value: &RawJson) -> Option<RawJson> {
        if outer.bytes().any(|b| super::scan::SPECIAL[usize::from(b)]) {
            return None;
        }
        let text = self.get();
        let after = text
            .strip_prefix("{\"")?
            .strip_prefix(outer)?
            .strip_prefix("\":{")?;
        // Up to the inner object's `{`, which `join_member` writes again.
        let head = text.get(..text.len() - after.len() - 1).unwrap_or_default();
        let mut out = String::with_capacity(text.len() + key.len() + value.get().len() + 4);
        out.push_str(head);
        out.push_str(&join_member(key, value, after));
        Some(Self(out.into()))
    }
}

impl RawJson {
    /// This object with `key` put first, its value an object of the member `first` (a
    /// request id: a progress token) when given, then the members of `object` when given:
    /// `{"key":{"first":ID,...object's members},...self's members}`, written in one copy
    /// from the texts without reading them again; `None` when `self` or `object` is not an
    /// object. As with [`with_first_member`](Self::with_first_member), the caller makes sure
    /// `self` has no member `key` and `object` no member named as `first`.
    ///
    /// ```
    /// use ferromcp_jsonrpc::{RawJson, RequestId};
    ///
    /// let params = RawJson::from_string(r#"{"name":"add"}"#.to_owned()).unwrap();
    /// let meta = RawJson::from_string(r#"{"v":"x"}"#.to_owned()).unwrap();
    /// let token = RequestId::from(7);
    /// let both = params.with_first_object("_meta", Some(("progressToken", &token)), Some(&meta));
    /// assert_eq!(both.unwrap().get(), r#"{"_meta":{"progressToken":7,"v":"x"},"name":"add"}"#);
    /// let empty = RawJson::from_string("{ }".to_owned()).unwrap();
    /// assert_eq!(empty.with_first_object("_meta", None, None).unwrap().get(), r#"{"_meta":{}}"#);
    /// ```
    pub fn with_first_object(
        &self,
        key: &str,
        first: Option<(&str, &RequestId)>,
        object: Option<&RawJson>,
    ) -> Option<RawJson> {
        let rest = self.0.strip_prefix('{')?;
        // The object's members without its braces (no whitespace around a `RawJson`).
        let members = match object {
            Some(o) => o
                .get()
                .strip_prefix('{')?
                .strip_suffix('}')?
                .trim_matches([' ', '\t', '\n', '\r']),
            None => "",
        };
        let mut out = Vec::with_capacity(rest.len() + key.len() + members.len() + 48);
        out.push(b'{');
        write_str(key, &mut out);
        out.extend_from_slice(b":{");
        if let Some((name, id)) = first {
            write_str(name, &mut out);
            out.push(b':');
            write_id(id, &mut out);
            if !members.is_empty() {
                out.push(b',');
            }
        }
        out.extend_from_slice(members.as_bytes());
        out.push(b'}');
        let trimmed = rest.trim_start_matches([' ', '\t', '\n', '\r']);
        if trimmed.starts_with('}') {
            out.extend_from_slice(trimmed.as_bytes());
        } else {
            out.push(b',');
            out.extend_from_slice(rest.as_bytes());
        }
        // Only whole UTF-8 strings and ASCII went in.
        String::from_utf8(out).ok().map(|s| Self(s.into()))
    }
}

/// `"key":value` followed by the rest of an object whose `{` has been taken off: with a comma
/// before the members that follow, with none before the `}` of an empty object (whitespace
/// before that `}` is dropped).
fn join_member(key: &str, value: &RawJson, rest: &str) -> Box<str> {
    let trimmed = rest.trim_start_matches([' ', '\t', '\n', '\r']);
    let empty = trimmed.starts_with('}');
    let mut out = Vec::with_capacity(rest.len() + key.len() + value.get().len() + 5);
    out.push(b'{');
    write_str(key, &mut out);
    out.push(b':');
    out.extend_from_slice(value.get().as_bytes());
    if empty {
        out.extend_from_slice(trimmed.as_bytes());
    } else {
        out.push(b',');
        out.extend_from_slice(rest.as_bytes());
    }
    // Only whole UTF-8 strings and ASCII went in.
    String::from_utf8(out).unwrap_or_default().into()
}

/// No check needed: a `RawValue` holds valid JSON. Takes its text without copying.
impl From<Box<RawValue>> for RawJson {
    fn from(raw: Box<RawValue>) -> Self {
        Self(raw.into())
    }
}

impl fmt::Debug for RawJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RawJson({})", self.get())
    }
}

/// Writes the JSON text as it is.
impl fmt::Display for RawJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.get())
    }
}

/// Serialized exactly as a [`RawValue`] is: verbatim by serde_json's serializers (and
/// parsed by `serde_json::to_value`). The text is borrowed as a `RawValue`, which reads it
/// once more; messages are written by [`Payload::write_to`] instead, which copies the text.
impl Serialize for RawJson {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let raw: &RawValue = serde_json::from_str(self.get()).map_err(serde::ser::Error::custom)?;
        raw.serialize(s)
    }
}

/// Deserialized as a [`RawValue`]: any one JSON value, kept as written.
impl<'de> Deserialize<'de> for RawJson {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Box::<RawValue>::deserialize(d).map(Self::from)
    }
}

/// The `params` of a request or notification, or the `result` of a response.
///
/// Decoded messages carry their payload as raw JSON text ([`Payload::Raw`]), parsed once, into
/// the handler's own type, by [`Payload::parse`]. In-process dispatch hands values over as they
/// are ([`Payload::Value`]), with no serialization at all.
///
/// ```
/// use ferromcp_jsonrpc::Payload;
///
/// let p = Payload::from_value(serde_json::json!({"name": "add"}));
/// #[derive(serde::Deserialize)]
/// struct P { name: String }
/// assert_eq!(p.parse::<P>().unwrap().name, "add");
/// ```
#[derive(Clone)]
pub enum Payload {
    /// Unparsed JSON text, as it came off the wire.
    Raw(RawJson),
    /// A JSON value built in memory.
    Value(Value),
}

impl Payload {
    /// Wraps a JSON value.
    pub fn from_value(value: Value) -> Self {
        Self::Value(value)
    }

    /// Serializes any value into a payload.
    pub fn from_serialize<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<Self> {
        serde_json::to_value(value).map(Self::Value)
    }

    /// An empty JSON object.
    pub fn empty_object() -> Self {
        Self::Value(Value::Object(serde_json::Map::new()))
    }

    /// Deserializes the payload into `T` (from the raw text, or from the value without cloning).
    pub fn parse<T: DeserializeOwned>(&self) -> serde_json::Result<T> {
        match self {
            Self::Raw(raw) => serde_json::from_str(raw.get()),
            Self::Value(value) => T::deserialize(value),
        }
    }

    /// The payload as a JSON value (parses raw text).
    pub fn into_value(self) -> serde_json::Result<Value> {
        match self {
            Self::Raw(raw) => serde_json::from_str(raw.get()),
            Self::Value(value) => Ok(value),
        }
    }

    /// The payload as a JSON object map; `None` when it is not an object.
    pub fn into_object(self) -> Option<serde_json::Map<String, Value>> {
        match self.into_value() {
            Ok(Value::Object(map)) => Some(map),
            _ => None,
        }
    }

    /// Whether the payload is a JSON object.
    pub fn is_object(&self) -> bool {
        match self {
            Self::Raw(raw) => raw.get().trim_start().starts_with('{'),
            Self::Value(value) => value.is_object(),
        }
    }

    /// The payload as compact JSON text.
    pub fn to_json_string(&self) -> String {
        match self {
            Self::Raw(raw) => raw.get().to_owned(),
            Self::Value(value) => value.to_string(),
        }
    }
}

impl Payload {
    /// Appends the payload as compact JSON to `out`: raw text as it is, a value as serde_json
    /// writes it (the same bytes as `serde_json::to_writer`, with no serializer machinery on
    /// the usual strings, bools and containers).
    pub fn write_to(&self, out: &mut Vec<u8>) {
        match self {
            Self::Raw(raw) => out.extend_from_slice(raw.get().as_bytes()),
            Self::Value(value) => write_value(value, out),
        }
    }
}

/// Appends `value` as compact JSON, exactly as `serde_json::to_writer` does.
fn write_value(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_item(item, out);
            }
            out.push(b']');
        }
        Value::Object(map) => {
            out.push(b'{');
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_str(key, out);
                out.push(b':');
                write_item(item, out);
            }
            out.push(b'}');
        }
        leaf => write_item(leaf, out),
    }
}

/// [`write_value`], with leaves written in place (most members are strings, so the usual
/// member costs no further call).
#[inline]
fn write_item(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::String(s) => write_str(s, out),
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        // Numbers keep serde_json's own formatting (floats, and every feature's forms).
        Value::Number(n) => write_serde(n, out),
        Value::Array(_) | Value::Object(_) => write_value(value, out),
    }
}

/// Appends a JSON string: as it is between quotes when nothing in it needs escaping (the
/// usual case), else escaped by serde_json.
#[inline]
pub(super) fn write_str(s: &str, out: &mut Vec<u8>) {
    // The bytes serde_json escapes are the ones that end plain string content.
    if s.bytes().any(|b| super::scan::SPECIAL[usize::from(b)]) {
        write_serde(s, out);
        return;
    }
    out.reserve(s.len() + 2);
    out.push(b'"');
    out.extend_from_slice(s.as_bytes());
    out.push(b'"');
}

/// Appends an integer in decimal.
pub(super) fn write_i64(n: i64, out: &mut Vec<u8>) {
    let mut digits = [0u8; 20];
    let mut start = digits.len();
    let mut rest = n.unsigned_abs();
    loop {
        start -= 1;
        if let Some(d) = digits.get_mut(start) {
            // `rest % 10` is a single digit.
            *d = b'0' + (rest % 10) as u8;
        }
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    if n < 0 {
        out.push(b'-');
    }
    out.extend_from_slice(digits.get(start..).unwrap_or_default());
}

/// Appends what serde_json writes for `value`; into memory that cannot fail for strings and
/// numbers.
fn write_serde<T: Serialize + ?Sized>(value: &T, out: &mut Vec<u8>) {
    if let Err(e) = serde_json::to_writer(&mut *out, value) {
        debug_assert!(false, "encoding JSON failed: {e}");
    }
}

impl From<Value> for Payload {
    fn from(value: Value) -> Self {
        Self::Value(value)
    }
}

impl From<serde_json::Map<String, Value>> for Payload {
    fn from(map: serde_json::Map<String, Value>) -> Self {
        Self::Value(Value::Object(map))
    }
}

impl From<Box<RawValue>> for Payload {
    fn from(raw: Box<RawValue>) -> Self {
        Self::Raw(raw.into())
    }
}

impl From<RawJson> for Payload {
    fn from(raw: RawJson) -> Self {
        Self::Raw(raw)
    }
}

impl fmt::Debug for Payload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Raw(raw) => write!(f, "Raw({})", raw.get()),
            Self::Value(value) => write!(f, "Value({value})"),
        }
    }
}

/// Payloads compare by the JSON they hold, whatever their form.
impl PartialEq for Payload {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Self::Raw(a), Self::Raw(b)) if a.get() == b.get() => true,
            (Self::Value(a), Self::Value(b)) => a == b,
            _ => {
                let a = self.clone().into_value().ok();
                let b = other.clone().into_value().ok();
                a.is_some() && a == b
            }
        }
    }
}

impl Serialize for Payload {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Raw(raw) => raw.serialize(s),
            Self::Value(value) => value.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for Payload {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        RawJson::deserialize(d).map(Self::Raw)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn raw_and_value_forms_compare_by_content() {
        let raw: Payload = serde_json::from_str(r#"{ "a" : 1 }"#).unwrap();
        assert_eq!(raw, Payload::from_value(json!({"a": 1})));
        assert!(raw.is_object());
        assert_eq!(raw.to_json_string(), r#"{ "a" : 1 }"#);
    }

    /// `RawJson` is a `RawValue` by another name: checked the same way, kept and written as
    /// written, read by serde_json as the value it holds.
    #[test]
    fn raw_json_checks_keeps_and_serializes_like_raw_value() {
        assert!(RawJson::from_string("[1,]".into()).is_err());
        assert!(RawJson::from_string("1 2".into()).is_err());
        let trimmed = RawJson::from_string(" [1, 2]\n".into()).unwrap();
        assert_eq!(trimmed.get(), "[1, 2]");

        let boxed = RawValue::from_string(r#"{"a": [true]}"#.into()).unwrap();
        let raw = RawJson::from(boxed);
        assert_eq!(raw.to_string(), r#"{"a": [true]}"#);
        assert_eq!(format!("{raw:?}"), r#"RawJson({"a": [true]})"#);
        assert_eq!(serde_json::to_string(&raw).unwrap(), r#"{"a": [true]}"#);
        assert_eq!(serde_json::to_value(&raw).unwrap(), json!({"a": [true]}));

        let read: RawJson = serde_json::from_str(r#" {"b" : null} "#).unwrap();
        assert_eq!(read.get(), r#"{"b" : null}"#);
        let payload = Payload::from(read.clone());
        assert_eq!(serde_json::to_string(&payload).unwrap(), read.get());
        let mut out = Vec::new();
        payload.write_to(&mut out);
        assert_eq!(out, read.get().as_bytes());
    }
}
