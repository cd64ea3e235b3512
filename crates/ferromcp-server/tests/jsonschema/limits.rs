//! Limits: deep instances are an error (not a stack overflow), the step budget, huge or deep
//! schemas refused at compile time, regexes that stay linear.

use std::time::{Duration, Instant};

use crate::support::{bad_kw, compile, compile_err, ok};
use ferromcp_server::jsonschema::{Limits, Schema, SchemaError, ValidationErrors};
use serde_json::{Value, json};

fn nested_arrays(depth: usize) -> Value {
    let mut v = json!(1);
    for _ in 0..depth {
        v = Value::Array(vec![v]);
    }
    v
}

/// The text of [`nested_arrays`], written without recursion.
fn nested_text(depth: usize) -> String {
    format!("{}1{}", "[".repeat(depth), "]".repeat(depth))
}

/// Checks `instance` (which may be too deep to drop or clone on a test thread's stack) and
/// leaks it; `text` is its JSON text, which must give the same answer (S138, S145).
fn check_deep(schema: &Schema, instance: Value, text: &str) -> Option<ValidationErrors> {
    let verdict = schema.is_valid(&instance);
    let result = schema.validate(&instance).err();
    assert_eq!(verdict, result.is_none());
    std::mem::forget(instance);
    assert_eq!(
        schema.validate_json(text).err(),
        result,
        "the text's errors differ"
    );
    assert_eq!(
        schema.is_valid_json(text),
        verdict,
        "the text's verdict differs"
    );
    result
}

#[test]
fn deep_instance_is_an_error_not_a_stack_overflow() {
    let s = compile(
        json!({"$defs": {"n": {"type": ["array", "integer"], "items": {"$ref": "#/$defs/n"}}}, "$ref": "#/$defs/n"}),
    );
    ok(&s, nested_arrays(60));
    let e = check_deep(&s, nested_arrays(5_000), &nested_text(5_000)).unwrap();
    assert_eq!(e.errors[0].keyword, "maxDepth");
    assert!(e.errors[0].message.contains("deeper than 64"), "{e}");
    // uniqueItems compares deep values within the same bound; const and enum stop at the
    // depth of the schema value.
    let s = compile(json!({"uniqueItems": true}));
    let e = check_deep(
        &s,
        Value::Array(vec![nested_arrays(5_000), nested_arrays(5_000)]),
        &format!("[{},{}]", nested_text(5_000), nested_text(5_000)),
    )
    .unwrap();
    assert_eq!(e.errors[0].keyword, "maxDepth");
    let e = check_deep(
        &compile(json!({"const": [[1]]})),
        nested_arrays(5_000),
        &nested_text(5_000),
    )
    .unwrap();
    assert_eq!(e.errors[0].keyword, "const");
    let e = check_deep(
        &compile(json!({"enum": [[[1]]]})),
        nested_arrays(5_000),
        &nested_text(5_000),
    )
    .unwrap();
    assert_eq!(e.errors[0].keyword, "enum");
    // A schema that does not descend does not care.
    assert!(
        check_deep(
            &compile(json!({"type": "array"})),
            nested_arrays(5_000),
            &nested_text(5_000)
        )
        .is_none()
    );
    let s = Schema::compile(
        &json!({"items": {"items": {"items": {}}}}),
        &Limits::default().with_max_instance_depth(2),
    )
    .unwrap();
    bad_kw(&s, json!([[[1]]]), "maxDepth");
    ok(&s, json!([[1]]));
}

