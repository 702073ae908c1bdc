//! The accepted high-water marks of one key, persisted beside it (`KEY_FILE.accepted`), so a
//! restarted receiver or a fresh store never accepts a frame an earlier run accepted:
//!
//! ```text
//! lwcbench-link-accepted v1
//! key <the master key's fingerprint, 32 hex digits>
//! PROTO DEVICE HIGHEST     (one line per (protocol, device); HIGHEST < 2^63)
//! ```
//!
//! `HIGHEST` is the highest counter of that (protocol, device) a receiver of this key accepted
//! (for the sensor gateway: committed to its store). It only ever rises: writers read the file
//! afresh under an exclusive `flock` of `KEY_FILE.accepted.lock` (the file itself is replaced by
//! rename, so a lock on it would not hold across writes), take the larger of each value and
//! write it durably (temp file, fsync, rename, fsync of the directory), so concurrent receivers
//! of one key (gateway workers, shared members, a video server beside a gateway) lose nothing.
//! Receivers load it at start: a counter at or below the mark is refused (docs/security.md
//! "Replay protection per key").
use std::collections::BTreeMap;
use std::io::Read;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use crate::device::counter::write_durable;
use crate::wire::frame::{Proto, MAX_COUNTER};

/// Line 1 of an accepted-marks file.
pub const MAGIC: &str = "lwcbench-link-accepted v1";
/// Larger than any real file (100,000 devices of one protocol take ~3 MB); bounds what is read.
pub const MAX_BYTES: u64 = 64 << 20;
/// Most often the sensor gateway rewrites the file while frames arrive (and once at a clean
/// stop): the mark may lag the store by this much (docs/security.md, the exposure window).
pub const WRITE_EVERY: Duration = Duration::from_millis(150);

/// A protocol's name in the file's first column. The frame's labels (`modbus/m->s`) are not
/// used: the file keeps names a shell word and a file name can hold as they are.
pub fn label(p: Proto) -> &'static str {
    match p {
        Proto::Sensor => "sensor",
        Proto::Video => "video",
        Proto::ModbusToSlave => "modbus-m2s",
        Proto::ModbusToMaster => "modbus-s2m",
        Proto::Goose => "goose",
    }
}

/// The protocol named `s` in the file's first column ([`label`]).
pub fn parse_label(s: &str) -> Option<Proto> {
    Proto::ALL.into_iter().find(|&p| label(p) == s)
}

/// `KEY_FILE.accepted`: beside the key, so every receiver of one key shares one set of marks.
pub fn beside_key(key_file: &Path) -> PathBuf {
    let mut s = key_file.as_os_str().to_os_string();
    s.push(".accepted");
    PathBuf::from(s)
}

fn lock_path(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_os_string();
    s.push(".lock");
    PathBuf::from(s)
}

/// The marks of one key: (protocol, device) → highest accepted counter.
pub type Marks = BTreeMap<(Proto, u32), u64>;

