//! `lwcbench link chaos`: faults and their proof (docs/link.md "Faults").
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use clap::Args;
use lwcbench_link::experiments::chaos;
use lwcbench_link::input;
use lwcbench_link::results::{self, RunDir};
use lwcbench_link::wire::suite;

use super::options::{check_batch, default_out, parse_duration, record};

#[derive(Args)]
pub(super) struct ChaosArgs {
    #[arg(long, default_value = "Ascon-AEAD128")]
    cipher: String,
    #[command(flatten)]
    gate: super::args::GateArgs,
    /// Device processes, 1..=64.
    #[arg(long, default_value_t = 4)]
    devices: u32,
    /// Report interval of every device (e.g. 2ms).
    #[arg(long, default_value = "2ms")]
    interval: String,
    /// Least run time (e.g. 40s, 10m); the faults may make the run longer.
    #[arg(long, default_value = "30s")]
    duration: String,
    /// Seed of the fault plan (order, target devices, moments, down times).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Times the gateway process is SIGKILLed and restarted.
    #[arg(long, default_value_t = 3)]
    gateway_kills: u32,
    /// Times mosquitto is SIGKILLed and restarted.
    #[arg(long, default_value_t = 3)]
    broker_kills: u32,
    /// Times a (random) device process is SIGKILLed and restarted.
    #[arg(long, default_value_t = 4)]
    device_kills: u32,
    /// Times the gateway is SIGKILLed and then, while it is down, mosquitto too (overlapping faults).
    #[arg(long, default_value_t = 2)]
    double_kills: u32,
    /// No faults at all (a soak run): same as all three kill counts 0.
    #[arg(long)]
    no_faults: bool,
    /// One forged frame (bad tag / unknown device / truncated, in turn) this often; 0 = none.
    #[arg(long, default_value = "50ms")]
    forge_every: String,
    /// The mosquitto binary.
    #[arg(long, default_value = "/usr/sbin/mosquitto")]
    mosquitto: PathBuf,
    /// Store: SQLite path (default OUT/work/chaos.db), postgres://USER@HOST:PORT/DB or
    /// 'host=HOST user=USER dbname=DB'.
    #[arg(long)]
    store: Option<String>,
    /// Gateway replay window (counters per device).
    #[arg(long, default_value_t = 65536)]
    window: u64,
    #[arg(long, default_value_t = 256)]
    batch: usize,
    /// Devices re-publish the frames of this last stretch after every reconnect (0 = none: shows
    /// what a broker restart loses without it).
    #[arg(long, default_value = "3s")]
    resend_window: String,
    /// Gateway processes (1..=8): more than 1 run as `link gateway --shared chaos --member gI`,
    /// one MQTT v5 shared subscription with the store as replay authority; a gateway fault hits
    /// one of them.
    #[arg(long, default_value_t = 1)]
    gateways: u32,
    /// Longest wait, after the devices stopped, for the store to hold every captured reading.
    #[arg(long, default_value = "30s")]
    drain_timeout: String,
    /// Timeline sampling period (gateway/broker memory, rows, errors).
    #[arg(long, default_value = "1s")]
    sample_every: String,
    /// Output directory (default ./lwcbench-results/<UTC time>-link-chaos).
    #[arg(short, long)]
    pub(super) out: Option<PathBuf>,
    #[arg(long)]
    force: bool,
}

