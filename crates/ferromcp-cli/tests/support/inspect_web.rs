//! Helpers of the web inspector's tests: start `ferromcp inspect --web`, send plain HTTP/1.1
//! requests to it.

#![allow(dead_code, clippy::panic)]

use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::process::{Child, Command};

pub(crate) const DEADLINE: Duration = Duration::from_secs(60);

/// A running inspector: the child (killed when dropped), `HOST:PORT` and the token.
pub(crate) struct Inspector {
    _child: Child,
    pub(crate) addr: String,
    pub(crate) token: String,
}

pub(crate) async fn start(extra: &[&str]) -> Inspector {
    let listen: &[&str] = if extra.contains(&"--listen") {
        &[]
    } else {
        &["--listen", "127.0.0.1:0"]
    };
    let mut child = Command::new(env!("CARGO_BIN_EXE_ferromcp"))
        .args(["inspect", "--web", "--no-open"])
        .args(listen)
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("ferromcp inspect --web starts");
    let stdout = child.stdout.take().expect("piped stdout");
    let line = tokio::time::timeout(Duration::from_secs(20), async {
        BufReader::new(stdout).lines().next_line().await
    })
    .await
    .expect("the URL within 20 s")
    .expect("reading stdout")
    .expect("a first line on stdout");
    let rest = line.strip_prefix("http://").expect("an http:// URL");
    let (addr, token) = rest.split_once("/?token=").expect("HOST:PORT/?token=T");
    assert_eq!(token.len(), 64, "{line}");
    Inspector {
        _child: child,
        addr: addr.to_owned(),
        token: token.to_owned(),
    }
}

/// One HTTP/1.1 request to `addr`; `headers` may set Host (default: `addr`).
pub(crate) async fn send(
    addr: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String) {
    let mut head = format!("{method} {path} HTTP/1.1\r\n");
    if !headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("host")) {
        head.push_str(&format!("Host: {addr}\r\n"));
    }
    for (n, v) in headers {
        head.push_str(&format!("{n}: {v}\r\n"));
    }
    head.push_str(&format!(
        "Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    ));
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    stream.write_all(head.as_bytes()).await.expect("write");
    stream.write_all(body.as_bytes()).await.expect("write body");
    let mut raw = Vec::new();
    if path.starts_with("/api/events") {
        // A stream: the head is enough.
        let mut buf = [0u8; 4096];
        while !raw.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = tokio::time::timeout(DEADLINE, stream.read(&mut buf))
                .await
                .expect("an answer in time")
                .expect("read");
            if n == 0 {
                break;
            }
            raw.extend_from_slice(&buf[..n]);
        }
    } else {
        tokio::time::timeout(DEADLINE, stream.read_to_end(&mut raw))
            .await
            .expect("an answer in time")
            .expect("read");
    }
    let text = String::from_utf8_lossy(&raw).into_owned();
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status in {text:?}"));
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_owned())
        .unwrap_or_default();
    (status, body)
}

/// `%XX`-encodes everything but unreserved characters (for a query value).
pub(crate) fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// One GET to `addr` with `Host: host`; the status and the lower-cased head, and the body.
pub(crate) async fn get_head(addr: &str, path: &str, host: &str) -> (u16, String, String) {
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    let head = format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
    stream.write_all(head.as_bytes()).await.expect("write");
    let mut raw = String::new();
    tokio::time::timeout(DEADLINE, stream.read_to_string(&mut raw))
        .await
        .expect("an answer in time")
        .expect("read");
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((&raw, ""));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status in {raw:?}"));
    (status, head.to_ascii_lowercase(), body.to_owned())
}

impl Inspector {
    /// The page's origin.
    pub(crate) fn origin(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The sandbox listener's `HOST:PORT` (from the config).
    pub(crate) async fn sandbox(&self) -> String {
        let (_, config) = self.get("/api/config").await;
        let config: Value = serde_json::from_str(&config).expect("JSON");
        let origin = config["sandboxOrigin"].as_str().expect("a sandbox origin");
        origin.strip_prefix("http://").expect("http").to_owned()
    }

    pub(crate) async fn get(&self, path: &str) -> (u16, String) {
        send(
            &self.addr,
            "GET",
            path,
            &[("X-Inspector-Token", &self.token)],
            "",
        )
        .await
    }

    pub(crate) async fn post(&self, path: &str, body: Value) -> (u16, Value) {
        let headers = [
            ("X-Inspector-Token", self.token.as_str()),
            ("Content-Type", "application/json"),
        ];
        let (status, text) = send(&self.addr, "POST", path, &headers, &body.to_string()).await;
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    pub(crate) async fn connect_demo(&self, protocol: &str) -> (u16, Value) {
        let demo = format!("\"{}\" serve", env!("CARGO_BIN_EXE_ferromcp"));
        self.post(
            "/api/connect",
            json!({ "target": demo, "protocol": protocol }),
        )
        .await
    }

    pub(crate) async fn log(&self) -> Vec<Value> {
        let (status, text) = self.get("/api/log").await;
        assert_eq!(status, 200, "{text}");
        serde_json::from_str(&text).expect("the log is JSON")
    }

    /// Waits for a pending request of `kind`; its id.
    pub(crate) async fn pending(&self, kind: &str, skip: usize) -> u64 {
        for _ in 0..200 {
            let ids: Vec<u64> = self
                .log()
                .await
                .iter()
                .filter(|e| e["kind"] == "pending" && e["request"] == kind)
                .filter_map(|e| e["id"].as_u64())
                .collect();
            if let Some(id) = ids.get(skip) {
                return *id;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("no pending {kind}");
    }
}
