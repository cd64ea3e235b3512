//! F40: `ferromcp serve` (stdio) whose parent pipes its stderr and does not read it. Log lines
//! are queued and written by a thread of their own, so a full pipe never blocks a request; a
//! full queue (`FERROMCP_LOG_BUFFER`) drops lines and says how many once stderr moves again;
//! an orderly exit writes what is queued, waiting at most `FERROMCP_LOG_FLUSH_MS`.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};

const TIMEOUT: Duration = Duration::from_secs(30);

/// Invalid notifications sent: each one logs one warning (about 500 bytes), far more than the
/// 64 KiB a Linux pipe holds.
const FLOOD: usize = 2000;

/// What the warning about each of them holds (the notification was handled and found invalid,
/// or the dispatcher's notification queue was full).
const WARNING: &str = "method=\"notifications/progress\"";

/// The warnings in `stderr`.
fn warnings(stderr: &str) -> usize {
    stderr.lines().filter(|l| l.contains(WARNING)).count()
}

struct Peer {
    child: Child,
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
    stderr: Option<ChildStderr>,
}

impl Peer {
    /// `ferromcp serve` at log `level`, stderr piped and not read, `env` set.
    fn spawn(level: &str, env: &[(&str, &str)]) -> Self {
        let mut command = Command::new(env!("CARGO_BIN_EXE_ferromcp"));
        command
            .arg("serve")
            .env("FERROMCP_LOG", level)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        for (k, v) in env {
            command.env(k, v);
        }
        let mut child = command.spawn().unwrap();
        let stdin = child.stdin.take().unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let stderr = child.stderr.take();
        Self {
            child,
            stdin,
            lines,
            stderr,
        }
    }

    async fn send(&mut self, message: Value) {
        let mut line = message.to_string();
        line.push('\n');
        self.stdin.write_all(line.as_bytes()).await.unwrap();
        self.stdin.flush().await.unwrap();
    }

    async fn request(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        loop {
            let line = self
                .lines
                .next_line()
                .await
                .unwrap()
                .expect("stdout closed");
            let v: Value = serde_json::from_str(&line).unwrap();
            if v.get("id") == Some(&json!(id)) {
                return v;
            }
        }
    }

    async fn handshake(&mut self) {
        let init = self
            .request(
                1,
                "initialize",
                json!({"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "f40", "version": "1"}}),
            )
            .await;
        assert_eq!(init["result"]["protocolVersion"], "2025-11-25", "{init}");
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
    }

    /// Sends `n` invalid notifications (a warning each), then a ping that must be answered.
    async fn flood(&mut self, n: usize, ping_id: i64) {
        for _ in 0..n {
            self.send(json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {}}))
                .await;
        }
        let r = self.request(ping_id, "ping", json!({})).await;
        assert_eq!(r["result"], json!({}), "{r}");
    }

    /// Starts reading stderr to its end (what the parent failed to do so far).
    fn read_stderr(&mut self) -> tokio::task::JoinHandle<String> {
        let mut stderr = self.stderr.take().unwrap();
        tokio::spawn(async move {
            let mut text = String::new();
            stderr.read_to_string(&mut text).await.unwrap();
            text
        })
    }

    /// Closes stdin and expects a clean exit within `within`.
    async fn finish(mut self, within: Duration) {
        drop(self.stdin);
        let status = tokio::time::timeout(within, self.child.wait())
            .await
            .expect("the server did not exit");
        assert!(status.unwrap().success());
        drop(self.stderr);
    }
}

async fn run(test: impl std::future::Future<Output = ()>) {
    tokio::time::timeout(TIMEOUT, test)
        .await
        .expect("test timed out");
}

/// The lines that say how many log lines were dropped, summed.
fn dropped(stderr: &str) -> usize {
    stderr
        .lines()
        .filter_map(|l| l.strip_prefix("ferromcp: "))
        .filter_map(|l| l.split_once(" log lines dropped"))
        .map(|(n, _)| n.parse::<usize>().unwrap())
        .sum()
}

/// F40: with stderr piped and never read, the pipe fills within a few hundred log lines;
/// tool calls in between and after are still answered (before, the first write to the full
/// pipe blocked the runtime thread and the server answered nothing more).
#[tokio::test]
async fn f40_an_unread_stderr_pipe_never_blocks_the_server() {
    run(async {
        let mut p = Peer::spawn("debug", &[]);
        p.handshake().await;
        for round in 0..10_i64 {
            p.flood(FLOOD / 10, 100 + round).await;
            let id = 200 + round;
            let r = p
                .request(
                    id,
                    "tools/call",
                    json!({"name": "add", "arguments": {"a": id, "b": 1}}),
                )
                .await;
            assert_eq!(
                r["result"]["content"][0]["text"],
                (id + 1).to_string(),
                "{r}"
            );
        }
        // stderr is still unread: the exit waits for it at most FERROMCP_LOG_FLUSH_MS (1 s).
        p.finish(Duration::from_secs(10)).await;
    })
    .await;
}

