//! data/boards.toml: one record per board (`[board.ID]`: timing profile, sources, and the power
//! figures of a `--board` choice) and per compiler target (`[target.TRIPLE]`). Everything else
//! that lists boards is derived from it: data/board-power.csv, the board tables of
//! docs/metrics.md and mcu/README.md (both rewritten by `scripts/data/regen-boards.sh`, kept equal by
//! the test `generated_files_follow_boards_toml`), and the CLI's `--board` help (from the
//! board-power rows at run time). mcu/boardfile.py is the Python loader of the same file; it
//! also checks the timing parameters the emulator uses.
use std::collections::BTreeMap;

use serde::Deserialize;
use toml::Spanned;

/// The built-in file, data/boards.toml.
pub const BOARDS_TOML: &str = include_str!("../../../data/boards.toml");

/// `[board.ID.power]`: datasheet figures for crypto energy from emulated cycles.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Power {
    /// Supply voltage of the current figures.
    pub volts: f64,
    /// Current with the CPU running from flash/cache, radio off.
    pub active_ma: f64,
    /// Current in the lowest sleep mode that keeps RAM and wakes on a timer.
    pub sleep_ua: f64,
    /// `sourced` or `estimate`.
    pub status: String,
    /// Where every figure comes from.
    pub source: String,
}

/// `[board.ID]`.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BoardRecord {
    /// The board id (the table's key).
    #[serde(skip)]
    pub id: String,
    /// The board's name.
    pub name: String,
    /// The microcontroller on it.
    pub chip: String,
    /// The Rust/GCC target the core runs (a [`TargetRecord`]).
    pub triple: String,
    /// CPU clock the figures are converted at.
    pub mhz: f64,
    /// Where the measured code executes: `flash`, `sram` or `xip`.
    pub code_in: String,
    /// Wait states per flash line fetch that misses (0: none).
    pub flash_ws: u32,
    /// Width of one flash/XIP line in bytes.
    pub fetch_line_bytes: u32,
    /// Instruction-cache lines over flash/XIP (0: no cache).
    pub cache_lines: u32,
    /// Ways of that set-associative cache.
    pub cache_ways: u32,
    /// Stall per missed line fetch; `flash_ws` when absent.
    #[serde(default)]
    pub miss_cycles: Option<u32>,
    /// Cortex-M4 load/store pipelining (a neighbouring second LDR/STR costs 1 cycle).
    pub m4_ldst_pipelining: bool,
    /// Data reads from flash (literal pools, constant tables) cost the miss cycles each, uncached.
    #[serde(default)]
    pub flash_data_stall: bool,
    /// Parameters whose source text was read.
    #[serde(default)]
    pub verified: Vec<String>,
    /// The source of each parameter.
    pub sources: BTreeMap<String, String>,
    /// Power figures; a board with them is a `--board` choice.
    #[serde(default)]
    pub power: Option<Power>,
    /// The LX106 cycle model (boards of an `lx106` target only; mcu/lx106.py reads it).
    #[serde(default)]
    pub lx106: Option<Lx106>,
    /// The held-out fit of a Cortex-M board's fetch parameters: split, grid and residuals (as
    /// written; mcu/cortexm_fit.py reads it).
    #[serde(default)]
    pub fit: Option<toml::Table>,
}

