//! `lwcbench choose` end to end: the answer as JSON and as files, the printed `lwcbench link`
//! command run as printed (embedded broker, SQLite), and bad input as one `error:` line.
use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};

fn lwcbench(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lwcbench")).args(args).current_dir(cwd).output().expect("binary runs")
}

/// Every `--board` help lists the boards of data/boards.toml (generated, not typed: a new
/// record shows up without editing the CLI).
#[test]
fn board_help_lists_the_boards_of_the_records() {
    let want = crate::boards_by_hand();
    let d = tempfile::tempdir().unwrap();
    for cmd in [&["choose", "--help"][..], &["run", "--help"], &["link", "--help"]] {
        let o = lwcbench(cmd, d.path());
        assert!(o.status.success(), "{cmd:?}");
        // --help wraps lines: compare with the whitespace folded.
        let help = String::from_utf8_lossy(&o.stdout).split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(help.contains(&want), "{cmd:?} --board help lacks {want}:\n{help}");
    }
}

/// Paths of the JSON (array elements as `[]`) where docs/choose.md's schema allows null.
const NULLABLE: &[&str] = &[
    "request.flash_bytes",
    "request.ram_bytes",
    "candidates[].link_id",
    "candidates[].superseded_by",
    "candidates[].figures",
    "candidates[].figures.lifetime_shortfall",
    "candidates[].rank",
    "candidates[].score",
    "robustness[].top",
    "handover.dataset",
    // No row for the radio (Ethernet), or an OSCORE choice (docs/choose.md "Files and JSON").
    "handover.carrier_security",
];

/// Every null outside [`NULLABLE`]: where the schema says number, serde_json writes NaN and
/// infinity as null.
fn nulls(v: &serde_json::Value, path: &str, found: &mut Vec<String>) {
    match v {
        serde_json::Value::Null if !NULLABLE.contains(&path) => found.push(path.to_string()),
        serde_json::Value::Array(a) => a.iter().for_each(|x| nulls(x, &format!("{path}[]"), found)),
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                nulls(x, &if path.is_empty() { k.clone() } else { format!("{path}.{k}") }, found);
            }
        }
        _ => {}
    }
}

/// The `--json` answer, checked for nulls where the schema says number.
fn choose_json(args: &[&str], cwd: &Path) -> serde_json::Value {
    let mut a = vec!["choose", "--json"];
    a.extend_from_slice(args);
    let o = lwcbench(&a, cwd);
    assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("--json prints JSON");
    let mut found = Vec::new();
    nulls(&v, "", &mut found);
    assert!(found.is_empty(), "{args:?}: null at {found:?}");
    v
}

/// Runs the printed link command word by word (the first word is this build's binary) and
/// checks that every reading it sent was stored.
fn run_handover(rep: &serde_json::Value, cwd: &Path) {
    let words: Vec<String> =
        rep["handover"]["link_command"].as_array().unwrap().iter().map(|w| w.as_str().unwrap().to_string()).collect();
    assert_eq!(words[0], "lwcbench");
    let args: Vec<&str> = words[1..].iter().map(String::as_str).collect();
    let o = lwcbench(&args, cwd);
    assert!(o.status.success(), "{}: {}", words.join(" "), String::from_utf8_lossy(&o.stderr));
    let out = Path::new(words.last().unwrap());
    let out = if out.is_absolute() { out.to_path_buf() } else { cwd.join(out) };
    let mut rd = csv::Reader::from_path(out.join("link_summary.csv")).unwrap();
    let h = rd.headers().unwrap().clone();
    let row = rd.records().next().unwrap().unwrap();
    let get = |n: &str| row.get(h.iter().position(|x| x == n).unwrap()).unwrap().to_string();
    assert_eq!(get("cipher"), rep["chosen"].as_str().unwrap());
    assert_eq!(get("sent"), "20");
    assert_eq!(get("stored"), "20");
    let payload = rep["request"]["payload_bytes"].as_u64().unwrap() as f64;
    let reading = rep["handover"]["dataset"]["reading_bytes"].as_u64().map(|b| b as f64).unwrap_or(payload);
    assert_eq!(get("plain_bytes").parse::<f64>().unwrap(), reading);
    let chosen = rep["candidates"].as_array().unwrap().iter().find(|c| c["id"] == rep["chosen"]).unwrap();
    if reading == payload {
        // The frame the ranking priced is the frame the link sent.
        assert_eq!(get("wire_bytes").parse::<f64>().unwrap(), chosen["figures"]["frame_bytes"].as_f64().unwrap());
    }
}

