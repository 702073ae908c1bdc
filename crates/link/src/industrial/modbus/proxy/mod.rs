//! The bump-in-the-wire pair: a proxy beside the master and one beside the slave.
//!
//! ```text
//! master ──TCP (plain ADUs)── proxy --side master ══hop══ proxy --side slave ──TCP (plain ADUs)── slave
//! ```
//! Per master connection the master-side proxy opens one hop connection, and the slave-side
//! proxy one connection to the slave — each only once the first record is in hand: the first
//! ADU on the master side, the handshake and the first *authenticated* request on the slave
//! side, so a host without the key never makes the slave-side proxy open a connection to the
//! slave. Every connection is bounded ([`Limits`]): a deadline for that first record, an idle
//! timeout, and a cap on open connections per peer address and overall; refusals are counted.
//! On the hop every ADU travels as one record: a 2-byte big-endian length, then the hop frame
//! ([`super::hop`]) whose plaintext is the whole ADU — or, on a plain hop (the measurement's
//! baseline), the ADU itself.
//!
//! Each direction is one link device with its own id and counter space: master → slave is
//! device `DEVICE_BASE + 2·pair` (frame type 3), slave → master device `DEVICE_BASE + 2·pair + 1`
//! (type 4); both directions' keys come from the pair's key. A proxy seals with the counters of
//! its sending device (durable counter state, so a restarted proxy never repeats a nonce). Every sealed hop connection starts with a handshake (docs/link.md "The hop
//! protocol"): the master side's hello carries a fresh nonce Nm, the slave side's reply a fresh
//! Ns, and the connection id Nm ‖ Ns is in the associated data of every later frame, so a frame
//! recorded on one connection never verifies on another. On a connection the counters of each
//! direction must increase strictly (TCP keeps order), each response names the counter of the
//! request it answers, and a write older than the write deadline is refused. A forged, replayed,
//! reordered, unbound or stale frame is refused, counted and dropped, so the master times out
//! instead of reading wrong data. A malformed ADU from a plain peer, or a hop record over the
//! bound, closes that connection with a logged reason.
mod forward;
mod handshake;
mod keyed;

use std::collections::{HashMap, VecDeque};
use std::net::{IpAddr, SocketAddr};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};

use crate::device::counter::{CounterStore, DeviceCounter};
use crate::gateway::checks::{default_max_failed_tags, Refusal, Tally};
use crate::industrial::modbus::adu::{self, AduError, MAX_ADU};
use crate::industrial::modbus::floor::{Floor, SAVE_EVERY};
use crate::industrial::modbus::hop::{self, ModbusHeader, FLAG_HANDSHAKE, MODBUS_HEADER_LEN, NONCE_LEN};
use crate::wire::frame::{Proto, FLAG_UNAUTHENTICATED};
use crate::wire::keys::KeySource;
use crate::wire::suite::{Keyed, OpenError, Suite};

/// Largest hop record: a 260-byte ADU, the hop frame header, the longest random nonce
/// (XChaCha20-Poly1305's 24 bytes) and the longest tag of any link suite.
pub const MAX_RECORD: usize = MAX_ADU + MODBUS_HEADER_LEN + 24 + 32;

/// Requests in flight per connection the response binding remembers (Modbus/TCP may pipeline;
/// a request never answered — refused as stale, or dropped by the slave — ages out).
pub const MAX_IN_FLIGHT: usize = 64;

/// Default `--write-deadline`.
pub const DEFAULT_WRITE_DEADLINE: Duration = Duration::from_secs(2);

// The pair's sides and device ids live in their own module (the replay floors use them too).
pub use crate::industrial::modbus::pair::{devices, Side, DEVICE_BASE, MAX_PAIR};

/// The sending half of a sealed hop: its device, key and counters.
pub struct Sender {
    keyed: Keyed,
    device: u32,
    counter: DeviceCounter,
    /// The highest counter this process took: the peer's accepted mark must not exceed it.
    highest: Option<u64>,
    /// Why this proxy stopped sealing (a rolled-back counter state); nothing is sealed after.
    halted: Option<String>,
}

