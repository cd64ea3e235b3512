//! The client subcommands: `call`, `tools`, `tool`, `inspect`.
//!
//! Results go to stdout (see [`crate::output`]); messages, server logs, notifications and progress go
//! to stderr. Exit status: 0 on success, 1 on a bad value, a protocol or transport error, 2
//! when `tool` returns a result with `isError: true` (and, from clap, on a command line it
//! cannot read).

use std::process::ExitCode;
use std::time::Duration;

use ferromcp_client::{Client, ClientError, Lifecycle, RequestOptions};
use ferromcp_types::ProtocolVersion;
use ferromcp_types::mcp::LoggingLevel;
use serde_json::{Value, json};

use crate::answer::{AnswerArgs, Answers};
use crate::http_client::{self, HttpClientArgs};
use crate::output::{self, Output};
use crate::report::Reporter;

/// The exit status of `ferromcp tool` when the tool answered with `isError: true`: the call
/// worked and the tool reported a failure. Distinct from a usage error (2) and from a request
/// that failed (1), so a script can tell the three apart.
const TOOL_ERROR_EXIT: u8 = 3;
use crate::target::{self, Header, Target};

/// What `--help` says about TARGET.
const TARGET_HELP: &str = "\
The server to talk to:
  http://HOST/PATH or https://…  a Streamable HTTP server;
  \"COMMAND [ARGS…]\"              a command that starts a stdio server, split shell-style
                                 ('…' and \"…\" quote, \\ escapes); a bare `ferromcp` not on
                                 PATH is this binary.";

/// The notes every client subcommand's `--help` ends with.
macro_rules! after {
    ($examples:literal) => {
        concat!(
            "Examples:\n",
            $examples,
            "\n\nServer log notifications are shown on stderr as `[log LEVEL] …`, progress as\n\
             `[progress] N/TOTAL message` (a bar redrawn in place when stderr is a terminal).\n\
             Exit status: 0 success; 1 a protocol or transport error, or a bad value (TARGET,\n\
             JSON, --protocol, --timeout…); 2 an unreadable command line (unknown flag, missing\n\
             value) or, for `tool`, a result with isError."
        )
    };
}

/// After the options of `ferromcp call --help`.
pub(crate) const CALL_AFTER: &str = after!(
    "    ferromcp call \"ferromcp serve\" resources/read '{\"uri\":\"demo://readme\"}'\n    \
     ferromcp call http://127.0.0.1:8000/mcp tools/list --output compact"
);
/// After the options of `ferromcp tools --help`.
pub(crate) const TOOLS_AFTER: &str = after!(
    "    ferromcp tools \"ferromcp serve\"\n    \
     ferromcp tools http://127.0.0.1:8000/mcp --header \"Authorization: Bearer $TOKEN\""
);
/// After the options of `ferromcp tool --help`.
pub(crate) const TOOL_AFTER: &str = after!(
    "    ferromcp tool \"ferromcp serve\" add '{\"a\":1,\"b\":2}'\n    \
     ferromcp tool \"python server.py --name 'my server'\" search '{\"q\":\"x\"}' --timeout 5"
);
/// After the options of `ferromcp inspect --help`.
pub(crate) const INSPECT_AFTER: &str = after!(
    "    ferromcp inspect \"ferromcp serve\"\n    \
     ferromcp inspect http://127.0.0.1:8000/mcp --oauth --output json\n    \
     ferromcp inspect --web \"ferromcp serve\"      # the web inspector (URL with its token on stdout)"
);

/// The options every client subcommand takes.
#[derive(Debug, Default, clap::Args)]
pub(crate) struct ClientOptions {
    /// auto|2025-11-25|2026-07-28 (or another handshake-era version).
    ///
    /// auto (default) probes server/discover and falls back to initialize;
    /// a handshake-era version runs initialize; 2026-07-28 runs server/discover
    /// and the per-request envelope.
    #[arg(long, value_name = "PROTOCOL", verbatim_doc_comment)]
    protocol: Option<String>,
    /// An HTTP header for every request (repeatable; HTTP targets).
    #[arg(long, value_name = "NAME:VALUE")]
    header: Vec<String>,
    /// Per-request timeout, restarted by progress (default 60).
    #[arg(long, value_name = "SECONDS")]
    timeout: Option<String>,
    /// Ask the server for logs at LEVEL and above (debug, info, notice, warning, error, …).
    #[arg(long, value_name = "LEVEL")]
    log_level: Option<String>,
    /// Authorize with OAuth 2.1 when the server asks (HTTP targets).
    ///
    /// Discovery, dynamic registration, PKCE, and a headless authorization step
    /// that follows the authorization server's immediate redirect
    /// (e.g. `ferromcp serve --http ADDR --auth`).
    #[arg(long, verbatim_doc_comment)]
    oauth: bool,
    #[command(flatten)]
    http: HttpClientArgs,
    #[command(flatten)]
    answer: AnswerArgs,
}

/// `ferromcp call TARGET METHOD [PARAMS_JSON]`.
#[derive(Debug, clap::Args)]
pub(crate) struct CallArgs {
    #[arg(value_name = "TARGET", help = "The server (see --help)", long_help = TARGET_HELP)]
    target: Option<String>,
    /// The request's method, e.g. resources/read.
    #[arg(value_name = "METHOD")]
    method: Option<String>,
    /// The request's params: a JSON object (default {}).
    #[arg(value_name = "PARAMS_JSON")]
    params: Option<String>,
    #[command(flatten)]
    options: ClientOptions,
}

/// `ferromcp tools TARGET`.
#[derive(Debug, clap::Args)]
pub(crate) struct ToolsArgs {
    #[arg(value_name = "TARGET", help = "The server (see --help)", long_help = TARGET_HELP)]
    target: Option<String>,
    #[command(flatten)]
    options: ClientOptions,
}

/// `ferromcp tool TARGET NAME [ARGS_JSON]`.
#[derive(Debug, clap::Args)]
pub(crate) struct ToolArgs {
    #[arg(value_name = "TARGET", help = "The server (see --help)", long_help = TARGET_HELP)]
    target: Option<String>,
    /// The tool's name.
    #[arg(value_name = "NAME")]
    name: Option<String>,
    /// The tool's arguments: a JSON object (default {}).
    #[arg(value_name = "ARGS_JSON")]
    arguments: Option<String>,
    #[command(flatten)]
    options: ClientOptions,
}

/// `ferromcp inspect TARGET [--json]`.
#[derive(Debug, clap::Args)]
pub(crate) struct InspectArgs {
    #[arg(value_name = "TARGET", help = "The server (see --help)", long_help = TARGET_HELP)]
    target: Option<String>,
    /// Print the same as one JSON object (the same as --output json).
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    options: ClientOptions,
    #[command(flatten)]
    pub(crate) web: crate::inspect_web::WebArgs,
}

/// One client subcommand's command line, as the commands below read it.
pub(crate) struct Request<'a> {
    command: &'static str,
    positional: Vec<String>,
    options: &'a ClientOptions,
}

