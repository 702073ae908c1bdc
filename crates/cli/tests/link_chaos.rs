//! The fault test: one `lwcbench link chaos` run SIGKILLs and restarts the gateway
//! process, mosquitto (persistence on) and device processes at seeded random moments, and twice
//! the broker while the gateway is down. The tool
//! gives its own verdict; this test does not trust it and checks the evidence itself, from the
//! devices' capture files (every frame, written before it was first published), the key file and
//! the SQLite store:
//! * no (device, counter) pair was used for two different frames (so no (key, nonce) reuse);
//! * every captured reading is stored exactly once, with the payload the device sealed;
//! * nothing is stored that no device captured (the forged frames the run injects among it);
//! * `PRAGMA integrity_check` is ok.
//!
//! Then it deletes one stored row and checks that its own checker reports exactly that loss.
use super::required;
use lwcbench_link::wire::frame::Proto;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use lwcbench_link::wire::frame::Header;

fn mosquitto() -> Option<PathBuf> {
    ["/usr/sbin/mosquitto", "/usr/bin/mosquitto"].iter().map(PathBuf::from).find(|p| p.is_file())
}

struct Evidence {
    captured: u64,
    reused: u64,
    lost: u64,
    stored_twice: u64,
    not_sent: u64,
    mismatched: u64,
    integrity: String,
}

fn check(work: &Path, devices: u32) -> Evidence {
    let master = lwcbench_link::wire::keys::MasterKey::read(&work.join("master.key")).unwrap();
    let suite = lwcbench_link::wire::suite::find("Ascon-AEAD128").unwrap();
    let mut sent: HashMap<(u32, u64), (Vec<u8>, Vec<u8>)> = HashMap::new();
    let mut reused = 0;
    for d in 0..devices {
        let key = master.cipher_key(Proto::Sensor, d, suite.id, suite.key_len());
        let mut keyed = lwcbench_link::wire::suite::Keyed::new(&suite, &key, Proto::Sensor, false).unwrap();
        let text = std::fs::read_to_string(work.join(format!("device-{d}.capture"))).unwrap();
        // Only complete lines: a kill may cut the line being written (that frame was never sent).
        for line in text.split_inclusive('\n').filter_map(|l| l.strip_suffix('\n')) {
            let f = hex::decode(line).expect("capture line is hex");
            let h = Header::parse(&f).unwrap();
            assert_eq!(h.device, d, "device {d} captured a frame of device {}", h.device);
            match sent.get(&(d, h.counter)) {
                Some((prev, _)) if *prev != f => reused += 1,
                Some(_) => {}
                None => {
                    let pt = keyed.open(&h, &f).expect("captured frame opens under the device key");
                    sent.insert((d, h.counter), (f, pt));
                }
            }
        }
    }
    let conn = rusqlite::Connection::open(work.join("chaos.db")).unwrap();
    let mut st = conn.prepare("SELECT device, counter, payload FROM readings").unwrap();
    let rows: Vec<(i64, i64, Vec<u8>)> =
        st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).unwrap().map(|r| r.unwrap()).collect();
    let mut count: HashMap<(u32, u64), u64> = HashMap::new();
    let (mut not_sent, mut mismatched) = (0, 0);
    for (d, c, p) in &rows {
        let k = (*d as u32, *c as u64);
        *count.entry(k).or_default() += 1;
        match sent.get(&k) {
            None => not_sent += 1,
            Some((_, pt)) if pt != p => mismatched += 1,
            Some(_) => {}
        }
    }
    let lost = sent.keys().filter(|k| !count.contains_key(k)).count() as u64;
    let stored_twice = count.values().filter(|&&n| n > 1).count() as u64;
    let integrity: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
    Evidence { captured: sent.len() as u64, reused, lost, stored_twice, not_sent, mismatched, integrity }
}

fn csv_rows(p: &Path) -> Vec<HashMap<String, String>> {
    let mut r = csv::Reader::from_path(p).unwrap();
    let h = r.headers().unwrap().clone();
    r.records()
        .map(|x| h.iter().zip(x.unwrap().iter()).map(|(a, b)| (a.to_string(), b.to_string())).collect())
        .collect()
}

