//! The server-sent events codec (WHATWG HTML §9.2 "Server-sent events", §9.2.5 "Parsing an
//! event stream" and §9.2.6 "Interpreting an event stream"; MCP "Transports › Streamable
//! HTTP" sends JSON-RPC messages as SSE `data`).

use ferromcp_dispatch::codec::{
    DEFAULT_MAX_EVENT_SIZE, SseError, SseEvent, SseParser, SseWriteError, encode_comment,
    encode_message_event,
};
use ferromcp_jsonrpc::{Message, Payload, Request};
use proptest::prelude::*;

fn parse_with(p: &mut SseParser, chunks: &[&[u8]]) -> Vec<Result<SseEvent, SseError>> {
    let mut out = Vec::new();
    for chunk in chunks {
        p.feed(chunk);
        while let Some(e) = p.next_event() {
            out.push(e);
        }
    }
    out
}

fn events(input: &[u8]) -> Vec<SseEvent> {
    parse_with(&mut SseParser::new(), &[input])
        .into_iter()
        .map(Result::unwrap)
        .collect()
}

// §9.2.6: `data` lines are joined with LF; a blank line dispatches; the type defaults to
// "message".
#[test]
fn data_lines_are_joined_and_dispatched_on_blank_line() {
    let got = events(b"data: first\ndata: second\n\ndata:third\n\n");
    assert_eq!(
        got,
        vec![SseEvent::new("first\nsecond"), SseEvent::new("third")]
    );
    assert_eq!(got[0].event_type(), "message");
    assert_eq!(SseParser::new().max_event_size(), DEFAULT_MAX_EVENT_SIZE);
}

// §9.2.6: `id`, `event` and `retry` fields.
#[test]
fn id_event_and_retry_fields() {
    let got = events(b"id: 42\nevent: update\nretry: 1500\ndata: x\n\n");
    assert_eq!(
        got,
        vec![
            SseEvent::new("x")
                .with_id("42")
                .with_event("update")
                .with_retry(1500)
        ]
    );
    assert_eq!(got[0].event_type(), "update");
}

// §9.2.6: only ONE leading space after the colon is stripped.
#[test]
fn one_leading_space_is_stripped() {
    assert_eq!(events(b"data:  two\n\n"), vec![SseEvent::new(" two")]);
    assert_eq!(events(b"data:no\n\n"), vec![SseEvent::new("no")]);
}

// §9.2.6: a line with no colon is a field name with an empty value.
#[test]
fn field_without_colon_has_empty_value() {
    assert_eq!(events(b"data\ndata\n\n"), vec![SseEvent::new("\n")]);
    assert_eq!(events(b"data\n\n"), vec![SseEvent::new("")]);
}

// §9.2.6: lines starting with a colon are comments; unknown fields are ignored.
#[test]
fn comments_and_unknown_fields_are_ignored() {
    let got = events(b": keep-alive\nfoo: bar\ndata: x\n:another\n\n");
    assert_eq!(got, vec![SseEvent::new("x")]);
}

// §9.2.5: lines end with CRLF, LF or CR.
#[test]
fn all_three_line_ends() {
    let want = vec![SseEvent::new("a\nb"), SseEvent::new("c")];
    assert_eq!(events(b"data: a\r\ndata: b\r\n\r\ndata: c\r\n\r\n"), want);
    assert_eq!(events(b"data: a\rdata: b\r\rdata: c\r\r"), want);
    assert_eq!(events(b"data: a\ndata: b\r\n\rdata: c\n\r\n"), want);
}

// §9.2.5: a CRLF split across chunks is one line end, not two (CR then an empty LF line).
#[test]
fn crlf_split_across_chunks() {
    let mut p = SseParser::new();
    let got = parse_with(&mut p, &[b"data: a\r", b"\ndata: b\r", b"\n\r", b"\n"]);
    assert_eq!(got, vec![Ok(SseEvent::new("a\nb"))]);
    // An empty chunk between `\r` and `\n` does not split the pair.
    let mut p = SseParser::new();
    let got = parse_with(&mut p, &[b"data: a\r", b"", b"\ndata: b\r\r", b"", b"\n"]);
    assert_eq!(got, vec![Ok(SseEvent::new("a\nb"))]);
}

