//! The generated facts the fast paths rely on, checked against their definitions, and the fast
//! paths (`matches.rs`, the shortcuts of `shape.rs` and `plausible`) compared with the plain
//! walks on generated values: same answers, same shaped results. Covers the schema tables'
//! contract with MCP's per-revision `schema.json` ("Schema" of each revision's specification).

use proptest::prelude::*;
use serde_json::{Map, Value, json};

use super::data::VersionData;
use super::generated::{ALL_METHODS, VERSIONS};
use super::matches::matches;
use super::raw;
use super::schema::{Additional, Key, Lit, NodeId, Span, Union};
use super::shape::Shaper;
use super::validate::{Subject, plain_ok, plausible_with, report};
use super::{Kind, method_index, methods};
use crate::ProtocolVersion;

/// Every node of every revision.
fn every_node() -> impl Iterator<Item = (ProtocolVersion, &'static VersionData, NodeId)> {
    ProtocolVersion::ALL
        .into_iter()
        .zip(VERSIONS)
        .flat_map(|(v, data)| (0..data.nodes.len()).map(move |i| (v, data, i as NodeId)))
}

/// The constant a schema pins its value to, following references (what the generator's
/// `constant_of` computes).
fn constant_of(c: &VersionData, id: NodeId, depth: u32) -> Option<Lit> {
    let node = c.node(id);
    match (node.constant, node.reference) {
        (Some(k), _) => Some(k),
        (None, Some(target)) if depth < 256 => constant_of(c, target, depth + 1),
        _ => None,
    }
}

fn plain_plausible(c: &VersionData, id: NodeId, value: &Value) -> bool {
    plausible_with(c, id, Subject::Value(value), 0, false)
}

fn shaped(c: &'static VersionData, root: NodeId, value: &Value, fast: bool) -> Value {
    let Value::Object(mut map) = value.clone() else {
        return value.clone();
    };
    Shaper { c, fast }.object(&[root], &mut map, 0);
    Value::Object(map)
}

/// Each revision lists its methods' schemas, the hash finds exactly the spec methods, and the
/// kind bits agree with the four sorted method lists.
#[test]
fn method_tables_agree_with_the_method_lists() {
    for (i, name) in ALL_METHODS.iter().enumerate() {
        assert_eq!(method_index(name), Some(i), "{name}");
    }
    for name in [
        "",
        "ping2",
        "tools/cal",
        "tools/calls",
        "notifications/tools/list_changes",
    ] {
        assert_eq!(method_index(name), None, "{name}");
    }
    for (v, data) in ProtocolVersion::ALL.into_iter().zip(VERSIONS) {
        assert_eq!(data.methods.len(), ALL_METHODS.len());
        for (name, entry) in ALL_METHODS.iter().zip(data.methods) {
            for kind in Kind::ALL {
                let listed = methods(kind, v).contains(name);
                assert_eq!(entry.kinds & (1 << kind as u8) != 0, listed, "{v} {name}");
            }
            assert_eq!(
                entry.params.is_some(),
                entry.kinds != 0,
                "{v} {name} params"
            );
            let request = methods(Kind::ClientRequest, v).contains(name)
                || methods(Kind::ServerRequest, v).contains(name);
            assert_eq!(entry.result.is_some(), request, "{v} {name} result");
        }
        assert!(data.params("notifications/cancelled").is_some(), "{v}");
    }
}

