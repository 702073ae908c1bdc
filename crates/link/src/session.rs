//! The running path: device fleet → transport (MQTT QoS 1 or UDP) → gateway → store, with a
//! timestamp at every hop so end-to-end latency splits into seal / transport / open / store.
use std::net::{SocketAddr, UdpSocket};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use rumqttc::{AsyncClient, Event, MqttOptions, Packet, QoS};
use tokio::sync::mpsc;

use crate::device::counter::{CounterStore, DeviceCounter};
use crate::gateway::checks::{Gateway, Opened, Refusal, Tally};
use crate::store::{Row, Store};
use crate::transport::broker::BrokerAddr;
use crate::wire::keys::MasterKey;
use crate::wire::suite::{Keyed, Suite};

static EPOCH: OnceLock<Instant> = OnceLock::new();

/// Nanoseconds on one monotonic clock shared by devices and gateway of this process.
pub fn now_ns() -> u64 {
    EPOCH.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

/// Receives every frame before it is sent (the kill test's capture).
pub type Capture = Box<dyn FnMut(&[u8]) -> Result<(), String> + Send>;

/// How frames travel.
#[derive(Clone, Debug)]
pub enum Transport {
    Mqtt(BrokerAddr),
    /// Plain UDP datagrams to the gateway on loopback: no retransmission, loss is counted.
    Udp,
}

impl Transport {
    pub fn describe(&self) -> String {
        match self {
            Transport::Mqtt(b) => format!("MQTT 3.1.1 QoS 1, persistent sessions, {}", b.describe()),
            Transport::Udp => "UDP datagrams on loopback (no retransmission)".into(),
        }
    }
}

/// MQTT topic of a device's frames.
pub fn topic(session: &str, device: u32) -> String {
    format!("lwcbench/link/{session}/{device}")
}

/// One message as the device saw it.
#[derive(Clone, Copy, Debug)]
pub struct DevSample {
    pub device: u32,
    pub counter: u64,
    /// Dataset row the reading came from.
    pub row: u32,
    pub seal_start: u64,
    pub sent: u64,
    pub wire: u32,
    pub plain: u32,
}

/// One frame as the gateway saw it.
#[derive(Clone, Copy, Debug)]
pub struct GwSample {
    pub device: u32,
    pub counter: u64,
    /// Transport handed it over (MQTT event loop / UDP socket).
    pub recv: u64,
    /// Gateway began checking it.
    pub start: u64,
    /// Opened and window moved.
    pub opened: u64,
    /// Its batch committed.
    pub committed: u64,
}

struct Incoming {
    frame: Vec<u8>,
    recv: u64,
    /// What the PUBACK needs (packet id, QoS), without the payload.
    ack: Option<rumqttc::Publish>,
}

/// Frames the gateway thread may hold unchecked, and PUBACKs the MQTT client may hold unsent.
pub const QUEUE: usize = 16 * 1024;

/// Only what a PUBACK is made from (packet id and QoS): an acknowledgement waiting for its turn
/// does not keep the frame's payload and topic alive.
fn ack_of(p: &rumqttc::Publish) -> rumqttc::Publish {
    let mut a = rumqttc::Publish::new("", p.qos, Vec::new());
    a.pkid = p.pkid;
    a
}

/// What the gateway thread hands back.
pub struct GwResult {
    pub tally: Tally,
    pub samples: Vec<GwSample>,
    pub new_rows: u64,
    pub duplicates: u64,
    pub cpu_ns: u64,
    pub store: Box<dyn Store>,
    pub error: Option<String>,
}

fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes one timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// CPU time of the whole process (all threads: devices, broker, gateway) so far.
pub fn process_cpu_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: as above.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Gateway settings.
pub struct GatewaySpec {
    pub suite: Suite,
    pub unauthenticated: bool,
    pub devices: Vec<u32>,
    pub window: u64,
    pub store: Box<dyn Store>,
    pub session: String,
    pub transport: Transport,
    pub batch: usize,
    pub max_samples: usize,
}

/// Counts a running gateway publishes while it runs (for a process that may be killed before
/// it can report its final tally).
#[derive(Default)]
pub struct LiveCounts {
    pub stored: AtomicU64,
    pub duplicates: AtomicU64,
    pub refused: AtomicU64,
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
    pub udp_addr: Option<SocketAddr>,
    mqtt: Option<AsyncClient>,
}

/// Largest MQTT packet the protocol can carry (remaining length 268,435,455 B + fixed header).
/// The gateway's clients accept anything a broker can deliver: a client limit below the
/// broker's made the client drop the connection on an oversized message, which the broker then
/// sent again on every reconnect, for ever. What exceeds [`crate::wire::frame::MAX_FRAME`] is refused
/// as `malformed` and acknowledged instead (see [`received_frame`]).
pub const MQTT_MAX_PACKET: usize = 268_435_455 + 5;

fn mqtt_options(id: &str, b: &BrokerAddr) -> MqttOptions {
    let mut o = MqttOptions::new(id, b.host.clone(), b.port);
    o.set_keep_alive(Duration::from_secs(30));
    o.set_clean_session(false);
    o.set_max_packet_size(MQTT_MAX_PACKET, crate::wire::frame::MAX_FRAME + 1024);
    o.set_inflight(1000);
    o
}

/// The frame the gateway checks for a received MQTT payload. A payload above
/// [`crate::wire::frame::MAX_FRAME`] is not copied: an empty frame stands for it, which the gateway
/// refuses as `malformed` (shorter than a header), so it is counted and acknowledged like any
/// refused frame and the queue never holds more than `MAX_FRAME` bytes per message.
pub fn received_frame(payload: &[u8]) -> Vec<u8> {
    if payload.len() > crate::wire::frame::MAX_FRAME {
        Vec::new()
    } else {
        payload.to_vec()
    }
}

/// What a gateway's MQTT event loop reports while it starts.
pub(crate) enum Ready {
    /// CONNACK: the broker answered (a persistent session's backlog may follow).
    Connected,
    /// SUBACK: the subscription is in place.
    Subscribed,
    Failed(String),
}

/// Wait until the event loop behind `ready` reports the subscription in place. The broker must
/// answer (CONNACK) within [`CONNECT_TIMEOUT`]; after that, the SUBACK may wait behind a
/// persistent session's backlog, which the running gateway thread works through, so the wait
/// goes on as long as `processed` moves and fails after [`CONNECT_TIMEOUT`] without progress.
/// `failed`: the gateway thread has stopped on an error (returned as `Err(None)`).
pub(crate) fn wait_ready(
    ready: &std::sync::mpsc::Receiver<Ready>,
    processed: &AtomicU64,
    failed: &AtomicBool,
    no_answer: &str,
) -> Result<(), Option<String>> {
    let t0 = Instant::now();
    let mut connected = false;
    let mut last = (processed.load(Ordering::Acquire), Instant::now());
    loop {
        match ready.recv_timeout(Duration::from_millis(50)) {
            Ok(Ready::Subscribed) => return Ok(()),
            Ok(Ready::Failed(e)) => return Err(Some(e)),
            Ok(Ready::Connected) => {
                connected = true;
                last.1 = Instant::now();
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                return Err(if failed.load(Ordering::Acquire) { None } else { Some(no_answer.to_string()) })
            }
        }
        if failed.load(Ordering::Acquire) {
            return Err(None);
        }
        let p = processed.load(Ordering::Acquire);
        if p != last.0 {
            last = (p, Instant::now());
        }
        let waited = if connected { last.1.elapsed() } else { t0.elapsed() };
        if waited >= CONNECT_TIMEOUT {
            return Err(Some(no_answer.to_string()));
        }
    }
}

/// Connect-time limit for the first CONNACK/SUBACK.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// How long a client keeps retrying its first connection before `--broker: cannot reach`: a
/// broker that is still starting (or, under heavy load, the embedded one dropping a first
/// connection) is not an unreachable broker. Well inside [`CONNECT_TIMEOUT`].
pub(crate) const FIRST_CONNECT_RETRY: Duration = Duration::from_secs(2);

/// Still inside [`FIRST_CONNECT_RETRY`] of a client's start at `t0`?
pub(crate) fn still_connecting(t0: std::time::Instant) -> bool {
    t0.elapsed() < FIRST_CONNECT_RETRY
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
        let gw = Gateway::new(&spec.suite, master, spec.devices.iter().copied(), spec.window, spec.unauthenticated)?;
        let (tx, rx) = mpsc::channel::<Incoming>(queue.max(1));
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
                let (client, mut ev) = AsyncClient::new(o, queue.max(1));
                let (ready_tx, ready_rx) = std::sync::mpsc::channel::<Ready>();
                let filter = format!("lwcbench/link/{}/+", spec.session);
                let sub_client = client.clone();
                let broker = b.describe();
                let t0 = std::time::Instant::now();
                let task = rt.spawn(async move {
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
                                // Waits only for the gateway thread, which runs from before
                                // the CONNACK: a persistent session's backlog, sent before the
                                // SUBACK, is worked through, not waited on.
                                let inc = Incoming {
                                    frame: received_frame(&p.payload),
                                    recv: now_ns(),
                                    ack: Some(ack_of(&p)),
                                };
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
                });
                starting = Some((ready_rx, format!("--broker: no answer from {} within 5 s", b.describe())));
                h.recv_task = Some(task);
                h.mqtt = Some(client);
            }
            Transport::Udp => {
                let sock = UdpSocket::bind("127.0.0.1:0").map_err(|e| format!("udp: cannot bind: {e}"))?;
                set_rcvbuf(&sock, 8 << 20);
                sock.set_read_timeout(Some(Duration::from_millis(50))).map_err(|e| e.to_string())?;
                h.udp_addr = Some(sock.local_addr().map_err(|e| e.to_string())?);
                let stop2 = stop.clone();
                h.udp_thread = Some(
                    std::thread::Builder::new()
                        .name("link-udp-rx".into())
                        .spawn(move || {
                            let mut buf = vec![0u8; 65536];
                            while !stop2.load(Ordering::Relaxed) {
                                if let Ok((n, _)) = sock.recv_from(&mut buf) {
                                    let inc = Incoming { frame: buf[..n].to_vec(), recv: now_ns(), ack: None };
                                    if tx.blocking_send(inc).is_err() {
                                        return;
                                    }
                                }
                            }
                        })
                        .map_err(|e| e.to_string())?,
                );
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
                .spawn(move || gateway_loop(gw, store, rx, acker, processed, live, failed2, batch, max_samples))
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

/// The task that hands committed frames' PUBACKs to the MQTT client, in commit order. The
/// gateway thread sends to it without ever waiting; the task waits for room in the client's
/// request channel. (The gateway thread used to wait for that room itself: with the event loop
/// waiting for room in the gateway's channel, each waited for the other for ever — issue 19.)
/// `ack` hands one PUBACK to the client and says whether the client is still there (MQTT 3.1.1
/// here, MQTT v5 for the workers).
pub(crate) fn spawn_acker<P, F, Fut>(
    rt: &tokio::runtime::Handle,
    ack: F,
) -> (mpsc::UnboundedSender<P>, tokio::task::JoinHandle<()>)
where
    P: Send + 'static,
    F: Fn(P) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = bool> + Send,
{
    let (tx, mut rx) = mpsc::unbounded_channel::<P>();
    let task = rt.spawn(async move {
        while let Some(p) = rx.recv().await {
            if !ack(p).await {
                // The event loop is gone (the gateway stops): unacknowledged frames come back.
                return;
            }
        }
    });
    (tx, task)
}

fn set_rcvbuf(sock: &UdpSocket, bytes: i32) {
    use std::os::fd::AsRawFd;
    // SAFETY: setsockopt on our own socket with a pointer to a live i32. Failure only means a
    // smaller buffer (more loss under overload, counted).
    unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVBUF,
            &bytes as *const i32 as *const libc::c_void,
            std::mem::size_of::<i32>() as libc::socklen_t,
        );
    }
}

