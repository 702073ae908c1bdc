//! The one reader of the line-oriented state files (counter state, accepted marks, Modbus replay
//! state, provisioning registry): a magic line, a `key FINGERPRINT` line, then one record a
//! line. Each format parses its own lines; this reads the file bounded — at most a given size,
//! [`MAX_LINES`] lines of at most [`MAX_LINE`] bytes — so no file, however it was made, costs
//! more than its bound in memory, and every refusal is one line naming the file and the line.
use std::io::Read;
use std::path::Path;

/// Longest line of a state file in bytes: its records are a few words and numbers (a
/// fingerprint is 32 hex digits), so a longer line is not one of them.
pub const MAX_LINE: usize = 1024;

/// Most lines of a state file: one per device (or per protocol and device), far above any fleet
/// the link serves, and a bound on the maps built from them.
pub const MAX_LINES: usize = 1 << 20;

/// The text of the state file at `path` (None: it does not exist), read whole but at most
/// `max_bytes`, as UTF-8, with [`check_lines`]. Errors read "`what` PATH: …", one line.
pub fn read(path: &Path, what: &str, max_bytes: u64) -> Result<Option<String>, String> {
    read_named(path, path, what, max_bytes)
}

/// [`read`] of the file at `path`, named `shown` in errors (the name the user gave, where
/// `path` is what it resolves to).
pub fn read_named(path: &Path, shown: &Path, what: &str, max_bytes: u64) -> Result<Option<String>, String> {
    let p = crate::input::shown(&shown.display().to_string());
    let f = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("{what} {p}: {e}")),
    };
    let mut text = String::new();
    f.take(max_bytes + 1).read_to_string(&mut text).map_err(|e| format!("{what} {p}: cannot read it as text: {e}"))?;
    if text.len() as u64 > max_bytes {
        return Err(format!("{what} {p}: larger than {}", size(max_bytes)));
    }
    check_lines(&text).map_err(|e| format!("{what} {p}: {e}"))?;
    Ok(Some(text))
}

/// Refuse a text of more than [`MAX_LINES`] lines or with a line longer than [`MAX_LINE`]
/// bytes, naming the first such line.
pub fn check_lines(text: &str) -> Result<(), String> {
    for (n, l) in numbered(text) {
        if n > MAX_LINES {
            return Err(format!("line {n}: more than {MAX_LINES} lines"));
        }
        if l.len() > MAX_LINE {
            return Err(format!("line {n}: longer than {MAX_LINE} bytes"));
        }
    }
    Ok(())
}

/// The lines of `text` numbered from 1, as an editor shows them.
pub fn numbered(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines().enumerate().map(|(i, l)| (i + 1, l))
}

/// A size limit as a refusal names it: whole MiB, else bytes.
fn size(bytes: u64) -> String {
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{bytes} bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_file_is_none_and_a_present_one_its_text() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("s");
        assert_eq!(read(&p, "counter state", 100).unwrap(), None);
        std::fs::write(&p, "magic\nkey ab\n1 2\n").unwrap();
        assert_eq!(read(&p, "counter state", 100).unwrap().as_deref(), Some("magic\nkey ab\n1 2\n"));
    }

    /// Each refusal is one line: what the file is, its path, the line.
    #[test]
    fn bounds_are_refused_naming_file_and_line() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("s");
        let shown = p.display();
        // 1025 bytes on line 3 ("1 ", 1022 zeros, "1"): one byte over the bound.
        std::fs::write(&p, format!("magic\nkey ab\n1 {}\n", "0".repeat(1022) + "1")).unwrap();
        assert_eq!(
            read(&p, "counter state", 1 << 20).unwrap_err(),
            format!("counter state {shown}: line 3: longer than 1024 bytes")
        );
        // 1024 bytes ("1 ", 1021 zeros, "1") is within it.
        std::fs::write(&p, format!("magic\nkey ab\n1 {}\n", "0".repeat(1021) + "1")).unwrap();
        assert!(read(&p, "counter state", 1 << 20).is_ok());
        // 2^20 + 1 lines: the last one is over.
        std::fs::write(&p, "\n".repeat((1 << 20) + 1)).unwrap();
        assert_eq!(
            read(&p, "registry", 64 << 20).unwrap_err(),
            format!("registry {shown}: line 1048577: more than 1048576 lines")
        );
        std::fs::write(&p, "x".repeat(101)).unwrap();
        assert_eq!(read(&p, "replay state", 100).unwrap_err(), format!("replay state {shown}: larger than 100 bytes"));
        std::fs::write(&p, [b'a', 0xff, b'\n']).unwrap();
        assert!(read(&p, "accepted marks", 100)
            .unwrap_err()
            .starts_with(&format!("accepted marks {shown}: cannot read it as text: ")));
        assert_eq!(size(64 << 20), "64 MiB");
        assert_eq!(size(4096), "4096 bytes");
    }

    #[test]
    fn lines_are_numbered_from_one() {
        let v: Vec<(usize, &str)> = numbered("a\n\nb").collect();
        assert_eq!(v, [(1, "a"), (2, ""), (3, "b")]);
    }
}
