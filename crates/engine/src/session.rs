//! One benchmark run from request to result directory. The CLI and the Python bindings both
//! call [`run`]; they differ only in how they parse options and show progress.
use std::path::PathBuf;
use std::time::SystemTime;

use crate::clock::ClockInfo;
use crate::machine::{Build, Machine};
use crate::plan::Group;
use crate::plan::{expand_with, Selection};
use crate::results::{self, RunRecord};
use crate::runner::{Config, GroupResult, TWIN_MARK};
use crate::studies::{Study, StudyInput, StudyOptions, StudyOutput};

/// Everything a run needs. Build it with [`Request::new`] and adjust fields.
#[derive(Clone, Debug)]
pub struct Request {
    /// What to measure.
    pub selection: Selection,
    /// External engines (`--engine`) whose ciphers the selection may name.
    pub engines: crate::external::Offered,
    /// The preset's name, if any.
    pub preset: Option<&'static str>,
    /// Repetitions, warm-up, seed, batching, static key/IV.
    pub config: Config,
    /// None = `lwcbench-results/<UTC time>-<preset or custom>`.
    pub out: Option<PathBuf>,
    /// Replace a finished run in `out`.
    pub force: bool,
    /// Recorded in run.json (the command line, or the Python call).
    pub args: Vec<String>,
    /// The preset's study: its tables are derived after measurement.
    pub study: Option<&'static dyn Study>,
    /// The study's options, checked by the study.
    pub study_options: StudyOptions,
    /// A/A experiment (test-only, `lwcbench run --twin P`): every group is measured a second
    /// time in the same run as implementation `<impl>~twin` (P = 0) or, with a planted
    /// slowdown of P %, `<impl>~slowP`; `twin.csv` gives the verdict of each pair.
    pub twin: Option<u64>,
    /// Also count instructions per operation under callgrind (`--counter instructions`,
    /// [`crate::counter`]): writes `instructions.csv`. CLI only (re-executes the command line).
    pub count_instructions: bool,
    /// Renders `report.html` into the run's unit (the application layer passes the report
    /// crate's renderer); None writes no report.
    pub report: Option<crate::results::ReportRenderer>,
}

impl Request {
    /// A custom run of `selection` with the default configuration.
    pub fn new(selection: Selection) -> Self {
        Request {
            selection,
            engines: Default::default(),
            preset: None,
            config: Config::default(),
            out: None,
            force: false,
            args: std::env::args().collect(),
            study: None,
            study_options: StudyOptions::default(),
            twin: None,
            count_instructions: false,
            report: None,
        }
    }
    /// The preset's run: its selection, repetitions, warm-up and study.
    pub fn from_preset(p: &'static dyn Study) -> Self {
        let mut r = Request::new(p.selection());
        r.preset = Some(p.name());
        r.config.reps = p.reps();
        r.config.warmup = p.warmup();
        r.study = Some(p);
        r
    }
}

/// What a finished run hands back.
pub struct Outcome {
    /// The run directory written.
    pub dir: PathBuf,
    /// run.json's contents.
    pub record: RunRecord,
    /// Every group's samples.
    pub results: Vec<GroupResult>,
}

/// The run's groups (with the A/A twins when asked for).
fn plan_groups(req: &Request) -> Result<Vec<Group>, String> {
    let mut groups = expand_with(&req.selection, &req.engines).map_err(|e| e.to_string())?;
    if let Some(p) = req.twin {
        if p > 100 {
            return Err(format!("--twin: {p} is not a slowdown in % (0–100)"));
        }
        groups = add_twins(&req.selection, groups, p);
    }
    Ok(groups)
}

/// The counting child of `--counter instructions` (run under callgrind with
/// [`crate::counter::CHILD_ENV`] set): counts every group, writes no result directory.
pub fn count_child(req: &Request) -> Result<(), String> {
    let groups = plan_groups(req)?;
    let own: Vec<Group> = groups.into_iter().filter(|g| g.entry.in_process()).collect();
    crate::counter::child(&own, &req.config)
}

