//! `--protocol oscore`: the session, the gateway process and the device process over CoAP with
//! OSCORE (RFC 8613) instead of the link frame (docs/protocols.md).
use std::path::Path;
use std::time::{Duration, SystemTime};

use lwcbench_link::oscore::device::{CoapDevice, EdhocClient};
use lwcbench_link::oscore::gateway::{OscoreGateway, OscoreServer};
use lwcbench_link::oscore::lwcbench_oscore;
use lwcbench_link::oscore::lwcbench_oscore::edhoc::own::EdhocSuite;
use lwcbench_link::oscore::session::{state_dir_beside, OscoreConfig};
use lwcbench_link::oscore::{alg_of, device_context, store_key_id, GatewayCredential};
use lwcbench_link::results::{LinkRecord, RunDir};
use lwcbench_link::wire::frame::Family;
use lwcbench_link::wire::keys::{LinkKey, MasterKey};

use super::args::SessionArgs;
use super::options::{check_batch, state_files};

/// The AEAD `--cipher` names under `--protocol oscore` (AES-CCM-16-64-128 when none is given).
fn alg(cipher: Option<&str>) -> Result<lwcbench_oscore::Algorithm, String> {
    alg_of(cipher.unwrap_or("AES-CCM-16-64-128"))
}

/// `lwcbench link --protocol oscore`: one measured session per `--cipher` AEAD.
pub(super) fn session(
    a: &SessionArgs,
    interval: Option<Duration>,
    rd: RunDir,
    ds: &lwcbench_engine::dataset::Dataset,
) -> Result<(), String> {
    let names: Vec<&str> = a.cipher.as_deref().map_or(vec!["AES-CCM-16-64-128"], |c| c.split(',').collect());
    let algs = names.iter().map(|n| alg(Some(n))).collect::<Result<Vec<_>, _>>()?;
    if a.transport != "mqtt" || a.broker.is_some() || a.workers != 1 {
        return Err(
            "--protocol oscore: CoAP over UDP to its own gateway; --transport, --broker and --workers do not apply"
                .into(),
        );
    }
    if a.attack || a.video.video.is_some() || a.unsafe_no_integrity || a.preset.is_some() {
        return Err("--protocol oscore: not with --attack, --video, --preset or --unsafe-no-integrity".into());
    }
    check_batch(a.batch)?;
    let edhoc = a.edhoc.then(|| a.rekey_after.unwrap_or(lwcbench_link::oscore::DEFAULT_REKEY_AFTER));
    let suite = edhoc_suite(&a.edhoc_suite)?;
    let (key_file, counter_file) = state_files(&rd, &a.key_file, &a.counter_state)?;
    // The same key and counter lease a frame session takes: one run at a time per key.
    let (master, _counters) = lwcbench_link::device::counter::open_session(&key_file, &counter_file, a.counter_block)?;
    let store = a.store.clone().unwrap_or_else(|| rd.kept("link.db").display().to_string());
    let readings = lwcbench_link::device::fleet::dataset_readings(ds);
    let started = SystemTime::now();
    let session = lwcbench_link::session::new_session();
    let mut rows = Vec::new();
    for alg in &algs {
        let mut cfg = OscoreConfig::new(*alg, a.devices, a.messages, store.clone(), key_file.clone());
        cfg.interval = interval;
        cfg.readings = readings.clone();
        cfg.batch = a.batch;
        cfg.session = format!("{session}-oscore{}", alg.cose_id());
        cfg.edhoc = edhoc;
        cfg.edhoc_suite = suite;
        lwcbench_link::oscore::session::check_edhoc(&cfg)?;
        let o = lwcbench_link::oscore::session::run(&cfg, &master).map_err(|e| rd.shown(&e))?;
        eprintln!(
            "OSCORE {}: sent {} stored {} missing {} refused {} — {:.0} readings/s stored, request {:.1} B for a {:.1} B \
             reading, {} retransmissions, {} Echo round trips",
            o.alg,
            o.sent,
            o.tally.stored,
            o.missing,
            o.tally.refused(),
            o.readings_per_s,
            o.request_bytes,
            o.reading_bytes,
            o.retransmissions,
            o.echo_rounds
        );
        if let Some(n) = o.rekey_after {
            eprintln!(
                "EDHOC suite {} ({}): {} handshakes (re-key after {n} messages), {:.1} B and {:.1} round trips each, \
                 {:.2} ms mean",
                suite.id(),
                implementation(suite),
                o.handshakes,
                o.handshake_bytes,
                o.handshake_round_trips,
                o.handshake_ms
            );
        }
        rows.push(o);
    }
    let json = serde_json::to_vec_pretty(&rows).map_err(|e| e.to_string())?;
    let mut md = String::from("## Link over CoAP + OSCORE (RFC 8613)\n\n");
    md += "| AEAD | sent | stored | refused | readings/s | request B | reading B |\n|---|---:|---:|---:|---:|---:|---:|\n";
    for o in &rows {
        md += &format!(
            "| {} | {} | {} | {} | {:.0} | {:.1} | {:.1} |\n",
            o.alg,
            o.sent,
            o.tally.stored,
            o.tally.refused(),
            o.readings_per_s,
            o.request_bytes,
            o.reading_bytes
        );
    }
    if let Some(n) = edhoc {
        md += &format!(
            "\n### EDHOC (RFC 9528, method 3, cipher suite {}, {}), re-key after {n} messages\n\n\
             | AEAD | handshakes | bytes per handshake | round trips | ms per handshake |\n|---|---:|---:|---:|---:|\n",
            suite.id(),
            implementation(suite)
        );
        for o in &rows {
            md += &format!(
                "| {} | {} | {:.1} | {:.1} | {:.2} |\n",
                o.alg, o.handshakes, o.handshake_bytes, o.handshake_round_trips, o.handshake_ms
            );
        }
    }
    let files = vec![("oscore_summary.json".to_string(), json), ("summary.md".to_string(), md.into_bytes())];
    let mut rec = LinkRecord::new(
        "lwcbench link --protocol oscore".into(),
        "link-oscore".into(),
        session,
        false,
        serde_json::json!({
            "protocol": "oscore",
            "edhoc": edhoc.map(|n| serde_json::json!({
                "method": 3, "cipher_suite": suite.id(), "implementation": implementation(suite), "rekey_after": n
            })),
            "algorithms": algs.iter().map(|a| a.name()).collect::<Vec<_>>(),
            "devices": a.devices, "messages_per_device": a.messages,
            "interval_s": interval.map(|d| d.as_secs_f64()),
            "transport": "CoAP over UDP, loopback",
            "store": rows.first().map(|r| rd.shown(&r.store)),
            "key_file": rd.shown(&key_file.display().to_string()),
            "batch": a.batch,
            "dataset": ds.name,
        }),
        started,
        vec!["bytes and rates: see docs/protocols.md".to_string()],
    );
    rd.finish(&files, &mut rec)
}