pub(super) fn chaos(a: &ChaosArgs) -> Result<(), String> {
    let s = suite::find(&a.cipher)?;
    a.gate.gate().check(&s)?;
    let interval = parse_duration(&a.interval, "--interval")?;
    if interval < Duration::from_micros(100) {
        return Err(format!("--interval: '{}' is below 100us (one process per device)", a.interval));
    }
    let duration = parse_duration(&a.duration, "--duration")?;
    let forge = parse_duration(&a.forge_every, "--forge-every")?;
    if !forge.is_zero() && forge < Duration::from_millis(1) {
        return Err("--forge-every: at least 1ms (or 0 for none)".into());
    }
    let drain = parse_duration(&a.drain_timeout, "--drain-timeout")?;
    let resend_window = parse_duration(&a.resend_window, "--resend-window")?;
    let sample = parse_duration(&a.sample_every, "--sample-every")?;
    if sample < Duration::from_millis(100) {
        return Err("--sample-every: at least 100ms".into());
    }
    lwcbench_link::gateway::replay::ReplayWindow::new(a.window)?;
    check_batch(a.batch)?;
    if a.devices == 0 || a.devices > 64 {
        return Err(format!("--devices: {} is not in 1..=64 (one process each)", a.devices));
    }
    let mosquitto = if a.mosquitto.is_file() {
        a.mosquitto.clone()
    } else if a.mosquitto == Path::new("/usr/sbin/mosquitto") && Path::new("/usr/bin/mosquitto").is_file() {
        PathBuf::from("/usr/bin/mosquitto")
    } else {
        return Err(format!("--mosquitto: {} not found (Debian: apt-get install mosquitto)", a.mosquitto.display()));
    };
    let exe = crate::lwcbench_exe()?;
    let (g, b, d, gb) =
        if a.no_faults { (0, 0, 0, 0) } else { (a.gateway_kills, a.broker_kills, a.device_kills, a.double_kills) };
    if g as u64 + b as u64 + d as u64 + gb as u64 > 1000 {
        return Err("--gateway-kills + --broker-kills + --device-kills + --double-kills: at most 1000".into());
    }
    if let Some(s) = &a.store {
        input::no_control("--store", s)?;
    }
    let out = a.out.clone().unwrap_or_else(|| default_out("link-chaos"));
    let started = SystemTime::now();
    let failures;
    // Written beside --out and swapped in whole; the work directory (captures, store, broker
    // data, logs) is part of the run.
    let rd = RunDir::begin(&out, a.force, Some(lwcbench_report::link::render))?;
    {
        let cfg = chaos::ChaosConfig {
            exe,
            dir: rd.stage().join("work"),
            mosquitto,
            suite: s.clone(),
            devices: a.devices,
            interval,
            duration,
            seed: a.seed,
            gateway_kills: g,
            broker_kills: b,
            device_kills: d,
            double_kills: gb,
            forge_every: (!forge.is_zero()).then_some(forge),
            window: a.window,
            batch: a.batch,
            drain_timeout: drain,
            sample_every: sample,
            store: a.store.clone(),
            resend_window,
            gateways: a.gateways,
        };
        let o = chaos::run(&cfg).map_err(|e| rd.shown(&e))?;
        let md = chaos::markdown(&o);
        eprint!("{md}");
        failures = o.verdict.failures();
        let files = vec![
            ("chaos_faults.csv".to_string(), results::to_csv(&o.faults)),
            ("chaos_table.csv".to_string(), results::to_csv(&o.table)),
            ("chaos_timeline.csv".to_string(), results::to_csv(&o.timeline)),
            ("summary.md".to_string(), md.into_bytes()),
        ];
        let config = serde_json::json!({
            "cipher": s.name(), "devices": a.devices, "interval_s": interval.as_secs_f64(),
            "duration_s": duration.as_secs_f64(), "seed": a.seed,
            "faults": {"gateway_kills": g, "broker_kills": b, "device_kills": d, "double_kills": gb},
            "forge_every_s": forge.as_secs_f64(), "resend_window_s": resend_window.as_secs_f64(), "gateways": a.gateways, "window": a.window, "batch": a.batch,
            "broker": format!("mosquitto on 127.0.0.1:{} (persistence on, autosave_interval 1, max_queued_messages 0)", o.broker_port),
            "store": rd.shown(&input::redact(&cfg.store.clone().unwrap_or_else(|| cfg.dir.join("chaos.db").display().to_string()))),
            "session": o.session,
            "verdict": o.verdict,
            "delivery_rule": "a reading counts as sent once its frame is in the device's capture file; see docs/link.md Faults",
        });
        let mut notes = lwcbench_link::wire::gate::notes(std::slice::from_ref(&s));
        notes.extend(failures.iter().cloned());
        let mut rec = record("chaos", config, started, notes);
        rd.finish(&files, &mut rec)?;
    }
    if !failures.is_empty() {
        // The result files stay (they are the evidence); the error says where.
        return Err(format!("chaos: {} (see {})", failures.join("; "), out.display()));
    }
    println!("wrote {}", out.display());
    Ok(())
}
