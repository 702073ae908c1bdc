//! Issue 37 item 5: the hop bound to its connection (held-back and delayed writes through a
//! tap), the replay state on disk, and a rolled-back master side.

use super::*;

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
