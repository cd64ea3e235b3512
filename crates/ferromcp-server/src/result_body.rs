//! The result of a request as middleware sees it on the way back: the JSON text the handler's
//! typed result was written to (or that a forwarding handler received), or an object a layer
//! built or changed (issue 17 point 4, the result half).

use std::borrow::Cow;
use std::fmt;
use std::sync::OnceLock;

use ferromcp_types::jsonrpc::{Payload, RawJson};
use ferromcp_types::mcp::JsonObject;
use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, Visitor};
use serde::{Deserializer, Serialize, Serializer};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::middleware::KeyIs;

/// The result of a request as middleware sees it: raw JSON text until a layer asks for an
/// object.
///
/// A typed result (what the SDK's own handlers return) is serialized once, straight to the
/// text that goes out; the kernel checks that text against the protocol's schema in one pass
/// and the transports write it as it is (stdio, HTTP, and in process, where the client reads
/// its typed result from the text). A layer that looks ([`as_object`](Self::as_object))
/// has the text parsed once, and every later look shares that object; a layer that changes
/// it ([`as_object_mut`](Self::as_object_mut), or returning a body of its own) makes the
/// changed object what goes out. [`get`](Self::get) reads one member without parsing the rest.
///
/// ```
/// use ferromcp_server::middleware::McpResultBody;
/// use serde_json::json;
/// use serde_json::value::RawValue;
///
/// let raw = RawValue::from_string(r#"{"content":[],"n":1.50}"#.to_owned()).unwrap();
/// let mut body = McpResultBody::from_raw(raw).unwrap();
/// // One member, read from the text; the text is still what goes out.
/// assert_eq!(body.get("n").as_deref(), Some(&json!(1.5)));
/// assert_eq!(body.raw().unwrap().get(), r#"{"content":[],"n":1.50}"#);
/// // Changing it drops the text: the changed object is what goes out.
/// body.as_object_mut().unwrap().insert("isError".into(), json!(true));
/// assert!(body.raw().is_none());
/// assert_eq!(body.into_object().unwrap()["isError"], true);
/// ```
#[derive(Clone)]
pub struct McpResultBody(Repr);

#[derive(Clone)]
enum Repr {
    /// An object: built by the kernel or a layer, or changed by one.
    Object(JsonObject),
    /// JSON text of an object, and its parsed object once someone asked for it (`None`
    /// inside: the text nests deeper than serde_json parses).
    Raw(RawJson, OnceLock<Option<JsonObject>>),
}

impl McpResultBody {
    /// A body from an object.
    pub fn from_object(object: JsonObject) -> Self {
        Self(Repr::Object(object))
    }

    /// A body from the JSON text of a result, sent as it is unless a layer changes it (what a
    /// forwarding handler uses for a result it received as text). `None` when the text is not
    /// an object.
    pub fn from_raw(raw: Box<RawValue>) -> Option<Self> {
        Self::from_raw_json(RawJson::from(raw))
    }

    /// [`from_raw`](Self::from_raw) for text held as a [`RawJson`] (a decoded message's
    /// [`Payload::Raw`]).
    pub fn from_raw_json(raw: RawJson) -> Option<Self> {
        raw.get()
            .starts_with('{')
            .then(|| Self(Repr::Raw(raw, OnceLock::new())))
    }

    /// The JSON text, while nothing has changed the body (`None` for an object).
    pub fn raw(&self) -> Option<&RawJson> {
        match &self.0 {
            Repr::Raw(raw, _) => Some(raw),
            Repr::Object(_) => None,
        }
    }

    /// Whether an object of the body exists: it was built as one, or someone looked at the
    /// text.
    pub fn is_parsed(&self) -> bool {
        match &self.0 {
            Repr::Object(_) => true,
            Repr::Raw(_, object) => object.get().is_some_and(Option::is_some),
        }
    }

    /// The body as an object, parsed from the text on first use and kept (`None` only when
    /// the text nests deeper than serde_json parses).
    pub fn as_object(&self) -> Option<&JsonObject> {
        match &self.0 {
            Repr::Object(object) => Some(object),
            Repr::Raw(raw, object) => object.get_or_init(|| parse(raw)).as_ref(),
        }
    }

