//! `lwcbench collect`: turn the lines a board prints (format versions 1 and 2, `docs/board.md`) into
//! the usual result files. Parsing is a pure function of the text ([`parse_log`]); writing goes
//! through [`crate::output::write_rows`], so a collected run has exactly the files of a host run.
use std::collections::BTreeMap;

use crate::results::SampleRow;

/// Newest version of the board line format (docs/board.md); 2 = 1 plus the header key
/// `ad_bytes`, the associated data of every AEAD `encrypt` sample.
pub const FORMAT_VERSION: u32 = 2;
/// Oldest version still read: a version 1 log (stream-cipher firmware, the Arduino sketch)
/// collects as before.
pub const MIN_FORMAT_VERSION: u32 = 1;
/// Largest `ad_bytes` a header may state.
const MAX_AD_BYTES: u64 = 1 << 20;
const MARKER: &str = "LWCB ";
/// Malformed lines listed one by one in notes and the summary; the rest only counted.
const LIST_MAX: usize = 20;
/// Largest cpu_hz and tick_hz a header may state (1 THz); the smallest is 1 Hz.
const MAX_HZ: f64 = 1e12;
/// Largest min_sample_ticks and overhead_ticks a header may state.
const MAX_TICKS: f64 = 1e15;

/// CRC-32 (IEEE 802.3, reflected, polynomial 0xEDB88320), as zlib's `crc32`.
pub fn crc32(data: &[u8]) -> u32 {
    crc32_update(0, data)
}

/// Continue a CRC-32 over more data (`crc32_update(crc32(a), b) == crc32(a ‖ b)`).
pub fn crc32_update(crc: u32, data: &[u8]) -> u32 {
    let mut c = !crc;
    for &b in data {
        c ^= b as u32;
        for _ in 0..8 {
            c = if c & 1 != 0 { (c >> 1) ^ 0xEDB8_8320 } else { c >> 1 };
        }
    }
    !c
}

/// The header line's facts.
#[derive(Clone, Debug, PartialEq)]
pub struct Header {
    /// Line number of the header.
    pub line: usize,
    /// Line format version (1 or 2).
    pub version: u32,
    /// Associated data of every AEAD `encrypt` sample, bytes (version 2; None in version 1,
    /// which does not say).
    pub ad_bytes: Option<u64>,
    /// Board name.
    pub board: String,
    /// Microcontroller.
    pub mcu: String,
    /// Core clock, Hz.
    pub cpu_hz: f64,
    /// Timer ticks per second.
    pub tick_hz: f64,
    /// The timer the board times with.
    pub timer: String,
    /// None = the board has no cycle counter (`cycles=none`).
    pub cycles: Option<String>,
    /// Timer overhead of one start + stop, ticks (None: not reported).
    pub overhead_ticks: Option<f64>,
    /// Measured repetitions per group.
    pub reps: usize,
    /// Warm-up samples per group.
    pub warmup: usize,
    /// Groups the run measures.
    pub groups: usize,
    /// Minimum duration of one sample, ticks.
    pub min_sample_ticks: f64,
    /// Seed of the firmware's PRNG.
    pub seed: u64,
    /// (cipher, implementation, language)
    pub ciphers: Vec<(String, String, String)>,
    /// Optional keys (firmware, compiler, profile, opt, target, commit) and unknown ones.
    pub extra: BTreeMap<String, String>,
}

/// A marker line (`LWCB M`): one measured batch ran while the trigger pin was high.
#[derive(Clone, Debug, PartialEq)]
pub struct Marker {
    /// Line number.
    pub line: usize,
    /// 0, 1, 2, … over the run's triggered batches.
    pub batch: u64,
    /// `seq` of the `S`/`W` line this batch timed.
    pub seq: u64,
    /// Operations in the batch.
    pub ops: u64,
    /// Board ticks when the pin went high and low.
    pub start: u64,
    /// Board ticks when the pin went low.
    pub end: u64,
}

/// A line the collector could not use.
#[derive(Clone, Debug, PartialEq)]
pub struct Issue {
    /// 1-based line number in the log.
    pub line: usize,
    /// Why it was not used.
    pub reason: String,
}

