//! The OSCORE gateway: a CoAP server on UDP that verifies readings (RFC 8613 §8.2) and stores
//! them in batched transactions, answering each request only after its row is committed.
//!
//! * **Exactly once.** A retransmitted CON (same peer, same Message ID) is answered with the
//!   response already sent, from a bounded cache, and never reaches the store again; a
//!   retransmission of a request still in the batch in hand is dropped (its response follows). The
//!   store's unique (key, device, counter) key, the counter being the sender sequence number,
//!   refuses any copy that gets past both.
//! * **Replay.** Each device's Recipient Context has the replay window of §7.4, checked before
//!   the tag and moved only after it verifies.
//! * **Freshness after a restart (RFC 9175 §2.4).** The windows are not persisted: a gateway
//!   starts with every device unsynchronised, and the first verified request of a device is not
//!   stored but answered 4.01 Unauthorized with an Echo option (8 random bytes, valid for
//!   [`ECHO_LIFETIME`]); the device repeats the reading in a new request carrying the value,
//!   which is stored and starts the window. A request replayed from before the restart never
//!   carries a value issued after it, so it is never stored as fresh. The 4.01 answers a request
//!   whose freshness is unknown, so it is protected under the gateway's own Partial IV (§8.3),
//!   from a sequence number state persisted per device ([`lwcbench_oscore::seq`]): a replayed
//!   request never makes the gateway reuse a nonce.
//! * **Errors** are answered unprotected with the codes of §8.2 (4.02 malformed option, 4.01
//!   unknown context or replay, 4.00 failed decryption) and counted by reason.
//! * **EDHOC** ([`OscoreGateway::new_edhoc`]): the gateway is the Responder (RFC 9528 Appendix
//!   A.2) at `/.well-known/edhoc` and holds no context until a device completes a handshake; it
//!   learns which device from the kid of the credential in message_3 and accepts only the
//!   credentials of the devices it serves (any other is refused 4.00 with an EDHOC error
//!   message naming the kid; a message_1 selecting the other cipher suite is answered 4.00 with
//!   the error message of RFC 9528 §6.3, ERR_CODE 2 and the gateway's suite). A completed handshake replaces the device's context (the old one
//!   is dropped, its keys zeroized) and starts a new handshake epoch, persisted per device in
//!   the state directory before message_4 is sent; a reading is stored under counter epoch ×
//!   2^40 + sender sequence number, so the sequence numbers that restart at 0 under each new
//!   context never make a reading look like an earlier one. A fresh context needs no Echo
//!   round trip: no request made before it can verify under it.
use std::collections::{HashMap, HashSet, VecDeque};
use std::net::{SocketAddr, UdpSocket};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use lwcbench_oscore::coap::{mtype, opt, Message};
use lwcbench_oscore::edhoc::{self, own, Credential, Identity, OpenResponder};
use lwcbench_oscore::seq::SequenceStore;
use lwcbench_oscore::{protect_response, unprotect_request, Algorithm, Error, ReplayWindow, SecurityContext};

use crate::oscore::{device_of_kid, gateway_context, ECHO, PATH};
use crate::store::{Row, Store};
use crate::wire::keys::MasterKey;

/// How long an Echo value is accepted after it was issued.
pub const ECHO_LIFETIME: Duration = Duration::from_secs(30);
/// Responses kept for retransmitted CONs (RFC 7252 §4.5), oldest dropped first.
pub const RESPONSE_CACHE: usize = 65_536;
/// The replay window of each device (RFC 8613 §7.4; the size aiocoap and libcoap use).
pub const WINDOW: u32 = 32;
/// Server sequence numbers reserved per durable write.
pub const SEQ_BLOCK: u64 = 256;
/// EDHOC handshakes between message_1 and message_3 at most; the oldest is dropped beyond.
pub const MAX_PENDING: usize = 4096;
/// How long a handshake may wait for its message_3.
pub const PENDING_LIFETIME: Duration = Duration::from_secs(60);
/// Handshake epochs per device at most: epoch × 2^40 + sequence number stays below 2^63 (the
/// stores keep counters as signed 64-bit integers).
pub const MAX_EPOCH: u32 = (1 << 23) - 1;

