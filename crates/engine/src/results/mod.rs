//! Result files of one run. Column meanings are documented in `docs/result-files.md`; keep
//! the two in step.
//!
//! A run directory is written as one unit ([`RunDirWriter`]): every file, `run.json` and
//! `report.html` included, goes into a fresh hidden sibling directory, is flushed, and the
//! sibling is then swapped in for `--out` with one rename (`renameat2(RENAME_EXCHANGE)` when
//! a previous run is replaced). A kill or write error at any step leaves the previous complete
//! run, the new complete run, or nothing under `--out`; never a mix. Siblings left by a killed
//! process are removed by the next run into the same `--out`.
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::clock::ClockInfo;
use crate::machine::{Build, Machine};

mod rundir;
mod summary;

pub use rundir::{
    default_out, link_file, link_tree, prepare_dir, rewrite_dir, scratch_sibling, step, write_atomic, write_atomic_to,
    ReportRenderer, RunDirWriter,
};
pub use summary::{comparison_rows, no_difference, sample_rows, summary_rows, warmup_rows};

/// One row of `samples.csv` / `warmup.csv`.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct SampleRow {
    /// Cipher name as in the catalogue.
    pub cipher: String,
    /// Implementation name (e.g. rust-fast, cpp-ref).
    pub implementation: String,
    /// Language of the implementation (Rust, C++, …).
    pub language: String,
    /// stream, block or aead.
    pub family: String,
    /// What one operation does (full, keystream, init, encrypt, …).
    pub scenario: String,
    /// Key/IV variant: `s,s`, `s,r`, `r,s`, `r,r` (static/random key, IV); `all` pooled.
    pub kiv: String,
    /// Message size in bits.
    pub size_bits: u64,
    /// "random" or "dataset:<name>".
    pub payload: String,
    /// Repetition index (0-based) within the group.
    pub rep: u32,
    /// Operations timed together in this sample.
    pub batch: u64,
    /// Nanoseconds per operation (sample time / batch).
    pub ns_per_op: f64,
    /// Cycles per operation, when a cycle counter was read.
    pub cycles_per_op: Option<f64>,
}

/// One row of `summary.csv`: one group, or (kiv = "all") the four key/IV variants pooled.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct SummaryRow {
    /// Cipher name as in the catalogue.
    pub cipher: String,
    /// Implementation name (e.g. rust-fast, cpp-ref).
    pub implementation: String,
    /// Language of the implementation (Rust, C++, …).
    pub language: String,
    /// stream, block or aead.
    pub family: String,
    /// What one operation does (full, keystream, init, encrypt, …).
    pub scenario: String,
    /// Key/IV variant: `s,s`, `s,r`, `r,s`, `r,r` (static/random key, IV); `all` pooled.
    pub kiv: String,
    /// Message size in bits.
    pub size_bits: u64,
    /// "random" or "dataset:<name>".
    pub payload: String,
    /// Operations per sample.
    pub batch: u64,
    /// Samples in the statistics (warm-up excluded).
    pub n: u64,
    /// Mean ns per operation.
    pub mean_ns: f64,
    /// Sample standard deviation, ns.
    pub sd_ns: f64,
    /// Median ns per operation.
    pub median_ns: f64,
    /// Between-round spread: the samples cut into the run's interleaved rounds (consecutive
    /// parts), (max − min) of the parts' medians / median_ns × 100. Empty with < 2 samples
    /// per round or in files written before it existed.
    #[serde(default)]
    pub round_spread_pct: Option<f64>,
    /// Fastest sample, ns.
    pub min_ns: f64,
    /// Slowest sample, ns.
    pub max_ns: f64,
    /// 95th percentile, ns.
    pub p95_ns: f64,
    /// 99th percentile, ns.
    pub p99_ns: f64,
    /// Lower end of the mean's 95 % confidence interval, ns.
    pub ci95_lo_ns: f64,
    /// Upper end of the mean's 95 % confidence interval, ns.
    pub ci95_hi_ns: f64,
    /// Lower end of the median's 95 % confidence interval, ns.
    pub median_ci95_lo_ns: f64,
    /// Upper end of the median's 95 % confidence interval, ns.
    pub median_ci95_hi_ns: f64,
    /// Samples outside the Tukey fences (kept in the statistics).
    pub outliers: u64,
    /// Median cycles per operation, when counted.
    pub median_cycles: Option<f64>,
    /// median_ns / size_bits (empty for init/keysetup).
    pub ns_per_bit: Option<f64>,
    /// size_bits / median_ns × 1000 (empty for init/keysetup).
    pub mbit_per_s: Option<f64>,
    /// median cycles / size_bits.
    pub cycles_per_bit: Option<f64>,
}

