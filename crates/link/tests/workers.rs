//! Scale-out: replay state correct across gateway workers (the store is the authority), and a
//! K = 2 session on a shared subscription storing every reading exactly once.
//! Expected verdicts are worked out by hand from the window rule in docs/link.md.
// Helpers outside #[test] functions unwrap too: a panic in a test is its failure report.
#![allow(clippy::unwrap_used)]
mod support;

use lwcbench_link::wire::frame::Proto;
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use lwcbench_link::gateway::checks::{Gateway, Refusal};
use lwcbench_link::gateway::workers::{Checked, Checker};
use lwcbench_link::session::{self, LinkConfig};
use lwcbench_link::store::shared::SharedState;
use lwcbench_link::transport::broker::{self, BrokerAddr};
use lwcbench_link::transport::Transport;
use lwcbench_link::wire::keys::MasterKey;
use lwcbench_link::wire::suite::{self, Keyed};

const DEV: u32 = 7;
const W: u64 = 8;

fn frame(keyed: &mut Keyed, counter: u64) -> Vec<u8> {
    let mut f = Vec::new();
    keyed.seal(DEV, counter, &[counter as u8; 12], &mut f).unwrap();
    f
}

fn worker(store: &str, master: &MasterKey, s: &suite::Suite) -> Checker {
    let gw = Gateway::new(s, master, [DEV], W, false).unwrap();
    let gw = gw.old_frames_to_store();
    Checker::new(gw, SharedState::open(store, "run-1", &master.fingerprint(), &[DEV]).unwrap())
}

fn stored(c: &Checked) -> bool {
    matches!(c, Checked::Stored(_))
}

/// Worker A sees the originals, worker B the replays / old frames (and the other way round).
fn replay_across_workers(store: &str) {
    let s = suite::find("Ascon-AEAD128").unwrap();
    let master = MasterKey::from_bytes([0x42; 32]);
    let key = master.cipher_key(Proto::Sensor, DEV, s.id, s.key_len());
    let mut dev = Keyed::new(&s, &key, Proto::Sensor, false).unwrap();
    let mut a = worker(store, &master, &s);
    let mut b = worker(store, &master, &s);
    let mut f = |c| frame(&mut dev, c);
    let (f5, f20, f3, f12, f13, f14, f15) = (f(5), f(20), f(3), f(12), f(13), f(14), f(15));

    assert!(stored(&a.process(&[&f5]).unwrap()[0]));
    // The same frame at the other worker, whose own window never saw device 7: replay.
    assert_eq!(b.process(&[&f5]).unwrap(), vec![Checked::Refused(Refusal::Replay)]);
    assert!(stored(&a.process(&[&f20]).unwrap()[0]));
    // 3 and 12 lie W = 8 or more below the newest stored counter (20) but were never stored:
    // the store's unique key lets them in.
    let out = b.process(&[&f3, &f12]).unwrap();
    assert!(stored(&out[0]) && stored(&out[1]), "{out:?}");
    // 13 is inside the window and new: accepted once, wherever it arrives first.
    assert!(stored(&b.process(&[&f13]).unwrap()[0]));
    assert_eq!(a.process(&[&f13]).unwrap(), vec![Checked::Refused(Refusal::Replay)]);
    // A forged frame with a huge counter is refused on its tag and moves nothing.
    let mut forged = frame(&mut dev, 1000);
    *forged.last_mut().unwrap() ^= 1;
    assert_eq!(b.process(&[&forged]).unwrap(), vec![Checked::Refused(Refusal::BadTag)]);
    // Two copies of 14 in one batch at B, a third at A; 15 still fresh (top not moved to 1000).
    let out = b.process(&[&f14, &f14, &f15]).unwrap();
    assert!(stored(&out[0]) && stored(&out[2]), "{out:?}");
    assert_eq!(out[1], Checked::Refused(Refusal::Replay));
    assert_eq!(a.process(&[&f14]).unwrap(), vec![Checked::Refused(Refusal::Replay)]);

    // Counted: A accepted 5, 20; refused 13, 14 as replay. B accepted 3, 12, 13, 14, 15;
    // refused 5 and the second 14 as replay, the forgery on its tag.
    assert_eq!((a.gateway.tally.accepted, a.gateway.tally.count(Refusal::Replay)), (2, 2));
    let tb = &b.gateway.tally;
    assert_eq!(
        (tb.accepted, tb.count(Refusal::Replay), tb.count(Refusal::TooOld), tb.count(Refusal::BadTag)),
        (5, 2, 0, 1)
    );
    // Stored exactly once each, and nothing refused.
    let mut st = lwcbench_link::store::open(store, "run-1", &master.fingerprint()).unwrap();
    let rows = st.all().unwrap();
    let counters: Vec<u64> = rows.iter().map(|r| r.counter).collect();
    assert_eq!(counters, vec![3, 5, 12, 13, 14, 15, 20]);
    assert!(rows.iter().all(|r| r.payload == vec![r.counter as u8; 12]));
}