/// How the hop is protected.
#[derive(Clone)]
pub enum Hop {
    /// ADUs as they are (the same proxies and path without the cipher).
    Plain,
    /// Sealed frames; the sender and the receiver's checks are shared by every connection.
    Sealed {
        /// The sending half.
        sender: Arc<Mutex<Sender>>,
        /// The receiving half.
        receiver: Arc<Mutex<Receiver>>,
    },
}

/// The receiving half of a sealed hop: the key of the receiving device, the checks before the
/// tag, the failed-tag budget, and the replay floor: the highest counter accepted before this
/// process started (from the replay state file), below which no handshake is taken.
pub struct Receiver {
    keyed: Keyed,
    device: u32,
    floor: Option<u64>,
    top: Option<u64>,
    file: Option<Arc<Mutex<Floor>>>,
    failed_tags: u64,
    max_failed_tags: u64,
    write_deadline: Duration,
    /// The receiving checks' verdicts.
    pub tally: Tally,
}

/// One sealed hop connection after its handshake.
struct Conn {
    /// Nm ‖ Ns: implicit associated data of every frame after the handshake.
    id: [u8; hop::CONN_ID_LEN],
    /// The handshake moment by this side's clock (master: the reply received; slave: the reply
    /// sent), so the slave's age of a write is at least its real delay.
    t0: Instant,
    /// The last counter accepted from the peer on this connection.
    last_in: u64,
    /// Master side: the requests sent and not yet answered; slave side: the requests forwarded
    /// to the slave and not yet answered. (counter, transaction id), oldest first.
    in_flight: VecDeque<(u64, u16)>,
}

impl Conn {
    fn push(&mut self, counter: u64, tid: u16) {
        if self.in_flight.len() == MAX_IN_FLIGHT {
            self.in_flight.pop_front();
        }
        self.in_flight.push_back((counter, tid));
    }

    /// Remove and return the oldest in-flight entry matching `pick`.
    fn take(&mut self, pick: impl Fn(&(u64, u16)) -> bool) -> Option<(u64, u16)> {
        let i = self.in_flight.iter().position(pick)?;
        self.in_flight.remove(i)
    }
}

fn tid(adu: &[u8]) -> u16 {
    u16::from_be_bytes([adu[0], adu[1]])
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}
/// Bounds on the connections one proxy holds (docs/link.md "Connection bounds").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// A connection pair with no ADU forwarded either way for this long is closed (a vanished
    /// or half-open peer, a stalled reader, a master that connects and never polls).
    pub idle: Duration,
    /// Slave side: the first authenticated hop frame must arrive within this of the accept.
    /// Both sides: the connection to the peer must be made within it.
    pub handshake: Duration,
    /// Open accepted connections, over every peer.
    pub max_conns: usize,
    /// Open accepted connections from one peer IP address.
    pub max_per_peer: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits { idle: Duration::from_secs(60), handshake: Duration::from_secs(5), max_conns: 64, max_per_peer: 16 }
    }
}

/// Largest `--max-conns` / `--max-conns-per-peer` (each connection pair holds two sockets).
pub const MAX_CONNS: usize = 10_000;

impl Limits {
    /// Check the bounds; the error names the option.
    pub fn check(&self) -> Result<(), String> {
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        if !(1.0..=86_400_000.0).contains(&ms(self.idle)) {
            return Err(format!("--idle-timeout: {:?} is not between 1ms and 24h", self.idle));
        }
        if !(1.0..=3_600_000.0).contains(&ms(self.handshake)) {
            return Err(format!("--handshake-timeout: {:?} is not between 1ms and 1h", self.handshake));
        }
        if !(1..=MAX_CONNS).contains(&self.max_conns) {
            return Err(format!("--max-conns: {} is not in 1..={MAX_CONNS}", self.max_conns));
        }
        if !(1..=self.max_conns).contains(&self.max_per_peer) {
            return Err(format!(
                "--max-conns-per-peer: {} is not in 1..={} (--max-conns)",
                self.max_per_peer, self.max_conns
            ));
        }
        Ok(())
    }
}

