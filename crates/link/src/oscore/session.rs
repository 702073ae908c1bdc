//! One measured OSCORE session: devices (one thread each, their sequence numbers persisted)
//! → CoAP over UDP → the OSCORE gateway → the store, then the exactly-once proof: every reading
//! a device saw confirmed is stored once, bit for bit, and nothing else is stored.
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use lwcbench_oscore::edhoc::own::EdhocSuite;
use lwcbench_oscore::seq::SequenceStore;
use lwcbench_oscore::Algorithm;

use crate::oscore::device::{CoapDevice, Delivered, EdhocClient, Handshake, ACK_TIMEOUT};
use crate::oscore::gateway::{OscoreGateway, OscoreServer, OscoreTally};
use crate::oscore::{
    device_context, device_identity, device_identity_x25519, gateway_credential, store_key_id, GatewayCredential,
};
use crate::store::Row;
use crate::wire::frame::Family;
use crate::wire::keys::MasterKey;

/// Devices of one OSCORE session at most (one thread and one socket each).
pub const MAX_DEVICES: u32 = 1024;

/// One OSCORE session.
pub struct OscoreConfig {
    /// The AEAD.
    pub alg: Algorithm,
    /// Devices (ids 0..devices).
    pub devices: u32,
    /// Readings per device.
    pub messages: u64,
    /// Between a device's readings (None: back to back, each after the previous is confirmed).
    pub interval: Option<Duration>,
    /// `--store`.
    pub store: String,
    /// The master key file (its registry of provisioned devices is consulted).
    pub key_file: PathBuf,
    /// Where the devices' and the gateway's sequence number states live.
    pub state_dir: PathBuf,
    /// The readings the devices send, in turn.
    pub readings: Arc<Vec<Vec<u8>>>,
    /// Readings per store transaction at most.
    pub batch: usize,
    /// The session id (the store's run).
    pub session: String,
    /// Where the gateway listens (port 0: any free one).
    pub listen: String,
    /// RFC 7252 ACK_TIMEOUT.
    pub ack_timeout: Duration,
    /// `--edhoc`: contexts from EDHOC, re-keyed before a sender sequence number reaches this
    /// limit (None: pre-shared contexts from the key hierarchy).
    pub edhoc: Option<u64>,
    /// `--edhoc-suite`: the EDHOC cipher suite, 2 (P-256, through lakers; the default, which
    /// the foreign peers speak) or 0 (X25519, through this project's own EDHOC).
    pub edhoc_suite: EdhocSuite,
}

impl OscoreConfig {
    /// A session with the RFC defaults for timing, one transaction per 512 readings at most, the
    /// gateway on a free loopback port.
    pub fn new(alg: Algorithm, devices: u32, messages: u64, store: String, key_file: PathBuf) -> OscoreConfig {
        let state_dir = state_dir_beside(&key_file);
        OscoreConfig {
            alg,
            devices,
            messages,
            interval: None,
            store,
            key_file,
            state_dir,
            readings: Arc::new(vec![vec![0u8; 16]]),
            batch: 512,
            session: crate::session::new_session(),
            listen: "127.0.0.1:0".into(),
            ack_timeout: ACK_TIMEOUT,
            edhoc: None,
            edhoc_suite: EdhocSuite::Suite2,
        }
    }
}

/// The OSCORE state directory of a master key: `KEY_FILE.oscore`.
pub fn state_dir_beside(key_file: &std::path::Path) -> PathBuf {
    let mut s = key_file.as_os_str().to_os_string();
    s.push(".oscore");
    PathBuf::from(s)
}

/// The measured outcome of an OSCORE session.
#[derive(Clone, Debug, serde::Serialize)]
pub struct OscoreOutcome {
    /// The AEAD's COSE name.
    pub alg: String,
    /// Readings the devices saw confirmed.
    pub sent: u64,
    /// The gateway's verdicts.
    pub tally: OscoreTally,
    /// CON retransmissions the devices made.
    pub retransmissions: u64,
    /// Echo round trips the devices made.
    pub echo_rounds: u64,
    /// First request → last confirmation (ns).
    pub elapsed_ns: u64,
    /// Readings stored per second over that time.
    pub readings_per_s: f64,
    /// Mean bytes of a stored reading's request datagram (CoAP header, token, OSCORE option,
    /// ciphertext with tag; UDP/IP headers not counted).
    pub request_bytes: f64,
    /// Mean bytes of a reading's plaintext.
    pub reading_bytes: f64,
    /// Stored rows that differ from what was sent, or that no device sent.
    pub mismatched: u64,
    /// Confirmed but not stored.
    pub missing: u64,
    /// The store as described in run.json.
    pub store: String,
    /// With EDHOC: the re-key limit (sender sequence numbers per context).
    pub rekey_after: Option<u64>,
    /// With EDHOC: the cipher suite (0 or 2).
    pub edhoc_suite: Option<u8>,
    /// EDHOC handshakes the devices completed.
    pub handshakes: u64,
    /// Mean CoAP bytes of a handshake (both directions, message_1 to message_4).
    pub handshake_bytes: f64,
    /// Mean request/response exchanges of a handshake.
    pub handshake_round_trips: f64,
    /// Mean time of a handshake on the device (ms).
    pub handshake_ms: f64,
}

