//! Connection bounds: when each side connects onward, deadlines, idle timeouts, the caps per
//! peer and overall, throttled refusal lines and the record bound.

use super::*;

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

/// At most one refusal line a second: the first is due, the next ones are counted into the
/// line after the second has passed.
#[test]
fn refusal_lines_are_throttled() {
    let t = crate::industrial::modbus::proxy::Throttle::default();
    assert_eq!(t.due(), Some(1));
    assert_eq!((t.due(), t.due(), t.due()), (None, None, None));
    std::thread::sleep(Duration::from_millis(1050));
    assert_eq!(t.due(), Some(4), "three held back and this one");
    assert_eq!(t.due(), None);
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
        assert!(
            need <= crate::industrial::modbus::proxy::MAX_RECORD,
            "{}: {need} > {}",
            s.name(),
            crate::industrial::modbus::proxy::MAX_RECORD
        );
    }
}
