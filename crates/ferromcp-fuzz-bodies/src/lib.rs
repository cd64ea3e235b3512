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

/// Runs `body` on every file of the fuzz corpus `fuzz/corpus/<target>/`, in name order, so
/// that every seed and every regression found by fuzzing is checked on every test run;
/// panics naming the file whose input fails (or when the corpus is missing or empty).
pub fn replay_corpus(target: &str, body: fn(&[u8])) {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(target);
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(&dir)
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
