//! `cargo xtask layers`: in every workspace member, no module names a module of a layer it
//! may not depend on, and no import cycle spans two layers.
//!
//! Each crate's source files (`src/**/*.rs`, without the modules declared `#[cfg(test)]`) form a
//! module graph ([`graph`]): an edge from A to B for every `use` leaf and every path in A's code
//! that starts at `crate`, `super`, `self` or a child module of A and resolves into B. Comments,
//! doc comments (so intra-doc links), string literals, attributes and `#[cfg(test)]` items are
//! not code and name nothing. The layers are the committed map in [`map`]: every module belongs
//! to exactly one layer, and each layer lists the layers it may name. The check fails on a
//! module in no layer (or in two), on an edge into a layer that is not allowed, and on a
//! strongly connected component with modules of more than one layer (printed as a cycle);
//! cycles inside one layer are allowed. `--graph` prints every crate's edges with their layers.

mod graph;
mod lex;
mod map;
mod parse;

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt::Write as _;
use std::fs;
use std::io::Write as _;
use std::path::Path;

use graph::{Graph, SourceFile, display};
use map::CrateLayers;

/// Checks every crate; with `show_graph`, also prints the module graphs on stdout.
pub(crate) fn run(show_graph: bool) -> Result<String, String> {
    let root = crate::codegen::workspace_root();
    let mut summary = Vec::new();
    let mut failed = false;
    let mut graphs = String::new();
    let crates = read_crates(&root)?;
    for stale in map::MAP
        .iter()
        .filter(|c| !crates.iter().any(|(name, _)| name == c.krate))
    {
        failed = true;
        summary.push(format!(
            "{}: a layer map for no workspace member; remove it from xtask/src/layers/map.rs",
            stale.krate
        ));
    }
    for (name, files) in crates {
        let Some(layers) = map::MAP.iter().find(|c| c.krate == name) else {
            failed = true;
            summary.push(format!(
                "{name}: no layer map; add one to xtask/src/layers/map.rs"
            ));
            continue;
        };
        let outcome = check(layers, &Graph::build(files));
        if show_graph {
            graphs.push_str(&outcome.graph);
        }
        failed |= outcome.failed;
        summary.push(outcome.report);
    }
    if show_graph {
        std::io::stdout()
            .write_all(graphs.as_bytes())
            .map_err(|e| format!("cannot write the graph: {e}"))?;
    }
    let text = summary.join("\n");
    if failed { Err(text) } else { Ok(text) }
}

/// Reads the source files of every workspace member (the root `Cargo.toml`'s
/// `[workspace] members`, `dir/*` entries expanded): per member, sorted by its name in the map
/// (its directory below `crates/`, else its path from `root`, such as `bench/load`), its
/// files as (path below `src/`, path from `root`, text). A binary target under `src/bin/` is
/// its own crate root, but is read as the module `bin::name` of its member.
fn read_crates(root: &Path) -> Result<Vec<(String, Vec<SourceFile>)>, String> {
    let manifest = root.join("Cargo.toml");
    let text = fs::read_to_string(&manifest)
        .map_err(|e| format!("cannot read {}: {e}", manifest.display()))?;
    let mut members = Vec::new();
    for entry in members_of(&text)? {
        match entry.strip_suffix("/*") {
            Some(parent) => {
                let dir = root.join(parent);
                let found = fs::read_dir(&dir)
                    .map_err(|e| format!("cannot list {}: {e}", dir.display()))?
                    .filter_map(Result::ok)
                    .filter(|e| e.path().join("Cargo.toml").is_file())
                    .map(|e| format!("{parent}/{}", e.file_name().to_string_lossy()));
                members.extend(found);
            }
            None => members.push(entry),
        }
    }
    let mut named: Vec<(String, String)> = members
        .into_iter()
        .map(|path| {
            let name = path.strip_prefix("crates/").unwrap_or(&path).to_owned();
            (name, path)
        })
        .collect();
    named.sort();
    named.dedup();
    let mut crates = Vec::new();
    for (name, path) in named {
        let src = root.join(&path).join("src");
        let mut rels = Vec::new();
        walk(&src, "", &mut rels)?;
        rels.sort();
        let mut files = Vec::new();
        for rel in rels {
            let shown = format!("{path}/src/{rel}");
            let text = fs::read_to_string(src.join(&rel))
                .map_err(|e| format!("cannot read {shown}: {e}"))?;
            files.push((rel, shown, text));
        }
        crates.push((name, files));
    }
    Ok(crates)
}

