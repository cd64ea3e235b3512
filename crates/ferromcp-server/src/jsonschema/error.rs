//! Compile errors and validation errors.

use std::fmt;

/// Why a schema could not be compiled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SchemaError {
    /// A `$ref` that is not a fragment of this document (`http:`, `file:`, `urn:`, a relative
    /// URI): such references are never fetched.
    #[error(
        "schema at '{at}': $ref '{reference}' is not local to the document (remote references are never fetched)"
    )]
    RemoteRef {
        /// The reference, as written.
        reference: String,
        /// The JSON pointer of the schema holding it.
        at: String,
    },
    /// A local `$ref` whose target does not exist or is not a schema.
    #[error("schema at '{at}': $ref '{reference}' does not point to a schema in this document")]
    UnresolvedRef {
        /// The reference, as written.
        reference: String,
        /// The JSON pointer of the schema holding it.
        at: String,
    },
    /// The schema has more nodes than [`Limits::max_schema_nodes`](super::Limits::max_schema_nodes).
    #[error("schema has more than {limit} nodes")]
    TooManyNodes {
        /// The limit.
        limit: usize,
    },
    /// The schema nests deeper than [`Limits::max_schema_depth`](super::Limits::max_schema_depth).
    #[error("schema at '{at}' nests deeper than {limit} levels")]
    TooDeep {
        /// The limit.
        limit: usize,
        /// Where the limit was hit.
        at: String,
    },
    /// Something that should be a schema is neither an object nor a boolean.
    #[error("schema at '{at}' is neither an object nor a boolean")]
    NotASchema {
        /// Where.
        at: String,
    },
    /// A keyword whose value is malformed (`"minimum": "5"`, `"multipleOf": 0`, …).
    #[error("schema at '{at}': invalid '{keyword}': {reason}")]
    InvalidKeyword {
        /// The keyword.
        keyword: String,
        /// The JSON pointer of the schema holding it.
        at: String,
        /// What is wrong.
        reason: String,
    },
    /// A regex the `regex` crate cannot compile (look-around, back-references, too big),
    /// under [`InvalidPatternPolicy::Error`](super::InvalidPatternPolicy::Error).
    #[error("schema at '{at}': pattern '{pattern}' cannot be compiled: {reason}")]
    InvalidPattern {
        /// The pattern (cut if long).
        pattern: String,
        /// The JSON pointer of the schema holding it.
        at: String,
        /// The regex compiler's reason.
        reason: String,
    },
    /// An unknown keyword, under
    /// [`UnknownKeywordPolicy::Error`](super::UnknownKeywordPolicy::Error).
    #[error("schema at '{at}': unknown keyword '{keyword}'")]
    UnknownKeyword {
        /// The keyword.
        keyword: String,
        /// The JSON pointer of the schema holding it.
        at: String,
    },
}

/// One reason an instance does not match its schema.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ValidationError {
    /// The JSON pointer of the offending value in the instance (`""` for the root, `/a/0`).
    pub instance_path: String,
    /// The keyword that failed (`type`, `required`, …), or the limit that was hit:
    /// `maxDepth`, `maxSteps` or `maxRecursion`.
    pub keyword: &'static str,
    /// What is wrong, for a human: `expected number, got string`.
    pub message: String,
}

impl fmt::Display for ValidationError {
    /// `arguments/a: expected number, got string` (`arguments: …` at the root).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "arguments{}: {}", self.instance_path, self.message)
    }
}

impl std::error::Error for ValidationError {}

/// The errors of one failed validation: at least one, at most
/// [`Limits::max_errors`](super::Limits::max_errors).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ValidationErrors {
    /// The errors, in the order found.
    pub errors: Vec<ValidationError>,
    /// Whether validation stopped early because `errors` reached
    /// [`Limits::max_errors`](super::Limits::max_errors): there may be more.
    pub truncated: bool,
}

impl ValidationErrors {
    /// The errors.
    pub fn iter(&self) -> std::slice::Iter<'_, ValidationError> {
        self.errors.iter()
    }

    /// How many errors are listed.
    pub fn len(&self) -> usize {
        self.errors.len()
    }

    /// Whether no error is listed (never the case for a value from `validate`).
    pub fn is_empty(&self) -> bool {
        self.errors.is_empty()
    }
}

impl<'a> IntoIterator for &'a ValidationErrors {
    type Item = &'a ValidationError;
    type IntoIter = std::slice::Iter<'a, ValidationError>;

    fn into_iter(self) -> Self::IntoIter {
        self.errors.iter()
    }
}

impl fmt::Display for ValidationErrors {
    /// `invalid arguments: arguments/a: expected number, got string; arguments: missing
    /// required property "b"` (and `; …` when truncated).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("invalid arguments: ")?;
        for (i, e) in self.errors.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{e}")?;
        }
        if self.truncated {
            f.write_str("; …")?;
        }
        Ok(())
    }
}

impl std::error::Error for ValidationErrors {}
