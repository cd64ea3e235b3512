//! `cargo xtask lines`: no Rust source file of the repository is longer than [`MAX_LINES`]
//! lines (the project standard: "Source files stay under 800 lines, outside generated
//! tables"), so every file stays one a reader can hold.
//!
//! The files checked are the `.rs` files under [`ROOTS`], recursively. Build output is not
//! source: directories named `target` (cargo's, wherever `CARGO_TARGET_DIR` is not set) and
//! hidden directories (`.git`, `.cargo`, ...) are skipped; `.ci/` (its `tools/` holds
//! downloaded tools, not ours) is not under a root. Generated files are exempt only when they
//! are named in [`GENERATED`] with the reason, rather than recognised by a marker or a name
//! pattern a hand-written file could copy; an entry whose file is gone fails the check, so the
//! list cannot go stale.

use std::fs;
use std::path::Path;

/// The most lines a source file may have.
pub(crate) const MAX_LINES: usize = 800;

/// The directories (from the workspace root) whose `.rs` files are checked.
const ROOTS: [&str; 5] = ["crates", "bench", "xtask", "examples", "fuzz"];

/// Generated files (path from the workspace root, why it is exempt): not held to the limit.
const GENERATED: &[(&str, &str)] = &[(
    "crates/ferromcp-types/src/tables/generated.rs",
    "written by `cargo xtask codegen` from spec/*/schema.json (one node per line); \
     `cargo xtask codegen --check` keeps it current",
)];

/// Checks the workspace.
pub(crate) fn run() -> Result<String, String> {
    run_in(&crate::codegen::workspace_root())
}

/// [`run`] against the tree at `root`.
fn run_in(root: &Path) -> Result<String, String> {
    let mut files = Vec::new();
    for dir in ROOTS {
        collect(root, &root.join(dir), &mut files)?;
    }
    files.sort();
    let missing: Vec<&str> = GENERATED
        .iter()
        .map(|(path, _)| *path)
        .filter(|path| !root.join(path).is_file())
        .collect();
    let over = over_limit(&files);
    if over.is_empty() && missing.is_empty() {
        return Ok(format!(
            "{} Rust files, none over {MAX_LINES} lines ({} generated file(s) exempt)",
            files.len(),
            GENERATED.len()
        ));
    }
    let mut lines = Vec::new();
    for (path, count) in &over {
        lines.push(format!("{path}: {count} lines (the limit is {MAX_LINES})"));
    }
    for path in missing {
        lines.push(format!(
            "{path}: listed as generated in xtask/src/lines.rs but not found; remove the entry"
        ));
    }
    lines.push(
        "split each file by topic (a test file becomes tests/NAME/main.rs with modules); a \
         generated file goes in GENERATED in xtask/src/lines.rs with the reason"
            .to_owned(),
    );
    Err(lines.join("\n"))
}

/// Whether a directory named `name` is skipped: build output or hidden.
fn skipped_dir(name: &str) -> bool {
    name == "target" || name.starts_with('.')
}

/// Adds every `.rs` file under `dir` (path from `root` with `/` separators, line count).
fn collect(root: &Path, dir: &Path, out: &mut Vec<(String, usize)>) -> Result<(), String> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Ok(());
    };
    for entry in entries {
        let entry = entry.map_err(|e| format!("{}: {e}", dir.display()))?;
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let kind = entry
            .file_type()
            .map_err(|e| format!("{}: {e}", path.display()))?;
        if kind.is_dir() {
            if !skipped_dir(&name) {
                collect(root, &path, out)?;
            }
        } else if kind.is_file() && name.ends_with(".rs") {
            let text = fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            let rel = path.strip_prefix(root).unwrap_or(&path);
            let rel: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            out.push((rel.join("/"), text.lines().count()));
        }
    }
    Ok(())
}

/// The files over [`MAX_LINES`] that [`GENERATED`] does not exempt.
fn over_limit(files: &[(String, usize)]) -> Vec<(String, usize)> {
    files
        .iter()
        .filter(|(path, count)| {
            *count > MAX_LINES && !GENERATED.iter().any(|(generated, _)| generated == path)
        })
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limit_and_the_exemptions() {
        let files = vec![
            ("crates/a/src/lib.rs".to_owned(), MAX_LINES),
            ("crates/a/tests/big.rs".to_owned(), MAX_LINES + 1),
            (GENERATED[0].0.to_owned(), 10 * MAX_LINES),
        ];
        assert_eq!(
            over_limit(&files),
            [("crates/a/tests/big.rs".to_owned(), MAX_LINES + 1)]
        );
    }

    #[test]
    fn build_output_and_hidden_directories_are_skipped() {
        assert!(skipped_dir("target"));
        assert!(skipped_dir(".git"));
        assert!(!skipped_dir("tests"));
        assert!(!skipped_dir("targets"));
    }

    /// A tree with one long file under `crates/`, the same file under a `target/` directory,
    /// a hidden directory and outside the roots, and the generated file: only the first fails.
    #[test]
    fn a_tree_with_one_long_file() {
        let tmp = std::env::temp_dir().join(format!("ferromcp-xtask-lines-{}", std::process::id()));
        let long = "fn f() {}\n".repeat(MAX_LINES + 1);
        for path in [
            "crates/a/src/long.rs",
            "crates/a/target/debug/build/out.rs",
            "fuzz/.hidden/long.rs",
            ".ci/tools/long.rs",
            GENERATED[0].0,
        ] {
            let path = tmp.join(path);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, &long).unwrap();
        }
        fs::write(tmp.join("crates/a/src/lib.rs"), "mod long;\n").unwrap();

        let err = run_in(&tmp).unwrap_err();
        let failing: Vec<&str> = err.lines().filter(|l| l.contains(" lines (")).collect();
        assert_eq!(
            failing,
            [format!(
                "crates/a/src/long.rs: {} lines (the limit is {MAX_LINES})",
                MAX_LINES + 1
            )]
        );

        fs::write(
            tmp.join("crates/a/src/long.rs"),
            "fn f() {}\n".repeat(MAX_LINES),
        )
        .unwrap();
        assert!(run_in(&tmp).is_ok());

        fs::remove_file(tmp.join(GENERATED[0].0)).unwrap();
        let err = run_in(&tmp).unwrap_err();
        assert!(err.contains("listed as generated"), "{err}");
        fs::remove_dir_all(&tmp).unwrap();
    }

    #[test]
    fn the_workspace_passes() {
        run().unwrap();
    }
}
