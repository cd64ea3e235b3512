//! Issue 19's rows: the 2026-07-28 era (stdio and HTTP, throughput and latency), big payloads
//! (MB/s), the growth curves (memory against idle sessions, latency against concurrent HTTP
//! clients, cost against registered tools) and the stripped binary size, run in every round
//! beside the issue-9 scenarios (`scenarios.rs`). The deterministic counterparts (instructions
//! per call under callgrind, bytes copied under DHAT) are in `counted.rs`.

use std::time::{Duration, Instant};

use crate::msg::{self, Era};
use crate::proc::{self, Prefix, ServerSpec};
use crate::report::{Better, Results, RowKey, percentile};
use crate::stdio::StdioServer;
use crate::{Budget, Opts, Res, http};

/// The rows' scenario names, for `--only`, in the order they run.
pub(crate) const NAMES: [&str; 8] = [
    "modern",
    "payload",
    "idle-curve",
    "latency-curve",
    "registry-curve",
    "binary-size",
    "scale-out",
    "gateway",
];

/// Table and curve names (the groups of rows).
pub(crate) const G_MODERN: &str = "2026-07-28 (modern era)";
pub(crate) const G_PAYLOAD: &str = "big payloads (2026-07-28)";
pub(crate) const G_IDLE: &str = "memory against idle HTTP sessions (2025-11-25)";
pub(crate) const G_P50: &str = "HTTP p50 against concurrent clients (2026-07-28)";
pub(crate) const G_P99: &str = "HTTP p99 against concurrent clients (2026-07-28)";
pub(crate) const G_REG_CALL: &str = "tools/call against registered tools (stdio, 2026-07-28)";
pub(crate) const G_REG_LIST: &str =
    "tools/list, all pages, against registered tools (stdio, 2026-07-28)";
pub(crate) const G_SIZE: &str = "binary size";

/// One value a scenario measured.
pub(crate) struct Val {
    pub(crate) group: &'static str,
    pub(crate) label: String,
    pub(crate) x: Option<f64>,
    pub(crate) better: Better,
    pub(crate) value: f64,
}

impl Val {
    pub(crate) fn new(group: &'static str, label: String, better: Better, value: f64) -> Self {
        Self {
            group,
            label,
            x: None,
            better,
            value,
        }
    }

    pub(crate) fn at(mut self, x: f64) -> Self {
        self.x = Some(x);
        self
    }

    pub(crate) fn key(&self) -> RowKey<'_> {
        RowKey {
            group: self.group,
            label: &self.label,
            x: self.x,
            better: self.better,
        }
    }
}

/// Records a scenario's values, or its failure (on a row named after the scenario).
pub(crate) fn record(
    results: &mut Results,
    server: usize,
    name: &str,
    scenario: &'static str,
    got: &[Val],
    outcome: Res<()>,
) {
    for v in got {
        results.row(v.key(), server, v.value);
    }
    if let Err(e) = outcome {
        let key = RowKey {
            group: scenario,
            label: "(the scenario failed)",
            x: None,
            better: Better::Lower,
        };
        results.row_error(key, server, name, &e.to_string());
    }
}

/// Counts and times, full or `--quick`.
pub(crate) struct Plan {
    pub(crate) pipe: Budget,
    pub(crate) http: Budget,
    pub(crate) seq: Budget,
    pub(crate) seq_warmup: u64,
    pub(crate) payload_sizes: Vec<usize>,
    pub(crate) payload_time: Duration,
    pub(crate) idle_points: Vec<u64>,
    pub(crate) settle: Duration,
    pub(crate) clients: Vec<usize>,
    pub(crate) client_time: Duration,
    pub(crate) tools: Vec<usize>,
    pub(crate) registry_calls: Budget,
    pub(crate) registry_lists: Budget,
    pub(crate) driver_threads: usize,
}

