//! The DRACO study's dataset-versus-random tables, for every cipher and implementation run
//! with both a dataset payload and a random payload of the same length.
//!
//! * Table 1: per payload, all four key/IV variants pooled — n, mean, median, sd, min, max.
//! * Table 2: mean per key/IV variant, dataset against random.
//!
//! The study only eyeballed whether the data changes the cost. Here each pair is tested with a
//! two-sided Mann–Whitney U test: timing samples are skewed with outliers, so a rank test that
//! assumes no normality is the right one; it asks whether one payload's times tend to be larger.
//! With 400 samples per side it detects very small shifts — on a noisy host it found
//! "significance" in drift, in opposite directions in two identical runs — so the verdict also
//! requires the bootstrap 95 % CI of the ratio of medians to lie wholly outside the
//! practical-equivalence band 1 ± 5 % ([`lwcbench_stats::decide`]).
//!
//! The tables follow from what any run measured, so [`Sensor`] derives them for every run
//! (`--dataset` runs, collected board logs), not only under its preset `sensor-study`.
use std::collections::BTreeMap;
use std::fmt::Write;

use lwcbench_stats::{decide, summarize, Shift, DEFAULT_MARGIN};

use super::study::{Study, StudyInput, StudyOutput, StudyRun};
use crate::dataset::{Dataset, Encode};
use crate::html::esc;
use crate::plan::{Payload, Scenario, Selection};
use crate::results::{read_csv_in, to_csv, SampleRow};
use crate::text::fmt_ns;

/// The preset name.
pub const NAME: &str = "sensor-study";
/// Table 1 (pooled over the key/IV variants).
pub const TABLE1_FILE: &str = "table1_dataset_vs_random.csv";
/// Table 2 (mean per key/IV variant).
pub const TABLE2_FILE: &str = "table2_dataset_vs_random.csv";

/// The DRACO study's headline experiment.
pub struct Sensor;

impl Study for Sensor {
    fn published(&self, ours: &crate::published::Ours) -> Option<crate::published::Section> {
        Some(crate::published::draco(ours.t1, ours.t2))
    }
    fn name(&self) -> &'static str {
        NAME
    }
    fn about(&self) -> &'static str {
        ABOUT
    }
    fn selection(&self) -> Selection {
        let d = Dataset::builtin();
        let bytes = d.payload(&Encode::default()).expect("built-in dataset has 702 readings");
        Selection {
            ciphers: vec!["DRACO".into()],
            // full for stream ciphers, encrypt for AEADs (with --all), reading for both
            scenarios: vec![Scenario::Full, Scenario::Encrypt, Scenario::Reading],
            sizes_bits: vec![bytes.len() * 8],
            payloads: vec![Payload::dataset(&d.name, bytes), Payload::random()],
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
        &[TABLE1_FILE, TABLE2_FILE]
    }
    /// Both tables where the run has dataset/random pairs; nothing otherwise.
    fn derive(&self, input: &StudyInput) -> Result<StudyOutput, String> {
        let (t1, t2) = dataset_vs_random(input.samples);
        if t1.is_empty() {
            return Ok(StudyOutput::default());
        }
        Ok(StudyOutput {
            files: vec![(TABLE1_FILE.into(), to_csv(&t1)), (TABLE2_FILE.into(), to_csv(&t2))],
            markdown: markdown(&t1, &t2),
            notes: vec![],
        })
    }
    /// Both tables from the files [`derive`](Study::derive) wrote (not recomputed: they
    /// bootstrap).
    fn html(&self, run: &StudyRun, _fig: &mut usize) -> Result<String, String> {
        Ok(html(&read_csv_in(run.dir, TABLE1_FILE)?, &read_csv_in(run.dir, TABLE2_FILE)?))
    }
}

