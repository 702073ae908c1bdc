//! Pareto scatter (two costs, both lower-better) with the front drawn filled, log axes where a
//! cost spans more than 10×, and point labels placed so that they do not overlap.
use std::fmt::Write as _;

use crate::axis::{tick_label, Axis};
use crate::{color, esc};

/// An axis-aligned box in pixels (a label's extent).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rect {
    /// Left edge.
    pub x: f64,
    /// Top edge.
    pub y: f64,
    /// Width.
    pub w: f64,
    /// Height.
    pub h: f64,
}

impl Rect {
    /// The area `self` and `o` share (0 when they only touch).
    pub fn overlap(&self, o: &Rect) -> f64 {
        let dx = (self.x + self.w).min(o.x + o.w) - self.x.max(o.x);
        let dy = (self.y + self.h).min(o.y + o.h) - self.y.max(o.y);
        dx.max(0.0) * dy.max(0.0)
    }
}

/// Labels of font size 10 are drawn this tall, and about this wide per character (sans-serif
/// averages ~0.6 em; a little more, so an estimate errs on the side of space).
const LABEL_H: f64 = 11.0;
const CHAR_W: f64 = 6.2;
const MARKER_R: f64 = 5.0;

/// Greedy label placement: for each point in order (`anchors[i] = (x, y, label width)`, all
/// labels `label_h` tall) the first of a fixed list of positions around the point (right-above,
/// right-below, left-above, left-below, above, below, then further out above and below) whose
/// box lies inside `bounds` and overlaps no label placed before it and no point's marker (a
/// `marker_r` square around each point); where every position collides, the one with the least
/// overlap. Returns one box per anchor.
pub fn place_labels(anchors: &[(f64, f64, f64)], label_h: f64, marker_r: f64, bounds: Rect) -> Vec<Rect> {
    let markers: Vec<Rect> = anchors
        .iter()
        .map(|&(x, y, _)| Rect { x: x - marker_r, y: y - marker_r, w: 2.0 * marker_r, h: 2.0 * marker_r })
        .collect();
    let mut placed: Vec<Rect> = Vec::with_capacity(anchors.len());
    for &(x, y, w) in anchors {
        let g = marker_r + 2.0;
        let (right, left, mid) = (x + g, x - g - w, x - w / 2.0);
        let (up, down) = (y - g - label_h, y + g);
        let mut candidates =
            vec![(right, up), (right, down), (left, up), (left, down), (mid, up - 1.0), (mid, down + 1.0)];
        for k in 1..=6 {
            let step = k as f64 * (label_h + 1.0);
            candidates.extend([(right, up - step), (right, down + step), (left, up - step), (left, down + step)]);
        }
        let cost = |r: &Rect| {
            let inside = r.x >= bounds.x
                && r.y >= bounds.y
                && r.x + r.w <= bounds.x + bounds.w
                && r.y + r.h <= bounds.y + bounds.h;
            let clash: f64 = placed.iter().chain(markers.iter()).map(|o| r.overlap(o)).sum();
            // outside the chart counts as a large overlap: better a clash than a lost label
            clash + if inside { 0.0 } else { 1e6 }
        };
        let boxes = candidates.into_iter().map(|(cx, cy)| Rect { x: cx, y: cy, w, h: label_h });
        let mut best: Option<(f64, Rect)> = None;
        for r in boxes {
            let c = cost(&r);
            if c == 0.0 {
                best = Some((c, r));
                break;
            }
            match best {
                Some((bc, _)) if bc <= c => {}
                _ => best = Some((c, r)),
            }
        }
        placed.push(best.map_or(Rect { x: right, y: up, w, h: label_h }, |b| b.1));
    }
    placed
}

