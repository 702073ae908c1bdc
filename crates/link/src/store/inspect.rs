//! Reading a store from outside the gateway while it runs, and checking it afterwards (the
//! fault test's view of the store).
use std::collections::HashMap;
use std::time::Duration;

use crate::store::Kind;

/// Whether `store` names PostgreSQL (a URL or a key=value string), as `--store` reads it.
fn is_pg(store: &str) -> bool {
    matches!(crate::store::kind(store), Ok(Kind::Postgres(_)))
}

/// A read-only view of a run's rows in a store: SQLite through one read-only connection kept
/// open, PostgreSQL through a fresh client per question.
pub struct Watch {
    store: String,
    session: String,
    db: Option<rusqlite::Connection>,
}

impl Watch {
    /// A watch of `session` in `store` (opened at the first look).
    pub fn new(store: &str, session: &str) -> Watch {
        Watch { store: store.to_string(), session: session.to_string(), db: None }
    }

    /// Drop the SQLite connection (before the store is checked or removed).
    pub fn close(&mut self) {
        self.db = None;
    }

    fn db(&mut self) -> Option<&rusqlite::Connection> {
        if let (None, Ok(Kind::Sqlite(path))) = (&self.db, crate::store::kind(&self.store)) {
            if let Ok(c) = rusqlite::Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY) {
                let _ = c.busy_timeout(Duration::from_millis(500));
                self.db = Some(c);
            }
        }
        self.db.as_ref()
    }

    /// Highest stored counter per device (SQLite; PostgreSQL through a fresh client).
    pub fn stored_max(&mut self) -> HashMap<u32, u64> {
        let mut out = HashMap::new();
        if is_pg(&self.store) {
            if let Ok(mut c) = postgres::Client::connect(&self.store, postgres::NoTls) {
                if let Ok(rows) = c.query(
                    "SELECT device, MAX(counter) FROM lwcbench_link_readings WHERE run = $1 GROUP BY device",
                    &[&self.session],
                ) {
                    for r in rows {
                        out.insert(r.get::<_, i64>(0) as u32, r.get::<_, i64>(1) as u64);
                    }
                }
            }
            return out;
        }
        if let Some(db) = self.db() {
            if let Ok(mut st) = db.prepare_cached("SELECT device, MAX(counter) FROM readings GROUP BY device") {
                if let Ok(rows) = st.query_map([], |r| Ok((r.get::<_, i64>(0)? as u32, r.get::<_, i64>(1)? as u64))) {
                    out.extend(rows.flatten());
                }
            }
        }
        out
    }

    /// Rows stored for the run.
    pub fn stored_count(&mut self) -> u64 {
        if is_pg(&self.store) {
            return postgres::Client::connect(&self.store, postgres::NoTls)
                .ok()
                .and_then(|mut c| {
                    c.query_one("SELECT COUNT(*) FROM lwcbench_link_readings WHERE run = $1", &[&self.session]).ok()
                })
                .map(|r| r.get::<_, i64>(0) as u64)
                .unwrap_or(0);
        }
        self.db()
            .and_then(|db| db.query_row("SELECT COUNT(*) FROM readings", [], |r| r.get::<_, i64>(0)).ok())
            .unwrap_or(0) as u64
    }
}

/// `ok`, or what is wrong with the store: SQLite's integrity check; for PostgreSQL the
/// readings table's UNIQUE constraint in place and no duplicate key for this run.
pub fn integrity_check(store: &str, session: &str) -> String {
    let path = match crate::store::kind(store) {
        Ok(Kind::Sqlite(path)) => path,
        Ok(Kind::Postgres(_)) => return pg_integrity(store, session),
        Err(e) => return format!("cannot check: {e}"),
    };
    match rusqlite::Connection::open(path).and_then(|c| c.query_row("PRAGMA integrity_check", [], |r| r.get(0))) {
        Ok(s) => s,
        Err(e) => format!("cannot check: {e}"),
    }
}

fn pg_integrity(store: &str, session: &str) -> String {
    // The table's UNIQUE constraint must be in place and hold (no duplicate key for this run).
    let q = "SELECT (SELECT COUNT(*) FROM pg_constraint WHERE conrelid = 'lwcbench_link_readings'::regclass
               AND contype = 'u'),
              (SELECT COUNT(*) FROM (SELECT 1 FROM lwcbench_link_readings WHERE run = $1
               GROUP BY device, counter HAVING COUNT(*) > 1) d)";
    match postgres::Client::connect(store, postgres::NoTls).and_then(|mut c| c.query_one(q, &[&session])) {
        Ok(r) if r.get::<_, i64>(0) >= 1 && r.get::<_, i64>(1) == 0 => "ok".into(),
        Ok(r) => format!("unique constraints {}, duplicate keys {}", r.get::<_, i64>(0), r.get::<_, i64>(1)),
        Err(e) => format!("cannot check: {e}"),
    }
}
