//! The engine's process: how a spec becomes a command line, reading its lines with
//! deadlines, keeping the tail of its stderr, and killing its whole process group.
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::Child;
use std::sync::mpsc::{self, Receiver};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::engine::Engine;
use super::limits::{BUILTIN, LIST_TIMEOUT, MAX_LINE};
use super::protocol::clip;

/// Read lines of at most [`MAX_LINE`] bytes on a thread, so the host can apply deadlines.
pub(super) fn spawn_reader(r: impl Read + Send + 'static) -> Receiver<Result<String, String>> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut r = BufReader::new(r);
        loop {
            let mut buf = Vec::new();
            let res = (&mut r).take(MAX_LINE as u64 + 1).read_until(b'\n', &mut buf);
            let msg = match res {
                Err(e) => Err(format!("reading the engine's output: {e}")),
                Ok(0) => Err("the engine closed its output".to_string()),
                Ok(_) if buf.len() > MAX_LINE => Err(format!("answer line longer than {MAX_LINE} bytes")),
                Ok(_) if !buf.ends_with(b"\n") => Err(format!(
                    "truncated answer line (no newline before the end of output): '{}'",
                    clip(&String::from_utf8_lossy(&buf))
                )),
                Ok(_) => {
                    buf.pop();
                    String::from_utf8(buf).map_err(|_| "answer line is not UTF-8".to_string())
                }
            };
            let stop = msg.is_err();
            if tx.send(msg).is_err() || stop {
                return;
            }
        }
    });
    rx
}

/// Deadline for a line to arrive (the first answer to `hello` gets [`HELLO_TIMEOUT`]).
pub fn line_timeout() -> Duration {
    std::env::var("LWCBENCH_ENGINE_TIMEOUT_S")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .filter(|s| *s > 0.0)
        .map(Duration::from_secs_f64)
        .unwrap_or(Duration::from_secs(30))
}
/// How long an engine may take to answer `hello`.
pub const HELLO_TIMEOUT: Duration = Duration::from_secs(20);

/// [`LIST_TIMEOUT`], or `$LWCBENCH_ENGINE_LIST_TIMEOUT_S` if it is shorter (tests).
pub(super) fn list_timeout() -> Duration {
    std::env::var("LWCBENCH_ENGINE_LIST_TIMEOUT_S")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .filter(|s| *s > 0.0 && *s < LIST_TIMEOUT.as_secs_f64())
        .map(Duration::from_secs_f64)
        .unwrap_or(LIST_TIMEOUT)
}

/// The command line of an engine spec: a built-in name, or a shell command.
pub fn command_for(spec: &str) -> Result<Vec<String>, String> {
    command_candidates(spec).map(|mut c| c.remove(0))
}

/// Command lines to try in turn: a built-in engine may run under several interpreters, and
/// the first whose library is present wins.
pub(super) fn command_candidates(spec: &str) -> Result<Vec<Vec<String>>, String> {
    let s = spec.trim();
    if s.contains(' ') || s.contains('/') {
        return Ok(vec![vec!["sh".into(), "-c".into(), s.to_string()]]);
    }
    if s.eq_ignore_ascii_case("pycryptodome") {
        let script = find_script("pycryptodome")?.display().to_string();
        return Ok(pythons().into_iter().map(|p| vec![p, script.clone()]).collect());
    }
    Err(format!(
        "--engine: unknown engine '{s}' (built-in: {}; or give a command line, e.g. 'python3 my_engine.py')",
        BUILTIN.join(", ")
    ))
}

