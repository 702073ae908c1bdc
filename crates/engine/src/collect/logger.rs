//! Measured energy: a power logger's lines (INA219/INA226 beside the board, `docs/power.md`)
//! joined to the board's marker lines (`LWCB M`) by trigger window. Parsing is a pure function
//! of the text ([`parse_logger`]); [`join`] aligns windows to batches, subtracts the idle
//! baseline, integrates and states an uncertainty.
use std::collections::BTreeMap;

use super::{num, pct_decode, split_lines, Issue, Parsed, LIST_MAX};

pub const LOGGER_FORMAT_VERSION: u32 = 1;
const MARKER: &str = "LWCP ";
/// Largest tick_hz a logger header may state (1 GHz).
const MAX_TICK_HZ: f64 = 1e9;
/// Two clocks that disagree by more than this are two different runs, not drift.
const MAX_DRIFT: f64 = 0.05;
/// An alignment of windows to batches fits when every start and duration agrees within this
/// (edge latency on both boards plus a few ticks of either clock).
const ALIGN_TOL_S: f64 = 300e-6;
/// Pairs tried per candidate alignment before the best one is checked on all windows.
const ALIGN_PROBE: usize = 64;
/// Default fewest samples a window needs.
pub const DEFAULT_MIN_SAMPLES: usize = 8;

/// A current/power monitor's fixed facts, transcribed from its datasheet.
#[derive(Debug, PartialEq)]
pub struct Sensor {
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
    pub source: &'static str,
}

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
    pub line: usize,
    pub sensor: &'static Sensor,
    pub shunt_ohm: f64,
    /// Shunt tolerance, relative (1 % = 0.01).
    pub shunt_tol: f64,
    pub tick_hz: f64,
    pub conv_us: u32,
    pub avg: u32,
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
    pub line: usize,
    pub t: u64,
    /// Rising trigger edges the logger had counted, and the trigger level, at the sample.
    pub rises: u64,
    pub high: bool,
    pub volts: f64,
    pub amps: f64,
}

/// One trigger edge: `LWCP T`.
#[derive(Clone, Debug, PartialEq)]
pub struct Edge {
    pub line: usize,
    pub rises: u64,
    pub high: bool,
    pub t: u64,
}

/// Everything read from a logger's lines.
#[derive(Debug, Default)]
pub struct LoggerLog {
    pub header: Option<LoggerHeader>,
    pub samples: Vec<Sample>,
    pub edges: Vec<Edge>,
    pub malformed: Vec<Issue>,
    pub gaps: Vec<(usize, u64)>,
    pub noise_lines: usize,
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

/// Options of the join.
pub struct JoinOptions {
    pub min_samples: usize,
}

/// Energy of one board batch.
#[derive(Clone, Debug)]
pub struct BatchEnergy {
    pub batch: u64,
    /// Index into the board's `samples`.
    pub row: usize,
    pub ops: u64,
    pub window: u64,
    pub samples: usize,
    pub duration_s: f64,
    pub mean_power_w: f64,
    pub baseline_w: f64,
    /// Energy above the baseline, J.
    pub energy_j: f64,
    /// Standard uncertainties, J: random (sample scatter of window and baseline) and
    /// systematic (resolution, shunt and gain, clock).
    pub u_random_j: f64,
    pub u_sys_j: f64,
}

/// A batch the join did not use, and why.
#[derive(Clone, Debug)]
pub struct Refused {
    pub batch: u64,
    pub reason: String,
    /// Operations per batch the next run needs for this group (when too few samples).
    pub ops_needed: Option<u64>,
}

/// The join's outcome.
#[derive(Debug)]
pub struct PowerResult {
    pub batches: Vec<BatchEnergy>,
    pub refused: Vec<Refused>,
    /// Board batch id = logger window + offset.
    pub offset: i128,
    /// Logger seconds per board second.
    pub drift: f64,
    pub sensor: &'static Sensor,
    pub shunt_ohm: f64,
    pub shunt_tol: f64,
    pub sample_period_s: f64,
    pub notes: Vec<String>,
}

#[derive(Default, Clone)]
struct Window {
    rise: Option<f64>,
    fall: Option<f64>,
    inside: Vec<usize>,
    /// Idle samples after this window (before the next rise).
    after: Vec<usize>,
}

/// Least-squares line y = a + d·x; None for fewer than two distinct x.
fn fit(p: &[(f64, f64)]) -> Option<(f64, f64)> {
    let n = p.len() as f64;
    let (mx, my) = (p.iter().map(|q| q.0).sum::<f64>() / n, p.iter().map(|q| q.1).sum::<f64>() / n);
    let sxx: f64 = p.iter().map(|q| (q.0 - mx).powi(2)).sum();
    if p.len() < 2 || sxx <= 0.0 {
        return None;
    }
    let d = p.iter().map(|q| (q.0 - mx) * (q.1 - my)).sum::<f64>() / sxx;
    Some((my - d * mx, d))
}

fn mean_sd(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let m = v.iter().sum::<f64>() / n;
    let sd = if v.len() > 1 { (v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0)).sqrt() } else { 0.0 };
    (m, sd)
}

