//! The link's key hierarchy (docs/security.md "Key hierarchy"): a master key that only gateways
//! hold, a device key per (protocol, device) that `lwcbench link provision` writes for one device
//! or Modbus proxy pair, and a cipher key per (usage, cipher) under each device key — all
//! HKDF-SHA256 (RFC 5869) with labelled `info`:
//!
//! ```text
//! device key   = HKDF(salt = "lwcbench-link v3", IKM = master key (32 bytes),
//!                     info = "lwcbench-link device key" ‖ 0x00 ‖ protocol ‖ 0x00 ‖ device id (u32 BE), L = 32)
//! cipher key   = HKDF(salt = "lwcbench-link v3", IKM = device key,
//!                     info = "lwcbench-link cipher key" ‖ 0x00 ‖ usage ‖ 0x00 ‖ cipher id (1 byte), L = key length)
//! ```
//! protocol ∈ {sensor, video, modbus, goose} (for Modbus the device id is the proxy pair);
//! usage ∈ {sensor, video, modbus/m->s, modbus/s->m, goose} (the frame's type, [`Proto::label`]).
//! So one device never uses one key with two algorithms or two protocols, and a device key
//! file yields its own device's keys only (HKDF is one-way: it cannot give the master).
//! A key's fingerprint (recorded in counter state files, never secret-bearing) is
//! `HKDF-SHA256(salt = "lwcbench-link v1", IKM = the key, info = "lwcbench-link key id", L = 16)`.
//! Master key file: two lines, `lwcbench-link-master-key v1` and 64 hex digits. Device key file:
//! `lwcbench-link-device-key v1`, then `protocol P`, `device N`, `ciphers all|ID,ID..`,
//! `master FINGERPRINT`, `key HEX`. Both mode 0600 (refused if group or others may read them).
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;

use hkdf::Hkdf;
use sha2::Sha256;
use zeroize::Zeroizing;

use crate::wire::frame::{Family, Proto};

/// Line 1 of a master key file.
pub const KEYFILE_MAGIC: &str = "lwcbench-link-master-key v1";
/// Line 1 of a device key file.
pub const DEVICE_KEYFILE_MAGIC: &str = "lwcbench-link-device-key v1";
/// Salt of the fingerprint (unchanged since v1, so existing counter states keep their key).
pub const SALT: &[u8] = b"lwcbench-link v1";
/// Salt of the hierarchy's derivations.
pub const SALT_V3: &[u8] = b"lwcbench-link v3";
/// HKDF info prefix of a device key (master → device key).
pub const DEVICE_INFO: &[u8] = b"lwcbench-link device key";
/// HKDF info prefix of a cipher key (device key → cipher key).
pub const CIPHER_INFO: &[u8] = b"lwcbench-link cipher key";
/// HKDF info of a key's fingerprint.
pub const ID_INFO: &[u8] = b"lwcbench-link key id";
/// HKDF info prefix of an OSCORE Master Secret (device key → OSCORE, docs/security.md).
pub const OSCORE_INFO: &[u8] = b"lwcbench-link oscore master secret";
/// HKDF info prefix of an EDHOC static key candidate (docs/security.md "EDHOC credentials").
pub const EDHOC_INFO: &[u8] = b"lwcbench-link edhoc static key";
/// HKDF info prefix of an EDHOC static X25519 key (`--edhoc-suite 0`, docs/security.md "EDHOC
/// credentials"): its own prefix, so no X25519 key is ever a P-256 key's bytes.
pub const EDHOC_X25519_INFO: &[u8] = b"lwcbench-link edhoc x25519 static key";

/// A key with a fingerprint: what a counter or replay state file is bound to.
pub trait Fingerprinted {
    /// 32 hex digits naming the key without revealing it.
    fn fingerprint(&self) -> String;
}

impl Fingerprinted for MasterKey {
    fn fingerprint(&self) -> String {
        MasterKey::fingerprint(self)
    }
}

impl Fingerprinted for DeviceKey {
    fn fingerprint(&self) -> String {
        DeviceKey::fingerprint(self)
    }
}

impl Fingerprinted for LinkKey {
    fn fingerprint(&self) -> String {
        LinkKey::fingerprint(self)
    }
}

