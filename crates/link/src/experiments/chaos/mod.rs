//! Faults: one run in which the gateway process, the broker (mosquitto, persistence on) and
//! device processes are SIGKILLed and restarted at seeded random moments, then a proof from the
//! devices' captures and the store that nothing was lost, duplicated or forged into the store.
//! See docs/link.md "Faults".
//!
//! **What "sent" means.** A *durable device* ([`DurableDevice`]) appends every frame to its
//! capture file (one hex line, written before the first publish) — from that moment the reading
//! counts as sent and must be stored exactly once. To make that promise keepable across kills,
//! the device
//! * publishes one frame at a time and waits for the broker's PUBACK (re-publishing after
//!   [`ACK_TIMEOUT`]) before it captures the next, so at most the last captured frame can be
//!   unacknowledged when it dies;
//! * re-publishes the last [`RESEND_ON_START`] captured frames when it starts (covers a kill
//!   between capture and PUBACK);
//! * keeps the frames of the last [`RING`] in memory and re-publishes them after every
//!   reconnect: mosquitto acknowledges a QoS 1 message before it is on disk (its persistence is
//!   a snapshot every `autosave_interval`), and rumqttc drops its unacknowledged publishes when
//!   the restarted broker has no session for it; both would otherwise lose readings.
//!
//! Re-sent frames are the same bytes (same counter, same nonce): not a nonce reuse. The gateway
//! refuses the copies it has seen (`replay`) or the store ignores them (UNIQUE(device, counter)).
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::io::{BufRead, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rumqttc::{AsyncClient, Event, MqttOptions, Packet, QoS};
use serde::Serialize;

use crate::device::counter::{CounterStore, DeviceCounter};
use crate::device::fleet::dataset_readings;
use crate::gateway::process::{install_stop_signals, mem_kb, stop_requested};
use crate::session;
use crate::transport::broker::BrokerAddr;
use crate::transport::mqtt::{mqtt_connect, topic};
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
/// Forged frames use counters from here on (no device reaches them in a run): one stored would
/// show as a row that no device captured.
pub const FORGED_COUNTER_BASE: u64 = 1 << 40;

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

/// Which component a fault kills.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FaultKind {
    Gateway,
    Broker,
    Device,
    /// The gateway, then the broker while the gateway is down (what the broker queued for the
    /// gateway exists only in its memory and its last snapshot).
    GatewayThenBroker,
}

impl FaultKind {
    pub fn as_str(self) -> &'static str {
        match self {
            FaultKind::Gateway => "gateway SIGKILL",
            FaultKind::Broker => "broker SIGKILL",
            FaultKind::Device => "device SIGKILL",
            FaultKind::GatewayThenBroker => "gateway SIGKILL, then broker SIGKILL while it is down",
        }
    }
}

/// One chaos (or, with no faults, soak) run.
pub struct ChaosConfig {
    /// The lwcbench binary (spawned as `link gateway` and `link device --durable`).
    pub exe: PathBuf,
    /// Working directory: captures, counters, key, store, broker data, logs.
    pub dir: PathBuf,
    pub mosquitto: PathBuf,
    pub suite: Suite,
    pub devices: u32,
    /// Report interval of every device.
    pub interval: Duration,
    /// Least run time (the faults may make it longer).
    pub duration: Duration,
    pub seed: u64,
    pub gateway_kills: u32,
    pub broker_kills: u32,
    pub device_kills: u32,
    /// Overlapping faults: [`FaultKind::GatewayThenBroker`].
    pub double_kills: u32,
    /// A forged frame (bad tag, unknown device, truncated) this often; None = no forger.
    pub forge_every: Option<Duration>,
    pub window: u64,
    pub batch: usize,
    /// After the devices stopped: longest wait for the store to hold every captured reading.
    pub drain_timeout: Duration,
    /// Timeline sampling period.
    pub sample_every: Duration,
    /// Store: a SQLite path or postgres:// URL (default dir/chaos.db).
    pub store: Option<String>,
    /// Passed to every device (`--resend-window`).
    pub resend_window: Duration,
    /// Gateway processes: 1 = `link gateway` alone; more = that many `link gateway --shared
    /// chaos --member gI`, one MQTT v5 shared subscription with the store as replay authority.
    /// A gateway fault hits one of them, drawn from the seed.
    pub gateways: u32,
}

/// One injected fault.
#[derive(Clone, Debug, Serialize)]
pub struct FaultRow {
    pub seq: u32,
    pub fault: String,
    pub target: String,
    pub t_kill_s: f64,
    pub down_ms: u64,
    /// Restart → first reading captured after the kill is stored (empty: did not recover).
    pub recovery_ms: Option<u64>,
    /// Kill → that reading stored.
    pub outage_ms: Option<u64>,
    /// Captured readings (after this kill, before the next fault) never stored.
    pub readings_lost: u64,
    pub duplicates_stored: u64,
}

