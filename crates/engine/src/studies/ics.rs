//! The ICS latency budget: how much of a protocol's latency budget one AEAD seal + open of one
//! protocol message takes in the worst case. Every message is its own sample (`roundtrip`
//! scenario, batch 1), so the maximum is a real message's time, not a batch mean.
//! Definitions (also in docs/ics.md):
//! - percentiles are nearest-rank: the value at 1-based rank ⌈p·n⌉ of the sorted times, so each
//!   one is an observed message (with n < 1000, p99.9 is the maximum);
//! - jitter = p99 − p1 (the spread of the central 98 % of messages); range = max − min is
//!   reported next to it because the worst case is what a budget has to absorb;
//! - % of budget = max / budget × 100.
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;

use super::study::{Study, StudyArgs, StudyInput, StudyOption, StudyOptions, StudyOutput, StudyRun};
use crate::html::{col, esc, num, read_table};
use crate::plan::{Kiv, Scenario, Selection};
use crate::text::fmt_ns;

/// The preset name.
pub const NAME: &str = "ics-latency";
/// Latency per AEAD × message, with % of each budget.
pub const LATENCY_FILE: &str = "ics-latency.csv";
/// The budgets used.
pub const BUDGETS_FILE: &str = "ics-budgets.csv";
/// The messages (protocol, size, source).
pub const MESSAGES_FILE: &str = "ics-messages.csv";
/// The "in the cycle" rows: the protocol's message over a real path without and with the cipher
/// (written when the front-end measured them, see [`super::study::InCycle`]).
pub const CYCLE_FILE: &str = "ics-cycle.csv";
/// Prefix of the run.json notes about the "in the cycle" rows.
pub const CYCLE_NOTE: &str = "ics-latency (in the cycle): ";

/// The ICS latency-budget study.
pub struct Ics;

impl Study for Ics {
    fn published(&self, ours: &crate::published::Ours) -> Option<crate::published::Section> {
        Some(crate::published::ics(ours.ics_csv))
    }
    fn name(&self) -> &'static str {
        NAME
    }
    fn about(&self) -> &'static str {
        "ICS latency budget: every AEAD (AES modes at 128-bit keys, every library) seals and opens Modbus/TCP ADUs (12, 29, 260 B) and IEC 61850 GOOSE frames (160, 1522 B), 10,000 messages each, each message timed on its own; max, p99.9, p99, median, jitter and the worst case as % of the GOOSE 3 ms and IEC 60834-1 10 ms budgets (and --budget NAME=MS); warns when the CPU governor is not `performance`"
    }
    fn selection(&self) -> Selection {
        // Every AEAD; AES modes at 128-bit keys only (the 192/256-bit variants add rows, not
        // insight into the budget), each in every library that offers it.
        let mut ciphers: Vec<String> = Vec::new();
        for e in lwcbench_catalog::registry().iter().filter(|e| e.info.family == lwcbench_core::Family::Aead) {
            let n = e.info.name;
            if !n.starts_with("AES-192-") && !n.starts_with("AES-256-") && !ciphers.iter().any(|c| c == n) {
                ciphers.push(n.to_string());
            }
        }
        Selection {
            ciphers,
            scenarios: vec![Scenario::Roundtrip],
            sizes_bits: message_sizes_bits(),
            kivs: vec![Kiv { random_key: false, random_iv: false }],
            ..Default::default()
        }
    }
    fn reps(&self) -> usize {
        10_000
    }
    fn warmup(&self) -> usize {
        100
    }
    fn options(&self) -> &'static [StudyOption] {
        &[StudyOption::Budget]
    }
    fn take_options(&self, given: &StudyArgs, into: &mut StudyOptions) -> Result<(), String> {
        for b in &given.budget {
            into.budgets.push(parse_budget(b)?);
        }
        Ok(())
    }
    fn files(&self) -> &'static [&'static str] {
        &[LATENCY_FILE, BUDGETS_FILE, MESSAGES_FILE]
    }
    fn derive(&self, input: &StudyInput) -> Result<StudyOutput, String> {
        study(input)
    }
    fn html(&self, run: &StudyRun, _fig: &mut usize) -> Result<String, String> {
        Ok(html(run.dir, &run.record.machine.governor) + &cycle_html(run.dir, &run.record.notes))
    }
}

