//! The command line, declared with clap: the top-level options, the subcommands, and the help
//! text around them. Each subcommand's own arguments are a struct next to its code
//! ([`ServeArgs`], [`CallArgs`] and the other client commands, [`BridgeArgs`]): adding a flag is adding a field there.
//!
//! clap reports what it cannot read as a command line (an unknown flag, a flag without its
//! value, an extra argument) on stderr with exit status 2. The commands themselves check the
//! values they use (a TARGET, `--protocol`, `--timeout`, JSON arguments…) and report a bad one
//! with `ferromcp: …` and exit status 1, as before. `ferromcp tool` exits 3 when the tool
//! answered with `isError: true`.

use clap::{Args, CommandFactory, Parser, Subcommand};

use crate::bridge::BridgeArgs;
use crate::client_cmd::{CallArgs, InspectArgs, ToolArgs, ToolsArgs};
use crate::output::Output;
use crate::serve_http::ServeArgs;

/// The usage lines of `ferromcp --help`: every form of every command.
const USAGE: &str = "\
ferromcp serve [--http ADDR [--stateless] [--json-response] [--allowed-host H]...
                      [--allowed-origin O]... [--auth | --auth-issuer ISSUER ...] ...]
       ferromcp call TARGET METHOD [PARAMS_JSON] [OPTIONS]
       ferromcp tools TARGET [OPTIONS]
       ferromcp tool TARGET NAME [ARGS_JSON] [OPTIONS]
       ferromcp inspect TARGET [--json] [OPTIONS]
       ferromcp inspect --web [TARGET] [--listen ADDR] [--no-open] [OPTIONS]
       ferromcp bridge --stdio-to-http ADDR [OPTIONS] -- COMMAND...
       ferromcp bridge --http-to-stdio URL [--header NAME:VALUE]...
       ferromcp gateway CONFIG.toml [--http ADDR [--auth | --auth-issuer ISSUER ...] [--redis URL]]
       ferromcp spec [VERSION]
       ferromcp completions bash|zsh|fish|powershell|elvish";

/// After the options of `ferromcp --help` (the demo server's contents follow).
const MORE: &str = "\
TARGET (call, tools, tool, inspect): an http(s):// URL, or a quoted command that starts a
stdio server, e.g. \"ferromcp serve\"; `ferromcp COMMAND --help` for each command's options.
Results on stdout (see --output); messages, server logs and progress on stderr.

Exit status: 0 success; 1 a protocol or transport error, or a value a command cannot use;
2 a command line that cannot be read (unknown flag, missing value), or a tool result with
isError (`ferromcp tool`).

Examples:
    ferromcp inspect \"ferromcp serve\"
    ferromcp tool \"ferromcp serve\" add '{\"a\":1,\"b\":2}' --output compact
    ferromcp serve --http 127.0.0.1:8000
    ferromcp completions bash > ~/.local/share/bash-completion/completions/ferromcp

Environment:
    FERROMCP_LOG=error|warn|info|debug|trace   log level on stderr (default warn)
    FERROMCP_LOG_BUFFER=BYTES    log lines waiting for stderr, at most (default 1048576);
                                 past it lines are dropped and counted, never blocking;
                                 0: no queue, each line written at once (may block)
    FERROMCP_LOG_FLUSH_MS=MS     at exit, the longest wait for those lines (default 1000)

The demo server exposes:";

/// `ferromcp`: a Model Context Protocol toolkit.
#[derive(Debug, Parser)]
#[command(
    name = "ferromcp",
    version,
    about = "ferromcp — a Model Context Protocol toolkit (Rust)",
    override_usage = USAGE,
    disable_help_subcommand = false
)]
pub(crate) struct Cli {
    /// How results are printed on stdout (call, tools, tool, inspect, spec).
    #[arg(
        long,
        global = true,
        value_enum,
        value_name = "FORMAT",
        default_value_t,
        display_order = 900
    )]
    pub(crate) output: Output,
    #[command(subcommand)]
    pub(crate) command: Option<Command>,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Serve the built-in demo server (stdio, or Streamable HTTP with --http ADDR).
    Serve(ServeArgs),
    /// Send any request to a server and print its result.
    #[command(
        override_usage = "ferromcp call TARGET METHOD [PARAMS_JSON] [OPTIONS]",
        after_help = crate::client_cmd::CALL_AFTER
    )]
    Call(CallArgs),
    /// List every tool of a server (all pages) as {"tools": [...]}.
    #[command(
        override_usage = "ferromcp tools TARGET [OPTIONS]",
        after_help = crate::client_cmd::TOOLS_AFTER
    )]
    Tools(ToolsArgs),
    /// Call a tool and print its result (exit status 3 on an isError result: the tool ran and
    /// reported a failure, told apart from a usage error's 2 and a failed request's 1).
    #[command(
        override_usage = "ferromcp tool TARGET NAME [ARGS_JSON] [OPTIONS]",
        after_help = crate::client_cmd::TOOL_AFTER
    )]
    Tool(ToolArgs),
    /// Show the server and all it offers
    ///
    /// Name and version, protocol version and era, capabilities, instructions, tools,
    /// resources, resource templates and prompts: text for people on stdout (not for
    /// scripts); --json or --output json|compact print the same as one JSON object.
    /// --web serves the web inspector on loopback instead: its URL, with a random token,
    /// is the first line on stdout; the page connects servers and drives them.
    #[command(
        verbatim_doc_comment,
        override_usage = "ferromcp inspect TARGET [--json] [OPTIONS]\n       \
                          ferromcp inspect --web [TARGET] [--listen ADDR] [--no-open] [OPTIONS]",
        after_help = crate::client_cmd::INSPECT_AFTER
    )]
    Inspect(InspectArgs),
    /// Serve a stdio server over HTTP, or an HTTP server on stdio.
    Bridge(BridgeArgs),
    /// Serve the servers a config file names as one (stdio, or Streamable HTTP with --http).
    #[command(
        override_usage = "ferromcp gateway CONFIG.toml [--http ADDR [--auth | --auth-issuer ISSUER ...] [--redis URL]]",
        after_help = crate::gateway::AFTER
    )]
    Gateway(crate::gateway::GatewayArgs),
    /// Print which methods exist at each protocol version, as JSON.
    Spec(SpecArgs),
    /// Print a shell completion script on stdout.
    #[command(after_help = COMPLETIONS_AFTER)]
    Completions(CompletionsArgs),
}

