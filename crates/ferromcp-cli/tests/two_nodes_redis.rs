//! Two `ferromcp serve --http --redis URL` processes on two ports sharing one Redis (feature
//! `redis`): a handshake-era session opened on node A is served by node B, an event stream
//! broken on A resumes on B with `Last-Event-ID`, and a task started on A is polled to its
//! result on B; at 2026-07-28 (no session), tasks live in Redis and are served by either
//! node (`two_nodes_modern`). Needs `FERROMCP_TEST_REDIS_URL` (e.g. `redis://127.0.0.1:6379`); without it
//! each test prints a notice and passes, or fails when `FERROMCP_REQUIRE_REDIS=1` (as
//! `.ci/run` sets; then the default `redis://127.0.0.1:6379` is used).
#![cfg(feature = "redis")]
#![allow(clippy::unwrap_used, clippy::panic)]

mod http_node;
mod two_nodes_modern;

use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use http_node::start;

/// The Redis to share, or `None` (with the skip notice) when the tests should not run.
fn redis_url(test: &str) -> Option<String> {
    if let Ok(url) = std::env::var("FERROMCP_TEST_REDIS_URL") {
        return Some(url);
    }
    if std::env::var("FERROMCP_REQUIRE_REDIS").as_deref() == Ok("1") {
        return Some("redis://127.0.0.1:6379".to_owned());
    }
    eprintln!("SKIPPED {test}: FERROMCP_TEST_REDIS_URL is unset (e.g. redis://127.0.0.1:6379)");
    None
}

/// One HTTP exchange with `Connection: close`: the response's text up to the end, or up to
/// the first point where it contains `until` (a held-open event stream).
async fn exchange(
    addr: &str,
    method: &str,
    headers: &[(&str, &str)],
    body: &str,
    until: &str,
) -> String {
    exchange_until(addr, method, headers, body, |out| {
        !until.is_empty() && out.contains(until)
    })
    .await
}

/// [`exchange`], reading up to the end or until `done` holds for the text read so far.
async fn exchange_until(
    addr: &str,
    method: &str,
    headers: &[(&str, &str)],
    body: &str,
    done: impl Fn(&str) -> bool,
) -> String {
    let mut s = TcpStream::connect(addr).await.unwrap();
    let mut req = format!(
        "{method} /mcp HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\ncontent-type: application/json\r\n\
         content-length: {}\r\n",
        body.len()
    );
    if !headers.iter().any(|(k, _)| *k == "mcp-protocol-version") {
        req.push_str("mcp-protocol-version: 2025-11-25\r\n");
    }
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    if !headers.iter().any(|(k, _)| *k == "accept") {
        req.push_str("accept: application/json, text/event-stream\r\n");
    }
    req.push_str("\r\n");
    req.push_str(body);
    s.write_all(req.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = s.read(&mut buf).await.unwrap();
        if n == 0 {
            break;
        }
        out.extend_from_slice(&buf[..n]);
        if done(&String::from_utf8_lossy(&out)) {
            break;
        }
    }
    String::from_utf8(out).unwrap()
}

/// The JSON-RPC message (`data:` line or plain body) answering request `id` in `out`.
fn answer(out: &str, id: u64) -> Value {
    let body = out
        .split("\r\n\r\n")
        .skip(1)
        .collect::<Vec<_>>()
        .join("\r\n\r\n");
    for line in body.lines() {
        let text = line.strip_prefix("data:").unwrap_or(line).trim();
        if let Ok(v) = serde_json::from_str::<Value>(text)
            && v["id"] == id
        {
            return v;
        }
    }
    panic!("no answer to {id} in {out}")
}

fn header<'a>(out: &'a str, name: &str) -> Option<&'a str> {
    let head = out.split("\r\n\r\n").next()?;
    head.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

/// A 2025-11-25 session opened on `addr`: its id.
async fn open_session(addr: &str) -> String {
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"two-nodes","version":"1"}}}"#;
    let out = exchange(addr, "POST", &[], init, "").await;
    assert!(out.starts_with("HTTP/1.1 200"), "{out}");
    header(&out, "mcp-session-id")
        .expect("a session id")
        .to_owned()
}

async fn post(addr: &str, sid: &str, body: &str) -> String {
    exchange(addr, "POST", &[("mcp-session-id", sid)], body, "").await
}

