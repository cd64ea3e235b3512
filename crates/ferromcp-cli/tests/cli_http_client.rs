//! CL-H14: the HTTP client options of the client subcommands (`--proxy`, `--no-proxy`,
//! `--cacert`, `--cert`/`--key`, `--connect-timeout`, `--read-timeout`), through the binary.
#![allow(clippy::unwrap_used, clippy::panic)]

mod http_node;

use std::net::SocketAddr;
use std::process::{Output, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::process::Command;

const TLS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../ferromcp-client/tests/tls");

/// `ferromcp ARGS`, with the environment's proxies cleared unless `env` sets them.
async fn ferromcp(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ferromcp"));
    for var in [
        "HTTP_PROXY",
        "http_proxy",
        "HTTPS_PROXY",
        "https_proxy",
        "ALL_PROXY",
        "all_proxy",
        "NO_PROXY",
        "no_proxy",
    ] {
        cmd.env_remove(var);
    }
    cmd.args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output()
        .await
        .unwrap()
}

/// A forward proxy on loopback for `http://` destinations (absolute-form requests), counting
/// the requests it forwards.
async fn counting_proxy() -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let count = Arc::new(AtomicUsize::new(0));
    let c = count.clone();
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            tokio::spawn(relay(client, c.clone()));
        }
    });
    (format!("http://{addr}"), count)
}