/// What a proxy did so far.
#[derive(Default)]
pub struct Stats {
    /// Connections accepted.
    pub connections: AtomicU64,
    /// ADUs read from the plain side and sent over the hop.
    pub sent: AtomicU64,
    /// Hop records opened and forwarded to the plain side.
    pub delivered: AtomicU64,
    /// Connections closed for a malformed ADU or hop record.
    pub malformed: AtomicU64,
    /// Connections this proxy opened to its peer (the slave, or the slave-side proxy).
    pub upstream: AtomicU64,
    /// Accepted connections closed at once: their peer address already held `max_per_peer`.
    pub refused_per_peer: AtomicU64,
    /// Accepted connections closed at once: the proxy already held `max_conns`.
    pub refused_overall: AtomicU64,
    /// Slave side: connections closed without an authenticated hop frame within `handshake`.
    pub handshake_timeouts: AtomicU64,
    /// Connections closed after `idle` without an ADU forwarded.
    pub idle_timeouts: AtomicU64,
    /// Hop connections whose handshake completed.
    pub handshakes: AtomicU64,
    /// Authentic frames out of the handshake order: a data frame before the handshake (a
    /// frame recorded on another connection), a handshake frame after it.
    pub out_of_handshake: AtomicU64,
    /// Slave side: authentic writes older than the write deadline, not forwarded.
    pub stale_writes: AtomicU64,
    /// Responses bound to no request in flight (master side: the counter named; slave side: a
    /// transaction id the slave answered that no forwarded request had).
    pub unbound: AtomicU64,
    /// Handshakes that showed a counter state older than the peer has accepted (this side's
    /// or, slave side, a hello at or below the replay floor).
    pub rollbacks: AtomicU64,
}

/// A snapshot of [`Stats`] and the receiver's refusals.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// See [`Stats::connections`].
    pub connections: u64,
    /// See [`Stats::sent`].
    pub sent: u64,
    /// See [`Stats::delivered`].
    pub delivered: u64,
    /// See [`Stats::malformed`].
    pub malformed: u64,
    /// See [`Stats::upstream`].
    pub upstream: u64,
    /// See [`Stats::refused_per_peer`].
    pub refused_per_peer: u64,
    /// See [`Stats::refused_overall`].
    pub refused_overall: u64,
    /// See [`Stats::handshake_timeouts`].
    pub handshake_timeouts: u64,
    /// See [`Stats::idle_timeouts`].
    pub idle_timeouts: u64,
    /// See [`Stats::handshakes`].
    pub handshakes: u64,
    /// See [`Stats::out_of_handshake`].
    pub out_of_handshake: u64,
    /// See [`Stats::stale_writes`].
    pub stale_writes: u64,
    /// See [`Stats::unbound`].
    pub unbound: u64,
    /// See [`Stats::rollbacks`].
    pub rollbacks: u64,
    /// The receiver's refusals by reason.
    pub refused: Tally,
}

impl Report {
    /// One line: what was forwarded, the connections refused or timed out, and every frame
    /// refusal by reason.
    pub fn line(&self) -> String {
        let mut s = format!(
            "connections {}, connections opened to the peer {}, ADUs sealed and sent {}, frames opened and delivered {}, \
             connections closed malformed {}, connections refused over the per-peer cap {}, connections refused over \
             the overall cap {}, connections closed without an authenticated frame in time {}, connections closed \
             idle {}, handshakes {}, frames refused outside the handshake order {}, stale writes refused {}, \
             responses bound to no request {}, rollbacks detected {}, frames refused {}",
            self.connections,
            self.upstream,
            self.sent,
            self.delivered,
            self.malformed,
            self.refused_per_peer,
            self.refused_overall,
            self.handshake_timeouts,
            self.idle_timeouts,
            self.handshakes,
            self.out_of_handshake,
            self.stale_writes,
            self.unbound,
            self.rollbacks,
            self.refused.refused_total()
        );
        for r in Refusal::ALL {
            s += &format!(", {} {}", r.as_str(), self.refused.count(r));
        }
        s += &format!(", failed-tag budget alarms {}", self.refused.alarms);
        s
    }
}

