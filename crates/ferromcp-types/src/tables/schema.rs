//! The compiled form of a revision's schemas: a static arena of nodes, emitted into
//! `generated.rs` by `cargo xtask codegen` (`xtask/src/codegen/nodes/` compiles the
//! sanitized schema JSON into these nodes). Nothing is parsed or built at run time, so the
//! first request of a revision costs no more than the second.
//!
//! The tables hold no pointers: a node names its properties, branches and names by index
//! ranges ([`Span`]) into a few flat arrays of its revision, and a name by its place in the
//! revision's string blob. In a position-independent executable every pointer in a static
//! is a relocation the dynamic loader applies at every start (and a page it copies); these
//! tables land in `.rodata` instead, and only the few fields of each [`VersionData`] point
//! at them. The accessors of [`VersionData`] (`props`, `any_of`, `text`, ...) resolve them.
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
/// three representations, so that [`VersionData::lit_matches`] is exactly
/// `serde_json::Value`'s equality.
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
    /// A string, in the revision's string blob.
    Str(Name),
}

/// A range of one of a revision's flat arrays (`props`, `names`, `ids`, ...): what a
/// `&'static [T]` would be, without the pointer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Span {
    pub(super) start: u32,
    pub(super) len: u32,
}

impl Span {
    /// The empty range.
    pub(super) const EMPTY: Span = Span { start: 0, len: 0 };

    /// For the generated tables.
    pub(super) const fn new(start: u32, len: u32) -> Span {
        Span { start, len }
    }

    pub(super) const fn is_empty(self) -> bool {
        self.len == 0
    }

    pub(super) const fn len(self) -> usize {
        self.len as usize
    }

    /// The elements of `all` in the range (none if it is out of bounds, which the generator
    /// never emits).
    #[inline(always)]
    pub(super) fn of<T>(self, all: &[T]) -> &[T] {
        let start = self.start as usize;
        all.get(start..start + self.len as usize)
            .unwrap_or_default()
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
    ///
    /// `tags` is a range of [`VersionData::names`].
    Tag { key: Name, tags: Span, sure: bool },
    /// Branch `i` requires property `keys[i]` (`content` of `CallToolResult`, `task` of
    /// `CreateTaskResult`): a branch whose key the value lacks cannot match (validation only;
    /// shaping's plausibility does not look at required properties). `keys` is a range of
    /// [`VersionData::names`].
    Required { keys: Span },
}

/// A property whose schema pins a constant (see [`Node::discriminators`]): its name, the
/// constant and whether the property is required.
pub(super) type Discriminator = (Name, Lit, bool);

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
    /// Sorted by name length, then name (see [`VersionData::property`]); a range of
    /// [`VersionData::props`].
    pub(super) properties: Span,
    /// A range of [`VersionData::names`].
    pub(super) required: Span,
    /// The properties whose schema pins a constant (following `$ref`s), such as
    /// `"type": "text"`, with that constant and whether the property is required: what tells
    /// the branches of a union apart. A range of [`VersionData::discriminators`].
    pub(super) discriminators: Span,
    pub(super) additional: Additional,
    pub(super) items: Option<NodeId>,
    /// `anyOf` and `oneOf` branches: a range of [`VersionData::ids`].
    pub(super) any_of: Span,
    /// How the `any_of` branches are told apart, when they can be: an index of
    /// [`VersionData::unions`].
    pub(super) union: Option<u32>,
    /// A range of [`VersionData::ids`].
    pub(super) all_of: Span,
    /// What shaping gathers from this node for any object, when that does not depend on the
    /// object (composite nodes only): an index of [`VersionData::views`].
    pub(super) view: Option<u32>,
    /// `enum` and the numeric bounds (few schemas have them): an index of
    /// [`VersionData::bounds`].
    pub(super) bounds: Option<u32>,
}

/// What shaping (`shape.rs`) gathers from a node for any object: the object schemas that
/// describe it, in order, and whether one leaves it open. The generator computes it where it
/// does not depend on the object, looking at most [`VIEW_DEPTH`] nodes deep.
#[derive(Debug)]
pub(super) struct View {
    /// A range of [`VersionData::ids`].
    pub(super) described: Span,
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
    /// For the generated tables: the property `text`, found at byte `offset` of the
    /// revision's string blob.
    pub(super) const fn new(offset: u32, text: &str, node: NodeId, required: bool) -> Prop {
        Prop {
            name: Name::new(offset, text),
            node,
            required,
        }
    }
}

