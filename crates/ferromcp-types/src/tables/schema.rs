//! The compiled form of a revision's schemas: a static arena of nodes, emitted into
//! `generated.rs` by `cargo xtask codegen` (`xtask/src/codegen/nodes.rs` compiles the
//! sanitized schema JSON into these nodes). Nothing is parsed or built at run time, so the
//! first request of a revision costs no more than the second.
//!
//! The interpreter covers the JSON Schema subset the MCP schema files use: `type` (one name or
//! a list), `properties`, `required`, `additionalProperties` (bool or schema), `items`, `enum`,
//! `const`, `anyOf`/`oneOf` (both checked as "at least one branch matches"), `allOf`, `$ref`,
//! `minimum`/`maximum` (and the exclusive forms), `minItems`/`maxItems`,
//! `minLength`/`maxLength`. Annotations such as `format` are dropped by the generator.

use serde_json::{Map, Number, Value};

use super::data::{MethodEntry, VersionData};
use super::generated::VERSIONS;
use crate::ProtocolVersion;

/// Index of a node in [`VersionData::nodes`].
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

/// A JSON scalar of the schema (a `const`, a member of an `enum`). Numbers keep serde_json's
/// three representations, so that [`Lit::matches`] is exactly `serde_json::Value`'s equality.
#[derive(Debug, Clone, Copy, PartialEq)]
#[allow(
    dead_code,
    reason = "the generator emits every kind of scalar; today's schemas pin strings only"
)]
pub(super) enum Lit {
    Null,
    Bool(bool),
    /// A non-negative integer.
    Uint(u64),
    /// A negative integer.
    Int(i64),
    /// A number written with a fraction or an exponent.
    Float(f64),
    Str(&'static str),
}

impl Lit {
    /// Whether `value` equals this constant (as `Value == Value` would say).
    pub(super) fn matches(&self, value: &Value) -> bool {
        match (self, value) {
            (Lit::Null, Value::Null) => true,
            (Lit::Bool(b), Value::Bool(v)) => b == v,
            (Lit::Str(s), Value::String(v)) => *s == v.as_str(),
            (Lit::Uint(u), Value::Number(n)) => n.is_u64() && n.as_u64() == Some(*u),
            (Lit::Int(i), Value::Number(n)) => !n.is_u64() && n.is_i64() && n.as_i64() == Some(*i),
            (Lit::Float(f), Value::Number(n)) => n.is_f64() && n.as_f64() == Some(*f),
            _ => false,
        }
    }

    /// The constant as a JSON value (for error messages).
    pub(super) fn to_value(self) -> Value {
        match self {
            Lit::Null => Value::Null,
            Lit::Bool(b) => Value::Bool(b),
            Lit::Uint(u) => Value::Number(u.into()),
            Lit::Int(i) => Value::Number(i.into()),
            Lit::Float(f) => Number::from_f64(f).map_or(Value::Null, Value::Number),
            Lit::Str(s) => Value::String(s.to_owned()),
        }
    }
}

/// What an object schema says about properties it does not list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Additional {
    /// Not said: allowed (JSON Schema default); the object is still "described" for shaping.
    Absent,
    /// `true` or `{}`: explicitly open.
    Any,
    /// `false`: not allowed.
    #[allow(
        dead_code,
        reason = "the generator emits it for `additionalProperties: false`, which today's \
                  schemas do not use"
    )]
    Never,
    /// Extra properties must match this schema (an open map).
    Schema(NodeId),
}

/// How the branches of an `anyOf` are told apart, found by the generator. Both forms only name
/// branches that certainly fail for a value; the branches left are checked as usual, and a
/// value the form cannot place (the property is missing, or has an unknown tag) takes the
/// generic path of trying every branch.
#[derive(Debug)]
pub(super) enum Union {
    /// Every branch pins property `key` to a string constant, `tags[i]` for branch `i`, all
    /// different (`"type": "text"` of `TextContent` ...): a value whose `key` is one of the tags
    /// can only match that branch (validation), and no other branch is plausible (shaping).
    ///
    /// With `sure`, an object whose `key` is `tags[i]` is plausible for branch `i` (nothing
    /// else in the branch pins a constant), so shaping need not ask.
    Tag {
        key: Name,
        tags: &'static [Name],
        sure: bool,
    },
    /// Branch `i` requires property `keys[i]` (`content` of `CallToolResult`, `task` of
    /// `CreateTaskResult`): a branch whose key the value lacks cannot match (validation only;
    /// shaping's plausibility does not look at required properties).
    Required { keys: &'static [Name] },
}

/// One compiled schema.
#[derive(Debug)]
pub(super) struct Node {
    /// The `false` schema.
    pub(super) never: bool,
    /// Allowed JSON types as `T_*` bits; 0 means any.
    pub(super) types: u8,
    pub(super) reference: Option<NodeId>,
    /// The node is only a `$ref` (no other keyword): checking it is checking the target.
    pub(super) pure_ref: bool,
    /// The node checks nothing but the type (it may list properties it puts no bound on, or
    /// allow any extra ones: `{"type": "object", "additionalProperties": {}}`).
    pub(super) type_only: bool,
    pub(super) constant: Option<Lit>,

