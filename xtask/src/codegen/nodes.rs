//! Compiling one revision's sanitized schemas into the static node arena of
//! `ferromcp-types` (`tables/schema.rs` describes the runtime side), and the facts the runtime
//! uses to go fast: which properties pin a constant (`discriminators`), which nodes are only a
//! `$ref`, and how the branches of a union are told apart.
//!
//! Definitions take the first ids, in name order (a `$ref` is resolved by name, so cycles need
//! no special care); the nodes they are made of follow. Nodes that are not definitions are
//! shared when they are equal (every `{"type": "string"}` of a revision is one node), which
//! keeps the tables small; nodes are immutable, so sharing does not change any answer.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

use serde_json::{Map, Value};

use super::extract::VersionTables;

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

/// Compiles the sanitized schemas of one revision.
pub(crate) fn compile(t: &VersionTables) -> Result<Arena, String> {
    let def_ids: HashMap<&str, u32> = t
        .defs
        .keys()
        .enumerate()
        .map(|(i, name)| {
            Ok((
                name.as_str(),
                u32::try_from(i).map_err(|_| "too many defs")?,
            ))
        })
        .collect::<Result<_, String>>()?;
    let mut b = Builder {
        nodes: vec![Node::any(); t.defs.len()],
        shared: HashMap::new(),
        def_ids,
    };
    for (i, def) in t.defs.values().enumerate() {
        let node = b.schema(def)?;
        b.nodes[i] = node;
    }
    let mut params = BTreeMap::new();
    for (method, schema) in &t.params {
        let node = b.schema(schema)?;
        params.insert(method.clone(), b.push(node)?);
    }
    let mut results = BTreeMap::new();
    for (method, schema) in &t.results {
        let node = b.schema(schema)?;
        results.insert(method.clone(), b.push(node)?);
    }
    Ok(Arena {
        nodes: b.nodes,
        def_names: t.defs.keys().cloned().collect(),
        params,
        results,
    })
}

struct Builder<'a> {
    nodes: Vec<Node>,
    /// Rendered node → id, for sharing equal nodes.
    shared: HashMap<String, u32>,
    def_ids: HashMap<&'a str, u32>,
}

