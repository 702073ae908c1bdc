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
    seqs_from(&mut BufReader::new(child.stdout.take().unwrap()).lines(), until)
}

/// The `stored seq N` numbers of a device's output lines, up to `until` of them.
fn seqs_from(lines: &mut impl Iterator<Item = std::io::Result<String>>, until: usize) -> Vec<u64> {
    let mut v = Vec::new();
    for line in lines.map_while(Result::ok) {
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
    let mut lines = BufReader::new(first.stdout.take().unwrap()).lines();
    let mut before = seqs_from(&mut lines, 37);
    first.kill().unwrap(); // SIGKILL
    first.wait().unwrap();
    assert_eq!(before.len(), 37);
    // The device ran on while the test read: what it confirmed before the kill is still in the
    // pipe, and counts (a busy machine let it confirm several more).
    before.extend(seqs_from(&mut lines, usize::MAX));
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

/// A master key in `dir` and the sensor keys of `ids` provisioned from it.
fn provisioned(dir: &std::path::Path, ids: &[u32]) -> (std::path::PathBuf, Vec<std::path::PathBuf>) {
    let key = dir.join("master.key");
    lwcbench_link::device::counter::open_session(&key, &lwcbench_link::device::counter::beside_key(&key), 64).unwrap();
    let keys = ids
        .iter()
        .map(|&n| {
            let p = dir.join(format!("device{n}.key"));
            lwcbench_link::device::provision::provision(&key, lwcbench_link::wire::frame::Family::Sensor, n, None, &p)
                .unwrap();
            p
        })
        .collect();
    (key, keys)
}

/// A `link gateway --protocol oscore --edhoc` process with `args`, on a free port: the process,
/// the rest of its stdout, its address and the credential it printed.
struct EdhocGateway {
    child: Child,
    out: std::io::Lines<BufReader<std::process::ChildStdout>>,
    addr: String,
    cred: String,
}

impl EdhocGateway {
    fn start(key: &std::path::Path, db: &std::path::Path, args: &[&str]) -> EdhocGateway {
        let mut child = lwcbench()
            .args(["link", "gateway", "--protocol", "oscore", "--edhoc", "--listen", "127.0.0.1:0", "--key-file"])
            .arg(key)
            .arg("--store")
            .arg(db)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let mut out = BufReader::new(child.stdout.take().unwrap()).lines();
        let ready = out.next().expect("the gateway printed nothing").unwrap();
        let addr = ready.strip_prefix("ready ").unwrap_or_else(|| panic!("{ready}")).to_string();
        let line = out.next().unwrap().unwrap();
        let cred = line.strip_prefix("edhoc-credential ").unwrap_or_else(|| panic!("{line}")).to_string();
        EdhocGateway { child, out, addr, cred }
    }

    /// SIGTERM; the tally of its last line.
    fn stop(mut self) -> serde_json::Value {
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let last = self.out.by_ref().map_while(Result::ok).last().unwrap();
        assert!(self.child.wait().unwrap().success());
        serde_json::from_str::<serde_json::Value>(&last).unwrap()["tally"].clone()
    }

    /// A `link device --protocol oscore --edhoc` process of `key` sending 7 readings to this
    /// gateway, re-keying after 3, with `cred` and `args`.
    fn device(&self, key: &std::path::Path, cred: &str, args: &[&str]) -> std::process::Output {
        lwcbench()
            .args(["link", "device", "--protocol", "oscore", "--edhoc", "--rekey-after", "3", "--interval", "0"])
            .args(["--messages", "7", "--gateway", &self.addr, "--gateway-credential", cred, "--key-file"])
            .arg(key)
            .args(args)
            .output()
            .unwrap()
    }
}

/// A test that fails before `stop` leaves no gateway serving (nor holding the test's stderr).
impl Drop for EdhocGateway {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The counters of the readings stored in `db` by device, in order.
fn stored(db: &std::path::Path) -> Vec<(u32, u64)> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut q = conn.prepare("SELECT device, counter FROM readings ORDER BY device, counter").unwrap();
    q.query_map([], |r| Ok((r.get::<_, u32>(0)?, r.get::<_, i64>(1)? as u64))).unwrap().map(Result::unwrap).collect()
}

#[test]
fn an_edhoc_device_process_is_stored_and_one_the_gateway_does_not_know_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let (key, keys) = provisioned(d.path(), &[7, 8]);
    let db = d.path().join("o.db");
    let gw = EdhocGateway::start(&key, &db, &["--devices", "7", "--session", "e1"]);
    let ok = gw.device(&keys[0], &gw.cred, &[]);
    let text = String::from_utf8_lossy(&ok.stdout);
    assert!(ok.status.success(), "{}", String::from_utf8_lossy(&ok.stderr));
    // Re-key after 3: sequence numbers 0 1 2 | 0 1 2 | 0 under 3 handshakes.
    let seqs: Vec<&str> = text.lines().filter_map(|l| l.strip_prefix("stored seq ")).collect();
    assert_eq!(seqs, ["0", "1", "2", "0", "1", "2", "0"]);
    assert!(text.contains("device 7 sent 7 readings, 3 handshakes"), "{text}");
    let refused = gw.device(&keys[1], &gw.cred, &[]);
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success());
    assert!(err.starts_with("error: the gateway refused EDHOC message_3 (4.00 Bad Request): "), "{err}");
    assert!(
        err.contains("credential kid h'6408' is not one this gateway accepts") && err.lines().count() == 1,
        "{err}"
    );
    let t = gw.stop();
    assert_eq!(
        (t["stored"].as_u64(), t["handshakes"].as_u64(), t["unknown_credential"].as_u64()),
        (Some(7), Some(3), Some(1))
    );
    assert!(stored(&db).iter().all(|(dev, _)| *dev == 7), "nothing stored for the refused device");
}