/// A latency budget with its source.
#[derive(Clone, Debug, PartialEq)]
pub struct Budget {
    /// Name in the tables' column names.
    pub name: String,
    /// The budget, ms.
    pub ms: f64,
    /// The standard or user that sets it.
    pub source: String,
}

/// The default budgets.
pub fn default_budgets() -> Vec<Budget> {
    vec![
        Budget {
            name: "GOOSE-1A-trip".into(),
            ms: 3.0,
            source: "IEC 61850-5, message type 1A (fast messages, trip), transfer time class TT6: 3 ms".into(),
        },
        Budget {
            name: "IEC60834-1-teleprotection".into(),
            ms: 10.0,
            source: "IEC 60834-1 command teleprotection, commonly cited maximum actual transmission time of 10 ms for permissive/blocking commands (the ChaCha20-Poly1305 ICS study, arXiv:2603.19150, reports < 3 % of it)".into(),
        },
    ]
}

/// A protocol message of the preset, by size in bytes.
pub struct Message {
    /// Modbus/TCP or GOOSE.
    pub protocol: &'static str,
    /// What the message is.
    pub name: &'static str,
    /// Its length, bytes.
    pub bytes: usize,
    /// Where the length comes from.
    pub source: &'static str,
}

/// The preset's messages (sizes are whole frames/ADUs as sent on the wire).
pub const MESSAGES: &[Message] = &[
    Message {
        protocol: "Modbus/TCP",
        name: "read-holding-registers request",
        bytes: 12,
        source: "MBAP header 7 B (Modbus Messaging on TCP/IP Implementation Guide v1.0b §3.1.3) + PDU 5 B (function 0x03, start address, quantity; Modbus Application Protocol v1.1b3 §6.3)",
    },
    Message {
        protocol: "Modbus/TCP",
        name: "read-holding-registers response, 10 registers",
        bytes: 29,
        source: "MBAP 7 B + function 1 B + byte count 1 B + 10 × 2 B register values",
    },
    Message {
        protocol: "Modbus/TCP",
        name: "maximum ADU",
        bytes: 260,
        source: "MBAP 7 B + maximum PDU 253 B (Modbus Application Protocol v1.1b3 §4.1; TCP ADU = 260 B)",
    },
    Message {
        protocol: "IEC 61850 GOOSE",
        name: "typical trip frame (estimate)",
        bytes: 160,
        source: "estimate from the IEC 61850-8-1 frame layout: Ethernet 14 B + 802.1Q tag 4 B + APPID/length/reserved 8 B + ~134 B BER-encoded goosePdu (gocbRef, datSet, goID of ~20–30 characters, timestamp, stNum/sqNum, a few boolean/quality entries)",
    },
    Message {
        protocol: "IEC 61850 GOOSE",
        name: "maximum frame",
        bytes: 1522,
        source: "largest 802.1Q-tagged Ethernet frame (IEEE 802.3: 1518 B + 4 B tag); a GOOSE message is not fragmented (IEC 61850-8-1)",
    },
];

/// Message sizes of the preset in bits.
pub fn message_sizes_bits() -> Vec<usize> {
    MESSAGES.iter().map(|m| m.bytes * 8).collect()
}

/// Parse `NAME=MS` (milliseconds, > 0).
pub fn parse_budget(s: &str) -> Result<(String, f64), String> {
    let (name, ms) =
        s.split_once('=').ok_or_else(|| format!("--budget: '{s}' is not NAME=MS (e.g. --budget modbus-poll=100)"))?;
    let name = name.trim();
    if name.is_empty() || name.contains(',') || name.contains('"') {
        return Err(format!("--budget: '{s}': the name must be non-empty and contain no comma or quote"));
    }
    let v: f64 =
        ms.trim().parse().map_err(|_| format!("--budget: '{s}': '{}' is not a number of milliseconds", ms.trim()))?;
    if !(v.is_finite() && v > 0.0) {
        return Err(format!("--budget: '{s}': the budget must be a positive number of milliseconds"));
    }
    Ok((name.to_string(), v))
}

