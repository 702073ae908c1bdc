//! What a chaos run is given and what it returns.
use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

use crate::experiments::chaos::proof::Verdict;
use crate::wire::suite::Suite;

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

pub struct ChaosOutcome {
    pub verdict: Verdict,
    pub faults: Vec<FaultRow>,
    pub table: Vec<TableRow>,
    pub timeline: Vec<Sample>,
    pub broker_port: u16,
    pub session: String,
}
