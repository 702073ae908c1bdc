//! The seven targets: what each feeds the input to and what it checks.
use lwcbench_engine::{collect, dataset, external, video};
use lwcbench_link::wire::frame::Proto;

use crate::{check_error, Rng, Scratch, Target};

/// Every target.
pub const ALL: [Target; 7] = [BOARD_LOG, POWER_LOG, DATASET, Y4M, ENGINE_LINES, RUN_DIR, LINK_FRAME];

// ---- board log (`lwcbench collect`) ----------------------------------------------------------

/// Recompute the checksum of every `LWCB … *crc` line, so mutated content gets past the CRC
/// check and reaches the field parsers (a random mutation almost never keeps a CRC valid).
pub fn fix_crcs(_: &mut Rng, input: Vec<u8>) -> Vec<u8> {
    let text = String::from_utf8_lossy(&input).into_owned();
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        match (line.find("LWCB ").or_else(|| line.find("LWCP ")), line.rfind(" *")) {
            (Some(a), Some(b)) if b > a => {
                let body = &line[a..b];
                out.push_str(&line[..b]);
                out.push_str(&format!(" *{:08x}", collect::crc32(body.as_bytes())));
            }
            _ => out.push_str(line),
        }
    }
    out.into_bytes()
}

/// Values that are not a finite number, or are out of any range a measurement gives.
pub const NON_FINITE: [&str; 9] = ["inf", "-inf", "NaN", "nan", "1e400", "-1e400", "0", "-1", "3.5e38"];

/// Repeat one key=value field of a header or end line (`LWCB H`, `LWCB E`, `LWCP H`), with its
/// own value or another one, then recompute the checksums ([`fix_crcs`]): a repeated field must
/// be refused, never resolved to one of its values.
pub fn repeat_field(rng: &mut Rng, input: Vec<u8>) -> Vec<u8> {
    let text = String::from_utf8_lossy(&input).into_owned();
    let lines: Vec<&str> = text.split('\n').collect();
    let keyed: Vec<usize> =
        (0..lines.len()).filter(|&i| ["LWCB H ", "LWCB E ", "LWCP H "].iter().any(|m| lines[i].contains(m))).collect();
    if keyed.is_empty() || rng.chance(3) {
        return fix_crcs(rng, input);
    }
    let i = keyed[rng.below(keyed.len())];
    let star = lines[i].rfind(" *").unwrap_or(lines[i].len());
    let fields: Vec<&str> = lines[i][..star].split(' ').filter(|f| f.contains('=')).collect();
    if fields.is_empty() {
        return fix_crcs(rng, input);
    }
    let f = fields[rng.below(fields.len())];
    let extra = if rng.chance(2) {
        f.to_string()
    } else {
        format!("{}={}", f.split('=').next().unwrap_or(""), NON_FINITE[rng.below(NON_FINITE.len())])
    };
    let mut out: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    out[i] = format!("{} {extra}{}", &lines[i][..star], &lines[i][star..]);
    fix_crcs(rng, out.join("\n").into_bytes())
}

/// The keys that line `no` (1-based) of `text` gives more than once, as the parsers split
/// lines (`\n`, `\r\n`, a lone `\r`; NULs dropped) and header fields (one space each).
fn repeated_keys(text: &str, no: usize) -> Vec<String> {
    let text = text.replace('\0', "");
    let b = text.as_bytes();
    let (mut n, mut start, mut i) = (1, 0, 0);
    let mut line = &text[..0];
    while i <= b.len() {
        if i == b.len() || b[i] == b'\n' || b[i] == b'\r' {
            if n == no {
                line = &text[start..i];
                break;
            }
            if i + 1 < b.len() && b[i] == b'\r' && b[i + 1] == b'\n' {
                i += 1;
            }
            (n, start) = (n + 1, i + 1);
        }
        i += 1;
    }
    let Some(at) = line.find("LWCB H ").or_else(|| line.find("LWCP H ")) else { return vec![] };
    let body = line[at..].trim_end_matches([' ', '\t']);
    let body = &body[..body.rfind(" *").unwrap_or(body.len())];
    let mut seen = std::collections::BTreeSet::new();
    body.split(' ')
        .skip(3)
        .filter_map(|f| f.split_once('='))
        .filter(|(k, _)| !seen.insert(*k))
        .map(|(k, _)| k.to_string())
        .collect()
}

