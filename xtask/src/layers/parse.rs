//! What one source file says about modules: its `mod` declarations, the items it defines, its
//! `use` imports and every path that may name a module, each with the inline-module scope it
//! sits in.
//!
//! Items under `#[cfg(test)]` (test modules, inline or `mod tests;`) are skipped whole; so are
//! attributes, whose paths are derive macros and tool names rather than modules.

use std::collections::HashSet;

use super::lex::{Tok, Token, lex};

/// A scope inside a file: the names of the inline modules (`mod x { ... }`) around a point,
/// outermost first; empty at the file's top level.
pub(crate) type Scope = Vec<String>;

/// An out-of-line module declaration, `mod x;`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ModDecl {
    /// The inline scope it is declared in.
    pub(crate) scope: Scope,
    /// The module's name.
    pub(crate) name: String,
    /// Whether it is compiled only for tests (`#[cfg(test)] mod tests;`).
    pub(crate) test_only: bool,
}

/// One leaf of a `use` tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Import {
    /// The inline scope of the `use`.
    pub(crate) scope: Scope,
    /// The full path as written (`self` leaves folded into their prefix).
    pub(crate) path: Vec<String>,
    /// The name it binds (the last segment or its `as` alias); `None` for a glob (`*`).
    pub(crate) binding: Option<String>,
    /// The line of the leaf.
    pub(crate) line: u32,
}

/// A path of two or more segments outside a `use` (`crate::x::Y`, `super::f`, `child::g`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PathRef {
    /// The inline scope it is written in.
    pub(crate) scope: Scope,
    /// Its segments.
    pub(crate) path: Vec<String>,
    /// Its line.
    pub(crate) line: u32,
}

/// Everything the layer check needs from one file.
#[derive(Debug, Default)]
pub(crate) struct FileFacts {
    /// `mod x;` declarations.
    pub(crate) mods: Vec<ModDecl>,
    /// Inline modules (non-test), as full scopes.
    pub(crate) inline_mods: HashSet<Scope>,
    /// Items defined at the top level of a scope: (scope, name).
    pub(crate) items: HashSet<(Scope, String)>,
    /// `use` leaves.
    pub(crate) imports: Vec<Import>,
    /// Other paths.
    pub(crate) paths: Vec<PathRef>,
}

/// Keywords introducing a named item whose name a path may continue with.
const ITEM_KEYWORDS: [&str; 8] = [
    "struct", "enum", "union", "fn", "type", "trait", "const", "static",
];

/// Parses the file text `src`.
pub(crate) fn parse(src: &str) -> FileFacts {
    let mut parser = Parser {
        toks: lex(src),
        i: 0,
        depth: 0,
        scopes: Vec::new(),
        facts: FileFacts::default(),
    };
    parser.run();
    parser.facts
}

/// The parser's state over the token stream.
struct Parser {
    toks: Vec<Token>,
    i: usize,
    /// Brace depth at the current token.
    depth: usize,
    /// Open inline modules: their names and the brace depth inside them.
    scopes: Vec<(String, usize)>,
    facts: FileFacts,
}

impl Parser {
    fn tok(&self, k: usize) -> Option<&Tok> {
        self.toks.get(self.i + k).map(|t| &t.tok)
    }

    fn line(&self) -> u32 {
        self.toks.get(self.i).map_or(0, |t| t.line)
    }

    fn ident(&self, k: usize) -> Option<&str> {
        match self.tok(k) {
            Some(Tok::Ident(s)) => Some(s),
            _ => None,
        }
    }

    fn is_punct(&self, k: usize, c: char) -> bool {
        self.tok(k) == Some(&Tok::Punct(c))
    }

    fn scope(&self) -> Scope {
        self.scopes.iter().map(|(name, _)| name.clone()).collect()
    }

    /// The brace depth of the current scope's top level.
    fn scope_depth(&self) -> usize {
        self.scopes.last().map_or(0, |&(_, d)| d)
    }

    fn run(&mut self) {
        let mut test_item = false;
        while let Some(tok) = self.tok(0).cloned() {
            if tok == Tok::Punct('#')
                && let Some(is_test) = self.attribute()
            {
                test_item |= is_test;
                continue;
            }
            if test_item {
                test_item = false;
                self.skip_test_item();
                continue;
            }
            match tok {
                Tok::Punct('{') => {
                    self.depth += 1;
                    self.i += 1;
                }
                Tok::Punct('}') => {
                    if self.scopes.last().is_some_and(|&(_, d)| d == self.depth) {
                        self.scopes.pop();
                    }
                    self.depth = self.depth.saturating_sub(1);
                    self.i += 1;
                }
                Tok::Ident(word) if word == "mod" => self.module(),
                Tok::Ident(word) if word == "use" => self.use_item(),
                Tok::Ident(word) if word == "macro_rules" && self.is_punct(1, '!') => {
                    if let Some(name) = self.ident(2).map(str::to_owned) {
                        self.define(name);
                    }
                    self.i += 2;
                }
                Tok::Ident(word) if ITEM_KEYWORDS.contains(&word.as_str()) => {
                    if let Some(name) = self.ident(1).map(str::to_owned) {
                        self.define(name);
                    }
                    self.i += 1;
                }
                Tok::Ident(_) => self.path(),
                _ => self.i += 1,
            }
        }
    }

