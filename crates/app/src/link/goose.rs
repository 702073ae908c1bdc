//! `lwcbench link goose`: IEC 61850 GOOSE frames on a veth pair between two network namespaces,
//! plain and sealed (docs/link.md "GOOSE on the wire"), and the ICS study's "in the cycle" rows.
use std::path::PathBuf;
use std::time::SystemTime;

use clap::Args;
use lwcbench_engine::studies::ics;
use lwcbench_link::device::counter::{self, CounterStore};
use lwcbench_link::industrial::goose::{frame, measure, report, stop};
use lwcbench_link::industrial::{in_cycle_csv, CycleMeasurement};
use lwcbench_link::results::{self, LinkRecord, RunDir};
use lwcbench_link::wire::keys::MasterKey;
use lwcbench_link::wire::suite;

use super::options::{default_out, state_files};

/// Exit status when the privileges are missing (the run cannot start at all).
pub const EXIT_NO_ROOT: i32 = 2;

#[derive(Args)]
#[command(after_help = "Needs root (AF_PACKET raw sockets and two network namespaces joined by a veth pair).\n\
Examples:\n  lwcbench link goose\n  lwcbench link goose --cipher ChaCha20-Poly1305,AES-128-GCM --frames 10000 --size 1522 -o goose")]
pub struct GooseArgs {
    /// Cipher(s), comma-separated: "name/impl", a bare name, or a frame cipher id (`lwcbench link --list`).
    #[arg(long, default_value = "Ascon-AEAD128")]
    cipher: String,
    /// Measured frames of each kind (plain and sealed) per cipher and size, after 20 unmeasured ones.
    #[arg(long, default_value_t = 1000)]
    frames: usize,
    /// Frame size(s) in bytes, comma-separated: 160 (a trip frame) and/or 1522 (the largest tagged frame).
    #[arg(long, default_value = "160,1522")]
    size: String,
    /// Output directory (default ./lwcbench-results/<UTC time>-link-goose); the key and counter
    /// state stay in OUT/state across --force runs.
    #[arg(short, long)]
    pub(super) out: Option<PathBuf>,
    /// Replace a finished run in --out.
    #[arg(long)]
    force: bool,
    /// Master key file (created with mode 0600 if missing; default: the output directory's own key
    /// in $LWCBENCH_KEY_DIR or ~/.config/lwcbench/link-keys, never inside the results directory).
    #[arg(long)]
    key_file: Option<PathBuf>,
}

fn parse_sizes(s: &str) -> Result<Vec<usize>, String> {
    let mut out = Vec::new();
    for p in s.split(',') {
        let v: usize = p.trim().parse().map_err(|_| format!("--size: '{}' is not 160 or 1522", p.trim()))?;
        if !frame::SIZES.contains(&v) {
            return Err(format!("--size: {v} is not 160 or 1522 (the ICS study's GOOSE frames)"));
        }
        if !out.contains(&v) {
            out.push(v);
        }
    }
    Ok(out)
}

fn parse_ciphers(s: &str) -> Result<Vec<suite::Suite>, String> {
    let mut out: Vec<suite::Suite> = Vec::new();
    for c in s.split(',') {
        let x = suite::find(c)?;
        if x.kind != suite::Kind::Aead {
            return Err(format!(
                "--cipher: {} is a stream cipher; GOOSE is sealed with AEADs only (as the ICS study)",
                x.name()
            ));
        }
        if !out.iter().any(|o| o.id == x.id) {
            out.push(x);
        }
    }
    Ok(out)
}

/// Every (cipher, size) run on one veth pair.
fn measure_all(
    suites: &[suite::Suite],
    sizes: &[usize],
    frames: usize,
    master: &MasterKey,
    store: &CounterStore,
    accepted: &std::path::Path,
) -> Result<Vec<measure::GooseRun>, String> {
    stop::check()?;
    let v = measure::Veth::create()?;
    let mut runs = Vec::new();
    for s in suites {
        for &size in sizes {
            stop::check()?;
            let r = measure::run(&v, s, master, store, size, frames, Some(accepted))?;
            runs.push(r);
        }
    }
    v.pair.teardown().map_err(|e| e.to_string())?;
    Ok(runs)
}

