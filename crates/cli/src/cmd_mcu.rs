//! `lwcbench mcu`: microcontroller cost without a board (issue #8). Runs `mcu/run.py` with the
//! project's Python venv and writes its tables plus a `run.json` into `--out`.
//!
//! * repo root: `LWCBENCH_ROOT`, else the source tree this binary was built from
//!   (compile-time `CARGO_MANIFEST_DIR`/../..);
//! * Python: `$MCU_VENV/bin/python`, else `<root>/.venv/bin/python` (what
//!   `scripts/setup.sh --test` creates);
//! * images: `LWCBENCH_MCU_TARGET_DIR`, else `<root>/target/mcu` (as scripts/test.sh);
//! * files appear all-or-nothing: run.py writes into a temporary directory inside `--out`, the
//!   files are renamed into place on success, `run.json` last.
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Instant, SystemTime};

use clap::{Args, ValueEnum};

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum McuPreset {
    /// Flash / static RAM / stack per cipher and target (mcu_sizes.csv, mcu.md).
    Sizes,
    /// Sizes plus emulated instruction and cycle counts (adds mcu_counts.csv).
    Counts,
}

#[derive(Args)]
pub struct McuArgs {
    /// What to produce: `sizes` (FELICS-style flash/RAM/stack table) or `counts` (also the
    /// emulated init/keystream/full counts at 1, 8, 128, 1024 and 22,464 bits).
    #[arg(long, value_enum, default_value = "counts")]
    preset: McuPreset,
    /// Output directory (created if missing); `lwcbench report DIR` renders it.
    #[arg(short, long)]
    out: PathBuf,
    /// Use the images already built (skip the cross-builds).
    #[arg(long)]
    no_build: bool,
    /// Build profiles: Os, O3 or both (comma-separated).
    #[arg(long, default_value = "Os,O3")]
    profiles: String,
    /// Replace a finished run in --out.
    #[arg(long)]
    force: bool,
}

const SETUP_HINT: &str = "set up the cross toolchains and the venv with `scripts/setup.sh --test`";

/// Repo root: LWCBENCH_ROOT or the source tree of this build.
fn repo_root() -> PathBuf {
    match std::env::var_os("LWCBENCH_ROOT") {
        Some(r) => PathBuf::from(r),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."),
    }
}

fn python(root: &Path) -> PathBuf {
    match std::env::var_os("MCU_VENV") {
        Some(v) => PathBuf::from(v).join("bin/python"),
        None => root.join(".venv/bin/python"),
    }
}

pub fn run(a: &McuArgs) -> Result<(), String> {
    for p in a.profiles.split(',') {
        if !matches!(p, "Os" | "O3") {
            return Err(format!("--profiles: unknown profile {p:?} (expected Os, O3 or Os,O3)"));
        }
    }
    let root = repo_root();
    let script = root.join("mcu/run.py");
    if !script.is_file() {
        return Err(format!("mcu: {} not found (set LWCBENCH_ROOT to the lwcbench source tree)", script.display()));
    }
    let py = python(&root);
    let ok = Command::new(&py)
        .args(["-c", "import unicorn, capstone, elftools"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !ok {
        return Err(format!("mcu: no Python venv with unicorn/capstone/pyelftools at {}; {SETUP_HINT}", py.display()));
    }
    if a.out.join("run.json").exists() && !a.force {
        return Err(format!("--out: {} already holds a finished run (use --force to replace it)", a.out.display()));
    }
    std::fs::create_dir_all(&a.out).map_err(|e| format!("--out: {}: {e}", a.out.display()))?;
    let tmp = a.out.join(format!(".mcu-tmp-{}", std::process::id()));
    let res = run_into(a, &root, &script, &py, &tmp);
    let _ = std::fs::remove_dir_all(&tmp);
    res
}

fn run_into(a: &McuArgs, root: &Path, script: &Path, py: &Path, tmp: &Path) -> Result<(), String> {
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
            std::fs::rename(&src, a.out.join(name)).map_err(|e| format!("--out: {}: {e}", a.out.display()))?;
            files.push(name);
        } else {
            let _ = std::fs::remove_file(a.out.join(name)); // stale file of another preset
        }
    }
    let record = serde_json::json!({
        "kind": "mcu",
        "preset": match a.preset { McuPreset::Sizes => "sizes", McuPreset::Counts => "counts" },
        "started_utc": lwcbench_engine::results::rfc3339(started),
        "duration_s": t0.elapsed().as_secs_f64(),
        "args": std::env::args().collect::<Vec<_>>(),
        "tool_version": env!("CARGO_PKG_VERSION"),
        "profiles": a.profiles,
        "files": files,
        "method": "mcu/README.md",
    });
    let text = serde_json::to_string_pretty(&record).map_err(|e| e.to_string())? + "\n";
    lwcbench_engine::results::write_atomic(&a.out, "run.json", text.as_bytes())
        .map_err(|e| format!("--out: {}: {e}", a.out.display()))?;
    println!("wrote {} ({}, run.json)", a.out.display(), files.join(", "));
    Ok(())
}