/// The `members` of the `[workspace]` table of a root `Cargo.toml`, as written (one array of
/// strings, on one line or several).
fn members_of(manifest: &str) -> Result<Vec<String>, String> {
    let mut in_workspace = false;
    let mut lines = manifest.lines();
    while let Some(line) = lines.next() {
        let line = line.trim();
        if line.starts_with('[') {
            in_workspace = line == "[workspace]";
            continue;
        }
        let Some(value) = line.strip_prefix("members") else {
            continue;
        };
        let Some(value) = value.trim_start().strip_prefix('=') else {
            continue;
        };
        if !in_workspace {
            continue;
        }
        let mut array = value.to_owned();
        while !array.contains(']') {
            let Some(next) = lines.next() else {
                return Err("the root Cargo.toml's workspace members do not end".to_owned());
            };
            array.push_str(next.split('#').next().unwrap_or_default());
        }
        let inside = array
            .trim()
            .strip_prefix('[')
            .and_then(|a| a.split(']').next())
            .ok_or("the root Cargo.toml's workspace members are not an array")?;
        return Ok(inside
            .split(',')
            .map(|m| m.trim().trim_matches('"').to_owned())
            .filter(|m| !m.is_empty())
            .collect());
    }
    Err("the root Cargo.toml lists no workspace members".to_owned())
}

/// Collects the `.rs` files under `dir` (as paths below the walk's start, `/`-separated).
fn walk(dir: &Path, prefix: &str, out: &mut Vec<String>) -> Result<(), String> {
    let entries = fs::read_dir(dir).map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = entry.path();
        if path.is_dir() {
            walk(&path, &format!("{prefix}{name}/"), out)?;
        } else if name.ends_with(".rs") {
            out.push(format!("{prefix}{name}"));
        }
    }
    Ok(())
}

/// What [`check`] found in one crate.
#[derive(Debug)]
struct Outcome {
    /// Whether anything is wrong.
    failed: bool,
    /// The one-line summary when green; else a heading and one line per problem.
    report: String,
    /// The `--graph` listing.
    graph: String,
}

/// Whether the module `module` is matched by the map prefix `prefix` (`crate` is the root only).
fn matches(prefix: &str, module: &[String]) -> bool {
    if prefix == "crate" {
        return module.is_empty();
    }
    let parts: Vec<&str> = prefix.split("::").collect();
    parts.len() <= module.len() && parts.iter().zip(module).all(|(p, m)| *p == m)
}