    /// The body as an object to change in place; what goes out from then on (the text is
    /// dropped).
    pub fn as_object_mut(&mut self) -> Option<&mut JsonObject> {
        if let Repr::Raw(raw, object) = &mut self.0 {
            let parsed = object.take().unwrap_or_else(|| parse(raw))?;
            self.0 = Repr::Object(parsed);
        }
        match &mut self.0 {
            Repr::Object(object) => Some(object),
            Repr::Raw(..) => None,
        }
    }

    /// The body as an object (`None` only when the text nests deeper than serde_json parses).
    pub fn into_object(self) -> Option<JsonObject> {
        match self.0 {
            Repr::Object(object) => Some(object),
            Repr::Raw(raw, mut object) => object.take().unwrap_or_else(|| parse(&raw)),
        }
    }

    /// The top-level member `key`: from the object when there is one, else read from the text
    /// without parsing the rest.
    pub fn get(&self, key: &str) -> Option<Cow<'_, Value>> {
        let text = match &self.0 {
            Repr::Object(object) => return object.get(key).map(Cow::Borrowed),
            Repr::Raw(raw, object) => match object.get() {
                Some(object) => return object.as_ref()?.get(key).map(Cow::Borrowed),
                None => raw.get(),
            },
        };
        // A key of plain characters is in the text as written, or escaped with `\u`: when
        // neither is there, nothing needs reading (the usual `isError` of a span's outcome).
        let plain = key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
        if plain && !text.contains(key) && !text.contains("\\u") {
            return None;
        }
        let mut de = serde_json::Deserializer::from_str(text);
        Member(key)
            .deserialize(&mut de)
            .ok()
            .flatten()
            .map(Cow::Owned)
    }

    /// The body as a dispatcher's payload: the text when unchanged (written as it is), else
    /// the object.
    pub fn into_payload(self) -> Payload {
        match self.0 {
            Repr::Raw(raw, _) => Payload::Raw(raw),
            Repr::Object(object) => Payload::Value(Value::Object(object)),
        }
    }

    /// Text the kernel wrote itself with serde_json from a result that serializes to an
    /// object (`text` starts with `{`).
    pub(crate) fn from_written(text: RawJson) -> Self {
        Self(Repr::Raw(text, OnceLock::new()))
    }

    /// What a handler returning this body gives the kernel: its text as written, or its
    /// object as a value.
    pub(crate) fn into_output(self) -> crate::handler_fn::Output {
        match self.0 {
            Repr::Raw(raw, _) => crate::handler_fn::Output::Raw(raw),
            Repr::Object(object) => crate::handler_fn::Output::Value(Value::Object(object)),
        }
    }
}

fn parse(raw: &RawJson) -> Option<JsonObject> {
    serde_json::from_str(raw.get()).ok()
}

/// An empty object.
impl Default for McpResultBody {
    fn default() -> Self {
        Self::from_object(JsonObject::new())
    }
}

/// A body from an object.
impl From<JsonObject> for McpResultBody {
    fn from(object: JsonObject) -> Self {
        Self::from_object(object)
    }
}

/// Serialized as the text, verbatim, or as the object.
impl Serialize for McpResultBody {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match &self.0 {
            Repr::Raw(raw, _) => raw.serialize(s),
            Repr::Object(object) => object.serialize(s),
        }
    }
}

impl fmt::Debug for McpResultBody {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Repr::Raw(raw, _) => write!(f, "Raw({raw})"),
            Repr::Object(object) => write!(f, "Object({})", Value::Object(object.clone())),
        }
    }
}

/// Reads one member of an object as a value, skipping the others.
struct Member<'k>(&'k str);

impl<'de> DeserializeSeed<'de> for Member<'_> {
    type Value = Option<Value>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Member<'_> {
    type Value = Option<Value>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        // The last of a key written twice, as a parse keeps it.
        let mut found = None;
        while let Some(is_key) = map.next_key_seed(KeyIs(self.0))? {
            if is_key {
                found = Some(map.next_value::<Value>()?);
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(found)
    }
}
