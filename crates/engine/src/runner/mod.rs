//! The measurement loop — the only one in the code base — and what it hands back. Every
//! scenario is an [`ops`] operation: an untimed `prepare` (fresh key/IV, buffers restored) and
//! a timed `run`. A sample is one timed batch of `batch` consecutive `run`s; its value is
//! elapsed time / batch. [`timing`] times batches and calibrates them. This module measures
//! in this process only; `crate::measurer` routes each group to it or to an engine process.
use std::hint::black_box;

use lwcbench_core::CipherError;
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;

use crate::plan::{Group, Scenario};

mod ops;
mod timing;

pub(crate) use ops::fnv1a;
use ops::{build_op, Op};
pub use ops::{planted_slowdown, TWIN_MARK};
pub use timing::Sample;
use timing::{batch_for, calibrate, median_ns, time_batch_floor};

/// Measurement settings.
#[derive(Clone, Debug)]
pub struct Config {
    /// Measured samples per group.
    pub reps: usize,
    /// Samples measured first and excluded from statistics (kept in warmup.csv).
    pub warmup: usize,
    /// Seed of all random keys, IVs and payloads.
    pub seed: u64,
    /// A sample is batched until it lasts at least this long (ns).
    pub min_sample_ns: f64,
    /// Static key/IV used by the `s` variants; None = the documented default pattern.
    pub static_key: Option<Vec<u8>>,
    /// Static IV of the `s` IV variants; None = the default pattern.
    pub static_iv: Option<Vec<u8>>,
    /// Interleaved rounds the run's samples are spread over ([`measure_rounds`]).
    pub rounds: usize,
}

/// Default number of interleaved rounds (and of parts of the between-round spread).
pub const ROUNDS: usize = 5;

impl Default for Config {
    fn default() -> Self {
        Config {
            reps: 100,
            warmup: 10,
            seed: 1,
            min_sample_ns: 20_000.0,
            static_key: None,
            static_iv: None,
            rounds: ROUNDS,
        }
    }
}

/// All samples of one group.
#[derive(Clone)]
pub struct GroupResult {
    /// The group measured.
    pub group: Group,
    /// Operations per sample (calibrated).
    pub batch: u64,
    /// Measured samples.
    pub samples: Vec<Sample>,
    /// Warm-up samples (excluded from statistics).
    pub warmup: Vec<Sample>,
}

/// Default static key/IV: bytes 0x00, 0x01, 0x02, … (documented in docs/measurement.md).
pub fn default_static(len: usize) -> Vec<u8> {
    (0..len).map(|i| i as u8).collect()
}

/// Error while measuring a group: the cipher rejected its input.
#[derive(Debug)]
pub struct RunError {
    /// The group's label.
    pub group: String,
    /// The cipher's error.
    pub error: CipherError,
    /// A failed check that is not a cipher error (the frame round trip); shown instead of `error`.
    pub detail: Option<String>,
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.detail {
            Some(d) => write!(f, "{}: {d}", self.group),
            None => write!(f, "{}: {}", self.group, self.error),
        }
    }
}
impl std::error::Error for RunError {}

/// Measure one group: calibrate the batch, then `warmup` + `reps` samples, each with its
/// own key/IV draw (for the random variants) prepared outside the timed region.
pub fn measure_group(g: &Group, cfg: &Config, mut on_sample: impl FnMut()) -> Result<GroupResult, RunError> {
    let mut run = GroupRun::start(g, cfg)?;
    while run.remaining() > 0 {
        run.step()?;
        on_sample();
    }
    Ok(run.finish())
}

/// Measure groups that differ only in their payload (e.g. dataset vs random) sample by
/// sample in turn, so slow drift of the machine (frequency, co-tenants) hits all of them
/// alike instead of whichever group happened to run during it.
pub fn measure_interleaved(
    groups: &[&Group],
    cfg: &Config,
    mut on_sample: impl FnMut(&Group),
) -> Result<Vec<GroupResult>, RunError> {
    let mut runs = groups.iter().map(|g| GroupRun::start(g, cfg)).collect::<Result<Vec<_>, _>>()?;
    while runs.iter().any(|r| r.remaining() > 0) {
        for r in runs.iter_mut().filter(|r| r.remaining() > 0) {
            r.step()?;
            on_sample(r.g);
        }
    }
    Ok(runs.into_iter().map(GroupRun::finish).collect())
}

