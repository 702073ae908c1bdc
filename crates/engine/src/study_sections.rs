//! The published-figures section of a run: the study of the run's preset gives it
//! ([`crate::studies::Study::published`]) from the run's rows; Markdown while the run is written,
//! HTML for a finished run directory. Above the studies (it dispatches to them), as the writers
//! of a run are.

use std::path::Path;

use crate::published::{to_html, to_markdown, Ours, Section};
use crate::results::{read_csv_in, SampleRow};
use crate::studies::ics as ics_study;
use crate::studies::sensor::{self, dataset_vs_random};
use crate::studies::stream_study::{self, StreamStudyRow};

/// The section for a run's preset, or None where the preset reproduces no study: the study
/// of that name says ([`crate::studies::Study::published`]).
pub fn section(o: &Ours) -> Option<Section> {
    let preset = o.preset?;
    crate::studies::ALL.iter().find(|s| s.name() == preset)?.published(o)
}

/// The Markdown section for a run being written (empty where the preset reproduces no study).
pub fn markdown(o: &Ours) -> String {
    section(o).map(|s| to_markdown(&s)).unwrap_or_default()
}

/// [`markdown`] for a run being written: the study files come from the files the study hands
/// to the writer (the stream study's and the ICS study's tables); the sensor tables come from
/// the samples.
pub fn markdown_for_run(preset: Option<&str>, samples: &[SampleRow], files: &[(&str, Vec<u8>)]) -> String {
    // The sensor tables only where the section shows them (they bootstrap).
    let (t1, t2) = if preset == Some(sensor::NAME) { dataset_vs_random(samples) } else { Default::default() };
    let file =
        |name: &str| files.iter().find(|(n, _)| *n == name).map(|(_, b)| String::from_utf8_lossy(b).into_owned());
    let stream: Vec<StreamStudyRow> = file(stream_study::FILE)
        .map(|t| csv::Reader::from_reader(t.as_bytes()).deserialize().flatten().collect())
        .unwrap_or_default();
    let ics = file(ics_study::LATENCY_FILE);
    markdown(&Ours { preset, t1: &t1, t2: &t2, stream: &stream, ics_csv: ics.as_deref() })
}

/// The HTML section for a run being reported (empty where the preset reproduces no study).
pub fn html(o: &Ours) -> String {
    section(o).map(|s| to_html(&s)).unwrap_or_default()
}

/// [`html`] for a finished run directory: the study files are read from it (the sensor tables
/// from the files the sensor study wrote, where the section shows them).
pub fn html_for_dir(preset: Option<&str>, dir: &Path) -> Result<String, String> {
    let (t1, t2) = if preset == Some(sensor::NAME) {
        (read_csv_in(dir, sensor::TABLE1_FILE)?, read_csv_in(dir, sensor::TABLE2_FILE)?)
    } else {
        Default::default()
    };
    let stream: Vec<StreamStudyRow> = read_csv_in(dir, stream_study::FILE)?;
    let ics = std::fs::read_to_string(dir.join(ics_study::LATENCY_FILE)).ok();
    Ok(html(&Ours { preset, t1: &t1, t2: &t2, stream: &stream, ics_csv: ics.as_deref() }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::study_rows::Table1Row;

    #[test]
    fn sections_per_preset_and_escaping() {
        let o = |p: &'static str| Ours { preset: Some(p), t1: &[], t2: &[], stream: &[], ics_csv: None };
        let md = markdown(&o("sensor-study"));
        assert!(md.contains("282891.40") && md.contains("282850.21") && md.contains("HFT Stuttgart"), "{md}");
        let md = markdown(&o("stream-study"));
        assert!(md.contains("| Mickey-v1 | MICKEY-2.0 | 80 | 1.50 |") && md.contains("Kendall"), "{md}");
        assert!(md.contains("internal inconsistencies") && md.contains("ctypes"), "{md}");
        let csv = "cipher,pct_of_GOOSE-1A-trip,p99_9_pct_of_GOOSE-1A-trip\nx,1.5,0.5\ny,2.25,0.25\n";
        let ics = Ours { preset: Some("ics-latency"), t1: &[], t2: &[], stream: &[], ics_csv: Some(csv) };
        let md = markdown(&ics);
        assert!(md.contains("| GOOSE-1A-trip | < 7.1 % | 2.250 % | 0.500 % |"), "{md}");
        assert!(markdown(&o("quick")).is_empty());
        // Ours beside the published Table 1 (µs from ns), the Rust reference preferred.
        let row = |imp: &str, payload: &str, mean: f64| Table1Row {
            cipher: "DRACO".into(),
            implementation: imp.into(),
            scenario: "full".into(),
            size_bits: 22_464,
            payload: payload.into(),
            n: 400,
            mean_ns: mean,
            median_ns: mean,
            sd_ns: 1.0,
            min_ns: mean,
            max_ns: mean,
            ratio_dataset_random: 1.0,
            mann_whitney_p: 0.5,
            verdict: String::new(),
            ratio_ci95_lo: 1.0,
            ratio_ci95_hi: 1.0,
            margin_pct: 5.0,
        };
        let t1 = [
            row("cpp-ref", "dataset:office", 9e6),
            row("rust-ref", "dataset:office", 1_234_560.0),
            row("rust-ref", "random", 7_000_000.0),
        ];
        let md = markdown(&Ours { preset: Some("sensor-study"), t1: &t1, t2: &[], stream: &[], ics_csv: None });
        assert!(md.contains("| mean | 282891.40 | 282871.50 | 1234.56 | 7000.00 |"), "{md}");
        let h = html(&o("sensor-study"));
        assert!(h.contains("&lt;s,s&gt;") && !h.contains("<s,s>"), "{h}");
    }
}
