//! Ties: candidates whose score intervals overlap under the error model share a place.
use crate::figures::Span;

/// A place in the ranking: `rank` is shared by ties (1, 1, 3, …).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Placed {
    /// Index into the scored items.
    pub index: usize,
    /// 1-based place, shared by ties.
    pub rank: usize,
    /// The item's score.
    pub score: Span,
}

/// Sorted by nominal score (index breaks exact equality); a candidate is tied with the leader of
/// the current group while its best case (lo) is not worse than the leader's worst case (hi).
/// The group is measured from its leader, so a chain of small steps does not merge distant ones.
pub fn place(scores: &[Span]) -> Vec<Placed> {
    let mut placed: Vec<Placed> =
        scores.iter().enumerate().map(|(i, s)| Placed { index: i, rank: 0, score: *s }).collect();
    placed.sort_by(|a, b| a.score.value.total_cmp(&b.score.value).then(a.index.cmp(&b.index)));
    let mut leader = 0;
    for i in 0..placed.len() {
        if i == 0 || placed[i].score.lo > placed[leader].score.hi {
            leader = i;
        }
        placed[i].rank = leader + 1;
    }
    placed
}
