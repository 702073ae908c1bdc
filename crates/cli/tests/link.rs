//! `lwcbench link` end to end: the default session (embedded broker + SQLite), UDP, and every
//! bad-input path (one `error:` line, non-zero exit, no result files left).
use std::path::Path;
use std::process::{Command, Output};

fn lwcbench(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lwcbench")).args(args).current_dir(cwd).output().expect("binary runs")
}

fn csv_rows(p: &Path) -> Vec<std::collections::HashMap<String, String>> {
    let mut r = csv::Reader::from_path(p).unwrap();
    let h = r.headers().unwrap().clone();
    r.records()
        .map(|x| h.iter().zip(x.unwrap().iter()).map(|(a, b)| (a.to_string(), b.to_string())).collect())
        .collect()
}

fn summary(dir: &Path) -> Vec<std::collections::HashMap<String, String>> {
    csv_rows(&dir.join("link_summary.csv"))
}

#[test]
fn default_session_stores_every_reading() {
    let d = tempfile::tempdir().unwrap();
    let o = lwcbench(&["link", "-o", "out", "--messages", "40", "--interval", "1ms"], d.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = d.path().join("out");
    for f in ["run.json", "link_summary.csv", "link_messages.csv", "summary.md", "link.db"] {
        assert!(out.join(f).is_file(), "{f} missing");
    }
    let rows = summary(&out);
    assert_eq!(rows.len(), 1);
    let r = &rows[0];
    assert_eq!(r["cipher"], "Ascon-AEAD128/rustcrypto");
    assert_eq!(r["sent"], "320"); // 8 devices × 40
    assert_eq!(r["stored"], "320");
    assert_eq!(r["missing"], "0");
    assert_eq!(r["mismatched"], "0");
    // Readings of the built-in dataset are 4 channels × 4 bytes; frame = 16 + 16 + 16 (tag).
    assert_eq!(r["plain_bytes"], "16.0");
    assert_eq!(r["wire_bytes"], "48.0");
    let msgs = std::fs::read_to_string(out.join("link_messages.csv")).unwrap();
    assert_eq!(msgs.lines().count(), 321);
    // The key file is private.
    use std::os::unix::fs::PermissionsExt;
    let mode =
        std::fs::metadata(lwcbench_link::wire::keys::default_key_for(&out).unwrap()).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    let md = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(md.contains("## Link") && !md.contains("UNSAFE"));
    // The store holds exactly the sent (device, counter) pairs, each once.
    let db = rusqlite_count(&out.join("link.db"));
    assert_eq!(db, 320);
}

/// The misuse-resistant suites run a whole session (devices → embedded broker → gateway →
/// store): every reading stored once; XChaCha20-Poly1305's frame is 16 header + 24 random
/// nonce + 16 reading + 16 tag = 72 B, GCM-SIV's 16 + 16 + 16 = 48 B.
#[test]
fn misuse_resistant_suites_store_every_reading() {
    let d = tempfile::tempdir().unwrap();
    let o = lwcbench(
        &[
            "link",
            "-o",
            "m",
            "--messages",
            "20",
            "--interval",
            "1ms",
            "--cipher",
            "XChaCha20-Poly1305,AES-128-GCM-SIV,AES-256-GCM-SIV",
        ],
        d.path(),
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rows = summary(&d.path().join("m"));
    let got: Vec<(&str, &str, &str, &str, &str)> = rows
        .iter()
        .map(|r| {
            (
                r["cipher"].as_str(),
                r["sent"].as_str(),
                r["stored"].as_str(),
                r["missing"].as_str(),
                r["wire_bytes"].as_str(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("XChaCha20-Poly1305/rustcrypto", "160", "160", "0", "72.0"),
            ("AES-128-GCM-SIV/rustcrypto", "160", "160", "0", "48.0"),
            ("AES-256-GCM-SIV/rustcrypto", "160", "160", "0", "48.0"),
        ]
    );
    assert!(rows.iter().all(|r| r["mismatched"] == "0"));
}

fn rusqlite_count(p: &Path) -> i64 {
    let c = rusqlite::Connection::open(p).unwrap();
    c.query_row("SELECT COUNT(*) FROM (SELECT DISTINCT device, counter FROM readings)", [], |r| r.get(0)).unwrap()
}

#[test]
fn udp_and_several_ciphers_and_unsafe_marking() {
    let d = tempfile::tempdir().unwrap();
    let o = lwcbench(
        &[
            "link",
            "-o",
            "u",
            "--transport",
            "udp",
            "--messages",
            "20",
            "--cipher",
            "Ascon-AEAD128,DRACO,TinyJAMBU-128",
            "--allow-provisional",
        ],
        d.path(),
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rows = summary(&d.path().join("u"));
    assert_eq!(rows.len(), 3);
    for r in &rows {
        let (sent, stored, missing): (u64, u64, u64) =
            (r["sent"].parse().unwrap(), r["stored"].parse().unwrap(), r["missing"].parse().unwrap());
        assert_eq!(sent, 160);
        assert_eq!(stored + missing, sent, "UDP loss is counted, never silent");
        // the store file holds all three ciphers' rows: each run checks only its own
        assert_eq!(r["mismatched"], "0", "{}", r["cipher"]);
    }
    assert_eq!(rows[2]["wire_bytes"], "40.0", "TinyJAMBU: 16 + 16 + 8-byte tag");
    assert!(rows[1]["protection"].contains("this project's composition"));

    let o = lwcbench(
        &["link", "-o", "x", "--messages", "5", "--cipher", "Trivium", "--unsafe-no-integrity", "--unsafe-short-key"],
        d.path(),
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("UNSAFE"));
    let x = d.path().join("x");
    assert!(summary(&x)[0]["protection"].starts_with("UNSAFE"));
    assert!(std::fs::read_to_string(x.join("summary.md")).unwrap().contains("UNSAFE"));
    assert!(std::fs::read_to_string(x.join("run.json")).unwrap().contains("UNSAFE"));
}

fn assert_clean_error(args: &[&str], needle: &str) {
    let d = tempfile::tempdir().unwrap();
    let o = lwcbench(args, d.path());
    assert!(!o.status.success(), "{args:?} should fail");
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(lines.len(), 1, "{args:?}: {err:?}");
    assert!(lines[0].contains(needle), "{args:?}: {:?} lacks {needle:?}", lines[0]);
    assert!(!d.path().join("o").exists(), "{args:?} left {:?}", std::fs::read_dir(d.path().join("o")).ok());
}

/// DRACO and the 80-bit-key suites are refused on every link path that seals or opens without
/// their flag (one `error:` line naming the cipher, the flag and the reason), before anything
/// is written; allowed, they are labelled in the summary line, the CSV and run.json.
#[test]
fn draco_and_short_keys_are_gated_on_every_link_path() {
    let d = tempfile::tempdir().unwrap();
    let kf = d.path().join("k.key");
    let k = kf.to_str().unwrap();
    let bk = "mqtt://127.0.0.1:1";
    let paths: Vec<Vec<&str>> = vec![
        vec!["link", "-o", "o"],
        vec!["link", "-o", "o", "--video", "clip.y4m"],
        vec!["link", "device", "--id", "1", "--session", "s", "--broker", bk, "--key-file", k],
        vec!["link", "gateway", "--session", "s", "--broker", bk, "--key-file", k, "--devices", "0-1", "--store", "o"],
        vec!["link", "chaos", "-o", "o"],
        vec!["link", "overload", "-o", "o"],
        vec!["link", "modbus", "-o", "o"],
        vec![
            "link",
            "modbus-proxy",
            "--side",
            "master",
            "--listen",
            "127.0.0.1:0",
            "--peer",
            "127.0.0.1:1",
            "--key-file",
            k,
        ],
    ];
    for p in &paths {
        for (cipher, needle) in [("DRACO/rust-ref", "--allow-provisional"), ("Grain-v1", "--unsafe-short-key")] {
            let mut args = p.clone();
            args.extend(["--cipher", cipher]);
            assert_clean_error(&args, needle);
        }
        let mut args = p.clone();
        args.extend(["--cipher", "34"]);
        assert_clean_error(&args, "DRACO/cpp-fast is a provisional reconstruction of a cipher with a known attack (Banik, 'Cryptanalysis of Draco', ToSC 2022(4)); pass --allow-provisional");
    }
    assert_clean_error(
        &["link", "-o", "o", "--cipher", "MICKEY-2.0", "--allow-provisional"],
        "MICKEY-2.0/rust has a key of 80 bits, under the 112-bit minimum; pass --unsafe-short-key",
    );

    let o = lwcbench(
        &[
            "link",
            "-o",
            "x",
            "--transport",
            "udp",
            "--messages",
            "3",
            "--cipher",
            "DRACO,Trivium",
            "--allow-provisional",
            "--unsafe-short-key",
        ],
        d.path(),
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("PROVISIONAL DRACO/rust-fast: sent 24"), "{err}");
    assert!(err.contains("UNSAFE short key Trivium/rust: sent 24"), "{err}");
    let rows = summary(&d.path().join("x"));
    assert!(rows[0]["protection"].starts_with("PROVISIONAL: this project's composition"), "{:?}", rows[0]);
    assert!(rows[1]["protection"].starts_with("UNSAFE short key: this project's composition"), "{:?}", rows[1]);
    let run = std::fs::read_to_string(d.path().join("x/run.json")).unwrap();
    assert!(run.contains("DRACO/rust-fast: PROVISIONAL: a provisional reconstruction"), "{run}");
    assert!(run.contains("Trivium/rust: UNSAFE: a key of 80 bits, under 112"), "{run}");
}

/// `--max-failed-tags 0` would refuse every device at once: one error line on both receivers.
#[test]
fn max_failed_tags_zero_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let k = d.path().join("k.key");
    let k = k.to_str().unwrap();
    let bk = "mqtt://127.0.0.1:1";
    assert_clean_error(
        &[
            "link",
            "gateway",
            "--session",
            "s",
            "--broker",
            bk,
            "--key-file",
            k,
            "--devices",
            "0",
            "--store",
            "o",
            "--max-failed-tags",
            "0",
        ],
        "--max-failed-tags: must be at least 1",
    );
    assert_clean_error(
        &[
            "link",
            "modbus-proxy",
            "--side",
            "master",
            "--listen",
            "127.0.0.1:0",
            "--peer",
            "127.0.0.1:1",
            "--key-file",
            k,
            "--max-failed-tags",
            "0",
        ],
        "--max-failed-tags: must be at least 1",
    );
}

#[test]
fn bad_input_is_one_error_line() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let unreachable = format!("mqtt://127.0.0.1:{port}");
    assert_clean_error(&["link", "-o", "o", "--broker", &unreachable], "--broker");
    assert_clean_error(&["link", "-o", "o", "--broker", "http://x"], "--broker");
    assert_clean_error(&["link", "-o", "o", "--store", "/proc/nope/x.db"], "--store");
    assert_clean_error(&["link", "-o", "o", "--store", "mysql://x/y"], "--store");
    assert_clean_error(&["link", "-o", "o", "--rate=-5"], "--rate");
    assert_clean_error(&["link", "-o", "o", "--rate", "fast"], "--rate");
    assert_clean_error(&["link", "-o", "o", "--interval", "5parsecs"], "--interval");
    assert_clean_error(&["link", "-o", "o", "--devices", "0"], "--devices");
    assert_clean_error(&["link", "-o", "o", "--window", "0"], "--window");
    assert_clean_error(&["link", "-o", "o", "--cipher", "ROT13"], "--cipher");
    assert_clean_error(&["link", "-o", "o", "--cipher", "Ascon-AEAD128", "--unsafe-no-integrity"], "AEAD");
    assert_clean_error(&["link", "-o", "o", "--transport", "carrier-pigeon"], "--transport");
    let d = tempfile::tempdir().unwrap();
    let kf = d.path().join("bad.key");
    std::fs::write(&kf, "not a key\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&kf, std::fs::Permissions::from_mode(0o600)).unwrap();
    assert_clean_error(&["link", "-o", "o", "--key-file", kf.to_str().unwrap()], "line 1");
}

#[test]
fn attack_suite_and_lora_preset_write_their_tables() {
    let d = tempfile::tempdir().unwrap();
    let o = lwcbench(
        &["link", "--attack", "-o", "a", "--cipher", "Grain-128AEADv2,Trivium", "--unsafe-short-key"],
        d.path(),
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let t = std::fs::read_to_string(d.path().join("a/link_attack.csv")).unwrap();
    assert_eq!(t.lines().count(), 1 + 2 * 16);
    assert!(t.lines().skip(1).all(|l| l.ends_with(",true")), "{t}");
    let o = lwcbench(&["link", "--preset", "lora-minute", "-o", "p", "--messages", "5"], d.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // The preset allows DRACO (it reproduces a study that measured it) and still labels it.
    assert!(String::from_utf8_lossy(&o.stderr).contains("PROVISIONAL DRACO/rust-fast: sent"));
    let e = std::fs::read_to_string(d.path().join("p/link_energy.csv")).unwrap();
    assert_eq!(e.lines().count(), 1 + 4 * 3, "4 ciphers × LoRa SF7/SF9/SF12");
    let md = std::fs::read_to_string(d.path().join("p/summary.md")).unwrap();
    assert!(md.contains("MODELLED") && md.contains("LoRa-SF12"));
    assert_clean_error(&["link", "-o", "o", "--preset", "nope"], "--preset");
    assert_clean_error(&["link", "-o", "o", "--radio", "smoke-signals"], "--radio");
    assert_clean_error(&["link", "-o", "o", "--battery-mah", "0"], "--battery-mah");
}

/// `--board rp2040` (5 V × 25 mA at 125 MHz: 1 nJ per cycle, hand): Ascon-AEAD128's crypto
/// energy is its M0+ image's emulated encrypt count for the 16-byte reading (the warm 128-bit
/// count of data/emulated-cycles.csv, the rp2040 profile's row: the steady state), DRACO (stream + Poly1305, no image) falls back to host time,
/// and battery life includes self-discharge: with the board's 2 mA sleep at 5 V drawn from
/// 2 AA cells at 3 V (3.333 mA), 2400 mAh last 2.4 Ah / (3.3333 mA + 8.2 µA self-discharge +
/// ~0.3 µA of reports) ≈ 718 h ≈ 29.9 days, load-limited. nRF52840 on a CR2032 with a 1 µA
/// sleep and one ~14 µJ BLE report an hour (~1.3 nA): 225 mAh, 1.5 %/year = 0.385 µA →
/// 0.225 Ah / 1.386 µA ≈ 162,000 h ≈ 6760 days (18.5 years), cut at the 10-year shelf life.
#[test]
fn board_energy_from_emulated_cycles_and_battery_with_self_discharge() {
    let d = tempfile::tempdir().unwrap();
    let cycles =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/emulated-cycles.csv")).unwrap();
    let ascon = cycles
        .lines()
        .find(|l| l.starts_with("rp2040,Ascon-AEAD128,rustcrypto,") && l.contains(",thumbv6m-none-eabi,"))
        .expect("Ascon-AEAD128 row of the rp2040 profile");
    let header = cycles.lines().find(|l| l.starts_with("board,")).unwrap();
    let warm = header.split(',').position(|c| c == "warm_cycles_128_bits").expect("a warm column");
    let at_128_bits: f64 = ascon.split(',').nth(warm).unwrap().parse().unwrap();
    let o = lwcbench(
        &[
            "link",
            "-o",
            "b",
            "--board",
            "rp2040",
            "--messages",
            "5",
            "--interval",
            "1ms",
            "--cipher",
            "Ascon-AEAD128,DRACO",
            "--allow-provisional",
            "--radio",
            "BLE-1M",
        ],
        d.path(),
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rows = csv_rows(&d.path().join("b/link_energy.csv"));
    assert_eq!(rows.len(), 2);
    let a = rows.iter().find(|r| r["cipher"] == "Ascon-AEAD128/rustcrypto").unwrap();
    assert_eq!(a["energy_source"], "emulated:rp2040 (M0+ model, 125 MHz)");
    let uj: f64 = a["crypto_uj"].parse().unwrap();
    assert!((uj - (at_128_bits * 1e-3 * 1e3).round() / 1e3).abs() < 1e-9, "{uj} µJ vs {at_128_bits} cycles");
    let dr = rows.iter().find(|r| r["cipher"].starts_with("DRACO")).unwrap();
    assert!(dr["energy_source"].starts_with("host-time×power (fallback"), "{}", dr["energy_source"]);
    assert_eq!((a["chemistry"].as_str(), a["self_discharge_pct_year"].as_str()), ("alkaline-AA", "3.0"));
    let days: f64 = a["battery_days_modelled"].parse().unwrap();
    assert!((days - 29.9).abs() < 0.2 && a["life_limited_by"] == "load + self-discharge", "{a:?}");
    let md = std::fs::read_to_string(d.path().join("b/summary.md")).unwrap();
    assert!(md.contains("emulated:rp2040") && md.contains("self-discharge 3 % a year"), "{md}");

    let o = lwcbench(
        &[
            "link",
            "-o",
            "c",
            "--board",
            "nrf52840",
            "--chemistry",
            "CR2032",
            "--battery-mah",
            "225",
            "--sleep-ua",
            "1",
            "--report-interval",
            "1h",
            "--messages",
            "3",
            "--radio",
            "BLE-1M",
        ],
        d.path(),
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r = &csv_rows(&d.path().join("c/link_energy.csv"))[0];
    assert_eq!((r["life_limited_by"].as_str(), r["battery_days_modelled"].as_str()), ("shelf life", "3652.5"), "{r:?}");
    let load: f64 = r["battery_days_load_modelled"].parse().unwrap();
    assert!(load > 6600.0 && load < 6900.0, "{load}");
    assert_clean_error(
        &["link", "-o", "o", "--board", "uno"],
        &format!("--board: 'uno' is not a board ({})", crate::boards_by_hand()),
    );
    assert_clean_error(&["link", "-o", "o", "--chemistry", "NiMH"], "--chemistry: 'NiMH' is not one of");
}

#[test]
fn report_page_is_written_with_the_run_and_stale_tables_go_with_force() {
    let d = tempfile::tempdir().unwrap();
    let o = lwcbench(&["link", "-o", "r", "--messages", "10", "--interval", "1ms"], d.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = d.path().join("r");
    let run: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("run.json")).unwrap()).unwrap();
    let files: Vec<&str> = run["files"].as_array().unwrap().iter().filter_map(|f| f.as_str()).collect();
    assert!(files.contains(&"report.html") && files.contains(&"link_summary.csv"), "{files:?}");
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("lwcbench report — link") && html.contains("Ascon-AEAD128/rustcrypto"));
    assert!(html.contains("<svg") && html.contains("<table>"), "latency chart and the summary tables");
    // `lwcbench report` re-renders the same kind of page from the link's run.json
    let o = lwcbench(&["report", "r"], d.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // An attack run replacing the session run leaves none of the session's tables behind.
    let o = lwcbench(&["link", "--attack", "-o", "r", "--force", "--cipher", "Ascon-AEAD128"], d.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for stale in ["link_summary.csv", "link_messages.csv", "link_energy.csv"] {
        assert!(!out.join(stale).exists(), "{stale} of the replaced run is still there");
    }
    assert!(out.join("link_attack.csv").is_file() && out.join("report.html").is_file());
    // the counter state and the key stay (counters must never restart under the same key),
    // outside the results directory
    let key = lwcbench_link::wire::keys::default_key_for(&out).unwrap();
    assert!(key.is_file() && lwcbench_link::device::counter::beside_key(&key).is_file(), "{}", key.display());
    assert!(!out.join("state/master.key").exists(), "a key inside the results directory");
}

/// `lwcbench` in `cwd` with its key directory in `keys` (the default master keys live there).
fn lwcbench_keys(args: &[&str], cwd: &Path, keys: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lwcbench"))
        .args(args)
        .current_dir(cwd)
        .env("LWCBENCH_KEY_DIR", keys)
        .output()
        .expect("binary runs")
}

/// Issue 37 item 5 with the key hierarchy: `link provision --protocol modbus` writes the pair
/// key with both proxies' replay states beside it; `link modbus-proxy` refuses the master, a
/// pair number other than the key's and a missing replay state (one `error:` line each, at
/// start); `link modbus` keeps its master key out of the results directory and refuses to seal
/// as pair 0 once pair 0 has its own key.
#[test]
fn modbus_proxy_and_measure_take_provisioned_keys() {
    let d = tempfile::tempdir().unwrap();
    let keys = d.path().join("keys");
    let run = |args: &[&str]| lwcbench_keys(args, d.path(), &keys);
    let ok = |o: &Output| assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let one_error = |o: &Output, needle: &str| {
        assert!(!o.status.success());
        let err = String::from_utf8_lossy(&o.stderr);
        let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
        assert_eq!(lines.len(), 1, "{err}");
        assert!(lines[0].contains(needle), "{:?} lacks {needle:?}", lines[0]);
    };
    ok(&run(&["link", "keygen", "--key-file", "m.key"]));
    let o =
        run(&["link", "provision", "--key-file", "m.key", "--protocol", "modbus", "--device", "3", "--out", "p3.key"]);
    ok(&o);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("p3.key.modbus-3-master.replay") && out.contains("p3.key.modbus-3-slave.replay"), "{out}");
    for f in ["p3.key", "p3.key.counters", "p3.key.modbus-3-master.replay", "p3.key.modbus-3-slave.replay"] {
        assert!(d.path().join(f).is_file(), "{f} missing");
    }
    assert!(!d.path().join("m.key.modbus-0-master.replay").exists(), "keygen pairs nothing");
    let proxy = |side: &str, key: &str, extra: &[&str]| {
        let mut a = vec![
            "link",
            "modbus-proxy",
            "--side",
            side,
            "--listen",
            "127.0.0.1:0",
            "--peer",
            "127.0.0.1:1",
            "--key-file",
            key,
        ];
        a.extend_from_slice(extra);
        run(&a)
    };
    one_error(&proxy("master", "m.key", &[]), "is a master key");
    one_error(&proxy("master", "p3.key", &["--pair", "4"]), "--pair: 4, but --key-file p3.key is pair 3's key");
    std::fs::rename(d.path().join("p3.key.modbus-3-slave.replay"), d.path().join("lost")).unwrap();
    one_error(&proxy("slave", "p3.key", &[]), "replay state p3.key.modbus-3-slave.replay does not exist");

    // The measurement: its default master key is in the key directory, not in the results.
    ok(&run(&["link", "modbus", "-o", "r1", "--polls", "3", "--warmup", "0", "--register-count", "2"]));
    let key = keys.read_dir().unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect::<Vec<_>>();
    assert!(key.iter().any(|k| k.starts_with("r1-") && k.ends_with(".key")), "{key:?}");
    let mut inside = Vec::new();
    let mut todo = vec![d.path().join("r1")];
    while let Some(p) = todo.pop() {
        for e in std::fs::read_dir(&p).unwrap() {
            let e = e.unwrap();
            if e.file_type().unwrap().is_dir() {
                todo.push(e.path());
            } else {
                inside.push(e.file_name().into_string().unwrap());
            }
        }
    }
    assert!(!inside.iter().any(|f| f.contains("key") || f.contains("counters") || f.contains("replay")), "{inside:?}");
    // Pair 0 provisioned under m.key: the in-process pair would seal as it.
    ok(&run(&["link", "provision", "--key-file", "m.key", "--protocol", "modbus", "--device", "0", "--out", "p0.key"]));
    one_error(
        &run(&["link", "modbus", "-o", "r2", "--polls", "3", "--warmup", "0", "--key-file", "m.key"]),
        "modbus device 0 is provisioned",
    );
    assert!(!d.path().join("r2").exists(), "nothing half-written");
}
