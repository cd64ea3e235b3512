//! The client subcommands: `call`, `tools`, `tool`, `inspect`.
//!
//! JSON results go to stdout (pretty); messages, server logs, notifications and progress go
//! to stderr. Exit status: 0 on success, 1 on a usage, protocol or transport error, 2 when
//! `tool` returns a result with `isError: true`.

use std::process::ExitCode;
use std::time::Duration;

use ferromcp_client::{Client, ClientError, Lifecycle, RequestOptions};
use ferromcp_types::ProtocolVersion;
use ferromcp_types::mcp::LoggingLevel;
use serde_json::{Value, json};

use crate::report::Reporter;
use crate::target::{self, Header, Target};

const COMMON: &str = "\
TARGET:
    http://HOST/PATH or https://…   a Streamable HTTP server
    \"COMMAND [ARGS…]\"               a command that starts a stdio server, split shell-style
                                    ('…' and \"…\" quote, \\ escapes); a bare `ferromcp` not
                                    on PATH is this binary

OPTIONS:
    --protocol auto|2025-11-25|2026-07-28
                          auto (default) probes server/discover and falls back to
                          initialize; a handshake-era version runs initialize; 2026-07-28
                          runs server/discover and the per-request envelope
    --header NAME:VALUE   an HTTP header for every request (repeatable; HTTP targets)
    --timeout SECONDS     per-request timeout, restarted by progress (default 60)
    --log-level LEVEL     ask the server for logs at LEVEL and above (debug, info, …)
    --oauth               authorize with OAuth 2.1 when the server asks (HTTP targets):
                          discovery, dynamic registration, PKCE, and a headless
                          authorization step that follows the authorization server's
                          immediate redirect (e.g. `ferromcp serve --http ADDR --auth`)

Server log notifications are shown on stderr as `[log LEVEL] …`, progress as
`[progress] N/TOTAL message` (a bar redrawn in place when stderr is a terminal).
Exit status: 0 success, 1 usage, protocol or transport error, 2 tool result with isError.";

/// `ferromcp call --help`.
pub(crate) fn help(command: &str) -> String {
    let head = match command {
        "call" => {
            "ferromcp call TARGET METHOD [PARAMS_JSON] [OPTIONS]\n\
             Sends any request (PARAMS_JSON: an object, default {}) and prints its result as JSON.\n\
             e.g. ferromcp call \"ferromcp serve\" resources/read '{\"uri\":\"demo://readme\"}'"
        }
        "tools" => {
            "ferromcp tools TARGET [OPTIONS]\n\
             Lists every tool (all pages) as JSON: {\"tools\": [...]}."
        }
        "tool" => {
            "ferromcp tool TARGET NAME [ARGS_JSON] [OPTIONS]\n\
             Calls tool NAME (ARGS_JSON: an object, default {}) and prints the result as JSON;\n\
             exit status 2 when the result has isError: true.\n\
             e.g. ferromcp tool \"ferromcp serve\" add '{\"a\":1,\"b\":2}'"
        }
        _ => {
            "ferromcp inspect TARGET [--json] [OPTIONS]\n\
             Shows the server: name and version, protocol version and era, capabilities,\n\
             instructions, tools, resources, resource templates and prompts. Human-readable\n\
             text on stdout (for people, not scripts); --json prints the same as one JSON object."
        }
    };
    format!("{head}\n\n{COMMON}")
}

/// The parsed command line of a client subcommand.
#[derive(Debug, Default)]
struct Invocation {
    positional: Vec<String>,
    lifecycle: Lifecycle,
    headers: Vec<Header>,
    timeout: Option<Duration>,
    log_level: Option<LoggingLevel>,
    json: bool,
    oauth: bool,
}

fn parse(args: &[&str], allow_json: bool) -> Result<Invocation, String> {
    let mut inv = Invocation::default();
    let mut rest = args.iter().copied();
    let mut options_done = false;
    while let Some(arg) = rest.next() {
        if options_done || !arg.starts_with("--") {
            inv.positional.push(arg.to_owned());
            continue;
        }
        if arg == "--" {
            options_done = true;
            continue;
        }
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) => (f, Some(v)),
            None => (arg, None),
        };
        if flag == "--json" && allow_json && inline.is_none() {
            inv.json = true;
            continue;
        }
        if flag == "--oauth" && inline.is_none() {
            inv.oauth = true;
            continue;
        }
        let takes_value = matches!(
            flag,
            "--protocol" | "--header" | "--timeout" | "--log-level"
        );
        if !takes_value {
            return Err(format!("unknown option {arg:?}"));
        }
        let Some(value) = inline.or_else(|| rest.next()) else {
            return Err(format!("{flag} needs a value"));
        };
        match flag {
            "--protocol" => inv.lifecycle = lifecycle(value)?,
            "--header" => inv.headers.push(Header::parse(value)?),
            "--timeout" => {
                let secs: f64 = value
                    .parse()
                    .ok()
                    .filter(|s: &f64| s.is_finite() && *s > 0.0)
                    .ok_or_else(|| {
                        format!("--timeout wants a positive number of seconds, got {value:?}")
                    })?;
                inv.timeout = Some(Duration::from_secs_f64(secs));
            }
            _ => {
                inv.log_level = Some(
                    serde_json::from_value(Value::String(value.to_owned()))
                        .map_err(|_| format!("--log-level: unknown level {value:?}"))?,
                );
            }
        }
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

fn print_json(value: &Value) -> Result<(), String> {
    let text =
        serde_json::to_string_pretty(value).map_err(|e| format!("cannot print the result: {e}"))?;
    crate::print_out(&format!("{text}\n"));
    Ok(())
}

/// Runs `ferromcp COMMAND …` for `call`, `tools`, `tool` and `inspect`.
pub(crate) fn run(command: &str, args: &[&str]) -> ExitCode {
    let inv = match parse(args, command == "inspect") {
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
    if let Some(t) = inv.timeout {
        builder = builder
            .request_timeout(Some(t))
            .probe_timeout(t.min(ferromcp_client::DEFAULT_PROBE_TIMEOUT));
    }
    if let Some(level) = inv.log_level {
        builder = builder.log_level(level);
    }
    target::connect(target, builder, &inv.headers, inv.oauth).await
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
                .map_err(|e| describe(method, &e))?;
            reporter.finish();
            print_json(&result)?;
            Ok(ExitCode::SUCCESS)
        }
        "tools" => {
            let tools = client
                .list_all_tools()
                .await
                .map_err(|e| describe("tools/list", &e))?;
            print_json(&json!({ "tools": tools }))?;
            Ok(ExitCode::SUCCESS)
        }
        "tool" => {
            let arguments = json_arg("ARGS_JSON", pos.get(2))?;
            let params = json!({ "name": pos[1], "arguments": arguments });
            let result = client
                .send_request("tools/call", params, options(reporter))
                .await
                .map_err(|e| describe("tools/call", &e))?;
            reporter.finish();
            print_json(&result)?;
            if result.get("isError").and_then(Value::as_bool) == Some(true) {
                eprintln!(
                    "ferromcp: tool {:?} returned an error result (isError)",
                    pos[1]
                );
                return Ok(ExitCode::from(2));
            }
            Ok(ExitCode::SUCCESS)
        }
        _ => crate::inspect::run(client, inv.json).await,
    }
}

