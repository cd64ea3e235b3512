//! The client side of the `ferromcp` binary, run as a user runs it: `call`, `tools`, `tool`,
//! `inspect` against `ferromcp serve` as the stdio TARGET (both eras), and `bridge
//! --stdio-to-http` answering raw HTTP POSTs. Every child is killed after a deadline.

#![allow(clippy::unwrap_used, clippy::panic)]

mod bin_run;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::thread;

use serde_json::Value;

use bin_run::{BIN, LIMIT, Run, ferromcp, finish};

/// Runs the binary with `args` (and `PATH` replaced when given), killing it after [`LIMIT`].
fn run_with(args: &[&str], path: Option<&str>) -> Run {
    let mut cmd = ferromcp(args);
    if let Some(p) = path {
        cmd.env("PATH", p);
    }
    finish(cmd, LIMIT)
}

fn run(args: &[&str]) -> Run {
    run_with(args, None)
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

fn tool_names(v: &Value) -> Vec<String> {
    v["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn tools_lists_the_demo_tools() {
    let r = run(&["tools", &serve()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let names = tool_names(&json_of(&r));
    for name in ["add", "echo", "countdown", "test_error_handling"] {
        assert!(names.iter().any(|n| n == name), "{name} missing: {names:?}");
    }
}

#[test]
fn tool_add_prints_the_result() {
    let r = run(&["tool", &serve(), "add", r#"{"a":1,"b":2}"#]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = json_of(&r);
    assert_eq!(v["content"][0]["text"], "3", "{v}");
    assert_ne!(v["isError"], true);
}

#[test]
fn tool_error_result_exits_3() {
    // 3, not 2: a script tells a tool that ran and failed from a command line clap refused (2)
    // and from a request that failed (1).
    let r = run(&["tool", &serve(), "test_error_handling"]);
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert_eq!(json_of(&r)["isError"], true);
    assert!(r.stderr.contains("isError"), "{}", r.stderr);
}

#[test]
fn call_sends_any_request() {
    let r = run(&["call", &serve(), "tools/list"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(tool_names(&json_of(&r)).contains(&"add".to_owned()));
    let r = run(&[
        "call",
        &serve(),
        "resources/read",
        r#"{"uri":"demo://readme"}"#,
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        json_of(&r)["contents"][0]["text"]
            .as_str()
            .unwrap()
            .contains("demo server")
    );
}

#[test]
fn errors_exit_1_with_a_message_and_no_stdout() {
    let r = run(&["call", &serve(), "bogus/method"]);
    assert_eq!(r.code, 1);
    assert!(r.stdout.is_empty(), "{}", r.stdout);
    assert!(
        r.stderr.contains("ferromcp: bogus/method failed: -32601"),
        "{}",
        r.stderr
    );
    let r = run(&["tool", &serve(), "no_such_tool"]);
    assert_eq!(r.code, 1);
    assert!(r.stdout.is_empty(), "{}", r.stdout);
    assert!(
        r.stderr.contains("ferromcp: tools/call failed: -32602"),
        "{}",
        r.stderr
    );
    // Bad JSON, a command that does not start, usage.
    let r = run(&["tool", &serve(), "add", "{nope"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("ARGS_JSON is not valid JSON"),
        "{}",
        r.stderr
    );
    let r = run(&["tools", "/nonexistent/ferromcp-test-server --x"]);
    assert_eq!(r.code, 1);
    assert!(r.stdout.is_empty());
    assert!(r.stderr.starts_with("ferromcp: "), "{}", r.stderr);
    let r = run(&["tools"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("usage: ferromcp tools TARGET"),
        "{}",
        r.stderr
    );
    let r = run(&["tools", "a 'b"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("unterminated"), "{}", r.stderr);
}

#[test]
fn inspect_shows_the_server() {
    let r = run(&["inspect", &format!("{BIN} serve")]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    for needle in [
        "ferromcp-demo",
        "2026-07-28",
        "Capabilities:",
        "add",
        "countdown",
        "demo://readme",
        "test://template/{id}/data",
        "greet(name)",
    ] {
        assert!(r.stdout.contains(needle), "{needle} missing:\n{}", r.stdout);
    }
    let r = run(&["inspect", "--json", &serve(), "--protocol", "2025-11-25"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = json_of(&r);
    assert_eq!(v["serverInfo"]["name"], "ferromcp-demo");
    assert_eq!(v["era"], "handshake");
    assert_eq!(v["protocolVersion"], "2025-11-25");
    assert!(tool_names(&v).contains(&"add".to_owned()));
}

/// The issue's acceptance line, `ferromcp inspect "ferromcp serve"`: with the binary on PATH,
/// and run by its full path when it is not.
#[test]
fn inspect_ferromcp_serve_by_name() {
    let dir = std::env::temp_dir().join(format!("ferromcp-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let link = dir.join("ferromcp");
    let _ = std::fs::remove_file(&link);
    #[cfg(unix)]
    std::os::unix::fs::symlink(BIN, &link).unwrap();
    let on_path = format!("{}:/usr/bin:/bin", dir.display());
    for path in [on_path.as_str(), "/nonexistent"] {
        let r = run_with(&["inspect", "ferromcp serve"], Some(path));
        assert_eq!(r.code, 0, "PATH={path}: {}", r.stderr);
        assert!(r.stdout.contains("ferromcp-demo"), "{}", r.stdout);
        assert!(r.stdout.contains("test_error_handling"), "{}", r.stdout);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn both_protocol_eras() {
    for (protocol, version) in [
        ("2025-11-25", "2025-11-25"),
        ("2026-07-28", "2026-07-28"),
        ("auto", "2026-07-28"),
    ] {
        let r = run(&[
            "tool",
            &serve(),
            "add",
            r#"{"a":2,"b":5}"#,
            "--protocol",
            protocol,
        ]);
        assert_eq!(r.code, 0, "{protocol}: {}", r.stderr);
        assert_eq!(json_of(&r)["content"][0]["text"], "7", "{protocol}");
        let r = run(&["inspect", "--json", &serve(), "--protocol", protocol]);
        assert_eq!(json_of(&r)["protocolVersion"], version, "{protocol}");
    }
    let r = run(&["tools", &serve(), "--protocol", "1999-01-01"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("--protocol"), "{}", r.stderr);
}

#[test]
fn progress_and_logs_go_to_stderr() {
    for protocol in ["2025-11-25", "2026-07-28"] {
        let r = run(&[
            "tool",
            &serve(),
            "test_tool_with_progress",
            "--protocol",
            protocol,
        ]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert!(r.stderr.contains("[progress] 50/100"), "{}", r.stderr);
        json_of(&r);
    }
    let r = run(&[
        "tool",
        &serve(),
        "test_tool_with_logging",
        "--protocol",
        "2025-11-25",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("[log info]"), "{}", r.stderr);
    assert!(!r.stdout.contains("[log"), "{}", r.stdout);
}

#[test]
fn help_texts() {
    for cmd in ["call", "tools", "tool", "inspect", "bridge"] {
        let r = run(&[cmd, "--help"]);
        assert_eq!(r.code, 0, "{cmd}");
        assert!(
            r.stdout.contains(&format!("ferromcp {cmd}")),
            "{cmd}: {}",
            r.stdout
        );
    }
    let r = run(&["--help"]);
    for cmd in [
        "call TARGET",
        "tools TARGET",
        "tool TARGET",
        "inspect TARGET",
        "bridge",
    ] {
        assert!(r.stdout.contains(cmd), "{cmd}: {}", r.stdout);
    }
}

/// A background `ferromcp` process serving HTTP (`serve --http` or a bridge), killed when
/// dropped.
struct Bridge {
    child: Child,
    addr: String,
}

impl Drop for Bridge {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_bridge() -> Bridge {
    start_http(&[
        "bridge",
        "--stdio-to-http",
        "127.0.0.1:0",
        "--",
        BIN,
        "serve",
    ])
}

/// Starts `ferromcp ARGS…` and waits for the `… at http://ADDR/mcp` line on its stderr.
fn start_http(args: &[&str]) -> Bridge {
    let mut child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    thread::spawn(move || {
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            if let Some(rest) = line.split("at http://").nth(1) {
                let _ = tx.send(rest.trim_end_matches("/mcp").to_owned());
            }
        }
    });
    let mut bridge = Bridge {
        child,
        addr: String::new(),
    };
    bridge.addr = rx
        .recv_timeout(LIMIT)
        .unwrap_or_else(|_| panic!("the bridge did not report its address"));
    bridge
}

/// One HTTP/1.1 POST to /mcp; returns the raw response (head and body).
fn post(addr: &str, headers: &[(&str, &str)], body: &str) -> String {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(LIMIT)).unwrap();
    let mut req = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nConnection: close\r\n\
         Content-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        req.push_str(&format!("{name}: {value}\r\n"));
    }
    req.push_str("\r\n");
    req.push_str(body);
    stream.write_all(req.as_bytes()).unwrap();
    let mut out = String::new();
    stream.read_to_string(&mut out).unwrap();
    out
}

#[test]
fn bridge_stdio_to_http_modern() {
    let bridge = start_bridge();
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let resp = post(
        &bridge.addr,
        &[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "add"),
        ],
        body,
    );
    assert!(resp.starts_with("HTTP/1.1 200"), "{resp}");
    assert!(resp.contains(r#""text":"3""#), "{resp}");
    // The child's own answer, unchanged: its serverInfo, not the bridge's.
    assert!(resp.contains("ferromcp-demo"), "{resp}");
    // An error of the child passes through.
    let body = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"nope","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let resp = post(
        &bridge.addr,
        &[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "nope"),
        ],
        body,
    );
    assert!(resp.contains("-32602"), "{resp}");
}

#[test]
fn bridge_stdio_to_http_handshake_session() {
    let bridge = start_bridge();
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
    let resp = post(&bridge.addr, &[], init);
    assert!(resp.starts_with("HTTP/1.1 200"), "{resp}");
    assert!(resp.contains("ferromcp-demo"), "{resp}");
    let session = resp
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("mcp-session-id")
                .then(|| value.trim().to_owned())
        })
        .unwrap_or_else(|| panic!("no session id: {resp}"));
    let h = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    let resp = post(
        &bridge.addr,
        &h,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    );
    assert!(resp.starts_with("HTTP/1.1 202"), "{resp}");
    let resp = post(
        &bridge.addr,
        &h,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"test_tool_with_progress","arguments":{},"_meta":{"progressToken":"p1"}}}"#,
    );
    // Progress from the child reaches the request's stream, under the client's token.
    assert!(resp.contains(r#""progressToken":"p1""#), "{resp}");
    assert!(resp.contains(r#""id":2"#), "{resp}");
    let resp = post(
        &bridge.addr,
        &h,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#,
    );
    assert!(resp.contains(r#""name":"add""#), "{resp}");
}

/// HTTP TARGETs (ferromcp-client's HttpTransport) against `ferromcp serve --http`, both eras.
#[test]
fn http_targets() {
    let server = start_http(&["serve", "--http", "127.0.0.1:0"]);
    let url = format!("http://{}/mcp", server.addr);
    for protocol in ["2025-11-25", "2026-07-28", "auto"] {
        let r = run(&[
            "tool",
            &url,
            "add",
            r#"{"a":1,"b":2}"#,
            "--protocol",
            protocol,
        ]);
        assert_eq!(r.code, 0, "{protocol}: {}", r.stderr);
        assert_eq!(json_of(&r)["content"][0]["text"], "3", "{protocol}");
        let r = run(&[
            "tools",
            &url,
            "--protocol",
            protocol,
            "--header",
            "X-Test: 1",
        ]);
        assert_eq!(r.code, 0, "{protocol}: {}", r.stderr);
        assert!(tool_names(&json_of(&r)).contains(&"add".to_owned()));
        let r = run(&[
            "tool",
            &url,
            "test_tool_with_progress",
            "--protocol",
            protocol,
        ]);
        assert_eq!(r.code, 0, "{protocol}: {}", r.stderr);
        assert!(r.stderr.contains("[progress] 50/100"), "{}", r.stderr);
    }
    let r = run(&["inspect", &url]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("ferromcp-demo"), "{}", r.stdout);
    let r = run(&["tool", &url, "nope"]);
    assert_eq!(r.code, 1);
    assert!(r.stdout.is_empty());
    assert!(
        r.stderr.contains("tools/call failed: -32602"),
        "{}",
        r.stderr
    );
    let r = run(&["tools", &url, "--header", "bad name: x"]);
    assert_eq!(r.code, 1);
    // Nothing listens there.
    let r = run(&["tools", "http://127.0.0.1:9/mcp", "--timeout", "5"]);
    assert_eq!(r.code, 1);
    assert!(r.stdout.is_empty());
    assert!(r.stderr.starts_with("ferromcp: "), "{}", r.stderr);
}

/// The two bridges chained with the CLI's own client: HTTP client → `bridge --stdio-to-http`
/// → `ferromcp serve`, and stdio client → `bridge --http-to-stdio` → `serve --http`.
#[test]
fn bridges_carry_the_cli_client_in_both_eras() {
    let bridge = start_bridge();
    let url = format!("http://{}/mcp", bridge.addr);
    let server = start_http(&["serve", "--http", "127.0.0.1:0"]);
    let via_stdio = format!("{BIN} bridge --http-to-stdio http://{}/mcp", server.addr);
    for target in [url.as_str(), via_stdio.as_str()] {
        for protocol in ["2025-11-25", "2026-07-28"] {
            let r = run(&[
                "tool",
                target,
                "add",
                r#"{"a":4,"b":5}"#,
                "--protocol",
                protocol,
            ]);
            assert_eq!(r.code, 0, "{target} {protocol}: {}", r.stderr);
            assert_eq!(
                json_of(&r)["content"][0]["text"],
                "9",
                "{target} {protocol}"
            );
            let r = run(&[
                "tool",
                target,
                "test_tool_with_progress",
                "--protocol",
                protocol,
            ]);
            assert_eq!(r.code, 0, "{target} {protocol}: {}", r.stderr);
            assert!(
                r.stderr.contains("[progress] 50/100"),
                "{target}: {}",
                r.stderr
            );
            let r = run(&[
                "tool",
                target,
                "test_error_handling",
                "--protocol",
                protocol,
            ]);
            assert_eq!(r.code, 3, "{target} {protocol}: {}", r.stderr);
            let r = run(&["inspect", "--json", target, "--protocol", protocol]);
            assert_eq!(r.code, 0, "{target} {protocol}: {}", r.stderr);
            let v = json_of(&r);
            assert_eq!(
                v["serverInfo"]["name"], "ferromcp-demo",
                "{target} {protocol}"
            );
            assert_eq!(v["protocolVersion"], protocol, "{target}");
        }
    }
}

/// C39: `serve --http ADDR --legacy-sse` serves the 2024-11-05 HTTP+SSE transport at `/sse`,
/// and the CLI's client commands reach it on that URL, directly and through `bridge
/// --http-to-stdio`, by the client's fallback from Streamable HTTP.
#[test]
fn c39_the_cli_and_the_bridge_reach_an_http_sse_server() {
    let server = start_http(&["serve", "--http", "127.0.0.1:0", "--legacy-sse"]);
    let url = format!("http://{}/sse", server.addr);
    let via_stdio = format!("{BIN} bridge --http-to-stdio {url}");
    for target in [url.as_str(), via_stdio.as_str()] {
        for protocol in ["2025-11-25", "auto"] {
            let r = run(&[
                "tool",
                target,
                "add",
                r#"{"a":4,"b":5}"#,
                "--protocol",
                protocol,
            ]);
            assert_eq!(r.code, 0, "{target} {protocol}: {}", r.stderr);
            assert_eq!(json_of(&r)["content"][0]["text"], "9", "{target}");
            let r = run(&["inspect", "--json", target, "--protocol", protocol]);
            assert_eq!(r.code, 0, "{target} {protocol}: {}", r.stderr);
            let v = json_of(&r);
            assert_eq!(v["serverInfo"]["name"], "ferromcp-demo", "{target}");
            assert_eq!(v["era"], "handshake", "{target} {protocol}");
        }
    }
}

/// A server→client request of the child (elicitation, handshake era) travels on the POST's
/// SSE stream through `bridge --stdio-to-http`, and the client's answer travels back.
#[test]
fn bridge_relays_server_requests() {
    let bridge = start_bridge();
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{"form":{}}},"clientInfo":{"name":"t","version":"0"}}}"#;
    let resp = post(&bridge.addr, &[], init);
    let session = resp
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("mcp-session-id")
                .then(|| value.trim().to_owned())
        })
        .unwrap_or_else(|| panic!("no session id: {resp}"));
    let h = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    post(
        &bridge.addr,
        &h,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    );
    // The call's stream, read line by line.
    let body = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"test_elicitation","arguments":{"message":"Sign up"}}}"#;
    let mut stream = TcpStream::connect(&bridge.addr).unwrap();
    stream.set_read_timeout(Some(LIMIT)).unwrap();
    let req = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nConnection: close\r\n\
         Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\n\
         Content-Length: {}\r\n\r\n{body}",
        bridge.addr,
        body.len()
    );
    stream.write_all(req.as_bytes()).unwrap();
    let mut lines = BufReader::new(stream).lines();
    let ask: Value = loop {
        let line = lines
            .next()
            .unwrap_or_else(|| panic!("the stream ended before the elicitation"))
            .unwrap();
        if let Some(data) = line.strip_prefix("data: ")
            && data.contains("elicitation/create")
        {
            break serde_json::from_str(data).unwrap();
        }
    };
    assert_eq!(ask["params"]["message"], "Sign up", "{ask}");
    let answer = serde_json::json!({
        "jsonrpc": "2.0",
        "id": ask["id"],
        "result": {"action": "accept", "content": {"username": "ada", "email": "ada@example.com"}},
    });
    let resp = post(&bridge.addr, &h, &answer.to_string());
    assert!(resp.starts_with("HTTP/1.1 202"), "{resp}");
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let rest = rest.join("\n");
    assert!(rest.contains("action=accept"), "{rest}");
    assert!(rest.contains("ada@example.com"), "{rest}");
}

/// On a terminal, progress is a bar redrawn in place with `\r` (run under `script(1)` for a
/// pty; skipped where it is not installed).
#[test]
fn progress_bar_on_a_terminal() {
    let has_script = Command::new("script")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !has_script {
        eprintln!("script(1) not found: skipped");
        return;
    }
    let inner = format!("{BIN} tool '{BIN} serve' test_tool_with_progress");
    let mut cmd = Command::new("script");
    cmd.args(["-qec", &inner, "/dev/null"]).stdin(Stdio::null());
    let out = finish(cmd, LIMIT).stdout;
    assert!(out.contains("\r["), "{out:?}");
    assert!(out.contains(" 50% 50/100"), "{out:?}");
    assert!(!out.contains("[progress] 50/100"), "{out:?}");
    // The bar is gone before the result is printed.
    assert!(out.contains("\"content\""), "{out:?}");
}
