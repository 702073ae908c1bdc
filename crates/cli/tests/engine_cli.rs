//! `--engine` on list, verify and run, with the awk mock engine (always available where `sh`
//! and `awk` are) and the failure paths: one line, and the rest of the run carries on.
use super::required;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn lwcbench(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lwcbench")).args(args).current_dir(cwd).output().expect("binary runs")
}

fn mock() -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../engines/mock/engine.sh");
    format!("sh {}", p.canonicalize().unwrap().display())
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).to_string()
}

#[test]
fn list_shows_what_an_engine_offers() {
    let dir = tempfile::tempdir().unwrap();
    let o = lwcbench(&["list", "--engine", &mock(), "--format", "csv"], dir.path());
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(out.lines().any(|l| l.starts_with("TOY-ADD,mock-awk,block,64,0,8,0,")), "{out}");
    assert_eq!(out.lines().count(), 3, "header + two ciphers: {out}");
    let o = lwcbench(&["list", "--engine", "nosuch"], dir.path());
    assert!(!o.status.success());
    let err = text(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("error: --engine: unknown engine 'nosuch'"), "{err}");
}

#[test]
fn run_with_an_engine_writes_results_and_a_dead_engine_is_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let o = lwcbench(
        &[
            "run",
            "--engine",
            &mock(),
            "--engine",
            "sh -c 'exit 3'",
            "--cipher",
            "TOY-ADD",
            "--sizes",
            "16B",
            "--kiv",
            "ss,rr",
            "-n",
            "3",
            "-w",
            "1",
            "--seed",
            "9",
            "-o",
            out.to_str().unwrap(),
            "-q",
        ],
        dir.path(),
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    let dead: Vec<&str> = err.lines().filter(|l| l.contains("exit 3")).collect();
    assert_eq!(dead.len(), 1, "{err}");
    assert!(dead[0].starts_with("lwcbench: engine sh -c 'exit 3': ") && dead[0].ends_with("its rows are off"), "{err}");
    let samples = std::fs::read_to_string(out.join("samples.csv")).unwrap();
    // encrypt and decrypt × 2 kiv × 3 reps, synthetic 1000 + 128 ns
    let rows: Vec<&str> = samples.lines().filter(|l| l.starts_with("TOY-ADD,mock-awk,")).collect();
    assert_eq!(rows.len(), 12, "{samples}");
    assert!(rows.iter().all(|l| l.contains(",1128.0")), "{samples}");
    assert!(out.join("report.html").is_file());

    // only the engine selected and it cannot start: nothing to run, one error line
    let o = lwcbench(&["run", "--engine", "sh -c 'exit 3'", "-o", dir.path().join("x").to_str().unwrap()], dir.path());
    assert!(!o.status.success());
    let err = text(&o.stderr);
    assert_eq!(err.lines().filter(|l| l.starts_with("error:")).count(), 1, "{err}");
    assert!(!dir.path().join("x").join("run.json").exists());
}

#[test]
fn verify_runs_the_vectors_through_the_engine() {
    let dir = tempfile::tempdir().unwrap();
    // The mock's toy cipher has no official vectors: verify must say so and fail.
    let o = lwcbench(&["verify", "--engine", &mock()], dir.path());
    assert!(!o.status.success());
    let out = text(&o.stdout);
    assert!(out.contains("FAIL TOY-ADD/mock-awk") && out.contains("no official vector applies"), "{out}");
    // An engine that cannot start is a failure of verify, not a silent pass.
    let o = lwcbench(&["verify", "--engine", "sh -c 'exit 3'"], dir.path());
    assert!(!o.status.success());
    assert!(text(&o.stdout).contains("FAIL engine sh -c 'exit 3'"));
    // The real engine, where pycryptodome is installed (scripts/setup.sh --test).
    let o = lwcbench(&["verify", "--engine", "pycryptodome", "--cipher", "AES-128-GCM,AES-256-OCB"], dir.path());
    let out = text(&o.stdout);
    if out.contains("pycryptodome is not installed") || out.contains("cannot start") {
        required::missing(&format!("PyCryptodome engine unavailable: {out}"));
        return;
    }
    assert!(o.status.success(), "{out}{}", text(&o.stderr));
    assert!(out.contains(" ok  AES-128-GCM/pycryptodome") && out.contains(" ok  AES-256-OCB/pycryptodome"), "{out}");
    // The engine is tortured too and reproduces the in-process libraries' checksum.
    let sum = out.lines().find(|l| l.starts_with(" ok  AES-128-GCM ") && l.contains("checksum")).unwrap_or("");
    assert!(sum.contains("pycryptodome") && sum.contains("rustcrypto"), "{out}");
    assert!(out.contains("torture: ") && out.contains(", 0 failed; checksums:"), "{out}");
}
