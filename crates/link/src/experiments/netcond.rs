//! The link under network conditions: the devices run in network namespace A, the broker
//! (embedded rumqttd) and the gateway in namespace B, joined by the veth pair of
//! [`lwcbench_netimpair::NetnsPair`], and the device → gateway direction is impaired (loss, delay,
//! jitter, reordering, duplication, bandwidth) by the mechanism `lwcbench_netimpair` picks: netem
//! where the kernel has it, otherwise nftables (loss, at B's input hook), tbf (bandwidth, A's
//! egress), our UDP relay (UDP delay/jitter/reorder/duplication) and Toxiproxy (TCP delay/jitter).
//!
//! Placement: a tokio runtime is built on a thread that entered the namespace, so its worker
//! threads (and every socket they open: rumqttc connects inside its event loop) live there; the
//! UDP sockets are bound inside the namespace with [`NetnsPair::in_ns`]. Traffic only ever goes to
//! loopback or to the two veth addresses of the tool's own namespaces.
//!
//! Paths:
//! * UDP: device (A, 10.237.0.1) → relay (B, 10.237.0.2) → gateway socket (B, 127.0.0.1). The relay
//!   is always on the path (with no delay it forwards at once), so its counters account for what
//!   reached B.
//! * MQTT: device (A) → broker (B, 0.0.0.0 inside B) ← gateway (B, 127.0.0.1). With TCP delay or
//!   jitter and no netem, devices connect through a Toxiproxy proxy on 10.237.0.2 instead.
//!
//! Accounting (UDP): sent = stored + counted drops + `not_delivered`, where counted drops are the
//! nftables rule's counter, the relay's drops (queue full, at shutdown, send errors), the UDP
//! receive errors of namespace B (/proc/net/snmp `InErrors`, socket buffers full) and tbf's drops.
//! `not_delivered` must be 0 for UDP; anything else is reported, never hidden.
use std::net::{Ipv4Addr, SocketAddr};
use std::os::unix::fs::MetadataExt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use lwcbench_netimpair::netns::{ADDR_A, ADDR_B};
use lwcbench_netimpair::{conditions, Applied, NetnsPair, RelayConfig, RelayCounts, Side, Toxiproxy, UdpRelay};
use serde::Serialize;

use crate::clock::{now_ns, process_cpu_ns};
use crate::device::fleet::run_fleet;
use crate::gateway::single::GatewayHandle;
use crate::session::{LinkConfig, Outcome};
use crate::transport::broker::{self, BrokerAddr};
use crate::transport::mqtt::mqtt_connect;
use crate::transport::{Publisher, Transport};
use lwcbench_stats::percentile_nearest_rank as nearest_rank;

pub use lwcbench_netimpair::{Backend, Conditions};

/// Which transport a condition run uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum NetTransport {
    /// MQTT 3.1.1 through a broker in namespace B.
    Mqtt,
    /// UDP datagrams through the relay in namespace B.
    Udp,
}

impl NetTransport {
    /// `--transport`: `mqtt` or `udp`.
    pub fn parse(s: &str) -> Result<NetTransport, String> {
        match s {
            "mqtt" => Ok(NetTransport::Mqtt),
            "udp" => Ok(NetTransport::Udp),
            t => Err(format!("--transport: '{t}' is not mqtt or udp")),
        }
    }
    /// The name `--transport` takes.
    pub fn as_str(self) -> &'static str {
        match self {
            NetTransport::Mqtt => "mqtt",
            NetTransport::Udp => "udp",
        }
    }
}

fn ni(e: lwcbench_netimpair::Error) -> String {
    e.to_string()
}

/// The MQTT broker inside namespace B.
#[derive(Clone, Debug)]
pub enum NetBroker {
    /// No broker (UDP runs).
    None,
    /// rumqttd inside this process, its threads in namespace B.
    Embedded,
    /// An external mosquitto binary started inside B; its config is written to `conf_dir`.
    Mosquitto {
        /// The mosquitto binary.
        bin: std::path::PathBuf,
        /// Where its configuration is written.
        conf_dir: std::path::PathBuf,
    },
}

