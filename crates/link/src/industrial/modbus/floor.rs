//! The receiving proxy's replay floor: the highest counter it accepted, kept in a file so a
//! restarted proxy refuses a handshake from before the restart, and tells its peer how far it
//! accepted (the peer's anti-rollback check, docs/link.md "The hop protocol").
//!
//! ```text
//! lwcbench-modbus-replay v1
//! key <the pair key's fingerprint>
//! device <receiving device id> accepted <highest counter accepted, or none>
//! ```
//! Created at pairing ([`provision_pair`], `accepted none`); a missing file is refused, never
//! read as "nothing accepted yet": a lost replay state cannot be told from a new one. Written
//! durably (temp file, fsync, rename) before a write function code is forwarded, at most every
//! [`SAVE_EVERY`] while other frames arrive, and on a clean stop.
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::device::counter::write_durable;
use crate::industrial::modbus::pair::{devices, Side};
use crate::wire::keys::Fingerprinted;

/// Line 1 of a Modbus replay state file.
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
    /// Open the file at `path` (it must exist); returns it and the floor (None: nothing
    /// accepted since pairing).
    pub fn open(path: &Path, key: &impl Fingerprinted, device: u32) -> Result<(Floor, Option<u64>), String> {
        let p = path.display();
        let fingerprint = key.fingerprint();
        // Three short lines; 4 KiB is far above them.
        let Some(text) = crate::state_file::read(path, "replay state", 4096)? else {
            return Err(format!(
                "replay state {p} does not exist: it is created beside the pair key by `lwcbench link \
                 provision --protocol modbus`; a lost replay state cannot be recreated safely: provision a new \
                 pair key (under a new master, or another pair number)"
            ));
        };
        let saved = parse(&text, &fingerprint, device).map_err(|e| format!("replay state {p}: {e}"))?;
        Ok((Floor { path: path.to_path_buf(), fingerprint, device, saved }, saved))
    }

    /// Create the file at `path` with nothing accepted (pairing); an existing name is refused.
    pub fn create(path: &Path, key: &impl Fingerprinted, device: u32) -> Result<(), String> {
        // symlink_metadata: a dangling symlink is a name in use too.
        if std::fs::symlink_metadata(path).is_ok() {
            return Err(format!("replay state {} exists; pairing never replaces one", path.display()));
        }
        let text = format!("{MAGIC}\nkey {}\ndevice {device} accepted none\n", key.fingerprint());
        write_durable(path, text.as_bytes()).map_err(|e| format!("replay state {}: cannot write: {e}", path.display()))
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

/// The default replay state of `side` of `pair` beside the key file: KEY_FILE.modbus-PAIR-SIDE.replay.
pub fn replay_path(key_file: &Path, pair: u32, side: Side) -> PathBuf {
    let mut p = key_file.as_os_str().to_os_string();
    p.push(format!(".modbus-{pair}-{}.replay", side.name()));
    PathBuf::from(p)
}

/// Pairing: create both sides' replay state files of `pair` beside the pair key `key_file`
/// (bound to `key`'s fingerprint), nothing accepted. `lwcbench link provision --protocol modbus`
/// calls it. Returns the two paths (master side, slave side).
pub fn provision_pair(key_file: &Path, key: &impl Fingerprinted, pair: u32) -> Result<[PathBuf; 2], String> {
    let mut out = Vec::new();
    for side in [Side::Master, Side::Slave] {
        let (_, recv) = devices(pair, side)?;
        let p = replay_path(key_file, pair, side);
        Floor::create(&p, key, recv)?;
        out.push(p);
    }
    Ok([out[0].clone(), out[1].clone()])
}

fn parse(text: &str, fp: &str, device: u32) -> Result<Option<u64>, String> {
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
    let n = match n {
        "none" => None,
        n => Some(
            n.parse::<u64>()
                .ok()
                .filter(|&c| c <= crate::wire::frame::MAX_COUNTER)
                .ok_or_else(|| format!("line 3: '{}' is not a counter or 'none'", crate::input::shown(n)))?,
        ),
    };
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
        assert!(Floor::open(&p, &m, 1).unwrap_err().contains("does not exist"), "a missing file is refused");
        Floor::create(&p, &m, 1).unwrap();
        assert_eq!(
            std::fs::read_to_string(&p).unwrap(),
            format!("{MAGIC}\nkey 32f4fc68107ab4dd67b987d1614f906b\ndevice 1 accepted none\n")
        );
        assert!(Floor::create(&p, &m, 1).unwrap_err().contains("exists"), "pairing never replaces a state");
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
        let fp = m.fingerprint();
        std::fs::write(&p, format!("{MAGIC}\nkey {fp}\ndevice 1 accepted 9223372036854775808\n")).unwrap();
        assert!(Floor::open(&p, &m, 1).unwrap_err().contains("line 3"), "above 2^63 - 1");
    }

    /// Pairing writes both sides' files beside the key, named as the proxies look for them,
    /// each for the device its side receives (pair 3: 0x4D420006 master → slave, 0x4D420007 back).
    #[test]
    fn provision_pair_writes_both_sides() {
        let d = tempfile::tempdir().unwrap();
        let key = d.path().join("k");
        let m = MasterKey::from_bytes([7; 32]);
        let [ms, ss] = provision_pair(&key, &m, 3).unwrap();
        assert_eq!(ms, d.path().join("k.modbus-3-master.replay"));
        assert_eq!(ss, d.path().join("k.modbus-3-slave.replay"));
        assert_eq!(Floor::open(&ms, &m, 0x4D42_0007).unwrap().1, None);
        assert_eq!(Floor::open(&ss, &m, 0x4D42_0006).unwrap().1, None);
        assert!(provision_pair(&key, &m, 3).is_err(), "never twice");
    }
}
