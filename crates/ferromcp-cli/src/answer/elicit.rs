//! Answers `elicitation/create` (form and URL mode): on the terminal, from `--elicit`, or
//! with a fixed decline/cancel.

use std::sync::{Arc, Mutex, PoisonError};

use ferromcp_types::jsonrpc::ErrorObject;
use ferromcp_types::mcp::{
    ElicitAction, ElicitRequestFormParams, ElicitRequestParams, ElicitRequestUrlParams,
    ElicitResult,
};
use serde_json::{Map, Value};

use super::form;
use crate::terminal::{line, safe};

/// How elicitations are answered.
#[derive(Debug, Clone)]
pub(crate) enum Elicit {
    /// Ask on the terminal (stdin is one).
    Interactive,
    /// `--elicit JSON`: accept with this content (checked against each form).
    Json(Map<String, Value>),
    /// `--elicit decline` / `--elicit cancel`.
    Fixed(ElicitAction),
}

impl Elicit {
    /// Reads `--elicit`'s value.
    pub(crate) fn parse(value: &str) -> Result<Self, String> {
        match value {
            "decline" => Ok(Self::Fixed(ElicitAction::Decline)),
            "cancel" => Ok(Self::Fixed(ElicitAction::Cancel)),
            _ => match serde_json::from_str::<Value>(value) {
                Ok(Value::Object(m)) => Ok(Self::Json(m)),
                _ => Err(format!(
                    "--elicit wants a JSON object, decline or cancel, got {value:?}"
                )),
            },
        }
    }
}

/// One terminal conversation at a time: the rounds of 2026-07-28 ask their questions
/// concurrently.
static TERMINAL: Mutex<()> = Mutex::new(());

/// The elicitation handler: its mode, and where a failure of the command is recorded.
#[derive(Clone)]
pub(crate) struct Elicitor {
    pub(crate) mode: Elicit,
    pub(crate) failure: Arc<Mutex<Option<String>>>,
}

fn action_name(a: ElicitAction) -> &'static str {
    match a {
        ElicitAction::Accept => "accept",
        ElicitAction::Decline => "decline",
        _ => "cancel",
    }
}

impl Elicitor {
    /// Answers one elicitation.
    pub(crate) async fn answer(
        self,
        params: ElicitRequestParams,
    ) -> Result<ElicitResult, ErrorObject> {
        match params {
            ElicitRequestParams::Form(f) => Ok(self.form(f).await),
            ElicitRequestParams::Url(u) => Ok(self.url(u).await),
            other => {
                eprintln!(
                    "ferromcp: the server asked for an elicitation of a mode this client does not know; answering decline: {}",
                    line(other.message())
                );
                Ok(ElicitResult::new(ElicitAction::Decline))
            }
        }
    }

    async fn form(self, f: ElicitRequestFormParams) -> ElicitResult {
        let fields = form::fields(&f.requested_schema);
        match self.mode {
            Elicit::Interactive => {
                let asked = tokio::task::spawn_blocking(move || {
                    let _turn = TERMINAL.lock().unwrap_or_else(PoisonError::into_inner);
                    let mut input = std::io::stdin().lock();
                    let mut out = std::io::stderr().lock();
                    form::prompt(&f.message, &fields, &mut input, &mut out)
                })
                .await;
                match asked {
                    Ok(Ok(result)) => result,
                    Ok(Err(e)) => {
                        eprintln!("ferromcp: cannot ask on the terminal ({e}); answering cancel");
                        ElicitResult::new(ElicitAction::Cancel)
                    }
                    Err(_) => ElicitResult::new(ElicitAction::Cancel),
                }
            }
            Elicit::Json(content) => match form::validate(&fields, &content) {
                Ok((content, ignored)) => {
                    eprintln!(
                        "ferromcp: the server asks: {}\nferromcp: answering accept (--elicit)",
                        line(&f.message)
                    );
                    if !ignored.is_empty() {
                        eprintln!(
                            "ferromcp: note: this form has no field {}; left out",
                            ignored.join(", ")
                        );
                    }
                    ElicitResult::accept(content)
                }
                Err(e) => {
                    let message = format!(
                        "--elicit does not fit the form the server asked for ({e}); answered cancel"
                    );
                    eprintln!(
                        "ferromcp: the server asks: {}\nferromcp: {message}",
                        line(&f.message)
                    );
                    *self.failure.lock().unwrap_or_else(PoisonError::into_inner) = Some(message);
                    ElicitResult::new(ElicitAction::Cancel)
                }
            },
            Elicit::Fixed(action) => {
                eprintln!(
                    "ferromcp: the server asks: {}\nferromcp: answering {} (--elicit)",
                    line(&f.message),
                    action_name(action)
                );
                ElicitResult::new(action)
            }
        }
    }

    async fn url(self, u: ElicitRequestUrlParams) -> ElicitResult {
        let shown = show_url(&u);
        eprint!("{}", shown.text);
        if !shown.link {
            return ElicitResult::new(ElicitAction::Decline);
        }
        match self.mode {
            Elicit::Interactive => {
                let asked = tokio::task::spawn_blocking(move || {
                    let _turn = TERMINAL.lock().unwrap_or_else(PoisonError::into_inner);
                    let mut input = std::io::stdin().lock();
                    let mut out = std::io::stderr().lock();
                    form::choose("Open it yourself, then:", &mut input, &mut out)
                })
                .await;
                match asked {
                    Ok(Ok(None)) => ElicitResult::new(ElicitAction::Accept),
                    Ok(Ok(Some(action))) => ElicitResult::new(action),
                    _ => ElicitResult::new(ElicitAction::Cancel),
                }
            }
            Elicit::Json(_) => {
                eprintln!("ferromcp: answering accept (--elicit); open the link yourself");
                ElicitResult::new(ElicitAction::Accept)
            }
            Elicit::Fixed(action) => {
                eprintln!("ferromcp: answering {} (--elicit)", action_name(action));
                ElicitResult::new(action)
            }
        }
    }
}

