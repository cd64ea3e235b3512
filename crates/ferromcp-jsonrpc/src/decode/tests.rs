//! The hand-read path against the full one: whatever [`decode_plain`] accepts, the full
//! path accepts as the same message, with payloads kept as the same text.

use super::*;

/// Messages the hand-read path must take (so it is what runs in practice).
const PLAIN: &[&str] = &[
    r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}"#,
    r#"{"jsonrpc":"2.0","id":"abc","method":"ping"}"#,
    r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    r#"{"jsonrpc":"2.0","method":"x","params":null}"#,
    r#"{"jsonrpc":"2.0","id":0,"method":"x","params":[1,{"a":[]}]}"#,
    r#"{"jsonrpc":"2.0","id":-12,"method":"x","params":{}}"#,
    r#"{"jsonrpc":"2.0","id":9223372036854775807,"method":"x"}"#,
    r#" { "method" : "x" , "id" : 1 , "jsonrpc" : "2.0" , "params" : { "a" : "b" } } "#,
    r#"{"id":3,"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"hi"}]}}"#,
    r#"{"jsonrpc":"2.0","id":"r","result":[]}"#,
    r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"s":"a\"b\u00e9\ud83d\ude00","n":-1.5e3}}"#,
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"caf\u{e9}\"}",
    // Valid `RawValue`s that do not read as Rust values: a lone surrogate, a huge number.
    r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"s":"\ud800","n":1e400}}"#,
    r#"{"jsonrpc":"2.0","id":1,"method":"x","params":[true,false,null,-0,0.5E+2,"\/\b"]}"#,
];

/// Messages it must leave to the full path (each an error or an unusual form).
const DECLINED: &[&str] = &[
    r#"{"jsonrpc":"2.0","id":-0,"method":"x"}"#,
    r#"{"jsonrpc":"2.0","id":01,"method":"x"}"#,
    r#"{"jsonrpc":"2.0","id":1.0,"method":"x"}"#,
    r#"{"jsonrpc":"2.0","id":1e2,"method":"x"}"#,
    r#"{"jsonrpc":"2.0","id":9223372036854775808,"method":"x"}"#,
    r#"{"jsonrpc":"2.0","id":-9223372036854775808,"method":"x"}"#,
    r#"{"jsonrpc":"2.0","id":null,"method":"x"}"#,
    r#"{"jsonrpc":"2.0","id":"\u0061","method":"x"}"#,
    r#"{"jsonrpc":"2.0","id":1,"method":"\u0070ing"}"#,
    r#"{"jsonrpc":"2.0","id":1,"\u006dethod":"ping"}"#,
    r#"{"jsonrpc":"2.0","id":1,"method":"x","extra":1}"#,
    r#"{"jsonrpc":"2.0","id":1,"method":"x","method":"y"}"#,
    r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":1,"a":2}}"#,
    r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":1,}}"#,
    r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":01}}"#,
    r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":tru}}"#,
    r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":nulls}}"#,
    r#"{"jsonrpc":"2.0","id":1,"method":"x","params":[1.]}"#,
    r#"{"jsonrpc":"2.0","id":1,"method":"x","params":[-]}"#,
    r#"{"jsonrpc":"2.0","id":1,"method":"x","params":[1e+]}"#,
    r#"{"jsonrpc":"2.0","id":1,"method":"x","params":["\x"]}"#,
    r#"{"jsonrpc":"2.0","id":1,"method":"x","params":["\u12"]}"#,
    r#"{"jsonrpc":"2.0","id":1,"result":{"a":[1,]}}"#,
    r#"{"jsonrpc":"2.0","id":1,"method":"x","params":"s"}"#,
    r#"{"jsonrpc":"2.0","id":1,"method":"x",}"#,
    r#"{"jsonrpc":"2.0","id":1,"method":"x"} x"#,
    r#"{"jsonrpc":"2.0","id":1,"method":"x""#,
    r#"{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":""}}"#,
    r#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":""}}"#,
    r#"{"jsonrpc":"2.0","result":{}}"#,
    r#"{"jsonrpc":"2.0","id":1,"result":1}"#,
    r#"{"jsonrpc":"2.0","method":"x","result":{}}"#,
    r#"{"jsonrpc":"2.0","params":{},"result":{}}"#,
    r#"{"jsonrpc":"1.0","id":1,"method":"x"}"#,
    r#"{"id":1,"method":"x"}"#,
    r#"{}"#,
    r#"[{"jsonrpc":"2.0","id":1,"method":"x"}]"#,
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\tb\"}",
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":{\"a\":\"\n\"}}",
];

