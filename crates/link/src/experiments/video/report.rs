//! Every frame sent accounted for as delivered or lost, and the summary's section.

use super::*;

#[allow(clippy::too_many_arguments)]
pub(super) fn account(
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
