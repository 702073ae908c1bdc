//! The eleven scenarios of docs/choose.md, each with the property that decides it, and the
//! document's examples against this build's output (issue #38: "a test per scenario").
//!
//! `docs_examples_are_this_builds_output` fails when docs/choose.md is stale; with
//! `LWCBENCH_BLESS=1` it rewrites the examples instead: every ```sh block holding one
//! `lwcbench choose` command followed by a ```text block gets that command's real output (run
//! in an empty directory; stderr when it fails); a text block holding a `...` line keeps the
//! short form (the ranking table, `...`, the choice line).
use std::path::Path;
use std::process::Output;

fn lwcbench(args: &[&str], cwd: &Path) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_lwcbench"))
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("binary runs")
}

fn doc_path() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/choose.md")
}

/// The output block of one example: the command run in an empty directory, cut to the short
/// form when `short`.
fn example_output(cmd: &str, short: bool) -> Vec<String> {
    let d = tempfile::tempdir().unwrap();
    // The documented commands quote nothing: words are split on whitespace.
    let words: Vec<&str> = cmd.split_whitespace().skip(1).collect();
    let o = lwcbench(&words, d.path());
    let text = String::from_utf8_lossy(if o.status.success() { &o.stdout } else { &o.stderr }).to_string();
    let lines: Vec<String> = text.trim_end_matches('\n').split('\n').map(str::to_string).collect();
    if !(short && o.status.success()) {
        return lines;
    }
    let k = lines.iter().position(|l| l.starts_with("rank ")).expect("a ranking table");
    let e = lines.iter().enumerate().position(|(n, l)| n > k && l.is_empty()).expect("the table ends");
    let mut out: Vec<String> = lines[k..e].to_vec();
    out.push("...".into());
    out.extend(lines.iter().filter(|l| l.starts_with("choice:")).cloned());
    out
}

/// docs/choose.md with every example's output regenerated.
fn regenerate(doc: &str) -> String {
    let lines: Vec<&str> = doc.split('\n').collect();
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        out.push(lines[i].to_string());
        let example = lines[i] == "```sh"
            && i + 3 < lines.len()
            && lines[i + 1].starts_with("lwcbench choose")
            && lines[i + 2] == "```"
            && lines[i + 3] == "```text";
        if !example {
            i += 1;
            continue;
        }
        let end = (i + 4..lines.len()).find(|&j| lines[j] == "```").expect("the text block ends");
        let short = lines[i + 4..end].contains(&"...");
        out.extend([lines[i + 1].to_string(), "```".into(), "```text".into()]);
        out.extend(example_output(lines[i + 1], short));
        out.push("```".into());
        i = end + 1;
    }
    out.join("\n")
}

#[test]
fn docs_examples_are_this_builds_output() {
    let path = doc_path();
    let doc = std::fs::read_to_string(&path).unwrap();
    let fresh = regenerate(&doc);
    if std::env::var_os("LWCBENCH_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&path, &fresh).unwrap();
        return;
    }
    if fresh != doc {
        let (a, b): (Vec<&str>, Vec<&str>) = (doc.lines().collect(), fresh.lines().collect());
        let n = a.iter().zip(&b).position(|(x, y)| x != y).unwrap_or(a.len().min(b.len()));
        panic!(
            "docs/choose.md is stale from line {}:\n  doc:   {}\n  build: {}\n(LWCBENCH_BLESS=1 rewrites it)",
            n + 1,
            a.get(n).unwrap_or(&"<end>"),
            b.get(n).unwrap_or(&"<end>")
        );
    }
    assert!(doc.matches("\n### ").count() >= 10, "ten scenarios");
}