/// Everything read from a log.
#[derive(Clone, Debug, Default)]
pub struct Parsed {
    /// The collected run's valid header.
    pub header: Option<Header>,
    /// Valid sample lines (`S`) as rows.
    pub samples: Vec<SampleRow>,
    /// Valid warm-up lines (`W`) as rows.
    pub warmup: Vec<SampleRow>,
    /// `seq` of each row of `samples` and `warmup`.
    pub sample_seqs: Vec<u64>,
    /// `seq` of each row of `warmup`.
    pub warmup_seqs: Vec<u64>,
    /// Marker lines of triggered batches (docs/power.md), in batch order.
    pub markers: Vec<Marker>,
    /// (samples, warmup, crc) of the end line, if one was read.
    pub end: Option<(usize, usize, u32)>,
    /// Lines not used, and why.
    pub malformed: Vec<Issue>,
    /// Jumps in `seq` (the line after the gap, and how many lines are missing there; a
    /// malformed line also leaves a gap).
    pub gaps: Vec<(usize, u64)>,
    /// Lines without the `LWCB ` marker (boot messages and the like).
    pub noise_lines: usize,
    /// Info lines (`LWCB I`).
    pub info_lines: usize,
    /// Runs before the collected one (their header line numbers), when the log holds several.
    pub earlier_runs: Vec<usize>,
    /// The header line of a run that starts after the collected one and has no end line.
    pub later_run: Option<usize>,
    /// Why the run is incomplete; None = complete and consistent.
    pub truncation: Option<String>,
    /// Raw lines of the collected run (header to end line), for `board-log.txt`.
    pub raw: String,
    /// Set when lines of two runs are mixed after the collected run's header (a valid sample
    /// line whose seq repeats or goes back, or one after the end line): the samples cannot be
    /// attributed to a header, so the log is refused even with --allow-truncated.
    pub interleaved: Option<String>,
}

/// Split on `\n`, `\r\n` and lone `\r`; NUL bytes dropped (some terminals pad with them).
fn split_lines(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let b = text.as_bytes();
    let (mut start, mut i) = (0, 0);
    while i < b.len() {
        if b[i] == b'\n' || b[i] == b'\r' {
            out.push(&text[start..i]);
            if b[i] == b'\r' && i + 1 < b.len() && b[i + 1] == b'\n' {
                i += 1;
            }
            start = i + 1;
        }
        i += 1;
    }
    if start < b.len() {
        out.push(&text[start..]);
    }
    out
}

fn pct_decode(s: &str) -> Result<String, String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let h = s
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| format!("bad %-escape in '{s}'"))?;
            out.push(h);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| format!("'{s}' is not UTF-8 after %-decoding"))
}

/// The body (from the marker to before ` *`) of a line, checked against its CRC.
fn checked_body(line: &str) -> Result<Option<&str>, String> {
    checked_body_after(line, MARKER)
}

/// [`checked_body`] for lines that start with `marker` (the power logger's `LWCP `).
fn checked_body_after<'a>(line: &'a str, marker: &str) -> Result<Option<&'a str>, String> {
    let Some(at) = line.find(marker) else { return Ok(None) };
    let rest = line[at..].trim_end_matches([' ', '\t']);
    let star = rest.rfind(" *").ok_or("no checksum (' *crc'): line cut off")?;
    let (body, crc) = (&rest[..star], &rest[star + 2..]);
    if crc.len() != 8 || !crc.bytes().all(|c| c.is_ascii_hexdigit()) {
        return Err(format!("checksum '{crc}' is not 8 hex digits: line cut off or corrupted"));
    }
    let want = u32::from_str_radix(crc, 16).expect("8 hex digits");
    let got = crc32(body.as_bytes());
    if want != got {
        return Err(format!("checksum mismatch (line says {want:08x}, content gives {got:08x}): corrupted"));
    }
    Ok(Some(body))
}

