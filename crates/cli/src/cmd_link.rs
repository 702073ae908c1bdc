//! `lwcbench link`: the chosen cipher on a sensor → broker → gateway → store path (docs/link.md).
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use clap::{Args, Subcommand};
use lwcbench_link::broker;
use lwcbench_link::results::{self, LinkRecord};
use lwcbench_link::run::{self, LinkConfig, Transport};
use lwcbench_link::suite;

#[derive(Args)]
#[command(
    args_conflicts_with_subcommands = true,
    after_help = "Examples:\n  lwcbench link\n  lwcbench link --cipher Ascon-AEAD128,DRACO --devices 100 --messages 1000 --rate max\n  \
lwcbench link --transport udp --interval 1ms\n  lwcbench link --broker mqtt://127.0.0.1:1883 --store postgres://user@127.0.0.1:5432/db\n  \
lwcbench link --list"
)]
pub struct LinkArgs {
    #[command(subcommand)]
    sub: Option<LinkSub>,
    #[command(flatten)]
    session: SessionArgs,
}

#[derive(Subcommand)]
enum LinkSub {
    /// Run ONE device as its own process (publishes to a broker; for restart/kill tests).
    Device(DeviceArgs),
}

#[derive(Args)]
struct SessionArgs {
    /// Cipher(s), comma-separated: "name/impl", a bare name, or a frame cipher id (see --list).
    #[arg(long, default_value = "Ascon-AEAD128")]
    cipher: String,
    /// Simulated sensors (async tasks in this process), 1..=100000.
    #[arg(long, default_value_t = 8)]
    devices: u32,
    /// Readings each device sends.
    #[arg(long, default_value_t = 100)]
    messages: u64,
    /// Report interval per device (e.g. 10ms, 1s, 500us). Ignored with --rate.
    #[arg(long, default_value = "10ms")]
    interval: String,
    /// Total rate over all devices: readings/s, or `max` (as fast as possible). Overrides --interval.
    #[arg(long)]
    rate: Option<String>,
    /// mqtt (QoS 1, persistent sessions) or udp (plain datagrams; loss is counted).
    #[arg(long, default_value = "mqtt")]
    transport: String,
    /// External broker mqtt://HOST:PORT (default: an embedded broker on a free loopback port).
    #[arg(long)]
    broker: Option<String>,
    /// Store: a SQLite file path (default OUT/link.db) or postgres://USER@HOST:PORT/DB.
    #[arg(long)]
    store: Option<String>,
    /// Replay window size in counters per device (1..=1048576).
    #[arg(long, default_value_t = 1024)]
    window: u64,
    /// Counters reserved per durable write of the counter state.
    #[arg(long, default_value_t = lwcbench_link::counter::DEFAULT_BLOCK)]
    counter_block: u64,
    /// Master key file (created with mode 0600 if missing; default OUT/state/master.key).
    #[arg(long)]
    key_file: Option<PathBuf>,
    /// Counter state file (default OUT/state/counters).
    #[arg(long)]
    counter_state: Option<PathBuf>,
    /// Publisher connections the devices share (like sensors behind a concentrator).
    #[arg(long, default_value_t = 8)]
    connections: usize,
    /// Most frames the gateway stores per transaction.
    #[arg(long, default_value_t = 512)]
    batch: usize,
    /// Seconds to wait for frames still in flight after the devices finish.
    #[arg(long, default_value_t = 20.0)]
    drain_timeout: f64,
    /// Sensor dataset CSV (default: the built-in office-occupancy data); one row = one reading.
    #[arg(long)]
    dataset: Option<PathBuf>,
    /// UNSAFE: stream ciphers without integrity (no tag); marked unsafe in every output.
    #[arg(long)]
    unsafe_no_integrity: bool,
    /// Output directory (default ./lwcbench-results/<UTC time>-link).
    #[arg(short, long)]
    out: Option<PathBuf>,
    /// Replace a finished run in --out.
    #[arg(long)]
    force: bool,
    /// List the link's ciphers (frame id, protection, overhead) and exit.
    #[arg(long)]
    list: bool,
}

#[derive(Args)]
struct DeviceArgs {
    /// Device id.
    #[arg(long)]
    id: u32,
    /// Session id (topic namespace) shared with the gateway.
    #[arg(long)]
    session: String,
    /// Broker mqtt://HOST:PORT.
    #[arg(long)]
    broker: String,
    /// Master key file (must exist, mode 0600).
    #[arg(long)]
    key_file: PathBuf,
    /// Counter state file of this device (created if missing).
    #[arg(long)]
    counter_state: PathBuf,
    #[arg(long, default_value = "Ascon-AEAD128")]
    cipher: String,
    #[arg(long, default_value_t = 100)]
    messages: u64,
    /// Report interval (e.g. 1ms), or 0 for as fast as possible.
    #[arg(long, default_value = "1ms")]
    interval: String,
    #[arg(long, default_value_t = lwcbench_link::counter::DEFAULT_BLOCK)]
    counter_block: u64,
    /// Append every frame (hex, one per line) to this file before sending it.
    #[arg(long)]
    capture: Option<PathBuf>,
}

