//! The scenarios, run round by round and interleaved: every scenario against every server
//! before the next scenario, each on a freshly started server process.

use std::time::{Duration, Instant};

use crate::proc::{self, Prefix, ServerSpec};
use crate::report::{Metric, Results, percentile};
use crate::stdio::{self, StdioServer};
use crate::{Budget, Opts, Res, http};

const READY: Duration = Duration::from_secs(20);
const EXIT: Duration = Duration::from_secs(5);
/// Sessions kept idle for the memory measurement.
const IDLE_SESSIONS: u64 = 1000;

/// Counts and times: full, or `--quick` (a smoke run: small counts, short loops).
struct Plan {
    seq: Budget,
    seq_warmup: u64,
    pipe: Budget,
    http: Budget,
    sessions: Budget,
    idle_sessions: u64,
    cold_starts: usize,
    /// Driver threads for the HTTP throughput loops (`--driver-threads`).
    driver_threads: usize,
}

impl Plan {
    fn new(quick: bool, driver_threads: usize) -> Self {
        let b = |count, ms| Budget {
            count,
            time: Duration::from_millis(ms),
        };
        if quick {
            Self {
                seq: b(200, 500),
                seq_warmup: 20,
                pipe: b(2000, 500),
                http: b(2000, 500),
                sessions: b(50, 500),
                idle_sessions: 50,
                cold_starts: 1,
                driver_threads,
            }
        } else {
            Self {
                seq: b(20_000, 5000),
                seq_warmup: 1000,
                pipe: b(10_000_000, 5000),
                http: b(10_000_000, 5000),
                sessions: b(2000, 5000),
                idle_sessions: IDLE_SESSIONS,
                cold_starts: 5,
                driver_threads,
            }
        }
    }
}

fn runtime() -> Res<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?)
}

/// The scenarios' names, for `--only`, in the order they run.
pub(crate) const NAMES: [&str; 8] = [
    "stdio-seq",
    "stdio-pipe",
    "http-stateful",
    "http-stateless",
    "http-seq",
    "sessions",
    "idle-memory",
    "cold-start",
];

/// Runs every scenario for `opts.rounds` rounds, then the callgrind counts if asked.
pub(crate) fn run_all(opts: &Opts) -> Res<Results> {
    let plan = Plan::new(opts.quick, opts.driver_threads);
    let pin = Prefix::pin(opts.server_cpu.as_deref());
    let rounds = if opts.quick { 1 } else { opts.rounds.max(1) };
    let rt = runtime()?;
    let mut results = Results::new(opts.servers.len());
    let rows_plan = crate::rows::Plan::new(opts.quick, opts.driver_threads);
    type Scenario = fn(
        &Plan,
        &Prefix,
        &ServerSpec,
        &tokio::runtime::Runtime,
        &mut Vec<(Metric, f64)>,
    ) -> Res<()>;
    // (name, needs an HTTP command, metrics, scenario)
    let scenarios: [(&str, bool, &[Metric], Scenario); 8] = [
        (
            NAMES[0],
            false,
            &[Metric::StdioSeqP50, Metric::StdioSeqP99, Metric::RssStdio],
            stdio_sequential,
        ),
        (
            NAMES[1],
            false,
            &[
                Metric::StdioPipeRate,
                Metric::StdioPipeCpu,
                Metric::StdioPipeCtx,
                Metric::StdioPipeDriver,
            ],
            stdio_pipelined,
        ),
        (
            NAMES[2],
            true,
            &[Metric::HttpStatefulRate, Metric::HttpStatefulDriver],
            http_stateful,
        ),
        (NAMES[3], true, &[Metric::HttpStatelessRate], http_stateless),
        (
            NAMES[4],
            true,
            &[Metric::HttpSeqP50, Metric::HttpSeqP99],
            http_sequential,
        ),
        (NAMES[5], true, &[Metric::SessionsRate], http_session_rate),
        (
            NAMES[6],
            true,
            &[Metric::IdleSessionMem, Metric::RssHttp],
            http_idle_memory,
        ),
        (
            NAMES[7],
            false,
            &[Metric::ColdStdio, Metric::ColdHttp],
            cold_starts,
        ),
    ];
    let wanted = |name: &str| {
        opts.only
            .as_ref()
            .is_none_or(|only| only.iter().any(|n| n == name))
    };
    for round in 0..rounds {
        eprintln!("ferromcp-bench: round {}/{rounds}", round + 1);
        for (name, needs_http, metrics, scenario) in &scenarios {
            if !wanted(name) {
                continue;
            }
            for (i, spec) in opts.servers.iter().enumerate() {
                // A server without an HTTP command (the raw floor) has no HTTP rows.
                if (*needs_http && spec.http.is_empty()) || !spec.runs(name) {
                    continue;
                }
                let mut got = Vec::new();
                match scenario(&plan, &pin, spec, &rt, &mut got) {
                    Ok(()) => {
                        for (m, v) in got {
                            results.push(m, i, v);
                        }
                    }
                    Err(e) => results.error(metrics, i, &spec.name, &e.to_string()),
                }
            }
        }
        crate::rows::run_round(opts, &rows_plan, &pin, &rt, &mut results, round);
    }
    if let Some(n) = opts.callgrind {
        std::fs::create_dir_all(&opts.callgrind_dir)?;
        for (i, spec) in opts.servers.iter().enumerate() {
            eprintln!("ferromcp-bench: callgrind, {}", spec.name);
            match instructions_stdio(spec, n, &opts.callgrind_dir) {
                Ok(v) => results.push(Metric::InstrStdio, i, v),
                Err(e) => results.error(&[Metric::InstrStdio], i, &spec.name, &e.to_string()),
            }
            if spec.http.is_empty() {
                continue;
            }
            match instructions_http(spec, n, &opts.callgrind_dir, &rt) {
                Ok(v) => results.push(Metric::InstrHttp, i, v),
                Err(e) => results.error(&[Metric::InstrHttp], i, &spec.name, &e.to_string()),
            }
        }
        crate::counted::run(opts, &rt, &mut results, n);
        if wanted("gateway") {
            crate::gateway::counted(opts, &mut results, n);
        }
    }
    Ok(results)
}

