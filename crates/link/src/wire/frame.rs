//! The link frame: one versioned binary layout for every cipher and transport.
//!
//! ```text
//! offset size field
//! 0      1    version      (1)
//! 1      1    cipher id    (`lwcbench_catalog::link_ids`; stable numbers, documented in docs/link.md)
//! 2      1    flags        bit 0 = confidentiality only (UNSAFE, no tag); other bits must be 0
//! 3      4    device id    big-endian u32
//! 7      8    counter      big-endian u64 (< 2^63)
//! 15     n    ciphertext   same length as the plaintext reading
//! 15+n   t    tag          t = the suite's tag length (0 with the unsafe flag)
//! ```
//! The 15 header bytes are the associated data of the AEAD (or of the Poly1305 composition),
//! so a changed header fails the tag check.

/// Current frame version.
pub const VERSION: u8 = 1;
/// Header bytes (version, cipher id, flags, device id, counter).
pub const HEADER_LEN: usize = 15;
/// Flag bit: frame carries no tag (confidentiality only, unsafe).
pub const FLAG_UNAUTHENTICATED: u8 = 0x01;
/// Largest counter a device may use (keeps the top bit clear: Grain-128a reads IV bit 0 as a mode bit).
pub const MAX_COUNTER: u64 = (1 << 63) - 1;
/// Largest frame the gateway accepts (bounds memory per message).
pub const MAX_FRAME: usize = 256 * 1024;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub version: u8,
    pub cipher: u8,
    pub flags: u8,
    pub device: u32,
    pub counter: u64,
}

impl Header {
    pub fn encode(&self) -> [u8; HEADER_LEN] {
        let mut h = [0u8; HEADER_LEN];
        h[0] = self.version;
        h[1] = self.cipher;
        h[2] = self.flags;
        h[3..7].copy_from_slice(&self.device.to_be_bytes());
        h[7..15].copy_from_slice(&self.counter.to_be_bytes());
        h
    }

    /// Parse the header of a received frame. Only structure is checked here; the gateway checks
    /// the cipher id, the device and the tag.
    pub fn parse(frame: &[u8]) -> Result<Header, &'static str> {
        if frame.len() > MAX_FRAME {
            return Err("frame larger than the 256 KiB limit");
        }
        if frame.len() < HEADER_LEN {
            return Err("frame shorter than its 15-byte header");
        }
        let h = Header {
            version: frame[0],
            cipher: frame[1],
            flags: frame[2],
            device: u32::from_be_bytes(frame[3..7].try_into().expect("4 bytes")),
            counter: u64::from_be_bytes(frame[7..15].try_into().expect("8 bytes")),
        };
        if h.version != VERSION {
            return Err("unknown frame version");
        }
        if h.flags & !FLAG_UNAUTHENTICATED != 0 {
            return Err("reserved flag bits set");
        }
        if h.counter > MAX_COUNTER {
            return Err("counter has its top bit set");
        }
        Ok(h)
    }
}

/// Nonce for (device, counter): counter (8 bytes BE) then device id (4 bytes BE), zero-padded to
/// `len`, or cut to `len` when the cipher's IV is shorter than 12 bytes (Grain v1, Trivium,
/// Salsa20, Rabbit): the counter always fits whole, and per-device keys keep (key, nonce) unique.
pub fn nonce(device: u32, counter: u64, out: &mut [u8]) {
    let mut full = [0u8; 12];
    full[..8].copy_from_slice(&counter.to_be_bytes());
    full[8..].copy_from_slice(&device.to_be_bytes());
    out.fill(0);
    let n = out.len().min(12);
    out[..n].copy_from_slice(&full[..n]);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bytes written out by hand from the layout table above.
    #[test]
    fn header_bytes_by_hand() {
        let h = Header { version: 1, cipher: 7, flags: 0, device: 0x0102_0304, counter: 0x1122_3344_5566_7788 };
        assert_eq!(
            h.encode(),
            [0x01, 0x07, 0x00, 0x01, 0x02, 0x03, 0x04, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88]
        );
        assert_eq!(Header::parse(&h.encode()).unwrap(), h);
    }

    #[test]
    fn parse_refuses_bad_structure() {
        let h = Header { version: 1, cipher: 1, flags: 0, device: 9, counter: 5 }.encode();
        assert!(Header::parse(&h[..14]).is_err());
        let mut v = h;
        v[0] = 2;
        assert!(Header::parse(&v).is_err());
        let mut f = h;
        f[2] = 0x02;
        assert!(Header::parse(&f).is_err());
        let mut c = h;
        c[7] = 0x80;
        assert!(Header::parse(&c).is_err());
        assert!(Header::parse(&vec![0u8; MAX_FRAME + 1]).is_err());
    }

    #[test]
    fn nonce_layout_by_hand() {
        let mut n = [0xAAu8; 16];
        nonce(0x0A0B0C0D, 0x0102, &mut n);
        assert_eq!(n, [0, 0, 0, 0, 0, 0, 1, 2, 0x0A, 0x0B, 0x0C, 0x0D, 0, 0, 0, 0]);
        let mut s = [0xAAu8; 8];
        nonce(0x0A0B0C0D, 0x0102, &mut s);
        assert_eq!(s, [0, 0, 0, 0, 0, 0, 1, 2]);
        let mut t = [0xAAu8; 10];
        nonce(0x0A0B0C0D, 3, &mut t);
        assert_eq!(t, [0, 0, 0, 0, 0, 0, 0, 3, 0x0A, 0x0B]);
    }
}
