//! Synthetic board and logger streams whose energy is computed by hand in the comments. The
//! line CRCs come from `collect::crc32`, itself checked against the standard check value.
use super::super::{crc32, parse_log};
use super::*;

fn line(body: &str) -> String {
    format!("{body} *{:08x}\n", crc32(body.as_bytes()))
}

/// One batch: start and end ticks (µs on both clocks here), operations.
struct B {
    start: u64,
    end: u64,
    ops: u64,
}

/// A board log of one group (Trivium keystream 1024 bits, s,s), one `S` line per batch, each
/// after its marker.
fn board(batches: &[B]) -> String {
    let mut s = line(&format!(
        "LWCB H 1 board=demo mcu=M0 cpu_hz=1000000 tick_hz=1000000 timer=t cycles=none reps={} warmup=0 groups=1 min_sample_ticks=100 seed=1 ciphers=Trivium/rust/Rust",
        batches.len()
    ));
    let mut run_crc = 0u32;
    for (i, b) in batches.iter().enumerate() {
        s += &line(&format!("LWCB M {i} {i} {} {} {}", b.ops, b.start, b.end));
        let body = format!(
            "LWCB S {i} Trivium rust Rust stream keystream s,s 1024 random {i} {} {} -",
            b.ops,
            b.end - b.start
        );
        run_crc = super::super::crc32_update(run_crc, body.as_bytes());
        run_crc = super::super::crc32_update(run_crc, b"\n");
        s += &line(&body);
    }
    s + &line(&format!("LWCB E samples={} warmup=0 crc={run_crc:08x}", batches.len()))
}

/// An INA219 logger (0.1 Ω, 1 %) sampling every 1000 µs at t = 500, 1500, …: 5.0 V (1250
/// counts of 4 mV); 40 mA idle (400 counts of 10 µV over 0.1 Ω), 90 mA inside a window (900).
/// Logger time = board time − `late` for samples after `late`.
fn logger(batches: &[B], late: u64, until: u64) -> String {
    let mut s = line("LWCP H 1 sensor=ina219 shunt_uohm=100000 shunt_tol_ppm=10000 tick_hz=1000000 conv_us=532 avg=1");
    let mut seq = 0;
    let mut rises = 0;
    let mut t = 500;
    let seen: Vec<&B> = batches.iter().filter(|b| b.start >= late).collect();
    let mut edges: Vec<(u64, bool)> = seen.iter().flat_map(|b| [(b.start, true), (b.end, false)]).collect();
    edges.reverse();
    while t < until {
        while let Some(&(et, high)) = edges.last() {
            if et > t {
                break;
            }
            rises += high as u64;
            s += &line(&format!("LWCP T {seq} {rises} {} {}", high as u8, et - late));
            seq += 1;
            edges.pop();
        }
        if t >= late {
            let high = seen.iter().any(|b| b.start <= t && t < b.end);
            s += &line(&format!(
                "LWCP P {seq} {} {rises} {} 1250 {}",
                t - late,
                high as u8,
                if high { 900 } else { 400 }
            ));
            seq += 1;
        }
        t += 1000;
    }
    s
}

/// Three batches of 100 µs per operation, with different lengths and gaps.
fn three() -> Vec<B> {
    vec![
        B { start: 10_000, end: 20_000, ops: 100 },
        B { start: 40_000, end: 52_000, ops: 120 },
        B { start: 73_000, end: 87_000, ops: 140 },
    ]
}

fn opts(min_samples: usize) -> JoinOptions {
    JoinOptions { min_samples }
}

#[test]
fn energy_per_operation_from_a_constant_load() {
    let b = three();
    let board = parse_log(&board(&b));
    assert!(board.truncation.is_none() && board.malformed.is_empty(), "{:?}", board.malformed);
    let log = parse_logger(&logger(&b, 0, 100_000));
    assert!(log.malformed.is_empty(), "{:?}", log.malformed);
    let r = join(&board, &log, &opts(8)).unwrap();
    assert_eq!((r.offset, r.batches.len(), r.refused.len()), (0, 3, 0));
    assert!((r.drift - 1.0).abs() < 1e-12);
    // Net power 5.0 V × (90 − 40) mA = 0.25 W; batch 0 lasts 10 ms: 2.5 mJ; 10 samples.
    let b0 = &r.batches[0];
    assert_eq!(b0.samples, 10);
    assert!((b0.energy_j - 2.5e-3).abs() < 1e-12, "{}", b0.energy_j);
    assert!((b0.baseline_w - 0.2).abs() < 1e-12 && (b0.mean_power_w - 0.45).abs() < 1e-12);
    let g = by_group(&board, &r);
    assert_eq!(g.len(), 1);
    // 0.25 W × 100 µs = 25 µJ per operation; 1024 bits = 128 B: 25 µJ / 128 = 0.1953125 µJ/B.
    assert!((g[0].energy_per_op_j_measured - 25e-6).abs() < 1e-15, "{}", g[0].energy_per_op_j_measured);
    assert!((g[0].energy_per_byte_j_measured.unwrap() - 0.1953125e-6).abs() < 1e-16);
    assert_eq!((g[0].operations, g[0].batches, g[0].samples_min), (360, 3, 10));
    // Hand computation of the uncertainty (docs/power.md), per batch of T seconds:
    //   resolution: T·√2·√((5.0 V·100 µA)² + (0.09 A·4 mV)²)/√12 = T·2.51533e-4 W
    //   shunt 1 % and gain 1 % (INA219): √(0.01² + 0.01²)/√3 = 0.00816497 × 0.25 W·T = T·2.04124e-3 W
    //   u_sys = T·√(2.51533e-4² + 2.04124e-3²) = T·2.05668e-3 W; no scatter (u_random = 0).
    // Summed linearly over T = 36 ms: 7.40405e-5 J; per op (/360) ×2 = 4.11336e-7 J.
    let u = g[0].energy_per_op_u_j;
    assert!((u - 4.11336e-7).abs() < 1e-11, "{u}");
    assert_eq!(g[0].energy_source, "measured:ina219 (shunt 0.1 Ω ±1 %)");
}