/// The fault table: one row per kind.
#[derive(Clone, Debug, Serialize)]
pub struct TableRow {
    pub fault: String,
    pub count: u32,
    pub readings_lost: u64,
    pub duplicates_stored: u64,
    pub recovery_p50_ms: Option<u64>,
    pub recovery_max_ms: Option<u64>,
    pub outage_max_ms: Option<u64>,
}

/// One timeline sample.
#[derive(Clone, Debug, Serialize)]
pub struct Sample {
    pub t_s: f64,
    pub gateway_rss_kb: u64,
    pub gateway_hwm_kb: u64,
    pub broker_rss_kb: u64,
    pub stored_rows: u64,
    /// Refusals reported by the current gateway process (forged frames and re-sent copies).
    pub gateway_refused: u64,
    /// Summed over device processes' latest stats: PUBACK timeouts and reconnects.
    pub device_ack_timeouts: u64,
    pub device_reconnects: u64,
}

/// The proof.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Verdict {
    pub captured: u64,
    pub stored_rows: u64,
    pub lost: u64,
    pub duplicates_stored: u64,
    /// (device, counter) pairs captured with two different frames: a nonce reuse.
    pub counter_reuse: u64,
    /// Stored rows no device captured (forged frames among them).
    pub not_captured_but_stored: u64,
    pub forged_sent: u64,
    pub forged_stored: u64,
    /// Stored payload differs from the captured frame's plaintext.
    pub mismatched: u64,
    pub integrity_check: String,
    pub gateway_duplicates_ignored: u64,
    pub gateway_refused: u64,
    pub gateway_restarts: u32,
    pub broker_restarts: u32,
    pub device_restarts: u32,
    pub double_kills: u32,
    pub device_ring_resent: u64,
    pub device_resent_on_start: u64,
    pub device_ack_timeouts: u64,
    pub elapsed_s: f64,
    pub notes: Vec<String>,
}

impl Verdict {
    /// Everything the fault test asserts.
    pub fn failures(&self) -> Vec<String> {
        let mut f = Vec::new();
        let mut chk = |ok: bool, what: String| {
            if !ok {
                f.push(what)
            }
        };
        chk(self.lost == 0, format!("{} captured readings not stored", self.lost));
        chk(self.duplicates_stored == 0, format!("{} readings stored twice", self.duplicates_stored));
        chk(self.counter_reuse == 0, format!("{} (key, counter) pairs used for two frames", self.counter_reuse));
        chk(self.not_captured_but_stored == 0, format!("{} stored rows no device sent", self.not_captured_but_stored));
        chk(self.forged_stored == 0, format!("{} forged frames stored", self.forged_stored));
        chk(self.mismatched == 0, format!("{} stored payloads differ from what was sent", self.mismatched));
        chk(self.integrity_check == "ok", format!("store integrity_check: {}", self.integrity_check));
        chk(self.captured > 0, "no reading was sent".into());
        f
    }
}

pub struct ChaosOutcome {
    pub verdict: Verdict,
    pub faults: Vec<FaultRow>,
    pub table: Vec<TableRow>,
    pub timeline: Vec<Sample>,
    pub broker_port: u16,
    pub session: String,
}

struct Svc {
    child: Option<Child>,
}

impl Svc {
    fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(|c| c.id())
    }
    fn sigkill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
    /// SIGTERM, wait up to `t`, then SIGKILL. True if it stopped by itself.
    fn stop(&mut self, t: Duration) -> bool {
        let Some(mut c) = self.child.take() else { return true };
        // SAFETY: kill(2) on our own child's pid.
        unsafe { libc::kill(c.id() as i32, libc::SIGTERM) };
        let t0 = Instant::now();
        while t0.elapsed() < t {
            if let Ok(Some(_)) = c.try_wait() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = c.kill();
        let _ = c.wait();
        false
    }
}

impl Drop for Svc {
    fn drop(&mut self) {
        self.sigkill();
    }
}

struct Ctl<'a> {
    cfg: &'a ChaosConfig,
    t0: Instant,
    session: String,
    port: u16,
    store: String,
    key: PathBuf,
    broker: Svc,
    gateways: Vec<Svc>,
    devices: Vec<Svc>,
    db: Option<rusqlite::Connection>,
    timeline: Vec<Sample>,
    next_sample: Instant,
    restarts: [u32; 4],
}

fn log_file(p: &Path) -> Result<std::fs::File, String> {
    std::fs::OpenOptions::new().create(true).append(true).open(p).map_err(|e| format!("{}: {e}", p.display()))
}

