//! The hop protocol between the two proxies (docs/link.md "The hop protocol"): the modbus frame
//! header with its 8-byte extension, the per-connection handshake, and the connection id every
//! later frame authenticates without sending it.
//!
//! ```text
//! offset size field
//! 0      16   link frame header, version 3 (docs/link.md "Frame format"): type 3 master → slave
//!             or 4 slave → master, device = the direction's link device; flags bit 1 = handshake
//! 16     8    extension, big-endian u64:
//!               master → slave: milliseconds since the connection's handshake (master's clock)
//!               slave → master: the counter of the request this frame answers
//! 24     n    ciphertext (the ADU; a handshake's 24 bytes)
//! 24+n   t    tag
//! ```
//! Associated data = the 24 bytes above ‖ the implicit part: the hello has none, the reply the
//! hello's nonce Nm (16 B), every later frame the connection id Nm ‖ Ns (32 B). The handshake's
//! plaintext is a fresh random 16-byte nonce then the sender's accepted mark for the other
//! direction (big-endian u64: 0 = nothing accepted, else the highest accepted counter + 1).
//!
//! Frames go through `Keyed::seal_with_header` / `open_with_header`, which take any header
//! bytes as associated data; both directions' keys come from the pair's key, one per type.
use crate::wire::frame::{Family, Header, Proto, HEADER_LEN, MAX_COUNTER};
use crate::wire::suite::{Keyed, OpenError};

/// Extension bytes after the common header.
pub const EXT_LEN: usize = 8;
/// Common header + extension: the explicit associated data.
pub const MODBUS_HEADER_LEN: usize = HEADER_LEN + EXT_LEN;
/// Flag bit: a handshake frame (hello or reply); the common header's.
pub use crate::wire::frame::FLAG_HANDSHAKE;
/// The per-connection nonce of each side.
pub const NONCE_LEN: usize = 16;
/// Connection id: Nm ‖ Ns.
pub const CONN_ID_LEN: usize = 2 * NONCE_LEN;
/// A handshake's plaintext: nonce and accepted mark.
pub const HANDSHAKE_LEN: usize = NONCE_LEN + 8;

/// Modbus function codes that change the slave (Modbus Application Protocol v1.1b3 §6): write
/// single coil 5, write single register 6, write multiple coils 15, write multiple registers 16,
/// mask write register 22, read/write multiple registers 23.
pub const WRITE_FUNCTIONS: [u8; 6] = [5, 6, 15, 16, 22, 23];

/// Whether `adu` (one checked ADU) carries a write function code.
pub fn is_write(adu: &[u8]) -> bool {
    adu.get(crate::industrial::modbus::adu::MBAP_LEN).is_some_and(|f| WRITE_FUNCTIONS.contains(f))
}

/// The header of one hop frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ModbusHeader {
    /// The direction: [`Proto::ModbusToSlave`] or [`Proto::ModbusToMaster`].
    pub proto: Proto,
    /// The cipher id.
    pub cipher: u8,
    /// Flag bits ([`FLAG_HANDSHAKE`], …).
    pub flags: u8,
    /// The sending direction's device id.
    pub device: u32,
    /// The frame's counter.
    pub counter: u64,
    /// The extension: ms since the handshake (m → s) or the answered request's counter (s → m).
    pub ext: u64,
}

impl ModbusHeader {
    /// The header's bytes.
    pub fn encode(&self) -> [u8; MODBUS_HEADER_LEN] {
        let mut h = [0u8; MODBUS_HEADER_LEN];
        h[..HEADER_LEN]
            .copy_from_slice(&Header::new(self.proto, self.cipher, self.flags, self.device, self.counter).encode());
        h[HEADER_LEN..].copy_from_slice(&self.ext.to_be_bytes());
        h
    }

    /// Structure only (the receiver checks type, device, cipher, counter and tag). The common
    /// header is parsed first, so a frame of version 1 or 2 gets the upgrade message.
    pub fn parse(frame: &[u8]) -> Result<ModbusHeader, &'static str> {
        let c = Header::parse(frame)?;
        if c.proto.family() != Family::Modbus {
            return Err("not a Modbus hop frame type");
        }
        if frame.len() < MODBUS_HEADER_LEN {
            return Err("frame shorter than its 24-byte header");
        }
        let ext = u64::from_be_bytes(frame[HEADER_LEN..MODBUS_HEADER_LEN].try_into().expect("8 bytes"));
        Ok(ModbusHeader { proto: c.proto, cipher: c.cipher, flags: c.flags, device: c.device, counter: c.counter, ext })
    }

    /// Whether it is a handshake record.
    pub fn is_handshake(&self) -> bool {
        self.flags & FLAG_HANDSHAKE != 0
    }
}

