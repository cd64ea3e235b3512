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
