//! The statistics rows of a run: samples and warm-up rows from the measured groups, one
//! summary row per group (and one pooled over key/IV variants), Rust-versus-C++ comparisons.
use std::collections::BTreeMap;

use lwcbench_core::Language;
use lwcbench_stats::{decide, summarize, Shift, Summary, DEFAULT_MARGIN};

use super::{ComparisonRow, SampleRow, SummaryRow};
use crate::runner::{GroupResult, Sample};

fn lang(l: Language) -> String {
    l.as_str().to_string()
}

fn rows_of(r: &GroupResult, warm: bool) -> Vec<SampleRow> {
    let g = &r.group;
    let src: &[Sample] = if warm { &r.warmup } else { &r.samples };
    src.iter()
        .enumerate()
        .map(|(i, s)| SampleRow {
            cipher: g.entry.info.name.into(),
            implementation: g.entry.info.implementation.into(),
            language: lang(g.entry.info.language),
            family: g.entry.info.family.as_str().into(),
            scenario: g.scenario.as_str().into(),
            kiv: g.kiv.label().into(),
            size_bits: g.size_bits as u64,
            payload: g.payload.label.clone(),
            rep: i as u32,
            batch: s.ops,
            ns_per_op: s.ns,
            cycles_per_op: s.cycles,
        })
        .collect()
}

/// The measured samples of every group, as `samples.csv` rows.
pub fn sample_rows(results: &[GroupResult]) -> Vec<SampleRow> {
    results.iter().flat_map(|r| rows_of(r, false)).collect()
}
/// The warm-up samples of every group, as `warmup.csv` rows.
pub fn warmup_rows(results: &[GroupResult]) -> Vec<SampleRow> {
    results.iter().flat_map(|r| rows_of(r, true)).collect()
}

fn summary_row(proto: &SampleRow, kiv: &str, batch: u64, ns: &[f64], cycles: &[f64]) -> SummaryRow {
    let s: Summary = summarize(ns);
    let size = proto.size_bits;
    let per_bit = |x: f64| (size > 0).then(|| x / size as f64);
    let median_cycles = (cycles.len() == ns.len() && !cycles.is_empty()).then(|| summarize(cycles).median);
    SummaryRow {
        cipher: proto.cipher.clone(),
        implementation: proto.implementation.clone(),
        language: proto.language.clone(),
        family: proto.family.clone(),
        scenario: proto.scenario.clone(),
        kiv: kiv.into(),
        size_bits: size,
        payload: proto.payload.clone(),
        batch,
        n: s.n as u64,
        mean_ns: s.mean,
        sd_ns: s.sd,
        median_ns: s.median,
        round_spread_pct: round_spread(ns),
        min_ns: s.min,
        max_ns: s.max,
        p95_ns: s.p95,
        p99_ns: s.p99,
        ci95_lo_ns: s.ci95_lo,
        ci95_hi_ns: s.ci95_hi,
        median_ci95_lo_ns: s.median_ci95_lo,
        median_ci95_hi_ns: s.median_ci95_hi,
        outliers: s.outliers as u64,
        median_cycles,
        ns_per_bit: per_bit(s.median),
        mbit_per_s: (size > 0).then(|| size as f64 / s.median * 1000.0),
        cycles_per_bit: median_cycles.and_then(per_bit),
    }
}

/// Between-round spread of samples in measurement order (rep order; pooled rows concatenate
/// their groups' samples, so each part still spans one round of one group or more).
fn round_spread(ns: &[f64]) -> Option<f64> {
    lwcbench_stats::round_spread_pct(ns, crate::runner::ROUNDS)
}

