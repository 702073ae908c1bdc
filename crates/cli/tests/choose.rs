//! `lwcbench choose` end to end: the answer as JSON and as files, the printed `lwcbench link`
//! command run as printed (embedded broker, SQLite), and bad input as one `error:` line.
use std::path::Path;
use std::process::{Command, Output};

fn lwcbench(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lwcbench")).args(args).current_dir(cwd).output().expect("binary runs")
}

fn choose_json(args: &[&str], cwd: &Path) -> serde_json::Value {
    let mut a = vec!["choose", "--json"];
    a.extend_from_slice(args);
    let o = lwcbench(&a, cwd);
    assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).expect("--json prints JSON")
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
    assert_eq!(rep["schema"], "lwcbench-choose/1");
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
    let mut with = base.to_vec();
    with.push("--allow-provisional");
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
