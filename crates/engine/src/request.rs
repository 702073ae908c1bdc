//! One run-request resolver for every front-end: `lwcbench run` (clap) and the Python
//! `lwcbench.run` both fill a [`RunOptions`] with the option values as given (strings and
//! numbers, no parsing) and call [`resolve`], so they accept the same options with the same
//! defaults, checks and error messages. Error messages name the CLI option (`--sizes: ...`).
use std::path::PathBuf;

use crate::dataset::{self, ByteOrder, Dataset, Encode, Encoding, Layout, TextEncoding};
use crate::plan::{Kiv, Payload, Scenario, Selection};
use crate::session::Request;
use crate::studies::{self, Study, StudyArgs};
use crate::video;

/// Every `lwcbench run` option, as given. `None`/empty/false means "not given": the preset's
/// (or the built-in) default applies.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// `--preset`.
    pub preset: Option<String>,
    /// `--cipher`.
    pub cipher: Vec<String>,
    /// `--impl`.
    pub implementation: Vec<String>,
    /// `--scenario`.
    pub scenario: Vec<String>,
    /// Bits, or bytes with a B/KiB/MiB suffix ([`parse_size`]).
    pub sizes: Vec<String>,
    /// `--kiv`.
    pub kiv: Vec<String>,
    /// `--reps`.
    pub reps: Option<usize>,
    /// `--warmup`.
    pub warmup: Option<usize>,
    /// `--seed`.
    pub seed: Option<u64>,
    /// Hex.
    pub key: Option<String>,
    /// Hex.
    pub iv: Option<String>,
    /// `--min-sample-us`.
    pub min_sample_us: Option<f64>,
    /// `--out`.
    pub out: Option<PathBuf>,
    /// `--force`.
    pub force: bool,
    /// `--all`.
    pub all: bool,
    /// `--payload`: random, dataset or both.
    pub payload: Option<String>,
    /// `--dataset`.
    pub dataset: Option<PathBuf>,
    /// `--dataset-encoding`: utf8 or latin1.
    pub dataset_encoding: Option<String>,
    /// `--channels`.
    pub channels: Vec<String>,
    /// `--encoding`: float32 or int32:SCALE.
    pub encoding: Option<String>,
    /// `--byte-order`: be or le.
    pub byte_order: Option<String>,
    /// `--layout`: interleaved or per-channel.
    pub layout: Option<String>,
    /// `--readings`.
    pub readings: Option<usize>,
    /// `--power-profile`.
    pub power_profile: Option<String>,
    /// `--watts`.
    pub watts: Option<f64>,
    /// `--board`.
    pub board: Option<String>,
    /// `--energy-from`.
    pub energy_from: Option<PathBuf>,
    /// `--video`.
    pub video: Option<PathBuf>,
    /// `--frames`.
    pub frames: Option<usize>,
    /// `--engine`.
    pub engine: Vec<String>,
    /// `--weights`.
    pub weights: Option<String>,
    /// `--budget NAME=MS`.
    pub budget: Vec<String>,
    /// `--repeat`.
    pub repeat: Option<usize>,
    /// `--counter`: time or instructions.
    pub counter: Option<String>,
    /// `--twin` (test only).
    pub twin: Option<u64>,
    /// How the run was asked for, recorded in run.json (None: this process's command line).
    pub args: Option<Vec<String>>,
}

/// The [`RunOptions`] fields that are `lwcbench run` options (the clap argument ids, and the
/// keyword names of the Python `lwcbench.run`, where `implementation` is spelled `impl`).
/// Tests in the CLI and the Python package check both front-ends against this list.
pub const RUN_OPTIONS: &[&str] = &[
    "preset",
    "cipher",
    "implementation",
    "scenario",
    "sizes",
    "kiv",
    "reps",
    "warmup",
    "seed",
    "key",
    "iv",
    "min_sample_us",
    "out",
    "force",
    "all",
    "payload",
    "dataset",
    "dataset_encoding",
    "channels",
    "encoding",
    "byte_order",
    "layout",
    "readings",
    "power_profile",
    "watts",
    "board",
    "energy_from",
    "video",
    "frames",
    "engine",
    "weights",
    "budget",
    "repeat",
    "counter",
    "twin",
];

