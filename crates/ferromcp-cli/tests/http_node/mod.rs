//! `ferromcp serve --http 127.0.0.1:0` as a child process, and the address it prints: shared
//! by `http_serve.rs` and `cli_http_client.rs`.

use std::process::Stdio;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// Starts the demo server over HTTP on a free loopback port with `extra` options; the child
/// is killed when dropped. Returns it with `HOST:PORT`.
pub(crate) async fn start(extra: &[&str]) -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ferromcp"))
        .args(["serve", "--http", "127.0.0.1:0"])
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("ferromcp serve starts");
    let stderr = child.stderr.take().expect("piped stderr");
    let mut lines = BufReader::new(stderr).lines();
    let line = lines
        .next_line()
        .await
        .expect("reading stderr")
        .expect("a first line on stderr");
    let addr = line
        .split("http://")
        .nth(1)
        .and_then(|s| s.strip_suffix("/mcp"))
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .to_owned();
    (child, addr)
}