impl Builder<'_> {
    /// Adds a node (or finds an equal one) and returns its id.
    fn push(&mut self, node: Node) -> Result<u32, String> {
        let key = format!("{node:?}");
        if let Some(&id) = self.shared.get(&key) {
            return Ok(id);
        }
        let id = u32::try_from(self.nodes.len()).map_err(|_| "too many schema nodes")?;
        self.nodes.push(node);
        self.shared.insert(key, id);
        Ok(id)
    }

    fn sub(&mut self, schema: &Value) -> Result<u32, String> {
        let node = self.schema(schema)?;
        self.push(node)
    }

    /// Compiles one schema (its sub-schemas are pushed as they are met). Keywords are read in
    /// name order, as the runtime compiler read the generated JSON (later ones win).
    fn schema(&mut self, schema: &Value) -> Result<Node, String> {
        let obj: &Map<String, Value> = match schema {
            Value::Bool(b) => {
                return Ok(Node {
                    never: !b,
                    ..Node::any()
                });
            }
            Value::Object(obj) => obj,
            other => return Err(format!("a schema is neither an object nor a bool: {other}")),
        };
        let mut keys: Vec<&String> = obj.keys().collect();
        keys.sort();
        let mut node = Node::any();
        for key in keys {
            let value = &obj[key];
            match key.as_str() {
                "type" => node.types = type_bits(value)?,
                "$ref" => {
                    let name = value.as_str().ok_or("$ref is not a string")?;
                    let id = self
                        .def_ids
                        .get(name)
                        .ok_or_else(|| format!("dangling $ref {name}"))?;
                    node.reference = Some(*id);
                }
                "const" => node.constant = Some(scalar(value)?),
                "enum" => {
                    let list = value.as_array().ok_or("enum is not an array")?;
                    node.enumeration = Some(list.iter().map(scalar).collect::<Result<_, _>>()?);
                    node.has_bounds = true;
                }
                "properties" => {
                    let props = value.as_object().ok_or("properties is not an object")?;
                    node.has_properties = true;
                    let mut names: Vec<&String> = props.keys().collect();
                    names.sort();
                    node.properties = Vec::with_capacity(names.len());
                    for name in names {
                        let id = self.sub(&props[name])?;
                        node.properties.push((name.clone(), id));
                    }
                }
                "required" => {
                    let names = value.as_array().ok_or("required is not an array")?;
                    node.required = names
                        .iter()
                        .map(|n| n.as_str().map(str::to_owned).ok_or("a required name"))
                        .collect::<Result<_, _>>()?;
                }
                "additionalProperties" => {
                    let accepts_all = match value {
                        Value::Bool(b) => *b,
                        Value::Object(o) => o.is_empty(),
                        _ => false,
                    };
                    let built = self.schema(value)?;
                    node.additional = if built.never {
                        Additional::Never
                    } else if accepts_all {
                        Additional::Any
                    } else {
                        Additional::Schema(self.push(built)?)
                    };
                }
                "items" => node.items = Some(self.sub(value)?),
                "anyOf" | "oneOf" => {
                    for branch in value.as_array().ok_or("anyOf is not an array")? {
                        let id = self.sub(branch)?;
                        node.any_of.push(id);
                    }
                }
                "allOf" => {
                    node.all_of = Vec::new();
                    for part in value.as_array().ok_or("allOf is not an array")? {
                        let id = self.sub(part)?;
                        node.all_of.push(id);
                    }
                }
                "minimum" => node.minimum = value.as_f64().map(|m| (m, false)),
                "exclusiveMinimum" => node.minimum = value.as_f64().map(|m| (m, true)),
                "maximum" => node.maximum = value.as_f64().map(|m| (m, false)),
                "exclusiveMaximum" => node.maximum = value.as_f64().map(|m| (m, true)),
                "minItems" => node.min_items = value.as_u64(),
                "maxItems" => node.max_items = value.as_u64(),
                "minLength" => node.min_length = value.as_u64(),
                "maxLength" => node.max_length = value.as_u64(),
                // Keywords without effect here (`uniqueItems` and `not` are not enforced).
                _ => continue,
            }
            if matches!(
                key.as_str(),
                "minimum"
                    | "exclusiveMinimum"
                    | "maximum"
                    | "exclusiveMaximum"
                    | "minItems"
                    | "maxItems"
                    | "minLength"
                    | "maxLength"
            ) {
                node.has_bounds = true;
            }
        }
        Ok(node)
    }
}

/// `"type"`: one name or a list of names → bits.
fn type_bits(value: &Value) -> Result<u8, String> {
    let bit = |name: &Value| {
        let name = name.as_str().ok_or("a type name is not a string")?;
        TYPES
            .iter()
            .position(|(n, _)| *n == name)
            .map(|i| 1u8 << i)
            .ok_or_else(|| format!("unknown type {name:?}"))
    };
    match value {
        Value::Array(names) => names.iter().try_fold(0, |bits, n| Ok(bits | bit(n)?)),
        one => bit(one),
    }
}

/// A `const` or `enum` member: the runtime holds JSON scalars only.
fn scalar(value: &Value) -> Result<Value, String> {
    match value {
        Value::Array(_) | Value::Object(_) => Err(format!(
            "a const or enum value that is not a scalar is not supported: {value}"
        )),
        scalar => Ok(scalar.clone()),
    }
}

impl Arena {
    fn node(&self, id: u32) -> Option<&Node> {
        self.nodes.get(id as usize)
    }

    /// The constant a schema pins its value to, following references.
    pub(crate) fn constant_of(&self, id: u32, depth: u32) -> Option<&Value> {
        let node = self.node(id)?;
        match (&node.constant, node.reference) {
            (Some(k), _) => Some(k),
            (None, Some(target)) if depth < MAX_REF_CHAIN => self.constant_of(target, depth + 1),
            _ => None,
        }
    }

