//! `lwcbench run --repeat N`: the between-run spread of every group's median over N runs of
//! the same plan (a within-run CI is not a between-run error bar), and whether the
//! instruction counts of `--counter instructions` agreed exactly.
use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{de::DeserializeOwned, Serialize};

use crate::counter::InstrRow;
use crate::results::SummaryRow;

/// One row of `repeat.csv`: one group over all runs.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct RepeatRow {
    /// Cipher name.
    pub cipher: String,
    /// Implementation name.
    pub implementation: String,
    /// Scenario.
    pub scenario: String,
    /// Key/IV variant.
    pub kiv: String,
    /// Message size in bits.
    pub size_bits: u64,
    /// Payload kind.
    pub payload: String,
    /// Runs the group was measured in.
    pub runs: usize,
    /// Median of the runs' medians, and their smallest and largest.
    pub median_ns: f64,
    /// Smallest of the runs' medians, ns.
    pub median_min_ns: f64,
    /// Largest of the runs' medians, ns.
    pub median_max_ns: f64,
    /// (max − min) of the runs' medians / median_ns × 100.
    pub spread_pct: f64,
    /// The runs' medians in run order, `;`-separated.
    pub medians_ns: String,
    /// Instructions per operation when every run counted them and all agreed exactly.
    pub instructions_per_op: Option<f64>,
    /// Whether the runs' instruction counts were identical (empty without counts).
    pub instructions_identical: Option<bool>,
}

fn read<T: DeserializeOwned>(p: &std::path::Path) -> Result<Vec<T>, String> {
    let mut r = csv::Reader::from_path(p).map_err(|e| format!("{}: {e}", p.display()))?;
    r.deserialize().map(|x| x.map_err(|e| format!("{}: {e}", p.display()))).collect()
}

type Key = (String, String, String, String, u64, String);

/// Spread over the run directories (each a finished run of the same plan).
pub fn spread(dirs: &[PathBuf]) -> Result<Vec<RepeatRow>, String> {
    let mut med: BTreeMap<Key, Vec<f64>> = BTreeMap::new();
    // (instructions, operations counted) per run
    let mut instr: BTreeMap<Key, Vec<(u64, u64)>> = BTreeMap::new();
    let mut order: Vec<Key> = Vec::new();
    for d in dirs {
        for r in read::<SummaryRow>(&d.join("summary.csv"))?.into_iter().filter(|r| r.kiv != "all") {
            let k = (r.cipher, r.implementation, r.scenario, r.kiv, r.size_bits, r.payload);
            if !med.contains_key(&k) {
                order.push(k.clone());
            }
            med.entry(k).or_default().push(r.median_ns);
        }
        let ip = d.join("instructions.csv");
        if ip.exists() {
            for r in read::<InstrRow>(&ip)? {
                let k = (r.cipher, r.implementation, r.scenario, r.kiv, r.size_bits, r.payload);
                instr.entry(k).or_default().push((r.instructions, r.ops.max(1)));
            }
        }
    }
    Ok(order
        .into_iter()
        .map(|k| {
            let m = &med[&k];
            let s = lwcbench_stats::summarize(m);
            let counts = instr.get(&k).filter(|c| c.len() == dirs.len());
            let same = counts.map(|c| c.windows(2).all(|w| w[0] == w[1]));
            RepeatRow {
                runs: m.len(),
                median_ns: s.median,
                median_min_ns: s.min,
                median_max_ns: s.max,
                spread_pct: (s.max - s.min) / s.median * 100.0,
                medians_ns: m.iter().map(|x| format!("{x:.3}")).collect::<Vec<_>>().join(";"),
                instructions_per_op: counts.filter(|_| same == Some(true)).map(|c| c[0].0 as f64 / c[0].1 as f64),
                instructions_identical: same,
                cipher: k.0,
                implementation: k.1,
                scenario: k.2,
                kiv: k.3,
                size_bits: k.4,
                payload: k.5,
            }
        })
        .collect())
}

/// Terminal summary of [`spread`].
pub fn text(rows: &[RepeatRow], runs: usize) -> String {
    use std::fmt::Write;
    let mut s = format!(
        "\n{:<20} {:<16} {:<9} {:>4} {:>7} {:>12} {:>9} {:>14}\n",
        "cipher", "impl", "scenario", "kiv", "bits", "median", "spread", "instr/op"
    );
    for r in rows {
        let _ = writeln!(
            s,
            "{:<20} {:<16} {:<9} {:>4} {:>7} {:>12} {:>8.1}% {:>14}",
            r.cipher,
            r.implementation,
            r.scenario,
            r.kiv,
            r.size_bits,
            crate::text::fmt_ns(r.median_ns),
            r.spread_pct,
            match (r.instructions_per_op, r.instructions_identical) {
                (Some(v), _) => format!("{v:.1}"),
                (None, Some(false)) => "DIFFER".into(),
                _ => "–".into(),
            }
        );
    }
    let mut sp: Vec<f64> = rows.iter().map(|r| r.spread_pct).collect();
    sp.sort_by(|a, b| a.partial_cmp(b).expect("finite"));
    if !sp.is_empty() {
        let _ = writeln!(
            s,
            "\nbetween-run spread of medians over {runs} runs: median {:.1} %, max {:.1} % ({} groups)",
            lwcbench_stats::quantile_sorted(&sp, 0.5),
            sp[sp.len() - 1],
            rows.len()
        );
    }
    let counted: Vec<&RepeatRow> = rows.iter().filter(|r| r.instructions_identical.is_some()).collect();
    if !counted.is_empty() {
        let same = counted.iter().filter(|r| r.instructions_identical == Some(true)).count();
        let _ = writeln!(s, "instruction counts identical in all {runs} runs: {same} of {} groups", counted.len());
    }
    s
}
