//! Sealed `requestState` (issue "High-level server", point 5): round trips, tampering,
//! replay against another binding, expiry, key rotation, bounds, and the one public error.

#![allow(clippy::unwrap_used, clippy::panic)]

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use ferromcp_server::request_state::{
    Binding, DEFAULT_MAX_TOKEN_LEN, DEFAULT_TTL, KeyRing, SealerConfig, StateErrorKind, StateKey,
    StateSealer, TOKEN_PREFIX, arguments_digest, canonical_json,
};
use ferromcp_types::jsonrpc::ErrorCode;
use serde_json::{Value, json};

fn t(secs: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(1_800_000_000 + secs)
}

fn key(id: u32) -> StateKey {
    StateKey::new(id, &[id as u8; 32])
}

fn sealer() -> StateSealer {
    StateSealer::new(KeyRing::new(key(1)))
}

fn binding() -> Binding {
    Binding::new(
        "tools/call",
        "book_flight",
        Some(&json!({"from": "LIS", "to": "OPO", "seats": 2})),
    )
    .with_principal("alice@issuer")
}

fn kind(r: Result<Vec<u8>, ferromcp_server::request_state::StateError>) -> StateErrorKind {
    r.unwrap_err().kind()
}

#[test]
fn round_trip() {
    let s = sealer();
    let b = binding();
    let payloads: [&[u8]; 4] = [b"", b"x", &[0u8; 1000], "état ✓".as_bytes()];
    for payload in payloads {
        let token = s.seal(&b, payload, t(0)).unwrap();
        assert!(token.starts_with(TOKEN_PREFIX));
        assert!(
            token[3..]
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_')
        );
        assert_eq!(s.open(&token, &b, t(1)).unwrap(), payload);
    }
    // Nonces are random: the same input seals differently.
    assert_ne!(
        s.seal(&b, b"p", t(0)).unwrap(),
        s.seal(&b, b"p", t(0)).unwrap()
    );
    // The ephemeral ring works too, and does not open another ring's states.
    let e = StateSealer::new(KeyRing::ephemeral().unwrap());
    let token = e.seal(&b, b"p", t(0)).unwrap();
    assert_eq!(e.open(&token, &b, t(0)).unwrap(), b"p");
    assert!(s.open(&token, &b, t(0)).is_err());
}

#[test]
fn tampering_with_any_byte_fails() {
    let s = sealer();
    let b = binding();
    let token = s.seal(&b, b"secret plan", t(0)).unwrap();
    let bytes = token.as_bytes();
    for i in 0..bytes.len() {
        for replacement in [b'A', b'z', b'-', b'0'] {
            if bytes[i] == replacement {
                continue;
            }
            let mut forged = bytes.to_vec();
            forged[i] = replacement;
            let forged = String::from_utf8(forged).unwrap();
            assert!(
                s.open(&forged, &b, t(0)).is_err(),
                "byte {i} -> {replacement}"
            );
        }
    }
    // Truncation and extension fail too.
    assert!(s.open(&token[..token.len() - 1], &b, t(0)).is_err());
    assert!(s.open(&token[..token.len() - 4], &b, t(0)).is_err());
    assert!(s.open(&format!("{token}AAAA"), &b, t(0)).is_err());
    assert_eq!(
        kind(s.open(&format!("v2.{}", &token[3..]), &b, t(0))),
        StateErrorKind::Malformed
    );
}

#[test]
fn another_binding_fails() {
    let s = sealer();
    let b = binding();
    let token = s.seal(&b, b"p", t(0)).unwrap();
    let args = json!({"from": "LIS", "to": "OPO", "seats": 2});
    let others = [
        Binding::new("prompts/get", "book_flight", Some(&args)).with_principal("alice@issuer"),
        Binding::new("tools/call", "cancel_flight", Some(&args)).with_principal("alice@issuer"),
        Binding::new(
            "tools/call",
            "book_flight",
            Some(&json!({"from": "LIS", "to": "OPO", "seats": 3})),
        )
        .with_principal("alice@issuer"),
        Binding::new("tools/call", "book_flight", None).with_principal("alice@issuer"),
        Binding::new("tools/call", "book_flight", Some(&args)).with_principal("mallory@issuer"),
        Binding::new("tools/call", "book_flight", Some(&args)),
        // Field boundaries are unambiguous.
        Binding::new("tools/callb", "ook_flight", Some(&args)).with_principal("alice@issuer"),
    ];
    for other in &others {
        assert_eq!(
            kind(s.open(&token, other, t(0))),
            StateErrorKind::Unauthenticated,
            "{other:?}"
        );
    }
    // Same arguments in another key order, plus the per-round keys: same binding.
    let same = Binding::new(
        "tools/call",
        "book_flight",
        Some(&json!({
            "seats": 2, "to": "OPO", "from": "LIS",
            "inputResponses": {"q": {"action": "accept"}},
            "requestState": "v1.xyz",
            "_meta": {"progressToken": 1}
        })),
    )
    .with_principal("alice@issuer");
    assert_eq!(s.open(&token, &same, t(0)).unwrap(), b"p");

    // A sealer with an audience does not open another audience's states (same key).
    let a = StateSealer::with_config(
        KeyRing::new(key(1)),
        SealerConfig::default().with_audience("server-a"),
    );
    let bee = StateSealer::with_config(
        KeyRing::new(key(1)),
        SealerConfig::default().with_audience("server-b"),
    );
    let token = a.seal(&b, b"p", t(0)).unwrap();
    assert_eq!(a.open(&token, &b, t(0)).unwrap(), b"p");
    assert_eq!(
        kind(bee.open(&token, &b, t(0))),
        StateErrorKind::Unauthenticated
    );
    assert!(s.open(&token, &b, t(0)).is_err());
}

