//! Smoke tests of the server examples (crates/ferromcp/examples): each built example is
//! started, spoken to as a client would (stdio: JSON-RPC lines over pipes; HTTP: raw
//! HTTP/1.1 requests to the URL it prints), its answers checked, and it is killed.
//!
//! `cargo test` builds the package's examples whose required features are enabled next to the
//! test binaries' directory (`cargo test --workspace --all-features` in CI builds them all).
//! A test whose example needs a feature that is off is skipped (with a note on stderr); an
//! example that should have been built but is missing fails the test: build the examples
//! first (`cargo build -p ferromcp --examples --all-features`) when running this file alone.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// How long any one answer may take.
const LIMIT: Duration = Duration::from_secs(30);

/// The example's binary, or `None` (with a note) when `enabled` is false, i.e. a feature it
/// needs is off in this build.
fn example(name: &str, enabled: bool) -> Option<PathBuf> {
    if !enabled {
        eprintln!("skipping the example {name}: a feature it needs is off in this build");
        return None;
    }
    let deps = std::env::current_exe().unwrap();
    let path = deps
        .parent()
        .and_then(|d| d.parent())
        .unwrap()
        .join("examples")
        .join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    assert!(
        path.exists(),
        "{} was not built: run the package's tests (or `cargo build -p ferromcp --examples \
         --all-features`) first",
        path.display()
    );
    // `cargo test --test examples_server` alone does not rebuild the examples: refuse to
    // test a binary older than its source.
    let source = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("examples")
        .join(format!("{name}.rs"));
    let modified = |p: &PathBuf| std::fs::metadata(p).and_then(|m| m.modified()).unwrap();
    assert!(
        modified(&path) >= modified(&source),
        "{} is older than {}: rebuild the examples (`cargo build -p ferromcp --examples \
         --all-features`)",
        path.display(),
        source.display()
    );
    Some(path)
}

/// A running example, killed when dropped.
struct Running {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
}

impl Running {
    fn start(path: &PathBuf, args: &[&str], env: &[(&str, &str)]) -> Self {
        let mut child = Command::new(path)
            .args(args)
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        Self {
            child,
            stdin,
            lines,
        }
    }

    /// The next line on stdout.
    fn line(&self) -> String {
        self.lines
            .recv_timeout(LIMIT)
            .unwrap_or_else(|e| panic!("no line on stdout: {e}"))
    }

    fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    /// Sends a request and returns its answer (messages without that id are skipped).
    fn request(&mut self, id: i64, method: &str, params: Value) -> Value {
        let mut message = json!({"jsonrpc": "2.0", "id": id, "method": method});
        message["params"] = params;
        self.send(&message);
        let deadline = Instant::now() + LIMIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self
                .lines
                .recv_timeout(left)
                .unwrap_or_else(|e| panic!("no answer to {method}: {e}"));
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == id {
                return message;
            }
        }
    }

    /// The 2025-11-25 handshake over stdio.
    fn initialize(&mut self) -> Value {
        let init = self.request(
            1,
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "smoke", "version": "1"}}),
        );
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        init
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn tool_names(list: &Value) -> Vec<&str> {
    list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect()
}

fn text(call: &Value) -> &str {
    call["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text in {call}"))
}

/// An HTTP response.
#[derive(Debug)]
struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The JSON-RPC answer in the body: plain JSON, or the SSE event that has an `id`.
    fn json(&self) -> Value {
        let sse = self
            .header("content-type")
            .is_some_and(|c| c.contains("text/event-stream"));
        if !sse {
            return serde_json::from_str(&self.body)
                .unwrap_or_else(|e| panic!("{e}: {}", self.body));
        }
        self.body
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
            .find(|m| m.get("id").is_some())
            .unwrap_or_else(|| panic!("no answer in the stream: {}", self.body))
    }
}

