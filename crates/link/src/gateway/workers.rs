//! Scale-out (`lwcbench link --workers K`): K gateway workers behind one MQTT v5 **shared
//! subscription** (`$share/<group>/lwcbench/link/<session>/+`), the broker spreading the
//! frames over them, each worker with its own MQTT connection, its own store connection and its
//! own thread. See docs/link.md, "Scale-out".
//!
//! With a shared subscription one device's frames reach several workers, so a window in one
//! worker's memory cannot decide alone. The **store is the authority** for replay state:
//!
//! * each worker keeps its own in-memory window as a *pre-filter* only: what it refuses is
//!   refused correctly (a worker's `top` never exceeds the store's, below), what it passes is
//!   not yet accepted;
//! * the tag is verified (a forged frame never reaches the store, never moves any state);
//! * in **one store transaction per batch**, with the device rows locked (PostgreSQL `SELECT …
//!   FOR UPDATE` in device order; SQLite `BEGIN IMMEDIATE`): a counter ≤ `top − W` (`top` = the
//!   device's highest stored counter, kept in a per-device table) is refused as `too_old`; the
//!   rest is inserted under the UNIQUE (key_id, device, counter) key and a counter already there is
//!   refused as `replay`; `top` moves to the highest inserted counter in the same transaction.
//!
//! The acceptance rule is the single gateway's window rule with "accepted inside the window"
//! read from the readings table (an exact set instead of a bitmap).
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rumqttc::v5::mqttbytes::v5::{Packet, Publish};
use rumqttc::v5::mqttbytes::QoS;
use rumqttc::v5::{AsyncClient, Event, MqttOptions};
use tokio::sync::mpsc;

use crate::clock::{now_ns, thread_cpu_ns};
use crate::gateway::checks::{Gateway, Opened, Refusal};
use crate::gateway::{next_batch, GatewaySpec, GwResult, GwSample, Incoming, QUEUE};
use crate::store::Row;
use crate::transport::broker::BrokerAddr;
use crate::transport::mqtt::{received_frame, spawn_acker, still_connecting, wait_ready, Ready, MQTT_MAX_PACKET};
use crate::transport::Transport;
use crate::wire::keys::MasterKey;

/// Most gateway workers one session may start.
pub const MAX_WORKERS: usize = 64;

/// What the store said about one accepted-so-far frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StoreVerdict {
    Stored,
    Replay,
    TooOld,
}

enum Backend {
    Sqlite(rusqlite::Connection),
    Postgres(postgres::Client),
}

/// One worker's connection to the shared store, with the replay state the workers share.
pub struct SharedState {
    backend: Backend,
    run: String,
    /// The master key's fingerprint: the replay state is the key's, across sessions.
    key_id: String,
    window: i64,
    shown: String,
}

fn pg_shown(url: &str) -> String {
    crate::input::shown(url)
}

