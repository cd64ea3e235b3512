//! The fuzz bodies for `ferromcp-dispatch`'s codecs: newline-delimited framing, the
//! event-stream parser, and the JSON-RPC envelope decoder (alone and against serde_json).

use ferromcp_types::jsonrpc::{Decoder, Frame, Message, RequestId};
use serde_json::Value;

use ferromcp_dispatch::codec::{LineDecoder, SseEvent, SseParser, decode_line, encode_comment};

/// Chunk sizes drawn from a small xorshift generator, so that one input byte picks a split.
struct Chunks {
    state: u32,
    max: usize,
}

impl Chunks {
    fn new(seed: u8, max: usize) -> Self {
        Self {
            state: 0x9E37_79B9 ^ u32::from(seed),
            max: max.max(1),
        }
    }

    fn split<'a>(&mut self, mut input: &'a [u8]) -> Vec<&'a [u8]> {
        let mut out = Vec::new();
        while !input.is_empty() {
            self.state ^= self.state << 13;
            self.state ^= self.state >> 17;
            self.state ^= self.state << 5;
            if self.state.is_multiple_of(8) {
                out.push(&input[..0]); // Empty reads must change nothing.
            }
            let n = (self.state as usize % self.max + 1).min(input.len());
            let (head, tail) = input.split_at(n);
            out.push(head);
            input = tail;
        }
        out
    }
}

type LineItem = Result<Vec<u8>, ()>;

fn pull_lines(d: &mut LineDecoder, out: &mut Vec<LineItem>) {
    while let Some(item) = d.next_frame() {
        out.push(item.map(|b| b.to_vec()).map_err(|_| ()));
    }
}

fn finish_lines(d: &mut LineDecoder, out: &mut Vec<LineItem>) {
    while let Some(item) = d.finish() {
        out.push(item.map(|b| b.to_vec()).map_err(|_| ()));
    }
}

/// The line codec's rules, applied to a whole input at once.
fn reference_lines(input: &[u8], limit: usize) -> Vec<LineItem> {
    let mut out = Vec::new();
    for line in input.split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.len() > limit {
            out.push(Err(()));
        } else if !line.iter().all(|&b| matches!(b, b' ' | b'\t' | b'\r')) {
            out.push(Ok(line.to_vec()));
        }
    }
    out
}

/// Fuzz body of `line_codec`: byte 0 picks the line limit, byte 1 the chunking; the rest is
/// the stream. Frames must not depend on the chunking, must match a whole-input reference,
/// must respect the limit and hold no newline, and buffered memory stays within the limit.
/// Every frame goes through the JSON-RPC decoder.
pub fn line_codec(data: &[u8]) {
    let [cfg, seed, input @ ..] = data else {
        return;
    };
    let limit = 1 + usize::from(*cfg) * 8;
    let mut chunks = Chunks::new(*seed, 64);
    let mut split = Vec::new();
    let mut d = LineDecoder::with_max_line_len(limit);
    for chunk in chunks.split(input) {
        d.feed(chunk);
        assert!(d.buffered_len() <= limit + 1 + chunk.len());
        pull_lines(&mut d, &mut split);
        assert!(d.buffered_len() <= limit + 1, "buffer above the limit");
    }
    finish_lines(&mut d, &mut split);
    assert_eq!(d.buffered_len(), 0);

    let mut whole = Vec::new();
    let mut d = LineDecoder::with_max_line_len(limit);
    d.feed(input);
    pull_lines(&mut d, &mut whole);
    finish_lines(&mut d, &mut whole);

    assert_eq!(split, whole, "frames depend on the chunking");
    assert_eq!(
        split,
        reference_lines(input, limit),
        "frames differ from the reference"
    );
    let decoder = Decoder::new();
    for frame in split.iter().flatten() {
        assert!(frame.len() <= limit);
        assert!(!frame.contains(&b'\n'));
        let _ = decoder.decode(frame);
        if let Ok(message) = decode_line(&decoder, frame) {
            assert!(!message.to_vec().contains(&b'\n'));
        }
    }
}

type SseItem = Result<SseEvent, ()>;

fn parse_sse(p: &mut SseParser, chunks: &[&[u8]]) -> Vec<SseItem> {
    let mut out = Vec::new();
    for chunk in chunks {
        p.feed(chunk);
        while let Some(item) = p.next_event() {
            out.push(item.map_err(|_| ()));
        }
    }
    out
}

