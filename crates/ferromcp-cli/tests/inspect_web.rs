//! `ferromcp inspect --web` from outside the page, with plain HTTP requests: the token, Host
//! and Origin checks on every route (the event stream included), the loopback-only listen
//! address, the limits, the sandbox origin, and the API driving the demo server.

#![allow(clippy::panic)]

use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::process::{Child, Command};

#[path = "support/inspect_web.rs"]
mod support;
use support::{DEADLINE, encode, send, start};

/// Every route of the inspector, as (method, path).
const ROUTES: &[(&str, &str)] = &[
    ("GET", "/"),
    ("GET", "/index.html"),
    ("GET", "/assets/inspector.js"),
    ("GET", "/assets/apps-host.js"),
    ("GET", "/api/config"),
    ("GET", "/api/servers"),
    ("GET", "/api/log"),
    ("GET", "/api/events"),
    ("GET", "/nope"),
    ("POST", "/api/connect"),
    ("POST", "/api/request"),
    ("POST", "/api/answer"),
    ("POST", "/api/nope"),
];

/// S73: no token, a wrong token (header or query, even one character off) are 401 on every
/// route, the event stream included, and a refused connect starts nothing.
#[tokio::test]
async fn s73_every_route_needs_the_token() {
    tokio::time::timeout(DEADLINE, async {
        let i = start(&[]).await;
        let mut wrong = i.token.clone();
        let last = if wrong.ends_with('0') { "1" } else { "0" };
        wrong.replace_range(63.., last);
        let connect = json!({ "target": "sh -c 'touch /tmp/pwned'" }).to_string();
        for (method, path) in ROUTES {
            let json_type = ("Content-Type", "application/json");
            let body = if *method == "POST" {
                connect.as_str()
            } else {
                ""
            };
            let (s, _) = send(&i.addr, method, path, &[json_type], body).await;
            assert_eq!(s, 401, "{method} {path} without a token");
            let (s, _) = send(
                &i.addr,
                method,
                path,
                &[json_type, ("X-Inspector-Token", &wrong)],
                body,
            )
            .await;
            assert_eq!(s, 401, "{method} {path} with a wrong token");
            let q = format!("{path}?token={wrong}");
            let (s, _) = send(&i.addr, method, &q, &[json_type], body).await;
            assert_eq!(s, 401, "{method} {path} with a wrong query token");
            let (s, _) = send(
                &i.addr,
                method,
                &format!("{path}?token="),
                &[json_type],
                body,
            )
            .await;
            assert_eq!(s, 401, "{method} {path} with an empty token");
        }
        for path in ["/", "/assets/inspector.js", "/api/config", "/api/events"] {
            let (s, _) = send(
                &i.addr,
                "GET",
                &format!("{path}?token={}", i.token),
                &[],
                "",
            )
            .await;
            assert_eq!(s, 200, "GET {path} with the token in the query");
            let (s, _) = i.get(path).await;
            assert_eq!(s, 200, "GET {path} with the token in the header");
        }
        let (_, servers) = i.get("/api/servers").await;
        assert_eq!(
            serde_json::from_str::<Value>(&servers).ok(),
            Some(json!({ "servers": [] }))
        );
        assert!(!i.log().await.iter().any(|e| e["kind"] == "connected"));
    })
    .await
    .expect("within the deadline");
}

