//! The UDP relay (delay, duplication, reordering, bounded queue) inside a namespace pair: device side
//! A sends to the relay on B's veth address, the relay forwards to a receiver on B's loopback.
// Integration tests, helpers included: a panic is the failure report, as .clippy.toml
// allows in #[test] functions.
#![allow(clippy::unwrap_used)]
#[path = "../../../tests/support/required.rs"]
mod required;

use lwcbench_netimpair::relay::{grow_recv_buffer, ppm};
use lwcbench_netimpair::{Error, Mechanism, NetnsPair, RelayConfig, Side, UdpRelay};
use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

fn pair_or_skip() -> Option<NetnsPair> {
    match NetnsPair::create() {
        Ok(p) => Some(p),
        Err(Error::Unprivileged(m)) => {
            required::missing(&m);
            None
        }
        Err(e) => panic!("error: {e}"),
    }
}

struct Path {
    tx: UdpSocket,
    rx: UdpSocket,
    relay: UdpRelay,
}

fn path(pair: &NetnsPair, cfg: RelayConfig) -> Path {
    let rx = pair.in_ns(Side::B, || UdpSocket::bind("127.0.0.1:0")).unwrap().unwrap();
    let listen = SocketAddr::from((pair.addr(Side::B), 0));
    let relay = UdpRelay::start_in(pair, Side::B, listen, rx.local_addr().unwrap(), cfg).unwrap();
    let tx = pair.in_ns(Side::A, || UdpSocket::bind((pair.addr(Side::A), 0))).unwrap().unwrap();
    rx.set_read_timeout(Some(Duration::from_secs(10))).unwrap(); // hang guard only
                                                                 // Room for a whole burst (~330 datagrams): a full buffer would drop silently and spoil exact counts.
    assert!(grow_recv_buffer(&rx, 4 << 20));
    Path { tx, rx, relay }
}

