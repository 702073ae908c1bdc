//! One renderer per format over the typed [`crate::Report`]: text (stdout), JSON (`--json`,
//! Python), HTML (`--out DIR/choose.html`).
pub mod html;
pub mod json;
pub mod text;

use crate::filter::Candidate;
use crate::report::Report;
use crate::robust::Robust;

/// The first place of a robustness row; under some changes (a slower radio for a large frame)
/// no candidate passes.
pub(crate) fn first_place(r: &Robust) -> String {
    if r.top_group.is_empty() {
        "none passes".into()
    } else {
        r.top_group.join(" = ")
    }
}

/// `n` or `n=` (shared with a tie) or `-` (not ranked).
pub(crate) fn rank_label(c: &Candidate, all: &[Candidate]) -> String {
    match c.rank {
        Some(r) if all.iter().filter(|o| o.rank == Some(r)).count() > 1 => format!("{r}="),
        Some(r) => r.to_string(),
        None => "-".into(),
    }
}

/// What the weights rank on, for the answer's header: flash and RAM only against a budget.
pub(crate) fn weights_line(rep: &Report) -> String {
    let w = &rep.weights;
    let budget = |b: Option<u64>, name: &str, wt: f64| match b {
        Some(b) => format!("{name} {wt} (against {})", crate::fmt::bytes(b)),
        None => format!("{name} not ranked (no --{name} budget)"),
    };
    format!(
        "energy {} battery {} latency {} {} {}",
        w.energy,
        w.battery,
        w.latency,
        budget(rep.request.flash_bytes, "flash", w.flash),
        budget(rep.request.ram_bytes, "ram", w.ram)
    )
}
