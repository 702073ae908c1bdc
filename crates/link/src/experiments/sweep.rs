//! The `net-sweep` preset (loss × delay for a few ciphers over both transports) and the report
//! pieces of condition runs: a markdown section and self-contained SVG line charts of delivery and
//! latency against loss.
use std::fmt::Write as _;

use lwcbench_netimpair::Conditions;

use crate::experiments::netcond::ConditionRow;

/// Ciphers of the `net-sweep` preset.
pub const SWEEP_CIPHERS: &str = "Ascon-AEAD128,AES-128-CCM/rustcrypto,DRACO/rust-fast";
/// Loss levels (%) of the preset.
pub const SWEEP_LOSS: [f64; 4] = [0.0, 1.0, 5.0, 10.0];
/// One-way delays (ms) of the preset.
pub const SWEEP_DELAY: [u32; 3] = [0, 20, 200];

/// The preset's conditions, in sweep order (delay outer, loss inner).
pub fn sweep_conditions() -> Vec<Conditions> {
    let mut v = Vec::new();
    for d in SWEEP_DELAY {
        for l in SWEEP_LOSS {
            v.push(Conditions { loss_pct: l, delay_ms: d, ..Default::default() });
        }
    }
    v
}

/// A short label of a condition set ("loss 5 %, delay 20 ms"; "none").
pub fn label(c: &Conditions) -> String {
    let mut p = Vec::new();
    if c.loss_pct > 0.0 {
        p.push(format!("loss {} %", c.loss_pct));
    }
    if c.delay_ms > 0 {
        p.push(format!("delay {} ms", c.delay_ms));
    }
    if c.jitter_ms > 0 {
        p.push(format!("jitter ±{} ms", c.jitter_ms));
    }
    if c.reorder_pct > 0.0 {
        p.push(format!("reorder {} %", c.reorder_pct));
    }
    if c.duplicate_pct > 0.0 {
        p.push(format!("duplicate {} %", c.duplicate_pct));
    }
    if let Some(r) = c.rate_kbit {
        p.push(format!("bandwidth {r} kbit/s"));
    }
    if p.is_empty() {
        "none".into()
    } else {
        p.join(", ")
    }
}

/// The report section of condition runs.
pub fn markdown(rows: &[ConditionRow], netem: bool, figures: &[&str]) -> String {
    let mut md = String::from("## Link under network conditions\n\n");
    let _ = writeln!(
        md,
        "Devices in network namespace A, broker and gateway in namespace B, joined by a veth pair the tool made; \
         conditions impair the device → gateway direction. Kernel netem: {}. Mechanism per condition in the \
         `mechanisms` column and in run.json. `not delivered` = sent − stored − counted drops within the time \
         limit (for UDP every loss must be counted: nftables counter, relay drops, socket-buffer errors, tbf drops).\n",
        if netem { "available (used)" } else { "absent (nftables / tbf / UDP relay / Toxiproxy)" }
    );
    md += "| transport | cipher | conditions | mechanisms | sent | stored | delivery | counted drops | not delivered | refused | e2e p50 | e2e p99 | e2e max |\n";
    md += "|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
    for r in rows {
        let c = Conditions {
            loss_pct: r.loss_pct,
            delay_ms: r.delay_ms,
            jitter_ms: r.jitter_ms,
            reorder_pct: r.reorder_pct,
            duplicate_pct: r.duplicate_pct,
            rate_kbit: (r.bandwidth_kbit > 0).then_some(r.bandwidth_kbit),
        };
        let refused = r.refused_malformed
            + r.refused_unknown_device
            + r.refused_wrong_cipher
            + r.refused_replay
            + r.refused_too_old
            + r.refused_bad_tag;
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} | {:.1} % | {} | {}{} | {} | {} | {} | {} |",
            r.transport,
            r.cipher,
            label(&c),
            if r.mechanisms.is_empty() { "-" } else { &r.mechanisms },
            r.sent,
            r.stored,
            r.delivery_ratio * 100.0,
            r.counted_drops,
            r.not_delivered_within_t,
            if r.timed_out { format!(" (not delivered within {} s)", r.timeout_s) } else { String::new() },
            refused,
            crate::units::ms3(r.e2e_p50_ms * 1000.0),
            crate::units::ms3(r.e2e_p99_ms * 1000.0),
            crate::units::ms3(r.e2e_max_ms * 1000.0)
        );
    }
    for f in figures {
        let _ = writeln!(md, "\n![{f}]({f})");
    }
    md
}

