//! Result files of one run. Column meanings are documented in `docs/result-files.md`; keep
//! the two in step. Every file is written to a hidden temporary name in the same directory,
//! flushed and then renamed, and `run.json` is written last: a directory with `run.json` is
//! complete, and an interrupted run never leaves a file under its final name.
use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use lwcbench_core::Language;
use lwcbench_stats::{compare, summarize, Shift, Summary};
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
    pub verdict: String,
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
            batch: r.batch,
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
        out.push(summary_row(v[0], &k.1, v[0].batch, &ns, &cy));
        if !pooled_order.contains(&k.0) {
            pooled_order.push(k.0.clone());
        }
    }
    for pk in pooled_order {
        let parts: Vec<&Vec<&SampleRow>> = order.iter().filter(|k| k.0 == pk).map(|k| &groups[k]).collect();
        if parts.len() < 2 {
            continue;
        }
        let all: Vec<&SampleRow> = parts.iter().flat_map(|v| v.iter().copied()).collect();
        let ns: Vec<f64> = all.iter().map(|r| r.ns_per_op).collect();
        let cy: Vec<f64> = all.iter().filter_map(|r| r.cycles_per_op).collect();
        let batch = all.iter().map(|r| r.batch).max().unwrap_or(1);
        out.push(summary_row(all[0], "all", batch, &ns, &cy));
    }
    out
}

/// C++ against Rust for implementations named `rust-X` / `cpp-X` of the same cipher.
/// Verdict at α = 0.05 with a Bonferroni correction over all rows of the table.
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
            let c = compare(a, b);
            let verdict = match c.shift(alpha) {
                Shift::None => "no significant difference",
                Shift::Slower => "Rust faster",
                Shift::Faster => "C++ faster",
            }
            .to_string();
            ComparisonRow {
                cipher: k.0.clone(),
                variant: k.1.clone(),
                scenario: k.2.clone(),
                kiv: k.3.clone(),
                size_bits: k.4,
                payload: k.5.clone(),
                rust_median_ns: summarize(a).median,
                cpp_median_ns: summarize(b).median,
                ratio_cpp_rust: c.ratio_median,
                mann_whitney_p: c.mann_whitney_p,
                verdict,
            }
        })
        .collect()
}

/// Write `bytes` to `dir/name` atomically (temporary file + fsync + rename).
pub fn write_atomic(dir: &Path, name: &str, bytes: &[u8]) -> std::io::Result<PathBuf> {
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let fin = dir.join(name);
    let res = (|| {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
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
pub const COMPARISON_HEADER: &str =
    "cipher,variant,scenario,kiv,size_bits,payload,rust_median_ns,cpp_median_ns,ratio_cpp_rust,mann_whitney_p,verdict";

/// Check up front that `dir` can receive results: create it, refuse to overwrite a finished
/// run unless `force`, and prove it is writable.
pub fn prepare_dir(dir: &Path, force: bool) -> Result<(), String> {
    if dir.exists() && !dir.is_dir() {
        return Err(format!("--out: {} exists and is not a directory", dir.display()));
    }
    fs::create_dir_all(dir).map_err(|e| format!("--out: cannot create {}: {e}", dir.display()))?;
    if dir.join("run.json").exists() && !force {
        return Err(format!("--out: {} already holds a finished run (use --force to replace it)", dir.display()));
    }
    let probe = dir.join(format!(".write-probe-{}", std::process::id()));
    fs::write(&probe, b"").map_err(|e| format!("--out: {} is not writable: {e}", dir.display()))?;
    let _ = fs::remove_file(probe);
    Ok(())
}

/// Write all files of a run; `run.json` last. Returns the file names written.
pub fn write_run(
    dir: &Path,
    results: &[GroupResult],
    record: &mut RunRecord,
    extra: &[(&str, Vec<u8>)],
    extra_md: &str,
) -> std::io::Result<()> {
    write_rows(dir, &sample_rows(results), &warmup_rows(results), record, extra, extra_md)
}

/// [`write_run`] from sample rows that did not come from the runner (`lwcbench collect`).
pub fn write_rows(
    dir: &Path,
    samples: &[SampleRow],
    warm: &[SampleRow],
    record: &mut RunRecord,
    extra: &[(&str, Vec<u8>)],
    extra_md: &str,
) -> std::io::Result<()> {
    let (samples, warm) = (samples.to_vec(), warm.to_vec());
    let summary = summary_rows(&samples);
    let comparison = comparison_rows(&samples);
    let (t1, t2) = crate::tables::dataset_vs_random(&samples);
    let mut md = crate::markdown::summary_markdown(&summary, &comparison);
    md += &crate::tables::markdown(&t1, &t2);
    md += extra_md;
    md += &crate::published::markdown_for_run(record.preset.as_deref(), &t1, &t2, extra);
    let mut files = vec![
        ("samples.csv", csv_or_header(&samples, SAMPLE_HEADER)),
        ("warmup.csv", csv_or_header(&warm, SAMPLE_HEADER)),
        ("summary.csv", to_csv(&summary)),
        ("comparison.csv", csv_or_header(&comparison, COMPARISON_HEADER)),
        ("summary.md", md.into_bytes()),
    ];
    if !t1.is_empty() {
        files.push(("table1_dataset_vs_random.csv", to_csv(&t1)));
        files.push(("table2_dataset_vs_random.csv", to_csv(&t2)));
    }
    files.extend(extra.iter().map(|(n, b)| (*n, b.clone())));
    // A previous run.json goes first so the directory never looks complete with mixed files.
    let _ = fs::remove_file(dir.join("run.json"));
    for (name, bytes) in &files {
        write_atomic(dir, name, bytes)?;
    }
    record.files = files.iter().map(|(n, _)| n.to_string()).chain(["run.json".to_string()]).collect();
    let json = serde_json::to_vec_pretty(record).expect("record serialises");
    write_atomic(dir, "run.json", &json)?;
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
