//! `ferromcp gateway CONFIG.toml`: the demo server (`ferromcp serve`, a stdio child) mounted
//! through a config file, served on stdio, with its tool filter and the audit log.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::Command;
use tokio::time::timeout;

const DEADLINE: Duration = Duration::from_secs(30);

/// A config file in the temporary directory, unique to this test.
fn config(name: &str, text: &str) -> std::path::PathBuf {
    let path = std::env::temp_dir().join(format!(
        "ferromcp-gateway-{}-{name}.toml",
        std::process::id()
    ));
    std::fs::write(&path, text).unwrap();
    path
}

/// The gateway mounts the configured stdio server under its name, keeps the denied tools
/// out, forwards calls, and logs one audit line per call on stderr.
#[tokio::test]
async fn gateway_serves_the_configured_servers_with_an_audit_line_per_call() {
    let path = config(
        "ok",
        &format!(
            "[servers.demo]\ncommand = {:?}\nargs = [\"serve\"]\ntools.deny = [\"test_*\"]\n\
             timeout = 30\nmax_concurrency = 4\n",
            env!("CARGO_BIN_EXE_ferromcp")
        ),
    );
    let mut child = Command::new(env!("CARGO_BIN_EXE_ferromcp"))
        .arg("gateway")
        .arg(&path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut stderr = child.stderr.take().unwrap();
    let exchange = async {
        let mut send = async |v: Value| {
            stdin.write_all(format!("{v}\n").as_bytes()).await.unwrap();
            stdin.flush().await.unwrap();
        };
        send(
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}}),
        )
        .await;
        send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
        send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})).await;
        send(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": "demo_add", "arguments": {"a": 1, "b": 2}}}))
        .await;
        let mut answers = Vec::new();
        while answers.len() < 3 {
            let line = lines.next_line().await.unwrap().expect("stdout open");
            let v: Value = serde_json::from_str(&line).unwrap();
            if v.get("id").is_some() {
                answers.push(v);
            }
        }
        drop(stdin);
        answers
    };
    let answers = timeout(DEADLINE, exchange).await.expect("answers in time");
    let names: Vec<&str> = answers[1]["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(names.contains(&"demo_add"), "{names:?}");
    assert!(names.iter().all(|n| n.starts_with("demo_")), "{names:?}");
    assert!(
        !names.iter().any(|n| n.starts_with("demo_test_")),
        "{names:?}"
    );
    assert_eq!(
        answers[2]["result"]["content"][0]["text"], "3",
        "{}",
        answers[2]
    );
    let mut log = String::new();
    timeout(DEADLINE, stderr.read_to_string(&mut log))
        .await
        .expect("the gateway ends at end of input")
        .unwrap();
    assert!(
        log.lines()
            .any(|l| l.contains("audit who=stdio backend=demo tool=demo_add outcome=ok")),
        "{log}"
    );
    let _ = std::fs::remove_file(path);
}

/// A config the gateway cannot use is refused before anything starts, naming the problem.
#[tokio::test]
async fn gateway_refuses_a_bad_config_clearly() {
    for (name, text, expected) in [
        (
            "unknown",
            "[servers.a]\ncommand = \"x\"\nbogus = 1\n",
            "unknown field",
        ),
        (
            "both",
            "[servers.a]\ncommand = \"x\"\nurl = \"http://127.0.0.1:1/mcp\"\n",
            "exactly one",
        ),
        ("empty", "", "no [servers.NAME]"),
        (
            "name",
            "[servers.a_b]\ncommand = \"x\"\n",
            "invalid mount name",
        ),
        (
            "era",
            "[servers.a]\ncommand = \"x\"\nlifecycle = \"2024\"\n",
            "`lifecycle` is one of",
        ),
        (
            "ping",
            "[health]\nping_interval = 0\n[servers.a]\ncommand = \"x\"\n",
            "[health] `ping_interval` must be a positive number",
        ),
        (
            "backoff",
            "[health]\nbackoff_min = 10\nbackoff_max = 2\n[servers.a]\ncommand = \"x\"\n",
            "`backoff_min` must not exceed `backoff_max`",
        ),
    ] {
        let path = config(name, text);
        let out = timeout(
            DEADLINE,
            Command::new(env!("CARGO_BIN_EXE_ferromcp"))
                .arg("gateway")
                .arg(&path)
                .stdin(Stdio::null())
                .output(),
        )
        .await
        .unwrap()
        .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{name}: {err}");
        assert!(err.contains(expected), "{name}: {err}");
        let _ = std::fs::remove_file(path);
    }
}

