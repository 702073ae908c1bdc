//! `lwcbench link modbus-proxy` (one side of the encrypting pair) and `lwcbench link modbus`
//! (the poll cycle timed plain and sealed). See docs/link.md "Modbus/TCP bump-in-the-wire".
use std::io::Write;
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use clap::Args;
use lwcbench_link::device::counter;
use lwcbench_link::industrial::modbus::floor;
use lwcbench_link::industrial::modbus::measure::{self, Options};
use lwcbench_link::industrial::modbus::peers::Cycle;
use lwcbench_link::industrial::modbus::proxy::{self, Hop, Limits, Side};
use lwcbench_link::input;
use lwcbench_link::results::{LinkRecord, RunDir};
use lwcbench_link::wire::frame::Family;
use lwcbench_link::wire::suite;

use super::options::{default_out, parse_duration};

#[derive(Args)]
pub(super) struct ModbusProxyArgs {
    /// master: beside the master (accepts its plain TCP, seals, forwards to --peer, the slave-side
    /// proxy); slave: beside the slave (accepts the hop, opens, forwards to --peer, the slave).
    #[arg(long)]
    side: String,
    /// Address to accept connections on (HOST:PORT; port 0 = any free port, printed at start).
    #[arg(long)]
    listen: String,
    /// Where to forward: the slave-side proxy (--side master) or the Modbus/TCP slave (--side slave).
    #[arg(long)]
    peer: String,
    /// The pair's key file, written by `lwcbench link provision --protocol modbus --device PAIR`
    /// and copied to both proxies (mode 0600); a master key is refused (docs/link.md "Keys").
    #[arg(long, required_unless_present = "unsafe_plain")]
    key_file: Option<PathBuf>,
    /// Counter state of the key (default KEY_FILE.counters, the key's own; it must exist, as for
    /// every sealer of an existing key). The proxy's sending device is leased while in use.
    #[arg(long)]
    counter_state: Option<PathBuf>,
    /// The link cipher: "name/impl", a bare name, or a frame cipher id (AEADs and stream ciphers
    /// with the link's Poly1305 composition).
    #[arg(long, default_value = "Ascon-AEAD128")]
    cipher: String,
    #[command(flatten)]
    gate: super::args::GateArgs,
    /// Proxy pair number (default: the pair key's; another is refused): master → slave is link
    /// device 0x4D420000 + 2·PAIR, slave → master one more.
    #[arg(long)]
    pair: Option<u32>,
    /// Accepted for older scripts and unused: on a hop connection counters must increase
    /// strictly (TCP keeps order), so the hop has no replay window (docs/link.md "The hop protocol").
    #[arg(long, default_value_t = 1024)]
    window: u64,
    /// Failed tags of the receiving direction before an alarm and its further frames are
    /// refused (default 2^20 for 128-bit tags, 2^16 for 64-bit ones; docs/security.md).
    #[arg(long)]
    max_failed_tags: Option<u64>,
    /// Counters reserved per durable write of the counter state.
    #[arg(long, default_value_t = lwcbench_link::device::counter::DEFAULT_BLOCK)]
    counter_block: u64,
    /// Replay state of the receiving direction: the highest counter accepted, so a restarted proxy
    /// refuses a handshake from before its restart and its peer can detect a rolled-back counter
    /// state (default KEY_FILE.modbus-PAIR-SIDE.replay). It must exist: made at pairing, beside
    /// the pair key, by `link provision --protocol modbus`; a lost one cannot be recreated safely.
    #[arg(long)]
    replay_state: Option<PathBuf>,
    /// --side slave: refuse a write (function codes 5, 6, 15, 16, 22, 23) older than this by the
    /// two proxies' handshake clocks (1ms..=1h; no clock synchronisation needed, docs/link.md
    /// "The hop protocol").
    #[arg(long, default_value = "2s")]
    write_deadline: String,
    /// UNSAFE: forward ADUs over the hop unencrypted (the measurement's baseline; both sides must
    /// agree).
    #[arg(long, conflicts_with_all = ["key_file", "counter_state", "replay_state"])]
    unsafe_plain: bool,
    /// Close a connection pair when no ADU was forwarded either way for this long (1ms..=24h;
    /// on the master side also a master that connects and sends nothing).
    #[arg(long, default_value = "60s")]
    idle_timeout: String,
    /// --side slave: close a hop connection whose first authenticated frame has not arrived
    /// within this of its accept (the connection to the slave is opened only after that frame);
    /// both sides: the longest wait for the connection to --peer (1ms..=1h).
    #[arg(long, default_value = "5s")]
    handshake_timeout: String,
    /// Most connections held open at once; more are closed at accept and counted (1..=10000).
    #[arg(long, default_value_t = 64)]
    max_conns: usize,
    /// Most connections held open at once from one IP address; more are closed at accept and
    /// counted (1..=--max-conns; default 16, or --max-conns if that is lower).
    #[arg(long)]
    max_conns_per_peer: Option<usize>,
}

