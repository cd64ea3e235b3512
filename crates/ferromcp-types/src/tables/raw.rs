//! The hot path of validation on JSON text: whether the text of one valid JSON value matches a
//! schema, as a plain yes or no, without building a `serde_json::Value` (issue 17 point 4:
//! params stay raw until the handler's typed deserialization).
//!
//! It answers what [`matches::matches`](super::matches::matches) answers for the value the text
//! parses to, walking the text instead of a tree: a union or an `allOf` reads the same text once
//! per branch, an object's fields are found by reading its members, and scalars are read where
//! they are checked (strings without escapes are compared in place). Whenever the text is not
//! what the walk expects (it never happens for text a `RawJson` holds) the answer is no, and the
//! caller falls back to the walk over a parsed value, which also builds the error report: a
//! false "no" costs time, never a wrong answer. The tests compare the two walks.

use serde_json::Value;

use super::data::VersionData;
use super::matches::within;
use super::schema::{
    Additional, Key, Lit, Node, NodeId, T_ARRAY, T_BOOLEAN, T_INTEGER, T_NULL, T_NUMBER, T_OBJECT,
    T_STRING, Union,
};
use super::validate::MAX_DEPTH;
use super::walk::{ArrayItems, ObjectMembers, unquote};

/// Whether the JSON text `text` (one value, no whitespace around it) matches node `id`.
pub(super) fn matches(c: &VersionData, mut id: NodeId, text: &str, mut depth: u32) -> bool {
    loop {
        if depth > MAX_DEPTH {
            return false;
        }
        let node = c.node(id);
        if node.type_only {
            return type_bits(text).is_some_and(|bits| node.types == 0 || node.types & bits != 0);
        }
        match node.reference {
            Some(target) if node.pure_ref => {
                id = target;
                depth += 1;
            }
            _ => return node_matches(c, node, text, depth),
        }
    }
}

/// The `T_*` bits the value `text` satisfies (as `schema::type_of` says of its value).
fn type_bits(text: &str) -> Option<u8> {
    Some(match text.as_bytes().first()? {
        b'{' => T_OBJECT,
        b'[' => T_ARRAY,
        b'"' => T_STRING,
        b'n' => T_NULL,
        b't' | b'f' => T_BOOLEAN,
        // An integer that fits an i64 (no fraction, no exponent, at most 18 digits): what
        // serde_json reads as one, without reading it.
        _ if short_integer(text) => T_INTEGER | T_NUMBER,
        _ => match serde_json::from_str::<Value>(text).ok()? {
            Value::Number(n) => {
                let integral =
                    n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0);
                if integral {
                    T_INTEGER | T_NUMBER
                } else {
                    T_NUMBER
                }
            }
            _ => return None,
        },
    })
}

/// Whether `text` is `-?[0-9]{1,18}`.
fn short_integer(text: &str) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text);
    !digits.is_empty() && digits.len() <= 18 && digits.bytes().all(|b| b.is_ascii_digit())
}

#[inline(never)]
fn node_matches(c: &VersionData, node: &Node, text: &str, depth: u32) -> bool {
    if node.never {
        return false;
    }
    if let Some(target) = node.reference
        && !matches(c, target, text, depth + 1)
    {
        return false;
    }
    let Some(bits) = type_bits(text) else {
        return false;
    };
    if node.types != 0 && node.types & bits == 0 {
        return false;
    }
    let bounds = c.bounds(node);
    let own_ok = match text.as_bytes().first() {
        // A constant or an `enum` member is a scalar: no container equals one.
        Some(b'{') => {
            node.constant.is_none()
                && bounds.is_none_or(|b| c.enumeration(b).is_none())
                && (!node.inspects_fields() || object_matches(c, node, text, depth))
        }
        Some(b'[') => {
            let mut items = ArrayItems::new(text);
            let mut count = 0u64;
            let mut ok = node.constant.is_none();
            while ok && let Some(item) = items.next() {
                count += 1;
                ok = node.items.is_none_or(|id| matches(c, id, item, depth + 1));
            }
            ok && !items.is_broken()
                && bounds.is_none_or(|b| {
                    c.enumeration(b).is_none()
                        && b.min_items.is_none_or(|min| count >= min)
                        && b.max_items.is_none_or(|max| count <= max)
                })
        }
        Some(b'"') => match unquote(text) {
            Some(s) => {
                let is = |lit: &Lit| matches!(lit, Lit::Str(k) if c.text(k) == s.as_ref());
                node.constant.is_none_or(|k| is(&k))
                    && bounds.is_none_or(|b| {
                        c.enumeration(b)
                            .is_none_or(|allowed| allowed.iter().any(is))
                            && (b.min_length.is_none() && b.max_length.is_none() || {
                                let len = s.chars().count() as u64;
                                b.min_length.is_none_or(|min| len >= min)
                                    && b.max_length.is_none_or(|max| len <= max)
                            })
                    })
            }
            None => false,
        },
        // null, a boolean or a number: read only when there is something to compare it with
        // (its value costs no allocation).
        _ if node.constant.is_none() && bounds.is_none() => true,
        _ => match serde_json::from_str::<Value>(text) {
            Ok(value) => {
                node.constant.is_none_or(|k| c.lit_matches(&k, &value))
                    && bounds.is_none_or(|b| within(c, b, &value))
            }
            Err(_) => false,
        },
    };
    own_ok
        && (node.all_of.is_empty()
            || c.all_of(node)
                .iter()
                .all(|&part| matches(c, part, text, depth + 1)))
        && (node.any_of.is_empty() || any_of_matches(c, node, text, depth))
}

fn object_matches(c: &VersionData, node: &Node, text: &str, depth: u32) -> bool {
    let mut required_seen = 0;
    let props = c.props(node);
    let mut members = ObjectMembers::new(text);
    for (key, value) in members.by_ref() {
        let ok = match c.find_prop(props, &Key::new(&key)) {
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
    !members.is_broken()
        && (required_seen == node.required.len()
            || c.required(node)
                .iter()
                .all(|f| field(text, c.text(f)).is_some()))
}

fn any_of_matches(c: &VersionData, node: &Node, text: &str, depth: u32) -> bool {
    let branches = c.any_of(node);
    if text.starts_with('{')
        && let Some(union) = c.union(node)
    {
        match union {
            Union::Tag { key, tags, .. } => {
                let tag = field(text, c.text(key))
                    .filter(|v| v.starts_with('"'))
                    .and_then(unquote);
                if let Some(tag) = tag {
                    let tag = Key::new(&tag);
                    let branch = c
                        .names(*tags)
                        .iter()
                        .position(|t| t.is(&tag, c.strings))
                        .and_then(|i| branches.get(i));
                    if let Some(&branch) = branch {
                        return matches(c, branch, text, depth + 1);
                    }
                }
            }
            Union::Required { keys } if keys.len() == branches.len() => {
                return branches.iter().zip(c.names(*keys)).any(|(&b, key)| {
                    field(text, c.text(key)).is_some() && matches(c, b, text, depth + 1)
                });
            }
            Union::Required { .. } => {}
        }
    }
    branches.iter().any(|&b| matches(c, b, text, depth + 1))
}

/// The text of member `name` of the object text `text`.
fn field<'a>(text: &'a str, name: &str) -> Option<&'a str> {
    let mut members = ObjectMembers::new(text);
    members.find(|(key, _)| key == name).map(|(_, value)| value)
}
