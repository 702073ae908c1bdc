//! One rule for tests that need a service or a privilege (mosquitto, PostgreSQL, root for
//! network namespaces, the mcu venv, an engine): without it the test skips with a line naming
//! what is missing; with `LWCBENCH_REQUIRE_SERVICES=1` (set by `.ci/run`) it fails with that
//! line instead, so CI cannot pass by skipping. Test crates include this file with `#[path]`.
#![allow(dead_code)]

/// The environment variable that turns skips into failures.
pub const REQUIRE: &str = "LWCBENCH_REQUIRE_SERVICES";

/// Whether missing services fail the test (`LWCBENCH_REQUIRE_SERVICES=1`).
pub fn required() -> bool {
    std::env::var(REQUIRE).is_ok_and(|v| v == "1")
}

/// The running test cannot go on because `what` is missing: panic when services are required,
/// else print the skip. Callers return right after it. The test's name is its thread's (the
/// test harness names each test's thread after the test).
pub fn missing(what: &str) {
    let thread = std::thread::current();
    let line = skip_line(thread.name().unwrap_or("a test"), what, required());
    if required() {
        panic!("{line}");
    }
    eprintln!("{line}");
}

/// The line printed (skip) or panicked with (required).
pub fn skip_line(test: &str, what: &str, required: bool) -> String {
    if required {
        format!("REQUIRED BUT MISSING in {test}: {what} ({REQUIRE}=1)")
    } else {
        format!("SKIPPED {test}: {what}")
    }
}
