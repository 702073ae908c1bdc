use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use lwcbench_engine::dataset::{ByteOrder, Dataset, Encode, Encoding, Layout};
use lwcbench_engine::markdown::fmt_ns;
use lwcbench_engine::plan::{Kiv, Payload, Scenario};
use lwcbench_engine::presets;
use lwcbench_engine::results;
use lwcbench_engine::session::{self, Request};
use lwcbench_engine::video;

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
    /// Scenarios: full, keystream, init (stream); keysetup, encrypt, decrypt (block/AEAD);
    /// reading (stream/AEAD: one 32-bit reading with a fresh counter IV, init included);
    /// frame (stream/AEAD: one whole video frame with a fresh counter IV, init included; only
    /// when named; see --video); roundtrip (AEAD: seal + open of one message, fresh counter
    /// nonce, never batched).
    #[arg(short, long, value_delimiter = ',')]
    scenario: Vec<String>,
    /// Payload sizes in bits (default 1,8,128,1024; at most 1 GiB). A suffix B, KiB or MiB
    /// means bytes. A size given twice (8,8 or 8,1B) is measured once.
    #[arg(long, value_delimiter = ',')]
    sizes: Vec<String>,
    /// Key/IV variants: ss, sr, rs, rr (static/random key, static/random IV); default all four.
    /// A variant given twice is measured once.
    #[arg(long, value_delimiter = ',')]
    kiv: Vec<String>,
    /// Measured repetitions per group (default 100; at most 1,000,000, and at most 10 million
    /// samples per run, warm-up included).
    #[arg(short = 'n', long)]
    reps: Option<usize>,
    /// Warm-up samples per group, measured and excluded from statistics (default 10; at most
    /// 1,000,000).
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
    /// Minimum duration of one sample in microseconds (above 0, at most 1,000,000 = 1 s);
    /// short operations are batched up to it.
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
    /// Every stream cipher and AEAD in the catalogue (instead of --cipher).
    #[arg(long)]
    all: bool,
    /// Payload kinds: random, dataset or both (default: random; sensor-study: both).
    #[arg(long, value_parser = ["random", "dataset", "both"])]
    payload: Option<String>,
    /// Sensor CSV (header row; optional time column; numeric channels, units in [..] or (..)).
    /// Default: the built-in office-building data (data/sensors/office-occupancy.csv).
    #[arg(long)]
    dataset: Option<PathBuf>,
    /// Character encoding of --dataset: utf8, or latin1 (ISO-8859-1, as many spreadsheet and
    /// logger exports are written).
    #[arg(long, default_value = "utf8", value_name = "ENC")]
    dataset_encoding: String,
    /// Channels (column names) to use from the dataset; default all numeric columns.
    #[arg(long, value_delimiter = ',')]
    channels: Vec<String>,
    /// Reading encoding: float32 (IEEE-754) or int32:SCALE (round(value × SCALE)).
    #[arg(long, default_value = "float32")]
    encoding: String,
    /// Byte order of each 32-bit reading.
    #[arg(long, value_parser = ["be", "le"], default_value = "be")]
    byte_order: String,
    /// Channel layout: interleaved (row by row) or per-channel (one series after another).
    #[arg(long, value_parser = ["interleaved", "per-channel"], default_value = "interleaved")]
    layout: String,
    /// Number of 32-bit readings in the dataset payload (default 702 = 22,464 bits).
    #[arg(long)]
    readings: Option<usize>,
    /// Device power profile for modelled energy columns: a built-in device (see
    /// data/power-profiles.csv: Raspberry Pi Zero W, Raspberry Pi 4, ESP32, ESP8266, RP2040)
    /// or a CSV file `device,active_w,source`. Energy is always labelled modelled. Only with
    /// --preset lightweight-study or stream-study (elsewhere an error).
    #[arg(long)]
    power_profile: Option<String>,
    /// Your own measured or assumed active power in watts (overrides the profile's figure).
    /// Only with --preset lightweight-study or stream-study (elsewhere an error).
    #[arg(long)]
    watts: Option<f64>,
    /// Video for the frame scenario: a YUV4MPEG2 file (.y4m; C420jpeg/420/422/444/mono, 8-bit).
    /// Default: data/video/bigbuckbunny.y4m made by ./scripts/setup.sh (or $LWCBENCH_VIDEO).
    /// Make one from any video or a camera with `python -m lwcbench.video extract`. Selects the
    /// frame scenario when no --scenario is given.
    #[arg(long)]
    video: Option<PathBuf>,
    /// Use only the first N frames of the clip (default: every frame in the file).
    #[arg(long)]
    frames: Option<usize>,
    /// Add an external engine's ciphers (docs/engine-protocol.md): a built-in engine
    /// (pycryptodome) or a command line. Alone, measures all of the engine's ciphers. The
    /// engine times inside its own process (PyCryptodome: Python's perf_counter_ns).
    #[arg(long)]
    engine: Vec<String>,
    /// lightweight-study: WSM weighting — battery, speed, or a CSV file
    /// `weighting,energy_per_byte,throughput,key_schedule,memory` (default: battery and speed).
    /// Only with --preset lightweight-study (elsewhere an error).
    #[arg(long)]
    weights: Option<String>,
    /// ics-latency: an extra latency budget NAME=MS (repeatable), next to the defaults
    /// GOOSE type 1A trip 3 ms and IEC 60834-1 teleprotection 10 ms. Only with --preset
    /// ics-latency (elsewhere an error).
    #[arg(long)]
    budget: Vec<String>,
    /// Run the same plan N times, into OUT/run-01 … OUT/run-N, and report the between-run
    /// spread of every group's median (OUT/repeat.csv).
    #[arg(long, default_value_t = 1)]
    repeat: usize,
    /// Counter: time (always measured) or instructions (also count instructions per
    /// operation under valgrind callgrind: deterministic, written to instructions.csv).
    #[arg(long, value_parser = ["time", "instructions"], default_value = "time")]
    counter: String,
    /// A/A experiment (test-only): measure every group twice in the same run, the twin with
    /// a planted slowdown of P % (0 = none); twin.csv gives the verdicts. See scripts/aa-test.sh.
    #[arg(long, hide = true, value_name = "P")]
    twin: Option<u64>,
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
    !a.cipher.is_empty() || !a.implementation.is_empty() || !a.scenario.is_empty() || a.all || a.video.is_some()
}