/// The namespace pair with a runtime in each namespace and (for MQTT) an embedded broker in B.
/// Reused for every condition of a sweep; conditions are cleared between runs.
pub struct NetEnv {
    rt_a: Option<tokio::runtime::Runtime>,
    rt_b: Option<tokio::runtime::Runtime>,
    broker_port: Option<u16>,
    /// What the broker in B is ("embedded rumqttd 0.20" or "mosquitto (…)").
    pub broker_desc: String,
    /// An external broker process (mosquitto) running inside B; killed on drop.
    broker_child: Option<std::process::Child>,
    /// Whether the kernel offers netem (probed once; false when the fallbacks are forced).
    pub netem: bool,
    /// Which mechanisms apply the conditions (`--net-backend`).
    pub backend: Backend,
    proxies: AtomicU64,
    // Declared last: dropped after the runtimes.
    /// The namespace pair (A: devices, B: broker and gateway).
    pub pair: NetnsPair,
}

impl NetEnv {
    /// Creates the pair (root needed: one-line error otherwise), one runtime per namespace, and the
    /// embedded broker in B when `mqtt`.
    pub fn create(mqtt: bool, backend: Backend) -> Result<NetEnv, String> {
        NetEnv::create_with(if mqtt { NetBroker::Embedded } else { NetBroker::None }, backend)
    }

    /// As [`NetEnv::create`], with the broker chosen: none (UDP), embedded rumqttd, or an external
    /// mosquitto started inside namespace B (`ip netns exec`), listening on 0.0.0.0:1883 there.
    pub fn create_with(broker: NetBroker, backend: Backend) -> Result<NetEnv, String> {
        let pair = NetnsPair::create().map_err(ni)?;
        let rt_a = pair.in_ns(Side::A, crate::transport::runtime).map_err(ni)??;
        let rt_b = pair.in_ns(Side::B, crate::transport::runtime).map_err(ni)??;
        check_runtime_ns(&pair, Side::A, &rt_a)?;
        check_runtime_ns(&pair, Side::B, &rt_b)?;
        let netem = backend == Backend::Auto && conditions::netem_available(&pair).map_err(ni)?;
        let mut broker_child = None;
        let (broker_port, broker_desc) = match &broker {
            NetBroker::None => (None, String::new()),
            NetBroker::Embedded => (
                Some(pair.in_ns(Side::B, || broker::start_embedded_on([0, 0, 0, 0])).map_err(ni)??),
                "embedded rumqttd 0.20 (in this process, namespace B)".to_string(),
            ),
            NetBroker::Mosquitto { bin, conf_dir } => {
                let conf = conf_dir.join("mosquitto-netns.conf");
                // max_queued_messages: mosquitto's default (1000) silently drops QoS 1 messages
                // beyond it for a slow subscriber; the gateway acknowledges only after commits.
                std::fs::write(
                    &conf,
                    "listener 1883 0.0.0.0\nallow_anonymous true\npersistence false\nmax_queued_messages 1000000\n",
                )
                .map_err(|e| format!("cannot write {}: {e}", conf.display()))?;
                let mut child = pair
                    .command(Side::B, &bin.display().to_string())
                    .arg("-c")
                    .arg(&conf)
                    .stdin(std::process::Stdio::null())
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::null())
                    .spawn()
                    .map_err(|e| format!("cannot start {}: {e}", bin.display()))?;
                let probe = SocketAddr::from((Ipv4Addr::LOCALHOST, 1883));
                let deadline = Instant::now() + Duration::from_secs(10);
                loop {
                    let up = pair
                        .in_ns(Side::B, || std::net::TcpStream::connect_timeout(&probe, Duration::from_millis(200)))
                        .map_err(ni)?;
                    if up.is_ok() {
                        break;
                    }
                    if let Ok(Some(st)) = child.try_wait() {
                        return Err(format!("mosquitto exited at start in namespace B ({st})"));
                    }
                    if Instant::now() > deadline {
                        let _ = child.kill();
                        let _ = child.wait();
                        return Err("mosquitto did not listen on 1883 in namespace B within 10 s".into());
                    }
                    std::thread::sleep(Duration::from_millis(50));
                }
                broker_child = Some(child);
                (Some(1883), format!("mosquitto ({}) in namespace B", bin.display()))
            }
        };
        Ok(NetEnv {
            rt_a: Some(rt_a),
            rt_b: Some(rt_b),
            broker_port,
            broker_desc,
            broker_child,
            netem,
            backend,
            proxies: AtomicU64::new(0),
            pair,
        })
    }

    fn rt_a(&self) -> &tokio::runtime::Runtime {
        self.rt_a.as_ref().expect("runtime lives until drop")
    }
    fn rt_b(&self) -> &tokio::runtime::Runtime {
        self.rt_b.as_ref().expect("runtime lives until drop")
    }

    /// Removes every qdisc and nftables table of ours from both namespaces (absent ones are fine).
    pub fn clear(&self) {
        for side in [Side::A, Side::B] {
            let _ = self.pair.command(side, "nft").args(["delete", "table", "inet", conditions::NFT_TABLE]).output();
            let _ = self.pair.command(side, "tc").args(["qdisc", "del", "dev", "lwcb0", "root"]).output();
        }
    }

    /// A TCP port free on B's veth address a moment ago (for a Toxiproxy listener).
    fn free_port_b(&self) -> Result<u16, String> {
        self.pair
            .in_ns(Side::B, || std::net::TcpListener::bind((ADDR_B, 0)).and_then(|l| l.local_addr()))
            .map_err(ni)?
            .map(|a| a.port())
            .map_err(|e| format!("cannot find a free port in namespace B: {e}"))
    }
}