fn board_log(input: &[u8], s: &mut Scratch) -> Result<(), String> {
    let text = String::from_utf8_lossy(input);
    let p = collect::parse_log(&text);
    if let Some(h) = &p.header {
        let r = repeated_keys(&text, h.line);
        if !r.is_empty() {
            return Err(format!("header at line {} accepted with {r:?} given twice", h.line));
        }
    }
    // The summary lines quote the log (unbounded here); the CLI
    // prints them through text::one_line, whose output must be one bounded line.
    for l in p.summary_lines() {
        check_error(&lwcbench_engine::text::one_line(&l, 400))?;
    }
    for r in p.samples.iter().chain(&p.warmup) {
        // what report and compare refuse in samples.csv, the collector must not write
        if let Some((col, rule)) = r.impossible() {
            return Err(format!("sample accepted whose {col} {rule}: {r:?}"));
        }
    }
    if p.samples.is_empty() {
        return Ok(());
    }
    // Write what was accepted (as --allow-truncated would): must succeed or fail cleanly.
    let out = s.dir.path().join("run");
    let src = collect::Source {
        description: "fuzz log".into(),
        args: vec!["lwcbench".into(), "collect".into()],
        started: std::time::SystemTime::now(),
        report: None,
    };
    match collect::write_collected(&p, &out, true, true, &src) {
        Ok(_) => Ok(()),
        Err(e) => check_error(&e),
    }
}

/// A board's serial log, through `lwcbench collect`'s parser.
pub const BOARD_LOG: Target = Target { name: "board-log", check: board_log, fixup: Some(repeat_field) };

// ---- power log beside a board log (`lwcbench collect --power-…`) -------------------------------

/// Separates the board log from the logger's log in a power-log input.
pub const POWER_SPLIT: &str = "\n=== power ===\n";

fn power_log(input: &[u8], s: &mut Scratch) -> Result<(), String> {
    use collect::logger;
    let text = String::from_utf8_lossy(input);
    let (board, power) = text.split_once(POWER_SPLIT).unwrap_or((&text, ""));
    let p = collect::parse_log(board);
    let log = logger::parse_logger(power);
    if let Some(h) = &log.header {
        let r = repeated_keys(power, h.line);
        if !r.is_empty() {
            return Err(format!("logger header at line {} accepted with {r:?} given twice", h.line));
        }
    }
    for l in log.summary_lines("power log") {
        check_error(&lwcbench_engine::text::one_line(&l, 400))?;
    }
    for x in &log.samples {
        if !(x.volts.is_finite() && x.amps.is_finite()) {
            return Err(format!("sample accepted with {} V, {} A", x.volts, x.amps));
        }
    }
    let r = match logger::join(&p, &log, &logger::JoinOptions { min_samples: 3 }) {
        Ok(r) => r,
        Err(e) => return check_error(&e),
    };
    for b in &r.batches {
        let v = [b.energy_j, b.u_random_j, b.u_sys_j, b.duration_s];
        if v.iter().any(|x| !x.is_finite()) || b.u_random_j < 0.0 || b.u_sys_j < 0.0 || b.samples < 3 {
            return Err(format!("batch {} accepted with energy {v:?} from {} samples", b.batch, b.samples));
        }
    }
    for g in logger::by_group(&p, &r) {
        if !(g.energy_per_op_j_measured.is_finite() && g.energy_per_op_u_j.is_finite()) {
            return Err(format!("group energy {} ± {}", g.energy_per_op_j_measured, g.energy_per_op_u_j));
        }
    }
    // Writing a run directory costs far more than parsing (files synced, a report rendered):
    // one accepted input in eight is written, so the CI budget goes to parsing and joining.
    if !input.len().is_multiple_of(8) {
        return Ok(());
    }
    let out = s.dir.path().join("power-run");
    let src = collect::Source {
        description: "fuzz log".into(),
        args: vec!["lwcbench".into(), "collect".into()],
        started: std::time::SystemTime::now(),
        report: None,
    };
    let notes = log.summary_lines("power log");
    match collect::logger::write_collected_with_power(&p, &out, true, true, &src, Some((&r, &notes))) {
        Ok(_) => Ok(()),
        Err(e) => check_error(&e),
    }
}

