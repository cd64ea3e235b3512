//! The newline-delimited JSON codec (MCP "Transports › stdio": messages are delimited by
//! newlines and must not contain embedded newlines).

use std::time::Duration;

use bytes::Bytes;
use ferromcp_dispatch::codec::{
    DEFAULT_MAX_LINE_LEN, LineDecoder, LineError, LineReader, LineWriter, decode_line,
};
use ferromcp_jsonrpc::{DecodeError, Decoder, Message, Payload, Request};
use proptest::prelude::*;
use tokio::io::AsyncWriteExt;
use tokio::time::timeout;

const T: Duration = Duration::from_secs(5);

fn frames(d: &mut LineDecoder) -> Vec<Result<Vec<u8>, usize>> {
    let mut out = Vec::new();
    while let Some(item) = d.next_frame() {
        out.push(item.map(|b| b.to_vec()).map_err(limit_of));
    }
    out
}

fn finish(d: &mut LineDecoder) -> Vec<Result<Vec<u8>, usize>> {
    let mut out = Vec::new();
    while let Some(item) = d.finish() {
        out.push(item.map(|b| b.to_vec()).map_err(limit_of));
    }
    out
}

fn limit_of(e: LineError) -> usize {
    match e {
        LineError::TooLong { limit } => limit,
        other => unreachable!("unexpected {other}"),
    }
}

fn all(input: &[u8], limit: usize) -> Vec<Result<Vec<u8>, usize>> {
    let mut d = LineDecoder::with_max_line_len(limit);
    d.feed(input);
    let mut out = frames(&mut d);
    out.extend(finish(&mut d));
    out
}

fn ok(s: &str) -> Result<Vec<u8>, usize> {
    Ok(s.as_bytes().to_vec())
}

// stdio: messages are delimited by newlines.
#[test]
fn splits_on_newlines_and_keeps_partial_lines() {
    let mut d = LineDecoder::new();
    assert_eq!(d.max_line_len(), DEFAULT_MAX_LINE_LEN);
    d.feed(b"{\"a\":1}\n{\"b\"");
    assert_eq!(frames(&mut d), vec![ok("{\"a\":1}")]);
    assert_eq!(d.buffered_len(), 4);
    d.feed(b":2}\n{\"c\":3}\n");
    assert_eq!(frames(&mut d), vec![ok("{\"b\":2}"), ok("{\"c\":3}")]);
    assert_eq!(d.buffered_len(), 0);
}

// stdio, tolerated: `\r\n` line ends (one `\r` stripped, even split from its `\n`).
#[test]
fn crlf_is_tolerated_even_split_across_feeds() {
    let mut d = LineDecoder::new();
    d.feed(b"{\"a\":1}\r");
    assert!(frames(&mut d).is_empty());
    d.feed(b"\n{\"b\":2}\r\r\n");
    assert_eq!(frames(&mut d), vec![ok("{\"a\":1}"), ok("{\"b\":2}\r")]);
}

// stdio: a lone `\r` is not a delimiter (messages are delimited by `\n` only).
#[test]
fn lone_cr_is_not_a_delimiter() {
    assert_eq!(all(b"{}\r{}\n", 64), vec![ok("{}\r{}")]);
}

// Empty and whitespace-only lines are skipped silently.
#[test]
fn blank_lines_are_skipped() {
    assert_eq!(
        all(b"\n\r\n  \t \r\n{}\n\n\n \n[]", 64),
        vec![ok("{}"), ok("[]")]
    );
    assert!(all(b"\n\n\n \t\r\n", 64).is_empty());
}

// The stream's last line is a frame even without a final newline.
#[test]
fn finish_yields_the_unterminated_last_line() {
    let mut d = LineDecoder::new();
    d.feed(b"{}\n{\"x\":1}\r");
    assert_eq!(frames(&mut d), vec![ok("{}")]);
    assert_eq!(finish(&mut d), vec![ok("{\"x\":1}")]);
    assert_eq!(d.buffered_len(), 0);
    assert!(d.finish().is_none());
}

// Bounded line length: a too-long line is one TooLong item, then decoding continues.
#[test]
fn too_long_line_in_one_chunk_is_skipped() {
    let input = b"{\"a\":1}\n0123456789\n{\"b\":2}\n";
    assert_eq!(
        all(input, 9),
        vec![ok("{\"a\":1}"), Err(9), ok("{\"b\":2}")]
    );
    // The limit counts the line without its terminator: exactly the limit passes.
    assert_eq!(all(b"0123456789\r\n", 10), vec![ok("0123456789")]);
    assert_eq!(all(b"0123456789\r\n", 9), vec![Err(9)]);
    // Unterminated at the end of the stream.
    assert_eq!(all(b"0123456789", 9), vec![Err(9)]);
    assert_eq!(all(b"012345678\r", 9), vec![ok("012345678")]);
}

