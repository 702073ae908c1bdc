//! The proxy pair against real peers: tokio-modbus end to end, forged / replayed / reordered
//! hop frames, malformed ADUs, and counters across a restart.
//!
//! Expected register values are the slave's pattern (register i holds 7i + 3), computed here on
//! their own; expected verdicts follow the window rule of docs/link.md by hand.
use crate::wire::frame::Proto;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use crate::device::counter::CounterStore;
use crate::gateway::checks::Refusal;
use crate::industrial::modbus::measure::{self, Options};
use crate::industrial::modbus::peers::{self, Cycle, Registers};
use crate::industrial::modbus::proxy::{Hop, Limits, Proxy, Side};
use crate::wire::frame::{Header, HEADER_LEN};
use crate::wire::keys::MasterKey;
use crate::wire::suite::{self, Keyed};

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

#[test]
fn tokio_modbus_master_and_slave_talk_through_the_sealed_pair() {
    rt().block_on(async {
        let d = tempfile::tempdir().unwrap();
        let master = MasterKey::random();
        let store = CounterStore::open(&d.path().join("ctr"), 1024, &master).unwrap();
        let s = suite::find("ChaCha20-Poly1305").unwrap();
        let (slave_addr, regs) = slave().await;
        let (sp_addr, sp) =
            proxy(Side::Slave, slave_addr, Hop::sealed(&s, &master, &store, 0, Side::Slave, 64, None).unwrap()).await;
        let (mp_addr, mp) =
            proxy(Side::Master, sp_addr, Hop::sealed(&s, &master, &store, 0, Side::Master, 64, None).unwrap()).await;
        let mut ctx = peers::connect_master(mp_addr).await.unwrap();
        use tokio_modbus::prelude::{Reader, Writer};
        let got = ctx.read_holding_registers(100, 125).await.unwrap().unwrap();
        assert_eq!(got, (100..225).map(pattern).collect::<Vec<_>>());
        let words: Vec<u16> = (0..123).map(|i| 0xA000 + i).collect();
        ctx.write_multiple_registers(40, &words).await.unwrap().unwrap();
        assert_eq!(regs.0.lock().unwrap()[40..163], words[..], "the slave holds what the master wrote");
        assert_eq!(ctx.read_holding_registers(40, 3).await.unwrap().unwrap(), vec![0xA000, 0xA001, 0xA002]);
        // Both cycles of the measurement, checked against the slave's values.
        let expect = regs.0.lock().unwrap().clone();
        for c in [Cycle::ReadHolding(10), Cycle::Echo(252)] {
            c.poll(&mut ctx, T, &expect).await.unwrap();
        }
        let (m, sl) = (mp.report(), sp.report());
        assert_eq!((m.sent, m.delivered, sl.sent, sl.delivered), (5, 5, 5, 5));
        assert_eq!(m.refused.refused_total() + sl.refused.refused_total(), 0);
    });
}

