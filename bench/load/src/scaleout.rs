//! Issue 19 point 7, scale-out: two nodes of the same server sharing one Redis (handshake-era
//! sessions: the 2026-07-28 era has none, so nothing of it goes through Redis), against one
//! node of the same binary with its in-memory stores. A server opts in with
//! `--http-redis 'CMD {addr} … --redis redis://HOST:PORT'`; the one-node baseline is that
//! command without `--redis URL`.
//!
//! Rows: throughput (16 sessions, closed loop) on one in-memory node; on two Redis nodes with
//! every request on the session's owner; and with every client's requests alternating
//! between the two nodes (half of them forwarded to the owner through Redis). Then Redis
//! commands per request (Redis's own `total_commands_processed`, minus what the nodes issue
//! when idle over the same time): on the owning node, and on the other node.

use std::io::{Read, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::http::Conn;
use crate::proc::{self, Prefix, ServerSpec};
use crate::report::Better;
use crate::rows::{Plan, Val};
use crate::{Budget, Res};

pub(crate) const G_SCALE: &str = "scale-out: two nodes sharing Redis (2025-11-25 sessions)";

/// `argv` without `--redis URL`, and the URL.
fn split_redis(argv: &[String]) -> (Vec<String>, Option<String>) {
    let mut plain = Vec::new();
    let mut url = None;
    let mut it = argv.iter();
    while let Some(w) = it.next() {
        if w == "--redis" {
            url = it.next().cloned();
        } else {
            plain.push(w.clone());
        }
    }
    (plain, url)
}

/// Redis's `total_commands_processed` (`INFO stats`), over a plain RESP connection.
fn redis_commands(url: &str) -> Res<u64> {
    let hostport = url
        .strip_prefix("redis://")
        .ok_or("only redis:// URLs")?
        .trim_end_matches('/');
    let mut s = std::net::TcpStream::connect(hostport)?;
    s.set_read_timeout(Some(Duration::from_secs(5)))?;
    s.write_all(b"*2\r\n$4\r\nINFO\r\n$5\r\nstats\r\n")?;
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        let n = s.read(&mut chunk)?;
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&chunk[..n]);
        let text = String::from_utf8_lossy(&buf);
        // A bulk string: `$LEN\r\n` then LEN bytes and `\r\n`.
        if let Some((head, rest)) = text.split_once("\r\n") {
            let len: usize = head.trim_start_matches('$').parse()?;
            if rest.len() >= len {
                break;
            }
        }
    }
    let text = String::from_utf8_lossy(&buf);
    text.lines()
        .find_map(|l| l.strip_prefix("total_commands_processed:"))
        .and_then(|v| v.trim().parse().ok())
        .ok_or_else(|| "no total_commands_processed in INFO stats".into())
}

/// Closed loop over `conns` sessions opened on `owner`; each client sends every other request
/// to `other` when given (the same session: forwarded through Redis). (calls, elapsed).
async fn split_throughput(
    owner: &str,
    other: Option<&str>,
    conns: usize,
    budget: Budget,
) -> Res<(u64, Duration)> {
    let mut ready = Vec::with_capacity(conns);
    for _ in 0..conns {
        let mut a = Conn::connect(owner).await?;
        a.open(true).await?;
        a.call(true).await?;
        let b = match other {
            Some(addr) => {
                let mut b = Conn::connect(addr).await?;
                b.set_session(a.session());
                b.call(true).await?;
                Some(b)
            }
            None => None,
        };
        ready.push((a, b));
    }
    let done = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let deadline = start + budget.time;
    let mut tasks = tokio::task::JoinSet::new();
    for (mut a, mut b) in ready {
        let done = done.clone();
        tasks.spawn(async move {
            let mut turn = 0u64;
            while Instant::now() < deadline && done.fetch_add(1, Ordering::Relaxed) < budget.count {
                turn += 1;
                match (&mut b, turn % 2) {
                    (Some(b), 0) => b.call(false).await?,
                    _ => a.call(false).await?,
                };
            }
            Res::Ok(())
        });
    }
    while let Some(joined) = tasks.join_next().await {
        joined??;
    }
    let calls = done.load(Ordering::Relaxed).saturating_sub(conns as u64);
    Ok((calls.min(budget.count), start.elapsed()))
}

