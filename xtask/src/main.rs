//! Repository automation for ferromcp.
//!
//! `cargo xtask codegen` regenerates `crates/ferromcp-types/src/tables/generated.rs` from the
//! vendored schema files under `spec/<version>/schema.json`; `cargo xtask codegen --check` exits
//! non-zero (and writes nothing) when the checked-in file is stale.
//!
//! `cargo xtask layers` checks every crate's module layering against `xtask/src/layers/map.rs`
//! (no module names a layer it may not, no import cycle across layers); `--graph` also prints
//! the module graphs.
//!
//! `cargo xtask lines` fails on every Rust source file over 800 lines, generated files
//! (listed in `xtask/src/lines.rs`, each with the reason) excepted.

mod codegen;
mod layers;
mod lines;

use std::process::ExitCode;

const USAGE: &str =
    "usage: cargo xtask codegen [--check] | cargo xtask layers [--graph] | cargo xtask lines";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    match args.as_slice() {
        ["codegen"] => report(codegen::run(false)),
        ["codegen", "--check"] => report(codegen::run(true)),
        ["layers"] => report(layers::run(false)),
        ["layers", "--graph"] => report(layers::run(true)),
        ["lines"] => report(lines::run()),
        _ => {
            eprintln!("{USAGE}");
            ExitCode::from(2)
        }
    }
}

fn report(outcome: Result<String, String>) -> ExitCode {
    match outcome {
        Ok(message) => {
            eprintln!("{message}");
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}