/// Short number for a tooltip: no decimals from 100 on, two below.
fn num(v: f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

/// True when no other point is at least as good in both costs and better in one.
fn on_front(points: &[(String, f64, f64)], x: f64, y: f64) -> bool {
    !points.iter().any(|(_, x2, y2)| *x2 <= x && *y2 <= y && (*x2 < x || *y2 < y))
}

/// A Pareto scatter of `points[i] = (name, x, y)`, both costs lower-better: points on the front
/// (no other point is at least as good in both and better in one) filled, the others hollow,
/// each labelled with its name ([`place_labels`]). An axis is log10 when its values are
/// positive and span more than 10×, else linear from 0. Non-finite points are left out.
pub fn pareto(points: &[(String, f64, f64)], x_label: &str, y_label: &str) -> String {
    let points: Vec<(String, f64, f64)> =
        points.iter().filter(|p| p.1.is_finite() && p.2.is_finite()).cloned().collect();
    let (w, h, l, r, t, b) = (720.0, 420.0, 80.0, 20.0, 20.0, 50.0);
    let range = |f: fn(&(String, f64, f64)) -> f64| {
        points.iter().map(f).fold((f64::INFINITY, f64::NEG_INFINITY), |(a, z), v| (a.min(v), z.max(v)))
    };
    let axis = |(mn, mx): (f64, f64), px_lo: f64, px_hi: f64| {
        let (mn, mx) = if mn.is_finite() { (mn, mx) } else { (0.0, 1.0) };
        let log = mn > 0.0 && mx / mn > 10.0;
        Axis::new(if log { mn } else { mn.min(0.0) }, mx, Some(log), px_lo, px_hi)
    };
    let (ax, ay) = (axis(range(|p| p.1), l, w - r), axis(range(|p| p.2), h - b, t));
    let scaled = |a: &Axis, s: &str| format!("{s}{}", if a.log { " (log scale)" } else { "" });
    let mut s = format!(
        r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" width="{w}" height="{h}" role="img" aria-label="{} against {}" font-family="sans-serif" font-size="11"><rect width="{w}" height="{h}" fill="#fff"/>"##,
        esc(y_label),
        esc(x_label)
    );
    for v in ax.ticks() {
        let x = ax.px(v);
        if (l - 0.5..=w - r + 0.5).contains(&x) {
            let _ = write!(
                s,
                r##"<line x1="{x:.1}" x2="{x:.1}" y1="{t}" y2="{}" stroke="#eeeeee"/><text x="{x:.1}" y="{}" text-anchor="middle">{}</text>"##,
                h - b,
                h - b + 16.0,
                esc(&tick_label(v, ""))
            );
        }
    }
    for v in ay.ticks() {
        let y = ay.px(v);
        if (t - 0.5..=h - b + 0.5).contains(&y) {
            let _ = write!(
                s,
                r##"<line x1="{l}" x2="{}" y1="{y:.1}" y2="{y:.1}" stroke="#eeeeee"/><text x="{}" y="{:.1}" text-anchor="end">{}</text>"##,
                w - r,
                l - 4.0,
                y + 4.0,
                esc(&tick_label(v, ""))
            );
        }
    }
    let _ = write!(
        s,
        r##"<line x1="{l}" y1="{0}" x2="{1}" y2="{0}" stroke="#333"/><line x1="{l}" y1="{t}" x2="{l}" y2="{0}" stroke="#333"/><text x="{2:.1}" y="{3}" text-anchor="middle" font-size="12">{4}</text><text x="16" y="{5:.1}" transform="rotate(-90 16 {5:.1})" text-anchor="middle" font-size="12">{6}</text>"##,
        h - b,
        w - r,
        (w + l) / 2.0,
        h - 10.0,
        esc(&scaled(&ax, x_label)),
        (h - b + t) / 2.0,
        esc(&scaled(&ay, y_label))
    );
    let at: Vec<(f64, f64)> = points.iter().map(|p| (ax.px(p.1), ay.px(p.2))).collect();
    let anchors: Vec<(f64, f64, f64)> =
        at.iter().zip(&points).map(|(&(x, y), p)| (x, y, CHAR_W * p.0.chars().count() as f64)).collect();
    let labels = place_labels(&anchors, LABEL_H, MARKER_R, Rect { x: l, y: 0.0, w: w - l, h: h - b });
    let col = color(0);
    for (((name, x, y), (cx, cy)), lab) in points.iter().zip(&at).zip(&labels) {
        let front = on_front(&points, *x, *y);
        let _ = write!(
            s,
            r##"<circle cx="{cx:.1}" cy="{cy:.1}" r="{MARKER_R}" fill="{}" stroke="{col}"><title>{}</title></circle><text x="{:.1}" y="{:.1}" font-size="10">{}</text>"##,
            if front { col } else { "none" },
            esc(&format!(
                "{name}: {x_label} {}, {y_label} {}{}",
                num(*x),
                num(*y),
                if front { " (Pareto front)" } else { "" }
            )),
            lab.x,
            lab.y + LABEL_H - 2.0,
            esc(name)
        );
    }
    s + "</svg>"
}

#[cfg(test)]
mod tests {
    use super::*;

    const BIG: Rect = Rect { x: 0.0, y: 0.0, w: 1000.0, h: 1000.0 };

    #[test]
    fn two_close_points_get_boxes_that_do_not_overlap() {
        // marker 5, gap 7: the first label right-above its point at (107, 100 − 7 − 11) = (107, 82);
        // the second point's right-above box (109, 83) would hit it, so right-below: (109, 101 + 7)
        let b = place_labels(&[(100.0, 100.0, 60.0), (102.0, 101.0, 60.0)], 11.0, 5.0, BIG);
        assert_eq!(b[0], Rect { x: 107.0, y: 82.0, w: 60.0, h: 11.0 });
        assert_eq!(b[1], Rect { x: 109.0, y: 108.0, w: 60.0, h: 11.0 });
        assert_eq!(b[0].overlap(&b[1]), 0.0);
    }

    #[test]
    fn a_cluster_of_points_gets_pairwise_disjoint_boxes() {
        let pts: Vec<(f64, f64, f64)> = (0..8).map(|i| (300.0 + i as f64, 200.0 + (i % 3) as f64, 70.0)).collect();
        let b = place_labels(&pts, 11.0, 5.0, BIG);
        for i in 0..b.len() {
            for j in i + 1..b.len() {
                assert_eq!(b[i].overlap(&b[j]), 0.0, "{i} {j}: {:?} {:?}", b[i], b[j]);
            }
        }
    }

    #[test]
    fn a_label_stays_inside_the_bounds() {
        // at the right edge, the right-hand positions leave the chart: left-above it is
        let b = place_labels(&[(990.0, 500.0, 60.0)], 11.0, 5.0, BIG);
        assert_eq!(b[0], Rect { x: 990.0 - 7.0 - 60.0, y: 482.0, w: 60.0, h: 11.0 });
    }

    #[test]
    fn overlap_by_hand() {
        let a = Rect { x: 0.0, y: 0.0, w: 10.0, h: 10.0 };
        assert_eq!(a.overlap(&Rect { x: 5.0, y: 5.0, w: 10.0, h: 10.0 }), 25.0);
        assert_eq!(a.overlap(&Rect { x: 10.0, y: 0.0, w: 10.0, h: 10.0 }), 0.0);
    }

    #[test]
    fn log_axis_past_ten_times_and_the_front_filled() {
        // x spans 100..10000 (100×): log, lo = 2 − 0.08, hi = 4, over 80..700 px, so 1000 sits
        // at 80 + 620 × 1.08 / 2.08 = 401.9; y spans 1..5 (5×): linear 0..5 over 370..20 px.
        let pts =
            vec![("a<b>".to_string(), 100.0, 5.0), ("c".to_string(), 1000.0, 1.0), ("d\"".to_string(), 10000.0, 5.0)];
        let svg = pareto(&pts, "flash (bytes)", "energy (µJ)");
        assert!(svg.contains("flash (bytes) (log scale)") && !svg.contains("energy (µJ) (log scale)"), "{svg}");
        assert!(svg.contains(r##"<circle cx="401.9" cy="300.0" r="5" fill="#0072B2""##), "{svg}");
        // d is dominated by c (more flash, more energy): hollow
        assert!(svg.contains(r##"fill="none" stroke="#0072B2"><title>d&quot;: "##), "{svg}");
        assert!(svg.contains("a&lt;b&gt;: flash (bytes) 100, energy (µJ) 5.00 (Pareto front)"), "{svg}");
        assert!(!svg.contains("a<b>") && svg.contains(">d&quot;</text>"), "{svg}");
    }

    #[test]
    fn linear_without_a_wide_range_and_no_points_is_an_empty_chart() {
        let svg = pareto(&[("a".into(), 10.0, 1.0), ("b".into(), 50.0, 2.0)], "x", "y");
        assert!(!svg.contains("log scale"), "{svg}");
        let svg = pareto(&[("n".into(), f64::NAN, 1.0)], "x", "y");
        assert!(svg.ends_with("</svg>") && !svg.contains("<circle"), "{svg}");
    }
}