/// The accepted connections open now, per peer address and in all.
#[derive(Default)]
struct Open {
    per_peer: HashMap<IpAddr, usize>,
    total: usize,
}

/// One accepted connection counted in [`Open`]; uncounted when dropped.
struct Slot {
    open: Arc<Mutex<Open>>,
    ip: IpAddr,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut o = self.open.lock().unwrap_or_else(|e| e.into_inner());
        o.total -= 1;
        if let Some(n) = o.per_peer.get_mut(&self.ip) {
            *n -= 1;
            if *n == 0 {
                o.per_peer.remove(&self.ip);
            }
        }
    }
}

/// At most one log line per second for a kind of refusal, each with the count since the last.
#[derive(Default)]
pub(super) struct Throttle {
    last: Mutex<Option<(Instant, u64)>>,
}

impl Throttle {
    /// Some(refusals since the last line, this one included) when a line is due now.
    pub(super) fn due(&self) -> Option<u64> {
        let mut l = self.last.lock().unwrap_or_else(|e| e.into_inner());
        match &mut *l {
            Some((t, n)) if t.elapsed() < Duration::from_secs(1) => {
                *n += 1;
                None
            }
            Some((t, n)) => {
                let since = *n + 1;
                (*t, *n) = (Instant::now(), 0);
                Some(since)
            }
            None => {
                *l = Some((Instant::now(), 0));
                Some(1)
            }
        }
    }
}

/// One proxy: where it listens, where it forwards, how the hop is protected.
pub struct Proxy {
    /// Which side of the pair this proxy is.
    pub side: Side,
    /// Where it accepts (the master, or the master-side proxy).
    pub listener: TcpListener,
    /// Where it forwards (the slave-side proxy, or the slave).
    pub peer: SocketAddr,
    /// How the hop is protected.
    pub hop: Hop,
    /// Its connection bounds.
    pub limits: Limits,
    /// What it did so far.
    pub stats: Arc<Stats>,
    /// Log line prefix (e.g. "modbus-proxy (master)"); empty = no log lines.
    pub log: String,
    open: Arc<Mutex<Open>>,
    over_peer: Throttle,
    over_all: Throttle,
    frames_refused: Throttle,
}

/// Why a connection pair ended early.
enum End {
    Idle,
    Failed(String),
}

/// What one connection pair holds: the hop connection's state once its handshake is done
/// (none on a plain hop), and the last forwarding moment for the idle timeout.
struct Pair {
    conn: Option<Mutex<Conn>>,
    start: Instant,
    /// Nanoseconds from `start` to the last ADU forwarded either way.
    last: AtomicU64,
}

impl Pair {
    fn conn(&self) -> std::sync::MutexGuard<'_, Conn> {
        self.conn.as_ref().expect("a sealed hop has a connection state").lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Note that an ADU was forwarded now.
    fn touch(&self) {
        self.last.store(self.start.elapsed().as_nanos() as u64, Ordering::Relaxed);
    }
}

impl Proxy {
    /// A proxy that accepts on `listener` and forwards to `peer`; log lines start with `log`.
    pub fn new(side: Side, listener: TcpListener, peer: SocketAddr, hop: Hop, limits: Limits, log: String) -> Proxy {
        Proxy {
            side,
            listener,
            peer,
            hop,
            limits,
            stats: Arc::new(Stats::default()),
            log,
            open: Arc::default(),
            over_peer: Throttle::default(),
            over_all: Throttle::default(),
            frames_refused: Throttle::default(),
        }
    }

