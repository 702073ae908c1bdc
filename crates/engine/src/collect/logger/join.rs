//! The join of a power log to a board log, in three steps: the logger's trigger windows
//! ([`windows`]), their alignment to the board's batches ([`align`]), and the energy of each
//! batch ([`batch_energy`]): idle baseline subtracted, integrated, with its uncertainty.
use std::collections::{BTreeMap, BTreeSet};

use super::super::{Marker, Parsed};
use super::{LoggerHeader, LoggerLog, Sensor};

/// Two clocks that disagree by more than this are two different runs, not drift.
const MAX_DRIFT: f64 = 0.05;
/// An alignment of windows to batches fits when every start and duration agrees within this
/// (edge latency on both boards plus a few ticks of either clock).
const ALIGN_TOL_S: f64 = 300e-6;
/// Pairs tried per candidate alignment before the best one is checked on all windows.
const ALIGN_PROBE: usize = 64;

/// Options of the join.
pub struct JoinOptions {
    /// Fewest power samples a window needs to be measured.
    pub min_samples: usize,
}

/// Energy of one board batch.
#[derive(Clone, Debug)]
pub struct BatchEnergy {
    /// The board's batch id.
    pub batch: u64,
    /// Index into the board's `samples`.
    pub row: usize,
    /// Operations in the batch.
    pub ops: u64,
    /// The logger's trigger window the batch matched.
    pub window: u64,
    /// Power samples inside the window.
    pub samples: usize,
    /// Window length, s.
    pub duration_s: f64,
    /// Mean power inside the window, W.
    pub mean_power_w: f64,
    /// Idle power subtracted, W.
    pub baseline_w: f64,
    /// Energy above the baseline, J.
    pub energy_j: f64,
    /// Standard uncertainties, J: random (sample scatter of window and baseline) and
    /// systematic (resolution, shunt and gain, clock).
    pub u_random_j: f64,
    /// Systematic standard uncertainty, J.
    pub u_sys_j: f64,
}

/// A batch the join did not use, and why.
#[derive(Clone, Debug)]
pub struct Refused {
    /// The board's batch id.
    pub batch: u64,
    /// Why it was not measured.
    pub reason: String,
    /// Operations per batch the next run needs for this group (when too few samples).
    pub ops_needed: Option<u64>,
}