impl Drop for NetEnv {
    fn drop(&mut self) {
        if let Some(mut c) = self.broker_child.take() {
            // `ip netns exec` execs the broker, so the child pid is the broker itself.
            let _ = c.kill();
            let _ = c.wait();
        }
        for rt in [self.rt_a.take(), self.rt_b.take()].into_iter().flatten() {
            rt.shutdown_timeout(Duration::from_secs(1));
        }
    }
}

/// Checks that the runtime's worker threads live in the namespace of `side` (they were spawned
/// from a thread inside it, and threads inherit the network namespace of their creator).
fn check_runtime_ns(pair: &NetnsPair, side: Side, rt: &tokio::runtime::Runtime) -> Result<(), String> {
    let path = format!("/run/netns/{}", pair.namespace(side));
    let ino = std::fs::metadata(&path).map_err(|e| format!("cannot stat {path}: {e}"))?.ino();
    let want = format!("net:[{ino}]");
    let seen = rt.block_on(async {
        let mut v = Vec::new();
        for _ in 0..8 {
            let h = tokio::spawn(async {
                std::fs::read_link("/proc/thread-self/ns/net").map(|p| p.display().to_string()).unwrap_or_default()
            });
            v.push(h.await.unwrap_or_default());
        }
        v
    });
    match seen.iter().find(|s| **s != want) {
        None => Ok(()),
        Some(s) => Err(format!("internal: a runtime thread for namespace {side:?} is in {s}, not {want}")),
    }
}

/// UDP receive errors (`Udp: … InErrors`) of the namespace of `side`, from its /proc/net/snmp.
pub(crate) fn udp_in_errors(pair: &NetnsPair, side: Side) -> u64 {
    let Ok(out) = pair.command(side, "cat").arg("/proc/net/snmp").output() else { return 0 };
    let text = String::from_utf8_lossy(&out.stdout);
    let mut udp = text.lines().filter(|l| l.starts_with("Udp:"));
    let (Some(head), Some(vals)) = (udp.next(), udp.next()) else { return 0 };
    head.split_whitespace()
        .zip(vals.split_whitespace())
        .find(|(h, _)| *h == "InErrors")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0)
}

/// Packets the qdiscs on `side`'s veth dropped (tbf overflow), from `tc -s -j qdisc show`.
pub(crate) fn qdisc_drops(pair: &NetnsPair, side: Side) -> u64 {
    let Ok(out) = pair.command(side, "tc").args(["-s", "-j", "qdisc", "show", "dev", "lwcb0"]).output() else {
        return 0;
    };
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    v.as_array().into_iter().flatten().filter_map(|q| q["drops"].as_u64()).sum()
}