/// Join a logger's windows to the board's marker lines. `Err` = one line naming the stream
/// and the problem: nothing can be measured.
pub fn join(board: &Parsed, log: &LoggerLog, o: &JoinOptions) -> Result<PowerResult, String> {
    let h = match (&log.header, &log.fatal) {
        (_, Some(f)) => return Err(format!("power log: {f}")),
        (Some(h), None) => h,
        (None, None) => return Err("power log: no valid header line (LWCP H …)".into()),
    };
    let bh = board.header.as_ref().ok_or("board log: no valid header")?;
    if board.markers.is_empty() {
        return Err("board log: no marker lines (LWCB M …): the firmware was built without the power trigger".into());
    }
    if o.min_samples < 2 {
        return Err("--power-min-samples: must be at least 2".into());
    }
    // Windows by index (rises − 1); idle samples before the first rise are index None.
    let mut wins: BTreeMap<u64, Window> = BTreeMap::new();
    let mut before_first: Vec<usize> = Vec::new();
    let ts = |t: u64| t as f64 / h.tick_hz;
    for e in log.edges.iter().filter(|e| e.rises > 0) {
        // (edges and samples before the first rise counted belong to a batch the logger
        // started in the middle of: not used)
        let w = wins.entry(e.rises - 1).or_default();
        if e.high {
            w.rise = Some(ts(e.t));
        } else {
            w.fall = Some(ts(e.t));
        }
    }
    for (i, s) in log.samples.iter().enumerate() {
        match (s.rises, s.high) {
            (0, true) => {}
            (0, false) => before_first.push(i),
            (r, true) => wins.entry(r - 1).or_default().inside.push(i),
            (r, false) => wins.entry(r - 1).or_default().after.push(i),
        }
    }
    let tick_b = |t: u64| t as f64 / bh.tick_hz;
    let markers: BTreeMap<u64, &super::Marker> = board.markers.iter().map(|m| (m.batch, m)).collect();
    // Align: board batch = window + offset. Candidates scored on a probe of pairs, the best
    // checked on every pair with both edges.
    let rises: Vec<(u64, f64)> = wins.iter().filter_map(|(k, w)| w.rise.map(|r| (*k, r))).collect();
    if rises.len() < 3 {
        return Err(format!(
            "power log: {} trigger window(s) with a rising edge; at least 3 are needed to match windows to batches",
            rises.len()
        ));
    }
    let score = |off: i128, probe: bool| -> Option<(f64, f64, f64, usize)> {
        let mut pairs = Vec::new();
        // (a probe looks at the first windows only, so trying every candidate stays linear)
        let look = if probe { 4 * ALIGN_PROBE } else { usize::MAX };
        for &(k, r) in rises.iter().take(look) {
            let b = k as i128 + off;
            if let Some(m) = u64::try_from(b).ok().and_then(|b| markers.get(&b)) {
                pairs.push((tick_b(m.start), r, k, m));
                if probe && pairs.len() >= ALIGN_PROBE {
                    break;
                }
            }
        }
        if pairs.len() < 3 {
            return None;
        }
        let (a, d) = fit(&pairs.iter().map(|p| (p.0, p.1)).collect::<Vec<_>>())?;
        let mut worst = 0f64;
        for (s, r, k, m) in &pairs {
            worst = worst.max((r - (a + d * s)).abs());
            if let Some(f) = wins[k].fall {
                worst = worst.max(((f - r) - d * (tick_b(m.end) - tick_b(m.start))).abs());
            }
        }
        Some((worst, a, d, pairs.len()))
    };
    // Candidates: offsets that give one of the first windows a batch (a window's batch may be
    // lost, so three of them), not every offset between the id ranges (ids are unbounded).
    let mut candidates: Vec<i128> =
        rises.iter().take(3).flat_map(|&(k, _)| markers.keys().map(move |&b| b as i128 - k as i128)).collect();
    candidates.sort_unstable();
    candidates.dedup();
    let mut fits: Vec<(f64, i128)> = Vec::new();
    for off in candidates {
        if let Some((worst, _, _, _)) = score(off, true) {
            fits.push((worst, off));
        }
    }
    fits.sort_by(|x, y| x.0.total_cmp(&y.0));
    let good: Vec<&(f64, i128)> = fits.iter().filter(|f| f.0 <= ALIGN_TOL_S).collect();
    let off = match good.as_slice() {
        [] => {
            return Err(format!(
                "power log: no alignment of its {} trigger windows to the board's {} batches agrees within {} µs{} (another run, a missed edge, or a trigger on the wrong pin)",
                rises.len(),
                markers.len(),
                ALIGN_TOL_S * 1e6,
                fits.first().map(|f| format!(" (best: {:.0} µs off)", f.0 * 1e6)).unwrap_or_default()
            ))
        }
        [one] => one.1,
        [a, b, ..] => {
            return Err(format!(
                "power log: trigger windows fit the board's batches at two offsets ({} and {}): the batches are too alike in length and spacing to tell which window is which",
                a.1, b.1
            ))
        }
    };
    let (worst, a, drift, n_pairs) = score(off, false).expect("the probe fitted");
    if worst > ALIGN_TOL_S {
        return Err(format!(
            "power log: windows drift off the board's batches by {:.0} µs later in the run (tolerance {} µs): a missed or extra trigger edge",
            worst * 1e6,
            ALIGN_TOL_S * 1e6
        ));
    }
    if (drift - 1.0).abs() > MAX_DRIFT {
        return Err(format!(
            "power log: the logger's clock runs {drift:.4} times the board's (more than {} % apart): check tick_hz in both headers",
            MAX_DRIFT * 100.0
        ));
    }
    // Sample period from the logger's own timestamps (median interval).
    let mut dts: Vec<f64> = log.samples.windows(2).map(|p| ts(p[1].t) - ts(p[0].t)).filter(|d| *d > 0.0).collect();
    dts.sort_by(f64::total_cmp);
    let period = dts.get(dts.len() / 2).copied().unwrap_or(h.sample_period_s());
    let rows_by_seq: BTreeMap<u64, usize> = board.sample_seqs.iter().enumerate().map(|(i, s)| (*s, i)).collect();
    let warm_seqs: std::collections::BTreeSet<u64> = board.warmup_seqs.iter().copied().collect();
    let power = |i: usize| log.samples[i].volts * log.samples[i].amps;
    let d_i = h.sensor.shunt_lsb_v / h.shunt_ohm;
    let d_v = h.sensor.bus_lsb_v;
    let mut res = PowerResult {
        batches: vec![],
        refused: vec![],
        offset: off,
        drift,
        sensor: h.sensor,
        shunt_ohm: h.shunt_ohm,
        shunt_tol: h.shunt_tol,
        sample_period_s: period,
        notes: vec![format!(
            "power: logger window k is board batch k{off:+} ({n_pairs} windows matched, worst mismatch {:.0} µs); the logger's clock runs {drift:.6} × the board's",
            worst * 1e6
        )],
    };
    let missing: u64 =
        board.markers.windows(2).map(|w| w[1].batch - w[0].batch - 1).sum::<u64>() + board.markers[0].batch;
    if missing > 0 {
        res.notes.push(format!(
            "power: {missing} marker line(s) missing or malformed in the board log (by batch id): those batches are not measured"
        ));
    }
    for (&bid, m) in &markers {
        if warm_seqs.contains(&m.seq) {
            continue; // warm-up batches are measured and excluded, like their times
        }
        let mut refuse = |reason: String, need: Option<u64>| {
            res.refused.push(Refused { batch: bid, reason, ops_needed: need });
        };
        let Some(&row) = rows_by_seq.get(&m.seq) else {
            refuse(format!("its sample line (seq {}) was not received", m.seq), None);
            continue;
        };
        if board.samples[row].batch != m.ops {
            refuse(format!("marker says {} operations, its sample line {}", m.ops, board.samples[row].batch), None);
            continue;
        }
        let Some((k, w)) = u64::try_from(bid as i128 - off).ok().and_then(|k| wins.get(&k).map(|w| (k, w))) else {
            refuse("no trigger window in the power log (the logger started late or stopped early)".into(), None);
            continue;
        };
        // Window edges in logger seconds: the edge lines, else the board's ticks through the fit.
        let rise = w.rise.unwrap_or(a + drift * tick_b(m.start));
        let fall = w.fall.unwrap_or(a + drift * tick_b(m.end));
        let dur = fall - rise;
        // NaN (a non-finite edge) has no length either.
        if dur.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
            refuse(
                format!("its window has no length (rise {rise:.6} s, fall {fall:.6} s on the logger's clock)"),
                None,
            );
            continue;
        }
        let n = w.inside.len();
        if n < o.min_samples {
            // Samples scale with the batch's length: ops × min / n, or from the period when none.
            let per_op = dur.max(0.0) / m.ops as f64;
            let need = if per_op > 0.0 {
                // (rounding error must not add an operation to an exact quotient)
                ((o.min_samples as f64 + 1.0) * period / per_op * (1.0 - 1e-12)).ceil()
            } else {
                f64::INFINITY
            };
            let need = if need.is_finite() && need < 1e18 { Some((need as u64).max(m.ops + 1)) } else { None };
            refuse(
                format!(
                    "{n} power sample(s) in its {:.3} ms window, {} needed (a sample every {:.3} ms)",
                    dur * 1e3,
                    o.min_samples,
                    period * 1e3
                ),
                need,
            );
            continue;
        }
        // Baseline: idle samples just before the window, else just after.
        let before: &[usize] =
            if k == 0 { &before_first } else { wins.get(&(k - 1)).map(|p| &p.after[..]).unwrap_or(&[]) };
        let idle = if before.len() >= 2 { before } else { &w.after[..] };
        if idle.len() < 2 {
            refuse("fewer than 2 idle samples before or after its window: no baseline".into(), None);
            continue;
        }
        let idle_p: Vec<f64> = idle.iter().map(|&i| power(i)).collect();
        let (base, base_sd) = mean_sd(&idle_p);
        let pts: Vec<(f64, f64)> = w.inside.iter().map(|&i| (ts(log.samples[i].t), power(i) - base)).collect();
        // Trapezoid over the samples; the first and last value held to the window's edges.
        let mut e = pts.windows(2).map(|p| (p[1].0 - p[0].0) * (p[0].1 + p[1].1) / 2.0).sum::<f64>();
        e += pts[0].1 * (pts[0].0 - rise).max(0.0) + pts[n - 1].1 * (fall - pts[n - 1].0).max(0.0);
        let (mean_p, sd_p) = mean_sd(&w.inside.iter().map(|&i| power(i)).collect::<Vec<_>>());
        let (v_bar, i_bar) = (
            w.inside.iter().map(|&i| log.samples[i].volts).sum::<f64>() / n as f64,
            w.inside.iter().map(|&i| log.samples[i].amps.abs()).sum::<f64>() / n as f64,
        );
        let u_random =
            dur * ((sd_p / (n as f64).sqrt()).powi(2) + (base_sd / (idle.len() as f64).sqrt()).powi(2)).sqrt();
        // Quantisation (uniform over one LSB: LSB/√12) of window and baseline, not reduced by averaging.
        let u_res = dur * 2f64.sqrt() * ((v_bar * d_i).powi(2) + (i_bar * d_v).powi(2)).sqrt() / 12f64.sqrt();
        // Shunt tolerance, the sensor's gain error and the clocks' disagreement: rectangular (÷√3).
        let rel = (h.shunt_tol.powi(2) + h.sensor.gain_error.powi(2) + (drift - 1.0).powi(2)).sqrt() / 3f64.sqrt();
        let u_sys = (u_res.powi(2) + (rel * e).powi(2)).sqrt();
        res.batches.push(BatchEnergy {
            batch: bid,
            row,
            ops: m.ops,
            window: k,
            samples: n,
            duration_s: dur,
            mean_power_w: mean_p,
            baseline_w: base,
            energy_j: e,
            u_random_j: u_random,
            u_sys_j: u_sys,
        });
    }
    if res.batches.is_empty() {
        let need = res.refused.iter().filter_map(|r| r.ops_needed).max();
        let first = res.refused.first().map(|r| format!("batch {}: {}", r.batch, r.reason)).unwrap_or_default();
        return Err(format!(
            "power log: no batch could be measured ({} refused; first: {first}){}",
            res.refused.len(),
            need.map(|n| format!("; the next run needs at least {n} operations per batch")).unwrap_or_default()
        ));
    }
    Ok(res)
}

