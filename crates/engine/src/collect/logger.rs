//! Measured energy: a power logger's lines (INA219/INA226 beside the board, `docs/power.md`)
//! joined to the board's marker lines (`LWCB M`) by trigger window. Parsing is a pure function
//! of the text ([`parse_logger`]); [`join`] aligns windows to batches, subtracts the idle
//! baseline, integrates and states an uncertainty.
use std::collections::BTreeMap;

use super::{num, pct_decode, split_lines, Issue, Parsed, LIST_MAX};

mod join;
pub use join::{join, BatchEnergy, JoinOptions, PowerResult, Refused};

/// Version of the logger line format (`LWCP H` states it; docs/power.md).
pub const LOGGER_FORMAT_VERSION: u32 = 1;
const MARKER: &str = "LWCP ";
/// Largest tick_hz a logger header may state (1 GHz).
const MAX_TICK_HZ: f64 = 1e9;
/// Default fewest samples a window needs.
pub const DEFAULT_MIN_SAMPLES: usize = 8;

/// A current/power monitor's fixed facts, transcribed from its datasheet.
#[derive(Debug, PartialEq)]
pub struct Sensor {
    /// Name in the logger header (ina219, ina226).
    pub name: &'static str,
    /// Volts per count of the shunt-voltage register.
    pub shunt_lsb_v: f64,
    /// Volts per count of the bus-voltage register (as the logger prints it, right-aligned).
    pub bus_lsb_v: f64,
    /// Largest bus-voltage count.
    pub bus_max: u32,
    /// Largest relative error of a current reading (gain/total error, max over temperature).
    pub gain_error: f64,
    /// Conversion times in µs one channel can be set to.
    pub conv_us: &'static [u32],
    /// Averaging counts it can be set to.
    pub avg: &'static [u32],
    /// The datasheet the figures come from.
    pub source: &'static str,
}

/// The sensors a logger may name in its header.
pub const SENSORS: [Sensor; 2] = [
    Sensor {
        name: "ina219",
        // TI INA219 datasheet (SBOS448G): shunt voltage LSB 10 µV, bus voltage LSB 4 mV (bits 15..3),
        // ADC 9–12 bit 84/148/276/532 µs, averaging 2–128 samples; total current error ±1 % max
        // (INA219A; the B grade is ±0.5 %, the A figure covers both).
        shunt_lsb_v: 10e-6,
        bus_lsb_v: 4e-3,
        bus_max: 8191,
        gain_error: 0.01,
        conv_us: &[84, 148, 276, 532],
        avg: &[1, 2, 4, 8, 16, 32, 64, 128],
        source: "TI INA219 datasheet SBOS448",
    },
    Sensor {
        name: "ina226",
        // TI INA226 datasheet (SBOS547A): shunt voltage LSB 2.5 µV, bus voltage LSB 1.25 mV, conversion
        // 140 µs–8.244 ms, averaging 1–1024; gain error ±0.1 % max.
        shunt_lsb_v: 2.5e-6,
        bus_lsb_v: 1.25e-3,
        bus_max: 32767,
        gain_error: 0.001,
        conv_us: &[140, 204, 332, 588, 1100, 2116, 4156, 8244],
        avg: &[1, 4, 16, 64, 128, 256, 512, 1024],
        source: "TI INA226 datasheet SBOS547",
    },
];

/// The logger header's facts.
#[derive(Debug, PartialEq)]
pub struct LoggerHeader {
    /// Line number of the header.
    pub line: usize,
    /// The sensor named.
    pub sensor: &'static Sensor,
    /// Shunt resistance, Ω.
    pub shunt_ohm: f64,
    /// Shunt tolerance, relative (1 % = 0.01).
    pub shunt_tol: f64,
    /// The logger's timestamp ticks per second.
    pub tick_hz: f64,
    /// Conversion time per channel, µs.
    pub conv_us: u32,
    /// Samples averaged per reading.
    pub avg: u32,
    /// Header fields not interpreted (kept for run.json).
    pub extra: BTreeMap<String, String>,
}

impl LoggerHeader {
    /// Seconds between two samples the configuration gives (shunt and bus converted in turn).
    pub fn sample_period_s(&self) -> f64 {
        2.0 * self.conv_us as f64 * self.avg as f64 * 1e-6
    }
}

/// One power sample: `LWCP P`.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    /// Line number.
    pub line: usize,
    /// Logger ticks at the sample.
    pub t: u64,
    /// Rising trigger edges the logger had counted, and the trigger level, at the sample.
    pub rises: u64,
    /// Trigger level at the sample.
    pub high: bool,
    /// Bus voltage, V.
    pub volts: f64,
    /// Current, A.
    pub amps: f64,
}