/// One row of `comparison.csv`: a C++ implementation against its Rust twin (same cipher,
/// same variant suffix, e.g. cpp-fast vs rust-fast) for one group.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct ComparisonRow {
    /// Cipher name as in the catalogue.
    pub cipher: String,
    /// The implementation variant both sides share (ref, fast).
    pub variant: String,
    /// What one operation does (full, keystream, init, encrypt, …).
    pub scenario: String,
    /// Key/IV variant: `s,s`, `s,r`, `r,s`, `r,r` (static/random key, IV); `all` pooled.
    pub kiv: String,
    /// Message size in bits.
    pub size_bits: u64,
    /// "random" or "dataset:<name>".
    pub payload: String,
    /// Median ns of the Rust implementation.
    pub rust_median_ns: f64,
    /// Median ns of the C++ implementation.
    pub cpp_median_ns: f64,
    /// cpp / rust medians: > 1 means C++ is slower.
    pub ratio_cpp_rust: f64,
    /// Two-sided Mann-Whitney U p-value of the two sample sets.
    pub mann_whitney_p: f64,
    /// "C++ faster" / "Rust faster" only when p < α AND the ratio's CI lies wholly outside
    /// 1 ± margin_pct %; otherwise "no difference beyond ±margin_pct %".
    pub verdict: String,
    /// Bootstrap 95 % CI of ratio_cpp_rust (empty in files written before it existed).
    #[serde(default)]
    pub ratio_ci95_lo: Option<f64>,
    /// Upper end of the bootstrap 95 % CI of ratio_cpp_rust.
    #[serde(default)]
    pub ratio_ci95_hi: Option<f64>,
    /// The practical-equivalence margin of the verdict, in %.
    #[serde(default)]
    pub margin_pct: Option<f64>,
}

/// Everything `run.json` records.
#[derive(Serialize, Deserialize, Debug, Clone)]
pub struct RunRecord {
    /// Always "lwcbench".
    pub tool: String,
    /// The tool's version.
    pub version: String,
    /// The command line (or the Python call).
    pub args: Vec<String>,
    /// The preset run, if any.
    pub preset: Option<String>,
    /// Seed of random keys, IVs and payloads.
    pub seed: u64,
    /// Measured repetitions per group.
    pub reps: usize,
    /// Warm-up samples per group (excluded from statistics).
    pub warmup: usize,
    /// How warm-up samples are taken and used.
    pub warmup_policy: String,
    /// Minimum duration of one sample, ns (short operations are batched up to it).
    pub min_sample_ns: f64,
    /// `--key`, hex.
    pub static_key_hex: Option<String>,
    /// `--iv`, hex.
    pub static_iv_hex: Option<String>,
    /// Payload kinds measured.
    pub payload: String,
    /// Groups measured.
    pub groups: usize,
    /// The machine measured on.
    pub machine: Machine,
    /// The build that measured.
    pub build: Build,
    /// Clock and cycle counter used.
    pub clock: ClockInfo,
    /// Start time, RFC 3339 UTC.
    pub started_utc: String,
    /// End of measurement, RFC 3339 UTC.
    pub finished_utc: String,
    /// Measurement duration, s.
    pub duration_s: f64,
    /// Files of the run directory.
    pub files: Vec<String>,
    /// Notes and warnings on the run.
    pub notes: Vec<String>,
}

/// Rows as CSV bytes, with a header from the row type's field names.
pub fn to_csv<T: Serialize>(rows: &[T]) -> Vec<u8> {
    let mut w = csv::Writer::from_writer(Vec::new());
    for r in rows {
        w.serialize(r).expect("serialising a row to memory cannot fail");
    }
    w.into_inner().expect("in-memory writer")
}

/// The rows of a CSV result file; an error names the file and the line.
pub fn read_csv<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Vec<T>, String> {
    let mut r = csv::Reader::from_path(path).map_err(|e| format!("{}: {e}", path.display()))?;
    r.deserialize()
        .map(|row| {
            row.map_err(|e| {
                let line = e.position().map(|p| format!(":{}", p.line())).unwrap_or_default();
                format!("{}{line}: {e}", path.display())
            })
        })
        .collect()
}

/// Largest `ns_per_op` a sample may give: 10¹⁵ ns (11.6 days per operation). Bounded so the
/// statistics of any number of samples (sums, squares, ratios) stay finite.
pub const MAX_NS_PER_OP: f64 = 1e15;
/// Largest `cycles_per_op` a sample may give (10¹⁸: a 1 THz counter over [`MAX_NS_PER_OP`]).
pub const MAX_CYCLES_PER_OP: f64 = 1e18;