const ABOUT: &str = "The DRACO study's headline experiment: `full` over 702 real 32-bit sensor readings (22,464 bits; built-in office-building data or --dataset FILE) against a random payload of the same length, 100 runs per <k,iv> after warm-up; Table 1, Table 2 and a Mann-Whitney test; plus per-reading encryption with a counter IV. DRACO by default, --all for every stream cipher and AEAD";

pub use crate::study_rows::{Table1Row, Table2Row};

type Key = (String, String, String, u64);

/// Build both tables. α = 0.05, Bonferroni-corrected over the Table 1 pairs.
pub fn dataset_vs_random(rows: &[SampleRow]) -> (Vec<Table1Row>, Vec<Table2Row>) {
    // key → payload → kiv → samples
    let mut m: BTreeMap<Key, BTreeMap<String, BTreeMap<String, Vec<f64>>>> = BTreeMap::new();
    for r in rows.iter().filter(|r| r.scenario != "reading") {
        m.entry((r.cipher.clone(), r.implementation.clone(), r.scenario.clone(), r.size_bits))
            .or_default()
            .entry(r.payload.clone())
            .or_default()
            .entry(r.kiv.clone())
            .or_default()
            .push(r.ns_per_op);
    }
    type ByKiv = BTreeMap<String, Vec<f64>>;
    let pairs: Vec<(&Key, &ByKiv, &str, &ByKiv)> = m
        .iter()
        .filter_map(|(k, by_payload)| {
            let random = by_payload.get("random")?;
            let (dname, data) = by_payload.iter().find(|(p, _)| p.starts_with("dataset:"))?;
            Some((k, data, dname.as_str(), random))
        })
        .collect();
    let alpha = lwcbench_stats::bonferroni(0.05, pairs.len());
    let mut t1 = Vec::new();
    let mut t2 = Vec::new();
    let kiv_order = ["s,s", "s,r", "r,s", "r,r"];
    for (k, data, dname, random) in pairs {
        let pool = |m: &BTreeMap<String, Vec<f64>>| m.values().flatten().copied().collect::<Vec<f64>>();
        let (d, r) = (pool(data), pool(random));
        let c = decide(&r, &d, alpha, DEFAULT_MARGIN);
        let verdict = match c.shift {
            Shift::None => crate::results::no_difference(DEFAULT_MARGIN),
            Shift::Slower => "dataset slower".into(),
            Shift::Faster => "dataset faster".into(),
        };
        for (label, xs) in [(dname.to_string(), &d), ("random".to_string(), &r)] {
            let s = summarize(xs);
            t1.push(Table1Row {
                cipher: k.0.clone(),
                implementation: k.1.clone(),
                scenario: k.2.clone(),
                size_bits: k.3,
                payload: label,
                n: s.n as u64,
                mean_ns: s.mean,
                median_ns: s.median,
                sd_ns: s.sd,
                min_ns: s.min,
                max_ns: s.max,
                ratio_dataset_random: c.ratio,
                mann_whitney_p: c.p,
                verdict: verdict.clone(),
                ratio_ci95_lo: c.ratio_lo,
                ratio_ci95_hi: c.ratio_hi,
                margin_pct: c.margin * 100.0,
            });
        }
        for kiv in kiv_order {
            let (Some(dk), Some(rk)) = (data.get(kiv), random.get(kiv)) else { continue };
            let (md, mr) = (summarize(dk).mean, summarize(rk).mean);
            t2.push(Table2Row {
                cipher: k.0.clone(),
                implementation: k.1.clone(),
                scenario: k.2.clone(),
                size_bits: k.3,
                kiv: kiv.into(),
                dataset: dname.to_string(),
                dataset_mean_ns: md,
                random_mean_ns: mr,
                diff_pct: (md - mr) / mr * 100.0,
                mann_whitney_p: lwcbench_stats::mann_whitney_p(rk, dk),
            });
        }
    }
    (t1, t2)
}

