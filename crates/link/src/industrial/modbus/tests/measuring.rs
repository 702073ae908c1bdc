//! The measurement of both paths and its tail-share rule.

use super::*;

/// The measurement's shape: the ICS sizes, both paths timed, every poll answered correctly.
#[test]
fn measure_modbus_times_both_paths() {
    let opts = Options { interval: Duration::ZERO, warmup: 2, ..Options::default() };
    let (ms, reports) = measure::measure_with_reports("Ascon-AEAD128", 20, &opts).unwrap();
    assert_eq!(ms.iter().map(|m| m.bytes).collect::<Vec<_>>(), vec![12, 29, 260]);
    for m in &ms {
        assert_eq!((m.plain_ns.len(), m.sealed_ns.len(), m.protocol), (20, 20, "Modbus/TCP"));
        assert!(m.plain_ns.iter().chain(&m.sealed_ns).all(|&ns| ns > 0));
        assert!(m.cipher.starts_with("Ascon-AEAD128/"), "{}", m.cipher);
    }
    // 3 cycles × (2 warm-up + 20 timed) requests each way, nothing refused.
    assert_eq!((reports[0].sent, reports[0].delivered, reports[1].sent), (66, 66, 66));
    assert_eq!(reports[0].refused.refused_total() + reports[1].refused.refused_total(), 0);
    let csv = measure::csv(&ms, &measure::budgets());
    assert_eq!(csv.lines().count(), 4);
    assert!(csv.lines().next().unwrap().ends_with("sealed_p99_9_pct_of_IEC60834-1-teleprotection"));
    assert!(measure::measure_modbus("Ascon-AEAD128", 0, &opts).unwrap_err().contains("--polls"));
}

fn budgets() -> Vec<lwcbench_engine::studies::ics::Budget> {
    use lwcbench_engine::studies::ics::Budget;
    vec![
        Budget { name: "G".into(), ms: 3.0, source: String::new() },
        Budget { name: "T".into(), ms: 10.0, source: String::new() },
    ]
}

fn cycle(plain_us: Vec<u64>, sealed_us: Vec<u64>) -> crate::industrial::CycleMeasurement {
    crate::industrial::CycleMeasurement {
        protocol: "Modbus/TCP",
        message: "m".into(),
        bytes: 12,
        cipher: "c".into(),
        plain_ns: plain_us.into_iter().map(|u| u * 1000).collect(),
        sealed_ns: sealed_us.into_iter().map(|u| u * 1000).collect(),
        path: "p".into(),
    }
}

/// Issue 36 item 13, figures by hand. 1,000 polls 1..=1000 µs: nearest-rank p99.9 is rank 999,
/// 999 µs; sealed = plain + 6 µs: 1005 µs, added 6 µs = 0.2 % of 3 ms and 0.06 % of 10 ms.
/// Sealed with its two largest polls 500 µs: ranks 999 and 1000 are 997 and 998 µs, added −2 µs:
/// noise, no share. 999 or 300 polls: no p99.9 at all, whatever the difference.
#[test]
fn the_added_tail_share_needs_1000_polls_and_is_never_negative() {
    use crate::industrial::modbus::measure::{csv, markdown, row, Tail};
    let plain: Vec<u64> = (1..=1000).collect();
    let ok = cycle(plain.clone(), plain.iter().map(|u| u + 6).collect());
    let mut low = plain.clone();
    low[998] = 500;
    low[999] = 500;
    let noisy = cycle(plain.clone(), low);
    let few = cycle((1..=999).collect(), (1..=999).map(|u| u + 6).collect());
    let tester = cycle((1..=300).map(|u| u * 40).collect(), (1..=300).map(|u| u * 20).collect());
    assert_eq!(row(&ok).tail(), Tail::Added(6000.0));
    assert_eq!(row(&noisy).tail(), Tail::Negative(-2000.0));
    assert_eq!(row(&few).tail(), Tail::TooFewPolls);
    assert_eq!(row(&tester).tail(), Tail::TooFewPolls);

    let c = csv(&[ok.clone(), noisy.clone(), few.clone(), tester.clone()], &budgets());
    let lines: Vec<Vec<&str>> = c.lines().map(|l| l.split(',').collect()).collect();
    let col = |name: &str| lines[0].iter().position(|h| *h == name).unwrap();
    let pick = |l: &Vec<&str>| {
        ["added_p99_9_ns", "added_p99_9_status", "added_p99_9_pct_of_G", "added_p99_9_pct_of_T"]
            .map(|h| l[col(h)].to_string())
    };
    assert_eq!(pick(&lines[1]), ["6000", "ok", "0.2000", "0.0600"]);
    assert_eq!(pick(&lines[2]), ["-2000", "negative_noise", "", ""]);
    assert_eq!(pick(&lines[3]), ["", "too_few_polls", "", ""]);
    assert_eq!(pick(&lines[4]), ["", "too_few_polls", "", ""]);
    // The sealed tail's own share stays: 1005 µs of 3 ms = 33.5 %.
    assert_eq!(lines[1][col("sealed_p99_9_pct_of_G")], "33.5000");

    let md = markdown(&[ok, noisy, few, tester], &budgets(), "m");
    let rows: Vec<&str> = md.lines().filter(|l| l.starts_with("| c |")).collect();
    assert_eq!(rows.len(), 4);
    assert!(rows[0].ends_with("| 6.0 µs | 0.200 % | 0.060 % |"), "{}", rows[0]);
    assert!(rows[1].ends_with("| -2.0 µs (noise) | n/a (noise) | n/a (noise) |"), "{}", rows[1]);
    for r in &rows[2..] {
        assert!(
            r.ends_with("| n/a (needs ≥ 1,000 polls) | n/a (needs ≥ 1,000 polls) | n/a (needs ≥ 1,000 polls) |"),
            "{r}"
        );
    }
    let shares: Vec<&str> =
        rows.iter().flat_map(|r| r.split('|')).map(str::trim).filter(|c| c.ends_with('%')).collect();
    assert_eq!(shares, ["0.200 %", "0.060 %"], "the only shares printed, none negative");
    assert!(md.contains("below 1000 polls per path"), "{md}");
}