/// Stage 1: every input error, before anything is measured or written; the run's groups.
fn validate(req: &Request) -> Result<Vec<Group>, String> {
    let cfg = &req.config;
    if cfg.reps == 0 {
        return Err("--reps: at least one repetition is needed".into());
    }
    if !(cfg.min_sample_ns.is_finite() && cfg.min_sample_ns > 0.0) {
        return Err(format!("--min-sample-us: {} is not a positive duration", cfg.min_sample_ns / 1000.0));
    }
    let groups = plan_groups(req)?;
    crate::plan::check_bounds(cfg.reps, cfg.warmup, cfg.min_sample_ns, &groups)?;
    if req.count_instructions {
        let exe = std::env::current_exe().map_err(|e| format!("--counter instructions: {e}"))?;
        if !exe.file_name().is_some_and(|n| n.to_string_lossy().starts_with("lwcbench")) {
            return Err("--counter instructions: only available from the lwcbench command".into());
        }
        if !cfg!(target_arch = "x86_64") {
            return Err("--counter instructions: valgrind client requests are implemented for x86-64 only".into());
        }
    }
    for g in &groups {
        let i = &g.entry.info;
        if let Some(k) = cfg.static_key.as_ref().filter(|k| k.len() != i.key_bytes()) {
            return Err(format!(
                "--key: {} bytes given, but {} needs {} bytes ({} bits)",
                k.len(),
                g.entry.id(),
                i.key_bytes(),
                i.key_bits
            ));
        }
        if let Some(v) = cfg.static_iv.as_ref().filter(|v| v.len() != i.iv_bytes()) {
            return Err(format!(
                "--iv: {} bytes given, but {} needs {} bytes ({} bits)",
                v.len(),
                g.entry.id(),
                i.iv_bytes(),
                i.iv_bits
            ));
        }
    }
    Ok(groups)
}

/// Stage 2: measure every group; the results in plan order and the engine groups that failed.
fn measure(
    req: &Request,
    groups: &[Group],
    progress: &mut impl FnMut(u64, u64, &str),
) -> Result<(Vec<GroupResult>, Vec<String>), String> {
    let cfg = &req.config;
    let total = (groups.len() * (cfg.reps + cfg.warmup)) as u64;
    let mut done = 0u64;
    // Every group goes to the source that takes it (crate::measurer): the engines' groups
    // first, one request each, then this process's in interleaved rounds, groups that differ
    // only in payload sample by sample in turn. Results keep the plan's order; a failing
    // engine skips its group (one line on stderr and in run.json) instead of ending the run.
    let mut engines = req.engines.clone();
    let mut in_process = crate::measurer::InProcess;
    let (results_v, engine_skips) =
        crate::measurer::measure_all(groups, &mut [&mut engines, &mut in_process], cfg, &mut |g, n| {
            done += n;
            progress(done, total, &g.label());
        })?;
    // Skipped engine groups leave no result.
    let results_v: Vec<GroupResult> = results_v.into_iter().flatten().collect();
    // Exit rule (docs/engine-protocol.md): a run in which no group was measured is an error
    // and writes nothing; a run in which some groups failed is written, with a note per failed
    // group in run.json and a warning on stderr.
    if let (true, Some(first)) = (results_v.is_empty(), engine_skips.first()) {
        return Err(format!(
            "no group was measured: all {} failed (first: {first}); nothing written",
            engine_skips.len()
        ));
    }
    if !engine_skips.is_empty() {
        eprintln!(
            "lwcbench: warning: {} of {} groups failed and are missing from the results (see run.json notes)",
            engine_skips.len(),
            groups.len()
        );
    }
    Ok((results_v, engine_skips))
}

/// Stage 3: the notes of run.json on the machine, the noise during the run and the groups.
fn run_notes(
    req: &Request,
    groups: &[Group],
    machine: &Machine,
    engine_skips: &[String],
    noise: (&crate::noise::Snapshot, &crate::noise::Snapshot),
) -> Vec<String> {
    let mut notes = vec![
        crate::clock::CYCLES_NOTE.to_string(),
        "each timed operation includes one indirect call through the cipher trait object".to_string(),
    ];
    if machine.governor.starts_with("unavailable") {
        notes.push("CPU frequency governor not readable: frequency scaling state unknown".into());
    } else if machine.governor != "performance" {
        notes.push(format!(
            "CPU frequency governor is '{}', not 'performance': results may vary with frequency scaling",
            machine.governor
        ));
    }
    let noisy = crate::noise::warnings(noise.0, noise.1, &machine.governor, machine.logical_cores);
    for w in &noisy {
        eprintln!("lwcbench: warning: {w}");
    }
    notes.extend(noisy);
    notes.push(format!(
        "groups were measured in {} interleaved rounds; summary.csv round_spread_pct is the spread of the per-round medians",
        req.config.rounds.clamp(1, req.config.reps.max(1))
    ));
    notes.extend(req.engines.notes(groups));
    notes.extend(engine_skips.iter().map(|e| format!("skipped (engine failed): {e}")));
    if groups.iter().any(|g| g.entry.info.note.contains("provisional")) {
        notes.push(
            "DRACO is a provisional reconstruction, not interoperable with the published cipher (see docs/draco.md)"
                .into(),
        );
    }
    notes
}