/// Markdown of both tables in the study's layout.
pub fn markdown(t1: &[Table1Row], t2: &[Table2Row]) -> String {
    let mut s = String::new();
    if t1.is_empty() {
        return s;
    }
    s.push_str("\n## Dataset against random payload\n\nTable 1 — all four key/IV variants pooled. Ratio = median(dataset)/median(random) with its bootstrap 95 % CI. A verdict names a difference only when it is significant (two-sided Mann–Whitney U, α = 0.05 Bonferroni-corrected) **and** the whole CI lies outside the practical-equivalence band 1 ± ");
    s.push_str(&format!("{} %.\n\n", t1[0].margin_pct));
    s.push_str("| cipher | implementation | scenario | bits | payload | n | mean | median | sd | min | max | ratio | 95 % CI | p | verdict |\n|---|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---|\n");
    for r in t1 {
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.4} | {:.3}–{:.3} | {:.2e} | {} |\n",
            r.cipher,
            r.implementation,
            r.scenario,
            r.size_bits,
            r.payload,
            r.n,
            fmt_ns(r.mean_ns),
            fmt_ns(r.median_ns),
            fmt_ns(r.sd_ns),
            fmt_ns(r.min_ns),
            fmt_ns(r.max_ns),
            r.ratio_dataset_random,
            r.ratio_ci95_lo,
            r.ratio_ci95_hi,
            r.mann_whitney_p,
            r.verdict
        ));
    }
    s.push_str("\nTable 2 — mean per key/IV variant.\n\n| cipher | implementation | scenario | bits | <k,iv> | dataset mean | random mean | difference | p |\n|---|---|---|---:|---|---:|---:|---:|---:|\n");
    for r in t2 {
        s.push_str(&format!(
            "| {} | {} | {} | {} | <{}> | {} | {} | {:+.2} % | {:.2e} |\n",
            r.cipher,
            r.implementation,
            r.scenario,
            r.size_bits,
            r.kiv,
            fmt_ns(r.dataset_mean_ns),
            fmt_ns(r.random_mean_ns),
            r.diff_pct,
            r.mann_whitney_p
        ));
    }
    s
}