pub fn run(a: &RunArgs) -> Result<(), String> {
    // Resolve preset: explicit, or the default when nothing is selected.
    let preset = match &a.preset {
        Some(p) => Some(presets::find(p).ok_or_else(|| {
            format!(
                "--preset: unknown preset '{p}' (known: {})",
                presets::PRESETS.iter().map(|p| p.name).collect::<Vec<_>>().join(", ")
            )
        })?),
        None if !has_selection(a) && a.engine.is_empty() => Some(presets::default_preset()),
        None => None,
    };
    let mut req = match preset {
        Some(p) => Request::from_preset(p),
        None => Request::new(Default::default()),
    };
    // Study options apply only to the presets whose study reads them; elsewhere they would be
    // silently ignored.
    let preset_name = preset.map(|p| p.name).unwrap_or("");
    let only_in = |opt: &str, given: bool, presets: &[&str]| -> Result<(), String> {
        if given && !presets.contains(&preset_name) {
            let now = if preset_name.is_empty() { "no preset".to_string() } else { format!("--preset {preset_name}") };
            return Err(format!(
                "{opt}: applies only to --preset {} (with {now} it would be ignored)",
                presets.join(" or ")
            ));
        }
        Ok(())
    };
    only_in("--power-profile", a.power_profile.is_some(), &["lightweight-study", "stream-study"])?;
    only_in("--watts", a.watts.is_some(), &["lightweight-study", "stream-study"])?;
    only_in("--weights", a.weights.is_some(), &["lightweight-study"])?;
    only_in("--budget", !a.budget.is_empty(), &["ics-latency"])?;
    if a.power_profile.is_some() || a.watts.is_some() {
        // Validate now, so a bad profile fails before anything is measured.
        lwcbench_engine::power::resolve(a.power_profile.as_deref(), a.watts)?;
        req.study_options.power_profile = a.power_profile.clone();
        req.study_options.watts = a.watts;
    }
    if let Some(w) = &a.weights {
        lwcbench_engine::studies::lightweight_rank::resolve_weights(Some(w))?;
        req.study_options.weights = Some(w.clone());
    }
    for b in &a.budget {
        req.study_options.budgets.push(lwcbench_engine::studies::ics::parse_budget(b)?);
    }
    let sel = &mut req.selection;
    if !a.engine.is_empty() {
        // An engine that cannot start turns its rows off with one line; the rest runs.
        // A name that is neither a built-in engine nor a command line (a misspelling such as
        // `pycryptodom`) is an error; a command that fails to start turns its rows off with one
        // line and the rest runs.
        for spec in &a.engine {
            let s = spec.trim();
            let builtin = lwcbench_engine::external::BUILTIN.iter().any(|b| b.eq_ignore_ascii_case(s));
            if !s.contains(' ') && !s.contains('/') && !builtin {
                return Err(format!(
                    "--engine: unknown engine '{s}' (built-in: {}; or give a command line, e.g. 'python3 my_engine.py')",
                    lwcbench_engine::external::BUILTIN.join(", ")
                ));
            }
        }
        let (offered, failed) = lwcbench_engine::external::Offered::start(&a.engine);
        for f in &failed {
            eprintln!("lwcbench: {f}");
        }
        if offered.is_empty() && preset.is_none() && !has_selection(a) {
            return Err(format!("--engine: no engine could start ({})", failed.join("; ")));
        }
        // Without --cipher/--impl/--all the engine's ciphers are the selection (docs/
        // engine-protocol.md), also when --scenario, --sizes or --video narrow it.
        if preset.is_none() && a.cipher.is_empty() && a.implementation.is_empty() && !a.all {
            sel.implementations = offered.implementations();
        }
        sel.external = offered;
    }
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
            .map(|s| Scenario::parse(s).ok_or_else(|| format!("--scenario: unknown scenario '{s}' (full, keystream, init, keysetup, encrypt, decrypt, reading, frame, roundtrip)")))
            .collect::<Result<_, _>>()?;
    }
    if a.video.is_some() || a.frames.is_some() {
        if sel.scenarios.is_empty() {
            sel.scenarios = vec![Scenario::Frame];
        } else if !sel.scenarios.contains(&Scenario::Frame) {
            return Err("--video/--frames: the frame scenario is not selected (add frame to --scenario)".into());
        }
    }
    if sel.scenarios.contains(&Scenario::Frame) {
        let clip = match &a.video {
            Some(p) => video::Clip::load(p, a.frames)?,
            None => video::default_clip(a.frames)?,
        };
        if !a.quiet {
            eprintln!("lwcbench: video {}", clip.describe());
        }
        sel.video = Some(std::sync::Arc::new(clip));
    }
    if !a.sizes.is_empty() {
        sel.sizes_bits = a.sizes.iter().map(|s| parse_size(s)).collect::<Result<_, _>>()?;
    }
    if !a.kiv.is_empty() {
        sel.kivs = a
            .kiv
            .iter()
            .map(|s| Kiv::parse(s).ok_or_else(|| format!("--kiv: '{s}' is not one of ss, sr, rs, rr")))
            .collect::<Result<_, _>>()?;
    }
    if a.all {
        sel.all_stream_and_aead = true;
    }
    let wants_dataset = a.dataset.is_some() || a.readings.is_some() || !a.channels.is_empty();
    let kinds = a.payload.as_deref().unwrap_or(if wants_dataset && sel.payloads.is_empty() { "both" } else { "" });
    if !kinds.is_empty() || wants_dataset {
        let enc = Encode {
            encoding: Encoding::parse(&a.encoding)?,
            order: if a.byte_order == "le" { ByteOrder::Little } else { ByteOrder::Big },
            layout: if a.layout == "per-channel" { Layout::PerChannel } else { Layout::Interleaved },
            readings: a.readings.unwrap_or(lwcbench_engine::dataset::DEFAULT_READINGS),
        };
        let ds = match &a.dataset {
            Some(p) => Dataset::load_encoded(
                p,
                &a.channels,
                lwcbench_engine::dataset::TextEncoding::parse(&a.dataset_encoding)?,
            )?,
            None if !a.channels.is_empty() => Dataset::parse(
                lwcbench_engine::dataset::DEFAULT_CSV,
                "built-in dataset",
                lwcbench_engine::dataset::DEFAULT_NAME,
                &a.channels,
            )?,
            None => Dataset::builtin(),
        };
        let bytes = ds.payload(&enc)?;
        let data = Payload::dataset(&ds.name, bytes.clone());
        sel.payloads = match kinds {
            "random" => vec![Payload::random()],
            "dataset" => vec![data],
            _ => vec![data, Payload::random()],
        };
        if a.sizes.is_empty() && !sel.payloads.iter().all(|p| p.is_random()) {
            sel.sizes_bits = vec![bytes.len() * 8];
        }
    }
    let decode = |name: &str, v: &Option<String>| -> Result<Option<Vec<u8>>, String> {
        v.as_ref().map(|h| hex::decode(h.trim()).map_err(|e| format!("--{name}: not hex ({e})"))).transpose()
    };
    let cfg = &mut req.config;
    if let Some(r) = a.reps {
        cfg.reps = r;
    }
    if let Some(w) = a.warmup {
        cfg.warmup = w;
    }
    cfg.seed = a.seed.unwrap_or_else(rand::random);
    cfg.min_sample_ns = a.min_sample_us * 1000.0;
    cfg.static_key = decode("key", &a.key)?;
    cfg.static_iv = decode("iv", &a.iv)?;
    req.out = a.out.clone();
    req.force = a.force;
    req.twin = a.twin;
    req.count_instructions = a.counter == "instructions";
    if std::env::var_os(lwcbench_engine::counter::CHILD_ENV).is_some() {
        // the counting child of --counter instructions, under callgrind
        return session::count_child(&req);
    }
    if a.repeat == 0 || a.repeat > 1000 {
        return Err(format!("--repeat: {} is not a number of runs (1–1000)", a.repeat));
    }
    if a.repeat > 1 {
        return run_repeated(a, req);
    }

    let pb = ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden());
    pb.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} samples  {msg}")
            .expect("template"),
    );
    let interactive = !a.quiet && std::io::stderr().is_terminal();
    let t0 = Instant::now();
    let mut shown = false;
    let mut announced = false;
    let outcome = session::run(&req, |done, total, label| {
        if !announced && !a.quiet {
            eprintln!("lwcbench: {total} samples (warm-up included), seed {}", req.config.seed);
            announced = true;
        }
        pb.set_length(total);
        pb.set_position(done);
        pb.set_message(label.to_string());
        // Only runs longer than a couple of seconds get a bar.
        if interactive && !shown && t0.elapsed() > Duration::from_secs(2) {
            pb.set_draw_target(ProgressDrawTarget::stderr());
            shown = true;
        }
    });
    pb.finish_and_clear();
    let outcome = outcome?;
    // report.html was written with the run (results::REPORT_RENDERER)
    let report = outcome.dir.join("report.html");
    if !a.quiet {
        print_overview(&outcome.results);
        println!(
            "\nwrote {} ({} groups, {} samples) in {:.1} s",
            outcome.dir.display(),
            outcome.record.groups,
            outcome.record.groups * outcome.record.reps,
            outcome.record.duration_s
        );
        println!("report: {}", report.display());
    }
    Ok(())
}

