//! Fuzz target: the body is `ferromcp_fuzz_bodies::jsonrpc_envelope`, which the
//! corpus-replay test (`crates/ferromcp-fuzz-bodies/tests/codec_corpus.rs`) also runs.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ferromcp_fuzz_bodies::jsonrpc_envelope(data);
});
