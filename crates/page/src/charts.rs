//! Box plots, bars with confidence intervals, grouped horizontal bars and radar charts. Text is
//! left to the browser (no font metrics needed); value axes switch to log scale when the data
//! spans decades; every label goes through [`esc`].
use std::fmt::Write;

use crate::axis::{frame, Axis, BOTTOM, LEFT, RIGHT, TOP};
use crate::{color, esc};

/// Five-number box with Tukey whiskers and the points beyond them.
#[derive(Clone, Debug, PartialEq)]
pub struct BoxStats {
    /// First quartile.
    pub q1: f64,
    /// Median.
    pub median: f64,
    /// Third quartile.
    pub q3: f64,
    /// Lower whisker: the smallest sample at or above q1 − 1.5 IQR.
    pub lo: f64,
    /// Upper whisker: the largest sample at or below q3 + 1.5 IQR.
    pub hi: f64,
    /// The samples beyond the whiskers, ascending.
    pub outliers: Vec<f64>,
}

impl BoxStats {
    /// The box of `xs` (None when empty), its quartiles by `quantile(sorted, p)` (the caller's
    /// quantile definition, e.g. `lwcbench_stats::quantile_sorted`, so a box and the tables
    /// beside it agree).
    pub fn from_samples(xs: &[f64], quantile: impl Fn(&[f64], f64) -> f64) -> Option<Self> {
        if xs.is_empty() {
            return None;
        }
        let mut s = xs.to_vec();
        // total order: a NaN (the readers refuse one, other callers may not) cannot panic here
        s.sort_by(f64::total_cmp);
        let (q1, median, q3) = (quantile(&s, 0.25), quantile(&s, 0.5), quantile(&s, 0.75));
        let (flo, fhi) = (q1 - 1.5 * (q3 - q1), q3 + 1.5 * (q3 - q1));
        let inside: Vec<f64> = s.iter().copied().filter(|x| *x >= flo && *x <= fhi).collect();
        Some(BoxStats {
            q1,
            median,
            q3,
            lo: inside.first().copied().unwrap_or(q1),
            hi: inside.last().copied().unwrap_or(q3),
            outliers: s.into_iter().filter(|x| *x < flo || *x > fhi).collect(),
        })
    }
}

