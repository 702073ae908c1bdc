//! Device keys: one master key in a 0600 key file the tool writes, and per-device keys derived
//! from it with HKDF-SHA256 (RFC 5869):
//!
//! ```text
//! key(device, cipher) = HKDF-SHA256(salt = "lwcbench-link v1", IKM = master key (32 bytes),
//!                                   info = "lwcbench-link device key" ‖ 0x00 ‖ cipher id (1 byte) ‖ device id (u32 BE),
//!                                   L = the cipher's key length)
//! ```
//! The cipher id is part of `info` so one device never uses the same key with two algorithms.
//! The key's fingerprint (recorded in counter state files, never secret-bearing) is
//! `HKDF-SHA256(salt = "lwcbench-link v1", IKM = master key, info = "lwcbench-link key id", L = 16)`.
//! Key file: two lines, `lwcbench-link-master-key v1` and 64 hex digits; mode 0600 (refused if
//! group or others may read it).
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;

use hkdf::Hkdf;
use sha2::Sha256;
use zeroize::Zeroizing;

pub const KEYFILE_MAGIC: &str = "lwcbench-link-master-key v1";
pub const SALT: &[u8] = b"lwcbench-link v1";
pub const INFO_PREFIX: &[u8] = b"lwcbench-link device key";
pub const ID_INFO: &[u8] = b"lwcbench-link key id";

pub struct MasterKey(Zeroizing<[u8; 32]>);

impl std::fmt::Debug for MasterKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MasterKey(<redacted>)")
    }
}

impl MasterKey {
    pub fn from_bytes(b: [u8; 32]) -> MasterKey {
        MasterKey(Zeroizing::new(b))
    }

    pub fn random() -> MasterKey {
        let mut k = Zeroizing::new([0u8; 32]);
        rand::fill(&mut k[..]);
        MasterKey(k)
    }

    /// The key of `device` for the cipher with frame id `cipher`, `len` bytes.
    pub fn device_key(&self, cipher: u8, device: u32, len: usize) -> Zeroizing<Vec<u8>> {
        let hk = Hkdf::<Sha256>::new(Some(SALT), &self.0[..]);
        let mut info = Vec::with_capacity(INFO_PREFIX.len() + 6);
        info.extend_from_slice(INFO_PREFIX);
        info.push(0);
        info.push(cipher);
        info.extend_from_slice(&device.to_be_bytes());
        let mut okm = Zeroizing::new(vec![0u8; len]);
        hk.expand(&info, &mut okm).expect("key lengths are far below HKDF's 255*32 limit");
        okm
    }

    /// The key's id: 16 HKDF bytes under their own info label (hex), which names the key in a
    /// counter state file without revealing it.
    pub fn fingerprint(&self) -> String {
        let mut id = [0u8; 16];
        Hkdf::<Sha256>::new(Some(SALT), &self.0[..]).expand(ID_INFO, &mut id).expect("16 bytes");
        hex::encode(id)
    }

    /// Write a new key file with mode 0600; refuses to overwrite an existing file.
    pub fn write_new(&self, path: &Path) -> Result<(), String> {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(path)
            .map_err(|e| format!("--key-file: cannot create {}: {e}", path.display()))?;
        let mut text = Zeroizing::new(format!("{KEYFILE_MAGIC}\n"));
        text.push_str(&hex::encode(&self.0[..]));
        text.push('\n');
        f.write_all(text.as_bytes())
            .and_then(|_| f.sync_all())
            .map_err(|e| format!("--key-file: cannot write {}: {e}", path.display()))
    }

    /// Read a key file; errors name the file and line.
    pub fn read(path: &Path) -> Result<MasterKey, String> {
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
        let text = Zeroizing::new(
            String::from_utf8(std::mem::take(&mut *raw))
                .map_err(|_| format!("--key-file: {p}: line 1: expected '{KEYFILE_MAGIC}'"))?,
        );
        let mut lines = text.lines();
        if lines.next().map(str::trim) != Some(KEYFILE_MAGIC) {
            return Err(format!("--key-file: {p}: line 1: expected '{KEYFILE_MAGIC}'"));
        }
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
        let m = MasterKey::from_bytes([7; 32]);
        let a = m.device_key(1, 0, 16);
        assert_ne!(*a, *m.device_key(1, 1, 16));
        assert_ne!(*a, *m.device_key(2, 0, 16));
        assert_eq!(*a, *m.device_key(1, 0, 16));
    }

    /// The fingerprint is HKDF with its own info label: expected values computed independently
    /// with Python's hmac/hashlib (RFC 5869 extract, one expand block, first 16 bytes).
    #[test]
    fn fingerprint_is_hkdf_under_its_own_label() {
        assert_eq!(MasterKey::from_bytes([7; 32]).fingerprint(), "32f4fc68107ab4dd67b987d1614f906b");
        assert_eq!(MasterKey::from_bytes([8; 32]).fingerprint(), "4522d92be3296147132c72dd4fb8d592");
        let m = MasterKey::from_bytes([7; 32]);
        assert_ne!(m.fingerprint(), hex::encode(&m.device_key(0, 0, 16)[..]));
    }

    #[test]
    fn key_file_roundtrip_mode_and_errors() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("k");
        let m = MasterKey::random();
        m.write_new(&p).unwrap();
        assert_eq!(std::fs::metadata(&p).unwrap().permissions().mode() & 0o777, 0o600);
        let again = MasterKey::read(&p).unwrap();
        assert_eq!(*m.device_key(3, 4, 32), *again.device_key(3, 4, 32));
        assert!(m.write_new(&p).is_err(), "never overwrites a key file");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(MasterKey::read(&p).unwrap_err().contains("mode 644"));
        let bad = d.path().join("bad");
        std::fs::write(&bad, format!("{KEYFILE_MAGIC}\nzz\n")).unwrap();
        std::fs::set_permissions(&bad, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert!(MasterKey::read(&bad).unwrap_err().contains("line 2"));
        std::fs::write(&bad, "hello\n").unwrap();
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
}
