//! `lwcbench link --protocol oscore --edhoc` at the library level: devices run EDHOC (RFC 9528)
//! with the gateway over CoAP, take the OSCORE context of Appendix A.1, re-key at the limit,
//! and every reading is stored once. Expected values are counted by hand from what the test
//! sends (handshake and reading counts, datagram sizes from RFC 7252 §3 and RFC 9528 §5).
//! Cipher suite 2 runs on lakers, suite 0 (`--edhoc-suite 0`) on this project's own EDHOC.
#![allow(clippy::unwrap_used)]

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use lwcbench_link::oscore::device::{CoapDevice, EdhocClient};
use lwcbench_link::oscore::gateway::{OscoreGateway, OscoreServer};
use lwcbench_link::oscore::session::{run, OscoreConfig};
use lwcbench_link::oscore::{
    device_credential, device_credential_x25519, device_identity, device_identity_x25519, gateway_identity,
    gateway_identity_x25519, store_key_id,
};
use lwcbench_link::wire::frame::Family;
use lwcbench_link::wire::keys::MasterKey;
use lwcbench_oscore::edhoc::credential;
use lwcbench_oscore::edhoc::own::EdhocSuite;
use lwcbench_oscore::{Algorithm, MemorySequence};

const MASTER: [u8; 32] = [0x3c; 32];

fn gateway(dir: &Path, serves: &[u32]) -> OscoreServer {
    gateway_at(dir, serves, "127.0.0.1:0")
}

fn gateway_at(dir: &Path, serves: &[u32], listen: &str) -> OscoreServer {
    let m = MasterKey::from_bytes(MASTER);
    let store = lwcbench_link::store::open(
        dir.join("s.db").to_str().unwrap(),
        "t",
        &store_key_id(&m.fingerprint(), Algorithm::AesCcm16_64_128),
    )
    .unwrap();
    let (id, _) = gateway_identity(&m).unwrap();
    let creds: Vec<_> = serves.iter().map(|&d| (d, device_credential(&m, d).unwrap())).collect();
    let gw = OscoreGateway::new_edhoc(id, &creds, &dir.join("state"), store).unwrap();
    OscoreServer::start(gw, listen, 64).unwrap()
}

/// Device `id` of `master`, trusting the gateway of MASTER, re-keying after `rekey` messages.
fn device(master: [u8; 32], id: u32, to: SocketAddr, rekey: u64) -> CoapDevice<MemorySequence> {
    let (_, gw_ccs) = gateway_identity(&MasterKey::from_bytes(MASTER)).unwrap();
    let me = device_identity(&MasterKey::from_bytes(master).device(Family::Sensor, id)).unwrap();
    let mut d = CoapDevice::new_edhoc(EdhocClient::new(me, credential(&gw_ccs).unwrap(), rekey).unwrap(), to).unwrap();
    d.ack_timeout = Duration::from_millis(300);
    d
}

fn session(dir: &Path, devices: u32, messages: u64, rekey: u64) -> lwcbench_link::oscore::session::OscoreOutcome {
    session_at(dir, devices, messages, rekey, EdhocSuite::Suite2)
}

fn session_at(
    dir: &Path,
    devices: u32,
    messages: u64,
    rekey: u64,
    suite: EdhocSuite,
) -> lwcbench_link::oscore::session::OscoreOutcome {
    let m = MasterKey::from_bytes(MASTER);
    let key_file = dir.join("m.key");
    if !key_file.exists() {
        m.write_new(&key_file).unwrap();
    }
    let mut cfg = OscoreConfig::new(
        Algorithm::AesCcm16_64_128,
        devices,
        messages,
        dir.join("s.db").display().to_string(),
        key_file,
    );
    cfg.readings = Arc::new((0..7u8).map(|i| vec![i; 10 + i as usize]).collect());
    cfg.edhoc = Some(rekey);
    cfg.edhoc_suite = suite;
    run(&cfg, &m).unwrap()
}

