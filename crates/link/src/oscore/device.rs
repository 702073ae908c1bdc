//! The OSCORE device: a CoAP client that POSTs each reading as a Confirmable request protected
//! with OSCORE, retransmitted as RFC 7252 §4.2 prescribes (the same datagram, the timeout
//! doubling from ACK_TIMEOUT × a random factor in [1, 1.5), at most MAX_RETRANSMIT times), and
//! that answers the gateway's Echo challenge (RFC 9175) by repeating the reading in a new
//! request carrying the value.
//!
//! With `--edhoc` ([`CoapDevice::new_edhoc`]) the device has no context until it runs EDHOC
//! (RFC 9528, method 3, cipher suite 2) as Initiator against the gateway over CoAP (Appendix
//! A.2: message_1 behind CBOR `true`, then message_3 behind C_R, both POSTed to
//! `/.well-known/edhoc`), and takes the OSCORE context of Appendix A.1. Before a request whose
//! sender sequence number would reach the re-key limit it runs a new handshake and drops the
//! old context (its keys are zeroized on drop): the reading in hand goes under the new one, so
//! none is lost, and the new keys start a new nonce space, so no (key, nonce) pair repeats.
use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use lwcbench_oscore::coap::{mtype, opt, Message};
use lwcbench_oscore::edhoc::{self, own, Credential, Established, Identity, Initiator};
use lwcbench_oscore::{protect_request, unprotect_response, MemorySequence, SecurityContext, SequenceSource};

use crate::oscore::ECHO;

/// RFC 7252 §4.8 defaults.
pub const ACK_TIMEOUT: Duration = Duration::from_secs(2);
/// RFC 7252 §4.8: retransmissions of one CON at most.
pub const MAX_RETRANSMIT: u32 = 4;
/// Echo round trips per reading at most (one is what a freshly started gateway asks).
pub const MAX_ECHO_ROUNDS: u32 = 2;
/// The largest Echo value accepted (RFC 9175 §2.2.1: 1 to 40 bytes).
pub const MAX_ECHO: usize = 40;

/// How one reading went.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Delivered {
    /// The sender sequence number of the request that was stored.
    pub seq: u64,
    /// Retransmissions of CONs for this reading.
    pub retransmissions: u32,
    /// Echo round trips for this reading.
    pub echo_rounds: u32,
    /// The size of the stored request's datagram.
    pub request_bytes: u32,
    /// With EDHOC: which of this device's handshakes (1, 2, ...) gave the context the reading
    /// went under; 0 without.
    pub handshake: u32,
}

/// The connection identifier C_I a device offers (-24: one byte on the wire, and its OSCORE
/// Recipient ID; the gateway picks a C_R other than it).
pub const C_I: u8 = 0x37;

/// What one EDHOC handshake cost the device.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Handshake {
    /// CoAP datagrams sent and received (two requests, two responses, retransmissions).
    pub bytes: u32,
    /// Request/response exchanges, retransmissions included (2 without loss).
    pub round_trips: u32,
    /// message_1 sent → message_4 verified and the context derived (ns).
    pub ns: u64,
}

/// Who a device authenticates as and which gateway it accepts: at cipher suite 2 through
/// lakers, or at suite 0 through this project's own EDHOC (`--edhoc-suite 0`).
enum Credentials {
    // Boxed: lakers' credential holds its CCS in a fixed buffer of several hundred bytes.
    Suite2 { identity: Box<Identity>, gateway: Box<Credential> },
    Suite0 { identity: own::Identity, gateway: own::Credential },
}

/// The EDHOC side of a device: its identity, the gateway's credential, the re-key rule.
pub struct EdhocClient {
    creds: Credentials,
    rekey_after: u64,
    seq: MemorySequence,
    next_seq: u64,
    /// The handshakes run so far, in order.
    pub handshakes: Vec<Handshake>,
}

impl EdhocClient {
    /// A client authenticating with `identity`, accepting the gateway with credential
    /// `gateway`, re-keying before a sender sequence number reaches `rekey_after` (at least 1;
    /// the Partial IV space of RFC 8613 §7.2.1 bounds it too).
    pub fn new(identity: Identity, gateway: Credential, rekey_after: u64) -> Result<EdhocClient, String> {
        Self::with(Credentials::Suite2 { identity: Box::new(identity), gateway: Box::new(gateway) }, rekey_after)
    }

    /// As [`EdhocClient::new`] at cipher suite 0 (X25519 static keys), on this project's own
    /// EDHOC.
    pub fn new_suite0(
        identity: own::Identity,
        gateway: own::Credential,
        rekey_after: u64,
    ) -> Result<EdhocClient, String> {
        Self::with(Credentials::Suite0 { identity, gateway }, rekey_after)
    }

