//! The body of the `elicit_schema` fuzz target (`fuzz/fuzz_targets/elicit_schema.rs`). It
//! checks the crate-private schema → form builder, so unlike the other fuzz bodies (in
//! `crates/ferromcp-fuzz-bodies`, on the public API) it lives here, compiled only for this
//! crate's unit tests, which replay its corpus, and for cargo-fuzz builds (`--cfg fuzzing`):
//! it is no part of the public API.
//!
//! The function takes arbitrary bytes and asserts the builder's invariants; a panic is a
//! finding.

use std::collections::BTreeMap;

use ferromcp_types::mcp::ElicitValue;
use serde_json::Value;

/// The elicitation-schema builder (`mcp_server::elicit::convert`, the schemars JSON Schema of
/// a Rust type → the restricted form of `elicitation/create`, MCP 2025-11-25
/// "client/elicitation" §Requested Schema) on arbitrary schemas. The input is JSON; it is
/// tried as the root schema, as the schema of one property, and as a `$defs` entry reached
/// through `$ref` and through schemars' `allOf: [{$ref}]` wrapper:
///
/// - building never panics, whatever the schema (unresolvable or dangling references,
///   non-object properties, odd `type` arrays, huge bounds);
/// - an error names the form or one of the root's property names;
/// - a built form holds exactly the root's properties and its string `required` list, and
///   survives JSON serialization → deserialization unchanged;
/// - the form checks any answer without panicking: the empty answer is accepted exactly when
///   nothing is required, and an answer of every field's default is checked too.
pub fn elicit_schema(data: &[u8]) {
    let Ok(value) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let mut roots = Vec::new();
    if let Value::Object(root) = &value {
        roots.push(root.clone());
    }
    for wrapped in [
        serde_json::json!({"type": "object", "properties": {"f": value}, "required": ["f"]}),
        serde_json::json!({"type": "object", "properties": {"r": {"$ref": "#/$defs/D"}},
                           "$defs": {"D": value}}),
        serde_json::json!({"type": "object", "properties": {"a": {"allOf": [{"$ref": "#/$defs/D"}],
                           "title": "outer"}}, "$defs": {"D": value}}),
        serde_json::json!({"type": "object", "properties": {"o": {"anyOf": [value, {"type": "null"}]}}}),
    ] {
        if let Value::Object(root) = wrapped {
            roots.push(root);
        }
    }
    for root in roots {
        check_form_from_schema(&root);
    }
}

fn check_form_from_schema(root: &serde_json::Map<String, Value>) {
    use ferromcp_types::mcp::{ElicitationSchema, PrimitiveSchemaDefinition};

    let built = crate::mcp_server::form_from_schema(root);
    // Resolving the root through `$ref` may pick another object's properties; compare with
    // the properties of the object actually used when the root is not a reference.
    let direct = root.get("$ref").is_none() && root.get("allOf").is_none();
    let props = root.get("properties").and_then(Value::as_object);
    match built {
        Err(e) => {
            if direct {
                let named =
                    e.field == "the form" || props.is_some_and(|p| p.contains_key(&e.field));
                assert!(named, "the error names the form or a property: {e}");
            }
        }
        Ok(form) => {
            assert_eq!(
                crate::mcp_server::form_from_schema(root).as_ref(),
                Ok(&form),
                "building is deterministic"
            );
            if direct {
                let expected: Vec<&String> = props.map(|p| p.keys().collect()).unwrap_or_default();
                assert_eq!(form.properties.keys().collect::<Vec<_>>(), expected);
                let required: Vec<String> = root
                    .get("required")
                    .and_then(Value::as_array)
                    .map(|r| {
                        r.iter()
                            .filter_map(Value::as_str)
                            .map(str::to_owned)
                            .collect()
                    })
                    .unwrap_or_default();
                assert_eq!(form.required.clone().unwrap_or_default(), required);
            }
            let json = serde_json::to_value(&form);
            assert!(json.is_ok(), "a built form serializes: {json:?}");
            if let Ok(json) = json {
                let back = serde_json::from_value::<ElicitationSchema>(json);
                assert_eq!(back.ok().as_ref(), Some(&form), "a built form round-trips");
            }
            let empty = BTreeMap::new();
            let checked = crate::mcp_server::elicit_check_content(&form, &empty);
            assert_eq!(
                checked.is_ok(),
                form.required.as_ref().is_none_or(Vec::is_empty),
                "the empty answer fits exactly when nothing is required"
            );
            let mut defaults = BTreeMap::new();
            for (name, field) in &form.properties {
                let default = match field {
                    PrimitiveSchemaDefinition::String(s) => {
                        s.default.clone().map(ElicitValue::String)
                    }
                    PrimitiveSchemaDefinition::Boolean(b) => b.default.map(ElicitValue::Boolean),
                    PrimitiveSchemaDefinition::Number(n) => n.default.map(ElicitValue::Number),
                    _ => None,
                };
                if let Some(d) = default {
                    defaults.insert(name.clone(), d);
                }
            }
            let _ = crate::mcp_server::elicit_check_content(&form, &defaults);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    /// Replays `fuzz/corpus/elicit_schema/` through the body, so every seed and every
    /// regression found by fuzzing is checked on every test run, without a fuzzer.
    // The elicitation-schema builder on arbitrary schemas (E25 §Requested Schema).
    #[test]
    fn elicit_schema_corpus() {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/elicit_schema");
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .expect("the corpus directory is readable")
            .map(|entry| entry.expect("a corpus entry is readable").path())
            .filter(|path| path.is_file())
            .collect();
        files.sort();
        assert!(!files.is_empty(), "no corpus in {}", dir.display());
        for path in files {
            let data = std::fs::read(&path).expect("a corpus file is readable");
            let outcome = std::panic::catch_unwind(|| super::elicit_schema(&data));
            assert!(outcome.is_ok(), "elicit_schema: {} fails", path.display());
        }
    }
}