// §9.2.5: a leading UTF-8 BOM is ignored, only at the start of the stream.
#[test]
fn leading_bom_is_ignored() {
    let mut p = SseParser::new();
    let got = parse_with(
        &mut p,
        &[b"\xEF\xBB", b"\xBFdata: x\n\n\xEF\xBB\xBFdata: y\n\n"],
    );
    assert_eq!(got, vec![Ok(SseEvent::new("x"))]);
}

// §9.2.5: the stream is UTF-8; a sequence split across chunks decodes whole, and invalid
// bytes become U+FFFD.
#[test]
fn utf8_split_across_chunks_and_invalid_bytes() {
    let mut p = SseParser::new();
    let euro = "data: €\n\n".as_bytes();
    let got = parse_with(&mut p, &[&euro[..7], &euro[7..]]);
    assert_eq!(got, vec![Ok(SseEvent::new("€"))]);
    assert_eq!(events(b"data: \xff!\n\n"), vec![SseEvent::new("\u{FFFD}!")]);
}

// §9.2.6: an event with no data is not dispatched, but its id still sets the last event id.
#[test]
fn id_only_event_updates_last_event_id() {
    let mut p = SseParser::new();
    assert_eq!(p.last_event_id(), None);
    let got = parse_with(&mut p, &[b"id: prime-1\nretry: 3000\n\n"]);
    assert!(got.is_empty());
    assert_eq!(p.last_event_id(), Some("prime-1"));
    assert_eq!(p.retry(), Some(3000));
    // The id persists into later events' last event id, not into their own `id`.
    let got = parse_with(&mut p, &[b"data: x\n\n"]);
    assert_eq!(got, vec![Ok(SseEvent::new("x"))]);
    assert_eq!(p.last_event_id(), Some("prime-1"));
    // An empty id resets it.
    parse_with(&mut p, &[b"id\n\n"]);
    assert_eq!(p.last_event_id(), None);
}

// §9.2.6: the last event id is committed when the event ends, not when the field is read.
#[test]
fn last_event_id_is_committed_at_dispatch() {
    let mut p = SseParser::new().with_last_event_id("resume-7");
    assert_eq!(p.last_event_id(), Some("resume-7"));
    p.feed(b"id: 8\ndata: x\n");
    assert_eq!(p.last_event_id(), Some("resume-7"));
    p.feed(b"\n");
    assert_eq!(p.last_event_id(), Some("8"));
}

// §9.2.6: an `id` containing NUL is ignored.
#[test]
fn id_with_nul_is_ignored() {
    let mut p = SseParser::new();
    let got = parse_with(&mut p, &[b"id: 1\n\nid: a\0b\ndata: x\n\n"]);
    assert_eq!(got, vec![Ok(SseEvent::new("x"))]);
    assert_eq!(p.last_event_id(), Some("1"));
}

// §9.2.6: `retry` is honoured only when it consists of ASCII digits.
#[test]
fn retry_must_be_digits() {
    for bad in [
        &b"retry: 1.5\n"[..],
        b"retry: -1\n",
        b"retry: 12a\n",
        b"retry:\n",
    ] {
        let mut p = SseParser::new();
        let mut input = bad.to_vec();
        input.extend_from_slice(b"data: x\n\n");
        let got = parse_with(&mut p, &[&input]);
        assert_eq!(got, vec![Ok(SseEvent::new("x"))], "{bad:?}");
        assert_eq!(p.retry(), None);
    }
    // Too large for u64: ignored as well.
    assert_eq!(
        events(b"retry: 99999999999999999999999\ndata: x\n\n")[0].retry,
        None
    );
}

// §9.2.6: an empty `event` means "message"; the type does not leak into the next event.
#[test]
fn event_type_resets_after_each_event() {
    let got = events(b"event: a\ndata: 1\n\ndata: 2\n\nevent:\ndata: 3\n\n");
    assert_eq!(got[0].event.as_deref(), Some("a"));
    assert_eq!(got[1].event, None);
    assert_eq!(got[2].event, None);
}

