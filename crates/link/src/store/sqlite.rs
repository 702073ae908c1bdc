//! The SQLite store: one file in WAL mode, checkpointed from a thread of its own.

use std::path::{Path, PathBuf};

use super::schema::{check_sqlite_schema, one_key_row, SQLITE_TABLES};
use super::{Row, Store};

/// SQLite: tables `readings_keys` and `readings`, one run's rows tagged with its run id, unique
/// (device, counter, key_ref).
pub struct Sqlite {
    conn: rusqlite::Connection,
    path: PathBuf,
    run: String,
    /// The key's row id in `readings_keys`.
    key_ref: i64,
    // held for its Drop: stops and joins the thread
    _checkpointer: Option<Checkpointer>,
}

/// Copies the WAL back into the database from a thread of its own (PASSIVE: never blocks the
/// writer), so the gateway's commits never pay for a checkpoint. With SQLite's default
/// auto-checkpoint (every 1000 WAL pages, run inside the COMMIT that crosses it), small batches
/// at 25,000 readings/s crossed it several times a second and each crossing added milliseconds
/// to that batch's end-to-end latency.
struct Checkpointer {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    join: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Release);
        if let Some(j) = self.join.take() {
            let _ = j.join();
        }
    }
}

impl Checkpointer {
    fn start(path: &Path) -> Option<Checkpointer> {
        let conn = rusqlite::Connection::open(path).ok()?;
        conn.busy_timeout(std::time::Duration::from_millis(100)).ok()?;
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let s2 = stop.clone();
        let join = std::thread::Builder::new()
            .name("sqlite-checkpoint".into())
            .spawn(move || {
                while !s2.load(std::sync::atomic::Ordering::Acquire) {
                    std::thread::sleep(std::time::Duration::from_millis(50));
                    // (busy, WAL pages, pages checkpointed); a failure only leaves the WAL longer
                    let _ = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |r| r.get::<_, i64>(0));
                }
            })
            .ok()?;
        Some(Checkpointer { stop, join: Some(join) })
    }
}

/// Why SQLite could not open or write `path`, naming the path: "unable to open database file"
/// alone does not say that the file system is read-only or the directory not writable. The
/// reason is the errno of trying what SQLite needs (see [`check_writable`]), so it is right for
/// root too.
pub(crate) fn sqlite_error(path: &Path, e: &rusqlite::Error) -> String {
    check_writable(path)
        .err()
        .unwrap_or_else(|| format!("--store: {}: {e}", crate::input::shown(&path.display().to_string())))
}

/// Whether SQLite can write the store `path` in WAL mode: open the database and its `-wal` and
/// `-shm` files for writing where they exist, create a file beside them where one is missing.
/// An existing store on a read-only mount opens for reading, even with its WAL (and, with its
/// WAL files present, says nothing until the first commit), so this is checked before opening.
/// Creates a missing SQLite store file empty with mode 0600 (SQLite takes an empty file for a
/// new database): it holds decrypted readings, and SQLite gives its -wal and -shm the mode of
/// the database file. An existing file keeps the mode its owner gave it.
pub(crate) fn create_private(path: &Path) -> Result<(), String> {
    use std::os::unix::fs::OpenOptionsExt;
    if path.as_os_str().is_empty()
        || path == Path::new(":memory:")
        || path.to_str().is_some_and(|s| s.starts_with("file:"))
    {
        return Ok(());
    }
    match std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(path) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(format!("--store: cannot create {}: {e}", crate::input::shown(&path.display().to_string()))),
    }
}