    /// The properties of node `id` that pin a constant, with the constant and whether the
    /// property is required.
    pub(crate) fn discriminators(&self, id: u32) -> Vec<(&str, &Value, bool)> {
        let Some(node) = self.node(id) else {
            return Vec::new();
        };
        node.properties
            .iter()
            .filter_map(|(name, prop)| {
                let constant = self.constant_of(*prop, 0)?;
                Some((name.as_str(), constant, node.required.contains(name)))
            })
            .collect()
    }

    /// Whether the runtime's `plausible` (`tables/validate.rs`) says yes for every object (with
    /// `tag`: for every object whose property `tag.0` is the string `tag.1`). It walks the same
    /// way: the node admits objects, pins no constant and no property constant (but the tag),
    /// and so do its `$ref` target, its `allOf` parts and one of its `anyOf` branches. Deep or
    /// cyclic schemas answer no (the runtime then asks `plausible`).
    pub(crate) fn plausible_for(&self, id: u32, tag: Option<(&str, &str)>, depth: u32) -> bool {
        let Some(node) = self.node(id) else {
            return false;
        };
        if depth > UNION_DEPTH
            || node.never
            || (node.types != 0 && node.types & OBJECT_BIT == 0)
            || node.constant.is_some()
        {
            return false;
        }
        let discriminators_hold = self.discriminators(id).iter().all(|(name, constant, _)| {
            tag.is_some_and(|(key, value)| *name == key && constant.as_str() == Some(value))
        });
        discriminators_hold
            && node
                .reference
                .is_none_or(|target| self.plausible_for(target, tag, depth + 1))
            && node
                .all_of
                .iter()
                .all(|&part| self.plausible_for(part, tag, depth + 1))
            && (node.any_of.is_empty()
                || node
                    .any_of
                    .iter()
                    .any(|&branch| self.plausible_for(branch, tag, depth + 1)))
    }

    /// What the runtime's shaping (`Shaper::collect_object` in `tables/shape.rs`) gathers for
    /// any object from node `id`, when that does not depend on the object: the object schemas
    /// it describes the object with, in order, and whether some schema leaves it open. Only
    /// `anyOf` makes it depend on the object (through plausibility), unless every branch is
    /// plausible for every object. `None` when it depends, or nests deeper than
    /// [`UNION_DEPTH`].
    pub(crate) fn static_view(&self, id: u32, depth: u32) -> Option<(Vec<u32>, bool)> {
        let node = self.node(id)?;
        if depth > UNION_DEPTH {
            return None;
        }
        let mut described = Vec::new();
        let mut open = false;
        if node.never || (node.types != 0 && node.types & OBJECT_BIT == 0) {
            return Some((described, open));
        }
        let mut parts: Vec<u32> = node.reference.into_iter().collect();
        parts.extend(&node.all_of);
        if !node.any_of.is_empty() {
            if !node.any_of.iter().all(|&b| self.plausible_for(b, None, 0)) {
                return None;
            }
            parts.extend(&node.any_of);
        }
        for part in parts {
            let (more, more_open) = self.static_view(part, depth + 1)?;
            described.extend(more);
            open |= more_open;
        }
        let composite =
            node.reference.is_some() || !node.all_of.is_empty() || !node.any_of.is_empty();
        match node.additional {
            Additional::Any | Additional::Schema(_) => open = true,
            Additional::Absent | Additional::Never if node.has_properties => described.push(id),
            Additional::Absent | Additional::Never if !composite => open = true,
            Additional::Absent | Additional::Never => {}
        }
        Some((described, open))
    }

