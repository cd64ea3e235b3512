//! JSON value helpers: number comparison, integer checks, `multipleOf`, value equality and
//! hashing (1 and 1.0 are the same value), bounded rendering of values for error messages.

use std::cmp::Ordering;
use std::hash::{DefaultHasher, Hash, Hasher};

use serde_json::{Number, Value};

use super::instance::{Instance, Items, Kind, Members};

/// The value nests deeper than the depth budget allowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TooDeep;

/// The number as an exact integer, if it is one (integral floats included).
pub(crate) fn exact_int(n: &Number) -> Option<i128> {
    if let Some(i) = n.as_i64() {
        return Some(i128::from(i));
    }
    if let Some(u) = n.as_u64() {
        return Some(i128::from(u));
    }
    let f = n.as_f64()?;
    // 2^100: far above u64, far below i128::MAX, so the cast is exact for an integral float.
    if f.is_finite() && f.fract() == 0.0 && f.abs() < 1.267_650_600_228_229_4e30 {
        #[allow(clippy::cast_possible_truncation)]
        return Some(f as i128);
    }
    None
}

/// Whether the number is an integer in the JSON Schema sense (1.0 is one).
pub(crate) fn is_integer(n: &Number) -> bool {
    n.is_i64()
        || n.is_u64()
        || n.as_f64()
            .is_some_and(|f| f.is_finite() && f.fract() == 0.0)
}

fn cmp_int_float(i: i128, f: f64) -> Option<Ordering> {
    if f.is_nan() {
        return None;
    }
    let t = f.trunc();
    // A saturating cast: beyond the i128 range the sign alone decides, which saturation gives.
    #[allow(clippy::cast_possible_truncation)]
    let ti = t as i128;
    match i.cmp(&ti) {
        Ordering::Equal => 0.0_f64.partial_cmp(&(f - t)),
        other => Some(other),
    }
}

/// Compares two numbers by value, exactly when one of them is an integer.
pub(crate) fn cmp_numbers(a: &Number, b: &Number) -> Option<Ordering> {
    match (exact_int(a), exact_int(b)) {
        (Some(x), Some(y)) => Some(x.cmp(&y)),
        (Some(x), None) => cmp_int_float(x, b.as_f64()?),
        (None, Some(y)) => cmp_int_float(y, a.as_f64()?).map(Ordering::reverse),
        (None, None) => a.as_f64()?.partial_cmp(&b.as_f64()?),
    }
}

/// Whether `n` is a multiple of `divisor` (`divisor` > 0, checked at compile time).
///
/// Exact for integers; for floats, the quotient must be within a few ULPs of an integer, so
/// `0.3` is a multiple of `0.1` despite binary floating point. An overflowing quotient is not.
pub(crate) fn is_multiple_of(n: &Number, divisor: &Number) -> bool {
    if let (Some(x), Some(d)) = (exact_int(n), exact_int(divisor)) {
        return d != 0 && x % d == 0;
    }
    let (Some(x), Some(d)) = (n.as_f64(), divisor.as_f64()) else {
        return false;
    };
    if d == 0.0 {
        return false;
    }
    let q = x / d;
    if !q.is_finite() {
        return false;
    }
    (q - q.round()).abs() <= 4.0 * f64::EPSILON * q.abs().max(1.0)
}

/// JSON value equality, numbers by value; nesting beyond `depth_left` is an error. Either
/// side may be a value or text (see [`Instance`]).
pub(crate) fn json_eq<'a, 'b, A: Instance<'a>, B: Instance<'b>>(
    a: A,
    b: B,
    depth_left: usize,
) -> Result<bool, TooDeep> {
    Ok(match (a.kind(), b.kind()) {
        (Kind::Null, Kind::Null) => true,
        (Kind::Bool(x), Kind::Bool(y)) => x == y,
        (Kind::String(x), Kind::String(y)) => x == y,
        (Kind::Number(x), Kind::Number(y)) => cmp_numbers(&x, &y) == Some(Ordering::Equal),
        (Kind::Array(x), Kind::Array(y)) => {
            if x.len() != y.len() {
                return Ok(false);
            }
            let depth = depth_left.checked_sub(1).ok_or(TooDeep)?;
            for (l, r) in x.iter().zip(y.iter()) {
                if !json_eq(l, r, depth)? {
                    return Ok(false);
                }
            }
            true
        }
        (Kind::Object(x), Kind::Object(y)) => {
            if x.len() != y.len() {
                return Ok(false);
            }
            let depth = depth_left.checked_sub(1).ok_or(TooDeep)?;
            for (k, l) in x.iter() {
                match y.get(k) {
                    Some(r) if json_eq(l, r, depth)? => {}
                    _ => return Ok(false),
                }
            }
            true
        }
        _ => false,
    })
}

