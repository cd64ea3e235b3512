//! Fuzz target: the body is `ferromcp_dispatch::codec::fuzzing::jsonrpc_envelope`, which the
//! corpus-replay test (`crates/ferromcp-dispatch/tests/codec_corpus.rs`) also runs.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ferromcp_dispatch::codec::fuzzing::jsonrpc_envelope(data);
});
