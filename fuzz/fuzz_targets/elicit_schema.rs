//! Fuzz target: the body is `ferromcp_server::fuzzing::elicit_schema`, which a unit test of
//! `ferromcp-server` (`src/fuzzing.rs`) also runs on the corpus. That body needs the
//! crate-private schema → form builder, so it exists only in cargo-fuzz builds (`--cfg
//! fuzzing`); without that flag (a plain `cargo check` here) this target does nothing.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    #[cfg(fuzzing)]
    ferromcp_server::fuzzing::elicit_schema(data);
    #[cfg(not(fuzzing))]
    let _ = data;
});
