//! Smoke tests of the client-side and testing examples (examples/client_stdio.rs,
//! client_http.rs, http_client_config.rs, http_client_connector.rs, multi_round.rs, testing.rs,
//! oauth_client.rs): each built example binary is
//! run and its output checked, with a deadline.
//!
//! `cargo test` (without target filters) builds the package's examples whose required
//! features are on, next to the test binaries' directory: run the package's tests, not this
//! file alone, on a fresh target (`cargo test -p ferromcp --all-features`). An example whose
//! feature is off is skipped with a message; one that should have been built and is missing
//! fails.
#![cfg(all(unix, feature = "server", feature = "client-http", feature = "http"))]
#![allow(clippy::unwrap_used, clippy::panic, clippy::expect_used)]

use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// How long one example run may take.
const DEADLINE: Duration = Duration::from_secs(30);

/// The built example `name`; `None` (with a message) when its feature is off.
fn example(name: &str, feature_on: bool) -> Option<PathBuf> {
    if !feature_on {
        eprintln!("skipped: the `{name}` example needs a feature this build lacks");
        return None;
    }
    let deps = std::env::current_exe().unwrap();
    let path = deps
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("examples")
        .join(name);
    assert!(
        path.exists(),
        "{} was not built: run `cargo test -p ferromcp` without target filters",
        path.display()
    );
    Some(path)
}

/// Runs `program` with `args` to its end (killed after [`DEADLINE`]): exit success, stdout.
fn run(program: &PathBuf, args: &[&str]) -> (bool, String) {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap_or_else(|e| panic!("{}: {e}", program.display()));
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut out = String::new();
        let _ = stdout.read_to_string(&mut out);
        out
    });
    let status = wait(&mut child);
    (status, reader.join().unwrap())
}