/// Box plots of times in ns: categories along x, one box per series inside each category.
/// `data[c][s]` is the box of series `s` in category `c` (None = not measured).
pub fn boxplot(
    categories: &[String],
    series: &[String],
    data: &[Vec<Option<BoxStats>>],
    y_label: &str,
    x_label: &str,
) -> String {
    let nser = series.len().max(1) as f64;
    let box_w = 12.0;
    let cat_w = nser * (box_w + 3.0) + 14.0;
    let w = (LEFT + RIGHT + cat_w * categories.len() as f64).max(520.0);
    let h = 400.0;
    let all = data.iter().flatten().flatten().flat_map(|b| [b.lo, b.hi].into_iter().chain(b.outliers.iter().copied()));
    let (mn, mx) = all.fold((f64::INFINITY, 0.0f64), |(a, b), v| (a.min(v), b.max(v)));
    let axis = Axis::new(mn, mx, None, h - BOTTOM, TOP);
    let mut s = frame(w, h, &axis, "ns", y_label, x_label, series);
    let cat_w = (w - LEFT - RIGHT) / categories.len().max(1) as f64;
    for (c, cat) in categories.iter().enumerate() {
        let x0 = LEFT + c as f64 * cat_w;
        if c % 2 == 1 {
            s += &format!(
                r##"<rect x="{x0:.1}" y="28" width="{cat_w:.1}" height="{}" fill="#f4f4f4" fill-opacity="0.6"/>"##,
                h - BOTTOM - TOP
            );
        }
        for (i, b) in data.get(c).into_iter().flatten().enumerate() {
            let Some(b) = b else { continue };
            let xc = x0 + (cat_w - nser * (box_w + 3.0)) / 2.0 + i as f64 * (box_w + 3.0) + box_w / 2.0;
            let col = color(i);
            let (y1, y3, ym, ylo, yhi) =
                (axis.px(b.q1), axis.px(b.q3), axis.px(b.median), axis.px(b.lo), axis.px(b.hi));
            s += &format!(r##"<line x1="{xc:.1}" x2="{xc:.1}" y1="{ylo:.1}" y2="{yhi:.1}" stroke="#333"/>"##);
            s += &format!(
                r##"<rect x="{:.1}" y="{:.1}" width="{box_w}" height="{:.1}" fill="{col}" fill-opacity="0.75" stroke="#333"><title>{}: median {:.1} ns, IQR {:.1}–{:.1} ns</title></rect>"##,
                xc - box_w / 2.0,
                y3.min(y1),
                (y1 - y3).abs().max(0.8),
                esc(&format!("{} {}", series.get(i).map(String::as_str).unwrap_or(""), cat)),
                b.median,
                b.q1,
                b.q3
            );
            s += &format!(
                r##"<line x1="{:.1}" x2="{:.1}" y1="{ym:.1}" y2="{ym:.1}" stroke="#000" stroke-width="2"/>"##,
                xc - box_w / 2.0,
                xc + box_w / 2.0
            );
            // Draw at most 12 outliers per box to keep the page light; the table has them all.
            for o in b.outliers.iter().take(12) {
                s += &format!(r##"<circle cx="{xc:.1}" cy="{:.1}" r="1.8" fill="none" stroke="{col}"/>"##, axis.px(*o));
            }
        }
        let lx = x0 + cat_w / 2.0;
        let ly = h - BOTTOM + 12.0;
        s += &format!(
            r##"<text transform="translate({lx:.1},{ly:.1}) rotate(-45)" text-anchor="end">{}</text>"##,
            esc(cat)
        );
    }
    s + "</svg>"
}

/// Bars with error bars: `bars[i] = (label, value, lo, hi)`, bar `i` in palette colour
/// `colors[i]` (its index where `colors` is short). Log scale when the values span 100×.
pub fn bars_ci(
    bars: &[(String, f64, f64, f64)],
    colors: &[usize],
    y_label: &str,
    x_label: &str,
    legend: &[String],
) -> String {
    let bw = 26.0;
    let w = (LEFT + RIGHT + bars.len() as f64 * (bw + 14.0)).max(420.0);
    let h = 380.0;
    let mx = bars.iter().map(|b| b.3.max(b.1)).fold(0.0f64, f64::max);
    let mn = bars.iter().map(|b| b.2.min(b.1)).filter(|v| *v > 0.0).fold(f64::INFINITY, f64::min);
    let log = mn.is_finite() && mx / mn > 100.0;
    let axis = Axis::new(if log { mn } else { 0.0 }, mx, Some(log), h - BOTTOM, TOP);
    let mut s = frame(w, h, &axis, "", y_label, x_label, legend);
    let step = (w - LEFT - RIGHT) / bars.len().max(1) as f64;
    let base = h - BOTTOM;
    for (i, (label, v, lo, hi)) in bars.iter().enumerate() {
        let xc = LEFT + step * (i as f64 + 0.5);
        let y = axis.px(*v);
        let col = color(colors.get(i).copied().unwrap_or(i));
        s += &format!(
            r##"<rect x="{:.1}" y="{y:.1}" width="{bw}" height="{:.1}" fill="{col}" fill-opacity="0.8"><title>{}: {:.3} (95 % CI {:.3}–{:.3})</title></rect>"##,
            xc - bw / 2.0,
            (base - y).max(0.5),
            esc(label),
            v,
            lo,
            hi
        );
        let (ylo, yhi) = (axis.px(*lo), axis.px(*hi));
        s += &format!(
            r##"<line x1="{xc:.1}" x2="{xc:.1}" y1="{ylo:.1}" y2="{yhi:.1}" stroke="#000" stroke-width="1.5"/>"##
        );
        for yy in [ylo, yhi] {
            s += &format!(
                r##"<line x1="{:.1}" x2="{:.1}" y1="{yy:.1}" y2="{yy:.1}" stroke="#000" stroke-width="1.5"/>"##,
                xc - 5.0,
                xc + 5.0
            );
        }
        s += &format!(
            r##"<text transform="translate({xc:.1},{:.1}) rotate(-45)" text-anchor="end">{}</text>"##,
            base + 12.0,
            esc(label)
        );
    }
    s + "</svg>"
}

/// Grouped horizontal bars on a linear axis from 0: one group per row (`rows[i] = (label,
/// values)`), one bar per series (`series[k]` names value `k`, in palette colour `k`), each
/// bar's value written after it. `unit` follows the value in the tooltips (e.g. `µs`).
pub fn hbars(title: &str, series: &[&str], rows: &[(String, Vec<f64>)], unit: &str) -> String {
    let n = series.len().max(1) as f64;
    let row_h = n * 12.0 + 14.0;
    let (left, right, top) = (230.0, 90.0, 30.0);
    let w = 760.0;
    let h = top + rows.len() as f64 * row_h + 30.0;
    let mx = rows.iter().flat_map(|r| r.1.iter().copied()).fold(0.0f64, f64::max).max(1e-9);
    let px = |v: f64| left + (w - left - right) * v / mx;
    let mut s = format!(
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h:.0}" font-family="sans-serif" font-size="12"><text x="{left}" y="18">{}</text>"##,
        esc(title)
    );
    for (k, name) in series.iter().enumerate() {
        let x = w - right + 10.0;
        let _ = write!(
            s,
            r##"<rect x="{x}" y="{:.0}" width="10" height="10" fill="{}"/><text x="{:.0}" y="{:.0}">{}</text>"##,
            top + k as f64 * 16.0,
            color(k),
            x + 14.0,
            top + k as f64 * 16.0 + 9.0,
            esc(name)
        );
    }
    for (i, (label, values)) in rows.iter().enumerate() {
        let y0 = top + i as f64 * row_h;
        let _ = write!(
            s,
            r##"<text x="{:.0}" y="{:.0}" text-anchor="end">{}</text>"##,
            left - 8.0,
            y0 + n * 6.0 + 4.0,
            esc(label)
        );
        for (k, v) in values.iter().enumerate() {
            let y = y0 + k as f64 * 12.0;
            let _ = write!(
                s,
                r##"<rect x="{left}" y="{y:.0}" width="{:.1}" height="10" fill="{}"><title>{}: {} {:.1} {}</title></rect><text x="{:.1}" y="{:.0}">{:.1}</text>"##,
                (px(*v) - left).max(0.5),
                color(k),
                esc(label),
                esc(series.get(k).copied().unwrap_or("")),
                v,
                esc(unit),
                px(*v) + 4.0,
                y + 9.0,
                v
            );
        }
    }
    s + "</svg>"
}

/// A radar (spider) chart: one axis per entry of `axes`, values in [0, 1] from the centre out,
/// one closed polygon per series. Rings at 0.25, 0.5, 0.75 and 1.
pub fn radar(axes: &[String], series: &[(String, Vec<f64>)], title: &str) -> String {
    let (w, h, cx, cy, r) = (720.0, 520.0, 300.0, 270.0, 190.0);
    let n = axes.len().max(3) as f64;
    let pt = |i: usize, v: f64| {
        let a = -std::f64::consts::FRAC_PI_2 + 2.0 * std::f64::consts::PI * i as f64 / n;
        (cx + r * v.clamp(0.0, 1.0) * a.cos(), cy + r * v.clamp(0.0, 1.0) * a.sin())
    };
    let mut s = format!(
        r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" width="{w}" height="{h}" font-size="12" font-family="system-ui,sans-serif"><rect width="{w}" height="{h}" fill="#fff"/><text x="{cx}" y="24" text-anchor="middle" font-weight="bold">{}</text>"##,
        esc(title)
    );
    for ring in [0.25, 0.5, 0.75, 1.0] {
        let pts: Vec<String> = (0..axes.len()).map(|i| pt(i, ring)).map(|(x, y)| format!("{x:.1},{y:.1}")).collect();
        let _ = write!(s, r##"<polygon points="{}" fill="none" stroke="#ccc"/>"##, pts.join(" "));
    }
    for (i, a) in axes.iter().enumerate() {
        let (x, y) = pt(i, 1.0);
        let (lx, ly) = pt(i, 1.12);
        let anchor = if (lx - cx).abs() < 5.0 {
            "middle"
        } else if lx > cx {
            "start"
        } else {
            "end"
        };
        let _ = write!(
            s,
            r##"<line x1="{cx}" y1="{cy}" x2="{x:.1}" y2="{y:.1}" stroke="#999"/><text x="{lx:.1}" y="{:.1}" text-anchor="{anchor}">{}</text>"##,
            ly + 4.0,
            esc(a)
        );
    }
    for (k, (name, vals)) in series.iter().enumerate() {
        let pts: Vec<String> =
            vals.iter().enumerate().map(|(i, &v)| pt(i, v)).map(|(x, y)| format!("{x:.1},{y:.1}")).collect();
        let col = color(k);
        let _ = write!(
            s,
            r##"<polygon points="{}" fill="{col}" fill-opacity="0.12" stroke="{col}" stroke-width="2"><title>{}</title></polygon>"##,
            pts.join(" "),
            esc(name)
        );
        let ly = 50.0 + 18.0 * k as f64;
        let _ = write!(
            s,
            r##"<rect x="560" y="{:.1}" width="12" height="12" fill="{col}"/><text x="578" y="{ly:.1}">{}</text>"##,
            ly - 10.0,
            esc(name)
        );
    }
    s + "</svg>"
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Type-7 quantile (linear between closest ranks), written out for the tests.
    fn q7(s: &[f64], p: f64) -> f64 {
        let h = (s.len() - 1) as f64 * p;
        let (lo, hi) = (h.floor() as usize, h.ceil() as usize);
        s[lo] + (h - lo as f64) * (s[hi] - s[lo])
    }

    #[test]
    fn box_stats_by_hand() {
        // 1..=9 and 100: q1 = 3.25, median 5.5, q3 = 7.75 (type 7), IQR 4.5, upper fence 14.5.
        let mut xs: Vec<f64> = (1..=9).map(f64::from).collect();
        xs.push(100.0);
        let b = BoxStats::from_samples(&xs, q7).unwrap();
        assert_eq!((b.q1, b.median, b.q3), (3.25, 5.5, 7.75));
        assert_eq!((b.lo, b.hi), (1.0, 9.0));
        assert_eq!(b.outliers, vec![100.0]);
        assert_eq!(BoxStats::from_samples(&[], q7), None);
    }

    #[test]
    fn box_stats_of_a_nan_do_not_panic() {
        // NaN sorts after every number: [1, 2, NaN], whose type-7 median is the middle value 2
        let b = BoxStats::from_samples(&[2.0, f64::NAN, 1.0], q7).unwrap();
        assert_eq!(b.median, 2.0);
    }

    #[test]
    fn charts_are_well_formed() {
        let b = BoxStats::from_samples(&[1.0, 2.0, 3.0], q7);
        let svg = boxplot(&["<s,s | 8>".into()], &["rust".into(), "c++".into()], &[vec![b.clone(), b]], "time", "x");
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
        assert!(svg.contains("&lt;s,s | 8&gt;"), "labels must be escaped");
        assert_eq!(svg.matches("<rect").count() - 1 /* background */ - 2 /* legend */, 2);
        let bars = bars_ci(&[("a".into(), 10.0, 9.0, 11.0)], &[0], "Mbit/s", "impl", &[]);
        assert!(bars.contains("<title>a: 10.000"));
    }

    #[test]
    fn a_boxplot_with_fewer_rows_than_categories_does_not_panic() {
        let svg = boxplot(&["a".into(), "b".into()], &["s".into()], &[], "t", "x");
        assert!(svg.ends_with("</svg>"));
    }

    #[test]
    fn hbars_by_hand() {
        // max 4 over 230..670 px: 2 is 220 px long; rows 3 × 12 + 14 = 50 px apart
        let rows = vec![("a<".to_string(), vec![1.0, 2.0, 4.0]), ("b".to_string(), vec![4.0, 4.0, 4.0])];
        let svg = hbars("t", &["p50", "p90", "p99"], &rows, "µs");
        assert!(
            svg.contains(
                r##"<rect x="230" y="42" width="220.0" height="10" fill="#E69F00"><title>a&lt;: p90 2.0 µs</title>"##
            ),
            "{svg}"
        );
        assert!(svg.contains(r#"<text x="222" y="102" text-anchor="end">b</text>"#), "{svg}");
    }

    #[test]
    fn radar_is_well_formed_and_scaled() {
        let axes: Vec<String> = ["a", "b", "c", "d"].iter().map(|s| s.to_string()).collect();
        let svg = radar(&axes, &[("x<y".into(), vec![1.0, 0.5, 0.0, 0.25])], "t");
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
        assert!(svg.contains("x&lt;y"), "names escaped");
        // 4 rings + 1 series polygon
        assert_eq!(svg.matches("<polygon").count(), 5);
        // axis 0 points straight up: value 1 at (300, 270 − 190) = (300, 80); value 0.5 on
        // axis 1 (pointing right) at (300 + 95, 270); 0 at the centre; 0.25 on axis 3 (left)
        // at (300 − 47.5, 270).
        assert!(svg.contains("300.0,80.0 395.0,270.0 300.0,270.0 252.5,270.0"), "{svg}");
    }
}
