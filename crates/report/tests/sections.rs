//! The report finds a study's section through the study (`Study::html`): a section is on the
//! page exactly when the run directory holds the study's files, it is what the study drew, and
//! the report crate names no individual study.
// The set-up helpers are test code too: a panic there is the test's failure report, as in
// the #[test] functions .clippy.toml already allows it in.
#![allow(clippy::unwrap_used)]
use std::path::Path;

use lwcbench_engine::output::every_run_studies;
use lwcbench_engine::results::{self, RunRecord, SampleRow};
use lwcbench_engine::studies::{self, StudyRun};
use lwcbench_report::{render_html, Run};

mod support;

fn row(imp: &str, lang: &str, payload: &str, ns: f64, rep: u32) -> SampleRow {
    SampleRow {
        cipher: "X".into(),
        implementation: imp.into(),
        language: lang.into(),
        family: "stream".into(),
        scenario: "full".into(),
        kiv: "s,s".into(),
        size_bits: 64,
        payload: payload.into(),
        rep,
        batch: 1,
        ns_per_op: ns,
        cycles_per_op: None,
    }
}

fn record() -> RunRecord {
    support::record(4)
}

/// Every study file this test can make: the every-run studies' (C++/Rust pairs and
/// dataset/random pairs are in the samples), and hand-written lightweight and ICS tables.
fn study_files(samples: &[SampleRow], rec: &RunRecord) -> Vec<(String, Vec<u8>)> {
    let summary = results::summary_rows(samples);
    let mut files = every_run_studies(samples, &summary, rec).unwrap().files;
    files.push((
        studies::lightweight_rank::SCORES_FILE.into(),
        b"cipher,implementation,energy_per_byte_j_modelled,throughput_mb_s,key_schedule_ns,memory_bytes,score_energy_per_byte,score_throughput,score_key_schedule,score_memory,wsm_battery,rank_battery\nA,x,1e-9,100,10,64,1,1,1,1,1,1\n".to_vec(),
    ));
    files.push((
        studies::ics::LATENCY_FILE.into(),
        b"cipher,implementation,protocol,message,bytes,n,min_ns,p1_ns,median_ns,p99_ns,p99_9_ns,max_ns,jitter_p99_p1_ns,range_ns,clock_overhead_ns,governor,pct_of_G,p99_9_pct_of_G\nA,x,P,m,12,10,1,1,2,3,4,30000,2,29999,20,performance,1.0,0.5\n".to_vec(),
    ));
    files
}

fn write_run(dir: &Path, samples: &[SampleRow], rec: &RunRecord) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("samples.csv"), results::to_csv(samples)).unwrap();
    std::fs::write(dir.join("summary.csv"), results::to_csv(&results::summary_rows(samples))).unwrap();
    std::fs::write(dir.join("run.json"), serde_json::to_vec(rec).unwrap()).unwrap();
}

fn page(dir: &Path) -> String {
    String::from_utf8(render_html(dir).unwrap()).unwrap()
}

/// The `<h2 …>…</h2>` a section starts with.
fn heading(sec: &str) -> &str {
    let end = sec.find("</h2>").expect("a section starts with its heading") + 5;
    &sec[..end]
}