/// Wait for the next frame, then take what else is already queued, up to `max` in all, into
/// the (empty) `batch`; false once the channel is closed and drained.
pub(crate) fn next_batch<T>(rx: &mut mpsc::Receiver<T>, batch: &mut Vec<T>, max: usize) -> bool {
    let Some(first) = rx.blocking_recv() else { return false };
    batch.push(first);
    while batch.len() < max {
        match rx.try_recv() {
            Ok(x) => batch.push(x),
            Err(_) => break,
        }
    }
    true
}

#[allow(clippy::too_many_arguments)]
fn gateway_loop(
    mut gw: Gateway,
    mut store: Box<dyn Store>,
    mut rx: mpsc::Receiver<Incoming>,
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
    let mut batch: Vec<Incoming> = Vec::with_capacity(batch_max);
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

/// How a device hands a frame to the transport.
#[derive(Clone)]
pub enum Publisher {
    Mqtt { client: AsyncClient, session: String },
    Udp { sock: Arc<tokio::net::UdpSocket>, to: SocketAddr },
}

impl Publisher {
    pub async fn send(&self, device: u32, frame: Vec<u8>) -> Result<(), String> {
        match self {
            Publisher::Mqtt { client, session } => client
                .publish(topic(session, device), QoS::AtLeastOnce, false, frame)
                .await
                .map_err(|e| format!("mqtt publish: {e}")),
            Publisher::Udp { sock, to } => {
                // A full socket buffer is loss on this transport, not an error.
                let _ = sock.send_to(&frame, to).await;
                Ok(())
            }
        }
    }
}

/// An MQTT publisher connection with its event loop running; counts PUBACKs so a device can
/// wait until the broker holds everything it sent.
pub struct MqttConn {
    pub client: AsyncClient,
    pub acked: Arc<AtomicU64>,
    pub task: tokio::task::JoinHandle<()>,
}

/// Connect a publisher (persistent session) and wait for its CONNACK.
pub async fn mqtt_connect(id: &str, b: &BrokerAddr) -> Result<MqttConn, String> {
    let (client, mut ev) = AsyncClient::new(mqtt_options(id, b), 4096);
    let acked = Arc::new(AtomicU64::new(0));
    let a2 = acked.clone();
    let (ready_tx, ready_rx) = tokio::sync::oneshot::channel::<Result<(), String>>();
    let broker = b.describe();
    let t0 = std::time::Instant::now();
    let task = tokio::spawn(async move {
        let mut ready = Some(ready_tx);
        loop {
            match ev.poll().await {
                Ok(Event::Incoming(Packet::ConnAck(_))) => {
                    if let Some(r) = ready.take() {
                        let _ = r.send(Ok(()));
                    }
                }
                Ok(Event::Incoming(Packet::PubAck(_))) => {
                    a2.fetch_add(1, Ordering::Release);
                }
                Ok(_) => {}
                Err(e) => {
                    if let Some(r) = ready.take() {
                        if still_connecting(t0) {
                            ready = Some(r); // a first refusal may be the broker still starting
                        } else {
                            let _ = r.send(Err(format!("--broker: cannot reach {broker}: {e}")));
                            return;
                        }
                    }
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        }
    });
    match tokio::time::timeout(CONNECT_TIMEOUT, ready_rx).await {
        Ok(Ok(Ok(()))) => Ok(MqttConn { client, acked, task }),
        Ok(Ok(Err(e))) => Err(e),
        _ => {
            task.abort();
            Err(format!("--broker: no answer from {} within 5 s", b.describe()))
        }
    }
}

/// What one simulated device does.
pub struct DeviceSpec {
    pub device: u32,
    pub messages: u64,
    /// None: as fast as possible.
    pub interval: Option<Duration>,
    /// Delay before the first reading (spreads devices over the interval).
    pub offset: Duration,
    /// Row of the dataset the first reading takes.
    pub first_row: usize,
}

/// Run one device: take a counter, seal the next reading, hand it to the transport.
/// `capture` (if any) receives every frame before it is sent.
pub async fn device_task(
    spec: DeviceSpec,
    mut keyed: Keyed,
    mut counter: DeviceCounter,
    readings: Arc<Vec<Vec<u8>>>,
    publisher: Publisher,
    mut capture: Option<Capture>,
) -> Result<Vec<DevSample>, String> {
    let mut out = Vec::with_capacity(spec.messages.min(1 << 20) as usize);
    if !spec.offset.is_zero() {
        tokio::time::sleep(spec.offset).await;
    }
    let mut tick = spec.interval.map(|i| {
        let mut t = tokio::time::interval(i);
        t.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        t
    });
    for i in 0..spec.messages {
        match tick.as_mut() {
            Some(t) => {
                t.tick().await;
            }
            None if i % 64 == 63 => tokio::task::yield_now().await,
            None => {}
        }
        let row = (spec.first_row + i as usize) % readings.len();
        let reading = &readings[row];
        let seal_start = now_ns();
        let c = counter.take()?;
        let mut frame = Vec::with_capacity(reading.len() + 48);
        keyed.seal(spec.device, c, reading, &mut frame)?;
        let sent = now_ns();
        if let Some(cap) = capture.as_mut() {
            cap(&frame)?;
        }
        let wire = frame.len() as u32;
        publisher.send(spec.device, frame).await?;
        if out.len() < (1 << 22) {
            out.push(DevSample {
                device: spec.device,
                counter: c,
                row: row as u32,
                seal_start,
                sent,
                wire,
                plain: reading.len() as u32,
            });
        }
    }
    Ok(out)
}

/// Start every device of `cfg` as a task on `rt` (device i publishes on `publishers[i mod n]`)
/// and wait for all of them: the samples they sent, and the first device error (the others'
/// samples are kept). Shared by the plain session and the network-conditions session.
pub fn run_fleet(
    rt: &tokio::runtime::Handle,
    cfg: &LinkConfig,
    ids: &[u32],
    blocks: Vec<std::ops::Range<u64>>,
    master: &MasterKey,
    counters: &CounterStore,
    publishers: &[Publisher],
) -> Result<(Vec<DevSample>, Option<String>), String> {
    let mut tasks = Vec::new();
    for (i, (&d, block)) in ids.iter().zip(blocks).enumerate() {
        let key = master.device_key(cfg.suite.id, d, cfg.suite.key_len());
        let keyed = Keyed::new(&cfg.suite, &key, cfg.unauthenticated)?;
        let counter = DeviceCounter::with_block(counters, d, block);
        let offset = cfg.interval.map(|iv| iv.mul_f64(i as f64 / cfg.devices as f64)).unwrap_or_default();
        let spec = DeviceSpec { device: d, messages: cfg.messages, interval: cfg.interval, offset, first_row: i * 7 };
        tasks.push(rt.spawn(device_task(
            spec,
            keyed,
            counter,
            cfg.readings.clone(),
            publishers[i % publishers.len()].clone(),
            None,
        )));
    }
    let mut dev = Vec::new();
    let mut first_err = None;
    for t in tasks {
        match rt.block_on(t) {
            Ok(Ok(s)) => dev.extend(s),
            Ok(Err(e)) => {
                first_err.get_or_insert(e);
            }
            Err(e) => {
                first_err.get_or_insert(format!("device task failed: {e}"));
            }
        }
    }
    Ok((dev, first_err))
}

/// (matched, mismatched): this run's rows of the store (`rows`: the store gives only the rows
/// tagged with this run) compared bit for bit with what the devices sent. A row no device of
/// this run sent is mismatched.
pub fn check_store(rows: &[Row], dev: &[DevSample], readings: &[Vec<u8>]) -> (u64, u64) {
    let mut expected = std::collections::HashMap::with_capacity(dev.len());
    for s in dev {
        expected.insert((s.device, s.counter), s.row);
    }
    let (mut matched, mut mismatched) = (0u64, 0u64);
    for r in rows {
        match expected.get(&(r.device, r.counter)) {
            Some(&row) if readings[row as usize] == r.payload => matched += 1,
            _ => mismatched += 1,
        }
    }
    (matched, mismatched)
}

/// The readings of a dataset as the payloads devices send: one row of every channel, float32
/// big-endian (the engine's default encoding).
pub fn dataset_readings(ds: &lwcbench_engine::dataset::Dataset) -> Arc<Vec<Vec<u8>>> {
    Arc::new(ds.rows.iter().map(|r| r.iter().flat_map(|v| (*v as f32).to_be_bytes()).collect()).collect())
}

/// One whole link session.
pub struct LinkConfig {
    pub suite: Suite,
    pub unauthenticated: bool,
    pub devices: u32,
    pub messages: u64,
    pub interval: Option<Duration>,
    pub transport: Transport,
    pub store: String,
    pub window: u64,
    pub counter_block: u64,
    pub key_file: PathBuf,
    pub counter_file: PathBuf,
    pub connections: usize,
    pub drain_timeout: Duration,
    pub readings: Arc<Vec<Vec<u8>>>,
    pub batch: usize,
    pub session: String,
}

impl LinkConfig {
    /// The limits every session checks before it starts anything.
    pub fn check(&self) -> Result<(), String> {
        crate::input::check_session(&self.session)?;
        if self.devices == 0 || self.devices > 100_000 {
            return Err(format!("--devices: {} is not in 1..=100000", self.devices));
        }
        if self.messages == 0 {
            return Err("--messages: at least one message per device".into());
        }
        if self.readings.is_empty() {
            return Err("dataset has no readings".into());
        }
        // A frame above the gateway's limit would be refused unread (or never delivered by the
        // broker): say so before anything is sent.
        let longest = self.readings.iter().map(Vec::len).max().unwrap_or(0);
        let frame = longest + self.suite.overhead(self.unauthenticated);
        if frame > crate::wire::frame::MAX_FRAME {
            return Err(format!(
                "--dataset: a reading of {longest} bytes makes a {frame}-byte frame, above the {} KiB frame limit \
                 (fewer channels per row)",
                crate::wire::frame::MAX_FRAME / 1024
            ));
        }
        crate::gateway::replay::check_window_memory(self.devices as u64, self.window, 1)
    }
}

/// The measured outcome of a session.
pub struct Outcome {
    pub sent: u64,
    pub new_rows: u64,
    pub duplicates: u64,
    pub tally: Tally,
    pub dev: Vec<DevSample>,
    pub gw: Vec<GwSample>,
    /// First seal → last commit.
    pub elapsed_ns: u64,
    pub gateway_cpu_ns: u64,
    pub process_cpu_ns: u64,
    pub store_desc: String,
    pub transport_desc: String,
    /// Stored rows whose payload differs from what the device sent, or that no device sent.
    pub mismatched: u64,
    /// Sent but not stored.
    pub missing: u64,
    pub counter_writes: u64,
    /// Frames each gateway worker checked (`--workers`; one entry for the single gateway).
    pub per_worker: Vec<u64>,
}

/// A random session id (topic namespace and client ids).
pub fn new_session() -> String {
    let mut b = [0u8; 6];
    rand::fill(&mut b);
    hex::encode(b)
}

pub fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("link-rt")
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))
}