    /// A snapshot of its counts and the receiver's refusals.
    pub fn report(&self) -> Report {
        report(&self.stats, &self.hop)
    }

    /// Record the highest accepted counter in the replay state file (if there is one).
    pub async fn save_floor(&self) -> Result<(), String> {
        let Hop::Sealed { receiver, .. } = &self.hop else { return Ok(()) };
        let (top, file) = {
            let r = receiver.lock().unwrap_or_else(|e| e.into_inner());
            (r.top, r.file.clone())
        };
        let (Some(top), Some(file)) = (top, file) else { return Ok(()) };
        // The fsync runs off the forwarding tasks, and the receiver is not locked meanwhile.
        tokio::task::spawn_blocking(move || file.lock().unwrap_or_else(|e| e.into_inner()).save(top))
            .await
            .map_err(|e| format!("replay state: {e}"))?
    }

    /// Accept and forward until `stop` completes; connections in flight are dropped then, and
    /// the replay floor is saved. A counter state found older than the peer's accepted mark
    /// stops the proxy with that error (it must not seal again).
    pub async fn run(self: Arc<Self>, stop: impl std::future::Future<Output = ()>) -> Result<(), String> {
        tokio::pin!(stop);
        let mut tick = tokio::time::interval(SAVE_EVERY);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            let (conn, from) = tokio::select! {
                _ = &mut stop => return self.save_floor().await,
                _ = tick.tick() => {
                    if let Err(e) = self.save_floor().await {
                        self.say(&e);
                    }
                    if let Some(why) = self.hop.halted() {
                        self.save_floor().await?;
                        return Err(why);
                    }
                    continue;
                }
                r = self.listener.accept() => match r {
                    Ok(c) => c,
                    Err(e) => {
                        // Out of descriptors and the like: say so and keep serving.
                        self.say(&format!("accept failed: {e}"));
                        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                        continue;
                    }
                },
            };
            self.stats.connections.fetch_add(1, Ordering::Relaxed);
            // Over a cap the socket is dropped here: closed before anything is read from it.
            let Some(slot) = self.admit(from.ip()) else { continue };
            let me = self.clone();
            tokio::spawn(async move {
                let _slot = slot;
                if let Err(why) = me.serve(conn).await {
                    me.say(&format!("connection from {from} closed: {why}"));
                }
            });
        }
    }
    /// Count a new connection from `ip`, or refuse it (counted, logged at most once a second
    /// per cap) when it would exceed a cap.
    fn admit(&self, ip: IpAddr) -> Option<Slot> {
        // An IPv4 peer on a dual-stack socket counts as the same address as over IPv4.
        let ip = ip.to_canonical();
        let refused = {
            let mut o = self.open.lock().unwrap_or_else(|e| e.into_inner());
            let here = o.per_peer.get(&ip).copied().unwrap_or(0);
            if here >= self.limits.max_per_peer {
                Some((
                    &self.stats.refused_per_peer,
                    &self.over_peer,
                    "its address holds",
                    "--max-conns-per-peer",
                    self.limits.max_per_peer,
                ))
            } else if o.total >= self.limits.max_conns {
                Some((
                    &self.stats.refused_overall,
                    &self.over_all,
                    "the proxy holds",
                    "--max-conns",
                    self.limits.max_conns,
                ))
            } else {
                *o.per_peer.entry(ip).or_insert(0) += 1;
                o.total += 1;
                None
            }
        };
        match refused {
            None => Some(Slot { open: self.open.clone(), ip }),
            Some((count, throttle, what, opt, cap)) => {
                count.fetch_add(1, Ordering::Relaxed);
                if let Some(n) = throttle.due() {
                    self.say(&format!(
                        "refused a connection from {ip}: {what} {cap} open connections ({opt}); {n} refused over \
                         this cap since the last such line"
                    ));
                }
                None
            }
        }
    }

    fn say(&self, what: &str) {
        if !self.log.is_empty() {
            eprintln!("{}: {what}", self.log);
        }
    }

    async fn serve(&self, accepted: TcpStream) -> Result<(), String> {
        let _ = accepted.set_nodelay(true);
        let (mut acc_r, mut acc_w) = accepted.into_split();
        let mut rec = vec![0u8; MAX_RECORD];
        // Nothing goes to the peer before the first record is in hand: a connection that never
        // sends one (or, on the slave side, never a handshake and an authenticated request)
        // holds no connection to the slave.
        let (first, conn) = match self.side {
            Side::Master => {
                let mut buf = Vec::with_capacity(MAX_ADU);
                match tokio::time::timeout(self.limits.idle, self.next_plain(&mut acc_r, &mut buf)).await {
                    Ok(Ok(Some(adu))) => (adu, None),
                    Ok(Ok(None)) => return Ok(()),
                    Ok(Err(e)) => return Err(e),
                    Err(_) => {
                        self.stats.idle_timeouts.fetch_add(1, Ordering::Relaxed);
                        return Err(format!("idle: no ADU within {:?}", self.limits.idle));
                    }
                }
            }
            Side::Slave => {
                let opened = async {
                    let conn = match &self.hop {
                        Hop::Plain => None,
                        Hop::Sealed { .. } => match self.slave_handshake(&mut acc_r, &mut acc_w, &mut rec).await? {
                            Some(c) => Some(Mutex::new(c)),
                            None => return Ok(None),
                        },
                    };
                    Ok::<_, String>(self.next_from_hop(&mut acc_r, &mut rec, conn.as_ref()).await?.map(|a| (a, conn)))
                };
                match tokio::time::timeout(self.limits.handshake, opened).await {
                    Ok(Ok(Some(got))) => got,
                    Ok(Ok(None)) => return Ok(()),
                    Ok(Err(e)) => return Err(e),
                    Err(_) => {
                        self.stats.handshake_timeouts.fetch_add(1, Ordering::Relaxed);
                        return Err(format!(
                            "no handshake and authenticated request within {:?}",
                            self.limits.handshake
                        ));
                    }
                }
            }
        };
        let other = match tokio::time::timeout(self.limits.handshake, TcpStream::connect(self.peer)).await {
            Ok(Ok(s)) => s,
            Ok(Err(e)) => return Err(format!("cannot connect to {}: {e}", self.peer)),
            Err(_) => return Err(format!("cannot connect to {} within {:?}", self.peer, self.limits.handshake)),
        };
        self.stats.upstream.fetch_add(1, Ordering::Relaxed);
        let _ = other.set_nodelay(true);
        let (mut oth_r, mut oth_w) = other.into_split();
        let conn = match (self.side, &self.hop) {
            (Side::Master, Hop::Sealed { .. }) => {
                let hs = self.master_handshake(&mut oth_r, &mut oth_w, &mut rec);
                match tokio::time::timeout(self.limits.handshake, hs).await {
                    Ok(Ok(c)) => Some(Mutex::new(c)),
                    Ok(Err(e)) => return Err(e),
                    Err(_) => {
                        self.stats.handshake_timeouts.fetch_add(1, Ordering::Relaxed);
                        return Err(format!("no handshake reply within {:?}", self.limits.handshake));
                    }
                }
            }
            _ => conn,
        };
        let (mut plain_r, mut plain_w, mut hop_r, mut hop_w, to_hop, to_plain) = match self.side {
            Side::Master => (acc_r, acc_w, oth_r, oth_w, Some(first), None),
            Side::Slave => (oth_r, oth_w, acc_r, acc_w, None, Some(first)),
        };
        let pair = Pair { conn, start: Instant::now(), last: AtomicU64::new(0) };
        // Either direction ending ends the connection pair (both sockets are dropped).
        let end = tokio::select! {
            r = self.outbound(&mut plain_r, &mut hop_w, to_hop, &pair) => r.map_err(End::Failed),
            r = self.inbound(&mut hop_r, &mut plain_w, to_plain, rec, &pair) => r.map_err(End::Failed),
            _ = self.idle(&pair) => Err(End::Idle),
        };
        match end {
            Ok(()) => Ok(()),
            Err(End::Failed(why)) => Err(why),
            Err(End::Idle) => {
                self.stats.idle_timeouts.fetch_add(1, Ordering::Relaxed);
                Err(format!("idle: no ADU forwarded for {:?}", self.limits.idle))
            }
        }
    }
}