/// Sends one HTTP/1.1 request to `url` (`http://host:port/path`) on its own connection.
fn http(method: &str, url: &str, headers: &[(&str, &str)], body: &str) -> Reply {
    let rest = url.strip_prefix("http://").unwrap();
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let path = if path.is_empty() { "/" } else { path };
    let mut stream = TcpStream::connect(authority).unwrap();
    stream.set_read_timeout(Some(LIMIT)).unwrap();
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    if !headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("host")) {
        head.push_str(&format!("Host: {authority}\r\n"));
    }
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(body.as_bytes()).unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).unwrap();
    let raw = String::from_utf8(raw).unwrap();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap();
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let chunked = headers
        .iter()
        .any(|(n, v)| n.eq_ignore_ascii_case("transfer-encoding") && v.contains("chunked"));
    let body = if chunked {
        dechunk(body)
    } else {
        body.to_owned()
    };
    Reply {
        status,
        headers,
        body,
    }
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let size = usize::from_str_radix(size.split(';').next().unwrap().trim(), 16).unwrap();
        if size == 0 {
            break;
        }
        out.push_str(&rest[..size]);
        body = &rest[size..];
        body = body.strip_prefix("\r\n").unwrap_or(body);
    }
    out
}

const ACCEPT: (&str, &str) = ("Accept", "application/json, text/event-stream");
const JSON: (&str, &str) = ("Content-Type", "application/json");

/// A handshake-era session on `url` (with `auth` as extra headers): the session id.
fn http_initialize(url: &str, auth: &[(&str, &str)]) -> String {
    let mut headers = vec![ACCEPT, JSON];
    headers.extend_from_slice(auth);
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "smoke", "version": "1"}}});
    let r = http("POST", url, &headers, &init.to_string());
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(r.json()["result"]["protocolVersion"], "2025-11-25");
    let session = r.header("mcp-session-id").unwrap().to_owned();
    headers.push(("Mcp-Session-Id", &session));
    headers.push(("MCP-Protocol-Version", "2025-11-25"));
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let r = http("POST", url, &headers, &note.to_string());
    assert_eq!(r.status, 202, "{r:?}");
    session
}

/// A request in the session `session`.
fn http_request(
    url: &str,
    session: &str,
    auth: &[(&str, &str)],
    id: i64,
    method: &str,
    params: Value,
) -> Reply {
    let mut headers = vec![
        ACCEPT,
        JSON,
        ("Mcp-Session-Id", session),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    headers.extend_from_slice(auth);
    let mut body = json!({"jsonrpc": "2.0", "id": id, "method": method});
    body["params"] = params;
    http("POST", url, &headers, &body.to_string())
}

/// Starts an HTTP example on a free port and reads the URL it prints first.
fn start_http(path: &PathBuf, args: &[&str], env: &[(&str, &str)]) -> (Running, String) {
    let running = Running::start(path, args, env);
    let url = running.line();
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    (running, url)
}

/// examples/http_server.rs: the printed URL serves a handshake-era session and a tool call.
#[test]
fn http_server_example_serves_a_tool_over_http() {
    let Some(path) = example("http_server", cfg!(feature = "http")) else {
        return;
    };
    let (_server, url) = start_http(&path, &["127.0.0.1:0"], &[]);
    assert!(url.ends_with("/mcp"), "{url}");
    let session = http_initialize(&url, &[]);
    let list = http_request(&url, &session, &[], 2, "tools/list", json!({}));
    assert_eq!(tool_names(&list.json()), ["add"]);
    let call = http_request(
        &url,
        &session,
        &[],
        3,
        "tools/call",
        json!({"name": "add", "arguments": {"a": 2, "b": 3}}),
    );
    assert_eq!(text(&call.json()), "5");
}

/// examples/legacy_sse.rs: the 2024-11-05 HTTP+SSE transport at `/sse`, reached by the
/// example's own client explicitly and by fallback, next to Streamable HTTP at `/mcp`.
#[test]
fn legacy_sse_example_serves_both_transports() {
    let Some(path) = example(
        "legacy_sse",
        cfg!(all(feature = "http", feature = "client")),
    ) else {
        return;
    };
    let (running, url) = start_http(&path, &["127.0.0.1:0"], &[]);
    assert!(url.ends_with("/sse"), "{url}");
    assert_eq!(running.line(), "explicit HTTP+SSE: add = 5");
    let fallback = running.line();
    assert!(
        fallback.starts_with("fallback to HTTP+SSE: add = 9"),
        "{fallback}"
    );
    let mcp = url.replace("/sse", "/mcp");
    let session = http_initialize(&mcp, &[]);
    let call = http_request(
        &mcp,
        &session,
        &[],
        2,
        "tools/call",
        json!({"name": "add", "arguments": {"a": 1, "b": 1}}),
    );
    assert_eq!(text(&call.json()), "2");
}

/// examples/axum_mount.rs: `/health` and the MCP endpoint on one axum router.
#[test]
fn axum_mount_example_serves_mcp_next_to_other_routes() {
    let Some(path) = example("axum_mount", cfg!(feature = "http")) else {
        return;
    };
    let (_server, url) = start_http(&path, &["127.0.0.1:0"], &[]);
    let health = http("GET", &url.replace("/mcp", "/health"), &[], "");
    assert_eq!((health.status, health.body.as_str()), (200, "ok"));
    let session = http_initialize(&url, &[]);
    let call = http_request(
        &url,
        &session,
        &[],
        2,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "hi"}}),
    );
    assert_eq!(text(&call.json()), "hi");
    // A Host or an Origin that is not allowed is refused (DNS-rebinding protection).
    let evil = http(
        "POST",
        &url,
        &[ACCEPT, JSON, ("Host", "evil.example")],
        "{}",
    );
    assert_eq!(evil.status, 421, "{evil:?}");
    let evil = http(
        "POST",
        &url,
        &[ACCEPT, JSON, ("Origin", "http://evil.example")],
        "{}",
    );
    assert_eq!(evil.status, 403, "{evil:?}");
}

