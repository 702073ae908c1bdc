//! Studies: the extra tables a preset derives from (or measures next to) its timing samples —
//! e.g. the stream-cipher resource table with Rank/E-Rank, or the ICS latency budget table.
//! A preset names at most one study; the session calls it after the measurement loop and
//! writes the files it returns atomically with the others (before `run.json`), and appends
//! its Markdown to `summary.md`. One module per study lives beside this file.
use std::path::PathBuf;

pub mod aes_libs;
pub mod ics;
pub mod lightweight_rank;
pub mod stream_study;

use crate::results::{RunRecord, SampleRow, SummaryRow};
use crate::runner::GroupResult;

/// Options a study may read; set from the command line or the Python bindings.
#[derive(Clone, Debug, Default)]
pub struct StudyOptions {
    /// Device power profile: a built-in name (see [`crate::power`]) or a CSV file.
    pub power_profile: Option<String>,
    /// Measured or assumed active power in watts; overrides the profile's figure.
    pub watts: Option<f64>,
    /// Extra inputs by name (e.g. a video file); each study documents what it reads.
    pub inputs: Vec<(String, PathBuf)>,
    /// Extra latency budgets `(name, milliseconds)` for the ICS study (`--budget NAME=MS`).
    pub budgets: Vec<(String, f64)>,
    /// WSM weightings for the lightweight ranking: "battery", "speed" or a CSV file
    /// (`--weights`); None = both built-in weightings.
    pub weights: Option<String>,
}

/// What a study sees.
pub struct StudyInput<'a> {
    /// The study options of the run (`--power-profile`, `--weights`, `--budget`, …).
    pub options: &'a StudyOptions,
    pub results: &'a [GroupResult],
    pub samples: &'a [SampleRow],
    pub summary: &'a [SummaryRow],
    pub record: &'a RunRecord,
}

/// What a study hands back: files for the run directory, a Markdown section for
/// `summary.md`, and notes for `run.json`.
#[derive(Default)]
pub struct StudyOutput {
    pub files: Vec<(String, Vec<u8>)>,
    pub markdown: String,
    pub notes: Vec<String>,
}

/// A study's entry point. An `Err` aborts the run before any file is written.
pub type StudyFn = fn(&StudyInput) -> Result<StudyOutput, String>;
