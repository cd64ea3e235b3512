//! Replays the fuzz corpora of the codec targets (`fuzz/corpus/<target>/`: `ferromcp-dispatch`'s
//! line and SSE codecs, the JSON-RPC envelope decoder) through the fuzz target bodies, so every
//! seed and every regression found by fuzzing is checked on every test run, without a fuzzer.

use ferromcp_fuzz_bodies as fuzzing;

fn replay(target: &str, body: fn(&[u8])) {
    fuzzing::replay_corpus(target, body);
}

// MCP "Transports › stdio" framing.
#[test]
fn line_codec_corpus() {
    replay("line_codec", fuzzing::line_codec);
}

// WHATWG HTML §9.2 event streams.
#[test]
fn sse_parser_corpus() {
    replay("sse_parser", fuzzing::sse_parser);
}

// JSON-RPC 2.0 envelopes: decode → encode → decode.
#[test]
fn jsonrpc_envelope_corpus() {
    replay("jsonrpc_envelope", fuzzing::jsonrpc_envelope);
}

// JSON-RPC 2.0 envelopes against serde_json.
#[test]
fn envelope_differential_corpus() {
    replay("envelope_differential", fuzzing::envelope_differential);
}
