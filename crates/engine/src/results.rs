//! Result files of one run. Column meanings are documented in `docs/result-files.md`; keep
//! the two in step.
//!
//! A run directory is written as one unit ([`RunDirWriter`]): every file, `run.json` and
//! `report.html` included, goes into a fresh hidden sibling directory, is flushed, and the
//! sibling is then swapped in for `--out` with one rename (`renameat2(RENAME_EXCHANGE)` when
//! a previous run is replaced). A kill or write error at any step leaves the previous complete
//! run, the new complete run, or nothing under `--out`; never a mix. Siblings left by a killed
//! process are removed by the next run into the same `--out`.
use std::collections::BTreeMap;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use lwcbench_core::Language;
use lwcbench_stats::{decide, summarize, Shift, Summary, DEFAULT_MARGIN};
use serde::{Deserialize, Serialize};

use crate::clock::ClockInfo;
use crate::machine::{Build, Machine};
use crate::runner::{GroupResult, Sample};

/// One row of `samples.csv` / `warmup.csv`.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct SampleRow {
    pub cipher: String,
    pub implementation: String,
    pub language: String,
    pub family: String,
    pub scenario: String,
    pub kiv: String,
    pub size_bits: u64,
    /// "random" or "dataset:<name>".
    pub payload: String,
    pub rep: u32,
    pub batch: u64,
    pub ns_per_op: f64,
    pub cycles_per_op: Option<f64>,
}

/// One row of `summary.csv`: one group, or (kiv = "all") the four key/IV variants pooled.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct SummaryRow {
    pub cipher: String,
    pub implementation: String,
    pub language: String,
    pub family: String,
    pub scenario: String,
    pub kiv: String,
    pub size_bits: u64,
    pub payload: String,
    pub batch: u64,
    pub n: u64,
    pub mean_ns: f64,
    pub sd_ns: f64,
    pub median_ns: f64,
    /// Between-round spread: the samples cut into the run's interleaved rounds (consecutive
    /// parts), (max − min) of the parts' medians / median_ns × 100. Empty with < 2 samples
    /// per round or in files written before it existed.
    #[serde(default)]
    pub round_spread_pct: Option<f64>,
    pub min_ns: f64,
    pub max_ns: f64,
    pub p95_ns: f64,
    pub p99_ns: f64,
    pub ci95_lo_ns: f64,
    pub ci95_hi_ns: f64,
    pub median_ci95_lo_ns: f64,
    pub median_ci95_hi_ns: f64,
    pub outliers: u64,
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
    pub cipher: String,
    pub variant: String,
    pub scenario: String,
    pub kiv: String,
    pub size_bits: u64,
    pub payload: String,
    pub rust_median_ns: f64,
    pub cpp_median_ns: f64,
    /// cpp / rust medians: > 1 means C++ is slower.
    pub ratio_cpp_rust: f64,
    pub mann_whitney_p: f64,
    /// "C++ faster" / "Rust faster" only when p < α AND the ratio's CI lies wholly outside
    /// 1 ± margin_pct %; otherwise "no difference beyond ±margin_pct %".
    pub verdict: String,
    /// Bootstrap 95 % CI of ratio_cpp_rust (empty in files written before it existed).
    #[serde(default)]
    pub ratio_ci95_lo: Option<f64>,
    #[serde(default)]
    pub ratio_ci95_hi: Option<f64>,
    /// The practical-equivalence margin of the verdict, in %.
    #[serde(default)]
    pub margin_pct: Option<f64>,
}

/// Everything `run.json` records.
#[derive(Serialize, Deserialize, Debug, Clone)]
pub struct RunRecord {
    pub tool: String,
    pub version: String,
    pub args: Vec<String>,
    pub preset: Option<String>,
    pub seed: u64,
    pub reps: usize,
    pub warmup: usize,
    pub warmup_policy: String,
    pub min_sample_ns: f64,
    pub static_key_hex: Option<String>,
    pub static_iv_hex: Option<String>,
    pub payload: String,
    pub groups: usize,
    pub machine: Machine,
    pub build: Build,
    pub clock: ClockInfo,
    pub started_utc: String,
    pub finished_utc: String,
    pub duration_s: f64,
    pub files: Vec<String>,
    pub notes: Vec<String>,
}

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

pub fn sample_rows(results: &[GroupResult]) -> Vec<SampleRow> {
    results.iter().flat_map(|r| rows_of(r, false)).collect()
}
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

// ---- fault injection ---------------------------------------------------------------------