/// Redis commands per request sent to `target` for a session owned by `owner`, minus the
/// nodes' idle rate over the same time.
fn commands_per_request(
    url: &str,
    owner: &str,
    target: &str,
    calls: u64,
    rt: &tokio::runtime::Runtime,
) -> Res<f64> {
    let mut c = rt.block_on(async {
        let mut a = Conn::connect(owner).await?;
        a.open(true).await?;
        let mut c = Conn::connect(target).await?;
        c.set_session(a.session());
        c.call(true).await?;
        Res::Ok(c)
    })?;
    let before = redis_commands(url)?;
    let t = Instant::now();
    rt.block_on(async {
        for _ in 0..calls {
            c.call(true).await?;
        }
        Res::Ok(())
    })?;
    let took = t.elapsed();
    let after = redis_commands(url)?;
    // The idle rate (heartbeats, blocked reads timing out) over as long.
    let idle0 = redis_commands(url)?;
    std::thread::sleep(took);
    let idle1 = redis_commands(url)?;
    let busy = after.saturating_sub(before).saturating_sub(1);
    let idle = idle1.saturating_sub(idle0).saturating_sub(1);
    Ok(busy.saturating_sub(idle) as f64 / calls.max(1) as f64)
}

/// The scale-out rows for one server (nothing without `--http-redis`).
pub(crate) fn scale_out(
    plan: &Plan,
    pin: &Prefix,
    spec: &ServerSpec,
    rt: &tokio::runtime::Runtime,
    out: &mut Vec<Val>,
) -> Res<()> {
    if spec.http_redis.is_empty() {
        return Ok(());
    }
    let (plain, url) = split_redis(&spec.http_redis);
    let url = url.ok_or("--http-redis needs `--redis URL` in its command")?;
    let rate = |calls: u64, d: Duration| calls as f64 / d.as_secs_f64();
    // One node, in-memory stores.
    let (mut child, addr) = crate::scenarios::start_http(pin, &plain, rt)?;
    let one = rt.block_on(split_throughput(&addr, None, 16, plan.http));
    proc::kill(&mut child);
    let (calls, d) = one?;
    out.push(Val::new(
        G_SCALE,
        "one node, in-memory stores: calls/s (16 sessions)".into(),
        Better::Higher,
        rate(calls, d),
    ));
    let (mut a, addr_a) = crate::scenarios::start_http(pin, &spec.http_redis, rt)?;
    let b = crate::scenarios::start_http(pin, &spec.http_redis, rt);
    let (mut b, addr_b) = match b {
        Ok(b) => b,
        Err(e) => {
            proc::kill(&mut a);
            return Err(e);
        }
    };
    let run = (|| -> Res<()> {
        let (calls, d) = rt.block_on(split_throughput(&addr_a, None, 16, plan.http))?;
        out.push(Val::new(
            G_SCALE,
            "two nodes, every request on the owning node: calls/s".into(),
            Better::Higher,
            rate(calls, d),
        ));
        let (calls, d) = rt.block_on(split_throughput(&addr_a, Some(&addr_b), 16, plan.http))?;
        out.push(Val::new(
            G_SCALE,
            "two nodes, requests alternating between the nodes: calls/s".into(),
            Better::Higher,
            rate(calls, d),
        ));
        let n = plan.seq.count.min(2000);
        let owner = commands_per_request(&url, &addr_a, &addr_a, n, rt)?;
        out.push(Val::new(
            G_SCALE,
            "Redis commands per request on the owning node".into(),
            Better::Lower,
            owner,
        ));
        let other = commands_per_request(&url, &addr_a, &addr_b, n, rt)?;
        out.push(Val::new(
            G_SCALE,
            "Redis commands per request on the other node (forwarded)".into(),
            Better::Lower,
            other,
        ));
        Ok(())
    })();
    proc::kill(&mut a);
    proc::kill(&mut b);
    run
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 19: the one-node baseline is the same command without `--redis URL`.
    #[test]
    fn the_baseline_drops_the_redis_url() {
        let argv: Vec<String> = ["n", "http", "{addr}", "--redis", "redis://h:1"]
            .map(str::to_owned)
            .into();
        let (plain, url) = split_redis(&argv);
        assert_eq!(plain, ["n", "http", "{addr}"].map(str::to_owned));
        assert_eq!(url.as_deref(), Some("redis://h:1"));
    }
}