/// `[board.ID.lx106]`: the LX106 cycle model of an Xtensa LX106 board (mcu/lx106.py runs it over
/// QEMU's execution trace). Each parameter's source is in the board's `sources`.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lx106 {
    /// The NIST LWC benchmark table the board reproduces (`lwcbench mcu nist-lwc --board TABLE`).
    pub table: String,
    /// Code-generation flags of the board's framework.
    pub cflags: Vec<String>,
    /// Cycles per instruction when nothing stalls.
    pub base: u32,
    /// Extra cycles when the next instruction reads a loaded register.
    pub load_use: u32,
    /// Extra cycles when the next instruction reads a multiply's result.
    pub mul_use: u32,
    /// Extra cycles when the next instruction reads an RSR's result.
    pub rsr_use: u32,
    /// Extra cycles of a taken conditional branch.
    pub taken_branch: u32,
    /// Extra cycles of an unconditional jump, call or return.
    pub jump: u32,
    /// Extra cycles of an L32R whose literal sits in flash.
    pub l32r_flash: u32,
    /// Extra cycles per instruction fetched from flash on a cache hit.
    pub flash_fetch_hit: u32,
    /// The held-out fit: split, grid and residuals (as written; mcu/lx106_nist.py reads it).
    #[serde(default)]
    pub fit: Option<toml::Table>,
}

impl Lx106 {
    /// (name, value) of every timing parameter, in the file's order.
    pub fn timing(&self) -> [(&'static str, u32); 8] {
        [
            ("base", self.base),
            ("load_use", self.load_use),
            ("mul_use", self.mul_use),
            ("rsr_use", self.rsr_use),
            ("taken_branch", self.taken_branch),
            ("jump", self.jump),
            ("l32r_flash", self.l32r_flash),
            ("flash_fetch_hit", self.flash_fetch_hit),
        ]
    }
}

/// `[target.TRIPLE.cpp]`: the C++ (DRACO) toolchain.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cpp {
    /// The C++ compiler.
    pub cxx: String,
    /// The C compiler.
    pub cc: String,
    /// Architecture flags.
    pub arch_flags: Vec<String>,
    /// Flags for the headers and C library.
    pub libc_flags: Vec<String>,
    /// Libraries to link.
    pub libs: Vec<String>,
}

/// `[target.TRIPLE]`.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetRecord {
    /// The target triple (the table's key).
    #[serde(skip)]
    pub triple: String,
    /// The core's name in tables (Cortex-M0+, RV32IMC, ...).
    pub core: String,
    /// Timing model of mcu/emulate.py; None: instruction counts only.
    #[serde(default)]
    pub model: Option<String>,
    /// mcu/emulate.py runs its images (Unicorn).
    pub emulable: bool,
    /// The board profile its images' counts stand for (`lwcbench mcu --preset counts`).
    #[serde(default)]
    pub board: Option<String>,
    /// The Rust images (mcu/images) are built for it.
    #[serde(default)]
    pub rust: bool,
    /// The C++ (DRACO) toolchain, when built for it.
    #[serde(default)]
    pub cpp: Option<Cpp>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    board: BTreeMap<String, Spanned<BoardRecord>>,
    #[serde(default)]
    target: BTreeMap<String, Spanned<TargetRecord>>,
}

/// The records of data/boards.toml, in file order.
#[derive(Clone, Debug, PartialEq)]
pub struct Boards {
    /// `[board.ID]` records.
    pub boards: Vec<BoardRecord>,
    /// `[target.TRIPLE]` records.
    pub targets: Vec<TargetRecord>,
}

/// Line and column (1-based) of byte `at` in `text`.
fn line_col(text: &str, at: usize) -> (usize, usize) {
    let before = &text[..at.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.chars().rev().take_while(|c| *c != '\n').count() + 1;
    (line, col)
}

/// An id goes into CSV cells, Markdown and help text: letters, digits, `-`, `_` and `.` only.
fn plain_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= 64 && id.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
}

fn positive(v: f64) -> bool {
    v.is_finite() && v > 0.0
}

