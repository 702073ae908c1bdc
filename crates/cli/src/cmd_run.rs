use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime};

use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use lwcbench_engine::clock::ClockInfo;
use lwcbench_engine::machine::{Build, Machine};
use lwcbench_engine::markdown::fmt_ns;
use lwcbench_engine::plan::{expand, Kiv, Scenario};
use lwcbench_engine::results::{self, RunRecord};
use lwcbench_engine::{measure_group, presets, Config};

#[derive(Args, Debug)]
pub struct RunArgs {
    /// A named preset (see `lwcbench presets`). Without any selection option, the default
    /// preset runs (the DRACO study's suite). Options given explicitly override the preset.
    #[arg(short, long)]
    preset: Option<String>,
    /// Ciphers by name or name/implementation (comma-separated or repeated).
    #[arg(short, long, value_delimiter = ',')]
    cipher: Vec<String>,
    /// Implementations (e.g. rust-fast,cpp-fast) across the selected ciphers.
    #[arg(short, long = "impl", value_delimiter = ',')]
    implementation: Vec<String>,
    /// Scenarios: full, keystream, init (stream); keysetup, encrypt, decrypt (block/AEAD).
    #[arg(short, long, value_delimiter = ',')]
    scenario: Vec<String>,
    /// Payload sizes in bits (default 1,8,128,1024). A suffix B, KiB or MiB means bytes.
    #[arg(long, value_delimiter = ',')]
    sizes: Vec<String>,
    /// Key/IV variants: ss, sr, rs, rr (static/random key, static/random IV); default all four.
    #[arg(long, value_delimiter = ',')]
    kiv: Vec<String>,
    /// Measured repetitions per group (default 100).
    #[arg(short = 'n', long)]
    reps: Option<usize>,
    /// Warm-up samples per group, measured and excluded from statistics (default 10).
    #[arg(short, long)]
    warmup: Option<usize>,
    /// Seed for random keys, IVs and payloads (default: drawn from the OS and recorded).
    #[arg(long)]
    seed: Option<u64>,
    /// Static key for the `s` key variants, hex (default 00 01 02 …).
    #[arg(long)]
    key: Option<String>,
    /// Static IV/nonce for the `s` IV variants, hex (default 00 01 02 …).
    #[arg(long)]
    iv: Option<String>,
    /// Minimum duration of one sample in microseconds; short operations are batched up to it.
    #[arg(long, default_value_t = 20.0)]
    min_sample_us: f64,
    /// Output directory (default ./lwcbench-results/<UTC time>-<preset>).
    #[arg(short, long)]
    out: Option<PathBuf>,
    /// Replace a finished run in --out.
    #[arg(long)]
    force: bool,
    /// No progress bar and no summary table.
    #[arg(short, long)]
    quiet: bool,
}

/// "1024" bits, "16B" / "64KiB" / "1MiB" bytes.
pub fn parse_size(s: &str) -> Result<usize, String> {
    let t = s.trim();
    let (num, mul) = if let Some(n) = t.strip_suffix("KiB") {
        (n, 8 * 1024)
    } else if let Some(n) = t.strip_suffix("MiB") {
        (n, 8 * 1024 * 1024)
    } else if let Some(n) = t.strip_suffix('B') {
        (n, 8)
    } else {
        (t, 1)
    };
    num.trim()
        .parse::<usize>()
        .ok()
        .and_then(|n| n.checked_mul(mul))
        .ok_or_else(|| format!("--sizes: '{s}' is not a size (bits, or bytes with B/KiB/MiB)"))
}

fn has_selection(a: &RunArgs) -> bool {
    !a.cipher.is_empty() || !a.implementation.is_empty() || !a.scenario.is_empty()
}

