//! Issue 19's deterministic rows, run with `--callgrind N` after the timed rounds: server
//! instructions per call at 2026-07-28 (stdio and HTTP), against the payload size and against
//! the number of registered tools (callgrind), and bytes copied per payload byte (valgrind's
//! DHAT in copy mode: every byte through `memcpy`/`memmove` and friends). Each count is
//! (total(n steps) − total(0 steps)) / n on fresh server processes.

use std::time::Duration;

use crate::msg::{self, Era};
use crate::proc::{self, Prefix, ServerSpec};
use crate::report::{Better, Results};
use crate::rows::{self, G_MODERN, G_PAYLOAD, Val, record, size_name};
use crate::stdio::StdioServer;
use crate::{Opts, Res, http};

pub(crate) const G_INSTR_PAYLOAD: &str =
    "server instructions per call against payload size (stdio echo, 2026-07-28, callgrind)";
pub(crate) const G_INSTR_CALL: &str =
    "server instructions per tools/call against registered tools (stdio, callgrind)";
pub(crate) const G_INSTR_LIST: &str =
    "server instructions per tools/list (all pages) against registered tools (stdio, callgrind)";

/// Which valgrind tool counts.
#[derive(Clone, Copy)]
enum Tool {
    /// Instructions (`callgrind`).
    Callgrind,
    /// Bytes copied (`dhat --mode=copy`).
    DhatCopy,
}

impl Tool {
    fn prefix(self, out: &str) -> Prefix {
        match self {
            Tool::Callgrind => Prefix::callgrind(out),
            Tool::DhatCopy => Prefix(vec![
                "valgrind".into(),
                "--tool=dhat".into(),
                "--mode=copy".into(),
                format!("--dhat-out-file={out}"),
            ]),
        }
    }

    fn total(self, out: &str) -> Res<u64> {
        match self {
            Tool::Callgrind => proc::callgrind_total(out),
            Tool::DhatCopy => dhat_bytes(out),
        }
    }
}

/// Bytes copied in a DHAT copy-mode profile: the sum of `tb` over its program points.
fn dhat_bytes(path: &str) -> Res<u64> {
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path)?)?;
    let pps = v
        .get("pps")
        .and_then(serde_json::Value::as_array)
        .ok_or_else(|| format!("no pps in {path}"))?;
    Ok(pps
        .iter()
        .filter_map(|p| p.get("tb").and_then(serde_json::Value::as_u64))
        .sum())
}

type StdioStep<'a> = &'a dyn Fn(&mut StdioServer) -> Res<()>;

/// (total(n) − total(0)) / n over stdio, `step` making one counted exchange.
fn per_step_stdio(tool: Tool, argv: &[String], out: &str, n: u64, step: StdioStep<'_>) -> Res<f64> {
    per_step_stdio_warm(tool, argv, out, 0, n, step)
}

/// [`per_step_stdio`] after `warm` uncounted steps in both runs: the steady cost of a step,
/// without what its first run pays once (the listing row: each version's entries are encoded
/// on their first listing, a one-off that used to be paid at registration, outside the row).
fn per_step_stdio_warm(
    tool: Tool,
    argv: &[String],
    out: &str,
    warm: u64,
    n: u64,
    step: StdioStep<'_>,
) -> Res<f64> {
    let run = |steps: u64| -> Res<u64> {
        let file = format!("{out}-{steps}.out");
        let mut server = StdioServer::start_in(&tool.prefix(&file), argv, Era::Modern)?;
        for _ in 0..warm + steps {
            step(&mut server)?;
        }
        server.close(Duration::from_secs(300));
        tool.total(&file)
    };
    let base = run(0)?;
    let full = run(n)?;
    Ok(full.saturating_sub(base) as f64 / n.max(1) as f64)
}