impl CallArgs {
    /// This command line, to [`run`].
    pub(crate) fn request(&self) -> Request<'_> {
        Request::new(
            "call",
            [&self.target, &self.method, &self.params],
            &self.options,
        )
    }
}

impl ToolsArgs {
    /// This command line, to [`run`].
    pub(crate) fn request(&self) -> Request<'_> {
        Request::new("tools", [&self.target], &self.options)
    }
}

impl ToolArgs {
    /// This command line, to [`run`].
    pub(crate) fn request(&self) -> Request<'_> {
        Request::new(
            "tool",
            [&self.target, &self.name, &self.arguments],
            &self.options,
        )
    }
}

impl InspectArgs {
    /// For `--web`: the TARGET, the `--header`s and `--protocol`.
    pub(crate) fn web_target(&self) -> (Option<&str>, &[String], Option<&str>) {
        (
            self.target.as_deref(),
            &self.options.header,
            self.options.protocol.as_deref(),
        )
    }

    /// This command line, to [`run`], and the output format `--json` asks for (`--output
    /// json` or `compact` wins over it; with `--output pretty`, the default, `--json` is
    /// `json`).
    pub(crate) fn request(&self, output: Output) -> (Request<'_>, Output) {
        let output = if self.json && output == Output::Pretty {
            Output::Json
        } else {
            output
        };
        (
            Request::new("inspect", [&self.target], &self.options),
            output,
        )
    }
}

