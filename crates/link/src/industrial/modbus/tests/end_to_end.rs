//! The sealed pair end to end: real peers through both proxies, forged, replayed and
//! reordered hop frames, malformed ADUs, and counters and floors across a restart.

use super::*;

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