impl SharedState {
    /// Connect to `spec` (as `--store`), create the readings and per-device tables if needed and
    /// provision `devices` (their `top` starts at the highest counter already stored under the
    /// key `key_id`, or none).
    pub fn open(spec: &str, run: &str, key_id: &str, window: u64, devices: &[u32]) -> Result<SharedState, String> {
        if window == 0 || window > crate::gateway::replay::MAX_WINDOW {
            return Err(format!("--window: {window} is not in 1..={}", crate::gateway::replay::MAX_WINDOW));
        }
        // The readings table exactly as the single gateway creates it.
        drop(crate::store::open(spec, run, key_id)?);
        let ids: Vec<i64> = devices.iter().map(|&d| d as i64).collect();
        let (backend, shown) = if spec.starts_with("postgres://") || spec.starts_with("postgresql://") {
            let shown = pg_shown(spec);
            let mut c = postgres::Client::connect(spec, postgres::NoTls)
                .map_err(|e| format!("--store: cannot connect to {shown}: {}", crate::store::pg_error(&e)))?;
            crate::store::create_table(
                &mut c,
                "CREATE TABLE IF NOT EXISTS lwcbench_link_devices (
                     key_id TEXT   NOT NULL,
                     device BIGINT NOT NULL,
                     top    BIGINT NOT NULL,
                     PRIMARY KEY (key_id, device)
                 )",
            )
            .map_err(|e| format!("--store: {shown}: {}", crate::store::pg_error(&e)))?;
            c.execute(
                "INSERT INTO lwcbench_link_devices (key_id, device, top)
                 SELECT $1, d, COALESCE((SELECT max(counter) FROM lwcbench_link_readings r
                                         WHERE r.key_id = $1 AND r.device = d), -1)
                 FROM unnest($2::bigint[]) AS u(d) ORDER BY d
                 ON CONFLICT DO NOTHING",
                &[&key_id, &ids],
            )
            .map_err(|e| format!("--store: {shown}: provisioning devices: {}", crate::store::pg_error(&e)))?;
            (Backend::Postgres(c), shown)
        } else {
            let path = spec.strip_prefix("sqlite:").unwrap_or(spec);
            let shown = format!("sqlite:{}", crate::input::shown(path));
            let sq = |e: rusqlite::Error| crate::store::sqlite_error(std::path::Path::new(path), &e);
            let mut c = rusqlite::Connection::open(path).map_err(sq)?;
            c.busy_timeout(Duration::from_secs(30)).map_err(sq)?;
            c.execute_batch(
                "PRAGMA synchronous=NORMAL;
                 CREATE TABLE IF NOT EXISTS readings_top (
                     key_id TEXT    NOT NULL,
                     device INTEGER NOT NULL,
                     top    INTEGER NOT NULL,
                     PRIMARY KEY (key_id, device)
                 );",
            )
            .map_err(sq)?;
            let tx = c.transaction().map_err(sq)?;
            {
                let mut st = tx
                    .prepare(
                        "INSERT OR IGNORE INTO readings_top (key_id, device, top)
                         VALUES (?1, ?2, COALESCE((SELECT max(counter) FROM readings WHERE key_id = ?1 AND device = ?2), -1))",
                    )
                    .map_err(sq)?;
                for d in &ids {
                    st.execute(rusqlite::params![key_id, d]).map_err(sq)?;
                }
            }
            tx.commit().map_err(sq)?;
            (Backend::Sqlite(c), shown)
        };
        Ok(SharedState { backend, run: run.to_string(), key_id: key_id.to_string(), window: window as i64, shown })
    }

    pub fn describe(&self) -> String {
        format!("{}; replay state in the store (per-device top + UNIQUE (key_id, device, counter))", self.shown)
    }

    /// Decide and store `rows` in one transaction: one verdict per row, in the order given.
    /// Nothing is stored for a `Replay` or `TooOld` row. On an error nothing of the batch is
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
                Backend::Postgres(c) => pg_commit(c, &self.key_id, &self.run, self.window, rows, &order, &devices),
                Backend::Sqlite(c) => sqlite_commit(c, &self.key_id, &self.run, self.window, rows, &order, &devices),
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

/// The window rule against the stored `top` of each device: returns, in `order`, whether each
/// row is a candidate for insertion (false = too old) and the new `top` per device.
fn judge(
    window: i64,
    rows: &[Row],
    order: &[usize],
    tops: &HashMap<i64, i64>,
) -> Result<(Vec<bool>, HashMap<i64, i64>), String> {
    let mut running = HashMap::with_capacity(tops.len());
    let mut cand = vec![false; rows.len()];
    for &i in order {
        let d = rows[i].device as i64;
        let c = rows[i].counter as i64;
        let top = match running.get(&d) {
            Some(&t) => t,
            None => *tops.get(&d).ok_or_else(|| format!("device {d} is not provisioned in the store"))?,
        };
        // top = -1: nothing stored yet, everything is fresh. Else c ≤ top − W is too old.
        if top >= 0 && c <= top && top - c >= window {
            running.insert(d, top);
            continue;
        }
        cand[i] = true;
        running.insert(d, top.max(c));
    }
    Ok((cand, running))
}