/// A board log and a power logger's log ([`POWER_SPLIT`] between them), through `collect`.
pub const POWER_LOG: Target = Target { name: "power-log", check: power_log, fixup: Some(repeat_field) };

// ---- dataset CSV ------------------------------------------------------------------------------

/// Break a dataset the ways a reader must refuse: a header name emptied or repeated, a cell
/// added past the header, a reading beyond float32 or not finite.
pub fn dataset_faults(rng: &mut Rng, input: Vec<u8>) -> Vec<u8> {
    let text = String::from_utf8_lossy(&input).into_owned();
    let mut lines: Vec<String> = text.split('\n').map(String::from).collect();
    if lines.len() < 2 || rng.chance(3) {
        return input;
    }
    let r = 1 + rng.below(lines.len() - 1);
    match rng.below(4) {
        0 => {
            let mut h: Vec<String> = lines[0].split(',').map(String::from).collect();
            let i = rng.below(h.len());
            h[i] = if rng.chance(2) { String::new() } else { h[rng.below(h.len())].to_uppercase() };
            lines[0] = h.join(",");
        }
        1 => lines[r].push_str([",", ",1", ",x"][rng.below(3)]),
        _ => {
            let mut c: Vec<String> = lines[r].split(',').map(String::from).collect();
            let i = rng.below(c.len());
            c[i] = ["1e39", "-3.5e38", "3.4028236e38", "1e400", "NaN", "inf"][rng.below(6)].to_string();
            lines[r] = c.join(",");
        }
    }
    lines.join("\n").into_bytes()
}

/// Without quotes (so a cell is what lies between commas): every line holds at most as many
/// cells as the header, and the header's names are there and differ.
fn dataset_shape(text: &str, d: &dataset::Dataset) -> Result<(), String> {
    let names: Vec<String> = d.channels.iter().map(|c| c.name.to_ascii_lowercase()).collect();
    if names.iter().any(String::is_empty) || (1..names.len()).any(|i| names[..i].contains(&names[i])) {
        return Err(format!("accepted channel names {names:?}"));
    }
    if text.contains('"') {
        return Ok(());
    }
    // as the reader: `\r`, `\n` or both end a line, empty lines and rows of empty cells skipped
    let mut lines = text.split(['\r', '\n']).filter(|l| !l.is_empty());
    let width = lines.next().map_or(0, |h| h.split(',').count());
    let wide = |l: &&str| l.split(',').count() > width && !l.split(',').all(|c| c.trim().is_empty());
    match lines.find(wide) {
        Some(l) => Err(format!("accepted a line of more than {width} cells: {l:?}")),
        None => Ok(()),
    }
}

