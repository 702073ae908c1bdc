//! Reading a result directory back (the files documented in docs/result-files.md).
use std::path::Path;

use lwcbench_engine::results::{read_samples, read_summary, RunRecord, SampleRow, SummaryRow};

/// A run as found on disk. A study's own files stay in `dir`: the study reads them for its
/// section ([`lwcbench_engine::studies::Study::html`]).
pub struct Run {
    /// `run.json`.
    pub record: RunRecord,
    /// `samples.csv`: one row per measured sample.
    pub samples: Vec<SampleRow>,
    /// `summary.csv`: one row per group.
    pub summary: Vec<SummaryRow>,
    /// Where the run was loaded from (study sections read their own files there).
    pub dir: std::path::PathBuf,
}

impl Run {
    /// Load a finished run; a missing `run.json` means the run did not complete.
    pub fn load(dir: &Path) -> Result<Run, String> {
        if !dir.is_dir() {
            return Err(format!("{}: not a directory", dir.display()));
        }
        let rj = dir.join("run.json");
        let text = std::fs::read_to_string(&rj)
            .map_err(|e| format!("{}: {e} (is this a finished lwcbench run?)", rj.display()))?;
        let record: RunRecord =
            serde_json::from_str(&text).map_err(|e| format!("{}:{}:{}: {e}", rj.display(), e.line(), e.column()))?;
        Ok(Run {
            record,
            // values that no measurement gives are refused here, before any statistic
            samples: read_samples(&dir.join("samples.csv"))?,
            summary: read_summary(&dir.join("summary.csv"))?,
            dir: dir.to_path_buf(),
        })
    }
}
