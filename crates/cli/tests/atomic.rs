//! Fault injection on the result directory: `run`, `collect`
//! and `report` are killed (SIGKILL) at every write, fsync, rename and removal in turn, and
//! made to hit "disk full" (ENOSPC) at every step, with and without `--force`
//! (`LWCBENCH_FAILPOINT=N[:enospc]`, crates/engine/src/results.rs). After each interruption
//! `out` must hold the previous complete run, the new complete run, or nothing: every file
//! `run.json` lists and no other, all from one run, report.html included.
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn log(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../engine/tests/board-logs").join(name).display().to_string()
}

fn lwcbench(args: &[String], cwd: &Path, failpoint: Option<String>) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_lwcbench"));
    c.args(args).current_dir(cwd).env_remove("LWCBENCH_FAILPOINT");
    if let Some(f) = failpoint {
        c.env("LWCBENCH_FAILPOINT", f);
    }
    c.output().expect("binary runs")
}

fn strings(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| s.to_string()).collect()
}

/// A ChaCha20 host run (one group of 16 bits).
fn run_cmd(force: bool) -> Vec<String> {
    let mut v = strings(&["run", "--cipher", "ChaCha20", "--sizes", "16", "--reps", "3", "--warmup", "0", "--quiet"]);
    v.extend(strings(&["-o", "out"]));
    if force {
        v.push("--force".into());
    }
    v
}

/// The DRACO + Trivium board log (writes board-log.txt besides the usual files).
fn collect_cmd(force: bool) -> Vec<String> {
    let mut v = vec!["collect".into(), "--from-log".into(), log("good.log"), "-o".into(), "out".into()];
    if force {
        v.push("--force".into());
    }
    v
}

/// What a complete run directory holds: its file names and the ciphers of its tables.
#[derive(Debug, PartialEq, Eq, Clone)]
struct Run {
    files: BTreeSet<String>,
    ciphers: BTreeSet<String>,
    report: String,
}

const CIPHERS: [&str; 3] = ["ChaCha20", "DRACO", "Trivium"];

