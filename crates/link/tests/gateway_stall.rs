//! The single gateway (`--workers 1`) keeps receiving under load: its MQTT event loop waits for
//! room in the gateway's channel, so the gateway thread must never wait for room in the MQTT
//! client's request channel to acknowledge — which only the event loop empties. Tiny queues
//! make both fill without any machine load; and a run whose gateway stops receiving must end in
//! an error, not in `missing` readings with exit 0.
// Helpers outside #[test] functions unwrap too: a panic in a test is its failure report.
#![allow(clippy::unwrap_used)]
use lwcbench_link::wire::frame::Proto;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

use lwcbench_link::device::counter::{CounterStore, DeviceCounter};
use lwcbench_link::device::fleet::DeviceSpec;
use lwcbench_link::gateway::single::GatewayHandle;
use lwcbench_link::gateway::workers::WorkerPool;
use lwcbench_link::gateway::GatewaySpec;
use lwcbench_link::session::{self, LinkConfig};
use lwcbench_link::transport::broker::{self, BrokerAddr};
use lwcbench_link::transport::Publisher;
use lwcbench_link::transport::Transport;
use lwcbench_link::wire::keys::MasterKey;
use lwcbench_link::wire::suite::{self, Keyed};

/// Frames: enough that the broker (rumqttd: 1024 in flight per connection) has far more
/// unacknowledged frames out to the gateway than both 4-entry queues hold.
const N: u64 = 3000;

/// Publish N frames of device 0 on `session` through `b`, and return once the broker has them
/// (QoS 1) or the client's queue took them.
fn publish(b: &BrokerAddr, session: &str, master: &MasterKey, dir: &std::path::Path, h: &tokio::runtime::Handle) {
    let s = suite::find("Ascon-AEAD128").unwrap();
    let counters = CounterStore::open(&dir.join("counters"), 1 << 16, master).unwrap();
    let block = counters.reserve_all(&[0]).unwrap().remove(0);
    let readings = lwcbench_link::device::fleet::dataset_readings(&lwcbench_engine::dataset::Dataset::builtin());
    let dev = h
        .block_on(async {
            let conn = lwcbench_link::transport::mqtt::mqtt_connect(&format!("lwcbench-dev-{session}-0"), b).await?;
            let key = master.cipher_key(Proto::Sensor, 0, s.id, s.key_len());
            let spec = DeviceSpec { device: 0, messages: N, interval: None, offset: Duration::ZERO, first_row: 0 };
            let publisher = Publisher::Mqtt { client: conn.client.clone(), session: session.to_string() };
            let keyed = Keyed::new(&s, &key, Proto::Sensor, false)?;
            let counter = DeviceCounter::with_block(&counters, 0, block);
            lwcbench_link::device::fleet::device_task(spec, keyed, counter, readings, publisher, None).await
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
        store: lwcbench_link::store::open(store, session, "test-key").unwrap(),
        session: session.to_string(),
        transport: Transport::Mqtt(b.clone()),
        batch: 8,
        max_samples: 0,
        max_failed_tags: None,
        accepted: None,
    }
}

#[test]
fn single_gateway_keeps_receiving_when_its_queues_are_full() {
    let d = tempfile::tempdir().unwrap();
    let b = broker::embedded().unwrap();
    let master = MasterKey::from_bytes([0x19; 32]);
    let session = session::new_session();
    let rt = lwcbench_link::transport::runtime().unwrap();
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
    let session = session::new_session();
    let rt = lwcbench_link::transport::runtime().unwrap();
    let h = rt.handle().clone();
    let store = d.path().join("w.db").display().to_string();
    let pool = WorkerPool::start_queued(spec(&b, &store, &session), &store, 1, &master, &h, 4, None).unwrap();
    publish(&b, &session, &master, d.path(), &h);
    let checked = wait_checked(|| pool.processed());
    let (res, _) = pool.stop(&h);
    rt.shutdown_timeout(Duration::from_secs(1));
    assert_eq!(checked, N, "the worker stopped receiving after {checked} of {N} frames");
    assert_eq!(res.new_rows, N);
    assert!(res.error.is_none(), "{:?}", res.error);
}

/// A broker that accepts everything and delivers nothing: CONNACK, SUBACK, PUBACK, PINGRESP
/// (MQTT 3.1.1 packet layouts, sections 3.2, 3.9, 3.4, 3.13), never a PUBLISH to a subscriber.
fn black_hole_broker() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for c in l.incoming().flatten() {
            std::thread::spawn(move || {
                let _ = serve(c);
            });
        }
    });
    port
}