/// A row of `energy.csv`: the energy of one group (cipher × implementation × scenario × kiv ×
/// size × payload), over its measured batches.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize, PartialEq)]
pub struct EnergyRow {
    pub cipher: String,
    pub implementation: String,
    pub language: String,
    pub scenario: String,
    pub kiv: String,
    pub size_bits: u64,
    pub payload: String,
    pub batches: usize,
    pub operations: u64,
    pub samples_min: usize,
    pub energy_per_op_j_measured: f64,
    /// Expanded uncertainty (k = 2) of the energy per operation.
    pub energy_per_op_u_j: f64,
    pub energy_per_byte_j_measured: Option<f64>,
    pub energy_per_byte_u_j: Option<f64>,
    /// Mean power × window length / operations: the board's whole draw, baseline included.
    pub energy_per_op_j_total: f64,
    pub mean_power_w: f64,
    pub baseline_power_w: f64,
    pub energy_source: String,
}

/// A row of `energy_batches.csv`.
#[derive(Clone, Debug, serde::Serialize)]
pub struct BatchRow {
    pub batch: u64,
    pub window: u64,
    pub cipher: String,
    pub implementation: String,
    pub scenario: String,
    pub kiv: String,
    pub size_bits: u64,
    pub rep: u32,
    pub operations: u64,
    pub samples: usize,
    pub duration_s: f64,
    pub mean_power_w: f64,
    pub baseline_power_w: f64,
    pub energy_j_measured: f64,
    pub u_random_j: f64,
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
