//! Evaluating a compiled schema against an instance, within the step, depth and recursion
//! budgets.

use std::cmp::Ordering;

use serde_json::Value;

use super::compile::{Keywords, Node, Types};
use super::error::ValidationError;
use super::instance::{Instance, Items, Kind, Members};
use super::value::{
    TooDeep, cmp_numbers, is_integer, is_multiple_of, json_eq, json_hash, render, truncate,
    type_name,
};

/// Arrays up to this length are checked for `uniqueItems` pairwise, allocating nothing;
/// longer ones by sorting hashes.
const PAIRWISE_UNIQUE: usize = 32;

/// How many `anyOf`/`oneOf` explanations may nest (each re-runs its alternatives once more).
const MAX_EXPLAIN: usize = 3;

/// The longest property name shown in an instance path or message, in bytes.
const MAX_KEY: usize = 64;

/// The budgets of one validation.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Budget {
    pub(crate) max_instance_depth: usize,
    pub(crate) max_steps: u64,
    pub(crate) max_recursion: usize,
    pub(crate) max_errors: usize,
}

/// One step of an instance path, linked to its parent on the stack: no allocation until an
/// error renders it.
#[derive(Clone, Copy)]
pub(crate) enum Seg<'a> {
    Root,
    Key(&'a str),
    Index(usize),
}

/// An instance location.
#[derive(Clone, Copy)]
pub(crate) struct Path<'a> {
    seg: Seg<'a>,
    parent: Option<&'a Path<'a>>,
    depth: usize,
}

impl<'a> Path<'a> {
    pub(crate) const ROOT: Path<'static> = Path {
        seg: Seg::Root,
        parent: None,
        depth: 0,
    };

    fn key(&'a self, key: &'a str) -> Path<'a> {
        Path {
            seg: Seg::Key(key),
            parent: Some(self),
            depth: self.depth + 1,
        }
    }

    fn index(&'a self, i: usize) -> Path<'a> {
        Path {
            seg: Seg::Index(i),
            parent: Some(self),
            depth: self.depth + 1,
        }
    }

    /// The JSON pointer, long keys cut.
    fn render(&self) -> String {
        let mut segs = Vec::with_capacity(self.depth);
        let mut at = Some(self);
        while let Some(p) = at {
            segs.push(p.seg);
            at = p.parent;
        }
        let mut out = String::new();
        for seg in segs.iter().rev() {
            match seg {
                Seg::Root => {}
                Seg::Index(i) => {
                    out.push('/');
                    out.push_str(&i.to_string());
                }
                Seg::Key(k) => {
                    out.push('/');
                    out.push_str(&truncate(k, MAX_KEY).replace('~', "~0").replace('/', "~1"));
                }
            }
        }
        out
    }
}

/// The state of one validation.
pub(crate) struct Evaluator<'s> {
    nodes: &'s [Node],
    budget: Budget,
    steps: u64,
    /// Collect errors (`validate`) or stop at the first failure (`is_valid`, and inside
    /// `anyOf`/`oneOf`/`not`/`if`/`contains`).
    collect: bool,
    pub(crate) errors: Vec<ValidationError>,
    pub(crate) truncated: bool,
    /// A limit was hit: the validation fails with this error, whatever `not` or `anyOf` say.
    pub(crate) fatal: Option<ValidationError>,
    /// How many `anyOf`/`oneOf` explanations are in progress: each re-runs its alternatives,
    /// so nesting them is capped at [`MAX_EXPLAIN`].
    explaining: usize,
}

fn error(path: &Path<'_>, keyword: &'static str, message: String) -> ValidationError {
    ValidationError {
        instance_path: path.render(),
        keyword,
        message,
    }
}

fn quoted(s: &str) -> String {
    render(&Value::String(s.to_owned()))
}

