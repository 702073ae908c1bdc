//! Faults: one run in which the gateway process, the broker (mosquitto, persistence on) and
//! device processes are SIGKILLed and restarted at seeded random moments, then a proof from the
//! devices' captures and the store that nothing was lost, duplicated or forged into the store.
//! See docs/link.md "Faults".
//!
//! **What "sent" means.** A *durable device* (a [`crate::device::process::DeviceProcess`] with
//! durable delivery) appends every frame to its capture file (one hex line, written before the
//! first publish) — from that moment the reading counts as sent and must be stored exactly
//! once. To make that promise keepable across kills, the device
//! * publishes one frame at a time and waits for the broker's PUBACK (re-publishing after
//!   [`ACK_TIMEOUT`]) before it captures the next, so at most the last captured frame can be
//!   unacknowledged when it dies;
//! * re-publishes the last [`RESEND_ON_START`] captured frames when it starts (covers a kill
//!   between capture and PUBACK);
//! * keeps the frames of the last [`RING`] in memory and re-publishes them after every
//!   reconnect: mosquitto acknowledges a QoS 1 message before it is on disk (its persistence is
//!   a snapshot every `autosave_interval`), and rumqttc drops its unacknowledged publishes when
//!   the restarted broker has no session for it; both would otherwise lose readings.
//!
//! Re-sent frames are the same bytes (same counter, same nonce): not a nonce reuse. The gateway
//! refuses the copies it has seen (`replay`) or the store ignores them (UNIQUE(device, counter)).
use crate::wire::frame::Proto;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rumqttc::QoS;

use crate::device::capture::read_capture;
use crate::session;
use crate::store::inspect::{integrity_check, Watch};
use crate::transport::broker::BrokerAddr;
use crate::transport::mqtt::{mqtt_connect, topic};
use crate::transport::runtime;
use crate::wire::frame::Header;
use crate::wire::keys::MasterKey;
use crate::wire::suite::{Keyed, Suite};
pub use config::{ChaosConfig, ChaosOutcome, FaultKind, FaultRow, Sample, TableRow};
pub use proof::{Verdict, FORGED_COUNTER_BASE};
use supervise::{gateway_stats, Ctl, GwLine, Svc};

pub mod config;
pub mod proof;
pub mod supervise;

fn forged_frame(kind: u64, k: u64, devices: u32, suite: &Suite, wrong: &MasterKey) -> Result<(u32, Vec<u8>), String> {
    let d = (k % devices as u64) as u32;
    let counter = FORGED_COUNTER_BASE + k;
    let mut f = Vec::new();
    match kind {
        // Under a key the gateway does not have: bad_tag.
        0 => {
            let key = wrong.cipher_key(Proto::Sensor, d, suite.id, suite.key_len());
            Keyed::new(suite, &key, Proto::Sensor, false)?.seal(d, counter, b"forged reading", &mut f)?;
            Ok((d, f))
        }
        // A device the gateway does not know: unknown_device.
        1 => {
            let u = devices + 1000 + (k % 7) as u32;
            let key = wrong.cipher_key(Proto::Sensor, u, suite.id, suite.key_len());
            Keyed::new(suite, &key, Proto::Sensor, false)?.seal(u, counter, b"forged reading", &mut f)?;
            Ok((d, f))
        }
        // Truncated: malformed.
        _ => Ok((d, vec![1, suite.id, 0, 0, 0])),
    }
}

/// Run the chaos (or soak) session and prove its outcome, as named stages: check the
/// configuration and provision the keys, start every process, run the forger and the fault
/// plan, stop everything and drain, then the proof and the fault table.
pub fn run(cfg: &ChaosConfig) -> Result<ChaosOutcome, String> {
    check(cfg)?;
    let (key, master) = provision(cfg)?;
    let session = session::new_session();
    let store = cfg.store.clone().unwrap_or_else(|| cfg.dir.join("chaos.db").display().to_string());
    let mut ctl = Ctl {
        cfg,
        t0: Instant::now(),
        session: session.clone(),
        port: crate::transport::broker::free_port()?,
        store: store.clone(),
        key,
        broker: Svc { child: None },
        gateways: (0..cfg.gateways).map(|_| Svc { child: None }).collect(),
        devices: (0..cfg.devices).map(|_| Svc { child: None }).collect(),
        watch: Watch::new(&store, &session),
        timeline: Vec::new(),
        next_sample: Instant::now(),
        restarts: [0; 4],
    };
    start_all(&mut ctl)?;
    let rt = runtime()?;
    let forged = Arc::new(AtomicU64::new(0));
    let forger = match cfg.forge_every {
        Some(every) => Some(start_forger(&rt, &ctl, every, forged.clone())?),
        None => None,
    };
    let (mut faults, marks) = inject_faults(&mut ctl)?;
    while ctl.t0.elapsed() < cfg.duration {
        ctl.sleep(Duration::from_millis(50));
    }
    let (captures, elapsed_s, notes) = stop_all(&mut ctl, forger, rt)?;

    // The proof.
    let mut v = Verdict { elapsed_s, notes, ..Default::default() };
    let steady = prove(&mut v, &ctl, &master, &captures, &marks, &mut faults)?;
    v.forged_sent = forged.load(Ordering::SeqCst);
    tally_processes(&mut v, &ctl);
    let table = fault_table(&mut v, &faults, steady);
    Ok(ChaosOutcome { verdict: v, faults, table, timeline: ctl.timeline, broker_port: ctl.port, session })
}

