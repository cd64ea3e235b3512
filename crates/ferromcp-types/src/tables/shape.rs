//! Per-revision result shaping: drop what the revision's result type does not define.

use serde_json::{Map, Value};

use super::schema::{Additional, Compiled, NodeId, T_ARRAY, T_OBJECT, compiled};
use super::validate::plausible;
use crate::ProtocolVersion;

/// Nesting depth beyond which shaping leaves values alone.
const MAX_DEPTH: u32 = 128;

/// The field every result carries, whose value is kept untouched at every level.
const META: &str = "_meta";
/// The 2026-07-28 result discriminator.
const RESULT_TYPE: &str = "resultType";
/// The `resultType` of a finished request (the schema's `ResultType` description lists
/// `"complete"` and `"input_required"`).
const COMPLETE: &str = "complete";

/// Shapes a `result` of request `method` for revision `v`, in place.
///
/// - Fields the revision's result type does not define are removed, recursively into nested
///   objects the schema describes with explicit `properties` (e.g. each tool of `tools/list`
///   loses `icons` and `execution` before the revisions that define them). Open objects (no
///   `properties`, or `additionalProperties` allowing more: `inputSchema`, `structuredContent`,
///   `experimental`, ...) are left untouched, and `_meta` is always kept as it is.
/// - Where the result is a union (such as `CallToolResult` or `CreateTaskResult` at
///   2025-11-25, or `InputRequiredResult` at 2026-07-28) a field is kept if any branch that
///   fits the value defines it.
/// - At 2026-07-28 `resultType` is set to `"complete"` unless the handler already set it (e.g.
///   to `"input_required"`); before 2026-07-28 it is removed.
///
/// For a method the revision does not define, only the `resultType` default of 2026-07-28 is
/// applied.
///
/// ```
/// use ferromcp_types::{ProtocolVersion, tables::shape_result};
/// use serde_json::{json, Map, Value};
///
/// let mut r: Map<String, Value> =
///     serde_json::from_value(json!({"tools": [], "ttlMs": 5000, "cacheScope": "public"})).unwrap();
/// shape_result("tools/list", ProtocolVersion::V2025_11_25, &mut r);
/// assert_eq!(Value::Object(r), json!({"tools": []}));
/// ```
pub fn shape_result(method: &str, v: ProtocolVersion, result: &mut Map<String, Value>) {
    let modern = v >= ProtocolVersion::V2026_07_28;
    let schemas = compiled(v);
    let Some(root) = schemas.result(method) else {
        if modern {
            set_result_type(result);
        }
        return;
    };
    shape_object(schemas, &[root], result, 0);
    if modern {
        set_result_type(result);
    } else {
        result.remove(RESULT_TYPE);
    }
}

fn set_result_type(result: &mut Map<String, Value>) {
    result
        .entry(RESULT_TYPE)
        .or_insert_with(|| Value::String(COMPLETE.to_owned()));
}

/// Node ids, the first [`Ids::INLINE`] without allocating: shaping a usual result touches the
/// heap only for what it removes.
#[derive(Default)]
struct Ids {
    len: usize,
    inline: [NodeId; Ids::INLINE],
    /// Every id, once there are more than fit inline.
    spilled: Vec<NodeId>,
}

impl Ids {
    const INLINE: usize = 8;

    fn push(&mut self, id: NodeId) {
        if self.spilled.is_empty() && self.len < Self::INLINE {
            self.inline[self.len] = id;
            self.len += 1;
        } else {
            if self.spilled.is_empty() {
                self.spilled.extend_from_slice(&self.inline[..self.len]);
            }
            self.spilled.push(id);
        }
    }

    fn clear(&mut self) {
        self.len = 0;
        self.spilled.clear();
    }

    fn as_slice(&self) -> &[NodeId] {
        if self.spilled.is_empty() {
            &self.inline[..self.len]
        } else {
            &self.spilled
        }
    }

    fn is_empty(&self) -> bool {
        self.as_slice().is_empty()
    }
}

/// What the applicable schemas say about an object value.
#[derive(Default)]
struct ObjectView {
    /// Object schemas with explicit properties that apply.
    described: Ids,
    /// Some applicable schema leaves the object open.
    open: bool,
}

