//! Option rules shared by the link's subcommands: durations, the transport, `--batch`, the
//! default output directory, the key and counter state files, and an experiment's run record.
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use lwcbench_link::results::{LinkRecord, RunDir};
use lwcbench_link::transport::{broker, Transport};

/// "10ms", "1s", "500us", "2m", "0".
pub(super) fn parse_duration(s: &str, opt: &str) -> Result<Duration, String> {
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

/// `--batch`: frames per store transaction.
pub(super) fn check_batch(batch: usize) -> Result<(), String> {
    if batch == 0 || batch > 100_000 {
        return Err(format!("--batch: {batch} is not in 1..=100000"));
    }
    Ok(())
}

/// The default `--out`: ./lwcbench-results/<UTC time>-<name>.
pub(super) fn default_out(name: &str) -> PathBuf {
    lwcbench_engine::results::default_out(SystemTime::now(), name)
}

/// `--transport` and `--broker`: MQTT through the given or an embedded broker, or UDP.
pub(super) fn transport_of(a_transport: &str, broker_url: Option<&str>) -> Result<Transport, String> {
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

/// The key file and counter state of a session: the options, else the output directory's own
/// master key in the key directory (`lwcbench_link::wire::keys::default_key_for`), never inside
/// the results directory.
pub(super) fn state_files(
    rd: &RunDir,
    key_file: &Option<PathBuf>,
    counter_state: &Option<PathBuf>,
) -> Result<(PathBuf, PathBuf), String> {
    let key = match key_file {
        Some(k) => k.clone(),
        None => {
            // Before the key hierarchy the default key lived in OUT/state: name the move.
            let old = rd.out().join("state/master.key");
            let new = lwcbench_link::wire::keys::default_key_for(rd.out())?;
            if old.exists() && !new.exists() {
                return Err(format!(
                    "--out: {} holds a master key inside the results directory, where keys no longer live; move it \
                     and its state out (mv {0} {1}; mv {0}.counters {1}.counters) or give --key-file",
                    old.display(),
                    new.display()
                ));
            }
            new
        }
    };
    // The counter state lives beside the key (KEY.counters): every run with one key continues
    // one state, whatever its --out.
    let counters = counter_state.clone().unwrap_or_else(|| lwcbench_link::device::counter::beside_key(&key));
    Ok((key, counters))
}

/// The run record of an experiment (`link chaos`, `link overload`).
pub(super) fn record(kind: &str, config: serde_json::Value, started: SystemTime, notes: Vec<String>) -> LinkRecord {
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