/// "10ms", "1s", "500us", "2m", "0".
pub fn parse_duration(s: &str, opt: &str) -> Result<Duration, String> {
    let t = s.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let v: f64 = num.parse().map_err(|_| format!("{opt}: '{s}' is not a duration (e.g. 10ms, 1s, 500us)"))?;
    let mult = match unit {
        "ns" => 1e-9,
        "us" | "µs" => 1e-6,
        "ms" => 1e-3,
        "s" | "" if v == 0.0 || !unit.is_empty() => 1.0,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        _ => return Err(format!("{opt}: '{s}' needs a unit (ns, us, ms, s, m, h)")),
    };
    let secs = v * mult;
    if !secs.is_finite() || !(0.0..=86_400.0).contains(&secs) {
        return Err(format!("{opt}: '{s}' is not between 0 and 24 h"));
    }
    Ok(Duration::from_secs_f64(secs))
}

fn default_out() -> PathBuf {
    let t = lwcbench_engine::results::rfc3339(SystemTime::now()).replace(':', "-");
    PathBuf::from("lwcbench-results").join(format!("{t}-link"))
}

fn list() {
    println!("{:>3}  {:<30} {:>8}  protection", "id", "cipher", "overhead");
    for s in suite::offered() {
        println!("{:>3}  {:<30} {:>6} B  {}", s.id, s.name(), s.overhead(false), s.protection(false));
    }
}

pub fn run(a: &LinkArgs) -> Result<(), String> {
    match &a.sub {
        Some(LinkSub::Device(d)) => device(d),
        None => session(&a.session),
    }
}

fn transport_of(a_transport: &str, broker_url: Option<&str>) -> Result<Transport, String> {
    match a_transport {
        "mqtt" => Ok(Transport::Mqtt(match broker_url {
            Some(u) => broker::parse_url(u)?,
            None => broker::embedded()?,
        })),
        "udp" if broker_url.is_some() => Err("--broker applies to --transport mqtt only".into()),
        "udp" => Ok(Transport::Udp),
        t => Err(format!("--transport: '{t}' is not mqtt or udp")),
    }
}

fn session(a: &SessionArgs) -> Result<(), String> {
    if a.list {
        list();
        return Ok(());
    }
    let suites = a.cipher.split(',').map(suite::find).collect::<Result<Vec<_>, _>>()?;
    let interval = match a.rate.as_deref() {
        Some("max") => None,
        Some(r) => {
            let v: f64 = r.parse().map_err(|_| format!("--rate: '{r}' is not a number of readings/s or max"))?;
            if !(v.is_finite() && v > 0.0 && v <= 10_000_000.0) {
                return Err(format!("--rate: {r} readings/s is not in (0, 10,000,000]"));
            }
            Some(Duration::from_secs_f64(a.devices.max(1) as f64 / v))
        }
        None => {
            let d = parse_duration(&a.interval, "--interval")?;
            (!d.is_zero()).then_some(d)
        }
    };
    if !(a.drain_timeout.is_finite() && a.drain_timeout > 0.0 && a.drain_timeout <= 3600.0) {
        return Err(format!("--drain-timeout: {} is not in (0, 3600] seconds", a.drain_timeout));
    }
    if a.batch == 0 || a.batch > 100_000 {
        return Err(format!("--batch: {} is not in 1..=100000", a.batch));
    }
    if a.connections == 0 || a.connections > 10_000 {
        return Err(format!("--connections: {} is not in 1..=10000", a.connections));
    }
    if a.devices == 0 || a.devices > 100_000 {
        return Err(format!("--devices: {} is not in 1..=100000", a.devices));
    }
    if a.messages == 0 || a.messages.saturating_mul(a.devices as u64) > 50_000_000 {
        return Err(format!("--messages: {} × {} devices is not in 1..=50,000,000 readings", a.messages, a.devices));
    }
    lwcbench_link::replay::ReplayWindow::new(a.window)?;
    let ds = match &a.dataset {
        Some(p) => lwcbench_engine::dataset::Dataset::load(p, &[])?,
        None => lwcbench_engine::dataset::Dataset::builtin(),
    };
    let transport = transport_of(&a.transport, a.broker.as_deref())?;
    let out = a.out.clone().unwrap_or_else(default_out);
    let created = !out.exists();
    lwcbench_engine::results::prepare_dir(&out, a.force)?;
    let r = session_in(a, &out, &suites, interval, &ds, transport);
    if r.is_err() && created {
        // Nothing half-written: a directory this run created goes away with its failure.
        let _ = std::fs::remove_dir_all(&out);
    }
    r
}

