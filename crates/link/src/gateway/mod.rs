//! The receiving side: checking and opening frames ([`checks`]), the per-device replay window
//! ([`replay`]), the key's accepted marks across processes and stores ([`accepted`]), the single
//! gateway ([`single`]), K workers on an MQTT v5 shared subscription with the replay state in the
//! store ([`workers`]), and the gateway as a process ([`process`]), alone or as one member of a
//! shared subscription across processes and hosts ([`shared`]).
use tokio::sync::mpsc;

use crate::gateway::checks::Tally;
use crate::store::Store;
use crate::transport::Transport;
use crate::wire::suite::Suite;

pub mod accepted;
pub mod checks;
pub mod process;
pub mod replay;
pub mod shared;
pub mod single;
pub mod video;
pub mod workers;

/// One frame as the gateway saw it.
#[derive(Clone, Copy, Debug)]
pub struct GwSample {
    /// The sending device.
    pub device: u32,
    /// The frame's counter.
    pub counter: u64,
    /// Transport handed it over (MQTT event loop / UDP socket).
    pub recv: u64,
    /// Gateway began checking it.
    pub start: u64,
    /// Opened and window moved.
    pub opened: u64,
    /// Its batch committed.
    pub committed: u64,
}

/// A frame as the transport hands it to a gateway thread: the bytes, when they arrived, and what
/// acknowledges them after their commit (`A`: the MQTT 3.1.1 or v5 PUBACK source, or nothing for UDP).
pub(crate) struct Incoming<A> {
    /// The frame as received.
    pub frame: Vec<u8>,
    /// When it arrived (ns, [`crate::clock::now_ns`]).
    pub recv: u64,
    /// What the PUBACK needs (packet id, QoS), without the payload.
    pub ack: A,
}

/// Frames the gateway thread may hold unchecked, and PUBACKs the MQTT client may hold unsent.
pub const QUEUE: usize = 16 * 1024;

/// What the gateway thread hands back.
pub struct GwResult {
    /// Its verdicts.
    pub tally: Tally,
    /// One sample per stored frame (at most `max_samples`).
    pub samples: Vec<GwSample>,
    /// Rows the store took as new.
    pub new_rows: u64,
    /// Copies the store already held.
    pub duplicates: u64,
    /// CPU time of the gateway threads.
    pub cpu_ns: u64,
    /// The store, handed back for reading.
    pub store: Box<dyn Store>,
    /// Why it stopped early (the store failed).
    pub error: Option<String>,
}

/// Gateway settings.
pub struct GatewaySpec {
    /// The cipher it accepts.
    pub suite: Suite,
    /// `--unsafe-no-integrity`: frames without a tag.
    pub unauthenticated: bool,
    /// The devices it serves.
    pub devices: Vec<u32>,
    /// The replay window (counters).
    pub window: u64,
    /// Where accepted readings go.
    pub store: Box<dyn Store>,
    /// The session id (its topics).
    pub session: String,
    /// Where frames come from.
    pub transport: Transport,
    /// Readings per store transaction at most.
    pub batch: usize,
    /// Samples kept at most (bounds memory on long runs).
    pub max_samples: usize,
    /// `--max-failed-tags`; `None`: the suite's default ([`checks::default_max_failed_tags`]).
    pub max_failed_tags: Option<u64>,
    /// The key's accepted marks (`KEY_FILE.accepted`, [`accepted`]): loaded at start as floors,
    /// raised as batches commit. `None`: no marks (tests, measurements with a throw-away key).
    pub accepted: Option<std::path::PathBuf>,
}

/// The floors of a sensor gateway starting on `store` with the key `master`'s marks file at
/// `path`: per device, its mark, unless the store already holds a counter at or above it (then
/// this store committed what the mark covers, and its unique key refuses those frames, while a
/// frame that was delivered but not committed before a crash is still stored: nothing is lost).
/// A fresh or another store (one that never held the frames) gets every mark as a floor.
pub fn sensor_floors(
    path: &std::path::Path,
    master: &crate::wire::keys::MasterKey,
    store: &mut dyn Store,
) -> Result<std::collections::BTreeMap<u32, u64>, String> {
    let Some(marks) = accepted::read(path, Some(&master.fingerprint()))? else { return Ok(Default::default()) };
    let marks = accepted::of_proto(&marks, crate::wire::frame::Proto::Sensor);
    if marks.is_empty() {
        return Ok(marks);
    }
    let stored = store.highest()?;
    Ok(marks.into_iter().filter(|(d, m)| stored.get(d).is_none_or(|s| s < m)).collect())
}

/// Wait for the next frame, then take what else is already queued, up to `max` in all, into
/// the (empty) `batch`; false once the channel is closed and drained.
pub(crate) fn next_batch<T>(rx: &mut mpsc::Receiver<T>, batch: &mut Vec<T>, max: usize) -> bool {
    let Some(first) = rx.blocking_recv() else { return false };
    batch.push(first);
    while batch.len() < max {
        match rx.try_recv() {
            Ok(x) => batch.push(x),
            Err(_) => break,
        }
    }
    true
}
