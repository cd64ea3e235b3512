//! Reading one revision's schema: method unions, params and result schemas, reachable
//! definitions.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use serde_json::{Map, Value, json};

/// The four message unions of a revision, in the order of the generated `Kind` bits.
pub(crate) const UNIONS: [&str; 4] = [
    "ClientRequest",
    "ClientNotification",
    "ServerRequest",
    "ServerNotification",
];

/// Everything the generated file holds about one revision.
pub(crate) struct VersionTables {
    /// The revision string, such as `2025-11-25`.
    pub(crate) version: String,
    /// Method names per union (same order as [`UNIONS`]), sorted.
    pub(crate) methods: [BTreeSet<String>; 4],
    /// Reachable definitions, sanitized, by name.
    pub(crate) defs: BTreeMap<String, Value>,
    /// Params schema per method (requests and notifications).
    pub(crate) params: BTreeMap<String, Value>,
    /// Result schema per request method.
    pub(crate) results: BTreeMap<String, Value>,
    /// Human-readable provenance per method, for comments in the generated file.
    pub(crate) notes: BTreeMap<String, String>,
}

/// One schema document with its definitions and its `$ref` prefix.
struct Spec<'a> {
    defs: &'a Map<String, Value>,
    prefix: &'static str,
}

impl<'a> Spec<'a> {
    fn new(schema: &'a Value) -> Result<Self, String> {
        if let Some(defs) = schema.get("$defs").and_then(Value::as_object) {
            Ok(Spec {
                defs,
                prefix: "#/$defs/",
            })
        } else if let Some(defs) = schema.get("definitions").and_then(Value::as_object) {
            Ok(Spec {
                defs,
                prefix: "#/definitions/",
            })
        } else {
            Err("neither `$defs` nor `definitions` found".into())
        }
    }

    fn def(&self, name: &str) -> Option<&'a Value> {
        self.defs.get(name)
    }

    fn ref_name<'v>(&self, schema: &'v Value) -> Result<Option<&'v str>, String> {
        match schema.get("$ref") {
            None => Ok(None),
            Some(Value::String(r)) => r
                .strip_prefix(self.prefix)
                .map(Some)
                .ok_or_else(|| format!("unsupported $ref {r:?}")),
            Some(other) => Err(format!("$ref is not a string: {other}")),
        }
    }

    fn reference(&self, name: &str) -> Value {
        json!({ "$ref": format!("{}{name}", self.prefix) })
    }

    /// The definition a `$ref` points at, or the schema itself.
    fn resolve<'v>(&self, schema: &'v Value) -> Result<&'v Value, String>
    where
        'a: 'v,
    {
        match self.ref_name(schema)? {
            Some(name) => self
                .def(name)
                .ok_or_else(|| format!("dangling $ref to {name}")),
            None => Ok(schema),
        }
    }
}

/// Extracts the tables of one revision from its parsed schema.
pub(crate) fn extract(version: &str, schema: &Value) -> Result<VersionTables, String> {
    let spec = Spec::new(schema)?;
    let mut out = VersionTables {
        version: version.to_owned(),
        methods: Default::default(),
        defs: BTreeMap::new(),
        params: BTreeMap::new(),
        results: BTreeMap::new(),
        notes: BTreeMap::new(),
    };
    for (slot, union) in UNIONS.iter().enumerate() {
        for (def_name, member) in union_members(&spec, union)? {
            let method = member
                .pointer("/properties/method/const")
                .and_then(Value::as_str)
                .ok_or_else(|| format!("{union} member {def_name} has no `method` const"))?
                .to_owned();
            let params = member
                .pointer("/properties/params")
                .cloned()
                .unwrap_or_else(|| json!({ "type": "object" }));
            let mut note = format!("{union} {def_name}");
            if union.ends_with("Request") {
                let (result, result_note) = result_schema(&spec, &def_name, &params)?;
                note.push_str(&format!(" -> {result_note}"));
                insert_same(
                    &mut out.results,
                    &method,
                    sanitize(&spec, &result, "result")?,
                )?;
            }
            insert_same(
                &mut out.params,
                &method,
                sanitize(&spec, &params, "params")?,
            )?;
            out.notes
                .entry(method.clone())
                .and_modify(|n| n.push_str(&format!("; {union}")))
                .or_insert(note);
            out.methods[slot].insert(method);
        }
    }
    out.defs = reachable_defs(&spec, out.params.values().chain(out.results.values()))?;
    Ok(out)
}

/// Records `value` for `method`, checking that a method listed in two unions (such as `ping`)
/// has the same schema in both.
fn insert_same(
    map: &mut BTreeMap<String, Value>,
    method: &str,
    value: Value,
) -> Result<(), String> {
    match map.get(method) {
        Some(existing) if *existing != value => {
            Err(format!("{method} has different schemas in two unions"))
        }
        _ => {
            map.insert(method.to_owned(), value);
            Ok(())
        }
    }
}

