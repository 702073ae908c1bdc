//! The camera's parts over MQTT or UDP to the server's queue, and the wait for the last parts.

use super::*;

/// After the camera: wait until every part sent was taken, or (UDP) nothing came for `idle`,
/// or the drain timeout.
pub(super) fn drain(sent: u64, taken: &AtomicU64, idle: Option<Duration>, timeout: Duration) -> bool {
    let deadline = Instant::now() + timeout;
    let mut last = (taken.load(Ordering::Acquire), Instant::now());
    loop {
        let t = taken.load(Ordering::Acquire);
        if t >= sent {
            return false;
        }
        if t != last.0 {
            last = (t, Instant::now());
        } else if idle.is_some_and(|i| last.1.elapsed() > i) {
            return false;
        }
        if Instant::now() >= deadline {
            return true;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

pub(super) fn run_mqtt(
    cfg: &VideoConfig,
    b: &BrokerAddr,
    shoot: impl FnOnce(PartSink) -> Result<Vec<Shot>, String>,
    tx: SyncSender<Vec<u8>>,
    taken: &AtomicU64,
) -> Result<Sent, String> {
    let rt = crate::transport::runtime()?;
    let t = topic(&cfg.session, cfg.device);
    let (client, mut ev) = AsyncClient::new(mqtt_options(&format!("lwcbench-video-srv-{}", cfg.session), b), 64);
    let (ready_tx, ready_rx) = std::sync::mpsc::channel::<Result<(), String>>();
    let sub = t.clone();
    let sub_client = client.clone();
    let broker = b.describe();
    let part_bytes = cfg.part_bytes;
    let listener = rt.spawn(async move {
        let mut ready = Some(ready_tx);
        loop {
            match ev.poll().await {
                Ok(Event::Incoming(Packet::ConnAck(_))) => {
                    if sub_client.subscribe(sub.clone(), QoS::AtLeastOnce).await.is_err() {
                        return;
                    }
                }
                Ok(Event::Incoming(Packet::SubAck(_))) => {
                    if let Some(r) = ready.take() {
                        let _ = r.send(Ok(()));
                    }
                }
                Ok(Event::Incoming(Packet::Publish(p))) => {
                    let m = queued(&p.payload, part_bytes);
                    let tx = tx.clone();
                    if tokio::task::block_in_place(move || tx.send(m)).is_err() {
                        return;
                    }
                }
                Ok(_) => {}
                Err(e) => {
                    if let Some(r) = ready.take() {
                        let _ = r.send(Err(format!("--broker: cannot reach {broker}: {e}")));
                        return;
                    }
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        }
    });
    let up = ready_rx.recv_timeout(Duration::from_secs(5));
    if !matches!(up, Ok(Ok(()))) {
        listener.abort();
        return Err(match up {
            Ok(Err(e)) => e,
            _ => format!("--broker: no subscription at {} within 5 s", b.describe()),
        });
    }
    let conn = rt.block_on(mqtt_connect(&format!("lwcbench-video-cam-{}", cfg.session), b))?;
    let pubc = conn.client.clone();
    for m in &cfg.inject {
        rt.block_on(pubc.publish(t.clone(), QoS::AtLeastOnce, false, m.clone()))
            .map_err(|e| format!("mqtt publish: {e}"))?;
    }
    let shots = shoot(&mut |p| {
        rt.block_on(pubc.publish(t.clone(), QoS::AtLeastOnce, false, p)).map_err(|e| format!("mqtt publish: {e}"))
    });
    let shots = match shots {
        Ok(s) => s,
        Err(e) => {
            listener.abort();
            conn.task.abort();
            return Err(e);
        }
    };
    let sent: u64 = shots.iter().map(|s| u64::from(s.parts)).sum();
    let timed_out = drain(sent, taken, None, cfg.drain_timeout);
    listener.abort();
    conn.task.abort();
    rt.shutdown_timeout(Duration::from_secs(1));
    Ok((shots, Drops::default(), format!("camera -> MQTT QoS 1 ({}) -> server", b.describe()), Vec::new(), timed_out))
}

/// `SO_MEMINFO` (asm-generic/socket.h; the `libc` crate exports only its offsets).
pub(super) const SO_MEMINFO: libc::c_int = 55;

/// Datagrams the kernel dropped at `sock` since it was opened (its receive buffer full, a bad
/// checksum): the socket's own drop counter, `SK_MEMINFO_DROPS` of `SO_MEMINFO` (Linux 4.12+).
/// Unlike `SO_RXQ_OVFL`, which reports it with the next datagram read, this includes drops
/// after the last datagram.
pub(crate) fn socket_drops(sock: &UdpSocket) -> Option<u64> {
    use std::os::fd::AsRawFd;
    let mut info = [0u32; libc::SK_MEMINFO_DROPS as usize + 1];
    let mut len = std::mem::size_of_val(&info) as libc::socklen_t;
    // SAFETY: valid descriptor; the kernel writes at most `len` bytes into `info` and sets `len`.
    let r =
        unsafe { libc::getsockopt(sock.as_raw_fd(), libc::SOL_SOCKET, SO_MEMINFO, info.as_mut_ptr().cast(), &mut len) };
    (r == 0 && len as usize == std::mem::size_of_val(&info)).then(|| u64::from(info[libc::SK_MEMINFO_DROPS as usize]))
}

pub(super) fn bind(pair: Option<&NetnsPair>, side: Side, ip: Ipv4Addr) -> Result<UdpSocket, String> {
    let b = || UdpSocket::bind((ip, 0));
    let s = match pair {
        Some(p) => p.in_ns(side, b).map_err(|e| e.to_string())?,
        None => b(),
    };
    s.map_err(|e| format!("udp: cannot bind {ip}: {e}"))
}

/// Send probe datagrams from `cam` to `to` (the `srv` socket) until one arrives, for at most
/// 10 s, then discard the probes still queued; an error names the path that never carried one.
pub(super) fn wait_path(cam: &UdpSocket, srv: &UdpSocket, to: SocketAddr) -> Result<(), String> {
    const PROBE: &[u8] = b"lwcbench video path probe";
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut buf = [0u8; 64];
    loop {
        let _ = cam.send_to(PROBE, to);
        // srv has a 20 ms read timeout.
        if srv.recv_from(&mut buf).is_ok_and(|(n, _)| &buf[..n] == PROBE) {
            break;
        }
        if Instant::now() > deadline {
            return Err(format!("udp: the camera's path to {to} carried no datagram within 10 s"));
        }
    }
    srv.set_nonblocking(true).map_err(|e| format!("udp: {e}"))?;
    while srv.recv_from(&mut buf).is_ok() {}
    srv.set_nonblocking(false).map_err(|e| format!("udp: {e}"))
}

pub(super) fn run_udp(
    cfg: &VideoConfig,
    net: Option<&(Conditions, Backend)>,
    shoot: impl FnOnce(PartSink) -> Result<Vec<Shot>, String>,
    tx: SyncSender<Vec<u8>>,
    taken: &AtomicU64,
) -> Result<Sent, String> {
    let pair = match net {
        Some(_) => Some(NetnsPair::create().map_err(|e| e.to_string())?),
        None => None,
    };
    let mut applied = Vec::new();
    if let (Some(p), Some((c, backend))) = (&pair, net) {
        let plan = conditions::apply(p, Side::A, c, conditions::Transport::Udp, *backend).map_err(|e| e.to_string())?;
        if !plan.user_space.is_none() {
            return Err(
                "--video: delay, jitter, reordering and duplication need the kernel's netem here (this kernel \
                 lacks it or --net-backend fallback was given); --loss and --bandwidth work without it"
                    .into(),
            );
        }
        applied = plan.applied;
    }
    let (ip_srv, ip_cam) = if pair.is_some() { (ADDR_B, ADDR_A) } else { (Ipv4Addr::LOCALHOST, Ipv4Addr::LOCALHOST) };
    let srv = bind(pair.as_ref(), Side::B, ip_srv)?;
    // Room for a few whole frames' bursts of datagrams while the receiver thread waits for a core.
    let rcvbuf = cfg.udp_recv_buffer.map_or(32 << 20, |b| b.min(i32::MAX as usize) as i32);
    lwcbench_netimpair::relay::grow_recv_buffer(&srv, rcvbuf);
    srv.set_read_timeout(Some(Duration::from_millis(20))).map_err(|e| format!("udp: {e}"))?;
    let to: SocketAddr = srv.local_addr().map_err(|e| format!("udp: {e}"))?;
    let cam_sock = bind(pair.as_ref(), Side::A, ip_cam)?;
    // A new veth pair carries nothing until the kernel's link watch activates its queues (up to
    // about a second after it is set up, later on a busy machine): datagrams sent before then
    // vanish uncounted. So one probe must cross first, and the injected-loss counters start
    // after it.
    let mut injected0 = 0;
    if let Some(p) = &pair {
        wait_path(&cam_sock, &srv, to)?;
        injected0 = conditions::nft_dropped(p, Side::B).map_err(|e| e.to_string())? + qdisc_drops(p, Side::A);
    }
    let kernel0 = socket_drops(&srv).unwrap_or(0);
    let stop = Arc::new(AtomicBool::new(false));
    let st = stop.clone();
    let part_bytes = cfg.part_bytes;
    let receiver = std::thread::Builder::new()
        .name("video-udp".into())
        .spawn(move || {
            let mut buf = vec![0u8; 65_536];
            let mut open = true;
            while open && !st.load(Ordering::Acquire) {
                if let Ok((len, _)) = srv.recv_from(&mut buf) {
                    open = tx.send(queued(&buf[..len], part_bytes)).is_ok();
                }
            }
            // What still waits in the socket buffer arrived: hand it over, or closing the socket
            // would lose it uncounted (a receiver starved of a core leaves a lot there). Bounded
            // in time: an outsider may keep sending.
            let until = Instant::now() + Duration::from_secs(2);
            if open && srv.set_nonblocking(true).is_ok() {
                while Instant::now() < until {
                    let Ok((len, _)) = srv.recv_from(&mut buf) else { break };
                    if tx.send(queued(&buf[..len], part_bytes)).is_err() {
                        break;
                    }
                }
            }
            socket_drops(&srv).unwrap_or(0).saturating_sub(kernel0)
        })
        .map_err(|e| format!("cannot start the UDP receiver thread: {e}"))?;
    let mut send_errors = 0u64;
    for m in &cfg.inject {
        let _ = cam_sock.send_to(m, to);
    }
    let shots = shoot(&mut |p| {
        // A full socket buffer is loss on this transport, counted, not an error.
        if cam_sock.send_to(&p, to).is_err() {
            send_errors += 1;
        }
        Ok(())
    });
    let sent: u64 = shots.as_ref().map_or(0, |s| s.iter().map(|s| u64::from(s.parts)).sum());
    // With loss nothing may come for a while: wait past the frame deadline before giving up.
    let idle = cfg.deadline.max(Duration::from_millis(500));
    let timed_out = shots.is_ok() && drain(sent, taken, Some(idle), cfg.drain_timeout);
    stop.store(true, Ordering::Release);
    let kernel = receiver.join().unwrap_or(0);
    let shots = shots?;
    // The namespace's UDP InErrors are not added: they count the socket's drops a second time.
    let injected = match &pair {
        Some(p) => (conditions::nft_dropped(p, Side::B).map_err(|e| e.to_string())? + qdisc_drops(p, Side::A))
            .saturating_sub(injected0),
        None => 0,
    };
    let counted = Drops { injected, kernel, send_errors };
    let path = match &pair {
        Some(_) => format!("camera (ns A, {ADDR_A}) -> UDP -> server (ns B, {to})"),
        None => format!("camera -> UDP on loopback -> server ({to})"),
    };
    if let Some(p) = pair {
        p.teardown().map_err(|e| e.to_string())?;
    }
    Ok((shots, counted, path, applied, timed_out))
}
