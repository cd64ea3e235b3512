//! What the client subcommands show on stderr while a call runs: the server's log
//! notifications (`[log info] …`), its other notifications, and progress: one
//! `[progress] 50/100 message` line per report, or, when stderr is a terminal, a bar redrawn
//! in place with `\r`.

use std::io::{IsTerminal, Write};
use std::sync::{Arc, Mutex, PoisonError};

use ferromcp_client::ServerNotification;
use ferromcp_dispatch::Progress;
use ferromcp_types::mcp::LoggingMessageNotificationParams;
use serde_json::Value;

/// The width of the bar itself, in cells.
const BAR_CELLS: usize = 30;
/// The longest line the bar draws (the message is cut to fit).
const MAX_LINE: usize = 100;

/// Writes notifications and progress to stderr. Cheap to clone.
#[derive(Clone)]
pub(crate) struct Reporter {
    tty: bool,
    /// The length of the bar line on screen (0: none).
    drawn: Arc<Mutex<usize>>,
}

impl Reporter {
    /// A reporter that draws a bar when stderr is a terminal.
    pub(crate) fn new() -> Self {
        Self {
            tty: std::io::stderr().is_terminal(),
            drawn: Arc::default(),
        }
    }

    /// Writes one line, clearing the bar first.
    pub(crate) fn line(&self, text: &str) {
        let mut drawn = self.drawn.lock().unwrap_or_else(PoisonError::into_inner);
        let mut err = std::io::stderr().lock();
        if *drawn > 0 {
            let _ = write!(err, "\r{}\r", " ".repeat(*drawn));
            *drawn = 0;
        }
        // C45: the text carries server strings (log data, progress messages).
        let _ = writeln!(err, "{}", crate::terminal::safe(text, true, "  "));
    }

    /// Shows a progress report.
    pub(crate) fn progress(&self, p: &Progress) {
        if !self.tty {
            self.line(&progress_line(p));
            return;
        }
        let bar = crate::terminal::line(&bar_line(p));
        let mut drawn = self.drawn.lock().unwrap_or_else(PoisonError::into_inner);
        let len = bar.chars().count();
        let pad = drawn.saturating_sub(len);
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r{bar}{}", " ".repeat(pad));
        if pad > 0 {
            let _ = write!(err, "\r{bar}");
        }
        let _ = err.flush();
        *drawn = len;
    }

    /// Clears the bar, if one is drawn (call when the call is over).
    pub(crate) fn finish(&self) {
        let mut drawn = self.drawn.lock().unwrap_or_else(PoisonError::into_inner);
        if *drawn > 0 {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r{}\r", " ".repeat(*drawn));
            let _ = err.flush();
            *drawn = 0;
        }
    }

    /// Shows a server log notification.
    pub(crate) fn log(&self, p: &LoggingMessageNotificationParams) {
        self.line(&log_line(p));
    }

    /// Shows any other server notification.
    pub(crate) fn notification(&self, n: &ServerNotification) {
        let text = match n {
            ServerNotification::Logging(_) => return,
            ServerNotification::ToolListChanged => "notifications/tools/list_changed".to_owned(),
            ServerNotification::PromptListChanged => {
                "notifications/prompts/list_changed".to_owned()
            }
            ServerNotification::ResourceListChanged => {
                "notifications/resources/list_changed".to_owned()
            }
            ServerNotification::ResourceUpdated(uri) => {
                format!("notifications/resources/updated {uri}")
            }
            ServerNotification::ElicitationComplete(id) => {
                format!("notifications/elicitation/complete {id}")
            }
            ServerNotification::Other { method, params } => match params {
                Some(p) => format!("{method} {p}"),
                None => method.clone(),
            },
            // A future variant: its debug form.
            #[allow(unreachable_patterns)]
            other => format!("{other:?}"),
        };
        self.line(&format!("[notification] {text}"));
    }
}

/// A number as people write it: `50`, not `50.0`.
pub(crate) fn number(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{x:.0}")
    } else {
        format!("{x}")
    }
}

/// `[progress] 50/100 message`.
pub(crate) fn progress_line(p: &Progress) -> String {
    let mut s = format!("[progress] {}", number(p.progress));
    if let Some(total) = p.total {
        s.push('/');
        s.push_str(&number(total));
    }
    if let Some(m) = &p.message {
        s.push(' ');
        s.push_str(m);
    }
    s
}

/// `[#########.....................]  30% 3/10 message`, at most [`MAX_LINE`] characters; a
/// report without a total shows the count and message only.
pub(crate) fn bar_line(p: &Progress) -> String {
    let mut s = match p.total {
        Some(total) if total > 0.0 => {
            let ratio = (p.progress / total).clamp(0.0, 1.0);
            // Both are in 0..=BAR_CELLS and 0..=100 by the clamp.
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let (filled, percent) = (
                (ratio * BAR_CELLS as f64).round() as usize,
                (ratio * 100.0).round() as usize,
            );
            format!(
                "[{}{}] {percent:>3}% {}/{}",
                "#".repeat(filled),
                ".".repeat(BAR_CELLS - filled),
                number(p.progress),
                number(total)
            )
        }
        _ => format!("[progress] {}", number(p.progress)),
    };
    if let Some(m) = &p.message {
        s.push(' ');
        s.push_str(m);
    }
    if s.chars().count() > MAX_LINE {
        s = s.chars().take(MAX_LINE - 1).collect();
        s.push('…');
    }
    s
}

/// `[log info] logger: data` (a string's text, or compact JSON).
pub(crate) fn log_line(p: &LoggingMessageNotificationParams) -> String {
    let level = serde_json::to_value(p.level)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_else(|| format!("{:?}", p.level).to_lowercase());
    let data = match &p.data {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    match &p.logger {
        Some(logger) => format!("[log {level}] {logger}: {data}"),
        None => format!("[log {level}] {data}"),
    }
}

#[cfg(test)]
mod tests {
    use super::{bar_line, number, progress_line};
    use ferromcp_dispatch::Progress;

    #[test]
    fn lines() {
        assert_eq!(number(50.0), "50");
        assert_eq!(number(0.5), "0.5");
        let p = Progress::new(50.0, Some(100.0), Some("half way".into()));
        assert_eq!(progress_line(&p), "[progress] 50/100 half way");
        assert_eq!(
            progress_line(&Progress::new(3.0, None, None)),
            "[progress] 3"
        );
        let bar = bar_line(&p);
        assert!(
            bar.starts_with("[###############...............]  50% 50/100 half way"),
            "{bar}"
        );
        let long = Progress::new(1.0, Some(2.0), Some("x".repeat(500)));
        assert_eq!(bar_line(&long).chars().count(), 100);
        assert!(bar_line(&Progress::new(9.0, Some(3.0), None)).contains("100%"));
        assert_eq!(bar_line(&Progress::new(2.0, None, None)), "[progress] 2");
    }
}
