//! The stream-cipher study's table: for every stream-cipher implementation,
//! throughput and cycles/byte on long messages, init time, frames per second, code size, RAM
//! (state + peak stack), memory footprint per byte, MODELLED energy per frame and per byte, and
//! the study's combined scores Rank = throughput / (ROM + 2·RAM) and
//! E-Rank = throughput / ((ROM + 2·RAM) · energy). Every column is documented in
//! docs/metrics.md; timing columns come from the run's own summary rows (median with its
//! distribution-free 95 % CI over independent repetitions, each with a fresh random key/IV).
use std::path::Path;

use lwcbench_catalog::{registry, Entry, Make};
use lwcbench_core::Family;

use super::study::{Study, StudyArgs, StudyInput, StudyOption, StudyOptions, StudyOutput, StudyRun};
use crate::board::{self, Board};
use crate::plan::{Kiv, Scenario, Selection};
use crate::power::{self, PowerProfile};
use crate::resources::{codesize, rss, stack};
use crate::results::SummaryRow;
use crate::runner::default_static;

mod render;
pub use render::{html, markdown, MD_MARKER};

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

/// The preset name.
pub const NAME: &str = "stream-study";
/// The study's table.
pub const FILE: &str = "stream_study.csv";

/// The stream-cipher study's table for this machine.
pub struct StreamStudy;

impl Study for StreamStudy {
    fn published(&self, ours: &crate::published::Ours) -> Option<crate::published::Section> {
        Some(crate::published::video(ours.stream))
    }
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

pub use crate::study_rows::StreamStudyRow;

/// A point estimate with its 95 % interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Est {
    /// The estimate.
    pub v: f64,
    /// Lower end of the 95 % interval.
    pub lo: f64,
    /// Upper end of the 95 % interval.
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
    /// The estimate and its interval times `k`.
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

#[cfg(test)]
mod tests;
