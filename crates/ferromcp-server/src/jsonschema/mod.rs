//! A bounded JSON Schema validator for tool arguments.
//!
//! A tool's input schema is compiled once, when the tool is registered
//! ([`Schema::compile`]), and each call's arguments are checked against it before the handler
//! runs ([`Schema::validate`], or [`Schema::is_valid`] when only the verdict matters).
//!
//! It validates JSON text too, in place ([`Schema::validate_json`],
//! [`Schema::is_valid_json`]): the same verdicts, errors and limits as on the value the text
//! parses to, without building that value. A tool's arguments are checked this way, as the
//! text of the request that carried them. One evaluator walks both, reading the text only
//! where a keyword looks (an object's members, an array's items, a string borrowed when it
//! has no escapes, a number parsed from its slice).
//!
//! It covers JSON Schema 2020-12 as `schemars` 1.x writes it, plus the draft-07 spellings
//! hand-written schemas use (`definitions`, `items` as an array with `additionalItems`,
//! `dependencies`, boolean `exclusiveMinimum`/`exclusiveMaximum`).
//!
//! Everything is bounded, since schemas and instances may be hostile:
//!
//! - `$ref` is resolved at compile time, inside the document only (`#`, `#/$defs/X`,
//!   `#/definitions/X`, any JSON pointer, `#anchor`, or the root's own `$id`). Any other
//!   reference is a compile error: nothing is ever fetched. Reference cycles (a tree type)
//!   compile to index cycles, with no compile-time recursion through them.
//! - Compilation caps schema size and nesting; each regex has a compiled-size cap.
//! - Patterns run on the `regex` crate, whose matching is linear in the input: no ReDoS.
//! - Validation caps instance depth, recursion (`$ref` hops) and total work, and reports
//!   hitting one as a validation error, never a stack overflow or a hang.
//!
//! # Why a second engine
//!
//! `ferromcp-types` has its own schema checks (`ferromcp_types::tables`); they are not this
//! one, on purpose. Those check the protocol's own messages against the vendored MCP schemas,
//! a fixed and trusted input: the generator compiles them at build time into static,
//! pointer-free tables that shape and validate a result in one walk, with no allocation and
//! no run-time parsing; they need only the keywords the MCP schemas use, and no regex. This
//! engine checks schemas that arrive at run time from the application (a tool's input schema,
//! possibly hand-written or taken from elsewhere) against arguments from the client: it must
//! compile any JSON Schema a user may write, with `$ref` resolution, `pattern` on a linear-time
//! regex, and every bound above against hostile schemas and instances. Neither can do the
//! other's job without losing what it is for (build-time tables cannot take a run-time
//! schema; a general run-time engine would cost every protocol message an allocation-heavy
//! walk, and pull `regex` into `ferromcp-types`).
//!
//! Supported keywords: `$ref`, `$defs`/`definitions`, `$anchor`, `type` (a name or an array),
//! `enum`, `const`, `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`,
//! `multipleOf`, `minLength`, `maxLength` (in code points), `pattern`, `items`,
//! `prefixItems`, `additionalItems`, `contains`, `minContains`, `maxContains`, `minItems`,
//! `maxItems`, `uniqueItems`, `properties`, `patternProperties`, `additionalProperties`,
//! `propertyNames`, `required`, `minProperties`, `maxProperties`, `dependentRequired`,
//! `dependentSchemas`, `dependencies`, `allOf`, `anyOf`, `oneOf`, `not`, `if`/`then`/`else`.
//! `format`, `title`, `description`, `default`, `examples` and the like are annotations.
//! Not supported (ignored, like any unknown keyword, unless
//! [`UnknownKeywordPolicy::Error`]): `unevaluatedProperties`, `unevaluatedItems`,
//! `$dynamicRef`/`$recursiveRef`; `format` is never asserted.
//!
//! ```
//! use ferromcp_server::jsonschema::{Limits, Schema};
//! use serde_json::json;
//!
//! let schema = Schema::compile(
//!     &json!({"type": "object", "properties": {"a": {"type": "number"}}, "required": ["a"]}),
//!     &Limits::default(),
//! )
//! .expect("a valid schema");
//! assert!(schema.is_valid(&json!({"a": 1})));
//! let errors = schema.validate(&json!({"a": "x"})).unwrap_err();
//! assert_eq!(errors.to_string(), "invalid arguments: arguments/a: expected number, got string");
//! ```

mod compile;
mod error;
mod instance;
mod limits;
mod validate;
mod value;

use serde_json::Value;

pub use error::{SchemaError, ValidationError, ValidationErrors};
pub use limits::{InvalidPatternPolicy, Limits, UnknownKeywordPolicy};

use compile::Node;
use instance::{Instance, Text};
use validate::{Budget, Evaluator, Path};

