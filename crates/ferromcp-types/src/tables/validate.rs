//! Validation of params and results against a revision's schema.

use std::fmt;

use serde_json::{Map, Value};

use super::data::VersionData;
use super::matches;
use super::schema::{
    Additional, Bounds, Key, Lit, Node, NodeId, T_OBJECT, compiled, type_matches, type_name,
    type_names,
};
use crate::ProtocolVersion;

/// Nesting depth (of values and schema references together) beyond which validation gives up.
pub(super) const MAX_DEPTH: u32 = 256;

/// What was validated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Target {
    /// The `params` of a request or notification.
    Params,
    /// The `result` of a request.
    Result,
}

/// Why a value does not match its schema.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParamsErrorKind {
    /// A required field is absent; the error's pointer names the field.
    MissingField {
        /// The name of the missing field.
        field: String,
    },
    /// The value has the wrong JSON type.
    WrongType {
        /// The allowed types, such as `"string or integer"`.
        expected: String,
        /// The type found.
        found: &'static str,
    },
    /// The value is not the constant or not one of the enumerated values the schema allows.
    NotAllowed {
        /// The allowed value(s), as JSON.
        expected: String,
    },
    /// A field the schema forbids (`additionalProperties: false`).
    UnexpectedField {
        /// The name of the field.
        field: String,
    },
    /// A number, string length or array length is out of the allowed range.
    OutOfRange {
        /// The violated bound, such as `"minimum 0"`.
        bound: String,
    },
    /// None of the alternatives of a union (`anyOf`/`oneOf`) fits the value.
    NoMatchingAlternative {
        /// How many alternatives the union has.
        alternatives: usize,
    },
    /// The value is nested too deeply to be checked.
    TooDeep,
}

impl fmt::Display for ParamsErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::MissingField { field } => write!(f, "missing required field {field:?}"),
            Self::WrongType { expected, found } => write!(f, "expected {expected}, found {found}"),
            Self::NotAllowed { expected } => write!(f, "value not allowed, expected {expected}"),
            Self::UnexpectedField { field } => write!(f, "unexpected field {field:?}"),
            Self::OutOfRange { bound } => write!(f, "out of range ({bound})"),
            Self::NoMatchingAlternative { alternatives } => {
                write!(f, "matches none of the {alternatives} allowed shapes")
            }
            Self::TooDeep => f.write_str("nested too deeply to validate"),
        }
    }
}

/// A params (or result) value that does not match the schema of its method at a revision.
///
/// The message names the method, the revision and the JSON pointer of the failing field, e.g.
/// `invalid params of "tools/call" at MCP 2025-06-18: at "/name": missing required field "name"`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid {} of {method:?} at MCP {version}: {}: {kind}",
    target_name(*.target),
    PointerDisplay(pointer)
)]
pub struct ParamsError {
    method: String,
    version: ProtocolVersion,
    target: Target,
    pointer: String,
    kind: ParamsErrorKind,
}

/// `at "/name"`, or `at the top level` for the empty pointer.
struct PointerDisplay<'a>(&'a str);

impl fmt::Display for PointerDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            f.write_str("at the top level")
        } else {
            write!(f, "at {:?}", self.0)
        }
    }
}

fn target_name(target: Target) -> &'static str {
    match target {
        Target::Params => "params",
        Target::Result => "result",
    }
}

impl ParamsError {
    /// The method whose params (or result) failed.
    pub fn method(&self) -> &str {
        &self.method
    }

    /// The revision whose schema was applied.
    pub fn version(&self) -> ProtocolVersion {
        self.version
    }

    /// Whether params or a result failed.
    pub fn target(&self) -> Target {
        self.target
    }

    /// The JSON pointer (RFC 6901) of the failing value inside the params or result; `""` is the
    /// whole value. For a missing field it points at where the field should be.
    pub fn pointer(&self) -> &str {
        &self.pointer
    }