/// Run devices → transport → gateway → store once and measure it.
pub fn run(cfg: &LinkConfig) -> Result<Outcome, String> {
    run_workers(cfg, 1)
}

/// [`run`] with `workers` gateway workers: 1 is the single gateway; more start a
/// [`crate::gateway::workers::WorkerPool`] on an MQTT v5 shared subscription, replay state in the store.
pub fn run_workers(cfg: &LinkConfig, workers: usize) -> Result<Outcome, String> {
    cfg.check()?;
    crate::gateway::replay::check_window_memory(cfg.devices as u64, cfg.window, workers as u64)?;
    let (master, counters) = crate::device::counter::open_session(&cfg.key_file, &cfg.counter_file, cfg.counter_block)?;
    let store = crate::store::open(&cfg.store, &cfg.session)?;
    let store_desc = store.describe();
    let ids: Vec<u32> = (0..cfg.devices).collect();
    let blocks = counters.reserve_all(&ids)?;
    let rt = runtime()?;
    let handle = rt.handle().clone();
    let spec = GatewaySpec {
        suite: cfg.suite.clone(),
        unauthenticated: cfg.unauthenticated,
        devices: ids.clone(),
        window: cfg.window,
        store,
        session: cfg.session.clone(),
        transport: cfg.transport.clone(),
        batch: cfg.batch,
        max_samples: 4 << 20,
    };
    let gw = if workers > 1 {
        Gw::Pool(crate::gateway::workers::WorkerPool::start(spec, &cfg.store, workers, &master, &handle)?)
    } else {
        Gw::One(GatewayHandle::start(spec, &master, &handle)?)
    };
    let ncon = cfg.connections.clamp(1, cfg.devices as usize);
    let (publishers, conns) = rt.block_on(async {
        let mut pubs = Vec::new();
        let mut conns = Vec::new();
        for k in 0..ncon {
            match &cfg.transport {
                Transport::Mqtt(b) => {
                    let c = mqtt_connect(&format!("lwcbench-dev-{}-{k}", cfg.session), b).await?;
                    pubs.push(Publisher::Mqtt { client: c.client.clone(), session: cfg.session.clone() });
                    conns.push(c);
                }
                Transport::Udp => {
                    let s = tokio::net::UdpSocket::bind("127.0.0.1:0").await.map_err(|e| format!("udp: {e}"))?;
                    pubs.push(Publisher::Udp { sock: Arc::new(s), to: gw.udp_addr().expect("udp gateway") });
                }
            }
        }
        Ok::<_, String>((pubs, conns))
    })?;
    let cpu0 = process_cpu_ns();
    let t0 = now_ns();
    let (dev, first_err) = run_fleet(&handle, cfg, &ids, blocks, &master, &counters, &publishers)?;
    let sent = dev.len() as u64;
    // Drain: wait until the gateway has checked every frame sent (MQTT delivers them all), or
    // for UDP until nothing has arrived for a while (the rest is lost).
    let deadline = Instant::now() + cfg.drain_timeout;
    let mut last = (gw.processed(), Instant::now());
    while gw.processed() < sent && Instant::now() < deadline && !gw.failed() {
        std::thread::sleep(Duration::from_millis(2));
        let p = gw.processed();
        if p != last.0 {
            last = (p, Instant::now());
        } else if matches!(cfg.transport, Transport::Udp) && last.1.elapsed() > Duration::from_millis(500) {
            break;
        }
    }
    // MQTT QoS 1 loses nothing: frames the gateway has not checked by now are held up, not lost,
    // and a run that reported them as `missing` and exited 0 hid a stall (issue 19).
    let stalled = match cfg.transport {
        _ if gw.failed() => None, // the gateway's own error is reported below
        Transport::Mqtt(_) => undrained(sent, gw.processed(), last.1.elapsed(), cfg.drain_timeout),
        Transport::Udp => None,
    };
    let (mut res, per_worker) = gw.stop(&handle);
    let process_cpu_ns = process_cpu_ns() - cpu0;
    for c in conns {
        let _ = rt.block_on(async { tokio::time::timeout(Duration::from_secs(1), c.client.disconnect()).await });
        c.task.abort();
    }
    rt.shutdown_timeout(Duration::from_secs(1));
    if let Some(e) = first_err.or(res.error.take()).or(stalled) {
        return Err(e);
    }
    let t_end = res.samples.iter().map(|s| s.committed).max().unwrap_or(t0);
    // Verify the store bit for bit against what the devices sent.
    let (matched, mismatched) = check_store(&res.store.all()?, &dev, &cfg.readings);
    // MQTT QoS 1 delivered every frame (the drain above): a reading sent and not stored as this
    // run's is lost, and the run fails rather than report it as a number.
    if matches!(cfg.transport, Transport::Mqtt(_)) && (matched < sent || mismatched > 0) {
        return Err(format!(
            "store {store_desc}: {} of {sent} readings sent are not stored as this run's and {mismatched} stored \
             rows differ from what was sent ({} duplicates ignored)",
            sent - matched.min(sent),
            res.duplicates
        ));
    }
    Ok(Outcome {
        sent,
        new_rows: res.new_rows,
        duplicates: res.duplicates,
        tally: res.tally,
        dev,
        gw: res.samples,
        elapsed_ns: t_end.saturating_sub(t0),
        gateway_cpu_ns: res.cpu_ns,
        process_cpu_ns,
        store_desc: match workers {
            1 => store_desc,
            _ => format!("{store_desc}; replay state shared in the store (per-device top + unique key)"),
        },
        transport_desc: match workers {
            1 => cfg.transport.describe(),
            k => format!("{}; {k} gateway workers on MQTT v5 shared subscription", cfg.transport.describe()),
        },
        mismatched,
        missing: sent - matched.min(sent),
        counter_writes: counters.writes(),
        per_worker,
    })
}

