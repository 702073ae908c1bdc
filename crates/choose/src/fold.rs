//! Folding for people: a candidate that sends the same frames as another is one row, the
//! library builds that run only on a host are one line, and so are the builds whose images
//! are for other boards only. The JSON keeps every candidate; the
//! text and HTML answers fold.
use crate::filter::{Candidate, Filter};
use crate::report::Report;

/// Candidates that are another candidate's construction byte for byte: (id, the same as, why).
pub const SAME_AS: &[(&str, &str, &str)] = &[(
    "ChaCha20/rustcrypto",
    "ChaCha20-Poly1305/rustcrypto",
    "the link's ChaCha20 + Poly1305 composition is RFC 8439's ChaCha20-Poly1305 byte for byte (crates/link/src/wire/suite.rs tests it)",
)];

/// The candidate `c` is listed under (and why), when that one is also a candidate here.
pub fn same_as<'a>(c: &Candidate, rep: &'a Report) -> Option<(&'a Candidate, &'static str)> {
    SAME_AS.iter().find(|(id, _, _)| *id == c.id).and_then(|(_, to, why)| rep.candidate(to).map(|t| (t, *why)))
}

/// The candidates listed under `c`.
pub fn folded_under<'a>(c: &Candidate, rep: &'a Report) -> Vec<&'a Candidate> {
    rep.candidates.iter().filter(|o| same_as(o, rep).is_some_and(|(t, _)| t.id == c.id)).collect()
}

/// True when `c`'s row goes into another's: it is the same construction as a candidate with at
/// least its verdict (a ranked one, or an unranked one when `c` is not ranked either).
pub fn is_folded(c: &Candidate, rep: &Report) -> bool {
    same_as(c, rep).is_some_and(|(t, _)| t.rank.is_some() || c.rank.is_none())
}

/// A library build with no microcontroller image on any board (removed by the image filter):
/// it runs on a host only.
pub fn host_only(c: &Candidate) -> bool {
    c.removed_by.contains(&Filter::Image)
        && !lwcbench_data::board::cycles_table()
            .iter()
            .any(|k| k.cipher == c.cipher && k.implementation == c.implementation)
}

/// The host-only candidates of the answer, in catalogue order.
pub fn host_only_ids(rep: &Report) -> Vec<&str> {
    rep.candidates.iter().filter(|c| host_only(c)).map(|c| c.id.as_str()).collect()
}

/// The one line that stands for the host-only candidates (None when there are none).
pub fn host_only_line(rep: &Report) -> Option<String> {
    let ids = host_only_ids(rep);
    (!ids.is_empty()).then(|| {
        format!(
            "host-only: {} library builds have no microcontroller image on any board, so none runs on {}: {}",
            ids.len(),
            rep.board.id,
            ids.join(", ")
        )
    })
}

/// A build with microcontroller images for other boards but none for this one (removed by the
/// image filter): the other boards' ids, else None.
pub fn elsewhere_only(c: &Candidate, rep: &Report) -> Option<Vec<String>> {
    if !c.removed_by.contains(&Filter::Image) {
        return None;
    }
    let mut boards: Vec<String> = lwcbench_data::board::cycles_table()
        .iter()
        .filter(|k| k.cipher == c.cipher && k.implementation == c.implementation && k.board != rep.board.id)
        .map(|k| k.board.clone())
        .collect();
    boards.sort();
    boards.dedup();
    (!boards.is_empty()).then_some(boards)
}

/// The one line that stands for the builds with images for other boards only (None when there
/// are none).
pub fn elsewhere_only_line(rep: &Report) -> Option<String> {
    let rows: Vec<String> = rep
        .candidates
        .iter()
        .filter_map(|c| elsewhere_only(c, rep).map(|b| format!("{} ({})", c.id, b.join(", "))))
        .collect();
    (!rows.is_empty()).then(|| {
        format!(
            "other boards only: {} builds have microcontroller images for other boards but none for {} ({}): {}",
            rows.len(),
            rep.board.id,
            rep.board.target,
            rows.join(", ")
        )
    })
}