/// Parse a marks file's text for the key with fingerprint `fp` (`None`: any key); errors name
/// the line and, for a bad field, its column.
pub fn parse(text: &str, fp: Option<&str>) -> Result<Marks, String> {
    let mut lines = crate::state_file::numbered(text);
    if lines.next().map(|(_, l)| l.trim()) != Some(MAGIC) {
        return Err(format!("line 1: expected '{MAGIC}' (not an accepted-marks file of this lwcbench)"));
    }
    match lines.next().and_then(|(_, l)| l.trim().strip_prefix("key ")) {
        Some(k) if fp.is_none_or(|fp| k.trim() == fp) => {}
        Some(k) => {
            return Err(format!(
                "line 2: written for another key (fingerprint {}, this key's is {}); a marks file serves one key",
                crate::input::shown(k.trim()),
                fp.unwrap_or_default()
            ))
        }
        None => return Err("line 2: expected 'key FINGERPRINT'".into()),
    }
    let mut marks = Marks::new();
    let mut line_of = BTreeMap::new();
    for (n, line) in lines {
        if line.trim().is_empty() {
            continue;
        }
        // (column, field): columns count from 1, as an editor shows them
        let fields: Vec<(usize, &str)> = line
            .char_indices()
            .filter(|&(i, c)| !c.is_whitespace() && (i == 0 || line[..i].ends_with(char::is_whitespace)))
            .map(|(i, _)| (i + 1, line[i..].split_whitespace().next().unwrap_or_default()))
            .collect();
        let [(c1, p), (c2, d), (c3, h)] = fields[..] else {
            return Err(format!("line {n}: expected 'PROTO DEVICE HIGHEST'"));
        };
        let proto = parse_label(p).ok_or_else(|| {
            let names: Vec<&str> = Proto::ALL.iter().map(|&p| label(p)).collect();
            format!("line {n}, column {c1}: protocol '{}' is not one of {}", crate::input::shown(p), names.join(", "))
        })?;
        let device: u32 = d.parse().map_err(|_| {
            format!("line {n}, column {c2}: device '{}' is not in 0..=4294967295", crate::input::shown(d))
        })?;
        let high = h.parse::<u64>().ok().filter(|&v| v <= MAX_COUNTER).ok_or_else(|| {
            format!("line {n}, column {c3}: highest counter '{}' is not a number in 0..2^63", crate::input::shown(h))
        })?;
        if let Some(first) = line_of.insert((proto, device), n) {
            return Err(format!(
                "line {n}: {} device {device} again (first on line {first}); which mark holds is unknown",
                label(proto)
            ));
        }
        marks.insert((proto, device), high);
    }
    Ok(marks)
}

/// Read the marks file at `path` for the key `fp` (`None`: it does not exist).
pub fn read(path: &Path, fp: Option<&str>) -> Result<Option<Marks>, String> {
    let Some(text) = crate::state_file::read(path, "accepted marks", MAX_BYTES)? else { return Ok(None) };
    parse(&text, fp).map(Some).map_err(|e| format!("accepted marks {}: {e}", path.display()))
}

/// The marks of `proto` in `marks`, by device.
pub fn of_proto(marks: &Marks, proto: Proto) -> BTreeMap<u32, u64> {
    marks.iter().filter(|((p, _), _)| *p == proto).map(|(&(_, d), &h)| (d, h)).collect()
}

/// An exclusive `flock` of the marks' lock file, released when dropped (or when the process
/// ends, however it ends).
struct Locked(std::fs::File);

impl Locked {
    fn take(path: &Path) -> Result<Locked, String> {
        let lp = lock_path(path);
        let f =
            std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(false).open(&lp).map_err(|e| {
                format!("accepted marks {}: cannot open its lock file {}: {e}", path.display(), lp.display())
            })?;
        loop {
            // SAFETY: flock on a descriptor `f` owns.
            if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) } == 0 {
                return Ok(Locked(f));
            }
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::Interrupted {
                return Err(format!("accepted marks {}: cannot lock {}: {e}", path.display(), lp.display()));
            }
        }
    }
}

impl Drop for Locked {
    fn drop(&mut self) {
        // SAFETY: as in `take`.
        unsafe { libc::flock(self.0.as_raw_fd(), libc::LOCK_UN) };
    }
}

/// Raise the marks in the file at `path` (key `fp`) to at least `updates`, never lowering one:
/// read afresh, merge by maximum and write durably, all under the lock.
pub fn merge(path: &Path, fp: &str, updates: &Marks) -> Result<(), String> {
    if updates.is_empty() {
        return Ok(());
    }
    let _lock = Locked::take(path)?;
    let mut marks = read(path, Some(fp))?.unwrap_or_default();
    let before = marks.clone();
    for (&k, &v) in updates {
        let m = marks.entry(k).or_insert(v);
        *m = (*m).max(v);
    }
    if marks == before && path.exists() {
        return Ok(());
    }
    let mut text = format!("{MAGIC}\nkey {fp}\n");
    for ((p, d), h) in &marks {
        text.push_str(&format!("{} {d} {h}\n", label(*p)));
    }
    write_durable(path, text.as_bytes()).map_err(|e| format!("accepted marks {}: cannot write: {e}", path.display()))
}

