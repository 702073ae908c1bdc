//! `compare` on two small synthetic runs whose differences are known by construction.
// The set-up helpers are test code too: a panic there is the test's failure report, as in
// the #[test] functions .clippy.toml already allows it in.
#![allow(clippy::unwrap_used)]
use std::path::Path;

use lwcbench_engine::results::{self, SampleRow};
use lwcbench_report::{compare::compare_runs, Run};

mod support;

fn row(imp: &str, ns: f64, rep: u32) -> SampleRow {
    SampleRow {
        cipher: "X".into(),
        implementation: imp.into(),
        language: "Rust".into(),
        family: "stream".into(),
        scenario: "full".into(),
        kiv: "s,s".into(),
        size_bits: 8,
        payload: "random".into(),
        rep,
        batch: 1,
        ns_per_op: ns,
        cycles_per_op: None,
    }
}

fn write_run(dir: &Path, rows: &[SampleRow]) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("samples.csv"), results::to_csv(rows)).unwrap();
    std::fs::write(dir.join("summary.csv"), results::to_csv(&results::summary_rows(rows))).unwrap();
    let rec = support::record(1);

    std::fs::write(dir.join("run.json"), serde_json::to_vec(&rec).unwrap()).unwrap();
}

#[test]
fn known_differences_are_found() {
    let t = tempfile::tempdir().unwrap();
    let (a, b) = (t.path().join("a"), t.path().join("b"));
    let mut ra = Vec::new();
    let mut rb = Vec::new();
    for i in 0..20u32 {
        let e = i as f64 * 0.1; // 0.0 … 1.9: medians are base + 0.95
        ra.push(row("slower", 100.0 + e, i));
        rb.push(row("slower", 200.0 + e, i));
        ra.push(row("same", 50.0 + e, i));
        rb.push(row("same", 50.0 + e, i));
        ra.push(row("faster", 80.0 + e, i));
        rb.push(row("faster", 40.0 + e, i));
        ra.push(row("gone", 10.0 + e, i));
    }
    write_run(&a, &ra);
    write_run(&b, &rb);
    let rows = compare_runs(&Run::load(&a).unwrap(), &Run::load(&b).unwrap());
    let get = |imp: &str| rows.iter().find(|r| r.implementation == imp).unwrap();
    assert_eq!(get("slower").verdict, "B slower");
    assert!((get("slower").ratio.unwrap() - 200.95 / 100.95).abs() < 1e-12);
    assert_eq!(get("faster").verdict, "B faster");
    assert!((get("faster").ratio.unwrap() - 40.95 / 80.95).abs() < 1e-12);
    assert_eq!(get("same").verdict, "no change");
    assert_eq!(get("same").ratio, Some(1.0));
    assert_eq!(get("gone").verdict, "only in A");
    assert_eq!(rows.len(), 4);
}

#[test]
fn incomplete_run_is_rejected_with_file_name() {
    let t = tempfile::tempdir().unwrap();
    let err = Run::load(t.path()).err().unwrap();
    assert!(err.contains("run.json"), "{err}");
    write_run(t.path(), &[row("x", 1.0, 0)]);
    std::fs::write(t.path().join("samples.csv"), "cipher,implementation\nX,y\n").unwrap();
    let err = Run::load(t.path()).err().unwrap();
    assert!(err.contains("samples.csv"), "{err}");
}