fn pg_commit(
    c: &mut postgres::Client,
    key_id: &str,
    run: &str,
    window: i64,
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
            "SELECT device, top FROM lwcbench_link_devices WHERE key_id = $1 AND device = ANY($2)
             ORDER BY device FOR UPDATE",
            &[&key_id, &devices],
        )
        .map_err(fatal)?;
    let tops: HashMap<i64, i64> = locked.iter().map(|r| (r.get::<_, i64>(0), r.get::<_, i64>(1))).collect();
    let (cand, new_tops) = judge(window, rows, order, &tops).map_err(Retry::Fatal)?;
    let (mut d, mut k, mut ci, mut p) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for &i in order.iter().filter(|&&i| cand[i]) {
        d.push(rows[i].device as i64);
        k.push(rows[i].counter as i64);
        ci.push(rows[i].cipher as i16);
        p.push(rows[i].payload.as_slice());
    }
    let inserted = tx
        .query(
            "INSERT INTO lwcbench_link_readings (key_id, run, device, counter, cipher, payload)
             SELECT $1, $2, d, k, ci, p FROM unnest($3::bigint[], $4::bigint[], $5::smallint[], $6::bytea[])
                    AS u(d, k, ci, p)
             ON CONFLICT DO NOTHING RETURNING device, counter",
            &[&key_id, &run, &d, &k, &ci, &p],
        )
        .map_err(fatal)?;
    let new: HashSet<(i64, i64)> = inserted.iter().map(|r| (r.get::<_, i64>(0), r.get::<_, i64>(1))).collect();
    let (td, tt): (Vec<i64>, Vec<i64>) = new_tops.into_iter().filter(|(d, t)| tops.get(d) != Some(t)).unzip();
    if !td.is_empty() {
        tx.execute(
            "UPDATE lwcbench_link_devices AS x SET top = GREATEST(x.top, u.t)
             FROM unnest($2::bigint[], $3::bigint[]) AS u(d, t) WHERE x.key_id = $1 AND x.device = u.d",
            &[&key_id, &td, &tt],
        )
        .map_err(fatal)?;
    }
    tx.commit().map_err(fatal)?;
    Ok(rows
        .iter()
        .enumerate()
        .map(|(i, r)| match (cand[i], new.contains(&(r.device as i64, r.counter as i64))) {
            (false, _) => StoreVerdict::TooOld,
            (true, true) => StoreVerdict::Stored,
            (true, false) => StoreVerdict::Replay,
        })
        .collect())
}

fn sqlite_commit(
    c: &mut rusqlite::Connection,
    key_id: &str,
    run: &str,
    window: i64,
    rows: &[Row],
    order: &[usize],
    devices: &[i64],
) -> Result<Vec<StoreVerdict>, Retry> {
    let fatal = |e: rusqlite::Error| Retry::Fatal(e.to_string());
    // IMMEDIATE: the write lock is taken first, so read-decide-write is one serial step.
    let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate).map_err(fatal)?;
    let mut tops = HashMap::with_capacity(devices.len());
    let mut verdict = vec![StoreVerdict::TooOld; rows.len()];
    {
        let mut q =
            tx.prepare_cached("SELECT top FROM readings_top WHERE key_id = ?1 AND device = ?2").map_err(fatal)?;
        for &d in devices {
            if let Some(t) =
                q.query_row(rusqlite::params![key_id, d], |r| r.get::<_, i64>(0)).map(Some).or_else(|e| match e {
                    rusqlite::Error::QueryReturnedNoRows => Ok(None),
                    e => Err(fatal(e)),
                })?
            {
                tops.insert(d, t);
            }
        }
        let (cand, new_tops) = judge(window, rows, order, &tops).map_err(Retry::Fatal)?;
        let mut ins = tx
            .prepare_cached(
                "INSERT OR IGNORE INTO readings (key_id, run, device, counter, cipher, payload)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )
            .map_err(fatal)?;
        for &i in order.iter().filter(|&&i| cand[i]) {
            let r = &rows[i];
            let (d, c, ci) = (r.device as i64, r.counter as i64, r.cipher as i64);
            let n = ins.execute(rusqlite::params![key_id, run, d, c, ci, r.payload]).map_err(fatal)?;
            verdict[i] = if n == 1 { StoreVerdict::Stored } else { StoreVerdict::Replay };
        }
        let mut up = tx
            .prepare_cached("UPDATE readings_top SET top = max(top, ?3) WHERE key_id = ?1 AND device = ?2")
            .map_err(fatal)?;
        for (d, t) in new_tops {
            if tops.get(&d) != Some(&t) {
                up.execute(rusqlite::params![key_id, d, t]).map_err(fatal)?;
            }
        }
    }
    tx.commit().map_err(fatal)?;
    Ok(verdict)
}