#[test]
fn lora_soil_sensor_answer_files_and_the_printed_link_command_runs() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("ch");
    let rep = choose_json(
        &[
            "--board",
            "rp2040",
            "--radio",
            "LoRa-SF9",
            "--interval",
            "10m",
            "--payload",
            "16B",
            "--out",
            out.to_str().unwrap(),
        ],
        d.path(),
    );
    assert_eq!(rep["schema"], "lwcbench-choose/2");
    let ranking = rep["ranking"].as_array().unwrap();
    assert_eq!(ranking[0], rep["chosen"]);
    assert!(rep["handover"]["dataset"].is_null(), "16 B is the built-in reading");
    for f in ["choose.json", "choose.html", "choose.txt"] {
        assert!(out.join(f).is_file(), "{f}");
    }
    let html = std::fs::read_to_string(out.join("choose.html")).unwrap();
    assert!(html.contains("<svg") && !html.contains("<script"), "inline SVG, no script");
    assert!(html.contains(rep["chosen"].as_str().unwrap()));
    // Every candidate has a verdict line; the ones that passed are ranked.
    for c in rep["candidates"].as_array().unwrap() {
        assert!(!c["reasons"].as_array().unwrap().is_empty());
        assert_eq!(c["passed"].as_bool().unwrap(), c["rank"].is_u64(), "{}", c["id"]);
    }
    run_handover(&rep, d.path());
}

#[test]
fn camera_payload_gets_a_dataset_and_the_printed_link_command_runs() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("cam");
    let rep = choose_json(
        &[
            "--board",
            "esp32c3",
            "--radio",
            "WiFi-n-MCS7",
            "--interval",
            "200ms",
            "--payload",
            "28800B",
            "--out",
            out.to_str().unwrap(),
        ],
        d.path(),
    );
    assert_eq!(rep["handover"]["dataset"]["reading_bytes"], 28800);
    assert!(out.join("choose-dataset.csv").is_file());
    run_handover(&rep, d.path());
}

#[test]
fn allow_provisional_brings_draco_back_labelled() {
    let d = tempfile::tempdir().unwrap();
    let base = ["--board", "nrf52840", "--radio", "BLE-1M", "--interval", "1s"];
    let find = |rep: &serde_json::Value| {
        rep["candidates"].as_array().unwrap().iter().find(|c| c["id"] == "DRACO/rust-fast").unwrap().clone()
    };
    let rep = choose_json(&base, d.path());
    let c = find(&rep);
    assert_eq!(c["passed"], false);
    assert_eq!(c["removed_by"], serde_json::json!(["status"]));
    // Not a standard: it takes --require any as well.
    let mut with = base.to_vec();
    with.push("--allow-provisional");
    let rep = choose_json(&with, d.path());
    assert!(find(&rep)["reasons"][0].as_str().unwrap().starts_with("status: --require standard: status provisional"));
    with.extend_from_slice(&["--require", "any"]);
    let rep = choose_json(&with, d.path());
    let c = find(&rep);
    assert_eq!(c["passed"], true);
    assert_eq!(c["status"], "provisional");
    assert!(c["reasons"].as_array().unwrap().iter().any(|r| r.as_str().unwrap().starts_with("PROVISIONAL")));
}

fn assert_clean_error(args: &[&str], needle: &str) {
    let d = tempfile::tempdir().unwrap();
    let mut a = vec!["choose"];
    a.extend_from_slice(args);
    a.extend_from_slice(&["--out", "o"]);
    let o = lwcbench(&a, d.path());
    assert!(!o.status.success(), "{args:?} should fail");
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(err.lines().count(), 1, "{args:?}: {err:?}");
    assert!(err.starts_with("error: ") && err.contains(needle), "{args:?}: {err:?} lacks {needle:?}");
    assert!(o.stdout.is_empty());
    assert!(!d.path().join("o").exists(), "{args:?} wrote --out");
}

#[test]
fn bad_input_is_one_error_line_naming_the_option() {
    let ok = ["--board", "rp2040", "--radio", "LoRa-SF9", "--interval", "10m"];
    let with = |k: usize, v: &'static str| {
        let mut a = ok.to_vec();
        a[k] = v;
        a
    };
    assert_clean_error(&with(1, "arduino-uno"), "--board");
    assert_clean_error(&with(3, "LoRa-SF10"), "--radio");
    assert_clean_error(&with(5, "ten minutes"), "--interval");
    let mut a = ok.to_vec();
    a.extend_from_slice(&["--flash", "100B"]);
    assert_clean_error(&a, "--flash");
    let mut a = ok.to_vec();
    a.extend_from_slice(&["--payload", "16 bytes"]);
    assert_clean_error(&a, "--payload");
    let mut a = ok.to_vec();
    a.extend_from_slice(&["--ram", "8kb"]);
    assert_clean_error(&a, "--ram");
    let mut a = ok.to_vec();
    a.extend_from_slice(&["--weights", "energy=lots"]);
    assert_clean_error(&a, "--weights");
}

fn strings(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| s.to_string()).collect()
}

fn run_in(args: &[String], cwd: &Path, failpoint: Option<String>) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_lwcbench"));
    c.args(args).current_dir(cwd).env_remove("LWCBENCH_FAILPOINT");
    if let Some(f) = failpoint {
        c.env("LWCBENCH_FAILPOINT", f);
    }
    c.output().expect("binary runs")
}

