//! Clocks. Time comes from the monotonic clock (`Instant`, nanoseconds). "Cycles" come from a
//! fixed-rate counter readable from user space, where there is one:
//! * x86-64: the time-stamp counter (`rdtsc`). On modern x86 it ticks at a fixed rate whatever
//!   the core frequency ("constant_tsc"): reference cycles, not core cycles.
//! * aarch64: the ARM generic timer's virtual count `CNTVCT_EL0`, ticking at `CNTFRQ_EL0`
//!   (19.2 MHz on a Pi 3, 54 MHz on a Pi 4/5): also a reference clock, far slower than the core.
//!   Core cycles need the PMU (`PMCCNTR_EL0`), which Linux does not open to user space by default.
//! * elsewhere (32-bit ARM included): none; the cycles columns stay empty and time comes from
//!   `CLOCK_MONOTONIC` alone. The 32-bit kernel may trap user reads of the generic timer, so
//!   the counter is not read there.
//!
//! No hardware performance counters are used anywhere; for deterministic counts use
//! callgrind (`--counter instructions`, x86-64) or the microcontroller emulation.
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
    #[cfg(target_arch = "aarch64")]
    {
        let v: u64;
        // SAFETY: Linux enables EL0 reads of CNTVCT_EL0 on arm64 (its vDSO clock reads it too).
        // The `isb` keeps the read from being taken before earlier instructions complete.
        unsafe {
            core::arch::asm!("isb", "mrs {v}, cntvct_el0", v = out(reg) v, options(nomem, nostack, preserves_flags))
        };
        v
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        0
    }
}

/// Whether `cycles()` returns a real counter on this build.
pub const HAS_CYCLE_COUNTER: bool = cfg!(any(target_arch = "x86_64", target_arch = "aarch64"));

/// Short name of the cycle counter of this build, recorded as `clock.counter` in run.json.
pub const COUNTER: &str = if cfg!(target_arch = "x86_64") {
    "tsc"
} else if cfg!(target_arch = "aarch64") {
    "cntvct_el0"
} else {
    "none"
};

/// What `cycles_per_op` means on this build, as one run.json note.
pub const CYCLES_NOTE: &str = if cfg!(target_arch = "x86_64") {
    "cycles_per_op are TSC ticks (fixed-rate reference cycles), not core cycles; no hardware performance counters are read"
} else if cfg!(target_arch = "aarch64") {
    "cycles_per_op are CNTVCT_EL0 ticks of the ARM generic timer (fixed rate CNTFRQ_EL0, see clock.counter_hz), not core cycles; core cycles need the PMU, which Linux does not expose to user space by default"
} else {
    "cycles_per_op are empty: no user-space cycle counter is read on this architecture; times come from CLOCK_MONOTONIC"
};

/// The counter's nominal frequency where the hardware states it: `CNTFRQ_EL0` on aarch64
/// (set by the firmware). x86-64 has no architectural register for the TSC rate.
pub fn counter_hz_register() -> Option<u64> {
    #[cfg(target_arch = "aarch64")]
    {
        let v: u64;
        // SAFETY: CNTFRQ_EL0 is readable at EL0 whenever CNTVCT_EL0 is.
        unsafe { core::arch::asm!("mrs {v}, cntfrq_el0", v = out(reg) v, options(nomem, nostack, preserves_flags)) };
        Some(v).filter(|&v| v > 0)
    }
    #[cfg(not(target_arch = "aarch64"))]
    {
        None
    }
}

impl Stamp {
    /// Both clocks now.
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
    /// The wall clock timed with.
    pub time_source: String,
    /// The cycle counter read, or why none.
    pub cycle_source: String,
    /// Median cost of one start+stop pair of both clocks, ns.
    pub overhead_ns: f64,
    /// Smallest non-zero difference seen between two `Instant` reads, ns.
    pub resolution_ns: f64,
    /// Measured counter ticks per nanosecond (GHz); null without a cycle counter.
    pub cycles_per_ns: Option<f64>,
    /// The cycle counter: `tsc` (x86-64), `cntvct_el0` (aarch64) or `none`; empty in run.json
    /// files written before it was recorded.
    #[serde(default)]
    pub counter: String,
    /// The counter's frequency, Hz: `CNTFRQ_EL0` on aarch64, else `cycles_per_ns` × 10⁹.
    #[serde(default)]
    pub counter_hz: Option<f64>,
    /// Where `counter_hz` comes from.
    #[serde(default)]
    pub counter_hz_source: String,
}

