//! `lwcbench link` options and outputs: the run directory as one unit (with the key and counter
//! state kept across `--force`), a store shared by sessions, bounded rates, control characters,
//! key files that are not regular files, session names and error texts.
use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Output};

fn lwcbench(args: &[&str], cwd: &Path, failpoint: Option<&str>) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_lwcbench"));
    c.args(args).current_dir(cwd).env_remove("LWCBENCH_FAILPOINT").env_remove("RUST_BACKTRACE");
    if let Some(f) = failpoint {
        c.env("LWCBENCH_FAILPOINT", f);
    }
    c.output().expect("binary runs")
}

fn ok(args: &[&str], cwd: &Path) -> Output {
    let o = lwcbench(args, cwd, None);
    assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    o
}

/// The one `error:` line of a failed command (panics unless it failed with exactly one).
fn one_error(args: &[&str], cwd: &Path) -> String {
    let o = lwcbench(args, cwd, None);
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(!o.status.success(), "{args:?} should fail: {err}");
    assert!(!err.contains("panicked") && !err.contains("RUST_BACKTRACE"), "{args:?}: {err}");
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(lines.len(), 1, "{args:?}: {err}");
    lines[0].to_string()
}

fn summary_row(dir: &Path) -> std::collections::HashMap<String, String> {
    let mut r = csv::Reader::from_path(dir.join("link_summary.csv")).unwrap();
    let h = r.headers().unwrap().clone();
    let rec = r.records().next().unwrap().unwrap();
    h.iter().zip(rec.iter()).map(|(a, b)| (a.to_string(), b.to_string())).collect()
}

/// Names in `dir` (top level), hidden ones included.
fn names(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect()
}

#[test]
fn a_second_session_into_the_same_store_keeps_all_its_readings() {
    // Two run directories (two fresh keys, counters from 0 in both) and one --store file: each
    // session stores its 320 readings, and the file holds 640 rows.
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("shared.db").display().to_string();
    for out in ["a", "b"] {
        ok(&["link", "-o", out, "--store", &store, "--messages", "40", "--interval", "1ms"], d.path());
        let r = summary_row(&d.path().join(out));
        assert_eq!((r["sent"].as_str(), r["stored"].as_str(), r["missing"].as_str()), ("320", "320", "0"), "{out}");
        assert_eq!(r["duplicates_ignored"], "0", "{out}");
    }
    let c = rusqlite::Connection::open(&store).unwrap();
    let n: i64 = c.query_row("SELECT COUNT(*) FROM readings", [], |r| r.get(0)).unwrap();
    assert_eq!(n, 640);
}

#[test]
fn readings_the_store_drops_fail_the_run() {
    // A store that silently ignores every insert (a trigger): the gateway sees "duplicates",
    // nothing is stored; the run must fail, not report `missing 320` and exit 0.
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("drops.db");
    let c = rusqlite::Connection::open(&store).unwrap();
    c.execute_batch(
        "CREATE TABLE readings (key_ref INTEGER NOT NULL, run TEXT NOT NULL, device INTEGER NOT NULL,
             counter INTEGER NOT NULL, cipher INTEGER NOT NULL, payload BLOB NOT NULL, UNIQUE (key_ref, device, counter));
         CREATE TRIGGER drop_all BEFORE INSERT ON readings BEGIN SELECT RAISE(IGNORE); END;",
    )
    .unwrap();
    drop(c);
    let s = store.display().to_string();
    let e = one_error(&["link", "-o", "o", "--store", &s, "--messages", "40", "--interval", "1ms"], d.path());
    assert!(e.contains("320 of 320 readings sent are not stored"), "{e}");
    assert!(!d.path().join("o").exists());
}

