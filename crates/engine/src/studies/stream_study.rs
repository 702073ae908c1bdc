//! The stream-cipher study's table: for every stream-cipher implementation,
//! throughput and cycles/byte on long messages, init time, frames per second, code size, RAM
//! (state + peak stack), memory footprint per byte, MODELLED energy per frame and per byte, and
//! the study's combined scores Rank = throughput / (ROM + 2·RAM) and
//! E-Rank = throughput / ((ROM + 2·RAM) · energy). Every column is documented in
//! docs/metrics.md; timing columns come from the run's own summary rows (median with its
//! distribution-free 95 % CI over independent repetitions, each with a fresh random key/IV).
use std::fmt::Write;
use std::path::Path;

use lwcbench_catalog::{registry, Entry, Make};
use lwcbench_core::Family;
use serde::{Deserialize, Serialize};

use super::study::{Study, StudyArgs, StudyInput, StudyOption, StudyOptions, StudyOutput, StudyRun};
use crate::board::{self, Board};
use crate::html::{bars_ci, esc};
use crate::plan::{Kiv, Scenario, Selection};
use crate::power::{self, PowerProfile};
use crate::resources::{codesize, rss, stack};
use crate::results::SummaryRow;
use crate::runner::default_static;

/// Long-message size for throughput and cycles/byte (64 KiB).
pub const LONG_BYTES: usize = 64 * 1024;
/// Frame size when no measured `frame` scenario is present: one uncompressed 640×480 RGB
/// frame (8 bits per channel). The study's own frame size was not found; see docs/metrics.md.
pub const FRAME_BYTES: usize = 640 * 480 * 3;
/// Device whose power the study's energy is modelled with unless `--power-profile` says otherwise.
pub const DEFAULT_DEVICE: &str = "Raspberry Pi Zero W";
/// Keystream length run for the stack measurement (init + this much keystream).
pub const STACK_KEYSTREAM_BYTES: usize = 4096;
/// Painted stack depth.
pub const STACK_DEPTH: usize = 256 * 1024;
/// Memory-footprint measurements per implementation (median reported).
pub const RSS_REPS: usize = 5;

pub const NAME: &str = "stream-study";
pub const FILE: &str = "stream_study.csv";

/// The stream-cipher study's table for this machine.
pub struct StreamStudy;

impl Study for StreamStudy {
    fn name(&self) -> &'static str {
        NAME
    }
    fn about(&self) -> &'static str {
        "The stream-cipher study's table for this machine: every stream cipher × {full, keystream, init} on 64 KiB with a fresh random key/IV per repetition, plus whole frames of the default video clip when ./scripts/setup.sh has made it, 30 repetitions; writes stream_study.csv with throughput, cycles/byte, init time, frames/s, code size, state + peak stack, RSS growth per byte, MODELLED energy (--power-profile, default Raspberry Pi Zero W; --watts), Rank and E-Rank, each with its 95 % CI (docs/metrics.md)"
    }
    fn selection(&self) -> Selection {
        selection()
    }
    fn reps(&self) -> usize {
        30
    }
    fn warmup(&self) -> usize {
        3
    }
    fn options(&self) -> &'static [StudyOption] {
        &[StudyOption::PowerProfile, StudyOption::Watts, StudyOption::Board, StudyOption::EnergyFrom]
    }
    fn take_options(&self, given: &StudyArgs, into: &mut StudyOptions) -> Result<(), String> {
        super::study::take_power_options(given, into)?;
        super::study::take_energy_from(given, into)
    }
    fn files(&self) -> &'static [&'static str] {
        &[FILE]
    }
    fn derive(&self, input: &StudyInput) -> Result<StudyOutput, String> {
        study(input)
    }
    fn html(&self, run: &StudyRun, _fig: &mut usize) -> Result<String, String> {
        Ok(html(&load(run.dir)?))
    }
}

/// The preset's selection: every stream cipher × {full, keystream, init} at 64 KiB, fresh
/// random key and IV for every repetition.
pub fn selection() -> Selection {
    let mut names: Vec<String> = Vec::new();
    for e in registry().iter().filter(|e| e.info.family == Family::Stream) {
        if !names.iter().any(|n| n == e.info.name) {
            names.push(e.info.name.to_string());
        }
    }
    let mut sel = Selection {
        ciphers: names,
        scenarios: vec![Scenario::Full, Scenario::Keystream, Scenario::Init],
        sizes_bits: vec![LONG_BYTES * 8],
        kivs: vec![Kiv { random_key: true, random_iv: true }],
        ..Default::default()
    };
    // The study's own workload when the default clip exists (made by scripts/setup.sh):
    // whole frames with a counter IV, so random key + static-start IV (the r,s variant; the
    // pooled kiv=all rows then mix r,r and r,s, both with fresh keys). The first
    // VIDEO_FRAMES frames keep the bit-exact round trip of the slow reference ciphers short.
    // Without the clip, frames/s is derived from throughput (frames_source says which).
    if crate::video::default_clip_path().is_file() {
        if let Ok(clip) = crate::video::default_clip(Some(VIDEO_FRAMES)) {
            sel.scenarios.push(Scenario::Frame);
            sel.kivs.push(Kiv { random_key: true, random_iv: false });
            sel.video = Some(std::sync::Arc::new(clip));
        }
    }
    sel
}

/// Frames of the default clip used by the preset's frame scenario.
pub const VIDEO_FRAMES: usize = 8;