    /// Records an item defined at the current scope's top level.
    fn define(&mut self, name: String) {
        if self.depth == self.scope_depth() {
            let scope = self.scope();
            self.facts.items.insert((scope, name));
        }
    }

    /// At `#`: skips an attribute (`#[..]` or `#![..]`) and says whether it is `cfg(test)`;
    /// `None` (nothing consumed) when the `#` starts no attribute.
    fn attribute(&mut self) -> Option<bool> {
        let open = if self.is_punct(1, '!') { 2 } else { 1 };
        if !self.is_punct(open, '[') {
            return None;
        }
        let start = self.i + open + 1;
        let mut end = start;
        let mut nesting = 1usize;
        while let Some(t) = self.toks.get(end) {
            match t.tok {
                Tok::Punct('[') => nesting += 1,
                Tok::Punct(']') => {
                    nesting -= 1;
                    if nesting == 0 {
                        break;
                    }
                }
                _ => {}
            }
            end += 1;
        }
        let body: Vec<&Tok> = self.toks[start..end.min(self.toks.len())]
            .iter()
            .map(|t| &t.tok)
            .collect();
        let is_test = body.len() == 4
            && *body[0] == Tok::Ident("cfg".into())
            && *body[1] == Tok::Punct('(')
            && *body[2] == Tok::Ident("test".into())
            && *body[3] == Tok::Punct(')');
        self.i = end + 1;
        if open == 2 && is_test {
            // `#![cfg(test)]`: the rest of the enclosing module is test code.
            self.i = self.toks.len();
        }
        Some(is_test)
    }

    /// Skips the item after a `#[cfg(test)]`: up to its `;` or through its braced body.
    fn skip_test_item(&mut self) {
        if self.ident(0) == Some("mod") && self.is_punct(2, ';') {
            if let Some(name) = self.ident(1).map(str::to_owned) {
                let scope = self.scope();
                self.facts.mods.push(ModDecl {
                    scope,
                    name,
                    test_only: true,
                });
            }
            self.i += 3;
            return;
        }
        let mut nesting = 0usize;
        while let Some(tok) = self.tok(0) {
            match tok {
                Tok::Punct('(' | '[') => nesting += 1,
                Tok::Punct(')' | ']') => nesting = nesting.saturating_sub(1),
                Tok::Punct(';') if nesting == 0 => {
                    self.i += 1;
                    return;
                }
                Tok::Punct('}') if nesting == 0 => return, // the end of the enclosing block
                Tok::Punct('{') if nesting == 0 => {
                    let mut braces = 0usize;
                    while let Some(tok) = self.tok(0) {
                        match tok {
                            Tok::Punct('{') => braces += 1,
                            Tok::Punct('}') => {
                                braces -= 1;
                                if braces == 0 {
                                    self.i += 1;
                                    return;
                                }
                            }
                            _ => {}
                        }
                        self.i += 1;
                    }
                    return;
                }
                _ => {}
            }
            self.i += 1;
        }
    }

    /// At `mod`: an out-of-line declaration or the start of an inline module.
    fn module(&mut self) {
        let Some(name) = self.ident(1).map(str::to_owned) else {
            self.i += 1;
            return;
        };
        if self.is_punct(2, ';') {
            let scope = self.scope();
            self.facts.mods.push(ModDecl {
                scope,
                name,
                test_only: false,
            });
            self.i += 3;
        } else if self.is_punct(2, '{') {
            self.define(name.clone());
            self.depth += 1;
            self.scopes.push((name, self.depth));
            self.facts.inline_mods.insert(self.scope());
            self.i += 3;
        } else {
            self.i += 1;
        }
    }

    /// At `use`: records the leaves of the tree, then skips to the `;`.
    fn use_item(&mut self) {
        self.i += 1;
        if self.tok(0) != Some(&Tok::PathSep) {
            self.use_tree(Vec::new());
        }
        while let Some(tok) = self.tok(0) {
            let end = *tok == Tok::Punct(';');
            self.i += 1;
            if end {
                break;
            }
        }
    }