#[test]
fn edhoc_processes_at_suite_0_store_every_reading() {
    let d = tempfile::tempdir().unwrap();
    let (key, keys) = provisioned(d.path(), &[7, 8]);
    let db = d.path().join("o.db");
    let gw = EdhocGateway::start(&key, &db, &["--edhoc-suite", "0", "--devices", "7-8", "--session", "z1"]);
    // docs/security.md's suite-0 CCS, by hand: {2: "lwcbench gateway" (16 chars), 8: {1: {1: 1,
    // 2: h'67', -1: 4, -2: h'<32 bytes>'}}}, 65 bytes.
    let head = "a202706c776362656e63682067617465776179";
    let cose = "08a101a401010241672004215820";
    assert_eq!((&gw.cred[..38], &gw.cred[38..66], gw.cred.len()), (head, cose, 130), "{}", gw.cred);
    for (k, id) in keys.iter().zip(["7", "8"]) {
        let o = gw.device(k, &gw.cred, &["--edhoc-suite", "0"]);
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let seqs: Vec<&str> = text.lines().filter_map(|l| l.strip_prefix("stored seq ")).collect();
        assert_eq!(seqs, ["0", "1", "2", "0", "1", "2", "0"]);
        assert!(text.contains(&format!("with EDHOC suite 0: device {id} sent 7 readings, 3 handshakes")), "{text}");
    }
    let t = gw.stop();
    assert_eq!(
        (t["stored"].as_u64(), t["handshakes"].as_u64(), t["edhoc_refused"].as_u64()),
        (Some(14), Some(6), Some(0))
    );
    // Epochs 1, 2, 3 per device (each handshake a new one), sequence numbers 0-2, 0-2, 0; the
    // counter is epoch × 2^40 + sequence number.
    let want: Vec<(u32, u64)> = [7u32, 8]
        .iter()
        .flat_map(|&dev| {
            [(1u64, 0u64), (1, 1), (1, 2), (2, 0), (2, 1), (2, 2), (3, 0)].map(|(e, s)| (dev, e << 40 | s))
        })
        .collect();
    assert_eq!(stored(&db), want);
}