/// The payload kinds of the groups, for run.json.
fn payload_label(groups: &[Group]) -> String {
    let mut kinds: Vec<String> = groups.iter().map(|g| g.payload.label.clone()).collect();
    kinds.dedup();
    kinds.sort();
    kinds.dedup();
    format!(
        "{} (random = bytes from the seeded RNG per group; dataset = encoded readings cycled/truncated to each size)",
        kinds.join(", ")
    )
}

/// Stage 4: the preset's study; the studies derived from every run are the writer's
/// (crate::output).
fn derive_study(req: &Request, results_v: &[GroupResult], record: &RunRecord) -> Result<StudyOutput, String> {
    match req.study.filter(|s| !s.every_run()) {
        Some(s) => {
            let samples = results::sample_rows(results_v);
            let summary = results::summary_rows(&samples);
            let input = StudyInput {
                options: &req.study_options,
                results: results_v,
                samples: &samples,
                summary: &summary,
                record,
            };
            s.derive(&input)
        }
        None => Ok(StudyOutput::default()),
    }
}

/// Stage 5: `instructions.csv` (`--counter instructions`), counted in a callgrind child beside
/// `out`, and its note.
fn count_instructions(req: &Request, groups: &[Group], out: &std::path::Path) -> Result<(Vec<u8>, String), String> {
    let exe = std::env::current_exe().map_err(|e| format!("--counter instructions: {e}"))?;
    let own: Vec<Group> = groups.iter().filter(|g| g.entry.in_process()).cloned().collect();
    // Beside the run, not in it: a kill must not leave `out` non-empty without run.json.
    let work = results::scratch_sibling(out).map_err(|e| format!("--counter instructions: {e}"))?;
    let rows = crate::counter::count(&exe, req.args.get(1..).unwrap_or(&[]), &own, &work)?;
    let note = format!(
        "instructions.csv: instructions per operation counted by valgrind callgrind ({} operations per group after {} untimed ones, fewer for operations over 16 KiB: see the ops column; random key/IV parts from the fixed seed {}); deterministic for a given binary",
        crate::counter::OPS,
        crate::counter::WARM_OPS,
        crate::counter::COUNT_SEED
    );
    Ok((results::to_csv(&rows), note))
}

/// Validate, measure and write. Every input error is reported before anything is measured
/// or written; progress is `(done_samples, total_samples, current group label)`.
pub fn run(req: &Request, mut progress: impl FnMut(u64, u64, &str)) -> Result<Outcome, String> {
    let cfg = &req.config;
    let groups = validate(req)?;
    let started = SystemTime::now();
    let out = req.out.clone().unwrap_or_else(|| results::default_out(started, req.preset.unwrap_or("custom")));
    results::prepare_dir(&out, req.force)?;

    let noise_start = crate::noise::Snapshot::take();
    let clock = ClockInfo::measure();
    let machine = Machine::detect();
    let (results_v, engine_skips) = measure(req, &groups, &mut progress)?;
    let finished = SystemTime::now();
    let noise_end = crate::noise::Snapshot::take();
    let notes = run_notes(req, &groups, &machine, &engine_skips, (&noise_start, &noise_end));
    let mut record = RunRecord {
        tool: "lwcbench".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        args: req.args.clone(),
        preset: req.preset.map(str::to_string),
        seed: cfg.seed,
        reps: cfg.reps,
        warmup: cfg.warmup,
        warmup_policy: "warm-up samples are measured with the same batch and key/IV policy, written to warmup.csv and excluded from samples.csv and all statistics".into(),
        min_sample_ns: cfg.min_sample_ns,
        static_key_hex: cfg.static_key.as_deref().map(hex_encode),
        static_iv_hex: cfg.static_iv.as_deref().map(hex_encode),
        payload: payload_label(&groups),
        groups: results_v.len(),
        machine,
        build: Build::current(lwcbench_catalog::build_info()),
        clock,
        started_utc: results::rfc3339(started),
        finished_utc: results::rfc3339(finished),
        duration_s: finished.duration_since(started).unwrap_or_default().as_secs_f64(),
        files: vec![],
        notes,
    };
    let study = derive_study(req, &results_v, &record)?;
    record.notes.extend(study.notes.iter().cloned());
    let mut extra: Vec<(&str, Vec<u8>)> = study.files.iter().map(|(n, b)| (n.as_str(), b.clone())).collect();
    if req.twin.is_some() {
        let rows = twin_rows(&results::sample_rows(&results_v));
        extra.push(("twin.csv", results::csv_or_header(&rows, TWIN_HEADER)));
    }
    if req.count_instructions {
        let (csv, note) = count_instructions(req, &groups, &out)?;
        extra.push(("instructions.csv", csv));
        record.notes.push(note);
    }
    crate::output::write_run(&out, &results_v, &mut record, &extra, &study.markdown, req.report)
        .map_err(|e| format!("writing results to {}: {e}", out.display()))?;
    Ok(Outcome { dir: out, record, results: results_v })
}

