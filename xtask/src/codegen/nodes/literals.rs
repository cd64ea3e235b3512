//! Writing an arena as Rust: the statics of the runtime's `VersionData` (the pools the nodes
//! index) and one node literal per line.

use std::collections::HashMap;
use std::fmt::Write as _;

use serde_json::Value;

use super::{Additional, Arena, Node, TYPES, Union};

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
