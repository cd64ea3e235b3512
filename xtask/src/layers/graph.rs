//! The module graph of one crate: a node per source file, an edge per path that names another
//! file's module, and Tarjan's strongly connected components.
//!
//! A path is resolved to the deepest module that exists as a file (inline modules belong to
//! their file). When the path goes on with an item that module does not define but imports
//! (`crate::Error` where the root has `pub use error::Error`), the import is followed, so the
//! edge points at the module the item comes from; an item imported from another crate gives no
//! edge.

use std::collections::HashMap;

use super::parse::{FileFacts, Import, Scope, parse};

/// How many imports a resolution follows before it gives up (a re-export loop).
const MAX_HOPS: usize = 16;

/// One source file as read: (path below `src/`, path shown in messages, text).
pub(crate) type SourceFile = (String, String, String);

/// A module path from the crate root; empty for the root itself.
pub(crate) type ModPath = Vec<String>;

/// One source file of the crate.
#[derive(Debug)]
pub(crate) struct Node {
    /// Its path, as shown in messages.
    pub(crate) file: String,
    /// Its module.
    pub(crate) module: ModPath,
    /// What it says.
    facts: FileFacts,
}

/// One place where a file names another file's module.
#[derive(Debug, Clone)]
pub(crate) struct Edge {
    /// The naming node.
    pub(crate) from: usize,
    /// The named node.
    pub(crate) to: usize,
    /// The line of the path.
    pub(crate) line: u32,
    /// The path as written.
    pub(crate) path: String,
}

/// The module graph of a crate.
#[derive(Debug)]
pub(crate) struct Graph {
    /// The nodes, sorted by module path.
    pub(crate) nodes: Vec<Node>,
    index: HashMap<ModPath, usize>,
    /// Every naming site, in node then file order.
    pub(crate) edges: Vec<Edge>,
}

/// Displays a module path: `crate` for the root, else `a::b`.
pub(crate) fn display(module: &[String]) -> String {
    if module.is_empty() {
        "crate".to_owned()
    } else {
        module.join("::")
    }
}

/// The module of a file, from its path below `src/` (`a/b/mod.rs` and `a/b.rs` are `a::b`;
/// `lib.rs` and `main.rs` are the root).
pub(crate) fn module_of(rel: &str) -> ModPath {
    let stem = rel.strip_suffix(".rs").unwrap_or(rel);
    let mut parts: Vec<String> = stem.split('/').map(str::to_owned).collect();
    if parts.len() == 1 && (parts[0] == "lib" || parts[0] == "main") {
        return Vec::new();
    }
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts
}

