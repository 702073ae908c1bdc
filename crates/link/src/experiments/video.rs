//! Video over the link: a camera device (device::camera) sends a clip's frames as version 2
//! parts over MQTT or UDP, the server (gateway::video) reassembles them, checks every frame bit
//! for bit against the same clip, and every frame sent ends as delivered or lost, by frame number.
//!
//! UDP with network conditions (`--loss`, …) runs the camera in namespace A and the server in
//! namespace B of a [`NetnsPair`] (root needed), the conditions applied by
//! `lwcbench_netimpair::conditions` on A's side as for sensor frames; only kernel mechanisms are
//! used here (netem, nftables, tbf), not the user-space relay.
use crate::wire::frame::Proto;
use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, RecvTimeoutError, SyncSender};
use std::sync::Arc;
use std::time::{Duration, Instant};

use lwcbench_engine::video::Clip;
use lwcbench_netimpair::netns::{ADDR_A, ADDR_B};
use lwcbench_netimpair::{conditions, Backend, Conditions, NetnsPair, Side};
use lwcbench_stats::percentile_nearest_rank as nearest_rank;
use rumqttc::{AsyncClient, Event, Packet, QoS};
use serde::Serialize;

use crate::clock::now_ns;
use crate::device::camera::{Camera, Shot};
use crate::device::counter::{open_session, DeviceCounter};
use crate::experiments::netcond::qdisc_drops;
use crate::gateway::checks::Refusal;
use crate::gateway::video::{replay_state_beside_key, LostWhy, PartEvent, Reassembler, ReplayState};
use crate::transport::broker::BrokerAddr;
use crate::transport::mqtt::{mqtt_connect, mqtt_options, topic};
use crate::wire::suite::{Keyed, Suite};

/// UDP payload of one datagram on a 1500-byte MTU path (1500 − 20 IPv4 − 8 UDP).
pub const UDP_PART_BYTES: usize = 1472;
/// Largest UDP payload (65,535 − 20 − 8).
pub const UDP_MAX_PART: usize = 65_507;
/// Frames in reassembly at a time.
pub const MAX_IN_FLIGHT: usize = 8;
/// Longest time between an accepted part and its counter in the replay state (while running);
/// after a crash the parts of the last interval are the exposure.
pub const SAVE_EVERY: Duration = Duration::from_millis(100);

/// How parts travel.
#[derive(Clone, Debug)]
pub enum VideoTransport {
    Mqtt(BrokerAddr),
    /// Datagrams on loopback, or between the namespaces with network conditions.
    Udp(Option<(Conditions, Backend)>),
}

impl VideoTransport {
    pub fn name(&self) -> &'static str {
        match self {
            VideoTransport::Mqtt(_) => "mqtt",
            VideoTransport::Udp(_) => "udp",
        }
    }
}

pub struct VideoConfig {
    pub suite: Suite,
    pub unauthenticated: bool,
    pub clip: Arc<Clip>,
    /// Frames sent; frame n is the clip's frame n mod its length.
    pub frames: u32,
    pub fps: f64,
    /// Most bytes of one part on the wire.
    pub part_bytes: usize,
    pub transport: VideoTransport,
    pub key_file: std::path::PathBuf,
    pub counter_file: std::path::PathBuf,
    pub counter_block: u64,
    pub window: u64,
    /// An incomplete frame is lost this long after its first part arrived.
    pub deadline: Duration,
    pub drain_timeout: Duration,
    pub session: String,
    pub device: u32,
    /// Messages sent on the transport's path to the server before the camera's first part, as
    /// an outsider would (tests: forged or replayed parts).
    pub inject: Vec<Vec<u8>>,
    /// The UDP receive buffer to ask for (tests: a tiny one overflows); none: 32 MiB.
    pub udp_recv_buffer: Option<usize>,
}

/// One frame's fate (video_frames.csv).
#[derive(Clone, Debug, Serialize)]
pub struct FrameRow {
    pub cipher: String,
    pub transport: &'static str,
    pub frame: u32,
    pub clip_frame: usize,
    pub parts: u32,
    pub parts_received: u32,
    pub payload_bytes: u64,
    pub wire_bytes: u64,
    pub overhead_bytes: u64,
    /// delivered, mismatch, lost_deadline, lost_evicted, lost_at_end, lost_no_part.
    pub status: &'static str,
    pub seal_us: f64,
    /// Capture → decrypted whole (delivered frames).
    pub latency_us: Option<f64>,
}

/// One run's totals (link_video.csv).
#[derive(Clone, Debug, Serialize)]
pub struct VideoSummary {
    pub cipher: String,
    pub protection: String,
    pub transport: &'static str,
    pub loss_pct: f64,
    pub clip: String,
    pub width: usize,
    pub height: usize,
    pub fps_target: f64,
    pub part_bytes: usize,
    pub frames_sent: u64,
    pub delivered: u64,
    pub lost: u64,
    pub mismatched: u64,
    pub parts_sent: u64,
    pub parts_received: u64,
    /// Sent − received.
    pub parts_dropped: u64,
    /// Drops a mechanism counted: injected + kernel + send errors.
    pub counted_drops: u64,
    /// By the network conditions: nftables rule, netem/tbf qdiscs.
    pub injected_drops: u64,
    /// By the kernel at the server's socket (receive buffer full), an outsider's datagrams
    /// included.
    pub kernel_drops: u64,
    pub send_errors: u64,
    /// Dropped parts no mechanism counted: dropped − counted when positive (0 when all is well).
    pub uncounted_drops: u64,
    /// Messages refused (never received parts), in total and per reason.
    pub refused: u64,
    pub refused_malformed: u64,
    pub refused_unknown_device: u64,
    pub refused_wrong_cipher: u64,
    pub refused_replay: u64,
    pub refused_too_old: u64,
    pub refused_bad_tag: u64,
    pub ignored_parts: u64,
    pub frames_per_s: f64,
    pub latency_p50_us: f64,
    pub latency_p90_us: f64,
    pub latency_p99_us: f64,
    pub latency_max_us: f64,
    pub seal_p50_us: f64,
    pub parts_per_frame: f64,
    pub payload_bytes_per_frame: f64,
    pub overhead_bytes_per_frame: f64,
    pub overhead_pct: f64,
}

