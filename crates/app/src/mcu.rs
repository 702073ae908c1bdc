//! `lwcbench mcu`: microcontroller cost without a board. Runs `mcu/run.py` with the
//! project's Python venv and writes its tables plus a `run.json` into `--out`.
//!
//! * repo root: the lwcbench checkout found at run time (`lwcbench_catalog::paths`:
//!   `LWCBENCH_ROOT`, else the one holding this program, e.g. `target/release/lwcbench`);
//!   an installed binary without one says to set `LWCBENCH_ROOT`;
//! * Python: `$MCU_VENV/bin/python`, else `<root>/.venv/bin/python` (what
//!   `scripts/setup.sh --test` creates);
//! * images: `LWCBENCH_MCU_TARGET_DIR`, else `<root>/target/mcu` (as scripts/test.sh);
//! * files appear all-or-nothing: run.py writes into a temporary directory inside `--out`, the
//!   files are renamed into place on success, `run.json` last.
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Instant, SystemTime};

use clap::{Args, Subcommand, ValueEnum};

/// What `lwcbench mcu` produces.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum McuPreset {
    /// Flash / static RAM / stack per cipher and target (mcu_sizes.csv, mcu.md).
    Sizes,
    /// Sizes plus emulated instruction and cycle counts (adds mcu_counts.csv).
    Counts,
}

/// `lwcbench mcu` options.
#[derive(Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct McuArgs {
    #[command(subcommand)]
    sub: Option<McuSub>,
    /// How the run was asked for, as run.json records it: the Python call when the binding
    /// sets it, else this process's command line.
    #[arg(skip)]
    pub invocation: Option<Vec<String>>,
    /// What to produce: `sizes` (FELICS-style flash/RAM/stack table) or `counts` (also the
    /// emulated init/keystream/full counts at 1, 8, 128, 1024 and 22,464 bits).
    #[arg(long, value_enum, default_value = "counts")]
    preset: McuPreset,
    /// Output directory (created if missing); `lwcbench report DIR` renders it.
    #[arg(short, long, required = true)]
    out: Option<PathBuf>,
    /// Use the images already built (skip the cross-builds).
    #[arg(long)]
    no_build: bool,
    /// Build profiles: Os, O3 or both (comma-separated).
    #[arg(long, default_value = "Os,O3")]
    profiles: String,
    /// Replace a finished run in --out.
    #[arg(long)]
    force: bool,
    /// Only the images of this board's target, counted with this board's own profile (a board
    /// of data/boards.toml; esp8266: the C/C++ images in QEMU's lx106 CPU with the LX106 model,
    /// Os only). Default: every target, each with the board its counts stand for.
    #[arg(long)]
    board: Option<String>,
}

#[derive(Subcommand)]
enum McuSub {
    /// Reproduce a NIST LWC microcontroller AEAD or hash table (MKR Zero / Nano 33 BLE / Due; the
    /// NodeMCU v2's AEAD table) in emulation: builds each implementation the published table lists
    /// from the shared NIST LWC tree ($LWCBENCH_NIST_LWC, else ../shared/nist-lwc), emulates every
    /// enc(x:y) or h(x) cell with the board's profile (data/boards.toml; the NodeMCU v2 in QEMU with
    /// the LX106 model of its esp8266 record) and writes published / emulated / error % per
    /// cell and per implementation (nist_lwc_cells.csv, nist_lwc_impls.csv, nist_lwc.md, run.json).
    NistLwc(NistLwcArgs),
    /// A board run of `lwcbench collect` beside the emulated cycles of the same code: per cipher
    /// of the run with an emulated row on --board (stream ciphers' keystream, AEADs' encrypt),
    /// board and emulated warm cycles at 16 and 128 bytes, the per-byte slopes
    /// (c128 - c16) / 112 and the emulation's error in % (docs/board.md, "Checking the model").
    CheckBoard(CheckBoardArgs),
}

