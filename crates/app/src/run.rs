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

/// Measure a resolved request into its result directory, report.html included;
/// `progress(done, total, group)` as the engine's session.
pub fn measure(
    req: &Request,
    progress: impl FnMut(u64, u64, &str),
) -> Result<lwcbench_engine::session::Outcome, String> {
    measure_with(req, true, progress)
}

/// [`measure`], with the report crate's `report.html` written into the run's unit (and listed
/// in its run.json) only when `report`.
pub fn measure_with(
    req: &Request,
    report: bool,
    progress: impl FnMut(u64, u64, &str),
) -> Result<lwcbench_engine::session::Outcome, String> {
    let mut req = req.clone();
    req.report = report.then_some(lwcbench_report::render_html as lwcbench_engine::results::ReportRenderer);
    lwcbench_engine::session::run(&req, progress)
}

#[cfg(test)]
mod tests {
    use lwcbench_engine::plan::{Kiv, Scenario, Selection};

    fn files(dir: &std::path::Path) -> Vec<String> {
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("run.json")).unwrap()).unwrap();
        v["files"].as_array().unwrap().iter().map(|f| f.as_str().unwrap().to_string()).collect()
    }

    /// A run through this layer has report.html in its unit and listed in run.json; an engine
    /// run of the same process afterwards (Python's `run(report=False)`) has none: no renderer
    /// outlives the run it was passed to.
    #[test]
    fn report_belongs_to_its_run_only() {
        let t = tempfile::tempdir().unwrap();
        let sel = Selection {
            ciphers: vec!["Ascon-AEAD128".into()],
            scenarios: vec![Scenario::Encrypt],
            kivs: vec![Kiv { random_key: false, random_iv: false }],
            sizes_bits: vec![64],
            ..Default::default()
        };
        let mut req = lwcbench_engine::session::Request::new(sel);
        req.config.reps = 3;
        req.config.warmup = 1;
        req.out = Some(t.path().join("app"));
        let o = super::measure(&req, |_, _, _| {}).unwrap();
        let listed = files(&o.dir);
        assert_eq!(listed[listed.len() - 2..], ["report.html", "run.json"], "{listed:?}");
        assert!(o.dir.join("report.html").is_file());

        req.out = Some(t.path().join("engine"));
        let o = lwcbench_engine::session::run(&req, |_, _, _| {}).unwrap();
        let listed = files(&o.dir);
        assert!(!listed.iter().any(|f| f == "report.html"), "{listed:?}");
        assert!(!o.dir.join("report.html").exists());
    }
}