pub fn goose(a: &GooseArgs) -> Result<(), String> {
    let suites = parse_ciphers(&a.cipher)?;
    let sizes = parse_sizes(&a.size)?;
    if a.frames == 0 || a.frames > measure::MAX_FRAMES {
        return Err(format!("--frames: {} is not in 1..={}", a.frames, measure::MAX_FRAMES));
    }
    if let Err(e) = measure::check_privileges() {
        eprintln!("error: {e}");
        std::process::exit(EXIT_NO_ROOT);
    }
    let out = a.out.clone().unwrap_or_else(|| default_out("link-goose"));
    let started = SystemTime::now();
    // From here a stop signal ends the measurement between two frames; see stopped_by.
    let signals = stop::StopSignals::install();
    let rd = RunDir::begin(&out, a.force, Some(lwcbench_report::link::render))?;
    let (key_file, counter_file) = state_files(&rd, &a.key_file, &None)?;
    let (master, store) =
        counter::open_session(&key_file, &counter_file, counter::DEFAULT_BLOCK).map_err(|e| rd.shown(&e))?;
    lwcbench_link::device::provision::refuse_provisioned(
        &key_file,
        &master,
        lwcbench_link::wire::frame::Family::Goose,
        &[lwcbench_link::industrial::goose::measure::APPID as u32],
    )
    .map_err(|e| rd.shown(&e))?;
    let accepted = lwcbench_link::gateway::accepted::beside_key(&key_file);
    let runs = measure_all(&suites, &sizes, a.frames, &master, &store, &accepted);
    drop(signals);
    if let Some(sig) = stop::received() {
        // the unfinished run's directory goes too; the namespaces went with measure_all
        drop((store, rd));
        stopped_by(sig);
    }
    let runs = runs.map_err(|e| rd.shown(&e))?;
    let ms: Vec<CycleMeasurement> = runs.iter().map(|r| r.measurement()).collect();
    let md = report::markdown(&runs);
    eprint!("{md}");
    let files = vec![
        ("link_goose.csv".to_string(), in_cycle_csv(&ms, &ics::default_budgets()).into_bytes()),
        ("link_goose_runs.csv".to_string(), results::to_csv(&report::run_rows(&runs))),
        ("summary.md".to_string(), md.into_bytes()),
    ];
    let faults: u64 = runs.iter().map(|r| r.faults()).sum();
    let config = serde_json::json!({
        "ciphers": suites.iter().map(|s| s.name()).collect::<Vec<_>>(),
        "sizes": sizes, "frames": a.frames, "warmup": measure::WARMUP, "appid": measure::APPID,
        "veth_mtu": measure::VETH_MTU, "path": measure::PATH, "replay_window": measure::WINDOW,
        "sealed_ethertype": "0x88B5", "vlan_priority": frame::PRIORITY,
    });
    let notes = if faults > 0 {
        vec![format!("{faults} frames were lost, duplicated, refused or altered (link_goose_runs.csv)")]
    } else {
        vec![]
    };
    let mut rec = LinkRecord::new(
        "lwcbench link goose".into(),
        "link-goose".into(),
        lwcbench_link::session::new_session(),
        false,
        config,
        started,
        notes,
    );
    rd.finish(&files, &mut rec)?;
    if faults > 0 {
        return Err(format!(
            "link goose: {faults} frames were not delivered exactly once and intact (see {}/link_goose_runs.csv)",
            out.display()
        ));
    }
    println!("wrote {}", out.display());
    Ok(())
}

/// A run stopped by `sig`: its namespaces and veth pair are removed by now; say so and end
/// the process by the same signal.
fn stopped_by(sig: i32) -> ! {
    eprintln!(
        "error: link goose: stopped by {}; its network namespaces and veth pair are removed, no results written",
        stop::name(sig)
    );
    stop::die_by(sig)
}

/// The ICS study's link ciphers measured in the cycle (AEADs the study and the link share).
pub const IN_CYCLE_CIPHERS: [&str; 3] = ["Ascon-AEAD128", "ChaCha20-Poly1305", "AES-128-GCM"];

