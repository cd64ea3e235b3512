//! Per-revision result shaping: drop what the revision's result type does not define.

use serde_json::map::Entry;
use serde_json::{Map, Value};

use super::data::VersionData;
use super::schema::{Additional, Key, NodeId, T_ARRAY, T_OBJECT, VIEW_DEPTH, compiled};
use super::validate::{Subject, plausible};
use crate::ProtocolVersion;

/// Nesting depth beyond which shaping leaves values alone.
const MAX_DEPTH: u32 = 128;

/// The field every result carries, whose value is kept untouched at every level.
pub(super) const META: &str = "_meta";
/// The 2026-07-28 result discriminator.
pub(super) const RESULT_TYPE: &str = "resultType";
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
    shape(compiled(v).result(method), v, result);
}

/// [`shape_result`] with the method's result schema `root` (`None`: the revision does not
/// define the method).
pub(super) fn shape(root: Option<NodeId>, v: ProtocolVersion, result: &mut Map<String, Value>) {
    let Some(root) = root else {
        if v >= ProtocolVersion::V2026_07_28 {
            set_result_type(result);
        }
        return;
    };
    let walked = Shaper {
        c: compiled(v),
        fast: true,
    }
    .object(&[root], result, 0);
    finish(v, walked, result);
}

/// What shaping does after the walk: at 2026-07-28 `resultType` defaults to `"complete"`;
/// before, it is removed (unless the walk already did). Returns whether this changed `result`.
pub(super) fn finish(v: ProtocolVersion, walked: Walked, result: &mut Map<String, Value>) -> bool {
    if v >= ProtocolVersion::V2026_07_28 {
        set_result_type(result)
    } else if walked != Walked::Without(RESULT_TYPE) {
        result.remove(RESULT_TYPE).is_some()
    } else {
        false
    }
}

/// Sets `resultType` to `"complete"` unless it is set; returns whether it was not.
fn set_result_type(result: &mut Map<String, Value>) -> bool {
    match result.entry(RESULT_TYPE) {
        Entry::Occupied(_) => false,
        Entry::Vacant(slot) => {
            slot.insert(Value::String(COMPLETE.to_owned()));
            true
        }
    }
}

/// Node ids, the first [`Ids::INLINE`] without allocating: shaping a usual result touches the
/// heap only for what it removes.
#[derive(Default)]
pub(super) struct Ids {
    len: usize,
    inline: [NodeId; Ids::INLINE],
    /// Every id, once there are more than fit inline (`len` tells which holds them).
    spilled: Vec<NodeId>,
}

impl Ids {
    const INLINE: usize = 8;

    pub(super) fn push(&mut self, id: NodeId) {
        match self.inline.get_mut(self.len) {
            Some(slot) => *slot = id,
            None => {
                if self.spilled.is_empty() {
                    self.spilled.extend_from_slice(&self.inline);
                }
                self.spilled.push(id);
            }
        }
        self.len += 1;
    }

    pub(super) fn clear(&mut self) {
        self.len = 0;
        self.spilled.clear();
    }

    pub(super) fn as_slice(&self) -> &[NodeId] {
        self.inline.get(..self.len).unwrap_or(&self.spilled)
    }