/// `--repeat N`: the same plan N times into OUT/run-01 …, then OUT/repeat.csv with every
/// group's median per run and their spread (and the instruction counts, when counted).
fn run_repeated(a: &RunArgs, mut req: Request) -> Result<(), String> {
    let base = a.out.clone().unwrap_or_else(|| {
        let stamp = results::rfc3339(std::time::SystemTime::now()).replace(':', "-");
        PathBuf::from("lwcbench-results").join(format!("{stamp}-{}-x{}", req.preset.unwrap_or("custom"), a.repeat))
    });
    let mut dirs = Vec::new();
    for i in 1..=a.repeat {
        req.out = Some(base.join(format!("run-{i:02}")));
        if !a.quiet {
            eprintln!("lwcbench: run {i} of {}", a.repeat);
        }
        let o = session::run(&req, |_, _, _| {})?;
        lwcbench_report::write_report(&o.dir)?;
        dirs.push(o.dir);
    }
    let table = lwcbench_engine::repeat::spread(&dirs)?;
    results::write_atomic(&base, "repeat.csv", &results::to_csv(&table))
        .map_err(|e| format!("--out: {}: {e}", base.display()))?;
    print!("{}", lwcbench_engine::repeat::text(&table, dirs.len()));
    println!("wrote {} ({} runs) and {}", base.display(), dirs.len(), base.join("repeat.csv").display());
    Ok(())
}