/// Seal `plain` as the frame of `h` into `out`, authenticating `implicit` after the header
/// without sending it.
pub fn seal(
    keyed: &mut Keyed,
    h: &ModbusHeader,
    implicit: &[u8],
    plain: &[u8],
    out: &mut Vec<u8>,
) -> Result<(), String> {
    let mut ad = Vec::with_capacity(MODBUS_HEADER_LEN + implicit.len());
    ad.extend_from_slice(&h.encode());
    ad.extend_from_slice(implicit);
    keyed.seal_with_header(&ad, h.device, h.counter, plain, out)?;
    // The implicit part is known to the receiver: it is not sent.
    out.drain(MODBUS_HEADER_LEN..MODBUS_HEADER_LEN + implicit.len());
    Ok(())
}

/// Check and decrypt a frame parsed as `h`, with `implicit` as the rest of its associated data.
pub fn open(keyed: &mut Keyed, h: &ModbusHeader, frame: &[u8], implicit: &[u8]) -> Result<Vec<u8>, OpenError> {
    if frame.len() < MODBUS_HEADER_LEN {
        return Err(OpenError::Malformed);
    }
    let mut whole = Vec::with_capacity(frame.len() + implicit.len());
    whole.extend_from_slice(&frame[..MODBUS_HEADER_LEN]);
    whole.extend_from_slice(implicit);
    whole.extend_from_slice(&frame[MODBUS_HEADER_LEN..]);
    keyed.open_with_header(MODBUS_HEADER_LEN + implicit.len(), h.device, h.counter, &whole)
}

/// An accepted mark on the wire: 0 = nothing accepted, else the highest accepted counter + 1.
pub fn mark_to_wire(top: Option<u64>) -> u64 {
    top.map_or(0, |t| t + 1)
}

/// An accepted mark as the handshake carries it back ([`mark_to_wire`]).
pub fn mark_from_wire(m: u64) -> Option<u64> {
    m.checked_sub(1)
}

/// The plaintext of a hello or a reply.
pub fn handshake_body(nonce: &[u8; NONCE_LEN], mark: Option<u64>) -> [u8; HANDSHAKE_LEN] {
    let mut b = [0u8; HANDSHAKE_LEN];
    b[..NONCE_LEN].copy_from_slice(nonce);
    b[NONCE_LEN..].copy_from_slice(&mark_to_wire(mark).to_be_bytes());
    b
}

/// (nonce, the peer's accepted mark) of a hello or reply plaintext.
pub fn parse_handshake(b: &[u8]) -> Option<([u8; NONCE_LEN], Option<u64>)> {
    if b.len() != HANDSHAKE_LEN {
        return None;
    }
    let mark = u64::from_be_bytes(b[NONCE_LEN..].try_into().ok()?);
    if mark > MAX_COUNTER + 1 {
        return None;
    }
    Some((b[..NONCE_LEN].try_into().ok()?, mark_from_wire(mark)))
}

/// The connection id: Nm ‖ Ns.
pub fn conn_id(nm: &[u8; NONCE_LEN], ns: &[u8; NONCE_LEN]) -> [u8; CONN_ID_LEN] {
    let mut id = [0u8; CONN_ID_LEN];
    id[..NONCE_LEN].copy_from_slice(nm);
    id[NONCE_LEN..].copy_from_slice(ns);
    id
}

