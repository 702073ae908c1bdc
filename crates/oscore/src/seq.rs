//! Sender sequence numbers persisted as RFC 8613 Appendix B.1.1 describes: before any number
//! of a block is used, the end of the block is written durably (temporary file, fsync, rename
//! over the state file, fsync of the directory). After a crash the sender starts at the
//! recorded end, so a crash skips at most one block and never repeats a number: no (key,
//! nonce) pair is used twice.
//!
//! State file:
//! ```text
//! lwcbench-oscore-sequence v1
//! sender <the Sender Context's fingerprint, 32 hex digits>
//! next <first number not yet reserved, at most 2^40>
//! ```
//! One process at a time sends with one state file: an open-file-description lock on
//! `STATE.lock`, held while the store is open and released when the process ends however it
//! ends, refuses a second user (two senders would hand out the same numbers). The fingerprint
//! ties the file to one Sender Key; a file of another context is refused.
use std::io::{Read, Write};
use std::os::unix::fs::MetadataExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

use crate::protect::SequenceSource;
use crate::{Error, SecurityContext, MAX_SEQ};

/// The first line of a state file.
pub const MAGIC: &str = "lwcbench-oscore-sequence v1";
/// Numbers reserved per durable write by default.
pub const DEFAULT_BLOCK: u64 = 1024;
/// A state file is three short lines; anything longer is not one.
const MAX_STATE_BYTES: u64 = 4096;

/// A persisted source of sender sequence numbers for one Sender Context.
pub struct SequenceStore {
    /// The resolved state file (the one rewritten).
    path: PathBuf,
    /// The path as given (for messages).
    shown: PathBuf,
    fingerprint: String,
    next: u64,
    /// Every number below this is recorded as used in the state file.
    reserved: u64,
    block: u64,
    writes: u64,
    /// `STATE.lock`: its lock goes with this descriptor.
    _lock: std::fs::File,
}

fn state_err(p: &Path, m: impl std::fmt::Display) -> Error {
    Error::State(format!("{}: {m}", p.display()))
}

/// The file a path names: symlinks followed (a missing file through its directory); what a
/// lock cannot protect (not a regular file, several hard links) is refused.
fn resolve(path: &Path) -> Result<PathBuf, Error> {
    let real = match std::fs::symlink_metadata(path) {
        Ok(_) => std::fs::canonicalize(path).map_err(|e| state_err(path, format!("cannot resolve it: {e}")))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let name = path.file_name().ok_or_else(|| state_err(path, "not a file name"))?;
            let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
            let dir = std::fs::canonicalize(dir)
                .map_err(|e| state_err(path, format!("cannot resolve its directory {}: {e}", dir.display())))?;
            dir.join(name)
        }
        Err(e) => return Err(state_err(path, e)),
    };
    match std::fs::metadata(&real) {
        Ok(m) if !m.file_type().is_file() => Err(state_err(path, "not a regular file")),
        Ok(m) if m.nlink() > 1 => Err(state_err(
            path,
            format!("has {} hard links; a lock taken through one name is not seen through another", m.nlink()),
        )),
        Ok(_) => Ok(real),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(real),
        Err(e) => Err(state_err(path, e)),
    }
}

/// Take an exclusive OFD lock on byte 0 of `f` without waiting.
fn lock(f: &std::fs::File) -> std::io::Result<()> {
    // SAFETY: an all-zero `flock` is a valid value of this plain C struct.
    let mut fl: libc::flock = unsafe { std::mem::zeroed() };
    fl.l_type = libc::F_WRLCK as libc::c_short;
    fl.l_whence = libc::SEEK_SET as libc::c_short;
    fl.l_start = 0;
    fl.l_len = 1;
    loop {
        // SAFETY: fcntl on a descriptor `f` owns, with a pointer to a live, initialised flock.
        if unsafe { libc::fcntl(f.as_raw_fd(), libc::F_OFD_SETLK, &fl as *const libc::flock) } == 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// Write `bytes` to `path` durably: temporary file, fsync, rename, fsync of the directory.
fn write_durable(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = path.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let res = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)?;
        std::fs::File::open(dir)?.sync_all()
    })();
    if res.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    res
}

