//! A form-mode elicitation's `requestedSchema` as fields: checking a value against a field
//! (for `--elicit JSON` and for typed answers), reading a typed answer, and asking each field
//! on a terminal.
//!
//! The schema is read as JSON, so a field of a shape this code does not know (a later
//! revision's) is asked and checked as free text rather than refused.

use std::collections::BTreeMap;
use std::io::{self, BufRead, Write};

use ferromcp_types::mcp::{ElicitAction, ElicitResult, ElicitValue, ElicitationSchema};
use serde_json::{Map, Value};

use crate::terminal::{line, safe};

/// What a field holds.
#[derive(Debug, Clone, PartialEq)]
enum Kind {
    /// A string, with its length bounds (in characters) and format.
    Text {
        min: Option<u64>,
        max: Option<u64>,
        format: Option<String>,
    },
    /// A number; `integer` for `"type": "integer"`.
    Number {
        integer: bool,
        min: Option<f64>,
        max: Option<f64>,
    },
    /// A boolean.
    Bool,
    /// One of these `(value, title)` options.
    One(Vec<(String, String)>),
    /// Some of these options, between `min` and `max` of them.
    Many {
        options: Vec<(String, String)>,
        min: Option<u64>,
        max: Option<u64>,
    },
}

/// One property of the requested schema.
#[derive(Debug, Clone)]
pub(crate) struct Field {
    name: String,
    title: Option<String>,
    description: Option<String>,
    kind: Kind,
    default: Option<Value>,
    required: bool,
}

fn str_of(def: &Value, key: &str) -> Option<String> {
    def.get(key).and_then(Value::as_str).map(str::to_owned)
}

fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// `[{const, title}]` as options.
fn titled(v: Option<&Value>) -> Vec<(String, String)> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|o| {
                    let value = str_of(o, "const")?;
                    let title = str_of(o, "title").unwrap_or_else(|| value.clone());
                    Some((value, title))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Plain values, titled by `names` where given (the legacy `enumNames`).
fn untitled(values: Vec<String>, names: &[String]) -> Vec<(String, String)> {
    values
        .into_iter()
        .enumerate()
        .map(|(i, v)| {
            let title = names.get(i).cloned().unwrap_or_else(|| v.clone());
            (v, title)
        })
        .collect()
}

fn kind(def: &Value) -> Kind {
    let u = |k: &str| def.get(k).and_then(Value::as_u64);
    let f = |k: &str| def.get(k).and_then(Value::as_f64);
    match def.get("type").and_then(Value::as_str) {
        Some("array") => {
            let items = def.get("items");
            let mut options = titled(items.and_then(|i| i.get("anyOf")));
            if options.is_empty() {
                options = untitled(strings(items.and_then(|i| i.get("enum"))), &[]);
            }
            Kind::Many {
                options,
                min: u("minItems"),
                max: u("maxItems"),
            }
        }
        Some("number") | Some("integer") => Kind::Number {
            integer: def.get("type").and_then(Value::as_str) == Some("integer"),
            min: f("minimum"),
            max: f("maximum"),
        },
        Some("boolean") => Kind::Bool,
        _ if def.get("enum").is_some() => Kind::One(untitled(
            strings(def.get("enum")),
            &strings(def.get("enumNames")),
        )),
        _ if def.get("oneOf").is_some() => Kind::One(titled(def.get("oneOf"))),
        _ => Kind::Text {
            min: u("minLength"),
            max: u("maxLength"),
            format: str_of(def, "format"),
        },
    }
}

/// The fields of `schema`, in the order of its properties.
pub(crate) fn fields(schema: &ElicitationSchema) -> Vec<Field> {
    let required = schema.required.clone().unwrap_or_default();
    let value = serde_json::to_value(&schema.properties).unwrap_or(Value::Null);
    let Value::Object(props) = value else {
        return Vec::new();
    };
    props
        .into_iter()
        .map(|(name, def)| Field {
            required: required.contains(&name),
            title: str_of(&def, "title"),
            description: str_of(&def, "description"),
            kind: kind(&def),
            default: def.get("default").cloned(),
            name,
        })
        .collect()
}

fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        2 if year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400)) => {
            29
        }
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// `digits` ASCII digits as a number.
fn num(s: &str, digits: usize) -> Option<u32> {
    (s.len() == digits && s.bytes().all(|b| b.is_ascii_digit()))
        .then(|| s.parse().ok())
        .flatten()
}

/// `YYYY-MM-DD` (RFC 3339 full-date).
fn is_date(s: &str) -> bool {
    let mut parts = s.split('-');
    let (Some(y), Some(m), Some(d), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return false;
    };
    match (num(y, 4), num(m, 2), num(d, 2)) {
        (Some(y), Some(m), Some(d)) => (1..=12).contains(&m) && d >= 1 && d <= days_in_month(y, m),
        _ => false,
    }
}

