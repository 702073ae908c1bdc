//! `lwcbench link provision`: a device's own key file and its counter state, from the master
//! (docs/security.md "Key hierarchy").
//!
//! A device key yields the very cipher keys the gateway derives for that device from the
//! master, so the device's counters must continue where the master's holder left them, and the
//! master's holder must never seal as that device again — two counter authorities for one key
//! would repeat nonces. So provisioning
//! 1. leases the device's lines in the master's counter state (refused while a process seals as
//!    it) and reserves one counter there: everything the master's holder used lies below it;
//! 2. writes `DEVICE.key.counters` starting at that counter, for a Modbus pair both proxies'
//!    replay states `DEVICE.key.modbus-PAIR-{master,slave}.replay` (nothing accepted), then
//!    `DEVICE.key` (0600, never over an existing file);
//! 3. records the device in the master's registry `MASTER.provisioned`; every command holding the
//!    master refuses to seal as a registered device, and a second provisioning of it is refused.
//!
//! Registry file:
//! ```text
//! lwcbench-link-provisioned v1
//! key <the master key's fingerprint>
//! PROTOCOL DEVICE DEVICE_KEY_FINGERPRINT   (one line per provisioned device)
//! ```
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::device::counter::{self, write_durable, CounterStore};
use crate::wire::frame::Family;
use crate::wire::keys::MasterKey;

/// Line 1 of a provisioning registry.
pub const MAGIC: &str = "lwcbench-link-provisioned v1";
/// Bounds what is read of a registry (100,000 devices take ~6 MB).
const MAX_REGISTRY_BYTES: u64 = 32 << 20;

/// The registry of the master in `key_file`: `KEY_FILE.provisioned`.
pub fn registry_path(key_file: &Path) -> PathBuf {
    let mut s = key_file.as_os_str().to_os_string();
    s.push(".provisioned");
    PathBuf::from(s)
}

/// The link device ids whose counters a device key of (`family`, `device`) seals with: the
/// device itself, or both directions of a Modbus proxy pair.
pub fn counter_devices(family: Family, device: u32) -> Result<Vec<u32>, String> {
    match family {
        Family::Modbus => {
            let (a, b) =
                crate::industrial::modbus::proxy::devices(device, crate::industrial::modbus::proxy::Side::Master)?;
            Ok(vec![a, b])
        }
        _ => Ok(vec![device]),
    }
}

/// The provisioned devices of the master in `key_file` (empty when it has no registry), as
/// (protocol, device) → device key fingerprint.
pub fn registered(key_file: &Path, master: &MasterKey) -> Result<BTreeMap<(Family, u32), String>, String> {
    let path = registry_path(key_file);
    let p = path.display();
    let Some(text) = crate::state_file::read(&path, "registry", MAX_REGISTRY_BYTES)? else {
        return Ok(BTreeMap::new());
    };
    let mut lines = text.lines();
    if lines.next().map(str::trim) != Some(MAGIC) {
        return Err(format!("registry {p}: line 1: expected '{MAGIC}'"));
    }
    let fp = master.fingerprint();
    if lines.next().map(str::trim) != Some(format!("key {fp}").as_str()) {
        return Err(format!("registry {p}: line 2: not the registry of this master key (expected 'key {fp}')"));
    }
    let mut out = BTreeMap::new();
    for (i, l) in lines.enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let n = i + 3;
        let w: Vec<&str> = l.split_whitespace().collect();
        let bad = || format!("registry {p}: line {n}: expected 'PROTOCOL DEVICE FINGERPRINT'");
        if w.len() != 3 {
            return Err(bad());
        }
        let fam = Family::parse(w[0]).map_err(|_| bad())?;
        let dev: u32 = w[1].parse().map_err(|_| bad())?;
        if out.insert((fam, dev), w[2].to_string()).is_some() {
            return Err(format!("registry {p}: line {n}: {} {dev} again", fam.label()));
        }
    }
    Ok(out)
}

