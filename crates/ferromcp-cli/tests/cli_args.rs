//! The `ferromcp` command line as clap reads it: usage errors (B57), shell completions (B58),
//! `--output` (B59), and the help of every command. Every run is killed after a deadline.

#![allow(clippy::unwrap_used, clippy::panic)]

mod bin_run;

use std::ffi::OsString;

use bin_run::{BIN, LIMIT, Run, ferromcp, finish};

use serde_json::Value;

/// Runs the binary with `args`, killing it after [`LIMIT`].
fn run_os(args: &[OsString]) -> Run {
    finish(ferromcp(args), LIMIT)
}

fn run(args: &[&str]) -> Run {
    run_os(&args.iter().map(OsString::from).collect::<Vec<_>>())
}

fn serve() -> String {
    format!("{BIN} serve")
}

fn json_of(r: &Run) -> Value {
    serde_json::from_str(&r.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}\nstderr: {}",
            r.stdout, r.stderr
        )
    })
}

/// Asserts a usage error: exit status 2, nothing on stdout, a message naming `mention` on
/// stderr, and no panic.
fn assert_usage_error(args: &[OsString], mention: &str) {
    let r = run_os(args);
    assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
    assert!(r.stdout.is_empty(), "{args:?}: stdout {:?}", r.stdout);
    assert!(r.stderr.starts_with("error: "), "{args:?}: {}", r.stderr);
    assert!(r.stderr.contains(mention), "{args:?}: {}", r.stderr);
    assert!(!r.stderr.contains("panicked"), "{args:?}: {}", r.stderr);
}

/// B57 — a command line that cannot be read (an unknown flag anywhere, a flag without its
/// value, an option without the mode it belongs to, an extra argument, a value outside a
/// fixed set, an argument that is not UTF-8): a clear message on stderr, nothing on stdout,
/// exit status 2, never a panic.
#[test]
fn b57_unreadable_command_lines_exit_2_with_a_message_and_no_stdout() {
    let target = serve();
    let cases: &[(&[&str], &str)] = &[
        (&["--bogus"], "--bogus"),
        (&["call", &target, "ping", "--bogus"], "--bogus"),
        (&["tools", "--verbose", &target], "--verbose"),
        (&["inspect", &target, "--jsn"], "--jsn"),
        (&["tools", &target, "--timeout"], "--timeout"),
        (&["tool", &target, "add", "--header"], "--header"),
        (&["serve", "--http"], "--http"),
        (&["serve", "--stateless"], "--http"),
        (&["serve", "--http", "127.0.0.1:0", "--bogus"], "--bogus"),
        (&["bridge", "--foo"], "--foo"),
        (&["bridge", "--http-to-stdio"], "--http-to-stdio"),
        (
            &["bridge", "--http-to-stdio", "u", "--json-response"],
            "--json-response",
        ),
        (&["tools", &target, "extra"], "extra"),
        (&["spec", "2025-11-25", "extra"], "extra"),
        (&["nosuchcommand"], "nosuchcommand"),
        (&["--output", "yaml", "spec"], "yaml"),
        (&["--output"], "--output"),
        (&["completions"], "SHELL"),
        (&["completions", "tcsh"], "tcsh"),
    ];
    for (args, mention) in cases {
        let args: Vec<OsString> = args.iter().map(OsString::from).collect();
        assert_usage_error(&args, mention);
    }
    // Not UTF-8 (the hand-written parser read `std::env::args()`, which panics on it).
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let bad = std::ffi::OsStr::from_bytes(b"caf\xe9").to_owned();
        for (args, mention) in [
            (vec![OsString::from("tools"), bad.clone()], "UTF-8"),
            (vec![OsString::from("spec"), bad.clone()], "UTF-8"),
            (vec![bad.clone()], "unrecognized subcommand"),
        ] {
            assert_usage_error(&args, mention);
        }
    }
}

/// B58 — `ferromcp completions SHELL` prints a completion script for each shell clap_complete
/// knows (bash, zsh, fish, powershell, elvish) on stdout, naming every subcommand and the
/// global `--output`; nothing on stderr.
#[test]
fn b58_completions_for_every_shell_name_the_subcommands() {
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let r = run(&["completions", shell]);
        assert_eq!(r.code, 0, "{shell}: {}", r.stderr);
        assert!(r.stderr.is_empty(), "{shell}: {}", r.stderr);
        assert!(r.stdout.len() > 500, "{shell}: {}", r.stdout);
        for word in [
            "ferromcp",
            "serve",
            "call",
            "tools",
            "tool",
            "inspect",
            "bridge",
            "spec",
            "completions",
            "output",
            "stdio-to-http",
            "max-sessions-per-peer",
        ] {
            assert!(r.stdout.contains(word), "{shell}: {word} missing");
        }
    }
}

/// Splits `stdout` into lines, asserting there is exactly one and that it is JSON.
fn one_json_line(r: &Run) -> Value {
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.ends_with('\n'), "{:?}", r.stdout);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.len(), 1, "{}", r.stdout);
    serde_json::from_str(lines[0]).unwrap_or_else(|e| panic!("{e}: {}", lines[0]))
}