/// The same over HTTP (one connection, 2026-07-28); the server gets SIGTERM to write its file.
fn per_step_http(
    tool: Tool,
    argv: &[String],
    out: &str,
    n: u64,
    rt: &tokio::runtime::Runtime,
    body: &dyn Fn(u64) -> (String, String),
) -> Res<f64> {
    let run = |steps: u64| -> Res<u64> {
        let file = format!("{out}-{steps}.out");
        let (mut child, addr) = crate::scenarios::start_http(&tool.prefix(&file), argv, rt)?;
        let driven = rt.block_on(async {
            let mut c = http::Conn::connect_in(&addr, Era::Modern).await?;
            for _ in 0..steps {
                let id = c.next_id();
                let (line, name) = body(id);
                c.roundtrip(line.as_bytes(), "tools/call", Some(&name))
                    .await?;
            }
            Res::Ok(())
        });
        proc::terminate(&mut child, Duration::from_secs(300));
        driven?;
        tool.total(&file)
    };
    let base = run(0)?;
    let full = run(n)?;
    Ok(full.saturating_sub(base) as f64 / n.max(1) as f64)
}

/// Runs every counted row against every server (after the callgrind rows of issue 9).
pub(crate) fn run(opts: &Opts, rt: &tokio::runtime::Runtime, results: &mut Results, n: u64) {
    let plan = rows::Plan::new(opts.quick, opts.driver_threads);
    let dir = &opts.callgrind_dir;
    for (i, spec) in opts.servers.iter().enumerate() {
        eprintln!(
            "ferromcp-bench: callgrind and DHAT (issue 19 rows), {}",
            spec.name
        );
        let mut got = Vec::new();
        let outcome = modern(spec, n, dir, rt, &mut got);
        record(results, i, &spec.name, G_MODERN, &got, outcome);
        if spec.runs("payload") {
            let mut got = Vec::new();
            let outcome = payload(&plan, spec, n, dir, rt, &mut got);
            record(results, i, &spec.name, G_PAYLOAD, &got, outcome);
        }
        let mut got = Vec::new();
        let outcome = registry(&plan, spec, n, dir, &mut got);
        record(results, i, &spec.name, G_INSTR_CALL, &got, outcome);
    }
}

fn modern(
    spec: &ServerSpec,
    n: u64,
    dir: &str,
    rt: &tokio::runtime::Runtime,
    out: &mut Vec<Val>,
) -> Res<()> {
    let call = |s: &mut StdioServer| s.call().map(drop);
    let v = per_step_stdio(
        Tool::Callgrind,
        &spec.stdio,
        &format!("{dir}/{}-modern-stdio", spec.name),
        n,
        &call,
    )?;
    out.push(Val::new(
        G_MODERN,
        "server instructions per call, stdio (callgrind)".into(),
        Better::Lower,
        v,
    ));
    if spec.http.is_empty() {
        return Ok(());
    }
    let body = |id: u64| {
        let (tool, _) = msg::tool_of(id);
        (msg::call_in(Era::Modern, id), tool.to_owned())
    };
    let v = per_step_http(
        Tool::Callgrind,
        &spec.http,
        &format!("{dir}/{}-modern-http", spec.name),
        n,
        rt,
        &body,
    )?;
    out.push(Val::new(
        G_MODERN,
        "server instructions per call, HTTP (callgrind)".into(),
        Better::Lower,
        v,
    ));
    Ok(())
}

