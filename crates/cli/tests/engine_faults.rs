//! Broken engines: the awk mock engine misbehaves on
//! request (`LWCBENCH_MOCK_FAULT`, see engines/mock/engine.awk) and lwcbench must refuse its
//! output with one named error line, never time it as valid, and leave no process behind.
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// lwcbench under coreutils `timeout`, so a regression that hangs fails instead of hanging.
fn lwcbench(args: &[&str], cwd: &Path, env: &[(&str, &str)]) -> Output {
    Command::new("timeout")
        .arg("120")
        .arg(env!("CARGO_BIN_EXE_lwcbench"))
        .args(args)
        .envs(env.iter().copied())
        .current_dir(cwd)
        .output()
        .expect("binary runs")
}

fn mock() -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../engines/mock/engine.sh");
    format!("sh {}", p.canonicalize().unwrap().display())
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).to_string()
}

fn run_toy(dir: &Path, out: &str, extra: &[&str], env: &[(&str, &str)]) -> Output {
    let m = mock();
    let mut args = vec!["run", "--engine", &m, "--cipher", "TOY-ADD", "--sizes", "16B", "-n", "3", "-w", "1", "-q"];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["-o", out]);
    lwcbench(&args, dir, env)
}

/// Exactly one `error:` line, containing `want`; no result directory.
fn assert_refused(o: &Output, out: &Path, want: &str) {
    assert!(!o.status.success(), "must fail: {}", text(&o.stderr));
    let err = text(&o.stderr);
    let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 1, "{err}");
    assert!(errors[0].contains(want), "{err}");
    assert!(!out.join("run.json").exists() && !out.join("samples.csv").exists(), "{err}");
}

#[test]
fn wrong_ciphertext_is_not_timed() {
    // The engine's TOY-ADD encryption is off by one in the first byte, so decrypting it does
    // not give the plaintext back: every group fails before timing and the run is an error.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let o = run_toy(dir.path(), out.to_str().unwrap(), &[], &[("LWCBENCH_MOCK_FAULT", "wrong-ct")]);
    assert_refused(&o, &out, "wrong output");
    assert!(text(&o.stderr).contains("no group was measured"), "{}", text(&o.stderr));
}

#[test]
fn impossible_engine_times_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    for ns in ["0", "-0", "5e-324", "1e308", "2e12", "-5", "nan", "inf", "-inf"] {
        let out = dir.path().join(format!("r{ns}"));
        let o = run_toy(dir.path(), out.to_str().unwrap(), &[], &[("LWCBENCH_MOCK_FAULT", &format!("ns={ns}"))]);
        assert_refused(&o, &out, "bad time");
    }
    // the same engine with plausible times is fine (1 ns and the synthetic 1128 ns)
    for f in ["ns=1", ""] {
        let out = dir.path().join(format!("ok{f}"));
        let o = run_toy(dir.path(), out.to_str().unwrap(), &[], &[("LWCBENCH_MOCK_FAULT", f)]);
        assert!(o.status.success(), "{f}: {}", text(&o.stderr));
        assert!(out.join("run.json").is_file());
    }
}

#[test]
fn partial_failure_is_written_with_notes_and_a_warning() {
    // The engine's groups fail (wrong output), the in-process ChaCha20 groups are measured:
    // the run is written (exit 0), and the failure is on stderr and in run.json's notes.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let o = run_toy(
        dir.path(),
        out.to_str().unwrap(),
        &["--cipher", "ChaCha20", "--min-sample-us", "1"],
        &[("LWCBENCH_MOCK_FAULT", "wrong-ct")],
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(err.lines().any(|l| l.contains("groups failed and are missing from the results")), "{err}");
    let run = std::fs::read_to_string(out.join("run.json")).unwrap();
    assert!(run.contains("skipped (engine failed)") && run.contains("wrong output"), "{run}");
    let samples = std::fs::read_to_string(out.join("samples.csv")).unwrap();
    assert!(samples.lines().any(|l| l.starts_with("ChaCha20,")), "{samples}");
    assert!(!samples.lines().any(|l| l.starts_with("TOY-ADD,")), "{samples}");
}

#[test]
fn a_list_that_never_ends_is_one_error_line() {
    let dir = tempfile::tempdir().unwrap();
    let o = lwcbench(&["list", "--engine", &mock()], dir.path(), &[("LWCBENCH_MOCK_FAULT", "endless-list")]);
    assert!(!o.status.success());
    let err = text(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("error:") && err.contains("more than 10000 cipher lines"), "{err}");
}