    /// The nodes checked together with `id` on the same value: `id`, what it references and
    /// its `allOf` parts, recursively (up to [`UNION_DEPTH`] levels).
    fn closure(&self, id: u32, depth: u32, out: &mut Vec<u32>) {
        if depth > UNION_DEPTH || out.contains(&id) {
            return;
        }
        out.push(id);
        if let Some(node) = self.node(id) {
            if let Some(target) = node.reference {
                self.closure(target, depth + 1, out);
            }
            for &part in &node.all_of {
                self.closure(part, depth + 1, out);
            }
        }
    }

    /// The string constant some node of branch `id`'s closure pins property `key` to. Checking
    /// a value whose `key` is another string fails there, and the branch is not plausible.
    fn tag_of(&self, id: u32, key: &str) -> Option<&str> {
        let mut closure = Vec::new();
        self.closure(id, 0, &mut closure);
        closure.iter().find_map(|&n| {
            let node = self.node(n)?;
            let (_, prop) = node.properties.iter().find(|(name, _)| name == key)?;
            self.constant_of(*prop, 0)?.as_str()
        })
    }

    /// The properties some node of branch `id`'s closure requires: checking a value without
    /// one of them fails there.
    fn required_of(&self, id: u32) -> Vec<&str> {
        let mut closure = Vec::new();
        self.closure(id, 0, &mut closure);
        let mut names: Vec<&str> = closure
            .iter()
            .filter_map(|&n| self.node(n))
            .flat_map(|n| n.required.iter().map(String::as_str))
            .collect();
        names.sort_unstable();
        names.dedup();
        names
    }

    /// How the branches of node `id`'s `anyOf` are told apart: by a property every branch pins
    /// to a different string (preferred: it also helps shaping), else by a property each branch
    /// requires and no other branch does.
    pub(crate) fn union(&self, id: u32) -> Option<Union> {
        let branches = &self.node(id)?.any_of;
        if branches.len() < 2 {
            return None;
        }
        // Candidate tag keys: the properties with a string constant in the first branch.
        let mut first = Vec::new();
        self.closure(branches[0], 0, &mut first);
        let mut keys: Vec<&str> = first
            .iter()
            .filter_map(|&n| self.node(n))
            .flat_map(|n| n.properties.iter().map(|(name, _)| name.as_str()))
            .collect();
        keys.sort_unstable();
        keys.dedup();
        for key in keys {
            let tags: Option<Vec<&str>> = branches.iter().map(|&b| self.tag_of(b, key)).collect();
            if let Some(tags) = tags {
                let mut distinct = tags.clone();
                distinct.sort_unstable();
                distinct.dedup();
                if distinct.len() == tags.len() {
                    let sure = branches
                        .iter()
                        .zip(&tags)
                        .all(|(&b, tag)| self.plausible_for(b, Some((key, tag)), 0));
                    return Some(Union::Tag {
                        key: key.to_owned(),
                        tags: tags.into_iter().map(str::to_owned).collect(),
                        sure,
                    });
                }
            }
        }
        let required: Vec<Vec<&str>> = branches.iter().map(|&b| self.required_of(b)).collect();
        let mut keys = Vec::with_capacity(branches.len());
        for (i, own) in required.iter().enumerate() {
            let distinct = own.iter().find(|name| {
                required
                    .iter()
                    .enumerate()
                    .all(|(j, other)| j == i || !other.contains(name))
            })?;
            keys.push((*distinct).to_owned());
        }
        Some(Union::Required { keys })
    }
}

/// The fields of the runtime's `VersionData` that [`emit`] writes the statics of.
pub(crate) const TABLE_FIELDS: [(&str, &str); 9] = [
    ("strings", "STRINGS"),
    ("props", "PROPS"),
    ("names", "NAMES"),
    ("discriminators", "DISCRIMINATORS"),
    ("ids", "IDS"),
    ("unions", "UNIONS"),
    ("views", "VIEWS"),
    ("bounds", "BOUNDS"),
    ("lits", "LITS"),
];

