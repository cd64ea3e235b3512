//! RFC 6570 URI templates, levels 1–3, for resource templates: parse once at registration,
//! expand, and match a concrete URI back to variable values for `resources/read`.
//!
//! ```
//! use ferromcp_server::uri_template::UriTemplate;
//!
//! let t = UriTemplate::parse("test://template/{id}/data{?format}").unwrap();
//! let caps = t.matches("test://template/a%20b/data?format=json").unwrap();
//! assert_eq!(caps.get("id"), Some("a b"));
//! assert_eq!(caps.get("format"), Some("json"));
//! assert_eq!(t.expand(&caps), "test://template/a%20b/data?format=json");
//! ```
//!
//! # Supported syntax
//!
//! Literals and expressions `{…}` with the operators of levels 1–3: none, `+`, `#`, `.`, `/`,
//! `;`, `?`, `&`, and comma-separated variable lists. Values are strings. The level-4 modifiers
//! (`:n` prefix and `*` explode) are **rejected** at parse time with
//! [`TemplateError::UnsupportedModifier`], as are the operators RFC 6570 reserves for future
//! extensions (`=`, `,`, `!`, `@`, `|`).
//!
//! # Matching rule
//!
//! [`UriTemplate::matches`] is a single left-to-right pass over the compiled parts, with no
//! regular expressions and no backtracking. Each expression first finds where it ends, then
//! splits what it covered into variables:
//!
//! - Followed by a literal: the expression ends at the **first occurrence** of that literal
//!   that does not start inside a percent escape (`{a}D` reads `%7DD` as `}` then `D`),
//!   except when the literal is the last part of the template, where it must be the suffix of
//!   the URI (so `file:///{+path}/meta` takes `a/meta/b` from `file:///a/meta/b/meta`).
//! - Followed by an expression with a prefix character (`#`, `.`, `/`, `;`, `?`, `&`): it ends
//!   at the first occurrence of that character (so `{/a}{/b}`, `{name}{.ext}`, `{+path}{?q}`
//!   split where one expects).
//! - Followed by an expression without a prefix, or last: it takes the longest run of
//!   characters it may contain.
//!
//! What an expression may contain follows from what its expansion can produce. A value of
//! `{var}`, `{.var}`, `{/var}`, `{;var}`, `{?var}` or `{&var}` never contains a reserved
//! character (RFC 3986 gen-delims and sub-delims: `:/?#[]@!$&'()*+,;=`) unencoded, so
//! `{id}` stops at `/`, `?`, `#`, `:` and the rest; only the expression's own separators may
//! appear (`,` between the values of `{x,y}`, `.` for labels, `/` for path segments, `;` and
//! `=` for path-style parameters, `&` and `=` for queries). `{+var}` and `{#var}` may contain
//! anything, `/` included. Further rules:
//!
//! - `{var}` and `{+var}` match at least one character. An expression with a prefix may match
//!   nothing, leaving all its variables undefined (absent from the captures).
//! - Lists (`{x,y}`, `{.x,y}`, `{/x,y}`) bind values to variables by position; the last
//!   variable takes the remainder, which for `{x,y}` and `{/x,y}` may not contain the separator.
//! - Named expressions (`{;x,y}`, `{?x,y}`, `{&x,y}`) accept their parameters in any order,
//!   each at most once, and missing ones are allowed; an unknown name is no match. `name`
//!   without `=` is the empty string.
//! - Values are percent-decoded; an invalid escape or invalid UTF-8 is no match. Literals are
//!   compared byte for byte.
//! - A variable that appears twice in the template must capture the same value.
//!
//! Matching runs in time linear in the URI length (each byte is scanned a bounded number of
//! times, plus one failed substring search at most), and URIs longer than
//! [`UriTemplate::max_uri_len`] (default [`DEFAULT_MAX_URI_LEN`]) never match. Templates are
//! capped at [`MAX_TEMPLATE_LEN`] bytes.

use std::borrow::Borrow;
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::hash::{BuildHasher, Hash};
use std::str::FromStr;

/// The longest template [`UriTemplate::parse`] accepts, in bytes.
pub const MAX_TEMPLATE_LEN: usize = 4096;

