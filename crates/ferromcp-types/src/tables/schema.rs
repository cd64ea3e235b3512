//! The compiled form of a revision's schema document: an arena of nodes, built once per
//! revision from the generated JSON and shared by validation and result shaping.
//!
//! The interpreter covers the JSON Schema subset the MCP schema files use: `type` (one name or
//! a list), `properties`, `required`, `additionalProperties` (bool or schema), `items`, `enum`,
//! `const`, `anyOf`/`oneOf` (both checked as "at least one branch matches"), `allOf`, `$ref`,
//! `minimum`/`maximum` (and the exclusive forms), `minItems`/`maxItems`,
//! `minLength`/`maxLength`. Annotations such as `format` are dropped by the generator.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::OnceLock;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

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

const TYPE_NAMES: [(&str, u8); 7] = [
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
    pub(super) enumeration: Option<Vec<Value>>,
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
    pub(super) minimum: Option<(f64, bool)>,
    pub(super) maximum: Option<(f64, bool)>,
    pub(super) min_items: Option<u64>,
    pub(super) max_items: Option<u64>,
    pub(super) min_length: Option<u64>,
    pub(super) max_length: Option<u64>,
}

/// The schema that accepts everything.
const EMPTY: Node = Node {
    never: false,
    types: 0,
    reference: None,
    constant: None,
    enumeration: None,
    has_properties: false,
    properties: Vec::new(),
    required: Vec::new(),
    discriminators: Vec::new(),
    additional: Additional::Absent,
    items: None,
    any_of: Vec::new(),
    all_of: Vec::new(),
    minimum: None,
    maximum: None,
    min_items: None,
    max_items: None,
    min_length: None,
    max_length: None,
};

/// [`EMPTY`] as a static, the answer for an out-of-range id.
static ANY: Node = EMPTY;

