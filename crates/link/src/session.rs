//! The measured session: device fleet → transport (MQTT QoS 1 or UDP) → gateway → store, with a
//! timestamp at every hop so end-to-end latency splits into seal / transport / open / store.
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::clock::{now_ns, process_cpu_ns};
use crate::device::fleet::{run_fleet, DevSample, Fleet};
use crate::gateway::checks::Tally;
use crate::gateway::single::GatewayHandle;
use crate::gateway::workers::WorkerPool;
use crate::gateway::{GatewaySpec, GwResult, GwSample};
use crate::store::Row;
use crate::transport::mqtt::mqtt_connect;
use crate::transport::{runtime, Publisher, Transport};
use crate::wire::compact::Carrier;
use crate::wire::suite::Suite;

/// (matched, mismatched): this run's rows of the store (`rows`: the store gives only the rows
/// tagged with this run) compared bit for bit with what the devices sent. A row no device of
/// this run sent is mismatched.
pub fn check_store(rows: &[Row], dev: &[DevSample], readings: &[Vec<u8>]) -> (u64, u64) {
    let mut expected = std::collections::HashMap::with_capacity(dev.len());
    for s in dev {
        expected.insert((s.device, s.counter), s.row);
    }
    let (mut matched, mut mismatched) = (0u64, 0u64);
    for r in rows {
        match expected.get(&(r.device, r.counter)) {
            Some(&row) if readings[row as usize] == r.payload => matched += 1,
            _ => mismatched += 1,
        }
    }
    (matched, mismatched)
}

/// One whole link session.
pub struct LinkConfig {
    /// The cipher.
    pub suite: Suite,
    /// `--unsafe-no-integrity`: frames without a tag.
    pub unauthenticated: bool,
    /// Devices (ids 0..devices).
    pub devices: u32,
    /// Readings per device.
    pub messages: u64,
    /// Between a device's readings (None: back to back).
    pub interval: Option<Duration>,
    /// The transport.
    pub transport: Transport,
    /// `--store`.
    pub store: String,
    /// The replay window (counters).
    pub window: u64,
    /// Counters reserved per counter-state write.
    pub counter_block: u64,
    /// The master key file.
    pub key_file: PathBuf,
    /// Its counter state file.
    pub counter_file: PathBuf,
    /// Device connections (MQTT clients or UDP sockets) the devices share.
    pub connections: usize,
    /// After the devices finished: longest wait for the gateway.
    pub drain_timeout: Duration,
    /// The readings the devices send, in turn.
    pub readings: Arc<Vec<Vec<u8>>>,
    /// Readings per store transaction at most.
    pub batch: usize,
    /// The session id (topics, store run).
    pub session: String,
    /// `--carrier lorawan`: compact frames in the LoRaWAN emulation (None: the link's own).
    pub carrier: Option<Carrier>,
}

