//! The whole link path against real services the test starts on loopback: Debian's mosquitto
//! (external MQTT broker) and Debian's PostgreSQL server (the store). `scripts/setup.sh --test`
//! installs both; a test skips with a message only if the server binary is truly absent.
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

struct Service(Child);
impl Drop for Service {
    fn drop(&mut self) {
        stop(&mut self.0);
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn wait_port(port: u16, child: &mut Child, what: &str) {
    let t0 = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        if let Ok(Some(st)) = child.try_wait() {
            panic!("{what} exited: {st}");
        }
        assert!(t0.elapsed() < Duration::from_secs(20), "{what} did not listen on {port}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn find(candidates: &[&str]) -> Option<PathBuf> {
    for c in candidates {
        let p = PathBuf::from(c);
        if p.is_file() {
            return Some(p);
        }
    }
    None
}

fn pg_bin(name: &str) -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> =
        std::fs::read_dir("/usr/lib/postgresql").ok()?.filter_map(|e| e.ok()).map(|e| e.path().join("bin")).collect();
    dirs.sort();
    dirs.into_iter().rev().map(|d| d.join(name)).find(|p| p.is_file())
}

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
    let Some(bin) = find(&["/usr/sbin/mosquitto", "/usr/bin/mosquitto"]) else {
        eprintln!("SKIP: mosquitto not installed (scripts/setup.sh --test installs it)");
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let port = free_port();
    let conf = d.path().join("m.conf");
    std::fs::write(&conf, format!("listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\n")).unwrap();
    let mut child = Command::new(bin).arg("-c").arg(&conf).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    wait_port(port, &mut child, "mosquitto");
    let _svc = Service(child);
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
    let (Some(initdb), Some(postgres)) = (pg_bin("initdb"), pg_bin("postgres")) else {
        eprintln!("SKIP: PostgreSQL server not installed (scripts/setup.sh --test installs postgresql)");
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let data = d.path().join("pg");
    // initdb and postgres refuse to run as root: run them as the postgres user then.
    let root = unsafe_is_root();
    let as_pg = |cmd: &Path| {
        // Switch user in the child itself (no `runuser` in between): the pid the test holds
        // is then the server's own, so stopping it stops PostgreSQL (killing a `runuser`
        // wrapper left the server running on its port after the test).
        let mut c = Command::new(cmd);
        if root {
            use std::os::unix::process::CommandExt;
            c.uid(postgres_id("-u")).gid(postgres_id("-g"));
        }
        c.stdout(Stdio::null()).stderr(Stdio::piped());
        c
    };
    if root {
        std::fs::create_dir(&data).unwrap();
        let ok = Command::new("chown").args(["-R", "postgres:postgres"]).arg(d.path()).status().unwrap();
        assert!(ok.success(), "chown to postgres failed");
    }
    let o = as_pg(&initdb).args(["-U", "postgres", "--auth=trust", "-E", "UTF8", "-D"]).arg(&data).output().unwrap();
    assert!(o.status.success(), "initdb: {}", String::from_utf8_lossy(&o.stderr));
    let port = free_port();
    let mut child = as_pg(&postgres)
        .arg("-D")
        .arg(&data)
        .args(["-p", &port.to_string(), "-c", "listen_addresses=127.0.0.1", "-k"])
        .arg(d.path())
        .spawn()
        .unwrap();
    wait_port(port, &mut child, "postgres");
    let _svc = Service(child);
    let url = format!("postgres://postgres@127.0.0.1:{port}/postgres");
    let out_dir = tempfile::tempdir().unwrap();
    let r = link_ok(&["-o", "out", "--store", &url, "--messages", "50", "--interval", "1ms"], out_dir.path());
    assert_eq!((r["sent"].as_str(), r["stored"].as_str(), r["missing"].as_str()), ("400", "400", "0"));
    assert_eq!(r["mismatched"], "0", "rows read back from PostgreSQL equal what the devices sent");
    assert!(r["store"].contains("lwcbench_link_readings"), "{}", r["store"]);
    // An unreachable PostgreSQL is one error line.
    let o = Command::new(env!("CARGO_BIN_EXE_lwcbench"))
        .args(["link", "-o", "o2", "--store", &format!("postgres://postgres@127.0.0.1:{}/x", free_port())])
        .current_dir(out_dir.path())
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.lines().filter(|l| l.starts_with("error:")).count() == 1 && err.contains("--store"), "{err}");
}

fn unsafe_is_root() -> bool {
    // SAFETY: getuid has no preconditions.
    unsafe { libc_getuid() == 0 }
}

extern "C" {
    #[link_name = "getuid"]
    fn libc_getuid() -> u32;
}

/// The postgres account's uid (`-u`) or gid (`-g`), from `id`.
fn postgres_id(which: &str) -> u32 {
    let o = Command::new("id").args([which, "postgres"]).output().expect("id runs");
    assert!(o.status.success(), "no postgres account: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).trim().parse().expect("numeric id")
}

/// Stop a server: SIGINT first (PostgreSQL's fast shutdown, mosquitto's exit), SIGKILL after 10 s.
fn stop(child: &mut Child) {
    let _ = Command::new("kill").args(["-INT", &child.id().to_string()]).status();
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(10) {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
}