impl ModbusProxyArgs {
    fn limits(&self) -> Result<Limits, String> {
        let l = Limits {
            idle: parse_duration(&self.idle_timeout, "--idle-timeout")?,
            handshake: parse_duration(&self.handshake_timeout, "--handshake-timeout")?,
            max_conns: self.max_conns,
            max_per_peer: self.max_conns_per_peer.unwrap_or(Limits::default().max_per_peer.min(self.max_conns)),
        };
        l.check()?;
        Ok(l)
    }
}

#[derive(Args)]
pub(super) struct ModbusArgs {
    /// Cipher(s), comma-separated: "name/impl", a bare name, or a frame cipher id.
    #[arg(long, default_value = "Ascon-AEAD128")]
    cipher: String,
    #[command(flatten)]
    gate: super::args::GateArgs,
    /// Timed polls per cycle and path (1..=1000000).
    #[arg(long, default_value_t = 2000)]
    polls: usize,
    /// Pause after each plain + sealed poll pair (e.g. 1ms; 0 = back to back).
    #[arg(long, default_value = "1ms")]
    interval: String,
    /// Poll one cycle, read N holding registers (1..=125), instead of the ICS study's three
    /// Modbus sizes (12, 29 and 260 B ADUs).
    #[arg(long)]
    register_count: Option<u16>,
    /// Untimed polls per path before each cycle's timed ones.
    #[arg(long, default_value_t = 50)]
    warmup: usize,
    /// Output directory (default ./lwcbench-results/<UTC time>-link-modbus).
    #[arg(short, long)]
    pub(super) out: Option<PathBuf>,
    /// Replace a finished run in --out.
    #[arg(long)]
    force: bool,
    /// Master key file, its counter state beside it (created with mode 0600 if missing; default:
    /// the output directory's own key in $LWCBENCH_KEY_DIR or ~/.config/lwcbench/link-keys, never
    /// inside the results). The in-process pair seals as pair 0: refused once pair 0 is provisioned.
    #[arg(long)]
    key_file: Option<PathBuf>,
}

fn resolve(opt: &str, s: &str) -> Result<SocketAddr, String> {
    s.to_socket_addrs()
        .map_err(|e| format!("{opt}: '{}' is not HOST:PORT ({e})", input::shown(s)))?
        .next()
        .ok_or_else(|| format!("{opt}: '{}' resolves to no address", input::shown(s)))
}

/// One proxy until SIGTERM/SIGINT; prints its address first and its tally last.
pub(super) fn proxy(a: &ModbusProxyArgs) -> Result<(), String> {
    let side = Side::parse(&a.side)?;
    let listen = resolve("--listen", &a.listen)?;
    let peer = resolve("--peer", &a.peer)?;
    let limits = a.limits()?;
    let write_deadline = parse_duration(&a.write_deadline, "--write-deadline")?;
    Hop::Plain.set_write_deadline(write_deadline)?;
    if a.max_failed_tags == Some(0) {
        return Err("--max-failed-tags: must be at least 1".into());
    }
    // Listen first: a port in use is refused before a counter state is started.
    let listener =
        std::net::TcpListener::bind(listen).map_err(|e| format!("--listen: cannot listen on {listen}: {e}"))?;
    let (hop, protection) = if a.unsafe_plain {
        (Hop::Plain, "UNSAFE: plain hop, no encryption".to_string())
    } else {
        let s = suite::find(&a.cipher)?;
        a.gate.gate().check(&s)?;
        let key_file = a.key_file.clone().expect("clap: --key-file unless --unsafe-plain");
        let state = a.counter_state.clone().unwrap_or_else(|| counter::beside_key(&key_file));
        let (key, store) = counter::open_device(&key_file, &state, a.counter_block, Family::Modbus)?;
        let pair = a.pair.unwrap_or(key.device);
        if pair != key.device {
            return Err(format!("--pair: {pair}, but --key-file {} is pair {}'s key", key_file.display(), key.device));
        }
        let devices = lwcbench_link::industrial::modbus::proxy::devices(pair, side)?;
        // The pair's replay states are written beside the pair key by provisioning.
        let replay = a.replay_state.clone().unwrap_or_else(|| floor::replay_path(&key_file, pair, side));
        // The sending device's lease is taken before the replay state is opened: one process
        // per direction, so one writer of the replay state too.
        store.claim(devices.0)?;
        let hop = Hop::sealed(&s, &key, &store, pair, side, a.window, Some(&replay))?;
        if let Some(n) = a.max_failed_tags {
            hop.set_max_failed_tags(n)?;
        }
        hop.set_write_deadline(write_deadline)?;
        let label = lwcbench_link::wire::gate::prefix(&s);
        (hop, format!("{label}{} (sends as device {}, accepts device {})", s.name(), devices.0, devices.1))
    };
    let log = format!("modbus-proxy ({})", side.name());
    let shown = log.clone();
    let report = proxy::run_process(side, listener, peer, hop, limits, log, |bound| {
        println!(
            "{shown} listening on {bound}, forwarding to {peer}, {protection}, idle timeout {:?}, handshake timeout \
             {:?}, write deadline {:?}, at most {} connections ({} per address)",
            limits.idle, limits.handshake, write_deadline, limits.max_conns, limits.max_per_peer
        );
        let _ = std::io::stdout().flush();
    })?;
    println!("modbus-proxy ({}) stopped: {}", side.name(), report.line());
    Ok(())
}

