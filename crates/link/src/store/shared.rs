//! The replay state the gateway workers share in the store: the readings table's unique key
//! (key_ref, device, counter) decides which frames are new, and per device the highest stored
//! counter (`top`) is kept beside the readings, moved in the same transaction per batch (SQLite
//! `BEGIN IMMEDIATE`, PostgreSQL rows locked in device order). See gateway/workers.rs for the
//! acceptance rule.
use std::collections::{HashMap, HashSet};
use std::time::Duration;

use crate::store::Row;

/// What the store said about one accepted-so-far frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StoreVerdict {
    /// New: stored.
    Stored,
    /// Already stored under this key: a replay or a redelivery (same bytes).
    Replay,
}

enum Backend {
    Sqlite(rusqlite::Connection),
    Postgres(postgres::Client),
}

/// One worker's connection to the shared store, with the replay state the workers share.
pub struct SharedState {
    backend: Backend,
    run: String,
    /// The master key's row in the keys table: the replay state is the key's, across sessions.
    key_ref: i64,
    shown: String,
}

fn pg_shown(url: &str) -> String {
    crate::input::shown(url)
}

impl SharedState {
    /// Connect to `spec` (as `--store`), create the readings and per-device tables if needed and
    /// provision `devices` (their `top` starts at the highest counter already stored under the
    /// key `key_id`, or none).
    pub fn open(spec: &str, run: &str, key_id: &str, devices: &[u32]) -> Result<SharedState, String> {
        // The tables exactly as the single gateway creates them, and the key's row.
        let key_ref = crate::store::open(spec, run, key_id)?.key_ref();
        let ids: Vec<i64> = devices.iter().map(|&d| d as i64).collect();
        // (a libpq key=value string is PostgreSQL too; otherwise the path is after "sqlite:")
        let (backend, shown) = if matches!(crate::store::kind(spec)?, crate::store::Kind::Postgres(_)) {
            let shown = pg_shown(spec);
            let mut c = postgres::Client::connect(spec, postgres::NoTls)
                .map_err(|e| format!("--store: cannot connect to {shown}: {}", crate::store::pg_error(&e)))?;
            crate::store::create_table(
                &mut c,
                "CREATE TABLE IF NOT EXISTS lwcbench_link_devices (
                     key_ref BIGINT NOT NULL,
                     device  BIGINT NOT NULL,
                     top     BIGINT NOT NULL,
                     PRIMARY KEY (key_ref, device)
                 )",
            )
            .map_err(|e| format!("--store: {shown}: {}", crate::store::pg_error(&e)))?;
            c.execute(
                "INSERT INTO lwcbench_link_devices (key_ref, device, top)
                 SELECT $1, d, COALESCE((SELECT max(counter) FROM lwcbench_link_readings r
                                         WHERE r.key_ref = $1 AND r.device = d), -1)
                 FROM unnest($2::bigint[]) AS u(d) ORDER BY d
                 ON CONFLICT DO NOTHING",
                &[&key_ref, &ids],
            )
            .map_err(|e| format!("--store: {shown}: provisioning devices: {}", crate::store::pg_error(&e)))?;
            (Backend::Postgres(c), shown)
        } else {
            let path = spec.strip_prefix("sqlite:").unwrap_or(spec);
            let shown = format!("sqlite:{}", crate::input::shown(path));
            let sq = |e: rusqlite::Error| crate::store::sqlite_error(std::path::Path::new(path), &e);
            crate::store::create_private(std::path::Path::new(path))?;
            let mut c = rusqlite::Connection::open(path).map_err(sq)?;
            c.busy_timeout(Duration::from_secs(30)).map_err(sq)?;
            c.execute_batch(
                "PRAGMA synchronous=NORMAL;
                 CREATE TABLE IF NOT EXISTS readings_top (
                     key_ref INTEGER NOT NULL,
                     device  INTEGER NOT NULL,
                     top     INTEGER NOT NULL,
                     PRIMARY KEY (key_ref, device)
                 );",
            )
            .map_err(sq)?;
            let tx = c.transaction().map_err(sq)?;
            {
                let mut st = tx
                    .prepare(
                        "INSERT OR IGNORE INTO readings_top (key_ref, device, top)
                         VALUES (?1, ?2, COALESCE((SELECT max(counter) FROM readings WHERE key_ref = ?1 AND device = ?2), -1))",
                    )
                    .map_err(sq)?;
                for d in &ids {
                    st.execute(rusqlite::params![key_ref, d]).map_err(sq)?;
                }
            }
            tx.commit().map_err(sq)?;
            (Backend::Sqlite(c), shown)
        };
        Ok(SharedState { backend, run: run.to_string(), key_ref, shown })
    }

    /// What the store is, for run.json.
    pub fn describe(&self) -> String {
        format!("{}; replay state in the store (per-device top + UNIQUE (key_ref, device, counter))", self.shown)
    }

    /// Decide and store `rows` in one transaction: one verdict per row, in the order given.
    /// Nothing is stored for a `Replay` row. On an error nothing of the batch is
    /// stored (the transaction rolls back) and the caller must not acknowledge the frames.
    pub fn commit(&mut self, rows: &[Row]) -> Result<Vec<StoreVerdict>, String> {
        if rows.is_empty() {
            return Ok(Vec::new());
        }
        // Device order, counter order: locks are taken in one order by every worker, and a
        // lower counter of a batch is judged before a higher one moves `top`.
        let mut order: Vec<usize> = (0..rows.len()).collect();
        order.sort_by_key(|&i| (rows[i].device, rows[i].counter));
        let mut devices: Vec<i64> = order.iter().map(|&i| rows[i].device as i64).collect();
        devices.dedup();
        let mut last = String::new();
        for _attempt in 0..8 {
            let r = match &mut self.backend {
                Backend::Postgres(c) => pg_commit(c, self.key_ref, &self.run, rows, &order, &devices),
                Backend::Sqlite(c) => sqlite_commit(c, self.key_ref, &self.run, rows, &order, &devices),
            };
            match r {
                Ok(v) => return Ok(v),
                Err(Retry::Again(e)) => last = e,
                Err(Retry::Fatal(e)) => return Err(format!("store {}: {e}", self.shown)),
            }
        }
        Err(format!("store {}: gave up after 8 serialization failures: {last}", self.shown))
    }
}