/// Refuse to seal as a provisioned device with the master (its counters are its own file's).
pub fn refuse_provisioned(key_file: &Path, master: &MasterKey, family: Family, devices: &[u32]) -> Result<(), String> {
    let reg = registered(key_file, master)?;
    if reg.is_empty() {
        return Ok(());
    }
    if let Some(d) = devices.iter().find(|d| reg.contains_key(&(family, **d))) {
        return Err(format!(
            "--key-file {}: {} device {d} is provisioned to its own device key (registry {}); its counters are that \
             key's, so the master's holder does not seal as it (choose other device ids)",
            key_file.display(),
            family.label(),
            registry_path(key_file).display()
        ));
    }
    Ok(())
}

/// What provisioning wrote.
#[derive(Debug)]
pub struct Provisioned {
    /// The device key file.
    pub key_file: PathBuf,
    /// Its counter state file.
    pub state: PathBuf,
    /// The device key's fingerprint.
    pub fingerprint: String,
    /// First counter of each link device in the new state.
    pub starts: Vec<(u32, u64)>,
    /// A Modbus pair's replay state files (master side, slave side); empty otherwise.
    pub replay: Vec<PathBuf>,
}

/// Write the device key of (`family`, `device`) to `out` with its counter state, under the
/// master in `master_file` (see the module comment for the steps and why).
pub fn provision(
    master_file: &Path,
    family: Family,
    device: u32,
    ciphers: Option<Vec<u8>>,
    out: &Path,
) -> Result<Provisioned, String> {
    let master = MasterKey::read(master_file)?;
    let state = counter::beside_key(out);
    let floors = pair_floors(out, family, device)?;
    for p in [out, state.as_path()].into_iter().chain(floors.iter().map(PathBuf::as_path)) {
        if std::fs::symlink_metadata(p).is_ok() {
            return Err(format!("--out: {} exists; provisioning never replaces a key or its state", p.display()));
        }
    }
    // The master's counter state: leasing the devices refuses a process sealing as them now
    // and serialises two provisionings of one device.
    let master_state = counter::beside_key(master_file);
    let store = CounterStore::open(&master_state, 1, &master)?;
    if !store.existed() {
        return Err(format!(
            "--key-file {}: its counter state {} is missing (every key this tool writes has one): restore it first",
            master_file.display(),
            master_state.display()
        ));
    }
    let devs = counter_devices(family, device)?;
    for &d in &devs {
        store.claim(d)?;
    }
    if let Some(fp) = registered(master_file, &master)?.get(&(family, device)) {
        return Err(format!(
            "--device: {} device {device} is already provisioned (device key {fp}); a second key file would be a \
             second counter authority for the same keys: use the existing file (a lost one needs a new master key)",
            family.label()
        ));
    }
    // One counter reserved per device: the master's holder used only counters below it.
    let starts: Vec<(u32, u64)> =
        devs.iter().map(|&d| Ok((d, store.reserve(d)?.end))).collect::<Result<_, String>>()?;
    let dk = master.device(family, device).with_ciphers(ciphers);
    let fingerprint = dk.fingerprint();
    let mut text = format!("{}\nkey {fingerprint}\n", counter::MAGIC);
    for (d, n) in &starts {
        text.push_str(&format!("{d} {n}\n"));
    }
    write_durable(&state, text.as_bytes()).map_err(|e| format!("--out: cannot write {}: {e}", state.display()))?;
    // Nothing half-written: a failed step removes what the earlier ones wrote.
    let undo = |also_key: bool| {
        if also_key {
            let _ = std::fs::remove_file(out);
        }
        for p in floors.iter().chain([&state]) {
            let _ = std::fs::remove_file(p);
        }
    };
    // A Modbus pair's replay states are created here, at pairing: a proxy refuses to start
    // without its own, so a lost one is never mistaken for "nothing accepted yet".
    if family == Family::Modbus {
        if let Err(e) = crate::industrial::modbus::floor::provision_pair(out, &dk, device) {
            undo(false);
            return Err(format!("--out: {e}"));
        }
    }
    if let Err(e) = dk.write_new(out) {
        undo(false);
        return Err(e);
    }
    if let Err(e) = register(master_file, &master, family, device, &fingerprint) {
        undo(true);
        return Err(e);
    }
    Ok(Provisioned { key_file: out.to_path_buf(), state, fingerprint, starts, replay: floors })
}