/// B59 — `--output json` prints the result as parseable, indented JSON and `--output compact`
/// as one line of JSON, for `call`, `tool`, `tools`, `inspect` and `spec` against the demo
/// server; `pretty` (the default) keeps `inspect` as text; the flag goes before or after the
/// command.
#[test]
fn b59_output_json_and_compact_are_parseable() {
    let target = serve();
    // call / tools: the same value in every format.
    let pretty = json_of(&run(&["call", &target, "tools/list"]));
    for format in ["json", "compact"] {
        let r = run(&["call", &target, "tools/list", "--output", format]);
        let v = if format == "json" {
            assert!(r.stdout.lines().count() > 1, "{}", r.stdout);
            json_of(&r)
        } else {
            one_json_line(&r)
        };
        assert_eq!(v, pretty, "{format}");
        let r = run(&["--output", format, "tools", &target]);
        let v = if format == "json" {
            json_of(&r)
        } else {
            one_json_line(&r)
        };
        assert!(v["tools"].as_array().is_some_and(|t| !t.is_empty()), "{v}");
    }
    let v = one_json_line(&run(&[
        "tool",
        &target,
        "add",
        r#"{"a":1,"b":2}"#,
        "--output=compact",
    ]));
    assert_eq!(v["content"][0]["text"], "3", "{v}");
    // inspect: text by default, JSON (the `--json` object) with json or compact.
    let text = run(&["inspect", &target]);
    assert_eq!(text.code, 0, "{}", text.stderr);
    assert!(serde_json::from_str::<Value>(&text.stdout).is_err());
    assert!(text.stdout.starts_with("Server:"), "{}", text.stdout);
    let legacy = json_of(&run(&[
        "inspect",
        "--json",
        &target,
        "--protocol",
        "2025-11-25",
    ]));
    let json = json_of(&run(&[
        "inspect",
        &target,
        "--output",
        "json",
        "--protocol",
        "2025-11-25",
    ]));
    assert_eq!(json["serverInfo"]["name"], "ferromcp-demo");
    assert_eq!(json, legacy);
    let compact = one_json_line(&run(&[
        "inspect",
        &target,
        "--output",
        "compact",
        "--protocol",
        "2025-11-25",
    ]));
    assert_eq!(compact, legacy);
    // spec needs no server.
    let spec = one_json_line(&run(&["spec", "--output", "compact"]));
    assert!(spec["2026-07-28"]["clientRequests"].is_array(), "{spec}");
    assert_eq!(json_of(&run(&["spec", "--output", "json"])), spec);
}

/// `--help` documents every command, and each command's `--help` every flag it takes.
#[test]
fn help_documents_every_command_and_flag() {
    let r = run(&["--help"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    for word in [
        "serve",
        "call",
        "tools",
        "tool",
        "inspect",
        "bridge",
        "spec",
        "completions",
        "--output",
        "FERROMCP_LOG",
        "FERROMCP_LOG_BUFFER",
        "FERROMCP_LOG_FLUSH_MS",
        "Examples:",
        "The demo server exposes:",
    ] {
        assert!(r.stdout.contains(word), "{word}: {}", r.stdout);
    }
    let client = [
        "--protocol",
        "--header",
        "--timeout",
        "--log-level",
        "--oauth",
    ];
    let cases: &[(&str, &[&str])] = &[
        (
            "serve",
            &[
                "--http",
                "--stateless",
                "--json-response",
                "--allowed-host",
                "--allowed-origin",
                "--disable-host-checks",
                "--max-sessions-per-peer",
                "--redis",
                "--auth",
                "The demo server exposes:",
            ],
        ),
        ("call", &client),
        ("tools", &client),
        ("tool", &client),
        (
            "inspect",
            &["--json", "--protocol", "--header", "--timeout", "--oauth"],
        ),
        (
            "bridge",
            &[
                "--stdio-to-http",
                "--http-to-stdio",
                "--json-response",
                "--allowed-host",
                "--allowed-origin",
                "--disable-host-checks",
                "--header",
            ],
        ),
        ("spec", &["VERSION"]),
        ("completions", &["bash", "zsh", "fish", "powershell"]),
    ];
    for (cmd, flags) in cases {
        let r = run(&[cmd, "--help"]);
        assert_eq!(r.code, 0, "{cmd}: {}", r.stderr);
        assert!(r.stdout.contains(&format!("ferromcp {cmd}")), "{cmd}");
        for flag in *flags {
            assert!(
                r.stdout.contains(flag),
                "{cmd}: {flag} missing:\n{}",
                r.stdout
            );
        }
        if *cmd != "spec" {
            assert!(r.stdout.contains("Examples:"), "{cmd}");
        }
    }
    // The old forms: no arguments and `bridge` alone print the help (status 0), and so does
    // `serve --http --help`.
    for args in [
        &[][..],
        &["bridge"],
        &["serve", "--http", "--help"],
        &["help"],
    ] {
        let r = run(args);
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
        assert!(r.stdout.contains("Usage:"), "{args:?}");
    }
}
