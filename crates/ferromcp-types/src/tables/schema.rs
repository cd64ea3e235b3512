//! The compiled form of a revision's schema document: an arena of nodes, built once per
//! revision from the generated JSON and shared by validation and result shaping.
//!
//! The interpreter covers the JSON Schema subset the MCP schema files use: `type` (one name or
//! a list), `properties`, `required`, `additionalProperties` (bool or schema), `items`, `enum`,
//! `const`, `anyOf`/`oneOf` (both checked as "at least one branch matches"), `allOf`, `$ref`,
//! `minimum`/`maximum` (and the exclusive forms), `minItems`/`maxItems`,
//! `minLength`/`maxLength`. Annotations such as `format` are dropped by the generator.

use std::sync::OnceLock;

use serde_json::Value;

use super::generated::VERSIONS;
use crate::ProtocolVersion;

/// How many `$ref`s in a row [`Compiled::constant_of`] follows.
const MAX_REF_CHAIN: u32 = 256;

/// Index of a node in [`Compiled::nodes`].
pub(super) type NodeId = u32;

pub(super) const T_NULL: u8 = 1;
pub(super) const T_BOOLEAN: u8 = 1 << 1;
pub(super) const T_INTEGER: u8 = 1 << 2;
pub(super) const T_NUMBER: u8 = 1 << 3;
pub(super) const T_STRING: u8 = 1 << 4;
pub(super) const T_ARRAY: u8 = 1 << 5;
pub(super) const T_OBJECT: u8 = 1 << 6;

pub(super) const TYPE_NAMES: [(&str, u8); 7] = [
    ("null", T_NULL),
    ("boolean", T_BOOLEAN),
    ("integer", T_INTEGER),
    ("number", T_NUMBER),
    ("string", T_STRING),
    ("array", T_ARRAY),
    ("object", T_OBJECT),
];

/// What an object schema says about properties it does not list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Additional {
    /// Not said: allowed (JSON Schema default); the object is still "described" for shaping.
    Absent,
    /// `true` or `{}`: explicitly open.
    Any,
    /// `false`: not allowed.
    Never,
    /// Extra properties must match this schema (an open map).
    Schema(NodeId),
}

/// One compiled schema.
#[derive(Debug)]
pub(super) struct Node {
    /// The `false` schema.
    pub(super) never: bool,
    /// Allowed JSON types as `T_*` bits; 0 means any.
    pub(super) types: u8,
    pub(super) reference: Option<NodeId>,
    pub(super) constant: Option<Value>,

    /// Whether the schema has a `properties` keyword (even an empty one).
    pub(super) has_properties: bool,
    /// Sorted by name.
    pub(super) properties: Vec<(Box<str>, NodeId)>,
    pub(super) required: Vec<Box<str>>,
    /// The properties whose schema pins a constant (following `$ref`s), such as
    /// `"type": "text"`, with that constant and whether the property is required: what tells
    /// the branches of a union apart. Computed once, after every node is built.
    pub(super) discriminators: Vec<(Box<str>, Value, bool)>,
    pub(super) additional: Additional,
    pub(super) items: Option<NodeId>,
    /// `anyOf` and `oneOf` branches.
    pub(super) any_of: Vec<NodeId>,
    pub(super) all_of: Vec<NodeId>,
    /// `enum` and the numeric bounds: few schemas have them, so they live out of line and a
    /// node stays small (the arena is built on the first request).
    pub(super) bounds: Option<Box<Bounds>>,
}

/// The keywords few schemas use.
#[derive(Debug, Default)]
pub(super) struct Bounds {
    pub(super) enumeration: Option<Vec<Value>>,
    pub(super) minimum: Option<(f64, bool)>,
    pub(super) maximum: Option<(f64, bool)>,
    pub(super) min_items: Option<u64>,
    pub(super) max_items: Option<u64>,
    pub(super) min_length: Option<u64>,
    pub(super) max_length: Option<u64>,
}

/// The bounds of a node without any.
static NO_BOUNDS: Bounds = Bounds {
    enumeration: None,
    minimum: None,
    maximum: None,
    min_items: None,
    max_items: None,
    min_length: None,
    max_length: None,
};

/// The schema that accepts everything.
const EMPTY: Node = Node {
    never: false,
    types: 0,
    reference: None,
    constant: None,
    has_properties: false,
    properties: Vec::new(),
    required: Vec::new(),
    discriminators: Vec::new(),
    additional: Additional::Absent,
    items: None,
    any_of: Vec::new(),
    all_of: Vec::new(),
    bounds: None,
};

/// [`EMPTY`] as a static, the answer for an out-of-range id.
static ANY: Node = EMPTY;

impl Node {
    /// The schema that accepts everything.
    pub(super) fn any() -> Node {
        EMPTY
    }

    /// `enum` and the numeric bounds (all absent for most nodes).
    pub(super) fn bounds(&self) -> &Bounds {
        self.bounds.as_deref().unwrap_or(&NO_BOUNDS)
    }

