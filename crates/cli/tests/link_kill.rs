//! The kill test: a device process is SIGKILLed mid-run and restarted. From a capture of every
//! frame it sent (written before each send) we prove that no (key, counter) pair was used twice
//! and that every reading sent after the restart is stored exactly once.
use std::collections::HashSet;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use lwcbench_link::gateway::single::GatewayHandle;
use lwcbench_link::gateway::GatewaySpec;
use lwcbench_link::transport::Transport;
use lwcbench_link::wire::frame::Header;

fn captured(p: &Path) -> Vec<Header> {
    // A SIGKILL may cut the last line short: such a frame was never sent (capture comes first).
    let text = std::fs::read_to_string(p).unwrap_or_default();
    text.lines()
        .filter_map(|l| hex::decode(l).ok())
        .filter(|f| f.len() == 16 + 16 + 16)
        .map(|f| Header::parse(&f).unwrap())
        .collect()
}

fn device(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_lwcbench"));
    c.arg("link").arg("device").args(args).stdout(Stdio::null()).stderr(Stdio::piped());
    c
}

#[test]
fn sigkill_and_restart_never_reuse_a_counter_and_lose_nothing_after_restart() {
    let d = tempfile::tempdir().unwrap();
    let key = d.path().join("master.key");
    // The gateway's master with its counter state; the device gets its own key and state.
    let (master, _) =
        lwcbench_link::device::counter::open_session(&key, &lwcbench_link::device::counter::beside_key(&key), 64)
            .unwrap();
    let dev_key = d.path().join("device7.key");
    lwcbench_link::device::provision::provision(&key, lwcbench_link::wire::frame::Family::Sensor, 7, None, &dev_key)
        .unwrap();
    let broker = lwcbench_link::transport::broker::embedded().unwrap();
    let url = format!("mqtt://127.0.0.1:{}", broker.port);
    let suite = lwcbench_link::wire::suite::find("Ascon-AEAD128").unwrap();
    let session = lwcbench_link::session::new_session();
    let db = d.path().join("kill.db");
    let rt = lwcbench_link::transport::runtime().unwrap();
    let gw = GatewayHandle::start(
        GatewaySpec {
            suite: suite.clone(),
            unauthenticated: false,
            devices: vec![7],
            window: 4096,
            store: Box::new(lwcbench_link::store::Sqlite::open(&db, &session, &master.fingerprint()).unwrap()),
            session: session.clone(),
            transport: Transport::Mqtt(broker),
            batch: 128,
            max_samples: 0,
            max_failed_tags: None,
            accepted: None,
        },
        &master,
        rt.handle(),
    )
    .unwrap();
    let cap = d.path().join("capture.hex");
    let common = [
        "--id",
        "7",
        "--session",
        &session,
        "--broker",
        &url,
        "--key-file",
        dev_key.to_str().unwrap(),
        "--counter-block",
        "64",
        "--capture",
        cap.to_str().unwrap(),
        "--interval",
        "0",
    ];
    // Run 1: endless; killed once it has sent a few hundred frames.
    let mut args1 = common.to_vec();
    args1.extend(["--messages", "100000000"]);
    let mut child = device(&args1).spawn().unwrap();
    let t0 = Instant::now();
    while captured(&cap).len() < 300 {
        assert!(t0.elapsed() < Duration::from_secs(30), "device did not send");
        if let Ok(Some(st)) = child.try_wait() {
            panic!("device exited early: {st}");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let before = captured(&cap);
    // Run 2: the restarted device sends 200 readings and exits once the broker acked them all.
    let mut args2 = common.to_vec();
    args2.extend(["--messages", "200"]);
    let o = device(&args2).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let all = captured(&cap);
    let after: Vec<&Header> = all[before.len()..].iter().collect();
    assert_eq!(after.len(), 200);

    // No (key, counter) pair twice: one device, one cipher, so one key — counters all distinct.
    let mut seen = HashSet::new();
    for h in &all {
        assert_eq!((h.device, h.cipher), (7, suite.id));
        assert!(seen.insert(h.counter), "counter {} used twice", h.counter);
    }
    // The restart continues after the reserved block: never below what was used before.
    let max_before = before.iter().map(|h| h.counter).max().unwrap();
    let min_after = after.iter().map(|h| h.counter).min().unwrap();
    assert!(min_after > max_before, "restart began at {min_after}, before the kill {max_before} was used");
    // provisioning started the device's counters at 1 (the master's holder reserved 0)
    assert_eq!((min_after - 1) % 64, 0, "restart starts at a block boundary");

    // Every reading sent after the restart is stored exactly once.
    let want: HashSet<u64> = after.iter().map(|h| h.counter).collect();
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.busy_timeout(Duration::from_secs(5)).unwrap();
    let t1 = Instant::now();
    loop {
        let mut st = conn.prepare("SELECT counter, COUNT(*) FROM readings WHERE device = 7 GROUP BY counter").unwrap();
        let rows: Vec<(i64, i64)> =
            st.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().map(|r| r.unwrap()).collect();
        let stored: HashSet<u64> = rows.iter().map(|r| r.0 as u64).collect();
        if want.is_subset(&stored) {
            assert!(rows.iter().all(|r| r.1 == 1), "a counter stored twice");
            // Nothing stored that was not captured as sent.
            assert!(stored.is_subset(&seen), "stored counters that the device never sent");
            break;
        }
        assert!(
            t1.elapsed() < Duration::from_secs(20),
            "{} of 200 restart readings stored",
            want.intersection(&stored).count()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let res = gw.stop(rt.handle());
    assert!(res.error.is_none(), "{:?}", res.error);
    assert_eq!(res.tally.refused_total(), 0, "{:?}", res.tally);
}
