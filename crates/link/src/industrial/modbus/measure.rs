//! The poll cycle timed with and without the cipher over the same path: a `tokio-modbus` master
//! and slave on loopback, two proxy pairs between them (one sealed, one plain), polls
//! alternating between the two pairs so both see the same machine at the same moments.
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use lwcbench_engine::studies::ics::{self, Budget};
use tokio::net::TcpListener;

use crate::device::counter::{open_session, CounterStore};
use crate::industrial::modbus::peers::{self, Cycle, Registers};
use crate::industrial::modbus::proxy::{Hop, Limits, Proxy, Report, Side};
use crate::industrial::CycleMeasurement;
use crate::wire::keys::MasterKey;
use crate::wire::suite::{self, Suite};

/// What the measurement path is, for every output.
pub const PATH: &str = "loopback TCP via two proxies (master → proxy → proxy → slave)";

/// The ICS study's Modbus/TCP sizes (12, 29, 260 B ADUs; `ics::MESSAGES`) and the cycle that
/// produces each: (ADU bytes, cycle).
pub fn ics_cycles() -> Vec<(usize, Cycle)> {
    vec![(12, Cycle::ReadHolding(1)), (29, Cycle::ReadHolding(10)), (260, Cycle::Echo(252))]
}

/// How to measure.
#[derive(Clone, Debug)]
pub struct Options {
    /// Pause between one poll pair and the next (zero: back to back).
    pub interval: Duration,
    /// The cycles, each with the ADU size it stands for.
    pub cycles: Vec<(usize, Cycle)>,
    /// The master key file (made if missing) with its counter state beside it (KEY.counters);
    /// `None`: a key made for this measurement and never stored, with its counters in a private
    /// temporary directory removed afterwards.
    pub key_file: Option<PathBuf>,
    /// Replay window of the receiving proxies.
    pub window: u64,
    /// Polls per path before the timed ones (connections warm, caches filled).
    pub warmup: usize,
    /// A poll without an answer within this is an error.
    pub timeout: Duration,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            interval: Duration::from_millis(1),
            cycles: ics_cycles(),
            key_file: None,
            window: 1024,
            warmup: 50,
            timeout: Duration::from_secs(5),
        }
    }
}

/// Most polls per cycle and path (bounds memory and run time).
pub const MAX_POLLS: usize = 1_000_000;

/// Measure `polls` poll cycles of every cycle in `opts`, plain and sealed with `cipher`.
pub fn measure_modbus(cipher: &str, polls: usize, opts: &Options) -> Result<Vec<CycleMeasurement>, String> {
    Ok(measure_with_reports(cipher, polls, opts)?.0)
}

/// [`measure_modbus`] and what the sealed proxies reported (master side, slave side).
pub fn measure_with_reports(
    cipher: &str,
    polls: usize,
    opts: &Options,
) -> Result<(Vec<CycleMeasurement>, [Report; 2]), String> {
    if polls == 0 || polls > MAX_POLLS {
        return Err(format!("--polls: {polls} is not in 1..={MAX_POLLS}"));
    }
    let suite = suite::find(cipher)?;
    // Every counter the run can use in one block: no durable write lands inside a timed poll.
    let per_dir = (polls + opts.warmup) as u64 * opts.cycles.len() as u64 + 16;
    let block = per_dir.max(crate::device::counter::DEFAULT_BLOCK);
    match &opts.key_file {
        Some(key) => {
            let (master, store) = open_session(key, &crate::device::counter::beside_key(key), block)?;
            // The in-process pair seals as pair 0 with the master: refused once pair 0 has its
            // own key (its counters are that key's state's).
            crate::device::provision::refuse_provisioned(key, &master, crate::wire::frame::Family::Modbus, &[0])?;
            run(&suite, &master, &store, polls, opts)
        }
        None => {
            let tmp = PrivateDir::new()?;
            let master = MasterKey::random();
            let store = CounterStore::open(&tmp.0.join("counters"), block, &master)?;
            run(&suite, &master, &store, polls, opts)
        }
    }
}

/// A 0700 directory under the system's temporary directory, removed on drop.
struct PrivateDir(PathBuf);

