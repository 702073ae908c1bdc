//! Industrial protocols inside their cycle: the same message measured with and without the
//! cipher over the same path (real peers talk through an encrypted hop), and the `ics-cycle.csv` rows of the ICS study built from them.
use std::fmt::Write;

use lwcbench_engine::studies::ics::{latency, pct_of_budget, Budget};

pub mod goose;
pub mod modbus;

/// One protocol cycle measured with and without the cipher over the same path.
#[derive(Clone, Debug)]
pub struct CycleMeasurement {
    /// "Modbus/TCP" or "GOOSE".
    pub protocol: &'static str,
    /// e.g. "read 10 holding registers (function 3): 12 B request, 29 B response".
    pub message: String,
    /// Plain message size on the wire (ADU / frame), the ICS study's size it stands for.
    pub bytes: usize,
    /// The catalogue name of the cipher.
    pub cipher: String,
    /// Per-cycle latency without encryption (ns).
    pub plain_ns: Vec<u64>,
    /// Per-cycle latency with encryption (ns).
    pub sealed_ns: Vec<u64>,
    /// e.g. "loopback TCP via two proxies".
    pub path: String,
}

/// `ics-cycle.csv`: two rows per measurement (without and with the cipher) with the figures and
/// the verdict rule of the ICS study's cipher-only rows (nearest-rank percentiles, jitter = p99 −
/// p1, % of budget = max / budget × 100, and the same at p99.9). A measurement without samples
/// of a kind gives no row of that kind.
pub fn in_cycle_csv(ms: &[CycleMeasurement], budgets: &[Budget]) -> String {
    let mut csv = String::from(
        "cipher,protocol,message,bytes,measured,path,n,min_ns,p1_ns,median_ns,p99_ns,p99_9_ns,max_ns,jitter_p99_p1_ns,range_ns",
    );
    for b in budgets {
        let _ = write!(csv, ",pct_of_{}", b.name);
    }
    for b in budgets {
        let _ = write!(csv, ",p99_9_pct_of_{}", b.name);
    }
    csv.push('\n');
    let q = |s: &str| s.replace('"', "'");
    for m in ms {
        for (measured, v) in [("in the cycle (plain)", &m.plain_ns), ("in the cycle (sealed)", &m.sealed_ns)] {
            if v.is_empty() {
                continue;
            }
            let f: Vec<f64> = v.iter().map(|&x| x as f64).collect();
            let l = latency(&f);
            let _ = write!(
                csv,
                "\"{}\",\"{}\",\"{}\",{},{measured},\"{}\",{}",
                q(&m.cipher),
                m.protocol,
                q(&m.message),
                m.bytes,
                q(&m.path),
                l.csv_fields()
            );
            for b in budgets {
                let _ = write!(csv, ",{}", pct_of_budget(l.max, b.ms));
            }
            for b in budgets {
                let _ = write!(csv, ",{}", pct_of_budget(l.p999, b.ms));
            }
            csv.push('\n');
        }
    }
    csv
}

#[cfg(test)]
mod tests {
    use super::*;

    fn budgets() -> Vec<Budget> {
        vec![
            Budget { name: "G".into(), ms: 3.0, source: String::new() },
            Budget { name: "T".into(), ms: 10.0, source: String::new() },
        ]
    }

    /// Figures worked out by hand from the latency vectors.
    #[test]
    fn rows_by_hand() {
        // plain: 1000 values 1..=1000 µs (shuffled by reversal): p1 = rank 10 → 10 µs, median
        // rank 500, p99 rank 990, p99.9 rank 999, max 1000 µs; jitter 980 µs; max 1 ms = 33.33…
        // % of 3 ms and 10 % of 10 ms; p99.9 999 µs = 33.3 % and 9.99 %.
        let plain: Vec<u64> = (1..=1000).rev().map(|x| x * 1000).collect();
        // sealed: four values 30, 10, 20, 60 µs: n < 100, so p1 = min, p99 = p99.9 = max; median
        // rank ⌈2⌉ = 2 → 20 µs; jitter 50 µs; 60 µs = 2 % of 3 ms, 0.6 % of 10 ms.
        let sealed = vec![30_000, 10_000, 20_000, 60_000];
        let m = CycleMeasurement {
            protocol: "GOOSE",
            message: "GOOSE 160 B".into(),
            bytes: 160,
            cipher: "Ascon-AEAD128/own".into(),
            plain_ns: plain,
            sealed_ns: sealed,
            path: "veth".into(),
        };
        let csv = in_cycle_csv(&[m], &budgets());
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(
            lines[0],
            "cipher,protocol,message,bytes,measured,path,n,min_ns,p1_ns,median_ns,p99_ns,p99_9_ns,max_ns,jitter_p99_p1_ns,range_ns,pct_of_G,pct_of_T,p99_9_pct_of_G,p99_9_pct_of_T"
        );
        let p: Vec<&str> = lines[1].split(',').collect();
        assert_eq!(
            &p[..6],
            ["\"Ascon-AEAD128/own\"", "\"GOOSE\"", "\"GOOSE 160 B\"", "160", "in the cycle (plain)", "\"veth\""]
        );
        let num = |s: &str| s.parse::<f64>().unwrap();
        let fig: Vec<f64> = p[6..].iter().map(|s| num(s)).collect();
        assert_eq!(
            &fig[..9],
            [1000.0, 1000.0, 10_000.0, 500_000.0, 990_000.0, 999_000.0, 1_000_000.0, 980_000.0, 999_000.0]
        );
        assert!((fig[9] - 100.0 / 3.0).abs() < 1e-9 && (fig[10] - 10.0).abs() < 1e-9);
        assert!((fig[11] - 33.3).abs() < 1e-9 && (fig[12] - 9.99).abs() < 1e-9);
        let s: Vec<f64> = lines[2].split(',').skip(6).map(num).collect();
        assert_eq!(lines[2].split(',').nth(4), Some("in the cycle (sealed)"));
        assert_eq!(&s[..9], [4.0, 10_000.0, 10_000.0, 20_000.0, 60_000.0, 60_000.0, 60_000.0, 50_000.0, 50_000.0]);
        assert!((s[9] - 2.0).abs() < 1e-9 && (s[10] - 0.6).abs() < 1e-9);
        assert_eq!(lines.len(), 3);
    }

    #[test]
    fn a_kind_without_samples_has_no_row() {
        let m = CycleMeasurement {
            protocol: "GOOSE",
            message: "m".into(),
            bytes: 1,
            cipher: "c".into(),
            plain_ns: vec![5],
            sealed_ns: vec![],
            path: "p".into(),
        };
        let csv = in_cycle_csv(&[m], &budgets());
        assert_eq!(csv.lines().count(), 2);
        assert!(csv.lines().nth(1).unwrap().contains("in the cycle (plain)"));
    }
}
