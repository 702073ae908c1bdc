//! `run`: the engine's resolver and session, plus what a study needs beyond the engine (the
//! ICS study's in-cycle rows come from the link crate, which the engine cannot reach).
use lwcbench_engine::request::{self, Resolved, RunOptions};
use lwcbench_engine::session::Request;
use lwcbench_engine::studies::ics;

/// Resolve the options as `lwcbench run` does and add the study's extras
/// ([`add_study_extras`]).
pub fn resolve(opts: &RunOptions) -> Result<Resolved, String> {
    let mut r = request::resolve(opts)?;
    add_study_extras(&mut r.request);
    Ok(r)
}

/// What a preset measures outside the engine, measured now, before the engine's groups:
/// ics-latency's GOOSE and Modbus/TCP rows in the cycle (a protocol that cannot be measured
/// here, e.g. GOOSE without root, becomes a note of the run).
pub fn add_study_extras(req: &mut Request) {
    if req.preset != Some(ics::NAME) {
        return;
    }
    let mut budgets = ics::default_budgets();
    for (name, ms) in &req.study_options.budgets {
        budgets.push(ics::Budget { name: name.clone(), ms: *ms, source: String::new() });
    }
    let frames = req.config.reps;
    req.study_options.in_cycle = Some(crate::link::goose::in_cycle(&req.selection.ciphers, frames, &budgets));
}

/// Measure a resolved request into its result directory (report.html included, see
/// [`renderers`](crate::renderers)); `progress(done, total, group)` as the engine's session.
pub fn measure(
    req: &Request,
    progress: impl FnMut(u64, u64, &str),
) -> Result<lwcbench_engine::session::Outcome, String> {
    crate::renderers();
    lwcbench_engine::session::run(req, progress)
}
