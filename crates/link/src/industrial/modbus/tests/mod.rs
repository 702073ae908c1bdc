//! The proxy pair against real peers: tokio-modbus end to end, forged / replayed / reordered
//! hop frames, malformed ADUs, and counters across a restart.
//!
//! Expected register values are the slave's pattern (register i holds 7i + 3), computed here on
//! their own; expected verdicts follow the window rule of docs/link.md by hand.
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use crate::device::counter::CounterStore;
use crate::gateway::checks::Refusal;
use crate::industrial::modbus::floor::Floor;
use crate::industrial::modbus::hop::{self, ModbusHeader, FLAG_HANDSHAKE, MODBUS_HEADER_LEN};
use crate::industrial::modbus::measure::{self, Options};
use crate::industrial::modbus::peers::{self, Cycle, Registers};
use crate::industrial::modbus::proxy::{Hop, Limits, Proxy, Side};
use crate::wire::frame::{Proto, AT_COUNTER};
use crate::wire::keys::{KeySource, MasterKey};
use crate::wire::suite::{self, Keyed};

mod binding;
mod connections;
mod end_to_end;
mod hand;
mod measuring;

const T: Duration = Duration::from_secs(5);

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()
}

fn pattern(i: usize) -> u16 {
    (i as u16).wrapping_mul(7).wrapping_add(3)
}

async fn bind() -> (TcpListener, SocketAddr) {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let a = l.local_addr().unwrap();
    (l, a)
}

/// A proxy on a fresh loopback port, serving until the test ends.
async fn proxy(side: Side, peer: SocketAddr, hop: Hop) -> (SocketAddr, Arc<Proxy>) {
    proxy_with(side, peer, hop, Limits::default()).await
}

async fn proxy_with(side: Side, peer: SocketAddr, hop: Hop, limits: Limits) -> (SocketAddr, Arc<Proxy>) {
    let (listener, addr) = bind().await;
    let p = Arc::new(Proxy::new(side, listener, peer, hop, limits, String::new()));
    tokio::spawn(p.clone().run(std::future::pending()));
    (addr, p)
}

async fn slave() -> (SocketAddr, Registers) {
    let (l, a) = bind().await;
    let regs = Registers::patterned();
    tokio::spawn(peers::serve_slave(l, regs.clone(), Box::pin(std::future::pending())));
    (a, regs)
}

/// Read holding registers request by hand: transaction `tid`, unit 1, function 3, start, quantity.
fn read_request(tid: u16, start: u16, n: u16) -> Vec<u8> {
    let mut v = tid.to_be_bytes().to_vec();
    v.extend_from_slice(&[0, 0, 0, 6, 1, 3]);
    v.extend_from_slice(&start.to_be_bytes());
    v.extend_from_slice(&n.to_be_bytes());
    v
}

/// The response the slave must give: MBAP (length 3 + 2n), function 3, byte count, values.
fn read_response(tid: u16, start: u16, n: u16) -> Vec<u8> {
    let mut v = tid.to_be_bytes().to_vec();
    v.extend_from_slice(&[0, 0]);
    v.extend_from_slice(&(3 + 2 * n).to_be_bytes());
    v.extend_from_slice(&[1, 3, (2 * n) as u8]);
    for i in start..start + n {
        v.extend_from_slice(&pattern(i as usize).to_be_bytes());
    }
    v
}

async fn send_record(s: &mut TcpStream, frame: &[u8]) {
    let mut r = (frame.len() as u16).to_be_bytes().to_vec();
    r.extend_from_slice(frame);
    s.write_all(&r).await.unwrap();
}

/// The next hop record within `wait`, or None.
async fn recv_record(s: &mut TcpStream, wait: Duration) -> Option<Vec<u8>> {
    tokio::time::timeout(wait, async {
        let mut len = [0u8; 2];
        s.read_exact(&mut len).await.ok()?;
        let mut f = vec![0u8; u16::from_be_bytes(len) as usize];
        s.read_exact(&mut f).await.ok()?;
        Some(f)
    })
    .await
    .ok()
    .flatten()
}

/// A stand-in slave that only counts the connections made to it and keeps them open; what the
/// first one receives is sent to `first`.
async fn counting_slave() -> (SocketAddr, Arc<std::sync::atomic::AtomicUsize>, tokio::sync::mpsc::Receiver<Vec<u8>>) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let (l, a) = bind().await;
    let accepted = Arc::new(AtomicUsize::new(0));
    let (tx, rx) = tokio::sync::mpsc::channel(8);
    let n = accepted.clone();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((mut s, _)) = l.accept().await {
            n.fetch_add(1, Ordering::SeqCst);
            let mut b = vec![0u8; 12];
            if s.read_exact(&mut b).await.is_ok() {
                let _ = tx.send(b).await;
            }
            held.push(s);
        }
    });
    (a, accepted, rx)
}

