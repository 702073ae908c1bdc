//! Where samples come from. Every source of timed samples is a [`Measurer`]: this process
//! ([`InProcess`], the loop in `runner`) and each external engine process
//! (`external::Offered`). The session hands the plan to [`measure_all`], which gives every
//! group to the first source that takes it; nothing above this module asks which kind of
//! source timed a group, and no catalogue entry pretends to be constructible when it is not
//! (an engine's entry has no constructor: `Entry::make` is `None`).
//!
//! Board logs (`collect`) and the link's devices (`crates/link`) produce samples that were
//! already taken elsewhere; they enter one level lower, at the result rows
//! (`output::write_rows`), the same writer every run ends in.
use std::collections::HashMap;

use crate::plan::{Group, Kiv};
use crate::runner::{measure_rounds, Config, GroupResult, TWIN_MARK};

/// What one source measured.
pub struct Measured {
    /// Aligned with the clusters it was given: each group's result, or `None` where the group
    /// was skipped.
    pub results: Vec<Vec<Option<GroupResult>>>,
    /// One line per skipped group (it is named in run.json and on stderr).
    pub skipped: Vec<String>,
}

/// One source of samples.
pub trait Measurer {
    /// Does this source time `g`?
    fn takes(&self, g: &Group) -> bool;
    /// May groups that differ only in payload be measured sample by sample in turn, and the
    /// clusters in interleaved rounds (runner::measure_rounds)? A source that times a group
    /// in one request (an engine process) says no: each of its groups is a cluster of one.
    fn interleaves(&self) -> bool;
    /// Measure `clusters` (only groups this source takes). `progress(g, n)`: `n` more samples
    /// of `g` are done or given up. A failing group is either skipped (a line in
    /// [`Measured::skipped`]) or ends the run (`Err`), as the source decides.
    fn measure(
        &mut self,
        clusters: &[Vec<&Group>],
        cfg: &Config,
        progress: &mut dyn FnMut(&Group, u64),
    ) -> Result<Measured, String>;
}

/// This process: every group whose implementation it can construct. A failing group ends
/// the run (a built-in cipher refusing its input is a bug to see, not a row to drop).
pub struct InProcess;

impl Measurer for InProcess {
    fn takes(&self, g: &Group) -> bool {
        g.entry.in_process()
    }
    fn interleaves(&self) -> bool {
        true
    }
    fn measure(
        &mut self,
        clusters: &[Vec<&Group>],
        cfg: &Config,
        progress: &mut dyn FnMut(&Group, u64),
    ) -> Result<Measured, String> {
        let rs = measure_rounds(clusters, cfg, cfg.rounds, |g| progress(g, 1)).map_err(|e| e.to_string())?;
        Ok(Measured { results: rs.into_iter().map(|c| c.into_iter().map(Some).collect()).collect(), skipped: vec![] })
    }
}

/// Measure every group of the plan with the first source that takes it, sources in the order
/// given (each source's groups together). Results keep the plan's order; `None` = skipped.
/// A group no source takes is an error before anything is measured.
pub fn measure_all(
    groups: &[Group],
    sources: &mut [&mut dyn Measurer],
    cfg: &Config,
    progress: &mut dyn FnMut(&Group, u64),
) -> Result<(Vec<Option<GroupResult>>, Vec<String>), String> {
    // clusters[s] = the clusters of source s, as plan indices
    let mut clusters: Vec<Vec<Vec<usize>>> = vec![Vec::new(); sources.len()];
    let mut by_key: Vec<HashMap<(String, String, Kiv, usize), usize>> = vec![HashMap::new(); sources.len()];
    for (i, g) in groups.iter().enumerate() {
        let s = sources.iter().position(|m| m.takes(g)).ok_or_else(|| {
            format!("{}: no measurer takes this group (neither built in nor offered by an engine)", g.label())
        })?;
        if !sources[s].interleaves() {
            clusters[s].push(vec![i]);
            continue;
        }
        match by_key[s].entry(payload_free_label(g)) {
            std::collections::hash_map::Entry::Occupied(e) => clusters[s][*e.get()].push(i),
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(clusters[s].len());
                clusters[s].push(vec![i]);
            }
        }
    }
    let mut results: Vec<Option<GroupResult>> = (0..groups.len()).map(|_| None).collect();
    let mut skipped = Vec::new();
    for (src, cs) in sources.iter_mut().zip(&clusters) {
        if cs.is_empty() {
            continue;
        }
        let refs: Vec<Vec<&Group>> = cs.iter().map(|c| c.iter().map(|&i| &groups[i]).collect()).collect();
        let m = src.measure(&refs, cfg, progress)?;
        if m.results.len() != cs.len() || m.results.iter().zip(cs).any(|(r, c)| r.len() != c.len()) {
            return Err("internal error: a measurer returned results that do not match its groups".into());
        }
        for (c, rs) in cs.iter().zip(m.results) {
            for (&i, r) in c.iter().zip(rs) {
                results[i] = r;
            }
        }
        skipped.extend(m.skipped);
    }
    Ok((results, skipped))
}