impl<'a> Request<'a> {
    fn new<const N: usize>(
        command: &'static str,
        positional: [&Option<String>; N],
        options: &'a ClientOptions,
    ) -> Self {
        Self {
            command,
            // clap fills optional positionals in order: the present ones are a prefix.
            positional: positional.into_iter().flatten().cloned().collect(),
            options,
        }
    }
}

/// The parsed command line of a client subcommand.
#[derive(Debug, Default)]
struct Invocation {
    positional: Vec<String>,
    lifecycle: Lifecycle,
    headers: Vec<Header>,
    timeout: Option<Duration>,
    log_level: Option<LoggingLevel>,
    output: Output,
    oauth: bool,
    /// The HTTP client settings, when an option asks for any.
    http: Option<ferromcp_client::transport::http::HttpClientConfig>,
    answers: Answers,
}

/// Checks the values of `request`'s options (clap has read the command line).
fn parse(request: &Request<'_>, output: Output) -> Result<Invocation, String> {
    let opts = request.options;
    let mut inv = Invocation {
        positional: request.positional.clone(),
        output,
        oauth: opts.oauth,
        ..Invocation::default()
    };
    inv.answers = opts.answer.answers_here()?;
    if let Some(value) = &opts.protocol {
        inv.lifecycle = lifecycle(value)?;
    }
    for h in &opts.header {
        inv.headers.push(Header::parse(h)?);
    }
    if let Some(value) = &opts.timeout {
        inv.timeout = Some(http_client::seconds("--timeout", value)?);
    }
    if opts.http.is_set() {
        inv.http = Some(opts.http.config()?);
    }
    if let Some(value) = &opts.log_level {
        inv.log_level = Some(
            serde_json::from_value(Value::String(value.clone()))
                .map_err(|_| format!("--log-level: unknown level {value:?}"))?,
        );
    }
    Ok(inv)
}