/// The flat arrays of one revision that the nodes index, as Rust literals. The runtime's
/// nodes hold no pointers (each would be a relocation the dynamic loader applies at every
/// start): a list is a `Span` (start and length) of one of these arrays, a name an offset in
/// the string blob.
#[derive(Default)]
struct Pools {
    /// Every name, one after the other.
    strings: String,
    /// Where each name is in `strings`.
    offsets: HashMap<String, u32>,
    props: Vec<String>,
    names: Vec<String>,
    discriminators: Vec<String>,
    ids: Vec<u32>,
    unions: Vec<String>,
    views: Vec<String>,
    bounds: Vec<String>,
    lits: Vec<String>,
    /// Lists already in `ids` and `names` (equal lists are shared).
    id_spans: HashMap<Vec<u32>, String>,
    name_spans: HashMap<Vec<String>, String>,
}

impl Pools {
    /// `Name::new(offset, "text")`, adding the text to the blob if it is new.
    fn name(&mut self, text: &str) -> String {
        format!("Name::new({}, {text:?})", self.offset(text))
    }

    fn offset(&mut self, text: &str) -> u32 {
        if let Some(&offset) = self.offsets.get(text) {
            return offset;
        }
        let offset = self.strings.len() as u32;
        self.strings.push_str(text);
        self.offsets.insert(text.to_owned(), offset);
        offset
    }

    /// The span of `list` in `ids`.
    fn ids(&mut self, list: &[u32]) -> String {
        if let Some(span) = self.id_spans.get(list) {
            return span.clone();
        }
        let span = span(self.ids.len(), list.len());
        self.ids.extend_from_slice(list);
        self.id_spans.insert(list.to_vec(), span.clone());
        span
    }

    /// The span of the names `list` in `names`.
    fn names(&mut self, list: &[String]) -> String {
        if let Some(span) = self.name_spans.get(list) {
            return span.clone();
        }
        let start = self.names.len();
        for text in list {
            let name = self.name(text);
            self.names.push(name);
        }
        let span = span(start, list.len());
        self.name_spans.insert(list.to_vec(), span.clone());
        span
    }

    /// A scalar as a runtime `Lit`.
    fn lit(&mut self, value: &Value) -> String {
        match value {
            Value::Null => "Lit::Null".into(),
            Value::Bool(b) => format!("Lit::Bool({b})"),
            Value::String(s) => format!("Lit::Str({})", self.name(s)),
            Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
                (Some(u), _, _) if n.is_u64() => format!("Lit::Uint({u})"),
                (_, Some(i), _) if n.is_i64() => format!("Lit::Int({i})"),
                (_, _, Some(f)) => format!("Lit::Float({f:?})"),
                _ => "Lit::Null".into(),
            },
            // `scalar` rejected these.
            Value::Array(_) | Value::Object(_) => "Lit::Null".into(),
        }
    }
}

/// `Span::new(start, len)`.
fn span(start: usize, len: usize) -> String {
    format!("Span::new({start}, {len})")
}

