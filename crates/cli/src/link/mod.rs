//! `lwcbench link`: the chosen cipher on a sensor → broker → gateway → store path (docs/link.md).
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use clap::{Args, Subcommand};
use lwcbench_link::input;
use lwcbench_link::results::{self, LinkRecord, RunDir};
use lwcbench_link::session::{self, LinkConfig};
use lwcbench_link::transport::broker;
use lwcbench_link::transport::Transport;
use lwcbench_link::wire::suite;

pub mod chaos;
mod net;

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
    /// Run the gateway as its own process: subscribe, check, store until SIGTERM (or SIGKILL).
    Gateway(chaos::GatewayArgs),
    /// Faults: SIGKILL and restart gateway, broker (mosquitto) and devices at seeded random
    /// moments, then prove nothing was lost, duplicated or forged into the store.
    Chaos(chaos::ChaosArgs),
    /// Overload: step the offered rate, report the sustainable rate and peak memory.
    Overload(chaos::OverloadArgs),
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
    /// Total rate over all devices: readings/s (from one reading per device a day, devices/86400,
    /// to 10,000,000), or `max` (as fast as possible). Overrides --interval.
    #[arg(long)]
    rate: Option<String>,
    /// mqtt (QoS 1, persistent sessions) or udp (plain datagrams; loss is counted).
    #[arg(long, default_value = "mqtt")]
    transport: String,
    /// External broker mqtt://HOST:PORT (default: an embedded broker on a free loopback port).
    #[arg(long)]
    broker: Option<String>,
    /// Store: a SQLite file path (default OUT/link.db, kept across --force) or
    /// postgres://USER@HOST:PORT/DB (a password is never shown).
    #[arg(long)]
    store: Option<String>,
    /// Replay window size in counters per device (1..=1048576; devices × window bitmaps ≤ 1 GiB).
    #[arg(long, default_value_t = 1024)]
    window: u64,
    /// Counters reserved per durable write of the counter state.
    #[arg(long, default_value_t = lwcbench_link::device::counter::DEFAULT_BLOCK)]
    counter_block: u64,
    /// Master key file (created with mode 0600 if missing; default OUT/state/master.key).
    #[arg(long)]
    key_file: Option<PathBuf>,
    /// Counter state file of the key (default KEY_FILE.counters, beside --key-file; locked while in
    /// use, tied to the key by its fingerprint; see docs/link.md "Counter persistence rule").
    #[arg(long)]
    counter_state: Option<PathBuf>,
    /// Publisher connections the devices share (like sensors behind a concentrator).
    #[arg(long, default_value_t = 8)]
    connections: usize,
    /// Gateway workers: 1 = one gateway; K > 1 = K workers on one MQTT v5 shared subscription,
    /// replay state kept in the store (docs/link.md, "Scale-out"). MQTT only.
    #[arg(long, default_value_t = 1)]
    workers: usize,
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
    #[command(flatten)]
    net: net::NetArgs,
    /// List the link's ciphers (frame id, protection, overhead) and exit.
    #[arg(long)]
    list: bool,
    /// Run the attack suite (forged, replayed, reordered frames) for each --cipher instead of a
    /// session; writes link_attack.csv; exits non-zero if any class is not handled as expected.
    #[arg(long)]
    attack: bool,
    /// lora-minute: DRACO, Ascon-AEAD128, AES-128-CCM, ChaCha20-Poly1305 on LoRa SF7/SF9/SF12,
    /// one reading a minute: which cipher lets the battery last longest (modelled).
    /// net-sweep: Ascon-AEAD128, AES-128-CCM, DRACO over MQTT and UDP under loss 0/1/5/10 % ×
    /// delay 0/20/200 ms (root; see docs/network-conditions.md).
    #[arg(long)]
    preset: Option<String>,
    /// Radios for the modelled energy table (comma-separated names from data/radio-profiles.csv, or all).
    #[arg(long, default_value = "all")]
    radio: String,
    /// Device power profile for the crypto share of the energy (data/power-profiles.csv name):
    /// host seal time × its power. --board replaces it.
    #[arg(long, default_value = "ESP32")]
    power_profile: String,
    /// Crypto energy from the device: emulated cycles of the cipher's image on this board
    /// (rp2040, nrf52840, esp32c3, mkrzero, nano33ble; data/board-power.csv) × its datasheet
    /// power, host time × that power for ciphers without an image; its sleep current unless --sleep-ua.
    #[arg(long)]
    board: Option<String>,
    /// Battery chemistry for self-discharge and shelf life (data/battery-chemistries.csv):
    /// alkaline-AA, Li-SOCl2, Li-ion, LiFePO4, CR2032.
    #[arg(long, default_value = "alkaline-AA")]
    chemistry: String,
    /// Battery capacity for the modelled battery life (mAh).
    #[arg(long, default_value_t = 2400.0)]
    battery_mah: f64,
    /// Battery voltage (V).
    #[arg(long, default_value_t = 3.0)]
    battery_v: f64,
    /// Whole-board sleep current between reports (µA; default 10.2, or the --board's).
    #[arg(long)]
    sleep_ua: Option<f64>,
    /// Report interval the battery model assumes (e.g. 60s); the session itself runs at --interval/--rate.
    #[arg(long, default_value = "60s")]
    report_interval: String,
}

