//! What a study is: the one trait every study implements, and the values it sees and returns.
//! A study is everything a preset adds to the ordinary measurement — its selection and
//! defaults, the options it reads, the tables it derives, their Markdown section and their
//! section of `report.html` — in one file beside this one, listed once in [`crate::studies::ALL`]. This module depends only on
//! the data types of a run, so every study can use it without depending on the others.
use std::path::Path;

use crate::plan::Selection;
use crate::power;
use crate::results::{RunRecord, SampleRow, SummaryRow};
use crate::runner::GroupResult;

/// A study option of `lwcbench run` (and the Python `lwcbench.run`). A study declares the
/// ones it reads in [`Study::options`]; giving one to a run whose study does not read it is an
/// error (it would be silently ignored).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StudyOption {
    /// `--power-profile NAME|FILE`: the device whose power models energy.
    PowerProfile,
    /// `--watts W`: active power in watts, overriding the profile's.
    Watts,
    /// `--weights battery|speed|FILE`: WSM weightings.
    Weights,
    /// `--budget NAME=MS` (repeatable): an extra latency budget.
    Budget,
    /// `--board NAME`: crypto energy from emulated cycles on a board (crate::board).
    Board,
    /// `--energy-from FILE`: a collected run's energy.csv, measured beside modelled (crate::measured).
    EnergyFrom,
}

impl StudyOption {
    /// Every study option.
    pub const ALL: [StudyOption; 6] = [
        StudyOption::PowerProfile,
        StudyOption::Watts,
        StudyOption::Weights,
        StudyOption::Budget,
        StudyOption::Board,
        StudyOption::EnergyFrom,
    ];
    /// The command-line spelling, as in error messages.
    pub fn flag(self) -> &'static str {
        match self {
            StudyOption::PowerProfile => "--power-profile",
            StudyOption::Watts => "--watts",
            StudyOption::Weights => "--weights",
            StudyOption::Budget => "--budget",
            StudyOption::Board => "--board",
            StudyOption::EnergyFrom => "--energy-from",
        }
    }
}

/// Study options as given (strings, not yet checked); the request resolver fills this from
/// the CLI or Python and hands it to the run's study ([`Study::take_options`]).
#[derive(Clone, Debug, Default)]
pub struct StudyArgs {
    /// `--power-profile`.
    pub power_profile: Option<String>,
    /// `--watts`.
    pub watts: Option<f64>,
    /// `--weights`.
    pub weights: Option<String>,
    /// `--budget NAME=MS`.
    pub budget: Vec<String>,
    /// `--board`.
    pub board: Option<String>,
    /// `--energy-from`.
    pub energy_from: Option<std::path::PathBuf>,
}

impl StudyArgs {
    /// The options given, in [`StudyOption::ALL`] order.
    pub fn given(&self) -> Vec<StudyOption> {
        StudyOption::ALL
            .into_iter()
            .filter(|o| match o {
                StudyOption::PowerProfile => self.power_profile.is_some(),
                StudyOption::Watts => self.watts.is_some(),
                StudyOption::Weights => self.weights.is_some(),
                StudyOption::Budget => !self.budget.is_empty(),
                StudyOption::Board => self.board.is_some(),
                StudyOption::EnergyFrom => self.energy_from.is_some(),
            })
            .collect()
    }
}

/// Checked study options, as the study reads them after measurement.
#[derive(Clone, Debug, Default)]
pub struct StudyOptions {
    /// Device power profile: a built-in name (see [`crate::power`]) or a CSV file.
    pub power_profile: Option<String>,
    /// Measured or assumed active power in watts; overrides the profile's figure.
    pub watts: Option<f64>,
    /// Extra latency budgets `(name, milliseconds)` for the ICS study (`--budget NAME=MS`).
    pub budgets: Vec<(String, f64)>,
    /// WSM weightings for the lightweight ranking: "battery", "speed" or a CSV file
    /// (`--weights`); None = both built-in weightings.
    pub weights: Option<String>,
    /// `--board`: crypto energy from emulated cycles on this board (crate::board).
    pub board: Option<String>,
    /// `--energy-from`: measured energy of a collected run, read and checked before measuring.
    pub energy_from: Option<crate::measured::MeasuredEnergy>,
    /// ics-latency: the "in the cycle" rows (`ics-cycle.csv`), measured by the front-end through
    /// the link crate before the run, and why rows are missing (docs/ics.md "In the cycle").
    pub in_cycle: Option<InCycle>,
}

/// The ICS study's "in the cycle" rows and notes, handed in by the front-end.
#[derive(Clone, Debug, Default)]
pub struct InCycle {
    /// `ics-cycle.csv` as written (None: no measurement could run).
    pub csv: Option<String>,
    /// One line per missing set of rows, with the reason.
    pub notes: Vec<String>,
}

/// What a study sees after measurement. `results` is empty for collected board logs.
pub struct StudyInput<'a> {
    /// The study options of the run (`--power-profile`, `--weights`, `--budget`, …).
    pub options: &'a StudyOptions,
    /// Every group's samples (empty for a collected log).
    pub results: &'a [GroupResult],
    /// The rows of samples.csv.
    pub samples: &'a [SampleRow],
    /// The rows of summary.csv.
    pub summary: &'a [SummaryRow],
    /// run.json so far.
    pub record: &'a RunRecord,
}

