//! `lwcbench link gateway --shared GROUP`: gateway processes as members of one MQTT v5 shared
//! subscription, the store (PostgreSQL here) the replay authority. The fault test runs the chaos
//! machinery (durable devices, captures written before the first publish, a forger) with two
//! `--shared` gateways against mosquitto and PostgreSQL, SIGKILLs one gateway mid-run and
//! restarts it, and takes the chaos checker's proof that every captured reading is stored
//! exactly once; the gateways' own counts show that each frame went to one member only.
use std::io::{Read, Write};
use std::path::Path;
use std::process::Command;

use crate::support;

/// (pid, stored, refused + duplicates, final) of each gateway process's last stats line in
/// `file`; `final` marks the line a process stopped by SIGTERM writes.
fn gateway_counts(file: &Path) -> Vec<(u64, u64, u64, bool)> {
    let mut last: std::collections::BTreeMap<u64, serde_json::Value> = Default::default();
    for l in std::fs::read_to_string(file).unwrap().lines() {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        last.insert(v["pid"].as_u64().unwrap(), v);
    }
    last.into_iter()
        .map(|(pid, v)| {
            let n = |k: &str| v[k].as_u64().unwrap_or(0);
            (pid, n("stored"), n("refused") + n("duplicates"), v["final"] == true)
        })
        .collect()
}

#[test]
fn two_shared_gateways_one_killed_store_every_reading_exactly_once() {
    let Some(mosquitto) = support::mosquitto_bin() else {
        support::required::missing("mosquitto not installed (scripts/setup.sh --test installs it)");
        return;
    };
    let Some((_pg, url)) = support::postgres() else { return };
    let d = tempfile::tempdir().unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_lwcbench"))
        .args(["link", "chaos", "-o", "out", "--gateways", "2", "--store", &url, "--devices", "4"])
        .args(["--interval", "2ms", "--duration", "12s", "--seed", "25", "--gateway-kills", "1"])
        .args(["--broker-kills", "0", "--device-kills", "0", "--double-kills", "0", "--mosquitto"])
        .arg(&mosquitto)
        .current_dir(d.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    eprintln!("{err}");
    assert!(o.status.success(), "chaos run with two --shared gateways failed: {err}");
    let out = d.path().join("out");

    // One gateway was SIGKILLed mid-run and came back.
    let faults = std::fs::read_to_string(out.join("chaos_faults.csv")).unwrap();
    let rows: Vec<&str> = faults.lines().skip(1).collect();
    assert_eq!(rows.len(), 1, "{faults}");
    assert!(rows[0].contains("gateway SIGKILL") && rows[0].contains("gateway "), "{faults}");

    // The chaos checker's proof, from the captures, the key and the store.
    let run: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("run.json")).unwrap()).unwrap();
    let v = &run["config"]["verdict"];
    let captured = v["captured"].as_u64().unwrap();
    assert!(captured > 1000, "only {captured} readings captured: {v}");
    assert_eq!(v["stored_rows"].as_u64().unwrap(), captured, "{v}");
    for k in ["lost", "duplicates_stored", "counter_reuse", "not_captured_but_stored", "forged_stored", "mismatched"] {
        assert_eq!(v[k], 0, "{k}: {v}");
    }
    assert_eq!(v["integrity_check"], "ok", "{v}");
    assert!(v["forged_sent"].as_u64().unwrap() > 10, "{v}");

    // Each frame went to one member: a member that ran throughout checked about half of what
    // was sent (a subscriber of its own would check every frame), and both stored some.
    let work = out.join("work");
    let mut finals = Vec::new();
    for i in 0..2 {
        let counts = gateway_counts(&work.join(format!("gateway-{i}-stats.jsonl")));
        let last = *counts.iter().find(|c| c.3).unwrap_or_else(|| panic!("gateway {i} has no final line: {counts:?}"));
        finals.push(last);
    }
    for (pid, stored, other, _) in &finals {
        assert!(*stored > 0, "gateway pid {pid} stored nothing: {finals:?}");
        assert!(
            stored + other < captured * 4 / 5,
            "gateway pid {pid} checked nearly every frame: {finals:?} of {captured}"
        );
    }
    // The store holds the run's rows under the key's fingerprint.
    let key = lwcbench_link::wire::keys::MasterKey::read(&work.join("master.key")).unwrap().fingerprint();
    let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    let n: i64 = c
        .query_one(
            "SELECT COUNT(*) FROM lwcbench_link_readings r JOIN lwcbench_link_keys k ON k.id = r.key_ref
             WHERE k.key_id = $1",
            &[&key],
        )
        .unwrap()
        .get(0);
    assert_eq!(n as u64, captured);
}

