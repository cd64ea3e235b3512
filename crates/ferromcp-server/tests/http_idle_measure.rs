//! How much an idle handshake-era session costs (DESIGN.md "Idle is cheap"): opens 2000
//! sessions and reports the growth of the process's resident memory per session. A
//! measurement, not a check (RSS is noisy): run it with
//! `cargo test -p ferromcp-server --test http_idle_measure -- --ignored --nocapture`.
#![cfg(feature = "http")]
#![allow(clippy::unwrap_used, clippy::panic)]

mod http_support;

use std::time::Duration;

use ferromcp_server::http::HttpConfig;
use http_support::*;

fn rss_kib() -> u64 {
    let s = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: u64 = s.split_whitespace().nth(1).unwrap().parse().unwrap();
    pages * 4
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement; run on demand"]
async fn idle_session_cost() {
    tokio::time::timeout(Duration::from_secs(120), async {
        let (addr, _) = start(HttpConfig::default()).await;
        for _ in 0..50 {
            open_session(addr, "2025-11-25").await;
        }
        let before = rss_kib();
        let n = 2000;
        for _ in 0..n {
            open_session(addr, "2025-11-25").await;
        }
        let after = rss_kib();
        let per = after.saturating_sub(before) as f64 / f64::from(n);
        eprintln!("RSS growth per idle session: {per:.2} KiB");
    })
    .await
    .unwrap();
}
