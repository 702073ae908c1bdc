use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use lwcbench_engine::markdown::fmt_ns;
use lwcbench_engine::request::{self, RunOptions};
use lwcbench_engine::results;
use lwcbench_engine::session::{self, Request};

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
    #[arg(long, help = crate::board_help(
        "Crypto energy from the device: emulated cycles of the cipher's microcontroller image \
         (data/emulated-cycles.csv) ÷ the board's clock × its datasheet active power (data/board-power.csv): ",
        ". Ciphers without an image fall back to host time × the board's power; the energy_source column says \
         which. Only with --preset lightweight-study or stream-study, not with --power-profile/--watts."
    ))]
    board: Option<String>,
    /// Measured energy beside the modelled: a collected run's energy.csv (`lwcbench collect
    /// --power-port`, docs/power.md), matched by cipher, implementation, scenario and message
    /// size; rows without a match are listed in run.json notes. Only with --preset
    /// lightweight-study or stream-study (elsewhere an error).
    #[arg(long, value_name = "FILE")]
    energy_from: Option<PathBuf>,
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
    /// a planted slowdown of P % (0 = none); twin.csv gives the verdicts. See scripts/bench/aa-test.sh.
    #[arg(long, hide = true, value_name = "P")]
    twin: Option<u64>,
}

pub use lwcbench_engine::request::parse_size;

impl RunArgs {
    /// The option values as given, for the shared resolver ([`lwcbench_engine::request`]).
    fn options(&self) -> RunOptions {
        RunOptions {
            preset: self.preset.clone(),
            cipher: self.cipher.clone(),
            implementation: self.implementation.clone(),
            scenario: self.scenario.clone(),
            sizes: self.sizes.clone(),
            kiv: self.kiv.clone(),
            reps: self.reps,
            warmup: self.warmup,
            seed: self.seed,
            key: self.key.clone(),
            iv: self.iv.clone(),
            min_sample_us: Some(self.min_sample_us),
            out: self.out.clone(),
            force: self.force,
            all: self.all,
            payload: self.payload.clone(),
            dataset: self.dataset.clone(),
            dataset_encoding: Some(self.dataset_encoding.clone()),
            channels: self.channels.clone(),
            encoding: Some(self.encoding.clone()),
            byte_order: Some(self.byte_order.clone()),
            layout: Some(self.layout.clone()),
            readings: self.readings,
            power_profile: self.power_profile.clone(),
            watts: self.watts,
            board: self.board.clone(),
            energy_from: self.energy_from.clone(),
            video: self.video.clone(),
            frames: self.frames,
            engine: self.engine.clone(),
            weights: self.weights.clone(),
            budget: self.budget.clone(),
            repeat: Some(self.repeat),
            counter: Some(self.counter.clone()),
            twin: self.twin,
            args: None,
        }
    }
}

pub fn run(a: &RunArgs) -> Result<(), String> {
    let resolved = request::resolve(&a.options())?;
    for w in &resolved.warnings {
        eprintln!("lwcbench: {w}");
    }
    if !a.quiet {
        for i in &resolved.info {
            eprintln!("lwcbench: {i}");
        }
    }
    let mut req = resolved.request;
    if std::env::var_os(lwcbench_engine::counter::CHILD_ENV).is_some() {
        // the counting child of --counter instructions, under callgrind
        return session::count_child(&req);
    }
    lwcbench_app::run::add_study_extras(&mut req);
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
    let outcome = lwcbench_app::run::measure(&req, |done, total, label| {
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
    // report.html was written with the run (the renderer app::run::measure passes)
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
        let name = format!("{}-x{}", req.preset.unwrap_or("custom"), a.repeat);
        results::default_out(std::time::SystemTime::now(), &name)
    });
    let mut dirs = Vec::new();
    for i in 1..=a.repeat {
        req.out = Some(base.join(format!("run-{i:02}")));
        if !a.quiet {
            eprintln!("lwcbench: run {i} of {}", a.repeat);
        }
        let o = lwcbench_app::run::measure(&req, |_, _, _| {})?;
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
    let (t1, t2) = lwcbench_engine::studies::sensor::dataset_vs_random(&rows);
    if !t1.is_empty() {
        print!("{}", lwcbench_engine::studies::sensor::markdown(&t1, &t2));
    }
    print!("{}", lwcbench_engine::studies::video::frames_markdown(&summary));
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
    use clap::CommandFactory;

    #[derive(clap::Parser)]
    struct Wrap {
        #[command(flatten)]
        run: super::RunArgs,
    }

    /// Every `lwcbench run` option reaches the shared resolver (and so the Python binding,
    /// whose test checks the same list); `quiet` is display-only.
    #[test]
    fn every_run_option_is_a_resolver_option() {
        let mut ids: Vec<String> = Wrap::command()
            .get_arguments()
            .map(|a| a.get_id().to_string())
            .filter(|id| id != "quiet" && id != "help")
            .collect();
        ids.sort();
        let mut want: Vec<String> = lwcbench_engine::request::RUN_OPTIONS.iter().map(|s| s.to_string()).collect();
        want.sort();
        assert_eq!(ids, want);
    }
}