#[test]
fn expiry() {
    let s = sealer();
    let b = binding();
    let token = s.seal(&b, b"p", t(100)).unwrap();
    let ttl = DEFAULT_TTL;
    assert!(
        s.open(&token, &b, t(100) + ttl - Duration::from_millis(1))
            .is_ok()
    );
    assert_eq!(
        kind(s.open(&token, &b, t(100) + ttl)),
        StateErrorKind::Expired
    );
    assert_eq!(
        kind(s.open(&token, &b, t(100_000))),
        StateErrorKind::Expired
    );
    // Issued in the future beyond the clock skew.
    assert!(s.open(&token, &b, t(50)).is_ok());
    assert_eq!(kind(s.open(&token, &b, t(0))), StateErrorKind::NotYetValid);

    let short = StateSealer::with_config(
        KeyRing::new(key(1)),
        SealerConfig::default().with_ttl(Duration::from_secs(5)),
    );
    let token = short.seal(&b, b"p", t(0)).unwrap();
    assert!(short.open(&token, &b, t(4)).is_ok());
    assert_eq!(kind(short.open(&token, &b, t(5))), StateErrorKind::Expired);
}

#[test]
fn rotation_keeps_previous_keys_then_drops_them() {
    let mut s = sealer();
    let b = binding();
    let old = s.seal(&b, b"old", t(0)).unwrap();
    s.rotate(key(2));
    assert_eq!(s.keys().current_id(), 2);
    let mid = s.seal(&b, b"mid", t(0)).unwrap();
    assert_eq!(s.open(&old, &b, t(0)).unwrap(), b"old");
    s.rotate(key(3));
    assert_eq!(s.keys().key_ids().collect::<Vec<_>>(), [3, 2, 1]);
    assert_eq!(s.open(&old, &b, t(0)).unwrap(), b"old");
    assert_eq!(s.open(&mid, &b, t(0)).unwrap(), b"mid");
    // The default ring keeps two previous keys: a third rotation drops key 1.
    s.rotate(key(4));
    assert_eq!(kind(s.open(&old, &b, t(0))), StateErrorKind::UnknownKey);
    assert_eq!(s.open(&mid, &b, t(0)).unwrap(), b"mid");

    // A ring built from configuration, and a ring keeping no previous key.
    let ring = KeyRing::new(key(9)).with_previous(key(1));
    assert_eq!(StateSealer::new(ring).open(&old, &b, t(0)).unwrap(), b"old");
    let mut strict = StateSealer::new(KeyRing::new(key(1)).with_retained(0));
    let token = strict.seal(&b, b"p", t(0)).unwrap();
    strict.rotate(key(2));
    assert_eq!(
        kind(strict.open(&token, &b, t(0))),
        StateErrorKind::UnknownKey
    );
    // Same id, different secret: authentication fails.
    let imposter = StateSealer::new(KeyRing::new(StateKey::new(1, &[7; 32])));
    assert_eq!(
        kind(imposter.open(&old, &b, t(0))),
        StateErrorKind::Unauthenticated
    );
}

#[test]
fn size_bounds() {
    let s = sealer();
    let b = binding();
    let big = vec![7u8; 40 * 1024];
    let token = s.seal(&b, &big, t(0)).unwrap();
    assert!(token.len() <= DEFAULT_MAX_TOKEN_LEN);
    assert_eq!(s.open(&token, &b, t(0)).unwrap(), big);

    let err = s.seal(&b, &vec![0u8; 48 * 1024], t(0)).unwrap_err();
    assert_eq!(err.kind(), StateErrorKind::PayloadTooLarge);
    assert_eq!(err.to_error_object().code, ErrorCode::INTERNAL_ERROR);

    let oversized = format!("{TOKEN_PREFIX}{}", "A".repeat(DEFAULT_MAX_TOKEN_LEN));
    assert_eq!(kind(s.open(&oversized, &b, t(0))), StateErrorKind::TooLong);

    let small = StateSealer::with_config(
        KeyRing::new(key(1)),
        SealerConfig::default().with_max_token_len(100),
    );
    assert!(small.seal(&b, &[0; 20], t(0)).is_ok());
    assert!(small.seal(&b, &[0; 60], t(0)).is_err());
    assert_eq!(kind(small.open(&token, &b, t(0))), StateErrorKind::TooLong);
}

