//! End to end over a real stdio child process: `ferromcp serve` answering a handshake-era
//! client and a modern-era client (MCP "Transports › stdio", "Lifecycle", 2026-07-28
//! "Sessionless operation").
#![allow(clippy::unwrap_used, clippy::panic)]

use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

const TIMEOUT: Duration = Duration::from_secs(20);

struct Peer {
    child: Child,
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
}

impl Peer {
    fn spawn() -> Self {
        Self::spawn_logging(Stdio::null(), "warn")
    }

    /// `ferromcp serve` with its log lines (at `level`, `FERROMCP_LOG`) going to `stderr`.
    fn spawn_logging(stderr: Stdio, level: &str) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_ferromcp"))
            .arg("serve")
            .env("FERROMCP_LOG", level)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        Self {
            child,
            stdin,
            lines,
        }
    }

    async fn send_raw(&mut self, line: &str) {
        self.stdin.write_all(line.as_bytes()).await.unwrap();
        self.stdin.write_all(b"\n").await.unwrap();
        self.stdin.flush().await.unwrap();
    }

    async fn send(&mut self, message: Value) {
        self.send_raw(&message.to_string()).await;
    }

    /// The next line on stdout; every line must be a JSON-RPC message.
    async fn recv(&mut self) -> Value {
        let line = self
            .lines
            .next_line()
            .await
            .unwrap()
            .expect("stdout closed");
        let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
        assert_eq!(v["jsonrpc"], "2.0", "{line}");
        v
    }

    /// The response to request `id`, collecting the notifications that came before it.
    async fn response(&mut self, id: i64) -> (Value, Vec<Value>) {
        let mut notes = Vec::new();
        loop {
            let v = self.recv().await;
            if v.get("id") == Some(&json!(id)) {
                return (v, notes);
            }
            notes.push(v);
        }
    }

    async fn request(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        self.response(id).await.0
    }

    async fn handshake(&mut self, version: &str) -> Value {
        let init = self
            .request(
                1,
                "initialize",
                json!({"protocolVersion": version, "capabilities": {},
                       "clientInfo": {"name": "e2e", "version": "1"}}),
            )
            .await;
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        init
    }

    /// Closes stdin and expects a clean exit.
    async fn finish(mut self) {
        drop(self.stdin);
        let status = tokio::time::timeout(Duration::from_secs(10), self.child.wait()).await;
        assert!(status.unwrap().unwrap().success());
        assert!(
            self.lines.next_line().await.unwrap().is_none(),
            "nothing after the end"
        );
    }
}

fn envelope(extra: Value) -> Value {
    let mut meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "e2e", "version": "1"},
    });
    if let (Value::Object(m), Value::Object(e)) = (&mut meta, extra) {
        m.extend(e);
    }
    meta
}

fn code(v: &Value) -> i64 {
    v["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("not an error: {v}"))
}

async fn run(test: impl std::future::Future<Output = ()>) {
    tokio::time::timeout(TIMEOUT, test)
        .await
        .expect("test timed out");
}

/// F35: a server whose stderr was closed by its parent (a client that stopped reading it)
/// keeps serving: a log line it cannot write is dropped. Before, the log subscriber reported
/// the failed write with `eprintln!`, which panics on the same closed stderr, so every
/// request that logged (all of them at `debug`) was answered -32603.
#[tokio::test]
async fn f35_closed_stderr_drops_log_lines_and_keeps_serving() {
    run(async {
        let mut p = Peer::spawn_logging(Stdio::piped(), "debug");
        // The read end is closed: every write to the child's stderr now fails (EPIPE).
        drop(p.child.stderr.take());
        let init = p.handshake("2025-11-25").await;
        assert_eq!(init["result"]["protocolVersion"], "2025-11-25", "{init}");
        // An invalid notification is dropped with a warning, which cannot be written.
        p.send(json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {}}))
            .await;
        for id in 2..5 {
            let r = p
                .request(
                    id,
                    "tools/call",
                    json!({"name": "add", "arguments": {"a": id, "b": 1}}),
                )
                .await;
            assert_eq!(
                r["result"]["content"][0]["text"],
                (id + 1).to_string(),
                "{r}"
            );
        }
        p.finish().await;
    })
    .await;
}

