//! stdio scenarios: newline-delimited JSON-RPC over a child's pipes, with blocking reads and
//! writes on the driver's one thread (cheapest for the driver; 32 requests of ~120 bytes never
//! fill a pipe, so pipelining cannot deadlock).

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout};
use std::time::{Duration, Instant};

use crate::proc::{self, Prefix};
use crate::{Budget, Res, msg};

/// A stdio server with its pipes.
pub(crate) struct StdioServer {
    pub(crate) child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
    line: Vec<u8>,
    era: msg::Era,
    /// Put before the tool names `call` and `pipelined` use (a gateway's mount prefix).
    tool_prefix: String,
}

impl StdioServer {
    /// Spawns the server (no handshake yet).
    pub(crate) fn spawn(prefix: &Prefix, argv: &[String]) -> Res<Self> {
        let mut child = proc::spawn_stdio(prefix, argv)?;
        let stdin = child.stdin.take().ok_or("no stdin")?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        Ok(Self {
            child,
            stdin,
            stdout: BufReader::with_capacity(1 << 16, stdout),
            next_id: 1,
            line: Vec::with_capacity(1024),
            era: msg::Era::Handshake,
            tool_prefix: String::new(),
        })
    }

    /// Spawns the server and runs the 2025-11-25 handshake (checks the answer).
    pub(crate) fn start(prefix: &Prefix, argv: &[String]) -> Res<Self> {
        Self::start_in(prefix, argv, msg::Era::Handshake)
    }

    /// Spawns the server for `era`: the handshake (2025-11-25), or nothing (2026-07-28: every
    /// request carries its envelope).
    pub(crate) fn start_in(prefix: &Prefix, argv: &[String], era: msg::Era) -> Res<Self> {
        let mut server = Self::spawn(prefix, argv)?;
        server.era = era;
        if era == msg::Era::Handshake {
            server.handshake()?;
        }
        Ok(server)
    }

    /// Calls the tools by `prefix` + their name from now on (`b_add` behind a gateway).
    pub(crate) fn with_tool_prefix(mut self, prefix: &str) -> Self {
        self.tool_prefix = prefix.to_owned();
        self
    }

    /// The `tools/call` line of call `id`.
    fn call_line(&self, id: u64) -> String {
        if self.tool_prefix.is_empty() {
            return msg::call_in(self.era, id);
        }
        let (tool, args) = msg::tool_of(id);
        msg::call_tool(self.era, id, &format!("{}{tool}", self.tool_prefix), args)
    }

    /// A fresh request id.
    pub(crate) fn next_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id - 1
    }

    /// Writes one request line and reads its answer: (time from the write to the answer read,
    /// the answer). An error answer is an error.
    pub(crate) fn roundtrip(&mut self, line: &[u8]) -> Res<(Duration, &[u8])> {
        let t = Instant::now();
        self.send(line)?;
        self.read_line()?;
        let took = t.elapsed();
        let head = &self.line[..self.line.len().min(200)];
        if msg::contains(head, b"\"error\":{") || msg::contains(&self.line, b"\"isError\":true") {
            return Err(format!("an error answer: {}", String::from_utf8_lossy(head)).into());
        }
        Ok((took, &self.line))
    }

    /// `initialize` (answered) then `notifications/initialized`.
    pub(crate) fn handshake(&mut self) -> Res<()> {
        self.send(msg::initialize(0).as_bytes())?;
        let answer = self.read_line()?;
        msg::check_initialize(answer)?;
        self.send(msg::INITIALIZED.as_bytes())?;
        Ok(())
    }

    fn send(&mut self, line: &[u8]) -> Res<()> {
        self.stdin.write_all(line)?;
        self.stdin.flush()?;
        Ok(())
    }

    /// Reads the next line that is a response (skips notifications and server requests).
    fn read_line(&mut self) -> Res<&[u8]> {
        loop {
            self.line.clear();
            if self.stdout.read_until(b'\n', &mut self.line)? == 0 {
                return Err("the server closed its stdout".into());
            }
            if msg::is_response(&self.line) {
                return Ok(&self.line);
            }
        }
    }

    /// One `tools/call` (add and echo alternate), answered and checked; returns the time from
    /// the write to the answer read (the check is not timed).
    pub(crate) fn call(&mut self) -> Res<Duration> {
        let id = self.next_id;
        self.next_id += 1;
        let t = Instant::now();
        self.send(self.call_line(id).as_bytes())?;
        let answer = self.read_line()?;
        let took = t.elapsed();
        msg::check_call(id, answer)?;
        Ok(took)
    }

    /// Sequential calls: latencies in microseconds (after `warmup` calls).
    pub(crate) fn sequential(&mut self, warmup: u64, budget: Budget) -> Res<Vec<f64>> {
        for _ in 0..warmup {
            self.call()?;
        }
        let mut lat = Vec::with_capacity(budget.count.min(1 << 20) as usize);
        let start = Instant::now();
        while (lat.len() as u64) < budget.count && start.elapsed() < budget.time {
            lat.push(self.call()?.as_secs_f64() * 1e6);
        }
        Ok(lat)
    }

    /// Pipelined calls with `depth` in flight: (answered calls, elapsed). Answers are counted by
    /// their newline, and writes are batched: one write per read burst. A server that sends
    /// other lines (notifications) would be miscounted; the demo tools send none.
    pub(crate) fn pipelined(&mut self, depth: u64, budget: Budget) -> Res<(u64, Duration)> {
        let mut batch = Vec::with_capacity(depth as usize * 128);
        let start = Instant::now();
        let mut sent = 0;
        let mut answered = 0;
        for _ in 0..depth.min(budget.count) {
            batch.extend_from_slice(self.call_line(self.next_id).as_bytes());
            self.next_id += 1;
            sent += 1;
        }
        self.stdin.write_all(&batch)?;
        self.stdin.flush()?;
        while answered < sent {
            let buf = self.stdout.fill_buf()?;
            if buf.is_empty() {
                return Err("the server closed its stdout".into());
            }
            if msg::has_error(buf) {
                return Err(format!(
                    "an error answer: {}",
                    String::from_utf8_lossy(&buf[..buf.len().min(300)])
                )
                .into());
            }
            let got = buf.iter().filter(|&&b| b == b'\n').count() as u64;
            let n = buf.len();
            self.stdout.consume(n);
            answered += got;
            if start.elapsed() < budget.time {
                batch.clear();
                for _ in 0..got.min(budget.count.saturating_sub(sent)) {
                    batch.extend_from_slice(self.call_line(self.next_id).as_bytes());
                    self.next_id += 1;
                    sent += 1;
                }
                if !batch.is_empty() {
                    self.stdin.write_all(&batch)?;
                    self.stdin.flush()?;
                }
            }
        }
        Ok((answered, start.elapsed()))
    }

    /// Closes stdin (the server should exit) and waits up to `timeout`.
    pub(crate) fn close(self, timeout: Duration) {
        let Self {
            mut child, stdin, ..
        } = self;
        drop(stdin);
        proc::wait_or_kill(&mut child, timeout);
    }
}

/// Cold start: spawn → `initialize` answered, in milliseconds.
pub(crate) fn cold_start(prefix: &Prefix, argv: &[String]) -> Res<f64> {
    let t = Instant::now();
    let mut server = StdioServer::spawn(prefix, argv)?;
    server.send(msg::initialize(0).as_bytes())?;
    let answer = server.read_line()?;
    let ms = t.elapsed().as_secs_f64() * 1e3;
    msg::check_initialize(answer)?;
    proc::kill(&mut server.child);
    Ok(ms)
}