    fn with(creds: Credentials, rekey_after: u64) -> Result<EdhocClient, String> {
        if rekey_after == 0 {
            return Err("--rekey-after: at least 1 message per context".into());
        }
        Ok(EdhocClient { creds, rekey_after, seq: MemorySequence::new(0), next_seq: 0, handshakes: Vec::new() })
    }
}

/// A function called with each datagram before it is sent.
pub type SendHook = Box<dyn FnMut(&[u8]) + Send>;

/// One OSCORE device talking to one gateway.
pub struct CoapDevice<S: SequenceSource> {
    sock: UdpSocket,
    ctx: Option<SecurityContext>,
    seq: S,
    edhoc: Option<EdhocClient>,
    next_mid: u16,
    next_token: u32,
    echo: Option<Vec<u8>>,
    /// ACK_TIMEOUT (RFC 7252 §4.8); lower on loopback tests.
    pub ack_timeout: Duration,
    /// MAX_RETRANSMIT.
    pub max_retransmit: u32,
    /// Called with each datagram just before it is sent (tests: capture, kill points).
    pub on_send: Option<SendHook>,
}

fn net(e: std::io::Error) -> String {
    format!("coap: {e}")
}

impl<S: SequenceSource> CoapDevice<S> {
    /// A device with context `ctx` and sequence numbers from `seq`, sending to `gateway`.
    pub fn new(ctx: SecurityContext, seq: S, gateway: SocketAddr) -> Result<CoapDevice<S>, String> {
        Self::open(Some(ctx), seq, None, gateway)
    }

    fn open(
        ctx: Option<SecurityContext>,
        seq: S,
        edhoc: Option<EdhocClient>,
        gateway: SocketAddr,
    ) -> Result<CoapDevice<S>, String> {
        let local = if gateway.is_ipv4() { "0.0.0.0:0" } else { "[::]:0" };
        let sock = UdpSocket::bind(local).map_err(net)?;
        sock.connect(gateway).map_err(|e| format!("coap: cannot reach {gateway}: {e}"))?;
        let mut r = [0u8; 6];
        rand::fill(&mut r);
        Ok(CoapDevice {
            sock,
            ctx,
            seq,
            edhoc,
            next_mid: u16::from_be_bytes([r[0], r[1]]),
            next_token: u32::from_be_bytes([r[2], r[3], r[4], r[5]]),
            echo: None,
            ack_timeout: ACK_TIMEOUT,
            max_retransmit: MAX_RETRANSMIT,
            on_send: None,
        })
    }

    /// The sequence number source (tests read how far it got).
    pub fn seq(&self) -> &S {
        &self.seq
    }

    /// The current security context (None before an EDHOC device's first handshake).
    pub fn context(&self) -> Option<&SecurityContext> {
        self.ctx.as_ref()
    }

    /// The EDHOC handshakes run so far (empty without EDHOC).
    pub fn handshakes(&self) -> &[Handshake] {
        self.edhoc.as_ref().map_or(&[], |e| &e.handshakes)
    }

    /// Send one reading until the gateway confirms it is stored (2.04 Changed).
    pub fn send(&mut self, reading: &[u8]) -> Result<Delivered, String> {
        let mut d = Delivered::default();
        let mut fresh_handshakes = 0;
        loop {
            if let Some(e) = &self.edhoc {
                if self.ctx.is_none() || Established::needs_key_update(e.next_seq, e.rekey_after) {
                    self.handshake()?;
                }
            }
            let ctx = self.ctx.as_ref().ok_or("no security context")?;
            // The request `lwcbench choose` prices (lwcbench_oscore::reading::protected_size).
            let echo = self.echo.as_deref().map(|e| (ECHO, e));
            let m = lwcbench_oscore::reading::request(self.next_mid, self.next_token, reading, echo);
            self.next_mid = self.next_mid.wrapping_add(1);
            self.next_token = self.next_token.wrapping_add(1);
            let (outer, binding) = match &mut self.edhoc {
                Some(e) => protect_request(ctx, &mut e.seq, &m),
                None => protect_request(ctx, &mut self.seq, &m),
            }
            .map_err(|e| e.to_string())?;
            let bytes = outer.encode().map_err(|e| e.to_string())?;
            d.seq = lwcbench_oscore::context::piv_value(&binding.piv).map_err(|e| e.to_string())?;
            d.request_bytes = bytes.len() as u32;
            if let Some(e) = &mut self.edhoc {
                e.next_seq = d.seq + 1;
                d.handshake = e.handshakes.len() as u32;
            }
            let reply = self.exchange(&bytes, &outer, &mut d.retransmissions)?;
            let ctx = self.ctx.as_ref().ok_or("no security context")?;
            let answer = match unprotect_response(ctx, &binding, &reply) {
                Ok(a) => a,
                Err(e) => {
                    // An unprotected error answer names why the gateway refused the request.
                    let code = Message::parse(&reply).map(|r| r.code).unwrap_or(0);
                    if code == 0x81 && self.edhoc.is_some() && fresh_handshakes == 0 {
                        // 4.01 to an EDHOC context: the gateway no longer has it (it restarted);
                        // a new handshake, then the same reading under the new context.
                        fresh_handshakes += 1;
                        self.ctx = None;
                        continue;
                    }
                    if code >> 5 >= 4 {
                        return Err(format!("the gateway refused reading seq {}: {}", d.seq, code_name(code)));
                    }
                    return Err(format!("the gateway's answer to seq {} does not verify: {e}", d.seq));
                }
            };
            match answer.code {
                0x44 | 0x41 => {
                    // Stored; a value echoed once is not sent again (the gateway is synchronised).
                    self.echo = None;
                    return Ok(d);
                }
                0x81 if answer.option_values(ECHO).next().is_some() => {
                    let v = answer.option_values(ECHO).next().unwrap_or_default();
                    if v.is_empty() || v.len() > MAX_ECHO {
                        return Err(format!("the gateway's Echo value has {} bytes (1 to {MAX_ECHO})", v.len()));
                    }
                    d.echo_rounds += 1;
                    if d.echo_rounds > MAX_ECHO_ROUNDS {
                        return Err(format!("the gateway asked for Echo {} times for one reading", d.echo_rounds));
                    }
                    self.echo = Some(v.to_vec());
                }
                c => return Err(format!("the gateway answered reading seq {} with {}", d.seq, code_name(c))),
            }
        }
    }