/// The generated tables hold no pointers: every range and index a node holds lies within its
/// revision's flat arrays, and every name is a piece of the string blob whose length and first
/// bytes are the ones the name was compiled with (a name out of place would silently read as
/// empty).
#[test]
fn generated_ranges_and_names_resolve() {
    fn within<T>(span: Span, all: &[T]) -> bool {
        span.start as usize + span.len() <= all.len()
    }
    for (v, c, id) in every_node() {
        let node = c.node(id);
        assert!(within(node.properties, c.props), "{v} node {id}");
        assert!(within(node.required, c.names), "{v} node {id}");
        assert!(
            within(node.discriminators, c.discriminators),
            "{v} node {id}"
        );
        assert!(within(node.any_of, c.ids), "{v} node {id}");
        assert!(within(node.all_of, c.ids), "{v} node {id}");
        assert_eq!(
            node.union.is_some(),
            c.union(node).is_some(),
            "{v} node {id}"
        );
        assert_eq!(node.view.is_some(), c.view(node).is_some(), "{v} node {id}");
        assert_eq!(
            node.bounds.is_some(),
            c.bounds(node).is_some(),
            "{v} node {id}"
        );
        if let Some(view) = c.view(node) {
            assert!(within(view.described, c.ids), "{v} node {id}");
        }
        if let Some(enumeration) = c.bounds(node).and_then(|b| b.enumeration) {
            assert!(within(enumeration, c.lits), "{v} node {id}");
        }
        if let Some(union) = c.union(node) {
            let (Union::Tag { tags: span, .. } | Union::Required { keys: span }) = union;
            assert!(within(*span, c.names), "{v} node {id}");
        }
    }
    for (v, c) in ProtocolVersion::ALL.into_iter().zip(VERSIONS) {
        let names = c.props.iter().map(|p| p.name);
        let names = names.chain(c.names.iter().copied());
        let names = names.chain(c.discriminators.iter().map(|d| d.0));
        let names = names.chain(c.unions.iter().filter_map(|u| match u {
            Union::Tag { key, .. } => Some(*key),
            Union::Required { .. } => None,
        }));
        let lits = c.lits.iter().chain(c.discriminators.iter().map(|d| &d.1));
        let names = names.chain(lits.filter_map(|l| match l {
            Lit::Str(name) => Some(*name),
            _ => None,
        }));
        for name in names {
            let text = c.text(&name);
            assert_eq!(text.len(), name.len(), "{v}: {name:?}");
            assert!(name.is(&Key::new(text), c.strings), "{v}: {text}");
        }
    }
}

/// The per-node facts the generator emits match their definitions.
#[test]
fn generated_node_facts_hold() {
    for (v, c, id) in every_node() {
        let node = c.node(id);
        let only_ref = node.reference.is_some()
            && !node.never
            && node.types == 0
            && node.constant.is_none()
            && !node.has_properties
            && node.required.is_empty()
            && node.additional == Additional::Absent
            && node.items.is_none()
            && node.any_of.is_empty()
            && node.all_of.is_empty()
            && node.bounds.is_none();
        assert_eq!(node.pure_ref, only_ref, "{v} node {id}");
        let only_type = node.reference.is_none()
            && !node.never
            && node.constant.is_none()
            && node.required.is_empty()
            && node.properties.is_empty()
            && matches!(node.additional, Additional::Absent | Additional::Any)
            && node.items.is_none()
            && node.any_of.is_empty()
            && node.all_of.is_empty()
            && node.bounds.is_none();
        assert_eq!(node.type_only, only_type, "{v} node {id}");
        let mut previous: Option<&str> = None;
        let mut expected = Vec::new();
        for prop in c.props(node) {
            let name = c.text(&prop.name);
            if let Some(p) = previous {
                assert!((p.len(), p) < (name.len(), name), "{v} node {id}: order");
            }
            previous = Some(name);
            assert_eq!(
                prop.required,
                c.required(node).iter().any(|r| c.text(r) == name),
                "{v} {id} {name}"
            );
            assert!(
                c.property_entry(node, &Key::new(name)).is_some(),
                "{v} {id} {name}"
            );
            if let Some(k) = constant_of(c, prop.node, 0) {
                expected.push((name, k, prop.required));
            }
        }
        expected.sort_by(|a, b| a.0.cmp(b.0));
        let mut found: Vec<(&str, Lit, bool)> = c
            .discriminators(node)
            .iter()
            .map(|&(name, k, required)| (c.text(&name), k, required))
            .collect();
        found.sort_by(|a, b| a.0.cmp(b.0));
        assert_eq!(found, expected, "{v} node {id}: discriminators");
        assert!(
            node.union.is_none() || c.any_of(node).len() >= 2,
            "{v} node {id}"
        );
    }
}

