//! The files of a run: the measured tables (samples, warm-up, summary, comparison), the
//! tables derived from them, `summary.md`, the report and `run.json` last, written through one
//! [`RunDirWriter`] so a run directory appears whole or not at all. Host runs
//! ([`crate::session`]) and collected board logs ([`crate::collect`]) both end here.
use std::io;
use std::path::Path;

use crate::results::{
    comparison_rows, csv_or_header, sample_rows, summary_rows, to_csv, warmup_rows, RunDirWriter, RunRecord, SampleRow,
    COMPARISON_HEADER, REPORT_RENDERER, SAMPLE_HEADER,
};
use crate::runner::GroupResult;
use crate::{markdown, published, tables};

/// Write all files of a run; `run.json` last.
pub fn write_run(
    dir: &Path,
    results: &[GroupResult],
    record: &mut RunRecord,
    extra: &[(&str, Vec<u8>)],
    extra_md: &str,
) -> std::io::Result<()> {
    write_rows(dir, &sample_rows(results), &warmup_rows(results), record, extra, extra_md)
}

/// [`write_run`] from sample rows that did not come from the runner (`lwcbench collect`).
pub fn write_rows(
    dir: &Path,
    samples: &[SampleRow],
    warm: &[SampleRow],
    record: &mut RunRecord,
    extra: &[(&str, Vec<u8>)],
    extra_md: &str,
) -> std::io::Result<()> {
    let (samples, warm) = (samples.to_vec(), warm.to_vec());
    let summary = summary_rows(&samples);
    let comparison = comparison_rows(&samples);
    let (t1, t2) = tables::dataset_vs_random(&samples);
    let mut md = markdown::summary_markdown(&summary, &comparison);
    md += &tables::markdown(&t1, &t2);
    md += extra_md;
    md += &published::markdown_for_run(record.preset.as_deref(), &t1, &t2, extra);
    let mut files = vec![
        ("samples.csv", csv_or_header(&samples, SAMPLE_HEADER)),
        ("warmup.csv", csv_or_header(&warm, SAMPLE_HEADER)),
        ("summary.csv", to_csv(&summary)),
        ("comparison.csv", csv_or_header(&comparison, COMPARISON_HEADER)),
        ("summary.md", md.into_bytes()),
    ];
    if !t1.is_empty() {
        files.push(("table1_dataset_vs_random.csv", to_csv(&t1)));
        files.push(("table2_dataset_vs_random.csv", to_csv(&t2)));
    }
    files.extend(extra.iter().map(|(n, b)| (*n, b.clone())));
    let renderer = REPORT_RENDERER.get();
    let mut w = RunDirWriter::begin(dir)?;
    for (name, bytes) in &files {
        w.add(name, bytes)?;
    }
    record.files = files
        .iter()
        .map(|(n, _)| n.to_string())
        .chain(renderer.map(|_| "report.html".to_string()))
        .chain(["run.json".to_string()])
        .collect();
    let json = serde_json::to_vec_pretty(record).expect("record serialises");
    w.add("run.json", &json)?;
    // The report is rendered from the unit as it will be (its run.json already lists it).
    if let Some(render) = renderer {
        let html = render(w.stage()).map_err(io::Error::other)?;
        w.add("report.html", &html)?;
    }
    w.commit()
}
