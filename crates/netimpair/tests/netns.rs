//! Namespace pair, teardown and the kernel mechanisms (nftables loss, tbf). These need root; they skip
//! with a message only when the process lacks CAP_NET_ADMIN/CAP_SYS_ADMIN (CI runs them as root).
// Integration tests, helpers included: a panic is the failure report, as .clippy.toml
// allows in #[test] functions.
#![allow(clippy::unwrap_used)]
#[path = "../../../tests/support/required.rs"]
mod required;

use lwcbench_netimpair::{
    apply, netns, nft_dropped, Backend, Conditions, Error, Mechanism, NetnsPair, Side, Transport,
};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::process::Command;
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

fn listed(name: &str) -> bool {
    netns::list_namespaces().unwrap().iter().any(|n| n == name)
}

#[test]
fn pair_is_created_and_udp_echo_crosses_the_veth() {
    let Some(pair) = pair_or_skip() else { return };
    assert!(listed(pair.namespace(Side::A)) && listed(pair.namespace(Side::B)));
    let server = pair.in_ns(Side::B, || UdpSocket::bind((pair.addr(Side::B), 0))).unwrap().unwrap();
    let client = pair.in_ns(Side::A, || UdpSocket::bind((pair.addr(Side::A), 0))).unwrap().unwrap();
    let server_addr = server.local_addr().unwrap();
    let echo = std::thread::spawn(move || {
        server.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut buf = [0u8; 64];
        let (n, from) = server.recv_from(&mut buf).unwrap();
        server.send_to(&buf[..n], from).unwrap();
        from
    });
    client.set_read_timeout(Some(Duration::from_secs(5))).unwrap(); // hang guard only
    client.send_to(b"ping across veth", server_addr).unwrap();
    let mut buf = [0u8; 64];
    let (n, from) = client.recv_from(&mut buf).unwrap();
    assert_eq!(&buf[..n], b"ping across veth");
    assert_eq!(from, server_addr);
    // The echo came from A's veth address: the datagram really crossed the pair.
    assert_eq!(echo.join().unwrap(), client.local_addr().unwrap());
}

#[test]
fn namespaces_cannot_reach_addresses_outside_the_pair() {
    let Some(pair) = pair_or_skip() else { return };
    // No default route inside the namespace: sending to any other address fails at once.
    let r = pair.in_ns(Side::A, || UdpSocket::bind("0.0.0.0:0").and_then(|s| s.send_to(b"x", "192.0.2.1:9"))).unwrap();
    assert_eq!(r.unwrap_err().raw_os_error(), Some(libc_enetunreach()));
}

fn libc_enetunreach() -> i32 {
    101 // ENETUNREACH on Linux (asm-generic/errno.h)
}

#[test]
fn teardown_leaves_no_namespace_also_after_a_panic() {
    let Some(pair) = pair_or_skip() else { return };
    let names = [pair.namespace(Side::A).to_owned(), pair.namespace(Side::B).to_owned()];
    pair.teardown().unwrap();
    assert!(!listed(&names[0]) && !listed(&names[1]));

    let mut names = Vec::new();
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let pair = NetnsPair::create().unwrap();
        names = vec![pair.namespace(Side::A).to_owned(), pair.namespace(Side::B).to_owned()];
        panic!("deliberate panic with a live pair");
    }));
    assert!(r.is_err());
    assert_eq!(names.len(), 2);
    assert!(names.iter().all(|n| !listed(n)), "namespaces left after a panic: {names:?}");
}

