//! Compiling a generated schema document into the node arena while it is parsed: no JSON tree
//! is built and dropped on the way. This runs on the first request of a revision (for most
//! connections: on `initialize`, so it is part of every cold start).

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use super::schema::{Additional, Node, NodeId, TYPE_NAMES};

/// A compiled document: the nodes, and the params and result tables sorted by method.
#[derive(Debug)]
pub(super) struct Document {
    pub(super) nodes: Vec<Node>,
    pub(super) params: Vec<(Box<str>, NodeId)>,
    pub(super) results: Vec<(Box<str>, NodeId)>,
}

/// Compiles `{"defs": {NAME: SCHEMA…}, "params": {METHOD: SCHEMA…}, "results": {…}}`.
pub(super) fn compile(text: &str) -> Result<Document, String> {
    let mut builder = Builder {
        nodes: Vec::with_capacity(1024),
        ids: HashMap::with_capacity(128),
        defined: Vec::with_capacity(128),
        params: None,
        results: None,
    };
    let mut de = serde_json::Deserializer::from_str(text);
    DocSeed(&mut builder)
        .deserialize(&mut de)
        .map_err(|e| e.to_string())?;
    de.end().map_err(|e| e.to_string())?;
    if let Some(name) = builder
        .ids
        .iter()
        .find(|&(_, &id)| !builder.defined.get(id as usize).copied().unwrap_or(false))
        .map(|(name, _)| name)
    {
        return Err(format!("dangling $ref {name}"));
    }
    let params = builder.params.ok_or("missing section \"params\"")?;
    let results = builder.results.ok_or("missing section \"results\"")?;
    let mut nodes = builder.nodes;
    nodes.shrink_to_fit();
    Ok(Document {
        nodes,
        params,
        results,
    })
}

struct Builder<'de> {
    nodes: Vec<Node>,
    /// Definition name → node id, assigned on first mention (a `$ref` may come first).
    ids: HashMap<Cow<'de, str>, NodeId>,
    /// Per node id: whether it is a definition that has been compiled.
    defined: Vec<bool>,
    params: Option<Vec<(Box<str>, NodeId)>>,
    results: Option<Vec<(Box<str>, NodeId)>>,
}

impl<'de> Builder<'de> {
    fn push(&mut self, node: Node) -> Result<NodeId, String> {
        let id = NodeId::try_from(self.nodes.len()).map_err(|_| "too many schema nodes")?;
        self.nodes.push(node);
        Ok(id)
    }

    /// The id of definition `name`, reserving a node for it on first mention.
    fn def_id(&mut self, name: Cow<'de, str>) -> Result<NodeId, String> {
        if let Some(&id) = self.ids.get(&name) {
            return Ok(id);
        }
        let id = self.push(Node::any())?;
        self.ids.insert(name, id);
        Ok(id)
    }
}

fn custom<E: de::Error>(e: String) -> E {
    E::custom(e)
}

/// A string borrowed from the text when it has no escapes.
struct Str<'de>(Cow<'de, str>);

impl<'de> de::Deserialize<'de> for Str<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Str<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Str<'de>, E> {
                Ok(Str(Cow::Borrowed(s)))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Str<'de>, E> {
                Ok(Str(Cow::Owned(s.to_owned())))
            }
            fn visit_string<E: de::Error>(self, s: String) -> Result<Str<'de>, E> {
                Ok(Str(Cow::Owned(s)))
            }
        }
        d.deserialize_str(V)
    }
}

/// The document's top level.
struct DocSeed<'b, 'de>(&'b mut Builder<'de>);

impl<'de> DeserializeSeed<'de> for DocSeed<'_, 'de> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for DocSeed<'_, 'de> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a schema document")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<(), A::Error> {
        let b = self.0;
        let mut saw_defs = false;
        while let Some(Str(section)) = a.next_key()? {
            match &*section {
                "defs" => {
                    a.next_value_seed(DefsSeed(&mut *b))?;
                    saw_defs = true;
                }
                "params" => b.params = Some(a.next_value_seed(TableSeed(&mut *b))?),
                "results" => b.results = Some(a.next_value_seed(TableSeed(&mut *b))?),
                _ => {
                    a.next_value::<IgnoredAny>()?;
                }
            }
        }
        if !saw_defs {
            return Err(de::Error::custom("missing section \"defs\""));
        }
        Ok(())
    }
}

/// `{NAME: SCHEMA, …}`: each definition fills the node its name reserved.
struct DefsSeed<'b, 'de>(&'b mut Builder<'de>);

impl<'de> DeserializeSeed<'de> for DefsSeed<'_, 'de> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for DefsSeed<'_, 'de> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the definitions")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<(), A::Error> {
        let b = self.0;
        while let Some(Str(name)) = a.next_key()? {
            let id = b.def_id(name).map_err(custom)?;
            let built = a.next_value_seed(SchemaSeed(&mut *b))?;
            let index = id as usize;
            if let Some(slot) = b.nodes.get_mut(index) {
                *slot = built.node;
            }
            if b.defined.len() <= index {
                b.defined.resize(index + 1, false);
            }
            b.defined[index] = true;
        }
        Ok(())
    }
}

