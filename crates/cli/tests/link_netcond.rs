//! `lwcbench link` under network conditions through the CLI: bad condition values (one `error:`
//! line, non-zero exit, nothing written; no root needed) and, as root, a UDP run whose run.json
//! records the mechanism of every condition and whose link_conditions.csv balances.
use super::required;
use std::path::Path;
use std::process::{Command, Output};

pub(crate) fn lwcbench(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lwcbench")).args(args).current_dir(cwd).output().expect("binary runs")
}

/// Effective uid 0 (the second field of `Uid:` in /proc/self/status).
pub(crate) fn is_root() -> bool {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines().find(|l| l.starts_with("Uid:")).and_then(|l| l.split_whitespace().nth(2)) == Some("0")
}

#[test]
fn bad_condition_values_get_one_error_line() {
    let d = tempfile::tempdir().unwrap();
    let cases: [(&[&str], &str); 8] = [
        (&["--loss", "101"], "error: --loss: '101' is not a percentage in 0..=100"),
        (&["--loss", "x"], "error: --loss: 'x' is not a percentage in 0..=100"),
        (&["--delay", "5.5"], "error: --delay: '5.5' is not a whole number of ms"),
        (&["--delay", "10", "--jitter", "11"], "error: --jitter: 11 ms exceeds --delay 10 ms"),
        (&["--bandwidth", "0"], "error: --bandwidth: 0 kbit/s would block the path"),
        (&["--loss", "5", "--broker", "mqtt://127.0.0.1:1883"], "error: --broker: with network conditions"),
        (&["--preset", "net-sweep", "--loss", "1"], "error: --preset net-sweep sets loss and delay itself"),
        (&["--loss", "5", "--net-backend", "magic"], "error: --net-backend: 'magic' is not auto or fallback"),
    ];
    each_one_error_line(d.path(), &cases);
}

/// `lwcbench link -o out ARGS` in `dir` for each case: non-zero exit, stderr one line starting
/// with the case's text, and no `out`.
pub(crate) fn each_one_error_line(dir: &Path, cases: &[(&[&str], &str)]) {
    for (args, want) in cases {
        let mut all = vec!["link", "-o", "out"];
        all.extend_from_slice(args);
        let o = lwcbench(&all, dir);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{args:?} succeeded");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with(want), "{args:?}: {err}");
        assert!(!dir.join("out").exists(), "{args:?} left files");
    }
}

#[test]
fn udp_run_records_mechanisms_and_counts_every_drop() {
    if !is_root() {
        required::missing("network namespaces need root");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let o = lwcbench(
        &[
            "link",
            "-o",
            "out",
            "--transport",
            "udp",
            "--loss",
            "10",
            "--delay",
            "20",
            "--devices",
            "4",
            "--messages",
            "50",
            "--interval",
            "2ms",
            "--net-backend",
            "fallback",
        ],
        d.path(),
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = d.path().join("out");
    let run: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("run.json")).unwrap()).unwrap();
    assert_eq!(run["kind"], "link-conditions");
    let r = &run["config"]["network"]["runs"][0];
    let mech: Vec<(String, String)> = r["applied"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["condition"].as_str().unwrap().into(), a["mechanism"].as_str().unwrap().into()))
        .collect();
    assert_eq!(mech, [("loss".into(), "nftables".into()), ("delay".into(), "relay".into())]);
    assert_eq!(r["applied"][0]["side"], "b");
    assert!(r["applied"][0]["detail"].as_str().unwrap().contains("numgen random mod 1000 < 100 counter drop"));
    let (sent, stored, nft) =
        (r["sent"].as_u64().unwrap(), r["stored"].as_u64().unwrap(), r["nft_dropped"].as_u64().unwrap());
    assert_eq!(sent, 200);
    assert_eq!(stored + nft, sent);
    let csv = std::fs::read_to_string(out.join("link_conditions.csv")).unwrap();
    assert_eq!(csv.lines().count(), 2, "{csv}");
    assert!(csv.lines().nth(1).unwrap().contains("loss=nftables;delay=relay"), "{csv}");
    let md = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(md.contains("## Link under network conditions"));
    // The namespaces are gone.
    let ns = Command::new("ip").args(["netns", "list"]).output().unwrap();
    assert!(!String::from_utf8_lossy(&ns.stdout).lines().any(|l| l.starts_with("lwcb-") && !other_live(l)));
}

/// Whether a listed namespace belongs to a live process (another test running in parallel).
fn other_live(line: &str) -> bool {
    let name = line.split_whitespace().next().unwrap_or("");
    name.strip_prefix("lwcb-")
        .and_then(|r| r.split('-').next())
        .and_then(|p| p.parse::<u32>().ok())
        .is_some_and(|p| Path::new(&format!("/proc/{p}")).exists())
}

#[test]
fn without_root_conditions_stop_with_one_line() {
    if !is_root() {
        // Already unprivileged: the plain call is the test.
        let d = tempfile::tempdir().unwrap();
        let o = lwcbench(&["link", "-o", "out", "--loss", "5"], d.path());
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success());
        assert!(err.starts_with("error: network conditions need root"), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        return;
    }
    // As root: drop to nobody without capabilities (util-linux setpriv).
    let d = tempfile::tempdir().unwrap();
    std::fs::set_permissions(d.path(), std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    let o = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all", "--bounding-set=-all"])
        .arg(env!("CARGO_BIN_EXE_lwcbench"))
        .args(["link", "-o", "out", "--loss", "5"])
        .current_dir(d.path())
        // nobody cannot create keys under the caller's HOME (/root): the test is about the root check
        .env("LWCBENCH_KEY_DIR", d.path().join("keys"))
        .output()
        .expect("setpriv runs (util-linux)");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert_eq!(
        err.trim_end(),
        "error: network conditions need root (CAP_NET_ADMIN is missing): run as root or without network conditions"
    );
    assert!(!d.path().join("out").exists(), "a failed run left its directory");
}
