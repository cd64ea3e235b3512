//! The metrics, their per-round values, and the table (medians, ratio of the first server to
//! the second).

use std::io::Write;

use crate::Opts;

/// Every number the driver reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Metric {
    StdioSeqP50,
    StdioSeqP99,
    StdioPipeRate,
    StdioPipeCpu,
    StdioPipeCtx,
    StdioPipeDriver,
    HttpStatefulRate,
    HttpStatefulDriver,
    HttpStatelessRate,
    HttpSeqP50,
    HttpSeqP99,
    SessionsRate,
    IdleSessionMem,
    ColdStdio,
    ColdHttp,
    RssStdio,
    RssHttp,
    InstrStdio,
    InstrHttp,
}

/// Whether bigger numbers are better.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Better {
    Lower,
    Higher,
}

impl Metric {
    /// All metrics, in table order.
    pub(crate) const ALL: [Metric; 19] = [
        Metric::StdioSeqP50,
        Metric::StdioSeqP99,
        Metric::StdioPipeRate,
        Metric::StdioPipeCpu,
        Metric::StdioPipeCtx,
        Metric::StdioPipeDriver,
        Metric::InstrStdio,
        Metric::HttpStatefulRate,
        Metric::HttpStatefulDriver,
        Metric::HttpStatelessRate,
        Metric::HttpSeqP50,
        Metric::HttpSeqP99,
        Metric::InstrHttp,
        Metric::SessionsRate,
        Metric::IdleSessionMem,
        Metric::ColdStdio,
        Metric::ColdHttp,
        Metric::RssStdio,
        Metric::RssHttp,
    ];

    fn label(self) -> (&'static str, Better) {
        use Better::{Higher, Lower};
        match self {
            Metric::StdioSeqP50 => ("stdio sequential tools/call p50 (µs)", Lower),
            Metric::StdioSeqP99 => ("stdio sequential tools/call p99 (µs)", Lower),
            Metric::StdioPipeRate => ("stdio 32 in flight, calls/s", Higher),
            Metric::StdioPipeCpu => ("server CPU per call, stdio 32 in flight (µs)", Lower),
            Metric::StdioPipeCtx => (
                "server context switches per call, stdio 32 in flight",
                Lower,
            ),
            Metric::StdioPipeDriver => ("driver CPU busy, stdio 32 in flight (%)", Lower),
            Metric::HttpStatefulDriver => ("driver CPU busy, HTTP stateful (%)", Lower),
            Metric::InstrStdio => ("server instructions per call, stdio (callgrind)", Lower),
            Metric::HttpStatefulRate => ("HTTP stateful, 16 sessions, calls/s", Higher),
            Metric::HttpStatelessRate => ("HTTP stateless, 16 clients, calls/s", Higher),
            Metric::HttpSeqP50 => ("HTTP one client sequential p50 (µs)", Lower),
            Metric::HttpSeqP99 => ("HTTP one client sequential p99 (µs)", Lower),
            Metric::InstrHttp => ("server instructions per call, HTTP (callgrind)", Lower),
            Metric::SessionsRate => ("sessions opened per second (4 connections)", Higher),
            Metric::IdleSessionMem => ("memory per 1,000 idle HTTP sessions (MB)", Lower),
            Metric::ColdStdio => ("cold start stdio, spawn → initialize answered (ms)", Lower),
            Metric::ColdHttp => ("cold start HTTP, spawn → initialize answered (ms)", Lower),
            Metric::RssStdio => ("RSS at rest, stdio (MB)", Lower),
            Metric::RssHttp => ("RSS at rest, HTTP (MB)", Lower),
        }
    }

    fn index(self) -> usize {
        Metric::ALL.iter().position(|&m| m == self).unwrap_or(0)
    }
}

/// Per metric, per server: one value per round (or the errors seen).
#[derive(Debug, Clone)]
pub(crate) struct Results {
    values: Vec<Vec<Vec<f64>>>,
    errors: Vec<Vec<Option<String>>>,
}

impl Results {
    /// Empty results for `servers` servers.
    pub(crate) fn new(servers: usize) -> Self {
        Self {
            values: vec![vec![Vec::new(); servers]; Metric::ALL.len()],
            errors: vec![vec![None; servers]; Metric::ALL.len()],
        }
    }

    /// Records one round's value.
    pub(crate) fn push(&mut self, metric: Metric, server: usize, value: f64) {
        if let Some(v) = self.values[metric.index()].get_mut(server) {
            v.push(value);
        }
    }

    /// Records an error (the last one is kept) and says so on stderr.
    pub(crate) fn error(&mut self, metrics: &[Metric], server: usize, name: &str, e: &str) {
        eprintln!("ferromcp-bench: {name}: {metrics:?}: {e}");
        for m in metrics {
            if let Some(slot) = self.errors[m.index()].get_mut(server) {
                *slot = Some(e.to_owned());
            }
        }
    }

    /// Whether any measurement failed.
    pub(crate) fn failed(&self) -> bool {
        self.errors.iter().flatten().any(Option::is_some)
    }

    fn median(&self, metric: Metric, server: usize) -> Option<f64> {
        let mut v = self.values[metric.index()].get(server)?.clone();
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        Some(v[v.len() / 2])
    }
}

