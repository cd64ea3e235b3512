//! The stdio transport, for real: a child process (`ferromcp-stdio-echo`, tests/bin/) claims
//! its stdio with `stdio_transport` and echoes requests.
//!
//! MCP "Transports › stdio": messages are newline-delimited and contain no embedded newlines;
//! the server MUST NOT write anything to its stdout that is not a valid MCP message (a stray
//! print lands on stderr instead); the client closes stdin to end the session.
// Unix only: `sh` children, socket pairs, and the restored O_NONBLOCK flag of fd 1.
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::panic)]

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::Value;

const LIMIT: Duration = Duration::from_secs(30);
const ECHO: &str = env!("CARGO_BIN_EXE_ferromcp-stdio-echo");

fn request(id: u64, method: &str) -> String {
    format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"{method}\"}}\n")
}

/// Waits for the child to exit, killing it after [`LIMIT`].
fn wait(child: &mut Child) -> ExitStatus {
    let deadline = Instant::now() + LIMIT;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the echo server did not exit");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn collect(mut r: impl Read + Send + 'static) -> JoinHandle<String> {
    std::thread::spawn(move || {
        let mut s = String::new();
        r.read_to_string(&mut s).unwrap();
        s
    })
}

/// An echo server on pipes, its stdout read line by line as it comes.
struct Echo {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    stderr: JoinHandle<String>,
}

impl Echo {
    fn spawn(stderr_is_stdout: bool) -> Self {
        let mut cmd = if stderr_is_stdout {
            // Both on one pipe, as a client that runs `sh -c 'server 2>&1'` would.
            let mut cmd = Command::new("sh");
            cmd.args(["-c", "exec \"$0\" 2>&1", ECHO]);
            cmd
        } else {
            Command::new(ECHO)
        };
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        Self::with_stdout(child, stdout)
    }

    fn with_stdout(mut child: Child, stdout: impl Read + Send + 'static) -> Self {
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                if tx.send(line.unwrap()).is_err() {
                    return;
                }
            }
        });
        let stderr = match child.stderr.take() {
            Some(stderr) => collect(stderr),
            None => std::thread::spawn(String::new),
        };
        Self {
            stdin: child.stdin.take(),
            child,
            lines,
            stderr,
        }
    }

    fn write(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    fn line(&self) -> String {
        self.lines.recv_timeout(LIMIT).unwrap()
    }

    /// Closes stdin and returns the exit status, the rest of stdout, and stderr.
    fn finish(mut self) -> (ExitStatus, Vec<String>, String) {
        drop(self.stdin.take());
        let status = wait(&mut self.child);
        let rest = self.lines.iter().collect();
        (status, rest, self.stderr.join().unwrap())
    }
}

fn json(line: &str) -> Value {
    serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON on stdout: {line:?}: {e}"))
}

fn assert_result(line: &str, id: u64, method: &str) {
    let v = json(line);
    assert_eq!(v["jsonrpc"], "2.0", "{line}");
    assert_eq!(v["id"], id, "{line}");
    assert_eq!(v["result"]["method"], method, "{line}");
}

#[test]
fn over_pipes_stdout_carries_only_protocol_lines() {
    let mut echo = Echo::spawn(false);
    // Pipelined in one write; answered while stdin is still open.
    echo.write(format!("{}{}{}", request(1, "a"), request(2, "b"), request(3, "c")).as_bytes());
    assert_result(&echo.line(), 1, "a");
    assert_result(&echo.line(), 2, "b");
    assert_result(&echo.line(), 3, "c");

    // A malformed line surfaces as a decode error; the stream goes on.
    echo.write(b"{\"jsonrpc\":\"2.0\",\"id\":4,\n");
    echo.write(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
    echo.write(request(5, "d").as_bytes());
    let err = json(&echo.line());
    assert_eq!(err["id"], Value::Null);
    assert_eq!(err["error"]["code"], -32700);
    assert_result(&echo.line(), 5, "d");

    // A child process inherits fd 1 = stderr and fd 0 = /dev/null, never the wire.
    echo.write(request(6, "child").as_bytes());
    assert_result(&echo.line(), 6, "child");

    let (status, rest, stderr) = echo.finish();
    assert!(status.success(), "{status:?}; stderr: {stderr}");
    // After the transport is gone, fd 1 is the wire again, blocking as it was.
    assert_eq!(rest, ["restored nonblock=false"]);
    assert!(stderr.contains("stray\n"), "{stderr:?}");
    assert!(stderr.contains("child-out\n"), "{stderr:?}");
}

#[test]
fn over_pipes_many_and_large_messages_go_through() {
    let mut echo = Echo::spawn(false);
    let big = "x".repeat(1024 * 1024);
    let mut input = String::new();
    for id in 0..1000 {
        input.push_str(&request(id, "ping"));
    }
    input.push_str(&request(1000, &big));
    // Write from another thread: the child's answers fill the stdout pipe meanwhile.
    let mut stdin = echo.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()).unwrap());
    for id in 0..1000 {
        assert_result(&echo.line(), id, "ping");
    }
    let line = echo.line();
    assert_eq!(
        line.len(),
        big.len() + r#"{"jsonrpc":"2.0","id":1000,"result":{"method":""}}"#.len(),
        "one line for the large answer"
    );
    assert_result(&line, 1000, &big);
    writer.join().unwrap();
    let (status, rest, _) = echo.finish();
    assert!(status.success());
    assert_eq!(rest, ["restored nonblock=false"]);
}