#[test]
fn rates_and_float_options_are_bounded() {
    let d = tempfile::tempdir().unwrap();
    // 8 devices: 1e-12 readings/s is one reading per device every 253,678 years.
    for r in ["1e-300", "1e-12", "0.00009", "NaN", "inf", "1e30"] {
        let e = one_error(&["link", "-o", "o", "--rate", r], d.path());
        assert!(e.contains("--rate:") && e.contains("24 h"), "{r}: {e}");
    }
    let e = one_error(&["link", "overload", "-o", "ov", "--rates", "5000,1e-300", "--step", "1s"], d.path());
    assert!(e.contains("--rates:"), "{e}");
    let left: Vec<String> = names(d.path()).into_iter().collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn a_store_with_control_characters_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let evil = "x.db\n## Injected\n| a | b |\n|---|---|\n| <img src=x> | 1 |";
    let e = one_error(&["link", "-o", "o", "--store", evil], d.path());
    assert!(e.starts_with("error: --store: 'x.db\\u{a}## Injected") && e.contains("control character"), "{e}");
    assert!(!d.path().join("o").exists());
    // Without control characters, Markdown and HTML in a store path are shown as text.
    let odd = d.path().join("a|b <i>x<_i> **y**.db").display().to_string();
    ok(&["link", "-o", "o", "--store", &odd, "--messages", "5", "--devices", "2", "--interval", "1ms"], d.path());
    let md = std::fs::read_to_string(d.path().join("o/summary.md")).unwrap();
    assert!(md.contains(&format!("Store: `sqlite:{odd}")), "{md}");
    let html = std::fs::read_to_string(d.path().join("o/report.html")).unwrap();
    assert!(!html.contains("<i>x") && html.contains("&lt;i&gt;x&lt;_i&gt;"), "HTML from the store string");
}

#[test]
fn a_fifo_or_a_directory_as_key_file_is_one_line() {
    let d = tempfile::tempdir().unwrap();
    let fifo = d.path().join("key.fifo");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let f = fifo.display().to_string();
    let (tx, rx) = std::sync::mpsc::channel();
    let (dir, f2) = (d.path().to_path_buf(), f.clone());
    std::thread::spawn(move || tx.send(one_error(&["link", "-o", "o", "--key-file", &f2], &dir)).unwrap());
    let e = rx.recv_timeout(std::time::Duration::from_secs(20)).expect("a FIFO --key-file blocked");
    assert_eq!(e, format!("error: --key-file: {f} is a FIFO (named pipe), not a regular file"));
    let kd = d.path().join("keys");
    std::fs::create_dir(&kd).unwrap();
    let e = one_error(&["link", "-o", "o", "--key-file", kd.to_str().unwrap()], d.path());
    assert_eq!(e, format!("error: --key-file: {} is a directory, not a regular file", kd.display()));
}

#[test]
fn session_names_follow_one_rule() {
    let d = tempfile::tempdir().unwrap();
    let key = d.path().join("k");
    // a valid key file, so only the session name can fail
    ok(&["link", "-o", "seed", "--messages", "1", "--devices", "1", "--key-file", key.to_str().unwrap()], d.path());
    let k = key.to_str().unwrap();
    let ctr = d.path().join("ctr").display().to_string();
    for bad in ["", "a/b", "../../etc", "#", "+", "a b"] {
        let e = one_error(
            &[
                "link",
                "device",
                "--id",
                "1",
                "--session",
                bad,
                "--broker",
                "mqtt://127.0.0.1:1",
                "--key-file",
                k,
                "--counter-state",
                &ctr,
                "--messages",
                "1",
            ],
            d.path(),
        );
        assert!(e.starts_with("error: --session: '") && e.contains("is not a session name"), "{bad:?}: {e}");
        let e = one_error(
            &[
                "link",
                "gateway",
                "--session",
                bad,
                "--broker",
                "mqtt://127.0.0.1:1",
                "--key-file",
                k,
                "--devices",
                "0-1",
                "--store",
                "g.db",
            ],
            d.path(),
        );
        assert!(e.starts_with("error: --session: '") && e.contains("is not a session name"), "{bad:?}: {e}");
    }
    assert!(!d.path().join("ctr").exists() && !d.path().join("g.db").exists());
}

#[test]
fn error_texts_name_the_problem() {
    let d = tempfile::tempdir().unwrap();
    for (url, want) in [
        ("mqtt://[::1]garbage", "'garbage' after ']' is not ':PORT'"),
        ("mqtt://127.0.0.1:+18883", "port '+18883' is not a number in 1..=65535"),
        ("mqtt://u:hunter2@127.0.0.1:1883", "credentials are not supported"),
    ] {
        let e = one_error(&["link", "-o", "o", "--broker", url], d.path());
        assert!(e.starts_with("error: --broker: '") && e.contains(want) && !e.contains("hunter2"), "{url}: {e}");
    }
    // A directory the tool may not write (root may write anywhere but in /sys, whose
    // directories refuse new files).
    use std::os::unix::fs::PermissionsExt;
    let ro = d.path().join("ro");
    std::fs::create_dir(&ro).unwrap();
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).unwrap();
    // SAFETY: getuid has no preconditions.
    let ro = if unsafe { libc::getuid() } == 0 { std::path::PathBuf::from("/sys") } else { ro };
    let s = ro.join("x.db").display().to_string();
    let e = one_error(&["link", "-o", "o", "--store", &s], d.path());
    assert!(e.contains(&format!("--store: {s}: its directory {} is not writable", ro.display())), "{e}");
    // A dataset row too large for a frame: refused before anything is sent.
    let wide = d.path().join("wide.csv");
    let cols = 70_000;
    let mut t = (0..cols).map(|i| format!("c{i}")).collect::<Vec<_>>().join(",");
    t.push('\n');
    t += &vec!["1"; cols].join(",");
    t.push('\n');
    std::fs::write(&wide, t).unwrap();
    let e = one_error(&["link", "-o", "o", "--dataset", wide.to_str().unwrap(), "--messages", "1"], d.path());
    assert!(e.contains("280000 bytes") && e.contains("frame limit"), "{e}");
}

