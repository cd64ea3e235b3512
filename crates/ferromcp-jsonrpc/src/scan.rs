//! A small hand-written JSON scanner: finds where a value ends, checks its grammar, bounds its
//! nesting, and checks every object in it for duplicate keys, in one pass with no allocation
//! in the usual case.
//!
//! A value the scanner accepts ([`Scanner::value`] returning `Ok`) is JSON that serde_json
//! accepts as a [`RawValue`](serde_json::value::RawValue): the grammar of RFC 8259 exactly as
//! serde_json reads it (numbers without a leading zero, `+` or bare `.`; the literals
//! `true`, `false` and `null`; strings without control characters, whose escapes are
//! `\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t` or `\u` and four hex digits, a lone
//! surrogate included, as serde_json's `RawValue` takes it too), and UTF-8 because the text is
//! a `str`. That lets [`Scanner::checked`] vouch for the text it returns, so a kept `params`
//! or `result` is not parsed a second time. The scanner never panics and always terminates on
//! any input.

use std::borrow::Cow;
use std::collections::HashSet;

/// Up to this many keys, an object's keys are checked by comparing against the earlier ones
/// (no hashing, nothing allocated); past it, by a hash set of the decoded keys.
const FEW: usize = 16;

/// The bytes that end a run of plain string content: a quote, a backslash, or a control
/// character (which JSON forbids in strings); also the bytes an encoder must escape.
pub(super) static SPECIAL: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 0x20 {
        table[b] = true;
        b += 1;
    }
    table[b'"' as usize] = true;
    table[b'\\' as usize] = true;
    table
};

/// Why a scan stopped before the end of the value.
#[derive(Debug)]
pub(super) enum Stop<'a> {
    /// A key appears twice in one object: that key, as written.
    Duplicate(RawStr<'a>),
    /// The value nests deeper than allowed.
    TooDeep,
    /// The text is not JSON the scanner can follow.
    Malformed,
}

/// A cursor over JSON text.
pub(super) struct Scanner<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
}

/// A string as written between its quotes (its escapes valid, no control character in it),
/// and whether it holds a backslash escape.
#[derive(Debug, Clone, Copy)]
pub(super) struct RawStr<'a> {
    raw: &'a str,
    escaped: bool,
}

/// The text of one JSON value that [`Scanner::checked`] has read through and found valid,
/// with no whitespace around it. Only the scanner makes one (the field is private to this
/// module), so holding one is proof of the check.
#[derive(Debug, Clone, Copy)]
pub(super) struct Checked<'a>(&'a str);

impl<'a> Checked<'a> {
    /// The checked text.
    pub(super) fn text(self) -> &'a str {
        self.0
    }
}

impl<'a> RawStr<'a> {
    /// The string when it reads as written (no escape), else `None`.
    pub(super) fn plain(self) -> Option<&'a str> {
        (!self.escaped).then_some(self.raw)
    }

    /// The decoded string, a lone surrogate escape read as U+FFFD (for messages).
    pub(super) fn lossy(&self) -> String {
        if self.escaped {
            String::from_utf8_lossy(&unescape(self.raw.as_bytes(), true)).into_owned()
        } else {
            self.raw.to_owned()
        }
    }

    /// Whether two keys are the same string once escapes are decoded.
    fn same(&self, other: &RawStr<'_>) -> bool {
        if self.raw == other.raw {
            return true;
        }
        (self.escaped || other.escaped) && self.decoded() == other.decoded()
    }

    /// The decoded string as WTF-8 bytes: UTF-8, except that a lone surrogate escape is
    /// written as the three bytes its code unit would take; equal bytes mean equal strings.
    fn decoded(&self) -> Cow<'a, [u8]> {
        if self.escaped {
            Cow::Owned(unescape(self.raw.as_bytes(), false))
        } else {
            Cow::Borrowed(self.raw.as_bytes())
        }
    }
}

impl<'a> Scanner<'a> {
    /// A scanner at the start of `text`.
    pub(super) fn new(text: &'a str) -> Self {
        Self {
            text,
            bytes: text.as_bytes(),
            pos: 0,
        }
    }

