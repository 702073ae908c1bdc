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

impl Sender {
    fn take(&mut self) -> Result<u64, String> {
        if let Some(why) = &self.halted {
            return Err(why.clone());
        }
        let c = self.counter.take()?;
        self.highest = Some(self.highest.map_or(c, |h| h.max(c)));
        Ok(c)
    }

    fn seal(&mut self, flags: u8, counter: u64, ext: u64, implicit: &[u8], plain: &[u8]) -> Result<Vec<u8>, String> {
        let h = ModbusHeader {
            proto: self.keyed.proto,
            cipher: self.keyed.suite.id,
            flags,
            device: self.device,
            counter,
            ext,
        };
        let mut out = Vec::with_capacity(MAX_RECORD);
        hop::seal(&mut self.keyed, &h, implicit, plain, &mut out)?;
        Ok(out)
    }
}

/// How the hop is protected.
#[derive(Clone)]
pub enum Hop {
    /// ADUs as they are (the same proxies and path without the cipher).
    Plain,
    /// Sealed frames; the sender and the receiver's checks are shared by every connection.
    Sealed { sender: Arc<Mutex<Sender>>, receiver: Arc<Mutex<Receiver>> },
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
    pub tally: Tally,
}

impl Receiver {
    fn refuse<T>(&mut self, r: Refusal) -> Result<T, &'static str> {
        self.tally.refused[r as usize] += 1;
        Err(r.as_str())
    }

    /// Check and open one hop frame: device, type, cipher and flags, handshake or not as expected,
    /// the failed-tag budget, a counter above `after` (the connection's last), then the tag with
    /// `implicit` in the associated data. The reason of a refusal for the log.
    fn open(
        &mut self,
        frame: &[u8],
        implicit: &[u8],
        handshake: bool,
        after: Option<u64>,
        order: &AtomicU64,
    ) -> Result<(ModbusHeader, Vec<u8>), &'static str> {
        let Ok(h) = ModbusHeader::parse(frame) else { return self.refuse(Refusal::Malformed) };
        if h.device != self.device {
            return self.refuse(Refusal::UnknownDevice);
        }
        // The other direction's type (a frame reflected back) is refused before its tag.
        if h.proto != self.keyed.proto || h.cipher != self.keyed.suite.id || h.flags & FLAG_UNAUTHENTICATED != 0 {
            return self.refuse(Refusal::WrongCipher);
        }
        if h.is_handshake() != handshake {
            order.fetch_add(1, Ordering::Relaxed);
            return Err(if handshake {
                "not a handshake: a hop connection starts with one"
            } else {
                "a handshake frame on a connection that has had its handshake"
            });
        }
        if self.failed_tags >= self.max_failed_tags {
            return self.refuse(Refusal::TagBudget);
        }
        if after.is_some_and(|last| h.counter <= last) {
            return self.refuse(Refusal::Replay);
        }
        match hop::open(&mut self.keyed, &h, frame, implicit) {
            Ok(plain) => {
                self.top = self.top.max(Some(h.counter));
                self.tally.accepted += 1;
                Ok((h, plain))
            }
            Err(OpenError::BadTag) => {
                self.failed_tags += 1;
                if self.failed_tags == self.max_failed_tags {
                    self.tally.alarms += 1;
                    eprintln!(
                        "alarm: device {}: {} frames with a failed tag ({}); its further frames are refused \
                         (--max-failed-tags, docs/security.md)",
                        self.device,
                        self.max_failed_tags,
                        self.keyed.suite.name()
                    );
                }
                self.refuse(Refusal::BadTag)
            }
            Err(OpenError::Malformed) => self.refuse(Refusal::Malformed),
        }
    }
}

impl Hop {
    /// `--max-failed-tags` of the receiving direction (a plain hop has no tags).
    pub fn set_max_failed_tags(&self, n: u64) -> Result<(), String> {
        if n == 0 {
            return Err("--max-failed-tags: must be at least 1".into());
        }
        if let Hop::Sealed { receiver, .. } = self {
            receiver.lock().unwrap_or_else(|e| e.into_inner()).max_failed_tags = n;
        }
        Ok(())
    }

    /// `--write-deadline`: the slave side refuses a write older than this by its handshake clock.
    pub fn set_write_deadline(&self, d: Duration) -> Result<(), String> {
        if d < Duration::from_millis(1) || d > Duration::from_secs(3600) {
            return Err(format!("--write-deadline: {d:?} is not between 1ms and 1h"));
        }
        if let Hop::Sealed { receiver, .. } = self {
            receiver.lock().unwrap_or_else(|e| e.into_inner()).write_deadline = d;
        }
        Ok(())
    }

