//! One walk that shapes a result and checks it: the outcome of `shape.rs`'s walk followed by
//! `matches.rs`'s walk over the shaped value, visiting each field once.
//!
//! Shaping only removes fields (and never changes a scalar), and whether a value matches a
//! schema depends on nothing but the value, so a field can be shaped and checked in the same
//! visit once its object knows the field stays. The walk does so where the check is simple to
//! mirror exactly:
//!
//! - a node that only is a `$ref` is its target (the depth counted as `matches` counts it);
//! - an object schema without `$ref`, `allOf` or `anyOf` (`CallToolResult`, `TextContent`,
//!   ...): each field that shaping keeps is shaped and checked against its property schema
//!   in one visit, and the required fields are counted on the way, as `matches` counts them;
//! - a union told apart by a tag or by required properties, when the shaped object leaves it
//!   one branch to try (`CallToolResult | CreateTaskResult` at 2025-11-25, a content block):
//!   the walk goes on with that branch. The tag and the keys are read before the fields are
//!   shaped, and count only where shaping keeps them;
//! - an array schema with `items` and nothing composite: each item in one visit.
//!
//! Anything else (and every subtree once the answer is no) is shaped by the plain shaper and
//! then checked by `matches`: the two walks of before, for that subtree only. The tests
//! compare the outcome with the two walks on generated values for every result schema.

use serde_json::{Map, Value};

use super::data::VersionData;
use super::matches::{matches, within};
use super::schema::{Additional, Key, Name, Node, NodeId, T_OBJECT, Union, type_matches};
use super::shape::{Ids, META, RESULT_TYPE, Shaper, Walked, retain_defined};
use super::validate::MAX_DEPTH;

/// The shaping depth below which [`ShapeValidator::shared_tag`] may be used: the schemas shaping
/// gathers from the branch are then far from shaping's depth limit, as they would be from the
/// union.
const SHARED_DEPTH: u32 = 32;
/// How many `$ref`-only nodes [`ShapeValidator::shared_tag`] follows.
const SHARED_STEPS: usize = 8;

/// Shapes values like [`Shaper`] (with its shortcuts) and answers like [`matches()`](fn@matches) for the
/// shaped value.
pub(super) struct ShapeValidator<'a> {
    c: &'a VersionData,
    shaper: Shaper<'a>,
}

/// Where a union leads for an object (see [`ShapeValidator::branch`]).
enum Step {
    /// The only branch that can match: the union matches if and only if it does.
    Branch(NodeId),
    /// No branch can match.
    Fails,
    /// Not known here: the plain walks decide.
    Unknown,
}

impl<'a> ShapeValidator<'a> {
    pub(super) fn new(c: &'a VersionData) -> Self {
        ShapeValidator {
            c,
            shaper: Shaper { c, fast: true },
        }
    }

    /// Shapes the object `value` against the result schema `root` (as [`Shaper::object`]
    /// does at the root) and answers whether the shaped object matches `root`.
    pub(super) fn root(&self, root: NodeId, value: &mut Value) -> (bool, Walked) {
        self.object(&[root], root, value, 0, 0)
    }

    /// Shapes `value` with the shaping `schemas` at shaping depth `depth` (as
    /// [`Shaper::value`] does), and answers [`matches()`](fn@matches) for node `check` at depth
    /// `check_depth` on the shaped value.
    fn value(
        &self,
        schemas: &[NodeId],
        check: NodeId,
        value: &mut Value,
        depth: u32,
        check_depth: u32,
    ) -> bool {
        match value {
            Value::Object(_) => self.object(schemas, check, value, depth, check_depth).0,
            Value::Array(_) => self.array(schemas, check, value, depth, check_depth),
            // Shaping leaves scalars alone.
            _ => matches(self.c, check, value, check_depth),
        }
    }