/// A running gateway: its stdin, its stdout's lines, and its stderr collected.
struct Gateway {
    _child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    lines: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
    log: std::sync::Arc<std::sync::Mutex<String>>,
    next_id: i64,
    /// `notifications/tools/list_changed` seen so far.
    list_changes: usize,
}

impl Gateway {
    fn start(path: &std::path::Path) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_ferromcp"))
            .arg("gateway")
            .arg(path)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let log = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let mut err = BufReader::new(child.stderr.take().unwrap()).lines();
        let sink = log.clone();
        tokio::spawn(async move {
            while let Ok(Some(line)) = err.next_line().await {
                let mut log = sink.lock().unwrap();
                log.push_str(&line);
                log.push('\n');
            }
        });
        Self {
            _child: child,
            stdin,
            lines,
            log,
            next_id: 1,
            list_changes: 0,
        }
    }

    async fn send(&mut self, v: Value) {
        self.stdin
            .write_all(format!("{v}\n").as_bytes())
            .await
            .unwrap();
        self.stdin.flush().await.unwrap();
    }

    async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        loop {
            let line = self.lines.next_line().await.unwrap().expect("stdout open");
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["method"] == "notifications/tools/list_changed" {
                self.list_changes += 1;
            }
            if v["id"] == id {
                return v;
            }
        }
    }

    async fn tool_names(&mut self) -> Vec<String> {
        let list = self.request("tools/list", json!({})).await;
        list["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|t| t["name"].as_str().map(str::to_owned))
            .collect()
    }

    /// Waits until the tool list satisfies `ok`.
    async fn until_tools(&mut self, ok: impl Fn(&[String]) -> bool) -> Vec<String> {
        loop {
            let names = self.tool_names().await;
            if ok(&names) {
                return names;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    fn log(&self) -> String {
        self.log.lock().unwrap().clone()
    }
}

fn demo_server(name: &str) -> String {
    format!(
        "[servers.{name}]\ncommand = {:?}\nargs = [\"serve\"]\n",
        env!("CARGO_BIN_EXE_ferromcp")
    )
}

/// A server that fails to start is reported and retried while the others serve; editing the
/// config adds and removes servers in the running gateway, on the same session, with
/// list-changed notifications.
#[tokio::test]
async fn f18_gateway_applies_config_edits_and_retries_servers_that_fail() {
    let path = config(
        "reload",
        &format!(
            "{}[servers.broken]\ncommand = \"/nonexistent/ferromcp-no-such-server\"\n",
            demo_server("demo")
        ),
    );
    let mut gw = Gateway::start(&path);
    timeout(DEADLINE, async {
        gw.request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}),
        )
        .await;
        gw.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        let names = gw.tool_names().await;
        assert!(names.contains(&"demo_add".to_owned()), "{names:?}");
        assert!(!names.iter().any(|n| n.starts_with("broken_")));
        // Reported, then tried again.
        while !gw.log().contains("broken: trying again") {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert!(
            gw.log().contains("ferromcp gateway: broken:"),
            "{}",
            gw.log()
        );
        // Add a server, drop the broken one.
        std::fs::write(
            &path,
            format!("{}{}", demo_server("demo"), demo_server("more")),
        )
        .unwrap();
        gw.until_tools(|n| n.contains(&"more_add".to_owned())).await;
        // Remove the first: its tools leave; the session goes on.
        std::fs::write(&path, demo_server("more")).unwrap();
        let names = gw
            .until_tools(|n| !n.iter().any(|t| t.starts_with("demo_")))
            .await;
        assert!(names.contains(&"more_add".to_owned()), "{names:?}");
        let call = gw
            .request(
                "tools/call",
                json!({"name": "more_add", "arguments": {"a": 2, "b": 2}}),
            )
            .await;
        assert_eq!(call["result"]["content"][0]["text"], "4", "{call}");
        assert!(gw.list_changes >= 2, "{}", gw.list_changes);
        assert!(gw.log().contains("broken: stopped"), "{}", gw.log());
    })
    .await
    .unwrap_or_else(|_| panic!("within the deadline; the gateway's log:\n{}", gw.log()));
    let _ = std::fs::remove_file(path);
}

/// A backend that dies while the gateway runs: its tools leave the front (list changed), the
/// others keep serving, and it comes back when it starts again. The backend is the demo
/// server under `timeout 3`, so it dies after three seconds each time it starts.
#[cfg(unix)]
#[tokio::test]
async fn f17_gateway_drops_a_dead_server_and_brings_it_back() {
    let path = config(
        "dies",
        &format!(
            "{}[servers.mortal]\ncommand = \"timeout\"\nargs = [\"3\", {:?}, \"serve\"]\n",
            demo_server("demo"),
            env!("CARGO_BIN_EXE_ferromcp")
        ),
    );
    let mut gw = Gateway::start(&path);
    timeout(DEADLINE, async {
        gw.request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}),
        )
        .await;
        gw.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        gw.until_tools(|n| n.contains(&"mortal_add".to_owned()))
            .await;
        let names = gw
            .until_tools(|n| !n.contains(&"mortal_add".to_owned()))
            .await;
        assert!(names.contains(&"demo_add".to_owned()), "{names:?}");
        let call = gw
            .request(
                "tools/call",
                json!({"name": "demo_add", "arguments": {"a": 1, "b": 1}}),
            )
            .await;
        assert_eq!(call["result"]["content"][0]["text"], "2", "{call}");
        gw.until_tools(|n| n.contains(&"mortal_add".to_owned()))
            .await;
        assert!(gw.list_changes >= 2, "{}", gw.list_changes);
        assert!(gw.log().contains("mortal: down"), "{}", gw.log());
    })
    .await
    .unwrap_or_else(|_| panic!("within the deadline; the gateway's log:\n{}", gw.log()));
    let _ = std::fs::remove_file(path);
}