/// The gateway's verdicts so far.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct OscoreTally {
    /// Rows the store took as new.
    pub stored: u64,
    /// Verified requests whose row the store already held.
    pub duplicates: u64,
    /// Retransmitted CONs answered from the response cache.
    pub retransmissions: u64,
    /// 4.01 + Echo answers (a device not yet synchronised).
    pub echo_challenges: u64,
    /// Not a CoAP message, or its OSCORE option or inner message is malformed (4.02 / dropped).
    pub malformed: u64,
    /// The kid names no device served here (4.01).
    pub unknown_device: u64,
    /// Partial IV already received (4.01).
    pub replayed: u64,
    /// Partial IV below the window (4.01).
    pub too_old: u64,
    /// The tag does not verify (4.00).
    pub bad_tag: u64,
    /// Verified, but not a POST of a reading to the readings path (4.04 / 4.05, protected).
    pub wrong_request: u64,
    /// EDHOC handshakes completed (message_3 verified, message_4 sent).
    pub handshakes: u64,
    /// EDHOC message_3 with a credential the gateway does not accept (4.00).
    pub unknown_credential: u64,
    /// EDHOC messages refused for another reason: altered, malformed, no handshake pending (4.00).
    pub edhoc_refused: u64,
}

impl OscoreTally {
    /// Requests refused, all reasons.
    pub fn refused(&self) -> u64 {
        self.malformed
            + self.unknown_device
            + self.replayed
            + self.too_old
            + self.bad_tag
            + self.wrong_request
            + self.unknown_credential
            + self.edhoc_refused
    }
}

/// One device as the gateway knows it.
struct Peer {
    ctx: SecurityContext,
    window: ReplayWindow,
    /// The window holds only numbers verified fresh (after an Echo round trip).
    synced: bool,
    /// The Echo value last issued, and when.
    echo: Option<([u8; 8], Instant)>,
    /// The gateway's sequence numbers toward this device (opened at the first Echo).
    seq: Option<SequenceStore>,
    /// The handshake epoch of an EDHOC context (0 without EDHOC): the high bits of its rows'
    /// counters.
    epoch: u32,
}

/// The gateway's EDHOC Responder state.
struct EdhocServer {
    side: Side,
    /// Handshakes waiting for message_3, by C_R.
    pending: HashMap<Vec<u8>, (Half, Instant)>,
    /// The C_R of each device's current context, and the device of each C_R.
    by_c_r: HashMap<Vec<u8>, u32>,
    c_r_of: HashMap<u32, Vec<u8>>,
    next_c_r: u32,
}

/// The gateway's own identity and the credentials it accepts (by kid, with their device), at
/// cipher suite 2 through lakers or at suite 0 through this project's own EDHOC.
enum Side {
    Suite2 { identity: Identity, creds: HashMap<Vec<u8>, (u32, Credential)> },
    Suite0 { identity: own::Identity, creds: HashMap<Vec<u8>, (u32, own::Credential)> },
}

impl Side {
    /// The device whose credential has `kid`.
    fn device_of(&self, kid: &[u8]) -> Option<u32> {
        match self {
            Side::Suite2 { creds, .. } => creds.get(kid).map(|(d, _)| *d),
            Side::Suite0 { creds, .. } => creds.get(kid).map(|(d, _)| *d),
        }
    }
}

/// A handshake between message_2 and message_3, at the gateway's suite.
enum Half {
    Suite2(OpenResponder),
    Suite0(own::OpenResponder),
}

/// A request verified and waiting for its batch to commit.
struct Pending {
    from: SocketAddr,
    request: Message,
    binding: lwcbench_oscore::RequestBinding,
    device: u32,
}

/// What the gateway does with one datagram.
enum Step {
    /// Send these bytes back now; cache them for retransmissions of the request if `true`.
    Reply(Vec<u8>, bool),
    /// Store this row, then answer.
    Store(Row, Pending),
    /// Nothing (an ACK/RST, a retransmission of a request in the batch in hand).
    Nothing,
}

/// The gateway's state: contexts, windows, the response cache, the store.
pub struct OscoreGateway {
    alg: Algorithm,
    peers: HashMap<u32, Peer>,
    state_dir: PathBuf,
    store: Box<dyn Store>,
    cache: HashMap<(SocketAddr, u16), Vec<u8>>,
    cache_order: VecDeque<(SocketAddr, u16)>,
    in_batch: HashSet<(SocketAddr, u16)>,
    edhoc: Option<EdhocServer>,
    /// The verdicts.
    pub tally: OscoreTally,
    /// Bytes of each stored reading's request datagram, summed (for the mean).
    pub request_bytes: u64,
}

fn stored_error(what: &str, e: impl std::fmt::Display) -> String {
    format!("{what}: {e}")
}

