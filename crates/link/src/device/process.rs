//! One device as its own process (`lwcbench link device`): its own counter state file, its own
//! MQTT session, optionally a capture file, and one of two deliveries. Durable delivery appends
//! every frame to the capture file before it is first published, publishes one at a time until
//! the broker acknowledges it, and re-publishes after restarts and reconnects, so that every
//! captured reading can be stored exactly once across kills (docs/link.md "Faults").
use crate::wire::frame::Proto;
use std::collections::VecDeque;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rumqttc::{AsyncClient, Event, MqttOptions, Packet, QoS};
use serde::Serialize;

use crate::device::capture::{open_capture, read_capture};
use crate::device::counter::{CounterStore, DeviceCounter};
use crate::device::fleet::{dataset_readings, device_task, Capture, DeviceSpec};
use crate::gateway::process::{install_stop_signals, stop_requested};
use crate::transport::broker::BrokerAddr;
use crate::transport::mqtt::{mqtt_connect, topic};
use crate::transport::{runtime, Publisher};
use crate::wire::keys::LinkKey;
use crate::wire::suite::{Keyed, Suite};

/// Captured frames re-published when a device process starts.
pub const RESEND_ON_START: usize = 64;
/// Frames younger than this are re-published after every reconnect (the default of
/// `--resend-window`).
pub const RING: Duration = Duration::from_secs(3);
/// Re-publish the frame in hand if no PUBACK came within this time.
pub const ACK_TIMEOUT: Duration = Duration::from_secs(2);

/// How a device process hands its frames to the broker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Delivery {
    /// Back to back at QoS 1; the process returns once the broker acknowledged every frame.
    Pipelined,
    /// One frame in flight, re-published after restarts and reconnects (needs a capture file).
    /// Frames younger than `resend_window` are re-published after a reconnect (zero: none; the
    /// frame in hand is then re-published only after [`ACK_TIMEOUT`]).
    Durable {
        /// How long a published frame stays in the ring for re-publishing.
        resend_window: Duration,
    },
}

/// One device as its own process (`lwcbench link device`, and every device `link chaos` starts).
pub struct DeviceProcess {
    /// The cipher it seals with.
    pub suite: Suite,
    /// Its device id.
    pub device: u32,
    /// The session (its topic).
    pub session: String,
    /// The broker it publishes to.
    pub broker: BrokerAddr,
    /// The device's own key (a master in tests and in-process experiments).
    pub key: LinkKey,
    /// Its counter state.
    pub counters: CounterStore,
    /// Readings to send; 0 = until SIGTERM (durable delivery only).
    pub messages: u64,
    /// Between readings (None: back to back).
    pub interval: Option<Duration>,
    /// Every frame is appended here (hex, one per line) before it is first published.
    pub capture: Option<PathBuf>,
    /// JSON counters rewritten about once a second (durable) or at the end.
    pub stats: Option<PathBuf>,
    /// How frames are published.
    pub delivery: Delivery,
}

/// What a device process did (this process only).
#[derive(Clone, Debug, Default, Serialize)]
pub struct DeviceStats {
    /// The device.
    pub device: u32,
    /// The process id.
    pub pid: u32,
    /// Frames sent (first publishes).
    pub sent: u64,
    /// Captured frames re-published at the start.
    pub resent_on_start: u64,
    /// Frames re-published from the ring after reconnects.
    pub ring_resent: u64,
    /// Frames re-published after [`ACK_TIMEOUT`].
    pub ack_timeouts: u64,
    /// Reconnects to the broker.
    pub reconnects: u64,
}

impl DeviceProcess {
    /// Send the readings as `delivery` says; the stats file is written on the way.
    pub fn run(self) -> Result<DeviceStats, String> {
        self.check()?;
        match (self.delivery, self.capture.clone()) {
            (Delivery::Durable { resend_window }, Some(capture)) => self.run_durable(capture, resend_window),
            _ => self.run_pipelined(),
        }
    }

