//! The hot path of validation on JSON text: whether the text of one valid JSON value matches a
//! schema, as a plain yes or no, without building a `serde_json::Value` (issue 17 point 4:
//! params stay raw until the handler's typed deserialization).
//!
//! It answers what [`matches::matches`](super::matches::matches) answers for the value the text
//! parses to, walking the text instead of a tree: a union or an `allOf` reads the same text once
//! per branch, an object's fields are found by reading its members, and scalars are read where
//! they are checked (strings without escapes are compared in place). Whenever the text is not
//! what the walk expects (it never happens for text a `RawJson` holds) the answer is no, and the
//! caller falls back to the walk over a parsed value, which also builds the error report: a
//! false "no" costs time, never a wrong answer. The tests compare the two walks.

use std::borrow::Cow;

use serde_json::Value;

use super::data::VersionData;
use super::matches::within;
use super::schema::{
    Additional, Key, Lit, Node, NodeId, T_ARRAY, T_BOOLEAN, T_INTEGER, T_NULL, T_NUMBER, T_OBJECT,
    T_STRING, Union,
};
use super::validate::MAX_DEPTH;

/// Whether the JSON text `text` (one value, no whitespace around it) matches node `id`.
pub(super) fn matches(c: &VersionData, mut id: NodeId, text: &str, mut depth: u32) -> bool {
    loop {
        if depth > MAX_DEPTH {
            return false;
        }
        let node = c.node(id);
        if node.type_only {
            return type_bits(text).is_some_and(|bits| node.types == 0 || node.types & bits != 0);
        }
        match node.reference {
            Some(target) if node.pure_ref => {
                id = target;
                depth += 1;
            }
            _ => return node_matches(c, node, text, depth),
        }
    }
}

/// The `T_*` bits the value `text` satisfies (as `schema::type_of` says of its value).
fn type_bits(text: &str) -> Option<u8> {
    Some(match text.as_bytes().first()? {
        b'{' => T_OBJECT,
        b'[' => T_ARRAY,
        b'"' => T_STRING,
        b'n' => T_NULL,
        b't' | b'f' => T_BOOLEAN,
        // An integer that fits an i64 (no fraction, no exponent, at most 18 digits): what
        // serde_json reads as one, without reading it.
        _ if short_integer(text) => T_INTEGER | T_NUMBER,
        _ => match serde_json::from_str::<Value>(text).ok()? {
            Value::Number(n) => {
                let integral =
                    n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0);
                if integral {
                    T_INTEGER | T_NUMBER
                } else {
                    T_NUMBER
                }
            }
            _ => return None,
        },
    })
}

/// Whether `text` is `-?[0-9]{1,18}`.
fn short_integer(text: &str) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text);
    !digits.is_empty() && digits.len() <= 18 && digits.bytes().all(|b| b.is_ascii_digit())
}

#[inline(never)]
fn node_matches(c: &VersionData, node: &Node, text: &str, depth: u32) -> bool {
    if node.never {
        return false;
    }
    if let Some(target) = node.reference
        && !matches(c, target, text, depth + 1)
    {
        return false;
    }
    let Some(bits) = type_bits(text) else {
        return false;
    };
    if node.types != 0 && node.types & bits == 0 {
        return false;
    }
    let bounds = c.bounds(node);
    let own_ok = match text.as_bytes().first() {
        // A constant or an `enum` member is a scalar: no container equals one.
        Some(b'{') => {
            node.constant.is_none()
                && bounds.is_none_or(|b| c.enumeration(b).is_none())
                && (!node.inspects_fields() || object_matches(c, node, text, depth))
        }
        Some(b'[') => {
            let mut items = Items::new(text);
            let mut count = 0u64;
            let mut ok = node.constant.is_none();
            while ok && let Some(item) = items.next() {
                count += 1;
                ok = node.items.is_none_or(|id| matches(c, id, item, depth + 1));
            }
            ok && !items.broken
                && bounds.is_none_or(|b| {
                    c.enumeration(b).is_none()
                        && b.min_items.is_none_or(|min| count >= min)
                        && b.max_items.is_none_or(|max| count <= max)
                })
        }
        Some(b'"') => match unquote(text) {
            Some(s) => {
                let is = |lit: &Lit| matches!(lit, Lit::Str(k) if c.text(k) == s.as_ref());
                node.constant.is_none_or(|k| is(&k))
                    && bounds.is_none_or(|b| {
                        c.enumeration(b)
                            .is_none_or(|allowed| allowed.iter().any(is))
                            && (b.min_length.is_none() && b.max_length.is_none() || {
                                let len = s.chars().count() as u64;
                                b.min_length.is_none_or(|min| len >= min)
                                    && b.max_length.is_none_or(|max| len <= max)
                            })
                    })
            }
            None => false,
        },
        // null, a boolean or a number: read only when there is something to compare it with
        // (its value costs no allocation).
        _ if node.constant.is_none() && bounds.is_none() => true,
        _ => match serde_json::from_str::<Value>(text) {
            Ok(value) => {
                node.constant.is_none_or(|k| c.lit_matches(&k, &value))
                    && bounds.is_none_or(|b| within(c, b, &value))
            }
            Err(_) => false,
        },
    };
    own_ok
        && (node.all_of.is_empty()
            || c.all_of(node)
                .iter()
                .all(|&part| matches(c, part, text, depth + 1)))
        && (node.any_of.is_empty() || any_of_matches(c, node, text, depth))
}

