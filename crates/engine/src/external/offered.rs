//! The engines of one run: the catalogue entries they offer, and the engines as a source of
//! samples ([`crate::measurer::Measurer`]).
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use lwcbench_catalog::Entry;

use super::{Engine, MAX_QUOTE};
use crate::plan::{Group, Scenario};
use crate::runner::{Config, GroupResult};

/// The engines of one run and the catalogue entries they offer; part of a
/// [`crate::plan::Selection`].
#[derive(Clone, Default)]
pub struct Offered {
    engines: Vec<Arc<Mutex<Engine>>>,
    /// Entry id (lower case) → index into `engines`.
    owner: BTreeMap<String, usize>,
    entries: Vec<Entry>,
}

impl std::fmt::Debug for Offered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.entries.iter().map(|e| e.id())).finish()
    }
}

impl Offered {
    /// Start every engine; an engine that cannot start is left out and its one-line reason
    /// returned, so the caller can say so and carry on.
    pub fn start(specs: &[String]) -> (Offered, Vec<String>) {
        let mut o = Offered::default();
        let mut failed = Vec::new();
        for s in specs {
            match Engine::start(s).and_then(|e| o.add(e)) {
                Ok(()) => {}
                Err(e) => failed.push(format!("{e}; its rows are off")),
            }
        }
        (o, failed)
    }

    /// Add a started engine; its entry ids must not clash with the catalogue's or another
    /// engine's.
    pub fn add(&mut self, e: Engine) -> Result<(), String> {
        let reg: Vec<String> = lwcbench_catalog::registry().iter().map(|e| e.id().to_lowercase()).collect();
        let entries = e.entries();
        for en in &entries {
            let id = en.id().to_lowercase();
            if reg.contains(&id) || self.owner.contains_key(&id) {
                return Err(format!("engine {}: {} is already provided by another implementation", e.spec, en.id()));
            }
        }
        let i = self.engines.len();
        for en in &entries {
            self.owner.insert(en.id().to_lowercase(), i);
        }
        self.entries.extend(entries);
        self.engines.push(Arc::new(Mutex::new(e)));
        Ok(())
    }

    /// Whether no engine started.
    pub fn is_empty(&self) -> bool {
        self.engines.is_empty()
    }
    /// The engines' ciphers as catalogue entries.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }
    /// The running engines.
    pub fn engines(&self) -> &[Arc<Mutex<Engine>>] {
        &self.engines
    }
    /// Implementation names of the engines.
    pub fn implementations(&self) -> Vec<String> {
        self.engines.iter().map(|e| lock(e).hello.implementation.clone()).collect()
    }
    /// False only for an engine's entry whose engine does not list this scenario.
    pub fn offers_scenario(&self, e: &Entry, sc: Scenario) -> bool {
        match self.engine_for(e) {
            Some(eng) => lock(&eng).offers.iter().any(|o| o.name == e.info.name && o.scenarios.contains(&sc)),
            None => true,
        }
    }
    /// The engine that offers this entry, if an engine does.
    pub fn engine_for(&self, e: &Entry) -> Option<Arc<Mutex<Engine>>> {
        self.owner.get(&e.id().to_lowercase()).map(|&i| self.engines[i].clone())
    }
    /// run.json notes for the engines whose groups are in the run.
    pub fn notes(&self, groups: &[Group]) -> Vec<String> {
        let mut out = Vec::new();
        for (i, eng) in self.engines.iter().enumerate() {
            if !groups.iter().any(|g| self.owner.get(&g.entry.id().to_lowercase()) == Some(&i)) {
                continue;
            }
            let e = lock(eng);
            let note = e.hello.fields.get("note").map(|n| format!(": {n}")).unwrap_or_default();
            out.push(format!(
                "implementation {}: times are taken inside an external engine process over the engine protocol (docs/engine-protocol.md), not by lwcbench's clock — {}{note}",
                e.hello.implementation,
                e.hello.describe()
            ));
        }
        out
    }
}

impl crate::plan::ExtraEntries for Offered {
    fn entries(&self) -> &[Entry] {
        Offered::entries(self)
    }
    fn offers_scenario(&self, e: &Entry, sc: Scenario) -> bool {
        Offered::offers_scenario(self, e, sc)
    }
}

/// Lock an engine; a panic elsewhere while holding it does not make it unusable.
pub fn lock(e: &Mutex<Engine>) -> std::sync::MutexGuard<'_, Engine> {
    e.lock().unwrap_or_else(|p| p.into_inner())
}

/// Measure one group through its engine (see [`Engine::bench`]); errors are one line.
pub(super) fn measure_group(
    e: &Mutex<Engine>,
    g: &Group,
    cfg: &Config,
    on_sample: impl FnMut(),
) -> Result<GroupResult, String> {
    let mut e = lock(e);
    let spec = e.spec.clone();
    e.bench(g, cfg, on_sample)
        .map_err(|f| format!("{}: engine {}: {f}", g.label(), crate::text::one_line(&spec, MAX_QUOTE)))
}

/// The engines of a run as a source of samples: each takes the groups of the ciphers it
/// offered and times them one request per group. A failing engine skips the group (a line
/// on stderr and in run.json) instead of ending the run (docs/engine-protocol.md).
impl crate::measurer::Measurer for Offered {
    fn takes(&self, g: &Group) -> bool {
        self.engine_for(&g.entry).is_some()
    }
    fn interleaves(&self) -> bool {
        false
    }
    fn measure(
        &mut self,
        clusters: &[Vec<&Group>],
        cfg: &Config,
        progress: &mut dyn FnMut(&Group, u64),
    ) -> Result<crate::measurer::Measured, String> {
        let per_group = (cfg.reps + cfg.warmup) as u64;
        let mut skipped = Vec::new();
        let mut results = Vec::with_capacity(clusters.len());
        for c in clusters {
            let mut rs = Vec::with_capacity(c.len());
            for &g in c {
                let Some(eng) = self.engine_for(&g.entry) else {
                    return Err(format!("{}: handed to the engines, but no engine offers it", g.label()));
                };
                let mut done = 0u64;
                match measure_group(&eng, g, cfg, || {
                    done += 1;
                    progress(g, 1);
                }) {
                    Ok(r) => rs.push(Some(r)),
                    Err(e) => {
                        eprintln!("lwcbench: skipped {e}");
                        progress(g, per_group.saturating_sub(done));
                        skipped.push(e);
                        rs.push(None);
                    }
                }
            }
            results.push(rs);
        }
        Ok(crate::measurer::Measured { results, skipped })
    }
}
