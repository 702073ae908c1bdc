//! Records how this binary was built, so every result file can say so.
use std::process::Command;

fn main() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let rv =
        Command::new(&rustc).arg("-V").output().ok().map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    println!("cargo:rustc-env=LWCBENCH_RUSTC={}", rv.unwrap_or_else(|| "unknown".into()));
    println!("cargo:rustc-env=LWCBENCH_PROFILE={}", std::env::var("PROFILE").unwrap_or_default());
    println!("cargo:rustc-env=LWCBENCH_OPT_LEVEL={}", std::env::var("OPT_LEVEL").unwrap_or_default());
    println!("cargo:rustc-env=LWCBENCH_TARGET={}", std::env::var("TARGET").unwrap_or_default());
    println!(
        "cargo:rustc-env=LWCBENCH_RUSTFLAGS={}",
        std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default().replace('\x1f', " ")
    );
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let commit = git(&["rev-parse", "HEAD"]).unwrap_or_else(|| "unknown".into());
    let dirty = git(&["status", "--porcelain", "--untracked-files=no"]).map(|s| !s.is_empty()).unwrap_or(false);
    println!("cargo:rustc-env=LWCBENCH_GIT_COMMIT={commit}{}", if dirty { "-dirty" } else { "" });
    // In a worktree `.git` is a file: the HEAD and index to watch live in the worktree's git
    // directory, the branch ref in the common one. Watching paths that do not exist reruns
    // this script (and rebuilds its dependants) on every build.
    if let Some(dir) = git(&["rev-parse", "--absolute-git-dir"]) {
        println!("cargo:rerun-if-changed={dir}/HEAD");
        println!("cargo:rerun-if-changed={dir}/index");
        if let (Some(common), Some(branch)) =
            (git(&["rev-parse", "--path-format=absolute", "--git-common-dir"]), git(&["symbolic-ref", "-q", "HEAD"]))
        {
            let r = std::path::Path::new(&common).join(&branch);
            if r.exists() {
                println!("cargo:rerun-if-changed={}", r.display());
            }
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
}