fn hex_encode(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Each group followed by its twin: same cipher and implementation, implementation name
/// `<impl>~twin` (p = 0) or `<impl>~slow<p>` (a planted p % slowdown, see runner::Planted).
fn add_twins(_sel: &Selection, groups: Vec<Group>, p: u64) -> Vec<Group> {
    let mut out = Vec::with_capacity(groups.len() * 2);
    for g in groups {
        let mut t = g.clone();
        let name = if p == 0 {
            format!("{}{TWIN_MARK}twin", g.entry.info.implementation)
        } else {
            format!("{}{TWIN_MARK}slow{p}", g.entry.info.implementation)
        };
        // a few bytes per group, once per run of the test-only option
        t.entry.info.implementation = Box::leak(name.into_boxed_str());
        out.push(g);
        out.push(t);
    }
    out
}

/// One row of `twin.csv` (A/A experiment): a group against its twin.
#[derive(serde::Serialize, Debug, Clone)]
pub struct TwinRow {
    /// Cipher name.
    pub cipher: String,
    /// The original implementation.
    pub implementation: String,
    /// The twin's implementation name.
    pub twin: String,
    /// Scenario.
    pub scenario: String,
    /// Key/IV variant.
    pub kiv: String,
    /// Message size in bits.
    pub size_bits: u64,
    /// Payload kind.
    pub payload: String,
    /// Median of the original, ns.
    pub median_ns: f64,
    /// Median of the twin, ns.
    pub twin_median_ns: f64,
    /// twin / original medians.
    pub ratio: f64,
    /// Lower end of the ratio's bootstrap 95 % CI.
    pub ratio_ci95_lo: f64,
    /// Upper end of the ratio's bootstrap 95 % CI.
    pub ratio_ci95_hi: f64,
    /// Two-sided Mann-Whitney U p-value.
    pub mann_whitney_p: f64,
    /// The verdict's equivalence margin, %.
    pub margin_pct: f64,
    /// "twin slower" / "twin faster" / "no difference beyond ±5 %" (the rule of comparison.csv).
    pub verdict: String,
}

/// Header of an empty `twin.csv`.
pub const TWIN_HEADER: &str = "cipher,implementation,twin,scenario,kiv,size_bits,payload,median_ns,twin_median_ns,ratio,ratio_ci95_lo,ratio_ci95_hi,mann_whitney_p,margin_pct,verdict";

/// Verdicts of every group against its twin, α = 0.05 Bonferroni-corrected over the pairs.
pub fn twin_rows(rows: &[results::SampleRow]) -> Vec<TwinRow> {
    use std::collections::BTreeMap;
    type Key = (String, String, String, String, u64, String);
    let mut orig: BTreeMap<Key, Vec<f64>> = BTreeMap::new();
    let mut twin: BTreeMap<Key, (String, Vec<f64>)> = BTreeMap::new();
    for r in rows {
        let (base, is_twin) = match r.implementation.split_once(TWIN_MARK) {
            Some((b, _)) => (b.to_string(), true),
            None => (r.implementation.clone(), false),
        };
        let k = (r.cipher.clone(), base, r.scenario.clone(), r.kiv.clone(), r.size_bits, r.payload.clone());
        if is_twin {
            twin.entry(k).or_insert_with(|| (r.implementation.clone(), Vec::new())).1.push(r.ns_per_op);
        } else {
            orig.entry(k).or_default().push(r.ns_per_op);
        }
    }
    let alpha = lwcbench_stats::bonferroni(0.05, twin.len());
    let m = lwcbench_stats::DEFAULT_MARGIN;
    twin.iter()
        .filter_map(|(k, (tname, t))| {
            let a = orig.get(k)?;
            let d = lwcbench_stats::decide(a, t, alpha, m);
            let med = |x: &[f64]| lwcbench_stats::summarize(x).median;
            Some(TwinRow {
                cipher: k.0.clone(),
                implementation: k.1.clone(),
                twin: tname.clone(),
                scenario: k.2.clone(),
                kiv: k.3.clone(),
                size_bits: k.4,
                payload: k.5.clone(),
                median_ns: med(a),
                twin_median_ns: med(t),
                ratio: d.ratio,
                ratio_ci95_lo: d.ratio_lo,
                ratio_ci95_hi: d.ratio_hi,
                mann_whitney_p: d.p,
                margin_pct: m * 100.0,
                verdict: match d.shift {
                    lwcbench_stats::Shift::None => results::no_difference(m),
                    lwcbench_stats::Shift::Slower => "twin slower".into(),
                    lwcbench_stats::Shift::Faster => "twin faster".into(),
                },
            })
        })
        .collect()
}
