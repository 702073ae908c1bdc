//! A gateway survives what reaches it from its broker and its store: an oversized message (from
//! anyone who can publish), a persistent session's backlog larger than its frame channel at
//! restart, a store that fails (the run or process ends at once with the error) and a store
//! whose table is not the one this tool creates.
// Helpers outside #[test] functions unwrap too: a panic in a test is its failure report.
#![allow(clippy::unwrap_used)]
mod support;

use lwcbench_link::wire::frame::Proto;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use lwcbench_link::gateway::checks::Refusal;
use lwcbench_link::gateway::process::GatewayProcess;
use lwcbench_link::gateway::single::GatewayHandle;
use lwcbench_link::gateway::GatewaySpec;
use lwcbench_link::session::{self, LinkConfig};
use lwcbench_link::store::{self, Row};
use lwcbench_link::transport::broker::{self, BrokerAddr};
use lwcbench_link::transport::Transport;
use lwcbench_link::wire::frame::Header;
use lwcbench_link::wire::keys::MasterKey;
use lwcbench_link::wire::suite::{self, Keyed};

/// The key fingerprint the stores of these tests are opened with (the store takes it as given).
const KEY: &str = "test-key";
use rumqttc::{AsyncClient, Event, MqttOptions, Packet, QoS};

const SUITE: &str = "Ascon-AEAD128";
/// The largest MQTT packet (remaining length 2^28 − 1, MQTT 3.1.1 §2.2.3, + 5 header bytes).
const ANY_SIZE: usize = (1 << 28) - 1 + 5;

fn at(port: u16) -> BrokerAddr {
    BrokerAddr { host: "127.0.0.1".into(), port, embedded: false }
}

fn spec(b: &BrokerAddr, store: &str, session: &str) -> GatewaySpec {
    GatewaySpec {
        suite: suite::find(SUITE).unwrap(),
        unauthenticated: false,
        devices: vec![0, 1, 2],
        window: 1 << 16,
        store: store::open(store, session, KEY).unwrap(),
        session: session.to_string(),
        transport: Transport::Mqtt(b.clone()),
        batch: 8,
        max_samples: 0,
        max_failed_tags: None,
        accepted: None,
    }
}

/// The reading of counter `c` and its frame from device `d`.
fn reading(c: u64) -> Vec<u8> {
    vec![c as u8, (c >> 8) as u8, 0x5a, 0xa5]
}

fn frames(master: &MasterKey, d: u32, counters: std::ops::RangeInclusive<u64>) -> Vec<Vec<u8>> {
    let s = suite::find(SUITE).unwrap();
    let mut k = Keyed::derived(&s, master, Proto::Sensor, d, false).unwrap();
    counters
        .map(|c| {
            let mut f = Vec::new();
            k.seal(d, c, &reading(c), &mut f).unwrap();
            f
        })
        .collect()
}

/// Publish `msgs` (topic, payload, retain) at QoS 1 from a client of its own that takes packets
/// of any size, and return once the broker acknowledged all of them.
fn publish(h: &tokio::runtime::Handle, b: &BrokerAddr, msgs: Vec<(String, Vec<u8>, bool)>) {
    h.block_on(async {
        let mut o = MqttOptions::new(format!("test-pub-{}", session::new_session()), b.host.clone(), b.port);
        o.set_max_packet_size(ANY_SIZE, ANY_SIZE);
        o.set_inflight(500);
        let (c, mut ev) = AsyncClient::new(o, 64);
        let acked = Arc::new(AtomicU64::new(0));
        let a2 = acked.clone();
        let task = tokio::spawn(async move {
            loop {
                match ev.poll().await {
                    Ok(Event::Incoming(Packet::PubAck(_))) => {
                        a2.fetch_add(1, Ordering::Release);
                    }
                    Ok(_) => {}
                    Err(e) => panic!("test publisher: {e}"),
                }
            }
        });
        let n = msgs.len() as u64;
        for (t, p, retain) in msgs {
            c.publish(t, QoS::AtLeastOnce, retain, p).await.unwrap();
        }
        let t0 = Instant::now();
        while acked.load(Ordering::Acquire) < n {
            assert!(
                t0.elapsed() < Duration::from_secs(30),
                "broker acknowledged {} of {n}",
                acked.load(Ordering::Acquire)
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let _ = tokio::time::timeout(Duration::from_secs(1), c.disconnect()).await;
        task.abort();
    })
}

/// Frames checked once `want` were checked or nothing moved for 10 s (a gateway that stops
/// receiving fails the test, it does not hang it).
fn wait_checked(gw: &GatewayHandle, want: u64) -> u64 {
    let mut last = (gw.processed(), Instant::now());
    while gw.processed() < want && last.1.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(10));
        if gw.processed() != last.0 {
            last = (gw.processed(), Instant::now());
        }
    }
    gw.processed()
}

