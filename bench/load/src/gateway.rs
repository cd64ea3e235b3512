//! Issue 23 point 5, the gateway's cost: a `tools/call` made directly to a server against the
//! same call made through `ferromcp gateway` with that server as its one stdio backend
//! (mounted as `b`, so the tools are `b_add` and `b_echo`). A server opts in with
//! `--gateway 'FERROMCP gateway'` (the command before the config file's path).
//!
//! Rows (2025-11-25): stdio sequential p50/p99 direct and through the gateway's stdio front,
//! and the latency the gateway adds; stdio 32 in flight, calls/s, both ways; the same
//! sequential rows over HTTP (the server's own `--http` command against `ferromcp gateway
//! --http` in front of its stdio command). Under `--callgrind N`: instructions per call of the
//! server called directly, and of the gateway process alone (under callgrind; its backend
//! child is not), and their ratio: the gateway's added cost in direct calls.
//!
//! The gateway's config lifts its rate limit (the default 600 calls a minute would end the
//! loops) and pings its backend once an hour (a ping every 2 s would land in the counts);
//! everything else is its default, the audit line per call on stderr included. When pinned,
//! the gateway and its backend (its child) share the server CPU.

use std::path::PathBuf;
use std::time::Duration;

use crate::msg::{self, Era};
use crate::proc::{self, Prefix, ServerSpec};
use crate::report::{Better, Results};
use crate::rows::{Plan, Val, record};
use crate::stdio::StdioServer;
use crate::{Budget, Opts, Res, http};

pub(crate) const G_GATEWAY: &str =
    "gateway: tools/call through `ferromcp gateway` against direct (2025-11-25)";

/// The mount name of the server behind the gateway: its tools are `b_add` and `b_echo`.
const MOUNT_PREFIX: &str = "b_";

/// Writes the gateway's config for `spec`'s stdio command (as `[servers.b]`); its path.
fn config(spec: &ServerSpec) -> Res<PathBuf> {
    let (command, args) = spec
        .stdio
        .split_first()
        .ok_or("no stdio command for this server")?;
    let quoted: Vec<String> = args.iter().map(|a| format!("{a:?}")).collect();
    let text = format!(
        "[rate_limit]\nper_principal = 4000000000\ntotal = 4000000000\n\n\
         [health]\nping_interval = 3600\n\n\
         [servers.b]\ncommand = {command:?}\nargs = [{}]\n",
        quoted.join(", ")
    );
    let path = std::env::temp_dir().join(format!(
        "ferromcp-bench-gateway-{}-{}.toml",
        std::process::id(),
        spec.name
    ));
    std::fs::write(&path, text)?;
    Ok(path)
}

/// The gateway's stdio command line for `config`, with `extra` options.
fn gateway_argv(spec: &ServerSpec, config: &std::path::Path, extra: &[&str]) -> Vec<String> {
    let mut argv = spec.gateway.clone();
    argv.push(config.display().to_string());
    argv.extend(extra.iter().map(|s| (*s).to_owned()));
    argv
}

/// Sequential calls over HTTP on one session, tools named with `prefix`: latencies in µs.
async fn http_sequential(addr: &str, prefix: &str, warmup: u64, budget: Budget) -> Res<Vec<f64>> {
    let mut c = http::Conn::connect(addr).await?;
    c.open(true).await?;
    let mut lat = Vec::new();
    let start = std::time::Instant::now();
    for i in 0.. {
        if i >= warmup && ((lat.len() as u64) >= budget.count || start.elapsed() >= budget.time) {
            break;
        }
        let id = c.next_id();
        let (tool, args) = msg::tool_of(id);
        let name = format!("{prefix}{tool}");
        let body = msg::call_tool(Era::Handshake, id, &name, args);
        let (took, _) = c
            .roundtrip(body.as_bytes(), "tools/call", Some(&name))
            .await?;
        if i >= warmup {
            lat.push(took.as_secs_f64() * 1e6);
        }
    }
    Ok(lat)
}

/// Sequential p50/p99 and 32-in-flight calls/s over stdio for one command.
fn stdio_rows(plan: &Plan, pin: &Prefix, argv: &[String], prefix: &str) -> Res<(f64, f64, f64)> {
    let mut server = StdioServer::start(pin, argv)?.with_tool_prefix(prefix);
    let mut lat = server.sequential(plan.seq_warmup, plan.seq)?;
    let warm = Budget {
        count: plan.pipe.count.min(5000),
        time: plan.pipe.time,
    };
    server.pipelined(32, warm)?;
    let (calls, elapsed) = server.pipelined(32, plan.pipe)?;
    server.close(Duration::from_secs(5));
    Ok((
        crate::report::percentile(&mut lat, 50.0),
        crate::report::percentile(&mut lat, 99.0),
        calls as f64 / elapsed.as_secs_f64(),
    ))
}

