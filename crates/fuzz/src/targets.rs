//! The five targets: what each feeds the input to and what it checks.
use lwcbench_engine::{collect, dataset, external, video};

use crate::{check_error, Rng, Scratch, Target};

pub const ALL: [Target; 5] = [BOARD_LOG, DATASET, Y4M, ENGINE_LINES, RUN_DIR];

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
        match (line.find("LWCB "), line.rfind(" *")) {
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
    // The summary lines quote the log (unbounded here: noted in issue 15's follow-up); the CLI
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
