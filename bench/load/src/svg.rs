//! The growth curves as hand-written SVG line charts (no plotting library): x on a log scale
//! (sessions, tools, clients, bytes), y linear from 0, one line per server.

use std::fmt::Write;

use crate::report::{Results, fmt};

/// A tick label: 1, 20, 1.5k, 2M, 0.25.
fn short(v: f64) -> String {
    let trim = |s: String| {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_owned()
        } else {
            s
        }
    };
    let a = v.abs();
    if a >= 1e6 {
        format!("{}M", trim(format!("{:.2}", v / 1e6)))
    } else if a >= 1e3 {
        format!("{}k", trim(format!("{:.2}", v / 1e3)))
    } else {
        trim(format!("{v:.3}"))
    }
}

const W: f64 = 640.0;
const H: f64 = 360.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 150.0;
const TOP: f64 = 36.0;
const BOTTOM: f64 = 48.0;
const COLOURS: [&str; 6] = [
    "#d9480f", "#1971c2", "#2f9e44", "#7048e8", "#868e96", "#e8590c",
];

/// One line: a server's name and its (x, y) points, x ascending.
pub(crate) struct Series {
    pub(crate) name: String,
    pub(crate) points: Vec<(f64, f64)>,
}

/// The series of one group of rows (rows with an `x`), one per server with any point.
pub(crate) fn series_of(results: &Results, group: &str, names: &[&str]) -> Vec<Series> {
    let mut out = Vec::new();
    for (s, name) in names.iter().enumerate() {
        let mut points: Vec<(f64, f64)> = results
            .rows
            .iter()
            .filter(|r| r.group == group)
            .filter_map(|r| Some((r.x?, r.median(s)?)))
            .filter(|(x, y)| *x > 0.0 && y.is_finite())
            .collect();
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        if !points.is_empty() {
            out.push(Series {
                name: (*name).to_owned(),
                points,
            });
        }
    }
    out
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A chart: `title`, axis labels, and the lines.
pub(crate) fn chart(title: &str, x_label: &str, y_label: &str, series: &[Series]) -> String {
    let xs = series.iter().flat_map(|s| s.points.iter().map(|p| p.0));
    let (mut x0, mut x1) = (f64::MAX, f64::MIN);
    for x in xs {
        x0 = x0.min(x);
        x1 = x1.max(x);
    }
    if x0 > x1 {
        (x0, x1) = (1.0, 10.0);
    }
    let (lx0, lx1) = (
        x0.log10().floor(),
        x1.log10().ceil().max(x0.log10().floor() + 1.0),
    );
    let y1 = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .fold(0.0_f64, f64::max);
    let step = nice_step(y1 / 5.0);
    let y1 = (y1 / step).ceil().max(1.0) * step;
    let pw = W - LEFT - RIGHT;
    let ph = H - TOP - BOTTOM;
    let px = |x: f64| LEFT + (x.log10() - lx0) / (lx1 - lx0) * pw;
    let py = |y: f64| TOP + ph - y / y1 * ph;
    let mut o = String::new();
    let _ = write!(
        o,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{W}\" height=\"{H}\" \
         viewBox=\"0 0 {W} {H}\" font-family=\"sans-serif\" font-size=\"12\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"{LEFT}\" y=\"20\" font-size=\"14\" font-weight=\"bold\">{}</text>\n",
        esc(title)
    );
    // Grid and ticks.
    let mut d = lx0;
    while d <= lx1 + 1e-9 {
        let x = px(10f64.powf(d));
        let _ = writeln!(
            o,
            "<line x1=\"{x:.1}\" y1=\"{TOP}\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"#e9ecef\"/>\
             <text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            TOP + ph,
            TOP + ph + 16.0,
            short(10f64.powf(d))
        );
        d += 1.0;
    }
    let mut y = 0.0;
    while y <= y1 + step * 1e-6 {
        let v = py(y);
        let _ = writeln!(
            o,
            "<line x1=\"{LEFT}\" y1=\"{v:.1}\" x2=\"{:.1}\" y2=\"{v:.1}\" stroke=\"#e9ecef\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            LEFT + pw,
            LEFT - 6.0,
            v + 4.0,
            short(y)
        );
        y += step;
    }
    let _ = writeln!(
        o,
        "<rect x=\"{LEFT}\" y=\"{TOP}\" width=\"{pw}\" height=\"{ph}\" fill=\"none\" stroke=\"#495057\"/>\n\
         <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{} (log scale)</text>\n\
         <text transform=\"translate(16 {:.1}) rotate(-90)\" text-anchor=\"middle\">{}</text>",
        LEFT + pw / 2.0,
        H - 10.0,
        esc(x_label),
        TOP + ph / 2.0,
        esc(y_label)
    );
    for (i, s) in series.iter().enumerate() {
        let c = COLOURS[i % COLOURS.len()];
        let pts: Vec<String> = s
            .points
            .iter()
            .map(|&(x, y)| format!("{:.1},{:.1}", px(x), py(y)))
            .collect();
        let _ = writeln!(
            o,
            "<polyline points=\"{}\" fill=\"none\" stroke=\"{c}\" stroke-width=\"2\"/>",
            pts.join(" ")
        );
        for &(x, y) in &s.points {
            let _ = writeln!(
                o,
                "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\" fill=\"{c}\"><title>{}: {} → {}</title></circle>",
                px(x),
                py(y),
                esc(&s.name),
                fmt(x),
                fmt(y)
            );
        }
        let ly = TOP + 14.0 + 18.0 * i as f64;
        let _ = writeln!(
            o,
            "<line x1=\"{:.1}\" y1=\"{ly:.1}\" x2=\"{:.1}\" y2=\"{ly:.1}\" stroke=\"{c}\" stroke-width=\"2\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\">{}</text>",
            LEFT + pw + 10.0,
            LEFT + pw + 30.0,
            LEFT + pw + 36.0,
            ly + 4.0,
            esc(&s.name)
        );
    }
    o.push_str("</svg>\n");
    o
}

/// 1, 2 or 5 times a power of ten, at least `raw`.
fn nice_step(raw: f64) -> f64 {
    if raw <= 0.0 || !raw.is_finite() {
        return 1.0;
    }
    let p = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * p)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * p)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 19: the curves are plain SVG with one line and one legend entry per server.
    #[test]
    fn a_chart_has_a_line_per_series() {
        let s = [
            Series {
                name: "a".into(),
                points: vec![(1.0, 2.0), (10.0, 4.0), (1000.0, 8.0)],
            },
            Series {
                name: "b<c".into(),
                points: vec![(1.0, 1.0), (1000.0, 3.0)],
            },
        ];
        let svg = chart("t", "x", "y", &s);
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>\n"));
        assert_eq!(svg.matches("<polyline").count(), 2);
        assert_eq!(svg.matches("<circle").count(), 5);
        assert!(svg.contains("b&lt;c"));
        assert_eq!(nice_step(0.7), 1.0);
        assert_eq!(nice_step(13.0), 20.0);
        assert_eq!(
            [
                short(1.0),
                short(10.0),
                short(1500.0),
                short(2e6),
                short(0.25)
            ],
            ["1", "10", "1.5k", "2M", "0.25"]
        );
    }
}