    /// The text from byte `start` to the current position.
    pub(super) fn since(&self, start: usize) -> Option<&'a str> {
        self.text.get(start..self.pos)
    }

    /// Whether only whitespace is left.
    pub(super) fn at_end(&mut self) -> bool {
        self.skip_ws();
        self.pos == self.bytes.len()
    }

    /// Skips JSON whitespace.
    #[inline]
    pub(super) fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.pos) {
            self.pos += 1;
        }
    }

    /// The next byte, without consuming it.
    pub(super) fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    /// Consumes the next byte.
    pub(super) fn next_byte(&mut self) -> Option<u8> {
        let b = self.peek()?;
        self.pos += 1;
        Some(b)
    }

    /// Consumes `lit` when the text continues with it.
    pub(super) fn eat(&mut self, lit: &[u8]) -> bool {
        let found = self
            .bytes
            .get(self.pos..)
            .is_some_and(|rest| rest.starts_with(lit));
        if found {
            self.pos += lit.len();
        }
        found
    }

    /// Reads one value (after skipping the whitespace before it), checking its grammar and
    /// each object in it for a repeated key; `depth` is how many levels of objects and arrays
    /// it may nest.
    #[inline]
    pub(super) fn value(&mut self, depth: usize) -> Result<(), Stop<'a>> {
        self.skip_ws();
        match self.peek() {
            Some(b'"') => self.string().map(drop).ok_or(Stop::Malformed),
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth),
            Some(b't') => self.literal(b"true"),
            Some(b'f') => self.literal(b"false"),
            Some(b'n') => self.literal(b"null"),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => Err(Stop::Malformed),
        }
    }

    /// [`Scanner::value`], returning the value's text as proof that it was checked.
    pub(super) fn checked(&mut self, depth: usize) -> Result<Checked<'a>, Stop<'a>> {
        self.skip_ws();
        let start = self.pos;
        self.value(depth)?;
        self.since(start).map(Checked).ok_or(Stop::Malformed)
    }

    fn object(&mut self, depth: usize) -> Result<(), Stop<'a>> {
        let depth = depth.checked_sub(1).ok_or(Stop::TooDeep)?;
        self.pos += 1; // `{`
        self.skip_ws();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(());
        }
        let mut keys = Keys::new();
        loop {
            let key = self.string().ok_or(Stop::Malformed)?;
            if !keys.insert(key) {
                return Err(Stop::Duplicate(key));
            }
            self.skip_ws();
            if self.next_byte() != Some(b':') {
                return Err(Stop::Malformed);
            }
            self.value(depth)?;
            self.skip_ws();
            match self.next_byte() {
                Some(b',') => self.skip_ws(),
                Some(b'}') => return Ok(()),
                _ => return Err(Stop::Malformed),
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<(), Stop<'a>> {
        let depth = depth.checked_sub(1).ok_or(Stop::TooDeep)?;
        self.pos += 1; // `[`
        self.skip_ws();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(());
        }
        loop {
            self.value(depth)?;
            self.skip_ws();
            match self.next_byte() {
                Some(b',') => {}
                Some(b']') => return Ok(()),
                _ => return Err(Stop::Malformed),
            }
        }
    }

    /// A string, from its opening quote (which must be next) to past its closing one; `None`
    /// when it is not a valid JSON string (unclosed, an unknown or short escape, or a control
    /// character).
    #[inline]
    pub(super) fn string(&mut self) -> Option<RawStr<'a>> {
        if self.peek() != Some(b'"') {
            return None;
        }
        let start = self.pos + 1;
        let mut end = self.plain_run(start);
        // The usual string has no escape: it ends at the first special byte.
        let escaped = self.bytes.get(end) != Some(&b'"');
        if escaped {
            end = self.escaped_end(end)?;
        }
        // Quotes are ASCII, so both ends are character boundaries.
        let raw = self.text.get(start..end)?;
        self.pos = end + 1;
        Some(RawStr { raw, escaped })
    }

    /// The offset of a string's closing quote, from the first special byte in it (at `end`)
    /// when that is not the quote: a backslash starts a valid escape, anything else ends the
    /// scan (a control character, which JSON forbids in a string, or the end of the text).
    /// Out of line: most strings never get here.
    #[inline(never)]
    fn escaped_end(&self, mut end: usize) -> Option<usize> {
        loop {
            match self.bytes.get(end)? {
                b'"' => return Some(end),
                b'\\' => end = self.plain_run(self.escape_end(end + 1)?),
                _ => return None,
            }
        }
    }

    /// The offset past the escape whose letter (after the backslash) is at `at`, when it is
    /// one JSON has. A `\u` escape needs four hex digits, and is accepted whatever code unit
    /// they name, a lone surrogate too, as serde_json's `RawValue` accepts it (reading such a
    /// string into a Rust `String` later fails, as it always has).
    fn escape_end(&self, at: usize) -> Option<usize> {
        match self.bytes.get(at)? {
            b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => Some(at + 1),
            b'u' => {
                hex4(self.bytes.get(at + 1..)?)?;
                Some(at + 5)
            }
            _ => None,
        }
    }

    /// The offset of the first quote, backslash or control character at or after `from`
    /// (or the end).
    #[inline]
    fn plain_run(&self, mut from: usize) -> usize {
        while let Some(&b) = self.bytes.get(from) {
            if SPECIAL[usize::from(b)] {
                break;
            }
            from += 1;
        }
        from
    }

    /// `true`, `false` or `null`, whose first byte is next.
    fn literal(&mut self, word: &[u8]) -> Result<(), Stop<'a>> {
        if self.eat(word) {
            Ok(())
        } else {
            Err(Stop::Malformed)
        }
    }

    /// A number as JSON writes it: `-`?, then `0` or a digit run not starting with `0`, then
    /// optionally `.` and digits, then optionally `e` or `E`, a sign and digits. (What
    /// follows it is the caller's to check: a byte that may not follow a value is an error
    /// there.) Any size is accepted, as serde_json's `RawValue` accepts it.
    fn number(&mut self) -> Result<(), Stop<'a>> {
        self.eat(b"-");
        match self.next_byte() {
            Some(b'0') => {}
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return Err(Stop::Malformed),
        }
        if self.eat(b".") && self.digits() == 0 {
            return Err(Stop::Malformed);
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.pos += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            if self.digits() == 0 {
                return Err(Stop::Malformed);
            }
        }
        Ok(())
    }

    /// Skips a run of decimal digits; how many there were.
    fn digits(&mut self) -> usize {
        let start = self.pos;
        while let Some(b'0'..=b'9') = self.peek() {
            self.pos += 1;
        }
        self.pos - start
    }
}

