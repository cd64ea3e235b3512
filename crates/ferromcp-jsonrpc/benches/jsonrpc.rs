//! JSON-RPC envelope micro-benchmarks: decoding a typical `tools/call` request line and
//! encoding its response, the codec's share of every call a server answers.
//!
//! Run with `cargo bench -p ferromcp-jsonrpc --bench jsonrpc`. For instruction counts (what the
//! performance budget is stated in), run the bench binary under
//! `valgrind --tool=callgrind` with `--bench --profile-time 1` and read the inclusive cost of
//! `Decoder::decode_message` and `Message::write_to`.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use ferromcp_jsonrpc::{Decoder, Message, Payload, RawJson, RequestId};
use serde_json::json;

/// The request line a client sends for a `tools/call` of `echo`.
const REQUEST: &[u8] = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}"#;

/// The result a server answers it with.
fn result() -> serde_json::Value {
    json!({"content": [{"type": "text", "text": "hello"}]})
}

fn decode(c: &mut Criterion) {
    let decoder = Decoder::new();
    assert!(matches!(
        decoder.decode_message(REQUEST),
        Ok(Message::Request(_))
    ));
    c.bench_function("jsonrpc/decode tools/call request", |b| {
        b.iter(|| decoder.decode_message(black_box(REQUEST)))
    });
    // The same message with a key repeated inside `params`: the full path and its error.
    let duplicate =
        br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","name":"x"}}"#;
    assert!(decoder.decode_message(duplicate).is_err());
    c.bench_function("jsonrpc/decode duplicate key (rejected)", |b| {
        b.iter(|| decoder.decode_message(black_box(duplicate)))
    });
}

fn encode(c: &mut Criterion) {
    let value = Message::response(RequestId::from(7), result());
    let raw = RawJson::from_string(result().to_string()).map(Payload::Raw);
    let raw = Message::response(RequestId::from(7), raw.unwrap_or_else(|_| result().into()));
    assert_eq!(value.to_vec(), raw.to_vec());
    let mut out = Vec::with_capacity(256);
    c.bench_function("jsonrpc/encode tools/call response (value)", |b| {
        b.iter(|| {
            out.clear();
            black_box(&value).write_to(&mut out);
            black_box(out.len())
        })
    });
    c.bench_function("jsonrpc/encode tools/call response (raw)", |b| {
        b.iter(|| {
            out.clear();
            black_box(&raw).write_to(&mut out);
            black_box(out.len())
        })
    });
}

criterion_group!(benches, decode, encode);
criterion_main!(benches);
