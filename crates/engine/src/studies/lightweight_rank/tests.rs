use super::*;
use std::path::Path;

#[test]
fn normalisation_by_hand() {
    // cost: min / x → 2/2, 2/4, 2/8; benefit: x / max → 2/8, 4/8, 8/8
    assert_eq!(normalise(&[2.0, 4.0, 8.0], false), vec![1.0, 0.5, 0.25]);
    assert_eq!(normalise(&[2.0, 4.0, 8.0], true), vec![0.25, 0.5, 1.0]);
}

#[test]
fn wsm_and_ranks_by_hand() {
    // Two alternatives, criteria already normalised.
    // A = [1, 0.5, 1, 0.25], B = [0.5, 1, 0.5, 1]
    // battery [0.5,0.1,0.2,0.2]: A = 0.5+0.05+0.2+0.05 = 0.80; B = 0.25+0.1+0.1+0.2 = 0.65
    // speed [0.1,0.5,0.3,0.1]:   A = 0.1+0.25+0.3+0.025 = 0.675; B = 0.05+0.5+0.15+0.1 = 0.80
    let a = [1.0, 0.5, 1.0, 0.25];
    let b = [0.5, 1.0, 0.5, 1.0];
    let bw = builtin_weightings();
    assert!((wsm(&a, &bw[0].w) - 0.80).abs() < 1e-12);
    assert!((wsm(&b, &bw[0].w) - 0.65).abs() < 1e-12);
    assert!((wsm(&a, &bw[1].w) - 0.675).abs() < 1e-12);
    assert!((wsm(&b, &bw[1].w) - 0.80).abs() < 1e-12);
    // Unnormalised weights are divided by their sum: [1,1,0,0] on A = (1 + 0.5) / 2.
    assert!((wsm(&a, &[1.0, 1.0, 0.0, 0.0]) - 0.75).abs() < 1e-12);
    assert_eq!(ranks(&[0.80, 0.65]), vec![1, 2]);
    assert_eq!(ranks(&[0.675, 0.80, 0.7]), vec![3, 1, 2]);
    assert_eq!(ranks(&[0.5, 0.5]), vec![1, 2], "ties keep input order");
}

#[test]
fn rr_pct_by_hand() {
    // 150 ns against AES's 100 ns = 150 %; 50 ns = 50 %.
    assert_eq!(rr_pct(150.0, 100.0), 150.0);
    assert_eq!(rr_pct(50.0, 100.0), 50.0);
}

#[test]
fn weights_files_parse_or_name_the_problem() {
    let w = parse_weights("weighting,energy_per_byte,throughput,key_schedule,memory\nmine,1,2,3,4\n", "w.csv").unwrap();
    assert_eq!(w, vec![Weighting { name: "mine".into(), w: [1.0, 2.0, 3.0, 4.0] }]);
    let e = parse_weights("weighting,energy_per_byte,throughput,key_schedule\nx,1,2,3\n", "w.csv").unwrap_err();
    assert!(e.contains("missing column 'memory'"), "{e}");
    let e =
        parse_weights("weighting,energy_per_byte,throughput,key_schedule,memory\nx,1,a,3,4\n", "w.csv").unwrap_err();
    assert_eq!(e, "w.csv: line 2, column 'throughput': 'a' is not a number");
    let e =
        parse_weights("weighting,energy_per_byte,throughput,key_schedule,memory\nx,0,0,0,0\n", "w.csv").unwrap_err();
    assert!(e.contains("sum to 0"), "{e}");
    assert!(parse_weights("weighting,energy_per_byte,throughput,key_schedule,memory\nx,-1,0,0,1\n", "w.csv")
        .unwrap_err()
        .contains("≥ 0"));
    assert_eq!(resolve_weights(Some("Speed")).unwrap()[0].name, "speed");
    assert!(resolve_weights(Some("/no/such/file")).unwrap_err().starts_with("--weights"));
}

