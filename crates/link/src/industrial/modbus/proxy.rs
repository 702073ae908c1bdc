//! The bump-in-the-wire pair: a proxy beside the master and one beside the slave.
//!
//! ```text
//! master ──TCP (plain ADUs)── proxy --side master ══hop══ proxy --side slave ──TCP (plain ADUs)── slave
//! ```
//! Per master connection the master-side proxy opens one hop connection, and the slave-side
//! proxy one connection to the slave — each only once the first record is in hand: the first
//! ADU on the master side, the first *authenticated* hop frame on the slave side, so a host
//! without the key never makes the slave-side proxy open a connection to the slave. Every
//! connection is bounded ([`Limits`]): a deadline for that first record, an idle timeout, and a
//! cap on open connections per peer address and overall; refusals are counted. On the hop every
//! ADU travels as one record: a 2-byte big-endian length, then the link frame (docs/link.md
//! "Frame format") whose plaintext is the whole ADU — or, on a plain hop (the measurement's
//! baseline), the ADU itself.
//!
//! Each direction is one link device with its own id and counter space: master → slave is
//! device `DEVICE_BASE + 2·pair`, slave → master device `DEVICE_BASE + 2·pair + 1`. A proxy seals with the counters of its
//! sending device (durable counter state, so a restarted proxy never repeats a nonce) and opens
//! with the gateway's checks for its receiving device (cipher, replay window, tag): a forged,
//! replayed or too old frame is refused, counted and dropped, so the master times out instead of
//! reading wrong data. A malformed ADU from a plain peer, or a hop record over the bound, closes
//! that connection with a logged reason.
use crate::wire::frame::Proto;
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};

use crate::device::counter::{CounterStore, DeviceCounter};
use crate::gateway::checks::{Gateway, Refusal, Tally};
use crate::industrial::modbus::adu::{self, AduError, MAX_ADU};
use crate::industrial::modbus::floor::{Floor, SAVE_EVERY};
use crate::wire::frame::{Header, HEADER_LEN};
use crate::wire::keys::KeySource;
use crate::wire::suite::{Keyed, Suite};

/// Largest hop record: a 260-byte ADU, the frame header and the longest tag of any link suite.
pub const MAX_RECORD: usize = MAX_ADU + HEADER_LEN + 32;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// Beside the master: accepts the master's connections, forwards to the slave-side proxy.
    Master,
    /// Beside the slave: accepts hop connections, forwards to the real slave.
    Slave,
}

impl Side {
    pub fn parse(s: &str) -> Result<Side, String> {
        match s {
            "master" => Ok(Side::Master),
            "slave" => Ok(Side::Slave),
            _ => Err(format!("--side: '{}' is not master or slave", crate::input::shown(s))),
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Side::Master => "master",
            Side::Slave => "slave",
        }
    }
}

/// The hop's devices have their own id range, above every sensor id `lwcbench link` gives
/// (0..100,000) and every GOOSE APPID (16 bits): a master key shared with a link session or a
/// GOOSE publisher never seals the same (device, counter) — the same nonce — twice, even when
/// the proxy keeps its counters in another state file.
pub const DEVICE_BASE: u32 = 0x4D42_0000;
/// The largest `--pair` whose two devices fit in a u32 above [`DEVICE_BASE`].
pub const MAX_PAIR: u32 = (u32::MAX - DEVICE_BASE) / 2;

/// (sending device, receiving device) of `side` in pair `pair`.
pub fn devices(pair: u32, side: Side) -> Result<(u32, u32), String> {
    if pair > MAX_PAIR {
        return Err(format!("--pair: {pair} is above {MAX_PAIR}"));
    }
    let (to_slave, to_master) = (DEVICE_BASE + 2 * pair, DEVICE_BASE + 2 * pair + 1);
    Ok(match side {
        Side::Master => (to_slave, to_master),
        Side::Slave => (to_master, to_slave),
    })
}