/// A tag union: an object carrying branch `i`'s tag fails every other branch and is not
/// plausible for it, by the plain walks (and, where the union says `sure`, is plausible for
/// branch `i`). A union told apart by required properties: an object without branch `i`'s key
/// fails branch `i`. A node marked always plausible is plausible for objects, and a
/// precomputed shaping view is what the plain walk gathers.
#[test]
fn unions_exclude_what_they_claim() {
    let mut seen = (0, 0);
    for (v, c, id) in every_node() {
        let node = c.node(id);
        match c.union(node) {
            Some(Union::Tag { key, tags, sure }) => {
                seen.0 += 1;
                let tags = c.names(*tags);
                assert_eq!(tags.len(), c.any_of(node).len());
                for (i, tag) in tags.iter().enumerate() {
                    let value = json!({ c.text(key): c.text(tag) });
                    for (j, &branch) in c.any_of(node).iter().enumerate() {
                        if i == j {
                            if *sure {
                                assert!(plain_plausible(c, branch, &value), "{v} {id} {i}");
                            }
                        } else {
                            assert!(!plain_ok(c, branch, &value), "{v} {id} {i} {j}");
                            assert!(!plain_plausible(c, branch, &value), "{v} {id} {i} {j}");
                        }
                    }
                }
            }
            Some(Union::Required { keys }) => {
                seen.1 += 1;
                let keys = c.names(*keys);
                assert_eq!(keys.len(), c.any_of(node).len());
                for (i, &branch) in c.any_of(node).iter().enumerate() {
                    let others: Map<String, Value> = keys
                        .iter()
                        .enumerate()
                        .filter(|&(j, _)| j != i)
                        .map(|(_, k)| (c.text(k).to_owned(), json!({})))
                        .collect();
                    assert!(!plain_ok(c, branch, &Value::Object(others)), "{v} {id} {i}");
                }
            }
            None => {}
        }
        if let Some(view) = c.view(node) {
            for object in [
                json!({}),
                json!({"type": "text", "content": [], "task": {}}),
            ] {
                let map = object.as_object().cloned().unwrap_or_default();
                let (described, open) = super::shape::gathered(c, id, &map);
                assert_eq!(
                    (described.as_slice(), open),
                    (c.described(view), view.open),
                    "{v} {id}"
                );
            }
        }
        if node.always_plausible {
            for object in [json!({}), json!({"type": "text", "text": 1, "content": []})] {
                assert!(plain_plausible(c, id, &object), "{v} node {id}");
            }
        }
    }
    assert!(
        seen.0 > 5 && seen.1 > 5,
        "the schemas have both kinds of union: {seen:?}"
    );
}

/// Basic, "Tools" (2025-11-25, `CallToolResult`): a content block's tag picks its branch; an
/// error in that branch is reported there; a missing or unknown tag matches no branch, as
/// before (the report is the plain walk's).
#[test]
fn content_block_tags_pick_the_branch_or_fall_back() {
    let c = VERSIONS[ProtocolVersion::V2025_11_25 as usize];
    let Some(root) = c.result("tools/call") else {
        panic!("tools/call has a result schema");
    };
    let ok = json!({"content": [{"type": "image", "data": "AA==", "mimeType": "image/png"}]});
    assert!(matches(c, root, &ok, 0) && plain_ok(c, root, &ok));

    let no_data = json!({"content": [{"type": "image", "mimeType": "image/png"}]});
    assert!(!matches(c, root, &no_data, 0) && !plain_ok(c, root, &no_data));
    let err = report(c, root, &no_data).unwrap_err();
    assert_eq!(err.pointer(), "/content/0/data");

    for block in [
        json!({"text": "no tag"}),
        json!({"type": "video", "text": "x"}),
    ] {
        let value = json!({ "content": [block] });
        assert!(!matches(c, root, &value, 0) && !plain_ok(c, root, &value));
        let err = report(c, root, &value).unwrap_err();
        assert_eq!(err.pointer(), "/content/0", "{value}");
        assert_eq!(
            err.kind(),
            &super::ParamsErrorKind::NoMatchingAlternative { alternatives: 5 }
        );
    }

    // A task handle instead of a tool result: the required-property union picks
    // `CreateTaskResult`; with both keys both branches are tried.
    let task = json!({"task": {"taskId": "t", "status": "working", "createdAt": "x",
                               "lastUpdatedAt": "x", "ttl": null}});
    assert!(matches(c, root, &task, 0) && plain_ok(c, root, &task));
    let both = json!({"content": [], "task": 1});
    assert!(matches(c, root, &both, 0) && plain_ok(c, root, &both));
    let neither = json!({"isError": true});
    assert!(!matches(c, root, &neither, 0) && !plain_ok(c, root, &neither));
}