/// S74: a Host that is not the inspector's own address (DNS rebinding) is 421 on every
/// route, even with the right token; 127.0.0.1:PORT and localhost:PORT pass.
#[tokio::test]
async fn s74_a_foreign_host_is_refused() {
    tokio::time::timeout(DEADLINE, async {
        let i = start(&[]).await;
        let port = i.addr.rsplit(':').next().unwrap_or_default().to_owned();
        let evil = format!("evil.example:{port}");
        let other_port = "127.0.0.1:1";
        for (method, path) in ROUTES {
            for host in [evil.as_str(), other_port, "evil.example", ""] {
                let headers = [
                    ("Host", host),
                    ("X-Inspector-Token", &i.token),
                    ("Content-Type", "application/json"),
                ];
                let (s, _) = send(&i.addr, method, path, &headers, "{}").await;
                assert_eq!(s, 421, "{method} {path} with Host {host:?}");
            }
        }
        let localhost = format!("localhost:{port}");
        let (s, _) = send(
            &i.addr,
            "GET",
            "/api/config",
            &[("Host", &localhost), ("X-Inspector-Token", &i.token)],
            "",
        )
        .await;
        assert_eq!(s, 200);
    })
    .await
    .expect("within the deadline");
}

/// S75: a cross-site Origin (another site, `null`, another port) is 403 on every route, even
/// with the right token; the page's own origin passes; a POST that is not JSON is 415.
#[tokio::test]
async fn s75_a_cross_site_origin_is_refused() {
    tokio::time::timeout(DEADLINE, async {
        let i = start(&[]).await;
        let own = format!("http://{}", i.addr);
        for (method, path) in ROUTES {
            for origin in [
                "http://evil.example",
                "null",
                "http://127.0.0.1:1",
                "https://127.0.0.1",
            ] {
                let headers = [
                    ("Origin", origin),
                    ("X-Inspector-Token", &i.token),
                    ("Content-Type", "application/json"),
                ];
                let (s, _) = send(&i.addr, method, path, &headers, "{}").await;
                assert_eq!(s, 403, "{method} {path} with Origin {origin}");
            }
        }
        let (s, _) = send(
            &i.addr,
            "GET",
            "/api/config",
            &[("Origin", &own), ("X-Inspector-Token", &i.token)],
            "",
        )
        .await;
        assert_eq!(s, 200);
        let form = [
            ("X-Inspector-Token", i.token.as_str()),
            ("Content-Type", "text/plain"),
        ];
        let (s, _) = send(&i.addr, "POST", "/api/connect", &form, r#"{"target":"sh"}"#).await;
        assert_eq!(s, 415);
    })
    .await
    .expect("within the deadline");
}

/// S76: `--listen` or `--sandbox-listen` on a non-loopback address is refused (status 1, no
/// URL) unless `--allow-non-loopback` is given.
#[tokio::test]
async fn s76_non_loopback_listen_needs_the_explicit_flag() {
    tokio::time::timeout(DEADLINE, async {
        let bin = env!("CARGO_BIN_EXE_ferromcp");
        for args in [
            &["--listen", "0.0.0.0:0"][..],
            &["--listen", "[::]:0"][..],
            &["--sandbox-listen", "0.0.0.0:0"][..],
        ] {
            let out = Command::new(bin)
                .args(["inspect", "--web", "--no-open"])
                .args(args)
                .kill_on_drop(true)
                .output()
                .await
                .expect("runs");
            assert_eq!(out.status.code(), Some(1), "{args:?}");
            assert!(out.stdout.is_empty(), "{args:?}");
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(err.contains("--allow-non-loopback"), "{err}");
        }
        let i = start(&["--allow-non-loopback", "--sandbox-listen", "0.0.0.0:0"]).await;
        let (s, config) = i.get("/api/config").await;
        assert_eq!(s, 200, "{config}");
    })
    .await
    .expect("within the deadline");
}

/// S77: the limits: the body size (413), the servers connected at once (429), the events kept
/// for replay, the event streams open at once (429), and the server→client requests waiting
/// for the user (a request beyond is refused, the server gets an error).
#[tokio::test]
async fn s77_the_limits_hold() {
    tokio::time::timeout(Duration::from_secs(90), async {
        let i = start(&[
            "--max-body",
            "1000",
            "--max-servers",
            "1",
            "--event-buffer",
            "5",
            "--max-pending",
            "1",
        ])
        .await;
        let big = json!({ "target": "x".repeat(2000) });
        let (s, _) = i.post("/api/connect", big).await;
        assert_eq!(s, 413);
        let (s, first) = i.connect_demo("2025-11-25").await;
        assert_eq!(s, 200, "{first}");
        let (s, second) = i.connect_demo("auto").await;
        assert_eq!(s, 429, "{second}");
        assert!(i.log().await.len() <= 5);
        // Two elicitations at once with --max-pending 1: the second is refused.
        let server = first["server"]["id"].as_u64().expect("an id");
        let call = |n: &str| {
            json!({ "server": server, "method": "tools/call", "callId": n,
                    "params": { "name": "test_elicitation", "arguments": { "message": n } } })
        };
        let a = i.post("/api/request", call("a"));
        let waiting = async {
            let id = i.pending("elicitation", 0).await;
            let refused = i.post("/api/request", call("b")).await;
            let answered = i
                .post(
                    "/api/answer",
                    json!({ "id": id, "result": { "action": "decline" } }),
                )
                .await;
            (refused, answered)
        };
        let ((sa, ra), ((sb, rb), (s_ans, _))) = tokio::join!(a, waiting);
        assert_eq!((sa, sb, s_ans), (200, 200, 200));
        assert!(ra.to_string().contains("action=decline"), "{ra}");
        assert!(rb.to_string().contains("too many requests waiting"), "{rb}");
        // Event streams: DEFAULT_MAX_EVENT_STREAMS (8) at once, the 9th is 429.
        let mut open = Vec::new();
        for _ in 0..8 {
            let mut s = TcpStream::connect(&i.addr).await.expect("connect");
            let head = format!(
                "GET /api/events?token={} HTTP/1.1\r\nHost: {}\r\n\r\n",
                i.token, i.addr
            );
            s.write_all(head.as_bytes()).await.expect("write");
            let mut buf = [0u8; 64];
            let n = s.read(&mut buf).await.expect("read");
            assert!(String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 200"));
            open.push(s);
        }
        let (s, _) = i.get("/api/events").await;
        assert_eq!(s, 429);
        drop(open);
    })
    .await
    .expect("within the deadline");
}

/// S78: the API drives the demo server in both eras: connect a stdio command, call a tool,
/// answer an elicitation (a multi-round call at 2026-07-28), cancel a running call, set
/// roots, disconnect; every message is in the log with its direction and duration.
#[tokio::test]
async fn s78_the_api_drives_a_server_in_both_eras() {
    tokio::time::timeout(Duration::from_secs(90), async {
        let i = start(&[]).await;
        for (n, protocol) in ["2026-07-28", "2025-11-25"].into_iter().enumerate() {
            let (s, c) = i.connect_demo(protocol).await;
            assert_eq!(s, 200, "{c}");
            let era = if n == 0 { "modern" } else { "handshake" };
            assert_eq!(c["server"]["era"], era);
            let server = c["server"]["id"].as_u64().expect("an id");
            let (s, r) = i
                .post(
                    "/api/request",
                    json!({ "server": server, "method": "tools/call",
                    "params": { "name": "add", "arguments": { "a": 2, "b": 40 } } }),
                )
                .await;
            assert_eq!(s, 200);
            assert_eq!(r["result"]["content"][0]["text"], "42", "{r}");
            let call = i.post(
                "/api/request",
                json!({ "server": server, "method": "tools/call", "callId": "e",
                "params": { "name": "test_elicitation", "arguments": { "message": "sign up" } } }),
            );
            let answer = async {
                let id = i.pending("elicitation", n).await;
                i.post(
                    "/api/answer",
                    json!({ "id": id, "result": { "action": "accept",
                    "content": { "username": "ada", "email": "ada@example.com" } } }),
                )
                .await
            };
            let ((_, r), (s, _)) = tokio::join!(call, answer);
            assert_eq!(s, 200);
            assert!(r.to_string().contains("ada@example.com"), "{r}");
            // Cancel a countdown.
            let slow = i.post(
                "/api/request",
                json!({ "server": server, "method": "tools/call", "callId": "slow",
                "params": { "name": "countdown", "arguments": { "seconds": 30 } } }),
            );
            let cancel = async {
                tokio::time::sleep(Duration::from_millis(500)).await;
                i.post("/api/cancel", json!({ "callId": "slow" })).await
            };
            let ((_, r), (_, c)) = tokio::join!(slow, cancel);
            assert_eq!(c["cancelled"], true);
            assert_eq!(r["cancelled"], true);
            let (s, _) = i
                .post("/api/roots", json!({ "roots": [{ "uri": "file:///tmp" }] }))
                .await;
            assert_eq!(s, 200);
            let (s, _) = i.post("/api/disconnect", json!({ "server": server })).await;
            assert_eq!(s, 200);
        }
        let log = i.log().await;
        let has = |dir: &str, kind: &str, method: &str| {
            log.iter()
                .any(|e| e["dir"] == dir && e["type"] == kind && e["method"] == method)
        };
        assert!(has("out", "request", "tools/call"));
        assert!(has("in", "response", "tools/call"));
        assert!(
            has("in", "request", "elicitation/create"),
            "the handshake era's elicitation"
        );
        assert!(has("out", "response", "elicitation/create"));
        assert!(has("out", "notification", "notifications/cancelled"));
        assert!(log.iter().any(|e| e["durationMs"].as_f64().is_some()));
    })
    .await
    .expect("within the deadline");
}

/// S79: the MCP Apps sandbox is another origin (another loopback port, told in the config),
/// serving its page only to its own Host and only to GET; the page's CSP frames only it, and
/// the page sends no Referer (the token is in its URL).
#[tokio::test]
async fn s79_the_sandbox_origin_is_separate_and_host_checked() {
    tokio::time::timeout(DEADLINE, async {
        let i = start(&[]).await;
        let (_, config) = i.get("/api/config").await;
        let config: Value = serde_json::from_str(&config).expect("JSON");
        let origin = config["sandboxOrigin"]
            .as_str()
            .expect("a sandbox origin")
            .to_owned();
        let sandbox = origin.strip_prefix("http://").expect("http").to_owned();
        assert_ne!(sandbox, i.addr);
        let page_path = format!("/sandbox.html?host={}", encode(&i.origin()));
        let (s, page) = send(&sandbox, "GET", &page_path, &[], "").await;
        assert_eq!(s, 200);
        assert!(page.contains("<html"), "{page}");
        let (s, _) = send(&sandbox, "GET", &page_path, &[("Host", "evil.example")], "").await;
        assert_eq!(s, 421);
        let (s, _) = send(&sandbox, "POST", &page_path, &[], "{}").await;
        assert_eq!(s, 405);
        let mut stream = TcpStream::connect(&i.addr).await.expect("connect");
        let head = format!(
            "GET /?token={} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
            i.token, i.addr
        );
        stream.write_all(head.as_bytes()).await.expect("write");
        let mut raw = String::new();
        stream.read_to_string(&mut raw).await.expect("read");
        let head = raw
            .split("\r\n\r\n")
            .next()
            .unwrap_or_default()
            .to_ascii_lowercase();
        assert!(head.contains(&format!("frame-src {origin}")), "{head}");
        assert!(head.contains("frame-ancestors 'none'"), "{head}");
        assert!(head.contains("script-src 'self'"), "{head}");
        assert!(head.contains("referrer-policy: no-referrer"), "{head}");
    })
    .await
    .expect("within the deadline");
}

/// S73 (the one route without the token): OAuth in the browser. The authorization URL is
/// shown in the page; the authorization server's redirect to `/oauth/callback` finishes the
/// flow only with the `state` of a waiting flow, once, and only under the inspector's Host.
#[tokio::test]
async fn s73_the_oauth_callback_needs_a_waiting_flows_state() {
    tokio::time::timeout(Duration::from_secs(90), async {
        let (_server, server_addr) = serve_with_auth().await;
        let i = start(&[]).await;
        let connect = i.post(
            "/api/connect",
            json!({ "target": format!("http://{server_addr}/mcp"), "oauth": true }),
        );
        let sign_in = async {
            let url = loop {
                let found = i.log().await.into_iter().find(|e| e["kind"] == "oauth");
                if let Some(e) = found {
                    break e["url"].as_str().expect("a URL").to_owned();
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            };
            // The browser's step: the authorization server redirects at once.
            let rest = url.strip_prefix("http://").expect("http");
            let (host, path) = rest.split_once('/').expect("a path");
            let (status, head) = send_head(host, &format!("/{path}")).await;
            assert!((300..400).contains(&status), "{head}");
            let location = head
                .lines()
                .find_map(|l| {
                    l.strip_prefix("location: ")
                        .or_else(|| l.strip_prefix("Location: "))
                })
                .expect("a Location")
                .trim()
                .to_owned();
            let callback = location
                .strip_prefix(&format!("http://{}", i.addr))
                .expect("our callback");
            assert!(callback.starts_with("/oauth/callback?"), "{callback}");
            let (s, _) = send(
                &i.addr,
                "GET",
                "/oauth/callback?code=x&state=forged",
                &[],
                "",
            )
            .await;
            assert_eq!(s, 400, "a state no flow waits under");
            let (s, _) = send(&i.addr, "GET", callback, &[("Host", "evil.example")], "").await;
            assert_eq!(s, 421, "a foreign Host");
            let (s, _) = send(
                &i.addr,
                "GET",
                callback,
                &[("Origin", "http://evil.example")],
                "",
            )
            .await;
            assert_eq!(s, 403, "a cross-site Origin");
            let (s, page) = send(&i.addr, "GET", callback, &[], "").await;
            assert_eq!(s, 200, "{page}");
            let (s, _) = send(&i.addr, "GET", callback, &[], "").await;
            assert_eq!(s, 400, "once");
        };
        let ((s, c), ()) = tokio::join!(connect, sign_in);
        assert_eq!(s, 200, "{c}");
        let server = c["server"]["id"].as_u64().expect("an id");
        let (_, r) = i
            .post(
                "/api/request",
                json!({ "server": server, "method": "tools/call",
                "params": { "name": "add", "arguments": { "a": 1, "b": 2 } } }),
            )
            .await;
        assert_eq!(r["result"]["content"][0]["text"], "3", "{r}");
    })
    .await
    .expect("within the deadline");
}

/// The status and head of a GET (redirects not followed).
async fn send_head(addr: &str, path: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    let head = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    stream.write_all(head.as_bytes()).await.expect("write");
    let mut raw = String::new();
    tokio::time::timeout(DEADLINE, stream.read_to_string(&mut raw))
        .await
        .expect("in time")
        .expect("read");
    let head = raw.split("\r\n\r\n").next().unwrap_or_default().to_owned();
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, head)
}

/// `ferromcp serve --http 127.0.0.1:0 --auth` (its authorization server approves every
/// request at once); the child (killed when dropped) and `HOST:PORT`.
async fn serve_with_auth() -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ferromcp"))
        .args(["serve", "--http", "127.0.0.1:0", "--auth"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("ferromcp serve starts");
    let stderr = child.stderr.take().expect("piped stderr");
    let line = BufReader::new(stderr)
        .lines()
        .next_line()
        .await
        .expect("reading stderr")
        .expect("a first line");
    let addr = line
        .split("http://")
        .nth(1)
        .and_then(|s| s.split_once("/mcp"))
        .map(|(a, _)| a.to_owned())
        .unwrap_or_else(|| panic!("no address in {line:?}"));
    (child, addr)
}
