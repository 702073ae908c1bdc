//! One request through the filters, the scores and the ties; the error when nothing passes.
use serde::Serialize;

use crate::data::{Data, Facts};
use crate::filter::{judge, report_time, Candidate, Filter};
use crate::fmt;
use crate::options::{Request, Require};
use crate::score::{scores, Budgets, Criteria};
use crate::ties::place;

/// Filters, figures and ranking for one request.
#[derive(Clone, Debug, Serialize)]
pub struct Evaluation {
    /// Every candidate with its verdict.
    pub candidates: Vec<Candidate>,
    /// Ids of the passed candidates, best first.
    pub ranking: Vec<String>,
}

impl Evaluation {
    /// The first place.
    pub fn top(&self) -> Option<&Candidate> {
        self.ranking.first().and_then(|id| self.candidates.iter().find(|c| &c.id == id))
    }
    /// Ids sharing the first place.
    pub fn top_group(&self) -> Vec<String> {
        self.ranking
            .iter()
            .filter_map(|id| self.candidates.iter().find(|c| &c.id == id))
            .filter(|c| c.rank == Some(1))
            .map(|c| c.id.clone())
            .collect()
    }
}

/// Judge every candidate, then score and place the ones that passed.
pub fn evaluate(req: &Request, data: &Data, facts: &[Facts]) -> Evaluation {
    let mut cands: Vec<Candidate> = facts.iter().map(|f| judge(req, data, f)).collect();
    let passed: Vec<usize> = (0..cands.len()).filter(|&i| cands[i].passed && cands[i].figures.is_some()).collect();
    let crit: Vec<Criteria> = passed
        .iter()
        .filter_map(|&i| cands[i].figures.as_ref())
        .map(|g| Criteria {
            energy: g.energy_uj,
            battery: g.battery_days,
            latency: g.latency_ms,
            flash: g.flash_bytes as f64,
            ram: g.ram_bytes as f64,
        })
        .collect();
    let budgets = Budgets { flash: req.flash, ram: req.ram };
    let mut ranking = Vec::new();
    for p in place(&scores(&crit, &req.weights, budgets)) {
        let c = &mut cands[passed[p.index]];
        c.rank = Some(p.rank);
        c.score = Some(p.score);
        ranking.push(c.id.clone());
    }
    Evaluation { candidates: cands, ranking }
}

