//! `lwcbench link goose` through the CLI: bad options and no root (one `error:` line, nothing
//! written; the no-root exit status is 2), and as root a run whose files account for every frame,
//! and the ics-latency preset's "in the cycle" rows.
use super::link_netcond::{is_root, lwcbench};
use super::required;
use std::process::Command;

#[test]
fn goose_bad_options_get_one_error_line() {
    let d = tempfile::tempdir().unwrap();
    let cases: [(&[&str], &str); 4] = [
        (&["--size", "200"], "error: --size: 200 is not 160 or 1522"),
        (&["--frames", "0"], "error: --frames: 0 is not in 1..=1000000"),
        (&["--cipher", "Trivium"], "error: --cipher: Trivium/rust is a stream cipher"),
        (&["--cipher", "nope"], "error: --cipher: 'nope' is not a link cipher"),
    ];
    for (args, want) in cases {
        let mut all = vec!["link", "goose", "-o", "out"];
        all.extend_from_slice(args);
        let o = lwcbench(&all, d.path());
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{args:?} succeeded");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with(want), "{args:?}: {err}");
        assert!(!d.path().join("out").exists(), "{args:?} left files");
    }
}

const NO_ROOT: &str = "error: link goose needs root: raw Ethernet (AF_PACKET) sockets need CAP_NET_RAW, and the two network namespaces with their veth pair need CAP_SYS_ADMIN and CAP_NET_ADMIN (CAP_NET_RAW, CAP_NET_ADMIN, CAP_SYS_ADMIN missing); run it as root";