#[test]
fn a_session_with_edhoc_stores_every_reading_once() {
    let dir = tempfile::tempdir().unwrap();
    let o = session(dir.path(), 3, 12, lwcbench_link::oscore::DEFAULT_REKEY_AFTER);
    // 3 devices × 12 readings; one handshake each at start; a fresh context needs no Echo.
    assert_eq!((o.sent, o.tally.stored, o.tally.duplicates, o.echo_rounds), (36, 36, 0, 0));
    assert_eq!((o.handshakes, o.tally.handshakes, o.missing, o.mismatched, o.tally.refused()), (3, 3, 0, 0, 0));
    assert_eq!(o.handshake_round_trips, 2.0, "message_1/message_2, message_3/message_4");
    assert_eq!(o.rekey_after, Some(1 << 20));
}

#[test]
fn rekey_after_10_with_35_readings_runs_4_handshakes_per_device() {
    let dir = tempfile::tempdir().unwrap();
    let o = session(dir.path(), 2, 35, 10);
    // Sequence numbers 0..=9 under each context: readings 1-10, 11-20, 21-30 and 31-35 go
    // under handshakes 1 to 4 (ceil(35 / 10) = 4), so 2 devices run 8.
    assert_eq!((o.handshakes, o.tally.handshakes), (8, 8));
    assert_eq!((o.sent, o.tally.stored, o.tally.duplicates, o.missing, o.mismatched), (70, 70, 0, 0, 0));
    // The rows: per device, epochs 1-4 (counter >> 40) holding sequence numbers 0-9, 0-9, 0-9, 0-4.
    let mut want = Vec::new();
    for d in 0..2u32 {
        for (epoch, n) in [(1u64, 10u64), (2, 10), (3, 10), (4, 5)] {
            want.extend((0..n).map(|s| (d, epoch << 40 | s)));
        }
    }
    assert_eq!(rows(&dir.path().join("s.db")), want);
}