pub struct VideoRun {
    pub frames: Vec<FrameRow>,
    pub summary: VideoSummary,
    /// What the path was (for run.json).
    pub path: String,
    pub applied: Vec<lwcbench_netimpair::Applied>,
}

/// The server: reassembly and the bit-for-bit check, per frame number.
struct Server {
    re: Reassembler,
    clip: Arc<Clip>,
    delivered_ns: Vec<Option<u64>>,
    mismatch: Vec<bool>,
    lost: Vec<Option<LostWhy>>,
    parts_got: Vec<u32>,
    /// Authentic parts taken (refused ones never count: 100 forged parts must not end the wait
    /// for the camera's parts).
    taken: Arc<AtomicU64>,
    /// The key's video replay state; the session's highest accepted counter is recorded there.
    replay: Option<ReplayState>,
    /// The key's accepted marks (`KEY_FILE.accepted`, protocol `video`), kept equal to it.
    marks: Option<(PathBuf, String)>,
    saved_at: Instant,
    save_error: Option<String>,
}

impl Server {
    fn slot(&self, n: u32) -> Option<usize> {
        ((n as usize) < self.delivered_ns.len()).then_some(n as usize)
    }

    fn mark_lost(&mut self, n: u32, why: LostWhy) {
        if let Some(i) = self.slot(n) {
            self.lost[i] = Some(why);
        }
    }

    fn take(&mut self, msg: &[u8]) {
        let mut lost = Vec::new();
        let ev = self.re.push(msg, now_ns(), &mut lost);
        let done = now_ns();
        for (n, why) in lost {
            self.mark_lost(n, why);
        }
        match ev {
            PartEvent::Stored(n) | PartEvent::Ignored(n) => {
                if let Some(i) = self.slot(n) {
                    self.parts_got[i] += 1;
                }
            }
            PartEvent::Complete(f) => {
                if let Some(i) = self.slot(f.number) {
                    self.parts_got[i] += 1;
                    let want = self.clip.frame(i % self.clip.frames);
                    self.mismatch[i] = f.data != want;
                    self.delivered_ns[i] = Some(done);
                }
            }
            PartEvent::Refused(_) => return,
        }
        self.taken.fetch_add(1, Ordering::Release);
    }

    fn tick(&mut self) {
        for n in self.re.expire(now_ns()) {
            self.mark_lost(n, LostWhy::Deadline);
        }
        if self.saved_at.elapsed() >= SAVE_EVERY {
            self.save();
        }
    }

    /// Record the highest accepted counter (the first failure is kept and ends the run).
    fn save(&mut self) {
        self.saved_at = Instant::now();
        let (Some(st), Some(top)) = (self.replay.as_mut(), self.re.top()) else { return };
        if let Err(e) = st.save(self.re.device(), top) {
            self.save_error.get_or_insert(e);
        }
        if let Some((path, fp)) = &self.marks {
            let up = [((Proto::Video, self.re.device()), top)].into_iter().collect();
            if let Err(e) = crate::gateway::accepted::merge(path, fp, &up) {
                self.save_error.get_or_insert(e);
            }
        }
    }

    /// Take messages until `stop` is set and nothing is waiting, checking deadlines meanwhile.
    fn serve(mut self, rx: Receiver<Vec<u8>>, stop: Arc<AtomicBool>) -> Server {
        loop {
            match rx.recv_timeout(Duration::from_millis(10)) {
                Ok(m) => self.take(&m),
                Err(RecvTimeoutError::Timeout) if stop.load(Ordering::Acquire) => break,
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break,
            }
            self.tick();
        }
        for n in self.re.end() {
            self.mark_lost(n, LostWhy::AtEnd);
        }
        self.save();
        self
    }
}

/// Bytes the queue between the transport and the server may hold: bounded, so a slow server
/// slows the receiver (MQTT) or lets the socket buffer overflow (UDP, counted) instead of growing
/// memory. A message longer than a part may be is not copied (an empty one, refused as malformed,
/// stands for it), so the queue holds this many bytes at most.
const QUEUE_BYTES: usize = 16 << 20;

/// The message queued for a received payload of `len` bytes.
fn queued(payload: &[u8], part_bytes: usize) -> Vec<u8> {
    if payload.len() > part_bytes {
        Vec::new()
    } else {
        payload.to_vec()
    }
}

fn us(ns: u64) -> f64 {
    ns as f64 / 1e3
}

