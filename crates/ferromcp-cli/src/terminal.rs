//! Text from a server, made safe to print on a terminal (C45).
//!
//! A server chooses the strings the client shows: an elicitation's message, its fields'
//! titles and descriptions, a URL, log lines, progress messages. Printed raw, an ESC byte
//! starts an ANSI escape sequence that can move the cursor, rewrite earlier lines (a fake
//! prompt, a hidden warning), set the window title or, on some terminals, write to the
//! clipboard; a carriage return or backspace overwrites what is on the line; Unicode
//! direction overrides reorder what the reader sees. [`safe`] shows every such character as
//! a visible escape (`\x1b`, `\u{202e}`) instead: the text stays readable and cannot act.

use std::fmt::Write as _;

/// Whether `c` changes how the text around it is displayed: a C0 or C1 control, DEL, or a
/// Unicode bidirectional formatting character.
fn acts(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
        )
}

/// `text` with every control character (ESC, CR, BS, BEL, C1 controls such as CSI `\u{9b}`,
/// DEL…) and bidirectional override written as a visible escape. A newline is kept when
/// `multiline` (then followed by `indent`), escaped otherwise; a tab is kept.
pub(crate) fn safe(text: &str, multiline: bool, indent: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' if multiline => {
                out.push('\n');
                out.push_str(indent);
            }
            '\t' => out.push('\t'),
            c if acts(c) => {
                let n = u32::from(c);
                let _ = if n < 0x100 {
                    write!(out, "\\x{n:02x}")
                } else {
                    write!(out, "\\u{{{n:04x}}}")
                };
            }
            c => out.push(c),
        }
    }
    out
}

/// One line of server text (newlines escaped too).
pub(crate) fn line(text: &str) -> String {
    safe(text, false, "")
}

#[cfg(test)]
mod tests {
    use super::{line, safe};

    /// C45: escape sequences, carriage returns, C1 controls and direction overrides from a
    /// server are shown, not acted on.
    #[test]
    fn c45_server_text_cannot_drive_the_terminal() {
        let hostile = "ok\x1b[2J\x1b]0;pwned\x07\rfake\x08\u{9b}31m\u{202e}txt\u{7f}";
        let shown = line(hostile);
        assert_eq!(
            shown,
            "ok\\x1b[2J\\x1b]0;pwned\\x07\\x0dfake\\x08\\x9b31m\\u{202e}txt\\x7f"
        );
        assert!(!shown.chars().any(|c| c.is_control()), "{shown:?}");
        assert_eq!(safe("a\nb\tc", true, "  "), "a\n  b\tc");
        assert_eq!(line("a\nb"), "a\\x0ab");
        assert_eq!(line("plain ünïcode ✓"), "plain ünïcode ✓");
    }
}