/// The slave-side proxy, fed by hand-made hop frames: an authentic frame is answered, a
/// tampered, replayed or too old one is dropped (no answer) and counted, a reordered one inside
/// the window is accepted.
#[test]
fn forged_replayed_and_reordered_frames() {
    rt().block_on(async {
        let d = tempfile::tempdir().unwrap();
        let master = MasterKey::random();
        let store = CounterStore::open(&d.path().join("ctr"), 1024, &master).unwrap();
        let s = suite::find("Ascon-AEAD128").unwrap();
        let (slave_addr, _) = slave().await;
        let (sp_addr, sp) =
            proxy(Side::Slave, slave_addr, Hop::sealed(&s, &master, &store, 0, Side::Slave, 1024, None).unwrap()).await;
        // The test is the master-side proxy of pair 0: its sending device seals requests.
        let (dreq, dresp) = (0x4D42_0000, 0x4D42_0001);
        assert_eq!(super::proxy::devices(0, Side::Master).unwrap(), (dreq, dresp));
        let mut req = Keyed::from_master(&s, &master, Proto::ModbusToSlave, 0, false).unwrap();
        let mut resp = Keyed::from_master(&s, &master, Proto::ModbusToMaster, 0, false).unwrap();
        let mut hop = TcpStream::connect(sp_addr).await.unwrap();
        let seal = |k: &mut Keyed, c: u64, adu: &[u8]| {
            let mut f = Vec::new();
            k.seal(dreq, c, adu, &mut f).unwrap();
            f
        };
        let quiet = Duration::from_millis(300);
        let answered = |tid: u16| read_response(tid, 5, 2);
        let f5 = seal(&mut req, 5, &read_request(1, 5, 2));
        send_record(&mut hop, &f5).await;
        let r = recv_record(&mut hop, T).await.expect("an authentic request is answered");
        let h = Header::parse(&r).unwrap();
        assert_eq!((h.device, h.cipher), (dresp, s.id));
        assert_eq!(resp.open(&h, &r).unwrap(), answered(1));
        assert!(!r.windows(4).any(|w| w == &answered(1)[9..13]), "the register values are not on the hop in clear");

        send_record(&mut hop, &f5).await; // replay
        assert_eq!(recv_record(&mut hop, quiet).await, None, "a replayed request gets no answer");
        let mut bad = seal(&mut req, 6, &read_request(2, 5, 2));
        bad[HEADER_LEN + 8] ^= 0x01; // tampered ciphertext (the start address)
        send_record(&mut hop, &bad).await;
        assert_eq!(recv_record(&mut hop, quiet).await, None, "a tampered request gets no answer");
        let mut hdr = seal(&mut req, 7, &read_request(3, 5, 2));
        hdr[14] ^= 0x01; // counter changed in the header: authenticated data
        send_record(&mut hop, &hdr).await;
        assert_eq!(recv_record(&mut hop, quiet).await, None, "a changed header gets no answer");

        send_record(&mut hop, &seal(&mut req, 5000, &read_request(4, 5, 2))).await;
        assert!(recv_record(&mut hop, T).await.is_some());
        send_record(&mut hop, &seal(&mut req, 5000 - 1024, &read_request(5, 5, 2))).await;
        assert_eq!(recv_record(&mut hop, quiet).await, None, "older than the window: refused");
        send_record(&mut hop, &seal(&mut req, 5000 - 1023, &read_request(6, 5, 2))).await;
        let r = recv_record(&mut hop, T).await.expect("reordered inside the window: accepted");
        assert_eq!(resp.open(&Header::parse(&r).unwrap(), &r).unwrap(), answered(6));

        let t = sp.report().refused;
        assert_eq!(
            [Refusal::Replay, Refusal::BadTag, Refusal::TooOld].map(|r| t.count(r)),
            [1, 2, 1],
            "{:?}",
            sp.report()
        );
        assert_eq!((t.accepted, t.refused_total()), (3, 4));
    });
}

/// A malformed ADU from the master closes that connection (with its reason counted); the proxy
/// keeps serving new connections.
#[test]
fn a_malformed_adu_closes_only_its_connection() {
    rt().block_on(async {
        let (slave_addr, _) = slave().await;
        let (sp_addr, _) = proxy(Side::Slave, slave_addr, Hop::Plain).await;
        let (mp_addr, mp) = proxy(Side::Master, sp_addr, Hop::Plain).await;
        for bad in [
            vec![0, 1, 0, 0, 0, 0, 1],       // length 0
            vec![0, 1, 0, 0, 0, 1, 1],       // length 1: no PDU
            vec![0, 1, 0, 0, 0x01, 0x00, 1], // length 256: over 260 B
            vec![0, 1, 0, 7, 0, 6, 1],       // protocol 7
        ] {
            let mut c = TcpStream::connect(mp_addr).await.unwrap();
            c.write_all(&bad).await.unwrap();
            let mut b = [0u8; 16];
            let n = tokio::time::timeout(T, c.read(&mut b)).await.expect("closed, not left hanging");
            assert!(matches!(n, Ok(0) | Err(_)), "{bad:?}: {n:?}");
        }
        assert_eq!(mp.report().malformed, 4);
        let mut ctx = peers::connect_master(mp_addr).await.unwrap();
        use tokio_modbus::prelude::Reader;
        assert_eq!(ctx.read_holding_registers(0, 2).await.unwrap().unwrap(), vec![pattern(0), pattern(1)]);
    });
}

