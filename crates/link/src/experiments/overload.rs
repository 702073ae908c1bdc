//! Overload: step the offered rate up and find the highest one the path sustains (stored rate
//! ≈ offered rate with bounded latency), measuring the process's memory while it runs.
//! See docs/link.md "Overload".
//!
//! Every queue on the in-process path is bounded, so an offered rate above capacity becomes
//! back-pressure on the devices (they send late: `sent_per_s` < offered) and latency, never
//! unbounded memory: devices → publisher connection (rumqttc request channel, 4096 requests per
//! connection) → broker (rumqttd: 1024 in flight per connection, 4 × 64 MiB segments) → gateway
//! (channel of 16,384 frames; MQTT acknowledged only after the commit) → store (one transaction
//! per batch). UDP has no back-pressure: what the socket buffer (8 MiB) cannot hold is dropped by
//! the kernel and counted as `missing`.
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;

use crate::device::fleet::dataset_readings;
use crate::gateway::process::mem_kb;
use crate::session::{self, LinkConfig};
use crate::transport::Transport;
use crate::wire::suite::Suite;

/// An overload run: the offered rate raised step by step until the link no longer keeps up.
pub struct OverloadConfig {
    /// The cipher.
    pub suite: Suite,
    /// Devices.
    pub devices: u32,
    /// Offered rates (readings/s), one step each.
    pub rates: Vec<f64>,
    /// Readings per step = rate × step.
    pub step: Duration,
    /// The transport.
    pub transport: Transport,
    /// Working directory (key, counters, store).
    pub dir: std::path::PathBuf,
    /// The gateway's store batch.
    pub batch: usize,
    /// Device connections.
    pub connections: usize,
    /// A step sustains its rate if stored ≥ `keep` × offered and e2e p99 ≤ `max_p99`.
    pub keep: f64,
    /// The largest e2e p99 a sustained step may have (see `keep`).
    pub max_p99: Duration,
}

/// One step of the overload run.
#[derive(Clone, Debug, Serialize)]
pub struct StepRow {
    /// The cipher's name.
    pub cipher: String,
    /// The transport.
    pub transport: String,
    /// The rate offered (readings/s).
    pub offered_per_s: f64,
    /// Devices.
    pub devices: u32,
    /// Readings sent.
    pub sent: u64,
    /// Rate the devices managed to hand to the transport (below offered = back-pressure).
    pub sent_per_s: f64,
    /// Readings stored.
    pub stored: u64,
    /// Readings stored per second.
    pub stored_per_s: f64,
    /// Readings sent and not stored.
    pub missing: u64,
    /// Frames the gateway refused.
    pub refused: u64,
    /// End to end, median (ms).
    pub e2e_p50_ms: f64,
    /// End to end, 99th percentile (ms).
    pub e2e_p99_ms: f64,
    /// The process's resident memory at the step's start (MB).
    pub rss_start_mb: f64,
    /// Its peak during the step (MB).
    pub rss_peak_mb: f64,
    /// Whether the step kept up (stored ≥ keep × offered, p99 within the bound).
    pub sustained: bool,
}

