//! The skip rule of tests/support/required.rs, seen from outside: this test runs itself as a
//! child with mosquitto made absent (`LWCBENCH_MOSQUITTO` naming no file). Without
//! `LWCBENCH_REQUIRE_SERVICES` the child skips and passes with a line naming mosquitto; with it set
//! to 1, as .ci/run sets it, the child fails with that line.
// Helpers outside #[test] functions unwrap too: a panic in a test is its failure report.
#![allow(clippy::unwrap_used)]
use std::process::Command;

mod support;

const NAME: &str = "a_missing_service_fails_only_when_required";

#[test]
fn a_missing_service_fails_only_when_required() {
    if std::env::var_os("LWCBENCH_REQUIRED_CHILD").is_some() {
        assert!(support::mosquitto().is_none(), "mosquitto started although LWCBENCH_MOSQUITTO names no file");
        println!("CHILD RETURNED");
        return;
    }
    let child = |require: &str| {
        let o = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", NAME, "--nocapture", "--test-threads", "1"])
            .env("LWCBENCH_REQUIRED_CHILD", "1")
            .env("LWCBENCH_MOSQUITTO", "/nonexistent/mosquitto")
            .env("LWCBENCH_REQUIRE_SERVICES", require)
            .output()
            .unwrap();
        (o.status.success(), format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr)))
    };
    let (ok, out) = child("1");
    assert!(!ok, "required but missing passed: {out}");
    assert!(out.contains(&format!("REQUIRED BUT MISSING in {NAME}: mosquitto not installed")), "{out}");
    assert!(!out.contains("CHILD RETURNED"), "{out}");
    let (ok, out) = child("0");
    assert!(ok, "a plain skip failed: {out}");
    assert!(
        out.contains(&format!("SKIPPED {NAME}: mosquitto not installed")) && out.contains("CHILD RETURNED"),
        "{out}"
    );
}