#[test]
fn a_logger_that_starts_late_is_aligned_by_window_lengths() {
    let mut b = three();
    b.push(B { start: 95_000, end: 111_000, ops: 160 });
    let board = parse_log(&board(&b));
    // Started at 30 ms: missed batch 0; its window 0 is batch 1.
    let log = parse_logger(&logger(&b, 30_000, 130_000));
    let r = join(&board, &log, &opts(8)).unwrap();
    assert_eq!(r.offset, 1);
    assert_eq!(r.batches.iter().map(|x| x.batch).collect::<Vec<_>>(), [1, 2, 3]);
    assert_eq!(r.refused.len(), 1);
    assert!(r.refused[0].reason.contains("started late"), "{}", r.refused[0].reason);
    for x in &r.batches {
        assert!((x.energy_j / x.ops as f64 - 25e-6).abs() < 1e-15);
    }
}

#[test]
fn a_window_with_too_few_samples_is_refused_with_the_operations_needed() {
    let b = three();
    let r = join(&parse_log(&board(&b)), &parse_logger(&logger(&b, 0, 100_000)), &opts(12)).unwrap();
    // Batch 0: 10 samples in 10 ms (100 µs per op), 12 needed: (12 + 1) × 1 ms / 100 µs = 130 ops.
    assert_eq!(r.refused.len(), 1);
    assert_eq!((r.refused[0].batch, r.refused[0].ops_needed), (0, Some(130)));
    assert!(
        r.refused[0].reason.starts_with("10 power sample(s) in its 10.000 ms window, 12 needed"),
        "{}",
        r.refused[0].reason
    );
    // Nothing usable at all: one error naming the operations the next run needs.
    let e = join(&parse_log(&board(&b)), &parse_logger(&logger(&b, 0, 100_000)), &opts(20)).unwrap_err();
    // Batch 2: 14 ms / 140 ops: (20 + 1) × 1 ms / 100 µs = 210; the largest of the three.
    assert!(e.contains("the next run needs at least 210 operations per batch"), "{e}");
}

#[test]
fn alike_batches_are_refused_as_ambiguous() {
    let b: Vec<B> = (0..5).map(|i| B { start: 10_000 + i * 30_000, end: 20_000 + i * 30_000, ops: 100 }).collect();
    let e = join(&parse_log(&board(&b)), &parse_logger(&logger(&b, 0, 170_000)), &opts(8)).unwrap_err();
    assert!(e.contains("two offsets"), "{e}");
}

#[test]
fn a_board_without_markers_is_one_error() {
    let b = three();
    let text: String = board(&b).lines().filter(|l| !l.starts_with("LWCB M")).map(|l| format!("{l}\n")).collect();
    let e = join(&parse_log(&text), &parse_logger(&logger(&b, 0, 100_000)), &opts(8)).unwrap_err();
    assert!(e.starts_with("board log: no marker lines"), "{e}");
}

