use super::*;
use std::fs;
use std::time::{Duration, UNIX_EPOCH};

#[test]
fn rfc3339_known_dates() {
    assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00Z");
    // 2000-03-01 00:00:00 UTC = 951868800 (leap-year boundary), checked with `date -u -d @951868800`
    assert_eq!(rfc3339(UNIX_EPOCH + Duration::from_secs(951_868_800)), "2000-03-01T00:00:00Z");
    assert_eq!(rfc3339(UNIX_EPOCH + Duration::from_secs(1_795_000_000)), "2026-11-18T11:06:40Z");
    // `date -u -d @1795000000`
}

#[test]
fn a_killed_runs_scratch_is_beside_out_and_removed_by_the_next_run() {
    let d = std::env::temp_dir().join(format!("lwcbench-scratch-{}", std::process::id()));
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(&d).unwrap();
    let out = d.join("run");
    let s = scratch_sibling(&out).unwrap();
    assert_eq!(s.parent(), Some(d.as_path()), "beside --out, not inside it");
    // as a killed process (pid 2^22 + 1 is above pid_max's default) would leave it
    let stale = d.join(".run.lwcbench-new-4194305-0");
    fs::create_dir_all(stale.join("callgrind")).unwrap();
    fs::create_dir_all(&s).unwrap(); // ours: this pid runs, so it stays
    prepare_dir(&out, false).unwrap();
    assert!(!stale.exists(), "the dead process's scratch is gone");
    assert!(s.exists() && !out.exists());
    let _ = fs::remove_dir_all(&d);
}

fn row(imp: &str, kiv: &str, ns: f64) -> SampleRow {
    SampleRow {
        cipher: "X".into(),
        implementation: imp.into(),
        language: "Rust".into(),
        family: "stream".into(),
        scenario: "full".into(),
        kiv: kiv.into(),
        size_bits: 8,
        payload: "random".into(),
        rep: 0,
        batch: 1,
        ns_per_op: ns,
        cycles_per_op: None,
    }
}

#[test]
fn pooled_rows_and_comparisons() {
    let mut rows = Vec::new();
    for (i, kiv) in ["s,s", "r,r"].iter().enumerate() {
        for k in 0..10 {
            rows.push(row("rust-fast", kiv, 10.0 + i as f64 * 10.0 + k as f64 * 0.1));
            rows.push(row("cpp-fast", kiv, 20.0 + i as f64 * 10.0 + k as f64 * 0.1));
        }
    }
    let s = summary_rows(&rows);
    // 2 impls × 2 kiv + 2 pooled
    assert_eq!(s.len(), 6);
    let pooled = s.iter().find(|r| r.kiv == "all" && r.implementation == "rust-fast").unwrap();
    assert_eq!(pooled.n, 20);
    // rust samples: 10.0..10.9 and 20.0..20.9 → mean 15.45, hand computed
    assert!((pooled.mean_ns - 15.45).abs() < 1e-9);
    assert_eq!(pooled.ns_per_bit, Some(pooled.median_ns / 8.0));
    let c = comparison_rows(&rows);
    assert_eq!(c.len(), 2);
    let ss = c.iter().find(|r| r.kiv == "s,s").unwrap();
    // medians 10.45 and 20.45
    assert!((ss.ratio_cpp_rust - 20.45 / 10.45).abs() < 1e-9);
    assert_eq!(ss.verdict, "Rust faster");
    // the ratio's CI is positive and brackets the point estimate; the margin is stated
    assert!(ss.ratio_ci95_lo.unwrap() > 1.05 && ss.ratio_ci95_lo.unwrap() <= ss.ratio_cpp_rust);
    assert_eq!(ss.margin_pct, Some(5.0));
}