/// The log line of a rolled-back counter state (the proxy stops sealing).
fn rollback_message(device: u32, peer_top: Option<u64>, counter: u64, peer: &str) -> String {
    format!(
        "{peer} has accepted counter {} of device {device}, but this proxy's counter state gave {counter}: the \
         counter state is older than what the peer accepted (restored from a backup or copied?); refusing to seal \
         again — a reused counter reuses a nonce. Provision a new pair key (docs/link.md \"The hop protocol\")",
        peer_top.map_or("none".into(), |t| t.to_string())
    )
}

async fn write_record<W: AsyncWrite + Unpin>(w: &mut W, frame: &[u8]) -> Result<(), String> {
    let mut rec = Vec::with_capacity(frame.len() + 2);
    rec.extend_from_slice(&(frame.len() as u16).to_be_bytes());
    rec.extend_from_slice(frame);
    w.write_all(&rec).await.map_err(|e| format!("hop write: {e}"))
}
/// One proxy as its own process: serve on `listener` (already bound) until SIGTERM/SIGINT;
/// `started` is called with the bound address first. Returns the final tally.
pub fn run_process(
    side: Side,
    listener: std::net::TcpListener,
    peer: SocketAddr,
    hop: Hop,
    limits: Limits,
    log: String,
    started: impl FnOnce(SocketAddr),
) -> Result<Report, String> {
    use crate::gateway::process::{install_stop_signals, stop_requested};
    install_stop_signals();
    listener.set_nonblocking(true).map_err(|e| format!("--listen: {e}"))?;
    let bound = listener.local_addr().map_err(|e| format!("--listen: {e}"))?;
    let rt = crate::transport::runtime()?;
    rt.block_on(async {
        let listener = TcpListener::from_std(listener).map_err(|e| format!("--listen: {e}"))?;
        let p = Arc::new(Proxy::new(side, listener, peer, hop, limits, log));
        started(bound);
        p.clone()
            .run(async {
                while !stop_requested() {
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                }
            })
            .await?;
        Ok(p.report())
    })
}

