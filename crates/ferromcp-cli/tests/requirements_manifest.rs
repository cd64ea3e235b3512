//! Keeps `docs/requirements.md` honest: every test it names exists (a function with that name
//! under a test attribute in that file), every requirement row names at least one test, and
//! every test of the suites that exist to prove those requirements (the bad-input suites and
//! the fuzz corpus replays) is listed, so neither side can rot.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The test references (`path::name`) of the manifest, per requirement row.
fn manifest() -> Vec<(String, Vec<(String, String)>)> {
    let text = std::fs::read_to_string(root().join("docs/requirements.md")).unwrap();
    let mut rows = Vec::new();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix('|') else {
            continue;
        };
        let cells: Vec<&str> = rest.split('|').map(str::trim).collect();
        let id = cells.first().copied().unwrap_or_default();
        if id.is_empty() || id == "ID" || id.starts_with("---") {
            continue;
        }
        let tests_cell = cells.get(3).copied().unwrap_or_default();
        let refs = tests_cell
            .split('`')
            .skip(1)
            .step_by(2)
            .map(|r| {
                let (path, name) = r
                    .rsplit_once("::")
                    .unwrap_or_else(|| panic!("{id}: `{r}` is not path::test_name"));
                (path.to_owned(), name.to_owned())
            })
            .collect();
        rows.push((id.to_owned(), refs));
    }
    rows
}

/// The names of the test functions of a Rust file: `fn name(` after a `#[test]` or
/// `#[tokio::test…]` attribute (other attributes and doc comments may come between).
fn tests_in(path: &Path) -> BTreeSet<String> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut out = BTreeSet::new();
    let mut armed = false;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with("#[test]") || line.starts_with("#[tokio::test") {
            armed = true;
            continue;
        }
        if !armed {
            continue;
        }
        if line.starts_with("#[") || line.starts_with("//") || line.is_empty() {
            continue;
        }
        let sig = line.trim_start_matches("pub ").trim_start_matches("async ");
        if let Some(name) = sig.strip_prefix("fn ") {
            let name: String = name
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            out.insert(name);
        }
        armed = false;
    }
    out
}

#[test]
fn every_listed_test_exists() {
    let rows = manifest();
    assert!(
        rows.len() >= 20,
        "the manifest has only {} rows",
        rows.len()
    );
    let mut missing = Vec::new();
    for (id, refs) in &rows {
        assert!(!refs.is_empty(), "{id} names no test");
        for (path, name) in refs {
            let file = root().join(path);
            if !file.is_file() || !tests_in(&file).contains(name) {
                missing.push(format!("{id}: {path}::{name}"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "tests named in docs/requirements.md but not found:\n{}",
        missing.join("\n")
    );
}

#[test]
fn every_requirement_suite_test_is_listed() {
    let listed: BTreeSet<(String, String)> =
        manifest().into_iter().flat_map(|(_, refs)| refs).collect();
    let suites = [
        "crates/ferromcp-cli/tests/bad_input.rs",
        "crates/ferromcp-server/tests/http_bad_input.rs",
        "crates/ferromcp-server/tests/fuzz_corpus.rs",
        "crates/ferromcp-dispatch/tests/codec_corpus.rs",
    ];
    let mut unlisted = Vec::new();
    for suite in suites {
        let names = tests_in(&root().join(suite));
        assert!(!names.is_empty(), "{suite} has no tests");
        for name in names {
            if !listed.contains(&(suite.to_owned(), name.clone())) {
                unlisted.push(format!("{suite}::{name}"));
            }
        }
    }
    assert!(
        unlisted.is_empty(),
        "tests not listed in docs/requirements.md:\n{}",
        unlisted.join("\n")
    );
}

#[test]
fn the_parser_finds_tests() {
    // A self-check, so a parser bug cannot make the checks above pass vacuously.
    let names = tests_in(&root().join("crates/ferromcp-cli/tests/requirements_manifest.rs"));
    assert!(names.contains("every_listed_test_exists"), "{names:?}");
    assert!(!names.contains("tests_in"));
}
