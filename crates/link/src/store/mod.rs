//! Where the gateway puts accepted readings: SQLite (default, embedded, WAL) or PostgreSQL.
//! Both tag every row with its run (one cipher of one session) and have a unique (device,
//! counter, key_ref) key, `key_ref` naming the master key's fingerprint in a keys table: a (key,
//! device, counter) names one nonce, so a frame the broker delivers twice (QoS 1 is
//! at-least-once) or replays into a later session under the same key is stored once, while
//! another key in the same store (whose counters start at 0 again) never collides with it. The
//! fingerprint is stored once per key, not per row: a 32-character text in every row and index
//! entry makes each reading's write about 10–30 % larger (WAL bytes per reading).
pub mod inspect;
pub mod shared;

use std::path::{Path, PathBuf};

/// One accepted reading.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    pub device: u32,
    pub counter: u64,
    pub cipher: u8,
    pub payload: Vec<u8>,
}

pub trait Store: Send {
    /// Insert rows in one transaction; returns how many were new (the rest were duplicates).
    fn insert(&mut self, rows: &[Row]) -> Result<u64, String>;
    /// Every row of this run, ordered by (device, counter).
    fn all(&mut self) -> Result<Vec<Row>, String>;
    /// What the store is, for run.json ("sqlite:/path", "postgres://host:port/db").
    fn describe(&self) -> String;
    /// The key's id in the store's keys table: the `key_ref` of its readings.
    fn key_ref(&self) -> i64;
    /// Per device, the highest counter stored under this key (any run).
    fn highest(&mut self) -> Result<std::collections::BTreeMap<u32, u64>, String>;
}