/// F40: the queue is bounded (`FERROMCP_LOG_BUFFER`): past it a line is dropped and counted,
/// and once stderr is read again the count is written. Every warning is either written or
/// counted.
#[tokio::test]
async fn f40_a_full_queue_drops_lines_and_says_how_many() {
    run(async {
        let mut p = Peer::spawn(
            "warn",
            &[
                ("FERROMCP_LOG_BUFFER", "2048"),
                ("FERROMCP_LOG_FLUSH_MS", "20000"),
            ],
        );
        p.handshake().await;
        p.flood(FLOOD, 2).await;
        let stderr = p.read_stderr();
        p.finish(Duration::from_secs(20)).await;
        let stderr = stderr.await.unwrap();
        let written = warnings(&stderr);
        let dropped = dropped(&stderr);
        assert!(dropped > 0, "a 2 KiB queue dropped lines: {stderr}");
        assert_eq!(written + dropped, FLOOD, "{stderr}");
    })
    .await;
}

/// F40: an orderly exit (stdin closed) writes the lines still queued: stderr, read only once
/// the server is on its way out, holds every warning, none dropped (the default queue, 1 MiB,
/// holds them all). Without the flush the process ended with the queue unwritten.
#[tokio::test]
async fn f40_orderly_exit_writes_the_queued_lines() {
    run(async {
        let mut p = Peer::spawn("warn", &[("FERROMCP_LOG_FLUSH_MS", "20000")]);
        p.handshake().await;
        p.flood(FLOOD, 2).await;
        p.send(json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {}}))
            .await;
        // stdin closed first: the server finishes while its stderr is still full.
        let Peer {
            mut child,
            stdin,
            lines,
            mut stderr,
        } = p;
        drop(stdin);
        drop(lines);
        tokio::time::sleep(Duration::from_millis(500)).await;
        let mut text = String::new();
        stderr
            .take()
            .unwrap()
            .read_to_string(&mut text)
            .await
            .unwrap();
        assert!(child.wait().await.unwrap().success());
        let stderr = text;
        assert_eq!(dropped(&stderr), 0, "{stderr}");
        assert_eq!(warnings(&stderr), FLOOD + 1);
    })
    .await;
}

/// F40: a stderr nobody reads does not keep the server from exiting: the exit waits for the
/// queued lines at most `FERROMCP_LOG_FLUSH_MS`.
#[tokio::test]
async fn f40_a_stuck_stderr_delays_the_exit_at_most_the_flush_wait() {
    run(async {
        let mut p = Peer::spawn("warn", &[("FERROMCP_LOG_FLUSH_MS", "200")]);
        p.handshake().await;
        p.flood(FLOOD, 2).await;
        let started = std::time::Instant::now();
        p.finish(Duration::from_secs(10)).await;
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
    })
    .await;
}

/// F40: `ferromcp gateway` (stdio) writes an audit line per tool call; with its stderr piped
/// and never read, the pipe fills within a few hundred calls, and the calls after it are
/// still answered (before, the audit line's write blocked the gateway). Its stdio backend
/// inherits the same stderr, so nothing of the backend's is left piped unread either.
#[tokio::test]
async fn f40_gateway_audit_lines_never_block_it() {
    run(async {
        let path = std::env::temp_dir().join(format!(
            "ferromcp-stderr-unread-{}.toml",
            std::process::id()
        ));
        std::fs::write(
            &path,
            format!(
                "[servers.demo]\ncommand = {:?}\nargs = [\"serve\"]\n\
                 [rate_limit]\nper_principal = 100000\ntotal = 100000\n",
                env!("CARGO_BIN_EXE_ferromcp")
            ),
        )
        .unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_ferromcp"))
            .arg("gateway")
            .arg(&path)
            .env("FERROMCP_LOG", "warn")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let mut p = Peer {
            stdin: child.stdin.take().unwrap(),
            lines: BufReader::new(child.stdout.take().unwrap()).lines(),
            stderr: child.stderr.take(),
            child,
        };
        p.handshake().await;
        // About 130 bytes of audit line per call: 1,500 calls are three pipes' worth.
        for id in 2..1502_i64 {
            let r = p
                .request(
                    id,
                    "tools/call",
                    json!({"name": "demo_add", "arguments": {"a": id, "b": 1}}),
                )
                .await;
            assert_eq!(
                r["result"]["content"][0]["text"],
                (id + 1).to_string(),
                "{r}"
            );
        }
        p.finish(Duration::from_secs(10)).await;
        let _ = std::fs::remove_file(&path);
    })
    .await;
}

/// F41: `FERROMCP_LOG_BUFFER=0` means no queue: each line is written by the thread that logs
/// it, so a warning is on stderr by the time the request after it is answered, and none is
/// dropped. Before, a bound of 0 bytes dropped every line.
#[tokio::test]
async fn f41_a_zero_buffer_writes_each_line_at_once() {
    run(async {
        let mut p = Peer::spawn("warn", &[("FERROMCP_LOG_BUFFER", "0")]);
        let stderr = p.read_stderr();
        p.handshake().await;
        p.flood(20, 2).await;
        p.finish(Duration::from_secs(10)).await;
        let stderr = stderr.await.unwrap();
        assert_eq!(dropped(&stderr), 0, "{stderr}");
        assert_eq!(warnings(&stderr), 20, "{stderr}");
    })
    .await;
}
