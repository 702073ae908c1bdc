//! Tests of issue #38 items 3 and 6: the user's board and radio files, the DTIM period, the
//! term that dominates the energy, the folds, the one budget hint and the chart's labels.
use crate::options::{Options, Request};
use crate::render::{html::html, text::text};
use crate::report::choose;

fn opts(board: &str, radio: &str, interval: &str) -> Options {
    Options { board: board.into(), radio: radio.into(), interval: interval.into(), ..Options::default() }
}

/// A file of `text` in a fresh directory of its own (removed with it when the test ends).
struct TempFile {
    dir: std::path::PathBuf,
    path: String,
}

impl TempFile {
    fn new(name: &str, text: &[u8]) -> TempFile {
        let dir = std::env::temp_dir().join(format!("lwcbench-choose-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        TempFile { dir, path: path.display().to_string() }
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

const BOARD_HEAD: &str = "board,chip,core,target,clock_mhz,volts,active_ma,sleep_ua,status,source";

/// A board of the user's file runs a built-in board's emulated cycles with its own clock and
/// currents: crypto energy = the same cycles ÷ its clock × its volts × its current. By hand,
/// against the nrf52840 row (64 MHz, 3 V, 3.3 mA): (3.3 V × 10 mA / 80 MHz) ÷ (3 V × 3.3 mA /
/// 64 MHz) = 0.4125 / 0.1546875 = 2.6667 (8/3) times the energy per cycle.
#[test]
fn a_board_file_runs_a_builtin_profile_with_its_own_currents() {
    let f = TempFile::new(
        "boards.csv",
        format!("# mine\n{BOARD_HEAD},cycles_of\nstm32l4,STM32L476,Cortex-M4F,thumbv7em-none-eabihf,80,3.3,10,2,estimate,\"bench notes\",nrf52840\n").as_bytes(),
    );
    let mine = Options { boards: Some(f.path.clone()), ..opts("STM32L4", "BLE-1M", "10s") };
    let req = Request::resolve(&mine).unwrap();
    assert_eq!((req.board.id.as_str(), req.cycles_from.as_str()), ("stm32l4", "nrf52840"));
    let a = choose(&mine, None).unwrap();
    let b = choose(&opts("nrf52840", "BLE-1M", "10s"), None).unwrap();
    let id = "Ascon-AEAD128/rustcrypto";
    let (ga, gb) =
        (a.candidate(id).unwrap().figures.clone().unwrap(), b.candidate(id).unwrap().figures.clone().unwrap());
    assert_eq!(ga.crypto_cycles, gb.crypto_cycles);
    assert!(
        (ga.crypto_uj.value / gb.crypto_uj.value - 8.0 / 3.0).abs() < 1e-9,
        "{} {}",
        ga.crypto_uj.value,
        gb.crypto_uj.value
    );
    assert!(ga.sources["crypto"].contains("nrf52840's memory profile for stm32l4"), "{}", ga.sources["crypto"]);
    // A built-in id in the file keeps its own cycles with the file's currents.
    let f2 = TempFile::new(
        "same.csv",
        format!("{BOARD_HEAD}\nnrf52840,nRF52840,Cortex-M4F,thumbv7em-none-eabihf,64,3,6.6,1.5,estimate,\"LDO\"\n")
            .as_bytes(),
    );
    let c = choose(&Options { boards: Some(f2.path.clone()), ..opts("nrf52840", "BLE-1M", "10s") }, None).unwrap();
    let gc = c.candidate(id).unwrap().figures.clone().unwrap();
    assert!((gc.crypto_uj.value / gb.crypto_uj.value - 2.0).abs() < 1e-9);
}

fn err(o: Options) -> String {
    let e = choose(&o, None).unwrap_err();
    assert!(!e.contains('\n'), "one line: {e}");
    e
}

/// A bad row of the user's file is one line naming the option, the file and the line.
#[test]
fn bad_board_and_radio_rows_name_the_file_and_line() {
    let cases: [(&str, &str); 5] = [
        ("x,c,M4,thumbv7em-none-eabihf,64,3,3.3,1.5,estimate,\"s\"", "line 3: board 'x' has no emulated cycles of its own: name the built-in board whose memory profile it shares in a cycles_of column (nrf52840 or nano33ble for thumbv7em-none-eabihf)"),
        ("x,c,M4,thumbv7em-none-eabihf,0,3,3.3,1.5,estimate,\"s\"", "line 3: clock_mhz '0' is not a positive number"),
        ("x,c,M4,thumbv7em-none-eabihf,64,3,1e300,1.5,estimate,\"s\"", "line 3: active_ma 1e300 is above 10000"),
        ("x,c,M4,avr-unknown,64,3,3.3,1.5,estimate,\"s\"", "line 3: target 'avr-unknown' has no emulated cycles"),
        ("x,c,M4,thumbv7em-none-eabihf,64,3,3.3,1.5,guess,\"s\"", "line 3: status 'guess' is not sourced or estimate"),
    ];
    for (row, want) in cases {
        let f = TempFile::new("b.csv", format!("# c\n{BOARD_HEAD}\n{row}\n").as_bytes());
        let e = err(Options { boards: Some(f.path.clone()), ..opts("x", "BLE-1M", "10s") });
        assert!(e.starts_with(&format!("--boards: {}: {want}", crate::fmt::prefix(&f.path))), "{e}");
    }
    let head =
        "radio,kind,bitrate_bps,sf,bw_hz,cr,preamble_symbols,overhead_bytes,max_payload,preamble_s,tx_w,status,source";
    let rcases: [(&str, &str); 3] = [
        ("R,fixed,1000,0,0,0,0,10,100,0,1e9,estimate,\"s\"", "line 2: tx_w 1e9 is above 100"),
        ("R,fixed,1000,0,0,0,0,10,100,0,1,estimate", "line 2: source is empty"),
        ("R<b>,fixed,1000,0,0,0,0,10,100,0,1,estimate,\"s\"", "line 2: radio 'R<b>' is not 1 to 64 letters"),
    ];
    for (row, want) in rcases {
        let f = TempFile::new("r.csv", format!("{head}\n{row}\n").as_bytes());
        let e = err(Options { radios: Some(f.path.clone()), ..opts("nrf52840", "R", "10s") });
        assert!(e.starts_with(&format!("--radios: {}: {want}", crate::fmt::prefix(&f.path))), "{e}");
    }
    let e = err(Options { boards: Some("/nonexistent/b.csv".into()), ..opts("rp2040", "BLE-1M", "10s") });
    assert!(e.starts_with("--boards: /nonexistent/b.csv: "), "{e}");
    let big = TempFile::new("big.csv", &vec![b'#'; (crate::userdata::MAX_FILE_BYTES + 1) as usize]);
    let e = err(Options { radios: Some(big.path.clone()), ..opts("rp2040", "BLE-1M", "10s") });
    assert!(e.ends_with("larger than 1048576 bytes"), "{e}");
    let bin = TempFile::new("bin.csv", b"radio\xff\n");
    let e = err(Options { radios: Some(bin.path.clone()), ..opts("rp2040", "BLE-1M", "10s") });
    assert!(e.contains("not UTF-8 text"), "{e}");
}

/// A radio of the user's file is priced by the same model: 100.8 µs on air for a 48-byte frame
/// with 78 bytes of overhead at 10 Mb/s ((48 + 78) × 8 / 10^7 s, by hand).
#[test]
fn a_radio_file_is_priced_like_the_builtin_radios() {
    let head =
        "radio,kind,bitrate_bps,sf,bw_hz,cr,preamble_symbols,overhead_bytes,max_payload,preamble_s,tx_w,status,source";
    let f = TempFile::new(
        "r.csv",
        format!("{head}\nEthernet-10M,fixed,10000000,0,0,0,0,78,1460,0,0.2,estimate,\"my PHY\"\n").as_bytes(),
    );
    let rep =
        choose(&Options { radios: Some(f.path.clone()), ..opts("nrf52840", "ethernet-10m", "1s") }, None).unwrap();
    let g = rep.candidate(&rep.chosen).unwrap().figures.clone().unwrap();
    assert_eq!(g.frame_bytes, 48);
    assert!((g.air_time_ms - 0.1008).abs() < 1e-12, "{}", g.air_time_ms);
    assert!((g.radio_uj - 0.1008e-3 * 0.2 * 1e6).abs() < 1e-9, "{}", g.radio_uj);
}

/// The DTIM period comes from data/radio-receive.csv (3) or `--dtim`: at DTIM 10 the ESP32-C3
/// station draws 0.31 mA between reports (the table's row), at DTIM 3 0.62 mA.
#[test]
fn dtim_comes_from_the_table_or_the_option() {
    let base = opts("esp32c3", "WiFi-n-MCS7", "100ms");
    let g = |o: &Options| {
        let r = choose(o, None).unwrap();
        r.candidate(&r.chosen).unwrap().figures.clone().unwrap()
    };
    let d3 = g(&base);
    assert!((d3.sleep_ua - 620.0).abs() < 1e-9, "{}", d3.sleep_ua);
    assert!(
        d3.sources["dtim"].starts_with("DTIM 3 (data/radio-receive.csv wifi dtim_period, estimate"),
        "{}",
        d3.sources["dtim"]
    );
    let d10 = g(&Options { dtim: Some(10), ..base.clone() });
    assert!((d10.sleep_ua - 310.0).abs() < 1e-9, "{}", d10.sleep_ua);
    assert!(d10.receive.contains("DTIM 10"), "{}", d10.receive);
    assert_eq!(
        err(Options { dtim: Some(2), ..base }),
        "--dtim: 2 is not one of 1, 3, 10 (the DTIM periods data/radio-receive.csv gives an average current for)"
    );
}

/// The drain of one report interval, by hand: --sleep-ua 100 at 3 V over 900 s is
/// 100e-6 × 3 × 900 = 0.27 J = 270,000 µJ; alkaline self-discharge 3 %/year of 2400 mAh is
/// 2.4 × 0.03 / 8766 A = 8.2136 µA → × 3 V × 900 s = 22,176.6 µJ. Sleep dominates and the
/// cipher's few µJ move battery life by < 0.1 %.
#[test]
fn the_answer_names_the_term_that_dominates_the_drain() {
    let o = Options { sleep_ua: Some(100.0), payload: "12B".into(), ..opts("rp2040", "LoRa-SF9", "15m") };
    let rep = choose(&o, None).unwrap();
    let d = rep.drain.clone().unwrap();
    let term = |n: &str| d.terms.iter().find(|t| t.name == n).unwrap_or_else(|| panic!("{n}: {:?}", d.terms)).uj;
    assert!((term("sleep current between reports") - 270_000.0).abs() < 1e-6);
    assert!((term("self-discharge") - 2.4 * 0.03 / 8766.0 * 1e6 * 3.0 * 900.0).abs() < 1e-6);
    assert_eq!(d.terms[0].name, "sleep current between reports");
    let total: f64 = d.terms.iter().map(|t| t.uj).sum();
    assert!((d.terms.iter().map(|t| t.share).sum::<f64>() - 1.0).abs() < 1e-12 && total > 270_000.0);
    assert!(
        d.line.starts_with("sleep current between reports is ")
            && d.line.ends_with("the cipher moves battery life by < 0.1 %"),
        "{}",
        d.line
    );
    assert!(text(&rep).contains(&format!("drain:    {}\n", d.line)));
    // The camera: 28.8 kB a frame on an RV32 core, the cipher is a real share of the drain.
    let cam = choose(&Options { payload: "28800B".into(), ..opts("esp32c3", "WiFi-n-MCS7", "200ms") }, None).unwrap();
    let d = cam.drain.unwrap();
    assert_eq!(d.terms[0].name, "transmission", "{:?}", d.terms);
    assert!(d.cipher_moves_pct > 10.0, "{}", d.cipher_moves_pct);
}

/// The link's ChaCha20 composition is ChaCha20-Poly1305 byte for byte: one row, not two; the
/// host-only library builds are one line, not one OUT line each.
#[test]
fn near_duplicates_fold_and_host_only_builds_are_one_line() {
    let o = Options { require: Some("reviewed".into()), ..opts("nrf52840", "BLE-1M", "1s") };
    let rep = choose(&o, None).unwrap();
    assert!(rep.candidate("ChaCha20/rustcrypto").unwrap().rank.is_some(), "both ranked in the JSON");
    let t = text(&rep);
    let table: Vec<&str> = t.lines().skip_while(|l| !l.starts_with("rank ")).take_while(|l| !l.is_empty()).collect();
    assert!(!table.iter().any(|l| l.contains(" ChaCha20/rustcrypto ")), "{t}");
    let row = table.iter().find(|l| l.contains("ChaCha20-Poly1305/rustcrypto")).unwrap();
    assert!(row.ends_with("same frames as ChaCha20/rustcrypto"), "{row}");
    assert!(t.contains("  SAME ChaCha20/rustcrypto"), "{t}");
    let host: Vec<&str> = t.lines().filter(|l| l.contains("host-only:")).collect();
    assert_eq!(host.len(), 1, "{t}");
    for id in ["AES-128-GCM/openssl", "ChaCha20-Poly1305/openssl", "AES-128-CCM/wolfssl"] {
        assert!(host[0].contains(id), "{}", host[0]);
        assert!(!t.contains(&format!("OUT  {id}")), "{t}");
    }
    // The tie list and the chart leave the folded twin out too.
    assert!(!t.lines().any(|l| l.starts_with("choice:") && l.contains("ChaCha20/rustcrypto")), "{t}");
    assert!(!html(&rep).contains(">ChaCha20/rustcrypto</text>"));
}

/// Builds whose images are for other boards only (the ESP8266's C images on an nRF52840) are one
/// line naming the boards, not one OUT line each; the JSON keeps them. A CCM* entry the link has
/// no suite for is out for that reason with its own tag, not as "no integrity".
#[test]
fn other_boards_builds_are_one_line_and_ccm_star_is_out_for_the_link() {
    let rep = choose(&opts("nrf52840", "BLE-1M", "1s"), None).unwrap();
    let t = text(&rep);
    let other: Vec<&str> = t.lines().filter(|l| l.contains("other boards only:")).collect();
    assert_eq!(other.len(), 1, "{t}");
    for id in ["ChaCha20-Poly1305/c", "AES-128-GCM/c", "DRACO/cpp-fast"] {
        assert!(other[0].contains(&format!("{id} (esp8266)")), "{}", other[0]);
        assert!(!t.contains(&format!("OUT  {id} ")), "{t}");
        assert!(rep.candidate(id).is_some(), "{id} stays in the report (JSON)");
    }
    assert!(html(&rep).contains("other boards only:"));
    let star8 = t.lines().find(|l| l.contains("OUT  AES-128-CCM*-8/rustcrypto")).expect("CCM*-8 listed");
    assert!(star8.contains("no link suite carries this AEAD"), "{star8}");
    assert!(star8.contains("its 64-bit tag is below --tag 128"), "{star8}");
    assert!(!star8.contains("no integrity"), "{star8}");
}

/// When nothing fits the budgets, one hint, from one candidate, that admits it: with 2300 B of
/// flash and 1000 B of RAM on the Pico, Ascon-AEAD128 (2376 B, 432 B) fails on flash alone, so
/// raising --flash to 2376 B is enough; ChaCha20-Poly1305's 1049 B of RAM is no part of it.
#[test]
fn one_joint_budget_hint_admits_a_candidate() {
    let o = Options { flash: Some("2300B".into()), ram: Some("1000B".into()), ..opts("rp2040", "LoRa-SF9", "10m") };
    let e = err(o.clone());
    assert_eq!(e.matches("admits").count(), 1, "{e}");
    assert!(e.starts_with("--flash, --ram: no candidate fits 2300 B of flash with 1000 B of RAM; --flash 2376B --ram 1000B admits Ascon-AEAD128/rustcrypto"), "{e}");
    assert!(!e.contains("1049"), "{e}");
    let hinted = Options { flash: Some("2376B".into()), ram: Some("1000B".into()), ..o };
    assert_eq!(choose(&hinted, None).unwrap().chosen, "Ascon-AEAD128/rustcrypto");
}

/// The chart's labels: the page kit places them (lwcbench_page::place_labels); on the crowded
/// camera chart every pair of label boxes (font size 10: 11 px tall, 6.2 px a character, the
/// kit's estimate) is disjoint.
#[test]
fn the_pareto_labels_do_not_overlap() {
    let o = Options {
        require: Some("any".into()),
        allow_variable_time: true,
        security: 80,
        tag: 64,
        payload: "28800B".into(),
        ..opts("esp32c3", "WiFi-n-MCS7", "1s")
    };
    let page = html(&choose(&o, None).unwrap());
    let mut boxes = Vec::new();
    for part in page.split("<text x=\"").skip(1) {
        let Some((x, rest)) = part.split_once("\" y=\"") else { continue };
        let Some((y, rest)) = rest.split_once("\" font-size=\"10\">") else { continue };
        let label = rest.split("</text>").next().unwrap();
        let (x, y): (f64, f64) = (x.parse().unwrap(), y.parse().unwrap());
        // The text's baseline is 2 px above the box's bottom (pareto.rs).
        boxes.push((label.to_string(), x, y - 9.0, label.chars().count() as f64 * 6.2, 11.0));
    }
    assert!(boxes.len() >= 10, "{} labels", boxes.len());
    for i in 0..boxes.len() {
        for j in i + 1..boxes.len() {
            let (a, b) = (&boxes[i], &boxes[j]);
            let dx = (a.1 + a.3).min(b.1 + b.3) - a.1.max(b.1);
            let dy = (a.2 + a.4).min(b.2 + b.4) - a.2.max(b.2);
            assert!(dx <= 0.11 || dy <= 0.11, "{} and {} overlap", a.0, b.0);
        }
    }
}