impl PrivateDir {
    fn new() -> Result<PrivateDir, String> {
        use std::os::unix::fs::DirBuilderExt;
        let p =
            std::env::temp_dir().join(format!("lwcbench-modbus-{}-{:016x}", std::process::id(), rand::random::<u64>()));
        std::fs::DirBuilder::new().mode(0o700).create(&p).map_err(|e| format!("cannot create {}: {e}", p.display()))?;
        Ok(PrivateDir(p))
    }
}

impl Drop for PrivateDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

async fn listener() -> Result<(TcpListener, SocketAddr), String> {
    let l = TcpListener::bind("127.0.0.1:0").await.map_err(|e| format!("cannot bind a loopback port: {e}"))?;
    let a = l.local_addr().map_err(|e| e.to_string())?;
    Ok((l, a))
}

/// Start a proxy pair in front of `slave`; returns the master-side address and both proxies.
pub async fn start_pair(
    slave: SocketAddr,
    hops: [Hop; 2],
    stop: &tokio::sync::watch::Receiver<bool>,
    log: bool,
) -> Result<(SocketAddr, [Arc<Proxy>; 2]), String> {
    let [master_hop, slave_hop] = hops;
    let (sl, sa) = listener().await?;
    let name = |side: &str| if log { format!("modbus-proxy ({side})") } else { String::new() };
    let sp = Arc::new(Proxy::new(Side::Slave, sl, slave, slave_hop, Limits::default(), name("slave")));
    let (ml, ma) = listener().await?;
    let mp = Arc::new(Proxy::new(Side::Master, ml, sa, master_hop, Limits::default(), name("master")));
    for p in [&sp, &mp] {
        let (p, mut stop) = (p.clone(), stop.clone());
        tokio::spawn(p.run(async move {
            let _ = stop.wait_for(|s| *s).await;
        }));
    }
    Ok((ma, [mp, sp]))
}

fn run(
    suite: &Suite,
    master: &MasterKey,
    store: &CounterStore,
    polls: usize,
    opts: &Options,
) -> Result<(Vec<CycleMeasurement>, [Report; 2]), String> {
    let sealed = [
        Hop::sealed(suite, master, store, 0, Side::Master, opts.window, None)?,
        Hop::sealed(suite, master, store, 0, Side::Slave, opts.window, None)?,
    ];
    let rt = crate::transport::runtime()?;
    rt.block_on(async {
        let (stop_tx, stop) = tokio::sync::watch::channel(false);
        let regs = Registers::patterned();
        let expect = regs.0.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let (sl, slave) = listener().await?;
        let mut slave_stop = stop.clone();
        tokio::spawn(peers::serve_slave(
            sl,
            regs,
            Box::pin(async move {
                let _ = slave_stop.wait_for(|s| *s).await;
            }),
        ));
        let (plain_addr, _plain) = start_pair(slave, [Hop::Plain, Hop::Plain], &stop, false).await?;
        let (sealed_addr, sealed_proxies) = start_pair(slave, sealed, &stop, false).await?;
        let mut plain = peers::connect_master(plain_addr).await?;
        let mut sealed = peers::connect_master(sealed_addr).await?;
        let mut out = Vec::new();
        let result: Result<(), String> = async {
            for (bytes, cycle) in &opts.cycles {
                for _ in 0..opts.warmup {
                    cycle.poll(&mut plain, opts.timeout, &expect).await.map_err(|e| format!("plain path: {e}"))?;
                    cycle.poll(&mut sealed, opts.timeout, &expect).await.map_err(|e| format!("sealed path: {e}"))?;
                }
                let (mut p, mut s) = (Vec::with_capacity(polls), Vec::with_capacity(polls));
                for i in 0..polls {
                    // Alternate which path goes first, so neither always follows the pause.
                    for first_plain in [i % 2 == 0, i % 2 != 0] {
                        let (ctx, into, what) =
                            if first_plain { (&mut plain, &mut p, "plain") } else { (&mut sealed, &mut s, "sealed") };
                        let t = Instant::now();
                        cycle.poll(ctx, opts.timeout, &expect).await.map_err(|e| format!("{what} path: {e}"))?;
                        into.push(t.elapsed().as_nanos() as u64);
                    }
                    if !opts.interval.is_zero() {
                        tokio::time::sleep(opts.interval).await;
                    }
                }
                out.push(CycleMeasurement {
                    protocol: "Modbus/TCP",
                    message: cycle.describe(),
                    bytes: *bytes,
                    cipher: suite.name(),
                    plain_ns: p,
                    sealed_ns: s,
                    path: PATH.into(),
                });
            }
            Ok(())
        }
        .await;
        let reports = [sealed_proxies[0].report(), sealed_proxies[1].report()];
        let _ = stop_tx.send(true);
        result.map(|_| (out, reports))
    })
}

