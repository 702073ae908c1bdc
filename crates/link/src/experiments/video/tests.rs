use super::*;
use crate::wire::keys::MasterKey;
use crate::wire::suite;
use crate::wire::video::seal_frame;

/// `frames` 320×240 4:2:0 frames (115,200 B) of pseudo-random bytes (xorshift32).
fn clip(frames: usize) -> Arc<Clip> {
    let mut x = 0x9E37_79B9u32;
    let data = (0..frames * 115_200)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect();
    Arc::new(Clip {
        name: "noise".into(),
        path: "noise.y4m".into(),
        width: 320,
        height: 240,
        colourspace: "420jpeg".into(),
        fps: (25, 1),
        frame_bytes: 115_200,
        frames,
        data: Arc::new(data),
    })
}

fn ascon() -> Suite {
    suite::find("Ascon-AEAD128").unwrap()
}

/// A run of `frames` frames over UDP on loopback with the key `dir/k` (made by the first run).
fn udp(dir: &std::path::Path, frames: u32) -> VideoConfig {
    VideoConfig {
        suite: ascon(),
        unauthenticated: false,
        clip: clip(2),
        frames,
        fps: 100.0,
        part_bytes: UDP_PART_BYTES,
        transport: VideoTransport::Udp(None),
        key_file: dir.join("k"),
        counter_file: dir.join("k.counters"),
        counter_block: 1024,
        window: 1024,
        deadline: Duration::from_secs(1),
        drain_timeout: Duration::from_secs(30),
        session: "test".into(),
        device: 0,
        inject: Vec::new(),
        udp_recv_buffer: None,
    }
}

/// Frame 0 of `clip` sealed for device 0 under `key_file` with counters from `first`: the
/// same bytes a session whose camera started at `first` sent.
fn sealed(key_file: &std::path::Path, clip: &Clip, first: u64) -> Vec<Vec<u8>> {
    let s = ascon();
    let key = MasterKey::read(key_file).unwrap().cipher_key(Proto::Video, 0, s.id, s.key_len());
    let mut k = Keyed::new(&s, &key, Proto::Video, false).unwrap();
    let mut c = first;
    seal_frame(&mut k, 0, 0, clip.frame(0), UDP_PART_BYTES, false, || {
        c += 1;
        Ok(c - 1)
    })
    .unwrap()
}

/// Issue 36 item 4: refused parts must not count toward the parts the run waits for, or
/// 100 forged parts end the drain before the camera's last parts arrived.
#[test]
fn refused_parts_do_not_count_as_arrived() {
    let s = ascon();
    let key = [5u8; 16];
    let taken = Arc::new(AtomicU64::new(0));
    let mut srv = Server {
        re: Reassembler::new(
            0,
            Keyed::new(&s, &key, Proto::Video, false).unwrap(),
            false,
            1024,
            MAX_IN_FLIGHT,
            u64::MAX,
        )
        .unwrap(),
        clip: clip(1),
        delivered_ns: vec![None; 1],
        mismatch: vec![false; 1],
        lost: vec![None; 1],
        parts_got: vec![0; 1],
        taken: taken.clone(),
        replay: None,
        marks: None,
        saved_at: Instant::now(),
        save_error: None,
    };
    let mut c = 0u64;
    let parts = seal_frame(
        &mut Keyed::new(&s, &key, Proto::Video, false).unwrap(),
        0,
        0,
        srv.clip.frame(0),
        1472,
        false,
        || {
            c += 1;
            Ok(c - 1)
        },
    )
    .unwrap();
    // 81 parts (hand count in wire/video.rs); 100 forgeries of part 0 with other counters
    assert_eq!(parts.len(), 81);
    for i in 0..100u64 {
        let mut f = parts[0].clone();
        f[7..15].copy_from_slice(&(1000 + i).to_be_bytes());
        srv.take(&f);
    }
    assert_eq!(taken.load(Ordering::Acquire), 0, "forged parts counted as arrived");
    for p in &parts {
        srv.take(p);
    }
    assert_eq!(taken.load(Ordering::Acquire), 81);
    assert_eq!(srv.re.tally.count(Refusal::BadTag), 100);
    assert_eq!(srv.parts_got[0], 81);
    assert!(srv.delivered_ns[0].is_some() && !srv.mismatch[0]);
}