// Bounded memory: a 10 MiB line fed in 8 KiB chunks with a 1 MiB limit is never buffered
// whole; exactly one error is reported, and the next line is decoded.
#[test]
fn oversized_line_is_discarded_with_bounded_memory() {
    const LIMIT: usize = 1 << 20;
    const CHUNK: usize = 8 * 1024;
    let mut input = b"{\"first\":1}\n".to_vec();
    input.extend(std::iter::repeat_n(b'x', 10 << 20));
    input.extend_from_slice(b"\n{\"next\":2}\n");
    let mut d = LineDecoder::with_max_line_len(LIMIT);
    let mut out = Vec::new();
    let mut peak = 0;
    for chunk in input.chunks(CHUNK) {
        d.feed(chunk);
        peak = peak.max(d.buffered_len());
        out.extend(frames(&mut d));
        peak = peak.max(d.buffered_len());
        assert!(d.buffered_len() <= LIMIT + 1);
    }
    out.extend(finish(&mut d));
    assert!(peak <= LIMIT + 1 + CHUNK, "peak buffer {peak}");
    assert_eq!(
        out,
        vec![ok("{\"first\":1}"), Err(LIMIT), ok("{\"next\":2}")]
    );
}

#[test]
fn discarding_state_is_visible_and_ends_at_the_newline() {
    let mut d = LineDecoder::with_max_line_len(4);
    d.feed(b"abcdefgh");
    assert!(frames(&mut d).is_empty());
    assert!(d.is_discarding());
    assert_eq!(d.buffered_len(), 0);
    // Debug output shows the state, never the buffered bytes.
    assert_eq!(
        format!("{d:?}"),
        "LineDecoder { max_line_len: 4, buffered_len: 0, discarding: true, .. }"
    );
    d.feed(b"ijk\n{}\n");
    assert!(!d.is_discarding());
    assert_eq!(frames(&mut d), vec![Err(4), ok("{}")]);
}

// Invalid UTF-8 passes the framing and is reported by the JSON decoder as a parse error
// (-32700).
#[test]
fn invalid_utf8_is_left_to_the_json_decoder() {
    let frames = all(b"{\"jsonrpc\":\"2.0\",\"method\":\"\xff\"}\n", 64);
    assert_eq!(
        frames,
        vec![Ok(b"{\"jsonrpc\":\"2.0\",\"method\":\"\xff\"}".to_vec())]
    );
    let Ok(frame) = &frames[0] else { panic!() };
    let err = decode_line(&Decoder::new(), frame).unwrap_err();
    assert!(matches!(err, DecodeError::Parse(_)), "{err:?}");
    assert_eq!(err.to_error_object().code.0, -32700);
}

#[test]
fn decode_line_reads_one_message() {
    let m = decode_line(
        &Decoder::new(),
        br#"{"jsonrpc":"2.0","id":"a","method":"ping"}"#,
    )
    .unwrap();
    assert_eq!(m.method(), Some("ping"));
    assert!(decode_line(&Decoder::new(), b"[]").is_err());
}

// stdio: messages must not contain embedded newlines; the writer appends `message + "\n"`.
#[test]
fn writer_batches_messages_without_embedded_newlines() {
    let raw: Payload = serde_json::from_str("{\n  \"a\": \"x\\ny\"\r\n}").unwrap();
    let mut w = LineWriter::with_capacity(256);
    assert!(w.is_empty());
    w.push(&Message::from(Request::new(1, "tools/call", Some(raw))));
    w.push(&Message::from(Request::new(2, "ping", None)));
    let bytes = w.as_bytes().to_vec();
    assert_eq!(w.len(), bytes.len());
    assert_eq!(bytes.iter().filter(|&&b| b == b'\n').count(), 2);
    assert!(!bytes.contains(&b'\r'));
    let decoded = all(&bytes, 1024);
    assert_eq!(decoded.len(), 2);
    let first = decode_line(&Decoder::new(), decoded[0].as_ref().unwrap()).unwrap();
    let params = first.clone();
    let Message::Request(r) = params else {
        panic!()
    };
    assert_eq!(
        r.params.unwrap().into_value().unwrap(),
        serde_json::json!({"a": "x\ny"})
    );
    w.clear();
    assert!(w.is_empty());
}