/// `lwcbench choose --json ARGS`, exit 0.
fn json(args: &[&str]) -> serde_json::Value {
    let d = tempfile::tempdir().unwrap();
    let mut a = vec!["choose", "--json"];
    a.extend_from_slice(args);
    let o = lwcbench(&a, d.path());
    assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// `lwcbench choose ARGS` as text, exit 0.
fn text(args: &[&str]) -> String {
    let d = tempfile::tempdir().unwrap();
    let mut a = vec!["choose"];
    a.extend_from_slice(args);
    let o = lwcbench(&a, d.path());
    assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

/// The one `error:` line of a refused request (non-zero exit, nothing on stdout).
fn refused(args: &[&str]) -> String {
    let d = tempfile::tempdir().unwrap();
    let mut a = vec!["choose"];
    a.extend_from_slice(args);
    let o = lwcbench(&a, d.path());
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(!o.status.success() && o.stdout.is_empty(), "{args:?} was not refused: {err}");
    assert!(err.starts_with("error: ") && err.trim_end().lines().count() == 1, "{err}");
    err
}

fn cand<'a>(rep: &'a serde_json::Value, id: &str) -> &'a serde_json::Value {
    rep["candidates"].as_array().unwrap().iter().find(|c| c["id"] == id).unwrap()
}

/// The default answer a reviewer signs: every ranked candidate a standard, constant-time, with a
/// 128-bit tag.
fn default_answer_is_standard(rep: &serde_json::Value) {
    for id in rep["ranking"].as_array().unwrap() {
        let c = cand(rep, id.as_str().unwrap());
        assert_eq!(c["status"], "standard", "{id}");
        assert_eq!(c["constant_time"], true, "{id}");
        assert_eq!(c["tag_bits"], 128, "{id}");
    }
}

const SOIL: [&str; 10] =
    ["--board", "mkrzero", "--radio", "LoRa-SF9", "--interval", "15m", "--payload", "12B", "--region", "EU868"];

/// 1. LoRaWAN EU868 soil sensor: a standard with a full tag; the class-A windows are counted and
///    the schedule is within the 1 % duty cycle; the drain names what dominates.
#[test]
fn scenario_1_lorawan_soil_sensor() {
    let rep = json(&SOIL);
    default_answer_is_standard(&rep);
    let top = &cand(&rep, rep["chosen"].as_str().unwrap())["figures"];
    assert!(top["region_violations"].as_array().unwrap().is_empty());
    assert!(top["receive_uj"].as_f64().unwrap() > 0.0 && top["receive"].as_str().unwrap().contains("RX2 EU868"));
    let t = text(&SOIL);
    assert!(t.contains("drain:    ") && t.contains("the cipher moves battery life by"), "{t}");
}

/// 2. SF12 meter, hourly, 24 B, 10 years on Li-SOCl2. On LoRaWAN the deploy command sends the
///    compact header (1 byte: DevAddr and FCnt are the carrier's), so the frame is
///    1 + 24 + 16 = 41 bytes, within SF12's 51-byte payload: 1 packet, and the answer says so
///    (with the link's own 16-byte header it was 56 bytes in 2 packets).
#[test]
fn scenario_2_sf12_meter_fits_one_packet_with_the_compact_header() {
    let args = [
        "--board",
        "mkrzero",
        "--radio",
        "LoRa-SF12",
        "--interval",
        "1h",
        "--payload",
        "24B",
        "--lifetime",
        "10y",
        "--chemistry",
        "Li-SOCl2",
        "--battery-mah",
        "2600",
        "--battery-v",
        "3.6",
        "--region",
        "EU868",
    ];
    let rep = json(&args);
    default_answer_is_standard(&rep);
    let top = &cand(&rep, rep["chosen"].as_str().unwrap())["figures"];
    assert_eq!((top["frame_bytes"].as_u64(), top["packets"].as_u64()), (Some(41), Some(1)));
    assert!(text(&args).contains("radio:    1 packet per report"));
}

/// 3. BLE wearable on an nRF52840, every second, 20 B, CR2032: a standard with a full tag and
///    the connection events in the drain. (The CCM-peripheral candidate's test is `engine`'s.)
#[test]
fn scenario_3_ble_wearable() {
    let args = [
        "--board",
        "nrf52840",
        "--radio",
        "BLE-1M",
        "--interval",
        "1s",
        "--payload",
        "20B",
        "--chemistry",
        "CR2032",
        "--battery-mah",
        "225",
    ];
    let rep = json(&args);
    default_answer_is_standard(&rep);
    let d = &rep["drain"];
    assert!(d["terms"].as_array().unwrap().iter().any(|t| t["name"] == "BLE connection events"), "{d}");
}