/// The LoRa answer (three files) into `out`.
fn lora_cmd(force: bool) -> Vec<String> {
    let mut v = strings(&["choose", "--board", "rp2040", "--radio", "LoRa-SF9", "--interval", "10m", "--out", "out"]);
    if force {
        v.push("--force".into());
    }
    v
}

/// The camera answer (four files: a dataset too) into `out`.
fn camera_cmd(force: bool) -> Vec<String> {
    let mut v = strings(&[
        "choose",
        "--board",
        "esp32c3",
        "--radio",
        "WiFi-n-MCS7",
        "--interval",
        "200ms",
        "--payload",
        "28800B",
        "--out",
        "out",
    ]);
    if force {
        v.push("--force".into());
    }
    v
}

/// Every file of `out` with its bytes; None when `out` does not exist.
fn snapshot(out: &Path) -> Option<BTreeMap<String, Vec<u8>>> {
    if !out.exists() {
        return None;
    }
    let mut m = BTreeMap::new();
    for e in std::fs::read_dir(out).unwrap() {
        let e = e.unwrap();
        m.insert(e.file_name().into_string().unwrap(), std::fs::read(e.path()).unwrap());
    }
    Some(m)
}

fn names(s: &Option<BTreeMap<String, Vec<u8>>>) -> Option<Vec<&String>> {
    s.as_ref().map(|m| m.keys().collect())
}

/// Interrupt `cmd` at every step of writing (`LWCBENCH_FAILPOINT=N`, killed, then "disk full")
/// in a fresh directory (after `before`, when given) and check that `out` holds the earlier
/// answer or the new one, whole; returns the number of steps.
fn every_step(cmd: &[String], before: Option<&[String]>) -> u64 {
    let scratch = tempfile::tempdir().unwrap();
    let fresh = |k: &str| {
        let d = scratch.path().join(k);
        std::fs::create_dir(&d).unwrap();
        if let Some(b) = before {
            let o = run_in(b, &d, None);
            assert!(o.status.success(), "{b:?}: {}", String::from_utf8_lossy(&o.stderr));
        }
        d
    };
    let d = fresh("reference");
    let old = snapshot(&d.join("out"));
    let o = run_in(cmd, &d, None);
    assert!(o.status.success(), "{cmd:?}: {}", String::from_utf8_lossy(&o.stderr));
    let new = snapshot(&d.join("out"));
    assert!(new.is_some() && new != old);
    for n in 1..200u64 {
        for mode in ["kill", "enospc"] {
            let d = fresh(&format!("{n}-{mode}"));
            let o = run_in(cmd, &d, Some(format!("{n}:{mode}")));
            let err = String::from_utf8_lossy(&o.stderr).to_string();
            let state = snapshot(&d.join("out"));
            assert!(
                state == old || state == new,
                "{cmd:?} at step {n} ({mode}): {:?}, old {:?}, new {:?}\n{err}",
                names(&state),
                names(&old),
                names(&new)
            );
            if mode == "enospc" && !o.status.success() {
                assert!(state == old, "{cmd:?} step {n}: a failed command changed out\n{err}");
                assert_eq!(err.lines().count(), 1, "{err}");
                assert!(err.starts_with("error: --out: ") && err.contains("No space left on device"), "{err}");
                assert!(o.stdout.is_empty());
            }
            if mode == "kill" {
                if o.status.success() {
                    // no step n: every step has been interrupted once
                    assert!(state == new && n > 5, "{cmd:?}: {n} steps\n{err}");
                    return n - 1;
                }
                assert!(err.contains(&format!("killed at step {n}")), "{cmd:?} step {n}: {err}");
                // the next command into this --out removes what the killed one left
                let o = run_in(cmd, &d, None);
                if state != new {
                    assert!(o.status.success(), "{cmd:?} after step {n}: {}", String::from_utf8_lossy(&o.stderr));
                    assert!(snapshot(&d.join("out")) == new);
                    let left: Vec<String> = std::fs::read_dir(&d)
                        .unwrap()
                        .map(|e| e.unwrap().file_name().into_string().unwrap())
                        .filter(|f| f != "out")
                        .collect();
                    assert!(left.is_empty(), "{cmd:?} step {n}: left behind: {left:?}");
                }
            }
        }
    }
    panic!("{cmd:?}: more than 200 steps");
}

#[test]
fn out_is_all_or_nothing_at_every_step() {
    // four files: at least a directory, 4 × (data + fsync), a directory fsync and a rename
    assert!(every_step(&camera_cmd(false), None) >= 10);
}

#[test]
fn force_replaces_an_answer_whole_at_every_step() {
    // The earlier answer has no dataset; the new one must not keep the old files or lose its own.
    every_step(&camera_cmd(true), Some(&lora_cmd(false)));
    every_step(&lora_cmd(true), Some(&camera_cmd(false)));
}

