//! GOOSE published over a veth pair between two network namespaces the tool creates, plain and
//! sealed, one frame in flight at a time: publish → accepted latency of each frame.
//!
//! * The publisher (namespace A) and the subscriber (namespace B) are AF_PACKET sockets bound to
//!   the veth end `lwcb0`; the frames are Ethernet multicast to 01-0C-CD-01-00-01.
//! * Both veth ends get MTU [`VETH_MTU`]: the 1522-B frame carries 1504 B after its tagged
//!   Ethernet header (over the standard 1500) and its sealed form 31 B more.
//! * Plain and sealed frames alternate (frame i plain then sealed, or the other way on odd i), so
//!   both see the same machine state. Latency = accepted − published on one monotonic clock:
//!   published is the moment the application hands over the built frame (sealing, for the sealed
//!   one, is inside); accepted is when the subscriber holds the decoded APDU (sealed: header,
//!   cipher and APPID checked, replay window fresh, tag verified, decrypted, decoded, window
//!   moved). The publisher waits for each acceptance (at most [`WAIT`]) before the next frame, so
//!   no frame queues behind another.
//! * Every accepted APDU is compared with the one published, byte for byte, after the clock stops.
//! * Nonces: the counter of the APPID comes from the durable counter store (a block is recorded
//!   before any of its counters is used), the key from the master key by HKDF per (cipher,
//!   APPID): no (key, nonce) pair repeats across runs, processes or ciphers.
use crate::wire::frame::Proto;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use lwcbench_netimpair::{NetnsPair, Side};
use serde::Serialize;

use crate::clock::now_ns;
use crate::device::counter::{CounterStore, DeviceCounter};
use crate::gateway::replay::ReplayWindow;
use crate::wire::keys::MasterKey;
use crate::wire::suite::{Keyed, Suite};

use super::frame::{decode_apdu, ethertype_payload, pairs_for, Goose, ETHERTYPE_GOOSE, ETH_HEADER};
use super::packet::PacketSocket;
use super::sealed::{seal, Refused, Subscriber};

/// MTU of both veth ends during a run.
pub const VETH_MTU: u32 = 1600;
/// The APPID this tool publishes under.
pub const APPID: u16 = 0x0101;
/// Longest wait for one frame's acceptance before it counts as lost.
pub const WAIT: Duration = Duration::from_millis(500);
/// Frames of each kind published first and not measured (caches, first-use page faults).
pub const WARMUP: usize = 20;
/// Most frames of one run (each kind).
pub const MAX_FRAMES: usize = 1_000_000;
/// Replay window of the subscriber (counters).
pub const WINDOW: u64 = 1024;
/// The path, as the result files name it.
pub const PATH: &str = "veth pair between two network namespaces, AF_PACKET raw sockets, one frame in flight";

const CAP_NET_ADMIN: u32 = 12;
const CAP_NET_RAW: u32 = 13;
const CAP_SYS_ADMIN: u32 = 21;

/// One-line refusal when this process cannot open AF_PACKET sockets or create namespaces.
pub fn check_privileges() -> Result<(), String> {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let caps = status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
        .unwrap_or(0);
    let missing: Vec<&str> =
        [(CAP_NET_RAW, "CAP_NET_RAW"), (CAP_NET_ADMIN, "CAP_NET_ADMIN"), (CAP_SYS_ADMIN, "CAP_SYS_ADMIN")]
            .iter()
            .filter(|(b, _)| caps & (1u64 << *b) == 0)
            .map(|(_, n)| *n)
            .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "link goose needs root: raw Ethernet (AF_PACKET) sockets need CAP_NET_RAW, and the two network namespaces with their veth pair need CAP_SYS_ADMIN and CAP_NET_ADMIN ({} missing); run it as root",
            missing.join(", ")
        ))
    }
}

/// The namespace pair with a publisher socket in A and a subscriber socket in B.
pub struct Veth {
    tx: PacketSocket,
    rx: Arc<PacketSocket>,
    // Declared last: the sockets close before the namespaces go.
    /// The namespace pair (A: publisher, B: subscriber).
    pub pair: NetnsPair,
}