/// `--http ADDR`: the gateway over Streamable HTTP, with `serve --http`'s defaults (a foreign
/// Host is refused, DNS-rebinding protection), reached by ferromcp's client.
#[tokio::test]
async fn gateway_serves_over_http_with_the_serve_defaults() {
    let path = config("http", &demo_server("demo"));
    let mut child = Command::new(env!("CARGO_BIN_EXE_ferromcp"))
        .arg("gateway")
        .arg(&path)
        .args(["--http", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap()).lines();
    timeout(DEADLINE, async {
        let url = loop {
            let line = err
                .next_line()
                .await
                .unwrap()
                .expect("the address on stderr");
            if let Some(url) = line.strip_prefix("ferromcp gateway: at ") {
                break url.to_owned();
            }
        };
        let client = ferromcp_client::Client::builder()
            .connect(ferromcp_client::HttpTransport::new(&url).unwrap())
            .await
            .unwrap();
        let r = client
            .call_tool("demo_add", json!({"a": 20, "b": 22}))
            .await
            .unwrap();
        assert_eq!(r.content[0].as_text(), Some("42"));
        client.shutdown().await;
        // Without --auth the audit line's `who` is the client's address.
        let audit = loop {
            let line = err.next_line().await.unwrap().expect("an audit line");
            if line.contains(" audit ") {
                break line;
            }
        };
        assert!(audit.contains("who=127.0.0.1 backend=demo"), "{audit}");
        // A foreign Host header: refused (421), as `serve --http` refuses it.
        let addr = url.trim_start_matches("http://").trim_end_matches("/mcp");
        let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        let body = r#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}"#;
        let request = format!(
            "POST /mcp HTTP/1.1\r\nHost: evil.example\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\
             Connection: close\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).await.unwrap();
        assert!(answer.starts_with("HTTP/1.1 421"), "{answer}");
    })
    .await
    .expect("within the deadline");
    let _ = std::fs::remove_file(path);
}

/// `gateway CONFIG --http 127.0.0.1:0 --auth`: the child, its MCP URL, and its stderr lines
/// (kept, read on).
async fn start_with_auth(
    path: &std::path::Path,
) -> (
    tokio::process::Child,
    String,
    std::sync::Arc<std::sync::Mutex<String>>,
) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ferromcp"))
        .arg("gateway")
        .arg(path)
        .args(["--http", "127.0.0.1:0", "--auth"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap()).lines();
    let url = loop {
        let line = err
            .next_line()
            .await
            .unwrap()
            .expect("the address on stderr");
        if let Some(rest) = line.strip_prefix("ferromcp gateway: at ") {
            break rest.split_whitespace().next().unwrap().to_owned();
        }
    };
    let log = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let keep = log.clone();
    tokio::spawn(async move {
        while let Ok(Some(line)) = err.next_line().await {
            let mut log = keep.lock().unwrap();
            log.push_str(&line);
            log.push('\n');
        }
    });
    (child, url, log)
}

/// A client of `url` that completes the OAuth flow headlessly: its own registration, so
/// its own principal (`local-user/<client id>`).
async fn oauth_client(url: &str) -> ferromcp_client::Client {
    use ferromcp_client::oauth::{OAuthConfig, OAuthProvider, RedirectReadingHandler};
    let cfg = OAuthConfig::new("http://127.0.0.1/callback", RedirectReadingHandler)
        .with_client_name("gateway-test");
    let provider = OAuthProvider::new(url, cfg).unwrap();
    let transport = ferromcp_client::HttpTransport::new(url)
        .unwrap()
        .auth(std::sync::Arc::new(provider));
    ferromcp_client::Client::builder()
        .connect(transport)
        .await
        .unwrap()
}

/// S93: `gateway --http --auth` puts the front behind `serve --http --auth`'s embedded
/// authorization server: a request without a token is refused with 401 and a
/// `WWW-Authenticate` challenge; a client that completes the flow gets through, and its
/// audit line names its principal (subject and client), not its address.
#[tokio::test]
async fn s93_gateway_auth_refuses_anonymous_calls_and_audits_the_principal() {
    let path = config("auth", &demo_server("demo"));
    timeout(DEADLINE, async {
        let (_child, url, log) = start_with_auth(&path).await;
        let addr = url.trim_start_matches("http://").trim_end_matches("/mcp");
        let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"demo_add","arguments":{"a":1,"b":2}}}"#;
        let request = format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\
             Connection: close\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).await.unwrap();
        assert!(answer.starts_with("HTTP/1.1 401"), "{answer}");
        assert!(
            answer.to_ascii_lowercase().contains("www-authenticate: bearer"),
            "{answer}"
        );

        let client = oauth_client(&url).await;
        let r = client
            .call_tool("demo_add", json!({"a": 20, "b": 22}))
            .await
            .unwrap();
        assert_eq!(r.content[0].as_text(), Some("42"));
        client.shutdown().await;
        let audit = log
            .lock()
            .unwrap()
            .lines()
            .find(|l| l.contains("audit") && l.contains("tool=demo_add"))
            .map(str::to_owned)
            .unwrap_or_else(|| panic!("no audit line in {}", log.lock().unwrap()));
        assert!(audit.contains("who=local-user/"), "{audit}");
        assert!(audit.contains("outcome=ok"), "{audit}");
        assert!(!audit.contains("who=127.0.0.1"), "{audit}");
    })
    .await
    .expect("within the deadline");
    let _ = std::fs::remove_file(path);
}

