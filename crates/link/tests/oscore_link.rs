//! `lwcbench link --protocol oscore` at the library level: a CoAP device and the OSCORE gateway
//! on loopback, with the store. Expected values are counted by hand from what the test sends.
#![allow(clippy::unwrap_used)]

use std::net::{SocketAddr, UdpSocket};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use lwcbench_link::oscore::device::CoapDevice;
use lwcbench_link::oscore::gateway::{OscoreGateway, OscoreServer};
use lwcbench_link::oscore::session::{run, OscoreConfig};
use lwcbench_link::oscore::{device_context, store_key_id, ECHO};
use lwcbench_link::wire::frame::Family;
use lwcbench_link::wire::keys::MasterKey;
use lwcbench_oscore::coap::Message;
use lwcbench_oscore::{Algorithm, MemorySequence};

const MASTER: [u8; 32] = [0x5a; 32];

fn gateway(dir: &std::path::Path, alg: Algorithm, devices: &[u32]) -> OscoreServer {
    let m = MasterKey::from_bytes(MASTER);
    let store =
        lwcbench_link::store::open(dir.join("s.db").to_str().unwrap(), "t", &store_key_id(&m.fingerprint(), alg))
            .unwrap();
    let gw = OscoreGateway::new(&m, alg, devices, &dir.join("state"), store).unwrap();
    OscoreServer::start(gw, "127.0.0.1:0", 64).unwrap()
}

/// Every datagram a device sent, in order.
type Sent = Arc<Mutex<Vec<Vec<u8>>>>;

/// A device whose every datagram is also kept in `sent`.
fn device(alg: Algorithm, id: u32, to: SocketAddr, start: u64) -> (CoapDevice<MemorySequence>, Sent) {
    let m = MasterKey::from_bytes(MASTER);
    let ctx = device_context(&m.device(Family::Sensor, id), alg).unwrap();
    let mut d = CoapDevice::new(ctx, MemorySequence::new(start), to).unwrap();
    d.ack_timeout = Duration::from_millis(200);
    let sent = Arc::new(Mutex::new(Vec::new()));
    let s2 = sent.clone();
    d.on_send = Some(Box::new(move |b: &[u8]| s2.lock().unwrap().push(b.to_vec())));
    (d, sent)
}

/// Send `bytes` from a new socket and return the answer.
fn raw(to: SocketAddr, bytes: &[u8]) -> Vec<u8> {
    let s = UdpSocket::bind("127.0.0.1:0").unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.send_to(bytes, to).unwrap();
    let mut b = vec![0u8; 2048];
    let n = s.recv(&mut b).unwrap();
    b.truncate(n);
    b
}

#[test]
fn a_fresh_gateway_asks_for_echo_then_stores_each_reading_once() {
    let dir = tempfile::tempdir().unwrap();
    let srv = gateway(dir.path(), Algorithm::AesCcm16_64_128, &[3]);
    let (mut dev, sent) = device(Algorithm::AesCcm16_64_128, 3, srv.addr, 0);
    let a = dev.send(b"reading-one").unwrap();
    // Hand count: seq 0 is challenged (4.01 + Echo), seq 1 carries the Echo and is stored.
    assert_eq!((a.seq, a.echo_rounds, a.retransmissions), (1, 1, 0));
    let b = dev.send(b"reading-two").unwrap();
    assert_eq!((b.seq, b.echo_rounds), (2, 0), "synchronised: no second challenge");
    // The challenged request carried no Echo, the repeat did (inner, so only its size shows).
    let sent = sent.lock().unwrap().clone();
    assert_eq!(sent.len(), 3);
    assert!(sent[1].len() >= sent[0].len() + 9, "the repeat carries a 1+8-byte Echo option");
    let (mut gw, err) = srv.stop().unwrap();
    assert_eq!(err, None);
    assert_eq!((gw.tally.stored, gw.tally.echo_challenges, gw.tally.refused()), (2, 1, 0));
    let rows = gw.store().all().unwrap();
    assert_eq!(
        rows.iter().map(|r| (r.device, r.counter, r.payload.clone())).collect::<Vec<_>>(),
        [(3, 1, b"reading-one".to_vec()), (3, 2, b"reading-two".to_vec())]
    );
}

