//! A durable device (`lwcbench link device --durable`): every frame is appended to a capture
//! file before it is first published, published one at a time until the broker acknowledges it,
//! and re-published after restarts and reconnects, so that every captured reading can be
//! stored exactly once across kills (docs/link.md "Faults").
use std::collections::VecDeque;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rumqttc::{AsyncClient, Event, MqttOptions, Packet, QoS};
use serde::Serialize;

use crate::device::counter::{CounterStore, DeviceCounter};
use crate::device::fleet::dataset_readings;
use crate::gateway::process::{install_stop_signals, stop_requested};
use crate::transport::broker::BrokerAddr;
use crate::transport::mqtt::topic;
use crate::transport::runtime;
use crate::wire::frame::Header;
use crate::wire::keys::MasterKey;
use crate::wire::suite::{Keyed, Suite};

/// Captured frames re-published when a device process starts.
pub const RESEND_ON_START: usize = 64;
/// Frames younger than this are re-published after every reconnect (the default of
/// `--resend-window`).
pub const RING: Duration = Duration::from_secs(3);
/// Re-publish the frame in hand if no PUBACK came within this time.
pub const ACK_TIMEOUT: Duration = Duration::from_secs(2);

/// The complete frames of a capture file, in order (none if it does not exist). A last line
/// without its newline was cut by a kill while being written: that frame was never published
/// (capture comes first) and is skipped. Any other line that is not a frame in hex is an error
/// naming the line: the capture is the record of what was sent, and a damaged one cannot say
/// what a restart must re-send.
pub fn read_capture(path: &Path) -> Result<Vec<Vec<u8>>, String> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(format!("--capture: {}: {e}", path.display())),
    };
    let mut frames = Vec::new();
    for (i, line) in bytes.split_inclusive(|&b| b == b'\n').enumerate() {
        let Some(line) = line.strip_suffix(b"\n") else { break };
        match hex::decode(line).ok().filter(|f| Header::parse(f).is_ok()) {
            Some(f) => frames.push(f),
            None => {
                return Err(format!(
                    "--capture: {}: line {}: not a frame in hex; the capture is damaged and cannot tell what was \
                     sent (repair or remove that line)",
                    path.display(),
                    i + 1
                ))
            }
        }
    }
    Ok(frames)
}

/// Open a capture file for appending (created if missing). A last line cut by a kill is cut
/// off first, so the next frame starts a line of its own instead of completing a broken one.
pub fn open_capture(path: &Path) -> Result<std::fs::File, String> {
    let err = |e: std::io::Error| format!("--capture: {}: {e}", path.display());
    let mut f = std::fs::OpenOptions::new().create(true).read(true).append(true).open(path).map_err(err)?;
    let len = f.metadata().map_err(err)?.len();
    let mut end = len;
    let mut buf = vec![0u8; 64 << 10];
    let keep = loop {
        if end == 0 {
            break 0;
        }
        let start = end.saturating_sub(buf.len() as u64);
        let chunk = &mut buf[..(end - start) as usize];
        f.seek(SeekFrom::Start(start)).and_then(|_| f.read_exact(chunk)).map_err(err)?;
        if let Some(i) = chunk.iter().rposition(|&b| b == b'\n') {
            break start + i as u64 + 1;
        }
        end = start;
    };
    if keep < len {
        f.set_len(keep).map_err(err)?;
    }
    Ok(f)
}

/// Counter of the last complete frame of a capture file (reads only its tail).
pub fn last_counter(path: &Path) -> Option<u64> {
    let mut f = std::fs::File::open(path).ok()?;
    let len = f.metadata().ok()?.len();
    f.seek(SeekFrom::Start(len.saturating_sub(8192))).ok()?;
    let mut buf = Vec::new();
    f.read_to_end(&mut buf).ok()?;
    buf.split_inclusive(|&b| b == b'\n')
        .filter_map(|l| l.strip_suffix(b"\n"))
        .filter_map(|l| hex::decode(l).ok())
        .filter_map(|fr| Header::parse(&fr).ok())
        .map(|h| h.counter)
        .next_back()
}

/// One device as its own process with the delivery rules above (`lwcbench link device --durable`).
pub struct DurableDevice {
    pub suite: Suite,
    pub device: u32,
    pub session: String,
    pub broker: BrokerAddr,
    pub master: MasterKey,
    pub counters: CounterStore,
    /// Readings to send; 0 = until SIGTERM.
    pub messages: u64,
    pub interval: Option<Duration>,
    pub capture: PathBuf,
    /// JSON counters rewritten about once a second.
    pub stats: Option<PathBuf>,
    /// Frames younger than this are re-published after a reconnect (zero: none; the frame in
    /// hand is then re-published only after [`ACK_TIMEOUT`]).
    pub resend_window: Duration,
}

/// What a durable device did (this process only).
#[derive(Clone, Debug, Default, Serialize)]
pub struct DeviceStats {
    pub device: u32,
    pub pid: u32,
    pub sent: u64,
    pub resent_on_start: u64,
    pub ring_resent: u64,
    pub ack_timeouts: u64,
    pub reconnects: u64,
}

