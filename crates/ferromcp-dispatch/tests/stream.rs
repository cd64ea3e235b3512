//! The newline-delimited stream transport (MCP "Transports › stdio": messages are delimited by
//! newlines and contain no embedded newlines; JSON-RPC 2.0 §5.1: a frame that is not JSON is a
//! parse error, -32700 with a null id).
#![allow(clippy::unwrap_used, clippy::panic)]

use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use ferromcp_dispatch::{
    LineSink, LineSource, LineTransportConfig, MessageSink, MessageSource, TransportClosed,
    line_transport,
};
use ferromcp_jsonrpc::{DecodeError, Message, Notification, Request, RequestId};
use serde_json::json;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, DuplexStream, ReadBuf};
use tokio::time::timeout;

const LIMIT: Duration = Duration::from_secs(10);

fn request(id: i64, method: &str) -> Message {
    Message::from(Request::new(id, method, None))
}

/// A transport over one end of a duplex pipe; the other end is returned raw.
fn transport(config: LineTransportConfig) -> (LineSource, LineSink, DuplexStream) {
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    let (read, write) = tokio::io::split(ours);
    let (source, sink) = line_transport(read, write, config);
    (source, sink, theirs)
}

async fn next(source: &mut LineSource) -> Option<Result<Message, DecodeError>> {
    timeout(LIMIT, source.recv())
        .await
        .unwrap()
        .map(|r| r.map(|m| m.message))
}

#[tokio::test]
async fn messages_round_trip_between_two_transports() {
    timeout(LIMIT, async {
        let (a, b) = tokio::io::duplex(1024);
        let (ar, aw) = tokio::io::split(a);
        let (br, bw) = tokio::io::split(b);
        let (mut a_source, a_sink) = line_transport(ar, aw, LineTransportConfig::default());
        let (mut b_source, b_sink) = line_transport(br, bw, LineTransportConfig::default());

        a_sink.send(request(1, "tools/list").into()).await.unwrap();
        a_sink
            .send(Message::from(Notification::new("notifications/initialized", None)).into())
            .await
            .unwrap();
        let got = next(&mut b_source).await.unwrap().unwrap();
        assert_eq!(got.method(), Some("tools/list"));
        assert_eq!(got.id(), Some(&RequestId::Number(1)));
        let got = next(&mut b_source).await.unwrap().unwrap();
        assert_eq!(got.method(), Some("notifications/initialized"));

        b_sink
            .send(Message::response(RequestId::Number(1), json!({"tools": []})).into())
            .await
            .unwrap();
        let Message::Response(r) = next(&mut a_source).await.unwrap().unwrap() else {
            panic!("expected a response");
        };
        assert_eq!(r.id, RequestId::Number(1));
        assert_eq!(r.result.to_json_string(), r#"{"tools":[]}"#);
    })
    .await
    .unwrap();
}

/// Counts the write and flush calls reaching the underlying writer, and keeps the bytes.
#[derive(Clone, Default)]
struct Counting {
    writes: Arc<AtomicUsize>,
    flushes: Arc<AtomicUsize>,
    bytes: Arc<Mutex<Vec<u8>>>,
}

impl AsyncWrite for Counting {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.writes.fetch_add(1, Ordering::SeqCst);
        self.bytes.lock().unwrap().extend_from_slice(buf);
        Poll::Ready(Ok(buf.len()))
    }
    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.flushes.fetch_add(1, Ordering::SeqCst);
        Poll::Ready(Ok(()))
    }
    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