    /// Why the value failed.
    pub fn kind(&self) -> &ParamsErrorKind {
        &self.kind
    }
}

/// Validates the params of `method` (a request or a notification) against the schema of
/// revision `v`. Absent params validate as `{}`.
///
/// A method this revision does not define (a custom method, or a spec method of another
/// revision) passes: whether a method exists is [`exists`](super::exists)'s question, not this
/// one's. Objects accept fields the schema does not list unless it says
/// `additionalProperties: false`; types, required fields, constants and enums are strict.
///
/// ```
/// use ferromcp_types::{ProtocolVersion, tables::validate_params};
/// use serde_json::json;
///
/// let v = ProtocolVersion::V2025_06_18;
/// assert!(validate_params("tools/list", v, None).is_ok());
/// let err = validate_params("tools/call", v, Some(&json!({}))).unwrap_err();
/// assert_eq!(err.pointer(), "/name");
/// assert!(validate_params("acme/custom", v, Some(&json!([1]))).is_ok());
/// ```
pub fn validate_params(
    method: &str,
    v: ProtocolVersion,
    params: Option<&Value>,
) -> Result<(), ParamsError> {
    check(
        compiled(v).params(method),
        method,
        v,
        Target::Params,
        params,
    )
}

/// Validates the params of notification `method` at revision `v`, like [`validate_params`];
/// a method that is not a notification at `v` passes. Whether a failure is fatal is the
/// caller's policy (notifications get no error response).
pub fn validate_notification_params(
    method: &str,
    v: ProtocolVersion,
    params: Option<&Value>,
) -> Result<(), ParamsError> {
    match super::method_kind(method, v) {
        Some(kind) if kind.is_notification() => validate_params(method, v, params),
        _ => Ok(()),
    }
}

/// Validates a `result` of request `method` against the result type of revision `v` (a union
/// where the revision allows several, such as `CallToolResult` or `CreateTaskResult`). A method
/// this revision does not define passes.
pub fn validate_result(
    method: &str,
    v: ProtocolVersion,
    result: &Value,
) -> Result<(), ParamsError> {
    check(
        compiled(v).result(method),
        method,
        v,
        Target::Result,
        Some(result),
    )
}

/// Validates `value` against node `id` of revision `v` (`None`: the revision does not define
/// the method, and anything passes).
pub(super) fn check(
    id: Option<NodeId>,
    method: &str,
    v: ProtocolVersion,
    target: Target,
    value: Option<&Value>,
) -> Result<(), ParamsError> {
    match id {
        Some(id) => run(compiled(v), id, method, v, target, value),
        None => Ok(()),
    }
}

/// [`check`] of JSON text (one value, as a `RawJson` holds it): the text is walked as it is,
/// and parsed into a value only when it does not match, for the error report (`None`: absent
/// params, checked as `{}`).
pub(super) fn check_raw(
    id: Option<NodeId>,
    method: &str,
    v: ProtocolVersion,
    target: Target,
    text: Option<&str>,
) -> Result<(), ParamsError> {
    let (Some(id), Some(text)) = (id, text.map(str::trim)) else {
        return check(id, method, v, target, None);
    };
    if super::raw::matches(compiled(v), id, text, 0) {
        return Ok(());
    }
    match serde_json::from_str::<Value>(text) {
        Ok(value) => run(compiled(v), id, method, v, target, Some(&value)),
        Err(_) => Err(ParamsError {
            method: method.to_owned(),
            version: v,
            target,
            pointer: String::new(),
            kind: ParamsErrorKind::TooDeep,
        }),
    }
}

fn run(
    schemas: &VersionData,
    id: NodeId,
    method: &str,
    version: ProtocolVersion,
    target: Target,
    value: Option<&Value>,
) -> Result<(), ParamsError> {
    // An empty map does not allocate.
    let empty;
    let value = match value {
        Some(value) => value,
        None => {
            empty = Value::Object(Map::new());
            &empty
        }
    };
    // The hot path: a walk that only answers yes or no, with shortcuts (`matches.rs`).
    if matches::matches(schemas, id, value, 0) {
        return Ok(());
    }
    let detailed = Checker {
        c: schemas,
        detail: true,
    };
    detailed.check(id, value, 0).map_err(|failure| ParamsError {
        method: method.to_owned(),
        version,
        target,
        pointer: failure.pointer(),
        kind: failure.kind,
    })
}