/// Runs of `link` into `out`, interrupted at every step of writing (kill, then ENOSPC), replace
/// the previous run whole, and the master key of the directory is never lost or replaced.
#[test]
fn link_force_replaces_a_run_whole_and_keeps_its_key_at_every_step() {
    let base = tempfile::tempdir().unwrap();
    // the old run: an attack run (link_attack.csv) with its state/
    ok(&["link", "--attack", "-o", "out", "--cipher", "Ascon-AEAD128"], base.path());
    ok(&["link", "-o", "out", "--force", "--messages", "3", "--devices", "2", "--interval", "1ms"], base.path());
    ok(&["link", "--attack", "-o", "out", "--force", "--cipher", "Ascon-AEAD128"], base.path());
    let old = base.path().join("out");
    let key_file = lwcbench_link::wire::keys::default_key_for(&old).unwrap();
    let key = std::fs::read(&key_file).unwrap();
    let cmd = ["link", "-o", "out", "--force", "--messages", "3", "--devices", "2", "--interval", "1ms"];
    let kept = ["state", "link.db", "link.db-wal", "link.db-shm"];
    // Which run `out` holds: "old" (the attack run), "new" (a session run), panics if mixed.
    let inspect = |out: &Path| -> &'static str {
        let on_disk: BTreeSet<String> = names(out).into_iter().filter(|n| !kept.contains(&n.as_str())).collect();
        let run: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("run.json")).unwrap()).unwrap();
        let listed: BTreeSet<String> =
            run["files"].as_array().unwrap().iter().map(|f| f.as_str().unwrap().to_string()).collect();
        assert_eq!(on_disk, listed, "files on disk differ from run.json's list");
        let html = std::fs::read_to_string(out.join("report.html")).unwrap();
        assert!(html.contains(run["session"].as_str().unwrap()), "report.html of another run");
        assert_eq!(std::fs::read(&key_file).unwrap(), key, "the key was replaced");
        match run["kind"].as_str().unwrap() {
            "link-attack" => {
                assert!(listed.contains("link_attack.csv") && !listed.contains("link_summary.csv"));
                "old"
            }
            "link" => {
                assert!(!listed.contains("link_attack.csv") && listed.contains("link_summary.csv"));
                "new"
            }
            k => panic!("{k}"),
        }
    };
    assert_eq!(inspect(&old), "old");
    let mut n = 1;
    loop {
        let mut done = false;
        for mode in ["kill", "enospc"] {
            let d = tempfile::tempdir().unwrap();
            let o = Command::new("cp").arg("-a").arg(&old).arg(d.path().join("out")).status().unwrap();
            assert!(o.success());
            let o = lwcbench(&cmd, d.path(), Some(&format!("{n}:{mode}")));
            let err = String::from_utf8_lossy(&o.stderr).to_string();
            let state = inspect(&d.path().join("out"));
            if o.status.success() {
                assert_eq!(state, "new", "step {n} {mode}: {err}");
                if mode == "kill" {
                    done = true;
                }
                continue;
            }
            if mode == "enospc" {
                assert_eq!(state, "old", "step {n}: a failed run replaced the old one: {err}");
                let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
                assert_eq!(errors.len(), 1, "step {n}: {err}");
                assert!(errors[0].contains("No space left on device"), "step {n}: {err}");
            } else {
                assert!(err.contains(&format!("killed at step {n}")), "step {n}: {err}");
            }
            // the next --force run succeeds and leaves nothing beside out
            ok(&cmd, d.path());
            assert_eq!(inspect(&d.path().join("out")), "new", "after step {n} {mode}");
            assert_eq!(names(d.path()), BTreeSet::from(["out".to_string()]), "after step {n} {mode}");
        }
        if done {
            assert!(n > 10, "only {n} steps?");
            break;
        }
        n += 1;
        assert!(n < 200, "more than 200 steps");
    }
}