/// One row of `stream_study.csv`; units are in the column names.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct StreamStudyRow {
    pub cipher: String,
    pub implementation: String,
    pub language: String,
    pub origin: String,
    /// Message size of the throughput rows (bytes).
    pub long_message_bytes: u64,
    /// Repetitions behind the throughput figure.
    pub n: u64,
    pub throughput_mb_s: f64,
    pub throughput_ci95_lo_mb_s: f64,
    pub throughput_ci95_hi_mb_s: f64,
    pub keystream_mb_s: f64,
    pub keystream_ci95_lo_mb_s: f64,
    pub keystream_ci95_hi_mb_s: f64,
    pub cycles_per_byte: f64,
    pub cycles_per_byte_ci95_lo: f64,
    pub cycles_per_byte_ci95_hi: f64,
    pub cycle_source: String,
    pub init_us: f64,
    pub init_ci95_lo_us: f64,
    pub init_ci95_hi_us: f64,
    pub frame_bytes: u64,
    pub frames_per_s: f64,
    pub frames_per_s_ci95_lo: f64,
    pub frames_per_s_ci95_hi: f64,
    pub frames_source: String,
    pub code_bytes: u64,
    pub code_functions: u64,
    pub state_bytes: u64,
    pub peak_stack_bytes: u64,
    /// state_bytes + peak_stack_bytes: the RAM of Rank and E-Rank.
    pub ram_bytes: u64,
    pub rss_growth_bytes: u64,
    pub rss_growth_per_byte: f64,
    pub power_device: String,
    pub power_w: f64,
    pub energy_per_frame_uj_modelled: f64,
    pub energy_per_frame_ci95_lo_uj_modelled: f64,
    pub energy_per_frame_ci95_hi_uj_modelled: f64,
    pub energy_per_byte_nj_modelled: f64,
    /// Where the energy columns come from: `emulated:<board> (…)` or `host-time×power (…)`.
    pub energy_source: String,
    pub rank_mb_s_per_byte: f64,
    pub rank_ci95_lo: f64,
    pub rank_ci95_hi: f64,
    pub erank_mb_s_per_byte_uj_modelled: f64,
    pub erank_ci95_lo_modelled: f64,
    pub erank_ci95_hi_modelled: f64,
    /// `--energy-from`: a collected run's `full` energy at this message size ÷ its bytes, with
    /// its expanded uncertainty (k = 2); empty without one.
    #[serde(default)]
    pub energy_per_byte_nj_measured: Option<f64>,
    #[serde(default)]
    pub energy_per_byte_u_nj_measured: Option<f64>,
    #[serde(default)]
    pub energy_measured_source: Option<String>,
}

/// A point estimate with its 95 % interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Est {
    pub v: f64,
    pub lo: f64,
    pub hi: f64,
}

impl Est {
    /// Median time per operation and its CI from a summary row (ns).
    pub fn time_ns(r: &SummaryRow) -> Est {
        Est { v: r.median_ns, lo: r.median_ci95_lo_ns, hi: r.median_ci95_hi_ns }
    }
    /// MB/s (1 MB = 10^6 bytes) for `bytes` processed in this many ns; a decreasing map, so
    /// the interval's ends swap.
    pub fn mb_per_s(self, bytes: f64) -> Est {
        let f = |ns: f64| bytes / ns * 1e3;
        Est { v: f(self.v), lo: f(self.hi), hi: f(self.lo) }
    }
    pub fn scale(self, k: f64) -> Est {
        Est { v: self.v * k, lo: self.lo * k, hi: self.hi * k }
    }
}

/// Rank = throughput / (ROM + 2·RAM), in (MB/s) per byte; the interval from the throughput's.
pub fn rank(throughput_mb_s: Est, rom: u64, ram: u64) -> Est {
    let d = (rom + 2 * ram) as f64;
    Est { v: throughput_mb_s.v / d, lo: throughput_mb_s.lo / d, hi: throughput_mb_s.hi / d }
}

/// E-Rank = Rank / energy, in (MB/s) per byte per µJ. Energy grows with time and throughput
/// falls with it, so the low end pairs the low rank with the high energy.
pub fn erank(rank: Est, energy_uj: Est) -> Est {
    Est { v: rank.v / energy_uj.v, lo: rank.lo / energy_uj.hi, hi: rank.hi / energy_uj.lo }
}

/// Modelled energy in µJ for a time in ns at `p`'s power (time × power).
pub fn energy_uj(p: &PowerProfile, ns: Est) -> Est {
    let f = |t: f64| power::energy_j(p, t) * 1e6;
    Est { v: f(ns.v), lo: f(ns.lo), hi: f(ns.hi) }
}

/// The summary row for an implementation and scenario: the pooled `all` row if there is one,
/// else the first; among sizes the largest (the long message). `frame` rows may carry any
/// payload label (the frames of a video); the others must be the random payload.
fn pick<'a>(summary: &'a [SummaryRow], e: &Entry, scenario: &str) -> Option<&'a SummaryRow> {
    let mut rows: Vec<&SummaryRow> = summary
        .iter()
        // Frames come from a video, not the random payload; the other scenarios use random.
        .filter(|r| {
            r.cipher == e.info.name
                && r.implementation == e.info.implementation
                && r.scenario == scenario
                && (scenario == "frame" || r.payload == "random")
        })
        .collect();
    let max = rows.iter().map(|r| r.size_bits).max()?;
    rows.retain(|r| r.size_bits == max);
    rows.iter().find(|r| r.kiv == "all").or(rows.first()).copied()
}

/// Cycles per byte (median, CI scaled from the time CI) and the source of the cycles.
fn cycles_per_byte(r: &SummaryRow, bytes: f64, clock_ghz: Option<f64>) -> (Est, String) {
    let t = Est::time_ns(r);
    // Only the TSC ticks near the core clock; the ARM generic timer (19.2–54 MHz on a Pi) is
    // far slower, so there cycles per byte come from time × the core's maximum frequency.
    if let Some(c) = r.median_cycles.filter(|c| *c > 0.0 && crate::clock::COUNTER == "tsc") {
        let k = c / t.v / bytes;
        return (t.scale(k), "TSC reference cycles (fixed-rate ticks, not core cycles)".into());
    }
    if let Some(ghz) = clock_ghz {
        return (t.scale(ghz / bytes), format!("estimated: time × {ghz:.3} GHz (cpuinfo_max_freq; no cycle counter)"));
    }
    (Est { v: f64::NAN, lo: f64::NAN, hi: f64::NAN }, "unavailable (no cycle counter, no cpufreq)".into())
}

fn max_freq_ghz() -> Option<f64> {
    let khz: f64 =
        std::fs::read_to_string("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq").ok()?.trim().parse().ok()?;
    Some(khz / 1e6)
}