fn object_matches(c: &VersionData, node: &Node, text: &str, depth: u32) -> bool {
    let mut required_seen = 0;
    let props = c.props(node);
    let mut members = Members::new(text);
    for (key, value) in members.by_ref() {
        let ok = match c.find_prop(props, &Key::new(&key)) {
            Some(prop) => {
                required_seen += usize::from(prop.required);
                matches(c, prop.node, value, depth + 1)
            }
            None => match node.additional {
                Additional::Schema(extra) => matches(c, extra, value, depth + 1),
                Additional::Never => false,
                Additional::Absent | Additional::Any => true,
            },
        };
        if !ok {
            return false;
        }
    }
    !members.broken
        && (required_seen == node.required.len()
            || c.required(node)
                .iter()
                .all(|f| field(text, c.text(f)).is_some()))
}

fn any_of_matches(c: &VersionData, node: &Node, text: &str, depth: u32) -> bool {
    let branches = c.any_of(node);
    if text.starts_with('{')
        && let Some(union) = c.union(node)
    {
        match union {
            Union::Tag { key, tags, .. } => {
                let tag = field(text, c.text(key))
                    .filter(|v| v.starts_with('"'))
                    .and_then(unquote);
                if let Some(tag) = tag {
                    let tag = Key::new(&tag);
                    let branch = c
                        .names(*tags)
                        .iter()
                        .position(|t| t.is(&tag, c.strings))
                        .and_then(|i| branches.get(i));
                    if let Some(&branch) = branch {
                        return matches(c, branch, text, depth + 1);
                    }
                }
            }
            Union::Required { keys } if keys.len() == branches.len() => {
                return branches.iter().zip(c.names(*keys)).any(|(&b, key)| {
                    field(text, c.text(key)).is_some() && matches(c, b, text, depth + 1)
                });
            }
            Union::Required { .. } => {}
        }
    }
    branches.iter().any(|&b| matches(c, b, text, depth + 1))
}

/// The text of member `name` of the object text `text`.
fn field<'a>(text: &'a str, name: &str) -> Option<&'a str> {
    let mut members = Members::new(text);
    members.find(|(key, _)| key == name).map(|(_, value)| value)
}

/// The content of the string text `text` (quotes included), unescaped where it has escapes.
pub(super) fn unquote(text: &str) -> Option<Cow<'_, str>> {
    let inner = text.strip_prefix('"')?.strip_suffix('"')?;
    if inner.contains('\\') {
        serde_json::from_str::<String>(text).ok().map(Cow::Owned)
    } else {
        Some(Cow::Borrowed(inner))
    }
}

pub(super) fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while matches!(b.get(i), Some(b' ' | b'\n' | b'\r' | b'\t')) {
        i += 1;
    }
    i
}

/// The end (exclusive) of the string that starts at `i` (a quote).
fn string_end(b: &[u8], i: usize) -> Option<usize> {
    string_end_escaped(b, i).map(|(end, _)| end)
}

/// [`string_end`], and whether the string has an escape in it.
pub(super) fn string_end_escaped(b: &[u8], i: usize) -> Option<(usize, bool)> {
    let mut j = i + 1;
    let mut escaped = false;
    loop {
        // Word at a time to the next quote or backslash: a long string costs a fraction of
        // an instruction per byte.
        j += memchr::memchr2(b'"', b'\\', b.get(j..)?)?;
        match b.get(j)? {
            b'"' => return Some((j + 1, escaped)),
            _ => {
                escaped = true;
                j += 2;
            }
        }
    }
}