impl LinkConfig {
    /// What the devices of this session share.
    pub fn fleet(&self) -> Fleet<'_> {
        Fleet {
            suite: &self.suite,
            unauthenticated: self.unauthenticated,
            messages: self.messages,
            interval: self.interval,
            readings: &self.readings,
            carrier: self.carrier,
        }
    }

    /// The device ids: 0..devices, or the DevAddrs of the carrier's devices.
    pub fn device_ids(&self) -> Result<Vec<u32>, String> {
        match &self.carrier {
            Some(c) => c.device_ids(self.devices),
            None => Ok((0..self.devices).collect()),
        }
    }

    /// The gateway settings of this session, for `devices` storing into `store` over
    /// `transport` (the session's own, or the one a network-conditions run puts in between).
    pub fn gateway_spec(
        &self,
        devices: Vec<u32>,
        store: Box<dyn crate::store::Store>,
        transport: Transport,
    ) -> GatewaySpec {
        GatewaySpec {
            suite: self.suite.clone(),
            unauthenticated: self.unauthenticated,
            devices,
            window: self.window,
            store,
            session: self.session.clone(),
            transport,
            batch: self.batch,
            max_samples: 4 << 20,
            max_failed_tags: None,
            accepted: Some(crate::gateway::accepted::beside_key(&self.key_file)),
        }
    }

    /// The limits every session checks before it starts anything.
    pub fn check(&self) -> Result<(), String> {
        crate::input::check_session(&self.session)?;
        if self.devices == 0 || self.devices > 100_000 {
            return Err(format!("--devices: {} is not in 1..=100000", self.devices));
        }
        if self.messages == 0 {
            return Err("--messages: at least one message per device".into());
        }
        if self.readings.is_empty() {
            return Err("dataset has no readings".into());
        }
        // A frame above the gateway's limit would be refused unread (or never delivered by the
        // broker): say so before anything is sent.
        let longest = self.readings.iter().map(Vec::len).max().unwrap_or(0);
        let frame = longest + self.suite.overhead(self.unauthenticated);
        if frame > crate::wire::frame::MAX_FRAME {
            return Err(format!(
                "--dataset: a reading of {longest} bytes makes a {frame}-byte frame, above the {} KiB frame limit \
                 (fewer channels per row)",
                crate::wire::frame::MAX_FRAME / 1024
            ));
        }
        if let Some(c) = &self.carrier {
            // The compact header authenticates what the carrier numbers; without a tag nothing is.
            if self.unauthenticated {
                return Err("--unsafe-no-integrity: not with --carrier lorawan (the compact header needs a tag)".into());
            }
            if !matches!(self.transport, Transport::Udp) {
                return Err("--carrier lorawan: the LoRaWAN emulation runs over --transport udp".into());
            }
            c.device_ids(self.devices)?;
        }
        crate::gateway::replay::check_window_memory(self.devices as u64, self.window, 1)
    }
}

/// The measured outcome of a session.
pub struct Outcome {
    /// Readings sent.
    pub sent: u64,
    /// Rows the store took as new.
    pub new_rows: u64,
    /// Copies the store already held.
    pub duplicates: u64,
    /// The gateway's verdicts.
    pub tally: Tally,
    /// The devices' samples (one per reading).
    pub dev: Vec<DevSample>,
    /// The gateway's samples (one per stored reading).
    pub gw: Vec<GwSample>,
    /// First seal → last commit.
    pub elapsed_ns: u64,
    /// CPU time of the gateway threads.
    pub gateway_cpu_ns: u64,
    /// CPU time of the whole process.
    pub process_cpu_ns: u64,
    /// The store as described in run.json.
    pub store_desc: String,
    /// The transport as described in run.json.
    pub transport_desc: String,
    /// Stored rows whose payload differs from what the device sent, or that no device sent.
    pub mismatched: u64,
    /// Sent but not stored.
    pub missing: u64,
    /// Writes of the counter state file.
    pub counter_writes: u64,
    /// Frames each gateway worker checked (`--workers`; one entry for the single gateway).
    pub per_worker: Vec<u64>,
}

/// A random session id (topic namespace and client ids).
pub fn new_session() -> String {
    let mut b = [0u8; 6];
    rand::fill(&mut b);
    hex::encode(b)
}

/// Run devices → transport → gateway → store once and measure it.
pub fn run(cfg: &LinkConfig) -> Result<Outcome, String> {
    run_workers(cfg, 1)
}