#[test]
fn step_budget() {
    let s = Schema::compile(
        &json!({"items": {"anyOf": [{"type": "string"}, {"type": "integer"}]}}),
        &Limits::default().with_max_steps(1_000),
    )
    .unwrap();
    ok(&s, Value::Array((0..100).map(|i| json!(i)).collect()));
    bad_kw(
        &s,
        Value::Array((0..1000).map(|i| json!(i)).collect()),
        "maxSteps",
    );
    // Work inside a keyword counts too: enum candidates, patterns per property name, string
    // length.
    let limits = Limits::default().with_max_steps(1_000);
    let values: Vec<Value> = (0..5_000).map(|i| json!(i)).collect();
    let s = Schema::compile(&json!({"enum": values}), &limits).unwrap();
    bad_kw(&s, json!(1), "maxSteps");
    let patterns: serde_json::Map<String, Value> =
        (0..100).map(|i| (format!("^{i}$"), json!(true))).collect();
    let s = Schema::compile(&json!({"patternProperties": patterns}), &limits).unwrap();
    ok(&s, json!({"a": 1}));
    let many: serde_json::Map<String, Value> =
        (0..100).map(|i| (format!("k{i}"), json!(1))).collect();
    bad_kw(&s, Value::Object(many), "maxSteps");
    let s = Schema::compile(&json!({"maxLength": 10_000_000}), &limits).unwrap();
    ok(&s, json!("x".repeat(10_000)));
    bad_kw(&s, json!("x".repeat(100_000)), "maxSteps");
    // A 10k-way anyOf is over the default node limit.
    let branches: Vec<Value> = (0..10_000).map(|i| json!({"const": i})).collect();
    assert!(matches!(
        compile_err(json!({"anyOf": branches})),
        SchemaError::TooManyNodes { .. }
    ));
}

#[test]
fn huge_or_deep_schemas_are_compile_errors() {
    let props: serde_json::Map<String, Value> = (0..20_000)
        .map(|i| (format!("p{i}"), json!({"type": "string"})))
        .collect();
    let err = compile_err(json!({"properties": props}));
    assert!(
        matches!(err, SchemaError::TooManyNodes { limit: 10_000 }),
        "{err}"
    );
    let mut deep = json!({"type": "integer"});
    for _ in 0..1000 {
        // Not `json!`, which would re-serialize `deep` at every level.
        let mut map = serde_json::Map::new();
        map.insert("allOf".to_owned(), Value::Array(vec![deep]));
        deep = Value::Object(map);
    }
    let err = Schema::compile(&deep, &Limits::default()).unwrap_err();
    std::mem::forget(deep);
    assert!(matches!(err, SchemaError::TooDeep { .. }), "{err}");
    let big_enum: Vec<Value> = (0..20_000).map(|i| json!(i)).collect();
    assert!(matches!(
        compile_err(json!({"enum": big_enum})),
        SchemaError::TooManyNodes { .. }
    ));
    let names: Vec<String> = (0..20_000).map(|i| format!("p{i}")).collect();
    let err = compile_err(json!({"required": names}));
    assert!(matches!(err, SchemaError::TooManyNodes { .. }), "{err}");
    let limits = Limits::default().with_max_schema_nodes(3);
    assert!(Schema::compile(&json!({"properties": {"a": {}, "b": {}}}), &limits).is_ok());
    assert!(Schema::compile(&json!({"properties": {"a": {}, "b": {}, "c": {}}}), &limits).is_err());
}

#[test]
fn pathological_regex_is_linear() {
    let s = compile(json!({"pattern": "^(a*)*b$"}));
    let input = json!("a".repeat(100_000));
    // Timed once on the value and once on the text; then every way, untimed.
    let text = input.to_string();
    let started = Instant::now();
    assert!(s.validate(&input).is_err());
    let took = started.elapsed();
    assert!(took < Duration::from_secs(2), "took {took:?}");
    let started = Instant::now();
    assert!(s.validate_json(&text).is_err());
    let took = started.elapsed();
    assert!(took < Duration::from_secs(2), "took {took:?} on the text");
    bad_kw(&s, input, "pattern");
    let s = compile(json!({"patternProperties": {"^(a|aa)+$": {"type": "integer"}}}));
    let mut map = serde_json::Map::new();
    map.insert(format!("{}!", "a".repeat(50_000)), json!("x"));
    let input = Value::Object(map);
    let text = input.to_string();
    let started = Instant::now();
    assert!(s.validate(&input).is_ok());
    assert!(started.elapsed() < Duration::from_secs(2));
    let started = Instant::now();
    assert!(s.validate_json(&text).is_ok());
    assert!(started.elapsed() < Duration::from_secs(2));
    ok(&s, input);
}
