//! `ferromcp serve --http ADDR --auth` with `ferromcp inspect URL --oauth`: the demo server
//! behind the embedded OAuth 2.1 authorization server, and the CLI's client completing the
//! flow headlessly (MCP 2025-11-25 Authorization: 401 → RFC 9728 → RFC 8414 → RFC 7591 →
//! PKCE code flow → bearer token).
#![allow(clippy::unwrap_used, clippy::panic)]

use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::process::{Child, Command};

const LIMIT: Duration = Duration::from_secs(120);

/// Starts `ferromcp serve --http 127.0.0.1:0 --auth`: the child and the MCP URL.
async fn start() -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ferromcp"))
        .args(["serve", "--http", "127.0.0.1:0", "--auth"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let line = lines.next_line().await.unwrap().unwrap();
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://") && w.ends_with("/mcp"))
        .unwrap_or_else(|| panic!("no MCP URL in {line:?}"))
        .to_owned();
    // Keep reading stderr so the server never blocks on a full pipe.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    (child, url)
}

async fn cli(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ferromcp"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .await
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The MCP endpoint answers an unauthenticated POST with 401 and a challenge naming its
/// RFC 9728 metadata, which names the embedded authorization server.
#[tokio::test]
async fn serve_auth_challenges_and_publishes_metadata() {
    tokio::time::timeout(LIMIT, async {
        let (_child, url) = start().await;
        let addr = url
            .trim_start_matches("http://")
            .trim_end_matches("/mcp")
            .to_owned();
        let mut s = TcpStream::connect(&addr).await.unwrap();
        let body = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
        let req = format!(
            "POST /mcp HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\ncontent-type: \
             application/json\r\naccept: application/json, text/event-stream\r\n\
             content-length: {}\r\n\r\n{body}",
            body.len()
        );
        s.write_all(req.as_bytes()).await.unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).await.unwrap();
        assert!(out.starts_with("HTTP/1.1 401"), "{out}");
        assert!(
            out.to_ascii_lowercase()
                .contains("www-authenticate: bearer resource_metadata="),
            "{out}"
        );

        let mut s = TcpStream::connect(&addr).await.unwrap();
        let req = format!(
            "GET /.well-known/oauth-authorization-server HTTP/1.1\r\nhost: {addr}\r\n\
             connection: close\r\n\r\n"
        );
        s.write_all(req.as_bytes()).await.unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).await.unwrap();
        assert!(out.starts_with("HTTP/1.1 200"), "{out}");
        assert!(
            out.contains(r#""code_challenge_methods_supported":["S256"]"#),
            "{out}"
        );
    })
    .await
    .unwrap();
}

/// Issue 12 "one command": `inspect URL --oauth` completes the flow headlessly and lists
/// the demo's tools; without `--oauth` the same command fails on the 401.
#[tokio::test]
async fn inspect_oauth_completes_the_flow_and_lists_tools() {
    tokio::time::timeout(LIMIT, async {
        let (_child, url) = start().await;
        let (ok, out, err) = cli(&["inspect", &url, "--oauth", "--json"]).await;
        assert!(ok, "stdout: {out}\nstderr: {err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        let tools = v["tools"].as_array().unwrap();
        assert!(tools.iter().any(|t| t["name"] == "add"), "{out}");

        let (ok, out, _) = cli(&["tool", &url, "add", r#"{"a":2,"b":3}"#, "--oauth"]).await;
        assert!(ok, "{out}");
        assert!(out.contains('5'), "{out}");

        let (ok, _, err) = cli(&["tools", &url]).await;
        assert!(!ok, "no token, no tools");
        assert!(
            err.contains("401") || err.to_lowercase().contains("unauthorized"),
            "{err}"
        );

        // The headless authorization server never listens beyond loopback.
        let (ok, _, err) = cli(&["serve", "--http", "0.0.0.0:0", "--auth"]).await;
        assert!(!ok);
        assert!(err.contains("loopback"), "{err}");

        let (ok, _, err) = cli(&["tools", "ferromcp serve", "--oauth"]).await;
        assert!(!ok);
        assert!(err.contains("--oauth applies to http"), "{err}");
    })
    .await
    .unwrap();
}
