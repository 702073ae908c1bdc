//! The whole link path against real services the test starts on loopback: Debian's mosquitto
//! (external MQTT broker) and Debian's PostgreSQL server (the store). `scripts/setup.sh --test`
//! installs both; a test skips with a message only if the server binary is truly absent. The
//! services are started by the link crate's test support (one copy of that code).
use std::path::Path;
use std::process::Command;

#[path = "../../link/tests/support/mod.rs"]
mod support;

fn link_ok(args: &[&str], cwd: &Path) -> std::collections::HashMap<String, String> {
    let o = Command::new(env!("CARGO_BIN_EXE_lwcbench")).arg("link").args(args).current_dir(cwd).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut r = csv::Reader::from_path(cwd.join("out/link_summary.csv")).unwrap();
    let h = r.headers().unwrap().clone();
    let rec = r.records().next().unwrap().unwrap();
    h.iter().zip(rec.iter()).map(|(a, b)| (a.to_string(), b.to_string())).collect()
}

#[test]
fn whole_path_through_mosquitto() {
    let Some(svc) = support::mosquitto() else { return };
    let d = tempfile::tempdir().unwrap();
    let port = svc.port;
    let url = format!("mqtt://127.0.0.1:{port}");
    let r = link_ok(
        &["-o", "out", "--broker", &url, "--messages", "50", "--interval", "1ms", "--cipher", "DRACO"],
        d.path(),
    );
    assert_eq!((r["sent"].as_str(), r["stored"].as_str(), r["missing"].as_str()), ("400", "400", "0"));
    assert_eq!(r["mismatched"], "0");
    assert!(r["transport"].contains(&url), "{}", r["transport"]);
}

#[test]
fn whole_path_into_postgresql() {
    let Some((_svc, url)) = support::postgres() else { return };
    let out_dir = tempfile::tempdir().unwrap();
    let r = link_ok(&["-o", "out", "--store", &url, "--messages", "50", "--interval", "1ms"], out_dir.path());
    assert_eq!((r["sent"].as_str(), r["stored"].as_str(), r["missing"].as_str()), ("400", "400", "0"));
    assert_eq!(r["mismatched"], "0", "rows read back from PostgreSQL equal what the devices sent");
    assert!(r["store"].contains("lwcbench_link_readings"), "{}", r["store"]);
    // An unreachable PostgreSQL is one error line.
    let o = Command::new(env!("CARGO_BIN_EXE_lwcbench"))
        .args(["link", "-o", "o2", "--store", &format!("postgres://postgres@127.0.0.1:{}/x", support::free_port())])
        .current_dir(out_dir.path())
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.lines().filter(|l| l.starts_with("error:")).count() == 1 && err.contains("--store"), "{err}");
}