// §9.2.6: an unterminated event at the end of the stream is not dispatched.
#[test]
fn unterminated_event_is_not_dispatched() {
    assert!(events(b"data: x\n").is_empty());
}

// Bounded memory: an oversized event is one error, skipped to its end; parsing resumes.
#[test]
fn oversized_event_is_skipped_with_bounded_memory() {
    const LIMIT: usize = 1 << 20;
    let mut input = b"data: before\n\nid: lost\ndata: ".to_vec();
    input.extend(std::iter::repeat_n(b'x', 10 << 20));
    input.extend_from_slice(b"\ndata: more\n\nid: 9\ndata: after\n\n");
    let mut p = SseParser::with_max_event_size(LIMIT);
    let mut got = Vec::new();
    for chunk in input.chunks(8 * 1024) {
        p.feed(chunk);
        assert!(p.buffered_len() <= LIMIT, "{}", p.buffered_len());
        while let Some(e) = p.next_event() {
            got.push(e);
        }
    }
    assert_eq!(
        got,
        vec![
            Ok(SseEvent::new("before")),
            Err(SseError::TooLarge { limit: LIMIT }),
            Ok(SseEvent::new("after").with_id("9")),
        ]
    );
    assert_eq!(p.last_event_id(), Some("9"));
}

// Bounded memory: many data lines that together exceed the limit.
#[test]
fn many_small_lines_exceeding_the_limit() {
    let mut p = SseParser::with_max_event_size(32);
    let got = parse_with(
        &mut p,
        &[
            b"data: 0123456789\n".repeat(5).as_slice(),
            b"\ndata: ok\n\n",
        ],
    );
    assert_eq!(
        got,
        vec![
            Err(SseError::TooLarge { limit: 32 }),
            Ok(SseEvent::new("ok"))
        ]
    );
}

// Bounded memory holds after decoding: U+FFFD replacements (3 bytes for 1) count too.
#[test]
fn replacement_characters_count_against_the_limit() {
    let mut p = SseParser::with_max_event_size(16);
    let got = parse_with(&mut p, &[b"data:\xff\xff\xff\xff\xff\xff\n\ndata: ok\n\n"]);
    assert_eq!(
        got,
        vec![
            Err(SseError::TooLarge { limit: 16 }),
            Ok(SseEvent::new("ok"))
        ]
    );
    assert!(p.buffered_len() <= 16);
}

// Writer: fields, data split on every line end, blank line; one buffer per frame.
#[test]
fn writer_emits_one_complete_frame() {
    let e = SseEvent::new("a\r\nb\rc\nd")
        .with_id("7")
        .with_event("note")
        .with_retry(250);
    let bytes = e.to_bytes().unwrap();
    assert_eq!(
        bytes,
        b"id: 7\nevent: note\nretry: 250\ndata: a\ndata: b\ndata: c\ndata: d\n\n"
    );
    assert_eq!(
        events(&bytes),
        vec![SseEvent {
            data: "a\nb\nc\nd".into(),
            ..e
        }]
    );
    assert_eq!(SseEvent::new("").to_bytes().unwrap(), b"data: \n\n");
    assert_eq!(events(b"data: \n\n"), vec![SseEvent::new("")]);
}

// Writer: an id or event name with a line break (or an id with NUL) is rejected, never split.
#[test]
fn writer_rejects_fields_that_would_split_the_frame() {
    let mut out = b"kept".to_vec();
    for (event, field) in [
        (SseEvent::new("x").with_id("1\n2"), "id"),
        (SseEvent::new("x").with_id("1\r"), "id"),
        (SseEvent::new("x").with_id("a\0"), "id"),
        (SseEvent::new("x").with_event("a\nb"), "event"),
    ] {
        assert_eq!(
            event.encode(&mut out),
            Err(SseWriteError::InvalidField { field })
        );
    }
    assert_eq!(out, b"kept");
    let mut out = Vec::new();
    assert!(
        encode_message_event(
            &mut out,
            Some("x\ny"),
            &Message::from(Request::new(1, "p", None))
        )
        .is_err()
    );
    assert!(out.is_empty());
}