/// B54 — `\r\n`-terminated requests (a Windows client's line ending) are served: one per
/// write, several in one write, and with the `\r` and the `\n` in separate writes. The
/// answers end in a bare `\n`.
#[test]
fn b54_crlf_terminated_requests_are_served() {
    let mut echo = Echo::spawn(false);
    let crlf = |id, method| request(id, method).replace('\n', "\r\n");
    echo.write(crlf(1, "a").as_bytes());
    assert_result(&echo.line(), 1, "a");
    echo.write(format!("{}{}", crlf(2, "b"), crlf(3, "c")).as_bytes());
    assert_result(&echo.line(), 2, "b");
    assert_result(&echo.line(), 3, "c");
    let split = crlf(4, "d");
    echo.write(split.trim_end_matches('\n').as_bytes());
    std::thread::sleep(Duration::from_millis(50));
    echo.write(b"\n");
    let line = echo.line();
    assert!(!line.contains('\r'), "{line:?}");
    assert_result(&line, 4, "d");
    let (status, rest, stderr) = echo.finish();
    assert!(status.success(), "{status:?}; stderr: {stderr}");
    assert_eq!(rest, ["restored nonblock=false"]);
}

#[test]
fn when_stdout_and_stderr_share_a_pipe_it_still_works() {
    let mut echo = Echo::spawn(true);
    echo.write(request(1, "a").as_bytes());
    let mut lines = vec![echo.line()];
    if lines[0] == "stray" {
        lines.push(echo.line());
    }
    assert_result(lines.last().unwrap(), 1, "a");
    let (status, rest, _) = echo.finish();
    assert!(status.success());
    assert!(
        rest.contains(&"restored nonblock=false".to_string()),
        "{rest:?}"
    );
}

fn temp_path(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("ferromcp-stdio-{}-{name}", std::process::id()))
}

#[test]
fn over_regular_files_the_blocking_fallback_serves() {
    let input = temp_path("in");
    let output = temp_path("out");
    let mut requests = String::new();
    for id in 0..100 {
        requests.push_str(&request(id, "ping"));
    }
    requests.push_str("not json\n");
    std::fs::write(&input, &requests).unwrap();
    let mut child = Command::new(ECHO)
        .stdin(File::open(&input).unwrap())
        .stdout(File::create(&output).unwrap())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = collect(child.stderr.take().unwrap());
    let status = wait(&mut child);
    let stderr = stderr.join().unwrap();
    assert!(status.success(), "{stderr}");
    assert_eq!(stderr, "stray\n");
    let out = std::fs::read_to_string(&output).unwrap();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 102, "{out}");
    for (id, line) in lines[..100].iter().enumerate() {
        assert_result(line, id as u64, "ping");
    }
    assert_eq!(json(lines[100])["error"]["code"], -32700);
    assert_eq!(lines[101], "restored nonblock=false");
    let _ = std::fs::remove_file(input);
    let _ = std::fs::remove_file(output);
}

#[test]
fn over_a_socket_pair_as_node_clients_spawn_servers() {
    let (ours, theirs) = UnixStream::pair().unwrap();
    let mut child = Command::new(ECHO)
        .stdin(OwnedFd::from(theirs.try_clone().unwrap()))
        .stdout(OwnedFd::from(theirs))
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = collect(child.stderr.take().unwrap());
    ours.set_read_timeout(Some(LIMIT)).unwrap();
    let mut reader = BufReader::new(ours.try_clone().unwrap());
    let mut writer = ours;
    writer
        .write_all(format!("{}{}", request(1, "a"), request(2, "b")).as_bytes())
        .unwrap();
    let mut line = String::new();
    reader.read_line(&mut line).unwrap();
    assert_result(line.trim_end(), 1, "a");
    line.clear();
    reader.read_line(&mut line).unwrap();
    assert_result(line.trim_end(), 2, "b");
    writer.shutdown(std::net::Shutdown::Write).unwrap();
    let status = wait(&mut child);
    let mut rest = String::new();
    reader.read_to_string(&mut rest).unwrap();
    assert!(status.success());
    assert_eq!(rest, "restored nonblock=false\n");
    assert_eq!(stderr.join().unwrap(), "stray\n");
}