/// S94: `[rate_limit] per_principal`: one principal past its calls per minute is refused
/// (a tool error, audited `outcome=rate-limited`, the backend not reached) while another
/// principal still gets through; `total` bounds all principals together.
#[tokio::test]
async fn s94_gateway_rate_limits_each_principal_and_in_total() {
    let path = config(
        "limit",
        &format!(
            "[rate_limit]\nper_principal = 2\ntotal = 3\n\n{}",
            demo_server("demo")
        ),
    );
    timeout(DEADLINE, async {
        let (_child, url, log) = start_with_auth(&path).await;
        let (a, b) = (oauth_client(&url).await, oauth_client(&url).await);
        for _ in 0..2 {
            let r = a
                .call_tool("demo_add", json!({"a": 1, "b": 1}))
                .await
                .unwrap();
            assert_eq!(r.content[0].as_text(), Some("2"));
        }
        let refused = a
            .call_tool("demo_add", json!({"a": 1, "b": 1}))
            .await
            .unwrap();
        assert_eq!(refused.is_error, Some(true));
        assert!(
            refused.content[0].as_text().unwrap().contains("rate limit"),
            "{refused:?}"
        );
        // Another principal still gets through...
        let r = b
            .call_tool("demo_add", json!({"a": 2, "b": 2}))
            .await
            .unwrap();
        assert_eq!(r.content[0].as_text(), Some("4"));
        // ... until the total is spent.
        let r = b
            .call_tool("demo_add", json!({"a": 2, "b": 2}))
            .await
            .unwrap();
        assert_eq!(r.is_error, Some(true));
        a.shutdown().await;
        b.shutdown().await;
        let log = log.lock().unwrap().clone();
        assert_eq!(log.matches("outcome=rate-limited").count(), 2, "{log}");
        assert_eq!(log.matches("outcome=ok").count(), 3, "{log}");
    })
    .await
    .expect("within the deadline");
    let _ = std::fs::remove_file(path);
}

