//! Writing a collected run: the checks that refuse a log (no header, interleaved runs, a
//! truncation), run.json's record of the board, and the result files.
use std::collections::BTreeSet;
use std::path::Path;

use super::{Header, Parsed};
use crate::clock::ClockInfo;
use crate::machine::{Build, Machine};
use crate::results::{self, RunRecord};

/// Where the lines came from, for run.json.
pub struct Source {
    /// The port or file read.
    pub description: String,
    /// The command line.
    pub args: Vec<String>,
    /// When collection started.
    pub started: std::time::SystemTime,
    /// Renders `report.html` into the run's unit (see [`crate::results::ReportRenderer`]);
    /// None writes no report.
    pub report: Option<crate::results::ReportRenderer>,
}

/// Validate and write the result files of a parsed log into `out`. Truncation is an error
/// unless `allow_truncated`; then the valid lines are written and the truncation is noted.
pub fn write_collected(
    p: &Parsed,
    out: &Path,
    force: bool,
    allow_truncated: bool,
    src: &Source,
) -> Result<RunRecord, String> {
    write_collected_with(p, out, force, allow_truncated, src, vec![], vec![])
}

/// The header of a log that can be written, or why nothing is written: no header, two runs
/// interleaved, a truncation (unless allowed), no sample line.
fn collectable<'a>(p: &'a Parsed, src: &Source, allow_truncated: bool) -> Result<&'a Header, String> {
    let h = match &p.header {
        Some(h) => h,
        None => {
            return Err(format!("{}: {}", src.description, p.truncation.clone().unwrap_or_else(|| "no header".into())))
        }
    };
    if let Some(i) = &p.interleaved {
        return Err(format!(
            "{}: {i}: two runs are interleaved in one log, so samples cannot be matched to their header; nothing written (collect each run from its own log)",
            src.description
        ));
    }
    if let Some(t) = &p.truncation {
        if !allow_truncated {
            return Err(format!(
                "{}: run truncated: {t} ({} malformed line(s)); nothing written — pass --allow-truncated to keep the {} valid sample lines",
                src.description,
                p.malformed.len(),
                p.samples.len()
            ));
        }
    }
    if p.samples.is_empty() {
        return Err(format!("{}: no valid sample lines", src.description));
    }
    Ok(h)
}

/// The run.json notes of a collected run: its source, what was read, the board's clock, seed
/// and unknown header fields.
fn collected_notes(p: &Parsed, h: &Header, src: &Source) -> Vec<String> {
    let mut notes = vec![format!(
        "collected from {} by lwcbench collect (board line format {}, docs/board.md)",
        src.description, h.version
    )];
    if let Some(ad) = h.ad_bytes {
        notes.push(format!("AEAD encrypt samples authenticate {ad} bytes of associated data (header ad_bytes)"));
    }
    notes.extend(p.summary_lines());
    notes.push(match &h.cycles {
        Some(c) => format!("cycles_per_op are core cycles of the board ({c}), not TSC ticks"),
        None => "the board reported no cycle counter: cycles_per_op is empty".into(),
    });
    notes.push(format!(
        "random keys, IVs and payloads come from the firmware's PRNG seeded with {} (not the host's ChaCha20 stream)",
        h.seed
    ));
    let known = ["firmware", "compiler", "profile", "opt", "target", "commit"];
    for (k, v) in h.extra.iter().filter(|(k, _)| !known.contains(&k.as_str())) {
        notes.push(format!("header {k}={v}"));
    }
    notes
}

