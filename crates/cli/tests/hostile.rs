//! Hostile and careless input: each input below could panic, abort, run without bound or give
//! an unhelpful error. Every one must give exactly one `error:` line naming the option (or file:line:column), a failure
//! exit, no backtrace, and no result files.
use super::required;
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_lwcbench"));
    // A panic would print a backtrace; the assertions below look for "panicked" either way.
    c.env("RUST_BACKTRACE", "1");
    c
}

fn lwcbench(args: &[&str], cwd: &Path) -> Output {
    bin().args(args).current_dir(cwd).output().expect("binary runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).to_string()
}

/// One `error:` line containing every needle, non-zero exit, no panic, nothing written to `out`.
fn one_error(o: &Output, needles: &[&str]) -> String {
    let err = text(&o.stderr);
    assert!(!o.status.success(), "should fail: {err}");
    assert!(!err.contains("panicked") && !err.contains("stack backtrace"), "panic: {err}");
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(lines.len(), 1, "expected one error line: {err}");
    for n in needles {
        assert!(lines[0].contains(n), "{:?} does not mention {n:?}", lines[0]);
    }
    lines[0].to_string()
}

fn run_error(args: &[&str], needles: &[&str]) -> String {
    let d = tempfile::tempdir().unwrap();
    let mut full = vec!["run", "-q", "-o", "out"];
    full.extend_from_slice(args);
    let o = lwcbench(&full, d.path());
    let line = one_error(&o, needles);
    assert!(!d.path().join("out").join("samples.csv").exists() && !d.path().join("out/run.json").exists());
    line
}

const CHACHA_KEY: &str = "0000000000000000000000000000000000000000000000000000000000000000";
const CHACHA_IV: &str = "000000000000000000000000";
/// RFC 8439 appendix A.1, test vector #1: ChaCha20 block 0 with an all-zero key and nonce,
/// first 16 bytes.
const CHACHA_ZERO_BLOCK: &str = "76b8e0ada0f13d90405d6ae55386bd28";

// ---- huge --reps / --warmup ---------------------------------------------------------------------

#[test]
fn huge_reps_and_warmup_are_refused_before_anything_is_written() {
    let base = ["--cipher", "ChaCha20", "--scenario", "keystream", "--sizes", "8", "--kiv", "ss"];
    let with = |extra: &[&'static str]| -> Vec<&str> { base.iter().copied().chain(extra.iter().copied()).collect() };
    run_error(&with(&["--reps", "18446744073709551615"]), &["--reps", "1000000"]);
    run_error(&with(&["--warmup", "18446744073709551615"]), &["--warmup"]);
    run_error(&with(&["--reps", "1000001"]), &["--reps"]);
    // Within the per-group bound but above the per-run bound: 9 groups (ChaCha20 full +
    // keystream at 1 size × 4 kivs, + init) × 1,000,000 > 10 million samples.
    run_error(
        &["--cipher", "ChaCha20", "--scenario", "full,keystream,init", "--sizes", "8", "--reps", "1000000"],
        &["--reps", "samples"],
    );
}

// ---- --sizes 1024MiB under a memory limit, --min-sample-us 1e9 ----------------------------------

#[test]
fn sample_duration_is_bounded() {
    let base = ["--cipher", "ChaCha20", "--scenario", "keystream", "--sizes", "8", "--kiv", "ss"];
    for bad in ["1e9", "1000001", "0", "NaN", "inf"] {
        let mut a: Vec<&str> = base.to_vec();
        a.extend(["--min-sample-us", bad]);
        run_error(&a, &["--min-sample-us"]);
    }
}

#[test]
fn a_payload_that_cannot_be_allocated_is_an_error_not_an_abort() {
    // 2 GiB of address space: the binary fits, 4 buffers of 1 GiB do not. Before the fix the
    // run aborted (exit 134) in the allocator.
    let d = tempfile::tempdir().unwrap();
    let o = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -v 2000000 && exec '{}' run -q -o out --cipher ChaCha20 --scenario keystream --kiv ss --sizes 1024MiB -n 1 -w 0",
            env!("CARGO_BIN_EXE_lwcbench")
        ))
        .current_dir(d.path())
        .output()
        .unwrap();
    one_error(&o, &["--sizes", "cannot be allocated"]);
    assert!(!d.path().join("out/samples.csv").exists());
    // Above the 1 GiB limit outright
    run_error(&["--cipher", "ChaCha20", "--sizes", "1025MiB"], &["--sizes", "1 GiB"]);
}

