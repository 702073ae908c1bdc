//! The OSCORE device: a CoAP client that POSTs each reading as a Confirmable request protected
//! with OSCORE, retransmitted as RFC 7252 §4.2 prescribes (the same datagram, the timeout
//! doubling from ACK_TIMEOUT × a random factor in [1, 1.5), at most MAX_RETRANSMIT times), and
//! that answers the gateway's Echo challenge (RFC 9175) by repeating the reading in a new
//! request carrying the value.
use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use lwcbench_oscore::coap::{mtype, Message};
use lwcbench_oscore::{protect_request, unprotect_response, SecurityContext, SequenceSource};

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
}

/// A function called with each datagram before it is sent.
pub type SendHook = Box<dyn FnMut(&[u8]) + Send>;

/// One OSCORE device talking to one gateway.
pub struct CoapDevice<S: SequenceSource> {
    sock: UdpSocket,
    ctx: SecurityContext,
    seq: S,
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
        let local = if gateway.is_ipv4() { "0.0.0.0:0" } else { "[::]:0" };
        let sock = UdpSocket::bind(local).map_err(net)?;
        sock.connect(gateway).map_err(|e| format!("coap: cannot reach {gateway}: {e}"))?;
        let mut r = [0u8; 6];
        rand::fill(&mut r);
        Ok(CoapDevice {
            sock,
            ctx,
            seq,
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

    /// Send one reading until the gateway confirms it is stored (2.04 Changed).
    pub fn send(&mut self, reading: &[u8]) -> Result<Delivered, String> {
        let mut d = Delivered::default();
        loop {
            // The request `lwcbench choose` prices (lwcbench_oscore::reading::protected_size).
            let echo = self.echo.as_deref().map(|e| (ECHO, e));
            let m = lwcbench_oscore::reading::request(self.next_mid, self.next_token, reading, echo);
            self.next_mid = self.next_mid.wrapping_add(1);
            self.next_token = self.next_token.wrapping_add(1);
            let (outer, binding) = protect_request(&self.ctx, &mut self.seq, &m).map_err(|e| e.to_string())?;
            let bytes = outer.encode().map_err(|e| e.to_string())?;
            d.seq = lwcbench_oscore::context::piv_value(&binding.piv).map_err(|e| e.to_string())?;
            d.request_bytes = bytes.len() as u32;
            let reply = self.exchange(&bytes, &outer, &mut d.retransmissions)?;
            let answer = match unprotect_response(&self.ctx, &binding, &reply) {
                Ok(a) => a,
                Err(e) => {
                    // An unprotected error answer names why the gateway refused the request.
                    let code = Message::parse(&reply).map(|r| r.code).unwrap_or(0);
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