/// examples/task_tool.rs: the tool is listed as task-capable; a task-augmented call answers
/// a task at once and `tasks/result` waits for its outcome.
#[test]
fn task_tool_example_runs_a_tool_as_a_task() {
    let Some(path) = example("task_tool", cfg!(feature = "server")) else {
        return;
    };
    let mut server = Running::start(&path, &[], &[]);
    let init = server.initialize();
    assert!(
        init["result"]["capabilities"]["tasks"].is_object(),
        "{init}"
    );
    let list = server.request(2, "tools/list", json!({}));
    assert_eq!(
        list["result"]["tools"][0]["execution"]["taskSupport"],
        "optional"
    );
    let created = server.request(
        3,
        "tools/call",
        json!({"name": "long_job", "arguments": {"steps": 3}, "task": {"ttl": 60000}}),
    );
    assert_eq!(created["result"]["task"]["status"], "working", "{created}");
    let id = created["result"]["task"]["taskId"].as_str().unwrap();
    let result = server.request(4, "tasks/result", json!({"taskId": id}));
    assert_eq!(text(&result), "done after 3 steps");
    let got = server.request(5, "tasks/get", json!({"taskId": id}));
    assert_eq!(got["result"]["status"], "completed");
    // Without `params.task` the optional tool answers as a plain call.
    let plain = server.request(
        6,
        "tools/call",
        json!({"name": "long_job", "arguments": {"steps": 1}}),
    );
    assert_eq!(text(&plain), "done after 1 steps");
}

/// examples/middleware.rs: the policy refuses `delete_all` without an `admin` principal, and
/// the sixth call in the window is rate limited.
#[test]
fn middleware_example_applies_policy_and_rate_limit() {
    let Some(path) = example("middleware", cfg!(feature = "server")) else {
        return;
    };
    let mut server = Running::start(&path, &[], &[]);
    server.initialize();
    let list = server.request(2, "tools/list", json!({}));
    assert_eq!(tool_names(&list), ["echo", "delete_all"]);
    let refused = server.request(
        3,
        "tools/call",
        json!({"name": "delete_all", "arguments": {}}),
    );
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    for id in 4..8 {
        let call = server.request(
            id,
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "hi"}}),
        );
        assert_eq!(text(&call), "hi");
    }
    // The refused call counted: this is the sixth in the window.
    let limited = server.request(
        8,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "hi"}}),
    );
    assert_eq!(limited["error"]["code"], -32600, "{limited}");
    assert!(
        limited["error"]["message"]
            .as_str()
            .unwrap()
            .contains("rate limited")
    );
}