/// The configuration's bounds, the broker binary, and a fresh directory.
fn check(cfg: &ChaosConfig) -> Result<(), String> {
    if !(1..=8).contains(&cfg.gateways) {
        return Err(format!("--gateways: {} is not in 1..=8", cfg.gateways));
    }
    if cfg.devices == 0 || cfg.devices > 64 {
        return Err(format!("--devices: {} is not in 1..=64 (one process each)", cfg.devices));
    }
    if !cfg.mosquitto.is_file() {
        return Err(format!("--mosquitto: {} not found (Debian: apt-get install mosquitto)", cfg.mosquitto.display()));
    }
    std::fs::create_dir_all(&cfg.dir).map_err(|e| format!("{}: {e}", cfg.dir.display()))?;
    Ok(())
}

/// A new master key (with its counter state) in the run's directory, and one provisioned key
/// per device process.
fn provision(cfg: &ChaosConfig) -> Result<(std::path::PathBuf, MasterKey), String> {
    let key = cfg.dir.join("master.key");
    if key.exists() {
        return Err(format!("{} exists: a chaos run needs a fresh directory", key.display()));
    }
    // The key with its counter state (KEY.counters), which every device process shares, each
    // leasing its own device.
    let (master, _) = crate::device::counter::open_session(
        &key,
        &crate::device::counter::beside_key(&key),
        crate::device::counter::DEFAULT_BLOCK,
    )?;
    // Each device process holds only its own key (provisioned from the master, which only the
    // gateways hold), with its own counter state.
    for d in 0..cfg.devices {
        crate::device::provision::provision(
            &key,
            crate::wire::frame::Family::Sensor,
            d,
            None,
            &cfg.dir.join(format!("device-{d}.key")),
        )?;
    }
    Ok((key, master))
}

/// The broker, the gateways, then the devices; the run's clock starts once all are up.
fn start_all(ctl: &mut Ctl) -> Result<(), String> {
    ctl.start_broker()?;
    for i in 0..ctl.cfg.gateways as usize {
        ctl.start_gateway(i)?;
    }
    // Let the broker snapshot the gateway's subscription before anything can be killed.
    std::thread::sleep(Duration::from_millis(1500));
    for d in 0..ctl.cfg.devices {
        ctl.start_device(d)?;
    }
    ctl.t0 = Instant::now();
    ctl.next_sample = ctl.t0;
    Ok(())
}

/// Each device's last captured counter at a fault's kill (None: nothing captured yet).
type Marks = Vec<Option<u64>>;

/// One device's captured frames.
type Captured = Vec<Vec<u8>>;

/// The forger's task and its connection.
type Forger = (tokio::task::JoinHandle<()>, crate::transport::mqtt::MqttConn);

/// The forger: its own connection, publishing a forged frame on the devices' topics every
/// `every`, counting those the client took in `forged`.
fn start_forger(
    rt: &tokio::runtime::Runtime,
    ctl: &Ctl,
    every: Duration,
    forged: Arc<AtomicU64>,
) -> Result<Forger, String> {
    let cfg = ctl.cfg;
    let broker = BrokerAddr { host: "127.0.0.1".into(), port: ctl.port, embedded: false };
    let conn = rt.block_on(mqtt_connect(&format!("lwcbench-forger-{}", ctl.session), &broker))?;
    let (suite, devices, session) = (cfg.suite.clone(), cfg.devices, ctl.session.clone());
    let wrong = MasterKey::random();
    let client = conn.client.clone();
    let task = rt.spawn(async move {
        let mut k = 0u64;
        loop {
            tokio::time::sleep(every).await;
            if let Ok((d, f)) = forged_frame(k % 3, k, devices, &suite, &wrong) {
                if client.try_publish(topic(&session, d), QoS::AtLeastOnce, false, f).is_ok() {
                    forged.fetch_add(1, Ordering::SeqCst);
                }
            }
            k += 1;
        }
    });
    Ok((task, conn))
}