fn report(stats: &Stats, hop: &Hop) -> Report {
    Report {
        connections: stats.connections.load(Ordering::Relaxed),
        sent: stats.sent.load(Ordering::Relaxed),
        delivered: stats.delivered.load(Ordering::Relaxed),
        malformed: stats.malformed.load(Ordering::Relaxed),
        upstream: stats.upstream.load(Ordering::Relaxed),
        refused_per_peer: stats.refused_per_peer.load(Ordering::Relaxed),
        refused_overall: stats.refused_overall.load(Ordering::Relaxed),
        handshake_timeouts: stats.handshake_timeouts.load(Ordering::Relaxed),
        idle_timeouts: stats.idle_timeouts.load(Ordering::Relaxed),
        handshakes: stats.handshakes.load(Ordering::Relaxed),
        out_of_handshake: stats.out_of_handshake.load(Ordering::Relaxed),
        stale_writes: stats.stale_writes.load(Ordering::Relaxed),
        unbound: stats.unbound.load(Ordering::Relaxed),
        rollbacks: stats.rollbacks.load(Ordering::Relaxed),
        refused: match hop {
            Hop::Plain => Tally::default(),
            Hop::Sealed { receiver, .. } => receiver.lock().unwrap_or_else(|e| e.into_inner()).tally.clone(),
        },
    }
}
