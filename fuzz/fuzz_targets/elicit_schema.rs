//! Fuzz target: the body is `ferromcp_server::fuzzing::elicit_schema`, which the corpus-replay test
//! (`crates/ferromcp-server/tests/fuzz_corpus.rs`) also runs.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ferromcp_server::fuzzing::elicit_schema(data);
});
