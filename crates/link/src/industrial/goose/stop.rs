//! Signals during a GOOSE measurement. SIGINT, SIGTERM, SIGHUP and SIGQUIT would end the
//! process where it stands and leave its two network namespaces and their veth pair behind
//! (nothing in the kernel removes them); while [`StopSignals`] is held they only ask the run to
//! stop between two frames, so the namespaces go with the measurement's `Drop`, and the caller
//! then ends the process by the same signal ([`die_by`]), as the signal would have.
use std::sync::atomic::{AtomicI32, Ordering};

/// The signals that stop a run.
pub const SIGNALS: [libc::c_int; 4] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT];

/// The first stop signal since [`StopSignals::install`] (0: none).
static RECEIVED: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(sig: libc::c_int) {
    // only an atomic store: async-signal-safe
    let _ = RECEIVED.compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst);
}

/// The stop handlers, installed for as long as it lives; dropping it restores the dispositions
/// it replaced.
pub struct StopSignals {
    old: Vec<(libc::c_int, libc::sigaction)>,
}

impl StopSignals {
    /// Catch [`SIGNALS`]. Also where SIGINT was ignored: a background job of a non-interactive
    /// shell starts so, and Ctrl-C or `kill -INT` would then let the run go on to exit 0.
    pub fn install() -> StopSignals {
        RECEIVED.store(0, Ordering::SeqCst);
        let mut old = Vec::new();
        for sig in SIGNALS {
            // SAFETY: sigaction with a zeroed struct, an empty mask and a handler that only
            // stores to an atomic; the previous action is kept to be restored.
            unsafe {
                let mut act: libc::sigaction = std::mem::zeroed();
                act.sa_sigaction = on_signal as *const () as libc::sighandler_t;
                act.sa_flags = libc::SA_RESTART;
                libc::sigemptyset(&mut act.sa_mask);
                let mut prev: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(sig, &act, &mut prev) == 0 {
                    old.push((sig, prev));
                }
            }
        }
        StopSignals { old }
    }
}

impl Drop for StopSignals {
    fn drop(&mut self) {
        for (sig, prev) in &self.old {
            // SAFETY: restores an action sigaction returned.
            unsafe { libc::sigaction(*sig, prev, std::ptr::null_mut()) };
        }
    }
}

/// The stop signal received since [`StopSignals::install`], if any.
pub fn received() -> Option<libc::c_int> {
    match RECEIVED.load(Ordering::SeqCst) {
        0 => None,
        s => Some(s),
    }
}

/// The signal's name, as kill(1) writes it.
pub fn name(sig: libc::c_int) -> String {
    match sig {
        libc::SIGINT => "SIGINT".into(),
        libc::SIGTERM => "SIGTERM".into(),
        libc::SIGHUP => "SIGHUP".into(),
        libc::SIGQUIT => "SIGQUIT".into(),
        s => format!("signal {s}"),
    }
}

/// The error of a run stopped by a signal (checked between frames).
pub fn check() -> Result<(), String> {
    match received() {
        Some(s) => Err(format!("stopped by {}", name(s))),
        None => Ok(()),
    }
}

/// End the process by `sig` with its default action, so that the parent (a shell, a
/// supervisor) sees what stopped it; exit status 128 + `sig` only if that did not end it.
pub fn die_by(sig: libc::c_int) -> ! {
    // SAFETY: plain syscalls on this process: default action, unblock, send.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, sig);
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        libc::raise(sig);
    }
    std::process::exit(128 + sig)
}