/// `--edhoc-suite`: 0 or 2.
pub(super) fn edhoc_suite(text: &str) -> Result<EdhocSuite, String> {
    match text.trim() {
        "0" => Ok(EdhocSuite::Suite0),
        "2" => Ok(EdhocSuite::Suite2),
        s => Err(format!("--edhoc-suite: '{}' is not 0 or 2", lwcbench_link::input::shown(s))),
    }
}

/// Which EDHOC implementation runs `suite`: lakers speaks suite 2 only, so suite 0 runs on this
/// project's own (docs/protocols.md).
fn implementation(suite: EdhocSuite) -> &'static str {
    match suite {
        EdhocSuite::Suite2 => "lakers",
        EdhocSuite::Suite0 => "own",
    }
}

/// `lwcbench link gateway --protocol oscore`: serve until SIGTERM/SIGINT; prints `ready ADDR`
/// once bound (with `edhoc`, then `edhoc-credential HEX`) and a JSON line of the tally at the
/// end.
#[allow(clippy::too_many_arguments)] // one argument per option of the verb
pub(super) fn gateway(
    key_file: &Path,
    cipher: Option<&str>,
    devices: &[u32],
    store: &str,
    session: &str,
    listen: &str,
    batch: usize,
    edhoc: Option<EdhocSuite>,
) -> Result<(), String> {
    use std::io::Write;
    let alg = alg(cipher)?;
    check_batch(batch)?;
    if let Some(suite) = edhoc.filter(|_| alg != lwcbench_oscore::Algorithm::AesCcm16_64_128) {
        return Err(format!(
            "--edhoc: the OSCORE AEAD is cipher suite {}'s application AEAD, AES-CCM-16-64-128 (RFC 9528 Appendix \
             A.1), not {}",
            suite.id(),
            alg.name()
        ));
    }
    let master = MasterKey::read(key_file)?;
    let store = lwcbench_link::store::open(store, session, &store_key_id(&master.fingerprint(), alg))?;
    let state_dir = state_dir_beside(key_file);
    let (gw, credential) = match edhoc {
        None => (OscoreGateway::new(&master, alg, devices, &state_dir, store)?, None),
        Some(suite) => {
            let (gw, ccs) = OscoreGateway::edhoc(&master, suite, devices, &state_dir, store)?;
            (gw, Some(ccs))
        }
    };
    lwcbench_link::gateway::process::install_stop_signals();
    let srv = OscoreServer::start(gw, listen, batch)?;
    println!("ready {}", srv.addr);
    if let Some(ccs) = credential {
        // The gateway's credential is public (a CCS with its P-256 or X25519 public key): devices
        // need it.
        println!("edhoc-credential {}", lwcbench_link::oscore::credential_hex(&ccs));
    }
    let _ = std::io::stdout().flush();
    while !lwcbench_link::gateway::process::stop_requested() && !srv.ended() {
        std::thread::sleep(Duration::from_millis(20));
    }
    let (gw, err) = srv.stop()?;
    println!("{}", serde_json::json!({"final": true, "algorithm": alg.name(), "tally": gw.tally}));
    match err {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// `lwcbench link device --protocol oscore`: send `messages` readings, printing `stored seq N`
/// for each the gateway confirms. The sequence number state (default KEY_FILE.oscore-ALG.seq)
/// is created at the first run and locked while in use.
#[allow(clippy::too_many_arguments)] // one argument per option of the verb
pub(super) fn device(
    key_file: &Path,
    id: Option<u32>,
    cipher: Option<&str>,
    gateway: &str,
    messages: u64,
    interval: Duration,
    seq_state: Option<&Path>,
    edhoc: Option<(&str, u64, EdhocSuite)>,
) -> Result<(), String> {
    let alg = alg(cipher)?;
    let key = LinkKey::read(key_file)?.into_device(key_file, Family::Sensor)?;
    if id.is_some_and(|i| i != key.device) {
        return Err(format!("--id: the device key is sensor {}'s; it cannot send as another device", key.device));
    }
    let addr: std::net::SocketAddr = gateway.parse().map_err(|_| {
        format!("--gateway: '{}' is not HOST:PORT (an IP address and a port)", lwcbench_link::input::shown(gateway))
    })?;
    if let Some((cred_hex, rekey_after, suite)) = edhoc {
        if alg != lwcbench_oscore::Algorithm::AesCcm16_64_128 || seq_state.is_some() {
            return Err("--edhoc: AES-CCM-16-64-128 (RFC 9528 Appendix A.1), and no --seq-state (each context is \
                        new, its sequence numbers start at 0)"
                .into());
        }
        let client = match lwcbench_link::oscore::credential_from_hex(cred_hex, suite)? {
            GatewayCredential::Suite2(cred) => {
                EdhocClient::new(lwcbench_link::oscore::device_identity(&key)?, cred, rekey_after)?
            }
            GatewayCredential::Suite0(cred) => {
                EdhocClient::new_suite0(lwcbench_link::oscore::device_identity_x25519(&key)?, cred, rekey_after)?
            }
        };
        let mut dev = CoapDevice::new_edhoc(client, addr)?;
        dev.start()?;
        send_readings(&mut |r| dev.send(r), messages, interval)?;
        let h = dev.handshakes().len();
        println!(
            "OSCORE {} with EDHOC suite {}: device {} sent {messages} readings, {h} handshakes",
            alg.name(),
            suite.id(),
            key.device
        );
        return Ok(());
    }
    let ctx = device_context(&key, alg)?;
    let default = {
        let mut s = key_file.as_os_str().to_os_string();
        s.push(format!(".oscore-{}.seq", alg.cose_id()));
        std::path::PathBuf::from(s)
    };
    let path = seq_state.map_or(default, Path::to_path_buf);
    let seq = lwcbench_oscore::seq::SequenceStore::open(&path, &ctx, lwcbench_oscore::seq::DEFAULT_BLOCK)
        .map_err(|e| format!("--seq-state: {e}"))?;
    let mut dev = CoapDevice::new(ctx, seq, addr)?;
    send_readings(&mut |r| dev.send(r), messages, interval)?;
    println!("OSCORE {}: device {} sent {messages} readings", alg.name(), key.device);
    Ok(())
}

/// Send `messages` readings of the built-in dataset, printing `stored seq N` for each the
/// gateway confirms.
fn send_readings(
    send: &mut dyn FnMut(&[u8]) -> Result<lwcbench_link::oscore::device::Delivered, String>,
    messages: u64,
    interval: Duration,
) -> Result<(), String> {
    use std::io::Write;
    let readings = lwcbench_link::device::fleet::dataset_readings(&lwcbench_engine::dataset::Dataset::builtin());
    let out = std::io::stdout();
    for k in 0..messages {
        let r = &readings[(k % readings.len() as u64) as usize];
        let d = send(r)?;
        let mut o = out.lock();
        let _ = writeln!(o, "stored seq {}", d.seq);
        let _ = o.flush();
        if !interval.is_zero() {
            std::thread::sleep(interval);
        }
    }
    Ok(())
}
