//! Scoring: each passed candidate's weighted score with its interval under the error model.
//! Energy, latency and battery count as a ratio to the best candidate; flash and RAM only
//! against the budget the user gave (a size is no cost on its own: 849 B of RAM on a chip with
//! 400 KB is not "6× worse" than 140 B).
use crate::figures::Span;
use crate::options::Weights;

/// The criteria the ranking reads (energy, latency: cost with interval; battery: benefit).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Criteria {
    /// Energy per message.
    pub energy: Span,
    /// Battery life.
    pub battery: Span,
    /// Latency of one report.
    pub latency: Span,
    /// Flash bytes.
    pub flash: f64,
    /// RAM bytes.
    pub ram: f64,
}

/// The budgets flash and RAM rank against (None: not ranked).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Budgets {
    /// `--flash`.
    pub flash: Option<u64>,
    /// `--ram`.
    pub ram: Option<u64>,
}

/// Weighted score of every item (lower is better): the weighted mean of energy and latency as
/// value ÷ best, battery as best ÷ value, and flash and RAM as 1 + used ÷ budget (1 = nothing
/// used, 2 = the whole budget) where a budget is given; without one their weight is 0.
/// The interval takes each criterion at its own interval ends.
pub fn scores(items: &[Criteria], w: &Weights, budgets: Budgets) -> Vec<Span> {
    let min = |f: &dyn Fn(&Criteria) -> f64| items.iter().map(f).fold(f64::INFINITY, f64::min);
    let best_e = min(&|c| c.energy.value);
    let best_l = min(&|c| c.latency.value);
    let best_b = items.iter().map(|c| c.battery.value).fold(0.0, f64::max);
    let ratio = |v: f64, best: f64| if best > 0.0 { v / best } else { 1.0 };
    // A budget of 0 bytes admits only a 0-byte image: its share is then 0.
    let share = |used: f64, budget: Option<u64>| match budget {
        Some(b) if b > 0 => 1.0 + used / b as f64,
        _ => 1.0,
    };
    let (wf, wr) =
        (if budgets.flash.is_some() { w.flash } else { 0.0 }, if budgets.ram.is_some() { w.ram } else { 0.0 });
    let total = w.energy + w.battery + w.latency + wf + wr;
    let score = |c: &Criteria, pick: &dyn Fn(&Span) -> f64, inv: &dyn Fn(&Span) -> f64| {
        (w.energy * ratio(pick(&c.energy), best_e)
            + w.latency * ratio(pick(&c.latency), best_l)
            + w.battery * if inv(&c.battery) > 0.0 { best_b / inv(&c.battery) } else { f64::INFINITY }
            + wf * share(c.flash, budgets.flash)
            + wr * share(c.ram, budgets.ram))
            / total
    };
    items
        .iter()
        .map(|c| Span {
            value: score(c, &|s| s.value, &|s| s.value),
            lo: score(c, &|s| s.lo, &|s| s.hi),
            hi: score(c, &|s| s.hi, &|s| s.lo),
        })
        .collect()
}