#[test]
fn edhoc_processes_of_two_cipher_suites_are_refused_by_name_and_nothing_is_stored() {
    let d = tempfile::tempdir().unwrap();
    let (key, keys) = provisioned(d.path(), &[7]);
    let (db0, db2) = (d.path().join("s0.db"), d.path().join("s2.db"));
    let gw0 = EdhocGateway::start(&key, &db0, &["--edhoc-suite", "0", "--devices", "7", "--session", "m0"]);
    let gw2 = EdhocGateway::start(&key, &db2, &["--devices", "7", "--session", "m2"]);
    // A device holding the other gateway's credential for its own suite reaches the gateway,
    // which answers with the EDHOC error message of RFC 9528 §6.3 (ERR_CODE 2, SUITES_R); the
    // device names the gateway's suites and its own choice.
    for (gw, cred, args, want) in [
        (&gw0, &gw2.cred, &[][..], "the gateway supports cipher suite 0 only; this device selected 2"),
        (
            &gw2,
            &gw0.cred,
            &["--edhoc-suite", "0"][..],
            "the gateway supports cipher suite 2 only; this device selected 0",
        ),
    ] {
        let o = gw.device(&keys[0], cred, args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{args:?}");
        assert_eq!(err.trim_end(), format!("error: the gateway refused EDHOC message_1 (4.00 Bad Request): {want}"));
    }
    // A message_1 whose SUITES_I lists the gateway's suite first but selects the other (the last
    // element, RFC 9528 §5.2.2) is refused all the same: the Initiator chose. By hand: a CON POST
    // (0x41 0x02, Message ID 0x1234, token 0x99) to Uri-Path ".well-known" (0xbb) "edhoc" (0x05),
    // payload CBOR true (0xf5) then METHOD 3, SUITES_I [x, y] (0x82 x y), G_X (0x58 0x20, 32 bytes)
    // and C_I -24 (0x37); the answer an ACK 4.00 (0x61 0x80 0x12 0x34 0x99 0xff) whose payload is
    // ERR_CODE 2 (0x02) then SUITES_R as one integer.
    let sock = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    for (gw, suites_i, suites_r) in [(&gw0, [0x00u8, 0x02], 0x00u8), (&gw2, [0x02, 0x00], 0x02)] {
        let mut req = vec![0x41, 0x02, 0x12, 0x34, 0x99, 0xbb];
        req.extend(b".well-known");
        req.push(0x05);
        req.extend(b"edhoc");
        req.extend([0xff, 0xf5, 0x03, 0x82, suites_i[0], suites_i[1], 0x58, 0x20]);
        req.extend([0x09; 32]);
        req.push(0x37);
        sock.send_to(&req, &gw.addr).unwrap();
        let mut buf = [0u8; 512];
        let n = sock.recv(&mut buf).unwrap();
        assert_eq!(buf[..n], [0x61, 0x80, 0x12, 0x34, 0x99, 0xff, 0x02, suites_r], "SUITES_I {suites_i:?}");
    }
    // A credential of the other suite's key is refused before anything is sent.
    for (gw, args, want) in [
        (&gw0, &[][..], "error: --gateway-credential: an X25519 key (a cipher suite 0 gateway's); --edhoc-suite 2 takes a P-256 one"),
        (&gw2, &["--edhoc-suite", "0"][..], "error: --gateway-credential: a P-256 key (a cipher suite 2 gateway's); --edhoc-suite 0 takes an X25519 one"),
    ] {
        let o = gw.device(&keys[0], &gw.cred, args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{args:?}");
        assert_eq!(err.trim_end(), want);
    }
    for (gw, db) in [(gw0, &db0), (gw2, &db2)] {
        let t = gw.stop();
        assert_eq!(
            (t["stored"].as_u64(), t["handshakes"].as_u64(), t["edhoc_refused"].as_u64()),
            (Some(0), Some(0), Some(2))
        );
        assert_eq!(stored(db), []);
    }
    // A suite that is neither: refused before the gateway binds.
    let o = lwcbench()
        .args(["link", "gateway", "--protocol", "oscore", "--edhoc", "--edhoc-suite", "1", "--devices", "7"])
        .args(["--session", "m1", "--listen", "127.0.0.1:0", "--key-file"])
        .arg(&key)
        .arg("--store")
        .arg(d.path().join("s1.db"))
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert_eq!(String::from_utf8_lossy(&o.stderr).trim_end(), "error: --edhoc-suite: '1' is not 0 or 2");
    assert!(!d.path().join("s1.db").exists(), "no store for a refused gateway");
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