/// Peak stack of init + keystream for a fresh instance (state on the heap, outside the count).
pub fn stack_of(e: &Entry) -> Result<u64, String> {
    let Some(Make::Stream(mk)) = e.make else { return Err(format!("{}: not a stream cipher", e.id())) };
    let (key, iv) = (default_static(e.info.key_bytes()), default_static(e.info.iv_bytes()));
    let mut c = mk();
    let mut buf = vec![0u8; STACK_KEYSTREAM_BYTES];
    let mut res = Ok(());
    let used = stack::peak_stack(STACK_DEPTH, || {
        res = c.init(&key, &iv).and_then(|_| c.keystream_bits(&mut buf, STACK_KEYSTREAM_BYTES * 8));
    })
    .map_err(|m| format!("{}: {m}", e.id()))?;
    res.map_err(|err| format!("{}: {err}", e.id()))?;
    Ok(used as u64)
}

/// Median resident-set growth while a fresh instance encrypts `n` bytes out of place.
pub fn rss_of(e: &Entry, n: usize) -> Result<u64, String> {
    let Some(Make::Stream(mk)) = e.make else { return Err(format!("{}: not a stream cipher", e.id())) };
    let (key, iv) = (default_static(e.info.key_bytes()), default_static(e.info.iv_bytes()));
    let plain: Vec<u8> = (0..n).map(|i| (i * 31 + 7) as u8).collect();
    let mut v = Vec::with_capacity(RSS_REPS);
    for _ in 0..RSS_REPS {
        let mut err = None;
        let g = rss::growth_during(n, |out| {
            let mut c = mk();
            out.copy_from_slice(&plain);
            if let Err(x) = c.init(&key, &iv).and_then(|_| c.apply(out)) {
                err = Some(x);
            }
            c
        })?;
        if let Some(x) = err {
            return Err(format!("{}: {x}", e.id()));
        }
        v.push(g);
    }
    v.sort_unstable();
    Ok(v[v.len() / 2])
}

/// Compute the table. Public so tests and the Python bindings can call it on any summary.
pub fn table(
    summary: &[SummaryRow],
    profile: &PowerProfile,
    board: Option<&Board>,
    clock_ghz: Option<f64>,
) -> Result<Vec<StreamStudyRow>, String> {
    let bin = codesize::Binary::current()?;
    let mut out = Vec::new();
    let all = registry();
    for e in all.iter().filter(|e| e.info.family == Family::Stream) {
        let e = e.clone();
        let Some(full) = pick(summary, &e, "full") else { continue };
        let need = |sc: &str| {
            pick(summary, &e, sc).ok_or_else(|| format!("stream study: no `{sc}` measurement for {} (the stream-study preset needs the scenarios full, keystream and init)", e.id()))
        };
        let (ks, init) = (need("keystream")?, need("init")?);
        let long = (full.size_bits / 8) as f64;
        let thr = Est::time_ns(full).mb_per_s(long);
        let kthr = Est::time_ns(ks).mb_per_s((ks.size_bits / 8) as f64);
        let (cpb, cycle_source) = cycles_per_byte(full, long, clock_ghz);
        let init_us = Est::time_ns(init).scale(1e-3);
        // Frames: measured when a `frame` scenario ran, else derived from the throughput.
        let (frame_bytes, frame_ns, frames_source) = match pick(summary, &e, "frame") {
            Some(f) => (
                (f.size_bits / 8) as usize,
                Est::time_ns(f),
                "measured: frame scenario (one frame per operation)".to_string(),
            ),
            None => (
                FRAME_BYTES,
                Est::time_ns(full).scale(FRAME_BYTES as f64 / long),
                format!("derived: {FRAME_BYTES} B frame (640×480 RGB) ÷ 64 KiB throughput, init excluded"),
            ),
        };
        let fps = Est { v: 1e9 / frame_ns.v, lo: 1e9 / frame_ns.hi, hi: 1e9 / frame_ns.lo };
        let cs = codesize::measure_entry(&bin, &e, &all);
        let peak = stack_of(&e)?;
        let state = e.info.state_bytes as u64;
        let ram = state + peak;
        let growth = rss_of(&e, frame_bytes)?;
        // A frame on the board: one init + the keystream over the frame (emulated, exact, so
        // no interval); host time × power for ciphers without an image.
        let host = || (energy_uj(profile, frame_ns), power::energy_j(profile, full.median_ns / long) * 1e9);
        let ((energy, energy_nj_b), energy_source) = match board {
            Some(b) => match b.cycles(e.info.name, e.info.implementation) {
                Some(c) => {
                    let uj = b.energy_j(c.init + c.message(frame_bytes as f64)) * 1e6;
                    ((Est { v: uj, lo: uj, hi: uj }, b.energy_j(c.per_byte()) * 1e9), b.label())
                }
                None => (host(), b.fallback_label()),
            },
            None => (host(), board::host_label(profile)),
        };
        let r = rank(thr, cs.bytes, ram);
        let er = erank(r, energy);
        out.push(StreamStudyRow {
            cipher: e.info.name.into(),
            implementation: e.info.implementation.into(),
            language: e.info.language.as_str().into(),
            origin: e.info.origin.to_string(),
            long_message_bytes: long as u64,
            n: full.n,
            throughput_mb_s: thr.v,
            throughput_ci95_lo_mb_s: thr.lo,
            throughput_ci95_hi_mb_s: thr.hi,
            keystream_mb_s: kthr.v,
            keystream_ci95_lo_mb_s: kthr.lo,
            keystream_ci95_hi_mb_s: kthr.hi,
            cycles_per_byte: cpb.v,
            cycles_per_byte_ci95_lo: cpb.lo,
            cycles_per_byte_ci95_hi: cpb.hi,
            cycle_source,
            init_us: init_us.v,
            init_ci95_lo_us: init_us.lo,
            init_ci95_hi_us: init_us.hi,
            frame_bytes: frame_bytes as u64,
            frames_per_s: fps.v,
            frames_per_s_ci95_lo: fps.lo,
            frames_per_s_ci95_hi: fps.hi,
            frames_source,
            code_bytes: cs.bytes,
            code_functions: cs.functions as u64,
            state_bytes: state,
            peak_stack_bytes: peak,
            ram_bytes: ram,
            rss_growth_bytes: growth,
            rss_growth_per_byte: growth as f64 / frame_bytes as f64,
            power_device: profile.device.clone(),
            power_w: profile.active_w,
            energy_per_frame_uj_modelled: energy.v,
            energy_per_frame_ci95_lo_uj_modelled: energy.lo,
            energy_per_frame_ci95_hi_uj_modelled: energy.hi,
            energy_per_byte_nj_modelled: energy_nj_b,
            energy_source,
            rank_mb_s_per_byte: r.v,
            rank_ci95_lo: r.lo,
            rank_ci95_hi: r.hi,
            erank_mb_s_per_byte_uj_modelled: er.v,
            erank_ci95_lo_modelled: er.lo,
            erank_ci95_hi_modelled: er.hi,
            energy_per_byte_nj_measured: None,
            energy_per_byte_u_nj_measured: None,
            energy_measured_source: None,
        });
    }
    if out.is_empty() {
        return Err(
            "stream study: no stream cipher has a `full` measurement (select stream ciphers and the full scenario)"
                .into(),
        );
    }
    Ok(out)
}