fn dataset(input: &[u8], _: &mut Scratch) -> Result<(), String> {
    for enc in [dataset::TextEncoding::Utf8, dataset::TextEncoding::Latin1] {
        let text = match enc.decode(input, "f.csv") {
            Ok(t) => t,
            Err(e) => {
                check_error(&e)?;
                continue;
            }
        };
        let d = match dataset::Dataset::parse(&text, "f.csv", "f", &[]) {
            Ok(d) => d,
            Err(e) => {
                check_error(&e)?;
                continue;
            }
        };
        if d.rows.iter().any(|r| r.len() != d.channels.len() || r.iter().any(|v| !v.is_finite())) {
            return Err("accepted a row of the wrong width or a non-finite reading".into());
        }
        dataset_shape(&text, &d)?;
        let fits = d.rows.iter().flatten().all(|v| (*v as f32).is_finite());
        match d.check_float32() {
            Ok(()) if !fits => return Err("check_float32 passed a reading beyond float32".into()),
            Err(e) if fits => return Err(format!("check_float32 refused readings that fit: {e}")),
            Err(e) => check_error(&e)?,
            Ok(()) => {}
        }
        for encoding in [dataset::Encoding::Float32, dataset::Encoding::Int32 { scale: 1000.0 }] {
            for layout in [dataset::Layout::Interleaved, dataset::Layout::PerChannel] {
                let readings = d.readings_available().clamp(1, 50);
                let enc = dataset::Encode { encoding, layout, readings, ..Default::default() };
                match d.payload(&enc) {
                    Ok(p) if p.len() != 4 * readings => {
                        return Err(format!("{} bytes for {readings} readings", p.len()))
                    }
                    Ok(p)
                        if encoding == dataset::Encoding::Float32
                            && p.chunks(4).any(|w| !f32::from_be_bytes([w[0], w[1], w[2], w[3]]).is_finite()) =>
                    {
                        return Err("a float32 payload holds a non-finite reading".into())
                    }
                    Ok(_) => {}
                    Err(e) => check_error(&e)?,
                }
            }
        }
    }
    Ok(())
}

/// A sensor dataset CSV, in both text encodings.
pub const DATASET: Target = Target { name: "dataset", check: dataset, fixup: Some(dataset_faults) };

// ---- y4m --------------------------------------------------------------------------------------

fn y4m(input: &[u8], _: &mut Scratch) -> Result<(), String> {
    for max in [None, Some(1), Some(2)] {
        match video::Clip::parse(input, "f.y4m", "f", max) {
            Ok(c) => {
                if c.data.len() != c.frames * c.frame_bytes || c.frames == 0 || max.is_some_and(|m| c.frames > m) {
                    return Err(format!(
                        "inconsistent clip: {} frames of {} bytes, {} bytes",
                        c.frames,
                        c.frame_bytes,
                        c.data.len()
                    ));
                }
            }
            Err(e) => check_error(&e)?,
        }
    }
    Ok(())
}

/// A Y4M video clip.
pub const Y4M: Target = Target { name: "y4m", check: y4m, fixup: None };

// ---- engine line protocol ---------------------------------------------------------------------

fn engine_lines(input: &[u8], _: &mut Scratch) -> Result<(), String> {
    let text = String::from_utf8_lossy(input);
    for line in text.split('\n').take(1000) {
        if let Err(e) = external::parse_line(line) {
            check_error(&lwcbench_engine::text::one_line(&e, 400))?;
        }
    }
    // The whole input as an engine's answers to hello and list.
    let mut e = external::Engine::over("fuzz-engine", Box::new(std::io::sink()), std::io::Cursor::new(input.to_vec()));
    match e.handshake() {
        Ok(()) => {
            let _ = e.entries();
            Ok(())
        }
        // Engine errors quote the engine's text; the CLI prints them through text::one_line.
        Err(m) => check_error(&lwcbench_engine::text::one_line(&m, 400)),
    }
}

/// Lines of the external-engine protocol.
pub const ENGINE_LINES: Target = Target { name: "engine-lines", check: engine_lines, fixup: None };

// ---- result directory (report / compare) ------------------------------------------------------

/// Split an input in the corpus's pack format — `=== name ===` lines, each followed by the
/// file's content — into files.
pub fn unpack(input: &[u8]) -> Vec<(String, Vec<u8>)> {
    let text = String::from_utf8_lossy(input);
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    for line in text.split_inclusive('\n') {
        let t = line.trim_end();
        if let Some(name) = t.strip_prefix("=== ").and_then(|r| r.strip_suffix(" ===")) {
            // (a name the file system takes: mutations can make one longer than 255 bytes)
            let safe = name.len() <= 100
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '_' || c == '-');
            if safe && !name.starts_with('.') && !name.is_empty() {
                files.push((name.to_string(), Vec::new()));
                continue;
            }
        }
        if let Some(f) = files.last_mut() {
            f.1.extend_from_slice(line.as_bytes());
        }
    }
    files
}

