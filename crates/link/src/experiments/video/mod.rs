//! Video over the link: a camera device (device::camera) sends a clip's frames as version 2
//! parts over MQTT or UDP, the server (gateway::video) reassembles them, checks every frame bit
//! for bit against the same clip, and every frame sent ends as delivered or lost, by frame number.
//!
//! UDP with network conditions (`--loss`, …) runs the camera in namespace A and the server in
//! namespace B of a [`NetnsPair`] (root needed), the conditions applied by
//! `lwcbench_netimpair::conditions` on A's side as for sensor frames; only kernel mechanisms are
//! used here (netem, nftables, tbf), not the user-space relay.
mod report;
mod server;
#[cfg(test)]
mod tests;
mod transport;

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
    /// MQTT through the broker at this address.
    Mqtt(BrokerAddr),
    /// Datagrams on loopback, or between the namespaces with network conditions.
    Udp(Option<(Conditions, Backend)>),
}

impl VideoTransport {
    /// `mqtt` or `udp`.
    pub fn name(&self) -> &'static str {
        match self {
            VideoTransport::Mqtt(_) => "mqtt",
            VideoTransport::Udp(_) => "udp",
        }
    }
}

/// One video run: one camera, one server, one cipher.
pub struct VideoConfig {
    /// The cipher.
    pub suite: Suite,
    /// `--unsafe-no-integrity`: parts without a tag.
    pub unauthenticated: bool,
    /// The clip the frames come from.
    pub clip: Arc<Clip>,
    /// Frames sent; frame n is the clip's frame n mod its length.
    pub frames: u32,
    /// Frames per second the camera takes.
    pub fps: f64,
    /// Most bytes of one part on the wire.
    pub part_bytes: usize,
    /// How parts travel.
    pub transport: VideoTransport,
    /// The master key file.
    pub key_file: std::path::PathBuf,
    /// Its counter state file.
    pub counter_file: std::path::PathBuf,
    /// Counters reserved per counter-state write.
    pub counter_block: u64,
    /// The parts' replay window (counters).
    pub window: u64,
    /// An incomplete frame is lost this long after its first part arrived.
    pub deadline: Duration,
    /// After the camera finished: longest wait for the last parts.
    pub drain_timeout: Duration,
    /// The session id (topics).
    pub session: String,
    /// The camera's device id.
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
    /// The cipher's name.
    pub cipher: String,
    /// `mqtt` or `udp`.
    pub transport: &'static str,
    /// The frame number.
    pub frame: u32,
    /// The clip's frame it carries.
    pub clip_frame: usize,
    /// Parts it was sent in.
    pub parts: u32,
    /// Parts the server took.
    pub parts_received: u32,
    /// The frame's bytes.
    pub payload_bytes: u64,
    /// Bytes on the wire for it.
    pub wire_bytes: u64,
    /// Wire bytes beyond the frame.
    pub overhead_bytes: u64,
    /// delivered, mismatch, lost_deadline, lost_evicted, lost_at_end, lost_no_part.
    pub status: &'static str,
    /// Sealing all its parts (µs).
    pub seal_us: f64,
    /// Capture → decrypted whole (delivered frames).
    pub latency_us: Option<f64>,
}

/// One run's totals (link_video.csv).
#[derive(Clone, Debug, Serialize)]
pub struct VideoSummary {
    /// The cipher's name.
    pub cipher: String,
    /// What the parts carry (authenticated encryption or encryption only).
    pub protection: String,
    /// `mqtt` or `udp`.
    pub transport: &'static str,
    /// Loss applied (%).
    pub loss_pct: f64,
    /// The clip as described.
    pub clip: String,
    /// Frame width (pixels).
    pub width: usize,
    /// Frame height (pixels).
    pub height: usize,
    /// Frames per second asked for.
    pub fps_target: f64,
    /// Largest part on the wire (bytes).
    pub part_bytes: usize,
    /// Frames sent.
    pub frames_sent: u64,
    /// Frames delivered whole and equal to the source.
    pub delivered: u64,
    /// Frames lost.
    pub lost: u64,
    /// Frames accepted but differing from the source.
    pub mismatched: u64,
    /// Parts sent.
    pub parts_sent: u64,
    /// Parts the server took.
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
    /// Sends that failed at the camera.
    pub send_errors: u64,
    /// Dropped parts no mechanism counted: dropped − counted when positive (0 when all is well).
    pub uncounted_drops: u64,
    /// Messages refused (never received parts), in total and per reason.
    pub refused: u64,
    /// Refused: not a part of this link.
    pub refused_malformed: u64,
    /// Refused: another device.
    pub refused_unknown_device: u64,
    /// Refused: another cipher or frame type.
    pub refused_wrong_cipher: u64,
    /// Refused: a counter already accepted.
    pub refused_replay: u64,
    /// Refused: below the window or the floor.
    pub refused_too_old: u64,
    /// Refused: the tag does not verify.
    pub refused_bad_tag: u64,
    /// Authentic parts dropped: their frame was done, or their header disagreed.
    pub ignored_parts: u64,
    /// Frames delivered per second.
    pub frames_per_s: f64,
    /// Latency (capture → decrypted whole), median (µs).
    pub latency_p50_us: f64,
    /// Latency, 90th percentile (µs).
    pub latency_p90_us: f64,
    /// Latency, 99th percentile (µs).
    pub latency_p99_us: f64,
    /// Latency, largest (µs).
    pub latency_max_us: f64,
    /// Sealing a frame, median (µs).
    pub seal_p50_us: f64,
    /// Mean parts per frame.
    pub parts_per_frame: f64,
    /// Mean frame bytes.
    pub payload_bytes_per_frame: f64,
    /// Mean wire bytes beyond the frame.
    pub overhead_bytes_per_frame: f64,
    /// The overhead as a percentage of the frame.
    pub overhead_pct: f64,
}

/// What a video run returns: every frame's fate and the totals.
pub struct VideoRun {
    /// Every frame's fate.
    pub frames: Vec<FrameRow>,
    /// The totals.
    pub summary: VideoSummary,
    /// What the path was (for run.json).
    pub path: String,
    /// The conditions applied and their mechanisms.
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
    /// Parts lost that some mechanism counted.
    pub fn total(&self) -> u64 {
        self.injected + self.kernel + self.send_errors
    }
}

/// Where the camera hands each part (the transport).
type PartSink<'s> = &'s mut dyn FnMut(Vec<u8>) -> Result<(), String>;

use report::account;
pub use report::markdown;
#[cfg(test)]
use transport::socket_drops;
use transport::{run_mqtt, run_udp};
