//! `ferromcp-bench`: an end-to-end load driver for MCP servers. It speaks raw JSON-RPC at
//! protocol 2025-11-25 to any server command — newline-delimited over a child's stdio, and
//! Streamable HTTP over keep-alive connections with `TCP_NODELAY` — calling the tools `add` and
//! `echo`, and prints one table with every server's numbers and the ratio of the first to the
//! second. Rounds are interleaved (every scenario runs against every server before the next
//! scenario), and each number is the median over the rounds.
//!
//! ```text
//! ferromcp-bench [--rounds N] [--quick] [--only S,S…] [--server-cpu CPU] [--driver-threads N]
//!     [--callgrind N] [--callgrind-dir D] --server NAME --stdio 'CMD…' --http 'CMD… {addr}' --http-stateless 'CMD… {addr}'
//!     [--server NAME …]
//! ```
//!
//! Command lines are split on whitespace; `{addr}` becomes `127.0.0.1:PORT`. `--server-cpu`
//! pins every server with `taskset -c CPU` (pin the driver itself with `taskset` when starting
//! it). `--driver-threads N` (default 2) drives the HTTP throughput scenarios (`http-stateful`,
//! `http-stateless`) from N threads, each with its own current-thread runtime and its share of
//! the 16 connections (still 16 requests outstanding in all); every other scenario is driven by
//! one thread. The threads inherit the driver's CPU affinity (`taskset` on the driver).
//! `--callgrind N` also runs each server under `valgrind --tool=callgrind` for N sequential calls
//! and for none, and reports (Ir(N) − Ir(0)) / N. `--only` runs only the named scenarios
//! (`stdio-seq`, `stdio-pipe`, `http-stateful`, `http-stateless`, `http-seq`, `sessions`,
//! `idle-memory`, `cold-start`, and issue 19's `modern`, `payload`, `idle-curve`,
//! `latency-curve`, `registry-curve`, `binary-size`, `scale-out`, and issue 23's `gateway`; `none`
//! for just the callgrind counts).
//! `--check` makes every failed measurement an error (exit status 1), for CI's smoke run.
//!
//! Issue 19's rows (`rows.rs`, `counted.rs`) print as tables after the issue-9 table;
//! `--csv FILE` writes them as CSV and `--plots DIR` draws each curve as an SVG there.
//! `--registry` after a server's commands says it takes `--tools N` (the registry curves);
//! `--http-redis 'CMD {addr} --redis URL'` gives a node command for the scale-out rows;
//! `--gateway 'FERROMCP gateway'` gives the gateway command for the gateway-cost rows
//! (`gateway.rs`: the server's stdio command behind `ferromcp gateway`);
//! `--skip S,S…` after a server's commands leaves those scenarios out for it.
//! `ferromcp-bench --replot CSV DIR` draws the curves of a run's CSV again (no measuring).

mod counted;
mod gateway;
mod http;
mod msg;
mod proc;
mod report;
mod rows;
mod scaleout;
mod scenarios;
mod stdio;
mod svg;

use std::process::ExitCode;
use std::time::Duration;

use proc::ServerSpec;

/// The driver's result type (a binary: errors are reported, not matched on).
pub(crate) type Res<T> = Result<T, Box<dyn std::error::Error + Send + Sync>>;

/// How long a loop may run: at most `count` calls and at most `time`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Budget {
    pub(crate) count: u64,
    pub(crate) time: Duration,
}

/// Everything the command line says.
#[derive(Debug, Clone)]
pub(crate) struct Opts {
    pub(crate) servers: Vec<ServerSpec>,
    pub(crate) rounds: usize,
    pub(crate) quick: bool,
    /// Scenario names to run (`None`: all).
    pub(crate) only: Option<Vec<String>>,
    /// Fail (exit 1) when any measurement failed.
    pub(crate) check: bool,
    pub(crate) server_cpu: Option<String>,
    /// Threads driving the HTTP throughput scenarios.
    pub(crate) driver_threads: usize,
    pub(crate) callgrind: Option<u64>,
    pub(crate) callgrind_dir: String,
    /// Where the issue-19 rows go as CSV.
    pub(crate) csv: Option<String>,
    /// Where the curves go as SVG files.
    pub(crate) plots: Option<String>,
}

