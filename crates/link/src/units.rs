//! Latencies as people read them: milliseconds with three significant figures.

/// `us` microseconds as milliseconds with three significant figures: 56565.78 µs → `56.6 ms`,
/// 1234567 µs → `1230 ms`, 12.3456 µs → `0.0123 ms`; 0 → `0 ms`; not a finite, non-negative
/// number → `n/a`.
pub fn ms3(us: f64) -> String {
    if !us.is_finite() || us < 0.0 {
        return "n/a".into();
    }
    if us == 0.0 {
        return "0 ms".into();
    }
    let ms = us / 1000.0;
    // Round to three significant figures, then count the decimals the rounded value needs
    // (99.96 rounds to 100, which needs none).
    let step = 10f64.powi(ms.log10().floor() as i32 - 2);
    let rounded = (ms / step).round() * step;
    let decimals = (2 - rounded.log10().floor() as i32).max(0) as usize;
    format!("{rounded:.decimals$} ms")
}

#[cfg(test)]
mod tests {
    use super::ms3;

    #[test]
    fn three_significant_figures_in_ms() {
        // Hand-computed: 56565.78 µs = 56.56578 ms → 56.6; 1234567 µs = 1234.567 ms → 1230;
        // 12.3456 µs = 0.0123456 ms → 0.0123; 999.6 µs = 0.9996 ms → 1.00; 99960 µs = 99.96 ms → 100.
        assert_eq!(ms3(56_565.78), "56.6 ms");
        assert_eq!(ms3(1_234_567.0), "1230 ms");
        assert_eq!(ms3(12.3456), "0.0123 ms");
        assert_eq!(ms3(999.6), "1.00 ms");
        assert_eq!(ms3(99_960.0), "100 ms");
        assert_eq!(ms3(1000.0), "1.00 ms");
        assert_eq!(ms3(150.0), "0.150 ms");
        assert_eq!(ms3(0.0), "0 ms");
        assert_eq!(ms3(f64::NAN), "n/a");
        assert_eq!(ms3(-1.0), "n/a");
    }
}