/// Where cipher keys come from: a master (any device's), a device key (its own only).
pub trait KeySource: Fingerprinted {
    /// The key of cipher `cipher` (`len` bytes) for frames of type `proto` of `device` (for
    /// Modbus: the proxy pair).
    fn cipher_key(&self, proto: Proto, device: u32, cipher: u8, len: usize) -> Result<Zeroizing<Vec<u8>>, String>;
}

impl KeySource for MasterKey {
    fn cipher_key(&self, proto: Proto, device: u32, cipher: u8, len: usize) -> Result<Zeroizing<Vec<u8>>, String> {
        Ok(MasterKey::cipher_key(self, proto, device, cipher, len))
    }
}

impl KeySource for DeviceKey {
    fn cipher_key(&self, proto: Proto, device: u32, cipher: u8, len: usize) -> Result<Zeroizing<Vec<u8>>, String> {
        DeviceKey::cipher_key(self, proto, device, cipher, len)
    }
}

impl KeySource for LinkKey {
    fn cipher_key(&self, proto: Proto, device: u32, cipher: u8, len: usize) -> Result<Zeroizing<Vec<u8>>, String> {
        LinkKey::cipher_key(self, proto, device, cipher, len)
    }
}

/// HKDF-SHA256 expand of `ikm` under `SALT_V3` with info `prefix ‖ 0 ‖ label ‖ 0 ‖ tail`.
fn derive(ikm: &[u8], prefix: &[u8], label: &str, tail: &[u8], len: usize) -> Zeroizing<Vec<u8>> {
    let hk = Hkdf::<Sha256>::new(Some(SALT_V3), ikm);
    let mut info = Vec::with_capacity(prefix.len() + label.len() + 2 + tail.len());
    info.extend_from_slice(prefix);
    info.push(0);
    info.extend_from_slice(label.as_bytes());
    info.push(0);
    info.extend_from_slice(tail);
    let mut okm = Zeroizing::new(vec![0u8; len]);
    hk.expand(&info, &mut okm).expect("key lengths are far below HKDF's 255*32 limit");
    okm
}

/// HKDF info prefix of a carrier key (cipher key → the key of one carrier epoch).
pub const CARRIER_INFO: &[u8] = b"lwcbench-link carrier key";

/// The key of frames that ride a carrier with its own counter (`crate::wire::compact`):
/// `HKDF(salt = "lwcbench-link v3", IKM = the cipher key of (proto, device, cipher),
/// info = "lwcbench-link carrier key" ‖ 0x00 ‖ carrier ‖ 0x00 ‖ epoch (u32 BE), L = len)`.
/// Each join epoch (a LoRaWAN re-join restarts FCnt) gets its own key, and no carrier key is
/// ever the key of the link's own frames.
pub fn carrier_key(
    source: &impl KeySource,
    proto: Proto,
    device: u32,
    cipher: u8,
    len: usize,
    carrier: &str,
    epoch: u32,
) -> Result<Zeroizing<Vec<u8>>, String> {
    let ck = source.cipher_key(proto, device, cipher, len)?;
    Ok(derive(&ck, CARRIER_INFO, carrier, &epoch.to_be_bytes(), len))
}

fn fingerprint_of(key: &[u8]) -> String {
    let mut id = [0u8; 16];
    Hkdf::<Sha256>::new(Some(SALT), key).expand(ID_INFO, &mut id).expect("16 bytes");
    hex::encode(id)
}

/// The master key: 32 secret bytes from which every device key and cipher key derives.
pub struct MasterKey(Zeroizing<[u8; 32]>);

impl std::fmt::Debug for MasterKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MasterKey(<redacted>)")
    }
}

impl MasterKey {
    /// The master key of these bytes.
    pub fn from_bytes(b: [u8; 32]) -> MasterKey {
        MasterKey(Zeroizing::new(b))
    }

    /// A new master key from the operating system's random source.
    pub fn random() -> MasterKey {
        let mut k = Zeroizing::new([0u8; 32]);
        rand::fill(&mut k[..]);
        MasterKey(k)
    }

    /// The device key of (`family`, `device`) — what `lwcbench link provision` writes.
    pub fn device(&self, family: Family, device: u32) -> DeviceKey {
        let k = derive(&self.0[..], DEVICE_INFO, family.label(), &device.to_be_bytes(), 32);
        let mut key = Zeroizing::new([0u8; 32]);
        key.copy_from_slice(&k);
        DeviceKey { key, family, device, ciphers: None, master: self.fingerprint() }
    }

