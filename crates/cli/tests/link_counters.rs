//! Counter state that cannot be misused, end to end: one process per (key, device),
//! one key's counters continued across runs with different `-o`, and the device's checks of its
//! capture file (docs/link.md, "Counter persistence rule" and "Faults").
use lwcbench_link::wire::frame::Proto;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn lwcbench(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lwcbench")).args(args).current_dir(cwd).output().expect("binary runs")
}

/// The one `error:` line of a failed run.
fn one_error(o: &Output) -> String {
    assert!(!o.status.success(), "should fail");
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(lines.len(), 1, "{err:?}");
    lines[0].to_string()
}

fn new_key(p: &Path) -> lwcbench_link::wire::keys::MasterKey {
    let m = lwcbench_link::wire::keys::MasterKey::random();
    m.write_new(p).unwrap();
    m
}

/// `link provision` of `device` from the master `key` into `out` (in `cwd`).
fn provision(cwd: &Path, key: &str, device: u32, out: &str) {
    let o = lwcbench(&["link", "provision", "--key-file", key, "--device", &device.to_string(), "--out", out], cwd);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// Two processes sealing as one device would each hand out the same counters (and each rewrite
/// the file from its own copy): while the first runs, a second as the same device is refused; a
/// process as another device runs beside it with its own key and state.
#[test]
fn a_second_process_as_one_device_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let key = d.path().join("master.key");
    let o = lwcbench(&["link", "keygen", "--key-file", key.to_str().unwrap()], d.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(d.path().join("master.key.counters").is_file(), "keygen writes the key's counter state");
    provision(d.path(), "master.key", 1, "dev1.key");
    provision(d.path(), "master.key", 2, "dev2.key");
    let ctr = d.path().join("dev1.key.counters");
    let broker = lwcbench_link::transport::broker::embedded().unwrap();
    let url = format!("mqtt://127.0.0.1:{}", broker.port);
    let cap = d.path().join("cap1");
    let args = |id: &str, cap: &Path, messages: &str| -> Vec<String> {
        let (k, cap) = (d.path().join(format!("dev{id}.key")), cap.display());
        format!("link device --session s --broker {url} --key-file {} --capture {cap}", k.display())
            .split_whitespace()
            .chain(["--messages", messages, "--interval", "1ms"])
            .map(str::to_string)
            .collect()
    };
    let mut first = Command::new(env!("CARGO_BIN_EXE_lwcbench"))
        .args(args("1", &cap, "100000000"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Sealing has started once the capture has a frame: the device is leased by then.
    let t0 = Instant::now();
    while std::fs::read_to_string(&cap).map(|t| t.lines().count()).unwrap_or(0) < 5 {
        assert!(t0.elapsed() < Duration::from_secs(30), "the first device did not send");
        assert!(first.try_wait().unwrap().is_none(), "the first device exited early");
        std::thread::sleep(Duration::from_millis(5));
    }
    let twin =
        Command::new(env!("CARGO_BIN_EXE_lwcbench")).args(args("1", &d.path().join("cap2"), "50")).output().unwrap();
    let other =
        Command::new(env!("CARGO_BIN_EXE_lwcbench")).args(args("2", &d.path().join("cap3"), "5")).output().unwrap();
    first.kill().unwrap();
    first.wait().unwrap();
    let e = one_error(&twin);
    assert!(e.contains(ctr.to_str().unwrap()) && e.contains("device 1 is in use by another process"), "{e}");
    assert!(!d.path().join("cap2").exists(), "the refused device sealed nothing");
    assert!(other.status.success(), "{}", String::from_utf8_lossy(&other.stderr));
    // Once the first process is gone, device 1 may seal again, after every counter it used.
    let used = std::fs::read_to_string(&cap).unwrap().lines().count() as u64;
    let o = Command::new(env!("CARGO_BIN_EXE_lwcbench")).args(args("1", &cap, "5")).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let last = std::fs::read_to_string(&cap).unwrap().lines().last().unwrap().to_string();
    // the counter: frame bytes 8..16 (docs/link.md "Frame format"), hex digits 16..32
    let counter = u64::from_str_radix(&last[16..32], 16).unwrap();
    assert!(counter >= used, "device 1 restarted at {counter}, below the {used} frames it sealed");
}

/// A device holds only its own key: `link device` refuses the master key (before the key
/// hierarchy every device held it, so one compromised sensor yielded every device's keys), and
/// a device key for device 1 refuses to seal as device 2.
#[test]
fn link_device_refuses_the_master_key_and_another_device_id() {
    let d = tempfile::tempdir().unwrap();
    let o = lwcbench(&["link", "keygen", "--key-file", "m"], d.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let dev = |key: &str, id: &str| {
        lwcbench(
            &["link", "device", "--id", id, "--session", "s", "--broker", "mqtt://127.0.0.1:1", "--key-file", key],
            d.path(),
        )
    };
    let e = one_error(&dev("m", "1"));
    assert!(e.contains("m is a master key; a device holds only its own key") && e.contains("link provision"), "{e}");
    provision(d.path(), "m", 1, "d1");
    let e = one_error(&dev("d1", "2"));
    assert!(e.contains("--id: the device key is sensor 1's; it cannot seal or open as 2"), "{e}");
    // provisioning device 1 again would make a second counter authority for its keys
    let o = lwcbench(&["link", "provision", "--key-file", "m", "--device", "1", "--out", "again"], d.path());
    let e = one_error(&o);
    assert!(e.contains("sensor device 1 is already provisioned"), "{e}");
    // and the master's holder no longer seals as device 1
    let o = lwcbench(&["link", "--key-file", "m", "-o", "o", "--devices", "2", "--messages", "1"], d.path());
    let e = one_error(&o);
    assert!(e.contains("sensor device 1 is provisioned to its own device key"), "{e}");
}

/// A device key without its counter state: refused (it may have sealed before), and no state
/// is created.
#[test]
fn a_key_without_its_state_is_refused_by_link_device() {
    let d = tempfile::tempdir().unwrap();
    new_key(&d.path().join("m"));
    lwcbench_link::device::counter::CounterStore::open(
        &d.path().join("m.counters"),
        64,
        &lwcbench_link::wire::keys::MasterKey::read(&d.path().join("m")).unwrap(),
    )
    .unwrap()
    .save()
    .unwrap();
    provision(d.path(), "m", 1, "k");
    std::fs::remove_file(d.path().join("k.counters")).unwrap();
    let o =
        lwcbench(&["link", "device", "--session", "s", "--broker", "mqtt://127.0.0.1:1", "--key-file", "k"], d.path());
    let e = one_error(&o);
    assert!(e.contains("counter state k.counters: missing; it is written together with the device key"), "{e}");
    assert!(!d.path().join("k.counters").exists());
}

/// The (device, counter) pairs a run stored, read from its SQLite store (not from the counter code).
fn stored_pairs(db: &Path) -> BTreeSet<(i64, i64)> {
    let c = rusqlite::Connection::open(db).unwrap();
    let mut st = c.prepare("SELECT device, counter FROM readings").unwrap();
    let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap();
    rows.map(|r| r.unwrap()).collect()
}

/// One key, two output directories: the second run continues the key's counters (state beside
/// the key file), so no (device, counter) pair is sealed twice under the key.
#[test]
fn two_runs_with_one_key_and_different_out_never_share_a_counter() {
    let d = tempfile::tempdir().unwrap();
    let run_with = |key: &str, out: &str, extra: &[&str]| {
        let mut a =
            vec!["link", "--key-file", key, "-o", out, "--devices", "2", "--messages", "20", "--interval", "1ms"];
        a.extend(extra);
        lwcbench(&a, d.path())
    };
    let run = |out: &str, extra: &[&str]| run_with("K", out, extra);
    for out in ["o1", "o2"] {
        let o = run(out, &[]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let (a, b) = (stored_pairs(&d.path().join("o1/link.db")), stored_pairs(&d.path().join("o2/link.db")));
    assert_eq!((a.len(), b.len()), (40, 40));
    let both: Vec<_> = a.intersection(&b).collect();
    assert!(both.is_empty(), "{} (device, counter) pairs sealed in both runs: {both:?}", both.len());
    assert!(d.path().join("K.counters").is_file() && !d.path().join("o1/state/master.key.counters").exists());
    // The key with a second state file elsewhere: refused (one counter authority per key).
    let e = one_error(&run("o3", &["--counter-state", "other"]));
    assert!(e.contains("other: --key-file K has its own counter state K.counters"), "{e}");
    assert!(!d.path().join("o3").exists() && !d.path().join("other").exists());
    // Another key on K's state: refused by the fingerprint.
    let e = one_error(&run_with("K2", "o4", &["--counter-state", "K.counters"]));
    assert!(e.contains("K.counters: line 2: written for another key"), "{e}");
    assert!(!d.path().join("K2").exists() && !d.path().join("o4").exists());
}

/// A capture with a frame on line 1, then `rest`.
fn capture_with(p: &Path, master: &lwcbench_link::wire::keys::MasterKey, rest: &[u8]) {
    let s = lwcbench_link::wire::suite::find("Ascon-AEAD128").unwrap();
    let k = master.cipher_key(Proto::Sensor, 3, s.id, s.key_len());
    let mut f = Vec::new();
    lwcbench_link::wire::suite::Keyed::new(&s, &k, Proto::Sensor, false)
        .unwrap()
        .seal(3, 0, b"reading", &mut f)
        .unwrap();
    let mut text = hex::encode(&f).into_bytes();
    text.push(b'\n');
    text.extend_from_slice(rest);
    std::fs::write(p, text).unwrap();
}

#[test]
fn a_device_checks_its_capture_before_it_seals() {
    let d = tempfile::tempdir().unwrap();
    let master = new_key(&d.path().join("m"));
    lwcbench_link::device::counter::CounterStore::open(&d.path().join("m.counters"), 64, &master)
        .unwrap()
        .save()
        .unwrap();
    provision(d.path(), "m", 3, "k");
    let (ctr, cap) = (d.path().join("k.counters"), d.path().join("cap"));
    let saved = std::fs::read(&ctr).unwrap();
    // Nothing listens on port 1: every check below comes before the device connects.
    let dev = |durable: bool| {
        let mut a = vec!["link", "device", "--session", "s", "--broker", "mqtt://127.0.0.1:1"];
        a.extend(["--key-file", "k", "--capture", "cap", "--messages", "5"]);
        if durable {
            a.push("--durable");
        }
        lwcbench(&a, d.path())
    };
    // Frames captured, state gone: counters would restart under the same key.
    std::fs::remove_file(&ctr).unwrap();
    capture_with(&cap, &master, b"");
    for durable in [false, true] {
        let e = one_error(&dev(durable));
        assert!(e.contains("counter state k.counters: missing"), "{e}");
        assert!(!ctr.exists());
    }
    // A damaged line (a non-UTF-8 byte) in the durable device's capture: named, not read as "nothing sent".
    std::fs::write(&ctr, saved).unwrap();
    capture_with(&cap, &master, b"00\xff11\n");
    let e = one_error(&dev(true));
    assert!(e.contains("--capture: cap: line 2: not a frame in hex"), "{e}");
}