fn wait_port(port: u16, child: &mut Child, what: &str) -> Result<(), String> {
    let t0 = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        if let Ok(Some(st)) = child.try_wait() {
            return Err(format!("{what} exited: {st}"));
        }
        if t0.elapsed() > Duration::from_secs(20) {
            return Err(format!("{what} did not listen on 127.0.0.1:{port} within 20 s"));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(())
}

impl Ctl<'_> {
    fn dev_path(&self, d: u32, ext: &str) -> PathBuf {
        self.cfg.dir.join(format!("device-{d}.{ext}"))
    }

    fn start_broker(&mut self) -> Result<(), String> {
        let dir = &self.cfg.dir;
        let conf = dir.join("mosquitto.conf");
        let data = dir.join("broker");
        std::fs::create_dir_all(&data).map_err(|e| format!("{}: {e}", data.display()))?;
        // SAFETY: geteuid has no preconditions.
        let root = unsafe { libc::geteuid() } == 0;
        let text = format!(
            "listener {} 127.0.0.1\nallow_anonymous true\npersistence true\npersistence_location {}/\n\
             autosave_interval 1\nmax_queued_messages 0\nmax_inflight_messages 0\n{}",
            self.port,
            data.display(),
            if root { "user root\n" } else { "" }
        );
        std::fs::write(&conf, text).map_err(|e| format!("{}: {e}", conf.display()))?;
        let log = log_file(&dir.join("mosquitto.log"))?;
        let mut child = Command::new(&self.cfg.mosquitto)
            .arg("-c")
            .arg(&conf)
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .map_err(|e| format!("--mosquitto: cannot start {}: {e}", self.cfg.mosquitto.display()))?;
        wait_port(self.port, &mut child, "mosquitto")?;
        self.broker.child = Some(child);
        Ok(())
    }

    /// Gateway `i`'s file `name` (one gateway: `gateway.log`, else `gateway-I.log`).
    fn gw_path(&self, i: usize, name: &str) -> PathBuf {
        self.cfg.dir.join(if self.gateways.len() == 1 {
            format!("gateway{name}")
        } else {
            format!("gateway-{i}{name}")
        })
    }

    fn start_gateway(&mut self, i: usize) -> Result<(), String> {
        let c = self.cfg;
        let devices = format!("0-{}", c.devices - 1);
        let (stats, log) = (self.gw_path(i, "-stats.jsonl"), self.gw_path(i, ".log"));
        let mut cmd = Command::new(&c.exe);
        if self.gateways.len() > 1 {
            cmd.args(["link", "gateway", "--shared", "chaos", "--member", &format!("g{i}")]);
        } else {
            cmd.args(["link", "gateway"]);
        }
        let mut child = cmd
            .args(["--broker", &format!("mqtt://127.0.0.1:{}", self.port)])
            .args(["--session", &self.session, "--cipher", &c.suite.name(), "--devices", &devices])
            .arg("--key-file")
            .arg(&self.key)
            .args(["--store", &self.store, "--window", &c.window.to_string(), "--batch", &c.batch.to_string()])
            .arg("--stats")
            .arg(&stats)
            .stdout(Stdio::piped())
            .stderr(log_file(&log)?)
            .spawn()
            .map_err(|e| format!("cannot start {} link gateway: {e}", c.exe.display()))?;
        let out = child.stdout.take().expect("piped");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(out).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let t0 = Instant::now();
        loop {
            if let Ok(l) = rx.recv_timeout(Duration::from_millis(50)) {
                if l.trim() == "ready" {
                    break;
                }
            }
            if let Ok(Some(st)) = child.try_wait() {
                return Err(format!("gateway exited: {st} (see {})", log.display()));
            }
            if t0.elapsed() > Duration::from_secs(30) {
                let _ = child.kill();
                return Err("gateway did not subscribe within 30 s".into());
            }
        }
        self.gateways[i].child = Some(child);
        Ok(())
    }

    fn start_device(&mut self, d: u32) -> Result<(), String> {
        let c = self.cfg;
        let child = Command::new(&c.exe)
            .args(["link", "device", "--durable", "--id", &d.to_string(), "--session", &self.session])
            .args(["--broker", &format!("mqtt://127.0.0.1:{}", self.port), "--cipher", &c.suite.name()])
            .arg("--key-file")
            .arg(&self.key)
            .arg("--counter-state")
            .arg(self.dev_path(d, "counters"))
            .args(["--counter-block", "64", "--messages", "0"])
            .args(["--interval", &format!("{}us", c.interval.as_micros())])
            .arg("--capture")
            .arg(self.dev_path(d, "capture"))
            .arg("--stats")
            .arg(self.dev_path(d, "json"))
            .args(["--resend-window", &format!("{}ms", c.resend_window.as_millis())])
            .stdout(Stdio::null())
            .stderr(log_file(&self.dev_path(d, "log"))?)
            .spawn()
            .map_err(|e| format!("cannot start {} link device: {e}", c.exe.display()))?;
        self.devices[d as usize].child = Some(child);
        Ok(())
    }

    fn db(&mut self) -> Option<&rusqlite::Connection> {
        if self.db.is_none() && !self.store.starts_with("postgres") {
            let path = self.store.strip_prefix("sqlite:").unwrap_or(&self.store);
            if let Ok(c) = rusqlite::Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY) {
                let _ = c.busy_timeout(Duration::from_millis(500));
                self.db = Some(c);
            }
        }
        self.db.as_ref()
    }

    /// Highest stored counter per device (SQLite; PostgreSQL through a fresh client).
    fn stored_max(&mut self) -> HashMap<u32, u64> {
        let mut out = HashMap::new();
        if self.store.starts_with("postgres") {
            if let Ok(mut c) = postgres::Client::connect(&self.store, postgres::NoTls) {
                if let Ok(rows) = c.query(
                    "SELECT device, MAX(counter) FROM lwcbench_link_readings WHERE run = $1 GROUP BY device",
                    &[&self.session],
                ) {
                    for r in rows {
                        out.insert(r.get::<_, i64>(0) as u32, r.get::<_, i64>(1) as u64);
                    }
                }
            }
            return out;
        }
        if let Some(db) = self.db() {
            if let Ok(mut st) = db.prepare_cached("SELECT device, MAX(counter) FROM readings GROUP BY device") {
                if let Ok(rows) = st.query_map([], |r| Ok((r.get::<_, i64>(0)? as u32, r.get::<_, i64>(1)? as u64))) {
                    out.extend(rows.flatten());
                }
            }
        }
        out
    }

    fn stored_count(&mut self) -> u64 {
        if self.store.starts_with("postgres") {
            return postgres::Client::connect(&self.store, postgres::NoTls)
                .ok()
                .and_then(|mut c| {
                    c.query_one("SELECT COUNT(*) FROM lwcbench_link_readings WHERE run = $1", &[&self.session]).ok()
                })
                .map(|r| r.get::<_, i64>(0) as u64)
                .unwrap_or(0);
        }
        self.db()
            .and_then(|db| db.query_row("SELECT COUNT(*) FROM readings", [], |r| r.get::<_, i64>(0)).ok())
            .unwrap_or(0) as u64
    }

    fn device_stats(&self) -> Vec<DeviceStatsFile> {
        (0..self.cfg.devices)
            .filter_map(|d| std::fs::read(self.dev_path(d, "json")).ok())
            .filter_map(|b| serde_json::from_slice(&b).ok())
            .collect()
    }

    /// Take a timeline sample if one is due.
    fn tick(&mut self) {
        if Instant::now() < self.next_sample {
            return;
        }
        self.next_sample += self.cfg.sample_every;
        // Summed over the gateway processes.
        let mem: Vec<(u64, u64)> = self.gateways.iter().filter_map(|g| g.pid().and_then(mem_kb)).collect();
        let (g_rss, g_hwm) = (mem.iter().map(|m| m.0).sum(), mem.iter().map(|m| m.1).sum());
        let b_rss = self.broker.pid().and_then(mem_kb).map(|m| m.0).unwrap_or(0);
        let stored = self.stored_count();
        let refused = (0..self.gateways.len())
            .map(|i| {
                let pid = self.gateways[i].pid();
                gateway_stats(&self.gw_path(i, "-stats.jsonl"))
                    .iter()
                    .filter(|l| Some(l.pid) == pid)
                    .map(|l| l.refused)
                    .next_back()
                    .unwrap_or(0)
            })
            .sum();
        let ds = self.device_stats();
        self.timeline.push(Sample {
            t_s: self.t0.elapsed().as_secs_f64(),
            gateway_rss_kb: g_rss,
            gateway_hwm_kb: g_hwm,
            broker_rss_kb: b_rss,
            stored_rows: stored,
            gateway_refused: refused,
            device_ack_timeouts: ds.iter().map(|s| s.ack_timeouts).sum(),
            device_reconnects: ds.iter().map(|s| s.reconnects).sum(),
        });
    }

    fn sleep(&mut self, d: Duration) {
        let end = Instant::now() + d;
        while Instant::now() < end {
            self.tick();
            std::thread::sleep(Duration::from_millis(10).min(end.saturating_duration_since(Instant::now())));
        }
    }

    fn last_counters(&self) -> Vec<Option<u64>> {
        (0..self.cfg.devices).map(|d| last_counter(&self.dev_path(d, "capture"))).collect()
    }
}

