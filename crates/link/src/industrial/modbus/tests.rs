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

/// The proxies as deployed: both take pair 3's key written by provisioning (with a copy of its
/// counter state each) and the replay state provisioning put beside it, and talk; a proxy given
/// pair 3's key as pair 4 is refused (the key derives nothing for another pair).
#[test]
fn both_proxies_run_on_a_provisioned_pair_key() {
    use crate::device::counter::{beside_key, open_device, open_session};
    use crate::industrial::modbus::floor::replay_path;
    use crate::wire::frame::Family;
    let d = tempfile::tempdir().unwrap();
    let mk = d.path().join("master.key");
    open_session(&mk, &beside_key(&mk), 64).unwrap();
    let pk = d.path().join("pair3.key");
    crate::device::provision::provision(&mk, Family::Modbus, 3, None, &pk).unwrap();
    let s = suite::find("Ascon-AEAD128").unwrap();
    let hop = |side: Side| {
        // Each proxy host gets a copy of the key, its counter state and its side's replay state.
        let host = d.path().join(side.name());
        std::fs::create_dir(&host).unwrap();
        let replay = replay_path(&pk, 3, side);
        for f in [pk.clone(), beside_key(&pk), replay.clone()] {
            std::fs::copy(&f, host.join(f.file_name().unwrap())).unwrap();
        }
        let kf = host.join("pair3.key");
        let (key, store) = open_device(&kf, &beside_key(&kf), 64, Family::Modbus).unwrap();
        let e = Hop::sealed(&s, &key, &store, 4, side, 64, None).map(|_| ()).unwrap_err();
        assert!(e.contains("modbus 3's"), "pair 4 from pair 3's key: {e}");
        Hop::sealed(&s, &key, &store, key.device, side, 64, Some(&replay_path(&kf, 3, side))).unwrap()
    };
    rt().block_on(async {
        let (slave_addr, regs) = slave().await;
        let (sp_addr, sp) = proxy(Side::Slave, slave_addr, hop(Side::Slave)).await;
        let (mp_addr, mp) = proxy(Side::Master, sp_addr, hop(Side::Master)).await;
        let mut ctx = peers::connect_master(mp_addr).await.unwrap();
        use tokio_modbus::prelude::{Reader, Writer};
        assert_eq!(ctx.read_holding_registers(5, 2).await.unwrap().unwrap(), vec![pattern(5), pattern(6)]);
        ctx.write_single_register(100, 333).await.unwrap().unwrap();
        assert_eq!(regs.0.lock().unwrap()[100], 333);
        assert_eq!((mp.report().delivered, sp.report().delivered), (2, 2));
    });
}