impl DurableDevice {
    pub fn run(self) -> Result<DeviceStats, String> {
        install_stop_signals();
        let key = self.master.device_key(self.suite.id, self.device, self.suite.key_len());
        let mut keyed = Keyed::new(&self.suite, &key, false)?;
        let readings = dataset_readings(&lwcbench_engine::dataset::Dataset::builtin());
        let earlier = read_capture(&self.capture)?;
        let tail: Vec<Vec<u8>> = earlier[earlier.len().saturating_sub(RESEND_ON_START)..].to_vec();
        let first_row = earlier.len();
        drop(earlier);
        let shown = self.capture.display().to_string();
        let mut cap = open_capture(&self.capture)?;
        let mut counter = DeviceCounter::new(&self.counters, self.device)?;
        let mut st = DeviceStats { device: self.device, pid: std::process::id(), ..Default::default() };
        let rt = runtime()?;
        let r = rt.block_on(async {
            let mut o = MqttOptions::new(
                format!("lwcbench-dev-{}-{}", self.session, self.device),
                self.broker.host.clone(),
                self.broker.port,
            );
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
                    return Err(format!("--broker: no answer from {} within 20 s", self.broker.describe()));
                }
                let _ = tokio::time::timeout(Duration::from_millis(50), notify.notified()).await;
            }
            let mut seen_gen = gen.load(Ordering::SeqCst);
            let t = topic(&self.session, self.device);
            let publish = |f: Vec<u8>| {
                let (c, t) = (client.clone(), t.clone());
                async move { c.publish(t, QoS::AtLeastOnce, false, f).await.map_err(|e| format!("mqtt publish: {e}")) }
            };
            for f in &tail {
                publish(f.clone()).await?;
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
                while ring.front().is_some_and(|(t, _)| now.duration_since(*t) > self.resend_window)
                    || ring.len() > 65_536
                {
                    ring.pop_front();
                }
                if !self.resend_window.is_zero() {
                    ring.push_back((now, frame.clone()));
                }
                let before = acked.load(Ordering::SeqCst);
                publish(frame.clone()).await?;
                st.sent += 1;
                let (mut t_pub, t_first) = (Instant::now(), Instant::now());
                loop {
                    if acked.load(Ordering::SeqCst) > before {
                        break;
                    }
                    let g = gen.load(Ordering::SeqCst);
                    if g != seen_gen {
                        // Reconnected: the broker may have lost what it acknowledged lately.
                        seen_gen = g;
                        st.reconnects += 1;
                        for (_, f) in &ring {
                            publish(f.clone()).await?;
                            st.ring_resent += 1;
                        }
                        if !ring.is_empty() {
                            break;
                        }
                    }
                    if t_pub.elapsed() > ACK_TIMEOUT {
                        st.ack_timeouts += 1;
                        publish(frame.clone()).await?;
                        t_pub = Instant::now();
                    }
                    if stop_requested() && t_first.elapsed() > Duration::from_secs(5) {
                        break;
                    }
                    let _ = tokio::time::timeout(Duration::from_millis(50), notify.notified()).await;
                }
                i += 1;
                if last_stats.elapsed() > Duration::from_secs(1) {
                    last_stats = Instant::now();
                    write_stats(self.stats.as_deref(), &st);
                }
            }
            // Let the last publishes (ring copies included) reach the broker before leaving.
            tokio::time::sleep(Duration::from_millis(200)).await;
            let _ = tokio::time::timeout(Duration::from_secs(1), client.disconnect()).await;
            task.abort();
            Ok(())
        });
        rt.shutdown_timeout(Duration::from_secs(1));
        write_stats(self.stats.as_deref(), &st);
        r.map(|_| st)
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

    fn frame(counter: u64) -> Vec<u8> {
        let s = crate::wire::suite::find("Ascon-AEAD128").unwrap();
        let k = MasterKey::from_bytes([5; 32]).device_key(s.id, 2, s.key_len());
        let mut f = Vec::new();
        Keyed::new(&s, &k, false).unwrap().seal(2, counter, b"reading", &mut f).unwrap();
        f
    }

    /// A kill cut the last line mid-write, leaving a non-UTF-8 byte: the complete frames before it
    /// are still what the restart re-sends (reading the file as one UTF-8 string lost all of
    /// them), and the cut line goes before the next frame is appended.
    #[test]
    fn a_cut_last_line_with_a_non_utf8_byte_keeps_the_frames_before_it() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("cap");
        let (f0, f1, f2) = (frame(0), frame(1), frame(2));
        let mut bytes = format!("{}\n{}\n", hex::encode(&f0), hex::encode(&f1)).into_bytes();
        bytes.extend_from_slice(b"0a1b\xff");
        std::fs::write(&p, &bytes).unwrap();
        assert_eq!(read_capture(&p).unwrap(), vec![f0.clone(), f1.clone()]);
        let mut f = open_capture(&p).unwrap();
        f.write_all(format!("{}\n", hex::encode(&f2)).as_bytes()).unwrap();
        drop(f);
        assert_eq!(read_capture(&p).unwrap(), vec![f0, f1, f2]);
        assert_eq!(last_counter(&p), Some(2));
    }

    #[test]
    fn a_damaged_complete_line_is_an_error_naming_it() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("cap");
        let mut bytes = format!("{}\n", hex::encode(frame(0))).into_bytes();
        bytes.extend_from_slice(b"\xff\n");
        bytes.extend_from_slice(format!("{}\n", hex::encode(frame(1))).as_bytes());
        std::fs::write(&p, &bytes).unwrap();
        let e = read_capture(&p).unwrap_err();
        assert!(e.contains(&format!("{}: line 2: not a frame in hex", p.display())), "{e}");
        assert!(read_capture(&d.path().join("none")).unwrap().is_empty(), "no capture yet: nothing sent");
    }
}
