//! `lwcbench link device`: one device as its own process.
use std::path::PathBuf;

use clap::Args;
use lwcbench_link::device::counter;
use lwcbench_link::device::process::{Delivery, DeviceProcess};
use lwcbench_link::gateway::accepted;
use lwcbench_link::input;
use lwcbench_link::transport::broker;
use lwcbench_link::wire::frame::{Family, Proto};
use lwcbench_link::wire::keys::LinkKey;
use lwcbench_link::wire::suite;

use super::options::parse_duration;

#[derive(Args)]
pub(super) struct DeviceArgs {
    /// Device id (default: the device key's; another id is refused).
    #[arg(long)]
    id: Option<u32>,
    /// Session id (topic namespace) shared with the gateway: 1 to 64 of A-Z a-z 0-9 - _.
    #[arg(long, required_unless_present = "gateway")]
    session: Option<String>,
    /// Broker mqtt://HOST:PORT (the link frame).
    #[arg(long, required_unless_present = "gateway")]
    broker: Option<String>,
    /// link (the link frame over MQTT) or oscore (CoAP + OSCORE to `--gateway`; docs/protocols.md).
    #[arg(long, default_value = "link", value_name = "link|oscore")]
    protocol: String,
    /// With --protocol oscore: establish the context with EDHOC (RFC 9528) at start, as
    /// Initiator; needs --gateway-credential.
    #[arg(long, requires = "gateway_credential")]
    edhoc: bool,
    /// With --edhoc: the gateway's credential, the hex it prints after `edhoc-credential`.
    #[arg(long, value_name = "HEX", requires = "edhoc")]
    gateway_credential: Option<String>,
    /// With --edhoc: the EDHOC cipher suite, 2 (P-256, through lakers) or 0 (X25519, this
    /// project's own EDHOC); the gateway's: a credential holding the other suite's key is
    /// refused before anything is sent.
    #[arg(long, value_name = "0|2", default_value = "2", requires = "edhoc")]
    edhoc_suite: String,
    /// With --edhoc: re-key before the sender sequence number reaches N (default 2^20,
    /// draft-ietf-core-oscore-key-limits' q for AES-CCM-16-64-128).
    #[arg(long, value_name = "N", requires = "edhoc")]
    rekey_after: Option<u64>,
    /// With --protocol oscore: the gateway's CoAP address IP:PORT.
    #[arg(long, value_name = "IP:PORT")]
    gateway: Option<String>,
    /// With --protocol oscore: the sender sequence number state (default KEY_FILE.oscore-ALG.seq,
    /// ALG the COSE id; created at the first run, locked while in use, tied to the context).
    #[arg(long)]
    seq_state: Option<PathBuf>,
    /// The device's own key file, written by `lwcbench link provision --protocol sensor` (mode
    /// 0600); a master key is refused: a device holds only its own key.
    #[arg(long)]
    key_file: PathBuf,
    /// Counter state of the key (default KEY_FILE.counters, written by provisioning). It must
    /// exist: a missing state is refused, never started at 0; a key with its own
    /// KEY_FILE.counters takes no other file. The device is leased while in use.
    #[arg(long)]
    counter_state: Option<PathBuf>,
    /// The gateway's accepted marks (MASTER.accepted, beside the master key the device key was
    /// provisioned from): refuse to start if the counter state would seal at or below a counter
    /// the gateway already accepted from this device (a state restored from a backup). A marks
    /// file of another master is refused; a missing one (nothing accepted yet) is noted.
    #[arg(long, value_name = "FILE")]
    gateway_accepted: Option<PathBuf>,
    /// The cipher (default Ascon-AEAD128; with --protocol oscore a COSE AEAD, default AES-CCM-16-64-128).
    #[arg(long)]
    cipher: Option<String>,
    #[command(flatten)]
    gate: super::args::GateArgs,
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

/// One device as its own process: same counter rule, same frame, its own MQTT session.
pub(super) fn device(a: &DeviceArgs) -> Result<(), String> {
    let interval = parse_duration(&a.interval, "--interval")?;
    match (a.protocol.as_str(), &a.gateway) {
        ("oscore", Some(g)) => {
            if a.broker.is_some() || a.capture.is_some() || a.counter_state.is_some() || a.gateway_accepted.is_some() {
                return Err(
                    "--protocol oscore: --broker, --capture, --counter-state and --gateway-accepted do not apply"
                        .into(),
                );
            }
            let suite = super::oscore::edhoc_suite(&a.edhoc_suite)?;
            return super::oscore::device(
                &a.key_file,
                a.id,
                a.cipher.as_deref(),
                g,
                a.messages,
                interval,
                a.seq_state.as_deref(),
                a.gateway_credential
                    .as_deref()
                    .filter(|_| a.edhoc)
                    .map(|c| (c, a.rekey_after.unwrap_or(lwcbench_link::oscore::DEFAULT_REKEY_AFTER), suite)),
            );
        }
        ("oscore", None) => return Err("--protocol oscore needs --gateway IP:PORT".into()),
        ("link", _) if a.edhoc => return Err("--edhoc is for --protocol oscore".into()),
        ("link", None) if a.seq_state.is_none() => {}
        ("link", _) => return Err("--gateway and --seq-state are for --protocol oscore".into()),
        (p, _) => return Err(format!("--protocol: '{}' is not link or oscore", input::shown(p))),
    }
    let session = a.session.clone().unwrap_or_default();
    input::check_session(&session)?;
    let s = suite::find(a.cipher.as_deref().unwrap_or("Ascon-AEAD128"))?;
    a.gate.gate().check(&s)?;
    let b = broker::parse_url(a.broker.as_deref().unwrap_or_default())?;
    // A device never creates a key: its own key file must exist, and with it its counter state.
    let state = a.counter_state.clone().unwrap_or_else(|| counter::beside_key(&a.key_file));
    let (key, counters) = counter::open_device(&a.key_file, &state, a.counter_block, Family::Sensor)?;
    let id = a.id.unwrap_or(key.device);
    key.cipher_key(Proto::Sensor, id, s.id, s.key_len()).map_err(|e| format!("--id: {e}"))?;
    // Leased before the capture is touched: a refused twin leaves nothing behind.
    counters.claim(id)?;
    if let Some(marks) = &a.gateway_accepted {
        not_behind(&state, marks, &key.master, id)?;
    }
    let delivery = if a.durable {
        Delivery::Durable { resend_window: parse_duration(&a.resend_window, "--resend-window")? }
    } else {
        Delivery::Pipelined
    };
    let st_suite = s.clone();
    let st = DeviceProcess {
        suite: s,
        device: id,
        session,
        broker: b,
        key: LinkKey::Device(key),
        counters,
        messages: a.messages,
        interval: (!interval.is_zero()).then_some(interval),
        capture: a.capture.clone(),
        stats: a.stats.clone(),
        delivery,
    }
    .run()?;
    println!("{}device {id} sent {} readings", lwcbench_link::wire::gate::prefix(&st_suite), st.sent);
    Ok(())
}

/// Anti-rollback against the gateway's marks (`--gateway-accepted`): checked while the device is
/// leased, so no other process moves its state meanwhile.
fn not_behind(state: &std::path::Path, marks: &std::path::Path, master: &str, id: u32) -> Result<(), String> {
    if !marks.exists() {
        eprintln!(
            "note: --gateway-accepted {}: no such file yet (the gateway writes it once it accepts a frame of its \
             key): nothing to compare the counter state with",
            marks.display()
        );
        return Ok(());
    }
    accepted::check_not_behind(state, marks, Some(master), Proto::Sensor, id)
        .map_err(|e| format!("--gateway-accepted: {e}"))
}
