//! A copied or installed binary runs without the checkout it was built in (docs/install.md):
//! its data is built in, and what needs a checkout is looked up at run time, never at the
//! build's path. scripts/ci/installed.sh does the same for `cargo install` and the wheel.
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The checkout this test binary was built in.
fn checkout() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

/// `lwcbench` copied to `<tmp>/prefix/bin`, run from `<tmp>/work` with no LWCBENCH_* variable.
fn run_copy(tmp: &Path, args: &[&str], env: &[(&str, &Path)]) -> Output {
    let bin = tmp.join("prefix/bin/lwcbench");
    if !bin.exists() {
        std::fs::create_dir_all(bin.parent().unwrap()).unwrap();
        std::fs::copy(env!("CARGO_BIN_EXE_lwcbench"), &bin).unwrap();
        std::fs::create_dir_all(tmp.join("work")).unwrap();
    }
    let mut c = Command::new(&bin);
    c.args(args).current_dir(tmp.join("work"));
    for (k, _) in std::env::vars_os() {
        if k.to_string_lossy().starts_with("LWCBENCH_") || k == "MCU_VENV" {
            c.env_remove(k);
        }
    }
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("the copy runs")
}

/// A compile-time path (`env!("CARGO_MANIFEST_DIR")`) would send a copy on another machine
/// to this checkout's files: none may be left in the binary.
#[test]
fn the_binary_holds_no_path_of_its_checkout() {
    let bytes = std::fs::read(env!("CARGO_BIN_EXE_lwcbench")).unwrap();
    let needle = format!("{}/", checkout().display()).into_bytes();
    let hits = bytes.windows(needle.len()).filter(|w| *w == needle.as_slice()).count();
    assert_eq!(hits, 0, "the binary holds {} path(s) starting {:?}", hits, String::from_utf8_lossy(&needle));
}

/// Outside the checkout the built-in vectors verify, and `mcu` (which needs a checkout's
/// tooling) refuses in one line naming the variable to set, writing nothing.
#[test]
fn a_copy_outside_the_checkout_verifies_and_refuses_mcu_in_one_line() {
    let d = tempfile::tempdir().unwrap();
    let o = run_copy(d.path(), &["verify", "--cipher", "ChaCha20"], &[]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{out}{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.lines().any(|l| l.starts_with("verify:") && l.contains(" 0 failed")), "{out}");
    // no official vector folder here: every passed vector is a built-in one
    assert!(out.contains("official vectors: folder not found"), "{out}");
    let line = out.lines().find(|l| l.contains("ChaCha20/rustcrypto")).unwrap();
    let passed: u32 = line.split_whitespace().nth(2).unwrap().parse().unwrap();
    assert!(line.starts_with(" ok ") && passed > 0, "{line}");

    let no_venv = d.path().join("no-venv");
    let o = run_copy(d.path(), &["mcu", "--out", "m"], &[("MCU_VENV", &no_venv)]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("error: mcu: mcu/run.py not found (needed for lwcbench mcu"), "{err}");
    assert!(err.contains("set LWCBENCH_ROOT to an lwcbench checkout"), "{err}");
    assert!(!d.path().join("work/m").exists(), "mcu wrote its output directory");
}
