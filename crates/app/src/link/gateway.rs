//! `lwcbench link gateway`: the gateway as its own process (docs/link.md "Restart with a backlog", "Many hosts").
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use lwcbench_link::gateway::process as gateway_proc;
use lwcbench_link::input;
use lwcbench_link::transport::broker;
use lwcbench_link::wire::suite;

use super::options::{check_batch, parse_duration};

#[derive(Args)]
pub(super) struct GatewayArgs {
    /// Broker mqtt://HOST:PORT (the link frame).
    #[arg(long, required_unless_present = "protocol")]
    broker: Option<String>,
    /// link (the link frame from MQTT) or oscore (a CoAP server on UDP that verifies OSCORE
    /// requests; docs/protocols.md).
    #[arg(long, value_name = "link|oscore")]
    protocol: Option<String>,
    /// With --protocol oscore: establish contexts with EDHOC (RFC 9528) as its Responder at
    /// /.well-known/edhoc, accepting the credentials of --devices only; prints
    /// `edhoc-credential HEX` (its public CCS, for the devices) after `ready`.
    #[arg(long)]
    edhoc: bool,
    /// With --edhoc: the EDHOC cipher suite, 2 (P-256, through lakers) or 0 (X25519, this
    /// project's own EDHOC); the credential printed holds that suite's key, and a device
    /// offering the other suite is refused at message_1, naming both.
    #[arg(long, value_name = "0|2", default_value = "2", requires = "edhoc")]
    edhoc_suite: String,
    /// With --protocol oscore: the UDP address to serve CoAP on.
    #[arg(long, default_value = lwcbench_link::oscore::DEFAULT_LISTEN, value_name = "IP:PORT")]
    listen: String,
    /// Session id (topic namespace lwcbench/link/SESSION/+; 1 to 64 of A-Z a-z 0-9 - _); the MQTT
    /// client id derives from it, so a restarted gateway resumes the same persistent session.
    #[arg(long)]
    session: String,
    /// Master key file (must exist, mode 0600). Beside it, KEY_FILE.accepted keeps the highest
    /// counter committed per device: a counter at or below it is refused, whatever the store.
    #[arg(long)]
    key_file: PathBuf,
    /// Provisioned device ids, e.g. 0-7 or 0-3,9.
    #[arg(long)]
    devices: String,
    /// Store: a SQLite file path, postgres://USER@HOST:PORT/DB or 'host=HOST user=USER dbname=DB'.
    #[arg(long)]
    store: String,
    /// The cipher (default Ascon-AEAD128; with --protocol oscore a COSE AEAD, default AES-CCM-16-64-128).
    #[arg(long)]
    cipher: Option<String>,
    #[command(flatten)]
    gate: super::args::GateArgs,
    /// Replay window size in counters per device (1..=1048576; devices × window bitmaps ≤ 1 GiB):
    /// also the most lateness, in counters, a frame may have (later: refused too_old, an alarm).
    #[arg(long, default_value_t = 1024)]
    window: u64,
    /// Most frames stored per transaction.
    #[arg(long, default_value_t = 512)]
    batch: usize,
    /// Append a JSON line of counters and memory to this file every --stats-every.
    #[arg(long)]
    stats: Option<PathBuf>,
    #[arg(long, default_value = "500ms")]
    stats_every: String,
    /// Join the MQTT v5 shared subscription $share/GROUP/lwcbench/link/SESSION/+ as one of
    /// several gateway processes (on one host or many); the store is the replay authority, so
    /// it must be one they all reach (PostgreSQL; an SQLite file for one host). Needs --member.
    #[arg(long, value_name = "GROUP")]
    shared: Option<String>,
    /// This process's name in the --shared group (1 to 64 of A-Z a-z 0-9 - _), unique in the
    /// group and the same across restarts: the broker keeps what it handed this member for it.
    #[arg(long, value_name = "NAME")]
    member: Option<String>,
    /// Failed tags per device before an alarm and its further frames are refused (default 2^20
    /// for 128-bit tags, 2^16 for 64-bit ones; docs/security.md "Forgery bound").
    #[arg(long)]
    max_failed_tags: Option<u64>,
}

pub(super) fn gateway(a: &GatewayArgs) -> Result<(), String> {
    match a.protocol.as_deref() {
        None | Some("link") => {}
        Some("oscore") => {
            if a.broker.is_some() || a.shared.is_some() || a.stats.is_some() {
                return Err("--protocol oscore: --broker, --shared and --stats do not apply".into());
            }
            input::check_session(&a.session)?;
            input::no_control("--store", &a.store)?;
            let devices = gateway_proc::parse_devices(&a.devices)?;
            let suite = super::oscore::edhoc_suite(&a.edhoc_suite)?;
            return super::oscore::gateway(
                &a.key_file,
                a.cipher.as_deref(),
                &devices,
                &a.store,
                &a.session,
                &a.listen,
                a.batch,
                a.edhoc.then_some(suite),
            );
        }
        Some(p) => return Err(format!("--protocol: '{}' is not link or oscore", input::shown(p))),
    }
    let cipher = a.cipher.as_deref().unwrap_or("Ascon-AEAD128");
    let s = suite::find(cipher)?;
    a.gate.gate().check(&s)?;
    let label = lwcbench_link::wire::gate::prefix(&s);
    let b = broker::parse_url(a.broker.as_deref().unwrap_or_default())?;
    let devices = gateway_proc::parse_devices(&a.devices)?;
    lwcbench_link::gateway::replay::ReplayWindow::new(a.window)?;
    check_batch(a.batch)?;
    input::check_session(&a.session)?;
    input::no_control("--store", &a.store)?;
    if a.max_failed_tags == Some(0) {
        return Err("--max-failed-tags: must be at least 1".into());
    }
    let every = parse_duration(&a.stats_every, "--stats-every")?;
    if every < Duration::from_millis(10) {
        return Err("--stats-every: at least 10ms".into());
    }
    let shared = match (&a.shared, &a.member) {
        (Some(g), Some(m)) => Some(lwcbench_link::gateway::shared::Member::new(g, m)?),
        (Some(_), None) => {
            return Err("--shared needs --member NAME (unique in the group, the same when this gateway restarts)".into())
        }
        (None, Some(_)) => return Err("--member is only for --shared GROUP".into()),
        (None, None) => None,
    };
    let master = lwcbench_link::wire::keys::MasterKey::read(&a.key_file)?;
    let s_protection = s.protection(false);
    let last = gateway_proc::GatewayProcess {
        suite: s,
        devices,
        window: a.window,
        batch: a.batch,
        store: a.store.clone(),
        session: a.session.clone(),
        broker: b,
        master,
        stats: a.stats.clone(),
        stats_every: every,
        shared,
        max_failed_tags: a.max_failed_tags,
        accepted: Some(lwcbench_link::gateway::accepted::beside_key(&a.key_file)),
    }
    .run(|| {
        use std::io::Write;
        if !label.is_empty() {
            eprintln!("{label}{cipher}: {s_protection}");
        }
        println!("ready");
        let _ = std::io::stdout().flush();
    })?;
    println!("{last}");
    Ok(())
}