/// The fault plan: kinds shuffled, each fault after the last one recovered. Returns a row per
/// fault and, per fault, each device's last captured counter at the kill.
fn inject_faults(ctl: &mut Ctl) -> Result<(Vec<FaultRow>, Vec<Marks>), String> {
    let cfg = ctl.cfg;
    let mut rng = rand::rngs::StdRng::seed_from_u64(cfg.seed);
    let mut plan: Vec<FaultKind> = std::iter::repeat_n(FaultKind::Gateway, cfg.gateway_kills as usize)
        .chain(std::iter::repeat_n(FaultKind::Broker, cfg.broker_kills as usize))
        .chain(std::iter::repeat_n(FaultKind::Device, cfg.device_kills as usize))
        .chain(std::iter::repeat_n(FaultKind::GatewayThenBroker, cfg.double_kills as usize))
        .collect();
    plan.shuffle(&mut rng);
    let mut faults = Vec::new();
    let mut marks: Vec<Marks> = Vec::new();
    ctl.sleep(Duration::from_millis(1500));
    for (seq, kind) in plan.iter().enumerate() {
        let (row, before) = one_fault(ctl, &mut rng, seq, *kind)?;
        faults.push(row);
        marks.push(before);
    }
    Ok((faults, marks))
}

/// One fault: kill, wait the drawn downtime, restart, and wait (at most 30 s) until a reading
/// captured after the kill is stored.
fn one_fault(
    ctl: &mut Ctl,
    rng: &mut rand::rngs::StdRng,
    seq: usize,
    kind: FaultKind,
) -> Result<(FaultRow, Marks), String> {
    let cfg = ctl.cfg;
    ctl.sleep(Duration::from_millis(rng.random_range(300..1500)));
    let down = Duration::from_millis(rng.random_range(50..800));
    let target = match kind {
        FaultKind::Device => rng.random_range(0..cfg.devices),
        // Drawn only with several gateways, so a seed gives one gateway the same plan.
        _ if cfg.gateways > 1 => rng.random_range(0..cfg.gateways),
        _ => 0,
    };
    let g = target as usize;
    let before = ctl.last_counters();
    let t_kill = Instant::now();
    match kind {
        FaultKind::Gateway => ctl.gateways[g].sigkill(),
        FaultKind::Broker => ctl.broker.sigkill(),
        FaultKind::Device => ctl.devices[target as usize].sigkill(),
        FaultKind::GatewayThenBroker => {
            ctl.gateways[g].sigkill();
            // Devices keep publishing; mosquitto queues it for the absent gateway.
            let gap = Duration::from_millis(rng.random_range(200..900));
            ctl.sleep(gap);
            ctl.broker.sigkill();
        }
    }
    ctl.sleep(down);
    let t_restart = Instant::now();
    match kind {
        FaultKind::Gateway => ctl.start_gateway(g)?,
        FaultKind::Broker => ctl.start_broker()?,
        FaultKind::Device => ctl.start_device(target)?,
        FaultKind::GatewayThenBroker => {
            ctl.start_broker()?;
            ctl.start_gateway(g)?;
        }
    }
    ctl.restarts[kind as usize] += 1;
    // Recovered once a reading captured after the kill is stored.
    let mut recovered = None;
    while t_restart.elapsed() < Duration::from_secs(30) {
        let m = ctl.stored_max();
        let fresh = |d: u32| match (m.get(&d), before[d as usize]) {
            (Some(&s), Some(b)) => s > b,
            (Some(_), None) => true,
            _ => false,
        };
        let ok = match kind {
            FaultKind::Device => fresh(target),
            _ => (0..cfg.devices).any(fresh),
        };
        if ok {
            recovered = Some(Instant::now());
            break;
        }
        ctl.sleep(Duration::from_millis(10));
    }
    let row = FaultRow {
        seq: seq as u32 + 1,
        fault: kind.as_str().into(),
        target: match kind {
            FaultKind::Device => format!("device {target}"),
            FaultKind::Gateway if cfg.gateways > 1 => format!("gateway {g}"),
            FaultKind::Gateway => "gateway".into(),
            FaultKind::Broker => "mosquitto".into(),
            FaultKind::GatewayThenBroker => "gateway + mosquitto".into(),
        },
        t_kill_s: t_kill.duration_since(ctl.t0).as_secs_f64(),
        down_ms: down.as_millis() as u64,
        recovery_ms: recovered.map(|r| r.duration_since(t_restart).as_millis() as u64),
        outage_ms: recovered.map(|r| r.duration_since(t_kill).as_millis() as u64),
        readings_lost: 0,
        duplicates_stored: 0,
    };
    Ok((row, before))
}