/// The default longest URI [`UriTemplate::matches`] considers, in bytes (4 KiB).
pub const DEFAULT_MAX_URI_LEN: usize = 4096;

/// RFC 3986 reserved characters (gen-delims and sub-delims).
const RESERVED: &[u8] = b":/?#[]@!$&'()*+,;=";

fn is_reserved(c: u8) -> bool {
    RESERVED.contains(&c)
}

fn is_unreserved(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'-' | b'.' | b'_' | b'~')
}

fn is_hex_pair(b: &[u8]) -> bool {
    b.len() >= 2 && b[0].is_ascii_hexdigit() && b[1].is_ascii_hexdigit()
}

/// The first occurrence of the literal `l` in `uri` at or after `from` that does not start
/// inside a percent escape: an expanded value's `%7D` never ends at the `D` of a literal `D`.
fn find_literal(uri: &str, mut from: usize, l: &str) -> Option<usize> {
    let b = uri.as_bytes();
    let step = l.chars().next().map_or(1, char::len_utf8);
    loop {
        let at = from + uri.get(from..)?.find(l)?;
        let inside = (at >= 1 && b[at - 1] == b'%' && is_hex_pair(&b[at..]))
            || (at >= 2 && b[at - 2] == b'%' && is_hex_pair(&b[at - 1..]));
        if !inside {
            return Some(at);
        }
        from = at + step;
    }
}

/// An expression operator (RFC 6570 §2.2, levels 1–3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Simple,
    Reserved,
    Fragment,
    Label,
    Path,
    Params,
    Query,
    Continuation,
}

impl Op {
    /// The character the expansion starts with when any variable is defined.
    fn first(self) -> Option<u8> {
        match self {
            Op::Simple | Op::Reserved => None,
            Op::Fragment => Some(b'#'),
            Op::Label => Some(b'.'),
            Op::Path => Some(b'/'),
            Op::Params => Some(b';'),
            Op::Query => Some(b'?'),
            Op::Continuation => Some(b'&'),
        }
    }

    fn sep(self) -> u8 {
        match self {
            Op::Simple | Op::Reserved | Op::Fragment => b',',
            Op::Label => b'.',
            Op::Path => b'/',
            Op::Params => b';',
            Op::Query | Op::Continuation => b'&',
        }
    }

    fn named(self) -> bool {
        matches!(self, Op::Params | Op::Query | Op::Continuation)
    }

    fn allow_reserved(self) -> bool {
        matches!(self, Op::Reserved | Op::Fragment)
    }

    /// Whether byte `c` may appear in this expression's match after its prefix character.
    fn allows(self, c: u8, vars: usize) -> bool {
        if self.allow_reserved() {
            return true;
        }
        if !is_reserved(c) {
            return true;
        }
        match self {
            Op::Simple => c == b',' && vars > 1,
            Op::Path => c == b'/',
            Op::Params => c == b';' || c == b'=',
            Op::Query | Op::Continuation => c == b'&' || c == b'=',
            _ => false,
        }
    }
}

/// A compiled template part.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(String),
    Expr { op: Op, vars: Vec<String> },
}

/// Why a template failed to parse. Positions are byte offsets into the template.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TemplateError {
    /// The template is longer than [`MAX_TEMPLATE_LEN`].
    #[error("URI template is {len} bytes, more than the {max} allowed")]
    TooLong {
        /// The template's length.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// A `{` without its `}` (or with another `{` before it).
    #[error("unclosed expression at byte {at}")]
    UnclosedExpression {
        /// Where the expression starts.
        at: usize,
    },
    /// A `}` outside an expression.
    #[error("unmatched '}}' at byte {at}")]
    UnmatchedClose {
        /// Where the brace is.
        at: usize,
    },
    /// `{}`.
    #[error("empty expression at byte {at}")]
    EmptyExpression {
        /// Where the expression starts.
        at: usize,
    },
    /// A variable name that is empty or has characters other than letters, digits, `_`,
    /// percent-encoded triplets and inner dots.
    #[error("invalid variable name {name:?} in the expression at byte {at}")]
    InvalidVariableName {
        /// The name as written.
        name: String,
        /// Where the expression starts.
        at: usize,
    },
    /// An operator RFC 6570 reserves for future extensions (`=`, `,`, `!`, `@`, `|`).
    #[error("reserved operator '{op}' in the expression at byte {at}")]
    ReservedOperator {
        /// The operator.
        op: char,
        /// Where the expression starts.
        at: usize,
    },
    /// A level-4 modifier (`:n` prefix or `*` explode): only levels 1–3 are supported.
    #[error(
        "level-4 modifier '{modifier}' on variable {name:?} at byte {at} is not supported \
         (levels 1-3 only)"
    )]
    UnsupportedModifier {
        /// `:` or `*`.
        modifier: char,
        /// The variable it modifies.
        name: String,
        /// Where the expression starts.
        at: usize,
    },
    /// A character not allowed in a template literal (controls, space, `"'<>\^`|`).
    #[error("character {ch:?} is not allowed in a template literal (byte {at})")]
    InvalidLiteral {
        /// The character.
        ch: char,
        /// Where it is.
        at: usize,
    },
    /// A `%` in a literal that does not start a percent-encoded triplet.
    #[error("invalid percent-encoding at byte {at}")]
    InvalidPercentEncoding {
        /// Where the `%` is.
        at: usize,
    },
}

