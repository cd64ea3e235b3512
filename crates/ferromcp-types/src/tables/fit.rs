//! Whether a result's JSON text already is what shaping and validation would make of it: valid
//! against the revision's result type, with nothing that shaping would drop (issue 17 point
//! 4, the result half).
//!
//! One walk reads the text front to back, each byte once: every value is checked where it is
//! read and the walk goes on from where it ends, so a nested value is never scanned again to
//! find its end (the cost that made a walk of member-finding slower than the walk over a
//! `Value`). It answers yes only when it is sure, for the cases results usually are:
//!
//! - an object schema with explicit properties and nothing composite (`CallToolResult`,
//!   `TextContent`, `Tool`, ...): each member checked against its property as it is read;
//!   while shaping applies (the schema is closed), a member the schema does not define is a
//!   no (shaping would drop it), `_meta` excepted;
//! - an array schema with `items`: each item in turn;
//! - a union with nothing else on it: the branches in order, the first that fits (a
//!   branch that fits also is one shaping follows, so what it defines shaping keeps);
//! - a schema that only is a `$ref`: its target; a scalar, or a container under a schema that
//!   says nothing about its inside: read to its end and checked by `raw.rs`.
//!
//! Before 2026-07-28 shaping drops a top-level `resultType`, whatever it holds: the walk that
//! may cut ([`result_fitted`]) reads past it and hands back the text without it (what a
//! 2026-07-28 peer's result relayed to an older client needs), the other says no.
//!
//! Anything else is a no, and a no only sends the caller to the walks over a parsed value
//! (which then shape, check and report exactly as before): a false no costs time, never a
//! wrong answer. The tests compare the walk with shaping and validation over values.

use std::borrow::Cow;
use std::cell::Cell;

use super::data::VersionData;
use super::raw;
use super::schema::{Additional, Key, Node, NodeId, T_ARRAY, T_OBJECT};
use super::shape::{META, RESULT_TYPE};
use super::validate::MAX_DEPTH;
use super::walk::{skip_ws, string_end_escaped, unquote, value_end};

/// Whether the result text `text` matches node `root` and shaping for its revision leaves it
/// as it is; `modern`: the revision is 2026-07-28 or later (before it, shaping removes a
/// top-level `resultType`).
pub(super) fn result_fits(c: &VersionData, root: NodeId, text: &str, modern: bool) -> bool {
    walk::<false>(c, root, text, modern).is_some()
}

/// The text shaping and validation would make of the result text `text` (node `root`), when
/// the walk is sure of it: `text` itself when it fits as it is, or (before 2026-07-28) `text`
/// without its top-level `resultType` member when that is all shaping would change (the result
/// of a 2026-07-28 peer relayed to an older client).
pub(super) fn result_fitted<'t>(
    c: &VersionData,
    root: NodeId,
    text: &'t str,
    modern: bool,
) -> Option<Cow<'t, str>> {
    match modern {
        true => walk::<false>(c, root, text, modern),
        false => walk::<true>(c, root, text, modern),
    }
}

/// The walk; `CUT`: a top-level `resultType` that shaping drops is taken out of the text
/// instead of making the walk say no (a parameter of the type, so that the walk that never
/// cuts carries none of it).
fn walk<'t, const CUT: bool>(
    c: &VersionData,
    root: NodeId,
    text: &'t str,
    modern: bool,
) -> Option<Cow<'t, str>> {
    let b = text.as_bytes();
    let walk = Walk::<CUT> {
        c,
        text,
        b,
        keep_result_type: modern,
        cut: Cell::new(None),
    };
    let end = walk.value(root, 0, 0, Pos::Top)?;
    if skip_ws(b, end) != text.len() {
        return None;
    }
    let cut = match CUT {
        true => walk.cut.get(),
        false => None,
    };
    let Some((start, end)) = cut else {
        return Some(Cow::Borrowed(text));
    };
    // The member and one comma next to it: the one after it, else the one before it (the
    // last member), else none (the only member).
    let after = skip_ws(b, end);
    let (from, to) = match b.get(after)? {
        b',' => (start, skip_ws(b, after + 1)),
        _ => {
            let before = text.get(..start)?.trim_end_matches([' ', '\n', '\r', '\t']);
            match before.ends_with(',') {
                true => (before.len() - 1, end),
                false => (start, end),
            }
        }
    };
    let mut out = String::with_capacity(text.len() - (to - from));
    out.push_str(text.get(..from)?);
    out.push_str(text.get(to..)?);
    Some(Cow::Owned(out))
}

/// Where a value sits, for what shaping does to it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Pos {
    /// The result object itself (shaping drops `resultType` there before 2026-07-28).
    Top,
    /// Inside, where shaping applies.
    Shaped,
    /// Inside a value shaping leaves alone (`_meta`, an open object or array).
    Untouched,
}

struct Walk<'a, const CUT: bool> {
    c: &'a VersionData,
    text: &'a str,
    b: &'a [u8],
    keep_result_type: bool,
    /// With `CUT`, the top-level `resultType` member to take out: from its key's quote to its value's end.
    cut: Cell<Option<(usize, usize)>>,
}