/// A sealed hop for `side` of pair 0 with its own counter state in `d`.
fn sealed_hop(d: &std::path::Path, master: &MasterKey, side: Side) -> Hop {
    let s = suite::find("Ascon-AEAD128").unwrap();
    let store = CounterStore::open(&d.join(format!("ctr-{}", side.name())), 64, master).unwrap();
    Hop::sealed(&s, master, &store, 0, side, 1024, None).unwrap()
}

/// A hello of pair 0's master → slave device sealed with `master`, counter `c`.
fn hello_frame(master: &MasterKey, c: u64) -> Vec<u8> {
    let (mut req, _) = HandMaster::keys(master);
    let h = m2s(req.suite.id, FLAG_HANDSHAKE, c, 0);
    let mut f = Vec::new();
    hop::seal(&mut req, &h, &[], &hop::handshake_body(&[1; 16], None), &mut f).unwrap();
    f
}

/// True when the peer closed `s` (EOF or reset) within `wait`; false when it is still open.
async fn closed_within(s: &mut TcpStream, wait: Duration) -> bool {
    let mut b = [0u8; 64];
    matches!(tokio::time::timeout(wait, s.read(&mut b)).await, Ok(Ok(0) | Err(_)))
}

/// A TCP connection to `to` from the loopback address `from` (127.0.0.x: another peer).
async fn connect_from(from: &str, to: SocketAddr) -> TcpStream {
    let sock = tokio::net::TcpSocket::new_v4().unwrap();
    sock.bind(format!("{from}:0").parse().unwrap()).unwrap();
    sock.connect(to).await.unwrap()
}

async fn read_rec<R: tokio::io::AsyncRead + Unpin>(r: &mut R) -> Option<Vec<u8>> {
    let mut len = [0u8; 2];
    r.read_exact(&mut len).await.ok()?;
    let mut f = vec![0u8; u16::from_be_bytes(len) as usize];
    r.read_exact(&mut f).await.ok()?;
    Some(f)
}

async fn write_rec<W: tokio::io::AsyncWrite + Unpin>(w: &mut W, f: &[u8]) -> std::io::Result<()> {
    let mut r = (f.len() as u16).to_be_bytes().to_vec();
    r.extend_from_slice(f);
    w.write_all(&r).await
}

/// Write single register (function 6) by hand: transaction `tid`, unit 1, `addr`, `value`; the
/// slave's answer echoes the 12 bytes (Modbus Application Protocol v1.1b3 §6.6).
fn write_request(tid: u16, addr: u16, value: u16) -> Vec<u8> {
    let mut v = tid.to_be_bytes().to_vec();
    v.extend_from_slice(&[0, 0, 0, 6, 1, 6]);
    v.extend_from_slice(&addr.to_be_bytes());
    v.extend_from_slice(&value.to_be_bytes());
    v
}

/// Read exactly `n` bytes from the master connection within `wait`, or None.
async fn answer(m: &mut TcpStream, n: usize, wait: Duration) -> Option<Vec<u8>> {
    tokio::time::timeout(wait, async {
        let mut b = vec![0u8; n];
        m.read_exact(&mut b).await.ok()?;
        Some(b)
    })
    .await
    .ok()
    .flatten()
}

/// The replay state file of `side` of pair 0 beside `d`, as pairing leaves it.
fn replay_file(d: &std::path::Path, master: &MasterKey, side: Side) -> std::path::PathBuf {
    let p = d.join(format!("replay-{}", side.name()));
    if !p.exists() {
        Floor::create(&p, master, crate::industrial::modbus::proxy::devices(0, side).unwrap().1).unwrap();
    }
    p
}

/// The header of a pair 0 master → slave frame (type 3, device 0x4D420000).
fn m2s(cipher: u8, flags: u8, counter: u64, ext: u64) -> ModbusHeader {
    ModbusHeader { proto: Proto::ModbusToSlave, cipher, flags, device: 0x4D42_0000, counter, ext }
}

/// The header of a pair 0 slave → master frame (type 4, device 0x4D420001).
fn s2m(cipher: u8, flags: u8, counter: u64, ext: u64) -> ModbusHeader {
    ModbusHeader { proto: Proto::ModbusToMaster, cipher, flags, device: 0x4D42_0001, counter, ext }
}

