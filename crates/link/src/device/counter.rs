//! Persistent per-device message counters (the OSCORE / LoRaWAN "reserve a block" pattern).
//!
//! Rule: before a device uses any counter of a block it durably records the *end* of that
//! block (write a temporary file, fsync it, rename it over the state file, fsync the
//! directory). After a crash — `kill -9`, power loss — the device restarts from the recorded
//! end, so a crash costs at most one block of skipped counters and never repeats one.
//!
//! State file (docs/link.md, "Counter persistence rule"):
//! ```text
//! lwcbench-link-counters v2
//! key <the master key's fingerprint, 32 hex digits>
//! DEVICE NEXT          (one line per device; NEXT = first counter not yet reserved, ≤ 2^63)
//! ```
//! One state file is the counter authority of its key; several processes may share it, each
//! sealing as its own devices. Two locks, both open-file-description (OFD) locks on
//! `STATE.lock` and so released when the process ends, however it ends:
//! - a *lease* on byte `1 + DEVICE`, held while a process seals as that device: two processes
//!   sealing as one device would hand out the same counters, so the second is refused;
//! - byte 0, held only while a reservation reads, updates and rewrites the file, so processes
//!   sealing as different devices never lose each other's lines.
//!
//! The lock follows the file, not the name: the path is resolved (symlinks followed) before its
//! lock file is chosen, the file is rewritten at its resolved path (a symlink stays a symlink),
//! and a state file with more than one hard link is refused (a lock beside one name would not
//! be seen through the other). The fingerprint ties the file to one key; a file of another key,
//! a duplicate device, a value the frame's counter cannot carry, or a v1 file (no fingerprint)
//! is refused with the file and line.
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::wire::frame::Family;
use crate::wire::frame::MAX_COUNTER;
use crate::wire::keys::{DeviceKey, Fingerprinted, LinkKey, MasterKey};

/// Line 1 of a counter state file.
pub const MAGIC: &str = "lwcbench-link-counters v2";
/// The format before the key fingerprint: refused (it cannot say which key it belongs to).
pub const MAGIC_V1: &str = "lwcbench-link-counters v1";
/// Counters reserved per write of the state file unless `--counter-block` says otherwise.
pub const DEFAULT_BLOCK: u64 = 1024;
/// Larger than any real state file (100,000 devices take ~2 MB); bounds what is read.
const MAX_STATE_BYTES: u64 = 64 << 20;

/// The counter state of the key in `key_file`: `KEY_FILE.counters`, beside the key, so every
/// run with one key continues one state.
pub fn beside_key(key_file: &Path) -> PathBuf {
    let mut s = key_file.as_os_str().to_os_string();
    s.push(".counters");
    PathBuf::from(s)
}

/// The lock file of a state file: `STATE.lock` (the state file itself is replaced by rename,
/// so a lock on it would not hold across writes).
pub fn lock_path(state: &Path) -> PathBuf {
    let mut s = state.as_os_str().to_os_string();
    s.push(".lock");
    PathBuf::from(s)
}

/// The file a state path names: symlinks followed; a missing file is resolved through its
/// directory. Refuses what a lock cannot protect: a dangling symlink, something that is not a
/// regular file, a file with more than one hard link.
pub fn resolve_state(path: &Path) -> Result<PathBuf, String> {
    let p = path.display();
    let real = match std::fs::symlink_metadata(path) {
        Ok(_) => std::fs::canonicalize(path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => format!("counter state {p}: a symlink to a missing file"),
            _ => format!("counter state {p}: cannot resolve it: {e}"),
        })?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let name = path.file_name().ok_or_else(|| format!("counter state {p}: not a file name"))?;
            let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
            let dir = std::fs::canonicalize(dir)
                .map_err(|e| format!("counter state {p}: cannot resolve its directory {}: {e}", dir.display()))?;
            dir.join(name)
        }
        Err(e) => return Err(format!("counter state {p}: {e}")),
    };
    match std::fs::metadata(&real) {
        Ok(m) if !m.file_type().is_file() => Err(format!("counter state {p}: not a regular file")),
        Ok(m) if m.nlink() > 1 => Err(format!(
            "counter state {p}: has {} hard links; a lock taken through one name is not seen through another, \
             so a state file must have one name (copy it to a new file and remove the other names)",
            m.nlink()
        )),
        Ok(_) => Ok(real),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(real),
        Err(e) => Err(format!("counter state {p}: {e}")),
    }
}

