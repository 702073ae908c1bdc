//! `lwcbench collect --port BOARD --power-port LOGGER` end to end through two pseudo-terminals:
//! a board stream with marker lines and a power logger's stream of known energy (computed by
//! hand below), with clock drift between the two, dropped and corrupted lines, a logger that
//! starts late and a trigger window too short for any sample.
use std::fs::File;
use std::io::Write;
use std::os::fd::FromRawFd;
use std::process::{Command, Stdio};

use lwcbench_engine::collect::crc32;

fn line(body: &str) -> String {
    format!("{body} *{:08x}\n", crc32(body.as_bytes()))
}

/// A pseudo-terminal in raw mode: (master, slave path). The slave stays open so the master
/// never sees a hang-up.
pub(crate) fn pty() -> (File, File, String) {
    let (mut m, mut s) = (0, 0);
    // SAFETY: openpty writes two descriptors; the name, termios and winsize arguments may be null.
    let rc = unsafe { libc::openpty(&mut m, &mut s, std::ptr::null_mut(), std::ptr::null(), std::ptr::null()) };
    assert_eq!(rc, 0, "openpty");
    // SAFETY: `s` is an open terminal descriptor; the termios is fully written by tcgetattr.
    let name = unsafe {
        let mut t: libc::termios = std::mem::zeroed();
        assert_eq!(libc::tcgetattr(s, &mut t), 0);
        libc::cfmakeraw(&mut t);
        assert_eq!(libc::tcsetattr(s, libc::TCSANOW, &t), 0);
        let mut buf = [0 as libc::c_char; 128];
        assert_eq!(libc::ttyname_r(s, buf.as_mut_ptr(), buf.len()), 0);
        std::ffi::CStr::from_ptr(buf.as_ptr()).to_string_lossy().into_owned()
    };
    // SAFETY: both descriptors are open and owned by nothing else.
    unsafe { (File::from_raw_fd(m), File::from_raw_fd(s), name) }
}

/// One triggered batch, in board ticks (1 MHz: µs).
struct Batch {
    start: u64,
    end: u64,
    ops: u64,
    warm: bool,
    init: bool,
    rep: u32,
}

/// Two groups, warm-up 1 + reps 4 each: Trivium keystream 1024 bits (20 µs per operation:
/// 50 per ms) then Trivium init (10 µs per operation). Batch lengths 20 ms + 1.5 ms·j and gaps
/// 12 ms + (7j mod 5) ms differ, so the windows can only be matched one way. Batch 4 (keystream
/// rep 3) lasts 0.3 ms: no logger sample can fall in it.
fn batches() -> Vec<Batch> {
    let mut v = Vec::new();
    let mut t = 15_000u64;
    for j in 0..10u64 {
        let init = j >= 5;
        let mut dur = 20_000 + 1_500 * j;
        if j == 4 {
            dur = 300;
        }
        let per_op = if init { 10 } else { 20 };
        v.push(Batch {
            start: t,
            end: t + dur,
            ops: dur / per_op,
            warm: j % 5 == 0,
            init,
            rep: (j % 5).saturating_sub(1) as u32,
        });
        t += dur + 12_000 + (7 * j % 5) * 1_000;
    }
    v
}

fn board_stream(b: &[Batch]) -> String {
    let mut s = String::from("rst:0x1 (POWERON_RESET),boot:0x13\r\nets Jun  8 2016 00:22:57\r\n");
    s += &line("LWCB H 1 board=demo-esp32 mcu=Xtensa%20LX6 cpu_hz=240000000 tick_hz=1000000 timer=micros cycles=none reps=4 warmup=1 groups=2 min_sample_ticks=2000 seed=1 ciphers=Trivium/cpp/C%2B%2B");
    let (mut crc, mut ns, mut nw) = (0u32, 0, 0);
    for (i, x) in b.iter().enumerate() {
        let (sc, bits) = if x.init { ("init", 0) } else { ("keystream", 1024) };
        let marker = line(&format!("LWCB M {i} {i} {} {} {}", x.ops, x.start, x.end));
        // Batch 7's marker arrives corrupted (one character changed): counted, not used.
        s += &if i == 7 { marker.replacen("LWCB M 7 7", "LWCB M 7 8", 1) } else { marker };
        let t = if x.warm { "W" } else { "S" };
        let body = format!(
            "LWCB {t} {i} Trivium cpp C%2B%2B stream {sc} s,s {bits} random {} {} {} -",
            x.rep,
            x.ops,
            x.end - x.start
        );
        crc = lwcbench_engine::collect::crc32_update(crc, body.as_bytes());
        crc = lwcbench_engine::collect::crc32_update(crc, b"\n");
        s += &line(&body);
        if x.warm {
            nw += 1
        } else {
            ns += 1
        }
    }
    s + &line(&format!("LWCB E samples={ns} warmup={nw} crc={crc:08x}"))
}