// Writer: comments for keep-alives; each line of the text stays a comment.
#[test]
fn comments_never_dispatch() {
    let mut out = Vec::new();
    encode_comment(&mut out, "keep-alive");
    encode_comment(&mut out, "x\r\ndata: injected\n");
    assert_eq!(out, b": keep-alive\n\n: x\n: data: injected\n: \n\n");
    assert!(events(&out).is_empty());
}

// MCP Streamable HTTP: a JSON-RPC message as one event, raw payload line breaks flattened.
#[test]
fn message_event_round_trips() {
    let raw: Payload = serde_json::from_str("{\n \"k\": [1,\r\n 2]\n}").unwrap();
    let msg = Message::from(Request::new(3, "tools/call", Some(raw)));
    let mut out = Vec::new();
    encode_message_event(&mut out, Some("stream-1:3"), &msg).unwrap();
    let got = events(&out);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].id.as_deref(), Some("stream-1:3"));
    assert!(!got[0].data.contains('\n'));
    assert_eq!(Message::from_slice(got[0].data.as_bytes()).unwrap(), msg);
}

fn text() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            Just('\n'),
            Just('\r'),
            Just(':'),
            Just(' '),
            Just('é'),
            Just('\u{FEFF}'),
            any::<char>()
        ],
        0..24,
    )
    .prop_map(|v| v.into_iter().collect())
}

fn event() -> impl Strategy<Value = SseEvent> {
    let name = "[a-zA-Z0-9 :._-]{0,12}";
    (
        proptest::option::of(name),
        proptest::option::of(name),
        text(),
        proptest::option::of(any::<u64>()),
    )
        .prop_map(|(id, event, data, retry)| SseEvent {
            id,
            event,
            data,
            retry,
        })
}

proptest! {
    // Chunk-split invariance: any split of a stream gives the same events and state.
    #[test]
    fn any_split_gives_the_same_events(
        input in proptest::collection::vec(prop_oneof![
            Just(b"data: x\n".to_vec()), Just(b"\r\n".to_vec()), Just(b"\r".to_vec()),
            Just(b"\n".to_vec()), Just(b"id: 1\n".to_vec()), Just(b": c\n".to_vec()),
            Just("é".as_bytes().to_vec()), Just(b"\xEF\xBB\xBF".to_vec()),
            Just(b"retry: 5\r".to_vec()), Just(b"event: e\r\n".to_vec()),
            proptest::collection::vec(any::<u8>(), 0..6),
        ], 0..40).prop_map(|v| v.concat()),
        cuts in proptest::collection::vec(0usize..400, 0..12),
        limit in 4usize..64,
    ) {
        let mut whole = SseParser::with_max_event_size(limit);
        let expected = parse_with(&mut whole, &[&input]);
        let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(input.len())).collect();
        cuts.sort_unstable();
        let mut pieces = Vec::new();
        let mut start = 0;
        for cut in cuts.into_iter().chain([input.len()]) {
            pieces.push(&input[start..cut]);
            start = cut;
        }
        let mut split = SseParser::with_max_event_size(limit);
        prop_assert_eq!(parse_with(&mut split, &pieces), expected);
        prop_assert_eq!(split.last_event_id(), whole.last_event_id());
        prop_assert_eq!(split.retry(), whole.retry());
        prop_assert!(split.buffered_len() <= limit);
    }

    // Round trip: write then parse gives the same events (line ends in data as `\n`, an empty
    // event type as "message").
    #[test]
    fn write_then_parse_round_trips(events_in in proptest::collection::vec(event(), 0..6)) {
        let mut out = Vec::new();
        let mut expected = Vec::new();
        for e in &events_in {
            e.encode(&mut out).unwrap();
            encode_comment(&mut out, "ka");
            expected.push(SseEvent {
                event: e.event.clone().filter(|n| !n.is_empty()),
                data: e.data.replace("\r\n", "\n").replace('\r', "\n"),
                ..e.clone()
            });
        }
        prop_assert_eq!(events(&out), expected);
    }
}