fn stdio_sequential(
    plan: &Plan,
    pin: &Prefix,
    spec: &ServerSpec,
    _rt: &tokio::runtime::Runtime,
    out: &mut Vec<(Metric, f64)>,
) -> Res<()> {
    let mut server = StdioServer::start(pin, &spec.stdio)?;
    std::thread::sleep(Duration::from_millis(100));
    out.push((
        Metric::RssStdio,
        proc::rss_bytes(server.child.id())? as f64 / 1e6,
    ));
    let mut lat = server.sequential(plan.seq_warmup, plan.seq)?;
    server.close(EXIT);
    out.push((Metric::StdioSeqP50, percentile(&mut lat, 50.0)));
    out.push((Metric::StdioSeqP99, percentile(&mut lat, 99.0)));
    Ok(())
}

fn stdio_pipelined(
    plan: &Plan,
    pin: &Prefix,
    spec: &ServerSpec,
    _rt: &tokio::runtime::Runtime,
    out: &mut Vec<(Metric, f64)>,
) -> Res<()> {
    let mut server = StdioServer::start(pin, &spec.stdio)?;
    let warm = Budget {
        count: plan.pipe.count.min(5000),
        time: plan.pipe.time,
    };
    server.pipelined(32, warm)?;
    let pid = server.child.id();
    let before = proc::usage(pid)?;
    let driver_before = proc::usage(std::process::id())?;
    let (calls, elapsed) = server.pipelined(32, plan.pipe)?;
    let after = proc::usage(pid)?;
    let driver_after = proc::usage(std::process::id())?;
    server.close(EXIT);
    let calls_f = calls.max(1) as f64;
    out.push((Metric::StdioPipeRate, calls_f / elapsed.as_secs_f64()));
    out.push((
        Metric::StdioPipeDriver,
        (driver_after.cpu_secs - driver_before.cpu_secs) * 100.0 / elapsed.as_secs_f64(),
    ));
    out.push((
        Metric::StdioPipeCpu,
        (after.cpu_secs - before.cpu_secs) * 1e6 / calls_f,
    ));
    out.push((
        Metric::StdioPipeCtx,
        after.ctx_switches.saturating_sub(before.ctx_switches) as f64 / calls_f,
    ));
    Ok(())
}

