//! The link frame: one versioned binary layout for every cipher, protocol and transport.
//!
//! ```text
//! offset size field
//! 0      1    version      (3)
//! 1      1    type         the protocol: 1 sensor, 2 video, 3 modbus master→slave,
//!                          4 modbus slave→master, 5 goose ([`Proto`])
//! 2      1    cipher id    (`lwcbench_catalog::link_ids`; stable numbers, documented in docs/link.md)
//! 3      1    flags        bit 0 = confidentiality only (UNSAFE, no tag); bit 1 = handshake
//!                          (modbus only); other bits must be 0
//! 4      4    device id    big-endian u32
//! 8      8    counter      big-endian u64 (< 2^63)
//! 16     e    extension    the type's own fields (video: 12 bytes; the others: none)
//! 16+e   r    random nonce r = 24 for suites with a random nonce (XChaCha20-Poly1305), else 0
//! ...    n    ciphertext   same length as the plaintext
//! ...    t    tag          t = the suite's tag length (0 with the unsafe flag)
//! ```
//! The header with its extension is the associated data of the AEAD (or of the Poly1305
//! composition), so a changed header fails the tag check; the type byte and the protocol's
//! own key (`crate::wire::keys`) keep a frame of one protocol from verifying in another.
//! Versions 1 and 2 (before the key hierarchy) are refused: docs/link.md "Upgrading from
//! frame versions 1 and 2".

/// Current frame version.
pub const VERSION: u8 = 3;
/// Header bytes (version, type, cipher id, flags, device id, counter).
pub const HEADER_LEN: usize = 16;
/// Offsets of the header's fields (for tools and tests that edit frames).
pub const AT_TYPE: usize = 1;
/// The cipher id's offset.
pub const AT_CIPHER: usize = 2;
/// The flags' offset.
pub const AT_FLAGS: usize = 3;
/// The device id's bytes (big-endian).
pub const AT_DEVICE: std::ops::Range<usize> = 4..8;
/// The counter's bytes (big-endian).
pub const AT_COUNTER: std::ops::Range<usize> = 8..16;
/// Flag bit: frame carries no tag (confidentiality only, unsafe).
pub const FLAG_UNAUTHENTICATED: u8 = 0x01;
/// Flag bit: a Modbus hop handshake record.
pub const FLAG_HANDSHAKE: u8 = 0x02;
/// Largest counter a device may use (keeps the top bit clear: Grain-128a reads IV bit 0 as a mode bit).
pub const MAX_COUNTER: u64 = (1 << 63) - 1;
/// Largest frame the gateway accepts (bounds memory per message).
pub const MAX_FRAME: usize = 256 * 1024;

/// What a frame carries: the frame's type byte, and the usage label of its keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Proto {
    /// A sensor reading.
    Sensor = 1,
    /// A video frame's part.
    Video = 2,
    /// A Modbus hop frame, master → slave.
    ModbusToSlave = 3,
    /// A Modbus hop frame, slave → master.
    ModbusToMaster = 4,
    /// A GOOSE message.
    Goose = 5,
}

impl Proto {
    /// Every frame type.
    pub const ALL: [Proto; 5] =
        [Proto::Sensor, Proto::Video, Proto::ModbusToSlave, Proto::ModbusToMaster, Proto::Goose];

    /// The usage label in the cipher key's HKDF info.
    pub fn label(self) -> &'static str {
        match self {
            Proto::Sensor => "sensor",
            Proto::Video => "video",
            Proto::ModbusToSlave => "modbus/m->s",
            Proto::ModbusToMaster => "modbus/s->m",
            Proto::Goose => "goose",
        }
    }

    /// The protocol a device key is provisioned for (both Modbus directions are one pair's).
    pub fn family(self) -> Family {
        match self {
            Proto::Sensor => Family::Sensor,
            Proto::Video => Family::Video,
            Proto::ModbusToSlave | Proto::ModbusToMaster => Family::Modbus,
            Proto::Goose => Family::Goose,
        }
    }

    /// The frame type of a type byte (None: no such type).
    pub fn from_byte(b: u8) -> Option<Proto> {
        Proto::ALL.into_iter().find(|p| *p as u8 == b)
    }
}

/// The protocol of a device key (`lwcbench link provision --protocol`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Family {
    /// Sensor devices.
    Sensor,
    /// Cameras.
    Video,
    /// Modbus proxy pairs (both directions).
    Modbus,
    /// GOOSE publishers.
    Goose,
}

impl Family {
    /// Every protocol.
    pub const ALL: [Family; 4] = [Family::Sensor, Family::Video, Family::Modbus, Family::Goose];

    /// The name `--protocol` takes.
    pub fn label(self) -> &'static str {
        match self {
            Family::Sensor => "sensor",
            Family::Video => "video",
            Family::Modbus => "modbus",
            Family::Goose => "goose",
        }
    }

    /// `--protocol`.
    pub fn parse(s: &str) -> Result<Family, String> {
        Family::ALL
            .into_iter()
            .find(|f| f.label() == s)
            .ok_or_else(|| format!("--protocol: '{}' is not sensor, video, modbus or goose", crate::input::shown(s)))
    }
}