/// One worker's whole check: the gateway's structure/device/cipher/local-window/tag checks,
/// then the store's verdict. Refusals found at the store are moved in the tally from
/// `accepted` to `replay` / `too_old`.
pub struct Checker {
    pub gateway: Gateway,
    pub state: SharedState,
    /// When the last batch's gateway checks ended and its store transaction began.
    pub last_opened_ns: u64,
}

/// The outcome of one frame in a batch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Checked {
    Stored(Opened),
    Refused(Refusal),
}

impl Checker {
    pub fn new(gateway: Gateway, state: SharedState) -> Checker {
        Checker { gateway, state, last_opened_ns: 0 }
    }

    /// Check, open and store a batch of frames; one outcome per frame, in order. `Err` means
    /// the store failed: nothing of the batch is stored and nothing may be acknowledged.
    pub fn process(&mut self, frames: &[&[u8]]) -> Result<Vec<Checked>, String> {
        let mut out: Vec<Option<Checked>> = vec![None; frames.len()];
        let mut idx = Vec::new();
        let mut rows = Vec::new();
        // one by one, or together on the bit-sliced DRACO (same verdicts: Gateway::open_many)
        for (i, r) in self.gateway.open_many(frames).into_iter().enumerate() {
            match r {
                Ok(o) => {
                    idx.push((i, o.clone()));
                    rows.push(Row { device: o.device, counter: o.counter, cipher: o.cipher, payload: o.reading });
                }
                Err(r) => out[i] = Some(Checked::Refused(r)),
            }
        }
        self.last_opened_ns = now_ns();
        let verdicts = self.state.commit(&rows)?;
        for ((i, o), v) in idx.into_iter().zip(verdicts) {
            out[i] = Some(match v {
                StoreVerdict::Stored => Checked::Stored(o),
                StoreVerdict::Replay | StoreVerdict::TooOld => {
                    let r = if v == StoreVerdict::Replay { Refusal::Replay } else { Refusal::TooOld };
                    self.gateway.tally.accepted -= 1;
                    self.gateway.tally.refused[r as usize] += 1;
                    Checked::Refused(r)
                }
            });
        }
        Ok(out.into_iter().map(|x| x.expect("every frame has an outcome")).collect())
    }
}

/// The shared subscription filter of a session's gateway workers.
pub fn shared_filter(session: &str) -> String {
    format!("$share/lwcbench-gw-{session}/lwcbench/link/{session}/+")
}

/// K running gateway workers.
pub struct WorkerPool {
    processed: Arc<AtomicU64>,
    /// Rows stored and frames refused so far, over all workers.
    live: Arc<crate::gateway::single::LiveCounts>,
    /// Why a member's connection ended for good (another process took its session over).
    ended: Arc<std::sync::Mutex<Option<String>>>,
    stop: Arc<AtomicBool>,
    /// Set by a worker that stops on an error (its store failed).
    failed: Arc<AtomicBool>,
    workers: Vec<Worker>,
    store: Option<Box<dyn crate::store::Store>>,
}

struct Worker {
    client: AsyncClient,
    task: tokio::task::JoinHandle<()>,
    ack_task: tokio::task::JoinHandle<()>,
    join: std::thread::JoinHandle<WorkerResult>,
}

struct WorkerResult {
    tally: crate::gateway::checks::Tally,
    samples: Vec<GwSample>,
    new_rows: u64,
    cpu_ns: u64,
    error: Option<String>,
}

/// The broker's DISCONNECT "Session taken over" (MQTT v5 reason 0x8E).
fn taken_over(e: &rumqttc::v5::ConnectionError) -> bool {
    use rumqttc::v5::mqttbytes::v5::DisconnectReasonCode;
    matches!(
        e,
        rumqttc::v5::ConnectionError::MqttState(rumqttc::v5::StateError::ServerDisconnect {
            reason_code: DisconnectReasonCode::SessionTakenOver,
            ..
        })
    )
}