/// Run every step; returns the rows (the caller picks the sustainable rate with [`sustainable`]).
pub fn run(cfg: &OverloadConfig, mut progress: impl FnMut(&StepRow)) -> Result<Vec<StepRow>, String> {
    if cfg.rates.is_empty() {
        return Err("--rates: no rate given".into());
    }
    let key_file = cfg.dir.join("master.key");
    let pid = std::process::id();
    let mut rows = Vec::new();
    for &rate in &cfg.rates {
        crate::input::interval_for_rate("--rates", rate, cfg.devices)?;
    }
    std::fs::create_dir_all(&cfg.dir).map_err(|e| format!("{}: {e}", cfg.dir.display()))?;
    for (i, &rate) in cfg.rates.iter().enumerate() {
        let per_dev = ((rate * cfg.step.as_secs_f64()) / cfg.devices as f64).ceil().max(10.0) as u64;
        let db = cfg.dir.join(format!("overload-{i}.db"));
        for ext in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{ext}", db.display()));
        }
        let lc = LinkConfig {
            suite: cfg.suite.clone(),
            unauthenticated: false,
            devices: cfg.devices,
            messages: per_dev,
            interval: Some(crate::input::interval_for_rate("--rates", rate, cfg.devices)?),
            transport: cfg.transport.clone(),
            store: db.display().to_string(),
            window: 1 << 16,
            counter_block: 1 << 16,
            key_file: key_file.clone(),
            counter_file: crate::device::counter::beside_key(&key_file),
            connections: cfg.connections,
            drain_timeout: Duration::from_secs(60),
            readings: dataset_readings(&lwcbench_engine::dataset::Dataset::builtin()),
            batch: cfg.batch,
            session: session::new_session(),
            carrier: None,
        };
        let rss_start = mem_kb(pid).map(|m| m.0).unwrap_or(0);
        let peak = Arc::new(AtomicU64::new(rss_start));
        let stop = Arc::new(AtomicBool::new(false));
        let (p2, s2) = (peak.clone(), stop.clone());
        let sampler = std::thread::spawn(move || {
            while !s2.load(Ordering::Relaxed) {
                if let Some((rss, _)) = mem_kb(pid) {
                    p2.fetch_max(rss, Ordering::Relaxed);
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        });
        let o = session::run(&lc);
        stop.store(true, Ordering::Relaxed);
        let _ = sampler.join();
        let o = o?;
        for ext in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{ext}", db.display()));
        }
        let first = o.dev.iter().map(|s| s.seal_start).min().unwrap_or(0);
        let last_sent = o.dev.iter().map(|s| s.sent).max().unwrap_or(first);
        let seal: std::collections::HashMap<(u32, u64), u64> =
            o.dev.iter().map(|s| ((s.device, s.counter), s.seal_start)).collect();
        let mut e2e: Vec<u64> =
            o.gw.iter()
                .filter_map(|g| seal.get(&(g.device, g.counter)).map(|&s| g.committed.saturating_sub(s)))
                .collect();
        e2e.sort_unstable();
        let ms = |p| lwcbench_stats::percentile_nearest_rank(&e2e, p).map_or(f64::NAN, |v| v as f64 / 1e6);
        let (p50, p99) = (ms(50.0), ms(99.0));
        // N readings per device span N − 1 intervals: one interval is added to every span so a
        // short step that kept its schedule shows its offered rate, not a fence-post shortfall.
        let iv_ns = lc.interval.map(|d| d.as_nanos() as u64).unwrap_or(0);
        let last_commit = o.gw.iter().map(|g| g.committed).max().unwrap_or(first);
        let stored_per_s = o.new_rows as f64 / ((last_commit.saturating_sub(first) + iv_ns).max(1) as f64 / 1e9);
        let row = StepRow {
            cipher: cfg.suite.name(),
            transport: match cfg.transport {
                Transport::Mqtt(_) => "mqtt".into(),
                Transport::Udp => "udp".into(),
            },
            offered_per_s: rate,
            devices: cfg.devices,
            sent: o.sent,
            sent_per_s: o.sent as f64 / ((last_sent.saturating_sub(first) + iv_ns).max(1) as f64 / 1e9),
            stored: o.new_rows,
            stored_per_s,
            missing: o.missing,
            refused: o.tally.refused_total(),
            e2e_p50_ms: p50,
            e2e_p99_ms: p99,
            rss_start_mb: rss_start as f64 / 1024.0,
            rss_peak_mb: peak.load(Ordering::Relaxed) as f64 / 1024.0,
            sustained: o.missing == 0 && stored_per_s >= cfg.keep * rate && p99 <= cfg.max_p99.as_secs_f64() * 1e3,
        };
        progress(&row);
        rows.push(row);
    }
    Ok(rows)
}

/// The highest offered rate that was sustained (None if none was).
pub fn sustainable(rows: &[StepRow]) -> Option<f64> {
    rows.iter().filter(|r| r.sustained).map(|r| r.offered_per_s).fold(None, |a, r| Some(a.map_or(r, |a: f64| a.max(r))))
}

/// The overload steps as a section of summary.md.
pub fn markdown(rows: &[StepRow], cfg: &OverloadConfig) -> String {
    let mut s = String::from("## Overload (lwcbench link overload)\n\n");
    s += "| offered /s | sent /s | stored /s | missing | refused | e2e p50 | e2e p99 | peak RSS (MiB) | sustained |\n";
    s += "|---:|---:|---:|---:|---:|---:|---:|---:|---|\n";
    for r in rows {
        s += &format!(
            "| {:.0} | {:.0} | {:.0} | {} | {} | {} | {} | {:.1} | {} |\n",
            r.offered_per_s,
            r.sent_per_s,
            r.stored_per_s,
            r.missing,
            r.refused,
            crate::units::ms3(r.e2e_p50_ms * 1000.0),
            crate::units::ms3(r.e2e_p99_ms * 1000.0),
            r.rss_peak_mb,
            if r.sustained { "yes" } else { "no" }
        );
    }
    s += &format!(
        "\nSustained = nothing missing, stored ≥ {:.0} % of offered, e2e p99 ≤ {} ms. Sustainable rate: {}.\n",
        cfg.keep * 100.0,
        cfg.max_p99.as_millis(),
        match sustainable(rows) {
            Some(r) => format!("**{r:.0} readings/s**"),
            None => "none of the offered rates".into(),
        }
    );
    s
}
