//! One benchmark run from request to result directory. The CLI and the Python bindings both
//! call [`run`]; they differ only in how they parse options and show progress.
use std::path::PathBuf;
use std::time::SystemTime;

use crate::clock::ClockInfo;
use crate::machine::{Build, Machine};
use crate::plan::Group;
use crate::plan::{expand, Selection};
use crate::presets::Preset;
use crate::results::{self, RunRecord};
use crate::runner::{measure_group, measure_interleaved, Config, GroupResult};
use crate::studies::{StudyFn, StudyInput, StudyOptions, StudyOutput};

/// Everything a run needs. Build it with [`Request::new`] and adjust fields.
#[derive(Clone, Debug)]
pub struct Request {
    pub selection: Selection,
    pub preset: Option<&'static str>,
    pub config: Config,
    /// None = `lwcbench-results/<UTC time>-<preset or custom>`.
    pub out: Option<PathBuf>,
    pub force: bool,
    /// Recorded in run.json (the command line, or the Python call).
    pub args: Vec<String>,
    /// Extra tables computed after measurement (from the preset).
    pub study: Option<StudyFn>,
    pub study_options: StudyOptions,
}

impl Request {
    pub fn new(selection: Selection) -> Self {
        Request {
            selection,
            preset: None,
            config: Config::default(),
            out: None,
            force: false,
            args: std::env::args().collect(),
            study: None,
            study_options: StudyOptions::default(),
        }
    }
    pub fn from_preset(p: &'static Preset) -> Self {
        let mut r = Request::new((p.selection)());
        r.preset = Some(p.name);
        r.config.reps = p.reps;
        r.config.warmup = p.warmup;
        r.study = p.study;
        r
    }
}

/// What a finished run hands back.
pub struct Outcome {
    pub dir: PathBuf,
    pub record: RunRecord,
    pub results: Vec<GroupResult>,
}

