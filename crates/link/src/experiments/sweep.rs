//! The `net-sweep` preset (loss × delay for a few ciphers over both transports) and the report
//! pieces of condition runs: a markdown section and self-contained SVG line charts (the page kit's)
//! of delivery and latency against loss.
use std::fmt::Write as _;

use lwcbench_netimpair::Conditions;
use lwcbench_page::{line_chart, Line};

use crate::experiments::netcond::ConditionRow;

/// Ciphers of the `net-sweep` preset.
pub const SWEEP_CIPHERS: &str = "Ascon-AEAD128,AES-128-CCM/rustcrypto,DRACO/rust-fast";
/// Loss levels (%) and one-way delays (ms) of the preset.
pub const SWEEP_LOSS: [f64; 4] = [0.0, 1.0, 5.0, 10.0];
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

/// Delivery ratio (%) against loss, one line per transport × delay (mean over ciphers), as a
/// standalone SVG file.
pub fn delivery_svg(rows: &[ConditionRow]) -> String {
    let lines = series(rows, |r| r.delivery_ratio * 100.0)
        .into_iter()
        .map(|(name, points)| Line { name, points, dashed: false })
        .collect::<Vec<_>>();
    line_chart("Delivered readings vs configured loss (mean over ciphers)", "loss (%)", "delivered (%)", &lines, false)
        + "\n"
}

/// p99 (solid) and p50 (dashed) end-to-end latency (ms, log scale) against loss, as a
/// standalone SVG file.
pub fn latency_svg(rows: &[ConditionRow]) -> String {
    let quantile = |q: &str, dashed: bool, f: fn(&ConditionRow) -> f64| -> Vec<Line> {
        series(rows, f).into_iter().map(|(name, points)| Line { name: format!("{q} {name}"), points, dashed }).collect()
    };
    let mut lines = quantile("p99", false, |r| r.e2e_p99_ms);
    lines.extend(quantile("p50", true, |r| r.e2e_p50_ms));
    line_chart(
        "End-to-end latency vs configured loss (mean over ciphers)",
        "loss (%)",
        "latency (ms, log)",
        &lines,
        true,
    ) + "\n"
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
    fn latency_chart_dashes_p50_beside_solid_p99() {
        let rows = [ConditionRow { transport: "udp".into(), e2e_p50_ms: 1.0, e2e_p99_ms: 10.0, ..Default::default() }];
        let svg = latency_svg(&rows);
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>\n"), "a standalone file");
        assert!(svg.contains(">p99 udp, delay 0 ms</text>") && svg.contains(">p50 udp, delay 0 ms</text>"), "{svg}");
        assert_eq!(svg.matches("stroke-dasharray").count(), 2, "the p50 line and its legend entry");
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