impl OscoreGateway {
    /// A gateway for `devices` with `alg`, contexts from `master`, the gateway's sequence number
    /// states in `state_dir` (created, mode 0700), rows into `store`.
    pub fn new(
        master: &MasterKey,
        alg: Algorithm,
        devices: &[u32],
        state_dir: &Path,
        store: Box<dyn Store>,
    ) -> Result<OscoreGateway, String> {
        let mut peers = HashMap::with_capacity(devices.len());
        for &d in devices {
            let ctx = gateway_context(master, d, alg)?;
            peers.insert(
                d,
                Peer { ctx, window: ReplayWindow::new(WINDOW), synced: false, echo: None, seq: None, epoch: 0 },
            );
        }
        create_dir_private(state_dir)?;
        Ok(OscoreGateway {
            alg,
            peers,
            state_dir: state_dir.to_path_buf(),
            store,
            cache: HashMap::new(),
            cache_order: VecDeque::new(),
            in_batch: HashSet::new(),
            edhoc: None,
            tally: OscoreTally::default(),
            request_bytes: 0,
        })
    }

    /// The EDHOC gateway of `link gateway --edhoc` and the OSCORE session at cipher suite
    /// `suite`, serving `devices`: its identity and every device's credential derive from
    /// `master` (docs/security.md "EDHOC credentials"); with its credential (CCS, public: the
    /// devices need it).
    pub fn edhoc(
        master: &MasterKey,
        suite: own::EdhocSuite,
        devices: &[u32],
        state_dir: &Path,
        store: Box<dyn Store>,
    ) -> Result<(OscoreGateway, Vec<u8>), String> {
        match suite {
            own::EdhocSuite::Suite2 => {
                let (identity, ccs) = super::gateway_identity(master)?;
                let creds = devices.iter().map(|&d| Ok((d, super::device_credential(master, d)?))).collect::<Result<
                    Vec<_>,
                    String,
                >>(
                )?;
                Ok((OscoreGateway::new_edhoc(identity, &creds, state_dir, store)?, ccs))
            }
            own::EdhocSuite::Suite0 => {
                let identity = super::gateway_identity_x25519(master)?;
                let ccs = identity.credential().cred().to_vec();
                let creds = devices
                    .iter()
                    .map(|&d| Ok((d, super::device_credential_x25519(master, d)?)))
                    .collect::<Result<Vec<_>, String>>()?;
                Ok((OscoreGateway::new_edhoc_suite0(identity, &creds, state_dir, store)?, ccs))
            }
        }
    }

    /// A gateway whose contexts come from EDHOC at cipher suite 2 through lakers
    /// (AES-CCM-16-64-128, the suite's application AEAD): `identity` is its own, `creds` the
    /// credentials it accepts (CCS bytes by device); handshake epochs persist in `state_dir`.
    pub fn new_edhoc(
        identity: Identity,
        creds: &[(u32, Vec<u8>)],
        state_dir: &Path,
        store: Box<dyn Store>,
    ) -> Result<OscoreGateway, String> {
        let mut by_kid = HashMap::with_capacity(creds.len());
        for (d, ccs) in creds {
            let c = edhoc::credential(ccs).map_err(|e| format!("device {d}: {e}"))?;
            let kid = c.kid.as_ref().map(|k| k.as_slice().to_vec()).ok_or_else(|| format!("device {d}: no kid"))?;
            if by_kid.insert(kid, (*d, c)).is_some() {
                return Err(format!("device {d}: its credential's kid is another device's"));
            }
        }
        Self::with_edhoc(Side::Suite2 { identity, creds: by_kid }, state_dir, store)
    }

    /// As [`OscoreGateway::new_edhoc`] at cipher suite 0 (X25519 static keys, AES-CCM-16-64-128
    /// too), on this project's own EDHOC: `creds` are the accepted credentials by device.
    pub fn new_edhoc_suite0(
        identity: own::Identity,
        creds: &[(u32, own::Credential)],
        state_dir: &Path,
        store: Box<dyn Store>,
    ) -> Result<OscoreGateway, String> {
        let mut by_kid = HashMap::with_capacity(creds.len());
        for (d, c) in creds {
            let kid = c.kid().ok_or_else(|| format!("device {d}: its credential has no kid"))?.to_vec();
            if by_kid.insert(kid, (*d, c.clone())).is_some() {
                return Err(format!("device {d}: its credential's kid is another device's"));
            }
        }
        Self::with_edhoc(Side::Suite0 { identity, creds: by_kid }, state_dir, store)
    }

    fn with_edhoc(side: Side, state_dir: &Path, store: Box<dyn Store>) -> Result<OscoreGateway, String> {
        create_dir_private(state_dir)?;
        Ok(OscoreGateway {
            alg: Algorithm::AesCcm16_64_128,
            peers: HashMap::new(),
            state_dir: state_dir.to_path_buf(),
            store,
            cache: HashMap::new(),
            cache_order: VecDeque::new(),
            in_batch: HashSet::new(),
            edhoc: Some(EdhocServer {
                side,
                pending: HashMap::new(),
                by_c_r: HashMap::new(),
                c_r_of: HashMap::new(),
                next_c_r: 0,
            }),
            tally: OscoreTally::default(),
            request_bytes: 0,
        })
    }

