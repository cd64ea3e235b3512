//! Known errors in the published `schema.json` files, corrected before the tables are built.
//!
//! The specification's TypeScript schema (`schema.ts`) is its source of truth; `schema.json` is
//! generated from it. Where the two disagree, the tables follow `schema.ts`. Each correction
//! names the exact value it replaces and fails the generation when that value is not found, so
//! a fixed upstream schema (or a moved definition) is noticed instead of silently patched.

use serde_json::{Value, json};

/// One correction: the definition, the JSON pointer inside it, what `schema.json` says there,
/// and what `schema.ts` declares.
struct Erratum {
    /// The revisions the correction applies to.
    versions: &'static [&'static str],
    definition: &'static str,
    pointer: &'static str,
    published: fn() -> Value,
    corrected: fn() -> Value,
    why: &'static str,
}

const ERRATA: &[Erratum] = &[Erratum {
    versions: &["2025-06-18", "2025-11-25", "2026-07-28"],
    definition: "ElicitResult",
    pointer: "/properties/content/additionalProperties",
    published: elicit_published,
    corrected: elicit_corrected,
    why: "schema.ts types an accepted form value as `string | number | boolean (| string[])`; \
          schema.json narrowed `number` to \"integer\", which refuses the answer 95.5 to a \
          field the server itself requested as {\"type\": \"number\"}",
}];

fn elicit_published() -> Value {
    json!({"type": ["string", "integer", "boolean"]})
}

fn elicit_corrected() -> Value {
    json!({"type": ["string", "number", "boolean"]})
}

/// Applies every correction for `version` to `schema` (whose definitions sit under `$defs` or
/// `definitions`). A correction whose published value is not where it is expected is an error.
pub(crate) fn apply(version: &str, schema: &mut Value) -> Result<(), String> {
    for erratum in ERRATA.iter().filter(|e| e.versions.contains(&version)) {
        let defs = if schema.get("$defs").is_some() {
            "$defs"
        } else {
            "definitions"
        };
        let pointer = format!("/{defs}/{}{}", erratum.definition, erratum.pointer);
        let slot = schema
            .pointer_mut(&pointer)
            .ok_or_else(|| format!("erratum for {pointer}: no such value"))?;
        let (published, corrected) = ((erratum.published)(), (erratum.corrected)());
        if *slot == corrected {
            return Err(format!(
                "erratum for {pointer} is fixed upstream; remove it ({})",
                erratum.why
            ));
        }
        let replaced = replace_within(slot, &published, &corrected);
        if !replaced {
            return Err(format!(
                "erratum for {pointer}: expected {published} in {slot}, found neither it nor \
                 the correction ({})",
                erratum.why
            ));
        }
    }
    Ok(())
}

/// Replaces `from` with `to` at `slot` itself or in one member of its `anyOf`.
fn replace_within(slot: &mut Value, from: &Value, to: &Value) -> bool {
    if slot == from {
        *slot = to.clone();
        return true;
    }
    if let Some(members) = slot.get_mut("anyOf").and_then(Value::as_array_mut)
        && let Some(member) = members.iter_mut().find(|m| *m == from)
    {
        *member = to.clone();
        return true;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_elicit_erratum_widens_integer_to_number_in_place_and_in_any_of() {
        let mut old = json!({"definitions": {"ElicitResult": {"properties": {"content": {
            "additionalProperties": {"type": ["string", "integer", "boolean"]}}}}}});
        apply("2025-06-18", &mut old).unwrap();
        assert_eq!(
            old.pointer("/definitions/ElicitResult/properties/content/additionalProperties"),
            Some(&json!({"type": ["string", "number", "boolean"]}))
        );
        let mut new = json!({"$defs": {"ElicitResult": {"properties": {"content": {
            "additionalProperties": {"anyOf": [
                {"items": {"type": "string"}, "type": "array"},
                {"type": ["string", "integer", "boolean"]}]}}}}}});
        apply("2026-07-28", &mut new).unwrap();
        assert_eq!(
            new.pointer("/$defs/ElicitResult/properties/content/additionalProperties/anyOf/1"),
            Some(&json!({"type": ["string", "number", "boolean"]}))
        );
    }

    #[test]
    fn an_erratum_fixed_upstream_or_moved_fails_the_generation() {
        let mut fixed = json!({"$defs": {"ElicitResult": {"properties": {"content": {
            "additionalProperties": {"type": ["string", "number", "boolean"]}}}}}});
        assert!(
            apply("2025-11-25", &mut fixed)
                .unwrap_err()
                .contains("fixed upstream")
        );
        let mut moved = json!({"$defs": {}});
        assert!(
            apply("2025-11-25", &mut moved)
                .unwrap_err()
                .contains("no such value")
        );
        let mut other = json!({"$defs": {"ElicitResult": {"properties": {"content": {
            "additionalProperties": {"type": "string"}}}}}});
        assert!(
            apply("2025-11-25", &mut other)
                .unwrap_err()
                .contains("expected")
        );
    }
}
