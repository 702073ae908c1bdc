use super::render::HTML_METRICS;
use super::*;

fn row(scenario: &str, size_bits: u64, median: f64, lo: f64, hi: f64) -> SummaryRow {
    SummaryRow {
        cipher: "Trivium".into(),
        implementation: "rust".into(),
        language: "Rust".into(),
        family: "stream".into(),
        scenario: scenario.into(),
        kiv: "r,r".into(),
        size_bits,
        payload: "random".into(),
        batch: 1,
        n: 10,
        mean_ns: median,
        sd_ns: 0.0,
        median_ns: median,
        round_spread_pct: None,
        min_ns: lo,
        max_ns: hi,
        p95_ns: hi,
        p99_ns: hi,
        ci95_lo_ns: lo,
        ci95_hi_ns: hi,
        median_ci95_lo_ns: lo,
        median_ci95_hi_ns: hi,
        outliers: 0,
        median_cycles: Some(median * 3.0),
        ns_per_bit: None,
        mbit_per_s: None,
        cycles_per_bit: None,
    }
}

#[test]
fn formulas_by_hand() {
    // 65,536 bytes in 65,536 ns = 1 byte/ns = 1000 MB/s; CI 50,000–80,000 ns → 819.2–1310.72.
    let t = Est { v: 65_536.0, lo: 50_000.0, hi: 80_000.0 }.mb_per_s(65_536.0);
    assert!((t.v - 1000.0).abs() < 1e-9 && (t.lo - 819.2).abs() < 1e-9 && (t.hi - 1310.72).abs() < 1e-9);
    // ROM 1000 B, RAM 250 B → divisor 1500: rank 1000/1500 = 0.6667 (MB/s)/B.
    let r = rank(t, 1000, 250);
    assert!((r.v - 1000.0 / 1500.0).abs() < 1e-12 && (r.lo - 819.2 / 1500.0).abs() < 1e-12);
    // 1 ms at 0.75 W = 750 µJ; E-Rank = 0.6667 / 750.
    let p = PowerProfile { device: "x".into(), active_w: 0.75, source: String::new() };
    let e = energy_uj(&p, Est { v: 1e6, lo: 0.5e6, hi: 2e6 });
    assert!((e.v - 750.0).abs() < 1e-9 && (e.lo - 375.0).abs() < 1e-9 && (e.hi - 1500.0).abs() < 1e-9);
    let er = erank(r, e);
    assert!((er.v - (1000.0 / 1500.0) / 750.0).abs() < 1e-15);
    assert!((er.lo - (819.2 / 1500.0) / 1500.0).abs() < 1e-15 && (er.hi - (1310.72 / 1500.0) / 375.0).abs() < 1e-15);
    assert!(er.lo <= er.v && er.v <= er.hi);
}

#[test]
fn table_from_hand_made_summary() {
    // The table measures resident-set growth, which other test threads disturb: alone in
    // a child process.
    if !crate::resources::in_own_process("studies::stream_study::tests::table_from_hand_made_summary") {
        return;
    }
    // full: 64 KiB in 131,072 ns (500 MB/s), TSC 3 ticks/ns → 6 cycles/byte; init 2,000 ns.
    let s = vec![
        row("full", LONG_BYTES as u64 * 8, 131_072.0, 120_000.0, 140_000.0),
        row("keystream", LONG_BYTES as u64 * 8, 65_536.0, 60_000.0, 70_000.0),
        row("init", 0, 2_000.0, 1_900.0, 2_100.0),
    ];
    let p = PowerProfile { device: "Raspberry Pi Zero W".into(), active_w: 0.75, source: "s".into() };
    let t = table(&s, &p, None, None).unwrap();
    assert_eq!(t.len(), 1);
    let r = &t[0];
    assert!((r.throughput_mb_s - 500.0).abs() < 1e-9);
    assert!((r.keystream_mb_s - 1000.0).abs() < 1e-9);
    assert!((r.cycles_per_byte - 6.0).abs() < 1e-9, "{}", r.cycles_per_byte);
    assert!((r.init_us - 2.0).abs() < 1e-12);
    // Derived frame: 921,600 B at 2 ns/B = 1,843,200 ns → 542.5 frames/s, 1382.4 µJ at 0.75 W.
    assert_eq!(r.frame_bytes, FRAME_BYTES as u64);
    assert!((r.frames_per_s - 1e9 / 1_843_200.0).abs() < 1e-9);
    assert!((r.energy_per_frame_uj_modelled - 1382.4).abs() < 1e-6);
    // 2 ns/B × 0.75 W = 1.5 nJ/B.
    assert!((r.energy_per_byte_nj_modelled - 1.5).abs() < 1e-12);
    assert!(r.code_bytes > 0 && r.peak_stack_bytes > 0 && r.state_bytes == 36);
    assert_eq!(r.ram_bytes, r.state_bytes + r.peak_stack_bytes);
    assert!((r.rank_mb_s_per_byte - 500.0 / (r.code_bytes + 2 * r.ram_bytes) as f64).abs() < 1e-12);
    assert!(r.rss_growth_per_byte > 0.5 && r.rss_growth_per_byte < 2.0, "{}", r.rss_growth_per_byte);
    let md = markdown(&t, &p, None);
    assert!(
        md.contains(MD_MARKER) && md.contains("MODELLED") && md.contains("| Trivium | rust | 500 (468–546) |"),
        "{md}"
    );
}

