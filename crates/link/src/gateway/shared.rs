//! `lwcbench link gateway --shared GROUP`: one gateway process as one member of an MQTT v5
//! shared subscription (`$share/GROUP/lwcbench/link/<session>/+`), so K processes on K hosts
//! share one broker and one store. The broker hands each frame to one member; the store is the
//! replay authority exactly as for the in-process workers ([`crate::gateway::workers`]): each
//! member's window is a fast path, and one store transaction per batch decides `replay` by the
//! UNIQUE (key_ref, device, counter) key, so a member lagging behind another loses nothing.
//!
//! A member that dies holds what the broker handed it and it had not acknowledged. The broker
//! keeps that in the member's persistent session (client id from group and member name) and
//! delivers it again when a process with the same `--member` reconnects; the frames it had
//! already committed then meet the unique key and are counted `replay` (the store cannot tell
//! a redelivery from a replay: the bytes are the same), acknowledged, and stored once.
use std::collections::VecDeque;
use std::path::Path;
use std::time::{Duration, Instant};

/// One member of a shared subscription group.
#[derive(Clone, Debug)]
pub struct Member {
    /// The group (`--shared`).
    pub group: String,
    /// This member's name in it (`--member`).
    pub member: String,
}

/// Group and member names: 1 to 64 of `A-Z a-z 0-9 - _` (no `/`, `+`, `#`: a group name is a
/// topic level of `$share/GROUP/…`, and a wildcard or a separator would name another filter).
pub fn check_name(opt: &str, s: &str) -> Result<(), String> {
    if s.is_empty()
        || s.len() > crate::input::MAX_SESSION
        || !s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    {
        return Err(format!(
            "{opt}: '{}' is not a group or member name (1 to {} of A-Z a-z 0-9 - _; no / + #)",
            crate::input::shown(s),
            crate::input::MAX_SESSION
        ));
    }
    Ok(())
}

impl Member {
    /// The member `member` of `group`, both names checked.
    pub fn new(group: &str, member: &str) -> Result<Member, String> {
        check_name("--shared", group)?;
        check_name("--member", member)?;
        Ok(Member { group: group.into(), member: member.into() })
    }

    /// The subscription filter of the group for a session.
    pub fn filter(&self, session: &str) -> String {
        format!("$share/{}/lwcbench/link/{session}/+", self.group)
    }

    /// The MQTT client id: stable per (session, group, member), so a restarted member resumes
    /// its persistent session and gets back what the broker held for it.
    pub fn client_id(&self, session: &str) -> String {
        format!("lwcbench-gw-{session}-{}-{}", self.group, self.member)
    }
}

/// Tells a connection that the broker closes again and again right after accepting it: what a
/// second process with the same client id causes (each CONNECT makes the broker close the
/// other's connection; mosquitto 2.0 does so without a DISCONNECT reason). A broker that is down
/// refuses the connection before any CONNACK, so its retries do not count.
#[derive(Default)]
pub struct TakeoverLoop {
    since_connack: Option<Instant>,
    drops: VecDeque<Instant>,
}

impl TakeoverLoop {
    /// Drops this soon after a CONNACK count.
    const QUICK: Duration = Duration::from_secs(2);
    /// This many of them within [`Self::WITHIN`] are a loop.
    const DROPS: usize = 5;
    const WITHIN: Duration = Duration::from_secs(10);

    /// A CONNACK came at `now`.
    pub fn connected(&mut self, now: Instant) {
        self.since_connack = Some(now);
    }

    /// The connection ended at `now`; true when that makes a loop.
    pub fn dropped(&mut self, now: Instant) -> bool {
        let Some(c) = self.since_connack.take() else { return false };
        if now.duration_since(c) > Self::QUICK {
            return false;
        }
        self.drops.push_back(now);
        while self.drops.front().is_some_and(|&t| now.duration_since(t) > Self::WITHIN) {
            self.drops.pop_front();
        }
        self.drops.len() >= Self::DROPS
    }
}