/// A name of the schema: where it is in the revision's string blob
/// ([`VersionData::text`]), with its length and first eight bytes as a number (computed at
/// compile time), so that comparing it with a [`Key`] mostly compares two integers and the
/// length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Name {
    head: u64,
    offset: u32,
    len: u32,
}

impl Name {
    /// For the generated tables: `text`, found at byte `offset` of the revision's string blob
    /// (the text itself is only read here, at compile time).
    pub(super) const fn new(offset: u32, text: &str) -> Name {
        let bytes = text.as_bytes();
        let mut head = 0u64;
        let mut i = 0;
        while i < 8 && i < bytes.len() {
            head |= (bytes[i] as u64) << (8 * i);
            i += 1;
        }
        Name {
            head,
            offset,
            len: bytes.len() as u32,
        }
    }

    /// The length in bytes.
    pub(super) const fn len(self) -> usize {
        self.len as usize
    }

    /// Whether this is `key`: the length and first eight bytes, and, for a longer name, the
    /// text (in `strings`, the revision's string blob).
    #[inline(always)]
    pub(super) fn is(&self, key: &Key<'_>, strings: &str) -> bool {
        self.head == key.head
            && self.len() == key.text.len()
            && (self.len() <= 8 || self.bytes(strings) == key.text.as_bytes())
    }

