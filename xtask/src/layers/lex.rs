//! A small Rust lexer: identifiers, `::` and single punctuation characters, each with its line.
//!
//! Everything that cannot name a module is dropped: whitespace, line and (nested) block comments
//! (so doc comments and their intra-doc links), string, byte-string, C-string and raw-string
//! literals, character and byte literals, lifetimes and numbers. Raw identifiers (`r#type`)
//! come out without their `r#`.

/// One token kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Tok {
    /// An identifier or keyword.
    Ident(String),
    /// `::`.
    PathSep,
    /// Any other punctuation character (`{`, `;`, `#`, `$`, ...).
    Punct(char),
}

/// A token and the 1-based line it starts on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Token {
    /// What the token is.
    pub(crate) tok: Tok,
    /// Where it starts.
    pub(crate) line: u32,
}

/// Splits `src` into tokens (see the module docs for what is dropped).
pub(crate) fn lex(src: &str) -> Vec<Token> {
    let mut lexer = Lexer {
        c: src.chars().collect(),
        i: 0,
        line: 1,
        out: Vec::new(),
    };
    lexer.run();
    lexer.out
}

/// The lexer's state: the characters, the position and the line there.
struct Lexer {
    c: Vec<char>,
    i: usize,
    line: u32,
    out: Vec<Token>,
}

fn is_ident_start(ch: char) -> bool {
    ch.is_alphabetic() || ch == '_'
}

fn is_ident_continue(ch: char) -> bool {
    ch.is_alphanumeric() || ch == '_'
}

impl Lexer {
    /// The character `k` places ahead of the current one (`'\0'` past the end).
    fn peek(&self, k: usize) -> char {
        self.c.get(self.i + k).copied().unwrap_or('\0')
    }

    /// Advances one character, counting lines.
    fn bump(&mut self) {
        if self.peek(0) == '\n' {
            self.line += 1;
        }
        self.i += 1;
    }

    fn at_end(&self) -> bool {
        self.i >= self.c.len()
    }

    fn push(&mut self, tok: Tok, line: u32) {
        self.out.push(Token { tok, line });
    }

    fn run(&mut self) {
        while !self.at_end() {
            let ch = self.peek(0);
            let line = self.line;
            match ch {
                '/' if self.peek(1) == '/' => {
                    while !self.at_end() && self.peek(0) != '\n' {
                        self.bump();
                    }
                }
                '/' if self.peek(1) == '*' => self.block_comment(),
                '"' => {
                    self.bump();
                    self.string_body();
                }
                '\'' => self.quote(),
                ':' if self.peek(1) == ':' => {
                    self.i += 2;
                    self.push(Tok::PathSep, line);
                }
                c if is_ident_start(c) => self.word(),
                c if c.is_ascii_digit() => {
                    while !self.at_end() && is_ident_continue(self.peek(0)) {
                        self.bump();
                    }
                }
                c if c.is_whitespace() => self.bump(),
                c => {
                    self.bump();
                    self.push(Tok::Punct(c), line);
                }
            }
        }
    }

    /// `/* ... */`, nested.
    fn block_comment(&mut self) {
        self.i += 2;
        let mut depth = 1usize;
        while !self.at_end() && depth > 0 {
            if self.peek(0) == '/' && self.peek(1) == '*' {
                depth += 1;
                self.i += 2;
            } else if self.peek(0) == '*' && self.peek(1) == '/' {
                depth -= 1;
                self.i += 2;
            } else {
                self.bump();
            }
        }
    }

    /// The rest of a (non-raw) string after its opening quote, escapes included.
    fn string_body(&mut self) {
        while !self.at_end() {
            match self.peek(0) {
                '\\' => {
                    self.bump();
                    self.bump();
                }
                '"' => {
                    self.bump();
                    return;
                }
                _ => self.bump(),
            }
        }
    }

