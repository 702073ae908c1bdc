//! `lwcbench mcu check-board`: a collected board run beside the emulated cycles of the same
//! code (data/emulated-cycles.csv) — per message at 16 and 128 bytes and per byte, with the
//! emulation's error — so a user checks the timing model on their own board (docs/board.md).
//!
//! Compared: the message phase of each cipher in the run (`keystream` of a stream cipher,
//! `encrypt` of an AEAD or block cipher) at 128 and 1024 bits, against the board's emulated row
//! of the same cipher and implementation with that phase (the warm steady state: the board
//! times a loop of messages). Board cycles are the median over every sample of the group (all
//! key/IV variants): the core cycle counter where every sample has it, else ns/op × the
//! board's clock of data/boards.toml. Error = (emulated − board) / board, as `mcu nist-lwc`.
use std::io::Read;
use std::path::Path;

use lwcbench_engine::board::Cycles;
use lwcbench_engine::collect::{parse_log, Header};

/// Largest board log read (as `lwcbench collect --from-log`).
const MAX_LOG_BYTES: u64 = 256 << 20;
/// Largest emulated-cycles table read.
const MAX_TABLE_BYTES: u64 = 16 << 20;

/// One cipher compared: board and emulated cycles per message at 16 and 128 bytes.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// Algorithm.
    pub cipher: String,
    /// Implementation.
    pub implementation: String,
    /// `keystream` or `encrypt`.
    pub phase: String,
    /// True: board cycles from the core cycle counter; false: ns/op × the board's clock.
    pub from_counter: bool,
    /// Board cycles per message of 16 and 128 bytes (medians).
    pub board: [f64; 2],
    /// Emulated warm cycles per message of 16 and 128 bytes.
    pub emulated: [f64; 2],
}

/// (emulated − board) / board in %, None when the board figure is not positive.
pub fn error_pct(emulated: f64, board: f64) -> Option<f64> {
    (board > 0.0 && board.is_finite()).then(|| 100.0 * (emulated - board) / board)
}

impl Row {
    /// Board cycles per message byte: (c128 − c16) / 112.
    pub fn board_slope(&self) -> f64 {
        (self.board[1] - self.board[0]) / 112.0
    }
    /// Emulated cycles per message byte: (c128 − c16) / 112.
    pub fn emulated_slope(&self) -> f64 {
        (self.emulated[1] - self.emulated[0]) / 112.0
    }
    /// Error of the emulated slope, %.
    pub fn slope_error_pct(&self) -> Option<f64> {
        error_pct(self.emulated_slope(), self.board_slope())
    }
}