/// `HH:MM` with HH < 24, MM < 60.
fn is_hm(s: &str) -> bool {
    matches!(s.split_once(':'), Some((h, m)) if num(h, 2).is_some_and(|h| h < 24)
        && num(m, 2).is_some_and(|m| m < 60))
}

/// RFC 3339 date-time: `2026-01-31T12:00:00Z`, `…T12:00:00.5+02:00`.
fn is_date_time(s: &str) -> bool {
    let Some((date, time)) = s.split_once(['T', 't']) else {
        return false;
    };
    let (clock, zone_ok) = if let Some(c) = time.strip_suffix(['Z', 'z']) {
        (c, true)
    } else {
        match time.rfind(['+', '-']) {
            Some(i) => (&time[..i], is_hm(&time[i + 1..])),
            None => return false,
        }
    };
    let (hms, frac) = match clock.split_once('.') {
        Some((hms, frac)) => (hms, Some(frac)),
        None => (clock, None),
    };
    let frac_ok = frac.is_none_or(|f| !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit()));
    let hms_ok = match hms.rsplit_once(':') {
        Some((hm, sec)) => is_hm(hm) && num(sec, 2).is_some_and(|s| s <= 60),
        None => false,
    };
    is_date(date) && zone_ok && frac_ok && hms_ok
}

/// `local@domain.tld`, no spaces.
fn is_email(s: &str) -> bool {
    match s.rsplit_once('@') {
        Some((local, domain)) => {
            !local.is_empty()
                && domain.contains('.')
                && !domain.starts_with('.')
                && !domain.ends_with('.')
                && !s.chars().any(|c| c.is_whitespace() || c.is_control())
        }
        None => false,
    }
}

/// `scheme:rest` (RFC 3986 scheme), no spaces.
fn is_uri(s: &str) -> bool {
    match s.split_once(':') {
        Some((scheme, rest)) => {
            scheme.starts_with(|c: char| c.is_ascii_alphabetic())
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
                && !rest.is_empty()
                && !s.chars().any(|c| c.is_whitespace() || c.is_control())
        }
        None => false,
    }
}

fn check_format(format: &str, s: &str) -> Result<(), String> {
    let (ok, what) = match format {
        "email" => (is_email(s), "an email address (name@example.com)"),
        "uri" => (is_uri(s), "a URI (https://example.com/…)"),
        "date" => (is_date(s), "a date (YYYY-MM-DD)"),
        "date-time" => (is_date_time(s), "a date and time (2026-01-31T12:00:00Z)"),
        _ => (true, ""),
    };
    if ok {
        Ok(())
    } else {
        Err(format!("not {what}"))
    }
}

fn check_count(n: usize, min: Option<u64>, max: Option<u64>, what: &str) -> Result<(), String> {
    let n = n as u64;
    if let Some(min) = min.filter(|m| n < *m) {
        return Err(format!("at least {min} {what}"));
    }
    if let Some(max) = max.filter(|m| n > *m) {
        return Err(format!("at most {max} {what}"));
    }
    Ok(())
}

fn option_names(options: &[(String, String)]) -> String {
    let names: Vec<String> = options.iter().map(|(v, _)| format!("{v:?}")).collect();
    names.join(", ")
}

impl Field {
    /// Checks `value` against this field.
    pub(crate) fn check(&self, value: &Value) -> Result<(), String> {
        match (&self.kind, value) {
            (Kind::Text { min, max, format }, Value::String(s)) => {
                check_count(s.chars().count(), *min, *max, "characters")?;
                format.as_deref().map_or(Ok(()), |f| check_format(f, s))
            }
            (Kind::Number { integer, min, max }, Value::Number(n)) => {
                let x = n.as_f64().unwrap_or(f64::NAN);
                if *integer && x.fract() != 0.0 {
                    return Err("not a whole number".into());
                }
                if let Some(min) = min.filter(|m| x < *m) {
                    return Err(format!("less than the minimum {min}"));
                }
                if let Some(max) = max.filter(|m| x > *m) {
                    return Err(format!("more than the maximum {max}"));
                }
                Ok(())
            }
            (Kind::Bool, Value::Bool(_)) => Ok(()),
            (Kind::One(options), Value::String(s)) => {
                if options.iter().any(|(v, _)| v == s) {
                    Ok(())
                } else {
                    Err(format!("not one of {}", option_names(options)))
                }
            }
            (Kind::Many { options, min, max }, Value::Array(items)) => {
                for item in items {
                    let ok = item
                        .as_str()
                        .is_some_and(|s| options.iter().any(|(v, _)| v == s));
                    if !ok {
                        return Err(format!("{item} is not one of {}", option_names(options)));
                    }
                }
                check_count(items.len(), *min, *max, "choices")
            }
            (kind, other) => Err(format!("{other} is not {}", kind_name(kind))),
        }
    }

