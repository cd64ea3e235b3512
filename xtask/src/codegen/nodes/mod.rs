//! Compiling one revision's sanitized schemas into the static node arena of
//! `ferromcp-types` (`tables/schema.rs` describes the runtime side), and the facts the runtime
//! uses to go fast: which properties pin a constant (`discriminators`), which nodes are only a
//! `$ref`, and how the branches of a union are told apart.
//!
//! Definitions take the first ids, in name order (a `$ref` is resolved by name, so cycles need
//! no special care); the nodes they are made of follow. Nodes that are not definitions are
//! shared when they are equal (every `{"type": "string"}` of a revision is one node), which
//! keeps the tables small; nodes are immutable, so sharing does not change any answer.

use std::collections::BTreeMap;

use serde_json::Value;

mod build;
mod facts;
mod literals;
#[cfg(test)]
mod tests;

pub(crate) use build::compile;
pub(crate) use literals::{TABLE_FIELDS, emit};

/// How many `$ref`s in a row a constant is looked up through (as the runtime used to).
const MAX_REF_CHAIN: u32 = 256;
/// How deep (through `$ref` and `allOf`) the union analysis looks for what tells a branch apart.
/// The runtime's depth limits leave room for at least this much (see `tables/shape.rs`).
pub(crate) const UNION_DEPTH: u32 = 16;

/// The type bit of `object` (its index in [`TYPES`]).
const OBJECT_BIT: u8 = 1 << 6;

/// The JSON type names and their `T_*` constants in `tables/schema.rs`.
const TYPES: [(&str, &str); 7] = [
    ("null", "T_NULL"),
    ("boolean", "T_BOOLEAN"),
    ("integer", "T_INTEGER"),
    ("number", "T_NUMBER"),
    ("string", "T_STRING"),
    ("array", "T_ARRAY"),
    ("object", "T_OBJECT"),
];

#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Additional {
    Absent,
    Any,
    Never,
    Schema(u32),
}

/// One schema, as the runtime's `Node` holds it.
#[derive(Debug, Clone)]
pub(crate) struct Node {
    pub(crate) never: bool,
    /// Bit `i` is `TYPES[i]`.
    pub(crate) types: u8,
    pub(crate) reference: Option<u32>,
    pub(crate) constant: Option<Value>,
    pub(crate) has_properties: bool,
    /// In name order (the order of the JSON object).
    pub(crate) properties: Vec<(String, u32)>,
    pub(crate) required: Vec<String>,
    pub(crate) additional: Additional,
    pub(crate) items: Option<u32>,
    pub(crate) any_of: Vec<u32>,
    pub(crate) all_of: Vec<u32>,
    pub(crate) enumeration: Option<Vec<Value>>,
    pub(crate) minimum: Option<(f64, bool)>,
    pub(crate) maximum: Option<(f64, bool)>,
    pub(crate) min_items: Option<u64>,
    pub(crate) max_items: Option<u64>,
    pub(crate) min_length: Option<u64>,
    pub(crate) max_length: Option<u64>,
    /// Whether any of the seven bounds above was written (even with an unusable value).
    pub(crate) has_bounds: bool,
}

impl Node {
    fn any() -> Node {
        Node {
            never: false,
            types: 0,
            reference: None,
            constant: None,
            has_properties: false,
            properties: Vec::new(),
            required: Vec::new(),
            additional: Additional::Absent,
            items: None,
            any_of: Vec::new(),
            all_of: Vec::new(),
            enumeration: None,
            minimum: None,
            maximum: None,
            min_items: None,
            max_items: None,
            min_length: None,
            max_length: None,
            has_bounds: false,
        }
    }

    /// Only a `type` (or nothing at all): checking a value is checking its type.
    pub(crate) fn is_type_only(&self) -> bool {
        self.reference.is_none()
            && !self.never
            && self.constant.is_none()
            && self.required.is_empty()
            && self.properties.is_empty()
            && matches!(self.additional, Additional::Absent | Additional::Any)
            && self.items.is_none()
            && self.any_of.is_empty()
            && self.all_of.is_empty()
            && !self.has_bounds
    }

    /// Only a `$ref`: checking the node is checking its target.
    pub(crate) fn is_pure_ref(&self) -> bool {
        self.reference.is_some()
            && !self.never
            && self.types == 0
            && self.constant.is_none()
            && !self.has_properties
            && self.properties.is_empty()
            && self.required.is_empty()
            && self.additional == Additional::Absent
            && self.items.is_none()
            && self.any_of.is_empty()
            && self.all_of.is_empty()
            && !self.has_bounds
    }
}

/// How the branches of a union are told apart (the runtime's `Union`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Union {
    /// `sure`: an object with `key` = `tags[i]` is plausible for branch `i`.
    Tag {
        key: String,
        tags: Vec<String>,
        sure: bool,
    },
    Required {
        keys: Vec<String>,
    },
}

/// One revision's compiled schemas.
#[derive(Debug)]
pub(crate) struct Arena {
    pub(crate) nodes: Vec<Node>,
    /// The definition name of the first nodes, by id.
    pub(crate) def_names: Vec<String>,
    pub(crate) params: BTreeMap<String, u32>,
    pub(crate) results: BTreeMap<String, u32>,
}
