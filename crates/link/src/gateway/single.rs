//! The single gateway: one thread that checks, opens and stores in batched transactions, fed by
//! an MQTT 3.1.1 subscription or a UDP socket.
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rumqttc::{AsyncClient, Event, Packet, QoS};
use tokio::sync::mpsc;

use crate::clock::{now_ns, thread_cpu_ns};
use crate::gateway::accepted::{Marker, WRITE_EVERY};
use crate::gateway::checks::{Gateway, Opened, Refusal};
use crate::gateway::{next_batch, GatewaySpec, GwResult, GwSample, Incoming, QUEUE};
use crate::store::{Row, Store};
use crate::transport::mqtt::{ack_of, mqtt_options, received_frame, spawn_acker, still_connecting, wait_ready, Ready};
use crate::transport::udp::set_rcvbuf;
use crate::transport::Transport;
use crate::wire::compact::Carrier;
use crate::wire::frame::Proto;
use crate::wire::keys::MasterKey;

/// Counts a running gateway publishes while it runs (for a process that may be killed before
/// it can report its final tally).
#[derive(Default)]
pub struct LiveCounts {
    /// Rows stored as new.
    pub stored: AtomicU64,
    /// Copies the store already held.
    pub duplicates: AtomicU64,
    /// Frames refused.
    pub refused: AtomicU64,
}