fn v5_options(id: &str, host: &str, port: u16) -> MqttOptions {
    let mut o = MqttOptions::new(id, host, port);
    o.set_keep_alive(Duration::from_secs(30));
    // A persistent session (clean start off, expiry > 0): a worker that reconnects with its id
    // gets back what the broker queued for it.
    o.set_clean_start(false);
    o.set_session_expiry_interval(Some(600));
    // Anything the broker can deliver is read (and refused as `malformed` above MAX_FRAME): a
    // limit here would make a compliant broker drop oversized messages for this client uncounted.
    o.set_max_packet_size(Some(MQTT_MAX_PACKET as u32));
    o.set_receive_maximum(Some(4096));
    o.set_manual_acks(true);
    o
}

impl WorkerPool {
    /// Start `k` workers on `spec` (MQTT only; `store_spec` as `--store`). Each subscribes to
    /// [`shared_filter`] over MQTT v5; the call returns after every worker's SUBACK. A worker
    /// acknowledges through an acker task as the single gateway does (see
    /// [`crate::gateway::single::GatewayHandle::start`]): the receive maximum (4096) bounds what a broker
    /// that honours it sends unacknowledged, but nothing waits in a circle either way.
    pub fn start(
        spec: GatewaySpec,
        store_spec: &str,
        k: usize,
        master: &MasterKey,
        rt: &tokio::runtime::Handle,
    ) -> Result<WorkerPool, String> {
        Self::start_queued(spec, store_spec, k, master, rt, QUEUE, None)
    }

    /// One worker as one member of the shared subscription group `member.group`, with its
    /// client id from `member` (`lwcbench link gateway --shared`, [`crate::gateway::shared`]).
    pub fn start_member(
        spec: GatewaySpec,
        store_spec: &str,
        member: &crate::gateway::shared::Member,
        master: &MasterKey,
        rt: &tokio::runtime::Handle,
    ) -> Result<WorkerPool, String> {
        Self::start_queued(spec, store_spec, 1, master, rt, QUEUE, Some(member))
    }

