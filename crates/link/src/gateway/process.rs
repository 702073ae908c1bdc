//! The gateway as its own process (`lwcbench link gateway`): subscribe to one session on a
//! broker, check, open and store until SIGTERM/SIGINT (a clean stop that finishes the batch in
//! hand) or SIGKILL (the chaos test's fault). Nothing but the broker URL, the store, the session,
//! the key file, the cipher and the provisioned device ids is needed, so the same process serves
//! the fault test, the soak run and a scaled-out deployment.
//!
//! While it runs it appends one JSON line per `stats_every` to the stats file (pid, frames
//! stored / ignored as duplicates / refused so far, VmRSS and VmHWM), and a last line with the
//! full tally on a clean stop. A SIGKILLed gateway loses only what it had not yet reported.
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::gateway::checks::Refusal;
use crate::gateway::single::GatewayHandle;
use crate::gateway::GatewaySpec;
use crate::transport::broker::BrokerAddr;
use crate::transport::{runtime, Transport};
use crate::wire::keys::MasterKey;
use crate::wire::suite::Suite;

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_stop_signal(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

/// Turn SIGTERM and SIGINT into a stop request (see [`stop_requested`]).
pub fn install_stop_signals() {
    // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
    unsafe {
        libc::signal(libc::SIGTERM, on_stop_signal as *const () as libc::sighandler_t);
        libc::signal(libc::SIGINT, on_stop_signal as *const () as libc::sighandler_t);
    }
}

/// Whether SIGTERM/SIGINT arrived since [`install_stop_signals`].
pub fn stop_requested() -> bool {
    STOP.load(Ordering::SeqCst)
}

/// (VmRSS, VmHWM) in KiB of a process (`None` if it is gone or /proc is not there).
pub fn mem_kb(pid: u32) -> Option<(u64, u64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| {
        text.lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<u64>().ok())
    };
    Some((field("VmRSS:")?, field("VmHWM:").unwrap_or(0)))
}

/// Milliseconds since the Unix epoch (stats lines from several processes share this clock).
pub fn unix_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

/// `--devices`: "0-7", "3", "0-3,9,12-13"; at most 1,000,000 ids.
pub fn parse_devices(spec: &str) -> Result<Vec<u32>, String> {
    let mut out = Vec::new();
    for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let bad = || format!("--devices: '{part}' is not an id or a range like 0-7");
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (a.trim().parse::<u32>().map_err(|_| bad())?, b.trim().parse::<u32>().map_err(|_| bad())?),
            None => {
                let v = part.parse::<u32>().map_err(|_| bad())?;
                (v, v)
            }
        };
        if a > b || (b - a) as usize + out.len() >= 1_000_000 {
            return Err(format!("--devices: '{part}' is empty or makes more than 1,000,000 ids"));
        }
        out.extend(a..=b);
    }
    out.sort_unstable();
    out.dedup();
    if out.is_empty() {
        return Err(format!("--devices: '{spec}' names no device"));
    }
    Ok(out)
}

/// One gateway process.
pub struct GatewayProcess {
    /// The cipher it accepts.
    pub suite: Suite,
    /// The devices it serves.
    pub devices: Vec<u32>,
    /// The replay window.
    pub window: u64,
    /// Readings per store transaction at most.
    pub batch: usize,
    /// `--store` as for `lwcbench link` (SQLite path or postgres:// URL).
    pub store: String,
    /// The session (its topics).
    pub session: String,
    /// The broker it subscribes at.
    pub broker: BrokerAddr,
    /// The master key.
    pub master: MasterKey,
    /// A JSON lines file of its counts, one line every `stats_every`.
    pub stats: Option<PathBuf>,
    /// How often a stats line is written.
    pub stats_every: Duration,
    /// `--shared GROUP --member NAME`: one member of a shared subscription, replay state in the
    /// store ([`crate::shared`]); `None`: the only gateway of its session.
    pub shared: Option<crate::gateway::shared::Member>,
    /// `--max-failed-tags`; `None`: the suite's default.
    pub max_failed_tags: Option<u64>,
    /// The key's accepted marks (`KEY_FILE.accepted`): floors at start, raised as batches commit.
    pub accepted: Option<PathBuf>,
}

/// The single gateway or one member of a shared subscription.
enum Running {
    One(GatewayHandle),
    Member(crate::gateway::workers::WorkerPool),
}

impl Running {
    fn live(&self) -> (u64, u64, u64) {
        match self {
            Running::One(g) => g.live(),
            Running::Member(p) => p.live(),
        }
    }