/// The keys of one object seen so far.
struct Keys<'a> {
    few: [Option<RawStr<'a>>; FEW],
    len: usize,
    many: Option<HashSet<Cow<'a, [u8]>>>,
}

impl<'a> Keys<'a> {
    fn new() -> Self {
        Self {
            few: [None; FEW],
            len: 0,
            many: None,
        }
    }

    /// Records `key`; false when the object already has it.
    fn insert(&mut self, key: RawStr<'a>) -> bool {
        if let Some(slot) = self.few.get_mut(self.len) {
            *slot = Some(key);
            let earlier = self.few.get(..self.len).unwrap_or_default();
            self.len += 1;
            return !earlier.iter().flatten().any(|k| k.same(&key));
        }
        let few = &self.few;
        self.many
            .get_or_insert_with(|| few.iter().flatten().map(RawStr::decoded).collect())
            .insert(key.decoded())
    }
}

/// Decodes the escapes of a JSON string's raw content into WTF-8 bytes (see
/// [`RawStr::decoded`]), or with each lone surrogate replaced by U+FFFD when `replace_lone`.
/// Malformed escapes, which [`Scanner::string`] never lets through, decode to something
/// without failing.
fn unescape(raw: &[u8], replace_lone: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(raw.len());
    let mut rest = raw;
    while let Some((&b, tail)) = rest.split_first() {
        rest = tail;
        if b != b'\\' {
            out.push(b);
            continue;
        }
        let Some((&e, tail)) = rest.split_first() else {
            out.push(b);
            break;
        };
        rest = tail;
        let unit = match e {
            b'b' => 0x08,
            b'f' => 0x0c,
            b'n' => 0x0a,
            b'r' => 0x0d,
            b't' => 0x09,
            b'u' => match hex4(rest) {
                Some(unit) => {
                    rest = rest.get(4..).unwrap_or_default();
                    unit
                }
                None => {
                    out.extend_from_slice(b"\\u");
                    continue;
                }
            },
            other => u16::from(other), // `"`, `\`, `/`
        };
        // A high surrogate followed by an escaped low one is one character.
        if (0xD800..0xDC00).contains(&unit)
            && let Some(low) = rest.strip_prefix(b"\\u").and_then(hex4)
            && (0xDC00..0xE000).contains(&low)
        {
            let c = 0x10000 + ((u32::from(unit) - 0xD800) << 10) + (u32::from(low) - 0xDC00);
            if let Some(c) = char::from_u32(c) {
                out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
                rest = rest.get(6..).unwrap_or_default();
                continue;
            }
        }
        if replace_lone && (0xD800..0xE000).contains(&unit) {
            out.extend_from_slice("\u{fffd}".as_bytes());
        } else {
            push_wtf8(&mut out, unit);
        }
    }
    out
}

/// The code unit of four hex digits at the start of `s`.
fn hex4(s: &[u8]) -> Option<u16> {
    let digits = s.get(..4)?;
    digits.iter().try_fold(0u16, |acc, &d| {
        let v = char::from(d).to_digit(16)?;
        Some((acc << 4) | u16::try_from(v).ok()?)
    })
}