/// The latency figures of one set of per-message times (ns).
#[derive(Clone, Debug, PartialEq)]
pub struct Latency {
    /// Messages timed.
    pub n: usize,
    /// Fastest, ns.
    pub min: f64,
    /// 1st percentile, ns.
    pub p1: f64,
    /// Median, ns.
    pub median: f64,
    /// 99th percentile, ns.
    pub p99: f64,
    /// 99.9th percentile, ns.
    pub p999: f64,
    /// Slowest, ns.
    pub max: f64,
    /// p99 − p1.
    pub jitter: f64,
    /// max − min.
    pub range: f64,
}

impl Latency {
    /// The figures as CSV fields in the tables' column order: n, min, p1, median, p99, p99.9,
    /// max, jitter, range.
    pub fn csv_fields(&self) -> String {
        let l = self;
        format!("{},{},{},{},{},{},{},{},{}", l.n, l.min, l.p1, l.median, l.p99, l.p999, l.max, l.jitter, l.range)
    }
}

/// The latency figures of per-message times (nearest-rank percentiles).
pub fn latency(times_ns: &[f64]) -> Latency {
    let mut v = times_ns.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    // A group always has at least one repetition, so every percentile exists.
    let nearest_rank = |p| lwcbench_stats::percentile_nearest_rank(&v, p).expect("latency of no samples");
    let (p1, p99) = (nearest_rank(1.0), nearest_rank(99.0));
    let (min, max) = (v[0], v[v.len() - 1]);
    Latency {
        n: v.len(),
        min,
        p1,
        median: nearest_rank(50.0),
        p99,
        p999: nearest_rank(99.9),
        max,
        jitter: p99 - p1,
        range: max - min,
    }
}

/// Worst case as a percentage of a budget in milliseconds.
pub fn pct_of_budget(worst_ns: f64, budget_ms: f64) -> f64 {
    worst_ns / (budget_ms * 1e6) * 100.0
}

fn governor_warning(governor: &str) -> Option<String> {
    if governor == "performance" {
        None
    } else if governor.starts_with("unavailable") || governor.is_empty() {
        Some("CPU frequency governor unknown (no cpufreq interface, typical of VMs): frequency scaling may inflate the worst case; on a real device set the `performance` governor before measuring, as the ICS study warns".into())
    } else {
        Some(format!("CPU frequency governor is '{governor}', not 'performance': frequency scaling can inflate the worst case (the ICS study warns about this); set `performance` and re-run"))
    }
}

/// The Markdown section's heading, warning, method paragraph and table header.
fn markdown_head(input: &StudyInput, budgets: &[Budget], warning: Option<&str>) -> String {
    let overhead = input.record.clock.overhead_ns;
    let governor = &input.record.machine.governor;
    let mut md = String::from("\n## ICS latency budget (seal + open per message)\n\n");
    if let Some(w) = warning {
        let _ = writeln!(md, "> **Warning:** {w}\n");
    }
    let _ = writeln!(
        md,
        "Each message timed on its own (batch 1): fresh counter nonce, copy, encrypt + tag, tag check + decrypt. Percentiles nearest-rank; jitter = p99 − p1. Clock overhead (start + stop, included in every time): {}. Machine: {} ({} logical cores), governor: {governor}.\n",
        fmt_ns(overhead),
        input.record.machine.cpu_model,
        input.record.machine.logical_cores
    );
    md += "| cipher | protocol | message | bytes | n | median | p99 | p99.9 | max | jitter (p99−p1) |";
    for b in budgets {
        let _ = write!(md, " max % of {} ({} ms) |", b.name, b.ms);
    }
    for b in budgets {
        let _ = write!(md, " p99.9 % of {} |", b.name);
    }
    md += "\n|---|---|---|---:|---:|---:|---:|---:|---:|---:|";
    md += &"---:|".repeat(2 * budgets.len());
    md.push('\n');
    md
}