/// GOOSE in the cycle for `lwcbench run --preset ics-latency`: the ciphers of
/// [`IN_CYCLE_CIPHERS`] the run selects, 160 and 1522 B, `frames` of each kind; a fresh key in
/// memory (never written, so its nonces cannot meet another run's) and a counter state in a
/// private temporary directory, removed afterwards.
pub fn measure_goose(selected: &[String], frames: usize) -> Result<Vec<CycleMeasurement>, String> {
    let names: Vec<&str> =
        IN_CYCLE_CIPHERS.iter().copied().filter(|c| selected.iter().any(|s| s.split('/').next() == Some(*c))).collect();
    if names.is_empty() {
        return Err(format!("the run selects none of {}", IN_CYCLE_CIPHERS.join(", ")));
    }
    measure::check_privileges()?;
    let suites = parse_ciphers(&names.join(","))?;
    let dir =
        std::env::temp_dir().join(format!("lwcbench-goose-{}-{}", std::process::id(), lwcbench_link::clock::now_ns()));
    std::fs::create_dir(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let master = MasterKey::random();
    let signals = stop::StopSignals::install();
    let r = CounterStore::open(&dir.join("counters"), counter::DEFAULT_BLOCK, &master).and_then(|store| {
        let n = frames.clamp(1, measure::MAX_FRAMES);
        measure_all(&suites, &frame::SIZES, n, &master, &store, &dir.join("accepted"))
    });
    drop(signals);
    let _ = std::fs::remove_dir_all(&dir);
    if let Some(sig) = stop::received() {
        stopped_by(sig);
    }
    let runs = r?;
    if let Some(bad) = runs.iter().find(|r| r.faults() > 0) {
        return Err(format!(
            "{} frames of {} at {} B were not delivered exactly once",
            bad.faults(),
            bad.cipher,
            bad.bytes
        ));
    }
    Ok(runs.iter().map(|r| r.measurement()).collect())
}

/// The "in the cycle" rows of an ics-latency run: GOOSE and Modbus/TCP, and a note for each
/// protocol that could not be measured (no root for GOOSE, …).
pub fn in_cycle(selected: &[String], frames: usize, budgets: &[ics::Budget]) -> lwcbench_engine::studies::InCycle {
    let mut ms = Vec::new();
    let mut notes = Vec::new();
    match measure_goose(selected, frames) {
        Ok(m) => ms.extend(m),
        Err(e) => {
            eprintln!("lwcbench: warning: ics-latency: no GOOSE rows in the cycle: {e}");
            notes.push(format!("GOOSE rows missing: {e}"));
        }
    }
    match measure_modbus(selected, frames) {
        Ok(m) => ms.extend(m),
        Err(e) => {
            eprintln!("lwcbench: warning: ics-latency: no Modbus/TCP rows in the cycle: {e}");
            notes.push(format!("Modbus/TCP rows missing: {e}"));
        }
    }
    let csv = (!ms.is_empty()).then(|| in_cycle_csv(&ms, budgets));
    lwcbench_engine::studies::InCycle { csv, notes }
}

/// Modbus/TCP in the cycle for the ics-latency preset: the selected ciphers of
/// [`IN_CYCLE_CIPHERS`], the study's three ADU sizes, `polls` back-to-back poll pairs each (plain
/// and sealed alternate); a key made for the measurement and never stored, as for GOOSE.
pub fn measure_modbus(selected: &[String], polls: usize) -> Result<Vec<CycleMeasurement>, String> {
    use lwcbench_link::industrial::modbus::measure;
    let names: Vec<&str> =
        IN_CYCLE_CIPHERS.iter().copied().filter(|c| selected.iter().any(|s| s.split('/').next() == Some(*c))).collect();
    if names.is_empty() {
        return Err(format!("the run selects none of {}", IN_CYCLE_CIPHERS.join(", ")));
    }
    let opts = measure::Options { interval: std::time::Duration::ZERO, ..Default::default() };
    let mut out = Vec::new();
    for name in names {
        out.extend(measure::measure_modbus(name, polls.clamp(1, measure::MAX_POLLS), &opts)?);
    }
    Ok(out)
}
