//! Integrity for DRACO through **this project's composition** (not part of the DRACO design,
//! and DRACO itself is a provisional reconstruction, see the crate doc): a one-time Poly1305
//! key taken from the keystream, laid out as RFC 8439's ChaCha20-Poly1305 AEAD (§2.6, §2.8)
//! with DRACO in place of ChaCha20.
//!
//! Per message, DRACO is initialised with (key, IV) — the IV is the 12-byte nonce and must
//! never repeat under one key:
//! * keystream bytes `0..32` are the one-time key `r ‖ s` ([`OTK_BYTES`]);
//! * bytes `32..64` are discarded (as ChaCha20's block 0 is 64 bytes; [`SKIP_BYTES`]);
//! * the message is XORed with keystream from byte 64 on: `ct[i] = pt[i] ^ ks[64 + i]`;
//! * `tag = Poly1305(otk, AD ‖ pad16(AD) ‖ CT ‖ pad16(CT) ‖ le64(|AD|) ‖ le64(|CT|))`, 16 bytes.
//!
//! [`poly1305_tag`] / [`verify_tag`] are the one definition of the tag, used by the
//! single-stream path here ([`seal_in_place`], [`open_in_place`], on [`crate::DracoFast`]) and
//! by the gateway batch opener ([`crate::batch`]). The same layout is what `lwcbench link` uses
//! for every stream cipher (`crates/link/src/suite.rs`).
use lwcbench_core::StreamCipher;
use poly1305::universal_hash::{KeyInit, UniversalHash};
use poly1305::Poly1305;
use zeroize::Zeroize;

use crate::DracoFast;

/// One-time Poly1305 key bytes at the start of the keystream.
pub const OTK_BYTES: usize = 32;
/// Keystream bytes used before the message (one-time key + 32 discarded bytes).
pub const SKIP_BYTES: usize = 64;
/// Tag length.
pub const TAG_BYTES: usize = 16;

/// The tag did not verify (nothing was decrypted).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TagError;

impl core::fmt::Display for TagError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("authentication tag mismatch")
    }
}

fn mac(otk: &[u8; OTK_BYTES], ad: &[u8], ct: &[u8]) -> Poly1305 {
    let mut p = Poly1305::new(otk.into());
    p.update_padded(ad);
    p.update_padded(ct);
    let mut lens = [0u8; 16];
    lens[..8].copy_from_slice(&(ad.len() as u64).to_le_bytes());
    lens[8..].copy_from_slice(&(ct.len() as u64).to_le_bytes());
    p.update_padded(&lens);
    p
}

/// `Poly1305(otk, AD ‖ pad16 ‖ CT ‖ pad16 ‖ le64(|AD|) ‖ le64(|CT|))`.
pub fn poly1305_tag(otk: &[u8; OTK_BYTES], ad: &[u8], ct: &[u8]) -> [u8; TAG_BYTES] {
    mac(otk, ad, ct).finalize().into()
}

/// Constant-time comparison of the recomputed tag with `tag`.
pub fn verify_tag(otk: &[u8; OTK_BYTES], ad: &[u8], ct: &[u8], tag: &[u8; TAG_BYTES]) -> bool {
    mac(otk, ad, ct).verify(tag.into()).is_ok()
}

/// Initialise single-stream DRACO and take the first [`SKIP_BYTES`] of keystream: returns the
/// cipher positioned at the message and the one-time key.
fn start(key: &[u8; 16], iv: &[u8; 12]) -> (DracoFast, [u8; OTK_BYTES]) {
    let mut c = DracoFast::with_key_iv(key, iv);
    let mut head = [0u8; SKIP_BYTES];
    c.keystream(&mut head).expect("DracoFast is initialised");
    let mut otk = [0u8; OTK_BYTES];
    otk.copy_from_slice(&head[..OTK_BYTES]);
    head.zeroize();
    (c, otk)
}

/// Single-stream seal: encrypts `buf` in place and returns the tag.
pub fn seal_in_place(key: &[u8; 16], iv: &[u8; 12], ad: &[u8], buf: &mut [u8]) -> [u8; TAG_BYTES] {
    let (mut c, mut otk) = start(key, iv);
    c.apply(buf).expect("DracoFast is initialised");
    let tag = poly1305_tag(&otk, ad, buf);
    otk.zeroize();
    tag
}

/// Single-stream open: verifies the tag over the ciphertext first and decrypts `buf` in place
/// only if it matches (on error `buf` is left as it was).
pub fn open_in_place(
    key: &[u8; 16],
    iv: &[u8; 12],
    ad: &[u8],
    buf: &mut [u8],
    tag: &[u8; TAG_BYTES],
) -> Result<(), TagError> {
    let (mut c, mut otk) = start(key, iv);
    let ok = verify_tag(&otk, ad, buf, tag);
    otk.zeroize();
    if !ok {
        return Err(TagError);
    }
    c.apply(buf).expect("DracoFast is initialised");
    Ok(())
}

