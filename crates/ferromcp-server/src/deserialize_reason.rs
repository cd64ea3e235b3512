//! What the wire says when a value from the client does not deserialize into the type a
//! handler wants: the field serde names, or a generic reason, never serde's own text (which
//! names Rust types, such as `expected struct FooParams`). The full error goes to the debug log.

/// The wire text of params that did not deserialize: which field, and a generic reason,
/// never serde's own text (it names Rust types, such as `expected struct FooParams`).
pub(crate) fn params_reason(e: &serde_json::Error) -> String {
    format!("Invalid params: {}", serde_reason(e))
}

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
        let e = serde_json::from_value::<GreetingParams>(serde_json::json!({"count": 1}));
        let e = e.unwrap_err();
        assert_eq!(params_reason(&e), "Invalid params: missing field `name`");
    }
}
