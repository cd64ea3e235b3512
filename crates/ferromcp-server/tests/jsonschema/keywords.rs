//! Every keyword of the bounded JSON Schema validator (types, enums, numbers, strings, arrays,
//! objects, combinators and their explanations), the draft-07 spellings, and a compiled schema's
//! reuse across threads.

use crate::support::{bad, bad_kw, compile, compile_err, ok};
use ferromcp_server::jsonschema::{Limits, Schema, SchemaError};
use serde_json::{Value, json};

#[test]
fn type_keyword() {
    let s = compile(json!({"type": "number"}));
    ok(&s, json!(1));
    ok(&s, json!(1.5));
    let e = bad_kw(&s, json!("x"), "type");
    assert_eq!(
        e.to_string(),
        "invalid arguments: arguments: expected number, got string"
    );
    let s = compile(json!({"type": "integer"}));
    ok(&s, json!(1));
    ok(&s, json!(1.0));
    ok(&s, json!(u64::MAX));
    ok(&s, json!(i64::MIN));
    bad_kw(&s, json!(1.5), "type");
    let s = compile(json!({"type": ["string", "null"]}));
    ok(&s, json!("a"));
    ok(&s, json!(null));
    let e = bad_kw(&s, json!(3), "type");
    assert_eq!(e.errors[0].message, "expected string or null, got integer");
    for (t, good, wrong) in [
        ("boolean", json!(true), json!(0)),
        ("object", json!({}), json!([])),
        ("array", json!([]), json!({})),
        ("null", json!(null), json!(false)),
        ("string", json!(""), json!(null)),
    ] {
        let s = compile(json!({"type": t}));
        ok(&s, good);
        bad_kw(&s, wrong, "type");
    }
}

#[test]
fn boolean_schemas() {
    ok(&compile(json!(true)), json!({"anything": [1]}));
    ok(&compile(json!({})), json!(42));
    bad_kw(&compile(json!(false)), json!(null), "false");
}

#[test]
fn enum_and_const() {
    let s = compile(json!({"enum": ["a", 1, null, {"k": [1]}]}));
    ok(&s, json!("a"));
    ok(&s, json!(1.0));
    ok(&s, json!(null));
    ok(&s, json!({"k": [1.0]}));
    let e = bad_kw(&s, json!("b"), "enum");
    assert_eq!(
        e.errors[0].message,
        r#"expected one of "a", 1, null, {"k":[1]}, got "b""#
    );
    let s = compile(json!({"const": {"a": [1, 2]}}));
    ok(&s, json!({"a": [1, 2.0]}));
    let e = bad_kw(&s, json!({"a": [2, 1]}), "const");
    assert_eq!(
        e.errors[0].message,
        r#"expected {"a":[1,2]}, got {"a":[2,1]}"#
    );
}

#[test]
fn numeric_keywords() {
    let s = compile(json!({"minimum": 1, "maximum": 10.5}));
    ok(&s, json!(1));
    ok(&s, json!(10.5));
    let e = bad_kw(&s, json!(0.5), "minimum");
    assert_eq!(e.errors[0].message, "must be >= 1, got 0.5");
    bad_kw(&s, json!(11), "maximum");
    let s = compile(json!({"exclusiveMinimum": 0, "exclusiveMaximum": 1}));
    ok(&s, json!(0.5));
    let e = bad_kw(&s, json!(0), "exclusiveMinimum");
    assert_eq!(e.errors[0].message, "must be > 0, got 0");
    bad_kw(&s, json!(1.0), "exclusiveMaximum");
    // Big integers compare exactly.
    let s = compile(json!({"maximum": 9_007_199_254_740_993_u64}));
    ok(&s, json!(9_007_199_254_740_993_u64));
    bad_kw(&s, json!(9_007_199_254_740_994_u64), "maximum");
    let s = compile(json!({"minimum": -1, "maximum": u64::MAX}));
    ok(&s, json!(u64::MAX));
    ok(&s, json!(-1));
    bad_kw(&s, json!(i64::MIN), "minimum");
    bad_kw(&s, json!(1e20), "maximum");
}