/// What one run under one set of conditions did.
pub struct CondRun {
    /// The transport of the run.
    pub transport: NetTransport,
    /// The conditions applied.
    pub conditions: Conditions,
    /// The session's outcome.
    pub outcome: Outcome,
    /// Each condition with the mechanism that applied it.
    pub applied: Vec<Applied>,
    /// Packets the nftables loss rule dropped.
    pub nft_dropped: u64,
    /// The UDP relay's counts (UDP runs).
    pub relay: Option<RelayCounts>,
    /// UDP receive errors in namespace B during the run (socket buffers full).
    pub udp_in_errors: u64,
    /// Packets the qdiscs on A's side dropped (tbf overflow).
    pub qdisc_drops: u64,
    /// The per-condition time limit after the devices finished.
    pub timeout: Duration,
    /// The limit was reached with frames still outstanding.
    pub timed_out: bool,
    /// The path the frames took, for run.json.
    pub path: String,
}

impl CondRun {
    /// Drops that some mechanism counted (UDP; for MQTT TCP retransmits what nftables drops).
    pub fn counted_drops(&self) -> u64 {
        if self.transport == NetTransport::Mqtt {
            return 0;
        }
        let relay = self.relay.map_or(0, |r| r.dropped_queue_full + r.dropped_at_shutdown + r.send_errors);
        self.nft_dropped + relay + self.udp_in_errors + self.qdisc_drops
    }

    /// sent − stored − counted drops: readings that did not arrive within the time limit and that no
    /// mechanism counted (must be 0 for UDP).
    pub fn not_delivered(&self) -> i64 {
        self.outcome.sent as i64 - self.outcome.new_rows as i64 - self.counted_drops() as i64
    }
}