    /// What is refused before anything is sent.
    fn check(&self) -> Result<(), String> {
        if let (Delivery::Durable { .. }, None) = (self.delivery, &self.capture) {
            return Err("--durable needs --capture: a restart re-sends from the capture".into());
        }
        if self.messages == 0 && self.delivery == Delivery::Pipelined {
            return Err("--messages: 0 (until SIGTERM) needs --durable".into());
        }
        if let Some(c) =
            self.capture.as_ref().filter(|c| !self.counters.existed() && c.metadata().is_ok_and(|m| m.len() > 0))
        {
            // Frames were sent under this key, but their counters' record is gone: starting again
            // at 0 would seal new readings under nonces already used.
            return Err(format!(
                "--counter-state: {} is missing, but --capture {} holds frames this device sent; restarting would \
                 repeat their counters (restore the state file)",
                self.counters.path().display(),
                c.display()
            ));
        }
        Ok(())
    }

    /// Frames back to back; waits until the broker acknowledged every one.
    fn run_pipelined(self) -> Result<DeviceStats, String> {
        let keyed = Keyed::derived(&self.suite, &self.key, Proto::Sensor, self.device, false)?;
        let readings = dataset_readings(&lwcbench_engine::dataset::Dataset::builtin());
        let capture: Option<Capture> = match &self.capture {
            Some(p) => {
                let mut f = open_capture(p)?;
                let shown = p.display().to_string();
                Some(Box::new(move |frame: &[u8]| {
                    let mut line = hex::encode(frame);
                    line.push('\n');
                    f.write_all(line.as_bytes()).map_err(|e| format!("--capture: {shown}: {e}"))
                }))
            }
            None => None,
        };
        let rt = runtime()?;
        let (device, session, messages, interval) = (self.device, self.session.clone(), self.messages, self.interval);
        let (broker, counters) = (self.broker.clone(), self.counters.clone());
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
        let st = DeviceStats { device: self.device, pid: std::process::id(), sent: r?, ..Default::default() };
        write_stats(self.stats.as_deref(), &st);
        Ok(st)
    }

    /// One frame in flight, re-published after restarts and reconnects.
    fn run_durable(self, capture: PathBuf, resend_window: Duration) -> Result<DeviceStats, String> {
        install_stop_signals();
        let mut keyed = Keyed::derived(&self.suite, &self.key, Proto::Sensor, self.device, false)?;
        let readings = dataset_readings(&lwcbench_engine::dataset::Dataset::builtin());
        let earlier = read_capture(&capture)?;
        let tail: Vec<Vec<u8>> = earlier[earlier.len().saturating_sub(RESEND_ON_START)..].to_vec();
        let first_row = earlier.len();
        drop(earlier);
        let shown = capture.display().to_string();
        let mut cap = open_capture(&capture)?;
        let mut counter = DeviceCounter::new(&self.counters, self.device)?;
        let mut st = DeviceStats { device: self.device, pid: std::process::id(), ..Default::default() };
        let rt = runtime()?;
        let r = rt.block_on(async {
            let mut link = DurableLink::connect(&self).await?;
            for f in &tail {
                link.publish(f.clone()).await?;
                st.resent_on_start += 1;
            }
            let mut ring: VecDeque<(Instant, Vec<u8>)> = VecDeque::new();
            let mut tick = self.interval.map(|i| {
                let mut t = tokio::time::interval(i);
                t.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                t
            });
            let mut last_stats = Instant::now();
            let mut i = 0u64;
            while !stop_requested() && (self.messages == 0 || i < self.messages) {
                if let Some(t) = tick.as_mut() {
                    t.tick().await;
                }
                let reading = &readings[(first_row + i as usize) % readings.len()];
                let c = counter.take()?;
                let mut frame = Vec::with_capacity(reading.len() + 48);
                keyed.seal(self.device, c, reading, &mut frame)?;
                let mut line = hex::encode(&frame);
                line.push('\n');
                // From here on the reading counts as sent.
                cap.write_all(line.as_bytes()).map_err(|e| format!("--capture: {shown}: {e}"))?;
                let now = Instant::now();
                while ring.front().is_some_and(|(t, _)| now.duration_since(*t) > resend_window) || ring.len() > 65_536 {
                    ring.pop_front();
                }
                if !resend_window.is_zero() {
                    ring.push_back((now, frame.clone()));
                }
                link.send(frame, &ring, &mut st).await?;
                i += 1;
                if last_stats.elapsed() > Duration::from_secs(1) {
                    last_stats = Instant::now();
                    write_stats(self.stats.as_deref(), &st);
                }
            }
            link.close().await;
            Ok::<(), String>(())
        });
        rt.shutdown_timeout(Duration::from_secs(1));
        write_stats(self.stats.as_deref(), &st);
        r.map(|()| st)
    }
}

