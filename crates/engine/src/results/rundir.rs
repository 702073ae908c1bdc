//! The run-directory transaction: atomic files, the staged sibling directory swapped in for
//! `--out` in one rename, and the fault-injection steps (`LWCBENCH_FAILPOINT`) that test it.
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

// ---- fault injection ---------------------------------------------------------------------

/// What the failpoint does when its step comes.
#[derive(Clone, Copy, Debug, PartialEq)]
enum FailAction {
    Kill,
    NoSpace,
}

fn failpoint() -> Option<(u64, FailAction)> {
    static FP: OnceLock<Option<(u64, FailAction)>> = OnceLock::new();
    *FP.get_or_init(|| {
        let v = std::env::var("LWCBENCH_FAILPOINT").ok()?;
        let (n, action) = match v.split_once(':') {
            Some((n, "enospc")) => (n, FailAction::NoSpace),
            Some((n, "kill")) | Some((n, "")) => (n, FailAction::Kill),
            None => (v.as_str(), FailAction::Kill),
            Some(_) => return None,
        };
        n.trim().parse().ok().filter(|&n| n > 0).map(|n| (n, action))
    })
}

static STEPS: AtomicU64 = AtomicU64::new(0);

/// One step of writing results (a file's data, an fsync, a rename, a removal). For the
/// fault-injection tests: with `LWCBENCH_FAILPOINT=N` the process is killed (SIGKILL) when the
/// Nth step starts; with `LWCBENCH_FAILPOINT=N:enospc` the Nth step fails with "No space left
/// on device". Unset (always, outside those tests), this only counts.
pub fn step(what: &str) -> io::Result<()> {
    let n = STEPS.fetch_add(1, Ordering::SeqCst) + 1;
    match failpoint() {
        Some((k, FailAction::Kill)) if k == n => {
            eprintln!("lwcbench: LWCBENCH_FAILPOINT: killed at step {n} ({what})");
            // SAFETY: sending a signal to this process.
            unsafe {
                libc::kill(libc::getpid(), libc::SIGKILL);
            }
            std::process::abort()
        }
        Some((k, FailAction::NoSpace)) if k == n => Err(io::Error::from_raw_os_error(libc::ENOSPC)),
        _ => Ok(()),
    }
}

// ---- writing ---------------------------------------------------------------------------

/// Write `bytes` to `dir/name` atomically (temporary file + fsync + rename).
pub fn write_atomic(dir: &Path, name: &str, bytes: &[u8]) -> std::io::Result<PathBuf> {
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let fin = dir.join(name);
    let res = (|| {
        step("write")?;
        let mut f = fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        step("fsync")?;
        f.sync_all()?;
        step("rename")?;
        fs::rename(&tmp, &fin)
    })();
    if res.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    res.map(|_| fin)
}

/// [`write_atomic`] to a user-given file path; `what` names the option in errors.
pub fn write_atomic_to(path: &Path, bytes: &[u8], what: &str) -> Result<(), String> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = path.file_name().ok_or_else(|| format!("{what}: {} is not a file name", path.display()))?;
    write_atomic(dir, &name.to_string_lossy(), bytes)
        .map(|_| ())
        .map_err(|e| format!("{what}: {}: {e}", path.display()))
}

/// Parent directory and file name of a run directory path (`out` itself may not exist yet).
fn split_out(dir: &Path) -> io::Result<(PathBuf, String)> {
    let name = dir
        .file_name()
        .and_then(|n| n.to_str())
        .filter(|n| !n.is_empty())
        .ok_or_else(|| io::Error::other(format!("{} does not end in a directory name", dir.display())))?;
    let parent = dir.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    Ok((parent.to_path_buf(), name.to_string()))
}

/// Hidden siblings of `out`: `.<name>.lwcbench-new-<pid>-<n>` (a run being written) and
/// `.<name>.lwcbench-old-<pid>-<n>` (a replaced run being removed).
fn sibling(parent: &Path, name: &str, kind: &str) -> PathBuf {
    static N: AtomicU64 = AtomicU64::new(0);
    parent.join(format!(".{name}.lwcbench-{kind}-{}-{}", std::process::id(), N.fetch_add(1, Ordering::SeqCst)))
}

/// A fresh hidden scratch directory beside `out` (not inside it), named like the staging
/// directories, so a killed run's scratch is removed by the next [`prepare_dir`] and never
/// makes `out` look half-written. The caller removes it when done.
pub fn scratch_sibling(out: &Path) -> io::Result<PathBuf> {
    let (parent, name) = split_out(out)?;
    fs::create_dir_all(&parent)?;
    Ok(sibling(&parent, &name, "new"))
}