    /// Device `device`'s handshake epoch file.
    fn epoch_path(&self, device: u32) -> PathBuf {
        self.state_dir.join(format!("edhoc-{device}.epoch"))
    }

    /// The next handshake epoch of `device`, written durably (temporary file, fsync, rename)
    /// before it is used: a restarted gateway never hands out an epoch twice.
    fn next_epoch(&self, device: u32) -> Result<u32, String> {
        let path = self.epoch_path(device);
        let last = match crate::state_file::read(&path, "EDHOC epoch state", 64)? {
            None => 0,
            Some(t) => t.trim().parse::<u32>().map_err(|_| {
                format!("EDHOC epoch state {}: line 1: expected a handshake epoch (0 to {MAX_EPOCH})", path.display())
            })?,
        };
        if last >= MAX_EPOCH {
            return Err(format!("device {device}: {MAX_EPOCH} EDHOC handshakes used; no epoch left"));
        }
        let next = last + 1;
        write_durably(&path, format!("{next}\n").as_bytes())
            .map_err(|e| format!("EDHOC epoch state {}: {e}", path.display()))?;
        Ok(next)
    }

    /// An EDHOC request (a POST to `/.well-known/edhoc`): message_1 answered with message_2,
    /// message_3 with message_4 once the context is installed; a refusal is a 4.00 with an
    /// EDHOC error message (RFC 9528 Appendix A.2) naming the reason.
    fn edhoc_step(&mut self, m: &Message, now: Instant) -> Result<Step, String> {
        // The response to this request: 2.04 with the next EDHOC message, or 4.00 with an EDHOC
        // error message as its payload (Appendix A.2).
        let reply = |code: u8, payload: Vec<u8>| {
            let t = if m.mtype == mtype::CON { mtype::ACK } else { mtype::NON };
            let mut r = Message::new(t, code, m.message_id, &m.token);
            r.payload = payload;
            r.encode().map(|r| Step::Reply(r, true))
        };
        let reply_400 = |payload: Vec<u8>| reply(0x80, payload).unwrap_or(Step::Nothing);
        let refuse = |why: &str| reply_400(edhoc::error_message(why));
        let answer = |payload: Vec<u8>| reply(0x44, payload).map_err(|e| e.to_string());
        let Some(ed) = self.edhoc.as_mut() else { return Ok(Step::Nothing) };
        let (c_r, body) = match edhoc::split_coap_request(&m.payload) {
            Ok(x) => x,
            Err(e) => {
                self.tally.edhoc_refused += 1;
                return Ok(refuse(&e.to_string()));
            }
        };
        match c_r {
            None => {
                // RFC 9528 §6.3: a message_1 whose selected suite (the last of SUITES_I) this
                // gateway does not run is answered with ERR_CODE 2 and SUITES_R, even when SUITES_I
                // lists this gateway's suite earlier (the Initiator chose). The own parser reads the
                // selected suite for lakers' side too (lakers refuses without naming it).
                let suite = match &ed.side {
                    Side::Suite2 { .. } => own::EdhocSuite::Suite2,
                    Side::Suite0 { .. } => own::EdhocSuite::Suite0,
                };
                if let Ok(m1) = own::messages::parse_message_1(body) {
                    if m1.suites.last() != Some(&i64::from(suite.id())) {
                        self.tally.edhoc_refused += 1;
                        let e = edhoc::wrong_suite_message(&[suite.id()]).map_err(|e| e.to_string())?;
                        return Ok(reply_400(e));
                    }
                }
                ed.pending.retain(|_, (_, at)| now.duration_since(*at) < PENDING_LIFETIME);
                if ed.pending.len() >= MAX_PENDING {
                    if let Some(old) = ed.pending.iter().min_by_key(|(_, (_, at))| *at).map(|(k, _)| k.clone()) {
                        ed.pending.remove(&old);
                    }
                }
                // A C_R no current context or pending handshake holds, and not the Initiator's C_I.
                for _ in 0..4 {
                    let c_r = loop {
                        let c = crate::oscore::kid(ed.next_c_r);
                        ed.next_c_r = (ed.next_c_r + 1) % (1 << 24);
                        if !ed.by_c_r.contains_key(&c) && !ed.pending.contains_key(&c) {
                            break c;
                        }
                    };
                    // Err(None): C_R equals C_I, the next one.
                    let step = match &ed.side {
                        Side::Suite2 { identity, .. } => OpenResponder::process_message_1(identity, body, &c_r)
                            .map(|(r, m2)| (Half::Suite2(r), m2))
                            .map_err(|e| (!matches!(e, edhoc::Error::Oscore(_))).then(|| e.to_string())),
                        Side::Suite0 { identity, .. } => {
                            let cfg = own::ResponderConfig {
                                suite: own::EdhocSuite::Suite0,
                                method: own::Method::StaticDh,
                                own: identity,
                            };
                            own::OpenResponder::process_message_1(&cfg, body, &c_r)
                                .map(|(r, m2)| (Half::Suite0(r), m2))
                                .map_err(|e| (e.reason() != own::handshake::C_R_TAKEN).then(|| e.to_string()))
                        }
                    };
                    match step {
                        Ok((r, m2)) => {
                            ed.pending.insert(c_r, (r, now));
                            return answer(m2).map_err(|e| format!("EDHOC message_2: {e}"));
                        }
                        Err(None) => continue,
                        Err(Some(why)) => {
                            self.tally.edhoc_refused += 1;
                            return Ok(refuse(&why));
                        }
                    }
                }
                self.tally.edhoc_refused += 1;
                Ok(refuse("no connection identifier C_R free"))
            }
            Some(c_r) => {
                let Some((r, _)) = ed.pending.remove(&c_r) else {
                    self.tally.edhoc_refused += 1;
                    return Ok(refuse("EDHOC message_3 for a C_R with no handshake pending"));
                };
                let mut asked = Vec::new();
                // The context, message_4 and the kid; or the refusal.
                let done: Result<(SecurityContext, Vec<u8>, Vec<u8>), String> = match (r, &ed.side) {
                    (Half::Suite2(r), Side::Suite2 { creds, .. }) => r
                        .process_message_3(body, |kid| {
                            asked = kid.to_vec();
                            creds.get(kid).map(|(_, c)| *c)
                        })
                        .map_err(|e| e.to_string())
                        .and_then(|(mut est, m4, kid)| Ok((est.oscore_context().map_err(|e| e.to_string())?, m4, kid))),
                    // The EDHOC session ends here (lakers 0.8 does not zeroize its state).
                    (Half::Suite0(r), Side::Suite0 { creds, .. }) => r
                        .process_message_3(body, |kid| {
                            asked = kid.to_vec();
                            creds.get(kid).map(|(_, c)| c.clone())
                        })
                        .map_err(|e| e.to_string())
                        .and_then(|(est, m4, kid)| Ok((est.oscore_context().map_err(|e| e.to_string())?, m4, kid))),
                    _ => Err("a handshake of another cipher suite".into()),
                };
                let (ctx, m4, kid) = match done {
                    Ok(x) => x,
                    Err(e) => {
                        let unknown = !asked.is_empty() && ed.side.device_of(&asked).is_none();
                        let why = if unknown {
                            self.tally.unknown_credential += 1;
                            format!(
                                "EDHOC message_3 refused: credential kid h'{}' is not one this gateway accepts",
                                hex::encode(&asked)
                            )
                        } else {
                            self.tally.edhoc_refused += 1;
                            e
                        };
                        return Ok(refuse(&why));
                    }
                };
                let device = ed.side.device_of(&kid).ok_or("credential vanished")?;
                let epoch = self.next_epoch(device)?;
                let ed = self.edhoc.as_mut().ok_or("EDHOC state vanished")?;
                // The device's earlier context goes: its keys are zeroized with it.
                if let Some(old) = ed.c_r_of.insert(device, c_r.clone()) {
                    ed.by_c_r.remove(&old);
                }
                ed.by_c_r.insert(c_r, device);
                self.peers.insert(
                    device,
                    Peer { ctx, window: ReplayWindow::new(WINDOW), synced: true, echo: None, seq: None, epoch },
                );
                self.tally.handshakes += 1;
                answer(m4).map_err(|e| format!("EDHOC message_4: {e}"))
            }
        }
    }