// Async adapter: many messages per read, last line without newline, over a `&[u8]` reader.
#[tokio::test]
async fn reader_over_a_slice() {
    let input: &[u8] = b"{\"a\":1}\n\r\n{\"b\":2}\r\n{\"c\":3}";
    let mut r = LineReader::new(input);
    let mut got = Vec::new();
    while let Some(f) = timeout(T, r.next_frame()).await.unwrap() {
        got.push(f.unwrap());
    }
    assert_eq!(
        got,
        [&b"{\"a\":1}"[..], b"{\"b\":2}", b"{\"c\":3}"].map(Bytes::from_static)
    );
    assert!(timeout(T, r.next_frame()).await.unwrap().is_none());
}

// Async adapter over a duplex pipe: frames split across writes, messages decoded, a too-long
// line skipped, and EOF ends the stream.
#[tokio::test]
async fn reader_over_a_duplex_pipe() {
    let (client, mut server) = tokio::io::duplex(64);
    let decoder = LineDecoder::with_max_line_len(64);
    let mut r = LineReader::with_capacity(client, decoder, 16);
    let writer = tokio::spawn(async move {
        let mut w = LineWriter::new();
        w.push(&Message::from(Request::new(1, "ping", None)));
        w.push_encoded(&[b'x'; 200]);
        w.push(&Message::from(Request::new(2, "ping", None)));
        w.flush_to(&mut server).await.unwrap();
        server.write_all(b"{\"jsonrpc\":").await.unwrap();
        server
            .write_all(b"\"2.0\",\"method\":\"n\"}\n")
            .await
            .unwrap();
        server.shutdown().await.unwrap();
    });
    let d = Decoder::new();
    let first = timeout(T, r.next_message(&d)).await.unwrap().unwrap();
    assert_eq!(first.unwrap().unwrap().id(), Some(&1.into()));
    let skipped = timeout(T, r.next_message(&d)).await.unwrap().unwrap();
    assert!(matches!(skipped, Err(LineError::TooLong { limit: 64 })));
    let second = timeout(T, r.next_message(&d)).await.unwrap().unwrap();
    assert_eq!(second.unwrap().unwrap().id(), Some(&2.into()));
    let third = timeout(T, r.next_message(&d)).await.unwrap().unwrap();
    assert_eq!(third.unwrap().unwrap().method(), Some("n"));
    assert!(timeout(T, r.next_frame()).await.unwrap().is_none());
    assert!(r.decoder().buffered_len() <= 65);
    writer.await.unwrap();
}

// The reader waits for more bytes rather than yielding a partial line.
#[tokio::test]
async fn reader_waits_for_the_newline() {
    let (client, mut server) = tokio::io::duplex(1024);
    let mut r = LineReader::new(client);
    server.write_all(b"{\"a\"").await.unwrap();
    assert!(
        timeout(Duration::from_millis(50), r.next_frame())
            .await
            .is_err()
    );
    server.write_all(b":1}\n").await.unwrap();
    let f = timeout(T, r.next_frame()).await.unwrap().unwrap().unwrap();
    assert_eq!(&f[..], b"{\"a\":1}");
    drop(server);
    assert!(timeout(T, r.next_frame()).await.unwrap().is_none());
    let _inner = r.into_inner();
}

// An I/O error is reported as a frame error.
#[tokio::test]
async fn reader_reports_io_errors() {
    struct Failing;
    impl tokio::io::AsyncRead for Failing {
        fn poll_read(
            self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
            _: &mut tokio::io::ReadBuf<'_>,
        ) -> std::task::Poll<std::io::Result<()>> {
            std::task::Poll::Ready(Err(std::io::Error::other("boom")))
        }
    }
    let mut r = LineReader::new(Failing);
    let e = timeout(T, r.next_frame())
        .await
        .unwrap()
        .unwrap()
        .unwrap_err();
    assert!(matches!(e, LineError::Io(_)), "{e}");
}

proptest! {
    // Chunk-split invariance: any split of the input gives the same frames, and the buffer
    // stays within the limit.
    #[test]
    fn any_split_gives_the_same_frames(
        input in proptest::collection::vec(
            prop_oneof![Just(b'\n'), Just(b'\r'), Just(b' '), Just(b'{'), any::<u8>()], 0..400),
        cuts in proptest::collection::vec(0usize..400, 0..12),
        limit in 1usize..40,
    ) {
        let expected = all(&input, limit);
        let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(input.len())).collect();
        cuts.sort_unstable();
        let mut d = LineDecoder::with_max_line_len(limit);
        let mut got = Vec::new();
        let mut start = 0;
        for cut in cuts.into_iter().chain([input.len()]) {
            d.feed(&input[start..cut]);
            got.extend(frames(&mut d));
            prop_assert!(d.buffered_len() <= limit + 1);
            start = cut;
        }
        got.extend(finish(&mut d));
        prop_assert_eq!(&got, &expected);
        for frame in got.iter().flatten() {
            prop_assert!(frame.len() <= limit && !frame.contains(&b'\n'));
        }
    }
}