#[test]
fn an_answer_is_replaced_only_with_force_and_nothing_else_is_replaced() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    assert!(run_in(&lora_cmd(false), d, None).status.success());
    let before = snapshot(&d.join("out"));
    let refused = |cmd: &[String], needle: &str| {
        let o = run_in(cmd, d, None);
        let err = String::from_utf8_lossy(&o.stderr).to_string();
        assert!(!o.status.success() && o.stdout.is_empty(), "{cmd:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with("error: --out: ") && err.contains(needle), "{err} lacks {needle:?}");
    };
    refused(&camera_cmd(false), "out already holds an answer (use --force to replace it)");
    assert!(snapshot(&d.join("out")) == before);
    // A link run made from the hand-over (DIR/link-run) is not choose's to delete.
    std::fs::create_dir(d.join("out/link-run")).unwrap();
    std::fs::write(d.join("out/link-run/run.json"), "{}").unwrap();
    refused(&camera_cmd(true), "holds 'link-run', which choose did not write");
    std::fs::remove_dir_all(d.join("out/link-run")).unwrap();
    assert!(snapshot(&d.join("out")) == before);
    let o = run_in(&camera_cmd(true), d, None);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let after = snapshot(&d.join("out")).unwrap();
    assert_eq!(after.keys().collect::<Vec<_>>(), ["choose-dataset.csv", "choose.html", "choose.json", "choose.txt"]);
    // A directory without an answer is not choose's to replace, with or without --force.
    std::fs::remove_dir_all(d.join("out")).unwrap();
    std::fs::create_dir(d.join("out")).unwrap();
    std::fs::write(d.join("out/notes.txt"), "mine").unwrap();
    for force in [false, true] {
        refused(&lora_cmd(force), "out is not empty and holds no answer (no choose.json)");
        assert_eq!(std::fs::read_to_string(d.join("out/notes.txt")).unwrap(), "mine");
    }
    std::fs::remove_dir_all(d.join("out")).unwrap();
    std::fs::write(d.join("out"), "a file").unwrap();
    refused(&lora_cmd(true), "out exists and is not a directory");
}

#[test]
fn the_testers_inputs_are_refused_on_one_short_line_naming_the_range() {
    let args = |radio: &'static str, interval: &'static str, extra: &[&'static str]| {
        let mut a = vec!["--board", "rp2040", "--radio", radio, "--interval", interval];
        a.extend_from_slice(extra);
        a
    };
    // 4 h on air (hand computation in crates/choose/src/tests.rs,
    // a_report_longer_than_the_interval_is_refused_naming_both)
    assert_clean_error(
        &args("LoRa-SF12", "200ms", &["--payload", "262112B"]),
        "--interval: 200 ms is shorter than the quickest report",
    );
    // With the LoRaWAN compact header the frame is 1 + 262,112 + 16 = 262,129 bytes: 5,139 full
    // packets of 51 B (PL 64 with the 13 B of overhead: 8 + 13 × 5 = 73 symbols + 12.25 preamble
    // = 85.25 × 32.768 ms = 2.793472 s each) and one of 40 B (PL 53: 8 + 11 × 5 = 63 + 12.25 =
    // 75.25 symbols = 2.465792 s): 14,355.652608 + 2.465792 = 14,358.118 s.
    assert_clean_error(&args("LoRa-SF12", "200ms", &["--payload", "262112B"]), "14358.118 s on air in 5140 packets");
    for (a, needle) in [
        (args("LoRa-SF9", "0.0000001ms", &[]), "error: --interval: '0.0000001ms' is not between 1 ms and 24 h"),
        (args("LoRa-SF9", "1e300s", &[]), "error: --interval: '1e300s' is not between 1 ms and 24 h"),
        (args("LoRa-SF9", "10m", &["--lifetime", "1e9y"]), "error: --lifetime: '1e9y' is not between 1 s and 100 y"),
        (args("LoRa-SF9", "10m", &["--battery-v", "1e-320"]), "error: --battery-v: 1e-320 is not between 0.5 and 60 V"),
        (
            args("LoRa-SF9", "10m", &["--battery-mah", "1e308"]),
            "error: --battery-mah: 1e308 is not between 1 and 1000000 mAh",
        ),
        (args("LoRa-SF9", "10m", &["--weights", "energy=1,energy=2"]), "error: --weights: 'energy' is given twice"),
        (
            args("LoRa-SF9", "10m", &["--payload", "262113B"]),
            "error: --payload: '262113B' is not between 1 B and 262112 B",
        ),
    ] {
        assert_clean_error(&a, needle);
        let d = tempfile::tempdir().unwrap();
        let mut full = vec!["choose"];
        full.extend_from_slice(&a);
        let err = String::from_utf8_lossy(&lwcbench(&full, d.path()).stderr).to_string();
        assert!(err.starts_with(needle) && err.len() < 200, "{err}");
    }
}

