//! Fuzz target: the body is `ferromcp_fuzz_bodies::uri_template`, which the corpus-replay test
//! (`crates/ferromcp-fuzz-bodies/tests/server_corpus.rs`) also runs.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ferromcp_fuzz_bodies::uri_template(data);
});