/// A frame's header (the associated data of its tag).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// Frame version (3).
    pub version: u8,
    /// The frame type.
    pub proto: Proto,
    /// The cipher id.
    pub cipher: u8,
    /// Flag bits ([`FLAG_UNAUTHENTICATED`], [`FLAG_HANDSHAKE`]).
    pub flags: u8,
    /// The sending device.
    pub device: u32,
    /// The frame's counter (its nonce with the key and device).
    pub counter: u64,
}

/// Why a header did not parse.
pub const OLD_VERSION: &str =
    "frame version 1 or 2 is from before the key hierarchy: upgrade both ends (docs/link.md \"Upgrading\")";

impl Header {
    /// A version-3 header.
    pub fn new(proto: Proto, cipher: u8, flags: u8, device: u32, counter: u64) -> Header {
        Header { version: VERSION, proto, cipher, flags, device, counter }
    }

    /// The header's bytes.
    pub fn encode(&self) -> [u8; HEADER_LEN] {
        let mut h = [0u8; HEADER_LEN];
        h[0] = self.version;
        h[1] = self.proto as u8;
        h[2] = self.cipher;
        h[3] = self.flags;
        h[4..8].copy_from_slice(&self.device.to_be_bytes());
        h[8..16].copy_from_slice(&self.counter.to_be_bytes());
        h
    }

    /// Parse the header of a received frame. Only structure is checked here; the receiver checks
    /// the type, the cipher id, the device and the tag.
    pub fn parse(frame: &[u8]) -> Result<Header, &'static str> {
        if frame.len() > MAX_FRAME {
            return Err("frame larger than the 256 KiB limit");
        }
        if frame.first().is_some_and(|&v| v == 1 || v == 2) {
            return Err(OLD_VERSION);
        }
        if frame.len() < HEADER_LEN {
            return Err("frame shorter than its 16-byte header");
        }
        if frame[0] != VERSION {
            return Err("unknown frame version");
        }
        let proto = Proto::from_byte(frame[1]).ok_or("unknown frame type")?;
        let h = Header {
            version: frame[0],
            proto,
            cipher: frame[2],
            flags: frame[3],
            device: u32::from_be_bytes(frame[4..8].try_into().expect("4 bytes")),
            counter: u64::from_be_bytes(frame[8..16].try_into().expect("8 bytes")),
        };
        let allowed =
            if proto.family() == Family::Modbus { FLAG_UNAUTHENTICATED | FLAG_HANDSHAKE } else { FLAG_UNAUTHENTICATED };
        if h.flags & !allowed != 0 {
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
        let h = Header::new(Proto::Goose, 7, 0, 0x0102_0304, 0x1122_3344_5566_7788);
        assert_eq!(
            h.encode(),
            [0x03, 0x05, 0x07, 0x00, 0x01, 0x02, 0x03, 0x04, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88]
        );
        assert_eq!(Header::parse(&h.encode()).unwrap(), h);
        let labels: Vec<&str> = Proto::ALL.iter().map(|p| p.label()).collect();
        assert_eq!(labels, ["sensor", "video", "modbus/m->s", "modbus/s->m", "goose"]);
        assert_eq!(Proto::ALL.map(|p| p as u8), [1, 2, 3, 4, 5]);
    }

    #[test]
    fn parse_refuses_bad_structure() {
        let h = Header::new(Proto::Sensor, 1, 0, 9, 5).encode();
        assert!(Header::parse(&h[..15]).is_err());
        let mut f = h;
        f[3] = 0x02; // the handshake bit is Modbus's only
        assert_eq!(Header::parse(&f), Err("reserved flag bits set"));
        let mut m = Header::new(Proto::ModbusToSlave, 1, 0, 9, 5).encode();
        m[3] = 0x02;
        assert!(Header::parse(&m).is_ok());
        m[3] = 0x04;
        assert!(Header::parse(&m).is_err());
        let mut c = h;
        c[8] = 0x80;
        assert!(Header::parse(&c).is_err());
        for t in [0u8, 6, 255] {
            let mut u = h;
            u[1] = t;
            assert_eq!(Header::parse(&u), Err("unknown frame type"));
        }
        assert!(Header::parse(&vec![0u8; MAX_FRAME + 1]).is_err());
    }

    /// A version-1 frame (the 15-byte header before the key hierarchy; bytes from the old
    /// layout: version, cipher, flags, device, counter) and a version-2 video part are refused
    /// with the upgrade path.
    #[test]
    fn old_versions_are_refused_with_the_upgrade_path() {
        let v1 = [0x01, 0x07, 0x00, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 9, 0xAA, 0xBB];
        assert_eq!(Header::parse(&v1), Err(OLD_VERSION));
        let mut v2 = [0u8; 40];
        v2[0] = 2;
        assert_eq!(Header::parse(&v2), Err(OLD_VERSION));
        assert!(OLD_VERSION.contains("docs/link.md"));
        let mut v4 = Header::new(Proto::Sensor, 1, 0, 9, 5).encode();
        v4[0] = 4;
        assert_eq!(Header::parse(&v4), Err("unknown frame version"));
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