/// What the failpoint does when its step comes.
#[derive(Clone, Copy, Debug, PartialEq)]
enum FailAction {
    Kill,
    NoSpace,
}

fn failpoint() -> Option<(u64, FailAction)> {
    static FP: OnceLock<Option<(u64, FailAction)>> = OnceLock::new();
    *FP.get_or_init(|| {
        let v = std::env::var("LWCBENCH_FAILPOINT").ok()?;
        let (n, action) = match v.split_once(':') {
            Some((n, "enospc")) => (n, FailAction::NoSpace),
            Some((n, "kill")) | Some((n, "")) => (n, FailAction::Kill),
            None => (v.as_str(), FailAction::Kill),
            Some(_) => return None,
        };
        n.trim().parse().ok().filter(|&n| n > 0).map(|n| (n, action))
    })
}

static STEPS: AtomicU64 = AtomicU64::new(0);

/// One step of writing results (a file's data, an fsync, a rename, a removal). For the
/// fault-injection tests: with `LWCBENCH_FAILPOINT=N` the process is killed (SIGKILL) when the
/// Nth step starts; with `LWCBENCH_FAILPOINT=N:enospc` the Nth step fails with "No space left
/// on device". Unset (always, outside those tests), this only counts.
pub fn step(what: &str) -> io::Result<()> {
    let n = STEPS.fetch_add(1, Ordering::SeqCst) + 1;
    match failpoint() {
        Some((k, FailAction::Kill)) if k == n => {
            eprintln!("lwcbench: LWCBENCH_FAILPOINT: killed at step {n} ({what})");
            // SAFETY: sending a signal to this process.
            unsafe {
                libc::kill(libc::getpid(), libc::SIGKILL);
            }
            std::process::abort()
        }
        Some((k, FailAction::NoSpace)) if k == n => Err(io::Error::from_raw_os_error(libc::ENOSPC)),
        _ => Ok(()),
    }
}

// ---- writing ---------------------------------------------------------------------------

/// Write `bytes` to `dir/name` atomically (temporary file + fsync + rename).
pub fn write_atomic(dir: &Path, name: &str, bytes: &[u8]) -> std::io::Result<PathBuf> {
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let fin = dir.join(name);
    let res = (|| {
        step("write")?;
        let mut f = fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        step("fsync")?;
        f.sync_all()?;
        step("rename")?;
        fs::rename(&tmp, &fin)
    })();
    if res.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    res.map(|_| fin)
}

/// [`write_atomic`] to a user-given file path; `what` names the option in errors.
pub fn write_atomic_to(path: &Path, bytes: &[u8], what: &str) -> Result<(), String> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = path.file_name().ok_or_else(|| format!("{what}: {} is not a file name", path.display()))?;
    write_atomic(dir, &name.to_string_lossy(), bytes)
        .map(|_| ())
        .map_err(|e| format!("{what}: {}: {e}", path.display()))
}

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

pub const SAMPLE_HEADER: &str =
    "cipher,implementation,language,family,scenario,kiv,size_bits,payload,rep,batch,ns_per_op,cycles_per_op";
pub const COMPARISON_HEADER: &str = "cipher,variant,scenario,kiv,size_bits,payload,rust_median_ns,cpp_median_ns,ratio_cpp_rust,mann_whitney_p,verdict,ratio_ci95_lo,ratio_ci95_hi,margin_pct";

/// Parent directory and file name of a run directory path (`out` itself may not exist yet).
fn split_out(dir: &Path) -> io::Result<(PathBuf, String)> {
    let name = dir
        .file_name()
        .and_then(|n| n.to_str())
        .filter(|n| !n.is_empty())
        .ok_or_else(|| io::Error::other(format!("{} does not end in a directory name", dir.display())))?;
    let parent = dir.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    Ok((parent.to_path_buf(), name.to_string()))
}

/// Hidden siblings of `out`: `.<name>.lwcbench-new-<pid>-<n>` (a run being written) and
/// `.<name>.lwcbench-old-<pid>-<n>` (a replaced run being removed).
fn sibling(parent: &Path, name: &str, kind: &str) -> PathBuf {
    static N: AtomicU64 = AtomicU64::new(0);
    parent.join(format!(".{name}.lwcbench-{kind}-{}-{}", std::process::id(), N.fetch_add(1, Ordering::SeqCst)))
}

