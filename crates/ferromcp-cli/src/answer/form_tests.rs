//! The form prompts and checks, driven with an in-memory reader and writer.

use super::{Field, fields, is_date, is_date_time, is_email, is_uri, prompt, validate};
use ferromcp_types::mcp::{ElicitAction, ElicitResult, ElicitationSchema};
use serde_json::{Value, json};

fn schema(v: Value) -> Vec<Field> {
    let s: ElicitationSchema = serde_json::from_value(v).unwrap_or_else(|e| unreachable!("{e}"));
    fields(&s)
}

fn signup() -> Vec<Field> {
    schema(json!({
        "type": "object",
        "properties": {
            "a_email": {"type": "string", "format": "email", "title": "Email"},
            "b_age": {"type": "integer", "minimum": 0, "maximum": 150},
            "c_color": {"type": "string", "oneOf": [
                {"const": "r", "title": "Red"}, {"const": "g", "title": "Green"}]},
            "d_agree": {"type": "boolean", "default": false},
            "e_tags": {"type": "array", "items": {"type": "string", "enum": ["x", "y", "z"]},
                       "maxItems": 2},
            "f_size": {"type": "string", "enum": ["s", "l"], "enumNames": ["Small", "Large"]},
            "g_day": {"type": "string", "format": "date"},
            "h_name": {"type": "string", "minLength": 2, "maxLength": 4}
        },
        "required": ["a_email", "b_age", "c_color", "d_agree"]
    }))
}

fn run(fields: &[Field], input: &str) -> (ElicitResult, String) {
    let mut out = Vec::new();
    let r = prompt("Sign up", fields, &mut input.as_bytes(), &mut out)
        .unwrap_or_else(|e| unreachable!("{e}"));
    (r, String::from_utf8_lossy(&out).into_owned())
}

/// B61: every kind of field is asked, an invalid answer is explained and asked again, an
/// empty answer takes the default or leaves an optional field out.
#[test]
fn b61_prompts_validate_and_ask_again() {
    let input = "not-an-email\na@b.co\nabc\n200\n42\nBlue\ngreen\n\nx,x,z\nx , z\nLarge\n2026-02-30\n2024-02-29\nn\nbob\n";
    let (r, out) = run(&signup(), input);
    assert_eq!(r.action, ElicitAction::Accept, "{out}");
    let content = serde_json::to_value(&r.content).unwrap_or_default();
    assert_eq!(
        content,
        json!({"a_email": "a@b.co", "b_age": 42, "c_color": "g", "d_agree": false,
               "e_tags": ["x", "z"], "f_size": "l", "g_day": "2024-02-29", "h_name": "bob"})
    );
    for said in [
        "not an email address",
        "\"abc\" is not a number",
        "more than the maximum 150",
        "\"Blue\" is not one of the options",
        "at most 2 choices",
        "not a date",
        "at least 2 characters",
        "1) Red (r)",
        "Email (a_email)",
        "[default false]",
    ] {
        assert!(out.contains(said), "{said:?} not in:\n{out}");
    }
    assert_eq!(out.matches("try again").count(), 7, "{out}");
}

/// B61: an empty first answer asks accept/decline/cancel; the end of input cancels; a
/// required field is asked until answered.
#[test]
fn b61_empty_first_answer_declines_or_cancels() {
    assert_eq!(run(&signup(), "\nd\n").0.action, ElicitAction::Decline);
    assert_eq!(
        run(&signup(), "\nwhat\ncancel\n").0.action,
        ElicitAction::Cancel
    );
    assert_eq!(run(&signup(), "").0.action, ElicitAction::Cancel);
    assert_eq!(run(&signup(), "a@b.co\n").0.action, ElicitAction::Cancel);
    let optional = schema(json!({"type": "object", "properties": {
        "n": {"type": "number", "default": 1.5}, "s": {"type": "string"}}}));
    let (r, out) = run(&optional, "\na\n\n");
    assert_eq!(r.action, ElicitAction::Accept, "{out}");
    assert_eq!(
        serde_json::to_value(&r.content).unwrap_or_default(),
        json!({"n": 1.5})
    );
    let required = schema(
        json!({"type": "object", "properties": {"s": {"type": "string"}},
        "required": ["s"]}),
    );
    let (r, out) = run(&required, "\na\n\nok\n");
    assert!(out.contains("a value is required"), "{out}");
    assert_eq!(
        serde_json::to_value(&r.content).unwrap_or_default(),
        json!({"s": "ok"})
    );
}