/// The error when nothing passes: `--interval` when candidates fail only on the schedule (with
/// the shortest report), the budget options when candidates fail only on them (with the
/// smallest figure that would fit), else the options whose filters removed the rest.
pub fn nothing_passes(req: &Request, ev: &Evaluation) -> String {
    let only = |c: &Candidate, fs: &[Filter]| !c.removed_by.is_empty() && c.removed_by.iter().all(|f| fs.contains(f));
    let quickest = ev
        .candidates
        .iter()
        .filter(|c| only(c, &[Filter::Schedule]))
        .filter_map(|c| c.figures.as_ref().map(|g| (c, g)))
        .min_by(|a, b| a.1.latency_ms.value.total_cmp(&b.1.latency_ms.value));
    if let Some((c, g)) = quickest {
        return format!(
            "--interval: {} is shorter than the quickest report: {} {}",
            fmt::secs(req.interval_s),
            c.id,
            report_time(g, req)
        );
    }
    // Every candidate breaks the region's limits (alone or with the interval): the reason of the
    // one with the least time on air, which no cipher choice can improve on much.
    let least_air = ev
        .candidates
        .iter()
        .filter(|c| c.removed_by.contains(&Filter::Region) && only(c, &[Filter::Region, Filter::Schedule]))
        .filter_map(|c| c.figures.as_ref().map(|g| (c, g)))
        .min_by(|a, b| a.1.air_time_ms.total_cmp(&b.1.air_time_ms));
    if let Some((c, g)) = least_air {
        return format!(
            "--region {}: no schedule passes: {} ({} on air in {} for the {}-byte frame of {}, one report every {})",
            req.region.as_ref().map(|r| r.name.as_str()).unwrap_or("?"),
            g.region_violations.join("; "),
            fmt::secs(g.air_time_ms / 1e3),
            lwcbench_data::physics::packets_label(g.packets),
            g.frame_bytes,
            c.id,
            fmt::secs(req.interval_s)
        );
    }
    // --require fips with no approved candidate on the board: the approved ciphers, and why
    // none of them is here (the generic list of options would not say it).
    // (A block cipher such as AES-128 is approved but carries no integrity: not counted.)
    let approved_aead = |c: &&Candidate| c.fips && !c.removed_by.contains(&Filter::Integrity);
    if req.require == Require::Fips && !ev.candidates.iter().filter(approved_aead).any(|c| c.figures.is_some()) {
        let mut approved: Vec<&str> = ev.candidates.iter().filter(approved_aead).map(|c| c.cipher.as_str()).collect();
        approved.sort_unstable();
        approved.dedup();
        return format!(
            "--require fips: no candidate approved for FIPS 140-3 has figures on {} ({}): {} {} no microcontroller image for {}",
            req.board.id,
            req.board.target,
            if approved.is_empty() { "none of the candidates".to_string() } else { approved.join(", ") },
            if approved.len() == 1 { "has" } else { "have" },
            req.board.target
        );
    }
    let budget_only: Vec<&Candidate> =
        ev.candidates.iter().filter(|c| only(c, &[Filter::Flash, Filter::Ram])).collect();
    if let Some(hint) = budget_hint(req, &budget_only) {
        return hint;
    }
    let mut opts: Vec<&str> = Vec::new();
    for c in &ev.candidates {
        if !c.removed_by.is_empty() && c.removed_by.iter().all(|f| f.tunable()) {
            for f in &c.removed_by {
                if !opts.contains(&f.option()) {
                    opts.push(f.option());
                }
            }
        }
    }
    if opts.is_empty() {
        opts.push("--board");
    }
    format!("{}: no candidate passes the filters", opts.join(", "))
}

/// One hint for budgets nothing fits: the flash and RAM of the one candidate that needs the
/// least raise of the budgets given (relative to each budget), which passes every other filter.
/// Taking the least flash and the least RAM apart could name two candidates and admit neither.
fn budget_hint(req: &Request, budget_only: &[&Candidate]) -> Option<String> {
    let raise = |need: u64, budget: Option<u64>| match budget {
        Some(b) if need > b => (need - b) as f64 / b.max(1) as f64,
        _ => 0.0,
    };
    let (c, g) = budget_only
        .iter()
        .filter_map(|c| c.figures.as_ref().map(|g| (*c, g)))
        .map(|(c, g)| (c, g, raise(g.flash_bytes, req.flash) + raise(g.ram_bytes, req.ram)))
        .min_by(|a, b| a.2.total_cmp(&b.2).then(a.1.flash_bytes.cmp(&b.1.flash_bytes)))
        .map(|(c, g, _)| (c, g))?;
    let mut given = Vec::new();
    let mut admit = Vec::new();
    for (opt, what, budget, need) in
        [("--flash", "flash", req.flash, g.flash_bytes), ("--ram", "RAM", req.ram, g.ram_bytes)]
    {
        if let Some(b) = budget {
            given.push((opt, format!("{} of {what}", fmt::bytes(b))));
            admit.push(format!("{opt} {}B", need.max(b)));
        }
    }
    Some(format!(
        "{}: no candidate fits {}; {} admits {} (flash {} B, RAM {} B), which passes every other filter",
        given.iter().map(|(o, _)| *o).collect::<Vec<_>>().join(", "),
        given.iter().map(|(_, v)| v.as_str()).collect::<Vec<_>>().join(" with "),
        admit.join(" "),
        c.id,
        g.flash_bytes,
        g.ram_bytes
    ))
}