/// A text field from the log that becomes a CSV cell or terminal text: no control characters
/// (terminal escape sequences), and no leading `=`, `+`, `-`, `@` (spreadsheet formulas).
fn safe_text(v: &str, what: &str) -> Result<(), String> {
    no_control(v, what)?;
    if v.starts_with(['=', '+', '-', '@']) {
        return Err(format!("{what} '{v}' starts with '{}' (read as a formula by spreadsheets)", &v[..1]));
    }
    Ok(())
}

/// Header values reach run.json, the report and the terminal, not CSV cells.
fn no_control(v: &str, what: &str) -> Result<(), String> {
    if v.chars().any(char::is_control) {
        return Err(format!("{what} contains a control character"));
    }
    Ok(())
}

/// Insert a key=value field of a header or end line: a key given twice is an error, since
/// taking either value silently could change every number derived from it.
fn once<V>(kv: &mut BTreeMap<String, V>, k: &str, v: V, line: &str) -> Result<(), String> {
    if kv.insert(k.to_string(), v).is_some() {
        return Err(format!("{line} field '{k}' is given twice"));
    }
    Ok(())
}

fn num<T: std::str::FromStr>(s: &str, what: &str) -> Result<T, String> {
    s.parse().map_err(|_| format!("{what} '{s}' is not a valid number"))
}

fn parse_header(line_no: usize, fields: &[&str]) -> Result<Header, String> {
    let version_field = fields.first().ok_or("header without format version")?;
    let version = num::<u32>(version_field, "format version")?;
    if !(MIN_FORMAT_VERSION..=FORMAT_VERSION).contains(&version) {
        return Err(format!(
            "format version {version_field} is not supported (this lwcbench reads versions {MIN_FORMAT_VERSION} to {FORMAT_VERSION})"
        ));
    }
    let mut kv = BTreeMap::new();
    for f in &fields[1..] {
        let (k, v) = f.split_once('=').ok_or_else(|| format!("header field '{f}' is not key=value"))?;
        let v = pct_decode(v)?;
        no_control(&v, &format!("header field {k}"))?;
        once(&mut kv, k, v, "header")?;
    }
    let mut take = |k: &str| kv.remove(k).ok_or_else(|| format!("header lacks required key '{k}'"));
    // Every number is bounded, so no later product (ticks × 1e9 / tick_hz, groups × reps)
    // can overflow or become infinite.
    let within = |v: f64, k: &str, lo: f64, hi: f64| {
        if v.is_finite() && v >= lo && v <= hi {
            Ok(v)
        } else {
            Err(format!("header {k}={v} is not a number from {lo} to {hi:e}"))
        }
    };
    let count = |v: usize, k: &str, lo: usize, hi: usize| {
        if (lo..=hi).contains(&v) {
            Ok(v)
        } else {
            Err(format!("header {k}={v} is not a count from {lo} to {hi}"))
        }
    };
    let board = take("board")?;
    let mcu = take("mcu")?;
    let cpu_hz = within(num(&take("cpu_hz")?, "cpu_hz")?, "cpu_hz", 1.0, MAX_HZ)?;
    let tick_hz = within(num(&take("tick_hz")?, "tick_hz")?, "tick_hz", 1.0, MAX_HZ)?;
    let timer = take("timer")?;
    let cycles = Some(take("cycles")?).filter(|c| c != "none");
    let reps = count(num(&take("reps")?, "reps")?, "reps", 1, crate::plan::MAX_REPS)?;
    let warmup = count(num(&take("warmup")?, "warmup")?, "warmup", 0, crate::plan::MAX_REPS)?;
    let groups = count(num(&take("groups")?, "groups")?, "groups", 1, crate::plan::MAX_REPS)?;
    if groups * (reps + warmup) > crate::plan::MAX_TOTAL_SAMPLES {
        return Err(format!(
            "header groups={groups} × (reps={reps} + warmup={warmup}) is more than {} samples",
            crate::plan::MAX_TOTAL_SAMPLES
        ));
    }
    let min_sample_ticks =
        within(num(&take("min_sample_ticks")?, "min_sample_ticks")?, "min_sample_ticks", 0.0, MAX_TICKS)?;
    let seed = num(&take("seed")?, "seed")?;
    let mut ciphers = Vec::new();
    for c in take("ciphers")?.split(',') {
        let p: Vec<&str> = c.split('/').collect();
        match p.as_slice() {
            [a, b, l] if !a.is_empty() && !b.is_empty() && !l.is_empty() => {
                ciphers.push((a.to_string(), b.to_string(), l.to_string()))
            }
            _ => return Err(format!("header ciphers entry '{c}' is not cipher/implementation/language")),
        }
    }
    // version 2 states the AEADs' associated data; in version 1 the key is an unknown one
    let ad_bytes = if version >= 2 {
        let v = kv.remove("ad_bytes").ok_or("header lacks required key 'ad_bytes' (format version 2)")?;
        let n: u64 = num(&v, "ad_bytes")?;
        if n > MAX_AD_BYTES {
            return Err(format!("header ad_bytes={n} is not a count from 0 to {MAX_AD_BYTES}"));
        }
        Some(n)
    } else {
        None
    };
    let overhead_ticks = kv
        .remove("overhead_ticks")
        .map(|v| within(num::<f64>(&v, "overhead_ticks")?, "overhead_ticks", 0.0, MAX_TICKS))
        .transpose()?;
    Ok(Header {
        line: line_no,
        version,
        ad_bytes,
        board,
        mcu,
        cpu_hz,
        tick_hz,
        timer,
        cycles,
        overhead_ticks,
        reps,
        warmup,
        groups,
        min_sample_ticks,
        seed,
        ciphers,
        extra: kv,
    })
}