/// A durable device's MQTT connection: a persistent session, its event loop on a task of its
/// own counting CONNACKs (each reconnect) and PUBACKs.
struct DurableLink {
    client: AsyncClient,
    topic: String,
    task: tokio::task::JoinHandle<()>,
    /// CONNACKs so far; a change means the client reconnected.
    gen: Arc<AtomicU64>,
    seen_gen: u64,
    acked: Arc<AtomicU64>,
    notify: Arc<tokio::sync::Notify>,
}

impl DurableLink {
    /// Connect (persistent session) and wait up to 20 s for the first CONNACK.
    async fn connect(p: &DeviceProcess) -> Result<DurableLink, String> {
        let mut o =
            MqttOptions::new(format!("lwcbench-dev-{}-{}", p.session, p.device), p.broker.host.clone(), p.broker.port);
        o.set_keep_alive(Duration::from_secs(5));
        o.set_clean_session(false);
        o.set_inflight(1000);
        o.set_max_packet_size(crate::wire::frame::MAX_FRAME + 1024, crate::wire::frame::MAX_FRAME + 1024);
        let (client, mut ev) = AsyncClient::new(o, 1024);
        let gen = Arc::new(AtomicU64::new(0));
        let acked = Arc::new(AtomicU64::new(0));
        let notify = Arc::new(tokio::sync::Notify::new());
        let (g2, a2, n2) = (gen.clone(), acked.clone(), notify.clone());
        let task = tokio::spawn(async move {
            loop {
                match ev.poll().await {
                    Ok(Event::Incoming(Packet::ConnAck(_))) => {
                        g2.fetch_add(1, Ordering::SeqCst);
                        n2.notify_one();
                    }
                    Ok(Event::Incoming(Packet::PubAck(_))) => {
                        a2.fetch_add(1, Ordering::SeqCst);
                        n2.notify_one();
                    }
                    Ok(_) => {}
                    // The broker is away (killed, restarting): rumqttc reconnects on the next poll.
                    Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
                }
            }
        });
        let t0 = Instant::now();
        while gen.load(Ordering::SeqCst) == 0 {
            if t0.elapsed() > Duration::from_secs(20) || stop_requested() {
                task.abort();
                return Err(format!("--broker: no answer from {} within 20 s", p.broker.describe()));
            }
            let _ = tokio::time::timeout(Duration::from_millis(50), notify.notified()).await;
        }
        let seen_gen = gen.load(Ordering::SeqCst);
        Ok(DurableLink { client, topic: topic(&p.session, p.device), task, gen, seen_gen, acked, notify })
    }

    async fn publish(&self, f: Vec<u8>) -> Result<(), String> {
        self.client
            .publish(self.topic.clone(), QoS::AtLeastOnce, false, f)
            .await
            .map_err(|e| format!("mqtt publish: {e}"))
    }