/// What a `--store` string names.
#[derive(Debug, PartialEq, Eq)]
pub enum Kind<'a> {
    /// A `postgres://` / `postgresql://` URL or a libpq `key=value` connection string.
    Postgres(&'a str),
    /// An SQLite file.
    Sqlite(&'a Path),
}

/// Whether `s` starts as libpq's keyword/value form does: a keyword (letters, digits, `_`),
/// optional blanks, then `=` ("host=h dbname=d").
fn keyword_value_form(s: &str) -> bool {
    let Some((key, _)) = s.trim_start().split_once('=') else { return false };
    let key = key.trim_end_matches([' ', '\t']);
    !key.is_empty() && key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// `--store`: a `postgres://` / `postgresql://` URL, a libpq `key=value` string (PostgreSQL),
/// `sqlite:PATH`, or a plain path (SQLite). A string in the `key=value` form is never taken as a
/// file: a file named by a connection string would carry its password, and a typo in a keyword
/// would leave a local store nobody asked for. A file of such a name is `./NAME` (or
/// `sqlite:NAME` unless NAME is a valid connection string).
pub fn kind(spec: &str) -> Result<Kind<'_>, String> {
    let shown = || crate::input::shown(spec);
    if spec.starts_with("postgres://") || spec.starts_with("postgresql://") {
        return Ok(Kind::Postgres(spec));
    }
    if spec.contains("://") {
        return Err(format!("--store: '{}' is neither a postgres:// URL nor a file path", shown()));
    }
    if let Some(path) = spec.strip_prefix("sqlite:") {
        if keyword_value_form(path) && path.parse::<postgres::Config>().is_ok() {
            return Err(format!(
                "--store: '{}' names an SQLite file by a PostgreSQL connection string; for PostgreSQL \
                 drop 'sqlite:', for a file of that name write sqlite:./NAME",
                shown()
            ));
        }
        return Ok(Kind::Sqlite(Path::new(path)));
    }
    if keyword_value_form(spec) {
        return match spec.parse::<postgres::Config>() {
            Ok(_) => Ok(Kind::Postgres(spec)),
            Err(e) => Err(format!(
                "--store: '{}' is in PostgreSQL's key=value form but not a connection string ({}); \
                 for an SQLite file of that name write ./NAME",
                shown(),
                pg_error(&e)
            )),
        };
    }
    Ok(Kind::Sqlite(Path::new(spec)))
}

/// `--store` (see [`kind`]). `key_id` is the master key's fingerprint
/// ([`crate::wire::keys::MasterKey::fingerprint`]).
pub fn open(spec: &str, run: &str, key_id: &str) -> Result<Box<dyn Store>, String> {
    match kind(spec)? {
        Kind::Postgres(url) => Ok(Box::new(Postgres::open(url, run, key_id)?)),
        Kind::Sqlite(path) => Ok(Box::new(Sqlite::open(path, run, key_id)?)),
    }
}

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

/// PostgreSQL: table `lwcbench_link_readings`, one run's rows tagged with its run id, unique
/// (key_ref, device, counter).
pub struct Postgres {
    client: postgres::Client,
    url_shown: String,
    run: String,
    /// The key's id in `lwcbench_link_keys`.
    key_ref: i64,
}

/// `CREATE TABLE IF NOT EXISTS` that tolerates a concurrent creator: two gateway processes
/// starting together may both miss the table and the slower one then fails on the catalogue's
/// unique index (23505) or on the table itself (42P07); once the table exists, a retry is a no-op.
pub(crate) fn create_table(c: &mut postgres::Client, sql: &str) -> Result<(), postgres::Error> {
    let mut tries = 0;
    loop {
        match c.batch_execute(sql) {
            Err(e) if tries < 3 && lost_create_race(&e) => tries += 1,
            r => return r,
        }
    }
}

/// The error of a `CREATE … IF NOT EXISTS` that a concurrent creator got in first.
fn lost_create_race(e: &postgres::Error) -> bool {
    use postgres::error::SqlState;
    e.code() == Some(&SqlState::UNIQUE_VIOLATION) || e.code() == Some(&SqlState::DUPLICATE_TABLE)
}

/// A PostgreSQL error as one line: the server's own message (which database or role is
/// missing, which permission) where there is one, else the client's; redacted either way.
pub(crate) fn pg_error(e: &postgres::Error) -> String {
    use std::error::Error;
    let text = match e.as_db_error() {
        Some(db) => match db.detail() {
            Some(d) => format!("{}: {} ({d})", db.severity(), db.message()),
            None => format!("{}: {}", db.severity(), db.message()),
        },
        None => match e.source() {
            Some(src) => format!("{e}: {src}"),
            None => e.to_string(),
        },
    };
    crate::input::shown(&text)
}

impl Postgres {
    pub fn open(url: &str, run: &str, key_id: &str) -> Result<Postgres, String> {
        let shown = crate::input::shown(url);
        let mut client = postgres::Client::connect(url, postgres::NoTls)
            .map_err(|e| format!("--store: cannot connect to {shown}: {}", pg_error(&e)))?;
        let key_ref = pg_prepare(&mut client, key_id).map_err(|e| format!("--store: {shown}: {e}"))?;
        Ok(Postgres { client, url_shown: shown, run: run.to_string(), key_ref })
    }
}

impl Store for Postgres {
    fn insert(&mut self, rows: &[Row]) -> Result<u64, String> {
        // One statement per batch (arrays + unnest), atomic on its own: a round trip per row
        // made this store latency-bound (~300 rows/s on the loaded 2-vCPU VM).
        let shown = &self.url_shown;
        let d: Vec<i64> = rows.iter().map(|r| r.device as i64).collect();
        let k: Vec<i64> = rows.iter().map(|r| r.counter as i64).collect();
        let ci: Vec<i16> = rows.iter().map(|r| r.cipher as i16).collect();
        let p: Vec<&[u8]> = rows.iter().map(|r| r.payload.as_slice()).collect();
        self.client
            .execute(
                "INSERT INTO lwcbench_link_readings (key_ref, run, device, counter, cipher, payload)
                 SELECT $1, $2, d, k, ci, p FROM unnest($3::bigint[], $4::bigint[], $5::smallint[], $6::bytea[])
                        AS u(d, k, ci, p)
                 ON CONFLICT DO NOTHING",
                &[&self.key_ref, &self.run, &d, &k, &ci, &p],
            )
            .map_err(|e| format!("store {shown}: {}", pg_error(&e)))
    }

    fn all(&mut self) -> Result<Vec<Row>, String> {
        let rows = self
            .client
            .query(
                "SELECT device, counter, cipher, payload FROM lwcbench_link_readings WHERE run = $1
                 ORDER BY device, counter",
                &[&self.run],
            )
            .map_err(|e| format!("store {}: {}", self.url_shown, pg_error(&e)))?;
        Ok(rows
            .iter()
            .map(|r| Row {
                device: r.get::<_, i64>(0) as u32,
                counter: r.get::<_, i64>(1) as u64,
                cipher: r.get::<_, i16>(2) as u8,
                payload: r.get(3),
            })
            .collect())
    }

    fn describe(&self) -> String {
        format!("{} (table lwcbench_link_readings, run {})", self.url_shown, self.run)
    }

    fn key_ref(&self) -> i64 {
        self.key_ref
    }

    fn highest(&mut self) -> Result<std::collections::BTreeMap<u32, u64>, String> {
        let rows = self
            .client
            .query(
                "SELECT device, max(counter) FROM lwcbench_link_readings WHERE key_ref = $1 GROUP BY device",
                &[&self.key_ref],
            )
            .map_err(|e| format!("store {}: {}", self.url_shown, pg_error(&e)))?;
        Ok(rows.iter().map(|r| (r.get::<_, i64>(0) as u32, r.get::<_, i64>(1) as u64)).collect())
    }
}

/// The columns of the readings table, in the order this tool creates them.
const COLUMNS: [&str; 6] = ["key_ref", "run", "device", "counter", "cipher", "payload"];
/// Its one unique key: (key, device, counter) names one nonce.
const KEY: [&str; 3] = ["key_ref", "device", "counter"];

/// The SQLite tables as this tool creates them. The unique key's integers come first: an
/// insert's b-tree search decides on device and counter, and most readings' keys differ there.
const SQLITE_TABLES: &str = "
    CREATE TABLE IF NOT EXISTS readings_keys (
        id     INTEGER PRIMARY KEY,
        key_id TEXT    NOT NULL UNIQUE
    );
    CREATE TABLE IF NOT EXISTS readings (
        key_ref INTEGER NOT NULL,
        run     TEXT    NOT NULL,
        device  INTEGER NOT NULL,
        counter INTEGER NOT NULL,
        cipher  INTEGER NOT NULL,
        payload BLOB    NOT NULL,
        UNIQUE (device, counter, key_ref)
    );";

/// The PostgreSQL tables. `key_ref` declares no foreign key: the check would lock the key's
/// row (FOR KEY SHARE) in every insert of every gateway process; no key row is ever deleted.
const PG_TABLES: &str = "
    CREATE TABLE IF NOT EXISTS lwcbench_link_keys (
        id     BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        key_id TEXT   NOT NULL UNIQUE
    );
    CREATE TABLE IF NOT EXISTS lwcbench_link_readings (
        key_ref BIGINT   NOT NULL,
        run     TEXT     NOT NULL,
        device  BIGINT   NOT NULL,
        counter BIGINT   NOT NULL,
        cipher  SMALLINT NOT NULL,
        payload BYTEA    NOT NULL,
        UNIQUE (key_ref, device, counter)
    )";

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

/// [`sqlite_prepare`] for PostgreSQL (tables `lwcbench_link_keys`, `lwcbench_link_readings`).
fn pg_prepare(c: &mut postgres::Client, key_id: &str) -> Result<i64, String> {
    let mut tries = 0;
    loop {
        let mut tx = c.transaction().map_err(|e| pg_error(&e))?;
        match tx.batch_execute(PG_TABLES) {
            // A concurrent creator won (see create_table): its tables exist once it commits.
            Err(e) if tries < 3 && lost_create_race(&e) => {
                tries += 1;
                continue;
            }
            r => r.map_err(|e| pg_error(&e))?,
        }
        check_pg_schema(&mut tx)?;
        let k = |e: postgres::Error| format!("table lwcbench_link_keys: {}", pg_error(&e));
        // Another gateway process adding the same key at the same time: ON CONFLICT waits for it.
        tx.execute("INSERT INTO lwcbench_link_keys (key_id) VALUES ($1) ON CONFLICT (key_id) DO NOTHING", &[&key_id])
            .map_err(k)?;
        let ids: Vec<i64> = tx
            .query("SELECT id FROM lwcbench_link_keys WHERE key_id = $1", &[&key_id])
            .map_err(k)?
            .iter()
            .map(|r| r.get(0))
            .collect();
        let id = one_key_row(&ids, "lwcbench_link_keys")?;
        tx.commit().map_err(|e| pg_error(&e))?;
        return Ok(id);
    }
}

/// A key has exactly one row: a keys table of someone else's without a unique key_id could
/// hold it twice, and two ids for one key would split its replay state.
fn one_key_row(ids: &[i64], table: &str) -> Result<i64, String> {
    match ids {
        [id] => Ok(*id),
        _ => Err(format!("table {table} holds the key {} times; its key_id column is not unique", ids.len())),
    }
}

/// What the owner of a table an earlier lwcbench wrote can do: `upgrade` one with the key's
/// fingerprint per row (docs/link.md gives the SQL), start afresh from an older one.
struct Renew {
    upgrade: &'static str,
    fresh: &'static str,
}

/// A check of a column's declared type, and that type as an error names it.
type ColumnType<'a> = (&'a dyn Fn(&str) -> bool, &'a str);

/// What a schema reader collects about a store table.
struct Shape {
    /// `Err`: it is not a plain table (a view, …).
    kind: Result<(), String>,
    /// (name, declared type) of every column.
    columns: Vec<(String, String)>,
    /// (index name, partial, columns) of every unique index.
    unique: Vec<(String, bool, Vec<String>)>,
}

/// What is wrong with a table found in the store, against [`COLUMNS`] with the backend's type
/// checks (`types[i]`: a check of the declared type and the type as the error names it) and the
/// one unique key [`KEY`]: the deduplication of redelivered and replayed frames rests on that
/// key, and a key on other columns (or a second, narrower one) would store copies or drop
/// readings. `renew` tells the owner of an older table what to do.
fn check_shape(table: &str, shape: Shape, types: [ColumnType; 6], renew: Renew) -> Result<(), String> {
    shape.kind?;
    let has = |c: &str| shape.columns.iter().any(|x| x.0 == c);
    if has("key_id") && !has("key_ref") {
        return Err(format!(
            "table {table} has a key_id column: an earlier lwcbench wrote it, with the key's fingerprint in \
             every row; {}",
            renew.upgrade
        ));
    }
    if !has("key_ref") && has("run") {
        return Err(format!(
            "table {table} has no key_ref column: an older lwcbench wrote it, keyed by (run, device, counter), \
             which misses a frame replayed into a later session; {}",
            renew.fresh
        ));
    }
    for (name, ty) in &shape.columns {
        match COLUMNS.iter().position(|c| c == name) {
            None => return Err(format!("table {table} has a column '{name}' this tool does not write")),
            Some(i) if !(types[i].0)(ty) => {
                return Err(format!("table {table}: column '{name}' is '{ty}', not {}", types[i].1));
            }
            _ => {}
        }
    }
    if let Some(w) = COLUMNS.iter().find(|c| !has(c)) {
        return Err(format!("table {table} has no column '{w}'"));
    }
    let mut key: Vec<String> = KEY.iter().map(|k| k.to_string()).collect();
    key.sort();
    let want = key.join(", ");
    if shape.unique.is_empty() {
        return Err(format!("table {table} has no UNIQUE ({want}) key"));
    }
    for (name, partial, cols) in shape.unique {
        if partial {
            return Err(format!("table {table}: unique index '{name}' is partial"));
        }
        let mut u = cols;
        u.sort();
        if u != key {
            return Err(format!("table {table} has a unique key on ({}), not only on ({want})", u.join(", ")));
        }
    }
    Ok(())
}

/// The `readings` table of an SQLite store as this tool creates it (a view, other columns or a
/// missing or different unique key are refused).
fn check_sqlite_schema(conn: &rusqlite::Connection) -> Result<(), String> {
    let e = |e: rusqlite::Error| format!("reading the schema of table readings: {e}");
    let kind: String =
        conn.query_row("SELECT type FROM sqlite_master WHERE name = 'readings'", [], |r| r.get(0)).map_err(e)?;
    let kind = if kind == "table" { Ok(()) } else { Err(format!("'readings' is a {kind}, not a table")) };
    let mut st = conn.prepare("SELECT name, type FROM pragma_table_info('readings')").map_err(e)?;
    let columns = st
        .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
        .map_err(e)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(e)?;
    let mut unique = Vec::new();
    let mut st = conn.prepare("SELECT name, \"unique\", partial FROM pragma_index_list('readings')").map_err(e)?;
    let indexes = st
        .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?, r.get::<_, i64>(2)?)))
        .map_err(e)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(e)?;
    for (name, _, partial) in indexes.into_iter().filter(|i| i.1 != 0) {
        let mut cols = conn.prepare("SELECT name FROM pragma_index_info(?1)").map_err(e)?;
        let cols = cols
            .query_map([&name], |r| r.get::<_, Option<String>>(0))
            .map_err(e)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(e)?;
        // an expression column has no name
        unique.push((
            name,
            partial != 0,
            cols.into_iter().map(|c| c.unwrap_or_else(|| "<expression>".into())).collect(),
        ));
    }
    // INTEGER / BLOB affinity (SQLite 3 §3.1): an INT anywhere in the declared type; BLOB or none.
    let int = |t: &str| t.to_ascii_uppercase().contains("INT");
    let blob = |t: &str| t.is_empty() || t.eq_ignore_ascii_case("BLOB");
    // TEXT affinity: CHAR, CLOB or TEXT in the declared type.
    let text = |t: &str| ["CHAR", "CLOB", "TEXT"].iter().any(|k| t.to_ascii_uppercase().contains(k));
    check_shape(
        "readings",
        Shape { kind, columns, unique },
        [
            (&int, "an INTEGER"),
            (&text, "TEXT"),
            (&int, "an INTEGER"),
            (&int, "an INTEGER"),
            (&int, "an INTEGER"),
            (&blob, "a BLOB"),
        ],
        Renew {
            upgrade: "upgrade it with the SQL in docs/link.md (Upgrading a store) or use a new store file",
            fresh: "use a new store file",
        },
    )
}

