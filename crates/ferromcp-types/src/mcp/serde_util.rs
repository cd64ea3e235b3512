//! Serde helpers shared by the MCP types (crate-private).

use serde::{Serialize, Serializer};

/// Serializes an `f64` the way JavaScript prints a JSON number: a value with no fractional
/// part (and within the exactly-representable integer range) is written as an integer, so
/// `50` decodes to `50.0` and encodes back to `50`, not `50.0`.
pub(crate) fn f64_num<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
    if v.is_finite() && v.fract() == 0.0 && v.abs() <= EXACT {
        #[allow(clippy::cast_possible_truncation)]
        let i = *v as i64;
        s.serialize_i64(i)
    } else {
        s.serialize_f64(*v)
    }
}

/// [`f64_num`] for an optional number (used with `skip_serializing_if = "Option::is_none"`).
pub(crate) fn opt_f64_num<S: Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(x) => f64_num(x, s),
        None => s.serialize_none(),
    }
}

/// A borrowed value written with a `"type"` discriminator in front of its own fields, e.g.
/// `{"type": "text", ...TextContent}`. Serialization streams (no intermediate `Value`).
#[derive(Serialize)]
pub(crate) struct TypeTagged<'a, T> {
    #[serde(rename = "type")]
    pub(crate) tag: &'static str,
    #[serde(flatten)]
    pub(crate) inner: &'a T,
}

/// Like [`TypeTagged`] with a `"mode"` discriminator (elicitation request params).
#[derive(Serialize)]
pub(crate) struct ModeTagged<'a, T> {
    pub(crate) mode: &'static str,
    #[serde(flatten)]
    pub(crate) inner: &'a T,
}

/// Reads the string discriminator `key` of a JSON object, if any.
pub(crate) fn str_field<'v>(v: &'v serde_json::Value, key: &str) -> Option<&'v str> {
    v.get(key).and_then(serde_json::Value::as_str)
}

/// Generates `with_*` builder setters for optional fields.
///
/// `setters!(Type { with_title => title: String, ... })` generates
/// `pub fn with_title(self, value: impl Into<String>) -> Self` that sets `title = Some(..)`.
macro_rules! setters {
    ($ty:ty { $($with:ident => $field:ident : $fty:ty),* $(,)? }) => {
        impl $ty {
            $(
                #[doc = concat!("Sets `", stringify!($field), "`.")]
                #[must_use]
                pub fn $with(mut self, value: impl Into<$fty>) -> Self {
                    self.$field = Some(value.into());
                    self
                }
            )*
        }
    };
}
pub(crate) use setters;

/// Deserializes a present JSON value, `null` included, as `Some` (use with `default`, so that
/// only an absent field is `None`): keeps `"structuredContent": null` distinct from absent.
pub(crate) fn some_value<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<serde_json::Value>, D::Error> {
    <serde_json::Value as serde::Deserialize>::deserialize(d).map(Some)
}
