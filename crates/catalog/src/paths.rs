//! Where the files that are not built into the binary are found at run time: the `mcu/`
//! tooling, the engine scripts, the project venv, the default video clip, the shared vectors.
//!
//! Everything small (data tables, known-answer files) is embedded; what stays outside lives in
//! an lwcbench tree (a checkout, or such files installed under `<prefix>/share/lwcbench`). The
//! tree is looked up when the program runs, never at the path of the checkout it was built in,
//! so a copied or `cargo install`ed binary does not reach into the build machine's files:
//!
//! 1. `$LWCBENCH_ROOT` alone, when set (a wrong setting is reported, not skipped);
//! 2. the program's directory and four of its parents, those no other user may write to (a
//!    checkout's `target/<profile>/lwcbench`, `target/<triple>/<profile>/lwcbench`, test
//!    binaries under `target/<profile>/deps/`);
//! 3. `<program directory>/../share/lwcbench` (an installed prefix).
use std::path::{Path, PathBuf};

/// The environment variable naming the lwcbench tree.
pub const ROOT_VAR: &str = "LWCBENCH_ROOT";

/// How many parents of the program's directory are searched: `target/<triple>/<profile>/deps`
/// is four levels below the checkout.
const EXE_LEVELS: usize = 5;

/// The directories that may be an lwcbench tree, in search order (see the module text).
pub fn roots() -> Vec<PathBuf> {
    if let Some(r) = std::env::var_os(ROOT_VAR).filter(|r| !r.is_empty()) {
        return vec![PathBuf::from(r)];
    }
    let Some(exe) = std::env::current_exe().ok().and_then(|e| e.canonicalize().ok()) else {
        return Vec::new();
    };
    roots_for_exe(&exe)
}

/// The search order for a program at `exe` when `$LWCBENCH_ROOT` is unset. A directory anyone
/// may write to (`/tmp`) is never a root: a program copied under it would otherwise run the
/// `mcu/run.py` or `.venv/bin/python` another user left there.
pub fn roots_for_exe(exe: &Path) -> Vec<PathBuf> {
    let Some(dir) = exe.parent() else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> =
        dir.ancestors().take(EXE_LEVELS).filter(|d| !others_may_write(d)).map(Path::to_path_buf).collect();
    out.push(dir.join("../share/lwcbench"));
    out
}

/// True for a directory whose mode lets every user write to it (the sticky `/tmp` included).
fn others_may_write(dir: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(dir).is_ok_and(|m| m.permissions().mode() & 0o002 != 0)
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        false
    }
}

/// `rel` (a path inside an lwcbench tree) under the first root that has it.
pub fn find(rel: &str) -> Option<PathBuf> {
    find_in(&roots(), rel)
}

/// `rel` under the first of `roots` that has it.
pub fn find_in(roots: &[PathBuf], rel: &str) -> Option<PathBuf> {
    roots.iter().map(|r| r.join(rel)).find(|p| p.exists())
}

/// The one-line reason `rel` was not found, naming what needs it and how to provide it.
pub fn missing(rel: &str, needed_for: &str) -> String {
    missing_in(&roots(), rel, needed_for)
}

/// [`missing`] for given roots.
pub fn missing_in(roots: &[PathBuf], rel: &str, needed_for: &str) -> String {
    let how = match std::env::var_os(ROOT_VAR).filter(|r| !r.is_empty()) {
        Some(r) => format!("{ROOT_VAR}={} does not hold it", Path::new(&r).display()),
        None => format!(
            "set {ROOT_VAR} to an lwcbench checkout (git clone; its scripts/setup.sh --test installs the tools)"
        ),
    };
    let looked: Vec<String> = roots.iter().map(|r| r.display().to_string()).collect();
    format!("{rel} not found (needed for {needed_for}): {how} (looked in: {})", looked.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A program in a checkout's target directory finds the checkout; an installed one
    /// (`<prefix>/bin/lwcbench`) finds `<prefix>/share/lwcbench` and never the build tree.
    #[test]
    fn search_order_follows_the_program() {
        // a fresh directory per process (the crate has no tempfile dependency)
        let d = std::env::temp_dir().join(format!("lwcbench-paths-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        let checkout = d.join("src/lwcbench");
        std::fs::create_dir_all(checkout.join("mcu")).unwrap();
        std::fs::create_dir_all(checkout.join("target/citest/deps")).unwrap();
        std::fs::write(checkout.join("mcu/run.py"), "").unwrap();
        let test_exe = checkout.join("target/citest/deps/lwcbench-0123");
        assert_eq!(find_in(&roots_for_exe(&test_exe), "mcu/run.py"), Some(checkout.join("mcu/run.py")));
        let cross_exe = checkout.join("target/aarch64-unknown-linux-gnu/cross/lwcbench");
        assert_eq!(find_in(&roots_for_exe(&cross_exe), "mcu/run.py"), Some(checkout.join("mcu/run.py")));

        let prefix = d.join("opt");
        std::fs::create_dir_all(prefix.join("bin")).unwrap();
        let installed = prefix.join("bin/lwcbench");
        assert_eq!(find_in(&roots_for_exe(&installed), "mcu/run.py"), None);
        std::fs::create_dir_all(prefix.join("share/lwcbench/mcu")).unwrap();
        std::fs::write(prefix.join("share/lwcbench/mcu/run.py"), "").unwrap();
        let found = find_in(&roots_for_exe(&installed), "mcu/run.py").unwrap();
        // a directory anyone may write to is passed over, whatever it holds
        let open = d.join("open");
        std::fs::create_dir_all(open.join("mcu")).unwrap();
        std::fs::write(open.join("mcu/run.py"), "").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o1777)).unwrap();
            assert_eq!(find_in(&roots_for_exe(&open.join("lwcbench")), "mcu/run.py"), None);
        }
        assert_eq!(found.canonicalize().unwrap(), prefix.join("share/lwcbench/mcu/run.py").canonicalize().unwrap());
        std::fs::remove_dir_all(&d).unwrap();
    }

    /// The reason names the file, what needs it and the variable that provides it.
    #[test]
    fn missing_says_what_to_set() {
        let m = missing_in(&[PathBuf::from("/nowhere")], "mcu/run.py", "lwcbench mcu");
        assert!(m.starts_with("mcu/run.py not found (needed for lwcbench mcu): "), "{m}");
        assert!(m.contains("LWCBENCH_ROOT") && m.contains("/nowhere") && !m.contains('\n'), "{m}");
    }
}
