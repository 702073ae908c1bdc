//! Hand-written logs (crates/engine/tests/board-logs, see README there). Their CRCs were
//! computed with Python's `zlib.crc32`, an implementation independent of this one; expected
//! rows are computed by hand in the comments.
use super::*;

const GOOD: &str = include_str!("../../tests/board-logs/good.log");
const NOISY: &str = include_str!("../../tests/board-logs/noisy.log");
const TRUNCATED: &str = include_str!("../../tests/board-logs/truncated.log");
const CORRUPTED: &str = include_str!("../../tests/board-logs/corrupted.log");
const LOST: &str = include_str!("../../tests/board-logs/lost-line.log");
const BAD_RUN_CRC: &str = include_str!("../../tests/board-logs/bad-run-crc.log");
const TWO_RUNS: &str = include_str!("../../tests/board-logs/two-runs.log");
const SECOND_KICK: &str = include_str!("../../tests/board-logs/second-kick.log");
const SHORT_PROMISE: &str = include_str!("../../tests/board-logs/short-promise.log");

#[test]
fn crc32_check_value() {
    // The standard CRC-32 check value (zlib, IEEE 802.3): crc32("123456789") = 0xCBF43926.
    assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    assert_eq!(crc32_update(crc32(b"1234"), b"56789"), 0xCBF4_3926);
    assert_eq!(crc32(b""), 0);
}

#[allow(clippy::too_many_arguments)] // one argument per column of a sample row
fn row(
    c: &str,
    i: &str,
    l: &str,
    sc: &str,
    kiv: &str,
    size: u64,
    rep: u32,
    batch: u64,
    ns: f64,
    cy: Option<f64>,
) -> SampleRow {
    SampleRow {
        cipher: c.into(),
        implementation: i.into(),
        language: l.into(),
        family: "stream".into(),
        scenario: sc.into(),
        kiv: kiv.into(),
        size_bits: size,
        payload: "random".into(),
        rep,
        batch,
        ns_per_op: ns,
        cycles_per_op: cy,
    }
}

/// The rows of good.log, converted by hand (tick_hz = 1 MHz: 1 tick = 1000 ns).
fn expected_samples() -> Vec<SampleRow> {
    vec![
        // 420 ticks / 4 ops = 105 µs; 52,500 cycles / 4 = 13,125
        row("DRACO", "rust-ref", "Rust", "init", "s,s", 0, 0, 4, 105_000.0, Some(13_125.0)),
        // 410 / 4 = 102.5 µs; 51,250 / 4 = 12,812.5
        row("DRACO", "rust-ref", "Rust", "init", "s,s", 0, 1, 4, 102_500.0, Some(12_812.5)),
        // 125 / 10 = 12.5 µs; 15,625 / 10 = 1,562.5 ("C%2B%2B" decodes to "C++")
        row("Trivium", "cpp", "C++", "keystream", "r,r", 128, 0, 10, 12_500.0, Some(1_562.5)),
        // 130 / 10 = 13 µs; cycles "-"
        row("Trivium", "cpp", "C++", "keystream", "r,r", 128, 1, 10, 13_000.0, None),
    ]
}

fn expected_warmup() -> Vec<SampleRow> {
    vec![
        row("DRACO", "rust-ref", "Rust", "init", "s,s", 0, 0, 4, 100_000.0, Some(12_500.0)),
        row("Trivium", "cpp", "C++", "keystream", "r,r", 128, 0, 10, 15_000.0, None),
    ]
}

#[test]
fn good_log() {
    let p = parse_log(GOOD);
    assert_eq!(p.truncation, None);
    assert!(p.malformed.is_empty(), "{:?}", p.malformed);
    assert_eq!(p.samples, expected_samples());
    assert_eq!(p.warmup, expected_warmup());
    assert_eq!(p.end, Some((4, 2, 0x42ae_b451)));
    let h = p.header.unwrap();
    assert_eq!(h.board, "demo");
    assert_eq!(h.timer, "RP2040 TIMER");
    assert_eq!(h.cycles.as_deref(), Some("SysTick 24-bit"));
    assert_eq!((h.cpu_hz, h.tick_hz, h.reps, h.warmup, h.groups, h.seed), (125e6, 1e6, 2, 1, 2, 7));
    assert_eq!(h.ciphers[1], ("Trivium".into(), "cpp".into(), "C++".into()));
    assert_eq!(h.extra.get("colour").map(String::as_str), Some("blue"));
    assert_eq!(p.raw.lines().count(), 8);
}