/// The members of a union definition: `anyOf` of `$ref`s, a single `$ref`, or (when the union
/// has one member) the member inlined. A union the revision lacks has no members.
fn union_members<'a>(spec: &Spec<'a>, union: &str) -> Result<Vec<(String, &'a Value)>, String> {
    let Some(def) = spec.def(union) else {
        return Ok(Vec::new());
    };
    let branches: Vec<&Value> = match def.get("anyOf").and_then(Value::as_array) {
        Some(list) => list.iter().collect(),
        None => vec![def],
    };
    let mut members = Vec::with_capacity(branches.len());
    for branch in branches {
        if let Some(name) = spec.ref_name(branch)? {
            let target = spec
                .def(name)
                .ok_or_else(|| format!("dangling $ref to {name}"))?;
            members.push((name.to_owned(), target));
        } else {
            // Inlined single member: name it after the definition with the same method, if any.
            let method = branch.pointer("/properties/method/const");
            let name = spec
                .defs
                .iter()
                .find(|(n, d)| {
                    n.as_str() != union
                        && method.is_some()
                        && d.pointer("/properties/method/const") == method
                })
                .map_or_else(|| union.to_owned(), |(n, _)| n.clone());
            members.push((name, branch));
        }
    }
    Ok(members)
}

/// The result schema of a request definition `FooRequest`:
/// the `result` of `FooResultResponse` when the revision has one (2026-07-28 onwards), else
/// `FooResult`, else `EmptyResult`; at revisions with task augmentation, a request whose params
/// accept `task` may also be answered with `CreateTaskResult`.
fn result_schema(
    spec: &Spec<'_>,
    def_name: &str,
    params: &Value,
) -> Result<(Value, String), String> {
    let base = def_name.strip_suffix("Request").unwrap_or(def_name);
    let response = format!("{base}ResultResponse");
    let direct = format!("{base}Result");
    let (mut result, mut note) = if let Some(r) = spec
        .def(&response)
        .and_then(|d| d.pointer("/properties/result"))
    {
        (r.clone(), format!("{response}.result"))
    } else if spec.def(&direct).is_some() {
        (spec.reference(&direct), direct)
    } else if spec.def("EmptyResult").is_some() {
        (spec.reference("EmptyResult"), "EmptyResult".to_owned())
    } else {
        (spec.reference("Result"), "Result".to_owned())
    };
    if spec.def("CreateTaskResult").is_some() && has_property(spec, params, "task", 0)? {
        result = json!({ "anyOf": [result, spec.reference("CreateTaskResult")] });
        note.push_str(" | CreateTaskResult (task-augmented)");
    }
    if let Some(tagged) = tag_result_types(spec, &result)? {
        result = tagged;
        note.push_str(" (told apart by resultType)");
    }
    Ok((result, note))
}

/// The `InputRequiredResult` definition (2026-07-28 onwards) and its `resultType`.
const INPUT_REQUIRED: (&str, &str) = ("InputRequiredResult", "input_required");
/// The `resultType` of a finished request's own result.
const COMPLETE: &str = "complete";

/// A result union with an `InputRequiredResult` branch, each branch pinned to its
/// `resultType`: `"input_required"` for that one, `"complete"` for the method's own result.
/// The schema types `resultType` as any string and `InputRequiredResult` allows any other
/// property, so without the tag any object with a `resultType` (`{"content": 5, ...}` for
/// `tools/call`) would pass as an `InputRequiredResult`; the specification's "Result Type"
/// section says which `resultType` each shape carries. `None` when `result` has no such
/// branch (nothing to tell apart).
fn tag_result_types(spec: &Spec<'_>, result: &Value) -> Result<Option<Value>, String> {
    let Some(branches) = result.get("anyOf").and_then(Value::as_array) else {
        return Ok(None);
    };
    let mut input_required = false;
    let mut tagged = Vec::with_capacity(branches.len());
    for branch in branches {
        let tag = if spec.ref_name(branch)? == Some(INPUT_REQUIRED.0) {
            input_required = true;
            INPUT_REQUIRED.1
        } else {
            COMPLETE
        };
        tagged.push(json!({
            "allOf": [branch, {"properties": {"resultType": {"const": tag}}}]
        }));
    }
    Ok(input_required.then(|| json!({ "anyOf": tagged })))
}

/// Whether a schema (through `$ref`, `anyOf`, `oneOf`, `allOf`) declares property `name`.
fn has_property(spec: &Spec<'_>, schema: &Value, name: &str, depth: usize) -> Result<bool, String> {
    if depth > 16 {
        return Ok(false);
    }
    let schema = spec.resolve(schema)?;
    if schema.pointer(&format!("/properties/{name}")).is_some() {
        return Ok(true);
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        for branch in schema
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if has_property(spec, branch, name, depth + 1)? {
                return Ok(true);
            }
        }
    }
    Ok(false)
}

