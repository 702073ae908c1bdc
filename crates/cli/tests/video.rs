//! End-to-end tests of the frame scenario: `lwcbench run --video FILE.y4m` on hand-built
//! clips, its result rows and summary section, and its error paths (one `error:` line,
//! non-zero exit, no result files).
use std::path::Path;
use std::process::{Command, Output};

fn lwcbench(args: &[&str], cwd: &Path, env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_lwcbench"));
    c.args(args).current_dir(cwd).env_remove("LWCBENCH_VIDEO");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("binary runs")
}

/// 32×16 4:2:0 (512 + 2·128 = 768 bytes per frame, by hand), `n` frames.
fn write_clip(dir: &Path, name: &str, header: &str, n: usize) -> String {
    let mut v = format!("{header}\n").into_bytes();
    for f in 0..n {
        v.extend(b"FRAME\n");
        v.extend((0..768).map(|i| (i * 31 + f * 101) as u8));
    }
    let p = dir.join(name);
    std::fs::write(&p, v).unwrap();
    p.display().to_string()
}

fn assert_clean_error(dir: &Path, args: &[&str], env: &[(&str, &str)], needle: &str) {
    let o = lwcbench(args, dir, env);
    assert!(!o.status.success(), "{args:?} should fail");
    let err = String::from_utf8_lossy(&o.stderr);
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(lines.len(), 1, "{args:?}: {err}");
    assert!(lines[0].contains(needle), "{:?} does not mention {needle:?}", lines[0]);
    assert!(!dir.join("out").join("run.json").exists() && !dir.join("out").join("samples.csv").exists());
}

#[test]
fn frames_of_a_users_clip_are_measured() {
    let dir = tempfile::tempdir().unwrap();
    let clip = write_clip(dir.path(), "tiny.y4m", "YUV4MPEG2 W32 H16 F30:1 C420", 4);
    let out = dir.path().join("out");
    let o = lwcbench(
        &[
            "run",
            "--video",
            &clip,
            "--cipher",
            "ChaCha20,Trivium,ChaCha20-Poly1305/rustcrypto,AES-128",
            "-n",
            "4",
            "-w",
            "1",
            "--seed",
            "3",
            "--out",
            out.to_str().unwrap(),
            "-q",
        ],
        dir.path(),
        &[],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut r = csv::Reader::from_path(out.join("summary.csv")).unwrap();
    let h = r.headers().unwrap().clone();
    let col = |name: &str| h.iter().position(|x| x == name).unwrap();
    let rows: Vec<csv::StringRecord> = r.records().map(|x| x.unwrap()).collect();
    // 3 ciphers (AES-128 is a block cipher: no frame groups) × (s,s + r,s + pooled)
    assert_eq!(rows.len(), 9);
    for row in &rows {
        assert_eq!(&row[col("scenario")], "frame");
        assert_eq!(&row[col("size_bits")], "6144");
        assert_eq!(&row[col("payload")], "video:tiny");
    }
    let md = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(md.contains("## Video frames"));
    assert!(md.contains("| ChaCha20 | rustcrypto | all | video:tiny | 768 |"));
    // --frames keeps the first N; --video selects the frame scenario by itself
    let out2 = dir.path().join("out2");
    let o = lwcbench(
        &[
            "run",
            "--video",
            &clip,
            "--frames",
            "2",
            "--cipher",
            "Trivium",
            "-n",
            "2",
            "-w",
            "0",
            "--out",
            out2.to_str().unwrap(),
        ],
        dir.path(),
        &[],
    );
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("tiny.y4m: 2 frames of 32×16 C420 (768 bytes each), 30.00 fps"));
}

#[test]
fn default_clip_comes_from_the_environment() {
    let dir = tempfile::tempdir().unwrap();
    let clip = write_clip(dir.path(), "env.y4m", "YUV4MPEG2 W32 H16 C420jpeg", 2);
    let out = dir.path().join("out");
    let o = lwcbench(
        &[
            "run",
            "--scenario",
            "frame",
            "--cipher",
            "Rabbit",
            "-n",
            "2",
            "-w",
            "0",
            "--out",
            out.to_str().unwrap(),
            "-q",
        ],
        dir.path(),
        &[("LWCBENCH_VIDEO", &clip)],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(std::fs::read_to_string(out.join("summary.csv")).unwrap().contains("video:env"));
}

#[test]
fn video_errors_are_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = d.join("out");
    let out = out.to_str().unwrap();
    assert_clean_error(
        d,
        &["run", "--scenario", "frame", "--cipher", "ChaCha20", "--out", out],
        &[("LWCBENCH_VIDEO", "/nonexistent/clip.y4m")],
        "run ./scripts/setup.sh",
    );
    let bad = write_clip(d, "p10.y4m", "YUV4MPEG2 W32 H16 C420p10", 1);
    assert_clean_error(
        d,
        &["run", "--video", &bad, "--out", out],
        &[],
        "p10.y4m: header field 'C420p10': colour space not supported",
    );
    let short = write_clip(d, "short.y4m", "YUV4MPEG2 W32 H16", 1);
    let bytes = std::fs::read(&short).unwrap();
    std::fs::write(&short, &bytes[..bytes.len() - 100]).unwrap();
    assert_clean_error(
        d,
        &["run", "--video", &short, "--out", out],
        &[],
        "short.y4m: frame 0 is truncated: 668 of 768 bytes",
    );
    let ok = write_clip(d, "ok.y4m", "YUV4MPEG2 W32 H16", 1);
    assert_clean_error(
        d,
        &["run", "--video", &ok, "--scenario", "full", "--out", out],
        &[],
        "--video/--frames: the frame scenario is not selected",
    );
    assert_clean_error(d, &["run", "--video", &ok, "--frames", "0", "--out", out], &[], "--frames: at least one frame");
    assert_clean_error(d, &["run", "--video", &ok, "--cipher", "AES-128", "--out", out], &[], "does not apply");
}
