//! Result files of a link session: per-message latencies, a summary row per cipher, the
//! attack tally, a markdown report section and run.json (written last, so
//! a directory with run.json is complete — the engine's convention).
use std::collections::HashMap;
use std::path::Path;

use serde::Serialize;

use crate::gateway::Refusal;
use crate::run::Outcome;

/// Nearest-rank percentile of sorted values (0 if empty).
pub fn pct(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

#[derive(Serialize, Clone, Debug)]
pub struct MessageRow {
    pub cipher: String,
    pub device: u32,
    pub counter: u64,
    pub plain_bytes: u32,
    pub wire_bytes: u32,
    pub seal_ns: u64,
    pub transport_ns: u64,
    pub open_ns: u64,
    pub store_ns: u64,
    pub e2e_ns: u64,
}

#[derive(Serialize, Clone, Debug, Default)]
pub struct SummaryRow {
    pub cipher: String,
    pub cipher_id: u8,
    pub protection: String,
    pub transport: String,
    pub store: String,
    pub devices: u32,
    pub sent: u64,
    pub stored: u64,
    pub missing: u64,
    pub duplicates_ignored: u64,
    pub mismatched: u64,
    pub accepted: u64,
    pub refused_malformed: u64,
    pub refused_unknown_device: u64,
    pub refused_wrong_cipher: u64,
    pub refused_replay: u64,
    pub refused_too_old: u64,
    pub refused_bad_tag: u64,
    pub elapsed_s: f64,
    pub msgs_per_s: f64,
    pub gateway_cpu_us_per_msg: f64,
    pub process_cpu_us_per_msg: f64,
    pub plain_bytes: f64,
    pub wire_bytes: f64,
    pub overhead_bytes: f64,
    pub overhead_pct: f64,
    pub seal_p50_us: f64,
    pub seal_p99_us: f64,
    pub transport_p50_us: f64,
    pub transport_p99_us: f64,
    pub open_p50_us: f64,
    pub open_p99_us: f64,
    pub store_p50_us: f64,
    pub store_p99_us: f64,
    pub e2e_p50_us: f64,
    pub e2e_p90_us: f64,
    pub e2e_p99_us: f64,
    pub e2e_p999_us: f64,
    pub e2e_max_us: f64,
    pub counter_fsyncs: u64,
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

pub fn summary_row(
    suite: &crate::suite::Suite,
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
        seal_p50_us: us(pct(&seal, 50.0)),
        seal_p99_us: us(pct(&seal, 99.0)),
        transport_p50_us: us(pct(&tr, 50.0)),
        transport_p99_us: us(pct(&tr, 99.0)),
        open_p50_us: us(pct(&open, 50.0)),
        open_p99_us: us(pct(&open, 99.0)),
        store_p50_us: us(pct(&st, 50.0)),
        store_p99_us: us(pct(&st, 99.0)),
        e2e_p50_us: us(pct(&e2e, 50.0)),
        e2e_p90_us: us(pct(&e2e, 90.0)),
        e2e_p99_us: us(pct(&e2e, 99.0)),
        e2e_p999_us: us(pct(&e2e, 99.9)),
        e2e_max_us: us(e2e.last().copied().unwrap_or(0)),
        counter_fsyncs: o.counter_writes,
    }
}

pub fn summary_markdown(rows: &[SummaryRow]) -> String {
    let mut md = String::from("## Link: sensor → broker → gateway → store\n\n");
    if let Some(r) = rows.first() {
        md += &format!("Transport: {}. Store: {}. Devices: {}.\n\n", r.transport, r.store, r.devices);
    }
    md += "| cipher | protection | sent | stored | missing | refused | msgs/s | wire B | overhead | seal p50 µs | e2e p50 µs | e2e p99 µs | gateway CPU µs/msg |\n";
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
            r.seal_p50_us,
            r.e2e_p50_us,
            r.e2e_p99_us,
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
    pub tool: String,
    pub version: String,
    pub kind: String,
    pub args: Vec<String>,
    pub session: String,
    pub unsafe_no_integrity: bool,
    pub config: serde_json::Value,
    pub machine: lwcbench_engine::machine::Machine,
    pub build: lwcbench_engine::machine::Build,
    pub started_utc: String,
    pub finished_utc: String,
    pub files: Vec<String>,
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
            args: std::env::args().collect(),
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

/// Renders `report.html` of a link directory from its files and its run.json record (set by
/// the CLI to the report crate's renderer; this crate cannot depend on that one).
pub type PageRenderer = fn(&Path, &serde_json::Value) -> Result<Vec<u8>, String>;
/// See [`PageRenderer`].
pub static PAGE_RENDERER: std::sync::OnceLock<PageRenderer> = std::sync::OnceLock::new();

/// Plain file names a previous run listed in `dir/run.json` (nothing with a path separator:
/// the listing is not trusted).
fn previous_files(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("run.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .and_then(|v| v.get("files").and_then(|f| f.as_array()).cloned())
        .unwrap_or_default()
        .iter()
        .filter_map(|f| f.as_str())
        .filter(|f| !f.is_empty() && !f.contains(['/', '\\']) && *f != "." && *f != "..")
        .map(str::to_string)
        .collect()
}

/// Write `files`, then `report.html` (rendered from them and the record), then run.json, each
/// atomically: run.json last, so a directory with run.json is complete and lists everything.
/// Result files of a previous run in `dir` (`--force`) that this run does not write again
/// are removed first, so no stale table sits beside the new run. The state (`state/`) and the
/// store (`link.db`) are not result files and stay: the counters must survive.
pub fn write_dir(dir: &Path, files: &[(String, Vec<u8>)], record: &mut LinkRecord) -> Result<(), String> {
    let stale = previous_files(dir);
    let _ = std::fs::remove_file(dir.join("run.json"));
    for f in stale {
        if f != "run.json" && !files.iter().any(|(n, _)| *n == f) {
            let _ = std::fs::remove_file(dir.join(&f));
        }
    }
    for (name, bytes) in files {
        lwcbench_engine::results::write_atomic(dir, name, bytes)
            .map_err(|e| format!("--out: {}: cannot write {name}: {e}", dir.display()))?;
    }
    let renderer = PAGE_RENDERER.get();
    record.files = files
        .iter()
        .map(|(n, _)| n.clone())
        .chain(renderer.map(|_| "report.html".to_string()))
        .chain(["run.json".to_string()])
        .collect();
    let value = serde_json::to_value(&*record).expect("record serialises");
    match renderer {
        Some(render) => {
            let html = render(dir, &value)?;
            lwcbench_engine::results::write_atomic(dir, "report.html", &html)
                .map_err(|e| format!("--out: {}: cannot write report.html: {e}", dir.display()))?;
        }
        None => {
            let _ = std::fs::remove_file(dir.join("report.html"));
        }
    }
    let json = serde_json::to_vec_pretty(&value).expect("record serialises");
    lwcbench_engine::results::write_atomic(dir, "run.json", &json)
        .map_err(|e| format!("--out: {}: cannot write run.json: {e}", dir.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_by_hand() {
        let v: Vec<u64> = (1..=100).collect();
        assert_eq!(pct(&v, 50.0), 50);
        assert_eq!(pct(&v, 99.0), 99);
        assert_eq!(pct(&v, 100.0), 100);
        assert_eq!(pct(&[7], 99.9), 7);
        assert_eq!(pct(&[], 50.0), 0);
    }
}
