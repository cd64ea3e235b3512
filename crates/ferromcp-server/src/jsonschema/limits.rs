//! Limits on compiling schemas and on validating instances.

/// What [`Schema::compile`](super::Schema::compile) does with a keyword it does not know.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum UnknownKeywordPolicy {
    /// Ignore it, as JSON Schema says (extension keywords, `x-…`, and the unsupported
    /// `unevaluatedProperties`, `unevaluatedItems`, `$dynamicRef` are skipped). The default.
    #[default]
    Ignore,
    /// Reject the schema with [`SchemaError::UnknownKeyword`](super::SchemaError::UnknownKeyword).
    Error,
}

/// What [`Schema::compile`](super::Schema::compile) does with a `pattern` or
/// `patternProperties` regex that the `regex` crate cannot compile (look-around and
/// back-references, which need backtracking, or a pattern over the size limit).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum InvalidPatternPolicy {
    /// Reject the schema with [`SchemaError::InvalidPattern`](super::SchemaError::InvalidPattern).
    /// The default.
    #[default]
    Error,
    /// Drop the keyword: a `pattern` that cannot compile accepts every string, and such a
    /// `patternProperties` entry matches no property name.
    Ignore,
}

/// Caps on schema compilation and on each validation. Every one has a default; set fields
/// directly or through the `with_*` builder methods.
///
/// ```
/// use ferromcp_server::jsonschema::Limits;
/// let limits = Limits::default().with_max_instance_depth(32).with_max_errors(5);
/// assert_eq!(limits.max_instance_depth, 32);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// The deepest instance value a schema may descend to (the root is depth 0). Deeper →
    /// a validation error with keyword `maxDepth`, never a stack overflow. Default 64.
    pub max_instance_depth: usize,
    /// The work budget of one validation. A step is one application of a schema node to an
    /// instance value, one `enum` candidate, one `required` or `dependentRequired` name, one
    /// `patternProperties` regex tried on a property name, one pair of items `uniqueItems`
    /// compares, or 64 bytes of a string checked for length or pattern. Over it → a
    /// validation error with keyword `maxSteps`. Default 1,000,000.
    pub max_steps: u64,
    /// How deep schema evaluation may recurse (applicators and `$ref` hops together), which
    /// bounds `$ref` cycles that do not descend into the instance, such as `{"$ref": "#"}`.
    /// Over it → a validation error with keyword `maxRecursion`. Default 256, which needs
    /// well under 512 KiB of stack even in a debug build (threads get 2 MiB by default).
    pub max_recursion: usize,
    /// The most schema nodes a schema may have: subschemas, the values inside `const` and
    /// `enum`, and the names in `required` and `dependentRequired`. Default 10,000.
    pub max_schema_nodes: usize,
    /// The deepest a schema document may nest subschemas (and `const`/`enum` values). Default 64.
    pub max_schema_depth: usize,
    /// The compiled size limit of each regex, in bytes (`regex::RegexBuilder::size_limit`);
    /// its lazy DFA cache gets the same. Default 256 KiB.
    pub max_regex_size: usize,
    /// The most errors [`Schema::validate`](super::Schema::validate) reports. Default 10.
    pub max_errors: usize,
    /// What to do with unknown keywords. Default: ignore.
    pub unknown_keywords: UnknownKeywordPolicy,
    /// What to do with a regex the `regex` crate cannot compile. Default: error.
    pub invalid_patterns: InvalidPatternPolicy,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_instance_depth: 64,
            max_steps: 1_000_000,
            max_recursion: 256,
            max_schema_nodes: 10_000,
            max_schema_depth: 64,
            max_regex_size: 256 * 1024,
            max_errors: 10,
            unknown_keywords: UnknownKeywordPolicy::Ignore,
            invalid_patterns: InvalidPatternPolicy::Error,
        }
    }
}

impl Limits {
    /// Sets [`max_instance_depth`](Self::max_instance_depth).
    #[must_use]
    pub fn with_max_instance_depth(mut self, depth: usize) -> Self {
        self.max_instance_depth = depth;
        self
    }

    /// Sets [`max_steps`](Self::max_steps).
    #[must_use]
    pub fn with_max_steps(mut self, steps: u64) -> Self {
        self.max_steps = steps;
        self
    }

    /// Sets [`max_recursion`](Self::max_recursion).
    #[must_use]
    pub fn with_max_recursion(mut self, depth: usize) -> Self {
        self.max_recursion = depth;
        self
    }

    /// Sets [`max_schema_nodes`](Self::max_schema_nodes).
    #[must_use]
    pub fn with_max_schema_nodes(mut self, nodes: usize) -> Self {
        self.max_schema_nodes = nodes;
        self
    }

    /// Sets [`max_schema_depth`](Self::max_schema_depth).
    #[must_use]
    pub fn with_max_schema_depth(mut self, depth: usize) -> Self {
        self.max_schema_depth = depth;
        self
    }

    /// Sets [`max_regex_size`](Self::max_regex_size).
    #[must_use]
    pub fn with_max_regex_size(mut self, bytes: usize) -> Self {
        self.max_regex_size = bytes;
        self
    }

    /// Sets [`max_errors`](Self::max_errors).
    #[must_use]
    pub fn with_max_errors(mut self, errors: usize) -> Self {
        self.max_errors = errors;
        self
    }

    /// Sets [`unknown_keywords`](Self::unknown_keywords).
    #[must_use]
    pub fn with_unknown_keywords(mut self, policy: UnknownKeywordPolicy) -> Self {
        self.unknown_keywords = policy;
        self
    }

    /// Sets [`invalid_patterns`](Self::invalid_patterns).
    #[must_use]
    pub fn with_invalid_patterns(mut self, policy: InvalidPatternPolicy) -> Self {
        self.invalid_patterns = policy;
        self
    }
}
