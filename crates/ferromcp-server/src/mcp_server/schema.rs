//! JSON Schemas derived from Rust types (JSON Schema 2020-12, via schemars).

use ferromcp_types::mcp::JsonObject;
use schemars::JsonSchema;
use serde_json::Value;

/// The JSON Schema (2020-12) of `T` as a JSON object; doc comments become descriptions.
pub fn schema_object_for<T: JsonSchema>() -> JsonObject {
    let schema = schemars::generate::SchemaSettings::draft2020_12()
        .into_generator()
        .into_root_schema_for::<T>();
    match schema.to_value() {
        Value::Object(map) => map,
        // `true`/`false` schemas: treat as an object schema that accepts anything.
        _ => object_schema(),
    }
}

/// `{"type": "object"}`: the input schema of a tool that takes no arguments.
pub fn object_schema() -> JsonObject {
    let mut map = JsonObject::new();
    map.insert("type".into(), Value::String("object".into()));
    map
}