    /// [`WorkerPool::start`] (or, with `member`, [`WorkerPool::start_member`]) with `queue` in
    /// place of [`QUEUE`] for each worker's channel and MQTT request channel (tests make them
    /// tiny to provoke full queues).
    #[doc(hidden)]
    pub fn start_queued(
        spec: GatewaySpec,
        store_spec: &str,
        k: usize,
        master: &MasterKey,
        rt: &tokio::runtime::Handle,
        queue: usize,
        member: Option<&crate::gateway::shared::Member>,
    ) -> Result<WorkerPool, String> {
        if !(1..=MAX_WORKERS).contains(&k) {
            return Err(format!("--workers: {k} is not in 1..={MAX_WORKERS}"));
        }
        let b: BrokerAddr = match &spec.transport {
            Transport::Mqtt(b) => b.clone(),
            Transport::Udp => return Err("--workers above 1 needs --transport mqtt (a shared subscription)".into()),
        };
        let port = if b.embedded { crate::transport::broker::embedded_v5_port()? } else { b.port };
        let processed = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let filter = member.map_or_else(|| shared_filter(&spec.session), |m| m.filter(&spec.session));
        let opt = if member.is_some() { "--shared" } else { "--workers" };
        let failed = Arc::new(AtomicBool::new(false));
        let live = Arc::new(crate::gateway::single::LiveCounts::default());
        let ended = Arc::new(std::sync::Mutex::new(None));
        let mut pool = WorkerPool {
            processed: processed.clone(),
            live: live.clone(),
            ended: ended.clone(),
            stop,
            failed: failed.clone(),
            workers: Vec::new(),
            store: Some(spec.store),
        };
        for i in 0..k {
            let gw =
                Gateway::new(&spec.suite, master, spec.devices.iter().copied(), spec.window, spec.unauthenticated)?;
            let state =
                SharedState::open(store_spec, &spec.session, &master.fingerprint(), spec.window, &spec.devices)?;
            let queue = queue.max(1);
            let (tx, rx) = mpsc::channel::<Incoming<Publish>>(queue);
            let id =
                member.map_or_else(|| format!("lwcbench-gw-{}-w{i}", spec.session), |m| m.client_id(&spec.session));
            let (client, mut ev) = AsyncClient::new(v5_options(&id, &b.host, port), queue);
            let (ready_tx, ready_rx) = std::sync::mpsc::channel::<Ready>();
            let (sub_client, f, broker) = (client.clone(), filter.clone(), b.describe());
            let no_shared = format!(
                "{opt}: {broker} does not offer shared subscriptions; use a broker that does (mosquitto 1.6 or later)"
            );
            let (ended2, failed3) = (ended.clone(), failed.clone());
            let t0 = std::time::Instant::now();
            let task = rt.spawn(async move {
                let mut ready = Some(ready_tx);
                let mut takeover = crate::gateway::shared::TakeoverLoop::default();
                let taken = format!(
                    "{opt}: the broker keeps closing the connection of {id} right after accepting it: another \
                     gateway process uses this client id (give every member its own --member)"
                );
                loop {
                    match ev.poll().await {
                        Ok(Event::Incoming(Packet::ConnAck(c))) => {
                            takeover.connected(std::time::Instant::now());
                            // MQTT v5 §3.2.2.3.13: 0 = the server does not support them.
                            if c.properties.as_ref().and_then(|p| p.shared_subscription_available) == Some(0) {
                                if let Some(r) = ready.take() {
                                    let _ = r.send(Ready::Failed(no_shared));
                                }
                                return;
                            }
                            if let Some(r) = &ready {
                                let _ = r.send(Ready::Connected);
                            }
                            let (c, f) = (sub_client.clone(), f.clone());
                            tokio::spawn(async move {
                                let _ = c.subscribe(f, QoS::AtLeastOnce).await;
                            });
                        }
                        Ok(Event::Incoming(Packet::SubAck(s))) => {
                            use rumqttc::v5::mqttbytes::v5::SubscribeReasonCode as Code;
                            let ok = s.return_codes.iter().all(|c| matches!(c, Code::Success(_)));
                            let unsupported =
                                s.return_codes.iter().any(|c| matches!(c, Code::SharedSubscriptionsNotSupported));
                            if let Some(r) = ready.take() {
                                let _ = r.send(if ok {
                                    Ready::Subscribed
                                } else if unsupported {
                                    Ready::Failed(no_shared.clone())
                                } else {
                                    Ready::Failed(format!("{opt}: {broker} refused the shared subscription: {s:?}"))
                                });
                            }
                        }
                        Ok(Event::Incoming(Packet::Publish(p))) => {
                            // Waits only for the worker thread, which runs from before the CONNACK.
                            let inc = Incoming { frame: received_frame(&p.payload), recv: now_ns(), ack: p };
                            if tx.send(inc).await.is_err() {
                                return;
                            }
                        }
                        Ok(_) => {}
                        // Another process connected with this client id (a broker that says so, or
                        // one that keeps closing the connection right after accepting it): two
                        // members with one name would take the session from each other for ever.
                        Err(e) if taken_over(&e) || takeover.dropped(std::time::Instant::now()) => {
                            *ended2.lock().unwrap_or_else(|p| p.into_inner()) = Some(taken);
                            failed3.store(true, Ordering::Release);
                            return;
                        }
                        Err(e) => {
                            if let Some(r) = ready.take() {
                                if still_connecting(t0) {
                                    ready = Some(r); // a first refusal may be the broker still starting
                                } else {
                                    let _ = r
                                        .send(Ready::Failed(format!("--broker: cannot reach {broker} (MQTT v5): {e}")));
                                    return;
                                }
                            }
                            tokio::time::sleep(Duration::from_millis(100)).await;
                        }
                    }
                }
            });
            let c = client.clone();
            let (acker, ack_task) = spawn_acker(rt, move |p: Publish| {
                let c = c.clone();
                async move { c.ack(&p).await.is_ok() }
            });
            let (processed2, failed2, live2) = (processed.clone(), failed.clone(), live.clone());
            let (batch, max_samples) = (spec.batch.max(1), spec.max_samples / k);
            let join = std::thread::Builder::new()
                .name(format!("link-gw-w{i}"))
                .spawn(move || {
                    let chk = Checker::new(gw, state);
                    worker_loop(chk, rx, acker, (processed2, live2), failed2, batch, max_samples)
                })
                .map_err(|e| e.to_string())?;
            pool.workers.push(Worker { client, task, ack_task, join });
            let no_answer = format!("--broker: no MQTT v5 answer from {} within 5 s", b.describe());
            if let Err(e) = wait_ready(&ready_rx, &processed, &failed, &no_answer) {
                let (res, _) = pool.stop(rt);
                return Err(e.or(res.error).unwrap_or(no_answer));
            }
        }
        Ok(pool)
    }