#[derive(Args)]
struct CheckBoardArgs {
    /// A run directory of `lwcbench collect` (its board-log.txt is read) or a board log file.
    run: PathBuf,
    /// The board of data/boards.toml whose emulated rows to compare with (rp2040, esp8266, …);
    /// its clock converts ns/op to cycles where the log has no cycle counter.
    #[arg(long)]
    board: String,
    /// Emulated cycles table with the columns of data/emulated-cycles.csv (default: that file,
    /// built in).
    #[arg(long, value_name = "CSV")]
    emulated: Option<PathBuf>,
}

#[derive(Args)]
struct NistLwcArgs {
    /// Board whose published table is reproduced (its profile in data/boards.toml; nodemcuv2:
    /// ESP8266 in QEMU, the esp8266 record's LX106 model, AEAD only).
    #[arg(long, value_parser = ["mkrzero", "nano33ble", "due", "nodemcuv2"])]
    board: String,
    /// Which published table: AEAD (enc(x:y) cells) or hash (h(x) cells).
    #[arg(long, default_value = "aead", value_parser = ["aead", "hash"])]
    primitive: String,
    /// Compiler configuration of the published rows (-Os, -O1, -O2, -O3). ARM builds below -O3
    /// add -fno-tree-vectorize: the tables' GCC (before 12) did not vectorize there.
    #[arg(long, default_value = "o2", value_parser = ["os", "o1", "o2", "o3"])]
    config: String,
    /// Only implementations matching this glob (SUBMISSION/VARIANT/IMPL or IMPL, e.g. 'armv*').
    #[arg(long = "impl", default_value = "*")]
    impl_glob: String,
    /// Cells to emulate: every cell of the table, or only enc(0:128) and enc(0:1024) (h(128), h(1024)).
    #[arg(long, default_value = "all", value_parser = ["all", "slope"])]
    cells: String,
    /// Instruction cap per encryption call (an implementation past it is reported, not run on).
    #[arg(long, default_value_t = 300_000_000, value_parser = clap::value_parser!(u64).range(1000..=2_000_000_000))]
    max_insns: u64,
    /// Parallel builds.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=64))]
    jobs: u32,
    /// Output directory (created if missing).
    #[arg(short, long)]
    out: PathBuf,
    /// Replace a finished run in --out.
    #[arg(long)]
    force: bool,
}

const SETUP_HINT: &str = "set up the cross toolchains and the venv with `scripts/setup.sh --test`";

/// Repo root: the tree holding `mcu/<script>` (`lwcbench_catalog::paths`), or the one-line
/// reason there is none.
fn repo_root(script: &str) -> Result<PathBuf, String> {
    let rel = format!("mcu/{script}");
    match lwcbench_catalog::paths::find(&rel) {
        Some(p) => Ok(p.parent().and_then(Path::parent).map(Path::to_path_buf).unwrap_or_default()),
        None => {
            Err(format!("mcu: {}", lwcbench_catalog::paths::missing(&rel, "lwcbench mcu and its cross toolchains")))
        }
    }
}

fn python(root: &Path) -> PathBuf {
    match std::env::var_os("MCU_VENV") {
        Some(v) => PathBuf::from(v).join("bin/python"),
        None => root.join(".venv/bin/python"),
    }
}

/// `lwcbench mcu`: the tables of `--preset` (or the NIST LWC table) into `--out`.
pub fn run(a: &McuArgs) -> Result<(), String> {
    match &a.sub {
        Some(McuSub::NistLwc(n)) => return run_nist_lwc(n, crate::invocation(&a.invocation)),
        Some(McuSub::CheckBoard(c)) => {
            print!("{}", crate::check_board::check_path(&c.run, &c.board, c.emulated.as_deref())?);
            return Ok(());
        }
        None => {}
    }
    let out = a.out.as_ref().ok_or("--out: required")?;
    for p in a.profiles.split(',') {
        if !matches!(p, "Os" | "O3") {
            return Err(format!("--profiles: unknown profile {p:?} (expected Os, O3 or Os,O3)"));
        }
    }
    if let Some(b) = &a.board {
        let all = lwcbench_engine::boards::builtin();
        if !all.boards.iter().any(|r| &r.id == b) {
            let ids: Vec<&str> = all.boards.iter().map(|r| r.id.as_str()).collect();
            return Err(format!("--board: '{b}' is not a board of data/boards.toml ({})", ids.join(", ")));
        }
    }
    let root = repo_root("run.py")?;
    let script = root.join("mcu/run.py");
    let py = check_python(&root, &script)?;
    let tmp = prepare_out(out, a.force)?;
    let res = run_into(a, out, &root, &script, &py, &tmp);
    let _ = std::fs::remove_dir_all(&tmp);
    res
}

