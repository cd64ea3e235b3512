//! A small shell-style word splitter for stdio TARGETs such as `"ferromcp serve"` or
//! `"python -m 'my server'"`.
//!
//! It follows the POSIX shell's quoting rules, without expansions (no variables, globs,
//! tildes or command substitution; nothing is executed):
//!
//! - unquoted blanks (space, tab, newline, carriage return) separate words;
//! - `'…'` keeps everything literally up to the next `'`;
//! - `"…"` keeps everything literally except `\"`, `\\`, `\$`, `` \` `` and a backslash-newline
//!   (dropped), which are escapes;
//! - outside quotes a backslash makes the next character literal (a backslash-newline is
//!   dropped);
//! - quoted and unquoted parts next to each other join into one word (`a"b c"` is `ab c`),
//!   and `''` or `""` alone is an empty word;
//! - `#` is an ordinary character (no comments), and a carriage return is a blank like a
//!   space (a command pasted with CRLF line ends).
//!
//! On Windows a backslash is a path separator, so there it escapes only a quote (`\"`, and
//! `\'` outside quotes) and is otherwise kept: `C:\tools\server.exe --flag` is two words with
//! its backslashes intact, as Windows programs read their command lines.
//!
//! Written here rather than taken from `shlex` (the ecosystem's splitter, 2.0.1 in the
//! lockfile), because shlex differs where it matters for a command line that is run:
//! `shlex::split("srv --tag #1")` is `["srv", "--tag"]` (a word starting with `#` silently
//! drops the rest of the line, as a comment), `"a \\\n b"` gives a spurious empty word
//! between `a` and `b`, `"a\r\nb"` keeps the `\r` in `a\r`, and every error is a bare `None`,
//! where this splitter says which quote is unterminated or that a backslash escapes nothing
//! (`ferromcp tools "a 'b"` prints `unterminated ' quote`). Tests below pin each of these.

use std::fmt;

/// Why a command line could not be split.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SplitError {
    /// A quote was opened and never closed.
    UnterminatedQuote(char),
    /// The line ends with a lone backslash.
    TrailingBackslash,
    /// The line holds no word at all.
    Empty,
}

impl fmt::Display for SplitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnterminatedQuote(q) => write!(f, "unterminated {q} quote"),
            Self::TrailingBackslash => f.write_str("a trailing backslash escapes nothing"),
            Self::Empty => f.write_str("the command is empty"),
        }
    }
}

/// What a backslash does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Backslash {
    /// POSIX: it escapes the next character.
    Escapes,
    /// Windows: a path separator that escapes only a quote.
    EscapesQuotesOnly,
}

impl Backslash {
    /// This platform's rule.
    const PLATFORM: Self = if cfg!(windows) {
        Self::EscapesQuotesOnly
    } else {
        Self::Escapes
    };
}

/// Splits `line` into words, shell-style (see the module documentation), with this
/// platform's backslash rule.
pub(crate) fn split(line: &str) -> Result<Vec<String>, SplitError> {
    split_with(line, Backslash::PLATFORM)
}