fn wait(child: &mut Child) -> bool {
    let deadline = Instant::now() + DEADLINE;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.success();
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the example did not exit within {DEADLINE:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn assert_lines(out: &str, expected: &[&str]) {
    for line in expected {
        assert!(
            out.lines().any(|l| l == *line),
            "missing line {line:?} in:\n{out}"
        );
    }
}

// ---- client_stdio ----------------------------------------------------------------------

/// With no arguments, client_stdio runs the minimal_tools example and calls `add`.
#[test]
fn client_stdio_calls_the_minimal_tools_example() {
    let Some(client) = example("client_stdio", true) else {
        return;
    };
    example("minimal_tools", true);
    let (ok, out) = run(&client, &[]);
    assert!(ok, "{out}");
    assert_lines(&out, &["tools: add", "add -> 5"]);
    assert!(out.contains("connected to minimal (protocol "), "{out}");
}

/// client_stdio's handlers answer the multi_round example's questions in both eras: live
/// requests at 2025-11-25, input rounds the client retries at 2026-07-28.
#[test]
fn client_stdio_answers_sampling_elicitation_and_roots_in_both_eras() {
    let Some(client) = example("client_stdio", true) else {
        return;
    };
    let Some(server) = example("multi_round", cfg!(feature = "request-state")) else {
        return;
    };
    let server = server.to_str().unwrap();
    for era in ["handshake", "modern"] {
        let (ok, out) = run(&client, &["--era", era, "--call", "haiku", "{}", server]);
        assert!(ok, "{era}: {out}");
        assert_lines(
            &out,
            &[
                "tools: haiku, where_am_i",
                "[elicitation] What should the haiku be about?",
                "[sampling] Write a haiku about autumn.",
                "haiku -> Old pond, a frog jumps: the sound of water.",
            ],
        );
        let (ok, out) = run(
            &client,
            &["--era", era, "--call", "where_am_i", "{}", server],
        );
        assert!(ok, "{era}: {out}");
        assert_lines(&out, &["[roots] asked"]);
        assert!(out.contains("where_am_i -> Your roots: file:///"), "{out}");
    }
}

// ---- client_http -----------------------------------------------------------------------

/// client_http against a Streamable HTTP server started here, in each lifecycle mode, with a
/// tool that asks the user (answered by the example's elicitation handler).
#[tokio::test]
async fn client_http_talks_to_an_http_server_in_both_eras() {
    use ferromcp::McpServer;
    use ferromcp::server::http::{HttpConfig, HttpServer};
    use ferromcp::server::mcp_server::{Args, Ask, ResolveError, Resolved, Resolver};

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct AddArgs {
        a: f64,
        b: f64,
    }
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Name {
        name: String,
    }
    struct AskName;
    impl Resolver for AskName {
        type Output = Option<String>;
        async fn resolve(ask: &Ask) -> Result<Self::Output, ResolveError> {
            let answer = ask.elicit_form::<Name>("name", "Your name?").await?;
            Ok(answer.accepted().map(|n| n.name))
        }
    }

    let Some(client) = example("client_http", true) else {
        return;
    };
    let server = McpServer::builder("http-test", "1.0.0")
        .tool("add", |Args(a): Args<AddArgs>| async move {
            (a.a + a.b).to_string()
        })
        .tool("greet", |Resolved(n): Resolved<AskName>| async move {
            format!("Hello, {}!", n.unwrap_or_default())
        })
        .build()
        .unwrap();
    let http = HttpServer::bind(
        "127.0.0.1:0",
        server.server().clone(),
        HttpConfig::default(),
    )
    .await
    .unwrap();
    let url = format!("http://{}/mcp", http.local_addr());
    let serving = tokio::spawn(http.run());

    for (era, protocol) in [
        ("auto", "2026-07-28"),
        ("modern", "2026-07-28"),
        ("handshake", "2025-11-25"),
    ] {
        let (client, url) = (client.clone(), url.clone());
        let (ok, out) = tokio::task::spawn_blocking(move || {
            let add = run(&client, &["--era", era, &url]);
            let greet = run(&client, &["--era", era, "--call", "greet", "{}", &url]);
            (add.0 && greet.0, format!("{}{}", add.1, greet.1))
        })
        .await
        .unwrap();
        assert!(ok, "{era}: {out}");
        assert!(
            out.contains(&format!("connected to http-test (protocol {protocol}")),
            "{era}: {out}"
        );
        assert_lines(
            &out,
            &[
                "tools: add, greet",
                "add -> 5",
                "[elicitation] Your name?",
                "greet -> Hello, autumn!",
            ],
        );
    }
    serving.abort();
}

/// http_client_config with its settings (no proxy, a default header, both timeouts) against a
/// Streamable HTTP server started here; a missing CA file fails with its name.
#[tokio::test]
async fn http_client_config_connects_with_its_settings() {
    use ferromcp::McpServer;
    use ferromcp::server::http::{HttpConfig, HttpServer};

    let Some(client) = example("http_client_config", true) else {
        return;
    };
    let server = McpServer::builder("config-test", "1.0.0")
        .tool("ping", || async { "pong" })
        .build()
        .unwrap();
    let http = HttpServer::bind(
        "127.0.0.1:0",
        server.server().clone(),
        HttpConfig::default(),
    )
    .await
    .unwrap();
    let url = format!("http://{}/mcp", http.local_addr());
    let serving = tokio::spawn(http.run());
    let (ok, out) = tokio::task::spawn_blocking(move || {
        let args = [
            "--no-proxy",
            "--header",
            "x-demo: 1",
            "--connect-timeout",
            "5",
            "--read-timeout",
            "30",
            &url,
        ];
        let good = run(&client, &args);
        let bad = run(&client, &["--cacert", "/nonexistent/ca.pem", &url]);
        assert!(!bad.0, "{}", bad.1);
        good
    })
    .await
    .unwrap();
    assert!(ok, "{out}");
    assert_lines(
        &out,
        &[
            "connected to config-test (protocol 2026-07-28)",
            "tools: ping",
        ],
    );
    serving.abort();
}

// ---- http_client_connector -------------------------------------------------------------

/// http_client_connector over TCP to a fixed address (the URL's host, `mcp.example`, is never
/// resolved) and over a Unix socket (ferromcp's service served by axum on it): one
/// connection each for the handshake and three calls (keep-alive).
#[tokio::test]
async fn http_client_connector_reaches_servers_by_tcp_address_and_unix_socket() {
    use ferromcp::McpServer;
    use ferromcp::server::http::{HttpConfig, HttpServer, McpHttpService};

    let Some(client) = example("http_client_connector", true) else {
        return;
    };
    let server = McpServer::builder("connector-test", "1.0.0")
        .tool("ping", || async { "pong" })
        .build()
        .unwrap();
    let config = HttpConfig::default().allowed_hosts(["mcp.example"]);
    let http = HttpServer::bind("127.0.0.1:0", server.server().clone(), config)
        .await
        .unwrap();
    let addr = http.local_addr().to_string();
    let serving = tokio::spawn(http.run());
    let socket = std::env::temp_dir().join(format!("ferromcp-example-{}.sock", std::process::id()));
    let _ = std::fs::remove_file(&socket);
    let listener = tokio::net::UnixListener::bind(&socket).unwrap();
    let service = McpHttpService::new(
        server.server().clone(),
        HttpConfig::default().allowed_hosts(["mcp.local"]),
    );
    let app = axum::Router::new().route_service("/mcp", service);
    let unix = tokio::spawn(async move { axum::serve(listener, app).await });
    let path = socket.to_str().unwrap().to_owned();
    let (tcp_run, unix_run) = tokio::task::spawn_blocking(move || {
        let tcp = run(&client, &["--connect-to", &addr, "http://mcp.example/mcp"]);
        let unix = run(&client, &["--unix", &path, "http://mcp.local/mcp"]);
        (tcp, unix)
    })
    .await
    .unwrap();
    for (ok, out) in [tcp_run, unix_run] {
        assert!(ok, "{out}");
        assert_lines(
            &out,
            &[
                "connected (protocol 2026-07-28)",
                "tools: ping",
                "connections made: 1",
            ],
        );
    }
    serving.abort();
    unix.abort();
    let _ = std::fs::remove_file(socket);
}

// ---- multi_round, driven with raw JSON lines --------------------------------------------

/// The multi_round example as a child process, spoken to line by line.
struct Pipe {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<Value>,
}

impl Pipe {
    fn start() -> Option<Self> {
        let program = example("multi_round", cfg!(feature = "request-state"))?;
        let mut child = Command::new(&program)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if tx.send(serde_json::from_str(&line).unwrap()).is_err() {
                    return;
                }
            }
        });
        let stdin = child.stdin.take();
        Some(Self {
            child,
            stdin,
            lines,
        })
    }

    fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    /// The next request or response (notifications are skipped).
    fn next(&self) -> Value {
        loop {
            let m = self
                .lines
                .recv_timeout(Duration::from_secs(10))
                .expect("no message from the server within 10 s");
            if m.get("id").is_some() {
                return m;
            }
        }
    }

    /// Closes stdin; the server must exit on its own.
    fn finish(mut self) {
        drop(self.stdin.take());
        assert!(wait(&mut self.child), "the server exited with a failure");
    }
}

