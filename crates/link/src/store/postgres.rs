//! The PostgreSQL store: tables `lwcbench_link_keys` and `lwcbench_link_readings`.

use super::schema::{check_pg_schema, one_key_row, PG_TABLES};
use super::{Row, Store};

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
    /// The store of the run `run` under the key `key_id` in the database `url` names.
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
