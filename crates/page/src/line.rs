//! Line charts: one polyline with dots per series, a legend on the right. Self-contained (no
//! script, no external resource), so the output also stands alone as an `.svg` file.
use std::fmt::Write as _;

use crate::{color, esc};

/// One series of a [`line_chart`].
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    /// The legend entry.
    pub name: String,
    /// (x, y) points, drawn in this order.
    pub points: Vec<(f64, f64)>,
    /// Drawn dashed (e.g. a p50 beside its solid p99 in the same colour family).
    pub dashed: bool,
}

/// A line chart with the title on top, `x_label` under the x axis and `y_label` along the y
/// axis. The x ticks are the points' x values; with `log_y` the y axis covers whole decades
/// and values ≤ 0.001 are drawn at 0.001 (the bottom edge when the data starts there).
pub fn line_chart(title: &str, x_label: &str, y_label: &str, series: &[Line], log_y: bool) -> String {
    let (w, h, l, r, t, b) = (760.0, 420.0, 70.0, 230.0, 40.0, 50.0);
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for &(x, y) in series.iter().flat_map(|s| s.points.iter()) {
        x0 = x0.min(x);
        x1 = x1.max(x);
        let y = if log_y { y.max(1e-3).log10() } else { y };
        y0 = y0.min(y);
        y1 = y1.max(y);
    }
    if x0 > x1 {
        (x0, x1, y0, y1) = (0.0, 1.0, 0.0, 1.0);
    }
    if log_y {
        y0 = y0.floor();
        y1 = y1.ceil().max(y0 + 1.0);
    } else {
        y0 = y0.min(0.0).min(y1 - 1.0);
        y1 = (y1 * 1.05).max(y0 + 1.0);
    }
    if x1 <= x0 {
        x1 = x0 + 1.0;
    }
    let px = |x: f64| l + (x - x0) / (x1 - x0) * (w - l - r);
    let py = |y: f64| {
        let y = if log_y { y.max(1e-3).log10() } else { y };
        h - b - (y - y0) / (y1 - y0) * (h - t - b)
    };
    let mut s = format!(
        r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" width="{w}" height="{h}" font-size="12" font-family="sans-serif"><rect width="{w}" height="{h}" fill="#fff"/><text x="{}" y="22" text-anchor="middle" font-weight="bold">{}</text>"##,
        (w - r + l) / 2.0,
        esc(title)
    );
    let _ = write!(
        s,
        r##"<line x1="{l}" y1="{0}" x2="{1}" y2="{0}" stroke="#000"/><line x1="{l}" y1="{t}" x2="{l}" y2="{0}" stroke="#000"/>"##,
        h - b,
        w - r
    );
    let mut xs: Vec<f64> = series.iter().flat_map(|s| s.points.iter().map(|q| q.0)).collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    for x in xs {
        let _ = write!(
            s,
            r##"<line x1="{0:.1}" y1="{1}" x2="{0:.1}" y2="{2}" stroke="#000"/><text x="{0:.1}" y="{3}" text-anchor="middle">{4}</text>"##,
            px(x),
            h - b,
            h - b + 5.0,
            h - b + 18.0,
            x
        );
    }
    let yticks: Vec<f64> = if log_y {
        (y0 as i32..=y1 as i32).map(|e| 10f64.powi(e)).collect()
    } else {
        (0..=5).map(|i| y0 + (y1 - y0) * i as f64 / 5.0).collect()
    };
    for y in yticks {
        let (yy, xr, lx) = (py(y), w - r, l - 6.0);
        let ty = yy + 4.0;
        let lab = if log_y { format!("{y}") } else { format!("{y:.0}") };
        let _ = write!(
            s,
            r##"<line x1="{l}" y1="{yy:.1}" x2="{xr}" y2="{yy:.1}" stroke="#ddd"/><text x="{lx}" y="{ty:.1}" text-anchor="end">{lab}</text>"##
        );
    }
    let _ = write!(
        s,
        r##"<text x="{}" y="{}" text-anchor="middle">{}</text><text x="16" y="{3}" text-anchor="middle" transform="rotate(-90 16 {3})">{4}</text>"##,
        (w - r + l) / 2.0,
        h - 12.0,
        esc(x_label),
        (h - b + t) / 2.0,
        esc(y_label)
    );
    for (i, line) in series.iter().enumerate() {
        let c = color(i);
        let dash = if line.dashed { r#" stroke-dasharray="5 3""# } else { "" };
        let pts: Vec<String> = line.points.iter().map(|&(x, y)| format!("{:.1},{:.1}", px(x), py(y))).collect();
        let _ =
            write!(s, r##"<polyline points="{}" fill="none" stroke="{c}" stroke-width="2"{dash}/>"##, pts.join(" "));
        for &(x, y) in &line.points {
            let _ = write!(s, r##"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{c}"/>"##, px(x), py(y));
        }
        let ly = t + 14.0 + 18.0 * i as f64;
        let _ = write!(
            s,
            r##"<line x1="{}" y1="{ly}" x2="{}" y2="{ly}" stroke="{c}" stroke-width="2"{dash}/><text x="{}" y="{}">{}</text>"##,
            w - r + 12.0,
            w - r + 36.0,
            w - r + 42.0,
            ly + 4.0,
            esc(&line.name)
        );
    }
    s + "</svg>"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(points: Vec<(f64, f64)>) -> Vec<Line> {
        vec![Line { name: "s".into(), points, dashed: false }]
    }

    #[test]
    fn chart_places_points_by_hand() {
        // x 0..10 over 70..530 px, y 0..105 (100 × 1.05) over 370..40 px.
        let svg = line_chart("t<", "x", "y", &one(vec![(0.0, 0.0), (10.0, 100.0)]), false);
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
        assert!(svg.contains("t&lt;"));
        assert!(svg.contains(r#"points="70.0,370.0 530.0,55.7""#), "{svg}");
        // Log scale: 1 and 100 ms span decades 0..2.
        let svg = line_chart("t", "x", "y", &one(vec![(0.0, 1.0), (10.0, 100.0)]), true);
        assert!(svg.contains(r#"points="70.0,370.0 530.0,40.0""#), "{svg}");
    }

    #[test]
    fn dashed_series_and_axis_labels() {
        let s = vec![Line { name: "p50 \"x\"".into(), points: vec![(1.0, 1.0)], dashed: true }];
        let svg = line_chart("t", "loss (%)", "ms", &s, false);
        // the y label turns about (16, (420 − 50 + 40) / 2) = (16, 205)
        assert_eq!(svg.matches(r#"stroke-dasharray="5 3""#).count(), 2, "line and legend");
        assert!(svg.contains("p50 &quot;x&quot;") && svg.contains(">loss (%)</text>"), "{svg}");
        assert!(svg.contains(r#"transform="rotate(-90 16 205)">ms</text>"#), "{svg}");
    }
}