/// A hash consistent with [`json_eq`]: equal values hash equal (1 and 1.0, any key order),
/// a value and its text alike.
pub(crate) fn json_hash<'a, I: Instance<'a>>(v: I, depth_left: usize) -> Result<u64, TooDeep> {
    let mut h = DefaultHasher::new();
    match v.kind() {
        Kind::Null => 0u8.hash(&mut h),
        Kind::Bool(b) => (1u8, b).hash(&mut h),
        Kind::Number(n) => match exact_int(&n) {
            Some(i) => (2u8, i).hash(&mut h),
            None => (3u8, n.as_f64().map(f64::to_bits)).hash(&mut h),
        },
        Kind::String(s) => (4u8, s.as_ref()).hash(&mut h),
        Kind::Array(items) => {
            let depth = depth_left.checked_sub(1).ok_or(TooDeep)?;
            (5u8, items.len()).hash(&mut h);
            for item in items.iter() {
                json_hash(item, depth)?.hash(&mut h);
            }
        }
        Kind::Object(map) => {
            let depth = depth_left.checked_sub(1).ok_or(TooDeep)?;
            let mut sum = 0u64;
            for (k, item) in map.iter() {
                let mut eh = DefaultHasher::new();
                k.hash(&mut eh);
                json_hash(item, depth)?.hash(&mut eh);
                sum = sum.wrapping_add(eh.finish());
            }
            (6u8, map.len(), sum).hash(&mut h);
        }
        Kind::Malformed => 7u8.hash(&mut h),
    }
    Ok(h.finish())
}

/// The JSON Schema type name of a value (`integer` for integral numbers).
pub(crate) fn type_name<'a, I: Instance<'a>>(kind: &Kind<'a, I>) -> &'static str {
    match kind {
        Kind::Null => "null",
        Kind::Bool(_) => "boolean",
        Kind::Number(n) if is_integer(n) => "integer",
        Kind::Number(_) => "number",
        Kind::String(_) => "string",
        Kind::Array(_) => "array",
        Kind::Object(_) => "object",
        Kind::Malformed => "invalid JSON",
    }
}

/// The longest rendering of a value in an error message, in bytes.
pub(crate) const MAX_RENDERED: usize = 64;

/// A writer that keeps the first `limit` bytes and then refuses, so serialization stops early.
struct Bounded {
    buf: Vec<u8>,
    limit: usize,
    truncated: bool,
}

impl std::io::Write for Bounded {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        let room = self.limit.saturating_sub(self.buf.len());
        if data.len() > room {
            self.buf.extend_from_slice(&data[..room]);
            self.truncated = true;
            return Err(std::io::Error::other("truncated"));
        }
        self.buf.extend_from_slice(data);
        Ok(data.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Renders a value as compact JSON, cut at [`MAX_RENDERED`] bytes (with `…`), never reading
/// more of a huge value than that.
pub(crate) fn render(v: &Value) -> String {
    render_with(|w| serde_json::to_writer(w, v).map_err(std::io::Error::other))
}

/// [`render`] of what `write` writes (into a writer that refuses past [`MAX_RENDERED`]).
pub(crate) fn render_with(
    write: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> String {
    let mut w = Bounded {
        buf: Vec::new(),
        limit: MAX_RENDERED,
        truncated: false,
    };
    // An error only means "truncated" (or text that is not JSON); what was written is kept.
    let _ = write(&mut w);
    let mut s = match String::from_utf8(w.buf) {
        Ok(s) => s,
        Err(e) => {
            let valid = e.utf8_error().valid_up_to();
            let mut bytes = e.into_bytes();
            bytes.truncate(valid);
            String::from_utf8(bytes).unwrap_or_default()
        }
    };
    if w.truncated {
        s.push('…');
    }
    s
}

/// Cuts a string to at most `max` bytes on a char boundary, adding `…` if it was cut.
pub(crate) fn truncate(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_owned();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}