/// A restarted master-side proxy continues from its counter state: the counters on the hop
/// never repeat, and the state file says how far they were reserved.
#[test]
fn a_restarted_proxy_does_not_reuse_a_counter() {
    let d = tempfile::tempdir().unwrap();
    let state = d.path().join("ctr");
    let master = MasterKey::random();
    let s = suite::find("AES-128-GCM").unwrap();
    let mut seen = Vec::new();
    for _run in 0..2 {
        rt().block_on(async {
            let store = CounterStore::open(&state, 4, &master).unwrap();
            // The test is the slave-side proxy: it reads the hop records and answers nothing.
            let (hop_l, hop_addr) = bind().await;
            let (mp_addr, _mp) =
                proxy(Side::Master, hop_addr, Hop::sealed(&s, &master, &store, 0, Side::Master, 64, None).unwrap())
                    .await;
            let mut m = TcpStream::connect(mp_addr).await.unwrap();
            let mut hop = None;
            for tid in 0..6u16 {
                let adu = read_request(tid, 9, 1);
                m.write_all(&adu).await.unwrap();
                // The proxy connects to the hop at the first ADU.
                if hop.is_none() {
                    hop = Some(tokio::time::timeout(T, hop_l.accept()).await.unwrap().unwrap().0);
                }
                let f = recv_record(hop.as_mut().unwrap(), T).await.unwrap();
                let h = Header::parse(&f).unwrap();
                assert_eq!(h.device, 0x4D42_0000, "pair 0, master → slave");
                assert!(!f.windows(adu.len() - 2).any(|w| w == &adu[2..]), "the ADU is not on the hop in clear");
                seen.push(h.counter);
            }
        });
        // Reserved in blocks of 4 before use: after 6 counters the file says 8.
        let text = std::fs::read_to_string(&state).unwrap();
        assert!(text.ends_with(&format!("\n1296171008 {}\n", if seen.len() == 6 { 8 } else { 16 })), "{text}");
    }
    assert_eq!(seen, vec![0, 1, 2, 3, 4, 5, 8, 9, 10, 11, 12, 13]);
}

/// The measurement's shape: the ICS sizes, both paths timed, every poll answered correctly.
#[test]
fn measure_modbus_times_both_paths() {
    let opts = Options { interval: Duration::ZERO, warmup: 2, ..Options::default() };
    let (ms, reports) = measure::measure_with_reports("Ascon-AEAD128", 20, &opts).unwrap();
    assert_eq!(ms.iter().map(|m| m.bytes).collect::<Vec<_>>(), vec![12, 29, 260]);
    for m in &ms {
        assert_eq!((m.plain_ns.len(), m.sealed_ns.len(), m.protocol), (20, 20, "Modbus/TCP"));
        assert!(m.plain_ns.iter().chain(&m.sealed_ns).all(|&ns| ns > 0));
        assert!(m.cipher.starts_with("Ascon-AEAD128/"), "{}", m.cipher);
    }
    // 3 cycles × (2 warm-up + 20 timed) requests each way, nothing refused.
    assert_eq!((reports[0].sent, reports[0].delivered, reports[1].sent), (66, 66, 66));
    assert_eq!(reports[0].refused.refused_total() + reports[1].refused.refused_total(), 0);
    let csv = measure::csv(&ms, &measure::budgets());
    assert_eq!(csv.lines().count(), 4);
    assert!(csv.lines().next().unwrap().ends_with("sealed_p99_9_pct_of_IEC60834-1-teleprotection"));
    assert!(measure::measure_modbus("Ascon-AEAD128", 0, &opts).unwrap_err().contains("--polls"));
}

