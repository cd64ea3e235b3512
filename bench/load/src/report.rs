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
pub(crate) enum Better {
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
    /// The issue-19 rows (`rows.rs`), in the order they were first seen.
    pub(crate) rows: Vec<Row>,
}

/// One row of the issue-19 tables: a group (one table, or one curve when the rows have an
/// `x`), a label, and per server one value per round.
#[derive(Debug, Clone)]
pub(crate) struct Row {
    pub(crate) group: &'static str,
    pub(crate) label: String,
    /// The curve's x (sessions, tools, clients, bytes); `None` for a plain row.
    pub(crate) x: Option<f64>,
    pub(crate) better: Better,
    values: Vec<Vec<f64>>,
    errors: Vec<Option<String>>,
}

impl Row {
    /// The median over the rounds of `server`'s values.
    pub(crate) fn median(&self, server: usize) -> Option<f64> {
        let mut v = self.values.get(server)?.clone();
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        Some(v[v.len() / 2])
    }
}

/// Where a row goes: its group, label, curve x and direction.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RowKey<'a> {
    pub(crate) group: &'static str,
    pub(crate) label: &'a str,
    pub(crate) x: Option<f64>,
    pub(crate) better: Better,
}

impl Results {
    /// Empty results for `servers` servers.
    pub(crate) fn new(servers: usize) -> Self {
        Self {
            values: vec![vec![Vec::new(); servers]; Metric::ALL.len()],
            errors: vec![vec![None; servers]; Metric::ALL.len()],
            rows: Vec::new(),
        }
    }

    fn row_mut(&mut self, key: RowKey<'_>) -> &mut Row {
        let servers = self.values.first().map_or(0, Vec::len);
        let i = match self
            .rows
            .iter()
            .position(|r| r.group == key.group && r.label == key.label)
        {
            Some(i) => i,
            None => {
                self.rows.push(Row {
                    group: key.group,
                    label: key.label.to_owned(),
                    x: key.x,
                    better: key.better,
                    values: vec![Vec::new(); servers],
                    errors: vec![None; servers],
                });
                self.rows.len() - 1
            }
        };
        &mut self.rows[i]
    }

    /// Records one round's value of an issue-19 row.
    pub(crate) fn row(&mut self, key: RowKey<'_>, server: usize, value: f64) {
        if let Some(v) = self.row_mut(key).values.get_mut(server) {
            v.push(value);
        }
    }