/// The sending half of a sealed hop: its device, key and counters.
pub struct Sender {
    keyed: Keyed,
    device: u32,
    counter: DeviceCounter,
}

/// How the hop is protected.
#[derive(Clone)]
pub enum Hop {
    /// ADUs as they are (the same proxies and path without the cipher).
    Plain,
    /// Sealed frames; the sender and the receiver's checks are shared by every connection.
    Sealed { sender: Arc<Mutex<Sender>>, receiver: Arc<Mutex<Receiver>> },
}

/// The receiving half of a sealed hop: the gateway's checks, and the floor below which every
/// counter was accepted before this process started.
pub struct Receiver {
    gw: Gateway,
    device: u32,
    floor: Option<u64>,
    top: Option<u64>,
    file: Option<Arc<Mutex<Floor>>>,
}

impl Receiver {
    /// Check and open one hop frame; the reason of a refusal for the log.
    fn open(&mut self, frame: &[u8]) -> Result<Vec<u8>, &'static str> {
        if let (Some(floor), Ok(h)) = (self.floor, Header::parse(frame)) {
            if h.device == self.device && h.counter <= floor {
                self.gw.tally.refused[Refusal::Replay as usize] += 1;
                return Err("replay: a counter accepted before this proxy started");
            }
        }
        let o = self.gw.open(frame).map_err(Refusal::as_str)?;
        self.top = self.top.max(Some(o.counter));
        Ok(o.reading)
    }
}

impl Hop {
    /// A sealed hop for `side` of `pair`: keys from `master`, counters from `store`, the replay
    /// floor from `replay_state` (none: the window alone, for one process's lifetime).
    /// `--max-failed-tags` of the receiving direction (a plain hop has no tags).
    pub fn set_max_failed_tags(&self, n: u64) -> Result<(), String> {
        match self {
            Hop::Plain => Ok(()),
            Hop::Sealed { receiver, .. } => {
                receiver.lock().unwrap_or_else(|e| e.into_inner()).gw.set_max_failed_tags(n)
            }
        }
    }

