//! The YAML frontmatter of an Agent Skill's `SKILL.md` (SEP-2640, the skills extension).
//!
//! [`parse_frontmatter`] reads the YAML between a leading `---` line and the next `---` line
//! with a strict subset of YAML: `key: value` lines, one level of nested mappings, and plain,
//! single- or double-quoted scalars read as YAML's core schema reads them (null, booleans,
//! decimal integers, simple floats, strings). Anything the subset cannot read exactly as a YAML
//! parser would (flow collections, block scalars, anchors, tags, sequences, dates, `0x`
//! numbers, ...) is refused with a message naming the line, so that the JSON object it returns
//! is always what a YAML parser reads. A server uses it to build a skill's `frontmatter`; a
//! client uses it to check a loaded `SKILL.md` against the entry it listed.
//!
//! ```
//! use ferromcp_types::mcp::skills::parse_frontmatter;
//!
//! let fm = parse_frontmatter("---\nname: pdf-tools\ndescription: Fill PDF forms\n---\n# PDF\n")
//!     .unwrap();
//! assert_eq!(fm["name"], "pdf-tools");
//! assert!(parse_frontmatter("# no frontmatter\n").is_err());
//! ```

use serde_json::{Map, Number, Value};

use super::JsonObject;

/// The frontmatter of a `SKILL.md`: the YAML between a leading `---` line and the next `---`
/// line, read with the subset described in the [module docs](self).
///
/// # Errors
///
/// A message naming the offending line when the text has no frontmatter or uses YAML
/// outside the subset.
pub fn parse_frontmatter(text: &str) -> Result<JsonObject, String> {
    let mut lines = text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l));
    if lines.next().map(str::trim_end) != Some("---") {
        return Err("SKILL.md must begin with a `---` line opening the YAML frontmatter".into());
    }
    let mut body = Vec::new();
    let mut closed = false;
    for line in lines {
        if line.trim_end() == "---" {
            closed = true;
            break;
        }
        body.push(line);
    }
    if !closed {
        return Err("the frontmatter has no closing `---` line".into());
    }
    let mut out = Map::new();
    // The key of an open nested mapping, its entries and its indentation.
    let mut nested: Option<(String, Map<String, Value>, usize)> = None;
    for (i, raw) in body.iter().enumerate() {
        let n = i + 2;
        let line = strip_comment(raw);
        if line.trim().is_empty() {
            continue;
        }
        let indented = line.starts_with(' ') || line.starts_with('\t');
        if line.starts_with('\t') {
            return Err(format!("frontmatter line {n}: tabs cannot indent YAML"));
        }
        if indented {
            let Some((_, map, indent)) = nested.as_mut() else {
                return Err(format!("frontmatter line {n}: unexpected indentation"));
            };
            let this = line.len() - line.trim_start().len();
            if this != *indent {
                return Err(format!(
                    "frontmatter line {n}: indentation differs from the mapping's first line"
                ));
            }
            let (key, value) = key_value(line.trim_start(), n)?;
            if value.is_empty() {
                return Err(format!(
                    "frontmatter line {n}: only one level of nesting is supported"
                ));
            }
            if map.insert(key.clone(), scalar(value, n)?).is_some() {
                return Err(format!("frontmatter line {n}: duplicate key `{key}`"));
            }
            continue;
        }
        if let Some((key, map, _)) = nested.take() {
            out.insert(key, Value::Object(map));
        }
        let (key, value) = key_value(line, n)?;
        if out.contains_key(&key) {
            return Err(format!("frontmatter line {n}: duplicate key `{key}`"));
        }
        if value.is_empty() {
            // A nested mapping if indented lines follow, else null.
            let indent = body[i + 1..]
                .iter()
                .map(|l| strip_comment(l))
                .find(|l| !l.trim().is_empty())
                .map_or(0, |l| l.len() - l.trim_start_matches(' ').len());
            if indent > 0 {
                nested = Some((key, Map::new(), indent));
            } else {
                out.insert(key, Value::Null);
            }
        } else {
            out.insert(key, scalar(value, n)?);
        }
    }
    if let Some((key, map, _)) = nested.take() {
        out.insert(key, Value::Object(map));
    }
    Ok(out)
}

/// A line without a trailing ` #` comment (outside quotes).
fn strip_comment(line: &str) -> &str {
    let mut quote = None;
    let bytes = line.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        match (quote, b) {
            (None, b'"' | b'\'') => quote = Some(b),
            (Some(q), c) if c == q => quote = None,
            (None, b'#') if i == 0 || bytes[i - 1] == b' ' => return line[..i].trim_end(),
            _ => {}
        }
    }
    line.trim_end()
}

/// `key: value` (value trimmed, possibly empty).
fn key_value(line: &str, n: usize) -> Result<(String, &str), String> {
    let (key, value) = match line.split_once(": ") {
        Some((k, v)) => (k, v.trim()),
        None => match line.strip_suffix(':') {
            Some(k) => (k, ""),
            None => return Err(format!("frontmatter line {n}: expected `key: value`")),
        },
    };
    let key_ok = !key.is_empty()
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b'/'));
    if !key_ok {
        return Err(format!(
            "frontmatter line {n}: keys are plain words (letters, digits, `_`, `-`, `.`, `/`)"
        ));
    }
    Ok((key.to_owned(), value))
}

