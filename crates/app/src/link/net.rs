//! `lwcbench link` under network conditions (`--loss`, `--delay`, … and `--preset net-sweep`):
//! devices in namespace A, broker and gateway in namespace B (docs/network-conditions.md).
use std::time::{Duration, SystemTime};

use lwcbench_link::experiments::netcond::{self, Backend, ConditionRow, Conditions, NetBroker, NetEnv, NetTransport};
use lwcbench_link::experiments::sweep;
use lwcbench_link::results::{self, LinkRecord};
use lwcbench_link::session;
use lwcbench_link::transport::Transport;
use lwcbench_link::wire::suite;

use super::args::{RunInputs, SessionArgs};

/// What to run under conditions.
pub(super) struct NetPlan {
    conds: Vec<Conditions>,
    transports: Vec<NetTransport>,
    backend: Backend,
    sweep: bool,
    mosquitto: Option<std::path::PathBuf>,
}

/// Debian's mosquitto, or one on PATH.
fn find_mosquitto() -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    ["/usr/sbin", "/usr/bin"]
        .iter()
        .map(std::path::PathBuf::from)
        .chain(std::env::split_paths(&path))
        .map(|d| d.join("mosquitto"))
        .find(|p| p.is_file())
}

fn pct(v: &Option<String>, opt: &str) -> Result<f64, String> {
    match v {
        None => Ok(0.0),
        Some(s) => s
            .trim()
            .trim_end_matches('%')
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite() && (0.0..=100.0).contains(x))
            .ok_or_else(|| format!("{opt}: '{s}' is not a percentage in 0..=100")),
    }
}

fn whole(v: &Option<String>, opt: &str, unit: &str, max: u32) -> Result<Option<u32>, String> {
    match v {
        None => Ok(None),
        Some(s) => s
            .trim()
            .trim_end_matches(unit)
            .parse::<u32>()
            .ok()
            .filter(|x| *x <= max)
            .map(Some)
            .ok_or_else(|| format!("{opt}: '{s}' is not a whole number of {unit} in 0..={max}")),
    }
}

/// The conditions asked for on the command line, or None for a plain session.
pub(super) fn parse(a: &SessionArgs) -> Result<Option<NetPlan>, String> {
    let n = &a.net;
    let sweep = a.preset.as_deref() == Some("net-sweep");
    if !n.any() && !sweep {
        return Ok(None);
    }
    let backend = match n.net_backend.as_str() {
        "auto" => Backend::Auto,
        "fallback" => Backend::Fallback,
        b => return Err(format!("--net-backend: '{b}' is not auto or fallback")),
    };
    let mosquitto = match n.net_broker.as_str() {
        "embedded" => None,
        "mosquitto" => {
            Some(find_mosquitto().ok_or("--net-broker: mosquitto not found (Debian: apt-get install mosquitto)")?)
        }
        b => return Err(format!("--net-broker: '{b}' is not embedded or mosquitto")),
    };
    if a.attack {
        return Err("--attack runs frames through the gateway in process: it takes no network conditions".into());
    }
    if a.broker.is_some() {
        return Err("--broker: with network conditions the broker runs inside the tool's namespace B (embedded \
                    rumqttd); an external broker is not reachable from there"
            .into());
    }
    if sweep {
        if n.any() {
            return Err("--preset net-sweep sets loss and delay itself: drop --loss/--delay/--jitter/--reorder/\
                        --duplicate/--bandwidth"
                .into());
        }
        return Ok(Some(NetPlan {
            conds: sweep::sweep_conditions(),
            transports: vec![NetTransport::Mqtt, NetTransport::Udp],
            backend,
            sweep: true,
            mosquitto,
        }));
    }
    let c = Conditions {
        loss_pct: pct(&n.loss, "--loss")?,
        delay_ms: whole(&n.delay, "--delay", "ms", 60_000)?.unwrap_or(0),
        jitter_ms: whole(&n.jitter, "--jitter", "ms", 60_000)?.unwrap_or(0),
        reorder_pct: pct(&n.reorder, "--reorder")?,
        duplicate_pct: pct(&n.duplicate, "--duplicate")?,
        rate_kbit: whole(&n.bandwidth, "--bandwidth", "kbit", 100_000_000)?,
    };
    if c.rate_kbit == Some(0) {
        return Err("--bandwidth: 0 kbit/s would block the path: give a positive rate".into());
    }
    if c.jitter_ms > c.delay_ms {
        return Err(format!("--jitter: {} ms exceeds --delay {} ms", c.jitter_ms, c.delay_ms));
    }
    c.validate().map_err(|e| format!("network conditions: {e}"))?;
    Ok(Some(NetPlan {
        conds: vec![c],
        transports: vec![NetTransport::parse(&a.transport)?],
        backend,
        sweep: false,
        mosquitto,
    }))
}

/// The one set of conditions of a `--video` run (None without conditions).
pub(super) fn single(a: &SessionArgs) -> Result<Option<(Conditions, Backend)>, String> {
    Ok(parse(a)?.map(|p| (p.conds[0].clone(), p.backend)))
}

