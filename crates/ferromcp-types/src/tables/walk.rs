//! One walk over JSON text, one level at a time: where a value ends, an object's members and an
//! array's items, each as its text (not parsed). The tables' text checks, the one-pass result
//! check and every other reader of JSON text in the workspace (the server's argument validator
//! and `tools/call` params, the client's and the gateway's relays) use this one walk.
//!
//! It is made for text that is one valid JSON value (what a `RawJson` holds); on other text it
//! stops where it reads the damage (`None`, or `is_broken`), and never panics or recurses.

use std::borrow::Cow;

pub(super) fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while matches!(b.get(i), Some(b' ' | b'\n' | b'\r' | b'\t')) {
        i += 1;
    }
    i
}

/// The end (exclusive) of the string that starts at `i` (a quote), for a reader that skips
/// it: a quote inside a string is always escaped (`\"`), so its first quote that does not
/// follow a backslash closes it, found by a search for quotes alone (cheaper than for quotes
/// and backslashes). A first quote after a backslash (escaped, or closing a string that ends
/// in an escaped backslash) takes [`string_end_escaped`]'s walk from the start: the same end
/// on any text.
#[inline(always)]
fn string_end(b: &[u8], i: usize) -> Option<usize> {
    let q = find_quote(b, i + 1)?;
    // `q > i`: the byte before it is the opening quote or part of the string.
    if b.get(q - 1) == Some(&b'\\') {
        return string_end_escaped(b, i).map(|(end, _)| end);
    }
    Some(q + 1)
}

/// The first quote at or after `j`: [`find_special`] for quotes alone.
#[inline(always)]
fn find_quote(b: &[u8], j: usize) -> Option<usize> {
    find_special::<false>(b, j)
}

/// [`string_end`], and whether the string has an escape in it.
#[inline(always)]
pub(super) fn string_end_escaped(b: &[u8], i: usize) -> Option<(usize, bool)> {
    let mut j = i + 1;
    let mut escaped = false;
    loop {
        j = quote_or_backslash(b, j)?;
        match b.get(j)? {
            b'"' => return Some((j + 1, escaped)),
            _ => {
                escaped = true;
                j += 2;
            }
        }
    }
}

/// The first quote or backslash at or after `j`: [`find_special`] for both.
#[inline(always)]
fn quote_or_backslash(b: &[u8], j: usize) -> Option<usize> {
    find_special::<true>(b, j)
}

