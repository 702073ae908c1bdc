//! Result files of a link session: per-message latencies, a summary row per cipher, the
//! attack tally, a markdown report section and run.json (written last, so
//! a directory with run.json is complete — the engine's convention).
pub mod energy;
pub mod measured;

use std::collections::HashMap;
use std::path::Path;

use lwcbench_stats::percentile_nearest_rank as nearest_rank;
use serde::Serialize;

use crate::gateway::checks::Refusal;
use crate::session::Outcome;

/// One message of messages.csv: its sizes and the times of each stage (ns).
#[derive(Serialize, Clone, Debug)]
pub struct MessageRow {
    /// The cipher's name.
    pub cipher: String,
    /// The sending device.
    pub device: u32,
    /// The frame's counter.
    pub counter: u64,
    /// The reading's size in bytes.
    pub plain_bytes: u32,
    /// The sealed frame's size in bytes.
    pub wire_bytes: u32,
    /// Sealing at the device.
    pub seal_ns: u64,
    /// From the send at the device to the start of the gateway's check.
    pub transport_ns: u64,
    /// The gateway's checks and opening.
    pub open_ns: u64,
    /// From opened to committed in the store.
    pub store_ns: u64,
    /// From the start of sealing to the commit.
    pub e2e_ns: u64,
}

/// One cipher's row of summary.csv: counts, throughput, sizes and latency percentiles.
#[derive(Serialize, Clone, Debug, Default)]
pub struct SummaryRow {
    /// The cipher's name.
    pub cipher: String,
    /// The cipher's id on the wire.
    pub cipher_id: u8,
    /// What the frames carry: authenticated encryption, or the unsafe mode's encryption only.
    pub protection: String,
    /// The transport as described in run.json.
    pub transport: String,
    /// The store as described in run.json.
    pub store: String,
    /// Devices in the session.
    pub devices: u32,
    /// Frames the devices sent.
    pub sent: u64,
    /// Rows the store took as new.
    pub stored: u64,
    /// Readings sent and not in the store.
    pub missing: u64,
    /// Copies the store already held (its unique key).
    pub duplicates_ignored: u64,
    /// Stored readings that differ from what was sent.
    pub mismatched: u64,
    /// Frames that passed every check.
    pub accepted: u64,
    /// Refused: not a frame of this link.
    pub refused_malformed: u64,
    /// Refused: a device the gateway does not serve.
    pub refused_unknown_device: u64,
    /// Refused: another cipher or frame type.
    pub refused_wrong_cipher: u64,
    /// Refused: a counter already accepted.
    pub refused_replay: u64,
    /// Refused: below the replay window.
    pub refused_too_old: u64,
    /// Refused: the tag does not verify.
    pub refused_bad_tag: u64,
    /// From the first seal to the last commit, in seconds.
    pub elapsed_s: f64,
    /// Stored rows per second.
    pub msgs_per_s: f64,
    /// The gateway threads' CPU time per checked frame (µs).
    pub gateway_cpu_us_per_msg: f64,
    /// The whole process's CPU time per checked frame (µs).
    pub process_cpu_us_per_msg: f64,
    /// Mean reading size in bytes.
    pub plain_bytes: f64,
    /// Mean frame size in bytes.
    pub wire_bytes: f64,
    /// Mean frame bytes beyond the reading.
    pub overhead_bytes: f64,
    /// The overhead as a percentage of the reading.
    pub overhead_pct: f64,
    /// Sealing, median (µs).
    pub seal_p50_us: f64,
    /// Sealing, 99th percentile (µs).
    pub seal_p99_us: f64,
    /// Transport, median (µs).
    pub transport_p50_us: f64,
    /// Transport, 99th percentile (µs).
    pub transport_p99_us: f64,
    /// Checks and opening, median (µs).
    pub open_p50_us: f64,
    /// Checks and opening, 99th percentile (µs).
    pub open_p99_us: f64,
    /// Store commit, median (µs).
    pub store_p50_us: f64,
    /// Store commit, 99th percentile (µs).
    pub store_p99_us: f64,
    /// End to end, median (µs).
    pub e2e_p50_us: f64,
    /// End to end, 90th percentile (µs).
    pub e2e_p90_us: f64,
    /// End to end, 99th percentile (µs).
    pub e2e_p99_us: f64,
    /// End to end, 99.9th percentile (µs).
    pub e2e_p999_us: f64,
    /// End to end, largest (µs).
    pub e2e_max_us: f64,
    /// Writes of the counter state file (each with fsync).
    pub counter_fsyncs: u64,
    /// Frames under an already accepted counter with other bytes and a valid tag (nonce reuse).
    pub reuse_alarms: u64,
    /// Frames refused too_old: later than the window allows.
    pub late_alarms: u64,
}