/// Measure clusters of groups in `rounds` interleaved rounds spread over the whole run: all
/// groups are calibrated first; then in each round every group takes its share of samples
/// (warm-up first), cluster after cluster (the order reversed every other round), and within
/// a cluster sample by sample in turn as in [`measure_interleaved`]. Slow drift of a shared
/// machine then hits every group alike instead of whichever ran during it, and the samples
/// of round r are the r-th consecutive part of a group's samples (the between-round spread of
/// `summary.csv` compares those parts).
pub fn measure_rounds(
    clusters: &[Vec<&Group>],
    cfg: &Config,
    rounds: usize,
    mut on_sample: impl FnMut(&Group),
) -> Result<Vec<Vec<GroupResult>>, RunError> {
    let rounds = rounds.clamp(1, cfg.reps.max(1));
    let mut runs: Vec<Vec<GroupRun>> = clusters
        .iter()
        .map(|c| c.iter().map(|g| GroupRun::start(g, cfg)).collect::<Result<Vec<_>, _>>())
        .collect::<Result<_, _>>()?;
    for r in 0..rounds {
        // samples taken (warm-up included) by the end of round r
        let target = cfg.warmup + cfg.reps * (r + 1) / rounds;
        let order: Vec<usize> = if r % 2 == 0 { (0..runs.len()).collect() } else { (0..runs.len()).rev().collect() };
        for ci in order {
            let c = &mut runs[ci];
            while c.iter().any(|g| g.taken() < target) {
                for g in c.iter_mut().filter(|g| g.taken() < target) {
                    g.step()?;
                    on_sample(g.g);
                }
            }
        }
    }
    Ok(runs.into_iter().map(|c| c.into_iter().map(GroupRun::finish).collect()).collect())
}

/// Deterministic counting (docs/measurement.md, `--counter instructions`): build the group's
/// operation with the per-group RNG of `cfg.seed`, prepare it (drawing the random key/IV
/// parts once), check it, run `warm` untimed operations (one-time costs), then call `on`,
/// run `ops` operations and call `off`. Under callgrind, `on`/`off` toggle collection, so the
/// count covers exactly the `ops` operations.
pub fn count_ops(
    g: &Group,
    cfg: &Config,
    warm: u64,
    ops: u64,
    on: impl FnOnce(),
    off: impl FnOnce(),
) -> Result<(), RunError> {
    let mut run = GroupRun::start_uncalibrated(g, cfg)?;
    let err = |e| RunError { group: g.label(), error: e, detail: None };
    if g.kiv.random_key {
        run.rng.fill_bytes(&mut run.key);
    }
    if g.kiv.random_iv {
        run.rng.fill_bytes(&mut run.iv);
        if let Some(rule) = g.entry.iv_rule {
            rule(&mut run.iv);
        }
    }
    run.op.prepare(&run.key, &run.iv).map_err(err)?;
    for _ in 0..warm {
        run.op.run().map_err(err)?;
    }
    on();
    for _ in 0..ops {
        run.op.run().map_err(err)?;
    }
    off();
    black_box(&mut run.op);
    Ok(())
}

/// One group in progress: validated and calibrated by [`GroupRun::start`], one sample per
/// [`GroupRun::step`].
pub struct GroupRun<'g> {
    g: &'g Group,
    warmup_n: usize,
    total: usize,
    rng: ChaCha20Rng,
    op: Box<dyn Op>,
    key: Vec<u8>,
    iv: Vec<u8>,
    batch: u64,
    /// Every sample lasts at least this long (0 = no floor: the roundtrip scenario).
    floor_ns: f64,
    samples: Vec<Sample>,
    warmup: Vec<Sample>,
}

impl<'g> GroupRun<'g> {
    /// Prepare the group (cipher, keys, payload) and calibrate its batch.
    pub fn start(g: &'g Group, cfg: &Config) -> Result<Self, RunError> {
        let mut run = Self::start_uncalibrated(g, cfg)?;
        let err = |e| RunError { group: g.label(), error: e, detail: None };
        if g.scenario != Scenario::Roundtrip {
            run.batch = calibrate(run.op.as_mut(), &run.key, &run.iv, cfg.min_sample_ns).map_err(err)?;
        }
        Ok(run)
    }