async fn burst(senders: usize) -> (usize, usize) {
    let counting = Counting::default();
    let (_source, sink) = line_transport(
        tokio::io::empty(),
        counting.clone(),
        LineTransportConfig::default(),
    );
    let per_sender = 1000 / senders;
    let mut tasks = Vec::new();
    for s in 0..senders {
        let sink = sink.clone();
        tasks.push(tokio::spawn(async move {
            for i in 0..per_sender {
                let id = (s * per_sender + i) as i64;
                sink.send(request(id, "ping").into()).await.unwrap();
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    sink.close().await.unwrap();
    let bytes = counting.bytes.lock().unwrap().clone();
    let lines: Vec<&[u8]> = bytes
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .collect();
    assert_eq!(lines.len(), 1000);
    for line in lines {
        assert_eq!(Message::from_slice(line).unwrap().method(), Some("ping"));
    }
    (
        counting.writes.load(Ordering::SeqCst),
        counting.flushes.load(Ordering::SeqCst),
    )
}

#[tokio::test]
async fn a_burst_of_a_thousand_messages_is_written_in_a_few_writes() {
    let (writes, flushes) = timeout(LIMIT, burst(1)).await.unwrap();
    eprintln!("current-thread burst: 1000 messages, {writes} writes, {flushes} flushes");
    // One writer wake-up per run of the sending task: tokio's cooperative budget makes the
    // sender yield every 128 sends, so about 8 bursts (measured: 8 writes, 9 flushes).
    assert!(writes <= 16, "{writes} writes for 1000 messages");
    assert!(flushes <= 17, "{flushes} flushes for 1000 messages");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_concurrent_burst_is_batched_too() {
    let (writes, flushes) = timeout(LIMIT, burst(4)).await.unwrap();
    eprintln!("multi-thread burst (4 senders): 1000 messages, {writes} writes, {flushes} flushes");
    assert!(writes < 250, "{writes} writes for 1000 messages");
}

#[tokio::test]
async fn an_oversized_line_is_one_error_and_the_stream_goes_on() {
    timeout(LIMIT, async {
        let (mut source, _sink, mut peer) =
            transport(LineTransportConfig::default().max_line_len(1024));
        let writer = tokio::spawn(async move {
            // 8 MiB without a newline, in chunks: the transport must drop it as it arrives.
            let chunk = vec![b'x'; 64 * 1024];
            for _ in 0..128 {
                peer.write_all(&chunk).await.unwrap();
            }
            peer.write_all(b"\n{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}\n")
                .await
                .unwrap();
            peer
        });
        let err = next(&mut source).await.unwrap().unwrap_err();
        assert_eq!(
            err,
            DecodeError::Parse("line longer than 1024 bytes".into())
        );
        assert_eq!(err.to_response().error.code.0, -32700);
        assert_eq!(err.to_response().id, None);
        let ok = next(&mut source).await.unwrap().unwrap();
        assert_eq!(ok.id(), Some(&RequestId::Number(7)));
        drop(writer.await.unwrap());
        assert!(next(&mut source).await.is_none());
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn malformed_json_is_a_parse_error_item_and_the_stream_goes_on() {
    timeout(LIMIT, async {
        let (mut source, _sink, mut peer) = transport(LineTransportConfig::default());
        peer.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\n")
            .await
            .unwrap();
        peer.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n")
            .await
            .unwrap();
        let err = next(&mut source).await.unwrap().unwrap_err();
        assert!(matches!(err, DecodeError::Parse(_)), "{err:?}");
        assert_eq!(err.to_response().id, None);
        assert_eq!(
            next(&mut source).await.unwrap().unwrap().id(),
            Some(&RequestId::Number(2))
        );
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn invalid_utf8_is_a_parse_error() {
    timeout(LIMIT, async {
        let (mut source, _sink, mut peer) = transport(LineTransportConfig::default());
        peer.write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"\xff\xfe\"}\n")
            .await
            .unwrap();
        let err = next(&mut source).await.unwrap().unwrap_err();
        assert!(matches!(err, DecodeError::Parse(_)), "{err:?}");
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn valid_json_that_is_no_message_is_invalid_and_too_deep_is_reported() {
    timeout(LIMIT, async {
        let (mut source, _sink, mut peer) = transport(LineTransportConfig::default().max_depth(4));
        peer.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":3}\n")
            .await
            .unwrap();
        peer.write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":{\"a\":[[[1]]]}}\n")
            .await
            .unwrap();
        let err = next(&mut source).await.unwrap().unwrap_err();
        assert!(matches!(err, DecodeError::Invalid { .. }), "{err:?}");
        let err = next(&mut source).await.unwrap().unwrap_err();
        assert_eq!(err, DecodeError::TooDeep { limit: 4 });
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn eof_ends_the_stream_and_a_last_unterminated_line_is_read() {
    timeout(LIMIT, async {
        let (mut source, _sink, mut peer) = transport(LineTransportConfig::default());
        peer.write_all(b"\r\n  \n{\"jsonrpc\":\"2.0\",\"method\":\"last\"}")
            .await
            .unwrap();
        drop(peer);
        assert_eq!(
            next(&mut source).await.unwrap().unwrap().method(),
            Some("last")
        );
        assert!(next(&mut source).await.is_none());
        assert!(next(&mut source).await.is_none());
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn batches_are_refused_by_default_and_split_when_allowed() {
    timeout(LIMIT, async {
        let batch = b"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"},{\"bad\":1},{\"jsonrpc\":\"2.0\",\"method\":\"b\"}]\n";

        let (mut source, _sink, mut peer) = transport(LineTransportConfig::default());
        peer.write_all(batch).await.unwrap();
        drop(peer);
        let err = next(&mut source).await.unwrap().unwrap_err();
        assert!(matches!(err, DecodeError::Invalid { id: None, .. }), "{err:?}");
        assert!(next(&mut source).await.is_none());

        let (mut source, _sink, mut peer) = transport(LineTransportConfig::default().allow_batches(true));
        peer.write_all(batch).await.unwrap();
        peer.write_all(b"[]\n").await.unwrap();
        drop(peer);
        assert_eq!(next(&mut source).await.unwrap().unwrap().method(), Some("a"));
        assert!(next(&mut source).await.unwrap().is_err());
        assert_eq!(next(&mut source).await.unwrap().unwrap().method(), Some("b"));
        let err = next(&mut source).await.unwrap().unwrap_err();
        assert!(matches!(err, DecodeError::Invalid { .. }), "empty batch: {err:?}");
        assert!(next(&mut source).await.is_none());
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn outbound_messages_are_one_compact_line_each() {
    timeout(LIMIT, async {
        let (_source, sink, mut peer) = transport(LineTransportConfig::default());
        let params = ferromcp_jsonrpc::Payload::from_value(json!({"text": "a\nb"}));
        sink.send(Message::from(Request::new(1, "echo", Some(params))).into())
            .await
            .unwrap();
        sink.send(request(2, "ping").into()).await.unwrap();
        drop(sink);
        let mut out = String::new();
        peer.read_to_string(&mut out).await.unwrap();
        assert_eq!(
            out,
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\",\"params\":{\"text\":\"a\\nb\"}}\n\
             {\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n"
        );
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn close_flushes_shuts_down_and_refuses_later_sends() {
    timeout(LIMIT, async {
        let (_source, sink, mut peer) = transport(LineTransportConfig::default());
        let other = sink.clone();
        sink.send(request(1, "ping").into()).await.unwrap();
        sink.close().await.unwrap();
        assert!(other.is_closed());
        assert_eq!(
            other.send(request(2, "ping").into()).await,
            Err(TransportClosed)
        );
        assert_eq!(other.close().await, Err(TransportClosed));
        let mut out = String::new();
        peer.read_to_string(&mut out).await.unwrap(); // EOF: the write half was shut down.
        assert_eq!(out, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n");
    })
    .await
    .unwrap();
}

/// A writer that always fails.
struct Broken;

impl AsyncWrite for Broken {
    fn poll_write(self: Pin<&mut Self>, _: &mut Context<'_>, _: &[u8]) -> Poll<io::Result<usize>> {
        Poll::Ready(Err(io::ErrorKind::BrokenPipe.into()))
    }
    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[tokio::test]
async fn after_the_writer_fails_send_returns_transport_closed() {
    timeout(LIMIT, async {
        let (_source, sink) =
            line_transport(tokio::io::empty(), Broken, LineTransportConfig::default());
        // The first message may be accepted before the writer finds out; soon sends fail.
        let mut result = Ok(());
        for _ in 0..100 {
            result = sink.send(request(1, "ping").into()).await;
            if result.is_err() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(result, Err(TransportClosed));
        assert!(sink.is_closed());
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn when_the_peer_stops_reading_send_returns_transport_closed() {
    timeout(LIMIT, async {
        let (_source, sink, peer) = transport(LineTransportConfig::default());
        drop(peer);
        let mut result = Ok(());
        for _ in 0..100 {
            result = sink.send(request(1, "ping").into()).await;
            if result.is_err() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(result, Err(TransportClosed));
    })
    .await
    .unwrap();
}

/// A writer whose writes never complete.
struct Stuck;

impl AsyncWrite for Stuck {
    fn poll_write(self: Pin<&mut Self>, _: &mut Context<'_>, _: &[u8]) -> Poll<io::Result<usize>> {
        Poll::Pending
    }
    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Pending
    }
    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Pending
    }
}

/// A reader that never yields.
struct Silent;

impl AsyncRead for Silent {
    fn poll_read(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        _: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Poll::Pending
    }
}

#[tokio::test]
async fn a_full_queue_applies_backpressure() {
    timeout(LIMIT, async {
        let capacity = 4;
        let (_source, sink) = line_transport(
            Silent,
            Stuck,
            LineTransportConfig::default().outbound_capacity(capacity),
        );
        let mut accepted = 0;
        while timeout(
            Duration::from_millis(200),
            sink.send(request(accepted, "ping").into()),
        )
        .await
        .is_ok()
        {
            accepted += 1;
            assert!(accepted <= 100, "send never blocked");
        }
        // The queue holds `capacity`; the writer took at most one queue's worth into the write
        // that never completes.
        let accepted = accepted as usize;
        assert!(
            (capacity..=2 * capacity).contains(&accepted),
            "{accepted} accepted"
        );
        assert!(!sink.is_closed());
    })
    .await
    .unwrap();
}