/// The poll cycle timed plain and sealed; writes modbus_cycles.csv, modbus_samples.csv and
/// summary.md into a run directory.
pub(super) fn measure(a: &ModbusArgs) -> Result<(), String> {
    let ciphers: Vec<String> = a.cipher.split(',').map(|c| c.trim().to_string()).collect();
    let mut suites = Vec::new();
    for c in &ciphers {
        let s = suite::find(c)?;
        a.gate.gate().check(&s)?;
        suites.push(s);
    }
    if a.polls == 0 || a.polls > measure::MAX_POLLS {
        return Err(format!("--polls: {} is not in 1..={}", a.polls, measure::MAX_POLLS));
    }
    if a.warmup > 100_000 {
        return Err(format!("--warmup: {} is above 100000", a.warmup));
    }
    let interval = parse_duration(&a.interval, "--interval")?;
    if interval > Duration::from_secs(10) {
        return Err(format!("--interval: '{}' is above 10s", a.interval));
    }
    let cycles = match a.register_count {
        None => measure::ics_cycles(),
        Some(n) if (1..=125).contains(&n) => {
            let c = Cycle::ReadHolding(n);
            vec![(c.adu_bytes().1, c)]
        }
        Some(n) => return Err(format!("--register-count: {n} is not in 1..=125 (Modbus function 3's limit)")),
    };
    let out = a.out.clone().unwrap_or_else(|| default_out("link-modbus"));
    let started = SystemTime::now();
    let rd = RunDir::begin(&out, a.force, Some(lwcbench_report::link::render))?;
    let (key_file, _) = super::options::state_files(&rd, &a.key_file, &None)?;
    let opts = Options { interval, cycles, key_file: Some(key_file), warmup: a.warmup, ..Options::default() };
    let mut all = Vec::new();
    for (c, s) in ciphers.iter().zip(&suites) {
        eprintln!("modbus: {}{c}: {} polls per cycle and path …", lwcbench_link::wire::gate::prefix(s), a.polls);
        all.extend(measure::measure_modbus(c, a.polls, &opts).map_err(|e| rd.shown(&e))?);
    }
    let m = lwcbench_engine::machine::Machine::detect();
    let machine = format!("{} ({} logical cores), governor {}", m.cpu_model, m.logical_cores, m.governor);
    let budgets = measure::budgets();
    let md = measure::markdown(&all, &budgets, &machine);
    eprint!("{md}");
    let files = vec![
        ("modbus_cycles.csv".to_string(), measure::csv(&all, &budgets).into_bytes()),
        ("modbus_samples.csv".to_string(), measure::samples_csv(&all).into_bytes()),
        ("summary.md".to_string(), md.into_bytes()),
    ];
    let config = serde_json::json!({
        "ciphers": ciphers, "polls": a.polls, "interval_s": interval.as_secs_f64(), "warmup": a.warmup,
        "path": measure::PATH,
        "cycles": opts.cycles.iter().map(|(b, c)| serde_json::json!({"bytes": b, "cycle": c.describe()})).collect::<Vec<_>>(),
    });
    let mut rec = LinkRecord::new(
        "lwcbench link modbus".into(),
        "link-modbus".into(),
        lwcbench_link::session::new_session(),
        false,
        config,
        started,
        lwcbench_link::wire::gate::notes(&suites),
    );
    rd.finish(&files, &mut rec)?;
    println!("wrote {}", out.display());
    Ok(())
}