    /// Publish `frame` and wait for its PUBACK: after a reconnect the frames of `ring` go out
    /// again (the broker may have lost what it acknowledged lately), after [`ACK_TIMEOUT`] the
    /// frame again; once a stop is requested, at most 5 s more.
    async fn send(
        &mut self,
        frame: Vec<u8>,
        ring: &VecDeque<(Instant, Vec<u8>)>,
        st: &mut DeviceStats,
    ) -> Result<(), String> {
        let before = self.acked.load(Ordering::SeqCst);
        self.publish(frame.clone()).await?;
        st.sent += 1;
        let (mut t_pub, t_first) = (Instant::now(), Instant::now());
        loop {
            if self.acked.load(Ordering::SeqCst) > before {
                return Ok(());
            }
            let g = self.gen.load(Ordering::SeqCst);
            if g != self.seen_gen {
                // Reconnected: the broker may have lost what it acknowledged lately.
                self.seen_gen = g;
                st.reconnects += 1;
                for (_, f) in ring {
                    self.publish(f.clone()).await?;
                    st.ring_resent += 1;
                }
                if !ring.is_empty() {
                    return Ok(());
                }
            }
            if t_pub.elapsed() > ACK_TIMEOUT {
                st.ack_timeouts += 1;
                self.publish(frame.clone()).await?;
                t_pub = Instant::now();
            }
            if stop_requested() && t_first.elapsed() > Duration::from_secs(5) {
                return Ok(());
            }
            let _ = tokio::time::timeout(Duration::from_millis(50), self.notify.notified()).await;
        }
    }

    /// Let the last publishes (ring copies included) reach the broker, then disconnect.
    async fn close(self) {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let _ = tokio::time::timeout(Duration::from_secs(1), self.client.disconnect()).await;
        self.task.abort();
    }
}

fn write_stats(p: Option<&Path>, st: &DeviceStats) {
    if let Some(p) = p {
        // Best effort: a reader sees the old or the new file (rename), never half of one.
        let tmp = p.with_extension("tmp");
        if std::fs::write(&tmp, serde_json::to_vec(st).unwrap_or_default()).is_ok() {
            let _ = std::fs::rename(&tmp, p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A device process on a fresh counter state; nothing listens on port 1, so each refusal
    /// below comes before it connects.
    fn device(dir: &Path, delivery: Delivery, capture: Option<PathBuf>, messages: u64) -> DeviceProcess {
        let master = crate::wire::keys::MasterKey::from_bytes([7; 32]);
        let counters = CounterStore::open(&dir.join("ctr"), 64, &master).unwrap();
        DeviceProcess {
            suite: crate::wire::suite::find("Ascon-AEAD128").unwrap(),
            device: 3,
            session: "s".into(),
            broker: crate::transport::broker::parse_url("mqtt://127.0.0.1:1").unwrap(),
            key: LinkKey::Master(master),
            counters,
            messages,
            interval: None,
            capture,
            stats: None,
            delivery,
        }
    }

    const DURABLE: Delivery = Delivery::Durable { resend_window: Duration::from_secs(3) };

    /// The restart rule holds for every device process, whichever delivery: frames in the
    /// capture with no counter state would restart the counters at 0 under the same key.
    #[test]
    fn a_capture_without_its_counter_state_is_refused_for_either_delivery() {
        let d = tempfile::tempdir().unwrap();
        let cap = d.path().join("cap");
        std::fs::write(&cap, b"00\n").unwrap();
        for delivery in [Delivery::Pipelined, DURABLE] {
            let e = device(d.path(), delivery, Some(cap.clone()), 5).run().unwrap_err();
            assert!(e.contains("is missing, but --capture"), "{delivery:?}: {e}");
            assert!(e.contains(&d.path().join("ctr").display().to_string()), "{e}");
        }
        assert!(!d.path().join("ctr").exists(), "nothing written");
    }

    #[test]
    fn durable_delivery_needs_a_capture_and_only_it_runs_until_sigterm() {
        let d = tempfile::tempdir().unwrap();
        let e = device(d.path(), DURABLE, None, 5).run().unwrap_err();
        assert!(e.contains("--durable needs --capture"), "{e}");
        let e = device(d.path(), Delivery::Pipelined, None, 0).run().unwrap_err();
        assert!(e.contains("--messages: 0 (until SIGTERM) needs --durable"), "{e}");
    }
}