/// A 16-byte header of device `d` followed by 300 KiB: larger than the 256 KiB frame limit.
fn oversized(d: u32) -> Vec<u8> {
    let h = Header::new(Proto::Sensor, suite::find(SUITE).unwrap().id, 0, d, 99);
    let mut v = h.encode().to_vec();
    v.resize(16 + 300 * 1024, 0xAA);
    v
}

/// mosquitto as installed (no `message_size_limit`: it delivers any size the protocol allows).
/// Before the gateway's client took packets of any size, the first oversized message made it
/// reconnect for ever (the broker sent the message again each time): nothing later was stored.
#[test]
fn an_oversized_message_is_counted_malformed_and_the_gateway_goes_on() {
    let Some(m) = support::mosquitto() else { return };
    let b = at(m.port);
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("big.db").display().to_string();
    let (rt, session, master) =
        (lwcbench_link::transport::runtime().unwrap(), session::new_session(), MasterKey::from_bytes([0x31; 32]));
    let h = rt.handle().clone();
    // A retained one is there before the gateway's first subscription.
    publish(&h, &b, vec![(lwcbench_link::transport::mqtt::topic(&session, 2), oversized(2), true)]);
    let gw = GatewayHandle::start(spec(&b, &store, &session), &master, &h).unwrap();
    let mut msgs = vec![(lwcbench_link::transport::mqtt::topic(&session, 1), oversized(1), false)];
    msgs.extend(
        frames(&master, 1, 1..=10).into_iter().map(|f| (lwcbench_link::transport::mqtt::topic(&session, 1), f, false)),
    );
    publish(&h, &b, msgs);
    let checked = wait_checked(&gw, 12);
    let res = gw.stop(&h);
    assert_eq!(checked, 12, "the gateway checked {checked} of 2 oversized + 10 frames");
    assert!(res.error.is_none(), "{:?}", res.error);
    assert_eq!(res.tally.count(Refusal::Malformed), 2);
    assert_eq!((res.tally.accepted, res.new_rows), (10, 10));
    // Restarted: the oversized message was acknowledged, nothing comes again but the retained
    // message, which a (re)subscription receives once more and which is refused again.
    let gw = GatewayHandle::start(spec(&b, &store, &session), &master, &h).unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let again = gw.processed();
    let res = gw.stop(&h);
    rt.shutdown_timeout(Duration::from_secs(1));
    assert!(again <= 1, "{again} messages redelivered after a restart");
    assert_eq!((res.tally.count(Refusal::Malformed), res.new_rows), (again, 0));
}

/// The embedded broker takes at most 256 KiB + 1 KiB of payload: a message between that and the
/// frame limit reaches the gateway and is refused as malformed; the gateway goes on.
#[test]
fn a_message_just_over_the_frame_limit_is_malformed_on_the_embedded_broker() {
    let b = broker::embedded().unwrap();
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("over.db").display().to_string();
    let (rt, session, master) =
        (lwcbench_link::transport::runtime().unwrap(), session::new_session(), MasterKey::from_bytes([0x32; 32]));
    let h = rt.handle().clone();
    let gw = GatewayHandle::start(spec(&b, &store, &session), &master, &h).unwrap();
    let mut big = oversized(1);
    big.truncate(lwcbench_link::wire::frame::MAX_FRAME + 100);
    let mut msgs = vec![(lwcbench_link::transport::mqtt::topic(&session, 1), big, false)];
    msgs.extend(
        frames(&master, 1, 1..=5).into_iter().map(|f| (lwcbench_link::transport::mqtt::topic(&session, 1), f, false)),
    );
    publish(&h, &b, msgs);
    let checked = wait_checked(&gw, 6);
    let res = gw.stop(&h);
    rt.shutdown_timeout(Duration::from_secs(1));
    assert_eq!(checked, 6);
    assert_eq!((res.tally.count(Refusal::Malformed), res.new_rows), (1, 5));
}

