//! Value axes (linear or log10, with ticks) and the frame the bar and box charts share.
use crate::{color, esc};

/// A value axis mapping data to pixels (linear or log10).
pub(crate) struct Axis {
    pub(crate) lo: f64,
    pub(crate) hi: f64,
    pub(crate) log: bool,
    px_lo: f64,
    px_hi: f64,
}

impl Axis {
    /// An axis over `[min, max]` drawn from pixel `px_lo` to `px_hi`; log scale where
    /// `force_log` says so, else where the data spans more than 30× (never with `min <= 0`).
    pub(crate) fn new(min: f64, max: f64, force_log: Option<bool>, px_lo: f64, px_hi: f64) -> Self {
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

    /// The pixel of value `v`.
    pub(crate) fn px(&self, v: f64) -> f64 {
        let t = if self.log {
            (v.max(1e-12).log10() - self.lo) / (self.hi - self.lo)
        } else {
            (v - self.lo) / (self.hi - self.lo)
        };
        self.px_lo + t * (self.px_hi - self.px_lo)
    }

    /// Tick values: decades (with 2 and 5 between them over at most two decades), or about
    /// five round steps.
    pub(crate) fn ticks(&self) -> Vec<f64> {
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

/// The round step (1, 2 or 5 times a power of ten) at or above `raw`.
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

/// Format a value with an SI-ish unit suffix for tick labels (`ns` values as ns, µs or ms).
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

/// Margins of the framed charts: left, right, top, bottom (from the bottom edge).
pub(crate) const LEFT: f64 = 78.0;
pub(crate) const RIGHT: f64 = 16.0;
pub(crate) const TOP: f64 = 28.0;
pub(crate) const BOTTOM: f64 = 96.0;

/// Chart frame: the svg element, background, value-axis grid and tick labels, axes, axis
/// labels and the legend along the top. The caller draws the data and closes the svg.
pub(crate) fn frame(
    w: f64,
    h: f64,
    axis: &Axis,
    unit: &str,
    y_label: &str,
    x_label: &str,
    legend: &[String],
) -> String {
    let (left, right, top, bottom) = (LEFT, w - RIGHT, TOP, h - BOTTOM);
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

#[cfg(test)]
mod tests {
    use super::*;

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
    fn linear_axis_from_zero_in_round_steps() {
        // 5..93 (under 30×, linear) from 0: a fifth of the span is 18.6, rounded up to 20; the top tick 100
        let a = Axis::new(5.0, 93.0, None, 0.0, 100.0);
        assert!(!a.log);
        assert_eq!(a.ticks(), vec![0.0, 20.0, 40.0, 60.0, 80.0, 100.0]);
        assert!((a.px(50.0) - 50.0).abs() < 1e-9);
    }
}
