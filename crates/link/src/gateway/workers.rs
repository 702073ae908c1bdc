//! Scale-out (`lwcbench link --workers K`): K gateway workers behind one MQTT v5 **shared
//! subscription** (`$share/<group>/lwcbench/link/<session>/+`), the broker spreading the
//! frames over them, each worker with its own MQTT connection, its own store connection and its
//! own thread. See docs/link.md, "Scale-out".
//!
//! With a shared subscription one device's frames reach several workers, so a window in one
//! worker's memory cannot decide alone. The **store is the authority** for replay state:
//!
//! * each worker keeps its own in-memory window as a *fast path* only: a counter inside it that
//!   this worker already stored is refused as `replay` at once; a counter older than it is not
//!   refused (another member may never have stored it) but goes to the store like a fresh one;
//! * the tag is verified (a forged frame never reaches the store, never moves any state);
//! * in **one store transaction per batch** the frames are inserted under the UNIQUE (key_ref,
//!   device, counter) key: a counter already there is refused as `replay`, every other one is
//!   stored, once, however far it lags behind its device's newest counter.
//!
//! So a frame is stored exactly once whichever member gets it and however late; the workers
//! never refuse `too_old`.
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rumqttc::v5::mqttbytes::v5::{Packet, Publish};
use rumqttc::v5::mqttbytes::QoS;
use rumqttc::v5::{AsyncClient, Event, MqttOptions};
use tokio::sync::mpsc;

use crate::clock::{now_ns, thread_cpu_ns};
use crate::gateway::accepted::{Marker, WRITE_EVERY};
use crate::gateway::checks::{Gateway, Opened, Refusal};
use crate::gateway::{next_batch, GatewaySpec, GwResult, GwSample, Incoming, QUEUE};
use crate::store::shared::{SharedState, StoreVerdict};
use crate::store::Row;
use crate::transport::broker::BrokerAddr;
use crate::transport::mqtt::{received_frame, spawn_acker, still_connecting, wait_ready, Ready, MQTT_MAX_PACKET};
use crate::transport::Transport;
use crate::wire::frame::Proto;
use crate::wire::keys::MasterKey;

/// Most gateway workers one session may start.
pub const MAX_WORKERS: usize = 64;

/// One worker's whole check: the gateway's structure/device/cipher/local-window/tag checks,
/// then the store's verdict. Replays found at the store are moved in the tally from
/// `accepted` to `replay`. The gateway must leave frames older than its window to the store
/// ([`Gateway::old_frames_to_store`]).
pub struct Checker {
    /// The gateway's checks.
    pub gateway: Gateway,
    /// The store's replay state.
    pub state: SharedState,
    /// When the last batch's gateway checks ended and its store transaction began.
    pub last_opened_ns: u64,
}

/// The outcome of one frame in a batch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Checked {
    /// Stored as new.
    Stored(Opened),
    /// Refused, by the gateway or the store.
    Refused(Refusal),
}

impl Checker {
    /// The checks of `gateway` then `state`.
    pub fn new(gateway: Gateway, state: SharedState) -> Checker {
        Checker { gateway, state, last_opened_ns: 0 }
    }

    /// Check, open and store a batch of frames; one outcome per frame, in order. `Err` means
    /// the store failed: nothing of the batch is stored and nothing may be acknowledged.
    pub fn process(&mut self, frames: &[&[u8]]) -> Result<Vec<Checked>, String> {
        let mut out: Vec<Option<Checked>> = vec![None; frames.len()];
        let mut idx = Vec::new();
        let mut rows = Vec::new();
        // one by one, or together on the bit-sliced DRACO (same verdicts: Gateway::open_many)
        for (i, r) in self.gateway.open_many(frames).into_iter().enumerate() {
            match r {
                Ok(o) => {
                    idx.push((i, o.clone()));
                    rows.push(Row { device: o.device, counter: o.counter, cipher: o.cipher, payload: o.reading });
                }
                Err(r) => out[i] = Some(Checked::Refused(r)),
            }
        }
        self.last_opened_ns = now_ns();
        let verdicts = self.state.commit(&rows)?;
        for ((i, o), v) in idx.into_iter().zip(verdicts) {
            out[i] = Some(match v {
                StoreVerdict::Stored => Checked::Stored(o),
                StoreVerdict::Replay => {
                    self.gateway.tally.accepted -= 1;
                    self.gateway.tally.refused[Refusal::Replay as usize] += 1;
                    Checked::Refused(Refusal::Replay)
                }
            });
        }
        Ok(out.into_iter().map(|x| x.expect("every frame has an outcome")).collect())
    }
}