    /// Validated, op built, prepared and checked; batch 1.
    fn start_uncalibrated(g: &'g Group, cfg: &Config) -> Result<Self, RunError> {
        let err = |e| RunError { group: g.label(), error: e, detail: None };
        let mut rng = ChaCha20Rng::seed_from_u64(cfg.seed ^ fnv1a(&g.label()));
        let info = g.entry.info;
        let key = cfg.static_key.clone().unwrap_or_else(|| default_static(info.key_bytes()));
        let iv = cfg.static_iv.clone().unwrap_or_else(|| default_static(info.iv_bytes()));
        if key.len() != info.key_bytes() {
            return Err(err(CipherError::KeyLength { expected: info.key_bytes(), got: key.len() }));
        }
        if iv.len() != info.iv_bytes() {
            return Err(err(CipherError::IvLength { expected: info.iv_bytes(), got: iv.len() }));
        }
        // The in-process measurer is only handed groups it can construct (crate::measurer);
        // anything else is refused here with a message, never a panic.
        let Some(make) = g.entry.make else {
            return Err(RunError {
                group: g.label(),
                error: CipherError::NotInitialized,
                detail: Some(format!("{} has no in-process implementation (an engine's cipher)", g.entry.id())),
            });
        };
        let mut op = build_op(g, make, &mut rng);

        op.prepare(&key, &iv).map_err(err)?;
        op.verify(&key).map_err(|d| RunError {
            group: g.label(),
            error: CipherError::AuthenticationFailed,
            detail: Some(d),
        })?;
        // Roundtrip: worst case per message is the point, every message is its own sample
        // (batch 1, no floor); everything else is calibrated by `start`.
        let roundtrip = g.scenario == Scenario::Roundtrip;
        let batch = 1;
        Ok(GroupRun {
            g,
            warmup_n: cfg.warmup,
            total: cfg.warmup + cfg.reps,
            rng,
            op,
            key,
            iv,
            batch,
            floor_ns: if roundtrip { 0.0 } else { cfg.min_sample_ns },
            samples: Vec::with_capacity(cfg.reps),
            warmup: Vec::with_capacity(cfg.warmup),
        })
    }

    /// The calibrated batch (operations per sample before any floor extension).
    pub fn batch(&self) -> u64 {
        self.batch
    }

    /// Samples taken so far (warm-up included).
    pub fn taken(&self) -> usize {
        self.samples.len() + self.warmup.len()
    }

    /// Samples still to take (warm-up included).
    pub fn remaining(&self) -> usize {
        self.total - self.samples.len() - self.warmup.len()
    }

    /// Take the next sample: draw the random key/IV parts, prepare, time one batch.
    pub fn step(&mut self) -> Result<(), RunError> {
        let g = self.g;
        let err = |e| RunError { group: g.label(), error: e, detail: None };
        if g.kiv.random_key {
            self.rng.fill_bytes(&mut self.key);
        }
        if g.kiv.random_iv {
            self.rng.fill_bytes(&mut self.iv);
            if let Some(rule) = g.entry.iv_rule {
                rule(&mut self.iv);
            }
        }
        self.op.prepare(&self.key, &self.iv).map_err(err)?;
        let s = time_batch_floor(self.op.as_mut(), self.batch, self.floor_ns).map_err(err)?;
        if self.warmup.len() < self.warmup_n {
            self.warmup.push(s);
            if self.warmup.len() == self.warmup_n && self.floor_ns > 0.0 {
                // Re-check after the warm-up samples: if they show the operation is faster
                // than calibration measured, raise the batch so measured samples need no
                // extension (the warm-up samples are excluded, so this changes no statistic).
                let b = batch_for(self.floor_ns, median_ns(&self.warmup));
                self.batch = self.batch.max(b);
            }
        } else {
            self.samples.push(s);
        }
        Ok(())
    }

    /// The group's samples.
    pub fn finish(self) -> GroupResult {
        GroupResult { group: self.g.clone(), batch: self.batch, samples: self.samples, warmup: self.warmup }
    }
}

#[cfg(test)]
mod frame_tests;
#[cfg(test)]
mod mode_tests;
#[cfg(test)]
mod tests;