/// A fresh hidden scratch directory beside `out` (not inside it), named like the staging
/// directories, so a killed run's scratch is removed by the next [`prepare_dir`] and never
/// makes `out` look half-written. The caller removes it when done.
pub fn scratch_sibling(out: &Path) -> io::Result<PathBuf> {
    let (parent, name) = split_out(out)?;
    fs::create_dir_all(&parent)?;
    Ok(sibling(&parent, &name, "new"))
}

/// Remove the siblings of `out` left by killed processes (their pid no longer runs).
fn remove_stale_siblings(parent: &Path, name: &str) {
    let Ok(rd) = fs::read_dir(parent) else { return };
    let prefix = format!(".{name}.lwcbench-");
    for e in rd.flatten() {
        let f = e.file_name();
        let Some(rest) = f.to_str().and_then(|f| f.strip_prefix(&prefix)) else { continue };
        let Some(pid) = rest
            .strip_prefix("new-")
            .or_else(|| rest.strip_prefix("old-"))
            .and_then(|r| r.split('-').next())
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        let alive = pid == std::process::id() || Path::new(&format!("/proc/{pid}")).exists();
        if !alive && e.file_type().is_ok_and(|t| t.is_dir()) {
            let _ = fs::remove_dir_all(e.path());
        }
    }
}

fn is_empty_dir(dir: &Path) -> io::Result<bool> {
    Ok(fs::read_dir(dir)?.next().is_none())
}

/// Check up front that `dir` can receive results: refuse to replace a finished run unless
/// `force`, refuse a non-empty directory that holds no run (it is not ours to replace),
/// remove what killed runs left beside it, and prove its parent is writable. `dir` itself is
/// only created when the run is complete ([`RunDirWriter::commit`]).
pub fn prepare_dir(dir: &Path, force: bool) -> Result<(), String> {
    let (parent, name) = split_out(dir).map_err(|e| format!("--out: {e}"))?;
    if dir.exists() && !dir.is_dir() {
        return Err(format!("--out: {} exists and is not a directory", dir.display()));
    }
    if parent.is_dir() {
        remove_stale_siblings(&parent, &name);
    }
    if dir.is_dir() {
        if dir.join("run.json").exists() {
            if !force {
                return Err(format!(
                    "--out: {} already holds a finished run (use --force to replace it)",
                    dir.display()
                ));
            }
        } else if !is_empty_dir(dir).map_err(|e| format!("--out: {}: {e}", dir.display()))? {
            return Err(format!(
                "--out: {} is not empty and holds no finished run (no run.json): choose a new directory",
                dir.display()
            ));
        }
    }
    fs::create_dir_all(&parent).map_err(|e| format!("--out: cannot create {}: {e}", parent.display()))?;
    let probe = sibling(&parent, &name, "new");
    fs::create_dir(&probe).map_err(|e| format!("--out: {} is not writable: {e}", parent.display()))?;
    let _ = fs::remove_dir(probe);
    Ok(())
}

/// Renders `report.html` from a complete run directory (set by the CLI to the report crate's
/// renderer; the engine cannot depend on that crate). When set, the page is written into the
/// same unit as the data it shows and listed in `run.json`.
pub static REPORT_RENDERER: OnceLock<ReportRenderer> = OnceLock::new();
/// See [`REPORT_RENDERER`].
pub type ReportRenderer = fn(&Path) -> Result<Vec<u8>, String>;

/// Writes a run directory as one unit: files go into a fresh hidden sibling of `out`, which
/// [`commit`](RunDirWriter::commit) swaps in with one rename. Dropped without commit, the
/// sibling is removed (a kill leaves it for the next run's [`prepare_dir`] to remove).
pub struct RunDirWriter {
    out: PathBuf,
    stage: PathBuf,
    parent: PathBuf,
    name: String,
    files: Vec<String>,
    committed: bool,
}

impl RunDirWriter {
    pub fn begin(out: &Path) -> io::Result<Self> {
        let (parent, name) = split_out(out)?;
        fs::create_dir_all(&parent)?;
        remove_stale_siblings(&parent, &name);
        let stage = sibling(&parent, &name, "new");
        step("mkdir")?;
        fs::create_dir(&stage)?;
        Ok(RunDirWriter { out: out.to_path_buf(), stage, parent, name, files: Vec::new(), committed: false })
    }

    /// The directory being written (complete runs are read from here to render the report).
    pub fn stage(&self) -> &Path {
        &self.stage
    }