    /// The store, for reading after the run.
    pub fn store(&mut self) -> &mut dyn Store {
        self.store.as_mut()
    }

    /// An unprotected error answer to `m` (piggybacked on the ACK of a CON, else NON).
    fn error_reply(m: &Message, code: u8) -> Step {
        let t = if m.mtype == mtype::CON { mtype::ACK } else { mtype::NON };
        Message::new(t, code, m.message_id, &m.token).encode().map(|r| Step::Reply(r, true)).unwrap_or(Step::Nothing)
    }

    /// A protected answer with `code` (and `echo`) to a verified request.
    fn protected_reply(
        &mut self,
        device: u32,
        m: &Message,
        binding: &lwcbench_oscore::RequestBinding,
        code: u8,
        echo: Option<&[u8]>,
    ) -> Result<Vec<u8>, String> {
        let state_dir = self.state_dir.clone();
        let alg = self.alg;
        let peer = self.peers.get_mut(&device).ok_or("peer vanished")?;
        let t = if m.mtype == mtype::CON { mtype::ACK } else { mtype::NON };
        let mut r = Message::new(t, code, m.message_id, &m.token);
        if let Some(v) = echo {
            r.add_option(ECHO, v);
        }
        // A request verified fresh gets the first response under its own nonce; any other (the
        // Echo challenge answers a request that may be a replay) takes a new Partial IV.
        let p = if echo.is_some() {
            if peer.seq.is_none() {
                let path = state_dir.join(format!("gateway-{device}-{}.seq", alg.cose_id()));
                peer.seq = Some(
                    SequenceStore::open(&path, &peer.ctx, SEQ_BLOCK)
                        .map_err(|e| stored_error("gateway sequence numbers", e))?,
                );
            }
            let s = peer.seq.as_mut().map(|s| s as &mut dyn lwcbench_oscore::SequenceSource);
            protect_response(&peer.ctx, binding, &r, s)
        } else {
            protect_response(&peer.ctx, binding, &r, None)
        };
        p.and_then(|m| m.encode()).map_err(|e| stored_error("protecting a response", e))
    }