/// The MQTT event loop of the single gateway: subscribe at every CONNACK, report the first
/// SUBACK on `ready`, pass every PUBLISH to the gateway thread.
async fn mqtt_events(
    mut ev: rumqttc::EventLoop,
    ready_tx: std::sync::mpsc::Sender<Ready>,
    sub_client: AsyncClient,
    filter: String,
    tx: mpsc::Sender<Incoming<Option<rumqttc::Publish>>>,
    broker: String,
) {
    let t0 = std::time::Instant::now();
    let mut ready = Some(ready_tx);
    loop {
        match ev.poll().await {
            Ok(Event::Incoming(Packet::ConnAck(_))) => {
                if let Some(r) = &ready {
                    let _ = r.send(Ready::Connected);
                }
                // (Re)subscribe on every connect; harmless with a persistent session.
                let c = sub_client.clone();
                let f = filter.clone();
                tokio::spawn(async move {
                    let _ = c.subscribe(f, QoS::AtLeastOnce).await;
                });
            }
            Ok(Event::Incoming(Packet::SubAck(_))) => {
                if let Some(r) = ready.take() {
                    let _ = r.send(Ready::Subscribed);
                }
            }
            Ok(Event::Incoming(Packet::Publish(p))) => {
                // Waits only for the gateway thread, which runs from before the CONNACK: a
                // persistent session's backlog, sent before the SUBACK, is worked through, not
                // waited on.
                let inc = Incoming { frame: received_frame(&p.payload), recv: now_ns(), ack: Some(ack_of(&p)) };
                if tx.send(inc).await.is_err() {
                    return;
                }
            }
            Ok(_) => {}
            Err(e) => {
                if let Some(r) = ready.take() {
                    if still_connecting(t0) {
                        ready = Some(r); // a first refusal may be the broker still starting
                    } else {
                        let _ = r.send(Ready::Failed(format!("--broker: cannot reach {broker}: {e}")));
                        return;
                    }
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}

/// The UDP receiving thread: every datagram on `sock` to the gateway thread until `stop`.
fn udp_receiver(
    sock: UdpSocket,
    stop: Arc<AtomicBool>,
    tx: mpsc::Sender<Incoming<Option<rumqttc::Publish>>>,
) -> Result<std::thread::JoinHandle<()>, String> {
    std::thread::Builder::new()
        .name("link-udp-rx".into())
        .spawn(move || {
            let mut buf = vec![0u8; 65536];
            while !stop.load(Ordering::Relaxed) {
                if let Ok((n, _)) = sock.recv_from(&mut buf) {
                    let inc = Incoming { frame: buf[..n].to_vec(), recv: now_ns(), ack: None };
                    if tx.blocking_send(inc).is_err() {
                        return;
                    }
                }
            }
        })
        .map_err(|e| e.to_string())
}

/// A running gateway.
pub struct GatewayHandle {
    processed: Arc<AtomicU64>,
    live: Arc<LiveCounts>,
    stop: Arc<AtomicBool>,
    /// Set by the gateway thread when it stops on an error (the store failed).
    failed: Arc<AtomicBool>,
    join: Option<std::thread::JoinHandle<GwResult>>,
    recv_task: Option<tokio::task::JoinHandle<()>>,
    ack_task: Option<tokio::task::JoinHandle<()>>,
    udp_thread: Option<std::thread::JoinHandle<()>>,
    /// Where a UDP gateway listens.
    pub udp_addr: Option<SocketAddr>,
    mqtt: Option<AsyncClient>,
}

impl GatewayHandle {
    /// Start the gateway: subscribe (MQTT) or bind (UDP), then a thread that checks, opens and
    /// stores in batched transactions, acknowledging MQTT messages only after their commit.
    ///
    /// Nothing waits in a circle: the MQTT event-loop task waits for room in the gateway's
    /// channel; the gateway thread waits for frames and for the store, never for the event loop
    /// (it hands acknowledgements to an acker task without waiting); the acker task waits for
    /// room in the client's request channel, which the event loop empties. An MQTT 3.1.1 client
    /// cannot limit what the broker sends it unacknowledged (mosquitto 2.0.11 sent ~40,000 with
    /// `max_inflight_messages 1000`); the acker's queue is bounded by the broker's packet ids
    /// (at most 65,535 unacknowledged per session).
    pub fn start(spec: GatewaySpec, master: &MasterKey, rt: &tokio::runtime::Handle) -> Result<GatewayHandle, String> {
        Self::start_queued(spec, master, rt, QUEUE)
    }

    /// [`GatewayHandle::start`] with `queue` in place of [`QUEUE`] for the gateway's channel and
    /// the MQTT request channel (tests make them tiny to provoke full queues).
    #[doc(hidden)]
    pub fn start_queued(
        spec: GatewaySpec,
        master: &MasterKey,
        rt: &tokio::runtime::Handle,
        queue: usize,
    ) -> Result<GatewayHandle, String> {
        Self::start_inner(spec, None, master, rt, queue)
    }

    /// [`GatewayHandle::start`] for frames on `carrier` (None: the link's own frames).
    pub fn start_carried(
        spec: GatewaySpec,
        carrier: Option<Carrier>,
        master: &MasterKey,
        rt: &tokio::runtime::Handle,
    ) -> Result<GatewayHandle, String> {
        Self::start_inner(spec, carrier, master, rt, QUEUE)
    }

    fn start_inner(
        mut spec: GatewaySpec,
        carrier: Option<Carrier>,
        master: &MasterKey,
        rt: &tokio::runtime::Handle,
        queue: usize,
    ) -> Result<GatewayHandle, String> {
        let devices = spec.devices.iter().copied();
        let mut gw = match carrier {
            Some(c) if spec.unauthenticated => {
                return Err(format!("--unsafe-no-integrity: not with {}", c.describe()));
            }
            Some(c) => Gateway::carried(&spec.suite, master, devices, spec.window, c)?,
            None => Gateway::new(&spec.suite, master, devices, spec.window, spec.unauthenticated)?,
        };
        if let Some(n) = spec.max_failed_tags {
            gw.set_max_failed_tags(n)?;
        }
        let keeper = match &spec.accepted {
            Some(p) => {
                gw.set_floors(&crate::gateway::sensor_floors(p, master, spec.store.as_mut())?);
                Some(Marker::start(p, &master.fingerprint(), WRITE_EVERY)?)
            }
            None => None,
        };
        let (tx, rx) = mpsc::channel::<Incoming<Option<rumqttc::Publish>>>(queue.max(1));
        let processed = Arc::new(AtomicU64::new(0));
        let live = Arc::new(LiveCounts::default());
        let stop = Arc::new(AtomicBool::new(false));
        let failed = Arc::new(AtomicBool::new(false));
        let mut h = GatewayHandle {
            processed: processed.clone(),
            live: live.clone(),
            stop: stop.clone(),
            failed: failed.clone(),
            join: None,
            recv_task: None,
            ack_task: None,
            udp_thread: None,
            udp_addr: None,
            mqtt: None,
        };
        let mut starting = None;
        match &spec.transport {
            Transport::Mqtt(b) => {
                let mut o = mqtt_options(&format!("lwcbench-gw-{}", spec.session), b);
                o.set_manual_acks(true);
                let (client, ev) = AsyncClient::new(o, queue.max(1));
                let (ready_tx, ready_rx) = std::sync::mpsc::channel::<Ready>();
                let filter = format!("lwcbench/link/{}/+", spec.session);
                let sub_client = client.clone();
                let broker = b.describe();
                let task = rt.spawn(mqtt_events(ev, ready_tx, sub_client, filter, tx, broker));
                starting = Some((ready_rx, format!("--broker: no answer from {} within 5 s", b.describe())));
                h.recv_task = Some(task);
                h.mqtt = Some(client);
            }
            Transport::Udp => {
                let sock = UdpSocket::bind("127.0.0.1:0").map_err(|e| format!("udp: cannot bind: {e}"))?;
                set_rcvbuf(&sock, 8 << 20);
                sock.set_read_timeout(Some(Duration::from_millis(50))).map_err(|e| e.to_string())?;
                h.udp_addr = Some(sock.local_addr().map_err(|e| e.to_string())?);
                h.udp_thread = Some(udp_receiver(sock, stop.clone(), tx)?);
            }
        }
        let acker = h.mqtt.clone().map(|c| {
            let (tx, task) = spawn_acker(rt, move |p: rumqttc::Publish| {
                let c = c.clone();
                async move { c.ack(&p).await.is_ok() }
            });
            h.ack_task = Some(task);
            tx
        });
        let (batch, max_samples, store) = (spec.batch.max(1), spec.max_samples, spec.store);
        let failed2 = failed.clone();
        h.join = Some(
            std::thread::Builder::new()
                .name("link-gateway".into())
                .spawn(move || gateway_loop(gw, store, keeper, rx, acker, processed, live, failed2, batch, max_samples))
                .map_err(|e| e.to_string())?,
        );
        if let Some((ready_rx, no_answer)) = starting {
            if let Err(e) = wait_ready(&ready_rx, &h.processed, &failed, &no_answer) {
                let res = h.stop(rt);
                return Err(e.or(res.error).unwrap_or(no_answer));
            }
        }
        Ok(h)
    }

    /// Frames checked so far (accepted + refused).
    pub fn processed(&self) -> u64 {
        self.processed.load(Ordering::Acquire)
    }

    /// Has the gateway stopped on an error? [`GatewayHandle::stop`] returns it.
    pub fn failed(&self) -> bool {
        self.failed.load(Ordering::Acquire)
    }

    /// (rows stored, duplicates ignored, frames refused) so far.
    pub fn live(&self) -> (u64, u64, u64) {
        let l = &self.live;
        (l.stored.load(Ordering::Acquire), l.duplicates.load(Ordering::Acquire), l.refused.load(Ordering::Acquire))
    }

    /// Stop receiving, let the gateway finish what it holds, and return its result.
    pub fn stop(mut self, rt: &tokio::runtime::Handle) -> GwResult {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.recv_task.take() {
            t.abort();
        }
        if let Some(c) = self.mqtt.take() {
            let _ = rt.block_on(async { tokio::time::timeout(Duration::from_secs(1), c.disconnect()).await });
        }
        if let Some(u) = self.udp_thread.take() {
            let _ = u.join();
        }
        let r = self.join.take().expect("started").join().expect("gateway thread does not panic");
        if let Some(t) = self.ack_task.take() {
            t.abort();
        }
        r
    }
}

#[allow(clippy::too_many_arguments)]
fn gateway_loop(
    mut gw: Gateway,
    mut store: Box<dyn Store>,
    keeper: Option<Marker>,
    mut rx: mpsc::Receiver<Incoming<Option<rumqttc::Publish>>>,
    acker: Option<mpsc::UnboundedSender<rumqttc::Publish>>,
    processed: Arc<AtomicU64>,
    live: Arc<LiveCounts>,
    failed: Arc<AtomicBool>,
    batch_max: usize,
    max_samples: usize,
) -> GwResult {
    let cpu0 = thread_cpu_ns();
    let mut samples: Vec<GwSample> = Vec::new();
    let (mut new_rows, mut dups) = (0u64, 0u64);
    let mut error = None;
    let mut batch: Vec<Incoming<Option<rumqttc::Publish>>> = Vec::with_capacity(batch_max);
    let mut rows: Vec<Row> = Vec::with_capacity(batch_max);
    let mut pending: Vec<GwSample> = Vec::with_capacity(batch_max);
    while next_batch(&mut rx, &mut batch, batch_max) {
        rows.clear();
        pending.clear();
        // (open started, opened, verdict) per frame. Bit-sliced DRACO opens the batch together,
        // so a frame's open stage is its batch's (docs/link.md "Gateway-side DRACO").
        let opened: Vec<(u64, u64, Result<Opened, Refusal>)> = if gw.opens_in_batches() {
            let start = now_ns();
            let frames: Vec<&[u8]> = batch.iter().map(|i| i.frame.as_slice()).collect();
            let results = gw.open_many(&frames);
            let end = now_ns();
            results.into_iter().map(|r| (start, end, r)).collect()
        } else {
            batch
                .iter()
                .map(|inc| {
                    let start = now_ns();
                    let r = gw.open(&inc.frame);
                    (start, now_ns(), r)
                })
                .collect()
        };
        for (inc, (start, opened, r)) in batch.iter().zip(opened) {
            if let Ok(o) = r {
                pending.push(GwSample {
                    device: o.device,
                    counter: o.counter,
                    recv: inc.recv,
                    start,
                    opened,
                    committed: 0,
                });
                rows.push(Row { device: o.device, counter: o.counter, cipher: o.cipher, payload: o.reading });
            }
        }
        if !rows.is_empty() {
            match store.insert(&rows) {
                Ok(n) => {
                    new_rows += n;
                    dups += rows.len() as u64 - n;
                    // The marks cover committed rows only (a crash before the commit leaves the
                    // broker's redeliveries acceptable); the marker writes them every WRITE_EVERY.
                    if let Some(k) = &keeper {
                        rows.iter().for_each(|r| k.note(Proto::Sensor, r.device, r.counter));
                        if let Some(e) = k.error() {
                            error = Some(e);
                            failed.store(true, Ordering::Release);
                            break;
                        }
                    }
                }
                Err(e) => {
                    // Nothing of this batch is acknowledged: the broker will redeliver it. The
                    // owner sees `failed` and ends the run or process with the error.
                    error = Some(e);
                    failed.store(true, Ordering::Release);
                    break;
                }
            }
        }
        let t = now_ns();
        for mut s in pending.drain(..) {
            if samples.len() < max_samples {
                s.committed = t;
                samples.push(s);
            }
        }
        // Acknowledge after the commit (refused frames too: they must not come back).
        // Never waits: the acker task waits for the client (see `spawn_acker`).
        if let Some(a) = &acker {
            for p in batch.iter_mut().filter_map(|inc| inc.ack.take()) {
                let _ = a.send(p);
            }
        }
        live.stored.store(new_rows, Ordering::Release);
        live.duplicates.store(dups, Ordering::Release);
        live.refused.store(gw.tally.refused_total(), Ordering::Release);
        processed.fetch_add(batch.len().max(rows.len()) as u64, Ordering::Release);
        batch.clear();
    }
    // A clean stop (or a store error: what committed before it) writes the marks held back.
    if let Some(Err(e)) = keeper.as_ref().map(Marker::finish) {
        error.get_or_insert(e);
    }
    GwResult {
        tally: gw.tally.clone(),
        samples,
        new_rows,
        duplicates: dups,
        cpu_ns: thread_cpu_ns() - cpu0,
        store,
        error,
    }
}