#[test]
fn stale_namespaces_of_dead_runs_are_removed_and_others_kept() {
    let Some(_pair) = pair_or_skip() else { return };
    // A pid that just exited stands for a run killed with SIGKILL.
    let mut child = Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    let stale = format!("lwcb-{dead}-0-a");
    let foreign = format!("lwcbx-{dead}-0-a"); // not one of ours: must survive
    assert!(Command::new("ip").args(["netns", "add", &foreign]).status().unwrap().success());
    // A program the killed run left inside its namespace (as a broker or Toxiproxy would be). Another
    // test's cleanup may remove the stale namespace before the program enters it: then set up again.
    let mut orphan = None;
    for _ in 0..5 {
        let _ = Command::new("ip").args(["netns", "add", &stale]).status().unwrap();
        let mut child = Command::new("ip").args(["netns", "exec", &stale, "sleep", "30"]).spawn().unwrap();
        let t0 = Instant::now();
        loop {
            let pids = Command::new("ip").args(["netns", "pids", &stale]).output().unwrap().stdout;
            if !pids.is_empty() {
                orphan = Some(child);
                break;
            }
            if child.try_wait().unwrap().is_some() || t0.elapsed() > Duration::from_secs(5) {
                let _ = child.kill();
                let _ = child.wait();
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        if orphan.is_some() {
            break;
        }
    }
    let mut orphan = orphan.expect("could not start a program inside the stale namespace");
    let live = NetnsPair::create().unwrap();
    let t0 = Instant::now();
    let status = loop {
        if let Some(s) = orphan.try_wait().unwrap() {
            break Some(s);
        }
        if t0.elapsed() > Duration::from_secs(5) {
            orphan.kill().unwrap();
            break None;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.and_then(|s| s.signal()), Some(9), "the orphan in the stale namespace was not killed");
    let kept = listed(&foreign);
    Command::new("ip").args(["netns", "del", &foreign]).status().unwrap();
    assert!(!listed(&stale), "stale namespace {stale} survived");
    assert!(kept, "a namespace the tool did not create was removed");
    assert!(listed(live.namespace(Side::A)));
}

#[test]
fn nftables_loss_of_50_percent_drops_about_half_and_counts_every_drop() {
    let Some(pair) = pair_or_skip() else { return };
    let c = Conditions { loss_pct: 50.0, ..Default::default() };
    // Fallback forces nftables even where netem exists, so this tests the same mechanism everywhere.
    let plan = apply(&pair, Side::A, &c, Transport::Udp, Backend::Fallback).unwrap();
    assert_eq!(plan.applied.len(), 1);
    assert_eq!(plan.applied[0].mechanism, Mechanism::Nftables);
    assert_eq!(plan.applied[0].side, Side::B);

    let rx = pair.in_ns(Side::B, || UdpSocket::bind((pair.addr(Side::B), 0))).unwrap().unwrap();
    let tx = pair.in_ns(Side::A, || UdpSocket::bind((pair.addr(Side::A), 0))).unwrap().unwrap();
    let to = rx.local_addr().unwrap();
    const SENT: u64 = 200;
    for i in 0..SENT {
        tx.send_to(&i.to_be_bytes(), to).unwrap(); // the drop is silent for the sender
    }
    // Read until 500 ms of silence (bounded: at most SENT datagrams can arrive).
    rx.set_read_timeout(Some(Duration::from_millis(500))).unwrap();
    let mut seen = std::collections::BTreeSet::new();
    let mut buf = [0u8; 16];
    while let Ok(n) = rx.recv(&mut buf) {
        assert_eq!(n, 8);
        assert!(seen.insert(u64::from_be_bytes(buf[..8].try_into().unwrap())), "duplicate datagram");
    }
    let delivered = seen.len() as u64;
    let dropped = nft_dropped(&pair, Side::B).unwrap();
    // Exact: every datagram is either delivered or counted by the rule (loss is never silent).
    assert_eq!(delivered + dropped, SENT, "delivered {delivered} + dropped {dropped}");
    // Delivered ~ Binomial(200, 0.5): mean 100, sd sqrt(200*0.5*0.5) = 7.07. 60..=140 is ±40 = 5.66 sd,
    // so a correct rule fails this with probability ~1.5e-8 (two-sided normal tail), while "no loss"
    // (200) or "drop all" (0) fails it for certain.
    assert!((60..=140).contains(&delivered), "delivered {delivered} of {SENT} at 50 % loss");
}

#[test]
fn tbf_rate_limit_slows_a_tcp_transfer_to_at_most_the_rate() {
    let Some(pair) = pair_or_skip() else { return };
    let c = Conditions { rate_kbit: Some(2000), ..Default::default() };
    let plan = apply(&pair, Side::A, &c, Transport::Tcp, Backend::Auto).unwrap();
    assert_eq!(plan.applied.len(), 1);
    assert_eq!(plan.applied[0].mechanism, Mechanism::Tbf);
    assert!(plan.user_space.is_none());

    let listener = pair.in_ns(Side::B, || TcpListener::bind((pair.addr(Side::B), 0))).unwrap().unwrap();
    let addr: SocketAddr = listener.local_addr().unwrap();
    const BYTES: usize = 250_000;
    let sink = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let mut total = 0;
        let mut buf = vec![0u8; 65536];
        loop {
            let n = s.read(&mut buf).unwrap();
            if n == 0 {
                break total;
            }
            total += n;
        }
    });
    let mut s = pair.in_ns(Side::A, || TcpStream::connect(addr)).unwrap().unwrap();
    let start = Instant::now();
    s.write_all(&vec![0x5a; BYTES]).unwrap();
    s.shutdown(std::net::Shutdown::Write).unwrap();
    assert_eq!(sink.join().unwrap(), BYTES);
    let elapsed = start.elapsed();
    // Lower bound only (by hand): the bucket starts full with the burst of 3000 B (tbf_burst_bytes at
    // 2000 kbit/s: 10 ms = 2500 B, raised to 3000), the rest leaves at 2 Mbit/s; headers only add time.
    // (250000 - 3000) * 8 / 2_000_000 s = 0.988 s. Unlimited veth moves 250 kB in a few ms.
    assert!(elapsed >= Duration::from_millis(988), "250 kB at 2 Mbit/s took only {elapsed:?}");
}

#[test]
fn netem_detection_matches_the_kernel_and_decides_the_mechanism() {
    let Some(pair) = pair_or_skip() else { return };
    // Independent probe: ask tc directly on B's loopback.
    let out = pair.command(Side::B, "tc").args(["qdisc", "add", "dev", "lo", "root", "netem", "delay", "1ms"]).output();
    let has_netem = out.unwrap().status.success();
    assert_eq!(lwcbench_netimpair::netem_available(&pair).unwrap(), has_netem);

    let c = Conditions { delay_ms: 20, jitter_ms: 5, ..Default::default() };
    let plan = apply(&pair, Side::A, &c, Transport::Udp, Backend::Auto).unwrap();
    if has_netem {
        assert!(plan.applied.iter().all(|a| a.mechanism == Mechanism::Netem));
        assert_eq!(plan.applied.len(), 2);
        assert!(plan.user_space.is_none());
    } else {
        eprintln!("note: no netem qdisc in this kernel; delay and jitter go to the relay");
        assert!(plan.applied.is_empty());
        assert_eq!((plan.user_space.delay_ms, plan.user_space.jitter_ms), (20, 5));
    }
}

/// Without CAP_NET_ADMIN the tool must stop with one clear line. The check runs in a child copy of
/// this test binary whose capability bounding set lacks CAP_NET_ADMIN/CAP_SYS_ADMIN (setpriv).
#[test]
fn without_net_admin_create_fails_with_one_clear_line() {
    if std::env::var_os("LWCB_UNPRIVILEGED_CHILD").is_some() {
        let e = NetnsPair::create().unwrap_err();
        assert!(matches!(e, Error::Unprivileged(_)), "{e:?}");
        println!("CHILD-ERROR<{e}>");
        return;
    }
    if lwcbench_netimpair::preflight().is_err() {
        required::missing("root: the test drops its own privileges (the other tests cover the skip)");
        return;
    }
    let exe = std::env::current_exe().unwrap();
    let out = Command::new("setpriv")
        .args(["--bounding-set", "-net_admin,-sys_admin", "--inh-caps", "-net_admin,-sys_admin", "--"])
        .arg(exe)
        .args(["--exact", "without_net_admin_create_fails_with_one_clear_line", "--nocapture", "--test-threads=1"])
        .env("LWCB_UNPRIVILEGED_CHILD", "1")
        .output()
        .expect("setpriv (util-linux) is needed for this test");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "child failed: {stdout} {}", String::from_utf8_lossy(&out.stderr));
    let msg = stdout.split("CHILD-ERROR<").nth(1).and_then(|r| r.split('>').next()).expect("child printed no error");
    assert!(!msg.contains('\n'));
    assert!(msg.contains("need root") && msg.contains("CAP_"), "{msg}");
}