    fn remember(&mut self, key: (SocketAddr, u16), bytes: Vec<u8>) {
        if self.cache.insert(key, bytes).is_none() {
            self.cache_order.push_back(key);
            if self.cache_order.len() > RESPONSE_CACHE {
                if let Some(old) = self.cache_order.pop_front() {
                    self.cache.remove(&old);
                }
            }
        }
    }

    /// Decide on one datagram. Errors are the gateway's own (its state cannot be written).
    fn step(&mut self, from: SocketAddr, bytes: &[u8], now: Instant) -> Result<Step, String> {
        let m = match Message::parse(bytes) {
            Ok(m) => m,
            Err(_) => {
                self.tally.malformed += 1;
                return Ok(Step::Nothing); // not CoAP: nothing to answer (RFC 7252 §4.2: silently ignored)
            }
        };
        if m.mtype == mtype::ACK || m.mtype == mtype::RST || m.code == 0 {
            return Ok(Step::Nothing);
        }
        let key = (from, m.message_id);
        if m.mtype == mtype::CON {
            if let Some(r) = self.cache.get(&key) {
                self.tally.retransmissions += 1;
                return Ok(Step::Reply(r.clone(), false));
            }
            if self.in_batch.contains(&key) {
                self.tally.retransmissions += 1;
                return Ok(Step::Nothing);
            }
        }
        let kid = match m.option_values(opt::OSCORE).next().map(lwcbench_oscore::option::OscoreOption::parse) {
            Some(Ok(o)) => o.kid,
            Some(Err(e)) => {
                self.tally.malformed += 1;
                return Ok(Self::error_reply(&m, e.coap_code())); // 4.02 Bad Option (§8.2)
            }
            None if self.edhoc.is_some() && m.code == 0x02 && is_edhoc_path(&m) => return self.edhoc_step(&m, now),
            None => {
                self.tally.malformed += 1;
                return Ok(Self::error_reply(&m, 0x81)); // not protected: 4.01 (§8.2)
            }
        };
        let device = match &self.edhoc {
            Some(ed) => kid.as_deref().and_then(|k| ed.by_c_r.get(k).copied()),
            None => kid.as_deref().and_then(device_of_kid),
        };
        let Some(device) = device.filter(|d| self.peers.contains_key(d)) else {
            self.tally.unknown_device += 1;
            return Ok(Self::error_reply(&m, Error::ContextNotFound.coap_code()));
        };
        let peer = self.peers.get_mut(&device).ok_or("peer vanished")?;
        // Unsynchronised: verify against a scratch window; the real one starts only with a
        // request that proves its freshness with the Echo value issued here.
        let mut scratch = ReplayWindow::new(WINDOW);
        let window = if peer.synced { &mut peer.window } else { &mut scratch };
        let (req, binding) = match unprotect_request(&peer.ctx, window, bytes) {
            Ok(x) => x,
            Err(e) => {
                match &e {
                    Error::Replayed(_) => self.tally.replayed += 1,
                    Error::TooOld(_) => self.tally.too_old += 1,
                    Error::DecryptionFailed => self.tally.bad_tag += 1,
                    Error::ContextNotFound => self.tally.unknown_device += 1,
                    _ => self.tally.malformed += 1,
                }
                return Ok(Self::error_reply(&m, e.coap_code()));
            }
        };
        if !peer.synced {
            let fresh = match (&peer.echo, req.option_values(ECHO).next()) {
                (Some((v, at)), Some(got)) => got == v && now.duration_since(*at) < ECHO_LIFETIME,
                _ => false,
            };
            if fresh {
                peer.window = scratch;
                peer.synced = true;
                peer.echo = None;
            } else {
                let mut v = [0u8; 8];
                rand::fill(&mut v);
                peer.echo = Some((v, now));
                self.tally.echo_challenges += 1;
                let r = self.protected_reply(device, &req, &binding, 0x81, Some(&v))?;
                return Ok(Step::Reply(r, true));
            }
        }
        let path: Vec<&[u8]> = req.option_values(opt::URI_PATH).collect();
        if req.code != 0x02 || path != [PATH] {
            self.tally.wrong_request += 1;
            let code = if path != [PATH] { 0x84 } else { 0x85 }; // 4.04 Not Found / 4.05 Method Not Allowed
            let r = self.protected_reply(device, &req, &binding, code, None)?;
            return Ok(Step::Reply(r, true));
        }
        let seq = lwcbench_oscore::context::piv_value(&binding.piv).map_err(|e| e.to_string())?;
        let epoch = self.peers.get(&device).map_or(0, |p| p.epoch);
        let row = Row {
            device,
            counter: u64::from(epoch) << 40 | seq,
            cipher: crate::oscore::alg_byte(self.alg),
            payload: req.payload.clone(),
        };
        self.request_bytes += bytes.len() as u64;
        if m.mtype == mtype::CON {
            self.in_batch.insert(key);
        }
        Ok(Step::Store(row, Pending { from, request: req, binding, device }))
    }