impl Veth {
    /// Create the pair (root needed) with the veth MTU set and both packet sockets open.
    pub fn create() -> Result<Veth, String> {
        check_privileges()?;
        let pair = NetnsPair::create().map_err(|e| e.to_string())?;
        for side in [Side::A, Side::B] {
            let ns = pair.namespace(side).to_string();
            let mtu = VETH_MTU.to_string();
            let o = std::process::Command::new("ip")
                .args(["-n", &ns, "link", "set", lwcbench_netimpair::netns::VETH, "mtu", &mtu])
                .output()
                .map_err(|e| format!("cannot run ip: {e}"))?;
            if !o.status.success() {
                return Err(format!(
                    "ip -n {ns} link set {} mtu {mtu} failed: {}",
                    lwcbench_netimpair::netns::VETH,
                    String::from_utf8_lossy(&o.stderr).trim()
                ));
            }
        }
        let ifname = lwcbench_netimpair::netns::VETH;
        let tx = pair.in_ns(Side::A, || PacketSocket::open(ifname, false)).map_err(|e| e.to_string())??;
        let rx = pair.in_ns(Side::B, || PacketSocket::open(ifname, true)).map_err(|e| e.to_string())??;
        rx.set_timeout(Duration::from_millis(20))?;
        Ok(Veth { tx, rx: Arc::new(rx), pair })
    }
}

/// One run's figures for one cipher and frame size.
#[derive(Clone, Debug, Default, Serialize)]
pub struct GooseRun {
    /// The cipher's name ("plain" for none).
    pub cipher: String,
    /// The plain frame's size in bytes.
    pub bytes: usize,
    /// The sealed frame's size in bytes.
    pub sealed_bytes: usize,
    /// Frames published per path.
    pub frames: usize,
    /// Plain path: from the send to the subscriber's acceptance, per measured frame (ns).
    pub plain_ns: Vec<u64>,
    /// Sealed path: from the seal to the subscriber's acceptance, per measured frame (ns).
    pub sealed_ns: Vec<u64>,
    /// Plain frames never received.
    pub plain_lost: u64,
    /// Sealed frames never accepted.
    pub sealed_lost: u64,
    /// Accepted frames whose APDU differed from the one published.
    pub mismatched: u64,
    /// Plain frames received twice, sealed frames refused by the subscriber (any reason).
    pub plain_duplicates: u64,
    /// Sealed frames the subscriber refused (any reason).
    pub sealed_refused: u64,
    /// The first counter sealed.
    pub first_counter: u64,
    /// The last counter sealed.
    pub last_counter: u64,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Plain,
    Sealed,
}

struct Ack {
    kind: Kind,
    st_num: u64,
    at_ns: u64,
    apdu: Vec<u8>,
}

#[derive(Default)]
struct SubCounts {
    plain_duplicates: u64,
    sealed_refused: u64,
}

fn subscribe(
    rx: &PacketSocket,
    mut sub: Subscriber,
    stop: &AtomicBool,
    acks: mpsc::Sender<Ack>,
) -> Result<(SubCounts, Option<u64>), String> {
    let mut buf = vec![0u8; 65_536];
    let mut seen_plain = std::collections::HashSet::new();
    let mut c = SubCounts::default();
    while !stop.load(Ordering::Relaxed) {
        let Some(n) = rx.recv(&mut buf)? else { continue };
        let f = &buf[..n.min(buf.len())];
        let Some((et, payload)) = ethertype_payload(f) else { continue };
        if et == ETHERTYPE_GOOSE {
            let Ok(d) = decode_apdu(payload) else { continue };
            let at_ns = now_ns();
            if d.appid != APPID || !seen_plain.insert(d.st_num) {
                c.plain_duplicates += u64::from(d.appid == APPID);
                continue;
            }
            let _ = acks.send(Ack { kind: Kind::Plain, st_num: d.st_num, at_ns, apdu: payload.to_vec() });
        } else {
            match sub.accept(f) {
                Ok((apdu, d)) => {
                    let at_ns = now_ns();
                    let _ = acks.send(Ack { kind: Kind::Sealed, st_num: d.st_num, at_ns, apdu });
                }
                Err(Refused::Other) => {}
                Err(_) => c.sealed_refused += 1,
            }
        }
    }
    Ok((c, sub.top))
}

