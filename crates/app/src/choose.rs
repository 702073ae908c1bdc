//! `choose`: the ranked, explained answer for a board, a radio and a requirement
//! ([`lwcbench_choose`]), with its optional answer directory.
use std::path::Path;

use lwcbench_choose::{self as ch, Options, Report};

/// The answer for `o`; with `out`, also its files there, all or none (an earlier answer is
/// replaced only with `force`, and refused before any work). Returns the answer and the names
/// of the files written.
pub fn answer(o: &Options, out: Option<&Path>, force: bool) -> Result<(Report, Vec<&'static str>), String> {
    if let Some(dir) = out {
        ch::check_out(dir, force)?;
    }
    let shown = out.map(|p| p.display().to_string());
    let rep = ch::choose(o, shown.as_deref())?;
    let written = match out {
        Some(dir) => ch::write_out(dir, &rep, force)?,
        None => Vec::new(),
    };
    Ok((rep, written))
}