#[tokio::test]
async fn handshake_era_client_is_served() {
    run(async {
        let mut p = Peer::spawn();
        // Lifecycle › Version Negotiation: a supported version is kept.
        let init = p.handshake("2025-06-18").await;
        assert_eq!(init["result"]["protocolVersion"], "2025-06-18");
        assert_eq!(init["result"]["serverInfo"]["name"], "ferromcp-demo");
        assert!(init["result"]["capabilities"]["tools"].is_object());

        let r = p
            .request(
                2,
                "tools/call",
                json!({"name": "add", "arguments": {"a": 2, "b": 3}}),
            )
            .await;
        assert_eq!(r["result"]["content"][0]["text"], "5");
        assert!(
            r["result"].get("resultType").is_none(),
            "no resultType before 2026-07-28"
        );

        let r = p.request(3, "ping", json!({})).await;
        assert_eq!(r["result"], json!({}));

        // A method absent at the negotiated version: -32601 with the method as data.
        let r = p.request(4, "server/discover", json!({})).await;
        assert_eq!(
            (code(&r), &r["error"]["data"]),
            (-32601, &json!("server/discover"))
        );

        // A second initialize is rejected.
        let r = p
            .request(
                5,
                "initialize",
                json!({"protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "e2e", "version": "1"}}),
            )
            .await;
        assert_eq!(code(&r), -32600);

        // The 2026 envelope on a handshake-locked stream.
        let r = p
            .request(6, "tools/list", json!({"_meta": envelope(json!({}))}))
            .await;
        assert_eq!(code(&r), -32600);

        // A malformed line: -32700 with a null id, and the connection keeps serving.
        p.send_raw("{not json").await;
        let e = p.recv().await;
        assert_eq!((code(&e), &e["id"]), (-32700, &Value::Null));
        let r = p.request(7, "tools/list", json!({})).await;
        let tools = r["result"]["tools"].as_array().unwrap();
        assert!(tools.iter().any(|t| t["name"] == "add"), "{r}");
        assert!(
            r["result"].get("ttlMs").is_none(),
            "cache hints are 2026-07-28 only"
        );

        // Bad params for a spec method.
        let r = p.request(8, "tools/call", json!({"arguments": {}})).await;
        assert_eq!(code(&r), -32602);
        p.finish().await;
    })
    .await;
}

#[tokio::test]
async fn unsupported_handshake_version_gets_the_latest() {
    run(async {
        let mut p = Peer::spawn();
        let init = p.handshake("1999-01-01").await;
        assert_eq!(init["result"]["protocolVersion"], "2025-11-25");
        p.finish().await;
    })
    .await;
}

#[tokio::test]
async fn pipelined_requests_see_the_handshake() {
    run(async {
        let mut p = Peer::spawn();
        // initialize runs inline: a request written right behind it sees the initialized state.
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "e2e", "version": "1"}}});
        let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
        p.send_raw(&format!("{init}\n{list}")).await;
        let (r, _) = p.response(2).await;
        assert!(r["result"]["tools"].is_array(), "{r}");
        p.finish().await;
    })
    .await;
}

#[tokio::test]
async fn requests_before_initialize_are_gated() {
    run(async {
        let mut p = Peer::spawn();
        let r = p.request(1, "ping", json!({})).await;
        assert_eq!(r["result"], json!({}), "ping is exempt from the init gate");
        let r = p.request(2, "tools/list", json!({})).await;
        assert_eq!(code(&r), -32602);
        let r = p.request(3, "no/such/method", json!({})).await;
        assert_eq!(code(&r), -32601);
        p.finish().await;
    })
    .await;
}

#[tokio::test]
async fn progress_and_logging_reach_a_handshake_client() {
    run(async {
        let mut p = Peer::spawn();
        p.handshake("2025-11-25").await;
        let params = json!({"name": "countdown", "arguments": {"seconds": 1},
                            "_meta": {"progressToken": "tok"}});
        p.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params}))
            .await;
        let (r, notes) = p.response(2).await;
        assert_eq!(r["result"]["content"][0]["text"], "liftoff");
        let progress: Vec<_> = notes
            .iter()
            .filter(|n| n["method"] == "notifications/progress")
            .collect();
        assert!(!progress.is_empty(), "{notes:?}");
        assert!(
            progress
                .iter()
                .all(|n| n["params"]["progressToken"] == "tok")
        );
        assert!(notes.iter().any(|n| n["method"] == "notifications/message"));
        p.finish().await;
    })
    .await;
}

