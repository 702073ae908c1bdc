//! Studies: everything a preset adds to the ordinary measurement — its selection and defaults,
//! the options it reads, the tables it derives from (or measures next to) the timing samples,
//! their Markdown section and their section of `report.html` — one file per study, each
//! implementing [`Study`] ([`study`]), listed once in [`ALL`]. `lwcbench presets`,
//! `--preset NAME`, the option checks of the request resolver, the run writer
//! ([`crate::output`]) and the report (which asks each study for its section) all go through
//! this list.
pub mod aes_libs;
pub mod draco;
pub mod ics;
pub mod lightweight_rank;
pub mod quick;
pub mod sensor;
pub mod stream_study;
pub mod study;
pub mod video;

pub use study::{InCycle, Study, StudyArgs, StudyInput, StudyOption, StudyOptions, StudyOutput, StudyRun};

/// Every study, in `lwcbench presets` order. Adding a study = its file + one line here.
pub static ALL: &[&dyn Study] = &[
    &self::quick::Quick,
    &self::draco::Draco,
    &self::sensor::Sensor,
    &self::video::Video,
    &self::lightweight_rank::Lightweight,
    &self::ics::Ics,
    &self::stream_study::StreamStudy,
    &self::aes_libs::AesLibs,
];

/// The study of a preset name (case-insensitive).
pub fn find(name: &str) -> Option<&'static dyn Study> {
    ALL.iter().copied().find(|s| s.name().eq_ignore_ascii_case(name))
}

/// The preset `lwcbench run` uses without arguments: the DRACO study where DRACO is built,
/// else `quick`.
pub fn default_study() -> &'static dyn Study {
    let has_draco = lwcbench_catalog::registry().iter().any(|e| e.info.name == "DRACO");
    find(if has_draco { self::draco::NAME } else { self::quick::NAME }).expect("built-in study")
}

/// The names of the studies that read an option, in [`ALL`] order.
pub fn reading(o: StudyOption) -> Vec<&'static str> {
    ALL.iter().filter(|s| s.options().contains(&o)).map(|s| s.name()).collect()
}

impl std::fmt::Debug for dyn Study {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