/// The Markdown after the table (the maximum, the budgets, the study's figures), and the
/// budgets and messages CSV files.
fn markdown_tail_and_tables(budgets: &[Budget]) -> (String, String, String) {
    let mut md = String::new();
    md += "\nA maximum far above p99.9 is one message interrupted by the operating system (preemption, interrupts, another process on the core), not the cipher: on a shared machine it dominates the worst case. For a device-realistic worst case pin the process to an isolated core with a real-time priority (e.g. `taskset`, `chrt -f`), set the `performance` governor, and compare p99.9 (also in ics-latency.csv as p99_9_pct_of_*).\n";
    md += "\nBudgets:\n\n";
    let mut bcsv = String::from("budget,ms,source\n");
    for b in budgets {
        let _ = writeln!(md, "- {} = {} ms — {}", b.name, b.ms, b.source);
        let _ = writeln!(bcsv, "{},{},\"{}\"", b.name, b.ms, b.source.replace('"', "'"));
    }
    md += "\nThe ICS study (ChaCha20-Poly1305, arXiv:2603.19150) reports worst cases under 7.1 % of the GOOSE budget and under 3 % of the IEC 60834-1 budget on a Raspberry Pi 4 and an Intel N95.\n";
    let mut mcsv = String::from("protocol,message,bytes,source\n");
    for m in MESSAGES {
        let _ = writeln!(mcsv, "\"{}\",\"{}\",{},\"{}\"", m.protocol, m.name, m.bytes, m.source);
    }
    (md, bcsv, mcsv)
}

/// The study: latency tables per AEAD and message, against the budgets.
pub fn study(input: &StudyInput) -> Result<StudyOutput, String> {
    let mut budgets = default_budgets();
    for (name, ms) in &input.options.budgets {
        budgets.push(Budget { name: name.clone(), ms: *ms, source: "user-supplied (--budget)".into() });
    }
    // One row per AEAD implementation × message size, from the roundtrip samples.
    let mut groups: BTreeMap<(String, String, u64), Vec<f64>> = BTreeMap::new();
    for r in input.samples.iter().filter(|r| r.scenario == "roundtrip") {
        groups.entry((r.cipher.clone(), r.implementation.clone(), r.size_bits)).or_default().push(r.ns_per_op);
    }
    if groups.is_empty() {
        return Err("ics-latency: no roundtrip samples (select AEADs and --scenario roundtrip)".into());
    }
    let overhead = input.record.clock.overhead_ns;
    let governor = &input.record.machine.governor;
    let warning = governor_warning(governor);

    let mut csv = String::from("cipher,implementation,protocol,message,bytes,n,min_ns,p1_ns,median_ns,p99_ns,p99_9_ns,max_ns,jitter_p99_p1_ns,range_ns,clock_overhead_ns,governor");
    for b in &budgets {
        let _ = write!(csv, ",pct_of_{}", b.name);
    }
    for b in &budgets {
        let _ = write!(csv, ",p99_9_pct_of_{}", b.name);
    }
    csv.push('\n');
    let mut md = markdown_head(input, &budgets, warning.as_deref());
    for ((cipher, imp, bits), times) in &groups {
        let l = latency(times);
        let bytes = (bits / 8) as usize;
        let (proto, name) = MESSAGES
            .iter()
            .find(|m| m.bytes == bytes)
            .map(|m| (m.protocol, m.name))
            .unwrap_or(("custom", "custom size"));
        let _ = write!(
            csv,
            "{cipher},{imp},\"{proto}\",\"{name}\",{bytes},{},{overhead},\"{}\"",
            l.csv_fields(),
            governor.replace('"', "'")
        );
        let _ = write!(
            md,
            "| {cipher}/{imp} | {proto} | {name} | {bytes} | {} | {} | {} | {} | {} | {} |",
            l.n,
            fmt_ns(l.median),
            fmt_ns(l.p99),
            fmt_ns(l.p999),
            fmt_ns(l.max),
            fmt_ns(l.jitter)
        );
        for b in &budgets {
            let pct = pct_of_budget(l.max, b.ms);
            let _ = write!(csv, ",{pct}");
            let _ = write!(md, " {pct:.3} % |");
        }
        for b in &budgets {
            let pct = pct_of_budget(l.p999, b.ms);
            let _ = write!(csv, ",{pct}");
            let _ = write!(md, " {pct:.3} % |");
        }
        csv.push('\n');
        md.push('\n');
    }
    let (tail, bcsv, mcsv) = markdown_tail_and_tables(&budgets);
    md += &tail;
    let mut notes = vec![format!(
        "ics-latency: every roundtrip sample is one message (batch 1) and includes the clock overhead of {:.1} ns (one start + stop of both clocks); percentiles nearest-rank, jitter = p99 − p1",
        overhead
    )];
    if let Some(w) = warning {
        notes.push(format!("WARNING (ics-latency): {w}"));
    }
    let mut files = vec![];
    if let Some(c) = &input.options.in_cycle {
        if let Some(text) = &c.csv {
            md += &cycle_markdown(text)?;
            files.push((CYCLE_FILE.to_string(), text.clone().into_bytes()));
        }
        for n in &c.notes {
            let _ = writeln!(md, "\n- in the cycle: {n}");
            notes.push(format!("{CYCLE_NOTE}{n}"));
        }
    }
    Ok(StudyOutput {
        files: vec![
            // Also on its own: `lwcbench report` rewrites summary.md from summary.csv alone.
            ("ics-latency.md".into(), md.clone().into_bytes()),
            (LATENCY_FILE.into(), csv.into_bytes()),
            (BUDGETS_FILE.into(), bcsv.into_bytes()),
            (MESSAGES_FILE.into(), mcsv.into_bytes()),
        ]
        .into_iter()
        .chain(files)
        .collect(),
        markdown: md,
        notes,
    })
}