/// The timed rows (one round).
pub(crate) fn gateway(
    plan: &Plan,
    pin: &Prefix,
    spec: &ServerSpec,
    rt: &tokio::runtime::Runtime,
    out: &mut Vec<Val>,
) -> Res<()> {
    use Better::{Higher, Lower};
    if spec.gateway.is_empty() {
        return Ok(());
    }
    let path = config(spec)?;
    let through = gateway_argv(spec, &path, &[]);
    let (d50, d99, drate) = stdio_rows(plan, pin, &spec.stdio, "")?;
    let (g50, g99, grate) = stdio_rows(plan, pin, &through, MOUNT_PREFIX)?;
    let row = |label: &str, better, v| Val::new(G_GATEWAY, label.to_owned(), better, v);
    out.push(row("stdio sequential p50, direct (µs)", Lower, d50));
    out.push(row(
        "stdio sequential p50, through the gateway (µs)",
        Lower,
        g50,
    ));
    out.push(row(
        "stdio sequential p50 added by the gateway (µs)",
        Lower,
        g50 - d50,
    ));
    out.push(row("stdio sequential p99, direct (µs)", Lower, d99));
    out.push(row(
        "stdio sequential p99, through the gateway (µs)",
        Lower,
        g99,
    ));
    out.push(row(
        "stdio sequential p99 added by the gateway (µs)",
        Lower,
        g99 - d99,
    ));
    out.push(row("stdio 32 in flight, direct (calls/s)", Higher, drate));
    out.push(row(
        "stdio 32 in flight, through the gateway (calls/s)",
        Higher,
        grate,
    ));
    if spec.http.is_empty() {
        return Ok(());
    }
    let http_p = |argv: &[String], prefix: &str| -> Res<(f64, f64)> {
        let (mut child, addr) = crate::scenarios::start_http(pin, argv, rt)?;
        let lat = rt.block_on(http_sequential(&addr, prefix, plan.seq_warmup, plan.seq));
        proc::kill(&mut child);
        let mut lat = lat?;
        Ok((
            crate::report::percentile(&mut lat, 50.0),
            crate::report::percentile(&mut lat, 99.0),
        ))
    };
    let (d50, d99) = http_p(&spec.http, "")?;
    let (g50, g99) = http_p(
        &gateway_argv(spec, &path, &["--http", "{addr}"]),
        MOUNT_PREFIX,
    )?;
    out.push(row(
        "HTTP one client sequential p50, direct (µs)",
        Lower,
        d50,
    ));
    out.push(row(
        "HTTP sequential p50, through the gateway's HTTP front (µs)",
        Lower,
        g50,
    ));
    out.push(row(
        "HTTP sequential p50 added by the gateway (µs)",
        Lower,
        g50 - d50,
    ));
    out.push(row(
        "HTTP one client sequential p99, direct (µs)",
        Lower,
        d99,
    ));
    out.push(row(
        "HTTP sequential p99, through the gateway's HTTP front (µs)",
        Lower,
        g99,
    ));
    let _ = std::fs::remove_file(path);
    Ok(())
}

/// (Ir(n) − Ir(0)) / n of the process `argv` starts under callgrind (stdio, handshake era,
/// sequential calls with tools named with `prefix`).
fn instructions(argv: &[String], prefix: &str, out: &str, n: u64) -> Res<f64> {
    let run = |calls: u64| -> Res<u64> {
        let file = format!("{out}-{calls}.out");
        let mut server =
            StdioServer::start(&Prefix::callgrind(&file), argv)?.with_tool_prefix(prefix);
        for _ in 0..calls {
            server.call()?;
        }
        server.close(Duration::from_secs(300));
        proc::callgrind_total(&file)
    };
    let base = run(0)?;
    let full = run(n)?;
    Ok(full.saturating_sub(base) as f64 / n.max(1) as f64)
}

/// The callgrind rows (after the timed rounds): the server's instructions per direct call, the
/// gateway process's per call through it, and their ratio (below 1: the gateway adds less
/// than one direct call costs).
pub(crate) fn counted(opts: &Opts, results: &mut Results, n: u64) {
    let dir = &opts.callgrind_dir;
    for (i, spec) in opts.servers.iter().enumerate() {
        if spec.gateway.is_empty() || !spec.runs("gateway") {
            continue;
        }
        eprintln!("ferromcp-bench: callgrind, gateway, {}", spec.name);
        let mut got = Vec::new();
        let outcome = (|| {
            let direct = instructions(
                &spec.stdio,
                "",
                &format!("{dir}/{}-gw-direct", spec.name),
                n,
            )?;
            let path = config(spec)?;
            let gw = instructions(
                &gateway_argv(spec, &path, &[]),
                MOUNT_PREFIX,
                &format!("{dir}/{}-gw-gateway", spec.name),
                n,
            );
            let _ = std::fs::remove_file(path);
            let gw = gw?;
            let row = |label: &str, v| Val::new(G_GATEWAY, label.to_owned(), Better::Lower, v);
            got.push(row(
                "server instructions per call, direct (stdio, callgrind)",
                direct,
            ));
            got.push(row(
                "gateway process instructions per call (stdio front, callgrind)",
                gw,
            ));
            got.push(row(
                "gateway instructions per call / one direct call's",
                gw / direct.max(1.0),
            ));
            Res::Ok(())
        })();
        record(results, i, &spec.name, G_GATEWAY, &got, outcome);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 23: the gateway's config mounts the server's stdio command as `b`, lifts the
    /// rate limit and keeps pings out of the counts; the gateway command gets its path.
    #[test]
    fn gateway_config_and_command() {
        let spec = ServerSpec {
            name: "t".into(),
            stdio: vec!["/bin/srv".into(), "stdio".into()],
            gateway: vec!["/bin/ferromcp".into(), "gateway".into()],
            ..ServerSpec::default()
        };
        let path = config(&spec).unwrap_or_else(|e| unreachable!("{e}"));
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let _ = std::fs::remove_file(&path);
        assert!(
            text.contains("[servers.b]\ncommand = \"/bin/srv\"\nargs = [\"stdio\"]"),
            "{text}"
        );
        assert!(text.contains("per_principal = 4000000000"), "{text}");
        assert!(text.contains("ping_interval = 3600"), "{text}");
        let argv = gateway_argv(&spec, &path, &["--http", "{addr}"]);
        assert_eq!(argv[..2], ["/bin/ferromcp", "gateway"]);
        assert_eq!(argv[3..], ["--http", "{addr}"]);
    }
}