const KEYS: [&str; 30] = [
    "type",
    "text",
    "content",
    "task",
    "isError",
    "data",
    "mimeType",
    "resource",
    "uri",
    "blob",
    "name",
    "_meta",
    "structuredContent",
    "annotations",
    "mode",
    "method",
    "role",
    "model",
    "action",
    "values",
    "ref",
    "messages",
    "contents",
    "tools",
    "taskId",
    "status",
    "ttl",
    "resultType",
    "arguments",
    "x",
];

const STRINGS: [&str; 16] = [
    "text",
    "image",
    "audio",
    "resource",
    "resource_link",
    "tool_use",
    "tool_result",
    "ref/prompt",
    "ref/resource",
    "url",
    "form",
    "accept",
    "working",
    "user",
    "bogus",
    "",
];

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-3i64..300).prop_map(Value::from),
        (0.0f64..2.0).prop_map(Value::from),
        prop::sample::select(STRINGS.to_vec()).prop_map(Value::from),
    ]
}

pub(super) fn object_of(inner: impl Strategy<Value = Value>) -> impl Strategy<Value = Value> {
    prop::collection::btree_map(prop::sample::select(KEYS.to_vec()), inner, 0..6)
        .prop_map(|m| Value::Object(m.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()))
}

/// JSON values whose keys and strings are the schemas' own words, so that tags, required
/// properties and unions are hit (present, missing, unknown) often.
pub(super) fn value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(4, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            object_of(inner),
        ]
    })
}

/// A block of content: a known, unknown or missing tag and the usual fields.
fn block() -> impl Strategy<Value = Value> {
    (
        prop::option::of(prop::sample::select(STRINGS.to_vec())),
        prop::option::of(leaf()),
        prop::option::of(value()),
        object_of(leaf()),
    )
        .prop_map(|(tag, text, extra, mut rest)| {
            if let Value::Object(map) = &mut rest {
                if let Some(tag) = tag {
                    map.insert("type".into(), tag.into());
                }
                if let Some(text) = text {
                    map.insert("text".into(), text);
                }
                if let Some(extra) = extra {
                    map.insert("resource".into(), extra);
                }
            }
            rest
        })
}

/// A result-like object: content blocks, maybe a task, maybe other fields.
pub(super) fn result_like() -> impl Strategy<Value = Value> {
    (
        prop::collection::vec(block(), 0..4),
        prop::option::of(value()),
        object_of(value()),
    )
        .prop_map(|(content, task, mut rest)| {
            if let Value::Object(map) = &mut rest {
                map.insert("content".into(), Value::Array(content.clone()));
                map.insert(
                    "messages".into(),
                    json!([{"role": "user", "content": content.first()}]),
                );
                if let Some(task) = task {
                    map.insert("task".into(), task);
                }
            }
            rest
        })
}