/// Writes `static {ident}_NODES: [Node; N] = [...]` and the flat arrays its nodes index
/// (`{ident}_PROPS`, ... and the string blob `{ident}_STRINGS`, see [`TABLE_FIELDS`]).
pub(crate) fn emit(out: &mut String, ident: &str, version: &str, arena: &Arena) {
    let _ = writeln!(
        out,
        "\n/// The schema nodes of `{version}`: the definitions first, in name order, then the \
         nodes\n/// they and the method schemas are made of (equal ones shared)."
    );
    out.push_str("#[rustfmt::skip]\n");
    let _ = writeln!(
        out,
        "static {ident}_NODES: [Node; {}] = [",
        arena.nodes.len()
    );
    let mut pools = Pools::default();
    for (id, node) in arena.nodes.iter().enumerate() {
        let label = match arena.def_names.get(id) {
            Some(name) => format!("/* {id} {name} */"),
            None => format!("/* {id} */"),
        };
        let literal = node_literal(arena, id as u32, node, &mut pools);
        let _ = writeln!(out, "    {label} {literal},");
    }
    out.push_str("];\n");

    let _ = writeln!(
        out,
        "\n/// The names of `{version}`'s schemas, one after the other (a `Name` is an offset and a \
         length in here)."
    );
    out.push_str("#[rustfmt::skip]\n");
    let _ = writeln!(out, "const {ident}_STRINGS: &str = {:?};", pools.strings);
    let ids: Vec<String> = pools.ids.iter().map(u32::to_string).collect();
    let arrays: [(&str, &str, &str, &[String]); 8] = [
        (
            "PROPS",
            "Prop",
            "The listed properties of the nodes",
            &pools.props,
        ),
        (
            "NAMES",
            "Name",
            "The required names of the nodes, and the tags and keys of the unions",
            &pools.names,
        ),
        (
            "DISCRIMINATORS",
            "Discriminator",
            "The discriminators of the nodes",
            &pools.discriminators,
        ),
        (
            "IDS",
            "u32",
            "The `anyOf` branches and `allOf` parts of the nodes, and the nodes of their views",
            &ids,
        ),
        (
            "UNIONS",
            "Union",
            "The unions of the nodes that have one",
            &pools.unions,
        ),
        (
            "VIEWS",
            "View",
            "The views of the nodes that have one",
            &pools.views,
        ),
        (
            "BOUNDS",
            "Bounds",
            "The bounds of the nodes that have some",
            &pools.bounds,
        ),
        ("LITS", "Lit", "The members of the `enum`s", &pools.lits),
    ];
    for (suffix, ty, doc, items) in arrays {
        let _ = writeln!(out, "\n/// {doc} (`{version}`).");
        out.push_str("#[rustfmt::skip]\n");
        let _ = writeln!(out, "static {ident}_{suffix}: [{ty}; {}] = [", items.len());
        // Node ids are short: sixteen to a line.
        let per_line = if suffix == "IDS" { 16 } else { 1 };
        for line in items.chunks(per_line) {
            let _ = writeln!(out, "    {},", line.join(", "));
        }
        out.push_str("];\n");
    }
}

