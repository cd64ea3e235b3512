//! The shape of the generated data.

use super::schema::{Bounds, Discriminator, Lit, Name, Node, NodeId, Prop, Union, View, word};

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
    // The flat arrays the nodes index (see `schema.rs`: the nodes hold no pointers, so
    // that the dynamic loader has nothing to relocate in them).
    /// Every name of the revision's schemas, one after the other ([`Name`]s point in here).
    pub(super) strings: &'static str,
    /// The listed properties of every node.
    pub(super) props: &'static [Prop],
    /// The required names of every node, and the tags and keys of the unions.
    pub(super) names: &'static [Name],
    /// The discriminators of every node.
    pub(super) discriminators: &'static [Discriminator],
    /// The `anyOf` branches and `allOf` parts of every node, and the nodes of the views.
    pub(super) ids: &'static [NodeId],
    /// The unions of the nodes that have one.
    pub(super) unions: &'static [Union],
    /// The views of the nodes that have one.
    pub(super) views: &'static [View],
    /// The bounds of the nodes that have some.
    pub(super) bounds: &'static [Bounds],
    /// The members of every `enum`.
    pub(super) lits: &'static [Lit],
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
    /// The words of each method of `ALL_METHODS` (same index), to confirm a match.
    pub(super) words: &'static [Words],
}

/// A name's length and the three words the hash reads: the first, middle and last eight
/// bytes. Up to 24 bytes they cover the whole name, so equal words are an equal name.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Words {
    len: usize,
    first: u64,
    middle: u64,
    last: u64,
}

/// Names longer than this are compared byte by byte after their words.
const COVERED: usize = 24;

impl Words {
    /// The words of `text`, at compile time (for the generated table).
    pub(super) const fn of(text: &str) -> Words {
        let bytes = text.as_bytes();
        let len = bytes.len();
        Words {
            len,
            first: const_word(bytes, 0),
            middle: const_word(bytes, (len / 2).saturating_sub(4)),
            last: const_word(bytes, len.saturating_sub(8)),
        }
    }

    /// The words of `name`: three loads for a name of eight bytes or more.
    #[inline(always)]
    fn read(name: &[u8]) -> Words {
        let len = name.len();
        let mid = (len / 2).saturating_sub(4);
        match (
            name.first_chunk::<8>(),
            name.get(mid..).and_then(<[u8]>::first_chunk::<8>),
            name.last_chunk::<8>(),
        ) {
            (Some(first), Some(middle), Some(last)) => Words {
                len,
                first: u64::from_le_bytes(*first),
                middle: u64::from_le_bytes(*middle),
                last: u64::from_le_bytes(*last),
            },
            _ => Words {
                len,
                first: word(name, 0),
                middle: word(name, mid),
                last: word(name, len.saturating_sub(8)),
            },
        }
    }

    /// The hash key: the words mixed with the length.
    fn key(&self) -> u64 {
        self.first ^ self.middle.rotate_left(21) ^ self.last.rotate_left(42) ^ self.len as u64
    }
}

/// [`word`] at compile time.
const fn const_word(bytes: &[u8], start: usize) -> u64 {
    let mut w = 0u64;
    let mut i = 0;
    while i < 8 && start + i < bytes.len() {
        w |= (bytes[start + i] as u64) << (8 * i);
        i += 1;
    }
    w
}

impl MethodHash {
    /// The slot of a name with these words (`xtask/src/codegen/emit.rs` computes the same
    /// when it builds the table).
    fn slot(&self, words: &Words) -> usize {
        words
            .key()
            .wrapping_mul(self.multiplier)
            .checked_shr(self.shift)
            .unwrap_or(0) as usize
    }

    /// The index in `ALL_METHODS` of `name`, if it is one of them.
    #[inline]
    pub(super) fn index(&self, name: &str, all: &[&str]) -> Option<usize> {
        let words = Words::read(name.as_bytes());
        let slot = *self.slots.get(self.slot(&words))?;
        let index = usize::from(slot).checked_sub(1)?;
        let same = *self.words.get(index)? == words
            && (words.len <= COVERED || all.get(index).is_some_and(|m| *m == name));
        same.then_some(index)
    }
}