    /// Run EDHOC with the gateway and take the context it gives; the old context is dropped
    /// first (zeroized), so nothing more is sent under it.
    fn handshake(&mut self) -> Result<(), String> {
        let t0 = Instant::now();
        self.ctx = None;
        let e = self.edhoc.as_ref().ok_or("no EDHOC client")?;
        let mut h = Handshake::default();
        let ctx = match &e.creds {
            Credentials::Suite2 { identity, gateway } => {
                let (init, m1) = Initiator::start(identity, **gateway, C_I).map_err(|e| e.to_string())?;
                let m2 = self.edhoc_post(edhoc::coap_message_1(&m1), "message_1", &mut h)?;
                let (sent3, m3) = init.process_message_2(&m2).map_err(|e| e.to_string())?;
                let m4 = self.edhoc_post(edhoc::coap_message_3(sent3.c_r(), &m3), "message_3", &mut h)?;
                let mut est = sent3.process_message_4(&m4).map_err(|e| e.to_string())?;
                est.oscore_context().map_err(|e| e.to_string())?
                // The EDHOC session ends here (lakers 0.8 does not zeroize its state).
            }
            Credentials::Suite0 { identity, gateway } => {
                let params = own::Params {
                    suite: own::EdhocSuite::Suite0,
                    method: own::Method::StaticDh,
                    own: identity,
                    peer: gateway,
                };
                let (init, m1) = own::Initiator::start(&params, &[C_I]).map_err(|e| e.to_string())?;
                let m2 = self.edhoc_post(edhoc::coap_message_1(&m1), "message_1", &mut h)?;
                let (sent3, m3) = init.process_message_2(&m2).map_err(|e| e.to_string())?;
                let m4 = self.edhoc_post(edhoc::coap_message_3(sent3.c_r(), &m3), "message_3", &mut h)?;
                let est = sent3.process_message_4(&m4).map_err(|e| e.to_string())?;
                est.oscore_context().map_err(|e| e.to_string())?
                // The session's keys are wiped as it drops here.
            }
        };
        h.ns = t0.elapsed().as_nanos() as u64;
        let e = self.edhoc.as_mut().ok_or("no EDHOC client")?;
        e.seq = MemorySequence::new(0);
        e.next_seq = 0;
        e.handshakes.push(h);
        self.ctx = Some(ctx);
        Ok(())
    }