/// Send the clip over the link once and account for every frame.
pub fn run(cfg: &VideoConfig) -> Result<VideoRun, String> {
    if !(cfg.fps.is_finite() && cfg.fps > 0.0) {
        return Err(format!("--fps: {} is not a positive frame rate", cfg.fps));
    }
    if cfg.frames == 0 {
        return Err("--frames: at least one frame is needed".into());
    }
    let tag = cfg.suite.tag_len(cfg.unauthenticated);
    let parts_per_frame =
        crate::wire::video::part_count(cfg.clip.frame_bytes, cfg.part_bytes, cfg.suite.random_nonce_len(), tag)?;
    let (master, counters) = open_session(&cfg.key_file, &cfg.counter_file, cfg.counter_block)?;
    crate::device::provision::refuse_provisioned(
        &cfg.key_file,
        &master,
        crate::wire::frame::Family::Video,
        &[cfg.device],
    )?;
    // The session holds the counter state's lock, so no other process writes the replay state.
    let replay = ReplayState::open(&replay_state_beside_key(&cfg.key_file), &master)?;
    let block = counters.reserve(cfg.device)?;
    // The key's accepted marks say the same for video as KEY.video-replay; the higher one holds.
    let marks_path = crate::gateway::accepted::beside_key(&cfg.key_file);
    let mark = crate::gateway::accepted::read(&marks_path, Some(&master.fingerprint()))?
        .and_then(|m| m.get(&(Proto::Video, cfg.device)).copied());
    let floor = match replay.accepted(cfg.device) {
        Some(top) => Some(top),
        // Nothing recorded, but the key has sealed before (its counter state is older than this
        // session): any counter reserved before this session's block may be a sealed part.
        None if counters.existed() => block.start.checked_sub(1),
        None => None,
    }
    .max(mark);
    let key = master.cipher_key(Proto::Video, cfg.device, cfg.suite.id, cfg.suite.key_len());
    let mut cam = Camera {
        device: cfg.device,
        keyed: Keyed::new(&cfg.suite, &key, Proto::Video, cfg.unauthenticated)?,
        counter: DeviceCounter::with_block(&counters, cfg.device, block),
        part_bytes: cfg.part_bytes,
        unauthenticated: cfg.unauthenticated,
    };
    let n = cfg.frames as usize;
    let taken = Arc::new(AtomicU64::new(0));
    let mut re = Reassembler::new(
        cfg.device,
        Keyed::new(&cfg.suite, &key, Proto::Video, cfg.unauthenticated)?,
        cfg.unauthenticated,
        cfg.window,
        MAX_IN_FLIGHT,
        cfg.deadline.as_nanos() as u64,
    )?;
    re.set_floor(floor);
    let server = Server {
        re,
        clip: cfg.clip.clone(),
        delivered_ns: vec![None; n],
        mismatch: vec![false; n],
        lost: vec![None; n],
        parts_got: vec![0; n],
        taken: taken.clone(),
        replay: Some(replay),
        marks: Some((marks_path, master.fingerprint())),
        saved_at: Instant::now(),
        save_error: None,
    };
    drop(key);
    let (tx, rx) = sync_channel::<Vec<u8>>((QUEUE_BYTES / cfg.part_bytes).max(16));
    let stop = Arc::new(AtomicBool::new(false));
    let st = stop.clone();
    let server_thread = std::thread::Builder::new()
        .name("video-server".into())
        .spawn(move || server.serve(rx, st))
        .map_err(|e| format!("cannot start the video server thread: {e}"))?;
    let interval = Some(Duration::from_secs_f64(1.0 / cfg.fps));
    let clip = cfg.clip.clone();
    let frame = |i: u32| clip.frame(i as usize % clip.frames);

    let shoot = |send: PartSink<'_>| cam.run(cfg.frames, interval, frame, send);
    let result = match &cfg.transport {
        VideoTransport::Mqtt(b) => run_mqtt(cfg, b, shoot, tx, &taken),
        VideoTransport::Udp(net) => run_udp(cfg, net.as_ref(), shoot, tx, &taken),
    };
    stop.store(true, Ordering::Release);
    let server = server_thread.join().map_err(|_| "the video server thread panicked".to_string())?;
    if let Some(e) = &server.save_error {
        return Err(e.clone());
    }
    let (shots, counted, path, applied, timed_out) = result?;
    if timed_out && matches!(cfg.transport, VideoTransport::Mqtt(_)) {
        return Err(format!(
            "drain timeout: {} of {} video parts arrived within --drain-timeout over MQTT",
            taken.load(Ordering::Acquire),
            shots.iter().map(|s| u64::from(s.parts)).sum::<u64>()
        ));
    }
    Ok(account(cfg, &cam, &shots, &server, counted, parts_per_frame, path, applied))
}

type Sent = (Vec<Shot>, Drops, String, Vec<lwcbench_netimpair::Applied>, bool);

/// Parts lost where a mechanism counted them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Drops {
    /// By the network conditions (`--loss`, …): the nftables rule and the qdiscs.
    pub injected: u64,
    /// By the kernel at the server's socket: its receive buffer was full (the socket's own drop
    /// counter; it counts any datagram sent there, an outsider's too).
    pub kernel: u64,
    /// Sends that failed at the camera.
    pub send_errors: u64,
}

impl Drops {
    pub fn total(&self) -> u64 {
        self.injected + self.kernel + self.send_errors
    }
}