/// One trigger edge: `LWCP T`.
#[derive(Clone, Debug, PartialEq)]
pub struct Edge {
    /// Line number.
    pub line: usize,
    /// Rising edges counted, this one included.
    pub rises: u64,
    /// Whether the edge rises.
    pub high: bool,
    /// Logger ticks at the edge.
    pub t: u64,
}

/// Everything read from a logger's lines.
#[derive(Debug, Default)]
pub struct LoggerLog {
    /// The valid header, if any.
    pub header: Option<LoggerHeader>,
    /// Valid power samples.
    pub samples: Vec<Sample>,
    /// Valid trigger edges.
    pub edges: Vec<Edge>,
    /// Lines that could not be used, and why.
    pub malformed: Vec<Issue>,
    /// (line, sequence numbers missing before it).
    pub gaps: Vec<(usize, u64)>,
    /// Lines without the `LWCP ` marker.
    pub noise_lines: usize,
    /// Line numbers of headers of earlier runs in the same log.
    pub earlier_runs: Vec<usize>,
    /// Why nothing can be used (no header, a malformed header).
    pub fatal: Option<String>,
}

fn checked_body(line: &str) -> Result<Option<&str>, String> {
    super::checked_body_after(line, MARKER)
}

fn parse_header(line: usize, fields: &[&str]) -> Result<LoggerHeader, String> {
    let version = fields.first().ok_or("header without format version")?;
    if num::<u32>(version, "format version")? != LOGGER_FORMAT_VERSION {
        return Err(format!(
            "format version {version} is not supported (this lwcbench reads version {LOGGER_FORMAT_VERSION})"
        ));
    }
    let mut kv = BTreeMap::new();
    for f in &fields[1..] {
        let (k, v) = f.split_once('=').ok_or_else(|| format!("header field '{f}' is not key=value"))?;
        let v = pct_decode(v)?;
        if v.chars().any(char::is_control) {
            return Err(format!("header field {k} contains a control character"));
        }
        super::once(&mut kv, k, v, "header")?;
    }
    let mut take = |k: &str| kv.remove(k).ok_or_else(|| format!("header lacks required key '{k}'"));
    let name = take("sensor")?;
    let sensor =
        SENSORS.iter().find(|s| s.name == name).ok_or_else(|| format!("sensor '{name}' is not ina219 or ina226"))?;
    let uohm: u64 = num(&take("shunt_uohm")?, "shunt_uohm")?;
    if !(1..=1_000_000_000).contains(&uohm) {
        return Err(format!("header shunt_uohm={uohm} is not from 1 µΩ to 1 kΩ"));
    }
    let tol_ppm: u64 = num(&take("shunt_tol_ppm")?, "shunt_tol_ppm")?;
    if tol_ppm > 200_000 {
        return Err(format!("header shunt_tol_ppm={tol_ppm} is above 200000 (20 %)"));
    }
    let tick_hz: f64 = num(&take("tick_hz")?, "tick_hz")?;
    if !(tick_hz.is_finite() && (1.0..=MAX_TICK_HZ).contains(&tick_hz)) {
        return Err(format!("header tick_hz={tick_hz} is not a number from 1 to {MAX_TICK_HZ:e}"));
    }
    let conv_us: u32 = num(&take("conv_us")?, "conv_us")?;
    if !sensor.conv_us.contains(&conv_us) {
        return Err(format!(
            "header conv_us={conv_us} is not a conversion time of the {name} ({:?} µs)",
            sensor.conv_us
        ));
    }
    let avg: u32 = num(&take("avg")?, "avg")?;
    if !sensor.avg.contains(&avg) {
        return Err(format!("header avg={avg} is not an averaging count of the {name} ({:?})", sensor.avg));
    }
    Ok(LoggerHeader {
        line,
        sensor,
        shunt_ohm: uohm as f64 / 1e6,
        shunt_tol: tol_ppm as f64 / 1e6,
        tick_hz,
        conv_us,
        avg,
        extra: kv,
    })
}

fn level(s: &str) -> Result<bool, String> {
    match s {
        "0" => Ok(false),
        "1" => Ok(true),
        _ => Err(format!("trigger level '{s}' is not 0 or 1")),
    }
}

