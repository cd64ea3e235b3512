//! The stdio child transport's shutdown sequence and stderr handling.
//!
//! Spec: 2025-11-25 basic/lifecycle "Shutdown › stdio" (close stdin, wait, SIGTERM, wait,
//! SIGKILL) and basic/transports "stdio" (stderr is logging, never an error).

// Unix only: the servers are `sh` scripts, shutdown is checked through SIGTERM and `/proc`.
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::within;
use ferromcp_client::{Client, Lifecycle, StderrMode, StdioTransport, Transport};

const GRACE: Duration = Duration::from_millis(300);

fn shell(script: &str, lines: Arc<Mutex<Vec<String>>>) -> StdioTransport {
    StdioTransport::new("sh")
        .arg("-c")
        .arg(script)
        .shutdown_grace(GRACE)
        .stderr(StderrMode::Lines(Arc::new(move |line: &str| {
            lines.lock().unwrap().push(line.to_owned());
        })))
}

async fn first_line(lines: &Arc<Mutex<Vec<String>>>) -> String {
    for _ in 0..200 {
        if let Some(l) = lines.lock().unwrap().first() {
            return l.clone();
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the child wrote nothing on stderr");
}

fn alive(pid: &str) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
}

/// A child that exits when its stdin closes is done at the first step.
#[tokio::test]
async fn child_exits_on_stdin_eof() {
    within(async {
        let lines: Arc<Mutex<Vec<String>>> = Arc::default();
        let t = shell("echo $$ >&2; cat >/dev/null", lines.clone());
        let connected = t.open().await.unwrap();
        let pid = first_line(&lines).await;
        let started = Instant::now();
        connected.close().await;
        assert!(started.elapsed() < GRACE, "{:?}", started.elapsed());
        assert!(!alive(&pid));
    })
    .await;
}

/// A child that ignores stdin EOF gets SIGTERM after the grace period.
#[tokio::test]
async fn child_ignoring_eof_gets_sigterm() {
    within(async {
        let lines: Arc<Mutex<Vec<String>>> = Arc::default();
        let t = shell("echo $$ >&2; exec sleep 30", lines.clone());
        let connected = t.open().await.unwrap();
        let pid = first_line(&lines).await;
        let started = Instant::now();
        connected.close().await;
        let took = started.elapsed();
        assert!(took >= GRACE && took < GRACE * 2, "{took:?}");
        assert!(!alive(&pid));
    })
    .await;
}

/// A child that ignores SIGTERM too is killed within two grace periods.
#[tokio::test]
async fn child_ignoring_sigterm_gets_sigkill() {
    within(async {
        let lines: Arc<Mutex<Vec<String>>> = Arc::default();
        let t = shell("trap '' TERM; echo $$ >&2; exec sleep 30", lines.clone());
        let connected = t.open().await.unwrap();
        let pid = first_line(&lines).await;
        let started = Instant::now();
        connected.close().await;
        let took = started.elapsed();
        assert!(
            took >= GRACE * 2 && took < GRACE * 2 + Duration::from_secs(2),
            "{took:?}"
        );
        assert!(!alive(&pid));
    })
    .await;
}

/// stderr output is passed on, never an error; a spawn failure is a transport error.
#[tokio::test]
async fn stderr_is_not_an_error_and_spawn_failures_are_reported() {
    within(async {
        let lines: Arc<Mutex<Vec<String>>> = Arc::default();
        let t = shell("echo 'warning: noisy' >&2; cat >/dev/null", lines.clone());
        let connected = t.open().await.unwrap();
        assert_eq!(first_line(&lines).await, "warning: noisy");
        connected.close().await;
        let err = StdioTransport::new("/nonexistent/ferromcp-server")
            .open()
            .await
            .unwrap_err();
        assert!(
            matches!(err, ferromcp_client::ClientError::Transport(_)),
            "{err:?}"
        );
    })
    .await;
}

/// A server (a shell script) whose messages end in `\r\n`: it answers `initialize` and `ping`,
/// the `ping` answer with its `\r` and `\n` in separate writes.
const CRLF_SERVER: &str = r#"
while IFS= read -r line; do
  id=${line#*'"id":'}; id=${id%%[,\}]*}
  case $line in
    *'"method":"initialize"'*)
      printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"crlf","version":"1"}}}\r\n' "$id" ;;
    *'"method":"ping"'*)
      printf '{"jsonrpc":"2.0","id":%s,"result":{}}\r' "$id"; sleep 0.05; printf '\n' ;;
  esac
done
"#;

/// B54 — the client decodes a server's `\r\n`-terminated messages (a Windows server's line
/// ending), also when the `\r` and the `\n` arrive in separate reads.
#[tokio::test]
async fn b54_crlf_terminated_server_messages_are_read() {
    within(async {
        let lines: Arc<Mutex<Vec<String>>> = Arc::default();
        let client = Client::builder()
            .lifecycle(Lifecycle::Handshake)
            .connect(shell(CRLF_SERVER, lines.clone()))
            .await
            .unwrap();
        assert_eq!(client.session().server_info.as_ref().unwrap().name, "crlf");
        client.ping().await.unwrap();
        client.ping().await.unwrap();
        client.shutdown().await;
        assert!(lines.lock().unwrap().is_empty(), "{lines:?}");
    })
    .await;
}
