//! Markdown tables for a run (also printed to the terminal).
use crate::results::{ComparisonRow, SummaryRow};

pub use crate::text::fmt_ns;

pub fn summary_markdown(summary: &[SummaryRow], comparison: &[ComparisonRow]) -> String {
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
    if !comparison.is_empty() {
        let margin = comparison[0].margin_pct.unwrap_or(lwcbench_stats::DEFAULT_MARGIN * 100.0);
        s.push_str(&format!("\n## C++ against Rust\n\nRatio of medians C++/Rust (> 1: C++ slower) with its bootstrap 95 % CI. A verdict names a winner only when the difference is significant (two-sided Mann–Whitney U, α = 0.05 Bonferroni-corrected over the table) **and** the whole CI of the ratio lies outside the practical-equivalence band 1 ± {margin} %.\n\n"));
        s.push_str("| cipher | variant | scenario | kiv | bits | Rust median | C++ median | C++/Rust | 95 % CI | p | verdict |\n|---|---|---|---|---:|---:|---:|---:|---|---:|---|\n");
        for c in comparison {
            s.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} | {} | {:.2} | {} | {:.2e} | {} |\n",
                c.cipher,
                c.variant,
                c.scenario,
                c.kiv,
                if c.size_bits > 0 { c.size_bits.to_string() } else { "–".into() },
                fmt_ns(c.rust_median_ns),
                fmt_ns(c.cpp_median_ns),
                c.ratio_cpp_rust,
                match (c.ratio_ci95_lo, c.ratio_ci95_hi) {
                    (Some(lo), Some(hi)) => format!("{lo:.2}–{hi:.2}"),
                    _ => "–".into(),
                },
                c.mann_whitney_p,
                c.verdict
            ));
        }
    }
    s += &frames_markdown(summary);
    s
}

/// The `summary.md` section for frame groups: frames per second (1e9 / median ns per frame,
/// its 95 % interval from the median's) and throughput (frame bytes / median time). Empty when
/// the run has no frame groups.
pub fn frames_markdown(summary: &[SummaryRow]) -> String {
    let rows: Vec<_> = summary.iter().filter(|r| r.scenario == "frame" && r.size_bits > 0).collect();
    if rows.is_empty() {
        return String::new();
    }
    let mut s = String::from("\n## Video frames\n\nOne operation = one whole frame: next counter IV, frame copied into the output buffer, init + encrypt (stream) or encrypt + tag (AEAD). ");
    s.push_str("Before timing, every frame of the clip was encrypted and decrypted with each cipher and compared bit for bit. ");
    s.push_str("frames/s = 10⁹ / median ns per frame (95 % interval from the median's); MB/s = frame bytes / median time (10⁶ bytes).\n\n");
    s.push_str("| cipher | implementation | kiv | payload | frame bytes | median per frame | frames/s | 95 % CI of frames/s | MB/s |\n|---|---|---|---|---:|---:|---:|---|---:|\n");
    for r in rows {
        let fps = |ns: f64| if ns > 0.0 { 1e9 / ns } else { f64::NAN };
        let bytes = r.size_bits / 8;
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {:.1} | {:.1} – {:.1} | {:.1} |\n",
            r.cipher,
            r.implementation,
            r.kiv,
            r.payload,
            bytes,
            fmt_ns(r.median_ns),
            fps(r.median_ns),
            fps(r.median_ci95_hi_ns),
            fps(r.median_ci95_lo_ns),
            bytes as f64 / r.median_ns * 1e3
        ));
    }
    s
}