fn recv_seq(rx: &UdpSocket) -> u32 {
    let mut buf = [0u8; 8];
    let n = rx.recv(&mut buf).expect("datagram did not arrive within 10 s");
    assert_eq!(n, 4);
    u32::from_be_bytes(buf[..4].try_into().unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn relay_delays_every_datagram_by_at_least_the_configured_delay() {
    let Some(pair) = pair_or_skip() else { return };
    let delay = Duration::from_millis(80);
    let cfg = RelayConfig { delay, ..RelayConfig::new(1) };
    let p = path(&pair, cfg);
    assert_eq!(p.relay.applied().len(), 1);
    assert_eq!((p.relay.applied()[0].condition, p.relay.applied()[0].mechanism), ("delay", Mechanism::Relay));
    let to = p.relay.local_addr();
    let (tx, rx) = (p.tx, p.rx);
    tokio::task::spawn_blocking(move || {
        let mut sent = Vec::new();
        for i in 0u32..20 {
            sent.push(Instant::now());
            tx.send_to(&i.to_be_bytes(), to).unwrap();
            std::thread::sleep(Duration::from_millis(5));
        }
        for _ in 0..20 {
            let i = recv_seq(&rx) as usize;
            let took = sent[i].elapsed();
            // Lower bound only: the relay must not forward before the delay has passed.
            assert!(took >= delay, "datagram {i} arrived after {took:?} < {delay:?}");
        }
    })
    .await
    .unwrap();
    let c = p.relay.stop().await;
    assert_eq!((c.received, c.forwarded, c.dropped_queue_full), (20, 20, 0));
}

/// The relay's documented decision rule, recomputed here from the seed: per datagram three draws
/// (duplicate, reorder, jitter); a held datagram is released behind its successor, which is not held.
/// Returns (duplicates, reorders, whether the last datagram would be left held).
fn expected(seed: u64, n: usize, dup_pct: f64, reorder_pct: f64) -> (u64, u64, bool) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (mut dups, mut reorders, mut held) = (0, 0, false);
    for _ in 0..n {
        let d = rng.next_u64() % 1_000_000 < ppm(dup_pct);
        let r = rng.next_u64() % 1_000_000 < ppm(reorder_pct);
        rng.next_u64();
        dups += u64::from(d);
        if held {
            reorders += 1;
            held = false;
        } else if r {
            held = true;
        }
    }
    (dups, reorders, held)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seeded_duplication_and_reordering_counts_are_exact() {
    let Some(pair) = pair_or_skip() else { return };
    let (seed, dup_pct, reorder_pct) = (0x5eed_u64, 10.0, 10.0);
    // Send enough datagrams that the last is not left held (the hold timeout then never matters).
    let mut n = 300;
    while expected(seed, n, dup_pct, reorder_pct).2 {
        n += 1;
    }
    let (dups, reorders, _) = expected(seed, n, dup_pct, reorder_pct);
    // 10 % of 300: the seed gives counts near 30 each; zero would mean the rule never fired.
    assert!(dups > 10 && reorders > 10, "seed gives too few events to test: {dups} {reorders}");
    let cfg = RelayConfig {
        duplicate_pct: dup_pct,
        reorder_pct,
        reorder_hold: Duration::from_secs(5),
        ..RelayConfig::new(seed)
    };
    let p = path(&pair, cfg);
    let to = p.relay.local_addr();
    let (tx, rx) = (p.tx, p.rx);
    let got = tokio::task::spawn_blocking(move || {
        for i in 0..n as u32 {
            tx.send_to(&i.to_be_bytes(), to).unwrap();
        }
        (0..n as u64 + dups).map(|_| recv_seq(&rx)).collect::<Vec<u32>>()
    })
    .await
    .unwrap();
    // Observed at the receiver: adjacent equal values are duplicates, descents are reorderings.
    let seen_dups = got.windows(2).filter(|w| w[0] == w[1]).count() as u64;
    let seen_reorders = got.windows(2).filter(|w| w[1] < w[0]).count() as u64;
    let mut distinct = got.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct, (0..n as u32).collect::<Vec<_>>(), "a datagram was lost or invented");
    assert_eq!((seen_dups, seen_reorders), (dups, reorders));
    let c = p.relay.stop().await;
    assert_eq!((c.received, c.duplicated, c.reordered, c.reorder_expired), (n as u64, dups, reorders, 0));
    assert_eq!(c.forwarded, n as u64 + dups);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn relay_queue_is_bounded_and_counts_what_it_drops() {
    let Some(pair) = pair_or_skip() else { return };
    let cfg = RelayConfig { delay: Duration::from_secs(2), queue_limit: 16, ..RelayConfig::new(7) };
    let p = path(&pair, cfg);
    let to = p.relay.local_addr();
    let (tx, rx) = (p.tx, p.rx);
    let got = tokio::task::spawn_blocking(move || {
        for i in 0u32..100 {
            tx.send_to(&i.to_be_bytes(), to).unwrap();
        }
        (0..16).map(|_| recv_seq(&rx)).collect::<Vec<u32>>()
    })
    .await
    .unwrap();
    // The first 16 fit; the 84 that arrived while the queue was full were dropped and counted.
    assert_eq!(got, (0..16).collect::<Vec<u32>>());
    let c = p.relay.stop().await;
    assert_eq!((c.received, c.forwarded, c.dropped_queue_full), (100, 16, 84));
}

#[test]
fn relay_rejects_jitter_above_delay() {
    let s = UdpSocket::bind("127.0.0.1:0").unwrap();
    let o = UdpSocket::bind("127.0.0.1:0").unwrap();
    let cfg = RelayConfig { jitter: Duration::from_millis(5), ..RelayConfig::new(0) };
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let _g = rt.enter();
    let e = UdpRelay::spawn(s, o, "127.0.0.1:9".parse().unwrap(), cfg, Side::B).err().unwrap();
    assert!(matches!(e, Error::Invalid(_)), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn relay_refuses_addresses_outside_the_pair() {
    let Some(pair) = pair_or_skip() else { return };
    let listen = SocketAddr::from((pair.addr(Side::B), 0));
    let outside: SocketAddr = "198.51.100.7:5683".parse().unwrap();
    let e = UdpRelay::start_in(&pair, Side::B, listen, outside, RelayConfig::new(0)).err().unwrap();
    assert!(e.to_string().contains("outside the test network"), "{e}");
    let e = UdpRelay::start_in(&pair, Side::B, outside, listen, RelayConfig::new(0)).err().unwrap();
    assert!(matches!(e, Error::Invalid(_)), "{e}");
}
