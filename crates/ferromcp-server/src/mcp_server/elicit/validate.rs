//! Checking a client's form answer against the form that was asked.

use std::collections::BTreeMap;

use ferromcp_types::mcp::{
    ElicitValue, ElicitationSchema, EnumOption, NumberType, PrimitiveSchemaDefinition,
};
use serde_json::{Map, Value};

/// Checks `content` against `form` and returns it as a JSON object of the form's fields only
/// (unknown fields are dropped; integers are written without a fraction). The error names
/// the first field that does not fit.
pub(crate) fn check_content(
    form: &ElicitationSchema,
    content: &BTreeMap<String, ElicitValue>,
) -> Result<Map<String, Value>, String> {
    for name in form.required.iter().flatten() {
        if !content.contains_key(name) {
            return Err(format!("required field `{name}` is missing"));
        }
    }
    let mut out = Map::new();
    for (name, field) in &form.properties {
        let Some(value) = content.get(name) else {
            continue;
        };
        let json = check_field(field, value).map_err(|e| format!("field `{name}`: {e}"))?;
        out.insert(name.clone(), json);
    }
    Ok(out)
}

fn one_of(values: &[String], v: &str) -> Result<(), String> {
    if values.iter().any(|x| x == v) {
        Ok(())
    } else {
        Err(format!("{v:?} is not one of the options"))
    }
}

fn option_values(options: &[EnumOption]) -> Vec<String> {
    options.iter().map(|o| o.value.clone()).collect()
}

fn check_len(len: usize, min: Option<u64>, max: Option<u64>, what: &str) -> Result<(), String> {
    let len = len as u64;
    if min.is_some_and(|m| len < m) || max.is_some_and(|m| len > m) {
        return Err(format!("{what} out of bounds"));
    }
    Ok(())
}

fn check_field(field: &PrimitiveSchemaDefinition, value: &ElicitValue) -> Result<Value, String> {
    use PrimitiveSchemaDefinition as P;
    match (field, value) {
        (P::String(s), ElicitValue::String(v)) => {
            check_len(v.chars().count(), s.min_length, s.max_length, "length")?;
            Ok(Value::String(v.clone()))
        }
        (P::UntitledSingleSelect(s), ElicitValue::String(v)) => {
            one_of(&s.values, v)?;
            Ok(Value::String(v.clone()))
        }
        (P::LegacyTitledEnum(s), ElicitValue::String(v)) => {
            one_of(&s.values, v)?;
            Ok(Value::String(v.clone()))
        }
        (P::TitledSingleSelect(s), ElicitValue::String(v)) => {
            one_of(&option_values(&s.one_of), v)?;
            Ok(Value::String(v.clone()))
        }
        (P::UntitledMultiSelect(s), ElicitValue::StringArray(vs)) => {
            check_len(vs.len(), s.min_items, s.max_items, "number of selections")?;
            vs.iter().try_for_each(|v| one_of(&s.items.values, v))?;
            Ok(Value::from(vs.clone()))
        }
        (P::TitledMultiSelect(s), ElicitValue::StringArray(vs)) => {
            check_len(vs.len(), s.min_items, s.max_items, "number of selections")?;
            let values = option_values(&s.items.any_of);
            vs.iter().try_for_each(|v| one_of(&values, v))?;
            Ok(Value::from(vs.clone()))
        }
        (P::Boolean(_), ElicitValue::Boolean(b)) => Ok(Value::Bool(*b)),
        (P::Number(n), ElicitValue::Number(x)) => {
            if n.minimum.is_some_and(|m| *x < m) || n.maximum.is_some_and(|m| *x > m) {
                return Err(format!("{x} out of bounds"));
            }
            if n.kind == NumberType::Integer {
                if x.fract() != 0.0 || !x.is_finite() || x.abs() > 9.007_199_254_740_992e15 {
                    return Err(format!("{x} is not an integer"));
                }
                // Exact: |x| < 2^53 and integral.
                #[allow(clippy::cast_possible_truncation)]
                return Ok(Value::from(*x as i64));
            }
            serde_json::Number::from_f64(*x)
                .map(Value::Number)
                .ok_or_else(|| format!("{x} is not a finite number"))
        }
        _ => Err("wrong type".into()),
    }
}