const SECRET: &str = "smoke-test-secret-0123456789";

/// examples/auth_embedded.rs: 401 with a challenge without a token; the resource and
/// authorization-server metadata answer; a `client_credentials` token of the operator
/// client calls a tool, and is refused (403) the tool that needs `admin`. Returns the
/// running server, its URL and the token.
fn embedded() -> Option<(Running, String, String)> {
    let path = example("auth_embedded", cfg!(feature = "auth-server"))?;
    let (server, url) = start_http(
        &path,
        &["127.0.0.1:0"],
        &[("FERROMCP_EXAMPLE_CLIENT_SECRET", SECRET)],
    );
    let issuer = url.trim_end_matches("/mcp").to_owned();
    let r = http("POST", &url, &[ACCEPT, JSON], "{}");
    assert_eq!(r.status, 401, "{r:?}");
    let challenge = r.header("www-authenticate").unwrap();
    assert!(challenge.contains("resource_metadata="), "{challenge}");
    let meta = http(
        "GET",
        &format!("{issuer}/.well-known/oauth-protected-resource/mcp"),
        &[],
        "",
    );
    assert_eq!(meta.status, 200, "{meta:?}");
    let meta = meta.json();
    assert_eq!(meta["resource"], url.as_str());
    assert_eq!(meta["authorization_servers"], json!([issuer]));
    let as_meta = http(
        "GET",
        &format!("{issuer}/.well-known/oauth-authorization-server"),
        &[],
        "",
    );
    assert_eq!(as_meta.status, 200, "{as_meta:?}");
    let token_endpoint = as_meta.json()["token_endpoint"]
        .as_str()
        .unwrap()
        .to_owned();
    let form = format!(
        "grant_type=client_credentials&client_id=example-job&client_secret={SECRET}\
         &scope=mcp&resource={}",
        url.replace(':', "%3A").replace('/', "%2F")
    );
    let token = http(
        "POST",
        &token_endpoint,
        &[("Content-Type", "application/x-www-form-urlencoded")],
        &form,
    );
    assert_eq!(token.status, 200, "{token:?}");
    let token = token.json()["access_token"].as_str().unwrap().to_owned();
    Some((server, url, token))
}

#[test]
fn auth_embedded_example_protects_the_endpoint() {
    let Some((_server, url, token)) = embedded() else {
        return;
    };
    let bearer = format!("Bearer {token}");
    let auth = [("Authorization", bearer.as_str())];
    let session = http_initialize(&url, &auth);
    let call = http_request(
        &url,
        &session,
        &auth,
        2,
        "tools/call",
        json!({"name": "whoami", "arguments": {}}),
    );
    assert_eq!(call.status, 200, "{call:?}");
    assert!(text(&call.json()).ends_with("(mcp)"), "{call:?}");
    let admin = http_request(
        &url,
        &session,
        &auth,
        3,
        "tools/call",
        json!({"name": "reset", "arguments": {}}),
    );
    assert_eq!(admin.status, 403, "{admin:?}");
    assert!(
        admin
            .header("www-authenticate")
            .is_some_and(|c| c.contains("insufficient_scope")),
        "{admin:?}"
    );
}