#[test]
fn help_gives_every_float_option_its_range() {
    let d = tempfile::tempdir().unwrap();
    let o = lwcbench(&["choose", "--help"], d.path());
    assert!(o.status.success());
    let help = String::from_utf8_lossy(&o.stdout).split_whitespace().collect::<Vec<_>>().join(" ");
    for range in [
        "--interval <INTERVAL> Time between two reports, 1 ms to 24 h",
        "--payload <PAYLOAD> Plaintext bytes per report, 1 B to 262112 B",
        "each 0 or 0.001 to 1000",
        "--lifetime <LIFETIME> Deployment lifetime for the counter-space check, 1 s to 100 y",
        "--battery-mah <BATTERY_MAH> Battery capacity, 1 to 1000000 mAh",
        "--battery-v <BATTERY_V> Battery voltage, 0.5 to 60 V",
        "--force",
    ] {
        assert!(help.contains(range), "--help lacks {range:?}: {help}");
    }
}

// Issue 38 item 2: security compared like for like; item 3: flash and RAM only against a budget.

/// The candidate `id` of an answer.
fn candidate<'a>(rep: &'a serde_json::Value, id: &str) -> &'a serde_json::Value {
    rep["candidates"].as_array().unwrap().iter().find(|c| c["id"] == id).unwrap_or_else(|| panic!("{id}"))
}

/// The scenarios, default options: the answer is a standard with a 128-bit tag, never
/// TinyJAMBU (a finalist that was not selected, 64-bit tag), and so is every ranked candidate.
#[test]
fn the_default_answer_is_a_standard_with_a_full_tag() {
    let d = tempfile::tempdir().unwrap();
    let scenarios: [&[&str]; 6] = [
        &["--board", "rp2040", "--radio", "LoRa-SF9", "--interval", "15m", "--payload", "12B"],
        &[
            "--board",
            "mkrzero",
            "--radio",
            "LoRa-SF12",
            "--interval",
            "1h",
            "--payload",
            "24B",
            "--chemistry",
            "Li-SOCl2",
        ],
        &["--board", "nrf52840", "--radio", "BLE-1M", "--interval", "1s", "--payload", "20B", "--chemistry", "CR2032"],
        &["--board", "nrf52840", "--radio", "802.15.4", "--interval", "1m", "--payload", "16B"],
        &["--board", "esp32c3", "--radio", "WiFi-n-MCS7", "--interval", "200ms", "--payload", "28800B"],
        &["--board", "nano33ble", "--radio", "BLE-1M", "--interval", "10s", "--payload", "16B"],
    ];
    for args in scenarios {
        let rep = choose_json(args, d.path());
        let chosen = rep["chosen"].as_str().unwrap();
        assert!(!chosen.starts_with("TinyJAMBU"), "{args:?}: {chosen}");
        for id in rep["ranking"].as_array().unwrap() {
            let c = candidate(&rep, id.as_str().unwrap());
            assert_eq!(c["status"], "standard", "{args:?}: {id}");
            assert_eq!(c["figures"]["tag_bytes"], 16, "{args:?}: {id}");
        }
    }
}

/// `--require standard` counts a primitive and mode exactly as a standard specifies: the link's
/// stream + Poly1305 composition is this project's, whatever the stream cipher's own status;
/// HC-128 and Sosemanuk index tables with secret bytes and are out as variable-time.
#[test]
fn require_standard_refuses_compositions_and_variable_time_ciphers() {
    let d = tempfile::tempdir().unwrap();
    let rep = choose_json(
        &["--board", "nrf52840", "--radio", "BLE-1M", "--interval", "1s", "--require", "standard"],
        d.path(),
    );
    for id in ["Rabbit/rustcrypto", "Grain-128a/rust", "Trivium/rust", "ChaCha20/rustcrypto"] {
        let c = candidate(&rep, id);
        assert_eq!(c["passed"], false, "{id}");
        assert_eq!(c["status"], "composition", "{id}");
        assert!(c["removed_by"].as_array().unwrap().contains(&"status".into()), "{id}: {}", c["removed_by"]);
    }
    for id in ["HC-128/rust", "Sosemanuk/rust"] {
        let c = candidate(&rep, id);
        assert_eq!(c["passed"], false, "{id}");
        assert!(c["removed_by"].as_array().unwrap().contains(&"constant_time".into()), "{id}: {}", c["removed_by"]);
    }
    // The standard AEADs with an image pass.
    for id in ["Ascon-AEAD128/rustcrypto", "ChaCha20-Poly1305/rustcrypto"] {
        assert_eq!(candidate(&rep, id)["passed"], true, "{id}");
    }
}