    /// A sealed hop for `side` of `pair`: keys from `key` (the pair's device key, or a master in
    /// process), counters from `store`, the replay floor from `replay_state`, which must exist
    /// (made at pairing, [`super::floor::provision_pair`]).
    /// `None`: no file, the floor lives as long as this process (the in-process measurement).
    /// `window` is kept for the callers' sake: on a connection counters must increase strictly,
    /// so the hop has no replay window.
    pub fn sealed(
        suite: &Suite,
        key: &impl KeySource,
        store: &CounterStore,
        pair: u32,
        side: Side,
        window: u64,
        replay_state: Option<&Path>,
    ) -> Result<Hop, String> {
        let _ = window;
        let (send, recv) = devices(pair, side)?;
        let (send_proto, recv_proto) = match side {
            Side::Master => (Proto::ModbusToSlave, Proto::ModbusToMaster),
            Side::Slave => (Proto::ModbusToMaster, Proto::ModbusToSlave),
        };
        // Both directions' keys come from the pair's key (the device id of a Modbus key is the pair).
        let keyed = Keyed::derived(suite, key, send_proto, pair, false)?;
        let recv_keyed = Keyed::derived(suite, key, recv_proto, pair, false)?;
        // The sending device's lease first: one process per direction, so one writer of the
        // replay state too.
        let counter = DeviceCounter::new(store, send)?;
        let (file, floor) = match replay_state {
            Some(p) => {
                let (f, floor) = Floor::open(p, key, recv)?;
                (Some(Arc::new(Mutex::new(f))), floor)
            }
            None => (None, None),
        };
        Ok(Hop::Sealed {
            sender: Arc::new(Mutex::new(Sender { keyed, device: send, counter, highest: None, halted: None })),
            receiver: Arc::new(Mutex::new(Receiver {
                keyed: recv_keyed,
                device: recv,
                floor,
                top: floor,
                file,
                failed_tags: 0,
                max_failed_tags: default_max_failed_tags(suite.tag_len(false)),
                write_deadline: DEFAULT_WRITE_DEADLINE,
                tally: Tally::default(),
            })),
        })
    }

    /// Why the sending half stopped (a counter state older than the peer has accepted).
    pub fn halted(&self) -> Option<String> {
        match self {
            Hop::Plain => None,
            Hop::Sealed { sender, .. } => sender.lock().unwrap_or_else(|e| e.into_inner()).halted.clone(),
        }
    }
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
    pub connections: u64,
    pub sent: u64,
    pub delivered: u64,
    pub malformed: u64,
    pub upstream: u64,
    pub refused_per_peer: u64,
    pub refused_overall: u64,
    pub handshake_timeouts: u64,
    pub idle_timeouts: u64,
    pub handshakes: u64,
    pub out_of_handshake: u64,
    pub stale_writes: u64,
    pub unbound: u64,
    pub rollbacks: u64,
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
    pub side: Side,
    pub listener: TcpListener,
    pub peer: SocketAddr,
    pub hop: Hop,
    pub limits: Limits,
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

