//! `--protocol oscore` end to end through the binary: the session, and a device process
//! SIGKILLed mid-run and restarted against a gateway process, which never sees a (kid, sequence
//! number) twice and stores every reading the device saw confirmed, once.
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn lwcbench() -> Command {
    Command::new(env!("CARGO_BIN_EXE_lwcbench"))
}

/// The numbers of the `stored seq N` lines of a device's stdout, read until `until` lines (or EOF).
fn seqs(child: &mut Child, until: usize) -> Vec<u64> {
    let out = child.stdout.take().unwrap();
    let mut v = Vec::new();
    for line in BufReader::new(out).lines().map_while(Result::ok) {
        if let Some(n) = line.strip_prefix("stored seq ") {
            v.push(n.parse().unwrap());
            if v.len() >= until {
                break;
            }
        }
    }
    v
}

#[test]
fn a_killed_and_restarted_oscore_device_never_repeats_a_sequence_number() {
    let d = tempfile::tempdir().unwrap();
    let key = d.path().join("master.key");
    lwcbench_link::device::counter::open_session(&key, &lwcbench_link::device::counter::beside_key(&key), 64).unwrap();
    let dev_key = d.path().join("device7.key");
    lwcbench_link::device::provision::provision(&key, lwcbench_link::wire::frame::Family::Sensor, 7, None, &dev_key)
        .unwrap();
    let db = d.path().join("o.db");
    let mut gw = lwcbench()
        .args(["link", "gateway", "--protocol", "oscore", "--cipher", "A128GCM", "--devices", "7", "--session", "k1"])
        .args(["--listen", "127.0.0.1:0", "--key-file"])
        .arg(&key)
        .arg("--store")
        .arg(&db)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut gw_out = BufReader::new(gw.stdout.take().unwrap()).lines();
    let ready = gw_out.next().unwrap().unwrap();
    let addr = ready.strip_prefix("ready ").unwrap_or_else(|| panic!("{ready}")).to_string();
    let device = |messages: &str| {
        lwcbench()
            .args(["link", "device", "--protocol", "oscore", "--cipher", "A128GCM", "--interval", "0"])
            .args(["--messages", messages, "--gateway", &addr, "--key-file"])
            .arg(&dev_key)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap()
    };
    // First run: killed after 37 confirmed readings (not a block boundary).
    let mut first = device("1000000");
    let before = seqs(&mut first, 37);
    first.kill().unwrap(); // SIGKILL
    first.wait().unwrap();
    assert_eq!(before.len(), 37);
    // Restart: the persisted state starts above every number the killed process may have used.
    let mut second = device("25");
    let after = seqs(&mut second, usize::MAX);
    assert!(second.wait().unwrap().success());
    assert_eq!(after.len(), 25);
    let top = *before.iter().max().unwrap();
    assert!(after.iter().all(|s| *s > top), "restart reused numbers: {after:?} after {top}");
    // SIGTERM: the gateway ends with its tally.
    unsafe { libc::kill(gw.id() as i32, libc::SIGTERM) };
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut last = String::new();
    for l in gw_out.map_while(Result::ok) {
        last = l;
        assert!(Instant::now() < deadline);
    }
    assert!(gw.wait().unwrap().success());
    let v: serde_json::Value = serde_json::from_str(&last).unwrap();
    let t = &v["tally"];
    // No (kid, seq) twice: a repeated number is refused by the window as replayed or too old.
    assert_eq!((t["replayed"].as_u64(), t["too_old"].as_u64(), t["bad_tag"].as_u64()), (Some(0), Some(0), Some(0)));
    // Every confirmed reading is stored, once: the killed process may have had one more in flight.
    let conn = rusqlite::Connection::open(&db).unwrap();
    let stored: Vec<i64> = conn
        .prepare("SELECT counter FROM readings ORDER BY counter")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let confirmed: Vec<i64> = before.iter().chain(&after).map(|s| *s as i64).collect();
    assert!(confirmed.iter().all(|s| stored.contains(s)), "{confirmed:?} not all in {stored:?}");
    assert!(stored.len() <= confirmed.len() + 1, "{} stored for {} confirmed", stored.len(), confirmed.len());
    assert_eq!(t["stored"].as_u64(), Some(stored.len() as u64));
}