/// A receiver's marks as it runs: what it accepted since the last write, written at most every
/// [`WRITE_EVERY`] (and by [`Keeper::flush`] at a clean stop).
pub struct Keeper {
    path: PathBuf,
    fp: String,
    pending: Marks,
    last: Option<Instant>,
    every: Duration,
    /// Writes of the file so far.
    pub writes: u64,
}

impl Keeper {
    /// The keeper of the marks file at `path` for the key `fp`, writing at most every [`WRITE_EVERY`].
    pub fn new(path: &Path, fp: &str) -> Keeper {
        Keeper {
            path: path.to_path_buf(),
            fp: fp.to_string(),
            pending: Marks::new(),
            last: None,
            every: WRITE_EVERY,
            writes: 0,
        }
    }

    /// Write at most every `every` (tests).
    pub fn with_every(mut self, every: Duration) -> Keeper {
        self.every = every;
        self
    }

    /// The marks file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Record that `counter` of (proto, device) was accepted (committed).
    pub fn note(&mut self, proto: Proto, device: u32, counter: u64) {
        let m = self.pending.entry((proto, device)).or_insert(counter);
        *m = (*m).max(counter);
    }

    /// Write what is pending if the last write is at least `every` ago.
    pub fn maybe_flush(&mut self) -> Result<(), String> {
        if self.pending.is_empty() || self.last.is_some_and(|t| t.elapsed() < self.every) {
            return Ok(());
        }
        self.flush()
    }

    /// Write what is pending now.
    pub fn flush(&mut self) -> Result<(), String> {
        if self.pending.is_empty() {
            return Ok(());
        }
        self.last = Some(Instant::now());
        merge(&self.path, &self.fp, &self.pending)?;
        self.writes += 1;
        self.pending.clear();
        Ok(())
    }
}