    pub fn sealed(
        suite: &Suite,
        key: &impl KeySource,
        store: &CounterStore,
        pair: u32,
        side: Side,
        window: u64,
        replay_state: Option<&Path>,
    ) -> Result<Hop, String> {
        let (send, recv) = devices(pair, side)?;
        let (send_proto, recv_proto) = match side {
            Side::Master => (Proto::ModbusToSlave, Proto::ModbusToMaster),
            Side::Slave => (Proto::ModbusToMaster, Proto::ModbusToSlave),
        };
        // Both directions' keys come from the pair's key (the device id of a Modbus key is the pair).
        let keyed = Keyed::derived(suite, key, send_proto, pair, false)?;
        let opener = Keyed::derived(suite, key, recv_proto, pair, false)?;
        let counter = DeviceCounter::new(store, send)?;
        let gw = Gateway::with_keyed(suite, recv_proto, vec![(recv, opener)], window, false)?;
        let (file, floor) = match replay_state {
            Some(p) => {
                let (f, floor) = Floor::open(p, key, recv)?;
                (Some(Arc::new(Mutex::new(f))), floor)
            }
            None => (None, None),
        };
        Ok(Hop::Sealed {
            sender: Arc::new(Mutex::new(Sender { keyed, device: send, counter })),
            receiver: Arc::new(Mutex::new(Receiver { gw, device: recv, floor, top: floor, file })),
        })
    }
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
             idle {}, frames refused {}",
            self.connections,
            self.upstream,
            self.sent,
            self.delivered,
            self.malformed,
            self.refused_per_peer,
            self.refused_overall,
            self.handshake_timeouts,
            self.idle_timeouts,
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
    /// the replay floor is saved.
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
        let (mut acc_r, acc_w) = accepted.into_split();
        // Nothing goes to the peer before the first record is in hand: a connection that never
        // sends one (or, on the slave side, never an authenticated one) holds no connection to
        // the slave.
        let first = match self.side {
            Side::Master => {
                let mut buf = Vec::with_capacity(MAX_ADU);
                match tokio::time::timeout(self.limits.idle, self.next_record(&mut acc_r, &mut buf)).await {
                    Ok(r) => r?,
                    Err(_) => {
                        self.stats.idle_timeouts.fetch_add(1, Ordering::Relaxed);
                        return Err(format!("idle: no ADU within {:?}", self.limits.idle));
                    }
                }
            }
            Side::Slave => {
                let mut rec = vec![0u8; MAX_RECORD];
                match tokio::time::timeout(self.limits.handshake, self.next_adu(&mut acc_r, &mut rec)).await {
                    Ok(r) => r?,
                    Err(_) => {
                        self.stats.handshake_timeouts.fetch_add(1, Ordering::Relaxed);
                        return Err(format!("no authenticated hop frame within {:?}", self.limits.handshake));
                    }
                }
            }
        };
        let Some(first) = first else { return Ok(()) };
        let other = match tokio::time::timeout(self.limits.handshake, TcpStream::connect(self.peer)).await {
            Ok(Ok(s)) => s,
            Ok(Err(e)) => return Err(format!("cannot connect to {}: {e}", self.peer)),
            Err(_) => return Err(format!("cannot connect to {} within {:?}", self.peer, self.limits.handshake)),
        };
        self.stats.upstream.fetch_add(1, Ordering::Relaxed);
        let _ = other.set_nodelay(true);
        let (oth_r, oth_w) = other.into_split();
        let (mut plain_r, mut plain_w, mut hop_r, mut hop_w, to_hop, to_plain) = match self.side {
            Side::Master => (acc_r, acc_w, oth_r, oth_w, Some(first), None),
            Side::Slave => (oth_r, oth_w, acc_r, acc_w, None, Some(first)),
        };
        // Nanoseconds from `start` to the last ADU forwarded either way.
        let (start, last) = (Instant::now(), AtomicU64::new(0));
        // Either direction ending ends the connection pair (both sockets are dropped).
        let end = tokio::select! {
            r = self.outbound(&mut plain_r, &mut hop_w, to_hop, start, &last) => r.map_err(End::Failed),
            r = self.inbound(&mut hop_r, &mut plain_w, to_plain, start, &last) => r.map_err(End::Failed),
            _ = self.idle(start, &last) => Err(End::Idle),
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

    /// Completes once nothing was forwarded for `limits.idle`. A write stuck on a peer that
    /// does not read counts as nothing forwarded.
    async fn idle(&self, start: Instant, last: &AtomicU64) {
        loop {
            let due = start + Duration::from_nanos(last.load(Ordering::Relaxed)) + self.limits.idle;
            if Instant::now() >= due {
                return;
            }
            tokio::time::sleep_until(due.into()).await;
        }
    }

    /// Plain side → hop: one ADU at a time, bounded, sealed; `first` (already sealed) goes out
    /// before the rest.
    async fn outbound(
        &self,
        r: &mut OwnedReadHalf,
        w: &mut OwnedWriteHalf,
        first: Option<Vec<u8>>,
        start: Instant,
        last: &AtomicU64,
    ) -> Result<(), String> {
        let mut buf = Vec::with_capacity(MAX_ADU);
        let mut next = first;
        loop {
            let rec = match next.take() {
                Some(rec) => rec,
                None => match self.next_record(r, &mut buf).await? {
                    Some(rec) => rec,
                    None => return Ok(()),
                },
            };
            w.write_all(&rec).await.map_err(|e| format!("hop write: {e}"))?;
            self.stats.sent.fetch_add(1, Ordering::Relaxed);
            touch(start, last);
        }
    }

    /// Hop → plain side: one record at a time, bounded, checked and opened; `first` (already
    /// opened) goes out before the rest.
    async fn inbound(
        &self,
        r: &mut OwnedReadHalf,
        w: &mut OwnedWriteHalf,
        first: Option<Vec<u8>>,
        start: Instant,
        last: &AtomicU64,
    ) -> Result<(), String> {
        let mut rec = vec![0u8; MAX_RECORD];
        let mut next = first;
        loop {
            let adu = match next.take() {
                Some(adu) => adu,
                None => match self.next_adu(r, &mut rec).await? {
                    Some(adu) => adu,
                    None => return Ok(()),
                },
            };
            w.write_all(&adu).await.map_err(|e| format!("write: {e}"))?;
            self.stats.delivered.fetch_add(1, Ordering::Relaxed);
            touch(start, last);
        }
    }

    /// The next ADU from the plain side as one hop record (length and frame, or the ADU on a
    /// plain hop); None when the stream ended cleanly.
    async fn next_record<R: AsyncRead + Unpin>(&self, r: &mut R, buf: &mut Vec<u8>) -> Result<Option<Vec<u8>>, String> {
        match adu::read_adu(r, buf).await {
            Ok(true) => {}
            Ok(false) => return Ok(None),
            Err(AduError::Io(e)) => return Err(e),
            Err(e) => {
                self.stats.malformed.fetch_add(1, Ordering::Relaxed);
                return Err(format!("malformed ADU: {e}"));
            }
        }
        let mut rec = Vec::with_capacity(MAX_RECORD + 2);
        rec.extend_from_slice(&[0, 0]);
        match &self.hop {
            Hop::Plain => rec.extend_from_slice(buf),
            Hop::Sealed { sender, .. } => {
                let mut frame = Vec::with_capacity(MAX_RECORD);
                {
                    let mut s = sender.lock().unwrap_or_else(|e| e.into_inner());
                    let c = s.counter.take()?;
                    let device = s.device;
                    s.keyed.seal(device, c, buf, &mut frame)?;
                }
                rec.extend_from_slice(&frame);
            }
        }
        let n = (rec.len() - 2) as u16;
        rec[..2].copy_from_slice(&n.to_be_bytes());
        Ok(Some(rec))
    }

    /// The next hop record that passes the receiving checks, opened: one ADU. Refused frames
    /// are counted, logged and skipped; None when the stream ended cleanly between records.
    async fn next_adu<R: AsyncRead + Unpin>(&self, r: &mut R, rec: &mut [u8]) -> Result<Option<Vec<u8>>, String> {
        loop {
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
            let adu = match &self.hop {
                Hop::Plain => rec[..n].to_vec(),
                Hop::Sealed { receiver, .. } => {
                    let opened = receiver.lock().unwrap_or_else(|e| e.into_inner()).open(&rec[..n]);
                    match opened {
                        Ok(adu) => adu,
                        Err(why) => {
                            // Dropped: the peer sees no answer (a timeout), never altered data. A
                            // keyless sender can send frames as fast as it likes: one line a second.
                            match self.frames_refused.due() {
                                Some(1) => self.say(&format!("refused a hop frame ({why})")),
                                Some(n) => self.say(&format!(
                                    "refused a hop frame ({why}); {n} frames refused since the last such line"
                                )),
                                None => {}
                            }
                            continue;
                        }
                    }
                }
            };
            if let Err(e) = adu::check(&adu) {
                self.stats.malformed.fetch_add(1, Ordering::Relaxed);
                return Err(format!("hop record is not one ADU: {e}"));
            }
            return Ok(Some(adu));
        }
    }
}

/// Note that an ADU was forwarded now.
fn touch(start: Instant, last: &AtomicU64) {
    last.store(start.elapsed().as_nanos() as u64, Ordering::Relaxed);
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
        refused: match hop {
            Hop::Plain => Tally::default(),
            Hop::Sealed { receiver, .. } => receiver.lock().unwrap_or_else(|e| e.into_inner()).gw.tally.clone(),
        },
    }
}
