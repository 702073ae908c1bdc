//! Build facts for the header line (compiler, profile, opt-level, target, git commit), as
//! env!() values behind `lwc_board_bench::build`. The workspace builds every member with one
//! profile and target, so the bench crate's values are the image's.
use std::process::Command;

fn main() {
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
    let git =
        Command::new("git").args(["rev-parse", "--short=12", "HEAD"]).output().ok().filter(|o| o.status.success());
    let commit = git.map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string()).unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=BOARD_COMMIT={commit}");
}