/// WHATWG HTML §9.2.6, applied to a whole stream at once with no size bound.
fn reference_sse(input: &[u8]) -> (Vec<SseEvent>, String, Option<u64>) {
    let text = String::from_utf8_lossy(input);
    let mut rest = text.strip_prefix('\u{FEFF}').unwrap_or(&text);
    let (mut events, mut id_buffer, mut last_id, mut reconnect) = (Vec::new(), "", "", None);
    let (mut data, mut event, mut id, mut retry) = (String::new(), "", None, None);
    while let Some(i) = rest.find(['\r', '\n']) {
        let line = &rest[..i];
        rest = rest[i..].strip_prefix("\r\n").unwrap_or(&rest[i + 1..]);
        if line.is_empty() {
            last_id = id_buffer;
            if !data.is_empty() {
                data.pop();
                events.push(SseEvent {
                    id: id.take(),
                    event: Some(event.to_owned()).filter(|e| !e.is_empty()),
                    data: std::mem::take(&mut data),
                    retry: retry.take(),
                });
            }
            (event, id, retry) = ("", None, None);
            continue;
        }
        let (name, value) = match line.split_once(':') {
            Some(("", _)) => continue,
            Some((name, value)) => (name, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match name {
            "data" => {
                data.push_str(value);
                data.push('\n');
            }
            "event" => event = value,
            "id" if !value.contains('\0') => {
                id_buffer = value;
                id = Some(value.to_owned());
            }
            "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                if let Ok(ms) = value.parse() {
                    reconnect = Some(ms);
                    retry = Some(ms);
                }
            }
            _ => {}
        }
    }
    (events, last_id.to_owned(), reconnect)
}

/// Fuzz body of `sse_parser`: byte 0 picks the event-size limit, byte 1 the chunking; the
/// rest is the stream. Events must not depend on the chunking, must match a whole-stream
/// reference of the spec when unbounded, and must respect the field invariants; events built
/// from the input must survive encode → parse.
pub fn sse_parser(data: &[u8]) {
    let [cfg, seed, input @ ..] = data else {
        return;
    };
    let limit = 1 + usize::from(*cfg) * 4;
    let chunks = Chunks::new(*seed, 48).split(input);

    // Bounded: split-invariant, with bounded buffers.
    let mut p = SseParser::with_max_event_size(limit);
    let split = parse_sse(&mut p, &chunks);
    assert!(p.buffered_len() <= limit);
    let mut q = SseParser::with_max_event_size(limit);
    let whole = parse_sse(&mut q, &[input]);
    assert_eq!(split, whole, "events depend on the chunking");
    assert_eq!(p.last_event_id(), q.last_event_id());
    assert_eq!(p.retry(), q.retry());
    for event in split.iter().flatten() {
        check_event(event);
        assert!(event.data.len() <= limit);
    }

    // Unbounded: exactly the spec.
    let mut p = SseParser::with_max_event_size(usize::MAX);
    let events: Vec<SseEvent> = parse_sse(&mut p, &chunks).into_iter().flatten().collect();
    let (expected, last_id, retry) = reference_sse(input);
    assert_eq!(events, expected, "events differ from the reference");
    assert_eq!(p.last_event_id().unwrap_or(""), last_id);
    assert_eq!(p.retry(), retry);

    sse_round_trip(input);
}

fn check_event(event: &SseEvent) {
    if let Some(id) = &event.id {
        assert!(!id.contains(['\0', '\r', '\n']));
    }
    if let Some(name) = &event.event {
        assert!(!name.is_empty() && !name.contains(['\r', '\n']));
    }
    assert!(!event.data.contains('\r'));
}

/// Builds events from `|`-separated fields of the input, encodes them with a comment between
/// each, and parses the stream back.
fn sse_round_trip(input: &[u8]) {
    let text = String::from_utf8_lossy(input);
    let fields: Vec<&str> = text.split('|').collect();
    let mut out = Vec::new();
    let mut expected = Vec::new();
    let mut last_id = None;
    for (n, group) in fields.chunks(3).enumerate() {
        let event = SseEvent {
            id: group
                .first()
                .filter(|s| !s.starts_with('~'))
                .map(|s| (*s).to_owned()),
            event: group.get(1).map(|s| (*s).to_owned()),
            data: group.get(2).copied().unwrap_or_default().to_owned(),
            retry: (n % 2 == 1).then_some(n as u64 * 1000),
        };
        let before = out.len();
        let bad_id = event
            .id
            .as_ref()
            .is_some_and(|i| i.contains(['\0', '\r', '\n']));
        let bad_event = event
            .event
            .as_ref()
            .is_some_and(|e| e.contains(['\r', '\n']));
        match event.encode(&mut out) {
            Ok(()) => {
                assert!(!bad_id && !bad_event);
                if let Some(id) = &event.id {
                    last_id = Some(id.clone()).filter(|id| !id.is_empty());
                }
                expected.push(SseEvent {
                    event: event.event.clone().filter(|e| !e.is_empty()),
                    data: event.data.replace("\r\n", "\n").replace('\r', "\n"),
                    ..event
                });
            }
            Err(_) => {
                assert!(bad_id || bad_event);
                assert_eq!(out.len(), before, "a rejected event left bytes behind");
            }
        }
        encode_comment(&mut out, group.first().copied().unwrap_or_default());
    }
    let mut p = SseParser::with_max_event_size(usize::MAX);
    let parsed: Vec<SseEvent> = parse_sse(&mut p, &[&out]).into_iter().flatten().collect();
    assert_eq!(parsed, expected, "encode → parse changed the events");
    assert_eq!(p.last_event_id(), last_id.as_deref());
}

