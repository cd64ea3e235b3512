//! `$ref`s: local, nested and recursive ones resolve; remote and dangling ones are compile errors;
//! cycles are bounded.

use crate::support::{bad, bad_kw, compile, compile_err, ok};
use ferromcp_server::jsonschema::SchemaError;
use serde_json::json;

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