/// 4. Thread sensor (802.15.4): a standard with a full tag; no receive model for 802.15.4, and
///    the answer says so rather than counting nothing silently.
#[test]
fn scenario_4_thread_sensor() {
    let args = ["--board", "nrf52840", "--radio", "802.15.4", "--interval", "5m", "--payload", "16B"];
    let rep = json(&args);
    default_answer_is_standard(&rep);
    let top = &cand(&rep, rep["chosen"].as_str().unwrap())["figures"];
    assert!(top["receive"].as_str().unwrap().contains("receive energy not counted"), "{}", top["receive"]);
}

/// 5. Wi-Fi camera on an ESP32-C3: the transmission dominates and the cipher moves battery life
///    by more than 10 % — here the choice of cipher matters.
#[test]
fn scenario_5_wifi_camera() {
    let rep = json(&["--board", "esp32c3", "--radio", "WiFi-n-MCS7", "--interval", "200ms", "--payload", "28800B"]);
    default_answer_is_standard(&rep);
    assert_eq!(rep["drain"]["terms"][0]["name"], "transmission", "{}", rep["drain"]);
    assert!(rep["drain"]["cipher_moves_pct"].as_f64().unwrap() > 10.0, "{}", rep["drain"]);
}

/// 6. `--require fips`: only a FIPS 140-3 approved standard is ranked; without one on the board
///    the answer is one error naming --require.
#[test]
fn scenario_6_require_fips() {
    let args = ["--board", "nrf52840", "--radio", "BLE-1M", "--interval", "1s", "--require", "fips"];
    let d = tempfile::tempdir().unwrap();
    let mut a = vec!["choose", "--json"];
    a.extend_from_slice(&args);
    let o = lwcbench(&a, d.path());
    if o.status.success() {
        let rep: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        for id in rep["ranking"].as_array().unwrap() {
            assert_eq!(cand(&rep, id.as_str().unwrap())["fips"], true, "{id}");
        }
    } else {
        let err = refused(&args);
        assert!(
            err.starts_with("error: --require fips: no candidate approved for FIPS 140-3 has figures on nrf52840"),
            "{err}"
        );
    }
}

/// 7. 2 KiB of flash on a SAMD21: nothing fits, and the one hint names the budget that admits a
///    candidate; that budget then gives an answer.
#[test]
fn scenario_7_two_kib_of_flash() {
    let base = ["--board", "mkrzero", "--radio", "LoRa-SF9", "--interval", "15m", "--payload", "12B"];
    let mut a = base.to_vec();
    a.extend_from_slice(&["--flash", "2KiB"]);
    let err = refused(&a);
    assert!(err.starts_with("error: --flash: no candidate fits 2 KiB of flash; --flash "), "{err}");
    assert_eq!(err.matches("admits").count(), 1, "{err}");
    let hint = err.split("; --flash ").nth(1).unwrap().split_whitespace().next().unwrap();
    let mut b = base.to_vec();
    b.extend_from_slice(&["--flash", hint]);
    let rep = json(&b);
    assert!(!rep["ranking"].as_array().unwrap().is_empty());
}

/// 8. An infeasible schedule: 51 B at SF12 every second. By hand (SX1276 formula, SF12, 125 kHz,
///    CR 4/5, low data rate optimisation): T_sym = 32.768 ms; the 68-byte frame (1-byte compact
///    header + 51 + 16-byte tag) is 2 packets of 51 + 17 bytes with 13 bytes of overhead each, far
///    above 1 s on air. The error names the
///    time on air and the interval, exit non-zero.
#[test]
fn scenario_8_infeasible_schedule() {
    let err = refused(&["--board", "mkrzero", "--radio", "LoRa-SF12", "--interval", "1s", "--payload", "51B"]);
    assert!(err.starts_with("error: --interval: 1 s is shorter than the quickest report: "), "{err}");
    assert!(err.contains(" on air in 2 packets of LoRa-SF12 for the 68-byte frame"), "{err}");
}