/// After the camera: wait until every part sent was taken, or (UDP) nothing came for `idle`,
/// or the drain timeout.
fn drain(sent: u64, taken: &AtomicU64, idle: Option<Duration>, timeout: Duration) -> bool {
    let deadline = Instant::now() + timeout;
    let mut last = (taken.load(Ordering::Acquire), Instant::now());
    loop {
        let t = taken.load(Ordering::Acquire);
        if t >= sent {
            return false;
        }
        if t != last.0 {
            last = (t, Instant::now());
        } else if idle.is_some_and(|i| last.1.elapsed() > i) {
            return false;
        }
        if Instant::now() >= deadline {
            return true;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Where the camera hands each part (the transport).
type PartSink<'s> = &'s mut dyn FnMut(Vec<u8>) -> Result<(), String>;

fn run_mqtt(
    cfg: &VideoConfig,
    b: &BrokerAddr,
    shoot: impl FnOnce(PartSink) -> Result<Vec<Shot>, String>,
    tx: SyncSender<Vec<u8>>,
    taken: &AtomicU64,
) -> Result<Sent, String> {
    let rt = crate::transport::runtime()?;
    let t = topic(&cfg.session, cfg.device);
    let (client, mut ev) = AsyncClient::new(mqtt_options(&format!("lwcbench-video-srv-{}", cfg.session), b), 64);
    let (ready_tx, ready_rx) = std::sync::mpsc::channel::<Result<(), String>>();
    let sub = t.clone();
    let sub_client = client.clone();
    let broker = b.describe();
    let part_bytes = cfg.part_bytes;
    let listener = rt.spawn(async move {
        let mut ready = Some(ready_tx);
        loop {
            match ev.poll().await {
                Ok(Event::Incoming(Packet::ConnAck(_))) => {
                    if sub_client.subscribe(sub.clone(), QoS::AtLeastOnce).await.is_err() {
                        return;
                    }
                }
                Ok(Event::Incoming(Packet::SubAck(_))) => {
                    if let Some(r) = ready.take() {
                        let _ = r.send(Ok(()));
                    }
                }
                Ok(Event::Incoming(Packet::Publish(p))) => {
                    let m = queued(&p.payload, part_bytes);
                    let tx = tx.clone();
                    if tokio::task::block_in_place(move || tx.send(m)).is_err() {
                        return;
                    }
                }
                Ok(_) => {}
                Err(e) => {
                    if let Some(r) = ready.take() {
                        let _ = r.send(Err(format!("--broker: cannot reach {broker}: {e}")));
                        return;
                    }
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        }
    });
    let up = ready_rx.recv_timeout(Duration::from_secs(5));
    if !matches!(up, Ok(Ok(()))) {
        listener.abort();
        return Err(match up {
            Ok(Err(e)) => e,
            _ => format!("--broker: no subscription at {} within 5 s", b.describe()),
        });
    }
    let conn = rt.block_on(mqtt_connect(&format!("lwcbench-video-cam-{}", cfg.session), b))?;
    let pubc = conn.client.clone();
    for m in &cfg.inject {
        rt.block_on(pubc.publish(t.clone(), QoS::AtLeastOnce, false, m.clone()))
            .map_err(|e| format!("mqtt publish: {e}"))?;
    }
    let shots = shoot(&mut |p| {
        rt.block_on(pubc.publish(t.clone(), QoS::AtLeastOnce, false, p)).map_err(|e| format!("mqtt publish: {e}"))
    });
    let shots = match shots {
        Ok(s) => s,
        Err(e) => {
            listener.abort();
            conn.task.abort();
            return Err(e);
        }
    };
    let sent: u64 = shots.iter().map(|s| u64::from(s.parts)).sum();
    let timed_out = drain(sent, taken, None, cfg.drain_timeout);
    listener.abort();
    conn.task.abort();
    rt.shutdown_timeout(Duration::from_secs(1));
    Ok((shots, Drops::default(), format!("camera -> MQTT QoS 1 ({}) -> server", b.describe()), Vec::new(), timed_out))
}

/// `SO_MEMINFO` (asm-generic/socket.h; the `libc` crate exports only its offsets).
const SO_MEMINFO: libc::c_int = 55;

/// Datagrams the kernel dropped at `sock` since it was opened (its receive buffer full, a bad
/// checksum): the socket's own drop counter, `SK_MEMINFO_DROPS` of `SO_MEMINFO` (Linux 4.12+).
/// Unlike `SO_RXQ_OVFL`, which reports it with the next datagram read, this includes drops
/// after the last datagram.
pub(crate) fn socket_drops(sock: &UdpSocket) -> Option<u64> {
    use std::os::fd::AsRawFd;
    let mut info = [0u32; libc::SK_MEMINFO_DROPS as usize + 1];
    let mut len = std::mem::size_of_val(&info) as libc::socklen_t;
    // SAFETY: valid descriptor; the kernel writes at most `len` bytes into `info` and sets `len`.
    let r =
        unsafe { libc::getsockopt(sock.as_raw_fd(), libc::SOL_SOCKET, SO_MEMINFO, info.as_mut_ptr().cast(), &mut len) };
    (r == 0 && len as usize == std::mem::size_of_val(&info)).then(|| u64::from(info[libc::SK_MEMINFO_DROPS as usize]))
}

fn bind(pair: Option<&NetnsPair>, side: Side, ip: Ipv4Addr) -> Result<UdpSocket, String> {
    let b = || UdpSocket::bind((ip, 0));
    let s = match pair {
        Some(p) => p.in_ns(side, b).map_err(|e| e.to_string())?,
        None => b(),
    };
    s.map_err(|e| format!("udp: cannot bind {ip}: {e}"))
}

/// Send probe datagrams from `cam` to `to` (the `srv` socket) until one arrives, for at most
/// 10 s, then discard the probes still queued; an error names the path that never carried one.
fn wait_path(cam: &UdpSocket, srv: &UdpSocket, to: SocketAddr) -> Result<(), String> {
    const PROBE: &[u8] = b"lwcbench video path probe";
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut buf = [0u8; 64];
    loop {
        let _ = cam.send_to(PROBE, to);
        // srv has a 20 ms read timeout.
        if srv.recv_from(&mut buf).is_ok_and(|(n, _)| &buf[..n] == PROBE) {
            break;
        }
        if Instant::now() > deadline {
            return Err(format!("udp: the camera's path to {to} carried no datagram within 10 s"));
        }
    }
    srv.set_nonblocking(true).map_err(|e| format!("udp: {e}"))?;
    while srv.recv_from(&mut buf).is_ok() {}
    srv.set_nonblocking(false).map_err(|e| format!("udp: {e}"))
}

fn run_udp(
    cfg: &VideoConfig,
    net: Option<&(Conditions, Backend)>,
    shoot: impl FnOnce(PartSink) -> Result<Vec<Shot>, String>,
    tx: SyncSender<Vec<u8>>,
    taken: &AtomicU64,
) -> Result<Sent, String> {
    let pair = match net {
        Some(_) => Some(NetnsPair::create().map_err(|e| e.to_string())?),
        None => None,
    };
    let mut applied = Vec::new();
    if let (Some(p), Some((c, backend))) = (&pair, net) {
        let plan = conditions::apply(p, Side::A, c, conditions::Transport::Udp, *backend).map_err(|e| e.to_string())?;
        if !plan.user_space.is_none() {
            return Err(
                "--video: delay, jitter, reordering and duplication need the kernel's netem here (this kernel \
                 lacks it or --net-backend fallback was given); --loss and --bandwidth work without it"
                    .into(),
            );
        }
        applied = plan.applied;
    }
    let (ip_srv, ip_cam) = if pair.is_some() { (ADDR_B, ADDR_A) } else { (Ipv4Addr::LOCALHOST, Ipv4Addr::LOCALHOST) };
    let srv = bind(pair.as_ref(), Side::B, ip_srv)?;
    // Room for a few whole frames' bursts of datagrams while the receiver thread waits for a core.
    let rcvbuf = cfg.udp_recv_buffer.map_or(32 << 20, |b| b.min(i32::MAX as usize) as i32);
    lwcbench_netimpair::relay::grow_recv_buffer(&srv, rcvbuf);
    srv.set_read_timeout(Some(Duration::from_millis(20))).map_err(|e| format!("udp: {e}"))?;
    let to: SocketAddr = srv.local_addr().map_err(|e| format!("udp: {e}"))?;
    let cam_sock = bind(pair.as_ref(), Side::A, ip_cam)?;
    // A new veth pair carries nothing until the kernel's link watch activates its queues (up to
    // about a second after it is set up, later on a busy machine): datagrams sent before then
    // vanish uncounted. So one probe must cross first, and the injected-loss counters start
    // after it.
    let mut injected0 = 0;
    if let Some(p) = &pair {
        wait_path(&cam_sock, &srv, to)?;
        injected0 = conditions::nft_dropped(p, Side::B).map_err(|e| e.to_string())? + qdisc_drops(p, Side::A);
    }
    let kernel0 = socket_drops(&srv).unwrap_or(0);
    let stop = Arc::new(AtomicBool::new(false));
    let st = stop.clone();
    let part_bytes = cfg.part_bytes;
    let receiver = std::thread::Builder::new()
        .name("video-udp".into())
        .spawn(move || {
            let mut buf = vec![0u8; 65_536];
            let mut open = true;
            while open && !st.load(Ordering::Acquire) {
                if let Ok((len, _)) = srv.recv_from(&mut buf) {
                    open = tx.send(queued(&buf[..len], part_bytes)).is_ok();
                }
            }
            // What still waits in the socket buffer arrived: hand it over, or closing the socket
            // would lose it uncounted (a receiver starved of a core leaves a lot there). Bounded
            // in time: an outsider may keep sending.
            let until = Instant::now() + Duration::from_secs(2);
            if open && srv.set_nonblocking(true).is_ok() {
                while Instant::now() < until {
                    let Ok((len, _)) = srv.recv_from(&mut buf) else { break };
                    if tx.send(queued(&buf[..len], part_bytes)).is_err() {
                        break;
                    }
                }
            }
            socket_drops(&srv).unwrap_or(0).saturating_sub(kernel0)
        })
        .map_err(|e| format!("cannot start the UDP receiver thread: {e}"))?;
    let mut send_errors = 0u64;
    for m in &cfg.inject {
        let _ = cam_sock.send_to(m, to);
    }
    let shots = shoot(&mut |p| {
        // A full socket buffer is loss on this transport, counted, not an error.
        if cam_sock.send_to(&p, to).is_err() {
            send_errors += 1;
        }
        Ok(())
    });
    let sent: u64 = shots.as_ref().map_or(0, |s| s.iter().map(|s| u64::from(s.parts)).sum());
    // With loss nothing may come for a while: wait past the frame deadline before giving up.
    let idle = cfg.deadline.max(Duration::from_millis(500));
    let timed_out = shots.is_ok() && drain(sent, taken, Some(idle), cfg.drain_timeout);
    stop.store(true, Ordering::Release);
    let kernel = receiver.join().unwrap_or(0);
    let shots = shots?;
    // The namespace's UDP InErrors are not added: they count the socket's drops a second time.
    let injected = match &pair {
        Some(p) => (conditions::nft_dropped(p, Side::B).map_err(|e| e.to_string())? + qdisc_drops(p, Side::A))
            .saturating_sub(injected0),
        None => 0,
    };
    let counted = Drops { injected, kernel, send_errors };
    let path = match &pair {
        Some(_) => format!("camera (ns A, {ADDR_A}) -> UDP -> server (ns B, {to})"),
        None => format!("camera -> UDP on loopback -> server ({to})"),
    };
    if let Some(p) = pair {
        p.teardown().map_err(|e| e.to_string())?;
    }
    Ok((shots, counted, path, applied, timed_out))
}

#[allow(clippy::too_many_arguments)]
fn account(
    cfg: &VideoConfig,
    cam: &Camera,
    shots: &[Shot],
    s: &Server,
    counted: Drops,
    parts_per_frame: usize,
    path: String,
    applied: Vec<lwcbench_netimpair::Applied>,
) -> VideoRun {
    let cipher = cfg.suite.name();
    let transport = cfg.transport.name();
    let mut rows = Vec::with_capacity(shots.len());
    let mut lat = Vec::new();
    let mut seal = Vec::new();
    for (i, sh) in shots.iter().enumerate() {
        let status = match (s.delivered_ns[i], s.lost[i]) {
            (Some(_), _) if s.mismatch[i] => "mismatch",
            (Some(_), _) => "delivered",
            (None, Some(LostWhy::Deadline)) => "lost_deadline",
            (None, Some(LostWhy::Evicted)) => "lost_evicted",
            (None, Some(LostWhy::AtEnd)) => "lost_at_end",
            (None, None) => "lost_no_part",
        };
        let latency = s.delivered_ns[i].map(|d| d.saturating_sub(sh.capture_ns));
        if let Some(l) = latency {
            lat.push(l);
        }
        seal.push(sh.seal_ns);
        rows.push(FrameRow {
            cipher: cipher.clone(),
            transport,
            frame: i as u32,
            clip_frame: i % cfg.clip.frames,
            parts: sh.parts,
            parts_received: s.parts_got[i],
            payload_bytes: sh.payload,
            wire_bytes: sh.wire,
            overhead_bytes: cam.overhead(sh.parts),
            status,
            seal_us: us(sh.seal_ns),
            latency_us: latency.map(us),
        });
    }
    lat.sort_unstable();
    seal.sort_unstable();
    let pct = |v: &[u64], p: f64| nearest_rank(v, p).map_or(0.0, us);
    let delivered = rows.iter().filter(|r| r.status == "delivered").count() as u64;
    let mismatched = rows.iter().filter(|r| r.status == "mismatch").count() as u64;
    let parts_sent: u64 = rows.iter().map(|r| u64::from(r.parts)).sum();
    let parts_received: u64 = rows.iter().map(|r| u64::from(r.parts_received)).sum();
    let first = shots.first().map_or(0, |s| s.capture_ns);
    let last = s.delivered_ns.iter().flatten().max().copied().unwrap_or(first);
    let secs = (last.saturating_sub(first)) as f64 / 1e9;
    let nf = rows.len().max(1) as f64;
    let payload = rows.iter().map(|r| r.payload_bytes).sum::<u64>() as f64 / nf;
    let overhead = rows.iter().map(|r| r.overhead_bytes).sum::<u64>() as f64 / nf;
    let loss_pct = match &cfg.transport {
        VideoTransport::Udp(Some((c, _))) => c.loss_pct,
        _ => 0.0,
    };
    let summary = VideoSummary {
        cipher,
        protection: cfg.suite.protection(cfg.unauthenticated).to_string(),
        transport,
        loss_pct,
        clip: cfg.clip.name.clone(),
        width: cfg.clip.width,
        height: cfg.clip.height,
        fps_target: cfg.fps,
        part_bytes: cfg.part_bytes,
        frames_sent: rows.len() as u64,
        delivered,
        lost: rows.len() as u64 - delivered - mismatched,
        mismatched,
        parts_sent,
        parts_received,
        parts_dropped: parts_sent.saturating_sub(parts_received),
        counted_drops: counted.total(),
        injected_drops: counted.injected,
        kernel_drops: counted.kernel,
        send_errors: counted.send_errors,
        uncounted_drops: parts_sent.saturating_sub(parts_received).saturating_sub(counted.total()),
        refused: s.re.tally.refused_total(),
        refused_malformed: s.re.tally.count(Refusal::Malformed),
        refused_unknown_device: s.re.tally.count(Refusal::UnknownDevice),
        refused_wrong_cipher: s.re.tally.count(Refusal::WrongCipher),
        refused_replay: s.re.tally.count(Refusal::Replay),
        refused_too_old: s.re.tally.count(Refusal::TooOld),
        refused_bad_tag: s.re.tally.count(Refusal::BadTag),
        ignored_parts: s.re.ignored,
        frames_per_s: if secs > 0.0 { delivered as f64 / secs } else { 0.0 },
        latency_p50_us: pct(&lat, 50.0),
        latency_p90_us: pct(&lat, 90.0),
        latency_p99_us: pct(&lat, 99.0),
        latency_max_us: lat.last().copied().map_or(0.0, us),
        seal_p50_us: pct(&seal, 50.0),
        parts_per_frame: parts_per_frame as f64,
        payload_bytes_per_frame: payload,
        overhead_bytes_per_frame: overhead,
        overhead_pct: if payload > 0.0 { 100.0 * overhead / payload } else { 0.0 },
    };
    VideoRun { frames: rows, summary, path, applied }
}

/// The "Video over the link" section of summary.md.
pub fn markdown(rows: &[VideoSummary]) -> String {
    let mut s = String::from(
        "\n## Video over the link\n\nEvery frame sent is delivered (bit for bit equal to the source frame) or lost \
         (one missing part loses the frame); per frame in video_frames.csv. Latency = capture → decrypted whole.\n\n\
         Parts dropped = injected (network conditions) + kernel (the server's socket buffer) + send errors + \
         uncounted; refused messages (forged, replayed, …) are never received parts.\n\n\
         | cipher | transport | loss % | frames sent | delivered | lost | parts sent | parts dropped | kernel drops | \
         uncounted | refused | frames/s | p50 | p99 | overhead B/frame | overhead % |\n\
         |---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for r in rows {
        s += &format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.1} | {} | {} | {:.0} | {:.2} |\n",
            r.cipher,
            r.transport,
            r.loss_pct,
            r.frames_sent,
            r.delivered,
            r.lost,
            r.parts_sent,
            r.parts_dropped,
            r.kernel_drops,
            r.uncounted_drops,
            r.refused,
            r.frames_per_s,
            crate::units::ms3(r.latency_p50_us),
            crate::units::ms3(r.latency_p99_us),
            r.overhead_bytes_per_frame,
            r.overhead_pct
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::keys::MasterKey;
    use crate::wire::suite;
    use crate::wire::video::seal_frame;

    /// `frames` 320×240 4:2:0 frames (115,200 B) of pseudo-random bytes (xorshift32).
    fn clip(frames: usize) -> Arc<Clip> {
        let mut x = 0x9E37_79B9u32;
        let data = (0..frames * 115_200)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                x as u8
            })
            .collect();
        Arc::new(Clip {
            name: "noise".into(),
            path: "noise.y4m".into(),
            width: 320,
            height: 240,
            colourspace: "420jpeg".into(),
            fps: (25, 1),
            frame_bytes: 115_200,
            frames,
            data: Arc::new(data),
        })
    }

    fn ascon() -> Suite {
        suite::find("Ascon-AEAD128").unwrap()
    }

    /// A run of `frames` frames over UDP on loopback with the key `dir/k` (made by the first run).
    fn udp(dir: &std::path::Path, frames: u32) -> VideoConfig {
        VideoConfig {
            suite: ascon(),
            unauthenticated: false,
            clip: clip(2),
            frames,
            fps: 100.0,
            part_bytes: UDP_PART_BYTES,
            transport: VideoTransport::Udp(None),
            key_file: dir.join("k"),
            counter_file: dir.join("k.counters"),
            counter_block: 1024,
            window: 1024,
            deadline: Duration::from_secs(1),
            drain_timeout: Duration::from_secs(30),
            session: "test".into(),
            device: 0,
            inject: Vec::new(),
            udp_recv_buffer: None,
        }
    }

    /// Frame 0 of `clip` sealed for device 0 under `key_file` with counters from `first`: the
    /// same bytes a session whose camera started at `first` sent.
    fn sealed(key_file: &std::path::Path, clip: &Clip, first: u64) -> Vec<Vec<u8>> {
        let s = ascon();
        let key = MasterKey::read(key_file).unwrap().cipher_key(Proto::Video, 0, s.id, s.key_len());
        let mut k = Keyed::new(&s, &key, Proto::Video, false).unwrap();
        let mut c = first;
        seal_frame(&mut k, 0, 0, clip.frame(0), UDP_PART_BYTES, false, || {
            c += 1;
            Ok(c - 1)
        })
        .unwrap()
    }

    /// Issue 36 item 4: refused parts must not count toward the parts the run waits for, or
    /// 100 forged parts end the drain before the camera's last parts arrived.
    #[test]
    fn refused_parts_do_not_count_as_arrived() {
        let s = ascon();
        let key = [5u8; 16];
        let taken = Arc::new(AtomicU64::new(0));
        let mut srv = Server {
            re: Reassembler::new(
                0,
                Keyed::new(&s, &key, Proto::Video, false).unwrap(),
                false,
                1024,
                MAX_IN_FLIGHT,
                u64::MAX,
            )
            .unwrap(),
            clip: clip(1),
            delivered_ns: vec![None; 1],
            mismatch: vec![false; 1],
            lost: vec![None; 1],
            parts_got: vec![0; 1],
            taken: taken.clone(),
            replay: None,
            marks: None,
            saved_at: Instant::now(),
            save_error: None,
        };
        let mut c = 0u64;
        let parts = seal_frame(
            &mut Keyed::new(&s, &key, Proto::Video, false).unwrap(),
            0,
            0,
            srv.clip.frame(0),
            1472,
            false,
            || {
                c += 1;
                Ok(c - 1)
            },
        )
        .unwrap();
        // 81 parts (hand count in wire/video.rs); 100 forgeries of part 0 with other counters
        assert_eq!(parts.len(), 81);
        for i in 0..100u64 {
            let mut f = parts[0].clone();
            f[7..15].copy_from_slice(&(1000 + i).to_be_bytes());
            srv.take(&f);
        }
        assert_eq!(taken.load(Ordering::Acquire), 0, "forged parts counted as arrived");
        for p in &parts {
            srv.take(p);
        }
        assert_eq!(taken.load(Ordering::Acquire), 81);
        assert_eq!(srv.re.tally.count(Refusal::BadTag), 100);
        assert_eq!(srv.parts_got[0], 81);
        assert!(srv.delivered_ns[0].is_some() && !srv.mismatch[0]);
    }

    /// Issue 36 items 5 and 4: a part recorded in an earlier session under the same key is
    /// refused in a later one (whose window starts empty), a forged one too, and neither is a
    /// received part.
    #[test]
    fn parts_of_an_earlier_session_are_refused_as_replays() {
        let d = tempfile::tempdir().unwrap();
        let c1 = udp(d.path(), 2);
        let r1 = run(&c1).unwrap();
        assert_eq!((r1.summary.delivered, r1.summary.parts_sent), (2, 162));
        // The first session's frame 0 byte for byte: a new key's counters start at 0.
        let replayed = sealed(&c1.key_file, &c1.clip, 0);
        // and 100 forgeries: part 0 with counters above anything sealed (its tag no longer fits)
        let forged: Vec<Vec<u8>> = (0..100u64)
            .map(|i| {
                let mut f = replayed[0].clone();
                f[7..15].copy_from_slice(&(1 << 40 | i).to_be_bytes());
                f
            })
            .collect();
        let mut c2 = udp(d.path(), 2);
        c2.inject = [forged, replayed].concat();
        let s = run(&c2).unwrap().summary;
        assert_eq!((s.frames_sent, s.delivered, s.lost), (2, 2, 0));
        assert_eq!((s.parts_sent, s.parts_received, s.parts_dropped, s.uncounted_drops), (162, 162, 0, 0));
        assert_eq!((s.refused, s.refused_replay, s.refused_bad_tag, s.ignored_parts), (181, 81, 100, 0));
        // Session 1 accepted counters 0..=161 (2 × 81 parts), session 2 1024..=1185 (its block).
        let state = std::fs::read_to_string(d.path().join("k.video-replay")).unwrap();
        assert!(state.ends_with("\ndevice 0 accepted 1185\n"), "{state}");
    }

    /// The video server keeps the key's accepted marks equal to KEY.video-replay (session 1:
    /// counters 0..=161 for 2 frames of 81 parts), and takes the higher of the two as its floor:
    /// with `video 0 1100` written in KEY.accepted by hand, session 2's parts (counters
    /// 1024..=1104, its block) up to 1100 are refused as replays, so its one frame is lost.
    #[test]
    fn the_accepted_marks_are_the_video_floor_too() {
        let d = tempfile::tempdir().unwrap();
        assert_eq!(run(&udp(d.path(), 2)).unwrap().summary.delivered, 2);
        let fp = MasterKey::read(&d.path().join("k")).unwrap().fingerprint();
        let acc = d.path().join("k.accepted");
        let text = std::fs::read_to_string(&acc).unwrap();
        assert_eq!(text, format!("lwcbench-link-accepted v1\nkey {fp}\nvideo 0 161\n"));
        std::fs::write(&acc, text.replace("video 0 161", "video 0 1100")).unwrap();
        let s = run(&udp(d.path(), 1)).unwrap().summary;
        assert_eq!((s.delivered, s.refused_replay, s.parts_received), (0, 77, 4));
    }

    /// Without a replay state, a key that has sealed before (its counter state exists) refuses
    /// every counter below this session's block: here the first session's parts.
    #[test]
    fn a_missing_replay_state_refuses_everything_the_key_may_have_sealed() {
        let d = tempfile::tempdir().unwrap();
        let c1 = udp(d.path(), 1);
        assert_eq!(run(&c1).unwrap().summary.delivered, 1);
        std::fs::remove_file(d.path().join("k.video-replay")).unwrap();
        let mut c2 = udp(d.path(), 1);
        c2.inject = sealed(&c1.key_file, &c1.clip, 0);
        // counters 900..=980: reserved by the first session (its block 0..1024), never sent
        c2.inject.extend(sealed(&c1.key_file, &c1.clip, 900));
        let s = run(&c2).unwrap().summary;
        assert_eq!((s.delivered, s.parts_received, s.refused_replay, s.refused), (1, 81, 162, 162));
    }

    /// The socket's drop counter: datagrams sent to a full receive buffer (nothing read yet) are
    /// the ones missing when it is read out.
    #[test]
    fn socket_drops_count_what_a_full_buffer_dropped() {
        let rx = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        lwcbench_netimpair::relay::grow_recv_buffer(&rx, 4096);
        let tx = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        assert_eq!(socket_drops(&rx), Some(0));
        for _ in 0..200 {
            tx.send_to(&[0u8; 1000], rx.local_addr().unwrap()).unwrap();
        }
        rx.set_nonblocking(true).unwrap();
        let mut got = 0u64;
        while rx.recv_from(&mut [0u8; 2000]).is_ok() {
            got += 1;
        }
        let dropped = socket_drops(&rx).unwrap();
        assert!(got > 0 && dropped > 0, "got {got}, dropped {dropped}");
        assert_eq!(got + dropped, 200);
    }

    /// Issue 36 item 10: a receiver whose socket buffer overflows (a tiny SO_RCVBUF and
    /// bursts of 81 datagrams) loses parts, and every one is counted as a kernel drop.
    #[test]
    fn kernel_receive_drops_are_counted() {
        for _ in 0..3 {
            let d = tempfile::tempdir().unwrap();
            let mut c = udp(d.path(), 20);
            c.fps = 1000.0;
            c.deadline = Duration::from_millis(200);
            c.udp_recv_buffer = Some(4096);
            let s = run(&c).unwrap().summary;
            assert_eq!(s.parts_sent, 20 * 81);
            assert_eq!(s.parts_dropped, s.counted_drops, "{s:?}");
            assert_eq!((s.parts_dropped, s.uncounted_drops, s.injected_drops), (s.kernel_drops, 0, 0), "{s:?}");
            if s.parts_dropped > 0 {
                return;
            }
        }
        panic!("the receiver kept up with a 4 KiB socket buffer in three runs: nothing overflowed");
    }
}