    pub(super) fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// Drops the fields of `map` that none of the schemas `described` defines (`_meta` stays).
pub(super) fn retain_defined(c: &VersionData, described: &[NodeId], map: &mut Map<String, Value>) {
    map.retain(|key, _| {
        let name = Key::new(key);
        key == META
            || described
                .iter()
                .any(|&n| c.property(c.node(n), &name).is_some())
    });
}

/// The schemas that describe an object, as [`Shaper::described`] finds them.
pub(super) enum Described {
    /// A generated view's list.
    Known(&'static [NodeId]),
    /// Gathered by walking the schemas.
    Gathered(Ids),
}

impl Described {
    pub(super) fn as_slice(&self) -> &[NodeId] {
        match self {
            Described::Known(ids) => ids,
            Described::Gathered(ids) => ids.as_slice(),
        }
    }
}

/// What the plain walk gathers from node `id` for object `map`: the describing schemas and
/// whether one leaves it open (for the tests of the generated [`super::schema::View`]s).
#[cfg(test)]
pub(super) fn gathered(
    c: &VersionData,
    id: NodeId,
    map: &Map<String, Value>,
) -> (Vec<NodeId>, bool) {
    let mut view = ObjectView::default();
    Shaper { c, fast: false }.collect_object(id, map, &mut view, 0);
    (view.described.as_slice().to_vec(), view.open)
}

/// What [`Shaper::object`] knows about the object's fields afterwards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Walked {
    /// Nothing (it did not walk them, or kept the field).
    No,
    /// It walked them, and the object has no field of this name (any it had is removed).
    Without(&'static str),
}

/// What the applicable schemas say about an object value.
#[derive(Default)]
struct ObjectView {
    /// Object schemas with explicit properties that apply.
    described: Ids,
    /// Some applicable schema leaves the object open.
    open: bool,
}

/// Shapes values against one revision's schemas. With `fast` it takes shortcuts that give the
/// same result: a node that is only a `$ref` is its target, and a union told apart by a tag
/// (see [`super::schema::Union`]) looks only at the branch the value names. Without `fast` it
/// is the plain walk, which the tests compare against.
pub(super) struct Shaper<'a> {
    pub(super) c: &'a VersionData,
    pub(super) fast: bool,
}

impl Shaper<'_> {
    /// Shapes an object. What it reports lets [`shape_result`] skip looking `resultType` up
    /// again.
    pub(super) fn object(
        &self,
        schemas: &[NodeId],
        map: &mut Map<String, Value>,
        depth: u32,
    ) -> Walked {
        match self.described(schemas, map, depth) {
            Some(described) => self.fields(described.as_slice(), map, depth),
            None => Walked::No,
        }
    }

    /// The object schemas with explicit properties that describe `map` (reached from
    /// `schemas`), or `None` when shaping leaves the object as it is (too deep, open, or not
    /// described).
    pub(super) fn described(
        &self,
        schemas: &[NodeId],
        map: &Map<String, Value>,
        depth: u32,
    ) -> Option<Described> {
        if depth > MAX_DEPTH {
            return None;
        }
        // One schema whose view is known (a result root, a tagged branch): the view itself,
        // as `collect_object` would copy it.
        if self.fast
            && let [id] = schemas
            && let Some(known) = self.c.view(self.c.node(*id))
            && depth + VIEW_DEPTH < MAX_DEPTH
        {
            return (!known.open && !known.described.is_empty())
                .then_some(Described::Known(self.c.described(known)));
        }
        let mut view = ObjectView::default();
        for &id in schemas {
            self.collect_object(id, map, &mut view, depth);
        }
        (!view.open && !view.described.is_empty()).then_some(Described::Gathered(view.described))
    }

    /// Shapes the fields of an object that the schemas `described` describe (what
    /// [`Shaper::described`] found).
    pub(super) fn fields(
        &self,
        described: &[NodeId],
        map: &mut Map<String, Value>,
        depth: u32,
    ) -> Walked {
        let c = self.c;
        // Shape the fields the schemas define, then drop the others (if any: `retain` walks
        // the whole map, so it runs only when something goes).
        let mut undefined = false;
        let mut result_type_defined = false;
        let mut children = Ids::default();
        for (key, child) in map.iter_mut() {
            if key == META {
                continue;
            }
            children.clear();
            let name = Key::new(key);
            for &n in described {
                if let Some(p) = c.property(c.node(n), &name) {
                    children.push(p);
                }
            }
            if children.is_empty() {
                undefined = true;
                continue;
            }
            result_type_defined |= key == RESULT_TYPE;
            // Scalars have nothing to shape.
            if matches!(child, Value::Object(_) | Value::Array(_)) {
                self.value(children.as_slice(), child, depth + 1);
            }
        }
        if undefined {
            retain_defined(c, described, map);
        }
        if result_type_defined {
            Walked::No
        } else {
            Walked::Without(RESULT_TYPE)
        }
    }

