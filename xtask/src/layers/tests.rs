//! Fixture crates in memory against a small layer map: `base` at the bottom, `left` and
//! `right` on it (neither may name the other), `crate` on top.

use super::graph::Graph;
use super::map::{CrateLayers, Layer};
use super::{Outcome, check};

const MAP: CrateLayers = CrateLayers {
    krate: "fixture",
    layers: &[
        Layer {
            name: "base",
            modules: &["base"],
            may_name: &[],
        },
        Layer {
            name: "left",
            modules: &["left"],
            may_name: &["base"],
        },
        Layer {
            name: "right",
            modules: &["right"],
            may_name: &["base"],
        },
        Layer {
            name: "top",
            modules: &["crate"],
            may_name: &["base", "left", "right"],
        },
    ],
};

/// The crate root every fixture shares, plus `files` (paths below `src/`).
fn run(files: &[(&str, &str)]) -> Outcome {
    let mut all = vec![(
        "lib.rs".to_owned(),
        "src/lib.rs".to_owned(),
        "mod base;\nmod left;\nmod right;\npub use left::L;\n".to_owned(),
    )];
    for (rel, text) in files {
        all.push(((*rel).to_owned(), format!("src/{rel}"), (*text).to_owned()));
    }
    check(&MAP, &Graph::build(all))
}

fn assert_green(outcome: &Outcome) {
    assert!(!outcome.failed, "{}", outcome.report);
    assert!(
        outcome
            .report
            .contains("no upward reference, no cross-layer cycle"),
        "{}",
        outcome.report
    );
}

#[test]
fn a_clean_tree_passes() {
    let outcome = run(&[
        ("base/mod.rs", "pub struct B;\nmod inner;\n"),
        ("base/inner.rs", "use super::B;\n"),
        ("left.rs", "use crate::base::B;\npub struct L;\n"),
        ("right.rs", "fn f() -> crate::base::B { crate::base::B }\n"),
    ]);
    assert_green(&outcome);
    assert!(
        outcome.report.contains("5 modules in 4 layers"),
        "{}",
        outcome.report
    );
}

#[test]
fn an_upward_reference_is_caught() {
    let outcome = run(&[
        (
            "base.rs",
            "pub struct B;\nfn f() {\n    let _ = crate::left::L;\n}\n",
        ),
        ("left.rs", "pub struct L;\n"),
        ("right.rs", ""),
    ]);
    assert!(outcome.failed);
    assert!(
        outcome
            .report
            .contains("src/base.rs:3: `crate::left::L` names module `left` (layer left)"),
        "{}",
        outcome.report
    );
}

#[test]
fn a_sibling_reference_through_a_root_reexport_is_caught() {
    // `crate::L` is `left::L` re-exported by the root: the edge points at `left`.
    let outcome = run(&[
        ("base.rs", ""),
        ("left.rs", "pub struct L;\n"),
        ("right.rs", "use crate::L;\n"),
    ]);
    assert!(outcome.failed);
    assert!(
        outcome
            .report
            .contains("src/right.rs:1: `crate::L` names module `left` (layer left); `right` is in layer right, which may name only base"),
        "{}",
        outcome.report
    );
}

#[test]
fn doc_links_comments_strings_and_test_modules_name_nothing() {
    let outcome = run(&[
        (
            "base.rs",
            concat!(
                "//! See [`L`](crate::left::L) and [`right`](crate::right).\n",
                "/// Not [`crate::left::L`] either.\n",
                "pub struct B; // crate::left::L\n",
                "/* crate::right::R /* nested */ crate::left */\n",
                "const S: &str = \"crate::left::L\";\n",
                "const R: &str = r#\"crate::left::L \" crate::right\"#;\n",
                "const C: char = '\"';\n",
                "#[cfg(test)]\n",
                "mod tests {\n    use crate::left::L;\n}\n",
            ),
        ),
        ("left.rs", "pub struct L;\n"),
        ("right.rs", "pub struct R;\n"),
    ]);
    assert_green(&outcome);
}

#[test]
fn a_cross_layer_cycle_is_caught() {
    // `base` and `left` name each other (and `base` may not name `left`).
    let outcome = run(&[
        (
            "base.rs",
            "pub struct B;\npub fn f() {\n    crate::left::g();\n}\n",
        ),
        (
            "left.rs",
            "pub struct L;\npub fn g() {}\nuse crate::base::B;\n",
        ),
        ("right.rs", ""),
    ]);
    assert!(outcome.failed);
    assert!(
        outcome.report.contains("1 cross-layer cycle:"),
        "{}",
        outcome.report
    );
    assert!(
        outcome
            .report
            .contains("import cycle across layers base, left: base (base), left (left)"),
        "{}",
        outcome.report
    );
    assert!(
        outcome.report.contains(
            "    src/base.rs:3: base (base) -> left (left) by `crate::left::g`\n    src/left.rs:3: left (left) -> base (base) by `crate::base::B`"
        ),
        "{}",
        outcome.report
    );
}

