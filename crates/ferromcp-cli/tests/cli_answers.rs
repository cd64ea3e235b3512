//! `ferromcp tool`/`call` answering what the demo server asks of the client, in both eras:
//! elicitation from `--elicit` (JSON, decline, cancel), sampling from `--sampling-cmd` (with
//! its timeout and output limit), roots from `--root`. The binary runs as a user runs it,
//! stdin not a terminal; every run is killed after a deadline.

#![allow(clippy::unwrap_used, clippy::panic)]

mod bin_run;

#[cfg(unix)]
use std::process::Command;
#[cfg(unix)]
use std::time::Duration;

use bin_run::{BIN, LIMIT, Run, ferromcp, finish};

use serde_json::Value;

const ERAS: [&str; 2] = ["2025-11-25", "2026-07-28"];

/// Runs the binary with `args`, stdin empty, killing it after [`LIMIT`].
fn run(args: &[&str]) -> Run {
    finish(ferromcp(args), LIMIT)
}

fn serve() -> String {
    format!("{BIN} serve")
}

/// `ferromcp tool "ferromcp serve" NAME ARGS --protocol ERA --output compact EXTRA…`.
fn tool(era: &str, name: &str, args: &str, extra: &[&str]) -> Run {
    let target = serve();
    let mut argv = vec![
        "tool",
        &target,
        name,
        args,
        "--protocol",
        era,
        "--output",
        "compact",
    ];
    argv.extend_from_slice(extra);
    run(&argv)
}