impl ClockInfo {
    /// Measure the clocks' overhead and resolution and the counter's rate.
    pub fn measure() -> Self {
        let mut pairs: Vec<f64> = (0..2001)
            .map(|_| {
                let s = Stamp::now();
                black_box(s.elapsed()).0
            })
            .collect();
        pairs.sort_by(f64::total_cmp);
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
        let (counter_hz, counter_hz_source) = match (counter_hz_register(), cycles_per_ns) {
            (Some(hz), _) => (Some(hz as f64), "CNTFRQ_EL0".to_string()),
            (None, Some(c)) => (Some(c * 1e9), "measured against CLOCK_MONOTONIC over a 30 ms sleep".to_string()),
            (None, None) => (None, "no cycle counter".to_string()),
        };
        ClockInfo {
            time_source: format!("std::time::Instant (CLOCK_MONOTONIC; kernel clocksource {clocksource})"),
            cycle_source: cycle_source(counter_hz),
            overhead_ns: pairs[pairs.len() / 2],
            resolution_ns: res,
            cycles_per_ns,
            counter: COUNTER.into(),
            counter_hz,
            counter_hz_source,
        }
    }
}

/// The run.json `cycle_source` sentence of this build.
fn cycle_source(hz: Option<f64>) -> String {
    match COUNTER {
        "tsc" => "x86-64 TSC via lfence+rdtsc: fixed-rate reference ticks, not core cycles (no hardware performance counters read)".into(),
        "cntvct_el0" => format!(
            "ARM generic timer CNTVCT_EL0 via isb+mrs: fixed-rate reference ticks at {:.3} MHz (CNTFRQ_EL0), not core cycles (core cycles need the PMU, not exposed to user space by default)",
            hz.unwrap_or(f64::NAN) / 1e6
        ),
        _ => "none on this architecture: times from CLOCK_MONOTONIC only (cycles columns empty)".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counter_matches_the_architecture() {
        let c = ClockInfo::measure();
        let want = if cfg!(target_arch = "x86_64") {
            "tsc"
        } else if cfg!(target_arch = "aarch64") {
            "cntvct_el0"
        } else {
            "none"
        };
        assert_eq!(c.counter, want);
        assert_eq!(c.counter_hz.is_some(), want != "none");
        assert_eq!(c.cycles_per_ns.is_some(), want != "none");
        assert!(c.cycle_source.to_lowercase().contains(if want == "none" { "none" } else { "not core cycles" }));
    }

    /// The counter advances at the rate it claims: ticks over a sleep, timed by CLOCK_MONOTONIC
    /// (an independent clock), agree with `counter_hz` (CNTFRQ_EL0 on aarch64) within 10 %.
    #[test]
    fn counter_rate_agrees_with_the_monotonic_clock() {
        let Some(hz) = ClockInfo::measure().counter_hz else {
            assert_eq!(cycles(), 0, "no counter, so cycles() reads 0");
            return;
        };
        let t0 = Instant::now();
        let c0 = cycles();
        std::thread::sleep(Duration::from_millis(100));
        let c1 = cycles();
        let ns = t0.elapsed().as_nanos() as f64;
        let rate = (c1 - c0) as f64 / ns * 1e9;
        assert!((rate / hz - 1.0).abs() < 0.10, "counter ran at {rate:.0} Hz, counter_hz says {hz:.0} Hz");
    }

    #[test]
    fn run_json_names_the_counter_and_reads_older_files() {
        let c = ClockInfo::measure();
        let v = serde_json::to_value(&c).unwrap();
        assert_eq!(v["counter"], COUNTER);
        assert_eq!(v["counter_hz"].as_f64(), c.counter_hz);
        // run.json files written before the counter was recorded still load.
        let old =
            r#"{"time_source":"t","cycle_source":"c","overhead_ns":1.0,"resolution_ns":1.0,"cycles_per_ns":null}"#;
        let o: ClockInfo = serde_json::from_str(old).unwrap();
        assert_eq!((o.counter.as_str(), o.counter_hz), ("", None));
    }
}