#[test]
fn noisy_log_gives_the_same_rows() {
    // Terminal timestamps, CRLF, lone CR, NULs, a bootloader banner, progress text.
    let p = parse_log(NOISY);
    assert_eq!(p.truncation, None);
    assert!(p.malformed.is_empty(), "{:?}", p.malformed);
    assert_eq!(p.samples, expected_samples());
    assert_eq!(p.warmup, expected_warmup());
    // before the header: banner, empty line, garbage, the info line; then "progress", "board idle"
    assert_eq!(p.noise_lines, 6);
}

#[test]
fn truncated_log() {
    let p = parse_log(TRUNCATED);
    assert_eq!(p.samples.len(), 3);
    assert_eq!(p.malformed.len(), 1);
    assert_eq!(p.malformed[0].line, 7);
    assert!(p.malformed[0].reason.contains("cut off"), "{:?}", p.malformed);
    assert!(p.truncation.as_deref().unwrap().contains("no end line"));
}

#[test]
fn corrupted_line_is_not_merged() {
    let p = parse_log(CORRUPTED);
    assert_eq!(p.malformed.len(), 1);
    assert_eq!(p.malformed[0].line, 6);
    assert!(p.malformed[0].reason.contains("checksum mismatch"));
    assert_eq!(p.gaps, vec![(7, 1)]);
    // the altered value (135 ticks) is nowhere in the rows
    assert!(p.samples.iter().all(|r| r.ns_per_op != 13_500.0));
    assert_eq!(p.samples.len(), 3);
    assert!(p.truncation.as_deref().unwrap().contains("3 + 2 valid ones"), "{:?}", p.truncation);
}

#[test]
fn lost_line_is_a_gap() {
    let p = parse_log(LOST);
    assert_eq!(p.samples.len(), 3);
    assert!(p.malformed.is_empty());
    // seq 2 (line 4 of the board's output) is missing: the gap shows before log line 4
    assert_eq!(p.gaps, vec![(4, 1)]);
    assert!(p.summary_lines().iter().any(|l| l.contains("1 line(s) missing or malformed")));
    assert!(p.truncation.is_some());
}

#[test]
fn run_checksum_mismatch_is_truncation() {
    let p = parse_log(BAD_RUN_CRC);
    assert!(p.malformed.is_empty());
    assert_eq!(p.samples.len(), 4);
    assert!(p.truncation.as_deref().unwrap().contains("crc 42aeb450 differs"), "{:?}", p.truncation);
}

#[test]
fn last_of_two_runs() {
    let p = parse_log(TWO_RUNS);
    assert_eq!(p.truncation, None);
    assert_eq!(p.earlier_runs, vec![1]);
    assert_eq!(p.samples, expected_samples());
    assert!(p.summary_lines().iter().any(|l| l.contains("earlier run")));
}

#[test]
fn a_cut_off_run_after_a_complete_one_leaves_the_complete_one_collected() {
    let p = parse_log(SECOND_KICK);
    assert_eq!(p.truncation, None);
    assert_eq!(p.samples, expected_samples());
    assert!(p.malformed.is_empty(), "{:?}", p.malformed);
    assert!(p.earlier_runs.is_empty());
    // Lines 1–8 are the run, 9 the ready line, 10 the later header.
    assert_eq!(p.later_run, Some(10));
    assert_eq!(p.info_lines, 1);
    assert!(p.summary_lines().iter().any(|l| l.contains("later run starts at line 10")), "{:?}", p.summary_lines());
    // Without an end line anywhere, the last header is still the run (and it is truncated).
    let p = parse_log(TRUNCATED);
    assert_eq!(p.later_run, None);
    assert!(p.truncation.is_some());
}

#[test]
fn header_promise_is_checked() {
    let p = parse_log(SHORT_PROMISE);
    assert!(p.truncation.as_deref().unwrap().contains("header promised 3 × 2"), "{:?}", p.truncation);
}

#[test]
fn no_header() {
    let p = parse_log("hello\nLWCB S 0 x *00000000\n");
    assert!(p.header.is_none());
    assert_eq!(p.noise_lines, 1);
    assert_eq!(p.malformed.len(), 1);
    assert!(p.truncation.unwrap().contains("no valid header"));
}

