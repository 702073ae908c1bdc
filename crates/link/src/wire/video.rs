//! Video frames on the link (type 2 of frame version 3): a camera frame split into parts, each
//! part sealed on its own with the part's place in the frame inside the authenticated header.
//!
//! ```text
//! offset size field
//! 0      1    version      (3)
//! 1      1    type         (2 = video)
//! 2      1    cipher id    (as for every frame)
//! 3      1    flags        bit 0 = confidentiality only (UNSAFE, no tag); other bits must be 0
//! 4      4    device id    big-endian u32
//! 8      8    counter      big-endian u64 (< 2^63), one per part
//! 16     4    frame number big-endian u32
//! 20     2    part index   big-endian u16 (< part count)
//! 22     2    part count   big-endian u16 (≥ 1)
//! 24     4    frame bytes  big-endian u32 (1 ..= MAX_VIDEO_FRAME): the whole frame's plaintext
//! 28     n    ciphertext   this part's bytes of the frame
//! 28+n   t    tag          the suite's tag length
//! ```
//! Part `i` of a frame of `L` bytes in `k` parts carries bytes `i·S .. min(L, (i+1)·S)` with
//! `S = ⌈L / k⌉`, so its length follows from the header and is checked before the tag.
use crate::wire::frame::{Proto, FLAG_UNAUTHENTICATED, MAX_COUNTER, MAX_FRAME, OLD_VERSION, VERSION};
use crate::wire::suite::{Keyed, OpenError};

/// Header bytes of a video part (the common 16, then frame number, part index, part count and
/// frame bytes).
pub const VIDEO_HEADER_LEN: usize = 28;
/// Largest video frame (plaintext) a camera may send: bounds what one frame in reassembly holds.
/// A 3840×2160 4:2:0 frame (12,441,600 B) fits.
pub const MAX_VIDEO_FRAME: usize = 16 << 20;
/// Most parts one frame may have (the 16-bit part count).
pub const MAX_PARTS: usize = u16::MAX as usize;

/// The header of one part.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PartHeader {
    /// The cipher id.
    pub cipher: u8,
    /// Flag bits.
    pub flags: u8,
    /// The camera's device id.
    pub device: u32,
    /// The part's counter.
    pub counter: u64,
    /// The frame number.
    pub frame: u32,
    /// The part's index in its frame.
    pub index: u16,
    /// The frame's number of parts.
    pub count: u16,
    /// The whole frame's size in bytes.
    pub frame_bytes: u32,
}

impl PartHeader {
    /// The header's bytes.
    pub fn encode(&self) -> [u8; VIDEO_HEADER_LEN] {
        let mut h = [0u8; VIDEO_HEADER_LEN];
        h[0] = VERSION;
        h[1] = Proto::Video as u8;
        h[2] = self.cipher;
        h[3] = self.flags;
        h[4..8].copy_from_slice(&self.device.to_be_bytes());
        h[8..16].copy_from_slice(&self.counter.to_be_bytes());
        h[16..20].copy_from_slice(&self.frame.to_be_bytes());
        h[20..22].copy_from_slice(&self.index.to_be_bytes());
        h[22..24].copy_from_slice(&self.count.to_be_bytes());
        h[24..28].copy_from_slice(&self.frame_bytes.to_be_bytes());
        h
    }