/// Backlog at restart: the gateway's persistent session holds N frames, far more than its
/// 4-entry frame channel, of which the first 1000 were committed before it went away but never
/// acknowledged. The broker sends the backlog right after the CONNACK, before the SUBACK the
/// gateway waits for; before, the event loop blocked on the full channel (the gateway thread
/// only started after the SUBACK) and every restart failed with "no answer … within 5 s".
fn restart_with_backlog(b: BrokerAddr) {
    const N: u64 = 3000;
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("backlog.db").display().to_string();
    let (rt, session, master) =
        (lwcbench_link::transport::runtime().unwrap(), session::new_session(), MasterKey::from_bytes([0x33; 32]));
    let h = rt.handle().clone();
    // The session and its subscription exist; the gateway is gone.
    let gw = GatewayHandle::start_queued(spec(&b, &store, &session), &master, &h, 4).unwrap();
    assert!(gw.stop(&h).error.is_none());
    publish(
        &h,
        &b,
        frames(&master, 0, 1..=N)
            .into_iter()
            .map(|f| (lwcbench_link::transport::mqtt::topic(&session, 0), f, false))
            .collect(),
    );
    let committed: Vec<Row> = (1..=1000)
        .map(|c| Row { device: 0, counter: c, cipher: suite::find(SUITE).unwrap().id, payload: reading(c) })
        .collect();
    assert_eq!(store::open(&store, &session, KEY).unwrap().insert(&committed).unwrap(), 1000);
    let gw = GatewayHandle::start_queued(spec(&b, &store, &session), &master, &h, 4)
        .unwrap_or_else(|e| panic!("restart with a backlog of {N}: {e}"));
    let checked = wait_checked(&gw, N);
    let res = gw.stop(&h);
    rt.shutdown_timeout(Duration::from_secs(1));
    assert_eq!(checked, N);
    assert!(res.error.is_none(), "{:?}", res.error);
    assert_eq!((res.new_rows, res.duplicates), (N - 1000, 1000));
    let rows = store::open(&store, &session, KEY).unwrap().all().unwrap();
    let want: Vec<(u32, u64, Vec<u8>)> = (1..=N).map(|c| (0, c, reading(c))).collect();
    let got: Vec<(u32, u64, Vec<u8>)> = rows.into_iter().map(|r| (r.device, r.counter, r.payload)).collect();
    assert_eq!(got, want, "every frame stored exactly once");
}

#[test]
fn a_restart_with_a_backlog_comes_up_mosquitto() {
    let Some(m) = support::mosquitto() else { return };
    restart_with_backlog(at(m.port));
}

/// A store that fails on every insert (a trigger raising SQLITE_FULL's message) under a table
/// that is otherwise the right one.
fn failing_store(dir: &std::path::Path) -> String {
    let p = dir.join("full.db");
    drop(store::Sqlite::open(&p, "setup", KEY).unwrap());
    let c = rusqlite::Connection::open(&p).unwrap();
    c.execute_batch(
        "CREATE TRIGGER full BEFORE INSERT ON readings BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END;",
    )
    .unwrap();
    p.display().to_string()
}

fn session_cfg(dir: &std::path::Path, store: String) -> LinkConfig {
    LinkConfig {
        suite: suite::find(SUITE).unwrap(),
        unauthenticated: false,
        devices: 2,
        messages: 50,
        interval: None,
        transport: Transport::Mqtt(broker::embedded().unwrap()),
        store,
        window: 1024,
        counter_block: 1024,
        key_file: dir.join("master.key"),
        counter_file: dir.join("counters"),
        connections: 1,
        drain_timeout: Duration::from_secs(60),
        readings: lwcbench_link::device::fleet::dataset_readings(&lwcbench_engine::dataset::Dataset::builtin()),
        batch: 16,
        session: session::new_session(),
        carrier: None,
    }
}

/// The run ends with the store's error as soon as the gateway stops on it, not after the
/// 60 s drain timeout.
fn session_ends_on_store_failure(workers: usize) {
    let d = tempfile::tempdir().unwrap();
    let cfg = session_cfg(d.path(), failing_store(d.path()));
    let t0 = Instant::now();
    let e = match session::run_workers(&cfg, workers) {
        Ok(_) => panic!("a session whose store fails succeeded"),
        Err(e) => e,
    };
    assert!(e.contains("database or disk is full"), "{e}");
    assert!(!e.contains('\n'), "{e}");
    assert!(t0.elapsed() < Duration::from_secs(20), "the error came after {:?}", t0.elapsed());
}

