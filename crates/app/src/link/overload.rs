//! `lwcbench link overload`: the sustainable rate and peak memory (docs/link.md "Overload").
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use clap::Args;
use lwcbench_link::experiments::overload;
use lwcbench_link::input;
use lwcbench_link::results::{self, RunDir};
use lwcbench_link::wire::suite;

use super::options::{check_batch, default_out, parse_duration, record, transport_of};

#[derive(Args)]
pub(super) struct OverloadArgs {
    #[arg(long, default_value = "Ascon-AEAD128")]
    cipher: String,
    #[command(flatten)]
    gate: super::args::GateArgs,
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
    pub(super) out: Option<PathBuf>,
    #[arg(long)]
    force: bool,
}

pub(super) fn overload(a: &OverloadArgs) -> Result<(), String> {
    let s = suite::find(&a.cipher)?;
    a.gate.gate().check(&s)?;
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
    let rd = RunDir::begin(&out, a.force, Some(lwcbench_report::link::render))?;
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
        let mut rec = record("overload", config, started, lwcbench_link::wire::gate::notes(std::slice::from_ref(&s)));
        rd.finish(&files, &mut rec)?;
    }
    println!("wrote {}", out.display());
    Ok(())
}
