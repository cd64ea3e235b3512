//! The one-pass walk over a result's text (`fit.rs`) against shaping and validation over a
//! value: wherever it says yes, the two walks over the parsed value leave the result as it is
//! and find it valid; and it says yes for the results servers usually send.

use proptest::prelude::*;
use serde_json::{Value, json};

use super::generated::ALL_METHODS;
use super::tests::{object_of, result_like, value};
use crate::ProtocolVersion;

/// Wherever the walk over `value`'s text (compact and pretty) says yes, shaping leaves the
/// value as it is and validation passes, for every method and revision.
fn yes_is_sure(value: &Value) -> Result<(), TestCaseError> {
    let Value::Object(map) = value else {
        return Ok(());
    };
    let texts = [
        value.to_string(),
        serde_json::to_string_pretty(value).unwrap_or_default(),
    ];
    for v in ProtocolVersion::ALL {
        for method in ALL_METHODS {
            let Some(handle) = super::method(method) else {
                continue;
            };
            for text in &texts {
                if handle.result_text_fits(v, text) {
                    let mut shaped = map.clone();
                    let outcome = handle.shape_and_validate_result(v, &mut shaped);
                    prop_assert!(
                        outcome.is_ok(),
                        "{} {} on {}: {:?}",
                        v,
                        method,
                        text,
                        outcome
                    );
                    prop_assert_eq!(&shaped, map, "{} {} on {}", v, method, text);
                }
                if let Some(fitted) = handle.fitted_result_text(v, text) {
                    // The text without its top-level `resultType` at most: what shaping makes
                    // of the value, and valid.
                    let got: Value = serde_json::from_str(&fitted)
                        .map_err(|e| TestCaseError::fail(format!("{fitted}: {e}")))?;
                    let mut shaped = map.clone();
                    let outcome = handle.shape_and_validate_result(v, &mut shaped);
                    prop_assert!(
                        outcome.is_ok(),
                        "{} {} on {}: {:?}",
                        v,
                        method,
                        text,
                        outcome
                    );
                    prop_assert_eq!(&Value::Object(shaped), &got, "{} {} on {}", v, method, text);
                    if !v.is_modern() {
                        prop_assert!(got.get("resultType").is_none(), "{}", fitted);
                    }
                }
            }
        }
    }
    Ok(())
}

proptest! {
    #[test]
    fn a_fitting_result_text_needs_no_shaping_and_is_valid(value in object_of(value())) {
        yes_is_sure(&value)?;
    }

    #[test]
    fn a_fitting_result_like_text_needs_no_shaping_and_is_valid(value in result_like()) {
        yes_is_sure(&value)?;
        let content = json!({ "content": value.get("content") });
        yes_is_sure(&content)?;
        let mut valid = json!({"content": [{"type": "text", "text": "hi"}], "isError": false});
        if let (Value::Object(valid), Value::Object(extra)) = (&mut valid, &value) {
            for (key, field) in extra.iter().take(2) {
                valid.insert(key.clone(), field.clone());
            }
        }
        yes_is_sure(&valid)?;
        for modern in [&mut valid.clone(), &mut json!({"content": value.get("content")})] {
            if let Value::Object(map) = modern {
                map.insert("resultType".into(), json!("complete"));
            }
            yes_is_sure(modern)?;
        }
    }
}

fn fits(method: &str, v: ProtocolVersion, text: &str) -> bool {
    super::method(method).is_some_and(|m| m.result_text_fits(v, text))
}