/// Parse and check the records; an error is one line naming `origin`, the line and column or
/// the record, and the key.
pub fn parse(text: &str, origin: &str) -> Result<Boards, String> {
    let file: File = toml::from_str(text).map_err(|e| {
        let msg = e.message().replace('\n', " ");
        match e.span() {
            Some(s) => {
                let (l, c) = line_col(text, s.start);
                format!("{origin}: line {l}, column {c}: {}", msg.trim())
            }
            None => format!("{origin}: {}", msg.trim()),
        }
    })?;
    let mut targets: Vec<(usize, TargetRecord)> = file
        .target
        .into_iter()
        .map(|(triple, s)| {
            let at = s.span().start;
            (at, TargetRecord { triple, ..s.into_inner() })
        })
        .collect();
    targets.sort_by_key(|(at, _)| *at);
    let targets: Vec<TargetRecord> = targets.into_iter().map(|(_, t)| t).collect();
    let mut boards: Vec<(usize, BoardRecord)> =
        file.board.into_iter().map(|(id, s)| (s.span().start, BoardRecord { id, ..s.into_inner() })).collect();
    boards.sort_by_key(|(at, _)| *at);
    let boards: Vec<BoardRecord> = boards.into_iter().map(|(_, b)| b).collect();
    if boards.is_empty() {
        return Err(format!("{origin}: no [board.ID] tables"));
    }
    if let Some(b) = boards.iter().find(|b| !plain_id(&b.id)) {
        return Err(format!("{origin}: board {}: an id is letters, digits, '-', '_' or '.'", b.id));
    }
    for b in &boards {
        let at = format!("{origin}: board {}", b.id);
        match targets.iter().find(|t| t.triple == b.triple) {
            None => return Err(format!("{at}: triple '{}' is not a [target.TRIPLE] of the file", b.triple)),
            Some(t) if t.model.is_none() => return Err(format!("{at}: target {} has no timing model", b.triple)),
            Some(_) => {}
        }
        if !(positive(b.mhz) && b.mhz < 10_000.0) {
            return Err(format!("{at}: mhz out of range: {}", b.mhz));
        }
        if !b.sources.contains_key("mhz") {
            return Err(format!("{at}: sources table missing (mhz needs a source)"));
        }
        let lx106_target = targets.iter().any(|t| t.triple == b.triple && t.model.as_deref() == Some("lx106"));
        match &b.lx106 {
            None if lx106_target => return Err(format!("{at}: a board of an lx106 target needs an [lx106] table")),
            Some(_) if !lx106_target => return Err(format!("{at}: lx106: only a board of an lx106 target has one")),
            Some(x) => {
                for (k, v) in x.timing() {
                    if v > 100 {
                        return Err(format!("{at}.lx106: {k} must be 0..100, got {v}"));
                    }
                    if b.sources.get(k).is_none_or(|s| s.trim().is_empty()) {
                        return Err(format!("{at}.lx106: {k} has no source in [board.{}.sources]", b.id));
                    }
                }
            }
            None => {}
        }
        if let Some(p) = &b.power {
            for (k, v) in [("volts", p.volts), ("active_ma", p.active_ma), ("sleep_ua", p.sleep_ua)] {
                if !(positive(v) && v < 1e6) {
                    return Err(format!("{at}.power: {k} must be a positive number, got {v}"));
                }
            }
            if p.status != "sourced" && p.status != "estimate" {
                return Err(format!("{at}.power: status must be sourced or estimate, got '{}'", p.status));
            }
            if p.source.trim().is_empty() {
                return Err(format!("{at}.power: source is empty"));
            }
        }
    }
    for t in &targets {
        let at = format!("{origin}: target {}", t.triple);
        if !plain_id(&t.triple) || t.core.trim().is_empty() {
            return Err(format!("{at}: the triple and core must be plain names"));
        }
        if let Some(b) = &t.board {
            if !boards.iter().any(|r| &r.id == b && r.triple == t.triple) {
                return Err(format!("{at}: board '{b}' is not a board of this target"));
            }
        } else if t.rust || t.emulable {
            return Err(format!("{at}: an emulated target needs the board its counts stand for"));
        }
    }
    Ok(Boards { boards, targets })
}

/// The built-in records (data/boards.toml).
pub fn builtin() -> Boards {
    parse(BOARDS_TOML, "data/boards.toml").expect("data/boards.toml parses")
}