#[test]
fn a_timed_out_engine_leaves_no_process_behind() {
    // The engine's bench starts `sleep 300` as its own child and never answers; after the
    // 1 s deadline lwcbench kills the engine's whole process group, the sleep included.
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("child.pid");
    let out = dir.path().join("r");
    let o = run_toy(
        dir.path(),
        out.to_str().unwrap(),
        &[],
        &[
            ("LWCBENCH_MOCK_FAULT", "hang-bench"),
            ("LWCBENCH_MOCK_PIDFILE", pidfile.to_str().unwrap()),
            ("LWCBENCH_ENGINE_TIMEOUT_S", "1"),
        ],
    );
    assert_refused(&o, &out, "no answer within 1 s");
    let pid: i32 = std::fs::read_to_string(&pidfile).expect("the engine wrote its child's pid").trim().parse().unwrap();
    // Gone, or a zombie waiting for a reaper (killed all the same). SIGKILL is delivered
    // asynchronously: on a loaded machine the child may not have been scheduled to die yet
    // when lwcbench exits (that was this test's one failure), so it gets up to 10 s; a child
    // that was never signalled sleeps 300 s and still fails the test.
    let alive_now = || {
        let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok();
        let alive =
            state.as_deref().is_some_and(|s| s.rsplit(')').next().is_some_and(|r| !r.trim_start().starts_with('Z')));
        (alive, state)
    };
    let t0 = std::time::Instant::now();
    let (mut alive, mut state) = alive_now();
    while alive && t0.elapsed() < std::time::Duration::from_secs(10) {
        std::thread::sleep(std::time::Duration::from_millis(50));
        (alive, state) = alive_now();
    }
    if alive {
        let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
    }
    assert!(!alive, "the engine's child {pid} survived: {state:?}");
}

#[test]
fn wrong_aes_gcm_ciphertext_differs_from_the_in_process_aes() {
    // An engine whose AES-128-GCM answers all-zero ciphertext and tag (consistently, so a
    // round trip alone would not notice: decrypt echoes the plaintext it cannot know, so it
    // answers zeros too) and plausible times. lwcbench's own AES-128-GCM gives another
    // answer for the check's input, so no group is timed.
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("bad-gcm.sh");
    std::fs::write(
        &script,
        r#"while read -r cmd rest; do
  case "$cmd" in
    hello) echo "ok protocol=1 engine=bad engine-version=1 implementation=badgcm language=C timer=fake resolution-ns=1" ;;
    list) echo "cipher name=AES-128-GCM family=aead key-bits=128 iv-bits=96 block-bits=128 tag-bits=128 scenarios=encrypt"
          echo "end count=1" ;;
    encrypt) echo "ok ct=$(printf '00%.0s' $(seq 32)) tag=$(printf '00%.0s' $(seq 16))" ;;
    decrypt) echo "ok pt=$(printf '00%.0s' $(seq 32))" ;;
    bench) reps=$(echo "$rest" | sed 's/.*reps=\([0-9]*\).*/\1/'); warm=$(echo "$rest" | sed 's/.*warmup=\([0-9]*\).*/\1/')
           i=0; n=$((reps + warm))
           while [ $i -lt $n ]; do w=0; [ $i -lt $warm ] && w=1; echo "sample rep=$i warmup=$w batch=1 ns=500"; i=$((i + 1)); done
           echo "end count=$n batch=1" ;;
    *) echo "err unknown-command $cmd" ;;
  esac
done
"#,
    )
    .unwrap();
    let eng = format!("sh {}", script.display());
    let out = dir.path().join("r");
    let o = lwcbench(
        &[
            "run",
            "--engine",
            &eng,
            "--cipher",
            "AES-128-GCM/badgcm",
            "--sizes",
            "16B",
            "-n",
            "3",
            "-w",
            "1",
            "-q",
            "-o",
        ]
        .iter()
        .copied()
        .chain([out.to_str().unwrap()])
        .collect::<Vec<_>>(),
        dir.path(),
        &[],
    );
    assert_refused(&o, &out, "wrong output");
    assert!(text(&o.stderr).contains("differs from AES-128-GCM/"), "{}", text(&o.stderr));
}