/// The first quote (or backslash, with `BACKSLASH`) at or after `j`. Most strings (keys,
/// names, short values) end within two words, found eight bytes at a time without a call;
/// past that, `memchr`'s vectorized search, so a long string costs a fraction of an
/// instruction per byte.
#[inline(always)]
fn find_special<const BACKSLASH: bool>(b: &[u8], j: usize) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    const QUOTES: u64 = ONES * b'"' as u64;
    const BACKSLASHES: u64 = ONES * b'\\' as u64;
    // A zero byte of `x` flagged in its high bit; the lowest flagged byte is exact.
    let zeros = |x: u64| x.wrapping_sub(ONES) & !x;
    let mut at = j;
    while at < j + 16
        && let Some(&[b0, b1, b2, b3, b4, b5, b6, b7]) = b.get(at..at + 8)
    {
        let w = u64::from_le_bytes([b0, b1, b2, b3, b4, b5, b6, b7]);
        // A zero byte of `w ^ c` is a byte equal to `c`.
        let mut found = zeros(w ^ QUOTES);
        if BACKSLASH {
            found |= zeros(w ^ BACKSLASHES);
        }
        let found = found & HIGHS;
        if found != 0 {
            return Some(at + (found.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    let rest = b.get(at..)?;
    let found = match BACKSLASH {
        true => memchr::memchr2(b'"', b'\\', rest),
        false => memchr::memchr(b'"', rest),
    };
    Some(at + found?)
}

/// The end (exclusive) of the value that starts at `i`: a string at its closing quote, a
/// container by counting brackets outside strings (no recursion, whatever the nesting), a
/// scalar at the next delimiter (empty when there is none before it).
#[inline]
pub(super) fn value_end(b: &[u8], i: usize) -> Option<usize> {
    match b.get(i)? {
        b'"' => string_end(b, i),
        b'{' | b'[' => container_end(b, i),
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

/// [`value_end`], and whether the value is a string without an escape (seen by the same scan).
#[inline]
fn value_end_plain(b: &[u8], i: usize) -> Option<(usize, bool)> {
    match b.get(i)? {
        b'"' => string_end_escaped(b, i).map(|(end, escaped)| (end, !escaped)),
        _ => value_end(b, i).map(|end| (end, false)),
    }
}

/// A value's text and, when the walk saw it is a string with no escape, its content: the text
/// between the quotes, what [`unquote`] borrows, so its reader need not scan it again.
fn with_plain(value: &str, plain: bool) -> (&str, Option<&str>) {
    let content = plain
        .then(|| value.strip_prefix('"')?.strip_suffix('"'))
        .flatten();
    (value, content)
}

/// [`value_end`] of an array or an object.
fn container_end(b: &[u8], i: usize) -> Option<usize> {
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

/// The content of a JSON string's text `text` (quotes included): borrowed when it has no
/// escape, else unescaped as serde_json reads a `String` (`None`: not a string, or a bad
/// escape).
///
/// ```
/// use ferromcp_types::tables::unquote;
///
/// assert_eq!(unquote(r#""add""#).as_deref(), Some("add"));
/// assert_eq!(unquote(r#""a\"b""#).as_deref(), Some("a\"b"));
/// assert_eq!(unquote("add"), None);
/// ```
#[inline]
pub fn unquote(text: &str) -> Option<Cow<'_, str>> {
    let inner = text.strip_prefix('"')?.strip_suffix('"')?;
    if has_backslash(inner.as_bytes()) {
        serde_json::from_str::<String>(text).ok().map(Cow::Owned)
    } else {
        Some(Cow::Borrowed(inner))
    }
}

/// Whether `b` has a backslash: a short text byte by byte (no call), a long one by `memchr`'s
/// vectorized search (`str::contains` reads it a word at a time, four times the instructions).
#[inline(always)]
fn has_backslash(b: &[u8]) -> bool {
    if b.len() < 32 {
        #[allow(
            clippy::manual_contains,
            reason = "a loop inlined here: `contains` calls core's search"
        )]
        b.iter().any(|&c| c == b'\\')
    } else {
        memchr::memchr(b'\\', b).is_some()
    }
}

/// A member's key as written in the text: read without unescaping, so a reader that matches a
/// few known names pays nothing for a key it does not ask about.
#[derive(Debug, Clone, Copy)]
pub struct MemberKey<'a> {
    /// The key's text between its quotes, as written.
    inner: &'a str,
    escaped: bool,
}

impl<'a> MemberKey<'a> {
    /// The key when it has no escape (then it is the text between the quotes).
    #[inline]
    pub fn plain(&self) -> Option<&'a str> {
        (!self.escaped).then_some(self.inner)
    }

    /// The key: borrowed, or unescaped when it has escapes (`None`: a bad escape).
    #[inline]
    pub fn unquoted(&self) -> Option<Cow<'a, str>> {
        if !self.escaped {
            return Some(Cow::Borrowed(self.inner));
        }
        // Rare: the key's text is quoted again to be read as a JSON string.
        serde_json::from_str::<String>(&format!("\"{}\"", self.inner))
            .ok()
            .map(Cow::Owned)
    }
}

/// The members of a JSON object's text, one at a time, the key first and the value on demand:
/// the walk under [`ObjectMembers`], for readers that want a key before deciding what to do
/// with its value (read it, skip it, or hand the rest of the text to a parser and
/// [`skip`](Self::skip) what it read). Members must be separated by commas; a member whose value
/// is empty (`{"a":}`) is kept with an empty text, for the reader to refuse.
///
/// ```
/// use ferromcp_types::tables::MemberWalk;
///
/// let mut walk = MemberWalk::new(r#"{"name":"add","arguments":{"a":1}}"#).unwrap();
/// let mut name = None;
/// while let Some(key) = walk.next_key().unwrap() {
///     match key.plain() {
///         Some("name") => name = walk.value(),
///         _ => {
///             walk.value().unwrap();
///         }
///     }
/// }
/// assert_eq!(name, Some(r#""add""#));
/// assert!(MemberWalk::new("[1]").is_none());
/// let mut missing_comma = MemberWalk::new(r#"{"a":1 "b":2}"#).unwrap();
/// assert!(missing_comma.next().unwrap().is_some());
/// assert!(missing_comma.next().is_none());
/// ```
#[derive(Debug, Clone)]
pub struct MemberWalk<'a> {
    text: &'a str,
    pos: usize,
    first: bool,
}