#[test]
fn multiple_of() {
    let s = compile(json!({"multipleOf": 3}));
    ok(&s, json!(9));
    ok(&s, json!(-9));
    ok(&s, json!(9.0));
    let e = bad_kw(&s, json!(10), "multipleOf");
    assert_eq!(e.errors[0].message, "must be a multiple of 3, got 10");
    bad_kw(&s, json!(1e20), "multipleOf");
    let s = compile(json!({"multipleOf": 0.1}));
    ok(&s, json!(0.3));
    ok(&s, json!(19.9));
    ok(&s, json!(7));
    bad_kw(&s, json!(0.31), "multipleOf");
    let s = compile(json!({"multipleOf": 0.01}));
    ok(&s, json!(19.99));
    ok(&s, json!(0.07));
    bad_kw(&s, json!(0.075), "multipleOf");
    // An overflowing quotient is not a multiple.
    let s = compile(json!({"multipleOf": 0.123_456_789}));
    bad_kw(&s, json!(1e308), "multipleOf");
    assert!(matches!(
        compile_err(json!({"multipleOf": 0})),
        SchemaError::InvalidKeyword { .. }
    ));
    assert!(matches!(
        compile_err(json!({"multipleOf": -2})),
        SchemaError::InvalidKeyword { .. }
    ));
}

#[test]
fn string_keywords() {
    let s = compile(json!({"minLength": 2, "maxLength": 3}));
    ok(&s, json!("ab"));
    // Code points, not bytes or UTF-16 units.
    ok(&s, json!("日本語"));
    ok(&s, json!("😀😀"));
    let e = bad_kw(&s, json!("a"), "minLength");
    assert_eq!(
        e.errors[0].message,
        "must be at least 2 characters long, got 1"
    );
    bad_kw(&s, json!("abcd"), "maxLength");
    bad_kw(&s, json!("😀😀😀😀"), "maxLength");
    let s = compile(json!({"pattern": "^[a-z]+\\d$"}));
    ok(&s, json!("abc1"));
    let e = bad_kw(&s, json!("abc"), "pattern");
    assert_eq!(
        e.errors[0].message,
        r#""abc" does not match the pattern ^[a-z]+\d$"#
    );
    // Unanchored, as in ECMA-262 `test`.
    ok(&compile(json!({"pattern": "b"})), json!("abc"));
    ok(&compile(json!({"pattern": "(?i)^abc$"})), json!("ABC"));
    // Non-strings are ignored by string keywords.
    ok(&s, json!(12));
    // `format` is an annotation.
    ok(&compile(json!({"format": "email"})), json!("not an email"));
}

#[test]
fn array_keywords() {
    let s = compile(json!({"items": {"type": "integer"}, "minItems": 1, "maxItems": 3}));
    ok(&s, json!([1, 2]));
    let e = bad_kw(&s, json!([1, "x"]), "type");
    assert_eq!(e.errors[0].instance_path, "/1");
    assert_eq!(
        e.to_string(),
        "invalid arguments: arguments/1: expected integer, got string"
    );
    let e = bad_kw(&s, json!([]), "minItems");
    assert_eq!(e.errors[0].message, "must have at least 1 items, got 0");
    bad_kw(&s, json!([1, 2, 3, 4]), "maxItems");
    let s =
        compile(json!({"prefixItems": [{"type": "string"}, {"type": "number"}], "items": false}));
    ok(&s, json!(["a", 1]));
    ok(&s, json!(["a"]));
    bad_kw(&s, json!([1, 1]), "type");
    let e = bad_kw(&s, json!(["a", 1, true]), "items");
    assert_eq!(e.errors[0].message, "must have at most 2 items, got 3");
    let s = compile(json!({"prefixItems": [{"type": "string"}], "items": {"type": "boolean"}}));
    ok(&s, json!(["a", true, false]));
    bad_kw(&s, json!(["a", true, 1]), "type");
    let s = compile(json!({"contains": {"const": 5}, "maxContains": 2}));
    ok(&s, json!([1, 5, 5]));
    let e = bad_kw(&s, json!([1, 2]), "contains");
    assert_eq!(
        e.errors[0].message,
        "must contain at least 1 matching items, got 0"
    );
    bad_kw(&s, json!([5, 5, 5]), "maxContains");
    let s = compile(json!({"contains": {"const": 5}, "minContains": 2}));
    ok(&s, json!([5, 5]));
    bad_kw(&s, json!([5]), "contains");
}