/// The end (exclusive) of the value that starts at `i`.
pub(super) fn value_end(b: &[u8], i: usize) -> Option<usize> {
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
            Some(j)
        }
    }
}

/// The members of an object's text, in order; `broken` when the text was not an object.
struct Members<'a> {
    text: &'a str,
    pos: usize,
    broken: bool,
}

impl<'a> Members<'a> {
    fn new(text: &'a str) -> Self {
        Self {
            text,
            pos: 1,
            broken: !text.starts_with('{'),
        }
    }

    fn read(&mut self) -> Option<(Cow<'a, str>, &'a str)> {
        let b = self.text.as_bytes();
        let mut i = skip_ws(b, self.pos);
        if *b.get(i)? == b',' {
            i = skip_ws(b, i + 1);
        }
        if *b.get(i)? != b'"' {
            return None;
        }
        let (key_end, escaped) = string_end_escaped(b, i)?;
        let key = match escaped {
            false => Cow::Borrowed(self.text.get(i + 1..key_end - 1)?),
            true => unquote(self.text.get(i..key_end)?)?,
        };
        i = skip_ws(b, key_end);
        if *b.get(i)? != b':' {
            return None;
        }
        i = skip_ws(b, i + 1);
        let end = value_end(b, i)?;
        let value = self.text.get(i..end)?;
        self.pos = end;
        Some((key, value))
    }
}

impl<'a> Iterator for Members<'a> {
    type Item = (Cow<'a, str>, &'a str);

    fn next(&mut self) -> Option<Self::Item> {
        if self.broken {
            return None;
        }
        let b = self.text.as_bytes();
        let i = skip_ws(b, self.pos);
        if b.get(i) == Some(&b'}') {
            return None;
        }
        let member = self.read();
        self.broken = member.is_none();
        member
    }
}

/// The members of a JSON object's text, in order, each value as its text (not parsed): the
/// walk the tables' text checks use, for callers that read a few top-level members of text
/// they know is one valid JSON value (a [`RawJson`](crate::jsonrpc::RawJson)). A key with an
/// escape comes unescaped (owned). When the text is not an object, or stops being one, the
/// iteration ends early and [`ObjectMembers::is_broken`] says so.
///
/// ```
/// use ferromcp_types::tables::ObjectMembers;
///
/// let mut members = ObjectMembers::new(r#"{"content":[{"a":"}"}],"isError":true}"#);
/// let keys: Vec<_> = members.by_ref().map(|(key, value)| (key.into_owned(), value)).collect();
/// assert_eq!(keys, [("content".into(), r#"[{"a":"}"}]"#), ("isError".into(), "true")]);
/// assert!(!members.is_broken());
/// let mut not_one = ObjectMembers::new("[1]");
/// assert!(not_one.next().is_none() && not_one.is_broken());
/// ```
pub struct ObjectMembers<'a>(Members<'a>);

impl<'a> ObjectMembers<'a> {
    /// The members of `text`.
    pub fn new(text: &'a str) -> Self {
        Self(Members::new(text))
    }

    /// Whether the text turned out not to be an object (the iteration ended there).
    pub fn is_broken(&self) -> bool {
        self.0.broken
    }
}

impl<'a> Iterator for ObjectMembers<'a> {
    type Item = (Cow<'a, str>, &'a str);

    fn next(&mut self) -> Option<Self::Item> {
        self.0.next()
    }
}

/// The items of an array's text, in order; `broken` when the text was not an array.
struct Items<'a> {
    text: &'a str,
    pos: usize,
    broken: bool,
}

impl<'a> Items<'a> {
    fn new(text: &'a str) -> Self {
        Self {
            text,
            pos: 1,
            broken: !text.starts_with('['),
        }
    }

    fn read(&mut self) -> Option<&'a str> {
        let b = self.text.as_bytes();
        let mut i = skip_ws(b, self.pos);
        if *b.get(i)? == b',' {
            i = skip_ws(b, i + 1);
        }
        let end = value_end(b, i)?;
        let item = self.text.get(i..end).filter(|t| !t.is_empty())?;
        self.pos = end;
        Some(item)
    }
}

impl<'a> Iterator for Items<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        if self.broken {
            return None;
        }
        let b = self.text.as_bytes();
        let i = skip_ws(b, self.pos);
        if b.get(i) == Some(&b']') {
            return None;
        }
        let item = self.read();
        self.broken = item.is_none();
        item
    }
}