impl<'a> MemberWalk<'a> {
    /// The members of `text`, when it starts as an object does.
    pub fn new(text: &'a str) -> Option<Self> {
        text.starts_with('{').then_some(Self {
            text,
            pos: 1,
            first: true,
        })
    }

    /// The next member; `Some(None)` at the end, `None` where the text stops being an object.
    #[allow(
        clippy::should_implement_trait,
        reason = "three outcomes (a member, the end, broken text), not an iterator's two"
    )]
    #[inline]
    pub fn next(&mut self) -> Option<Option<(MemberKey<'a>, &'a str)>> {
        let Some(key) = self.next_key()? else {
            return Some(None);
        };
        Some(Some((key, self.value()?)))
    }

    /// The next member's key, the walk left at its value (then [`value`](Self::value), or
    /// [`rest`](Self::rest) and [`skip`](Self::skip)); `Some(None)` at the end, `None` where
    /// the text stops being an object.
    #[inline(always)]
    pub fn next_key(&mut self) -> Option<Option<MemberKey<'a>>> {
        let b = self.text.as_bytes();
        let mut i = skip_ws(b, self.pos);
        match (*b.get(i)?, self.first) {
            (b'}', _) => return Some(None),
            (b',', false) => i = skip_ws(b, i + 1),
            (_, true) => self.first = false,
            (_, false) => return None,
        }
        if *b.get(i)? != b'"' {
            return None;
        }
        let (key_end, escaped) = string_end_escaped(b, i)?;
        let inner = self.text.get(i + 1..key_end - 1)?;
        i = skip_ws(b, key_end);
        if *b.get(i)? != b':' {
            return None;
        }
        self.pos = skip_ws(b, i + 1);
        Some(Some(MemberKey { inner, escaped }))
    }

    /// The value of the member whose key was just read, its text.
    #[inline]
    pub fn value(&mut self) -> Option<&'a str> {
        let end = value_end(self.text.as_bytes(), self.pos)?;
        let value = self.text.get(self.pos..end)?;
        self.pos = end;
        Some(value)
    }

    /// [`value`](Self::value), and the content of a string with no escape (the text between
    /// its quotes, as [`unquote`] borrows it) found by the same scan: `None` beside a string
    /// with an escape and any other value. A reader of strings that would unquote what it
    /// reads skips a second scan of each for a backslash.
    ///
    /// ```
    /// use ferromcp_types::tables::MemberWalk;
    ///
    /// let mut walk = MemberWalk::new(r#"{"a":"x y","b":"x\ny","c":[1]}"#).unwrap();
    /// let mut read = Vec::new();
    /// while walk.next_key().unwrap().is_some() {
    ///     read.push(walk.value_plain().unwrap());
    /// }
    /// assert_eq!(read, [(r#""x y""#, Some("x y")), (r#""x\ny""#, None), ("[1]", None)]);
    /// ```
    #[inline]
    pub fn value_plain(&mut self) -> Option<(&'a str, Option<&'a str>)> {
        let (end, plain) = value_end_plain(self.text.as_bytes(), self.pos)?;
        let value = self.text.get(self.pos..end)?;
        self.pos = end;
        Some(with_plain(value, plain))
    }

    /// The text from the value of the member whose key was just read to the end.
    pub fn rest(&self) -> &'a str {
        self.text.get(self.pos..).unwrap_or_default()
    }

    /// Moves past the first `len` bytes of [`rest`](Self::rest): the value, read by the
    /// caller.
    pub fn skip(&mut self, len: usize) {
        self.pos = self.pos.saturating_add(len);
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
#[derive(Debug, Clone)]
pub struct ObjectMembers<'a>(Option<MemberWalk<'a>>);

impl<'a> ObjectMembers<'a> {
    /// The members of `text`.
    pub fn new(text: &'a str) -> Self {
        Self(MemberWalk::new(text))
    }

    /// Whether the text turned out not to be an object (the iteration ended there).
    pub fn is_broken(&self) -> bool {
        self.0.is_none()
    }
}

impl<'a> Iterator for ObjectMembers<'a> {
    type Item = (Cow<'a, str>, &'a str);

    fn next(&mut self) -> Option<Self::Item> {
        match self.0.as_mut()?.next() {
            Some(None) => return None,
            Some(Some((key, value))) => {
                if let Some(key) = key.unquoted() {
                    return Some((key, value));
                }
            }
            None => {}
        }
        self.0 = None;
        None
    }
}

