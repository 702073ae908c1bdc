//! Behaviour unchanged across refactors: the cheapest presets and `lwcbench verify` against
//! tests/golden/behaviour.txt. Commit 7208b2f's code wrote it first (before the engine splits
//! of issue #40), and the splits passed against it; it was re-blessed after the merges of
//! 2026-11-28, whose dependency changes moved the rustcrypto ChaCha20 and AES code the
//! `citest` profile emits (ChaCha20's code 8,614 → 8,765 bytes, 2,429 → 2,381 instructions per
//! 16-byte keystream call, AES-128 decrypt +2 per block; and −2 per call in the 8,192-byte
//! decrypt of TinyJAMBU, Xoodyak and SCHWAEMM alike, which points at the harness's buffer
//! handling rather than a cipher): rows, sizes of our own code and every verify line unchanged.
//! It was re-blessed again after the merges of 2026-11-28 (session 15): the three CCM* entries
//! add their verify lines and torture rows, and the new crates (app, lakers, p256) moved the same
//! ChaCha20/AES/decrypt-harness code exactly back to 7208b2f's counts (2,381 → 2,429, +32 at
//! 8,192 bytes): the emitted code of a dependency shifts with the crate graph, not with our code.
//! Re-blessed in session 16: the AEAD encrypt groups take the next nonce per message (no
//! (key, nonce) pair twice): +31 instructions per encrypt; and after the EDHOC merges the
//! crate graph moved the openssl ChaCha20-Poly1305 keysetup (−22 per call) and the 8,192-byte
//! decrypt harness (+2 per call) again, as above. Every other line unchanged.
//! Only deterministic columns are compared: instruction counts (callgrind), the row keys and
//! counts, sizes, code and memory figures, the verification lines; never a time.
//! A Markdown table is compared with every number masked, which keeps its columns and rows.
//!
//! Instruction counts, code sizes and stack depths belong to one build: the golden is the
//! `citest` profile's (the profile scripts/test.sh tests), and another profile skips the test. After a
//! deliberate change (a new cipher, a new column, a new toolchain), `LWCBENCH_BLESS=1 cargo test
//! --profile citest -p lwcbench --test cli golden` rewrites the file; the diff is the review.
//! `LWCBENCH_GOLDEN_BIN=PATH` blesses from another build (the golden here: 7208b2f's citest
//! binary, built in the main checkout before the splits).
use std::path::{Path, PathBuf};
use std::process::Command;

const GOLDEN: &str = "tests/golden/behaviour.txt";

/// The binary under test, or with `LWCBENCH_BLESS=1` the one `LWCBENCH_GOLDEN_BIN` names (the
/// build of the commit whose behaviour the golden records).
fn binary() -> PathBuf {
    match std::env::var_os("LWCBENCH_GOLDEN_BIN") {
        Some(b) if blessing() => PathBuf::from(b),
        _ => PathBuf::from(env!("CARGO_BIN_EXE_lwcbench")),
    }
}

fn blessing() -> bool {
    std::env::var("LWCBENCH_BLESS").is_ok_and(|v| v == "1")
}

fn lwcbench(args: &[&str], cwd: &Path) -> String {
    let o = Command::new(binary()).args(args).current_dir(cwd).output().expect("binary runs");
    assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).to_string()
}

/// Whether the binary is the `citest` profile's, whose instruction counts the golden holds.
fn citest_build() -> bool {
    Path::new(env!("CARGO_BIN_EXE_lwcbench")).parent().is_some_and(|d| d.ends_with("citest"))
}

/// The official vectors `verify` reads: `$LWCBENCH_VECTORS`, else `shared/vectors` beside the
/// repository (the binary's own default); None when absent, where verify would skip them.
fn vectors_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("LWCBENCH_VECTORS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/vectors"));
    dir.join("README.md").is_file().then_some(dir)
}

fn has_valgrind() -> bool {
    Command::new("valgrind").arg("--version").output().is_ok_and(|o| o.status.success())
}