/// Remove the siblings of `out` left by killed processes (their pid no longer runs).
fn remove_stale_siblings(parent: &Path, name: &str) {
    let Ok(rd) = fs::read_dir(parent) else { return };
    let prefix = format!(".{name}.lwcbench-");
    for e in rd.flatten() {
        let f = e.file_name();
        let Some(rest) = f.to_str().and_then(|f| f.strip_prefix(&prefix)) else { continue };
        let Some(pid) = rest
            .strip_prefix("new-")
            .or_else(|| rest.strip_prefix("old-"))
            .and_then(|r| r.split('-').next())
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        let alive = pid == std::process::id() || Path::new(&format!("/proc/{pid}")).exists();
        if !alive && e.file_type().is_ok_and(|t| t.is_dir()) {
            let _ = fs::remove_dir_all(e.path());
        }
    }
}

fn is_empty_dir(dir: &Path) -> io::Result<bool> {
    Ok(fs::read_dir(dir)?.next().is_none())
}

/// Check up front that `dir` can receive results: refuse to replace a finished run unless
/// `force`, refuse a non-empty directory that holds no run (it is not ours to replace),
/// remove what killed runs left beside it, and prove its parent is writable. `dir` itself is
/// only created when the run is complete ([`RunDirWriter::commit`]).
pub fn prepare_dir(dir: &Path, force: bool) -> Result<(), String> {
    let (parent, name) = split_out(dir).map_err(|e| format!("--out: {e}"))?;
    if dir.exists() && !dir.is_dir() {
        return Err(format!("--out: {} exists and is not a directory", dir.display()));
    }
    if parent.is_dir() {
        remove_stale_siblings(&parent, &name);
    }
    if dir.is_dir() {
        if dir.join("run.json").exists() {
            if !force {
                return Err(format!(
                    "--out: {} already holds a finished run (use --force to replace it)",
                    dir.display()
                ));
            }
        } else if !is_empty_dir(dir).map_err(|e| format!("--out: {}: {e}", dir.display()))? {
            return Err(format!(
                "--out: {} is not empty and holds no finished run (no run.json): choose a new directory",
                dir.display()
            ));
        }
    }
    fs::create_dir_all(&parent).map_err(|e| format!("--out: cannot create {}: {e}", parent.display()))?;
    let probe = sibling(&parent, &name, "new");
    fs::create_dir(&probe).map_err(|e| format!("--out: {} is not writable: {e}", parent.display()))?;
    let _ = fs::remove_dir(probe);
    Ok(())
}

/// Renders `report.html` from a complete run directory. The application layer passes the
/// report crate's renderer with each run (the engine cannot depend on that crate); given, the
/// page is written into the same unit as the data it shows and listed in `run.json`.
pub type ReportRenderer = fn(&Path) -> Result<Vec<u8>, String>;

/// Writes a run directory as one unit: files go into a fresh hidden sibling of `out`, which
/// [`commit`](RunDirWriter::commit) swaps in with one rename. Dropped without commit, the
/// sibling is removed (a kill leaves it for the next run's [`prepare_dir`] to remove).
pub struct RunDirWriter {
    out: PathBuf,
    stage: PathBuf,
    parent: PathBuf,
    name: String,
    files: Vec<String>,
    committed: bool,
}

impl RunDirWriter {
    /// Start writing the run for `out` into a fresh hidden sibling (stale ones removed).
    pub fn begin(out: &Path) -> io::Result<Self> {
        let (parent, name) = split_out(out)?;
        fs::create_dir_all(&parent)?;
        remove_stale_siblings(&parent, &name);
        let stage = sibling(&parent, &name, "new");
        step("mkdir")?;
        fs::create_dir(&stage)?;
        Ok(RunDirWriter { out: out.to_path_buf(), stage, parent, name, files: Vec::new(), committed: false })
    }

    /// The directory being written (complete runs are read from here to render the report).
    pub fn stage(&self) -> &Path {
        &self.stage
    }

    /// Write one file into the unit (data, then fsync).
    pub fn add(&mut self, name: &str, bytes: &[u8]) -> io::Result<()> {
        step("write")?;
        let mut f = fs::File::create(self.stage.join(name))?;
        f.write_all(bytes)?;
        step("fsync")?;
        f.sync_all()?;
        if !self.files.iter().any(|n| n == name) {
            self.files.push(name.to_string());
        }
        Ok(())
    }

    /// Swap the unit in for `out`: the previous run (if any) is replaced as a whole.
    pub fn commit(mut self) -> io::Result<()> {
        step("fsync-dir")?;
        fs::File::open(&self.stage)?.sync_all()?;
        let replaced = match fs::symlink_metadata(&self.out) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(e),
            Ok(m) if !m.is_dir() => {
                return Err(io::Error::other(format!("{} exists and is not a directory", self.out.display())))
            }
            // rename(2) replaces an empty directory in one step
            Ok(_) if is_empty_dir(&self.out)? => None,
            Ok(_) => Some(()),
        };
        step("rename")?;
        let old = match replaced {
            None => {
                fs::rename(&self.stage, &self.out)?;
                None
            }
            Some(()) => Some(exchange(&self.stage, &self.out, &self.parent, &self.name)?),
        };
        self.committed = true;
        // The new run is in place: what follows cannot undo that, so a failure is a warning
        // (a replaced run left aside is removed by the next run into this --out).
        if let Err(e) = step("fsync-parent").and_then(|_| fs::File::open(&self.parent)?.sync_all()) {
            eprintln!("warning: {}: syncing the directory entry: {e}", self.parent.display());
        }
        if let Some(old) = old {
            if let Err(e) = step("remove-old").and_then(|_| fs::remove_dir_all(&old)) {
                eprintln!("warning: removing the replaced run at {}: {e}", old.display());
            }
        }
        Ok(())
    }
}

