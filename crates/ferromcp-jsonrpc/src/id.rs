//! JSON-RPC request ids.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A JSON-RPC request id: an integer or a string, never a bool and never null on a request.
///
/// The wire keeps the value it was given (a string stays a string), but ids that print the same
/// correlate as one: `"7"` and `7` are equal and hash alike, so a response carrying either finds
/// the request sent with the other. Only the canonical decimal spelling of an integer correlates
/// (`"07"` and `"+7"` are strings unlike `7`).
///
/// ```
/// use ferromcp_jsonrpc::RequestId;
///
/// let n = RequestId::from(7);
/// let s = RequestId::from("7");
/// assert_eq!(n, s);
/// assert_eq!(serde_json::to_string(&s).unwrap(), "\"7\"");
/// assert_ne!(RequestId::from("07"), n);
/// ```
#[derive(Debug, Clone)]
pub enum RequestId {
    /// An integer id.
    Number(i64),
    /// A string id.
    String(Arc<str>),
}

/// The value two ids are correlated by: strings that are the canonical decimal form of an
/// integer correlate with that integer.
#[derive(PartialEq, Eq, Hash)]
enum Correlation<'a> {
    Int(i64),
    Str(&'a str),
}

impl RequestId {
    fn correlation(&self) -> Correlation<'_> {
        match self {
            Self::Number(n) => Correlation::Int(*n),
            Self::String(s) => match canonical_int(s) {
                Some(n) => Correlation::Int(n),
                None => Correlation::Str(s),
            },
        }
    }

    /// Whether this id is a string on the wire.
    pub fn is_string(&self) -> bool {
        matches!(self, Self::String(_))
    }
}

/// Parses `s` as an `i64` only when `s` is exactly how that integer prints.
fn canonical_int(s: &str) -> Option<i64> {
    let bytes = s.as_bytes();
    let digits = bytes.strip_prefix(b"-").unwrap_or(bytes);
    let canonical = match digits {
        [] => false,
        [b'0'] => bytes.len() == 1, // "0" but not "-0"
        [b'1'..=b'9', rest @ ..] => rest.iter().all(u8::is_ascii_digit),
        _ => false,
    };
    if canonical { s.parse().ok() } else { None }
}

impl PartialEq for RequestId {
    fn eq(&self, other: &Self) -> bool {
        self.correlation() == other.correlation()
    }
}

impl Eq for RequestId {}

impl Hash for RequestId {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.correlation().hash(state);
    }
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Number(n) => write!(f, "{n}"),
            Self::String(s) => f.write_str(s),
        }
    }
}

impl From<i64> for RequestId {
    fn from(n: i64) -> Self {
        Self::Number(n)
    }
}

impl From<i32> for RequestId {
    fn from(n: i32) -> Self {
        Self::Number(n.into())
    }
}

impl From<&str> for RequestId {
    fn from(s: &str) -> Self {
        Self::String(s.into())
    }
}

impl From<String> for RequestId {
    fn from(s: String) -> Self {
        Self::String(s.into())
    }
}

impl Serialize for RequestId {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Number(n) => s.serialize_i64(*n),
            Self::String(v) => s.serialize_str(v),
        }
    }
}

/// Deserializes an id that may also be `null` (as on an error response).
pub(crate) struct MaybeNullId(pub(crate) Option<RequestId>);

struct IdVisitor;

impl<'de> Visitor<'de> for IdVisitor {
    type Value = MaybeNullId;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an integer or string request id")
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Ok(MaybeNullId(Some(RequestId::Number(v))))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        i64::try_from(v)
            .map(|n| MaybeNullId(Some(RequestId::Number(n))))
            .map_err(|_| E::custom("request id out of range"))
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Err(E::custom("request id must be an integer or a string"))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(MaybeNullId(Some(RequestId::String(v.into()))))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(MaybeNullId(None))
    }
}

impl<'de> Deserialize<'de> for MaybeNullId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(IdVisitor)
    }
}

impl<'de> Deserialize<'de> for RequestId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match MaybeNullId::deserialize(d)?.0 {
            Some(id) => Ok(id),
            None => Err(de::Error::custom("request id must not be null")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn ids_that_print_the_same_correlate() {
        let set: HashSet<RequestId> = [RequestId::from(7)].into();
        assert!(set.contains(&RequestId::from("7")));
        assert!(!set.contains(&RequestId::from("07")));
        assert!(!set.contains(&RequestId::from("+7")));
        assert_eq!(RequestId::from("-12"), RequestId::from(-12));
        assert_ne!(RequestId::from("-0"), RequestId::from(0));
        assert_eq!(RequestId::from("0"), RequestId::from(0));
        assert_eq!(RequestId::from("abc"), RequestId::from("abc"));
        // Out of i64 range stays a plain string.
        assert_ne!(
            RequestId::from("99999999999999999999"),
            RequestId::from(i64::MAX)
        );
    }

    #[test]
    fn wire_keeps_the_given_form() {
        for text in ["7", "\"7\"", "-3", "\"x-1\""] {
            let id: RequestId = serde_json::from_str(text).unwrap();
            assert_eq!(serde_json::to_string(&id).unwrap(), text);
        }
    }

    #[test]
    fn bools_nulls_and_fractions_are_not_ids() {
        for text in ["true", "null", "1.5", "[]", "{}", "18446744073709551615"] {
            assert!(serde_json::from_str::<RequestId>(text).is_err(), "{text}");
        }
    }
}
