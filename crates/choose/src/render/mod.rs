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

/// `n` or `n=` (shared with a tie) or `-` (not ranked); a candidate folded into another's row
/// (crate::fold) does not make a tie of its own.
pub(crate) fn rank_label(c: &Candidate, rep: &Report) -> String {
    let shown = |o: &&Candidate| !crate::fold::is_folded(o, rep);
    match c.rank {
        Some(r) if rep.candidates.iter().filter(shown).filter(|o| o.rank == Some(r)).count() > 1 => format!("{r}="),
        Some(r) => r.to_string(),
        None => "-".into(),
    }
}

/// The candidates tied with the chosen one, folded ones left out.
pub(crate) fn ties(rep: &Report) -> Vec<&str> {
    rep.ties_with_chosen
        .iter()
        .filter(|id| rep.candidate(id).is_some_and(|c| !crate::fold::is_folded(c, rep)))
        .map(String::as_str)
        .collect()
}

/// "same frames as X" for the candidates folded into `c`'s row (empty when none).
pub(crate) fn same_frames(c: &Candidate, rep: &Report) -> String {
    let under: Vec<&str> = crate::fold::folded_under(c, rep)
        .into_iter()
        .filter(|o| crate::fold::is_folded(o, rep))
        .map(|o| o.id.as_str())
        .collect();
    if under.is_empty() {
        String::new()
    } else {
        format!("same frames as {}", under.join(", "))
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
