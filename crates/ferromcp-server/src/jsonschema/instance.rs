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

use ferromcp_types::tables::ObjectMembers;
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
pub(crate) struct Text<'a>(pub(crate) &'a str);

/// An object's members read from its text: (key, value text) in [`Map`] order.
pub(crate) struct TextObject<'a> {
    members: Vec<(Cow<'a, str>, Text<'a>)>,
    /// Whether the keys are in ascending order (then `get` searches by halves).
    sorted: bool,
}

impl<'a> Instance<'a> for Text<'a> {
    type Array = Vec<Text<'a>>;
    type Object = TextObject<'a>;

    fn kind(self) -> Kind<'a, Self> {
        let text = self.0;
        match text.as_bytes().first() {
            Some(b'{') => object(text).map_or(Kind::Malformed, Kind::Object),
            Some(b'[') => array(text).map_or(Kind::Malformed, Kind::Array),
            Some(b'"') => string(text).map_or(Kind::Malformed, Kind::String),
            Some(b'n') if text == "null" => Kind::Null,
            Some(b't') if text == "true" => Kind::Bool(true),
            Some(b'f') if text == "false" => Kind::Bool(false),
            Some(b'-' | b'0'..=b'9') => {
                serde_json::from_str::<Number>(text).map_or(Kind::Malformed, Kind::Number)
            }
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
        self.members.len()
    }

    fn get(&self, key: &str) -> Option<Text<'a>> {
        if self.sorted {
            let i = self
                .members
                .binary_search_by(|(k, _)| k.as_ref().cmp(key))
                .ok()?;
            return self.members.get(i).map(|(_, v)| *v);
        }
        self.members
            .iter()
            .find(|(k, _)| k.as_ref() == key)
            .map(|(_, v)| *v)
    }

    fn iter(&self) -> impl Iterator<Item = (&str, Text<'a>)> + '_ {
        self.members.iter().map(|(k, v)| (k.as_ref(), *v))
    }
}

/// The content of a string's text, borrowed when it has no escapes.
fn string(text: &str) -> Option<Cow<'_, str>> {
    let inner = text.strip_prefix('"')?.strip_suffix('"')?;
    if inner.contains('\\') {
        serde_json::from_str::<String>(text).ok().map(Cow::Owned)
    } else {
        Some(Cow::Borrowed(inner))
    }
}

/// An object's members in the order a [`Map`] parsed from the text iterates them, each key
/// once with its last value (as the parse keeps it). Keys already in ascending order, none
/// repeated (the common case) are that order under either of `Map`'s orderings (sorted, or
/// insertion with `preserve_order`); otherwise a `Map` of the keys says what the order is.
fn object(text: &str) -> Option<TextObject<'_>> {
    let mut walk = ObjectMembers::new(text);
    let members: Vec<(Cow<'_, str>, Text<'_>)> = walk.by_ref().map(|(k, v)| (k, Text(v))).collect();
    if walk.is_broken() {
        return None;
    }
    let sorted = members.windows(2).all(|w| match w {
        [a, b] => a.0 < b.0,
        _ => true,
    });
    if sorted {
        return Some(TextObject { members, sorted });
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
    Some(TextObject { members, sorted })
}

/// An array's items, each as its text.
fn array(text: &str) -> Option<Vec<Text<'_>>> {
    let b = text.as_bytes();
    let mut items = Vec::new();
    let mut i = skip_ws(b, 1);
    if b.get(i) == Some(&b']') {
        return Some(items);
    }
    loop {
        let end = value_end(b, i)?;
        items.push(Text(text.get(i..end)?));
        i = skip_ws(b, end);
        match b.get(i)? {
            b',' => i = skip_ws(b, i + 1),
            b']' if i + 1 == b.len() => return Some(items),
            _ => return None,
        }
    }
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while matches!(b.get(i), Some(b' ' | b'\n' | b'\r' | b'\t')) {
        i += 1;
    }
    i
}

/// The end (exclusive) of the string that starts at `i` (a quote).
fn string_end(b: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    loop {
        match b.get(j)? {
            b'"' => return Some(j + 1),
            b'\\' => j += 2,
            _ => j += 1,
        }
    }
}

/// The end (exclusive) of the value that starts at `i`: containers by counting brackets
/// outside strings (no recursion, whatever the nesting).
fn value_end(b: &[u8], i: usize) -> Option<usize> {
    match b.get(i)? {
        b'"' => string_end(b, i),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut j = i;
            loop {
                match b.get(j)? {
                    b'"' => {
                        j = string_end(b, j)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth = depth.checked_sub(1)?;
                        if depth == 0 {
                            return Some(j + 1);
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
        }
        _ => {
            let mut j = i;
            while b
                .get(j)
                .is_some_and(|c| !matches!(c, b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t'))
            {
                j += 1;
            }
            (j > i).then_some(j)
        }
    }
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