/// Stop: devices first (each finishes the frame in hand), then wait for the store to hold
/// everything captured, then the gateway (clean stop, final tally), then the broker. Returns
/// the devices' captures, the run time and what did not stop in time.
fn stop_all(
    ctl: &mut Ctl,
    forger: Option<Forger>,
    rt: tokio::runtime::Runtime,
) -> Result<(Vec<Captured>, f64, Vec<String>), String> {
    let cfg = ctl.cfg;
    let mut notes = Vec::new();
    for d in 0..cfg.devices as usize {
        if !ctl.devices[d].stop(Duration::from_secs(15)) {
            notes.push(format!("device {d} did not stop within 15 s of SIGTERM (killed)"));
        }
    }
    if let Some((task, conn)) = forger {
        task.abort();
        conn.task.abort();
    }
    rt.shutdown_timeout(Duration::from_secs(1));
    let captures: Vec<Captured> =
        (0..cfg.devices).map(|d| read_capture(&ctl.dev_path(d, "capture"))).collect::<Result<_, _>>()?;
    let distinct: u64 = captures
        .iter()
        .map(|c| {
            c.iter()
                .filter_map(|f| Header::parse(f).ok())
                .map(|h| h.counter)
                .collect::<std::collections::HashSet<_>>()
                .len() as u64
        })
        .sum();
    let t_drain = Instant::now();
    while ctl.stored_count() < distinct && t_drain.elapsed() < cfg.drain_timeout {
        ctl.sleep(Duration::from_millis(50));
    }
    ctl.tick();
    let elapsed_s = ctl.t0.elapsed().as_secs_f64();
    for i in 0..ctl.gateways.len() {
        if !ctl.gateways[i].stop(Duration::from_secs(15)) {
            notes.push(format!("gateway {i} did not stop within 15 s of SIGTERM (killed)"));
        }
    }
    ctl.watch.close();
    ctl.broker.stop(Duration::from_secs(10));
    Ok((captures, elapsed_s, notes))
}

/// The proof from the captures and the store; loss and duplicates, each attributed to the last
/// fault before the reading was captured (in `faults`), or returned as the steady state's
/// (lost, duplicates) when before the first fault.
fn prove(
    v: &mut Verdict,
    ctl: &Ctl,
    master: &MasterKey,
    captures: &[Captured],
    marks: &[Marks],
    faults: &mut [FaultRow],
) -> Result<(u64, u64), String> {
    let cfg = ctl.cfg;
    let mut keyed = (0..cfg.devices)
        .map(|d| Keyed::derived(&cfg.suite, master, Proto::Sensor, d, false))
        .collect::<Result<Vec<_>, _>>()?;
    let rows = crate::store::open(&ctl.store, &ctl.session, &master.fingerprint())?.all()?;
    let mut open = |d: u32, h: &Header, f: &[u8]| {
        keyed[d as usize].open(h, f).map_err(|_| format!("device {d}: a captured frame does not open"))
    };
    let readings = proof::prove(v, captures, &mut open, &rows, cfg.devices)?;
    let attribute =
        |d: u32, c: u64| -> Option<usize> { marks.iter().rposition(|m| m[d as usize].is_none_or(|b| c > b)) };
    let mut steady = (0u64, 0u64);
    for r in readings {
        match attribute(r.device, r.counter) {
            Some(i) => {
                faults[i].readings_lost += r.lost;
                faults[i].duplicates_stored += r.duplicates;
            }
            None => {
                steady.0 += r.lost;
                steady.1 += r.duplicates;
            }
        }
    }
    v.integrity_check = integrity_check(&ctl.store, &ctl.session);
    Ok(steady)
}