/// Checks one crate's graph against its layers.
fn check(layers: &CrateLayers, graph: &Graph) -> Outcome {
    let krate = layers.krate;
    let mut problems = Vec::new();

    // The map itself: unique names; each layer names only layers listed before it (a DAG).
    for (i, layer) in layers.layers.iter().enumerate() {
        if layers.layers[..i].iter().any(|l| l.name == layer.name) {
            problems.push(format!("map: layer `{}` is listed twice", layer.name));
        }
        for lower in layer.may_name {
            if !layers.layers[..i].iter().any(|l| l.name == *lower) {
                problems.push(format!(
                    "map: layer `{}` may name `{lower}`, which is not a layer listed before it",
                    layer.name
                ));
            }
        }
    }

    // Every module in exactly one layer.
    let mut layer_of: Vec<Option<usize>> = Vec::with_capacity(graph.nodes.len());
    for node in &graph.nodes {
        let found: Vec<usize> = (0..layers.layers.len())
            .filter(|&l| {
                layers.layers[l]
                    .modules
                    .iter()
                    .any(|p| matches(p, &node.module))
            })
            .collect();
        let module = display(&node.module);
        match found.as_slice() {
            [l] => layer_of.push(Some(*l)),
            [] => {
                problems.push(format!(
                    "{}: module `{module}` is in no layer of {krate} (add it to xtask/src/layers/map.rs)",
                    node.file
                ));
                layer_of.push(None);
            }
            many => {
                let names: Vec<&str> = many.iter().map(|&l| layers.layers[l].name).collect();
                problems.push(format!(
                    "{}: module `{module}` is in more than one layer of {krate}: {}",
                    node.file,
                    names.join(", ")
                ));
                layer_of.push(None);
            }
        }
    }
    let name_of = |node: usize| layer_of[node].map_or("?", |l| layers.layers[l].name);
    let allowed = |from: usize, to: usize| match (layer_of[from], layer_of[to]) {
        (Some(a), Some(b)) => a == b || layers.layers[a].may_name.contains(&layers.layers[b].name),
        _ => true, // already reported as unmapped
    };

    // (a) No edge into a layer that may not be named.
    let mut upward = 0usize;
    for e in &graph.edges {
        if !allowed(e.from, e.to) {
            upward += 1;
            let from_layer = name_of(e.from);
            let may: &[&str] = layer_of[e.from].map_or(&[], |l| layers.layers[l].may_name);
            problems.push(format!(
                "{}:{}: `{}` names module `{}` (layer {}); `{}` is in layer {from_layer}, which may name {}",
                graph.nodes[e.from].file,
                e.line,
                e.path,
                display(&graph.nodes[e.to].module),
                name_of(e.to),
                display(&graph.nodes[e.from].module),
                if may.is_empty() {
                    "no other layer".to_owned()
                } else {
                    format!("only {}", may.join(", "))
                }
            ));
        }
    }

    // (b) No strongly connected component across layers.
    let mut cycles = 0usize;
    for component in graph.components() {
        let in_layers: BTreeSet<&str> = component.iter().map(|&n| name_of(n)).collect();
        if in_layers.len() < 2 {
            continue;
        }
        cycles += 1;
        let members: Vec<String> = component
            .iter()
            .map(|&n| format!("{} ({})", display(&graph.nodes[n].module), name_of(n)))
            .collect();
        let mut text = format!(
            "import cycle across layers {}: {}",
            in_layers.into_iter().collect::<Vec<_>>().join(", "),
            members.join(", ")
        );
        for e in cycle_through(graph, &component, &layer_of) {
            let _ = write!(
                text,
                "\n    {}:{}: {} ({}) -> {} ({}) by `{}`",
                graph.nodes[e.from].file,
                e.line,
                display(&graph.nodes[e.from].module),
                name_of(e.from),
                display(&graph.nodes[e.to].module),
                name_of(e.to),
                e.path
            );
        }
        problems.push(text);
    }

    // The `--graph` listing: one line per (from, to) with its first site and site count.
    let mut pairs: BTreeMap<(usize, usize), (usize, &graph::Edge)> = BTreeMap::new();
    for e in &graph.edges {
        pairs.entry((e.from, e.to)).or_insert((0, e)).0 += 1;
    }
    let mut listing = format!("# {krate}\n");
    for (i, node) in graph.nodes.iter().enumerate() {
        let _ = writeln!(listing, "{} [{}]", display(&node.module), name_of(i));
        for (&(_, to), &(count, first)) in pairs.range((i, 0)..(i + 1, 0)) {
            let _ = writeln!(
                listing,
                "    -> {} [{}]  {}:{} `{}`{}{}",
                display(&graph.nodes[to].module),
                name_of(to),
                node.file,
                first.line,
                first.path,
                if count > 1 {
                    format!(" (+{} more)", count - 1)
                } else {
                    String::new()
                },
                if allowed(i, to) { "" } else { "  NOT ALLOWED" }
            );
        }
    }

    if problems.is_empty() {
        Outcome {
            failed: false,
            report: format!(
                "{krate}: {} modules in {}, no upward reference, no cross-layer cycle",
                graph.nodes.len(),
                count(layers.layers.len(), "layer")
            ),
            graph: listing,
        }
    } else {
        let mut report = format!(
            "{krate}: {} modules in {}, {}, {}:",
            graph.nodes.len(),
            count(layers.layers.len(), "layer"),
            count(upward, "forbidden reference"),
            count(cycles, "cross-layer cycle"),
        );
        for p in problems {
            report.push_str("\n  ");
            report.push_str(&p);
        }
        Outcome {
            failed: true,
            report,
            graph: listing,
        }
    }
}

/// `n thing` or `n things`.
fn count(n: usize, thing: &str) -> String {
    if n == 1 {
        format!("1 {thing}")
    } else {
        format!("{n} {thing}s")
    }
}

/// A cycle inside `component` through an edge between two layers: that edge, then the
/// shortest way back (each step the first site of its edge).
fn cycle_through<'g>(
    graph: &'g Graph,
    component: &[usize],
    layer_of: &[Option<usize>],
) -> Vec<&'g graph::Edge> {
    let inside = |n: usize| component.binary_search(&n).is_ok();
    let Some(start) = graph
        .edges
        .iter()
        .find(|e| inside(e.from) && inside(e.to) && layer_of[e.from] != layer_of[e.to])
    else {
        return Vec::new();
    };
    // Breadth-first from start.to back to start.from, within the component.
    let mut via: BTreeMap<usize, &graph::Edge> = BTreeMap::new();
    let mut queue = VecDeque::from([start.to]);
    while let Some(n) = queue.pop_front() {
        if n == start.from {
            break;
        }
        for e in graph.edges.iter().filter(|e| e.from == n && inside(e.to)) {
            if e.to != start.to && !via.contains_key(&e.to) {
                via.insert(e.to, e);
                queue.push_back(e.to);
            }
        }
    }
    let mut back = Vec::new();
    let mut n = start.from;
    while n != start.to {
        let Some(e) = via.get(&n) else { break };
        back.push(*e);
        n = e.from;
    }
    back.reverse();
    let mut cycle = vec![start];
    cycle.extend(back);
    cycle
}

#[cfg(test)]
mod tests;