/// The plain walk's answer (without [`matches::matches`]), for the tests.
#[cfg(test)]
pub(super) fn plain_ok(c: &VersionData, id: NodeId, value: &Value) -> bool {
    Checker { c, detail: false }.check(id, value, 0).is_ok()
}

/// The error report of `value` against node `id`, for the tests.
#[cfg(test)]
pub(super) fn report(c: &VersionData, id: NodeId, value: &Value) -> Result<(), ParamsError> {
    run(
        c,
        id,
        "test",
        ProtocolVersion::V2025_11_25,
        Target::Result,
        Some(value),
    )
}

/// A path segment, collected innermost first while a failure propagates outwards.
enum Segment {
    Key(String),
    Index(usize),
}

struct Failure {
    /// Innermost segment first.
    path: Vec<Segment>,
    kind: ParamsErrorKind,
}

impl Failure {
    fn new(kind: ParamsErrorKind) -> Self {
        Failure {
            path: Vec::new(),
            kind,
        }
    }

    fn at(mut self, segment: Segment) -> Self {
        self.path.push(segment);
        self
    }

    fn pointer(&self) -> String {
        let mut out = String::new();
        for segment in self.path.iter().rev() {
            out.push('/');
            match segment {
                Segment::Key(k) => out.push_str(&k.replace('~', "~0").replace('/', "~1")),
                Segment::Index(i) => out.push_str(&i.to_string()),
            }
        }
        out
    }
}

/// Walks a value against a schema. Without `detail`, failures carry no message or path, so
/// that trying the branches of a union allocates nothing; the detailed walk runs only once a
/// value is known to fail.
///
/// This is the plain walk of the schema: [`matches::matches`] answers the same question
/// faster, and runs first; the tests compare the two.
struct Checker<'a> {
    c: &'a VersionData,
    detail: bool,
}