impl<'s> Evaluator<'s> {
    pub(crate) fn new(nodes: &'s [Node], budget: Budget, collect: bool) -> Self {
        Self {
            nodes,
            budget,
            steps: 0,
            collect,
            errors: Vec::new(),
            truncated: false,
            fatal: None,
            explaining: 0,
        }
    }

    /// Whether to go on after a failure: only when collecting, with room, and no limit hit.
    fn keep_going(&self) -> bool {
        self.collect && self.fatal.is_none() && self.errors.len() < self.budget.max_errors
    }

    /// Records a failure (when collecting) and says whether to go on.
    fn report(
        &mut self,
        path: &Path<'_>,
        keyword: &'static str,
        message: impl FnOnce() -> String,
    ) -> bool {
        if self.collect && self.fatal.is_none() {
            if self.errors.len() < self.budget.max_errors {
                self.errors.push(error(path, keyword, message()));
            }
            // Full: validation stops here, and there may be more to say.
            self.truncated |= self.errors.len() >= self.budget.max_errors;
        }
        self.keep_going()
    }

    /// Counts `steps` against the budget; `false` (and the validation fails) when it is spent.
    #[inline]
    fn charge(&mut self, steps: u64, path: &Path<'_>) -> bool {
        self.steps = self.steps.saturating_add(steps);
        if self.steps <= self.budget.max_steps {
            return true;
        }
        self.spent(path)
    }

    #[cold]
    fn spent(&mut self, path: &Path<'_>) -> bool {
        let max = self.budget.max_steps;
        self.abort(
            path,
            "maxSteps",
            format!("validation needs more than {max} steps"),
        )
    }

    fn abort(&mut self, path: &Path<'_>, keyword: &'static str, message: String) -> bool {
        if self.fatal.is_none() {
            self.fatal = Some(error(path, keyword, message));
        }
        false
    }

    /// Evaluates `inst` in bool mode, whatever the current mode.
    fn probe<'i, I: Instance<'i>>(
        &mut self,
        node: usize,
        inst: I,
        path: &Path<'_>,
        rec: usize,
    ) -> bool {
        let collect = std::mem::replace(&mut self.collect, false);
        let ok = self.eval(node, inst, path, rec);
        self.collect = collect;
        ok
    }