    /// The key of the cipher with frame id `cipher`, `len` bytes, for frames of type `proto` of
    /// `device` (for Modbus: the proxy pair).
    pub fn cipher_key(&self, proto: Proto, device: u32, cipher: u8, len: usize) -> Zeroizing<Vec<u8>> {
        self.device(proto.family(), device).derive_cipher_key(proto, cipher, len)
    }

    /// Candidate `n` of the gateway's EDHOC static P-256 private key (`--edhoc`), from the
    /// master under the label "gateway"; the first valid scalar is the key.
    pub fn edhoc_gateway_key_candidate(&self, n: u8) -> Zeroizing<Vec<u8>> {
        derive(&self.0[..], EDHOC_INFO, "gateway", &[n], 32)
    }

    /// The gateway's EDHOC static X25519 private key (`--edhoc-suite 0`), from the master under
    /// the label "gateway" (any 32 bytes are an X25519 key).
    pub fn edhoc_gateway_x25519_key(&self) -> Zeroizing<Vec<u8>> {
        derive(&self.0[..], EDHOC_X25519_INFO, "gateway", &[], 32)
    }

    /// The key's id: 16 HKDF bytes under their own info label (hex), which names the key in a
    /// counter state file without revealing it.
    pub fn fingerprint(&self) -> String {
        fingerprint_of(&self.0[..])
    }

    /// Write a new key file with mode 0600; refuses to overwrite an existing file.
    pub fn write_new(&self, path: &Path) -> Result<(), String> {
        let mut text = Zeroizing::new(format!("{KEYFILE_MAGIC}\n"));
        text.push_str(&hex::encode(&self.0[..]));
        text.push('\n');
        write_key_file(path, &text)
    }

    /// Read a master key file; errors name the file and line. A device key file is refused:
    /// only a gateway holds the master.
    pub fn read(path: &Path) -> Result<MasterKey, String> {
        LinkKey::read(path)?.into_master(path, "this command runs a gateway and")
    }

    fn parse(p: &str, text: &str) -> Result<MasterKey, String> {
        let mut lines = text.lines();
        lines.next();
        let hexline = lines.next().unwrap_or("").trim();
        let mut k = Zeroizing::new([0u8; 32]);
        if hexline.len() != 64 || hex::decode_to_slice(hexline, &mut k[..]).is_err() {
            return Err(format!("--key-file: {p}: line 2: expected 64 hex digits (a 256-bit master key)"));
        }
        if lines.any(|l| !l.trim().is_empty()) {
            return Err(format!("--key-file: {p}: line 3: unexpected content after the key"));
        }
        Ok(MasterKey(k))
    }
}

/// Create `path` with mode 0600 and write `text`; an existing file is never overwritten.
fn write_key_file(path: &Path, text: &str) -> Result<(), String> {
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| format!("--key-file: cannot create {}: {e}", path.display()))?;
    f.write_all(text.as_bytes())
        .and_then(|_| f.sync_all())
        .map_err(|e| format!("--key-file: cannot write {}: {e}", path.display()))
}

/// The text of a key file: a regular file, mode 0600 (no group/other access), at most 4 KiB,
/// UTF-8; opened without blocking so a FIFO is named instead of waited on.
fn read_key_text(path: &Path) -> Result<Zeroizing<String>, String> {
    use std::io::Read;
    let p = path.display();
    // Non-blocking open: a FIFO would otherwise block the open for ever. The type is then
    // checked on the opened file (no window for a swap between a check and the open).
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(|e| format!("--key-file: {p}: {e}"))?;
    let meta = f.metadata().map_err(|e| format!("--key-file: {p}: {e}"))?;
    if !meta.is_file() {
        return Err(format!("--key-file: {p} is {}, not a regular file", file_type_name(&meta.file_type())));
    }
    if meta.len() > 4096 {
        return Err(format!("--key-file: {p}: too large to be a key file"));
    }
    if meta.permissions().mode() & 0o077 != 0 {
        return Err(format!(
            "--key-file: {p}: mode {:o} lets group or others read the key (chmod 600 it)",
            meta.permissions().mode() & 0o777
        ));
    }
    let mut raw = Zeroizing::new(Vec::with_capacity(4097));
    (&mut f).take(4097).read_to_end(&mut raw).map_err(|e| format!("--key-file: {p}: {e}"))?;
    if raw.len() > 4096 {
        return Err(format!("--key-file: {p}: too large to be a key file"));
    }
    let text = String::from_utf8(std::mem::take(&mut *raw))
        .map_err(|_| format!("--key-file: {p}: line 1: expected '{KEYFILE_MAGIC}' or '{DEVICE_KEYFILE_MAGIC}'"))?;
    Ok(Zeroizing::new(text))
}