    /// Parse a received part's header and check its structure: size limits, version, flags,
    /// counter top bit, index < count, and that the ciphertext has exactly the length the
    /// header's (frame bytes, part count, index) give, after `nonce_and_tag` bytes of random
    /// nonce and tag (`Keyed::nonce_and_tag_len`).
    pub fn parse(msg: &[u8], nonce_and_tag: usize) -> Result<PartHeader, &'static str> {
        if msg.len() > MAX_FRAME {
            return Err("part larger than the 256 KiB limit");
        }
        if msg.first().is_some_and(|&v| v == 1 || v == 2) {
            return Err(OLD_VERSION);
        }
        if msg.len() < VIDEO_HEADER_LEN {
            return Err("part shorter than its 28-byte header");
        }
        let be32 = |a: usize| u32::from_be_bytes(msg[a..a + 4].try_into().expect("4 bytes"));
        let be16 = |a: usize| u16::from_be_bytes(msg[a..a + 2].try_into().expect("2 bytes"));
        let h = PartHeader {
            cipher: msg[2],
            flags: msg[3],
            device: be32(4),
            counter: u64::from_be_bytes(msg[8..16].try_into().expect("8 bytes")),
            frame: be32(16),
            index: be16(20),
            count: be16(22),
            frame_bytes: be32(24),
        };
        if msg[0] != VERSION || msg[1] != Proto::Video as u8 {
            return Err("not a video part (version 3, type 2)");
        }
        if h.flags & !FLAG_UNAUTHENTICATED != 0 {
            return Err("reserved flag bits set");
        }
        if h.counter > MAX_COUNTER {
            return Err("counter has its top bit set");
        }
        if h.frame_bytes == 0 || h.frame_bytes as usize > MAX_VIDEO_FRAME {
            return Err("frame bytes outside 1..=16 MiB");
        }
        if h.count == 0 || h.index >= h.count || h.count as usize > h.frame_bytes as usize {
            return Err("part index or count out of range");
        }
        let want = part_range(h.frame_bytes as usize, h.count as usize, h.index as usize);
        if want.is_empty() || msg.len() != VIDEO_HEADER_LEN + want.len() + nonce_and_tag {
            return Err("part length does not match its header");
        }
        Ok(h)
    }
}

/// Bytes of a frame of `len` bytes that part `index` of `count` carries.
pub fn part_range(len: usize, count: usize, index: usize) -> std::ops::Range<usize> {
    let s = len.div_ceil(count);
    (index * s).min(len)..((index + 1) * s).min(len)
}

/// Parts of a frame of `len` bytes when no message may exceed `part_bytes` bytes on the wire
/// (header + a `random_nonce`-byte random nonce, 0 for counter nonces + ciphertext + a
/// `tag_len`-byte tag). Refuses, naming the option, a part size that leaves no room for frame
/// bytes, a frame over [`MAX_VIDEO_FRAME`] and a frame that would need more than [`MAX_PARTS`]
/// parts.
pub fn part_count(len: usize, part_bytes: usize, random_nonce: usize, tag_len: usize) -> Result<usize, String> {
    let over = VIDEO_HEADER_LEN + random_nonce + tag_len;
    if part_bytes <= over {
        let nonce = if random_nonce > 0 { format!(", {random_nonce}-byte nonce") } else { String::new() };
        let and = if random_nonce > 0 { "," } else { "" };
        return Err(format!(
            "--frame-part-bytes {part_bytes}: a part needs more than its {VIDEO_HEADER_LEN}-byte header{nonce}{and} and {tag_len}-byte tag ({over} B)"
        ));
    }
    if part_bytes > MAX_FRAME {
        return Err(format!("--frame-part-bytes {part_bytes}: above the link's 262144-byte message limit"));
    }
    if len == 0 || len > MAX_VIDEO_FRAME {
        return Err(format!("video frame of {len} bytes: outside the 1..={MAX_VIDEO_FRAME} byte limit"));
    }
    let k = len.div_ceil(part_bytes - over);
    if k > MAX_PARTS {
        return Err(format!(
            "--frame-part-bytes {part_bytes}: a {len}-byte frame would need {k} parts (at most {MAX_PARTS})"
        ));
    }
    Ok(k)
}

/// Seal frame `number` of `frame` into `parts` messages (each of at most `part_bytes` bytes),
/// taking one counter per part from `next_counter` (the device's durable counter).
pub fn seal_frame(
    keyed: &mut Keyed,
    device: u32,
    number: u32,
    frame_data: &[u8],
    part_bytes: usize,
    unauthenticated: bool,
    mut next_counter: impl FnMut() -> Result<u64, String>,
) -> Result<Vec<Vec<u8>>, String> {
    let count = part_count(frame_data.len(), part_bytes, keyed.suite.random_nonce_len(), keyed.tag_len())?;
    let mut out = Vec::with_capacity(count);
    for i in 0..count {
        let counter = next_counter()?;
        let h = PartHeader {
            cipher: keyed.suite.id,
            flags: if unauthenticated { FLAG_UNAUTHENTICATED } else { 0 },
            device,
            counter,
            frame: number,
            index: i as u16,
            count: count as u16,
            frame_bytes: frame_data.len() as u32,
        };
        let mut m = Vec::new();
        keyed.seal_with_header(
            &h.encode(),
            device,
            counter,
            &frame_data[part_range(frame_data.len(), count, i)],
            &mut m,
        )?;
        out.push(m);
    }
    Ok(out)
}