fn lifecycle(value: &str) -> Result<Lifecycle, String> {
    if value == "auto" {
        return Ok(Lifecycle::Auto);
    }
    match ProtocolVersion::parse(value) {
        Some(v) if v.is_modern() => Ok(Lifecycle::Modern),
        Some(v) => {
            if v != ProtocolVersion::LATEST_HANDSHAKE {
                eprintln!(
                    "ferromcp: note: {v} selects the handshake lifecycle; the client offers {} \
                     and the server answers with the version it picks",
                    ProtocolVersion::LATEST_HANDSHAKE
                );
            }
            Ok(Lifecycle::Handshake)
        }
        None => Err(format!(
            "--protocol wants auto, 2026-07-28 or a handshake-era version ({}), got {value:?}",
            ProtocolVersion::ALL
                .iter()
                .filter(|v| v.is_handshake())
                .map(|v| v.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// [`describe`], and which option would have let the client answer what the server asked.
fn describe_call(method: &str, e: &ClientError) -> String {
    match crate::answer::hint(e) {
        Some(hint) => format!("{}\nferromcp: {hint}", describe(method, e)),
        None => describe(method, e),
    }
}

/// `METHOD failed: CODE MESSAGE` for a protocol error, `METHOD failed: …` otherwise.
pub(crate) fn describe(method: &str, e: &ClientError) -> String {
    match e.as_protocol() {
        Some(obj) => {
            let mut s = format!("{method} failed: {} {}", obj.code.0, obj.message);
            if let Some(data) = &obj.data {
                s.push_str(&format!(" (data: {data})"));
            }
            s
        }
        None => format!("{method} failed: {e}"),
    }
}

fn json_arg(what: &str, text: Option<&String>) -> Result<Value, String> {
    let Some(text) = text else {
        return Ok(json!({}));
    };
    match serde_json::from_str::<Value>(text) {
        Ok(v @ Value::Object(_)) => Ok(v),
        Ok(Value::Null) => Ok(json!({})),
        Ok(other) => Err(format!("{what} must be a JSON object, got {other}")),
        Err(e) => Err(format!("{what} is not valid JSON: {e}")),
    }
}

fn print_json(value: &Value, output: Output) -> Result<(), String> {
    crate::print_out(&output::render(value, output)?);
    Ok(())
}

/// Runs `ferromcp COMMAND …` for `call`, `tools`, `tool` and `inspect`.
pub(crate) fn run(request: &Request<'_>, output: Output) -> ExitCode {
    let command = request.command;
    let inv = match parse(request, output) {
        Ok(inv) => inv,
        Err(e) => return crate::fail(&format!("{e}; see `ferromcp {command} --help`")),
    };
    let (min, max, shape) = match command {
        "call" => (2, 3, "TARGET METHOD [PARAMS_JSON]"),
        "tool" => (2, 3, "TARGET NAME [ARGS_JSON]"),
        _ => (1, 1, "TARGET"),
    };
    let n = inv.positional.len();
    if n < min || n > max {
        return crate::fail(&format!(
            "usage: ferromcp {command} {shape}; see `ferromcp {command} --help`"
        ));
    }
    let target = match Target::parse(&inv.positional[0]) {
        Ok(t) => t,
        Err(e) => return crate::fail(&e),
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return crate::fail(&format!("cannot start the async runtime: {e}")),
    };
    let reporter = Reporter::new();
    let outcome = runtime.block_on(async {
        let client = connect(&target, &inv, &reporter).await?;
        let outcome = execute(&client, command, &inv, &reporter).await;
        reporter.finish();
        client.shutdown().await;
        outcome
    });
    match outcome {
        // An `--elicit` that did not fit a form (reported when it was answered).
        Ok(_) if inv.answers.failure().is_some() => ExitCode::FAILURE,
        Ok(code) => code,
        Err(message) => crate::fail(&message),
    }
}

async fn connect(target: &Target, inv: &Invocation, reporter: &Reporter) -> Result<Client, String> {
    let logs = reporter.clone();
    let notes = reporter.clone();
    let mut builder = Client::builder()
        .client_info(ferromcp_types::mcp::Implementation::new(
            "ferromcp-cli",
            env!("CARGO_PKG_VERSION"),
        ))
        .lifecycle(inv.lifecycle)
        .on_logging(move |p| {
            logs.log(&p);
            std::future::ready(())
        })
        .on_notification(move |n| {
            notes.notification(&n);
            std::future::ready(())
        });
    builder = inv.answers.install(builder);
    if let Some(t) = inv.timeout {
        builder = builder
            .request_timeout(Some(t))
            .probe_timeout(t.min(ferromcp_client::DEFAULT_PROBE_TIMEOUT));
    }
    if let Some(level) = inv.log_level {
        builder = builder.log_level(level);
    }
    target::connect(target, builder, &inv.headers, inv.http.as_ref(), inv.oauth).await
}

fn options(reporter: &Reporter) -> RequestOptions {
    let r = reporter.clone();
    RequestOptions::new().on_progress(move |p| r.progress(&p))
}

async fn execute(
    client: &Client,
    command: &str,
    inv: &Invocation,
    reporter: &Reporter,
) -> Result<ExitCode, String> {
    let pos = &inv.positional;
    match command {
        "call" => {
            let method = pos[1].as_str();
            let params = json_arg("PARAMS_JSON", pos.get(2))?;
            let result = client
                .send_request(method, params, options(reporter))
                .await
                .map_err(|e| describe_call(method, &e))?;
            reporter.finish();
            print_json(&result, inv.output)?;
            Ok(ExitCode::SUCCESS)
        }
        "tools" => {
            let tools = client
                .list_all_tools()
                .await
                .map_err(|e| describe("tools/list", &e))?;
            print_json(&json!({ "tools": tools }), inv.output)?;
            Ok(ExitCode::SUCCESS)
        }
        "tool" => {
            let arguments = json_arg("ARGS_JSON", pos.get(2))?;
            let params = json!({ "name": pos[1], "arguments": arguments });
            let result = client
                .send_request("tools/call", params, options(reporter))
                .await
                .map_err(|e| describe_call("tools/call", &e))?;
            reporter.finish();
            print_json(&result, inv.output)?;
            if result.get("isError").and_then(Value::as_bool) == Some(true) {
                eprintln!(
                    "ferromcp: tool {:?} returned an error result (isError)",
                    pos[1]
                );
                return Ok(ExitCode::from(TOOL_ERROR_EXIT));
            }
            Ok(ExitCode::SUCCESS)
        }
        _ => crate::inspect::run(client, inv.output).await,
    }
}

#[cfg(test)]
mod tests {
    use super::{Invocation, Lifecycle, Output, parse};
    use crate::cli::{Command, parse as parse_cli};

    fn inv(args: &[&str]) -> Result<Invocation, String> {
        let cli = parse_cli(["ferromcp"].iter().chain(args)).map_err(|e| e.to_string())?;
        let output = cli.output;
        match &cli.command {
            Some(Command::Call(a)) => parse(&a.request(), output),
            Some(Command::Tool(a)) => parse(&a.request(), output),
            Some(Command::Tools(a)) => parse(&a.request(), output),
            Some(Command::Inspect(a)) => {
                let (request, output) = a.request(output);
                parse(&request, output)
            }
            other => Err(format!("{other:?}")),
        }
    }

    #[test]
    fn options_anywhere() {
        let i = inv(&[
            "tool",
            "--protocol",
            "2026-07-28",
            "T",
            "add",
            "--timeout=2.5",
            "{}",
            "--header",
            "A: b",
        ])
        .unwrap_or_else(|e| unreachable!("{e}"));
        assert_eq!(i.positional, ["T", "add", "{}"]);
        assert_eq!(i.lifecycle, Lifecycle::Modern);
        assert_eq!(i.timeout, Some(std::time::Duration::from_millis(2500)));
        assert_eq!(i.headers.len(), 1);
        let i = inv(&["call", "--protocol=2025-11-25", "T", "--", "--odd"])
            .unwrap_or_else(|e| unreachable!("{e}"));
        assert_eq!(i.lifecycle, Lifecycle::Handshake);
        assert_eq!(i.positional, ["T", "--odd"]);
        assert!(inv(&["tools", "--json"]).is_err());
        assert!(inv(&["inspect", "--json"]).is_ok_and(|i| i.output == Output::Json));
        assert!(
            inv(&["inspect", "--json", "--output", "compact"])
                .is_ok_and(|i| i.output == Output::Compact)
        );
        assert!(inv(&["tools", "--protocol", "1999-01-01"]).is_err());
        assert!(inv(&["tools", "--timeout", "0"]).is_err());
        assert!(inv(&["tools", "--timeout"]).is_err());
        assert!(inv(&["tools", "--log-level", "loud"]).is_err());
        assert!(inv(&["tools", "--log-level", "debug"]).is_ok_and(|i| i.log_level.is_some()));
        assert!(inv(&["tools", "a", "b"]).is_err());
    }
}