impl Drop for Pipe {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

const POEM: &str = "Grey waves fold and break";

/// 2025-11-25: the call stays open while the server asks, as requests, for the topic and then
/// the poem; the answers complete it.
#[test]
fn multi_round_asks_live_requests_at_2025_11_25() {
    let Some(mut p) = Pipe::start() else { return };
    p.send(
        &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {"elicitation": {"form": {}}, "sampling": {}},
        "clientInfo": {"name": "smoke", "version": "1"}}}),
    );
    assert_eq!(p.next()["result"]["protocolVersion"], "2025-11-25");
    p.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    p.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                  "params": {"name": "haiku", "arguments": {}}}));

    let ask = p.next();
    assert_eq!(ask["method"], "elicitation/create", "{ask}");
    assert_eq!(ask["params"]["message"], "What should the haiku be about?");
    p.send(&json!({"jsonrpc": "2.0", "id": ask["id"],
                  "result": {"action": "accept", "content": {"topic": "the sea"}}}));

    let ask = p.next();
    assert_eq!(ask["method"], "sampling/createMessage", "{ask}");
    assert_eq!(
        ask["params"]["messages"][0]["content"]["text"],
        "Write a haiku about the sea."
    );
    p.send(&json!({"jsonrpc": "2.0", "id": ask["id"], "result": {
        "role": "assistant", "content": {"type": "text", "text": POEM}, "model": "m"}}));

    let done = p.next();
    assert_eq!(done["id"], 2, "{done}");
    assert_eq!(done["result"]["content"][0]["text"], POEM);
    p.finish();
}