    /// Whether `inst` at `path` matches node `node`; `rec` is the recursion depth.
    pub(crate) fn eval<'i, I: Instance<'i>>(
        &mut self,
        node: usize,
        inst: I,
        path: &Path<'_>,
        rec: usize,
    ) -> bool {
        if !self.charge(1, path) {
            return false;
        }
        if rec > self.budget.max_recursion {
            let max = self.budget.max_recursion;
            return self.abort(
                path,
                "maxRecursion",
                format!("schema recursion deeper than {max} levels"),
            );
        }
        if path.depth > self.budget.max_instance_depth {
            let max = self.budget.max_instance_depth;
            return self.abort(
                path,
                "maxDepth",
                format!("value nested deeper than {max} levels"),
            );
        }
        let kw = match self.nodes.get(node) {
            Some(Node::Schema(kw)) => &**kw,
            Some(Node::Bool(true)) => return true,
            Some(Node::Bool(false)) | None => {
                self.report(path, "false", || "no value is allowed here".to_owned());
                return false;
            }
        };
        let kind = inst.kind();
        if let Kind::Malformed = kind {
            return self.abort(path, "json", "not valid JSON".to_owned());
        }
        let rec = rec + 1;
        let mut valid = true;
        macro_rules! fail {
            ($kw:expr, $msg:expr) => {{
                valid = false;
                if !self.report(path, $kw, || $msg) {
                    return false;
                }
            }};
        }
        macro_rules! sub {
            ($node:expr, $inst:expr, $path:expr) => {{
                if !self.eval($node, $inst, $path, rec) {
                    valid = false;
                    if !self.keep_going() {
                        return false;
                    }
                }
            }};
        }
        if let Some(types) = kw.types
            && !type_matches(types, &kind)
        {
            self.report(path, "type", || {
                format!("expected {}, got {}", types.describe(), type_name(&kind))
            });
            // Nothing else is worth saying about a value of the wrong type.
            return false;
        }
        if let Some(target) = kw.reference {
            sub!(target, inst, path);
        }
        let depth_left = self.budget.max_instance_depth.saturating_sub(path.depth);
        if let Some(c) = &kw.const_value {
            match json_eq(c, inst, depth_left) {
                Ok(true) => {}
                Ok(false) => fail!(
                    "const",
                    format!("expected {}, got {}", render(c), inst.render())
                ),
                Err(TooDeep) => return self.too_deep(path),
            }
        }
        if let Some(values) = &kw.enum_values {
            if !self.charge(values.len() as u64, path) {
                return false;
            }
            let mut found = false;
            for v in values {
                match json_eq(v, inst, depth_left) {
                    Ok(true) => {
                        found = true;
                        break;
                    }
                    Ok(false) => {}
                    Err(TooDeep) => return self.too_deep(path),
                }
            }
            if !found {
                fail!(
                    "enum",
                    format!("expected one of {}, got {}", list(values), inst.render())
                );
            }
        }
        // By reference: an object's members are kept in place, not moved again.
        match &kind {
            Kind::Number(n) => {
                let check = |bound: &Option<serde_json::Number>, ok: fn(Ordering) -> bool| {
                    bound
                        .as_ref()
                        .filter(|b| !cmp_numbers(n, b).is_some_and(ok))
                        .cloned()
                };
                if let Some(b) = check(&kw.minimum, Ordering::is_ge) {
                    fail!("minimum", format!("must be >= {b}, got {n}"));
                }
                if let Some(b) = check(&kw.exclusive_minimum, Ordering::is_gt) {
                    fail!("exclusiveMinimum", format!("must be > {b}, got {n}"));
                }
                if let Some(b) = check(&kw.maximum, Ordering::is_le) {
                    fail!("maximum", format!("must be <= {b}, got {n}"));
                }
                if let Some(b) = check(&kw.exclusive_maximum, Ordering::is_lt) {
                    fail!("exclusiveMaximum", format!("must be < {b}, got {n}"));
                }
                if let Some(m) = &kw.multiple_of
                    && !is_multiple_of(n, m)
                {
                    fail!("multipleOf", format!("must be a multiple of {m}, got {n}"));
                }
            }
            Kind::String(s) => {
                // Length and pattern checks are linear in the string.
                let has_checks =
                    kw.min_length.is_some() || kw.max_length.is_some() || kw.pattern.is_some();
                if has_checks && !self.charge(s.len() as u64 / 64, path) {
                    return false;
                }
                if kw.min_length.is_some() || kw.max_length.is_some() {
                    let len = s.chars().count() as u64;
                    if let Some(min) = kw.min_length.filter(|m| len < *m) {
                        fail!(
                            "minLength",
                            format!("must be at least {min} characters long, got {len}")
                        );
                    }
                    if let Some(max) = kw.max_length.filter(|m| len > *m) {
                        fail!(
                            "maxLength",
                            format!("must be at most {max} characters long, got {len}")
                        );
                    }
                }
                if let Some((re, source)) = &kw.pattern
                    && !re.is_match(s)
                {
                    fail!(
                        "pattern",
                        format!("{} does not match the pattern {source}", inst.render())
                    );
                }
            }
            Kind::Array(items) => {
                let len = items.len() as u64;
                if let Some(min) = kw.min_items.filter(|m| len < *m) {
                    fail!(
                        "minItems",
                        format!("must have at least {min} items, got {len}")
                    );
                }
                if let Some(max) = kw.max_items.filter(|m| len > *m) {
                    fail!(
                        "maxItems",
                        format!("must have at most {max} items, got {len}")
                    );
                }
                for (i, (item, node)) in items.iter().zip(&kw.prefix_items).enumerate() {
                    sub!(*node, item, &path.index(i));
                }
                if let Some(node) = kw.items {
                    let start = kw.prefix_items.len();
                    if matches!(self.nodes.get(node), Some(Node::Bool(false))) {
                        if items.len() > start {
                            fail!(
                                "items",
                                format!("must have at most {start} items, got {len}")
                            );
                        }
                    } else {
                        for (i, item) in items.iter().enumerate().skip(start) {
                            sub!(node, item, &path.index(i));
                        }
                    }
                }
                if let Some(node) = kw.contains {
                    let mut matched = 0u64;
                    for (i, item) in items.iter().enumerate() {
                        if self.probe(node, item, &path.index(i), rec) {
                            matched += 1;
                        }
                        if self.fatal.is_some() {
                            return false;
                        }
                    }
                    let min = kw.min_contains.unwrap_or(1);
                    if matched < min {
                        fail!(
                            "contains",
                            format!("must contain at least {min} matching items, got {matched}")
                        );
                    }
                    if let Some(max) = kw.max_contains.filter(|m| matched > *m) {
                        fail!(
                            "maxContains",
                            format!("must contain at most {max} matching items, got {matched}")
                        );
                    }
                }
                if kw.unique_items {
                    match self.duplicates::<I>(items, depth_left, path) {
                        Ok(None) => {}
                        Ok(Some((a, b))) => {
                            fail!("uniqueItems", format!("items {a} and {b} are equal"))
                        }
                        Err(TooDeep) => return self.too_deep(path),
                    }
                    if self.fatal.is_some() {
                        return false;
                    }
                }
            }
            Kind::Object(map) => {
                if !self.object(kw, inst, map, path, rec) {
                    valid = false;
                    if !self.keep_going() {
                        return false;
                    }
                }
            }
            Kind::Null | Kind::Bool(_) | Kind::Malformed => {}
        }
        for &node in &kw.all_of {
            sub!(node, inst, path);
        }
        if !kw.any_of.is_empty() {
            let mut any = false;
            for &node in &kw.any_of {
                any = self.probe(node, inst, path, rec);
                if self.fatal.is_some() {
                    return false;
                }
                if any {
                    break;
                }
            }
            if !any {
                valid = false;
                if !self.explain(&kw.any_of, "anyOf", inst, path, rec) {
                    return false;
                }
            }
        }
        if !kw.one_of.is_empty() {
            let mut first = None;
            let mut second = None;
            for (i, &node) in kw.one_of.iter().enumerate() {
                let ok = self.probe(node, inst, path, rec);
                if self.fatal.is_some() {
                    return false;
                }
                if ok {
                    if first.is_none() {
                        first = Some(i);
                    } else {
                        second = Some(i);
                        break;
                    }
                }
            }
            match (first, second) {
                (Some(a), Some(b)) => fail!(
                    "oneOf",
                    format!("matches more than one alternative of oneOf (#{a} and #{b})")
                ),
                (None, _) => {
                    valid = false;
                    if !self.explain(&kw.one_of, "oneOf", inst, path, rec) {
                        return false;
                    }
                }
                _ => {}
            }
        }
        if let Some(node) = kw.not {
            let matched = self.probe(node, inst, path, rec);
            if self.fatal.is_some() {
                return false;
            }
            if matched {
                fail!("not", "must not match the schema in not".to_owned());
            }
        }
        if let Some(cond) = kw.if_ {
            let matched = self.probe(cond, inst, path, rec);
            if self.fatal.is_some() {
                return false;
            }
            if let Some(node) = if matched { kw.then_ } else { kw.else_ } {
                sub!(node, inst, path);
            }
        }
        valid
    }