async fn two_nodes(
    url: &str,
) -> (
    (tokio::process::Child, String),
    (tokio::process::Child, String),
) {
    (
        start(&["--redis", url]).await,
        start(&["--redis", url]).await,
    )
}

#[tokio::test]
async fn f23_session_opened_on_a_is_served_by_b() {
    let Some(url) = redis_url("f23_session_opened_on_a_is_served_by_b") else {
        return;
    };
    tokio::time::timeout(Duration::from_secs(60), async {
        let ((_a, a), (_b, b)) = two_nodes(&url).await;
        let sid = open_session(&a).await;
        let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        let out = post(&b, &sid, initialized).await;
        assert!(out.starts_with("HTTP/1.1 202"), "{out}");
        // Alternate nodes: each serves the session opened on A.
        for (i, node) in [&b, &a, &b].into_iter().enumerate() {
            let id = i as u64 + 2;
            let call = format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"add","arguments":{{"a":{id},"b":1}}}}}}"#
            );
            let out = post(node, &sid, &call).await;
            assert!(out.starts_with("HTTP/1.1 200"), "{node}: {out}");
            let v = answer(&out, id);
            assert_eq!(v["result"]["content"][0]["text"], (id + 1).to_string(), "{out}");
        }
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn f23_stream_broken_on_a_resumes_on_b() {
    let Some(url) = redis_url("f23_stream_broken_on_a_resumes_on_b") else {
        return;
    };
    tokio::time::timeout(Duration::from_secs(60), async {
        let ((_a, a), (_b, b)) = two_nodes(&url).await;
        let sid = open_session(&a).await;
        post(&a, &sid, r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).await;
        // test_reconnection closes its request's stream on A after the priming event.
        let call = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"test_reconnection","arguments":{}}}"#;
        let out = post(&a, &sid, call).await;
        assert!(out.starts_with("HTTP/1.1 200"), "{out}");
        assert!(!out.contains("Reconnection test completed"), "{out}");
        let last = out
            .lines()
            .rev()
            .find_map(|l| l.strip_prefix("id:"))
            .unwrap_or_else(|| panic!("no event id in {out}"))
            .trim()
            .to_owned();
        let h = [
            ("mcp-session-id", sid.as_str()),
            ("accept", "text/event-stream"),
            ("last-event-id", last.as_str()),
        ];
        let out = exchange(&b, "GET", &h, "", "Reconnection test completed").await;
        assert!(out.starts_with("HTTP/1.1 200"), "{out}");
        let v = answer(&out, 7);
        assert_eq!(v["result"]["content"][0]["text"], "Reconnection test completed");
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn f23_task_started_on_a_completes_on_b() {
    let Some(url) = redis_url("f23_task_started_on_a_completes_on_b") else {
        return;
    };
    tokio::time::timeout(Duration::from_secs(60), async {
        let ((_a, a), (_b, b)) = two_nodes(&url).await;
        let sid = open_session(&a).await;
        post(&a, &sid, r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).await;
        let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow_compute","arguments":{"seconds":0.5,"label":"two-nodes"},"task":{"ttl":60000}}}"#;
        let out = post(&a, &sid, call).await;
        let created = answer(&out, 2);
        let task_id = created["result"]["task"]["taskId"]
            .as_str()
            .unwrap_or_else(|| panic!("no task in {out}"))
            .to_owned();
        let mut id = 10;
        loop {
            id += 1;
            let get = format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tasks/get","params":{{"taskId":"{task_id}"}}}}"#
            );
            let out = post(&b, &sid, &get).await;
            let v = answer(&out, id);
            let status = v["result"]["status"].as_str().unwrap_or_else(|| panic!("{out}")).to_owned();
            if status == "completed" {
                break;
            }
            assert_eq!(status, "working", "{out}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let result = format!(
            r#"{{"jsonrpc":"2.0","id":99,"method":"tasks/result","params":{{"taskId":"{task_id}"}}}}"#
        );
        let out = post(&b, &sid, &result).await;
        let v = answer(&out, 99);
        let text = v["result"]["content"][0]["text"].as_str().unwrap_or_else(|| panic!("{out}"));
        assert!(text.contains("two-nodes"), "{out}");
    })
    .await
    .unwrap();
}

// ---- Issue 23 point 4: two `ferromcp gateway CONFIG --http ADDR --redis URL` nodes ----

/// A gateway config mounting the demo server (`ferromcp serve`, a stdio child of each node)
/// as `demo`, unique to this test. At 2025-11-25 (`lifecycle = "handshake"`), so that its
/// tools' task support shows on the gateway's (a 2026-07-28 backend lists none).
fn gateway_config(test: &str) -> std::path::PathBuf {
    let path = std::env::temp_dir().join(format!(
        "ferromcp-two-gateways-{}-{test}.toml",
        std::process::id()
    ));
    let text = format!(
        "[servers.demo]\ncommand = {:?}\nargs = [\"serve\"]\nlifecycle = \"handshake\"\n",
        env!("CARGO_BIN_EXE_ferromcp")
    );
    std::fs::write(&path, text).unwrap();
    path
}

/// `ferromcp gateway CONFIG --http 127.0.0.1:0 --redis URL` as a child (killed when
/// dropped), and the address it serves; its stderr (audit lines) is drained.
async fn start_gateway(config: &std::path::Path, url: &str) -> (tokio::process::Child, String) {
    use tokio::io::{AsyncBufReadExt, BufReader};
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_ferromcp"))
        .arg("gateway")
        .arg(config)
        .args(["--http", "127.0.0.1:0", "--redis", url])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("ferromcp gateway starts");
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let addr = loop {
        let line = lines
            .next_line()
            .await
            .unwrap()
            .expect("the gateway's address on stderr");
        if let Some(rest) = line.split("at http://").nth(1) {
            break rest.strip_suffix("/mcp").unwrap().to_owned();
        }
    };
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    (child, addr)
}

async fn two_gateways(
    test: &str,
    url: &str,
) -> (
    (tokio::process::Child, String),
    (tokio::process::Child, String),
) {
    let config = gateway_config(test);
    (
        start_gateway(&config, url).await,
        start_gateway(&config, url).await,
    )
}

/// A session opened on gateway A is served by gateway B: `tools/call` of a backend tool
/// through B, A, B (B's requests go to A, the session's owner, whose backend answers).
#[tokio::test]
async fn s100_gateway_session_opened_on_a_is_served_by_b() {
    let Some(url) = redis_url("s100_gateway_session_opened_on_a_is_served_by_b") else {
        return;
    };
    tokio::time::timeout(Duration::from_secs(60), async {
        let ((_a, a), (_b, b)) = two_gateways("s100", &url).await;
        let sid = open_session(&a).await;
        let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        let out = post(&b, &sid, initialized).await;
        assert!(out.starts_with("HTTP/1.1 202"), "{out}");
        for (i, node) in [&b, &a, &b].into_iter().enumerate() {
            let id = i as u64 + 2;
            let call = format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"demo_add","arguments":{{"a":{id},"b":1}}}}}}"#
            );
            let out = post(node, &sid, &call).await;
            assert!(out.starts_with("HTTP/1.1 200"), "{node}: {out}");
            let v = answer(&out, id);
            assert_eq!(v["result"]["content"][0]["text"], (id + 1).to_string(), "{out}");
        }
    })
    .await
    .unwrap();
}