/// What a study hands back: files for the run directory, a Markdown section for
/// `summary.md`, and notes for `run.json`.
#[derive(Default)]
pub struct StudyOutput {
    /// Files for the run directory: (name, bytes).
    pub files: Vec<(String, Vec<u8>)>,
    /// The section for summary.md.
    pub markdown: String,
    /// Notes for run.json.
    pub notes: Vec<String>,
}

/// What a study's section of `report.html` sees: the finished run directory (the study reads
/// its [`files`](Study::files) there) and what the report loaded from it.
pub struct StudyRun<'a> {
    /// The run directory.
    pub dir: &'a Path,
    /// Its run.json.
    pub record: &'a RunRecord,
    /// Its samples.csv.
    pub samples: &'a [SampleRow],
    /// Its summary.csv.
    pub summary: &'a [SummaryRow],
}

impl StudyRun<'_> {
    /// True where the run directory holds one of the study's files: only then does the report
    /// ask the study for its section.
    pub fn has_files_of(&self, s: &dyn Study) -> bool {
        s.files().iter().any(|f| self.dir.join(f).is_file())
    }
}

/// One study. Only [`name`](Study::name), [`about`](Study::about), [`selection`](Study::selection)
/// and the defaults are required; the rest default to "nothing extra".
pub trait Study: Sync {
    /// The preset name (`--preset NAME`).
    fn name(&self) -> &'static str;
    /// One paragraph for `lwcbench presets`.
    fn about(&self) -> &'static str;
    /// What the preset measures.
    fn selection(&self) -> Selection;
    /// Repetitions per group unless `--reps` says otherwise.
    fn reps(&self) -> usize;
    /// Excluded warm-up repetitions unless `--warmup` says otherwise.
    fn warmup(&self) -> usize;
    /// The study options this study reads.
    fn options(&self) -> &'static [StudyOption] {
        &[]
    }
    /// Check the given options (only those in [`options`](Study::options) are ever given) and
    /// keep them; called before anything is measured, so a bad value fails early.
    fn take_options(&self, _given: &StudyArgs, _into: &mut StudyOptions) -> Result<(), String> {
        Ok(())
    }
    /// True for a study whose tables follow from what any run measured (the sensor study's
    /// dataset-against-random tables, the video frames, the C++/Rust comparison):
    /// [`derive`](Study::derive) then runs for every run, host or collected, not only under its
    /// preset. Such a study must return nothing where the run has nothing for it.
    fn every_run(&self) -> bool {
        false
    }
    /// The result files [`derive`](Study::derive) may write; the report finds them here.
    fn files(&self) -> &'static [&'static str] {
        &[]
    }
    /// Tables derived after measurement. An `Err` aborts the run before any file is written.
    fn derive(&self, _input: &StudyInput) -> Result<StudyOutput, String> {
        Ok(StudyOutput::default())
    }
    /// Its section of `report.html` (HTML, with `<h2 id="…">`), read from its files in
    /// `run.dir`. The report asks every study of [`crate::studies::ALL`], in that order, after
    /// the per-cipher figures, but only where the run holds one of its [`files`](Study::files).
    /// `fig` is the number of the last figure so far: add one per numbered figure. Text read
    /// from a file goes through [`crate::html::esc`]. An `Err` (a malformed file) fails the
    /// report.
    fn html(&self, _run: &StudyRun, _fig: &mut usize) -> Result<String, String> {
        Ok(String::new())
    }
    /// The section's entry in the report's contents list, `(anchor id, title)`, listed where
    /// [`html`](Study::html) is not empty; None = not listed.
    fn html_contents(&self) -> Option<(&'static str, &'static str)> {
        None
    }
    /// The published figures of the study this preset reproduces, to print beside the run's
    /// (None: it reproduces none).
    fn published(&self, _ours: &crate::published::Ours) -> Option<crate::published::Section> {
        None
    }
}

/// Read `--energy-from` now (a bad file fails before anything is measured) and keep it.
pub fn take_energy_from(given: &StudyArgs, into: &mut StudyOptions) -> Result<(), String> {
    if let Some(p) = &given.energy_from {
        into.energy_from = Some(crate::measured::MeasuredEnergy::load(p).map_err(|e| format!("--energy-from: {e}"))?);
    }
    Ok(())
}

/// Check `--power-profile`/`--watts` now (a bad profile fails before anything is measured)
/// and keep them; for the studies that model energy.
pub fn take_power_options(given: &StudyArgs, into: &mut StudyOptions) -> Result<(), String> {
    if let Some(b) = &given.board {
        // One power figure per run: the board's (emulated cycles, or host time as the fallback).
        if given.power_profile.is_some() || given.watts.is_some() {
            return Err("--board: not with --power-profile/--watts (the board's datasheet power is used)".into());
        }
        crate::board::find(b)?;
        into.board = Some(b.clone());
    }
    if given.power_profile.is_some() || given.watts.is_some() {
        power::resolve(given.power_profile.as_deref(), given.watts)?;
        into.power_profile = given.power_profile.clone();
        into.watts = given.watts;
    }
    Ok(())
}