    fn too_deep(&mut self, path: &Path<'_>) -> bool {
        let max = self.budget.max_instance_depth;
        self.abort(
            path,
            "maxDepth",
            format!("value nested deeper than {max} levels"),
        )
    }

    /// The object keywords, in their own frame to keep `eval`'s small.
    fn object<'i, I: Instance<'i>>(
        &mut self,
        kw: &Keywords,
        inst: I,
        map: &I::Object,
        path: &Path<'_>,
        rec: usize,
    ) -> bool {
        let mut valid = true;
        macro_rules! fail {
            ($kw:expr, $msg:expr) => {{
                valid = false;
                if !self.report(path, $kw, || $msg) {
                    return false;
                }
            }};
        }
        let len = map.len() as u64;
        if let Some(min) = kw.min_properties.filter(|m| len < *m) {
            fail!(
                "minProperties",
                format!("must have at least {min} properties, got {len}")
            );
        }
        if let Some(max) = kw.max_properties.filter(|m| len > *m) {
            fail!(
                "maxProperties",
                format!("must have at most {max} properties, got {len}")
            );
        }
        let checks = kw.required.len() + kw.dependent_required.len();
        if !self.charge(checks as u64, path) {
            return false;
        }
        for name in &kw.required {
            if !map.contains_key(name) {
                fail!(
                    "required",
                    format!("missing required property {}", quoted(name))
                );
            }
        }
        for (name, needed) in &kw.dependent_required {
            if map.contains_key(name) {
                if !self.charge(needed.len() as u64, path) {
                    return false;
                }
                for other in needed {
                    if !map.contains_key(other) {
                        fail!(
                            "dependentRequired",
                            format!(
                                "property {} requires property {}",
                                quoted(name),
                                quoted(other)
                            )
                        );
                    }
                }
            }
        }
        if kw.walks_members() {
            let closed = kw
                .additional_properties
                .filter(|n| matches!(self.nodes.get(*n), Some(Node::Bool(false))));
            for (key, value) in map.iter() {
                // Each property name is matched against every pattern.
                if !self.charge(kw.pattern_properties.len() as u64, path) {
                    return false;
                }
                let child = path.key(key);
                let mut matched = false;
                let mut ok = true;
                if let Ok(i) = kw.properties.binary_search_by(|(n, _)| n.as_str().cmp(key)) {
                    matched = true;
                    if let Some((_, node)) = kw.properties.get(i) {
                        ok &= self.eval(*node, value, &child, rec);
                    }
                }
                for (re, node) in &kw.pattern_properties {
                    if (ok || self.keep_going()) && re.is_match(key) {
                        matched = true;
                        ok &= self.eval(*node, value, &child, rec);
                    }
                }
                if !matched && (ok || self.keep_going()) {
                    if closed.is_some() {
                        ok = false;
                        self.report(path, "additionalProperties", || {
                            format!("unexpected property {}", quoted(&truncate(key, MAX_KEY)))
                        });
                    } else if let Some(node) = kw.additional_properties {
                        ok &= self.eval(node, value, &child, rec);
                    }
                }
                if let Some(node) = kw.property_names
                    && (ok || self.keep_going())
                    && !self.probe(node, &Value::String(key.to_owned()), path, rec)
                {
                    ok = false;
                    if self.fatal.is_none() {
                        self.report(path, "propertyNames", || {
                            format!(
                                "property name {} is not allowed",
                                quoted(&truncate(key, MAX_KEY))
                            )
                        });
                    }
                }
                if !ok {
                    valid = false;
                    if !self.keep_going() {
                        return false;
                    }
                }
            }
        }
        for (name, node) in &kw.dependent_schemas {
            if map.contains_key(name) && !self.eval(*node, inst, path, rec) {
                valid = false;
                if !self.keep_going() {
                    return false;
                }
            }
        }
        valid
    }