/// The study's section of report.html: one row per AEAD × message with % of each budget, from
/// `ics-latency.csv` in `dir` (empty without it).
pub fn html(dir: &Path, governor: &str) -> String {
    let Some((hd, rows)) = read_table(&dir.join(LATENCY_FILE)) else { return String::new() };
    // Only the max columns (pct_of_*), not the p99.9 ones (p99_9_pct_of_*).
    let budgets: Vec<(usize, String)> =
        hd.iter().enumerate().filter_map(|(i, h)| h.strip_prefix("pct_of_").map(|b| (i, b.to_string()))).collect();
    let mut h = String::from("<h2 id=\"ics\">ICS latency budget</h2><h3>Cipher only</h3>");
    if governor != "performance" {
        let _ = write!(h, "<p class=\"note\"><b>Warning:</b> CPU frequency governor is '{}', not 'performance': frequency scaling can inflate the worst case.</p>", esc(governor));
    }
    h += "<p>Seal + open of one message per sample (batch 1, fresh counter nonce); percentiles nearest-rank; jitter = p99 − p1; % of budget = max / budget. Each time includes one clock start/stop (overhead in the Environment table). Budgets and sources: ics-budgets.csv; message sizes and sources: ics-messages.csv.</p>";
    h += "<table><tr><th class=\"l\">cipher</th><th class=\"l\">protocol</th><th class=\"l\">message</th><th>bytes</th><th>n</th><th>median</th><th>p99</th><th>p99.9</th><th>max</th><th>jitter</th>";
    for (_, b) in &budgets {
        let _ = write!(h, "<th>max % of {}</th>", esc(b));
    }
    h += "</tr>";
    for r in &rows {
        let g = |n: &str| col(&hd, n).map(|c| r[c].clone()).unwrap_or_default();
        let _ = write!(
            h,
            "<tr><td class=\"l\">{}/{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>",
            esc(&g("cipher")),
            esc(&g("implementation")),
            esc(&g("protocol")),
            esc(&g("message")),
            esc(&g("bytes")),
            esc(&g("n")),
            fmt_ns(num(&g("median_ns"))),
            fmt_ns(num(&g("p99_ns"))),
            fmt_ns(num(&g("p99_9_ns"))),
            fmt_ns(num(&g("max_ns"))),
            fmt_ns(num(&g("jitter_p99_p1_ns")))
        );
        for (i, _) in &budgets {
            let _ = write!(h, "<td>{:.3} %</td>", num(&r[*i]));
        }
        h += "</tr>";
    }
    h + "</table>"
}

/// The figures of `ics-cycle.csv` (header, rows) with the budgets of its `pct_of_*` columns.
fn cycle_table(text: &str) -> Result<(Vec<String>, Vec<Vec<String>>), String> {
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let hd: Vec<String> = r.headers().map_err(|e| format!("{CYCLE_FILE}: {e}"))?.iter().map(str::to_string).collect();
    let mut rows = Vec::new();
    for rec in r.records() {
        let rec = rec.map_err(|e| format!("{CYCLE_FILE}: {e}"))?;
        rows.push(rec.iter().map(str::to_string).collect());
    }
    Ok((hd, rows))
}