/// The error of an MQTT run whose gateway had checked only `checked` of the `sent` frames when the
/// drain timeout ended, the last of them `idle` ago; None when it checked them all.
pub fn undrained(sent: u64, checked: u64, idle: Duration, timeout: Duration) -> Option<String> {
    if checked >= sent {
        return None;
    }
    let rest = sent - checked;
    Some(if idle >= Duration::from_secs(1) {
        format!(
            "gateway stalled: it checked {checked} of {sent} readings and none in the last {:.1} s of the {:.1} s drain \
             timeout; {rest} not delivered (MQTT QoS 1: the broker still holds them)",
            idle.as_secs_f64(),
            timeout.as_secs_f64()
        )
    } else {
        format!(
            "drain timeout: the gateway checked {checked} of {sent} readings within {:.1} s after the devices finished \
             and was still receiving; {rest} not delivered (raise --drain-timeout)",
            timeout.as_secs_f64()
        )
    })
}

/// The single gateway or a pool of workers, as `run_workers` drives them.
enum Gw {
    One(GatewayHandle),
    Pool(crate::gateway::workers::WorkerPool),
}

impl Gw {
    fn processed(&self) -> u64 {
        match self {
            Gw::One(g) => g.processed(),
            Gw::Pool(p) => p.processed(),
        }
    }
    fn failed(&self) -> bool {
        match self {
            Gw::One(g) => g.failed(),
            Gw::Pool(p) => p.failed(),
        }
    }
    fn udp_addr(&self) -> Option<SocketAddr> {
        match self {
            Gw::One(g) => g.udp_addr,
            Gw::Pool(_) => None,
        }
    }
    fn stop(self, rt: &tokio::runtime::Handle) -> (GwResult, Vec<u64>) {
        match self {
            Gw::One(g) => {
                let n = g.processed();
                (g.stop(rt), vec![n])
            }
            Gw::Pool(p) => p.stop(rt),
        }
    }
}

