//! Resource measurements beside timing: code size from the binary's symbols ([`codesize`]),
//! peak stack use by stack painting ([`stack`]), resident-set growth ([`rss`]) and heap in use
//! ([`heap`], for libraries that allocate with C `malloc`). Methods and
//! caveats are in docs/metrics.md.
pub mod codesize;
pub mod heap;
pub mod rss;
pub mod stack;

/// Runs the calling unit test alone in a child process of this test binary (`name` is the
/// test's full path, e.g. `resources::heap::tests::heap_in_use_sees_an_allocation`). Process-
/// wide figures (heap in use, resident set) move when other test threads allocate or free at
/// the same time, so a test that asserts on them must not share its process. Returns `true`
/// in the child, where the caller runs its body; `false` in the parent once the child passed.
#[cfg(test)]
pub(crate) fn in_own_process(name: &str) -> bool {
    const VAR: &str = "LWCBENCH_ISOLATED_TEST";
    if std::env::var(VAR).as_deref() == Ok(name) {
        return true;
    }
    let exe = std::env::current_exe().expect("test binary path");
    let out = std::process::Command::new(exe)
        .args([name, "--exact", "--test-threads=1", "--nocapture"])
        .env(VAR, name)
        .output()
        .expect("re-running the test binary");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    // "1 passed" guards against a misspelt name, which would run nothing and pass.
    assert!(out.status.success() && text.contains("1 passed"), "{name} in its own process:\n{text}");
    false
}