    /// For a failed `anyOf`/`oneOf` in collect mode: says so, then lists the errors of the
    /// alternative that came closest, if any: the one with the fewest errors among those that
    /// got past `type`, `const` and `enum` at this very value. Returns whether to go on.
    fn explain<'i, I: Instance<'i>>(
        &mut self,
        alternatives: &[usize],
        keyword: &'static str,
        inst: I,
        path: &Path<'_>,
        rec: usize,
    ) -> bool {
        let n = alternatives.len();
        if !self.report(path, keyword, || {
            format!("does not match any of the {n} alternatives of {keyword}")
        }) {
            return false;
        }
        if self.explaining >= MAX_EXPLAIN {
            return true;
        }
        self.explaining += 1;
        let here = path.render();
        let outer = std::mem::take(&mut self.errors);
        let truncated = self.truncated;
        let mut best: Option<Vec<ValidationError>> = None;
        for &node in alternatives {
            self.errors = Vec::new();
            self.eval(node, inst, path, rec);
            if self.fatal.is_some() {
                break;
            }
            let errors = std::mem::take(&mut self.errors);
            // A wrong type, constant or enum value right here: another variant altogether.
            let other_variant = errors.iter().any(|e| {
                e.instance_path == here && matches!(e.keyword, "type" | "const" | "enum" | "false")
            });
            if !other_variant && best.as_ref().is_none_or(|b| errors.len() < b.len()) {
                best = Some(errors);
            }
        }
        self.errors = outer;
        self.truncated = truncated;
        self.explaining -= 1;
        for e in best.into_iter().flatten() {
            if self.errors.len() < self.budget.max_errors {
                self.errors.push(e);
            } else {
                self.truncated = true;
            }
        }
        self.keep_going()
    }