fn session_in(
    a: &SessionArgs,
    out: &std::path::Path,
    suites: &[suite::Suite],
    interval: Option<Duration>,
    ds: &lwcbench_engine::dataset::Dataset,
    transport: Transport,
) -> Result<(), String> {
    let readings = run::dataset_readings(ds);
    let state = out.join("state");
    std::fs::create_dir_all(&state).map_err(|e| format!("--out: cannot create {}: {e}", state.display()))?;
    let key_file = a.key_file.clone().unwrap_or_else(|| state.join("master.key"));
    let counter_file = a.counter_state.clone().unwrap_or_else(|| state.join("counters"));
    let store = a.store.clone().unwrap_or_else(|| out.join("link.db").display().to_string());
    let started = SystemTime::now();
    let session = run::new_session();
    let mut summary = Vec::new();
    let mut messages = Vec::new();
    for s in suites {
        let cfg = LinkConfig {
            suite: s.clone(),
            unauthenticated: a.unsafe_no_integrity,
            devices: a.devices,
            messages: a.messages,
            interval,
            transport: transport.clone(),
            store: store.clone(),
            window: a.window,
            counter_block: a.counter_block,
            key_file: key_file.clone(),
            counter_file: counter_file.clone(),
            connections: a.connections,
            drain_timeout: Duration::from_secs_f64(a.drain_timeout),
            readings: readings.clone(),
            batch: a.batch,
            session: format!("{session}-{}", s.id),
        };
        let o = run::run(&cfg)?;
        let msgs = results::message_rows(&s.name(), &o);
        let row = results::summary_row(s, a.unsafe_no_integrity, a.devices, &o, &msgs);
        eprintln!(
            "{}{}: sent {} stored {} missing {} refused {} — {} msgs/s, e2e p50 {} µs p99 {} µs, wire {:.0} B ({:+.0} B)",
            if a.unsafe_no_integrity { "UNSAFE (no integrity) " } else { "" },
            row.cipher,
            row.sent,
            row.stored,
            row.missing,
            o.tally.refused_total(),
            row.msgs_per_s,
            row.e2e_p50_us,
            row.e2e_p99_us,
            row.wire_bytes,
            row.overhead_bytes
        );
        summary.push(row);
        messages.extend(msgs);
    }
    let md = results::summary_markdown(&summary);
    let mut files = vec![
        ("link_summary.csv".to_string(), results::to_csv(&summary)),
        ("link_messages.csv".to_string(), results::to_csv(&messages)),
        ("summary.md".to_string(), md.into_bytes()),
    ];
    files.sort_by(|x, y| x.0.cmp(&y.0));
    let mut notes = vec!["latency parts and energy figures: see docs/link.md".to_string()];
    if a.unsafe_no_integrity {
        notes.insert(0, "UNSAFE: --unsafe-no-integrity: frames carried no tag; forged frames would be accepted".into());
    }
    let mut rec = LinkRecord {
        tool: "lwcbench link".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        kind: "link".into(),
        args: std::env::args().collect(),
        session,
        unsafe_no_integrity: a.unsafe_no_integrity,
        config: serde_json::json!({
            "ciphers": suites.iter().map(|s| s.name()).collect::<Vec<_>>(),
            "devices": a.devices, "messages_per_device": a.messages,
            "interval_s": interval.map(|d| d.as_secs_f64()),
            "transport": transport.describe(),
            "store": summary.first().map(|r| r.store.clone()),
            "window": a.window, "counter_block": a.counter_block,
            "key_file": key_file.display().to_string(), "counter_state": counter_file.display().to_string(),
            "connections": a.connections, "batch": a.batch,
            "dataset": ds.name, "channels": ds.channels.len(),
        }),
        machine: lwcbench_engine::machine::Machine::detect(),
        build: lwcbench_engine::machine::Build::current(lwcbench_catalog::build_info()),
        started_utc: lwcbench_engine::results::rfc3339(started),
        finished_utc: lwcbench_engine::results::rfc3339(SystemTime::now()),
        files: vec![],
        notes,
    };
    results::write_dir(out, &files, &mut rec)?;
    println!("wrote {}", out.display());
    Ok(())
}

/// One device as its own process: same counter rule, same frame, its own MQTT session.
fn device(a: &DeviceArgs) -> Result<(), String> {
    use std::io::Write;
    let s = suite::find(&a.cipher)?;
    let b = broker::parse_url(&a.broker)?;
    let interval = parse_duration(&a.interval, "--interval")?;
    let master = lwcbench_link::keys::MasterKey::read(&a.key_file)?;
    let counters = lwcbench_link::counter::CounterStore::open(&a.counter_state, a.counter_block)?;
    let capture: Option<Box<dyn FnMut(&[u8]) -> Result<(), String> + Send>> = match &a.capture {
        Some(p) => {
            let mut f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(p)
                .map_err(|e| format!("--capture: {}: {e}", p.display()))?;
            let shown = p.display().to_string();
            Some(Box::new(move |frame: &[u8]| {
                let mut line = hex::encode(frame);
                line.push('\n');
                f.write_all(line.as_bytes()).map_err(|e| format!("--capture: {shown}: {e}"))
            }))
        }
        None => None,
    };
    let sent = run::DeviceProcess {
        suite: s,
        device: a.id,
        session: a.session.clone(),
        broker: b,
        master,
        counters,
        messages: a.messages,
        interval: (!interval.is_zero()).then_some(interval),
        capture,
    }
    .run()?;
    println!("device {} sent {sent} readings", a.id);
    Ok(())
}
