//! A handler call's arguments: a tool's as the JSON text received (issue 17 point 4: a typed
//! tool call never builds a `Value` of them), or a value (prompts, resources, and tool
//! params a middleware layer turned into one); the value of text built only on demand.

use std::ops::Range;
use std::sync::OnceLock;

use ferromcp_types::jsonrpc::RawJson;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// The arguments of one call (an object).
pub(crate) struct Arguments {
    /// The request's params text and where the arguments sit in it (`None`: a value).
    text: Option<(RawJson, Range<usize>)>,
    /// The value: given, or parsed from `text` on first use.
    value: OnceLock<Value>,
}

impl Arguments {
    /// Arguments given as a value.
    pub(crate) fn from_value(value: Value) -> Self {
        Self {
            text: None,
            value: OnceLock::from(value),
        }
    }

    /// The arguments at `range` of `params` (the text of one JSON object there), or `{}` when
    /// `range` is `None` (absent or `null`: what a handler sees as no arguments).
    pub(crate) fn from_text(params: RawJson, range: Option<Range<usize>>) -> Self {
        match range {
            Some(range) if params.get().get(range.clone()).is_some() => Self {
                text: Some((params, range)),
                value: OnceLock::new(),
            },
            _ => Self::default(),
        }
    }

    /// The arguments' JSON text, when they came as text.
    pub(crate) fn text(&self) -> Option<&str> {
        let (params, range) = self.text.as_ref()?;
        params.get().get(range.clone())
    }

    /// The arguments as a value, parsed from the text on first use and kept. Text serde_json
    /// will not parse (nesting deeper than it reads, which the request's own parse let
    /// through) reads as `{}`; the schema check's depth limit refuses such arguments first.
    pub(crate) fn value(&self) -> &Value {
        self.value.get_or_init(|| {
            let text = self.text().unwrap_or("{}");
            serde_json::from_str(text).unwrap_or_else(|e| {
                tracing::debug!(error = %e, "tool arguments did not parse to a value");
                Value::Object(serde_json::Map::new())
            })
        })
    }

    /// Deserializes `T` from the text (no value built), or from the value.
    pub(crate) fn deserialize<T: DeserializeOwned>(&self) -> serde_json::Result<T> {
        match self.text() {
            Some(text) => serde_json::from_str(text),
            None => T::deserialize(self.value()),
        }
    }
}

impl Default for Arguments {
    /// `{}`.
    fn default() -> Self {
        Self::from_value(Value::Object(serde_json::Map::new()))
    }
}