#[test]
fn a_retransmitted_con_is_answered_again_and_stored_once() {
    let dir = tempfile::tempdir().unwrap();
    let srv = gateway(dir.path(), Algorithm::A128Gcm, &[5]);
    let (mut dev, sent) = device(Algorithm::A128Gcm, 5, srv.addr, 100);
    dev.send(b"x").unwrap();
    let stored = sent.lock().unwrap().last().unwrap().clone();
    // The retransmission of a CON is the same datagram (RFC 7252 §4.2), from the same endpoint:
    // replay it through the device's own socket by sending it again with the device.
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    sock.send_to(&stored, srv.addr).unwrap();
    let mut b = vec![0u8; 2048];
    let n = sock.recv(&mut b).unwrap();
    let first = b[..n].to_vec();
    sock.send_to(&stored, srv.addr).unwrap();
    let n = sock.recv(&mut b).unwrap();
    assert_eq!(b[..n], first[..], "the retransmission gets the very answer the first copy got");
    let (mut gw, _) = srv.stop().unwrap();
    // From the new endpoint the first copy is a replay of seq 101 (4.01), its retransmission is
    // answered from the cache: the row is stored once, by the device's own request.
    assert_eq!(Message::parse(&first).unwrap().code, 0x81);
    assert_eq!((gw.tally.stored, gw.tally.replayed, gw.tally.retransmissions), (1, 1, 1));
    assert_eq!(gw.store().all().unwrap().len(), 1);
}

#[test]
fn a_lost_answer_makes_the_device_retransmit_and_the_reading_is_stored_once() {
    let dir = tempfile::tempdir().unwrap();
    let srv = gateway(dir.path(), Algorithm::ChaCha20Poly1305, &[1]);
    // A relay between device and gateway that drops the gateway's second protected answer (the
    // first is the Echo challenge, the second confirms the stored reading; both are outer 2.04).
    let relay = UdpSocket::bind("127.0.0.1:0").unwrap();
    let relay_addr = relay.local_addr().unwrap();
    let gw_addr = srv.addr;
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let stop2 = stop.clone();
    let t = std::thread::spawn(move || {
        relay.set_read_timeout(Some(Duration::from_millis(20))).unwrap();
        let up = UdpSocket::bind("127.0.0.1:0").unwrap();
        up.set_read_timeout(Some(Duration::from_millis(20))).unwrap();
        let (mut dev_addr, mut answers) = (None, 0);
        let mut b = vec![0u8; 2048];
        while !stop2.load(std::sync::atomic::Ordering::Relaxed) {
            if let Ok((n, from)) = relay.recv_from(&mut b) {
                dev_addr = Some(from);
                up.send_to(&b[..n], gw_addr).unwrap();
            }
            if let Ok(n) = up.recv(&mut b) {
                answers += 1;
                if answers == 2 {
                    continue;
                }
                relay.send_to(&b[..n], dev_addr.unwrap()).unwrap();
            }
        }
    });
    let (mut dev, sent) = device(Algorithm::ChaCha20Poly1305, 1, relay_addr, 0);
    let a = dev.send(b"lost-ack").unwrap();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    t.join().unwrap();
    // Hand count: seq 0 challenged, seq 1 stored, its answer dropped, seq 1 sent again as is.
    assert_eq!((a.seq, a.echo_rounds, a.retransmissions), (1, 1, 1));
    let sent = sent.lock().unwrap().clone();
    assert_eq!(sent.len(), 3);
    assert_eq!(sent[1], sent[2], "a retransmission is the same datagram");
    let (mut gw, _) = srv.stop().unwrap();
    assert_eq!((gw.tally.stored, gw.tally.retransmissions, gw.tally.duplicates), (1, 1, 0));
    assert_eq!(gw.store().all().unwrap().len(), 1);
}

#[test]
fn a_request_replayed_after_a_gateway_restart_is_never_stored_as_fresh() {
    let dir = tempfile::tempdir().unwrap();
    let alg = Algorithm::AesCcm16_128_128;
    let srv = gateway(dir.path(), alg, &[2]);
    let (mut dev, sent) = device(alg, 2, srv.addr, 0);
    dev.send(b"before").unwrap();
    let (_, err) = srv.stop().unwrap();
    assert_eq!(err, None);
    let captured = sent.lock().unwrap().clone();
    // A restarted gateway (new windows, same store): every captured request, replayed with a
    // fresh Message ID, is answered 4.01 (+ Echo) and nothing new is stored.
    let srv = gateway(dir.path(), alg, &[2]);
    for (i, c) in captured.iter().enumerate() {
        let mut m = Message::parse(c).unwrap();
        m.message_id = m.message_id.wrapping_add(1000 + i as u16);
        let ans = Message::parse(&raw(srv.addr, &m.encode().unwrap())).unwrap();
        assert_eq!(ans.code, 0x44, "outer code of a protected answer is 2.04");
        assert!(!ans.options.is_empty(), "protected: carries the OSCORE option");
    }
    let (mut gw, _) = srv.stop().unwrap();
    assert_eq!((gw.tally.stored, gw.tally.echo_challenges), (0, 2), "both replays challenged, none stored");
    assert_eq!(gw.store().all().unwrap().len(), 1, "the one reading of before");
}