    /// Records an issue-19 row's failure (and says so on stderr).
    pub(crate) fn row_error(&mut self, key: RowKey<'_>, server: usize, name: &str, e: &str) {
        eprintln!("ferromcp-bench: {name}: {} / {}: {e}", key.group, key.label);
        if let Some(slot) = self.row_mut(key).errors.get_mut(server) {
            *slot = Some(e.to_owned());
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
            || self
                .rows
                .iter()
                .any(|r| r.errors.iter().any(Option::is_some))
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

pub(crate) fn fmt(v: f64) -> String {
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

/// The issue-19 rows as Markdown: one table per group, columns as in [`table`].
pub(crate) fn rows_table(opts: &Opts, results: &Results) -> String {
    let names: Vec<&str> = opts.servers.iter().map(|s| s.name.as_str()).collect();
    let mut out = String::new();
    let mut groups: Vec<&str> = Vec::new();
    for r in &results.rows {
        if !groups.contains(&r.group) {
            groups.push(r.group);
        }
    }
    let mut group = "";
    let ordered = groups
        .iter()
        .flat_map(|g| results.rows.iter().filter(move |r| r.group == *g));
    for row in ordered {
        if row.group != group {
            group = row.group;
            out.push_str(&format!("\n### {group}\n\n| row | {} |", names.join(" | ")));
            for other in names.iter().skip(1) {
                out.push_str(&format!(" {} / {other} |", names[0]));
            }
            out.push_str(" better |\n");
            out.push_str(&"|---".repeat(2 * names.len() + 1));
            out.push_str("|\n");
        }
        let cells: Vec<String> = (0..names.len())
            .map(
                |s| match (row.median(s), row.errors.get(s).and_then(Option::as_ref)) {
                    (Some(v), _) => fmt(v),
                    (None, Some(_)) => "error".to_owned(),
                    (None, None) => "–".to_owned(),
                },
            )
            .collect();
        out.push_str(&format!("| {} | {} |", row.label, cells.join(" | ")));
        for other in 1..names.len() {
            let r = match (row.median(0), row.median(other)) {
                (Some(a), Some(b)) if b != 0.0 => format!("{:.2}×", a / b),
                _ => "–".to_owned(),
            };
            out.push_str(&format!(" {r} |"));
        }
        let b = if row.better == Better::Lower {
            "lower"
        } else {
            "higher"
        };
        out.push_str(&format!(" {b} |\n"));
    }
    out
}

/// The issue-19 rows as CSV: `group,label,x,server,median,rounds` (rounds `;`-separated).
pub(crate) fn rows_csv(opts: &Opts, results: &Results) -> String {
    let mut out = String::from("group,label,x,server,median,rounds\n");
    for row in &results.rows {
        for (s, spec) in opts.servers.iter().enumerate() {
            let Some(m) = row.median(s) else { continue };
            let rounds: Vec<String> = row.values[s].iter().map(|v| format!("{v}")).collect();
            let x = row.x.map(|x| format!("{x}")).unwrap_or_default();
            out.push_str(&format!(
                "\"{}\",\"{}\",{x},{},{m},{}\n",
                row.group,
                row.label,
                spec.name,
                rounds.join(";")
            ));
        }
    }
    out
}

/// Rows read back from [`rows_csv`]'s output (medians as one round each), for `--replot`;
/// the server names in the order first seen.
pub(crate) fn rows_from_csv(text: &str) -> (Vec<String>, Results) {
    let mut names: Vec<String> = Vec::new();
    let mut parsed = Vec::new();
    for line in text.lines().skip(1) {
        // "group","label",x,server,median,rounds: the two quoted fields may hold commas.
        let Some(rest) = line.strip_prefix('"') else {
            continue;
        };
        let Some((group, rest)) = rest.split_once("\",\"") else {
            continue;
        };
        let Some((label, rest)) = rest.split_once("\",") else {
            continue;
        };
        let fields: Vec<&str> = rest.split(',').collect();
        let [x, server, median, ..] = fields[..] else {
            continue;
        };
        let Ok(median) = median.parse::<f64>() else {
            continue;
        };
        if !names.iter().any(|n| n == server) {
            names.push(server.to_owned());
        }
        parsed.push((
            group.to_owned(),
            label.to_owned(),
            x.parse::<f64>().ok(),
            server.to_owned(),
            median,
        ));
    }
    let mut results = Results::new(names.len());
    for (group, label, x, server, median) in parsed {
        // Groups are `&'static str` (the driver's constants); a replot lives as long as the
        // process, so leaking the few group names read back is harmless.
        let group: &'static str = Box::leak(group.into_boxed_str());
        let s = names.iter().position(|n| *n == server).unwrap_or(0);
        let key = RowKey {
            group,
            label: &label,
            x,
            better: Better::Lower,
        };
        results.row(key, s, median);
    }
    (names, results)
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
            csv: None,
            plots: None,
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

    /// Issue 19: rows measured interleaved print as one table per group, and go to CSV.
    #[test]
    fn issue_19_rows_group_into_tables_and_csv() {
        let server = |name: &str| ServerSpec {
            name: name.into(),
            ..ServerSpec::default()
        };
        let opts = Opts {
            servers: vec![server("a"), server("b")],
            rounds: 1,
            quick: true,
            only: None,
            check: true,
            server_cpu: None,
            driver_threads: 2,
            callgrind: None,
            callgrind_dir: String::new(),
            csv: None,
            plots: None,
        };
        fn key<'a>(group: &'static str, label: &'a str, x: Option<f64>) -> RowKey<'a> {
            RowKey {
                group,
                label,
                x,
                better: Better::Lower,
            }
        }
        let mut r = Results::new(2);
        for round in 0..2 {
            for n in [1.0, 10.0] {
                let (p50, p99) = (format!("p50 at {n}"), format!("p99 at {n}"));
                r.row(key("p50", &p50, Some(n)), 0, n + f64::from(round));
                r.row(key("p50", &p50, Some(n)), 1, 2.0 * n);
                r.row(key("p99", &p99, Some(n)), 0, 3.0 * n);
            }
        }
        let t = rows_table(&opts, &r);
        assert_eq!(t.matches("### p50").count(), 1);
        assert_eq!(t.matches("### p99").count(), 1);
        assert!(t.find("p50 at 10").unwrap() < t.find("### p99").unwrap());
        assert!(t.contains("| p50 at 10 | 11.0 | 20.0 | 0.55× | lower |"));
        assert!(t.contains("| p99 at 1 | 3.00 | – | – | lower |"));
        let csv = rows_csv(&opts, &r);
        assert!(csv.contains("\"p50\",\"p50 at 1\",1,a,2,1;2\n"));
        let (names, back) = rows_from_csv(&csv);
        assert_eq!(names, ["a", "b"]);
        assert_eq!(back.rows.len(), 4);
        assert_eq!(back.rows[0].median(0), Some(2.0));
        assert!(!r.failed());
        r.row_error(key("p99", "p99 at 1", Some(1.0)), 1, "b", "boom");
        assert!(r.failed() && rows_table(&opts, &r).contains("| p99 at 1 | 3.00 | error |"));
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
            csv: None,
            plots: None,
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