/// The fast walk says what the plain walk says, the shortcuts of shaping shape the same way,
/// for every revision's params and result schemas.
fn same_answers(value: &Value) -> Result<(), TestCaseError> {
    // The walk on JSON text (issue 17 point 4), on compact and on pretty text.
    let compact = value.to_string();
    let pretty = serde_json::to_string_pretty(value).unwrap_or_default();
    for (v, c) in ProtocolVersion::ALL.into_iter().zip(VERSIONS) {
        for entry in c.methods {
            for root in [entry.params, entry.result].into_iter().flatten() {
                let plain = plain_ok(c, root, value);
                prop_assert_eq!(
                    matches(c, root, value, 0),
                    plain,
                    "{} node {} on {}",
                    v,
                    root,
                    value
                );
                prop_assert_eq!(
                    raw::matches(c, root, &compact, 0),
                    plain,
                    "{} node {} on {}",
                    v,
                    root,
                    compact
                );
                prop_assert_eq!(
                    raw::matches(c, root, &pretty, 0),
                    plain,
                    "{} node {} on {}",
                    v,
                    root,
                    pretty
                );
                prop_assert_eq!(shaped(c, root, value, true), shaped(c, root, value, false));
            }
        }
    }
    Ok(())
}

proptest! {
    #[test]
    fn fast_paths_agree_with_the_plain_walks_on_any_value(value in value()) {
        same_answers(&value)?;
    }

    #[test]
    fn fast_paths_agree_with_the_plain_walks_on_result_like_values(value in result_like()) {
        same_answers(&value)?;
        let content = json!({ "content": value.get("content") });
        same_answers(&content)?;
    }

    /// `plausible`'s shortcuts give the plain answer for every node.
    #[test]
    fn plausible_shortcuts_agree(value in result_like()) {
        for (_, c, id) in every_node() {
            prop_assert_eq!(
                plausible_with(c, id, Subject::Value(&value), 0, true),
                plain_plausible(c, id, &value)
            );
        }
    }
}

/// What `shape_result` then `validate_result` make of `value` (an object) for `method` at `v`.
fn two_walks(
    method: &str,
    v: ProtocolVersion,
    value: &Map<String, Value>,
) -> (Map<String, Value>, Result<(), super::ParamsError>) {
    let mut map = value.clone();
    super::shape_result(method, v, &mut map);
    let map = Value::Object(map);
    let outcome = super::validate_result(method, v, &map);
    let Value::Object(map) = map else {
        unreachable!("an object stays an object")
    };
    (map, outcome)
}

/// What `Method::shape_and_validate_result` makes of `value`.
fn one_walk(
    method: &str,
    v: ProtocolVersion,
    value: &Map<String, Value>,
) -> (Map<String, Value>, Result<(), super::ParamsError>) {
    let Some(handle) = super::method(method) else {
        panic!("{method} is a spec method");
    };
    let mut map = value.clone();
    let outcome = handle.shape_and_validate_result(v, &mut map);
    (map, outcome)
}

/// The one walk shapes and answers as the two walks do (same map, same error), for every
/// revision's every result schema.
fn same_as_two_walks(value: &Value) -> Result<(), TestCaseError> {
    let Value::Object(map) = value else {
        return Ok(());
    };
    for v in ProtocolVersion::ALL {
        for method in ALL_METHODS {
            prop_assert_eq!(
                one_walk(method, v, map),
                two_walks(method, v, map),
                "{} {} on {}",
                v,
                method,
                value
            );
        }
    }
    Ok(())
}

proptest! {
    /// "Schema" of each revision: shaping and validating a result in one walk is shaping it,
    /// then validating it.
    #[test]
    fn one_walk_shapes_and_validates_as_two_on_any_object(value in object_of(value())) {
        same_as_two_walks(&value)?;
    }

    #[test]
    fn one_walk_shapes_and_validates_as_two_on_result_like_values(value in result_like()) {
        same_as_two_walks(&value)?;
        let content = json!({ "content": value.get("content") });
        same_as_two_walks(&content)?;
        let mut valid = json!({"content": [{"type": "text", "text": "hi"}], "isError": false});
        if let (Value::Object(valid), Value::Object(extra)) = (&mut valid, &value) {
            for (key, field) in extra.iter().take(2) {
                valid.insert(key.clone(), field.clone());
            }
        }
        same_as_two_walks(&valid)?;
    }
}