pub fn run(a: &RunArgs) -> Result<(), String> {
    // Resolve preset: explicit, or the default when nothing is selected.
    let preset = match &a.preset {
        Some(p) => Some(presets::find(p).ok_or_else(|| {
            format!("--preset: unknown preset '{p}' (known: {})", presets::PRESETS.iter().map(|p| p.name).collect::<Vec<_>>().join(", "))
        })?),
        None if !has_selection(a) => Some(presets::default_preset()),
        None => None,
    };
    let mut sel = preset.map(|p| (p.selection)()).unwrap_or_default();
    if !a.cipher.is_empty() {
        sel.ciphers = a.cipher.clone();
    }
    if !a.implementation.is_empty() {
        sel.implementations = a.implementation.clone();
    }
    if !a.scenario.is_empty() {
        sel.scenarios = a
            .scenario
            .iter()
            .map(|s| Scenario::parse(s).ok_or_else(|| format!("--scenario: unknown scenario '{s}' (full, keystream, init, keysetup, encrypt, decrypt)")))
            .collect::<Result<_, _>>()?;
    }
    if !a.sizes.is_empty() {
        sel.sizes_bits = a.sizes.iter().map(|s| parse_size(s)).collect::<Result<_, _>>()?;
    }
    if !a.kiv.is_empty() {
        sel.kivs = a.kiv.iter().map(|s| Kiv::parse(s).ok_or_else(|| format!("--kiv: '{s}' is not one of ss, sr, rs, rr"))).collect::<Result<_, _>>()?;
    }
    let reps = a.reps.or(preset.map(|p| p.reps)).unwrap_or(100);
    let warmup = a.warmup.or(preset.map(|p| p.warmup)).unwrap_or(10);
    if reps == 0 {
        return Err("--reps: at least one repetition is needed".into());
    }
    if !(a.min_sample_us.is_finite() && a.min_sample_us > 0.0) {
        return Err(format!("--min-sample-us: {} is not a positive duration", a.min_sample_us));
    }
    let groups = expand(&sel).map_err(|e| e.to_string())?;

    let decode = |name: &str, v: &Option<String>| -> Result<Option<Vec<u8>>, String> {
        v.as_ref().map(|h| hex::decode(h.trim()).map_err(|e| format!("--{name}: not hex ({e})"))).transpose()
    };
    let static_key = decode("key", &a.key)?;
    let static_iv = decode("iv", &a.iv)?;
    for g in &groups {
        let i = &g.entry.info;
        if let Some(k) = &static_key {
            if k.len() != i.key_bytes() {
                return Err(format!("--key: {} bytes given, but {} needs {} bytes ({} bits)", k.len(), g.entry.id(), i.key_bytes(), i.key_bits));
            }
        }
        if let Some(v) = &static_iv {
            if v.len() != i.iv_bytes() {
                return Err(format!("--iv: {} bytes given, but {} needs {} bytes ({} bits)", v.len(), g.entry.id(), i.iv_bytes(), i.iv_bits));
            }
        }
    }

    let started = SystemTime::now();
    let preset_name = preset.map(|p| p.name.to_string());
    let out = a.out.clone().unwrap_or_else(|| {
        let stamp = results::rfc3339(started).replace(':', "-");
        PathBuf::from("lwcbench-results").join(format!("{stamp}-{}", preset_name.as_deref().unwrap_or("custom")))
    });
    results::prepare_dir(&out, a.force)?;

    let seed = a.seed.unwrap_or_else(rand::random);
    let cfg = Config {
        reps,
        warmup,
        seed,
        min_sample_ns: a.min_sample_us * 1000.0,
        static_key: static_key.clone(),
        static_iv: static_iv.clone(),
        payload: None,
    };
    let clock = ClockInfo::measure();
    let machine = Machine::detect();

    let total = (groups.len() * (reps + warmup)) as u64;
    let pb = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
    pb.set_style(ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} samples  {msg}").expect("template"));
    let show_after = Duration::from_secs(2);
    let t0 = Instant::now();
    let mut shown = false;
    let interactive = !a.quiet && std::io::stderr().is_terminal();
    if !a.quiet {
        eprintln!(
            "lwcbench: {} groups × ({reps} + {warmup} warm-up) samples, seed {seed}, output {}",
            groups.len(),
            out.display()
        );
    }
    let mut results_v = Vec::with_capacity(groups.len());
    for g in &groups {
        pb.set_message(g.label());
        let r = measure_group(g, &cfg, || {
            pb.inc(1);
            // Only runs longer than a couple of seconds get a bar.
            if interactive && !shown && t0.elapsed() > show_after {
                pb.set_draw_target(ProgressDrawTarget::stderr());
                shown = true;
            }
        })
        .map_err(|e| e.to_string())?;
        results_v.push(r);
    }
    pb.finish_and_clear();
    let finished = SystemTime::now();

    let mut notes = vec![
        "cycles_per_op are TSC ticks (fixed-rate reference cycles), not core cycles; this machine has no hardware performance counters".to_string(),
        "each timed operation includes one indirect call through the cipher trait object".to_string(),
    ];
    if machine.governor.starts_with("unavailable") {
        notes.push("CPU frequency governor not readable: frequency scaling state unknown".into());
    } else if machine.governor != "performance" {
        notes.push(format!("CPU frequency governor is '{}', not 'performance': results may vary with frequency scaling", machine.governor));
    }
    let mut record = RunRecord {
        tool: "lwcbench".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        args: std::env::args().collect(),
        preset: preset_name,
        seed,
        reps,
        warmup,
        warmup_policy: "warm-up samples are measured with the same batch and key/IV policy, written to warmup.csv and excluded from samples.csv and all statistics".into(),
        min_sample_ns: cfg.min_sample_ns,
        static_key_hex: static_key.as_ref().map(hex::encode),
        static_iv_hex: static_iv.as_ref().map(hex::encode),
        payload: "random bytes from the seeded RNG (per group)".into(),
        groups: groups.len(),
        machine,
        build: Build::current(lwcbench_catalog::build_info()),
        clock,
        started_utc: results::rfc3339(started),
        finished_utc: results::rfc3339(finished),
        duration_s: finished.duration_since(started).unwrap_or_default().as_secs_f64(),
        files: vec![],
        notes,
    };
    results::write_run(&out, &results_v, &mut record, &[]).map_err(|e| format!("writing results to {}: {e}", out.display()))?;

    if !a.quiet {
        print_overview(&results_v);
        println!("\nwrote {} ({} groups, {} samples) in {:.1} s", out.display(), groups.len(), groups.len() * reps, record.duration_s);
    }
    Ok(())
}