/// One device's key (or one Modbus proxy pair's), as `lwcbench link provision` writes it: it
/// yields the cipher keys of its own protocol and device, for the ciphers it lists, and nothing else.
pub struct DeviceKey {
    key: Zeroizing<[u8; 32]>,
    /// The protocol it serves.
    pub family: Family,
    /// The device (or Modbus pair) it belongs to.
    pub device: u32,
    /// Cipher ids the key may be used with (`None`: every link cipher).
    pub ciphers: Option<Vec<u8>>,
    /// The fingerprint of the master it was derived from (names the gateway's key).
    pub master: String,
}

impl std::fmt::Debug for DeviceKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DeviceKey({} {}, <redacted>)", self.family.label(), self.device)
    }
}

impl DeviceKey {
    /// Limit the key to these cipher ids.
    pub fn with_ciphers(mut self, ciphers: Option<Vec<u8>>) -> DeviceKey {
        self.ciphers = ciphers;
        self
    }

    fn derive_cipher_key(&self, proto: Proto, cipher: u8, len: usize) -> Zeroizing<Vec<u8>> {
        derive(&self.key[..], CIPHER_INFO, proto.label(), &[cipher], len)
    }

    /// The cipher key for frames of type `proto` of `device` with cipher `cipher`; refused for
    /// another protocol, device or a cipher outside the key's set.
    pub fn cipher_key(&self, proto: Proto, device: u32, cipher: u8, len: usize) -> Result<Zeroizing<Vec<u8>>, String> {
        if proto.family() != self.family {
            return Err(format!(
                "--key-file: the device key is for {} frames, not {}",
                self.family.label(),
                proto.family().label()
            ));
        }
        if device != self.device {
            return Err(format!(
                "the device key is {} {}'s; it cannot seal or open as {device}",
                self.family.label(),
                self.device
            ));
        }
        if let Some(set) = &self.ciphers {
            if !set.contains(&cipher) {
                return Err(format!("--cipher: id {cipher} is not in the device key's cipher set {set:?}"));
            }
        }
        Ok(self.derive_cipher_key(proto, cipher, len))
    }

    /// The OSCORE Master Secret (RFC 8613 §3.2) of this device for the COSE algorithm `alg`
    /// (`lwcbench link --protocol oscore`): 32 bytes under its own `info` prefix, so it is never
    /// a link cipher key, and one per algorithm, so no key serves two AEADs.
    pub fn oscore_master_secret(&self, alg: u8) -> Zeroizing<Vec<u8>> {
        derive(&self.key[..], OSCORE_INFO, self.family.label(), &[alg], 32)
    }

    /// Candidate `n` of this device's EDHOC static P-256 private key (`--edhoc`): 32 bytes
    /// under their own `info` prefix; the first candidate that is a valid scalar is the key.
    pub fn edhoc_key_candidate(&self, n: u8) -> Zeroizing<Vec<u8>> {
        derive(&self.key[..], EDHOC_INFO, self.family.label(), &[n], 32)
    }

    /// This device's EDHOC static X25519 private key (`--edhoc-suite 0`): 32 bytes under their
    /// own `info` prefix (any 32 bytes are an X25519 key).
    pub fn edhoc_x25519_key(&self) -> Zeroizing<Vec<u8>> {
        derive(&self.key[..], EDHOC_X25519_INFO, self.family.label(), &[], 32)
    }

    /// The fingerprint of this device key (its counter state is bound to it).
    pub fn fingerprint(&self) -> String {
        fingerprint_of(&self.key[..])
    }

    /// Write the device key file (mode 0600, never over an existing file).
    pub fn write_new(&self, path: &Path) -> Result<(), String> {
        let ciphers = match &self.ciphers {
            None => "all".to_string(),
            Some(v) => v.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(","),
        };
        let mut text = Zeroizing::new(format!(
            "{DEVICE_KEYFILE_MAGIC}\nprotocol {}\ndevice {}\nciphers {ciphers}\nmaster {}\nkey ",
            self.family.label(),
            self.device,
            self.master
        ));
        text.push_str(&hex::encode(&self.key[..]));
        text.push('\n');
        write_key_file(path, &text)
    }