/// Parse a logger's whole capture. Never fails: what is wrong is in `malformed` / `fatal`.
pub fn parse_logger(text: &str) -> LoggerLog {
    let text = text.replace('\0', "");
    let lines = split_lines(&text);
    let mut log = LoggerLog::default();
    let headers: Vec<usize> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| matches!(checked_body(l), Ok(Some(b)) if b.starts_with("LWCP H ")))
        .map(|(i, _)| i)
        .collect();
    let Some(&start) = headers.last() else {
        log.fatal = Some("no valid header line (LWCP H …)".into());
        return log;
    };
    log.earlier_runs = headers[..headers.len() - 1].iter().map(|i| i + 1).collect();
    log.noise_lines = start;
    let (mut next_seq, mut last_t, mut last_rises) = (0u64, 0u64, 0u64);
    for (i, line) in lines.iter().enumerate().skip(start) {
        let no = i + 1;
        let body = match checked_body(line) {
            Ok(None) => {
                log.noise_lines += 1;
                continue;
            }
            Ok(Some(b)) => b,
            Err(e) => {
                log.malformed.push(Issue { line: no, reason: e });
                continue;
            }
        };
        let f: Vec<&str> = body.split(' ').collect();
        let res: Result<(), String> = match f.get(1).copied().unwrap_or("") {
            "H" => match parse_header(no, &f[2..]) {
                Ok(h) => {
                    log.header = Some(h);
                    Ok(())
                }
                Err(e) => {
                    // the reason quotes the log: bounded to one short line
                    log.fatal = Some(format!("line {no}: {}", crate::text::one_line(&e, 300)));
                    return log;
                }
            },
            "I" => Ok(()),
            kind @ ("P" | "T") => {
                let h = log.header.as_ref().expect("the run starts at a valid header");
                let want = if kind == "P" { 8 } else { 6 };
                (|| {
                    if f.len() != want {
                        return Err(format!("{} fields after the type, {} expected", f.len() - 2, want - 2));
                    }
                    let seq: u64 = num(f[2], "seq")?;
                    if seq < next_seq {
                        return Err(format!("seq {seq} repeats or goes back (expected {next_seq})"));
                    }
                    let (t, rises, high) = if kind == "P" {
                        (num(f[3], "time")?, num(f[4], "rises")?, level(f[5])?)
                    } else {
                        (num(f[5], "time")?, num(f[3], "rises")?, level(f[4])?)
                    };
                    if t < last_t {
                        return Err(format!("time {t} goes back (last {last_t})"));
                    }
                    if rises < last_rises {
                        return Err(format!("rises {rises} goes back (last {last_rises})"));
                    }
                    let sample = if kind == "P" {
                        let bus: u32 = num(f[6], "bus")?;
                        if bus > h.sensor.bus_max {
                            return Err(format!(
                                "bus count {bus} is above the {}'s {}",
                                h.sensor.name, h.sensor.bus_max
                            ));
                        }
                        let shunt: i16 = num(f[7], "shunt")?;
                        Some(Sample {
                            line: no,
                            t,
                            rises,
                            high,
                            volts: bus as f64 * h.sensor.bus_lsb_v,
                            amps: shunt as f64 * h.sensor.shunt_lsb_v / h.shunt_ohm,
                        })
                    } else {
                        None
                    };
                    if seq > next_seq {
                        log.gaps.push((no, seq - next_seq));
                    }
                    next_seq = seq.checked_add(1).ok_or("seq 18446744073709551615 has no successor")?;
                    (last_t, last_rises) = (t, rises);
                    match sample {
                        Some(s) => log.samples.push(s),
                        None => log.edges.push(Edge { line: no, rises, high, t }),
                    }
                    Ok(())
                })()
            }
            other => Err(format!("unknown line type '{other}'")),
        };
        if let Err(e) = res {
            log.malformed.push(Issue { line: no, reason: e });
        }
    }
    log
}

impl LoggerLog {
    /// What was read, one line each (printed and kept in run.json notes).
    pub fn summary_lines(&self, stream: &str) -> Vec<String> {
        let mut v = vec![format!(
            "{stream}: {} power sample(s) and {} trigger edge(s); {} malformed line(s) not used; {} noise line(s) ignored",
            self.samples.len(),
            self.edges.len(),
            self.malformed.len(),
            self.noise_lines
        )];
        for m in self.malformed.iter().take(LIST_MAX) {
            v.push(format!("{stream}: malformed line {}: {}", m.line, crate::text::one_line(&m.reason, 300)));
        }
        if self.malformed.len() > LIST_MAX {
            v.push(format!("{stream}: … and {} more malformed lines", self.malformed.len() - LIST_MAX));
        }
        if !self.gaps.is_empty() {
            let lost: u64 = self.gaps.iter().fold(0u64, |a, g| a.saturating_add(g.1));
            v.push(format!("{stream}: {lost} line(s) missing or malformed by the sequence numbers"));
        }
        if !self.earlier_runs.is_empty() {
            v.push(format!(
                "{stream}: the logger restarted {} time(s); only the lines after its last header were used",
                self.earlier_runs.len()
            ));
        }
        v
    }
}