/// The section of report.html: Table 1 and Table 2 as the study printed them, with the
/// verdicts; empty without dataset/random pairs.
pub fn html(t1: &[Table1Row], t2: &[Table2Row]) -> String {
    if t1.is_empty() {
        return String::new();
    }
    let mut h = String::new();
    h += "<h2 id=\"dataset\">Dataset against random payload</h2><p>The study's Table 1 (all four key/IV variants pooled) and Table 2 (mean per key/IV variant). Test: two-sided Mann–Whitney U (timing data is skewed; no normality assumed), α = 0.05 Bonferroni-corrected; a verdict names a difference only when it is also outside the practical-equivalence band 1 ± 5 % (the whole bootstrap 95 % CI of the ratio of medians outside it; see docs/measurement.md).</p>";
    h += "<table><tr><th class=\"l\">cipher</th><th class=\"l\">implementation</th><th class=\"l\">scenario</th><th>bits</th><th class=\"l\">payload</th><th>n</th><th>mean</th><th>median</th><th>sd</th><th>min</th><th>max</th><th>dataset/random</th><th>p</th><th class=\"l\">verdict</th></tr>";
    for r in t1 {
        let _ = write!(
            h,
            "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.4}</td><td>{:.1e}</td><td class=\"l\">{}</td></tr>",
            esc(&r.cipher), esc(&r.implementation), esc(&r.scenario), r.size_bits, esc(&r.payload), r.n,
            fmt_ns(r.mean_ns), fmt_ns(r.median_ns), fmt_ns(r.sd_ns), fmt_ns(r.min_ns), fmt_ns(r.max_ns),
            r.ratio_dataset_random, r.mann_whitney_p, esc(&r.verdict)
        );
    }
    h += "</table><table><tr><th class=\"l\">cipher</th><th class=\"l\">implementation</th><th class=\"l\">scenario</th><th>&lt;k,iv&gt;</th><th>dataset mean</th><th>random mean</th><th>difference</th><th>p</th></tr>";
    for r in t2 {
        let _ = write!(
            h,
            "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td>&lt;{}&gt;</td><td>{}</td><td>{}</td><td>{:+.2} %</td><td>{:.1e}</td></tr>",
            esc(&r.cipher), esc(&r.implementation), esc(&r.scenario), esc(&r.kiv), fmt_ns(r.dataset_mean_ns), fmt_ns(r.random_mean_ns), r.diff_pct, r.mann_whitney_p
        );
    }
    h += "</table>";
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(payload: &str, kiv: &str, ns: f64) -> SampleRow {
        SampleRow {
            cipher: "X".into(),
            implementation: "i".into(),
            language: "Rust".into(),
            family: "stream".into(),
            scenario: "full".into(),
            kiv: kiv.into(),
            size_bits: 64,
            payload: payload.into(),
            rep: 0,
            batch: 1,
            ns_per_op: ns,
            cycles_per_op: None,
        }
    }

    #[test]
    fn tables_by_hand() {
        let mut rows = Vec::new();
        for kiv in ["s,s", "r,r"] {
            for i in 0..10 {
                rows.push(row("dataset:d", kiv, 100.0 + i as f64));
                rows.push(row("random", kiv, 100.0 + i as f64 + if kiv == "r,r" { 50.0 } else { 0.0 }));
            }
        }
        let (t1, t2) = dataset_vs_random(&rows);
        assert_eq!(t1.len(), 2);
        let d = &t1[0];
        assert_eq!((d.payload.as_str(), d.n), ("dataset:d", 20));
        assert!((d.mean_ns - 104.5).abs() < 1e-12); // 100..109 twice
        assert_eq!((d.min_ns, d.max_ns), (100.0, 109.0));
        let r = &t1[1];
        assert!((r.mean_ns - 129.5).abs() < 1e-12); // 100..109 and 150..159
        assert_eq!(t2.len(), 2);
        assert_eq!(t2[0].kiv, "s,s");
        assert_eq!(t2[0].diff_pct, 0.0);
        // r,r: dataset 104.5 vs random 154.5 → −32.36 %
        assert!((t2[1].diff_pct - (104.5 - 154.5) / 154.5 * 100.0).abs() < 1e-9);
        assert!(t2[1].mann_whitney_p < 0.01 && t2[0].mann_whitney_p > 0.9);
        // pooled medians 104.5 vs 129.5: dataset/random = 0.807; but random is bimodal (100–109
        // and 150–159), so its resampled median ranges from 109 to 150 and the ratio's CI
        // reaches 104.5/109 = 0.96, inside the band: no verdict (the old rule said "faster")
        assert!((d.ratio_dataset_random - 104.5 / 129.5).abs() < 1e-12);
        assert!(d.ratio_ci95_lo > 0.6 && d.ratio_ci95_hi > 0.95 && d.margin_pct == 5.0, "{d:?}");
        assert_eq!(d.verdict, "no difference beyond ±5 %");
    }

    /// A tiny but consistent shift (+1 %) with many samples is significant but not practical:
    /// the old rule called it "dataset slower".
    #[test]
    fn significant_but_tiny_shift_is_no_difference() {
        let mut rows = Vec::new();
        for i in 0..400 {
            let v = 100.0 + (i % 40) as f64 * 0.05;
            rows.push(row("random", "s,s", v));
            rows.push(row("dataset:d", "s,s", v * 1.01));
        }
        let (t1, _) = dataset_vs_random(&rows);
        assert!(t1[0].mann_whitney_p < 1e-6);
        assert_eq!(t1[0].verdict, "no difference beyond ±5 %");
        // the same with +20 %: a real difference
        let rows: Vec<SampleRow> = rows
            .into_iter()
            .map(|mut r| {
                if r.payload != "random" {
                    r.ns_per_op *= 1.2 / 1.01;
                }
                r
            })
            .collect();
        assert_eq!(dataset_vs_random(&rows).0[0].verdict, "dataset slower");
    }
}