impl Boards {
    /// The record of one target triple.
    pub fn target(&self, triple: &str) -> Option<&TargetRecord> {
        self.targets.iter().find(|t| t.triple == triple)
    }
    /// The boards `--board` offers: those with power figures, in file order.
    pub fn powered(&self) -> impl Iterator<Item = (&BoardRecord, &Power)> {
        self.boards.iter().filter_map(|b| b.power.as_ref().map(|p| (b, p)))
    }
    fn core_of(&self, b: &BoardRecord) -> &str {
        self.target(&b.triple).map(|t| t.core.as_str()).unwrap_or("")
    }
}

/// board-power.csv's chip column: the chip, and the board's name unless it starts with the chip.
pub fn chip_label(b: &BoardRecord) -> String {
    if b.name.starts_with(&b.chip) {
        b.chip.clone()
    } else {
        format!("{} ({})", b.chip, b.name)
    }
}

const POWER_HEADER: &str = "\
# GENERATED from data/boards.toml ([board.ID.power]; scripts/data/regen-boards.sh): do not edit by hand.
# Boards for crypto energy from EMULATED cycles (`--board`; docs/metrics.md, \"Energy from the device\").
# energy per operation = emulated cycles (data/emulated-cycles.csv, this board's rows) / clock_mhz x volts x active_ma.
# Not measured by lwcbench. Columns:
#   board      id used by --board
#   chip       the microcontroller on it
#   core       the core of the emulated images (mcu/README.md timing models)
#   target     the mcu image target triple whose cycle counts the board uses
#   clock_mhz  clock at which active_ma is specified (and the cycles are converted)
#   volts      supply voltage of the current figures
#   active_ma  CPU running from flash/cache, radio off (datasheet \"active\"/\"CPU running\" row)
#   sleep_ua   the lowest sleep mode that keeps RAM and wakes on a timer
#   status     sourced | estimate (estimate: a figure we could not re-check in the primary document
#              from this machine, transcribed from the named table as recalled or from a secondary source)
#   source     where every figure comes from
";

/// data/board-power.csv: one row per board with power figures.
pub fn board_power_csv(r: &Boards) -> String {
    let mut w = csv::WriterBuilder::new().terminator(csv::Terminator::Any(b'\n')).from_writer(Vec::new());
    let row = |w: &mut csv::Writer<Vec<u8>>, f: &[String]| w.write_record(f).expect("writing to memory");
    let head = ["board", "chip", "core", "target", "clock_mhz", "volts", "active_ma", "sleep_ua", "status", "source"];
    row(&mut w, &head.map(String::from));
    for (b, p) in r.powered() {
        row(
            &mut w,
            &[
                b.id.clone(),
                chip_label(b),
                r.core_of(b).to_string(),
                b.triple.clone(),
                b.mhz.to_string(),
                p.volts.to_string(),
                p.active_ma.to_string(),
                p.sleep_ua.to_string(),
                p.status.clone(),
                p.source.clone(),
            ],
        );
    }
    let body = String::from_utf8(w.into_inner().expect("writing to memory")).expect("UTF-8 in, UTF-8 out");
    format!("{POWER_HEADER}{body}")
}

/// A Markdown cell: one line, no column separator.
fn cell(s: &str) -> String {
    s.replace('\n', " ").replace('|', "\\|")
}

/// docs/metrics.md, "Energy from the device": the boards `--board` offers.
pub fn power_table_md(r: &Boards) -> String {
    let mut s = String::from(
        "| board | chip | core (image target) | clock | supply | active | sleep | status |\n\
         |---|---|---|---:|---:|---:|---:|---|\n",
    );
    for (b, p) in r.powered() {
        s += &format!(
            "| `{}` | {} | {} ({}) | {} MHz | {} V | {} mA | {} µA | {} |\n",
            b.id,
            cell(&chip_label(b)),
            cell(r.core_of(b)),
            b.triple,
            b.mhz,
            p.volts,
            p.active_ma,
            p.sleep_ua,
            cell(&p.status)
        );
    }
    s
}

