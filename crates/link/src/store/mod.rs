//! Where the gateway puts accepted readings: SQLite (default, embedded, WAL) or PostgreSQL.
//! Both tag every row with its run (one cipher of one session) and have a unique (key_id,
//! device, counter) key, `key_id` being the master key's fingerprint: a (key, device, counter)
//! names one nonce, so a frame the broker delivers twice (QoS 1 is at-least-once) or replays
//! into a later session under the same key is stored once, while another key in the same store
//! (whose counters start at 0 again) never collides with it.
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
}

/// `--store`: a `postgres://` / `postgresql://` URL, `sqlite:PATH`, or a plain path (SQLite).
/// `key_id` is the master key's fingerprint ([`crate::wire::keys::MasterKey::fingerprint`]).
pub fn open(spec: &str, run: &str, key_id: &str) -> Result<Box<dyn Store>, String> {
    if spec.starts_with("postgres://") || spec.starts_with("postgresql://") {
        Ok(Box::new(Postgres::open(spec, run, key_id)?))
    } else if spec.contains("://") {
        Err(format!("--store: '{}' is neither a postgres:// URL nor a file path", crate::input::shown(spec)))
    } else {
        let path = spec.strip_prefix("sqlite:").unwrap_or(spec);
        Ok(Box::new(Sqlite::open(Path::new(path), run, key_id)?))
    }
}