impl Plan {
    pub(crate) fn new(quick: bool, driver_threads: usize) -> Self {
        let b = |count, ms| Budget {
            count,
            time: Duration::from_millis(ms),
        };
        if quick {
            Self {
                pipe: b(2000, 500),
                http: b(2000, 500),
                seq: b(200, 500),
                seq_warmup: 20,
                payload_sizes: vec![64 << 10, 1 << 20],
                payload_time: Duration::from_millis(300),
                idle_points: vec![1, 10, 50],
                settle: Duration::from_millis(50),
                clients: vec![1, 4],
                client_time: Duration::from_millis(200),
                tools: vec![10, 100],
                registry_calls: b(20, 500),
                registry_lists: b(2, 500),
                driver_threads,
            }
        } else {
            Self {
                pipe: b(10_000_000, 5000),
                http: b(10_000_000, 5000),
                seq: b(20_000, 5000),
                seq_warmup: 1000,
                payload_sizes: vec![64 << 10, 1 << 20, 4 << 20],
                payload_time: Duration::from_secs(3),
                idle_points: vec![1, 10, 100, 1000, 10_000],
                settle: Duration::from_millis(300),
                clients: vec![1, 4, 16, 64, 256],
                client_time: Duration::from_secs(2),
                tools: vec![10, 100, 1000, 10_000],
                registry_calls: b(2000, 1000),
                registry_lists: b(20, 2000),
                driver_threads,
            }
        }
    }
}

type Scenario = fn(&Plan, &Prefix, &ServerSpec, &tokio::runtime::Runtime, &mut Vec<Val>) -> Res<()>;