/// 2026-07-28: no server→client requests; each round is one request and one response
/// (`input_required` with `inputRequests` and a `requestState`, retried with
/// `inputResponses`), the sampling question coming in the second round since it needs the
/// topic.
#[test]
fn multi_round_answers_input_required_rounds_at_2026_07_28() {
    let Some(mut p) = Pipe::start() else { return };
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities":
                          {"elicitation": {"form": {}}, "sampling": {}}});
    let call = |id: u32, extra: Value| {
        let mut params = json!({"name": "haiku", "arguments": {}, "_meta": meta});
        for (k, v) in extra.as_object().unwrap() {
            params[k] = v.clone();
        }
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
    };

    p.send(&call(1, json!({})));
    let r1 = p.next();
    assert_eq!(r1["id"], 1, "a request to the client at 2026-07-28: {r1}");
    let r1 = &r1["result"];
    assert_eq!(r1["resultType"], "input_required", "{r1}");
    assert_eq!(r1["inputRequests"]["topic"]["method"], "elicitation/create");
    assert!(r1["requestState"].is_string());

    let answer = json!({"topic": {"action": "accept", "content": {"topic": "the sea"}}});
    p.send(&call(
        2,
        json!({"inputResponses": answer, "requestState": r1["requestState"]}),
    ));
    let r2 = p.next();
    assert_eq!(r2["id"], 2, "{r2}");
    let r2 = &r2["result"];
    assert_eq!(r2["resultType"], "input_required", "{r2}");
    let poem = &r2["inputRequests"]["poem"];
    assert_eq!(poem["method"], "sampling/createMessage");
    assert_eq!(
        poem["params"]["messages"][0]["content"]["text"],
        "Write a haiku about the sea."
    );

    // Only the new question is answered: the topic rides the sealed state.
    let answer = json!({"poem": {"role": "assistant",
                                 "content": {"type": "text", "text": POEM}, "model": "m"}});
    p.send(&call(
        3,
        json!({"inputResponses": answer, "requestState": r2["requestState"]}),
    ));
    let r3 = p.next();
    assert_eq!(r3["id"], 3, "{r3}");
    assert_eq!(r3["result"]["resultType"], "complete", "{r3}");
    assert_eq!(r3["result"]["content"][0]["text"], POEM);
    p.finish();
}

// ---- testing ---------------------------------------------------------------------------

/// The test-kit example runs its checks in both eras and exits 0.
#[test]
fn testing_example_passes() {
    let Some(program) = example("testing", cfg!(feature = "test-util")) else {
        return;
    };
    let (ok, out) = run(&program, &[]);
    assert!(ok, "{out}");
    assert_lines(&out, &["Handshake era: OK", "Modern era: OK", "OK"]);
}

// ---- otel_trace ------------------------------------------------------------------------

/// The OpenTelemetry example: in both eras, the `tools/call add` SERVER span is the CLIENT
/// span's child, in the same trace.
#[test]
fn otel_trace_example_prints_one_trace_per_call() {
    let Some(program) = example(
        "otel_trace",
        cfg!(all(feature = "otel", feature = "client")),
    ) else {
        return;
    };
    let (ok, out) = run(&program, &[]);
    assert!(ok, "{out}");
    // (kind, trace, span, parent, version) of each `tools/call add` line.
    let spans: Vec<Vec<&str>> = out
        .lines()
        .filter(|l| l.starts_with("tools/call add ("))
        .map(|l| {
            l.split(' ')
                .map(|w| w.rsplit('=').next().unwrap_or(w))
                .collect::<Vec<_>>()
        })
        .collect();
    for version in ["2025-11-25", "2026-07-28"] {
        let of = |kind: &str| {
            spans
                .iter()
                .find(|s| s[2] == kind && s[6] == version)
                .unwrap_or_else(|| panic!("no {kind} span at {version}:\n{out}"))
        };
        let (client, server) = (of("(Client)"), of("(Server)"));
        assert_eq!(client[3], server[3], "one trace:\n{out}");
        assert_eq!(server[5], client[4], "the server span's parent:\n{out}");
    }
}

// ---- oauth_client ----------------------------------------------------------------------

/// oauth_client against the embedded authorization server: it prints the authorization URL;
/// this test plays the browser (GET the URL, follow the redirect to the example's loopback
/// port), and the example gets its token and lists the tools.
#[test]
fn oauth_client_runs_the_loopback_flow() {
    let on = cfg!(all(feature = "oauth", feature = "auth-server"));
    let Some(program) = example("oauth_client", on) else {
        return;
    };
    #[cfg(all(feature = "oauth", feature = "auth-server"))]
    oauth::run_flow(&program);
    #[cfg(not(all(feature = "oauth", feature = "auth-server")))]
    let _ = program;
}

#[cfg(all(feature = "oauth", feature = "auth-server"))]
mod oauth {
    use super::*;
    use std::net::TcpStream;

    use ferromcp::McpServer;
    use ferromcp::server::auth_server::{AuthHttpServer, AuthServerConfig};
    use ferromcp::server::http::HttpConfig;