/// Relays one connection: reads the first request head, counts it, forwards it to the
/// absolute-form target and then copies both ways (later requests on the same connection go
/// straight through: the count is of proxied connections).
async fn relay(mut client: TcpStream, count: Arc<AtomicUsize>) {
    let mut buf = Vec::new();
    let end = loop {
        let mut chunk = [0u8; 4096];
        let Ok(n) = client.read(&mut chunk).await else {
            return;
        };
        if n == 0 {
            return;
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
    };
    let head = String::from_utf8_lossy(&buf[..end]).into_owned();
    let target = head.split(' ').nth(1).unwrap_or_default();
    let Some(rest) = target.strip_prefix("http://") else {
        return;
    };
    let authority = rest.split('/').next().unwrap_or_default().to_owned();
    count.fetch_add(1, Ordering::SeqCst);
    let Ok(mut upstream) = TcpStream::connect(authority.as_str()).await else {
        return;
    };
    if upstream.write_all(&buf).await.is_err() {
        return;
    }
    let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// CL-H14: `--proxy URL` sends the requests of `tools` through that proxy; `--no-proxy`
/// ignores `HTTP_PROXY` of the environment.
#[tokio::test]
async fn clh14_proxy_routes_requests_and_no_proxy_ignores_the_environment() {
    tokio::time::timeout(Duration::from_secs(90), async {
        let (_server, addr) = http_node::start(&[]).await;
        let (proxy, count) = counting_proxy().await;
        let url = format!("http://{addr}/mcp");
        let out = ferromcp(&["tools", &url, "--proxy", &proxy], &[]).await;
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(String::from_utf8_lossy(&out.stdout).contains("\"add\""));
        let through = count.load(Ordering::SeqCst);
        assert!(through >= 1, "no request went through the proxy");
        // The environment's proxy is used by default, and not with --no-proxy.
        let env = [("HTTP_PROXY", proxy.as_str())];
        let out = ferromcp(&["tools", &url], &env).await;
        assert!(out.status.success(), "{}", stderr(&out));
        let by_env = count.load(Ordering::SeqCst);
        assert!(by_env > through, "HTTP_PROXY was not used");
        let out = ferromcp(&["tools", &url, "--no-proxy"], &env).await;
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(
            count.load(Ordering::SeqCst),
            by_env,
            "--no-proxy used a proxy"
        );
        // --proxy and --no-proxy contradict each other; a proxy must be http://.
        let out = ferromcp(&["tools", &url, "--proxy", &proxy, "--no-proxy"], &[]).await;
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        let out = ferromcp(&["tools", &url, "--proxy", "socks5://127.0.0.1:1"], &[]).await;
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        assert!(
            stderr(&out).contains("--proxy wants an http:// URL"),
            "{}",
            stderr(&out)
        );
    })
    .await
    .unwrap();
}

/// CL-H14: unreadable or invalid PEM files and lone `--cert`/`--key` are refused before
/// connecting, naming the file; the HTTP options are refused for stdio targets.
#[tokio::test]
async fn clh14_bad_certificate_files_fail_clearly() {
    tokio::time::timeout(Duration::from_secs(60), async {
        let url = "https://127.0.0.1:9/mcp";
        let missing = format!("{TLS}/does-not-exist.pem");
        let out = ferromcp(&["tools", url, "--cacert", &missing], &[]).await;
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        assert!(
            stderr(&out).contains(&format!("--cacert {missing}")),
            "{}",
            stderr(&out)
        );
        // A key is no certificate.
        let key = format!("{TLS}/client.key");
        let out = ferromcp(&["tools", url, "--cacert", &key], &[]).await;
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        assert!(stderr(&out).contains(&key), "{}", stderr(&out));
        assert!(stderr(&out).contains("no certificate"), "{}", stderr(&out));
        let cert = format!("{TLS}/client.pem");
        let out = ferromcp(&["tools", url, "--cert", &cert, "--key", &missing], &[]).await;
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        assert!(
            stderr(&out).contains(&format!("--key {missing}")),
            "{}",
            stderr(&out)
        );
        let out = ferromcp(&["tools", url, "--cert", &cert, "--key", &cert], &[]).await;
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        assert!(stderr(&out).contains("client key"), "{}", stderr(&out));
        // Each of --cert and --key needs the other (a command line clap cannot read: 2).
        let out = ferromcp(&["tools", url, "--cert", &cert], &[]).await;
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        let out = ferromcp(&["tools", url, "--key", &key], &[]).await;
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        let out = ferromcp(&["tools", url, "--connect-timeout", "0"], &[]).await;
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        assert!(
            stderr(&out).contains("--connect-timeout wants"),
            "{}",
            stderr(&out)
        );
        let out = ferromcp(&["tools", url, "--read-timeout", "x"], &[]).await;
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        assert!(
            stderr(&out).contains("--read-timeout wants"),
            "{}",
            stderr(&out)
        );
        let out = ferromcp(&["tools", "ferromcp serve", "--no-proxy"], &[]).await;
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        assert!(
            stderr(&out).contains("https:// targets only"),
            "{}",
            stderr(&out)
        );
        let out = ferromcp(
            &[
                "bridge",
                "--stdio-to-http",
                "127.0.0.1:0",
                "--no-proxy",
                "--",
                "x",
            ],
            &[],
        )
        .await;
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        assert!(
            stderr(&out).contains("--http-to-stdio only"),
            "{}",
            stderr(&out)
        );
    })
    .await
    .unwrap();
}

/// A listener that accepts TCP connections and never answers (a stuck TLS handshake).
async fn silent_listener() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((s, _)) = listener.accept().await {
            held.push(s);
        }
    });
    addr
}

/// CL-H14: `--connect-timeout` bounds a TLS handshake that never completes (with a valid
/// `--cacert` read), and the client fails with a timeout message.
#[tokio::test]
async fn clh14_connect_timeout_bounds_a_stuck_tls_handshake() {
    tokio::time::timeout(Duration::from_secs(60), async {
        let addr = silent_listener().await;
        let url = format!("https://{addr}/mcp");
        let ca = format!("{TLS}/ca.pem");
        let started = Instant::now();
        let out = ferromcp(
            &[
                "tools",
                &url,
                "--cacert",
                &ca,
                "--connect-timeout",
                "0.3",
                "--timeout",
                "30",
            ],
            &[],
        )
        .await;
        let took = started.elapsed();
        eprintln!("failed after {took:?}");
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        assert!(stderr(&out).contains("timed out"), "{}", stderr(&out));
        // Well under --timeout (30 s) and the default connect timeout (10 s).
        assert!(took < Duration::from_secs(5), "took {took:?}");
    })
    .await
    .unwrap();
}