/// A parsed RFC 6570 URI template (levels 1–3). See the [module docs](self) for the syntax
/// and the matching rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UriTemplate {
    source: String,
    parts: Vec<Part>,
    names: Vec<String>,
    max_uri_len: usize,
}

impl UriTemplate {
    /// Parses and compiles a template.
    pub fn parse(template: &str) -> Result<Self, TemplateError> {
        if template.len() > MAX_TEMPLATE_LEN {
            return Err(TemplateError::TooLong {
                len: template.len(),
                max: MAX_TEMPLATE_LEN,
            });
        }
        let bytes = template.as_bytes();
        let mut parts = Vec::new();
        let mut names: Vec<String> = Vec::new();
        let mut literal = String::new();
        let mut i = 0;
        while let Some(ch) = template.get(i..).and_then(|rest| rest.chars().next()) {
            match ch {
                '{' => {
                    let body_start = i + 1;
                    let close = template[body_start..]
                        .find(['{', '}'])
                        .map(|off| body_start + off)
                        .filter(|&c| bytes[c] == b'}')
                        .ok_or(TemplateError::UnclosedExpression { at: i })?;
                    let (op, vars) = parse_expression(&template[body_start..close], i)?;
                    for v in &vars {
                        if !names.contains(v) {
                            names.push(v.clone());
                        }
                    }
                    if !literal.is_empty() {
                        parts.push(Part::Literal(std::mem::take(&mut literal)));
                    }
                    parts.push(Part::Expr { op, vars });
                    i = close + 1;
                }
                '}' => return Err(TemplateError::UnmatchedClose { at: i }),
                '%' => {
                    if !is_hex_pair(&bytes[i + 1..]) {
                        return Err(TemplateError::InvalidPercentEncoding { at: i });
                    }
                    literal.push_str(&template[i..i + 3]);
                    i += 3;
                }
                c if c.is_control() || " \"'<>\\^`|".contains(c) => {
                    return Err(TemplateError::InvalidLiteral { ch: c, at: i });
                }
                c => {
                    literal.push(c);
                    i += c.len_utf8();
                }
            }
        }
        if !literal.is_empty() {
            parts.push(Part::Literal(literal));
        }
        Ok(Self {
            source: template.to_owned(),
            parts,
            names,
            max_uri_len: DEFAULT_MAX_URI_LEN,
        })
    }

    /// Sets the longest URI [`matches`](Self::matches) considers; longer URIs never match.
    #[must_use]
    pub fn with_max_uri_len(mut self, max: usize) -> Self {
        self.max_uri_len = max;
        self
    }

    /// The longest URI [`matches`](Self::matches) considers.
    pub fn max_uri_len(&self) -> usize {
        self.max_uri_len
    }

    /// The template as written.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// The variable names, each once, in order of first appearance (for completions).
    pub fn variables(&self) -> &[String] {
        &self.names
    }

    /// Whether the template has no expressions (it matches exactly one URI).
    pub fn is_literal(&self) -> bool {
        self.names.is_empty() && !self.parts.iter().any(|p| matches!(p, Part::Expr { .. }))
    }

