//! What the wire says when a value from the client does not deserialize into the type a
//! handler wants: the field serde names, or a generic reason, never serde's own text (which
//! names Rust types, such as `expected struct FooParams`). The full error goes to the debug log.

use serde::de::DeserializeOwned;
use serde_json::Value;

/// Why a value did not deserialize, for the wire: the field serde names (missing or unknown),
/// or a generic reason; never serde's own text, which names Rust types. Callers log the full
/// error at debug.
pub(crate) fn serde_reason(e: &serde_json::Error) -> String {
    let text = e.to_string();
    // serde's field-level messages quote the field name in backticks.
    let field = |prefix: &str| {
        text.strip_prefix(prefix)
            .and_then(|rest| rest.strip_prefix('`'))
            .and_then(|rest| rest.split('`').next())
            .map(|name| ferromcp_types::jsonrpc::echo(name).to_string())
    };
    if let Some(name) = field("missing field ") {
        format!("missing field `{name}`")
    } else if let Some(name) = field("unknown field ") {
        format!("unknown field `{name}`")
    } else if text.starts_with("invalid type") || text.starts_with("invalid value") {
        "a value has the wrong type or is out of range".to_owned()
    } else {
        "the value does not have the expected shape".to_owned()
    }
}

/// A value that did not deserialize, with where: the error and the path to the part that
/// failed (`items[2]`, `customer`; empty at the top), as [`traced_from_str`] and
/// [`traced_from_value`] find it. Reusable wherever params or arguments are read into a
/// type ([`traced_params_reason`] makes the wire text).
#[derive(Debug)]
pub(crate) struct Traced {
    /// serde's error (for the debug log and its category; never for the wire).
    pub(crate) error: serde_json::Error,
    /// Where it failed: keys joined with `.`, indices as `[i]`.
    path: String,
}

/// `T` from JSON text; on failure, where. The text is read as `serde_json::from_str` reads
/// it; only when that fails is it read again with the path tracked, so params that fit cost
/// nothing more.
pub(crate) fn traced_from_str<T: DeserializeOwned>(text: &str) -> Result<T, Traced> {
    let error = match serde_json::from_str(text) {
        Ok(value) => return Ok(value),
        Err(e) => e,
    };
    let mut path = String::new();
    if error.classify() != serde_json::error::Category::Syntax {
        let mut de = serde_json::Deserializer::from_str(text);
        if let Err(e) = serde_path_to_error::deserialize::<_, T>(&mut de) {
            path = render(e.path());
        }
    }
    Err(Traced { error, path })
}

/// `T` from a JSON value (moved, as `T::deserialize(value)` does); on failure, where.
pub(crate) fn traced_from_value<T: DeserializeOwned>(value: Value) -> Result<T, Traced> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = render(e.path());
        Traced {
            error: e.into_inner(),
            path,
        }
    })
}

/// `items[2].name`: map keys joined with `.`, sequence indices as `[i]`, an enum's variant
/// as a key; empty at the top.
fn render(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut out = String::new();
    for segment in path.iter() {
        match segment {
            Segment::Seq { index } => out.push_str(&format!("[{index}]")),
            Segment::Map { key } | Segment::Enum { variant: key } => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key);
            }
            Segment::Unknown => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push('?');
            }
        }
    }
    out
}

/// The wire text of params that did not deserialize, naming the full path of the field
/// (`Invalid params: missing field `items[2].name``), never serde's text. At the top level
/// it names the field as serde does, or a generic reason.
pub(crate) fn traced_params_reason(t: &Traced) -> String {
    format!("Invalid params: {}", traced_reason(t))
}

/// [`serde_reason`] with the path: a missing or unknown field named by its full path, a
/// wrong value by the path to it.
pub(crate) fn traced_reason(t: &Traced) -> String {
    let reason = serde_reason(&t.error);
    if t.path.is_empty() {
        return reason;
    }
    let path = ferromcp_types::jsonrpc::echo(&t.path);
    // A missing field is reported at its struct (the path stops there); an unknown one at
    // the key itself (the path ends with it).
    for prefix in ["missing field `", "unknown field `"] {
        if let Some(name) = reason.strip_prefix(prefix) {
            let field = name.strip_suffix('`').unwrap_or(name);
            if path == field || path.ends_with(&format!(".{field}")) {
                return format!("{prefix}{path}`");
            }
            return format!("{prefix}{path}.{name}");
        }
    }
    format!("`{path}`: {reason}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code, reason = "only deserialized")]
    struct GreetingParams {
        name: String,
        count: u32,
    }

    fn reason_for(value: serde_json::Value) -> String {
        let e = serde_json::from_value::<GreetingParams>(value).unwrap_err();
        serde_reason(&e)
    }

    /// The field is named; Rust type names never are.
    #[test]
    fn reasons_name_the_field_not_the_rust_type() {
        let cases = [
            (serde_json::json!({"count": 1}), "missing field `name`"),
            (
                serde_json::json!({"name": "a", "count": 1, "x": 1}),
                "unknown field `x`",
            ),
            (
                serde_json::json!({"name": "a", "count": -1}),
                "a value has the wrong type or is out of range",
            ),
            (
                serde_json::json!("a string"),
                "a value has the wrong type or is out of range",
            ),
        ];
        for (value, expected) in cases {
            let reason = reason_for(value.clone());
            assert_eq!(reason, expected, "{value}");
            for rust in ["GreetingParams", "struct", "u32", "expected"] {
                assert!(!reason.contains(rust), "{value}: {reason}");
            }
        }
        let e = traced_from_value::<GreetingParams>(serde_json::json!({"count": 1}));
        let e = e.unwrap_err();
        assert_eq!(
            traced_params_reason(&e),
            "Invalid params: missing field `name`"
        );
    }
}