#[test]
fn malformed_logger_lines_are_counted_with_line_and_reason() {
    // CRCs of the good lines by Python's zlib.crc32 (independent of this crate).
    let text = "boot\n\
LWCP H 1 sensor=ina219 shunt_uohm=100000 shunt_tol_ppm=10000 tick_hz=1000000 conv_us=532 avg=1 *a2e64887\n\
LWCP P 0 500 0 0 1250 400 *1a629b63\n\
LWCP P 1 1500 0 0 1250 400 *00000000\n\
LWCP P 1 1500 0 0 1250 *dd7cd9e8\n\
LWCP P 2 2500 0 2 1250 400 *45c9c9da\n\
LWCP P 3 3500 0 0 9000 400 *05cfc9d3\n\
LWCP P 4 400 0 0 1250 400 *bfa2ddf4\n\
LWCP P 5 4500 0 1 1250 400 *43f44e9a\n\
LWCP P 6 5500 0 0 1250 400 *88c6684e\n\
LWCP P 6 6500 0 0 1250 400 *db5c33ca\n\
LWCP X 7 *a3193960\n";
    let log = parse_logger(text);
    assert!(log.fatal.is_none(), "{:?}", log.fatal);
    let got: Vec<(usize, &str)> = log.malformed.iter().map(|m| (m.line, m.reason.as_str())).collect();
    let want_prefix = [
        (4, "checksum mismatch"),
        (5, "5 fields after the type, 6 expected"),
        (6, "trigger level '2'"),
        (7, "bus count 9000 is above the ina219's 8191"),
        (8, "time 400 goes back"),
        (11, "seq 6 repeats"),
        (12, "unknown line type 'X'"),
    ];
    assert_eq!(got.len(), want_prefix.len(), "{got:?}");
    for ((l, r), (wl, wr)) in got.iter().zip(want_prefix) {
        assert_eq!(*l, wl, "{got:?}");
        assert!(r.starts_with(wr), "line {l}: {r}");
    }
    assert_eq!(log.samples.iter().map(|s| s.line).collect::<Vec<_>>(), [3, 9, 10]);
    assert!((log.samples[0].volts - 5.0).abs() < 1e-12 && (log.samples[0].amps - 0.04).abs() < 1e-12);
    assert_eq!(log.gaps, vec![(9, 4)]);
}

#[test]
fn a_bad_logger_header_is_fatal_and_named() {
    let e = join(&parse_log(&board(&three())), &parse_logger(&line("LWCP H 1 sensor=ina999 shunt_uohm=1")), &opts(8))
        .unwrap_err();
    assert_eq!(e, "power log: line 1: sensor 'ina999' is not ina219 or ina226");
    let e = join(&parse_log(&board(&three())), &parse_logger("LWCP P 0 1 0 0 1 1 *00000000\n"), &opts(8)).unwrap_err();
    assert_eq!(e, "power log: no valid header line (LWCP H …)");
}

#[test]
fn bad_marker_lines_are_counted_not_used() {
    let mut text = board(&three());
    // no operations; end before start; a batch id that goes back; a start inside the last batch
    for body in
        ["LWCB M 3 2 0 90000 91000", "LWCB M 4 2 5 95000 94000", "LWCB M 1 2 5 95000 96000", "LWCB M 5 2 5 86000 96000"]
    {
        text = text.replacen("LWCB E ", &format!("{}LWCB E ", line(body)), 1);
    }
    let p = parse_log(&text);
    assert_eq!(p.markers.len(), 3);
    let why: Vec<&str> = p.malformed.iter().map(|m| m.reason.as_str()).collect();
    assert_eq!(
        why,
        [
            "0 operations: a batch runs at least one",
            "end ticks 94000 before start ticks 95000",
            "batch 1 repeats or goes back (last 2)",
            "start ticks 86000 before the last batch's end 87000"
        ]
    );
    assert!(p.truncation.is_none(), "markers are outside the run's count and crc");
}

#[test]
fn a_header_field_given_twice_is_fatal_and_named() {
    // The tester's log: shunt_uohm=1 after shunt_uohm=100000 made the current 10^5 times larger
    // (0.25 J instead of 2.5 µJ). Neither value is taken: the header is refused.
    let h = "LWCP H 1 sensor=ina219 shunt_uohm=100000 shunt_tol_ppm=10000 tick_hz=1000000 conv_us=532 avg=1";
    let b = three();
    let good = logger(&b, 0, 100_000);
    for (field, key) in [
        ("shunt_uohm=1", "shunt_uohm"),
        ("shunt_uohm=100000", "shunt_uohm"),
        ("sensor=ina226", "sensor"),
        ("shunt_tol_ppm=0", "shunt_tol_ppm"),
        ("tick_hz=1000", "tick_hz"),
        ("conv_us=532", "conv_us"),
        ("avg=1", "avg"),
    ] {
        let text = good.replacen(&line(h), &line(&format!("{h} {field}")), 1);
        assert_ne!(text, good);
        let e = join(&parse_log(&board(&b)), &parse_logger(&text), &opts(8)).unwrap_err();
        assert_eq!(e, format!("power log: line 1: header field '{key}' is given twice"), "{field}");
    }
    // Unknown keys too: they reach run.json's notes, where one of two values would be a guess.
    let text = good.replacen(&line(h), &line(&format!("{h} probe=a probe=b")), 1);
    let log = parse_logger(&text);
    assert_eq!(log.fatal.as_deref(), Some("line 1: header field 'probe' is given twice"));
}