    /// [`ShapeValidator::value`] for an object, with what shaping reports about `resultType`.
    fn object(
        &self,
        schemas: &[NodeId],
        check: NodeId,
        value: &mut Value,
        depth: u32,
        check_depth: u32,
    ) -> (bool, Walked) {
        let c = self.c;
        // Where shaping and checking start from one node (the root, an array's items), a tag
        // union on the way is read once for both.
        let shared;
        let (mut from, mut tag) = (schemas, None);
        let (mut node_id, mut node_depth) = (check, check_depth);
        if let ([only], Value::Object(map)) = (schemas, &*value)
            && *only == check
            && depth < SHARED_DEPTH
            && let Some((branch, branch_depth, key)) = self.shared_tag(check, map, check_depth)
        {
            shared = [branch];
            from = &shared;
            tag = Some(key);
            (node_id, node_depth) = (branch, branch_depth);
        }
        let described = match &*value {
            Value::Object(map) => self.shaper.described(from, map, depth),
            _ => None,
        };
        let Some(described) = described else {
            // Shaping leaves this object as it is.
            return (matches(c, check, value, check_depth), Walked::No);
        };
        let described = described.as_slice();
        if tag.is_some_and(|key| !kept(c, described, key)) {
            // Shaping drops the tag, so the check does not follow it: the plain walks.
            let walked = self.shape_fields(described, value, depth);
            return (matches(c, check, value, check_depth), walked);
        }
        let (mut check, mut check_depth) = (node_id, node_depth);
        loop {
            if check_depth > MAX_DEPTH {
                break;
            }
            let node = c.node(check);
            if node.type_only {
                break;
            }
            if node.pure_ref
                && let Some(target) = node.reference
            {
                check = target;
                check_depth += 1;
                continue;
            }
            if single(node) {
                return self.fields(described, check, node, value, depth, check_depth);
            }
            match self.branch(described, node, value) {
                Step::Branch(branch) => {
                    check = branch;
                    check_depth += 1;
                }
                Step::Fails => return (false, self.shape_fields(described, value, depth)),
                Step::Unknown => break,
            }
        }
        // The plain walks: shape the fields, then check the shaped object.
        let walked = self.shape_fields(described, value, depth);
        (matches(c, check, value, check_depth), walked)
    }

    /// From node `id`, through `$ref`-only nodes without a shaping view, the branch that a
    /// tag union's tag names in `map`, when shaping (`Shaper::collect_object`) and checking
    /// (`matches`) would both follow it and nothing else: the union node has no other keyword
    /// than a type that admits the object, and its tag is `sure` for shaping. Returns the
    /// branch, its depth for checking, and the tag's name (which shaping must keep).
    fn shared_tag(
        &self,
        mut id: NodeId,
        map: &Map<String, Value>,
        mut check_depth: u32,
    ) -> Option<(NodeId, u32, &'static Name)> {
        for _ in 0..SHARED_STEPS {
            let node = self.c.node(id);
            if check_depth > MAX_DEPTH || node.view.is_some() {
                return None;
            }
            if node.pure_ref
                && let Some(target) = node.reference
            {
                id = target;
                check_depth += 1;
                continue;
            }
            let Some(Union::Tag {
                key, sure: true, ..
            }) = self.c.union(node)
            else {
                return None;
            };
            let only_union = !node.never
                && node.reference.is_none()
                && node.all_of.is_empty()
                && !node.has_properties
                && node.properties.is_empty()
                && node.required.is_empty()
                && node.additional == Additional::Absent
                && (node.types == 0 || node.types & T_OBJECT != 0)
                && node.constant.is_none()
                && node.bounds.is_none();
            if !only_union {
                return None;
            }
            let (branch, _) = self.c.tagged_branch(node, map)?;
            return Some((branch, check_depth + 1, key));
        }
        None
    }

