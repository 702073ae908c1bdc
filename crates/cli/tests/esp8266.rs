//! `--board esp8266` (NodeMCU v2, Xtensa LX106) wherever boards work: `choose` prices the C/C++
//! candidates that have ESP8266 rows (QEMU's lx106 CPU with the LX106 model), `mcu` takes the
//! board, and bad boards are one `error:` line. Expected figures are read from the CSV text
//! by hand, not through the loaders.
use std::path::Path;
use std::process::{Command, Output};

fn lwcbench(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lwcbench")).args(args).current_dir(cwd).output().expect("binary runs")
}

/// Column `col` of the data/*.csv line starting with `prefix`.
fn field(csv: &str, prefix: &str, col: usize) -> f64 {
    let line = csv.lines().find(|l| l.starts_with(prefix)).unwrap_or_else(|| panic!("no line {prefix}"));
    line.split(',').nth(col).unwrap().parse().unwrap()
}

/// Before the ESP8266 had a record, `choose --board esp8266` was "--board: 'esp8266' is not a
/// board". Now the provisional C++ DRACO (the one catalogued link cipher with an LX106 image; a
/// composition, so `--require any`) is priced on it with the own-C Poly1305 share, and the answer
/// names the LX106 model and the board's rows.
#[test]
fn choose_on_the_esp8266_prices_the_cpp_draco_from_its_lx106_rows() {
    let d = tempfile::tempdir().unwrap();
    let args = [
        "choose",
        "--json",
        "--board",
        "esp8266",
        "--radio",
        "WiFi-n-MCS7-ESP8266",
        "--interval",
        "10m",
        "--allow-provisional",
        "--require",
        "any",
    ];
    let o = lwcbench(&args, d.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    // Under --require any the NIST LWC C builds of Ascon-128 compete too (same cipher as the
    // link's Ascon-128 suite); the DRACO row is what this test is about.
    let c = v["candidates"].as_array().unwrap().iter().find(|c| c["id"] == "DRACO/cpp-fast").unwrap();
    assert_eq!(c["passed"], true, "{c}");
    let f = &c["figures"];
    let crypto = f["sources"]["crypto"].as_str().unwrap();
    assert!(crypto.starts_with("emulated on esp8266 (lx106 model, 80 MHz"), "{crypto}");
    assert!(crypto.contains("c_chacha20poly1305 image minus the c_chacha20 image"), "{crypto}");
    // flash: the DRACO image + the Poly1305 share (ChaCha20-Poly1305 minus ChaCha20), by hand
    let sizes = include_str!("../../../data/mcu-sizes.csv");
    let flash = field(sizes, "DRACO,cpp-fast,draco_fast,xtensa-lx106-elf,", 7)
        + field(sizes, "ChaCha20-Poly1305,c,c_chacha20poly1305,xtensa-lx106-elf,", 7)
        - field(sizes, "ChaCha20,c,c_chacha20,xtensa-lx106-elf,", 7);
    assert_eq!(f["flash_bytes"].as_f64().unwrap(), flash);
    // Rust candidates have no LX106 image: removed with the reason, never priced
    let rust = v["candidates"].as_array().unwrap().iter().find(|c| c["id"] == "Ascon-AEAD128/rustcrypto").unwrap();
    assert!(rust["figures"].is_null() && rust["passed"] == false);
    assert!(rust["reasons"].to_string().contains("xtensa-lx106-elf"), "{}", rust["reasons"]);
}

/// The default answer on the ESP8266 is a standard AEAD: our C ChaCha20-Poly1305 (RFC 8439,
/// checked against `cryptography` in mcu/tests), carried by the link's ChaCha20-Poly1305 suite
/// (the same bytes on the wire). It failed before: the C image had no catalogue entry, so nothing
/// passed without --allow-provisional.
#[test]
fn choose_on_the_esp8266_answers_the_c_chacha20_poly1305_by_default() {
    let d = tempfile::tempdir().unwrap();
    let o = lwcbench(
        &["choose", "--board", "esp8266", "--radio", "WiFi-n-MCS7-ESP8266", "--interval", "10m", "--json"],
        d.path(),
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["chosen"], "ChaCha20-Poly1305/c", "{}", v["ranking"]);
    assert!(
        v["handover"]["link_command_line"].as_str().unwrap().contains("--cipher ChaCha20-Poly1305/rustcrypto "),
        "{}",
        v["handover"]
    );
}

/// `lwcbench mcu --board` takes the boards of data/boards.toml; an unknown one is one error
/// line listing them (before the venv is looked for).
#[test]
fn mcu_board_is_checked_against_the_records() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("out");
    let o = lwcbench(&["mcu", "--board", "uno", "--out", out.to_str().unwrap()], d.path());
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(lines[0].contains("--board: 'uno' is not a board of data/boards.toml (") && lines[0].contains("esp8266"));
    assert!(!out.join("run.json").exists());
}