/// mcu/README.md, "Board profiles": every board's timing profile.
pub fn profile_table_md(r: &Boards) -> String {
    let mut s = String::from(
        "| id | chip, core, clock | code in | stall per missed line | cache | M4 ld/st pipelining | `--board` |\n\
         |---|---|---|---|---|---|---|\n",
    );
    for b in &r.boards {
        let miss = b.miss_cycles.unwrap_or(b.flash_ws);
        // The LX106 model is warm only: no reachable document gives the ESP8266's flash cache.
        let warm_only = b.lx106.is_some() && b.cache_lines == 0;
        let stall = if b.code_in == "sram" || warm_only {
            "–".to_string()
        } else {
            format!("{miss} per {}-byte line", b.fetch_line_bytes)
                + if b.flash_data_stall { " and per data read from flash" } else { "" }
        };
        let cache = if warm_only {
            "not modelled (warm steady state)".to_string()
        } else if b.cache_lines == 0 {
            "none".to_string()
        } else {
            format!("{} × {} B, {}-way", b.cache_lines, b.fetch_line_bytes, b.cache_ways)
        };
        // the held-out fit of [board.ID.fit] chose both (mcu/cortexm_fit.py)
        let (stall, cache) = if b.fit.is_some() { (stall + " (fitted)", cache + " (fitted)") } else { (stall, cache) };
        s += &format!(
            "| `{}` | {}, {}, {} MHz | {} | {} | {} | {} | {} |\n",
            b.id,
            cell(&b.chip),
            cell(r.core_of(b)),
            b.mhz,
            cell(&b.code_in),
            stall,
            cache,
            if b.m4_ldst_pipelining { "yes" } else { "–" },
            if b.power.is_some() { "yes" } else { "–" }
        );
    }
    s
}

/// mcu/README.md, "Targets": every target, its timing model and the board its counts stand for.
pub fn target_table_md(r: &Boards) -> String {
    let mut s = String::from(
        "| target | core | timing model | counts' board profile | Rust images | C++ (DRACO) |\n\
         |---|---|---|---|---|---|\n",
    );
    for t in &r.targets {
        s += &format!(
            "| `{}` | {} | {} | {} | {} | {} |\n",
            t.triple,
            cell(&t.core),
            t.model.as_deref().map(cell).unwrap_or_else(|| "– (not emulated)".into()),
            t.board.as_deref().map(|b| format!("`{b}`")).unwrap_or_else(|| "–".into()),
            if t.rust { "yes" } else { "–" },
            t.cpp.as_ref().map(|c| format!("`{}`", cell(&c.cxx))).unwrap_or_else(|| "–".into())
        );
    }
    s
}

/// The begin marker of a generated section of a document.
pub fn begin_marker(name: &str) -> String {
    format!("<!-- {name}: generated from data/boards.toml; scripts/data/regen-boards.sh rewrites it -->\n")
}

/// `doc` with the section `name` replaced by `body`; an error names `path` and the marker.
pub fn splice(doc: &str, path: &str, name: &str, body: &str) -> Result<String, String> {
    let begin = begin_marker(name);
    let end = format!("<!-- end {name} -->");
    let a = doc.find(&begin).ok_or_else(|| format!("{path}: no '{}' marker", begin.trim_end()))? + begin.len();
    let b = a + doc[a..].find(&end).ok_or_else(|| format!("{path}: no '{end}' marker"))?;
    Ok(format!("{}{body}{}", &doc[..a], &doc[b..]))
}