/// The handle answers what the free functions answer about its method, for every method and
/// revision, and custom names have no handle.
#[test]
fn method_handles_answer_as_the_free_functions() {
    for name in ALL_METHODS {
        let Some(handle) = super::method(name) else {
            panic!("{name} has a handle");
        };
        assert_eq!(handle.name(), *name);
        assert_eq!(format!("{handle:?}"), format!("Method({name:?})"));
        for v in ProtocolVersion::ALL {
            assert_eq!(handle.kind(v), super::method_kind(name, v), "{v} {name}");
            assert_eq!(handle.exists(v), super::exists(name, v), "{v} {name}");
            for kind in Kind::ALL {
                assert_eq!(
                    handle.exists_as(kind, v),
                    super::exists_as(name, kind, v),
                    "{v} {name}"
                );
            }
            for params in [None, Some(json!({})), Some(json!({"name": 1}))] {
                assert_eq!(
                    handle.validate_params(v, params.as_ref()),
                    super::validate_params(name, v, params.as_ref()),
                    "{v} {name}"
                );
                assert_eq!(
                    handle.validate_notification_params(v, params.as_ref()),
                    super::validate_notification_params(name, v, params.as_ref()),
                    "{v} {name}"
                );
            }
        }
    }
    for name in ["", "acme/custom", "tools/cal"] {
        assert!(super::method(name).is_none(), "{name}");
    }
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// Basic, "Tools" (2025-11-25, `CallToolResult`): the kernel's `tools/call` result is kept as
/// it is and passes, in one walk as in two; fields the revision does not define go.
#[test]
fn one_walk_on_the_tools_call_example() {
    let v = ProtocolVersion::V2025_11_25;
    let example = object(json!({"content": [{"type": "text", "text": "hello"}], "isError": false}));
    let (shaped, outcome) = one_walk("tools/call", v, &example);
    assert_eq!(shaped, example);
    assert_eq!(outcome, Ok(()));
    assert_eq!(two_walks("tools/call", v, &example), (shaped, outcome));

    let extra = object(json!({
        "content": [{"type": "text", "text": "hello", "icons": []}],
        "structuredContent": {"a": {"b": 1}},
        "_meta": {"k": 1},
        "ttlMs": 1,
        "resultType": "complete",
    }));
    let (shaped, outcome) = one_walk("tools/call", v, &extra);
    assert_eq!(
        Value::Object(shaped.clone()),
        json!({
            "content": [{"type": "text", "text": "hello"}],
            "structuredContent": {"a": {"b": 1}},
            "_meta": {"k": 1},
        })
    );
    assert_eq!(outcome, Ok(()));
    assert_eq!(two_walks("tools/call", v, &extra), (shaped, outcome));
}

/// Basic, "Tools": an invalid result fails with the report of the two walks, and is shaped
/// all the same.
#[test]
fn one_walk_reports_an_invalid_result_as_two_walks() {
    let v = ProtocolVersion::V2025_11_25;
    for bad in [
        json!({"content": [{"type": "image", "mimeType": "image/png", "x": 1}]}),
        json!({"content": [{"type": "text", "text": 5}], "isError": "no", "y": 2}),
        json!({"content": {"type": "text"}}),
        json!({"isError": true}),
        json!({"content": [{"type": "video"}]}),
    ] {
        let bad = object(bad);
        let (shaped, outcome) = one_walk("tools/call", v, &bad);
        let Err(err) = &outcome else {
            panic!("{bad:?} is invalid");
        };
        assert_eq!(err.method(), "tools/call");
        assert_eq!(two_walks("tools/call", v, &bad), (shaped, outcome));
    }
    let (shaped, outcome) = one_walk(
        "tools/call",
        v,
        &object(json!({"content": [{"type": "image", "mimeType": "image/png", "x": 1}]})),
    );
    assert_eq!(
        outcome.map_err(|e| e.pointer().to_owned()),
        Err("/content/0/data".to_owned())
    );
    assert_eq!(
        Value::Object(shaped),
        json!({"content": [{"type": "image", "mimeType": "image/png"}]})
    );
}

/// Tasks (2025-11-25): the result of a task-augmented `tools/call` is the union
/// `CallToolResult | CreateTaskResult`; a task handle takes the `CreateTaskResult` branch in
/// one walk, a result with both keys tries both, and one with neither fails, as in two walks.
#[test]
fn one_walk_on_the_call_tool_or_create_task_union() {
    let v = ProtocolVersion::V2025_11_25;
    let task = json!({"taskId": "t", "status": "working", "createdAt": "x",
                      "lastUpdatedAt": "x", "ttl": null, "bogus": 1});
    let handle = object(json!({"task": task, "isError": false}));
    let (shaped, outcome) = one_walk("tools/call", v, &handle);
    assert_eq!(outcome, Ok(()));
    // `isError` is `CallToolResult`'s: kept, as the union's fields are.
    assert!(shaped.contains_key("isError") && shaped.contains_key("task"));
    assert_eq!(two_walks("tools/call", v, &handle), (shaped, outcome));

    for value in [
        json!({"task": {"taskId": 1}}),
        json!({"content": [], "task": 1}),
        json!({"content": [], "task": {"taskId": "t"}}),
        json!({"isError": true, "ttlMs": 1}),
    ] {
        let map = object(value);
        assert_eq!(
            one_walk("tools/call", v, &map),
            two_walks("tools/call", v, &map),
            "{map:?}"
        );
    }
}

/// At 2026-07-28 `resultType` defaults to `"complete"` after shaping, and the check sees it.
#[test]
fn one_walk_sees_the_result_type_of_2026_07_28() {
    let v = ProtocolVersion::V2026_07_28;
    for value in [
        json!({"content": [{"type": "text", "text": "hi"}]}),
        json!({"content": [{"type": "text", "text": "hi"}], "resultType": "complete"}),
        json!({"content": [], "resultType": "input_required"}),
        json!({"content": [], "resultType": 7}),
    ] {
        let map = object(value);
        let (shaped, outcome) = one_walk("tools/call", v, &map);
        assert!(shaped.contains_key("resultType"));
        assert_eq!(
            two_walks("tools/call", v, &map),
            (shaped, outcome),
            "{map:?}"
        );
    }
}

/// The walk on JSON text reads escaped keys, tags and strings as their values (issue 17
/// point 4), and reports a mismatch with the same error as the walk on values.
#[test]
fn raw_walk_reads_escapes_and_reports_as_the_value_walk() {
    let call = super::method("tools/call").unwrap();
    let v = ProtocolVersion::V2025_11_25;
    // `name` written with an escape; a content tag with one.
    assert!(
        call.validate_params_raw(v, Some(r#"{"n\u0061me":"add"}"#))
            .is_ok()
    );
    assert!(
        call.validate_params_raw(v, Some(r#"{ "name" : "a\"dd" , "arguments" : {} }"#))
            .is_ok()
    );
    let text = r#"{"name":5}"#;
    let value: Value = serde_json::from_str(text).unwrap();
    let raw_err = call.validate_params_raw(v, Some(text)).unwrap_err();
    let value_err = call.validate_params(v, Some(&value)).unwrap_err();
    assert_eq!(raw_err.to_string(), value_err.to_string());
    assert_eq!(raw_err.pointer(), "/name");
    // Absent params check as `{}`.
    assert!(call.validate_params_raw(v, None).is_err());
    let c = VERSIONS[v as usize];
    let Some(root) = c.result("tools/call") else {
        panic!("tools/call has a result schema");
    };
    for tagged in [
        r#"{"content":[{"t\u0079pe":"text","text":"hi"}]}"#,
        r#"{"content":[{"type":"te\u0078t","text":"hi"}]}"#,
        r#"{"content":[{"type":"image","mimeType":"image/png"}]}"#,
        r#"{"content":[{"type":"image","data":"AA==","mimeType":"image/png"}],"isError":true}"#,
    ] {
        let parsed: Value = serde_json::from_str(tagged).unwrap();
        assert_eq!(
            raw::matches(c, root, tagged, 0),
            matches(c, root, &parsed, 0),
            "{tagged}"
        );
    }
}