/// A scalar as YAML's core schema reads it; constructs outside the subset are refused.
fn scalar(value: &str, n: usize) -> Result<Value, String> {
    let unsupported = |what: &str| {
        Err(format!(
            "frontmatter line {n}: {what} is not supported here; write the value as a quoted \
             string"
        ))
    };
    if let Some(inner) = value.strip_prefix('"') {
        let Some(inner) = inner.strip_suffix('"') else {
            return unsupported("an unterminated or multi-line double-quoted string");
        };
        // Double-quoted YAML escapes are a superset of JSON's; the JSON ones suffice here.
        return serde_json::from_str::<String>(&format!("\"{inner}\""))
            .map(Value::String)
            .or_else(|_| unsupported("this escape sequence"));
    }
    if let Some(inner) = value.strip_prefix('\'') {
        let Some(inner) = inner.strip_suffix('\'') else {
            return unsupported("an unterminated or multi-line single-quoted string");
        };
        if inner.replace("''", "").contains('\'') {
            return unsupported("a stray single quote");
        }
        return Ok(Value::String(inner.replace("''", "'")));
    }
    let first = value.chars().next().unwrap_or(' ');
    if matches!(
        first,
        '[' | '{' | '&' | '*' | '!' | '|' | '>' | '%' | '@' | '`' | ',' | '?'
    ) || value.starts_with("- ")
        || value == "-"
    {
        return unsupported("a YAML flow collection, block scalar, anchor, alias or tag");
    }
    if value.contains(": ") || value.ends_with(':') {
        return unsupported("a plain scalar holding `: ` or ending in `:`");
    }
    match value {
        "null" | "Null" | "NULL" | "~" => return Ok(Value::Null),
        "true" | "True" | "TRUE" => return Ok(Value::Bool(true)),
        "false" | "False" | "FALSE" => return Ok(Value::Bool(false)),
        _ => {}
    }
    let numeric_start = first.is_ascii_digit() || matches!(first, '+' | '-' | '.');
    if numeric_start {
        let digits = value.trim_start_matches(['+', '-']);
        let decimal_int = !digits.is_empty()
            && digits.bytes().all(|b| b.is_ascii_digit())
            && (digits == "0" || !digits.starts_with('0'));
        if decimal_int && let Ok(i) = value.parse::<i64>() {
            return Ok(Value::Number(i.into()));
        }
        let simple_float = digits.bytes().filter(|&b| b == b'.').count() == 1
            && digits.bytes().all(|b| b.is_ascii_digit() || b == b'.')
            && digits.bytes().any(|b| b.is_ascii_digit())
            && !digits.starts_with("00");
        if simple_float
            && let Ok(f) = value.parse::<f64>()
            && let Some(num) = Number::from_f64(f)
        {
            return Ok(Value::Number(num));
        }
        if value.bytes().any(|b| b.is_ascii_digit()) {
            return unsupported("a plain scalar that YAML may read as a number or date");
        }
    }
    Ok(Value::String(value.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn frontmatter_subset_reads_like_yaml() {
        let fm = parse_frontmatter(
            "---\nname: a-b\ndescription: 'It''s: fine' # note\nversion: 2\nratio: 1.5\n\
             flag: true\nnone:\nmetadata:\n  author: \"x \\\"y\\\"\"\n  tier: gold\n---\nbody",
        )
        .unwrap();
        assert_eq!(
            Value::Object(fm),
            json!({"name": "a-b", "description": "It's: fine", "version": 2, "ratio": 1.5,
                   "flag": true, "none": null, "metadata": {"author": "x \"y\"", "tier": "gold"}})
        );
    }

    #[test]
    fn frontmatter_refuses_what_it_cannot_read_faithfully() {
        for bad in [
            "name: x\ndescription: >\n  folded",
            "name: x\ndescription: [a, b]",
            "name: x\ndate: 2024-01-01",
            "name: x\nhex: 0x1F",
            "name: x\ndescription: a: b",
            "name: x\nlist:\n  - a",
            "name: x\nname: y",
            "name: x\ndescription: Note:",
            "name: x\nmetadata:\n  a: 1\n    b: 2",
            "name: x\nmetadata:\n\ta: 1",
        ] {
            assert!(
                parse_frontmatter(&format!("---\n{bad}\n---\n")).is_err(),
                "{bad}"
            );
        }
        assert!(parse_frontmatter("name: x\n").is_err());
        // Whatever the input, an answer and no panic.
        for odd in [
            "---\n#\n---",
            "---\n'\n---",
            "---\nnamé: é#x\n---",
            "---\n:\n---",
            "---\n",
        ] {
            let _ = parse_frontmatter(odd);
        }
        assert!(parse_frontmatter("---\nname: x\n").is_err());
    }
}