/// Fewest polls per path for a p99.9 figure: below 1,000 the nearest-rank p99.9 is the
/// largest sample, one poll's accident, not a tail.
pub const MIN_TAIL_POLLS: usize = 1000;

/// Figures of one cycle: plain and sealed latency, the encryption's added time and its share of
/// each budget.
#[derive(Clone, Debug)]
pub struct Row {
    /// The plain path's latency.
    pub plain: ics::Latency,
    /// The sealed path's latency.
    pub sealed: ics::Latency,
    /// sealed − plain at the median and at p99.9 (ns; may be negative within noise).
    pub added_median: f64,
    /// The same at p99.9 (ns).
    pub added_p999: f64,
}

/// What the added p99.9 of a row stands for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Tail {
    /// sealed − plain at p99.9 (ns, ≥ 0), from at least [`MIN_TAIL_POLLS`] polls per path.
    Added(f64),
    /// Fewer than [`MIN_TAIL_POLLS`] polls per path: no p99.9 to compare.
    TooFewPolls,
    /// The sealed p99.9 is below the plain one (ns, < 0): the two tails differ by the machine's
    /// noise, which hides the cipher's cost; no share.
    Negative(f64),
}

impl Tail {
    /// Share of a budget of `budget_ms`, only for a real added tail.
    pub fn pct_of(self, budget_ms: f64) -> Option<f64> {
        match self {
            Tail::Added(ns) => Some(ics::pct_of_budget(ns, budget_ms)),
            Tail::TooFewPolls | Tail::Negative(_) => None,
        }
    }

    /// `modbus_cycles.csv`'s `added_p99_9_status`.
    pub fn status(self) -> &'static str {
        match self {
            Tail::Added(_) => "ok",
            Tail::TooFewPolls => "too_few_polls",
            Tail::Negative(_) => "negative_noise",
        }
    }
}

impl Row {
    /// What the cycle says of the added tail (p99.9).
    pub fn tail(&self) -> Tail {
        if self.plain.n.min(self.sealed.n) < MIN_TAIL_POLLS {
            Tail::TooFewPolls
        } else if self.added_p999 < 0.0 {
            Tail::Negative(self.added_p999)
        } else {
            Tail::Added(self.added_p999)
        }
    }
}

/// The figures of one measured cycle.
pub fn row(m: &CycleMeasurement) -> Row {
    let f = |v: &[u64]| ics::latency(&v.iter().map(|&x| x as f64).collect::<Vec<_>>());
    let (plain, sealed) = (f(&m.plain_ns), f(&m.sealed_ns));
    Row { added_median: sealed.median - plain.median, added_p999: sealed.p999 - plain.p999, plain, sealed }
}

/// `modbus_cycles.csv`: one line per cipher × cycle. `added_p99_9_ns` is empty below
/// [`MIN_TAIL_POLLS`] polls, and an added share is empty unless `added_p99_9_status` is `ok`.
pub fn csv(ms: &[CycleMeasurement], budgets: &[Budget]) -> String {
    let mut s = String::from("cipher,protocol,message,bytes,path,n");
    for p in ["plain", "sealed"] {
        for c in ["min", "p1", "median", "p99", "p99_9", "max", "jitter_p99_p1"] {
            s += &format!(",{p}_{c}_ns");
        }
    }
    s += ",added_median_ns,added_p99_9_ns,added_p99_9_status";
    for b in budgets {
        s += &format!(",added_p99_9_pct_of_{0},sealed_p99_9_pct_of_{0}", b.name);
    }
    s.push('\n');
    for m in ms {
        let r = row(m);
        let tail = r.tail();
        s += &format!("{},{},\"{}\",{},\"{}\",{}", m.cipher, m.protocol, m.message, m.bytes, m.path, r.plain.n);
        for l in [&r.plain, &r.sealed] {
            for v in [l.min, l.p1, l.median, l.p99, l.p999, l.max, l.jitter] {
                s += &format!(",{v:.0}");
            }
        }
        s += &format!(",{:.0},", r.added_median);
        if tail != Tail::TooFewPolls {
            s += &format!("{:.0}", r.added_p999);
        }
        s += &format!(",{}", tail.status());
        for b in budgets {
            let share = tail.pct_of(b.ms).map(|p| format!("{p:.4}")).unwrap_or_default();
            s += &format!(",{share},{:.4}", ics::pct_of_budget(r.sealed.p999, b.ms));
        }
        s.push('\n');
    }
    s
}