    /// Commit `rows` and answer their requests 2.04 Changed (protected, cached for
    /// retransmissions); returns the answers to send.
    fn commit(&mut self, rows: Vec<Row>, pending: Vec<Pending>) -> Result<Vec<(SocketAddr, Vec<u8>)>, String> {
        if rows.is_empty() {
            return Ok(Vec::new());
        }
        let new = self.store.insert(&rows)?;
        self.tally.stored += new;
        self.tally.duplicates += rows.len() as u64 - new;
        let mut out = Vec::with_capacity(pending.len());
        for p in pending {
            let r = self.protected_reply(p.device, &p.request, &p.binding, 0x44, None)?;
            let key = (p.from, p.request.message_id);
            self.in_batch.remove(&key);
            if p.request.mtype == mtype::CON {
                self.remember(key, r.clone());
            }
            out.push((p.from, r));
        }
        Ok(out)
    }

    /// Handle a batch of datagrams: decide on each, commit the readings in one transaction,
    /// answer. Returns the answers in arrival order of their decisions.
    pub fn handle_batch(
        &mut self,
        datagrams: &[(SocketAddr, Vec<u8>)],
        now: Instant,
    ) -> Result<Vec<(SocketAddr, Vec<u8>)>, String> {
        let mut replies = Vec::new();
        let (mut rows, mut pending) = (Vec::new(), Vec::new());
        for (from, b) in datagrams {
            match self.step(*from, b, now)? {
                Step::Reply(r, cache) => {
                    // A CON's answer (of any code) is the answer to its retransmissions too.
                    if cache && b.len() >= 4 && b[0] >> 4 & 3 == mtype::CON {
                        self.remember((*from, u16::from_be_bytes([b[2], b[3]])), r.clone());
                    }
                    replies.push((*from, r))
                }
                Step::Store(row, p) => {
                    rows.push(row);
                    pending.push(p);
                }
                Step::Nothing => {}
            }
        }
        replies.extend(self.commit(rows, pending)?);
        Ok(replies)
    }
}

/// Replace `path` with `bytes`: a temporary file beside it (mode 0600), fsync, rename, so a
/// crash leaves the old content or the new, never half of it.
fn write_durably(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut tmp = path.as_os_str().to_os_string();
    tmp.push(".tmp");
    let mut f = std::fs::OpenOptions::new().write(true).create(true).truncate(true).mode(0o600).open(&tmp)?;
    f.write_all(bytes)?;
    f.sync_all()?;
    std::fs::rename(&tmp, path)?;
    if let Some(dir) = path.parent() {
        std::fs::File::open(dir)?.sync_all()?;
    }
    Ok(())
}