const USAGE: &str = "usage: ferromcp-bench [--rounds N] [--quick] [--only S,S...] [--check] \
[--server-cpu CPU] [--driver-threads N] [--callgrind N] [--callgrind-dir DIR] [--csv FILE] [--plots DIR] \
--server NAME --stdio 'CMD' --http 'CMD {addr}' --http-stateless 'CMD {addr}' [--http-redis 'CMD {addr} --redis URL'] [--gateway 'FERROMCP gateway'] [--registry] [--skip S,S...] [--server NAME ...]";

fn parse(args: &[String]) -> Res<Opts> {
    let mut opts = Opts {
        servers: Vec::new(),
        rounds: 3,
        quick: false,
        only: None,
        check: false,
        server_cpu: None,
        driver_threads: 2,
        callgrind: None,
        callgrind_dir: "target/bench-callgrind".to_owned(),
        csv: None,
        plots: None,
    };
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let mut value = || it.next().cloned().ok_or(format!("{flag} needs a value"));
        let words = |s: String| s.split_whitespace().map(str::to_owned).collect::<Vec<_>>();
        match flag.as_str() {
            "--quick" => opts.quick = true,
            "--check" => opts.check = true,
            "--only" => {
                let names: Vec<String> = value()?.split(',').map(str::to_owned).collect();
                for n in &names {
                    if n != "none"
                        && !scenarios::NAMES.contains(&n.as_str())
                        && !rows::NAMES.contains(&n.as_str())
                    {
                        return Err(format!(
                            "unknown scenario {n:?} (one of {}, {}, none)",
                            scenarios::NAMES.join(", "),
                            rows::NAMES.join(", ")
                        )
                        .into());
                    }
                }
                opts.only = Some(names);
            }
            "--rounds" => opts.rounds = value()?.parse()?,
            "--server-cpu" => opts.server_cpu = Some(value()?),
            "--driver-threads" => match value()?.parse()? {
                0 => return Err("--driver-threads must be at least 1".into()),
                n => opts.driver_threads = n,
            },
            "--callgrind" => opts.callgrind = Some(value()?.parse()?),
            "--callgrind-dir" => opts.callgrind_dir = value()?,
            "--csv" => opts.csv = Some(value()?),
            "--plots" => opts.plots = Some(value()?),
            "--skip" => {
                let names = value()?;
                opts.servers
                    .last_mut()
                    .ok_or("--skip before any --server")?
                    .skip = names.split(',').map(str::to_owned).collect();
            }
            "--registry" => {
                opts.servers
                    .last_mut()
                    .ok_or("--registry before any --server")?
                    .registry = true;
            }
            "--server" => opts.servers.push(ServerSpec {
                name: value()?,
                ..ServerSpec::default()
            }),
            "--stdio" | "--http" | "--http-stateless" | "--http-redis" | "--gateway" => {
                let argv = words(value()?);
                let spec = opts
                    .servers
                    .last_mut()
                    .ok_or(format!("{flag} before any --server"))?;
                match flag.as_str() {
                    "--stdio" => spec.stdio = argv,
                    "--http" => spec.http = argv,
                    "--http-redis" => spec.http_redis = argv,
                    "--gateway" => spec.gateway = argv,
                    _ => spec.http_stateless = argv,
                }
            }
            "--help" | "-h" => return Err(USAGE.into()),
            other => return Err(format!("unknown argument {other:?}\n{USAGE}").into()),
        }
    }
    if opts.servers.is_empty() {
        return Err(USAGE.into());
    }
    Ok(opts)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // `--replot CSV DIR`: draw the curves again from a run's CSV (no measuring).
    if let [flag, csv, dir] = &args[..]
        && flag == "--replot"
    {
        return match replot(csv, dir) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("ferromcp-bench: --replot: {e}");
                ExitCode::FAILURE
            }
        };
    }
    let opts = match parse(&args) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("ferromcp-bench: {e}");
            return ExitCode::FAILURE;
        }
    };
    match scenarios::run_all(&opts) {
        Ok(results) => {
            report::print(&format!(
                "HTTP throughput driven by {} driver thread(s) (16 connections split across them)\n\n",
                opts.driver_threads
            ));
            let table = report::table(&opts, &results);
            report::print(&table);
            report::print(&report::rows_table(&opts, &results));
            if let Err(e) = write_outputs(&opts, &results) {
                eprintln!("ferromcp-bench: writing the CSV and plots: {e}");
                return ExitCode::FAILURE;
            }
            if opts.check && results.failed() {
                eprintln!("ferromcp-bench: some measurements failed (see the table)");
                return ExitCode::FAILURE;
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("ferromcp-bench: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The issue-19 rows as CSV (`--csv`) and the curves as SVG (`--plots`).
fn write_outputs(opts: &Opts, results: &report::Results) -> Res<()> {
    if let Some(path) = &opts.csv {
        std::fs::write(path, report::rows_csv(opts, results))?;
    }
    let Some(dir) = &opts.plots else {
        return Ok(());
    };
    std::fs::create_dir_all(dir)?;
    let names: Vec<&str> = opts.servers.iter().map(|s| s.name.as_str()).collect();
    let mut groups: Vec<&str> = Vec::new();
    for r in results.rows.iter().filter(|r| r.x.is_some()) {
        if !groups.contains(&r.group) {
            groups.push(r.group);
        }
    }
    for group in groups {
        let (x_label, y_label) = axis_labels(group);
        let series = svg::series_of(results, group, &names);
        let file = format!("{dir}/{}.svg", slug(group));
        std::fs::write(&file, svg::chart(group, x_label, y_label, &series))?;
        eprintln!("ferromcp-bench: wrote {file}");
    }
    Ok(())
}

/// The curves of a run's CSV (`--csv`), drawn again into `dir`.
fn replot(csv: &str, dir: &str) -> Res<()> {
    let (names, results) = report::rows_from_csv(&std::fs::read_to_string(csv)?);
    let opts = Opts {
        servers: names
            .into_iter()
            .map(|name| proc::ServerSpec {
                name,
                ..proc::ServerSpec::default()
            })
            .collect(),
        ..parse(&["--server".to_owned(), String::new()])?
    };
    let opts = Opts {
        plots: Some(dir.to_owned()),
        ..opts
    };
    write_outputs(&opts, &results)
}

/// The axes of a curve.
fn axis_labels(group: &str) -> (&'static str, &'static str) {
    match group {
        rows::G_IDLE => ("idle sessions", "MB over the server at rest"),
        rows::G_P50 | rows::G_P99 => ("concurrent clients", "µs"),
        rows::G_REG_CALL => ("registered tools", "µs per call (p50)"),
        rows::G_REG_LIST => ("registered tools", "ms per full listing"),
        counted::G_INSTR_PAYLOAD => ("payload bytes", "instructions per call"),
        _ => ("registered tools", "instructions"),
    }
}

/// A file name from a group name: lower-case words joined by `-`.
fn slug(group: &str) -> String {
    let mut out = String::new();
    for word in group
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        if !out.is_empty() {
            out.push('-');
        }
        out.push_str(&word.to_ascii_lowercase());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| (*w).to_owned()).collect()
    }

    /// Issue 9: the HTTP throughput rows are driven by two threads unless told otherwise.
    #[test]
    fn driver_threads_default_two_and_at_least_one() {
        let base = ["--server", "a", "--stdio", "x"];
        assert_eq!(parse(&args(&base)).map(|o| o.driver_threads).ok(), Some(2));
        let mut one = args(&["--driver-threads", "1"]);
        one.extend(args(&base));
        assert_eq!(parse(&one).map(|o| o.driver_threads).ok(), Some(1));
        let mut zero = args(&["--driver-threads", "0"]);
        zero.extend(args(&base));
        assert!(parse(&zero).is_err());
    }
}