/// Put a value no measurement gives ([`NON_FINITE`]) into a numeric cell of samples.csv or
/// summary.csv: the readers must refuse it, not panic on it in the statistics or charts.
pub fn bad_cell(rng: &mut Rng, input: Vec<u8>) -> Vec<u8> {
    let text = String::from_utf8_lossy(&input).into_owned();
    let mut lines: Vec<String> = text.split('\n').map(String::from).collect();
    let mut file = "";
    let rows: Vec<usize> = (0..lines.len())
        .filter(|&i| {
            if let Some(n) = lines[i].strip_prefix("=== ") {
                file = if n.starts_with("samples.csv") || n.starts_with("summary.csv") { "csv" } else { "" };
                return false;
            }
            // data rows: not the header (which starts with "cipher")
            !file.is_empty() && !lines[i].starts_with("cipher") && lines[i].contains(',')
        })
        .collect();
    if rows.is_empty() || rng.chance(3) {
        return input;
    }
    let i = rows[rng.below(rows.len())];
    let mut cells: Vec<String> = lines[i].split(',').map(String::from).collect();
    let numeric: Vec<usize> = (0..cells.len()).filter(|&c| cells[c].parse::<f64>().is_ok()).collect();
    if let Some(&c) = numeric.get(rng.below(numeric.len().max(1))) {
        cells[c] = NON_FINITE[rng.below(NON_FINITE.len())].to_string();
        lines[i] = cells.join(",");
    }
    lines.join("\n").into_bytes()
}

fn run_dir(input: &[u8], s: &mut Scratch) -> Result<(), String> {
    let dir = s.dir.path().join("run");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| format!("scratch: {e}"))?;
    for (name, bytes) in unpack(input) {
        std::fs::write(dir.join(&name), bytes).map_err(|e| format!("scratch: {e}"))?;
    }
    match lwcbench_report::Run::load(&dir) {
        Ok(run) => {
            if let Some(r) = run.samples.iter().find(|r| r.impossible().is_some()) {
                return Err(format!("a sample no measurement gives was read: {r:?}"));
            }
            if let Some(r) = run.summary.iter().find(|r| r.impossible().is_some()) {
                return Err(format!("a non-finite statistic was read: {r:?}"));
            }
            // what `compare` does with two runs
            let rows = lwcbench_report::compare::compare_runs(&run, &run);
            let _ = lwcbench_report::compare::text_table(&rows);
        }
        Err(e) => return check_error(&e),
    }
    // Rendering is where bad values would panic; writing the page (synced files, a renamed
    // directory) costs far more, so one input in eight is written.
    if !input.len().is_multiple_of(8) {
        return lwcbench_report::render_html(&dir).map(|_| ()).or_else(|e| check_error(&e));
    }
    match lwcbench_report::write_report(&dir) {
        Ok(_) => Ok(()),
        Err(e) => check_error(&e),
    }
}

/// A result directory, through the report's loader, `compare` and the HTML report.
pub const RUN_DIR: Target = Target { name: "run-dir", check: run_dir, fixup: Some(bad_cell) };

// ---- link frame (`lwcbench link`: an MQTT payload at the gateway) ----------------------------

/// The master key of the link target's devices (its seed frames are sealed under it).
pub const LINK_MASTER: [u8; 32] = [0x5a; 32];
/// Devices provisioned at the link target's gateways.
pub const LINK_DEVICES: std::ops::RangeInclusive<u32> = 0..=3;
/// The suites the link target's gateways are provisioned with: an AEAD, the stream + Poly1305
/// composition, and DRACO/rust-fast (opened in batches on the bit-sliced cipher).
pub const LINK_SUITES: [&str; 3] = ["Ascon-AEAD128", "Trivium", "DRACO/rust-fast"];