/// The comparison of `lwcbench mcu check-board`, unprinted, when `a` holds that subcommand
/// (the Python binding returns its rows; the CLI prints it).
pub fn check_board(a: &McuArgs) -> Option<Result<crate::check_board::Check, String>> {
    match &a.sub {
        Some(McuSub::CheckBoard(c)) => Some(crate::check_board::check_run(&c.run, &c.board, c.emulated.as_deref())),
        _ => None,
    }
}

/// Refuses a finished run unless --force, creates --out, returns the temporary directory name.
fn prepare_out(out: &Path, force: bool) -> Result<PathBuf, String> {
    if out.join("run.json").exists() && !force {
        return Err(format!("--out: {} already holds a finished run (use --force to replace it)", out.display()));
    }
    std::fs::create_dir_all(out).map_err(|e| format!("--out: {}: {e}", out.display()))?;
    Ok(out.join(format!(".mcu-tmp-{}", std::process::id())))
}

fn check_python(root: &Path, script: &Path) -> Result<PathBuf, String> {
    if !script.is_file() {
        return Err(format!("mcu: {} not found (set LWCBENCH_ROOT to the lwcbench source tree)", script.display()));
    }
    let py = python(root);
    let ok = Command::new(&py)
        .args(["-c", "import unicorn, capstone, elftools"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !ok {
        return Err(format!("mcu: no Python venv with unicorn/capstone/pyelftools at {}; {SETUP_HINT}", py.display()));
    }
    Ok(py)
}

fn run_nist_lwc(n: &NistLwcArgs, args: Vec<String>) -> Result<(), String> {
    let root = repo_root("nistlwc.py")?;
    let script = root.join("mcu/nistlwc.py");
    let py = check_python(&root, &script)?;
    let tmp = prepare_out(&n.out, n.force)?;
    let res = nist_lwc_into(n, &py, &script, &tmp, args);
    let _ = std::fs::remove_dir_all(&tmp);
    res
}

fn nist_lwc_into(n: &NistLwcArgs, py: &Path, script: &Path, tmp: &Path, args: Vec<String>) -> Result<(), String> {
    let started = SystemTime::now();
    let mut cmd = Command::new(py);
    cmd.arg(script).arg("--board").arg(&n.board).arg("--primitive").arg(&n.primitive);
    cmd.arg("--config").arg(&n.config).arg("--impl").arg(&n.impl_glob);
    cmd.arg("--cells").arg(&n.cells).arg("--max-insns").arg(n.max_insns.to_string()).arg("--out").arg(tmp);
    cmd.arg("--jobs").arg(n.jobs.to_string());
    eprintln!("mcu nist-lwc: running {} (builds and emulates every implementation; minutes) ...", script.display());
    let mut child = cmd
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("mcu: {}: {e}", py.display()))?;
    // progress goes through; nistlwc.py's own `error:` line becomes this command's one error
    let mut last_err = None;
    if let Some(err) = child.stderr.take() {
        for line in std::io::BufRead::lines(std::io::BufReader::new(err)).map_while(Result::ok) {
            match line.strip_prefix("error: ") {
                Some(e) => last_err = Some(e.to_string()),
                None if line.starts_with("wrote ") => {}
                None => eprintln!("{line}"),
            }
        }
    }
    let status = child.wait().map_err(|e| format!("mcu: {}: {e}", py.display()))?;
    if !status.success() {
        return Err(last_err.unwrap_or_else(|| format!("mcu nist-lwc: mcu/nistlwc.py failed ({status})")));
    }
    let files = ["nist_lwc_cells.csv", "nist_lwc_impls.csv", "nist_lwc.md"];
    for name in files {
        std::fs::rename(tmp.join(name), n.out.join(name)).map_err(|e| format!("--out: {}: {e}", n.out.display()))?;
    }
    let text = std::fs::read_to_string(tmp.join("run.json")).map_err(|e| format!("mcu nist-lwc: run.json: {e}"))?;
    let mut record: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("mcu nist-lwc: run.json from nistlwc.py: {e}"))?;
    if let Some(o) = record.as_object_mut() {
        o.insert("started_utc".into(), lwcbench_engine::results::rfc3339(started).into());
        o.insert("args".into(), args.into());
        o.insert("tool_version".into(), env!("CARGO_PKG_VERSION").into());
    }
    let text = serde_json::to_string_pretty(&record).map_err(|e| e.to_string())? + "\n";
    lwcbench_engine::results::write_atomic(&n.out, "run.json", text.as_bytes())
        .map_err(|e| format!("--out: {}: {e}", n.out.display()))?;
    println!("wrote {} ({}, run.json)", n.out.display(), files.join(", "));
    Ok(())
}