#[test]
fn garbage_is_rejected() {
    let s = sealer();
    let b = binding();
    let cases = [
        "",
        "v1.",
        "v1",
        "v1.!!!!",
        "v1.AAAA",
        "v1.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "v1.AAAB====",
        "v1.AA+/AA",
        "v1. AAAA",
        "{\"state\": 1}",
        "null",
        "v1.\u{0}\u{1}",
        "v1.é",
    ];
    for garbage in cases {
        let err = s.open(garbage, &b, t(0)).unwrap_err();
        assert!(
            matches!(
                err.kind(),
                StateErrorKind::Malformed | StateErrorKind::UnknownKey
            ),
            "{garbage:?}: {err:?}"
        );
    }
    // 64 zero bytes: key id 0 is unknown.
    let zeros = format!("v1.{}", "A".repeat(86));
    assert_eq!(kind(s.open(&zeros, &b, t(0))), StateErrorKind::UnknownKey);
    // Key id 1 with garbage after it.
    let forged = format!("v1.AAAAAQ{}", "A".repeat(80));
    assert_eq!(
        kind(s.open(&forged, &b, t(0))),
        StateErrorKind::Unauthenticated
    );
}

#[test]
fn every_open_failure_is_one_protocol_error() {
    let s = sealer();
    let b = binding();
    let token = s.seal(&b, b"p", t(0)).unwrap();
    let failures = [
        s.open("garbage", &b, t(0)),
        s.open(&format!("v1.{}", "A".repeat(86)), &b, t(0)),
        s.open(&token, &Binding::new("tools/call", "other", None), t(0)),
        s.open(&token, &b, t(100_000)),
        s.open(&"A".repeat(DEFAULT_MAX_TOKEN_LEN + 1), &b, t(0)),
    ];
    let expected = json!({
        "code": -32602,
        "message": "Invalid or expired requestState",
        "data": {"reason": "invalid_request_state"}
    });
    for f in failures {
        let err = f.unwrap_err();
        let obj = err.to_error_object();
        assert_eq!(obj.code, ErrorCode::INVALID_PARAMS);
        assert_eq!(obj.message, "Invalid or expired requestState");
        assert_eq!(obj.data, Some(json!({"reason": "invalid_request_state"})));
        assert_eq!(serde_json::to_value(&obj).unwrap(), expected);
        // The error's text says why, but never carries the token.
        assert!(!err.to_string().contains(&token[3..20]));
        assert!(!format!("{err:?}").contains(&token[3..20]));
    }
    // Keys never show their secret.
    let k = StateKey::new(5, &[0xAB; 32]);
    let shown = format!("{k:?} {:?}", KeyRing::new(k.clone()));
    assert!(
        !shown.contains("171") && !shown.to_lowercase().contains("ab, "),
        "{shown}"
    );
}

#[test]
fn canonical_json_sorts_keys_and_matches_serde_json() {
    let v: Value = serde_json::from_str(
        r#"{"b": [3, {"z": null, "a": true}], "a": "x\"\\\n\u0001é", "c": 1.5e3}"#,
    )
    .unwrap();
    let c = canonical_json(&v);
    assert_eq!(
        c,
        r#"{"a":"x\"\\\n\u0001é","b":[3,{"a":true,"z":null}],"c":1500.0}"#
    );
    // serde_json (built without preserve_order, as here) prints the same bytes.
    assert_eq!(c, serde_json::to_string(&v).unwrap());
    for s in ["\u{8}\u{c}\t\r\u{1f}\u{7f}", "", "plain"] {
        assert_eq!(
            canonical_json(&Value::from(s)),
            serde_json::to_string(s).unwrap()
        );
    }
    // Deep nesting does not overflow the stack.
    let mut deep = Value::Null;
    for _ in 0..100_000 {
        deep = Value::Array(vec![deep]);
    }
    assert_eq!(canonical_json(&deep).len(), 200_004);
    std::mem::forget(deep); // dropping it would recurse (serde_json's Drop, not ours)

    // The digest ignores key order and the per-round keys; absent, null and {} agree.
    let d = arguments_digest(Some(&json!({"a": 1, "b": 2})));
    assert_eq!(
        d,
        arguments_digest(Some(&json!({"b": 2, "a": 1, "_meta": {}})))
    );
    assert_ne!(d, arguments_digest(Some(&json!({"a": 1, "b": 3}))));
    assert_eq!(arguments_digest(None), arguments_digest(Some(&Value::Null)));
    assert_eq!(arguments_digest(None), arguments_digest(Some(&json!({}))));
    // Nested `_meta` keys are part of the arguments.
    assert_ne!(
        arguments_digest(Some(&json!({"x": {"_meta": 1}}))),
        arguments_digest(Some(&json!({"x": {}})))
    );
}
