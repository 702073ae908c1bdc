//! Clocks. Time comes from the monotonic clock (`Instant`, nanoseconds). Cycles come from the
//! CPU's time-stamp counter where there is one (x86-64 `rdtsc`). On modern x86 the TSC ticks
//! at a fixed rate whatever the core frequency ("constant_tsc"), so "cycles" here are TSC
//! ticks — reference cycles, not core cycles. This VM has no hardware performance counters,
//! so true core cycles are not available; for deterministic counts use callgrind/emulation.
use std::hint::black_box;
use std::time::{Duration, Instant};

/// A point in time on both clocks.
#[derive(Clone, Copy)]
pub struct Stamp {
    t: Instant,
    tsc: u64,
}

/// Read the cycle counter; 0 where there is none.
#[inline(always)]
pub fn cycles() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: `lfence`/`rdtsc` are available on every x86-64 CPU. The fence keeps earlier
        // instructions from drifting past the read.
        unsafe {
            core::arch::x86_64::_mm_lfence();
            core::arch::x86_64::_rdtsc()
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        0
    }
}

/// Whether `cycles()` returns a real counter on this build.
pub const HAS_CYCLE_COUNTER: bool = cfg!(target_arch = "x86_64");

impl Stamp {
    #[inline(always)]
    pub fn now() -> Self {
        let t = Instant::now();
        let tsc = cycles();
        Stamp { t, tsc }
    }
    /// (nanoseconds, cycles) since `self`.
    #[inline(always)]
    pub fn elapsed(&self) -> (f64, u64) {
        let tsc = cycles();
        let t = Instant::now();
        ((t - self.t).as_nanos() as f64, tsc.wrapping_sub(self.tsc))
    }
}

/// Facts about the clocks, measured once per run and recorded in `run.json`.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct ClockInfo {
    pub time_source: String,
    pub cycle_source: String,
    /// Median cost of one start+stop pair of both clocks, ns.
    pub overhead_ns: f64,
    /// Smallest non-zero difference seen between two `Instant` reads, ns.
    pub resolution_ns: f64,
    /// Measured TSC ticks per nanosecond (GHz); null without a cycle counter.
    pub cycles_per_ns: Option<f64>,
}

impl ClockInfo {
    pub fn measure() -> Self {
        let mut pairs: Vec<f64> = (0..2001)
            .map(|_| {
                let s = Stamp::now();
                black_box(s.elapsed()).0
            })
            .collect();
        pairs.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let mut res = f64::INFINITY;
        for _ in 0..1000 {
            let a = Instant::now();
            let mut b = Instant::now();
            while b == a {
                b = Instant::now();
            }
            res = res.min((b - a).as_nanos() as f64);
        }
        let cycles_per_ns = HAS_CYCLE_COUNTER.then(|| {
            let s = Stamp::now();
            std::thread::sleep(Duration::from_millis(30));
            let (ns, cy) = s.elapsed();
            cy as f64 / ns
        });
        let clocksource = std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource")
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|_| "unknown".into());
        ClockInfo {
            time_source: format!("std::time::Instant (CLOCK_MONOTONIC; kernel clocksource {clocksource})"),
            cycle_source: if HAS_CYCLE_COUNTER {
                "x86-64 TSC via lfence+rdtsc: fixed-rate reference ticks, not core cycles (no hardware performance counters here)".into()
            } else {
                "none on this architecture (cycles columns empty)".into()
            },
            overhead_ns: pairs[pairs.len() / 2],
            resolution_ns: res,
            cycles_per_ns,
        }
    }
}