    /// The plain shaping of an object's fields.
    fn shape_fields(&self, described: &[NodeId], value: &mut Value, depth: u32) -> Walked {
        match value {
            Value::Object(map) => self.shaper.fields(described, map, depth),
            _ => Walked::No,
        }
    }

    /// Shapes and checks the fields of the object `value` against the shaping schemas
    /// `described` and the [`single`] node `node` (what `matches`'s `node_matches` and
    /// `object_matches` check, on the fields shaping keeps).
    fn fields(
        &self,
        described: &[NodeId],
        id: NodeId,
        node: &Node,
        value: &mut Value,
        depth: u32,
        check_depth: u32,
    ) -> (bool, Walked) {
        let c = self.c;
        // Type, constant and bounds do not depend on an object's fields.
        let head = head_matches(c, node, value);
        let Value::Object(map) = value else {
            return (false, Walked::No);
        };
        if !head || !node.inspects_fields() {
            return (head, self.shaper.fields(described, map, depth));
        }
        let mut ok = true;
        let mut required_seen = 0;
        let props = c.props(node);
        let mut undefined = false;
        let mut result_type_defined = false;
        let mut children = Ids::default();
        // The checked node is often one of the describing ones (`CallToolResult`,
        // `TextContent`): its property is then found while shaping looks.
        let own = described.iter().position(|&n| n == id);
        for (key, child) in map.iter_mut() {
            let name = Key::new(key);
            // `_meta` stays as it is; any other field stays if a describing schema defines
            // it, shaped by the schemas that do (as `Shaper::fields`).
            let meta = key == META;
            let mut found = None;
            if !meta {
                children.clear();
                for (i, &n) in described.iter().enumerate() {
                    if let Some(p) = c.property_entry(c.node(n), &name) {
                        children.push(p.node);
                        if own == Some(i) {
                            found = Some(p);
                        }
                    }
                }
                if children.is_empty() {
                    undefined = true;
                    continue;
                }
                result_type_defined |= key == RESULT_TYPE;
            }
            // The schema the kept field is checked against (as `object_matches`), once the
            // answer is still yes.
            if meta || own.is_none() {
                found = c.find_prop(props, &name);
            }
            let schema = if ok {
                match found {
                    Some(prop) => {
                        required_seen += usize::from(prop.required);
                        Some(prop.node)
                    }
                    None => match node.additional {
                        Additional::Schema(extra) => Some(extra),
                        Additional::Never => {
                            ok = false;
                            None
                        }
                        Additional::Absent | Additional::Any => None,
                    },
                }
            } else {
                None
            };
            let shapes = !meta && matches!(child, Value::Object(_) | Value::Array(_));
            match (schema, shapes) {
                (Some(schema), true) => {
                    ok = self.value(
                        children.as_slice(),
                        schema,
                        child,
                        depth + 1,
                        check_depth + 1,
                    );
                }
                (Some(schema), false) => ok = matches(c, schema, child, check_depth + 1),
                (None, true) => self.shaper.value(children.as_slice(), child, depth + 1),
                (None, false) => {}
            }
        }
        if undefined {
            retain_defined(c, described, map);
        }
        // Every listed required property was met, or look the required fields up (as
        // `object_matches`).
        ok = ok
            && (required_seen == node.required.len()
                || c.required(node).iter().all(|f| map.contains_key(c.text(f))));
        let walked = if result_type_defined {
            Walked::No
        } else {
            Walked::Without(RESULT_TYPE)
        };
        (ok, walked)
    }

