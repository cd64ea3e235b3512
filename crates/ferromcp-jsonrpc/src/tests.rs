//! Envelope decoding and encoding: JSON-RPC 2.0 §4–§6 and MCP "Base Protocol" (ids, errors).

use super::*;
use serde_json::json;

fn decode(text: &str) -> Result<Message, DecodeError> {
    Message::from_slice(text.as_bytes())
}

fn invalid(text: &str) -> DecodeError {
    match decode(text) {
        Err(e @ DecodeError::Invalid { .. }) => e,
        other => panic!("expected an invalid-request error for {text}, got {other:?}"),
    }
}

#[test]
fn each_kind_of_message_decodes() {
    let r = decode(r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"x"}}"#);
    let Ok(Message::Request(r)) = r else {
        panic!("{r:?}")
    };
    assert_eq!(r.id, RequestId::from("a"));
    assert_eq!(r.params, Some(Payload::from_value(json!({"name": "x"}))));

    let n = decode(r#"{"method":"notifications/initialized","jsonrpc":"2.0"}"#).unwrap();
    assert!(matches!(
        n,
        Message::Notification(Notification { params: None, .. })
    ));

    let ok = decode(r#"{"jsonrpc":"2.0","id":3,"result":{}}"#).unwrap();
    assert_eq!(ok, Message::response(RequestId::from(3), json!({})));

    let err = decode(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad"}}"#);
    let Ok(Message::Error(e)) = err else {
        panic!("{err:?}")
    };
    assert_eq!((e.id, e.error.code), (None, ErrorCode::PARSE_ERROR));
}

#[test]
fn encode_then_decode_is_identity() {
    let messages = [
        Message::from(Request::new("r-1", "ping", None)),
        Message::from(Notification::new(
            "x",
            Some(Payload::from_value(json!({"a": [1, 2]}))),
        )),
        Message::response(RequestId::from(-5), json!({"ok": true})),
        Message::error(None, ErrorObject::parse_error("nope")),
        Message::error(Some(7.into()), ErrorObject::method_not_found("m")),
    ];
    for m in messages {
        assert_eq!(decode(&m.to_json_string()).unwrap(), m);
    }
}

#[test]
fn keys_are_case_sensitive() {
    let e = invalid(r#"{"jsonrpc":"2.0","id":1,"Method":"ping"}"#);
    assert_eq!(
        e.id(),
        Some(&RequestId::from(1)),
        "the id is kept for the answer"
    );
    invalid(r#"{"JSONRPC":"2.0","id":1,"method":"ping"}"#);
    // An "ID" member is an unknown key, not an id: the message is a notification.
    let m = decode(r#"{"jsonrpc":"2.0","ID":1,"method":"ping"}"#).unwrap();
    assert!(matches!(m, Message::Notification(_)), "{m:?}");
}

#[test]
fn duplicate_keys_inside_params_and_result_are_rejected() {
    // B51 / GHSA-wvj2-96wp-fq3f: never first-wins in one layer and last-wins in another.
    for text in [
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","name":"b"}}"#,
        r#"{"jsonrpc":"2.0","method":"x","params":{"a":{"b":[{"c":1,"c":1}]}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":{"k":1,"\u006b":2}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{"content":[],"content":[]}}"#,
    ] {
        let e = invalid(text);
        assert!(e.to_string().contains("duplicate key"), "{e}");
        assert_eq!(e.to_error_object().code, ErrorCode::INVALID_REQUEST);
    }
    // Many keys (the set path), distinct: accepted; one repeated at the end: rejected.
    let keys: Vec<String> = (0..40).map(|i| format!("\"k{i}\":{i}")).collect();
    let ok = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"x","params":{{{}}}}}"#,
        keys.join(",")
    );
    assert!(Decoder::new().decode(ok.as_bytes()).is_ok());
    let dup = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"x","params":{{{},"k3":0}}}}"#,
        keys.join(",")
    );
    assert!(invalid(&dup).to_string().contains("\"k3\""));
    // Same key in sibling objects, and case variants and NUL variants: not duplicates.
    let ok = r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":{"k":1},"b":{"k":1},"K":1,"k\u0000":1,"k":2}}"#;
    assert!(Decoder::new().decode(ok.as_bytes()).is_ok());
}

#[test]
fn duplicate_envelope_keys_are_rejected() {
    for text in [
        r#"{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/call"}"#,
        r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","jsonrpc":"2.0","id":1,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{},"params":{}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{},"result":{}}"#,
    ] {
        let e = invalid(text);
        assert!(e.to_string().contains("duplicate key"), "{e}");
        assert_eq!(e.to_error_object().code, ErrorCode::INVALID_REQUEST);
    }
}

