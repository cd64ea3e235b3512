//! `ferromcp serve --http` and `ferromcp gateway --http` as OAuth 2.1 resource servers of an
//! external authorization server (`--auth-issuer`, `--auth-jwks`, `--auth-resource`): MCP
//! 2025-11-25 Authorization (401 with an RFC 9728 challenge naming the issuer, RFC 8707
//! audience), the CLI's client completing the flow against that issuer headlessly. The issuer
//! here is ferromcp's authorization server run by the test on an address of its own.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::net::SocketAddr;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use ferromcp_auth_server::{AuthServerConfig, AuthorizationServer};
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::process::{Child, Command};

const LIMIT: Duration = Duration::from_secs(120);

/// A free loopback port (the resource's URL must be known before its server starts).
async fn free_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    l.local_addr().unwrap().port()
}

/// The external authorization server: issues tokens for `resources`, approving every
/// request (loopback). Returns its issuer URL.
async fn issuer(resources: &[String]) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let mut config = AuthServerConfig::default()
        .issuer(format!("http://{addr}"))
        .scopes_supported(["mcp"])
        .default_scopes(["mcp"]);
    for r in resources {
        config = config.resource(r.clone());
    }
    let server = Arc::new(AuthorizationServer::new(config).unwrap());
    let issuer = server.issuer().to_owned();
    tokio::spawn(async move {
        loop {
            let Ok((stream, peer)) = listener.accept().await else {
                return;
            };
            let server = server.clone();
            tokio::spawn(async move {
                let svc = service_fn(move |mut req: hyper::Request<hyper::body::Incoming>| {
                    let server = server.clone();
                    req.extensions_mut().insert::<SocketAddr>(peer);
                    async move { Ok::<_, std::convert::Infallible>(server.handle(req).await) }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), svc)
                    .await;
            });
        }
    });
    issuer
}

/// Starts `ferromcp ARGS`, waits for its first stderr line (the address it serves), and keeps
/// draining stderr; the child and the lines read later.
async fn start(args: &[String]) -> (Child, String, tokio::sync::mpsc::UnboundedReceiver<String>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ferromcp"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let first = loop {
        let line = lines
            .next_line()
            .await
            .unwrap()
            .expect("exited before serving");
        if line.contains("/mcp") {
            break line;
        }
    };
    tokio::spawn(async move {
        while let Ok(Some(l)) = lines.next_line().await {
            let _ = tx.send(l);
        }
    });
    (child, first, rx)
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

/// A raw HTTP/1.1 exchange: the whole response text.
async fn raw(addr: &str, req: &str) -> String {
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(req.as_bytes()).await.unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).await.unwrap();
    out
}

fn auth_args(issuer: &str, resource: &str) -> Vec<String> {
    [
        "--auth-issuer",
        issuer,
        "--auth-jwks",
        &format!("{issuer}/jwks"),
        "--auth-resource",
        resource,
        "--auth-scope",
        "mcp",
    ]
    .map(str::to_owned)
    .to_vec()
}