    /// Master side: send the hello (Nm and this side's accepted mark for slave → master), take
    /// the reply (Ns and the slave side's mark for master → slave, bound to the hello), and
    /// check that mark against this process's counters.
    async fn master_handshake<R: AsyncRead + Unpin, W: AsyncWrite + Unpin>(
        &self,
        r: &mut R,
        w: &mut W,
        rec: &mut [u8],
    ) -> Result<Conn, String> {
        let Hop::Sealed { sender, receiver } = &self.hop else { unreachable!("sealed hops only") };
        let nm: [u8; NONCE_LEN] = rand::random();
        let mark = receiver.lock().unwrap_or_else(|e| e.into_inner()).top;
        let (hello, c_hello) = {
            let mut s = sender.lock().unwrap_or_else(|e| e.into_inner());
            let c = s.take()?;
            (s.seal(FLAG_HANDSHAKE, c, 0, &[], &hop::handshake_body(&nm, mark))?, c)
        };
        write_record(w, &hello).await?;
        loop {
            let Some(n) = self.read_record(r, rec).await? else {
                return Err("the slave-side proxy closed the hop during the handshake".into());
            };
            let opened = receiver.lock().unwrap_or_else(|e| e.into_inner()).open(
                &rec[..n],
                &nm,
                true,
                None,
                &self.stats.out_of_handshake,
            );
            let (h, body) = match opened {
                Ok(o) => o,
                Err(why) => {
                    self.refused(why);
                    continue;
                }
            };
            if h.ext != c_hello {
                self.stats.unbound.fetch_add(1, Ordering::Relaxed);
                self.refused("a handshake reply to another hello");
                continue;
            }
            let Some((ns, peer_top)) = hop::parse_handshake(&body) else {
                self.stats.malformed.fetch_add(1, Ordering::Relaxed);
                return Err("the handshake reply is not 24 bytes of nonce and mark".into());
            };
            let mut s = sender.lock().unwrap_or_else(|e| e.into_inner());
            let highest = s.highest.unwrap_or(c_hello);
            if !hop::mark_consistent(peer_top, highest, c_hello) {
                self.stats.rollbacks.fetch_add(1, Ordering::Relaxed);
                let why = rollback_message(s.device, peer_top, c_hello, "the slave-side proxy");
                s.halted = Some(why.clone());
                return Err(why);
            }
            drop(s);
            self.stats.handshakes.fetch_add(1, Ordering::Relaxed);
            return Ok(Conn {
                id: hop::conn_id(&nm, &ns),
                t0: Instant::now(),
                last_in: h.counter,
                in_flight: VecDeque::new(),
            });
        }
    }

    /// Slave side: wait for an authentic hello (other frames are refused, counted and skipped),
    /// check the master side's mark against this process's counters before sealing anything,
    /// reply with Ns and this side's mark; a hello at or below the replay floor is answered (so
    /// a rolled-back master side learns it) and its connection closed. None: the stream ended.
    async fn slave_handshake<R: AsyncRead + Unpin, W: AsyncWrite + Unpin>(
        &self,
        r: &mut R,
        w: &mut W,
        rec: &mut [u8],
    ) -> Result<Option<Conn>, String> {
        let Hop::Sealed { sender, receiver } = &self.hop else { unreachable!("sealed hops only") };
        loop {
            let Some(n) = self.read_record(r, rec).await? else { return Ok(None) };
            let (opened, before, floor) = {
                let mut rx = receiver.lock().unwrap_or_else(|e| e.into_inner());
                let before = rx.top;
                (rx.open(&rec[..n], &[], true, None, &self.stats.out_of_handshake), before, rx.floor)
            };
            let (h, body) = match opened {
                Ok(o) => o,
                Err(why) => {
                    self.refused(why);
                    continue;
                }
            };
            let Some((nm, peer_top)) = hop::parse_handshake(&body) else {
                self.stats.malformed.fetch_add(1, Ordering::Relaxed);
                return Err("the hello is not 24 bytes of nonce and mark".into());
            };
            let ns: [u8; NONCE_LEN] = rand::random();
            let reply = {
                let mut s = sender.lock().unwrap_or_else(|e| e.into_inner());
                let c = s.take()?;
                if !hop::mark_consistent(peer_top, c, c) {
                    // Checked before sealing: this side's counter state never reuses a nonce.
                    self.stats.rollbacks.fetch_add(1, Ordering::Relaxed);
                    let why = rollback_message(s.device, peer_top, c, "the master-side proxy");
                    s.halted = Some(why.clone());
                    return Err(why);
                }
                s.seal(FLAG_HANDSHAKE, c, h.counter, &nm, &hop::handshake_body(&ns, before))?
            };
            write_record(w, &reply).await?;
            if let Some(f) = floor.filter(|&f| h.counter <= f) {
                self.stats.rollbacks.fetch_add(1, Ordering::Relaxed);
                let mut rx = receiver.lock().unwrap_or_else(|e| e.into_inner());
                rx.tally.refused[Refusal::Replay as usize] += 1;
                return Err(format!(
                    "hello with counter {} of device {}, at or below {f} accepted before this proxy started: a \
                     replayed hello, or the master side's counter state was rolled back",
                    h.counter, rx.device
                ));
            }
            self.stats.handshakes.fetch_add(1, Ordering::Relaxed);
            let id = hop::conn_id(&nm, &ns);
            return Ok(Some(Conn { id, t0: Instant::now(), last_in: h.counter, in_flight: VecDeque::new() }));
        }
    }

    /// Completes once nothing was forwarded for `limits.idle`. A write stuck on a peer that
    /// does not read counts as nothing forwarded.
    async fn idle(&self, pair: &Pair) {
        loop {
            let due = pair.start + Duration::from_nanos(pair.last.load(Ordering::Relaxed)) + self.limits.idle;
            if Instant::now() >= due {
                return;
            }
            tokio::time::sleep_until(due.into()).await;
        }
    }

