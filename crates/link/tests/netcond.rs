//! The link under network conditions: devices in namespace A, gateway (and broker) in namespace B.
//! These need root (network namespaces); they skip with a visible message only when the process
//! lacks CAP_NET_ADMIN/CAP_SYS_ADMIN. CI runs them as root. The fallback mechanisms are forced
//! (nftables loss has a drop counter; netem has none), so the checks are the same on every kernel.
// Helpers outside #[test] functions unwrap too: a panic in a test is its failure report.
#![allow(clippy::unwrap_used)]
#[path = "../../../tests/support/required.rs"]
mod required;
use std::sync::Arc;
use std::time::Duration;

use lwcbench_link::experiments::netcond::{self, Backend, Conditions, NetEnv, NetTransport};
use lwcbench_link::session::{self, LinkConfig};
use lwcbench_netimpair::Mechanism;

fn root_or_skip(test: &str) -> bool {
    match lwcbench_netimpair::preflight() {
        Ok(()) => true,
        Err(lwcbench_netimpair::Error::Unprivileged(m)) => {
            required::missing(&format!("{test}: {m}"));
            false
        }
        Err(e) => panic!("{test}: {e}"),
    }
}

fn config(dir: &std::path::Path, devices: u32, messages: u64, interval_ms: u64) -> LinkConfig {
    LinkConfig {
        suite: lwcbench_link::wire::suite::find("Ascon-AEAD128").unwrap(),
        unauthenticated: false,
        devices,
        messages,
        interval: Some(Duration::from_millis(interval_ms)),
        transport: lwcbench_link::transport::Transport::Udp,
        store: dir.join("link.db").display().to_string(),
        window: 1024,
        counter_block: 64,
        key_file: dir.join("master.key"),
        counter_file: dir.join("counters"),
        connections: 4,
        drain_timeout: Duration::from_secs(20),
        readings: lwcbench_link::device::fleet::dataset_readings(&lwcbench_engine::dataset::Dataset::builtin()),
        batch: 64,
        session: session::new_session(),
        carrier: None,
    }
}

/// Every row in the SQLite store, checked against what the device recorded sending (dataset row),
/// read with a connection of the test's own; returns how many rows there are.
fn check_store(dir: &std::path::Path, readings: &Arc<Vec<Vec<u8>>>, o: &session::Outcome) -> u64 {
    let sent: std::collections::HashMap<(u32, u64), u32> =
        o.dev.iter().map(|d| ((d.device, d.counter), d.row)).collect();
    let conn = rusqlite::Connection::open(dir.join("link.db")).unwrap();
    let mut st = conn.prepare("SELECT device, counter, payload FROM readings").unwrap();
    let rows = st
        .query_map([], |r| Ok((r.get::<_, i64>(0)? as u32, r.get::<_, i64>(1)? as u64, r.get::<_, Vec<u8>>(2)?)))
        .unwrap();
    let mut n = 0;
    for row in rows {
        let (d, c, payload) = row.unwrap();
        let idx = *sent.get(&(d, c)).unwrap_or_else(|| panic!("stored ({d}, {c}) was never sent"));
        assert_eq!(payload, readings[idx as usize], "reading ({d}, {c}) stored wrongly");
        n += 1;
    }
    n
}

#[test]
fn udp_loss_is_counted_exactly_and_stored_readings_are_correct() {
    if !root_or_skip("udp_loss_is_counted_exactly_and_stored_readings_are_correct") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), 4, 100, 2);
    let env = NetEnv::create(false, Backend::Fallback).unwrap();
    let mut toxi = None;
    let cond = Conditions { loss_pct: 20.0, ..Default::default() };
    let r = netcond::run_condition(&env, &mut toxi, &cfg, NetTransport::Udp, &cond, 7).unwrap();
    let o = &r.outcome;
    assert_eq!(o.sent, 400);
    let stored = check_store(dir.path(), &cfg.readings, o);
    assert_eq!(stored, o.new_rows);
    // Loss shows as loss, every lost datagram counted by the nftables rule, none lost elsewhere.
    let relay = r.relay.expect("the UDP path goes through the relay");
    assert_eq!(relay.dropped_queue_full + relay.dropped_at_shutdown + relay.send_errors, 0);
    assert_eq!(r.udp_in_errors, 0);
    assert_eq!(stored + r.nft_dropped, 400, "stored {stored} + nft dropped {} != sent", r.nft_dropped);
    assert_eq!(r.not_delivered(), 0);
    // Stored ~ Binomial(400, 0.8): mean 320, sd 8; ±48 is 6 sd (a correct rule fails with p ≈ 2e-9;
    // no loss (400) or a wrong threshold such as 2 % or 50 % always fails).
    assert!((272..=368).contains(&stored), "stored {stored} is not near 80 % of 400");
    assert_eq!(relay.received, stored, "what reached B is what the relay saw");
    assert_eq!((o.duplicates, o.mismatched, o.tally.refused_total()), (0, 0, 0));
    let mech: Vec<_> = r.applied.iter().map(|a| (a.condition, a.mechanism)).collect();
    assert_eq!(mech, [("loss", Mechanism::Nftables)]);
    assert!(r.path.contains("10.237.0.1") && r.path.contains("UDP relay"), "{}", r.path);
}

