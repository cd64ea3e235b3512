//! Server processes: spawning (optionally pinned with `taskset`, or under callgrind), reading
//! their RSS, CPU time and context switches from `/proc`, and ending them.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::Res;

/// How to start one server: its name and its three command lines (`{addr}` in the HTTP ones is
/// replaced by the address to listen on).
#[derive(Debug, Clone, Default)]
pub(crate) struct ServerSpec {
    pub(crate) name: String,
    pub(crate) stdio: Vec<String>,
    pub(crate) http: Vec<String>,
    pub(crate) http_stateless: Vec<String>,
    /// The server takes `--tools N` (N more registered tools): the registry-size curves.
    pub(crate) registry: bool,
    /// A node of a Redis-shared deployment (`{addr}`, and `--redis URL` in it): the
    /// scale-out rows.
    pub(crate) http_redis: Vec<String>,
    /// `ferromcp gateway` (the command before a config file's path): the gateway-cost rows
    /// put it in front of this server's stdio command (`--gateway`).
    pub(crate) gateway: Vec<String>,
    /// Scenarios not to run against this server (`--skip`; e.g. `payload` for a server
    /// without the `size` tool).
    pub(crate) skip: Vec<String>,
}

impl ServerSpec {
    /// Whether scenario `name` runs against this server.
    pub(crate) fn runs(&self, name: &str) -> bool {
        !self.skip.iter().any(|s| s == name)
    }
}

/// What goes in front of every server command line: `taskset -c CPU`, `valgrind …`, or nothing.
#[derive(Debug, Clone, Default)]
pub(crate) struct Prefix(pub(crate) Vec<String>);

impl Prefix {
    /// `taskset -c CPU` when a CPU is given.
    pub(crate) fn pin(cpu: Option<&str>) -> Self {
        match cpu {
            Some(cpu) => Self(vec!["taskset".into(), "-c".into(), cpu.into()]),
            None => Self(Vec::new()),
        }
    }

    /// `valgrind --tool=callgrind --callgrind-out-file=OUT`.
    pub(crate) fn callgrind(out: &str) -> Self {
        Self(vec![
            "valgrind".into(),
            "--tool=callgrind".into(),
            format!("--callgrind-out-file={out}"),
        ])
    }
}

/// Builds the command: prefix, then `argv` with `{addr}` replaced.
fn command(prefix: &Prefix, argv: &[String], addr: Option<&str>) -> Res<Command> {
    let mut words: Vec<String> = prefix.0.clone();
    words.extend(
        argv.iter()
            .map(|w| addr.map_or_else(|| w.clone(), |a| w.replace("{addr}", a))),
    );
    let (program, args) = words.split_first().ok_or("an empty server command")?;
    let mut cmd = Command::new(program);
    cmd.args(args);
    Ok(cmd)
}

/// Spawns a stdio server (stdin and stdout piped, stderr discarded).
pub(crate) fn spawn_stdio(prefix: &Prefix, argv: &[String]) -> Res<Child> {
    let child = command(prefix, argv, None)?
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    Ok(child)
}

/// Spawns an HTTP server listening on `addr` (no stdio).
pub(crate) fn spawn_http(prefix: &Prefix, argv: &[String], addr: &str) -> Res<Child> {
    let child = command(prefix, argv, Some(addr))?
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()?;
    Ok(child)
}

/// A loopback address with a port free right now.
pub(crate) fn free_addr() -> Res<String> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    Ok(listener.local_addr()?.to_string())
}

/// Ends a server: SIGKILL, then reaps it.
pub(crate) fn kill(child: &mut Child) {
    let _ = child.kill();
    let _ = child.wait();
}

/// Ends a server politely (SIGTERM through `kill(1)`, so valgrind can write its output), waits
/// up to `timeout`, then kills it.
pub(crate) fn terminate(child: &mut Child, timeout: Duration) {
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    wait_or_kill(child, timeout);
}

/// Waits up to `timeout` for the child to exit by itself, then kills it.
pub(crate) fn wait_or_kill(child: &mut Child, timeout: Duration) {
    let start = Instant::now();
    while start.elapsed() < timeout {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    kill(child);
}

/// Resident set size of a process, in bytes (`VmRSS` in `/proc/PID/status`).
pub(crate) fn rss_bytes(pid: u32) -> Res<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    status_field(&status, "VmRSS:")
        .map(|kb| kb * 1024)
        .ok_or_else(|| "no VmRSS".into())
}

fn status_field(status: &str, key: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|v| v.parse().ok())
}

/// CPU time and context switches a process has used so far.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Usage {
    /// user + system time, seconds (clock-tick resolution: 10 ms).
    pub(crate) cpu_secs: f64,
    /// voluntary + involuntary context switches, summed over the live threads.
    pub(crate) ctx_switches: u64,
}

/// Reads [`Usage`] from `/proc/PID/stat` and `/proc/PID/task/*/status`.
pub(crate) fn usage(pid: u32) -> Res<Usage> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    // Fields after the command name (which may hold spaces) start at field 3 (state).
    let after = stat.rsplit_once(')').map(|(_, r)| r).ok_or("bad stat")?;
    let fields: Vec<&str> = after.split_whitespace().collect();
    // utime and stime are fields 14 and 15: indexes 11 and 12 after the name.
    let ticks: u64 = [11, 12]
        .iter()
        .filter_map(|&i| fields.get(i).and_then(|v| v.parse::<u64>().ok()))
        .sum();
    let mut ctx_switches = 0;
    for task in std::fs::read_dir(format!("/proc/{pid}/task"))? {
        let Ok(status) = std::fs::read_to_string(task?.path().join("status")) else {
            continue;
        };
        ctx_switches += status_field(&status, "voluntary_ctxt_switches:").unwrap_or(0);
        ctx_switches += status_field(&status, "nonvoluntary_ctxt_switches:").unwrap_or(0);
    }
    Ok(Usage {
        cpu_secs: ticks as f64 / 100.0,
        ctx_switches,
    })
}

/// The total instruction count (`Ir`) in a callgrind output file.
pub(crate) fn callgrind_total(path: &str) -> Res<u64> {
    let text = std::fs::read_to_string(path)?;
    text.lines()
        .find_map(|l| {
            l.strip_prefix("totals:")
                .or_else(|| l.strip_prefix("summary:"))
        })
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| format!("no totals in {path}").into())
}
