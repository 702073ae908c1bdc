//! Markdown tables for a run (also printed to the terminal).
use crate::results::SummaryRow;

pub use crate::text::fmt_ns;

/// The summary table of `summary.md`; the studies' sections follow it (see
/// [`crate::output::summary_markdown`]).
pub fn summary_markdown(summary: &[SummaryRow]) -> String {
    let mut s = String::new();
    s.push_str("# lwcbench summary\n\nMedian time per operation with its 95 % confidence interval (distribution-free), per group; ");
    s.push_str("`kiv = all` pools the four static/random key–IV variants (the study's aggregate table).\n\n");
    s.push_str("| cipher | implementation | scenario | kiv | bits | median | 95 % CI of median | mean ± sd | min | max | Mbit/s | outliers |\n");
    s.push_str("|---|---|---|---|---:|---:|---|---|---:|---:|---:|---:|\n");
    for r in summary {
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} – {} | {} ± {} | {} | {} | {} | {} |\n",
            r.cipher,
            r.implementation,
            r.scenario,
            r.kiv,
            if r.size_bits > 0 { r.size_bits.to_string() } else { "–".into() },
            fmt_ns(r.median_ns),
            fmt_ns(r.median_ci95_lo_ns),
            fmt_ns(r.median_ci95_hi_ns),
            fmt_ns(r.mean_ns),
            fmt_ns(r.sd_ns),
            fmt_ns(r.min_ns),
            fmt_ns(r.max_ns),
            r.mbit_per_s.map(|x| format!("{x:.1}")).unwrap_or_else(|| "–".into()),
            r.outliers
        ));
    }
    s
}