#[test]
fn an_oscore_session_stores_every_reading_once_and_ascon_is_refused_with_the_reason() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("run");
    let key = d.path().join("m.key");
    let o = lwcbench()
        .args(["link", "--protocol", "oscore", "--devices", "2", "--messages", "15", "--interval", "0"])
        .args(["--cipher", "AES-CCM-16-64-128,ChaCha20/Poly1305", "--key-file"])
        .arg(&key)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("oscore_summary.json")).unwrap()).unwrap();
    for (i, alg) in ["AES-CCM-16-64-128", "ChaCha20/Poly1305"].iter().enumerate() {
        assert_eq!(v[i]["alg"], *alg);
        assert_eq!((v[i]["sent"].as_u64(), v[i]["tally"]["stored"].as_u64()), (Some(30), Some(30)));
    }
    let o = lwcbench()
        .args(["link", "--protocol", "oscore", "--cipher", "Ascon-AEAD128", "--out"])
        .arg(d.path().join("run2"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(err.starts_with("error: --cipher with --protocol oscore: unsupported: Ascon-AEAD128"), "{err}");
    assert!(err.contains("IANA COSE Algorithms registry") && err.lines().count() == 1, "{err}");
    assert!(!d.path().join("run2").exists(), "nothing written for a refused run");
}

#[test]
fn an_edhoc_session_rekeys_at_the_limit_and_prints_its_handshakes() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("run");
    let key = d.path().join("m.key");
    let o = lwcbench()
        .args(["link", "--protocol", "oscore", "--edhoc", "--rekey-after", "10", "--devices", "2"])
        .args(["--messages", "35", "--interval", "0", "--key-file"])
        .arg(&key)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    // ceil(35 / 10) = 4 contexts per device, 2 devices; a handshake is 187 bytes in 2 round
    // trips (hand count in crates/link/tests/oscore_edhoc.rs).
    assert!(err.contains("sent 70 stored 70 missing 0 refused 0"), "{err}");
    assert!(
        err.contains(
            "EDHOC suite 2 (lakers): 8 handshakes (re-key after 10 messages), 187.0 B and 2.0 round trips each, "
        ),
        "{err}"
    );
    let md = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(md.contains("| AES-CCM-16-64-128 | 8 | 187.0 | 2.0 | "), "{md}");
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("oscore_summary.json")).unwrap()).unwrap();
    assert_eq!((v[0]["handshakes"].as_u64(), v[0]["rekey_after"].as_u64()), (Some(8), Some(10)));
    assert!(v[0]["handshake_ms"].as_f64().unwrap() > 0.0);

    for (args, want) in [
        (
            &["--edhoc", "--cipher", "A128GCM"][..],
            "error: --edhoc: the OSCORE AEAD is cipher suite 2's application AEAD",
        ),
        (&["--edhoc", "--rekey-after", "0"][..], "error: --rekey-after: at least 1 message per context"),
        (&["--rekey-after", "5"][..], "--edhoc"),
    ] {
        refused_with_nothing_written(d.path(), &key, args, want);
    }
}

#[test]
fn an_edhoc_session_at_suite_0_runs_on_the_own_edhoc_and_rekeys_at_the_limit() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("run");
    let key = d.path().join("m.key");
    let o = lwcbench()
        .args(["link", "--protocol", "oscore", "--edhoc", "--edhoc-suite", "0", "--rekey-after", "10"])
        .args(["--devices", "2", "--messages", "35", "--interval", "0", "--key-file"])
        .arg(&key)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    // As at suite 2: ceil(35 / 10) = 4 contexts per device, 2 devices; X25519 keys have the
    // 32 bytes of a P-256 x-coordinate, so a handshake is 187 bytes too.
    assert!(err.contains("sent 70 stored 70 missing 0 refused 0"), "{err}");
    assert!(
        err.contains(
            "EDHOC suite 0 (own): 8 handshakes (re-key after 10 messages), 187.0 B and 2.0 round trips each, "
        ),
        "{err}"
    );
    let md = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(md.contains("### EDHOC (RFC 9528, method 3, cipher suite 0, own), re-key after 10 messages"), "{md}");
    assert!(md.contains("| AES-CCM-16-64-128 | 8 | 187.0 | 2.0 | "), "{md}");
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("oscore_summary.json")).unwrap()).unwrap();
    assert_eq!((v[0]["handshakes"].as_u64(), v[0]["edhoc_suite"].as_u64()), (Some(8), Some(0)));

    for (args, want) in [
        (&["--edhoc", "--edhoc-suite", "1"][..], "error: --edhoc-suite: '1' is not 0 or 2"),
        (
            &["--edhoc", "--edhoc-suite", "0", "--cipher", "A128GCM"][..],
            "error: --edhoc: the OSCORE AEAD is cipher suite 0's application AEAD",
        ),
        (&["--edhoc-suite", "0"][..], "--edhoc"),
    ] {
        refused_with_nothing_written(d.path(), &key, args, want);
    }
}

