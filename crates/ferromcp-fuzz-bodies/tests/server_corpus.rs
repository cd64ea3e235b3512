//! Replays the fuzz corpora of `ferromcp-server`'s targets (`fuzz/corpus/<target>/`) through
//! the fuzz target bodies, so every seed and every regression found by fuzzing is checked on
//! every test run, without a fuzzer. (`elicit_schema`'s corpus is replayed by a unit test in
//! `ferromcp-server`, `src/fuzzing.rs`, where its body lives.)

use ferromcp_fuzz_bodies as fuzzing;

fn replay(target: &str, body: fn(&[u8])) {
    fuzzing::replay_corpus(target, body);
}

// MCP 2026-07-28 "Streamable HTTP › Value Encoding" and "Custom Headers from Tool Parameters".
#[test]
fn header_codec_corpus() {
    replay("header_codec", fuzzing::header_codec);
}

// RFC 6570 levels 1–3 and the linear-time matcher (resources/read, V9 ReDoS).
#[test]
fn uri_template_corpus() {
    replay("uri_template", fuzzing::uri_template);
}

// Sealed requestState (MCP 2026-07-28 multi-round requests, BP26 state handles).
#[test]
fn request_state_corpus() {
    replay("request_state", fuzzing::request_state);
}

// Elicitation forms from Rust types and the check of the client's answer (E25).
#[test]
fn elicit_answer_corpus() {
    replay("elicit_answer", fuzzing::elicit_answer);
}
