//! Timing one batch of operations, and calibrating the batch (docs/measurement.md).
use super::ops::Op;
use crate::clock::Stamp;
use lwcbench_core::CipherError;

/// One sample: time (and TSC ticks) per operation.
#[derive(Clone, Copy, Debug)]
pub struct Sample {
    /// Nanoseconds per operation.
    pub ns: f64,
    /// TSC ticks per operation, when read.
    pub cycles: Option<f64>,
    /// Operations timed in this sample: the group's batch, or more when the batch finished
    /// before the minimum sample time and was extended (the floor, see [`time_batch_floor`]).
    pub ops: u64,
}

pub(super) fn time_batch(op: &mut dyn Op, batch: u64) -> Result<Sample, CipherError> {
    time_batch_floor(op, batch, 0.0)
}

/// Time `batch` operations; if they took less than `min_ns` in total (the machine got faster
/// than during calibration, or calibration was misled), keep running chunks of operations
/// inside the same timed region until it lasts ≥ `min_ns`. So every sample is at least the
/// minimum sample time and the clock overhead stays ≤ overhead / min_ns per sample.
pub(super) fn time_batch_floor(op: &mut dyn Op, batch: u64, min_ns: f64) -> Result<Sample, CipherError> {
    let s = Stamp::now();
    for _ in 0..batch {
        op.run()?;
    }
    let mut ops = batch;
    let (mut ns, mut cy) = s.elapsed();
    while ns < min_ns && ops < MAX_BATCH {
        // the per-op rate seen so far says how many more are needed (+12 % headroom)
        let more = (((min_ns - ns) / (ns / ops as f64).max(0.1)) * 1.12).ceil().max(1.0) as u64;
        for _ in 0..more.min(MAX_BATCH - ops) {
            op.run()?;
        }
        ops += more.min(MAX_BATCH - ops);
        (ns, cy) = s.elapsed();
    }
    Ok(Sample { ns: ns / ops as f64, cycles: crate::clock::HAS_CYCLE_COUNTER.then(|| cy as f64 / ops as f64), ops })
}

/// Largest batch (operations per sample).
const MAX_BATCH: u64 = 1 << 26;
/// Untimed warm-up before calibration: at least this many operations …
const WARM_OPS: u64 = 8;
/// … and at least this many minimum sample times of wall time.
const WARM_SAMPLE_TIMES: f64 = 2.0;
/// Timed calibration trials; the batch comes from their median time per operation.
const CAL_TRIALS: usize = 5;

pub(super) fn median_ns(v: &[Sample]) -> f64 {
    let mut x: Vec<f64> = v.iter().map(|s| s.ns).collect();
    x.sort_by(|a, b| a.partial_cmp(b).expect("finite"));
    lwcbench_stats::quantile_sorted(&x, 0.5)
}

/// Batch size for `per_op_ns`: enough operations for one sample to last `min_ns`.
pub(super) fn batch_for(min_ns: f64, per_op_ns: f64) -> u64 {
    ((min_ns / per_op_ns.max(0.1)).ceil() as u64).clamp(1, MAX_BATCH)
}

/// Calibration (docs/measurement.md): untimed warm-up operations first (one-time costs such
/// as CPU feature detection, page faults and cold caches are paid here, not in a timed
/// trial); then a doubling search for a batch that lasts ≥ ¼ of the minimum sample time;
/// then `CAL_TRIALS` timed trials at that batch whose **median** time per operation sets the
/// batch, so one preempted or slow trial cannot shrink it.
pub(super) fn calibrate(op: &mut dyn Op, key: &[u8], iv: &[u8], min_ns: f64) -> Result<u64, CipherError> {
    let t = std::time::Instant::now();
    let mut n = 0u64;
    while n < WARM_OPS || (t.elapsed().as_nanos() as f64) < WARM_SAMPLE_TIMES * min_ns {
        op.run()?;
        n += 1;
        if n >= MAX_BATCH {
            break;
        }
    }
    op.prepare(key, iv)?;
    let mut batch = 1u64;
    loop {
        let s = time_batch(op, batch)?;
        if s.ns * batch as f64 >= min_ns / 4.0 || batch >= MAX_BATCH {
            break;
        }
        batch *= 2;
        op.prepare(key, iv)?;
    }
    let mut trials = Vec::with_capacity(CAL_TRIALS);
    for _ in 0..CAL_TRIALS {
        op.prepare(key, iv)?;
        trials.push(time_batch(op, batch)?);
    }
    op.prepare(key, iv)?;
    Ok(batch_for(min_ns, median_ns(&trials)))
}
