//! The bounded JSON Schema validator: every keyword, `$ref`s, schemars output, draft-07
//! spellings, limits and error messages.
#![allow(clippy::unwrap_used, clippy::panic, clippy::needless_pass_by_value)]

use std::time::{Duration, Instant};

use ferromcp_server::jsonschema::{
    InvalidPatternPolicy, Limits, Schema, SchemaError, UnknownKeywordPolicy, ValidationErrors,
};
use serde_json::{Value, json};

fn compile(schema: Value) -> Schema {
    Schema::compile(&schema, &Limits::default()).unwrap()
}

fn compile_err(schema: Value) -> SchemaError {
    Schema::compile(&schema, &Limits::default()).unwrap_err()
}

/// Asserts validity both ways (`validate` and `is_valid` agree).
fn ok(schema: &Schema, instance: Value) {
    assert!(schema.is_valid(&instance), "is_valid rejected {instance}");
    if let Err(e) = schema.validate(&instance) {
        panic!("validate rejected {instance}: {e}");
    }
}

/// Asserts invalidity both ways; returns the errors.
fn bad(schema: &Schema, instance: Value) -> ValidationErrors {
    assert!(!schema.is_valid(&instance), "is_valid accepted {instance}");
    match schema.validate(&instance) {
        Ok(()) => panic!("validate accepted {instance}"),
        Err(e) => e,
    }
}

/// Asserts invalidity, with the first error's keyword.
fn bad_kw(schema: &Schema, instance: Value, keyword: &str) -> ValidationErrors {
    let e = bad(schema, instance);
    assert_eq!(e.errors[0].keyword, keyword, "{e}");
    e
}

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
fn refs_local_nested_and_recursive() {
    let s = compile(json!({
        "$defs": {
            "Name": {"type": "string", "minLength": 1},
            "Person": {"type": "object", "properties": {"name": {"$ref": "#/$defs/Name"}}, "required": ["name"]},
        },
        "type": "object",
        "properties": {"owner": {"$ref": "#/$defs/Person"}, "alias": {"$ref": "#/$defs/Person/properties/name"}},
    }));
    ok(&s, json!({"owner": {"name": "a"}, "alias": "b"}));
    let e = bad_kw(&s, json!({"owner": {"name": ""}}), "minLength");
    assert_eq!(e.errors[0].instance_path, "/owner/name");
    bad_kw(&s, json!({"alias": ""}), "minLength");
    // A tree: a recursive type.
    let tree = compile(json!({
        "$ref": "#/$defs/Node",
        "$defs": {"Node": {
            "type": "object",
            "properties": {"value": {"type": "integer"}, "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}},
            "required": ["value"],
        }},
    }));
    ok(
        &tree,
        json!({"value": 1, "children": [{"value": 2, "children": [{"value": 3}]}]}),
    );
    let e = bad_kw(
        &tree,
        json!({"value": 1, "children": [{"value": 2, "children": [{"value": "x"}]}]}),
        "type",
    );
    assert_eq!(e.errors[0].instance_path, "/children/0/children/0/value");
    // `#` is the root; pointers with escapes and percent-encoding.
    let s = compile(json!({"properties": {"next": {"$ref": "#"}}, "type": "object"}));
    ok(&s, json!({"next": {"next": {}}}));
    bad_kw(&s, json!({"next": {"next": 1}}), "type");
    let s = compile(
        json!({"$defs": {"a/b": {"type": "integer"}, "c%d": {"type": "string"}},
        "properties": {"x": {"$ref": "#/$defs/a~1b"}, "y": {"$ref": "#/$defs/c%25d"}}}),
    );
    ok(&s, json!({"x": 1, "y": "s"}));
    bad(&s, json!({"x": "s"}));
    bad(&s, json!({"y": 1}));
    // Anchors and the root's own $id.
    let s = compile(
        json!({"$id": "https://example.com/s.json", "$defs": {"i": {"$anchor": "int", "type": "integer"}},
        "properties": {"a": {"$ref": "#int"}, "b": {"$ref": "https://example.com/s.json#/$defs/i"}}}),
    );
    ok(&s, json!({"a": 1, "b": 2}));
    bad(&s, json!({"b": "x"}));
}

#[test]
fn remote_and_dangling_refs_are_compile_errors() {
    for r in [
        "http://example.com/schema.json",
        "https://x/y#/a",
        "file:///etc/passwd",
        "urn:uuid:1234",
        "other.json#/a",
        "#/$defs/../x",
    ] {
        let err = compile_err(json!({"properties": {"a": {"$ref": r}}}));
        assert!(
            matches!(
                err,
                SchemaError::RemoteRef { .. } | SchemaError::UnresolvedRef { .. }
            ),
            "{r}: {err}"
        );
    }
    let err = compile_err(json!({"$ref": "http://example.com/schema.json"}));
    assert!(matches!(err, SchemaError::RemoteRef { .. }), "{err}");
    assert!(err.to_string().contains("never fetched"));
    let err = compile_err(json!({"$ref": "#/$defs/Missing"}));
    assert!(matches!(err, SchemaError::UnresolvedRef { .. }), "{err}");
    let err = compile_err(json!({"$ref": "#/required/0", "required": ["a"]}));
    assert!(matches!(err, SchemaError::UnresolvedRef { .. }), "{err}");
}

#[test]
fn ref_cycles_are_bounded() {
    // Compiles (no compile-time loop) and validation stops at the recursion limit.
    let s = compile(json!({"$ref": "#"}));
    let e = bad_kw(&s, json!(1), "maxRecursion");
    assert!(e.errors[0].message.contains("recursion"));
    let s = compile(
        json!({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}),
    );
    bad_kw(&s, json!(1), "maxRecursion");
    // Even under `not`, a limit is a failure, not a pass.
    let s = compile(json!({"not": {"$ref": "#"}}));
    bad_kw(&s, json!(1), "maxRecursion");
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

mod generated {
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};

    #[derive(JsonSchema, Serialize, Deserialize)]
    #[allow(dead_code)]
    pub(crate) enum Priority {
        Low,
        High,
    }

    #[derive(JsonSchema, Serialize, Deserialize)]
    #[serde(tag = "kind", rename_all = "snake_case")]
    #[allow(dead_code)]
    pub(crate) enum Target {
        File { path: String },
        Url { url: String, retries: Option<u8> },
    }

    #[derive(JsonSchema, Serialize, Deserialize)]
    #[allow(dead_code)]
    pub(crate) struct Tag {
        pub(crate) name: String,
        pub(crate) weight: f64,
    }

    #[derive(JsonSchema, Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    pub(crate) struct Args {
        pub(crate) query: String,
        pub(crate) limit: Option<u32>,
        pub(crate) priority: Priority,
        pub(crate) target: Target,
        pub(crate) tags: Vec<Tag>,
        pub(crate) children: Vec<Args>,
    }
}

