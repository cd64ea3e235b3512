//! Runs the `ferromcp` binary (or another command) as a user does, with a deadline: the one
//! runner of `cli_client.rs`, `cli_args.rs` and `cli_answers.rs`.

// Each test file uses part of this module.
#![allow(dead_code, unreachable_pub)]

use std::ffi::OsStr;
use std::io::Read;
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_ferromcp");
/// How long one run may take before it is killed and the test fails.
pub const LIMIT: Duration = Duration::from_secs(30);

/// What a finished run printed and returned.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
    pub took: Duration,
}

/// The binary with `args` and an empty stdin.
pub fn ferromcp<I, S>(args: I) -> Command
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let mut cmd = Command::new(BIN);
    cmd.args(args).stdin(Stdio::null());
    cmd
}

/// Runs `cmd` with stdout and stderr captured (lossy UTF-8), killing it after `limit`.
pub fn finish(cmd: Command, limit: Duration) -> Run {
    finish_fed(cmd, None, limit)
}

/// [`finish`], with `input` written to the child's stdin first when given (stdin stays open
/// until the child exits).
pub fn finish_fed(mut cmd: Command, input: Option<&str>, limit: Duration) -> Run {
    let what = format!(
        "{:?} {:?}",
        cmd.get_program(),
        cmd.get_args().collect::<Vec<_>>()
    );
    if input.is_some() {
        cmd.stdin(Stdio::piped());
    }
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {what}: {e}"));
    let stdin = input.map(|text| {
        let mut stdin = child.stdin.take().expect("piped stdin");
        std::io::Write::write_all(&mut stdin, text.as_bytes()).expect("writing stdin");
        stdin
    });
    let read = |mut pipe: Box<dyn Read + Send>| {
        thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            String::from_utf8_lossy(&bytes).into_owned()
        })
    };
    let out = read(Box::new(child.stdout.take().expect("piped stdout")));
    let err = read(Box::new(child.stderr.take().expect("piped stderr")));
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("waiting for the child") {
            break s;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what} did not finish within {limit:?}");
        }
        thread::sleep(Duration::from_millis(10));
    };
    drop(stdin);
    Run {
        code: status.code().unwrap_or(-1),
        stdout: out.join().expect("stdout reader"),
        stderr: err.join().expect("stderr reader"),
        took: start.elapsed(),
    }
}