/// The one-time key and the keystream for a message of `len` bytes, single stream (used by
/// tests and by callers that want the raw pieces, as the batch opener returns them).
pub fn otk_and_decrypt(key: &[u8; 16], iv: &[u8; 12], buf: &mut [u8]) -> [u8; OTK_BYTES] {
    let (mut c, otk) = start(key, iv);
    c.apply(buf).expect("DracoFast is initialised");
    otk
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 8439 §2.5.2 test vector (shared/vectors/ietf/rfc8439.txt): the Poly1305 primitive as wired here.
    #[test]
    fn poly1305_primitive_matches_rfc8439_2_5_2() {
        let otk: [u8; 32] = [
            0x85, 0xd6, 0xbe, 0x78, 0x57, 0x55, 0x6d, 0x33, 0x7f, 0x44, 0x52, 0xfe, 0x42, 0xd5, 0x06, 0xa8, 0x01, 0x03,
            0x80, 0x8a, 0xfb, 0x0d, 0xb2, 0xfd, 0x4a, 0xbf, 0xf6, 0xaf, 0x41, 0x49, 0xf5, 0x1b,
        ];
        let msg = b"Cryptographic Forum Research Group";
        let t: [u8; 16] = Poly1305::new((&otk).into()).compute_unpadded(msg).into();
        assert_eq!(t, [0xa8, 0x06, 0x1d, 0xc1, 0x30, 0x51, 0x36, 0xc6, 0xc2, 0x2b, 0x8b, 0xaf, 0x0c, 0x01, 0x27, 0xa9]);
    }

    /// RFC 8439 §2.8.2 AEAD test vector: its one-time key (§2.8.2 "Poly1305 Key"), AAD and
    /// ciphertext give its tag through this module's layout (pad16, lengths).
    #[test]
    fn layout_matches_rfc8439_2_8_2() {
        let otk: [u8; 32] = [
            0x7b, 0xac, 0x2b, 0x25, 0x2d, 0xb4, 0x47, 0xaf, 0x09, 0xb6, 0x7a, 0x55, 0xa4, 0xe9, 0x55, 0x84, 0x0a, 0xe1,
            0xd6, 0x73, 0x10, 0x75, 0xd9, 0xeb, 0x2a, 0x93, 0x75, 0x78, 0x3e, 0xd5, 0x53, 0xff,
        ];
        let ad = [0x50, 0x51, 0x52, 0x53, 0xc0, 0xc1, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xc7];
        let ct = hex(concat!(
            "d31a8d34648e60db7b86afbc53ef7ec2a4aded51296e08fea9e2b5a736ee62d63dbea45e8ca9671282fafb69da92728b",
            "1a71de0a9e060b2905d6a5b67ecd3b3692ddbd7f2d778b8c9803aee328091b58fab324e4fad675945585808b4831d7bc",
            "3ff4def08e4b7a9de576d26586cec64b6116"
        ));
        let want = [0x1a, 0xe1, 0x0b, 0x59, 0x4f, 0x09, 0xe2, 0x6a, 0x7e, 0x90, 0x2e, 0xcb, 0xd0, 0x60, 0x06, 0x91];
        assert_eq!(poly1305_tag(&otk, &ad, &ct), want);
        assert!(verify_tag(&otk, &ad, &ct, &want));
        let mut bad = want;
        bad[15] ^= 1;
        assert!(!verify_tag(&otk, &ad, &ct, &bad));
    }

    fn hex(s: &str) -> std::vec::Vec<u8> {
        (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
    }

    /// Keystream layout: otk = reference keystream bytes 0..32, ct = pt ^ bytes 64.. (expected
    /// values from the bit-serial reference, an independent implementation).
    #[test]
    fn layout_against_reference_keystream() {
        let (key, iv) = ([0x5au8; 16], *b"nonce-000001");
        let mut r = crate::DracoRef::with_key_iv(&key, &iv);
        let mut ks = [0u8; 64 + 40];
        r.keystream(&mut ks).unwrap();
        let pt: std::vec::Vec<u8> = (0..40u8).collect();
        let mut buf = pt.clone();
        let ad = b"header";
        let tag = seal_in_place(&key, &iv, ad, &mut buf);
        for i in 0..40 {
            assert_eq!(buf[i], pt[i] ^ ks[64 + i], "byte {i}");
        }
        let otk: [u8; 32] = ks[..32].try_into().unwrap();
        assert_eq!(tag, poly1305_tag(&otk, ad, &buf));
        // open refuses a flipped bit (ciphertext unchanged), accepts the original
        let mut forged = buf.clone();
        forged[3] ^= 0x10;
        let before = forged.clone();
        assert_eq!(open_in_place(&key, &iv, ad, &mut forged, &tag), Err(TagError));
        assert_eq!(forged, before);
        assert_eq!(open_in_place(&key, &iv, b"headex", &mut buf.clone(), &tag), Err(TagError));
        open_in_place(&key, &iv, ad, &mut buf, &tag).unwrap();
        assert_eq!(buf, pt);
    }
}
