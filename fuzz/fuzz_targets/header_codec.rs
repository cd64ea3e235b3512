//! Fuzz target: the body is `ferromcp_fuzz_bodies::header_codec_with`, run with the
//! spec's reference encoder (as the corpus-replay test `crates/ferromcp-fuzz-bodies/
//! tests/server_corpus.rs` does) and with the client's encoder, so a value the client encodes is
//! one the server decodes back.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ferromcp_fuzz_bodies::header_codec(data);
    ferromcp_fuzz_bodies::header_codec_with(
        data,
        &ferromcp_client::transport::http::encode_header_value,
    );
});