    fn parse(p: &str, text: &str) -> Result<DeviceKey, String> {
        let mut lines = text.lines().enumerate().skip(1);
        let mut field = |name: &str| -> Result<(usize, String), String> {
            let (i, l) = lines.next().ok_or_else(|| format!("--key-file: {p}: ends before its '{name}' line"))?;
            let v = l
                .trim()
                .strip_prefix(name)
                .and_then(|r| r.strip_prefix(' '))
                .ok_or_else(|| format!("--key-file: {p}: line {}: expected '{name} ...'", i + 1))?;
            Ok((i + 1, v.trim().to_string()))
        };
        let (ln, proto) = field("protocol")?;
        let family = Family::parse(&proto).map_err(|e| format!("--key-file: {p}: line {ln}: {e}"))?;
        let (ln, dev) = field("device")?;
        let device = dev
            .parse::<u32>()
            .map_err(|_| format!("--key-file: {p}: line {ln}: '{}' is not a device id", crate::input::shown(&dev)))?;
        let (ln, cs) = field("ciphers")?;
        let ciphers = if cs == "all" {
            None
        } else {
            let v: Result<Vec<u8>, _> = cs.split(',').map(|c| c.trim().parse::<u8>()).collect();
            Some(v.map_err(|_| {
                format!("--key-file: {p}: line {ln}: expected 'all' or cipher ids 0..=255 separated by commas")
            })?)
        };
        let (ln, master) = field("master")?;
        if master.len() != 32 || !master.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(format!("--key-file: {p}: line {ln}: expected the master's 32-hex-digit fingerprint"));
        }
        let (ln, hexkey) = field("key")?;
        let mut key = Zeroizing::new([0u8; 32]);
        if hexkey.len() != 64 || hex::decode_to_slice(&hexkey, &mut key[..]).is_err() {
            return Err(format!("--key-file: {p}: line {ln}: expected 64 hex digits (a 256-bit device key)"));
        }
        if let Some((i, _)) = lines.find(|(_, l)| !l.trim().is_empty()) {
            return Err(format!("--key-file: {p}: line {}: unexpected content after the key", i + 1));
        }
        Ok(DeviceKey { key, family, device, ciphers, master })
    }
}

/// What a key file holds: the master (gateways) or one device's key (devices, Modbus proxies).
#[derive(Debug)]
pub enum LinkKey {
    /// A master key file.
    Master(MasterKey),
    /// A device key file.
    Device(DeviceKey),
}

impl LinkKey {
    /// Read either kind of key file; errors name the file and line.
    pub fn read(path: &Path) -> Result<LinkKey, String> {
        let text = read_key_text(path)?;
        let p = path.display().to_string();
        match text.lines().next().map(str::trim) {
            Some(KEYFILE_MAGIC) => Ok(LinkKey::Master(MasterKey::parse(&p, &text)?)),
            Some(DEVICE_KEYFILE_MAGIC) => Ok(LinkKey::Device(DeviceKey::parse(&p, &text)?)),
            _ => Err(format!("--key-file: {p}: line 1: expected '{KEYFILE_MAGIC}' or '{DEVICE_KEYFILE_MAGIC}'")),
        }
    }

    /// The key's fingerprint, master or device key.
    pub fn fingerprint(&self) -> String {
        match self {
            LinkKey::Master(m) => m.fingerprint(),
            LinkKey::Device(d) => d.fingerprint(),
        }
    }

    /// The cipher key of (`proto`, `device`, `cipher`): any from the master, the device's own
    /// from a device key.
    pub fn cipher_key(&self, proto: Proto, device: u32, cipher: u8, len: usize) -> Result<Zeroizing<Vec<u8>>, String> {
        match self {
            LinkKey::Master(m) => Ok(m.cipher_key(proto, device, cipher, len)),
            LinkKey::Device(d) => d.cipher_key(proto, device, cipher, len),
        }
    }