#[derive(Args)]
struct DeviceArgs {
    /// Device id.
    #[arg(long)]
    id: u32,
    /// Session id (topic namespace) shared with the gateway: 1 to 64 of A-Z a-z 0-9 - _.
    #[arg(long)]
    session: String,
    /// Broker mqtt://HOST:PORT.
    #[arg(long)]
    broker: String,
    /// Master key file (must exist, mode 0600).
    #[arg(long)]
    key_file: PathBuf,
    /// Counter state file of this device (created if missing, unless --capture already holds
    /// frames; locked while in use; refused if it belongs to another key).
    #[arg(long)]
    counter_state: PathBuf,
    #[arg(long, default_value = "Ascon-AEAD128")]
    cipher: String,
    #[arg(long, default_value_t = 100)]
    messages: u64,
    /// Report interval (e.g. 1ms), or 0 for as fast as possible.
    #[arg(long, default_value = "1ms")]
    interval: String,
    #[arg(long, default_value_t = lwcbench_link::device::counter::DEFAULT_BLOCK)]
    counter_block: u64,
    /// Append every frame (hex, one per line) to this file before sending it.
    #[arg(long)]
    capture: Option<PathBuf>,
    /// Deliver every captured frame: one frame in flight, re-send after reconnects and restarts
    /// (needs --capture; --messages 0 = until SIGTERM). See docs/link.md "Faults".
    #[arg(long, requires = "capture")]
    durable: bool,
    /// With --durable: rewrite this JSON file with the device's counters about once a second.
    #[arg(long, requires = "durable")]
    stats: Option<PathBuf>,
    /// With --durable: re-publish the frames of this last stretch after every reconnect (0 = none).
    #[arg(long, default_value = "3s", requires = "durable")]
    resend_window: String,
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
        Some(LinkSub::Gateway(g)) => chaos::gateway(g),
        Some(LinkSub::Chaos(c)) => chaos::chaos(c),
        Some(LinkSub::Overload(o)) => chaos::overload(o),
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
    let cipher_list = match a.preset.as_deref() {
        None => a.cipher.clone(),
        Some("lora-minute") => {
            "DRACO/rust-fast,Ascon-AEAD128,AES-128-CCM/rustcrypto,ChaCha20-Poly1305/rustcrypto".into()
        }
        Some("net-sweep") => lwcbench_link::experiments::sweep::SWEEP_CIPHERS.into(),
        Some(p) => return Err(format!("--preset: '{p}' is not a link preset (lora-minute, net-sweep)")),
    };
    let suites = cipher_list.split(',').map(suite::find).collect::<Result<Vec<_>, _>>()?;
    if a.attack && a.unsafe_no_integrity {
        return Err(
            "--attack with --unsafe-no-integrity: without a tag every forgery is accepted; nothing to test".into()
        );
    }
    energy_inputs(a)?;
    let interval = match a.rate.as_deref() {
        Some("max") => None,
        Some(r) => {
            let v: f64 =
                r.parse().map_err(|_| format!("--rate: '{}' is not a number of readings/s or max", input::shown(r)))?;
            Some(input::interval_for_rate("--rate", v, a.devices)?)
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
    if a.workers == 0 || a.workers > lwcbench_link::gateway::workers::MAX_WORKERS {
        return Err(format!("--workers: {} is not in 1..={}", a.workers, lwcbench_link::gateway::workers::MAX_WORKERS));
    }
    if a.workers > 1 && a.transport != "mqtt" {
        return Err("--workers above 1 needs --transport mqtt (the workers share one MQTT subscription)".into());
    }
    lwcbench_link::gateway::replay::ReplayWindow::new(a.window)?;
    if let Some(s) = &a.store {
        input::no_control("--store", s)?;
    }
    let ds = match &a.dataset {
        Some(p) => lwcbench_engine::dataset::Dataset::load(p, &[])?,
        None => lwcbench_engine::dataset::Dataset::builtin(),
    };
    let netc = net::parse(a)?;
    let transport = if netc.is_none() { Some(transport_of(&a.transport, a.broker.as_deref())?) } else { None };
    let out = a.out.clone().unwrap_or_else(default_out);
    // Nothing half-written: the run is written beside --out and swapped in when complete.
    let rd = RunDir::begin(&out, a.force)?;
    let r = match (&netc, transport) {
        (Some(p), _) => net::session(a, rd, &suites, interval, &ds, p),
        (None, t) => session_in(a, rd, &suites, interval, &ds, t.expect("set without conditions")),
    };
    r?;
    println!("wrote {}", out.display());
    Ok(())
}

/// The key file and counter state of a session: the options, else `state/` of the run
/// directory (kept across `--force` runs, see [`results::KEPT`]).
pub(crate) fn state_files(
    rd: &RunDir,
    key_file: &Option<PathBuf>,
    counter_state: &Option<PathBuf>,
) -> Result<(PathBuf, PathBuf), String> {
    let state = rd.kept("state");
    if key_file.is_none() {
        std::fs::create_dir_all(&state)
            .map_err(|e| format!("--out: cannot create {}: {e}", rd.shown(&state.display().to_string())))?;
    }
    let key = key_file.clone().unwrap_or_else(|| state.join("master.key"));
    // The counter state lives beside the key (KEY.counters): every run with one key continues
    // one state, whatever its --out.
    let counters = counter_state.clone().unwrap_or_else(|| lwcbench_link::device::counter::beside_key(&key));
    Ok((key, counters))
}

fn session_in(
    a: &SessionArgs,
    rd: RunDir,
    suites: &[suite::Suite],
    interval: Option<Duration>,
    ds: &lwcbench_engine::dataset::Dataset,
    transport: Transport,
) -> Result<(), String> {
    let readings = lwcbench_link::device::fleet::dataset_readings(ds);
    if a.attack {
        return attack(a, rd, suites);
    }
    let (key_file, counter_file) = state_files(&rd, &a.key_file, &a.counter_state)?;
    let store = a.store.clone().unwrap_or_else(|| rd.kept("link.db").display().to_string());
    let started = SystemTime::now();
    let session = session::new_session();
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
        let o = session::run_workers(&cfg, a.workers).map_err(|e| rd.shown(&e))?;
        let msgs = results::message_rows(&s.name(), &o);
        let mut row = results::summary_row(s, a.unsafe_no_integrity, a.devices, &o, &msgs);
        row.store = rd.shown(&row.store);
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
        if a.workers > 1 {
            eprintln!("  frames checked per worker: {:?}", o.per_worker);
        }
        summary.push(row);
        messages.extend(msgs);
    }
    let (radios, crypto, bat) = energy_inputs(a)?;
    let energy =
        lwcbench_link::results::energy::energy_rows(&summary, suites, a.unsafe_no_integrity, &radios, &crypto, &bat);
    let mut md = results::summary_markdown(&summary);
    md += &lwcbench_link::results::energy::energy_markdown(&energy, &bat, &crypto);
    let mut files = vec![
        ("link_energy.csv".to_string(), results::to_csv(&energy)),
        ("link_summary.csv".to_string(), results::to_csv(&summary)),
        ("link_messages.csv".to_string(), results::to_csv(&messages)),
        ("summary.md".to_string(), md.into_bytes()),
    ];
    files.sort_by(|x, y| x.0.cmp(&y.0));
    let notes = vec!["latency parts and energy figures: see docs/link.md".to_string()];
    let mut rec = LinkRecord::new(
        "lwcbench link".into(),
        "link".into(),
        session,
        a.unsafe_no_integrity,
        serde_json::json!({
            "ciphers": suites.iter().map(|s| s.name()).collect::<Vec<_>>(),
            "devices": a.devices, "messages_per_device": a.messages,
            "interval_s": interval.map(|d| d.as_secs_f64()),
            "transport": transport.describe(),
            "store": summary.first().map(|r| r.store.clone()),
            "window": a.window, "counter_block": a.counter_block,
            "key_file": rd.shown(&key_file.display().to_string()),
            "counter_state": rd.shown(&counter_file.display().to_string()),
            "connections": a.connections, "batch": a.batch, "workers": a.workers,
            "dataset": ds.name, "channels": ds.channels.len(),
        }),
        started,
        notes,
    );
    rd.finish(&files, &mut rec)
}

/// One device as its own process: same counter rule, same frame, its own MQTT session.
fn device(a: &DeviceArgs) -> Result<(), String> {
    use std::io::Write;
    input::check_session(&a.session)?;
    let s = suite::find(&a.cipher)?;
    let b = broker::parse_url(&a.broker)?;
    let interval = parse_duration(&a.interval, "--interval")?;
    let master = lwcbench_link::wire::keys::MasterKey::read(&a.key_file)?;
    let counters = lwcbench_link::device::counter::CounterStore::open(&a.counter_state, a.counter_block, &master)?;
    if let Some(c) = a.capture.as_ref().filter(|c| !counters.existed() && c.metadata().is_ok_and(|m| m.len() > 0)) {
        // Frames were sent under this key, but their counters' record is gone: starting again at 0
        // would seal new readings under nonces already used.
        return Err(format!(
            "--counter-state: {} is missing, but --capture {} holds frames this device sent; restarting would \
             repeat their counters (restore the state file)",
            a.counter_state.display(),
            c.display()
        ));
    }
    if a.durable {
        let st = lwcbench_link::experiments::chaos::DurableDevice {
            suite: s,
            device: a.id,
            session: a.session.clone(),
            broker: b,
            master,
            counters,
            messages: a.messages,
            interval: (!interval.is_zero()).then_some(interval),
            capture: a.capture.clone().expect("clap: --durable requires --capture"),
            stats: a.stats.clone(),
            resend_window: parse_duration(&a.resend_window, "--resend-window")?,
        }
        .run()?;
        println!("device {} sent {} readings", a.id, st.sent);
        return Ok(());
    }
    if a.messages == 0 {
        return Err("--messages: 0 (until SIGTERM) needs --durable".into());
    }
    let capture: Option<lwcbench_link::device::fleet::Capture> = match &a.capture {
        Some(p) => {
            let mut f = lwcbench_link::experiments::chaos::open_capture(p)?;
            let shown = p.display().to_string();
            Some(Box::new(move |frame: &[u8]| {
                let mut line = hex::encode(frame);
                line.push('\n');
                f.write_all(line.as_bytes()).map_err(|e| format!("--capture: {shown}: {e}"))
            }))
        }
        None => None,
    };
    let sent = lwcbench_link::device::process::DeviceProcess {
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

type EnergyInputs = (
    Vec<lwcbench_link::results::energy::Radio>,
    lwcbench_link::results::energy::CryptoPower,
    lwcbench_link::results::energy::Battery,
);

fn energy_inputs(a: &SessionArgs) -> Result<EnergyInputs, String> {
    use lwcbench_link::results::energy;
    let radio_sel = if a.preset.as_deref() == Some("lora-minute") { "LoRa-SF7,LoRa-SF9,LoRa-SF12" } else { &a.radio };
    let radios = if radio_sel == "all" {
        energy::builtin()
    } else {
        radio_sel.split(',').map(|r| energy::find_radio(r.trim())).collect::<Result<Vec<_>, _>>()?
    };
    let board = a.board.as_deref().map(lwcbench_engine::board::find).transpose()?;
    let pos = |v: f64, opt: &str| {
        if v.is_finite() && v > 0.0 && v < 1e9 {
            Ok(v)
        } else {
            Err(format!("{opt}: {v} is not a positive number"))
        }
    };
    let interval = parse_duration(&a.report_interval, "--report-interval")?;
    if interval.is_zero() {
        return Err("--report-interval: must be longer than 0".into());
    }
    let bat = energy::Battery {
        capacity_mah: pos(a.battery_mah, "--battery-mah")?,
        volts: pos(a.battery_v, "--battery-v")?,
        sleep_ua: match (a.sleep_ua, &board) {
            (Some(s), _) if s.is_finite() && (0.0..1e9).contains(&s) => s,
            (Some(s), _) => return Err(format!("--sleep-ua: {s} is not a non-negative number")),
            // The board's sleep power, drawn from the battery at its voltage.
            (None, Some(b)) => b.sleep_w() / a.battery_v * 1e6,
            (None, None) => 10.2,
        },
        interval_s: interval.as_secs_f64(),
        chemistry: energy::find_chemistry(&a.chemistry)?,
    };
    let crypto = match board {
        Some(b) => energy::CryptoPower::Board(b),
        None => energy::CryptoPower::Profile(lwcbench_engine::power::resolve(Some(&a.power_profile), None)?),
    };
    Ok((radios, crypto, bat))
}

/// `--attack`: the attack suite for each cipher, against the gateway's check and a SQLite store.
fn attack(a: &SessionArgs, rd: RunDir, suites: &[suite::Suite]) -> Result<(), String> {
    let started = SystemTime::now();
    let (key_file, counter_file) = state_files(&rd, &a.key_file, &a.counter_state)?;
    // The key gets its counter state even here: a later session with this key continues it.
    let (master, _) = lwcbench_link::device::counter::open_session(&key_file, &counter_file, a.counter_block)
        .map_err(|e| rd.shown(&e))?;
    let mut rows = Vec::new();
    let session = session::new_session();
    // The attack stores are scratch: in the new run while it is written, removed before it is
    // complete.
    let scratch = rd.stage().join("attack-work");
    std::fs::create_dir_all(&scratch).map_err(|e| format!("--out: cannot create a scratch directory: {e}"))?;
    for s in suites {
        let db = scratch.join(format!("attack-{}.db", s.id));
        let mut st =
            lwcbench_link::store::Sqlite::open(&db, &session, &master.fingerprint()).map_err(|e| rd.shown(&e))?;
        let t = lwcbench_link::experiments::attack::run(s, &master, &mut st)?;
        let failed = t.iter().filter(|r| !r.pass).count();
        eprintln!("{}: attack suite {} classes, {} failed", s.name(), t.len(), failed);
        rows.extend(t);
    }
    std::fs::remove_dir_all(&scratch).map_err(|e| format!("--out: cannot remove the attack stores: {e}"))?;
    let md = lwcbench_link::experiments::attack::markdown(&rows);
    let files =
        vec![("link_attack.csv".to_string(), results::to_csv(&rows)), ("summary.md".to_string(), md.into_bytes())];
    let mut rec = LinkRecord::new(
        "lwcbench link --attack".into(),
        "link-attack".into(),
        session,
        false,
        serde_json::json!({ "ciphers": suites.iter().map(|s| s.name()).collect::<Vec<_>>(), "window": 64,
            "path": "frames delivered to the gateway's check/open/store path in process (no broker)" }),
        started,
        vec![],
    );
    let out = rd.shown(&rd.stage().display().to_string());
    rd.finish(&files, &mut rec)?;
    let bad: Vec<String> = rows.iter().filter(|r| !r.pass).map(|r| format!("{} / {}", r.cipher, r.class)).collect();
    if !bad.is_empty() {
        // The result files stay (they are the evidence): report and exit non-zero here.
        eprintln!(
            "error: attack suite: {} class(es) not handled as expected: {} (see {})",
            bad.len(),
            bad.join(", "),
            out
        );
        std::process::exit(1);
    }
    Ok(())
}
