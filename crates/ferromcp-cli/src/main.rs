//! `ferromcp`: serve the demo MCP server, talk to any MCP server, bridge transports, and look
//! at what the SDK knows about the protocol.

// The client subcommands (`call`, `tools`, `tool`, `inspect`) and `bridge`: own files.
mod bridge;
mod client_cmd;
mod demo;
mod inspect;
mod report;
// `ferromcp serve --http` (Streamable HTTP): kept in its own file.
mod serve_http;
mod split;
mod target;
mod telemetry;

use std::io::Write;
use std::process::ExitCode;

use ferromcp_types::ProtocolVersion;
use ferromcp_types::tables::{self, Kind};
use serde_json::{Value, json};

const USAGE: &str = "\
ferromcp — a Model Context Protocol toolkit (Rust)

USAGE:
    ferromcp serve            Serve the built-in demo server on stdio (both protocol eras)
    ferromcp serve --http ADDR [--stateless] [--json-response] [--allowed-host H]...
                   [--allowed-origin O]... [--auth]
                              Serve it over Streamable HTTP at /mcp (--auth: behind the
                              embedded OAuth 2.1 authorization server)
    ferromcp spec [VERSION]   Print which methods exist at each protocol version, as JSON
    ferromcp --version        Print the version
    ferromcp --help           Print this help

  Talk to any MCP server (TARGET: an http(s):// URL, or a quoted command that starts a stdio
  server, e.g. \"ferromcp serve\"; options --protocol auto|2025-11-25|2026-07-28,
  --header NAME:VALUE, --timeout SECONDS, --log-level LEVEL, --oauth):
    ferromcp call TARGET METHOD [PARAMS_JSON]   Send any request; print the result as JSON
    ferromcp tools TARGET                       List every tool as JSON
    ferromcp tool TARGET NAME [ARGS_JSON]       Call a tool (exit 2 on an isError result)
    ferromcp inspect TARGET [--json]            Show the server and all it offers
    ferromcp bridge --stdio-to-http ADDR -- COMMAND...
                              Serve a stdio server over Streamable HTTP at http://ADDR/mcp
    ferromcp bridge --http-to-stdio URL         Serve an HTTP server on this process's stdio
  (`ferromcp COMMAND --help` for each; JSON on stdout, messages and server logs on stderr;
  exit status 1 on a protocol or transport error)

ENVIRONMENT:
    FERROMCP_LOG=error|warn|info|debug|trace   log level on stderr (default warn)

The demo server exposes:
";

fn main() -> ExitCode {
    let _telemetry = telemetry::init_from_env();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    match args.as_slice() {
        [] | ["--help" | "-h" | "help"] => {
            print_out(&format!("{USAGE}{}\n", demo::CONTENTS));
            ExitCode::SUCCESS
        }
        ["--version" | "-V"] => {
            print_out(&format!("ferromcp {}\n", env!("CARGO_PKG_VERSION")));
            ExitCode::SUCCESS
        }
        ["serve", "--help" | "-h"] => {
            print_out(&format!(
                "ferromcp serve: the demo server on stdio.\n\n{}\n",
                demo::CONTENTS
            ));
            ExitCode::SUCCESS
        }
        ["serve"] => serve(),
        // Streamable HTTP (src/serve_http.rs).
        ["serve", "--http", "--help" | "-h"] => {
            print_out(&format!("{}\n\n{}\n", serve_http::HELP, demo::CONTENTS));
            ExitCode::SUCCESS
        }
        ["serve", "--http", rest @ ..] => serve_http::run(rest),
        // The client subcommands (src/client_cmd.rs, src/inspect.rs) and the bridge.
        [cmd @ ("call" | "tools" | "tool" | "inspect"), rest @ ..] => {
            if rest.iter().any(|a| matches!(*a, "--help" | "-h")) {
                print_out(&format!("{}\n", client_cmd::help(cmd)));
                return ExitCode::SUCCESS;
            }
            client_cmd::run(cmd, rest)
        }
        ["bridge", rest @ ..] => bridge::run(rest),
        ["spec"] => spec(&ProtocolVersion::ALL),
        ["spec", version] => match version.parse::<ProtocolVersion>() {
            Ok(v) => spec(&[v]),
            Err(e) => fail(&e.to_string()),
        },
        _ => fail(&format!(
            "unknown arguments {args:?}; see `ferromcp --help`"
        )),
    }
}

fn print_out(text: &str) {
    // A closed stdout (e.g. `| head`) is not an error worth reporting.
    let _ = std::io::stdout().write_all(text.as_bytes());
}

fn fail(message: &str) -> ExitCode {
    eprintln!("ferromcp: {message}");
    ExitCode::FAILURE
}

fn init_logging() {
    let level = match std::env::var("FERROMCP_LOG").as_deref() {
        Ok("error") => tracing::Level::ERROR,
        Ok("info") => tracing::Level::INFO,
        Ok("debug") => tracing::Level::DEBUG,
        Ok("trace") => tracing::Level::TRACE,
        _ => tracing::Level::WARN,
    };
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_max_level(level)
        .with_ansi(false)
        .init();
}

fn serve() -> ExitCode {
    init_logging();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return fail(&format!("cannot start the async runtime: {e}")),
    };
    let server = demo::server();
    match runtime.block_on(ferromcp_server::serve_stdio(server.server())) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fail(&e.to_string()),
    }
}

fn spec(versions: &[ProtocolVersion]) -> ExitCode {
    let out: serde_json::Map<String, Value> = versions
        .iter()
        .map(|&v| {
            let list = |kind| tables::methods(kind, v).to_vec();
            let entry = json!({
                "era": format!("{:?}", v.era()).to_lowercase(),
                "clientRequests": list(Kind::ClientRequest),
                "clientNotifications": list(Kind::ClientNotification),
                "serverRequests": list(Kind::ServerRequest),
                "serverNotifications": list(Kind::ServerNotification),
            });
            (v.as_str().to_owned(), entry)
        })
        .collect();
    match serde_json::to_string_pretty(&out) {
        Ok(text) => {
            print_out(&format!("{text}\n"));
            ExitCode::SUCCESS
        }
        Err(e) => fail(&e.to_string()),
    }
}
