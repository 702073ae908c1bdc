//! Replay protection per key, not per store (issue 37 item 4): the sensor gateway's accepted
//! marks beside the key (`KEY.accepted`). Over UDP, so nothing but the gateway is involved.
// Helpers outside #[test] functions unwrap too: a panic in a test is its failure report.
#![allow(clippy::unwrap_used)]
use std::net::UdpSocket;
use std::path::Path;
use std::time::{Duration, Instant};

use lwcbench_link::gateway::checks::Refusal;
use lwcbench_link::gateway::single::GatewayHandle;
use lwcbench_link::gateway::{GatewaySpec, GwResult};
use lwcbench_link::transport::{runtime, Transport};
use lwcbench_link::wire::frame::Proto;
use lwcbench_link::wire::keys::MasterKey;
use lwcbench_link::wire::suite::{self, Keyed};

const SUITE: &str = "Ascon-AEAD128";

fn frames(master: &MasterKey, d: u32, counters: impl IntoIterator<Item = u64>) -> Vec<Vec<u8>> {
    let s = suite::find(SUITE).unwrap();
    let mut k = Keyed::derived(&s, master, Proto::Sensor, d, false).unwrap();
    counters
        .into_iter()
        .map(|c| {
            let mut f = Vec::new();
            k.seal(d, c, &[d as u8, c as u8, 0x5a], &mut f).unwrap();
            f
        })
        .collect()
}

/// One gateway run on `store`: send `frames` over UDP, wait until all are checked, stop.
fn gateway_run(master: &MasterKey, store: &Path, accepted: &Path, frames: &[Vec<u8>]) -> GwResult {
    let rt = runtime().unwrap();
    let spec = GatewaySpec {
        suite: suite::find(SUITE).unwrap(),
        unauthenticated: false,
        devices: vec![0, 1],
        window: 1024,
        store: lwcbench_link::store::open(&store.display().to_string(), "run", &master.fingerprint()).unwrap(),
        session: "accepted-test".into(),
        transport: Transport::Udp,
        batch: 4,
        max_samples: 0,
        max_failed_tags: None,
        accepted: Some(accepted.to_path_buf()),
    };
    let gw = GatewayHandle::start(spec, master, rt.handle()).unwrap();
    let to = gw.udp_addr.unwrap();
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    for f in frames {
        sock.send_to(f, to).unwrap();
        std::thread::sleep(Duration::from_millis(1));
    }
    let t0 = Instant::now();
    while gw.processed() < frames.len() as u64 {
        assert!(t0.elapsed() < Duration::from_secs(20), "checked {} of {}", gw.processed(), frames.len());
        std::thread::sleep(Duration::from_millis(5));
    }
    let r = gw.stop(rt.handle());
    assert!(r.error.is_none(), "{:?}", r.error);
    r
}

/// Run 1 stores device 0's counters 0..=9 in store A (and device 1's 0..=3 and 6, 4 and 5
/// "in flight" at a crash); `KEY.accepted` then says 9 and 6. The earlier run's ten frames sent
/// again to a fresh store B: all refused as replays (within 1024 of the mark), nothing stored
/// — before the marks, all ten were stored. Sent again to store A: A holds them (its unique key
/// ignores them as duplicates), and device 1's 4 and 5, never committed, are stored: the mark
/// covers only what the store committed, so nothing delivered after a crash is lost.
#[test]
fn a_fresh_store_refuses_an_earlier_runs_frames() {
    let d = tempfile::tempdir().unwrap();
    let master = MasterKey::from_bytes([0x37; 32]);
    let acc = d.path().join("k.accepted");
    let (a, b) = (d.path().join("a.db"), d.path().join("b.db"));
    let run1 = frames(&master, 0, 0..=9);
    let mut first = run1.clone();
    first.extend(frames(&master, 1, [0, 1, 2, 3, 6]));
    let r = gateway_run(&master, &a, &acc, &first);
    assert_eq!((r.new_rows, r.tally.accepted), (15, 15));
    assert_eq!(
        std::fs::read_to_string(&acc).unwrap(),
        format!("lwcbench-link-accepted v1\nkey {}\nsensor 0 9\nsensor 1 6\n", master.fingerprint())
    );

    let r = gateway_run(&master, &b, &acc, &run1);
    assert_eq!((r.new_rows, r.tally.accepted, r.tally.count(Refusal::Replay)), (0, 0, 10));

    let mut again = run1.clone();
    again.extend(frames(&master, 1, [4, 5]));
    let r = gateway_run(&master, &a, &acc, &again);
    assert_eq!((r.new_rows, r.duplicates, r.tally.refused_total()), (2, 10, 0));
    // and the mark never goes down
    assert!(std::fs::read_to_string(&acc).unwrap().ends_with("sensor 0 9\nsensor 1 6\n"));
}

/// A marks file that is not one (or is another key's) stops the gateway before it starts,
/// with the file and the line.
#[test]
fn a_bad_marks_file_is_refused_at_start() {
    let d = tempfile::tempdir().unwrap();
    let master = MasterKey::from_bytes([0x37; 32]);
    let acc = d.path().join("k.accepted");
    std::fs::write(&acc, format!("lwcbench-link-accepted v1\nkey {}\nsensor 0 x\n", master.fingerprint())).unwrap();
    let rt = runtime().unwrap();
    let spec = GatewaySpec {
        suite: suite::find(SUITE).unwrap(),
        unauthenticated: false,
        devices: vec![0],
        window: 1024,
        store: lwcbench_link::store::open(&d.path().join("s.db").display().to_string(), "run", &master.fingerprint())
            .unwrap(),
        session: "accepted-test".into(),
        transport: Transport::Udp,
        batch: 4,
        max_samples: 0,
        max_failed_tags: None,
        accepted: Some(acc.clone()),
    };
    let e = GatewayHandle::start(spec, &master, rt.handle()).err().expect("refused");
    assert!(e.contains("k.accepted: line 3, column 10: highest counter 'x'"), "{e}");
}
