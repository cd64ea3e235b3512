//! `ferromcp gateway`'s audit log (issue 23 point 3: "an audit log line per call"): a call the
//! client cancels still gets its line, with `outcome=cancelled`.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::Command;
use tokio::time::timeout;

const DEADLINE: Duration = Duration::from_secs(30);

/// C69: a `tools/call` cancelled by the front client (`notifications/cancelled`, MCP
/// 2025-11-25 basic/utilities/cancellation) is audited with `outcome=cancelled` and its
/// duration, and the gateway goes on serving: the next call gets its answer and its own line.
#[tokio::test]
async fn c69_a_cancelled_call_gets_its_audit_line() {
    let path = std::env::temp_dir().join(format!(
        "ferromcp-gateway-audit-{}.toml",
        std::process::id()
    ));
    std::fs::write(
        &path,
        format!(
            "[servers.demo]\ncommand = {:?}\nargs = [\"serve\"]\nlifecycle = \"handshake\"\n",
            env!("CARGO_BIN_EXE_ferromcp")
        ),
    )
    .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_ferromcp"))
        .arg("gateway")
        .arg(&path)
        .env("FERROMCP_LOG_BUFFER", "0")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut err = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut send = async |v: Value| {
        stdin.write_all(format!("{v}\n").as_bytes()).await.unwrap();
        stdin.flush().await.unwrap();
    };
    let exchange = async {
        send(
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}}),
        )
        .await;
        send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
        // The backend's tools are listed once it has started.
        loop {
            send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})).await;
            let listed = loop {
                let v: Value =
                    serde_json::from_str(&out.next_line().await.unwrap().unwrap()).unwrap();
                if v["id"] == 2 {
                    break v;
                }
            };
            let tools = listed["result"]["tools"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            if tools.iter().any(|t| t["name"] == "demo_countdown") {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        send(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": "demo_countdown", "arguments": {"seconds": 30}}}))
        .await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        send(
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": 3, "reason": "test"}}),
        )
        .await;
        let audit = loop {
            let line = err.next_line().await.unwrap().expect("stderr open");
            if line.contains(" audit ") {
                break line;
            }
        };
        send(json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
            "params": {"name": "demo_add", "arguments": {"a": 1, "b": 2}}}))
        .await;
        let next = loop {
            let v: Value = serde_json::from_str(&out.next_line().await.unwrap().unwrap()).unwrap();
            // The cancelled call is not answered (cancellation: no response).
            assert_ne!(v["id"], 3, "{v}");
            if v["id"] == 4 {
                break v;
            }
        };
        let next_audit = loop {
            let line = err.next_line().await.unwrap().expect("stderr open");
            if line.contains(" audit ") {
                break line;
            }
        };
        (audit, next, next_audit)
    };
    let (audit, next, next_audit) = timeout(DEADLINE, exchange).await.expect("in time");
    assert!(
        audit.contains("who=stdio backend=demo tool=demo_countdown outcome=cancelled duration_ms="),
        "{audit}"
    );
    let ms: u64 = audit
        .rsplit("duration_ms=")
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!((250..30_000).contains(&ms), "{audit}");
    assert_eq!(next["result"]["content"][0]["text"], "3", "{next}");
    assert!(
        next_audit.contains("tool=demo_add outcome=ok"),
        "{next_audit}"
    );
    let _ = std::fs::remove_file(path);
}