    /// A raw string starting at its `#`s or `"` (the `r` already consumed).
    fn raw_string(&mut self) {
        let mut hashes = 0usize;
        while self.peek(0) == '#' {
            hashes += 1;
            self.bump();
        }
        self.bump(); // the opening quote
        while !self.at_end() {
            if self.peek(0) == '"' && (1..=hashes).all(|k| self.peek(k) == '#') {
                self.i += 1 + hashes;
                return;
            }
            self.bump();
        }
    }

    /// A character literal or a lifetime, at its `'`.
    fn quote(&mut self) {
        if self.peek(1) == '\\' {
            // '\n', '\'', '\u{1F600}': skip the escaped character, then up to the closing quote.
            self.i += 3;
            while !self.at_end() && self.peek(0) != '\'' {
                self.bump();
            }
            self.bump();
        } else if self.peek(2) == '\'' {
            self.i += 3;
        } else {
            // A lifetime or label: `'a`, `'static`.
            self.bump();
            while !self.at_end() && is_ident_continue(self.peek(0)) {
                self.bump();
            }
        }
    }

    /// An identifier, or the prefix of a byte, C or raw literal, or a raw identifier.
    fn word(&mut self) {
        let line = self.line;
        let start = self.i;
        while !self.at_end() && is_ident_continue(self.peek(0)) {
            self.i += 1;
        }
        let word: String = self.c[start..self.i].iter().collect();
        let next = self.peek(0);
        match (word.as_str(), next) {
            ("r" | "br" | "cr", '"') => self.raw_string(),
            ("r" | "br" | "cr", '#') => {
                let mut k = 0;
                while self.peek(k) == '#' {
                    k += 1;
                }
                if self.peek(k) == '"' {
                    self.raw_string();
                } else if word == "r" && is_ident_start(self.peek(1)) {
                    // A raw identifier: `r#type`.
                    self.i += 1;
                    let start = self.i;
                    while !self.at_end() && is_ident_continue(self.peek(0)) {
                        self.i += 1;
                    }
                    let ident: String = self.c[start..self.i].iter().collect();
                    self.push(Tok::Ident(ident), line);
                } else {
                    self.push(Tok::Ident(word), line);
                }
            }
            ("b" | "c", '"') => {
                self.bump();
                self.string_body();
            }
            ("b", '\'') => self.quote(),
            _ => self.push(Tok::Ident(word), line),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn idents(src: &str) -> Vec<String> {
        lex(src)
            .into_iter()
            .filter_map(|t| match t.tok {
                Tok::Ident(s) => Some(s),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn comments_strings_and_chars_vanish() {
        let src = r##"
            // crate::a
            /// [`X`](crate::b)
            //! crate::c
            /* crate::d /* nested crate::e */ still comment crate::f */
            let s = "crate::g \" crate::h";
            let r = r#"crate::i " crate::j"#;
            let b = b"crate::k";
            let q = '"'; let e = '\''; let u = '\u{1F600}';
            fn f<'a>(x: &'a str) -> &'static str { x }
            keep
        "##;
        let words = idents(src);
        assert!(!words.iter().any(|w| w == "crate"), "{words:?}");
        assert!(words.iter().any(|w| w == "keep"), "{words:?}");
        assert!(!words.iter().any(|w| w == "static"), "{words:?}");
    }

    #[test]
    fn lines_are_counted_through_literals_and_comments() {
        let src = "/*\n\n*/ \"a\nb\" r#\"\n\"# one\ntwo";
        let toks = lex(src);
        assert_eq!(
            toks,
            vec![
                Token {
                    tok: Tok::Ident("one".into()),
                    line: 5
                },
                Token {
                    tok: Tok::Ident("two".into()),
                    line: 6
                },
            ]
        );
    }

    #[test]
    fn raw_identifiers_and_path_separators() {
        let toks: Vec<Tok> = lex("r#type::x").into_iter().map(|t| t.tok).collect();
        assert_eq!(
            toks,
            vec![
                Tok::Ident("type".into()),
                Tok::PathSep,
                Tok::Ident("x".into())
            ]
        );
    }
}