/// [`split`] with the backslash rule `backslash`.
fn split_with(line: &str, backslash: Backslash) -> Result<Vec<String>, SplitError> {
    let posix = backslash == Backslash::Escapes;
    let mut words = Vec::new();
    let mut word = String::new();
    // Whether a word has started (a quoted empty string is a word).
    let mut in_word = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' | '\r' => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => word.push(c),
                        None => return Err(SplitError::UnterminatedQuote('\'')),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') if !posix => {
                            if chars.peek() == Some(&'"') {
                                chars.next();
                                word.push('"');
                            } else {
                                word.push('\\');
                            }
                        }
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\' | '$' | '`')) => word.push(c),
                            Some('\n') => {}
                            Some(c) => {
                                word.push('\\');
                                word.push(c);
                            }
                            None => return Err(SplitError::UnterminatedQuote('"')),
                        },
                        Some(c) => word.push(c),
                        None => return Err(SplitError::UnterminatedQuote('"')),
                    }
                }
            }
            '\\' if !posix => {
                in_word = true;
                match chars.peek() {
                    Some(&q @ ('"' | '\'')) => {
                        chars.next();
                        word.push(q);
                    }
                    _ => word.push('\\'),
                }
            }
            '\\' => match chars.next() {
                Some('\n') => {}
                Some(c) => {
                    in_word = true;
                    word.push(c);
                }
                None => return Err(SplitError::TrailingBackslash),
            },
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    if words.is_empty() {
        return Err(SplitError::Empty);
    }
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::{Backslash, SplitError, split, split_with};

    /// Windows command lines keep their paths' backslashes; only a quote is escaped.
    #[test]
    fn windows_backslashes_are_path_separators() {
        let win = |line: &str| {
            split_with(line, Backslash::EscapesQuotesOnly).unwrap_or_else(|e| unreachable!("{e}"))
        };
        assert_eq!(
            win(r"C:\tools\server.exe --dir C:\data\"),
            [r"C:\tools\server.exe", "--dir", r"C:\data\"]
        );
        assert_eq!(
            win(r#""C:\Program Files\srv.exe" --name \"a\" 'it''s'"#),
            [r"C:\Program Files\srv.exe", "--name", r#""a""#, "its"]
        );
        assert_eq!(win(r#""say \"hi\"""#), [r#"say "hi""#]);
        assert_eq!(win(r"\\server\share\x.exe"), [r"\\server\share\x.exe"]);
        assert_eq!(win(r"'a b' \'c"), ["a b", "'c"]);
        // The POSIX rule, for contrast: the backslash escapes the next character.
        assert_eq!(
            split_with(r"C:\a", Backslash::Escapes).unwrap_or_default(),
            ["C:a"]
        );
    }

    fn ok(line: &str) -> Vec<String> {
        split(line).unwrap_or_else(|e| unreachable!("{line:?}: {e}"))
    }

    #[test]
    fn blanks_separate_words() {
        assert_eq!(ok("ferromcp serve"), ["ferromcp", "serve"]);
        assert_eq!(ok("  a \t b\n c  "), ["a", "b", "c"]);
        assert_eq!(ok("one"), ["one"]);
    }

    #[test]
    fn single_quotes_are_literal() {
        assert_eq!(ok("a 'b c' d"), ["a", "b c", "d"]);
        assert_eq!(ok(r#"'a\b $x \"'"#), [r#"a\b $x \""#]);
        assert_eq!(ok("''"), [""]);
        assert_eq!(ok("a '' b"), ["a", "", "b"]);
    }

    #[test]
    fn double_quotes_take_a_few_escapes() {
        assert_eq!(ok(r#""a b" c"#), ["a b", "c"]);
        assert_eq!(ok(r#""say \"hi\"""#), [r#"say "hi""#]);
        assert_eq!(ok(r#""back\\slash \$x \`y\`""#), [r"back\slash $x `y`"]);
        // Other backslashes stay.
        assert_eq!(ok(r#""a\nb""#), [r"a\nb"]);
        assert_eq!(ok("\"line\\\ncontinued\""), ["linecontinued"]);
        assert_eq!(ok(r#""""#), [""]);
        assert_eq!(ok(r#""it's""#), ["it's"]);
    }

    #[test]
    fn backslash_outside_quotes_escapes_one_character() {
        assert_eq!(ok(r"a\ b c"), ["a b", "c"]);
        assert_eq!(ok(r"\'x\'"), ["'x'"]);
        assert_eq!(ok(r"\\"), [r"\"]);
        assert_eq!(ok("a\\\nb"), ["ab"]);
    }

    #[test]
    fn adjacent_parts_join() {
        assert_eq!(ok(r#"a"b c"'d e'f"#), ["ab cd ef"]);
        assert_eq!(
            ok(r#"python -c 'print("hi")' --name="my server""#),
            ["python", "-c", r#"print("hi")"#, "--name=my server"]
        );
        assert_eq!(
            ok(r#"/opt/my\ tools/server --json '{"a": 1}'"#),
            ["/opt/my tools/server", "--json", r#"{"a": 1}"#]
        );
    }

    /// What shlex does differently (see the module documentation), kept on purpose.
    #[test]
    fn no_comments_no_spurious_words() {
        assert_eq!(ok("srv --tag #1"), ["srv", "--tag", "#1"]);
        assert_eq!(ok("#x"), ["#x"]);
        assert_eq!(ok("a \\\n b"), ["a", "b"]);
        assert_eq!(ok("a\r\nb"), ["a", "b"]);
    }

    #[test]
    fn errors() {
        assert_eq!(split("a 'b"), Err(SplitError::UnterminatedQuote('\'')));
        assert_eq!(split("a \"b"), Err(SplitError::UnterminatedQuote('"')));
        assert_eq!(split("a \"b\\"), Err(SplitError::UnterminatedQuote('"')));
        assert_eq!(split("a \\"), Err(SplitError::TrailingBackslash));
        assert_eq!(split(""), Err(SplitError::Empty));
        assert_eq!(split(" \t\n"), Err(SplitError::Empty));
        assert_eq!(
            split("a 'b").map_err(|e| e.to_string()),
            Err("unterminated ' quote".to_owned())
        );
    }
}