    pub(super) fn value(&self, schemas: &[NodeId], value: &mut Value, depth: u32) {
        match value {
            Value::Object(map) => {
                self.object(schemas, map, depth);
            }
            Value::Array(items) => {
                let mut item_schemas = Ids::default();
                let mut open = false;
                for &id in schemas {
                    self.collect_items(id, &mut item_schemas, &mut open, depth);
                }
                if open || item_schemas.is_empty() {
                    return;
                }
                for item in items {
                    self.value(item_schemas.as_slice(), item, depth + 1);
                }
            }
            _ => {}
        }
    }

    /// Gathers the object schemas that apply to the object `map` through `$ref`, `allOf` and
    /// the plausible branches of `anyOf` (all branches when none is plausible).
    fn collect_object(
        &self,
        id: NodeId,
        map: &Map<String, Value>,
        view: &mut ObjectView,
        depth: u32,
    ) {
        if depth > MAX_DEPTH {
            view.open = true;
            return;
        }
        let c = self.c;
        let node = c.node(id);
        if self.fast {
            // What the plain walk below would gather, known in advance.
            if let Some(known) = c.view(node)
                && depth + VIEW_DEPTH < MAX_DEPTH
            {
                for &id in c.described(known) {
                    view.described.push(id);
                }
                view.open |= known.open;
                return;
            }
            if node.pure_ref
                && let Some(target) = node.reference
            {
                return self.collect_object(target, map, view, depth + 1);
            }
        }
        if node.never || (node.types != 0 && node.types & T_OBJECT == 0) {
            return;
        }
        if let Some(target) = node.reference {
            self.collect_object(target, map, view, depth + 1);
        }
        if !node.all_of.is_empty() {
            for &part in c.all_of(node) {
                self.collect_object(part, map, view, depth + 1);
            }
        }
        if !node.any_of.is_empty() {
            // The branch the tag names is the only one that can be plausible. (The depths
            // here stay far below `plausible`'s limit, so its answers are exact.)
            let tagged = self.fast.then(|| c.tagged_branch(node, map)).flatten();
            match tagged {
                Some((branch, sure))
                    if sure || plausible(c, branch, Subject::Object(map), depth + 1) =>
                {
                    self.collect_object(branch, map, view, depth + 1);
                }
                _ => {
                    // The plausible branches, or every branch when none is.
                    let mut any_fits = false;
                    for &branch in c.any_of(node) {
                        if plausible(c, branch, Subject::Object(map), depth + 1) {
                            any_fits = true;
                            self.collect_object(branch, map, view, depth + 1);
                        }
                    }
                    if !any_fits {
                        for &branch in c.any_of(node) {
                            self.collect_object(branch, map, view, depth + 1);
                        }
                    }
                }
            }
        }
        let composite =
            node.reference.is_some() || !node.all_of.is_empty() || !node.any_of.is_empty();
        match node.additional {
            Additional::Any | Additional::Schema(_) => view.open = true,
            Additional::Absent | Additional::Never if node.has_properties => {
                view.described.push(id)
            }
            // A bare object schema (or `{}`) says nothing about fields: open.
            Additional::Absent | Additional::Never if !composite => view.open = true,
            Additional::Absent | Additional::Never => {}
        }
    }

    /// Gathers the `items` schemas of the array schemas among `id` and what it references.
    pub(super) fn collect_items(&self, id: NodeId, out: &mut Ids, open: &mut bool, depth: u32) {
        if depth > MAX_DEPTH {
            *open = true;
            return;
        }
        let node = self.c.node(id);
        if self.fast
            && node.pure_ref
            && let Some(target) = node.reference
        {
            return self.collect_items(target, out, open, depth + 1);
        }
        if node.never || (node.types != 0 && node.types & T_ARRAY == 0) {
            return;
        }
        if let Some(target) = node.reference {
            self.collect_items(target, out, open, depth + 1);
        }
        if !node.all_of.is_empty() || !node.any_of.is_empty() {
            for &branch in self.c.all_of(node).iter().chain(self.c.any_of(node)) {
                self.collect_items(branch, out, open, depth + 1);
            }
        }
        match node.items {
            Some(items) => out.push(items),
            None if node.reference.is_none()
                && node.all_of.is_empty()
                && node.any_of.is_empty() =>
            {
                *open = true;
            }
            None => {}
        }
    }
}
