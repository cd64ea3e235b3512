//! Replays the fuzz corpora of the codec targets (`fuzz/corpus/<target>/`: `ferromcp-dispatch`'s
//! line and SSE codecs, the JSON-RPC envelope decoder) through the fuzz target bodies, so every
//! seed and every regression found by fuzzing is checked on every test run, without a fuzzer.

use std::path::PathBuf;

use ferromcp_fuzz_bodies as fuzzing;

fn replay(target: &str, body: fn(&[u8])) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("the corpus directory is readable")
        .map(|entry| entry.expect("a corpus entry is readable").path())
        .filter(|path| path.is_file())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no corpus in {}", dir.display());
    for path in files {
        let data = std::fs::read(&path).expect("a corpus file is readable");
        let outcome = std::panic::catch_unwind(|| body(&data));
        assert!(outcome.is_ok(), "{target}: {} fails", path.display());
    }
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
