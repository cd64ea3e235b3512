//! Server processes that die under ferromcp's client (F14 and the stdio child of the F-list,
//! `docs/requirements.md`): the real `ferromcp serve` killed with SIGKILL mid-request over
//! Streamable HTTP and over stdio, and a stdio child that exits on its own mid-request. The
//! pending call must fail promptly with a clear error (never hang), and so must later calls.
//!
//! Spec: 2025-11-25 "basic/lifecycle" §Shutdown, §Timeouts; 2026-07-28 "basic/transports/stdio"
//! (a server that exits unexpectedly).
// Unix only: the servers are killed with SIGKILL and one stdio child is an `sh` script.
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::panic)]

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ferromcp_client::{Client, HttpTransport, StderrMode, StdioTransport};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

const LIMIT: Duration = Duration::from_secs(30);

/// How long a failure may take to surface after the server died (generous: a loaded machine).
const PROMPT: Duration = Duration::from_secs(5);

async fn within<F: std::future::Future>(f: F) -> F::Output {
    match tokio::time::timeout(LIMIT, f).await {
        Ok(v) => v,
        Err(_) => panic!("timed out after {LIMIT:?}"),
    }
}

fn signal(pid: &str, sig: &str) {
    let status = std::process::Command::new("kill")
        .args([sig, pid])
        .status()
        .unwrap();
    assert!(status.success(), "kill {sig} {pid}");
}

/// Starts a 30-second countdown, lets it run, calls `kill`, and checks that the call fails
/// within [`PROMPT`] with a non-empty error, and that a later call fails too.
async fn call_then_kill(client: Client, kill: impl FnOnce()) {
    let client = Arc::new(client);
    let c = client.clone();
    let pending =
        tokio::spawn(async move { c.call_tool("countdown", json!({"seconds": 30})).await });
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!pending.is_finished(), "the countdown ended early");
    let killed = Instant::now();
    kill();
    let outcome = tokio::time::timeout(PROMPT, pending)
        .await
        .expect("the pending call hung after the server died")
        .unwrap();
    let err = outcome.expect_err("a call to a dead server succeeded");
    eprintln!("pending call: {err} after {:?}", killed.elapsed());
    assert!(!err.to_string().is_empty());
    let later = tokio::time::timeout(PROMPT, client.call_tool("add", json!({"a": 1, "b": 2})))
        .await
        .expect("a later call hung");
    let err = later.expect_err("a call to a dead server succeeded");
    eprintln!("later call: {err}");
}

/// F14: `ferromcp serve --http` killed with SIGKILL mid-request.
#[tokio::test]
async fn f14_http_server_killed_mid_request_fails_the_call_promptly() {
    within(async {
        let mut child = Command::new(env!("CARGO_BIN_EXE_ferromcp"))
            .args(["serve", "--http", "127.0.0.1:0"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let line = lines.next_line().await.unwrap().unwrap();
        let url = format!(
            "http://{}",
            line.split("http://")
                .nth(1)
                .unwrap_or_else(|| panic!("{line}"))
        );
        let client = Client::builder()
            .connect(HttpTransport::new(&url).unwrap())
            .await
            .unwrap();
        let pid = child.id().unwrap().to_string();
        call_then_kill(client, || signal(&pid, "-KILL")).await;
        let _ = child.wait().await;
    })
    .await;
}

/// A stdio client of `ferromcp serve` started through `sh`, which reports its pid on stderr
/// before becoming the server.
async fn stdio_client() -> (Client, String) {
    let lines: Arc<Mutex<Vec<String>>> = Arc::default();
    let l = lines.clone();
    let transport = StdioTransport::new("sh")
        .arg("-c")
        .arg(format!(
            "echo $$ >&2; exec '{}' serve",
            env!("CARGO_BIN_EXE_ferromcp")
        ))
        .stderr(StderrMode::Lines(Arc::new(move |line: &str| {
            l.lock().unwrap().push(line.to_owned());
        })));
    let client = Client::builder().connect(transport).await.unwrap();
    for _ in 0..200 {
        if let Some(pid) = lines.lock().unwrap().first().cloned() {
            return (client, pid);
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the child did not report its pid");
}

/// F14: the stdio server killed with SIGKILL mid-request.
#[tokio::test]
async fn f14_stdio_server_killed_mid_request_fails_the_call_promptly() {
    within(async {
        let (client, pid) = stdio_client().await;
        call_then_kill(client, || signal(&pid, "-KILL")).await;
    })
    .await;
}

/// CL-H07 (F12, client side): the stdio child exits on its own (SIGTERM) mid-request.
#[tokio::test]
async fn stdio_child_exiting_mid_request_fails_the_call_promptly() {
    within(async {
        let (client, pid) = stdio_client().await;
        call_then_kill(client, || signal(&pid, "-TERM")).await;
    })
    .await;
}
