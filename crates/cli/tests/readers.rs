//! The readers of untrusted result and log files at the command line (issue 36, items 6, 9 and
//! 14): a power-log or board header field given twice, a serial line without end, non-finite
//! or impossible samples in a run's samples.csv, and dataset cells and names that do not fit.
//! Each gives one `error:` line naming the file (and line and column, or the option), a
//! failure exit that is not a panic's 101, and no result files.
use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn lwcbench(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lwcbench"))
        .args(args)
        .current_dir(cwd)
        .env("RUST_BACKTRACE", "1")
        .output()
        .expect("binary runs")
}

/// The one `error:` line of a failed run; exit 1 (a panic exits 101).
fn one_error(o: &Output) -> String {
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(!err.contains("panicked") && !err.contains("stack backtrace"), "panic: {err}");
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(lines.len(), 1, "{err}");
    lines[0].to_string()
}

fn board_logs() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../engine/tests/board-logs")
}

/// `text` with the line that starts with `marker` given the extra field `field` and a fresh CRC
/// (the collector's crc32, itself checked against the standard check value in the engine).
fn with_field(text: &str, marker: &str, field: &str) -> String {
    let mut out = String::new();
    for l in text.lines() {
        match (l.starts_with(marker), l.rfind(" *")) {
            (true, Some(star)) => {
                let body = format!("{} {field}", &l[..star]);
                out += &format!("{body} *{:08x}\n", lwcbench_engine::collect::crc32(body.as_bytes()));
            }
            _ => out += &format!("{l}\n"),
        }
    }
    assert_ne!(out, text, "no line starts with {marker}");
    out
}

// ---- item 6: repeated fields, serial lines without end --------------------------------------