#[test]
fn schemars_generated_schema() {
    let schema = serde_json::to_value(schemars::schema_for!(generated::Args)).unwrap();
    let s = compile(schema.clone());
    let good = json!({
        "query": "rust",
        "limit": 10,
        "priority": "High",
        "target": {"kind": "url", "url": "https://x", "retries": null},
        "tags": [{"name": "a", "weight": 0.5}],
        "children": [{"query": "q", "priority": "Low", "target": {"kind": "file", "path": "/p"}, "tags": [], "children": []}],
    });
    ok(&s, good.clone());
    // What the types accept, the schema accepts.
    let _: generated::Args = serde_json::from_value(good.clone()).unwrap();
    let mut wrong = good.clone();
    wrong["limit"] = json!(-1);
    let e = bad(&s, wrong);
    assert_eq!(e.errors[0].instance_path, "/limit", "{e}");
    let mut wrong = good.clone();
    wrong["priority"] = json!("Medium");
    let e = bad(&s, wrong);
    assert!(e.to_string().contains("arguments/priority"), "{e}");
    let mut wrong = good.clone();
    wrong["target"] = json!({"kind": "url"});
    let e = bad(&s, wrong);
    // The tag picks the alternative that explains the error.
    assert!(
        e.to_string()
            .contains(r#"arguments/target: missing required property "url""#),
        "{e}"
    );
    let mut wrong = good.clone();
    wrong["children"][0]["tags"] = json!([{"name": "a", "weight": "heavy"}]);
    let e = bad(&s, wrong);
    assert!(
        e.to_string()
            .contains("arguments/children/0/tags/0/weight: expected number, got string"),
        "{e}"
    );
    let mut wrong = good.clone();
    wrong["unknown"] = json!(1);
    bad_kw(&s, wrong, "additionalProperties");
    let mut wrong = good;
    wrong.as_object_mut().unwrap().remove("query");
    bad_kw(&s, wrong, "required");
}

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
    assert_eq!(s.validate(&json!([1, 2, 3])).unwrap_err().len(), 2);
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

fn nested_arrays(depth: usize) -> Value {
    let mut v = json!(1);
    for _ in 0..depth {
        v = Value::Array(vec![v]);
    }
    v
}

/// Checks `instance` (which may be too deep to drop or clone on a test thread's stack) and
/// leaks it.
fn check_deep(schema: &Schema, instance: Value) -> Option<ValidationErrors> {
    let verdict = schema.is_valid(&instance);
    let result = schema.validate(&instance).err();
    assert_eq!(verdict, result.is_none());
    std::mem::forget(instance);
    result
}

#[test]
fn deep_instance_is_an_error_not_a_stack_overflow() {
    let s = compile(
        json!({"$defs": {"n": {"type": ["array", "integer"], "items": {"$ref": "#/$defs/n"}}}, "$ref": "#/$defs/n"}),
    );
    ok(&s, nested_arrays(60));
    let e = check_deep(&s, nested_arrays(5_000)).unwrap();
    assert_eq!(e.errors[0].keyword, "maxDepth");
    assert!(e.errors[0].message.contains("deeper than 64"), "{e}");
    // uniqueItems compares deep values within the same bound; const and enum stop at the
    // depth of the schema value.
    let s = compile(json!({"uniqueItems": true}));
    let e = check_deep(
        &s,
        Value::Array(vec![nested_arrays(5_000), nested_arrays(5_000)]),
    )
    .unwrap();
    assert_eq!(e.errors[0].keyword, "maxDepth");
    let e = check_deep(&compile(json!({"const": [[1]]})), nested_arrays(5_000)).unwrap();
    assert_eq!(e.errors[0].keyword, "const");
    let e = check_deep(&compile(json!({"enum": [[[1]]]})), nested_arrays(5_000)).unwrap();
    assert_eq!(e.errors[0].keyword, "enum");
    // A schema that does not descend does not care.
    assert!(check_deep(&compile(json!({"type": "array"})), nested_arrays(5_000)).is_none());
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
    let input = "a".repeat(100_000);
    let started = Instant::now();
    bad_kw(&s, json!(input), "pattern");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "took {:?}",
        started.elapsed()
    );
    let s = compile(json!({"patternProperties": {"^(a|aa)+$": {"type": "integer"}}}));
    let started = Instant::now();
    let mut map = serde_json::Map::new();
    map.insert(format!("{}!", "a".repeat(50_000)), json!("x"));
    ok(&s, Value::Object(map));
    assert!(started.elapsed() < Duration::from_secs(2));
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