    /// Every object is plausible for this schema (see `validate::plausible`): it admits
    /// objects, pins no constant, and so do the schemas it references, its `allOf` parts and
    /// one of its `anyOf` branches.
    pub(super) always_plausible: bool,

    /// Whether the schema has a `properties` keyword (even an empty one).
    pub(super) has_properties: bool,
    /// Sorted by name length, then name (see [`Node::property`]).
    pub(super) properties: &'static [Prop],
    pub(super) required: &'static [&'static str],
    /// The properties whose schema pins a constant (following `$ref`s), such as
    /// `"type": "text"`, with that constant and whether the property is required: what tells
    /// the branches of a union apart.
    pub(super) discriminators: &'static [(&'static str, Lit, bool)],
    pub(super) additional: Additional,
    pub(super) items: Option<NodeId>,
    /// `anyOf` and `oneOf` branches.
    pub(super) any_of: &'static [NodeId],
    /// How the `any_of` branches are told apart, when they can be.
    pub(super) union: Option<&'static Union>,
    pub(super) all_of: &'static [NodeId],
    /// What shaping gathers from this node for any object, when that does not depend on the
    /// object (composite nodes only).
    pub(super) view: Option<&'static View>,
    /// `enum` and the numeric bounds: few schemas have them.
    pub(super) bounds: Option<&'static Bounds>,
}

/// What shaping (`shape.rs`) gathers from a node for any object: the object schemas that
/// describe it, in order, and whether one leaves it open. The generator computes it where it
/// does not depend on the object, looking at most [`VIEW_DEPTH`] nodes deep.
#[derive(Debug)]
pub(super) struct View {
    pub(super) described: &'static [NodeId],
    pub(super) open: bool,
}

/// How deep (in `$ref`, `allOf` and `anyOf` steps) a [`View`] may have looked (the generator's
/// `UNION_DEPTH`): shaping uses a view only where its own depth limit is that far away.
pub(super) const VIEW_DEPTH: u32 = 16;

/// A listed property.
#[derive(Debug)]
pub(super) struct Prop {
    pub(super) name: Name,
    /// Its schema.
    pub(super) node: NodeId,
    /// Whether `required` lists the name.
    pub(super) required: bool,
}

impl Prop {
    /// For the generated tables.
    pub(super) const fn new(name: &'static str, node: NodeId, required: bool) -> Prop {
        Prop {
            name: Name::new(name),
            node,
            required,
        }
    }
}

/// A name of the schema with its first eight bytes as a number (computed at compile time), so
/// that comparing it with a [`Key`] mostly compares two integers and the length.
#[derive(Debug)]
pub(super) struct Name {
    pub(super) text: &'static str,
    head: u64,
}

impl Name {
    pub(super) const fn new(text: &'static str) -> Name {
        let bytes = text.as_bytes();
        let mut head = 0u64;
        let mut i = 0;
        while i < 8 && i < bytes.len() {
            head |= (bytes[i] as u64) << (8 * i);
            i += 1;
        }
        Name { text, head }
    }

    /// Whether this is `text` (a length check first: most names differ there).
    pub(super) fn is_str(&self, text: &str) -> bool {
        self.text.len() == text.len() && self.is(&Key::new(text))
    }

    /// Whether this is `key`.
    #[inline(always)]
    pub(super) fn is(&self, key: &Key<'_>) -> bool {
        self.head == key.head
            && self.text.len() == key.text.len()
            && (self.text.len() <= 8 || self.text == key.text)
    }
}

/// The field `name` of object `map`. (A tree search: walking even a two-field map costs more.)
pub(super) fn field<'m>(map: &'m Map<String, Value>, name: &Name) -> Option<&'m Value> {
    map.get(name.text)
}

impl Node {
    /// The `anyOf` branch a [`Union::Tag`] union's tag names in `map` (no other branch can
    /// match or is plausible), and whether the value is sure to be plausible for it.
    pub(super) fn tagged_branch(&self, map: &Map<String, Value>) -> Option<(NodeId, bool)> {
        let Some(Union::Tag { key, tags, sure }) = self.union else {
            return None;
        };
        let tag = field(map, key)?.as_str()?;
        let branch = tags.iter().position(|t| t.is_str(tag))?;
        self.any_of.get(branch).map(|&b| (b, *sure))
    }
}

/// A name met in a value (an object's key), prepared for comparing with [`Name`]s.
pub(super) struct Key<'a> {
    pub(super) text: &'a str,
    head: u64,
}