/// Parse a state file's text for the fingerprint `fp`: the recorded next number.
fn parse(text: &str, fp: &str) -> Result<u64, String> {
    let lines: Vec<&str> = text.lines().collect();
    let line = |i: usize| lines.get(i).copied().unwrap_or("");
    if line(0) != MAGIC {
        return Err(format!("line 1: expected {MAGIC:?}, found {:?}", line(0).chars().take(40).collect::<String>()));
    }
    match line(1).strip_prefix("sender ") {
        Some(f) if f == fp => {}
        Some(f) if f.len() == 32 && f.bytes().all(|b| b.is_ascii_hexdigit()) => {
            return Err("line 2: the file belongs to another sender context (its fingerprint differs); \
                 give each context its own state file"
                .into())
        }
        _ => return Err("line 2: expected `sender` and 32 hex digits".into()),
    }
    let next = line(2)
        .strip_prefix("next ")
        .and_then(|n| n.parse::<u64>().ok())
        .ok_or_else(|| "line 3: expected `next` and a number".to_string())?;
    if next > MAX_SEQ + 1 {
        return Err(format!("line 3: {next} is above 2^40, more than a Partial IV carries"));
    }
    if lines.len() > 3 {
        return Err("line 4: unexpected text after the three lines".into());
    }
    Ok(next)
}

impl SequenceStore {
    /// Open (or start) the state file at `path` for the Sender Context of `ctx`, reserving
    /// `block` numbers per durable write (1 to 2^32).
    pub fn open(path: &Path, ctx: &SecurityContext, block: u64) -> Result<SequenceStore, Error> {
        if block == 0 || block > 1 << 32 {
            return Err(state_err(path, format!("block of {block} numbers (1 to 2^32)")));
        }
        let real = resolve(path)?;
        let mut lp = real.as_os_str().to_os_string();
        lp.push(".lock");
        let lp = PathBuf::from(lp);
        let lockf = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&lp)
            .map_err(|e| state_err(path, format!("cannot open its lock file {}: {e}", lp.display())))?;
        lock(&lockf).map_err(|e| match e.raw_os_error() {
            Some(libc::EAGAIN) | Some(libc::EACCES) => {
                state_err(path, "in use by another sender (a second one would repeat its sequence numbers)")
            }
            _ => state_err(path, format!("cannot lock {}: {e}", lp.display())),
        })?;
        let fingerprint = ctx.sender_fingerprint();
        let next = match std::fs::File::open(&real) {
            Ok(f) => {
                let mut text = String::new();
                f.take(MAX_STATE_BYTES + 1)
                    .read_to_string(&mut text)
                    .map_err(|e| state_err(path, format!("cannot read it as text: {e}")))?;
                if text.len() as u64 > MAX_STATE_BYTES {
                    return Err(state_err(path, format!("larger than {MAX_STATE_BYTES} bytes: not a state file")));
                }
                parse(&text, &fingerprint).map_err(|e| state_err(path, e))?
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => 0,
            Err(e) => return Err(state_err(path, e)),
        };
        Ok(SequenceStore {
            path: real,
            shown: path.to_path_buf(),
            fingerprint,
            next,
            reserved: next,
            block,
            writes: 0,
            _lock: lockf,
        })
    }

    /// The number the next call hands out (not yet used).
    pub fn peek(&self) -> u64 {
        self.next
    }

    /// Durable writes so far.
    pub fn writes(&self) -> u64 {
        self.writes
    }
}