/// The shared subscription filter of a session's gateway workers.
pub fn shared_filter(session: &str) -> String {
    format!("$share/lwcbench-gw-{session}/lwcbench/link/{session}/+")
}

/// K running gateway workers.
pub struct WorkerPool {
    processed: Arc<AtomicU64>,
    /// Rows stored and frames refused so far, over all workers.
    live: Arc<crate::gateway::single::LiveCounts>,
    /// Why a member's connection ended for good (another process took its session over).
    ended: Arc<std::sync::Mutex<Option<String>>>,
    stop: Arc<AtomicBool>,
    /// Set by a worker that stops on an error (its store failed).
    failed: Arc<AtomicBool>,
    workers: Vec<Worker>,
    store: Option<Box<dyn crate::store::Store>>,
    /// The key's accepted marks, raised by every worker as its batches commit.
    keeper: Option<Arc<Marker>>,
}

struct Worker {
    client: AsyncClient,
    task: tokio::task::JoinHandle<()>,
    ack_task: tokio::task::JoinHandle<()>,
    join: std::thread::JoinHandle<WorkerResult>,
}

struct WorkerResult {
    tally: crate::gateway::checks::Tally,
    samples: Vec<GwSample>,
    new_rows: u64,
    cpu_ns: u64,
    error: Option<String>,
}

/// The broker's DISCONNECT "Session taken over" (MQTT v5 reason 0x8E).
fn taken_over(e: &rumqttc::v5::ConnectionError) -> bool {
    use rumqttc::v5::mqttbytes::v5::DisconnectReasonCode;
    matches!(
        e,
        rumqttc::v5::ConnectionError::MqttState(rumqttc::v5::StateError::ServerDisconnect {
            reason_code: DisconnectReasonCode::SessionTakenOver,
            ..
        })
    )
}

fn v5_options(id: &str, host: &str, port: u16) -> MqttOptions {
    let mut o = MqttOptions::new(id, host, port);
    o.set_keep_alive(Duration::from_secs(30));
    // A persistent session (clean start off, expiry > 0): a worker that reconnects with its id
    // gets back what the broker queued for it.
    o.set_clean_start(false);
    o.set_session_expiry_interval(Some(600));
    // Anything the broker can deliver is read (and refused as `malformed` above MAX_FRAME): a
    // limit here would make a compliant broker drop oversized messages for this client uncounted.
    o.set_max_packet_size(Some(MQTT_MAX_PACKET as u32));
    o.set_receive_maximum(Some(4096));
    o.set_manual_acks(true);
    o
}

/// What one worker's MQTT event loop needs: where to say it is ready, its subscription, the
/// worker's channel, and where to record that another process took its session.
struct Events {
    ready: std::sync::mpsc::Sender<Ready>,
    sub_client: AsyncClient,
    filter: String,
    tx: mpsc::Sender<Incoming<Publish>>,
    opt: &'static str,
    broker: String,
    /// The refusal of a broker without shared subscriptions.
    no_shared: String,
    /// The error of a session taken over by another process with this client id.
    taken: String,
    ended: Arc<std::sync::Mutex<Option<String>>>,
    failed: Arc<AtomicBool>,
    t0: std::time::Instant,
}