fn column(path: &Path, col: &str) -> BTreeSet<String> {
    let mut r = csv::Reader::from_path(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let i = r.headers().unwrap().iter().position(|h| h == col).unwrap();
    r.records().map(|x| x.unwrap()[i].to_string()).collect()
}

/// `None` when `out` does not exist; panics unless it is one complete, unmixed run.
fn inspect(out: &Path) -> Option<Run> {
    if !out.exists() {
        return None;
    }
    let on_disk: BTreeSet<String> =
        std::fs::read_dir(out).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    let rj = out.join("run.json");
    assert!(rj.is_file(), "{} exists without run.json: {on_disk:?}", out.display());
    let run: serde_json::Value = serde_json::from_slice(&std::fs::read(&rj).unwrap()).unwrap();
    let listed: BTreeSet<String> =
        run["files"].as_array().unwrap().iter().map(|f| f.as_str().unwrap().to_string()).collect();
    assert_eq!(on_disk, listed, "files on disk differ from run.json's list");
    assert!(listed.contains("report.html"), "{listed:?}");
    let ciphers = column(&out.join("samples.csv"), "cipher");
    assert_eq!(column(&out.join("summary.csv"), "cipher"), ciphers, "summary.csv from another run");
    let report = std::fs::read_to_string(out.join("report.html")).unwrap();
    if !report.starts_with("OLD REPORT") {
        // (the board run's notes mention the host's ChaCha20 RNG: only the board ciphers
        // tell the runs apart in the negative direction)
        for c in CIPHERS {
            assert!(!ciphers.contains(c) || report.contains(c), "report.html lacks {c} of samples.csv");
            assert!(c == "ChaCha20" || ciphers.contains(c) || !report.contains(c), "report.html shows {c}");
        }
    }
    Some(Run { files: listed, ciphers, report: if report.starts_with("OLD REPORT") { report } else { String::new() } })
}

/// Interrupt `cmd` at every step in turn (kill, then ENOSPC) in a fresh copy of `before` and
/// check the all-or-nothing rule; returns the number of steps.
fn every_step(cmd: &[String], before: Option<&Path>) -> u64 {
    let scratch = tempfile::tempdir().unwrap();
    let fresh = |k: &str| -> PathBuf {
        let d = scratch.path().join(k);
        std::fs::create_dir(&d).unwrap();
        if let Some(b) = before {
            copy_dir(b, &d.join("out"));
        }
        d
    };
    let old = before.map(|b| inspect(b).unwrap());
    // the complete new run, for comparison
    let d = fresh("reference");
    let o = lwcbench(cmd, &d, None);
    assert!(o.status.success(), "{cmd:?}: {}", String::from_utf8_lossy(&o.stderr));
    let new = inspect(&d.join("out")).unwrap();
    assert_ne!(Some(&new), old.as_ref(), "{cmd:?}: the new run must differ from the old");
    let mut steps = 0;
    for n in 1..500u64 {
        for mode in ["kill", "enospc"] {
            let d = fresh(&format!("{n}-{mode}"));
            let o = lwcbench(cmd, &d, Some(format!("{n}:{mode}")));
            let err = String::from_utf8_lossy(&o.stderr).to_string();
            let state = inspect(&d.join("out"));
            let ok = state.is_none() || state == old || state.as_ref() == Some(&new);
            assert!(ok, "{cmd:?} at step {n} ({mode}): {state:?}, old {old:?}, new {new:?}\n{err}");
            if mode == "enospc" && !o.status.success() {
                // a failed command leaves what was there (the new run never appears)
                assert!(state == old || (old.is_none() && state.is_none()), "{cmd:?} step {n}: {state:?}\n{err}");
                let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
                assert_eq!(errors.len(), 1, "{err}");
                assert!(errors[0].contains("No space left on device"), "{err}");
            }
            if mode == "kill" {
                if o.status.success() {
                    // no step n: every step has been interrupted once
                    assert_eq!(state.as_ref(), Some(&new));
                    assert!(n > 3, "{cmd:?}: only {n} steps? {err}");
                    return steps;
                }
                assert!(err.contains(&format!("killed at step {n}")), "{cmd:?} step {n}: {err}");
                steps = n;
                // the next command into this --out removes what the killed one left
                let o = lwcbench(cmd, &d, None);
                let again = inspect(&d.join("out"));
                if old.is_some() || state.is_none() {
                    // with --force (or `report`), or into a free --out, the command succeeds
                    assert!(o.status.success(), "{cmd:?} after step {n}: {}", String::from_utf8_lossy(&o.stderr));
                }
                let hidden: Vec<String> = std::fs::read_dir(&d)
                    .unwrap()
                    .map(|e| e.unwrap().file_name().into_string().unwrap())
                    .filter(|f| f != "out")
                    .collect();
                assert!(hidden.is_empty(), "{cmd:?} step {n}: left behind after the next run: {hidden:?}");
                if o.status.success() {
                    assert_eq!(again.as_ref(), Some(&new));
                }
            }
        }
    }
    panic!("{cmd:?}: more than 500 steps");
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

/// A complete run made by `cmd` in a new temporary directory.
fn made_by(cmd: &[String]) -> (tempfile::TempDir, PathBuf) {
    let t = tempfile::tempdir().unwrap();
    let o = lwcbench(cmd, t.path(), None);
    assert!(o.status.success(), "{cmd:?}: {}", String::from_utf8_lossy(&o.stderr));
    let p = t.path().join("out");
    (t, p)
}

#[test]
fn run_is_all_or_nothing_at_every_step() {
    assert!(every_step(&run_cmd(false), None) >= 10);
}

#[test]
fn run_force_replaces_a_run_whole_at_every_step() {
    // The old run is a board run with board-log.txt: the new host run must not keep it.
    let (_t, old) = made_by(&collect_cmd(false));
    assert!(old.join("board-log.txt").is_file());
    every_step(&run_cmd(true), Some(&old));
}

#[test]
fn collect_is_all_or_nothing_at_every_step() {
    every_step(&collect_cmd(false), None);
    let (_t, old) = made_by(&run_cmd(false));
    every_step(&collect_cmd(true), Some(&old));
}

#[test]
fn report_replaces_its_page_whole_at_every_step() {
    let (_t, dir) = made_by(&run_cmd(false));
    // A recognisable old page, then the same without the page or its listing (as written by
    // earlier versions, which listed no report.html).
    std::fs::write(dir.join("report.html"), "OLD REPORT").unwrap();
    let report = vec!["report".to_string(), "out".to_string()];
    every_step(&report, Some(&dir));
}

#[test]
fn report_html_is_listed_and_written_with_the_run() {
    // run.json's file list names report.html, and report.html is there whenever run.json is
    let (_t, dir) = made_by(&run_cmd(false));
    let run: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("run.json")).unwrap()).unwrap();
    let files: Vec<&str> = run["files"].as_array().unwrap().iter().map(|f| f.as_str().unwrap()).collect();
    assert!(files.contains(&"report.html") && files.last() == Some(&"run.json"), "{files:?}");
}

#[test]
fn a_non_empty_directory_without_a_run_is_refused() {
    let t = tempfile::tempdir().unwrap();
    std::fs::create_dir(t.path().join("out")).unwrap();
    std::fs::write(t.path().join("out/notes.txt"), "mine").unwrap();
    for force in [false, true] {
        let o = lwcbench(&run_cmd(force), t.path(), None);
        assert!(!o.status.success());
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("is not empty and holds no finished run"), "{err}");
        assert_eq!(std::fs::read_to_string(t.path().join("out/notes.txt")).unwrap(), "mine");
    }
}