/// Runs every cipher × transport × condition and writes link_conditions.csv, summary.md, the
/// figures (sweep) and run.json.
pub(super) fn session(
    a: &SessionArgs,
    rd: lwcbench_link::results::RunDir,
    suites: &[suite::Suite],
    interval: Option<Duration>,
    ds: &lwcbench_engine::dataset::Dataset,
    plan: &NetPlan,
) -> Result<(), String> {
    let readings = lwcbench_link::device::fleet::dataset_readings(ds);
    let state = rd.kept("state");
    std::fs::create_dir_all(&state)
        .map_err(|e| format!("--out: cannot create {}: {e}", rd.shown(&state.display().to_string())))?;
    let (key_file, counter_file) = super::options::state_files(&rd, &a.key_file, &a.counter_state)?;
    let store = a.store.clone().unwrap_or_else(|| rd.kept("link.db").display().to_string());
    let started = SystemTime::now();
    let session = session::new_session();
    let mut rows: Vec<ConditionRow> = Vec::new();
    let mut records = Vec::new();
    let mut notes = lwcbench_link::wire::gate::notes(suites);
    notes.push("network conditions: see docs/network-conditions.md".to_string());
    let mut netem = false;
    let mut brokers = Vec::new();
    let mut n = 0usize;
    let run =
        RunInputs { interval, store: &store, key_file: &key_file, counter_file: &counter_file, readings: &readings };
    for &t in &plan.transports {
        let broker = match (t, &plan.mosquitto) {
            (NetTransport::Udp, _) => NetBroker::None,
            (NetTransport::Mqtt, None) => NetBroker::Embedded,
            (NetTransport::Mqtt, Some(bin)) => NetBroker::Mosquitto { bin: bin.clone(), conf_dir: state.clone() },
        };
        let env = NetEnv::create_with(broker, plan.backend)?;
        if !env.broker_desc.is_empty() {
            brokers.push(env.broker_desc.clone());
        }
        netem = env.netem;
        let mut toxi = None;
        for c in &plan.conds {
            for s in suites {
                n += 1;
                // The transport is `t`'s, given to run_condition; the config's is unused.
                let cfg = a.link_config(s, Transport::Udp, &run, format!("{session}-{}-{}-{n}", s.id, t.as_str()));
                let r =
                    netcond::run_condition(&env, &mut toxi, &cfg, t, c, a.net.net_seed).map_err(|e| rd.shown(&e))?;
                let row = ConditionRow::new(&s.name(), a.devices, interval, &r);
                report_row(t, s, c, &row, &mut notes);
                if row.mismatched > 0 {
                    return Err(format!(
                        "{}: {} stored readings differ from what was sent",
                        row.cipher, row.mismatched
                    ));
                }
                records.push(netcond::run_json(&s.name(), &r));
                rows.push(row);
            }
        }
        drop(toxi);
        drop(env);
    }
    let mut figures = Vec::new();
    let mut files = vec![("link_conditions.csv".to_string(), results::to_csv(&rows))];
    if plan.sweep {
        files.push(("link_conditions_delivery.svg".into(), sweep::delivery_svg(&rows).into_bytes()));
        files.push(("link_conditions_latency.svg".into(), sweep::latency_svg(&rows).into_bytes()));
        figures = vec!["link_conditions_delivery.svg", "link_conditions_latency.svg"];
    }
    files.push(("summary.md".into(), sweep::markdown(&rows, netem, &figures).into_bytes()));
    files.sort_by(|x, y| x.0.cmp(&y.0));
    let mut rec = LinkRecord::new(
        "lwcbench link".into(),
        "link-conditions".into(),
        session,
        a.unsafe_no_integrity,
        serde_json::json!({
            "ciphers": suites.iter().map(|s| s.name()).collect::<Vec<_>>(),
            "devices": a.devices, "messages_per_device": a.messages,
            "interval_s": interval.map(|d| d.as_secs_f64()),
            "transports": plan.transports.iter().map(|t| t.as_str()).collect::<Vec<_>>(),
            "store": rd.shown(&lwcbench_link::input::redact(&store)), "window": a.window, "counter_block": a.counter_block,
            "connections": a.connections, "batch": a.batch,
            "dataset": ds.name, "channels": ds.channels.len(),
            "timeout_per_condition_s": a.drain_timeout,
            "preset": a.preset,
            "network": {
                "netem_available": netem,
                "backend": a.net.net_backend,
                "seed": a.net.net_seed,
                "broker": brokers,
                "direction": "device (namespace A) -> gateway (namespace B)",
                "runs": records,
            },
        }),
        started,
        notes,
    );
    rd.finish(&files, &mut rec)
}

/// One run's line on stderr; a warning (also a note of run.json) for UDP readings that no drop
/// counter accounts for.
fn report_row(t: NetTransport, s: &suite::Suite, c: &Conditions, row: &ConditionRow, notes: &mut Vec<String>) {
    eprintln!(
        "{} {}{} [{}]: sent {} stored {} ({:.1} %), counted drops {}, not delivered {}{}, e2e p50 {} ms p99 {} ms",
        t.as_str(),
        lwcbench_link::wire::gate::prefix(s),
        row.cipher,
        sweep::label(c),
        row.sent,
        row.stored,
        row.delivery_ratio * 100.0,
        row.counted_drops,
        row.not_delivered_within_t,
        if row.timed_out { format!(" within {} s", row.timeout_s) } else { String::new() },
        row.e2e_p50_ms,
        row.e2e_p99_ms
    );
    if t == NetTransport::Udp && row.not_delivered_within_t != 0 {
        let w = format!(
            "WARNING: udp {} [{}]: {} readings neither stored nor counted by any drop counter",
            row.cipher,
            sweep::label(c),
            row.not_delivered_within_t
        );
        eprintln!("{w}");
        notes.push(w);
    }
}
