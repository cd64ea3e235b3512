//! `ferromcp`: serve the demo MCP server, talk to any MCP server, bridge transports, and look
//! at what the SDK knows about the protocol.

// How the client subcommands answer the server's elicitation, sampling and roots requests.
mod answer;
// The MCP Apps host of the web inspector (page script, sandbox page and its headers), served
// by the inspector's server.
mod apps_host;
// The client subcommands (`call`, `tools`, `tool`, `inspect`) and `bridge`: own files.
mod bridge;
mod cli;
mod client_cmd;
mod demo;
// `ferromcp gateway` (servers composed into one): its own file.
mod gateway;
mod http_client;
mod inspect;
// `ferromcp inspect --web`: the web inspector (server, API, page).
mod inspect_web;
mod output;
mod report;
// `ferromcp serve --http` (Streamable HTTP): kept in its own file.
mod serve_http;
mod split;
// The stderr writer of log lines: queued, written by a thread of its own (F40).
mod stderr_log;
mod target;
mod telemetry;
mod terminal;

use std::io::Write;
use std::process::ExitCode;

use ferromcp_types::ProtocolVersion;
use ferromcp_types::tables::{self, Kind};
use serde_json::{Value, json};

use crate::cli::Command;
use crate::output::Output;

fn main() -> ExitCode {
    let cli = match cli::parse(std::env::args_os()) {
        Ok(cli) => cli,
        Err(e) => {
            // Help and the version on stdout (status 0); a usage error on stderr (status 2).
            let _ = e.print();
            return ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2));
        }
    };
    // OTLP export when OTEL_EXPORTER_OTLP_ENDPOINT is set; kept until the command is done.
    let telemetry = telemetry::init_from_env();
    let code = run(cli);
    drop(telemetry);
    // The last log lines out before the process ends (a stuck stderr waits a bounded time).
    stderr_log::flush();
    code
}

fn run(cli: cli::Cli) -> ExitCode {
    let output = cli.output;
    match cli.command {
        // No command: the help, as `--help` (status 0).
        None => {
            print_out(&cli::long_help(None));
            ExitCode::SUCCESS
        }
        Some(Command::Serve(args)) if args.http.is_some() => serve_http::run(&args),
        Some(Command::Serve(_)) => serve(),
        Some(Command::Call(args)) => client_cmd::run(&args.request(), output),
        Some(Command::Tools(args)) => client_cmd::run(&args.request(), output),
        Some(Command::Tool(args)) => client_cmd::run(&args.request(), output),
        Some(Command::Inspect(args)) if args.web.web => {
            let (target, headers, protocol) = args.web_target();
            inspect_web::run(&args.web, target, headers, protocol)
        }
        Some(Command::Inspect(args)) => {
            let (request, output) = args.request(output);
            client_cmd::run(&request, output)
        }
        Some(Command::Bridge(args)) => bridge::run(&args),
        Some(Command::Gateway(args)) => gateway::run(&args),
        Some(Command::Spec(args)) => match args.version.as_deref() {
            None => spec(&ProtocolVersion::ALL, output),
            Some(version) => match version.parse::<ProtocolVersion>() {
                Ok(v) => spec(&[v], output),
                Err(e) => fail(&e.to_string()),
            },
        },
        Some(Command::Completions(args)) => {
            let script = cli::completions(args.shell);
            let _ = std::io::stdout().write_all(&script);
            ExitCode::SUCCESS
        }
    }
}

fn print_out(text: &str) {
    // A closed stdout (e.g. `| head`) is not an error worth reporting.
    let _ = std::io::stdout().write_all(text.as_bytes());
}

/// The command's error on stderr: after any log lines queued before it (through the queue
/// once it exists; `main` flushes it before exiting), never a panic on a closed stderr.
fn fail(message: &str) -> ExitCode {
    stderr_log::message(&format!("ferromcp: {message}\n"));
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
        // Queued and written by a thread of its own: a full stderr pipe nobody reads drops
        // lines (counted) instead of blocking the thread that logs (F40).
        .with_writer(stderr_log::StderrLog)
        .with_max_level(level)
        .with_ansi(false)
        // A log line that cannot be written (stderr closed by the parent) is dropped. Left
        // on, the subscriber reports the failure with `eprintln!`, which panics on the same
        // closed stderr: inside a handler that panic turned the request into -32603.
        .log_internal_errors(false)
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

fn spec(versions: &[ProtocolVersion], output: Output) -> ExitCode {
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
    match output::render(&Value::Object(out), output) {
        Ok(text) => {
            print_out(&text);
            ExitCode::SUCCESS
        }
        Err(e) => fail(&e),
    }
}