/// Runs `cfg` (its `transport` is ignored; `transport` says which) once under `cond`.
/// `toxi` holds the Toxiproxy server once started (started on first need, reused afterwards).
pub fn run_condition<'e>(
    env: &'e NetEnv,
    toxi: &mut Option<Toxiproxy<'e>>,
    cfg: &LinkConfig,
    transport: NetTransport,
    cond: &Conditions,
    seed: u64,
) -> Result<CondRun, String> {
    cfg.check()?;
    if cfg.carrier.is_some() {
        return Err("--carrier lorawan: not with network conditions".into());
    }
    cond.validate().map_err(ni)?;
    if transport == NetTransport::Mqtt && env.broker_port.is_none() {
        return Err("internal: MQTT condition run without a broker in namespace B".into());
    }
    env.clear();
    let ni_transport = match transport {
        NetTransport::Mqtt => conditions::Transport::Tcp,
        NetTransport::Udp => conditions::Transport::Udp,
    };
    let plan = conditions::apply(&env.pair, Side::A, cond, ni_transport, env.backend).map_err(ni)?;
    let mut applied = plan.applied.clone();

    let (master, counters) = crate::device::counter::open_session(&cfg.key_file, &cfg.counter_file, cfg.counter_block)?;
    let ids: Vec<u32> = (0..cfg.devices).collect();
    crate::device::provision::refuse_provisioned(&cfg.key_file, &master, crate::wire::frame::Family::Sensor, &ids)?;
    let store = crate::store::open(&cfg.store, &cfg.session, &master.fingerprint())?;
    let store_desc = store.describe();
    let blocks = counters.reserve_all(&ids)?;
    let (rt_a, rt_b) = (env.rt_a(), env.rt_b());
    let hb = rt_b.handle().clone();
    let gw_transport = match transport {
        NetTransport::Mqtt => Transport::Mqtt(BrokerAddr {
            host: "127.0.0.1".into(),
            port: env.broker_port.expect("checked"),
            embedded: env.broker_child.is_none(),
        }),
        NetTransport::Udp => Transport::Udp,
    };
    let spec = cfg.gateway_spec(ids.clone(), store, gw_transport);
    let gw = env.pair.in_ns(Side::B, || GatewayHandle::start(spec, &master, &hb)).map_err(ni)??;

    let (relay, dev_broker, path) = entry_point(env, toxi, transport, &plan.user_space, &gw, seed, &mut applied)?;
    let in_errors0 = udp_in_errors(&env.pair, Side::B);

    let (publishers, conns) = publishers(env, cfg, transport, dev_broker.as_ref(), relay.as_ref())?;

    let cpu0 = process_cpu_ns();
    let t0 = now_ns();
    let (dev, first_err) = run_fleet(rt_a.handle(), &cfg.fleet(), &ids, blocks, &master, &counters, &publishers)?;
    let sent = dev.len() as u64;

    let timeout = cfg.drain_timeout;
    let timed_out = drain(&gw, transport, cond, sent, timeout);
    let relay_counts = relay.map(|r| rt_b.block_on(r.stop()));
    if transport == NetTransport::Udp {
        settle(&gw);
    }
    let mut res = gw.stop(&hb);
    let process_cpu = process_cpu_ns() - cpu0;
    for c in conns {
        let _ = rt_a.block_on(async { tokio::time::timeout(Duration::from_secs(1), c.client.disconnect()).await });
        c.task.abort();
    }
    // 0 where no loss rule was applied (the table does not exist).
    let nft_dropped = conditions::nft_dropped(&env.pair, Side::B).map_err(ni)?;
    let qdisc = qdisc_drops(&env.pair, Side::A);
    let in_errors = udp_in_errors(&env.pair, Side::B).saturating_sub(in_errors0);
    if let Some(e) = first_err.or(res.error.take()) {
        return Err(e);
    }
    let t_end = res.samples.iter().map(|s| s.committed).max().unwrap_or(t0);
    let (matched, mismatched) = crate::session::check_store(&res.store.all()?, &dev, &cfg.readings);
    let checked = res.tally.accepted + res.tally.refused_total();
    let outcome = Outcome {
        sent,
        new_rows: res.new_rows,
        duplicates: res.duplicates,
        tally: res.tally,
        dev,
        gw: res.samples,
        elapsed_ns: t_end.saturating_sub(t0),
        gateway_cpu_ns: res.cpu_ns,
        process_cpu_ns: process_cpu,
        per_worker: vec![checked],
        store_desc,
        transport_desc: format!(
            "{} under network conditions: {path}",
            match transport {
                NetTransport::Mqtt => "MQTT 3.1.1 QoS 1, persistent sessions",
                NetTransport::Udp => "UDP datagrams (no retransmission)",
            }
        ),
        mismatched,
        missing: sent - matched.min(sent),
        counter_writes: counters.writes(),
    };
    Ok(CondRun {
        transport,
        conditions: cond.clone(),
        outcome,
        applied,
        nft_dropped,
        relay: relay_counts,
        udp_in_errors: in_errors,
        qdisc_drops: qdisc,
        timeout,
        timed_out,
        path,
    })
}

/// The devices' entry point into namespace B, set up for `transport`: the UDP relay in front of
/// the gateway, the broker, or a Toxiproxy proxy in front of it when TCP delay or jitter needs
/// user space. Returns the relay, the broker address the devices use, and the path's description.
fn entry_point<'e>(
    env: &'e NetEnv,
    toxi: &mut Option<Toxiproxy<'e>>,
    transport: NetTransport,
    user_space: &lwcbench_netimpair::conditions::UserSpace,
    gw: &GatewayHandle,
    seed: u64,
    applied: &mut Vec<Applied>,
) -> Result<(Option<UdpRelay>, Option<BrokerAddr>, String), String> {
    match transport {
        NetTransport::Udp => {
            let upstream = gw.udp_addr.ok_or("internal: UDP gateway without an address")?;
            let r = {
                let _g = env.rt_b().enter();
                UdpRelay::start_in(
                    &env.pair,
                    Side::B,
                    SocketAddr::from((ADDR_B, 0)),
                    upstream,
                    RelayConfig::from_user_space(user_space, seed),
                )
                .map_err(ni)?
            };
            applied.extend(r.applied().iter().cloned());
            let path = format!(
                "devices (ns A, {ADDR_A}) -> UDP relay (ns B, {}) -> gateway (ns B, {upstream})",
                r.local_addr()
            );
            Ok((Some(r), None, path))
        }
        NetTransport::Mqtt => {
            let port = env.broker_port.ok_or("internal: MQTT condition run without a broker in namespace B")?;
            if user_space.is_none() {
                let path = format!(
                    "devices (ns A, {ADDR_A}) -> broker (ns B, {ADDR_B}:{port}; {}) <- gateway (ns B, 127.0.0.1)",
                    env.broker_desc
                );
                return Ok((None, Some(BrokerAddr { host: ADDR_B.to_string(), port, embedded: false }), path));
            }
            if toxi.is_none() {
                *toxi = Some(Toxiproxy::start(&env.pair, Side::B, seed).map_err(ni)?);
            }
            let t = toxi.as_ref().expect("started");
            let name = format!("mqtt{}", env.proxies.fetch_add(1, Ordering::Relaxed));
            let listen_port = env.free_port_b()?;
            let listen = SocketAddr::from((ADDR_B, listen_port));
            t.proxy(&name, listen, SocketAddr::from((Ipv4Addr::LOCALHOST, port))).map_err(ni)?;
            applied.extend(t.apply_user_space(&name, user_space).map_err(ni)?);
            let path = format!(
                "devices (ns A, {ADDR_A}) -> Toxiproxy {name} (ns B, {listen}) -> broker (ns B, 127.0.0.1:{port}; {}) <- gateway (ns B)",
                env.broker_desc
            );
            Ok((None, Some(BrokerAddr { host: ADDR_B.to_string(), port: listen_port, embedded: false }), path))
        }
    }
}