/// Authenticated, and for a stream cipher also the confidentiality-only mode (an AEAD has none).
pub fn link_modes(suite: &lwcbench_link::wire::suite::Suite) -> Vec<bool> {
    match suite.kind {
        lwcbench_link::wire::suite::Kind::Aead => vec![false],
        _ => vec![false, true],
    }
}

fn link_gateway(
    suite: &lwcbench_link::wire::suite::Suite,
    unauthenticated: bool,
) -> lwcbench_link::gateway::checks::Gateway {
    let m = lwcbench_link::wire::keys::MasterKey::from_bytes(LINK_MASTER);
    lwcbench_link::gateway::checks::Gateway::new(suite, &m, LINK_DEVICES, 64, unauthenticated).expect("gateway")
}

/// One MQTT payload through the gateway's receive path (`transport::mqtt::received_frame`, then
/// `Gateway::open` and `Gateway::open_many`) for each suite, authenticated and not. Contract: no
/// panic; a payload above 256 KiB is `malformed`; an accepted frame is exactly what the device
/// seals for its header's device and counter (nothing forged or altered opens), and opening it
/// again is a replay; the batch opener gives the one-by-one verdicts and tally.
fn link_frame(input: &[u8], _: &mut Scratch) -> Result<(), String> {
    use lwcbench_link::gateway::checks::Refusal;
    // The input grown past the frame limit (the mutator stops at 256 KiB): refused, not copied.
    let mut big = input.to_vec();
    big.resize(lwcbench_link::wire::frame::MAX_FRAME + 1 + input.len() % 7, 0);
    let mut gw = link_gateway(&lwcbench_link::wire::suite::find(LINK_SUITES[0])?, false);
    let r = gw.open(&lwcbench_link::transport::mqtt::received_frame(&big));
    if r != Err(Refusal::Malformed) {
        return Err(format!("a payload of {} B gave {r:?}, not malformed", big.len()));
    }
    let frame = lwcbench_link::transport::mqtt::received_frame(input);
    let m = lwcbench_link::wire::keys::MasterKey::from_bytes(LINK_MASTER);
    for name in LINK_SUITES {
        let suite = lwcbench_link::wire::suite::find(name)?;
        for unauth in link_modes(&suite) {
            let mut gw = link_gateway(&suite, unauth);
            let first = gw.open(&frame);
            if input.len() > lwcbench_link::wire::frame::MAX_FRAME && first != Err(Refusal::Malformed) {
                return Err(format!("{name}: a payload of {} B gave {first:?}, not malformed", input.len()));
            }
            if let Ok(o) = &first {
                let key = m.cipher_key(Proto::Sensor, o.device, suite.id, suite.key_len());
                let mut k = lwcbench_link::wire::suite::Keyed::new(&suite, &key, Proto::Sensor, unauth)?;
                let mut again = Vec::new();
                k.seal(o.device, o.counter, &o.reading, &mut again)?;
                if again != frame {
                    return Err(format!("{name}: accepted a frame the device would not send"));
                }
                if gw.open(&frame) != Err(Refusal::Replay) {
                    return Err(format!("{name}: an accepted frame opened twice"));
                }
            }
            let total = gw.tally.accepted + gw.tally.refused_total();
            if total != 1 + first.is_ok() as u64 {
                return Err(format!("{name}: {total} verdicts counted"));
            }
            // The batch opener against one by one: the input twice, then its bytes cut short.
            let cut = &frame[..frame.len() / 2];
            let batch: [&[u8]; 3] = [&frame, &frame, cut];
            let mut one = link_gateway(&suite, unauth);
            let want: Vec<_> = batch.iter().map(|f| one.open(f)).collect();
            let mut many = link_gateway(&suite, unauth);
            if many.open_many(&batch) != want || many.tally != one.tally {
                return Err(format!("{name}: open_many differs from open one by one"));
            }
        }
    }
    Ok(())
}

/// One MQTT payload through the link gateway's receive path.
pub const LINK_FRAME: Target = Target { name: "link-frame", check: link_frame, fixup: None };
