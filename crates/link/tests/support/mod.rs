//! Real services on loopback for the link's integration tests: Debian's mosquitto and
//! PostgreSQL, started and stopped by the test. Also compiled into crates/cli/tests/link_services.rs
//! (by `#[path]`), so there is one copy of this code.
//! A test skips with a message only if the server binary is truly absent
//! (`scripts/setup.sh --test` installs both), and fails instead under
//! `LWCBENCH_REQUIRE_SERVICES=1` (tests/support/required.rs).
#![allow(dead_code)]
#[path = "../../../../tests/support/required.rs"]
pub mod required;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A service process, killed when dropped; keeps its temporary directory alive.
pub struct Service {
    child: Child,
    pub port: u16,
    _dir: tempfile::TempDir,
}

impl Drop for Service {
    fn drop(&mut self) {
        stop(&mut self.child);
    }
}

impl Service {
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn wait_port(port: u16, child: &mut Child, what: &str) {
    let t0 = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        if let Ok(Some(st)) = child.try_wait() {
            panic!("{what} exited: {st}");
        }
        assert!(t0.elapsed() < Duration::from_secs(30), "{what} did not listen on {port}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The mosquitto binary: `LWCBENCH_MOSQUITTO` if set (a test sets it to a missing path to see
/// the skip rule at work), else Debian's.
pub fn mosquitto_bin() -> Option<PathBuf> {
    match std::env::var_os("LWCBENCH_MOSQUITTO") {
        Some(p) => Some(PathBuf::from(p)).filter(|p| p.is_file()),
        None => ["/usr/sbin/mosquitto", "/usr/bin/mosquitto"].iter().map(PathBuf::from).find(|p| p.is_file()),
    }
}

/// mosquitto on 127.0.0.1 and a free port (no persistence, anonymous, no queue limit, at most
/// 1000 QoS 1 messages in flight per client).
pub fn mosquitto() -> Option<Service> {
    let bin = mosquitto_bin();
    let Some(bin) = bin else {
        required::missing("mosquitto not installed (scripts/setup.sh --test installs it)");
        return None;
    };
    let d = tempfile::tempdir().unwrap();
    let port = free_port();
    let conf = d.path().join("m.conf");
    std::fs::write(
        &conf,
        format!(
            "listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\nmax_inflight_messages 1000\n\
             max_queued_messages 0\n"
        ),
    )
    .unwrap();
    let mut child = Command::new(bin).arg("-c").arg(&conf).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    wait_port(port, &mut child, "mosquitto");
    Some(Service { child, port, _dir: d })
}

fn pg_bin(name: &str) -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> =
        std::fs::read_dir("/usr/lib/postgresql").ok()?.filter_map(|e| e.ok()).map(|e| e.path().join("bin")).collect();
    dirs.sort();
    dirs.into_iter().rev().map(|d| d.join(name)).find(|p| p.is_file())
}

fn is_root() -> bool {
    // SAFETY: getuid has no preconditions.
    unsafe { libc::getuid() == 0 }
}

/// A fresh PostgreSQL cluster on 127.0.0.1 and a free port (trust auth); returns the service
/// and its URL.
pub fn postgres() -> Option<(Service, String)> {
    let (Some(initdb), Some(postgres)) = (pg_bin("initdb"), pg_bin("postgres")) else {
        required::missing("PostgreSQL server not installed (scripts/setup.sh --test installs postgresql)");
        return None;
    };
    let d = tempfile::tempdir().unwrap();
    let data = d.path().join("pg");
    // initdb and postgres refuse to run as root: run them as the postgres user then.
    let root = is_root();
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
    let url = format!("postgres://postgres@127.0.0.1:{port}/postgres");
    // The port answers a moment before the server accepts sessions.
    let t0 = Instant::now();
    while postgres::Client::connect(&url, postgres::NoTls).is_err() {
        assert!(t0.elapsed() < Duration::from_secs(30), "postgres does not accept sessions");
        std::thread::sleep(Duration::from_millis(100));
    }
    Some((Service { child, port, _dir: d }, url))
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
