//! Listing entries encoded once: a tool's, prompt's, resource's or template's entry in its
//! `*/list` result as JSON text, shaped for a protocol version, made the first time the item
//! is listed at that version (registering an item encodes nothing; a replaced item is a new
//! entry with no text yet, so no listing sees a stale one), and the pages assembled from those
//! texts without building a `serde_json::Value` per item.

use std::sync::{Arc, OnceLock};

use ferromcp_types::ProtocolVersion;
use ferromcp_types::mcp::Cursor;
use ferromcp_types::tables;
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::Value;
use serde_json::value::RawValue;

const VERSIONS: usize = ProtocolVersion::ALL.len();

/// One item's listing entry, as each protocol version receives it, encoded on first use.
pub(crate) struct Encoded {
    /// The listing method (`tools/list` ...), whose result shapes the entry.
    method: &'static str,
    /// The field of that result the entries are under (`tools` ...).
    field: &'static str,
    /// Indexed as [`ProtocolVersion::ALL`]; versions whose text is the same share it.
    per_version: [OnceLock<Arc<RawValue>>; VERSIONS],
}

impl Encoded {
    /// An entry of `method`'s result (whose items are under `field`), not encoded yet.
    pub(crate) fn new(method: &'static str, field: &'static str) -> Self {
        Self {
            method,
            field,
            per_version: Default::default(),
        }
    }

    /// The entry of `item` as `version` receives it, encoded on the first call for `version`
    /// (`item` must be the same item on every call): shaped as the kernel shapes a result,
    /// fields the version does not define dropped. The text is that of the shaped `Value`
    /// (keys in its order), so a page is the JSON a `Value`-built page was.
    pub(crate) fn get<T: Serialize>(&self, item: &T, version: ProtocolVersion) -> &Arc<RawValue> {
        let i = ProtocolVersion::ALL
            .iter()
            .position(|v| *v == version)
            .unwrap_or(VERSIONS - 1);
        self.per_version[i].get_or_init(|| self.encode(item, version))
    }

    fn encode<T: Serialize>(&self, item: &T, version: ProtocolVersion) -> Arc<RawValue> {
        let value = to_value(item, self.method);
        let shaped = shape(value, self.method, self.field, version)
            .unwrap_or_else(|| to_value(item, self.method));
        let text = serde_json::to_string(&shaped).unwrap_or_else(|_| "null".into());
        // Another version's text, when it is the same (encoded before this one).
        if let Some(same) = self
            .per_version
            .iter()
            .filter_map(OnceLock::get)
            .find(|t| t.get() == text)
        {
            return same.clone();
        }
        Arc::from(RawValue::from_string(text).unwrap_or_else(|_| RawValue::NULL.to_owned()))
    }
}

fn to_value<T: Serialize>(item: &T, method: &str) -> Value {
    serde_json::to_value(item).unwrap_or_else(|e| {
        // Not reached: the items are MCP types with string keys.
        tracing::error!(method, error = %e, "a listing entry did not serialize");
        Value::Null
    })
}

/// `item` shaped as an entry of `method`'s result at `version`; `None` if shaping did not
/// leave it one entry (not reached: shaping keeps a result's items).
fn shape(item: Value, method: &str, field: &str, version: ProtocolVersion) -> Option<Value> {
    let mut result = serde_json::Map::new();
    result.insert(field.to_owned(), Value::Array(vec![item]));
    tables::shape_result(method, version, &mut result);
    match result.remove(field) {
        Some(Value::Array(mut items)) if items.len() == 1 => items.pop(),
        _ => None,
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
    /// What the listing shows.
    type Item: Serialize;
    /// The item and its encoded entry.
    fn listed(&self) -> (&Self::Item, &Encoded);
}

/// The page of `registry` that `cursor` starts, as `version` receives it.
pub(crate) fn page<T: super::registry::Named + Listed>(
    registry: &super::registry::Registry<T>,
    field: &'static str,
    version: ProtocolVersion,
    cursor: Option<&Cursor>,
    page_size: usize,
) -> Result<Page, ferromcp_types::jsonrpc::ErrorObject> {
    let (items, next_cursor) = registry.page_map(cursor, page_size, |e| {
        let (item, encoded) = e.listed();
        encoded.get(item, version).clone()
    })?;
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
        let e = Encoded::new("tools/list", "tools");
        let old = e.get(&tool, ProtocolVersion::V2024_11_05);
        assert_eq!(old.get(), r#"{"inputSchema":{"type":"object"},"name":"t"}"#);
        let new = e.get(&tool, ProtocolVersion::V2025_06_18);
        assert_eq!(
            new.get(),
            r#"{"inputSchema":{"type":"object"},"name":"t","title":"T"}"#
        );
        assert!(Arc::ptr_eq(new, e.get(&tool, ProtocolVersion::V2025_11_25)));
        assert!(Arc::ptr_eq(old, e.get(&tool, ProtocolVersion::V2025_03_26)));
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

    /// An item that counts how often it is serialized.
    struct Counted(std::sync::atomic::AtomicUsize);

    impl Serialize for Counted {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            json!({"name": "t", "inputSchema": {"type": "object"}}).serialize(serializer)
        }
    }

    /// B79: registering encodes nothing; each version is encoded on its first listing, once.
    #[test]
    fn b79_each_version_is_encoded_on_its_first_listing_only() {
        let item = Counted(Default::default());
        let count = || item.0.load(std::sync::atomic::Ordering::Relaxed);
        let e = Encoded::new("tools/list", "tools");
        assert_eq!(count(), 0);
        let first = e.get(&item, ProtocolVersion::V2025_11_25).clone();
        assert_eq!(count(), 1);
        assert!(Arc::ptr_eq(
            &first,
            e.get(&item, ProtocolVersion::V2025_11_25)
        ));
        assert_eq!(count(), 1);
        e.get(&item, ProtocolVersion::V2024_11_05);
        assert_eq!(count(), 2);
    }
}