/// A resolved run: the request plus what the front-end should show and do.
pub struct Resolved {
    /// The run to make.
    pub request: Request,
    /// Number of runs (`--repeat`, 1–1000).
    pub repeat: usize,
    /// Lines to show always (an engine that could not start).
    pub warnings: Vec<String>,
    /// Lines to show unless quiet (the video clip used).
    pub info: Vec<String>,
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

fn one_of<'a>(opt: &str, v: &'a Option<String>, allowed: &[&'a str]) -> Result<&'a str, String> {
    match v.as_deref() {
        None => Ok(allowed[0]),
        Some(s) if allowed.contains(&s) => Ok(s),
        Some(s) => Err(format!("--{opt}: '{s}' is not one of {}", allowed.join(", "))),
    }
}

fn has_selection(a: &RunOptions) -> bool {
    !a.cipher.is_empty() || !a.implementation.is_empty() || !a.scenario.is_empty() || a.all || a.video.is_some()
}

/// The explicit preset, or the default when nothing is selected (None: a custom run).
fn find_preset(a: &RunOptions) -> Result<Option<&'static dyn Study>, String> {
    Ok(match &a.preset {
        Some(p) => Some(studies::find(p).ok_or_else(|| {
            format!(
                "--preset: unknown preset '{p}' (known: {})",
                studies::ALL.iter().map(|p| p.name()).collect::<Vec<_>>().join(", ")
            )
        })?),
        None if !has_selection(a) && a.engine.is_empty() => Some(studies::default_study()),
        None => None,
    })
}

/// The study options given, checked and kept by the preset's study.
fn take_study_options(a: &RunOptions, preset: Option<&'static dyn Study>, req: &mut Request) -> Result<(), String> {
    // Study options apply only to the presets whose study reads them (Study::options);
    // elsewhere they would be silently ignored. The study checks and keeps them.
    let given = StudyArgs {
        power_profile: a.power_profile.clone(),
        watts: a.watts,
        board: a.board.clone(),
        weights: a.weights.clone(),
        budget: a.budget.clone(),
        energy_from: a.energy_from.clone(),
    };
    let preset_name = preset.map(|p| p.name()).unwrap_or("");
    for o in given.given() {
        if !preset.is_some_and(|p| p.options().contains(&o)) {
            let now = if preset_name.is_empty() { "no preset".to_string() } else { format!("--preset {preset_name}") };
            return Err(format!(
                "{}: applies only to --preset {} (with {now} it would be ignored)",
                o.flag(),
                studies::reading(o).join(" or ")
            ));
        }
    }
    if let Some(p) = preset {
        p.take_options(&given, &mut req.study_options)?;
    }
    Ok(())
}

/// `--engine`: start the engines (their ciphers become the selection when nothing else
/// selects); an engine that cannot start is a warning.
fn start_engines(
    a: &RunOptions,
    preset: Option<&'static dyn Study>,
    req: &mut Request,
    warnings: &mut Vec<String>,
) -> Result<(), String> {
    if !a.engine.is_empty() {
        // A name that is neither a built-in engine nor a command line (a misspelling such as
        // `pycryptodom`) is an error; a command that fails to start turns its rows off with one
        // line and the rest runs.
        for spec in &a.engine {
            let s = spec.trim();
            let builtin = crate::external::BUILTIN.iter().any(|b| b.eq_ignore_ascii_case(s));
            if !s.contains(' ') && !s.contains('/') && !builtin {
                return Err(format!(
                    "--engine: unknown engine '{s}' (built-in: {}; or give a command line, e.g. 'python3 my_engine.py')",
                    crate::external::BUILTIN.join(", ")
                ));
            }
        }
        let (offered, failed) = crate::external::Offered::start(&a.engine);
        warnings.extend(failed.iter().cloned());
        if offered.is_empty() && preset.is_none() && !has_selection(a) {
            return Err(format!("--engine: no engine could start ({})", failed.join("; ")));
        }
        // Without --cipher/--impl/--all the engine's ciphers are the selection (docs/
        // engine-protocol.md), also when --scenario, --sizes or --video narrow it.
        if preset.is_none() && a.cipher.is_empty() && a.implementation.is_empty() && !a.all {
            req.selection.implementations = offered.implementations();
        }
        req.engines = offered;
    }
    Ok(())
}

/// The selection options over the preset's: ciphers, implementations, scenarios, the video
/// clip, sizes, key/IV variants.
fn select(a: &RunOptions, sel: &mut Selection, info: &mut Vec<String>) -> Result<(), String> {
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
        info.push(format!("video {}", clip.describe()));
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
    Ok(())
}

/// The payloads: random, the dataset's encoded readings, or both.
fn payloads(
    a: &RunOptions,
    sel: &mut Selection,
    payload: Option<&str>,
    byte_order: &str,
    layout: &str,
) -> Result<(), String> {
    let wants_dataset = a.dataset.is_some() || a.readings.is_some() || !a.channels.is_empty();
    let kinds = payload.unwrap_or(if wants_dataset && sel.payloads.is_empty() { "both" } else { "" });
    if !kinds.is_empty() || wants_dataset {
        let enc = Encode {
            encoding: Encoding::parse(a.encoding.as_deref().unwrap_or("float32"))?,
            order: if byte_order == "le" { ByteOrder::Little } else { ByteOrder::Big },
            layout: if layout == "per-channel" { Layout::PerChannel } else { Layout::Interleaved },
            readings: a.readings.unwrap_or(dataset::DEFAULT_READINGS),
        };
        let ds = match &a.dataset {
            Some(p) => Dataset::load_encoded(
                p,
                &a.channels,
                TextEncoding::parse(a.dataset_encoding.as_deref().unwrap_or("utf8"))?,
            )?,
            None if !a.channels.is_empty() => {
                Dataset::parse(dataset::DEFAULT_CSV, "built-in dataset", dataset::DEFAULT_NAME, &a.channels)?
            }
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
    Ok(())
}

/// The measurement configuration and the output options.
fn configure(a: &RunOptions, req: &mut Request, counter: &str) -> Result<(), String> {
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
    if let Some(us) = a.min_sample_us {
        cfg.min_sample_ns = us * 1000.0;
    }
    cfg.static_key = decode("key", &a.key)?;
    cfg.static_iv = decode("iv", &a.iv)?;
    req.out = a.out.clone();
    req.force = a.force;
    req.twin = a.twin;
    req.count_instructions = counter == "instructions";
    Ok(())
}

/// Turns the options into a [`Request`]: the explicit preset, or the default preset when
/// nothing is selected, with every given option overriding the preset's value. Everything is
/// checked (and files such as --dataset, --video and --power-profile are read) before
/// anything is measured. External engines (--engine) are started here.
pub fn resolve(a: &RunOptions) -> Result<Resolved, String> {
    let mut warnings = Vec::new();
    let mut info = Vec::new();
    // Validate the choice-valued options first (clap does this for the CLI already).
    let payload =
        a.payload.as_ref().map(|_| one_of("payload", &a.payload, &["random", "dataset", "both"])).transpose()?;
    let byte_order = one_of("byte-order", &a.byte_order, &["be", "le"])?;
    let layout = one_of("layout", &a.layout, &["interleaved", "per-channel"])?;
    let counter = one_of("counter", &a.counter, &["time", "instructions"])?;
    let repeat = a.repeat.unwrap_or(1);
    if repeat == 0 || repeat > 1000 {
        return Err(format!("--repeat: {repeat} is not a number of runs (1–1000)"));
    }
    let preset = find_preset(a)?;
    let mut req = match preset {
        Some(p) => Request::from_preset(p),
        None => Request::new(Default::default()),
    };
    if let Some(args) = &a.args {
        req.args = args.clone();
    }
    take_study_options(a, preset, &mut req)?;
    start_engines(a, preset, &mut req, &mut warnings)?;
    select(a, &mut req.selection, &mut info)?;
    payloads(a, &mut req.selection, payload, byte_order, layout)?;
    configure(a, &mut req, counter)?;
    Ok(Resolved { request: req, repeat, warnings, info })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse() {
        // expected values by hand: 16 bytes = 128 bits, 64 KiB = 524,288 bits
        assert_eq!(parse_size("1"), Ok(1));
        assert_eq!(parse_size("16B"), Ok(128));
        assert_eq!(parse_size("64KiB"), Ok(64 * 1024 * 8));
        assert!(parse_size("x").is_err());
        assert!(parse_size("-1").is_err());
    }

    #[test]
    fn options_override_the_preset_and_bad_values_are_named() {
        let o = RunOptions {
            preset: Some("quick".into()),
            reps: Some(3),
            sizes: vec!["2B".into()],
            kiv: vec!["rr".into()],
            seed: Some(7),
            key: Some("0001".into()),
            min_sample_us: Some(5.0),
            ..Default::default()
        };
        let r = resolve(&o).unwrap();
        assert_eq!(r.request.preset, Some("quick"));
        assert_eq!(r.request.config.reps, 3);
        assert_eq!(r.request.selection.sizes_bits, vec![16]);
        assert_eq!(r.request.config.seed, 7);
        assert_eq!(r.request.config.static_key, Some(vec![0, 1]));
        assert_eq!(r.request.config.min_sample_ns, 5000.0);
        assert_eq!(r.repeat, 1);
        for (bad, opt) in [
            (RunOptions { layout: Some("rows".into()), ..Default::default() }, "--layout"),
            (RunOptions { byte_order: Some("middle".into()), ..Default::default() }, "--byte-order"),
            (RunOptions { payload: Some("noise".into()), ..Default::default() }, "--payload"),
            (RunOptions { counter: Some("cycles".into()), ..Default::default() }, "--counter"),
            (RunOptions { repeat: Some(0), ..Default::default() }, "--repeat"),
            (RunOptions { key: Some("zz".into()), ..Default::default() }, "--key"),
            (RunOptions { preset: Some("nope".into()), ..Default::default() }, "--preset"),
            (RunOptions { weights: Some("battery".into()), ..Default::default() }, "--weights"),
        ] {
            let e = resolve(&bad).err().unwrap_or_default();
            assert!(e.starts_with(opt), "{opt}: {e}");
        }
    }
}
