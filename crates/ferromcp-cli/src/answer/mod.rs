//! How the client subcommands answer what the server asks of the client: elicitation (on
//! the terminal, or from `--elicit`), sampling (`--sampling-cmd`) and roots (`--root`). The
//! same handlers answer live server→client requests (handshake era) and the input requests
//! of 2026-07-28's multi-round calls (the client library drives those).
//!
//! The client declares only what it can answer: `elicitation` when stdin is a terminal or
//! `--elicit` is given, `sampling` with `--sampling-cmd`, `roots` with at least one `--root`.
//! Prompts and notes go to stderr; stdout keeps only the result.

mod elicit;
mod form;
mod roots;
mod sampling;

use std::io::IsTerminal;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use ferromcp_client::ClientBuilder;
use ferromcp_types::mcp::{ListRootsResult, Root};

use self::elicit::{Elicit, Elicitor};
use self::sampling::Sampler;
pub(crate) use self::sampling::{DEFAULT_SAMPLING_MAX_OUTPUT, DEFAULT_SAMPLING_TIMEOUT};

/// The options for answering the server (part of every client subcommand's options).
#[derive(Debug, Default, clap::Args)]
pub(crate) struct AnswerArgs {
    /// Answer elicitations with JSON (a form's content), decline or cancel.
    ///
    /// Without it, elicitations are asked on the terminal when stdin is one
    /// (prompts on stderr), and not offered to the server otherwise. JSON that
    /// does not fit the form is answered with cancel and fails the command.
    /// A URL-mode elicitation's link is shown on stderr, never opened.
    /// Before 2026-07-28, --timeout also bounds the time spent answering.
    #[arg(long, value_name = "JSON|decline|cancel", verbatim_doc_comment)]
    elicit: Option<String>,
    /// Answer sampling requests with CMD: the request's params as JSON on its
    /// stdin, a CreateMessageResult as JSON on its stdout.
    #[arg(long, value_name = "CMD", verbatim_doc_comment)]
    sampling_cmd: Option<String>,
    /// How long --sampling-cmd may run (default 60).
    #[arg(long, value_name = "SECONDS", requires = "sampling_cmd")]
    sampling_timeout: Option<String>,
    /// The most --sampling-cmd may print (default 1048576).
    #[arg(long, value_name = "BYTES", requires = "sampling_cmd")]
    sampling_max_output: Option<String>,
    /// A root the server may see (repeatable): answers roots/list.
    #[arg(long, value_name = "PATH")]
    root: Vec<String>,
}

/// The handlers the options stand for.
#[derive(Debug, Clone, Default)]
pub(crate) struct Answers {
    elicit: Option<Elicit>,
    sampler: Option<Sampler>,
    roots: Vec<Root>,
    /// Why the command must fail once its call is over (an `--elicit` that did not fit).
    failure: Arc<Mutex<Option<String>>>,
}

fn positive(flag: &str, value: &str) -> Result<f64, String> {
    value
        .parse::<f64>()
        .ok()
        .filter(|x| x.is_finite() && *x > 0.0)
        .ok_or_else(|| format!("{flag} wants a positive number, got {value:?}"))
}

impl AnswerArgs {
    /// Checks the values; `stdin_tty`: whether elicitations can be asked on the terminal.
    pub(crate) fn answers(&self, stdin_tty: bool) -> Result<Answers, String> {
        let elicit = match &self.elicit {
            Some(v) => Some(Elicit::parse(v)?),
            None => stdin_tty.then_some(Elicit::Interactive),
        };
        let sampler = match &self.sampling_cmd {
            None => None,
            Some(cmd) => {
                let argv = crate::split::split(cmd).map_err(|e| format!("--sampling-cmd: {e}"))?;
                let timeout = match &self.sampling_timeout {
                    Some(v) => Duration::from_secs_f64(positive("--sampling-timeout", v)?),
                    None => DEFAULT_SAMPLING_TIMEOUT,
                };
                let max_output = match &self.sampling_max_output {
                    Some(v) => v.parse::<usize>().ok().filter(|n| *n > 0).ok_or_else(|| {
                        format!("--sampling-max-output wants a positive number of bytes, got {v:?}")
                    })?,
                    None => DEFAULT_SAMPLING_MAX_OUTPUT,
                };
                Some(Sampler {
                    argv: argv.into(),
                    timeout,
                    max_output,
                })
            }
        };
        Ok(Answers {
            elicit,
            sampler,
            roots: roots::roots(&self.root)?,
            failure: Arc::default(),
        })
    }

    /// [`answers`](Self::answers), with stdin's terminal-ness.
    pub(crate) fn answers_here(&self) -> Result<Answers, String> {
        self.answers(std::io::stdin().is_terminal())
    }
}

impl Answers {
    /// `builder` with the handlers (and so the capabilities) these answers stand for.
    pub(crate) fn install(&self, mut builder: ClientBuilder) -> ClientBuilder {
        if let Some(mode) = &self.elicit {
            let elicitor = Elicitor {
                mode: mode.clone(),
                failure: self.failure.clone(),
            };
            builder = builder.on_elicitation(move |p| elicitor.clone().answer(p));
        }
        if let Some(sampler) = &self.sampler {
            let sampler = sampler.clone();
            builder = builder.on_sampling(move |p| sampler.clone().answer(p));
        }
        if !self.roots.is_empty() {
            let roots = self.roots.clone();
            builder = builder
                .on_roots(move || std::future::ready(Ok(ListRootsResult::new(roots.clone()))));
        }
        builder
    }

    /// Why the command fails although its call succeeded, if it does.
    pub(crate) fn failure(&self) -> Option<String> {
        self.failure
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// For a server's "missing required client capability" error naming elicitation, sampling
/// or roots: which option lets this client answer it.
pub(crate) fn hint(e: &ferromcp_client::ClientError) -> Option<String> {
    let obj = e.as_protocol()?;
    if obj.code != ferromcp_types::jsonrpc::ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY {
        return None;
    }
    let required = obj.data.as_ref()?.get("requiredCapabilities")?;
    let options: Vec<&str> = [
        (
            "elicitation",
            "--elicit JSON|decline|cancel (or a terminal on stdin)",
        ),
        ("sampling", "--sampling-cmd CMD"),
        ("roots", "--root PATH"),
    ]
    .into_iter()
    .filter(|(cap, _)| required.get(cap).is_some())
    .map(|(_, option)| option)
    .collect();
    (!options.is_empty()).then(|| {
        format!(
            "the server asks this client for what it does not answer without {}",
            options.join(", ")
        )
    })
}
