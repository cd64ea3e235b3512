//! The bodies of the fuzz targets in `fuzz/`, shared with the corpus-replay tests
//! (`tests/codec_corpus.rs`, `tests/server_corpus.rs`) so that every corpus file is checked on
//! every test run, without a fuzzer.
//!
//! Each function takes arbitrary bytes and asserts the invariants of the code under test; a
//! panic is a finding. They use the libraries' public API only; the one body that needs a
//! crate-private item, `elicit_schema`, stays in `ferromcp-server` (see its `src/fuzzing.rs`).
//! Not published, not a stable API.

mod codec;
mod server;

pub use codec::{envelope_differential, jsonrpc_envelope, line_codec, sse_parser};
pub use server::{
    elicit_answer, header_codec, header_codec_with, reference_encode_header_value, request_state,
    uri_template,
};
