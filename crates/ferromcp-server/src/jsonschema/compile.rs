//! Compiling a schema document into an arena of nodes, with local `$ref`s resolved to indices.

use std::collections::HashMap;

use regex::{Regex, RegexBuilder};
use serde_json::{Map, Number, Value};

use super::error::SchemaError;
use super::limits::{InvalidPatternPolicy, Limits, UnknownKeywordPolicy};
use super::value::{exact_int, truncate};

/// A compiled subschema.
#[derive(Debug, Clone)]
pub(crate) enum Node {
    /// `true` (anything) or `false` (nothing).
    Bool(bool),
    /// A schema object.
    Schema(Box<Keywords>),
}

/// The `type` keyword as a bit set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Types(pub(crate) u8);

impl Types {
    pub(crate) const NULL: u8 = 1;
    pub(crate) const BOOLEAN: u8 = 2;
    pub(crate) const OBJECT: u8 = 4;
    pub(crate) const ARRAY: u8 = 8;
    pub(crate) const NUMBER: u8 = 16;
    pub(crate) const STRING: u8 = 32;
    pub(crate) const INTEGER: u8 = 64;
    const NAMES: [(u8, &'static str); 7] = [
        (Self::OBJECT, "object"),
        (Self::ARRAY, "array"),
        (Self::STRING, "string"),
        (Self::NUMBER, "number"),
        (Self::INTEGER, "integer"),
        (Self::BOOLEAN, "boolean"),
        (Self::NULL, "null"),
    ];

    fn bit(name: &str) -> Option<u8> {
        Self::NAMES
            .iter()
            .find(|(_, n)| *n == name)
            .map(|(b, _)| *b)
    }

    /// `string or null`.
    pub(crate) fn describe(self) -> String {
        let names: Vec<&str> = Self::NAMES
            .iter()
            .filter(|(b, _)| self.0 & b != 0)
            .map(|(_, n)| *n)
            .collect();
        names.join(" or ")
    }
}

/// The assertions and applicators of one schema object. Absent keywords are `None` or empty.
#[derive(Debug, Clone, Default)]
pub(crate) struct Keywords {
    pub(crate) reference: Option<usize>,
    pub(crate) types: Option<Types>,
    pub(crate) const_value: Option<Value>,
    pub(crate) enum_values: Option<Vec<Value>>,
    pub(crate) minimum: Option<Number>,
    pub(crate) maximum: Option<Number>,
    pub(crate) exclusive_minimum: Option<Number>,
    pub(crate) exclusive_maximum: Option<Number>,
    pub(crate) multiple_of: Option<Number>,
    pub(crate) min_length: Option<u64>,
    pub(crate) max_length: Option<u64>,
    pub(crate) pattern: Option<(Regex, String)>,
    pub(crate) prefix_items: Vec<usize>,
    pub(crate) items: Option<usize>,
    pub(crate) contains: Option<usize>,
    pub(crate) min_contains: Option<u64>,
    pub(crate) max_contains: Option<u64>,
    pub(crate) min_items: Option<u64>,
    pub(crate) max_items: Option<u64>,
    pub(crate) unique_items: bool,
    /// Sorted by name, for binary search.
    pub(crate) properties: Vec<(String, usize)>,
    pub(crate) pattern_properties: Vec<(Regex, usize)>,
    pub(crate) additional_properties: Option<usize>,
    pub(crate) property_names: Option<usize>,
    pub(crate) required: Vec<String>,
    pub(crate) min_properties: Option<u64>,
    pub(crate) max_properties: Option<u64>,
    pub(crate) dependent_required: Vec<(String, Vec<String>)>,
    pub(crate) dependent_schemas: Vec<(String, usize)>,
    pub(crate) all_of: Vec<usize>,
    pub(crate) any_of: Vec<usize>,
    pub(crate) one_of: Vec<usize>,
    pub(crate) not: Option<usize>,
    pub(crate) if_: Option<usize>,
    pub(crate) then_: Option<usize>,
    pub(crate) else_: Option<usize>,
}

impl Keywords {
    /// Whether any keyword looks at object members one by one.
    pub(crate) fn walks_members(&self) -> bool {
        !self.properties.is_empty()
            || !self.pattern_properties.is_empty()
            || self.additional_properties.is_some()
            || self.property_names.is_some()
    }
}

/// Annotations and keywords handled elsewhere: known, but with nothing to compile here.
const ANNOTATIONS: &[&str] = &[
    "$schema",
    "$id",
    "$comment",
    "$anchor",
    "$dynamicAnchor",
    "$vocabulary",
    "$defs",
    "definitions",
    "title",
    "description",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "format",
    "contentEncoding",
    "contentMediaType",
    "contentSchema",
    "additionalItems",
    "exclusiveMinimum",
    "exclusiveMaximum",
];

/// The compiled arena.
pub(crate) struct Compiled {
    pub(crate) nodes: Vec<Node>,
    pub(crate) root: usize,
}

struct Compiler<'a> {
    doc: &'a Value,
    limits: &'a Limits,
    nodes: Vec<Node>,
    /// Schema nodes plus `const`/`enum` value nodes.
    size: usize,
    /// JSON pointer (unescaped `~0`/`~1` form as written in the document) → node.
    locations: HashMap<String, usize>,
    anchors: HashMap<String, usize>,
    /// (node holding the `$ref`, the reference, its location).
    pending: Vec<(usize, String, String)>,
    root_id: Option<&'a str>,
}