/// `--require fips` on the ESP8266 answers our own C AES-128 in CCM or GCM (mcu/lx106/aes,
/// checked in QEMU against Wycheproof and the GCM specification's vectors in
/// mcu/tests/test_lx106_aes.py), priced from its esp8266 rows. It failed before: no AES image had
/// an LX106 row, so the answer was "no candidate approved for FIPS 140-3 has figures".
#[test]
fn choose_on_the_esp8266_answers_c_aes_under_require_fips() {
    let d = tempfile::tempdir().unwrap();
    let args = [
        "choose",
        "--board",
        "esp8266",
        "--radio",
        "WiFi-n-MCS7-ESP8266",
        "--interval",
        "10m",
        "--require",
        "fips",
        "--json",
    ];
    let o = lwcbench(&args, d.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let chosen = v["chosen"].as_str().unwrap();
    assert!(chosen == "AES-128-GCM/c" || chosen == "AES-128-CCM/c", "{chosen}: {}", v["ranking"]);
    let c = v["candidates"].as_array().unwrap().iter().find(|c| c["id"] == chosen).unwrap();
    let crypto = c["figures"]["sources"]["crypto"].as_str().unwrap();
    assert!(crypto.starts_with("emulated on esp8266 (lx106 model, 80 MHz"), "{crypto}");
    // flash: the image's own row, read from the CSV by hand
    let image = if chosen == "AES-128-GCM/c" { "AES-128-GCM,c,c_aes128gcm," } else { "AES-128-CCM,c,c_aes128ccm," };
    let sizes = include_str!("../../../data/mcu-sizes.csv");
    assert_eq!(c["figures"]["flash_bytes"].as_f64().unwrap(), field(sizes, &format!("{image}xtensa-lx106-elf,"), 7));
}

/// The ESP8266's own C CCM* (mcu/lx106/aes/ccm.c with a 13-byte nonce and a 16/8/4-byte MIC,
/// checked in QEMU against RFC 3610 and CCMVS with associated data) are candidates of the
/// catalogue's CCM* entries, priced from their esp8266 rows. It failed before: the
/// "AES-128-CCM*-8/c" rows had no catalogue entry of that id and CCM* has no link suite, so
/// `choose` dropped them and an 802.15.4 answer listed no CCM* on the ESP8266 at all.
#[test]
fn choose_on_the_esp8266_lists_the_c_ccm_star_images_as_ccm_star_candidates() {
    let d = tempfile::tempdir().unwrap();
    let args =
        ["choose", "--board", "esp8266", "--radio", "802.15.4", "--interval", "10m", "--require", "any", "--json"];
    let o = lwcbench(&args, d.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let cands = v["candidates"].as_array().unwrap();
    let sizes = include_str!("../../../data/mcu-sizes.csv");
    for (id, row) in [
        ("AES-128-CCM*/c", "AES-128-CCM*,c,c_aes128ccmstar,"),
        ("AES-128-CCM*-8/c", "AES-128-CCM*-8,c,c_aes128ccmstar8,"),
        ("AES-128-CCM*-4/c", "AES-128-CCM*-4,c,c_aes128ccmstar4,"),
    ] {
        let c = cands.iter().find(|c| c["id"] == id).unwrap_or_else(|| panic!("no candidate {id}"));
        let f = &c["figures"];
        assert!(f["sources"]["crypto"].as_str().unwrap().starts_with("emulated on esp8266 (lx106 model"), "{c}");
        assert_eq!(f["flash_bytes"].as_f64().unwrap(), field(sizes, &format!("{row}xtensa-lx106-elf,"), 7), "{id}");
    }
}