    /// The text's bytes in `strings` (the revision's string blob).
    #[inline(always)]
    fn bytes(self, strings: &str) -> &[u8] {
        let start = self.offset as usize;
        strings
            .as_bytes()
            .get(start..start + self.len())
            .unwrap_or_default()
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
    /// A range of [`VersionData::lits`].
    pub(super) enumeration: Option<Span>,
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
        properties: Span::EMPTY,
        required: Span::EMPTY,
        discriminators: Span::EMPTY,
        additional: Additional::Absent,
        items: None,
        any_of: Span::EMPTY,
        union: None,
        all_of: Span::EMPTY,
        view: None,
        bounds: None,
    };

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
    pub(super) fn node(&self, id: NodeId) -> &'static Node {
        self.nodes.get(id as usize).unwrap_or(&ANY)
    }

    /// The text of `name`.
    #[inline(always)]
    pub(super) fn text(&self, name: &Name) -> &'static str {
        let start = name.offset as usize;
        self.strings
            .get(start..start + name.len())
            .unwrap_or_default()
    }

    /// The listed properties of `node`, sorted by name length, then name.
    #[inline(always)]
    pub(super) fn props(&self, node: &Node) -> &'static [Prop] {
        node.properties.of(self.props)
    }

    /// The names `node` requires.
    #[inline(always)]
    pub(super) fn required(&self, node: &Node) -> &'static [Name] {
        node.required.of(self.names)
    }

    /// The properties of `node` that pin a constant (see [`Node::discriminators`]).
    pub(super) fn discriminators(&self, node: &Node) -> &'static [Discriminator] {
        node.discriminators.of(self.discriminators)
    }

    /// The `anyOf` (and `oneOf`) branches of `node`.
    #[inline(always)]
    pub(super) fn any_of(&self, node: &Node) -> &'static [NodeId] {
        node.any_of.of(self.ids)
    }

    /// The `allOf` parts of `node`.
    #[inline(always)]
    pub(super) fn all_of(&self, node: &Node) -> &'static [NodeId] {
        node.all_of.of(self.ids)
    }

    /// How the branches of `node` are told apart, when they can be.
    pub(super) fn union(&self, node: &Node) -> Option<&'static Union> {
        node.union.and_then(|i| self.unions.get(i as usize))
    }

    /// What shaping gathers from `node` for any object, if known in advance.
    pub(super) fn view(&self, node: &Node) -> Option<&'static View> {
        node.view.and_then(|i| self.views.get(i as usize))
    }

    /// The described schemas of `view`.
    pub(super) fn described(&self, view: &View) -> &'static [NodeId] {
        view.described.of(self.ids)
    }

    /// The `enum` and numeric bounds of `node`, if it has any.
    #[inline(always)]
    pub(super) fn bounds(&self, node: &Node) -> Option<&'static Bounds> {
        node.bounds.and_then(|i| self.bounds.get(i as usize))
    }

    /// [`VersionData::bounds`], all absent for a node without any.
    pub(super) fn bounds_or_none(&self, node: &Node) -> &'static Bounds {
        self.bounds(node).unwrap_or(&NO_BOUNDS)
    }

    /// The `enum` of `bounds`, if any.
    pub(super) fn enumeration(&self, bounds: &Bounds) -> Option<&'static [Lit]> {
        bounds.enumeration.map(|span| span.of(self.lits))
    }

    /// The names of a range of [`VersionData::names`] (a union's tags or keys).
    pub(super) fn names(&self, span: Span) -> &'static [Name] {
        span.of(self.names)
    }

    /// `name` as a [`Key`] (its first eight bytes are known: no need to read them again).
    #[inline(always)]
    pub(super) fn key(&self, name: &Name) -> Key<'static> {
        Key {
            text: self.text(name),
            head: name.head,
        }
    }

    /// The field `name` of object `map`. (A tree search: walking even a two-field map costs
    /// more.)
    #[inline(always)]
    pub(super) fn field<'m>(&self, map: &'m Map<String, Value>, name: &Name) -> Option<&'m Value> {
        map.get(self.text(name))
    }

    /// The schema of property `name` of `node`, if listed.
    #[inline(always)]
    pub(super) fn property(&self, node: &Node, name: &Key<'_>) -> Option<NodeId> {
        self.property_entry(node, name).map(|p| p.node)
    }

    /// The property `name` of `node`, if listed. A short list is scanned ([`Name::is`] mostly
    /// compares two integers); a long one is searched by length, then name.
    #[inline(always)]
    pub(super) fn property_entry(&self, node: &Node, name: &Key<'_>) -> Option<&'static Prop> {
        self.find_prop(self.props(node), name)
    }

    /// The property `name` among `props` (what [`VersionData::props`] gave for a node: a walk
    /// over an object's fields resolves the list once).
    #[inline(always)]
    pub(super) fn find_prop(
        &self,
        props: &'static [Prop],
        name: &Key<'_>,
    ) -> Option<&'static Prop> {
        if props.len() <= 8 {
            return props.iter().find(|p| p.name.is(name, self.strings));
        }
        self.search(props, name)
    }

    fn search(&self, props: &'static [Prop], name: &Key<'_>) -> Option<&'static Prop> {
        props
            .binary_search_by(|p| {
                let text = self.text(&p.name);
                text.len()
                    .cmp(&name.text.len())
                    .then_with(|| text.cmp(name.text))
            })
            .ok()
            .and_then(|i| props.get(i))
    }

    /// The `anyOf` branch a [`Union::Tag`] union's tag names in `map` (no other branch can
    /// match or is plausible), and whether the value is sure to be plausible for it.
    pub(super) fn tagged_branch(
        &self,
        node: &Node,
        map: &Map<String, Value>,
    ) -> Option<(NodeId, bool)> {
        let Some(Union::Tag { key, tags, sure }) = self.union(node) else {
            return None;
        };
        let tag = Key::new(self.field(map, key)?.as_str()?);
        let branch = self
            .names(*tags)
            .iter()
            .position(|t| t.is(&tag, self.strings))?;
        self.any_of(node).get(branch).map(|&b| (b, *sure))
    }

    /// Whether `value` equals the constant `lit` (as `Value == Value` would say).
    #[inline]
    pub(super) fn lit_matches(&self, lit: &Lit, value: &Value) -> bool {
        match (lit, value) {
            (Lit::Null, Value::Null) => true,
            (Lit::Bool(b), Value::Bool(v)) => b == v,
            (Lit::Str(s), Value::String(v)) => self.text(s) == v.as_str(),
            (Lit::Uint(u), Value::Number(n)) => n.is_u64() && n.as_u64() == Some(*u),
            (Lit::Int(i), Value::Number(n)) => !n.is_u64() && n.is_i64() && n.as_i64() == Some(*i),
            (Lit::Float(f), Value::Number(n)) => n.is_f64() && n.as_f64() == Some(*f),
            _ => false,
        }
    }

    /// The constant `lit` as a JSON value (for error messages).
    pub(super) fn lit_value(&self, lit: Lit) -> Value {
        match lit {
            Lit::Null => Value::Null,
            Lit::Bool(b) => Value::Bool(b),
            Lit::Uint(u) => Value::Number(u.into()),
            Lit::Int(i) => Value::Number(i.into()),
            Lit::Float(f) => Number::from_f64(f).map_or(Value::Null, Value::Number),
            Lit::Str(s) => Value::String(self.text(&s).to_owned()),
        }
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