/// (device, counter) of every row in the SQLite store, in order.
fn rows(db: &Path) -> Vec<(u32, u64)> {
    let c = rusqlite::Connection::open(db).unwrap();
    let mut q = c.prepare("SELECT device, counter FROM readings ORDER BY device, counter").unwrap();
    q.query_map([], |r| Ok((r.get::<_, i64>(0)? as u32, r.get::<_, i64>(1)? as u64)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

#[test]
fn a_device_whose_credential_the_gateway_does_not_know_is_refused_and_nothing_is_stored() {
    let dir = tempfile::tempdir().unwrap();
    let srv = gateway(dir.path(), &[0, 1]);
    // Device 5 of the same master: its kid "d" 0x05 is not among the credentials served.
    let mut stranger = device(MASTER, 5, srv.addr, 100);
    let e = stranger.send(b"never").unwrap_err();
    assert!(e.contains("credential kid h'6405' is not one this gateway accepts"), "{e}");
    assert!(e.starts_with("the gateway refused EDHOC message_3 (4.00 Bad Request)"), "{e}");
    // Device 1's kid, but a key from another master: the gateway's MAC_3 check fails.
    let mut impostor = device([0x77; 32], 1, srv.addr, 100);
    let e = impostor.start().unwrap_err();
    assert!(e.contains("EDHOC message_3 refused: a MAC or AEAD tag does not verify"), "{e}");
    assert!(impostor.context().is_none() && stranger.context().is_none());
    let (mut gw, err) = srv.stop().unwrap();
    assert_eq!(err, None);
    let t = &gw.tally;
    assert_eq!((t.unknown_credential, t.edhoc_refused, t.handshakes, t.stored), (1, 1, 0, 0));
    assert!(gw.store().all().unwrap().is_empty());
}

#[test]
fn a_restarted_device_gets_a_new_context_and_a_restarted_gateway_a_new_epoch() {
    let dir = tempfile::tempdir().unwrap();
    let srv = gateway(dir.path(), &[2]);
    let addr = srv.addr;
    let mut first = device(MASTER, 2, srv.addr, 100);
    let a: Vec<_> = (0..3).map(|i| first.send(&[b'a', i]).unwrap()).collect();
    let key_a = first.context().unwrap().sender_key().to_vec();
    let h = first.handshakes()[0];
    // Hand count (RFC 7252 §3, RFC 9528 §5; token 4 bytes, Uri-Path .well-known (1 + 11) and
    // edhoc (1 + 5), payload marker 1): message_1 request 4+4+12+6+1 + (1 + 37) = 65; its
    // answer 4+4+1 + message_2 46 (ID_CRED_R kid "g" as a 2-byte bstr, C_R 0x00 compact) = 55;
    // message_3 request 4+4+12+6+1 + (1 + 21: ID_CRED_I kid "d" 0x02 as a 3-byte bstr) = 49;
    // its answer 4+4+1 + message_4 9 = 18. Total 187 bytes, 2 round trips.
    assert_eq!((h.bytes, h.round_trips), (187, 2));
    drop(first); // the device restarts: its context is gone with it
    let mut second = device(MASTER, 2, srv.addr, 100);
    let b: Vec<_> = (0..3).map(|i| second.send(&[b'b', i]).unwrap()).collect();
    let key_b = second.context().unwrap().sender_key().to_vec();
    // Both runs used sequence numbers 0, 1, 2 — under different keys, so no (key, nonce) repeats.
    assert_eq!(a.iter().map(|x| x.seq).collect::<Vec<_>>(), [0, 1, 2]);
    assert_eq!(b.iter().map(|x| x.seq).collect::<Vec<_>>(), [0, 1, 2]);
    assert_ne!(key_a, key_b, "a new handshake gives a new context");
    let (gw, _) = srv.stop().unwrap();
    assert_eq!((gw.tally.stored, gw.tally.handshakes, gw.tally.duplicates), (6, 2, 0));
    drop(gw);
    // The gateway restarts (same state directory and store): the device's context is unknown
    // to it (4.01), the device runs a new handshake and the reading is stored under epoch 3.
    let srv = gateway_at(dir.path(), &[2], &addr.to_string());
    let c = second.send(b"after restart").unwrap();
    assert_eq!((c.seq, second.handshakes().len()), (0, 2));
    let (mut gw, _) = srv.stop().unwrap();
    assert_eq!((gw.tally.stored, gw.tally.unknown_device, gw.tally.handshakes), (1, 1, 1));
    assert_eq!(gw.store().all().unwrap().len(), 7, "the session's rows: both gateway runs");
    drop(gw);
    let e = |epoch: u64, s: u64| (2u32, epoch << 40 | s);
    assert_eq!(rows(&dir.path().join("s.db")), [e(1, 0), e(1, 1), e(1, 2), e(2, 0), e(2, 1), e(2, 2), e(3, 0)]);
}

#[test]
fn a_corrupt_epoch_state_stops_the_gateway_with_the_file_named_and_nothing_stored() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("state")).unwrap();
    let epoch = dir.path().join("state/edhoc-2.epoch");
    std::fs::write(&epoch, "seven\n").unwrap();
    let srv = gateway(dir.path(), &[2]);
    let mut dev = device(MASTER, 2, srv.addr, 100);
    dev.ack_timeout = Duration::from_millis(50);
    dev.max_retransmit = 1;
    assert!(dev.send(b"x").is_err(), "no message_4 without a durable epoch");
    let (mut gw, err) = srv.stop().unwrap();
    let err = err.unwrap();
    assert!(
        err.starts_with("EDHOC epoch state ") && err.contains("edhoc-2.epoch: line 1: expected a handshake epoch"),
        "{err}"
    );
    assert_eq!((gw.tally.handshakes, gw.tally.stored), (0, 0));
    assert!(gw.store().all().unwrap().is_empty());
    assert_eq!(std::fs::read_to_string(&epoch).unwrap(), "seven\n", "left as it was");
}

#[test]
fn a_session_at_suite_0_stores_every_reading_once() {
    let dir = tempfile::tempdir().unwrap();
    let o = session_at(dir.path(), 3, 12, lwcbench_link::oscore::DEFAULT_REKEY_AFTER, EdhocSuite::Suite0);
    assert_eq!((o.sent, o.tally.stored, o.tally.duplicates, o.echo_rounds), (36, 36, 0, 0));
    assert_eq!((o.handshakes, o.tally.handshakes, o.missing, o.mismatched, o.tally.refused()), (3, 3, 0, 0, 0));
    assert_eq!((o.edhoc_suite, o.handshake_round_trips), (Some(0), 2.0));
    // X25519 keys are 32 bytes as P-256 x-coordinates are: the same 187 bytes per handshake as
    // counted by hand at suite 2 below.
    assert_eq!(o.handshake_bytes, 187.0);
}

#[test]
fn suite_0_rekey_after_10_with_35_readings_runs_4_handshakes_per_device() {
    let dir = tempfile::tempdir().unwrap();
    let o = session_at(dir.path(), 2, 35, 10, EdhocSuite::Suite0);
    // As at suite 2: ceil(35 / 10) = 4 handshakes per device, sequence numbers 0-9 under each.
    assert_eq!((o.handshakes, o.tally.handshakes), (8, 8));
    assert_eq!((o.sent, o.tally.stored, o.tally.duplicates, o.missing, o.mismatched), (70, 70, 0, 0, 0));
    let mut want = Vec::new();
    for d in 0..2u32 {
        for (epoch, n) in [(1u64, 10u64), (2, 10), (3, 10), (4, 5)] {
            want.extend((0..n).map(|s| (d, epoch << 40 | s)));
        }
    }
    assert_eq!(rows(&dir.path().join("s.db")), want);
}

#[test]
fn a_suite_0_gateway_refuses_suite_2_and_strangers_and_stores_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let m = MasterKey::from_bytes(MASTER);
    let store = lwcbench_link::store::open(
        dir.path().join("s.db").to_str().unwrap(),
        "t",
        &store_key_id(&m.fingerprint(), Algorithm::AesCcm16_64_128),
    )
    .unwrap();
    let creds: Vec<_> = [0, 1].iter().map(|&d| (d, device_credential_x25519(&m, d).unwrap())).collect();
    let gw =
        OscoreGateway::new_edhoc_suite0(gateway_identity_x25519(&m).unwrap(), &creds, &dir.path().join("st"), store)
            .unwrap();
    let srv = OscoreServer::start(gw, "127.0.0.1:0", 64).unwrap();
    // A device speaking suite 2 (lakers) is refused at message_1, with the reason.
    let mut p256 = device(MASTER, 1, srv.addr, 100);
    let e = p256.start().unwrap_err();
    assert_eq!(
        e,
        "the gateway refused EDHOC message_1 (4.00 Bad Request): the gateway supports cipher suite 0 only; this \
         device selected 2"
    );
    // Device 5 at suite 0: its kid "d" 0x05 is not among those served.
    let gw_cred = gateway_identity_x25519(&m).unwrap().credential().clone();
    let me = device_identity_x25519(&m.device(Family::Sensor, 5)).unwrap();
    let mut stranger =
        CoapDevice::new_edhoc(EdhocClient::new_suite0(me, gw_cred.clone(), 100).unwrap(), srv.addr).unwrap();
    stranger.ack_timeout = Duration::from_millis(300);
    let e = stranger.start().unwrap_err();
    assert_eq!(
        e,
        "the gateway refused EDHOC message_3 (4.00 Bad Request): EDHOC message_3 refused: credential kid h'6405' is \
         not one this gateway accepts"
    );
    // Device 1's kid with a key of another master: MAC_3 does not verify.
    let other = device_identity_x25519(&MasterKey::from_bytes([0x77; 32]).device(Family::Sensor, 1)).unwrap();
    let mut impostor = CoapDevice::new_edhoc(EdhocClient::new_suite0(other, gw_cred, 100).unwrap(), srv.addr).unwrap();
    let e = impostor.start().unwrap_err();
    assert!(e.ends_with("EDHOC message_3 refused: MAC_3 does not verify (altered, or another key)"), "{e}");
    let (mut gw, err) = srv.stop().unwrap();
    assert_eq!(err, None);
    let t = &gw.tally;
    assert_eq!((t.unknown_credential, t.edhoc_refused, t.handshakes, t.stored), (1, 2, 0, 0));
    assert!(gw.store().all().unwrap().is_empty());
}
