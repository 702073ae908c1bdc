//! The whole link path against real services the test starts on loopback: Debian's mosquitto
//! (external MQTT broker) and Debian's PostgreSQL server (the store). `scripts/setup.sh --test`
//! installs both; a test skips with a message only if the server binary is truly absent. The
//! services are started by the link crate's test support (one copy of that code).
use std::path::Path;
use std::process::Command;

use super::support;

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
        &[
            "-o",
            "out",
            "--broker",
            &url,
            "--messages",
            "50",
            "--interval",
            "1ms",
            "--cipher",
            "DRACO",
            "--allow-provisional",
        ],
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

/// Every file of a run directory (state/ included) as text, for a search.
fn all_text(dir: &Path) -> String {
    let mut t = String::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            t += &all_text(&p);
        } else {
            t += &String::from_utf8_lossy(&std::fs::read(&p).unwrap());
        }
    }
    t
}

#[test]
fn postgres_passwords_are_redacted_and_errors_carry_the_servers_message() {
    let Some((svc, _url)) = support::postgres() else { return };
    let port = svc.port;
    // Trust authentication: the server ignores the password, so the run goes through and
    // writes every file; none may hold it.
    for url in [
        format!("postgres://postgres:hunter2@127.0.0.1:{port}/postgres"),
        format!("postgres://127.0.0.1:{port}/postgres?user=postgres&password=hunter2"),
        // libpq's key=value form is PostgreSQL too, never a file of that name
        format!("host=127.0.0.1 port={port} user=postgres password=hunter2 dbname=postgres"),
    ] {
        let d = tempfile::tempdir().unwrap();
        let o = Command::new(env!("CARGO_BIN_EXE_lwcbench"))
            .args(["link", "-o", "out", "--store", &url, "--messages", "5", "--interval", "1ms"])
            .current_dir(d.path())
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let out = d.path().join("out");
        for f in ["summary.md", "run.json", "link_summary.csv", "report.html"] {
            assert!(out.join(f).is_file(), "{f}");
        }
        let text = all_text(&out) + &String::from_utf8_lossy(&o.stderr) + &String::from_utf8_lossy(&o.stdout);
        assert!(!text.contains("hunter2"), "{url}: the password is in the output");
        assert!(text.contains("password=***") || text.contains("postgres:***@"), "{url}: no redacted URL shown");
        let names: Vec<_> = std::fs::read_dir(d.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, ["out"], "{url}: a file beside the run");
        let mut r = csv::Reader::from_path(out.join("link_summary.csv")).unwrap();
        let col = r.headers().unwrap().iter().position(|h| h == "store").unwrap();
        let store = r.records().next().unwrap().unwrap()[col].to_string();
        assert!(store.contains("lwcbench_link_readings"), "{url}: stored in {store}");
    }
    let fail = |url: &str| {
        let d = tempfile::tempdir().unwrap();
        let o = Command::new(env!("CARGO_BIN_EXE_lwcbench"))
            .args(["link", "-o", "out", "--store", url, "--messages", "5"])
            .current_dir(d.path())
            .output()
            .unwrap();
        assert!(!o.status.success());
        let err = String::from_utf8_lossy(&o.stderr).to_string();
        let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
        assert_eq!(lines.len(), 1, "{err}");
        lines[0].to_string()
    };
    // The server says which database or role is missing (not only "db error").
    let e = fail(&format!("postgres://postgres:hunter2@127.0.0.1:{port}/nosuchdb"));
    assert!(e.contains("database \"nosuchdb\" does not exist") && !e.contains("hunter2"), "{e}");
    let e = fail(&format!("postgres://nosuchrole@127.0.0.1:{port}/postgres?password=hunter2"));
    assert!(e.contains("role \"nosuchrole\" does not exist") && !e.contains("hunter2"), "{e}");
    // A password holding '@' is hidden whole.
    let e = fail(&format!("postgres://nosuchrole:p@ss@127.0.0.1:{port}/postgres"));
    assert!(!e.contains("p@ss") && !e.contains("ss@127"), "{e}");
}
