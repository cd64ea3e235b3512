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