    /// Plain side → hop: one ADU at a time, bounded, sealed; `first` goes out before the rest.
    async fn outbound(
        &self,
        r: &mut OwnedReadHalf,
        w: &mut OwnedWriteHalf,
        first: Option<Vec<u8>>,
        pair: &Pair,
    ) -> Result<(), String> {
        let mut buf = Vec::with_capacity(MAX_ADU);
        let mut next = first;
        loop {
            let adu = match next.take() {
                Some(adu) => adu,
                None => match self.next_plain(r, &mut buf).await? {
                    Some(adu) => adu,
                    None => return Ok(()),
                },
            };
            let Some(frame) = self.seal_adu(&adu, pair)? else { continue };
            write_record(w, &frame).await?;
            self.stats.sent.fetch_add(1, Ordering::Relaxed);
            pair.touch();
        }
    }

    /// The hop frame of one ADU from the plain side: the ADU itself on a plain hop; sealed with
    /// the connection id, and (master side) the ms since the handshake or (slave side) the
    /// counter of the request it answers. None: a response that answers no request in flight.
    fn seal_adu(&self, adu: &[u8], pair: &Pair) -> Result<Option<Vec<u8>>, String> {
        let Hop::Sealed { sender, .. } = &self.hop else { return Ok(Some(adu.to_vec())) };
        let mut conn = pair.conn();
        let ext = match self.side {
            Side::Master => millis(conn.t0.elapsed()),
            Side::Slave => match conn.take(|&(_, t)| t == tid(adu)) {
                Some((c, _)) => c,
                None => {
                    self.stats.unbound.fetch_add(1, Ordering::Relaxed);
                    self.say(&format!(
                        "dropped a response of the slave: transaction {} is in no request forwarded on this connection",
                        tid(adu)
                    ));
                    return Ok(None);
                }
            },
        };
        let mut s = sender.lock().unwrap_or_else(|e| e.into_inner());
        let c = s.take()?;
        let frame = s.seal(0, c, ext, &conn.id, adu)?;
        if self.side == Side::Master {
            conn.push(c, tid(adu));
        }
        Ok(Some(frame))
    }

    /// Hop → plain side: one record at a time, bounded, checked and opened; `first` (already
    /// opened) goes out before the rest.
    async fn inbound(
        &self,
        r: &mut OwnedReadHalf,
        w: &mut OwnedWriteHalf,
        first: Option<Vec<u8>>,
        mut rec: Vec<u8>,
        pair: &Pair,
    ) -> Result<(), String> {
        let mut next = first;
        loop {
            let adu = match next.take() {
                Some(adu) => adu,
                None => match self.next_from_hop(r, &mut rec, pair.conn.as_ref()).await? {
                    Some(adu) => adu,
                    None => return Ok(()),
                },
            };
            w.write_all(&adu).await.map_err(|e| format!("write: {e}"))?;
            self.stats.delivered.fetch_add(1, Ordering::Relaxed);
            pair.touch();
        }
    }

    /// The next ADU from the plain side (the master, or the slave); None when the stream ended
    /// cleanly.
    async fn next_plain<R: AsyncRead + Unpin>(&self, r: &mut R, buf: &mut Vec<u8>) -> Result<Option<Vec<u8>>, String> {
        match adu::read_adu(r, buf).await {
            Ok(true) => Ok(Some(buf.clone())),
            Ok(false) => Ok(None),
            Err(AduError::Io(e)) => Err(e),
            Err(e) => {
                self.stats.malformed.fetch_add(1, Ordering::Relaxed);
                Err(format!("malformed ADU: {e}"))
            }
        }
    }

    /// One hop record into `rec`: its length; None when the stream ended cleanly between records.
    async fn read_record<R: AsyncRead + Unpin>(&self, r: &mut R, rec: &mut [u8]) -> Result<Option<usize>, String> {
        let mut len = [0u8; 2];
        match r.read_exact(&mut len).await {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
            Err(e) => return Err(format!("hop read: {e}")),
        }
        let n = u16::from_be_bytes(len) as usize;
        if n > MAX_RECORD {
            self.stats.malformed.fetch_add(1, Ordering::Relaxed);
            return Err(format!("hop record of {n} B is over the {MAX_RECORD} B bound"));
        }
        r.read_exact(&mut rec[..n]).await.map_err(|e| format!("hop record cut short: {e}"))?;
        Ok(Some(n))
    }