/// A row of `energy.csv`: the energy of one group (cipher × implementation × scenario × kiv ×
/// size × payload), over its measured batches.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize, PartialEq)]
pub struct EnergyRow {
    /// Cipher name.
    pub cipher: String,
    /// Implementation name.
    pub implementation: String,
    /// Language of the implementation.
    pub language: String,
    /// Scenario measured.
    pub scenario: String,
    /// Key/IV variant.
    pub kiv: String,
    /// Message size in bits.
    pub size_bits: u64,
    /// Payload kind.
    pub payload: String,
    /// Batches measured.
    pub batches: usize,
    /// Operations over those batches.
    pub operations: u64,
    /// Fewest power samples in one of its windows.
    pub samples_min: usize,
    /// Energy above the idle baseline per operation, J (measured).
    pub energy_per_op_j_measured: f64,
    /// Expanded uncertainty (k = 2) of the energy per operation.
    pub energy_per_op_u_j: f64,
    /// Energy per byte of message, J (measured; empty without a message).
    pub energy_per_byte_j_measured: Option<f64>,
    /// Expanded uncertainty (k = 2) of the energy per byte, J.
    pub energy_per_byte_u_j: Option<f64>,
    /// Mean power × window length / operations: the board's whole draw, baseline included.
    pub energy_per_op_j_total: f64,
    /// Mean power inside the windows, W.
    pub mean_power_w: f64,
    /// Mean idle power subtracted, W.
    pub baseline_power_w: f64,
    /// Where the figure comes from (sensor, shunt, join).
    pub energy_source: String,
}

/// A row of `energy_batches.csv`.
#[derive(Clone, Debug, serde::Serialize)]
pub struct BatchRow {
    /// The board's batch id.
    pub batch: u64,
    /// The logger's trigger window.
    pub window: u64,
    /// Cipher name.
    pub cipher: String,
    /// Implementation name.
    pub implementation: String,
    /// Scenario measured.
    pub scenario: String,
    /// Key/IV variant.
    pub kiv: String,
    /// Message size in bits.
    pub size_bits: u64,
    /// Repetition of the board's sample line.
    pub rep: u32,
    /// Operations in the batch.
    pub operations: u64,
    /// Power samples inside the window.
    pub samples: usize,
    /// Window length, s.
    pub duration_s: f64,
    /// Mean power inside the window, W.
    pub mean_power_w: f64,
    /// Idle power subtracted, W.
    pub baseline_power_w: f64,
    /// Energy above the baseline, J.
    pub energy_j_measured: f64,
    /// Random standard uncertainty, J.
    pub u_random_j: f64,
    /// Systematic standard uncertainty, J.
    pub u_systematic_j: f64,
}

/// Sum the batches of each group: random parts in quadrature, systematic ones linearly (they
/// do not average out), expanded with k = 2.
pub fn by_group(board: &Parsed, r: &PowerResult) -> Vec<EnergyRow> {
    #[derive(Default)]
    struct Acc {
        batches: usize,
        ops: u64,
        samples_min: usize,
        e: f64,
        u_r2: f64,
        u_s: f64,
        dur: f64,
        pw: f64,
        bw: f64,
    }
    // (cipher, implementation, language, scenario, kiv, size_bits, payload) of a sample row.
    type GroupKey = (String, String, String, String, String, u64, String);
    let mut g: BTreeMap<GroupKey, Acc> = BTreeMap::new();
    for b in &r.batches {
        let s = &board.samples[b.row];
        let key = (
            s.cipher.clone(),
            s.implementation.clone(),
            s.language.clone(),
            s.scenario.clone(),
            s.kiv.clone(),
            s.size_bits,
            s.payload.clone(),
        );
        let a = g.entry(key).or_insert_with(|| Acc { samples_min: usize::MAX, ..Acc::default() });
        a.batches += 1;
        a.ops = a.ops.saturating_add(b.ops);
        a.samples_min = a.samples_min.min(b.samples);
        a.e += b.energy_j;
        a.u_r2 += b.u_random_j.powi(2);
        a.u_s += b.u_sys_j;
        a.dur += b.duration_s;
        a.pw += b.mean_power_w * b.duration_s;
        a.bw += b.baseline_w * b.duration_s;
    }
    let src = source_label(r);
    g.into_iter()
        .map(|((cipher, implementation, language, scenario, kiv, size_bits, payload), a)| {
            let ops = a.ops as f64;
            let (e, u) = (a.e / ops, 2.0 * (a.u_r2 + a.u_s * a.u_s).sqrt() / ops);
            let bytes = size_bits as f64 / 8.0;
            let per_byte = |x: f64| (size_bits >= 8).then(|| x / bytes);
            let avg = |x: f64| if a.dur > 0.0 { x / a.dur } else { 0.0 };
            EnergyRow {
                cipher,
                implementation,
                language,
                scenario,
                kiv,
                size_bits,
                payload,
                batches: a.batches,
                operations: a.ops,
                samples_min: a.samples_min,
                energy_per_op_j_measured: e,
                energy_per_op_u_j: u,
                energy_per_byte_j_measured: per_byte(e),
                energy_per_byte_u_j: per_byte(u),
                energy_per_op_j_total: a.pw / ops,
                mean_power_w: avg(a.pw),
                baseline_power_w: avg(a.bw),
                energy_source: src.clone(),
            }
        })
        .collect()
}

