//! The receiving proxy's replay floor: the highest counter it accepted, kept in a file so a
//! restarted proxy refuses frames recorded before the restart (its replay window starts empty).
//!
//! ```text
//! lwcbench-modbus-replay v1
//! key <the master key's fingerprint>
//! device <receiving device id> accepted <highest counter accepted>
//! ```
//! Written durably (temp file, fsync, rename) at most every [`SAVE_EVERY`] while frames arrive
//! and on a clean stop; after a crash the frames of the last interval are the exposure.
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::device::counter::write_durable;
use crate::wire::keys::Fingerprinted;

pub const MAGIC: &str = "lwcbench-modbus-replay v1";
/// Longest time between an accepted frame and its record on disk (while running).
pub const SAVE_EVERY: Duration = Duration::from_millis(100);

/// The replay state file of a receiving device.
#[derive(Debug)]
pub struct Floor {
    path: PathBuf,
    fingerprint: String,
    device: u32,
    saved: Option<u64>,
}

impl Floor {
    /// Open the file at `path` (missing: nothing accepted yet); returns it and the floor.
    pub fn open(path: &Path, key: &impl Fingerprinted, device: u32) -> Result<(Floor, Option<u64>), String> {
        let p = path.display();
        let fingerprint = key.fingerprint();
        let saved = match std::fs::File::open(path) {
            Ok(f) => {
                let mut text = String::new();
                f.take(4097).read_to_string(&mut text).map_err(|e| format!("replay state {p}: {e}"))?;
                if text.len() > 4096 {
                    return Err(format!("replay state {p}: too large to be a replay state file"));
                }
                Some(parse(&text, &fingerprint, device).map_err(|e| format!("replay state {p}: {e}"))?)
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(format!("replay state {p}: {e}")),
        };
        Ok((Floor { path: path.to_path_buf(), fingerprint, device, saved }, saved))
    }

    /// Record `top` durably unless it is already recorded.
    pub fn save(&mut self, top: u64) -> Result<(), String> {
        if self.saved.is_some_and(|s| s >= top) {
            return Ok(());
        }
        let text = format!("{MAGIC}\nkey {}\ndevice {} accepted {top}\n", self.fingerprint, self.device);
        write_durable(&self.path, text.as_bytes())
            .map_err(|e| format!("replay state {}: cannot write: {e}", self.path.display()))?;
        self.saved = Some(top);
        Ok(())
    }
}

fn parse(text: &str, fp: &str, device: u32) -> Result<u64, String> {
    let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    if lines.first() != Some(&MAGIC) {
        return Err(format!("line 1: expected '{MAGIC}'"));
    }
    match lines.get(1).and_then(|l| l.strip_prefix("key ")) {
        Some(k) if k == fp => {}
        Some(k) => return Err(format!("line 2: written for another key (fingerprint {k}, this key's is {fp})")),
        None => return Err("line 2: expected 'key FINGERPRINT'".into()),
    }
    let want = format!("device {device} accepted ");
    let n =
        lines.get(2).and_then(|l| l.strip_prefix(&want)).ok_or_else(|| format!("line 3: expected '{want}COUNTER'"))?;
    let n = n.parse::<u64>().map_err(|_| format!("line 3: '{n}' is not a counter"))?;
    if lines.len() > 3 {
        return Err("line 4: unexpected content".into());
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::keys::MasterKey;

    #[test]
    fn floor_roundtrip_and_refusals() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("r");
        let m = MasterKey::from_bytes([7; 32]);
        let (mut f, floor) = Floor::open(&p, &m, 1).unwrap();
        assert_eq!(floor, None);
        f.save(41).unwrap();
        f.save(40).unwrap(); // never lowered
                             // Key [7; 32]'s fingerprint as in device/counter.rs's tests (computed with Python's hmac).
        assert_eq!(
            std::fs::read_to_string(&p).unwrap(),
            format!("{MAGIC}\nkey 32f4fc68107ab4dd67b987d1614f906b\ndevice 1 accepted 41\n")
        );
        assert_eq!(Floor::open(&p, &m, 1).unwrap().1, Some(41));
        assert!(Floor::open(&p, &m, 2).unwrap_err().contains("line 3: expected 'device 2 accepted COUNTER'"));
        let e = Floor::open(&p, &MasterKey::from_bytes([8; 32]), 1).unwrap_err();
        assert!(e.contains("line 2: written for another key"), "{e}");
        std::fs::write(&p, "nope\n").unwrap();
        assert!(Floor::open(&p, &m, 1).unwrap_err().contains("line 1"));
    }
}