const CYCLE_COLS: [&str; 5] = ["median_ns", "p99_ns", "p99_9_ns", "max_ns", "jitter_p99_p1_ns"];

/// The Markdown section of the "in the cycle" rows.
fn cycle_markdown(text: &str) -> Result<String, String> {
    let (hd, rows) = cycle_table(text)?;
    let budgets: Vec<(usize, &str)> =
        hd.iter().enumerate().filter_map(|(i, h)| h.strip_prefix("pct_of_").map(|b| (i, b))).collect();
    let mut md =
        String::from("\n### In the cycle (publish → accepted over a real path, without and with the cipher)\n\n");
    md += "Same figures and verdict rule as the cipher-only rows above; the path is in ics-cycle.csv.\n\n";
    md += "| cipher | protocol | message | bytes | measured | n | median | p99 | p99.9 | max | jitter (p99−p1) |";
    for (_, b) in &budgets {
        let _ = write!(md, " max % of {b} |");
    }
    md += "\n|---|---|---|---:|---|---:|---:|---:|---:|---:|---:|";
    md += &"---:|".repeat(budgets.len());
    md.push('\n');
    for r in &rows {
        let g = |n: &str| col(&hd, n).and_then(|c| r.get(c)).cloned().unwrap_or_default();
        let _ = write!(
            md,
            "| {} | {} | {} | {} | {} | {} |",
            g("cipher"),
            g("protocol"),
            g("message"),
            g("bytes"),
            g("measured"),
            g("n")
        );
        for c in CYCLE_COLS {
            let _ = write!(md, " {} |", fmt_ns(num(&g(c))));
        }
        for (i, _) in &budgets {
            let _ = write!(md, " {:.3} % |", num(r.get(*i).map(String::as_str).unwrap_or("")));
        }
        md.push('\n');
    }
    Ok(md)
}

