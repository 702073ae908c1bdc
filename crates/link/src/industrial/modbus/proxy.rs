//! The bump-in-the-wire pair: a proxy beside the master and one beside the slave.
//!
//! ```text
//! master ──TCP (plain ADUs)── proxy --side master ══hop══ proxy --side slave ──TCP (plain ADUs)── slave
//! ```
//! Per master connection the master-side proxy opens one hop connection, and the slave-side
//! proxy one connection to the slave. On the hop every ADU travels as one record: a 2-byte
//! big-endian length, then the link frame (docs/link.md "Frame format") whose plaintext is the
//! whole ADU — or, on a plain hop (the measurement's baseline), the ADU itself.
//!
//! Each direction is one link device with its own id and counter space: master → slave is
//! device `DEVICE_BASE + 2·pair`, slave → master device `DEVICE_BASE + 2·pair + 1`. A proxy seals with the counters of its
//! sending device (durable counter state, so a restarted proxy never repeats a nonce) and opens
//! with the gateway's checks for its receiving device (cipher, replay window, tag): a forged,
//! replayed or too old frame is refused, counted and dropped, so the master times out instead of
//! reading wrong data. A malformed ADU from a plain peer, or a hop record over the bound, closes
//! that connection with a logged reason.
use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use crate::device::counter::{CounterStore, DeviceCounter};
use crate::gateway::checks::{Gateway, Refusal, Tally};
use crate::industrial::modbus::adu::{self, AduError, MAX_ADU};
use crate::industrial::modbus::floor::{Floor, SAVE_EVERY};
use crate::wire::frame::{Header, HEADER_LEN};
use crate::wire::keys::MasterKey;
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
    pub fn sealed(
        suite: &Suite,
        master: &MasterKey,
        store: &CounterStore,
        pair: u32,
        side: Side,
        window: u64,
        replay_state: Option<&Path>,
    ) -> Result<Hop, String> {
        let (send, recv) = devices(pair, side)?;
        let key = master.device_key(suite.id, send, suite.key_len());
        let keyed = Keyed::new(suite, &key, false)?;
        let counter = DeviceCounter::new(store, send)?;
        let gw = Gateway::new(suite, master, [recv], window, false)?;
        let (file, floor) = match replay_state {
            Some(p) => {
                let (f, floor) = Floor::open(p, master, recv)?;
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
}

/// A snapshot of [`Stats`] and the receiver's refusals.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    pub connections: u64,
    pub sent: u64,
    pub delivered: u64,
    pub malformed: u64,
    pub refused: Tally,
}

impl Report {
    /// One line: what was forwarded and every refusal by reason.
    pub fn line(&self) -> String {
        let mut s = format!(
            "connections {}, ADUs sealed and sent {}, frames opened and delivered {}, connections closed malformed {}, frames refused {}",
            self.connections,
            self.sent,
            self.delivered,
            self.malformed,
            self.refused.refused_total()
        );
        for r in Refusal::ALL {
            s += &format!(", {} {}", r.as_str(), self.refused.count(r));
        }
        s
    }
}

/// One proxy: where it listens, where it forwards, how the hop is protected.
pub struct Proxy {
    pub side: Side,
    pub listener: TcpListener,
    pub peer: SocketAddr,
    pub hop: Hop,
    pub stats: Arc<Stats>,
    /// Log line prefix (e.g. "modbus-proxy (master)"); empty = no log lines.
    pub log: String,
}

impl Proxy {
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
            let me = self.clone();
            tokio::spawn(async move {
                if let Err(why) = me.serve(conn).await {
                    me.say(&format!("connection from {from} closed: {why}"));
                }
            });
        }
    }

    fn say(&self, what: &str) {
        if !self.log.is_empty() {
            eprintln!("{}: {what}", self.log);
        }
    }

    async fn serve(&self, accepted: TcpStream) -> Result<(), String> {
        let other = TcpStream::connect(self.peer).await.map_err(|e| format!("cannot connect to {}: {e}", self.peer))?;
        let _ = accepted.set_nodelay(true);
        let _ = other.set_nodelay(true);
        let (plain, hop) = match self.side {
            Side::Master => (accepted, other),
            Side::Slave => (other, accepted),
        };
        let (mut plain_r, mut plain_w) = plain.into_split();
        let (mut hop_r, mut hop_w) = hop.into_split();
        // Either direction ending ends the connection pair (both sockets are dropped).
        tokio::select! {
            r = self.outbound(&mut plain_r, &mut hop_w) => r,
            r = self.inbound(&mut hop_r, &mut plain_w) => r,
        }
    }

    /// Plain side → hop: one ADU at a time, bounded, sealed.
    async fn outbound<R: AsyncRead + Unpin, W: AsyncWrite + Unpin>(&self, r: &mut R, w: &mut W) -> Result<(), String> {
        let mut buf = Vec::with_capacity(MAX_ADU);
        let mut rec = Vec::with_capacity(MAX_RECORD + 2);
        loop {
            match adu::read_adu(r, &mut buf).await {
                Ok(true) => {}
                Ok(false) => return Ok(()),
                Err(AduError::Io(e)) => return Err(e),
                Err(e) => {
                    self.stats.malformed.fetch_add(1, Ordering::Relaxed);
                    return Err(format!("malformed ADU: {e}"));
                }
            }
            rec.clear();
            rec.extend_from_slice(&[0, 0]);
            match &self.hop {
                Hop::Plain => rec.extend_from_slice(&buf),
                Hop::Sealed { sender, .. } => {
                    let mut frame = Vec::with_capacity(MAX_RECORD);
                    {
                        let mut s = sender.lock().unwrap_or_else(|e| e.into_inner());
                        let c = s.counter.take()?;
                        let device = s.device;
                        s.keyed.seal(device, c, &buf, &mut frame)?;
                    }
                    rec.extend_from_slice(&frame);
                }
            }
            let n = (rec.len() - 2) as u16;
            rec[..2].copy_from_slice(&n.to_be_bytes());
            w.write_all(&rec).await.map_err(|e| format!("hop write: {e}"))?;
            self.stats.sent.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Hop → plain side: one record at a time, bounded, checked and opened.
    async fn inbound<R: AsyncRead + Unpin, W: AsyncWrite + Unpin>(&self, r: &mut R, w: &mut W) -> Result<(), String> {
        let mut rec = vec![0u8; MAX_RECORD];
        loop {
            let mut len = [0u8; 2];
            match r.read_exact(&mut len).await {
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(()),
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
                            // Dropped: the peer sees no answer (a timeout), never altered data.
                            self.say(&format!("refused a hop frame ({why})"));
                            continue;
                        }
                    }
                }
            };
            if let Err(e) = adu::check(&adu) {
                self.stats.malformed.fetch_add(1, Ordering::Relaxed);
                return Err(format!("hop record is not one ADU: {e}"));
            }
            w.write_all(&adu).await.map_err(|e| format!("write: {e}"))?;
            self.stats.delivered.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// One proxy as its own process: serve on `listener` (already bound) until SIGTERM/SIGINT;
/// `started` is called with the bound address first. Returns the final tally.
pub fn run_process(
    side: Side,
    listener: std::net::TcpListener,
    peer: SocketAddr,
    hop: Hop,
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
        let p = Arc::new(Proxy { side, listener, peer, hop, stats: Arc::new(Stats::default()), log });
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
        refused: match hop {
            Hop::Plain => Tally::default(),
            Hop::Sealed { receiver, .. } => receiver.lock().unwrap_or_else(|e| e.into_inner()).gw.tally.clone(),
        },
    }
}