/// Runs the wanted rows' scenarios once (one round) against every server, interleaved.
pub(crate) fn run_round(
    opts: &Opts,
    plan: &Plan,
    pin: &Prefix,
    rt: &tokio::runtime::Runtime,
    results: &mut Results,
    round: usize,
) {
    let wanted = |name: &str| {
        opts.only
            .as_ref()
            .is_none_or(|only| only.iter().any(|n| n == name))
    };
    let scenarios: [(&str, &'static str, Scenario); 8] = [
        (NAMES[0], G_MODERN, modern),
        (NAMES[1], G_PAYLOAD, payload),
        (NAMES[2], G_IDLE, idle_curve),
        (NAMES[3], G_P50, latency_curve),
        (NAMES[4], G_REG_CALL, registry_curve),
        (NAMES[5], G_SIZE, binary_size),
        (
            NAMES[6],
            crate::scaleout::G_SCALE,
            crate::scaleout::scale_out,
        ),
        (NAMES[7], crate::gateway::G_GATEWAY, crate::gateway::gateway),
    ];
    for (name, group, scenario) in scenarios {
        // The size of a file does not change between rounds.
        if !wanted(name) || (name == "binary-size" && round > 0) {
            continue;
        }
        for (i, spec) in opts.servers.iter().enumerate() {
            if !spec.runs(name) {
                continue;
            }
            let mut got = Vec::new();
            let outcome = scenario(plan, pin, spec, rt, &mut got);
            record(results, i, &spec.name, group, &got, outcome);
        }
    }
}

fn p(lat: &mut [f64], q: f64) -> f64 {
    percentile(lat, q)
}

/// The 2026-07-28 rows: stdio sequential and 32 in flight; HTTP 16 clients (no session) and
/// one client sequential.
fn modern(
    plan: &Plan,
    pin: &Prefix,
    spec: &ServerSpec,
    rt: &tokio::runtime::Runtime,
    out: &mut Vec<Val>,
) -> Res<()> {
    use Better::{Higher, Lower};
    let mut server = StdioServer::start_in(pin, &spec.stdio, Era::Modern)?;
    let mut lat = server.sequential(plan.seq_warmup, plan.seq)?;
    out.push(Val::new(
        G_MODERN,
        "stdio sequential tools/call p50 (µs)".into(),
        Lower,
        p(&mut lat, 50.0),
    ));
    let warm = Budget {
        count: plan.pipe.count.min(5000),
        time: plan.pipe.time,
    };
    server.pipelined(32, warm)?;
    let (calls, elapsed) = server.pipelined(32, plan.pipe)?;
    server.close(Duration::from_secs(5));
    out.push(Val::new(
        G_MODERN,
        "stdio 32 in flight, calls/s".into(),
        Higher,
        calls as f64 / elapsed.as_secs_f64(),
    ));
    if spec.http.is_empty() {
        return Ok(());
    }
    let (mut child, addr) = crate::scenarios::start_http(pin, &spec.http, rt)?;
    let run = (|| {
        let warm = Budget {
            count: plan.http.count.min(2000),
            time: plan.http.time,
        };
        let threads = plan.driver_threads;
        http::throughput_in(Era::Modern, &addr, 16, threads, false, warm)?;
        let (calls, elapsed) =
            http::throughput_in(Era::Modern, &addr, 16, threads, false, plan.http)?;
        out.push(Val::new(
            G_MODERN,
            "HTTP 16 clients, calls/s".into(),
            Higher,
            calls as f64 / elapsed.as_secs_f64(),
        ));
        let mut lat = rt.block_on(http::sequential_in(
            Era::Modern,
            &addr,
            plan.seq_warmup,
            plan.seq,
        ))?;
        out.push(Val::new(
            G_MODERN,
            "HTTP one client sequential p50 (µs)".into(),
            Lower,
            p(&mut lat, 50.0),
        ));
        out.push(Val::new(
            G_MODERN,
            "HTTP one client sequential p99 (µs)".into(),
            Lower,
            p(&mut lat, 99.0),
        ));
        Res::Ok(())
    })();
    proc::kill(&mut child);
    run
}

/// A size as text: 64 KiB, 1 MiB.
pub(crate) fn size_name(bytes: usize) -> String {
    if bytes >= 1 << 20 {
        format!("{} MiB", bytes >> 20)
    } else if bytes >= 1 << 10 {
        format!("{} KiB", bytes >> 10)
    } else {
        format!("{bytes} B")
    }
}

/// Whether an answer to `tool` with `len` bytes of text is right (cheap: no parse).
fn payload_ok(tool: &str, len: usize, answer: &[u8]) -> bool {
    match tool {
        "size" => msg::contains(answer, format!("\"{len}\"").as_bytes()),
        _ => answer.len() > len,
    }
}

/// The calls the payload rows make: echo of each size, and a 1 MiB argument to `size`.
pub(crate) fn payload_calls(sizes: &[usize]) -> Vec<(&'static str, usize)> {
    let mut calls: Vec<(&str, usize)> = sizes.iter().map(|&s| ("echo", s)).collect();
    calls.push(("size", 1 << 20));
    calls
}

/// Big payloads, sequential, over stdio and HTTP (2026-07-28): MB/s of payload text (the
/// argument's text; `echo` also carries it back).
fn payload(
    plan: &Plan,
    pin: &Prefix,
    spec: &ServerSpec,
    rt: &tokio::runtime::Runtime,
    out: &mut Vec<Val>,
) -> Res<()> {
    let calls = payload_calls(&plan.payload_sizes);
    let mut server = StdioServer::start_in(pin, &spec.stdio, Era::Modern)?;
    for &(tool, size) in &calls {
        let args = msg::text_args(size);
        let (mut n, mut busy) = (0u64, Duration::ZERO);
        let start = Instant::now();
        // One untimed call first (buffers grown), then as many as the time allows (3 at least).
        for i in 0.. {
            if i > 3 && start.elapsed() > plan.payload_time {
                break;
            }
            let id = server.next_id();
            let line = msg::call_tool(Era::Modern, id, tool, &args);
            let (took, answer) = server.roundtrip(line.as_bytes())?;
            if !payload_ok(tool, size, answer) {
                return Err(format!("{tool} of {size} bytes: a wrong answer").into());
            }
            if i > 0 {
                n += 1;
                busy += took;
            }
        }
        out.push(Val::new(
            G_PAYLOAD,
            format!("stdio {tool} {}, MB/s", size_name(size)),
            Better::Higher,
            (size as u64 * n) as f64 / busy.as_secs_f64() / 1e6,
        ));
    }
    server.close(Duration::from_secs(5));
    if spec.http.is_empty() {
        return Ok(());
    }
    let (mut child, addr) = crate::scenarios::start_http(pin, &spec.http, rt)?;
    let run = rt.block_on(async {
        let mut c = http::Conn::connect_in(&addr, Era::Modern).await?;
        for &(tool, size) in &calls {
            let args = msg::text_args(size);
            let (mut n, mut busy) = (0u64, Duration::ZERO);
            let start = Instant::now();
            for i in 0.. {
                if i > 3 && start.elapsed() > plan.payload_time {
                    break;
                }
                let id = c.next_id();
                let body = msg::call_tool(Era::Modern, id, tool, &args);
                let (took, answer) = c
                    .roundtrip(body.as_bytes(), "tools/call", Some(tool))
                    .await?;
                if !payload_ok(tool, size, &answer) {
                    return Err(format!("{tool} of {size} bytes: a wrong answer").into());
                }
                if i > 0 {
                    n += 1;
                    busy += took;
                }
            }
            out.push(Val::new(
                G_PAYLOAD,
                format!("HTTP {tool} {}, MB/s", size_name(size)),
                Better::Higher,
                (size as u64 * n) as f64 / busy.as_secs_f64() / 1e6,
            ));
        }
        Res::Ok(())
    });
    proc::kill(&mut child);
    run
}

/// RSS of a fresh stateful server against the number of idle sessions, and the per-session
/// slope between the last two points.
fn idle_curve(
    plan: &Plan,
    pin: &Prefix,
    spec: &ServerSpec,
    rt: &tokio::runtime::Runtime,
    out: &mut Vec<Val>,
) -> Res<()> {
    if spec.http.is_empty() {
        return Ok(());
    }
    let (mut child, addr) = crate::scenarios::start_http(pin, &spec.http, rt)?;
    let pid = child.id();
    let run = (|| -> Res<()> {
        std::thread::sleep(plan.settle);
        let base = proc::rss_bytes(pid)? as f64;
        let mut open = 0u64;
        let mut points = Vec::new();
        let mut kept = Vec::new();
        for &n in &plan.idle_points {
            let budget = Budget {
                count: n - open,
                time: Duration::from_secs(120),
            };
            let (ids, _) = rt.block_on(http::open_sessions(&addr, 4, budget))?;
            open += ids.len() as u64;
            kept.extend(ids);
            std::thread::sleep(plan.settle);
            let rss = proc::rss_bytes(pid)? as f64;
            out.push(
                Val::new(
                    G_IDLE,
                    format!("RSS over the server at rest, {n} idle sessions (MB)"),
                    Better::Lower,
                    (rss - base) / 1e6,
                )
                .at(n as f64),
            );
            points.push((open, rss));
        }
        if let [.., (n0, r0), (n1, r1)] = points[..] {
            out.push(Val::new(
                G_IDLE,
                format!("per-session slope, {n0} → {n1} sessions (KB)"),
                Better::Lower,
                (r1 - r0) / (n1 - n0).max(1) as f64 / 1e3,
            ));
        }
        Ok(())
    })();
    proc::kill(&mut child);
    run
}

/// p50/p99 against concurrent HTTP clients (closed loop, one connection each, 2026-07-28).
fn latency_curve(
    plan: &Plan,
    pin: &Prefix,
    spec: &ServerSpec,
    rt: &tokio::runtime::Runtime,
    out: &mut Vec<Val>,
) -> Res<()> {
    if spec.http.is_empty() {
        return Ok(());
    }
    let (mut child, addr) = crate::scenarios::start_http(pin, &spec.http, rt)?;
    let run = rt.block_on(async {
        for &clients in &plan.clients {
            let mut conns = Vec::with_capacity(clients);
            for _ in 0..clients {
                let mut c = http::Conn::connect_in(&addr, Era::Modern).await?;
                c.call(true).await?;
                conns.push(c);
            }
            let deadline = Instant::now() + plan.client_time;
            let mut tasks = tokio::task::JoinSet::new();
            for mut c in conns {
                tasks.spawn(async move {
                    let mut lat = Vec::new();
                    while Instant::now() < deadline {
                        lat.push(c.call(false).await?.as_secs_f64() * 1e6);
                    }
                    Res::Ok(lat)
                });
            }
            let mut lat = Vec::new();
            while let Some(joined) = tasks.join_next().await {
                lat.extend(joined??);
            }
            let x = clients as f64;
            let label = |q: &str| format!("{q} with {clients} clients (µs)");
            out.push(Val::new(G_P50, label("p50"), Better::Lower, p(&mut lat, 50.0)).at(x));
            out.push(Val::new(G_P99, label("p99"), Better::Lower, p(&mut lat, 99.0)).at(x));
        }
        Res::Ok(())
    });
    proc::kill(&mut child);
    run
}

/// `argv` with `--tools N` appended (servers started with `--registry` take it).
pub(crate) fn with_tools(argv: &[String], n: usize) -> Vec<String> {
    let mut v = argv.to_vec();
    v.extend(["--tools".to_owned(), n.to_string()]);
    v
}

/// Lists every tool (following `nextCursor`); returns how many there were.
pub(crate) fn list_all(server: &mut StdioServer) -> Res<usize> {
    let mut cursor: Option<String> = None;
    let mut total = 0;
    loop {
        let id = server.next_id();
        let line = msg::tools_list(Era::Modern, id, cursor.as_deref());
        let (_, answer) = server.roundtrip(line.as_bytes())?;
        let (next, n) = msg::list_page(answer)?;
        total += n;
        match next {
            Some(c) => cursor = Some(c),
            None => return Ok(total),
        }
    }
}

/// One `tools/call` of `t{n/2}` (a registered tool in the middle of the registry).
pub(crate) fn call_registered(server: &mut StdioServer, n: usize) -> Res<Duration> {
    let id = server.next_id();
    let tool = format!("t{}", n / 2);
    let line = msg::call_tool(Era::Modern, id, &tool, "{\"text\":\"hello\"}");
    Ok(server.roundtrip(line.as_bytes())?.0)
}

/// `tools/call` p50 and one full `tools/list` (median) against the number of registered tools.
fn registry_curve(
    plan: &Plan,
    pin: &Prefix,
    spec: &ServerSpec,
    _rt: &tokio::runtime::Runtime,
    out: &mut Vec<Val>,
) -> Res<()> {
    if !spec.registry {
        return Ok(());
    }
    for &n in &plan.tools {
        let mut server = StdioServer::start_in(pin, &with_tools(&spec.stdio, n), Era::Modern)?;
        let listed = list_all(&mut server)?;
        if listed < n {
            return Err(format!("tools/list listed {listed} of {n} tools").into());
        }
        let mut calls = Vec::new();
        let start = Instant::now();
        while (calls.len() as u64) < plan.registry_calls.count
            && start.elapsed() < plan.registry_calls.time
        {
            calls.push(call_registered(&mut server, n)?.as_secs_f64() * 1e6);
        }
        let mut lists = Vec::new();
        let start = Instant::now();
        while (lists.len() as u64) < plan.registry_lists.count
            && start.elapsed() < plan.registry_lists.time
        {
            let t = Instant::now();
            list_all(&mut server)?;
            lists.push(t.elapsed().as_secs_f64() * 1e3);
        }
        server.close(Duration::from_secs(5));
        out.push(
            Val::new(
                G_REG_CALL,
                format!("tools/call p50 with {n} tools (µs)"),
                Better::Lower,
                p(&mut calls, 50.0),
            )
            .at(n as f64),
        );
        out.push(
            Val::new(
                G_REG_LIST,
                format!("tools/list, all pages, with {n} tools (ms)"),
                Better::Lower,
                p(&mut lists, 50.0),
            )
            .at(n as f64),
        );
    }
    Ok(())
}

/// The stdio command's binary, stripped (`strip -o`), in MB.
fn binary_size(
    _plan: &Plan,
    _pin: &Prefix,
    spec: &ServerSpec,
    _rt: &tokio::runtime::Runtime,
    out: &mut Vec<Val>,
) -> Res<()> {
    let Some(bin) = spec.stdio.first() else {
        return Ok(());
    };
    let full = std::fs::metadata(bin)?.len();
    let tmp = std::env::temp_dir().join(format!("ferromcp-bench-strip-{}", std::process::id()));
    let status = std::process::Command::new("strip")
        .arg("-o")
        .arg(&tmp)
        .arg(bin)
        .status()?;
    let stripped = std::fs::metadata(&tmp).map(|m| m.len());
    let _ = std::fs::remove_file(&tmp);
    if !status.success() {
        return Err(format!("strip {bin} failed").into());
    }
    out.push(Val::new(
        G_SIZE,
        "stripped binary (MB)".into(),
        Better::Lower,
        stripped? as f64 / 1e6,
    ));
    out.push(Val::new(
        G_SIZE,
        "binary as built (MB)".into(),
        Better::Lower,
        full as f64 / 1e6,
    ));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 19: the payload rows cover 64 KiB to 4 MiB echoes and a 1 MiB argument.
    #[test]
    fn payload_calls_and_names() {
        let calls = payload_calls(&[64 << 10, 1 << 20, 4 << 20]);
        assert_eq!(calls.last(), Some(&("size", 1 << 20)));
        assert_eq!(calls.len(), 4);
        assert_eq!(size_name(64 << 10), "64 KiB");
        assert_eq!(size_name(4 << 20), "4 MiB");
        assert_eq!(size_name(16), "16 B");
        assert!(payload_ok("size", 5, br#"{"text":"5"}"#));
        assert!(!payload_ok("echo", 5, b"{}"));
        assert_eq!(
            with_tools(&["s".to_owned()], 10),
            ["s", "--tools", "10"].map(str::to_owned)
        );
    }
}