/// What a value of a result row must be: the column and the rule, for the reader's error.
pub type RowRule = (&'static str, String);

impl SampleRow {
    /// The first value no measurement can give: a non-finite, zero or negative time, a time
    /// or cycle count above its bound, a batch of no operations.
    pub fn impossible(&self) -> Option<RowRule> {
        if !(self.ns_per_op.is_finite() && self.ns_per_op > 0.0 && self.ns_per_op <= MAX_NS_PER_OP) {
            return Some(("ns_per_op", format!("is not a number of ns above 0 and at most {MAX_NS_PER_OP:e}")));
        }
        if let Some(c) = self.cycles_per_op {
            if !(c.is_finite() && (0.0..=MAX_CYCLES_PER_OP).contains(&c)) {
                return Some(("cycles_per_op", format!("is not a number from 0 to {MAX_CYCLES_PER_OP:e}")));
            }
        }
        (self.batch == 0).then(|| ("batch", "is not a count of operations above 0".to_string()))
    }
}

impl SummaryRow {
    /// The first statistic that is not a finite number (no set of samples gives one).
    pub fn impossible(&self) -> Option<RowRule> {
        let values = [
            ("mean_ns", Some(self.mean_ns)),
            ("sd_ns", Some(self.sd_ns)),
            ("median_ns", Some(self.median_ns)),
            ("round_spread_pct", self.round_spread_pct),
            ("min_ns", Some(self.min_ns)),
            ("max_ns", Some(self.max_ns)),
            ("p95_ns", Some(self.p95_ns)),
            ("p99_ns", Some(self.p99_ns)),
            ("ci95_lo_ns", Some(self.ci95_lo_ns)),
            ("ci95_hi_ns", Some(self.ci95_hi_ns)),
            ("median_ci95_lo_ns", Some(self.median_ci95_lo_ns)),
            ("median_ci95_hi_ns", Some(self.median_ci95_hi_ns)),
            ("median_cycles", self.median_cycles),
            ("ns_per_bit", self.ns_per_bit),
            ("mbit_per_s", self.mbit_per_s),
            ("cycles_per_bit", self.cycles_per_bit),
        ];
        values
            .into_iter()
            .find(|(_, v)| v.is_some_and(|v| !v.is_finite()))
            .map(|(c, _)| (c, "is not a finite number".to_string()))
    }
}

/// [`read_csv`] that also refuses a row `impossible` finds fault with: one line naming the
/// file, line and column (1-based, as the dataset reader counts) and quoting the cell.
pub fn read_csv_checked<T: serde::de::DeserializeOwned>(
    path: &Path,
    impossible: fn(&T) -> Option<RowRule>,
) -> Result<Vec<T>, String> {
    let file = path.display();
    let mut r = csv::Reader::from_path(path).map_err(|e| format!("{file}: {e}"))?;
    let headers = r.headers().map_err(|e| format!("{file}:1: {e}"))?.clone();
    let (mut rows, mut rec) = (Vec::new(), csv::StringRecord::new());
    loop {
        let more = r.read_record(&mut rec).map_err(|e| {
            let line = e.position().map(|p| format!(":{}", p.line())).unwrap_or_default();
            format!("{file}{line}: {e}")
        })?;
        if !more {
            return Ok(rows);
        }
        let line = rec.position().map_or(0, |p| p.line());
        let row: T = rec.deserialize(Some(&headers)).map_err(|e| format!("{file}:{line}: {e}"))?;
        if let Some((col, rule)) = impossible(&row) {
            let i = headers.iter().position(|h| h == col).unwrap_or(0);
            let cell = crate::dataset::shown(rec.get(i).unwrap_or(""));
            return Err(format!("{file}:{line}:{}: {col} '{cell}' {rule}", i + 1));
        }
        rows.push(row);
    }
}

/// `samples.csv` (or `warmup.csv`) of a run, every value one a measurement can give.
pub fn read_samples(path: &Path) -> Result<Vec<SampleRow>, String> {
    read_csv_checked(path, SampleRow::impossible)
}

/// `summary.csv` of a run, every statistic finite.
pub fn read_summary(path: &Path) -> Result<Vec<SummaryRow>, String> {
    read_csv_checked(path, SummaryRow::impossible)
}

/// [`read_csv`] of the file `name` in a run directory; no rows where the file is missing.
pub fn read_csv_in<T: serde::de::DeserializeOwned>(dir: &Path, name: &str) -> Result<Vec<T>, String> {
    let p = dir.join(name);
    if p.exists() {
        read_csv(&p)
    } else {
        Ok(Vec::new())
    }
}

/// Header-only CSV for an empty table (so pandas still finds the columns).
pub fn csv_or_header<T: Serialize>(rows: &[T], header: &str) -> Vec<u8> {
    if rows.is_empty() {
        format!("{header}\n").into_bytes()
    } else {
        to_csv(rows)
    }
}

/// Header of an empty `samples.csv` / `warmup.csv`.
pub const SAMPLE_HEADER: &str =
    "cipher,implementation,language,family,scenario,kiv,size_bits,payload,rep,batch,ns_per_op,cycles_per_op";
/// Header of an empty `comparison.csv`.
pub const COMPARISON_HEADER: &str = "cipher,variant,scenario,kiv,size_bits,payload,rust_median_ns,cpp_median_ns,ratio_cpp_rust,mann_whitney_p,verdict,ratio_ci95_lo,ratio_ci95_hi,margin_pct";

/// Format a UNIX time as RFC 3339 UTC (civil-from-days, Howard Hinnant's algorithm).
pub fn rfc3339(t: std::time::SystemTime) -> String {
    let d = t.duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs() as i64;
    let (days, rem) = (secs.div_euclid(86400), secs.rem_euclid(86400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem % 3600 / 60, rem % 60)
}

#[cfg(test)]
mod tests;