impl Checker<'_> {
    fn fail(&self, kind: impl FnOnce() -> ParamsErrorKind) -> Failure {
        Failure::new(if self.detail {
            kind()
        } else {
            ParamsErrorKind::TooDeep
        })
    }

    fn at(&self, failure: Failure, segment: impl FnOnce() -> Segment) -> Failure {
        if self.detail {
            failure.at(segment())
        } else {
            failure
        }
    }

    fn check(&self, id: NodeId, value: &Value, depth: u32) -> Result<(), Failure> {
        if depth > MAX_DEPTH {
            return Err(Failure::new(ParamsErrorKind::TooDeep));
        }
        let node = self.c.node(id);
        if node.never {
            return Err(self.fail(|| ParamsErrorKind::NotAllowed {
                expected: "nothing (the schema is `false`)".into(),
            }));
        }
        if let Some(target) = node.reference {
            self.check(target, value, depth + 1)?;
        }
        if !type_matches(node.types, value) {
            return Err(self.fail(|| ParamsErrorKind::WrongType {
                expected: type_names(node.types),
                found: type_name(value),
            }));
        }
        let c = self.c;
        if let Some(constant) = node.constant
            && !c.lit_matches(&constant, value)
        {
            return Err(self.fail(|| ParamsErrorKind::NotAllowed {
                expected: c.lit_value(constant).to_string(),
            }));
        }
        let bounds = c.bounds_or_none(node);
        if let Some(allowed) = c.enumeration(bounds)
            && !allowed.iter().any(|k| c.lit_matches(k, value))
        {
            return Err(self.fail(|| ParamsErrorKind::NotAllowed {
                expected: format!(
                    "one of {}",
                    Value::Array(allowed.iter().map(|&k| c.lit_value(k)).collect())
                ),
            }));
        }
        match value {
            Value::Number(n) => self.check_number(bounds, n.as_f64())?,
            // Counting characters walks the string: only when there is a bound to check.
            Value::String(s) if bounds.min_length.is_some() || bounds.max_length.is_some() => {
                let (min, max) = (bounds.min_length, bounds.max_length);
                let len = s.chars().count() as u64;
                self.check_len("characters", len, min, max)?;
            }
            Value::String(_) => {}
            Value::Array(items) => {
                let len = items.len() as u64;
                self.check_len("items", len, bounds.min_items, bounds.max_items)?;
                if let Some(item) = node.items {
                    for (i, v) in items.iter().enumerate() {
                        self.check(item, v, depth + 1)
                            .map_err(|f| self.at(f, || Segment::Index(i)))?;
                    }
                }
            }
            Value::Object(map) => self.check_object(node, map, depth)?,
            Value::Null | Value::Bool(_) => {}
        }
        for &part in c.all_of(node) {
            self.check(part, value, depth + 1)?;
        }
        if !node.any_of.is_empty() {
            self.check_any_of(c.any_of(node), value, depth)?;
        }
        Ok(())
    }

    fn check_number(&self, bounds: &Bounds, n: Option<f64>) -> Result<(), Failure> {
        let Some(n) = n else { return Ok(()) };
        if let Some((min, exclusive)) = bounds.minimum
            && (n < min || (exclusive && n == min))
        {
            let word = if exclusive {
                "exclusive minimum"
            } else {
                "minimum"
            };
            return Err(self.fail(|| ParamsErrorKind::OutOfRange {
                bound: format!("{word} {min}"),
            }));
        }
        if let Some((max, exclusive)) = bounds.maximum
            && (n > max || (exclusive && n == max))
        {
            let word = if exclusive {
                "exclusive maximum"
            } else {
                "maximum"
            };
            return Err(self.fail(|| ParamsErrorKind::OutOfRange {
                bound: format!("{word} {max}"),
            }));
        }
        Ok(())
    }

    fn check_len(
        &self,
        what: &str,
        len: u64,
        min: Option<u64>,
        max: Option<u64>,
    ) -> Result<(), Failure> {
        if let Some(min) = min
            && len < min
        {
            return Err(self.fail(|| ParamsErrorKind::OutOfRange {
                bound: format!("at least {min} {what}"),
            }));
        }
        if let Some(max) = max
            && len > max
        {
            return Err(self.fail(|| ParamsErrorKind::OutOfRange {
                bound: format!("at most {max} {what}"),
            }));
        }
        Ok(())
    }

    fn check_object(
        &self,
        node: &Node,
        map: &Map<String, Value>,
        depth: u32,
    ) -> Result<(), Failure> {
        for field in self.c.required(node) {
            let field = self.c.text(field);
            if !map.contains_key(field) {
                let failure = self.fail(|| ParamsErrorKind::MissingField {
                    field: field.to_string(),
                });
                return Err(self.at(failure, || Segment::Key(field.to_string())));
            }
        }
        for (key, value) in map {
            let result = match (self.c.property(node, &Key::new(key)), node.additional) {
                (Some(prop), _) => self.check(prop, value, depth + 1),
                (None, Additional::Schema(extra)) => self.check(extra, value, depth + 1),
                (None, Additional::Never) => {
                    Err(self.fail(|| ParamsErrorKind::UnexpectedField { field: key.clone() }))
                }
                (None, Additional::Absent | Additional::Any) => Ok(()),
            };
            result.map_err(|f| self.at(f, || Segment::Key(key.clone())))?;
        }
        Ok(())
    }

    /// At least one branch must match. Branches are tried quietly; when none matches, the
    /// detailed walk reports the deepest error among the branches whose discriminating
    /// constants fit the value (e.g. the `TextContent` branch for a `"type": "text"` block),
    /// or that nothing fits.
    fn check_any_of(&self, branches: &[NodeId], value: &Value, depth: u32) -> Result<(), Failure> {
        let quiet = Checker {
            c: self.c,
            detail: false,
        };
        if branches
            .iter()
            .any(|&b| quiet.check(b, value, depth + 1).is_ok())
        {
            return Ok(());
        }
        if !self.detail {
            return Err(Failure::new(ParamsErrorKind::TooDeep));
        }
        let mut best: Option<Failure> = None;
        for &branch in branches {
            if !plausible(self.c, branch, Subject::Value(value), depth + 1) {
                continue;
            }
            if let Err(failure) = self.check(branch, value, depth + 1)
                && best
                    .as_ref()
                    .is_none_or(|b| failure.path.len() > b.path.len())
            {
                best = Some(failure);
            }
        }
        Err(best.unwrap_or_else(|| {
            Failure::new(ParamsErrorKind::NoMatchingAlternative {
                alternatives: branches.len(),
            })
        }))
    }
}