    /// One (sub)tree of a `use`, below `prefix`.
    fn use_tree(&mut self, prefix: Vec<String>) {
        let mut path = prefix;
        let mut line = self.line();
        loop {
            match self.tok(0).cloned() {
                Some(Tok::Ident(segment)) => {
                    line = self.line();
                    path.push(segment);
                    self.i += 1;
                    if self.tok(0) == Some(&Tok::PathSep) {
                        self.i += 1;
                    } else {
                        break;
                    }
                }
                Some(Tok::Punct('*')) => {
                    line = self.line();
                    self.i += 1;
                    let scope = self.scope();
                    self.facts.imports.push(Import {
                        scope,
                        path,
                        binding: None,
                        line,
                    });
                    return;
                }
                Some(Tok::Punct('{')) => {
                    self.i += 1;
                    loop {
                        match self.tok(0) {
                            None => return,
                            Some(Tok::Punct('}')) => {
                                self.i += 1;
                                return;
                            }
                            Some(Tok::Punct(',')) => self.i += 1,
                            Some(_) => {
                                let before = self.i;
                                self.use_tree(path.clone());
                                if self.i == before {
                                    self.i += 1;
                                }
                            }
                        }
                    }
                }
                _ => break,
            }
        }
        if path.last().is_some_and(|s| s == "self") {
            path.pop();
        }
        let mut binding = path.last().cloned();
        if self.ident(0) == Some("as") {
            binding = self.ident(1).map(str::to_owned);
            self.i += 2;
        }
        if binding.is_some() {
            let scope = self.scope();
            self.facts.imports.push(Import {
                scope,
                path,
                binding,
                line,
            });
        }
    }

    /// At an identifier: a path when `::` and another identifier follow and it does not continue
    /// a longer path.
    fn path(&mut self) {
        let continues = self.i > 0
            && self
                .toks
                .get(self.i - 1)
                .is_some_and(|t| t.tok == Tok::PathSep);
        let line = self.line();
        let mut segments = Vec::new();
        while let Some(segment) = self.ident(0).map(str::to_owned) {
            segments.push(segment);
            self.i += 1;
            if self.tok(0) == Some(&Tok::PathSep) && self.ident(1).is_some() {
                self.i += 1;
            } else {
                break;
            }
        }
        if !continues && segments.len() >= 2 {
            let scope = self.scope();
            self.facts.paths.push(PathRef {
                scope,
                path: segments,
                line,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strs(v: &[String]) -> Vec<&str> {
        v.iter().map(String::as_str).collect()
    }

    #[test]
    fn use_trees_expand_to_leaves() {
        let facts =
            parse("use crate::{a::{self, B as C}, d::*};\npub use super::e::F;\nuse ::std::x::Y;");
        let leaves: Vec<(Vec<&str>, Option<&str>, u32)> = facts
            .imports
            .iter()
            .map(|i| (strs(&i.path), i.binding.as_deref(), i.line))
            .collect();
        assert_eq!(
            leaves,
            vec![
                (vec!["crate", "a"], Some("a"), 1),
                (vec!["crate", "a", "B"], Some("C"), 1),
                (vec!["crate", "d"], None, 1),
                (vec!["super", "e", "F"], Some("F"), 2),
            ]
        );
    }

    #[test]
    fn test_items_are_skipped_and_test_modules_marked() {
        let facts = parse(
            "#[cfg(test)]\nmod tests;\nmod real;\n#[cfg(test)]\n#[allow(x)]\nmod t {\n use crate::z::Q;\n}\n#[cfg(test)] const A: [u8; 2] = [0; 2];\nfn f() { crate::w::g(); }",
        );
        assert_eq!(
            facts
                .mods
                .iter()
                .map(|m| (m.name.as_str(), m.test_only))
                .collect::<Vec<_>>(),
            vec![("tests", true), ("real", false)]
        );
        assert!(facts.imports.is_empty(), "{:?}", facts.imports);
        assert_eq!(facts.paths.len(), 1);
        assert_eq!(strs(&facts.paths[0].path), vec!["crate", "w", "g"]);
        assert_eq!(facts.paths[0].line, 10);
    }

    #[test]
    fn inline_modules_scope_their_paths_and_items() {
        let facts = parse("pub mod ext { pub struct S; fn f() { super::x::y(); } }\nstruct T;");
        assert_eq!(facts.paths[0].scope, vec!["ext".to_owned()]);
        assert!(
            facts
                .items
                .contains(&(vec!["ext".to_owned()], "S".to_owned()))
        );
        assert!(facts.items.contains(&(vec![], "T".to_owned())));
        assert!(facts.items.contains(&(vec![], "ext".to_owned())));
        assert!(!facts.items.contains(&(vec![], "f".to_owned())));
    }
}
