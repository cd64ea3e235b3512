//! Fuzz target: the body is `ferromcp_fuzz_bodies::elicit_answer`, which the corpus-replay test
//! (`crates/ferromcp-fuzz-bodies/tests/server_corpus.rs`) also runs.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ferromcp_fuzz_bodies::elicit_answer(data);
});