/// The slave-side proxy, fed by hand-made hop frames after a handshake by hand: an authentic
/// request is answered with a response bound to its counter, a replayed, tampered or changed-
/// header one is dropped (no answer) and counted; with no window on a connection, a frame
/// whose counter is not above the connection's last is refused even far inside 1,024.
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
        let mut hop = TcpStream::connect(sp_addr).await.unwrap();
        let mut hm = HandMaster::handshake(&mut hop, &master, 4, None).await.expect("the handshake is answered");
        assert_eq!(hm.peer_top, None, "the slave side has accepted nothing before this hello");
        let quiet = Duration::from_millis(300);
        let answered = |tid: u16| read_response(tid, 5, 2);
        let f5 = hm.request(5, 0, &read_request(1, 5, 2));
        send_record(&mut hop, &f5).await;
        let r = recv_record(&mut hop, T).await.expect("an authentic request is answered");
        let (h, adu) = hm.response(&r).unwrap();
        assert_eq!((h.device, h.cipher, h.ext), (0x4D42_0001, s.id, 5), "bound to request 5");
        assert_eq!(&r[..4], &[3, 4, s.id, 0], "version 3, type 4 (slave → master), no flags");
        assert_eq!(adu, answered(1));
        assert!(!r.windows(4).any(|w| w == &answered(1)[9..13]), "the register values are not on the hop in clear");

        send_record(&mut hop, &f5).await; // replay
        assert_eq!(recv_record(&mut hop, quiet).await, None, "a replayed request gets no answer");
        let mut bad = hm.request(6, 0, &read_request(2, 5, 2));
        bad[MODBUS_HEADER_LEN + 8] ^= 0x01; // tampered ciphertext (the start address)
        send_record(&mut hop, &bad).await;
        assert_eq!(recv_record(&mut hop, quiet).await, None, "a tampered request gets no answer");
        let mut hdr = hm.request(7, 0, &read_request(3, 5, 2));
        hdr[16] ^= 0x01; // the extension changed: authenticated data
        send_record(&mut hop, &hdr).await;
        assert_eq!(recv_record(&mut hop, quiet).await, None, "a changed header gets no answer");

        send_record(&mut hop, &hm.request(5000, 0, &read_request(4, 5, 2))).await;
        assert!(recv_record(&mut hop, T).await.is_some());
        send_record(&mut hop, &hm.request(4999, 0, &read_request(6, 5, 2))).await;
        assert_eq!(recv_record(&mut hop, quiet).await, None, "below the connection's last counter: refused");
        send_record(&mut hop, &hm.request(5001, 0, &read_request(7, 5, 2))).await;
        let r = recv_record(&mut hop, T).await.expect("the next counter passes");
        assert_eq!(hm.response(&r).unwrap().1, answered(7));

        // The slave → master type (4) on the master → slave device, sealed under the s → m key
        // with the connection id: refused by its type byte before the tag.
        let mut f = Vec::new();
        let h = ModbusHeader { proto: Proto::ModbusToMaster, ..m2s(s.id, 0, 5002, 0) };
        hop::seal(&mut hm.resp, &h, &hm.id, &read_request(8, 5, 2), &mut f).unwrap();
        assert_eq!(f[1], 4);
        send_record(&mut hop, &f).await;
        assert_eq!(recv_record(&mut hop, quiet).await, None, "a frame of the other direction's type is answered");

        let t = sp.report().refused;
        assert_eq!(
            [Refusal::Replay, Refusal::BadTag, Refusal::WrongCipher].map(|r| t.count(r)),
            [2, 2, 1],
            "{}",
            sp.report().line()
        );
        assert_eq!((t.accepted, t.refused_total()), (4, 5), "the hello and three requests");
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
/// (the hello's included) never repeat, and the state file says how far they were reserved.
#[test]
fn a_restarted_proxy_does_not_reuse_a_counter() {
    let d = tempfile::tempdir().unwrap();
    let state = d.path().join("ctr");
    let master = MasterKey::random();
    let s = suite::find("Ascon-AEAD128").unwrap();
    let mut seen = Vec::new();
    for _run in 0..2 {
        rt().block_on(async {
            let store = CounterStore::open(&state, 4, &master).unwrap();
            // The test is the slave-side proxy: it answers the handshake and reads the requests.
            let (hop_l, hop_addr) = bind().await;
            let (mp_addr, _mp) =
                proxy(Side::Master, hop_addr, Hop::sealed(&s, &master, &store, 0, Side::Master, 64, None).unwrap())
                    .await;
            let mut m = TcpStream::connect(mp_addr).await.unwrap();
            let mut hop = None;
            let mut hs = None;
            for tid in 0..6u16 {
                let adu = read_request(tid, 9, 1);
                m.write_all(&adu).await.unwrap();
                // The proxy connects to the hop at the first ADU and says hello.
                if hop.is_none() {
                    let mut c = tokio::time::timeout(T, hop_l.accept()).await.unwrap().unwrap().0;
                    let hello = recv_record(&mut c, T).await.unwrap();
                    seen.push(ModbusHeader::parse(&hello).unwrap().counter);
                    hs = Some(HandSlave::reply(&mut c, &master, &hello, 0, None).await);
                    hop = Some(c);
                }
                let f = recv_record(hop.as_mut().unwrap(), T).await.unwrap();
                let h = ModbusHeader::parse(&f).unwrap();
                assert_eq!(h.device, 0x4D42_0000, "pair 0, master → slave");
                assert_eq!(hs.as_mut().unwrap().request(&f).unwrap().1, adu);
                assert!(!f.windows(adu.len() - 2).any(|w| w == &adu[2..]), "the ADU is not on the hop in clear");
                seen.push(h.counter);
            }
        });
        // Reserved in blocks of 4 before use: after 7 counters the file says 8.
        let text = std::fs::read_to_string(&state).unwrap();
        assert!(text.ends_with(&format!("\n1296171008 {}\n", if seen.len() == 7 { 8 } else { 16 })), "{text}");
    }
    assert_eq!(seen, vec![0, 1, 2, 3, 4, 5, 6, 8, 9, 10, 11, 12, 13, 14]);
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

/// A restarted slave-side proxy keeps its floor in its replay state: a hello from before the
/// restart is answered (so a rolled-back master side learns the mark) but its connection is
/// closed and counted; a new hello above the floor starts a working connection.
#[test]
fn a_restarted_receiver_refuses_frames_from_before_the_restart() {
    let d = tempfile::tempdir().unwrap();
    let replay = replay_file(d.path(), &MasterKey::from_bytes([3; 32]), Side::Slave);
    let master = MasterKey::from_bytes([3; 32]);
    let mut log = Vec::new();
    let mut first_hello = None;
    for run in 0..2u64 {
        let (replays, rollbacks) = rt().block_on(async {
            let store = CounterStore::open(&d.path().join("ctr"), 16, &master).unwrap();
            let (slave_addr, _) = slave().await;
            let s = suite::find("Ascon-AEAD128").unwrap();
            let hop = Hop::sealed(&s, &master, &store, 0, Side::Slave, 1024, Some(&replay)).unwrap();
            let (listener, addr) = bind().await;
            let p = Arc::new(Proxy::new(Side::Slave, listener, slave_addr, hop, Limits::default(), String::new()));
            let (tx, rx) = tokio::sync::oneshot::channel::<()>();
            let task = tokio::spawn(p.clone().run(async move {
                let _ = rx.await;
            }));
            if run == 0 {
                let mut c = TcpStream::connect(addr).await.unwrap();
                let mut hm = HandMaster::handshake(&mut c, &master, 5, None).await.unwrap();
                first_hello = Some(hm.hello.clone());
                send_record(&mut c, &hm.request(6, 0, &read_request(1, 5, 2))).await;
                log.push(("run 0 request 6", recv_record(&mut c, T).await.is_some()));
            } else {
                // The hello of run 0, replayed: answered with the mark (6), then closed.
                let mut c = TcpStream::connect(addr).await.unwrap();
                send_record(&mut c, first_hello.as_ref().unwrap()).await;
                let reply = recv_record(&mut c, T).await.expect("a replayed hello is answered");
                assert_eq!(ModbusHeader::parse(&reply).unwrap().ext, 5, "the reply names the hello's counter");
                log.push(("run 1 old hello closed", closed_within(&mut c, T).await));
                let mut c = TcpStream::connect(addr).await.unwrap();
                let mut hm = HandMaster::handshake(&mut c, &master, 7, None).await.unwrap();
                assert_eq!(hm.peer_top, Some(6), "the mark is the floor of run 0");
                send_record(&mut c, &hm.request(8, 0, &read_request(2, 5, 2))).await;
                log.push(("run 1 request 8", recv_record(&mut c, T).await.is_some()));
            }
            tx.send(()).unwrap();
            task.await.unwrap().unwrap();
            (p.report().refused.count(Refusal::Replay), p.report().rollbacks)
        });
        assert_eq!((replays, rollbacks), (run, run), "run {run}");
    }
    assert_eq!(log, vec![("run 0 request 6", true), ("run 1 old hello closed", true), ("run 1 request 8", true)]);
    assert!(std::fs::read_to_string(&replay).unwrap().ends_with("\ndevice 1296171008 accepted 8\n"));
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
        send_record(&mut idle[2], &hello_frame(&MasterKey::random(), 0)).await;
        tokio::time::sleep(Duration::from_millis(400)).await;
        assert_eq!(accepted.load(Ordering::SeqCst), 0, "no connection to the slave before an authentic frame");
        assert_eq!(sp.report().upstream, 0);
        assert_eq!(sp.report().refused.refused_total(), 1, "the frame under another key is refused");
        // An authentic hello alone opens nothing to the slave either.
        let mut hm = HandMaster::handshake(&mut idle[2], &master, 0, None).await.unwrap();
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert_eq!(accepted.load(Ordering::SeqCst), 0, "no connection to the slave after the handshake alone");
        // The authentic first request, on a connection that first sent a forged hello.
        send_record(&mut idle[2], &hm.request(1, 0, &read_request(9, 5, 2))).await;
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
        // An authenticated request on a held connection is still answered.
        let mut hm = HandMaster::handshake(&mut b, &master, 0, None).await.unwrap();
        send_record(&mut b, &hm.request(1, 0, &read_request(4, 5, 2))).await;
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

// ---- Issue 37 item 5: the hop bound to its connection ---------------------------------------

/// A relay between the two proxies, as an attacker on the wire: forwards every hop record (2-byte
/// length + frame) both ways, can hold back the next master → slave record and later release it
/// on the same hop connection or send it on a new one, and records the m → s frames it saw.
struct Tap {
    addr: SocketAddr,
    state: Arc<std::sync::Mutex<TapState>>,
    upstream: SocketAddr,
}

#[derive(Default)]
struct TapState {
    hold_next: bool,
    held: Option<Vec<u8>>,
    up: Vec<Vec<u8>>,
    /// The slave-side socket of the live hop connection, for a release on it.
    to_slave: Option<Arc<tokio::sync::Mutex<tokio::net::tcp::OwnedWriteHalf>>>,
}

impl Tap {
    async fn start(upstream: SocketAddr) -> Tap {
        let (l, addr) = bind().await;
        let state = Arc::new(std::sync::Mutex::new(TapState::default()));
        let st = state.clone();
        tokio::spawn(async move {
            while let Ok((a, _)) = l.accept().await {
                let Ok(b) = TcpStream::connect(upstream).await else { return };
                let (mut ar, mut aw) = a.into_split();
                let (mut br, bw) = b.into_split();
                let bw = Arc::new(tokio::sync::Mutex::new(bw));
                st.lock().unwrap().to_slave = Some(bw.clone());
                let st2 = st.clone();
                tokio::spawn(async move {
                    while let Some(rec) = read_rec(&mut ar).await {
                        let hold = {
                            let mut s = st2.lock().unwrap();
                            s.up.push(rec.clone());
                            if s.hold_next {
                                s.hold_next = false;
                                s.held = Some(rec.clone());
                                true
                            } else {
                                false
                            }
                        };
                        if !hold && write_rec(&mut *bw.lock().await, &rec).await.is_err() {
                            break;
                        }
                    }
                });
                tokio::spawn(async move {
                    while let Some(rec) = read_rec(&mut br).await {
                        if write_rec(&mut aw, &rec).await.is_err() {
                            break;
                        }
                    }
                });
            }
        });
        Tap { addr, state, upstream }
    }

    fn hold_next(&self) {
        self.state.lock().unwrap().hold_next = true;
    }

    fn held(&self) -> Vec<u8> {
        self.state.lock().unwrap().held.clone().expect("a record was held back")
    }

    /// Send the held-back record late on the live hop connection.
    async fn release_on_same(&self) {
        let (rec, w) = {
            let s = self.state.lock().unwrap();
            (s.held.clone().unwrap(), s.to_slave.clone().unwrap())
        };
        write_rec(&mut *w.lock().await, &rec).await.unwrap();
    }

    /// Send `rec` on a new connection to the slave-side proxy; returns that connection.
    async fn send_on_new(&self, rec: &[u8]) -> TcpStream {
        let mut s = TcpStream::connect(self.upstream).await.unwrap();
        send_record(&mut s, rec).await;
        s
    }

    fn up_frames(&self) -> Vec<Vec<u8>> {
        self.state.lock().unwrap().up.clone()
    }
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
        Floor::create(&p, master, super::proxy::devices(0, side).unwrap().1).unwrap();
    }
    p
}

/// Both proxies of pair 0 with a tap between them, each with its own counter state and replay
/// state in `d`; returns (master-side address, tap, master-side proxy, slave-side proxy, the
/// slave's registers).
async fn tapped_pair(d: &std::path::Path, master: &MasterKey) -> (SocketAddr, Tap, Arc<Proxy>, Arc<Proxy>, Registers) {
    let s = suite::find("Ascon-AEAD128").unwrap();
    let hop = |side: Side| {
        let store = CounterStore::open(&d.join(format!("ctr-{}", side.name())), 64, master).unwrap();
        Hop::sealed(&s, master, &store, 0, side, 1024, Some(&replay_file(d, master, side))).unwrap()
    };
    let (slave_addr, regs) = slave().await;
    let (sp_addr, sp) = proxy(Side::Slave, slave_addr, hop(Side::Slave)).await;
    let tap = Tap::start(sp_addr).await;
    let (mp_addr, mp) = proxy(Side::Master, tap.addr, hop(Side::Master)).await;
    (mp_addr, tap, mp, sp, regs)
}

/// The attack of issue 37: a recorded "write 111" held back while a newer "write 222" passes,
/// then released late on the same hop connection. The slave must keep 222.
#[test]
fn a_held_back_write_released_late_on_its_connection_is_refused() {
    rt().block_on(async {
        let d = tempfile::tempdir().unwrap();
        let master = MasterKey::random();
        let (mp_addr, tap, _mp, sp, regs) = tapped_pair(d.path(), &master).await;
        let mut m = TcpStream::connect(mp_addr).await.unwrap();
        m.write_all(&read_request(1, 5, 2)).await.unwrap();
        assert_eq!(answer(&mut m, 13, T).await.unwrap(), read_response(1, 5, 2));
        tap.hold_next();
        m.write_all(&write_request(2, 100, 111)).await.unwrap();
        m.write_all(&write_request(3, 100, 222)).await.unwrap();
        assert_eq!(answer(&mut m, 12, T).await.unwrap(), write_request(3, 100, 222), "write 222 is answered");
        assert_eq!(regs.0.lock().unwrap()[100], 222);
        tap.release_on_same().await;
        tokio::time::sleep(Duration::from_millis(400)).await;
        assert_eq!(regs.0.lock().unwrap()[100], 222, "the held-back write 111 was executed after 222");
        assert_eq!(answer(&mut m, 12, Duration::from_millis(200)).await, None, "no answer to the late write");
        assert_eq!(sp.report().refused.count(Refusal::Replay), 1, "{}", sp.report().line());
    });
}

/// The same held-back "write 111", sent on a new hop connection after "write 222" passed: it
/// must not verify there, and the slave keeps 222.
#[test]
fn a_held_back_write_sent_on_another_connection_is_refused() {
    rt().block_on(async {
        let d = tempfile::tempdir().unwrap();
        let master = MasterKey::random();
        let (mp_addr, tap, _mp, sp, regs) = tapped_pair(d.path(), &master).await;
        let mut m = TcpStream::connect(mp_addr).await.unwrap();
        m.write_all(&read_request(1, 5, 2)).await.unwrap();
        assert_eq!(answer(&mut m, 13, T).await.unwrap(), read_response(1, 5, 2));
        tap.hold_next();
        m.write_all(&write_request(2, 100, 111)).await.unwrap();
        m.write_all(&write_request(3, 100, 222)).await.unwrap();
        assert_eq!(answer(&mut m, 12, T).await.unwrap(), write_request(3, 100, 222));
        let mut other = tap.send_on_new(&tap.held()).await;
        tokio::time::sleep(Duration::from_millis(400)).await;
        assert_eq!(regs.0.lock().unwrap()[100], 222, "the held-back write 111 was executed on another connection");
        assert_eq!(recv_record(&mut other, Duration::from_millis(200)).await, None);
        // Every m → s frame the tap saw, replayed on a new connection: none is answered.
        let mut again = TcpStream::connect(tap.upstream).await.unwrap();
        for f in tap.up_frames() {
            send_record(&mut again, &f).await;
        }
        // The recorded hello is answered (a reply that leads nowhere: its connection id is new),
        // no recorded request is.
        while let Some(r) = recv_record(&mut again, Duration::from_millis(400)).await {
            assert!(ModbusHeader::parse(&r).unwrap().is_handshake(), "a recorded request was answered");
        }
        assert_eq!(regs.0.lock().unwrap()[100], 222);
        assert_eq!(sp.report().upstream, 1, "only the real connection reached the slave: {}", sp.report().line());
    });
}

/// A write held back longer than the write deadline (2 s by default) and then released on its
/// own connection, in order (nothing newer passed meanwhile): refused as stale.
#[test]
fn a_write_delayed_past_the_deadline_is_refused() {
    rt().block_on(async {
        let d = tempfile::tempdir().unwrap();
        let master = MasterKey::random();
        let (mp_addr, tap, _mp, _sp, regs) = tapped_pair(d.path(), &master).await;
        let mut m = TcpStream::connect(mp_addr).await.unwrap();
        m.write_all(&read_request(1, 5, 2)).await.unwrap();
        assert_eq!(answer(&mut m, 13, T).await.unwrap(), read_response(1, 5, 2));
        tap.hold_next();
        m.write_all(&write_request(2, 100, 111)).await.unwrap();
        tokio::time::sleep(Duration::from_millis(2300)).await;
        tap.release_on_same().await;
        tokio::time::sleep(Duration::from_millis(400)).await;
        assert_eq!(regs.0.lock().unwrap()[100], pattern(100), "a write 2.3 s late was executed");
        assert_eq!(answer(&mut m, 12, Duration::from_millis(100)).await, None);
        // A read delayed as long is still served: the deadline is for writes.
        tap.hold_next();
        m.write_all(&read_request(3, 7, 1)).await.unwrap();
        tokio::time::sleep(Duration::from_millis(2300)).await;
        tap.release_on_same().await;
        assert_eq!(answer(&mut m, 11, T).await.unwrap(), read_response(3, 7, 1));
    });
}

/// The attack of issue 37: the slave side's replay state is lost; both recorded writes of an
/// earlier run, replayed to the restarted proxy, were executed. The proxy must refuse to start.
#[test]
fn a_lost_replay_state_is_refused_at_start() {
    let d = tempfile::tempdir().unwrap();
    let master = MasterKey::random();
    let s = suite::find("Ascon-AEAD128").unwrap();
    let recorded = rt().block_on(async {
        let (mp_addr, tap, _mp, _sp, _regs) = tapped_pair(d.path(), &master).await;
        let mut m = TcpStream::connect(mp_addr).await.unwrap();
        for (tid, v) in [(1u16, 111u16), (2, 222)] {
            m.write_all(&write_request(tid, 100, v)).await.unwrap();
            assert_eq!(answer(&mut m, 12, T).await.unwrap(), write_request(tid, 100, v));
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
        tap.up_frames()
    });
    let replay = replay_file(d.path(), &master, Side::Slave);
    std::fs::remove_file(&replay).unwrap();
    let store = CounterStore::open(&d.path().join("ctr-slave"), 64, &master).unwrap();
    match Hop::sealed(&s, &master, &store, 0, Side::Slave, 1024, Some(&replay)) {
        Ok(hop) => rt().block_on(async {
            // The proxy started: the attacker replays what the tap recorded to a fresh slave.
            let (slave_addr, regs) = slave().await;
            let (sp_addr, _sp) = proxy(Side::Slave, slave_addr, hop).await;
            let mut c = TcpStream::connect(sp_addr).await.unwrap();
            for f in &recorded {
                send_record(&mut c, f).await;
            }
            tokio::time::sleep(Duration::from_millis(400)).await;
            assert_eq!(regs.0.lock().unwrap()[100], pattern(100), "the recorded writes were replayed and executed");
            panic!("the slave-side proxy started without its replay state");
        }),
        Err(e) => {
            assert!(e.contains(&replay.display().to_string()) && e.contains("provision"), "{e}");
            assert!(!replay.exists(), "nothing recreated");
        }
    }
}

/// A slave that answers function 6 by echoing it, and before answering sends what `file` holds
/// at that moment (the replay state as the slave sees the write) to the returned channel.
async fn floor_reading_slave(file: std::path::PathBuf) -> (SocketAddr, tokio::sync::mpsc::UnboundedReceiver<String>) {
    let (l, a) = bind().await;
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = l.accept().await {
            let (tx, file) = (tx.clone(), file.clone());
            tokio::spawn(async move {
                let mut b = [0u8; 12];
                while s.read_exact(&mut b).await.is_ok() {
                    let _ = tx.send(std::fs::read_to_string(&file).unwrap_or_else(|e| format!("unreadable: {e}")));
                    if s.write_all(&b).await.is_err() {
                        break;
                    }
                }
            });
        }
    });
    (a, rx)
}