/// `--tag 64` admits a 64-bit tag and states its forgery bound over the lifetime's messages.
/// Hand computation: one message a second for one year (365.25 d) is q = 31,557,600 messages;
/// q / 2^64 = 31,557,600 / 18,446,744,073,709,551,616 = 1.71e-12; the link's failed-tag budget
/// for a tag under 16 bytes, 2^16, gives 2^16 / 2^64 = 2^-48 = 3.55e-15.
#[test]
fn a_64_bit_tag_comes_only_with_tag_64_and_its_forgery_bound() {
    let d = tempfile::tempdir().unwrap();
    let base =
        ["--board", "nrf52840", "--radio", "BLE-1M", "--interval", "1s", "--lifetime", "1y", "--require", "reviewed"];
    let rep = choose_json(&base, d.path());
    let t = candidate(&rep, "TinyJAMBU-128/rust-ref");
    assert_eq!(t["passed"], false);
    assert!(t["removed_by"].as_array().unwrap().contains(&"tag".into()), "{}", t["removed_by"]);
    let mut with = base.to_vec();
    with.extend_from_slice(&["--tag", "64", "--security", "112"]);
    let rep = choose_json(&with, d.path());
    let t = candidate(&rep, "TinyJAMBU-128/rust-ref");
    assert_eq!(t["passed"], true, "{}", t["reasons"]);
    let bound =
        t["reasons"].as_array().unwrap().iter().map(|r| r.as_str().unwrap()).find(|r| r.contains("forgery bound"));
    let bound = bound.unwrap_or_else(|| panic!("{}", t["reasons"]));
    assert!(bound.contains("(q = 31557600): 1.7e-12") && bound.contains("65536): 3.6e-15"), "{bound}");
    // A 128-bit tag states no bound.
    let a = candidate(&rep, "Ascon-AEAD128/rustcrypto");
    assert!(!a["reasons"].as_array().unwrap().iter().any(|r| r.as_str().unwrap().contains("forgery bound")));
    // Only 64, 96 and 128 are tag lengths.
    assert_clean_error(&["--board", "rp2040", "--radio", "LoRa-SF9", "--interval", "10m", "--tag", "32"], "--tag");
}

/// Without `--flash` and `--ram` the images' sizes do not move the ranking: the answer and its
/// scores are those with the flash and RAM weights at 0.
#[test]
fn flash_and_ram_rank_only_against_a_budget() {
    let d = tempfile::tempdir().unwrap();
    for base in [
        &["--board", "rp2040", "--radio", "LoRa-SF9", "--interval", "10m"][..],
        &["--board", "esp32c3", "--radio", "WiFi-n-MCS7", "--interval", "200ms", "--payload", "28800B"],
    ] {
        let plain = choose_json(base, d.path());
        let mut zero = base.to_vec();
        zero.extend_from_slice(&["--weights", "flash=0,ram=0"]);
        let zero = choose_json(&zero, d.path());
        assert_eq!(plain["ranking"], zero["ranking"], "{base:?}");
        for id in plain["ranking"].as_array().unwrap() {
            let id = id.as_str().unwrap();
            assert_eq!(candidate(&plain, id)["score"], candidate(&zero, id)["score"], "{base:?}: {id}");
        }
    }
}

// Issue 38 item 3: the physics checked (regions, receive energy, lifetime, sleep and active current).

/// The stderr of a refused `choose`, checked to be one `error:` line and a non-zero exit.
fn refused(args: &[&str]) -> String {
    let d = tempfile::tempdir().unwrap();
    let mut full = vec!["choose"];
    full.extend_from_slice(args);
    let o = lwcbench(&full, d.path());
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(!o.status.success() && o.stdout.is_empty(), "{args:?} was not refused: {err}");
    assert!(err.starts_with("error: ") && err.trim_end().lines().count() == 1, "{err}");
    err
}

/// 300 B every 10 min at SF12 in EU868: with LoRaWAN's 1-byte compact header a 317-byte frame,
/// 6 packets of 51 B + one of 11 B; each 64-byte packet 85.25 symbols × 32.768 ms = 2,793.472 ms,
/// the 24-byte one (192 − 48 + 44) / 40 = 4.7 → 5 × 5 + 8 + 12.25 = 45.25 symbols = 1,482.752 ms:
/// 18.243584 s on air, 3.0 % against the 1 % of band M; without --region the same schedule is
/// ranked.
#[test]
fn eu868_duty_cycle_refuses_the_schedule_with_its_limit() {
    let args = ["--board", "mkrzero", "--radio", "LoRa-SF12", "--interval", "10m", "--payload", "300B"];
    let mut eu = args.to_vec();
    eu.extend_from_slice(&["--region", "EU868"]);
    let err = refused(&eu);
    assert!(
        err.starts_with("error: --region EU868: no schedule passes: 3.0 % on air in EU868, where 1.0 % applies"),
        "{err}"
    );
    assert!(err.contains("18.244 s on air in 7 packets"), "{err}");
    let d = tempfile::tempdir().unwrap();
    let rep = choose_json(&args, d.path());
    assert!(rep["ranking"].as_array().is_some_and(|r| !r.is_empty()));
    // Hourly the same frame is 0.51 % on air: it runs in EU868, and the split is shown.
    let o = lwcbench(
        &[
            "choose",
            "--board",
            "mkrzero",
            "--radio",
            "LoRa-SF12",
            "--interval",
            "1h",
            "--payload",
            "300B",
            "--region",
            "EU868",
        ],
        d.path(),
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.contains("radio:    7 packets per report (18.244 s on air)"), "{out}");
}