fn g(x: f64) -> String {
    if !x.is_finite() {
        "–".into()
    } else if x == 0.0 {
        "0".into()
    } else if x.abs() >= 100.0 {
        format!("{x:.0}")
    } else if x.abs() >= 1.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.3e}")
    }
}

/// Marker that starts the study's section in summary.md (the report keeps what follows it
/// when it rewrites summary.md).
pub const MD_MARKER: &str = "<!-- lwcbench:study -->";

pub fn markdown(rows: &[StreamStudyRow], p: &PowerProfile, board: Option<&Board>) -> String {
    let energy_how = match board {
        Some(b) => format!(
            "from the emulated cycles of the cipher's image on {} (one init + the keystream over a frame) ÷ {} MHz × {} V × {} mA, else measured time × that power (energy source column)",
            b.id, b.clock_mhz, b.volts, b.active_ma
        ),
        None => format!("time × {} W, {}: {}", p.active_w, p.device, p.source),
    };
    let mut s = format!("\n{MD_MARKER}\n## Stream-cipher study (stream_study.csv)\n\n");
    let _ = writeln!(
        s,
        "Median with 95 % CI over independent repetitions (fresh random key and IV each). Throughput: `full` (keystream + XOR) on {} KiB messages; 1 MB = 10^6 bytes. \
Energy is **MODELLED** ({}), not measured. RAM = state + peak stack of init + keystream. \
Rank = throughput / (ROM + 2·RAM) in (MB/s)/B; E-Rank = Rank / energy per frame in (MB/s)/(B·µJ). Methods: docs/metrics.md.\n",
        LONG_BYTES / 1024,
        energy_how
    );
    let measured = rows.iter().any(|r| r.energy_measured_source.is_some());
    s += "| cipher | impl | MB/s (95 % CI) | cycles/B | init µs | frames/s | ROM B | state B | stack B | RSS B/B | µJ/frame (modelled) | energy source | Rank | E-Rank (modelled) |";
    s += if measured { " nJ/B (measured ± U, k = 2) |\n" } else { "\n" };
    s += "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|";
    s += if measured { "---:|\n" } else { "\n" };
    for r in rows {
        let _ = write!(
            s,
            "| {} | {} | {} ({}–{}) | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            r.cipher,
            r.implementation,
            g(r.throughput_mb_s),
            g(r.throughput_ci95_lo_mb_s),
            g(r.throughput_ci95_hi_mb_s),
            g(r.cycles_per_byte),
            g(r.init_us),
            g(r.frames_per_s),
            r.code_bytes,
            r.state_bytes,
            r.peak_stack_bytes,
            g(r.rss_growth_per_byte),
            g(r.energy_per_frame_uj_modelled),
            r.energy_source,
            g(r.rank_mb_s_per_byte),
            g(r.erank_mb_s_per_byte_uj_modelled)
        );
        if measured {
            s += &measured_cell(r);
            s += " |";
        }
        s.push('\n');
    }
    if let Some(r) = rows.first() {
        let _ = writeln!(s, "\nframes/s: {}. cycles: {}.", r.frames_source, r.cycle_source);
    }
    s
}

/// "e ± U" of a row's measured energy per byte (nJ), or "not measured".
fn measured_cell(r: &StreamStudyRow) -> String {
    match (r.energy_per_byte_nj_measured, r.energy_per_byte_u_nj_measured) {
        (Some(e), Some(u)) => format!(" {} ± {}", g(e), g(u)),
        _ => " not measured".into(),
    }
}

/// Fill the measured columns from `--energy-from`: the `full` rows of this cipher and
/// implementation at the study's message size; the notes list the rows without one.
fn fill_measured(rows: &mut [StreamStudyRow], m: &crate::measured::MeasuredEnergy) -> Vec<String> {
    let mut notes = vec![format!(
        "stream_study.csv: energy_per_byte_nj_measured from {} (a collected run, docs/power.md): measured beside the modelled columns, k = 2 uncertainty; Rank and E-Rank stay on the modelled energy",
        m.path.display()
    )];
    for r in rows {
        let bits = r.long_message_bytes * 8;
        match m.find(&r.cipher, &r.implementation, "full", bits) {
            Some(x) => {
                let bytes = r.long_message_bytes as f64;
                r.energy_per_byte_nj_measured = Some(x.e_op_j / bytes * 1e9);
                r.energy_per_byte_u_nj_measured = Some(x.u_op_j / bytes * 1e9);
                r.energy_measured_source = Some(x.source);
            }
            None => notes.push(m.miss_note("stream_study.csv", &r.cipher, &r.implementation, "full", bits)),
        }
    }
    notes
}