/// [`run`] with `workers` gateway workers: 1 is the single gateway; more start a
/// [`WorkerPool`] on an MQTT v5 shared subscription, replay state in the store.
pub fn run_workers(cfg: &LinkConfig, workers: usize) -> Result<Outcome, String> {
    cfg.check()?;
    if cfg.carrier.is_some() && workers > 1 {
        return Err("--carrier lorawan: one gateway only (--workers 1)".into());
    }
    crate::gateway::replay::check_window_memory(cfg.devices as u64, cfg.window, workers as u64)?;
    let (master, counters) = crate::device::counter::open_session(&cfg.key_file, &cfg.counter_file, cfg.counter_block)?;
    let ids = cfg.device_ids()?;
    crate::device::provision::refuse_provisioned(&cfg.key_file, &master, crate::wire::frame::Family::Sensor, &ids)?;
    // Anti-rollback: a counter state behind what the key's receivers accepted was restored from
    // an older copy; its counters would seal again under nonces already used.
    crate::gateway::accepted::check_none_behind(
        &cfg.counter_file,
        &crate::gateway::accepted::beside_key(&cfg.key_file),
        Some(&master.fingerprint()),
        crate::wire::frame::Proto::Sensor,
        &ids,
    )?;
    let store = crate::store::open(&cfg.store, &cfg.session, &master.fingerprint())?;
    let store_desc = store.describe();
    let blocks = counters.reserve_all(&ids)?;
    let rt = runtime()?;
    let handle = rt.handle().clone();
    let spec = cfg.gateway_spec(ids.clone(), store, cfg.transport.clone());
    let gw = if workers > 1 {
        Gw::Pool(WorkerPool::start(spec, &cfg.store, workers, &master, &handle)?)
    } else {
        Gw::One(GatewayHandle::start_carried(spec, cfg.carrier, &master, &handle)?)
    };
    let ncon = cfg.connections.clamp(1, cfg.devices as usize);
    let (publishers, conns) = rt.block_on(async {
        let mut pubs = Vec::new();
        let mut conns = Vec::new();
        for k in 0..ncon {
            match &cfg.transport {
                Transport::Mqtt(b) => {
                    let c = mqtt_connect(&format!("lwcbench-dev-{}-{k}", cfg.session), b).await?;
                    pubs.push(Publisher::Mqtt { client: c.client.clone(), session: cfg.session.clone() });
                    conns.push(c);
                }
                Transport::Udp => {
                    let s = tokio::net::UdpSocket::bind("127.0.0.1:0").await.map_err(|e| format!("udp: {e}"))?;
                    pubs.push(Publisher::Udp { sock: Arc::new(s), to: gw.udp_addr().expect("udp gateway") });
                }
            }
        }
        Ok::<_, String>((pubs, conns))
    })?;
    let cpu0 = process_cpu_ns();
    let t0 = now_ns();
    let (dev, first_err) = run_fleet(&handle, &cfg.fleet(), &ids, blocks, &master, &counters, &publishers)?;
    let sent = dev.len() as u64;
    // Drain: wait until the gateway has checked every frame sent (MQTT delivers them all), or
    // for UDP until nothing has arrived for a while (the rest is lost).
    let deadline = Instant::now() + cfg.drain_timeout;
    let mut last = (gw.processed(), Instant::now());
    while gw.processed() < sent && Instant::now() < deadline && !gw.failed() {
        std::thread::sleep(Duration::from_millis(2));
        let p = gw.processed();
        if p != last.0 {
            last = (p, Instant::now());
        } else if matches!(cfg.transport, Transport::Udp) && last.1.elapsed() > Duration::from_millis(500) {
            break;
        }
    }
    // MQTT QoS 1 loses nothing: frames the gateway has not checked by now are held up, not lost,
    // and a run that reported them as `missing` and exited 0 would hide a stall.
    let stalled = match cfg.transport {
        _ if gw.failed() => None, // the gateway's own error is reported below
        Transport::Mqtt(_) => undrained(sent, gw.processed(), last.1.elapsed(), cfg.drain_timeout),
        Transport::Udp => None,
    };
    let (mut res, per_worker) = gw.stop(&handle);
    let process_cpu_ns = process_cpu_ns() - cpu0;
    for c in conns {
        let _ = rt.block_on(async { tokio::time::timeout(Duration::from_secs(1), c.client.disconnect()).await });
        c.task.abort();
    }
    rt.shutdown_timeout(Duration::from_secs(1));
    if let Some(e) = first_err.or(res.error.take()).or(stalled) {
        return Err(e);
    }
    let t_end = res.samples.iter().map(|s| s.committed).max().unwrap_or(t0);
    // Verify the store bit for bit against what the devices sent.
    let (matched, mismatched) = check_store(&res.store.all()?, &dev, &cfg.readings);
    // MQTT QoS 1 delivered every frame (the drain above): a reading sent and not stored as this
    // run's is lost, and the run fails rather than report it as a number.
    if matches!(cfg.transport, Transport::Mqtt(_)) && (matched < sent || mismatched > 0) {
        return Err(format!(
            "store {store_desc}: {} of {sent} readings sent are not stored as this run's and {mismatched} stored \
             rows differ from what was sent ({} duplicates ignored)",
            sent - matched.min(sent),
            res.duplicates
        ));
    }
    Ok(Outcome {
        sent,
        new_rows: res.new_rows,
        duplicates: res.duplicates,
        tally: res.tally,
        dev,
        gw: res.samples,
        elapsed_ns: t_end.saturating_sub(t0),
        gateway_cpu_ns: res.cpu_ns,
        process_cpu_ns,
        store_desc: match workers {
            1 => store_desc,
            _ => format!("{store_desc}; replay state shared in the store (per-device top + unique key)"),
        },
        transport_desc: match workers {
            1 => cfg.transport.describe(),
            k => format!("{}; {k} gateway workers on MQTT v5 shared subscription", cfg.transport.describe()),
        },
        mismatched,
        missing: sent - matched.min(sent),
        counter_writes: counters.writes(),
        per_worker,
    })
}

