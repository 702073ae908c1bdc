//! `compare`: two result directories group by group (ratio of medians, significance), and
//! named baselines.
use std::path::{Path, PathBuf};

use clap::Args;
use lwcbench_report::{compare, Run};

/// `lwcbench compare` options.
#[derive(Args)]
pub struct CompareArgs {
    /// Baseline result directory (A), then the result directory compared against it (B).
    /// With --baseline NAME: only B. With --save-baseline NAME: only the run to save.
    #[arg(num_args = 0..=2)]
    dirs: Vec<PathBuf>,
    /// Also write the comparison as a self-contained HTML page here.
    #[arg(long, default_value = "lwcbench-compare.html")]
    html: PathBuf,
    /// Compare the given run (B) against the saved baseline NAME (A).
    #[arg(long, value_name = "NAME", conflicts_with = "save_baseline")]
    baseline: Option<String>,
    /// Save the given run as baseline NAME (replacing an older one of that name) and exit.
    #[arg(long, value_name = "NAME")]
    save_baseline: Option<String>,
    /// Where named baselines live.
    #[arg(long, default_value = "lwcbench-results/baselines")]
    baselines_dir: PathBuf,
    /// Practical-equivalence margin in %: a difference is reported as faster/slower only when
    /// it is significant and the 95 % CI of the ratio of medians lies wholly outside ±MARGIN %.
    #[arg(long, default_value_t = lwcbench_stats::DEFAULT_MARGIN * 100.0)]
    margin: f64,
}

/// Files of a run that a baseline keeps (the ones `lwcbench compare` reads).
const BASELINE_FILES: [&str; 4] = ["samples.csv", "summary.csv", "comparison.csv", "run.json"];

/// A baseline name: 1–64 of [A-Za-z0-9._-], not starting with '.', so it is one safe path
/// component.
fn baseline_dir(root: &Path, name: &str) -> Result<PathBuf, String> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && !name.starts_with('.')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if !ok {
        return Err(format!(
            "--baseline: '{}' is not a baseline name (1–64 letters, digits, '.', '_' or '-', not starting with '.')",
            name.escape_default()
        ));
    }
    Ok(root.join(name))
}

/// Copy a finished run's files into `root/NAME` (via a temporary directory renamed into place,
/// so a baseline is never half-written).
pub fn save_baseline(root: &Path, name: &str, run_dir: &Path) -> Result<PathBuf, String> {
    let dest = baseline_dir(root, name)?;
    Run::load(run_dir)?; // only a complete, readable run becomes a baseline
    std::fs::create_dir_all(root).map_err(|e| format!("--baselines-dir: {}: {e}", root.display()))?;
    let tmp = root.join(format!(".{name}.tmp-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    let res = (|| {
        std::fs::create_dir(&tmp)?;
        for f in BASELINE_FILES {
            let src = run_dir.join(f);
            if src.exists() {
                std::fs::copy(&src, tmp.join(f))?;
            }
        }
        if dest.exists() {
            std::fs::remove_dir_all(&dest)?;
        }
        std::fs::rename(&tmp, &dest)
    })();
    if let Err(e) = res {
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(format!("--save-baseline: {}: {e}", dest.display()));
    }
    Ok(dest)
}

/// A comparison of run B against run A (`lwcbench compare A B`).
pub struct Comparison {
    /// Group by group, as the text table and the HTML page show them.
    pub rows: Vec<compare::Row>,
    /// The text table (with its verdict counts and the rule), as the command line prints it.
    pub text: String,
    /// The self-contained HTML page.
    pub html: String,
    /// Notes of either run that make its verdicts less trustworthy (a noisy machine).
    pub warnings: Vec<String>,
}

/// Check a practical-equivalence margin given in %.
fn check_margin(margin_pct: f64) -> Result<(), String> {
    if !(margin_pct.is_finite() && (0.0..100.0).contains(&margin_pct)) {
        return Err(format!("--margin: {margin_pct} is not a percentage in [0, 100)"));
    }
    Ok(())
}

/// Compare run B (`b_dir`) against run A (`a_dir`), a difference counting only outside
/// ±`margin_pct` %.
pub fn compare_dirs(a_dir: &Path, b_dir: &Path, margin_pct: f64) -> Result<Comparison, String> {
    check_margin(margin_pct)?;
    let ra = Run::load(a_dir)?;
    let rb = Run::load(b_dir)?;
    let margin = margin_pct / 100.0;
    let rows = compare::compare_runs_with(&ra, &rb, margin);
    let text = compare::text_table_with(&rows, margin);
    // Runs recorded on a noisy machine: their verdicts deserve less trust.
    let mut warnings = Vec::new();
    for (tag, r) in [("A", &ra), ("B", &rb)] {
        for n in r.record.notes.iter().filter(|n| n.starts_with("noisy machine")) {
            warnings.push(format!("run {tag}: {n}"));
        }
    }
    let html = compare::html_with(&ra, &rb, &a_dir.display().to_string(), &b_dir.display().to_string(), &rows, margin);
    Ok(Comparison { rows, text, html, warnings })
}

/// The saved baseline NAME under `root` (`--baseline NAME`), which must exist.
pub fn baseline(root: &Path, name: &str) -> Result<PathBuf, String> {
    let d = baseline_dir(root, name)?;
    if !d.is_dir() {
        return Err(format!("--baseline: no baseline named '{name}' in {}", root.display()));
    }
    Ok(d)
}

/// `lwcbench compare`: the table on stdout, warnings on stderr, the page in `--html`.
pub fn run(a: &CompareArgs) -> Result<(), String> {
    check_margin(a.margin)?;
    if let Some(name) = &a.save_baseline {
        let [dir] = a.dirs.as_slice() else {
            return Err("--save-baseline: give exactly one result directory to save".into());
        };
        let dest = save_baseline(&a.baselines_dir, name, dir)?;
        println!("saved {} as baseline '{name}' ({})", dir.display(), dest.display());
        return Ok(());
    }
    let (a_dir, b_dir) = match (&a.baseline, a.dirs.as_slice()) {
        (Some(name), [b]) => (baseline(&a.baselines_dir, name)?, b.clone()),
        (Some(_), _) => return Err("--baseline: give exactly one result directory (B) to compare".into()),
        (None, [x, y]) => (x.clone(), y.clone()),
        (None, _) => return Err("compare: give two result directories A B (or --baseline NAME B)".into()),
    };
    let c = compare_dirs(&a_dir, &b_dir, a.margin)?;
    print!("{}", c.text);
    for w in &c.warnings {
        eprintln!("warning: {w}");
    }
    lwcbench_engine::results::write_atomic_to(&a.html, c.html.as_bytes(), "--html")?;
    println!("wrote {}", a.html.display());
    Ok(())
}