/// What a URL-mode elicitation shows on stderr, and whether its URL is a link to offer.
pub(crate) struct ShownUrl {
    pub(crate) text: String,
    pub(crate) link: bool,
}

/// The host of an http(s) URL, or why it is not offered as a link.
fn http_host(url: &str) -> Result<String, String> {
    let lower = url.to_ascii_lowercase();
    if !(lower.starts_with("https://") || lower.starts_with("http://")) {
        let scheme = url.split_once(':').map_or("none", |(s, _)| s);
        return Err(format!(
            "its scheme is {:?}, not http or https",
            line(scheme)
        ));
    }
    if url.chars().any(|c| c.is_whitespace() || c.is_control()) || url.contains('\u{202e}') {
        return Err("it holds spaces or control characters".into());
    }
    let uri: http::Uri = url
        .parse()
        .map_err(|_| "it is not a valid URL".to_owned())?;
    uri.host()
        .map(str::to_owned)
        .ok_or_else(|| "it has no host".to_owned())
}

/// The lines for a URL-mode elicitation (C45: every server string neutralised; the URL is
/// only offered when it is http or https, with its host spelt out, and never opened).
pub(crate) fn show_url(u: &ElicitRequestUrlParams) -> ShownUrl {
    let id = u
        .elicitation_id
        .as_deref()
        .map(|id| format!(" (elicitation {})", line(id)))
        .unwrap_or_default();
    let mut text = format!(
        "ferromcp: the server asks you to open a link{id}:\n  {}\n",
        safe(&u.message, true, "  ")
    );
    let link = match http_host(&u.url) {
        Ok(host) => {
            text.push_str(&format!(
                "  {}\n  (host: {}; not opened automatically)\n",
                line(&u.url),
                line(&host)
            ));
            true
        }
        Err(why) => {
            text.push_str(&format!(
                "ferromcp: the link is not shown: {why}; answering decline\n"
            ));
            false
        }
    };
    ShownUrl { text, link }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::{Elicit, Elicitor, show_url};
    use ferromcp_types::mcp::{ElicitAction, ElicitRequestUrlParams};

    /// C45: a URL-mode elicitation shows its message, id and URL neutralised, spells out the
    /// host (so `https://bank.example@evil.example` reads as evil.example), and offers only
    /// http and https links; anything else is not shown and is declined.
    #[test]
    fn c45_url_mode_shows_only_http_links_neutralised() {
        let u = ElicitRequestUrlParams::new(
            "Log in\u{1b}[2J\rnow",
            "https://bank.example@evil.example/x",
        )
        .with_elicitation_id("e1\u{1b}]0;t\u{7}");
        let shown = show_url(&u);
        assert!(shown.link);
        assert!(
            shown.text.contains("(elicitation e1\\x1b]0;t\\x07)"),
            "{}",
            shown.text
        );
        assert!(
            shown.text.contains("Log in\\x1b[2J\\x0dnow"),
            "{}",
            shown.text
        );
        assert!(
            shown
                .text
                .contains("host: evil.example; not opened automatically"),
            "{}",
            shown.text
        );
        assert!(
            !shown.text.chars().any(|c| c.is_control() && c != '\n'),
            "{:?}",
            shown.text
        );
        for bad in [
            "javascript:alert(1)",
            "file:///etc/passwd",
            "data:text/html,<script>x</script>",
            "https://ok.example/\u{1b}[2J",
            "https://ok.example/a b",
            "https://",
        ] {
            let shown = show_url(&ElicitRequestUrlParams::new("m", bad));
            assert!(!shown.link, "{bad}");
            assert!(
                shown.text.contains("the link is not shown"),
                "{bad}: {}",
                shown.text
            );
            assert!(
                !shown.text.contains("alert(1)") && !shown.text.contains("passwd"),
                "{}",
                shown.text
            );
        }
    }

    /// C45: a non-http(s) URL is declined whatever `--elicit` says; an http(s) one is
    /// accepted with `--elicit JSON` (the user opens it), with no content.
    #[tokio::test]
    async fn c45_url_mode_answers() {
        let elicitor = |mode| Elicitor {
            mode,
            failure: Arc::default(),
        };
        let json = Elicit::Json(serde_json::Map::new());
        let answer = |url: &str, mode: &Elicit| {
            let e = elicitor(mode.clone());
            let p = ElicitRequestUrlParams::new("m", url).into();
            async move { tokio::time::timeout(std::time::Duration::from_secs(5), e.answer(p)).await }
        };
        let r = answer("javascript:alert(1)", &json).await;
        assert!(
            matches!(r, Ok(Ok(ref r)) if r.action == ElicitAction::Decline),
            "{r:?}"
        );
        let r = answer("https://ok.example/", &json).await;
        assert!(
            matches!(r, Ok(Ok(ref r)) if r.action == ElicitAction::Accept && r.content.is_none()),
            "{r:?}"
        );
        let r = answer("https://ok.example/", &Elicit::Fixed(ElicitAction::Cancel)).await;
        assert!(
            matches!(r, Ok(Ok(ref r)) if r.action == ElicitAction::Cancel),
            "{r:?}"
        );
    }
}
