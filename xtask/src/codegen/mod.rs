//! `cargo xtask codegen`: the (method, version) tables of `ferromcp-types`.
//!
//! For every vendored revision the generator reads `spec/<version>/schema.json`, collects the
//! members (after correcting the published schema's known errors, `errata.rs`) of the
//! `ClientRequest`, `ClientNotification`, `ServerRequest` and
//! `ServerNotification` unions (by their `method` constant), pairs each request with its result
//! type, keeps the definitions reachable from those params and results (stripped of
//! documentation-only keywords), compiles them into the node tables the runtime interprets
//! (`nodes/`), and writes one Rust file with sorted method slices, a perfect hash of the
//! method names, and per revision the method entries and the static node array. The output is
//! piped through `rustfmt` (the node arrays are `#[rustfmt::skip]`, one node per line), so it
//! is stable under `cargo fmt`.

mod emit;
mod errata;
mod extract;
mod nodes;

use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The revisions read, oldest first (the directories under `spec/`).
pub(crate) const VERSIONS: [&str; 5] = [
    "2024-11-05",
    "2025-03-26",
    "2025-06-18",
    "2025-11-25",
    "2026-07-28",
];

/// The generated file, relative to the workspace root.
pub(crate) const OUTPUT: &str = "crates/ferromcp-types/src/tables/generated.rs";

/// The workspace root (the parent of the `xtask` package).
pub(crate) fn workspace_root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().unwrap_or(manifest).to_path_buf()
}

/// Regenerates the tables; with `check`, only compares with the checked-in file.
pub(crate) fn run(check: bool) -> Result<String, String> {
    run_in(&workspace_root(), check)
}

/// [`run`] against the workspace at `root`.
fn run_in(root: &Path, check: bool) -> Result<String, String> {
    let fresh = generate(root)?;
    let path = root.join(OUTPUT);
    let current = fs::read_to_string(&path).unwrap_or_default();
    if current == fresh {
        return Ok(format!("{OUTPUT} is up to date"));
    }
    if check {
        return Err(format!(
            "{OUTPUT} is stale: regenerating it from spec/*/schema.json would change it; \
             run `cargo xtask codegen` and commit the result"
        ));
    }
    fs::write(&path, fresh).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(format!("wrote {OUTPUT}"))
}

/// Produces the formatted text of the generated file from the schema files under `root`.
pub(crate) fn generate(root: &Path) -> Result<String, String> {
    let mut tables = Vec::with_capacity(VERSIONS.len());
    for version in VERSIONS {
        let rel = format!("spec/{version}/schema.json");
        let text =
            fs::read_to_string(root.join(&rel)).map_err(|e| format!("cannot read {rel}: {e}"))?;
        let mut schema: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| format!("{rel} is not JSON: {e}"))?;
        errata::apply(version, &mut schema).map_err(|e| format!("{rel}: {e}"))?;
        tables.push(extract::extract(version, &schema).map_err(|e| format!("{rel}: {e}"))?);
    }
    rustfmt(root, &emit::emit(&tables)?)
}

/// Formats Rust source with the toolchain's `rustfmt` and the repository's `rustfmt.toml`.
fn rustfmt(root: &Path, source: &str) -> Result<String, String> {
    let mut cmd = Command::new(std::env::var("RUSTFMT").unwrap_or_else(|_| "rustfmt".into()));
    cmd.args(["--edition", "2024", "--emit", "stdout", "--quiet"]);
    let config = root.join("rustfmt.toml");
    if config.is_file() {
        cmd.arg("--config-path").arg(config);
    }
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| {
            format!("cannot run rustfmt (install it with `rustup component add rustfmt`): {e}")
        })?;
    child
        .stdin
        .take()
        .ok_or("rustfmt has no stdin")?
        .write_all(source.as_bytes())
        .map_err(|e| format!("cannot feed rustfmt: {e}"))?;
    let out = child
        .wait_with_output()
        .map_err(|e| format!("rustfmt failed: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "rustfmt rejected the generated code: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    String::from_utf8(out.stdout).map_err(|e| format!("rustfmt output is not UTF-8: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fails when the checked-in generated file differs from what the schemas produce now.
    #[test]
    fn checked_in_tables_are_fresh() {
        let root = workspace_root();
        let fresh = generate(&root).expect("generation succeeds");
        let current = fs::read_to_string(root.join(OUTPUT)).expect("generated file exists");
        assert!(
            current == fresh,
            "{OUTPUT} is stale; run `cargo xtask codegen` and commit the result"
        );
    }

    #[test]
    fn generation_is_deterministic() {
        let root = workspace_root();
        assert_eq!(generate(&root), generate(&root));
    }

    /// `--check` fails on a stale file and writes nothing; a plain run repairs it.
    #[test]
    fn check_mode_detects_staleness() {
        let real = workspace_root();
        let tmp = std::env::temp_dir().join(format!("ferromcp-xtask-{}", std::process::id()));
        for version in VERSIONS {
            let dir = tmp.join("spec").join(version);
            fs::create_dir_all(&dir).unwrap();
            fs::copy(
                real.join("spec").join(version).join("schema.json"),
                dir.join("schema.json"),
            )
            .unwrap();
        }
        fs::copy(real.join("rustfmt.toml"), tmp.join("rustfmt.toml")).unwrap();
        let out = tmp.join(OUTPUT);
        fs::create_dir_all(out.parent().unwrap()).unwrap();
        fs::write(&out, "// stale\n").unwrap();

        let err = run_in(&tmp, true).unwrap_err();
        assert!(err.contains("stale"), "{err}");
        assert_eq!(fs::read_to_string(&out).unwrap(), "// stale\n");
        run_in(&tmp, false).unwrap();
        assert!(run_in(&tmp, true).is_ok());
        assert_eq!(
            fs::read_to_string(&out).unwrap(),
            fs::read_to_string(real.join(OUTPUT)).unwrap()
        );
        fs::remove_dir_all(&tmp).unwrap();
    }
}