#[test]
fn a_header_field_given_twice_is_one_error_naming_field_and_line() {
    let d = tempfile::tempdir().unwrap();
    let good = std::fs::read_to_string(board_logs().join("good.log")).unwrap();
    std::fs::write(d.path().join("b.log"), with_field(&good, "LWCB H ", "reps=3")).unwrap();
    let e = one_error(&lwcbench(&["collect", "--from-log", "b.log", "-o", "out"], d.path()));
    assert!(
        e.contains("b.log") && e.contains("header at line 1 is malformed: header field 'reps' is given twice"),
        "{e}"
    );
    assert!(!d.path().join("out").exists());
    // The power logger's header: the tester's shunt_uohm=1 after shunt_uohm=100000.
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fuzz-corpus/power-log/good.txt");
    let both = std::fs::read_to_string(corpus).unwrap();
    let (board, power) = both.split_once("\n=== power ===\n").unwrap();
    std::fs::write(d.path().join("board.log"), board).unwrap();
    std::fs::write(d.path().join("power.log"), power).unwrap();
    let args = ["collect", "--from-log", "board.log", "--power-from-log", "p.log", "-o", "out"];
    // unchanged, it is collected (so the repeat is what fails below)
    std::fs::write(d.path().join("p.log"), power).unwrap();
    let o = lwcbench(&args, d.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::remove_dir_all(d.path().join("out")).unwrap();
    std::fs::write(d.path().join("p.log"), with_field(power, "LWCP H ", "shunt_uohm=1")).unwrap();
    let e = one_error(&lwcbench(&args, d.path()));
    assert_eq!(e, "error: power log p.log: line 1: header field 'shunt_uohm' is given twice");
    assert!(!d.path().join("out").exists());
}

/// Write `bytes` to a pty master without blocking on a full buffer (the reader may have gone):
/// stops when all is written or `child` has exited.
fn feed(m: &mut std::fs::File, bytes: &[u8], child: &mut std::process::Child) {
    // SAFETY: fcntl on an open descriptor.
    unsafe {
        let fd = std::os::fd::AsRawFd::as_raw_fd(m);
        libc::fcntl(fd, libc::F_SETFL, libc::fcntl(fd, libc::F_GETFL) | libc::O_NONBLOCK);
    }
    let mut at = 0;
    while at < bytes.len() && child.try_wait().unwrap().is_none() {
        match m.write(&bytes[at..(at + 4096).min(bytes.len())]) {
            Ok(n) => at += n,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => panic!("writing the pty: {e}"),
        }
    }
}

/// Wait for the collector's first kick on the board port (both ports are open then).
fn await_kick(m: &std::fs::File) {
    let mut pfd = libc::pollfd { fd: std::os::fd::AsRawFd::as_raw_fd(m), events: libc::POLLIN, revents: 0 };
    // SAFETY: one valid pollfd.
    assert_eq!(unsafe { libc::poll(&mut pfd, 1, 20_000) }, 1, "no kick from the collector");
}

#[test]
fn a_serial_line_without_end_is_cut_off_at_64_kib() {
    // The board, then the power logger, sends 80 KiB without a line end, and keeps the port
    // open: the collector stops at 64 KiB with one error, long before --timeout.
    for logger in [false, true] {
        let (mut bm, _bs, bname) = crate::collect_power::pty();
        let (mut lm, _ls, lname) = crate::collect_power::pty();
        let d = tempfile::tempdir().unwrap();
        let mut args =
            vec!["collect", "--port", bname.as_str(), "--timeout", "60", "--save-log", "cap.log", "-o", "out"];
        if logger {
            args.extend(["--power-port", lname.as_str()]);
        }
        let t0 = Instant::now();
        let mut child = Command::new(env!("CARGO_BIN_EXE_lwcbench"))
            .args(&args)
            .current_dir(d.path())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        await_kick(&bm);
        let endless = vec![b'x'; 80 << 10];
        feed(if logger { &mut lm } else { &mut bm }, &endless, &mut child);
        let o = child.wait_with_output().unwrap();
        let (opt, port) = if logger { ("--power-port", &lname) } else { ("--port", &bname) };
        let e = one_error(&o);
        assert_eq!(
            e,
            format!(
                "error: {opt}: {port} sent a line longer than 64 KiB without a line end (a wrong baud rate, or not a log); stopped"
            )
        );
        assert!(t0.elapsed() < Duration::from_secs(30), "cut off by the timeout, not the bound");
        assert!(!d.path().join("out").exists() && !d.path().join("cap.log").exists());
    }
}

#[test]
fn a_log_stream_is_read_with_the_ports_bounds() {
    // standard input, or a device given as a log file: an endless line stops at 64 KiB (it
    // was read until the memory ran out)
    let d = tempfile::tempdir().unwrap();
    let zero = || std::fs::File::open("/dev/zero").unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_lwcbench"))
        .args(["collect", "--from-log", "-", "-o", "out"])
        .current_dir(d.path())
        .stdin(zero())
        .output()
        .unwrap();
    let tail = "sent a line longer than 64 KiB without a line end (a wrong baud rate, or not a log); stopped";
    assert_eq!(one_error(&o), format!("error: --from-log: - (standard input) {tail}"));
    let o = lwcbench(&["collect", "--from-log", "/dev/zero", "-o", "out"], d.path());
    assert_eq!(one_error(&o), format!("error: --from-log: /dev/zero {tail}"));
    // A regular file above the capture's 256 MiB (sparse: nothing is written to the disk)
    let good = board_logs().join("good.log");
    std::fs::File::create(d.path().join("huge.log")).unwrap().set_len((256 << 20) + 1).unwrap();
    let args = ["collect", "--from-log", good.to_str().unwrap(), "--power-from-log", "huge.log", "-o", "out"];
    let o = lwcbench(&args, d.path());
    assert_eq!(one_error(&o), "error: --power-from-log: huge.log is larger than 256 MiB: not a run's log");
    assert!(!d.path().join("out").exists());
}

#[test]
fn a_serial_line_of_exactly_64_kib_is_read() {
    // 65536 bytes of noise, a line end, then a whole run: collected.
    let (mut bm, _bs, bname) = crate::collect_power::pty();
    let d = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_lwcbench"))
        .args(["collect", "--port", &bname, "--timeout", "60", "-o", "out"])
        .current_dir(d.path())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    await_kick(&bm);
    let mut stream = vec![b'x'; 64 << 10];
    stream.push(b'\n');
    stream.extend(std::fs::read(board_logs().join("good.log")).unwrap());
    feed(&mut bm, &stream, &mut child);
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("collected 4 sample and 2 warm-up lines; 0 malformed line(s) not used; 1 noise line(s)"),
        "{err}"
    );
}

