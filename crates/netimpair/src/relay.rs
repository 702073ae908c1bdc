//! A small UDP relay that delays, jitters, reorders and duplicates datagrams, for kernels without
//! netem. It forwards one way (listen socket → upstream), like the UDP transport's device → gateway
//! path, and runs as one tokio task.
//!
//! Determinism: every decision comes from a ChaCha8 RNG seeded with `seed`. Per datagram, in arrival
//! order, exactly three values are drawn, `r = next_u64() % 1_000_000` each: duplicate if the first
//! is below `duplicate_pct × 10 000`, reorder if the second is below `reorder_pct × 10 000`; the third,
//! `next_u64() % (2J + 1) − J`, is the jitter offset in microseconds (J = jitter in µs; drawn even
//! when J = 0). So for
//! one seed and one datagram sequence the counts are exact and independent of timing.
//!
//! Reordering swaps a datagram with its successor: a datagram chosen for reordering is held until the
//! next one arrives, which is forwarded first, then the held one (a datagram that releases a held
//! one is never held itself). If no successor arrives within `reorder_hold`, the held datagram is
//! sent in order and counted as `reorder_expired`. Duplicates follow their original immediately.
//!
//! Memory is bounded: at most `queue_limit` datagrams (copies included) wait in the relay; a datagram
//! that does not fit is dropped and counted (`dropped_queue_full`), never silently.

use crate::conditions::{Applied, Mechanism, UserSpace};
use crate::error::{Error, Result};
use crate::netns::{NetnsPair, Side};
use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use std::cmp::Ordering as CmpOrdering;
use std::collections::binary_heap::PeekMut;
use std::collections::BinaryHeap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, UdpSocket as StdUdpSocket};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::net::UdpSocket;
use tokio::sync::oneshot;
use tokio::time::Instant;

/// Largest datagram the relay accepts (the IPv4 UDP payload limit).
const MAX_DATAGRAM: usize = 65_507;

/// What the relay does to the datagrams it forwards (see the module documentation).
#[derive(Debug, Clone, PartialEq)]
pub struct RelayConfig {
    /// Added delay.
    pub delay: Duration,
    /// Uniform jitter ± this around the delay.
    pub jitter: Duration,
    /// Share of datagrams swapped with their successor, in percent.
    pub reorder_pct: f64,
    /// Share of datagrams sent twice, in percent.
    pub duplicate_pct: f64,
    /// Seed of the ChaCha8 RNG behind every decision.
    pub seed: u64,
    /// Most datagrams (copies included) waiting in the relay; at least 2.
    pub queue_limit: usize,
    /// Longest a datagram held for reordering waits for its successor.
    pub reorder_hold: Duration,
}

impl RelayConfig {
    /// No impairment, a queue of 4096 datagrams and a reorder hold of 1 s.
    pub fn new(seed: u64) -> RelayConfig {
        RelayConfig {
            delay: Duration::ZERO,
            jitter: Duration::ZERO,
            reorder_pct: 0.0,
            duplicate_pct: 0.0,
            seed,
            queue_limit: 4096,
            reorder_hold: Duration::from_millis(1000),
        }
    }

    /// The relay part of a [`crate::conditions::Plan`].
    pub fn from_user_space(u: &UserSpace, seed: u64) -> RelayConfig {
        RelayConfig {
            delay: Duration::from_millis(u.delay_ms.into()),
            jitter: Duration::from_millis(u.jitter_ms.into()),
            reorder_pct: u.reorder_pct,
            duplicate_pct: u.duplicate_pct,
            ..RelayConfig::new(seed)
        }
    }

    fn validate(&self) -> Result<()> {
        for (name, v) in [("reorder", self.reorder_pct), ("duplicate", self.duplicate_pct)] {
            if !(0.0..=100.0).contains(&v) {
                return Err(Error::Invalid(format!("relay {name} {v} % is outside 0..=100")));
            }
        }
        if self.jitter > self.delay {
            return Err(Error::Invalid("relay jitter exceeds its delay".into()));
        }
        if self.queue_limit < 2 {
            return Err(Error::Invalid("relay queue limit must be at least 2 (a datagram and its duplicate)".into()));
        }
        Ok(())
    }
}