#[test]
fn a_study_section_is_drawn_by_the_study_where_its_files_are() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("run");
    let mut samples = Vec::new();
    for i in 0..20u32 {
        let e = f64::from(i);
        samples.push(row("rust-ref", "Rust", "random", 100.0 + e, i));
        samples.push(row("cpp-ref", "C++", "random", 300.0 + e, i));
        samples.push(row("rust-ref", "Rust", "dataset:office", 100.0 + e, i));
    }
    let rec = record();
    write_run(&dir, &samples, &rec);

    // No study file: no study section, no contents entry beyond the cipher.
    let bare = page(&dir);
    for id in ["cpp-rust", "dataset", "lightweight", "ics", "stream-study"] {
        assert!(!bare.contains(&format!("id=\"{id}\"")), "{id} without its files");
    }
    assert!(!bare.contains("href=\"#cpp-rust\""));

    // Every file: each study with files there has its section on the page, as the study drew
    // it (its heading and its last table; figure numbers depend on what precedes it).
    let files = study_files(&samples, &rec);
    for (name, bytes) in &files {
        std::fs::write(dir.join(name), bytes).unwrap();
    }
    let full = page(&dir);
    let run = Run::load(&dir).unwrap();
    let srun = StudyRun { dir: &run.dir, record: &run.record, samples: &run.samples, summary: &run.summary };
    let mut drawn = Vec::new();
    for s in studies::ALL {
        let sec = s.html(&srun, &mut 0).unwrap();
        if sec.is_empty() {
            continue;
        }
        assert!(srun.has_files_of(*s), "{} drew a section without its files", s.name());
        assert!(full.contains(heading(&sec)), "{}: {}", s.name(), heading(&sec));
        let table = &sec[sec.rfind("<table").unwrap()..];
        assert!(full.contains(table), "{}: its table is not on the page", s.name());
        drawn.push(s.name());
    }
    assert_eq!(
        drawn,
        [studies::draco::NAME, studies::sensor::NAME, studies::lightweight_rank::NAME, studies::ics::NAME],
        "the studies whose files the test wrote, in list order"
    );
    assert!(full.contains("<li><a href=\"#cpp-rust\">C++ against Rust</a></li>"), "the DRACO study's contents entry");
    // Sections follow the study list: C++/Rust, dataset, lightweight, ICS.
    let at = |id: &str| full.find(&format!("<h2 id=\"{id}\"")).unwrap();
    assert!(at("cpp-rust") < at("dataset") && at("dataset") < at("lightweight") && at("lightweight") < at("ics"));

    // One study's file only: that study's section only.
    for (name, _) in &files {
        std::fs::remove_file(dir.join(name)).unwrap();
    }
    std::fs::write(dir.join(studies::ics::LATENCY_FILE), &files.iter().find(|f| f.0 == "ics-latency.csv").unwrap().1)
        .unwrap();
    let one = page(&dir);
    assert!(one.contains("<h2 id=\"ics\">"));
    for id in ["cpp-rust", "dataset", "lightweight", "stream-study"] {
        assert!(!one.contains(&format!("id=\"{id}\"")), "{id} without its files");
    }
}

/// The report names no study: no study module path and no study name constant in
/// crates/report/src (a section is the study's, found through `studies::ALL`).
#[test]
fn the_report_crate_names_no_study() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let studies_dir = root.join("../engine/src/studies");
    let modules: Vec<String> = std::fs::read_dir(&studies_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        // a study is a file, or a folder with its mod.rs (lightweight_rank, stream_study)
        .filter(|p| p.extension().is_some_and(|x| x == "rs") || p.join("mod.rs").is_file())
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .filter(|m| m != "mod" && m != "study")
        .collect();
    assert!(modules.len() >= 8, "{modules:?}");
    let mut checked = 0;
    for e in std::fs::read_dir(root.join("src")).unwrap() {
        let p = e.unwrap().path();
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(!text.contains("::NAME"), "{} uses a study name constant", p.display());
        // every path after `studies::`, plain or in a `{…}` group
        for (i, _) in text.match_indices("studies::") {
            let rest = &text[i + "studies::".len()..];
            let names: Vec<&str> = match rest.strip_prefix('{') {
                Some(g) => g[..g.find('}').unwrap()].split(',').map(|n| n.trim().split("::").next().unwrap()).collect(),
                None => vec![rest.split(|c: char| !c.is_alphanumeric() && c != '_').next().unwrap()],
            };
            for n in names {
                assert!(!modules.iter().any(|m| m == n), "{} names the study module {n}", p.display());
            }
        }
        checked += 1;
    }
    assert!(checked >= 5);
}

/// Text read from the run's files reaches the page escaped, in the per-cipher figures and in the
/// study sections alike: a hostile scenario, cipher and payload name in samples.csv (and from
/// there in comparison.csv and the dataset tables) leave no tag. Before the scenario was
/// escaped, the figure captions and tables printed it as it was.
#[test]
fn text_from_the_files_is_escaped_everywhere() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("run");
    let hostile = "<script>alert(1)</script>";
    let mut samples = Vec::new();
    for i in 0..20u32 {
        let e = f64::from(i);
        for r in [
            row("rust-ref", "Rust", "random", 100.0 + e, i),
            row("cpp-ref", "C++", "random", 300.0 + e, i),
            row("rust-ref", "Rust", &format!("dataset:{hostile}"), 100.0 + e, i),
        ] {
            samples.push(SampleRow { scenario: hostile.into(), cipher: format!("X{hostile}"), ..r });
        }
    }
    let rec = record();
    write_run(&dir, &samples, &rec);
    for (name, bytes) in study_files(&samples, &rec) {
        std::fs::write(dir.join(name), bytes).unwrap();
    }
    let html = page(&dir);
    assert!(html.contains("id=\"cpp-rust\"") && html.contains("id=\"dataset\""), "both study sections drawn");
    assert!(!html.to_lowercase().contains("<script"), "a tag from a file reached the page");
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
}