/// A store several gateway processes can share, or one line saying why `spec` is not one.
/// PostgreSQL is; an SQLite file is for processes on one host only (its locks and WAL index
/// live in the host's memory, so a file on a network file system is refused); an in-memory or
/// temporary SQLite database is private to its connection.
pub fn check_shareable(spec: &str) -> Result<(), String> {
    let path = match crate::store::kind(spec)? {
        crate::store::Kind::Postgres(_) => return Ok(()),
        crate::store::Kind::Sqlite(p) => p.to_str().unwrap_or_default(),
    };
    let shown = crate::input::shown(spec);
    if path.is_empty() || path == ":memory:" || path.starts_with("file::memory:") {
        return Err(format!(
            "--shared: --store '{shown}' is a private SQLite database that no other gateway process can see; \
             use PostgreSQL (or an SQLite file for processes on one host)"
        ));
    }
    let p = Path::new(path);
    let dir = p.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    if let Some(fs) = network_fs(dir) {
        return Err(format!(
            "--shared: --store {shown} is an SQLite file on a network file system ({fs}): SQLite's locks and WAL do \
             not hold across hosts; use PostgreSQL"
        ));
    }
    Ok(())
}

/// The name of the network file system `dir` is on, if it is on one (statfs magic numbers from
/// linux/magic.h and the kernel's fs/smb and fs/fuse sources).
fn network_fs(dir: &Path) -> Option<&'static str> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: statfs writes one struct we own; the path is NUL-terminated.
    if unsafe { libc::statfs(c.as_ptr(), &mut st) } != 0 {
        return None;
    }
    match st.f_type as u64 {
        0x6969 => Some("nfs"),
        0x517B => Some("smb"),
        0xFF53_4D42 => Some("cifs"),
        0xFE53_4D42 => Some("smb2"),
        0x0102_1997 => Some("9p"),
        0x0000_564C => Some("ncp"),
        0x7461_636F => Some("ocfs2"),
        0x0119_0219 => Some("gfs2"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_one_topic_level_without_wildcards() {
        for ok in ["g", "gateways-1", "A_b"] {
            assert!(Member::new(ok, "m1").is_ok(), "{ok}");
        }
        for bad in ["", "a/b", "+", "#", "g#", "a b", &"x".repeat(65)] {
            let e = Member::new(bad, "m").unwrap_err();
            assert!(e.starts_with("--shared: '") && e.contains("no / + #"), "{e}");
            assert!(Member::new("g", bad).unwrap_err().starts_with("--member: "), "{bad}");
        }
        let m = Member::new("g", "host-1").unwrap();
        assert_eq!(m.filter("s1"), "$share/g/lwcbench/link/s1/+");
        assert_eq!(m.client_id("s1"), "lwcbench-gw-s1-g-host-1");
    }

    #[test]
    fn quick_drops_after_connack_make_a_loop_and_refusals_do_not() {
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let mut l = TakeoverLoop::default();
        // A broker that is down: errors without a CONNACK never count.
        assert!((0..50).all(|i| !l.dropped(at(i * 100))));
        // Connected, dropped 20 ms later, five times within a second: a loop at the fifth.
        let quick: Vec<bool> = (0..5)
            .map(|i| {
                l.connected(at(10_000 + i * 200));
                l.dropped(at(10_020 + i * 200))
            })
            .collect();
        assert_eq!(quick, vec![false, false, false, false, true]);
        // Drops after a connection that lasted longer than 2 s, or spread over more than 10 s,
        // are ordinary reconnects.
        let mut l = TakeoverLoop::default();
        for i in 0..10 {
            l.connected(at(i * 5_000));
            assert!(!l.dropped(at(i * 5_000 + 3_000)), "{i}");
        }
        let mut l = TakeoverLoop::default();
        for i in 0..10 {
            l.connected(at(i * 3_000));
            assert!(!l.dropped(at(i * 3_000 + 10)), "{i}");
        }
    }

    #[test]
    fn private_sqlite_databases_cannot_be_shared() {
        for bad in ["", ":memory:", "sqlite::memory:", "sqlite:"] {
            let e = check_shareable(bad).unwrap_err();
            assert!(e.starts_with("--shared: --store ") && e.contains("PostgreSQL"), "{e}");
        }
        assert!(check_shareable("postgres://u@127.0.0.1/db").is_ok());
        let d = tempfile::tempdir().unwrap();
        assert!(check_shareable(&d.path().join("s.db").display().to_string()).is_ok());
    }
}