fn shape_object(c: &Compiled, schemas: &[NodeId], map: &mut Map<String, Value>, depth: u32) {
    if depth > MAX_DEPTH {
        return;
    }
    let value = Value::Object(std::mem::take(map));
    let mut view = ObjectView::default();
    for &id in schemas {
        collect_object(c, id, &value, &mut view, depth);
    }
    let Value::Object(taken) = value else { return };
    *map = taken;
    if view.open || view.described.is_empty() {
        return;
    }
    let described = view.described.as_slice();
    map.retain(|key, _| {
        key == META || described.iter().any(|&n| c.node(n).property(key).is_some())
    });
    let mut children = Ids::default();
    for (key, child) in map.iter_mut() {
        if key == META {
            continue;
        }
        // Scalars have nothing to shape.
        if !matches!(child, Value::Object(_) | Value::Array(_)) {
            continue;
        }
        children.clear();
        for &n in described {
            if let Some(p) = c.node(n).property(key) {
                children.push(p);
            }
        }
        shape_value(c, children.as_slice(), child, depth + 1);
    }
}

fn shape_value(c: &Compiled, schemas: &[NodeId], value: &mut Value, depth: u32) {
    match value {
        Value::Object(map) => shape_object(c, schemas, map, depth),
        Value::Array(items) => {
            let mut item_schemas = Ids::default();
            let mut open = false;
            for &id in schemas {
                collect_items(c, id, &mut item_schemas, &mut open, depth);
            }
            if open || item_schemas.is_empty() {
                return;
            }
            for item in items {
                shape_value(c, item_schemas.as_slice(), item, depth + 1);
            }
        }
        _ => {}
    }
}

/// Gathers the object schemas that apply to `value` through `$ref`, `allOf` and the plausible
/// branches of `anyOf` (all branches when none is plausible).
fn collect_object(c: &Compiled, id: NodeId, value: &Value, view: &mut ObjectView, depth: u32) {
    if depth > MAX_DEPTH {
        view.open = true;
        return;
    }
    let node = c.node(id);
    if node.never || (node.types != 0 && node.types & T_OBJECT == 0) {
        return;
    }
    if let Some(target) = node.reference {
        collect_object(c, target, value, view, depth + 1);
    }
    for &part in &node.all_of {
        collect_object(c, part, value, view, depth + 1);
    }
    if !node.any_of.is_empty() {
        // The plausible branches, or every branch when none is.
        let mut any_fits = false;
        for &branch in &node.any_of {
            if plausible(c, branch, value, depth + 1) {
                any_fits = true;
                collect_object(c, branch, value, view, depth + 1);
            }
        }
        if !any_fits {
            for &branch in &node.any_of {
                collect_object(c, branch, value, view, depth + 1);
            }
        }
    }
    let composite = node.reference.is_some() || !node.all_of.is_empty() || !node.any_of.is_empty();
    match node.additional {
        Additional::Any | Additional::Schema(_) => view.open = true,
        Additional::Absent | Additional::Never if node.has_properties => view.described.push(id),
        // A bare object schema (or `{}`) says nothing about fields: open.
        Additional::Absent | Additional::Never if !composite => view.open = true,
        Additional::Absent | Additional::Never => {}
    }
}

/// Gathers the `items` schemas of the array schemas among `id` and what it references.
fn collect_items(c: &Compiled, id: NodeId, out: &mut Ids, open: &mut bool, depth: u32) {
    if depth > MAX_DEPTH {
        *open = true;
        return;
    }
    let node = c.node(id);
    if node.never || (node.types != 0 && node.types & T_ARRAY == 0) {
        return;
    }
    if let Some(target) = node.reference {
        collect_items(c, target, out, open, depth + 1);
    }
    for &branch in node.all_of.iter().chain(&node.any_of) {
        collect_items(c, branch, out, open, depth + 1);
    }
    match node.items {
        Some(items) => out.push(items),
        None if node.reference.is_none() && node.all_of.is_empty() && node.any_of.is_empty() => {
            *open = true;
        }
        None => {}
    }
}