    /// Frames checked so far by all workers.
    pub fn processed(&self) -> u64 {
        self.processed.load(Ordering::Acquire)
    }

    /// Has a worker stopped on an error? [`WorkerPool::stop`] returns it.
    pub fn failed(&self) -> bool {
        self.failed.load(Ordering::Acquire)
    }

    /// (rows stored, 0, frames refused) so far: copies are refusals here (`replay`).
    pub fn live(&self) -> (u64, u64, u64) {
        (self.live.stored.load(Ordering::Acquire), 0, self.live.refused.load(Ordering::Acquire))
    }

    /// Stop every worker and merge their results; also the frames each worker checked.
    pub fn stop(mut self, rt: &tokio::runtime::Handle) -> (GwResult, Vec<u64>) {
        self.stop.store(true, Ordering::Relaxed);
        let mut res = GwResult {
            tally: Default::default(),
            samples: Vec::new(),
            new_rows: 0,
            duplicates: 0,
            cpu_ns: 0,
            store: self.store.take().expect("store kept until stop"),
            error: None,
        };
        let mut per_worker = Vec::new();
        for w in self.workers.drain(..) {
            w.task.abort();
            let _ = rt.block_on(async { tokio::time::timeout(Duration::from_secs(1), w.client.disconnect()).await });
            drop(w.client);
            let r = w.join.join().unwrap_or_else(|_| WorkerResult {
                tally: Default::default(),
                samples: Vec::new(),
                new_rows: 0,
                cpu_ns: 0,
                error: Some("a gateway worker panicked".into()),
            });
            w.ack_task.abort();
            res.tally.accepted += r.tally.accepted;
            for (a, b) in res.tally.refused.iter_mut().zip(r.tally.refused) {
                *a += b;
            }
            per_worker.push(r.tally.accepted + r.tally.refused_total());
            res.samples.extend(r.samples);
            res.new_rows += r.new_rows;
            res.cpu_ns += r.cpu_ns;
            if res.error.is_none() {
                res.error = r.error;
            }
        }
        if res.error.is_none() {
            res.error = self.ended.lock().unwrap_or_else(|p| p.into_inner()).take();
        }
        (res, per_worker)
    }
}