/// [`write_collected`] plus extra result files and run.json notes (the power join's
/// `energy.csv`, written by the logger module, which builds on this one).
pub fn write_collected_with(
    p: &Parsed,
    out: &Path,
    force: bool,
    allow_truncated: bool,
    src: &Source,
    extra_files: Vec<(&'static str, Vec<u8>)>,
    extra_notes: Vec<String>,
) -> Result<RunRecord, String> {
    let h = collectable(p, src, allow_truncated)?;
    results::prepare_dir(out, force)?;
    let finished = std::time::SystemTime::now();
    let ex = |k: &str| h.extra.get(k).cloned().unwrap_or_else(|| "unknown".into());
    let mhz = h.cpu_hz / 1e6;
    let compiler = ex("compiler");
    let notes = collected_notes(p, h, src);
    let groups: BTreeSet<(&str, &str, &str, &str, u64, &str)> = p
        .samples
        .iter()
        .map(|r| {
            (
                r.cipher.as_str(),
                r.implementation.as_str(),
                r.scenario.as_str(),
                r.kiv.as_str(),
                r.size_bits,
                r.payload.as_str(),
            )
        })
        .collect();
    let mut other_compilers = Vec::new();
    if h.ciphers.iter().any(|c| c.2 != "Rust") {
        other_compilers.push(("board C/C++ compiler".to_string(), compiler.clone()));
    }
    let mut record = RunRecord {
        tool: "lwcbench".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        args: src.args.clone(),
        preset: Some(format!("board:{}", h.board)),
        seed: h.seed,
        reps: h.reps,
        warmup: h.warmup,
        warmup_policy: "warm-up samples are measured on the board with the same batch and key/IV policy, written to warmup.csv and excluded from samples.csv and all statistics".into(),
        min_sample_ns: h.min_sample_ticks * 1e9 / h.tick_hz,
        static_key_hex: None,
        static_iv_hex: None,
        payload: "random (bytes from the firmware's PRNG per sample)".into(),
        groups: groups.len(),
        machine: Machine {
            cpu_model: format!("{} @ {mhz} MHz", h.mcu),
            logical_cores: 1,
            cpu_flags: vec![],
            governor: format!("none: fixed core clock {mhz} MHz (from the firmware header)"),
            os: format!("bare metal ({})", h.board),
            kernel: String::new(),
            hostname: h.board.clone(),
        },
        build: Build {
            tool_version: ex("firmware"),
            git_commit: ex("commit"),
            rustc: compiler,
            profile: ex("profile"),
            opt_level: ex("opt"),
            target: ex("target"),
            rustflags: String::new(),
            other_compilers,
        },
        clock: ClockInfo {
            time_source: format!("{} at {} Hz (board)", h.timer, h.tick_hz),
            cycle_source: h.cycles.clone().unwrap_or_else(|| "none on this board (cycles columns empty)".into()),
            overhead_ns: h.overhead_ticks.map(|t| t * 1e9 / h.tick_hz).unwrap_or(f64::NAN),
            resolution_ns: 1e9 / h.tick_hz,
            cycles_per_ns: h.cycles.as_ref().map(|_| h.cpu_hz / 1e9),
            counter: h.cycles.clone().unwrap_or_else(|| "none".into()),
            counter_hz: h.cycles.as_ref().map(|_| h.cpu_hz),
            counter_hz_source: if h.cycles.is_some() { "the board's cpu_hz".into() } else { "no cycle counter".into() },
        },
        started_utc: results::rfc3339(src.started),
        finished_utc: results::rfc3339(finished),
        duration_s: finished.duration_since(src.started).unwrap_or_default().as_secs_f64(),
        files: vec![],
        notes,
    };
    if record.clock.overhead_ns.is_nan() {
        record.clock.overhead_ns = 0.0;
        record.notes.push("the firmware did not report its timer overhead (overhead_ns = 0)".into());
    }
    let mut extra = vec![("board-log.txt", p.raw.clone().into_bytes())];
    record.notes.extend(extra_notes);
    extra.extend(extra_files);
    crate::output::write_rows(out, &p.samples, &p.warmup, &mut record, &extra, "", src.report)
        .map_err(|e| format!("writing results to {}: {e}", out.display()))?;
    Ok(record)
}
