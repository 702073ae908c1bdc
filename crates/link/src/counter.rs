//! Persistent per-device message counters (the OSCORE / LoRaWAN "reserve a block" pattern).
//!
//! Rule: before a device uses any counter of a block it durably records the *end* of that
//! block (write a temporary file, fsync it, rename it over the state file, fsync the
//! directory). After a crash — `kill -9`, power loss — the device restarts from the recorded
//! end, so a crash costs at most one block of skipped counters and never repeats one.
//!
//! State file: first line `lwcbench-link-counters v1`, then one `DEVICE NEXT` line per device
//! (NEXT = first counter not yet reserved). One file may hold many devices (the in-process
//! fleet) or one (a device process).
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::frame::MAX_COUNTER;

pub const MAGIC: &str = "lwcbench-link-counters v1";
pub const DEFAULT_BLOCK: u64 = 1024;

struct Inner {
    path: PathBuf,
    /// device -> first counter not yet reserved (what the file says).
    reserved: BTreeMap<u32, u64>,
    writes: u64,
}

/// The state file shared by the devices of one process.
#[derive(Clone)]
pub struct CounterStore {
    inner: Arc<Mutex<Inner>>,
    block: u64,
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

impl CounterStore {
    /// Open (or start) the state file at `path`; `block` counters are reserved per write.
    pub fn open(path: &Path, block: u64) -> Result<CounterStore, String> {
        if block == 0 || block > 1 << 32 {
            return Err(format!("--counter-block: {block} is not in 1..=2^32"));
        }
        let p = path.display();
        let mut reserved = BTreeMap::new();
        match std::fs::read_to_string(path) {
            Ok(text) => {
                let mut lines = text.lines().enumerate();
                if lines.next().map(|(_, l)| l.trim()) != Some(MAGIC) {
                    return Err(format!("counter state {p}: line 1: expected '{MAGIC}'"));
                }
                for (i, line) in lines {
                    if line.trim().is_empty() {
                        continue;
                    }
                    let mut it = line.split_whitespace();
                    let parsed = match (it.next(), it.next(), it.next()) {
                        (Some(d), Some(n), None) => d.parse::<u32>().ok().zip(n.parse::<u64>().ok()),
                        _ => None,
                    };
                    match parsed {
                        Some((d, n)) if n <= MAX_COUNTER + 1 => {
                            reserved.insert(d, n);
                        }
                        _ => return Err(format!("counter state {p}: line {}: expected 'DEVICE NEXT'", i + 1)),
                    }
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(format!("counter state {p}: {e}")),
        }
        Ok(CounterStore { inner: Arc::new(Mutex::new(Inner { path: path.to_path_buf(), reserved, writes: 0 })), block })
    }

    fn persist(inner: &mut Inner) -> Result<(), String> {
        let mut text = format!("{MAGIC}\n");
        for (d, n) in &inner.reserved {
            text.push_str(&format!("{d} {n}\n"));
        }
        inner.writes += 1;
        write_durable(&inner.path, text.as_bytes())
            .map_err(|e| format!("counter state {}: cannot write: {e}", inner.path.display()))
    }

    /// Reserve the next block of `device`: returns `start..end`, recorded durably first.
    pub fn reserve(&self, device: u32) -> Result<std::ops::Range<u64>, String> {
        let mut g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let start = g.reserved.get(&device).copied().unwrap_or(0);
        let end = start.checked_add(self.block).filter(|&e| e <= MAX_COUNTER + 1);
        let Some(end) = end else { return Err(format!("device {device}: counter space exhausted")) };
        g.reserved.insert(device, end);
        if let Err(e) = Self::persist(&mut g) {
            g.reserved.insert(device, start);
            return Err(e);
        }
        Ok(start..end)
    }

    /// Reserve the first block for many devices with one durable write.
    pub fn reserve_all(&self, devices: &[u32]) -> Result<Vec<std::ops::Range<u64>>, String> {
        let mut g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let before = g.reserved.clone();
        let mut out = Vec::with_capacity(devices.len());
        for &d in devices {
            let start = g.reserved.get(&d).copied().unwrap_or(0);
            let end = start
                .checked_add(self.block)
                .filter(|&e| e <= MAX_COUNTER + 1)
                .ok_or_else(|| format!("device {d}: counter space exhausted"))?;
            g.reserved.insert(d, end);
            out.push(start..end);
        }
        if let Err(e) = Self::persist(&mut g) {
            g.reserved = before;
            return Err(e);
        }
        Ok(out)
    }

    /// Durable writes so far (each one an fsync pair).
    pub fn writes(&self) -> u64 {
        self.inner.lock().unwrap_or_else(|e| e.into_inner()).writes
    }
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
    pub fn new(store: &CounterStore, device: u32) -> Result<DeviceCounter, String> {
        let r = store.reserve(device)?;
        Ok(Self::with_block(store, device, r))
    }
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_never_repeat_across_reopen() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("ctr");
        let s = CounterStore::open(&p, 4).unwrap();
        let mut c = DeviceCounter::new(&s, 9).unwrap();
        let first: Vec<u64> = (0..6).map(|_| c.take().unwrap()).collect();
        assert_eq!(first, vec![0, 1, 2, 3, 4, 5]);
        // The file already says 8: the second block (4..8) was reserved before 4 was used.
        assert_eq!(std::fs::read_to_string(&p).unwrap(), format!("{MAGIC}\n9 8\n"));
        drop(c); // a "crash": 6 and 7 are never used
        let s2 = CounterStore::open(&p, 4).unwrap();
        let mut c2 = DeviceCounter::new(&s2, 9).unwrap();
        assert_eq!(c2.take().unwrap(), 8);
        let mut other = DeviceCounter::new(&s2, 1).unwrap();
        assert_eq!(other.take().unwrap(), 0);
    }

    #[test]
    fn bad_state_files_are_refused_with_line() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("ctr");
        std::fs::write(&p, "nope\n").unwrap();
        assert!(CounterStore::open(&p, 4).err().unwrap().contains("line 1"));
        std::fs::write(&p, format!("{MAGIC}\n1 2\nx y\n")).unwrap();
        assert!(CounterStore::open(&p, 4).err().unwrap().contains("line 3"));
        assert!(CounterStore::open(&d.path().join("n"), 0).is_err());
    }

    #[test]
    fn unwritable_state_is_an_error_and_hands_out_nothing() {
        let p = Path::new("/proc/lwcbench-no-such-dir/ctr");
        let s = CounterStore::open(p, 4).unwrap();
        assert!(DeviceCounter::new(&s, 1).is_err());
    }
}
