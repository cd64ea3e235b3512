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

/// S147: the text walk's short cuts answer as the value does: strings searched for their end
/// in the first word and then by the vectorized search, with a quote, a backslash or an escape
/// at every offset (as values and as keys, so a wrong end shifts every later member); objects
/// of more members than are kept in place, in order, reversed and repeated, and each object
/// again made long; integers at the edges of the short parse (18 and 19 digits, `i64`/`u64`
/// bounds, `-0`).
#[test]
fn s147_short_cuts_answer_as_their_values() {
    let mut texts = Vec::new();
    for len in 0..40 {
        for special in [r#"\""#, r"\\", r"\n", r"\u0041", "é"] {
            for at in [0, len / 2, len] {
                let mut s = "x".repeat(len);
                s.insert_str(at, special);
                texts.push(format!(r#"{{"s":"{s}","n":5}}"#));
                texts.push(format!(r#"{{"{s}":"v","n":5}}"#));
                texts.push(format!(r#"["{s}",5,"{s}"]"#));
            }
        }
        texts.push(format!(r#"{{"s":"{}","n":5}}"#, "y".repeat(len)));
    }
    for n in [7, 8, 9, 12] {
        let keys: Vec<String> = (0..n).map(|i| format!("k{i:02}")).collect();
        let members = |keys: &[String]| -> Vec<String> {
            keys.iter()
                .map(|k| format!(r#""{k}":{}"#, k.len()))
                .collect()
        };
        let ordered = members(&keys);
        let mut reversed = ordered.clone();
        reversed.reverse();
        let mut repeated = ordered.clone();
        repeated.push(r#""k01":"again""#.to_owned());
        let mut escaped = ordered.clone();
        escaped.push(r#""k\u0030":true"#.to_owned());
        for m in [ordered, reversed, repeated, escaped] {
            texts.push(format!("{{{}}}", m.join(",")));
        }
    }
    for n in [
        "0",
        "-0",
        "10",
        "-10",
        "999999999999999999",
        "-999999999999999999",
        "1000000000000000000",
        "-1000000000000000000",
        "9223372036854775807",
        "-9223372036854775808",
        "-9223372036854775809",
        "18446744073709551615",
        "18446744073709551616",
    ] {
        texts.push(n.to_owned());
        texts.push(format!("[{n},{n}]"));
    }
    let schemas: Vec<_> = [
        json!({"type": "object", "properties": {"s": {"type": "string", "maxLength": 20,
            "pattern": "^x*$"}, "n": {"type": "string"}, "k01": {"type": "integer"},
            "k05": {"type": "string"}, "k0": {"type": "boolean"}},
            "required": ["k00", "k08", "k11", "n"], "propertyNames": {"maxLength": 12},
            "additionalProperties": {"type": "string", "minLength": 2}, "maxProperties": 8}),
        json!({"items": {"type": "string", "maxLength": 12}, "uniqueItems": true}),
        json!({"type": "integer", "maximum": 999_999_999_999_999_999_u64,
            "exclusiveMinimum": -999_999_999_999_999_999_i64, "multipleOf": 3}),
        json!({"enum": [999_999_999_999_999_999_u64, -1_000_000_000_000_000_000_i64, -0.0,
            18_446_744_073_709_551_615_u64, [10, 10]]}),
        json!({"items": {"const": -10}, "uniqueItems": true}),
    ]
    .into_iter()
    .map(compile)
    .collect();
    // The same objects made long.
    let long: Vec<String> = texts
        .iter()
        .filter_map(|t| t.strip_prefix('{'))
        .map(|rest| format!(r#"{{"zz":"{}",{rest}"#, "z".repeat(300)))
        .collect();
    for t in texts.iter().chain(&long) {
        let parsed: Value = serde_json::from_str(t).unwrap_or_else(|e| panic!("{t}: {e}"));
        for schema in &schemas {
            let _ = same_on_text(schema, &parsed, t);
        }
    }
    // Digits that are not a JSON number are not read as one.
    for bad in ["01", "-01", "00", "-", "1-", "12a"] {
        let errors = schemas[2].validate_json(bad).unwrap_err();
        assert_eq!(errors.errors[0].keyword, "json", "{bad}");
        assert!(!schemas[2].is_valid_json(bad), "{bad}");
    }
}

/// S149: a string's content as the text walk reads it (borrowed where the walk saw no escape,
/// without scanning it again; unescaped where it has one) is what the value holds: strings
/// without and with an escape (at the start, the middle, the end), short and long (both sides
/// of the 32-byte switch to the vectorized backslash search, and past 256 bytes), as the
/// whole instance, an object's member (kept in place, and past 6 members out of order) and an
/// array's item, against `const`, `enum`, `pattern`, `minLength`/`maxLength` and
/// `uniqueItems` (two spellings of one string).
#[test]
fn s149_string_contents_read_without_a_second_scan_answer_as_their_values() {
    let mut strings = Vec::new();
    for len in [0, 1, 7, 8, 15, 16, 17, 30, 31, 32, 33, 63, 64, 300] {
        strings.push(format!(r#""{}""#, "x".repeat(len)));
        for escape in [r#"\""#, r"\\", r"\n", r"\u0041", r"\/"] {
            for at in [0, len / 2, len] {
                let mut s = "x".repeat(len);
                s.insert_str(at, escape);
                strings.push(format!(r#""{s}""#));
            }
        }
    }
    let filler: String = (0..7).map(|i| format!(r#""k{i}":{i},"#)).collect();
    let mut agreed = 0;
    for s in &strings {
        let value: Value = serde_json::from_str(s).unwrap();
        let content = value.as_str().unwrap();
        let chars = content.chars().count();
        // The same content spelled otherwise: `A` and `/` escaped, or an `x` as `\u0078`.
        let respelled = if content.contains(['A', '/']) {
            serde_json::to_string(content).unwrap()
        } else {
            s.replacen('x', r"\u0078", 1)
        };
        let texts = [
            s.clone(),
            format!(r#"{{"s":{s}}}"#),
            format!(r#"{{"s":{s},{filler}"a":{s}}}"#),
            format!(r#"[{s},"y",{s}]"#),
            format!(r#"[{s},{respelled}]"#),
        ];
        let own = json!({"const": value, "maxLength": chars, "minLength": chars});
        let schemas = [
            own.clone(),
            json!({"properties": {"s": own.clone(), "a": own.clone()}}),
            json!({"items": {"enum": [1, value, "y"]}}),
            json!({"items": {"pattern": "^x*$"}, "uniqueItems": true}),
            json!({"items": {"maxLength": chars.saturating_sub(1)}, "uniqueItems": true}),
            json!({"not": {"const": value}, "minLength": chars + 1}),
        ];
        for text in &texts {
            let parsed: Value =
                serde_json::from_str(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            for schema in &schemas {
                let schema = compile(schema.clone());
                if same_on_text(&schema, &parsed, text).is_ok() {
                    agreed += 1;
                }
            }
        }
        // The string's own schema holds for it, read alone and as a member.
        let own = compile(own);
        assert!(own.validate_json(s).is_ok(), "{s}");
    }
    // Both verdicts occur.
    assert!(agreed > 500 && agreed < strings.len() * 30, "{agreed}");
}