/// Terminal overview: pooled rows (or the groups themselves when only one variant ran),
/// plus the C++/Rust comparison pooled per scenario and size.
fn print_overview(res: &[lwcbench_engine::GroupResult]) {
    let rows = results::sample_rows(res);
    let summary = results::summary_rows(&rows);
    let pooled: Vec<_> = summary.iter().filter(|r| r.kiv == "all").collect();
    let show: Vec<_> = if pooled.is_empty() { summary.iter().collect() } else { pooled };
    println!(
        "\n{:<20} {:<14} {:<9} {:>4} {:>7} {:>12} {:>12} {:>12} {:>10}",
        "cipher", "impl", "scenario", "kiv", "bits", "median", "mean", "sd", "Mbit/s"
    );
    for r in show {
        println!(
            "{:<20} {:<14} {:<9} {:>4} {:>7} {:>12} {:>12} {:>12} {:>10}",
            r.cipher,
            r.implementation,
            r.scenario,
            r.kiv,
            if r.size_bits > 0 { r.size_bits.to_string() } else { "-".into() },
            fmt_ns(r.median_ns),
            fmt_ns(r.mean_ns),
            fmt_ns(r.sd_ns),
            r.mbit_per_s.map(|x| format!("{x:.1}")).unwrap_or_else(|| "-".into())
        );
    }
    let cmp = results::comparison_rows(&rows);
    if !cmp.is_empty() {
        println!("\nC++/Rust median ratio per group (> 1: C++ slower): see comparison.csv; range {:.2}–{:.2}",
            cmp.iter().map(|c| c.ratio_cpp_rust).fold(f64::INFINITY, f64::min),
            cmp.iter().map(|c| c.ratio_cpp_rust).fold(0.0, f64::max));
    }
}

#[cfg(test)]
mod tests {
    use super::parse_size;

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("1"), Ok(1));
        assert_eq!(parse_size("16B"), Ok(128));
        assert_eq!(parse_size("64KiB"), Ok(64 * 1024 * 8));
        assert!(parse_size("x").is_err());
        assert!(parse_size("-1").is_err());
    }
}