enum Retry {
    /// Deadlock / serialization failure: the transaction rolled back, try again.
    Again(String),
    Fatal(String),
}

/// The new `top` per device after `rows` (the highest counter of each, or the stored one).
/// Every row is a candidate for insertion: the unique key alone decides which are new.
fn new_tops(rows: &[Row], order: &[usize], tops: &HashMap<i64, i64>) -> Result<HashMap<i64, i64>, String> {
    let mut running = HashMap::with_capacity(tops.len());
    for &i in order {
        let d = rows[i].device as i64;
        let top = match running.get(&d) {
            Some(&t) => t,
            None => *tops.get(&d).ok_or_else(|| format!("device {d} is not provisioned in the store"))?,
        };
        running.insert(d, top.max(rows[i].counter as i64));
    }
    Ok(running)
}

fn pg_commit(
    c: &mut postgres::Client,
    key_ref: i64,
    run: &str,
    rows: &[Row],
    order: &[usize],
    devices: &[i64],
) -> Result<Vec<StoreVerdict>, Retry> {
    let fatal = |e: postgres::Error| {
        let retry = e.code().is_some_and(|s| {
            *s == postgres::error::SqlState::T_R_DEADLOCK_DETECTED
                || *s == postgres::error::SqlState::T_R_SERIALIZATION_FAILURE
        });
        if retry {
            Retry::Again(e.to_string())
        } else {
            Retry::Fatal(e.to_string())
        }
    };
    let mut tx = c.transaction().map_err(fatal)?;
    let locked = tx
        .query(
            "SELECT device, top FROM lwcbench_link_devices WHERE key_ref = $1 AND device = ANY($2)
             ORDER BY device FOR UPDATE",
            &[&key_ref, &devices],
        )
        .map_err(fatal)?;
    let tops: HashMap<i64, i64> = locked.iter().map(|r| (r.get::<_, i64>(0), r.get::<_, i64>(1))).collect();
    let new_tops = new_tops(rows, order, &tops).map_err(Retry::Fatal)?;
    let (mut d, mut k, mut ci, mut p) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for &i in order {
        d.push(rows[i].device as i64);
        k.push(rows[i].counter as i64);
        ci.push(rows[i].cipher as i16);
        p.push(rows[i].payload.as_slice());
    }
    let inserted = tx
        .query(
            "INSERT INTO lwcbench_link_readings (key_ref, run, device, counter, cipher, payload)
             SELECT $1, $2, d, k, ci, p FROM unnest($3::bigint[], $4::bigint[], $5::smallint[], $6::bytea[])
                    AS u(d, k, ci, p)
             ON CONFLICT DO NOTHING RETURNING device, counter",
            &[&key_ref, &run, &d, &k, &ci, &p],
        )
        .map_err(fatal)?;
    let mut new: HashSet<(i64, i64)> = inserted.iter().map(|r| (r.get::<_, i64>(0), r.get::<_, i64>(1))).collect();
    let (td, tt): (Vec<i64>, Vec<i64>) = new_tops.into_iter().filter(|(d, t)| tops.get(d) != Some(t)).unzip();
    if !td.is_empty() {
        tx.execute(
            "UPDATE lwcbench_link_devices AS x SET top = GREATEST(x.top, u.t)
             FROM unnest($2::bigint[], $3::bigint[]) AS u(d, t) WHERE x.key_ref = $1 AND x.device = u.d",
            &[&key_ref, &td, &tt],
        )
        .map_err(fatal)?;
    }
    tx.commit().map_err(fatal)?;
    // Two copies of one frame in a batch give one inserted row: the first copy is the stored one.
    Ok(rows
        .iter()
        .map(
            |r| {
                if new.remove(&(r.device as i64, r.counter as i64)) {
                    StoreVerdict::Stored
                } else {
                    StoreVerdict::Replay
                }
            },
        )
        .collect())
}