/// Raises a UDP socket's receive buffer to `bytes` (SO_RCVBUFFORCE, which CAP_NET_ADMIN may use past
/// net.core.rmem_max; falls back to SO_RCVBUF). Best effort: returns whether the kernel accepted it.
pub fn grow_recv_buffer(sock: &StdUdpSocket, bytes: i32) -> bool {
    use std::os::fd::AsRawFd;
    let set = |opt| {
        // SAFETY: valid fd, pointer to an int of the passed length.
        unsafe {
            libc::setsockopt(
                sock.as_raw_fd(),
                libc::SOL_SOCKET,
                opt,
                (&bytes as *const i32).cast(),
                std::mem::size_of::<i32>() as libc::socklen_t,
            ) == 0
        }
    };
    set(libc::SO_RCVBUFFORCE) || set(libc::SO_RCVBUF)
}

/// Per-million threshold of a percentage.
pub fn ppm(pct: f64) -> u64 {
    (pct * 10_000.0).round() as u64
}

#[derive(Debug, Default)]
struct Stats {
    received: AtomicU64,
    forwarded: AtomicU64,
    duplicated: AtomicU64,
    reordered: AtomicU64,
    reorder_expired: AtomicU64,
    dropped_queue_full: AtomicU64,
    dropped_at_shutdown: AtomicU64,
    send_errors: AtomicU64,
}

/// Counters of a relay (for run.json: what the relay did, so losses are never silent).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct RelayCounts {
    /// Datagrams received on the listen socket.
    pub received: u64,
    /// Datagrams sent upstream, duplicates included.
    pub forwarded: u64,
    /// Datagrams sent twice.
    pub duplicated: u64,
    /// Datagrams swapped with their successor.
    pub reordered: u64,
    /// Datagrams held for reordering that no successor released in time (sent in order).
    pub reorder_expired: u64,
    /// Datagrams dropped because the queue was full.
    pub dropped_queue_full: u64,
    /// Datagrams still waiting when the relay stopped.
    pub dropped_at_shutdown: u64,
    /// Sends upstream that failed.
    pub send_errors: u64,
}

impl Stats {
    fn snapshot(&self) -> RelayCounts {
        let l = |a: &AtomicU64| a.load(Ordering::Relaxed);
        RelayCounts {
            received: l(&self.received),
            forwarded: l(&self.forwarded),
            duplicated: l(&self.duplicated),
            reordered: l(&self.reordered),
            reorder_expired: l(&self.reorder_expired),
            dropped_queue_full: l(&self.dropped_queue_full),
            dropped_at_shutdown: l(&self.dropped_at_shutdown),
            send_errors: l(&self.send_errors),
        }
    }
}

struct Scheduled {
    at: Instant,
    seq: u64,
    data: Arc<[u8]>,
}

impl PartialEq for Scheduled {
    fn eq(&self, o: &Self) -> bool {
        (self.at, self.seq) == (o.at, o.seq)
    }
}
impl Eq for Scheduled {}
impl PartialOrd for Scheduled {
    fn partial_cmp(&self, o: &Self) -> Option<CmpOrdering> {
        Some(self.cmp(o))
    }
}
impl Ord for Scheduled {
    // Reversed: BinaryHeap is a max-heap, the relay wants the earliest (at, seq) first.
    fn cmp(&self, o: &Self) -> CmpOrdering {
        (o.at, o.seq).cmp(&(self.at, self.seq))
    }
}

struct Held {
    data: Arc<[u8]>,
    copies: usize,
    send_at: Instant,
    deadline: Instant,
}

/// A running relay; dropping it (or [`UdpRelay::stop`]) ends the task.
pub struct UdpRelay {
    stats: Arc<Stats>,
    shutdown: Option<oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
    listen: SocketAddr,
    applied: Vec<Applied>,
}