impl Drop for RunDirWriter {
    fn drop(&mut self) {
        if !self.committed {
            let _ = fs::remove_dir_all(&self.stage);
        }
    }
}

/// Put `stage` at `out` and the previous `out` aside; returns where the previous run now is.
/// One atomic exchange on Linux; elsewhere (or on file systems without it) two renames, with
/// nothing at `out` in between.
fn exchange(stage: &Path, out: &Path, parent: &Path, name: &str) -> io::Result<PathBuf> {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        use std::os::unix::ffi::OsStrExt;
        let c = |p: &Path| std::ffi::CString::new(p.as_os_str().as_bytes()).map_err(io::Error::other);
        let (a, b) = (c(stage)?, c(out)?);
        // SAFETY: two NUL-terminated paths relative to the working directory.
        let r =
            unsafe { libc::renameat2(libc::AT_FDCWD, a.as_ptr(), libc::AT_FDCWD, b.as_ptr(), libc::RENAME_EXCHANGE) };
        if r == 0 {
            return Ok(stage.to_path_buf());
        }
        let e = io::Error::last_os_error();
        if !matches!(e.raw_os_error(), Some(libc::EINVAL) | Some(libc::ENOSYS) | Some(libc::EOPNOTSUPP)) {
            return Err(e);
        }
    }
    let old = sibling(parent, name, "old");
    fs::rename(out, &old)?;
    step("rename")?;
    fs::rename(stage, out)?;
    Ok(old)
}

/// Replace or add `changes` in the finished run `dir` as one unit: the other files are
/// hard-linked (copied where linking fails) into a fresh sibling, the changed files written
/// there, their names added to `run.json`'s file list, and the sibling swapped in. A kill at
/// any step leaves the run as it was or as changed (`lwcbench report`).
pub fn rewrite_dir(dir: &Path, changes: &[(&str, Vec<u8>)]) -> io::Result<()> {
    let mut w = RunDirWriter::begin(dir)?;
    link_tree(dir, w.stage(), &|n| n == "run.json" || changes.iter().any(|(c, _)| *c == n))?;
    for (name, bytes) in changes {
        w.add(name, bytes)?;
    }
    let rj = dir.join("run.json");
    if rj.is_file() {
        let text = fs::read(&rj)?;
        let mut v: serde_json::Value = serde_json::from_slice(&text).map_err(io::Error::other)?;
        if let Some(files) = v.get_mut("files").and_then(|f| f.as_array_mut()) {
            let mut names: Vec<String> =
                files.iter().filter_map(|f| f.as_str()).filter(|f| *f != "run.json").map(String::from).collect();
            for (c, _) in changes {
                if !names.iter().any(|n| n == c) {
                    names.push(c.to_string());
                }
            }
            names.push("run.json".into());
            *files = names.into_iter().map(serde_json::Value::String).collect();
        }
        w.add("run.json", &serde_json::to_vec_pretty(&v).map_err(io::Error::other)?)?;
    }
    w.commit()
}

/// Hard-link (or copy) every entry of `src` into the existing directory `dst`, recursively,
/// except top-level names for which `skip` is true.
pub fn link_tree(src: &Path, dst: &Path, skip: &dyn Fn(&str) -> bool) -> io::Result<()> {
    for e in fs::read_dir(src)? {
        let e = e?;
        let name = e.file_name();
        if name.to_str().is_some_and(skip) {
            continue;
        }
        let (from, to) = (e.path(), dst.join(&name));
        let t = e.file_type()?;
        if t.is_dir() {
            fs::create_dir(&to)?;
            link_tree(&from, &to, &|_| false)?;
        } else if t.is_file() {
            link_file(&from, &to)?;
        }
        // symlinks and special files are not part of a run
    }
    Ok(())
}

/// Hard-link the file `from` as `to` (a copy where linking fails): one step of writing a run.
pub fn link_file(from: &Path, to: &Path) -> io::Result<()> {
    step("link")?;
    if fs::hard_link(from, to).is_err() {
        fs::copy(from, to)?;
    }
    Ok(())
}

/// The default `--out` of every command that writes a run: `./lwcbench-results/<UTC time>-<name>`,
/// the time with `:` as `-` (a valid file name everywhere).
pub fn default_out(started: std::time::SystemTime, name: &str) -> PathBuf {
    let stamp = super::rfc3339(started).replace(':', "-");
    PathBuf::from("lwcbench-results").join(format!("{stamp}-{name}"))
}