/// What [`plausible`] looks at: a value, or an object by its map (shaping holds the map
/// itself, not a `Value` around it).
#[derive(Clone, Copy)]
pub(super) enum Subject<'a> {
    Value(&'a Value),
    Object(&'a Map<String, Value>),
}

impl<'a> Subject<'a> {
    fn type_matches(self, types: u8) -> bool {
        match self {
            Subject::Value(value) => type_matches(types, value),
            Subject::Object(_) => types == 0 || types & T_OBJECT != 0,
        }
    }

    fn is(self, c: &VersionData, constant: Lit) -> bool {
        match self {
            Subject::Value(value) => c.lit_matches(&constant, value),
            // A constant is a scalar.
            Subject::Object(_) => false,
        }
    }

    fn map(self) -> Option<&'a Map<String, Value>> {
        match self {
            Subject::Value(Value::Object(map)) | Subject::Object(map) => Some(map),
            Subject::Value(_) => None,
        }
    }
}

/// Whether a branch could be meant for `value`: its types admit the value and no constant it
/// puts on a property (a discriminator such as `"type": "text"`) contradicts the value.
pub(super) fn plausible(c: &VersionData, id: NodeId, value: Subject<'_>, depth: u32) -> bool {
    plausible_with(c, id, value, depth, true)
}

/// [`plausible`], with or without the shortcuts (the tests compare both).
pub(super) fn plausible_with(
    c: &VersionData,
    id: NodeId,
    value: Subject<'_>,
    depth: u32,
    shortcuts: bool,
) -> bool {
    if depth > MAX_DEPTH {
        return true;
    }
    let node = c.node(id);
    // Shortcuts with the same answer as the plain walk below: an object is plausible where
    // every object is, and a node that is only a `$ref` is its target.
    if shortcuts {
        if node.always_plausible && value.map().is_some() {
            return true;
        }
        if node.pure_ref
            && let Some(target) = node.reference
        {
            return plausible_with(c, target, value, depth + 1, true);
        }
    }
    if node.never || !value.type_matches(node.types) {
        return false;
    }
    if node.constant.is_some_and(|k| !value.is(c, k)) {
        return false;
    }
    if let Some(target) = node.reference
        && !plausible_with(c, target, value, depth + 1, shortcuts)
    {
        return false;
    }
    if !node.all_of.is_empty()
        && c.all_of(node)
            .iter()
            .any(|&p| !plausible_with(c, p, value, depth + 1, shortcuts))
    {
        return false;
    }
    if let Some(map) = value.map() {
        for (name, constant, required) in c.discriminators(node) {
            match c.field(map, name) {
                Some(found) if !c.lit_matches(constant, found) => return false,
                None if *required => return false,
                _ => {}
            }
        }
    }
    node.any_of.is_empty()
        || c.any_of(node)
            .iter()
            .any(|&b| plausible_with(c, b, value, depth + 1, shortcuts))
}