/// The energy_source label of measured rows.
pub fn source_label(r: &PowerResult) -> String {
    format!("measured:{} (shunt {} Ω ±{} %)", r.sensor.name, r.shunt_ohm, r.shunt_tol * 100.0)
}

/// `energy.csv` (per group) and `energy_batches.csv` (per batch), and the `run.json` notes.
/// [`super::write_collected`], plus `energy.csv` and `energy_batches.csv` when a power log
/// was joined ([`join`]).
pub fn write_collected_with_power(
    p: &Parsed,
    out: &std::path::Path,
    force: bool,
    allow_truncated: bool,
    src: &super::Source,
    power: Option<(&PowerResult, &[String])>,
) -> Result<crate::results::RunRecord, String> {
    let (mut files, mut notes) = (vec![], vec![]);
    if let Some((pr, log_notes)) = power {
        let (groups, batches, join_notes) = energy_files(p, pr);
        notes.extend(log_notes.iter().cloned());
        notes.extend(join_notes);
        files.push(("energy.csv", groups));
        files.push(("energy_batches.csv", batches));
    }
    super::write_collected_with(p, out, force, allow_truncated, src, files, notes)
}

/// `energy.csv` and `energy_batches.csv` of a join, and the notes on batches not measured.
pub fn energy_files(board: &Parsed, r: &PowerResult) -> (Vec<u8>, Vec<u8>, Vec<String>) {
    let groups = crate::results::to_csv(&by_group(board, r));
    let rows: Vec<BatchRow> = r
        .batches
        .iter()
        .map(|x| {
            let s = &board.samples[x.row];
            BatchRow {
                batch: x.batch,
                window: x.window,
                cipher: s.cipher.clone(),
                implementation: s.implementation.clone(),
                scenario: s.scenario.clone(),
                kiv: s.kiv.clone(),
                size_bits: s.size_bits,
                rep: s.rep,
                operations: x.ops,
                samples: x.samples,
                duration_s: x.duration_s,
                mean_power_w: x.mean_power_w,
                baseline_power_w: x.baseline_w,
                energy_j_measured: x.energy_j,
                u_random_j: x.u_random_j,
                u_systematic_j: x.u_sys_j,
            }
        })
        .collect();
    let batches = crate::results::to_csv(&rows);
    let mut notes = r.notes.clone();
    notes.push(format!(
        "energy.csv: energy is MEASURED ({}; constants from the {}), idle baseline between batches subtracted, trapezoid over the logger's timestamps; uncertainty expanded k = 2 (docs/power.md)",
        source_label(r),
        r.sensor.source
    ));
    if !r.refused.is_empty() {
        notes.push(format!("power: {} batch(es) not measured", r.refused.len()));
        for x in r.refused.iter().take(LIST_MAX) {
            notes.push(format!("power: batch {} refused: {}", x.batch, x.reason));
        }
        if r.refused.len() > LIST_MAX {
            notes.push(format!("power: … and {} more refused batches", r.refused.len() - LIST_MAX));
        }
        if let Some(n) = r.refused.iter().filter_map(|x| x.ops_needed).max() {
            notes.push(format!(
                "power: windows too short for the logger: the next run needs at least {n} operations per batch (or a longer min_sample_ticks)"
            ));
        }
    }
    (groups, batches, notes)
}

#[cfg(test)]
mod tests;