    /// One `GET` over a fresh connection: the status line and the `Location` header.
    fn get(url: &str) -> (String, Option<String>) {
        let rest = url.strip_prefix("http://").expect("an http URL");
        let (host, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        let mut stream = TcpStream::connect(host).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        write!(
            stream,
            "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut response = String::new();
        let _ = stream.read_to_string(&mut response);
        let status = response.lines().next().unwrap_or_default().to_owned();
        let location = response
            .lines()
            .take_while(|l| !l.is_empty())
            .find_map(|l| {
                let (name, value) = l.split_once(':')?;
                name.eq_ignore_ascii_case("location")
                    .then(|| value.trim().to_owned())
            });
        (status, location)
    }

    pub(super) fn run_flow(program: &PathBuf) {
        // The protected server, on its own thread and runtime; its URL comes back here.
        let (url_tx, url_rx) = mpsc::channel();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async {
                let server = McpServer::builder("protected", "1.0.0")
                    .tool("whoami", || async { "a signed-in user" })
                    .build()
                    .unwrap();
                let as_config = AuthServerConfig::default()
                    .scopes_supported(["mcp"])
                    .default_scopes(["mcp"]);
                let http = AuthHttpServer::bind_with(
                    "127.0.0.1:0",
                    server.server().clone(),
                    HttpConfig::default(),
                    as_config,
                    |rs| rs.required_scopes(["mcp"]),
                )
                .await
                .unwrap();
                url_tx.send(http.resource().to_owned()).unwrap();
                let _ = http.run().await;
            });
        });
        let url = url_rx.recv_timeout(Duration::from_secs(10)).unwrap();

        let mut child = Command::new(program)
            .args(["--no-browser", &url])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let (tx, rx) = mpsc::channel();
        let stdout = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let mut out = Vec::new();
        let auth_url = loop {
            let line = rx
                .recv_timeout(Duration::from_secs(20))
                .unwrap_or_else(|_| panic!("no authorization URL printed: {out:?}"));
            if let Some(u) = line.strip_prefix("Open this URL to sign in: ") {
                break u.to_owned();
            }
            out.push(line);
        };
        assert!(auth_url.contains("code_challenge="), "{auth_url}");

        // The browser: the authorization server approves at once and redirects to the
        // example's loopback listener, which takes the code.
        let (status, location) = get(&auth_url);
        assert!(
            status.contains(" 302 ") || status.contains(" 303 "),
            "{status}"
        );
        let callback = location.expect("a redirect Location");
        assert!(callback.starts_with("http://127.0.0.1:"), "{callback}");
        let (status, _) = get(&callback);
        assert!(status.contains(" 200 "), "{status}");

        assert!(wait(&mut child), "oauth_client failed: {out:?}");
        // Everything printed after the URL (the reader ends at the child's end of stdout).
        let rest: Vec<String> = rx.iter().collect();
        assert!(
            rest.iter()
                .any(|l| l == "authorized: a DPoP token, scope mcp"
                    || l == "authorized: a Bearer token, scope mcp"),
            "{rest:?}"
        );
        assert!(rest.iter().any(|l| l == "tools: whoami"), "{rest:?}");
    }
}

// ---- redis_scale_out -------------------------------------------------------------------

/// Two nodes sharing one Redis serve one handshake-era session behind a round-robin
/// balancer: requests reaching the non-owner node (B) are forwarded to the owner (A), an
/// elicitation included. Runs only when `FERROMCP_TEST_REDIS_URL` names a Redis.
#[test]
fn redis_scale_out_serves_one_session_on_two_nodes() {
    let Ok(redis) = std::env::var("FERROMCP_TEST_REDIS_URL") else {
        eprintln!("skipped: set FERROMCP_TEST_REDIS_URL to run the redis_scale_out example");
        return;
    };
    let Some(program) = example("redis_scale_out", cfg!(feature = "redis")) else {
        return;
    };
    let mut child = Command::new(&program)
        .env("REDIS_URL", redis)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut out = String::new();
        let _ = stdout.read_to_string(&mut out);
        out
    });
    assert!(wait(&mut child), "redis_scale_out failed");
    let out = reader.join().unwrap();
    assert_lines(
        &out,
        &[
            "client: add -> 2 (computed on node A, the session's owner)",
            "client: add -> 3 (computed on node A, the session's owner)",
            "client: add -> 4 (computed on node A, the session's owner)",
            "client: asked for a name, answering Ada",
            "client: greet -> Hello, Ada!",
            "OK",
        ],
    );
    assert!(out.contains("balancer: connection to node B"), "{out}");
}