/// Fuzz body of `jsonrpc_envelope`: whatever the decoder accepts must re-encode to bytes that
/// decode to an equal message, and re-encode identically.
pub fn jsonrpc_envelope(data: &[u8]) {
    let decoder = Decoder::new();
    match decoder.decode(data) {
        Ok(Frame::Single(message)) => round_trip(&decoder, &message),
        Ok(Frame::Batch(entries)) => {
            for entry in &entries {
                match entry {
                    Ok(message) => round_trip(&decoder, message),
                    Err(e) => drop(e.to_response()),
                }
            }
        }
        Err(e) => drop(e.to_response()),
    }
}

fn round_trip(decoder: &Decoder, message: &Message) {
    let bytes = message.to_vec();
    let again = decoder.decode_message(&bytes);
    assert!(again.is_ok(), "re-encoded message rejected: {again:?}");
    if let Ok(again) = again {
        // serde_json is built with `float_roundtrip`, so even floats in error data come back
        // exactly.
        assert_eq!(&again, message, "decode(encode(m)) != m");
        assert_eq!(again.to_vec(), bytes, "encoding is not stable");
    }
}

/// Inputs our decoder accepts although `serde_json::Value` rejects them, known and tolerated:
///
/// - JSON that follows the RFC 8259 grammar but that `Value` cannot represent, inside content
///   the envelope never reads (an unknown field, or raw `params`/`result`): a lone surrogate
///   escape such as `"\ud800"`, or a number beyond `f64` such as `1e400`. Handlers parse
///   params later and reject them there.
///
/// (Invalid UTF-8 anywhere in the input, skipped values included, is rejected by the decoder,
/// so it is no divergence.)
fn known_divergence(error: &serde_json::Error) -> bool {
    let text = error.to_string();
    text.contains("surrogate")
        || text.contains("hex escape")
        || text.contains("number out of range")
}

/// The method and id of a message, read by serde_json's derive (lenient with skipped content).
#[derive(serde::Deserialize)]
struct Probe {
    #[serde(default)]
    method: Option<Value>,
    #[serde(default)]
    id: Option<Value>,
}

/// Fuzz body of `envelope_differential`: whenever our decoder accepts a single message,
/// `serde_json` must accept the input as JSON too (but for `known_divergence`s), and the
/// method and id we read must be the ones it reads.
pub fn envelope_differential(data: &[u8]) {
    let Ok(message) = Decoder::new().decode_message(data) else {
        return;
    };
    // Our decoder has bounded the depth already.
    let mut de = serde_json::Deserializer::from_slice(data);
    de.disable_recursion_limit();
    let value = serde::Deserialize::deserialize(&mut de).and_then(|v: Value| de.end().map(|()| v));
    let (method, id) = match value {
        Ok(value) => {
            assert_eq!(value.get("jsonrpc").and_then(Value::as_str), Some("2.0"));
            (value.get("method").cloned(), value.get("id").cloned())
        }
        Err(e) => {
            assert!(known_divergence(&e), "accepted, but serde_json says {e}");
            let mut de = serde_json::Deserializer::from_slice(data);
            de.disable_recursion_limit();
            let probe = serde::Deserialize::deserialize(&mut de);
            assert!(
                probe.is_ok(),
                "serde_json cannot read the envelope: {:?}",
                probe.err()
            );
            let Ok(Probe { method, id }) = probe else {
                return;
            };
            (method, id)
        }
    };
    assert_eq!(method.as_ref().and_then(Value::as_str), message.method());
    let same_id = match (message.id(), &id) {
        (Some(RequestId::Number(n)), Some(v)) => v.as_i64() == Some(*n),
        (Some(RequestId::String(s)), Some(v)) => v.as_str() == Some(&**s),
        (None, None | Some(Value::Null)) => true,
        _ => false,
    };
    assert!(same_id, "id {:?} read, serde_json has {id:?}", message.id());
}
