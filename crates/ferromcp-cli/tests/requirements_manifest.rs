//! Keeps `docs/requirements.md` honest: every test it names exists (a function with that name
//! under a test attribute in that file), every claimed requirement row names at least one
//! test, every test of the suites that exist to prove those requirements (bad input, corpus
//! replays, faults, load, security, the malicious server, SSRF, process faults) is listed, and
//! every requirement a test names (an `SV-..`/`CL-..` id anywhere in a test file, or an id
//! like `f01_` starting a test's name) is a row of the manifest, so neither side can rot.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The heading of the section whose rows name no test (each says why not).
const DECLINED: &str = "## Deliberately not implemented";

/// A claimed row: its id and its test references (`path`, `name`).
type Row = (String, Vec<(String, String)>);

/// The test references (`path::name`) of the manifest, per claimed requirement row.
fn manifest() -> Vec<Row> {
    rows().0
}

/// The claimed rows (with their tests), and the ids of the declined rows.
fn rows() -> (Vec<Row>, Vec<String>) {
    let text = std::fs::read_to_string(root().join("docs/requirements.md")).unwrap();
    let mut rows = Vec::new();
    let mut declined = Vec::new();
    let mut in_declined = false;
    for line in text.lines() {
        if line.starts_with("## ") {
            in_declined = line.starts_with(DECLINED);
        }
        let Some(rest) = line.strip_prefix('|') else {
            continue;
        };
        let cells: Vec<&str> = rest.split('|').map(str::trim).collect();
        let id = cells.first().copied().unwrap_or_default();
        if id.is_empty() || id == "ID" || id.starts_with("---") {
            continue;
        }
        if in_declined {
            declined.push(id.to_owned());
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
    (rows, declined)
}

/// Every `.rs` file under `dir`, recursively.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The `SV-X00` / `CL-X00` ids in `text`.
fn checklist_ids(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let bytes = text.as_bytes();
    for (i, w) in bytes.windows(6).enumerate() {
        let prefix = &w[..3];
        let boundary = i == 0 || !bytes[i - 1].is_ascii_alphanumeric();
        let end = bytes.get(i + 6).is_none_or(|b| !b.is_ascii_alphanumeric());
        if (prefix == b"SV-" || prefix == b"CL-")
            && boundary
            && end
            && w[3].is_ascii_uppercase()
            && w[4].is_ascii_digit()
            && w[5].is_ascii_digit()
        {
            out.insert(String::from_utf8_lossy(w).into_owned());
        }
    }
    out
}

/// The ids a test's name starts with: `f01_f05_disconnect` names F01 and F05.
fn name_ids(name: &str) -> Vec<String> {
    name.split('_')
        .take_while(|seg| {
            let b = seg.as_bytes();
            b.len() == 3
                && b[0].is_ascii_lowercase()
                && b[1].is_ascii_digit()
                && b[2].is_ascii_digit()
        })
        .map(str::to_ascii_uppercase)
        .collect()
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
        "crates/ferromcp-http-server/tests/http_bad_input.rs",
        "crates/ferromcp-fuzz-bodies/tests/server_corpus.rs",
        "crates/ferromcp-fuzz-bodies/tests/codec_corpus.rs",
        "crates/ferromcp-server/src/fuzzing.rs",
        "crates/ferromcp-http-server/tests/faults.rs",
        "crates/ferromcp-http-server/tests/load.rs",
        "crates/ferromcp-http-server/tests/security.rs",
        "crates/ferromcp-client/tests/malicious_server.rs",
        "crates/ferromcp-client/tests/oauth_ssrf.rs",
        "crates/ferromcp-client/tests/http_faults.rs",
        "crates/ferromcp-cli/tests/process_faults.rs",
        "crates/ferromcp-cli/tests/inspect_web.rs",
        "crates/ferromcp-cli/tests/inspect_web_wiring.rs",
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

/// The other direction: a test that names a requirement (an `SV-..`/`CL-..` id anywhere in a
/// test file, or an id starting a test's name) names one the manifest lists, claimed or
/// declined.
#[test]
fn every_requirement_a_test_names_is_listed() {
    let (claimed, declined) = rows();
    let listed: BTreeSet<String> = claimed
        .into_iter()
        .map(|(id, _)| id)
        .chain(declined)
        .collect();
    let mut files = Vec::new();
    for krate in std::fs::read_dir(root().join("crates")).unwrap() {
        rust_files(&krate.unwrap().path().join("tests"), &mut files);
    }
    assert!(files.len() > 20, "only {} test files found", files.len());
    let mut unknown = Vec::new();
    // This file spells ids in its own docs and self-checks.
    files.retain(|f| !f.ends_with("ferromcp-cli/tests/requirements_manifest.rs"));
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let rel = file
            .strip_prefix(root())
            .unwrap_or(&file)
            .display()
            .to_string();
        for id in checklist_ids(&text) {
            if !listed.contains(&id) {
                unknown.push(format!("{rel}: {id}"));
            }
        }
        for name in tests_in(&file) {
            for id in name_ids(&name) {
                if !listed.contains(&id) {
                    unknown.push(format!("{rel}::{name}: {id}"));
                }
            }
        }
    }
    assert!(
        unknown.is_empty(),
        "requirements named by tests but not listed in docs/requirements.md:\n{}",
        unknown.join("\n")
    );
}

#[test]
fn the_id_scanners_find_ids() {
    // Self-checks, so a scanner bug cannot make the check above pass vacuously.
    let ids = checklist_ids("covers SV-H09 and (CL-U05), not XSV-H01 nor SV-H1 nor SV-h01");
    assert_eq!(ids.into_iter().collect::<Vec<_>>(), ["CL-U05", "SV-H09"]);
    assert_eq!(name_ids("f01_f05_disconnect_resumes"), ["F01", "F05"]);
    assert!(name_ids("rung1_uses_the_version").is_empty());
    assert!(name_ids("b2b_flow").is_empty());
    let (claimed, declined) = rows();
    assert!(claimed.iter().any(|(id, _)| id == "F01"));
    assert!(declined.iter().any(|id| id == "SV-A10"), "{declined:?}");
}

#[test]
fn the_parser_finds_tests() {
    // A self-check, so a parser bug cannot make the checks above pass vacuously.
    let names = tests_in(&root().join("crates/ferromcp-cli/tests/requirements_manifest.rs"));
    assert!(names.contains("every_listed_test_exists"), "{names:?}");
    assert!(!names.contains("tests_in"));
}