/// The master-side proxy's half of the hop protocol, by hand (pair 0): the handshake, requests
/// sealed with the connection id, responses opened with it.
struct HandMaster {
    req: Keyed,
    resp: Keyed,
    id: [u8; 32],
    hello: Vec<u8>,
    /// The slave side's accepted mark from its reply.
    peer_top: Option<u64>,
}

impl HandMaster {
    /// (master → slave, slave → master) keys of pair 0 under `key` (a master or pair 0's key),
    /// Ascon-AEAD128.
    fn keys(key: &impl KeySource) -> (Keyed, Keyed) {
        let s = suite::find("Ascon-AEAD128").unwrap();
        let k = |p: Proto| Keyed::derived(&s, key, p, 0, false).unwrap();
        (k(Proto::ModbusToSlave), k(Proto::ModbusToMaster))
    }

    /// Hello with counter `c` and accepted mark `mark`; the reply within T, or None.
    async fn handshake(hop: &mut TcpStream, key: &impl KeySource, c: u64, mark: Option<u64>) -> Option<HandMaster> {
        let (mut req, mut resp) = Self::keys(key);
        let nm: [u8; 16] = rand::random();
        let h = m2s(req.suite.id, FLAG_HANDSHAKE, c, 0);
        let mut hello = Vec::new();
        hop::seal(&mut req, &h, &[], &hop::handshake_body(&nm, mark), &mut hello).unwrap();
        send_record(hop, &hello).await;
        let r = recv_record(hop, T).await?;
        let rh = ModbusHeader::parse(&r).unwrap();
        assert!(rh.is_handshake() && rh.ext == c, "the reply is a handshake frame bound to the hello");
        let (ns, peer_top) = hop::parse_handshake(&hop::open(&mut resp, &rh, &r, &nm).unwrap()).unwrap();
        Some(HandMaster { req, resp, id: hop::conn_id(&nm, &ns), hello, peer_top })
    }

    /// A request frame: counter `c`, `ms` since the handshake.
    fn request(&mut self, c: u64, ms: u64, adu: &[u8]) -> Vec<u8> {
        let h = m2s(self.req.suite.id, 0, c, ms);
        let mut f = Vec::new();
        hop::seal(&mut self.req, &h, &self.id, adu, &mut f).unwrap();
        f
    }

    fn response(&mut self, f: &[u8]) -> Result<(ModbusHeader, Vec<u8>), crate::wire::suite::OpenError> {
        let h = ModbusHeader::parse(f).unwrap();
        Ok((h, hop::open(&mut self.resp, &h, f, &self.id)?))
    }
}

/// The slave-side proxy's half, by hand (pair 0).
struct HandSlave {
    req: Keyed,
    resp: Keyed,
    id: [u8; 32],
    /// The master side's accepted mark from its hello.
    peer_top: Option<u64>,
}

impl HandSlave {
    /// Answer `hello` (already read from `hop`) with a reply of counter `c` and mark `mark`.
    async fn reply(hop: &mut TcpStream, key: &impl KeySource, hello: &[u8], c: u64, mark: Option<u64>) -> HandSlave {
        let (mut req, mut resp) = HandMaster::keys(key);
        let hh = ModbusHeader::parse(hello).unwrap();
        assert!(hh.is_handshake());
        let (nm, peer_top) = hop::parse_handshake(&hop::open(&mut req, &hh, hello, &[]).unwrap()).unwrap();
        let ns: [u8; 16] = rand::random();
        let h = s2m(resp.suite.id, FLAG_HANDSHAKE, c, hh.counter);
        let mut r = Vec::new();
        hop::seal(&mut resp, &h, &nm, &hop::handshake_body(&ns, mark), &mut r).unwrap();
        send_record(hop, &r).await;
        HandSlave { req, resp, id: hop::conn_id(&nm, &ns), peer_top }
    }

    fn request(&mut self, f: &[u8]) -> Result<(ModbusHeader, Vec<u8>), crate::wire::suite::OpenError> {
        let h = ModbusHeader::parse(f).unwrap();
        Ok((h, hop::open(&mut self.req, &h, f, &self.id)?))
    }

    /// A response frame of counter `c` naming request `bound`.
    fn response(&mut self, c: u64, bound: u64, adu: &[u8]) -> Vec<u8> {
        let h = s2m(self.resp.suite.id, 0, c, bound);
        let mut f = Vec::new();
        hop::seal(&mut self.resp, &h, &self.id, adu, &mut f).unwrap();
        f
    }
}
