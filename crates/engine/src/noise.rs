//! Is the machine noisy? As hyperfine and google/benchmark do, a run warns when its
//! timings are likely disturbed: CPU time stolen by the hypervisor during the run (the
//! `steal` column of /proc/stat), a load average above half the logical cores when the run
//! starts, or an unknown frequency-scaling state. Each warning goes to stderr and into
//! `run.json` notes (prefixed "noisy machine:", which `lwcbench compare` repeats), and says
//! what it does to verdicts.

/// CPU time counters of the aggregate `cpu` line of /proc/stat, and the 1-minute load.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Snapshot {
    /// Sum of all jiffies of the `cpu` line (user … steal), and the steal jiffies; None
    /// when /proc/stat is not readable (non-Linux).
    pub cpu: Option<(u64, u64)>,
    /// 1-minute load average, when readable.
    pub load1: Option<f64>,
}

/// Parse the aggregate `cpu` line: user nice system idle iowait irq softirq steal [guest …].
/// Guest time is already counted in user/nice, so only the first eight fields are summed.
pub fn parse_stat(text: &str) -> Option<(u64, u64)> {
    let line = text.lines().find(|l| l.starts_with("cpu "))?;
    let v: Vec<u64> = line.split_whitespace().skip(1).take(8).map(|x| x.parse().ok()).collect::<Option<_>>()?;
    (v.len() == 8).then(|| (v.iter().sum(), v[7]))
}

impl Snapshot {
    /// The counters now.
    pub fn take() -> Self {
        let read = |p| std::fs::read_to_string(p).ok();
        Snapshot {
            cpu: read("/proc/stat").as_deref().and_then(parse_stat),
            load1: read("/proc/loadavg").and_then(|t| t.split_whitespace().next()?.parse().ok()),
        }
    }
}

/// What every warning does to verdicts.
const EFFECT: &str = "timings drift within and between runs, so medians of the same code may differ by more than usual: verdicts near the ±5 % margin can flip between runs (repeat with --repeat, widen compare --margin, or use --counter instructions for a deterministic figure)";

/// Warnings for a run between `start` and `end` (empty on a quiet machine).
pub fn warnings(start: &Snapshot, end: &Snapshot, governor: &str, cores: usize) -> Vec<String> {
    let mut w = Vec::new();
    if let (Some((t0, s0)), Some((t1, s1))) = (start.cpu, end.cpu) {
        let (dt, ds) = (t1.saturating_sub(t0), s1.saturating_sub(s0));
        if dt > 0 && ds as f64 / dt as f64 > 0.01 {
            w.push(format!(
                "noisy machine: {:.1} % of CPU time was stolen by the hypervisor during the run; {EFFECT}",
                ds as f64 / dt as f64 * 100.0
            ));
        }
    }
    if let Some(l) = start.load1 {
        if l > 0.5 * cores.max(1) as f64 {
            w.push(format!(
                "noisy machine: load average {l:.2} on {cores} logical cores when the run started (other work competes for the CPU); {EFFECT}"
            ));
        }
    }
    if governor.starts_with("unavailable") {
        w.push(format!("noisy machine: frequency scaling state unknown (no cpufreq governor readable); {EFFECT}"));
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steal_and_load_by_hand() {
        // hand-made /proc/stat lines: 8 counted fields + guest fields that must be ignored
        let a = parse_stat("cpu  100 0 50 800 10 0 0 40 7 7\ncpu0 1 2 3\n").unwrap();
        assert_eq!(a, (1000, 40));
        let b = parse_stat("cpu  200 0 100 1500 20 0 0 180 9 9\n").unwrap();
        assert_eq!(b, (2000, 180));
        // 140 of 1000 jiffies stolen = 14 %; load 3.0 on 2 cores; governor unknown
        let s = Snapshot { cpu: Some(a), load1: Some(3.0) };
        let e = Snapshot { cpu: Some(b), load1: Some(0.0) };
        let w = warnings(&s, &e, "unavailable (no cpufreq)", 2);
        assert_eq!(w.len(), 3, "{w:?}");
        assert!(w[0].starts_with("noisy machine: 14.0 % of CPU time was stolen"), "{}", w[0]);
        assert!(w[1].contains("load average 3.00 on 2 logical cores"));
        assert!(w.iter().all(|x| x.contains("verdicts near the ±5 % margin")));
        // a quiet machine: no steal, low load, known governor
        let q = Snapshot { cpu: Some((1000, 40)), load1: Some(0.2) };
        assert!(warnings(&q, &Snapshot { cpu: Some((2000, 40)), load1: None }, "performance", 2).is_empty());
        assert_eq!(parse_stat("intr 1 2\n"), None);
    }
}