    /// Count-free log of a refused hop frame: at most one line a second, since a keyless sender
    /// can send frames as fast as it likes.
    fn refused(&self, why: &str) {
        match self.frames_refused.due() {
            Some(1) => self.say(&format!("refused a hop frame ({why})")),
            Some(n) => self.say(&format!("refused a hop frame ({why}); {n} frames refused since the last such line")),
            None => {}
        }
    }

    /// The next hop record that passes the receiving checks, opened: one ADU. Refused frames
    /// are counted, logged and dropped (the peer sees no answer, never altered data); None when
    /// the stream ended cleanly between records.
    async fn next_from_hop<R: AsyncRead + Unpin>(
        &self,
        r: &mut R,
        rec: &mut [u8],
        conn: Option<&Mutex<Conn>>,
    ) -> Result<Option<Vec<u8>>, String> {
        loop {
            let Some(n) = self.read_record(r, rec).await? else { return Ok(None) };
            let adu = match (&self.hop, conn) {
                (Hop::Sealed { receiver, .. }, Some(conn)) => {
                    let (id, last) = {
                        let c = conn.lock().unwrap_or_else(|e| e.into_inner());
                        (c.id, c.last_in)
                    };
                    let opened = receiver.lock().unwrap_or_else(|e| e.into_inner()).open(
                        &rec[..n],
                        &id,
                        false,
                        Some(last),
                        &self.stats.out_of_handshake,
                    );
                    match opened {
                        Ok((h, adu)) => {
                            conn.lock().unwrap_or_else(|e| e.into_inner()).last_in = h.counter;
                            if let Err(e) = adu::check(&adu) {
                                self.stats.malformed.fetch_add(1, Ordering::Relaxed);
                                return Err(format!("hop record is not one ADU: {e}"));
                            }
                            match self.admit_opened(&h, &adu, conn).await? {
                                true => adu,
                                false => continue,
                            }
                        }
                        Err(why) => {
                            self.refused(why);
                            continue;
                        }
                    }
                }
                _ => {
                    let adu = rec[..n].to_vec();
                    if let Err(e) = adu::check(&adu) {
                        self.stats.malformed.fetch_add(1, Ordering::Relaxed);
                        return Err(format!("hop record is not one ADU: {e}"));
                    }
                    adu
                }
            };
            return Ok(Some(adu));
        }
    }

    /// The rules after the tag for an authentic ADU. Slave side: a write older than the write
    /// deadline is refused, and a write's counter is on disk before the slave sees the write;
    /// the request joins the ones in flight. Master side: the response must name a request in
    /// flight with its transaction id. Ok(false): refused (counted, logged).
    async fn admit_opened(&self, h: &ModbusHeader, adu: &[u8], conn: &Mutex<Conn>) -> Result<bool, String> {
        let Hop::Sealed { receiver, .. } = &self.hop else { return Ok(true) };
        match self.side {
            Side::Slave => {
                if hop::is_write(adu) {
                    let deadline = receiver.lock().unwrap_or_else(|e| e.into_inner()).write_deadline;
                    let here = millis(conn.lock().unwrap_or_else(|e| e.into_inner()).t0.elapsed());
                    // The master's clock started later than ours (after the reply's transit),
                    // so `here - ext` is at least the write's real age: a delay is never hidden.
                    let age = here.saturating_sub(h.ext);
                    if age > millis(deadline) {
                        self.stats.stale_writes.fetch_add(1, Ordering::Relaxed);
                        self.say(&format!(
                            "refused a write (function {}, counter {}): {age} ms old by the handshake clocks, over \
                             the {} ms --write-deadline",
                            adu[adu::MBAP_LEN],
                            h.counter,
                            millis(deadline)
                        ));
                        return Ok(false);
                    }
                    // Durable before the slave acts: a crash right after the write leaves its
                    // counter in the replay state.
                    self.save_floor().await?;
                }
                conn.lock().unwrap_or_else(|e| e.into_inner()).push(h.counter, tid(adu));
                Ok(true)
            }
            Side::Master => {
                let bound = conn.lock().unwrap_or_else(|e| e.into_inner()).take(|&(c, t)| c == h.ext && t == tid(adu));
                if bound.is_none() {
                    self.stats.unbound.fetch_add(1, Ordering::Relaxed);
                    self.refused("a response bound to no request in flight on this connection");
                    return Ok(false);
                }
                Ok(true)
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