#[test]
fn goose_without_root_stops_with_one_line_and_status_2() {
    let d = tempfile::tempdir().unwrap();
    let o = if is_root() {
        // Drop to nobody without capabilities (util-linux setpriv).
        std::fs::set_permissions(d.path(), std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
        Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all", "--bounding-set=-all"])
            .arg(env!("CARGO_BIN_EXE_lwcbench"))
            .args(["link", "goose", "-o", "out"])
            .current_dir(d.path())
            .output()
            .expect("setpriv runs (util-linux)")
    } else {
        lwcbench(&["link", "goose", "-o", "out"], d.path())
    };
    assert_eq!(String::from_utf8_lossy(&o.stderr).trim_end(), NO_ROOT);
    assert_eq!(o.status.code(), Some(2));
    assert!(!d.path().join("out").exists(), "a refused run left its directory");
}

#[test]
fn goose_run_accounts_for_every_frame() {
    if !is_root() {
        required::missing("root (AF_PACKET and network namespaces)");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let o = lwcbench(&["link", "goose", "--cipher", "ChaCha20-Poly1305", "--frames", "50", "-o", "out"], d.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = d.path().join("out");
    for f in ["link_goose.csv", "link_goose_runs.csv", "summary.md", "report.html", "run.json"] {
        assert!(out.join(f).is_file(), "{f} missing");
    }
    let mut r = csv::Reader::from_path(out.join("link_goose_runs.csv")).unwrap();
    let hd = r.headers().unwrap().clone();
    let rows: Vec<csv::StringRecord> = r.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 2, "one row per size");
    let g = |row: &csv::StringRecord, n: &str| row[hd.iter().position(|h| h == n).unwrap()].to_string();
    for row in &rows {
        assert_eq!((g(row, "plain_accepted"), g(row, "sealed_accepted")), ("50".into(), "50".into()));
        for c in ["plain_lost", "sealed_lost", "mismatched", "plain_duplicates", "sealed_refused"] {
            assert_eq!(g(row, c), "0", "{c}");
        }
    }
    let lat = std::fs::read_to_string(out.join("link_goose.csv")).unwrap();
    assert_eq!(lat.lines().count(), 1 + 4, "plain and sealed rows per size: {lat}");
    // A second run into the same directory continues the counters of the first.
    let first_last: u64 = rows.iter().map(|r| g(r, "last_counter").parse::<u64>().unwrap()).max().unwrap();
    let o = lwcbench(
        &["link", "goose", "--cipher", "ChaCha20-Poly1305", "--frames", "5", "--size", "160", "-o", "out", "--force"],
        d.path(),
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut r = csv::Reader::from_path(out.join("link_goose_runs.csv")).unwrap();
    let hd2 = r.headers().unwrap().clone();
    let row = r.records().next().unwrap().unwrap();
    let first: u64 = row[hd2.iter().position(|h| h == "first_counter").unwrap()].parse().unwrap();
    assert!(first > first_last, "counter {first} reused after {first_last}");
}

#[test]
fn ics_latency_preset_writes_in_cycle_rows() {
    if !is_root() {
        required::missing("root (AF_PACKET and network namespaces)");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let o = lwcbench(
        &[
            "run",
            "--preset",
            "ics-latency",
            "--cipher",
            "AES-128-GCM",
            "-n",
            "30",
            "--warmup",
            "1",
            "-o",
            "out",
            "--quiet",
        ],
        d.path(),
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = d.path().join("out");
    let text = std::fs::read_to_string(out.join("ics-cycle.csv")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    // GOOSE 160 and 1522 B, Modbus/TCP 12, 29 and 260 B: each plain and sealed.
    assert_eq!(lines.len(), 1 + 2 * 2 + 3 * 2, "{text}");
    assert!(lines[1..].iter().all(|l| l.contains("AES-128-GCM")), "{text}");
    assert_eq!(lines.iter().filter(|l| l.contains("\"GOOSE\"")).count(), 4, "{text}");
    assert_eq!(lines.iter().filter(|l| l.contains("\"Modbus/TCP\"")).count(), 6, "{text}");
    assert!(std::fs::read_to_string(out.join("report.html")).unwrap().contains("<h3>In the cycle</h3>"));
    assert!(std::fs::read_to_string(out.join("summary.md")).unwrap().contains("### In the cycle"));
}

/// The namespaces of the process `pid` (`lwcb-<pid>-<n>-a|b`, crates/netimpair).
fn namespaces_of(pid: u32) -> Vec<String> {
    let o = Command::new("ip").args(["netns", "list"]).output().expect("ip runs");
    let prefix = format!("lwcb-{pid}-");
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| n.starts_with(&prefix))
        .map(String::from)
        .collect()
}

#[test]
fn goose_stopped_by_a_signal_removes_its_namespaces() {
    use std::os::unix::process::{CommandExt, ExitStatusExt};
    use std::time::{Duration, Instant};
    if !is_root() {
        required::missing("root (AF_PACKET and network namespaces)");
        return;
    }
    for sig in [libc::SIGTERM, libc::SIGINT] {
        let d = tempfile::tempdir().unwrap();
        let mut c = Command::new(env!("CARGO_BIN_EXE_lwcbench"));
        c.args(["link", "goose", "--cipher", "ChaCha20-Poly1305", "--frames", "1000000", "--size", "160", "-o", "out"])
            .current_dir(d.path())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        // SAFETY: signal() only, between fork and exec. SIGINT starts ignored, as in a background
        // job of a non-interactive shell (`lwcbench link goose & kill -INT $!`).
        unsafe {
            c.pre_exec(|| {
                libc::signal(libc::SIGINT, libc::SIG_IGN);
                Ok(())
            });
        }
        let mut child = c.spawn().unwrap();
        let pid = child.id();
        let t0 = Instant::now();
        while namespaces_of(pid).len() < 2 {
            assert!(child.try_wait().unwrap().is_none(), "link goose ended before its namespaces existed");
            assert!(t0.elapsed() < Duration::from_secs(60), "no namespaces of {pid} after 60 s");
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(Duration::from_millis(300)); // into the frames
                                                        // SAFETY: kill of the child this test started and has not reaped.
        unsafe { libc::kill(pid as i32, sig) };
        let sent = Instant::now();
        while child.try_wait().unwrap().is_none() && sent.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(20));
        }
        let running = child.try_wait().unwrap().is_none();
        if running {
            let _ = child.kill();
        }
        let took = sent.elapsed();
        let o = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        let left = namespaces_of(pid);
        // A killed run's namespaces are for the next run's stale cleanup; this test's must go now.
        for n in &left {
            let _ = Command::new("ip").args(["netns", "del", n]).status();
        }
        assert!(!running, "signal {sig}: link goose still ran 10 s later: {err}");
        assert_eq!(o.status.signal(), Some(sig), "signal {sig}: {:?}: {err}", o.status);
        assert!(took < Duration::from_secs(5), "signal {sig}: stopped after {took:?}");
        assert_eq!(left, Vec::<String>::new(), "signal {sig}: namespaces left");
        let links = Command::new("ip").args(["-o", "link"]).output().unwrap();
        assert!(!String::from_utf8_lossy(&links.stdout).contains("lwcb0"), "a veth end in the host's namespace");
        let name = if sig == libc::SIGTERM { "SIGTERM" } else { "SIGINT" };
        assert_eq!(
            err.lines().last().unwrap_or_default(),
            format!("error: link goose: stopped by {name}; its network namespaces and veth pair are removed, no results written")
        );
        assert!(!d.path().join("out").exists(), "signal {sig}: a stopped run left its directory");
    }
}