#[test]
fn a_same_layer_cycle_is_allowed() {
    let outcome = run(&[
        ("base/mod.rs", "mod a;\nmod b;\npub use a::A;\n"),
        ("base/a.rs", "pub struct A;\nfn f(_: super::b::Bee) {}\n"),
        ("base/b.rs", "pub struct Bee;\nuse super::a::A;\n"),
        ("left.rs", "pub struct L;\n"),
        ("right.rs", ""),
    ]);
    assert_green(&outcome);
}

#[test]
fn super_and_child_paths_resolve_relative_to_the_file() {
    // `left::deep::x` uses `super::super::right` (the root's child `right`), and `left` names
    // its child `deep` with a plain path: both resolve, and the first is forbidden.
    let outcome = run(&[
        ("base.rs", ""),
        (
            "left/mod.rs",
            "mod deep;\npub struct L;\nfn f() { deep::x::g(); }\n",
        ),
        ("left/deep/mod.rs", "pub mod x;\n"),
        (
            "left/deep/x.rs",
            "pub fn g() {}\nuse super::super::super::right::R;\n",
        ),
        ("right.rs", "pub struct R;\n"),
    ]);
    assert!(outcome.failed);
    assert!(
        outcome.report.contains(
            "src/left/deep/x.rs:2: `super::super::super::right::R` names module `right` (layer right); `left::deep::x` is in layer left"
        ),
        "{}",
        outcome.report
    );
    assert!(
        outcome
            .graph
            .contains("    -> left::deep::x [left]  src/left/mod.rs:3 `deep::x::g`"),
        "{}",
        outcome.graph
    );
    assert_eq!(
        outcome.report.matches("forbidden").count(),
        1,
        "{}",
        outcome.report
    );
}

#[test]
fn an_unmapped_module_is_reported() {
    let outcome = run(&[
        ("base.rs", ""),
        ("left.rs", "pub struct L;\n"),
        ("right.rs", ""),
        ("stray.rs", ""),
    ]);
    assert!(outcome.failed);
    assert!(
        outcome
            .report
            .contains("src/stray.rs: module `stray` is in no layer of fixture"),
        "{}",
        outcome.report
    );
}

#[test]
fn a_test_only_file_is_not_a_module() {
    let outcome = run(&[
        ("base/mod.rs", "#[cfg(test)]\nmod tests;\n"),
        ("base/tests.rs", "use crate::left::L;\n"),
        ("left.rs", "pub struct L;\n"),
        ("right.rs", ""),
    ]);
    assert_green(&outcome);
}

#[test]
fn the_map_must_be_a_dag_in_order() {
    const BAD: CrateLayers = CrateLayers {
        krate: "bad",
        layers: &[
            Layer {
                name: "low",
                modules: &["crate"],
                may_name: &["high"],
            },
            Layer {
                name: "high",
                modules: &["x"],
                may_name: &[],
            },
        ],
    };
    let outcome = check(
        &BAD,
        &Graph::build(vec![("lib.rs".into(), "src/lib.rs".into(), String::new())]),
    );
    assert!(outcome.failed);
    assert!(
        outcome
            .report
            .contains("layer `low` may name `high`, which is not a layer listed before it"),
        "{}",
        outcome.report
    );
}

/// The real tree: every crate has a map and every module is mapped (the layering itself is
/// what `cargo xtask layers` checks; ferromcp-server's target layering may not hold yet).
#[test]
fn every_crate_and_module_of_the_workspace_is_mapped() {
    let root = crate::codegen::workspace_root();
    for (name, files) in super::read_crates(&root).expect("the crates are readable") {
        let layers = super::map::MAP
            .iter()
            .find(|c| c.krate == name)
            .unwrap_or_else(|| panic!("{name} has no layer map"));
        let outcome = check(layers, &Graph::build(files));
        assert!(
            !outcome.report.contains("in no layer") && !outcome.report.contains("map:"),
            "{}",
            outcome.report
        );
    }
}

/// The workspace members come from the root manifest's `[workspace]` table, on one line or
/// several; another table's `members` is not read.
#[test]
fn the_members_come_from_the_workspace_table() {
    let one = "[package]\nmembers = [\"no\"]\n[workspace]\nmembers = [\"crates/*\", \"xtask\"]\n";
    assert_eq!(super::members_of(one).unwrap(), ["crates/*", "xtask"]);
    let many = "[workspace]\nresolver = \"3\"\nmembers = [\n  \"a\", # the first\n  \"b/c\",\n]\n";
    assert_eq!(super::members_of(many).unwrap(), ["a", "b/c"]);
    assert!(super::members_of("[workspace]\n").is_err());
}

/// Every workspace member is read, not only the crates under `crates/`: the members outside
/// it (the benchmarks, xtask itself) are checked too, each under its path.
#[test]
fn every_workspace_member_is_read() {
    let root = crate::codegen::workspace_root();
    let names: Vec<String> = super::read_crates(&root)
        .expect("the crates are readable")
        .into_iter()
        .map(|(name, _)| name)
        .collect();
    for member in [
        "ferromcp-server",
        "xtask",
        "bench/load",
        "bench/stdio-min",
        "bench/redis-node",
    ] {
        assert!(
            names.iter().any(|n| n == member),
            "{member} not read: {names:?}"
        );
    }
}
