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
