//! Compiling the sanitized schemas into nodes: definitions first, in name order, then the
//! nodes they are made of, equal ones shared.

use std::collections::{BTreeMap, HashMap};

use serde_json::{Map, Value};

use crate::codegen::extract::VersionTables;

use super::{Additional, Arena, Node, TYPES};

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