/// The study entry point named by the `stream-study` preset.
pub fn study(input: &StudyInput) -> Result<StudyOutput, String> {
    let o = &input.options;
    let board = o.board.as_deref().map(board::find).transpose()?;
    let profile = match &board {
        Some(b) => b.fallback_profile(),
        None => power::resolve(Some(o.power_profile.as_deref().unwrap_or(DEFAULT_DEVICE)), o.watts)?,
    };
    let ghz = max_freq_ghz();
    let mut rows = table(input.summary, &profile, board.as_ref(), ghz)?;
    let measured_notes = o.energy_from.as_ref().map(|m| fill_measured(&mut rows, m)).unwrap_or_default();
    let csv = crate::results::to_csv(&rows);
    let md = markdown(&rows, &profile, board.as_ref());
    let energy_note = match &board {
        Some(b) => format!("stream_study.csv: energy columns are MODELLED, not measured: emulated cycles on {} ({}, {} MHz, {} V × {} mA, {}) where the cipher has an image, else measured time × {} W; energy_source says which per row (docs/metrics.md)", b.id, b.core, b.clock_mhz, b.volts, b.active_ma, b.status, profile.active_w),
        None => format!("stream_study.csv: energy columns are MODELLED (measured time × {} W from the '{}' power profile: {}), not measured", profile.active_w, profile.device, profile.source),
    };
    let mut notes = vec![
        energy_note,
        format!("stream_study.csv: cycles_per_byte source: {}", rows[0].cycle_source),
        format!("stream_study.csv: frames_per_s {}", rows[0].frames_source),
        "stream_study.csv: code_bytes from the binary's symbols (roots + direct-call closure into cipher code; std excluded), peak_stack_bytes by stack painting, rss_growth by VmRSS (docs/metrics.md)".into(),
    ];
    notes.extend(measured_notes);
    Ok(StudyOutput { files: vec![(FILE.into(), csv)], markdown: md, notes })
}

/// Rows of `stream_study.csv` in `dir`, or none if the run had no stream study.
pub fn load(dir: &Path) -> Result<Vec<StreamStudyRow>, String> {
    crate::results::read_csv_in(dir, FILE)
}

fn colour(r: &StreamStudyRow) -> usize {
    match r.language.as_str() {
        "C++" => 1,
        "C" => 2,
        _ => 0,
    }
}

/// One metric: (title, axis label, value/lo/hi per row).
type Metric = (&'static str, &'static str, fn(&StreamStudyRow) -> (f64, f64, f64));

const HTML_METRICS: &[Metric] = &[
    ("Throughput", "MB/s (median, 95 % CI)", |r| {
        (r.throughput_mb_s, r.throughput_ci95_lo_mb_s, r.throughput_ci95_hi_mb_s)
    }),
    ("Cycles per byte", "cycles/byte (median, 95 % CI)", |r| {
        (r.cycles_per_byte, r.cycles_per_byte_ci95_lo, r.cycles_per_byte_ci95_hi)
    }),
    ("Init time", "µs (median, 95 % CI)", |r| (r.init_us, r.init_ci95_lo_us, r.init_ci95_hi_us)),
    ("Frames per second", "frames/s (median, 95 % CI)", |r| {
        (r.frames_per_s, r.frames_per_s_ci95_lo, r.frames_per_s_ci95_hi)
    }),
    ("Code size (ROM)", "bytes of machine code", |r| (r.code_bytes as f64, r.code_bytes as f64, r.code_bytes as f64)),
    ("RAM (state + peak stack)", "bytes", |r| (r.ram_bytes as f64, r.ram_bytes as f64, r.ram_bytes as f64)),
    ("Memory footprint", "RSS growth, bytes per byte encrypted", |r| {
        (r.rss_growth_per_byte, r.rss_growth_per_byte, r.rss_growth_per_byte)
    }),
    ("Energy per frame (MODELLED)", "µJ per frame, modelled (95 % CI)", |r| {
        (r.energy_per_frame_uj_modelled, r.energy_per_frame_ci95_lo_uj_modelled, r.energy_per_frame_ci95_hi_uj_modelled)
    }),
    ("Rank", "(MB/s) per byte of ROM + 2·RAM (95 % CI)", |r| (r.rank_mb_s_per_byte, r.rank_ci95_lo, r.rank_ci95_hi)),
    ("E-Rank (MODELLED energy)", "(MB/s) per byte per µJ (95 % CI)", |r| {
        (r.erank_mb_s_per_byte_uj_modelled, r.erank_ci95_lo_modelled, r.erank_ci95_hi_modelled)
    }),
];

