//! The shape of the generated data.

use super::schema::{Node, NodeId, word};

/// What the generator emits for one revision.
pub(super) struct VersionData {
    /// The revision's wire string, checked against [`crate::ProtocolVersion::as_str`] at compile
    /// time.
    pub(super) version: &'static str,
    /// Requests a client may send, sorted.
    pub(super) client_requests: &'static [&'static str],
    /// Notifications a client may send, sorted.
    pub(super) client_notifications: &'static [&'static str],
    /// Requests a server may send, sorted.
    pub(super) server_requests: &'static [&'static str],
    /// Notifications a server may send, sorted.
    pub(super) server_notifications: &'static [&'static str],
    /// One entry per method of [`super::generated::ALL_METHODS`], at the same index.
    pub(super) methods: &'static [MethodEntry],
    /// The schema nodes the entries point into.
    pub(super) nodes: &'static [Node],
}

/// One method at one revision.
pub(super) struct MethodEntry {
    /// The [`super::Kind`] bits of the method (0: the revision does not define it).
    pub(super) kinds: u8,
    /// Its params schema.
    pub(super) params: Option<NodeId>,
    /// Its result schema (requests only).
    pub(super) result: Option<NodeId>,
}

impl MethodEntry {
    /// The entry of a method the revision does not define.
    pub(super) const ABSENT: MethodEntry = MethodEntry {
        kinds: 0,
        params: None,
        result: None,
    };
}

/// A perfect hash of the method names, found by the generator: every method of
/// [`super::generated::ALL_METHODS`] lands in its own slot. The hash mixes the length with the
/// first, middle and last eight bytes (which cover the whole name up to 24 bytes), so a lookup
/// costs a few arithmetic instructions and one string comparison.
pub(super) struct MethodHash {
    /// An odd multiplier spreading the mixed words over the slots.
    pub(super) multiplier: u64,
    /// 64 minus the number of slot bits: the product's top bits pick the slot.
    pub(super) shift: u32,
    /// Per slot: 1 + the index of the method in `ALL_METHODS`, or 0.
    pub(super) slots: &'static [u8],
}

impl MethodHash {
    /// The slot of `name` (`xtask/src/codegen/emit.rs` computes the same when it builds the
    /// table).
    pub(super) fn slot(&self, name: &[u8]) -> usize {
        let len = name.len();
        let first = word(name, 0);
        let middle = word(name, (len / 2).saturating_sub(4));
        let last = word(name, len.saturating_sub(8));
        let key = first ^ middle.rotate_left(21) ^ last.rotate_left(42) ^ len as u64;
        key.wrapping_mul(self.multiplier)
            .checked_shr(self.shift)
            .unwrap_or(0) as usize
    }

    /// The index in `ALL_METHODS` of `name`, if it is one of them.
    pub(super) fn index(&self, name: &str, all: &[&str]) -> Option<usize> {
        let slot = *self.slots.get(self.slot(name.as_bytes()))?;
        let index = usize::from(slot).checked_sub(1)?;
        (*all.get(index)? == name).then_some(index)
    }
}