    /// POST an EDHOC message to `/.well-known/edhoc`; the 2.04 answer's payload, or the
    /// gateway's refusal with the reason its EDHOC error message gives.
    fn edhoc_post(&mut self, payload: Vec<u8>, what: &str, h: &mut Handshake) -> Result<Vec<u8>, String> {
        let mut m = Message::new(mtype::CON, 0x02, self.next_mid, &self.next_token.to_be_bytes());
        self.next_mid = self.next_mid.wrapping_add(1);
        self.next_token = self.next_token.wrapping_add(1);
        for seg in edhoc::WELL_KNOWN_EDHOC {
            m.add_option(opt::URI_PATH, seg.as_bytes());
        }
        m.payload = payload;
        let bytes = m.encode().map_err(|e| e.to_string())?;
        let mut retransmissions = 0;
        let reply = self.exchange(&bytes, &m, &mut retransmissions)?;
        h.round_trips += 1 + retransmissions;
        h.bytes += (bytes.len() * (1 + retransmissions as usize) + reply.len()) as u32;
        let r = Message::parse(&reply).map_err(|e| format!("the gateway's answer to EDHOC {what}: {e}"))?;
        match r.code {
            0x44 => Ok(r.payload),
            c => {
                // ERR_CODE 2 names the suites the gateway runs (RFC 9528 §6.3); ERR_CODE 1 a reason.
                let selected = match self.edhoc.as_ref().map(|e| &e.creds) {
                    Some(Credentials::Suite0 { .. }) => own::EdhocSuite::Suite0.id(),
                    _ => own::EdhocSuite::Suite2.id(),
                };
                let why = match edhoc::ErrorMessage::parse(&r.payload) {
                    _ if r.payload.is_empty() => "no EDHOC error message".into(),
                    Ok(e) => e.describe("the gateway", "this device", selected),
                    Err(e) => e,
                };
                Err(format!("the gateway refused EDHOC {what} ({}): {why}", code_name(c)))
            }
        }
    }

    /// Send `bytes` (the CON `m`) and wait for its answer: the piggybacked ACK, or after an empty
    /// ACK the separate response (acknowledged if CON). Retransmits on timeout.
    fn exchange(&mut self, bytes: &[u8], m: &Message, retransmissions: &mut u32) -> Result<Vec<u8>, String> {
        let mut r = [0u8; 2];
        rand::fill(&mut r);
        // ACK_RANDOM_FACTOR 1.5: the first timeout lies in [ACK_TIMEOUT, 1.5 × ACK_TIMEOUT).
        let factor = 1.0 + f64::from(u16::from_be_bytes(r)) / 65_536.0 * 0.5;
        let mut timeout = self.ack_timeout.mul_f64(factor);
        let mut acked = false;
        let mut buf = vec![0u8; 2048];
        for attempt in 0..=self.max_retransmit {
            if attempt > 0 {
                if acked {
                    break; // acknowledged: the gateway has it; no retransmission helps
                }
                *retransmissions += 1;
            }
            if let Some(f) = self.on_send.as_mut() {
                f(bytes);
            }
            self.sock.send(bytes).map_err(net)?;
            let deadline = Instant::now() + timeout;
            loop {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    break;
                }
                self.sock.set_read_timeout(Some(left)).map_err(net)?;
                let n = match self.sock.recv(&mut buf) {
                    Ok(n) => n,
                    Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {
                        break
                    }
                    // The gateway's port is not open (yet): like a lost datagram.
                    Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => break,
                    Err(e) => return Err(net(e)),
                };
                let Ok(a) = Message::parse(&buf[..n]) else { continue };
                if a.mtype == mtype::RST && a.message_id == m.message_id {
                    return Err("the gateway reset the request (RST)".into());
                }
                if a.mtype == mtype::ACK && a.message_id == m.message_id {
                    if a.code == 0 {
                        acked = true; // a separate response follows
                        continue;
                    }
                    if a.token == m.token {
                        return Ok(buf[..n].to_vec());
                    }
                }
                if a.token == m.token && a.code >> 5 >= 2 && a.mtype != mtype::ACK {
                    if a.mtype == mtype::CON {
                        let ack = Message::new(mtype::ACK, 0, a.message_id, &[]).encode().map_err(|e| e.to_string())?;
                        self.sock.send(&ack).map_err(net)?;
                    }
                    return Ok(buf[..n].to_vec());
                }
            }
            timeout *= 2;
        }
        Err(format!("no answer from the gateway after {} retransmissions (RFC 7252 §4.2)", self.max_retransmit))
    }
}

impl CoapDevice<MemorySequence> {
    /// A device that establishes its contexts with EDHOC (the first at its first reading).
    pub fn new_edhoc(client: EdhocClient, gateway: SocketAddr) -> Result<CoapDevice<MemorySequence>, String> {
        Self::open(None, MemorySequence::new(0), Some(client), gateway)
    }

    /// Run the first handshake now (a device does at start, so a refusal shows before any reading).
    pub fn start(&mut self) -> Result<(), String> {
        if self.ctx.is_none() {
            self.handshake()?;
        }
        Ok(())
    }
}

/// "4.01 Unauthorized" and the like.
pub fn code_name(code: u8) -> String {
    let name = match code {
        0x41 => "Created",
        0x44 => "Changed",
        0x80 => "Bad Request",
        0x81 => "Unauthorized",
        0x82 => "Bad Option",
        0x84 => "Not Found",
        0x85 => "Method Not Allowed",
        0xa0 => "Internal Server Error",
        _ => "",
    };
    format!("{}.{:02} {name}", code >> 5, code & 0x1f).trim_end().to_string()
}
