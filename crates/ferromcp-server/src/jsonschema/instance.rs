//! What the evaluator validates, behind one trait: a [`Value`], or the JSON text of one (a
//! tool's arguments as they came off the wire, never turned into a value).
//!
//! The text side reads what a keyword asks for where it asks: a value's kind from its first
//! byte, an array's items and an object's members by a one-level walk of the text, a string
//! borrowed in place when it has no escapes, a number parsed from its slice to the
//! [`Number`] serde_json would have made. An object's members come in the order, and with the
//! duplicates resolved, as a [`serde_json::Map`] parsed from the same text would hold them, so
//! the two sides report the same errors in the same order.

use std::borrow::Cow;

use ferromcp_types::tables::{ArrayItems, MemberKey, MemberWalk, unquote};
use serde_json::{Map, Number, Value};

/// What an instance is, one level deep.
pub(crate) enum Kind<'a, I: Instance<'a>> {
    Null,
    Bool(bool),
    Number(Number),
    String(Cow<'a, str>),
    Array(I::Array),
    Object(I::Object),
    /// Text that is not one JSON value (never for a [`Value`]).
    Malformed,
}

/// A JSON instance the evaluator can walk.
pub(crate) trait Instance<'a>: Copy {
    /// An array's items.
    type Array: Items<'a, Self>;
    /// An object's members.
    type Object: Members<'a, Self>;

    /// What the instance is, one level deep.
    fn kind(self) -> Kind<'a, Self>;

    /// The instance as compact JSON, cut at `limit` bytes (see `value::render`).
    fn render(self) -> String;
}

/// An array's items.
pub(crate) trait Items<'a, I> {
    fn len(&self) -> usize;
    fn get(&self, i: usize) -> Option<I>;
    fn iter(&self) -> impl Iterator<Item = I> + '_;
}

/// An object's members, in [`Map`] order, each key once.
pub(crate) trait Members<'a, I> {
    fn len(&self) -> usize;
    fn get(&self, key: &str) -> Option<I>;
    fn iter(&self) -> impl Iterator<Item = (&str, I)> + '_;

    fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }
}

impl<'a> Instance<'a> for &'a Value {
    type Array = &'a [Value];
    type Object = &'a Map<String, Value>;

    fn kind(self) -> Kind<'a, Self> {
        match self {
            Value::Null => Kind::Null,
            Value::Bool(b) => Kind::Bool(*b),
            Value::Number(n) => Kind::Number(n.clone()),
            Value::String(s) => Kind::String(Cow::Borrowed(s)),
            Value::Array(items) => Kind::Array(items.as_slice()),
            Value::Object(map) => Kind::Object(map),
        }
    }

    fn render(self) -> String {
        super::value::render(self)
    }
}

impl<'a> Items<'a, &'a Value> for &'a [Value] {
    fn len(&self) -> usize {
        <[Value]>::len(self)
    }

    fn get(&self, i: usize) -> Option<&'a Value> {
        <[Value]>::get(self, i)
    }

    fn iter(&self) -> impl Iterator<Item = &'a Value> + '_ {
        <[Value]>::iter(self)
    }
}

impl<'a> Members<'a, &'a Value> for &'a Map<String, Value> {
    fn len(&self) -> usize {
        Map::len(self)
    }

    fn get(&self, key: &str) -> Option<&'a Value> {
        Map::get(self, key)
    }

    fn iter(&self) -> impl Iterator<Item = (&str, &'a Value)> + '_ {
        Map::iter(self).map(|(k, v)| (k.as_str(), v))
    }
}

/// The text of one JSON value (no whitespace around it), as the evaluator reads it.
#[derive(Clone, Copy)]
pub(crate) struct Text<'a> {
    text: &'a str,
    /// When the walk that found the text saw a string with no escape: its content (the text
    /// between the quotes), so reading it does not scan the string again.
    plain: Option<&'a str>,
}

impl<'a> Text<'a> {
    /// The text of one JSON value.
    pub(crate) fn new(text: &'a str) -> Self {
        Self { text, plain: None }
    }

    /// A value's text as the walk found it, and a string's content when it has no escape.
    fn walked((text, plain): (&'a str, Option<&'a str>)) -> Self {
        Self { text, plain }
    }
}

/// How many members an object keeps in place, with no allocation: all of them when their
/// keys have no escapes and come in ascending order (the common case).
const INLINE: usize = 6;

/// An object's members read from its text: (key, value text) in [`Map`] order, each key once.
pub(crate) struct TextObject<'a>(ObjectRepr<'a>);

/// A member kept in place: its key (no escapes) and its value.
type InlineMember<'a> = (&'a str, Text<'a>);
/// A member of any other object: its key (unescaped) and its value.
type HeapMember<'a> = (Cow<'a, str>, Text<'a>);