    /// Reads a typed answer (not empty) as this field's value, checked.
    pub(crate) fn parse(&self, text: &str) -> Result<Value, String> {
        let t = text.trim();
        let value = match &self.kind {
            Kind::Text { .. } => Value::String(text.to_owned()),
            Kind::Number { .. } => match t.parse::<i64>() {
                Ok(i) => Value::from(i),
                Err(_) => t
                    .parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite())
                    .and_then(|x| serde_json::Number::from_f64(x).map(Value::Number))
                    .ok_or_else(|| format!("{t:?} is not a number"))?,
            },
            Kind::Bool => match t.to_ascii_lowercase().as_str() {
                "y" | "yes" | "true" | "1" => Value::Bool(true),
                "n" | "no" | "false" | "0" => Value::Bool(false),
                _ => return Err(format!("{t:?} is not y or n")),
            },
            Kind::One(options) => Value::String(pick(options, t)?),
            Kind::Many { options, .. } => Value::Array(
                t.split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(|s| pick(options, s).map(Value::String))
                    .collect::<Result<_, _>>()?,
            ),
        };
        self.check(&value)?;
        Ok(value)
    }
}

fn kind_name(kind: &Kind) -> &'static str {
    match kind {
        Kind::Text { .. } => "a string",
        Kind::Number { integer: true, .. } => "a whole number",
        Kind::Number { .. } => "a number",
        Kind::Bool => "true or false",
        Kind::One(_) => "one of the options (a string)",
        Kind::Many { .. } => "a list of options",
    }
}

/// An option by its number (from 1), its value, or its title (any case).
fn pick(options: &[(String, String)], t: &str) -> Result<String, String> {
    if let Ok(i) = t.parse::<usize>()
        && let Some((v, _)) = i.checked_sub(1).and_then(|i| options.get(i))
    {
        return Ok(v.clone());
    }
    options
        .iter()
        .find(|(v, title)| v == t || title.eq_ignore_ascii_case(t) || v.eq_ignore_ascii_case(t))
        .map(|(v, _)| v.clone())
        .ok_or_else(|| format!("{:?} is not one of the options", line(t)))
}

/// The `--elicit` JSON fitted to one form: its values, and the keys the form does not have.
pub(crate) type Fitted = (BTreeMap<String, ElicitValue>, Vec<String>);

/// Checks `content` (the `--elicit` JSON) against the form: every value of a field fitting
/// it, every required field without a default present. Keys the form does not have are left
/// out and returned (one `--elicit` can answer the several forms of a multi-round call).
pub(crate) fn validate(fields: &[Field], content: &Map<String, Value>) -> Result<Fitted, String> {
    let mut out = BTreeMap::new();
    let mut ignored = Vec::new();
    for (key, value) in content {
        let Some(field) = fields.iter().find(|f| &f.name == key) else {
            ignored.push(line(key));
            continue;
        };
        field
            .check(value)
            .map_err(|e| format!("field {:?}: {e}", line(key)))?;
        let value = serde_json::from_value(value.clone())
            .map_err(|e| format!("field {:?}: {e}", line(key)))?;
        out.insert(key.clone(), value);
    }
    for f in fields {
        if f.required && f.default.is_none() && !content.contains_key(&f.name) {
            let names: Vec<String> = fields.iter().map(|f| line(&f.name)).collect();
            return Err(format!(
                "the required field {:?} is missing (the form's fields: {})",
                line(&f.name),
                names.join(", ")
            ));
        }
    }
    Ok((out, ignored))
}

/// The hint after a field's name: its type and bounds.
fn hint(f: &Field) -> String {
    let range = |min: Option<String>, max: Option<String>, unit: &str| match (min, max) {
        (Some(a), Some(b)) => format!(", {a}–{b}{unit}"),
        (Some(a), None) => format!(", at least {a}{unit}"),
        (None, Some(b)) => format!(", at most {b}{unit}"),
        (None, None) => String::new(),
    };
    let s = |x: Option<u64>| x.map(|x| x.to_string());
    let n = |x: Option<f64>| x.map(crate::report::number);
    match &f.kind {
        Kind::Text { min, max, format } => {
            let what = match format.as_deref() {
                Some("email") => "email",
                Some("uri") => "URI",
                Some("date") => "date YYYY-MM-DD",
                Some("date-time") => "date-time YYYY-MM-DDTHH:MM:SSZ",
                _ => "text",
            };
            format!("{what}{}", range(s(*min), s(*max), " characters"))
        }
        Kind::Number { integer, min, max } => format!(
            "{}{}",
            if *integer { "whole number" } else { "number" },
            range(n(*min), n(*max), "")
        ),
        Kind::Bool => "y/n".into(),
        Kind::One(_) => "a number or a value".into(),
        Kind::Many { min, max, .. } => format!(
            "numbers or values, comma-separated{}",
            range(s(*min), s(*max), " choices")
        ),
    }
}