/// Run the session and prove exactly-once; a reading lost, stored twice or altered is an error.
pub fn run(cfg: &OscoreConfig, master: &MasterKey) -> Result<OscoreOutcome, String> {
    crate::input::check_session(&cfg.session)?;
    if cfg.devices == 0 || cfg.devices > MAX_DEVICES {
        return Err(format!("--devices: {} is not in 1..={MAX_DEVICES} with --protocol oscore", cfg.devices));
    }
    if cfg.messages == 0 {
        return Err("--messages: at least one message per device".into());
    }
    if cfg.readings.is_empty() {
        return Err("dataset has no readings".into());
    }
    let ids: Vec<u32> = (0..cfg.devices).collect();
    // A provisioned device has its own sequence number state beside its key file; this session's
    // state for it would repeat those numbers under the same context.
    crate::device::provision::refuse_provisioned(&cfg.key_file, master, Family::Sensor, &ids)?;
    check_edhoc(cfg)?;
    let store = crate::store::open(&cfg.store, &cfg.session, &store_key_id(&master.fingerprint(), cfg.alg))?;
    let store_desc = store.describe();
    let (gw, gateway_cred) = match cfg.edhoc {
        None => (OscoreGateway::new(master, cfg.alg, &ids, &cfg.state_dir, store)?, None),
        Some(_) => {
            let (gw, ccs) = OscoreGateway::edhoc(master, cfg.edhoc_suite, &ids, &cfg.state_dir, store)?;
            (gw, Some(gateway_credential(&ccs, cfg.edhoc_suite)?))
        }
    };
    let server = OscoreServer::start(gw, &cfg.listen, cfg.batch)?;
    let addr = server.addr;
    let t0 = Instant::now();
    let mut threads = Vec::with_capacity(ids.len());
    for &d in &ids {
        let (readings, messages, interval, n) = (cfg.readings.clone(), cfg.messages, cfg.interval, ids.len() as u64);
        let t = match (cfg.edhoc, &gateway_cred) {
            (Some(rekey_after), Some(gw)) => {
                let key = master.device(Family::Sensor, d);
                let client = match gw.clone() {
                    GatewayCredential::Suite2(c) => EdhocClient::new(device_identity(&key)?, c, rekey_after)?,
                    GatewayCredential::Suite0(c) => {
                        EdhocClient::new_suite0(device_identity_x25519(&key)?, c, rekey_after)?
                    }
                };
                let mut dev = CoapDevice::new_edhoc(client, addr)?;
                dev.ack_timeout = cfg.ack_timeout;
                std::thread::Builder::new().name(format!("oscore-dev-{d}")).spawn(move || {
                    dev.start().map_err(|e| format!("device {d}: {e}"))?;
                    let sent = send_all(d, &mut |r| dev.send(r), &readings, messages, interval, n)?;
                    Ok((sent, dev.handshakes().to_vec()))
                })
            }
            _ => {
                let ctx = device_context(&master.device(Family::Sensor, d), cfg.alg)?;
                let path = cfg.state_dir.join(format!("device-{d}-{}.seq", cfg.alg.cose_id()));
                let seq =
                    SequenceStore::open(&path, &ctx, lwcbench_oscore::seq::DEFAULT_BLOCK).map_err(|e| e.to_string())?;
                let mut dev = CoapDevice::new(ctx, seq, addr)?;
                dev.ack_timeout = cfg.ack_timeout;
                std::thread::Builder::new().name(format!("oscore-dev-{d}")).spawn(move || {
                    let sent = send_all(d, &mut |r| dev.send(r), &readings, messages, interval, n)?;
                    Ok((sent, Vec::new()))
                })
            }
        }
        .map_err(|e| e.to_string())?;
        threads.push((d, t));
    }
    let mut confirmed = Vec::new();
    let mut handshakes: Vec<Handshake> = Vec::new();
    let mut first_err = None;
    for (d, t) in threads {
        match t.join() {
            Ok(Ok((v, h))) => {
                confirmed.extend(v.into_iter().map(|(x, row)| (d, x, row)));
                handshakes.extend(h);
            }
            Ok(Err(e)) => {
                first_err.get_or_insert(e);
            }
            Err(_) => {
                first_err.get_or_insert(format!("device {d}: its thread panicked"));
            }
        }
    }
    let elapsed = t0.elapsed();
    let (mut gw, err) = server.stop()?;
    if let Some(e) = first_err.or(err) {
        return Err(e);
    }
    let rows = gw.store().all()?;
    let (matched, mismatched) = check(&rows, &confirmed, &cfg.readings);
    let sent = confirmed.len() as u64;
    let missing = sent - matched.min(sent);
    if missing > 0 || mismatched > 0 {
        return Err(format!(
            "store {store_desc}: {missing} of {sent} confirmed readings are not stored as this run's and {mismatched} \
             stored rows differ from what was sent"
        ));
    }
    let mean = |f: &dyn Fn(&(u32, crate::oscore::device::Delivered, usize)) -> f64| {
        confirmed.iter().map(f).sum::<f64>() / confirmed.len().max(1) as f64
    };
    let readings = cfg.readings.clone();
    let hn = handshakes.len().max(1) as f64;
    Ok(OscoreOutcome {
        alg: cfg.alg.name().into(),
        sent,
        tally: gw.tally.clone(),
        retransmissions: confirmed.iter().map(|c| u64::from(c.1.retransmissions)).sum(),
        echo_rounds: confirmed.iter().map(|c| u64::from(c.1.echo_rounds)).sum(),
        elapsed_ns: elapsed.as_nanos() as u64,
        readings_per_s: gw.tally.stored as f64 / elapsed.as_secs_f64().max(1e-9),
        request_bytes: mean(&|c| f64::from(c.1.request_bytes)),
        reading_bytes: mean(&|c| readings[c.2].len() as f64),
        mismatched,
        missing,
        store: store_desc,
        rekey_after: cfg.edhoc,
        edhoc_suite: cfg.edhoc.map(|_| cfg.edhoc_suite.id()),
        handshakes: handshakes.len() as u64,
        handshake_bytes: handshakes.iter().map(|h| f64::from(h.bytes)).sum::<f64>() / hn,
        handshake_round_trips: handshakes.iter().map(|h| f64::from(h.round_trips)).sum::<f64>() / hn,
        handshake_ms: handshakes.iter().map(|h| h.ns as f64 / 1e6).sum::<f64>() / hn,
    })
}