/// `$LWCBENCH_PYTHON` alone if set; else the project venv (here, then in the lwcbench tree found
/// at run time, `lwcbench_catalog::paths`),
/// `python3` on PATH and the system's /usr/bin/python3 (where Debian's python3-pycryptodome
/// lives), those that exist, in that order.
pub(super) fn pythons() -> Vec<String> {
    if let Some(p) = std::env::var_os("LWCBENCH_PYTHON") {
        return vec![p.to_string_lossy().into_owned()];
    }
    let mut out: Vec<String> =
        [Some(PathBuf::from(".venv/bin/python")), lwcbench_catalog::paths::find(".venv/bin/python")]
            .into_iter()
            .flatten()
            .filter(|p| p.is_file())
            .map(|p| p.display().to_string())
            .collect();
    out.push("python3".into());
    if Path::new("/usr/bin/python3").is_file() {
        out.push("/usr/bin/python3".into());
    }
    out
}

pub(super) fn find_script(name: &str) -> Result<PathBuf, String> {
    let mut cands = Vec::new();
    if let Some(d) = std::env::var_os("LWCBENCH_ENGINES") {
        cands.push(PathBuf::from(d).join(name).join("engine.py"));
    }
    cands.push(PathBuf::from("engines").join(name).join("engine.py"));
    let rel = format!("engines/{name}/engine.py");
    cands.extend(lwcbench_catalog::paths::roots().into_iter().map(|r| r.join(&rel)));
    cands.iter().find(|p| p.is_file()).cloned().ok_or_else(|| {
        format!(
            "engine script {rel} not found (looked in {}): set LWCBENCH_ENGINES to the folder holding {name}/engine.py, or {} to an lwcbench checkout",
            cands.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "),
            lwcbench_catalog::paths::ROOT_VAR
        )
    })
}

impl Drop for Engine {
    fn drop(&mut self) {
        // Closing stdin ends the session; give the engine a moment, then make sure it is gone.
        self.writer = None;
        if let Some(mut c) = self.child.take() {
            let t0 = Instant::now();
            while t0.elapsed() < Duration::from_secs(2) {
                if matches!(c.try_wait(), Ok(Some(_))) {
                    return;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            kill_group(&c);
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// SIGKILL to the engine's process group (it was started as the group leader).
pub(super) fn kill_group(c: &Child) {
    if let Ok(pid) = i32::try_from(c.id()) {
        // SAFETY: a signal to the group this process created for the engine.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
}

/// Longest engine stderr line kept for error messages; the rest of a longer line is dropped.
pub const MAX_STDERR_LINE: usize = 4096;

/// Reads the engine's stderr to its end in fixed-size chunks (an engine writing gigabytes
/// without a newline costs no memory) and keeps the last non-blank line, cut at
/// [`MAX_STDERR_LINE`] bytes.
pub(super) fn keep_stderr_tail(mut r: impl Read, tail: &Mutex<String>) {
    let mut cur: Vec<u8> = Vec::new();
    let mut chunk = [0u8; 8192];
    let publish = |line: &[u8]| {
        let t = String::from_utf8_lossy(line);
        if !t.trim().is_empty() {
            *tail.lock().unwrap_or_else(|e| e.into_inner()) = t.trim_end().to_string();
        }
    };
    loop {
        let n = match r.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        for &b in &chunk[..n] {
            if b == b'\n' {
                publish(&cur);
                cur.clear();
            } else if cur.len() < MAX_STDERR_LINE {
                cur.push(b);
            }
        }
    }
    publish(&cur);
}

#[cfg(test)]
#[test]
pub(super) fn stderr_without_newline_is_bounded() {
    // 64 MiB of 'x' without a newline, then a short line: the kept tail is that line; the
    // long one never grows past MAX_STDERR_LINE, so a chatty engine cannot fill the memory.
    let tail = Mutex::new(String::new());
    let long = std::io::repeat(b'x').take(64 << 20);
    keep_stderr_tail(long.chain(&b"\nlast words\n"[..]), &tail);
    assert_eq!(*tail.lock().unwrap(), "last words");
    let tail = Mutex::new(String::new());
    keep_stderr_tail(std::io::repeat(b'y').take(1 << 20), &tail);
    assert_eq!(tail.lock().unwrap().len(), MAX_STDERR_LINE);
}