/// Reads one line; `None` at the end of input.
fn read<R: BufRead>(input: &mut R) -> io::Result<Option<String>> {
    let mut buf = String::new();
    if input.read_line(&mut buf)? == 0 {
        return Ok(None);
    }
    let end = buf.trim_end_matches(['\n', '\r']).len();
    buf.truncate(end);
    Ok(Some(buf))
}

/// Asks accept/decline/cancel; `None` for accept.
pub(crate) fn choose<R: BufRead, W: Write>(
    question: &str,
    input: &mut R,
    out: &mut W,
) -> io::Result<Option<ElicitAction>> {
    loop {
        write!(out, "  {question} [a]ccept, [d]ecline or [c]ancel? ")?;
        out.flush()?;
        let Some(answer) = read(input)? else {
            return Ok(Some(ElicitAction::Cancel));
        };
        match answer.trim().to_ascii_lowercase().as_str() {
            "a" | "accept" => return Ok(None),
            "d" | "decline" => return Ok(Some(ElicitAction::Decline)),
            "c" | "cancel" => return Ok(Some(ElicitAction::Cancel)),
            _ => writeln!(out, "  please answer a, d or c")?,
        }
    }
}

/// Asks every field of the form on `out`, reading answers from `input`: an invalid answer
/// is explained and asked again; an empty answer takes the default or leaves an optional
/// field out (a required one is asked again); an empty answer to the first question first
/// asks whether to accept, decline or cancel; the end of input cancels.
pub(crate) fn prompt<R: BufRead, W: Write>(
    message: &str,
    fields: &[Field],
    input: &mut R,
    out: &mut W,
) -> io::Result<ElicitResult> {
    writeln!(
        out,
        "ferromcp: the server asks:\n  {}",
        safe(message, true, "  ")
    )?;
    writeln!(
        out,
        "  (Enter on the first question: accept, decline or cancel; end of input: cancel)"
    )?;
    let mut content = BTreeMap::new();
    let mut chose = false;
    for (i, f) in fields.iter().enumerate() {
        if let Some(d) = &f.description {
            writeln!(out, "  {}", safe(d, true, "  "))?;
        }
        if let Kind::One(options) | Kind::Many { options, .. } = &f.kind {
            for (n, (value, title)) in options.iter().enumerate() {
                if value == title {
                    writeln!(out, "    {}) {}", n + 1, line(title))?;
                } else {
                    writeln!(out, "    {}) {} ({})", n + 1, line(title), line(value))?;
                }
            }
        }
        let label = match &f.title {
            Some(t) => format!("{} ({})", line(t), line(&f.name)),
            None => line(&f.name),
        };
        let default = f
            .default
            .as_ref()
            .map(|d| format!(" [default {}]", line(&d.to_string())))
            .unwrap_or_default();
        let required = if f.required { " (required)" } else { "" };
        loop {
            write!(out, "  {label} — {}{default}{required}: ", hint(f))?;
            out.flush()?;
            let Some(text) = read(input)? else {
                return Ok(ElicitResult::new(ElicitAction::Cancel));
            };
            if text.trim().is_empty() {
                if i == 0 && !chose {
                    chose = true;
                    if let Some(action) = choose("Empty answer:", input, out)? {
                        return Ok(ElicitResult::new(action));
                    }
                }
                if let Some(d) = &f.default {
                    if let Ok(v) = serde_json::from_value::<ElicitValue>(d.clone()) {
                        content.insert(f.name.clone(), v);
                    }
                    break;
                }
                if !f.required {
                    break;
                }
                writeln!(out, "  a value is required")?;
                continue;
            }
            match f
                .parse(&text)
                .and_then(|v| serde_json::from_value::<ElicitValue>(v).map_err(|e| e.to_string()))
            {
                Ok(v) => {
                    content.insert(f.name.clone(), v);
                    break;
                }
                Err(e) => writeln!(out, "  {e}; try again")?,
            }
        }
    }
    Ok(ElicitResult::accept(content))
}

#[cfg(test)]
#[path = "form_tests.rs"]
mod tests;