/// `--edhoc` takes the cipher suite's application AEAD (RFC 9528 Appendix A.1; suites 0 and 2
/// both have AES-CCM-16-64-128) and a re-key limit of at least one message.
pub fn check_edhoc(cfg: &OscoreConfig) -> Result<(), String> {
    match cfg.edhoc {
        None => Ok(()),
        Some(0) => Err("--rekey-after: at least 1 message per context".into()),
        Some(_) if cfg.alg != Algorithm::AesCcm16_64_128 => Err(format!(
            "--edhoc: the OSCORE AEAD is cipher suite {}'s application AEAD, AES-CCM-16-64-128 (RFC 9528 Appendix \
             A.1), not {}",
            cfg.edhoc_suite.id(),
            cfg.alg.name()
        )),
        Some(_) => Ok(()),
    }
}

/// Send `messages` readings from device `d` (of `n`), in turn from `readings`; each with its row.
fn send_all(
    d: u32,
    send: &mut dyn FnMut(&[u8]) -> Result<Delivered, String>,
    readings: &[Vec<u8>],
    messages: u64,
    interval: Option<Duration>,
    n: u64,
) -> Result<Vec<(Delivered, usize)>, String> {
    let mut sent = Vec::with_capacity(messages.min(1 << 20) as usize);
    for k in 0..messages {
        let row = ((u64::from(d) + k * n) % readings.len() as u64) as usize;
        sent.push((send(&readings[row]).map_err(|e| format!("device {d}: {e}"))?, row));
        if let Some(i) = interval {
            std::thread::sleep(i);
        }
    }
    Ok(sent)
}

/// (matched, mismatched): this run's rows against the confirmed readings (device, sequence
/// number, dataset row). A row no device had confirmed is mismatched. With EDHOC a row's
/// counter is epoch × 2^40 + sequence number: a device's k-th epoch in the rows is matched with
/// its k-th handshake (both ascend in time), so a reading stored under another context than
/// the one it was sent under is mismatched.
pub fn check(rows: &[Row], confirmed: &[(u32, Delivered, usize)], readings: &[Vec<u8>]) -> (u64, u64) {
    use std::collections::{BTreeSet, HashMap};
    let rank = |sets: &mut HashMap<u32, BTreeSet<u64>>, d: u32, v: u64| sets.entry(d).or_default().insert(v);
    let (mut epochs, mut shakes) = (HashMap::new(), HashMap::new());
    for r in rows {
        rank(&mut epochs, r.device, r.counter >> 40);
    }
    for (d, x, _) in confirmed {
        rank(&mut shakes, *d, u64::from(x.handshake));
    }
    let index = |sets: &HashMap<u32, BTreeSet<u64>>, d: u32, v: u64| {
        sets.get(&d).and_then(|s| s.iter().position(|e| *e == v)).unwrap_or(usize::MAX)
    };
    let expected: HashMap<(u32, usize, u64), usize> =
        confirmed.iter().map(|(d, x, row)| ((*d, index(&shakes, *d, u64::from(x.handshake)), x.seq), *row)).collect();
    let (mut matched, mut mismatched) = (0, 0);
    for r in rows {
        let key = (r.device, index(&epochs, r.device, r.counter >> 40), r.counter & lwcbench_oscore::MAX_SEQ);
        match expected.get(&key) {
            Some(&row) if readings[row] == r.payload => matched += 1,
            _ => mismatched += 1,
        }
    }
    (matched, mismatched)
}
