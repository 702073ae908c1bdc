//! `lwcbench link` itself: the measured sessions, the attack suite and the cipher list.

use std::time::{Duration, SystemTime};

use lwcbench_link::input;
use lwcbench_link::results::{self, LinkRecord, RunDir};
use lwcbench_link::session;
use lwcbench_link::transport::Transport;
use lwcbench_link::wire::suite;

use super::args::{RunInputs, SessionArgs};
use super::net;
use super::options::{check_batch, default_out, parse_duration, state_files, transport_of};

fn list() {
    println!(
        "{:>3}  {:<30} {:>5} {:>7} {:>5} {:>8}  protection",
        "id", "cipher", "key B", "nonce B", "tag B", "overhead"
    );
    for s in suite::offered() {
        println!(
            "{:>3}  {:<30} {:>5} {:>7} {:>5} {:>6} B  {}",
            s.id,
            s.name(),
            s.key_len(),
            s.nonce_len(),
            s.tag_len(false),
            s.overhead(false),
            s.protection(false)
        );
    }
}

pub(super) fn session(a: &SessionArgs) -> Result<(), String> {
    if a.list {
        list();
        return Ok(());
    }
    let cipher_list = match a.preset.as_deref() {
        None => a.cipher.clone().unwrap_or_else(|| "Ascon-AEAD128".into()),
        Some("lora-minute") => {
            "DRACO/rust-fast,Ascon-AEAD128,AES-128-CCM/rustcrypto,ChaCha20-Poly1305/rustcrypto".into()
        }
        Some("net-sweep") => lwcbench_link::experiments::sweep::SWEEP_CIPHERS.into(),
        Some(p) => return Err(format!("--preset: '{p}' is not a link preset (lora-minute, net-sweep)")),
    };
    let oscore = match a.protocol.as_str() {
        "link" => false,
        "oscore" => true,
        p => return Err(format!("--protocol: '{}' is not link or oscore", input::shown(p))),
    };
    if a.edhoc && !oscore {
        return Err("--edhoc: EDHOC establishes OSCORE contexts; it needs --protocol oscore".into());
    }
    let suites =
        if oscore { Vec::new() } else { cipher_list.split(',').map(suite::find).collect::<Result<Vec<_>, _>>()? };
    // A carrier that cannot be used is refused before anything is written; the compact header
    // is the link frame's, which --protocol oscore does not send.
    if a.carrier()?.is_some() && oscore {
        return Err(
            "--carrier: the compact header is the link frame's; --protocol oscore sends OSCORE over CoAP".into()
        );
    }
    // A preset reproduces a study that measured DRACO: it allows it (still labelled
    // PROVISIONAL everywhere); --cipher needs the flag.
    let mut gate = a.gate.gate();
    gate.allow_provisional |= a.preset.is_some();
    gate.check_all(&suites)?;
    if oscore && (a.video.video.is_some() || a.attack || a.preset.is_some()) {
        return Err("--protocol oscore: not with --video, --attack or --preset".into());
    }
    if let Some(file) = &a.video.video {
        return super::video::run(a, file, &suites);
    }
    if a.attack && a.unsafe_no_integrity {
        return Err(
            "--attack with --unsafe-no-integrity: without a tag every forgery is accepted; nothing to test".into()
        );
    }
    energy_inputs(a)?;
    // Read and checked now: a bad file fails before any message is sent.
    measured_energy(a)?;
    if a.attack && a.measured_energy.is_some() {
        return Err("--measured-energy: not with --attack (an attack run has no energy table)".into());
    }
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
    check_batch(a.batch)?;
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
        // devices send float32: a reading beyond its range is refused, not sent as inf
        Some(p) => lwcbench_engine::dataset::Dataset::load(p, &[]).and_then(|d| d.check_float32().map(|()| d))?,
        None => lwcbench_engine::dataset::Dataset::builtin(),
    };
    if oscore {
        if a.net.any() {
            return Err("--protocol oscore: network conditions are not offered yet".into());
        }
        let out = a.out.clone().unwrap_or_else(|| default_out("link"));
        let rd = RunDir::begin(&out, a.force, Some(lwcbench_report::link::render))?;
        super::oscore::session(a, interval, rd, &ds)?;
        println!("wrote {}", out.display());
        return Ok(());
    }
    let netc = net::parse(a)?;
    let transport = if netc.is_none() { Some(transport_of(&a.transport, a.broker.as_deref())?) } else { None };
    let out = a.out.clone().unwrap_or_else(|| default_out("link"));
    // Nothing half-written: the run is written beside --out and swapped in when complete.
    let rd = RunDir::begin(&out, a.force, Some(lwcbench_report::link::render))?;
    let r = match (&netc, transport) {
        (Some(p), _) => net::session(a, rd, &suites, interval, &ds, p),
        (None, t) => session_in(a, rd, &suites, interval, &ds, t.expect("set without conditions")),
    };
    r?;
    println!("wrote {}", out.display());
    Ok(())
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
    let run =
        RunInputs { interval, store: &store, key_file: &key_file, counter_file: &counter_file, readings: &readings };
    for s in suites {
        let cfg = a.link_config(s, transport.clone(), &run, format!("{session}-{}", s.id));
        let o = session::run_workers(&cfg, a.workers).map_err(|e| rd.shown(&e))?;
        let msgs = results::message_rows(&s.name(), &o);
        let mut row = results::summary_row(s, a.unsafe_no_integrity, a.devices, &o, &msgs);
        row.store = rd.shown(&row.store);
        eprintln!(
            "{}{}{}: sent {} stored {} missing {} refused {} — {} msgs/s, e2e p50 {} p99 {}, wire {:.0} B ({:+.0} B)",
            if a.unsafe_no_integrity { "UNSAFE (no integrity) " } else { "" },
            lwcbench_link::wire::gate::prefix(s),
            row.cipher,
            row.sent,
            row.stored,
            row.missing,
            o.tally.refused_total(),
            row.msgs_per_s,
            lwcbench_link::units::ms3(row.e2e_p50_us),
            lwcbench_link::units::ms3(row.e2e_p99_us),
            row.wire_bytes,
            row.overhead_bytes
        );
        if o.tally.alarms > 0 {
            eprintln!("  alarm: {} device(s) spent their failed-tag budget (refused tag_budget)", o.tally.alarms);
        }
        if o.tally.reuse_alarms > 0 {
            eprintln!(
                "  alarm: {} frame(s) under an accepted counter with other bytes and a valid tag: a counter was \
                 reused (reuse_alarms)",
                o.tally.reuse_alarms
            );
        }
        if o.tally.late_alarms > 0 {
            eprintln!("  alarm: {} frame(s) later than --window allows (refused too_old)", o.tally.late_alarms);
        }
        if a.workers > 1 {
            eprintln!("  frames checked per worker: {:?}", o.per_worker);
        }
        summary.push(row);
        messages.extend(msgs);
    }
    let (radios, crypto, bat) = energy_inputs(a)?;
    let measured = measured_energy(a)?;
    let mut energy =
        lwcbench_link::results::energy::energy_rows(&summary, suites, a.unsafe_no_integrity, &radios, &crypto, &bat);
    let measured_notes = match &measured {
        Some(m) => lwcbench_link::results::measured::apply(&mut energy, suites, a.unsafe_no_integrity, m, &bat),
        None => Vec::new(),
    };
    let mut md = results::summary_markdown(&summary);
    md += &lwcbench_link::results::energy::energy_markdown(&energy, &bat, &crypto);
    let mut files = vec![
        ("link_energy.csv".to_string(), results::to_csv(&energy)),
        ("link_summary.csv".to_string(), results::to_csv(&summary)),
        ("link_messages.csv".to_string(), results::to_csv(&messages)),
        ("summary.md".to_string(), md.into_bytes()),
    ];
    files.sort_by(|x, y| x.0.cmp(&y.0));
    let mut notes = lwcbench_link::wire::gate::notes(suites);
    notes.push("latency parts and energy figures: see docs/link.md".to_string());
    notes.extend(measured_notes);
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
            "carrier": a.carrier()?.map(|c| c.describe()),
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
type EnergyInputs = (
    Vec<lwcbench_link::results::energy::Radio>,
    lwcbench_link::results::energy::CryptoPower,
    lwcbench_link::results::energy::Battery,
);

fn measured_energy(a: &SessionArgs) -> Result<Option<lwcbench_engine::measured::MeasuredEnergy>, String> {
    a.measured_energy
        .as_deref()
        .map(|p| lwcbench_engine::measured::MeasuredEnergy::load(p).map_err(|e| format!("--measured-energy: {e}")))
        .transpose()
}

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
        eprintln!(
            "{}{}: attack suite {} classes, {} failed",
            lwcbench_link::wire::gate::prefix(s),
            s.name(),
            t.len(),
            failed
        );
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
        lwcbench_link::wire::gate::notes(suites),
    );
    let out = rd.shown(&rd.stage().display().to_string());
    rd.finish(&files, &mut rec)?;
    let bad: Vec<String> = rows.iter().filter(|r| !r.pass).map(|r| format!("{} / {}", r.cipher, r.class)).collect();
    if !bad.is_empty() {
        // The result files stay (they are the evidence); the error says where.
        return Err(format!(
            "attack suite: {} class(es) not handled as expected: {} (see {})",
            bad.len(),
            bad.join(", "),
            out
        ));
    }
    Ok(())
}