/// The logger's clock: 400 ppm fast, and it starts 50 ms after the board's time 0 (after
/// batch 0 began: it misses batches 0 and 1) with its own zero.
const LATE: u64 = 50_000;
fn logger_time(board_us: f64) -> f64 {
    (board_us - LATE as f64) * 1.0004 + 123.0
}

/// INA219, 0.1 Ω ±1 %, 12 bit: a sample every 1,064 µs of logger time. 5.0 V (1250 counts of
/// 4 mV); 40 mA idle (400 counts of 10 µV / 0.1 Ω), 90 mA while a batch runs (900), with ±1
/// count of alternating noise. Net power in a batch: 5.0 V × 50 mA = 0.25 W.
fn logger_stream(b: &[Batch]) -> String {
    let mut s =
        line("LWCP H 1 sensor=ina219 shunt_uohm=100000 shunt_tol_ppm=10000 tick_hz=1000000 conv_us=532 avg=1 pin=2");
    // The logger sees the edges after it starts: the fall of batch 1 (running when it starts),
    // then both edges of batches 2 to 9.
    let mut edges: Vec<(f64, bool)> = b
        .iter()
        .flat_map(|x| [(x.start, true), (x.end, false)])
        .filter(|e| e.0 >= LATE)
        .map(|(t, high)| (logger_time(t as f64), high))
        .collect();
    edges.reverse();
    let end = logger_time(b.last().unwrap().end as f64 + 30_000.0);
    let (mut seq, mut rises, mut t, mut n) = (0u64, 0u64, 500.0f64, 0u64);
    while t < end {
        while let Some(&(et, high)) = edges.last() {
            if et > t {
                break;
            }
            rises += high as u64;
            let l = line(&format!("LWCP T {seq} {rises} {} {}", high as u8, et.round() as u64));
            // The rising edge of window 6 (batch 8) is lost.
            if !(high && rises == 7) {
                s += &l;
            }
            seq += 1;
            edges.pop();
        }
        let board_t = (t - 123.0) / 1.0004 + LATE as f64;
        let high = b.iter().any(|x| x.start as f64 <= board_t && board_t < x.end as f64);
        let noise: i64 = if n % 2 == 0 { 1 } else { -1 };
        let shunt = if high { 900 } else { 400 } + noise;
        let l = line(&format!("LWCP P {seq} {} {rises} {} 1250 {shunt}", t.round() as u64, high as u8));
        n += 1;
        seq += 1;
        if n % 13 == 5 {
            // dropped
        } else if n == 40 {
            s += &l.replacen("1250", "1251", 1); // corrupted in transit: the CRC no longer matches
        } else {
            s += &l;
        }
        t += 1064.0;
    }
    s
}