#[test]
fn the_single_gateway_ends_the_session_when_its_store_fails() {
    session_ends_on_store_failure(1);
}

#[test]
fn the_workers_end_the_session_when_their_store_fails() {
    session_ends_on_store_failure(2);
}

/// `lwcbench link gateway`: the process returns the store's error (the CLI prints it and exits
/// non-zero) instead of running on with frozen stats until SIGTERM.
#[test]
fn the_gateway_process_ends_when_its_store_fails() {
    let d = tempfile::tempdir().unwrap();
    let b = broker::embedded().unwrap();
    let (session, master) = (session::new_session(), MasterKey::from_bytes([0x35; 32]));
    let p = GatewayProcess {
        suite: suite::find(SUITE).unwrap(),
        devices: vec![0, 1],
        window: 1024,
        batch: 16,
        store: failing_store(d.path()),
        session: session.clone(),
        broker: b.clone(),
        master: MasterKey::from_bytes([0x35; 32]),
        stats: None,
        stats_every: Duration::from_secs(1),
        shared: None,
        max_failed_tags: None,
        accepted: None,
    };
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = done_tx.send(p.run(move || ready_tx.send(()).unwrap()));
    });
    ready_rx.recv_timeout(Duration::from_secs(10)).expect("the gateway process came up");
    let rt = lwcbench_link::transport::runtime().unwrap();
    publish(
        rt.handle(),
        &b,
        frames(&master, 1, 1..=3)
            .into_iter()
            .map(|f| (lwcbench_link::transport::mqtt::topic(&session, 1), f, false))
            .collect(),
    );
    let r = done_rx.recv_timeout(Duration::from_secs(15)).expect("the gateway process still runs on a failed store");
    let e = r.expect_err("a gateway process whose store fails ended without an error");
    assert!(e.contains("database or disk is full"), "{e}");
    rt.shutdown_timeout(Duration::from_secs(1));
}

/// PostgreSQL: a `lwcbench_link_readings` of someone else's (no unique key, a view, another
/// column type) is refused with one line naming what is wrong; the tool's own table opens.
#[test]
fn a_foreign_postgres_table_is_refused() {
    let Some((_pg, url)) = support::postgres() else { return };
    let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    let cases = [
        (
            "CREATE TABLE lwcbench_link_readings (key_ref BIGINT NOT NULL, run TEXT NOT NULL, device BIGINT NOT NULL,
             counter BIGINT NOT NULL, cipher SMALLINT NOT NULL, payload BYTEA NOT NULL)",
            "has no UNIQUE (counter, device, key_ref) key",
        ),
        (
            "CREATE TABLE lwcbench_link_readings (key_ref BIGINT, run TEXT, device BIGINT, counter BIGINT, cipher SMALLINT,
             payload BYTEA, UNIQUE (device, counter))",
            "has a unique key on (counter, device), not only on (counter, device, key_ref)",
        ),
        (
            "CREATE TABLE lwcbench_link_readings (key_ref BIGINT, run TEXT, device INT, counter BIGINT, cipher SMALLINT,
             payload BYTEA, UNIQUE (key_ref, device, counter))",
            "column 'device' is 'integer', not bigint",
        ),
        (
            "CREATE TABLE t (key_ref BIGINT, run TEXT, device BIGINT, counter BIGINT, cipher SMALLINT, payload BYTEA,
             UNIQUE (key_ref, device, counter)); CREATE VIEW lwcbench_link_readings AS SELECT * FROM t",
            "'lwcbench_link_readings' is a view, not a table",
        ),
        // An older lwcbench's table, keyed by run: the message says what to do.
        (
            "CREATE TABLE lwcbench_link_readings (run TEXT NOT NULL, device BIGINT NOT NULL, counter BIGINT NOT NULL,
             cipher SMALLINT NOT NULL, payload BYTEA NOT NULL, UNIQUE (run, device, counter))",
            "has no key_ref column: an older lwcbench wrote it, keyed by (run, device, counter), which misses a frame \
             replayed into a later session; rename or drop the tables lwcbench_link_readings and lwcbench_link_devices",
        ),
        // The previous lwcbench's table, the key's fingerprint in every row.
        (
            "CREATE TABLE lwcbench_link_readings (key_id TEXT NOT NULL, run TEXT NOT NULL, device BIGINT NOT NULL,
             counter BIGINT NOT NULL, cipher SMALLINT NOT NULL, payload BYTEA NOT NULL, UNIQUE (key_id, device, counter))",
            "has a key_id column: an earlier lwcbench wrote it, with the key's fingerprint in every row; upgrade it \
             with the SQL in docs/link.md (Upgrading a store) or use another database",
        ),
    ];
    for (sql, want) in cases {
        c.batch_execute(sql).unwrap();
        let e = match store::open(&url, "r", KEY) {
            Ok(_) => panic!("opened a store with: {sql}"),
            Err(e) => e,
        };
        assert!(e.starts_with("--store: ") && e.contains(want) && !e.contains('\n'), "{e}");
        let drop = if sql.contains("VIEW") {
            "DROP VIEW lwcbench_link_readings; DROP TABLE t"
        } else {
            "DROP TABLE lwcbench_link_readings"
        };
        c.batch_execute(drop).unwrap();
        // Refused in the transaction that would have created it: no keys table is left.
        let keys: Option<String> = c.query_one("SELECT to_regclass('lwcbench_link_keys')::text", &[]).unwrap().get(0);
        assert_eq!(keys, None, "{sql}");
    }
    let mut s = store::open(&url, "r", KEY).unwrap();
    let r = Row { device: 1, counter: 2, cipher: 3, payload: vec![4] };
    assert_eq!(s.insert(&[r.clone(), r.clone()]).unwrap(), 1);
}