/// Terminal overview: pooled rows (or the groups themselves when only one variant ran),
/// plus the C++/Rust comparison pooled per scenario and size.
fn print_overview(res: &[lwcbench_engine::GroupResult]) {
    let rows = results::sample_rows(res);
    let summary = results::summary_rows(&rows);
    let pooled: Vec<_> = summary.iter().filter(|r| r.kiv == "all" || r.scenario == "reading").collect();
    let show: Vec<_> = if pooled.is_empty() { summary.iter().collect() } else { pooled };
    println!(
        "\n{:<20} {:<14} {:<9} {:>4} {:>7} {:<16} {:>12} {:>12} {:>12} {:>10}",
        "cipher", "impl", "scenario", "kiv", "bits", "payload", "median", "mean", "sd", "Mbit/s"
    );
    for r in show {
        println!(
            "{:<20} {:<14} {:<9} {:>4} {:>7} {:<16} {:>12} {:>12} {:>12} {:>10}",
            r.cipher,
            r.implementation,
            r.scenario,
            r.kiv,
            if r.size_bits > 0 { r.size_bits.to_string() } else { "-".into() },
            r.payload,
            fmt_ns(r.median_ns),
            fmt_ns(r.mean_ns),
            fmt_ns(r.sd_ns),
            r.mbit_per_s.map(|x| format!("{x:.1}")).unwrap_or_else(|| "-".into())
        );
    }
    let (t1, t2) = lwcbench_engine::tables::dataset_vs_random(&rows);
    if !t1.is_empty() {
        print!("{}", lwcbench_engine::tables::markdown(&t1, &t2));
    }
    print!("{}", video::frames_markdown(&summary));
    let cmp = results::comparison_rows(&rows);
    if !cmp.is_empty() {
        println!(
            "\nC++/Rust median ratio per group (> 1: C++ slower): see comparison.csv; range {:.2}–{:.2}",
            cmp.iter().map(|c| c.ratio_cpp_rust).fold(f64::INFINITY, f64::min),
            cmp.iter().map(|c| c.ratio_cpp_rust).fold(0.0, f64::max)
        );
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
