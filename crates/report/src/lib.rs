//! Reports from result directories: a self-contained HTML page (inline SVG, no scripts, no
//! network), a Markdown summary, and the comparison of two runs.
pub mod compare;
pub mod html;
mod load;
pub mod rank;
pub mod stream_study;
pub mod svg;

pub use load::Run;

use std::path::{Path, PathBuf};

/// Write `report.html` and `summary.md` into a run directory (atomically). Returns the HTML path.
pub fn write_report(dir: &Path) -> Result<PathBuf, String> {
    let run = Run::load(dir)?;
    let html = html::render(&run);
    let mut md = lwcbench_engine::markdown::summary_markdown(&run.summary, &run.comparison);
    // Keep a study's section (written by the run, after its marker) when rewriting summary.md.
    let marker = lwcbench_engine::studies::stream_study::MD_MARKER;
    if let Some(tail) = std::fs::read_to_string(dir.join("summary.md")).ok().and_then(|old| old.find(marker).map(|i| old[i..].to_string())) {
        md.push('\n');
        md += &tail;
    }
    lwcbench_engine::results::write_atomic(dir, "summary.md", md.as_bytes()).map_err(|e| format!("{}: {e}", dir.display()))?;
    lwcbench_engine::results::write_atomic(dir, "report.html", html.as_bytes()).map_err(|e| format!("{}: {e}", dir.display()))
}