/// The PostgreSQL upgrade docs/link.md gives for a store with the key's fingerprint in every
/// row: the readings keep their key, and a reading stored before is still refused after it.
#[test]
fn the_documented_postgres_upgrade_converts_a_store_of_the_previous_format() {
    let Some((_pg, url)) = support::postgres() else { return };
    let docs = include_str!("../../../docs/link.md");
    let section = &docs[docs.find("### Upgrading a store").expect("docs/link.md has the section")..];
    let sql = section.split("```sql\n").nth(2).and_then(|b| b.split("```").next()).expect("a second sql block");
    let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    const K2: &str = "4522d92be3296147132c72dd4fb8d592";
    c.batch_execute(&format!(
        "CREATE TABLE lwcbench_link_readings (key_id TEXT NOT NULL, run TEXT NOT NULL, device BIGINT NOT NULL,
         counter BIGINT NOT NULL, cipher SMALLINT NOT NULL, payload BYTEA NOT NULL, UNIQUE (key_id, device, counter));
         CREATE TABLE lwcbench_link_devices (key_id TEXT NOT NULL, device BIGINT NOT NULL, top BIGINT NOT NULL,
         PRIMARY KEY (key_id, device));
         INSERT INTO lwcbench_link_readings VALUES ('{KEY}', 's1', 1, 0, 1, '\\x00'), ('{KEY}', 's1', 1, 1, 1, '\\x01'),
                                                   ('{K2}', 's2', 1, 0, 1, '\\x02');
         INSERT INTO lwcbench_link_devices VALUES ('{KEY}', 1, 1), ('{K2}', 1, 0);"
    ))
    .unwrap();
    assert!(store::open(&url, "s3", KEY).is_err(), "refused before the upgrade");
    c.batch_execute(sql).unwrap();
    let r = |c, b| Row { device: 1, counter: c, cipher: 1, payload: vec![b] };
    let mut s = store::open(&url, "s1", KEY).unwrap();
    assert_eq!(s.all().unwrap(), vec![r(0, 0), r(1, 1)]);
    assert_eq!(s.insert(&[r(1, 1), r(2, 2)]).unwrap(), 1, "counter 1 under the key is stored already");
    let mut s2 = store::open(&url, "s2", K2).unwrap();
    assert_eq!(s2.all().unwrap(), vec![r(0, 2)]);
    let mut w = lwcbench_link::store::shared::SharedState::open(&url, "s4", KEY, &[1]).unwrap();
    use lwcbench_link::store::shared::StoreVerdict::*;
    assert_eq!(w.commit(&[r(2, 2), r(3, 3)]).unwrap(), vec![Replay, Stored]);
}
