//! The files of a run: the measured tables (samples, warm-up, summary), the tables the
//! studies derive from them (every run's: [`Study::every_run`](crate::studies::Study::every_run); then the preset's, handed in by
//! the caller), `summary.md`, the report and `run.json` last, written through one
//! [`RunDirWriter`] so a run directory appears whole or not at all. Host runs
//! ([`crate::session`]) and collected board logs ([`crate::collect`]) both end here.
use std::io;
use std::path::Path;

use crate::markdown;
use crate::results::{
    csv_or_header, sample_rows, summary_rows, to_csv, warmup_rows, ReportRenderer, RunDirWriter, RunRecord, SampleRow,
    SummaryRow, SAMPLE_HEADER,
};
use crate::runner::GroupResult;
use crate::studies::{self, StudyInput, StudyOptions, StudyOutput};

/// Write all files of a run; `run.json` last; `report.html` too when a renderer is given.
pub fn write_run(
    dir: &Path,
    results: &[GroupResult],
    record: &mut RunRecord,
    extra: &[(&str, Vec<u8>)],
    extra_md: &str,
    report: Option<ReportRenderer>,
) -> std::io::Result<()> {
    write_rows(dir, &sample_rows(results), &warmup_rows(results), record, extra, extra_md, report)
}

/// The files and the Markdown of the studies derived from every run ([`Study::every_run`](crate::studies::Study::every_run)), in
/// [`crate::studies::ALL`] order. They see the sample rows only (no [`GroupResult`]s), so a
/// collected run gets exactly the tables a host run gets.
pub fn every_run_studies(
    samples: &[SampleRow],
    summary: &[SummaryRow],
    record: &RunRecord,
) -> Result<StudyOutput, String> {
    let options = StudyOptions::default();
    let input = StudyInput { options: &options, results: &[], samples, summary, record };
    let mut all = StudyOutput::default();
    for s in studies::ALL.iter().filter(|s| s.every_run()) {
        let o = s.derive(&input)?;
        all.files.extend(o.files);
        all.markdown += &o.markdown;
        all.notes.extend(o.notes);
    }
    Ok(all)
}

/// `summary.md` without the preset study's section: the summary table and the sections of the
/// studies derived from every run (for a directory that has none, `lwcbench report`).
pub fn summary_markdown(samples: &[SampleRow], summary: &[SummaryRow], record: &RunRecord) -> Result<String, String> {
    Ok(markdown::summary_markdown(summary) + &every_run_studies(samples, summary, record)?.markdown)
}

/// [`write_run`] from sample rows that did not come from the runner (`lwcbench collect`).
pub fn write_rows(
    dir: &Path,
    samples: &[SampleRow],
    warm: &[SampleRow],
    record: &mut RunRecord,
    extra: &[(&str, Vec<u8>)],
    extra_md: &str,
    report: Option<ReportRenderer>,
) -> std::io::Result<()> {
    let summary = summary_rows(samples);
    let derived = every_run_studies(samples, &summary, record).map_err(io::Error::other)?;
    record.notes.extend(derived.notes);
    let mut md = markdown::summary_markdown(&summary);
    md += &derived.markdown;
    md += extra_md;
    md += &crate::study_sections::markdown_for_run(record.preset.as_deref(), samples, extra);
    let mut files: Vec<(&str, Vec<u8>)> = vec![
        ("samples.csv", csv_or_header(samples, SAMPLE_HEADER)),
        ("warmup.csv", csv_or_header(warm, SAMPLE_HEADER)),
        ("summary.csv", to_csv(&summary)),
    ];
    files.extend(derived.files.iter().map(|(n, b)| (n.as_str(), b.clone())));
    files.push(("summary.md", md.into_bytes()));
    files.extend(extra.iter().map(|(n, b)| (*n, b.clone())));
    let mut w = RunDirWriter::begin(dir)?;
    for (name, bytes) in &files {
        w.add(name, bytes)?;
    }
    record.files = files
        .iter()
        .map(|(n, _)| n.to_string())
        .chain(report.map(|_| "report.html".to_string()))
        .chain(["run.json".to_string()])
        .collect();
    let json = serde_json::to_vec_pretty(record).expect("record serialises");
    w.add("run.json", &json)?;
    // The report is rendered from the unit as it will be (its run.json already lists it).
    if let Some(render) = report {
        let html = render(w.stage()).map_err(io::Error::other)?;
        w.add("report.html", &html)?;
    }
    w.commit()
}
