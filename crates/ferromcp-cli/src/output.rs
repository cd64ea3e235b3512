//! `--output pretty|json|compact`: how a command prints its result on stdout.
//!
//! Every command that prints a result (`call`, `tools`, `tool`, `inspect`, `spec`) prints
//! exactly one: a JSON value (the protocol result of `call` and `tool`, `{"tools": [...]}` for
//! `tools`, the server description for `inspect`, the method tables for `spec`).
//!
//! - `pretty` (the default): for people, exactly as before `--output` existed: `inspect` as
//!   text, every other result as indented JSON.
//! - `json`: the result as indented JSON (two spaces, a final newline); for `inspect` the same
//!   object as its `--json`.
//! - `compact`: the result as JSON on one line, with a final newline: one line per result, for
//!   scripts, `jq` and log files.
//!
//! Only stdout changes: messages, server logs, notifications and progress stay on stderr in
//! their usual form whatever the format.

use serde_json::Value;

/// How results are printed on stdout.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Output {
    /// For people (the default): `inspect` as text, other results as indented JSON.
    #[default]
    Pretty,
    /// The result as indented JSON (`inspect`: the same object as `--json`).
    Json,
    /// The result as JSON on one line (one line per result, for scripts).
    Compact,
}

impl Output {
    /// Whether the result is printed as text for people rather than as JSON (only `inspect`
    /// has such a form; for the other commands `pretty` is indented JSON).
    pub(crate) fn is_text(self) -> bool {
        self == Self::Pretty
    }
}

/// `value` in `format`, with a final newline (`pretty` and `json`: indented JSON; `compact`:
/// one line).
pub(crate) fn render(value: &Value, format: Output) -> Result<String, String> {
    let text = match format {
        Output::Pretty | Output::Json => serde_json::to_string_pretty(value),
        Output::Compact => serde_json::to_string(value),
    };
    let mut text = text.map_err(|e| format!("cannot print the result: {e}"))?;
    text.push('\n');
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::{Output, render};
    use serde_json::json;

    #[test]
    fn formats() {
        let v = json!({"a": [1, 2], "b": "x\ny"});
        let pretty = render(&v, Output::Pretty).unwrap_or_default();
        assert_eq!(
            pretty,
            "{\n  \"a\": [\n    1,\n    2\n  ],\n  \"b\": \"x\\ny\"\n}\n"
        );
        assert_eq!(render(&v, Output::Json).unwrap_or_default(), pretty);
        assert_eq!(
            render(&v, Output::Compact).unwrap_or_default(),
            "{\"a\":[1,2],\"b\":\"x\\ny\"}\n"
        );
    }
}