/// `serve --http --auth-issuer`: an anonymous request gets 401 and a challenge whose RFC 9728
/// metadata names the external issuer; the CLI's `--oauth` gets a token there for this
/// resource (its audience, RFC 8707) and calls a tool.
#[tokio::test]
async fn s103_serve_accepts_tokens_of_an_external_issuer() {
    tokio::time::timeout(LIMIT, async {
        let port = free_port().await;
        let resource = format!("http://127.0.0.1:{port}/mcp");
        let iss = issuer(std::slice::from_ref(&resource)).await;
        let mut args: Vec<String> = ["serve", "--http", &format!("127.0.0.1:{port}")]
            .map(str::to_owned)
            .to_vec();
        args.extend(auth_args(&iss, &resource));
        let (_a, line, _) = start(&args).await;
        assert!(line.contains(&format!("tokens from {iss}")), "{line}");

        let addr = format!("127.0.0.1:{port}");
        let body = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
        let out = raw(
            &addr,
            &format!(
                "POST /mcp HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\ncontent-type: \
                 application/json\r\naccept: application/json, text/event-stream\r\n\
                 content-length: {}\r\n\r\n{body}",
                body.len()
            ),
        )
        .await;
        assert!(out.starts_with("HTTP/1.1 401"), "{out}");
        let out = raw(
            &addr,
            &format!(
                "GET /.well-known/oauth-protected-resource/mcp HTTP/1.1\r\nhost: {addr}\r\n\
                 connection: close\r\n\r\n"
            ),
        )
        .await;
        assert!(out.starts_with("HTTP/1.1 200"), "{out}");
        assert!(
            out.contains(&format!(r#""authorization_servers":["{iss}"]"#)),
            "{out}"
        );

        let (ok, out, err) = cli(&["tool", &resource, "add", r#"{"a":2,"b":3}"#, "--oauth"]).await;
        assert!(ok, "stdout: {out}\nstderr: {err}");
        assert!(out.contains('5'), "{out}");
        let (ok, _, err) = cli(&["tools", &resource]).await;
        assert!(!ok, "no token, no tools");
        assert!(err.contains("401"), "{err}");
    })
    .await
    .unwrap();
}

/// The flags are checked: --auth-issuer needs --auth-jwks and --auth-resource (clap, exit 2),
/// cannot go with --auth, and a JWKS URL that is neither https nor loopback http is refused.
#[tokio::test]
async fn s103_external_issuer_flags_are_checked() {
    tokio::time::timeout(LIMIT, async {
        let (ok, _, err) = cli(&[
            "serve",
            "--http",
            "127.0.0.1:0",
            "--auth-issuer",
            "https://i",
        ])
        .await;
        assert!(!ok && err.contains("--auth-jwks"), "{err}");
        let mut args = vec!["serve", "--http", "127.0.0.1:0", "--auth"];
        let more = auth_args("https://i.example", "https://mcp.example/mcp");
        args.extend(more.iter().map(String::as_str));
        let (ok, _, err) = cli(&args).await;
        assert!(!ok && err.contains("cannot be used with"), "{err}");
        let (ok, _, err) = cli(&[
            "serve",
            "--http",
            "127.0.0.1:0",
            "--auth-issuer",
            "http://i.example",
            "--auth-jwks",
            "http://i.example/jwks",
            "--auth-resource",
            "http://127.0.0.1/mcp",
        ])
        .await;
        assert!(!ok && err.contains("--auth-jwks"), "{err}");
        assert!(err.contains("https"), "{err}");
    })
    .await
    .unwrap();
}

/// `gateway --http --auth-issuer`: the same resource-server auth in front of the mounted
/// servers; the audit line names the token's principal.
#[tokio::test]
async fn s103_gateway_accepts_tokens_of_an_external_issuer() {
    tokio::time::timeout(LIMIT, async {
        let port = free_port().await;
        let resource = format!("http://127.0.0.1:{port}/mcp");
        let iss = issuer(std::slice::from_ref(&resource)).await;
        let dir = std::env::temp_dir().join(format!("ferromcp-ext-iss-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let config = dir.join("gateway.toml");
        let bin = env!("CARGO_BIN_EXE_ferromcp");
        std::fs::write(
            &config,
            format!("[servers.demo]\ncommand = {bin:?}\nargs = [\"serve\"]\n"),
        )
        .unwrap();
        let mut args: Vec<String> = vec![
            "gateway".into(),
            config.display().to_string(),
            "--http".into(),
            format!("127.0.0.1:{port}"),
        ];
        args.extend(auth_args(&iss, &resource));
        let (_g, line, mut log) = start(&args).await;
        assert!(line.contains(&format!("tokens from {iss}")), "{line}");

        let (ok, _, err) = cli(&["tools", &resource]).await;
        assert!(!ok && err.contains("401"), "{err}");
        // The backend mounts in the background: retry until its tool is there.
        let mut answer = (false, String::new(), String::new());
        for _ in 0..100 {
            answer = cli(&["tool", &resource, "demo_add", r#"{"a":4,"b":5}"#, "--oauth"]).await;
            if answer.0 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let (ok, out, err) = answer;
        assert!(ok, "stdout: {out}\nstderr: {err}");
        assert!(out.contains('9'), "{out}");
        // The audit line: the principal (subject/client), not an address.
        let audit = loop {
            let l = log.recv().await.expect("no audit line");
            if l.contains("demo_add") || l.contains("tool=add") {
                break l;
            }
        };
        assert!(!audit.contains("127.0.0.1"), "{audit}");
        let _ = std::fs::remove_dir_all(&dir);
    })
    .await
    .unwrap();
}