/// US915's 400 ms dwell time: an 84 B payload is a 101-byte frame with LoRaWAN's compact header,
/// one SF9 packet of 114 B with the LoRaWAN overhead: ceil((912 - 36 + 44)/36) = 26; 26 × 5 + 8 +
/// 12.25 = 150.25 symbols × 4.096 ms = 615 ms on air; SF12 is no US915 uplink rate.
#[test]
fn us915_dwell_time_and_uplink_rates_are_out() {
    let err = refused(&[
        "--board",
        "nrf52840",
        "--radio",
        "LoRa-SF9",
        "--interval",
        "1m",
        "--payload",
        "84B",
        "--region",
        "US915",
    ]);
    assert!(err.contains("US915 allows 400 ms per packet"), "{err}");
    let err = refused(&["--board", "nrf52840", "--radio", "LoRa-SF12", "--interval", "1h", "--region", "us915"]);
    assert!(err.contains("SF12 is not an uplink rate in US915 (SF7 to SF10"), "{err}");
    let err = refused(&["--board", "nrf52840", "--radio", "LoRa-SF9", "--interval", "1h", "--region", "mars"]);
    assert!(err.starts_with("error: --region: 'mars' is not one of EU868, US915, AS923"), "{err}");
}

/// 15 years asked on a Pico: the battery does not last (2 mA board sleep alone empties 2400 mAh
/// in 2400 / 2 = 1200 h = 50 days), and the answer says "requirement not met".
#[test]
fn a_lifetime_the_battery_cannot_meet_is_requirement_not_met() {
    let d = tempfile::tempdir().unwrap();
    let args = [
        "--board",
        "rp2040",
        "--radio",
        "LoRa-SF9",
        "--interval",
        "15m",
        "--payload",
        "12B",
        "--region",
        "EU868",
        "--lifetime",
        "15y",
    ];
    let mut a = vec!["choose"];
    a.extend_from_slice(&args);
    let o = lwcbench(&a, d.path());
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.contains("lifetime: requirement not met: the battery lasts"), "{out}");
    assert!(out.contains("--lifetime asks 15.0 years"), "{out}");
    let rep = choose_json(&args, d.path());
    let top = candidate(&rep, rep["chosen"].as_str().unwrap());
    let days = top["figures"]["battery_days"]["value"].as_f64().unwrap();
    assert!(days < 50.0, "{days}");
    assert!(top["labels"].as_array().unwrap().iter().any(|l| l == "REQUIREMENT NOT MET"), "{top}");
    // Ten days asked: met, no flag.
    let rep =
        choose_json(&["--board", "rp2040", "--radio", "LoRa-SF9", "--interval", "15m", "--lifetime", "10d"], d.path());
    let top = candidate(&rep, rep["chosen"].as_str().unwrap());
    assert!(top["figures"]["lifetime_shortfall"].is_null(), "{top}");
}

/// --sleep-ua replaces the board's sleep figure in the battery model and --active-ma the active
/// current in the crypto energy (cycles ÷ clock × supply × current: twice the current, twice
/// the energy).
#[test]
fn sleep_ua_and_active_ma_replace_the_board_figures() {
    let d = tempfile::tempdir().unwrap();
    let base = ["--board", "rp2040", "--radio", "LoRa-SF9", "--interval", "15m", "--region", "EU868"];
    let rep = choose_json(&base, d.path());
    let id = rep["chosen"].as_str().unwrap().to_string();
    let g = &candidate(&rep, &id)["figures"];
    let mut a = base.to_vec();
    a.extend_from_slice(&["--sleep-ua", "1", "--active-ma", "50"]);
    let rep2 = choose_json(&a, d.path());
    let g2 = &candidate(&rep2, &id)["figures"];
    let crypto = |g: &serde_json::Value| g["crypto_uj"]["value"].as_f64().unwrap();
    // The Pico's figure is 25 mA (data/boards.toml): 50 mA doubles the crypto energy.
    assert!((crypto(g2) / crypto(g) - 2.0).abs() < 1e-9, "{} {}", crypto(g), crypto(g2));
    assert!(g2["sources"]["battery"].as_str().unwrap().contains("sleep 1.0 µA from 1 µA given by --sleep-ua"), "{g2}");
    // Load current: energy per report ÷ 900 s ÷ 3 V + 1 µA, plus 3 %/year of 2400 mAh; the
    // 10-year shelf life of alkaline cells caps it (data/battery-chemistries.csv).
    let e = g2["energy_uj"]["value"].as_f64().unwrap() * 1e-6;
    let load_a = e / 900.0 / 3.0 + 1e-6 + 2.4 * 0.03 / 8766.0;
    let want = (2.4 / load_a / 24.0).min(3652.5);
    let days = g2["battery_days"]["value"].as_f64().unwrap();
    assert!((days - want).abs() < 1e-6 * want, "{days} {want}");
    for (arg, needle) in [
        ("--sleep-ua=-1", "error: --sleep-ua: -1 is not between 0 and 100000 µA"),
        ("--active-ma=0", "error: --active-ma: 0 is not between 0.001 and 10000 mA"),
        ("--sleep-ua=NaN", "error: --sleep-ua: NaN is not between 0 and 100000 µA"),
    ] {
        let mut a = base.to_vec();
        a.push(arg);
        let err = refused(&a);
        assert!(err.starts_with(needle), "{err}");
    }
}