    /// The master, for a command that runs a gateway (`what` names it in the error).
    pub fn into_master(self, path: &Path, what: &str) -> Result<MasterKey, String> {
        match self {
            LinkKey::Master(m) => Ok(m),
            LinkKey::Device(d) => Err(format!(
                "--key-file: {} is the device key of {} {}; {what} needs the master key",
                path.display(),
                d.family.label(),
                d.device
            )),
        }
    }

    /// The device key, for a device or proxy process: a master key is refused (a device holds
    /// its own key only; `lwcbench link provision` writes it).
    pub fn into_device(self, path: &Path, family: Family) -> Result<DeviceKey, String> {
        match self {
            LinkKey::Device(d) if d.family == family => Ok(d),
            LinkKey::Device(d) => Err(format!(
                "--key-file: {} is a {} device key; this command needs a {} one",
                path.display(),
                d.family.label(),
                family.label()
            )),
            LinkKey::Master(_) => Err(format!(
                "--key-file: {} is a master key; a device holds only its own key: \
                 lwcbench link provision --key-file MASTER --protocol {} --device N --out DEVICE.key",
                path.display(),
                family.label()
            )),
        }
    }
}

/// Where master keys live when no `--key-file` is given: `$LWCBENCH_KEY_DIR`, else
/// `$XDG_CONFIG_HOME/lwcbench/link-keys`, else `~/.config/lwcbench/link-keys` (made mode 0700).
/// Never inside a results directory: results are shared and archived, a key must not travel
/// with them.
pub fn key_dir() -> Result<std::path::PathBuf, String> {
    use std::os::unix::fs::DirBuilderExt;
    let env = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty()).map(std::path::PathBuf::from);
    let dir = match (env("LWCBENCH_KEY_DIR"), env("XDG_CONFIG_HOME"), env("HOME")) {
        (Some(d), _, _) => d,
        (None, Some(x), _) => x.join("lwcbench/link-keys"),
        (None, None, Some(h)) => h.join(".config/lwcbench/link-keys"),
        (None, None, None) => {
            return Err(
                "no --key-file, and neither LWCBENCH_KEY_DIR, XDG_CONFIG_HOME nor HOME is set: give --key-file".into()
            )
        }
    };
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(&dir).map_err(|e| {
        format!("key directory {}: cannot create it: {e} (set LWCBENCH_KEY_DIR or give --key-file)", dir.display())
    })?;
    Ok(dir)
}

/// The master key of a run into `out` when no `--key-file` is given: in [`key_dir`], named
/// after the output directory (`NAME-HASH.key`, HASH = the first 16 hex digits of SHA-256 of
/// its absolute path), so a `--force` rerun into one directory continues one key and its
/// counters, while runs into other directories never share one.
pub fn default_key_for(out: &Path) -> Result<std::path::PathBuf, String> {
    use sha2::Digest;
    let abs = std::path::absolute(out).map_err(|e| format!("--out {}: {e}", out.display()))?;
    let hash = hex::encode(&Sha256::digest(abs.as_os_str().as_encoded_bytes())[..8]);
    let name: String = abs
        .file_name()
        .map(|n| {
            n.to_string_lossy()
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' })
                .take(64)
                .collect()
        })
        .unwrap_or_default();
    Ok(key_dir()?.join(format!("{name}-{hash}.key")))
}