fn node_literal(arena: &Arena, id: u32, node: &Node, pools: &mut Pools) -> String {
    let mut fields: Vec<String> = Vec::new();
    if node.never {
        fields.push("never: true".into());
    }
    if node.types != 0 {
        let names: Vec<&str> = TYPES
            .iter()
            .enumerate()
            .filter(|(i, _)| node.types & (1 << i) != 0)
            .map(|(_, (_, c))| *c)
            .collect();
        fields.push(format!("types: {}", names.join(" | ")));
    }
    if let Some(target) = node.reference {
        fields.push(format!("reference: Some({target})"));
    }
    if node.is_pure_ref() {
        fields.push("pure_ref: true".into());
    }
    if node.is_type_only() {
        fields.push("type_only: true".into());
    }
    if let Some(constant) = &node.constant {
        fields.push(format!("constant: Some({})", pools.lit(constant)));
    }
    if arena.plausible_for(id, None, 0) {
        fields.push("always_plausible: true".into());
    }
    if node.has_properties {
        fields.push("has_properties: true".into());
    }
    if !node.properties.is_empty() {
        // The runtime looks properties up by length first.
        let mut props: Vec<&(String, u32)> = node.properties.iter().collect();
        props.sort_by(|a, b| a.0.len().cmp(&b.0.len()).then_with(|| a.0.cmp(&b.0)));
        let start = pools.props.len();
        for (name, id) in &props {
            let offset = pools.offset(name);
            let required = node.required.contains(name);
            pools
                .props
                .push(format!("Prop::new({offset}, {name:?}, {id}, {required})"));
        }
        fields.push(format!("properties: {}", span(start, props.len())));
    }
    if !node.required.is_empty() {
        fields.push(format!("required: {}", pools.names(&node.required)));
    }
    let discriminators = arena.discriminators(id);
    if !discriminators.is_empty() {
        let start = pools.discriminators.len();
        for (name, constant, required) in &discriminators {
            let entry = format!(
                "({}, {}, {required})",
                pools.name(name),
                pools.lit(constant)
            );
            pools.discriminators.push(entry);
        }
        fields.push(format!(
            "discriminators: {}",
            span(start, discriminators.len())
        ));
    }
    match node.additional {
        Additional::Absent => {}
        Additional::Any => fields.push("additional: Additional::Any".into()),
        Additional::Never => fields.push("additional: Additional::Never".into()),
        Additional::Schema(s) => fields.push(format!("additional: Additional::Schema({s})")),
    }
    if let Some(items) = node.items {
        fields.push(format!("items: Some({items})"));
    }
    if !node.any_of.is_empty() {
        fields.push(format!("any_of: {}", pools.ids(&node.any_of)));
    }
    let union = match arena.union(id) {
        Some(Union::Tag { key, tags, sure }) => Some(format!(
            "Union::Tag {{ key: {}, tags: {}, sure: {sure} }}",
            pools.name(&key),
            pools.names(&tags)
        )),
        Some(Union::Required { keys }) => Some(format!(
            "Union::Required {{ keys: {} }}",
            pools.names(&keys)
        )),
        None => None,
    };
    if let Some(union) = union {
        fields.push(format!("union: Some({})", pools.unions.len()));
        pools.unions.push(union);
    }
    if !node.all_of.is_empty() {
        fields.push(format!("all_of: {}", pools.ids(&node.all_of)));
    }
    // Only where gathering walks other nodes (a plain object schema gathers itself).
    let composite = node.reference.is_some() || !node.all_of.is_empty() || !node.any_of.is_empty();
    if composite && let Some((described, open)) = arena.static_view(id, 0) {
        let view = format!(
            "View {{ described: {}, open: {open} }}",
            pools.ids(&described)
        );
        fields.push(format!("view: Some({})", pools.views.len()));
        pools.views.push(view);
    }
    if node.has_bounds {
        let mut bounds: Vec<String> = Vec::new();
        if let Some(list) = &node.enumeration {
            let start = pools.lits.len();
            for value in list {
                let lit = pools.lit(value);
                pools.lits.push(lit);
            }
            bounds.push(format!("enumeration: Some({})", span(start, list.len())));
        }
        let limit = |(v, exclusive): (f64, bool)| format!("Some(({v:?}, {exclusive}))");
        if let Some(m) = node.minimum {
            bounds.push(format!("minimum: {}", limit(m)));
        }
        if let Some(m) = node.maximum {
            bounds.push(format!("maximum: {}", limit(m)));
        }
        for (name, value) in [
            ("min_items", node.min_items),
            ("max_items", node.max_items),
            ("min_length", node.min_length),
            ("max_length", node.max_length),
        ] {
            if let Some(v) = value {
                bounds.push(format!("{name}: Some({v})"));
            }
        }
        bounds.push("..Bounds::NONE".into());
        fields.push(format!("bounds: Some({})", pools.bounds.len()));
        pools
            .bounds
            .push(format!("Bounds {{ {} }}", bounds.join(", ")));
    }
    fields.push("..Node::ANY".into());
    format!("Node {{ {} }}", fields.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::collections::BTreeSet;

    fn tables(defs: Value, params: Value, results: Value) -> VersionTables {
        let map = |v: Value| -> BTreeMap<String, Value> {
            serde_json::from_value(v).expect("an object of schemas")
        };
        VersionTables {
            version: "test".into(),
            methods: Default::default(),
            defs: map(defs),
            params: map(params),
            results: map(results),
            notes: BTreeMap::new(),
        }
    }

    #[test]
    fn references_resolve_in_any_order_and_keywords_compile() {
        let t = tables(
            json!({
                "A": {"type": "object", "properties": {"b": {"$ref": "B"}, "kind": {"const": "a"}},
                      "required": ["b"], "additionalProperties": false},
                "B": {"type": ["string", "null"], "maxLength": 3, "enum": ["x", null]},
                "Open": {"additionalProperties": {}},
                "Map": {"additionalProperties": {"type": "integer", "minimum": 0}}
            }),
            json!({"m": {"$ref": "A"}}),
            json!({"m": {"anyOf": [true, false]}}),
        );
        let arena = compile(&t).unwrap();
        assert_eq!(
            arena.def_names,
            ["A", "B", "Map", "Open"],
            "definitions first"
        );
        let node = |id: u32| &arena.nodes[id as usize];
        let a = node(arena.params["m"]).reference.unwrap();
        assert!(node(arena.params["m"]).is_pure_ref());
        let a = node(a);
        assert_eq!(a.additional, Additional::Never);
        assert_eq!(a.required, ["b"]);
        let names: Vec<&str> = a.properties.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["b", "kind"]);
        let b = node(node(a.properties[0].1).reference.unwrap());
        assert_eq!(b.max_length, Some(3));
        assert_eq!(b.enumeration.as_ref().map(Vec::len), Some(2));
        let result = node(arena.results["m"]);
        assert!(!node(result.any_of[0]).never && node(result.any_of[1]).never);
        assert_eq!(node(1).types, 1 << 4 | 1);
        assert_eq!(node(3).additional, Additional::Any);
        assert!(matches!(node(2).additional, Additional::Schema(_)));
        assert_eq!(
            arena.discriminators(0),
            [("kind", &json!("a"), false)],
            "a constant property"
        );
    }

    #[test]
    fn a_dangling_reference_or_an_object_constant_is_an_error() {
        let dangling = tables(json!({"A": {"$ref": "Nope"}}), json!({}), json!({}));
        assert!(
            compile(&dangling)
                .unwrap_err()
                .contains("dangling $ref Nope")
        );
        let object = tables(json!({"A": {"const": {"a": 1}}}), json!({}), json!({}));
        assert!(compile(&object).unwrap_err().contains("not a scalar"));
    }

    #[test]
    fn equal_nodes_are_shared() {
        let t = tables(
            json!({"A": {"properties": {"x": {"type": "string"}, "y": {"type": "string"}}}}),
            json!({"m": {"type": "string"}}),
            json!({}),
        );
        let arena = compile(&t).unwrap();
        let a = &arena.nodes[0];
        assert_eq!(a.properties[0].1, a.properties[1].1);
        assert_eq!(arena.params["m"], a.properties[0].1);
        assert_eq!(arena.nodes.len(), 2);
    }

    #[test]
    fn unions_told_apart_by_a_tag_or_by_required_properties() {
        let t = tables(
            json!({
                "Text": {"properties": {"type": {"const": "text"}, "text": {"type": "string"}},
                         "required": ["type", "text"]},
                "Image": {"allOf": [{"$ref": "Base"}, {"properties": {"type": {"$ref": "ImageTag"}}}]},
                "ImageTag": {"const": "image"},
                "Base": {"properties": {"data": {}}, "required": ["data"]},
                "Call": {"properties": {"content": {}}, "required": ["content"]},
                "Task": {"properties": {"task": {}}, "required": ["task"]},
            }),
            json!({}),
            json!({
                "content": {"anyOf": [{"$ref": "Text"}, {"$ref": "Image"}]},
                "call": {"anyOf": [{"$ref": "Call"}, {"$ref": "Task"}]},
                "untold": {"anyOf": [{"$ref": "Call"}, {"$ref": "Call"}]},
            }),
        );
        let arena = compile(&t).unwrap();
        assert_eq!(
            arena.union(arena.results["content"]),
            Some(Union::Tag {
                key: "type".into(),
                tags: vec!["text".into(), "image".into()],
                sure: true,
            }),
            "through $ref and allOf"
        );
        assert_eq!(
            arena.union(arena.results["call"]),
            Some(Union::Required {
                keys: vec!["content".into(), "task".into()]
            })
        );
        assert_eq!(arena.union(arena.results["untold"]), None);
        let defs: BTreeSet<&str> = arena.def_names.iter().map(String::as_str).collect();
        assert!(defs.contains("ImageTag"));
    }
}