/// What the gateway and device processes reported: the gateways' last stats line per process,
/// the restarts, the devices' re-sends.
fn tally_processes(v: &mut Verdict, ctl: &Ctl) {
    let gl: Vec<GwLine> =
        (0..ctl.gateways.len()).flat_map(|i| gateway_stats(&ctl.gw_path(i, "-stats.jsonl"))).collect();
    let mut last: BTreeMap<u32, &GwLine> = BTreeMap::new();
    for l in &gl {
        last.insert(l.pid, l);
    }
    v.gateway_duplicates_ignored = last.values().map(|l| l.duplicates).sum();
    v.gateway_refused = last.values().map(|l| l.refused).sum();
    [v.gateway_restarts, v.broker_restarts, v.device_restarts, v.double_kills] = ctl.restarts;
    let ds = ctl.device_stats();
    v.device_ring_resent = ds.iter().map(|s| s.ring_resent).sum();
    v.device_resent_on_start = ds.iter().map(|s| s.resent_on_start).sum();
    v.device_ack_timeouts = ds.iter().map(|s| s.ack_timeouts).sum();
}

/// One row per fault kind, then the steady state's; a kind with a fault that never recovered
/// is noted in `v`.
fn fault_table(v: &mut Verdict, faults: &[FaultRow], steady: (u64, u64)) -> Vec<TableRow> {
    let mut table = Vec::new();
    for kind in [FaultKind::Gateway, FaultKind::Broker, FaultKind::Device, FaultKind::GatewayThenBroker] {
        let fs: Vec<&FaultRow> = faults.iter().filter(|f| f.fault == kind.as_str()).collect();
        let mut rec: Vec<u64> = fs.iter().filter_map(|f| f.recovery_ms).collect();
        let mut out: Vec<u64> = fs.iter().filter_map(|f| f.outage_ms).collect();
        rec.sort_unstable();
        out.sort_unstable();
        let nearest_rank = lwcbench_stats::percentile_nearest_rank::<u64>;
        table.push(TableRow {
            fault: kind.as_str().into(),
            count: fs.len() as u32,
            readings_lost: fs.iter().map(|f| f.readings_lost).sum(),
            duplicates_stored: fs.iter().map(|f| f.duplicates_stored).sum(),
            recovery_p50_ms: nearest_rank(&rec, 50.0),
            recovery_max_ms: nearest_rank(&rec, 100.0),
            outage_max_ms: nearest_rank(&out, 100.0),
        });
        if fs.iter().any(|f| f.recovery_ms.is_none()) {
            v.notes.push(format!("a {} did not recover within 30 s", kind.as_str()));
        }
    }
    table.push(TableRow {
        fault: "none (before the first fault)".into(),
        count: 0,
        readings_lost: steady.0,
        duplicates_stored: steady.1,
        recovery_p50_ms: None,
        recovery_max_ms: None,
        outage_max_ms: None,
    });
    table
}

/// The fault table and the run's proof as markdown.
pub fn markdown(o: &ChaosOutcome) -> String {
    let v = &o.verdict;
    let ms = |x: Option<u64>| x.map(|v| crate::units::ms3(v as f64 * 1000.0)).unwrap_or_else(|| "—".into());
    let mut s = String::from("## Faults (lwcbench link chaos)\n\n");
    s += "| fault injected | count | readings lost | duplicates stored | recovery p50 | recovery max | outage max |\n";
    s += "|---|---:|---:|---:|---:|---:|---:|\n";
    for r in &o.table {
        s += &format!(
            "| {} | {} | {} | {} | {} | {} | {} |\n",
            r.fault,
            r.count,
            r.readings_lost,
            r.duplicates_stored,
            ms(r.recovery_p50_ms),
            ms(r.recovery_max_ms),
            ms(r.outage_max_ms)
        );
    }
    s += &format!(
        "\nReadings captured as sent: {}; stored rows: {}; lost: {}; stored twice: {}; (key, counter) \
         reused: {}; stored but never sent: {}; forged frames sent {} / stored {}; payload mismatches: {}; \
         store integrity: {}.\n",
        v.captured,
        v.stored_rows,
        v.lost,
        v.duplicates_stored,
        v.counter_reuse,
        v.not_captured_but_stored,
        v.forged_sent,
        v.forged_stored,
        v.mismatched,
        v.integrity_check
    );
    s += &format!(
        "Copies absorbed by the gateway (duplicates ignored by the store + refusals, as reported by \
         gateway processes; a SIGKILLed one loses its last 0.5 s): {} + {}. Device re-sends: {} after \
         reconnects, {} on restart, {} PUBACK timeouts. Run time {:.1} s.\n",
        v.gateway_duplicates_ignored,
        v.gateway_refused,
        v.device_ring_resent,
        v.device_resent_on_start,
        v.device_ack_timeouts,
        v.elapsed_s
    );
    for n in &v.notes {
        s += &format!("\nNote: {n}\n");
    }
    s
}