fn serve(mut c: TcpStream) -> std::io::Result<()> {
    loop {
        let mut h = [0u8; 1];
        c.read_exact(&mut h)?;
        let (mut len, mut shift) = (0usize, 0);
        loop {
            let mut b = [0u8; 1];
            c.read_exact(&mut b)?;
            len |= ((b[0] & 0x7f) as usize) << shift;
            shift += 7;
            if b[0] & 0x80 == 0 {
                break;
            }
        }
        let mut body = vec![0u8; len];
        c.read_exact(&mut body)?;
        match h[0] >> 4 {
            1 => c.write_all(&[0x20, 2, 0, 0])?,
            3 if (h[0] >> 1) & 3 == 1 => {
                let t = u16::from_be_bytes([body[0], body[1]]) as usize;
                c.write_all(&[0x40, 2, body[2 + t], body[3 + t]])?;
            }
            8 => c.write_all(&[0x90, 3, body[0], body[1], 1])?,
            12 => c.write_all(&[0xd0, 0])?,
            14 => return Ok(()),
            _ => {}
        }
    }
}

#[test]
fn a_gateway_that_receives_nothing_is_an_error_not_missing_readings() {
    let d = tempfile::tempdir().unwrap();
    let port = black_hole_broker();
    let cfg = LinkConfig {
        suite: suite::find("Ascon-AEAD128").unwrap(),
        unauthenticated: false,
        devices: 2,
        messages: 10,
        interval: None,
        transport: Transport::Mqtt(BrokerAddr { host: "127.0.0.1".into(), port, embedded: false }),
        store: d.path().join("s.db").display().to_string(),
        window: 1024,
        counter_block: 1024,
        key_file: d.path().join("master.key"),
        counter_file: d.path().join("counters"),
        connections: 1,
        drain_timeout: Duration::from_millis(1500),
        readings: Arc::clone(&lwcbench_link::device::fleet::dataset_readings(
            &lwcbench_engine::dataset::Dataset::builtin(),
        )),
        batch: 64,
        session: session::new_session(),
        carrier: None,
    };
    let e = match session::run_workers(&cfg, 1) {
        Ok(o) => panic!("a run with {} of {} readings missing succeeded", o.missing, o.sent),
        Err(e) => e,
    };
    assert!(e.starts_with("gateway stalled: it checked 0 of 20 readings and none in the last 1."), "{e}");
    assert!(e.ends_with("20 not delivered (MQTT QoS 1: the broker still holds them)"), "{e}");
    assert!(!e.contains('\n'), "{e}");
}

/// A broker that starts listening a moment after the gateway starts connecting (a service
/// still starting; under load, the embedded broker once dropped a gateway's first connection):
/// the gateway retries its first connection instead of failing with "cannot reach" at once.
/// Before the retry, the refused first connection ended `GatewayHandle::start` with an error.
#[test]
fn the_gateway_waits_for_a_broker_that_is_still_starting() {
    let d = tempfile::tempdir().unwrap();
    let real = broker::embedded().unwrap();
    // A port nobody listens on yet; 700 ms later a relay to the embedded broker binds it.
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let (up_tx, up_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(700));
        let l = TcpListener::bind(("127.0.0.1", port)).unwrap();
        up_tx.send(()).unwrap();
        for c in l.incoming().flatten() {
            let s = TcpStream::connect(("127.0.0.1", real.port)).unwrap();
            let (mut c2, mut s2) = (c.try_clone().unwrap(), s.try_clone().unwrap());
            let (mut c, mut s) = (c, s);
            std::thread::spawn(move || std::io::copy(&mut c, &mut s));
            std::thread::spawn(move || std::io::copy(&mut s2, &mut c2));
        }
    });
    let late = BrokerAddr { host: "127.0.0.1".into(), port, embedded: false };
    let rt = lwcbench_link::transport::runtime().unwrap();
    let h = rt.handle().clone();
    let session = session::new_session();
    let store = d.path().join("late.db").display().to_string();
    let t0 = Instant::now();
    let gw = GatewayHandle::start(spec(&late, &store, &session), &MasterKey::from_bytes([1; 32]), &h);
    assert!(up_rx.try_recv().is_ok(), "the relay was not up when the gateway connected");
    assert!(t0.elapsed() >= Duration::from_millis(700));
    let gw = gw.unwrap_or_else(|e| panic!("a broker 0.7 s late was reported unreachable: {e}"));
    let _ = gw.stop(&h);
    rt.shutdown_timeout(Duration::from_secs(1));
}
