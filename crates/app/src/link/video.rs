//! `lwcbench link --video [FILE]`: a camera's frames over the link (docs/link.md "Video frames
//! (version 2)").
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use lwcbench_engine::video::Clip;
use lwcbench_link::experiments::video::{self, VideoConfig, VideoTransport, UDP_MAX_PART, UDP_PART_BYTES};
use lwcbench_link::results::{self, LinkRecord, RunDir};
use lwcbench_link::transport::Transport;
use lwcbench_link::wire::frame::MAX_FRAME;
use lwcbench_link::wire::suite::Suite;

use super::args::SessionArgs;
use super::options::{default_out, parse_duration, state_files, transport_of};

/// Refuse the session options that mean nothing for video.
fn check_options(a: &SessionArgs) -> Result<(), String> {
    if a.attack || a.preset.is_some() || a.workers != 1 || a.list {
        return Err("--video: runs one camera and one server: drop --attack, --preset, --workers and --list".into());
    }
    if a.transport != "udp" && a.net.any() {
        return Err("--video: network conditions (--loss, …) apply with --transport udp only".into());
    }
    if !(a.drain_timeout.is_finite() && a.drain_timeout > 0.0 && a.drain_timeout <= 3600.0) {
        return Err(format!("--drain-timeout: {} is not in (0, 3600] seconds", a.drain_timeout));
    }
    lwcbench_link::gateway::replay::ReplayWindow::new(a.window)?;
    Ok(())
}

/// `file`: the --video value ("" when none was given: the bundled clip).
pub(super) fn run(a: &SessionArgs, file: &str, suites: &[Suite]) -> Result<(), String> {
    let v = &a.video;
    check_options(a)?;
    let deadline = check_video(a)?;
    let udp = a.transport == "udp";
    let part_bytes = v.frame_part_bytes.unwrap_or(if udp { UDP_PART_BYTES } else { MAX_FRAME });
    if udp && part_bytes > UDP_MAX_PART {
        return Err(format!("--frame-part-bytes {part_bytes}: above the largest UDP payload ({UDP_MAX_PART} B)"));
    }
    let clip = load_clip(a, file, part_bytes, suites)?;
    let fps = match v.fps {
        Some(f) => f,
        None if clip.fps.1 > 0 && clip.fps.0 > 0 => f64::from(clip.fps.0) / f64::from(clip.fps.1),
        None => 25.0,
    };
    let frames = v.frames.unwrap_or(clip.frames as u32);
    let transport = match transport_of(&a.transport, a.broker.as_deref())? {
        Transport::Mqtt(b) => VideoTransport::Mqtt(b),
        Transport::Udp => VideoTransport::Udp(super::net::single(a)?),
    };
    let clip = Arc::new(clip);
    let out = a.out.clone().unwrap_or_else(|| default_out("link-video"));
    // Nothing half-written: the run is written beside --out and swapped in when complete.
    let rd = RunDir::begin(&out, a.force, Some(lwcbench_report::link::render))?;
    let (key_file, counter_file) = state_files(&rd, &a.key_file, &a.counter_state)?;
    let started = SystemTime::now();
    let session = lwcbench_link::session::new_session();
    let mut frames_csv = Vec::new();
    let mut summary = Vec::new();
    let mut paths = Vec::new();
    for s in suites {
        let cfg = VideoConfig {
            suite: s.clone(),
            unauthenticated: a.unsafe_no_integrity,
            clip: clip.clone(),
            frames,
            fps,
            part_bytes,
            transport: transport.clone(),
            key_file: key_file.clone(),
            counter_file: counter_file.clone(),
            counter_block: a.counter_block,
            window: a.window,
            deadline,
            drain_timeout: Duration::from_secs_f64(a.drain_timeout),
            session: format!("{session}-video-{}", s.id),
            device: 0,
            inject: Vec::new(),
            udp_recv_buffer: None,
        };
        let r = video::run(&cfg).map_err(|e| rd.shown(&e))?;
        let m = &r.summary;
        print_summary(a, s, m);
        if let Some(f) = r.frames.iter().find(|f| f.status == "mismatch") {
            return Err(format!(
                "video: {} frame {} was accepted but differs from the source frame {} of {}",
                m.cipher,
                f.frame,
                f.clip_frame,
                clip.path.display()
            ));
        }
        paths.push(serde_json::json!({ "cipher": m.cipher, "path": r.path, "applied": r.applied }));
        frames_csv.extend(r.frames);
        summary.push(r.summary);
    }
    let md = video::markdown(&summary);
    let files = vec![
        ("link_video.csv".to_string(), results::to_csv(&summary)),
        ("summary.md".to_string(), md.into_bytes()),
        ("video_frames.csv".to_string(), results::to_csv(&frames_csv)),
    ];
    let mut notes = lwcbench_link::wire::gate::notes(suites);
    notes.push("video frames: see docs/link.md \"Video frames (version 2)\"".to_string());
    let mut rec = LinkRecord::new(
        "lwcbench link --video".into(),
        "link".into(),
        session,
        a.unsafe_no_integrity,
        serde_json::json!({
            "video": clip.describe(),
            "ciphers": suites.iter().map(|s| s.name()).collect::<Vec<_>>(),
            "transport": a.transport, "fps": fps, "frames": frames, "frame_part_bytes": part_bytes,
            "frame_deadline_s": deadline.as_secs_f64(), "max_frames_in_flight": video::MAX_IN_FLIGHT,
            "window": a.window, "counter_block": a.counter_block,
            "key_file": rd.shown(&key_file.display().to_string()),
            "counter_state": rd.shown(&counter_file.display().to_string()),
            "paths": paths,
        }),
        started,
        notes,
    );
    rd.finish(&files, &mut rec)?;
    println!("wrote {}", out.display());
    Ok(())
}