/// The `lwcbench_link_readings` table of a PostgreSQL store as this tool creates it.
fn check_pg_schema(c: &mut impl postgres::GenericClient) -> Result<(), String> {
    let table = "lwcbench_link_readings";
    let e = |e: postgres::Error| format!("reading the schema of table {table}: {e}");
    let kind: i8 =
        c.query_one("SELECT relkind FROM pg_class WHERE oid = to_regclass($1)", &[&table]).map_err(e)?.get(0);
    let kind = match kind as u8 {
        b'r' => Ok(()),
        b'v' | b'm' => Err(format!("'{table}' is a view, not a table")),
        k => Err(format!("'{table}' is not a plain table (relkind '{}')", k as char)),
    };
    let columns: Vec<(String, String)> = c
        .query(
            "SELECT attname::text, format_type(atttypid, atttypmod) FROM pg_attribute
             WHERE attrelid = to_regclass($1) AND attnum > 0 AND NOT attisdropped ORDER BY attnum",
            &[&table],
        )
        .map_err(e)?
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    let unique = c
        .query(
            "SELECT i.indexrelid::regclass::text, i.indpred IS NOT NULL,
                    ARRAY(SELECT COALESCE(a.attname::text, '<expression>')
                          FROM unnest(i.indkey) WITH ORDINALITY AS k(n, o)
                          LEFT JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.n
                          ORDER BY k.o)
             FROM pg_index i WHERE i.indrelid = to_regclass($1) AND i.indisunique",
            &[&table],
        )
        .map_err(e)?
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect();
    let is = |want: &'static str| move |t: &str| t == want;
    let (text, bigint, smallint, bytea) = (is("text"), is("bigint"), is("smallint"), is("bytea"));
    check_shape(
        table,
        Shape { kind, columns, unique },
        [
            (&bigint, "bigint"),
            (&text, "text"),
            (&bigint, "bigint"),
            (&bigint, "bigint"),
            (&smallint, "smallint"),
            (&bytea, "bytea"),
        ],
        Renew {
            upgrade: "upgrade it with the SQL in docs/link.md (Upgrading a store) or use another database",
            fresh:
                "rename or drop the tables lwcbench_link_readings and lwcbench_link_devices, or use another database",
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A key fingerprint (any 32 hex digits: the store does not derive it).
    const K: &str = "32f4fc68107ab4dd67b987d1614f906b";

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

    /// A store whose unique key has the same columns in another order (as PostgreSQL's is)
    /// opens and keeps deduplicating.
    #[test]
    fn a_store_with_the_key_columns_in_another_order_still_opens() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("old.db");
        rusqlite::Connection::open(&p)
            .unwrap()
            .execute_batch(
                "CREATE TABLE readings (key_ref INTEGER NOT NULL, run TEXT NOT NULL, device INTEGER NOT NULL,
                 counter INTEGER NOT NULL, cipher INTEGER NOT NULL, payload BLOB NOT NULL,
                 UNIQUE (key_ref, device, counter))",
            )
            .unwrap();
        let mut s = Sqlite::open(&p, "r", K).unwrap();
        let r = |c| Row { device: 2, counter: c, cipher: 1, payload: vec![c as u8] };
        assert_eq!(s.insert(&[r(5), r(4), r(5)]).unwrap(), 2);
        assert_eq!(s.all().unwrap(), vec![r(4), r(5)]);
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

    /// Tables of someone else's under the name `readings`: each refused at open with one line
    /// naming the store and what is wrong. Without the check, the first (no unique key) stored
    /// a frame delivered twice twice.
    #[test]
    fn a_foreign_sqlite_table_is_refused() {
        let cases = [
            (
                "CREATE TABLE readings (key_ref INTEGER, run TEXT, device INTEGER, counter INTEGER, cipher INTEGER, payload BLOB)",
                "table readings has no UNIQUE (counter, device, key_ref) key",
            ),
            (
                "CREATE TABLE readings (key_ref INTEGER, run TEXT, device INTEGER, counter INTEGER, cipher INTEGER, payload BLOB,
                 UNIQUE (key_ref, device, counter), UNIQUE (device))",
                "table readings has a unique key on (device), not only on (counter, device, key_ref)",
            ),
            (
                "CREATE TABLE readings (key_ref INTEGER, run TEXT, device INTEGER, counter INTEGER, cipher INTEGER, payload BLOB,
                 note TEXT, UNIQUE (key_ref, device, counter))",
                "table readings has a column 'note' this tool does not write",
            ),
            (
                "CREATE TABLE readings (key_ref INTEGER, run TEXT, device INTEGER, counter TEXT, cipher INTEGER, payload BLOB,
                 UNIQUE (key_ref, device, counter))",
                "table readings: column 'counter' is 'TEXT', not an INTEGER",
            ),
            (
                "CREATE TABLE readings (key_ref INTEGER, run TEXT, device INTEGER, counter INTEGER, payload BLOB,
                 UNIQUE (key_ref, device, counter))",
                "table readings has no column 'cipher'",
            ),
            (
                "CREATE TABLE readings (key_ref INTEGER, run TEXT, device INTEGER, counter INTEGER, cipher INTEGER, payload BLOB);
                 CREATE UNIQUE INDEX some ON readings (key_ref, device, counter) WHERE device > 5",
                "table readings: unique index 'some' is partial",
            ),
            (
                "CREATE TABLE readings (key_ref INTEGER, run TEXT, device INTEGER, counter INTEGER, cipher INTEGER, payload BLOB,
                 UNIQUE (run, device, counter))",
                "table readings has a unique key on (counter, device, run), not only on (counter, device, key_ref)",
            ),
            (
                "CREATE TABLE t (key_ref INTEGER, run TEXT, device INTEGER, counter INTEGER, cipher INTEGER, payload BLOB,
                 UNIQUE (key_ref, device, counter));
                 CREATE VIEW readings AS SELECT * FROM t",
                "'readings' is a view, not a table",
            ),
            // The table an older lwcbench made: its key has the run, not the key.
            (
                "CREATE TABLE readings (run TEXT NOT NULL, device INTEGER NOT NULL, counter INTEGER NOT NULL,
                 cipher INTEGER NOT NULL, payload BLOB NOT NULL, UNIQUE (run, device, counter))",
                "table readings has no key_ref column: an older lwcbench wrote it, keyed by (run, device, counter), \
                 which misses a frame replayed into a later session; use a new store file",
            ),
            // The table the previous lwcbench made: the key's fingerprint in every row.
            (
                "CREATE TABLE readings (key_id TEXT NOT NULL, run TEXT NOT NULL, device INTEGER NOT NULL,
                 counter INTEGER NOT NULL, cipher INTEGER NOT NULL, payload BLOB NOT NULL,
                 UNIQUE (device, counter, key_id))",
                "table readings has a key_id column: an earlier lwcbench wrote it, with the key's fingerprint in \
                 every row; upgrade it with the SQL in docs/link.md (Upgrading a store) or use a new store file",
            ),
            (
                "CREATE TABLE readings (key_ref TEXT, run TEXT, device INTEGER, counter INTEGER, cipher INTEGER, payload BLOB,
                 UNIQUE (key_ref, device, counter))",
                "table readings: column 'key_ref' is 'TEXT', not an INTEGER",
            ),
        ];
        let d = tempfile::tempdir().unwrap();
        for (i, (sql, want)) in cases.iter().enumerate() {
            let p = d.path().join(format!("f{i}.db"));
            rusqlite::Connection::open(&p).unwrap().execute_batch(sql).unwrap();
            let e = match Sqlite::open(&p, "t", K) {
                Ok(_) => panic!("opened a store with: {sql}"),
                Err(e) => e,
            };
            assert_eq!(e, format!("--store: {}: {want}", p.display()));
            // Refused before anything is added: no keys table beside the foreign one.
            let c = rusqlite::Connection::open(&p).unwrap();
            let n: i64 = c
                .query_row("SELECT count(*) FROM sqlite_master WHERE name = 'readings_keys'", [], |r| r.get(0))
                .unwrap();
            assert_eq!(n, 0, "{sql}");
        }
        // The table as this tool creates it, and the same with a primary key in place of the
        // UNIQUE constraint and shorter type names, open.
        let p = d.path().join("pk.db");
        rusqlite::Connection::open(&p)
            .unwrap()
            .execute_batch(
                "CREATE TABLE readings (key_ref INTEGER, run TEXT, device INT, counter INT, cipher INT, payload,
                 PRIMARY KEY (counter, device, key_ref))",
            )
            .unwrap();
        let mut s = Sqlite::open(&p, "t", K).unwrap();
        let r = Row { device: 1, counter: 2, cipher: 3, payload: vec![4] };
        assert_eq!(s.insert(&[r.clone(), r]).unwrap(), 1);
        drop(s);
        assert!(Sqlite::open(&d.path().join("new.db"), "t", K).is_ok());
        assert!(Sqlite::open(&d.path().join("new.db"), "t", K).is_ok(), "its own table, opened again");
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

    /// The upgrade docs/link.md gives for a store with the key's fingerprint in every row: the
    /// readings stay, keep their key, and a replayed one is still refused after it.
    #[test]
    fn the_documented_upgrade_converts_a_store_of_the_previous_format() {
        let docs = include_str!("../../../../docs/link.md");
        let section = &docs[docs.find("### Upgrading a store").expect("docs/link.md has the section")..];
        let sql = section.split("```sql\n").nth(1).and_then(|b| b.split("```").next()).expect("an sql block");
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("prev.db");
        const K2: &str = "4522d92be3296147132c72dd4fb8d592";
        let c = rusqlite::Connection::open(&p).unwrap();
        c.execute_batch(&format!(
            "CREATE TABLE readings (key_id TEXT NOT NULL, run TEXT NOT NULL, device INTEGER NOT NULL,
             counter INTEGER NOT NULL, cipher INTEGER NOT NULL, payload BLOB NOT NULL,
             UNIQUE (device, counter, key_id));
             CREATE TABLE readings_top (key_id TEXT NOT NULL, device INTEGER NOT NULL, top INTEGER NOT NULL,
             PRIMARY KEY (key_id, device));
             INSERT INTO readings VALUES ('{K}', 's1', 1, 0, 1, x'00'), ('{K}', 's1', 1, 1, 1, x'01'),
                                         ('{K2}', 's2', 1, 0, 1, x'02');
             INSERT INTO readings_top VALUES ('{K}', 1, 1), ('{K2}', 1, 0);"
        ))
        .unwrap();
        assert!(Sqlite::open(&p, "s3", K).is_err(), "refused before the upgrade");
        c.execute_batch(sql).unwrap();
        drop(c);
        let r = |c, b| Row { device: 1, counter: c, cipher: 1, payload: vec![b] };
        let mut s = Sqlite::open(&p, "s1", K).unwrap();
        assert_eq!(s.all().unwrap(), vec![r(0, 0), r(1, 1)]);
        assert_eq!(s.insert(&[r(1, 1), r(2, 2)]).unwrap(), 1, "counter 1 under K is stored already");
        let mut s2 = Sqlite::open(&p, "s2", K2).unwrap();
        assert_eq!(s2.all().unwrap(), vec![r(0, 2)]);
        drop((s, s2));
        // The workers' per-device table is rebuilt from the readings.
        let mut w = crate::store::shared::SharedState::open(&p.display().to_string(), "s4", K, &[1]).unwrap();
        use crate::store::shared::StoreVerdict::*;
        assert_eq!(w.commit(&[r(2, 2), r(3, 3)]).unwrap(), vec![Replay, Stored]);
    }

    #[test]
    fn a_key_value_string_is_postgresql_and_never_a_file() {
        // libpq's keyword/value form (PostgreSQL manual, 34.1.1.1), blanks around '=' included
        for pg in ["host=h user=u password=hunter2 dbname=d", "  host = h dbname=d", "postgresql://u@h/d"] {
            assert_eq!(kind(pg), Ok(Kind::Postgres(pg)), "{pg}");
        }
        for (spec, path) in [
            ("link.db", "link.db"),
            ("./a=b.db", "./a=b.db"),
            ("data/x=1.db", "data/x=1.db"),
            ("my file=1.db", "my file=1.db"),
            ("sqlite:run=1.db", "run=1.db"),
            ("sqlite:/var/lib/link.db", "/var/lib/link.db"),
        ] {
            assert_eq!(kind(spec), Ok(Kind::Sqlite(Path::new(path))), "{spec}");
        }
        let e = kind("a=b.db").unwrap_err();
        assert!(e.starts_with("--store: 'a=b.db' is in PostgreSQL's key=value form"), "{e}");
        assert!(e.contains("unknown option `a`") && e.contains("./NAME"), "{e}");
        let e = kind("host=h password=hunter2 dbname").unwrap_err();
        assert!(e.contains("password=***") && !e.contains("hunter2"), "{e}");
        let e = kind("sqlite:host=h password=hunter2").unwrap_err();
        assert!(e.contains("names an SQLite file by a PostgreSQL connection string"), "{e}");
        assert!(e.contains("password=***") && !e.contains("hunter2"), "{e}");
    }

    #[test]
    fn mount_points_with_blanks_are_unescaped() {
        // mountinfo(5) writes space, tab, newline and backslash as three octal digits
        assert_eq!(unescape_mount("/mnt/a\\040b\\011c"), "/mnt/a b\tc");
        assert_eq!(unescape_mount("/x\\134y"), "/x\\y");
        assert_eq!(unescape_mount("/x\\9"), "/x\\9");
        assert_eq!(mount_point(Path::new("/proc/self")).as_deref(), Some("/proc"));
    }

    #[test]
    fn unwritable_store_and_bad_url_are_errors() {
        assert!(open("/proc/no-such/x.db", "r", K).is_err());
        assert!(open("mysql://x", "r", K).err().unwrap().contains("neither"));
    }
}