/// Appends one UTF-16 code unit as (generalized) UTF-8: surrogates take three bytes like any
/// other unit from U+0800 up.
fn push_wtf8(out: &mut Vec<u8>, unit: u16) {
    let [hi, lo] = unit.to_be_bytes();
    if unit < 0x80 {
        out.push(lo);
    } else if unit < 0x800 {
        out.push(0xC0 | (hi << 2) | (lo >> 6));
        out.push(0x80 | (lo & 0x3F));
    } else {
        out.push(0xE0 | (hi >> 4));
        out.push(0x80 | ((hi & 0x0F) << 2) | (lo >> 6));
        out.push(0x80 | (lo & 0x3F));
    }
}

/// The first key that appears twice in one object anywhere in the JSON value `text`, in
/// document order, compared by decoded value. Text that is not JSON yields `None`.
pub(super) fn duplicate_key(text: &str, depth: usize) -> Option<String> {
    match Scanner::new(text).value(depth) {
        Err(Stop::Duplicate(key)) => Some(key.lossy()),
        _ => None,
    }
}

/// Applies property-test edits to `text`: at each (position, operation, piece), insert the
/// piece (0), delete one character (1) or replace it with the piece (2); positions wrap and
/// snap to character boundaries. Shared by the scanner's and the decoder's property tests.
#[cfg(test)]
pub(super) fn mutate(text: &str, edits: &[(usize, u8, usize)], pieces: &[&str]) -> String {
    let mut text = text.to_owned();
    for &(at, op, piece) in edits {
        let mut at = at % (text.len() + 1);
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        let next = text[at..].chars().next().map_or(0, char::len_utf8);
        match op {
            0 => text.insert_str(at, pieces[piece]),
            1 => text.replace_range(at..at + next, ""),
            _ => text.replace_range(at..at + next, pieces[piece]),
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dup(text: &str) -> Option<String> {
        duplicate_key(text, 128)
    }

    #[test]
    fn unescaping_matches_serde_json() {
        for text in [
            r#""plain""#,
            r#""a\"b\\c\/d\be\ff\ng\rh\ti""#,
            r#""\u006b\u00e9\u4e2d\ud83d\ude00""#,
            r#""é中😀""#,
        ] {
            let decoded: String = serde_json::from_str(text).unwrap();
            let mut s = Scanner::new(text);
            let raw = s.string().unwrap();
            assert_eq!(&*raw.decoded(), decoded.as_bytes(), "{text}");
        }
    }

    #[test]
    fn lone_surrogates_compare_by_code_unit() {
        assert_eq!(
            dup(r#"{"\ud800":1,"\ud800":2}"#).as_deref(),
            Some("\u{fffd}")
        );
        assert_eq!(dup(r#"{"\ud800":1,"\udc00":2}"#), None);
        assert!(dup(r#"{"\ud800\u0041":1,"\ud800A":2}"#).is_some());
    }

    #[test]
    fn push_wtf8_matches_utf8_for_scalar_values() {
        for c in [
            '\0', 'a', '\u{7f}', '\u{80}', 'é', '\u{7ff}', '\u{800}', '中', '\u{ffff}',
        ] {
            let mut out = Vec::new();
            push_wtf8(&mut out, u16::try_from(u32::from(c)).unwrap());
            assert_eq!(out, c.to_string().into_bytes(), "{c:?}");
        }
    }

    #[test]
    fn malformed_text_never_panics() {
        for text in [
            "",
            "{",
            "[",
            "\"",
            "\"\\",
            "{\"a\"",
            "{\"a\":",
            "{\"a\":1,",
            "[1,",
            "{1:2}",
        ] {
            let stop = Scanner::new(text).value(8);
            assert!(matches!(stop, Err(Stop::Malformed)), "{text:?}: {stop:?}");
        }
        assert!(matches!(
            Scanner::new("[[[]]]").value(2),
            Err(Stop::TooDeep)
        ));
        assert!(Scanner::new("[[[]]]").value(3).is_ok());
        assert_eq!(unescape(br"\u12", false), b"\\u12".to_vec());
        assert_eq!(unescape(b"\\", false), b"\\".to_vec());
    }

    /// What serde_json's `RawValue` makes of `text` (one value, whitespace around it allowed).
    fn serde_raw(text: &str) -> Option<String> {
        serde_json::from_str::<Box<serde_json::value::RawValue>>(text)
            .ok()
            .map(|raw| raw.get().to_owned())
    }

    /// Deep enough for any test text: no depth stop here.
    const MAX_DEPTH: usize = 512;

    /// The value [`Scanner::checked`] vouches for in `text`, when `text` is that one value
    /// with nothing but whitespace after it; a stop other than `Malformed` as an error.
    fn scanned(text: &str) -> Result<Option<&str>, String> {
        let mut s = Scanner::new(text);
        match s.checked(MAX_DEPTH) {
            Ok(checked) => Ok(s.at_end().then_some(checked.text())),
            Err(Stop::Malformed) => Ok(None),
            Err(other) => Err(format!("{other:?}")),
        }
    }

    /// RFC 8259 section 2-7 grammar as serde_json's `RawValue` takes it: the scanner accepts
    /// exactly the texts serde_json accepts, keeping the same text.
    #[test]
    fn the_scanner_checks_json_grammar_as_serde_json_raw_value_does() {
        let accepted = [
            "0",
            "-0",
            "12",
            "-12.5e-3",
            "0.5E+2",
            "1e400",
            "123456789012345678901234567890",
            "true",
            "false",
            "null",
            r#""""#,
            r#""a\"\\\/\b\f\n\r\t\u00e9\uD83D\uDE00""#,
            // A lone surrogate escape is a valid `RawValue` (reading it into a `String` fails).
            r#""\ud800""#,
            "\"\u{7f}\u{e9}\"",
            "[]",
            "{}",
            " [ 1 , { \"a\" : [ ] } ] ",
            r#"{"a":1,"b":[true,null,"x"]}"#,
        ];
        for text in accepted {
            let kept = serde_raw(text);
            assert!(kept.is_some(), "serde_json refuses {text:?}");
            assert_eq!(scanned(text), Ok(kept.as_deref()), "{text:?}");
        }
        let refused = [
            "",
            "-",
            "+1",
            "01",
            "-01",
            ".5",
            "1.",
            "1.e2",
            "1e",
            "1e+",
            "0x1",
            "1_0",
            "tru",
            "nul",
            "True",
            "NaN",
            "Infinity",
            "\"",
            r#""\x""#,
            r#""\u12""#,
            r#""\u12g4""#,
            r#""\U0041""#,
            "\"a\tb\"",
            "\"a\nb\"",
            "\"\u{0}\"",
            "[",
            "[1,]",
            "[,]",
            "[1 2]",
            r#"{"a"}"#,
            r#"{"a":}"#,
            "{,}",
            r#"{"a":1,}"#,
            "{1:2}",
            "{'a':1}",
            "[1]]",
            "1 2",
            r#"["a",]"#,
        ];
        for text in refused {
            assert_eq!(serde_raw(text), None, "serde_json accepts {text:?}");
            assert_eq!(scanned(text), Ok(None), "{text:?}");
        }
    }

    /// Bytes that matter to the grammar, for mutations.
    const PIECES: &[&str] = &[
        "{", "}", "[", "]", ",", ":", "\"", "\\", "\\u", "\\x", "\\ud800", "\\u00e9", " ", "\n",
        "\t", "0", "1", "-", "+", ".", "e", "E", "null", "true", "fals", "a", "F", "\"a\":1",
        "\u{0}", "\u{1f}", "\u{7f}", "\u{e9}",
    ];

    /// Values to mutate: every kind of token, nested.
    const BASES: &[&str] = &[
        r#"{"name":"echo","arguments":{"text":"hello","n":-1.5e3,"ok":true,"none":null}}"#,
        r#"[0,{"a":[]},"\u0041\n",12.25E-2,false,{"b":{"c":[1,2]}}]"#,
        r#"{"s":"a\"b\u00e9\ud83d\ude00","t":[ 1 , 2 ] , "u" : { } }"#,
    ];

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2048))]

        /// Every text the scanner vouches for is a `RawValue` to serde_json, the same text;
        /// and every `RawValue` is read through by the scanner, unless it has a duplicate
        /// key (which the scanner reports and serde_json does not look for).
        #[test]
        fn mutated_values_are_valid_to_the_scanner_exactly_when_they_are_to_serde_json(
            base in 0..BASES.len(),
            edits in proptest::collection::vec((0..200usize, 0..3u8, 0..PIECES.len()), 1..4),
        ) {
            let text = mutate(BASES[base], &edits, PIECES);
            let serde = serde_raw(&text);
            match scanned(&text) {
                Ok(Some(checked)) => {
                    proptest::prop_assert_eq!(serde.as_deref(), Some(checked), "{}", text);
                }
                Ok(None) => proptest::prop_assert_eq!(serde, None, "{}", text),
                Err(stop) => proptest::prop_assert!(stop.starts_with("Duplicate"), "{}", text),
            }
        }
    }
}