/// `{METHOD: SCHEMA, …}` → a table sorted by method.
struct TableSeed<'b, 'de>(&'b mut Builder<'de>);

impl<'de> DeserializeSeed<'de> for TableSeed<'_, 'de> {
    type Value = Vec<(Box<str>, NodeId)>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for TableSeed<'_, 'de> {
    type Value = Vec<(Box<str>, NodeId)>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a table of schemas")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
        let b = self.0;
        let mut table: Vec<(Box<str>, NodeId)> = Vec::new();
        while let Some(Str(method)) = a.next_key()? {
            let built = a.next_value_seed(SchemaSeed(&mut *b))?;
            let id = b.push(built.node).map_err(custom)?;
            table.push((Box::from(&*method), id));
        }
        table.sort_by(|x, y| x.0.cmp(&y.0));
        Ok(table)
    }
}

/// A compiled schema, and whether it was `true` or `{}` (for `additionalProperties`).
struct Built {
    node: Node,
    accepts_all: bool,
}

/// One schema → its node (sub-schemas are pushed as they are met).
struct SchemaSeed<'b, 'de>(&'b mut Builder<'de>);

impl SchemaSeed<'_, '_> {
    /// Compiles a sub-schema and pushes it.
    fn sub<'de, A: MapAccess<'de>>(b: &mut Builder<'de>, a: &mut A) -> Result<NodeId, A::Error> {
        let built = a.next_value_seed(SchemaSeed(&mut *b))?;
        b.push(built.node).map_err(custom)
    }
}

impl<'de> DeserializeSeed<'de> for SchemaSeed<'_, 'de> {
    type Value = Built;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Built, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for SchemaSeed<'_, 'de> {
    type Value = Built;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a schema (an object or a boolean)")
    }
    fn visit_bool<E: de::Error>(self, b: bool) -> Result<Built, E> {
        let node = if b {
            Node::any()
        } else {
            Node {
                never: true,
                ..Node::any()
            }
        };
        Ok(Built {
            node,
            accepts_all: b,
        })
    }
    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Built, A::Error> {
        let b = self.0;
        let mut node = Node::any();
        let mut keys = 0usize;
        while let Some(Str(key)) = a.next_key()? {
            keys += 1;
            match &*key {
                "type" => node.types = a.next_value_seed(TypeSeed)?,
                "$ref" => {
                    let Str(name) = a.next_value()?;
                    node.reference = Some(b.def_id(name).map_err(custom)?);
                }
                "const" => node.constant = Some(a.next_value::<Value>()?),
                "enum" => node.bounds_mut().enumeration = Some(a.next_value::<Vec<Value>>()?),
                "properties" => {
                    node.has_properties = true;
                    node.properties = a.next_value_seed(PropertiesSeed(&mut *b))?;
                    node.properties.sort_by(|x, y| x.0.cmp(&y.0));
                }
                "required" => {
                    let names: Vec<Str<'de>> = a.next_value()?;
                    node.required = names.into_iter().map(|Str(n)| Box::from(&*n)).collect();
                }
                "additionalProperties" => {
                    let built = a.next_value_seed(SchemaSeed(&mut *b))?;
                    node.additional = if built.node.never {
                        Additional::Never
                    } else if built.accepts_all {
                        Additional::Any
                    } else {
                        Additional::Schema(b.push(built.node).map_err(custom)?)
                    };
                }
                "items" => node.items = Some(SchemaSeed::sub(b, &mut a)?),
                "anyOf" | "oneOf" => {
                    let branches = a.next_value_seed(ListSeed(&mut *b))?;
                    node.any_of.extend(branches);
                }
                "allOf" => node.all_of = a.next_value_seed(ListSeed(&mut *b))?,
                "minimum" => {
                    node.bounds_mut().minimum =
                        a.next_value::<Value>()?.as_f64().map(|m| (m, false))
                }
                "exclusiveMinimum" => {
                    node.bounds_mut().minimum =
                        a.next_value::<Value>()?.as_f64().map(|m| (m, true));
                }
                "maximum" => {
                    node.bounds_mut().maximum =
                        a.next_value::<Value>()?.as_f64().map(|m| (m, false))
                }
                "exclusiveMaximum" => {
                    node.bounds_mut().maximum =
                        a.next_value::<Value>()?.as_f64().map(|m| (m, true));
                }
                "minItems" => node.bounds_mut().min_items = a.next_value::<Value>()?.as_u64(),
                "maxItems" => node.bounds_mut().max_items = a.next_value::<Value>()?.as_u64(),
                "minLength" => node.bounds_mut().min_length = a.next_value::<Value>()?.as_u64(),
                "maxLength" => node.bounds_mut().max_length = a.next_value::<Value>()?.as_u64(),
                // Annotations and keywords without effect here (`uniqueItems` is not enforced).
                _ => {
                    a.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Built {
            node,
            accepts_all: keys == 0,
        })
    }
}

/// `{NAME: SCHEMA, …}` of `properties`.
struct PropertiesSeed<'b, 'de>(&'b mut Builder<'de>);

impl<'de> DeserializeSeed<'de> for PropertiesSeed<'_, 'de> {
    type Value = Vec<(Box<str>, NodeId)>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for PropertiesSeed<'_, 'de> {
    type Value = Vec<(Box<str>, NodeId)>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("properties (an object of schemas)")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
        let b = self.0;
        let mut props = Vec::with_capacity(a.size_hint().unwrap_or(4));
        while let Some(Str(name)) = a.next_key()? {
            let id = SchemaSeed::sub(b, &mut a)?;
            props.push((Box::from(&*name), id));
        }
        Ok(props)
    }
}

/// `[SCHEMA, …]` of `anyOf`, `oneOf` and `allOf`.
struct ListSeed<'b, 'de>(&'b mut Builder<'de>);

impl<'de> DeserializeSeed<'de> for ListSeed<'_, 'de> {
    type Value = Vec<NodeId>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Vec<NodeId>, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for ListSeed<'_, 'de> {
    type Value = Vec<NodeId>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of schemas")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Vec<NodeId>, A::Error> {
        let b = self.0;
        let mut ids = Vec::new();
        while let Some(built) = a.next_element_seed(SchemaSeed(&mut *b))? {
            ids.push(b.push(built.node).map_err(custom)?);
        }
        Ok(ids)
    }
}

/// `"type"`: one name or a list of names → `T_*` bits.
struct TypeSeed;

impl<'de> DeserializeSeed<'de> for TypeSeed {
    type Value = u8;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<u8, D::Error> {
        d.deserialize_any(self)
    }
}

fn type_bit<E: de::Error>(name: &str) -> Result<u8, E> {
    TYPE_NAMES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, bit)| *bit)
        .ok_or_else(|| E::custom(format!("unknown type {name:?}")))
}