fn tmp(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("lwcbench-collect-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn src() -> Source {
    Source {
        description: "test.log".into(),
        args: vec!["lwcbench".into(), "collect".into()],
        started: std::time::SystemTime::now(),
        report: None,
    }
}

#[test]
fn writes_result_files_and_board_record() {
    let d = tmp("good");
    let rec = write_collected(&parse_log(NOISY), &d, false, false, &src()).unwrap();
    assert_eq!(rec.machine.cpu_model, "Cortex-M0+ @ 125 MHz");
    assert_eq!(rec.machine.hostname, "demo");
    assert_eq!(rec.build.git_commit, "abc1234");
    assert_eq!(rec.build.target, "thumbv6m-none-eabi");
    assert_eq!(rec.clock.resolution_ns, 1000.0);
    assert_eq!(rec.clock.overhead_ns, 2000.0);
    assert_eq!(rec.clock.cycles_per_ns, Some(0.125));
    assert_eq!(rec.groups, 2);
    assert_eq!(rec.min_sample_ns, 100_000.0);
    assert!(rec.notes.iter().any(|n| n == "header colour=blue"));
    for f in ["samples.csv", "warmup.csv", "summary.csv", "comparison.csv", "summary.md", "board-log.txt", "run.json"] {
        assert!(d.join(f).is_file(), "{f} missing");
    }
    let text = std::fs::read_to_string(d.join("samples.csv")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 5);
    assert_eq!(lines[1], "DRACO,rust-ref,Rust,stream,init,\"s,s\",0,random,0,4,105000.0,13125.0");
    assert_eq!(lines[4], "Trivium,cpp,C++,stream,keystream,\"r,r\",128,random,1,10,13000.0,");
    // refuses to overwrite without force
    assert!(write_collected(&parse_log(GOOD), &d, false, false, &src()).unwrap_err().contains("--force"));
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn truncated_writes_nothing_unless_allowed() {
    let d = tmp("trunc");
    let e = write_collected(&parse_log(TRUNCATED), &d, false, false, &src()).unwrap_err();
    assert!(e.contains("truncated") && e.contains("--allow-truncated"), "{e}");
    assert!(!d.exists());
    let rec = write_collected(&parse_log(TRUNCATED), &d, false, true, &src()).unwrap();
    assert!(rec.notes.iter().any(|n| n.starts_with("TRUNCATED: no end line")));
    assert!(rec.notes.iter().any(|n| n.starts_with("malformed line 7:")));
    let text = std::fs::read_to_string(d.join("samples.csv")).unwrap();
    assert_eq!(text.lines().count(), 4);
    std::fs::remove_dir_all(&d).unwrap();
}

/// `line` with its body edited by `f` and its CRC recomputed (the CRC is not under test).
fn edited(line: &str, f: impl Fn(&str) -> String) -> String {
    let body = f(&line[..line.rfind(" *").unwrap()]);
    format!("{body} *{:08x}", crc32(body.as_bytes()))
}

#[test]
fn bad_tick_fields_and_wrapping_counters_are_refused() {
    // NaN/inf/negative tick counts, a groups × reps overflow and a wrapping seq are not measurements
    let lines: Vec<&str> = GOOD.lines().collect();
    for (from, to) in [
        ("min_sample_ticks=100", "min_sample_ticks=NaN"),
        ("min_sample_ticks=100", "min_sample_ticks=inf"),
        ("min_sample_ticks=100", "min_sample_ticks=-1"),
        ("overhead_ticks=2", "overhead_ticks=NaN"),
        ("overhead_ticks=2", "overhead_ticks=-inf"),
    ] {
        let mut l: Vec<String> = lines.iter().map(|s| s.to_string()).collect();
        l[0] = edited(lines[0], |b| b.replace(from, to));
        let p = parse_log(&(l.join("\n") + "\n"));
        assert!(p.header.is_none(), "{to} accepted");
        // the header's bounded-number check names the field and its range
        let field = to.split('=').next().unwrap();
        assert!(
            p.malformed.iter().any(|m| m.reason.contains(field) && m.reason.contains("is not a number from")),
            "{to}: {:?}",
            p.malformed
        );
    }
    // groups × reps would wrap to a small number (2^63 × 2 ≡ 0 mod 2^64): the header's count
    // bound refuses it before any product is formed
    let mut l: Vec<String> = lines.iter().map(|s| s.to_string()).collect();
    l[0] = edited(lines[0], |b| b.replace("groups=2", "groups=9223372036854775808"));
    let p = parse_log(&(l.join("\n") + "\n"));
    assert!(p.header.is_none(), "groups=2^63 accepted");
    assert!(p.malformed.iter().any(|m| m.reason.contains("groups=")), "{:?}", p.malformed);
    // the last possible seq, then seq 0 again
    let mut l: Vec<String> = lines.iter().map(|s| s.to_string()).collect();
    l[2] = edited(lines[2], |b| b.replace("LWCB S 1 ", "LWCB S 18446744073709551615 "));
    let p = parse_log(&(l.join("\n") + "\n"));
    assert!(p.malformed.iter().any(|m| m.reason.contains("no successor")), "{:?}", p.malformed);
    assert!(p.truncation.is_some());
}

/// GOOD with its line `n` (0-based) replaced by `body` and a fresh CRC.
fn good_with(n: usize, body: impl Fn(&str) -> String) -> String {
    let mut lines: Vec<String> = GOOD.lines().map(String::from).collect();
    let old = &lines[n];
    let b = body(&old[..old.rfind(" *").unwrap()]);
    lines[n] = format!("{b} *{:08x}", crc32(b.as_bytes()));
    lines.join("\n") + "\n"
}

#[test]
fn a_header_or_end_field_given_twice_is_refused_and_named() {
    assert_eq!(parse_log(&good_with(0, |b| b.to_string())).truncation, None, "the rebuilt log is good");
    // Every key of the header, repeated with its own value and with another: neither is taken.
    let header = GOOD.lines().next().unwrap();
    let keys: Vec<&str> = header.split(' ').skip(3).filter_map(|f| f.split_once('=')).map(|(k, _)| k).collect();
    assert_eq!(keys.len(), 20);
    for k in keys {
        for v in ["1", "x"] {
            let p = parse_log(&good_with(0, |b| format!("{b} {k}={v}")));
            assert!(p.header.is_none(), "{k}={v}");
            assert_eq!(
                p.truncation.as_deref(),
                Some(format!("the header at line 1 is malformed: header field '{k}' is given twice").as_str())
            );
        }
    }
    // The end line: samples=4 twice is no end line at all.
    for f in ["samples=4", "warmup=2", "crc=42aeb451", "samples=5"] {
        let p = parse_log(&good_with(7, |b| format!("{b} {f}")));
        let k = f.split('=').next().unwrap();
        assert_eq!(p.end, None, "{f}");
        assert_eq!(p.malformed, [Issue { line: 8, reason: format!("end line field '{k}' is given twice") }]);
        assert!(p.truncation.unwrap().starts_with("no end line"));
    }
}

/// Format version 2 (make_logs.py, check-board.log): the header's ad_bytes, AEAD rows beside
/// stream ones; version 1 logs still read (good.log above); a v2 header without ad_bytes and
/// an unknown version are malformed headers.
#[test]
fn version_2_carries_aead_groups_and_version_1_still_reads() {
    let p = parse_log(include_str!("../../tests/board-logs/check-board.log"));
    assert_eq!(p.truncation, None);
    assert!(p.malformed.is_empty(), "{:?}", p.malformed);
    let h = p.header.as_ref().unwrap();
    assert_eq!((h.version, h.ad_bytes), (2, Some(0)));
    assert!(!h.extra.contains_key("ad_bytes"));
    assert_eq!(p.samples.len(), 24);
    // AES-128-GCM encrypt 1024 bits, rep 1: 7200 ticks at 1 MHz over 10 operations = 720 µs each
    let r = &p.samples[19];
    assert_eq!(
        (r.cipher.as_str(), r.family.as_str(), r.scenario.as_str(), r.size_bits, r.rep, r.ns_per_op, r.cycles_per_op),
        ("AES-128-GCM", "aead", "encrypt", 1024, 1, 720_000.0, None)
    );
    let g = parse_log(GOOD).header.unwrap();
    assert_eq!((g.version, g.ad_bytes), (1, None));
    let p = parse_log(include_str!("../../tests/board-logs/v2-no-ad.log"));
    assert_eq!(
        p.truncation.as_deref(),
        Some("the header at line 1 is malformed: header lacks required key 'ad_bytes' (format version 2)")
    );
    let p = parse_log(include_str!("../../tests/board-logs/v3.log"));
    assert_eq!(
        p.truncation.as_deref(),
        Some("the header at line 1 is malformed: format version 3 is not supported (this lwcbench reads versions 1 to 2)")
    );
}