pub mod logger;
mod write;

pub use write::{write_collected, write_collected_with, Source};

const FAMILIES: [&str; 3] = ["stream", "block", "aead"];
const SCENARIOS: [&str; 7] = ["full", "keystream", "init", "keysetup", "encrypt", "decrypt", "reading"];
const KIVS: [&str; 4] = ["s,s", "s,r", "r,s", "r,r"];

/// Fields of an `S`/`W` line (after the type) → (seq, row).
fn parse_sample(h: &Header, f: &[&str]) -> Result<(u64, SampleRow), String> {
    if f.len() != 13 {
        return Err(format!("{} fields after the type, 13 expected", f.len()));
    }
    let d = |i: usize| pct_decode(f[i]);
    let seq: u64 = num(f[0], "seq")?;
    let (cipher, implementation, language) = (d(1)?, d(2)?, d(3)?);
    for (v, what) in [(&cipher, "cipher"), (&implementation, "implementation"), (&language, "language")] {
        safe_text(v, what)?;
    }
    if !h.ciphers.iter().any(|(c, i, l)| *c == cipher && *i == implementation && *l == language) {
        return Err(format!("{cipher}/{implementation}/{language} is not in the header's cipher list"));
    }
    let family = d(4)?;
    if !FAMILIES.contains(&family.as_str()) {
        return Err(format!("unknown family '{family}'"));
    }
    let scenario = d(5)?;
    if !SCENARIOS.contains(&scenario.as_str()) {
        return Err(format!("unknown scenario '{scenario}'"));
    }
    let kiv = d(6)?;
    if !KIVS.contains(&kiv.as_str()) {
        return Err(format!("unknown key/IV variant '{kiv}'"));
    }
    let size_bits: u64 = num(f[7], "size_bits")?;
    let payload = d(8)?;
    safe_text(&payload, "payload")?;
    if payload != "random" && !payload.starts_with("dataset:") {
        return Err(format!("payload '{payload}' is neither 'random' nor 'dataset:<name>'"));
    }
    let rep: u32 = num(f[9], "rep")?;
    let batch: u64 = num(f[10], "batch")?;
    if batch == 0 {
        return Err("batch 0: a sample times at least one operation".into());
    }
    let ticks: u64 = num(f[11], "ticks")?;
    let cycles: Option<u64> = if f[12] == "-" { None } else { Some(num(f[12], "cycles")?) };
    if cycles.is_some() && h.cycles.is_none() {
        return Err("cycles given although the header says cycles=none".into());
    }
    let row = SampleRow {
        cipher,
        implementation,
        language,
        family,
        scenario,
        kiv,
        size_bits,
        payload,
        rep,
        batch,
        ns_per_op: ticks as f64 * 1e9 / h.tick_hz / batch as f64,
        cycles_per_op: cycles.map(|c| c as f64 / batch as f64),
    };
    if ticks == 0 {
        return Err("0 ticks: the batch ran below the timer's resolution (raise min_sample_ticks)".into());
    }
    // what `report` and `compare` would refuse in samples.csv is refused here, with its line
    if let Some((col, rule)) = row.impossible() {
        return Err(format!("{col} of ticks {ticks}, cycles {}, batch {batch} {rule}", f[12]));
    }
    Ok((seq, row))
}