/// The items of a JSON array's text, in order, each as its text (not parsed). Items must be
/// separated by commas and the array's `]` must end the text (whitespace aside); otherwise
/// the iteration ends where it reads the damage and [`ArrayItems::is_broken`] says so.
///
/// ```
/// use ferromcp_types::tables::ArrayItems;
///
/// let mut items = ArrayItems::new(r#"[1, "a]", [2]]"#);
/// assert_eq!(items.by_ref().collect::<Vec<_>>(), ["1", r#""a]""#, "[2]"]);
/// assert!(!items.is_broken());
/// let mut missing_comma = ArrayItems::new("[1 2]");
/// assert_eq!(missing_comma.by_ref().count(), 1);
/// assert!(missing_comma.is_broken());
/// ```
#[derive(Debug, Clone)]
pub struct ArrayItems<'a> {
    text: &'a str,
    pos: usize,
    first: bool,
    broken: bool,
}

impl<'a> ArrayItems<'a> {
    /// The items of `text`.
    pub fn new(text: &'a str) -> Self {
        Self {
            text,
            pos: 1,
            first: true,
            broken: !text.starts_with('['),
        }
    }

    /// Whether the text turned out not to be an array (the iteration ended there).
    pub fn is_broken(&self) -> bool {
        self.broken
    }

    /// The next item as [`next`](Iterator::next) reads it, with the content of a string item
    /// that has no escape (the text between its quotes, as [`unquote`] borrows it) found by
    /// the same scan; `None` beside any other item.
    ///
    /// ```
    /// use ferromcp_types::tables::ArrayItems;
    ///
    /// let mut items = ArrayItems::new(r#"["a", "\u0062", 3]"#);
    /// assert_eq!(items.next_plain(), Some((r#""a""#, Some("a"))));
    /// assert_eq!(items.next_plain(), Some((r#""\u0062""#, None)));
    /// assert_eq!(items.next_plain(), Some(("3", None)));
    /// assert_eq!(items.next_plain(), None);
    /// assert!(!items.is_broken());
    /// ```
    pub fn next_plain(&mut self) -> Option<(&'a str, Option<&'a str>)> {
        let (item, plain) = self.step(value_end_plain)?;
        Some(with_plain(item, plain))
    }

    /// The next item, its end found by `end` (which may tell a plain string too); `None` at
    /// the end or where the text stops being an array (then broken).
    #[inline(always)]
    fn step(
        &mut self,
        end: impl FnOnce(&[u8], usize) -> Option<(usize, bool)>,
    ) -> Option<(&'a str, bool)> {
        if self.broken {
            return None;
        }
        let item = self.read(end);
        self.broken = item.is_none();
        item.flatten()
    }

    fn read(
        &mut self,
        end: impl FnOnce(&[u8], usize) -> Option<(usize, bool)>,
    ) -> Option<Option<(&'a str, bool)>> {
        let b = self.text.as_bytes();
        let mut i = skip_ws(b, self.pos);
        match (*b.get(i)?, self.first) {
            (b']', _) => return (skip_ws(b, i + 1) == b.len()).then_some(None),
            (b',', false) => i = skip_ws(b, i + 1),
            (_, true) => self.first = false,
            (_, false) => return None,
        }
        let (end, plain) = end(b, i)?;
        let item = self.text.get(i..end).filter(|t| !t.is_empty())?;
        self.pos = end;
        Some(Some((item, plain)))
    }
}

