//! Reports from result directories: a self-contained HTML page (inline SVG, no scripts, no
//! network), a Markdown summary, and the comparison of two runs.
pub mod compare;
pub mod html;
mod load;
pub mod rank;
pub mod svg;

pub use load::Run;

use std::path::{Path, PathBuf};

/// Write `report.html` and `summary.md` into a run directory (atomically). Returns the HTML path.
pub fn write_report(dir: &Path) -> Result<PathBuf, String> {
    let run = Run::load(dir)?;
    let html = html::render(&run);
    let md = lwcbench_engine::markdown::summary_markdown(&run.summary, &run.comparison);
    lwcbench_engine::results::write_atomic(dir, "summary.md", md.as_bytes()).map_err(|e| format!("{}: {e}", dir.display()))?;
    lwcbench_engine::results::write_atomic(dir, "report.html", html.as_bytes()).map_err(|e| format!("{}: {e}", dir.display()))
}
