//! The text walk against the value walk on generated instances (S139): random JSON texts
//! (numbers spelled many ways, escaped strings and keys, repeated keys, members in any order,
//! whitespace) against schemas that use most keywords; each text must get the verdict and
//! the errors its parsed value gets. A small fixed-seed generator: reproducible, no
//! dependency.

use crate::support::{compile, same_on_text};
use serde_json::{Value, json};

/// xorshift64*: enough randomness for shapes.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next() % n as u64).unwrap()
    }

    fn pick<'a>(&mut self, options: &[&'a str]) -> &'a str {
        options[self.below(options.len())]
    }
}

const NUMBERS: &[&str] = &[
    "0",
    "-0",
    "1",
    "-1",
    "1.50",
    "1.5",
    "2.0",
    "2",
    "1e0",
    "1E2",
    "0.5",
    "3",
    "-7.25",
    "1e-2",
    "18446744073709551615",
    "-9223372036854775808",
    "123456789012345678901234567890",
    "1e300",
];
const STRINGS: &[&str] = &[
    r#""""#,
    r#""a""#,
    r#""ab""#,
    r#""abc""#,
    r#""abcd""#,
    r#""A1""#,
    r#""\u0061""#,
    r#""a\"b""#,
    r#""é""#,
    r#""\n""#,
    r#""xyz""#,
];
const KEYS: &[&str] = &[
    r#""a""#,
    r#""b""#,
    r#""c""#,
    r#""\u0062""#,
    r#""é""#,
    r#""a/b""#,
    r#""dd""#,
];
const SPACE: &[&str] = &["", "", " ", "\n  "];

fn text(rng: &mut Rng, depth: usize, out: &mut String) {
    let ws = |rng: &mut Rng, out: &mut String| out.push_str(rng.pick(SPACE));
    match rng.below(if depth == 0 { 5 } else { 7 }) {
        0 => out.push_str(rng.pick(&["null", "true", "false"])),
        1 | 2 => out.push_str(rng.pick(NUMBERS)),
        3 | 4 => out.push_str(rng.pick(STRINGS)),
        5 => {
            out.push('[');
            for i in 0..rng.below(4) {
                if i > 0 {
                    out.push(',');
                }
                ws(rng, out);
                text(rng, depth - 1, out);
                ws(rng, out);
            }
            out.push(']');
        }
        _ => {
            out.push('{');
            for i in 0..rng.below(5) {
                if i > 0 {
                    out.push(',');
                }
                ws(rng, out);
                out.push_str(rng.pick(KEYS));
                ws(rng, out);
                out.push(':');
                ws(rng, out);
                text(rng, depth - 1, out);
            }
            ws(rng, out);
            out.push('}');
        }
    }
}

fn schemas() -> Vec<Value> {
    vec![
        json!({"type": "object", "properties": {"a": {"type": "integer", "minimum": 0},
            "b": {"type": "string", "maxLength": 3, "pattern": "^[a-z]*$"}},
            "required": ["a"], "additionalProperties": {"type": ["array", "null"]}}),
        json!({"items": {"anyOf": [{"type": "number", "multipleOf": 0.5}, {"type": "string"},
            {"type": "object", "minProperties": 1}]}, "uniqueItems": true, "maxItems": 2}),
        json!({"enum": [1, "a", [1, 2], {"a": 1}, null, 1.5]}),
        json!({"const": {"a": [1, {"b": 2}]}}),
        json!({"oneOf": [{"type": "object", "required": ["a"]}, {"type": "object", "required": ["b"]}],
            "propertyNames": {"maxLength": 1}, "dependentRequired": {"a": ["c"]}}),
        json!({"not": {"type": "array", "contains": {"const": 1}},
            "if": {"type": "string"}, "then": {"minLength": 2}, "else": {"exclusiveMaximum": 2}}),
        json!({"patternProperties": {"^[ab]$": {"type": "number"}}, "additionalProperties": false,
            "minProperties": 1, "maxProperties": 2}),
        json!({"prefixItems": [{"type": "integer"}, {"type": "string"}], "items": false,
            "contains": {"type": "string"}, "minContains": 1, "maxContains": 1}),
        json!({"type": ["object", "array"], "additionalProperties": {"$ref": "#"},
            "items": {"$ref": "#"}}),
    ]
}

#[test]
fn generated_texts_answer_as_their_values() {
    let schemas: Vec<_> = schemas().into_iter().map(compile).collect();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut invalid = 0;
    for _ in 0..3_000 {
        let mut t = String::new();
        text(&mut rng, 3, &mut t);
        let parsed: Value = serde_json::from_str(&t).unwrap_or_else(|e| panic!("{t}: {e}"));
        for schema in &schemas {
            if same_on_text(schema, &parsed, &t).is_err() {
                invalid += 1;
            }
        }
    }
    // Both verdicts occur, often.
    assert!(invalid > 3_000 && invalid < 24_000, "{invalid}");
}
