//! Repository automation for ferromcp.
//!
//! `cargo xtask codegen` regenerates `crates/ferromcp-types/src/tables/generated.rs` from the
//! vendored schema files under `spec/<version>/schema.json`; `cargo xtask codegen --check` exits
//! non-zero (and writes nothing) when the checked-in file is stale.

mod codegen;

use std::process::ExitCode;

const USAGE: &str = "usage: cargo xtask codegen [--check]";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    match args.as_slice() {
        ["codegen"] => report(codegen::run(false)),
        ["codegen", "--check"] => report(codegen::run(true)),
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