impl<'a> Key<'a> {
    pub(super) fn new(text: &'a str) -> Key<'a> {
        Key {
            text,
            head: head_word(text.as_bytes()),
        }
    }
}

/// The first eight bytes of `bytes` as a little-endian number, zero-padded (what
/// [`Name::new`] computes at compile time).
pub(super) fn head_word(bytes: &[u8]) -> u64 {
    word(bytes, 0)
}

/// The eight bytes of `bytes` from `start` as a little-endian number, zero-padded past the end.
pub(super) fn word(bytes: &[u8], start: usize) -> u64 {
    let rest = bytes.get(start..).unwrap_or_default();
    if let Some(chunk) = rest.first_chunk::<8>() {
        return u64::from_le_bytes(*chunk);
    }
    // Fewer than eight bytes: two overlapping four-byte reads, or byte by byte.
    if let (Some(low), Some(high)) = (rest.first_chunk::<4>(), rest.last_chunk::<4>()) {
        let (low, high) = (u32::from_le_bytes(*low), u32::from_le_bytes(*high));
        return u64::from(low) | u64::from(high) << (8 * (rest.len() - 4));
    }
    rest.iter()
        .enumerate()
        .fold(0, |w, (i, b)| w | u64::from(*b) << (8 * i))
}

/// The keywords few schemas use.
#[derive(Debug)]
pub(super) struct Bounds {
    pub(super) enumeration: Option<&'static [Lit]>,
    pub(super) minimum: Option<(f64, bool)>,
    pub(super) maximum: Option<(f64, bool)>,
    pub(super) min_items: Option<u64>,
    pub(super) max_items: Option<u64>,
    pub(super) min_length: Option<u64>,
    pub(super) max_length: Option<u64>,
}

impl Bounds {
    /// No bounds; the generator sets the ones a schema has.
    pub(super) const NONE: Bounds = Bounds {
        enumeration: None,
        minimum: None,
        maximum: None,
        min_items: None,
        max_items: None,
        min_length: None,
        max_length: None,
    };
}

/// The bounds of a node without any.
static NO_BOUNDS: Bounds = Bounds::NONE;

/// The answer for an out-of-range id.
static ANY: Node = Node::ANY;

impl Node {
    /// The schema that accepts everything; the generator sets the keywords a schema has.
    pub(super) const ANY: Node = Node {
        never: false,
        types: 0,
        reference: None,
        pure_ref: false,
        type_only: false,
        constant: None,
        always_plausible: false,
        has_properties: false,
        properties: &[],
        required: &[],
        discriminators: &[],
        additional: Additional::Absent,
        items: None,
        any_of: &[],
        union: None,
        all_of: &[],
        view: None,
        bounds: None,
    };

    /// `enum` and the numeric bounds (all absent for most nodes).
    pub(super) fn bounds(&self) -> &Bounds {
        self.bounds.unwrap_or(&NO_BOUNDS)
    }

    /// The schema of property `name`, if listed.
    #[inline(always)]
    pub(super) fn property(&self, name: &Key<'_>) -> Option<NodeId> {
        self.property_entry(name).map(|p| p.node)
    }

    /// The property `name`, if listed. A short list is scanned ([`Name::is`] mostly compares
    /// two integers); a long one is searched by length, then name.
    #[inline(always)]
    pub(super) fn property_entry(&self, name: &Key<'_>) -> Option<&Prop> {
        let props = self.properties;
        if props.len() <= 8 {
            return props.iter().find(|p| p.name.is(name));
        }
        Self::search(props, name)
    }

    fn search<'a>(props: &'a [Prop], name: &Key<'_>) -> Option<&'a Prop> {
        props
            .binary_search_by(|p| {
                let text = p.name.text;
                text.len()
                    .cmp(&name.text.len())
                    .then_with(|| text.cmp(name.text))
            })
            .ok()
            .and_then(|i| props.get(i))
    }

    /// Whether checking an object against this node looks at its fields at all: not for a
    /// schema without `required`, `properties` or a closed or typed `additionalProperties`.
    pub(super) fn inspects_fields(&self) -> bool {
        !self.required.is_empty()
            || !self.properties.is_empty()
            || matches!(self.additional, Additional::Never | Additional::Schema(_))
    }
}

/// The schemas of `version`.
pub(super) fn compiled(version: ProtocolVersion) -> &'static VersionData {
    VERSIONS[version as usize]
}

impl VersionData {
    /// The node with this id.
    pub(super) fn node(&self, id: NodeId) -> &Node {
        self.nodes.get(id as usize).unwrap_or(&ANY)
    }

    /// The table entry of `method` at this revision (all empty for a method it lacks).
    pub(super) fn entry(&self, method: &str) -> Option<&MethodEntry> {
        super::method_index(method).and_then(|i| self.methods.get(i))
    }

    /// The params schema of `method`, if this revision defines the method.
    pub(super) fn params(&self, method: &str) -> Option<NodeId> {
        self.entry(method).and_then(|e| e.params)
    }

    /// The result schema of request `method`, if this revision defines it.
    pub(super) fn result(&self, method: &str) -> Option<NodeId> {
        self.entry(method).and_then(|e| e.result)
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