impl Node {
    fn any() -> Node {
        EMPTY
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
        // A borrowed tree with objects as vectors: compiling is on the first request's path
        // (cold start), and a `Value` tree of maps costs several times more to build and drop.
        let doc: Json<'_> = serde_json::from_str(text).map_err(|e| e.to_string())?;
        let section = |name: &str| {
            doc.get(name)
                .and_then(Json::as_object)
                .ok_or_else(|| format!("missing section {name:?}"))
        };
        let defs = section("defs")?;
        let mut builder = Builder {
            nodes: Vec::with_capacity(1024),
            ids: HashMap::with_capacity(defs.len()),
        };
        for (name, _) in defs {
            let id = builder.push(Node::any())?;
            builder.ids.insert(name, id);
        }
        for (name, schema) in defs {
            let id = builder.ids.get(&**name).copied().unwrap_or_default();
            let node = builder.build(schema)?;
            if let Some(slot) = builder.nodes.get_mut(id as usize) {
                *slot = node;
            }
        }
        let params = builder.table(section("params")?)?;
        let results = builder.table(section("results")?)?;
        let mut nodes = builder.nodes;
        nodes.shrink_to_fit();
        let mut compiled = Compiled {
            nodes,
            params,
            results,
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

struct Builder<'a> {
    nodes: Vec<Node>,
    ids: HashMap<&'a str, NodeId>,
}

impl Builder<'_> {
    fn push(&mut self, node: Node) -> Result<NodeId, String> {
        let id = NodeId::try_from(self.nodes.len()).map_err(|_| "too many schema nodes")?;
        self.nodes.push(node);
        Ok(id)
    }

    fn sub(&mut self, schema: &Json<'_>) -> Result<NodeId, String> {
        let node = self.build(schema)?;
        self.push(node)
    }

    fn table(
        &mut self,
        map: &[(Cow<'_, str>, Json<'_>)],
    ) -> Result<Vec<(Box<str>, NodeId)>, String> {
        let mut table: Vec<(Box<str>, NodeId)> = Vec::with_capacity(map.len());
        for (method, schema) in map {
            table.push((Box::from(&**method), self.sub(schema)?));
        }
        table.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(table)
    }

    fn list(&mut self, value: &Json<'_>) -> Result<Vec<NodeId>, String> {
        let Json::Array(items) = value else {
            return Err("expected an array of schemas".into());
        };
        items.iter().map(|s| self.sub(s)).collect()
    }

    fn build(&mut self, schema: &Json<'_>) -> Result<Node, String> {
        let obj = match schema {
            Json::Bool(true) => return Ok(Node::any()),
            Json::Bool(false) => {
                return Ok(Node {
                    never: true,
                    ..Node::any()
                });
            }
            Json::Object(obj) => obj,
            other => return Err(format!("not a schema: {}", other.to_value())),
        };
        let mut node = Node::any();
        for (key, value) in obj {
            match &**key {
                "type" => node.types = type_bits(value)?,
                "$ref" => {
                    let name = value.as_str().ok_or("$ref is not a string")?;
                    let id = self
                        .ids
                        .get(name)
                        .ok_or_else(|| format!("dangling $ref {name}"))?;
                    node.reference = Some(*id);
                }
                "const" => node.constant = Some(value.to_value()),
                "enum" => {
                    let Json::Array(items) = value else {
                        return Err("enum is not an array".into());
                    };
                    node.enumeration = Some(items.iter().map(Json::to_value).collect());
                }
                "properties" => {
                    let props = value.as_object().ok_or("properties is not an object")?;
                    node.has_properties = true;
                    node.properties.reserve_exact(props.len());
                    for (name, sub) in props {
                        let id = self.sub(sub)?;
                        node.properties.push((Box::from(&**name), id));
                    }
                    node.properties.sort_by(|a, b| a.0.cmp(&b.0));
                }
                "required" => {
                    let Json::Array(names) = value else {
                        return Err("required is not an array".into());
                    };
                    node.required = names
                        .iter()
                        .filter_map(Json::as_str)
                        .map(Box::from)
                        .collect();
                }
                "additionalProperties" => {
                    node.additional = match value {
                        Json::Bool(true) => Additional::Any,
                        Json::Bool(false) => Additional::Never,
                        Json::Object(o) if o.is_empty() => Additional::Any,
                        other => Additional::Schema(self.sub(other)?),
                    };
                }
                "items" => node.items = Some(self.sub(value)?),
                "anyOf" | "oneOf" => {
                    let branches = self.list(value)?;
                    node.any_of.extend(branches);
                }
                "allOf" => node.all_of = self.list(value)?,
                "minimum" => node.minimum = value.as_f64().map(|m| (m, false)),
                "exclusiveMinimum" => node.minimum = value.as_f64().map(|m| (m, true)),
                "maximum" => node.maximum = value.as_f64().map(|m| (m, false)),
                "exclusiveMaximum" => node.maximum = value.as_f64().map(|m| (m, true)),
                "minItems" => node.min_items = value.as_u64(),
                "maxItems" => node.max_items = value.as_u64(),
                "minLength" => node.min_length = value.as_u64(),
                "maxLength" => node.max_length = value.as_u64(),
                // Annotations and keywords without effect here (`uniqueItems` is not enforced).
                _ => {}
            }
        }
        Ok(node)
    }
}

/// A JSON document borrowed from its text, objects as vectors in document order: what the
/// compiler walks (once per revision) instead of a [`Value`].
#[derive(Debug)]
enum Json<'a> {
    Null,
    Bool(bool),
    Number(serde_json::Number),
    Str(Cow<'a, str>),
    Array(Vec<Json<'a>>),
    Object(Vec<(Cow<'a, str>, Json<'a>)>),
}

impl<'a> Json<'a> {
    fn get(&self, key: &str) -> Option<&Json<'a>> {
        self.as_object()?
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    }

    fn as_object(&self) -> Option<&[(Cow<'a, str>, Json<'a>)]> {
        match self {
            Json::Object(entries) => Some(entries),
            _ => None,
        }
    }

    fn as_str(&self) -> Option<&str> {
        match self {
            Json::Str(s) => Some(s),
            _ => None,
        }
    }

    fn as_f64(&self) -> Option<f64> {
        match self {
            Json::Number(n) => n.as_f64(),
            _ => None,
        }
    }

    fn as_u64(&self) -> Option<u64> {
        match self {
            Json::Number(n) => n.as_u64(),
            _ => None,
        }
    }

    /// The same JSON as a [`Value`] (for constants and enumerations, which are compared with
    /// values).
    fn to_value(&self) -> Value {
        match self {
            Json::Null => Value::Null,
            Json::Bool(b) => Value::Bool(*b),
            Json::Number(n) => Value::Number(n.clone()),
            Json::Str(s) => Value::String(s.clone().into_owned()),
            Json::Array(items) => Value::Array(items.iter().map(Json::to_value).collect()),
            Json::Object(entries) => Value::Object(
                entries
                    .iter()
                    .map(|(k, v)| (k.clone().into_owned(), v.to_value()))
                    .collect::<Map<String, Value>>(),
            ),
        }
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Json<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Json<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("JSON")
            }
            fn visit_unit<E: de::Error>(self) -> Result<Json<'de>, E> {
                Ok(Json::Null)
            }
            fn visit_bool<E: de::Error>(self, b: bool) -> Result<Json<'de>, E> {
                Ok(Json::Bool(b))
            }
            fn visit_i64<E: de::Error>(self, n: i64) -> Result<Json<'de>, E> {
                Ok(Json::Number(n.into()))
            }
            fn visit_u64<E: de::Error>(self, n: u64) -> Result<Json<'de>, E> {
                Ok(Json::Number(n.into()))
            }
            fn visit_f64<E: de::Error>(self, n: f64) -> Result<Json<'de>, E> {
                serde_json::Number::from_f64(n)
                    .map(Json::Number)
                    .ok_or_else(|| E::custom("a number that is not finite"))
            }
            fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Json<'de>, E> {
                Ok(Json::Str(Cow::Borrowed(s)))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Json<'de>, E> {
                Ok(Json::Str(Cow::Owned(s.to_owned())))
            }
            fn visit_string<E: de::Error>(self, s: String) -> Result<Json<'de>, E> {
                Ok(Json::Str(Cow::Owned(s)))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Json<'de>, A::Error> {
                let mut items = Vec::with_capacity(a.size_hint().unwrap_or(0));
                while let Some(item) = a.next_element()? {
                    items.push(item);
                }
                Ok(Json::Array(items))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Json<'de>, A::Error> {
                let mut entries = Vec::with_capacity(a.size_hint().unwrap_or(0));
                // Keys read as `Json` too, so they borrow from the text when unescaped (a
                // `Cow<str>` key would always be owned).
                while let Some(key) = a.next_key::<Json<'de>>()? {
                    let Json::Str(key) = key else {
                        return Err(de::Error::custom("an object key that is not a string"));
                    };
                    let value = a.next_value()?;
                    entries.push((key, value));
                }
                Ok(Json::Object(entries))
            }
        }
        d.deserialize_any(V)
    }
}

fn type_bits(value: &Json<'_>) -> Result<u8, String> {
    let one = |name: &str| {
        TYPE_NAMES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, bit)| *bit)
            .ok_or_else(|| format!("unknown type {name:?}"))
    };
    match value {
        Json::Str(name) => one(name),
        Json::Array(names) => names.iter().try_fold(0, |bits, n| {
            Ok(bits | one(n.as_str().ok_or("type name is not a string")?)?)
        }),
        other => Err(format!("bad type {}", other.to_value())),
    }
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