    /// Expands the template with the values `vars` holds; missing variables are undefined
    /// (skipped, as RFC 6570 says).
    pub fn expand<V: Variables + ?Sized>(&self, vars: &V) -> String {
        self.expand_with(|name| vars.get(name))
    }

    /// Expands the template, looking each variable up with `lookup`.
    pub fn expand_with<'a>(&self, lookup: impl Fn(&str) -> Option<&'a str>) -> String {
        let mut out = String::with_capacity(self.source.len() + 16);
        for part in &self.parts {
            match part {
                Part::Literal(l) => out.push_str(l),
                Part::Expr { op, vars } => {
                    let mut first = true;
                    for name in vars {
                        let Some(value) = lookup(name) else { continue };
                        if first {
                            if let Some(p) = op.first() {
                                out.push(char::from(p));
                            }
                            first = false;
                        } else {
                            out.push(char::from(op.sep()));
                        }
                        if op.named() {
                            out.push_str(name);
                            if value.is_empty() {
                                if *op != Op::Params {
                                    out.push('=');
                                }
                                continue;
                            }
                            out.push('=');
                        }
                        encode_into(value, op.allow_reserved(), &mut out);
                    }
                }
            }
        }
        out
    }

    /// Matches `uri` against the template and returns the variable values, percent-decoded,
    /// or `None` when it does not match (see the [module docs](self) for the exact rule).
    pub fn matches(&self, uri: &str) -> Option<Captures> {
        if uri.len() > self.max_uri_len {
            return None;
        }
        let b = uri.as_bytes();
        let n = b.len();
        let mut slots: Vec<Option<String>> = vec![None; self.names.len()];
        // Per variable: in how many expressions it appears, and in how many it was bound. A
        // defined variable expands at every occurrence, so it must be bound at all of them or
        // at none (`{/a}{x}{/a}` never matches `x/a`).
        let mut occurs = vec![0usize; self.names.len()];
        let mut bound = vec![0usize; self.names.len()];
        let mut pos = 0;
        for (idx, part) in self.parts.iter().enumerate() {
            match part {
                Part::Literal(l) => {
                    if !b[pos..].starts_with(l.as_bytes()) {
                        return None;
                    }
                    pos += l.len();
                }
                Part::Expr { op, vars } => {
                    let end = match self.parts.get(idx + 1) {
                        None => n,
                        Some(Part::Literal(l)) if idx + 2 == self.parts.len() => {
                            let anchor = n.checked_sub(l.len())?;
                            if anchor < pos || !b[anchor..].starts_with(l.as_bytes()) {
                                return None;
                            }
                            anchor
                        }
                        Some(Part::Literal(l)) => {
                            // `{var}` and `{+var}` match at least one character.
                            let from = match op.first() {
                                None => pos + uri.get(pos..)?.chars().next()?.len_utf8(),
                                Some(_) => pos,
                            };
                            find_literal(uri, from, l)?
                        }
                        Some(Part::Expr { op: next, .. }) => {
                            let start = match op.first() {
                                Some(p) if b.get(pos) == Some(&p) => pos + 1,
                                Some(_) => pos,
                                None => pos,
                            };
                            let stop = next.first();
                            let run = b[start..]
                                .iter()
                                .position(|&c| Some(c) == stop || !op.allows(c, vars.len()))
                                .map_or(n, |off| start + off);
                            if op.first().is_some() && start == pos {
                                pos
                            } else {
                                run
                            }
                        }
                    };
                    let extent = uri.get(pos..end)?;
                    let before: Vec<bool> = vars
                        .iter()
                        .map(|v| self.slot(v).is_some_and(|i| slots[i].is_some()))
                        .collect();
                    let mut local: Vec<Option<String>> = vec![None; self.names.len()];
                    self.capture(*op, vars, extent, &mut local)?;
                    let mut seen = Vec::with_capacity(vars.len());
                    for (name, had) in vars.iter().zip(before) {
                        let i = self.slot(name)?;
                        if seen.contains(&i) {
                            continue;
                        }
                        seen.push(i);
                        occurs[i] += 1;
                        if let Some(value) = local[i].take() {
                            match &slots[i] {
                                Some(prev) if had && *prev != value => return None,
                                _ => slots[i] = Some(value),
                            }
                            bound[i] += 1;
                        }
                    }
                    pos = end;
                }
            }
        }
        if pos != n || occurs.iter().zip(&bound).any(|(o, b)| *b > 0 && b != o) {
            return None;
        }
        let pairs = self
            .names
            .iter()
            .zip(slots)
            .filter_map(|(name, v)| v.map(|v| (name.clone(), v)))
            .collect();
        Some(Captures { pairs })
    }

    /// Splits one expression's match into variables.
    fn capture(
        &self,
        op: Op,
        vars: &[String],
        extent: &str,
        slots: &mut [Option<String>],
    ) -> Option<()> {
        let body = match op.first() {
            None if extent.is_empty() => return None,
            None => extent,
            Some(_) if extent.is_empty() => return Some(()),
            Some(p) => extent.strip_prefix(char::from(p))?,
        };
        if !body.bytes().all(|c| op.allows(c, vars.len())) {
            return None;
        }
        let sep = char::from(op.sep());
        if op.named() {
            let mut seen = vec![false; vars.len()];
            for piece in body.split(sep) {
                let (name, raw) = piece.split_once('=').unwrap_or((piece, ""));
                if raw.contains('=') {
                    return None;
                }
                let i = vars.iter().position(|v| v == name)?;
                if std::mem::replace(&mut seen[i], true) {
                    return None;
                }
                self.bind(name, raw, slots)?;
            }
        } else {
            let mut pieces = body.splitn(vars.len(), sep);
            for name in vars {
                let Some(raw) = pieces.next() else { break };
                if matches!(op, Op::Simple | Op::Path) && raw.contains(sep) {
                    return None;
                }
                self.bind(name, raw, slots)?;
            }
        }
        Some(())
    }

    /// The index of a variable in `names`.
    fn slot(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n == name)
    }

    fn bind(&self, name: &str, raw: &str, slots: &mut [Option<String>]) -> Option<()> {
        let value = percent_decode(raw)?;
        let i = self.names.iter().position(|n| n == name)?;
        match &slots[i] {
            Some(prev) if *prev != value => None,
            _ => {
                slots[i] = Some(value);
                Some(())
            }
        }
    }
}

