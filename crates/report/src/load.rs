//! Reading a result directory back (the files documented in docs/result-files.md).
use std::path::Path;

use lwcbench_engine::results::{ComparisonRow, RunRecord, SampleRow, SummaryRow};
use serde::de::DeserializeOwned;

/// A run as found on disk.
pub struct Run {
    pub record: RunRecord,
    pub samples: Vec<SampleRow>,
    pub summary: Vec<SummaryRow>,
    pub comparison: Vec<ComparisonRow>,
    /// Where the run was loaded from (study sections read their own files there).
    pub dir: std::path::PathBuf,
    /// stream_study.csv (empty unless the run had the stream study).
    pub stream_study: Vec<lwcbench_engine::studies::stream_study::StreamStudyRow>,
}

fn read_csv<T: DeserializeOwned>(path: &Path) -> Result<Vec<T>, String> {
    let mut r = csv::Reader::from_path(path).map_err(|e| format!("{}: {e}", path.display()))?;
    r.deserialize()
        .map(|row| {
            row.map_err(|e| {
                let line = e.position().map(|p| format!(":{}", p.line())).unwrap_or_default();
                format!("{}{line}: {e}", path.display())
            })
        })
        .collect()
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
        let comparison_path = dir.join(lwcbench_engine::studies::draco::FILE);
        Ok(Run {
            record,
            samples: read_csv(&dir.join("samples.csv"))?,
            summary: read_csv(&dir.join("summary.csv"))?,
            comparison: if comparison_path.exists() { read_csv(&comparison_path)? } else { Vec::new() },
            dir: dir.to_path_buf(),
            stream_study: crate::stream_study::load(dir)?,
        })
    }
}
