//! Listing entries encoded once: a tool's, prompt's, resource's or template's entry in its
//! `*/list` result as JSON text, shaped for each protocol version, made when the item is
//! registered (a replaced item is a new entry with new text, so no listing sees a stale one),
//! and the pages assembled from those texts without building a `serde_json::Value` per item.

use std::sync::Arc;

use ferromcp_types::ProtocolVersion;
use ferromcp_types::mcp::Cursor;
use ferromcp_types::tables;
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::Value;
use serde_json::value::RawValue;

const VERSIONS: usize = ProtocolVersion::ALL.len();

/// One item's listing entry, as each protocol version receives it.
pub(crate) struct Encoded {
    /// Indexed as [`ProtocolVersion::ALL`]; versions whose text is the same share it.
    per_version: [Arc<RawValue>; VERSIONS],
}

impl Encoded {
    /// `item`'s entry in the result of `method` (whose items are under `field`), shaped for
    /// every version as the kernel shapes a result: fields a version does not define are
    /// dropped. The text is that of the shaped `Value` (keys in its order), so a page is the
    /// JSON a `Value`-built page was.
    pub(crate) fn new<T: Serialize>(item: &T, method: &str, field: &str) -> Self {
        let value = serde_json::to_value(item).unwrap_or_else(|e| {
            // Not reached: the items are MCP types with string keys.
            tracing::error!(method, error = %e, "a listing entry did not serialize");
            Value::Null
        });
        let mut texts: Vec<Arc<RawValue>> = Vec::with_capacity(VERSIONS);
        for version in ProtocolVersion::ALL {
            let shaped = shape(&value, method, field, version);
            let text = serde_json::to_string(&shaped).unwrap_or_else(|_| "null".into());
            let shared = texts.iter().find(|t| t.get() == text).cloned();
            let raw = match shared {
                Some(raw) => raw,
                None => Arc::from(
                    RawValue::from_string(text).unwrap_or_else(|_| RawValue::NULL.to_owned()),
                ),
            };
            texts.push(raw);
        }
        let per_version = std::array::from_fn(|i| texts[i].clone());
        Self { per_version }
    }

    /// The entry as `version` receives it.
    pub(crate) fn get(&self, version: ProtocolVersion) -> &Arc<RawValue> {
        let i = ProtocolVersion::ALL
            .iter()
            .position(|v| *v == version)
            .unwrap_or(VERSIONS - 1);
        &self.per_version[i]
    }
}

/// `item` shaped as an entry of `method`'s result at `version`.
fn shape(item: &Value, method: &str, field: &str, version: ProtocolVersion) -> Value {
    let mut result = serde_json::Map::new();
    result.insert(field.to_owned(), Value::Array(vec![item.clone()]));
    tables::shape_result(method, version, &mut result);
    match result.remove(field) {
        Some(Value::Array(mut items)) if items.len() == 1 => items.pop().unwrap_or(Value::Null),
        _ => item.clone(),
    }
}

/// One page of a listing: the entries' texts and the next page's cursor. It serializes as
/// the method's result, `{"nextCursor": ..., "<field>": [...]}`, each entry written as its
/// text.
pub(crate) struct Page {
    pub(crate) field: &'static str,
    pub(crate) items: Vec<Arc<RawValue>>,
    pub(crate) next_cursor: Option<Cursor>,
}

impl Serialize for Page {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map =
            serializer.serialize_map(Some(1 + usize::from(self.next_cursor.is_some())))?;
        // Keys in the order a `Value`'s map writes them ("nextCursor" sorts first).
        if let Some(cursor) = &self.next_cursor {
            map.serialize_entry("nextCursor", cursor)?;
        }
        map.serialize_entry(self.field, &Items(&self.items))?;
        map.end()
    }
}

struct Items<'a>(&'a [Arc<RawValue>]);

impl Serialize for Items<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().map(|raw| &**raw))
    }
}

/// Something listed from its encoded entry.
pub(crate) trait Listed {
    fn encoded(&self) -> &Encoded;
}

/// The page of `registry` that `cursor` starts, as `version` receives it.
pub(crate) fn page<T: super::registry::Named + Listed>(
    registry: &super::registry::Registry<T>,
    field: &'static str,
    version: ProtocolVersion,
    cursor: Option<&Cursor>,
    page_size: usize,
) -> Result<Page, ferromcp_types::jsonrpc::ErrorObject> {
    let (items, next_cursor) =
        registry.page_map(cursor, page_size, |e| e.encoded().get(version).clone())?;
    Ok(Page {
        field,
        items,
        next_cursor,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn versions_with_the_same_text_share_it_and_fields_a_version_lacks_are_dropped() {
        let tool = json!({"name": "t", "title": "T", "inputSchema": {"type": "object"}});
        let e = Encoded::new(&tool, "tools/list", "tools");
        let old = e.get(ProtocolVersion::V2024_11_05);
        assert_eq!(old.get(), r#"{"inputSchema":{"type":"object"},"name":"t"}"#);
        let new = e.get(ProtocolVersion::V2025_06_18);
        assert_eq!(
            new.get(),
            r#"{"inputSchema":{"type":"object"},"name":"t","title":"T"}"#
        );
        assert!(Arc::ptr_eq(new, e.get(ProtocolVersion::V2025_11_25)));
        assert!(Arc::ptr_eq(old, e.get(ProtocolVersion::V2025_03_26)));
        let page = Page {
            field: "tools",
            items: vec![old.clone(), new.clone()],
            next_cursor: Some("c".into()),
        };
        assert_eq!(
            serde_json::to_string(&page).unwrap(),
            r#"{"nextCursor":"c","tools":[{"inputSchema":{"type":"object"},"name":"t"},{"inputSchema":{"type":"object"},"name":"t","title":"T"}]}"#
        );
    }
}