fn assert_same(text: &str, plain: &Message) {
    let full = decode_full(text.as_bytes(), DEFAULT_MAX_DEPTH);
    assert_eq!(full.as_ref(), Ok(plain), "{text}");
    // Payloads are kept as the same text, not just equal JSON.
    assert_eq!(
        format!("{full:?}"),
        format!("{:?}", Ok::<_, ()>(plain)),
        "{text}"
    );
}

#[test]
fn the_plain_path_takes_common_messages_and_agrees_with_the_full_one() {
    for text in PLAIN {
        let Some(plain) = decode_plain(text.as_bytes(), DEFAULT_MAX_DEPTH) else {
            panic!("declined: {text}");
        };
        assert_same(text, &plain);
    }
}

#[test]
fn the_plain_path_declines_what_it_does_not_read_exactly() {
    for text in DECLINED {
        assert_eq!(
            decode_plain(text.as_bytes(), DEFAULT_MAX_DEPTH),
            None,
            "{text}"
        );
    }
    // Invalid UTF-8 anywhere.
    let bad = b"{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":{\"a\":\"\xff\"}}";
    assert_eq!(decode_plain(bad, DEFAULT_MAX_DEPTH), None);
}

/// Bytes that matter to the grammar, for mutations.
const PIECES: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "\"",
    "\\",
    " ",
    "\n",
    "\t",
    "0",
    "1",
    "-",
    ".",
    "e",
    "null",
    "true",
    "a",
    "\\u0061",
    "\\ud800",
    "\\x",
    "+",
    "E",
    "fals",
    "\"a\":1",
    "\"id\":",
    "\"method\":",
    "\"params\":",
    "\"result\":",
    "\"jsonrpc\":\"2.0\"",
    "\u{0}",
    "\u{1f}",
    "\u{7f}",
    "\u{e9}",
];

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(1024))]

    /// Any mutation of a message the plain path reads either is declined by it or reads
    /// as the full path reads it, payloads kept as the same text (the plain path's
    /// payloads are checked by its own scanner only, so this is what guards that check).
    #[test]
    fn mutated_messages_never_make_the_paths_disagree(
        base in 0..PLAIN.len(),
        edits in proptest::collection::vec((0..200usize, 0..3u8, 0..PIECES.len()), 1..4),
    ) {
        let text = crate::scan::mutate(PLAIN[base], &edits, PIECES);
        if let Some(plain) = decode_plain(text.as_bytes(), DEFAULT_MAX_DEPTH) {
            let full = decode_full(text.as_bytes(), DEFAULT_MAX_DEPTH);
            proptest::prop_assert_eq!(
                format!("{full:?}"),
                format!("{:?}", Ok::<_, ()>(plain)),
                "{}",
                text
            );
        }
    }
}

#[test]
fn the_plain_path_keeps_the_depth_bound() {
    // The envelope is level 1, `params` level 2.
    let nested = |levels: usize| {
        let inner = "{\"a\":".repeat(levels - 2) + "1" + &"}".repeat(levels - 2);
        format!(r#"{{"jsonrpc":"2.0","method":"x","params":{{"a":{inner}}}}}"#)
    };
    for limit in [3, 10, DEFAULT_MAX_DEPTH] {
        let ok = nested(limit);
        let plain = decode_plain(ok.as_bytes(), limit);
        assert!(plain.is_some(), "depth {limit} within {limit}");
        assert_eq!(decode_plain(nested(limit + 1).as_bytes(), limit), None);
        let d = Decoder::new().max_depth(limit);
        assert_eq!(
            d.decode_message(nested(limit + 1).as_bytes()),
            Err(DecodeError::TooDeep { limit })
        );
    }
    assert_eq!(
        decode_plain(br#"{"jsonrpc":"2.0","method":"x","params":{}}"#, 1),
        None
    );
}