/// Keywords copied as they are.
const VERBATIM: [&str; 13] = [
    "type",
    "const",
    "enum",
    "required",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minItems",
    "maxItems",
    "minLength",
    "maxLength",
    "uniqueItems",
];
/// Annotation keywords dropped from the output (they do not affect validation or shaping).
const DROPPED: [&str; 10] = [
    "description",
    "format",
    "default",
    "examples",
    "title",
    "$comment",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$schema",
];

/// Copies a schema keeping only the keywords the runtime interpreter understands, with `$ref`
/// rewritten to the bare definition name. Unknown keywords are an error, so a new schema that
/// uses one is noticed here instead of being validated wrongly.
///
/// An object schema that describes a JSON Schema document (a `type` property with const
/// `"object"` next to a `properties` property, such as `Tool.inputSchema`) is marked open
/// (`additionalProperties: true`): the handshake-era schema files list only a few keywords of
/// such documents, which are open by nature; 2026-07-28 says so explicitly.
fn sanitize(spec: &Spec<'_>, schema: &Value, path: &str) -> Result<Value, String> {
    let obj = match schema {
        Value::Bool(_) => return Ok(schema.clone()),
        Value::Object(obj) => obj,
        other => {
            return Err(format!(
                "{path}: schema is neither object nor bool: {other}"
            ));
        }
    };
    let mut out = Map::new();
    for (key, value) in obj {
        let here = format!("{path}/{key}");
        match key.as_str() {
            k if VERBATIM.contains(&k) => {
                out.insert(key.clone(), value.clone());
            }
            k if DROPPED.contains(&k) => {}
            "$ref" => {
                let name = spec.ref_name(schema)?.unwrap_or_default();
                spec.def(name)
                    .ok_or_else(|| format!("{here}: dangling $ref to {name}"))?;
                out.insert(key.clone(), Value::String(name.to_owned()));
            }
            "properties" => {
                let props = value
                    .as_object()
                    .ok_or_else(|| format!("{here}: not an object"))?;
                let mut sanitized = Map::new();
                for (name, sub) in props {
                    sanitized.insert(
                        name.clone(),
                        sanitize(spec, sub, &format!("{here}/{name}"))?,
                    );
                }
                out.insert(key.clone(), Value::Object(sanitized));
            }
            "items" | "additionalProperties" | "not" => {
                out.insert(key.clone(), sanitize(spec, value, &here)?);
            }
            "anyOf" | "oneOf" | "allOf" => {
                let list = value
                    .as_array()
                    .ok_or_else(|| format!("{here}: not an array"))?;
                let sanitized = list
                    .iter()
                    .enumerate()
                    .map(|(i, sub)| sanitize(spec, sub, &format!("{here}/{i}")))
                    .collect::<Result<Vec<_>, _>>()?;
                out.insert(key.clone(), Value::Array(sanitized));
            }
            other => return Err(format!("{here}: unsupported keyword {other:?}")),
        }
    }
    let describes_schema = out.get("properties").is_some_and(|p| {
        p.get("properties").is_some() && p.pointer("/type/const") == Some(&json!("object"))
    });
    if describes_schema && !out.contains_key("additionalProperties") {
        out.insert("additionalProperties".into(), Value::Bool(true));
    }
    Ok(Value::Object(out))
}

/// The sanitized definitions reachable through `$ref` from the given (sanitized) schemas.
fn reachable_defs<'v>(
    spec: &Spec<'_>,
    roots: impl Iterator<Item = &'v Value>,
) -> Result<BTreeMap<String, Value>, String> {
    let mut queue = VecDeque::new();
    for root in roots {
        collect_refs(root, &mut queue);
    }
    let mut defs = BTreeMap::new();
    while let Some(name) = queue.pop_front() {
        if defs.contains_key(&name) {
            continue;
        }
        let def = spec
            .def(&name)
            .ok_or_else(|| format!("dangling $ref to {name}"))?;
        let sanitized = sanitize(spec, def, &format!("#/{name}"))?;
        collect_refs(&sanitized, &mut queue);
        defs.insert(name, sanitized);
    }
    Ok(defs)
}

/// Pushes every (bare) `$ref` name in a sanitized schema.
fn collect_refs(schema: &Value, out: &mut VecDeque<String>) {
    match schema {
        Value::Object(obj) => {
            for (key, value) in obj {
                match (key.as_str(), value) {
                    ("$ref", Value::String(name)) => out.push_back(name.clone()),
                    ("const" | "enum", _) => {}
                    ("properties", Value::Object(props)) => {
                        props.values().for_each(|p| collect_refs(p, out));
                    }
                    _ => collect_refs(value, out),
                }
            }
        }
        Value::Array(list) => list.iter().for_each(|v| collect_refs(v, out)),
        _ => {}
    }
}