/// A receiver's marks written in the background: receiving threads only note (a map update under
/// a mutex); a thread of its own writes what is pending every `every`, so the file lags the
/// commits by at most that plus one write even when frames stop arriving, and no batch waits for
/// an fsync. [`Marker::finish`] (or dropping it) writes the rest: a clean stop.
pub struct Marker {
    pending: Arc<Mutex<Marks>>,
    error: Arc<Mutex<Option<String>>>,
    stop: Mutex<Option<mpsc::Sender<()>>>,
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
    path: PathBuf,
    fp: String,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Merge what is pending into the file; on failure it stays pending (merged by maximum with
/// what was noted meanwhile).
fn write_pending(pending: &Mutex<Marks>, path: &Path, fp: &str) -> Result<(), String> {
    let batch = std::mem::take(&mut *lock(pending));
    if batch.is_empty() {
        return Ok(());
    }
    merge(path, fp, &batch).inspect_err(|_| {
        let mut p = lock(pending);
        for (k, v) in batch {
            let m = p.entry(k).or_insert(v);
            *m = (*m).max(v);
        }
    })
}

impl Marker {
    /// Start the writing thread of the marks file at `path` for the key `fp`, writing at most every `every`.
    pub fn start(path: &Path, fp: &str, every: Duration) -> Result<Marker, String> {
        let pending = Arc::new(Mutex::new(Marks::new()));
        let error = Arc::new(Mutex::new(None));
        let (tx, rx) = mpsc::channel::<()>();
        let (p2, e2, path2, fp2) = (pending.clone(), error.clone(), path.to_path_buf(), fp.to_string());
        let thread = std::thread::Builder::new()
            .name("link-marks".into())
            .spawn(move || {
                while let Err(mpsc::RecvTimeoutError::Timeout) = rx.recv_timeout(every) {
                    if let Err(e) = write_pending(&p2, &path2, &fp2) {
                        *lock(&e2) = Some(e);
                        return;
                    }
                }
            })
            .map_err(|e| format!("accepted marks {}: cannot start its writer: {e}", path.display()))?;
        Ok(Marker {
            pending,
            error,
            stop: Mutex::new(Some(tx)),
            thread: Mutex::new(Some(thread)),
            path: path.to_path_buf(),
            fp: fp.to_string(),
        })
    }

    /// Record that `counter` of (proto, device) was accepted (committed).
    pub fn note(&self, proto: Proto, device: u32, counter: u64) {
        let mut p = lock(&self.pending);
        let m = p.entry((proto, device)).or_insert(counter);
        *m = (*m).max(counter);
    }

    /// The writer's failure, if a write failed (the receiver stops with it).
    pub fn error(&self) -> Option<String> {
        lock(&self.error).clone()
    }

    /// Stop the writer and write what is pending.
    pub fn finish(&self) -> Result<(), String> {
        drop(lock(&self.stop).take());
        if let Some(t) = lock(&self.thread).take() {
            let _ = t.join();
        }
        if let Some(e) = self.error() {
            return Err(e);
        }
        write_pending(&self.pending, &self.path, &self.fp)
    }
}

impl Drop for Marker {
    fn drop(&mut self) {
        let _ = self.finish();
    }
}

/// The first counter a counter state file (`lwcbench-link-counters`) would hand each device:
/// its `DEVICE NEXT` lines (a device without one starts at 0). Header lines (`key …` and any
/// other `word …` line) are passed over; a malformed number line is an error naming the line.
fn next_counters(state: &Path) -> Result<BTreeMap<u32, u64>, String> {
    let p = state.display();
    let f = std::fs::File::open(state).map_err(|e| format!("counter state {p}: {e}"))?;
    let mut text = String::new();
    f.take(MAX_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| format!("counter state {p}: cannot read it as text: {e}"))?;
    if text.len() as u64 > MAX_BYTES {
        return Err(format!("counter state {p}: larger than {} MiB", MAX_BYTES >> 20));
    }
    let mut lines = text.lines().enumerate();
    if !lines.next().is_some_and(|(_, l)| l.trim().starts_with("lwcbench-link-counters")) {
        return Err(format!("counter state {p}: line 1: expected 'lwcbench-link-counters …'"));
    }
    let mut next = BTreeMap::new();
    for (i, l) in lines {
        let mut it = l.split_whitespace();
        let (Some(d), Some(n), None) = (it.next(), it.next(), it.next()) else { continue };
        if !d.bytes().all(|b| b.is_ascii_digit()) {
            continue; // a header line such as 'key FINGERPRINT'
        }
        let (Ok(d), Ok(n)) = (d.parse::<u32>(), n.parse::<u64>()) else {
            return Err(format!("counter state {p}: line {}: expected 'DEVICE NEXT'", i + 1));
        };
        next.insert(d, n);
    }
    Ok(next)
}

/// Anti-rollback: refuse a device whose counter state (`counter_state`) would hand out a counter
/// at or below what a receiver of its key already accepted from it (`accepted`, the marks file
/// beside the master key, `MASTER.accepted`): that state was restored or copied from an older
/// one, and its counters would seal again under nonces already used. `master`: the fingerprint
/// the marks file must be written for (`None`: any). A missing marks file, or no mark for the
/// device, is nothing to compare with (Ok).
pub fn check_not_behind(
    counter_state: &Path,
    accepted: &Path,
    master: Option<&str>,
    proto: Proto,
    device: u32,
) -> Result<(), String> {
    check_none_behind(counter_state, accepted, master, proto, &[device])
}

/// [`check_not_behind`] for each of `devices`, reading each file once; the first device behind
/// is the error.
pub fn check_none_behind(
    counter_state: &Path,
    accepted: &Path,
    master: Option<&str>,
    proto: Proto,
    devices: &[u32],
) -> Result<(), String> {
    let Some(marks) = read(accepted, master)? else { return Ok(()) };
    let marks = of_proto(&marks, proto);
    if !devices.iter().any(|d| marks.contains_key(d)) {
        return Ok(());
    }
    let next_of = next_counters(counter_state)?;
    for &device in devices {
        let Some(&mark) = marks.get(&device) else { continue };
        let next = next_of.get(&device).copied().unwrap_or(0);
        if next > mark {
            continue;
        }
        return Err(format!(
            "counter state {}: {} device {device} would seal from counter {next}, but the receivers of its key \
             already accepted up to {mark} ({}); restored from a backup? Its counters would repeat nonces already \
             used: use the device's newest state file, or provision a new key",
            counter_state.display(),
            label(proto),
            accepted.display()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const FP: &str = "32f4fc68107ab4dd67b987d1614f906b";

    #[test]
    fn parse_and_refusals_name_line_and_column() {
        let m = parse(&format!("{MAGIC}\nkey {FP}\nsensor 3 17\ngoose 257 5\n\n"), Some(FP)).unwrap();
        assert_eq!(m.len(), 2);
        assert_eq!(m[&(Proto::Sensor, 3)], 17);
        assert_eq!(m[&(Proto::Goose, 257)], 5);
        let e = |t: &str| parse(&format!("{MAGIC}\nkey {FP}\n{t}"), Some(FP)).unwrap_err();
        assert_eq!(e("sensor 3"), "line 3: expected 'PROTO DEVICE HIGHEST'");
        assert!(e("radio 3 4").starts_with("line 3, column 1: protocol 'radio' is not one of sensor, video"));
        assert_eq!(e("sensor  x 4"), "line 3, column 9: device 'x' is not in 0..=4294967295");
        assert_eq!(
            e("video 1 9223372036854775808"),
            "line 3, column 9: highest counter '9223372036854775808' is not a number in 0..2^63"
        );
        assert_eq!(
            e("video 1 5\nvideo 1 6"),
            "line 4: video device 1 again (first on line 3); which mark holds is unknown"
        );
        assert!(parse("nope\n", None).unwrap_err().starts_with("line 1: expected"));
        let other = parse(&format!("{MAGIC}\nkey ab\n"), Some(FP)).unwrap_err();
        assert!(other.starts_with("line 2: written for another key (fingerprint ab"), "{other}");
    }

    #[test]
    fn merge_never_lowers_and_keeps_other_lines() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("k.accepted");
        let up = |v: &[((Proto, u32), u64)]| v.iter().copied().collect::<Marks>();
        merge(&p, FP, &up(&[((Proto::Sensor, 1), 10), ((Proto::Goose, 257), 3)])).unwrap();
        merge(&p, FP, &up(&[((Proto::Sensor, 1), 4), ((Proto::Sensor, 2), 7)])).unwrap();
        assert_eq!(
            std::fs::read_to_string(&p).unwrap(),
            format!("{MAGIC}\nkey {FP}\nsensor 1 10\nsensor 2 7\ngoose 257 3\n")
        );
        // another key's file is refused, and left as it was
        let e = merge(&p, "00", &up(&[((Proto::Sensor, 1), 99)])).unwrap_err();
        assert!(e.contains("k.accepted: line 2: written for another key"), "{e}");
        assert!(std::fs::read_to_string(&p).unwrap().contains("sensor 1 10\n"));
    }

    /// Four threads, each with its own keeper (its own lock descriptor), raise interleaved
    /// devices: every final mark is the largest any of them noted.
    #[test]
    fn concurrent_writers_merge_by_maximum() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("k.accepted");
        let hs: Vec<_> = (0..4u64)
            .map(|t| {
                let p = p.clone();
                std::thread::spawn(move || {
                    let mut k = Keeper::new(&p, FP).with_every(Duration::ZERO);
                    for c in 0..30u64 {
                        k.note(Proto::Sensor, (c % 3) as u32, c * 4 + t);
                        k.maybe_flush().unwrap();
                    }
                })
            })
            .collect();
        hs.into_iter().for_each(|h| h.join().unwrap());
        let m = read(&p, Some(FP)).unwrap().unwrap();
        // device 0 gets c = 27 (108 + t, largest t = 3), device 1 c = 28, device 2 c = 29
        assert_eq!(of_proto(&m, Proto::Sensor), [(0, 111), (1, 115), (2, 119)].into_iter().collect());
    }

    #[test]
    fn keeper_writes_at_most_every_interval() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("k.accepted");
        let mut k = Keeper::new(&p, FP).with_every(Duration::from_secs(3600));
        k.note(Proto::Sensor, 1, 5);
        k.maybe_flush().unwrap(); // the first one writes
        k.note(Proto::Sensor, 1, 6);
        k.maybe_flush().unwrap(); // within the hour: not written
        assert!(std::fs::read_to_string(&p).unwrap().ends_with("sensor 1 5\n"));
        k.flush().unwrap(); // a clean stop
        assert!(std::fs::read_to_string(&p).unwrap().ends_with("sensor 1 6\n"));
        assert_eq!(k.writes, 2);
    }

    /// Noted marks reach the file within the interval while nothing else happens (no later
    /// batch is needed), and the rest at finish.
    #[test]
    fn a_marker_writes_while_idle_and_at_finish() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("k.accepted");
        let m = Marker::start(&p, FP, Duration::from_millis(50)).unwrap();
        m.note(Proto::Sensor, 4, 12);
        let t0 = Instant::now();
        while read(&p, Some(FP)).unwrap().is_none() {
            assert!(t0.elapsed() < Duration::from_secs(5), "not written while idle");
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(read(&p, Some(FP)).unwrap().unwrap()[&(Proto::Sensor, 4)], 12);
        m.note(Proto::Sensor, 4, 13);
        m.finish().unwrap();
        assert_eq!(read(&p, Some(FP)).unwrap().unwrap()[&(Proto::Sensor, 4)], 13);
        assert!(m.error().is_none());
        // a write that fails is reported, and what it held stays pending
        let bad =
            Marker::start(Path::new("/proc/lwcbench-no-such-dir/k.accepted"), FP, Duration::from_secs(60)).unwrap();
        bad.note(Proto::Sensor, 1, 1);
        assert!(bad.finish().unwrap_err().contains("cannot open its lock file"));
    }

    #[test]
    fn a_state_behind_the_mark_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let acc = d.path().join("k.accepted");
        let st = d.path().join("k.counters");
        std::fs::write(&st, format!("lwcbench-link-counters v2\nkey {FP}\n1 1024\n2 2048\n")).unwrap();
        // no marks file yet: nothing to compare with
        check_not_behind(&st, &acc, Some(FP), Proto::Sensor, 1).unwrap();
        std::fs::write(&acc, format!("{MAGIC}\nkey {FP}\nsensor 1 1023\nsensor 2 2048\ngoose 3 0\n")).unwrap();
        check_not_behind(&st, &acc, Some(FP), Proto::Sensor, 1).unwrap(); // 1024 > 1023
        let e = check_not_behind(&st, &acc, Some(FP), Proto::Sensor, 2).unwrap_err();
        assert!(e.contains("would seal from counter 2048, but") && e.contains("accepted up to 2048"), "{e}");
        assert!(e.contains("k.counters") && e.contains("k.accepted") && e.contains("restored from a backup?"), "{e}");
        // a device the state has never reserved for starts at 0: behind any mark
        assert!(check_not_behind(&st, &acc, Some(FP), Proto::Goose, 3).unwrap_err().contains("from counter 0"));
        // another protocol's mark says nothing about this one
        check_not_behind(&st, &acc, Some(FP), Proto::Video, 2).unwrap();
        // the marks of another master say nothing about this key's counters: refused, not passed
        let e = check_not_behind(&st, &acc, Some("00112233445566778899aabbccddeeff"), Proto::Sensor, 1).unwrap_err();
        assert!(e.contains("k.accepted: line 2: written for another key (fingerprint 32f4fc68"), "{e}");
        std::fs::write(&st, "junk\n").unwrap();
        assert!(check_not_behind(&st, &acc, Some(FP), Proto::Sensor, 2).unwrap_err().contains("line 1"));
    }
}