/// A `[rate_limit]` of zero is refused clearly.
#[tokio::test]
async fn gateway_refuses_a_zero_rate_limit() {
    let path = config(
        "zero",
        &format!("[rate_limit]\nper_principal = 0\n\n{}", demo_server("demo")),
    );
    let out = timeout(
        DEADLINE,
        Command::new(env!("CARGO_BIN_EXE_ferromcp"))
            .arg("gateway")
            .arg(&path)
            .stdin(Stdio::null())
            .output(),
    )
    .await
    .unwrap()
    .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("[rate_limit]"), "{err}");
    let _ = std::fs::remove_file(path);
}

/// Polls `gw`'s log until it contains `text`: when it was first seen.
#[cfg(unix)]
async fn seen(gw: &Gateway, text: &str) -> std::time::Instant {
    while !gw.log().contains(text) {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    std::time::Instant::now()
}

/// `[health] ping_interval`: a backend that dies is found down within the (short) interval
/// set, not the default 2 s. The backend is the demo server under `timeout 1`: it dies
/// within a second of being mounted; with `ping_interval = 0.1` it is reported down well
/// before the default interval's first ping could.
#[cfg(unix)]
#[tokio::test]
async fn f25_a_short_ping_interval_finds_a_dead_backend_within_it() {
    let path = config(
        "ping",
        &format!(
            "[health]\nping_interval = 0.1\nbackoff_min = 30\nbackoff_max = 30\n\n\
             [servers.mortal]\ncommand = \"timeout\"\nargs = [\"1\", {:?}, \"serve\"]\n",
            env!("CARGO_BIN_EXE_ferromcp")
        ),
    );
    let gw = Gateway::start(&path);
    timeout(DEADLINE, async {
        let up = seen(&gw, "mortal: up").await;
        let down = seen(&gw, "mortal: down").await;
        let took = down - up;
        // Dead within 1 s of being up, found by the next ping (0.1 s), plus slack; the
        // default interval would first ping it 2 s after it came up.
        assert!(took < Duration::from_millis(1700), "{took:?}\n{}", gw.log());
    })
    .await
    .unwrap_or_else(|_| panic!("within the deadline; the gateway's log:\n{}", gw.log()));
    let _ = std::fs::remove_file(path);
}

/// `[health] backoff_min` / `backoff_max`: a server that cannot start is tried again after
/// 0.1 s, then 0.2 s, then 0.4 s, and never waits longer than the 0.4 s maximum.
#[tokio::test]
async fn f26_backoff_bounds_are_the_configured_ones() {
    let path = config(
        "backoff",
        "[health]\nbackoff_min = 0.1\nbackoff_max = 0.4\n\n\
         [servers.broken]\ncommand = \"/nonexistent/ferromcp-no-such-server\"\n",
    );
    let gw = Gateway::start(&path);
    let started = std::time::Instant::now();
    timeout(DEADLINE, async {
        let delays = loop {
            let delays: Vec<String> = gw
                .log()
                .lines()
                .filter_map(|l| l.strip_prefix("ferromcp gateway: broken: trying again in "))
                .map(str::to_owned)
                .collect();
            if delays.len() >= 5 {
                break delays;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        assert_eq!(delays[..5], ["0.1 s", "0.2 s", "0.4 s", "0.4 s", "0.4 s"]);
        // 0.1 + 0.2 + 0.4 + 0.4 s of waiting before the fifth; the defaults would wait 15 s.
        assert!(
            started.elapsed() < Duration::from_secs(6),
            "{:?}",
            started.elapsed()
        );
    })
    .await
    .unwrap_or_else(|_| panic!("within the deadline; the gateway's log:\n{}", gw.log()));
    let _ = std::fs::remove_file(path);
}