    /// The first pair of equal items, if any.
    fn duplicates<'i, I: Instance<'i>>(
        &mut self,
        items: &I::Array,
        depth_left: usize,
        path: &Path<'_>,
    ) -> Result<Option<(usize, usize)>, TooDeep> {
        let n = items.len() as u64;
        if items.len() <= PAIRWISE_UNIQUE {
            if !self.charge(n * n.saturating_sub(1) / 2, path) {
                return Ok(None);
            }
            for (i, a) in items.iter().enumerate() {
                for (j, b) in items.iter().enumerate().skip(i + 1) {
                    if json_eq(a, b, depth_left)? {
                        return Ok(Some((i, j)));
                    }
                }
            }
            return Ok(None);
        }
        if !self.charge(n, path) {
            return Ok(None);
        }
        let mut hashed = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            hashed.push((json_hash(item, depth_left)?, i));
        }
        hashed.sort_unstable();
        let mut start = 0;
        while start < hashed.len() {
            let mut end = start + 1;
            while hashed.get(end).is_some_and(|h| h.0 == hashed[start].0) {
                end += 1;
            }
            let run = hashed.get(start..end).unwrap_or_default();
            for (x, &(_, i)) in run.iter().enumerate() {
                for &(_, j) in run.iter().skip(x + 1) {
                    if !self.charge(1, path) {
                        return Ok(None);
                    }
                    if let (Some(a), Some(b)) = (items.get(i), items.get(j))
                        && json_eq(a, b, depth_left)?
                    {
                        return Ok(Some((i.min(j), i.max(j))));
                    }
                }
            }
            start = end;
        }
        Ok(None)
    }
}

fn type_matches<'i, I: Instance<'i>>(types: Types, kind: &Kind<'i, I>) -> bool {
    let bit = match kind {
        Kind::Null => Types::NULL,
        Kind::Bool(_) => Types::BOOLEAN,
        Kind::Object(_) => Types::OBJECT,
        Kind::Array(_) => Types::ARRAY,
        Kind::String(_) => Types::STRING,
        Kind::Number(n) => {
            return types.0 & Types::NUMBER != 0
                || (types.0 & Types::INTEGER != 0 && is_integer(n));
        }
        Kind::Malformed => return false,
    };
    types.0 & bit != 0
}

/// `"a", "b", "c"`, at most 8 values.
fn list(values: &[Value]) -> String {
    let mut out: Vec<String> = values.iter().take(8).map(render).collect();
    if values.len() > 8 {
        out.push("…".to_owned());
    }
    out.join(", ")
}
