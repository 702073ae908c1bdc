//! MQTT clients: topics, client options, connection readiness, publishers and the PUBACK task.
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rumqttc::{AsyncClient, Event, MqttOptions, Packet};
use tokio::sync::mpsc;

use crate::transport::broker::BrokerAddr;

/// MQTT topic of a device's frames.
pub fn topic(session: &str, device: u32) -> String {
    format!("lwcbench/link/{session}/{device}")
}

/// Only what a PUBACK is made from (packet id and QoS): an acknowledgement waiting for its turn
/// does not keep the frame's payload and topic alive.
pub(crate) fn ack_of(p: &rumqttc::Publish) -> rumqttc::Publish {
    let mut a = rumqttc::Publish::new("", p.qos, Vec::new());
    a.pkid = p.pkid;
    a
}

/// Largest MQTT packet the protocol can carry (remaining length 268,435,455 B + fixed header).
/// The gateway's clients accept anything a broker can deliver: a client limit below the
/// broker's made the client drop the connection on an oversized message, which the broker then
/// sent again on every reconnect, for ever. What exceeds [`crate::wire::frame::MAX_FRAME`] is refused
/// as `malformed` and acknowledged instead (see [`received_frame`]).
pub const MQTT_MAX_PACKET: usize = 268_435_455 + 5;

pub(crate) fn mqtt_options(id: &str, b: &BrokerAddr) -> MqttOptions {
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

/// The task that hands committed frames' PUBACKs to the MQTT client, in commit order. The
/// gateway thread sends to it without ever waiting; the task waits for room in the client's
/// request channel. The gateway thread must not wait for that room itself: the event loop waits
/// for room in the gateway's channel, so each would wait for the other for ever.
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

/// An MQTT publisher connection with its event loop running; counts PUBACKs so a device can
/// wait until the broker holds everything it sent.
pub struct MqttConn {
    /// The client.
    pub client: AsyncClient,
    /// PUBACKs received.
    pub acked: Arc<AtomicU64>,
    /// The event loop's task.
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