/// Fields of an `M` line (after the type).
fn parse_marker(line: usize, f: &[&str]) -> Result<Marker, String> {
    if f.len() != 5 {
        return Err(format!("{} fields after the type, 5 expected", f.len()));
    }
    let m = Marker {
        line,
        batch: num(f[0], "batch")?,
        seq: num(f[1], "seq")?,
        ops: num(f[2], "operations")?,
        start: num(f[3], "start ticks")?,
        end: num(f[4], "end ticks")?,
    };
    if m.ops == 0 {
        return Err("0 operations: a batch runs at least one".into());
    }
    if m.end < m.start {
        return Err(format!("end ticks {} before start ticks {}", m.end, m.start));
    }
    Ok(m)
}

fn parse_end(f: &[&str]) -> Result<(usize, usize, u32), String> {
    let mut kv = BTreeMap::new();
    for x in f {
        let (k, v) = x.split_once('=').ok_or_else(|| format!("end field '{x}' is not key=value"))?;
        once(&mut kv, k, v, "end line")?;
    }
    let get = |k: &str| kv.get(k).copied().ok_or_else(|| format!("end line lacks '{k}'"));
    let crc = u32::from_str_radix(get("crc")?, 16).map_err(|_| "end line crc is not hex".to_string())?;
    Ok((num(get("samples")?, "samples")?, num(get("warmup")?, "warmup")?, crc))
}

/// One `S` (sample) or `W` (warm-up) line of the collected run: its seq continues the run's
/// (a gap is noted, a repeat refused) and its body goes into the run's crc.
fn take_sample(
    p: &mut Parsed,
    (next_seq, run_crc): (&mut u64, &mut u32),
    no: usize,
    body: &str,
    fields: &[&str],
) -> Result<(), String> {
    let Some(h) = p.header.as_ref() else { return Err("sample line but the header is malformed".into()) };
    let (seq, row) = parse_sample(h, &fields[2..])?;
    if seq < *next_seq {
        p.interleaved.get_or_insert(format!("line {no}: seq {seq} repeats or goes back (expected {next_seq})"));
        return Err(format!("seq {seq} repeats or goes back (expected {next_seq})"));
    }
    if seq > *next_seq {
        p.gaps.push((no, seq - *next_seq));
    }
    // seq 2^64-1 has no successor: a following "0" must not be accepted
    *next_seq = seq.checked_add(1).ok_or("seq 18446744073709551615 has no successor")?;
    *run_crc = crc32_update(*run_crc, body.as_bytes());
    *run_crc = crc32_update(*run_crc, b"\n");
    if fields.get(1) == Some(&"S") {
        p.samples.push(row);
        p.sample_seqs.push(seq);
    } else {
        p.warmup.push(row);
        p.warmup_seqs.push(seq);
    }
    Ok(())
}