/// The error of an MQTT run whose gateway had checked only `checked` of the `sent` frames when the
/// drain timeout ended, the last of them `idle` ago; None when it checked them all.
pub fn undrained(sent: u64, checked: u64, idle: Duration, timeout: Duration) -> Option<String> {
    if checked >= sent {
        return None;
    }
    let rest = sent - checked;
    Some(if idle >= Duration::from_secs(1) {
        format!(
            "gateway stalled: it checked {checked} of {sent} readings and none in the last {:.1} s of the {:.1} s drain \
             timeout; {rest} not delivered (MQTT QoS 1: the broker still holds them)",
            idle.as_secs_f64(),
            timeout.as_secs_f64()
        )
    } else {
        format!(
            "drain timeout: the gateway checked {checked} of {sent} readings within {:.1} s after the devices finished \
             and was still receiving; {rest} not delivered (raise --drain-timeout)",
            timeout.as_secs_f64()
        )
    })
}

/// The single gateway or a pool of workers, as `run_workers` drives them.
enum Gw {
    One(GatewayHandle),
    Pool(WorkerPool),
}

impl Gw {
    fn processed(&self) -> u64 {
        match self {
            Gw::One(g) => g.processed(),
            Gw::Pool(p) => p.processed(),
        }
    }
    fn failed(&self) -> bool {
        match self {
            Gw::One(g) => g.failed(),
            Gw::Pool(p) => p.failed(),
        }
    }
    fn udp_addr(&self) -> Option<SocketAddr> {
        match self {
            Gw::One(g) => g.udp_addr,
            Gw::Pool(_) => None,
        }
    }
    fn stop(self, rt: &tokio::runtime::Handle) -> (GwResult, Vec<u64>) {
        match self {
            Gw::One(g) => {
                let n = g.processed();
                (g.stop(rt), vec![n])
            }
            Gw::Pool(p) => p.stop(rt),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn undrained_names_a_stall_and_a_slow_drain() {
        let t = Duration::from_secs(20);
        assert_eq!(undrained(64_000, 64_000, Duration::ZERO, t), None);
        assert_eq!(undrained(64_000, 64_010, Duration::from_secs(20), t), None);
        // Idle for 18 s of 20: stopped receiving. 64,000 − 35,000 = 29,000 held up.
        assert_eq!(
            undrained(64_000, 35_000, Duration::from_secs(18), t).unwrap(),
            "gateway stalled: it checked 35000 of 64000 readings and none in the last 18.0 s of the 20.0 s drain \
             timeout; 29000 not delivered (MQTT QoS 1: the broker still holds them)"
        );
        // Last frame 10 ms before the deadline: slow, not stopped.
        assert_eq!(
            undrained(64_000, 63_999, Duration::from_millis(10), t).unwrap(),
            "drain timeout: the gateway checked 63999 of 64000 readings within 20.0 s after the devices finished \
             and was still receiving; 1 not delivered (raise --drain-timeout)"
        );
    }
}