    /// Where a union node leads for the object `value` once shaped (shaping keeps a field
    /// that one of `described` defines, and `_meta`): `matches`'s `any_of_matches` tries only
    /// the branch a kept tag names, or the branches whose required key is kept.
    fn branch(&self, described: &[NodeId], node: &Node, value: &Value) -> Step {
        let c = self.c;
        let Some(union) = c.union(node) else {
            return Step::Unknown;
        };
        let only_union = !node.never
            && node.reference.is_none()
            && node.all_of.is_empty()
            && !node.inspects_fields();
        let Value::Object(map) = value else {
            return Step::Unknown;
        };
        if !only_union {
            return Step::Unknown;
        }
        if !head_matches(c, node, value) {
            return Step::Fails;
        }
        let kept = |name: &Name| kept(c, described, name);
        match union {
            Union::Tag { key, .. } => match c.tagged_branch(node, map) {
                Some((branch, _)) if kept(key) => Step::Branch(branch),
                _ => Step::Unknown,
            },
            Union::Required { keys } if keys.len() == node.any_of.len() => {
                let mut found = None;
                for (&branch, key) in c.any_of(node).iter().zip(c.names(*keys)) {
                    if c.field(map, key).is_some() && kept(key) {
                        if found.is_some() {
                            return Step::Unknown;
                        }
                        found = Some(branch);
                    }
                }
                found.map_or(Step::Fails, Step::Branch)
            }
            Union::Required { .. } => Step::Unknown,
        }
    }

    /// [`ShapeValidator::value`] for an array.
    fn array(
        &self,
        schemas: &[NodeId],
        mut check: NodeId,
        value: &mut Value,
        depth: u32,
        mut check_depth: u32,
    ) -> bool {
        let c = self.c;
        // What `Shaper::value` gathers for the items.
        let mut item_schemas = Ids::default();
        let mut open = false;
        for &id in schemas {
            self.shaper
                .collect_items(id, &mut item_schemas, &mut open, depth);
        }
        if open || item_schemas.is_empty() {
            // Shaping leaves this array as it is.
            return matches(c, check, value, check_depth);
        }
        let item_schemas = item_schemas.as_slice();
        let item = loop {
            if check_depth > MAX_DEPTH {
                break None;
            }
            let node = c.node(check);
            if node.pure_ref
                && let Some(target) = node.reference
            {
                check = target;
                check_depth += 1;
                continue;
            }
            break node
                .items
                .filter(|_| single(node))
                .map(|item| (item, head_matches(c, node, value)));
        };
        let Value::Array(items) = value else {
            return false;
        };
        match item {
            Some((item, head)) => {
                let mut ok = head;
                for v in items.iter_mut() {
                    if ok {
                        ok = self.value(item_schemas, item, v, depth + 1, check_depth + 1);
                    } else {
                        self.shaper.value(item_schemas, v, depth + 1);
                    }
                }
                ok
            }
            None => {
                for v in items.iter_mut() {
                    self.shaper.value(item_schemas, v, depth + 1);
                }
                matches(c, check, value, check_depth)
            }
        }
    }
}

/// Whether shaping with the describing schemas `described` keeps a field `name`.
fn kept(c: &VersionData, described: &[NodeId], name: &Name) -> bool {
    let key = c.key(name);
    key.text == META
        || described
            .iter()
            .any(|&n| c.property(c.node(n), &key).is_some())
}

/// A node `matches` checks by its own keywords alone: no `$ref` besides, no `allOf`, no
/// `anyOf`, not `false`.
fn single(node: &Node) -> bool {
    !node.never && node.reference.is_none() && node.all_of.is_empty() && node.any_of.is_empty()
}

/// The checks of a node that do not look into an object's fields or an array's items: type,
/// constant, `enum` and bounds (which shaping cannot change).
#[inline(always)]
fn head_matches(c: &VersionData, node: &Node, value: &Value) -> bool {
    type_matches(node.types, value)
        && ((node.constant.is_none() && node.bounds.is_none()) || pinned_matches(c, node, value))
}

/// The constant and bounds part of [`head_matches`] (few nodes have either).
#[inline(never)]
fn pinned_matches(c: &VersionData, node: &Node, value: &Value) -> bool {
    node.constant.is_none_or(|k| c.lit_matches(&k, value))
        && c.bounds(node).is_none_or(|b| within(c, b, value))
}
