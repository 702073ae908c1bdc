//! The DRACO study: the C++ and Rust implementations of DRACO (and of every cipher that has
//! both) against each other. `comparison.csv` and the "C++ against Rust" sections of
//! `summary.md` and `report.html` follow from any run that measured both languages, so
//! [`Draco`] derives them for every run (the file with its header only where there is no
//! pair).
use std::collections::BTreeSet;
use std::fmt::Write;

use super::study::{Study, StudyInput, StudyOutput, StudyRun};
use crate::html::{bars_ci, esc};
use crate::plan::{Scenario, Selection, DEFAULT_SIZES};
use crate::results::{comparison_rows, csv_or_header, read_csv_in, ComparisonRow, COMPARISON_HEADER};
use crate::text::fmt_ns;

/// The preset name.
pub const NAME: &str = "draco-study";
/// C++ against Rust per group.
pub const FILE: &str = "comparison.csv";

/// The DRACO study's suite.
pub struct Draco;

impl Study for Draco {
    fn name(&self) -> &'static str {
        NAME
    }
    fn about(&self) -> &'static str {
        "The DRACO study's suite: C++ and Rust × {full, keystream, init} × four <k,iv> variants × {1, 8, 128, 1024} bits × 100 repetitions after 10 excluded warm-ups"
    }
    fn selection(&self) -> Selection {
        Selection {
            ciphers: vec!["DRACO".into()],
            scenarios: vec![Scenario::Full, Scenario::Keystream, Scenario::Init],
            sizes_bits: DEFAULT_SIZES.to_vec(),
            ..Default::default()
        }
    }
    fn reps(&self) -> usize {
        100
    }
    fn warmup(&self) -> usize {
        10
    }
    fn every_run(&self) -> bool {
        true
    }
    fn files(&self) -> &'static [&'static str] {
        &[FILE]
    }
    fn derive(&self, input: &StudyInput) -> Result<StudyOutput, String> {
        let comparison = comparison_rows(input.samples);
        Ok(StudyOutput {
            files: vec![(FILE.into(), csv_or_header(&comparison, COMPARISON_HEADER))],
            markdown: comparison_markdown(&comparison),
            notes: vec![],
        })
    }
    fn html(&self, run: &StudyRun, fig: &mut usize) -> Result<String, String> {
        Ok(comparison_html(&read_csv_in(run.dir, FILE)?, fig))
    }
    fn html_contents(&self) -> Option<(&'static str, &'static str)> {
        Some(("cpp-rust", "C++ against Rust"))
    }
}

/// The "C++ against Rust" section of `summary.md`; empty without pairs.
pub fn comparison_markdown(comparison: &[ComparisonRow]) -> String {
    if comparison.is_empty() {
        return String::new();
    }
    let mut s = String::new();
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
    s
}

/// The "C++ against Rust" section of report.html: a bar per group (colour = variant) and the
/// table; empty without pairs.
pub fn comparison_html(comparison: &[ComparisonRow], fig: &mut usize) -> String {
    if comparison.is_empty() {
        return String::new();
    }
    let mut h = String::new();
    h += "<h2 id=\"cpp-rust\">C++ against Rust</h2><p>Ratio of medians C++/Rust per group (&gt; 1: C++ slower). Verdict: two-sided Mann–Whitney U test, α = 0.05 with a Bonferroni correction over the table.</p>";
    let bars: Vec<(String, f64, f64, f64)> = comparison
        .iter()
        .map(|c| {
            let lbl = if c.size_bits > 0 {
                format!("{} {} <{} | {}>", c.variant, c.scenario, c.kiv, c.size_bits)
            } else {
                format!("{} {} <{}>", c.variant, c.scenario, c.kiv)
            };
            (lbl, c.ratio_cpp_rust, c.ratio_cpp_rust, c.ratio_cpp_rust)
        })
        .collect();
    let variants: Vec<String> =
        comparison.iter().map(|c| c.variant.as_str()).collect::<BTreeSet<_>>().into_iter().map(String::from).collect();
    let colors: Vec<usize> =
        comparison.iter().map(|c| variants.iter().position(|v| v == &c.variant).unwrap_or(0)).collect();
    *fig += 1;
    let _ = write!(
        h,
        "<figure class=\"fig\">{}<figcaption>Figure {fig}. C++/Rust ratio of median times per group; colour = variant.</figcaption></figure>",
        bars_ci(&bars, &colors, "C++ / Rust (median time ratio)", "group", &variants)
    );
    h += "<p>Verdict: significant (Mann–Whitney U, α = 0.05 Bonferroni-corrected) and the whole bootstrap 95 % CI of the ratio outside the practical-equivalence band 1 ± 5 %; otherwise no difference is claimed.</p>";
    h += "<table><tr><th class=\"l\">cipher</th><th class=\"l\">variant</th><th class=\"l\">scenario</th><th>kiv</th><th>bits</th><th>Rust median</th><th>C++ median</th><th>C++/Rust</th><th>p</th><th class=\"l\">verdict</th></tr>";
    for c in comparison {
        let _ = write!(
            h,
            "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.2}</td><td>{:.1e}</td><td class=\"l\">{}</td></tr>",
            esc(&c.cipher),
            esc(&c.variant),
            esc(&c.scenario),
            esc(&c.kiv),
            if c.size_bits > 0 { c.size_bits.to_string() } else { "–".into() },
            fmt_ns(c.rust_median_ns),
            fmt_ns(c.cpp_median_ns),
            c.ratio_cpp_rust,
            c.mann_whitney_p,
            esc(&c.verdict)
        );
    }
    h += "</table>";
    h
}