#[test]
fn two_ptys_recover_the_known_energy_per_operation() {
    let b = batches();
    let (board_txt, logger_txt) = (board_stream(&b), logger_stream(&b));
    let (mut bm, _bs, bname) = pty();
    let (mut lm, _ls, lname) = pty();
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("run");
    let child = Command::new(env!("CARGO_BIN_EXE_lwcbench"))
        .args(["collect", "--port", &bname, "--power-port", &lname, "--timeout", "60", "-o"])
        .arg(&out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait for the collector's first kick on the board port: both ports are open then.
    let mut pfd = libc::pollfd { fd: std::os::fd::AsRawFd::as_raw_fd(&bm), events: libc::POLLIN, revents: 0 };
    // SAFETY: one valid pollfd.
    assert_eq!(unsafe { libc::poll(&mut pfd, 1, 20_000) }, 1, "no kick from the collector");
    lm.write_all(logger_txt.as_bytes()).unwrap();
    bm.write_all(board_txt.as_bytes()).unwrap();
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    // The corrupted marker and logger line are reported with their line; the lost lines counted.
    assert!(err.contains("malformed line 18: checksum mismatch"), "{err}");
    assert!(
        err.lines().any(|l| l.contains("power logger on ") && l.contains(": checksum mismatch (line says")),
        "{err}"
    );
    // Batch 4 had no sample in its window: refused, with the operations the next run needs.
    assert!(err.contains("batch 4 not measured: 0 power sample(s)"), "{err}");
    assert!(err.contains("the next run needs at least"), "{err}");
    let energy = std::fs::read_to_string(out.join("energy.csv")).unwrap();
    let mut r = csv::Reader::from_reader(energy.as_bytes());
    let rows: Vec<std::collections::HashMap<String, String>> = r.deserialize().map(|x| x.unwrap()).collect();
    assert_eq!(rows.len(), 2, "{energy}");
    let f = |row: &std::collections::HashMap<String, String>, k: &str| row[k].parse::<f64>().unwrap();
    for row in &rows {
        // Hand computation: 0.25 W × 20 µs = 5 µJ per keystream operation (1024 bits = 128 B:
        // 39.0625 nJ/B); 0.25 W × 10 µs = 2.5 µJ per init. The logger's clock runs 400 ppm
        // fast, so it measures 0.04 % more; the stated uncertainty must cover that.
        let (want, batches) = if row["scenario"] == "init" { (2.5e-6, 3) } else { (5e-6, 2) };
        let (e, u) = (f(row, "energy_per_op_j_measured"), f(row, "energy_per_op_u_j"));
        assert!((e - want).abs() <= u, "{}: {e} ± {u}, want {want}", row["scenario"]);
        assert!(u < 0.05 * want, "uncertainty {u} too wide to mean anything");
        assert_eq!(row["batches"].parse::<usize>().unwrap(), batches, "{energy}");
        assert!(row["energy_source"].starts_with("measured:ina219"), "{energy}");
        if row["scenario"] == "keystream" {
            let (eb, ub) = (f(row, "energy_per_byte_j_measured"), f(row, "energy_per_byte_u_j"));
            assert!((eb - 39.0625e-9).abs() <= ub, "{eb} ± {ub}");
        } else {
            assert_eq!(row["energy_per_byte_j_measured"], "");
        }
    }
    let run = std::fs::read_to_string(out.join("run.json")).unwrap();
    assert!(run.contains("energy.csv: energy is MEASURED") && run.contains("energy_batches.csv"), "{run}");
}

#[test]
fn bad_power_input_is_one_error_line_and_nothing_written() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("board.log"), board_stream(&batches())).unwrap();
    std::fs::write(d.path().join("bad.log"), line("LWCP H 1 sensor=ina219 shunt_uohm=0")).unwrap();
    std::fs::write(d.path().join("good.log"), logger_stream(&batches())).unwrap();
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_lwcbench")).arg("collect").args(args).current_dir(d.path()).output().unwrap()
    };
    for (args, want) in [
        (
            &["--from-log", "board.log", "--power-from-log", "bad.log", "-o", "out"][..],
            "error: power log bad.log: line 1: header shunt_uohm=0 is not from 1 µΩ to 1 kΩ\n",
        ),
        (
            &["--from-log", "board.log", "--power-from-log", "good.log", "--power-min-samples", "1", "-o", "out"],
            "error: --power-min-samples: 1 is not from 2 to 1000000\n",
        ),
        (
            &["--from-log", "board.log", "--power-min-samples", "3", "-o", "out"],
            "error: --power-min-samples: needs a power logger (--power-port or --power-from-log)\n",
        ),
        (
            &["--from-log", "board.log", "--power-from-log", "good.log", "--power-min-samples", "40", "-o", "out"],
            "error: power log good.log: no batch could be measured",
        ),
    ] {
        let o = run(args);
        let err = String::from_utf8_lossy(&o.stderr);
        let last = err.lines().last().unwrap_or("");
        assert!(!o.status.success() && format!("{last}\n").starts_with(want), "{args:?}: {err}");
        assert!(!d.path().join("out").exists(), "{args:?} wrote a result");
        if args.contains(&"40") {
            assert!(last.contains("the next run needs at least"), "{last}");
        }
    }
}