/// A compiled JSON Schema: compile once, validate many times. Cheap to share (`Send + Sync`).
#[derive(Debug, Clone)]
pub struct Schema {
    nodes: Vec<Node>,
    root: usize,
    budget: Budget,
}

impl Schema {
    /// Compiles `schema` under `limits`, resolving its local `$ref`s and compiling its
    /// patterns. Fails on a remote or dangling `$ref`, a malformed keyword, a schema over the
    /// size or depth limits, or (by default) a pattern the `regex` crate cannot compile.
    pub fn compile(schema: &Value, limits: &Limits) -> Result<Self, SchemaError> {
        let compiled = compile::compile(schema, limits)?;
        Ok(Self {
            nodes: compiled.nodes,
            root: compiled.root,
            budget: Budget {
                max_instance_depth: limits.max_instance_depth,
                max_steps: limits.max_steps,
                max_recursion: limits.max_recursion,
                max_errors: limits.max_errors.max(1),
            },
        })
    }

    /// Validates `instance`, listing what is wrong (up to
    /// [`Limits::max_errors`] errors). Hitting a limit is an error too (keyword `maxDepth`,
    /// `maxSteps` or `maxRecursion`).
    pub fn validate(&self, instance: &Value) -> Result<(), ValidationErrors> {
        self.run(instance)
    }

    /// [`validate`](Self::validate) on the JSON text of the instance, read in place: the
    /// same verdict, the same errors in the same order and the same limits as on the value
    /// the text parses to, without building that value. A tool's arguments are checked this
    /// way, straight from the request's text.
    ///
    /// `json` must be one well-formed JSON value (whitespace around it is fine), as a
    /// [`RawValue`](serde_json::value::RawValue) or a parsed message's params hold it. Text
    /// that is not is never a panic: where the walk meets the damage, validation fails with
    /// an error of keyword `json` ("not valid JSON"); damage inside a part no keyword reads
    /// goes unnoticed, so check text from elsewhere first.
    ///
    /// ```
    /// use ferromcp_server::jsonschema::{Limits, Schema};
    /// use serde_json::json;
    ///
    /// let schema = Schema::compile(
    ///     &json!({"type": "object", "properties": {"a": {"type": "number"}}}),
    ///     &Limits::default(),
    /// )
    /// .expect("a valid schema");
    /// assert!(schema.validate_json(r#"{"a": 1.50}"#).is_ok());
    /// let errors = schema.validate_json(r#"{"a": "x"}"#).unwrap_err();
    /// assert_eq!(errors.to_string(), "invalid arguments: arguments/a: expected number, got string");
    /// assert_eq!(schema.validate_json(r#"{"a": tru}"#).unwrap_err().errors[0].keyword, "json");
    /// ```
    pub fn validate_json(&self, json: &str) -> Result<(), ValidationErrors> {
        self.run(Text::new(json.trim_matches(JSON_WS)))
    }

    /// [`is_valid`](Self::is_valid) on the JSON text of the instance (see
    /// [`validate_json`](Self::validate_json)): text that is not JSON where the walk reads it
    /// is invalid. Allocates for each array it reads (its items' places), and for an object
    /// of more than 6 members or with keys escaped or out of order.
    pub fn is_valid_json(&self, json: &str) -> bool {
        self.check(Text::new(json.trim_matches(JSON_WS)))
    }

    fn run<'i, I: Instance<'i>>(&self, instance: I) -> Result<(), ValidationErrors> {
        let mut ev = Evaluator::new(&self.nodes, self.budget, true);
        let ok = ev.eval(self.root, instance, &Path::ROOT, 0);
        if let Some(fatal) = ev.fatal {
            let mut errors = ev.errors;
            errors.truncate(self.budget.max_errors.saturating_sub(1));
            errors.push(fatal);
            return Err(ValidationErrors {
                errors,
                truncated: ev.truncated,
            });
        }
        if ok {
            return Ok(());
        }
        let mut errors = ev.errors;
        if errors.is_empty() {
            errors.push(ValidationError {
                instance_path: String::new(),
                keyword: "schema",
                message: "does not match the schema".to_owned(),
            });
        }
        Err(ValidationErrors {
            errors,
            truncated: ev.truncated,
        })
    }

    /// Whether `instance` is valid: stops at the first failure and allocates nothing (except
    /// for `uniqueItems` on arrays of more than 32 items and for `propertyNames`). Hitting a
    /// limit means invalid.
    pub fn is_valid(&self, instance: &Value) -> bool {
        self.check(instance)
    }

    fn check<'i, I: Instance<'i>>(&self, instance: I) -> bool {
        let mut ev = Evaluator::new(&self.nodes, self.budget, false);
        ev.eval(self.root, instance, &Path::ROOT, 0) && ev.fatal.is_none()
    }
}

/// JSON's whitespace, allowed around a value.
const JSON_WS: &[char] = &[' ', '\n', '\r', '\t'];