/// The text of a tool result's first content block.
fn text(r: &Run) -> String {
    let v: Value = serde_json::from_str(&r.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}\nstderr: {}",
            r.stdout, r.stderr
        )
    });
    v["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// B60: `--elicit JSON` answers the demo's elicitation in both eras (a live request in the
/// handshake era, an input-required round at 2026-07-28); the result shows the content.
#[test]
fn b60_elicit_json_answers_in_both_eras() {
    for era in ERAS {
        let r = tool(
            era,
            "test_elicitation",
            r#"{"message":"Sign up"}"#,
            &[
                "--elicit",
                r#"{"username":"ada","email":"ada@example.org"}"#,
            ],
        );
        assert_eq!(r.code, 0, "{era}: {}", r.stderr);
        let t = text(&r);
        assert!(t.contains("action=accept"), "{era}: {t}");
        assert!(
            t.contains(r#""username":"ada""#) && t.contains("ada@example.org"),
            "{era}: {t}"
        );
        let r = tool(
            era,
            "test_input_required_result_multi_round",
            "{}",
            &["--elicit", r#"{"name":"Ada","color":"green"}"#],
        );
        // One answer for two forms (two rounds): each form takes the keys it has.
        assert_eq!(r.code, 0, "{era}: {}", r.stderr);
        assert_eq!(text(&r), "Ada likes green", "{era}: {}", r.stderr);
        assert!(
            r.stderr.contains("has no field color; left out"),
            "{era}: {}",
            r.stderr
        );
    }
}

/// B60: `--elicit decline` and `--elicit cancel` answer so in both eras; the message is shown
/// on stderr, stdout holds only the result.
#[test]
fn b60_elicit_decline_and_cancel() {
    for era in ERAS {
        for action in ["decline", "cancel"] {
            let r = tool(
                era,
                "test_elicitation",
                r#"{"message":"Sign up"}"#,
                &["--elicit", action],
            );
            assert_eq!(r.code, 0, "{era} {action}: {}", r.stderr);
            assert!(
                text(&r).contains(&format!("action={action}")),
                "{era}: {}",
                r.stdout
            );
            assert!(
                r.stderr.contains("the server asks: Sign up"),
                "{era}: {}",
                r.stderr
            );
            assert!(
                r.stderr.contains(&format!("answering {action}")),
                "{era}: {}",
                r.stderr
            );
        }
    }
}

/// C46: `--elicit` JSON that does not fit the form is answered with cancel, and the command
/// fails with the reason on stderr (both eras).
#[test]
fn c46_elicit_json_that_does_not_fit_fails_the_command() {
    for era in ERAS {
        let r = tool(
            era,
            "test_elicitation",
            r#"{"message":"Sign up"}"#,
            &["--elicit", r#"{"username":"ada","email":"not-an-email"}"#],
        );
        assert_eq!(r.code, 1, "{era}: {}", r.stderr);
        assert!(text(&r).contains("action=cancel"), "{era}: {}", r.stdout);
        assert!(
            r.stderr.contains("--elicit does not fit the form"),
            "{era}: {}",
            r.stderr
        );
        assert!(r.stderr.contains("email"), "{era}: {}", r.stderr);
    }
    let r = run(&["tool", &serve(), "add", "{}", "--elicit", "[1]"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("--elicit wants a JSON object"),
        "{}",
        r.stderr
    );
}

/// B60: `--root` answers roots/list in both eras with canonical, percent-encoded file URIs.
#[test]
fn b60_roots_in_both_eras() {
    let dir = std::env::temp_dir().join(format!("ferromcp roots {}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let canonical = std::fs::canonicalize(&dir).unwrap();
    let dotted = dir.join(".");
    for era in ERAS {
        let r = tool(
            era,
            "test_input_required_result_list_roots",
            "{}",
            &["--root", dotted.to_str().unwrap()],
        );
        assert_eq!(r.code, 0, "{era}: {}", r.stderr);
        let t = text(&r);
        assert!(t.starts_with("Client roots: file://"), "{era}: {t}");
        assert!(t.contains("ferromcp%20roots%20"), "{era}: {t}");
        assert!(!t.contains("/."), "{era}: not canonical: {t}");
        let name = canonical
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .replace(' ', "%20");
        assert!(t.ends_with(&name), "{era}: {t}");
    }
    let r = run(&[
        "tool",
        &serve(),
        "add",
        "{}",
        "--root",
        "/no/such/dir/at/all",
    ]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("--root"), "{}", r.stderr);
    let _ = std::fs::remove_dir_all(&dir);
}

#[cfg(unix)]
const ANSWER: &str = r#"sh -c 'cat >/dev/null; echo "{\"role\":\"assistant\",\"content\":{\"type\":\"text\",\"text\":\"Paris\"},\"model\":\"sh\"}"'"#;

/// B60: `--sampling-cmd` answers the demo's sampling in both eras: the command reads the
/// request on stdin and prints the result.
#[cfg(unix)]
#[test]
fn b60_sampling_cmd_in_both_eras() {
    for era in ERAS {
        let r = tool(
            era,
            "test_sampling",
            r#"{"prompt":"Capital?"}"#,
            &["--sampling-cmd", ANSWER],
        );
        assert_eq!(r.code, 0, "{era}: {}", r.stderr);
        assert_eq!(text(&r), "LLM response: Paris", "{era}");
        // The request reaches the command on stdin.
        let echo = r#"sh -c 'grep -q "Write a one-line greeting" && echo "{\"role\":\"assistant\",\"content\":{\"type\":\"text\",\"text\":\"hi\"},\"model\":\"m\"}"'"#;
        let r = tool(
            era,
            "test_input_required_result_sampling",
            "{}",
            &["--sampling-cmd", ANSWER],
        );
        assert_eq!(text(&r), "The model answered: Paris", "{era}: {}", r.stderr);
        let r = tool(
            era,
            "test_input_required_result_multiple_inputs",
            "{}",
            &[
                "--sampling-cmd",
                echo,
                "--elicit",
                r#"{"name":"Ada"}"#,
                "--root",
                "/",
            ],
        );
        assert_eq!(text(&r), "hi Ada (roots: file:///)", "{era}: {}", r.stderr);
    }
}

/// C47: a sampling command that runs past `--sampling-timeout`, prints more than
/// `--sampling-max-output`, prints invalid JSON or fails is stopped and answered with an error
/// the server sees; stderr says why (both eras).
#[cfg(unix)]
#[test]
fn c47_sampling_cmd_limits_and_failures() {
    let cases = [
        (
            r#"sh -c 'exec sleep 20'"#,
            &["--sampling-timeout", "0.5"][..],
            "timed out",
            "did not finish within 0.5 s",
        ),
        (
            r#"sh -c 'head -c 5000 /dev/zero'"#,
            &["--sampling-max-output", "1000"][..],
            "output too large",
            "more than 1000 bytes",
        ),
        (
            r#"sh -c 'echo not json'"#,
            &[][..],
            "invalid result",
            "not a CreateMessageResult",
        ),
        (r#"sh -c 'exit 3'"#, &[][..], "non-zero exit", "exited with"),
        ("/no/such/program", &[][..], "cannot start", "cannot start"),
    ];
    for era in ERAS {
        for (cmd, extra, short, long) in cases {
            let mut args = vec!["--sampling-cmd", cmd];
            args.extend_from_slice(extra);
            let r = tool(era, "test_sampling", r#"{"prompt":"x"}"#, &args);
            assert_ne!(r.code, 0, "{era} {cmd}: {}", r.stdout);
            let all = format!("{}{}", r.stdout, r.stderr);
            assert!(
                all.contains(short),
                "{era} {cmd}: the server's error lacks {short:?}: {all}"
            );
            assert!(
                r.stderr.contains(long),
                "{era} {cmd}: stderr lacks {long:?}: {}",
                r.stderr
            );
            assert!(
                r.took < Duration::from_secs(15),
                "{era} {cmd}: took {:?}",
                r.took
            );
        }
    }
    let r = run(&["tool", &serve(), "add", "{}", "--sampling-timeout", "3"]);
    assert_eq!(
        r.code, 2,
        "--sampling-timeout without --sampling-cmd: {}",
        r.stderr
    );
}

/// B60: without `--elicit`, `--sampling-cmd` or `--root` (and stdin not a terminal), the
/// client declares none of them; a server that needs one fails the call, and stderr names the
/// option that would answer it.
#[test]
fn b60_nothing_is_declared_without_the_options() {
    for era in ERAS {
        let r = tool(era, "test_missing_capability", "{}", &[]);
        assert!(
            r.stdout.contains("sampling") || r.stderr.contains("sampling"),
            "{era}: {} {}",
            r.stdout,
            r.stderr
        );
        assert!(
            !r.stdout.contains("the client can sample"),
            "{era}: {}",
            r.stdout
        );
    }
    #[cfg(unix)]
    {
        let r = tool(
            "2025-11-25",
            "test_missing_capability",
            "{}",
            &["--sampling-cmd", ANSWER],
        );
        assert_eq!(text(&r), "the client can sample", "{}", r.stderr);
    }
}

/// A handshake-era stdio server (sh) whose log line, URL-mode elicitation and form
/// elicitation carry escape sequences and control characters.
#[cfg(unix)]
const HOSTILE: &str = r#"while IFS= read -r line; do
  id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
  case "$line" in
    *'"method":"initialize"'*)
      printf '%s\n' "{\"jsonrpc\":\"2.0\",\"id\":$id,\"result\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{\"tools\":{}},\"serverInfo\":{\"name\":\"evil\",\"version\":\"1\"}}}";;
    *'"method":"tools/call"'*)
      printf '%s\n' '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"log\u001b[2J\u001b]0;title\u0007"}}'
      printf '%s\n' '{"jsonrpc":"2.0","id":"e1","method":"elicitation/create","params":{"mode":"url","elicitationId":"id\u001b[31m","message":"open\u001b[1A\rme","url":"https://evil.example/\u001b[8m"}}'
      IFS= read -r answer
      printf '%s\n' '{"jsonrpc":"2.0","id":"e2","method":"elicitation/create","params":{"message":"form\u009b2J","requestedSchema":{"type":"object","properties":{}}}}'
      IFS= read -r answer
      printf '%s\n' "{\"jsonrpc\":\"2.0\",\"id\":$id,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"done\"}]}}";;
  esac
done
"#;

/// C45 through the binary: what a hostile server sends (a log line, a URL-mode elicitation's
/// id, message and URL, a form's message) reaches stderr with every control character shown
/// as an escape; a URL holding one is not offered; stdout holds only the result.
#[cfg(unix)]
#[test]
fn c45_hostile_server_text_reaches_stderr_escaped() {
    let script = std::env::temp_dir().join(format!("ferromcp-hostile-{}.sh", std::process::id()));
    std::fs::write(&script, HOSTILE).unwrap();
    let target = format!("sh {}", script.display());
    let r = run(&[
        "tool", &target, "x", "{}", "--elicit", "decline", "--output", "compact",
    ]);
    let _ = std::fs::remove_file(&script);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(text(&r), "done");
    assert!(
        !r.stderr.chars().any(|c| c.is_control() && c != '\n'),
        "a control character reached the terminal: {:?}",
        r.stderr
    );
    for shown in [
        "[log info] log\\x1b[2J\\x1b]0;title\\x07",
        "(elicitation id\\x1b[31m)",
        "open\\x1b[1A\\x0dme",
        "the link is not shown: it holds spaces or control characters; answering decline",
        "the server asks: form\\x9b2J",
    ] {
        assert!(r.stderr.contains(shown), "{shown:?} not in {}", r.stderr);
    }
}

/// B61 on a real terminal: util-linux `script` gives the binary a pseudo-terminal as stdin,
/// so the form is asked field by field (a bad answer asked again), or declined with an empty
/// first answer, in both eras. Skipped with a notice where `script` is missing.
#[cfg(unix)]
#[test]
fn b61_interactive_prompts_on_a_terminal() {
    let script = ["/usr/bin/script", "/bin/script"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists());
    let Some(script) = script else {
        eprintln!("b61_interactive_prompts_on_a_terminal: skipped, no `script` command");
        return;
    };
    let on_terminal = |era: &str, input: &str| {
        let command = format!(
            "{BIN} tool '{BIN} serve' test_elicitation '{{\"message\":\"Sign up\"}}' --output compact --protocol {era}"
        );
        let mut cmd = Command::new(script);
        cmd.args(["-qec", &command, "/dev/null"]);
        let r = bin_run::finish_fed(cmd, Some(input), LIMIT);
        (Some(r.code), r.stdout)
    };
    for era in ERAS {
        let (code, out) = on_terminal(era, "bad email\nada@example.org\nada\n");
        assert_eq!(code, Some(0), "{era}: {out}");
        assert!(out.contains("not an email address"), "{era}: {out}");
        assert!(out.contains("try again"), "{era}: {out}");
        assert!(
            out.contains(
                r#"action=accept, content={\"username\":\"ada\",\"email\":\"ada@example.org\"}"#
            ),
            "{era}: {out}"
        );
        let (code, out) = on_terminal(era, "\nd\n");
        assert_eq!(code, Some(0), "{era}: {out}");
        assert!(out.contains("action=decline"), "{era}: {out}");
    }
}