#[allow(
    clippy::large_enum_variant,
    reason = "the members kept in place are the allocation this avoids"
)]
enum ObjectRepr<'a> {
    /// The first `len` of `members`: keys without escapes, strictly ascending (the order a
    /// `Map` of them iterates in, whatever its ordering), so each key once.
    Inline {
        len: usize,
        members: [(&'a str, Text<'a>); INLINE],
    },
    /// Any other object.
    Heap {
        members: Vec<(Cow<'a, str>, Text<'a>)>,
        /// Whether the keys are in ascending order (then `get` searches by halves).
        sorted: bool,
    },
}

impl<'a> Instance<'a> for Text<'a> {
    type Array = Vec<Text<'a>>;
    type Object = TextObject<'a>;

    fn kind(self) -> Kind<'a, Self> {
        let text = self.text;
        match text.as_bytes().first() {
            Some(b'{') => object(text),
            Some(b'[') => array(text).map_or(Kind::Malformed, Kind::Array),
            Some(b'"') => match self.plain {
                Some(content) => Kind::String(Cow::Borrowed(content)),
                None => unquote(text).map_or(Kind::Malformed, Kind::String),
            },
            Some(b'n') if text == "null" => Kind::Null,
            Some(b't') if text == "true" => Kind::Bool(true),
            Some(b'f') if text == "false" => Kind::Bool(false),
            Some(b'-' | b'0'..=b'9') => number(text).map_or(Kind::Malformed, Kind::Number),
            _ => Kind::Malformed,
        }
    }

    fn render(self) -> String {
        super::value::render_with(|w| write_compact(w, self))
    }
}

impl<'a> Items<'a, Text<'a>> for Vec<Text<'a>> {
    fn len(&self) -> usize {
        <[Text<'a>]>::len(self)
    }

    fn get(&self, i: usize) -> Option<Text<'a>> {
        <[Text<'a>]>::get(self, i).copied()
    }

    fn iter(&self) -> impl Iterator<Item = Text<'a>> + '_ {
        <[Text<'a>]>::iter(self).copied()
    }
}

impl<'a> Members<'a, Text<'a>> for TextObject<'a> {
    fn len(&self) -> usize {
        match &self.0 {
            ObjectRepr::Inline { len, .. } => *len,
            ObjectRepr::Heap { members, .. } => members.len(),
        }
    }

    fn get(&self, key: &str) -> Option<Text<'a>> {
        match &self.0 {
            ObjectRepr::Inline { len, members } => members
                .get(..*len)?
                .iter()
                .find(|(k, _)| *k == key)
                .map(|(_, v)| *v),
            ObjectRepr::Heap {
                members,
                sorted: true,
            } => {
                let i = members
                    .binary_search_by(|(k, _)| k.as_ref().cmp(key))
                    .ok()?;
                members.get(i).map(|(_, v)| *v)
            }
            ObjectRepr::Heap { members, .. } => members
                .iter()
                .find(|(k, _)| k.as_ref() == key)
                .map(|(_, v)| *v),
        }
    }

    fn iter(&self) -> impl Iterator<Item = (&str, Text<'a>)> + '_ {
        let (inline, heap): (&[InlineMember<'a>], &[HeapMember<'a>]) = match &self.0 {
            ObjectRepr::Inline { len, members } => (members.get(..*len).unwrap_or_default(), &[]),
            ObjectRepr::Heap { members, .. } => (&[], members),
        };
        let inline = inline.iter().map(|(k, v)| (*k, *v));
        inline.chain(heap.iter().map(|(k, v)| (k.as_ref(), *v)))
    }
}

/// A number's text as the [`Number`] serde_json parses it to: a short integer read here
/// (what serde_json makes of it: `u64`, or `i64` when negative; `-0` is left to serde_json,
/// which makes it a float), anything else by serde_json.
fn number(text: &str) -> Option<Number> {
    let (negative, digits) = match text.as_bytes() {
        [b'-', rest @ ..] => (true, rest),
        all => (false, all),
    };
    // At most 18 digits: below 10^18, in range of both u64 and i64. No leading zero.
    if let [first, ..] = digits
        && digits.len() <= 18
        && (*first != b'0' || digits.len() == 1)
        && digits.iter().all(u8::is_ascii_digit)
    {
        let n = digits
            .iter()
            .fold(0u64, |n, d| n * 10 + u64::from(d - b'0'));
        if !negative {
            return Some(Number::from(n));
        }
        if let Ok(n) = i64::try_from(n)
            && n != 0
        {
            return Some(Number::from(-n));
        }
    }
    serde_json::from_str::<Number>(text).ok()
}

/// An object's members in the order a [`Map`] parsed from the text iterates them, each key
/// once with its last value (as the parse keeps it). Keys already in ascending order, none
/// repeated (the common case) are that order under either of `Map`'s orderings (sorted, or
/// insertion with `preserve_order`): up to [`INLINE`] of them without escapes are kept in
/// place; otherwise a `Map` of the keys says what the order is.
fn object(text: &str) -> Kind<'_, Text<'_>> {
    let Some(mut walk) = MemberWalk::new(text) else {
        return Kind::Malformed;
    };
    let mut inline = [("", Text::new("")); INLINE];
    let mut len = 0;
    let spilled = loop {
        let Some(key) = walk.next_key() else {
            return Kind::Malformed;
        };
        let Some(key) = key else {
            return Kind::Object(TextObject(ObjectRepr::Inline {
                len,
                members: inline,
            }));
        };
        let Some(value) = walk.value_plain() else {
            return Kind::Malformed;
        };
        let value = Text::walked(value);
        let plain = key.plain().filter(|plain| {
            len.checked_sub(1)
                .and_then(|last| inline.get(last))
                .is_none_or(|(last, _)| last < plain)
        });
        match (inline.get_mut(len), plain) {
            (Some(slot), Some(plain)) => {
                *slot = (plain, value);
                len += 1;
            }
            _ => break (key, value),
        }
    };
    spill(&inline[..len], spilled, walk).map_or(Kind::Malformed, Kind::Object)
}

/// The rest of [`object`] once the members stop fitting in place: `kept` so far, then
/// `next`, then the rest of `walk`.
fn spill<'a>(
    kept: &[(&'a str, Text<'a>)],
    next: (MemberKey<'a>, Text<'a>),
    mut walk: MemberWalk<'a>,
) -> Option<TextObject<'a>> {
    let mut members: Vec<(Cow<'a, str>, Text<'a>)> = Vec::with_capacity(kept.len() * 2 + 1);
    members.extend(kept.iter().map(|(k, v)| (Cow::Borrowed(*k), *v)));
    let (key, value) = next;
    members.push((key.unquoted()?, value));
    while let Some(key) = walk.next_key()? {
        members.push((key.unquoted()?, Text::walked(walk.value_plain()?)));
    }
    Some(in_map_order(members))
}