/// Per-group rows followed by pooled rows (kiv = "all") for every
/// implementation × scenario × size that has more than one key/IV variant.
pub fn summary_rows(rows: &[SampleRow]) -> Vec<SummaryRow> {
    type Key = (String, String, String, u64, String);
    let mut groups: BTreeMap<(Key, String), Vec<&SampleRow>> = BTreeMap::new();
    let mut order: Vec<(Key, String)> = Vec::new();
    for r in rows {
        let k = (
            (r.cipher.clone(), r.implementation.clone(), r.scenario.clone(), r.size_bits, r.payload.clone()),
            r.kiv.clone(),
        );
        if !groups.contains_key(&k) {
            order.push(k.clone());
        }
        groups.entry(k).or_default().push(r);
    }
    let mut out = Vec::new();
    let mut pooled_order: Vec<Key> = Vec::new();
    for k in &order {
        let v = &groups[k];
        let ns: Vec<f64> = v.iter().map(|r| r.ns_per_op).collect();
        let cy: Vec<f64> = v.iter().filter_map(|r| r.cycles_per_op).collect();
        // the calibrated batch: the smallest (floor extensions only ever add operations)
        let batch = v.iter().map(|r| r.batch).min().unwrap_or(1);
        out.push(summary_row(v[0], &k.1, batch, &ns, &cy));
        if !pooled_order.contains(&k.0) {
            pooled_order.push(k.0.clone());
        }
    }
    for pk in pooled_order {
        let parts: Vec<&Vec<&SampleRow>> = order.iter().filter(|k| k.0 == pk).map(|k| &groups[k]).collect();
        if parts.len() < 2 {
            continue;
        }
        // round by round: round r's part of every group, then round r + 1's, so the
        // between-round spread of the pooled row compares rounds, not key/IV variants
        let rounds = crate::runner::ROUNDS;
        let all: Vec<&SampleRow> = (0..rounds)
            .flat_map(|r| parts.iter().flat_map(move |v| v[r * v.len() / rounds..(r + 1) * v.len() / rounds].iter()))
            .copied()
            .collect();
        let ns: Vec<f64> = all.iter().map(|r| r.ns_per_op).collect();
        let cy: Vec<f64> = all.iter().filter_map(|r| r.cycles_per_op).collect();
        let batch = all.iter().map(|r| r.batch).max().unwrap_or(1);
        out.push(summary_row(all[0], "all", batch, &ns, &cy));
    }
    out
}

/// C++ against Rust for implementations named `rust-X` / `cpp-X` of the same cipher.
/// Verdict ([`lwcbench_stats::decide`]): Mann–Whitney at α = 0.05 Bonferroni-corrected over
/// all rows of the table AND the bootstrap CI of the ratio outside ±[`DEFAULT_MARGIN`].
pub fn comparison_rows(rows: &[SampleRow]) -> Vec<ComparisonRow> {
    type Key = (String, String, String, String, u64, String); // cipher, variant, scenario, kiv, size, payload
    let mut rust: BTreeMap<Key, Vec<f64>> = BTreeMap::new();
    let mut cpp: BTreeMap<Key, Vec<f64>> = BTreeMap::new();
    for r in rows {
        let (map, variant) = if let Some(v) = r.implementation.strip_prefix("rust-") {
            (&mut rust, v)
        } else if let Some(v) = r.implementation.strip_prefix("cpp-") {
            (&mut cpp, v)
        } else {
            continue;
        };
        map.entry((
            r.cipher.clone(),
            variant.into(),
            r.scenario.clone(),
            r.kiv.clone(),
            r.size_bits,
            r.payload.clone(),
        ))
        .or_default()
        .push(r.ns_per_op);
    }
    let pairs: Vec<(&Key, &Vec<f64>, &Vec<f64>)> =
        rust.iter().filter_map(|(k, a)| cpp.get(k).map(|b| (k, a, b))).collect();
    let alpha = lwcbench_stats::bonferroni(0.05, pairs.len());
    pairs
        .into_iter()
        .map(|(k, a, b)| {
            let c = decide(a, b, alpha, DEFAULT_MARGIN);
            let verdict = match c.shift {
                Shift::None => no_difference(DEFAULT_MARGIN),
                Shift::Slower => "Rust faster".into(),
                Shift::Faster => "C++ faster".into(),
            };
            ComparisonRow {
                cipher: k.0.clone(),
                variant: k.1.clone(),
                scenario: k.2.clone(),
                kiv: k.3.clone(),
                size_bits: k.4,
                payload: k.5.clone(),
                rust_median_ns: summarize(a).median,
                cpp_median_ns: summarize(b).median,
                ratio_cpp_rust: c.ratio,
                mann_whitney_p: c.p,
                verdict,
                ratio_ci95_lo: Some(c.ratio_lo),
                ratio_ci95_hi: Some(c.ratio_hi),
                margin_pct: Some(c.margin * 100.0),
            }
        })
        .collect()
}

/// The verdict text when a difference is not both significant and outside ±margin.
pub fn no_difference(margin: f64) -> String {
    format!("no difference beyond ±{} %", margin * 100.0)
}
