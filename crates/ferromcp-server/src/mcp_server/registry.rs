//! A registry of named items (tools, prompts, resources) in registration order, changeable at
//! run time, listed in pages with opaque cursors.

use std::collections::HashMap;
use std::sync::{Arc, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use ferromcp_types::jsonrpc::ErrorObject;
use ferromcp_types::mcp::Cursor;

/// Something registered under a key (a tool's name, a prompt's name, a resource's URI).
pub(crate) trait Named {
    fn key(&self) -> &str;
}

pub(crate) struct Registry<T> {
    inner: RwLock<Table<T>>,
}

struct Table<T> {
    order: Vec<Arc<T>>,
    by_name: HashMap<String, Arc<T>>,
}

impl<T: Named> Registry<T> {
    pub(crate) fn new(entries: Vec<T>) -> Self {
        let table = Table {
            order: Vec::new(),
            by_name: HashMap::new(),
        };
        let registry = Self {
            inner: RwLock::new(table),
        };
        for e in entries {
            registry.insert(e);
        }
        registry
    }

    fn read(&self) -> RwLockReadGuard<'_, Table<T>> {
        self.inner.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self) -> RwLockWriteGuard<'_, Table<T>> {
        self.inner.write().unwrap_or_else(PoisonError::into_inner)
    }

    /// Adds an item, replacing one of the same name in place.
    pub(crate) fn insert(&self, item: T) {
        let item = Arc::new(item);
        let mut t = self.write();
        let name = item.key().to_owned();
        match t.order.iter().position(|e| e.key() == name) {
            Some(i) => t.order[i] = item.clone(),
            None => t.order.push(item.clone()),
        }
        t.by_name.insert(name, item);
    }

    /// Removes an item; whether it was there.
    pub(crate) fn remove(&self, name: &str) -> bool {
        let mut t = self.write();
        let found = t.by_name.remove(name).is_some();
        if found {
            t.order.retain(|e| e.key() != name);
        }
        found
    }

    pub(crate) fn names(&self) -> Vec<String> {
        self.read()
            .order
            .iter()
            .map(|e| e.key().to_owned())
            .collect()
    }

    pub(crate) fn get(&self, name: &str) -> Option<Arc<T>> {
        self.read().by_name.get(name).cloned()
    }

    /// Every item, in order.
    pub(crate) fn all(&self) -> Vec<Arc<T>> {
        self.read().order.clone()
    }

    /// The page that `cursor` starts, each item mapped by `f` (under the read lock), and the
    /// cursor of the next page.
    pub(crate) fn page_map<U>(
        &self,
        cursor: Option<&Cursor>,
        page_size: usize,
        f: impl FnMut(&Arc<T>) -> U,
    ) -> Result<(Vec<U>, Option<Cursor>), ErrorObject> {
        let offset = decode_cursor(cursor)?;
        let t = self.read();
        if offset > t.order.len() {
            return Err(invalid_cursor());
        }
        let end = offset.saturating_add(page_size).min(t.order.len());
        let next = (end < t.order.len()).then(|| encode_cursor(end));
        Ok((t.order[offset..end].iter().map(f).collect(), next))
    }
}

const CURSOR_PREFIX: &str = "ferromcp:v1:";

fn invalid_cursor() -> ErrorObject {
    ErrorObject::invalid_params("Invalid cursor")
}

/// An opaque cursor for the page that starts at `offset`.
pub(crate) fn encode_cursor(offset: usize) -> Cursor {
    format!("{CURSOR_PREFIX}{offset:x}")
}

/// The offset a cursor names; -32602 for a cursor this server did not make.
pub(crate) fn decode_cursor(cursor: Option<&Cursor>) -> Result<usize, ErrorObject> {
    let Some(cursor) = cursor else { return Ok(0) };
    cursor
        .strip_prefix(CURSOR_PREFIX)
        .and_then(|hex| usize::from_str_radix(hex, 16).ok())
        .ok_or_else(invalid_cursor)
}