/// A percentile (0–100) of unsorted samples.
pub(crate) fn percentile(samples: &mut [f64], p: f64) -> f64 {
    if samples.is_empty() {
        return f64::NAN;
    }
    samples.sort_by(f64::total_cmp);
    let rank = ((p / 100.0) * (samples.len() - 1) as f64).round() as usize;
    samples[rank.min(samples.len() - 1)]
}

fn fmt(v: f64) -> String {
    let a = v.abs();
    if a >= 100_000.0 {
        format!("{:.0}k", v / 1000.0)
    } else if a >= 1000.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// The table as Markdown: one row per metric, one column per server, and the ratio of the first
/// server to the second (with which way is better).
pub(crate) fn table(opts: &Opts, results: &Results) -> String {
    let names: Vec<&str> = opts.servers.iter().map(|s| s.name.as_str()).collect();
    // One ratio column per server after the first: first / that one.
    let others = names.len().saturating_sub(1);
    let mut out = String::new();
    out.push_str(&format!("| scenario | {} |", names.join(" | ")));
    for other in names.iter().skip(1) {
        out.push_str(&format!(" {} / {other} |", names[0]));
    }
    if others > 0 {
        out.push_str(" better |");
    }
    out.push('\n');
    out.push_str(&"|---".repeat(names.len() + 1 + others + usize::from(others > 0)));
    out.push_str("|\n");
    for metric in Metric::ALL {
        let (label, better) = metric.label();
        let cells: Vec<String> = (0..names.len())
            .map(|s| {
                match (
                    results.median(metric, s),
                    &results.errors[metric.index()][s],
                ) {
                    (Some(v), _) => fmt(v),
                    (None, Some(_)) => "error".to_owned(),
                    (None, None) => "–".to_owned(),
                }
            })
            .collect();
        if cells.iter().all(|c| c == "–") {
            continue;
        }
        out.push_str(&format!("| {label} | {} |", cells.join(" | ")));
        for other in 1..names.len() {
            let r = match (results.median(metric, 0), results.median(metric, other)) {
                (Some(a), Some(b)) if b != 0.0 => format!("{:.2}×", a / b),
                _ => "–".to_owned(),
            };
            out.push_str(&format!(" {r} |"));
        }
        if others > 0 {
            let b = if better == Better::Lower {
                "lower"
            } else {
                "higher"
            };
            out.push_str(&format!(" {b} |"));
        }
        out.push('\n');
    }
    out
}

/// Prints to stdout (a closed stdout is not an error worth reporting).
pub(crate) fn print(text: &str) {
    let _ = std::io::stdout().write_all(text.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proc::ServerSpec;

    #[test]
    fn percentiles_medians_and_ratios() {
        let mut v = vec![5.0, 1.0, 3.0, 2.0, 4.0];
        assert_eq!(percentile(&mut v, 50.0), 3.0);
        assert_eq!(percentile(&mut v, 100.0), 5.0);
        let opts = Opts {
            servers: vec![
                ServerSpec {
                    name: "a".into(),
                    ..ServerSpec::default()
                },
                ServerSpec {
                    name: "b".into(),
                    ..ServerSpec::default()
                },
            ],
            rounds: 3,
            quick: false,
            only: None,
            check: false,
            server_cpu: None,
            driver_threads: 2,
            callgrind: None,
            callgrind_dir: String::new(),
        };
        let mut r = Results::new(2);
        for (a, b) in [(10.0, 20.0), (30.0, 40.0), (20.0, 30.0)] {
            r.push(Metric::StdioSeqP50, 0, a);
            r.push(Metric::StdioSeqP50, 1, b);
        }
        r.error(&[Metric::HttpSeqP50], 1, "b", "boom");
        let t = table(&opts, &r);
        assert!(
            t.contains("| stdio sequential tools/call p50 (µs) | 20.0 | 30.0 | 0.67× | lower |")
        );
        assert!(t.contains("| – | error | – | lower |"));
        assert!(!t.contains("RSS at rest"));
    }

    #[test]
    fn a_third_server_gets_its_own_ratio_column_and_failures_are_seen() {
        let server = |name: &str| ServerSpec {
            name: name.into(),
            ..ServerSpec::default()
        };
        let opts = Opts {
            servers: vec![server("ferromcp"), server("rmcp"), server("raw")],
            rounds: 1,
            quick: true,
            only: None,
            check: true,
            server_cpu: None,
            driver_threads: 2,
            callgrind: None,
            callgrind_dir: String::new(),
        };
        let mut r = Results::new(3);
        r.push(Metric::StdioPipeRate, 0, 100.0);
        r.push(Metric::StdioPipeRate, 1, 50.0);
        r.push(Metric::StdioPipeRate, 2, 200.0);
        assert!(!r.failed());
        let t = table(&opts, &r);
        assert!(t.starts_with("| scenario | ferromcp | rmcp | raw | ferromcp / rmcp | ferromcp / raw | better |\n|---|---|---|---|---|---|---|\n"));
        assert!(t.contains(
            "| stdio 32 in flight, calls/s | 100.0 | 50.0 | 200.0 | 2.00× | 0.50× | higher |"
        ));
        r.error(&[Metric::HttpSeqP50], 2, "raw", "boom");
        assert!(r.failed());
    }
}
