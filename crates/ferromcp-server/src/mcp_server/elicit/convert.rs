//! Rust type → elicitation form: schemars' JSON Schema (2020-12) converted to the restricted
//! schema of `elicitation/create` (a flat object of primitive fields).

use std::collections::BTreeMap;

use ferromcp_types::mcp::{
    BooleanSchema, ElicitationSchema, EnumOption, NumberSchema, NumberType,
    PrimitiveSchemaDefinition, StringFormat, StringSchema, TitledMultiSelectEnumSchema,
    TitledSingleSelectEnumSchema, UntitledMultiSelectEnumSchema, UntitledSingleSelectEnumSchema,
};
use serde_json::{Map, Value};

use super::FormSchemaError;

type Object = Map<String, Value>;

/// Converts a schemars root schema (an object schema) into an elicitation form.
pub(crate) fn form_from_schema(root: &Object) -> Result<ElicitationSchema, FormSchemaError> {
    let defs = root.get("$defs").and_then(Value::as_object);
    let root = resolve(root, defs, "the form")?;
    if type_of(root).as_deref() != Some("object") {
        return Err(FormSchemaError::new(
            "the form",
            "an elicitation form must be a struct (a JSON object)",
        ));
    }
    let mut properties = BTreeMap::new();
    if let Some(props) = root.get("properties").and_then(Value::as_object) {
        for (name, prop) in props {
            let Value::Object(prop) = prop else {
                return Err(FormSchemaError::new(name, "not a schema object"));
            };
            properties.insert(name.clone(), field(name, prop, defs)?);
        }
    }
    let required: Vec<String> = root
        .get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    let mut form = ElicitationSchema::new();
    form.properties = properties;
    if !required.is_empty() {
        form.required = Some(required);
    }
    Ok(form)
}

/// Follows `$ref` (and schemars' `allOf: [{$ref}]` wrapper) to `$defs`, keeping the outer
/// title, description and default.
fn resolve<'a>(
    schema: &'a Object,
    defs: Option<&'a Object>,
    field: &str,
) -> Result<&'a Object, FormSchemaError> {
    let target = schema.get("$ref").and_then(Value::as_str).or_else(|| {
        let all = schema.get("allOf")?.as_array()?;
        match all.as_slice() {
            [only] => only.get("$ref")?.as_str(),
            _ => None,
        }
    });
    let Some(target) = target else {
        return Ok(schema);
    };
    target
        .strip_prefix("#/$defs/")
        .and_then(|name| defs?.get(name)?.as_object())
        .ok_or_else(|| FormSchemaError::new(field, format!("unresolvable reference {target}")))
}

/// The single non-null `type`, if any (`["string", "null"]` is `string`).
fn type_of(schema: &Object) -> Option<String> {
    match schema.get("type")? {
        Value::String(t) => Some(t.clone()),
        Value::Array(ts) => {
            let mut kept = ts.iter().filter_map(Value::as_str).filter(|t| *t != "null");
            let first = kept.next()?;
            kept.next().is_none().then(|| first.to_owned())
        }
        _ => None,
    }
}

/// `Option<T>` as schemars writes it: `anyOf: [T, {type: null}]` → T.
fn strip_nullable<'a>(schema: &'a Object, defs: Option<&'a Object>) -> &'a Object {
    let Some(any) = schema.get("anyOf").and_then(Value::as_array) else {
        return schema;
    };
    let non_null: Vec<&Object> = any
        .iter()
        .filter_map(Value::as_object)
        .filter(|s| s.get("type").and_then(Value::as_str) != Some("null"))
        .collect();
    match non_null.as_slice() {
        [only] if any.len() == 2 => resolve(only, defs, "").unwrap_or(only),
        _ => schema,
    }
}

fn text(schema: &Object, outer: &Object, key: &str) -> Option<String> {
    outer
        .get(key)
        .or_else(|| schema.get(key))
        .and_then(Value::as_str)
        .map(str::to_owned)
}

fn u64_of(schema: &Object, key: &str) -> Option<u64> {
    schema.get(key).and_then(Value::as_u64)
}

fn f64_of(schema: &Object, key: &str) -> Option<f64> {
    schema.get(key).and_then(Value::as_f64)
}

/// Enum options written as `oneOf`/`anyOf` of `{const, title?}` (or one-value `enum`s).
fn titled_options(alternatives: &[Value]) -> Option<Vec<EnumOption>> {
    alternatives
        .iter()
        .map(|alt| {
            let alt = alt.as_object()?;
            let value = match alt.get("const") {
                Some(Value::String(c)) => c.clone(),
                _ => match alt.get("enum")?.as_array()?.as_slice() {
                    [Value::String(c)] => c.clone(),
                    _ => return None,
                },
            };
            let title = alt
                .get("title")
                .or_else(|| alt.get("description"))
                .and_then(Value::as_str)
                .map_or_else(|| value.clone(), str::to_owned);
            Some(EnumOption::new(value, title))
        })
        .collect()
}