impl<'de> Visitor<'de> for TypeSeed {
    type Value = u8;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a type name or a list of type names")
    }
    fn visit_str<E: de::Error>(self, s: &str) -> Result<u8, E> {
        type_bit(s)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<u8, A::Error> {
        let mut bits = 0;
        while let Some(Str(name)) = a.next_element()? {
            bits |= type_bit::<A::Error>(&name)?;
        }
        Ok(bits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_resolve_in_any_order_and_keywords_compile() {
        let text = r#"{"defs": {
            "A": {"type": "object", "properties": {"b": {"$ref": "B"}, "k\u0069nd": {"const": "a"}},
                  "required": ["b"], "additionalProperties": false},
            "B": {"type": ["string", "null"], "maxLength": 3, "enum": ["x", null]},
            "Open": {"additionalProperties": {}},
            "Map": {"additionalProperties": {"type": "integer", "minimum": 0}}
        }, "params": {"m": {"$ref": "A"}}, "results": {"m": {"anyOf": [true, false]}}}"#;
        let doc = compile(text).unwrap();
        let node = |id: NodeId| &doc.nodes[id as usize];
        let a = node(doc.params[0].1).reference.unwrap();
        let a = node(a);
        assert_eq!(a.additional, Additional::Never);
        assert_eq!(&*a.required[0], "b");
        let names: Vec<&str> = a.properties.iter().map(|(n, _)| &**n).collect();
        assert_eq!(names, ["b", "kind"], "sorted, escapes decoded");
        let b = node(node(a.properties[0].1).reference.unwrap());
        assert_eq!(b.bounds().max_length, Some(3));
        assert_eq!(b.bounds().enumeration.as_ref().map(Vec::len), Some(2));
        let result = node(doc.results[0].1);
        assert!(!node(result.any_of[0]).never && node(result.any_of[1]).never);
        let additional: Vec<Additional> = doc.nodes.iter().map(|n| n.additional).collect();
        assert!(additional.contains(&Additional::Any));
        assert!(
            additional
                .iter()
                .any(|a| matches!(a, Additional::Schema(_)))
        );
    }

    #[test]
    fn a_dangling_reference_or_a_missing_section_is_an_error() {
        let dangling = r#"{"defs": {"A": {"$ref": "Nope"}}, "params": {}, "results": {}}"#;
        assert!(
            compile(dangling)
                .unwrap_err()
                .contains("dangling $ref Nope")
        );
        let missing = r#"{"defs": {}, "params": {}}"#;
        assert!(compile(missing).unwrap_err().contains("results"));
    }
}
