//! Proxies against a master or slave side driven by hand: response binding, stale writes and
//! a rolled-back slave side.

use super::*;

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