/// A group's identity without its payload (and without a twin's mark, so an A/A twin is
/// measured sample by sample in turn with its original): cipher, implementation, scenario,
/// key/IV variant, size.
fn payload_free_label(g: &Group) -> (String, String, Kiv, usize) {
    let id = g.entry.id();
    let id = id.split(TWIN_MARK).next().unwrap_or(&id).to_string();
    (id, g.scenario.to_string(), g.kiv, g.size_bits)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{expand, Scenario, Selection};

    /// A source that records what it was given and skips every group.
    struct Recorder {
        take_size: usize,
        seen: Vec<Vec<usize>>,
    }
    impl Measurer for Recorder {
        fn takes(&self, g: &Group) -> bool {
            g.size_bits == self.take_size
        }
        fn interleaves(&self) -> bool {
            false
        }
        fn measure(
            &mut self,
            clusters: &[Vec<&Group>],
            cfg: &Config,
            progress: &mut dyn FnMut(&Group, u64),
        ) -> Result<Measured, String> {
            self.seen = clusters.iter().map(|c| c.iter().map(|g| g.size_bits).collect()).collect();
            let mut skipped = Vec::new();
            for c in clusters {
                for g in c {
                    progress(g, (cfg.reps + cfg.warmup) as u64);
                    skipped.push(format!("{}: skipped by the recorder", g.label()));
                }
            }
            Ok(Measured { results: clusters.iter().map(|c| c.iter().map(|_| None).collect()).collect(), skipped })
        }
    }

    fn plan() -> Vec<Group> {
        let sel = Selection {
            ciphers: vec!["ChaCha20".into()],
            scenarios: vec![Scenario::Full],
            sizes_bits: vec![64, 128],
            kivs: vec![Kiv::parse("ss").unwrap()],
            ..Default::default()
        };
        expand(&sel).unwrap()
    }

    /// The first source that takes a group gets it; the rest go on; results keep the plan's
    /// order, with the skipped group empty and its samples counted as given up.
    #[test]
    fn groups_go_to_the_first_source_that_takes_them() {
        let groups = plan();
        assert_eq!(groups.iter().map(|g| g.size_bits).collect::<Vec<_>>(), [64, 128]);
        let mut rec = Recorder { take_size: 128, seen: vec![] };
        let mut inp = InProcess;
        let cfg = Config { reps: 3, warmup: 1, min_sample_ns: 1.0, ..Default::default() };
        let mut done: HashMap<usize, u64> = HashMap::new();
        let (rs, skipped) = measure_all(&groups, &mut [&mut rec, &mut inp], &cfg, &mut |g, n| {
            *done.entry(g.size_bits).or_default() += n
        })
        .unwrap();
        assert_eq!(rec.seen, vec![vec![128]]);
        assert_eq!(rs[0].as_ref().map(|r| r.samples.len()), Some(3));
        assert!(rs[1].is_none());
        assert_eq!(skipped.len(), 1);
        assert!(skipped[0].contains("128"), "{skipped:?}");
        assert_eq!(done.get(&64), Some(&4));
        assert_eq!(done.get(&128), Some(&4));
    }

    /// A group nobody takes is refused with its label, before anything is measured.
    #[test]
    fn a_group_no_source_takes_is_an_error() {
        let groups = plan();
        let mut rec = Recorder { take_size: 128, seen: vec![] };
        let e = match measure_all(&groups, &mut [&mut rec], &Config::default(), &mut |_, _| {}) {
            Err(e) => e,
            Ok(_) => panic!("a group without a source was accepted"),
        };
        assert!(e.contains("no measurer takes this group"), "{e}");
        assert!(rec.seen.is_empty(), "measured before refusing");
    }

    /// An engine's entry has no constructor; the in-process source does not take it, and if
    /// handed one anyway it refuses with a message instead of panicking.
    #[test]
    fn an_entry_from_elsewhere_is_refused_not_constructed() {
        let mut g = plan().remove(0);
        g.entry = lwcbench_catalog::Entry::elsewhere(g.entry.info);
        assert!(!InProcess.takes(&g));
        let cfg = Config { reps: 1, warmup: 0, min_sample_ns: 1.0, ..Default::default() };
        let e = match InProcess.measure(&[vec![&g]], &cfg, &mut |_, _| {}) {
            Err(e) => e,
            Ok(_) => panic!("measured an implementation it cannot construct"),
        };
        assert!(e.contains("no in-process implementation"), "{e}");
    }
}