/// Whether `m`'s Uri-Path is `/.well-known/edhoc`.
fn is_edhoc_path(m: &Message) -> bool {
    let path: Vec<&[u8]> = m.option_values(opt::URI_PATH).collect();
    path.len() == 2 && path.iter().zip(edhoc::WELL_KNOWN_EDHOC).all(|(a, b)| *a == b.as_bytes())
}

/// Create `dir` (and parents) with mode 0700 if missing.
pub fn create_dir_private(dir: &Path) -> Result<(), String> {
    use std::os::unix::fs::DirBuilderExt;
    match std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir) {
        Ok(()) => Ok(()),
        Err(e) => Err(format!("{}: cannot create the OSCORE state directory: {e}", dir.display())),
    }
}

/// Live counts of a running server.
#[derive(Default)]
pub struct Live {
    /// Rows stored.
    pub stored: AtomicU64,
    /// Requests refused.
    pub refused: AtomicU64,
    /// Datagrams handled.
    pub datagrams: AtomicU64,
}

/// A gateway serving a UDP socket on its own thread.
pub struct OscoreServer {
    /// Where it listens.
    pub addr: SocketAddr,
    stop: Arc<AtomicBool>,
    /// Counts while it runs.
    pub live: Arc<Live>,
    join: Option<std::thread::JoinHandle<(OscoreGateway, Option<String>)>>,
}

impl OscoreServer {
    /// Bind `listen` and serve with `gw`, at most `batch` readings per transaction.
    pub fn start(mut gw: OscoreGateway, listen: &str, batch: usize) -> Result<OscoreServer, String> {
        let sock = UdpSocket::bind(listen).map_err(|e| format!("--listen: cannot bind {listen}: {e}"))?;
        crate::transport::udp::set_rcvbuf(&sock, 8 << 20);
        sock.set_read_timeout(Some(Duration::from_millis(50))).map_err(|e| e.to_string())?;
        let addr = sock.local_addr().map_err(|e| e.to_string())?;
        let stop = Arc::new(AtomicBool::new(false));
        let live = Arc::new(Live::default());
        let (stop2, live2) = (stop.clone(), live.clone());
        let batch = batch.max(1);
        let join = std::thread::Builder::new()
            .name("oscore-gateway".into())
            .spawn(move || {
                let err = serve(&mut gw, &sock, &stop2, &live2, batch).err();
                (gw, err)
            })
            .map_err(|e| e.to_string())?;
        Ok(OscoreServer { addr, stop, live, join: Some(join) })
    }

    /// Whether the serving thread has ended (on an error; [`OscoreServer::stop`] returns it).
    pub fn ended(&self) -> bool {
        self.join.as_ref().is_none_or(|j| j.is_finished())
    }

    /// Stop and hand back the gateway (its tally and store) and the error it stopped on.
    pub fn stop(mut self) -> Result<(OscoreGateway, Option<String>), String> {
        self.stop.store(true, Ordering::SeqCst);
        let j = self.join.take().ok_or("the gateway was already stopped")?;
        j.join().map_err(|_| "the OSCORE gateway thread panicked".to_string())
    }
}

/// The serving loop: block for one datagram, take what else is queued (up to `batch`), handle,
/// answer; until `stop`.
fn serve(gw: &mut OscoreGateway, sock: &UdpSocket, stop: &AtomicBool, live: &Live, batch: usize) -> Result<(), String> {
    let mut buf = vec![0u8; lwcbench_oscore::coap::MAX_MESSAGE + 1];
    let mut grams: Vec<(SocketAddr, Vec<u8>)> = Vec::with_capacity(batch);
    while !stop.load(Ordering::Relaxed) {
        grams.clear();
        match sock.recv_from(&mut buf) {
            Ok((n, from)) => grams.push((from, buf[..n].to_vec())),
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            // ICMP port unreachable from a peer that went away surfaces here on Linux: not ours.
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => continue,
            Err(e) => return Err(format!("gateway socket: {e}")),
        }
        sock.set_nonblocking(true).map_err(|e| e.to_string())?;
        while grams.len() < batch {
            match sock.recv_from(&mut buf) {
                Ok((n, from)) => grams.push((from, buf[..n].to_vec())),
                Err(_) => break,
            }
        }
        sock.set_nonblocking(false).map_err(|e| e.to_string())?;
        live.datagrams.fetch_add(grams.len() as u64, Ordering::Relaxed);
        let replies = gw.handle_batch(&grams, Instant::now())?;
        for (to, r) in replies {
            // A peer that went away loses its answer; the reading is stored.
            let _ = sock.send_to(&r, to);
        }
        live.stored.store(gw.tally.stored, Ordering::Relaxed);
        live.refused.store(gw.tally.refused(), Ordering::Relaxed);
    }
    Ok(())
}
