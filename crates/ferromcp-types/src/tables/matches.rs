//! The hot path of validation: whether a value matches a schema, as a plain yes or no.
//!
//! It answers exactly what the plain walk of `validate.rs` (`Checker`, which also builds the
//! error report) answers, with shortcuts that never change the answer:
//!
//! - a node that is only a `$ref` is its target (followed in a loop, counting depth the same),
//!   and a node that only names a type checks the type;
//! - an object schema that lists no fields and does not restrict extra ones does not walk the
//!   object;
//! - required fields are counted while the fields are walked (each listed property knows
//!   whether it is required), so a complete object costs no lookups; only when the count falls
//!   short are the required fields looked up one by one, as the plain walk does;
//! - a union told apart by a tag checks only the branch the tag names (the others pin the tag
//!   to another string and certainly fail), and a union told apart by required properties
//!   skips the branches whose property the value lacks (they certainly fail). A value without
//!   the tag, or with an unknown one, tries every branch, as the plain walk does.
//!
//! The generator (`xtask/src/codegen/nodes/`) finds the `$ref`-only nodes and the unions;
//! the tests of `validate.rs` check its findings and compare this walk with the plain one.

use serde_json::{Map, Value};

use super::data::VersionData;
use super::schema::{Additional, Bounds, Key, Node, NodeId, Union, type_matches};
use super::validate::MAX_DEPTH;

/// Whether `value` matches node `id` (at nesting `depth`).
pub(super) fn matches(c: &VersionData, mut id: NodeId, value: &Value, mut depth: u32) -> bool {
    loop {
        if depth > MAX_DEPTH {
            return false;
        }
        let node = c.node(id);
        if node.type_only {
            return type_matches(node.types, value);
        }
        match node.reference {
            Some(target) if node.pure_ref => {
                id = target;
                depth += 1;
            }
            _ => return node_matches(c, node, value, depth),
        }
    }
}

/// The checks of one node that is more than a type or a `$ref` (kept out of [`matches()`](fn@matches), so
/// that the common light nodes cost no more than a call).
#[inline(never)]
fn node_matches(c: &VersionData, node: &Node, value: &Value, depth: u32) -> bool {
    if node.never {
        return false;
    }
    if let Some(target) = node.reference
        && !matches(c, target, value, depth + 1)
    {
        return false;
    }
    if !type_matches(node.types, value) {
        return false;
    }
    if node.constant.is_some_and(|k| !c.lit_matches(&k, value)) {
        return false;
    }
    if let Some(bounds) = c.bounds(node)
        && !within(c, bounds, value)
    {
        return false;
    }
    let fields_ok = match value {
        Value::Array(items) => match node.items {
            Some(item) => items.iter().all(|v| matches(c, item, v, depth + 1)),
            None => true,
        },
        Value::Object(map) => !node.inspects_fields() || object_matches(c, node, map, depth),
        _ => true,
    };
    // (Empty lists are tested on the node: resolving a range costs more than the test.)
    fields_ok
        && (node.all_of.is_empty()
            || c.all_of(node)
                .iter()
                .all(|&part| matches(c, part, value, depth + 1)))
        && (node.any_of.is_empty() || any_of_matches(c, node, value, depth))
}

/// `enum` and the numeric, length and size bounds.
pub(super) fn within(c: &VersionData, bounds: &Bounds, value: &Value) -> bool {
    if let Some(allowed) = c.enumeration(bounds)
        && !allowed.iter().any(|k| c.lit_matches(k, value))
    {
        return false;
    }
    match value {
        Value::Number(n) => {
            let Some(n) = n.as_f64() else { return true };
            let below = bounds
                .minimum
                .is_some_and(|(min, exclusive)| n < min || (exclusive && n == min));
            let above = bounds
                .maximum
                .is_some_and(|(max, exclusive)| n > max || (exclusive && n == max));
            !below && !above
        }
        // Counting characters walks the string: only when there is a bound to check.
        Value::String(s) if bounds.min_length.is_some() || bounds.max_length.is_some() => {
            let len = s.chars().count() as u64;
            in_range(len, bounds.min_length, bounds.max_length)
        }
        Value::Array(items) => in_range(items.len() as u64, bounds.min_items, bounds.max_items),
        _ => true,
    }
}

fn in_range(len: u64, min: Option<u64>, max: Option<u64>) -> bool {
    min.is_none_or(|min| len >= min) && max.is_none_or(|max| len <= max)
}

fn object_matches(c: &VersionData, node: &Node, map: &Map<String, Value>, depth: u32) -> bool {
    let mut required_seen = 0;
    let props = c.props(node);
    for (key, value) in map {
        let ok = match c.find_prop(props, &Key::new(key)) {
            Some(prop) => {
                required_seen += usize::from(prop.required);
                matches(c, prop.node, value, depth + 1)
            }
            None => match node.additional {
                Additional::Schema(extra) => matches(c, extra, value, depth + 1),
                Additional::Never => false,
                Additional::Absent | Additional::Any => true,
            },
        };
        if !ok {
            return false;
        }
    }
    // Every listed required property was met (the keys of a map are distinct), or look the
    // required fields up (a required name that is not a listed property, or a missing one).
    required_seen == node.required.len()
        || c.required(node).iter().all(|f| map.contains_key(c.text(f)))
}

fn any_of_matches(c: &VersionData, node: &Node, value: &Value, depth: u32) -> bool {
    let branches = c.any_of(node);
    if let (Some(union), Value::Object(map)) = (c.union(node), value) {
        match union {
            Union::Tag { .. } => {
                if let Some((branch, _)) = c.tagged_branch(node, map) {
                    return matches(c, branch, value, depth + 1);
                }
            }
            Union::Required { keys } if keys.len() == branches.len() => {
                return branches.iter().zip(c.names(*keys)).any(|(&b, key)| {
                    c.field(map, key).is_some() && matches(c, b, value, depth + 1)
                });
            }
            Union::Required { .. } => {}
        }
    }
    branches.iter().any(|&b| matches(c, b, value, depth + 1))
}