#[derive(serde::Deserialize, Default)]
struct DeviceStatsFile {
    #[serde(default)]
    ack_timeouts: u64,
    #[serde(default)]
    reconnects: u64,
    #[serde(default)]
    ring_resent: u64,
    #[serde(default)]
    resent_on_start: u64,
}

#[derive(serde::Deserialize)]
struct GwLine {
    pid: u32,
    #[serde(default)]
    duplicates: u64,
    #[serde(default)]
    refused: u64,
}

fn gateway_stats(file: &Path) -> Vec<GwLine> {
    std::fs::read_to_string(file).unwrap_or_default().lines().filter_map(|l| serde_json::from_str(l).ok()).collect()
}

fn forged_frame(kind: u64, k: u64, devices: u32, suite: &Suite, wrong: &MasterKey) -> Result<(u32, Vec<u8>), String> {
    let d = (k % devices as u64) as u32;
    let counter = FORGED_COUNTER_BASE + k;
    let mut f = Vec::new();
    match kind {
        // Under a key the gateway does not have: bad_tag.
        0 => {
            let key = wrong.device_key(suite.id, d, suite.key_len());
            Keyed::new(suite, &key, false)?.seal(d, counter, b"forged reading", &mut f)?;
            Ok((d, f))
        }
        // A device the gateway does not know: unknown_device.
        1 => {
            let u = devices + 1000 + (k % 7) as u32;
            let key = wrong.device_key(suite.id, u, suite.key_len());
            Keyed::new(suite, &key, false)?.seal(u, counter, b"forged reading", &mut f)?;
            Ok((d, f))
        }
        // Truncated: malformed.
        _ => Ok((d, vec![1, suite.id, 0, 0, 0])),
    }
}