#[test]
fn forged_and_unknown_requests_are_refused_by_reason() {
    let dir = tempfile::tempdir().unwrap();
    let srv = gateway(dir.path(), Algorithm::AesCcm16_64_128, &[7]);
    // Not CoAP (a payload marker with no payload): dropped unanswered, counted.
    UdpSocket::bind("127.0.0.1:0").unwrap().send_to(&[0x40, 0x02, 0, 1, 0xff], srv.addr).unwrap();
    let (mut dev, sent) = device(Algorithm::AesCcm16_64_128, 7, srv.addr, 0);
    dev.send(b"ok").unwrap();
    let good = sent.lock().unwrap().last().unwrap().clone();
    // Seq 1 with its Partial IV changed to 5: new to the window, so the tag decides (4.00).
    let mut forged = Message::parse(&good).unwrap();
    forged.message_id ^= 0x5555;
    let o = forged.options.iter_mut().find(|(n, _)| *n == 9).unwrap();
    assert_eq!(o.1, [0x09, 0x01, 0x07], "flags k+n=1, PIV 1, kid 7");
    o.1[1] = 5;
    assert_eq!(Message::parse(&raw(srv.addr, &forged.encode().unwrap())).unwrap().code, 0x80);
    // The untouched request again under another Message ID: a replay (4.01).
    let mut replay = Message::parse(&good).unwrap();
    replay.message_id ^= 0x0f0f;
    assert_eq!(Message::parse(&raw(srv.addr, &replay.encode().unwrap())).unwrap().code, 0x81);
    // A reserved flag bit in the OSCORE option: 4.02 Bad Option, counted malformed.
    let mut bad_opt = Message::parse(&good).unwrap();
    bad_opt.message_id ^= 0x3333;
    bad_opt.options.iter_mut().find(|(n, _)| *n == 9).unwrap().1[0] |= 0x20;
    assert_eq!(Message::parse(&raw(srv.addr, &bad_opt.encode().unwrap())).unwrap().code, 0x82);
    // Device 8 is not served here: its request names an unknown context (4.01).
    let (mut other, _) = device(Algorithm::AesCcm16_64_128, 8, srv.addr, 0);
    let e = other.send(b"x").unwrap_err();
    assert!(e.contains("4.01 Unauthorized"), "{e}");
    let (gw, _) = srv.stop().unwrap();
    let t = &gw.tally;
    assert_eq!((t.malformed, t.bad_tag, t.replayed, t.unknown_device, t.stored), (2, 1, 1, 1, 1));
    let _ = ECHO;
}

#[test]
fn every_algorithm_runs_a_session_exactly_once() {
    let dir = tempfile::tempdir().unwrap();
    let m = MasterKey::from_bytes(MASTER);
    let key_file = dir.path().join("m.key");
    m.write_new(&key_file).unwrap();
    for alg in lwcbench_oscore::alg::ALL {
        let mut cfg = OscoreConfig::new(alg, 3, 20, dir.path().join("s.db").display().to_string(), key_file.clone());
        cfg.readings = Arc::new((0..7u8).map(|i| vec![i; 12 + i as usize]).collect());
        let o = run(&cfg, &m).unwrap();
        // 3 devices × 20 readings, each stored once; one Echo round per device at start.
        assert_eq!((o.sent, o.tally.stored, o.tally.duplicates, o.echo_rounds), (60, 60, 0, 3), "{}", alg.name());
        assert_eq!((o.missing, o.mismatched, o.tally.refused()), (0, 0, 0));
    }
    let e = lwcbench_link::oscore::alg_of("Ascon-AEAD128").unwrap_err();
    assert!(e.contains("no identifier in the IANA COSE Algorithms registry"), "{e}");
}

/// The datagrams a device sends are the size `lwcbench choose` prices
/// (`lwcbench_oscore::reading::protected_size`): 44 bytes for a 16-byte reading under
/// AES-CCM-16-64-128 at a two-byte Partial IV (counted by hand in crates/oscore/tests/overhead.rs).
#[test]
fn a_devices_requests_are_the_size_choose_prices() {
    use lwcbench_oscore::reading::protected_size;
    let dir = tempfile::tempdir().unwrap();
    let alg = Algorithm::AesCcm16_64_128;
    let srv = gateway(dir.path(), alg, &[3]);
    let (mut dev, sent) = device(alg, 3, srv.addr, 300);
    dev.send(&[7; 16]).unwrap();
    dev.send(&[8; 16]).unwrap();
    let sent = sent.lock().unwrap().clone();
    // seq 300 challenged, 301 with the Echo, 302 without.
    assert_eq!(sent.len(), 3);
    assert_eq!(sent[0].len(), 44);
    assert_eq!(sent[0].len(), protected_size(alg, &[3], 300, 16).unwrap().request);
    assert_eq!(sent[2].len(), protected_size(alg, &[3], 302, 16).unwrap().request);
    srv.stop().unwrap();
}