/// Whether a peer's accepted mark is consistent with this process's sending counters: every
/// counter the peer accepted was sealed by this process (`top <= highest_taken`) and the peer has
/// not accepted this handshake's own counter before it (`top != handshake_counter`). A counter
/// state restored from a backup (or copied) seals counters the peer has already accepted, so the
/// peer's mark is above what this process took, or equals the handshake's counter.
pub fn mark_consistent(peer_top: Option<u64>, highest_taken: u64, handshake_counter: u64) -> bool {
    match peer_top {
        None => true,
        Some(t) => t <= highest_taken && t != handshake_counter,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::suite;

    /// The 24 header bytes written out by hand from the layout table above (version 3, type 4 =
    /// slave → master, cipher 1, flags 0x02, device, counter, then the extension).
    #[test]
    fn header_bytes_by_hand() {
        let h = ModbusHeader {
            proto: Proto::ModbusToMaster,
            cipher: 1,
            flags: 0x02,
            device: 0x4D42_0001,
            counter: 0x0102,
            ext: 0x0A0B,
        };
        assert_eq!(
            h.encode(),
            [3, 4, 1, 2, 0x4D, 0x42, 0x00, 0x01, 0, 0, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 0, 0, 0x0A, 0x0B]
        );
        assert_eq!(ModbusHeader::parse(&h.encode()).unwrap(), h);
        let mut bad = h.encode();
        bad[3] = 0x04;
        assert!(ModbusHeader::parse(&bad).is_err());
        assert_eq!(ModbusHeader::parse(&h.encode()[..23]), Err("frame shorter than its 24-byte header"));
        let mut sensor = h.encode();
        sensor[1] = 1; // a sensor frame's type byte, handshake flag cleared
        sensor[3] = 0;
        assert_eq!(ModbusHeader::parse(&sensor), Err("not a Modbus hop frame type"));
        // The hop's header before frame version 3 (version 1, 15-byte common part, 23 bytes).
        let v1 = [1, 1, 2, 0x4D, 0x42, 0x00, 0x01, 0, 0, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 0, 0, 0x0A, 0x0B, 0xEE];
        assert_eq!(ModbusHeader::parse(&v1), Err(crate::wire::frame::OLD_VERSION));
    }

    /// The implicit part is authenticated but not sent: the frame is 24 + n + tag bytes, and
    /// opens only with the same implicit bytes.
    #[test]
    fn implicit_associated_data() {
        let s = suite::find("Ascon-AEAD128").unwrap();
        let mut k = Keyed::new(&s, &[9u8; 16], Proto::ModbusToSlave, false).unwrap();
        let h = ModbusHeader { proto: Proto::ModbusToSlave, cipher: s.id, flags: 0, device: 7, counter: 3, ext: 0 };
        let mut f = Vec::new();
        seal(&mut k, &h, &[1u8; 32], b"adu", &mut f).unwrap();
        assert_eq!(f.len(), 24 + 3 + 16);
        assert_eq!(&f[..24], &h.encode());
        assert_eq!(open(&mut k, &h, &f, &[1u8; 32]).unwrap(), b"adu");
        assert_eq!(open(&mut k, &h, &f, &[2u8; 32]), Err(OpenError::BadTag));
        assert_eq!(open(&mut k, &h, &f, &[]), Err(OpenError::BadTag));
        // The type byte is authenticated: the same frame relabelled as the other direction fails.
        let mut t = f.clone();
        t[1] = Proto::ModbusToMaster as u8;
        let th = ModbusHeader::parse(&t).unwrap();
        assert_eq!(open(&mut k, &th, &t, &[1u8; 32]), Err(OpenError::BadTag));
    }

    #[test]
    fn marks_and_handshake_bodies() {
        assert_eq!((mark_to_wire(None), mark_to_wire(Some(0)), mark_to_wire(Some(41))), (0, 1, 42));
        let b = handshake_body(&[5; 16], Some(41));
        assert_eq!(&b[16..], &[0, 0, 0, 0, 0, 0, 0, 42]);
        assert_eq!(parse_handshake(&b), Some(([5; 16], Some(41))));
        assert_eq!(parse_handshake(&handshake_body(&[5; 16], None)), Some(([5; 16], None)));
        assert_eq!(parse_handshake(&b[..23]), None);
        // Legitimate: marks at or below what this process took, never its handshake's counter.
        assert!(mark_consistent(None, 5, 5));
        assert!(mark_consistent(Some(4), 5, 5));
        assert!(mark_consistent(Some(9), 9, 5), "a later counter of this process on another connection");
        assert!(!mark_consistent(Some(5), 5, 5), "the peer accepted the handshake's counter before it");
        assert!(!mark_consistent(Some(10), 9, 5), "the peer accepted a counter this process never took");
        assert!(is_write(&[0, 1, 0, 0, 0, 6, 1, 6, 0, 0, 0, 0]) && !is_write(&[0, 1, 0, 0, 0, 6, 1, 3, 0, 0, 0, 1]));
    }
}