#[test]
fn mqtt_under_loss_and_delay_loses_nothing_and_is_late() {
    if !root_or_skip("mqtt_under_loss_and_delay_loses_nothing_and_is_late") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), 4, 25, 10);
    let env = NetEnv::create(true, Backend::Fallback).unwrap();
    let mut toxi = None;
    let cond = Conditions { loss_pct: 10.0, delay_ms: 50, ..Default::default() };
    let r = netcond::run_condition(&env, &mut toxi, &cfg, NetTransport::Mqtt, &cond, 7).unwrap();
    let o = &r.outcome;
    assert_eq!(o.sent, 100);
    assert!(!r.timed_out, "not delivered within {:?}", r.timeout);
    // TCP retransmits: nothing lost although the rule dropped segments (≥ ~150 segments at 10 %:
    // P(no drop) < 1e-6).
    assert!(r.nft_dropped > 0, "the loss rule dropped nothing");
    assert_eq!(o.new_rows, 100);
    assert_eq!(check_store(dir.path(), &cfg.readings, o), 100);
    assert_eq!((o.mismatched, o.tally.refused_total()), (0, 0));
    // Every reading took at least the configured one-way delay from seal to commit.
    let e2e = netcond::e2e_sorted(o);
    assert_eq!(e2e.len(), 100);
    assert!(e2e[0] >= 50_000_000, "fastest reading took {} ns < 50 ms", e2e[0]);
    let mech: Vec<_> = r.applied.iter().map(|a| (a.condition, a.mechanism)).collect();
    assert_eq!(mech, [("loss", Mechanism::Nftables), ("delay", Mechanism::Toxiproxy)]);
    assert!(r.path.contains("Toxiproxy"), "{}", r.path);
}

#[test]
fn udp_delay_duplicates_and_reordering_are_refused_or_accepted_once() {
    if !root_or_skip("udp_delay_duplicates_and_reordering_are_refused_or_accepted_once") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), 2, 100, 2);
    let env = NetEnv::create(false, Backend::Fallback).unwrap();
    let mut toxi = None;
    let cond = Conditions { delay_ms: 30, jitter_ms: 10, duplicate_pct: 10.0, reorder_pct: 10.0, ..Default::default() };
    let r = netcond::run_condition(&env, &mut toxi, &cfg, NetTransport::Udp, &cond, 11).unwrap();
    let o = &r.outcome;
    let relay = r.relay.unwrap();
    // Nothing is lost; every duplicate copy is refused by the replay window (not stored twice);
    // reordered frames inside the window are accepted once.
    assert_eq!(o.new_rows, 200);
    assert_eq!(check_store(dir.path(), &cfg.readings, o), 200);
    assert!(relay.duplicated > 0 && relay.reordered > 0, "{relay:?}");
    let refused_dup = o.tally.count(lwcbench_link::gateway::checks::Refusal::Replay);
    assert_eq!(refused_dup, relay.duplicated);
    assert_eq!(o.tally.refused_total(), relay.duplicated);
    let e2e = netcond::e2e_sorted(o);
    assert!(e2e[0] >= 20_000_000, "fastest reading took {} ns < delay − jitter = 20 ms", e2e[0]);
    let conds: Vec<_> = r.applied.iter().map(|a| (a.condition, a.mechanism)).collect();
    assert_eq!(
        conds,
        [
            ("delay", Mechanism::Relay),
            ("jitter", Mechanism::Relay),
            ("reorder", Mechanism::Relay),
            ("duplicate", Mechanism::Relay)
        ]
    );
}

#[test]
fn mqtt_through_mosquitto_in_namespace_b_under_loss() {
    if !root_or_skip("mqtt_through_mosquitto_in_namespace_b_under_loss") {
        return;
    }
    let Some(bin) =
        ["/usr/sbin/mosquitto", "/usr/bin/mosquitto"].iter().map(std::path::PathBuf::from).find(|p| p.is_file())
    else {
        required::missing("mosquitto not installed (scripts/setup.sh --test installs it)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), 4, 50, 5);
    let broker = netcond::NetBroker::Mosquitto { bin, conf_dir: dir.path().to_path_buf() };
    let env = NetEnv::create_with(broker, Backend::Fallback).unwrap();
    assert!(env.broker_desc.starts_with("mosquitto"), "{}", env.broker_desc);
    let mut toxi = None;
    let cond = Conditions { loss_pct: 10.0, ..Default::default() };
    let r = netcond::run_condition(&env, &mut toxi, &cfg, NetTransport::Mqtt, &cond, 3).unwrap();
    let o = &r.outcome;
    assert_eq!(o.sent, 200);
    assert!(r.nft_dropped > 0, "the loss rule dropped nothing");
    assert_eq!(o.new_rows, 200, "MQTT lost readings (timed out: {})", r.timed_out);
    assert_eq!(check_store(dir.path(), &cfg.readings, o), 200);
    assert!(r.path.contains("mosquitto"), "{}", r.path);
    drop(toxi);
    drop(env);
    // The broker process went with the environment.
    let ps = std::process::Command::new("pgrep")
        .args(["-f", &dir.path().join("mosquitto-netns.conf").display().to_string()])
        .output()
        .unwrap();
    assert!(ps.stdout.is_empty(), "mosquitto still running: {}", String::from_utf8_lossy(&ps.stdout));
}