/// Join device and gateway timestamps per message.
pub fn message_rows(cipher: &str, o: &Outcome) -> Vec<MessageRow> {
    let mut by = HashMap::with_capacity(o.dev.len());
    for d in &o.dev {
        by.insert((d.device, d.counter), d);
    }
    o.gw.iter()
        .filter_map(|g| {
            let d = by.get(&(g.device, g.counter))?;
            Some(MessageRow {
                cipher: cipher.to_string(),
                device: g.device,
                counter: g.counter,
                plain_bytes: d.plain,
                wire_bytes: d.wire,
                seal_ns: d.sent.saturating_sub(d.seal_start),
                transport_ns: g.start.saturating_sub(d.sent),
                open_ns: g.opened.saturating_sub(g.start),
                store_ns: g.committed.saturating_sub(g.opened),
                e2e_ns: g.committed.saturating_sub(d.seal_start),
            })
        })
        .collect()
}

fn us(ns: u64) -> f64 {
    (ns as f64 / 1e3 * 100.0).round() / 100.0
}

/// A cipher's summary row from the session's outcome and its message rows.
pub fn summary_row(
    suite: &crate::wire::suite::Suite,
    unauth: bool,
    devices: u32,
    o: &Outcome,
    msgs: &[MessageRow],
) -> SummaryRow {
    let col = |f: fn(&MessageRow) -> u64| {
        let mut v: Vec<u64> = msgs.iter().map(f).collect();
        v.sort_unstable();
        v
    };
    let (seal, tr, open, st, e2e) =
        (col(|m| m.seal_ns), col(|m| m.transport_ns), col(|m| m.open_ns), col(|m| m.store_ns), col(|m| m.e2e_ns));
    let n = o.dev.len().max(1) as f64;
    let plain = o.dev.iter().map(|d| d.plain as f64).sum::<f64>() / n;
    let wire = o.dev.iter().map(|d| d.wire as f64).sum::<f64>() / n;
    let processed = (o.tally.accepted + o.tally.refused_total()).max(1) as f64;
    let elapsed_s = o.elapsed_ns as f64 / 1e9;
    SummaryRow {
        cipher: suite.name(),
        cipher_id: suite.id,
        protection: suite.protection(unauth).to_string(),
        transport: o.transport_desc.clone(),
        store: o.store_desc.clone(),
        devices,
        sent: o.sent,
        stored: o.new_rows,
        missing: o.missing,
        duplicates_ignored: o.duplicates,
        mismatched: o.mismatched,
        accepted: o.tally.accepted,
        refused_malformed: o.tally.count(Refusal::Malformed),
        refused_unknown_device: o.tally.count(Refusal::UnknownDevice),
        refused_wrong_cipher: o.tally.count(Refusal::WrongCipher),
        refused_replay: o.tally.count(Refusal::Replay),
        refused_too_old: o.tally.count(Refusal::TooOld),
        refused_bad_tag: o.tally.count(Refusal::BadTag),
        elapsed_s,
        msgs_per_s: if elapsed_s > 0.0 { (o.new_rows as f64 / elapsed_s).round() } else { 0.0 },
        gateway_cpu_us_per_msg: (o.gateway_cpu_ns as f64 / processed / 1e3 * 100.0).round() / 100.0,
        process_cpu_us_per_msg: (o.process_cpu_ns as f64 / processed / 1e3 * 100.0).round() / 100.0,
        plain_bytes: plain,
        wire_bytes: wire,
        overhead_bytes: wire - plain,
        overhead_pct: if plain > 0.0 { ((wire - plain) / plain * 1000.0).round() / 10.0 } else { 0.0 },
        seal_p50_us: us(nearest_rank(&seal, 50.0).unwrap_or(0)),
        seal_p99_us: us(nearest_rank(&seal, 99.0).unwrap_or(0)),
        transport_p50_us: us(nearest_rank(&tr, 50.0).unwrap_or(0)),
        transport_p99_us: us(nearest_rank(&tr, 99.0).unwrap_or(0)),
        open_p50_us: us(nearest_rank(&open, 50.0).unwrap_or(0)),
        open_p99_us: us(nearest_rank(&open, 99.0).unwrap_or(0)),
        store_p50_us: us(nearest_rank(&st, 50.0).unwrap_or(0)),
        store_p99_us: us(nearest_rank(&st, 99.0).unwrap_or(0)),
        e2e_p50_us: us(nearest_rank(&e2e, 50.0).unwrap_or(0)),
        e2e_p90_us: us(nearest_rank(&e2e, 90.0).unwrap_or(0)),
        e2e_p99_us: us(nearest_rank(&e2e, 99.0).unwrap_or(0)),
        e2e_p999_us: us(nearest_rank(&e2e, 99.9).unwrap_or(0)),
        e2e_max_us: us(e2e.last().copied().unwrap_or(0)),
        counter_fsyncs: o.counter_writes,
        reuse_alarms: o.tally.reuse_alarms,
        late_alarms: o.tally.late_alarms,
    }
}