    /// Write one file into the unit (data, then fsync).
    pub fn add(&mut self, name: &str, bytes: &[u8]) -> io::Result<()> {
        step("write")?;
        let mut f = fs::File::create(self.stage.join(name))?;
        f.write_all(bytes)?;
        step("fsync")?;
        f.sync_all()?;
        if !self.files.iter().any(|n| n == name) {
            self.files.push(name.to_string());
        }
        Ok(())
    }

    /// Swap the unit in for `out`: the previous run (if any) is replaced as a whole.
    pub fn commit(mut self) -> io::Result<()> {
        step("fsync-dir")?;
        fs::File::open(&self.stage)?.sync_all()?;
        let replaced = match fs::symlink_metadata(&self.out) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(e),
            Ok(m) if !m.is_dir() => {
                return Err(io::Error::other(format!("{} exists and is not a directory", self.out.display())))
            }
            // rename(2) replaces an empty directory in one step
            Ok(_) if is_empty_dir(&self.out)? => None,
            Ok(_) => Some(()),
        };
        step("rename")?;
        let old = match replaced {
            None => {
                fs::rename(&self.stage, &self.out)?;
                None
            }
            Some(()) => Some(exchange(&self.stage, &self.out, &self.parent, &self.name)?),
        };
        self.committed = true;
        // The new run is in place: what follows cannot undo that, so a failure is a warning
        // (a replaced run left aside is removed by the next run into this --out).
        if let Err(e) = step("fsync-parent").and_then(|_| fs::File::open(&self.parent)?.sync_all()) {
            eprintln!("warning: {}: syncing the directory entry: {e}", self.parent.display());
        }
        if let Some(old) = old {
            if let Err(e) = step("remove-old").and_then(|_| fs::remove_dir_all(&old)) {
                eprintln!("warning: removing the replaced run at {}: {e}", old.display());
            }
        }
        Ok(())
    }
}

impl Drop for RunDirWriter {
    fn drop(&mut self) {
        if !self.committed {
            let _ = fs::remove_dir_all(&self.stage);
        }
    }
}

/// Put `stage` at `out` and the previous `out` aside; returns where the previous run now is.
/// One atomic exchange on Linux; elsewhere (or on file systems without it) two renames, with
/// nothing at `out` in between.
fn exchange(stage: &Path, out: &Path, parent: &Path, name: &str) -> io::Result<PathBuf> {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        use std::os::unix::ffi::OsStrExt;
        let c = |p: &Path| std::ffi::CString::new(p.as_os_str().as_bytes()).map_err(io::Error::other);
        let (a, b) = (c(stage)?, c(out)?);
        // SAFETY: two NUL-terminated paths relative to the working directory.
        let r =
            unsafe { libc::renameat2(libc::AT_FDCWD, a.as_ptr(), libc::AT_FDCWD, b.as_ptr(), libc::RENAME_EXCHANGE) };
        if r == 0 {
            return Ok(stage.to_path_buf());
        }
        let e = io::Error::last_os_error();
        if !matches!(e.raw_os_error(), Some(libc::EINVAL) | Some(libc::ENOSYS) | Some(libc::EOPNOTSUPP)) {
            return Err(e);
        }
    }
    let old = sibling(parent, name, "old");
    fs::rename(out, &old)?;
    step("rename")?;
    fs::rename(stage, out)?;
    Ok(old)
}

/// Replace or add `changes` in the finished run `dir` as one unit: the other files are
/// hard-linked (copied where linking fails) into a fresh sibling, the changed files written
/// there, their names added to `run.json`'s file list, and the sibling swapped in. A kill at
/// any step leaves the run as it was or as changed (`lwcbench report`).
pub fn rewrite_dir(dir: &Path, changes: &[(&str, Vec<u8>)]) -> io::Result<()> {
    let mut w = RunDirWriter::begin(dir)?;
    link_tree(dir, w.stage(), &|n| n == "run.json" || changes.iter().any(|(c, _)| *c == n))?;
    for (name, bytes) in changes {
        w.add(name, bytes)?;
    }
    let rj = dir.join("run.json");
    if rj.is_file() {
        let text = fs::read(&rj)?;
        let mut v: serde_json::Value = serde_json::from_slice(&text).map_err(io::Error::other)?;
        if let Some(files) = v.get_mut("files").and_then(|f| f.as_array_mut()) {
            let mut names: Vec<String> =
                files.iter().filter_map(|f| f.as_str()).filter(|f| *f != "run.json").map(String::from).collect();
            for (c, _) in changes {
                if !names.iter().any(|n| n == c) {
                    names.push(c.to_string());
                }
            }
            names.push("run.json".into());
            *files = names.into_iter().map(serde_json::Value::String).collect();
        }
        w.add("run.json", &serde_json::to_vec_pretty(&v).map_err(io::Error::other)?)?;
    }
    w.commit()
}

