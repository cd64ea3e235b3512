//! What the topics of this test binary share.
//!
//! Every verdict is taken four ways and must agree (S138): `validate` and `is_valid` on the
//! value, and `validate_json` and `is_valid_json` on texts of it: compact, spaced out, and
//! with each object's members reversed and its first key repeated first (the parse keeps the
//! last value, so the value is the same), so the text walk's member order and duplicate
//! handling answer as the value's `Map` does.

use ferromcp_server::jsonschema::{Limits, Schema, SchemaError, ValidationErrors};
use serde_json::Value;

pub(crate) fn compile(schema: Value) -> Schema {
    Schema::compile(&schema, &Limits::default()).unwrap()
}

pub(crate) fn compile_err(schema: Value) -> SchemaError {
    Schema::compile(&schema, &Limits::default()).unwrap_err()
}

/// JSON text of `v` with every object's members in reverse order and, when `dup`, its first
/// member written once more before them with `null` (overridden by the later one).
pub(crate) fn shuffled_text(v: &Value, dup: bool) -> String {
    let mut out = String::new();
    write_shuffled(v, dup, &mut out);
    out
}

fn write_shuffled(v: &Value, dup: bool, out: &mut String) {
    match v {
        Value::Array(items) => {
            out.push_str("[ ");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(" , ");
                }
                write_shuffled(item, dup, out);
            }
            out.push_str(" ]");
        }
        Value::Object(map) => {
            out.push('{');
            let mut first = true;
            if dup && let Some((k, _)) = map.iter().next() {
                out.push_str(&serde_json::to_string(k).unwrap());
                out.push_str(":null");
                first = false;
            }
            for (k, item) in map.iter().rev() {
                if !first {
                    out.push(',');
                }
                first = false;
                out.push_str(&serde_json::to_string(k).unwrap());
                out.push_str(" : ");
                write_shuffled(item, dup, out);
            }
            out.push('}');
        }
        _ => out.push_str(&serde_json::to_string(v).unwrap()),
    }
}

/// The value path's result, after asserting that `text` (of the value `parsed`) gives the same
/// verdict and errors through `validate_json`/`is_valid_json`.
pub(crate) fn same_on_text(
    schema: &Schema,
    parsed: &Value,
    text: &str,
) -> Result<(), ValidationErrors> {
    let by_value = schema.validate(parsed);
    assert_eq!(
        schema.is_valid(parsed),
        by_value.is_ok(),
        "is_valid and validate disagree on {parsed}"
    );
    let by_text = schema.validate_json(text);
    assert_eq!(by_text, by_value, "text and value disagree on {text}");
    assert_eq!(
        schema.is_valid_json(text),
        by_value.is_ok(),
        "is_valid_json disagrees on {text}"
    );
    by_value
}

/// Validates `instance` as a value and as each of its texts, asserting they all agree.
pub(crate) fn check(schema: &Schema, instance: &Value) -> Result<(), ValidationErrors> {
    let result = same_on_text(schema, instance, &instance.to_string());
    let pretty = serde_json::to_string_pretty(instance).unwrap();
    assert_eq!(
        same_on_text(schema, instance, &format!(" {pretty}\n")),
        result
    );
    for dup in [false, true] {
        let text = shuffled_text(instance, dup);
        let parsed: Value = serde_json::from_str(&text).unwrap();
        let shuffled = same_on_text(schema, &parsed, &text);
        if parsed == *instance {
            assert_eq!(shuffled, result, "{text}");
        }
    }
    result
}

/// Asserts validity every way (`validate` and `is_valid`, on the value and on its texts).
pub(crate) fn ok(schema: &Schema, instance: Value) {
    if let Err(e) = check(schema, &instance) {
        panic!("validate rejected {instance}: {e}");
    }
}

/// Asserts invalidity every way; returns the errors.
pub(crate) fn bad(schema: &Schema, instance: Value) -> ValidationErrors {
    match check(schema, &instance) {
        Ok(()) => panic!("validate accepted {instance}"),
        Err(e) => e,
    }
}

/// Asserts invalidity, with the first error's keyword.
pub(crate) fn bad_kw(schema: &Schema, instance: Value, keyword: &str) -> ValidationErrors {
    let e = bad(schema, instance);
    assert_eq!(e.errors[0].keyword, keyword, "{e}");
    e
}