fn worker_loop(
    mut chk: Checker,
    mut rx: mpsc::Receiver<Incoming<Publish>>,
    acker: mpsc::UnboundedSender<Publish>,
    (processed, live): (Arc<AtomicU64>, Arc<crate::gateway::single::LiveCounts>),
    failed: Arc<AtomicBool>,
    batch_max: usize,
    max_samples: usize,
) -> WorkerResult {
    let cpu0 = thread_cpu_ns();
    let mut samples = Vec::new();
    let mut new_rows = 0u64;
    let mut error = None;
    let mut batch: Vec<Incoming<Publish>> = Vec::with_capacity(batch_max);
    while next_batch(&mut rx, &mut batch, batch_max) {
        let start = now_ns();
        let frames: Vec<&[u8]> = batch.iter().map(|b| b.frame.as_slice()).collect();
        let out = match chk.process(&frames) {
            Ok(o) => o,
            Err(e) => {
                // Nothing of this batch is acknowledged: the broker will deliver it again. The
                // owner sees `failed` and ends the run with the error.
                error = Some(e);
                failed.store(true, Ordering::Release);
                break;
            }
        };
        let t = now_ns();
        for (inc, o) in batch.iter().zip(&out) {
            if let Checked::Stored(o) = o {
                new_rows += 1;
                if samples.len() < max_samples {
                    // Per batch here: checks of the whole batch, then its one transaction.
                    samples.push(GwSample {
                        device: o.device,
                        counter: o.counter,
                        recv: inc.recv,
                        start,
                        opened: chk.last_opened_ns,
                        committed: t,
                    });
                }
            }
        }
        // Acknowledge after the commit (refused frames too: they must not come back), without
        // waiting: the acker task waits for the client (issue 19).
        for inc in batch.drain(..) {
            let _ = acker.send(inc.ack);
        }
        let stored = out.iter().filter(|o| matches!(o, Checked::Stored(_))).count() as u64;
        live.stored.fetch_add(stored, Ordering::Release);
        live.refused.fetch_add(out.len() as u64 - stored, Ordering::Release);
        processed.fetch_add(out.len() as u64, Ordering::Release);
    }
    WorkerResult { tally: chk.gateway.tally.clone(), samples, new_rows, cpu_ns: thread_cpu_ns() - cpu0, error }
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
    fn judge_follows_the_window_rule() {
        // W = 4, stored top 10: 6 is too old (10 − 6 = 4 ≥ W), 7 is inside, 11 moves top.
        let rows = vec![row(1, 6), row(1, 7), row(1, 11), row(2, 0)];
        let order: Vec<usize> = (0..rows.len()).collect();
        let tops = HashMap::from([(1i64, 10i64), (2, -1)]);
        let (cand, new) = judge(4, &rows, &order, &tops).unwrap();
        assert_eq!(cand, vec![false, true, true, true]);
        assert_eq!(new[&1], 11);
        assert_eq!(new[&2], 0);
        // Within one batch a higher counter makes a lower one too old: 20 then 15 with W = 4.
        let rows = vec![row(1, 15), row(1, 20)];
        let (cand, _) = judge(4, &rows, &[0, 1], &tops).unwrap();
        assert_eq!(cand, vec![true, true], "15 judged before 20 (counter order)");
        assert!(judge(4, &[row(9, 1)], &[0], &tops).is_err(), "unprovisioned device");
    }

    #[test]
    fn sqlite_state_is_shared_between_connections() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("s.db").display().to_string();
        let mut a = SharedState::open(&p, "r", K, 4, &[1]).unwrap();
        let mut b = SharedState::open(&p, "r", K, 4, &[1]).unwrap();
        use StoreVerdict::*;
        assert_eq!(a.commit(&[row(1, 5), row(1, 3)]).unwrap(), vec![Stored, Stored]);
        // The same counters through the other connection: replays, not stored again.
        assert_eq!(b.commit(&[row(1, 5)]).unwrap(), vec![Replay]);
        // 4 is inside the window (5 − 4 < 4) and new; 1 is too old (5 − 1 ≥ 4).
        assert_eq!(b.commit(&[row(1, 4), row(1, 1)]).unwrap(), vec![Stored, TooOld]);
        assert_eq!(a.commit(&[row(1, 9)]).unwrap(), vec![Stored]);
        assert_eq!(b.commit(&[row(1, 5), row(1, 6)]).unwrap(), vec![TooOld, Stored]);
        let mut s = crate::store::Sqlite::open(std::path::Path::new(&p), "r", K).unwrap();
        let got: Vec<u64> = s.all().unwrap().iter().map(|r| r.counter).collect();
        assert_eq!(got, vec![3, 4, 5, 6, 9]);
        // A new connection starts from what is stored.
        let mut c = SharedState::open(&p, "r", K, 4, &[1]).unwrap();
        assert_eq!(c.commit(&[row(1, 5), row(1, 8)]).unwrap(), vec![TooOld, Stored]);
        // A later session under the same key starts from the key's state: counter 8 replayed
        // into it is a replay, 4 is too old; under another key both are new.
        let mut later = SharedState::open(&p, "r2", K, 4, &[1]).unwrap();
        assert_eq!(later.commit(&[row(1, 8), row(1, 4)]).unwrap(), vec![Replay, TooOld]);
        let mut other = SharedState::open(&p, "r3", "4522d92be3296147132c72dd4fb8d592", 4, &[1]).unwrap();
        assert_eq!(other.commit(&[row(1, 8), row(1, 4)]).unwrap(), vec![Stored, Stored]);
    }
}