/// The preset with few repetitions into a fresh temporary directory `tag`, with `given` options.
fn run_preset(tag: &str, given: super::super::study::StudyArgs) -> (std::path::PathBuf, crate::results::RunRecord) {
    let p = crate::studies::find("lightweight-study").expect("preset");
    let mut req = crate::session::Request::from_preset(p);
    req.config.reps = 3;
    req.config.warmup = 1;
    req.config.min_sample_ns = 2_000.0;
    p.take_options(&given, &mut req.study_options).unwrap();
    let dir = std::env::temp_dir().join(format!("lwcbench-lw-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    req.out = Some(dir.clone());
    let out = crate::session::run(&req, |_, _, _| {}).expect("run");
    (dir, out.record)
}

#[test]
fn preset_end_to_end_writes_every_column() {
    let (dir, record) = run_preset("e2e", Default::default());
    assert!(record.notes.iter().any(|n| n.contains("MODELLED")));
    // Every study cipher is in the scores, every cell filled.
    let (header, rows) = read_csv(&dir.join("lightweight-scores.csv"));
    let (header, rows): (Vec<&str>, Vec<Vec<&str>>) = (
        header.iter().map(|s| s.as_str()).collect(),
        rows.iter().map(|r| r.iter().map(|s| s.as_str()).collect()).collect(),
    );
    assert_eq!(header.len(), 11 + 2 * 2, "4 raw + 4 scores + energy source + 2 per weighting");
    assert_eq!(rows.len(), 8);
    for c in CIPHERS {
        let name = c.split('/').next().unwrap();
        assert!(rows.iter().any(|r| r[0] == name), "{name} missing");
    }
    for r in &rows {
        assert_eq!(r.len(), header.len());
        assert!(r.iter().all(|v| !v.is_empty()), "empty cell in {r:?}");
    }
    // Both weightings rank 1..=8.
    for w in ["rank_battery", "rank_speed"] {
        let c = header.iter().position(|h| *h == w).unwrap();
        let mut rk: Vec<usize> = rows.iter().map(|r| r[c].parse().unwrap()).collect();
        rk.sort();
        assert_eq!(rk, (1..=8).collect::<Vec<_>>());
    }
    // Metrics: 8 ciphers × (keysetup + 4 sizes × {encrypt, decrypt}) rows; AES-128's RR% is 100.
    let (mh, body) = read_csv(&dir.join("lightweight-metrics.csv"));
    let (mh, body): (Vec<&str>, Vec<Vec<&str>>) = (
        mh.iter().map(|s| s.as_str()).collect(),
        body.iter().map(|r| r.iter().map(|s| s.as_str()).collect()).collect(),
    );
    let rr = mh.iter().position(|h| *h == "rr_pct_vs_aes128").unwrap();
    let src = mh.iter().position(|h| *h == "energy_source").unwrap();
    assert!(body.iter().all(|r| r[src] == "host-time×power (ESP32, 0.2244 W)"), "no --board: host time × ESP32");
    assert_eq!(body.len(), 8 * 9);
    for r in &body {
        assert_eq!(r.len(), mh.len());
        assert!(!r[rr].is_empty(), "RR% for {r:?}");
        if r[0] == "AES-128" {
            assert_eq!(r[rr].parse::<f64>().unwrap(), 100.0);
        }
        // the measured columns are filled by --energy-from only
        let measured = |h: &str| h.ends_with("_measured") || h == "energy_measured_source";
        for (v, h) in r.iter().zip(&mh) {
            if measured(h) {
                assert!(v.is_empty(), "{h} without --energy-from in {r:?}");
            } else if r[3] != "keysetup" {
                assert!(!v.is_empty(), "empty {h} in {r:?}");
            }
        }
    }
    assert!(std::fs::read_to_string(dir.join("lightweight-rank.md")).unwrap().contains("WSM battery"));
    let _ = std::fs::remove_dir_all(&dir);
}

fn read_csv(p: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let mut rd = csv::Reader::from_path(p).unwrap();
    let h = rd.headers().unwrap().iter().map(str::to_string).collect();
    (h, rd.records().map(|r| r.unwrap().iter().map(str::to_string).collect()).collect())
}

/// `--board rp2040` (5 V × 25 mA at 125 MHz = 1 nJ per cycle, by hand): keysetup and
/// encrypt rows of the eight ciphers from their images' emulated cycles, decrypt rows (no
/// image of decryption) from host time × 0.125 W, each row labelled.
#[test]
fn board_labels_every_energy_row() {
    let given = super::super::study::StudyArgs { board: Some("rp2040".into()), ..Default::default() };
    let (dir, record) = run_preset("board", given);
    assert!(record.notes.iter().any(|n| n.contains("emulated cycles of the cipher's image on rp2040")));
    let (h, body) = read_csv(&dir.join("lightweight-metrics.csv"));
    let col = |n: &str| h.iter().position(|x| x == n).unwrap();
    let (sc, by, e, src) =
        (col("scenario"), col("message_bytes"), col("energy_per_op_j_modelled"), col("energy_source"));
    let b = crate::board::find("rp2040").unwrap();
    assert_eq!(body.len(), 8 * 9);
    for r in &body {
        let c = b.cycles(&r[0], &r[1]).unwrap_or_else(|| panic!("{}/{} has an M0+ image", r[0], r[1]));
        let j: f64 = r[e].parse().unwrap();
        match r[sc].as_str() {
            "keysetup" => {
                assert_eq!(r[src], "emulated:rp2040 (M0+ model, 125 MHz)");
                assert!((j - c.init * 1e-9).abs() < 1e-9 * c.init * 1e-9, "{r:?}");
            }
            "encrypt" => {
                assert_eq!(r[src], "emulated:rp2040 (M0+ model, 125 MHz)");
                let bytes: f64 = r[by].parse().unwrap();
                assert!((j - c.message(bytes) * 1e-9).abs() < 1e-6 * j, "{r:?}");
            }
            _ => assert!(
                r[src].starts_with("host-time×power (fallback: no Cortex-M0+ image; 0.125 W of rp2040)"),
                "{r:?}"
            ),
        }
    }
    let (sh, srows) = read_csv(&dir.join("lightweight-scores.csv"));
    let s = sh.iter().position(|x| x == "energy_source").unwrap();
    assert!(srows.iter().all(|r| r[s] == "emulated:rp2040 (M0+ model, 125 MHz)"), "{srows:?}");
    let md = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(md.contains("| energy source |") && md.contains("emulated:rp2040"), "{md}");
    let page = html(&dir, &mut 0);
    assert!(page.contains("<td class=\"l\">emulated:rp2040 (M0+ model, 125 MHz)</td>"), "{page}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--energy-from` with one measured row, XTEA encrypt at 16 B: 5 µJ per operation ± 0.08 µJ
/// (k = 2) in the metrics file, 5e-6 / 16 = 3.125e-7 J per byte ± 5e-9 J in summary.md; every
/// other row modelled only and listed (20, then a count).
#[test]
fn measured_energy_beside_modelled() {
    let xtea = lwcbench_catalog::registry().iter().find(|e| e.info.name == "XTEA").expect("XTEA").info.implementation;
    let file = std::env::temp_dir().join(format!("lwcbench-lw-energy-{}.csv", std::process::id()));
    std::fs::write(
        &file,
        format!("cipher,implementation,language,scenario,kiv,size_bits,payload,batches,operations,samples_min,energy_per_op_j_measured,energy_per_op_u_j,energy_per_byte_j_measured,energy_per_byte_u_j,energy_per_op_j_total,mean_power_w,baseline_power_w,energy_source\n\
                 XTEA,{xtea},rust,encrypt,\"s,s\",128,random,2,2000,20,5e-6,8e-8,3.125e-7,5e-9,9e-6,0.45,0.2,measured:ina219 (shunt 0.1 Ω ±1 %)\n"),
    )
    .unwrap();
    let given = super::super::study::StudyArgs { energy_from: Some(file.clone()), ..Default::default() };
    let (dir, record) = run_preset("measured", given);
    let (h, body) = read_csv(&dir.join("lightweight-metrics.csv"));
    let col = |n: &str| h.iter().position(|x| x == n).unwrap();
    let (sc, by, e, u, src) = (
        col("scenario"),
        col("message_bytes"),
        col("energy_per_op_j_measured"),
        col("energy_per_op_u_j_measured"),
        col("energy_measured_source"),
    );
    let mut hit = 0;
    for r in &body {
        if r[0] == "XTEA" && r[sc] == "encrypt" && r[by] == "16" {
            assert_eq!((r[e].as_str(), r[u].as_str()), ("0.000005", "0.00000008"), "{r:?}");
            assert_eq!(r[src], format!("measured:ina219 (shunt 0.1 Ω ±1 %) from {} line 2", file.display()));
            hit += 1;
        } else {
            assert!(r[e].is_empty() && r[u].is_empty() && r[src].is_empty(), "{r:?}");
        }
    }
    assert_eq!(hit, 1);
    let listed = record.notes.iter().filter(|n| n.contains(": not measured (")).count();
    assert_eq!(listed, MISSES_LISTED, "{:?}", record.notes);
    let more = format!("lightweight-metrics.csv: … and {} more rows not measured", body.len() - 1 - MISSES_LISTED);
    assert!(record.notes.contains(&more), "{:?}", record.notes);
    let md = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(md.contains("energy/byte (measured ± U, k = 2) |") && md.contains("| 3.125e-7 ± 5.0e-9 J |"), "{md}");
    assert_eq!(md.matches("| not measured |").count(), 7, "{md}");
    // The report's table: the same measured cell, 5e-6 / 16 B ± 8e-8 / 16 B.
    let mut fig = 0;
    let h = html(&dir, &mut fig);
    assert!(h.contains("<th>energy/byte (measured ± U, k = 2)</th>"), "{h}");
    assert!(h.contains("<td>3.125e-7 ± 5.0e-9 J (16 B)</td>"), "{h}");
    assert_eq!(h.matches("<td>not measured</td>").count(), 7, "{h}");
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_file(&file);
}

/// A bad --energy-from fails before anything is measured, naming file, line and column.
#[test]
fn bad_energy_from_is_refused_early() {
    let p = crate::studies::find("lightweight-study").expect("preset");
    let mut into = Default::default();
    let given =
        super::super::study::StudyArgs { energy_from: Some("/nonexistent/energy.csv".into()), ..Default::default() };
    let e = p.take_options(&given, &mut into).unwrap_err();
    assert!(e.starts_with("--energy-from: /nonexistent/energy.csv: "), "{e}");
}

/// The report section from a hand-written scores file: two radar figures, the table with
/// one WSM and rank column per weighting.
#[test]
fn html_reads_the_scores_file() {
    let dir = std::env::temp_dir().join(format!("lwcbench-lw-html-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    assert_eq!(html(&dir, &mut 0), "", "no file, no section");
    std::fs::write(
        dir.join(SCORES_FILE),
        "cipher,implementation,energy_per_byte_j_modelled,throughput_mb_s,key_schedule_ns,memory_bytes,score_energy_per_byte,score_throughput,score_key_schedule,score_memory,wsm_battery,rank_battery\nA,x,1e-9,100,10,64,1,1,1,1,1,1\nB<i>,y,2e-9,50,20,128,0.5,0.5,0.5,0.5,0.5,2\n",
    )
    .unwrap();
    let mut fig = 0;
    let lw = html(&dir, &mut fig);
    assert_eq!(fig, 2, "two radar figures");
    assert!(lw.contains("<th>WSM battery</th>") && lw.contains("<td>0.500</td><td>2</td>"), "{lw}");
    assert!(lw.contains("B&lt;i&gt;") && !lw.contains("B<i>"), "cells escaped");
    let _ = std::fs::remove_dir_all(&dir);
}