#[tokio::test]
async fn modern_era_client_is_served() {
    run(async {
        let mut p = Peer::spawn();
        let r = p
            .request(1, "tools/list", json!({"_meta": envelope(json!({}))}))
            .await;
        let result = &r["result"];
        assert_eq!(result["resultType"], "complete");
        assert_eq!(
            (result["ttlMs"].as_u64(), &result["cacheScope"]),
            (Some(0), &json!("private"))
        );
        assert_eq!(
            result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
            "ferromcp-demo"
        );

        let r = p
            .request(2, "server/discover", json!({"_meta": envelope(json!({}))}))
            .await;
        assert_eq!(r["result"]["supportedVersions"], json!(["2026-07-28"]));

        // The era is locked: initialize is answered with -32022 and the supported versions.
        let r = p
            .request(
                3,
                "initialize",
                json!({"protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "e2e", "version": "1"}}),
            )
            .await;
        assert_eq!(code(&r), -32022);
        assert_eq!(r["error"]["data"]["supported"], json!(["2026-07-28"]));

        // ping does not exist at 2026-07-28.
        let r = p
            .request(4, "ping", json!({"_meta": envelope(json!({}))}))
            .await;
        assert_eq!(code(&r), -32601);

        // Envelope rules: missing capabilities, unsupported version.
        let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28"});
        let r = p.request(5, "tools/list", json!({"_meta": meta})).await;
        assert_eq!(code(&r), -32602);
        let meta = envelope(json!({"io.modelcontextprotocol/protocolVersion": "2099-01-01"}));
        let r = p.request(6, "tools/list", json!({"_meta": meta})).await;
        assert_eq!(code(&r), -32022);

        let args =
            json!({"name": "echo", "arguments": {"text": "hi"}, "_meta": envelope(json!({}))});
        let r = p.request(7, "tools/call", args).await;
        assert_eq!(r["result"]["content"][0]["text"], "hi");
        assert_eq!(r["result"]["resultType"], "complete");
        p.finish().await;
    })
    .await;
}

#[tokio::test]
async fn modern_logging_needs_the_per_request_opt_in() {
    run(async {
        let mut p = Peer::spawn();
        let call = |id: i64, meta: Value| {
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                   "params": {"name": "countdown", "arguments": {"seconds": 1}, "_meta": meta}})
        };
        p.send(call(1, envelope(json!({})))).await;
        let (_, notes) = p.response(1).await;
        assert!(
            !notes.iter().any(|n| n["method"] == "notifications/message"),
            "{notes:?}"
        );

        p.send(call(
            2,
            envelope(json!({"io.modelcontextprotocol/logLevel": "debug"})),
        ))
        .await;
        let (_, notes) = p.response(2).await;
        assert!(
            notes.iter().any(|n| n["method"] == "notifications/message"),
            "{notes:?}"
        );

        p.send(call(
            3,
            envelope(json!({"io.modelcontextprotocol/logLevel": "error"})),
        ))
        .await;
        let (_, notes) = p.response(3).await;
        assert!(
            !notes.iter().any(|n| n["method"] == "notifications/message"),
            "info < error"
        );
        p.finish().await;
    })
    .await;
}

/// Transports › stdio, shutdown: at end of input an in-flight request gets a bounded grace
/// period (2 s by default), then is cancelled and answered -32000 (connection closed), and the
/// process exits.
#[tokio::test]
async fn stdin_eof_ends_in_flight_work_within_the_grace_period() {
    run(async {
        let mut p = Peer::spawn();
        p.handshake("2025-11-25").await;
        let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                          "params": {"name": "countdown", "arguments": {"seconds": 60}}});
        p.send(call).await;
        let started = std::time::Instant::now();
        drop(p.stdin);
        let mut answer = None;
        while let Some(line) = p.lines.next_line().await.unwrap() {
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["id"] == 2 {
                answer = Some(v);
            }
        }
        let status = p.child.wait().await.unwrap();
        let took = started.elapsed();
        assert!(status.success());
        assert!(took < Duration::from_secs(10), "exited after {took:?}");
        let answer = answer.expect("the in-flight request is answered");
        assert_eq!(code(&answer), -32000, "{answer}");
    })
    .await;
}