fn parse_expression(body: &str, at: usize) -> Result<(Op, Vec<String>), TemplateError> {
    let mut chars = body.chars();
    let op = match chars.next() {
        None => return Err(TemplateError::EmptyExpression { at }),
        Some('+') => Op::Reserved,
        Some('#') => Op::Fragment,
        Some('.') => Op::Label,
        Some('/') => Op::Path,
        Some(';') => Op::Params,
        Some('?') => Op::Query,
        Some('&') => Op::Continuation,
        Some(c @ ('=' | ',' | '!' | '@' | '|')) => {
            return Err(TemplateError::ReservedOperator { op: c, at });
        }
        Some(_) => Op::Simple,
    };
    let list = if op == Op::Simple {
        body
    } else {
        chars.as_str()
    };
    let mut vars = Vec::new();
    for spec in list.split(',') {
        let (name, modifier) = if let Some(name) = spec.strip_suffix('*') {
            (name, Some('*'))
        } else if let Some((name, _)) = spec.split_once(':') {
            (name, Some(':'))
        } else {
            (spec, None)
        };
        if !valid_varname(name) {
            return Err(TemplateError::InvalidVariableName {
                name: spec.to_owned(),
                at,
            });
        }
        if let Some(modifier) = modifier {
            return Err(TemplateError::UnsupportedModifier {
                modifier,
                name: name.to_owned(),
                at,
            });
        }
        vars.push(name.to_owned());
    }
    Ok((op, vars))
}

/// `varname = varchar *( ["."] varchar )`, `varchar = ALPHA / DIGIT / "_" / pct-encoded`.
fn valid_varname(name: &str) -> bool {
    let b = name.as_bytes();
    if b.is_empty() || b[0] == b'.' || b[b.len() - 1] == b'.' {
        return false;
    }
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            c if c.is_ascii_alphanumeric() || c == b'_' => i += 1,
            b'.' if b[i - 1] != b'.' => i += 1,
            b'%' if is_hex_pair(&b[i + 1..]) => i += 3,
            _ => return false,
        }
    }
    true
}