/// The devices' connections in namespace A (`--connections`, at most one per device): MQTT
/// clients of `dev_broker`, or UDP sockets sending to the relay.
fn publishers(
    env: &NetEnv,
    cfg: &LinkConfig,
    transport: NetTransport,
    dev_broker: Option<&BrokerAddr>,
    relay: Option<&UdpRelay>,
) -> Result<(Vec<Publisher>, Vec<crate::transport::mqtt::MqttConn>), String> {
    let rt_a = env.rt_a();
    let ncon = cfg.connections.clamp(1, cfg.devices as usize);
    let mut publishers = Vec::new();
    let mut conns = Vec::new();
    for k in 0..ncon {
        match transport {
            NetTransport::Mqtt => {
                let b = dev_broker.ok_or("internal: MQTT devices without a broker address")?;
                let c = rt_a.block_on(mqtt_connect(&format!("lwcbench-dev-{}-{k}", cfg.session), b))?;
                publishers.push(Publisher::Mqtt { client: c.client.clone(), session: cfg.session.clone() });
                conns.push(c);
            }
            NetTransport::Udp => {
                let s = env
                    .pair
                    .in_ns(Side::A, || std::net::UdpSocket::bind((ADDR_A, 0)))
                    .map_err(ni)?
                    .map_err(|e| format!("udp: cannot bind in namespace A: {e}"))?;
                s.set_nonblocking(true).map_err(|e| format!("udp: {e}"))?;
                let _g = rt_a.enter();
                let s = tokio::net::UdpSocket::from_std(s).map_err(|e| format!("udp: {e}"))?;
                let to = relay.ok_or("internal: UDP devices without a relay")?.local_addr();
                publishers.push(Publisher::Udp { sock: Arc::new(s), to });
            }
        }
    }
    Ok((publishers, conns))
}