#[cfg(test)]
mod tests {
    use super::{Lifecycle, parse};

    #[test]
    fn options_anywhere() {
        let inv = parse(
            &[
                "--protocol",
                "2026-07-28",
                "T",
                "add",
                "--timeout=2.5",
                "{}",
                "--header",
                "A: b",
            ],
            false,
        )
        .unwrap_or_else(|e| unreachable!("{e}"));
        assert_eq!(inv.positional, ["T", "add", "{}"]);
        assert_eq!(inv.lifecycle, Lifecycle::Modern);
        assert_eq!(inv.timeout, Some(std::time::Duration::from_millis(2500)));
        assert_eq!(inv.headers.len(), 1);
        let inv = parse(&["--protocol=2025-11-25", "--", "--odd"], false)
            .unwrap_or_else(|e| unreachable!("{e}"));
        assert_eq!(inv.lifecycle, Lifecycle::Handshake);
        assert_eq!(inv.positional, ["--odd"]);
        assert!(parse(&["--json"], false).is_err());
        assert!(parse(&["--json"], true).is_ok_and(|i| i.json));
        assert!(parse(&["--protocol", "1999-01-01"], false).is_err());
        assert!(parse(&["--timeout", "0"], false).is_err());
        assert!(parse(&["--timeout"], false).is_err());
        assert!(parse(&["--log-level", "loud"], false).is_err());
        assert!(parse(&["--log-level", "debug"], false).is_ok_and(|i| i.log_level.is_some()));
    }
}