/// A `tools/call` stream the client drops on gateway A (after its first event) resumes on
/// gateway B with `Last-Event-ID`, up to the call's result.
#[tokio::test]
async fn s101_gateway_stream_broken_on_a_resumes_on_b() {
    let Some(url) = redis_url("s101_gateway_stream_broken_on_a_resumes_on_b") else {
        return;
    };
    tokio::time::timeout(Duration::from_secs(60), async {
        let ((_a, a), (_b, b)) = two_gateways("s101-stream", &url).await;
        let sid = open_session(&a).await;
        post(&a, &sid, r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).await;
        let call = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"demo_slow_compute","arguments":{"seconds":1,"label":"resumed"}}}"#;
        // Read up to the first complete `id:` line, then drop the connection.
        let first_id = |out: &str| {
            out.lines()
                .find_map(|l| l.strip_prefix("id:"))
                .filter(|_| out.split("id:").nth(1).is_some_and(|r| r.contains('\n')))
                .map(|id| id.trim().to_owned())
        };
        let out = exchange_until(&a, "POST", &[("mcp-session-id", &sid)], call, |out| {
            first_id(out).is_some()
        })
        .await;
        assert!(out.starts_with("HTTP/1.1 200"), "{out}");
        assert!(!out.contains("resumed"), "{out}");
        let last = first_id(&out).unwrap_or_else(|| panic!("no event id in {out}"));
        let h = [
            ("mcp-session-id", sid.as_str()),
            ("accept", "text/event-stream"),
            ("last-event-id", last.as_str()),
        ];
        let out = exchange_until(&b, "GET", &h, "", |out| has_answer(out, 7)).await;
        assert!(out.starts_with("HTTP/1.1 200"), "{out}");
        let v = answer(&out, 7);
        let text = v["result"]["content"][0]["text"].as_str().unwrap_or_else(|| panic!("{v}"));
        assert!(text.contains("resumed"), "{v}");
    })
    .await
    .unwrap();
}

