//! `lwcbench link gateway | chaos | overload` (docs/link.md "Faults", "Overload").
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use clap::Args;
use lwcbench_link::experiments::{chaos, overload};
use lwcbench_link::gateway::process as gateway_proc;
use lwcbench_link::input;
use lwcbench_link::results::{self, LinkRecord, RunDir};
use lwcbench_link::transport::broker;
use lwcbench_link::wire::suite;

use super::options::{check_batch, default_out, parse_duration, transport_of};

#[derive(Args)]
pub struct GatewayArgs {
    /// Broker mqtt://HOST:PORT.
    #[arg(long)]
    broker: String,
    /// Session id (topic namespace lwcbench/link/SESSION/+; 1 to 64 of A-Z a-z 0-9 - _); the MQTT
    /// client id derives from it, so a restarted gateway resumes the same persistent session.
    #[arg(long)]
    session: String,
    /// Master key file (must exist, mode 0600).
    #[arg(long)]
    key_file: PathBuf,
    /// Provisioned device ids, e.g. 0-7 or 0-3,9.
    #[arg(long)]
    devices: String,
    /// Store: a SQLite file path or postgres://USER@HOST:PORT/DB.
    #[arg(long)]
    store: String,
    #[arg(long, default_value = "Ascon-AEAD128")]
    cipher: String,
    /// Replay window size in counters per device (1..=1048576; devices × window bitmaps ≤ 1 GiB).
    #[arg(long, default_value_t = 1024)]
    window: u64,
    /// Most frames stored per transaction.
    #[arg(long, default_value_t = 512)]
    batch: usize,
    /// Append a JSON line of counters and memory to this file every --stats-every.
    #[arg(long)]
    stats: Option<PathBuf>,
    #[arg(long, default_value = "500ms")]
    stats_every: String,
    /// Join the MQTT v5 shared subscription $share/GROUP/lwcbench/link/SESSION/+ as one of
    /// several gateway processes (on one host or many); the store is the replay authority, so
    /// it must be one they all reach (PostgreSQL; an SQLite file for one host). Needs --member.
    #[arg(long, value_name = "GROUP")]
    shared: Option<String>,
    /// This process's name in the --shared group (1 to 64 of A-Z a-z 0-9 - _), unique in the
    /// group and the same across restarts: the broker keeps what it handed this member for it.
    #[arg(long, value_name = "NAME")]
    member: Option<String>,
}

#[derive(Args)]
pub struct ChaosArgs {
    #[arg(long, default_value = "Ascon-AEAD128")]
    cipher: String,
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
    /// Store: SQLite path (default OUT/work/chaos.db) or postgres://USER@HOST:PORT/DB.
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
    out: Option<PathBuf>,
    #[arg(long)]
    force: bool,
}

#[derive(Args)]
pub struct OverloadArgs {
    #[arg(long, default_value = "Ascon-AEAD128")]
    cipher: String,
    #[arg(long, default_value_t = 8)]
    devices: u32,
    /// Offered rates (readings/s over all devices), comma-separated, one step each.
    #[arg(long, default_value = "5000,10000,20000,40000,80000")]
    rates: String,
    /// Length of one step at its offered rate (readings per step = rate × step).
    #[arg(long, default_value = "3s")]
    step: String,
    /// mqtt or udp.
    #[arg(long, default_value = "mqtt")]
    transport: String,
    /// External broker mqtt://HOST:PORT (default: embedded).
    #[arg(long)]
    broker: Option<String>,
    #[arg(long, default_value_t = 512)]
    batch: usize,
    #[arg(long, default_value_t = 8)]
    connections: usize,
    /// Sustained means stored ≥ KEEP × offered (and nothing missing, p99 ≤ --max-p99).
    #[arg(long, default_value_t = 0.95)]
    keep: f64,
    #[arg(long, default_value = "100ms")]
    max_p99: String,
    #[arg(short, long)]
    out: Option<PathBuf>,
    #[arg(long)]
    force: bool,
}

pub fn gateway(a: &GatewayArgs) -> Result<(), String> {
    let s = suite::find(&a.cipher)?;
    let b = broker::parse_url(&a.broker)?;
    let devices = gateway_proc::parse_devices(&a.devices)?;
    lwcbench_link::gateway::replay::ReplayWindow::new(a.window)?;
    check_batch(a.batch)?;
    input::check_session(&a.session)?;
    input::no_control("--store", &a.store)?;
    let every = parse_duration(&a.stats_every, "--stats-every")?;
    if every < Duration::from_millis(10) {
        return Err("--stats-every: at least 10ms".into());
    }
    let shared = match (&a.shared, &a.member) {
        (Some(g), Some(m)) => Some(lwcbench_link::gateway::shared::Member::new(g, m)?),
        (Some(_), None) => {
            return Err("--shared needs --member NAME (unique in the group, the same when this gateway restarts)".into())
        }
        (None, Some(_)) => return Err("--member is only for --shared GROUP".into()),
        (None, None) => None,
    };
    let master = lwcbench_link::wire::keys::MasterKey::read(&a.key_file)?;
    let last = gateway_proc::GatewayProcess {
        suite: s,
        devices,
        window: a.window,
        batch: a.batch,
        store: a.store.clone(),
        session: a.session.clone(),
        broker: b,
        master,
        stats: a.stats.clone(),
        stats_every: every,
        shared,
    }
    .run(|| {
        use std::io::Write;
        println!("ready");
        let _ = std::io::stdout().flush();
    })?;
    println!("{last}");
    Ok(())
}