/// Why the collected run is incomplete or inconsistent (None: it is whole): its header line
/// (index `start`) and the crc of the sample lines received.
fn truncation(p: &Parsed, start: usize, run_crc: u32) -> Option<String> {
    match (&p.header, p.end) {
        (None, _) => {
            // the reason names the field, so the one error line says what to fix
            let why = p.malformed.iter().find(|m| m.line == start + 1).map(|m| m.reason.as_str()).unwrap_or("");
            Some(format!("the header at line {} is malformed: {}", start + 1, crate::text::one_line(why, 300)))
        }
        (Some(_), None) => Some(format!(
            "no end line (LWCB E …): the log stops after {} sample and {} warm-up lines",
            p.samples.len(),
            p.warmup.len()
        )),
        (Some(h), Some((ns, nw, crc))) => {
            let mut why = Vec::new();
            if ns != p.samples.len() || nw != p.warmup.len() {
                why.push(format!(
                    "end line counts {ns} sample + {nw} warm-up lines, {} + {} valid ones received",
                    p.samples.len(),
                    p.warmup.len()
                ));
            } else if crc != run_crc {
                why.push(format!("end line crc {crc:08x} differs from the received lines' {run_crc:08x}"));
            }
            // an overflowing product is no promise at all (it wrapped to match before)
            let (ps, pw) = (h.groups.checked_mul(h.reps), h.groups.checked_mul(h.warmup));
            if ps.is_none() || pw.is_none() {
                why.push(format!("header groups={} × reps={} / warmup={} overflows", h.groups, h.reps, h.warmup));
            } else if Some(ns) != ps || Some(nw) != pw {
                why.push(format!(
                    "header promised {} × {} sample + {} × {} warm-up lines, end line says {ns} + {nw}",
                    h.groups, h.reps, h.groups, h.warmup
                ));
            }
            (!why.is_empty()).then(|| why.join("; "))
        }
    }
}

/// Parse a whole log. Never fails: everything wrong is in `malformed` / `truncation`.
pub fn parse_log(text: &str) -> Parsed {
    let text = text.replace('\0', "");
    let lines = split_lines(&text);
    // Valid header and end lines, by line index.
    let (mut header_lines, mut end_lines) = (Vec::new(), Vec::new());
    for (i, l) in lines.iter().enumerate() {
        if let Ok(Some(body)) = checked_body(l) {
            if body.starts_with("LWCB H ") {
                header_lines.push(i);
            } else if body.starts_with("LWCB E ") {
                end_lines.push(i);
            }
        }
    }
    let mut p = Parsed::default();
    // The collected run is the last one that reaches its end line: a header after it without
    // an end line is a run the board started later (a second kick, a reset) and cut off.
    // Without any complete run, the last header's run is collected (and is truncated).
    let complete = |k: usize| {
        let to = header_lines.get(k + 1).copied().unwrap_or(lines.len());
        end_lines.iter().any(|&e| header_lines[k] < e && e < to)
    };
    let chosen = match (0..header_lines.len()).rev().find(|&k| complete(k)).or(header_lines.len().checked_sub(1)) {
        Some(k) => k,
        None => {
            // Without a header nothing can be validated; count what is there.
            for (i, l) in lines.iter().enumerate() {
                match checked_body(l) {
                    Ok(None) => p.noise_lines += 1,
                    Ok(Some(_)) => p.malformed.push(Issue { line: i + 1, reason: "line before any header".into() }),
                    Err(e) => p.malformed.push(Issue { line: i + 1, reason: e }),
                }
            }
            p.truncation = Some("no valid header line (LWCB H …) in the log".into());
            return p;
        }
    };
    let start = header_lines[chosen];
    p.earlier_runs = header_lines[..chosen].iter().map(|i| i + 1).collect();
    p.later_run = header_lines.get(chosen + 1).map(|i| i + 1);
    p.noise_lines = start - chosen; // lines before the collected run, other than headers
    let stop = header_lines.get(chosen + 1).copied().unwrap_or(lines.len());
    let mut next_seq = 0u64;
    let mut run_crc = 0u32;
    let mut end_seen = false;
    for (i, line) in lines.iter().enumerate().take(stop).skip(start) {
        let no = i + 1;
        if end_seen {
            if matches!(checked_body(line), Ok(Some(b)) if b.starts_with("LWCB I ")) {
                p.info_lines += 1; // e.g. the firmware's "ready" after a run
            } else if matches!(checked_body(line), Ok(Some(b)) if b.starts_with("LWCB S ") || b.starts_with("LWCB W "))
            {
                p.interleaved.get_or_insert(format!("line {no}: a sample line after the end line"));
                p.malformed.push(Issue { line: no, reason: "sample line after the end line".into() });
            } else if line.contains(MARKER) {
                p.malformed.push(Issue { line: no, reason: "after the end line".into() });
            } else {
                p.noise_lines += 1;
            }
            continue;
        }
        let body = match checked_body(line) {
            Ok(None) => {
                p.noise_lines += 1;
                continue;
            }
            Ok(Some(b)) => b,
            Err(e) => {
                p.malformed.push(Issue { line: no, reason: e });
                continue;
            }
        };
        // (a checked body is a line holding the marker)
        let at = line.find(MARKER).unwrap_or(0);
        p.raw.push_str(line[at..].trim_end());
        p.raw.push('\n');
        let fields: Vec<&str> = body.split(' ').collect();
        let kind = fields.get(1).copied().unwrap_or("");
        let res: Result<(), String> = match kind {
            "H" => parse_header(no, &fields[2..]).map(|h| p.header = Some(h)),
            "I" => {
                p.info_lines += 1;
                Ok(())
            }
            "S" | "W" => take_sample(&mut p, (&mut next_seq, &mut run_crc), no, body, &fields),
            // Markers are outside seq and the end line's crc: a board without the trigger
            // prints the same S/W lines.
            "M" => parse_marker(no, &fields[2..]).and_then(|m| match p.markers.last() {
                Some(l) if m.batch <= l.batch => {
                    Err(format!("batch {} repeats or goes back (last {})", m.batch, l.batch))
                }
                Some(l) if m.start < l.end => {
                    Err(format!("start ticks {} before the last batch's end {}", m.start, l.end))
                }
                _ => {
                    p.markers.push(m);
                    Ok(())
                }
            }),
            "E" => parse_end(&fields[2..]).map(|e| {
                p.end = Some(e);
                end_seen = true;
            }),
            other => Err(format!("unknown line type '{other}'")),
        };
        if let Err(e) = res {
            p.malformed.push(Issue { line: no, reason: e });
        }
    }
    p.truncation = truncation(&p, start, run_crc);
    p
}