/// Every file derived from the records: (path from the repository root, its new text), given
/// the current text of each (`read`).
pub fn regenerate(
    toml_text: &str,
    read: impl Fn(&str) -> Result<String, String>,
) -> Result<Vec<(&'static str, String)>, String> {
    let r = parse(toml_text, "data/boards.toml")?;
    let metrics = splice(&read("docs/metrics.md")?, "docs/metrics.md", "board-power", &power_table_md(&r))?;
    let readme = read("mcu/README.md")?;
    let readme = splice(&readme, "mcu/README.md", "board-profiles", &profile_table_md(&r))?;
    let readme = splice(&readme, "mcu/README.md", "targets", &target_table_md(&r))?;
    Ok(vec![("data/board-power.csv", board_power_csv(&r)), ("docs/metrics.md", metrics), ("mcu/README.md", readme)])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::{parse_boards, BOARDS_CSV};

    fn repo() -> std::path::PathBuf {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
    }

    fn read(p: &str) -> Result<String, String> {
        std::fs::read_to_string(repo().join(p)).map_err(|e| format!("{p}: {e}"))
    }

    /// data/board-power.csv and the docs' board tables are what the records give;
    /// `LWCBENCH_BLESS=1` (scripts/data/regen-boards.sh) rewrites them.
    #[test]
    fn generated_files_follow_boards_toml() {
        let files = regenerate(BOARDS_TOML, read).unwrap();
        if std::env::var_os("LWCBENCH_BLESS").is_some() {
            for (p, text) in &files {
                std::fs::write(repo().join(p), text).unwrap();
            }
            return;
        }
        for (p, text) in &files {
            assert!(&read(p).unwrap() == text, "{p} differs from data/boards.toml: run scripts/data/regen-boards.sh");
        }
    }

    /// Values read from data/boards.toml by hand.
    #[test]
    fn records_by_hand() {
        let r = builtin();
        let ids: Vec<&str> = r.boards.iter().map(|b| b.id.as_str()).collect();
        assert_eq!(ids, ["rp2040", "nrf52840", "esp32c3", "mkrzero", "nano33ble", "due", "esp8266"]);
        let rp = &r.boards[0];
        assert_eq!((rp.mhz, rp.code_in.as_str(), rp.miss_cycles, rp.cache_lines), (125.0, "xip", Some(56), 2048));
        let p = rp.power.as_ref().unwrap();
        assert_eq!((p.volts, p.active_ma, p.sleep_ua, p.status.as_str()), (5.0, 25.0, 2000.0, "estimate"));
        assert!(r.boards[5].power.is_none(), "due: no power figures");
        let t = r.target("riscv32imc-unknown-none-elf").unwrap();
        assert_eq!(
            (t.core.as_str(), t.model.as_deref(), t.board.as_deref()),
            ("RV32IMC", Some("rv32"), Some("esp32c3"))
        );
        assert_eq!(t.cpp.as_ref().unwrap().libc_flags, ["--specs=picolibc.specs"]);
        let x = r.target("xtensa-lx106-elf").unwrap();
        assert_eq!((x.model.as_deref(), x.emulable, x.board.as_deref()), (Some("lx106"), false, Some("esp8266")));
        // The ESP8266: one record with its LX106 model and power figures (values read by hand).
        let e = &r.boards[6];
        assert_eq!((e.chip.as_str(), e.mhz, e.triple.as_str()), ("ESP8266EX", 80.0, "xtensa-lx106-elf"));
        let p = e.power.as_ref().unwrap();
        assert_eq!((p.volts, p.active_ma, p.sleep_ua, p.status.as_str()), (3.3, 15.0, 20.0, "sourced"));
        let lx = e.lx106.as_ref().unwrap();
        assert_eq!(lx.table, "nodemcuv2");
        assert_eq!(
            lx.timing(),
            [
                ("base", 1),
                ("load_use", 1),
                ("mul_use", 1),
                ("rsr_use", 1),
                ("taken_branch", 3),
                ("jump", 2),
                ("l32r_flash", 4),
                ("flash_fetch_hit", 0)
            ]
        );
        let fitted: Vec<&str> =
            lx.timing().iter().map(|(k, _)| *k).filter(|k| e.sources[*k].starts_with("fitted")).collect();
        assert_eq!(fitted, ["taken_branch", "jump", "l32r_flash"]);
        let fit = lx.fit.as_ref().unwrap();
        assert_eq!(fit["held_out_median_abs_slope_error_pct"].as_float(), Some(3.6));
        assert!(r.boards.iter().filter(|b| b.id != "esp8266").all(|b| b.lx106.is_none()));
        assert_eq!(chip_label(&r.boards[3]), "ATSAMD21G18A (Arduino MKR Zero)");
        assert_eq!(chip_label(&r.boards[1]), "nRF52840", "a generic board's name starts with its chip");
    }

    const FAKE: &str = r#"
[board.stm32f4disco]
name = "STM32F4 Discovery"
chip = "STM32F407VG"
triple = "thumbv7em-none-eabihf"
mhz = 168.0
code_in = "flash"
flash_ws = 5
fetch_line_bytes = 16
cache_lines = 64
cache_ways = 1
m4_ldst_pipelining = true
verified = []
[board.stm32f4disco.sources]
mhz = "dry run: not a sourced record"
[board.stm32f4disco.power]
volts = 3.0
active_ma = 40.0
sleep_ua = 2.0
status = "estimate"
source = "dry run: not a sourced record, with a comma"
"#;

    /// CONTRIBUTING.md, "Adding a board", as a dry run: one record appended to a copy of the
    /// file, and every derived table follows — the CSV `--board` reads (and so its help and
    /// error list, which come from those rows), docs/metrics.md and mcu/README.md.
    #[test]
    fn adding_a_board_is_one_record() {
        let toml = format!("{BOARDS_TOML}{FAKE}");
        let files: BTreeMap<&str, String> = regenerate(&toml, read).unwrap().into_iter().collect();
        let rows = parse_boards(&files["data/board-power.csv"], "dry run").unwrap();
        let ids: Vec<&str> = rows.iter().map(|b| b.id.as_str()).collect();
        assert_eq!(ids, ["rp2040", "nrf52840", "esp32c3", "mkrzero", "nano33ble", "esp8266", "stm32f4disco"]);
        let f = rows.last().unwrap();
        assert_eq!(
            (f.chip.as_str(), f.core.as_str(), f.clock_mhz, f.volts, f.active_ma, f.sleep_ua),
            ("STM32F407VG (STM32F4 Discovery)", "Cortex-M4F", 168.0, 3.0, 40.0, 2.0)
        );
        assert_eq!(f.source, "dry run: not a sourced record, with a comma");
        assert!(crate::board::ids_of(&rows).ends_with(", nano33ble, esp8266, stm32f4disco"));
        assert!(files["docs/metrics.md"].contains(
            "| `stm32f4disco` | STM32F407VG (STM32F4 Discovery) | Cortex-M4F (thumbv7em-none-eabihf) | 168 MHz | 3 V | 40 mA | 2 µA | estimate |"
        ));
        assert!(files["mcu/README.md"].contains(
            "| `stm32f4disco` | STM32F407VG, Cortex-M4F, 168 MHz | flash | 5 per 16-byte line | 64 × 16 B, 1-way | yes | yes |"
        ));
        // Without the record the same call gives the committed rows.
        let now = regenerate(BOARDS_TOML, read).unwrap();
        assert_eq!(parse_boards(&now[0].1, "now").unwrap(), parse_boards(BOARDS_CSV, "committed").unwrap());
    }

    /// docs/metrics.md "Limits" names the `--board` boards that share cycles because their
    /// profiles are equal: exactly those of the records (a new twin, or a profile edited apart,
    /// fails here).
    #[test]
    fn metrics_limits_name_the_boards_with_equal_profiles() {
        let doc = read("docs/metrics.md").unwrap();
        let limits = &doc[doc.find("**Limits.** Emulated cycles").unwrap()..];
        let limits = limits[..limits.find("\n\n").unwrap()].replace('\n', " ");
        let named = &limits[limits.find("(today ").expect("the 'today' list") + 7..];
        let named = &named[..named.find(')').unwrap()];
        let mut in_doc: Vec<String> = named
            .split(['`', ',', ' '])
            .filter(|w| !w.is_empty() && *w != "and" && *w != "none")
            .map(String::from)
            .collect();
        in_doc.sort();
        let r = builtin();
        let profile = |b: &BoardRecord| {
            let m = b.miss_cycles.unwrap_or(b.flash_ws);
            (
                b.triple.clone(),
                b.code_in.clone(),
                m,
                b.fetch_line_bytes,
                b.cache_lines,
                b.cache_ways,
                b.m4_ldst_pipelining,
                b.flash_data_stall,
            )
        };
        let powered: Vec<&BoardRecord> = r.powered().map(|(b, _)| b).collect();
        let mut twins: Vec<String> = powered
            .iter()
            .filter(|b| powered.iter().any(|o| o.id != b.id && profile(o) == profile(b)))
            .map(|b| b.id.clone())
            .collect();
        twins.sort();
        assert_eq!(in_doc, twins, "docs/metrics.md Limits: {limits}");
        assert!(!limits.contains("zero flash wait states"), "the profiles model wait states");
    }

    #[test]
    fn bad_records_are_one_line_naming_the_record_and_key() {
        let check = |edit: &dyn Fn(&str) -> String, want: &str| {
            let e = parse(&edit(BOARDS_TOML), "b.toml").unwrap_err();
            assert!(e.starts_with("b.toml: ") && e.contains(want) && !e.contains('\n'), "{e}");
        };
        check(&|t| t.replacen("volts = 5.0", "volts = -5.0", 1), "board rp2040.power: volts must be a positive number");
        check(&|t| t.replacen("[board.rp2040.power]", "[board.rp2040.pwoer]", 1), "unknown field `pwoer`");
        check(&|t| t.replacen("mhz = 125.0", "mhz = \"fast\"", 1), "line 49, column 7");
        check(&|t| t.replacen("triple = \"thumbv6m-none-eabi\"", "triple = \"avr\"", 1), "board rp2040: triple 'avr'");
        check(&|t| t.replacen("board = \"rp2040\"", "board = \"nrf52840\"", 1), "board 'nrf52840' is not a board");
        check(&|t| t.replacen("status = \"estimate\"", "status = \"guess\"", 1), "status must be sourced or estimate");
        check(&|t| t.replace("[board.rp2040", "[board.\"rp 2040\""), "board rp 2040: an id is");
        // The LX106 model: its table on the LX106 board only, each parameter with a source.
        check(&|t| t.replacen("[board.esp8266.lx106]", "[board.esp8266.lx107]", 1), "unknown field `lx107`");
        let no_lx = |t: &str| {
            let a = t.find("[board.esp8266.lx106]").unwrap();
            let b = t.find("[board.esp8266.power]").unwrap();
            format!("{}{}", &t[..a], &t[b..])
        };
        check(&no_lx, "board esp8266: a board of an lx106 target needs an [lx106] table");
        check(&|t| t.replacen("\njump = \"fitted", "\nx_jump = \"fitted", 1), "esp8266.lx106: jump has no source");
        check(&|t| t.replacen("taken_branch = 3\n", "taken_branch = 300\n", 1), "taken_branch must be 0..100, got 300");
        check(
            &|t| t.replacen("model = \"lx106\"", "model = \"m3\"", 1),
            "board esp8266: lx106: only a board of an lx106 target has one",
        );
        let e = splice("no markers", "d.md", "board-power", "x").unwrap_err();
        assert!(e.starts_with("d.md: no '<!-- board-power: generated"), "{e}");
    }
}
