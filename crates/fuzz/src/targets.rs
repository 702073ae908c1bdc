//! The six targets: what each feeds the input to and what it checks.
use lwcbench_engine::{collect, dataset, external, video};

use crate::{check_error, Rng, Scratch, Target};

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

fn board_log(input: &[u8], s: &mut Scratch) -> Result<(), String> {
    let text = String::from_utf8_lossy(input);
    let p = collect::parse_log(&text);
    // The summary lines quote the log (unbounded here); the CLI
    // prints them through text::one_line, whose output must be one bounded line.
    for l in p.summary_lines() {
        check_error(&lwcbench_engine::text::one_line(&l, 400))?;
    }
    for r in p.samples.iter().chain(&p.warmup) {
        if !(r.ns_per_op.is_finite() && r.ns_per_op >= 0.0) {
            return Err(format!("sample accepted with ns_per_op = {}", r.ns_per_op));
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
    };
    match collect::write_collected(&p, &out, true, true, &src) {
        Ok(_) => Ok(()),
        Err(e) => check_error(&e),
    }
}

pub const BOARD_LOG: Target = Target { name: "board-log", check: board_log, fixup: Some(fix_crcs) };

// ---- power log beside a board log (`lwcbench collect --power-…`) -------------------------------

/// Separates the board log from the logger's log in a power-log input.
pub const POWER_SPLIT: &str = "\n=== power ===\n";

fn power_log(input: &[u8], s: &mut Scratch) -> Result<(), String> {
    use collect::logger;
    let text = String::from_utf8_lossy(input);
    let (board, power) = text.split_once(POWER_SPLIT).unwrap_or((&text, ""));
    let p = collect::parse_log(board);
    let log = logger::parse_logger(power);
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
    };
    let notes = log.summary_lines("power log");
    match collect::logger::write_collected_with_power(&p, &out, true, true, &src, Some((&r, &notes))) {
        Ok(_) => Ok(()),
        Err(e) => check_error(&e),
    }
}

pub const POWER_LOG: Target = Target { name: "power-log", check: power_log, fixup: Some(fix_crcs) };

// ---- dataset CSV ------------------------------------------------------------------------------

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
        for encoding in [dataset::Encoding::Float32, dataset::Encoding::Int32 { scale: 1000.0 }] {
            for layout in [dataset::Layout::Interleaved, dataset::Layout::PerChannel] {
                let readings = d.readings_available().clamp(1, 50);
                let enc = dataset::Encode { encoding, layout, readings, ..Default::default() };
                match d.payload(&enc) {
                    Ok(p) if p.len() != 4 * readings => {
                        return Err(format!("{} bytes for {readings} readings", p.len()))
                    }
                    Ok(_) => {}
                    Err(e) => check_error(&e)?,
                }
            }
        }
    }
    Ok(())
}

pub const DATASET: Target = Target { name: "dataset", check: dataset, fixup: None };

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
            let safe = name.chars().all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '_' || c == '-');
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

fn run_dir(input: &[u8], s: &mut Scratch) -> Result<(), String> {
    let dir = s.dir.path().join("run");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| format!("scratch: {e}"))?;
    for (name, bytes) in unpack(input) {
        std::fs::write(dir.join(&name), bytes).map_err(|e| format!("scratch: {e}"))?;
    }
    match lwcbench_report::Run::load(&dir) {
        Ok(run) => {
            // what `compare` does with two runs
            let rows = lwcbench_report::compare::compare_runs(&run, &run);
            let _ = lwcbench_report::compare::text_table(&rows);
        }
        Err(e) => return check_error(&e),
    }
    match lwcbench_report::write_report(&dir) {
        Ok(_) => Ok(()),
        Err(e) => check_error(&e),
    }
}

pub const RUN_DIR: Target = Target { name: "run-dir", check: run_dir, fixup: None };

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
                let key = m.device_key(suite.id, o.device, suite.key_len());
                let mut k = lwcbench_link::wire::suite::Keyed::new(&suite, &key, unauth)?;
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

pub const LINK_FRAME: Target = Target { name: "link-frame", check: link_frame, fixup: None };