impl<'a> Iterator for ArrayItems<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        // A string's end by its quotes alone: no content is asked for.
        let end = |b: &[u8], i| value_end(b, i).map(|end| (end, false));
        self.step(end).map(|(item, _)| item)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::{ArrayItems, MemberWalk, ObjectMembers, string_end, string_end_escaped, unquote};

    /// Strings without and with an escape at its start, middle and end, short and long (both
    /// sides of `has_backslash`'s 32-byte switch), with the content serde_json reads.
    fn strings() -> Vec<(String, String)> {
        let mut out = Vec::new();
        for len in [0, 1, 7, 8, 16, 30, 31, 32, 33, 64, 300] {
            let plain = "x".repeat(len);
            out.push(format!(r#""{plain}""#));
            for escape in [r#"\""#, r"\\", r"\n", r"\u00e9", r"\/"] {
                for at in [0, len / 2, len] {
                    let mut s = plain.clone();
                    s.insert_str(at, escape);
                    out.push(format!(r#""{s}""#));
                }
            }
        }
        out.into_iter()
            .map(|s| {
                let content = serde_json::from_str::<String>(&s).unwrap();
                (s, content)
            })
            .collect()
    }

    /// S150: `unquote` reads a string as serde_json does, and the content the walk hands
    /// with a value (`MemberWalk::value_plain`, `ArrayItems::next_plain`) is there exactly
    /// when the string has no escape, and is then that content.
    #[test]
    fn s150_plain_contents_are_what_serde_reads() {
        for (s, content) in strings() {
            assert_eq!(unquote(&s).as_deref(), Some(content.as_str()), "{s}");
            let escaped = s.contains('\\');
            let object = format!(r#"{{"k":{s}, "n":1}}"#);
            let mut walk = MemberWalk::new(&object).unwrap();
            walk.next_key().unwrap().unwrap();
            let (text, plain) = walk.value_plain().unwrap();
            assert_eq!(text, s);
            assert_eq!(plain, (!escaped).then_some(content.as_str()), "{s}");
            walk.next_key().unwrap().unwrap();
            assert_eq!(walk.value_plain(), Some(("1", None)));
            assert!(walk.next_key().unwrap().is_none());
            let array = format!("[{s}, 2, {s}]");
            let mut items = ArrayItems::new(&array);
            let mut read = Vec::new();
            while let Some(item) = items.next_plain() {
                read.push(item);
            }
            assert!(!items.is_broken());
            let plain = (!escaped).then_some(content.as_str());
            assert_eq!(
                read,
                [(s.as_str(), plain), ("2", None), (s.as_str(), plain)]
            );
        }
    }

    /// S151: a string skipped by its first quote not after a backslash ends where the walk
    /// that reads every escape ends it, on any text: quotes, backslashes and escaped
    /// backslashes at every offset of strings on both sides of the two words read in place,
    /// closed or not, and bytes from a fixed-seed generator of `"`, `\`, `x` and `é`; and a
    /// member skipped so (`ObjectMembers`, `MemberWalk::value`) is the text serde_json reads.
    #[test]
    fn s151_a_string_skipped_by_its_quotes_ends_where_every_escape_is_read() {
        let mut texts = Vec::new();
        for len in [0, 1, 6, 7, 8, 9, 15, 16, 17, 23, 24, 25, 40, 100] {
            for special in [r#"\""#, r"\\", r#"\\\""#, r"\n", r#"""#, r"\"] {
                for at in 0..=len {
                    let mut s = "x".repeat(len);
                    s.insert_str(at, special);
                    texts.push(format!(r#""{s}""#));
                    texts.push(format!(r#""{s}"#));
                    texts.push(format!(r#""{s}\"#));
                }
            }
        }
        let mut seed = 0x9E37_79B9_7F4A_7C15_u64;
        for _ in 0..20_000 {
            let mut s = String::from('"');
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let mut bits = seed;
            for _ in 0..(bits % 40) {
                bits = bits.rotate_right(2) ^ 0x5bd1_e995;
                s.push_str(["\"", "\\", "x", "\u{e9}"][(bits % 4) as usize]);
            }
            texts.push(s);
        }
        for t in &texts {
            let b = t.as_bytes();
            let careful = string_end_escaped(b, 0).map(|(end, _)| end);
            assert_eq!(string_end(b, 0), careful, "{t}");
            // As a member's value, where the text is JSON.
            if careful == Some(b.len()) && serde_json::from_str::<String>(t).is_ok() {
                let object = format!(r#"{{"a":{t},"b":[{t}],"c":1}}"#);
                let members: Vec<_> = ObjectMembers::new(&object).collect();
                let wanted: serde_json::Map<String, serde_json::Value> =
                    serde_json::from_str(&object).unwrap();
                assert_eq!(members.len(), 3, "{object}");
                for (key, text) in members {
                    let value: serde_json::Value = serde_json::from_str(text).unwrap();
                    assert_eq!(Some(&value), wanted.get(key.as_ref()), "{object}");
                }
                let mut walk = MemberWalk::new(&object).unwrap();
                walk.next_key().unwrap().unwrap();
                assert_eq!(walk.value(), Some(t.as_str()));
            }
        }
    }
}