/// Member A stores counters 40..100 of a device before member B gets 0..40 (all of them more
/// than W = 8 below the newest stored counter, as when B's host lags): every reading is stored
/// exactly once, and each copy sent again, to either member, is refused as `replay`. Expected
/// counts by hand: 100 readings; A's replays are 0..40 (40), B's are the second copy of 20,
/// 40..100 and 0..40 (1 + 60 + 40).
fn lagging_member(store: &str) {
    let s = suite::find("Ascon-AEAD128").unwrap();
    let master = MasterKey::from_bytes([0x17; 32]);
    let key = master.cipher_key(Proto::Sensor, DEV, s.id, s.key_len());
    let mut dev = Keyed::new(&s, &key, Proto::Sensor, false).unwrap();
    let f: Vec<Vec<u8>> = (0..100).map(|c| frame(&mut dev, c)).collect();
    let (mut a, mut b) = (worker(store, &master, &s), worker(store, &master, &s));
    let feed = |w: &mut Checker, counters: &mut dyn Iterator<Item = u64>| -> Vec<Checked> {
        let frames: Vec<&[u8]> = counters.map(|c| f[c as usize].as_slice()).collect();
        frames.chunks(16).flat_map(|ch| w.process(ch).unwrap()).collect()
    };
    let out = feed(&mut a, &mut (40..100));
    assert!(out.iter().all(stored), "{out:?}");
    // B lags: 0..40 (without 20) arrive after A stored up to 99.
    let out = feed(&mut b, &mut (0..40).filter(|&c| c != 20));
    assert!(out.iter().all(stored), "a lagging member's readings are stored: {out:?}");
    // Two copies of never-stored 20 in one batch, below B's own window (top 39): one stored.
    let out = b.process(&[&f[20], &f[20]]).unwrap();
    assert!(stored(&out[0]), "{out:?}");
    assert_eq!(out[1], Checked::Refused(Refusal::Replay));
    // A forged old frame is refused on its tag, never reaching the store.
    let mut forged = f[10].clone();
    *forged.last_mut().unwrap() ^= 1;
    assert_eq!(a.process(&[&forged]).unwrap(), vec![Checked::Refused(Refusal::BadTag)]);
    // Replays: below A's window (A's top is 99), above B's window, and inside and below B's.
    let replay = |out: Vec<Checked>| out.iter().all(|o| *o == Checked::Refused(Refusal::Replay));
    assert!(replay(feed(&mut a, &mut (0..40))));
    assert!(replay(feed(&mut b, &mut (40..100))));
    assert!(replay(feed(&mut b, &mut (0..40))));
    let (ta, tb) = (&a.gateway.tally, &b.gateway.tally);
    assert_eq!((ta.accepted, ta.count(Refusal::Replay), ta.count(Refusal::BadTag)), (60, 40, 1));
    assert_eq!((tb.accepted, tb.count(Refusal::Replay)), (40, 101));
    assert_eq!(ta.count(Refusal::TooOld) + tb.count(Refusal::TooOld), 0);
    let mut st = lwcbench_link::store::open(store, "run-1", &master.fingerprint()).unwrap();
    let counters: Vec<u64> = st.all().unwrap().iter().map(|r| r.counter).collect();
    assert_eq!(counters, (0..100).collect::<Vec<u64>>(), "every reading stored exactly once");
}

#[test]
fn a_member_lagging_beyond_the_window_loses_nothing_sqlite() {
    let d = tempfile::tempdir().unwrap();
    lagging_member(&d.path().join("w.db").display().to_string());
}

