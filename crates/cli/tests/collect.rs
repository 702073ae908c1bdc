//! `lwcbench collect --from-log` on the hand-written logs of crates/engine/tests/board-logs
//! (their rows are checked value by value in crates/engine/src/collect/tests.rs).
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn logs() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../engine/tests/board-logs")
}

fn collect(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lwcbench"))
        .arg("collect")
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("binary runs")
}

#[test]
fn noisy_log_to_result_files_and_report() {
    let d = tempfile::tempdir().unwrap();
    let log = logs().join("noisy.log");
    let o = collect(&["--from-log", log.to_str().unwrap(), "-o", "out"], d.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("collected 4 sample and 2 warm-up lines; 0 malformed"), "{err}");
    let rows: Vec<csv::StringRecord> =
        csv::Reader::from_path(d.path().join("out/samples.csv")).unwrap().records().map(|r| r.unwrap()).collect();
    assert_eq!(rows.len(), 4);
    let run: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.path().join("out/run.json")).unwrap()).unwrap();
    assert_eq!(run["machine"]["hostname"], "demo");
    assert_eq!(run["preset"], "board:demo");
    let r =
        Command::new(env!("CARGO_BIN_EXE_lwcbench")).args(["report", "out"]).current_dir(d.path()).output().unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let html = std::fs::read_to_string(d.path().join("out/report.html")).unwrap();
    assert!(html.contains("Trivium") && html.contains("Cortex-M0+ @ 125 MHz"));
}

#[test]
fn truncated_and_corrupted_logs_fail_cleanly() {
    for name in ["truncated.log", "corrupted.log", "lost-line.log", "bad-run-crc.log"] {
        let d = tempfile::tempdir().unwrap();
        let log = logs().join(name);
        let o = collect(&["--from-log", log.to_str().unwrap(), "-o", "out"], d.path());
        assert!(!o.status.success(), "{name} should fail");
        let err = String::from_utf8_lossy(&o.stderr);
        let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
        assert_eq!(errors.len(), 1, "{name}: {err}");
        assert!(errors[0].contains("truncated") && errors[0].contains("--allow-truncated"), "{name}: {}", errors[0]);
        assert!(
            !d.path().join("out/run.json").exists() && !d.path().join("out/samples.csv").exists(),
            "{name} wrote files"
        );
        // allowed: the valid lines are written and the truncation is a note
        let o = collect(&["--from-log", log.to_str().unwrap(), "-o", "out", "--allow-truncated"], d.path());
        assert!(o.status.success(), "{name}: {}", String::from_utf8_lossy(&o.stderr));
        let run = std::fs::read_to_string(d.path().join("out/run.json")).unwrap();
        assert!(run.contains("TRUNCATED: "), "{name}");
    }
}

#[test]
fn bad_input_is_one_error_line() {
    let d = tempfile::tempdir().unwrap();
    let o = collect(&["--from-log", "nope.log"], d.path());
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).starts_with("error: --from-log: nope.log:"));
    std::fs::write(d.path().join("empty.log"), "just noise\n").unwrap();
    let o = collect(&["--from-log", "empty.log"], d.path());
    assert!(String::from_utf8_lossy(&o.stderr).contains("error: log empty.log: no valid header line"));
    let o = collect(&["--port", "/dev/lwcbench-no-such-port"], d.path());
    assert!(String::from_utf8_lossy(&o.stderr).contains("error: --port: cannot open /dev/lwcbench-no-such-port"));
    assert!(std::fs::read_dir(d.path()).unwrap().count() == 1, "nothing but the input file");
}

/// One log line with its CRC (the collector's own crc32: the CRC is not what is tested here).
fn line(body: &str) -> String {
    format!("{body} *{:08x}", lwcbench_engine::collect::crc32(body.as_bytes()))
}

/// A valid one-group log whose header carries `board`, `mcu` and an extra field (%-encoded
/// text) and whose sample lines name the cipher `cipher`.
fn log_with(board: &str, mcu: &str, cipher: &str) -> String {
    let h = format!(
        "LWCB H 1 board={board} mcu={mcu} cpu_hz=1000000 tick_hz=1000000 timer=t cycles=none reps=1 warmup=0 \
         groups=1 min_sample_ticks=1 seed=1 ciphers={cipher}/ref/C firmware=1 note={board}"
    );
    let s = format!("LWCB S 0 {cipher} ref C stream init s,s 0 random 0 1 10 -");
    let crc = lwcbench_engine::collect::crc32(format!("{s}\n").as_bytes());
    [line(&h), line(&s), line(&format!("LWCB E samples=1 warmup=0 crc={crc:08x}"))].join("\n") + "\n"
}