/// One worker's MQTT event loop: subscribe at every CONNACK, report the first SUBACK (or why
/// the subscription failed) on `ready`, pass every PUBLISH to the worker, and stop when the
/// worker is gone or another process took the session.
async fn worker_events(mut ev: rumqttc::v5::EventLoop, e: Events) {
    let Events { ready: ready_tx, sub_client, filter: f, tx, opt, broker, no_shared, taken, ended, failed, t0 } = e;
    let mut ready = Some(ready_tx);
    let mut takeover = crate::gateway::shared::TakeoverLoop::default();
    loop {
        match ev.poll().await {
            Ok(Event::Incoming(Packet::ConnAck(c))) => {
                takeover.connected(std::time::Instant::now());
                // MQTT v5 §3.2.2.3.13: 0 = the server does not support them.
                if c.properties.as_ref().and_then(|p| p.shared_subscription_available) == Some(0) {
                    if let Some(r) = ready.take() {
                        let _ = r.send(Ready::Failed(no_shared));
                    }
                    return;
                }
                if let Some(r) = &ready {
                    let _ = r.send(Ready::Connected);
                }
                let (c, f) = (sub_client.clone(), f.clone());
                tokio::spawn(async move {
                    let _ = c.subscribe(f, QoS::AtLeastOnce).await;
                });
            }
            Ok(Event::Incoming(Packet::SubAck(s))) => {
                use rumqttc::v5::mqttbytes::v5::SubscribeReasonCode as Code;
                let ok = s.return_codes.iter().all(|c| matches!(c, Code::Success(_)));
                let unsupported = s.return_codes.iter().any(|c| matches!(c, Code::SharedSubscriptionsNotSupported));
                if let Some(r) = ready.take() {
                    let _ = r.send(if ok {
                        Ready::Subscribed
                    } else if unsupported {
                        Ready::Failed(no_shared.clone())
                    } else {
                        Ready::Failed(format!("{opt}: {broker} refused the shared subscription: {s:?}"))
                    });
                }
            }
            Ok(Event::Incoming(Packet::Publish(p))) => {
                // Waits only for the worker thread, which runs from before the CONNACK.
                let inc = Incoming { frame: received_frame(&p.payload), recv: now_ns(), ack: p };
                if tx.send(inc).await.is_err() {
                    return;
                }
            }
            Ok(_) => {}
            // Another process connected with this client id (a broker that says so, or one that
            // keeps closing the connection right after accepting it): two members with one name
            // would take the session from each other for ever.
            Err(e) if taken_over(&e) || takeover.dropped(std::time::Instant::now()) => {
                *ended.lock().unwrap_or_else(|p| p.into_inner()) = Some(taken);
                failed.store(true, Ordering::Release);
                return;
            }
            Err(e) => {
                if let Some(r) = ready.take() {
                    if still_connecting(t0) {
                        ready = Some(r); // a first refusal may be the broker still starting
                    } else {
                        let _ = r.send(Ready::Failed(format!("--broker: cannot reach {broker} (MQTT v5): {e}")));
                        return;
                    }
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}

impl WorkerPool {
    /// Start `k` workers on `spec` (MQTT only; `store_spec` as `--store`). Each subscribes to
    /// [`shared_filter`] over MQTT v5; the call returns after every worker's SUBACK. A worker
    /// acknowledges through an acker task as the single gateway does (see
    /// [`crate::gateway::single::GatewayHandle::start`]): the receive maximum (4096) bounds what a broker
    /// that honours it sends unacknowledged, but nothing waits in a circle either way.
    pub fn start(
        spec: GatewaySpec,
        store_spec: &str,
        k: usize,
        master: &MasterKey,
        rt: &tokio::runtime::Handle,
    ) -> Result<WorkerPool, String> {
        Self::start_queued(spec, store_spec, k, master, rt, QUEUE, None)
    }

    /// One worker as one member of the shared subscription group `member.group`, with its
    /// client id from `member` (`lwcbench link gateway --shared`, [`crate::gateway::shared`]).
    pub fn start_member(
        spec: GatewaySpec,
        store_spec: &str,
        member: &crate::gateway::shared::Member,
        master: &MasterKey,
        rt: &tokio::runtime::Handle,
    ) -> Result<WorkerPool, String> {
        Self::start_queued(spec, store_spec, 1, master, rt, QUEUE, Some(member))
    }

    /// [`WorkerPool::start`] (or, with `member`, [`WorkerPool::start_member`]) with `queue` in
    /// place of [`QUEUE`] for each worker's channel and MQTT request channel (tests make them
    /// tiny to provoke full queues).
    #[doc(hidden)]
    pub fn start_queued(
        mut spec: GatewaySpec,
        store_spec: &str,
        k: usize,
        master: &MasterKey,
        rt: &tokio::runtime::Handle,
        queue: usize,
        member: Option<&crate::gateway::shared::Member>,
    ) -> Result<WorkerPool, String> {
        if !(1..=MAX_WORKERS).contains(&k) {
            return Err(format!("--workers: {k} is not in 1..={MAX_WORKERS}"));
        }
        let b: BrokerAddr = match &spec.transport {
            Transport::Mqtt(b) => b.clone(),
            Transport::Udp => return Err("--workers above 1 needs --transport mqtt (a shared subscription)".into()),
        };
        let port = if b.embedded { crate::transport::broker::embedded_v5_port()? } else { b.port };
        let processed = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let filter = member.map_or_else(|| shared_filter(&spec.session), |m| m.filter(&spec.session));
        let opt = if member.is_some() { "--shared" } else { "--workers" };
        let failed = Arc::new(AtomicBool::new(false));
        let live = Arc::new(crate::gateway::single::LiveCounts::default());
        let ended = Arc::new(std::sync::Mutex::new(None));
        // One look at the store for every worker: the marks it does not cover are floors.
        let floors = match &spec.accepted {
            Some(p) => crate::gateway::sensor_floors(p, master, spec.store.as_mut())?,
            None => Default::default(),
        };
        let keeper = match &spec.accepted {
            Some(p) => Some(Arc::new(Marker::start(p, &master.fingerprint(), WRITE_EVERY)?)),
            None => None,
        };
        let mut pool = WorkerPool {
            processed: processed.clone(),
            live: live.clone(),
            ended: ended.clone(),
            stop,
            failed: failed.clone(),
            workers: Vec::new(),
            store: Some(spec.store),
            keeper: keeper.clone(),
        };
        for i in 0..k {
            let mut gw =
                Gateway::new(&spec.suite, master, spec.devices.iter().copied(), spec.window, spec.unauthenticated)?
                    .old_frames_to_store();
            if let Some(n) = spec.max_failed_tags {
                gw.set_max_failed_tags(n)?;
            }
            gw.set_floors(&floors);
            let state = SharedState::open(store_spec, &spec.session, &master.fingerprint(), &spec.devices)?;
            let queue = queue.max(1);
            let (tx, rx) = mpsc::channel::<Incoming<Publish>>(queue);
            let id =
                member.map_or_else(|| format!("lwcbench-gw-{}-w{i}", spec.session), |m| m.client_id(&spec.session));
            let (client, ev) = AsyncClient::new(v5_options(&id, &b.host, port), queue);
            let (ready_tx, ready_rx) = std::sync::mpsc::channel::<Ready>();
            let broker = b.describe();
            let events = Events {
                no_shared: format!(
                    "{opt}: {broker} does not offer shared subscriptions; use a broker that does (mosquitto 1.6 or \
                     later)"
                ),
                taken: format!(
                    "{opt}: the broker keeps closing the connection of {id} right after accepting it: another \
                     gateway process uses this client id (give every member its own --member)"
                ),
                ready: ready_tx,
                sub_client: client.clone(),
                filter: filter.clone(),
                tx,
                opt,
                broker,
                ended: ended.clone(),
                failed: failed.clone(),
                t0: std::time::Instant::now(),
            };
            let task = rt.spawn(worker_events(ev, events));
            let c = client.clone();
            let (acker, ack_task) = spawn_acker(rt, move |p: Publish| {
                let c = c.clone();
                async move { c.ack(&p).await.is_ok() }
            });
            let (processed2, failed2, live2, keeper2) =
                (processed.clone(), failed.clone(), live.clone(), keeper.clone());
            let (batch, max_samples) = (spec.batch.max(1), spec.max_samples / k);
            let join = std::thread::Builder::new()
                .name(format!("link-gw-w{i}"))
                .spawn(move || {
                    let chk = Checker::new(gw, state);
                    worker_loop(chk, rx, acker, (processed2, live2), keeper2, failed2, batch, max_samples)
                })
                .map_err(|e| e.to_string())?;
            pool.workers.push(Worker { client, task, ack_task, join });
            let no_answer = format!("--broker: no MQTT v5 answer from {} within 5 s", b.describe());
            if let Err(e) = wait_ready(&ready_rx, &processed, &failed, &no_answer) {
                let (res, _) = pool.stop(rt);
                return Err(e.or(res.error).unwrap_or(no_answer));
            }
        }
        Ok(pool)
    }

    /// Frames checked so far by all workers.
    pub fn processed(&self) -> u64 {
        self.processed.load(Ordering::Acquire)
    }

    /// Has a worker stopped on an error? [`WorkerPool::stop`] returns it.
    pub fn failed(&self) -> bool {
        self.failed.load(Ordering::Acquire)
    }

    /// (rows stored, 0, frames refused) so far: copies are refusals here (`replay`).
    pub fn live(&self) -> (u64, u64, u64) {
        (self.live.stored.load(Ordering::Acquire), 0, self.live.refused.load(Ordering::Acquire))
    }

    /// Stop every worker and merge their results; also the frames each worker checked.
    pub fn stop(mut self, rt: &tokio::runtime::Handle) -> (GwResult, Vec<u64>) {
        self.stop.store(true, Ordering::Relaxed);
        let mut res = GwResult {
            tally: Default::default(),
            samples: Vec::new(),
            new_rows: 0,
            duplicates: 0,
            cpu_ns: 0,
            store: self.store.take().expect("store kept until stop"),
            error: None,
        };
        let mut per_worker = Vec::new();
        for w in self.workers.drain(..) {
            w.task.abort();
            let _ = rt.block_on(async { tokio::time::timeout(Duration::from_secs(1), w.client.disconnect()).await });
            drop(w.client);
            let r = w.join.join().unwrap_or_else(|_| WorkerResult {
                tally: Default::default(),
                samples: Vec::new(),
                new_rows: 0,
                cpu_ns: 0,
                error: Some("a gateway worker panicked".into()),
            });
            w.ack_task.abort();
            res.tally.accepted += r.tally.accepted;
            res.tally.alarms += r.tally.alarms;
            res.tally.reuse_alarms += r.tally.reuse_alarms;
            res.tally.late_alarms += r.tally.late_alarms;
            for (a, b) in res.tally.refused.iter_mut().zip(r.tally.refused) {
                *a += b;
            }
            per_worker.push(r.tally.accepted + r.tally.refused_total());
            res.samples.extend(r.samples);
            res.new_rows += r.new_rows;
            res.cpu_ns += r.cpu_ns;
            if res.error.is_none() {
                res.error = r.error;
            }
        }
        if res.error.is_none() {
            res.error = self.ended.lock().unwrap_or_else(|p| p.into_inner()).take();
        }
        // Every worker has stopped: what they committed since the last write is written now.
        if let Some(Err(e)) = self.keeper.take().map(|k| k.finish()) {
            res.error.get_or_insert(e);
        }
        (res, per_worker)
    }
}

#[allow(clippy::too_many_arguments)]
fn worker_loop(
    mut chk: Checker,
    mut rx: mpsc::Receiver<Incoming<Publish>>,
    acker: mpsc::UnboundedSender<Publish>,
    (processed, live): (Arc<AtomicU64>, Arc<crate::gateway::single::LiveCounts>),
    keeper: Option<Arc<Marker>>,
    failed: Arc<AtomicBool>,
    batch_max: usize,
    max_samples: usize,
) -> WorkerResult {
    let cpu0 = thread_cpu_ns();
    let mut samples = Vec::new();
    let mut new_rows = 0u64;
    let mut error = None;
    let mut batch: Vec<Incoming<Publish>> = Vec::with_capacity(batch_max);
    while next_batch(&mut rx, &mut batch, batch_max) {
        let start = now_ns();
        let frames: Vec<&[u8]> = batch.iter().map(|b| b.frame.as_slice()).collect();
        let out = match chk.process(&frames) {
            Ok(o) => o,
            Err(e) => {
                // Nothing of this batch is acknowledged: the broker will deliver it again. The
                // owner sees `failed` and ends the run with the error.
                error = Some(e);
                failed.store(true, Ordering::Release);
                break;
            }
        };
        // Committed: the marks may cover these rows now (the marker writes every WRITE_EVERY).
        if let Some(k) = &keeper {
            for o in &out {
                if let Checked::Stored(o) = o {
                    k.note(Proto::Sensor, o.device, o.counter);
                }
            }
            if let Some(e) = k.error() {
                error = Some(e);
                failed.store(true, Ordering::Release);
                break;
            }
        }
        let t = now_ns();
        for (inc, o) in batch.iter().zip(&out) {
            if let Checked::Stored(o) = o {
                new_rows += 1;
                if samples.len() < max_samples {
                    // Per batch here: checks of the whole batch, then its one transaction.
                    samples.push(GwSample {
                        device: o.device,
                        counter: o.counter,
                        recv: inc.recv,
                        start,
                        opened: chk.last_opened_ns,
                        committed: t,
                    });
                }
            }
        }
        // Acknowledge after the commit (refused frames too: they must not come back), without
        // waiting: the acker task waits for the client (see `spawn_acker`).
        for inc in batch.drain(..) {
            let _ = acker.send(inc.ack);
        }
        let stored = out.iter().filter(|o| matches!(o, Checked::Stored(_))).count() as u64;
        live.stored.fetch_add(stored, Ordering::Release);
        live.refused.fetch_add(out.len() as u64 - stored, Ordering::Release);
        processed.fetch_add(out.len() as u64, Ordering::Release);
    }
    WorkerResult { tally: chk.gateway.tally.clone(), samples, new_rows, cpu_ns: thread_cpu_ns() - cpu0, error }
}