/// One device as its own process (`lwcbench link device`): its own counter state file, its own
/// MQTT session; returns after the broker acknowledged every reading (QoS 1).
pub struct DeviceProcess {
    pub suite: Suite,
    pub device: u32,
    pub session: String,
    pub broker: BrokerAddr,
    pub master: MasterKey,
    pub counters: CounterStore,
    pub messages: u64,
    pub interval: Option<Duration>,
    pub capture: Option<Capture>,
}

impl DeviceProcess {
    pub fn run(self) -> Result<u64, String> {
        let key = self.master.device_key(self.suite.id, self.device, self.suite.key_len());
        let keyed = Keyed::new(&self.suite, &key, false)?;
        let readings = dataset_readings(&lwcbench_engine::dataset::Dataset::builtin());
        let rt = runtime()?;
        let (device, session, messages, interval) = (self.device, self.session.clone(), self.messages, self.interval);
        let (broker, counters, capture) = (self.broker.clone(), self.counters.clone(), self.capture);
        let r = rt.block_on(async move {
            let conn = mqtt_connect(&format!("lwcbench-dev-{session}-{device}"), &broker).await?;
            let counter = DeviceCounter::new(&counters, device)?;
            let spec = DeviceSpec { device, messages, interval, offset: Duration::ZERO, first_row: 0 };
            let publisher = Publisher::Mqtt { client: conn.client.clone(), session: session.clone() };
            let samples = device_task(spec, keyed, counter, readings, publisher, capture).await?;
            let n = samples.len() as u64;
            let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
            while conn.acked.load(Ordering::Acquire) < n {
                if tokio::time::Instant::now() > deadline {
                    return Err(format!(
                        "broker acknowledged only {} of {n} readings within 30 s",
                        conn.acked.load(Ordering::Acquire)
                    ));
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            let _ = conn.client.disconnect().await;
            Ok::<u64, String>(n)
        });
        rt.shutdown_timeout(Duration::from_secs(1));
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn undrained_names_a_stall_and_a_slow_drain() {
        let t = Duration::from_secs(20);
        assert_eq!(undrained(64_000, 64_000, Duration::ZERO, t), None);
        assert_eq!(undrained(64_000, 64_010, Duration::from_secs(20), t), None);
        // Idle for 18 s of 20: stopped receiving. 64,000 − 35,000 = 29,000 held up.
        assert_eq!(
            undrained(64_000, 35_000, Duration::from_secs(18), t).unwrap(),
            "gateway stalled: it checked 35000 of 64000 readings and none in the last 18.0 s of the 20.0 s drain \
             timeout; 29000 not delivered (MQTT QoS 1: the broker still holds them)"
        );
        // Last frame 10 ms before the deadline: slow, not stopped.
        assert_eq!(
            undrained(64_000, 63_999, Duration::from_millis(10), t).unwrap(),
            "drain timeout: the gateway checked 63999 of 64000 readings within 20.0 s after the devices finished \
             and was still receiving; 1 not delivered (raise --drain-timeout)"
        );
    }
}