/// The replay state files a Modbus pair key gets beside it (master side, slave side); none for
/// other protocols.
pub fn pair_floors(out: &Path, family: Family, device: u32) -> Result<Vec<PathBuf>, String> {
    use crate::industrial::modbus::{floor, proxy::Side};
    if family != Family::Modbus {
        return Ok(Vec::new());
    }
    // devices() refuses a pair number whose link device ids would overflow.
    crate::industrial::modbus::proxy::devices(device, Side::Master)?;
    Ok([Side::Master, Side::Slave].map(|side| floor::replay_path(out, device, side)).to_vec())
}

/// Add (`family`, `device`) to the registry, durably (the caller holds the device's leases).
fn register(master_file: &Path, master: &MasterKey, family: Family, device: u32, fp: &str) -> Result<(), String> {
    let path = registry_path(master_file);
    let mut reg = registered(master_file, master)?;
    reg.insert((family, device), fp.to_string());
    let mut text = format!("{MAGIC}\nkey {}\n", master.fingerprint());
    for ((f, d), k) in &reg {
        text.push_str(&format!("{} {d} {k}\n", f.label()));
    }
    write_durable(&path, text.as_bytes()).map_err(|e| format!("registry {}: cannot write: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::frame::Proto;
    use crate::wire::keys::{DeviceKey, LinkKey};

    fn master_in(dir: &Path) -> (PathBuf, MasterKey) {
        let k = dir.join("master.key");
        let (m, _) = counter::open_session(&k, &counter::beside_key(&k), 64).unwrap();
        (k, m)
    }

    fn device_key(p: &Path) -> DeviceKey {
        match LinkKey::read(p).unwrap() {
            LinkKey::Device(d) => d,
            LinkKey::Master(_) => panic!("a master"),
        }
    }

    /// The device key opens what the gateway derives for its device only; its counters start
    /// above what the master's holder reserved; a second provisioning and sealing as the device
    /// with the master are refused.
    #[test]
    fn provisioning_continues_the_counters_and_registers_the_device() {
        let d = tempfile::tempdir().unwrap();
        let (mk, m) = master_in(d.path());
        // The master's holder sealed as device 3 first (a session): counters 0..64 reserved.
        let st = CounterStore::open(&counter::beside_key(&mk), 64, &m).unwrap();
        assert_eq!(st.reserve(3).unwrap(), 0..64);
        drop(st);
        let out = d.path().join("dev3.key");
        let p = provision(&mk, Family::Sensor, 3, None, &out).unwrap();
        assert_eq!(p.starts, vec![(3, 65)]); // 0..64 used, 64 reserved by provisioning
        let text = std::fs::read_to_string(counter::beside_key(&out)).unwrap();
        assert_eq!(text, format!("{}\nkey {}\n3 65\n", counter::MAGIC, p.fingerprint));
        let dk = device_key(&out);
        assert_eq!(*dk.cipher_key(Proto::Sensor, 3, 1, 16).unwrap(), *m.cipher_key(Proto::Sensor, 3, 1, 16));
        assert!(dk.cipher_key(Proto::Sensor, 4, 1, 16).is_err());
        let again = provision(&mk, Family::Sensor, 3, None, &d.path().join("other.key")).unwrap_err();
        assert!(again.contains("already provisioned"), "{again}");
        assert!(!d.path().join("other.key").exists() && !d.path().join("other.key.counters").exists());
        let e = refuse_provisioned(&mk, &m, Family::Sensor, &[1, 2, 3]).unwrap_err();
        assert!(e.contains("sensor device 3 is provisioned"), "{e}");
        refuse_provisioned(&mk, &m, Family::Goose, &[3]).unwrap();
        refuse_provisioned(&mk, &m, Family::Sensor, &[4]).unwrap();
        // existing output refused, nothing replaced
        let e = provision(&mk, Family::Sensor, 5, None, &out).unwrap_err();
        assert!(e.contains("exists"), "{e}");
    }

    /// A Modbus pair's key covers both directions' counters.
    #[test]
    fn a_modbus_pair_gets_both_directions() {
        let d = tempfile::tempdir().unwrap();
        let (mk, _) = master_in(d.path());
        let p = provision(&mk, Family::Modbus, 2, None, &d.path().join("pair2.key")).unwrap();
        assert_eq!(p.starts, vec![(0x4D42_0004, 1), (0x4D42_0005, 1)]);
    }

    /// Pairing creates both proxies' replay states beside the pair key, where the proxies look
    /// by default, bound to the pair key: the master side receives slave → master (0x4D420005 =
    /// 1296171013), the slave side master → slave (0x4D420004 = 1296171012); nothing accepted.
    #[test]
    fn a_modbus_pair_gets_its_replay_states_at_pairing() {
        use crate::industrial::modbus::floor::{Floor, MAGIC as REPLAY_MAGIC};
        let d = tempfile::tempdir().unwrap();
        let (mk, _) = master_in(d.path());
        let out = d.path().join("pair2.key");
        let p = provision(&mk, Family::Modbus, 2, None, &out).unwrap();
        let (ms, ss) =
            (d.path().join("pair2.key.modbus-2-master.replay"), d.path().join("pair2.key.modbus-2-slave.replay"));
        assert_eq!(p.replay, vec![ms.clone(), ss.clone()]);
        let fp = device_key(&out).fingerprint();
        assert_eq!(
            std::fs::read_to_string(&ms).unwrap(),
            format!("{REPLAY_MAGIC}\nkey {fp}\ndevice 1296171013 accepted none\n")
        );
        assert_eq!(
            std::fs::read_to_string(&ss).unwrap(),
            format!("{REPLAY_MAGIC}\nkey {fp}\ndevice 1296171012 accepted none\n")
        );
        assert_eq!(Floor::open(&ss, &device_key(&out), 0x4D42_0004).unwrap().1, None);
        // Other protocols get none.
        let s = provision(&mk, Family::Sensor, 2, None, &d.path().join("s2.key")).unwrap();
        assert!(s.replay.is_empty());
        assert!(!d.path().join("s2.key.modbus-2-master.replay").exists());
    }

    /// A replay state already beside the name refuses the pairing before anything is written or
    /// registered (pairing never replaces a replay state: it may hold a floor).
    #[test]
    fn an_existing_replay_state_refuses_the_pairing() {
        let d = tempfile::tempdir().unwrap();
        let (mk, m) = master_in(d.path());
        let out = d.path().join("pair4.key");
        let slave_side = d.path().join("pair4.key.modbus-4-slave.replay");
        std::fs::write(&slave_side, "kept").unwrap();
        let e = provision(&mk, Family::Modbus, 4, None, &out).unwrap_err();
        assert!(e.contains("pair4.key.modbus-4-slave.replay exists"), "{e}");
        assert_eq!(std::fs::read_to_string(&slave_side).unwrap(), "kept");
        for f in ["pair4.key", "pair4.key.counters", "pair4.key.modbus-4-master.replay"] {
            assert!(!d.path().join(f).exists(), "{f} written");
        }
        assert!(registered(&mk, &m).unwrap().is_empty());
    }

    /// A device in use by a process holding the master cannot be provisioned under it.
    #[test]
    fn a_device_in_use_is_not_provisioned() {
        let d = tempfile::tempdir().unwrap();
        let (mk, m) = master_in(d.path());
        let st = CounterStore::open(&counter::beside_key(&mk), 64, &m).unwrap();
        st.claim(7).unwrap();
        let e = provision(&mk, Family::Sensor, 7, None, &d.path().join("d7.key")).unwrap_err();
        assert!(e.contains("device 7 is in use"), "{e}");
        assert!(!d.path().join("d7.key").exists());
    }
}