/// The study's section of report.html: one bar chart per metric with its 95 % confidence
/// interval (as the study drew them) and the full table; empty when there are no rows.
pub fn html(rows: &[StreamStudyRow]) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let mut h = String::from("<h2 id=\"stream-study\">Stream-cipher study</h2>");
    let r0 = &rows[0];
    let _ = write!(
        h,
        "<p>From stream_study.csv (methods: docs/metrics.md). Throughput on {} B messages, {} repetitions with a fresh random key/IV each; bars are medians with distribution-free 95 % CIs. \
<b>Energy and E-Rank are MODELLED</b>, not measured: {} (energy source column). Frames: {}. Cycles: {}. Colours: Rust, C++.</p>",
        r0.long_message_bytes,
        r0.n,
        if r0.energy_source.starts_with("emulated:") || rows.iter().any(|r| r.energy_source.starts_with("emulated:")) {
            "emulated cycles on a board × its datasheet power, host time × that power where the cipher has no image".to_string()
        } else {
            format!("measured time × {} W ({})", r0.power_w, esc(&r0.power_device))
        },
        esc(&r0.frames_source),
        esc(&r0.cycle_source)
    );
    let labels: Vec<String> = rows.iter().map(|r| format!("{}/{}", r.cipher, r.implementation)).collect();
    let colors: Vec<usize> = rows.iter().map(colour).collect();
    for (title, axis, f) in HTML_METRICS {
        let bars: Vec<(String, f64, f64, f64)> = rows
            .iter()
            .zip(&labels)
            .filter_map(|(r, l)| {
                let (v, lo, hi) = f(r);
                v.is_finite().then(|| (l.clone(), v, lo.min(v), hi.max(v)))
            })
            .collect();
        if bars.is_empty() {
            continue;
        }
        let _ = write!(h, "<h3>{}</h3>{}", esc(title), bars_ci(&bars, &colors, axis, "cipher/implementation", &[]));
    }
    h += "<table><tr><th class=\"l\">cipher</th><th class=\"l\">impl</th><th>MB/s</th><th>95 % CI</th><th>cycles/B</th><th>init µs</th><th>frames/s</th><th>ROM B</th><th>state B</th><th>stack B</th><th>RSS B/B</th><th>µJ/frame (modelled)</th><th>nJ/B (modelled)</th><th class=\"l\">energy source</th><th>Rank</th><th>E-Rank (modelled)</th>";
    let measured = rows.iter().any(|r| r.energy_measured_source.is_some());
    h += if measured {
        "<th>nJ/B (measured ± U, k = 2)</th><th class=\"l\">measured source</th></tr>"
    } else {
        "</tr>"
    };
    for r in rows {
        let _ = write!(
            h,
            "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{:.1}</td><td>{:.1}–{:.1}</td><td>{:.2}</td><td>{:.2}</td><td>{:.1}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.3}</td><td>{:.1}</td><td>{:.3}</td><td class=\"l\">{}</td><td>{:.3e}</td><td>{:.3e}</td>",
            esc(&r.cipher),
            esc(&r.implementation),
            r.throughput_mb_s,
            r.throughput_ci95_lo_mb_s,
            r.throughput_ci95_hi_mb_s,
            r.cycles_per_byte,
            r.init_us,
            r.frames_per_s,
            r.code_bytes,
            r.state_bytes,
            r.peak_stack_bytes,
            r.rss_growth_per_byte,
            r.energy_per_frame_uj_modelled,
            r.energy_per_byte_nj_modelled,
            esc(&r.energy_source),
            r.rank_mb_s_per_byte,
            r.erank_mb_s_per_byte_uj_modelled
        );
        if measured {
            let _ = write!(
                h,
                "<td>{}</td><td class=\"l\">{}</td>",
                esc(measured_cell(r).trim()),
                esc(r.energy_measured_source.as_deref().unwrap_or(""))
            );
        }
        h += "</tr>";
    }
    h += "</table>";
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(scenario: &str, size_bits: u64, median: f64, lo: f64, hi: f64) -> SummaryRow {
        SummaryRow {
            cipher: "Trivium".into(),
            implementation: "rust".into(),
            language: "Rust".into(),
            family: "stream".into(),
            scenario: scenario.into(),
            kiv: "r,r".into(),
            size_bits,
            payload: "random".into(),
            batch: 1,
            n: 10,
            mean_ns: median,
            sd_ns: 0.0,
            median_ns: median,
            round_spread_pct: None,
            min_ns: lo,
            max_ns: hi,
            p95_ns: hi,
            p99_ns: hi,
            ci95_lo_ns: lo,
            ci95_hi_ns: hi,
            median_ci95_lo_ns: lo,
            median_ci95_hi_ns: hi,
            outliers: 0,
            median_cycles: Some(median * 3.0),
            ns_per_bit: None,
            mbit_per_s: None,
            cycles_per_bit: None,
        }
    }

    #[test]
    fn formulas_by_hand() {
        // 65,536 bytes in 65,536 ns = 1 byte/ns = 1000 MB/s; CI 50,000–80,000 ns → 819.2–1310.72.
        let t = Est { v: 65_536.0, lo: 50_000.0, hi: 80_000.0 }.mb_per_s(65_536.0);
        assert!((t.v - 1000.0).abs() < 1e-9 && (t.lo - 819.2).abs() < 1e-9 && (t.hi - 1310.72).abs() < 1e-9);
        // ROM 1000 B, RAM 250 B → divisor 1500: rank 1000/1500 = 0.6667 (MB/s)/B.
        let r = rank(t, 1000, 250);
        assert!((r.v - 1000.0 / 1500.0).abs() < 1e-12 && (r.lo - 819.2 / 1500.0).abs() < 1e-12);
        // 1 ms at 0.75 W = 750 µJ; E-Rank = 0.6667 / 750.
        let p = PowerProfile { device: "x".into(), active_w: 0.75, source: String::new() };
        let e = energy_uj(&p, Est { v: 1e6, lo: 0.5e6, hi: 2e6 });
        assert!((e.v - 750.0).abs() < 1e-9 && (e.lo - 375.0).abs() < 1e-9 && (e.hi - 1500.0).abs() < 1e-9);
        let er = erank(r, e);
        assert!((er.v - (1000.0 / 1500.0) / 750.0).abs() < 1e-15);
        assert!(
            (er.lo - (819.2 / 1500.0) / 1500.0).abs() < 1e-15 && (er.hi - (1310.72 / 1500.0) / 375.0).abs() < 1e-15
        );
        assert!(er.lo <= er.v && er.v <= er.hi);
    }

    #[test]
    fn table_from_hand_made_summary() {
        // The table measures resident-set growth, which other test threads disturb: alone in
        // a child process.
        if !crate::resources::in_own_process("studies::stream_study::tests::table_from_hand_made_summary") {
            return;
        }
        // full: 64 KiB in 131,072 ns (500 MB/s), TSC 3 ticks/ns → 6 cycles/byte; init 2,000 ns.
        let s = vec![
            row("full", LONG_BYTES as u64 * 8, 131_072.0, 120_000.0, 140_000.0),
            row("keystream", LONG_BYTES as u64 * 8, 65_536.0, 60_000.0, 70_000.0),
            row("init", 0, 2_000.0, 1_900.0, 2_100.0),
        ];
        let p = PowerProfile { device: "Raspberry Pi Zero W".into(), active_w: 0.75, source: "s".into() };
        let t = table(&s, &p, None, None).unwrap();
        assert_eq!(t.len(), 1);
        let r = &t[0];
        assert!((r.throughput_mb_s - 500.0).abs() < 1e-9);
        assert!((r.keystream_mb_s - 1000.0).abs() < 1e-9);
        assert!((r.cycles_per_byte - 6.0).abs() < 1e-9, "{}", r.cycles_per_byte);
        assert!((r.init_us - 2.0).abs() < 1e-12);
        // Derived frame: 921,600 B at 2 ns/B = 1,843,200 ns → 542.5 frames/s, 1382.4 µJ at 0.75 W.
        assert_eq!(r.frame_bytes, FRAME_BYTES as u64);
        assert!((r.frames_per_s - 1e9 / 1_843_200.0).abs() < 1e-9);
        assert!((r.energy_per_frame_uj_modelled - 1382.4).abs() < 1e-6);
        // 2 ns/B × 0.75 W = 1.5 nJ/B.
        assert!((r.energy_per_byte_nj_modelled - 1.5).abs() < 1e-12);
        assert!(r.code_bytes > 0 && r.peak_stack_bytes > 0 && r.state_bytes == 36);
        assert_eq!(r.ram_bytes, r.state_bytes + r.peak_stack_bytes);
        assert!((r.rank_mb_s_per_byte - 500.0 / (r.code_bytes + 2 * r.ram_bytes) as f64).abs() < 1e-12);
        assert!(r.rss_growth_per_byte > 0.5 && r.rss_growth_per_byte < 2.0, "{}", r.rss_growth_per_byte);
        let md = markdown(&t, &p, None);
        assert!(
            md.contains(MD_MARKER) && md.contains("MODELLED") && md.contains("| Trivium | rust | 500 (468–546) |"),
            "{md}"
        );
    }

    /// `--board rp2040`: 5 V × 25 mA at 125 MHz = 1 nJ per cycle (hand), so a frame costs
    /// (init + keystream over the frame) cycles in nJ and a byte the slope in nJ; DRACO/cpp-fast
    /// has no image (the cycles table is the Rust images') and keeps host time × 0.125 W.
    #[test]
    fn board_energy_is_labelled_per_row() {
        if !crate::resources::in_own_process("studies::stream_study::tests::board_energy_is_labelled_per_row") {
            return;
        }
        let mut s = vec![
            row("full", LONG_BYTES as u64 * 8, 131_072.0, 120_000.0, 140_000.0),
            row("keystream", LONG_BYTES as u64 * 8, 65_536.0, 60_000.0, 70_000.0),
            row("init", 0, 2_000.0, 1_900.0, 2_100.0),
        ];
        let cpp: Vec<SummaryRow> = s
            .iter()
            .map(|r| SummaryRow {
                cipher: "DRACO".into(),
                implementation: "cpp-fast".into(),
                language: "C++".into(),
                ..r.clone()
            })
            .collect();
        s.extend(cpp);
        let b = board::find("rp2040").unwrap();
        let t = table(&s, &b.fallback_profile(), Some(&b), None).unwrap();
        let tri = t.iter().find(|r| r.cipher == "Trivium").unwrap();
        assert_eq!(tri.energy_source, "emulated:rp2040 (M0+ model, 125 MHz)");
        let c = b.cycles("Trivium", "rust").unwrap();
        let frame_cycles = c.init + c.at_16_bytes + (FRAME_BYTES as f64 - 16.0) * c.per_byte();
        assert!((tri.energy_per_frame_uj_modelled - frame_cycles * 1e-3).abs() < 1e-6 * frame_cycles * 1e-3);
        assert_eq!(tri.energy_per_frame_ci95_lo_uj_modelled, tri.energy_per_frame_uj_modelled, "exact count");
        assert!((tri.energy_per_byte_nj_modelled - c.per_byte()).abs() < 1e-9);
        let d = t.iter().find(|r| r.cipher == "DRACO" && r.implementation == "cpp-fast").unwrap();
        assert!(d.energy_source.starts_with("host-time×power (fallback: no Cortex-M0+ image"), "{}", d.energy_source);
        // 921,600 B at 2 ns/B = 1,843,200 ns × 0.125 W = 230.4 µJ (hand).
        assert!((d.energy_per_frame_uj_modelled - 230.4).abs() < 1e-9, "{}", d.energy_per_frame_uj_modelled);
        let md = markdown(&t, &b.fallback_profile(), Some(&b));
        assert!(
            md.contains("emulated:rp2040 (M0+ model, 125 MHz)") && md.contains("host-time×power (fallback"),
            "{md}"
        );
        let h = html(&t);
        assert!(h.contains("emulated:rp2040") && h.contains("emulated cycles on a board"), "{h}");
    }

    #[test]
    fn a_measured_frame_scenario_wins() {
        let s = vec![
            row("full", LONG_BYTES as u64 * 8, 131_072.0, 120_000.0, 140_000.0),
            row("keystream", LONG_BYTES as u64 * 8, 65_536.0, 60_000.0, 70_000.0),
            row("init", 0, 2_000.0, 1_900.0, 2_100.0),
            SummaryRow {
                payload: "video:sample".into(),
                ..row("frame", 100_000 * 8, 1_000_000.0, 900_000.0, 1_100_000.0)
            },
        ];
        let p = PowerProfile { device: "d".into(), active_w: 1.0, source: "s".into() };
        let r = &table(&s, &p, None, None).unwrap()[0];
        assert_eq!(r.frame_bytes, 100_000);
        assert!((r.frames_per_s - 1000.0).abs() < 1e-9);
        assert!(r.frames_source.starts_with("measured"));
        // 1 ms at 1 W = 1000 µJ; interval 900–1100 µJ.
        assert!((r.energy_per_frame_ci95_lo_uj_modelled - 900.0).abs() < 1e-9);
    }

    #[test]
    fn missing_scenarios_are_named() {
        let s = vec![row("full", LONG_BYTES as u64 * 8, 131_072.0, 120_000.0, 140_000.0)];
        let p = PowerProfile { device: "d".into(), active_w: 1.0, source: "s".into() };
        let e = table(&s, &p, None, None).unwrap_err();
        assert!(e.contains("no `keystream` measurement for Trivium/rust"), "{e}");
        assert!(table(&[], &p, None, None).unwrap_err().contains("no stream cipher"));
    }

    #[test]
    fn every_stream_cipher_has_code_and_stack() {
        // A new stream cipher without code-size markers fails here.
        let bin = codesize::Binary::current().unwrap();
        let all = registry();
        for e in all.iter().filter(|e| e.info.family == Family::Stream) {
            let id = e.id();
            let cs = codesize::measure_entry(&bin, e, &all);
            assert!(
                cs.bytes > 100,
                "{id}: {} code bytes ({:?}) — give its catalogue entry code markers (`.code(&[..])`)",
                cs.bytes,
                cs.names
            );
            let st = stack_of(e).unwrap();
            assert!(st > 0 && st < STACK_DEPTH as u64, "{id}: stack {st}");
        }
    }

    fn study_row(name: &str, lang: &str, thr: f64) -> StreamStudyRow {
        StreamStudyRow {
            cipher: name.into(),
            implementation: "rust".into(),
            language: lang.into(),
            origin: "own code".into(),
            long_message_bytes: 65536,
            n: 30,
            throughput_mb_s: thr,
            throughput_ci95_lo_mb_s: thr * 0.9,
            throughput_ci95_hi_mb_s: thr * 1.1,
            keystream_mb_s: thr,
            keystream_ci95_lo_mb_s: thr,
            keystream_ci95_hi_mb_s: thr,
            cycles_per_byte: 3.0,
            cycles_per_byte_ci95_lo: 2.9,
            cycles_per_byte_ci95_hi: 3.1,
            cycle_source: "TSC".into(),
            init_us: 1.0,
            init_ci95_lo_us: 0.9,
            init_ci95_hi_us: 1.1,
            frame_bytes: 921600,
            frames_per_s: 1000.0,
            frames_per_s_ci95_lo: 900.0,
            frames_per_s_ci95_hi: 1100.0,
            frames_source: "derived".into(),
            code_bytes: 2000,
            code_functions: 5,
            state_bytes: 36,
            peak_stack_bytes: 200,
            ram_bytes: 236,
            rss_growth_bytes: 921600,
            rss_growth_per_byte: 1.0,
            power_device: "Raspberry Pi Zero W".into(),
            power_w: 0.75,
            energy_per_frame_uj_modelled: 750.0,
            energy_per_frame_ci95_lo_uj_modelled: 700.0,
            energy_per_frame_ci95_hi_uj_modelled: 800.0,
            energy_per_byte_nj_modelled: 0.8,
            energy_source: "host-time×power (Raspberry Pi Zero W, 0.75 W)".into(),
            rank_mb_s_per_byte: 0.4,
            rank_ci95_lo: 0.35,
            rank_ci95_hi: 0.45,
            erank_mb_s_per_byte_uj_modelled: 5e-4,
            erank_ci95_lo_modelled: 4e-4,
            erank_ci95_hi_modelled: 6e-4,
            energy_per_byte_nj_measured: None,
            energy_per_byte_u_nj_measured: None,
            energy_measured_source: None,
        }
    }

    /// `--energy-from`: a `full` row at the study's 64 KiB (524288 bits) fills the measured
    /// columns; a cipher without one is listed. By hand: 3.2768e-3 J per 65536-byte operation
    /// = 50 nJ/B, U 6.5536e-5 J = 1 nJ/B.
    #[test]
    fn measured_energy_beside_modelled() {
        let head = "cipher,implementation,language,scenario,kiv,size_bits,payload,batches,operations,samples_min,energy_per_op_j_measured,energy_per_op_u_j,energy_per_byte_j_measured,energy_per_byte_u_j,energy_per_op_j_total,mean_power_w,baseline_power_w,energy_source\n";
        let text = format!(
            "{head}Trivium,rust,rust,full,\"r,r\",524288,random,2,20,40,3.2768e-3,6.5536e-5,5e-8,1e-9,4e-3,0.3,0.2,measured:ina219 (shunt 0.1 Ω ±1 %)\n\
             DRACO,rust,rust,full,\"r,r\",8192,random,2,20,40,1e-5,1e-7,,,1e-5,0.3,0.2,measured:ina219 (shunt 0.1 Ω ±1 %)\n"
        );
        let m = crate::measured::MeasuredEnergy::parse(&text, Path::new("board/energy.csv")).unwrap();
        let mut rows = vec![study_row("Trivium", "Rust", 1000.0), study_row("DRACO", "C++", 200.0)];
        let notes = fill_measured(&mut rows, &m);
        assert!((rows[0].energy_per_byte_nj_measured.unwrap() - 50.0).abs() < 1e-9, "{:?}", rows[0]);
        assert!((rows[0].energy_per_byte_u_nj_measured.unwrap() - 1.0).abs() < 1e-12);
        assert_eq!(
            rows[0].energy_measured_source.as_deref(),
            Some("measured:ina219 (shunt 0.1 Ω ±1 %) from board/energy.csv line 2")
        );
        assert_eq!(rows[1].energy_per_byte_nj_measured, None);
        assert!(notes.iter().any(|n| n == "stream_study.csv: DRACO (rust) full 524288 bits: not measured (board/energy.csv: it has full at 8192 bits); modelled only"), "{notes:?}");
        let md = markdown(&rows, &power::resolve(Some(DEFAULT_DEVICE), None).unwrap(), None);
        assert!(md.contains(" nJ/B (measured ± U, k = 2) |"), "{md}");
        assert!(md.contains("| 50.00 ± 1.00 |") && md.contains("| not measured |"), "{md}");
        let page = html(&rows);
        assert!(page.contains("<td>50.00 ± 1.00</td>") && page.contains("<td>not measured</td>"), "{page}");
        // the columns survive the CSV round trip; a file from before them still loads
        let dir = std::env::temp_dir().join(format!("lwcbench-ss-measured-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(FILE), crate::results::to_csv(&rows)).unwrap();
        assert_eq!(load(&dir).unwrap(), rows);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn html_one_chart_per_metric_and_round_trip() {
        let rows = vec![study_row("Trivium", "Rust", 1000.0), study_row("DRACO", "C++", 200.0)];
        let h = html(&rows);
        assert_eq!(h.matches("<svg").count(), HTML_METRICS.len());
        assert!(h.contains("MODELLED") && h.contains("Trivium/rust: 1000.000 (95 % CI 900.000–1100.000)"), "{h}");
        let dir = std::env::temp_dir().join(format!("lwcbench-ss-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(FILE), crate::results::to_csv(&rows)).unwrap();
        assert_eq!(load(&dir).unwrap(), rows);
        std::fs::write(dir.join(FILE), "cipher\nx\n").unwrap();
        assert!(load(&dir).unwrap_err().contains(FILE));
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(html(&[]).is_empty());
    }
}