/// Drain within the per-condition limit `timeout`. MQTT: until the gateway has checked every
/// frame. UDP: until nothing has arrived for longer than the relay can hold a datagram. True:
/// the limit was reached first.
fn drain(gw: &GatewayHandle, transport: NetTransport, cond: &Conditions, sent: u64, timeout: Duration) -> bool {
    let deadline = Instant::now() + timeout;
    let hold = Duration::from_millis(2 * u64::from(cond.delay_ms + cond.jitter_ms))
        + Duration::from_millis(500)
        + if cond.reorder_pct > 0.0 { Duration::from_secs(1) } else { Duration::ZERO };
    let mut last = (gw.processed(), Instant::now());
    loop {
        let p = gw.processed();
        // a gateway stopped on a store error: its error ends the session below
        if (transport == NetTransport::Mqtt && p >= sent) || gw.failed() {
            return false;
        }
        if p != last.0 {
            last = (p, Instant::now());
        } else if transport == NetTransport::Udp && last.1.elapsed() > hold {
            return false;
        }
        if Instant::now() >= deadline {
            return true;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// What the relay forwarded last must leave the gateway's socket before it stops reading: wait
/// until the gateway took nothing for 200 ms.
fn settle(gw: &GatewayHandle) {
    let mut last = (gw.processed(), Instant::now());
    while last.1.elapsed() < Duration::from_millis(200) {
        std::thread::sleep(Duration::from_millis(5));
        let p = gw.processed();
        if p != last.0 {
            last = (p, Instant::now());
        }
    }
}

/// One row of `link_conditions.csv`: one cipher × transport × condition.
#[derive(Serialize, Clone, Debug, Default)]
pub struct ConditionRow {
    /// The cipher's name.
    pub cipher: String,
    /// `mqtt` or `udp`.
    pub transport: String,
    /// Loss applied (%).
    pub loss_pct: f64,
    /// Delay applied (ms).
    pub delay_ms: u32,
    /// Jitter applied (ms).
    pub jitter_ms: u32,
    /// Reordering applied (%).
    pub reorder_pct: f64,
    /// Duplication applied (%).
    pub duplicate_pct: f64,
    /// Bandwidth limit (kbit/s; 0: none).
    pub bandwidth_kbit: u32,
    /// condition=mechanism pairs, e.g. "loss=nftables;delay=toxiproxy".
    pub mechanisms: String,
    /// Devices in the run.
    pub devices: u32,
    /// Readings per second the devices offer (0: back to back).
    pub offered_per_s: f64,
    /// Readings sent.
    pub sent: u64,
    /// Readings stored.
    pub stored: u64,
    /// stored / sent.
    pub delivery_ratio: f64,
    /// Drops some mechanism counted (UDP; 0 for MQTT, which retransmits).
    pub counted_drops: u64,
    /// Packets the nftables loss rule dropped.
    pub nft_dropped: u64,
    /// Datagrams the relay dropped (queue full, at shutdown, send errors).
    pub relay_dropped: u64,
    /// UDP receive errors in namespace B.
    pub udp_in_errors: u64,
    /// Packets tbf dropped.
    pub qdisc_drops: u64,
    /// sent − stored − counted drops: not delivered within the time limit (and, for UDP, counted by
    /// nothing: must be 0).
    pub not_delivered_within_t: i64,
    /// The per-condition time limit after the devices finished (s).
    pub timeout_s: f64,
    /// Whether the limit was reached with frames outstanding.
    pub timed_out: bool,
    /// Copies the store already held.
    pub duplicates_ignored: u64,
    /// Stored readings that differ from what was sent.
    pub mismatched: u64,
    /// Datagrams the relay duplicated.
    pub relay_duplicated: u64,
    /// Datagrams the relay held back and sent out of order.
    pub relay_reordered: u64,
    /// Refused: not a frame of this link.
    pub refused_malformed: u64,
    /// Refused: a device the gateway does not serve.
    pub refused_unknown_device: u64,
    /// Refused: another cipher or frame type.
    pub refused_wrong_cipher: u64,
    /// Refused: a counter already accepted.
    pub refused_replay: u64,
    /// Refused: below the replay window.
    pub refused_too_old: u64,
    /// Refused: the tag does not verify.
    pub refused_bad_tag: u64,
    /// Readings stored per second.
    pub stored_per_s: f64,
    /// End to end (seal → commit), median (ms).
    pub e2e_p50_ms: f64,
    /// End to end, 90th percentile (ms).
    pub e2e_p90_ms: f64,
    /// End to end, 99th percentile (ms).
    pub e2e_p99_ms: f64,
    /// End to end, largest (ms).
    pub e2e_max_ms: f64,
}

fn ms(ns: u64) -> f64 {
    (ns as f64 / 1e6 * 1000.0).round() / 1000.0
}

/// The end-to-end latencies (seal → commit) of the stored readings, sorted, in ns.
pub fn e2e_sorted(o: &Outcome) -> Vec<u64> {
    let mut by = std::collections::HashMap::with_capacity(o.dev.len());
    for d in &o.dev {
        by.insert((d.device, d.counter), d.seal_start);
    }
    let mut v: Vec<u64> =
        o.gw.iter().filter_map(|g| by.get(&(g.device, g.counter)).map(|s| g.committed.saturating_sub(*s))).collect();
    v.sort_unstable();
    v
}

impl ConditionRow {
    /// The row of the run `r` of `cipher` with `devices` devices sending every `interval`.
    pub fn new(cipher: &str, devices: u32, interval: Option<Duration>, r: &CondRun) -> ConditionRow {
        use crate::gateway::checks::Refusal;
        let o = &r.outcome;
        let e2e = e2e_sorted(o);
        let c = &r.conditions;
        let elapsed_s = o.elapsed_ns as f64 / 1e9;
        ConditionRow {
            cipher: cipher.to_string(),
            transport: r.transport.as_str().into(),
            loss_pct: c.loss_pct,
            delay_ms: c.delay_ms,
            jitter_ms: c.jitter_ms,
            reorder_pct: c.reorder_pct,
            duplicate_pct: c.duplicate_pct,
            bandwidth_kbit: c.rate_kbit.unwrap_or(0),
            mechanisms: r
                .applied
                .iter()
                .map(|a| {
                    format!(
                        "{}={}",
                        a.condition,
                        serde_json::to_value(a.mechanism).unwrap_or_default().as_str().unwrap_or("?")
                    )
                })
                .collect::<Vec<_>>()
                .join(";"),
            devices,
            offered_per_s: interval.map_or(0.0, |i| (devices as f64 / i.as_secs_f64()).round()),
            sent: o.sent,
            stored: o.new_rows,
            delivery_ratio: if o.sent > 0 { (o.new_rows as f64 / o.sent as f64 * 1e4).round() / 1e4 } else { 0.0 },
            counted_drops: r.counted_drops(),
            nft_dropped: r.nft_dropped,
            relay_dropped: r.relay.map_or(0, |x| x.dropped_queue_full + x.dropped_at_shutdown + x.send_errors),
            udp_in_errors: r.udp_in_errors,
            qdisc_drops: r.qdisc_drops,
            not_delivered_within_t: r.not_delivered(),
            timeout_s: r.timeout.as_secs_f64(),
            timed_out: r.timed_out,
            duplicates_ignored: o.duplicates,
            mismatched: o.mismatched,
            relay_duplicated: r.relay.map_or(0, |x| x.duplicated),
            relay_reordered: r.relay.map_or(0, |x| x.reordered),
            refused_malformed: o.tally.count(Refusal::Malformed),
            refused_unknown_device: o.tally.count(Refusal::UnknownDevice),
            refused_wrong_cipher: o.tally.count(Refusal::WrongCipher),
            refused_replay: o.tally.count(Refusal::Replay),
            refused_too_old: o.tally.count(Refusal::TooOld),
            refused_bad_tag: o.tally.count(Refusal::BadTag),
            stored_per_s: if elapsed_s > 0.0 { (o.new_rows as f64 / elapsed_s).round() } else { 0.0 },
            e2e_p50_ms: ms(nearest_rank(&e2e, 50.0).unwrap_or(0)),
            e2e_p90_ms: ms(nearest_rank(&e2e, 90.0).unwrap_or(0)),
            e2e_p99_ms: ms(nearest_rank(&e2e, 99.0).unwrap_or(0)),
            e2e_max_ms: ms(e2e.last().copied().unwrap_or(0)),
        }
    }
}

/// The run.json record of one condition run: the conditions, every applied mechanism, the counters.
pub fn run_json(cipher: &str, r: &CondRun) -> serde_json::Value {
    serde_json::json!({
        "cipher": cipher,
        "transport": r.transport.as_str(),
        "conditions": r.conditions,
        "applied": r.applied,
        "path": r.path,
        "nft_dropped": r.nft_dropped,
        "relay": r.relay,
        "udp_in_errors_ns_b": r.udp_in_errors,
        "qdisc_drops_ns_a": r.qdisc_drops,
        "sent": r.outcome.sent,
        "stored": r.outcome.new_rows,
        "counted_drops": r.counted_drops(),
        "not_delivered_within_t": r.not_delivered(),
        "timeout_s": r.timeout.as_secs_f64(),
        "timed_out": r.timed_out,
    })
}