pub(crate) fn check_writable(path: &Path) -> Result<(), String> {
    // an in-memory or temporary database, or a URI filename, writes no file of this name
    if path.as_os_str().is_empty()
        || path == Path::new(":memory:")
        || path.to_str().is_some_and(|s| s.starts_with("file:"))
    {
        return Ok(());
    }
    let p = crate::input::shown(&path.display().to_string());
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let d = crate::input::shown(&dir.display().to_string());
    let mut names = vec![path.to_path_buf()];
    for ext in ["-wal", "-shm"] {
        let mut n = path.as_os_str().to_owned();
        n.push(ext);
        names.push(PathBuf::from(n));
    }
    let mut missing = false;
    for (i, f) in names.iter().enumerate() {
        match std::fs::metadata(f) {
            // (a directory or a FIFO is SQLite's to refuse, in its own words; opening a FIFO blocks)
            Ok(m) if m.is_file() => {
                if let Err(x) = std::fs::OpenOptions::new().append(true).open(f) {
                    let shown = crate::input::shown(&f.display().to_string());
                    return Err(match x.raw_os_error() {
                        Some(libc::EROFS) => read_only(&p, dir),
                        Some(libc::EACCES | libc::EPERM) if i == 0 => {
                            format!("--store: {p}: the file is not writable ({x})")
                        }
                        Some(libc::EACCES | libc::EPERM) => {
                            format!("--store: {p}: its file {shown} is not writable ({x})")
                        }
                        _ => return Ok(()),
                    });
                }
            }
            Ok(_) => {}
            Err(_) => missing = true,
        }
    }
    if !missing {
        return Ok(());
    }
    let probe = dir.join(format!(".lwcbench-probe-{}", std::process::id()));
    match std::fs::OpenOptions::new().write(true).create_new(true).open(&probe) {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            Ok(())
        }
        Err(x) => Err(match x.raw_os_error() {
            Some(libc::EROFS) => read_only(&p, dir),
            Some(libc::EACCES | libc::EPERM) => format!("--store: {p}: its directory {d} is not writable ({x})"),
            Some(libc::ENOENT | libc::ENOTDIR) => format!("--store: {p}: directory {d} does not exist"),
            // (EEXIST: a probe of this pid left behind; SQLite says what else is wrong)
            _ => return Ok(()),
        }),
    }
}

/// The refusal of a store on a read-only file system, naming its mount point.
fn read_only(p: &str, dir: &Path) -> String {
    match mount_point(dir) {
        Some(m) => format!(
            "--store: {p}: read-only file system (mounted read-only at {}); SQLite writes the store, its WAL and \
             its shared-memory file there",
            crate::input::shown(&m)
        ),
        None => format!(
            "--store: {p}: read-only file system; SQLite writes the store, its WAL and its shared-memory file there"
        ),
    }
}

/// The mount point `dir` is on (the longest mount point of /proc/self/mountinfo that holds it).
fn mount_point(dir: &Path) -> Option<String> {
    let dir = std::fs::canonicalize(dir).ok()?;
    let info = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    info.lines()
        // mountinfo(5): the fifth field, octal escapes for space, tab, newline and backslash
        .filter_map(|l| l.split(' ').nth(4))
        .map(unescape_mount)
        .filter(|m| dir.starts_with(m))
        .max_by_key(|m| m.len())
}