    /// The bounds, to set one.
    pub(super) fn bounds_mut(&mut self) -> &mut Bounds {
        self.bounds.get_or_insert_with(Box::default)
    }

    /// The schema of property `name`, if listed.
    pub(super) fn property(&self, name: &str) -> Option<NodeId> {
        self.properties
            .binary_search_by(|(k, _)| (**k).cmp(name))
            .ok()
            .and_then(|i| self.properties.get(i))
            .map(|(_, id)| *id)
    }
}

/// A revision's compiled schemas.
#[derive(Debug, Default)]
pub(super) struct Compiled {
    nodes: Vec<Node>,
    /// Params schema per method, sorted by method.
    params: Vec<(Box<str>, NodeId)>,
    /// Result schema per request method, sorted by method.
    results: Vec<(Box<str>, NodeId)>,
}

/// The compiled schemas of `version`, built on first use.
pub(super) fn compiled(version: ProtocolVersion) -> &'static Compiled {
    static CACHE: [OnceLock<Compiled>; ProtocolVersion::ALL.len()] =
        [const { OnceLock::new() }; ProtocolVersion::ALL.len()];
    let index = version as usize;
    CACHE[index].get_or_init(|| {
        // The document is generated from the vendored schemas and checked by tests; should it
        // ever fail to compile, every check passes rather than panicking at runtime.
        Compiled::compile(VERSIONS[index].schemas).unwrap_or_default()
    })
}

impl Compiled {
    /// Compiles one generated schema document.
    pub(super) fn compile(text: &str) -> Result<Compiled, String> {
        let doc = super::compile::compile(text)?;
        let mut compiled = Compiled {
            nodes: doc.nodes,
            params: doc.params,
            results: doc.results,
        };
        compiled.find_discriminators();
        Ok(compiled)
    }

    /// Fills every node's [`Node::discriminators`].
    fn find_discriminators(&mut self) {
        for i in 0..self.nodes.len() {
            let node = &self.nodes[i];
            let found: Vec<(Box<str>, Value, bool)> = node
                .properties
                .iter()
                .filter_map(|(name, prop)| {
                    let constant = self.constant_of(*prop, 0)?.clone();
                    let required = node.required.contains(name);
                    Some((name.clone(), constant, required))
                })
                .collect();
            self.nodes[i].discriminators = found;
        }
    }

    /// The constant a schema pins its value to, following references.
    pub(super) fn constant_of(&self, id: NodeId, depth: u32) -> Option<&Value> {
        let node = self.node(id);
        match (&node.constant, node.reference) {
            (Some(k), _) => Some(k),
            (None, Some(target)) if depth < MAX_REF_CHAIN => self.constant_of(target, depth + 1),
            _ => None,
        }
    }

    /// The node with this id.
    pub(super) fn node(&self, id: NodeId) -> &Node {
        self.nodes.get(id as usize).unwrap_or(&ANY)
    }

    /// The params schema of `method`, if this revision defines the method.
    pub(super) fn params(&self, method: &str) -> Option<NodeId> {
        lookup(&self.params, method)
    }

    /// The result schema of request `method`, if this revision defines it.
    pub(super) fn result(&self, method: &str) -> Option<NodeId> {
        lookup(&self.results, method)
    }
}

fn lookup(table: &[(Box<str>, NodeId)], method: &str) -> Option<NodeId> {
    table
        .binary_search_by(|(k, _)| (**k).cmp(method))
        .ok()
        .and_then(|i| table.get(i))
        .map(|(_, id)| *id)
}

/// Whether `value` is of one of the `types` (0 = any). An integer-valued float is an integer.
pub(super) fn type_matches(types: u8, value: &Value) -> bool {
    types == 0 || types & type_of(value) != 0
}

/// The `T_*` bits `value` satisfies.
fn type_of(value: &Value) -> u8 {
    match value {
        Value::Null => T_NULL,
        Value::Bool(_) => T_BOOLEAN,
        Value::Number(n) => {
            let integral = n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0);
            if integral {
                T_INTEGER | T_NUMBER
            } else {
                T_NUMBER
            }
        }
        Value::String(_) => T_STRING,
        Value::Array(_) => T_ARRAY,
        Value::Object(_) => T_OBJECT,
    }
}

/// The JSON type name of a value, for messages.
pub(super) fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// `"string or integer"` for a set of type bits.
pub(super) fn type_names(types: u8) -> String {
    let names: Vec<&str> = TYPE_NAMES
        .iter()
        .filter(|(_, bit)| types & bit != 0)
        .map(|(n, _)| *n)
        .collect();
    names.join(" or ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_revision_compiles() {
        for (v, data) in ProtocolVersion::ALL.iter().zip(VERSIONS) {
            let compiled = Compiled::compile(data.schemas)
                .unwrap_or_else(|e| panic!("{v} does not compile: {e}"));
            assert!(compiled.params("notifications/cancelled").is_some(), "{v}");
            for m in data.client_requests.iter().chain(data.server_requests) {
                assert!(compiled.result(m).is_some(), "{v} {m} has no result");
            }
        }
    }
}
