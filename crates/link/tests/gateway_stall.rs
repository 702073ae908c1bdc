//! Issue 19: the single gateway (`--workers 1`) stopped receiving under load. Its MQTT event
//! loop waited for room in the gateway's channel while the gateway thread waited for room in the
//! MQTT client's request channel to acknowledge — which only the event loop empties. Tiny queues
//! make both fill without any machine load.
use std::time::{Duration, Instant};

use lwcbench_link::broker::{self, BrokerAddr};
use lwcbench_link::counter::{CounterStore, DeviceCounter};
use lwcbench_link::keys::MasterKey;
use lwcbench_link::run::{self, DeviceSpec, GatewayHandle, GatewaySpec, Publisher, Transport};
use lwcbench_link::suite::{self, Keyed};
use lwcbench_link::workers::WorkerPool;

/// Frames: enough that the broker (rumqttd: 1024 in flight per connection) has far more
/// unacknowledged frames out to the gateway than both 4-entry queues hold.
const N: u64 = 3000;

/// Publish N frames of device 0 on `session` through `b`, and return once the broker has them
/// (QoS 1) or the client's queue took them.
fn publish(b: &BrokerAddr, session: &str, master: &MasterKey, dir: &std::path::Path, h: &tokio::runtime::Handle) {
    let s = suite::find("Ascon-AEAD128").unwrap();
    let counters = CounterStore::open(&dir.join("counters"), 1 << 16).unwrap();
    let block = counters.reserve_all(&[0]).unwrap().remove(0);
    let readings = run::dataset_readings(&lwcbench_engine::dataset::Dataset::builtin());
    let dev = h
        .block_on(async {
            let conn = run::mqtt_connect(&format!("lwcbench-dev-{session}-0"), b).await?;
            let key = master.device_key(s.id, 0, s.key_len());
            let spec = DeviceSpec { device: 0, messages: N, interval: None, offset: Duration::ZERO, first_row: 0 };
            let publisher = Publisher::Mqtt { client: conn.client.clone(), session: session.to_string() };
            let keyed = Keyed::new(&s, &key, false)?;
            let counter = DeviceCounter::with_block(&counters, 0, block);
            run::device_task(spec, keyed, counter, readings, publisher, None).await
        })
        .unwrap();
    assert_eq!(dev.len() as u64, N);
}

/// Frames checked once the gateway has checked N or made no progress for 20 s (bounded: a stall
/// fails the test, it does not hang it).
fn wait_checked(processed: impl Fn() -> u64) -> u64 {
    let mut last = (processed(), Instant::now());
    while processed() < N && last.1.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(10));
        if processed() != last.0 {
            last = (processed(), Instant::now());
        }
    }
    processed()
}

fn spec(b: &BrokerAddr, store: &str, session: &str) -> GatewaySpec {
    GatewaySpec {
        suite: suite::find("Ascon-AEAD128").unwrap(),
        unauthenticated: false,
        devices: vec![0],
        window: 1 << 16,
        store: lwcbench_link::store::open(store, session).unwrap(),
        session: session.to_string(),
        transport: Transport::Mqtt(b.clone()),
        batch: 8,
        max_samples: 0,
    }
}

#[test]
fn single_gateway_keeps_receiving_when_its_queues_are_full() {
    let d = tempfile::tempdir().unwrap();
    let b = broker::embedded().unwrap();
    let master = MasterKey::from_bytes([0x19; 32]);
    let session = run::new_session();
    let rt = run::runtime().unwrap();
    let h = rt.handle().clone();
    let store = d.path().join("g.db").display().to_string();
    // 4 frames waiting for the gateway thread, 4 requests (PUBACKs) waiting for the event loop.
    let gw = GatewayHandle::start_queued(spec(&b, &store, &session), &master, &h, 4).unwrap();
    publish(&b, &session, &master, d.path(), &h);
    let checked = wait_checked(|| gw.processed());
    let res = gw.stop(&h);
    rt.shutdown_timeout(Duration::from_secs(1));
    assert_eq!(checked, N, "the gateway stopped receiving after {checked} of {N} frames");
    assert_eq!((res.new_rows, res.duplicates), (N, 0));
    assert!(res.error.is_none(), "{:?}", res.error);
}

#[test]
fn a_worker_keeps_receiving_when_its_queues_are_full() {
    let d = tempfile::tempdir().unwrap();
    let b = broker::embedded().unwrap();
    let master = MasterKey::from_bytes([0x19; 32]);
    let session = run::new_session();
    let rt = run::runtime().unwrap();
    let h = rt.handle().clone();
    let store = d.path().join("w.db").display().to_string();
    let pool = WorkerPool::start_queued(spec(&b, &store, &session), &store, 1, &master, &h, 4).unwrap();
    publish(&b, &session, &master, d.path(), &h);
    let checked = wait_checked(|| pool.processed());
    let (res, _) = pool.stop(&h);
    rt.shutdown_timeout(Duration::from_secs(1));
    assert_eq!(checked, N, "the worker stopped receiving after {checked} of {N} frames");
    assert_eq!(res.new_rows, N);
    assert!(res.error.is_none(), "{:?}", res.error);
}