#[test]
fn unique_items() {
    let s = compile(json!({"uniqueItems": true}));
    ok(&s, json!([1, "1", [1], {"a": 1}, {"a": 2}, null, true]));
    let e = bad_kw(&s, json!([1, 2, 1.0]), "uniqueItems");
    assert_eq!(e.errors[0].message, "items 0 and 2 are equal");
    bad_kw(
        &s,
        json!([{"a": 1, "b": [2]}, {"b": [2.0], "a": 1}]),
        "uniqueItems",
    );
    ok(&s, json!([[1, 2], [2, 1]]));
    // Long arrays go through hashing.
    let mut long: Vec<Value> = (0..1000).map(|i| json!({"id": i})).collect();
    ok(&s, Value::Array(long.clone()));
    long.push(json!({"id": 500.0}));
    let e = bad_kw(&s, Value::Array(long), "uniqueItems");
    assert_eq!(e.errors[0].message, "items 500 and 1000 are equal");
    ok(&compile(json!({"uniqueItems": false})), json!([1, 1]));
}

#[test]
fn object_keywords() {
    let s = compile(json!({
        "type": "object",
        "properties": {"name": {"type": "string"}, "age": {"type": "integer", "minimum": 0}},
        "required": ["name"],
        "additionalProperties": false,
    }));
    ok(&s, json!({"name": "x"}));
    ok(&s, json!({"name": "x", "age": 3}));
    let e = bad_kw(&s, json!({}), "required");
    assert_eq!(
        e.to_string(),
        r#"invalid arguments: arguments: missing required property "name""#
    );
    let e = bad_kw(&s, json!({"name": "x", "extra": 1}), "additionalProperties");
    assert_eq!(e.errors[0].message, r#"unexpected property "extra""#);
    let e = bad_kw(&s, json!({"name": "x", "age": -1}), "minimum");
    assert_eq!(e.errors[0].instance_path, "/age");
    let s = compile(json!({
        "patternProperties": {"^x-": {"type": "string"}},
        "additionalProperties": {"type": "integer"},
    }));
    ok(&s, json!({"x-a": "s", "b": 1}));
    bad_kw(&s, json!({"x-a": 1}), "type");
    let e = bad_kw(&s, json!({"b": "s"}), "type");
    assert_eq!(e.errors[0].instance_path, "/b");
    let s =
        compile(json!({"propertyNames": {"maxLength": 3}, "minProperties": 1, "maxProperties": 2}));
    ok(&s, json!({"abc": 1}));
    let e = bad_kw(&s, json!({"abcd": 1}), "propertyNames");
    assert_eq!(
        e.errors[0].message,
        r#"property name "abcd" is not allowed"#
    );
    bad_kw(&s, json!({}), "minProperties");
    bad_kw(&s, json!({"a": 1, "b": 2, "c": 3}), "maxProperties");
    let s = compile(json!({"dependentRequired": {"card": ["billing"]}}));
    ok(&s, json!({"card": 1, "billing": 2}));
    ok(&s, json!({"billing": 2}));
    let e = bad_kw(&s, json!({"card": 1}), "dependentRequired");
    assert_eq!(
        e.errors[0].message,
        r#"property "card" requires property "billing""#
    );
    let s = compile(json!({"dependentSchemas": {"a": {"required": ["b"]}}}));
    ok(&s, json!({"a": 1, "b": 1}));
    bad_kw(&s, json!({"a": 1}), "required");
    // Object keywords ignore non-objects.
    ok(&compile(json!({"required": ["a"]})), json!([1]));
}

#[test]
fn combinators() {
    let s = compile(json!({"allOf": [{"type": "integer"}, {"minimum": 2}]}));
    ok(&s, json!(3));
    bad_kw(&s, json!(1), "minimum");
    let s = compile(json!({"anyOf": [{"type": "string"}, {"type": "integer"}]}));
    ok(&s, json!("a"));
    ok(&s, json!(1));
    let e = bad_kw(&s, json!(1.5), "anyOf");
    assert_eq!(
        e.errors[0].message,
        "does not match any of the 2 alternatives of anyOf"
    );
    let s = compile(json!({"oneOf": [{"multipleOf": 2}, {"multipleOf": 3}]}));
    ok(&s, json!(4));
    ok(&s, json!(9));
    let e = bad_kw(&s, json!(6), "oneOf");
    assert_eq!(
        e.errors[0].message,
        "matches more than one alternative of oneOf (#0 and #1)"
    );
    bad_kw(&s, json!(5), "oneOf");
    let s = compile(json!({"not": {"type": "string"}}));
    ok(&s, json!(1));
    let e = bad_kw(&s, json!("a"), "not");
    assert_eq!(e.errors[0].message, "must not match the schema in not");
    let s = compile(json!({
        "if": {"properties": {"kind": {"const": "a"}}},
        "then": {"required": ["a"]},
        "else": {"required": ["b"]},
    }));
    ok(&s, json!({"kind": "a", "a": 1}));
    ok(&s, json!({"kind": "z", "b": 1}));
    bad_kw(&s, json!({"kind": "a", "b": 1}), "required");
    bad_kw(&s, json!({"kind": "z", "a": 1}), "required");
    ok(&compile(json!({"then": false})), json!(1));
}

#[test]
fn any_of_explains_the_closest_alternative() {
    let s = compile(json!({"oneOf": [
        {"type": "string", "enum": ["Off"]},
        {"type": "object", "properties": {"Level": {"type": "integer"}}, "required": ["Level"], "additionalProperties": false},
    ]}));
    let e = bad(&s, json!({"Level": "high"}));
    assert_eq!(e.errors.len(), 2, "{e}");
    assert_eq!(e.errors[0].keyword, "oneOf");
    assert_eq!(e.errors[1].instance_path, "/Level");
    assert_eq!(
        e.to_string(),
        "invalid arguments: arguments: does not match any of the 2 alternatives of oneOf; \
         arguments/Level: expected integer, got string"
    );
    // The object alternative, though wrong, is the only one of the right type.
    let e = bad(&s, json!({"Mode": 1}));
    assert_eq!(e.errors.len(), 3, "{e}");
    assert_eq!(e.errors[1].message, r#"missing required property "Level""#);
    assert_eq!(e.errors[2].message, r#"unexpected property "Mode""#);
    // No alternative is close: just the summary.
    assert_eq!(bad(&s, json!(3)).errors.len(), 1);
    assert_eq!(bad(&s, json!("On")).errors.len(), 1);
}

#[test]
fn nested_explanations_stay_cheap() {
    // 40 nested `anyOf`s failing at the bottom: explaining re-runs alternatives, but only a
    // few levels deep, so this stays far from the step budget.
    let mut schema = json!({"type": "integer"});
    for _ in 0..40 {
        // `json!` with `schema` inside would re-serialize it: build by hand.
        let mut object = json!({"type": "object", "properties": {}});
        object["properties"]["a"] = schema;
        schema = json!({"anyOf": [{"type": "null"}]});
        schema["anyOf"].as_array_mut().unwrap().push(object);
    }
    let s = Schema::compile(
        &schema,
        &Limits::default()
            .with_max_schema_depth(200)
            .with_max_steps(5_000),
    )
    .unwrap();
    let mut instance = json!("not an integer");
    for _ in 0..40 {
        let mut map = serde_json::Map::new();
        map.insert("a".to_owned(), instance);
        instance = Value::Object(map);
    }
    let e = bad_kw(&s, instance, "anyOf");
    assert!(e.iter().all(|e| e.keyword == "anyOf"), "{e}");
    assert_eq!(e.errors[1].instance_path, "/a", "{e}");
}

#[test]
fn draft07_spellings() {
    let s = compile(json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "definitions": {"Point": {"type": "array", "items": [{"type": "number"}, {"type": "number"}], "additionalItems": false}},
        "type": "object",
        "properties": {"p": {"$ref": "#/definitions/Point"}, "n": {"type": "number", "minimum": 0, "exclusiveMinimum": true}},
        "dependencies": {"p": ["n"], "q": {"required": ["p"]}},
    }));
    ok(&s, json!({"p": [1, 2], "n": 1}));
    bad_kw(&s, json!({"p": [1, "2"], "n": 1}), "type");
    bad_kw(&s, json!({"p": [1, 2, 3], "n": 1}), "items");
    bad_kw(&s, json!({"p": [1, 2], "n": 0}), "exclusiveMinimum");
    bad_kw(&s, json!({"p": [1, 2]}), "dependentRequired");
    bad_kw(&s, json!({"q": 1}), "required");
}

#[test]
fn schema_is_send_sync_and_reusable() {
    fn assert_send_sync<T: Send + Sync + Clone>() {}
    assert_send_sync::<Schema>();
    let s = compile(json!({"type": "integer"}));
    let threads: Vec<_> = (0..2)
        .map(|i| {
            let s = s.clone();
            std::thread::spawn(move || s.is_valid(&json!(i)))
        })
        .collect();
    for t in threads {
        assert!(t.join().unwrap());
    }
}