/// The summary rows as the link section of summary.md.
pub fn summary_markdown(rows: &[SummaryRow]) -> String {
    let mut md = String::from("## Link: sensor → broker → gateway → store\n\n");
    if let Some(r) = rows.first() {
        md += &format!(
            "Transport: {}. Store: {}. Devices: {}.\n\n",
            crate::input::md(&r.transport),
            crate::input::md(&r.store),
            r.devices
        );
    }
    md += "| cipher | protection | sent | stored | missing | refused | msgs/s | wire B | overhead | seal p50 | e2e p50 | e2e p99 | gateway CPU µs/msg |\n";
    md += "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
    for r in rows {
        let refused = r.refused_malformed
            + r.refused_unknown_device
            + r.refused_wrong_cipher
            + r.refused_replay
            + r.refused_too_old
            + r.refused_bad_tag;
        md += &format!(
            "| {} | {} | {} | {} | {} | {} | {} | {:.0} | {:.0} B ({:.1} %) | {} | {} | {} | {} |\n",
            r.cipher,
            r.protection,
            r.sent,
            r.stored,
            r.missing,
            refused,
            r.msgs_per_s,
            r.wire_bytes,
            r.overhead_bytes,
            r.overhead_pct,
            crate::units::ms3(r.seal_p50_us),
            crate::units::ms3(r.e2e_p50_us),
            crate::units::ms3(r.e2e_p99_us),
            r.gateway_cpu_us_per_msg
        );
    }
    if rows.iter().any(|r| r.protection.starts_with("UNSAFE")) {
        md += "\n**UNSAFE: at least one row ran without integrity (--unsafe-no-integrity); forged frames would be accepted.**\n";
    }
    md += "\nLatency parts: seal (device), transport (handed to the transport → gateway starts the check, queueing included), \
open (check + replay window + decrypt), store (until the batch's commit). msgs/s = rows stored / (first seal → last commit). \
Gateway CPU = CPU time of the gateway thread only; process CPU includes devices and the embedded broker.\n";
    md
}

/// Serialise rows to CSV.
pub fn to_csv<T: Serialize>(rows: &[T]) -> Vec<u8> {
    lwcbench_engine::results::to_csv(rows)
}

/// run.json of a link session.
#[derive(Serialize)]
pub struct LinkRecord {
    /// The command that wrote the run ("lwcbench link", …).
    pub tool: String,
    /// This lwcbench's version.
    pub version: String,
    /// What the run is ("link", "link-conditions", …).
    pub kind: String,
    /// The command line, secrets redacted.
    pub args: Vec<String>,
    /// The session id the run's topics and store rows carry.
    pub session: String,
    /// Whether frames were sent without integrity (`--unsafe-no-integrity`).
    pub unsafe_no_integrity: bool,
    /// The run's settings, as the command records them.
    pub config: serde_json::Value,
    /// The machine the run ran on.
    pub machine: lwcbench_engine::machine::Machine,
    /// How this binary was built.
    pub build: lwcbench_engine::machine::Build,
    /// When the run started (UTC, RFC 3339).
    pub started_utc: String,
    /// When the run finished (UTC, RFC 3339).
    pub finished_utc: String,
    /// The run's files, run.json excluded.
    pub files: Vec<String>,
    /// Notes for the reader (an unsafe run's warning first).
    pub notes: Vec<String>,
}

impl LinkRecord {
    /// A record of this process (version, command line, machine, build), started at `started`
    /// and finished now; `files` is filled by [`write_dir`]. An unsafe (no integrity) run gets
    /// its warning as the first note.
    pub fn new(
        tool: String,
        kind: String,
        session: String,
        unsafe_no_integrity: bool,
        config: serde_json::Value,
        started: std::time::SystemTime,
        mut notes: Vec<String>,
    ) -> LinkRecord {
        if unsafe_no_integrity {
            notes.insert(
                0,
                "UNSAFE: --unsafe-no-integrity: frames carried no tag; forged frames would be accepted".into(),
            );
        }
        LinkRecord {
            tool,
            version: env!("CARGO_PKG_VERSION").into(),
            kind,
            // redacted: a --store or --broker URL may carry a password
            args: std::env::args().map(|a| crate::input::redact(&a)).collect(),
            session,
            unsafe_no_integrity,
            config,
            machine: lwcbench_engine::machine::Machine::detect(),
            build: lwcbench_engine::machine::Build::current(lwcbench_catalog::build_info()),
            started_utc: lwcbench_engine::results::rfc3339(started),
            finished_utc: lwcbench_engine::results::rfc3339(std::time::SystemTime::now()),
            files: vec![],
            notes,
        }
    }
}