/// `--board rp2040`: 5 V × 25 mA at 125 MHz = 1 nJ per cycle (hand), so a frame costs
/// (init + keystream over the frame) cycles in nJ and a byte the slope in nJ; DRACO/cpp-fast
/// has no image (the cycles table is the Rust images') and keeps host time × 0.125 W.
/// Rust Trivium's full/keystream/init rows and the same figures as the C++ DRACO's (cpp-fast).
fn trivium_and_cpp_draco_rows() -> Vec<SummaryRow> {
    let mut s = vec![
        row("full", LONG_BYTES as u64 * 8, 131_072.0, 120_000.0, 140_000.0),
        row("keystream", LONG_BYTES as u64 * 8, 65_536.0, 60_000.0, 70_000.0),
        row("init", 0, 2_000.0, 1_900.0, 2_100.0),
    ];
    let cpp: Vec<SummaryRow> = s
        .iter()
        .map(|r| SummaryRow {
            cipher: "DRACO".into(),
            implementation: "cpp-fast".into(),
            language: "C++".into(),
            ..r.clone()
        })
        .collect();
    s.extend(cpp);
    s
}

#[test]
fn board_energy_is_labelled_per_row() {
    if !crate::resources::in_own_process("studies::stream_study::tests::board_energy_is_labelled_per_row") {
        return;
    }
    let s = trivium_and_cpp_draco_rows();
    let b = board::find("rp2040").unwrap();
    let t = table(&s, &b.fallback_profile(), Some(&b), None).unwrap();
    let tri = t.iter().find(|r| r.cipher == "Trivium").unwrap();
    assert_eq!(tri.energy_source, "emulated:rp2040 (M0+ model, 125 MHz)");
    let c = b.cycles("Trivium", "rust").unwrap();
    let frame_cycles = c.init + c.at_16_bytes + (FRAME_BYTES as f64 - 16.0) * c.per_byte();
    assert!((tri.energy_per_frame_uj_modelled - frame_cycles * 1e-3).abs() < 1e-6 * frame_cycles * 1e-3);
    assert_eq!(tri.energy_per_frame_ci95_lo_uj_modelled, tri.energy_per_frame_uj_modelled, "exact count");
    assert!((tri.energy_per_byte_nj_modelled - c.per_byte()).abs() < 1e-9);
    let d = t.iter().find(|r| r.cipher == "DRACO" && r.implementation == "cpp-fast").unwrap();
    assert!(d.energy_source.starts_with("host-time×power (fallback: no Cortex-M0+ image"), "{}", d.energy_source);
    // 921,600 B at 2 ns/B = 1,843,200 ns × 0.125 W = 230.4 µJ (hand).
    assert!((d.energy_per_frame_uj_modelled - 230.4).abs() < 1e-9, "{}", d.energy_per_frame_uj_modelled);
    let md = markdown(&t, &b.fallback_profile(), Some(&b));
    assert!(md.contains("emulated:rp2040 (M0+ model, 125 MHz)") && md.contains("host-time×power (fallback"), "{md}");
    let h = html(&t);
    assert!(h.contains("emulated:rp2040") && h.contains("emulated cycles on a board"), "{h}");
}