/// Publish `frames` GOOSE frames of `size` bytes plain and as many sealed with `suite`.
pub fn run(
    v: &Veth,
    suite: &Suite,
    master: &MasterKey,
    store: &CounterStore,
    size: usize,
    frames: usize,
    accepted: Option<&std::path::Path>,
) -> Result<GooseRun, String> {
    if frames == 0 || frames > MAX_FRAMES {
        return Err(format!("--frames: {frames} is not in 1..={MAX_FRAMES}"));
    }
    let key = master.cipher_key(Proto::Goose, APPID as u32, suite.id, suite.key_len());
    let mut k = Keyed::new(suite, &key, Proto::Goose, false)?;
    // The key's accepted marks: a restarted subscriber refuses what an earlier run accepted.
    let fp = master.fingerprint();
    let floor = match accepted {
        Some(p) => {
            crate::gateway::accepted::read(p, Some(&fp))?.and_then(|m| m.get(&(Proto::Goose, APPID as u32)).copied())
        }
        None => None,
    };
    let sub = Subscriber::new(Keyed::new(suite, &key, Proto::Goose, false)?, APPID, ReplayWindow::new(WINDOW)?, floor);
    drop(key);
    let mut counter = DeviceCounter::new(store, APPID as u32)?;
    let stop = Arc::new(AtomicBool::new(false));
    let (tx_ack, rx_ack) = mpsc::channel::<Ack>();
    let rx = v.rx.clone();
    let stop2 = stop.clone();
    let handle = std::thread::Builder::new()
        .name("goose-subscriber".into())
        .spawn(move || subscribe(&rx, sub, &stop2, tx_ack))
        .map_err(|e| format!("cannot start the subscriber thread: {e}"))?;
    let mut r = GooseRun { cipher: suite.name(), bytes: size, frames, ..Default::default() };
    let (mut out, mut body) = (Vec::with_capacity(size + 64), Vec::with_capacity(size + 64));
    let mut first_counter = None;
    let result = (|| -> Result<(), String> {
        for i in 0..WARMUP + frames {
            // a stop signal ends the run here; the caller's Veth then removes the namespaces
            super::stop::check()?;
            let st_num = i as u64 + 1;
            let plain = Goose::trip(APPID, st_num as u32, 0, pairs_for(size)).frame(size)?;
            let order = if i % 2 == 0 { [Kind::Plain, Kind::Sealed] } else { [Kind::Sealed, Kind::Plain] };
            for kind in order {
                let t0 = now_ns();
                match kind {
                    Kind::Plain => v.tx.send(&plain)?,
                    Kind::Sealed => {
                        let c = counter.take()?;
                        first_counter.get_or_insert(c);
                        r.last_counter = c;
                        seal(&mut k, c, &plain, &mut out, &mut body)?;
                        v.tx.send(&out)?;
                    }
                }
                let deadline = std::time::Instant::now() + WAIT;
                let ack = loop {
                    let left = deadline.saturating_duration_since(std::time::Instant::now());
                    match rx_ack.recv_timeout(left) {
                        Ok(a) if a.kind == kind && a.st_num == st_num => break Some(a),
                        Ok(_) => continue, // a late acceptance of an earlier frame
                        Err(mpsc::RecvTimeoutError::Timeout) => break None,
                        Err(mpsc::RecvTimeoutError::Disconnected) => {
                            return Err("the GOOSE subscriber stopped".into());
                        }
                    }
                };
                let measured = i >= WARMUP;
                match ack {
                    Some(a) => {
                        if a.apdu != plain[ETH_HEADER..] {
                            r.mismatched += 1;
                        }
                        if measured {
                            let ns = a.at_ns.saturating_sub(t0);
                            match kind {
                                Kind::Plain => r.plain_ns.push(ns),
                                Kind::Sealed => r.sealed_ns.push(ns),
                            }
                        }
                    }
                    None if measured => match kind {
                        Kind::Plain => r.plain_lost += 1,
                        Kind::Sealed => r.sealed_lost += 1,
                    },
                    None => {}
                }
                if kind == Kind::Sealed {
                    r.sealed_bytes = out.len();
                }
            }
        }
        Ok(())
    })();
    stop.store(true, Ordering::Relaxed);
    let (counts, top) = handle.join().map_err(|_| "the GOOSE subscriber panicked".to_string())??;
    // The mark goes up before anything else can fail: what was accepted stays refused later.
    if let (Some(p), Some(top)) = (accepted, top) {
        let mut k = crate::gateway::accepted::Keeper::new(p, &fp);
        k.note(Proto::Goose, APPID as u32, top);
        k.flush()?;
    }
    result?;
    r.first_counter = first_counter.unwrap_or(0);
    r.plain_duplicates = counts.plain_duplicates;
    r.sealed_refused = counts.sealed_refused;
    Ok(r)
}