/// `modbus_samples.csv`: every timed poll (cipher, ADU bytes, poll index, path, ns).
pub fn samples_csv(ms: &[CycleMeasurement]) -> String {
    let mut s = String::from("cipher,bytes,poll,path,ns\n");
    for m in ms {
        for (path, v) in [("plain", &m.plain_ns), ("sealed", &m.sealed_ns)] {
            for (i, ns) in v.iter().enumerate() {
                s += &format!("{},{},{i},{path},{ns}\n", m.cipher, m.bytes);
            }
        }
    }
    s
}

const TOO_FEW: &str = "n/a (needs ≥ 1,000 polls)";

fn us(ns: f64) -> String {
    format!("{:.1} µs", ns / 1000.0)
}

/// The Markdown summary.
pub fn markdown(ms: &[CycleMeasurement], budgets: &[Budget], machine: &str) -> String {
    let mut md = String::from("\n## Modbus/TCP poll cycle, plain and sealed\n\n");
    md += &format!(
        "Path: {PATH}. Round trip = request sent → response received at the master; plain and sealed polls \
         alternate on two proxy pairs of the same kind. Percentiles nearest-rank; jitter = p99 − p1; added = \
         sealed − plain at the same percentile; share = added p99.9 / budget. Machine: {machine}.\n\n"
    );
    md += "| cipher | cycle | bytes | n | plain p50 | plain p99 | plain p99.9 | sealed p50 | sealed p99 | sealed p99.9 | sealed jitter | added p50 | added p99.9 |";
    for b in budgets {
        md += &format!(" % of {} |", b.name);
    }
    md += "\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|";
    md += &"---:|".repeat(budgets.len());
    md.push('\n');
    let (mut too_few, mut noisy) = (false, false);
    for m in ms {
        let r = row(m);
        let tail = r.tail();
        md += &format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            m.cipher,
            m.message,
            m.bytes,
            r.plain.n,
            us(r.plain.median),
            us(r.plain.p99),
            us(r.plain.p999),
            us(r.sealed.median),
            us(r.sealed.p99),
            us(r.sealed.p999),
            us(r.sealed.jitter),
            us(r.added_median),
            match tail {
                Tail::Added(ns) => us(ns),
                Tail::TooFewPolls => TOO_FEW.into(),
                Tail::Negative(ns) => format!("{} (noise)", us(ns)),
            }
        );
        for b in budgets {
            match (tail.pct_of(b.ms), tail) {
                (Some(p), _) => md += &format!(" {p:.3} % |"),
                (None, Tail::Negative(_)) => md += " n/a (noise) |",
                (None, _) => md += &format!(" {TOO_FEW} |"),
            }
        }
        md.push('\n');
        too_few |= tail == Tail::TooFewPolls;
        noisy |= matches!(tail, Tail::Negative(_));
    }
    if too_few {
        md += &format!(
            "\n{TOO_FEW}: below {MIN_TAIL_POLLS} polls per path the nearest-rank p99.9 is the largest poll, \
             so no added tail or share is given; run with `--polls 1000` or more.\n"
        );
    }
    if noisy {
        md += "\n(noise): the sealed p99.9 is below the plain one — the two tails differ by the machine's \
               scheduling noise, which hides the cipher's cost — so no share is given; measure on an idle \
               machine (docs/ics.md \"Reading the worst case\").\n";
    }
    md += "\nThe ICS study (arXiv:2603.19150) reports the cipher alone under 7.1 % of the GOOSE budget and under 3 % of IEC 60834-1's; here the cost is measured inside the whole cycle (proxies, sockets, scheduler).\n";
    md
}

/// The budgets of the ICS study.
pub fn budgets() -> Vec<Budget> {
    ics::default_budgets()
}