/// The join's outcome.
#[derive(Debug)]
pub struct PowerResult {
    /// The measured batches.
    pub batches: Vec<BatchEnergy>,
    /// The batches not measured.
    pub refused: Vec<Refused>,
    /// Board batch id = logger window + offset.
    pub offset: i128,
    /// Logger seconds per board second.
    pub drift: f64,
    /// The logger's sensor.
    pub sensor: &'static Sensor,
    /// Shunt resistance, Ω.
    pub shunt_ohm: f64,
    /// Shunt tolerance, relative.
    pub shunt_tol: f64,
    /// Seconds between two power samples (median of the logger's timestamps).
    pub sample_period_s: f64,
    /// Lines for run.json's notes.
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

/// Trigger windows by index (rises − 1), and the idle samples before the first rise.
fn windows(log: &LoggerLog, tick_hz: f64) -> (BTreeMap<u64, Window>, Vec<usize>) {
    let mut wins: BTreeMap<u64, Window> = BTreeMap::new();
    let mut before_first: Vec<usize> = Vec::new();
    for e in log.edges.iter().filter(|e| e.rises > 0) {
        // (edges and samples before the first rise counted belong to a batch the logger
        // started in the middle of: not used)
        let w = wins.entry(e.rises - 1).or_default();
        if e.high {
            w.rise = Some(e.t as f64 / tick_hz);
        } else {
            w.fall = Some(e.t as f64 / tick_hz);
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
    (wins, before_first)
}

/// Board batch = logger window + `offset`; logger seconds = `a` + `drift` × board seconds.
struct Alignment {
    offset: i128,
    a: f64,
    drift: f64,
    worst: f64,
    pairs: usize,
}

/// How well `off` aligns windows to batches: the worst mismatch, the fitted line and the number
/// of pairs; `probe` looks at the first windows only, so trying every candidate stays linear.
fn score(
    off: i128,
    probe: bool,
    rises: &[(u64, f64)],
    wins: &BTreeMap<u64, Window>,
    markers: &BTreeMap<u64, &Marker>,
    board_hz: f64,
) -> Option<(f64, f64, f64, usize)> {
    let tick_b = |t: u64| t as f64 / board_hz;
    let mut pairs = Vec::new();
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
        if let Some(f) = wins.get(k).and_then(|w| w.fall) {
            worst = worst.max(((f - r) - d * (tick_b(m.end) - tick_b(m.start))).abs());
        }
    }
    Some((worst, a, d, pairs.len()))
}

/// The one offset at which the windows' rises and lengths fit the batches' starts and lengths.
/// Candidates scored on a probe of pairs, the best checked on every pair with both edges.
fn align(wins: &BTreeMap<u64, Window>, markers: &BTreeMap<u64, &Marker>, board_hz: f64) -> Result<Alignment, String> {
    let rises: Vec<(u64, f64)> = wins.iter().filter_map(|(k, w)| w.rise.map(|r| (*k, r))).collect();
    if rises.len() < 3 {
        return Err(format!(
            "power log: {} trigger window(s) with a rising edge; at least 3 are needed to match windows to batches",
            rises.len()
        ));
    }
    // Candidates: offsets that give one of the first windows a batch (a window's batch may be
    // lost, so three of them), not every offset between the id ranges (ids are unbounded).
    let mut candidates: Vec<i128> =
        rises.iter().take(3).flat_map(|&(k, _)| markers.keys().map(move |&b| b as i128 - k as i128)).collect();
    candidates.sort_unstable();
    candidates.dedup();
    let mut fits: Vec<(f64, i128)> = Vec::new();
    for off in candidates {
        if let Some((worst, _, _, _)) = score(off, true, &rises, wins, markers, board_hz) {
            fits.push((worst, off));
        }
    }
    fits.sort_by(|x, y| x.0.total_cmp(&y.0));
    let good: Vec<&(f64, i128)> = fits.iter().filter(|f| f.0 <= ALIGN_TOL_S).collect();
    let offset = match good.as_slice() {
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
    // The full check scores a superset of the probe's pairs, so it fits whenever the probe did.
    let (worst, a, drift, pairs) = score(offset, false, &rises, wins, markers, board_hz)
        .ok_or_else(|| format!("power log: the alignment at offset {offset} has fewer than 3 pairs"))?;
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
    Ok(Alignment { offset, a, drift, worst, pairs })
}

/// What the energy of one batch is computed from.
struct Joined<'a> {
    log: &'a LoggerLog,
    h: &'a LoggerHeader,
    wins: BTreeMap<u64, Window>,
    before_first: Vec<usize>,
    al: Alignment,
    board_hz: f64,
    period: f64,
    min_samples: usize,
}

impl Joined<'_> {
    fn power(&self, i: usize) -> f64 {
        self.log.samples[i].volts * self.log.samples[i].amps
    }
}

/// The energy of batch `bid` (marker `m`, sample line `row`), or why it cannot be measured and
/// the operations per batch the next run needs.
fn batch_energy(j: &Joined, bid: u64, m: &Marker, row: usize) -> Result<BatchEnergy, (String, Option<u64>)> {
    let (h, al) = (j.h, &j.al);
    let tick_b = |t: u64| t as f64 / j.board_hz;
    let Some((k, w)) = u64::try_from(bid as i128 - al.offset).ok().and_then(|k| j.wins.get(&k).map(|w| (k, w))) else {
        return Err(("no trigger window in the power log (the logger started late or stopped early)".into(), None));
    };
    // Window edges in logger seconds: the edge lines, else the board's ticks through the fit.
    let rise = w.rise.unwrap_or(al.a + al.drift * tick_b(m.start));
    let fall = w.fall.unwrap_or(al.a + al.drift * tick_b(m.end));
    let dur = fall - rise;
    // NaN (a non-finite edge) has no length either.
    if dur.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
        let reason = format!("its window has no length (rise {rise:.6} s, fall {fall:.6} s on the logger's clock)");
        return Err((reason, None));
    }
    let n = w.inside.len();
    if n < j.min_samples {
        // Samples scale with the batch's length: ops × min / n, or from the period when none.
        let per_op = dur.max(0.0) / m.ops as f64;
        let need = if per_op > 0.0 {
            // (rounding error must not add an operation to an exact quotient)
            ((j.min_samples as f64 + 1.0) * j.period / per_op * (1.0 - 1e-12)).ceil()
        } else {
            f64::INFINITY
        };
        let need = if need.is_finite() && need < 1e18 { Some((need as u64).max(m.ops + 1)) } else { None };
        let reason = format!(
            "{n} power sample(s) in its {:.3} ms window, {} needed (a sample every {:.3} ms)",
            dur * 1e3,
            j.min_samples,
            j.period * 1e3
        );
        return Err((reason, need));
    }
    // Baseline: idle samples just before the window, else just after.
    let before: &[usize] =
        if k == 0 { &j.before_first } else { j.wins.get(&(k - 1)).map(|p| &p.after[..]).unwrap_or(&[]) };
    let idle = if before.len() >= 2 { before } else { &w.after[..] };
    if idle.len() < 2 {
        return Err(("fewer than 2 idle samples before or after its window: no baseline".into(), None));
    }
    let ts = |t: u64| t as f64 / h.tick_hz;
    let idle_p: Vec<f64> = idle.iter().map(|&i| j.power(i)).collect();
    let (base, base_sd) = mean_sd(&idle_p);
    let pts: Vec<(f64, f64)> = w.inside.iter().map(|&i| (ts(j.log.samples[i].t), j.power(i) - base)).collect();
    // Trapezoid over the samples; the first and last value held to the window's edges.
    let mut e = pts.windows(2).map(|p| (p[1].0 - p[0].0) * (p[0].1 + p[1].1) / 2.0).sum::<f64>();
    e += pts[0].1 * (pts[0].0 - rise).max(0.0) + pts[n - 1].1 * (fall - pts[n - 1].0).max(0.0);
    let (mean_p, sd_p) = mean_sd(&w.inside.iter().map(|&i| j.power(i)).collect::<Vec<_>>());
    let (v_bar, i_bar) = (
        w.inside.iter().map(|&i| j.log.samples[i].volts).sum::<f64>() / n as f64,
        w.inside.iter().map(|&i| j.log.samples[i].amps.abs()).sum::<f64>() / n as f64,
    );
    let u_random = dur * ((sd_p / (n as f64).sqrt()).powi(2) + (base_sd / (idle.len() as f64).sqrt()).powi(2)).sqrt();
    let (d_i, d_v) = (h.sensor.shunt_lsb_v / h.shunt_ohm, h.sensor.bus_lsb_v);
    // Quantisation (uniform over one LSB: LSB/√12) of window and baseline, not reduced by averaging.
    let u_res = dur * 2f64.sqrt() * ((v_bar * d_i).powi(2) + (i_bar * d_v).powi(2)).sqrt() / 12f64.sqrt();
    // Shunt tolerance, the sensor's gain error and the clocks' disagreement: rectangular (÷√3).
    let rel = (h.shunt_tol.powi(2) + h.sensor.gain_error.powi(2) + (al.drift - 1.0).powi(2)).sqrt() / 3f64.sqrt();
    let u_sys = (u_res.powi(2) + (rel * e).powi(2)).sqrt();
    Ok(BatchEnergy {
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
    })
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
    let Some(first_marker) = board.markers.first() else {
        return Err("board log: no marker lines (LWCB M …): the firmware was built without the power trigger".into());
    };
    if o.min_samples < 2 {
        return Err("--power-min-samples: must be at least 2".into());
    }
    let (wins, before_first) = windows(log, h.tick_hz);
    let markers: BTreeMap<u64, &Marker> = board.markers.iter().map(|m| (m.batch, m)).collect();
    let al = align(&wins, &markers, bh.tick_hz)?;
    // Sample period from the logger's own timestamps (median interval).
    let ts = |t: u64| t as f64 / h.tick_hz;
    let mut dts: Vec<f64> = log.samples.windows(2).map(|p| ts(p[1].t) - ts(p[0].t)).filter(|d| *d > 0.0).collect();
    dts.sort_by(f64::total_cmp);
    let period = dts.get(dts.len() / 2).copied().unwrap_or(h.sample_period_s());
    let rows_by_seq: BTreeMap<u64, usize> = board.sample_seqs.iter().enumerate().map(|(i, s)| (*s, i)).collect();
    let warm_seqs: BTreeSet<u64> = board.warmup_seqs.iter().copied().collect();
    let (off, drift) = (al.offset, al.drift);
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
            "power: logger window k is board batch k{off:+} ({} windows matched, worst mismatch {:.0} µs); the logger's clock runs {drift:.6} × the board's",
            al.pairs,
            al.worst * 1e6
        )],
    };
    let missing: u64 = board.markers.windows(2).map(|w| w[1].batch - w[0].batch - 1).sum::<u64>() + first_marker.batch;
    if missing > 0 {
        res.notes.push(format!(
            "power: {missing} marker line(s) missing or malformed in the board log (by batch id): those batches are not measured"
        ));
    }
    let joined = Joined { log, h, wins, before_first, al, board_hz: bh.tick_hz, period, min_samples: o.min_samples };
    for (&bid, m) in &markers {
        if warm_seqs.contains(&m.seq) {
            continue; // warm-up batches are measured and excluded, like their times
        }
        let measured = match rows_by_seq.get(&m.seq) {
            None => Err((format!("its sample line (seq {}) was not received", m.seq), None)),
            Some(&row) if board.samples[row].batch != m.ops => {
                Err((format!("marker says {} operations, its sample line {}", m.ops, board.samples[row].batch), None))
            }
            Some(&row) => batch_energy(&joined, bid, m, row),
        };
        match measured {
            Ok(b) => res.batches.push(b),
            Err((reason, ops_needed)) => res.refused.push(Refused { batch: bid, reason, ops_needed }),
        }
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