#[test]
fn a_connection_string_store_is_never_a_file() {
    // libpq's key=value form is PostgreSQL (here unreachable: one error line, the password
    // hidden); a string in that form that is no connection string is refused. Neither leaves a
    // file, nor does a refused run leave its directory.
    let d = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let pg = format!("host=127.0.0.1 port={port} user=u password=hunter2 dbname=d connect_timeout=5");
    let e = one_error(&["link", "-o", "o", "--store", &pg, "--messages", "1"], d.path());
    let shown = format!("host=127.0.0.1 port={port} user=u password=*** dbname=d connect_timeout=5");
    assert!(e.starts_with(&format!("error: --store: cannot connect to {shown}: ")), "{e}");
    assert!(!e.contains("hunter2"), "{e}");
    let e = one_error(&["link", "-o", "o", "--store", "a=b.db", "--messages", "1"], d.path());
    assert!(e.starts_with("error: --store: 'a=b.db' is in PostgreSQL's key=value form"), "{e}");
    let e = one_error(&["link", "-o", "o", "--store", "sqlite:host=h password=hunter2", "--messages", "1"], d.path());
    assert!(e.contains("by a PostgreSQL connection string") && !e.contains("hunter2"), "{e}");
    assert_eq!(names(d.path()), BTreeSet::new(), "a refused store left files");
    // A file of such a name is asked for with a directory part.
    ok(&["link", "-o", "o", "--store", "./a=b.db", "--messages", "2", "--devices", "1"], d.path());
    assert!(d.path().join("a=b.db").is_file());
}

/// A tmpfs mounted on a fresh directory, unmounted when dropped.
struct Tmpfs(tempfile::TempDir);

impl Tmpfs {
    fn mount() -> Tmpfs {
        let d = tempfile::tempdir().unwrap();
        let ok = Command::new("mount").args(["-t", "tmpfs", "-o", "size=16m", "tmpfs"]).arg(d.path()).status().unwrap();
        assert!(ok.success(), "mount tmpfs");
        Tmpfs(d)
    }

    fn read_only(&self) {
        let ok = Command::new("mount").args(["-o", "remount,ro"]).arg(self.0.path()).status().unwrap();
        assert!(ok.success(), "remount ro");
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(self.0.path()).status();
    }
}

#[test]
fn an_sqlite_store_on_a_read_only_mount_is_refused_before_ready() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        super::required::missing("root (mounting a read-only tmpfs)");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let key = d.path().join("k");
    let src = d.path().join("src.db");
    let (k, s) = (key.to_str().unwrap(), src.to_str().unwrap());
    ok(&["link", "-o", "seed", "--messages", "2", "--devices", "1", "--key-file", k, "--store", s], d.path());
    let fs = Tmpfs::mount();
    // Two copies of the store: the database alone, and the database with its WAL and
    // shared-memory files (as a reader holding it open leaves them).
    std::fs::copy(&src, fs.0.path().join("plain.db")).unwrap();
    {
        let c = rusqlite::Connection::open(&src).unwrap();
        let n: i64 = c.query_row("SELECT COUNT(*) FROM readings", [], |r| r.get(0)).unwrap();
        assert!(n > 0);
        for ext in ["", "-wal", "-shm"] {
            let from = format!("{s}{ext}");
            assert!(Path::new(&from).is_file(), "{from} missing while the store is open");
            std::fs::copy(&from, fs.0.path().join(format!("wal.db{ext}"))).unwrap();
        }
    }
    fs.read_only();
    for name in ["plain.db", "wal.db"] {
        let store = fs.0.path().join(name).display().to_string();
        let mut child = Command::new(env!("CARGO_BIN_EXE_lwcbench"))
            .args(["link", "gateway", "--session", "s", "--broker", "mqtt://127.0.0.1:1", "--key-file", k])
            .args(["--devices", "0", "--store", &store])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let t0 = std::time::Instant::now();
        while child.try_wait().unwrap().is_none() && t0.elapsed() < std::time::Duration::from_secs(20) {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        if child.try_wait().unwrap().is_none() {
            let _ = child.kill();
        }
        let o = child.wait_with_output().unwrap();
        let (out, err) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
        assert!(!o.status.success() && !out.contains("ready"), "{name}: the gateway started: {out}{err}");
        let want = format!(
            "error: --store: {store}: read-only file system (mounted read-only at {})",
            std::fs::canonicalize(fs.0.path()).unwrap().display()
        );
        assert!(err.trim_end().starts_with(&want) && err.lines().count() == 1, "{name}: {err}");
    }
}