/// S44 (nothing already accepted is lost), over a real stdio child: a client pipelines 20,000
/// `ping`s, closes stdin right after the last one and reads stdout as it comes. Every request
/// is answered exactly once before the process exits. Before, the server returned at end of
/// input while answers still waited for room in its output queue, and about 530 were lost.
#[tokio::test]
async fn s44_twenty_thousand_pipelined_requests_are_all_answered_after_stdin_eof() {
    run(async {
        let mut p = Peer::spawn();
        p.handshake("2025-11-25").await;
        let n = 20_000;
        let mut stdin = p.stdin;
        let writer = tokio::spawn(async move {
            let mut lines = String::new();
            for id in 2..2 + n {
                lines.push_str(&format!(
                    "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"ping\"}}\n"
                ));
            }
            stdin.write_all(lines.as_bytes()).await.unwrap();
            // Dropping stdin closes it: end of input right after the last request.
        });
        let by_id = read_all_until_exit(&mut p.lines).await;
        writer.await.unwrap();
        assert!(p.child.wait().await.unwrap().success());
        let missing: Vec<i64> = (2..2 + n).filter(|id| !by_id.contains_key(id)).collect();
        assert!(
            missing.is_empty(),
            "{} of {n} unanswered, from id {:?}",
            missing.len(),
            missing.first()
        );
        for (id, answers) in &by_id {
            assert_eq!(answers.len(), 1, "{id} answered twice: {answers:?}");
            assert_eq!(answers[0]["result"], json!({}), "{id}: {answers:?}");
        }
    })
    .await;
}

/// Reads every line until stdout closes, by id.
async fn read_all_until_exit(
    lines: &mut Lines<BufReader<ChildStdout>>,
) -> std::collections::HashMap<i64, Vec<Value>> {
    let mut by_id: std::collections::HashMap<i64, Vec<Value>> = std::collections::HashMap::new();
    while let Some(line) = lines.next_line().await.unwrap() {
        let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
        if let Some(id) = v["id"].as_i64() {
            by_id.entry(id).or_default().push(v);
        }
    }
    by_id
}

/// S43 over a real stdio child: 1,000 pipelined slow `tools/call`s (a 60 s countdown), then
/// a `notifications/cancelled` for each, then a `ping`: the ping is answered within 5 s. The
/// calls beyond the dispatcher's bound (64 running + 256 waiting) are refused at once with the
/// overload error; the cancelled ones are never answered. Before, the server stopped reading
/// behind the first 128 calls, so the cancellations and the ping waited for the calls to
/// finish (a minute).
#[tokio::test]
async fn s43_cancelled_pipelined_calls_do_not_hold_up_the_next_request() {
    run(async {
        let mut p = Peer::spawn();
        p.handshake("2025-11-25").await;
        let mut lines = String::new();
        for id in 10..1010 {
            let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                              "params": {"name": "countdown", "arguments": {"seconds": 60}}});
            lines.push_str(&format!("{call}\n"));
        }
        for id in 10..1010 {
            let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                                "params": {"requestId": id, "reason": "user"}});
            lines.push_str(&format!("{cancel}\n"));
        }
        lines.push_str("{\"jsonrpc\":\"2.0\",\"id\":5000,\"method\":\"ping\"}\n");
        let started = std::time::Instant::now();
        let mut stdin = p.stdin;
        let writer = tokio::spawn(async move {
            stdin.write_all(lines.as_bytes()).await.unwrap();
            stdin
        });
        let mut refused = 0;
        loop {
            let line = p.lines.next_line().await.unwrap().expect("stdout closed");
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["id"] == 5000 {
                assert_eq!(v["result"], json!({}));
                break;
            }
            if v.get("id").is_some() {
                assert_eq!(v["error"]["data"]["overloaded"]["limit"], 320, "{v}");
                refused += 1;
            }
        }
        let took = started.elapsed();
        assert!(took < Duration::from_secs(5), "the ping took {took:?}");
        assert_eq!(refused, 1000 - 320);
        drop(writer.await.unwrap());
        // Nothing more: the cancelled calls are never answered.
        let rest = read_all_until_exit(&mut p.lines).await;
        assert!(rest.is_empty(), "{rest:?}");
        assert!(p.child.wait().await.unwrap().success());
    })
    .await;
}
