//! What a study's report section is drawn with ([`crate::studies::Study::html`]): the page
//! kit's escaping and charts (`lwcbench-page`, re-exported here so a study names one module),
//! and the study tables read back from CSV. Everything read from a file goes through [`esc`].
use std::path::Path;

pub use lwcbench_page::{bars_ci, esc, radar};

/// The index of a column by its header.
pub fn col(headers: &[String], name: &str) -> Option<usize> {
    headers.iter().position(|h| h == name)
}

/// A cell as a number (NaN where it is none).
pub fn num(v: &str) -> f64 {
    v.parse().unwrap_or(f64::NAN)
}

/// A CSV file of a study as text: its header and rows (None where it is missing or has no
/// header; unreadable rows are skipped). Print every cell through [`esc`].
pub fn read_table(path: &Path) -> Option<(Vec<String>, Vec<Vec<String>>)> {
    let mut r = csv::Reader::from_path(path).ok()?;
    let headers: Vec<String> = r.headers().ok()?.iter().map(str::to_string).collect();
    let rows: Vec<Vec<String>> =
        r.records().filter_map(Result::ok).map(|rec| rec.iter().map(str::to_string).collect()).collect();
    Some((headers, rows))
}