impl Graph {
    /// Builds the graph from `(path below src/, shown path, text)` for every source file.
    /// Files of modules declared `#[cfg(test)]` (and everything under them) are left out.
    pub(crate) fn build(files: Vec<SourceFile>) -> Graph {
        let mut nodes: Vec<Node> = files
            .into_iter()
            .map(|(rel, file, text)| Node {
                file,
                module: module_of(&rel),
                facts: parse(&text),
            })
            .collect();
        let test_only: Vec<ModPath> = nodes
            .iter()
            .flat_map(|n| {
                n.facts.mods.iter().filter(|m| m.test_only).map(|m| {
                    let mut path = n.module.clone();
                    path.extend(m.scope.iter().cloned());
                    path.push(m.name.clone());
                    path
                })
            })
            .collect();
        nodes.retain(|n| !test_only.iter().any(|t| n.module.starts_with(t)));
        nodes.sort_by(|a, b| a.module.cmp(&b.module));
        let index = nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.module.clone(), i))
            .collect();
        let mut graph = Graph {
            nodes,
            index,
            edges: Vec::new(),
        };
        graph.edges = graph.collect_edges();
        graph
    }

    fn collect_edges(&self) -> Vec<Edge> {
        let mut edges = Vec::new();
        for (from, node) in self.nodes.iter().enumerate() {
            let sites = node
                .facts
                .imports
                .iter()
                .map(|i| (&i.scope, &i.path, i.line))
                .chain(node.facts.paths.iter().map(|p| (&p.scope, &p.path, p.line)));
            for (scope, path, line) in sites {
                let mut cur = node.module.clone();
                cur.extend(scope.iter().cloned());
                let Some(first) = path.first() else { continue };
                let mut child = cur.clone();
                child.push(first.clone());
                let anchored = matches!(first.as_str(), "crate" | "super" | "self")
                    || self.locate(&child).is_some();
                if !anchored {
                    continue; // another crate, a local item, a type parameter
                }
                let Some(to) = self
                    .absolutize(&cur, path, 0)
                    .and_then(|abs| self.resolve(&abs, 0))
                else {
                    continue;
                };
                if to != from {
                    edges.push(Edge {
                        from,
                        to,
                        line,
                        path: path.join("::"),
                    });
                }
            }
        }
        edges.sort_by_key(|e| (e.from, e.line));
        edges
    }

    /// The file and inline scope of the module `m`, if it exists.
    fn locate(&self, m: &[String]) -> Option<(usize, Scope)> {
        let k = (0..=m.len())
            .rev()
            .find(|&k| self.index.contains_key(&m[..k]))?;
        let file = self.index[&m[..k]];
        let scope = m[k..].to_vec();
        (scope.is_empty() || self.nodes[file].facts.inline_mods.contains(&scope))
            .then_some((file, scope))
    }

    /// The import binding `name` in the module `m`, if any.
    fn binding(&self, m: &[String], name: &str) -> Option<&Import> {
        let (file, scope) = self.locate(m)?;
        self.nodes[file]
            .facts
            .imports
            .iter()
            .find(|i| i.scope == scope && i.binding.as_deref() == Some(name))
    }

    /// The glob imports of the module `m`.
    fn globs(&self, m: &[String]) -> Vec<&Import> {
        let Some((file, scope)) = self.locate(m) else {
            return Vec::new();
        };
        self.nodes[file]
            .facts
            .imports
            .iter()
            .filter(|i| i.scope == scope && i.binding.is_none())
            .collect()
    }

    /// The path `path`, written in the module `cur`, from the crate root; `None` when it leaves
    /// the crate.
    fn absolutize(&self, cur: &[String], path: &[String], hops: usize) -> Option<ModPath> {
        if hops > MAX_HOPS {
            return None;
        }
        let (first, rest) = path.split_first()?;
        let mut abs = match first.as_str() {
            "crate" => Vec::new(),
            "self" => cur.to_vec(),
            "super" => {
                let mut m = cur.to_vec();
                m.pop()?;
                m
            }
            name => {
                let mut child = cur.to_vec();
                child.push(name.to_owned());
                if self.locate(&child).is_some() {
                    child
                } else {
                    let import = self.binding(cur, name)?;
                    let mut full = import.path.clone();
                    full.extend(rest.iter().cloned());
                    return self.absolutize(cur, &full, hops + 1);
                }
            }
        };
        for segment in rest {
            match segment.as_str() {
                "super" => {
                    abs.pop()?;
                }
                "self" => {}
                s => abs.push(s.to_owned()),
            }
        }
        Some(abs)
    }

    /// The node an absolute path leads to (see the module docs); `None` when it leaves the crate.
    fn resolve(&self, abs: &[String], hops: usize) -> Option<usize> {
        let mut m: ModPath = Vec::new();
        for (k, segment) in abs.iter().enumerate() {
            m.push(segment.clone());
            if self.locate(&m).is_none() {
                m.pop();
                return self.follow(&m, segment, &abs[k + 1..], hops);
            }
        }
        self.locate(&m).map(|(file, _)| file)
    }

    /// The node the item `name` of the module `m` (and the `rest` of the path) comes from.
    fn follow(&self, m: &[String], name: &str, rest: &[String], hops: usize) -> Option<usize> {
        let (file, scope) = self.locate(m)?;
        let facts = &self.nodes[file].facts;
        if hops >= MAX_HOPS || facts.items.contains(&(scope, name.to_owned())) {
            return Some(file);
        }
        if let Some(import) = self.binding(m, name) {
            let mut target = self.absolutize(m, &import.path, hops + 1)?;
            target.extend(rest.iter().cloned());
            return self.resolve(&target, hops + 1);
        }
        for glob in self.globs(m) {
            let Some(source) = self.absolutize(m, &glob.path, hops + 1) else {
                continue;
            };
            if self.locate(&source).is_some() && self.has_name(&source, name, hops + 1) {
                let mut target = source;
                target.push(name.to_owned());
                target.extend(rest.iter().cloned());
                return self.resolve(&target, hops + 1);
            }
        }
        Some(file)
    }

    /// Whether the module `m` defines, imports or glob-imports `name`.
    fn has_name(&self, m: &[String], name: &str, hops: usize) -> bool {
        let Some((file, scope)) = self.locate(m) else {
            return false;
        };
        if hops > MAX_HOPS {
            return false;
        }
        if self.nodes[file]
            .facts
            .items
            .contains(&(scope, name.to_owned()))
            || self.binding(m, name).is_some()
        {
            return true;
        }
        self.globs(m).into_iter().any(|glob| {
            self.absolutize(m, &glob.path, hops + 1)
                .is_some_and(|source| self.has_name(&source, name, hops + 1))
        })
    }

    /// The strongly connected components (Tarjan), each as sorted node indices.
    pub(crate) fn components(&self) -> Vec<Vec<usize>> {
        let mut succ = vec![Vec::new(); self.nodes.len()];
        for e in &self.edges {
            succ[e.from].push(e.to);
        }
        for s in &mut succ {
            s.sort_unstable();
            s.dedup();
        }
        let mut tarjan = Tarjan {
            succ: &succ,
            index: vec![None; self.nodes.len()],
            low: vec![0; self.nodes.len()],
            on_stack: vec![false; self.nodes.len()],
            stack: Vec::new(),
            next: 0,
            out: Vec::new(),
        };
        for v in 0..self.nodes.len() {
            if tarjan.index[v].is_none() {
                tarjan.visit(v);
            }
        }
        tarjan.out
    }
}

/// The state of Tarjan's algorithm.
struct Tarjan<'a> {
    succ: &'a [Vec<usize>],
    index: Vec<Option<usize>>,
    low: Vec<usize>,
    on_stack: Vec<bool>,
    stack: Vec<usize>,
    next: usize,
    out: Vec<Vec<usize>>,
}

impl Tarjan<'_> {
    fn visit(&mut self, v: usize) {
        self.index[v] = Some(self.next);
        self.low[v] = self.next;
        self.next += 1;
        self.stack.push(v);
        self.on_stack[v] = true;
        for &w in &self.succ[v] {
            match self.index[w] {
                None => {
                    self.visit(w);
                    self.low[v] = self.low[v].min(self.low[w]);
                }
                Some(iw) if self.on_stack[w] => self.low[v] = self.low[v].min(iw),
                Some(_) => {}
            }
        }
        if Some(self.low[v]) == self.index[v] {
            let mut component = Vec::new();
            while let Some(w) = self.stack.pop() {
                self.on_stack[w] = false;
                component.push(w);
                if w == v {
                    break;
                }
            }
            component.sort_unstable();
            self.out.push(component);
        }
    }
}