/// Compiles `doc` under `limits`.
pub(crate) fn compile(doc: &Value, limits: &Limits) -> Result<Compiled, SchemaError> {
    let mut c = Compiler {
        doc,
        limits,
        nodes: Vec::new(),
        size: 0,
        locations: HashMap::new(),
        anchors: HashMap::new(),
        pending: Vec::new(),
        root_id: doc.get("$id").and_then(Value::as_str),
    };
    let mut ptr = String::new();
    let root = c.node(doc, &mut ptr, 0)?;
    // Resolving a reference may compile a new part of the document, which may hold more
    // references: a work list, never recursion, so `$ref` cycles cannot loop.
    while let Some((holder, reference, at)) = c.pending.pop() {
        let target = c.resolve(&reference, &at)?;
        if let Some(Node::Schema(kw)) = c.nodes.get_mut(holder) {
            kw.reference = Some(target);
        }
    }
    Ok(Compiled {
        nodes: c.nodes,
        root,
    })
}

fn escape_segment(out: &mut String, seg: &str) {
    for ch in seg.chars() {
        match ch {
            '~' => out.push_str("~0"),
            '/' => out.push_str("~1"),
            c => out.push(c),
        }
    }
}

fn percent_decode(s: &str) -> Option<String> {
    if !s.contains('%') {
        return Some(s.to_owned());
    }
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

fn invalid(keyword: &str, at: &str, reason: &str) -> SchemaError {
    SchemaError::InvalidKeyword {
        keyword: keyword.to_owned(),
        at: at.to_owned(),
        reason: reason.to_owned(),
    }
}

impl<'a> Compiler<'a> {
    fn resolve(&mut self, reference: &str, at: &str) -> Result<usize, SchemaError> {
        let unresolved = || SchemaError::UnresolvedRef {
            reference: reference.to_owned(),
            at: at.to_owned(),
        };
        let fragment = match reference.split_once('#') {
            Some(("", frag)) => frag,
            Some((base, frag)) if Some(base) == self.root_id => frag,
            _ if Some(reference) == self.root_id => "",
            _ => {
                return Err(SchemaError::RemoteRef {
                    reference: reference.to_owned(),
                    at: at.to_owned(),
                });
            }
        };
        let fragment = percent_decode(fragment).ok_or_else(unresolved)?;
        if !fragment.is_empty() && !fragment.starts_with('/') {
            return self.anchors.get(&fragment).copied().ok_or_else(unresolved);
        }
        if let Some(&idx) = self.locations.get(&fragment) {
            return Ok(idx);
        }
        let target = self.doc.pointer(&fragment).ok_or_else(unresolved)?;
        if !matches!(target, Value::Object(_) | Value::Bool(_)) {
            return Err(unresolved());
        }
        let mut ptr = fragment;
        self.node(target, &mut ptr, 0)
    }

    fn push(&mut self, node: Node) -> Result<usize, SchemaError> {
        self.grow(1)?;
        self.nodes.push(node);
        Ok(self.nodes.len() - 1)
    }

    fn grow(&mut self, by: usize) -> Result<(), SchemaError> {
        self.size = self.size.saturating_add(by);
        if self.size > self.limits.max_schema_nodes {
            return Err(SchemaError::TooManyNodes {
                limit: self.limits.max_schema_nodes,
            });
        }
        Ok(())
    }

    /// Counts the nodes of a `const`/`enum` value against the size and depth limits.
    fn count_value(&mut self, v: &Value, depth: usize, at: &str) -> Result<(), SchemaError> {
        if depth > self.limits.max_schema_depth {
            return Err(SchemaError::TooDeep {
                limit: self.limits.max_schema_depth,
                at: at.to_owned(),
            });
        }
        self.grow(1)?;
        match v {
            Value::Array(items) => items
                .iter()
                .try_for_each(|i| self.count_value(i, depth + 1, at)),
            Value::Object(map) => map
                .values()
                .try_for_each(|i| self.count_value(i, depth + 1, at)),
            _ => Ok(()),
        }
    }

    /// Compiles the subschema at `ptr` + `/seg...` and restores `ptr`.
    fn child(
        &mut self,
        v: &Value,
        ptr: &mut String,
        segs: &[&str],
        depth: usize,
    ) -> Result<usize, SchemaError> {
        let len = ptr.len();
        for seg in segs {
            ptr.push('/');
            escape_segment(ptr, seg);
        }
        let r = self.node(v, ptr, depth + 1);
        ptr.truncate(len);
        r
    }

    fn children(
        &mut self,
        v: &Value,
        ptr: &mut String,
        kw: &str,
        depth: usize,
    ) -> Result<Vec<usize>, SchemaError> {
        let Value::Array(items) = v else {
            return Err(invalid(kw, ptr, "must be an array of schemas"));
        };
        if items.is_empty() {
            return Err(invalid(kw, ptr, "must not be empty"));
        }
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            out.push(self.child(item, ptr, &[kw, &i.to_string()], depth)?);
        }
        Ok(out)
    }

    fn members(
        &mut self,
        v: &Value,
        ptr: &mut String,
        kw: &str,
        depth: usize,
    ) -> Result<Vec<(String, usize)>, SchemaError> {
        let Value::Object(map) = v else {
            return Err(invalid(kw, ptr, "must be an object of schemas"));
        };
        let mut out = Vec::with_capacity(map.len());
        for (name, sub) in map {
            out.push((name.clone(), self.child(sub, ptr, &[kw, name], depth)?));
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(out)
    }

    fn regex(&self, kw: &str, v: &Value, at: &str) -> Result<Option<Regex>, SchemaError> {
        let Some(pattern) = v.as_str() else {
            return Err(invalid(kw, at, "must be a string"));
        };
        let built = RegexBuilder::new(pattern)
            .size_limit(self.limits.max_regex_size)
            .dfa_size_limit(self.limits.max_regex_size)
            .build();
        match (built, self.limits.invalid_patterns) {
            (Ok(re), _) => Ok(Some(re)),
            (Err(_), InvalidPatternPolicy::Ignore) => Ok(None),
            (Err(e), _) => Err(SchemaError::InvalidPattern {
                pattern: truncate(pattern, 200),
                at: at.to_owned(),
                reason: truncate(&e.to_string(), 500),
            }),
        }
    }

    fn node(&mut self, v: &Value, ptr: &mut String, depth: usize) -> Result<usize, SchemaError> {
        if depth > self.limits.max_schema_depth {
            return Err(SchemaError::TooDeep {
                limit: self.limits.max_schema_depth,
                at: ptr.clone(),
            });
        }
        let map = match v {
            Value::Bool(b) => {
                let idx = self.push(Node::Bool(*b))?;
                self.locations.insert(ptr.clone(), idx);
                return Ok(idx);
            }
            Value::Object(map) => map,
            _ => return Err(SchemaError::NotASchema { at: ptr.clone() }),
        };
        // Registered before its children, so a reference to it from inside resolves to it.
        let idx = self.push(Node::Bool(true))?;
        self.locations.insert(ptr.clone(), idx);
        let kw = self.keywords(map, ptr, depth, idx)?;
        if let Some(slot) = self.nodes.get_mut(idx) {
            *slot = Node::Schema(kw);
        }
        Ok(idx)
    }

    /// The keywords of one schema object. Only small frames stay on the stack while
    /// subschemas compile: [`Self::applicator`] recurses, [`Self::assertion`] does not.
    fn keywords(
        &mut self,
        map: &Map<String, Value>,
        ptr: &mut String,
        depth: usize,
        idx: usize,
    ) -> Result<Box<Keywords>, SchemaError> {
        let mut kw = Box::<Keywords>::default();
        for (name, v) in map {
            if !self.applicator(name, v, &mut kw, ptr, depth)? {
                self.assertion(name, v, &mut kw, ptr, depth, idx)?;
            }
        }
        // exclusiveMinimum/Maximum: a number (2019+), or a boolean modifying minimum (draft 4).
        let kw_ref = &mut *kw;
        for (name, plain, slot) in [
            (
                "exclusiveMinimum",
                &mut kw_ref.minimum,
                &mut kw_ref.exclusive_minimum,
            ),
            (
                "exclusiveMaximum",
                &mut kw_ref.maximum,
                &mut kw_ref.exclusive_maximum,
            ),
        ] {
            match map.get(name) {
                None | Some(Value::Bool(false)) => {}
                Some(Value::Bool(true)) => *slot = plain.take(),
                Some(Value::Number(n)) => *slot = Some(n.clone()),
                Some(_) => return Err(invalid(name, ptr, "must be a number")),
            }
        }
        // Draft 7: with `items` an array, `additionalItems` applies to the rest.
        if let Some(extra) = map.get("additionalItems")
            && matches!(map.get("items"), Some(Value::Array(_)))
        {
            kw.items = Some(self.child(extra, ptr, &["additionalItems"], depth)?);
        }
        Ok(kw)
    }

    /// Compiles a keyword holding subschemas; `false` if `name` is not one.
    fn applicator(
        &mut self,
        name: &str,
        v: &Value,
        kw: &mut Keywords,
        ptr: &mut String,
        depth: usize,
    ) -> Result<bool, SchemaError> {
        match name {
            "$defs" | "definitions" => {
                self.members(v, ptr, name, depth)?;
            }
            "items" => match v {
                Value::Array(_) => kw.prefix_items = self.children(v, ptr, name, depth)?,
                _ => kw.items = Some(self.child(v, ptr, &[name], depth)?),
            },
            "prefixItems" => kw.prefix_items = self.children(v, ptr, name, depth)?,
            "contains" => kw.contains = Some(self.child(v, ptr, &[name], depth)?),
            "properties" => kw.properties = self.members(v, ptr, name, depth)?,
            "patternProperties" => self.pattern_properties(v, kw, ptr, depth)?,
            "additionalProperties" => {
                kw.additional_properties = Some(self.child(v, ptr, &[name], depth)?);
            }
            "propertyNames" => kw.property_names = Some(self.child(v, ptr, &[name], depth)?),
            "dependentSchemas" => kw.dependent_schemas = self.members(v, ptr, name, depth)?,
            "dependencies" => self.dependencies(v, kw, ptr, depth)?,
            "allOf" => kw.all_of = self.children(v, ptr, name, depth)?,
            "anyOf" => kw.any_of = self.children(v, ptr, name, depth)?,
            "oneOf" => kw.one_of = self.children(v, ptr, name, depth)?,
            "not" => kw.not = Some(self.child(v, ptr, &[name], depth)?),
            "if" => kw.if_ = Some(self.child(v, ptr, &[name], depth)?),
            "then" => kw.then_ = Some(self.child(v, ptr, &[name], depth)?),
            "else" => kw.else_ = Some(self.child(v, ptr, &[name], depth)?),
            _ => return Ok(false),
        }
        Ok(true)
    }

    fn pattern_properties(
        &mut self,
        v: &Value,
        kw: &mut Keywords,
        ptr: &mut String,
        depth: usize,
    ) -> Result<(), SchemaError> {
        let name = "patternProperties";
        let Value::Object(pats) = v else {
            return Err(invalid(name, ptr, "must be an object of schemas"));
        };
        for (pat, sub) in pats {
            let node = self.child(sub, ptr, &[name, pat], depth)?;
            if let Some(re) = self.regex(name, &Value::String(pat.clone()), ptr)? {
                kw.pattern_properties.push((re, node));
            }
        }
        Ok(())
    }

    /// Draft 7 `dependencies`: string arrays are `dependentRequired`, schemas
    /// `dependentSchemas`.
    fn dependencies(
        &mut self,
        v: &Value,
        kw: &mut Keywords,
        ptr: &mut String,
        depth: usize,
    ) -> Result<(), SchemaError> {
        let name = "dependencies";
        let Value::Object(deps) = v else {
            return Err(invalid(name, ptr, "must be an object"));
        };
        for (prop, dep) in deps {
            if let Value::Array(_) = dep {
                let names =
                    strings(dep).ok_or_else(|| invalid(name, ptr, "arrays must hold strings"))?;
                self.grow(names.len() + 1)?;
                kw.dependent_required.push((prop.clone(), names));
            } else {
                let node = self.child(dep, ptr, &[name, prop], depth)?;
                kw.dependent_schemas.push((prop.clone(), node));
            }
        }
        Ok(())
    }

    /// Compiles a keyword without subschemas (assertions, `$ref`, anchors, annotations).
    fn assertion(
        &mut self,
        name: &str,
        v: &Value,
        kw: &mut Keywords,
        at: &str,
        depth: usize,
        idx: usize,
    ) -> Result<(), SchemaError> {
        let count = |v: &Value| {
            v.as_u64()
                .or_else(|| {
                    v.as_f64()
                        .filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f < 1.8e19)
                        .map(|f| f as u64)
                })
                .ok_or_else(|| invalid(name, at, "must be a non-negative integer"))
        };
        let number = |v: &Value| match v {
            Value::Number(n) => Ok(n.clone()),
            _ => Err(invalid(name, at, "must be a number")),
        };
        match name {
            "$ref" => {
                let r = v
                    .as_str()
                    .ok_or_else(|| invalid(name, at, "must be a string"))?;
                self.pending.push((idx, r.to_owned(), at.to_owned()));
            }
            "$anchor" | "$dynamicAnchor" => {
                if let Some(a) = v.as_str() {
                    self.anchors.insert(a.to_owned(), idx);
                }
            }
            "type" => {
                let mut bits = 0;
                let names: Vec<&Value> = match v {
                    Value::Array(a) => a.iter().collect(),
                    other => vec![other],
                };
                for n in names {
                    let b = n.as_str().and_then(Types::bit).ok_or_else(|| {
                        invalid(name, at, "must be a type name or an array of them")
                    })?;
                    bits |= b;
                }
                kw.types = Some(Types(bits));
            }
            "const" => {
                self.count_value(v, depth + 1, at)?;
                kw.const_value = Some(v.clone());
            }
            "enum" => {
                let Value::Array(values) = v else {
                    return Err(invalid(name, at, "must be an array"));
                };
                self.count_value(v, depth + 1, at)?;
                kw.enum_values = Some(values.clone());
            }
            "minimum" => kw.minimum = Some(number(v)?),
            "maximum" => kw.maximum = Some(number(v)?),
            "multipleOf" => {
                let n = number(v)?;
                let positive =
                    exact_int(&n).map_or_else(|| n.as_f64().is_some_and(|f| f > 0.0), |i| i > 0);
                if !positive {
                    return Err(invalid(name, at, "must be greater than 0"));
                }
                kw.multiple_of = Some(n);
            }
            "minLength" => kw.min_length = Some(count(v)?),
            "maxLength" => kw.max_length = Some(count(v)?),
            "pattern" => {
                if let Some(re) = self.regex(name, v, at)? {
                    kw.pattern = Some((re, truncate(v.as_str().unwrap_or_default(), 200)));
                }
            }
            "minContains" => kw.min_contains = Some(count(v)?),
            "maxContains" => kw.max_contains = Some(count(v)?),
            "minItems" => kw.min_items = Some(count(v)?),
            "maxItems" => kw.max_items = Some(count(v)?),
            "uniqueItems" => {
                kw.unique_items = v
                    .as_bool()
                    .ok_or_else(|| invalid(name, at, "must be a boolean"))?;
            }
            "required" => {
                kw.required =
                    strings(v).ok_or_else(|| invalid(name, at, "must be an array of strings"))?;
                self.grow(kw.required.len())?;
            }
            "minProperties" => kw.min_properties = Some(count(v)?),
            "maxProperties" => kw.max_properties = Some(count(v)?),
            "dependentRequired" => {
                kw.dependent_required = dependent_required(v)
                    .ok_or_else(|| invalid(name, at, "must be an object of string arrays"))?;
                let names = kw.dependent_required.iter().map(|(_, n)| n.len() + 1).sum();
                self.grow(names)?;
            }
            other if ANNOTATIONS.contains(&other) => {}
            other => {
                if self.limits.unknown_keywords == UnknownKeywordPolicy::Error {
                    return Err(SchemaError::UnknownKeyword {
                        keyword: truncate(other, 200),
                        at: at.to_owned(),
                    });
                }
            }
        }
        Ok(())
    }
}

fn strings(v: &Value) -> Option<Vec<String>> {
    v.as_array()?
        .iter()
        .map(|s| s.as_str().map(str::to_owned))
        .collect()
}

fn dependent_required(v: &Value) -> Option<Vec<(String, Vec<String>)>> {
    v.as_object()?
        .iter()
        .map(|(k, names)| Some((k.clone(), strings(names)?)))
        .collect()
}