impl Parsed {
    /// One-paragraph account of what was read (printed and stored in run.json notes).
    pub fn summary_lines(&self) -> Vec<String> {
        let mut v = vec![format!(
            "collected {} sample and {} warm-up lines; {} malformed line(s) not used; {} noise line(s) and {} info line(s) ignored",
            self.samples.len(),
            self.warmup.len(),
            self.malformed.len(),
            self.noise_lines,
            self.info_lines
        )];
        for m in self.malformed.iter().take(LIST_MAX) {
            // reasons quote the log: escaped and cut before they reach run.json notes
            v.push(format!("malformed line {}: {}", m.line, crate::text::one_line(&m.reason, 300)));
        }
        if self.malformed.len() > LIST_MAX {
            v.push(format!("… and {} more malformed lines", self.malformed.len() - LIST_MAX));
        }
        if !self.gaps.is_empty() {
            let lost: u64 = self.gaps.iter().map(|g| g.1).sum();
            let at: Vec<String> =
                self.gaps.iter().take(LIST_MAX).map(|g| format!("before line {} ({})", g.0, g.1)).collect();
            v.push(format!("{lost} line(s) missing or malformed by the sequence numbers: {}", at.join(", ")));
        }
        if !self.earlier_runs.is_empty() {
            let l: Vec<String> = self.earlier_runs.iter().map(|x| x.to_string()).collect();
            v.push(format!(
                "the log holds {} earlier run(s) (headers at line {}); only the last run was collected",
                l.len(),
                l.join(", ")
            ));
        }
        if let Some(l) = self.later_run {
            v.push(format!(
                "a later run starts at line {l} and has no end line; the complete run before it was collected"
            ));
        }
        if let Some(t) = &self.truncation {
            v.push(format!("TRUNCATED: {t}"));
        }
        v
    }
}

#[cfg(test)]
mod tests;