#[test]
fn gateway_broker_and_device_kills_lose_nothing_and_duplicate_nothing() {
    let Some(bin) = mosquitto() else {
        required::missing("mosquitto not installed (scripts/setup.sh --test installs it)");
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let t0 = Instant::now();
    let o = Command::new(env!("CARGO_BIN_EXE_lwcbench"))
        .args(["link", "chaos", "-o", "out", "--devices", "4", "--interval", "2ms", "--duration", "25s"])
        .args([
            "--seed",
            "19",
            "--gateway-kills",
            "3",
            "--broker-kills",
            "3",
            "--device-kills",
            "4",
            "--double-kills",
            "2",
        ])
        .arg("--mosquitto")
        .arg(&bin)
        .current_dir(d.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    eprintln!("{err}");
    assert!(o.status.success(), "chaos run failed: {err}");
    assert!(t0.elapsed() < Duration::from_secs(120), "chaos run took {:?}", t0.elapsed());
    let out = d.path().join("out");

    // The fault table: every planned fault was injected and recovered from.
    let faults = csv_rows(&out.join("chaos_faults.csv"));
    let n = |kind: &str| faults.iter().filter(|r| r["fault"] == kind).count();
    let both = n("gateway SIGKILL, then broker SIGKILL while it is down");
    assert_eq!((n("gateway SIGKILL"), n("broker SIGKILL"), n("device SIGKILL"), both), (3, 3, 4, 2));
    assert!(faults.iter().all(|r| !r["recovery_ms"].is_empty()), "a fault without recovery: {faults:?}");
    let table = csv_rows(&out.join("chaos_table.csv"));
    assert!(table.iter().all(|r| r["readings_lost"] == "0" && r["duplicates_stored"] == "0"), "{table:?}");

    // The evidence, checked here.
    let work = out.join("work");
    let e = check(&work, 4);
    assert!(e.captured > 1000, "only {} readings captured", e.captured);
    assert_eq!(e.reused, 0, "(key, counter) pairs used for two frames");
    assert_eq!(e.lost, 0, "captured readings not stored");
    assert_eq!(e.stored_twice, 0);
    assert_eq!(e.not_sent, 0, "stored rows that no device captured (forged frames?)");
    assert_eq!(e.mismatched, 0);
    assert_eq!(e.integrity, "ok");
    // The run did inject forged frames, and the gateway refused them.
    let run: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("run.json")).unwrap()).unwrap();
    let v = &run["config"]["verdict"];
    assert!(v["forged_sent"].as_u64().unwrap() > 10, "{v}");
    assert_eq!(v["forged_stored"], 0);
    assert_eq!(v["captured"].as_u64().unwrap(), e.captured, "tool and test agree on what was sent");

    // The checker can fail: one row fewer is one reading lost.
    let conn = rusqlite::Connection::open(work.join("chaos.db")).unwrap();
    conn.execute("DELETE FROM readings WHERE rowid = (SELECT MIN(rowid) FROM readings)", []).unwrap();
    drop(conn);
    assert_eq!(check(&work, 4).lost, 1);
}

#[test]
fn chaos_bad_input_is_one_error_line() {
    let d = tempfile::tempdir().unwrap();
    for (args, opt) in [
        (vec!["--mosquitto", "/nonexistent/mosquitto"], "--mosquitto"),
        (vec!["--devices", "0"], "--devices"),
        (vec!["--interval", "1us"], "--interval"),
        (vec!["--duration", "soon"], "--duration"),
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_lwcbench"))
            .args(["link", "chaos", "-o", "x"])
            .args(&args)
            .current_dir(d.path())
            .output()
            .unwrap();
        assert!(!o.status.success());
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.lines().filter(|l| l.starts_with("error:")).count() == 1 && err.contains(opt), "{args:?}: {err}");
        assert!(!d.path().join("x").exists(), "nothing half-written");
    }
    let o = Command::new(env!("CARGO_BIN_EXE_lwcbench"))
        .args(["link", "gateway", "--broker", "mqtt://127.0.0.1:1", "--session", "s", "--key-file", "/nonexistent"])
        .args(["--devices", "3-1", "--store", "x.db"])
        .current_dir(d.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("--devices"), "{err}");
}

#[test]
fn overload_steps_report_every_rate_and_lose_nothing() {
    let d = tempfile::tempdir().unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_lwcbench"))
        .args(["link", "overload", "-o", "ov", "--rates", "1000,4000", "--step", "500ms", "--devices", "4"])
        .current_dir(d.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rows = csv_rows(&d.path().join("ov/link_overload.csv"));
    assert_eq!(rows.len(), 2);
    for (r, rate) in rows.iter().zip(["1000", "4000"]) {
        assert_eq!(r["offered_per_s"].parse::<f64>().unwrap(), rate.parse::<f64>().unwrap());
        // 4 devices × ceil(rate × 0.5 s / 4) readings, all stored (back-pressure, no drops).
        let want = 4 * (rate.parse::<u64>().unwrap() / 2).div_ceil(4);
        assert_eq!(r["sent"], want.to_string());
        assert_eq!(r["stored"], want.to_string());
        assert_eq!(r["missing"], "0");
        assert!(r["rss_peak_mb"].parse::<f64>().unwrap() > 1.0);
    }
    assert!(std::fs::read_to_string(d.path().join("ov/summary.md")).unwrap().contains("Sustainable rate"));
    assert!(!d.path().join("ov/work").exists(), "the step stores are removed");
    for (args, opt) in
        [(["--rates", "fast"]), (["--step", "1us"]), (["--keep", "2"])].iter().zip(["--rates", "--step", "--keep"])
    {
        let o = Command::new(env!("CARGO_BIN_EXE_lwcbench"))
            .args(["link", "overload", "-o", "bad"])
            .args(args.iter())
            .current_dir(d.path())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            !o.status.success() && err.lines().filter(|l| l.starts_with("error:")).count() == 1 && err.contains(opt),
            "{err}"
        );
        assert!(!d.path().join("bad").exists());
    }
}
