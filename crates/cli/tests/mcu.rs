//! `lwcbench mcu` and `lwcbench report` on its output. The real run needs the mcu venv
//! (unicorn/capstone, from `scripts/setup.sh --test`) and builds the -Os images incrementally
//! into target/mcu (which mcu/tests then reuse); without the venv it is skipped with a note.
//! The error paths always run.
use super::required;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn lwcbench(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_lwcbench"));
    c.args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("binary runs")
}

fn one_error(o: &Output, needle: &str) {
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(lines[0].contains(needle), "{:?} does not mention {needle:?}", lines[0]);
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The mcu venv (unicorn/capstone), or None with a note (the test then skips its real run).
fn mcu_venv() -> Option<PathBuf> {
    let venv = std::env::var("MCU_VENV").map(PathBuf::from).unwrap_or_else(|_| repo().join(".venv"));
    let ok = Command::new(venv.join("bin/python"))
        .args(["-c", "import unicorn, capstone, elftools"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        required::missing(&format!("no mcu venv at {} (scripts/setup.sh --test makes it)", venv.display()));
    }
    ok.then_some(venv)
}

#[test]
fn mcu_without_source_tree_or_venv_is_one_clean_error() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("out");
    let o = lwcbench(&["mcu", "--out", out.to_str().unwrap()], &[("LWCBENCH_ROOT", d.path().to_str().unwrap())]);
    one_error(&o, "LWCBENCH_ROOT");
    let o = lwcbench(
        &["mcu", "--out", out.to_str().unwrap()],
        &[("LWCBENCH_ROOT", repo().to_str().unwrap()), ("MCU_VENV", d.path().join("no-venv").to_str().unwrap())],
    );
    one_error(&o, "scripts/setup.sh --test");
    assert!(!out.join("run.json").exists());
    let o = lwcbench(&["mcu", "--profiles", "O2", "--out", out.to_str().unwrap()], &[]);
    one_error(&o, "--profiles");
}

#[test]
fn mcu_sizes_preset_writes_tables_and_report() {
    let Some(venv) = mcu_venv() else { return };
    let tdir =
        std::env::var("LWCBENCH_MCU_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|_| repo().join("target/mcu"));
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("mcu");
    let env = [("MCU_VENV", venv.to_str().unwrap()), ("LWCBENCH_MCU_TARGET_DIR", tdir.to_str().unwrap())];
    let o = lwcbench(&["mcu", "--preset", "sizes", "--profiles", "Os", "--out", out.to_str().unwrap()], &env);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let sizes = std::fs::read_to_string(out.join("mcu_sizes.csv")).unwrap();
    assert!(sizes.lines().any(|l| l.starts_with("DRACO,rust-fast,Rust,draco_fast,thumbv6m-none-eabi")));
    assert!(sizes.lines().any(|l| l.starts_with("AES-128,rustcrypto")));
    assert!(!out.join("mcu_counts.csv").exists());
    let rec: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    assert_eq!(rec["kind"], "mcu");
    assert_eq!(rec["preset"], "sizes");
    let leftovers: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with('.'))
        .collect();
    assert!(leftovers.is_empty());
    // a second run into the finished directory needs --force
    let o = lwcbench(&["mcu", "--preset", "sizes", "--no-build", "--out", out.to_str().unwrap()], &env);
    one_error(&o, "--force");
    let o = lwcbench(&["report", out.to_str().unwrap()], &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("<h3>Flash and RAM"));
    assert!(html.contains("<td>DRACO</td><td>rust-fast</td>"));
}

#[test]
fn mcu_nist_lwc_takes_the_nodemcu_and_refuses_its_hash_table() {
    let Some(venv) = mcu_venv() else { return };
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("out");
    let o = lwcbench(
        &["mcu", "nist-lwc", "--board", "nodemcuv2", "--primitive", "hash", "--out", out.to_str().unwrap()],
        &[("MCU_VENV", venv.to_str().unwrap()), ("LWCBENCH_ROOT", repo().to_str().unwrap())],
    );
    one_error(&o, "AEAD table only");
    assert!(!out.join("run.json").exists());
}

#[test]
fn mcu_nist_lwc_bad_input_is_one_clean_error() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("out");
    let o = lwcbench(&["mcu", "nist-lwc", "--board", "uno", "--out", out.to_str().unwrap()], &[]);
    one_error(&o, "--board");
    let o = lwcbench(&["mcu", "nist-lwc", "--board", "mkrzero", "--config", "o4", "--out", out.to_str().unwrap()], &[]);
    one_error(&o, "--config");
    let o =
        lwcbench(&["mcu", "nist-lwc", "--board", "mkrzero", "--primitive", "xof", "--out", out.to_str().unwrap()], &[]);
    one_error(&o, "--primitive");
    let Some(venv) = mcu_venv() else { return };
    let missing = d.path().join("no-nist-lwc");
    let o = lwcbench(
        &["mcu", "nist-lwc", "--board", "mkrzero", "--out", out.to_str().unwrap()],
        &[
            ("MCU_VENV", venv.to_str().unwrap()),
            ("LWCBENCH_ROOT", repo().to_str().unwrap()),
            ("LWCBENCH_NIST_LWC", missing.to_str().unwrap()),
        ],
    );
    one_error(&o, "LWCBENCH_NIST_LWC");
    assert!(!out.join("run.json").exists());
    let leftovers: Vec<_> = std::fs::read_dir(&out).unwrap().flatten().collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// `mcu check-board` (crates/app/src/check_board.rs tests the figures): the table on stdout,
/// bad input as one `error:` line and a non-zero exit.
#[test]
fn mcu_check_board_prints_the_table_and_one_error_line() {
    let logs = repo().join("crates/engine/tests/board-logs");
    let (log, table) = (logs.join("check-board.log"), logs.join("check-board-emulated.csv"));
    let (log, table) = (log.to_str().unwrap(), table.to_str().unwrap());
    let o = lwcbench(&["mcu", "check-board", log, "--board", "rp2040", "--emulated", table], &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.lines().any(|l| l.starts_with("AES-128-GCM/rustcrypto ")), "{out}");
    one_error(&lwcbench(&["mcu", "check-board", log, "--board", "nope"], &[]), "--board: 'nope'");
    let v3 = logs.join("v3.log");
    one_error(
        &lwcbench(&["mcu", "check-board", v3.to_str().unwrap(), "--board", "rp2040"], &[]),
        "v3.log: the run is incomplete: the header at line 1 is malformed: format version 3",
    );
    one_error(
        &lwcbench(&["mcu", "check-board", "/nonexistent/run", "--board", "rp2040"], &[]),
        "RUN: /nonexistent/run",
    );
}
