//! What the topics of this test binary share.

use ferromcp_server::jsonschema::{Limits, Schema, SchemaError, ValidationErrors};
use serde_json::Value;

pub(crate) fn compile(schema: Value) -> Schema {
    Schema::compile(&schema, &Limits::default()).unwrap()
}

pub(crate) fn compile_err(schema: Value) -> SchemaError {
    Schema::compile(&schema, &Limits::default()).unwrap_err()
}

/// Asserts validity both ways (`validate` and `is_valid` agree).
pub(crate) fn ok(schema: &Schema, instance: Value) {
    assert!(schema.is_valid(&instance), "is_valid rejected {instance}");
    if let Err(e) = schema.validate(&instance) {
        panic!("validate rejected {instance}: {e}");
    }
}

/// Asserts invalidity both ways; returns the errors.
pub(crate) fn bad(schema: &Schema, instance: Value) -> ValidationErrors {
    assert!(!schema.is_valid(&instance), "is_valid accepted {instance}");
    match schema.validate(&instance) {
        Ok(()) => panic!("validate accepted {instance}"),
        Err(e) => e,
    }
}

/// Asserts invalidity, with the first error's keyword.
pub(crate) fn bad_kw(schema: &Schema, instance: Value, keyword: &str) -> ValidationErrors {
    let e = bad(schema, instance);
    assert_eq!(e.errors[0].keyword, keyword, "{e}");
    e
}