fn record(kind: &str, config: serde_json::Value, started: SystemTime, notes: Vec<String>) -> LinkRecord {
    LinkRecord::new(
        format!("lwcbench link {kind}"),
        format!("link-{kind}"),
        lwcbench_link::session::new_session(),
        false,
        config,
        started,
        notes,
    )
}

pub fn chaos(a: &ChaosArgs) -> Result<(), String> {
    let s = suite::find(&a.cipher)?;
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
    let exe = std::env::current_exe().map_err(|e| format!("cannot find the lwcbench binary: {e}"))?;
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
    let rd = RunDir::begin(&out, a.force)?;
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
        let mut rec = record("chaos", config, started, failures.clone());
        rd.finish(&files, &mut rec)?;
    }
    if !failures.is_empty() {
        // The result files stay (they are the evidence).
        eprintln!("error: chaos: {} (see {})", failures.join("; "), out.display());
        std::process::exit(1);
    }
    println!("wrote {}", out.display());
    Ok(())
}

pub fn overload(a: &OverloadArgs) -> Result<(), String> {
    let s = suite::find(&a.cipher)?;
    let rates = a
        .rates
        .split(',')
        .map(|r| {
            let v = r
                .trim()
                .parse::<f64>()
                .map_err(|_| format!("--rates: '{}' is not a number of readings/s", input::shown(r)))?;
            input::interval_for_rate("--rates", v, a.devices).map(|_| v)
        })
        .collect::<Result<Vec<_>, _>>()?;
    let step = parse_duration(&a.step, "--step")?;
    if step < Duration::from_millis(100) || step > Duration::from_secs(600) {
        return Err(format!("--step: '{}' is not between 100ms and 10m", a.step));
    }
    if rates.iter().any(|r| r * step.as_secs_f64() > 50_000_000.0) {
        return Err("--rates × --step: more than 50,000,000 readings in one step".into());
    }
    if a.devices == 0 || a.devices > 100_000 {
        return Err(format!("--devices: {} is not in 1..=100000", a.devices));
    }
    check_batch(a.batch)?;
    if a.connections == 0 || a.connections > 10_000 {
        return Err(format!("--connections: {} is not in 1..=10000", a.connections));
    }
    if !(a.keep > 0.0 && a.keep <= 1.0) {
        return Err(format!("--keep: {} is not in (0, 1]", a.keep));
    }
    let max_p99 = parse_duration(&a.max_p99, "--max-p99")?;
    let transport = transport_of(&a.transport, a.broker.as_deref())?;
    let out = a.out.clone().unwrap_or_else(|| default_out("link-overload"));
    let started = SystemTime::now();
    let rd = RunDir::begin(&out, a.force)?;
    {
        let cfg = overload::OverloadConfig {
            suite: s.clone(),
            devices: a.devices,
            rates,
            step,
            transport: transport.clone(),
            dir: rd.stage().join("work"),
            batch: a.batch,
            connections: a.connections,
            keep: a.keep,
            max_p99,
        };
        let rows = overload::run(&cfg, |r| {
            eprintln!(
                "offered {:.0}/s: sent {:.0}/s stored {:.0}/s missing {} p99 {:.1} ms peak RSS {:.1} MiB — {}",
                r.offered_per_s,
                r.sent_per_s,
                r.stored_per_s,
                r.missing,
                r.e2e_p99_ms,
                r.rss_peak_mb,
                if r.sustained { "sustained" } else { "NOT sustained" }
            )
        })
        .map_err(|e| rd.shown(&e))?;
        std::fs::remove_dir_all(rd.stage().join("work"))
            .map_err(|e| format!("--out: {}: cannot remove the work directory: {e}", out.display()))?;
        let md = overload::markdown(&rows, &cfg);
        eprint!("{md}");
        let files = vec![
            ("link_overload.csv".to_string(), results::to_csv(&rows)),
            ("summary.md".to_string(), md.into_bytes()),
        ];
        let config = serde_json::json!({
            "cipher": s.name(), "devices": a.devices, "step_s": step.as_secs_f64(),
            "transport": transport.describe(), "batch": a.batch, "connections": a.connections,
            "keep": a.keep, "max_p99_s": max_p99.as_secs_f64(),
            "sustainable_per_s": overload::sustainable(&rows),
        });
        let mut rec = record("overload", config, started, vec![]);
        rd.finish(&files, &mut rec)?;
    }
    println!("wrote {}", out.display());
    Ok(())
}