// ---- item 9: non-finite and impossible samples in samples.csv --------------------------------

/// A collected run in `dir/name` whose samples.csv row 2 (line 3) has `ns_per_op` = `value`.
fn run_with_sample(dir: &Path, name: &str, value: &str) -> String {
    let log = board_logs().join("good.log");
    let o = lwcbench(&["collect", "--from-log", log.to_str().unwrap(), "-o", name], dir);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let p = dir.join(name).join("samples.csv");
    let mut r = csv::Reader::from_path(&p).unwrap();
    let h = r.headers().unwrap().clone();
    assert_eq!(h.get(10), Some("ns_per_op"), "column 11");
    let mut rows: Vec<csv::StringRecord> = r.records().map(|x| x.unwrap()).collect();
    rows[1] = rows[1].iter().enumerate().map(|(i, c)| if i == 10 { value } else { c }).collect();
    let mut w = csv::Writer::from_path(&p).unwrap();
    w.write_record(&h).unwrap();
    for x in &rows {
        w.write_record(x).unwrap();
    }
    w.flush().unwrap();
    format!("{name}/samples.csv")
}

#[test]
fn report_and_compare_refuse_non_finite_or_impossible_samples() {
    let d = tempfile::tempdir().unwrap();
    run_with_sample(d.path(), "good", "3.5");
    for v in ["inf", "NaN", "1e400", "-inf", "0", "-5", "2e15"] {
        let f = run_with_sample(d.path(), "bad", v);
        let want = format!("error: {f}:3:11: ns_per_op '{v}' is not a number of ns above 0 and at most 1e15");
        let html = "cmp.html";
        for args in [&["report", "bad"][..], &["compare", "good", "bad", "--html", html], &["compare", "bad", "good"]] {
            let e = one_error(&lwcbench(args, d.path()));
            assert_eq!(e, want, "{args:?}");
        }
        assert!(!d.path().join(html).exists(), "no comparison page");
        std::fs::remove_dir_all(d.path().join("bad")).unwrap();
    }
    // the good run is compared (so the value is what fails above)
    let o = lwcbench(&["compare", "good", "good", "--html", "cmp.html"], d.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

// ---- item 14: dataset cells, names and float32 --------------------------------------------------

fn dataset_error(csv: &str, want: &str) {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("s.csv"), csv).unwrap();
    let args = ["run", "-q", "-o", "out", "--cipher", "ChaCha20/rustcrypto", "--dataset", "s.csv", "--readings", "2"];
    let e = one_error(&lwcbench(&args, d.path()));
    assert_eq!(e, format!("error: {want}"));
    assert!(!d.path().join("out").exists());
}

#[test]
fn dataset_extra_cells_names_and_float32_overflow_are_refused() {
    dataset_error("time,a\n1,2\n2,3,4\n", "s.csv:3:3: cell '4' is beyond the header's 2 columns");
    dataset_error("time,,b\n1,2,3\n", "s.csv:1:2: column 2 has no name");
    dataset_error("time,a,A [V]\n1,2,3\n", "s.csv:1:3: column name 'A' repeats column 2");
    dataset_error(
        "time,a\n1,2\n2,1e39\n",
        "s.csv:3:2: 1e39 in column 'a' does not fit in float32 (largest ±3.4028235e38; use --encoding int32:SCALE)",
    );
    // `lwcbench link` devices send float32 readings: refused before anything is sent
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("s.csv"), "a,b\n1,2\n3,-4e38\n").unwrap();
    let e = one_error(&lwcbench(&["link", "-o", "o", "--dataset", "s.csv", "--messages", "1"], d.path()));
    assert_eq!(e, "error: s.csv:3:2: -4e38 in column 'b' does not fit in float32 (largest ±3.4028235e38)");
    assert!(!d.path().join("o").exists());
}