/// Run the chaos (or soak) session and prove its outcome.
pub fn run(cfg: &ChaosConfig) -> Result<ChaosOutcome, String> {
    if !(1..=8).contains(&cfg.gateways) {
        return Err(format!("--gateways: {} is not in 1..=8", cfg.gateways));
    }
    if cfg.devices == 0 || cfg.devices > 64 {
        return Err(format!("--devices: {} is not in 1..=64 (one process each)", cfg.devices));
    }
    if !cfg.mosquitto.is_file() {
        return Err(format!("--mosquitto: {} not found (Debian: apt-get install mosquitto)", cfg.mosquitto.display()));
    }
    std::fs::create_dir_all(&cfg.dir).map_err(|e| format!("{}: {e}", cfg.dir.display()))?;
    let key = cfg.dir.join("master.key");
    let master = MasterKey::random();
    if key.exists() {
        return Err(format!("{} exists: a chaos run needs a fresh directory", key.display()));
    }
    master.write_new(&key)?;
    let session = session::new_session();
    let store = cfg.store.clone().unwrap_or_else(|| cfg.dir.join("chaos.db").display().to_string());
    let mut ctl = Ctl {
        cfg,
        t0: Instant::now(),
        session: session.clone(),
        port: crate::transport::broker::free_port()?,
        store,
        key: key.clone(),
        broker: Svc { child: None },
        gateways: (0..cfg.gateways).map(|_| Svc { child: None }).collect(),
        devices: (0..cfg.devices).map(|_| Svc { child: None }).collect(),
        db: None,
        timeline: Vec::new(),
        next_sample: Instant::now(),
        restarts: [0; 4],
    };
    ctl.start_broker()?;
    for i in 0..cfg.gateways as usize {
        ctl.start_gateway(i)?;
    }
    // Let the broker snapshot the gateway's subscription before anything can be killed.
    std::thread::sleep(Duration::from_millis(1500));
    for d in 0..cfg.devices {
        ctl.start_device(d)?;
    }
    ctl.t0 = Instant::now();
    ctl.next_sample = ctl.t0;

    // The forger: its own connection, publishing forged frames on the devices' topics.
    let rt = runtime()?;
    let forged = Arc::new(AtomicU64::new(0));
    let forger = match cfg.forge_every {
        Some(every) => {
            let broker = BrokerAddr { host: "127.0.0.1".into(), port: ctl.port, embedded: false };
            let conn = rt.block_on(mqtt_connect(&format!("lwcbench-forger-{session}"), &broker))?;
            let (suite, devices, session2, forged2) = (cfg.suite.clone(), cfg.devices, session.clone(), forged.clone());
            let wrong = MasterKey::random();
            let client = conn.client.clone();
            Some((
                rt.spawn(async move {
                    let mut k = 0u64;
                    loop {
                        tokio::time::sleep(every).await;
                        if let Ok((d, f)) = forged_frame(k % 3, k, devices, &suite, &wrong) {
                            if client.try_publish(topic(&session2, d), QoS::AtLeastOnce, false, f).is_ok() {
                                forged2.fetch_add(1, Ordering::SeqCst);
                            }
                        }
                        k += 1;
                    }
                }),
                conn,
            ))
        }
        None => None,
    };

    // The fault plan: kinds shuffled, each fault after the last one recovered.
    let mut rng = rand::rngs::StdRng::seed_from_u64(cfg.seed);
    let mut plan: Vec<FaultKind> = std::iter::repeat_n(FaultKind::Gateway, cfg.gateway_kills as usize)
        .chain(std::iter::repeat_n(FaultKind::Broker, cfg.broker_kills as usize))
        .chain(std::iter::repeat_n(FaultKind::Device, cfg.device_kills as usize))
        .chain(std::iter::repeat_n(FaultKind::GatewayThenBroker, cfg.double_kills as usize))
        .collect();
    plan.shuffle(&mut rng);
    let mut faults = Vec::new();
    let mut marks: Vec<Vec<Option<u64>>> = Vec::new();
    ctl.sleep(Duration::from_millis(1500));
    for (seq, kind) in plan.iter().enumerate() {
        ctl.sleep(Duration::from_millis(rng.random_range(300..1500)));
        let down = Duration::from_millis(rng.random_range(50..800));
        let target = match kind {
            FaultKind::Device => rng.random_range(0..cfg.devices),
            // One gateway: nothing drawn, so a seed gives the plan it gave before --gateways.
            _ if cfg.gateways > 1 => rng.random_range(0..cfg.gateways),
            _ => 0,
        };
        let g = target as usize;
        let before = ctl.last_counters();
        let t_kill = Instant::now();
        match kind {
            FaultKind::Gateway => ctl.gateways[g].sigkill(),
            FaultKind::Broker => ctl.broker.sigkill(),
            FaultKind::Device => ctl.devices[target as usize].sigkill(),
            FaultKind::GatewayThenBroker => {
                ctl.gateways[g].sigkill();
                // Devices keep publishing; mosquitto queues it for the absent gateway.
                let gap = Duration::from_millis(rng.random_range(200..900));
                ctl.sleep(gap);
                ctl.broker.sigkill();
            }
        }
        ctl.sleep(down);
        let t_restart = Instant::now();
        match kind {
            FaultKind::Gateway => ctl.start_gateway(g)?,
            FaultKind::Broker => ctl.start_broker()?,
            FaultKind::Device => ctl.start_device(target)?,
            FaultKind::GatewayThenBroker => {
                ctl.start_broker()?;
                ctl.start_gateway(g)?;
            }
        }
        ctl.restarts[*kind as usize] += 1;
        // Recovered once a reading captured after the kill is stored.
        let mut recovered = None;
        while t_restart.elapsed() < Duration::from_secs(30) {
            let m = ctl.stored_max();
            let fresh = |d: u32| match (m.get(&d), before[d as usize]) {
                (Some(&s), Some(b)) => s > b,
                (Some(_), None) => true,
                _ => false,
            };
            let ok = match kind {
                FaultKind::Device => fresh(target),
                _ => (0..cfg.devices).any(fresh),
            };
            if ok {
                recovered = Some(Instant::now());
                break;
            }
            ctl.sleep(Duration::from_millis(10));
        }
        faults.push(FaultRow {
            seq: seq as u32 + 1,
            fault: kind.as_str().into(),
            target: match kind {
                FaultKind::Device => format!("device {target}"),
                FaultKind::Gateway if cfg.gateways > 1 => format!("gateway {g}"),
                FaultKind::Gateway => "gateway".into(),
                FaultKind::Broker => "mosquitto".into(),
                FaultKind::GatewayThenBroker => "gateway + mosquitto".into(),
            },
            t_kill_s: t_kill.duration_since(ctl.t0).as_secs_f64(),
            down_ms: down.as_millis() as u64,
            recovery_ms: recovered.map(|r| r.duration_since(t_restart).as_millis() as u64),
            outage_ms: recovered.map(|r| r.duration_since(t_kill).as_millis() as u64),
            readings_lost: 0,
            duplicates_stored: 0,
        });
        marks.push(before);
    }
    while ctl.t0.elapsed() < cfg.duration {
        ctl.sleep(Duration::from_millis(50));
    }
    // Stop: devices first (each finishes the frame in hand), then wait for the store to hold
    // everything captured, then the gateway (clean stop, final tally), then the broker.
    let mut notes = Vec::new();
    for d in 0..cfg.devices as usize {
        if !ctl.devices[d].stop(Duration::from_secs(15)) {
            notes.push(format!("device {d} did not stop within 15 s of SIGTERM (killed)"));
        }
    }
    if let Some((task, conn)) = forger {
        task.abort();
        conn.task.abort();
    }
    rt.shutdown_timeout(Duration::from_secs(1));
    let captures: Vec<Vec<Vec<u8>>> =
        (0..cfg.devices).map(|d| read_capture(&ctl.dev_path(d, "capture"))).collect::<Result<_, _>>()?;
    let distinct: u64 = captures
        .iter()
        .map(|c| {
            c.iter()
                .filter_map(|f| Header::parse(f).ok())
                .map(|h| h.counter)
                .collect::<std::collections::HashSet<_>>()
                .len() as u64
        })
        .sum();
    let t_drain = Instant::now();
    while ctl.stored_count() < distinct && t_drain.elapsed() < cfg.drain_timeout {
        ctl.sleep(Duration::from_millis(50));
    }
    ctl.tick();
    let elapsed_s = ctl.t0.elapsed().as_secs_f64();
    for i in 0..ctl.gateways.len() {
        if !ctl.gateways[i].stop(Duration::from_secs(15)) {
            notes.push(format!("gateway {i} did not stop within 15 s of SIGTERM (killed)"));
        }
    }
    ctl.db = None;
    ctl.broker.stop(Duration::from_secs(10));

    // The proof.
    let mut v = Verdict { elapsed_s, notes, ..Default::default() };
    let mut sent: BTreeMap<(u32, u64), (Vec<u8>, Vec<u8>)> = BTreeMap::new();
    for (d, frames) in captures.iter().enumerate() {
        let k = master.device_key(cfg.suite.id, d as u32, cfg.suite.key_len());
        let mut keyed = Keyed::new(&cfg.suite, &k, false)?;
        for f in frames {
            let h = Header::parse(f).map_err(|e| e.to_string())?;
            if let Some((prev, _)) = sent.get(&(h.device, h.counter)) {
                if prev != f {
                    v.counter_reuse += 1;
                }
                continue;
            }
            if h.device != d as u32 {
                v.counter_reuse += 1;
            }
            let pt = keyed.open(&h, f).map_err(|_| format!("device {d}: a captured frame does not open"))?;
            sent.insert((h.device, h.counter), (f.clone(), pt));
        }
    }
    v.captured = sent.len() as u64;
    let rows = crate::store::open(&ctl.store, &session, &master.fingerprint())?.all()?;
    v.stored_rows = rows.len() as u64;
    let mut stored: HashMap<(u32, u64), u64> = HashMap::new();
    for r in &rows {
        *stored.entry((r.device, r.counter)).or_default() += 1;
        match sent.get(&(r.device, r.counter)) {
            Some((_, pt)) if *pt == r.payload => {}
            Some(_) => v.mismatched += 1,
            None => {
                v.not_captured_but_stored += 1;
                if r.counter >= FORGED_COUNTER_BASE || r.device >= cfg.devices {
                    v.forged_stored += 1;
                }
            }
        }
    }
    // Loss and duplicates, each attributed to the last fault before the reading was captured.
    let attribute =
        |d: u32, c: u64| -> Option<usize> { marks.iter().rposition(|m| m[d as usize].is_none_or(|b| c > b)) };
    let mut steady = (0u64, 0u64);
    for &(d, c) in sent.keys() {
        let n = stored.get(&(d, c)).copied().unwrap_or(0);
        let (lost, dup) = ((n == 0) as u64, n.saturating_sub(1));
        v.lost += lost;
        v.duplicates_stored += dup;
        match attribute(d, c) {
            Some(i) => {
                faults[i].readings_lost += lost;
                faults[i].duplicates_stored += dup;
            }
            None => {
                steady.0 += lost;
                steady.1 += dup;
            }
        }
    }
    v.integrity_check = integrity(&ctl.store, &session);
    v.forged_sent = forged.load(Ordering::SeqCst);
    let gl: Vec<GwLine> =
        (0..ctl.gateways.len()).flat_map(|i| gateway_stats(&ctl.gw_path(i, "-stats.jsonl"))).collect();
    let mut last: BTreeMap<u32, &GwLine> = BTreeMap::new();
    for l in &gl {
        last.insert(l.pid, l);
    }
    v.gateway_duplicates_ignored = last.values().map(|l| l.duplicates).sum();
    v.gateway_refused = last.values().map(|l| l.refused).sum();
    [v.gateway_restarts, v.broker_restarts, v.device_restarts, v.double_kills] = ctl.restarts;
    let ds = ctl.device_stats();
    v.device_ring_resent = ds.iter().map(|s| s.ring_resent).sum();
    v.device_resent_on_start = ds.iter().map(|s| s.resent_on_start).sum();
    v.device_ack_timeouts = ds.iter().map(|s| s.ack_timeouts).sum();

    let mut table = Vec::new();
    for kind in [FaultKind::Gateway, FaultKind::Broker, FaultKind::Device, FaultKind::GatewayThenBroker] {
        let fs: Vec<&FaultRow> = faults.iter().filter(|f| f.fault == kind.as_str()).collect();
        let mut rec: Vec<u64> = fs.iter().filter_map(|f| f.recovery_ms).collect();
        let mut out: Vec<u64> = fs.iter().filter_map(|f| f.outage_ms).collect();
        rec.sort_unstable();
        out.sort_unstable();
        let nearest_rank = lwcbench_stats::percentile_nearest_rank::<u64>;
        table.push(TableRow {
            fault: kind.as_str().into(),
            count: fs.len() as u32,
            readings_lost: fs.iter().map(|f| f.readings_lost).sum(),
            duplicates_stored: fs.iter().map(|f| f.duplicates_stored).sum(),
            recovery_p50_ms: nearest_rank(&rec, 50.0),
            recovery_max_ms: nearest_rank(&rec, 100.0),
            outage_max_ms: nearest_rank(&out, 100.0),
        });
        if fs.iter().any(|f| f.recovery_ms.is_none()) {
            v.notes.push(format!("a {} did not recover within 30 s", kind.as_str()));
        }
    }
    table.push(TableRow {
        fault: "none (before the first fault)".into(),
        count: 0,
        readings_lost: steady.0,
        duplicates_stored: steady.1,
        recovery_p50_ms: None,
        recovery_max_ms: None,
        outage_max_ms: None,
    });
    Ok(ChaosOutcome { verdict: v, faults, table, timeline: ctl.timeline, broker_port: ctl.port, session })
}