/// The report's "in the cycle" part: the rows of `ics-cycle.csv` in `dir`, and the notes saying
/// why rows are missing (empty when there is neither).
pub fn cycle_html(dir: &Path, notes: &[String]) -> String {
    let missing: Vec<&str> = notes.iter().filter_map(|n| n.strip_prefix(CYCLE_NOTE)).collect();
    let table = read_table(&dir.join(CYCLE_FILE));
    if table.is_none() && missing.is_empty() {
        return String::new();
    }
    let mut h = String::from("<h3>In the cycle</h3><p>The protocol's message over a real path, publish → accepted, without and with the cipher; same percentiles, jitter and % of budget (max / budget) as the cipher-only table. Path and every figure: ics-cycle.csv.</p>");
    for m in &missing {
        let _ = write!(h, "<p class=\"note\">{}</p>", esc(m));
    }
    let Some((hd, rows)) = table else { return h };
    let budgets: Vec<(usize, String)> =
        hd.iter().enumerate().filter_map(|(i, x)| x.strip_prefix("pct_of_").map(|b| (i, b.to_string()))).collect();
    h += "<table><tr><th class=\"l\">cipher</th><th class=\"l\">protocol</th><th class=\"l\">message</th><th>bytes</th><th class=\"l\">measured</th><th>n</th><th>median</th><th>p99</th><th>p99.9</th><th>max</th><th>jitter</th>";
    for (_, b) in &budgets {
        let _ = write!(h, "<th>max % of {}</th>", esc(b));
    }
    h += "</tr>";
    for r in &rows {
        let g = |n: &str| col(&hd, n).and_then(|c| r.get(c)).cloned().unwrap_or_default();
        let _ = write!(
            h,
            "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td class=\"l\">{}</td><td>{}</td>",
            esc(&g("cipher")),
            esc(&g("protocol")),
            esc(&g("message")),
            esc(&g("bytes")),
            esc(&g("measured")),
            esc(&g("n"))
        );
        for c in CYCLE_COLS {
            let _ = write!(h, "<td>{}</td>", fmt_ns(num(&g(c))));
        }
        for (i, _) in &budgets {
            let _ = write!(h, "<td>{:.3} %</td>", num(r.get(*i).map(String::as_str).unwrap_or("")));
        }
        h += "</tr>";
    }
    h + "</table>"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latency_percentiles_are_nearest_rank_by_hand() {
        // 10..=1 reversed (latency sorts): p1 → rank ⌈0.1⌉ = 1, p50 → 5, p99 → ⌈9.9⌉ = 10.
        let v: Vec<f64> = (1..=10).rev().map(f64::from).collect();
        let l = latency(&v);
        assert_eq!((l.min, l.p1, l.median, l.p99, l.p999, l.max), (1.0, 1.0, 5.0, 10.0, 10.0, 10.0));
        assert_eq!((l.jitter, l.range), (9.0, 9.0));
        // 1..=1000: p99.9 → rank 999; p99 → rank 990; p1 → rank 10.
        let w: Vec<f64> = (1..=1000).map(f64::from).collect();
        let l = latency(&w);
        assert_eq!((l.p1, l.median, l.p99, l.p999), (10.0, 500.0, 990.0, 999.0));
    }

    #[test]
    fn latency_jitter_and_budget_by_hand() {
        // Unsorted 100 values 1..=100 plus one outlier of 1000 (n = 101).
        let mut t: Vec<f64> = (1..=100).rev().map(f64::from).collect();
        t.push(1000.0);
        let l = latency(&t);
        assert_eq!(l.n, 101);
        assert_eq!(l.min, 1.0);
        assert_eq!(l.max, 1000.0);
        // p1: rank ⌈1.01⌉ = 2 → 2; p99: rank ⌈99.99⌉ = 100 → 100; median rank ⌈50.5⌉ = 51 → 51.
        assert_eq!(l.p1, 2.0);
        assert_eq!(l.p99, 100.0);
        assert_eq!(l.median, 51.0);
        assert_eq!(l.p999, 1000.0); // rank ⌈100.899⌉ = 101
        assert_eq!(l.jitter, 98.0);
        assert_eq!(l.range, 999.0);
        // 213 µs of a 3 ms budget = 7.1 %; of 10 ms = 2.13 %.
        assert!((pct_of_budget(213_000.0, 3.0) - 7.1).abs() < 1e-9);
        assert!((pct_of_budget(213_000.0, 10.0) - 2.13).abs() < 1e-9);
    }

    #[test]
    fn budgets_parse_or_name_the_problem() {
        assert_eq!(parse_budget("modbus=100"), Ok(("modbus".into(), 100.0)));
        assert_eq!(parse_budget(" sv = 0.25 "), Ok(("sv".into(), 0.25)));
        assert!(parse_budget("modbus").unwrap_err().contains("NAME=MS"));
        assert!(parse_budget("x=abc").unwrap_err().contains("'abc' is not a number"));
        assert!(parse_budget("x=-1").unwrap_err().contains("positive"));
        assert!(parse_budget("=3").unwrap_err().contains("name"));
    }

    #[test]
    fn message_sizes_add_up() {
        // Modbus: 7 + 5; 7 + 1 + 1 + 20; 7 + 253.
        assert_eq!(MESSAGES[0].bytes, 7 + 5);
        assert_eq!(MESSAGES[1].bytes, 7 + 1 + 1 + 2 * 10);
        assert_eq!(MESSAGES[2].bytes, 7 + 253);
        assert_eq!(MESSAGES[4].bytes, 1518 + 4);
        assert!(governor_warning("performance").is_none());
        assert!(governor_warning("powersave").unwrap().contains("'powersave'"));
        assert!(governor_warning("unavailable (no cpufreq)").unwrap().contains("unknown"));
    }

    #[test]
    fn preset_end_to_end_with_few_messages() {
        let p = crate::studies::find("ics-latency").expect("preset");
        let mut req = crate::session::Request::from_preset(p);
        req.config.reps = 50;
        req.config.warmup = 2;
        req.selection.all_stream_and_aead = false;
        req.selection.ciphers = vec!["ChaCha20-Poly1305/rustcrypto".into(), "Ascon-AEAD128".into()];
        req.study_options.budgets = vec![("poll".into(), 100.0)];
        let dir = std::env::temp_dir().join(format!("lwcbench-ics-e2e-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        req.out = Some(dir.clone());
        let out = crate::session::run(&req, |_, _, _| {}).expect("run");
        assert!(out.results.iter().all(|r| r.batch == 1), "roundtrip is never batched");
        let mut rd = csv::Reader::from_path(dir.join("ics-latency.csv")).unwrap();
        let header: Vec<String> = rd.headers().unwrap().iter().map(str::to_string).collect();
        let header: Vec<&str> = header.iter().map(String::as_str).collect();
        for c in [
            "max_ns",
            "p99_9_ns",
            "p99_ns",
            "median_ns",
            "jitter_p99_p1_ns",
            "clock_overhead_ns",
            "governor",
            "pct_of_GOOSE-1A-trip",
            "pct_of_IEC60834-1-teleprotection",
            "pct_of_poll",
        ] {
            assert!(header.contains(&c), "column {c} missing");
        }
        let rows: Vec<csv::StringRecord> = rd.records().map(Result::unwrap).collect();
        assert_eq!(rows.len(), 2 * MESSAGES.len());
        let n = header.iter().position(|h| *h == "n").unwrap();
        for r in &rows {
            assert_eq!(r.len(), header.len());
            assert_eq!(&r[n], "50");
            assert!(r.iter().all(|v| !v.is_empty()), "empty cell in {r:?}");
        }
        let msgs = std::fs::read_to_string(dir.join("ics-messages.csv")).unwrap();
        assert!(csv::Reader::from_reader(msgs.as_bytes()).records().all(|r| r.unwrap().len() == 4));
        let gov = &out.record.machine.governor;
        if gov != "performance" {
            assert!(out.record.notes.iter().any(|n| n.starts_with("WARNING (ics-latency)")));
            assert!(std::fs::read_to_string(dir.join("ics-latency.md")).unwrap().contains("**Warning:**"));
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// The "in the cycle" rows reach the run's files, Markdown and notes, and the report shows
    /// them under their own label beside the cipher-only table.
    #[test]
    fn in_cycle_rows_reach_files_markdown_and_report() {
        let text = "cipher,protocol,message,bytes,measured,path,n,min_ns,p1_ns,median_ns,p99_ns,p99_9_ns,max_ns,jitter_p99_p1_ns,range_ns,pct_of_G,p99_9_pct_of_G\n\"A/x\",\"GOOSE\",\"GOOSE 160 B\",160,in the cycle (sealed),\"veth <p>\",4,10,10,20,60,60,60000,50,50,2,2\n";
        let md = cycle_markdown(text).unwrap();
        assert!(
            md.contains("| A/x | GOOSE | GOOSE 160 B | 160 | in the cycle (sealed) | 4 |") && md.contains(" 2.000 % |"),
            "{md}"
        );
        assert!(cycle_markdown("a,b\n1,2,3\n").is_err(), "a ragged file is an error");
        let dir = std::env::temp_dir().join(format!("lwcbench-ics-cycle-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        assert_eq!(cycle_html(&dir, &[]), "", "no file, no note: no part");
        let note = format!("{CYCLE_NOTE}GOOSE rows missing: <root> needed");
        assert!(cycle_html(&dir, std::slice::from_ref(&note)).contains("GOOSE rows missing: &lt;root&gt; needed"));
        std::fs::write(dir.join(CYCLE_FILE), text).unwrap();
        let h = cycle_html(&dir, &[]);
        assert!(
            h.contains("<h3>In the cycle</h3>")
                && h.contains("in the cycle (sealed)")
                && h.contains("<td>2.000 %</td>"),
            "{h}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// The report section from a hand-written latency file: the governor warning, escaped
    /// cells, the max % of budget and none of the p99.9 % columns.
    #[test]
    fn html_reads_the_latency_file() {
        let dir = std::env::temp_dir().join(format!("lwcbench-ics-html-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        assert_eq!(html(&dir, "powersave"), "", "no file, no section");
        std::fs::write(
            dir.join(LATENCY_FILE),
            "cipher,implementation,protocol,message,bytes,n,min_ns,p1_ns,median_ns,p99_ns,p99_9_ns,max_ns,jitter_p99_p1_ns,range_ns,clock_overhead_ns,governor,pct_of_G,p99_9_pct_of_G\nA,x,P,\"m, <1>\",12,10,1,1,2,3,4,30000,2,29999,20,\"powersave\",1.0,0.5\n",
        )
        .unwrap();
        let h = html(&dir, "powersave");
        assert!(
            h.contains("Warning")
                && h.contains("m, &lt;1&gt;")
                && h.contains("<td>1.000 %</td>")
                && !h.contains("p99_9_pct"),
            "{h}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