/// `members` (in text order) in [`Map`] order, each key once with its last value.
fn in_map_order<'a>(members: Vec<(Cow<'a, str>, Text<'a>)>) -> TextObject<'a> {
    let sorted = members.windows(2).all(|w| match w {
        [a, b] => a.0 < b.0,
        _ => true,
    });
    if sorted {
        return TextObject(ObjectRepr::Heap { members, sorted });
    }
    let mut order = Map::new();
    for (i, (key, _)) in members.iter().enumerate() {
        order.insert(key.as_ref().to_owned(), Value::from(i));
    }
    let mut slots: Vec<Option<(Cow<'_, str>, Text<'_>)>> = members.into_iter().map(Some).collect();
    let mut members = Vec::with_capacity(order.len());
    for i in order.values() {
        let slot = i
            .as_u64()
            .and_then(|i| usize::try_from(i).ok())
            .and_then(|i| slots.get_mut(i));
        members.extend(slot.and_then(Option::take));
    }
    let sorted = members.windows(2).all(|w| match w {
        [a, b] => a.0 < b.0,
        _ => true,
    });
    TextObject(ObjectRepr::Heap { members, sorted })
}

/// An array's items, each as its text.
fn array(text: &str) -> Option<Vec<Text<'_>>> {
    let mut items = ArrayItems::new(text);
    let all = std::iter::from_fn(|| items.next_plain())
        .map(Text::walked)
        .collect();
    (!items.is_broken()).then_some(all)
}

/// Writes `inst` as serde_json's compact writer writes the value it parses to: scalars by
/// serde_json itself, objects in [`Map`] order. Stops at the first refused write (the bounded
/// writer is full), so a huge or deep value costs only what is shown.
fn write_compact<'a, I: Instance<'a>>(w: &mut dyn std::io::Write, inst: I) -> std::io::Result<()> {
    match inst.kind() {
        Kind::Null => w.write_all(b"null"),
        Kind::Bool(b) => w.write_all(if b { b"true" } else { b"false" }),
        Kind::Number(n) => serde_json::to_writer(&mut *w, &n).map_err(std::io::Error::other),
        Kind::String(s) => {
            serde_json::to_writer(&mut *w, s.as_ref()).map_err(std::io::Error::other)
        }
        Kind::Array(items) => {
            w.write_all(b"[")?;
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    w.write_all(b",")?;
                }
                write_compact(w, item)?;
            }
            w.write_all(b"]")
        }
        Kind::Object(members) => {
            w.write_all(b"{")?;
            for (i, (key, value)) in members.iter().enumerate() {
                if i > 0 {
                    w.write_all(b",")?;
                }
                serde_json::to_writer(&mut *w, key).map_err(std::io::Error::other)?;
                w.write_all(b":")?;
                write_compact(w, value)?;
            }
            w.write_all(b"}")
        }
        Kind::Malformed => Err(std::io::Error::other("not JSON")),
    }
}