/// The named columns of a CSV file, one `a|b|c` line per row, headed by the column names.
fn columns(path: &Path, names: &[&str]) -> String {
    let mut r = csv::Reader::from_path(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let header = r.headers().unwrap().clone();
    let idx: Vec<usize> = names
        .iter()
        .map(|n| header.iter().position(|h| h == *n).unwrap_or_else(|| panic!("{}: no column {n}", path.display())))
        .collect();
    let mut out = format!("{}\n", names.join("|"));
    for row in r.records() {
        let row = row.unwrap();
        let cells: Vec<&str> = idx.iter().map(|&i| row.get(i).unwrap_or("")).collect();
        out.push_str(&cells.join("|"));
        out.push('\n');
    }
    out
}

/// Every number replaced by `#` (digits with their decimal point and exponent).
fn mask_numbers(s: &str) -> String {
    let b: Vec<char> = s.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_digit() {
            while i < b.len() && (b[i].is_ascii_digit() || b[i] == '.') {
                i += 1;
            }
            if i + 1 < b.len() && b[i] == 'e' && (b[i + 1] == '-' || b[i + 1].is_ascii_digit()) {
                i += 1;
                while i < b.len() && (b[i] == '-' || b[i].is_ascii_digit()) {
                    i += 1;
                }
            }
            out.push('#');
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    out
}

/// The headings and table lines of a Markdown file, numbers masked.
fn markdown_shape(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines().filter(|l| l.starts_with('#') || l.starts_with('|')).map(|l| mask_numbers(l) + "\n").collect()
}

fn section(out: &mut String, title: &str, body: &str) {
    out.push_str(&format!("== {title}\n{body}"));
}

const KEYS: &[&str] = &["cipher", "implementation", "scenario", "kiv", "size_bits", "payload"];

fn summary_keys(dir: &Path) -> String {
    let mut cols = KEYS.to_vec();
    cols.extend(["language", "family", "n"]);
    columns(&dir.join("summary.csv"), &cols)
}

fn instructions(dir: &Path) -> String {
    let mut cols = KEYS.to_vec();
    cols.extend(["ops", "instructions", "instructions_per_op", "instructions_per_byte"]);
    columns(&dir.join("instructions.csv"), &cols)
}

/// The deterministic view of the runs and of verify, as the golden file holds it.
fn behaviour(tmp: &Path, vectors: &Path) -> String {
    let mut out = String::new();
    let run = |preset: &str, extra: &[&str]| -> PathBuf {
        let dir = tmp.join(preset);
        let mut args = vec!["run", "--preset", preset, "--seed", "7", "-n", "3", "-w", "1", "-q", "-o"];
        args.push(dir.to_str().unwrap());
        args.extend(extra);
        lwcbench(&args, tmp);
        dir
    };
    let d = run("quick", &["--counter", "instructions"]);
    section(&mut out, "quick summary.csv", &summary_keys(&d));
    section(&mut out, "quick instructions.csv", &instructions(&d));

    let d = run("lightweight-study", &["--counter", "instructions"]);
    section(&mut out, "lightweight-study summary.csv", &summary_keys(&d));
    section(&mut out, "lightweight-study instructions.csv", &instructions(&d));
    let metrics = [
        "cipher",
        "implementation",
        "family",
        "scenario",
        "message_bytes",
        "blocks",
        "block_bytes",
        "memory_bytes",
        "object_bytes",
        "power_profile",
        "watts",
        "energy_source",
        "energy_measured_source",
    ];
    section(&mut out, "lightweight-metrics.csv", &columns(&d.join("lightweight-metrics.csv"), &metrics));
    let scores = ["cipher", "implementation", "memory_bytes", "energy_source"];
    section(&mut out, "lightweight-scores.csv", &columns(&d.join("lightweight-scores.csv"), &scores));
    let weights = std::fs::read_to_string(d.join("lightweight-weights.csv")).unwrap();
    section(&mut out, "lightweight-weights.csv", &weights);
    section(&mut out, "lightweight-rank.md", &markdown_shape(&d.join("lightweight-rank.md")));

    let d = run("stream-study", &["--cipher", "ChaCha20,Trivium", "--frames", "1"]);
    section(&mut out, "stream-study summary.csv", &summary_keys(&d));
    let stream = [
        "cipher",
        "implementation",
        "language",
        "origin",
        "long_message_bytes",
        "n",
        "cycle_source",
        "frame_bytes",
        "frames_source",
        "code_bytes",
        "code_functions",
        "state_bytes",
        "peak_stack_bytes",
        "ram_bytes",
        "power_device",
        "power_w",
        "energy_source",
        "energy_measured_source",
    ];
    section(&mut out, "stream_study.csv", &columns(&d.join("stream_study.csv"), &stream));

    let d = run("ics-latency", &["--cipher", "ChaCha20-Poly1305,Ascon-AEAD128"]);
    section(&mut out, "ics-latency summary.csv", &summary_keys(&d));
    let ics = ["cipher", "implementation", "protocol", "message", "bytes", "n"];
    section(&mut out, "ics-latency.csv", &columns(&d.join("ics-latency.csv"), &ics));
    section(&mut out, "ics-budgets.csv", &std::fs::read_to_string(d.join("ics-budgets.csv")).unwrap());
    section(&mut out, "ics-messages.csv", &std::fs::read_to_string(d.join("ics-messages.csv")).unwrap());

    // The folder line names this machine's path; every other line is a verification result.
    let verify = lwcbench(&["verify", "--vectors", vectors.to_str().unwrap()], tmp);
    let verify: String =
        verify.lines().filter(|l| !l.starts_with("official vectors:")).map(|l| format!("{l}\n")).collect();
    section(&mut out, "verify", &verify);
    out
}

#[test]
fn presets_and_verify_give_the_rows_of_7208b2f() {
    if !has_valgrind() {
        crate::required::missing("valgrind (for --counter instructions)");
        return;
    }
    if !citest_build() {
        // Instruction counts, code sizes and stack depths are the build's own.
        eprintln!("SKIPPED presets_and_verify_give_the_rows_of_7208b2f: the golden is the citest profile's");
        return;
    }
    let Some(vectors) = vectors_dir() else {
        crate::required::missing("the official vectors (shared/vectors beside the repository, or $LWCBENCH_VECTORS)");
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let got = behaviour(tmp.path(), &vectors);
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(GOLDEN);
    if blessing() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &got).unwrap();
        return;
    }
    let golden = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let want = golden;
    if got != want {
        let first = got.lines().zip(want.lines()).position(|(a, b)| a != b);
        let line = first.unwrap_or_else(|| got.lines().count().min(want.lines().count()));
        panic!(
            "behaviour differs from {GOLDEN} at line {}:\n  golden: {:?}\n  now:    {:?}",
            line + 1,
            want.lines().nth(line),
            got.lines().nth(line)
        );
    }
}

#[test]
fn masking_keeps_words_and_replaces_numbers() {
    assert_eq!(mask_numbers("| AES-128/x | 158.8 ns | 1.688e-8 J | 0.300 (6) |"), "| AES-#/x | # ns | # J | # (#) |");
    assert_eq!(mask_numbers("energy 2e5, e-3"), "energy #, e-#");
}
