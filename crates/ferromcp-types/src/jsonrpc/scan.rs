//! A small hand-written JSON scanner: finds where a value ends, bounds its nesting, and checks
//! every object in it for duplicate keys, in one pass with no allocation in the usual case.
//!
//! It does not check the JSON grammar (serde_json does that wherever a scanned value is
//! kept), but it never panics and always terminates on any input; on text that is not JSON
//! its findings mean nothing and the callers treat them so.

use std::borrow::Cow;
use std::collections::HashSet;

/// Up to this many keys, an object's keys are checked by comparing against the earlier ones
/// (no hashing, nothing allocated); past it, by a hash set of the decoded keys.
const FEW: usize = 16;

/// The bytes that end a run of plain string content: a quote, a backslash, or a control
/// character (which JSON forbids in strings).
static SPECIAL: [bool; 256] = {
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

/// A string as written between its quotes, and whether it holds a backslash escape or a
/// control character.
#[derive(Debug, Clone, Copy)]
pub(super) struct RawStr<'a> {
    raw: &'a str,
    escaped: bool,
    control: bool,
}

impl<'a> RawStr<'a> {
    /// The string when it reads as written: no escape and no control character (which
    /// JSON forbids in a string; the caller leaves that error to serde_json), else `None`.
    pub(super) fn plain(self) -> Option<&'a str> {
        (!self.escaped && !self.control).then_some(self.raw)
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

    /// The current byte offset.
    pub(super) fn pos(&self) -> usize {
        self.pos
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

    /// Skips one value (and the whitespace before it), checking each object in it for a
    /// repeated key; `depth` is how many levels of objects and arrays it may nest.
    #[inline]
    pub(super) fn value(&mut self, depth: usize) -> Result<(), Stop<'a>> {
        self.skip_ws();
        match self.peek() {
            Some(b'"') => self.string().map(drop).ok_or(Stop::Malformed),
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth),
            Some(_) => self.scalar(),
            None => Err(Stop::Malformed),
        }
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

    /// A string, from its opening quote (which must be next) to past its closing one.
    #[inline]
    pub(super) fn string(&mut self) -> Option<RawStr<'a>> {
        if self.peek() != Some(b'"') {
            return None;
        }
        let start = self.pos + 1;
        let mut end = start;
        let (mut escaped, mut control) = (false, false);
        loop {
            end = self.plain_run(end);
            match self.bytes.get(end) {
                Some(b'"') => break,
                // The escaped byte may be a quote; `\u` digits never are.
                Some(b'\\') => {
                    escaped = true;
                    end += 2;
                }
                Some(_) => {
                    control = true;
                    end += 1;
                }
                None => return None,
            }
        }
        // Quotes are ASCII, so both ends are character boundaries.
        let raw = self.text.get(start..end)?;
        self.pos = end + 1;
        Some(RawStr {
            raw,
            escaped,
            control,
        })
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

    /// A number or literal: everything up to the next delimiter.
    fn scalar(&mut self) -> Result<(), Stop<'a>> {
        let start = self.pos;
        while let Some(b) = self.peek() {
            if matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r') {
                break;
            }
            self.pos += 1;
        }
        if self.pos == start {
            return Err(Stop::Malformed);
        }
        Ok(())
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
/// Malformed escapes, which serde_json rejects before any caller relies on the result, decode
/// to something without failing.
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
}