// ---- duplicate selections -----------------------------------------------------------------------

#[test]
fn duplicate_sizes_and_variants_are_measured_once() {
    let d = tempfile::tempdir().unwrap();
    let o = lwcbench(
        &[
            "run",
            "-q",
            "-o",
            "out",
            "--cipher",
            "ChaCha20/rustcrypto",
            "--scenario",
            "keystream",
            "--sizes",
            "8,8,1B",
            "--kiv",
            "ss,ss,SS",
            "-n",
            "3",
            "-w",
            "1",
            "--min-sample-us",
            "1",
        ],
        d.path(),
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let mut rdr = csv::Reader::from_path(d.path().join("out/summary.csv")).unwrap();
    let n_col = rdr.headers().unwrap().iter().position(|h| h == "n").unwrap();
    let rows: Vec<csv::StringRecord> = rdr.records().map(|r| r.unwrap()).collect();
    // One group, ChaCha20/rustcrypto keystream <s,s | 8>, n = 3 (before: three groups merged
    // into one row with n = 9)
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(&rows[0][n_col], "3", "{rows:?}");
    let samples = std::fs::read_to_string(d.path().join("out/samples.csv")).unwrap();
    assert_eq!(samples.lines().count(), 1 + 3, "{samples}");
}

// ---- keystream --bits ---------------------------------------------------------------------------

fn keystream(extra: &[&str]) -> Output {
    let d = tempfile::tempdir().unwrap();
    let mut a = vec!["keystream", "--cipher", "ChaCha20/rustcrypto", "--key", CHACHA_KEY, "--iv", CHACHA_IV];
    a.extend_from_slice(extra);
    lwcbench(&a, d.path())
}

#[test]
fn keystream_bits_are_bounded_and_take_byte_suffixes() {
    for huge in ["1099511627776", "99999999999", "536870913", "0", "1GiB"] {
        one_error(&keystream(&["--bits", huge]), &["--bits"]);
    }
    one_error(&keystream(&["--bits", "many"]), &["--bits", "'many'"]);
    // 16B = 128 bits, the RFC 8439 A.1 #1 block's first 16 bytes
    let o = keystream(&["--bits", "16B"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout).trim(), CHACHA_ZERO_BLOCK);
    let o = keystream(&["--bits", "64KiB"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout).trim().len(), 2 * 64 * 1024);
    // 12 bits: 0x76 then the low 4 bits of 0xb8 (ChaCha20 packs bits LSB first) = 0x08
    let o = keystream(&["--bits", "12"]);
    assert_eq!(text(&o.stdout).trim(), "7608");
    assert!(text(&o.stderr).contains("last 4 bits in its low bits"), "{}", text(&o.stderr));
}

#[test]
fn keystream_help_lists_only_what_applies() {
    let d = tempfile::tempdir().unwrap();
    let help = text(&lwcbench(&["keystream", "--help"], d.path()).stdout);
    for absent in ["--hex", "--in ", "--ad", "random one"] {
        assert!(!help.contains(absent), "keystream --help mentions {absent}: {help}");
    }
    assert!(help.contains("--iv") && help.contains("required"), "{help}");
    assert!(help.contains("--key-file") && help.contains("--key-env"), "{help}");
    // An --iv missing for a cipher that has one
    let o = lwcbench(&["keystream", "--cipher", "ChaCha20/rustcrypto", "--key", CHACHA_KEY], d.path());
    one_error(&o, &["--iv: required", "96-bit IV"]);
}

// ---- broken pipe --------------------------------------------------------------------------------

/// Run with stdout a pipe whose reading end is already closed (as after `| head` exits), so
/// the first write fails with EPIPE: the process must end quietly with exit 0.
fn closed_pipe(args: &[&str]) {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let o = bin().args(args).stdout(writer).stderr(Stdio::piped()).stdin(Stdio::null()).output().unwrap();
    let err = text(&o.stderr);
    assert!(err.is_empty(), "{args:?}: stderr after the pipe closed: {err}");
    assert!(o.status.success(), "{args:?}: {:?}", o.status);
}

#[test]
fn a_closed_stdout_ends_quietly() {
    closed_pipe(&["list", "--format", "csv"]);
    closed_pipe(&["list"]);
    closed_pipe(&["list", "--format", "json"]);
    closed_pipe(&["list", "--matrix"]);
    closed_pipe(&["presets"]);
    // 64 MiB of keystream is 128 MiB of hex, far more than a pipe buffer holds
    closed_pipe(&[
        "keystream",
        "--cipher",
        "ChaCha20/rustcrypto",
        "--key",
        CHACHA_KEY,
        "--iv",
        CHACHA_IV,
        "--bits",
        "64MiB",
    ]);
}

// ---- collect header numbers, --timeout ----------------------------------------------------------

/// good.log's header with one key=value replaced (CRC recomputed; zlib's CRC-32, checked
/// against its standard check value in the engine's tests).
fn log_with(key: &str, value: &str) -> String {
    let good =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../engine/tests/board-logs/good.log")).unwrap();
    let mut lines: Vec<String> = good.lines().map(String::from).collect();
    let h = &lines[0];
    let body = &h[..h.rfind(" *").unwrap()];
    let fields: Vec<String> = body
        .split(' ')
        .map(|f| if f.starts_with(&format!("{key}=")) { format!("{key}={value}") } else { f.to_string() })
        .collect();
    assert!(fields.iter().any(|f| *f == format!("{key}={value}")), "{key} not in the header");
    let body = fields.join(" ");
    lines[0] = format!("{body} *{:08x}", lwcbench_engine::collect::crc32(body.as_bytes()));
    lines.join("\n") + "\n"
}

#[test]
fn collect_refuses_header_numbers_out_of_bounds() {
    let d = tempfile::tempdir().unwrap();
    // The unmodified log is collected (so the replacements below are what fails)
    std::fs::write(d.path().join("ok.log"), log_with("tick_hz", "1000000")).unwrap();
    let o = lwcbench(&["collect", "--from-log", "ok.log", "-o", "ok"], d.path());
    assert!(o.status.success(), "{}", text(&o.stderr));
    for (k, v) in [
        ("tick_hz", "1e-300"),
        ("tick_hz", "inf"),
        ("tick_hz", "NaN"),
        ("tick_hz", "0.5"),
        ("cpu_hz", "1e300"),
        ("min_sample_ticks", "NaN"),
        ("min_sample_ticks", "-1"),
        ("overhead_ticks", "inf"),
        ("overhead_ticks", "-2"),
        ("reps", "18446744073709551615"),
        ("reps", "0"),
        ("groups", "9999999999"),
    ] {
        std::fs::write(d.path().join("bad.log"), log_with(k, v)).unwrap();
        let o = lwcbench(&["collect", "--from-log", "bad.log", "-o", "bad"], d.path());
        let err = text(&o.stderr);
        one_error(&o, &["bad.log"]);
        assert!(err.contains(&format!("header {k}=")), "{k}={v}: {err}");
        assert!(!d.path().join("bad/run.json").exists());
    }
}

#[test]
fn collect_timeout_is_bounded() {
    let d = tempfile::tempdir().unwrap();
    for t in ["1e19", "inf", "0", "NaN", "604801"] {
        // /dev/ptmx opens as a serial port, so the timeout is really used (it panicked with
        // "overflow when adding duration to instant" before the bound)
        let o = lwcbench(&["collect", "--port", "/dev/ptmx", "--timeout", t, "-o", "x"], d.path());
        one_error(&o, &["--timeout"]);
    }
}

// ---- y4m ----------------------------------------------------------------------------------------

#[test]
fn a_y4m_header_with_multibyte_characters_is_an_error() {
    let d = tempfile::tempdir().unwrap();
    let mut clip = "YUV4MPEG2 W2 H2 \u{e9}x Cmono\nFRAME\n".as_bytes().to_vec();
    clip.extend([0u8; 4]);
    std::fs::write(d.path().join("c.y4m"), &clip).unwrap();
    let o = lwcbench(&["run", "-q", "-o", "out", "--video", "c.y4m", "--cipher", "ChaCha20/rustcrypto"], d.path());
    one_error(&o, &["c.y4m", "unknown header field"]);
}

#[test]
fn frames_1_reads_only_the_first_frame() {
    // A FIFO whose writer sends the header and one frame, then keeps it open: a reader that
    // wants the whole file waits forever; one that streams returns after the first frame.
    let d = tempfile::tempdir().unwrap();
    let fifo = d.path().join("live.y4m");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    let f2 = fifo.clone();
    let writer = std::thread::spawn(move || {
        let mut w = std::fs::OpenOptions::new().write(true).open(&f2).unwrap();
        let mut clip = b"YUV4MPEG2 W2 H2 Cmono\nFRAME\n".to_vec();
        clip.extend([1u8, 2, 3, 4]);
        clip.extend(b"FRAME\n");
        w.write_all(&clip).unwrap();
        w.flush().unwrap();
        // hold the pipe open until the test is done (or 120 s at most)
        let _ = rx.recv_timeout(std::time::Duration::from_secs(120));
    });
    let mut child = bin()
        .args([
            "run",
            "-q",
            "-o",
            "out",
            "--video",
            "live.y4m",
            "--frames",
            "1",
            "--cipher",
            "ChaCha20/rustcrypto",
            "--kiv",
            "ss",
            "-n",
            "2",
            "-w",
            "0",
            "--min-sample-us",
            "1",
        ])
        .current_dir(d.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Generous bound: the run itself takes well under a second.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(100);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            break None;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let _ = tx.send(());
    writer.join().unwrap();
    let mut err = String::new();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    let status = status.expect("--frames 1 waited for the rest of the file");
    assert!(status.success(), "{err}");
    assert!(d.path().join("out/run.json").is_file());
}

// ---- key from a file, the environment or stdin --------------------------------------------------

#[test]
fn keys_come_from_a_file_the_environment_or_stdin() {
    let d = tempfile::tempdir().unwrap();
    let ks = |key_args: &[&str], env: Option<(&str, &str)>, stdin: Option<&str>| -> Output {
        let mut c = bin();
        c.args(["keystream", "--cipher", "ChaCha20/rustcrypto", "--iv", CHACHA_IV, "--bits", "16B"])
            .args(key_args)
            .current_dir(d.path());
        if let Some((k, v)) = env {
            c.env(k, v);
        }
        c.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = c.spawn().unwrap();
        let mut i = child.stdin.take().unwrap();
        if let Some(s) = stdin {
            i.write_all(s.as_bytes()).unwrap();
        }
        drop(i);
        child.wait_with_output().unwrap()
    };
    let ok = |o: Output| {
        assert!(o.status.success(), "{}", text(&o.stderr));
        assert_eq!(text(&o.stdout).trim(), CHACHA_ZERO_BLOCK);
    };
    // a key file with the hex split over lines, colons allowed
    std::fs::write(d.path().join("k.hex"), format!("{}\n{}\n", &CHACHA_KEY[..32], &CHACHA_KEY[32..])).unwrap();
    ok(ks(&["--key-file", "k.hex"], None, None));
    ok(ks(&["--key-env", "LWCB_TEST_KEY"], Some(("LWCB_TEST_KEY", CHACHA_KEY)), None));
    ok(ks(&["--key", "-"], None, Some(&format!("{CHACHA_KEY}\n"))));
    ok(ks(&["--key", CHACHA_KEY], None, None));
    // exactly one source
    let o = ks(&["--key", CHACHA_KEY, "--key-file", "k.hex"], None, None);
    assert!(!o.status.success() && text(&o.stderr).contains("cannot be used with"), "{}", text(&o.stderr));
    let o = ks(&[], None, None);
    assert!(!o.status.success() && text(&o.stderr).contains("--key"), "{}", text(&o.stderr));
    // errors name the source and the position of a bad character, never the character
    std::fs::write(d.path().join("bad.hex"), "00112233445566778899aabbccddeeffQ0112233445566778899aabbccddeeff")
        .unwrap();
    let line = one_error(&ks(&["--key-file", "bad.hex"], None, None), &["--key-file", "bad.hex", "character 33"]);
    assert!(!line.contains('Q'), "{line}");
    one_error(&ks(&["--key-env", "LWCB_NO_SUCH_VAR"], None, None), &["--key-env", "LWCB_NO_SUCH_VAR", "not set"]);
    one_error(&ks(&["--key-file", "none.hex"], None, None), &["--key-file", "none.hex"]);
    one_error(&ks(&["--key", "-"], None, Some("")), &["--key -", "no key"]);
    // a wrong length is still named as --key
    one_error(&ks(&["--key-env", "K"], Some(("K", "0011")), None), &["--key", "32 bytes"]);
    // a huge key file is refused without reading it all
    std::fs::write(d.path().join("huge.hex"), "00".repeat(40_000)).unwrap();
    one_error(&ks(&["--key-file", "huge.hex"], None, None), &["--key-file", "64 KiB"]);
    // encrypt and decrypt take the same options
    let o = lwcbench(
        &["encrypt", "--cipher", "ChaCha20/rustcrypto", "--key-file", "k.hex", "--iv", CHACHA_IV, "--hex", "00000000"],
        d.path(),
    );
    assert_eq!(text(&o.stdout).trim(), &CHACHA_ZERO_BLOCK[..8], "{}", text(&o.stderr));
}

// ---- options ignored outside their presets, misspelt --engine -----------------------------------

#[test]
fn study_options_outside_their_presets_are_errors() {
    let sel = ["--cipher", "ChaCha20", "--sizes", "8"];
    let with = |extra: &[&'static str]| -> Vec<&str> { sel.iter().copied().chain(extra.iter().copied()).collect() };
    run_error(&with(&["--budget", "poll=100"]), &["--budget", "ics-latency"]);
    run_error(&with(&["--weights", "battery"]), &["--weights", "lightweight-study"]);
    run_error(&with(&["--watts", "2"]), &["--watts", "lightweight-study or stream-study"]);
    run_error(&with(&["--power-profile", "ESP32"]), &["--power-profile"]);
    run_error(&with(&["--board", "rp2040"]), &["--board", "lightweight-study or stream-study"]);
    let unknown = format!("--board: 'uno' is not a board ({})", crate::boards_by_hand());
    run_error(&["--preset", "lightweight-study", "--board", "uno"], &[&unknown]);
    run_error(&["--preset", "stream-study", "--board", "rp2040", "--watts", "1"], &["--board", "--watts"]);
    run_error(&["--preset", "quick", "--budget", "poll=100"], &["--budget", "--preset quick"]);
    run_error(&with(&["--engine", "pycryptodom"]), &["--engine", "unknown engine 'pycryptodom'"]);
}

#[test]
fn engine_with_scenario_measures_only_the_engine() {
    let d = tempfile::tempdir().unwrap();
    let mock = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../engines/mock/engine.sh");
    let spec = format!("sh {}", mock.canonicalize().unwrap().display());
    let o = lwcbench(
        &[
            "run",
            "-q",
            "-o",
            "out",
            "--engine",
            &spec,
            "--scenario",
            "encrypt",
            "--sizes",
            "16B",
            "--kiv",
            "ss",
            "-n",
            "2",
            "-w",
            "0",
        ],
        d.path(),
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let summary = std::fs::read_to_string(d.path().join("out/summary.csv")).unwrap();
    let rows: Vec<&str> = summary.lines().skip(1).collect();
    assert!(!rows.is_empty());
    assert!(rows.iter().all(|r| r.contains(",mock-awk,")), "catalogue rows measured too: {summary}");
}

// ---- dataset errors -----------------------------------------------------------------------------

fn dataset_error(csv: &[u8], extra: &[&str], needles: &[&str]) -> String {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("s.csv"), csv).unwrap();
    let mut a =
        vec!["run", "-q", "-o", "out", "--cipher", "ChaCha20/rustcrypto", "--dataset", "s.csv", "--readings", "2"];
    a.extend_from_slice(extra);
    let o = lwcbench(&a, d.path());
    assert!(o.stderr.len() < 1000, "stderr of {} bytes", o.stderr.len());
    one_error(&o, needles)
}

#[test]
fn dataset_errors_name_line_and_column_and_stay_short() {
    // 0xB0 is Latin-1 '°' (line 1, after the 8 characters "time,t [": column 9)
    let latin1 = b"time,t [\xB0C]\n1,2.5\n2,3.5\n";
    dataset_error(latin1, &[], &["s.csv:1:9", "0xB0", "--dataset-encoding latin1"]);
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("s.csv"), latin1).unwrap();
    let o = lwcbench(
        &[
            "run",
            "-q",
            "-o",
            "out",
            "--cipher",
            "ChaCha20/rustcrypto",
            "--scenario",
            "full",
            "--kiv",
            "ss",
            "--dataset",
            "s.csv",
            "--readings",
            "2",
            "--dataset-encoding",
            "latin1",
            "-n",
            "2",
            "-w",
            "0",
            "--min-sample-us",
            "1",
        ],
        d.path(),
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    dataset_error(b"time,t\n1,2\n", &["--dataset-encoding", "ebcdic"], &["--dataset-encoding", "ebcdic"]);
    // An unbalanced quote swallows the 700 lines after it: one short line
    let mut q = b"time,t\n1,\"2\n".to_vec();
    for i in 0..700 {
        q.extend(format!("{i},{i}.5\n").as_bytes());
    }
    dataset_error(&q, &[], &["s.csv:2:2", "unbalanced"]);
    // A 5 MB cell is shown truncated
    let mut big = b"time,t\n1,".to_vec();
    big.extend(std::iter::repeat_n(b'x', 5_000_000));
    big.extend(b"\n");
    dataset_error(&big, &[], &["s.csv:2:2", "is not a number", "5000000 characters"]);
    // int32 overflow: 3e9 × 1 > 2^31 - 1, at line 3 column 2
    dataset_error(
        b"time,t\n1,2\n2,3000000000\n",
        &["--encoding", "int32:1"],
        &["s.csv:3:2", "--encoding int32:1", "does not fit in int32"],
    );
}

// ---- messages -----------------------------------------------------------------------------------

#[test]
fn messages_say_what_is_wrong() {
    let d = tempfile::tempdir().unwrap();
    let k16 = "000102030405060708090a0b0c0d0e0f";
    // CBC with a wrong key: the padding check fails, and the message says so
    let o = lwcbench(
        &["encrypt", "--cipher", "AES-128-CBC/rustcrypto", "--key", k16, "--iv", k16, "--hex", "48656c6c6f"],
        d.path(),
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let ct = text(&o.stdout).trim().to_string();
    let wrong = "ff0102030405060708090a0b0c0d0e0f";
    // With a wrong key the last byte is random: 1/16 of keys would give a valid-looking pad,
    // so try a few and require the padding message whenever decryption fails.
    let mut saw = false;
    for w in [wrong, "fe0102030405060708090a0b0c0d0e0f", "fd0102030405060708090a0b0c0d0e0f"] {
        let o = lwcbench(
            &["decrypt", "--cipher", "AES-128-CBC/rustcrypto", "--key", w, "--iv", k16, "--hex", &ct],
            d.path(),
        );
        if !o.status.success() {
            one_error(&o, &["bad padding"]);
            saw = true;
        }
    }
    assert!(saw, "no wrong key failed the padding check");
    let o = lwcbench(
        &["decrypt", "--cipher", "AES-128-CBC/rustcrypto", "--key", k16, "--iv", k16, "--hex", "00"],
        d.path(),
    );
    one_error(&o, &["not a whole number of 16-byte blocks"]);
    // "an AEAD"
    let o = lwcbench(
        &["keystream", "--cipher", "AES-128-GCM/rustcrypto", "--key", k16, "--iv", "000102030405060708090a0b"],
        d.path(),
    );
    let line = one_error(&o, &["an AEAD cipher"]);
    assert!(!line.contains("a aead"), "{line}");
    // --scenario errors: no Rust list syntax, roundtrip named
    let line = run_error(&["--cipher", "ChaCha20", "--scenario", "keysetup"], &["--scenario keysetup", "roundtrip"]);
    assert!(!line.contains("[\""), "{line}");
    let line = run_error(&["--cipher", "NoSuch"], &["unknown cipher"]);
    assert!(!line.contains("[\""), "{line}");
    // Trivium takes IVs of up to 10 bytes: an 11-byte one is "at most 10", not "must be 10"
    let o = lwcbench(
        &["keystream", "--cipher", "Trivium", "--key", "00000000000000000000", "--iv", "0000000000000000000000"],
        d.path(),
    );
    one_error(&o, &["--iv", "at most 10 bytes"]);
}

#[test]
fn openssl_empty_siv_is_named_as_a_library_limitation() {
    let d = tempfile::tempdir().unwrap();
    let list = text(&lwcbench(&["list", "--format", "csv"], d.path()).stdout);
    if !list.contains("AES-128-SIV,openssl,") {
        required::missing("OpenSSL not built");
        return;
    }
    let k32 = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
    // A valid empty-message SIV ciphertext (only the 16-byte tag), from the RustCrypto build
    let o = lwcbench(&["encrypt", "--cipher", "AES-128-SIV/rustcrypto", "--key", k32, "--hex", ""], d.path());
    assert!(o.status.success(), "{}", text(&o.stderr));
    let tag = text(&o.stdout).trim().to_string();
    assert_eq!(tag.len(), 32);
    let o = lwcbench(&["decrypt", "--cipher", "AES-128-SIV/openssl", "--key", k32, "--hex", &tag], d.path());
    let line = one_error(&o, &["OpenSSL", "empty message", "limitation"]);
    assert!(!line.contains("tag mismatch"), "{line}");
    let o = lwcbench(&["encrypt", "--cipher", "AES-128-SIV/openssl", "--key", k32, "--hex", ""], d.path());
    one_error(&o, &["OpenSSL", "empty message"]);
}