/// Check the tag of a part whose header parsed as `h` and return its plaintext bytes.
pub fn open_part(keyed: &mut Keyed, h: &PartHeader, msg: &[u8]) -> Result<Vec<u8>, OpenError> {
    keyed.open_with_header(VIDEO_HEADER_LEN, h.device, h.counter, msg)
}

/// Whether a received message is a video part (version byte 2) rather than a version 1 frame.
pub fn is_video(msg: &[u8]) -> bool {
    msg.len() >= 2 && msg[0] == VERSION && msg[1] == Proto::Video as u8
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::suite;

    fn keyed(name: &str) -> Keyed {
        let s = suite::find(name).unwrap();
        Keyed::new(&s, &vec![7u8; s.key_len()], Proto::Video, false).unwrap()
    }

    /// Bytes written out by hand from the layout table above.
    #[test]
    fn header_bytes_by_hand() {
        let h = PartHeader {
            cipher: 1,
            flags: 0,
            device: 0x0102_0304,
            counter: 0x1122_3344_5566_7788,
            frame: 0x0A0B_0C0D,
            index: 0x0102,
            count: 0x0304,
            frame_bytes: 0x0001_C200,
        };
        assert_eq!(
            h.encode(),
            [
                3, 2, 1, 0, 1, 2, 3, 4, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x0A, 0x0B, 0x0C, 0x0D, 1, 2,
                3, 4, 0, 1, 0xC2, 0
            ]
        );
    }

    /// A 320×240 4:2:0 frame is 320·240·1.5 = 115,200 B. In a 1472-byte UDP datagram with the
    /// 28-byte header and a 16-byte tag a part holds 1472 − 44 = 1428 B, so ⌈115200 / 1428⌉ = 81
    /// parts (80 · 1428 = 114,240 < 115,200 ≤ 81 · 1428 = 115,668). Each part then carries
    /// S = ⌈115200 / 81⌉ = 1423 B, the last 115,200 − 80 · 1423 = 1,360 B; on the wire
    /// 80 · (44 + 1423) + 44 + 1360 = 118,764 B, overhead 81 · 44 = 3,564 B per frame.
    /// Over MQTT with 262,144-byte parts: ⌈115200 / 262100⌉ = 1 part of 115,244 B.
    #[test]
    fn split_and_reassemble_320x240() {
        let frame: Vec<u8> = (0..115_200u32).map(|i| (i * 31 + 7) as u8).collect();
        let mut k = keyed("Ascon-AEAD128");
        let mut c = 100u64;
        let parts = seal_frame(&mut k, 5, 9, &frame, 1472, false, || {
            c += 1;
            Ok(c)
        })
        .unwrap();
        assert_eq!(parts.len(), 81);
        assert!(parts.iter().all(|p| p.len() <= 1472));
        assert_eq!(parts[0].len(), 44 + 1423);
        assert_eq!(parts[80].len(), 44 + 1360);
        assert_eq!(parts.iter().map(Vec::len).sum::<usize>(), 118_764);
        let mut back = Vec::new();
        let mut open = keyed("Ascon-AEAD128");
        for (i, p) in parts.iter().enumerate() {
            let h = PartHeader::parse(p, 16).unwrap();
            assert_eq!((h.frame, h.index as usize, h.count, h.counter, h.device), (9, i, 81, 101 + i as u64, 5));
            back.extend(open_part(&mut open, &h, p).unwrap());
        }
        assert_eq!(back, frame);
        let mqtt = seal_frame(&mut k, 5, 10, &frame, MAX_FRAME, false, || Ok(500)).unwrap();
        assert_eq!(mqtt.len(), 1);
        assert_eq!(mqtt[0].len(), 115_244);
    }

    /// The misuse-resistant suites carry a video frame: with XChaCha20-Poly1305 each part is
    /// 28-byte header ‖ 24-byte random nonce ‖ body ‖ 16-byte tag, so a 1472-byte part holds
    /// 1472 − 68 = 1404 B and 3000 B need ⌈3000 / 1404⌉ = 3 parts of ⌈3000 / 3⌉ = 1000 B
    /// (1068 B each); with AES-GCM-SIV a part holds 1428 B: 3 parts too, of 1044 B. Every
    /// changed byte of a part is refused.
    #[test]
    fn misuse_resistant_suites_carry_video_parts() {
        let frame: Vec<u8> = (0..3000u32).map(|i| (i * 7) as u8).collect();
        for (name, part_len) in [("XChaCha20-Poly1305", 1068), ("AES-128-GCM-SIV", 1044), ("AES-256-GCM-SIV", 1044)] {
            let mut k = keyed(name);
            let mut c = 0u64;
            let parts = seal_frame(&mut k, 3, 4, &frame, 1472, false, || {
                c += 1;
                Ok(c)
            })
            .unwrap();
            assert_eq!(parts.iter().map(Vec::len).collect::<Vec<_>>(), [part_len; 3], "{name}");
            let mut open = keyed(name);
            let mut back = Vec::new();
            for p in &parts {
                let h = PartHeader::parse(p, open.nonce_and_tag_len()).unwrap();
                back.extend(open_part(&mut open, &h, p).unwrap());
            }
            assert_eq!(back, frame, "{name}");
            let p = &parts[1];
            for i in 0..p.len() {
                let mut t = p.clone();
                t[i] ^= 0x01;
                let r = PartHeader::parse(&t, open.nonce_and_tag_len()).map(|h| open_part(&mut open, &h, &t));
                assert!(!matches!(r, Ok(Ok(_))), "{name}: byte {i} flipped was accepted");
            }
        }
        // the nonce counts against the part size: 28 + 24 + 16 = 68 B leaves nothing at 68
        let e = part_count(100, 68, 24, 16).unwrap_err();
        assert_eq!(
            e,
            "--frame-part-bytes 68: a part needs more than its 28-byte header, 24-byte nonce, and 16-byte tag (68 B)"
        );
        assert_eq!(part_count(100, 69, 24, 16).unwrap(), 100);
    }

    /// Any changed byte of a part (header or body or tag) fails its tag.
    #[test]
    fn tampered_part_fails() {
        let frame = vec![0x5Au8; 3000];
        let mut k = keyed("ChaCha20-Poly1305");
        let mut c = 0u64;
        let parts = seal_frame(&mut k, 1, 2, &frame, 1472, false, || {
            c += 1;
            Ok(c)
        })
        .unwrap();
        let p = &parts[1];
        for i in [0usize, 1, 2, 7, 16, 20, 22, 26, 27, 28, p.len() - 1] {
            let mut t = p.clone();
            t[i] ^= 0x01;
            let r = PartHeader::parse(&t, 16).map(|h| open_part(&mut k, &h, &t));
            assert!(!matches!(r, Ok(Ok(_))), "byte {i} changed and the part still opened");
        }
    }

    #[test]
    fn limits_and_structure() {
        // 44 B of header + tag leave no room
        assert!(part_count(100, 44, 0, 16).unwrap_err().contains("--frame-part-bytes 44"));
        assert_eq!(part_count(100, 45, 0, 16).unwrap(), 100);
        assert!(part_count(MAX_VIDEO_FRAME + 1, 1472, 0, 16).is_err());
        assert!(part_count(100, MAX_FRAME + 1, 0, 16).is_err());
        // 16 MiB in parts of 1 B needs more than 65,535 parts
        assert!(part_count(MAX_VIDEO_FRAME, 45, 0, 16).unwrap_err().contains("parts"));
        let h =
            PartHeader { cipher: 1, flags: 0, device: 0, counter: 0, frame: 0, index: 0, count: 2, frame_bytes: 10 };
        let mut m = h.encode().to_vec();
        m.extend([0u8; 5 + 16]);
        assert!(PartHeader::parse(&m, 16).is_ok());
        assert!(PartHeader::parse(&m[..m.len() - 1], 16).is_err());
        for (at, v) in [(0usize, 1u8), (0, 2), (1, 1), (3, 2), (8, 0x80), (21, 2), (23, 0)] {
            let mut b = m.clone();
            b[at] = v;
            assert!(PartHeader::parse(&b, 16).is_err(), "byte {at} = {v}");
        }
    }
}