impl SequenceSource for SequenceStore {
    fn next_seq(&mut self) -> Result<u64, Error> {
        if self.next > MAX_SEQ {
            return Err(Error::SequenceExhausted);
        }
        if self.next == self.reserved {
            let end = self.next.saturating_add(self.block).min(MAX_SEQ + 1);
            let text = format!("{MAGIC}\nsender {}\nnext {end}\n", self.fingerprint);
            write_durable(&self.path, text.as_bytes())
                .map_err(|e| state_err(&self.shown, format!("cannot reserve numbers: {e}")))?;
            self.writes += 1;
            self.reserved = end;
        }
        self.next += 1;
        Ok(self.next - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Algorithm, SecurityParams};

    fn ctx(secret: u8) -> SecurityContext {
        SecurityContext::derive(&SecurityParams {
            alg: Algorithm::AesCcm16_64_128,
            master_secret: &[secret; 16],
            master_salt: b"",
            id_context: None,
            sender_id: b"\x01",
            recipient_id: b"",
        })
        .unwrap()
    }

    #[test]
    fn numbers_never_repeat_across_reopen() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("seq");
        let c = ctx(1);
        let mut handed = Vec::new();
        for round in 0..3 {
            // Each round ends as a crash would: the store is dropped with no closing write.
            let mut s = SequenceStore::open(&p, &c, 4).unwrap();
            let first = s.peek();
            if let Some(max) = handed.iter().max() {
                assert!(first > *max, "round {round}: starts at {first}, but {max} was handed out");
            }
            for _ in 0..6 {
                handed.push(s.next_seq().unwrap());
            }
            assert_eq!(s.writes(), 2, "6 numbers in blocks of 4 take two reservations");
        }
        // Hand-computed: rounds start at 0, 8, 16 (the reserved end) and take 6 each.
        assert_eq!(handed, [0, 1, 2, 3, 4, 5, 8, 9, 10, 11, 12, 13, 16, 17, 18, 19, 20, 21]);
    }

    #[test]
    fn a_second_sender_on_one_state_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("seq");
        let c = ctx(1);
        let _s = SequenceStore::open(&p, &c, 4).unwrap();
        let e = SequenceStore::open(&p, &c, 4).err().unwrap().to_string();
        assert!(e.contains("in use by another sender"), "{e}");
    }

    #[test]
    fn a_state_file_serves_one_sender_context() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("seq");
        SequenceStore::open(&p, &ctx(1), 4).unwrap().next_seq().unwrap();
        let e = SequenceStore::open(&p, &ctx(2), 4).err().unwrap().to_string();
        assert!(e.contains("line 2: the file belongs to another sender context"), "{e}");
    }

    #[test]
    fn damaged_state_files_are_refused_with_the_line() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("seq");
        let c = ctx(1);
        let fp = c.sender_fingerprint();
        for (text, want) in [
            ("garbage\n".to_string(), "line 1"),
            (format!("{MAGIC}\nsender xyz\nnext 4\n"), "line 2"),
            (format!("{MAGIC}\nsender {fp}\nnext -1\n"), "line 3"),
            (format!("{MAGIC}\nsender {fp}\nnext 1099511627777\n"), "above 2^40"),
            (format!("{MAGIC}\nsender {fp}\nnext 4\nmore\n"), "line 4"),
            ("x".repeat(5000), "larger than"),
        ] {
            std::fs::write(&p, &text).unwrap();
            let e = SequenceStore::open(&p, &c, 4).err().map(|e| e.to_string()).unwrap_or_default();
            assert!(e.contains(want) && e.contains(&p.display().to_string()), "{text:?}: {e}");
        }
        std::fs::write(&p, format!("{MAGIC}\nsender {fp}\nnext 1099511627776\n")).unwrap();
        let mut s = SequenceStore::open(&p, &c, 4).unwrap();
        assert_eq!(s.next_seq(), Err(Error::SequenceExhausted));
    }

    #[test]
    fn the_last_numbers_are_handed_out_once_then_refused() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("seq");
        let c = ctx(1);
        std::fs::write(&p, format!("{MAGIC}\nsender {}\nnext {}\n", c.sender_fingerprint(), MAX_SEQ - 1)).unwrap();
        let mut s = SequenceStore::open(&p, &c, 1024).unwrap();
        assert_eq!(s.next_seq(), Ok(MAX_SEQ - 1));
        assert_eq!(s.next_seq(), Ok(MAX_SEQ));
        assert_eq!(s.next_seq(), Err(Error::SequenceExhausted));
        drop(s);
        let mut s = SequenceStore::open(&p, &c, 1024).unwrap();
        assert_eq!(s.next_seq(), Err(Error::SequenceExhausted));
    }

    #[test]
    fn an_unwritable_state_hands_out_nothing() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("seq");
        let c = ctx(1);
        let mut s = SequenceStore::open(&p, &c, 4).unwrap();
        // A directory where the temporary file goes makes the durable write fail.
        std::fs::create_dir(d.path().join(format!(".seq.tmp-{}", std::process::id()))).unwrap();
        let e = s.next_seq().unwrap_err().to_string();
        assert!(e.contains("cannot reserve numbers"), "{e}");
        assert_eq!(s.peek(), 0, "no number was handed out");
    }
}
