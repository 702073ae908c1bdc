//! The result files of `lwcbench link goose`: the latency rows (as the ICS study's "in the cycle"
//! rows), the per-run accounting and the Markdown summary against the IEC 61850-5 transfer-time
//! classes and the IEC 60834-1 budget.
use std::fmt::Write;

use lwcbench_engine::studies::ics::{default_budgets, latency};
use serde::Serialize;

use super::measure::{GooseRun, PATH};
use crate::industrial::CycleMeasurement;

/// IEC 61850-5 (Ed. 2, "Communication requirements for functions and device models") transfer
/// time classes: the longest transfer time of each class in ms. TT0 is "> 1000 ms" (no bound).
pub const TRANSFER_TIME_CLASSES: [(&str, f64); 6] =
    [("TT1", 1000.0), ("TT2", 500.0), ("TT3", 100.0), ("TT4", 20.0), ("TT5", 10.0), ("TT6", 3.0)];

/// The most demanding transfer-time class a worst case `max_ns` meets ("TT0" above 1000 ms).
pub fn best_class(max_ns: f64) -> &'static str {
    TRANSFER_TIME_CLASSES.iter().rev().find(|(_, ms)| max_ns <= ms * 1e6).map(|(n, _)| *n).unwrap_or("TT0")
}

impl GooseRun {
    /// This run as one "in the cycle" measurement.
    pub fn measurement(&self) -> CycleMeasurement {
        CycleMeasurement {
            protocol: "GOOSE",
            message: format!("GOOSE {} B", self.bytes),
            bytes: self.bytes,
            cipher: self.cipher.clone(),
            plain_ns: self.plain_ns.clone(),
            sealed_ns: self.sealed_ns.clone(),
            path: PATH.to_string(),
        }
    }

    /// Frames not delivered exactly once and intact (the run fails when this is not 0).
    pub fn faults(&self) -> u64 {
        self.plain_lost + self.sealed_lost + self.mismatched + self.plain_duplicates + self.sealed_refused
    }
}

/// One row of `link_goose_runs.csv`.
#[derive(Serialize)]
pub struct RunRow {
    /// The cipher's name.
    pub cipher: String,
    /// The plain frame's size in bytes.
    pub bytes: usize,
    /// The sealed frame's size in bytes.
    pub sealed_bytes: usize,
    /// Frames published per path.
    pub frames: usize,
    /// Plain frames received.
    pub plain_accepted: usize,
    /// Sealed frames accepted.
    pub sealed_accepted: usize,
    /// Plain frames never received.
    pub plain_lost: u64,
    /// Sealed frames never accepted.
    pub sealed_lost: u64,
    /// Accepted frames whose APDU differed from the one published.
    pub mismatched: u64,
    /// Plain frames received twice.
    pub plain_duplicates: u64,
    /// Sealed frames refused.
    pub sealed_refused: u64,
    /// The first counter sealed.
    pub first_counter: u64,
    /// The last counter sealed.
    pub last_counter: u64,
    /// The plain path's IEC 61850 transfer time class (TT0–TT6).
    pub plain_class: &'static str,
    /// The sealed path's transfer time class.
    pub sealed_class: &'static str,
}

/// One row per run for `link_goose_runs.csv`.
pub fn run_rows(runs: &[GooseRun]) -> Vec<RunRow> {
    let class = |v: &[u64]| if v.is_empty() { "n/a" } else { best_class(*v.iter().max().unwrap_or(&0) as f64) };
    runs.iter()
        .map(|r| RunRow {
            cipher: r.cipher.clone(),
            bytes: r.bytes,
            sealed_bytes: r.sealed_bytes,
            frames: r.frames,
            plain_accepted: r.plain_ns.len(),
            sealed_accepted: r.sealed_ns.len(),
            plain_lost: r.plain_lost,
            sealed_lost: r.sealed_lost,
            mismatched: r.mismatched,
            plain_duplicates: r.plain_duplicates,
            sealed_refused: r.sealed_refused,
            first_counter: r.first_counter,
            last_counter: r.last_counter,
            plain_class: class(&r.plain_ns),
            sealed_class: class(&r.sealed_ns),
        })
        .collect()
}

fn us(ns: f64) -> String {
    format!("{:.1} µs", ns / 1e3)
}

/// summary.md: plain against sealed per cipher and size.
pub fn markdown(runs: &[GooseRun]) -> String {
    let budgets = default_budgets();
    let mut md = String::from("# GOOSE on the wire (publish → accepted)\n\n");
    let _ = writeln!(md, "Path: {PATH}; plain and sealed frames alternate. Percentiles nearest-rank; % of budget = max / budget × 100.\n");
    md += "| cipher | frame B | sealed B | kind | n | p50 | p99 | p99.9 | max | jitter (p99−p1) |";
    for b in &budgets {
        let _ = write!(md, " max % of {} ms |", b.ms);
    }
    md += " class (IEC 61850-5) |\n|---|---:|---:|---|---:|---:|---:|---:|---:|---:|";
    md += &"---:|".repeat(budgets.len());
    md += "---|\n";
    for r in runs {
        for (kind, v) in [("plain", &r.plain_ns), ("sealed", &r.sealed_ns)] {
            if v.is_empty() {
                let _ = writeln!(
                    md,
                    "| {} | {} | {} | {kind} | 0 |{}",
                    r.cipher,
                    r.bytes,
                    r.sealed_bytes,
                    " – |".repeat(6 + budgets.len())
                );
                continue;
            }
            let f: Vec<f64> = v.iter().map(|&x| x as f64).collect();
            let l = latency(&f);
            let _ = write!(
                md,
                "| {} | {} | {} | {kind} | {} | {} | {} | {} | {} | {} |",
                r.cipher,
                r.bytes,
                r.sealed_bytes,
                l.n,
                us(l.median),
                us(l.p99),
                us(l.p999),
                us(l.max),
                us(l.jitter)
            );
            for b in &budgets {
                let _ = write!(md, " {:.2} % |", l.max / (b.ms * 1e6) * 100.0);
            }
            let _ = writeln!(md, " {} |", best_class(l.max));
        }
    }
    md += "\nTransfer-time classes (IEC 61850-5 Ed. 2): TT0 > 1000 ms, TT1 1000 ms, TT2 500 ms, TT3 100 ms, TT4 20 ms, TT5 10 ms, TT6 3 ms; the class column is the most demanding class the worst case meets. Budgets: ";
    md += &budgets.iter().map(|b| format!("{} = {} ms ({})", b.name, b.ms, b.source)).collect::<Vec<_>>().join("; ");
    md += ".\n\nAccounting per run (every frame delivered once and intact, counters): link_goose_runs.csv.\n";
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_by_hand() {
        assert_eq!(best_class(2_999_999.0), "TT6");
        assert_eq!(best_class(3_000_000.0), "TT6");
        assert_eq!(best_class(3_000_001.0), "TT5");
        assert_eq!(best_class(15e6), "TT4");
        assert_eq!(best_class(1e9), "TT1");
        assert_eq!(best_class(1.5e9), "TT0");
    }
}
