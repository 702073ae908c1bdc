//! memory.x on the linker's search path for cortex-m-rt's link.x; build facts for the header.
use std::process::Command;

fn main() {
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").unwrap());
    std::fs::copy("memory.x", out.join("memory.x")).unwrap();
    println!("cargo:rustc-link-search={}", out.display());
    println!("cargo:rustc-link-arg-bins=-Tlink.x");
    println!("cargo:rerun-if-changed=memory.x");
    board_facts();
}

/// Compiler, profile, opt-level, target and git commit, as env!() values for the header line.
fn board_facts() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let v = Command::new(&rustc).arg("-V").output().ok().map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    println!("cargo:rustc-env=BOARD_RUSTC={}", v.unwrap_or_else(|| "unknown".into()));
    println!("cargo:rustc-env=BOARD_PROFILE={}", std::env::var("PROFILE").unwrap_or_default());
    println!("cargo:rustc-env=BOARD_OPT={}", std::env::var("OPT_LEVEL").unwrap_or_default());
    println!("cargo:rustc-env=BOARD_TARGET={}", std::env::var("TARGET").unwrap_or_default());
    let git = Command::new("git").args(["rev-parse", "--short=12", "HEAD"]).output().ok().filter(|o| o.status.success());
    let commit = git.map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string()).unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=BOARD_COMMIT={commit}");
}