/// The comparison of one board run.
#[derive(Clone, Debug, PartialEq)]
pub struct Check {
    /// What was compared with what (first lines of the output).
    pub head: Vec<String>,
    /// Ciphers with an emulated counterpart.
    pub rows: Vec<Row>,
    /// `cipher/implementation (phase)` of the run without one (and why, where it is not just
    /// a missing row).
    pub missing: Vec<String>,
    /// Differences between the board's build and the emulated one, malformed lines skipped.
    pub notes: Vec<String>,
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Compare the run in `log` (board line format, `origin` names it in errors) with the rows of
/// `table` for `board` (clock `mhz`, from data/boards.toml).
pub fn check(
    log: &str,
    origin: &str,
    board: &str,
    mhz: f64,
    table: &[Cycles],
    table_origin: &str,
) -> Result<Check, String> {
    let emu: Vec<&Cycles> = table.iter().filter(|c| c.board == board).collect();
    if emu.is_empty() {
        let mut ids: Vec<&str> = table.iter().map(|c| c.board.as_str()).collect();
        ids.dedup();
        return Err(format!("--board: {table_origin} has no rows of board '{board}' (it has {})", ids.join(", ")));
    }
    let p = parse_log(log);
    if let Some(i) = &p.interleaved {
        return Err(format!("{origin}: lines of two runs are mixed ({i})"));
    }
    if let Some(t) = &p.truncation {
        return Err(format!("{origin}: the run is incomplete: {t}"));
    }
    let h: &Header = p.header.as_ref().ok_or_else(|| format!("{origin}: no valid header line (LWCB H …)"))?;
    if p.samples.is_empty() {
        return Err(format!("{origin}: no valid sample lines"));
    }
    let mut notes = Vec::new();
    if let Some(m) = p.malformed.first() {
        notes.push(format!(
            "{} malformed line(s) not used (first: line {}: {})",
            p.malformed.len(),
            m.line,
            lwcbench_engine::text::one_line(&m.reason, 200)
        ));
    }
    let opt = h.extra.get("opt").map(String::as_str).unwrap_or("unknown");
    if opt != "s" {
        notes.push(format!(
            "the board firmware was built with opt-level {opt}, the emulated images with Os (opt-level s); \
             the Rust firmware builds at Os with `--profile release-os`"
        ));
    }
    if (h.cpu_hz / 1e6 - mhz).abs() > 0.005 * mhz {
        notes.push(format!(
            "the header says cpu_hz={}, data/boards.toml {mhz} MHz: ns/op is converted at {mhz} MHz",
            h.cpu_hz
        ));
    }
    // the groups of message phases in the run, in the order they first appear
    let mut keys: Vec<(&str, &str, &str, &str)> = Vec::new();
    for r in &p.samples {
        if matches!(r.scenario.as_str(), "keystream" | "encrypt") {
            let k = (r.cipher.as_str(), r.implementation.as_str(), r.scenario.as_str(), r.family.as_str());
            if !keys.contains(&k) {
                keys.push(k);
            }
        }
    }
    let (mut rows, mut missing) = (Vec::new(), Vec::new());
    let mut targets = Vec::new();
    for (cipher, imp, phase, family) in keys {
        let name = format!("{cipher}/{imp} ({phase})");
        let Some(e) = emu.iter().find(|c| c.cipher == cipher && c.implementation == imp && c.phase == phase) else {
            missing.push(name);
            continue;
        };
        // the emulated AEADs authenticate no associated data
        if family == "aead" && h.ad_bytes != Some(0) {
            let ad = h.ad_bytes.map_or("not stated (format version 1)".to_string(), |n| format!("{n} bytes"));
            missing.push(format!("{name}: associated data {ad}, emulated 0"));
            continue;
        }
        let of_size = |bits: u64| -> Vec<&lwcbench_engine::results::SampleRow> {
            p.samples
                .iter()
                .filter(|r| r.cipher == cipher && r.implementation == imp && r.scenario == phase && r.size_bits == bits)
                .collect()
        };
        let sizes = [of_size(128), of_size(1024)];
        if sizes.iter().any(Vec::is_empty) {
            missing.push(format!("{name}: no samples at both 128 and 1024 bits"));
            continue;
        }
        // the counter where every sample of both sizes has it, so the slope has one source
        let from_counter = sizes.iter().flatten().all(|r| r.cycles_per_op.is_some());
        let cycles = |s: &[&lwcbench_engine::results::SampleRow]| {
            let mut v: Vec<f64> = s
                .iter()
                .map(|r| match r.cycles_per_op {
                    Some(c) if from_counter => c,
                    _ => r.ns_per_op * mhz / 1e3,
                })
                .collect();
            median(&mut v)
        };
        let board = [cycles(&sizes[0]), cycles(&sizes[1])];
        if !targets.contains(&e.target) {
            targets.push(e.target.clone());
        }
        rows.push(Row {
            cipher: cipher.to_string(),
            implementation: imp.to_string(),
            phase: phase.to_string(),
            from_counter,
            board,
            emulated: [e.at_16_bytes, e.at_128_bytes],
        });
    }
    let target = h.extra.get("target").map(String::as_str).unwrap_or("unknown");
    if !rows.is_empty() && targets.iter().any(|t| t != target) {
        notes.push(format!("the board firmware's target is {target}, the emulated images' {}", targets.join(", ")));
    }
    let head = vec![
        format!(
            "{origin}: board {} ({}), line format {}; emulated: {table_origin}, board {board} (Os, warm steady state)",
            h.board, h.mcu, h.version
        ),
        format!(
            "board cycles: the median over the group's samples of the core cycle counter (from = counter), \
             else ns/op x {mhz} MHz (data/boards.toml; from = clock); error = (emulated - board) / board"
        ),
    ];
    Ok(Check { head, rows, missing, notes })
}

fn cell(v: Option<f64>) -> String {
    v.map_or("-".into(), |e| format!("{e:+.1}"))
}

impl Check {
    /// The comparison as text: the head, one line per cipher, the median |slope error|, the
    /// ciphers without a counterpart in one line, then the notes.
    pub fn render(&self) -> String {
        let mut out = self.head.join("\n") + "\n";
        if self.rows.is_empty() {
            out.push_str("no cipher of the run has an emulated counterpart on this board\n");
        } else {
            let w = self.rows.iter().map(|r| r.cipher.len() + r.implementation.len() + 1).max().unwrap_or(0).max(20);
            out.push_str(&format!(
                "{:<w$}  {:<9}  {:<7}  {:>10}  {:>10}  {:>7}  {:>10}  {:>10}  {:>7}  {:>9}  {:>9}  {:>7}\n",
                "cipher/implementation",
                "phase",
                "from",
                "16 B board",
                "emulated",
                "err %",
                "128 B board",
                "emulated",
                "err %",
                "cyc/B brd",
                "emulated",
                "err %"
            ));
            for r in &self.rows {
                out.push_str(&format!(
                    "{:<w$}  {:<9}  {:<7}  {:>10.0}  {:>10.0}  {:>7}  {:>10.0}  {:>10.0}  {:>7}  {:>9.1}  {:>9.1}  {:>7}\n",
                    format!("{}/{}", r.cipher, r.implementation),
                    r.phase,
                    if r.from_counter { "counter" } else { "clock" },
                    r.board[0],
                    r.emulated[0],
                    cell(error_pct(r.emulated[0], r.board[0])),
                    r.board[1],
                    r.emulated[1],
                    cell(error_pct(r.emulated[1], r.board[1])),
                    r.board_slope(),
                    r.emulated_slope(),
                    cell(r.slope_error_pct())
                ));
            }
            let mut errs: Vec<f64> = self.rows.iter().filter_map(Row::slope_error_pct).map(f64::abs).collect();
            if !errs.is_empty() {
                let n = errs.len();
                out.push_str(&format!("median |slope error| over {n} cipher(s): {:.1} %\n", median(&mut errs)));
            }
        }
        if !self.missing.is_empty() {
            out.push_str(&format!("no emulated counterpart: {}\n", self.missing.join(", ")));
        }
        for n in &self.notes {
            out.push_str(&format!("note: {n}\n"));
        }
        out
    }
}

/// Read at most `max` bytes of `path` as text; a longer file is an error naming it.
fn read_bounded(path: &Path, max: u64, what: &str) -> Result<String, String> {
    let f = std::fs::File::open(path).map_err(|e| format!("{what}: {}: {e}", path.display()))?;
    let mut buf = Vec::new();
    f.take(max + 1).read_to_end(&mut buf).map_err(|e| format!("{what}: {}: {e}", path.display()))?;
    if buf.len() as u64 > max {
        return Err(format!("{what}: {} is larger than {} MiB", path.display(), max >> 20));
    }
    // a log is ASCII-compatible text; stray bytes of a serial glitch fail only their own line's CRC
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

/// `lwcbench mcu check-board RUN --board B [--emulated CSV]`: the comparison as text. `run` is a
/// directory of `lwcbench collect` (its `board-log.txt`) or a board log.
pub fn check_path(run: &Path, board: &str, emulated: Option<&Path>) -> Result<String, String> {
    check_run(run, board, emulated).map(|c| c.render())
}

/// The comparison of [`check_path`] unrendered, for callers that want the rows (the Python
/// binding).
pub fn check_run(run: &Path, board: &str, emulated: Option<&Path>) -> Result<Check, String> {
    let boards = lwcbench_engine::boards::builtin();
    let Some(rec) = boards.boards.iter().find(|b| b.id == board) else {
        let ids: Vec<&str> = boards.boards.iter().map(|r| r.id.as_str()).collect();
        return Err(format!("--board: '{board}' is not a board of data/boards.toml ({})", ids.join(", ")));
    };
    let log_path = if run.is_dir() { run.join("board-log.txt") } else { run.to_path_buf() };
    let log = read_bounded(&log_path, MAX_LOG_BYTES, "RUN")?;
    let origin = log_path.display().to_string();
    match emulated {
        Some(e) => {
            let text = read_bounded(e, MAX_TABLE_BYTES, "--emulated")?;
            let name = e.display().to_string();
            let table = lwcbench_engine::board::parse_cycles(&text, &name)?;
            check(&log, &origin, board, rec.mhz, &table, &name)
        }
        None => {
            check(&log, &origin, board, rec.mhz, lwcbench_engine::board::cycles_table(), "data/emulated-cycles.csv")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// crates/engine/tests/board-logs: check-board*.log (CRCs from Python's zlib, make_logs.py)
    /// and the hand-made table check-board-emulated.csv.
    fn file(name: &str) -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../engine/tests/board-logs").join(name)
    }

    fn run(log: &str, board: &str) -> Result<String, String> {
        check_path(&file(log), board, Some(&file("check-board-emulated.csv")))
    }

    /// One output row, split on runs of spaces.
    fn row<'a>(out: &'a str, name: &str) -> Vec<&'a str> {
        let l = out.lines().find(|l| l.starts_with(name)).unwrap_or_else(|| panic!("no row {name} in\n{out}"));
        l.split_whitespace().collect()
    }

    #[test]
    fn a_board_run_beside_the_emulated_rows() {
        let out = run("check-board.log", "rp2040").unwrap();
        // Trivium/rust keystream, from the cycle counter (batch 100):
        //   16 B: 80000, 84000, 79000 / 100 = 800, 840, 790 -> median 800; emulated 800: +0.0 %
        //   128 B: 400000, 420000, 410000 / 100 -> median 4100; emulated 4720: 620 / 4100 = +15.1 %
        //   slope: board (4100 - 800) / 112 = 29.46; emulated (4720 - 800) / 112 = 35.0;
        //   error (35.0 - 29.464) / 29.464 = +18.8 %
        assert_eq!(
            row(&out, "Trivium/rust"),
            [
                "Trivium/rust",
                "keystream",
                "counter",
                "800",
                "800",
                "+0.0",
                "4100",
                "4720",
                "+15.1",
                "29.5",
                "35.0",
                "+18.8"
            ]
        );
        // AES-128-GCM/rustcrypto encrypt, no cycle counter: ticks at 1 MHz / batch 10 x 125 MHz
        //   16 B: 240, 224, 232 us -> median 232 us x 125 = 29000; emulated 28000: -1000 / 29000 = -3.4 %
        //   128 B: 700, 720, 690 us -> median 700 us x 125 = 87500; emulated 84000: -4.0 %
        //   slope: board (87500 - 29000) / 112 = 522.3; emulated 56000 / 112 = 500.0; -22.32 / 522.32 = -4.3 %
        assert_eq!(
            row(&out, "AES-128-GCM/rustcrypto"),
            [
                "AES-128-GCM/rustcrypto",
                "encrypt",
                "clock",
                "29000",
                "28000",
                "-3.4",
                "87500",
                "84000",
                "-4.0",
                "522.3",
                "500.0",
                "-4.3"
            ]
        );
        // median of |18.79| and |-4.27| = 11.53
        assert!(out.contains("median |slope error| over 2 cipher(s): 11.5 %\n"), "{out}");
        // DRACO has an O3 row on rp2040 and an Os row on mkrzero only; ChaCha20-Poly1305 has 16 B only
        assert!(
            out.contains(
                "no emulated counterpart: DRACO/rust-ref (keystream), ChaCha20-Poly1305/rustcrypto (encrypt): \
                 no samples at both 128 and 1024 bits\n"
            ),
            "{out}"
        );
        assert!(!out.contains("note:"), "same opt level, clock and target: {out}");
        // init groups are not compared
        assert_eq!(out.lines().filter(|l| l.starts_with("Trivium/rust")).count(), 1);
    }

    #[test]
    fn a_version_1_log_says_nothing_of_associated_data() {
        let out = run("check-board-v1.log", "rp2040").unwrap();
        assert!(row(&out, "Trivium/rust").len() == 12, "{out}");
        assert!(!out.lines().any(|l| l.starts_with("AES-128-GCM/")), "{out}");
        assert!(
            out.contains("AES-128-GCM/rustcrypto (encrypt): associated data not stated (format version 1), emulated 0"),
            "{out}"
        );
        assert!(out.contains("note: the board firmware was built with opt-level 3, the emulated images with Os"));
        assert!(out.contains("median |slope error| over 1 cipher(s): 18.8 %\n"), "{out}");
    }

    /// Against the built-in table: the emulated figures are those of data/emulated-cycles.csv's
    /// rp2040 Os row for AES-128-GCM, read here with a plain split.
    #[test]
    fn the_built_in_table_gives_the_rp2040_rows() {
        let out = check_path(&file("check-board.log"), "rp2040", None).unwrap();
        let csv = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/emulated-cycles.csv"))
            .unwrap();
        let cols: Vec<&str> = csv.lines().find(|l| l.starts_with("board,")).unwrap().split(',').collect();
        let at = |n: &str| cols.iter().position(|c| *c == n).unwrap();
        let gcm: Vec<&str> = csv
            .lines()
            .map(|l| l.split(',').collect::<Vec<_>>())
            .find(|f| f[0] == "rp2040" && f[1] == "AES-128-GCM" && f[at("profile")] == "Os")
            .unwrap();
        let r = row(&out, "AES-128-GCM/rustcrypto");
        assert_eq!((r[4], r[7]), (gcm[at("warm_cycles_128_bits")], gcm[at("warm_cycles_1024_bits")]), "{out}");
        assert_eq!(r[3], "29000");
    }

    #[test]
    fn bad_input_is_named() {
        let e = run("check-board.log", "nope").unwrap_err();
        assert!(e.starts_with("--board: 'nope' is not a board of data/boards.toml ("), "{e}");
        let e = run("v2-no-ad.log", "rp2040").unwrap_err();
        assert!(e.ends_with("v2-no-ad.log: the run is incomplete: the header at line 1 is malformed: header lacks required key 'ad_bytes' (format version 2)"), "{e}");
        let e = run("v3.log", "rp2040").unwrap_err();
        assert!(e.contains("v3.log: the run is incomplete: the header at line 1 is malformed: format version 3 is not supported (this lwcbench reads versions 1 to 2)"), "{e}");
        let e = run("truncated.log", "rp2040").unwrap_err();
        assert!(e.contains("truncated.log: the run is incomplete: no end line"), "{e}");
        let e = run("no-such.log", "rp2040").unwrap_err();
        assert!(e.starts_with("RUN: ") && e.contains("no-such.log"), "{e}");
        // a board of data/boards.toml without rows in the table
        let e = run("check-board.log", "esp8266").unwrap_err();
        assert!(e.starts_with("--board: ") && e.contains("has no rows of board 'esp8266'"), "{e}");
        // a table row that is not a count names the file and line
        let d = std::env::temp_dir().join(format!("lwc-check-board-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let bad = d.join("bad.csv");
        let t = std::fs::read_to_string(file("check-board-emulated.csv")).unwrap().replace(",84000", ",84k");
        std::fs::write(&bad, t).unwrap();
        let e = check_path(&file("check-board.log"), "rp2040", Some(&bad)).unwrap_err();
        assert!(e.contains("bad.csv: line 7: warm_cycles_1024_bits '84k' is not a count"), "{e}");
        // a run directory is read through its board-log.txt
        std::fs::copy(file("check-board.log"), d.join("board-log.txt")).unwrap();
        assert_eq!(
            check_path(&d, "rp2040", Some(&file("check-board-emulated.csv")))
                .unwrap()
                .lines()
                .skip(1)
                .collect::<Vec<_>>(),
            run("check-board.log", "rp2040").unwrap().lines().skip(1).collect::<Vec<_>>()
        );
        std::fs::remove_dir_all(&d).unwrap();
    }
}