/// `ferromcp spec [VERSION]`.
#[derive(Debug, Args)]
pub(crate) struct SpecArgs {
    /// Only this protocol version (e.g. 2025-11-25); all of them by default.
    #[arg(value_name = "VERSION")]
    pub(crate) version: Option<String>,
}

/// `ferromcp completions SHELL`.
#[derive(Debug, Args)]
pub(crate) struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum, value_name = "SHELL")]
    pub(crate) shell: clap_complete::Shell,
}

const COMPLETIONS_AFTER: &str = "\
Examples:
    ferromcp completions bash > ~/.local/share/bash-completion/completions/ferromcp
    ferromcp completions zsh > ~/.zfunc/_ferromcp      # with fpath+=~/.zfunc
    ferromcp completions fish > ~/.config/fish/completions/ferromcp.fish
    ferromcp completions powershell >> $PROFILE";

/// The command line's definition, with the texts only known at run time (the demo server's
/// contents) in place.
pub(crate) fn command() -> clap::Command {
    let demo = crate::demo::CONTENTS;
    Cli::command()
        .after_help(format!("{MORE}\n{demo}"))
        .mut_subcommand("serve", |c| {
            c.after_help(format!("{}\n\n{demo}", crate::serve_http::AFTER))
        })
}

/// Reads the command line (the first item of `args` is the program). `Err` is clap's
/// message: help, the version, or a usage error.
pub(crate) fn parse<I, T>(args: I) -> Result<Cli, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let mut args: Vec<std::ffi::OsString> = args.into_iter().map(Into::into).collect();
    // `serve --http --help` (the help of `serve --http` before clap) is `serve --help`:
    // clap would read `--help` as the missing ADDR.
    if let [_, serve, http, help] = args.as_slice()
        && serve == "serve"
        && http == "--http"
        && (help == "--help" || help == "-h")
    {
        args.remove(2);
    }
    let mut cmd = command();
    let mut matches = cmd.try_get_matches_from_mut(args)?;
    <Cli as clap::FromArgMatches>::from_arg_matches_mut(&mut matches)
        .map_err(|e| e.format(&mut cmd))
}

/// The long help of `ferromcp` or of one subcommand, as `--help` prints it.
pub(crate) fn long_help(subcommand: Option<&str>) -> String {
    let mut cmd = command();
    cmd.build();
    let cmd = match subcommand.and_then(|name| cmd.find_subcommand_mut(name)) {
        Some(sub) => sub,
        None => &mut cmd,
    };
    cmd.render_long_help().to_string()
}

/// A completion script for `shell`.
pub(crate) fn completions(shell: clap_complete::Shell) -> Vec<u8> {
    let mut cmd = command();
    let mut script = Vec::new();
    // Into memory: the generator panics on a failed write (a closed stdout); printing is
    // the caller's, which ignores that.
    clap_complete::generate(shell, &mut cmd, "ferromcp", &mut script);
    script
}

#[cfg(test)]
mod tests {
    use super::{Command, command, parse};

    #[test]
    fn definition_is_consistent() {
        command().debug_assert();
    }

    #[test]
    fn global_output_anywhere() {
        let cli = parse(["ferromcp", "tools", "T", "--output", "compact"])
            .unwrap_or_else(|e| unreachable!("{e}"));
        assert_eq!(cli.output, crate::output::Output::Compact);
        assert!(matches!(cli.command, Some(Command::Tools(_))));
        let cli =
            parse(["ferromcp", "--output=json", "spec"]).unwrap_or_else(|e| unreachable!("{e}"));
        assert_eq!(cli.output, crate::output::Output::Json);
        assert!(parse(["ferromcp", "--output", "yaml", "spec"]).is_err());
    }
}