    fn failed(&self) -> bool {
        match self {
            Running::One(g) => g.failed(),
            Running::Member(p) => p.failed(),
        }
    }

    fn stop(self, rt: &tokio::runtime::Handle) -> crate::gateway::GwResult {
        match self {
            Running::One(g) => g.stop(rt),
            Running::Member(p) => p.stop(rt).0,
        }
    }
}

impl GatewayProcess {
    /// Run until SIGTERM/SIGINT; returns the final stats line (also appended to the stats file).
    /// `ready` is called once the subscription is in place.
    pub fn run(self, ready: impl FnOnce()) -> Result<String, String> {
        install_stop_signals();
        crate::input::check_session(&self.session)?;
        // Opened before anything starts: an unwritable stats file fails before `ready`.
        let mut stats = match &self.stats {
            Some(p) => Some(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(p)
                    .map_err(|e| format!("--stats: {}: {e}", crate::input::shown(&p.display().to_string())))?,
            ),
            None => None,
        };
        // before the store is created: nothing is written for a refused session
        crate::gateway::replay::check_window_memory(self.devices.len() as u64, self.window, 1)?;
        if self.shared.is_some() {
            crate::gateway::shared::check_shareable(&self.store)?;
        }
        let store = crate::store::open(&self.store, &self.session, &self.master.fingerprint())?;
        let rt = runtime()?;
        let spec = GatewaySpec {
            suite: self.suite.clone(),
            unauthenticated: false,
            devices: self.devices.clone(),
            window: self.window,
            store,
            session: self.session.clone(),
            transport: Transport::Mqtt(self.broker.clone()),
            batch: self.batch,
            max_samples: 0,
            max_failed_tags: self.max_failed_tags,
            accepted: self.accepted.clone(),
        };
        let gw = match &self.shared {
            None => Running::One(GatewayHandle::start(spec, &self.master, rt.handle())?),
            Some(m) => Running::Member(crate::gateway::workers::WorkerPool::start_member(
                spec,
                &self.store,
                m,
                &self.master,
                rt.handle(),
            )?),
        };
        ready();
        let pid = std::process::id();
        let line = |gw: &Running| {
            let (stored, dups, refused) = gw.live();
            let (rss, hwm) = mem_kb(pid).unwrap_or((0, 0));
            serde_json::json!({"t_ms": unix_ms(), "pid": pid, "stored": stored, "duplicates": dups,
                "refused": refused, "rss_kb": rss, "hwm_kb": hwm})
        };
        let mut next = Instant::now();
        // A gateway that stopped on an error (the store failed) ends the process with it.
        while !stop_requested() && !gw.failed() {
            if Instant::now() >= next {
                if let Some(f) = stats.as_mut() {
                    // A full disk must not stop the gateway: stats are best effort.
                    let _ = writeln!(f, "{}", line(&gw));
                }
                next += self.stats_every;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let mut last = line(&gw);
        let res = gw.stop(rt.handle());
        rt.shutdown_timeout(Duration::from_secs(1));
        let mut refused = serde_json::Map::new();
        for r in Refusal::ALL {
            refused.insert(r.as_str().into(), res.tally.count(r).into());
        }
        last["final"] = true.into();
        last["stored"] = res.new_rows.into();
        last["duplicates"] = res.duplicates.into();
        last["accepted"] = res.tally.accepted.into();
        last["refused"] = res.tally.refused_total().into();
        last["refused_by_reason"] = refused.into();
        last["tag_budget_alarms"] = res.tally.alarms.into();
        last["reuse_alarms"] = res.tally.reuse_alarms.into();
        last["late_alarms"] = res.tally.late_alarms.into();
        let text = last.to_string();
        if let Some(f) = stats.as_mut() {
            let _ = writeln!(f, "{text}");
        }
        match res.error {
            Some(e) => Err(e),
            None => Ok(text),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_lists() {
        assert_eq!(parse_devices("0-3,9, 2").unwrap(), vec![0, 1, 2, 3, 9]);
        assert_eq!(parse_devices("7").unwrap(), vec![7]);
        for bad in ["", "x", "3-1", "0-2000000", "1-", ","] {
            assert!(parse_devices(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn own_memory_is_readable() {
        let (rss, hwm) = mem_kb(std::process::id()).unwrap();
        assert!(rss > 0 && hwm >= rss, "{rss} {hwm}");
    }
}