/// The frame options: --fps, --frames and --frame-deadline (returned).
fn check_video(a: &SessionArgs) -> Result<Duration, String> {
    let v = &a.video;
    if let Some(f) = v.fps {
        if !(f.is_finite() && f > 0.0 && f <= 1000.0) {
            return Err(format!("--fps: {f} is not in (0, 1000] frames/s"));
        }
    }
    if v.frames == Some(0) {
        return Err("--frames: 0: at least one frame is needed".into());
    }
    let deadline = parse_duration(&v.frame_deadline, "--frame-deadline")?;
    if deadline.is_zero() {
        return Err("--frame-deadline: must be longer than 0".into());
    }
    Ok(deadline)
}

/// The clip (`file`, or the bundled one when empty), checked to fit the parts of every suite.
fn load_clip(a: &SessionArgs, file: &str, part_bytes: usize, suites: &[Suite]) -> Result<Clip, String> {
    let v = &a.video;
    // Frames beyond the clip repeat it, so at most the clip is read.
    let clip = if file.is_empty() {
        lwcbench_engine::video::default_clip(v.frames.map(|n| n as usize))?
    } else {
        Clip::load(std::path::Path::new(file), v.frames.map(|n| n as usize))?
    };
    for s in suites {
        lwcbench_link::wire::video::part_count(
            clip.frame_bytes,
            part_bytes,
            s.random_nonce_len(),
            s.tag_len(a.unsafe_no_integrity),
        )
        .map_err(|e| format!("{e} ({}: {} frame of {} B)", clip.path.display(), s.name(), clip.frame_bytes))?;
    }
    Ok(clip)
}

/// One suite's line on stderr, and a warning for drops no mechanism counted.
fn print_summary(a: &SessionArgs, s: &Suite, m: &video::VideoSummary) {
    eprintln!(
        "{}{}{} {}: frames sent {} delivered {} lost {} (parts sent {} received {} dropped {}: injected {}, kernel {}, \
         send errors {}, uncounted {}; refused {}: bad_tag {}, replay {}, too_old {}, other {}) — {:.1} frames/s, \
         latency p50 {} p99 {}, overhead {:.0} B/frame ({:.2} %)",
        if a.unsafe_no_integrity { "UNSAFE (no integrity) " } else { "" },
        lwcbench_link::wire::gate::prefix(s),
        m.cipher,
        m.transport,
        m.frames_sent,
        m.delivered,
        m.lost,
        m.parts_sent,
        m.parts_received,
        m.parts_dropped,
        m.injected_drops,
        m.kernel_drops,
        m.send_errors,
        m.uncounted_drops,
        m.refused,
        m.refused_bad_tag,
        m.refused_replay,
        m.refused_too_old,
        m.refused_malformed + m.refused_unknown_device + m.refused_wrong_cipher,
        m.frames_per_s,
        lwcbench_link::units::ms3(m.latency_p50_us),
        lwcbench_link::units::ms3(m.latency_p99_us),
        m.overhead_bytes_per_frame,
        m.overhead_pct
    );
    if m.uncounted_drops > 0 {
        eprintln!(
            "warning: {} {}: {} of {} dropped parts were counted by no mechanism (network conditions, the \
             socket's drop counter, send errors)",
            m.cipher, m.transport, m.uncounted_drops, m.parts_dropped
        );
    }
}