/// For a write function code the slave side's replay state holds the write's counter on disk
/// before the slave sees the write (reads may wait for the periodic save).
#[test]
fn the_write_floor_is_on_disk_before_the_slave_sees_the_write() {
    rt().block_on(async {
        let d = tempfile::tempdir().unwrap();
        let master = MasterKey::random();
        let s = suite::find("Ascon-AEAD128").unwrap();
        let replay = replay_file(d.path(), &master, Side::Slave);
        let hop = |side: Side| {
            let store = CounterStore::open(&d.path().join(format!("ctr-{}", side.name())), 64, &master).unwrap();
            Hop::sealed(&s, &master, &store, 0, side, 1024, Some(&replay_file(d.path(), &master, side))).unwrap()
        };
        let (slave_addr, mut seen) = floor_reading_slave(replay.clone()).await;
        let (sp_addr, _sp) = proxy(Side::Slave, slave_addr, hop(Side::Slave)).await;
        let tap = Tap::start(sp_addr).await;
        let (mp_addr, _mp) = proxy(Side::Master, tap.addr, hop(Side::Master)).await;
        let mut m = TcpStream::connect(mp_addr).await.unwrap();
        for tid in 1..=3u16 {
            m.write_all(&write_request(tid, 100, tid)).await.unwrap();
            assert_eq!(answer(&mut m, 12, T).await.unwrap(), write_request(tid, 100, tid));
            let on_disk = seen.recv().await.unwrap();
            let f = tap.up_frames().pop().unwrap();
            let counter = u64::from_be_bytes(f[AT_COUNTER].try_into().unwrap());
            let want = format!("\ndevice 1296171008 accepted {counter}\n");
            assert!(on_disk.ends_with(&want), "write {tid}: the slave saw it while the replay state held {on_disk:?}");
        }
    });
}

