//! Replay protection per key (issue 37 items 2 and 4), from the binary: the key's accepted
//! marks (`KEY.accepted`) refuse a counter state restored from a backup, and the gateway's
//! reuse alarm fires when a rolled-back device seals other readings under accepted counters.
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn lwcbench(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lwcbench")).args(args).current_dir(cwd).output().expect("binary runs")
}

fn ok(o: &Output) {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// Run 1 and run 2 under key K (2 devices, 10 readings each; counters 0..=9, then 1024..=1033
/// from the next block); K.counters restored to its copy from after run 1 says the devices
/// would seal from 1024 again, at or below the accepted 1033: run 3 is refused with both
/// numbers and both files, and nothing of it is written. Before the marks, run 3 ran and sealed
/// counters 1024..=1033 a second time.
#[test]
fn a_session_refuses_a_counter_state_restored_from_a_backup() {
    let d = tempfile::tempdir().unwrap();
    let run = |out: &str| {
        lwcbench(
            &["link", "--key-file", "K", "-o", out, "--devices", "2", "--messages", "10", "--interval", "1ms"],
            d.path(),
        )
    };
    ok(&run("o1"));
    let fp = lwcbench_link::wire::keys::MasterKey::read(&d.path().join("K")).unwrap().fingerprint();
    let acc = d.path().join("K.accepted");
    let want = |top: u64| format!("lwcbench-link-accepted v1\nkey {fp}\nsensor 0 {top}\nsensor 1 {top}\n");
    assert_eq!(std::fs::read_to_string(&acc).unwrap(), want(9));
    let mut csv = csv::Reader::from_path(d.path().join("o1/link_summary.csv")).unwrap();
    let head = csv.headers().unwrap().clone();
    let row = csv.records().next().unwrap().unwrap();
    for col in ["reuse_alarms", "late_alarms"] {
        let i = head.iter().position(|h| h == col).unwrap_or_else(|| panic!("no {col} column: {head:?}"));
        assert_eq!(&row[i], "0", "{col}");
    }
    let backup = std::fs::read(d.path().join("K.counters")).unwrap();
    ok(&run("o2"));
    assert_eq!(std::fs::read_to_string(&acc).unwrap(), want(1033));
    std::fs::write(d.path().join("K.counters"), backup).unwrap();
    let o = run("o3");
    assert!(!o.status.success(), "a rolled-back counter state ran");
    let err = String::from_utf8_lossy(&o.stderr);
    let errs: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errs.len(), 1, "{err}");
    for want in ["K.counters", "K.accepted", "from counter 1024", "accepted up to 1033", "restored from a backup?"] {
        assert!(errs[0].contains(want), "{want}: {}", errs[0]);
    }
    assert!(!d.path().join("o3").exists());
}

/// `link gateway` running on master k; device 1 (its own key from `link provision`, durable,
/// with its capture) sends 5 readings under counters 1..=5 (provisioning reserved 0 in k's
/// state); its counter state is then put back to the copy from before. With
/// `--gateway-accepted k.accepted` the rolled-back device is refused before it seals (nothing
/// captured, nothing sent): its state says 1, the gateway accepted up to 5. Without it (the old
/// behaviour) it seals: the capture's 5 frames again (same bytes: plain replays), then the next
/// 5 readings under counters 1..=5 once more. Those verify but differ from the accepted frames:
/// 5 reuse alarms, in the gateway's final line; only the first 5 readings are stored.
#[test]
fn a_rolled_back_device_is_refused_or_raises_the_reuse_alarm() {
    let d = tempfile::tempdir().unwrap();
    ok(&lwcbench(&["link", "keygen", "--key-file", "k"], d.path()));
    ok(&lwcbench(&["link", "provision", "--key-file", "k", "--device", "1", "--out", "dev1.key"], d.path()));
    let broker = lwcbench_link::transport::broker::embedded().unwrap();
    let url = format!("mqtt://127.0.0.1:{}", broker.port);
    let mut gw = Command::new(env!("CARGO_BIN_EXE_lwcbench"))
        .args(["link", "gateway", "--session", "r", "--devices", "1", "--key-file", "k", "--store", "s.db"])
        .args(["--broker", &url])
        .current_dir(d.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(gw.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    assert_eq!(line.trim(), "ready");
    let state = d.path().join("dev1.key.counters");
    let before = std::fs::read(&state).unwrap();
    let device = |extra: &[&str]| {
        let args = ["link", "device", "--id", "1", "--session", "r", "--broker", &url, "--key-file", "dev1.key"];
        let more = ["--capture", "cap", "--durable", "--messages", "5", "--interval", "1ms"];
        lwcbench(&args.into_iter().chain(more).chain(extra.iter().copied()).collect::<Vec<_>>(), d.path())
    };
    ok(&device(&[]));
    // the gateway's marks reach k.accepted within its write interval (150 ms)
    let acc = d.path().join("k.accepted");
    let t0 = Instant::now();
    while !std::fs::read_to_string(&acc).is_ok_and(|t| t.ends_with("sensor 1 5\n")) {
        assert!(t0.elapsed() < Duration::from_secs(20), "k.accepted: {:?}", std::fs::read_to_string(&acc));
        std::thread::sleep(Duration::from_millis(50));
    }
    std::fs::write(&state, before).unwrap();
    let captured = std::fs::read_to_string(d.path().join("cap")).unwrap();
    let o = device(&["--gateway-accepted", "k.accepted"]);
    assert!(!o.status.success(), "the rolled-back device ran with --gateway-accepted");
    let err = String::from_utf8_lossy(&o.stderr);
    let errs: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errs.len(), 1, "{err}");
    for want in ["--gateway-accepted", "dev1.key.counters", "k.accepted", "from counter 1", "accepted up to 5"] {
        assert!(errs[0].contains(want), "{want}: {}", errs[0]);
    }
    assert_eq!(std::fs::read_to_string(d.path().join("cap")).unwrap(), captured, "the refused device captured");
    // a marks file of another master is refused too
    std::fs::write(
        d.path().join("other.accepted"),
        "lwcbench-link-accepted v1\nkey 00112233445566778899aabbccddeeff\n",
    )
    .unwrap();
    let o = device(&["--gateway-accepted", "other.accepted"]);
    assert!(!o.status.success() && String::from_utf8_lossy(&o.stderr).contains("written for another key"));
    ok(&device(&[]));
    // the gateway has checked all 15 frames once its store holds 5 rows and a moment passed
    let t0 = Instant::now();
    let stored = || {
        rusqlite::Connection::open(d.path().join("s.db"))
            .and_then(|c| c.query_row("SELECT COUNT(*) FROM readings", [], |r| r.get::<_, i64>(0)))
            .unwrap_or(0)
    };
    while stored() < 5 && t0.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(500));
    // SAFETY: signals the child this test started.
    unsafe { libc::kill(gw.id() as i32, libc::SIGTERM) };
    let mut last = String::new();
    for l in out.lines() {
        last = l.unwrap();
    }
    let st = gw.wait().unwrap();
    let mut err = String::new();
    std::io::Read::read_to_string(&mut gw.stderr.take().unwrap(), &mut err).unwrap();
    assert!(st.success(), "{err}");
    let v: serde_json::Value = serde_json::from_str(&last).unwrap_or_else(|_| panic!("{last}"));
    assert_eq!((v["reuse_alarms"].as_u64(), v["stored"].as_u64()), (Some(5), Some(5)), "{v}");
    assert_eq!(v["refused_by_reason"]["replay"].as_u64(), Some(10), "{v}");
    assert!(err.contains("alarm: device 1: counter 1 arrived again with other bytes and a valid tag"), "{err}");
}
