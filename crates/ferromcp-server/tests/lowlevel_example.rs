//! Issue "Server kernel", done-when: the small example server built on the low-level `Server`
//! (examples/lowlevel_stdio.rs) runs over stdio and answers a handshake-era client and a
//! modern-era client (MCP "Transports › stdio", "Lifecycle", 2026-07-28 stateless requests).
#![allow(clippy::unwrap_used, clippy::panic)]

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// `cargo test` (without target filters) builds the package's examples next to the test
/// binaries' directory; run the whole package's tests, not this file alone, on a fresh target.
fn example() -> PathBuf {
    let deps = std::env::current_exe()
        .unwrap()
        .parent()
        .unwrap()
        .to_path_buf();
    deps.parent()
        .unwrap()
        .join("examples")
        .join(format!("lowlevel_stdio{}", std::env::consts::EXE_SUFFIX))
}

/// Runs the example with `lines` on stdin and returns what it wrote on stdout, one JSON value
/// per line.
fn exchange(lines: &[Value]) -> Vec<Value> {
    let mut child = Command::new(example())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("{}: {e}", example().display()));
    let mut stdin = child.stdin.take().unwrap();
    for line in lines {
        writeln!(stdin, "{line}").unwrap();
    }
    drop(stdin);
    let deadline = Instant::now() + Duration::from_secs(20);
    let out: Vec<Value> = BufReader::new(child.stdout.take().unwrap())
        .lines()
        .map(|l| serde_json::from_str(&l.unwrap()).unwrap())
        .collect();
    while child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "the example did not exit");
        std::thread::sleep(Duration::from_millis(20));
    }
    out
}

fn by_id(out: &[Value], id: i64) -> &Value {
    out.iter()
        .find(|m| m["id"] == id)
        .unwrap_or_else(|| panic!("no answer to {id}: {out:?}"))
}

#[test]
fn answers_a_handshake_era_client() {
    let out = exchange(&[
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
               "params": {"name": "shout", "arguments": {"text": "hi"}}}),
    ]);
    assert_eq!(by_id(&out, 1)["result"]["protocolVersion"], "2025-06-18");
    assert_eq!(by_id(&out, 2)["result"]["content"][0]["text"], "HI");
}

#[test]
fn answers_a_modern_era_client() {
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities": {}});
    let out = exchange(&[
        json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta}}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
               "params": {"name": "shout", "arguments": {"text": "hi"}, "_meta": meta}}),
    ]);
    assert_eq!(
        by_id(&out, 1)["result"]["supportedVersions"],
        json!(["2026-07-28"])
    );
    let call = &by_id(&out, 2)["result"];
    assert_eq!(
        (&call["content"][0]["text"], &call["resultType"]),
        (&json!("HI"), &json!("complete"))
    );
}