pub struct Sqlite {
    conn: rusqlite::Connection,
    path: PathBuf,
    run: String,
    key_id: String,
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
/// reason is the errno of trying what SQLite needs (open the file for writing, or create a
/// file beside it), so it is right for root too.
pub(crate) fn sqlite_error(path: &Path, e: &rusqlite::Error) -> String {
    let p = crate::input::shown(&path.display().to_string());
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let d = crate::input::shown(&dir.display().to_string());
    let tried = if path.exists() {
        std::fs::OpenOptions::new().append(true).open(path).map(drop)
    } else {
        let probe = dir.join(format!(".lwcbench-probe-{}", std::process::id()));
        std::fs::OpenOptions::new().write(true).create_new(true).open(&probe).map(|_| {
            let _ = std::fs::remove_file(&probe);
        })
    };
    match tried.err().and_then(|x| x.raw_os_error().map(|n| (n, x))) {
        Some((libc::EROFS, _)) => format!("--store: {p}: the file system is read-only ({e})"),
        Some((libc::EACCES | libc::EPERM, x)) if path.exists() => {
            format!("--store: {p}: the file is not writable ({x})")
        }
        Some((libc::EACCES | libc::EPERM, x)) => format!("--store: {p}: its directory {d} is not writable ({x})"),
        Some((libc::ENOENT | libc::ENOTDIR, _)) => format!("--store: {p}: directory {d} does not exist"),
        _ => format!("--store: {p}: {e}"),
    }
}

impl Sqlite {
    /// The store of the run `run` under the key `key_id` in the SQLite file `path`.
    pub fn open(path: &Path, run: &str, key_id: &str) -> Result<Sqlite, String> {
        let p = crate::input::shown(&path.display().to_string());
        let conn = rusqlite::Connection::open(path).map_err(|e| sqlite_error(path, &e))?;
        // WAL + synchronous=NORMAL: a committed batch survives a crash of this process (the
        // WAL is written before COMMIT returns); only an OS crash/power cut may lose the last
        // commits. busy_timeout lets a second reader (a test) look while the gateway writes.
        conn.busy_timeout(std::time::Duration::from_secs(5)).map_err(|e| format!("--store: {p}: {e}"))?;
        let mode: String = conn
            .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
            .map_err(|e| format!("--store: {p}: cannot switch to WAL: {e}"))?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(format!("--store: {p}: journal mode is '{mode}', WAL refused"));
        }
        // The schema check after CREATE names an older table's missing key_id column.
        // The unique key's integers come first: an insert's b-tree search then decides on
        // device and counter and compares the 32-character key_id only on a real match.
        conn.execute_batch(
            "PRAGMA synchronous=NORMAL;
             CREATE TABLE IF NOT EXISTS readings (
                 key_id  TEXT    NOT NULL,
                 run     TEXT    NOT NULL,
                 device  INTEGER NOT NULL,
                 counter INTEGER NOT NULL,
                 cipher  INTEGER NOT NULL,
                 payload BLOB    NOT NULL,
                 UNIQUE (device, counter, key_id)
             );",
        )
        .map_err(|e| sqlite_error(path, &e))?;
        check_sqlite_schema(&conn).map_err(|e| format!("--store: {p}: {e}"))?;
        // Checkpoints run on their own thread (below); the writer's auto-checkpoint stays as
        // the fallback only if that thread could not start.
        let checkpointer = Checkpointer::start(path);
        if checkpointer.is_some() {
            conn.execute_batch("PRAGMA wal_autocheckpoint=0;").map_err(|e| format!("--store: {p}: {e}"))?;
        }
        Ok(Sqlite {
            conn,
            path: path.to_path_buf(),
            run: run.to_string(),
            key_id: key_id.to_string(),
            _checkpointer: checkpointer,
        })
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
                    "INSERT OR IGNORE INTO readings (key_id, run, device, counter, cipher, payload)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                )
                .map_err(|e| format!("store {p}: {e}"))?;
            for r in rows {
                let (d, c, ci) = (r.device as i64, r.counter as i64, r.cipher as i64);
                new += st
                    .execute(rusqlite::params![self.key_id, self.run, d, c, ci, r.payload])
                    .map_err(|e| format!("store {p}: {e}"))? as u64;
            }
        }
        tx.commit().map_err(|e| format!("store {p}: commit: {e}"))?;
        Ok(new)
    }

    fn all(&mut self) -> Result<Vec<Row>, String> {
        let mut st = self
            .conn
            // Walks the unique key's index in (device, counter) order, no sort; key_id is read
            // from the index, so another key's rows are skipped unread.
            .prepare(
                "SELECT device, counter, cipher, payload FROM readings WHERE key_id = ?1 AND run = ?2
                 ORDER BY device, counter",
            )
            .map_err(|e| e.to_string())?;
        let rows = st
            .query_map([&self.key_id, &self.run], |r| {
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
}

/// PostgreSQL: table `lwcbench_link_readings`, one run's rows tagged with its run id, unique
/// (key_id, device, counter).
pub struct Postgres {
    client: postgres::Client,
    url_shown: String,
    run: String,
    key_id: String,
}

/// `CREATE TABLE IF NOT EXISTS` that tolerates a concurrent creator: two gateway processes
/// starting together may both miss the table and the slower one then fails on the catalogue's
/// unique index (23505) or on the table itself (42P07); once the table exists, a retry is a no-op.
pub(crate) fn create_table(c: &mut postgres::Client, sql: &str) -> Result<(), postgres::Error> {
    use postgres::error::SqlState;
    let mut tries = 0;
    loop {
        match c.batch_execute(sql) {
            Err(e)
                if tries < 3
                    && (e.code() == Some(&SqlState::UNIQUE_VIOLATION)
                        || e.code() == Some(&SqlState::DUPLICATE_TABLE)) =>
            {
                tries += 1
            }
            r => return r,
        }
    }
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
        create_table(
            &mut client,
            "CREATE TABLE IF NOT EXISTS lwcbench_link_readings (
                 key_id  TEXT     NOT NULL,
                 run     TEXT     NOT NULL,
                 device  BIGINT   NOT NULL,
                 counter BIGINT   NOT NULL,
                 cipher  SMALLINT NOT NULL,
                 payload BYTEA    NOT NULL,
                 UNIQUE (key_id, device, counter)
             )",
        )
        .map_err(|e| format!("--store: {shown}: {}", pg_error(&e)))?;
        check_pg_schema(&mut client).map_err(|e| format!("--store: {shown}: {e}"))?;
        Ok(Postgres { client, url_shown: shown, run: run.to_string(), key_id: key_id.to_string() })
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
                "INSERT INTO lwcbench_link_readings (key_id, run, device, counter, cipher, payload)
                 SELECT $1, $2, d, k, ci, p FROM unnest($3::bigint[], $4::bigint[], $5::smallint[], $6::bytea[])
                        AS u(d, k, ci, p)
                 ON CONFLICT DO NOTHING",
                &[&self.key_id, &self.run, &d, &k, &ci, &p],
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
}

/// The columns of the readings table, in the order this tool creates them.
const COLUMNS: [&str; 6] = ["key_id", "run", "device", "counter", "cipher", "payload"];
/// Its one unique key: (key, device, counter) names one nonce.
const KEY: [&str; 3] = ["key_id", "device", "counter"];

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
fn check_shape(table: &str, shape: Shape, types: [ColumnType; 6], renew: &str) -> Result<(), String> {
    shape.kind?;
    let has = |c: &str| shape.columns.iter().any(|x| x.0 == c);
    if !has("key_id") && has("run") {
        return Err(format!(
            "table {table} has no key_id column: an older lwcbench wrote it, keyed by (run, device, counter), \
             which misses a frame replayed into a later session; {renew}"
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
            (&text, "TEXT"),
            (&text, "TEXT"),
            (&int, "an INTEGER"),
            (&int, "an INTEGER"),
            (&int, "an INTEGER"),
            (&blob, "a BLOB"),
        ],
        "use a new store file",
    )
}

/// The `lwcbench_link_readings` table of a PostgreSQL store as this tool creates it.
fn check_pg_schema(c: &mut postgres::Client) -> Result<(), String> {
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
            (&text, "text"),
            (&text, "text"),
            (&bigint, "bigint"),
            (&bigint, "bigint"),
            (&smallint, "smallint"),
            (&bytea, "bytea"),
        ],
        "rename or drop the tables lwcbench_link_readings and lwcbench_link_devices, or use another database",
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
        // The key's integers first: an insert's b-tree search compares the 32-character key_id
        // only when device and counter already match.
        let key: Vec<String> = s
            .conn
            .prepare("SELECT name FROM pragma_index_info((SELECT name FROM pragma_index_list('readings')))")
            .unwrap()
            .query_map([], |x| x.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(key, ["device", "counter", "key_id"]);
    }

    /// A store an earlier lwcbench made (UNIQUE (key_id, device, counter): the same key, its
    /// columns in another order) opens and keeps deduplicating.
    #[test]
    fn a_store_with_the_key_columns_in_another_order_still_opens() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("old.db");
        rusqlite::Connection::open(&p)
            .unwrap()
            .execute_batch(
                "CREATE TABLE readings (key_id TEXT NOT NULL, run TEXT NOT NULL, device INTEGER NOT NULL,
                 counter INTEGER NOT NULL, cipher INTEGER NOT NULL, payload BLOB NOT NULL,
                 UNIQUE (key_id, device, counter))",
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
                "CREATE TABLE readings (key_id TEXT, run TEXT, device INTEGER, counter INTEGER, cipher INTEGER, payload BLOB)",
                "table readings has no UNIQUE (counter, device, key_id) key",
            ),
            (
                "CREATE TABLE readings (key_id TEXT, run TEXT, device INTEGER, counter INTEGER, cipher INTEGER, payload BLOB,
                 UNIQUE (key_id, device, counter), UNIQUE (device))",
                "table readings has a unique key on (device), not only on (counter, device, key_id)",
            ),
            (
                "CREATE TABLE readings (key_id TEXT, run TEXT, device INTEGER, counter INTEGER, cipher INTEGER, payload BLOB,
                 note TEXT, UNIQUE (key_id, device, counter))",
                "table readings has a column 'note' this tool does not write",
            ),
            (
                "CREATE TABLE readings (key_id TEXT, run TEXT, device INTEGER, counter TEXT, cipher INTEGER, payload BLOB,
                 UNIQUE (key_id, device, counter))",
                "table readings: column 'counter' is 'TEXT', not an INTEGER",
            ),
            (
                "CREATE TABLE readings (key_id TEXT, run TEXT, device INTEGER, counter INTEGER, payload BLOB,
                 UNIQUE (key_id, device, counter))",
                "table readings has no column 'cipher'",
            ),
            (
                "CREATE TABLE readings (key_id TEXT, run TEXT, device INTEGER, counter INTEGER, cipher INTEGER, payload BLOB);
                 CREATE UNIQUE INDEX some ON readings (key_id, device, counter) WHERE device > 5",
                "table readings: unique index 'some' is partial",
            ),
            (
                "CREATE TABLE readings (key_id TEXT, run TEXT, device INTEGER, counter INTEGER, cipher INTEGER, payload BLOB,
                 UNIQUE (run, device, counter))",
                "table readings has a unique key on (counter, device, run), not only on (counter, device, key_id)",
            ),
            (
                "CREATE TABLE t (key_id TEXT, run TEXT, device INTEGER, counter INTEGER, cipher INTEGER, payload BLOB,
                 UNIQUE (key_id, device, counter));
                 CREATE VIEW readings AS SELECT * FROM t",
                "'readings' is a view, not a table",
            ),
            // The table an older lwcbench made: its key has the run, not the key.
            (
                "CREATE TABLE readings (run TEXT NOT NULL, device INTEGER NOT NULL, counter INTEGER NOT NULL,
                 cipher INTEGER NOT NULL, payload BLOB NOT NULL, UNIQUE (run, device, counter))",
                "table readings has no key_id column: an older lwcbench wrote it, keyed by (run, device, counter), \
                 which misses a frame replayed into a later session; use a new store file",
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
        }
        // The table as this tool creates it, and the same with a primary key in place of the
        // UNIQUE constraint and shorter type names, open.
        let p = d.path().join("pk.db");
        rusqlite::Connection::open(&p)
            .unwrap()
            .execute_batch(
                "CREATE TABLE readings (key_id TEXT, run TEXT, device INT, counter INT, cipher INT, payload,
                 PRIMARY KEY (counter, device, key_id))",
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

    #[test]
    fn unwritable_store_and_bad_url_are_errors() {
        assert!(open("/proc/no-such/x.db", "r", K).is_err());
        assert!(open("mysql://x", "r", K).err().unwrap().contains("neither"));
    }
}