/// Issue 36 items 5 and 4: a part recorded in an earlier session under the same key is
/// refused in a later one (whose window starts empty), a forged one too, and neither is a
/// received part.
#[test]
fn parts_of_an_earlier_session_are_refused_as_replays() {
    let d = tempfile::tempdir().unwrap();
    let c1 = udp(d.path(), 2);
    let r1 = run(&c1).unwrap();
    assert_eq!((r1.summary.delivered, r1.summary.parts_sent), (2, 162));
    // The first session's frame 0 byte for byte: a new key's counters start at 0.
    let replayed = sealed(&c1.key_file, &c1.clip, 0);
    // and 100 forgeries: part 0 with counters above anything sealed (its tag no longer fits)
    let forged: Vec<Vec<u8>> = (0..100u64)
        .map(|i| {
            let mut f = replayed[0].clone();
            f[7..15].copy_from_slice(&(1 << 40 | i).to_be_bytes());
            f
        })
        .collect();
    let mut c2 = udp(d.path(), 2);
    c2.inject = [forged, replayed].concat();
    let s = run(&c2).unwrap().summary;
    assert_eq!((s.frames_sent, s.delivered, s.lost), (2, 2, 0));
    assert_eq!((s.parts_sent, s.parts_received, s.parts_dropped, s.uncounted_drops), (162, 162, 0, 0));
    assert_eq!((s.refused, s.refused_replay, s.refused_bad_tag, s.ignored_parts), (181, 81, 100, 0));
    // Session 1 accepted counters 0..=161 (2 × 81 parts), session 2 1024..=1185 (its block).
    let state = std::fs::read_to_string(d.path().join("k.video-replay")).unwrap();
    assert!(state.ends_with("\ndevice 0 accepted 1185\n"), "{state}");
}

/// The video server keeps the key's accepted marks equal to KEY.video-replay (session 1:
/// counters 0..=161 for 2 frames of 81 parts), and takes the higher of the two as its floor:
/// with `video 0 1100` written in KEY.accepted by hand, session 2's parts (counters
/// 1024..=1104, its block) up to 1100 are refused as replays, so its one frame is lost.
#[test]
fn the_accepted_marks_are_the_video_floor_too() {
    let d = tempfile::tempdir().unwrap();
    assert_eq!(run(&udp(d.path(), 2)).unwrap().summary.delivered, 2);
    let fp = MasterKey::read(&d.path().join("k")).unwrap().fingerprint();
    let acc = d.path().join("k.accepted");
    let text = std::fs::read_to_string(&acc).unwrap();
    assert_eq!(text, format!("lwcbench-link-accepted v1\nkey {fp}\nvideo 0 161\n"));
    std::fs::write(&acc, text.replace("video 0 161", "video 0 1100")).unwrap();
    let s = run(&udp(d.path(), 1)).unwrap().summary;
    assert_eq!((s.delivered, s.refused_replay, s.parts_received), (0, 77, 4));
}

/// Without a replay state, a key that has sealed before (its counter state exists) refuses
/// every counter below this session's block: here the first session's parts.
#[test]
fn a_missing_replay_state_refuses_everything_the_key_may_have_sealed() {
    let d = tempfile::tempdir().unwrap();
    let c1 = udp(d.path(), 1);
    assert_eq!(run(&c1).unwrap().summary.delivered, 1);
    std::fs::remove_file(d.path().join("k.video-replay")).unwrap();
    let mut c2 = udp(d.path(), 1);
    c2.inject = sealed(&c1.key_file, &c1.clip, 0);
    // counters 900..=980: reserved by the first session (its block 0..1024), never sent
    c2.inject.extend(sealed(&c1.key_file, &c1.clip, 900));
    let s = run(&c2).unwrap().summary;
    assert_eq!((s.delivered, s.parts_received, s.refused_replay, s.refused), (1, 81, 162, 162));
}

/// The socket's drop counter: datagrams sent to a full receive buffer (nothing read yet) are
/// the ones missing when it is read out.
#[test]
fn socket_drops_count_what_a_full_buffer_dropped() {
    let rx = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    lwcbench_netimpair::relay::grow_recv_buffer(&rx, 4096);
    let tx = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    assert_eq!(socket_drops(&rx), Some(0));
    for _ in 0..200 {
        tx.send_to(&[0u8; 1000], rx.local_addr().unwrap()).unwrap();
    }
    rx.set_nonblocking(true).unwrap();
    let mut got = 0u64;
    while rx.recv_from(&mut [0u8; 2000]).is_ok() {
        got += 1;
    }
    let dropped = socket_drops(&rx).unwrap();
    assert!(got > 0 && dropped > 0, "got {got}, dropped {dropped}");
    assert_eq!(got + dropped, 200);
}

/// Issue 36 item 10: a receiver whose socket buffer overflows (a tiny SO_RCVBUF and
/// bursts of 81 datagrams) loses parts, and every one is counted as a kernel drop.
#[test]
fn kernel_receive_drops_are_counted() {
    for _ in 0..3 {
        let d = tempfile::tempdir().unwrap();
        let mut c = udp(d.path(), 20);
        c.fps = 1000.0;
        c.deadline = Duration::from_millis(200);
        c.udp_recv_buffer = Some(4096);
        let s = run(&c).unwrap().summary;
        assert_eq!(s.parts_sent, 20 * 81);
        assert_eq!(s.parts_dropped, s.counted_drops, "{s:?}");
        assert_eq!((s.parts_dropped, s.uncounted_drops, s.injected_drops), (s.kernel_drops, 0, 0), "{s:?}");
        if s.parts_dropped > 0 {
            return;
        }
    }
    panic!("the receiver kept up with a 4 KiB socket buffer in three runs: nothing overflowed");
}