fn string_values(values: &Value) -> Option<Vec<String>> {
    values
        .as_array()?
        .iter()
        .map(|v| v.as_str().map(str::to_owned))
        .collect()
}

fn string_list(value: Option<&Value>) -> Option<Vec<String>> {
    value.and_then(string_values)
}

/// Whether any option carries a title different from its value.
fn has_titles(options: &[EnumOption]) -> bool {
    options.iter().any(|o| o.title != o.value)
}

fn field(
    name: &str,
    outer: &Object,
    defs: Option<&Object>,
) -> Result<PrimitiveSchemaDefinition, FormSchemaError> {
    let schema = resolve(outer, defs, name)?;
    let schema = strip_nullable(schema, defs);
    let title = text(schema, outer, "title");
    let description = text(schema, outer, "description");
    let default = outer.get("default").or_else(|| schema.get("default"));
    let kind = type_of(schema);
    let alternatives = schema
        .get("oneOf")
        .or_else(|| schema.get("anyOf"))
        .and_then(Value::as_array);
    let bad = |what: &str| FormSchemaError::new(name, what.to_owned());

    // Single-select enums.
    if matches!(kind.as_deref(), Some("string") | None) {
        if let Some(values) = schema.get("enum").and_then(string_values) {
            let mut s = UntitledSingleSelectEnumSchema::new(values);
            s.title = title;
            s.description = description;
            s.default = default.and_then(Value::as_str).map(str::to_owned);
            return Ok(s.into());
        }
        if let Some(options) = alternatives.and_then(|a| titled_options(a)) {
            if !has_titles(&options) {
                let values = options.into_iter().map(|o| o.value).collect();
                let mut s = UntitledSingleSelectEnumSchema::new(values);
                s.title = title;
                s.description = description;
                s.default = default.and_then(Value::as_str).map(str::to_owned);
                return Ok(s.into());
            }
            let mut s = TitledSingleSelectEnumSchema::new(options);
            s.title = title;
            s.description = description;
            s.default = default.and_then(Value::as_str).map(str::to_owned);
            return Ok(s.into());
        }
    }
    match kind.as_deref() {
        Some("string") => {
            let mut s = StringSchema::new();
            s.title = title;
            s.description = description;
            s.min_length = u64_of(schema, "minLength");
            s.max_length = u64_of(schema, "maxLength");
            s.format = match schema.get("format").and_then(Value::as_str) {
                Some("email") => Some(StringFormat::Email),
                Some("uri") => Some(StringFormat::Uri),
                Some("date") => Some(StringFormat::Date),
                Some("date-time") => Some(StringFormat::DateTime),
                _ => None,
            };
            s.default = default.and_then(Value::as_str).map(str::to_owned);
            Ok(s.into())
        }
        Some(t @ ("integer" | "number")) => {
            let kind = if t == "integer" {
                NumberType::Integer
            } else {
                NumberType::Number
            };
            let mut n = NumberSchema::new(kind);
            n.title = title;
            n.description = description;
            n.minimum = f64_of(schema, "minimum");
            n.maximum = f64_of(schema, "maximum");
            n.default = default.and_then(Value::as_f64);
            Ok(n.into())
        }
        Some("boolean") => {
            let mut b = BooleanSchema::new();
            b.title = title;
            b.description = description;
            b.default = default.and_then(Value::as_bool);
            Ok(b.into())
        }
        Some("array") => {
            let items = schema
                .get("items")
                .and_then(Value::as_object)
                .ok_or_else(|| bad("an array field needs items that are string options"))?;
            let items = resolve(items, defs, name)?;
            let default = string_list(default);
            if let Some(values) = items.get("enum").and_then(string_values) {
                let mut m = UntitledMultiSelectEnumSchema::new(values);
                m.title = title;
                m.description = description;
                m.min_items = u64_of(schema, "minItems");
                m.max_items = u64_of(schema, "maxItems");
                m.default = default;
                return Ok(m.into());
            }
            let options = items
                .get("anyOf")
                .or_else(|| items.get("oneOf"))
                .and_then(Value::as_array)
                .and_then(|a| titled_options(a))
                .ok_or_else(|| {
                    bad(
                        "arrays in elicitation forms are multi-selects: their items must be a \
                         string enum (arrays of objects or free strings are not allowed)",
                    )
                })?;
            let mut m = TitledMultiSelectEnumSchema::new(options);
            m.title = title;
            m.description = description;
            m.min_items = u64_of(schema, "minItems");
            m.max_items = u64_of(schema, "maxItems");
            m.default = default;
            Ok(m.into())
        }
        Some("object") => Err(bad(
            "nested objects are not allowed in elicitation forms (a form is a flat object of \
             strings, numbers, booleans and enums)",
        )),
        _ => Err(bad(
            "not a primitive (string, number, integer, boolean or string enum) field",
        )),
    }
}
