//! `ferromcp serve --http ADDR`: the demo server over Streamable HTTP, end to end (MCP
//! 2026-07-28 and 2025-11-25 "Streamable HTTP"; the DNS-rebinding check of loopback binds).
#![allow(clippy::unwrap_used, clippy::panic)]

mod http_node;

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use http_node::start;

/// One request with `Connection: close`; returns the whole response as text.
async fn exchange(addr: &str, host: &str, headers: &[(&str, &str)], body: &str) -> String {
    let mut s = TcpStream::connect(addr).await.unwrap();
    let mut req = format!(
        "POST /mcp HTTP/1.1\r\nhost: {host}\r\nconnection: close\r\ncontent-type: application/json\r\n\
         accept: application/json, text/event-stream\r\ncontent-length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    req.push_str(body);
    s.write_all(req.as_bytes()).await.unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).await.unwrap();
    out
}

#[tokio::test]
async fn serves_both_eras_over_http() {
    tokio::time::timeout(Duration::from_secs(60), async {
        let (_child, addr) = start(&[]).await;
        let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
        let h = [
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", "add"),
        ];
        let out = exchange(&addr, &addr, &h, call).await;
        assert!(out.starts_with("HTTP/1.1 200"), "{out}");
        assert!(out.contains(r#""text":"5""#), "{out}");
        let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
        let out = exchange(&addr, &addr, &[], init).await;
        assert!(out.contains("mcp-session-id: "), "{out}");
        assert!(out.contains("text/event-stream"), "{out}");
        // A loopback bind refuses a foreign Host (DNS rebinding).
        let out = exchange(&addr, "evil.example", &[], init).await;
        assert!(out.starts_with("HTTP/1.1 421"), "{out}");
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn flags_are_applied() {
    tokio::time::timeout(Duration::from_secs(60), async {
        let (_child, addr) = start(&["--stateless", "--json-response", "--allowed-host", "mcp.test"]).await;
        let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}"#;
        let h = [("accept", "application/json")];
        let out = exchange(&addr, "mcp.test", &h, call).await;
        assert!(out.starts_with("HTTP/1.1 200"), "{out}");
        assert!(out.contains("application/json") && !out.contains("mcp-session-id"), "{out}");
        assert!(out.contains(r#""text":"hi""#), "{out}");
        let out = exchange(&addr, &addr, &h, call).await;
        assert!(out.starts_with("HTTP/1.1 421"), "{out}");
    })
    .await
    .unwrap();
}

/// A loopback port nothing listens on (bound and released).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `ferromcp serve --http ADDR` with its stderr's read end closed (writes fail with EPIPE).
fn spawn_with_closed_stderr(addr: &str) -> tokio::process::Child {
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_ferromcp"))
        .args(["serve", "--http", addr])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    drop(child.stderr.take());
    child
}

/// F42: the "serving at" banner goes through the stderr queue like the log lines (in order
/// with them, never blocking, F40), so a closed stderr drops it (F35): the server keeps
/// serving. Before, the banner's `eprintln!` panicked right after the bind and the process
/// ended (status 101).
#[tokio::test]
async fn f42_a_closed_stderr_does_not_stop_the_http_server() {
    tokio::time::timeout(Duration::from_secs(60), async {
        let addr = format!("127.0.0.1:{}", free_port());
        let mut child = spawn_with_closed_stderr(&addr);
        while TcpStream::connect(&addr).await.is_err() {
            assert!(child.try_wait().unwrap().is_none(), "the server ended");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        // The banner is written just after the bind.
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert_eq!(child.try_wait().unwrap(), None, "the server ended");
        let ping = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
        let h = [
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", "add"),
        ];
        let out = exchange(&addr, &addr, &h, ping).await;
        assert!(out.contains(r#""text":"5""#), "{out}");
    })
    .await
    .unwrap();
}

/// F42: a command's fatal error on a closed stderr is dropped, not a panic: the exit status
/// stays 1 (here the address is taken). Before, `eprintln!` panicked (status 101).
#[tokio::test]
async fn f42_a_fatal_error_on_a_closed_stderr_exits_with_status_1() {
    tokio::time::timeout(Duration::from_secs(60), async {
        let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = taken.local_addr().unwrap().to_string();
        let mut child = spawn_with_closed_stderr(&addr);
        let status = child.wait().await.unwrap();
        assert_eq!(status.code(), Some(1), "{status:?}");
    })
    .await
    .unwrap();
}