/// Validate, measure and write. Every input error is reported before anything is measured
/// or written; progress is `(done_samples, total_samples, current group label)`.
pub fn run(req: &Request, mut progress: impl FnMut(u64, u64, &str)) -> Result<Outcome, String> {
    let cfg = &req.config;
    if cfg.reps == 0 {
        return Err("--reps: at least one repetition is needed".into());
    }
    if !(cfg.min_sample_ns.is_finite() && cfg.min_sample_ns > 0.0) {
        return Err(format!("--min-sample-us: {} is not a positive duration", cfg.min_sample_ns / 1000.0));
    }
    let groups = expand(&req.selection).map_err(|e| e.to_string())?;
    crate::plan::check_bounds(cfg.reps, cfg.warmup, cfg.min_sample_ns, &groups)?;
    for g in &groups {
        let i = &g.entry.info;
        if let Some(k) = &cfg.static_key {
            if k.len() != i.key_bytes() {
                return Err(format!(
                    "--key: {} bytes given, but {} needs {} bytes ({} bits)",
                    k.len(),
                    g.entry.id(),
                    i.key_bytes(),
                    i.key_bits
                ));
            }
        }
        if let Some(v) = &cfg.static_iv {
            if v.len() != i.iv_bytes() {
                return Err(format!(
                    "--iv: {} bytes given, but {} needs {} bytes ({} bits)",
                    v.len(),
                    g.entry.id(),
                    i.iv_bytes(),
                    i.iv_bits
                ));
            }
        }
    }
    let started = SystemTime::now();
    let out = req.out.clone().unwrap_or_else(|| {
        let stamp = results::rfc3339(started).replace(':', "-");
        PathBuf::from("lwcbench-results").join(format!("{stamp}-{}", req.preset.unwrap_or("custom")))
    });
    results::prepare_dir(&out, req.force)?;

    let clock = ClockInfo::measure();
    let machine = Machine::detect();
    let total = (groups.len() * (cfg.reps + cfg.warmup)) as u64;
    let mut done = 0u64;
    // Groups that differ only in payload are measured in turn, sample by sample (see
    // runner::measure_interleaved); results keep the plan's order. An external engine's
    // group is timed by the engine; a failing engine skips the group (one line on stderr
    // and in run.json) instead of ending the run.
    let mut results_v: Vec<Option<GroupResult>> = (0..groups.len()).map(|_| None).collect();
    let mut engine_skips: Vec<String> = Vec::new();
    let mut clusters: Vec<Vec<usize>> = Vec::new();
    let mut by_key: std::collections::HashMap<(String, String, crate::plan::Kiv, usize), usize> =
        std::collections::HashMap::new();
    for (i, g) in groups.iter().enumerate() {
        if req.selection.external.engine_for(&g.entry).is_some() {
            clusters.push(vec![i]); // engine groups are timed by the engine, one by one
            continue;
        }
        match by_key.entry(payload_free_label(g)) {
            std::collections::hash_map::Entry::Occupied(e) => clusters[*e.get()].push(i),
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(clusters.len());
                clusters.push(vec![i]);
            }
        }
    }
    for c in &clusters {
        let members: Vec<&Group> = c.iter().map(|&i| &groups[i]).collect();
        if let Some(eng) = req.selection.external.engine_for(&members[0].entry) {
            let g = members[0];
            let label = g.label();
            progress(done, total, &label);
            let before = done;
            match crate::external::measure_group(&eng, g, cfg, || {
                done += 1;
                progress(done, total, &label);
            }) {
                Ok(r) => results_v[c[0]] = Some(r),
                Err(e) => {
                    eprintln!("lwcbench: skipped {e}");
                    engine_skips.push(e);
                    done = before + (cfg.reps + cfg.warmup) as u64;
                }
            }
            continue;
        }
        let rs = if members.len() == 1 {
            let label = members[0].label();
            progress(done, total, &label);
            vec![measure_group(members[0], cfg, || {
                done += 1;
                progress(done, total, &label);
            })
            .map_err(|e| e.to_string())?]
        } else {
            measure_interleaved(&members, cfg, |g| {
                done += 1;
                progress(done, total, &g.label());
            })
            .map_err(|e| e.to_string())?
        };
        for (&i, r) in c.iter().zip(rs) {
            results_v[i] = Some(r);
        }
    }
    // Skipped engine groups leave no result.
    let results_v: Vec<GroupResult> = results_v.into_iter().flatten().collect();
    let finished = SystemTime::now();

    let mut notes = vec![
        "cycles_per_op are TSC ticks (fixed-rate reference cycles), not core cycles; this machine has no hardware performance counters".to_string(),
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
    notes.extend(req.selection.external.notes(&groups));
    notes.extend(engine_skips.iter().map(|e| format!("skipped (engine failed): {e}")));
    if groups.iter().any(|g| g.entry.info.note.contains("provisional")) {
        notes.push(
            "DRACO is a provisional reconstruction, not interoperable with the published cipher (see docs/draco.md)"
                .into(),
        );
    }
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
        payload: {
            let mut kinds: Vec<String> = groups.iter().map(|g| g.payload.label.clone()).collect();
            kinds.dedup();
            kinds.sort();
            kinds.dedup();
            format!("{} (random = bytes from the seeded RNG per group; dataset = encoded readings cycled/truncated to each size)", kinds.join(", "))
        },
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
    let study = match req.study {
        Some(f) => {
            let samples = results::sample_rows(&results_v);
            let summary = results::summary_rows(&samples);
            let input =
                StudyInput { request: req, results: &results_v, samples: &samples, summary: &summary, record: &record };
            f(&input)?
        }
        None => StudyOutput::default(),
    };
    record.notes.extend(study.notes.iter().cloned());
    let extra: Vec<(&str, Vec<u8>)> = study.files.iter().map(|(n, b)| (n.as_str(), b.clone())).collect();
    results::write_run(&out, &results_v, &mut record, &extra, &study.markdown)
        .map_err(|e| format!("writing results to {}: {e}", out.display()))?;
    Ok(Outcome { dir: out, record, results: results_v })
}

fn hex_encode(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// A group's identity without its payload: cipher, implementation, scenario, key/IV variant, size.
fn payload_free_label(g: &Group) -> (String, String, crate::plan::Kiv, usize) {
    (g.entry.id(), g.scenario.to_string(), g.kiv, g.size_bits)
}