/// Renders `report.html` of a link directory from its files and its run.json record (the
/// application layer passes the report crate's renderer to [`RunDir::begin`]; this crate
/// cannot depend on that one).
pub type PageRenderer = fn(&Path, &serde_json::Value) -> Result<Vec<u8>, String>;

/// Entries of a link directory that are not results of one run: the master key and counter
/// state, and the default store. They belong to the directory: a run into an existing one
/// (`--force`) uses them where they are, and the new run takes them over whole (hard links, or
/// copies where linking fails, made after the run; the old directory and its links go away
/// with the swap). So whichever run a kill or a full disk leaves, it holds the key and the
/// newest counters: the key is never lost or replaced, and no counter is handed out twice.
pub const KEPT: [&str; 4] = ["state", "link.db", "link.db-wal", "link.db-shm"];

/// A link run directory written as one unit (the engine's [`RunDirWriter`]): every file goes
/// into a hidden sibling of `out`, which replaces `out` with one rename when the run is
/// complete; a kill or a full disk at any step leaves the previous complete run, the new
/// complete run, or nothing.
///
/// [`RunDirWriter`]: lwcbench_engine::results::RunDirWriter
pub struct RunDir {
    out: std::path::PathBuf,
    w: lwcbench_engine::results::RunDirWriter,
    render: Option<PageRenderer>,
}

impl RunDir {
    /// Check `out` ([`prepare_dir`](lwcbench_engine::results::prepare_dir): a finished run is
    /// replaced only with `force`) and start the new run beside it; `render` writes its
    /// `report.html` (None: no report).
    pub fn begin(out: &Path, force: bool, render: Option<PageRenderer>) -> Result<RunDir, String> {
        lwcbench_engine::results::prepare_dir(out, force)?;
        let w = lwcbench_engine::results::RunDirWriter::begin(out)
            .map_err(|e| format!("--out: {}: cannot start the run: {e}", out.display()))?;
        Ok(RunDir { out: out.to_path_buf(), w, render })
    }

    /// The output directory as given.
    pub fn out(&self) -> &Path {
        &self.out
    }

    /// Where the kept entry `name` (one of [`KEPT`]) is during this run: in `out` when the run
    /// being replaced has it, else in the new run.
    pub fn kept(&self, name: &str) -> std::path::PathBuf {
        debug_assert!(KEPT.contains(&name));
        let old = self.out.join(name);
        if std::fs::symlink_metadata(&old).is_ok() {
            old
        } else {
            self.w.stage().join(name)
        }
    }

    /// The new run's directory while it is written (work files that end up in the run).
    pub fn stage(&self) -> &Path {
        self.w.stage()
    }

    /// `s` with the path of the run being written replaced by `--out`, where it will be.
    pub fn shown(&self, s: &str) -> String {
        s.replace(&self.w.stage().display().to_string(), &self.out.display().to_string())
    }

    /// Write `files`, then `report.html` (rendered from them and the record), then run.json
    /// listing them all; take over the [`KEPT`] entries of the replaced run; swap the unit in.
    pub fn finish(mut self, files: &[(String, Vec<u8>)], record: &mut LinkRecord) -> Result<(), String> {
        let out = self.out.display().to_string();
        let io = |what: &str, e: std::io::Error| format!("--out: {out}: {what}: {e}");
        for (name, bytes) in files {
            self.w.add(name, bytes).map_err(|e| io(&format!("cannot write {name}"), e))?;
        }
        let renderer = self.render;
        record.files = files
            .iter()
            .map(|(n, _)| n.clone())
            .chain(renderer.map(|_| "report.html".to_string()))
            .chain(["run.json".to_string()])
            .collect();
        let value = serde_json::to_value(&*record).expect("record serialises");
        if let Some(render) = renderer {
            let html = render(self.w.stage(), &value)?;
            self.w.add("report.html", &html).map_err(|e| io("cannot write report.html", e))?;
        }
        let json = serde_json::to_vec_pretty(&value).expect("record serialises");
        self.w.add("run.json", &json).map_err(|e| io("cannot write run.json", e))?;
        for name in KEPT {
            let (old, new) = (self.out.join(name), self.w.stage().join(name));
            if std::fs::symlink_metadata(&old).is_err() || std::fs::symlink_metadata(&new).is_ok() {
                continue;
            }
            let taken = if old.is_dir() {
                std::fs::create_dir(&new).and_then(|_| lwcbench_engine::results::link_tree(&old, &new, &|_| false))
            } else {
                lwcbench_engine::results::link_file(&old, &new)
            };
            taken.map_err(|e| io(&format!("cannot take over {name} of the replaced run"), e))?;
        }
        self.w.commit().map_err(|e| io("cannot put the run in place", e))
    }
}