#[test]
fn an_edhoc_device_process_is_stored_and_one_the_gateway_does_not_know_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let key = d.path().join("master.key");
    lwcbench_link::device::counter::open_session(&key, &lwcbench_link::device::counter::beside_key(&key), 64).unwrap();
    let keys: Vec<_> = [7u32, 8]
        .iter()
        .map(|&n| {
            let p = d.path().join(format!("device{n}.key"));
            lwcbench_link::device::provision::provision(&key, lwcbench_link::wire::frame::Family::Sensor, n, None, &p)
                .unwrap();
            p
        })
        .collect();
    let db = d.path().join("o.db");
    let mut gw = lwcbench()
        .args(["link", "gateway", "--protocol", "oscore", "--edhoc", "--devices", "7", "--session", "e1"])
        .args(["--listen", "127.0.0.1:0", "--key-file"])
        .arg(&key)
        .arg("--store")
        .arg(&db)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut gw_out = BufReader::new(gw.stdout.take().unwrap()).lines();
    let ready = gw_out.next().unwrap().unwrap();
    let addr = ready.strip_prefix("ready ").unwrap_or_else(|| panic!("{ready}")).to_string();
    let cred_line = gw_out.next().unwrap().unwrap();
    let cred = cred_line.strip_prefix("edhoc-credential ").unwrap_or_else(|| panic!("{cred_line}")).to_string();
    let device = |k: &std::path::Path| {
        lwcbench()
            .args(["link", "device", "--protocol", "oscore", "--edhoc", "--rekey-after", "3", "--interval", "0"])
            .args(["--messages", "7", "--gateway", &addr, "--gateway-credential", &cred, "--key-file"])
            .arg(k)
            .output()
            .unwrap()
    };
    let ok = device(&keys[0]);
    let text = String::from_utf8_lossy(&ok.stdout);
    assert!(ok.status.success(), "{}", String::from_utf8_lossy(&ok.stderr));
    // Re-key after 3: sequence numbers 0 1 2 | 0 1 2 | 0 under 3 handshakes.
    let seqs: Vec<&str> = text.lines().filter_map(|l| l.strip_prefix("stored seq ")).collect();
    assert_eq!(seqs, ["0", "1", "2", "0", "1", "2", "0"]);
    assert!(text.contains("device 7 sent 7 readings, 3 handshakes"), "{text}");
    let refused = device(&keys[1]);
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success());
    assert!(err.starts_with("error: the gateway refused EDHOC message_3 (4.00 Bad Request): "), "{err}");
    assert!(
        err.contains("credential kid h'6408' is not one this gateway accepts") && err.lines().count() == 1,
        "{err}"
    );
    unsafe { libc::kill(gw.id() as i32, libc::SIGTERM) };
    let last = gw_out.map_while(Result::ok).last().unwrap();
    assert!(gw.wait().unwrap().success());
    let v: serde_json::Value = serde_json::from_str(&last).unwrap();
    let t = &v["tally"];
    assert_eq!(
        (t["stored"].as_u64(), t["handshakes"].as_u64(), t["unknown_credential"].as_u64()),
        (Some(7), Some(3), Some(1))
    );
    let conn = rusqlite::Connection::open(&db).unwrap();
    let n: i64 = conn.query_row("SELECT count(*) FROM readings WHERE device = 8", [], |r| r.get(0)).unwrap();
    assert_eq!(n, 0, "nothing stored for the refused device");
}

/// A one-message `link --protocol oscore` with `args` fails with `want` in its error, and
/// writes nothing.
fn refused_with_nothing_written(dir: &std::path::Path, key: &std::path::Path, args: &[&str], want: &str) {
    let o = lwcbench()
        .args(["link", "--protocol", "oscore", "--messages", "1", "--key-file"])
        .arg(key)
        .args(args)
        .arg("--out")
        .arg(dir.join("refused"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains(want), "{args:?}: {err}");
    assert!(!dir.join("refused").exists(), "{args:?}: nothing written for a refused run");
}