#[test]
fn nesting_depth_is_bounded() {
    let nested = |depth: usize| {
        // The envelope and `params` are two levels; the rest are arrays inside params.
        let inner = "[".repeat(depth - 2) + &"]".repeat(depth - 2);
        format!(r#"{{"jsonrpc":"2.0","method":"x","params":{{"a":{inner}}}}}"#)
    };
    assert!(
        decode(&nested(DEFAULT_MAX_DEPTH)).is_ok(),
        "the default allows 128 levels"
    );
    let e = decode(&nested(DEFAULT_MAX_DEPTH + 1)).unwrap_err();
    assert_eq!(
        e,
        DecodeError::TooDeep {
            limit: DEFAULT_MAX_DEPTH
        }
    );
    assert_eq!(e.to_error_object().code, ErrorCode::PARSE_ERROR);

    let shallow = Decoder::new().max_depth(10);
    assert!(shallow.decode_message(nested(10).as_bytes()).is_ok());
    assert!(shallow.decode_message(nested(11).as_bytes()).is_err());

    let deep = Decoder::new().max_depth(300);
    assert!(
        deep.decode_message(nested(300).as_bytes()).is_ok(),
        "settable above serde's own"
    );
    assert_eq!(
        Decoder::new().max_depth(100_000).depth_limit(),
        MAX_SETTABLE_DEPTH
    );

    // Brackets inside strings do not count.
    let text = format!(
        r#"{{"jsonrpc":"2.0","method":"x","params":{{"s":"{}"}}}}"#,
        "[".repeat(500)
    );
    assert!(decode(&text).is_ok());
}

#[test]
fn malformed_json_and_bad_utf8_are_parse_errors() {
    for bytes in [
        &b"{"[..],
        b"not json",
        b"",
        b"{\"jsonrpc\":\"2.0\",\"method\":\"\xff\"}",
    ] {
        let e = Message::from_slice(bytes).unwrap_err();
        assert!(matches!(e, DecodeError::Parse(_)), "{e:?}");
        let r = e.to_response();
        assert_eq!((r.id, r.error.code), (None, ErrorCode::PARSE_ERROR));
    }
    assert!(matches!(
        decode(r#"{"jsonrpc":"2.0","id":1,"method":"x"} trailing"#),
        Err(DecodeError::Parse(_))
    ));
    // Invalid UTF-8 inside a value the decoder skips (an unknown key) is still rejected, so
    // two parsers never disagree about a message (a fuzzing finding).
    let skipped = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"extra\":\"\xff\"}";
    assert!(matches!(
        Message::from_slice(skipped),
        Err(DecodeError::Parse(_))
    ));
}

#[test]
fn wrong_shapes_are_invalid_requests() {
    for text in [
        r#"{"jsonrpc":"1.0","id":1,"method":"x"}"#,
        r#"{"id":1,"method":"x"}"#,
        r#"{"jsonrpc":"2.0","id":null,"method":"x"}"#,
        r#"{"jsonrpc":"2.0","id":true,"method":"x"}"#,
        r#"{"jsonrpc":"2.0","id":1.5,"method":"x"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":7}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"x","params":3}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"x","result":{}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":""}}"#,
        r#"{"jsonrpc":"2.0","result":{}}"#,
        r#"{"jsonrpc":"2.0","id":1}"#,
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":""}}"#,
        r#"[1]"#,
        r#""just a string""#,
        r#"42"#,
    ] {
        let e = decode(text).unwrap_err();
        assert!(matches!(e, DecodeError::Invalid { .. }), "{text}: {e:?}");
    }
    let e = invalid(r#"{"jsonrpc":"2.0","id":9,"method":"x","params":"p"}"#);
    assert_eq!(e.to_response().id, Some(9.into()));
}

#[test]
fn null_params_read_as_absent_and_unknown_keys_are_ignored() {
    let m = decode(r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":null,"extra":{"a":1}}"#);
    assert_eq!(m.unwrap(), Message::from(Request::new(1, "ping", None)));
}

#[test]
fn batches_decode_entry_by_entry() {
    let frame = Decoder::new()
        .decode(br#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"bad":1}]"#)
        .unwrap();
    let Frame::Batch(entries) = frame else {
        panic!()
    };
    assert_eq!(entries.len(), 2);
    assert!(entries[0].is_ok() && entries[1].is_err());
    assert!(
        Decoder::new().decode(b"[]").is_err(),
        "an empty batch is invalid"
    );
    assert!(Message::from_slice(br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#).is_err());
}

#[test]
fn ids_correlate_across_forms_but_keep_their_wire_form() {
    let Ok(Message::Response(r)) = decode(r#"{"jsonrpc":"2.0","id":"7","result":{}}"#) else {
        panic!()
    };
    assert_eq!(r.id, RequestId::from(7));
    assert_eq!(
        Message::Response(r).to_json_string(),
        r#"{"jsonrpc":"2.0","id":"7","result":{}}"#
    );
}

/// Wraps `params` (JSON text) in a request.
fn with_params(params: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":1,"method":"x","params":{params}}}"#)
}

#[test]
fn duplicate_keys_compare_by_their_decoded_value() {
    // B51: `"a"` and `"\u0061"` are one key to every JSON parser, so both may not appear.
    for (params, key) in [
        (r#"{"a":1,"\u0061":2}"#, "a"),
        (r#"{"\u0061":1,"a":2}"#, "a"),
        (r#"{"\u0061":1,"\u0061":2}"#, "a"),
        (r#"{"/":1,"\/":2}"#, "/"),
        (r#"{"\n":1,"\u000a":2}"#, "\n"),
        (r#"{"é":1,"\u00e9":2}"#, "é"),
        (r#"{"\u00E9":1,"\u00e9":2}"#, "é"),
        (r#"{"😀":1,"\ud83d\ude00":2}"#, "😀"),
        (r#"{"a\"b":1,"a\u0022b":2}"#, "a\"b"),
    ] {
        let e = invalid(&with_params(params));
        assert_eq!(
            e.to_string(),
            format!("invalid request: duplicate key {key:?} in params"),
            "{params}"
        );
        let result = format!(r#"{{"jsonrpc":"2.0","id":1,"result":{params}}}"#);
        assert!(
            invalid(&result).to_string().contains("in result"),
            "{params}"
        );
    }
    // Escapes that decode to different strings are different keys.
    for params in [
        r#"{"a":1,"\u0061b":2}"#,
        r#"{"\u0061":1,"\u0062":2}"#,
        r#"{"\ud83d\ude00":1,"\ud83d\ude01":2}"#,
        r#"{"\\":1,"\\\\":2}"#,
    ] {
        assert!(decode(&with_params(params)).is_ok(), "{params}");
    }
}

#[test]
fn duplicate_keys_are_found_on_both_sides_of_the_many_keys_threshold() {
    // Up to 16 keys an object's keys are compared in order; past that, hashed.
    let object = |keys: &[String]| format!("{{{}}}", keys.join(","));
    let distinct = |n: usize| (0..n).map(|i| format!("\"k{i}\":{i}")).collect::<Vec<_>>();
    for n in [1, 15, 16, 17, 18, 40] {
        assert!(
            decode(&with_params(&object(&distinct(n)))).is_ok(),
            "{n} keys"
        );
        // The repeat is the last key, and repeats the first, a middle or the previous key.
        for earlier in [0, n / 2, n - 1] {
            let mut keys = distinct(n);
            keys.push(format!("\"k{earlier}\":0"));
            let e = invalid(&with_params(&object(&keys)));
            assert!(
                e.to_string().contains(&format!("\"k{earlier}\"")),
                "{n} keys then k{earlier}: {e}"
            );
        }
        // An escaped spelling of an earlier key, on the hashed side too.
        let mut keys = distinct(n);
        keys.push(r#""\u006b0":0"#.to_owned());
        assert!(
            invalid(&with_params(&object(&keys)))
                .to_string()
                .contains("\"k0\"")
        );
    }
    // The first repeat in document order is the one reported.
    let mut keys = distinct(20);
    keys.push(r#""k19":0"#.to_owned());
    keys.push(r#""k1":0"#.to_owned());
    assert!(
        invalid(&with_params(&object(&keys)))
            .to_string()
            .contains("\"k19\"")
    );
}

#[test]
fn the_same_key_in_different_objects_is_no_duplicate() {
    for params in [
        r#"{"a":{"a":{"a":1}}}"#,
        r#"{"a":[{"a":1},{"a":2}],"b":{"a":3}}"#,
        r#"[{"k":1},{"k":2},[{"k":3}]]"#,
        r#"{"a":{"b":1},"b":{"b":2}}"#,
        r#"{"s":"\"a\":1,\"a\":2","a":"{\"a\":1}"}"#,
    ] {
        assert!(decode(&with_params(params)).is_ok(), "{params}");
    }
    // A repeat deep inside is still found, and after sibling objects that closed.
    for params in [
        r#"{"a":{"b":[{"c":{"d":1,"d":2}}]}}"#,
        r#"{"a":{"x":1},"b":{"x":1},"a":2}"#,
        r#"[{"k":1},{"k":2,"k":3}]"#,
    ] {
        assert!(
            invalid(&with_params(params))
                .to_string()
                .contains("duplicate key"),
            "{params}"
        );
    }
}

#[test]
fn a_duplicate_after_a_lone_surrogate_is_found() {
    // The scan reads a string value or key holding a lone surrogate escape like any other
    // (it used to stop there and miss a later repeat).
    let text = with_params(r#"{"s":"\ud800","a":1,"a":2}"#);
    assert!(invalid(&text).to_string().contains("\"a\""));
    let text = with_params(r#"{"\udc00":1,"\udc00":2}"#);
    assert!(
        invalid(&text)
            .to_string()
            .contains("duplicate key \"\u{fffd}\"")
    );
    // Unrepeated, it is accepted as before (the handler's own parse rejects it).
    assert!(decode(&with_params(r#"{"\ud800":"\udc00x"}"#)).is_ok());
}

#[test]
fn ids_read_exactly_as_serde_json_reads_them() {
    let id = |text: &str| decode(text).map(|m| m.id().cloned());
    let request = |id: &str| format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"x"}}"#);
    assert_eq!(id(&request("0")), Ok(Some(RequestId::Number(0))));
    assert_eq!(id(&request("-7")), Ok(Some(RequestId::Number(-7))));
    assert_eq!(
        id(&request(&i64::MAX.to_string())),
        Ok(Some(i64::MAX.into()))
    );
    assert_eq!(
        id(&request(&i64::MIN.to_string())),
        Ok(Some(i64::MIN.into()))
    );
    assert_eq!(id(&request(r#""\u0041""#)), Ok(Some("A".into())));
    for bad in [
        "-0",
        "1.0",
        "1e3",
        "9223372036854775808",
        "-9223372036854775809",
    ] {
        let e = decode(&request(bad)).unwrap_err();
        assert!(matches!(e, DecodeError::Invalid { .. }), "{bad}: {e:?}");
    }
    for bad in ["01", "-", "+1", "0x1"] {
        let e = decode(&request(bad)).unwrap_err();
        assert!(matches!(e, DecodeError::Parse(_)), "{bad}: {e:?}");
    }
}

#[test]
fn encoding_is_byte_for_byte_serde_jsons() {
    let value = json!({
        "content": [{"type": "text", "text": "hello \"quoted\" \\ \n\t\u{1} é 😀 \u{7f}"}],
        "n": [0, -1, i64::MIN, u64::MAX, 1.5, -0.0, 1e300, 0.1],
        "nested": {"a": {"b": [[], {}, null, true, false]}},
        "": "empty key",
    });
    let messages = [
        Message::from(Request::new(
            7,
            "tools/call",
            Some(Payload::from_value(value.clone())),
        )),
        Message::from(Request::new(i64::MIN, "m\"\n", None)),
        Message::from(Request::new("id \u{0} \"x\"", "ping", None)),
        Message::from(Notification::new("notifications/x", None)),
        Message::from(Notification::new(
            "n",
            Some(Payload::from_value(json!([1, "2"]))),
        )),
        Message::response(RequestId::from(i64::MAX), value),
        Message::response(RequestId::from("7"), json!({})),
        Message::response(
            RequestId::from(-3),
            Payload::Raw(RawJson::from_string(r#"{ "a" : [1, 2] }"#.into()).unwrap()),
        ),
        Message::error(None, ErrorObject::parse_error("bad \"input\"")),
        Message::error(
            Some("e".into()),
            ErrorObject::method_not_found("m").with_data(json!({"x": 1.25})),
        ),
    ];
    for m in messages {
        assert_eq!(m.to_json_string(), serde_json::to_string(&m).unwrap());
        assert_eq!(decode(&m.to_json_string()).unwrap(), m);
    }
}

#[test]
fn objects_nested_to_the_largest_settable_depth_are_scanned() {
    // The duplicate-key scan recurses once per level; the deepest setting must not exhaust
    // the stack, with or without a duplicate at the bottom. `levels` objects nest inside
    // the envelope and `params`.
    let nested = |levels: usize, bottom: &str| {
        let inner = r#"{"k":"#.repeat(levels) + bottom + &"}".repeat(levels);
        with_params(&format!(r#"{{"k":{inner}}}"#))
    };
    let d = Decoder::new().max_depth(MAX_SETTABLE_DEPTH);
    let deepest = MAX_SETTABLE_DEPTH - 2;
    assert!(d.decode_message(nested(deepest, "1").as_bytes()).is_ok());
    let too_deep = nested(deepest, r#"{"a":1}"#);
    assert!(matches!(
        d.decode_message(too_deep.as_bytes()),
        Err(DecodeError::TooDeep { .. })
    ));
    let dup = nested(deepest - 1, r#"{"b":1,"a":0,"a":2}"#);
    let e = d.decode_message(dup.as_bytes()).unwrap_err();
    assert!(e.to_string().contains("duplicate key \"a\""), "{e}");
}