/// Starts an HTTP server command on a free port and waits until it answers `initialize`.
pub(crate) fn start_http(
    pin: &Prefix,
    argv: &[String],
    rt: &tokio::runtime::Runtime,
) -> Res<(std::process::Child, String)> {
    if argv.is_empty() {
        return Err("no HTTP command for this server".into());
    }
    let addr = proc::free_addr()?;
    let mut child = proc::spawn_http(pin, argv, &addr)?;
    if let Err(e) = rt.block_on(http::wait_ready(&addr, READY)) {
        proc::kill(&mut child);
        return Err(e);
    }
    Ok((child, addr))
}

fn http_rate(
    plan: &Plan,
    pin: &Prefix,
    argv: &[String],
    stateful: bool,
    rt: &tokio::runtime::Runtime,
) -> Res<(f64, f64)> {
    let (mut child, addr) = start_http(pin, argv, rt)?;
    let warm = Budget {
        count: plan.http.count.min(2000),
        time: plan.http.time,
    };
    let threads = plan.driver_threads;
    let run = (|| {
        http::throughput(&addr, 16, threads, stateful, warm)?;
        // The whole process's CPU time (every driver thread; the main thread only waits), over
        // the measured loop's wall time: the percentage of one CPU.
        let before = proc::usage(std::process::id())?;
        let (calls, elapsed) = http::throughput(&addr, 16, threads, stateful, plan.http)?;
        let after = proc::usage(std::process::id())?;
        let busy = (after.cpu_secs - before.cpu_secs) * 100.0 / elapsed.as_secs_f64();
        Res::Ok((calls as f64 / elapsed.as_secs_f64(), busy))
    })();
    proc::kill(&mut child);
    run
}

fn http_stateful(
    plan: &Plan,
    pin: &Prefix,
    spec: &ServerSpec,
    rt: &tokio::runtime::Runtime,
    out: &mut Vec<(Metric, f64)>,
) -> Res<()> {
    let (rate, driver) = http_rate(plan, pin, &spec.http, true, rt)?;
    out.push((Metric::HttpStatefulRate, rate));
    out.push((Metric::HttpStatefulDriver, driver));
    Ok(())
}

fn http_stateless(
    plan: &Plan,
    pin: &Prefix,
    spec: &ServerSpec,
    rt: &tokio::runtime::Runtime,
    out: &mut Vec<(Metric, f64)>,
) -> Res<()> {
    let (rate, _) = http_rate(plan, pin, &spec.http_stateless, false, rt)?;
    out.push((Metric::HttpStatelessRate, rate));
    Ok(())
}

fn http_sequential(
    plan: &Plan,
    pin: &Prefix,
    spec: &ServerSpec,
    rt: &tokio::runtime::Runtime,
    out: &mut Vec<(Metric, f64)>,
) -> Res<()> {
    let (mut child, addr) = start_http(pin, &spec.http, rt)?;
    let run = rt.block_on(http::sequential(&addr, plan.seq_warmup, plan.seq));
    proc::kill(&mut child);
    let mut lat = run?;
    out.push((Metric::HttpSeqP50, percentile(&mut lat, 50.0)));
    out.push((Metric::HttpSeqP99, percentile(&mut lat, 99.0)));
    Ok(())
}

/// Sessions opened per second over 4 connections (then deleted, untimed), on a fresh stateful
/// server.
fn http_session_rate(
    plan: &Plan,
    pin: &Prefix,
    spec: &ServerSpec,
    rt: &tokio::runtime::Runtime,
    out: &mut Vec<(Metric, f64)>,
) -> Res<()> {
    let (mut child, addr) = start_http(pin, &spec.http, rt)?;
    let run = rt.block_on(async {
        let (ids, elapsed) = http::open_sessions(&addr, 4, plan.sessions).await?;
        let rate = ids.len() as f64 / elapsed.as_secs_f64();
        http::delete_sessions(&addr, ids).await?;
        Res::Ok(rate)
    });
    proc::kill(&mut child);
    out.push((Metric::SessionsRate, run?));
    Ok(())
}