/// examples/auth_resource_server.rs: 401 without a token and with a malformed one; its
/// metadata names the issuer given. With the embedded authorization server available too,
/// a token it issued verifies against its JWKS (then 403: it lacks `notes:read`).
#[test]
fn auth_resource_server_example_verifies_tokens() {
    let Some(path) = example("auth_resource_server", cfg!(feature = "auth")) else {
        return;
    };
    let (_server, url) = start_http(&path, &["127.0.0.1:0", "http://127.0.0.1:9"], &[]);
    let r = http("POST", &url, &[ACCEPT, JSON], "{}");
    assert_eq!(r.status, 401, "{r:?}");
    let r = http(
        "POST",
        &url,
        &[ACCEPT, JSON, ("Authorization", "Bearer not-a-jwt")],
        "{}",
    );
    assert_eq!(r.status, 401, "{r:?}");
    assert!(
        r.header("www-authenticate")
            .unwrap()
            .contains("invalid_token")
    );
    let base = url.trim_end_matches("/mcp");
    let meta = http(
        "GET",
        &format!("{base}/.well-known/oauth-protected-resource/mcp"),
        &[],
        "",
    );
    assert_eq!(meta.status, 200, "{meta:?}");
    assert_eq!(
        meta.json()["authorization_servers"],
        json!(["http://127.0.0.1:9"])
    );

    let Some((_issuer, issuer_url, token)) = embedded() else {
        return;
    };
    let issuer = issuer_url.trim_end_matches("/mcp").to_owned();
    let jwks = format!("{issuer}/jwks");
    // The token names the embedded server's endpoint as its audience.
    let (_rs, rs_url) = start_http(&path, &["127.0.0.1:0", &issuer, &jwks, &issuer_url], &[]);
    let bearer = format!("Bearer {token}");
    let r = http(
        "POST",
        &rs_url,
        &[ACCEPT, JSON, ("Authorization", &bearer)],
        "{}",
    );
    assert_eq!(r.status, 403, "{r:?}");
    assert!(
        r.header("www-authenticate")
            .unwrap()
            .contains("insufficient_scope")
    );
}

/// The first examples of the index (stdio servers): each starts, completes the handshake and
/// serves what its header says.
#[test]
fn the_basic_stdio_examples_serve_what_they_declare() {
    let on = cfg!(feature = "server");
    if let Some(path) = example("minimal_tools", on) {
        let mut server = Running::start(&path, &[], &[]);
        server.initialize();
        assert_eq!(
            tool_names(&server.request(2, "tools/list", json!({}))),
            ["add"]
        );
        let call = server.request(
            3,
            "tools/call",
            json!({"name": "add", "arguments": {"a": 2, "b": 3}}),
        );
        assert_eq!(text(&call), "5");
    }
    if let Some(path) = example("structured_output", on) {
        let mut server = Running::start(&path, &[], &[]);
        server.initialize();
        let list = server.request(2, "tools/list", json!({}));
        assert_eq!(tool_names(&list), ["weather"]);
        assert!(
            list["result"]["tools"][0]["outputSchema"].is_object(),
            "{list}"
        );
    }
    if let Some(path) = example("resources", on) {
        let mut server = Running::start(&path, &[], &[]);
        server.initialize();
        let list = server.request(2, "resources/list", json!({}));
        assert_eq!(
            list["result"]["resources"].as_array().map(Vec::len),
            Some(2),
            "{list}"
        );
        let templates = server.request(3, "resources/templates/list", json!({}));
        assert_eq!(
            templates["result"]["resourceTemplates"][0]["uriTemplate"],
            "library://books/{id}"
        );
        let read = server.request(4, "resources/read", json!({"uri": "library://readme"}));
        assert!(read["result"]["contents"][0]["text"].is_string(), "{read}");
    }
    if let Some(path) = example("prompts", on) {
        let mut server = Running::start(&path, &[], &[]);
        server.initialize();
        let list = server.request(2, "prompts/list", json!({}));
        assert_eq!(list["result"]["prompts"][0]["name"], "review", "{list}");
    }
    if let Some(path) = example("elicitation", cfg!(feature = "request-state")) {
        let mut server = Running::start(&path, &[], &[]);
        server.initialize();
        assert_eq!(
            tool_names(&server.request(2, "tools/list", json!({}))),
            ["greet"]
        );
    }
}

/// The compose example serves its mounts' tools under `{mount}_{tool}` and forwards calls.
#[test]
fn compose_example_serves_mounted_tools() {
    let Some(path) = example("compose", cfg!(feature = "compose")) else {
        return;
    };
    let mut server = Running::start(&path, &[], &[]);
    server.initialize();
    assert_eq!(
        tool_names(&server.request(2, "tools/list", json!({}))),
        ["math_add", "greeter_greet"]
    );
    let call = server.request(
        3,
        "tools/call",
        json!({"name": "math_add", "arguments": {"a": 2, "b": 3}}),
    );
    assert_eq!(text(&call), "5");
    let read = server.request(
        4,
        "resources/read",
        json!({"uri": "greeter+greeter://motd"}),
    );
    assert_eq!(read["result"]["contents"][0]["text"], "Be kind.", "{read}");
}