#[test]
fn a_member_lagging_beyond_the_window_loses_nothing_postgres() {
    let Some((_pg, url)) = support::postgres() else { return };
    lagging_member(&url);
}

#[test]
fn replay_across_workers_sqlite() {
    let d = tempfile::tempdir().unwrap();
    replay_across_workers(&d.path().join("w.db").display().to_string());
}

#[test]
fn replay_across_workers_postgres() {
    let Some((_pg, url)) = support::postgres() else { return };
    replay_across_workers(&url);
}

fn k_run(transport: BrokerAddr, store: String, workers: usize) {
    let d = tempfile::tempdir().unwrap();
    let readings = lwcbench_link::device::fleet::dataset_readings(&lwcbench_engine::dataset::Dataset::builtin());
    let cfg = LinkConfig {
        suite: suite::find("Ascon-AEAD128").unwrap(),
        unauthenticated: false,
        devices: 8,
        messages: 250,
        interval: None,
        transport: Transport::Mqtt(transport),
        store,
        window: 1024,
        counter_block: 1024,
        key_file: d.path().join("master.key"),
        counter_file: d.path().join("counters"),
        connections: 4,
        drain_timeout: Duration::from_secs(30),
        readings: Arc::clone(&readings),
        batch: 64,
        session: session::new_session(),
        carrier: None,
    };
    let o = session::run_workers(&cfg, workers).unwrap();
    assert_eq!(o.sent, 2000);
    assert_eq!((o.new_rows, o.missing, o.mismatched, o.duplicates), (2000, 0, 0, 0), "{:?}", o.tally);
    assert_eq!(o.tally.refused_total(), 0, "{:?}", o.tally);
    assert_eq!(o.per_worker.len(), workers);
    assert_eq!(o.per_worker.iter().sum::<u64>(), 2000, "{:?}", o.per_worker);
    assert!(o.per_worker.iter().all(|&n| n > 0), "the broker spread frames over every worker: {:?}", o.per_worker);
    // Each (device, counter) the devices sent is in the store exactly once.
    let sent: HashSet<(u32, u64)> = o.dev.iter().map(|s| (s.device, s.counter)).collect();
    let key = MasterKey::read(&cfg.key_file).unwrap().fingerprint();
    let mut st = lwcbench_link::store::open(&cfg.store, &cfg.session, &key).unwrap();
    let rows = st.all().unwrap();
    let got: HashSet<(u32, u64)> = rows.iter().map(|r| (r.device, r.counter)).collect();
    assert_eq!(rows.len(), 2000);
    assert_eq!(got, sent);
    assert!(o.transport_desc.contains(&format!("{workers} gateway workers")), "{}", o.transport_desc);
}

#[test]
fn two_workers_embedded_broker_sqlite() {
    let d = tempfile::tempdir().unwrap();
    k_run(broker::embedded().unwrap(), d.path().join("k2.db").display().to_string(), 2);
}

#[test]
fn two_workers_mosquitto_postgres() {
    let Some(m) = support::mosquitto() else { return };
    let Some((_pg, url)) = support::postgres() else { return };
    let b = broker::parse_url(&format!("mqtt://127.0.0.1:{}", m.port)).unwrap();
    k_run(b, url, 2);
}

/// The single gateway's PostgreSQL store inserts a batch in one statement: new rows counted,
/// copies of stored (device, counter) pairs (also inside one batch) not stored again.
#[test]
fn postgres_store_batch_insert_counts_new_rows() {
    use lwcbench_link::store::Row;
    let Some((_pg, url)) = support::postgres() else { return };
    let mut st = lwcbench_link::store::open(&url, "batch-run", "key-1").unwrap();
    let r = |c: u64| Row { device: 3, counter: c, cipher: 1, payload: vec![c as u8; 5] };
    assert_eq!(st.insert(&[r(1), r(2)]).unwrap(), 2);
    assert_eq!(st.insert(&[r(2), r(3), r(3)]).unwrap(), 1, "2 is stored already, 3 twice in the batch");
    assert_eq!(st.all().unwrap(), vec![r(1), r(2), r(3)]);
    // Another key in the same table is a separate namespace.
    let mut other = lwcbench_link::store::open(&url, "other-run", "key-2").unwrap();
    assert_eq!(other.insert(&[r(1)]).unwrap(), 1);
    assert_eq!(st.all().unwrap().len(), 3);
}