/// `--board esp8266`: the C++ DRACO is priced from its LX106 rows (QEMU + the LX106 model), the
/// Rust Trivium has no LX106 image and falls back to host time × the ESP8266's power. Expected
/// figures by hand from the board's datasheet figures (3.3 V × 15 mA = 49.5 mW at 80 MHz).
#[test]
fn esp8266_prices_the_cpp_draco_from_its_lx106_rows() {
    if !crate::resources::in_own_process(
        "studies::stream_study::tests::esp8266_prices_the_cpp_draco_from_its_lx106_rows",
    ) {
        return;
    }
    let s = trivium_and_cpp_draco_rows();
    let b = board::find("esp8266").unwrap();
    let t = table(&s, &b.fallback_profile(), Some(&b), None).unwrap();
    let d = t.iter().find(|r| r.cipher == "DRACO" && r.implementation == "cpp-fast").unwrap();
    assert_eq!(d.energy_source, "emulated:esp8266 (Xtensa LX106 model, 80 MHz)");
    let c = b.cycles("DRACO", "cpp-fast").unwrap();
    let frame_cycles = c.init + c.at_16_bytes + (FRAME_BYTES as f64 - 16.0) * c.per_byte();
    // cycles / 80 MHz × 49.5 mW, in µJ
    let uj = frame_cycles / 80e6 * 0.0495 * 1e6;
    assert!((d.energy_per_frame_uj_modelled - uj).abs() < 1e-9 * uj, "{} {uj}", d.energy_per_frame_uj_modelled);
    let tri = t.iter().find(|r| r.cipher == "Trivium").unwrap();
    assert!(tri.energy_source.starts_with("host-time×power (fallback: no Xtensa LX106 image"), "{}", tri.energy_source);
    // 921,600 B at 2 ns/B = 1,843,200 ns × 0.0495 W = 91.2384 µJ (hand).
    assert!((tri.energy_per_frame_uj_modelled - 91.2384).abs() < 1e-9, "{}", tri.energy_per_frame_uj_modelled);
}

#[test]
fn a_measured_frame_scenario_wins() {
    let s = vec![
        row("full", LONG_BYTES as u64 * 8, 131_072.0, 120_000.0, 140_000.0),
        row("keystream", LONG_BYTES as u64 * 8, 65_536.0, 60_000.0, 70_000.0),
        row("init", 0, 2_000.0, 1_900.0, 2_100.0),
        SummaryRow { payload: "video:sample".into(), ..row("frame", 100_000 * 8, 1_000_000.0, 900_000.0, 1_100_000.0) },
    ];
    let p = PowerProfile { device: "d".into(), active_w: 1.0, source: "s".into() };
    let r = &table(&s, &p, None, None).unwrap()[0];
    assert_eq!(r.frame_bytes, 100_000);
    assert!((r.frames_per_s - 1000.0).abs() < 1e-9);
    assert!(r.frames_source.starts_with("measured"));
    // 1 ms at 1 W = 1000 µJ; interval 900–1100 µJ.
    assert!((r.energy_per_frame_ci95_lo_uj_modelled - 900.0).abs() < 1e-9);
}

#[test]
fn missing_scenarios_are_named() {
    let s = vec![row("full", LONG_BYTES as u64 * 8, 131_072.0, 120_000.0, 140_000.0)];
    let p = PowerProfile { device: "d".into(), active_w: 1.0, source: "s".into() };
    let e = table(&s, &p, None, None).unwrap_err();
    assert!(e.contains("no `keystream` measurement for Trivium/rust"), "{e}");
    assert!(table(&[], &p, None, None).unwrap_err().contains("no stream cipher"));
}

#[test]
fn every_stream_cipher_has_code_and_stack() {
    // A new stream cipher without code-size markers fails here.
    let bin = codesize::Binary::current().unwrap();
    let all = registry();
    for e in all.iter().filter(|e| e.info.family == Family::Stream) {
        let id = e.id();
        let cs = codesize::measure_entry(&bin, e, &all);
        assert!(
            cs.bytes > 100,
            "{id}: {} code bytes ({:?}) — give its catalogue entry code markers (`.code(&[..])`)",
            cs.bytes,
            cs.names
        );
        let st = stack_of(e).unwrap();
        assert!(st > 0 && st < STACK_DEPTH as u64, "{id}: stack {st}");
    }
}

fn study_row(name: &str, lang: &str, thr: f64) -> StreamStudyRow {
    StreamStudyRow {
        cipher: name.into(),
        implementation: "rust".into(),
        language: lang.into(),
        origin: "own code".into(),
        long_message_bytes: 65536,
        n: 30,
        throughput_mb_s: thr,
        throughput_ci95_lo_mb_s: thr * 0.9,
        throughput_ci95_hi_mb_s: thr * 1.1,
        keystream_mb_s: thr,
        keystream_ci95_lo_mb_s: thr,
        keystream_ci95_hi_mb_s: thr,
        cycles_per_byte: 3.0,
        cycles_per_byte_ci95_lo: 2.9,
        cycles_per_byte_ci95_hi: 3.1,
        cycle_source: "TSC".into(),
        init_us: 1.0,
        init_ci95_lo_us: 0.9,
        init_ci95_hi_us: 1.1,
        frame_bytes: 921600,
        frames_per_s: 1000.0,
        frames_per_s_ci95_lo: 900.0,
        frames_per_s_ci95_hi: 1100.0,
        frames_source: "derived".into(),
        code_bytes: 2000,
        code_functions: 5,
        state_bytes: 36,
        peak_stack_bytes: 200,
        ram_bytes: 236,
        rss_growth_bytes: 921600,
        rss_growth_per_byte: 1.0,
        power_device: "Raspberry Pi Zero W".into(),
        power_w: 0.75,
        energy_per_frame_uj_modelled: 750.0,
        energy_per_frame_ci95_lo_uj_modelled: 700.0,
        energy_per_frame_ci95_hi_uj_modelled: 800.0,
        energy_per_byte_nj_modelled: 0.8,
        energy_source: "host-time×power (Raspberry Pi Zero W, 0.75 W)".into(),
        rank_mb_s_per_byte: 0.4,
        rank_ci95_lo: 0.35,
        rank_ci95_hi: 0.45,
        erank_mb_s_per_byte_uj_modelled: 5e-4,
        erank_ci95_lo_modelled: 4e-4,
        erank_ci95_hi_modelled: 6e-4,
        energy_per_byte_nj_measured: None,
        energy_per_byte_u_nj_measured: None,
        energy_measured_source: None,
    }
}