/// Percent-encodes `value` into `out`: unreserved characters pass; with `allow_reserved`,
/// reserved characters and existing percent-encoded triplets pass too.
fn encode_into(value: &str, allow_reserved: bool, out: &mut String) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let b = value.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if is_unreserved(c) || (allow_reserved && is_reserved(c)) {
            out.push(char::from(c));
        } else if allow_reserved && c == b'%' && is_hex_pair(&b[i + 1..]) {
            out.push_str(&value[i..i + 3]);
            i += 3;
            continue;
        } else {
            out.push('%');
            out.push(char::from(HEX[usize::from(c >> 4)]));
            out.push(char::from(HEX[usize::from(c & 0xF)]));
        }
        i += 1;
    }
}

/// Decodes percent-encoded triplets; `None` on an invalid escape or invalid UTF-8.
fn percent_decode(raw: &str) -> Option<String> {
    if !raw.contains('%') {
        return Some(raw.to_owned());
    }
    let b = raw.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = b.get(i + 1..i + 3)?;
            let s = std::str::from_utf8(hex).ok()?;
            out.push(u8::from_str_radix(s, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

impl fmt::Display for UriTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

impl FromStr for UriTemplate {
    type Err = TemplateError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

impl TryFrom<&str> for UriTemplate {
    type Error = TemplateError;

    fn try_from(s: &str) -> Result<Self, Self::Error> {
        Self::parse(s)
    }
}

/// The variable values a URI matched, percent-decoded, in template order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Captures {
    pairs: Vec<(String, String)>,
}

impl Captures {
    /// The value of variable `name`, if the URI defined it.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.pairs
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The (name, value) pairs, in template order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.pairs.iter().map(|(n, v)| (n.as_str(), v.as_str()))
    }

    /// How many variables the URI defined.
    pub fn len(&self) -> usize {
        self.pairs.len()
    }

    /// Whether the URI defined no variable.
    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    /// The (name, value) pairs, in template order.
    pub fn into_vec(self) -> Vec<(String, String)> {
        self.pairs
    }
}

impl IntoIterator for Captures {
    type Item = (String, String);
    type IntoIter = std::vec::IntoIter<(String, String)>;

    fn into_iter(self) -> Self::IntoIter {
        self.pairs.into_iter()
    }
}

impl From<Captures> for HashMap<String, String> {
    fn from(c: Captures) -> Self {
        c.pairs.into_iter().collect()
    }
}

/// A source of variable values for [`UriTemplate::expand`]: maps and slices of pairs with
/// string keys and values, and [`Captures`].
pub trait Variables {
    /// The value of variable `name`, or `None` when it is undefined.
    fn get(&self, name: &str) -> Option<&str>;
}

impl<K, V, S> Variables for HashMap<K, V, S>
where
    K: Borrow<str> + Hash + Eq,
    V: AsRef<str>,
    S: BuildHasher,
{
    fn get(&self, name: &str) -> Option<&str> {
        HashMap::get(self, name).map(AsRef::as_ref)
    }
}

impl<K: Borrow<str> + Ord, V: AsRef<str>> Variables for BTreeMap<K, V> {
    fn get(&self, name: &str) -> Option<&str> {
        BTreeMap::get(self, name).map(AsRef::as_ref)
    }
}

impl<K: AsRef<str>, V: AsRef<str>> Variables for [(K, V)] {
    fn get(&self, name: &str) -> Option<&str> {
        self.iter()
            .find(|(k, _)| k.as_ref() == name)
            .map(|(_, v)| v.as_ref())
    }
}

impl<K: AsRef<str>, V: AsRef<str>, const N: usize> Variables for [(K, V); N] {
    fn get(&self, name: &str) -> Option<&str> {
        Variables::get(self.as_slice(), name)
    }
}

impl<K: AsRef<str>, V: AsRef<str>> Variables for Vec<(K, V)> {
    fn get(&self, name: &str) -> Option<&str> {
        Variables::get(self.as_slice(), name)
    }
}

impl Variables for Captures {
    fn get(&self, name: &str) -> Option<&str> {
        Captures::get(self, name)
    }
}