/// What a file that is not a regular file is, for an error line.
pub fn file_type_name(t: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO (named pipe)"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_symlink() {
        "a symbolic link"
    } else {
        "not a regular file"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The KDF is plain RFC 5869 HKDF: check the `hkdf` crate against RFC 5869 test case 1,
    /// then that device keys differ by device and by cipher.
    #[test]
    fn hkdf_rfc5869_case1_and_separation() {
        let ikm = [0x0bu8; 22];
        let salt = hex::decode("000102030405060708090a0b0c").unwrap();
        let info = hex::decode("f0f1f2f3f4f5f6f7f8f9").unwrap();
        let mut okm = [0u8; 42];
        Hkdf::<Sha256>::new(Some(&salt), &ikm).expand(&info, &mut okm).unwrap();
        assert_eq!(
            hex::encode(okm),
            "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865"
        );
    }

    /// The hierarchy's keys: expected values computed independently with Python's
    /// hmac/hashlib (RFC 5869 extract + expand) from the layout in the module comment.
    #[test]
    fn hierarchy_matches_an_independent_hkdf() {
        let m = MasterKey::from_bytes([7; 32]);
        let dk = m.device(Family::Sensor, 40);
        assert_eq!(hex::encode(&dk.key[..]), "d3007caddcf3875ea7ee6b27de2432a07395c620003ff637a41b64541603d611");
        assert_eq!(hex::encode(&m.cipher_key(Proto::Sensor, 40, 1, 16)[..]), "98422c4b49f5f8c7dee92d696b08250f");
        assert_eq!(
            hex::encode(&m.cipher_key(Proto::ModbusToMaster, 2, 11, 32)[..]),
            "e6d1ac6b5b7780c0cf14e747313d7d99089f16ac14ae9b9ce5ef3355262f014a"
        );
    }

    /// Every pair of usages, devices and ciphers gives different keys; a device key gives the
    /// master's keys for its own device and protocol and refuses every other device, protocol
    /// and cipher outside its set.
    #[test]
    fn keys_are_separated_and_a_device_key_yields_only_its_own() {
        let m = MasterKey::from_bytes([7; 32]);
        let mut seen = std::collections::HashSet::new();
        for p in Proto::ALL {
            for d in [0u32, 1, 257] {
                for c in [1u8, 11] {
                    assert!(seen.insert(m.cipher_key(p, d, c, 16).to_vec()), "{p:?} {d} {c} repeats a key");
                }
            }
        }
        let dk = m.device(Family::Sensor, 257).with_ciphers(Some(vec![1]));
        assert_eq!(*dk.cipher_key(Proto::Sensor, 257, 1, 16).unwrap(), *m.cipher_key(Proto::Sensor, 257, 1, 16));
        assert!(dk.cipher_key(Proto::Sensor, 256, 1, 16).unwrap_err().contains("cannot seal or open as 256"));
        assert!(dk.cipher_key(Proto::Goose, 257, 1, 16).unwrap_err().contains("not goose"));
        assert!(dk.cipher_key(Proto::Sensor, 257, 11, 16).unwrap_err().contains("cipher set"));
        let mb = m.device(Family::Modbus, 3);
        assert_eq!(
            *mb.cipher_key(Proto::ModbusToSlave, 3, 1, 16).unwrap(),
            *m.cipher_key(Proto::ModbusToSlave, 3, 1, 16)
        );
        assert_eq!(
            *mb.cipher_key(Proto::ModbusToMaster, 3, 1, 16).unwrap(),
            *m.cipher_key(Proto::ModbusToMaster, 3, 1, 16)
        );
        assert_ne!(dk.fingerprint(), m.fingerprint());
        assert_eq!(dk.master, m.fingerprint());
    }

    #[test]
    fn device_key_file_roundtrip_and_errors() {
        let d = tempfile::tempdir().unwrap();
        let m = MasterKey::from_bytes([9; 32]);
        let p = d.path().join("dev.key");
        m.device(Family::Goose, 0x0101).with_ciphers(Some(vec![1, 11])).write_new(&p).unwrap();
        assert_eq!(std::fs::metadata(&p).unwrap().permissions().mode() & 0o777, 0o600);
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(
            text.starts_with("lwcbench-link-device-key v1\nprotocol goose\ndevice 257\nciphers 1,11\nmaster "),
            "{text}"
        );
        let LinkKey::Device(back) = LinkKey::read(&p).unwrap() else { panic!("not a device key") };
        assert_eq!((back.family, back.device, back.ciphers.clone()), (Family::Goose, 257, Some(vec![1, 11])));
        assert_eq!(*back.cipher_key(Proto::Goose, 257, 11, 16).unwrap(), *m.cipher_key(Proto::Goose, 257, 11, 16));
        let e = MasterKey::read(&p).unwrap_err();
        assert!(e.contains("device key of goose 257") && e.contains("needs the master key"), "{e}");
        let mp = d.path().join("master.key");
        m.write_new(&mp).unwrap();
        let e = LinkKey::read(&mp).unwrap().into_device(&mp, Family::Sensor).unwrap_err();
        assert!(e.contains("is a master key") && e.contains("link provision"), "{e}");
        let bad = d.path().join("bad");
        for (body, want) in [
            ("protocol sensor\ndevice x\n", "line 3: 'x' is not a device id"),
            ("protocol radio\n", "line 2: --protocol: 'radio'"),
            ("device 1\n", "line 2: expected 'protocol ...'"),
            ("protocol sensor\ndevice 1\nciphers 1,300\n", "line 4: expected 'all' or cipher ids"),
        ] {
            let _ = std::fs::remove_file(&bad);
            std::fs::write(&bad, format!("{DEVICE_KEYFILE_MAGIC}\n{body}")).unwrap();
            std::fs::set_permissions(&bad, std::fs::Permissions::from_mode(0o600)).unwrap();
            let e = LinkKey::read(&bad).unwrap_err();
            assert!(e.contains(want), "{body:?}: {e}");
        }
    }

    /// The fingerprint is HKDF with its own info label: expected values computed independently
    /// with Python's hmac/hashlib (RFC 5869 extract, one expand block, first 16 bytes).
    #[test]
    fn fingerprint_is_hkdf_under_its_own_label() {
        assert_eq!(MasterKey::from_bytes([7; 32]).fingerprint(), "32f4fc68107ab4dd67b987d1614f906b");
        assert_eq!(MasterKey::from_bytes([8; 32]).fingerprint(), "4522d92be3296147132c72dd4fb8d592");
        let m = MasterKey::from_bytes([7; 32]);
        assert_ne!(m.fingerprint(), hex::encode(&m.cipher_key(Proto::Sensor, 0, 0, 16)[..]));
    }

    #[test]
    fn key_file_roundtrip_mode_and_errors() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("k");
        let m = MasterKey::random();
        m.write_new(&p).unwrap();
        assert_eq!(std::fs::metadata(&p).unwrap().permissions().mode() & 0o777, 0o600);
        let again = MasterKey::read(&p).unwrap();
        assert_eq!(*m.cipher_key(Proto::Video, 4, 3, 32), *again.cipher_key(Proto::Video, 4, 3, 32));
        assert!(m.write_new(&p).is_err(), "never overwrites a key file");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(MasterKey::read(&p).unwrap_err().contains("mode 644"));
        let bad = d.path().join("bad");
        std::fs::write(&bad, format!("{KEYFILE_MAGIC}\nzz\n")).unwrap();
        std::fs::set_permissions(&bad, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert!(MasterKey::read(&bad).unwrap_err().contains("line 2"));
        std::fs::write(&bad, "hello\n").unwrap();
        std::fs::set_permissions(&bad, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert!(MasterKey::read(&bad).unwrap_err().contains("line 1"));
    }

    #[test]
    fn a_fifo_or_a_directory_is_named_not_waited_on() {
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo on a NUL-terminated path we own.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        // On a thread, so a blocking open fails the test instead of hanging it.
        let (tx, rx) = std::sync::mpsc::channel();
        let f2 = fifo.clone();
        std::thread::spawn(move || tx.send(MasterKey::read(&f2).map(|_| ())).unwrap());
        let r = rx.recv_timeout(std::time::Duration::from_secs(5)).expect("reading a FIFO key file blocked");
        assert_eq!(
            r.unwrap_err(),
            format!("--key-file: {} is a FIFO (named pipe), not a regular file", fifo.display())
        );
        let e = MasterKey::read(d.path()).unwrap_err();
        assert_eq!(e, format!("--key-file: {} is a directory, not a regular file", d.path().display()));
    }

    /// The carrier keys of device 0x26011F2A, ChaCha20-Poly1305 (id 11, 32 bytes), master
    /// [7; 32], epochs 0 and 1, computed independently with Python's hmac/hashlib (RFC 5869,
    /// the chain master → device key → cipher key → carrier key with the infos above).
    #[test]
    fn carrier_keys_by_independent_hkdf() {
        let m = MasterKey::from_bytes([7; 32]);
        let k = |e| hex::encode(&carrier_key(&m, Proto::Sensor, 0x2601_1F2A, 11, 32, "lorawan", e).unwrap()[..]);
        assert_eq!(
            hex::encode(&m.cipher_key(Proto::Sensor, 0x2601_1F2A, 11, 32)[..]),
            "4f79823ba46e68ac3bdadceac0af8e877130fb716a9423a1e48322cd878d25aa"
        );
        assert_eq!(k(0), "c9a5d3ac4e03fa9b41a299793c40623165eefcc268e227c9140e057d13c97eeb");
        assert_eq!(k(1), "5b94f64f55d1c7e5d358d8f93e75273f23484dc36a802148da48586662b72361");
    }
}