impl UdpRelay {
    /// Starts the relay in the namespace of `side`: it listens on `listen` and forwards to `upstream`
    /// (normally the gateway on the namespace's loopback). Must be called inside a tokio runtime.
    pub fn start_in(
        pair: &NetnsPair,
        side: Side,
        listen: SocketAddr,
        upstream: SocketAddr,
        cfg: RelayConfig,
    ) -> Result<UdpRelay> {
        pair.check_internal("relay listen address", listen, true)?;
        pair.check_internal("relay upstream", upstream, false)?;
        let (l, o) = pair
            .in_ns(side, || -> std::io::Result<_> {
                let any: IpAddr =
                    if upstream.is_ipv4() { Ipv4Addr::UNSPECIFIED.into() } else { Ipv6Addr::UNSPECIFIED.into() };
                let out_bind = SocketAddr::new(any, 0);
                Ok((StdUdpSocket::bind(listen)?, StdUdpSocket::bind(out_bind)?))
            })?
            .map_err(|e| Error::Failed(format!("relay cannot bind {listen}: {e}")))?;
        // Bursts from many devices must not overflow the kernel buffer before the task drains it.
        grow_recv_buffer(&l, 4 << 20);
        UdpRelay::spawn(l, o, upstream, cfg, side)
    }

    /// Starts the relay on already-bound sockets (`listen` receives, `out` sends to `upstream`).
    pub fn spawn(
        listen: StdUdpSocket,
        out: StdUdpSocket,
        upstream: SocketAddr,
        cfg: RelayConfig,
        side: Side,
    ) -> Result<UdpRelay> {
        cfg.validate()?;
        let io = |e: std::io::Error| Error::Failed(format!("relay socket: {e}"));
        listen.set_nonblocking(true).map_err(io)?;
        out.set_nonblocking(true).map_err(io)?;
        let listen_addr = listen.local_addr().map_err(io)?;
        let listen = UdpSocket::from_std(listen).map_err(io)?;
        let out = UdpSocket::from_std(out).map_err(io)?;
        let stats = Arc::new(Stats::default());
        let (tx, rx) = oneshot::channel();
        let detail = format!(
            "udp relay {listen_addr} -> {upstream}, seed {}, queue limit {}, reorder hold {} ms",
            cfg.seed,
            cfg.queue_limit,
            cfg.reorder_hold.as_millis()
        );
        let mut applied = Vec::new();
        let mut rec = |condition, value: String| {
            applied.push(Applied { condition, value, mechanism: Mechanism::Relay, side, detail: detail.clone() })
        };
        if !cfg.delay.is_zero() {
            rec("delay", format!("{} ms", cfg.delay.as_millis()));
        }
        if !cfg.jitter.is_zero() {
            rec("jitter", format!("{} ms", cfg.jitter.as_millis()));
        }
        if cfg.reorder_pct > 0.0 {
            rec("reorder", format!("{} %", cfg.reorder_pct));
        }
        if cfg.duplicate_pct > 0.0 {
            rec("duplicate", format!("{} %", cfg.duplicate_pct));
        }
        let task = tokio::spawn(run(listen, out, upstream, cfg, stats.clone(), rx));
        Ok(UdpRelay { stats, shutdown: Some(tx), task: Some(task), listen: listen_addr, applied })
    }

    /// The address the relay listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.listen
    }

    /// The counters so far.
    pub fn counts(&self) -> RelayCounts {
        self.stats.snapshot()
    }

    /// One record per condition this relay applies.
    pub fn applied(&self) -> &[Applied] {
        &self.applied
    }

    /// Stops the relay and returns its final counts (datagrams still queued count as dropped at shutdown).
    pub async fn stop(mut self) -> RelayCounts {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.task.take() {
            let _ = t.await;
        }
        self.stats.snapshot()
    }
}

