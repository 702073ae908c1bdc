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
    /// A gateway process.
    Gateway,
    /// The broker (mosquitto).
    Broker,
    /// A device process.
    Device,
    /// The gateway, then the broker while the gateway is down (what the broker queued for the
    /// gateway exists only in its memory and its last snapshot).
    GatewayThenBroker,
}

impl FaultKind {
    /// The fault as the table names it.
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
    /// The mosquitto binary.
    pub mosquitto: PathBuf,
    /// The cipher every device seals with.
    pub suite: Suite,
    /// Device processes (one device each).
    pub devices: u32,
    /// Report interval of every device.
    pub interval: Duration,
    /// Least run time (the faults may make it longer).
    pub duration: Duration,
    /// Seed of the fault plan (kinds, moments, targets).
    pub seed: u64,
    /// Gateway kills in the plan.
    pub gateway_kills: u32,
    /// Broker kills in the plan.
    pub broker_kills: u32,
    /// Device kills in the plan.
    pub device_kills: u32,
    /// Overlapping faults: [`FaultKind::GatewayThenBroker`].
    pub double_kills: u32,
    /// A forged frame (bad tag, unknown device, truncated) this often; None = no forger.
    pub forge_every: Option<Duration>,
    /// The gateways' replay window (`--window`).
    pub window: u64,
    /// The gateways' store batch (`--batch`).
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
    /// Its place in the plan, from 1.
    pub seq: u32,
    /// The kind, as [`FaultKind::as_str`] names it.
    pub fault: String,
    /// What was killed ("device 3", "gateway", …).
    pub target: String,
    /// When it was killed, from the run's start (s).
    pub t_kill_s: f64,
    /// How long it stayed down (ms).
    pub down_ms: u64,
    /// Restart → first reading captured after the kill is stored (empty: did not recover).
    pub recovery_ms: Option<u64>,
    /// Kill → that reading stored.
    pub outage_ms: Option<u64>,
    /// Captured readings (after this kill, before the next fault) never stored.
    pub readings_lost: u64,
    /// Readings stored twice (after this kill, before the next fault).
    pub duplicates_stored: u64,
}

/// The fault table: one row per kind.
#[derive(Clone, Debug, Serialize)]
pub struct TableRow {
    /// The kind of fault (or the steady state).
    pub fault: String,
    /// Faults of this kind.
    pub count: u32,
    /// Captured readings never stored, over those faults.
    pub readings_lost: u64,
    /// Readings stored twice, over those faults.
    pub duplicates_stored: u64,
    /// Median recovery (ms).
    pub recovery_p50_ms: Option<u64>,
    /// Longest recovery (ms).
    pub recovery_max_ms: Option<u64>,
    /// Longest outage (ms).
    pub outage_max_ms: Option<u64>,
}

/// One timeline sample.
#[derive(Clone, Debug, Serialize)]
pub struct Sample {
    /// Seconds from the run's start.
    pub t_s: f64,
    /// The gateway process's resident memory (kB).
    pub gateway_rss_kb: u64,
    /// Its peak resident memory (kB).
    pub gateway_hwm_kb: u64,
    /// The broker's resident memory (kB).
    pub broker_rss_kb: u64,
    /// Rows in the store.
    pub stored_rows: u64,
    /// Refusals reported by the current gateway process (forged frames and re-sent copies).
    pub gateway_refused: u64,
    /// Summed over device processes' latest stats: PUBACK timeouts and reconnects.
    pub device_ack_timeouts: u64,
    /// Reconnects, summed over device processes.
    pub device_reconnects: u64,
}

/// What a chaos run returns: the proof, the faults and the timeline.
pub struct ChaosOutcome {
    /// The proof's verdict.
    pub verdict: Verdict,
    /// Every injected fault.
    pub faults: Vec<FaultRow>,
    /// The fault table.
    pub table: Vec<TableRow>,
    /// The timeline samples.
    pub timeline: Vec<Sample>,
    /// The broker's port.
    pub broker_port: u16,
    /// The session id.
    pub session: String,
}