fn integrity(store: &str, session: &str) -> String {
    if store.starts_with("postgres") {
        // The table's UNIQUE constraint must be in place and hold (no duplicate key for this run).
        let q = "SELECT (SELECT COUNT(*) FROM pg_constraint WHERE conrelid = 'lwcbench_link_readings'::regclass
                   AND contype = 'u'),
                  (SELECT COUNT(*) FROM (SELECT 1 FROM lwcbench_link_readings WHERE run = $1
                   GROUP BY device, counter HAVING COUNT(*) > 1) d)";
        return match postgres::Client::connect(store, postgres::NoTls).and_then(|mut c| c.query_one(q, &[&session])) {
            Ok(r) if r.get::<_, i64>(0) >= 1 && r.get::<_, i64>(1) == 0 => "ok".into(),
            Ok(r) => format!("unique constraints {}, duplicate keys {}", r.get::<_, i64>(0), r.get::<_, i64>(1)),
            Err(e) => format!("cannot check: {e}"),
        };
    }
    let path = store.strip_prefix("sqlite:").unwrap_or(store);
    match rusqlite::Connection::open(path).and_then(|c| c.query_row("PRAGMA integrity_check", [], |r| r.get(0))) {
        Ok(s) => s,
        Err(e) => format!("cannot check: {e}"),
    }
}