impl Drop for UdpRelay {
    fn drop(&mut self) {
        if let Some(t) = self.task.take() {
            t.abort();
        }
    }
}

async fn run(
    listen: UdpSocket,
    out: UdpSocket,
    upstream: SocketAddr,
    cfg: RelayConfig,
    stats: Arc<Stats>,
    mut shutdown: oneshot::Receiver<()>,
) {
    let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed);
    let (dup_ppm, reorder_ppm) = (ppm(cfg.duplicate_pct), ppm(cfg.reorder_pct));
    let jitter_us = cfg.jitter.as_micros() as u64;
    let mut queue: BinaryHeap<Scheduled> = BinaryHeap::new();
    let mut held: Option<Held> = None;
    let mut seq = 0u64;
    let mut buf = vec![0u8; MAX_DATAGRAM + 1];
    let far = Duration::from_secs(3600);
    loop {
        let next_send = queue.peek().map(|s| s.at);
        let hold_deadline = held.as_ref().map(|h| h.deadline);
        let wake = [next_send, hold_deadline].into_iter().flatten().min().unwrap_or_else(|| Instant::now() + far);
        tokio::select! {
            _ = &mut shutdown => break,
            r = listen.recv_from(&mut buf) => {
                let Ok((n, _from)) = r else { continue };
                stats.received.fetch_add(1, Ordering::Relaxed);
                let now = Instant::now();
                let dup = rng.next_u64() % 1_000_000 < dup_ppm;
                let reorder = rng.next_u64() % 1_000_000 < reorder_ppm;
                let j = rng.next_u64() % (2 * jitter_us + 1);
                // delay + (j - J) µs, with J <= delay (validated), never negative.
                let send_at = now + cfg.delay + Duration::from_micros(j) - Duration::from_micros(jitter_us);
                let copies = if dup { 2 } else { 1 };
                let waiting = queue.len() + held.as_ref().map_or(0, |h| h.copies);
                if n > MAX_DATAGRAM || waiting + copies > cfg.queue_limit {
                    stats.dropped_queue_full.fetch_add(1, Ordering::Relaxed);
                    continue;
                }
                if dup {
                    stats.duplicated.fetch_add(1, Ordering::Relaxed);
                }
                let data: Arc<[u8]> = Arc::from(&buf[..n]);
                let mut push = |data: &Arc<[u8]>, copies: usize, at: Instant, seq: &mut u64| {
                    for _ in 0..copies {
                        queue.push(Scheduled { at, seq: *seq, data: data.clone() });
                        *seq += 1;
                    }
                };
                if let Some(h) = held.take() {
                    // The successor goes first, the held datagram right after it.
                    let at = send_at.max(h.send_at);
                    push(&data, copies, at, &mut seq);
                    push(&h.data, h.copies, at, &mut seq);
                    stats.reordered.fetch_add(1, Ordering::Relaxed);
                } else if reorder {
                    held = Some(Held { data, copies, send_at, deadline: now + cfg.reorder_hold });
                } else {
                    push(&data, copies, send_at, &mut seq);
                }
            }
            _ = tokio::time::sleep_until(wake) => {
                let now = Instant::now();
                if let Some(h) = held.take_if(|h| h.deadline <= now) {
                    stats.reorder_expired.fetch_add(1, Ordering::Relaxed);
                    for _ in 0..h.copies {
                        queue.push(Scheduled { at: h.send_at, seq, data: h.data.clone() });
                        seq += 1;
                    }
                }
                while let Some(s) = queue.peek_mut().filter(|s| s.at <= now).map(PeekMut::pop) {
                    match out.send_to(&s.data, upstream).await {
                        Ok(_) => stats.forwarded.fetch_add(1, Ordering::Relaxed),
                        Err(_) => stats.send_errors.fetch_add(1, Ordering::Relaxed),
                    };
                }
            }
        }
    }
    let left = queue.len() + held.map_or(0, |h| h.copies);
    stats.dropped_at_shutdown.fetch_add(left as u64, Ordering::Relaxed);
}