/// The radio's receive energy is in the answer: a 10 Hz Wi-Fi sensor stays associated, and the
/// ESP32-C3's 0.62 mA DTIM3 average alone empties 2400 mAh in 2400 / 0.62 / 24 = 161.3 days
/// (the issue saw 824 days); LoRa reports pay their class-A windows (25.8 mJ at SF9 in EU868).
#[test]
fn receive_windows_and_wake_ups_are_counted() {
    let d = tempfile::tempdir().unwrap();
    let rep = choose_json(&["--board", "esp32c3", "--radio", "WiFi-n-MCS7", "--interval", "100ms"], d.path());
    let g = &candidate(&rep, rep["chosen"].as_str().unwrap())["figures"];
    assert!(g["battery_days"]["value"].as_f64().unwrap() < 161.3, "{g}");
    assert!(g["receive"].as_str().unwrap().contains("stays associated, DTIM 3"), "{g}");
    let rep = choose_json(
        &["--board", "nrf52840", "--radio", "LoRa-SF9", "--interval", "15m", "--payload", "12B", "--region", "EU868"],
        d.path(),
    );
    let g = &candidate(&rep, rep["chosen"].as_str().unwrap())["figures"];
    // 0.789824 s × 9.9 mA × 3.3 V = 25803.55 µJ (crates/data/src/physics.rs).
    assert!((g["receive_uj"].as_f64().unwrap() - 25803.55).abs() < 0.01, "{g}");
}

/// `choose --framing oscore` on the Nano 33 BLE with `extra` options, then its printed deploy
/// command run as printed: (the answer, the command's words, its oscore_summary.json, its
/// stdout + stderr).
fn run_the_oscore_handover(
    d: &std::path::Path,
    extra: &[&str],
) -> (serde_json::Value, Vec<String>, serde_json::Value, String) {
    let mut args =
        vec!["--board", "nano33ble", "--radio", "802.15.4", "--interval", "1s", "--tag", "64", "--framing", "oscore"];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--out", "ch"]);
    let rep = choose_json(&args, d);
    let words: Vec<String> =
        rep["handover"]["link_command"].as_array().unwrap().iter().map(|w| w.as_str().unwrap().to_string()).collect();
    assert_eq!(words[1..4], ["link", "--protocol", "oscore"]);
    let run: Vec<&str> = words[1..].iter().map(String::as_str).collect();
    let o = lwcbench(&run, d);
    assert!(o.status.success(), "{}: {}", words.join(" "), String::from_utf8_lossy(&o.stderr));
    let out = d.join(words.last().unwrap());
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("oscore_summary.json")).unwrap()).unwrap();
    let text = String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr);
    (rep, words, v, text)
}

/// With `--edhoc` the printed command runs EDHOC too (the contexts the answer priced): it has
/// `--edhoc`, runs, and stores all 20 readings after a handshake.
#[test]
fn an_oscore_choice_with_edhoc_prints_a_command_that_runs_edhoc() {
    let d = tempfile::tempdir().unwrap();
    let (rep, words, v, text) = run_the_oscore_handover(d.path(), &["--edhoc"]);
    assert_eq!(rep["chosen"], "OSCORE AES-CCM-16-64-128", "suite 2 establishes this AEAD only");
    assert!(words.iter().any(|w| w == "--edhoc"), "{words:?}");
    assert_eq!((v[0]["sent"].as_u64(), v[0]["tally"]["stored"].as_u64()), (Some(20), Some(20)), "{v}");
    assert!(text.to_lowercase().contains("edhoc"), "the summary names the handshake: {text}");
}

/// `--framing oscore`: the printed deploy command is `lwcbench link --protocol oscore` with the
/// chosen COSE AEAD, and it runs as printed: every reading sent is stored.
#[test]
fn an_oscore_choice_prints_a_link_command_that_runs() {
    let d = tempfile::tempdir().unwrap();
    let (rep, words, v, _) = run_the_oscore_handover(d.path(), &[]);
    assert!(rep["chosen"].as_str().unwrap().starts_with("OSCORE "), "{}", rep["chosen"]);
    assert!(!words.iter().any(|w| w == "--edhoc"), "{words:?}");
    let alg = words[words.iter().position(|w| w == "--cipher").unwrap() + 1].as_str();
    assert_eq!(v[0]["alg"], alg);
    assert_eq!((v[0]["sent"].as_u64(), v[0]["tally"]["stored"].as_u64()), (Some(20), Some(20)));
    // Ascon cannot be chosen under OSCORE: refused with the reason, nothing written.
    let o = lwcbench(
        &[
            "choose",
            "--board",
            "nano33ble",
            "--radio",
            "802.15.4",
            "--interval",
            "1s",
            "--framing",
            "oscore",
            "--cipher",
            "Ascon-AEAD128",
        ],
        d.path(),
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.starts_with("error: --cipher with --framing oscore: "), "{err}");
    assert!(err.contains("IANA COSE Algorithms registry") && err.lines().count() == 1, "{err}");
}