fn sqlite_commit(
    c: &mut rusqlite::Connection,
    key_ref: i64,
    run: &str,
    rows: &[Row],
    order: &[usize],
    devices: &[i64],
) -> Result<Vec<StoreVerdict>, Retry> {
    let fatal = |e: rusqlite::Error| Retry::Fatal(e.to_string());
    // IMMEDIATE: the write lock is taken first, so read-decide-write is one serial step.
    let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate).map_err(fatal)?;
    let mut tops = HashMap::with_capacity(devices.len());
    let mut verdict = vec![StoreVerdict::Replay; rows.len()];
    {
        let mut q =
            tx.prepare_cached("SELECT top FROM readings_top WHERE key_ref = ?1 AND device = ?2").map_err(fatal)?;
        for &d in devices {
            if let Some(t) =
                q.query_row(rusqlite::params![key_ref, d], |r| r.get::<_, i64>(0)).map(Some).or_else(|e| match e {
                    rusqlite::Error::QueryReturnedNoRows => Ok(None),
                    e => Err(fatal(e)),
                })?
            {
                tops.insert(d, t);
            }
        }
        let new_tops = new_tops(rows, order, &tops).map_err(Retry::Fatal)?;
        let mut ins = tx
            .prepare_cached(
                "INSERT OR IGNORE INTO readings (key_ref, run, device, counter, cipher, payload)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )
            .map_err(fatal)?;
        for &i in order {
            let r = &rows[i];
            let (d, c, ci) = (r.device as i64, r.counter as i64, r.cipher as i64);
            let n = ins.execute(rusqlite::params![key_ref, run, d, c, ci, r.payload]).map_err(fatal)?;
            verdict[i] = if n == 1 { StoreVerdict::Stored } else { StoreVerdict::Replay };
        }
        let mut up = tx
            .prepare_cached("UPDATE readings_top SET top = max(top, ?3) WHERE key_ref = ?1 AND device = ?2")
            .map_err(fatal)?;
        for (d, t) in new_tops {
            if tops.get(&d) != Some(&t) {
                up.execute(rusqlite::params![key_ref, d, t]).map_err(fatal)?;
            }
        }
    }
    tx.commit().map_err(fatal)?;
    Ok(verdict)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;

    /// A key fingerprint (the store takes it as given).
    const K: &str = "32f4fc68107ab4dd67b987d1614f906b";

    fn row(device: u32, counter: u64) -> Row {
        Row { device, counter, cipher: 1, payload: vec![counter as u8] }
    }

    #[test]
    fn top_is_the_highest_counter_and_unprovisioned_devices_are_refused() {
        let rows = vec![row(1, 6), row(1, 11), row(1, 7), row(2, 0)];
        let order: Vec<usize> = (0..rows.len()).collect();
        let tops = HashMap::from([(1i64, 10i64), (2, -1)]);
        let new = new_tops(&rows, &order, &tops).unwrap();
        assert_eq!((new[&1], new[&2]), (11, 0));
        assert_eq!(new_tops(&[row(1, 3)], &[0], &tops).unwrap()[&1], 10, "an old counter leaves top");
        assert!(new_tops(&[row(9, 1)], &[0], &tops).is_err(), "unprovisioned device");
    }

    #[test]
    fn sqlite_state_is_shared_between_connections() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("s.db").display().to_string();
        let mut a = SharedState::open(&p, "r", K, &[1]).unwrap();
        let mut b = SharedState::open(&p, "r", K, &[1]).unwrap();
        use StoreVerdict::*;
        assert_eq!(a.commit(&[row(1, 5), row(1, 3)]).unwrap(), vec![Stored, Stored]);
        // The same counters through the other connection: replays, not stored again.
        assert_eq!(b.commit(&[row(1, 5)]).unwrap(), vec![Replay]);
        // 4 and 1 were never stored: stored now, however far below the highest counter.
        assert_eq!(a.commit(&[row(1, 9)]).unwrap(), vec![Stored]);
        assert_eq!(b.commit(&[row(1, 4), row(1, 1)]).unwrap(), vec![Stored, Stored]);
        // Two copies of one new counter in a batch: the first is stored, the second a replay.
        assert_eq!(b.commit(&[row(1, 5), row(1, 6), row(1, 6)]).unwrap(), vec![Replay, Stored, Replay]);
        let mut s = crate::store::Sqlite::open(std::path::Path::new(&p), "r", K).unwrap();
        let got: Vec<u64> = s.all().unwrap().iter().map(|r| r.counter).collect();
        assert_eq!(got, vec![1, 3, 4, 5, 6, 9]);
        // A new connection starts from what is stored: device 1's top is its highest stored
        // counter (9), a device with nothing stored starts at -1.
        let mut c = SharedState::open(&p, "r", K, &[1, 2]).unwrap();
        let tops: Vec<(i64, i64)> = rusqlite::Connection::open(&p)
            .unwrap()
            .prepare(
                "SELECT device, top FROM readings_top WHERE key_ref = (SELECT id FROM readings_keys WHERE key_id = ?1)
                 ORDER BY device",
            )
            .unwrap()
            .query_map([K], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(tops, vec![(1, 9), (2, -1)]);
        assert_eq!(c.commit(&[row(1, 5), row(1, 8)]).unwrap(), vec![Replay, Stored]);
        // A later session under the same key: counter 8 replayed into it is a replay, 2 is new;
        // under another key both are new.
        let mut later = SharedState::open(&p, "r2", K, &[1]).unwrap();
        assert_eq!(later.commit(&[row(1, 8), row(1, 2)]).unwrap(), vec![Replay, Stored]);
        let mut other = SharedState::open(&p, "r3", "4522d92be3296147132c72dd4fb8d592", &[1]).unwrap();
        assert_eq!(other.commit(&[row(1, 8), row(1, 2)]).unwrap(), vec![Stored, Stored]);
    }
}