/// Instructions per echo against its size (stdio), and bytes copied per payload byte for a
/// 1 MiB echo and a 1 MiB argument (stdio and HTTP).
fn payload(
    plan: &rows::Plan,
    spec: &ServerSpec,
    n: u64,
    dir: &str,
    rt: &tokio::runtime::Runtime,
    out: &mut Vec<Val>,
) -> Res<()> {
    let sizes: &[usize] = if plan.payload_sizes.len() < 3 {
        &[16, 1 << 10]
    } else {
        &[16, 1 << 10, 16 << 10, 64 << 10, 1 << 20]
    };
    for &size in sizes {
        // Fewer calls for big texts: about 16 MiB in all, at least 5, at most `n`.
        let calls = calls_for(size, n);
        let args = msg::text_args(size);
        let step = |s: &mut StdioServer| {
            let id = s.next_id();
            s.roundtrip(msg::call_tool(Era::Modern, id, "echo", &args).as_bytes())
                .map(drop)
        };
        let v = per_step_stdio(
            Tool::Callgrind,
            &spec.stdio,
            &format!("{dir}/{}-echo-{size}", spec.name),
            calls,
            &step,
        )?;
        out.push(
            Val::new(
                G_INSTR_PAYLOAD,
                format!("echo of {}", size_name(size)),
                Better::Lower,
                v,
            )
            .at(size as f64),
        );
    }
    let size = 1usize << 20;
    let args = msg::text_args(size);
    let k = 4;
    for tool in ["echo", "size"] {
        let step = |s: &mut StdioServer| {
            let id = s.next_id();
            s.roundtrip(msg::call_tool(Era::Modern, id, tool, &args).as_bytes())
                .map(drop)
        };
        let v = per_step_stdio(
            Tool::DhatCopy,
            &spec.stdio,
            &format!("{dir}/{}-dhat-stdio-{tool}", spec.name),
            k,
            &step,
        )?;
        out.push(Val::new(
            G_PAYLOAD,
            format!("bytes copied per payload byte, stdio {tool} 1 MiB (DHAT)"),
            Better::Lower,
            v / size as f64,
        ));
        if spec.http.is_empty() {
            continue;
        }
        let body = |id: u64| {
            (
                msg::call_tool(Era::Modern, id, tool, &args),
                tool.to_owned(),
            )
        };
        let v = per_step_http(
            Tool::DhatCopy,
            &spec.http,
            &format!("{dir}/{}-dhat-http-{tool}", spec.name),
            k,
            rt,
            &body,
        )?;
        out.push(Val::new(
            G_PAYLOAD,
            format!("bytes copied per payload byte, HTTP {tool} 1 MiB (DHAT)"),
            Better::Lower,
            v / size as f64,
        ));
    }
    Ok(())
}

/// Calls for the instruction curve at `size`: about 16 MiB of text in all, at least 5, at
/// most `n` (the `--callgrind` count, which CI's smoke run sets to 2).
fn calls_for(size: usize, n: u64) -> u64 {
    (((16usize << 20) / size.max(1)).max(5) as u64).min(n.max(1))
}

/// Instructions per `tools/call` and per full `tools/list` against the registered tools.
fn registry(
    plan: &rows::Plan,
    spec: &ServerSpec,
    n: u64,
    dir: &str,
    out: &mut Vec<Val>,
) -> Res<()> {
    if !spec.registry {
        return Ok(());
    }
    for &tools in &plan.tools {
        let argv = rows::with_tools(&spec.stdio, tools);
        let call = |s: &mut StdioServer| rows::call_registered(s, tools).map(drop);
        let v = per_step_stdio(
            Tool::Callgrind,
            &argv,
            &format!("{dir}/{}-tools-{tools}-call", spec.name),
            n.clamp(1, 500),
            &call,
        )?;
        out.push(
            Val::new(
                G_INSTR_CALL,
                format!("tools/call with {tools} tools"),
                Better::Lower,
                v,
            )
            .at(tools as f64),
        );
        let list = |s: &mut StdioServer| rows::list_all(s).map(drop);
        // One uncounted listing first: the steady cost per listing.
        let v = per_step_stdio_warm(
            Tool::Callgrind,
            &argv,
            &format!("{dir}/{}-tools-{tools}-list", spec.name),
            1,
            n.clamp(1, 10),
            &list,
        )?;
        out.push(
            Val::new(
                G_INSTR_LIST,
                format!("tools/list (all pages) with {tools} tools"),
                Better::Lower,
                v,
            )
            .at(tools as f64),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 19: the payload curve's call count stays within `--callgrind N` however small N is
    /// (CI's smoke run: 2), without a panic.
    #[test]
    fn payload_curve_calls_stay_within_n() {
        assert_eq!(calls_for(16, 1000), 1000);
        assert_eq!(calls_for(1 << 20, 1000), 16);
        assert_eq!(calls_for(4 << 20, 1000), 5);
        assert_eq!(calls_for(16, 2), 2);
        assert_eq!(calls_for(1 << 20, 2), 2);
        assert_eq!(calls_for(16, 0), 1);
    }
}