/// A restarted slave-side proxy has an empty replay window; its replay state refuses a frame
/// it accepted before the restart, and the next counter still passes.
#[test]
fn a_restarted_receiver_refuses_frames_from_before_the_restart() {
    let d = tempfile::tempdir().unwrap();
    let replay = d.path().join("replay");
    let master = MasterKey::random();
    let s = suite::find("Ascon-AEAD128").unwrap();
    let dreq = 0x4D42_0000; // pair 0, master → slave
    let mut req = Keyed::from_master(&s, &master, Proto::ModbusToSlave, 0, false).unwrap();
    let mut f5 = Vec::new();
    req.seal(dreq, 5, &read_request(1, 5, 2), &mut f5).unwrap();
    let mut f6 = Vec::new();
    req.seal(dreq, 6, &read_request(2, 5, 2), &mut f6).unwrap();
    let mut answers = Vec::new();
    for (run, frames) in [(0u64, vec![&f5]), (1, vec![&f5, &f6])] {
        let replays = rt().block_on(async {
            let store = CounterStore::open(&d.path().join("ctr"), 16, &master).unwrap();
            let (slave_addr, _) = slave().await;
            let hop = Hop::sealed(&s, &master, &store, 0, Side::Slave, 1024, Some(&replay)).unwrap();
            let (listener, addr) = bind().await;
            let p = Arc::new(Proxy::new(Side::Slave, listener, slave_addr, hop, Limits::default(), String::new()));
            let (tx, rx) = tokio::sync::oneshot::channel::<()>();
            let task = tokio::spawn(p.clone().run(async move {
                let _ = rx.await;
            }));
            let mut hop = TcpStream::connect(addr).await.unwrap();
            for f in frames {
                send_record(&mut hop, f).await;
                answers.push((run, recv_record(&mut hop, Duration::from_millis(500)).await.is_some()));
            }
            tx.send(()).unwrap();
            task.await.unwrap().unwrap();
            p.report().refused.count(Refusal::Replay)
        });
        assert_eq!(replays, run, "run {run}");
    }
    assert_eq!(answers, vec![(0, true), (1, false), (1, true)]);
    assert!(std::fs::read_to_string(&replay).unwrap().ends_with("\ndevice 1296171008 accepted 6\n"));
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

/// A hop frame of pair 0's master → slave device sealed with `master`, counter `c`.
fn request_frame(master: &MasterKey, c: u64, adu: &[u8]) -> Vec<u8> {
    let s = suite::find("Ascon-AEAD128").unwrap();
    let dreq = 0x4D42_0000;
    let mut k = Keyed::from_master(&s, master, Proto::ModbusToSlave, 0, false).unwrap();
    let mut f = Vec::new();
    k.seal(dreq, c, adu, &mut f).unwrap();
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

/// Issue 36 item 2: idle sockets from a host without the key make the slave-side proxy open no
/// connection to the slave; the first authentic frame does, and its ADU is what the slave gets.
#[test]
fn the_slave_is_connected_only_after_the_first_authenticated_frame() {
    rt().block_on(async {
        use std::sync::atomic::Ordering;
        let d = tempfile::tempdir().unwrap();
        let master = MasterKey::random();
        let (slave_addr, accepted, mut got) = counting_slave().await;
        let limits = Limits { handshake: Duration::from_secs(30), ..Limits::default() };
        let (sp_addr, sp) =
            proxy_with(Side::Slave, slave_addr, sealed_hop(d.path(), &master, Side::Slave), limits).await;
        // Four idle sockets, one with half a record, one with a frame sealed under another key.
        let mut idle = Vec::new();
        for _ in 0..4 {
            idle.push(TcpStream::connect(sp_addr).await.unwrap());
        }
        idle[1].write_all(&[0]).await.unwrap();
        send_record(&mut idle[2], &request_frame(&MasterKey::random(), 0, &read_request(1, 0, 1))).await;
        tokio::time::sleep(Duration::from_millis(400)).await;
        assert_eq!(accepted.load(Ordering::SeqCst), 0, "no connection to the slave before an authentic frame");
        assert_eq!(sp.report().upstream, 0);
        assert_eq!(sp.report().refused.refused_total(), 1, "the frame under another key is refused");
        // The authentic first frame, on a connection that first sent a forged one.
        send_record(&mut idle[2], &request_frame(&master, 0, &read_request(9, 5, 2))).await;
        let adu = tokio::time::timeout(T, got.recv()).await.unwrap().unwrap();
        assert_eq!(adu, [0, 9, 0, 0, 0, 6, 1, 3, 0, 5, 0, 2], "the slave gets the request ADU");
        assert_eq!((accepted.load(Ordering::SeqCst), sp.report().upstream), (1, 1));
    });
}

/// The master-side proxy opens its hop connection at the first ADU too: a master that connects
/// and sends nothing holds no hop connection, and is closed after the idle timeout.
#[test]
fn the_master_side_connects_at_the_first_adu_and_times_out_idle_masters() {
    rt().block_on(async {
        use std::sync::atomic::Ordering;
        let (hop_addr, accepted, mut got) = counting_slave().await;
        let limits = Limits { idle: Duration::from_millis(600), ..Limits::default() };
        let (mp_addr, mp) = proxy_with(Side::Master, hop_addr, Hop::Plain, limits).await;
        let mut quiet = TcpStream::connect(mp_addr).await.unwrap();
        let t0 = std::time::Instant::now();
        assert!(closed_within(&mut quiet, T).await, "an idle master is closed");
        let waited = t0.elapsed();
        assert!(waited >= Duration::from_millis(550), "closed after {waited:?}, before the 600 ms idle timeout");
        assert_eq!((accepted.load(Ordering::SeqCst), mp.report().upstream, mp.report().idle_timeouts), (0, 0, 1));
        let mut m = TcpStream::connect(mp_addr).await.unwrap();
        m.write_all(&read_request(3, 0, 1)).await.unwrap();
        // A plain hop record: the 2-byte length (12), then the ADU's first ten bytes here.
        let rec = tokio::time::timeout(T, got.recv()).await.unwrap().unwrap();
        assert_eq!(rec, [0, 12, 0, 3, 0, 0, 0, 6, 1, 3, 0, 0]);
        assert_eq!(accepted.load(Ordering::SeqCst), 1);
    });
}

/// Handshake deadline and idle timeout on the slave side: a keyless socket (silent, or half a
/// record) is closed at the handshake deadline; an authenticated pair whose master stops polling
/// is closed at the idle timeout, never before.
#[test]
fn handshake_deadline_and_idle_timeout() {
    rt().block_on(async {
        let d = tempfile::tempdir().unwrap();
        let master = MasterKey::random();
        let (slave_addr, _) = slave().await;
        let slow =
            Limits { handshake: Duration::from_millis(500), idle: Duration::from_millis(900), ..Limits::default() };
        let (sp_addr, sp) = proxy_with(Side::Slave, slave_addr, sealed_hop(d.path(), &master, Side::Slave), slow).await;
        let (mp_addr, mp) = proxy_with(Side::Master, sp_addr, sealed_hop(d.path(), &master, Side::Master), slow).await;
        let t0 = std::time::Instant::now();
        let mut silent = TcpStream::connect(sp_addr).await.unwrap();
        let mut half = TcpStream::connect(sp_addr).await.unwrap();
        half.write_all(&[0, 40, 1, 2, 3]).await.unwrap();
        assert!(closed_within(&mut silent, T).await && closed_within(&mut half, T).await);
        assert!(t0.elapsed() >= Duration::from_millis(450), "closed after {:?}", t0.elapsed());
        assert_eq!((sp.report().handshake_timeouts, sp.report().upstream), (2, 0));

        let mut ctx = peers::connect_master(mp_addr).await.unwrap();
        use tokio_modbus::prelude::Reader;
        // Polls 300 ms apart keep the pair open past the handshake and the idle timeout.
        for _ in 0..4 {
            assert_eq!(ctx.read_holding_registers(20, 1).await.unwrap().unwrap(), vec![pattern(20)]);
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
        assert_eq!((mp.report().idle_timeouts, sp.report().idle_timeouts), (0, 0), "polled pairs are not idle");
        let t1 = std::time::Instant::now();
        let r = tokio::time::timeout(T, async {
            loop {
                if mp.report().idle_timeouts + sp.report().idle_timeouts > 0 {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
        .await;
        assert!(r.is_ok(), "the idle pair is closed");
        assert!(t1.elapsed() >= Duration::from_millis(500), "idle closed after {:?} of 900 ms less 300", t1.elapsed());
        assert_eq!((sp.report().upstream, sp.report().handshake_timeouts), (1, 2));
    });
}

/// Per-peer cap: a third connection from 127.0.0.1 is closed at once and counted; another
/// address is still served, and a freed slot is usable again.
#[test]
fn the_per_peer_cap_refuses_and_counts() {
    rt().block_on(async {
        let d = tempfile::tempdir().unwrap();
        let master = MasterKey::random();
        let (slave_addr, _) = slave().await;
        let limits = Limits { max_per_peer: 2, max_conns: 10, handshake: Duration::from_secs(30), ..Limits::default() };
        let (sp_addr, sp) =
            proxy_with(Side::Slave, slave_addr, sealed_hop(d.path(), &master, Side::Slave), limits).await;
        let held = Duration::from_millis(300);
        let mut a = connect_from("127.0.0.1", sp_addr).await;
        let mut b = connect_from("127.0.0.1", sp_addr).await;
        let mut c = connect_from("127.0.0.1", sp_addr).await;
        assert!(closed_within(&mut c, T).await, "the third from one address is closed");
        let mut other = connect_from("127.0.0.2", sp_addr).await;
        assert!(!closed_within(&mut other, held).await, "another address is served");
        assert!(!closed_within(&mut a, held).await && !closed_within(&mut b, held).await);
        assert_eq!((sp.report().refused_per_peer, sp.report().refused_overall, sp.report().connections), (1, 0, 4));
        drop(a);
        // The slot is freed when the proxy sees the close; a new connection then fits.
        let mut fit = false;
        for _ in 0..50 {
            let mut n = connect_from("127.0.0.1", sp_addr).await;
            if !closed_within(&mut n, Duration::from_millis(100)).await {
                fit = true;
                break;
            }
        }
        assert!(fit, "a freed slot is given again");
        // An authenticated frame on a held connection is still answered.
        send_record(&mut b, &request_frame(&master, 0, &read_request(4, 5, 2))).await;
        assert!(recv_record(&mut b, T).await.is_some());
    });
}

/// Overall cap: with 3 open connections from three addresses a fourth address is refused as
/// over the overall cap, not the per-peer one.
#[test]
fn the_overall_cap_refuses_and_counts() {
    rt().block_on(async {
        let (slave_addr, _) = slave().await;
        let limits = Limits { max_per_peer: 3, max_conns: 3, handshake: Duration::from_secs(30), ..Limits::default() };
        let (sp_addr, sp) = proxy_with(Side::Slave, slave_addr, Hop::Plain, limits).await;
        let mut open = Vec::new();
        for from in ["127.0.0.1", "127.0.0.2", "127.0.0.3"] {
            open.push(connect_from(from, sp_addr).await);
        }
        let mut fourth = connect_from("127.0.0.4", sp_addr).await;
        assert!(closed_within(&mut fourth, T).await, "the fourth is closed");
        for s in &mut open {
            assert!(!closed_within(s, Duration::from_millis(200)).await, "the first three are held");
        }
        assert_eq!((sp.report().refused_overall, sp.report().refused_per_peer), (1, 0));
        assert!(sp.report().line().contains("connections refused over the overall cap 1"), "{}", sp.report().line());
    });
}

#[test]
fn limits_are_checked() {
    Limits::default().check().unwrap();
    let bad = |l: Limits| l.check().unwrap_err();
    assert!(bad(Limits { idle: Duration::ZERO, ..Limits::default() }).starts_with("--idle-timeout:"));
    assert!(
        bad(Limits { handshake: Duration::from_secs(3601), ..Limits::default() }).starts_with("--handshake-timeout:")
    );
    assert!(bad(Limits { max_conns: 0, ..Limits::default() }).starts_with("--max-conns:"));
    assert!(bad(Limits { max_conns: 10_001, ..Limits::default() }).starts_with("--max-conns:"));
    assert!(bad(Limits { max_conns: 4, max_per_peer: 5, ..Limits::default() }).starts_with("--max-conns-per-peer:"));
    assert!(bad(Limits { max_per_peer: 0, ..Limits::default() }).starts_with("--max-conns-per-peer:"));
}

fn budgets() -> Vec<lwcbench_engine::studies::ics::Budget> {
    use lwcbench_engine::studies::ics::Budget;
    vec![
        Budget { name: "G".into(), ms: 3.0, source: String::new() },
        Budget { name: "T".into(), ms: 10.0, source: String::new() },
    ]
}

fn cycle(plain_us: Vec<u64>, sealed_us: Vec<u64>) -> crate::industrial::CycleMeasurement {
    crate::industrial::CycleMeasurement {
        protocol: "Modbus/TCP",
        message: "m".into(),
        bytes: 12,
        cipher: "c".into(),
        plain_ns: plain_us.into_iter().map(|u| u * 1000).collect(),
        sealed_ns: sealed_us.into_iter().map(|u| u * 1000).collect(),
        path: "p".into(),
    }
}

/// Issue 36 item 13, figures by hand. 1,000 polls 1..=1000 µs: nearest-rank p99.9 is rank 999,
/// 999 µs; sealed = plain + 6 µs: 1005 µs, added 6 µs = 0.2 % of 3 ms and 0.06 % of 10 ms.
/// Sealed with its two largest polls 500 µs: ranks 999 and 1000 are 997 and 998 µs, added −2 µs:
/// noise, no share. 999 or 300 polls: no p99.9 at all, whatever the difference.
#[test]
fn the_added_tail_share_needs_1000_polls_and_is_never_negative() {
    use crate::industrial::modbus::measure::{csv, markdown, row, Tail};
    let plain: Vec<u64> = (1..=1000).collect();
    let ok = cycle(plain.clone(), plain.iter().map(|u| u + 6).collect());
    let mut low = plain.clone();
    low[998] = 500;
    low[999] = 500;
    let noisy = cycle(plain.clone(), low);
    let few = cycle((1..=999).collect(), (1..=999).map(|u| u + 6).collect());
    let tester = cycle((1..=300).map(|u| u * 40).collect(), (1..=300).map(|u| u * 20).collect());
    assert_eq!(row(&ok).tail(), Tail::Added(6000.0));
    assert_eq!(row(&noisy).tail(), Tail::Negative(-2000.0));
    assert_eq!(row(&few).tail(), Tail::TooFewPolls);
    assert_eq!(row(&tester).tail(), Tail::TooFewPolls);

    let c = csv(&[ok.clone(), noisy.clone(), few.clone(), tester.clone()], &budgets());
    let lines: Vec<Vec<&str>> = c.lines().map(|l| l.split(',').collect()).collect();
    let col = |name: &str| lines[0].iter().position(|h| *h == name).unwrap();
    let pick = |l: &Vec<&str>| {
        ["added_p99_9_ns", "added_p99_9_status", "added_p99_9_pct_of_G", "added_p99_9_pct_of_T"]
            .map(|h| l[col(h)].to_string())
    };
    assert_eq!(pick(&lines[1]), ["6000", "ok", "0.2000", "0.0600"]);
    assert_eq!(pick(&lines[2]), ["-2000", "negative_noise", "", ""]);
    assert_eq!(pick(&lines[3]), ["", "too_few_polls", "", ""]);
    assert_eq!(pick(&lines[4]), ["", "too_few_polls", "", ""]);
    // The sealed tail's own share stays: 1005 µs of 3 ms = 33.5 %.
    assert_eq!(lines[1][col("sealed_p99_9_pct_of_G")], "33.5000");

    let md = markdown(&[ok, noisy, few, tester], &budgets(), "m");
    let rows: Vec<&str> = md.lines().filter(|l| l.starts_with("| c |")).collect();
    assert_eq!(rows.len(), 4);
    assert!(rows[0].ends_with("| 6.0 µs | 0.200 % | 0.060 % |"), "{}", rows[0]);
    assert!(rows[1].ends_with("| -2.0 µs (noise) | n/a (noise) | n/a (noise) |"), "{}", rows[1]);
    for r in &rows[2..] {
        assert!(
            r.ends_with("| n/a (needs ≥ 1,000 polls) | n/a (needs ≥ 1,000 polls) | n/a (needs ≥ 1,000 polls) |"),
            "{r}"
        );
    }
    let shares: Vec<&str> =
        rows.iter().flat_map(|r| r.split('|')).map(str::trim).filter(|c| c.ends_with('%')).collect();
    assert_eq!(shares, ["0.200 %", "0.060 %"], "the only shares printed, none negative");
    assert!(md.contains("below 1000 polls per path"), "{md}");
}

/// At most one refusal line a second: the first is due, the next ones are counted into the
/// line after the second has passed.
#[test]
fn refusal_lines_are_throttled() {
    let t = super::proxy::Throttle::default();
    assert_eq!(t.due(), Some(1));
    assert_eq!((t.due(), t.due(), t.due()), (None, None, None));
    std::thread::sleep(Duration::from_millis(1050));
    assert_eq!(t.due(), Some(4), "three held back and this one");
    assert_eq!(t.due(), None);
}