/// Hard-link (or copy) every entry of `src` into the existing directory `dst`, recursively,
/// except top-level names for which `skip` is true.
pub fn link_tree(src: &Path, dst: &Path, skip: &dyn Fn(&str) -> bool) -> io::Result<()> {
    for e in fs::read_dir(src)? {
        let e = e?;
        let name = e.file_name();
        if name.to_str().is_some_and(skip) {
            continue;
        }
        let (from, to) = (e.path(), dst.join(&name));
        let t = e.file_type()?;
        if t.is_dir() {
            fs::create_dir(&to)?;
            link_tree(&from, &to, &|_| false)?;
        } else if t.is_file() {
            link_file(&from, &to)?;
        }
        // symlinks and special files are not part of a run
    }
    Ok(())
}

/// Hard-link the file `from` as `to` (a copy where linking fails): one step of writing a run.
pub fn link_file(from: &Path, to: &Path) -> io::Result<()> {
    step("link")?;
    if fs::hard_link(from, to).is_err() {
        fs::copy(from, to)?;
    }
    Ok(())
}

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
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn rfc3339_known_dates() {
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        // 2000-03-01 00:00:00 UTC = 951868800 (leap-year boundary), checked with `date -u -d @951868800`
        assert_eq!(rfc3339(UNIX_EPOCH + Duration::from_secs(951_868_800)), "2000-03-01T00:00:00Z");
        assert_eq!(rfc3339(UNIX_EPOCH + Duration::from_secs(1_795_000_000)), "2026-11-18T11:06:40Z");
        // `date -u -d @1795000000`
    }

    #[test]
    fn a_killed_runs_scratch_is_beside_out_and_removed_by_the_next_run() {
        let d = std::env::temp_dir().join(format!("lwcbench-scratch-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        let out = d.join("run");
        let s = scratch_sibling(&out).unwrap();
        assert_eq!(s.parent(), Some(d.as_path()), "beside --out, not inside it");
        // as a killed process (pid 2^22 + 1 is above pid_max's default) would leave it
        let stale = d.join(".run.lwcbench-new-4194305-0");
        fs::create_dir_all(stale.join("callgrind")).unwrap();
        fs::create_dir_all(&s).unwrap(); // ours: this pid runs, so it stays
        prepare_dir(&out, false).unwrap();
        assert!(!stale.exists(), "the dead process's scratch is gone");
        assert!(s.exists() && !out.exists());
        let _ = fs::remove_dir_all(&d);
    }

    fn row(imp: &str, kiv: &str, ns: f64) -> SampleRow {
        SampleRow {
            cipher: "X".into(),
            implementation: imp.into(),
            language: "Rust".into(),
            family: "stream".into(),
            scenario: "full".into(),
            kiv: kiv.into(),
            size_bits: 8,
            payload: "random".into(),
            rep: 0,
            batch: 1,
            ns_per_op: ns,
            cycles_per_op: None,
        }
    }

    #[test]
    fn pooled_rows_and_comparisons() {
        let mut rows = Vec::new();
        for (i, kiv) in ["s,s", "r,r"].iter().enumerate() {
            for k in 0..10 {
                rows.push(row("rust-fast", kiv, 10.0 + i as f64 * 10.0 + k as f64 * 0.1));
                rows.push(row("cpp-fast", kiv, 20.0 + i as f64 * 10.0 + k as f64 * 0.1));
            }
        }
        let s = summary_rows(&rows);
        // 2 impls × 2 kiv + 2 pooled
        assert_eq!(s.len(), 6);
        let pooled = s.iter().find(|r| r.kiv == "all" && r.implementation == "rust-fast").unwrap();
        assert_eq!(pooled.n, 20);
        // rust samples: 10.0..10.9 and 20.0..20.9 → mean 15.45, hand computed
        assert!((pooled.mean_ns - 15.45).abs() < 1e-9);
        assert_eq!(pooled.ns_per_bit, Some(pooled.median_ns / 8.0));
        let c = comparison_rows(&rows);
        assert_eq!(c.len(), 2);
        let ss = c.iter().find(|r| r.kiv == "s,s").unwrap();
        // medians 10.45 and 20.45
        assert!((ss.ratio_cpp_rust - 20.45 / 10.45).abs() < 1e-9);
        assert_eq!(ss.verdict, "Rust faster");
        // the ratio's CI is positive and brackets the point estimate; the margin is stated
        assert!(ss.ratio_ci95_lo.unwrap() > 1.05 && ss.ratio_ci95_lo.unwrap() <= ss.ratio_cpp_rust);
        assert_eq!(ss.margin_pct, Some(5.0));
    }

    #[test]
    fn samples_no_measurement_gives_are_refused_with_file_line_column() {
        let d = std::env::temp_dir().join(format!("lwcbench-read-samples-{}", std::process::id()));
        fs::create_dir_all(&d).unwrap();
        let p = d.join("samples.csv");
        let good = "X,rust-fast,Rust,stream,full,\"s,s\",8,random,0,4,12.5,30\n";
        // (batch, ns_per_op, cycles_per_op) of line 3 → the error; columns counted by hand
        for (cells, want) in [
            ("4,12.5,", None),
            ("4,1e15,1e18", None),
            ("4,12.5,0", None),
            ("4,inf,", Some("3:11: ns_per_op 'inf' is not a number of ns above 0 and at most 1e15")),
            ("4,-inf,", Some("3:11: ns_per_op '-inf' is not a number of ns above 0 and at most 1e15")),
            ("4,NaN,", Some("3:11: ns_per_op 'NaN' is not a number of ns above 0 and at most 1e15")),
            ("4,1e400,", Some("3:11: ns_per_op '1e400' is not a number of ns above 0 and at most 1e15")),
            ("4,0,", Some("3:11: ns_per_op '0' is not a number of ns above 0 and at most 1e15")),
            ("4,-3,", Some("3:11: ns_per_op '-3' is not a number of ns above 0 and at most 1e15")),
            ("4,1.1e15,", Some("3:11: ns_per_op '1.1e15' is not a number of ns above 0 and at most 1e15")),
            ("4,12.5,nan", Some("3:12: cycles_per_op 'nan' is not a number from 0 to 1e18")),
            ("4,12.5,-1", Some("3:12: cycles_per_op '-1' is not a number from 0 to 1e18")),
            ("4,12.5,2e18", Some("3:12: cycles_per_op '2e18' is not a number from 0 to 1e18")),
            ("0,12.5,", Some("3:10: batch '0' is not a count of operations above 0")),
        ] {
            let bad = format!("X,cpp-fast,C++,stream,full,\"s,s\",8,random,1,{cells}\n");
            fs::write(&p, format!("{SAMPLE_HEADER}\n{good}{bad}{good}")).unwrap();
            match (read_samples(&p), want) {
                (Ok(rows), None) => assert_eq!(rows.len(), 3, "{cells}"),
                (Err(e), Some(w)) => assert_eq!(e, format!("{}:{w}", p.display())),
                (got, _) => panic!("{cells}: {got:?}"),
            }
        }
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn summary_statistics_must_be_finite() {
        let d = std::env::temp_dir().join(format!("lwcbench-read-summary-{}", std::process::id()));
        fs::create_dir_all(&d).unwrap();
        // one group (kiv without a comma, so the cells split on ',')
        let row = summary_rows(&[row("rust-fast", "ss", 10.0), row("rust-fast", "ss", 12.0)]);
        let text = String::from_utf8(to_csv(&row)).unwrap();
        let p = d.join("summary.csv");
        fs::write(&p, &text).unwrap();
        assert_eq!(read_summary(&p).unwrap(), row);
        // median_ns is column 13 of the header
        let (head, body) = text.split_once('\n').unwrap();
        assert_eq!(head.split(',').nth(12), Some("median_ns"));
        let cells: Vec<&str> = body.trim_end().split(',').collect();
        for bad in ["NaN", "inf", "1e999"] {
            let mut c = cells.clone();
            c[12] = bad;
            fs::write(&p, format!("{head}\n{}\n", c.join(","))).unwrap();
            let e = read_summary(&p).unwrap_err();
            assert_eq!(e, format!("{}:2:13: median_ns '{bad}' is not a finite number", p.display()));
        }
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn atomic_write_leaves_no_temp() {
        let dir = std::env::temp_dir().join(format!("lwcbench-atomic-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        write_atomic(&dir, "a.csv", b"x,y\n1,2\n").unwrap();
        let names: Vec<_> =
            fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
        assert_eq!(names, vec!["a.csv".to_string()]);
        fs::remove_dir_all(&dir).unwrap();
    }
}