/// Whether `out` holds the whole line of the answer to `id`.
fn has_answer(out: &str, id: u64) -> bool {
    out.split('\n').rev().skip(1).any(|l| {
        serde_json::from_str::<Value>(l.strip_prefix("data:").unwrap_or(l).trim())
            .is_ok_and(|v| v["id"] == id)
    })
}

/// A task started through gateway A (a front task following the backend's task on A) is
/// polled on gateway B to its result.
#[tokio::test]
async fn s101_gateway_task_started_on_a_completes_on_b() {
    let Some(url) = redis_url("s101_gateway_task_started_on_a_completes_on_b") else {
        return;
    };
    tokio::time::timeout(Duration::from_secs(60), async {
        let ((_a, a), (_b, b)) = two_gateways("s101-task", &url).await;
        let sid = open_session(&a).await;
        post(&a, &sid, r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).await;
        let task_id = start_task(&a, &sid).await;
        let mut id = 10;
        loop {
            id += 1;
            let v = task_get(&b, &sid, &task_id, id).await;
            let status = v["result"]["status"].as_str().unwrap_or_else(|| panic!("{v}")).to_owned();
            if status == "completed" {
                break;
            }
            assert_eq!(status, "working", "{v}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let result = format!(
            r#"{{"jsonrpc":"2.0","id":99,"method":"tasks/result","params":{{"taskId":"{task_id}"}}}}"#
        );
        let out = post(&b, &sid, &result).await;
        let v = answer(&out, 99);
        let text = v["result"]["content"][0]["text"].as_str().unwrap_or_else(|| panic!("{out}"));
        assert!(text.contains("two-gateways"), "{out}");
    })
    .await
    .unwrap();
}

/// `demo_slow_compute` (1 s) as a task on `addr`: the task's id.
async fn start_task(addr: &str, sid: &str) -> String {
    let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"demo_slow_compute","arguments":{"seconds":1,"label":"two-gateways"},"task":{"ttl":60000}}}"#;
    let out = post(addr, sid, call).await;
    let created = answer(&out, 2);
    created["result"]["task"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("no task in {out}"))
        .to_owned()
}

async fn task_get(addr: &str, sid: &str, task_id: &str, id: u64) -> Value {
    let get = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tasks/get","params":{{"taskId":"{task_id}"}}}}"#
    );
    answer(&post(addr, sid, &get).await, id)
}

/// Gateway A dies while its task runs: the task is not left `working` forever on B. The
/// session (and the front task, which lives with it on its owner) ends: once A's heartbeat
/// lapses, B answers the session's requests 404, so the client initializes again, as
/// `ferromcp serve --redis` does.
#[tokio::test]
async fn s102_gateway_dying_with_a_task_ends_the_session_on_b() {
    let Some(url) = redis_url("s102_gateway_dying_with_a_task_ends_the_session_on_b") else {
        return;
    };
    tokio::time::timeout(Duration::from_secs(60), async {
        let ((mut a_child, a), (_b, b)) = two_gateways("s102", &url).await;
        let sid = open_session(&a).await;
        post(
            &a,
            &sid,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        )
        .await;
        let task_id = start_task(&a, &sid).await;
        assert_eq!(
            task_get(&b, &sid, &task_id, 3).await["result"]["status"],
            "working"
        );
        a_child.kill().await.unwrap();
        let get = format!(
            r#"{{"jsonrpc":"2.0","id":4,"method":"tasks/get","params":{{"taskId":"{task_id}"}}}}"#
        );
        let started = std::time::Instant::now();
        loop {
            let out = post(&b, &sid, &get).await;
            if out.starts_with("HTTP/1.1 404") {
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "still served: {out}"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    })
    .await
    .unwrap();
}
