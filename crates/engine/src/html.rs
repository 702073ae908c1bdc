//! What a report section is drawn with: HTML escaping and minimal SVG charts (box plots, bars
//! with confidence intervals, radar charts), used by `lwcbench-report` and by the studies' own
//! sections ([`crate::studies::Study::html`]). Text is left to the browser (no font metrics
//! needed), colours are the Okabe–Ito colour-blind-safe palette, and value axes switch to log
//! scale when data spans decades. Everything read from a file goes through [`esc`].
use std::fmt::Write;
use std::path::Path;

/// Okabe & Ito (2008) colour-blind-safe palette, black last.
pub const PALETTE: [&str; 8] = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#56B4E9", "#CC79A7", "#F0E442", "#000000"];

pub fn color(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// Escape text for SVG/HTML.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;").replace('\'', "&#39;")
}

/// Five-number box with Tukey whiskers and the points beyond them.
#[derive(Clone, Debug, PartialEq)]
pub struct BoxStats {
    pub q1: f64,
    pub median: f64,
    pub q3: f64,
    pub lo: f64,
    pub hi: f64,
    pub outliers: Vec<f64>,
}

impl BoxStats {
    pub fn from_samples(xs: &[f64]) -> Option<Self> {
        if xs.is_empty() {
            return None;
        }
        let mut s = xs.to_vec();
        // total order: a NaN (the readers refuse one, other callers may not) cannot panic here
        s.sort_by(f64::total_cmp);
        let q = |p| lwcbench_stats::quantile_sorted(&s, p);
        let (q1, median, q3) = (q(0.25), q(0.5), q(0.75));
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

/// A value axis mapping data to pixels (linear or log10).
struct Axis {
    lo: f64,
    hi: f64,
    log: bool,
    px_lo: f64,
    px_hi: f64,
}

impl Axis {
    fn new(min: f64, max: f64, force_log: Option<bool>, px_lo: f64, px_hi: f64) -> Self {
        let min = if min.is_finite() { min } else { 1.0 };
        let max = if max.is_finite() && max > min { max } else { min * 1.1 + 1e-9 };
        let log = force_log.unwrap_or(min > 0.0 && max / min > 30.0) && min > 0.0;
        if log {
            // A little headroom below the minimum (not a whole decade), so boxes just above a
            // decade do not sit on the axis line; decade ticks are drawn inside the range.
            let lo = min.log10() - 0.08;
            Axis { lo, hi: max.log10().ceil().max(lo.ceil() + 1.0), log, px_lo, px_hi }
        } else {
            let span = max - 0.0f64.min(min);
            let step = nice_step(span / 5.0);
            Axis { lo: (0.0f64.min(min) / step).floor() * step, hi: (max / step).ceil() * step, log, px_lo, px_hi }
        }
    }
    fn px(&self, v: f64) -> f64 {
        let t = if self.log {
            (v.max(1e-12).log10() - self.lo) / (self.hi - self.lo)
        } else {
            (v - self.lo) / (self.hi - self.lo)
        };
        self.px_lo + t * (self.px_hi - self.px_lo)
    }
    fn ticks(&self) -> Vec<f64> {
        if self.log {
            let mut t = Vec::new();
            let decades = (self.hi - self.lo) as i32;
            for d in (self.lo.ceil() as i32)..=(self.hi.floor() as i32) {
                t.push(10f64.powi(d));
                if decades <= 2 && d < self.hi as i32 {
                    t.push(2.0 * 10f64.powi(d));
                    t.push(5.0 * 10f64.powi(d));
                }
            }
            t
        } else {
            let step = nice_step((self.hi - self.lo) / 5.0);
            let mut t = Vec::new();
            let mut v = self.lo;
            while v <= self.hi + step * 1e-9 {
                t.push(v);
                v += step;
            }
            t
        }
    }
}

fn nice_step(raw: f64) -> f64 {
    if raw <= 0.0 || !raw.is_finite() {
        return 1.0;
    }
    let p = 10f64.powf(raw.log10().floor());
    let f = raw / p;
    p * if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    }
}

/// Format a value with an SI-ish unit suffix for tick labels.
pub fn tick_label(v: f64, unit: &str) -> String {
    if unit == "ns" {
        return if v >= 1e6 {
            format!("{} ms", trim(v / 1e6))
        } else if v >= 1e3 {
            format!("{} µs", trim(v / 1e3))
        } else {
            format!("{} ns", trim(v))
        };
    }
    if v >= 1e6 {
        format!("{}M", trim(v / 1e6))
    } else if v >= 1e3 {
        format!("{}k", trim(v / 1e3))
    } else {
        trim(v)
    }
}

fn trim(v: f64) -> String {
    let s = format!("{v:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Chart frame: axes, ticks, grid, labels, legend. Returns (svg-open + frame, value axis).
fn frame(w: f64, h: f64, axis: &Axis, unit: &str, y_label: &str, x_label: &str, legend: &[String]) -> String {
    let (left, right, top, bottom) = (78.0, w - 16.0, 28.0, h - 96.0);
    let mut s = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" width="{w}" height="{h}" role="img" font-family="sans-serif" font-size="11">"#
    );
    s += &format!(r##"<rect x="0" y="0" width="{w}" height="{h}" fill="#ffffff"/>"##);
    for t in axis.ticks() {
        let y = axis.px(t);
        if y < top - 0.5 || y > bottom + 0.5 {
            continue;
        }
        s += &format!(r##"<line x1="{left}" x2="{right}" y1="{y:.1}" y2="{y:.1}" stroke="#dddddd"/>"##);
        s += &format!(
            r##"<text x="{}" y="{:.1}" text-anchor="end">{}</text>"##,
            left - 6.0,
            y + 4.0,
            esc(&tick_label(t, unit))
        );
    }
    s += &format!(r##"<line x1="{left}" x2="{left}" y1="{top}" y2="{bottom}" stroke="#333"/>"##);
    s += &format!(r##"<line x1="{left}" x2="{right}" y1="{bottom}" y2="{bottom}" stroke="#333"/>"##);
    let ylab = format!("{y_label}{}", if axis.log { " (log scale)" } else { "" });
    s += &format!(
        r##"<text transform="translate(16,{:.1}) rotate(-90)" text-anchor="middle" font-size="12">{}</text>"##,
        (top + bottom) / 2.0,
        esc(&ylab)
    );
    s += &format!(
        r##"<text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="12">{}</text>"##,
        (left + right) / 2.0,
        h - 8.0,
        esc(x_label)
    );
    // Legend along the top.
    let mut x = left + 4.0;
    for (i, name) in legend.iter().enumerate() {
        s += &format!(
            r##"<rect x="{x:.1}" y="8" width="12" height="12" fill="{}" fill-opacity="0.75" stroke="#333"/>"##,
            color(i)
        );
        s += &format!(r##"<text x="{:.1}" y="18">{}</text>"##, x + 16.0, esc(name));
        x += 28.0 + 6.5 * name.len() as f64;
    }
    s
}

/// Box plots: categories along x, one box per series inside each category.
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
    let w = (78.0 + 16.0 + cat_w * categories.len() as f64).max(520.0);
    let h = 400.0;
    let all = data.iter().flatten().flatten().flat_map(|b| [b.lo, b.hi].into_iter().chain(b.outliers.iter().copied()));
    let (mn, mx) = all.fold((f64::INFINITY, 0.0f64), |(a, b), v| (a.min(v), b.max(v)));
    let axis = Axis::new(mn, mx, None, h - 96.0, 28.0);
    let mut s = frame(w, h, &axis, "ns", y_label, x_label, series);
    let cat_w = (w - 78.0 - 16.0) / categories.len().max(1) as f64;
    for (c, cat) in categories.iter().enumerate() {
        let x0 = 78.0 + c as f64 * cat_w;
        if c % 2 == 1 {
            s += &format!(
                r##"<rect x="{x0:.1}" y="28" width="{cat_w:.1}" height="{}" fill="#f4f4f4" fill-opacity="0.6"/>"##,
                h - 96.0 - 28.0
            );
        }
        for (i, b) in data[c].iter().enumerate() {
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
                esc(&format!("{} {}", series[i], cat)),
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
        let ly = h - 96.0 + 12.0;
        s += &format!(
            r##"<text transform="translate({lx:.1},{ly:.1}) rotate(-45)" text-anchor="end">{}</text>"##,
            esc(cat)
        );
    }
    s + "</svg>"
}

/// Bars with error bars: `bars[i] = (label, value, lo, hi)`, one colour per label group.
pub fn bars_ci(
    bars: &[(String, f64, f64, f64)],
    colors: &[usize],
    y_label: &str,
    x_label: &str,
    legend: &[String],
) -> String {
    let bw = 26.0;
    let w = (78.0 + 16.0 + bars.len() as f64 * (bw + 14.0)).max(420.0);
    let h = 380.0;
    let mx = bars.iter().map(|b| b.3.max(b.1)).fold(0.0f64, f64::max);
    let mn = bars.iter().map(|b| b.2.min(b.1)).filter(|v| *v > 0.0).fold(f64::INFINITY, f64::min);
    let log = mn.is_finite() && mx / mn > 100.0;
    let axis = Axis::new(if log { mn } else { 0.0 }, mx, Some(log), h - 96.0, 28.0);
    let mut s = frame(w, h, &axis, "", y_label, x_label, legend);
    let step = (w - 78.0 - 16.0) / bars.len().max(1) as f64;
    let base = h - 96.0;
    for (i, (label, v, lo, hi)) in bars.iter().enumerate() {
        let xc = 78.0 + step * (i as f64 + 0.5);
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

/// The index of a column by its header.
pub fn col(headers: &[String], name: &str) -> Option<usize> {
    headers.iter().position(|h| h == name)
}

/// A cell as a number (NaN where it is none).
pub fn num(v: &str) -> f64 {
    v.parse().unwrap_or(f64::NAN)
}

/// A CSV file of a study as text: its header and rows (None where it is missing or has no
/// header; unreadable rows are skipped). Print every cell through [`esc`].
pub fn read_table(path: &Path) -> Option<(Vec<String>, Vec<Vec<String>>)> {
    let mut r = csv::Reader::from_path(path).ok()?;
    let headers: Vec<String> = r.headers().ok()?.iter().map(str::to_string).collect();
    let rows: Vec<Vec<String>> =
        r.records().filter_map(Result::ok).map(|rec| rec.iter().map(str::to_string).collect()).collect();
    Some((headers, rows))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn box_stats_by_hand() {
        // 1..=9 and 100: q1 = 3.25, median 5.5, q3 = 7.75 (type 7), IQR 4.5, upper fence 14.5.
        let mut xs: Vec<f64> = (1..=9).map(f64::from).collect();
        xs.push(100.0);
        let b = BoxStats::from_samples(&xs).unwrap();
        assert_eq!((b.q1, b.median, b.q3), (3.25, 5.5, 7.75));
        assert_eq!((b.lo, b.hi), (1.0, 9.0));
        assert_eq!(b.outliers, vec![100.0]);
    }

    #[test]
    fn box_stats_of_a_nan_do_not_panic() {
        // NaN sorts after every number: [1, 2, NaN], whose type-7 median is the middle value 2
        let b = BoxStats::from_samples(&[2.0, f64::NAN, 1.0]).unwrap();
        assert_eq!(b.median, 2.0);
    }

    #[test]
    fn charts_are_well_formed() {
        let b = BoxStats::from_samples(&[1.0, 2.0, 3.0]);
        let svg = boxplot(&["<s,s | 8>".into()], &["rust".into(), "c++".into()], &[vec![b.clone(), b]], "time", "x");
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
        assert!(svg.contains("&lt;s,s | 8&gt;"), "labels must be escaped");
        assert_eq!(svg.matches("<rect").count() - 1 /* background */ - 2 /* legend */, 2);
        let bars = bars_ci(&[("a".into(), 10.0, 9.0, 11.0)], &[0], "Mbit/s", "impl", &[]);
        assert!(bars.contains("<title>a: 10.000"));
    }

    #[test]
    fn log_axis_when_decades() {
        let a = Axis::new(1.0, 1000.0, None, 100.0, 0.0);
        assert!(a.log);
        assert_eq!(a.ticks(), vec![1.0, 10.0, 100.0, 1000.0]);
        // lo = log10(1) − 0.08, hi = 3: 10 sits at (1 + 0.08) / 3.08 of the way up (from 100 to 0)
        assert!((a.px(10.0) - (100.0 - 100.0 * 1.08 / 3.08)).abs() < 1e-9);
        assert!(!Axis::new(1.0, 5.0, None, 100.0, 0.0).log);
        assert_eq!(tick_label(2500.0, "ns"), "2.5 µs");
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