impl<const CUT: bool> Walk<'_, CUT> {
    /// The end of the value that starts at `i`, when it matches node `id` (and shaping leaves
    /// it as it is); `None` for no (or not sure).
    fn value(&self, id: NodeId, i: usize, depth: u32, pos: Pos) -> Option<usize> {
        self.pinned(id, i, depth, pos, &[])
    }

    /// [`Walk::value`], the value also held to `pins`: object schemas of properties only
    /// (see [`Walk::inlined`]), checked member by member as the object is walked, so the
    /// text is not read again for them.
    fn pinned(
        &self,
        mut id: NodeId,
        i: usize,
        mut depth: u32,
        pos: Pos,
        pins: &[NodeId],
    ) -> Option<usize> {
        let c = self.c;
        let node = loop {
            if depth > MAX_DEPTH {
                return None;
            }
            let node = c.node(id);
            match node.reference {
                Some(target) if node.pure_ref && !node.type_only => {
                    id = target;
                    depth += 1;
                }
                _ => break node,
            }
        };
        let first = *self.b.get(i)?;
        // A union branch pinned to a constant (`allOf: [X, {"properties": {K: {"const": ..}}}]`:
        // the 2026-07-28 results of `tools/call`, `prompts/get` and `resources/read`, told
        // apart by `resultType`): X walked as usual (it defines every member the value may
        // have), each pin checked on the member it names as the walk meets it (the kernel
        // writes `resultType` last: checking the pin on the whole text afterwards read the
        // result a second time), or, for a pin of any other shape, on the value's text as
        // `raw.rs` checks it.
        if !node.never
            && !node.all_of.is_empty()
            && node.any_of.is_empty()
            && node.reference.is_none()
            && node.constant.is_none()
            && !node.inspects_fields()
        {
            let (&base, more) = c.all_of(node).split_first()?;
            if pins.is_empty() && more.iter().all(|&pin| self.inlined(pin)) {
                return self.pinned(base, i, depth + 1, pos, more);
            }
            let end = self.pinned(base, i, depth + 1, pos, pins)?;
            let text = self.text.get(i..end)?;
            return more
                .iter()
                .all(|&pin| raw::matches(c, pin, text, depth + 1))
                .then_some(end);
        }
        let plain = !node.never
            && node.reference.is_none()
            && node.all_of.is_empty()
            && node.constant.is_none()
            && c.bounds(node).is_none_or(|b| c.enumeration(b).is_none());
        let object_walk = plain
            && !node.type_only
            && node.any_of.is_empty()
            && (node.types == 0 || node.types & T_OBJECT != 0);
        if !pins.is_empty() && (first != b'{' || !object_walk) {
            // Not an object this walk goes into: the value on its own, then each pin on its
            // text.
            let end = self.pinned(id, i, depth, pos, &[])?;
            let text = self.text.get(i..end)?;
            return pins
                .iter()
                .all(|&pin| raw::matches(c, pin, text, depth + 1))
                .then_some(end);
        }
        if plain && !node.type_only {
            if !node.any_of.is_empty() {
                if node.inspects_fields() || node.has_properties || node.items.is_some() {
                    return None;
                }
                if c.bounds(node).is_some() || (node.types != 0 && !type_admits(node, first)) {
                    return None;
                }
                return c.any_of(node).iter().find_map(|&branch| {
                    // A branch that says no takes back what it would have cut.
                    if CUT && pos == Pos::Top {
                        self.cut.set(None);
                    }
                    self.value(branch, i, depth + 1, pos)
                });
            }
            match first {
                b'{' if node.types == 0 || node.types & T_OBJECT != 0 => {
                    return self.object(node, i, depth, pos, pins);
                }
                b'[' if node.types == 0 || node.types & T_ARRAY != 0 => {
                    return self.array(node, i, depth, pos);
                }
                _ => {}
            }
        }
        // A scalar, or a value the walk does not go into: read to its end, check it as
        // `raw.rs` does. A container that shaping might change inside is a no, unless the
        // schema says nothing about its inside (only a type: shaping leaves it open).
        if matches!(first, b'{' | b'[') && pos != Pos::Untouched && !node.type_only {
            return None;
        }
        let end = value_end(self.b, i)?;
        let text = self.text.get(i..end)?;
        raw::matches(c, id, text, depth).then_some(end)
    }

    /// An object under a schema with (maybe) properties and nothing composite.
    fn object(
        &self,
        node: &Node,
        i: usize,
        depth: u32,
        pos: Pos,
        pins: &[NodeId],
    ) -> Option<usize> {
        let c = self.c;
        let b = self.b;
        // Shaping drops undefined members of an object described by properties and not
        // opened by `additionalProperties`; any other object it leaves alone, inside too.
        let closed = node.has_properties
            && matches!(node.additional, Additional::Absent | Additional::Never);
        let shaped = pos != Pos::Untouched && closed;
        let inner = if shaped { Pos::Shaped } else { Pos::Untouched };
        let props = c.props(node);
        let mut required_seen = 0usize;
        let mut pin_required_seen = 0usize;
        // The result's own members: one written twice (a handler's `_meta` next to the one
        // the kernel appends) is a no, so that the path of values decides which one stays.
        let mut top_keys: Vec<Cow<'_, str>> = Vec::new();
        let mut at = skip_ws(b, i + 1);
        if b.get(at) == Some(&b'}') {
            let none_required =
                node.required.is_empty() && pins.iter().all(|&p| c.node(p).required.is_empty());
            return none_required.then_some(at + 1);
        }
        loop {
            if *b.get(at)? != b'"' {
                return None;
            }
            let key_start = at;
            let (key_end, escaped) = string_end_escaped(b, at)?;
            let key = match escaped {
                false => Cow::Borrowed(self.text.get(at + 1..key_end - 1)?),
                true => unquote(self.text.get(at..key_end)?)?,
            };
            at = skip_ws(b, key_end);
            if *b.get(at)? != b':' {
                return None;
            }
            at = skip_ws(b, at + 1);
            let mut cut = false;
            if pos == Pos::Top {
                if top_keys.contains(&key) {
                    return None;
                }
                if !self.keep_result_type && key == RESULT_TYPE {
                    // Shaping drops it, whatever it holds.
                    if !CUT {
                        return None;
                    }
                    cut = true;
                }
                top_keys.push(key.clone());
            }
            let is_meta = key == META;
            let end = match c.find_prop(props, &Key::new(&key)) {
                _ if CUT && cut => {
                    let end = value_end(b, at)?;
                    self.cut.set(Some((key_start, end)));
                    end
                }
                Some(prop) => {
                    required_seen += usize::from(prop.required);
                    let child = if is_meta { Pos::Untouched } else { inner };
                    self.value(prop.node, at, depth + 1, child)?
                }
                None if shaped && !is_meta => return None,
                None => match node.additional {
                    Additional::Schema(extra) => {
                        self.value(extra, at, depth + 1, Pos::Untouched)?
                    }
                    Additional::Never => return None,
                    Additional::Absent | Additional::Any => value_end(b, at)?,
                },
            };
            for &pin in pins {
                if let Some(prop) = c.find_prop(c.props(c.node(pin)), &Key::new(&key)) {
                    pin_required_seen += usize::from(prop.required);
                    if !raw::matches(c, prop.node, self.text.get(at..end)?, depth + 1) {
                        return None;
                    }
                }
            }
            at = skip_ws(b, end);
            match b.get(at)? {
                b',' => at = skip_ws(b, at + 1),
                b'}' => break,
                _ => return None,
            }
        }
        // A key written twice counts twice, as in `raw.rs`'s walk over params (serde never
        // writes one twice).
        let pins_required: usize = pins.iter().map(|&p| c.node(p).required.len()).sum();
        (required_seen == node.required.len() && pin_required_seen == pins_required)
            .then_some(at + 1)
    }

    /// Whether pin `id` can be checked member by member as the object it pins is walked: an
    /// object schema of properties and nothing else (no type but object, no composite, no
    /// bound, extra members allowed), whose required names all are properties (so counting
    /// the required properties met is checking `required`).
    fn inlined(&self, id: NodeId) -> bool {
        let c = self.c;
        let node = c.node(id);
        let props = c.props(node);
        !node.never
            && (node.types == 0 || node.types == T_OBJECT)
            && node.reference.is_none()
            && node.constant.is_none()
            && node.any_of.is_empty()
            && node.all_of.is_empty()
            && node.items.is_none()
            && c.bounds(node).is_none()
            && matches!(node.additional, Additional::Absent | Additional::Any)
            && c.required(node).iter().all(|name| {
                props
                    .iter()
                    .any(|p| p.required && c.text(&p.name) == c.text(name))
            })
    }

    /// An array under a schema with (maybe) `items` and nothing composite.
    fn array(&self, node: &Node, i: usize, depth: u32, pos: Pos) -> Option<usize> {
        let b = self.b;
        let inner = match (pos, node.items) {
            (Pos::Untouched, _) | (_, None) => Pos::Untouched,
            _ => Pos::Shaped,
        };
        let mut count = 0u64;
        let mut at = skip_ws(b, i + 1);
        if b.get(at) != Some(&b']') {
            loop {
                let end = match node.items {
                    Some(items) => self.value(items, at, depth + 1, inner)?,
                    None => value_end(b, at)?,
                };
                count += 1;
                at = skip_ws(b, end);
                match b.get(at)? {
                    b',' => at = skip_ws(b, at + 1),
                    b']' => break,
                    _ => return None,
                }
            }
        }
        let ok = self.c.bounds(node).is_none_or(|bounds| {
            bounds.min_items.is_none_or(|min| count >= min)
                && bounds.max_items.is_none_or(|max| count <= max)
        });
        ok.then_some(at + 1)
    }
}

/// Whether a node's `type` admits the container that starts with `first` (scalars: no, so
/// that the union's own type is checked by `raw.rs`).
fn type_admits(node: &Node, first: u8) -> bool {
    match first {
        b'{' => node.types & T_OBJECT != 0,
        b'[' => node.types & T_ARRAY != 0,
        _ => false,
    }
}