/// C45: the message, titles, descriptions and option titles a server sends cannot drive
/// the terminal (no ESC, CR, BEL or C1 control reaches it).
#[test]
fn c45_prompts_neutralise_server_text() {
    let hostile = schema(json!({"type": "object", "properties": {
        "k\u{1b}[8m": {"type": "string", "title": "T\u{1b}]0;x\u{07}", "description": "D\r\u{9b}2J",
              "enum": ["v\u{1b}c"], "default": "v\u{1b}c"}}}));
    let mut out = Vec::new();
    let r = prompt(
        "hi\u{1b}[2J\u{1b}[1;1Hfake\u{202e}",
        &hostile,
        &mut "\na\n\n".as_bytes(),
        &mut out,
    )
    .unwrap_or_else(|e| unreachable!("{e}"));
    let out = String::from_utf8_lossy(&out).into_owned();
    assert!(
        !out.chars()
            .any(|c| c.is_control() && c != '\n' || c == '\u{202e}'),
        "{out:?}"
    );
    assert!(out.contains("hi\\x1b[2J\\x1b[1;1Hfake\\u{202e}"), "{out}");
    assert!(out.contains("T\\x1b]0;x\\x07"), "{out}");
    assert_eq!(r.action, ElicitAction::Accept);
}

/// C46: `--elicit` JSON is checked against the form the server sent: unknown fields, wrong
/// types, values out of range or format, missing required fields are refused with a reason.
#[test]
fn c46_elicit_json_is_checked_against_the_form() {
    let f = signup();
    let ok = json!({"a_email": "a@b.co", "b_age": 3, "c_color": "r", "e_tags": ["y"]});
    let Value::Object(ok) = ok else {
        unreachable!()
    };
    let (content, ignored) = validate(&f, &ok).unwrap_or_else(|e| unreachable!("{e}"));
    assert_eq!(
        content.len(),
        4,
        "d_agree has a default and may be left out"
    );
    assert!(ignored.is_empty());
    let more = json!({"a_email": "a@b.co", "b_age": 3, "c_color": "r", "zz\u{1b}": 1});
    let Value::Object(more) = more else {
        unreachable!()
    };
    let (content, ignored) = validate(&f, &more).unwrap_or_else(|e| unreachable!("{e}"));
    assert_eq!((content.len(), ignored), (3, vec!["zz\\x1b".to_owned()]));
    let bad = [
        (
            json!({"a_email": "nope", "b_age": 3, "c_color": "r"}),
            "not an email",
        ),
        (
            json!({"a_email": "a@b.co", "b_age": 3.5, "c_color": "r"}),
            "not a whole number",
        ),
        (
            json!({"a_email": "a@b.co", "b_age": "3", "c_color": "r"}),
            "is not a whole number",
        ),
        (
            json!({"a_email": "a@b.co", "b_age": -1, "c_color": "r"}),
            "less than the minimum",
        ),
        (
            json!({"a_email": "a@b.co", "b_age": 3, "c_color": "Red"}),
            "not one of",
        ),
        (
            json!({"a_email": "a@b.co", "b_age": 3}),
            "required field \"c_color\" is missing",
        ),
        (
            json!({"a_email": "a@b.co", "b_age": 3, "c_color": "r", "e_tags": ["x", "w"]}),
            "\"w\" is not one of",
        ),
        (
            json!({"a_email": "a@b.co", "b_age": 3, "c_color": "r", "g_day": "31/01/2026"}),
            "not a date",
        ),
        (
            json!({"a_email": "a@b.co", "b_age": 3, "c_color": "r", "h_name": "abcde"}),
            "at most 4",
        ),
    ];
    for (content, why) in bad {
        let Value::Object(content) = content else {
            unreachable!()
        };
        match validate(&f, &content) {
            Err(e) => assert!(e.contains(why), "{e:?} lacks {why:?}"),
            Ok(c) => unreachable!("accepted {c:?}, wanted {why:?}"),
        }
    }
}

#[test]
fn string_formats() {
    assert!(is_date("2024-02-29") && !is_date("2023-02-29") && !is_date("2024-13-01"));
    assert!(!is_date("24-01-01") && !is_date("2024-1-01"));
    for ok in [
        "2026-01-31T12:00:00Z",
        "2026-01-31t23:59:60.123+02:00",
        "2026-01-31T00:00:00-05:30",
    ] {
        assert!(is_date_time(ok), "{ok}");
    }
    for bad in [
        "2026-01-31",
        "2026-01-31T24:00:00Z",
        "2026-01-31T12:00Z",
        "2026-01-31T12:00:00",
        "2026-01-31T12:00:00.Z",
    ] {
        assert!(!is_date_time(bad), "{bad}");
    }
    assert!(
        is_email("a.b+c@example.org")
            && !is_email("a@b")
            && !is_email("@b.c")
            && !is_email("a b@c.d")
    );
    assert!(
        is_uri("https://x.y/z") && is_uri("urn:isbn:1") && !is_uri("no scheme") && !is_uri("1x:y")
    );
}