fn gateway(args: &[&str], dir: &Path) -> (bool, String) {
    let key = dir.join("k.key");
    if !key.exists() {
        lwcbench_link::wire::keys::MasterKey::random().write_new(&key).unwrap();
    }
    let o = Command::new(env!("CARGO_BIN_EXE_lwcbench"))
        .args(["link", "gateway", "--session", "s", "--devices", "0-3", "--key-file"])
        .arg(&key)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    (o.status.success(), String::from_utf8_lossy(&o.stderr).into_owned())
}

fn one_error(ok_err: (bool, String), want: &str) {
    let (ok, err) = ok_err;
    assert!(!ok, "exit 0: {err}");
    let lines: Vec<&str> = err.lines().collect();
    assert!(lines.len() == 1 && lines[0].starts_with("error: ") && lines[0].contains(want), "{err}");
}

#[test]
fn shared_bad_input_is_one_error_line() {
    let d = tempfile::tempdir().unwrap();
    let b = ["--broker", "mqtt://127.0.0.1:1", "--store"];
    let db = d.path().join("s.db").display().to_string();
    for bad in ["a/b", "+", "#", "g+", ""] {
        one_error(gateway(&[&b[..], &[&db, "--shared", bad, "--member", "m"]].concat(), d.path()), "--shared: '");
    }
    one_error(gateway(&[&b[..], &[&db, "--shared", "g", "--member", "m/1"]].concat(), d.path()), "--member: '");
    one_error(gateway(&[&b[..], &[&db, "--shared", "g"]].concat(), d.path()), "--shared needs --member");
    one_error(gateway(&[&b[..], &[&db, "--member", "m"]].concat(), d.path()), "--member is only for --shared");
    // A store no other process can see.
    for store in [":memory:", "sqlite::memory:"] {
        one_error(
            gateway(&[&b[..], &[store, "--shared", "g", "--member", "m"]].concat(), d.path()),
            "--shared: --store",
        );
    }
    assert!(!d.path().join("s.db").exists(), "nothing written for refused input");
}

/// A broker whose CONNACK says "Shared Subscription Available = 0" (MQTT v5 §3.2.2.3.13) is
/// refused with one line before anything is stored; the bytes are a hand-made v5 CONNACK.
#[test]
fn a_broker_without_shared_subscriptions_is_refused() {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { return };
            let mut buf = [0u8; 512];
            let _ = s.read(&mut buf);
            // CONNACK: type 2, remaining length 5: flags 0, reason 0 (success), properties
            // length 2: 0x2A (Shared Subscription Available) = 0.
            let _ = s.write_all(&[0x20, 0x05, 0x00, 0x00, 0x02, 0x2A, 0x00]);
            std::thread::sleep(std::time::Duration::from_secs(3));
        }
    });
    let d = tempfile::tempdir().unwrap();
    let url = format!("mqtt://127.0.0.1:{port}");
    let db = d.path().join("s.db").display().to_string();
    one_error(
        gateway(&["--broker", &url, "--store", &db, "--shared", "g", "--member", "m"], d.path()),
        "does not offer shared subscriptions",
    );
}