/// Mean of `f` over the rows of one transport × delay × loss (i.e. over the ciphers).
fn series(rows: &[ConditionRow], f: fn(&ConditionRow) -> f64) -> Vec<(String, Vec<(f64, f64)>)> {
    let mut keys: Vec<(String, u32)> = Vec::new();
    for r in rows {
        let k = (r.transport.clone(), r.delay_ms);
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    keys.into_iter()
        .map(|(t, d)| {
            let mut losses: Vec<f64> = Vec::new();
            for r in rows.iter().filter(|r| r.transport == t && r.delay_ms == d) {
                if !losses.contains(&r.loss_pct) {
                    losses.push(r.loss_pct);
                }
            }
            losses.sort_by(f64::total_cmp);
            let pts = losses
                .into_iter()
                .map(|l| {
                    let v: Vec<f64> =
                        rows.iter().filter(|r| r.transport == t && r.delay_ms == d && r.loss_pct == l).map(f).collect();
                    (l, v.iter().sum::<f64>() / v.len().max(1) as f64)
                })
                .collect();
            (format!("{t}, delay {d} ms"), pts)
        })
        .collect()
}

/// Delivery ratio (%) against loss, one line per transport × delay (mean over ciphers).
pub fn delivery_svg(rows: &[ConditionRow]) -> String {
    line_chart(
        "Delivered readings vs configured loss (mean over ciphers)",
        "loss (%)",
        "delivered (%)",
        &series(rows, |r| r.delivery_ratio * 100.0),
        false,
    )
}

/// p50 and p99 end-to-end latency (ms, log scale) against loss.
pub fn latency_svg(rows: &[ConditionRow]) -> String {
    let mut s = series(rows, |r| r.e2e_p99_ms);
    for (name, _) in s.iter_mut() {
        *name = format!("p99 {name}");
    }
    let mut p50 = series(rows, |r| r.e2e_p50_ms);
    for (name, _) in p50.iter_mut() {
        *name = format!("p50 {name}");
    }
    s.extend(p50);
    line_chart("End-to-end latency vs configured loss (mean over ciphers)", "loss (%)", "latency (ms, log)", &s, true)
}

const COLORS: [&str; 8] = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"];

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// A self-contained SVG line chart (no scripts, no external resources). With `log_y`, values ≤ 0
/// are drawn at the bottom edge.
pub fn line_chart(title: &str, xl: &str, yl: &str, series: &[(String, Vec<(f64, f64)>)], log_y: bool) -> String {
    let (w, h, l, r, t, b) = (760.0, 420.0, 70.0, 230.0, 40.0, 50.0);
    let pts = series.iter().flat_map(|(_, p)| p.iter());
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for &(x, y) in pts {
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
    // Axes, ticks.
    let _ = write!(
        s,
        r##"<line x1="{l}" y1="{}" x2="{}" y2="{}" stroke="#000"/><line x1="{l}" y1="{t}" x2="{l}" y2="{}" stroke="#000"/>"##,
        h - b,
        w - r,
        h - b,
        h - b
    );
    let mut xs: Vec<f64> = series.iter().flat_map(|(_, p)| p.iter().map(|q| q.0)).collect();
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
        r##"<text x="{}" y="{}" text-anchor="middle">{}</text><text x="16" y="{}" text-anchor="middle" transform="rotate(-90 16 {})">{}</text>"##,
        (w - r + l) / 2.0,
        h - 12.0,
        esc(xl),
        (h - b + t) / 2.0,
        (h - b + t) / 2.0,
        esc(yl)
    );
    for (i, (name, p)) in series.iter().enumerate() {
        let c = COLORS[i % COLORS.len()];
        let dash = if name.starts_with("p50") { r#" stroke-dasharray="5 3""# } else { "" };
        let line: Vec<String> = p.iter().map(|&(x, y)| format!("{:.1},{:.1}", px(x), py(y))).collect();
        let _ =
            write!(s, r##"<polyline points="{}" fill="none" stroke="{c}" stroke-width="2"{dash}/>"##, line.join(" "));
        for &(x, y) in p {
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
            esc(name)
        );
    }
    s + "</svg>\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sweep_is_loss_by_delay() {
        let c = sweep_conditions();
        assert_eq!(c.len(), 12);
        assert_eq!((c[0].loss_pct, c[0].delay_ms), (0.0, 0));
        assert_eq!((c[11].loss_pct, c[11].delay_ms), (10.0, 200));
        assert!(c.iter().all(|c| c.validate().is_ok()));
    }

    #[test]
    fn labels() {
        assert_eq!(label(&Conditions::default()), "none");
        let c = Conditions { loss_pct: 5.0, delay_ms: 20, rate_kbit: Some(100), ..Default::default() };
        assert_eq!(label(&c), "loss 5 %, delay 20 ms, bandwidth 100 kbit/s");
    }

    #[test]
    fn chart_places_points_by_hand() {
        // x 0..10 over 70..530 px, y 0..105 (100 × 1.05) over 370..40 px.
        let svg = line_chart("t<", "x", "y", &[("s".into(), vec![(0.0, 0.0), (10.0, 100.0)])], false);
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>\n"));
        assert!(svg.contains("t&lt;"));
        assert!(svg.contains(r#"points="70.0,370.0 530.0,55.7""#), "{svg}");
        // Log scale: 1 and 100 ms span decades 0..2.
        let svg = line_chart("t", "x", "y", &[("s".into(), vec![(0.0, 1.0), (10.0, 100.0)])], true);
        assert!(svg.contains(r#"points="70.0,370.0 530.0,40.0""#), "{svg}");
    }

    #[test]
    fn series_average_over_ciphers() {
        let row = |c: &str, l: f64, d: f64| ConditionRow {
            cipher: c.into(),
            transport: "udp".into(),
            loss_pct: l,
            delivery_ratio: d,
            ..Default::default()
        };
        let rows = [row("a", 0.0, 1.0), row("b", 0.0, 0.5), row("a", 5.0, 0.9), row("b", 5.0, 0.9)];
        let s = series(&rows, |r| r.delivery_ratio);
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].0, "udp, delay 0 ms");
        assert_eq!(s[0].1, vec![(0.0, 0.75), (5.0, 0.9)]);
    }
}