fn unescape_mount(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let oct = b.get(i + 1..i + 4).filter(|o| b[i] == b'\\' && o.iter().all(|c| (b'0'..=b'7').contains(c)));
        match oct {
            Some(o) => {
                out.push(o.iter().fold(0u8, |v, c| v.wrapping_mul(8).wrapping_add(c - b'0')));
                i += 4;
            }
            None => {
                out.push(b[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

impl Sqlite {
    /// The store of the run `run` under the key `key_id` in the SQLite file `path`.
    pub fn open(path: &Path, run: &str, key_id: &str) -> Result<Sqlite, String> {
        let p = crate::input::shown(&path.display().to_string());
        check_writable(path)?;
        create_private(path)?;
        let conn = rusqlite::Connection::open(path).map_err(|e| sqlite_error(path, &e))?;
        // WAL + synchronous=NORMAL: a committed batch survives a crash of this process (the
        // WAL is written before COMMIT returns); only an OS crash/power cut may lose the last
        // commits. busy_timeout lets a second reader (a test) look while the gateway writes.
        conn.busy_timeout(std::time::Duration::from_secs(5)).map_err(|e| format!("--store: {p}: {e}"))?;
        let mode: String =
            conn.query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0)).map_err(|e| match check_writable(path) {
                Err(w) => w,
                Ok(()) => format!("--store: {p}: cannot switch to WAL: {e}"),
            })?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(format!("--store: {p}: journal mode is '{mode}', WAL refused"));
        }
        conn.execute_batch("PRAGMA synchronous=NORMAL;").map_err(|e| sqlite_error(path, &e))?;
        let key_ref = sqlite_prepare(&conn, key_id).map_err(|e| format!("--store: {p}: {e}"))?;
        // Checkpoints run on their own thread (below); the writer's auto-checkpoint stays as
        // the fallback only if that thread could not start.
        let checkpointer = Checkpointer::start(path);
        if checkpointer.is_some() {
            conn.execute_batch("PRAGMA wal_autocheckpoint=0;").map_err(|e| format!("--store: {p}: {e}"))?;
        }
        Ok(Sqlite { conn, path: path.to_path_buf(), run: run.to_string(), key_ref, _checkpointer: checkpointer })
    }
}

impl Store for Sqlite {
    fn insert(&mut self, rows: &[Row]) -> Result<u64, String> {
        let p = crate::input::shown(&self.path.display().to_string());
        let tx = self.conn.transaction().map_err(|e| format!("store {p}: {e}"))?;
        let mut new = 0u64;
        {
            let mut st = tx
                .prepare_cached(
                    "INSERT OR IGNORE INTO readings (key_ref, run, device, counter, cipher, payload)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                )
                .map_err(|e| format!("store {p}: {e}"))?;
            for r in rows {
                let (d, c, ci) = (r.device as i64, r.counter as i64, r.cipher as i64);
                new += st
                    .execute(rusqlite::params![self.key_ref, self.run, d, c, ci, r.payload])
                    .map_err(|e| format!("store {p}: {e}"))? as u64;
            }
        }
        tx.commit().map_err(|e| format!("store {p}: commit: {e}"))?;
        Ok(new)
    }

    fn all(&mut self) -> Result<Vec<Row>, String> {
        let mut st = self
            .conn
            // Walks the unique key's index in (device, counter) order, no sort; key_ref is read
            // from the index, so another key's rows are skipped unread.
            .prepare(
                "SELECT device, counter, cipher, payload FROM readings WHERE key_ref = ?1 AND run = ?2
                 ORDER BY device, counter",
            )
            .map_err(|e| e.to_string())?;
        let rows = st
            .query_map(rusqlite::params![self.key_ref, self.run], |r| {
                Ok(Row {
                    device: r.get::<_, i64>(0)? as u32,
                    counter: r.get::<_, i64>(1)? as u64,
                    cipher: r.get::<_, i64>(2)? as u8,
                    payload: r.get(3)?,
                })
            })
            .map_err(|e| e.to_string())?;
        rows.collect::<Result<Vec<_>, _>>().map_err(|e| e.to_string())
    }

    fn describe(&self) -> String {
        format!(
            "sqlite:{} (WAL, synchronous=NORMAL, run {})",
            crate::input::shown(&self.path.display().to_string()),
            self.run
        )
    }

    fn key_ref(&self) -> i64 {
        self.key_ref
    }

    fn highest(&mut self) -> Result<std::collections::BTreeMap<u32, u64>, String> {
        let p = crate::input::shown(&self.path.display().to_string());
        let mut st = self
            .conn
            .prepare("SELECT device, max(counter) FROM readings WHERE key_ref = ?1 GROUP BY device")
            .map_err(|e| format!("store {p}: {e}"))?;
        let rows = st
            .query_map(rusqlite::params![self.key_ref], |r| {
                Ok((r.get::<_, i64>(0)? as u32, r.get::<_, i64>(1)? as u64))
            })
            .map_err(|e| format!("store {p}: {e}"))?;
        rows.collect::<Result<_, _>>().map_err(|e| format!("store {p}: {e}"))
    }
}

/// Create what is missing, check the readings table and return the key's `key_ref` (its row
/// in `readings_keys`, added if new), all in one transaction: a refused store is left as it was.
fn sqlite_prepare(conn: &rusqlite::Connection, key_id: &str) -> Result<i64, String> {
    let e = |e: rusqlite::Error| e.to_string();
    let tx = rusqlite::Transaction::new_unchecked(conn, rusqlite::TransactionBehavior::Immediate).map_err(e)?;
    tx.execute_batch(SQLITE_TABLES).map_err(e)?;
    check_sqlite_schema(&tx)?;
    let k = |e: rusqlite::Error| format!("table readings_keys: {e}");
    let ids = || -> Result<Vec<i64>, String> {
        tx.prepare("SELECT id FROM readings_keys WHERE key_id = ?1")
            .and_then(|mut st| st.query_map([key_id], |r| r.get(0))?.collect())
            .map_err(k)
    };
    // The write lock is held (IMMEDIATE): no other process adds the key in between.
    let mut found = ids()?;
    if found.is_empty() {
        tx.execute("INSERT INTO readings_keys (key_id) VALUES (?1)", [key_id]).map_err(k)?;
        found = ids()?;
    }
    let id = one_key_row(&found, "readings_keys")?;
    tx.commit().map_err(e)?;
    Ok(id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::tests::K;

    #[test]
    fn sqlite_unique_key_and_wal() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("s.db");
        let mut s = Sqlite::open(&p, "r", K).unwrap();
        let r = |c| Row { device: 1, counter: c, cipher: 1, payload: vec![c as u8] };
        assert_eq!(s.insert(&[r(1), r(2)]).unwrap(), 2);
        assert_eq!(s.insert(&[r(2), r(3)]).unwrap(), 1, "the second copy of counter 2 is not stored");
        assert_eq!(s.all().unwrap(), vec![r(1), r(2), r(3)]);
        let mode: String = s.conn.query_row("PRAGMA journal_mode", [], |x| x.get(0)).unwrap();
        assert_eq!(mode, "wal");
        // The key's integers first: an insert's b-tree search decides on device and counter.
        let key: Vec<String> = s
            .conn
            .prepare("SELECT name FROM pragma_index_info((SELECT name FROM pragma_index_list('readings')))")
            .unwrap()
            .query_map([], |x| x.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(key, ["device", "counter", "key_ref"]);
    }

    /// The store holds decrypted readings: a new SQLite file and its -wal and -shm are readable
    /// by the owner only, whatever the umask (0022 here gives 0644 to a file SQLite creates).
    #[test]
    fn a_new_sqlite_store_and_its_wal_are_0600() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("s.db");
        let mut s = Sqlite::open(&p, "r", K).unwrap();
        s.insert(&[Row { device: 1, counter: 1, cipher: 1, payload: vec![1] }]).unwrap();
        for name in ["s.db", "s.db-wal", "s.db-shm"] {
            let m = std::fs::metadata(d.path().join(name)).unwrap().permissions().mode() & 0o777;
            assert_eq!(m, 0o600, "{name} has mode {m:o}");
        }
    }

    #[test]
    fn checkpoints_happen_off_the_writer() {
        // The writer never checkpoints (wal_autocheckpoint = 0), and yet the rows reach the
        // main database file well below SQLite's 1000-page auto-checkpoint: the background
        // thread copied them. Before, ~40 pages of WAL stayed in the WAL and the file kept
        // only what CREATE TABLE had checkpointed (nothing: it was in the WAL too).
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("c.db");
        let mut s = Sqlite::open(&p, "r", K).unwrap();
        let auto: i64 = s.conn.query_row("PRAGMA wal_autocheckpoint", [], |x| x.get(0)).unwrap();
        assert_eq!(auto, 0);
        for b in 0..20u64 {
            let rows: Vec<Row> =
                (0..100).map(|i| Row { device: 1, counter: b * 100 + i, cipher: 1, payload: vec![7; 64] }).collect();
            assert_eq!(s.insert(&rows).unwrap(), 100);
        }
        let t0 = std::time::Instant::now();
        let size = || std::fs::metadata(&p).map(|m| m.len()).unwrap_or(0);
        while size() < 100 * 1024 && t0.elapsed() < std::time::Duration::from_secs(5) {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert!(size() >= 100 * 1024, "2000 rows of 64 B are not in the main file: {} B", size());
        drop(s); // stops and joins the checkpointer
    }

    /// A frame stored in session 1 and replayed into session 2 under the same key is not stored
    /// again, nor as session 2's reading: (key, device, counter) is one nonce whatever the
    /// session. Under another key the same (device, counter) is a new reading.
    #[test]
    fn a_reading_replayed_into_a_later_session_under_the_same_key_is_not_stored() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("s.db");
        let r = |c| Row { device: 3, counter: c, cipher: 1, payload: vec![c as u8] };
        let mut one = Sqlite::open(&p, "session-1", K).unwrap();
        assert_eq!(one.insert(&[r(7), r(8)]).unwrap(), 2);
        drop(one);
        let mut two = Sqlite::open(&p, "session-2", K).unwrap();
        assert_eq!(two.insert(&[r(7), r(9)]).unwrap(), 1, "counter 7 of session 1 replayed into session 2");
        assert_eq!(two.all().unwrap(), vec![r(9)]);
        let mut other = Sqlite::open(&p, "session-3", "4522d92be3296147132c72dd4fb8d592").unwrap();
        assert_eq!(other.insert(&[r(7)]).unwrap(), 1, "another key's counter 7 is another nonce");
    }

    /// Each key's fingerprint is stored once, in readings_keys; its rows carry its id.
    #[test]
    fn a_key_is_one_row_of_the_keys_table_and_its_readings_refer_to_it() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("s.db");
        let r = |c| Row { device: 1, counter: c, cipher: 1, payload: vec![1] };
        const K2: &str = "4522d92be3296147132c72dd4fb8d592";
        Sqlite::open(&p, "a", K).unwrap().insert(&[r(1), r(2)]).unwrap();
        Sqlite::open(&p, "b", K2).unwrap().insert(&[r(1)]).unwrap();
        Sqlite::open(&p, "c", K).unwrap().insert(&[r(3)]).unwrap();
        let c = rusqlite::Connection::open(&p).unwrap();
        let per_key: Vec<(String, i64)> = c
            .prepare(
                "SELECT k.key_id, count(*) FROM readings r JOIN readings_keys k ON k.id = r.key_ref
                 GROUP BY k.key_id ORDER BY k.key_id",
            )
            .unwrap()
            .query_map([], |x| Ok((x.get(0)?, x.get(1)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(per_key, vec![(K.to_string(), 3), (K2.to_string(), 1)]);
        let keys: i64 = c.query_row("SELECT count(*) FROM readings_keys", [], |x| x.get(0)).unwrap();
        assert_eq!(keys, 2);
        // A keys table of someone else's without a unique key_id: the key twice is refused.
        let q = d.path().join("dup.db");
        rusqlite::Connection::open(&q)
            .unwrap()
            .execute_batch(&format!(
                "CREATE TABLE readings_keys (id INTEGER PRIMARY KEY, key_id TEXT NOT NULL);
                 INSERT INTO readings_keys (key_id) VALUES ('{K}'), ('{K}');"
            ))
            .unwrap();
        let e = Sqlite::open(&q, "a", K).err().unwrap();
        assert!(e.ends_with("table readings_keys holds the key 2 times; its key_id column is not unique"), "{e}");
    }

    #[test]
    fn mount_points_with_blanks_are_unescaped() {
        // mountinfo(5) writes space, tab, newline and backslash as three octal digits
        assert_eq!(unescape_mount("/mnt/a\\040b\\011c"), "/mnt/a b\tc");
        assert_eq!(unescape_mount("/x\\134y"), "/x\\y");
        assert_eq!(unescape_mount("/x\\9"), "/x\\9");
        assert_eq!(mount_point(Path::new("/proc/self")).as_deref(), Some("/proc"));
    }
}
