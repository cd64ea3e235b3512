use super::*;
use crate::codegen::extract::VersionTables;
use serde_json::json;
use std::collections::BTreeSet;

fn tables(defs: Value, params: Value, results: Value) -> VersionTables {
    let map = |v: Value| -> BTreeMap<String, Value> {
        serde_json::from_value(v).expect("an object of schemas")
    };
    VersionTables {
        version: "test".into(),
        methods: Default::default(),
        defs: map(defs),
        params: map(params),
        results: map(results),
        notes: BTreeMap::new(),
    }
}

#[test]
fn references_resolve_in_any_order_and_keywords_compile() {
    let t = tables(
        json!({
            "A": {"type": "object", "properties": {"b": {"$ref": "B"}, "kind": {"const": "a"}},
                  "required": ["b"], "additionalProperties": false},
            "B": {"type": ["string", "null"], "maxLength": 3, "enum": ["x", null]},
            "Open": {"additionalProperties": {}},
            "Map": {"additionalProperties": {"type": "integer", "minimum": 0}}
        }),
        json!({"m": {"$ref": "A"}}),
        json!({"m": {"anyOf": [true, false]}}),
    );
    let arena = compile(&t).unwrap();
    assert_eq!(
        arena.def_names,
        ["A", "B", "Map", "Open"],
        "definitions first"
    );
    let node = |id: u32| &arena.nodes[id as usize];
    let a = node(arena.params["m"]).reference.unwrap();
    assert!(node(arena.params["m"]).is_pure_ref());
    let a = node(a);
    assert_eq!(a.additional, Additional::Never);
    assert_eq!(a.required, ["b"]);
    let names: Vec<&str> = a.properties.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["b", "kind"]);
    let b = node(node(a.properties[0].1).reference.unwrap());
    assert_eq!(b.max_length, Some(3));
    assert_eq!(b.enumeration.as_ref().map(Vec::len), Some(2));
    let result = node(arena.results["m"]);
    assert!(!node(result.any_of[0]).never && node(result.any_of[1]).never);
    assert_eq!(node(1).types, 1 << 4 | 1);
    assert_eq!(node(3).additional, Additional::Any);
    assert!(matches!(node(2).additional, Additional::Schema(_)));
    assert_eq!(
        arena.discriminators(0),
        [("kind", &json!("a"), false)],
        "a constant property"
    );
}

#[test]
fn a_dangling_reference_or_an_object_constant_is_an_error() {
    let dangling = tables(json!({"A": {"$ref": "Nope"}}), json!({}), json!({}));
    assert!(
        compile(&dangling)
            .unwrap_err()
            .contains("dangling $ref Nope")
    );
    let object = tables(json!({"A": {"const": {"a": 1}}}), json!({}), json!({}));
    assert!(compile(&object).unwrap_err().contains("not a scalar"));
}

#[test]
fn equal_nodes_are_shared() {
    let t = tables(
        json!({"A": {"properties": {"x": {"type": "string"}, "y": {"type": "string"}}}}),
        json!({"m": {"type": "string"}}),
        json!({}),
    );
    let arena = compile(&t).unwrap();
    let a = &arena.nodes[0];
    assert_eq!(a.properties[0].1, a.properties[1].1);
    assert_eq!(arena.params["m"], a.properties[0].1);
    assert_eq!(arena.nodes.len(), 2);
}

#[test]
fn unions_told_apart_by_a_tag_or_by_required_properties() {
    let t = tables(
        json!({
            "Text": {"properties": {"type": {"const": "text"}, "text": {"type": "string"}},
                     "required": ["type", "text"]},
            "Image": {"allOf": [{"$ref": "Base"}, {"properties": {"type": {"$ref": "ImageTag"}}}]},
            "ImageTag": {"const": "image"},
            "Base": {"properties": {"data": {}}, "required": ["data"]},
            "Call": {"properties": {"content": {}}, "required": ["content"]},
            "Task": {"properties": {"task": {}}, "required": ["task"]},
        }),
        json!({}),
        json!({
            "content": {"anyOf": [{"$ref": "Text"}, {"$ref": "Image"}]},
            "call": {"anyOf": [{"$ref": "Call"}, {"$ref": "Task"}]},
            "untold": {"anyOf": [{"$ref": "Call"}, {"$ref": "Call"}]},
        }),
    );
    let arena = compile(&t).unwrap();
    assert_eq!(
        arena.union(arena.results["content"]),
        Some(Union::Tag {
            key: "type".into(),
            tags: vec!["text".into(), "image".into()],
            sure: true,
        }),
        "through $ref and allOf"
    );
    assert_eq!(
        arena.union(arena.results["call"]),
        Some(Union::Required {
            keys: vec!["content".into(), "task".into()]
        })
    );
    assert_eq!(arena.union(arena.results["untold"]), None);
    let defs: BTreeSet<&str> = arena.def_names.iter().map(String::as_str).collect();
    assert!(defs.contains("ImageTag"));
}
