//! Toxiproxy inside the namespace pair: TCP latency (lower bound) and connection resets. Needs root and
//! `toxiproxy-server` (scripts/setup.sh --test builds it); skips only without root.
// Integration tests, helpers included: a panic is the failure report, as .clippy.toml
// allows in #[test] functions.
#![allow(clippy::unwrap_used)]
#[path = "../../../tests/support/required.rs"]
mod required;

use lwcbench_netimpair::conditions::UserSpace;
use lwcbench_netimpair::{Error, Mechanism, NetnsPair, Side, Toxiproxy};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
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

/// An echo server on B's loopback that answers every read with the same bytes.
fn echo_server(pair: &NetnsPair) -> SocketAddr {
    let l = pair.in_ns(Side::B, || TcpListener::bind("127.0.0.1:0")).unwrap().unwrap();
    let addr = l.local_addr().unwrap();
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { return };
            std::thread::spawn(move || {
                let mut buf = [0u8; 256];
                while let Ok(n) = s.read(&mut buf) {
                    if n == 0 || s.write_all(&buf[..n]).is_err() {
                        break;
                    }
                }
            });
        }
    });
    addr
}

#[test]
fn toxiproxy_latency_delays_a_tcp_round_trip_by_at_least_the_delay() {
    let Some(pair) = pair_or_skip() else { return };
    let upstream = echo_server(&pair);
    let tp = Toxiproxy::start(&pair, Side::B, 1).unwrap();
    let listen = SocketAddr::from((pair.addr(Side::B), 18830));
    tp.proxy("mqtt", listen, upstream).unwrap();
    let u = UserSpace { delay_ms: 150, jitter_ms: 20, ..Default::default() };
    let applied = tp.apply_user_space("mqtt", &u).unwrap();
    assert_eq!(applied.len(), 2);
    assert!(applied.iter().all(|a| a.mechanism == Mechanism::Toxiproxy && a.side == Side::B));

    let mut c = pair.in_ns(Side::A, || TcpStream::connect(listen)).unwrap().unwrap();
    c.set_read_timeout(Some(Duration::from_secs(10))).unwrap(); // hang guard only
    let start = Instant::now();
    c.write_all(b"hello through toxiproxy").unwrap();
    let mut buf = [0u8; 23];
    c.read_exact(&mut buf).unwrap();
    let rtt = start.elapsed();
    assert_eq!(&buf, b"hello through toxiproxy");
    // Lower bound only: the latency toxic holds client→server data 150 ms ± 20 ms, so >= 130 ms.
    assert!(rtt >= Duration::from_millis(130), "round trip {rtt:?} through a 150 ± 20 ms latency toxic");
}

#[test]
fn toxiproxy_reset_peer_resets_the_connection() {
    let Some(pair) = pair_or_skip() else { return };
    let upstream = echo_server(&pair);
    let tp = Toxiproxy::start(&pair, Side::B, 2).unwrap();
    let listen = SocketAddr::from((pair.addr(Side::B), 18831));
    tp.proxy("resets", listen, upstream).unwrap();
    tp.toxic("resets", "reset_peer", "upstream", serde_json::json!({"timeout": 0})).unwrap();
    let mut c = pair.in_ns(Side::A, || TcpStream::connect(listen)).unwrap().unwrap();
    c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let _ = c.write_all(b"x");
    let mut buf = [0u8; 8];
    let r = c.read(&mut buf);
    // A reset shows as ECONNRESET (or as end of stream when it raced the write); never as echoed data.
    match r {
        Err(e) => assert_eq!(e.kind(), std::io::ErrorKind::ConnectionReset, "{e}"),
        Ok(n) => assert_eq!(n, 0, "data came back through a reset_peer toxic"),
    }
}

#[test]
fn toxiproxy_refuses_bad_names_and_reordering() {
    let Some(pair) = pair_or_skip() else { return };
    let tp = Toxiproxy::start(&pair, Side::B, 3).unwrap();
    let l = SocketAddr::from((pair.addr(Side::B), 18832));
    assert!(matches!(tp.proxy("a/../b", l, l), Err(Error::Invalid(_))));
    // The safety rule: nothing is proxied to or from an address outside the pair.
    let outside: SocketAddr = "192.0.2.1:1883".parse().unwrap();
    let e = tp.proxy("out", l, outside).unwrap_err();
    assert!(e.to_string().contains("outside the test network"), "{e}");
    assert!(matches!(tp.proxy("out", outside, l), Err(Error::Invalid(_))));
    let u = UserSpace { reorder_pct: 1.0, ..Default::default() };
    assert!(matches!(tp.apply_user_space("x", &u), Err(Error::Invalid(_))));
    // An API error (unknown proxy) comes back as one line naming the request.
    let e = tp.toxic("nosuch", "latency", "upstream", serde_json::json!({"latency": 1})).unwrap_err();
    assert!(e.to_string().contains("/proxies/nosuch/toxics") && !e.to_string().contains('\n'), "{e}");
}