/// 9. A 15-year lifetime the battery cannot meet: alkaline cells keep 10 years on the shelf
///    (data/battery-chemistries.csv), so the answer is flagged "requirement not met".
#[test]
fn scenario_9_lifetime_not_met() {
    let mut args = SOIL.to_vec();
    args.extend_from_slice(&["--lifetime", "15y"]);
    let rep = json(&args);
    let top = cand(&rep, rep["chosen"].as_str().unwrap());
    assert!(top["labels"].as_array().unwrap().iter().any(|l| l == "REQUIREMENT NOT MET"), "{top}");
    let t = text(&args);
    assert!(
        t.contains("lifetime: requirement not met: the battery lasts") && t.contains("--lifetime asks 15.0 years"),
        "{t}"
    );
}

/// 10. A Modbus/TCP gateway on a Cortex-M4 over Ethernet, polled every 100 ms, mains-powered
///     (--sleep-ua 0): the 96-byte frame is one packet, 13.92 µs on the 100 Mb/s wire
///     ((96 + 78) × 8 / 10^8 s, by hand), and the crypto is a large share of the energy a
///     message costs (not a rounding error as on LoRa).
#[test]
fn scenario_10_modbus_gateway_over_ethernet() {
    let args = [
        "--board",
        "nrf52840",
        "--radio",
        "Ethernet-100M",
        "--interval",
        "100ms",
        "--payload",
        "64B",
        "--sleep-ua",
        "0",
    ];
    let rep = json(&args);
    default_answer_is_standard(&rep);
    let top = &cand(&rep, rep["chosen"].as_str().unwrap())["figures"];
    assert_eq!((top["frame_bytes"].as_u64(), top["packets"].as_u64()), (Some(96), Some(1)));
    assert!((top["air_time_ms"].as_f64().unwrap() - 0.01392).abs() < 1e-12, "{}", top["air_time_ms"]);
    let (crypto, radio) = (top["crypto_uj"]["value"].as_f64().unwrap(), top["radio_uj"].as_f64().unwrap());
    assert!(crypto / (crypto + radio) > 0.2, "crypto {crypto} µJ, radio {radio} µJ");
    assert!(rep["handover"]["link_command_line"].as_str().unwrap().contains("--radio Ethernet-100M"));
}

/// 11. The SF12 meter of scenario 2 under `--framing auto --edhoc --tag 64`: the OSCORE request
///     of the 24-byte reading is 4 + 4 + 6 (OSCORE option: head, flags, 3-byte Partial IV of
///     sequence number 87,659, kid) + 1 + 6 (inner code, Uri-Path, Content-Format, marker) +
///     24 + 8 = 53 bytes, two SF12 packets of at most 51; the link frame 1 + 24 + 16 = 41
///     bytes, one packet, and it wins. EDHOC is priced once: 4 × 40,786,931 cycles on the MKR
///     Zero.
#[test]
fn scenario_11_oscore_on_the_sf12_meter() {
    let args = [
        "--board",
        "mkrzero",
        "--radio",
        "LoRa-SF12",
        "--interval",
        "1h",
        "--payload",
        "24B",
        "--lifetime",
        "10y",
        "--chemistry",
        "Li-SOCl2",
        "--battery-mah",
        "2600",
        "--battery-v",
        "3.6",
        "--tag",
        "64",
        "--framing",
        "auto",
        "--edhoc",
    ];
    let rep = json(&args);
    let os = &cand(&rep, "OSCORE AES-CCM-16-64-128")["figures"];
    assert_eq!((os["frame_bytes"].as_u64(), os["packets"].as_u64()), (Some(53), Some(2)));
    let top = cand(&rep, rep["chosen"].as_str().unwrap());
    assert_eq!((top["figures"]["frame_bytes"].as_u64(), top["figures"]["packets"].as_u64()), (Some(41), Some(1)));
    assert_eq!(rep["framing_verdict"]["winner"], "link");
    assert_eq!(rep["edhoc"]["cycles"].as_f64(), Some(4.0 * 40_786_931.0));
    assert!(cand(&rep, "OSCORE A128GCM")["removed_by"].as_array().unwrap().iter().any(|f| f == "handshake"));
    let t = text(&args);
    assert!(t.contains("framing:  --framing auto: the link frame wins: ") && t.contains("53 B in 2 packets"), "{t}");
}