#[test]
fn hostile_log_text_is_escaped_in_the_report() {
    // board=</title><script>… must reach <title> escaped
    let d = tempfile::tempdir().unwrap();
    let script = "%3C/title%3E%3Cscript%3Ealert(1)%3C/script%3E%22%27";
    std::fs::write(d.path().join("h.log"), log_with(script, script, "X")).unwrap();
    let o = collect(&["--from-log", "h.log", "-o", "out"], d.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let html = std::fs::read_to_string(d.path().join("out/report.html")).unwrap();
    assert!(!html.to_lowercase().contains("<script"), "script injected");
    assert!(html.contains("&lt;/title&gt;&lt;script&gt;"), "the name is shown, escaped");
    assert!(html.starts_with("<!DOCTYPE html>") && html.contains("<title>lwcbench report — board:&lt;/title&gt;"));
}

#[test]
fn formulas_and_control_characters_from_a_log_are_refused() {
    // CSV cells from the log must not start a spreadsheet formula; terminal text from the log
    // must not carry escape sequences. Both lines are malformed: nothing is written.
    for (board, cipher) in [("b", "%3DHYPERLINK(%22http://x%22)"), ("b", "@SUM(A1)"), ("%1B%5B2J", "X")] {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("h.log"), log_with(board, "m", cipher)).unwrap();
        let o = collect(&["--from-log", "h.log", "-o", "out"], d.path());
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{cipher}: {err}");
        assert!(!err.contains('\u{1b}'), "escape sequence reached the terminal: {err:?}");
        assert!(!d.path().join("out").exists());
    }
}

#[test]
fn interleaved_runs_are_refused_even_with_allow_truncated() {
    // interleaved.log (make_logs.py): run A's header (tick_hz=1000) and lines, then run B's
    // header with A's and B's lines mixed; B's seq 1 on line 7 goes back after A's seq 2.
    // Converting those samples with B's header would be wrong: one error line naming line 7.
    let d = tempfile::tempdir().unwrap();
    let log = logs().join("interleaved.log");
    for extra in [&[][..], &["--allow-truncated"][..]] {
        let mut args = vec!["--from-log", log.to_str().unwrap(), "-o", "out"];
        args.extend_from_slice(extra);
        let o = collect(&args, d.path());
        assert!(!o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let err = String::from_utf8_lossy(&o.stderr).to_string();
        let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
        assert_eq!(errors.len(), 1, "{err}");
        assert!(errors[0].contains("line 7: seq 1 repeats or goes back") && errors[0].contains("interleaved"), "{err}");
        assert!(!d.path().join("out").exists(), "{err}");
    }
}

#[test]
fn port_collects_the_run_its_kick_started_and_not_a_cut_off_second_one() {
    // A board that answered a second kick too: after the run's end line come its ready line
    // and the first 30 bytes of the next run's header, where the capture stops.
    let good = std::fs::read_to_string(logs().join("good.log")).unwrap();
    let hdr = good.lines().next().unwrap();
    let stream = format!("{good}{}\n{}", line("LWCB I ready: send any byte to start"), &hdr[..30]);
    let (mut m, _s, name) = crate::collect_power::pty();
    let d = tempfile::tempdir().unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_lwcbench"))
        .args(["collect", "--port", &name, "--timeout", "60", "--save-log", "cap.log", "-o", "out"])
        .current_dir(d.path())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut pfd = libc::pollfd { fd: std::os::fd::AsRawFd::as_raw_fd(&m), events: libc::POLLIN, revents: 0 };
    // SAFETY: one valid pollfd.
    assert_eq!(unsafe { libc::poll(&mut pfd, 1, 20_000) }, 1, "no kick from the collector");
    std::io::Write::write_all(&mut m, stream.as_bytes()).unwrap();
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("collected 4 sample and 2 warm-up lines; 0 malformed"), "{err}");
    assert!(err.contains("after the run's end line are not parsed"), "{err}");
    let rows = csv::Reader::from_path(d.path().join("out/samples.csv")).unwrap().records().count();
    assert_eq!(rows, 4);
    // The saved capture keeps everything the port gave, the cut-off header too.
    assert!(std::fs::read_to_string(d.path().join("cap.log")).unwrap().ends_with(&hdr[..30]));
}