/// RSS at rest (after one `initialize`), then memory per 1,000 idle sessions (opened and kept),
/// on a fresh stateful server (so no freed memory from earlier sessions hides the cost).
fn http_idle_memory(
    plan: &Plan,
    pin: &Prefix,
    spec: &ServerSpec,
    rt: &tokio::runtime::Runtime,
    out: &mut Vec<(Metric, f64)>,
) -> Res<()> {
    let (mut child, addr) = start_http(pin, &spec.http, rt)?;
    let pid = child.id();
    let run = (|| -> Res<()> {
        std::thread::sleep(Duration::from_millis(200));
        let before = proc::rss_bytes(pid)?;
        out.push((Metric::RssHttp, before as f64 / 1e6));
        let idle = Budget {
            count: plan.idle_sessions,
            time: Duration::from_secs(60),
        };
        let (ids, _) = rt.block_on(http::open_sessions(&addr, 4, idle))?;
        std::thread::sleep(Duration::from_millis(300));
        let after = proc::rss_bytes(pid)?;
        let per_1000 = (after as f64 - before as f64) / ids.len().max(1) as f64 * 1000.0;
        out.push((Metric::IdleSessionMem, per_1000 / 1e6));
        Ok(())
    })();
    proc::kill(&mut child);
    run
}

fn median(mut v: Vec<f64>) -> f64 {
    percentile(&mut v, 50.0)
}

fn cold_starts(
    plan: &Plan,
    pin: &Prefix,
    spec: &ServerSpec,
    rt: &tokio::runtime::Runtime,
    out: &mut Vec<(Metric, f64)>,
) -> Res<()> {
    let mut s = Vec::new();
    let mut h = Vec::new();
    for _ in 0..plan.cold_starts {
        s.push(stdio::cold_start(pin, &spec.stdio)?);
        if !spec.http.is_empty() {
            let addr = proc::free_addr()?;
            let t0 = Instant::now();
            let mut child = proc::spawn_http(pin, &spec.http, &addr)?;
            let ms = rt.block_on(http::cold_start(&addr, t0, READY));
            proc::kill(&mut child);
            h.push(ms?);
        }
    }
    out.push((Metric::ColdStdio, median(s)));
    if !h.is_empty() {
        out.push((Metric::ColdHttp, median(h)));
    }
    Ok(())
}

/// Server instructions per stdio call: (Ir(n) − Ir(0)) / n, `n` sequential calls.
fn instructions_stdio(spec: &ServerSpec, n: u64, dir: &str) -> Res<f64> {
    let run = |calls: u64| -> Res<u64> {
        let out = format!("{dir}/{}-stdio-{calls}.out", spec.name);
        let mut server = StdioServer::start(&Prefix::callgrind(&out), &spec.stdio)?;
        for _ in 0..calls {
            server.call()?;
        }
        server.close(Duration::from_secs(120));
        proc::callgrind_total(&out)
    };
    let base = run(0)?;
    let full = run(n)?;
    Ok(full.saturating_sub(base) as f64 / n.max(1) as f64)
}

/// Server instructions per HTTP call (one session, sequential): (Ir(n) − Ir(0)) / n. The server
/// is ended with SIGTERM so that callgrind writes its output.
fn instructions_http(
    spec: &ServerSpec,
    n: u64,
    dir: &str,
    rt: &tokio::runtime::Runtime,
) -> Res<f64> {
    let run = |calls: u64| -> Res<u64> {
        let out = format!("{dir}/{}-http-{calls}.out", spec.name);
        let (mut child, addr) = start_http(&Prefix::callgrind(&out), &spec.http, rt)?;
        let driven = rt.block_on(async {
            let mut c = http::Conn::connect(&addr).await?;
            c.open(true).await?;
            for _ in 0..calls {
                c.call(true).await?;
            }
            Res::Ok(())
        });
        proc::terminate(&mut child, Duration::from_secs(120));
        driven?;
        proc::callgrind_total(&out)
    };
    let base = run(0)?;
    let full = run(n)?;
    Ok(full.saturating_sub(base) as f64 / n.max(1) as f64)
}
