//! The compile errors of `#[tool]`, pinned (`tests/ui/*.rs` and their `.stderr`).
//!
//! The expected output depends on the compiler's version; after a toolchain update,
//! regenerate it with `TRYBUILD=overwrite cargo test -p ferromcp-macros --test trybuild` and
//! review the diff.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