fn run_into(a: &McuArgs, dest: &Path, root: &Path, script: &Path, py: &Path, tmp: &Path) -> Result<(), String> {
    let started = SystemTime::now();
    let t0 = Instant::now();
    let mut cmd = Command::new(py);
    cmd.arg(script).arg("--out").arg(tmp).arg("--profiles").arg(&a.profiles);
    if a.no_build {
        cmd.arg("--no-build");
    }
    if a.preset == McuPreset::Sizes {
        cmd.arg("--sizes-only");
    }
    if let Some(b) = &a.board {
        cmd.arg("--board").arg(b);
    }
    // the mcu/ cargo projects have their own workspaces and target directory (not the root
    // workspace's CARGO_TARGET_DIR, which a developer shell may have set)
    let tdir =
        std::env::var_os("LWCBENCH_MCU_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| root.join("target/mcu"));
    cmd.env("CARGO_TARGET_DIR", tdir);
    eprintln!("mcu: running {} (this builds and emulates every image; minutes) ...", script.display());
    let out = cmd.stdout(std::process::Stdio::inherit()).output().map_err(|e| format!("mcu: {}: {e}", py.display()))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let last = err.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").trim().to_string();
        return Err(format!("mcu: mcu/run.py failed ({}): {last}; {SETUP_HINT}", out.status));
    }
    // Move the finished files into place, then run.json last: a directory with run.json is complete.
    let mut files = Vec::new();
    for name in ["mcu_sizes.csv", "mcu_counts.csv", "mcu.md"] {
        let src = tmp.join(name);
        if src.exists() {
            std::fs::rename(&src, dest.join(name)).map_err(|e| format!("--out: {}: {e}", dest.display()))?;
            files.push(name);
        } else {
            let _ = std::fs::remove_file(dest.join(name)); // stale file of another preset
        }
    }
    // the board profile each emulated core stands for (run.py writes it; sizes-only runs have none)
    let boards = std::fs::read_to_string(tmp.join("boards.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .unwrap_or(serde_json::Value::Null);
    let record = serde_json::json!({
        "kind": "mcu",
        "boards": boards,
        "preset": match a.preset { McuPreset::Sizes => "sizes", McuPreset::Counts => "counts" },
        "started_utc": lwcbench_engine::results::rfc3339(started),
        "duration_s": t0.elapsed().as_secs_f64(),
        "args": crate::invocation(&a.invocation),
        "tool_version": env!("CARGO_PKG_VERSION"),
        "profiles": a.profiles,
        "board": a.board,
        "files": files,
        "method": "mcu/README.md",
    });
    let text = serde_json::to_string_pretty(&record).map_err(|e| e.to_string())? + "\n";
    lwcbench_engine::results::write_atomic(dest, "run.json", text.as_bytes())
        .map_err(|e| format!("--out: {}: {e}", dest.display()))?;
    println!("wrote {} ({}, run.json)", dest.display(), files.join(", "));
    Ok(())
}
