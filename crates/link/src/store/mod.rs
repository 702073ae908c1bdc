//! Where the gateway puts accepted readings: SQLite (default, embedded, WAL) or PostgreSQL.
//! Both tag every row with its run (one cipher of one session) and have a unique (device,
//! counter, key_ref) key, `key_ref` naming the master key's fingerprint in a keys table: a (key,
//! device, counter) names one nonce, so a frame the broker delivers twice (QoS 1 is
//! at-least-once) or replays into a later session under the same key is stored once, while
//! another key in the same store (whose counters start at 0 again) never collides with it. The
//! fingerprint is stored once per key, not per row: a 32-character text in every row and index
//! entry makes each reading's write about 10–30 % larger (WAL bytes per reading).
pub mod inspect;
mod postgres;
mod schema;
pub mod shared;
mod sqlite;

use std::path::Path;

/// One accepted reading.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    /// The sending device's id.
    pub device: u32,
    /// The frame's counter (with the key and device, its nonce).
    pub counter: u64,
    /// The cipher's id on the wire.
    pub cipher: u8,
    /// The decrypted reading.
    pub payload: Vec<u8>,
}

/// A store of accepted readings, one run of one key (SQLite or PostgreSQL).
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
        if keyword_value_form(path) && path.parse::<::postgres::Config>().is_ok() {
            return Err(format!(
                "--store: '{}' names an SQLite file by a PostgreSQL connection string; for PostgreSQL \
                 drop 'sqlite:', for a file of that name write sqlite:./NAME",
                shown()
            ));
        }
        return Ok(Kind::Sqlite(Path::new(path)));
    }
    if keyword_value_form(spec) {
        return match spec.parse::<::postgres::Config>() {
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

pub use postgres::Postgres;
pub(crate) use postgres::{create_table, pg_error};
pub use sqlite::Sqlite;
pub(crate) use sqlite::{create_private, sqlite_error};

#[cfg(test)]
mod tests {
    use super::*;

    /// A key fingerprint (any 32 hex digits: the store does not derive it).
    pub(super) const K: &str = "32f4fc68107ab4dd67b987d1614f906b";

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
    fn unwritable_store_and_bad_url_are_errors() {
        assert!(open("/proc/no-such/x.db", "r", K).is_err());
        assert!(open("mysql://x", "r", K).err().unwrap().contains("neither"));
    }
}