#[test]
fn samples_no_measurement_gives_are_refused_with_file_line_column() {
    let d = std::env::temp_dir().join(format!("lwcbench-read-samples-{}", std::process::id()));
    fs::create_dir_all(&d).unwrap();
    let p = d.join("samples.csv");
    let good = "X,rust-fast,Rust,stream,full,\"s,s\",8,random,0,4,12.5,30\n";
    // (batch, ns_per_op, cycles_per_op) of line 3 → the error; columns counted by hand
    for (cells, want) in [
        ("4,12.5,", None),
        ("4,1e15,1e18", None),
        ("4,12.5,0", None),
        ("4,inf,", Some("3:11: ns_per_op 'inf' is not a number of ns above 0 and at most 1e15")),
        ("4,-inf,", Some("3:11: ns_per_op '-inf' is not a number of ns above 0 and at most 1e15")),
        ("4,NaN,", Some("3:11: ns_per_op 'NaN' is not a number of ns above 0 and at most 1e15")),
        ("4,1e400,", Some("3:11: ns_per_op '1e400' is not a number of ns above 0 and at most 1e15")),
        ("4,0,", Some("3:11: ns_per_op '0' is not a number of ns above 0 and at most 1e15")),
        ("4,-3,", Some("3:11: ns_per_op '-3' is not a number of ns above 0 and at most 1e15")),
        ("4,1.1e15,", Some("3:11: ns_per_op '1.1e15' is not a number of ns above 0 and at most 1e15")),
        ("4,12.5,nan", Some("3:12: cycles_per_op 'nan' is not a number from 0 to 1e18")),
        ("4,12.5,-1", Some("3:12: cycles_per_op '-1' is not a number from 0 to 1e18")),
        ("4,12.5,2e18", Some("3:12: cycles_per_op '2e18' is not a number from 0 to 1e18")),
        ("0,12.5,", Some("3:10: batch '0' is not a count of operations above 0")),
    ] {
        let bad = format!("X,cpp-fast,C++,stream,full,\"s,s\",8,random,1,{cells}\n");
        fs::write(&p, format!("{SAMPLE_HEADER}\n{good}{bad}{good}")).unwrap();
        match (read_samples(&p), want) {
            (Ok(rows), None) => assert_eq!(rows.len(), 3, "{cells}"),
            (Err(e), Some(w)) => assert_eq!(e, format!("{}:{w}", p.display())),
            (got, _) => panic!("{cells}: {got:?}"),
        }
    }
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn summary_statistics_must_be_finite() {
    let d = std::env::temp_dir().join(format!("lwcbench-read-summary-{}", std::process::id()));
    fs::create_dir_all(&d).unwrap();
    // one group (kiv without a comma, so the cells split on ',')
    let row = summary_rows(&[row("rust-fast", "ss", 10.0), row("rust-fast", "ss", 12.0)]);
    let text = String::from_utf8(to_csv(&row)).unwrap();
    let p = d.join("summary.csv");
    fs::write(&p, &text).unwrap();
    assert_eq!(read_summary(&p).unwrap(), row);
    // median_ns is column 13 of the header
    let (head, body) = text.split_once('\n').unwrap();
    assert_eq!(head.split(',').nth(12), Some("median_ns"));
    let cells: Vec<&str> = body.trim_end().split(',').collect();
    for bad in ["NaN", "inf", "1e999"] {
        let mut c = cells.clone();
        c[12] = bad;
        fs::write(&p, format!("{head}\n{}\n", c.join(","))).unwrap();
        let e = read_summary(&p).unwrap_err();
        assert_eq!(e, format!("{}:2:13: median_ns '{bad}' is not a finite number", p.display()));
    }
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn atomic_write_leaves_no_temp() {
    let dir = std::env::temp_dir().join(format!("lwcbench-atomic-{}", std::process::id()));
    fs::create_dir_all(&dir).unwrap();
    write_atomic(&dir, "a.csv", b"x,y\n1,2\n").unwrap();
    let names: Vec<_> = fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    assert_eq!(names, vec!["a.csv".to_string()]);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn default_out_is_the_utc_time_and_name_under_lwcbench_results() {
    // 1,700,000,000 s after the epoch is 2023-11-14T22:13:20Z (date -u -d @1700000000).
    let t = UNIX_EPOCH + Duration::from_secs(1_700_000_000);
    assert_eq!(default_out(t, "quick"), std::path::PathBuf::from("lwcbench-results/2023-11-14T22-13-20Z-quick"));
}