/// The usual results fit without a detour through a value, at every revision that defines
/// them; what shaping must change, or what is invalid, does not.
#[test]
fn usual_results_fit_and_others_do_not() {
    let info = r#""_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}}"#;
    for v in ProtocolVersion::ALL {
        let stamp = |body: &str| match v.is_modern() {
            true => format!(r#"{{"resultType":"complete",{info},{body}}}"#),
            false => format!("{{{body}}}"),
        };
        let text = stamp(r#""content":[{"type":"text","text":"3\n\"é\""}],"isError":false"#);
        assert!(fits("tools/call", v, &text), "{v}: {text}");
        let pretty = serde_json::to_string_pretty(&serde_json::from_str::<Value>(&text).unwrap());
        assert!(fits("tools/call", v, &pretty.unwrap()), "{v}: pretty");
        let tools = stamp(
            r#""tools":[{"name":"add","inputSchema":{"type":"object","properties":{"a":{"type":"number"}}}}]"#,
        );
        if v.is_modern() {
            let tools = tools.replacen('{', r#"{"ttlMs":0,"cacheScope":"public","#, 1);
            assert!(fits("tools/list", v, &tools), "{v}: {tools}");
        } else {
            assert!(fits("tools/list", v, &tools), "{v}: {tools}");
        }
        // Invalid: a text block without its text; a number where a string goes.
        assert!(!fits(
            "tools/call",
            v,
            &stamp(r#""content":[{"type":"text"}]"#)
        ));
        assert!(!fits(
            "tools/call",
            v,
            &stamp(r#""content":[{"type":"text","text":1}]"#)
        ));
        // Shaping would drop it: an undefined field of a described object.
        assert!(!fits("tools/call", v, &stamp(r#""content":[],"bogus":1"#)));
        let block = r#""content":[{"type":"text","text":"a","bogus":1}]"#;
        assert!(!fits("tools/call", v, &stamp(block)));
    }
    // At 2026-07-28 the `resultType` pin of the branch is checked wherever the member sits
    // (it is checked as the object is walked): a wrong tag, or one of another type, is a no.
    let modern = ProtocolVersion::V2026_07_28;
    for text in [
        r#"{"resultType":"complete","content":[]}"#,
        r#"{"content":[],"resultType":"complete","isError":true}"#,
    ] {
        assert!(fits("tools/call", modern, text), "{text}");
    }
    for text in [
        r#"{"resultType":"completed","content":[]}"#,
        r#"{"content":[],"resultType":"bogus"}"#,
        r#"{"content":[],"resultType":7}"#,
        r#"{"content":[],"resultType":null,"isError":false}"#,
    ] {
        assert!(!fits("tools/call", modern, text), "{text}");
    }
    // Before 2026-07-28, shaping removes `resultType`.
    let v = ProtocolVersion::V2025_11_25;
    assert!(!fits(
        "tools/call",
        v,
        r#"{"content":[],"resultType":"complete"}"#
    ));
    // A newer field at an older revision: `structuredContent` is 2025-06-18's.
    let structured = r#"{"content":[],"structuredContent":{"a":1}}"#;
    assert!(fits("tools/call", ProtocolVersion::V2025_06_18, structured));
    assert!(!fits(
        "tools/call",
        ProtocolVersion::V2025_03_26,
        structured
    ));
    // `_meta` is kept as it is, whatever is inside.
    let meta = r#"{"content":[],"_meta":{"anything":{"bogus":[1,{"x":null}]}}}"#;
    assert!(fits("tools/call", v, meta));
    // A member written twice at the top (a handler's `_meta` and the kernel's).
    let twice = r#"{"content":[],"_meta":{"a":1},"_meta":{"b":2}}"#;
    assert!(!fits("tools/call", v, twice));
    // Not one value: trailing text, truncated text.
    assert!(!fits("tools/call", v, r#"{"content":[]} x"#));
    assert!(!fits("tools/call", v, r#"{"content":["#));
}

fn fitted(method: &str, v: ProtocolVersion, text: &str) -> Option<String> {
    super::method(method)?
        .fitted_result_text(v, text)
        .map(|t| t.into_owned())
}

/// B90: a 2026-07-28 peer's result relayed to a client of an older revision (a gateway's
/// backend answering its handshake-era front) fits once its top-level `resultType` is taken
/// out, wherever it is written; everything else about it must fit as it is.
#[test]
fn a_result_type_is_cut_out_before_2026_07_28() {
    let v = ProtocolVersion::V2025_11_25;
    let content = r#""content":[{"type":"text","text":"5"}]"#;
    let meta = r#""_meta":{"io.modelcontextprotocol/serverInfo":{"name":"b","version":"1"}}"#;
    let rt = r#""resultType":"complete""#;
    let cases = [
        (
            format!("{{{content},{rt},{meta}}}"),
            format!("{{{content},{meta}}}"),
        ),
        (format!("{{{rt},{content}}}"), format!("{{{content}}}")),
        (format!("{{{content},{rt}}}"), format!("{{{content}}}")),
        (
            format!("{{ {content} ,\n {rt} \n}}"),
            format!("{{ {content}  \n}}"),
        ),
        (
            format!(r#"{{{content},"result\u0054ype":"complete"}}"#),
            format!("{{{content}}}"),
        ),
    ];
    for (text, want) in &cases {
        assert_eq!(
            fitted("tools/call", v, text).as_deref(),
            Some(&**want),
            "{text}"
        );
        assert!(!fits("tools/call", v, text), "{text}");
    }
    // The only member: an empty result, which `tools/list` (no required members) is not.
    assert_eq!(
        fitted("ping", v, &format!("{{{rt}}}")).as_deref(),
        Some("{}")
    );
    // Text that fits as it is comes back as it is.
    let plain = format!("{{{content}}}");
    assert!(matches!(
        super::method("tools/call").and_then(|m| m.fitted_result_text(v, &plain)),
        Some(std::borrow::Cow::Borrowed(_))
    ));
    // Written twice; anything else shaping would change; invalid: not sure.
    for text in [
        format!("{{{content},{rt},{rt}}}"),
        format!(r#"{{{content},{rt},"bogus":1}}"#),
        format!(r#"{{"content":[{{"type":"text"}}],{rt}}}"#),
        format!("{{{rt}}}"),
    ] {
        assert_eq!(fitted("tools/call", v, &text), None, "{text}");
    }
    // At 2026-07-28 `resultType` stays: the text fits as it is or not at all.
    let modern = ProtocolVersion::V2026_07_28;
    let text = format!("{{{rt},{meta},{content}}}");
    assert_eq!(fitted("tools/call", modern, &text).as_deref(), Some(&*text));
}