/// `--energy-from`: a `full` row at the study's 64 KiB (524288 bits) fills the measured
/// columns; a cipher without one is listed. By hand: 3.2768e-3 J per 65536-byte operation
/// = 50 nJ/B, U 6.5536e-5 J = 1 nJ/B.
#[test]
fn measured_energy_beside_modelled() {
    let head = "cipher,implementation,language,scenario,kiv,size_bits,payload,batches,operations,samples_min,energy_per_op_j_measured,energy_per_op_u_j,energy_per_byte_j_measured,energy_per_byte_u_j,energy_per_op_j_total,mean_power_w,baseline_power_w,energy_source\n";
    let text = format!(
        "{head}Trivium,rust,rust,full,\"r,r\",524288,random,2,20,40,3.2768e-3,6.5536e-5,5e-8,1e-9,4e-3,0.3,0.2,measured:ina219 (shunt 0.1 Ω ±1 %)\n\
         DRACO,rust,rust,full,\"r,r\",8192,random,2,20,40,1e-5,1e-7,,,1e-5,0.3,0.2,measured:ina219 (shunt 0.1 Ω ±1 %)\n"
    );
    let m = crate::measured::MeasuredEnergy::parse(&text, Path::new("board/energy.csv")).unwrap();
    let mut rows = vec![study_row("Trivium", "Rust", 1000.0), study_row("DRACO", "C++", 200.0)];
    let notes = fill_measured(&mut rows, &m);
    assert!((rows[0].energy_per_byte_nj_measured.unwrap() - 50.0).abs() < 1e-9, "{:?}", rows[0]);
    assert!((rows[0].energy_per_byte_u_nj_measured.unwrap() - 1.0).abs() < 1e-12);
    assert_eq!(
        rows[0].energy_measured_source.as_deref(),
        Some("measured:ina219 (shunt 0.1 Ω ±1 %) from board/energy.csv line 2")
    );
    assert_eq!(rows[1].energy_per_byte_nj_measured, None);
    assert!(notes.iter().any(|n| n == "stream_study.csv: DRACO (rust) full 524288 bits: not measured (board/energy.csv: it has full at 8192 bits); modelled only"), "{notes:?}");
    let md = markdown(&rows, &power::resolve(Some(DEFAULT_DEVICE), None).unwrap(), None);
    assert!(md.contains(" nJ/B (measured ± U, k = 2) |"), "{md}");
    assert!(md.contains("| 50.00 ± 1.00 |") && md.contains("| not measured |"), "{md}");
    let page = html(&rows);
    assert!(page.contains("<td>50.00 ± 1.00</td>") && page.contains("<td>not measured</td>"), "{page}");
    // the columns survive the CSV round trip; a file from before them still loads
    let dir = std::env::temp_dir().join(format!("lwcbench-ss-measured-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(FILE), crate::results::to_csv(&rows)).unwrap();
    assert_eq!(load(&dir).unwrap(), rows);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn html_one_chart_per_metric_and_round_trip() {
    let rows = vec![study_row("Trivium", "Rust", 1000.0), study_row("DRACO", "C++", 200.0)];
    let h = html(&rows);
    assert_eq!(h.matches("<svg").count(), HTML_METRICS.len());
    assert!(h.contains("MODELLED") && h.contains("Trivium/rust: 1000.000 (95 % CI 900.000–1100.000)"), "{h}");
    let dir = std::env::temp_dir().join(format!("lwcbench-ss-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(FILE), crate::results::to_csv(&rows)).unwrap();
    assert_eq!(load(&dir).unwrap(), rows);
    std::fs::write(dir.join(FILE), "cipher\nx\n").unwrap();
    assert!(load(&dir).unwrap_err().contains(FILE));
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(html(&[]).is_empty());
}