/// The master side's counter state restored from a backup while the slave side runs: the
/// restored proxy must stop at the handshake — at most its hello reuses a counter on the wire,
/// and no ADU is delivered.
#[test]
fn a_rolled_back_master_side_stops_at_the_handshake() {
    rt().block_on(async {
        let d = tempfile::tempdir().unwrap();
        let master = MasterKey::random();
        let s = suite::find("Ascon-AEAD128").unwrap();
        let ctr = d.path().join("ctr-master");
        let hop = |side: Side| {
            let store = CounterStore::open(&d.path().join(format!("ctr-{}", side.name())), 4, &master).unwrap();
            Hop::sealed(&s, &master, &store, 0, side, 1024, Some(&replay_file(d.path(), &master, side))).unwrap()
        };
        let master_hop = hop(Side::Master);
        let backup = std::fs::read(&ctr).unwrap();
        let (slave_addr, _regs) = slave().await;
        let (sp_addr, _sp) = proxy(Side::Slave, slave_addr, hop(Side::Slave)).await;
        let tap = Tap::start(sp_addr).await;
        let run = |hop: Hop| async {
            let (l, a) = bind().await;
            let p = Arc::new(Proxy::new(Side::Master, l, tap.addr, hop, Limits::default(), String::new()));
            let (tx, rx) = tokio::sync::oneshot::channel::<()>();
            let task = tokio::spawn(p.clone().run(async move {
                let _ = rx.await;
            }));
            (a, p, tx, task)
        };
        let (a1, p1, stop1, task1) = run(master_hop).await;
        let mut m = TcpStream::connect(a1).await.unwrap();
        for tid in 1..=5u16 {
            m.write_all(&read_request(tid, 5, 2)).await.unwrap();
            assert_eq!(answer(&mut m, 13, T).await.unwrap(), read_response(tid, 5, 2));
        }
        drop(m);
        stop1.send(()).unwrap();
        let _ = task1.await.unwrap();
        drop(p1);
        // The master side's counter state goes back to the backup.
        std::fs::write(&ctr, &backup).unwrap();
        let (a2, p2, _stop2, task2) = run(hop(Side::Master)).await;
        let mut delivered = 0;
        for tid in 11..=13u16 {
            let Ok(mut m) = TcpStream::connect(a2).await else { continue };
            if m.write_all(&read_request(tid, 5, 2)).await.is_ok()
                && answer(&mut m, 13, Duration::from_millis(300)).await.is_some()
            {
                delivered += 1;
            }
        }
        let mut counters: Vec<u64> =
            tap.up_frames().iter().map(|f| u64::from_be_bytes(f[AT_COUNTER].try_into().unwrap())).collect();
        let n = counters.len();
        counters.sort();
        counters.dedup();
        assert!(n - counters.len() <= 1, "{} m → s counters sealed twice on the wire", n - counters.len());
        assert_eq!(delivered, 0, "a rolled-back master side was answered");
        assert_eq!(p2.report().rollbacks, 1, "{}", p2.report().line());
        let stopped = tokio::time::timeout(T, task2).await.expect("the restored proxy stops").unwrap();
        assert!(stopped.unwrap_err().contains("counter state is older than what the peer accepted"));
    });
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

/// Each response names the counter of the request it answers: the master side delivers a
/// response only for a request in flight on its connection with the same transaction id.
#[test]
fn a_response_bound_to_no_request_in_flight_is_refused() {
    rt().block_on(async {
        let d = tempfile::tempdir().unwrap();
        let master = MasterKey::random();
        let (hop_l, hop_addr) = bind().await;
        let (mp_addr, mp) = proxy(Side::Master, hop_addr, sealed_hop(d.path(), &master, Side::Master)).await;
        let mut m = TcpStream::connect(mp_addr).await.unwrap();
        m.write_all(&read_request(1, 5, 2)).await.unwrap();
        m.write_all(&read_request(2, 5, 2)).await.unwrap(); // pipelined
        let mut c = tokio::time::timeout(T, hop_l.accept()).await.unwrap().unwrap().0;
        let hello = recv_record(&mut c, T).await.unwrap();
        assert_eq!(ModbusHeader::parse(&hello).unwrap().counter, 0);
        let mut hs = HandSlave::reply(&mut c, &master, &hello, 0, None).await;
        assert_eq!(hs.peer_top, None);
        let (h1, a1) = hs.request(&recv_record(&mut c, T).await.unwrap()).unwrap();
        let (h2, a2) = hs.request(&recv_record(&mut c, T).await.unwrap()).unwrap();
        assert_eq!((h1.counter, h2.counter, a1, a2), (1, 2, read_request(1, 5, 2), read_request(2, 5, 2)));
        let quiet = Duration::from_millis(300);
        // Bound to a counter never sent, and to request 2 with request 1's transaction id.
        send_record(&mut c, &hs.response(1, 7, &read_response(1, 5, 2))).await;
        send_record(&mut c, &hs.response(2, 2, &read_response(1, 5, 2))).await;
        assert_eq!(answer(&mut m, 13, quiet).await, None, "an unbound response is delivered");
        // Request 2 answered first (pipelined), then request 1: both delivered.
        send_record(&mut c, &hs.response(3, 2, &read_response(2, 5, 2))).await;
        assert_eq!(answer(&mut m, 13, T).await.unwrap(), read_response(2, 5, 2));
        send_record(&mut c, &hs.response(4, 1, &read_response(1, 5, 2))).await;
        assert_eq!(answer(&mut m, 13, T).await.unwrap(), read_response(1, 5, 2));
        // Request 1 answered again, on a fresh counter: no longer in flight.
        send_record(&mut c, &hs.response(5, 1, &read_response(1, 5, 2))).await;
        assert_eq!(answer(&mut m, 13, quiet).await, None, "a request answered twice");
        assert_eq!(mp.report().unbound, 3, "{}", mp.report().line());
        assert_eq!(mp.report().delivered, 2);
    });
}

/// The write deadline by the handshake clocks: a write that says it was sealed at 0 ms, opened
/// 300 ms after the handshake, is older than a 100 ms deadline; one with the right age passes,
/// and a read as old passes too.
#[test]
fn a_stale_write_is_refused_by_the_handshake_clocks() {
    rt().block_on(async {
        let d = tempfile::tempdir().unwrap();
        let master = MasterKey::random();
        let (slave_addr, regs) = slave().await;
        let hop = sealed_hop(d.path(), &master, Side::Slave);
        hop.set_write_deadline(Duration::from_millis(100)).unwrap();
        let (sp_addr, sp) = proxy(Side::Slave, slave_addr, hop).await;
        let mut c = TcpStream::connect(sp_addr).await.unwrap();
        let mut hm = HandMaster::handshake(&mut c, &master, 0, None).await.unwrap();
        let t0 = std::time::Instant::now();
        tokio::time::sleep(Duration::from_millis(300)).await;
        send_record(&mut c, &hm.request(1, 0, &write_request(1, 100, 111))).await;
        assert_eq!(recv_record(&mut c, Duration::from_millis(300)).await, None, "a stale write is answered");
        assert_eq!(regs.0.lock().unwrap()[100], pattern(100));
        send_record(&mut c, &hm.request(2, 0, &read_request(2, 5, 2))).await;
        assert!(recv_record(&mut c, T).await.is_some(), "a read of the same age is served");
        let ms = t0.elapsed().as_millis() as u64;
        send_record(&mut c, &hm.request(3, ms, &write_request(3, 100, 222))).await;
        assert!(recv_record(&mut c, T).await.is_some(), "a fresh write is served");
        assert_eq!(regs.0.lock().unwrap()[100], 222);
        assert_eq!(sp.report().stale_writes, 1);
        assert!(hop_deadline_bounds());
    });
}

fn hop_deadline_bounds() -> bool {
    let h = Hop::Plain;
    h.set_write_deadline(Duration::ZERO).unwrap_err().starts_with("--write-deadline:")
        && h.set_write_deadline(Duration::from_secs(3601)).is_err()
        && h.set_write_deadline(Duration::from_secs(2)).is_ok()
}

/// The slave side's counter state restored from a backup: the master side's hello says it has
/// accepted a counter of the slave side's device that this slave-side process is only now
/// reaching, so the slave side seals nothing — no counter of it appears twice — and stops.
#[test]
fn a_rolled_back_slave_side_seals_nothing_and_stops() {
    rt().block_on(async {
        let d = tempfile::tempdir().unwrap();
        let master = MasterKey::random();
        let (slave_addr, _) = slave().await;
        let (sp_addr, sp) = proxy(Side::Slave, slave_addr, sealed_hop(d.path(), &master, Side::Slave)).await;
        let mut c = TcpStream::connect(sp_addr).await.unwrap();
        // The master side has accepted slave → master counter 10; this slave side's next is 0.
        let hm = HandMaster::handshake(&mut c, &master, 0, Some(10)).await;
        assert!(hm.is_none(), "the rolled-back slave side sealed a reply");
        assert!(closed_within(&mut c, T).await);
        assert_eq!((sp.report().rollbacks, sp.report().sent, sp.report().handshakes), (1, 0, 0));
        assert!(sp.hop.halted().unwrap().contains("rolled back") || sp.hop.halted().unwrap().contains("older"));
        // Nothing is sealed after: a consistent hello gets no reply either.
        let mut c = TcpStream::connect(sp_addr).await.unwrap();
        assert!(HandMaster::handshake(&mut c, &master, 1, None).await.is_none());
    });
}

/// The hop's record bound holds the largest ADU sealed under every link suite (before the
/// random-nonce suites it left no room for XChaCha20-Poly1305's 24-byte nonce).
#[test]
fn the_record_bound_fits_every_suite() {
    for s in crate::wire::suite::offered() {
        let need = crate::industrial::modbus::adu::MAX_ADU
            + crate::industrial::modbus::hop::MODBUS_HEADER_LEN
            + s.random_nonce_len()
            + s.tag_len(false);
        assert!(need <= super::proxy::MAX_RECORD, "{}: {need} > {}", s.name(), super::proxy::MAX_RECORD);
    }
}