/// The fault table and the run's proof as markdown.
pub fn markdown(o: &ChaosOutcome) -> String {
    let v = &o.verdict;
    let ms = |x: Option<u64>| x.map(|v| v.to_string()).unwrap_or_else(|| "—".into());
    let mut s = String::from("## Faults (lwcbench link chaos)\n\n");
    s += "| fault injected | count | readings lost | duplicates stored | recovery p50 (ms) | recovery max (ms) | outage max (ms) |\n";
    s += "|---|---:|---:|---:|---:|---:|---:|\n";
    for r in &o.table {
        s += &format!(
            "| {} | {} | {} | {} | {} | {} | {} |\n",
            r.fault,
            r.count,
            r.readings_lost,
            r.duplicates_stored,
            ms(r.recovery_p50_ms),
            ms(r.recovery_max_ms),
            ms(r.outage_max_ms)
        );
    }
    s += &format!(
        "\nReadings captured as sent: {}; stored rows: {}; lost: {}; stored twice: {}; (key, counter) \
         reused: {}; stored but never sent: {}; forged frames sent {} / stored {}; payload mismatches: {}; \
         store integrity: {}.\n",
        v.captured,
        v.stored_rows,
        v.lost,
        v.duplicates_stored,
        v.counter_reuse,
        v.not_captured_but_stored,
        v.forged_sent,
        v.forged_stored,
        v.mismatched,
        v.integrity_check
    );
    s += &format!(
        "Copies absorbed by the gateway (duplicates ignored by the store + refusals, as reported by \
         gateway processes; a SIGKILLed one loses its last 0.5 s): {} + {}. Device re-sends: {} after \
         reconnects, {} on restart, {} PUBACK timeouts. Run time {:.1} s.\n",
        v.gateway_duplicates_ignored,
        v.gateway_refused,
        v.device_ring_resent,
        v.device_resent_on_start,
        v.device_ack_timeouts,
        v.elapsed_s
    );
    for n in &v.notes {
        s += &format!("\nNote: {n}\n");
    }
    s
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
