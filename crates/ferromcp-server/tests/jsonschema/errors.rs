//! Validation errors: collected and capped, paths escaped and values cut; the policies for invalid
//! patterns and unknown keywords; malformed keywords are compile errors.

use crate::support::{bad, compile, compile_err, ok};
use ferromcp_server::jsonschema::{
    InvalidPatternPolicy, Limits, Schema, SchemaError, UnknownKeywordPolicy,
};
use serde_json::{Value, json};

#[test]
fn errors_are_collected_and_capped() {
    let s = compile(
        json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}, "required": ["c"]}),
    );
    let e = bad(&s, json!({"a": 1, "b": 2}));
    assert_eq!(e.len(), 3, "{e}");
    assert!(!e.truncated);
    let s = compile(json!({"items": {"type": "string"}}));
    let e = bad(&s, Value::Array((0..100).map(|i| json!(i)).collect()));
    assert_eq!(e.len(), 10);
    assert!(e.truncated);
    assert!(e.to_string().ends_with("; …"));
    let s = Schema::compile(
        &json!({"items": {"type": "string"}}),
        &Limits::default().with_max_errors(2),
    )
    .unwrap();
    assert_eq!(bad(&s, json!([1, 2, 3])).len(), 2);
}

#[test]
fn paths_escape_and_values_are_cut() {
    let s = compile(json!({"additionalProperties": {"type": "integer"}}));
    let e = bad(&s, json!({"a/b~c": "x"}));
    assert_eq!(e.errors[0].instance_path, "/a~1b~0c");
    let s = compile(json!({"const": "short"}));
    let e = bad(&s, json!("y".repeat(1_000_000)));
    assert!(e.errors[0].message.len() < 200, "{}", e.errors[0].message);
    assert!(e.errors[0].message.ends_with('…'));
}

#[test]
fn invalid_patterns_follow_the_policy() {
    // Look-around and back-references need backtracking: `regex` rejects them.
    let err = compile_err(json!({"pattern": "^(?!x)"}));
    assert!(matches!(err, SchemaError::InvalidPattern { .. }), "{err}");
    let err = compile_err(json!({"patternProperties": {"(a)\\1": {}}}));
    assert!(matches!(err, SchemaError::InvalidPattern { .. }), "{err}");
    let lenient = Limits::default().with_invalid_patterns(InvalidPatternPolicy::Ignore);
    let s = Schema::compile(&json!({"pattern": "^(?!x)"}), &lenient).unwrap();
    ok(&s, json!("x"));
    // Over the size limit.
    let small = Limits::default().with_max_regex_size(1_000);
    let err = Schema::compile(&json!({"pattern": "\\w{1000}"}), &small).unwrap_err();
    assert!(matches!(err, SchemaError::InvalidPattern { .. }), "{err}");
}

#[test]
fn unknown_keywords_follow_the_policy() {
    let schema =
        json!({"type": "string", "x-ui": {"widget": "text"}, "unevaluatedProperties": false});
    ok(&compile(schema.clone()), json!("a"));
    let strict = Limits::default().with_unknown_keywords(UnknownKeywordPolicy::Error);
    let err = Schema::compile(&schema, &strict).unwrap_err();
    assert!(matches!(err, SchemaError::UnknownKeyword { .. }), "{err}");
    // Annotations are known.
    let annotated = json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "title": "t", "description": "d",
        "default": 1, "examples": [1], "format": "int32", "deprecated": false, "$comment": "c"});
    assert!(Schema::compile(&annotated, &strict).is_ok());
}

#[test]
fn malformed_keywords_are_compile_errors() {
    for schema in [
        json!({"type": "text"}),
        json!({"minimum": "5"}),
        json!({"minLength": -1}),
        json!({"required": "a"}),
        json!({"properties": {"a": 5}}),
        json!({"anyOf": []}),
        json!({"enum": 3}),
        json!({"$ref": 3}),
        json!(7),
    ] {
        assert!(
            Schema::compile(&schema, &Limits::default()).is_err(),
            "{schema}"
        );
    }
}

/// S145: `validate_json` takes well-formed JSON; text that is not, where the walk reads it,
/// is an error of keyword `json` (after whatever the walk found before it), never a panic,
/// and `is_valid_json` says invalid. Whitespace around the value is fine.
#[test]
fn s145_malformed_text_is_an_error_not_a_panic() {
    let s = compile(
        json!({"type": "object", "properties": {"a": {"type": "array", "items": {"type": "integer"}}}}),
    );
    assert!(s.validate_json(" \n{\"a\": [1, 2]}\t").is_ok());
    for text in [
        "",
        "{",
        "[",
        "\"",
        "-",
        "nul",
        r#"{"a":[1,}"#,
        r#"{"a":[1 2]}"#,
        r#"{"a":tru}"#,
        r#"{"a":["x}"#,
        r#"{"a":[1e999]}"#,
        r#"{"a":[1,2"#,
        r#"{"a" 1}"#,
    ] {
        let e = s.validate_json(text).unwrap_err();
        let last = e.errors.last().unwrap();
        assert_eq!(last.keyword, "json", "{text}: {e}");
        assert_eq!(last.message, "not valid JSON");
        assert!(!s.is_valid_json(text), "{text}");
    }
}