/// An OFD lock of one byte of `f`: `F_WRLCK` or `F_UNLCK`; `wait` blocks until it is granted.
fn ofd_lock(f: &std::fs::File, byte: u64, kind: libc::c_int, wait: bool) -> std::io::Result<()> {
    // SAFETY: an all-zero `flock` is a valid value of this plain C struct.
    let mut fl: libc::flock = unsafe { std::mem::zeroed() };
    fl.l_type = kind as libc::c_short;
    fl.l_whence = libc::SEEK_SET as libc::c_short;
    fl.l_start = byte as libc::off_t;
    fl.l_len = 1;
    let cmd = if wait { libc::F_OFD_SETLKW } else { libc::F_OFD_SETLK };
    loop {
        // SAFETY: fcntl on a descriptor `f` owns, with a pointer to a live, initialised flock.
        if unsafe { libc::fcntl(f.as_raw_fd(), cmd, &fl as *const libc::flock) } == 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// The byte of `STATE.lock` that leases `device`.
fn lease_byte(device: u32) -> u64 {
    1 + device as u64
}

struct Inner {
    /// The resolved state file (the one rewritten).
    path: PathBuf,
    /// The path as the user gave it (for messages).
    shown: PathBuf,
    fingerprint: String,
    /// device -> first counter not yet reserved, for the devices this store leases.
    reserved: BTreeMap<u32, u64>,
    leased: BTreeSet<u32>,
    writes: u64,
    /// `STATE.lock`: its OFD locks go with this descriptor (so with the store, or the process).
    lock: std::fs::File,
}

/// The counter state of one key, shared by the devices of one process (and, device by device,
/// with other processes: see the module's locks).
#[derive(Clone)]
pub struct CounterStore {
    inner: Arc<Mutex<Inner>>,
    block: u64,
    existed: bool,
}

/// Write `bytes` to `path` durably: temp file + fsync + rename + fsync of the directory.
pub fn write_durable(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
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

/// Read and parse the state file at `real` (None: it does not exist).
fn read_state(real: &Path, shown: &Path, fp: &str) -> Result<Option<BTreeMap<u32, u64>>, String> {
    let Some(text) = crate::state_file::read_named(real, shown, "counter state", MAX_STATE_BYTES)? else {
        return Ok(None);
    };
    Ok(Some(parse(&text, fp).map_err(|e| format!("counter state {}: {e}", shown.display()))?))
}

impl CounterStore {
    /// Open the state file at `path` for the key `key` (starting it if missing); `block`
    /// counters are reserved per write. Devices are leased as they reserve their first block.
    pub fn open(path: &Path, block: u64, key: &impl Fingerprinted) -> Result<CounterStore, String> {
        if block == 0 || block > 1 << 32 {
            return Err(format!("--counter-block: {block} is not in 1..=2^32"));
        }
        let p = path.display();
        let real = resolve_state(path)?;
        let lp = lock_path(&real);
        let lock = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&lp)
            .map_err(|e| format!("counter state {p}: cannot open its lock file {}: {e}", lp.display()))?;
        let fingerprint = key.fingerprint();
        ofd_lock(&lock, 0, libc::F_WRLCK, true)
            .map_err(|e| format!("counter state {p}: cannot lock {}: {e}", lp.display()))?;
        let read = read_state(&real, path, &fingerprint);
        let _ = ofd_lock(&lock, 0, libc::F_UNLCK, false);
        let existed = read?.is_some();
        let inner = Inner {
            path: real,
            shown: path.to_path_buf(),
            fingerprint,
            reserved: BTreeMap::new(),
            leased: BTreeSet::new(),
            writes: 0,
            lock,
        };
        Ok(CounterStore { inner: Arc::new(Mutex::new(inner)), block, existed })
    }

    /// Whether the state file existed when it was opened (false: this store starts it).
    pub fn existed(&self) -> bool {
        self.existed
    }

    /// The state file's path, as given.
    pub fn path(&self) -> PathBuf {
        self.inner.lock().unwrap_or_else(|e| e.into_inner()).shown.clone()
    }

    /// Write the file as it stands (a new state: header and fingerprint only).
    pub fn save(&self) -> Result<(), String> {
        Self::update(&mut self.inner.lock().unwrap_or_else(|e| e.into_inner()), &[], 0).map(|_| ())
    }

    /// Lease `device` for this store (refused while another holds it).
    fn lease(inner: &mut Inner, device: u32) -> Result<(), String> {
        if inner.leased.contains(&device) {
            return Ok(());
        }
        match ofd_lock(&inner.lock, lease_byte(device), libc::F_WRLCK, false) {
            Ok(()) => {
                inner.leased.insert(device);
                Ok(())
            }
            Err(e) if matches!(e.raw_os_error(), Some(libc::EAGAIN) | Some(libc::EACCES)) => Err(format!(
                "counter state {}: device {device} is in use by another process (its lease in {} is held); one \
                 device seals from one process at a time",
                inner.shown.display(),
                lock_path(&inner.path).display()
            )),
            Err(e) => Err(format!("counter state {}: cannot lease device {device}: {e}", inner.shown.display())),
        }
    }

    /// Read the file afresh, reserve `block` more counters for each of `devices` (leased by
    /// this store), and write it durably, all under byte 0 of the lock; returns the ranges.
    fn update(inner: &mut Inner, devices: &[u32], block: u64) -> Result<Vec<std::ops::Range<u64>>, String> {
        Self::update_from(inner, devices, block, 0)
    }

    /// [`CounterStore::update`] with every block starting at `floor` or later.
    fn update_from(
        inner: &mut Inner,
        devices: &[u32],
        block: u64,
        floor: u64,
    ) -> Result<Vec<std::ops::Range<u64>>, String> {
        let p = inner.shown.display().to_string();
        ofd_lock(&inner.lock, 0, libc::F_WRLCK, true).map_err(|e| format!("counter state {p}: cannot lock: {e}"))?;
        let res = (|| {
            let mut file = read_state(&inner.path, &inner.shown, &inner.fingerprint)?.unwrap_or_default();
            let mut out = Vec::with_capacity(devices.len());
            for &d in devices {
                // The larger of the file and what this store reserved: a file rolled back
                // under a running process does not move its counters back.
                let start =
                    file.get(&d).copied().unwrap_or(0).max(inner.reserved.get(&d).copied().unwrap_or(0)).max(floor);
                let end = start
                    .checked_add(block)
                    .filter(|&e| e <= MAX_COUNTER + 1)
                    .ok_or_else(|| format!("device {d}: counter space exhausted"))?;
                file.insert(d, end);
                out.push(start..end);
            }
            let mut text = format!("{MAGIC}\nkey {}\n", inner.fingerprint);
            for (d, n) in &file {
                text.push_str(&format!("{d} {n}\n"));
            }
            write_durable(&inner.path, text.as_bytes()).map_err(|e| format!("counter state {p}: cannot write: {e}"))?;
            inner.writes += 1;
            for (&d, r) in devices.iter().zip(&out) {
                inner.reserved.insert(d, r.end);
            }
            Ok(out)
        })();
        let _ = ofd_lock(&inner.lock, 0, libc::F_UNLCK, false);
        res
    }

    /// Lease `device` now (a process takes it before it opens anything else it writes as that
    /// device); refused while another store holds it. Reserving leases too.
    pub fn claim(&self, device: u32) -> Result<(), String> {
        Self::lease(&mut self.inner.lock().unwrap_or_else(|e| e.into_inner()), device)
    }

    /// Reserve the next block of `device`: returns `start..end`, recorded durably first.
    pub fn reserve(&self, device: u32) -> Result<std::ops::Range<u64>, String> {
        let mut g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        Self::lease(&mut g, device)?;
        let mut r = Self::update(&mut g, &[device], self.block)?;
        Ok(r.remove(0))
    }

    /// Reserve the next block of `device` starting at `floor` or later (a carrier's counter that
    /// jumped ahead: `crate::wire::compact`).
    pub fn reserve_from(&self, device: u32, floor: u64) -> Result<std::ops::Range<u64>, String> {
        let mut g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        Self::lease(&mut g, device)?;
        let mut r = Self::update_from(&mut g, &[device], self.block, floor)?;
        Ok(r.remove(0))
    }

    /// Reserve the first block for many devices with one durable write.
    pub fn reserve_all(&self, devices: &[u32]) -> Result<Vec<std::ops::Range<u64>>, String> {
        let mut g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let mut seen = BTreeSet::new();
        if let Some(d) = devices.iter().find(|&&d| !seen.insert(d)) {
            return Err(format!("device {d} listed twice"));
        }
        let mut new = Vec::new();
        for &d in devices {
            let held = g.leased.contains(&d);
            if let Err(e) = Self::lease(&mut g, d) {
                // All or nothing: the leases this call took are given back.
                for n in new {
                    let _ = ofd_lock(&g.lock, lease_byte(n), libc::F_UNLCK, false);
                    g.leased.remove(&n);
                }
                return Err(e);
            }
            if !held {
                new.push(d);
            }
        }
        Self::update(&mut g, devices, self.block)
    }

    /// Durable writes so far (each one an fsync pair).
    pub fn writes(&self) -> u64 {
        self.inner.lock().unwrap_or_else(|e| e.into_inner()).writes
    }
}

/// Parse a state file's text for the key with fingerprint `fp`; errors name the line.
fn parse(text: &str, fp: &str) -> Result<BTreeMap<u32, u64>, String> {
    let mut lines = crate::state_file::numbered(text).map(|(n, l)| (n, l.trim()));
    match lines.next() {
        Some((_, MAGIC)) => {}
        Some((_, MAGIC_V1)) => {
            return Err(format!(
                "line 1: format v1 has no key fingerprint, so nothing ties it to a key; if it was written with this \
                 key, make line 1 '{MAGIC}' and insert 'key {fp}' as line 2, otherwise use this key's own state file"
            ))
        }
        _ => return Err(format!("line 1: expected '{MAGIC}' (not a counter state file of this lwcbench)")),
    }
    match lines.next() {
        Some((_, l)) if l.strip_prefix("key ") == Some(fp) => {}
        Some((_, l)) if l.starts_with("key ") => {
            return Err(format!(
                "line 2: written for another key (fingerprint {}, this key's is {fp}); a state file serves one key",
                l[4..].trim()
            ))
        }
        _ => return Err("line 2: expected 'key FINGERPRINT' (32 hex digits)".into()),
    }
    let mut reserved = BTreeMap::new();
    let mut line_of = BTreeMap::new();
    for (n, line) in lines {
        if line.is_empty() {
            continue;
        }
        let mut it = line.split_whitespace();
        let (Some(d), Some(next), None) = (it.next(), it.next(), it.next()) else {
            return Err(format!("line {n}: expected 'DEVICE NEXT'"));
        };
        let d: u32 = d.parse().map_err(|_| format!("line {n}: device '{d}' is not in 0..=4294967295"))?;
        let next = match next.parse::<u64>() {
            Ok(v) if v <= MAX_COUNTER + 1 => v,
            _ if next.bytes().all(|b| b.is_ascii_digit()) => {
                return Err(format!("line {n}: next counter {next} is above 2^63 (the frame's counter has 63 bits)"))
            }
            _ => return Err(format!("line {n}: next counter '{next}' is not a number in 0..=2^63")),
        };
        if let Some(first) = line_of.insert(d, n) {
            return Err(format!("line {n}: device {d} again (first on line {first}); which counter holds is unknown"));
        }
        reserved.insert(d, next);
    }
    Ok(reserved)
}

/// The master key and counter state of everything that seals (sessions, `link device`, video,
/// Modbus proxies, GOOSE): an existing key must come with its existing state file — a missing
/// one would restart its counters at 0 under a key that has sealed before — and a key whose own
/// state file (`KEY.counters`) exists takes no other: one counter authority per key. A key
/// created here gets its state file first, so every key this tool made has one.
pub fn open_session(key_file: &Path, state: &Path, block: u64) -> Result<(MasterKey, CounterStore), String> {
    if key_file.exists() {
        let master = MasterKey::read(key_file)?;
        only_own_state(key_file, state)?;
        let store = CounterStore::open(state, block, &master)?;
        if !store.existed() {
            return Err(format!(
                "counter state {}: missing, but --key-file {} exists: its counters would restart at 0 under a key \
                 that may have sealed before; restore the state file, use a new key file, or — only if this key has \
                 never sealed a frame — create the state file with the lines '{MAGIC}' and 'key {}'",
                state.display(),
                key_file.display(),
                master.fingerprint()
            ));
        }
        Ok((master, store))
    } else {
        let master = MasterKey::random();
        let store = CounterStore::open(state, block, &master)?;
        store.save()?;
        if let Err(e) = master.write_new(key_file) {
            // Nothing half-written: the state started for this key goes with it.
            let _ = std::fs::remove_file(resolve_state(state).unwrap_or_else(|_| state.to_path_buf()));
            return Err(e);
        }
        Ok((master, store))
    }
}

/// A key whose own state file (`KEY.counters`) exists takes no other state file.
fn only_own_state(key_file: &Path, state: &Path) -> Result<(), String> {
    let own = beside_key(key_file);
    if own.exists() && resolve_state(&own)? != resolve_state(state)? {
        return Err(format!(
            "counter state {}: --key-file {} has its own counter state {}; one key has one counter state (two \
             would hand out the same counters), so drop --counter-state or give that file",
            state.display(),
            key_file.display(),
            own.display()
        ));
    }
    Ok(())
}

/// The device key and counter state of a device or Modbus proxy process: both written by
/// `lwcbench link provision` and both required (a master key is refused: a device holds only
/// its own key; a missing state is refused: its counters would restart under a key that may
/// have sealed before).
pub fn open_device(
    key_file: &Path,
    state: &Path,
    block: u64,
    family: Family,
) -> Result<(DeviceKey, CounterStore), String> {
    if !key_file.exists() {
        return Err(format!(
            "--key-file {}: missing; a device key and its counter state are written by \
             lwcbench link provision --key-file MASTER --protocol {} --device N --out DEVICE.key",
            key_file.display(),
            family.label()
        ));
    }
    let key = LinkKey::read(key_file)?.into_device(key_file, family)?;
    only_own_state(key_file, state)?;
    let store = CounterStore::open(state, block, &key)?;
    if !store.existed() {
        return Err(format!(
            "counter state {}: missing; it is written together with the device key by lwcbench link provision, \
             and a device key without its state could repeat counters: restore the state file or provision a new \
             device key",
            state.display()
        ));
    }
    Ok((key, store))
}

/// A device's counter: hands out counters from its reserved block, reserving the next block
/// (durably) when it runs out.
pub struct DeviceCounter {
    device: u32,
    next: u64,
    end: u64,
    store: CounterStore,
}

impl DeviceCounter {
    /// The counters of `device`, starting with a fresh block reserved in `store`.
    pub fn new(store: &CounterStore, device: u32) -> Result<DeviceCounter, String> {
        let r = store.reserve(device)?;
        Ok(Self::with_block(store, device, r))
    }
    /// The counters of `device` from the block `r` already reserved in `store`.
    pub fn with_block(store: &CounterStore, device: u32, r: std::ops::Range<u64>) -> DeviceCounter {
        DeviceCounter { device, next: r.start, end: r.end, store: store.clone() }
    }
    /// The next counter, never one handed out before by this or an earlier process.
    pub fn take(&mut self) -> Result<u64, String> {
        if self.next == self.end {
            let r = self.store.reserve(self.device)?;
            self.next = r.start;
            self.end = r.end;
        }
        let c = self.next;
        self.next += 1;
        Ok(c)
    }

    /// Take exactly counter `c` (a carrier's frame counter): refused if `c` may have been handed
    /// out before — below the next counter of this device, here or in the state file.
    pub fn take_exact(&mut self, c: u64) -> Result<u64, String> {
        if c < self.next {
            return Err(self.behind(c, self.next));
        }
        if c >= self.end {
            let r = self.store.reserve_from(self.device, c)?;
            if r.start > c {
                return Err(self.behind(c, r.start));
            }
            self.end = r.end;
        }
        self.next = c + 1;
        Ok(c)
    }

    /// The next counter at or above `floor`.
    pub fn take_from(&mut self, floor: u64) -> Result<u64, String> {
        self.take_exact(floor.max(self.next))
    }

    fn behind(&self, c: u64, next: u64) -> String {
        format!(
            "device {}: counter {c} (join epoch {}, FCnt {}) is below {next}, the next this device may seal under its \
             key (counter state {}): the carrier's FCnt repeated or was reset without a re-join (raise --join-epoch)",
            self.device,
            c >> 32,
            c & 0xFFFF_FFFF,
            self.store.path().display()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(b: u8) -> MasterKey {
        MasterKey::from_bytes([b; 32])
    }

    /// Key [7; 32]'s fingerprint, computed independently with Python's hmac/hashlib (RFC 5869
    /// extract + one expand block, info "lwcbench-link key id", first 16 bytes).
    const FP7: &str = "32f4fc68107ab4dd67b987d1614f906b";

    #[test]
    fn counters_never_repeat_across_reopen() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("ctr");
        let s = CounterStore::open(&p, 4, &key(7)).unwrap();
        assert!(!s.existed());
        let mut c = DeviceCounter::new(&s, 9).unwrap();
        let first: Vec<u64> = (0..6).map(|_| c.take().unwrap()).collect();
        assert_eq!(first, vec![0, 1, 2, 3, 4, 5]);
        // The file already says 8: the second block (4..8) was reserved before 4 was used.
        assert_eq!(std::fs::read_to_string(&p).unwrap(), format!("{MAGIC}\nkey {FP7}\n9 8\n"));
        drop((c, s)); // a "crash": 6 and 7 are never used
        let s2 = CounterStore::open(&p, 4, &key(7)).unwrap();
        assert!(s2.existed());
        let mut c2 = DeviceCounter::new(&s2, 9).unwrap();
        assert_eq!(c2.take().unwrap(), 8);
        let mut other = DeviceCounter::new(&s2, 1).unwrap();
        assert_eq!(other.take().unwrap(), 0);
    }

    #[test]
    fn bad_state_files_are_refused_with_line() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("ctr");
        let open = |text: &str| {
            std::fs::write(&p, text).unwrap();
            CounterStore::open(&p, 4, &key(7)).err().unwrap()
        };
        let e = open("nope\n");
        assert!(e.contains(&p.display().to_string()) && e.contains("line 1"), "{e}");
        // No header at all (bare DEVICE NEXT lines): refused, not guessed.
        assert!(open("1 2048\n").contains("line 1: expected 'lwcbench-link-counters v2'"));
        assert!(open(&format!("{MAGIC}\n1 2\n")).contains("line 2: expected 'key FINGERPRINT'"));
        assert!(open(&format!("{MAGIC}\nkey {FP7}\n1 2\nx y\n")).contains("line 4: device 'x'"));
        assert!(open(&format!("{MAGIC}\nkey {FP7}\n1 2 3\n")).contains("line 3: expected 'DEVICE NEXT'"));
        assert!(open(&format!("{MAGIC}\nkey {FP7}\n1 -1\n")).contains("line 3: next counter '-1' is not a number"));
        assert!(CounterStore::open(&d.path().join("n"), 0, &key(7)).is_err());
        assert!(CounterStore::open(&d.path().join("n"), (1 << 32) + 1, &key(7)).is_err());
    }

    /// A line over the state files' bound (crate::state_file) is refused naming the file and
    /// the line, even one that would parse: "7 000…0005" with 2,000 zeros read as device 7, next
    /// counter 5, before the bound.
    #[test]
    fn a_line_over_the_bound_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("ctr");
        std::fs::write(&p, format!("{MAGIC}\nkey {FP7}\n7 {}5\n", "0".repeat(2000))).unwrap();
        let e = CounterStore::open(&p, 4, &key(7)).err().expect("a 2 KB line is refused");
        assert_eq!(e, format!("counter state {}: line 3: longer than 1024 bytes", p.display()));
    }

    /// Two lines for one device: which one the last run wrote is unknown, so neither is used.
    #[test]
    fn duplicate_device_lines_are_refused() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("ctr");
        std::fs::write(&p, format!("{MAGIC}\nkey {FP7}\n1 2048\n2 5\n1 0\n")).unwrap();
        let e = CounterStore::open(&p, 4, &key(7)).err().expect("a duplicate device is an error");
        assert!(e.contains("line 5: device 1 again (first on line 3)"), "{e}");
    }

    /// 2^63 (= MAX_COUNTER + 1, the space is used up) is the largest NEXT; beyond it, and beyond
    /// u64, the line is refused as out of range.
    #[test]
    fn next_counters_above_2_63_are_refused() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("ctr");
        std::fs::write(&p, format!("{MAGIC}\nkey {FP7}\n1 9223372036854775808\n")).unwrap();
        let s = CounterStore::open(&p, 4, &key(7)).unwrap();
        assert!(s.reserve(1).unwrap_err().contains("exhausted"));
        drop(s);
        for big in ["9223372036854775809", "18446744073709551615", "99999999999999999999999"] {
            std::fs::write(&p, format!("{MAGIC}\nkey {FP7}\n0 1\n1 {big}\n")).unwrap();
            let e = CounterStore::open(&p, 4, &key(7)).err().unwrap();
            assert!(e.contains(&format!("line 4: next counter {big} is above 2^63")), "{e}");
        }
    }

    #[test]
    fn a_state_file_serves_one_key() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("ctr");
        DeviceCounter::new(&CounterStore::open(&p, 4, &key(7)).unwrap(), 0).unwrap();
        let e = CounterStore::open(&p, 4, &key(8)).err().expect("another key is refused");
        // Key [8; 32]'s fingerprint, computed as FP7.
        assert!(e.contains("line 2: written for another key") && e.contains(FP7), "{e}");
        assert!(e.contains("4522d92be3296147132c72dd4fb8d592"), "{e}");
        assert!(!std::fs::read_to_string(&p).unwrap().contains(&hex::encode([7u8; 32])), "never the key itself");
    }

    #[test]
    fn version_1_files_are_refused_with_what_to_do() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("ctr");
        std::fs::write(&p, "lwcbench-link-counters v1\n1 2048\n").unwrap();
        let e = CounterStore::open(&p, 4, &key(7)).err().unwrap();
        assert!(e.contains("line 1: format v1 has no key fingerprint") && e.contains(&format!("key {FP7}")), "{e}");
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "lwcbench-link-counters v1\n1 2048\n", "left as it was");
    }

    /// Two sealers of one device would hand out the same counters: the second is refused
    /// while the first holds the device's lease, and may take it once the first is gone.
    /// Another device of the same state file is free meanwhile, and neither loses the other's line.
    #[test]
    fn a_device_is_leased_while_in_use() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("ctr");
        let s = CounterStore::open(&p, 4, &key(7)).unwrap();
        assert_eq!(s.reserve(1).unwrap(), 0..4);
        let other = CounterStore::open(&p, 4, &key(7)).unwrap();
        let e = other.reserve(1).expect_err("a second sealer of device 1 is refused");
        assert!(e.contains(&p.display().to_string()) && e.contains("device 1 is in use by another process"), "{e}");
        assert!(other.reserve_all(&[2, 1]).is_err(), "reserve_all leases each device");
        assert_eq!(other.reserve(3).unwrap(), 0..4);
        assert_eq!(s.reserve(1).unwrap(), 4..8, "the first store continues, other's line kept");
        assert_eq!(std::fs::read_to_string(&p).unwrap(), format!("{MAGIC}\nkey {FP7}\n1 8\n3 4\n"));
        assert_eq!(s.reserve(2).unwrap(), 0..4, "a refused reserve_all gives back the leases it took");
        let clone = s.clone();
        drop(s);
        assert!(other.reserve(1).is_err(), "a clone still holds the lease");
        drop(clone);
        assert_eq!(other.reserve(1).unwrap(), 8..12, "free once the holder is gone, from the file's value");
    }

    /// The lock follows the file: a symlink to a state file in use is refused for that device, and
    /// the symlink stays a symlink after writes; a hard-linked state file is refused outright.
    #[test]
    fn the_lock_follows_the_file_not_the_name() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("ctr");
        let s = CounterStore::open(&p, 4, &key(7)).unwrap();
        s.reserve(5).unwrap();
        let link = d.path().join("alias");
        std::os::unix::fs::symlink(&p, &link).unwrap();
        let via = CounterStore::open(&link, 4, &key(7)).unwrap();
        assert!(via.existed());
        let e = via.reserve(5).expect_err("the same file through a symlink is the same lease");
        assert!(e.contains("device 5 is in use"), "{e}");
        via.reserve(6).unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "never replaced by rename");
        assert!(std::fs::read_to_string(&p).unwrap().ends_with("5 4\n6 4\n"));
        drop((s, via));
        let hard = d.path().join("hard");
        std::fs::hard_link(&p, &hard).unwrap();
        for name in [&p, &hard] {
            let e = CounterStore::open(name, 4, &key(7)).err().expect("two names are refused");
            assert!(e.contains("has 2 hard links"), "{e}");
        }
        std::fs::remove_file(&hard).unwrap();
        let dangling = d.path().join("dangling");
        std::os::unix::fs::symlink(d.path().join("nowhere"), &dangling).unwrap();
        assert!(CounterStore::open(&dangling, 4, &key(7)).err().unwrap().contains("a symlink to a missing file"));
        std::fs::create_dir(d.path().join("dir")).unwrap();
        assert!(CounterStore::open(&d.path().join("dir"), 4, &key(7)).err().unwrap().contains("not a regular file"));
    }

    /// A state file rolled back under a running process does not move its counters back.
    #[test]
    fn a_running_store_never_goes_back() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("ctr");
        let s = CounterStore::open(&p, 4, &key(7)).unwrap();
        let old = {
            s.save().unwrap();
            std::fs::read_to_string(&p).unwrap()
        };
        assert_eq!(s.reserve(2).unwrap(), 0..4);
        std::fs::write(&p, old).unwrap();
        assert_eq!(s.reserve(2).unwrap(), 4..8);
    }

    #[test]
    fn sessions_pair_a_key_with_its_state() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let k = d.path().join("k");
        let st = beside_key(&k);
        assert_eq!(st, d.path().join("k.counters"));
        // A new key starts its state at once, with its fingerprint.
        let (m, s) = open_session(&k, &st, 4).unwrap();
        let fp = m.fingerprint();
        assert_eq!(std::fs::read_to_string(&st).unwrap(), format!("{MAGIC}\nkey {fp}\n"));
        DeviceCounter::new(&s, 3).unwrap();
        drop(s);
        // The same key continues it.
        let (_, s) = open_session(&k, &st, 4).unwrap();
        assert_eq!(DeviceCounter::new(&s, 3).unwrap().take().unwrap(), 4);
        drop(s);
        // A second state for a key that has its own: refused (one counter authority per key).
        let other = d.path().join("elsewhere");
        let e = open_session(&k, &other, 4).err().unwrap();
        assert!(e.contains("has its own counter state") && e.contains("k.counters"), "{e}");
        assert!(!other.exists());
        // A symlink to the key's own state is that state.
        let alias = d.path().join("alias");
        std::os::unix::fs::symlink(&st, &alias).unwrap();
        assert_eq!(DeviceCounter::new(&open_session(&k, &alias, 4).unwrap().1, 3).unwrap().take().unwrap(), 8);
        // The key without its state: refused (its counters would restart at 0).
        std::fs::rename(&st, d.path().join("moved")).unwrap();
        let e = open_session(&k, &other, 4).err().unwrap();
        assert!(e.contains("elsewhere: missing, but --key-file") && e.contains(&fp), "{e}");
        assert!(!other.exists());
        std::fs::rename(d.path().join("moved"), &st).unwrap();
        // A state without its key: a new key is not paired with it, and no key file is left.
        let k2 = d.path().join("k2");
        assert!(open_session(&k2, &st, 4).err().unwrap().contains("written for another key"));
        assert!(!k2.exists());
        assert_eq!(std::fs::metadata(&k).unwrap().permissions().mode() & 0o777, 0o600);
    }

    #[test]
    fn unwritable_state_is_an_error_and_hands_out_nothing() {
        let p = Path::new("/proc/lwcbench-no-such-dir/ctr");
        let e = CounterStore::open(p, 4, &key(7)).err().unwrap();
        assert!(e.contains("/proc/lwcbench-no-such-dir/ctr") && e.contains("cannot resolve its directory"), "{e}");
    }
}
