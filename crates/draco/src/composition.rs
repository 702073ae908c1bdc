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
//! for every stream cipher (`crates/link/src/wire/suite.rs`).
use lwcbench_core::StreamCipher;
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

/// Poly1305 (RFC 8439 §2.5) over `parts`, each zero-padded to a multiple of 16 bytes, so every
/// block is a full block (the AEAD layout needs nothing else). Own implementation, 5 × 26-bit
/// limbs, no secret-dependent branch or index: the `poly1305` crate's run-time-selected AVX2
/// backend took ~4 µs per short tag in this workspace's build (its intrinsics are not inlined
/// without a global `target-feature`), more than the DRACO work per message. Cross-checked
/// against that crate and the RFC's vectors in the tests.
#[allow(clippy::needless_range_loop)] // limb indices mirror the arithmetic
fn poly1305_padded(otk: &[u8; OTK_BYTES], parts: &[&[u8]]) -> [u8; TAG_BYTES] {
    const M: u64 = 0x3ff_ffff;
    let r = u128::from_le_bytes(otk[..16].try_into().expect("16 bytes")) & 0x0fff_fffc_0fff_fffc_0fff_fffc_0fff_ffff;
    let r: [u64; 5] = core::array::from_fn(|i| (r >> (26 * i)) as u64 & M);
    let r5: [u64; 5] = core::array::from_fn(|i| r[i] * 5);
    let mut h = [0u64; 5];
    let mut block = |b: &[u8; 16]| {
        let m = u128::from_le_bytes(*b);
        for i in 0..4 {
            h[i] += (m >> (26 * i)) as u64 & M;
        }
        h[4] += (m >> 104) as u64 | (1 << 24); // the 2^128 bit of a full block
        let d = [
            h[0] * r[0] + h[1] * r5[4] + h[2] * r5[3] + h[3] * r5[2] + h[4] * r5[1],
            h[0] * r[1] + h[1] * r[0] + h[2] * r5[4] + h[3] * r5[3] + h[4] * r5[2],
            h[0] * r[2] + h[1] * r[1] + h[2] * r[0] + h[3] * r5[4] + h[4] * r5[3],
            h[0] * r[3] + h[1] * r[2] + h[2] * r[1] + h[3] * r[0] + h[4] * r5[4],
            h[0] * r[4] + h[1] * r[3] + h[2] * r[2] + h[3] * r[1] + h[4] * r[0],
        ];
        let mut c = 0u64;
        for i in 0..5 {
            let v = d[i] + c;
            h[i] = v & M;
            c = v >> 26;
        }
        h[0] += c * 5; // 2^130 = 5 mod p
        h[1] += h[0] >> 26;
        h[0] &= M;
    };
    for part in parts {
        let mut chunks = part.chunks_exact(16);
        for b in &mut chunks {
            block(b.try_into().expect("16 bytes"));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut b = [0u8; 16];
            b[..rest.len()].copy_from_slice(rest);
            block(&b);
            b.zeroize();
        }
    }
    // full carry, then h mod p by selecting h - p when it does not borrow (constant time)
    let mut c = h[0] >> 26;
    h[0] &= M;
    for i in 1..5 {
        h[i] += c;
        c = h[i] >> 26;
        h[i] &= M;
    }
    h[0] += c * 5;
    h[1] += h[0] >> 26;
    h[0] &= M;
    let mut g = [0u64; 5];
    let mut c = 5u64;
    for i in 0..5 {
        let v = h[i] + c;
        g[i] = v & M;
        c = v >> 26;
    }
    // g = h + 5; h >= p exactly when g reaches 2^130 (c = 1)
    let take_g = c.wrapping_neg(); // all ones iff h >= p
    for i in 0..5 {
        h[i] = (h[i] & !take_g) | (g[i] & take_g);
    }
    // limbs may exceed 26 bits by a carry: add, not OR (mod 2^128 is all the tag needs)
    let hv = (0..5).fold(0u128, |acc, i| acc.wrapping_add((h[i] as u128) << (26 * i)));
    let s = u128::from_le_bytes(otk[16..].try_into().expect("16 bytes"));
    let tag = hv.wrapping_add(s).to_le_bytes();
    h.zeroize();
    g.zeroize();
    tag
}

/// `Poly1305(otk, AD ‖ pad16 ‖ CT ‖ pad16 ‖ le64(|AD|) ‖ le64(|CT|))`.
pub fn poly1305_tag(otk: &[u8; OTK_BYTES], ad: &[u8], ct: &[u8]) -> [u8; TAG_BYTES] {
    let mut lens = [0u8; 16];
    lens[..8].copy_from_slice(&(ad.len() as u64).to_le_bytes());
    lens[8..].copy_from_slice(&(ct.len() as u64).to_le_bytes());
    poly1305_padded(otk, &[ad, ct, &lens])
}

/// Constant-time comparison of the recomputed tag with `tag`.
pub fn verify_tag(otk: &[u8; OTK_BYTES], ad: &[u8], ct: &[u8], tag: &[u8; TAG_BYTES]) -> bool {
    let mut t = poly1305_tag(otk, ad, ct);
    // no early exit on the first differing byte
    let diff = t.iter().zip(tag).fold(0u8, |acc, (a, b)| acc | (a ^ b));
    t.zeroize();
    core::hint::black_box(diff) == 0
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

    fn key(r0: u8, r8: u8, s: u8) -> [u8; 32] {
        let mut k = [0u8; 32];
        k[0] = r0;
        k[8] = r8;
        k[16..].fill(s);
        k
    }

    /// RFC 8439 Appendix A.3 test vectors #5 … #11 (shared/vectors/ietf/rfc8439.txt), all of
    /// whole blocks: the carry and final-reduction corner cases of the own Poly1305.
    #[test]
    fn poly1305_matches_rfc8439_a3_corner_vectors() {
        let ff = [0xffu8; 16];
        let mut f0 = [0xffu8; 16];
        f0[0] = 0xf0;
        let mut e11 = [0u8; 16];
        e11[0] = 0x11;
        let mut fb = [0xfeu8; 16];
        fb[0] = 0xfb;
        let mut fd = [0xffu8; 16];
        fd[0] = 0xfd;
        let mut two = [0u8; 16];
        two[0] = 2;
        let mut one = [0u8; 16];
        one[0] = 1;
        let a: [u8; 16] = [0xe3, 0x35, 0x94, 0xd7, 0x50, 0x5e, 0x43, 0xb9, 0, 0, 0, 0, 0, 0, 0, 0];
        let b: [u8; 16] = [0x33, 0x94, 0xd7, 0x50, 0x5e, 0x43, 0x79, 0xcd, 1, 0, 0, 0, 0, 0, 0, 0];
        let z = [0u8; 16];
        let tag = |t0: u8, t8: u8| {
            let mut t = [0u8; 16];
            t[0] = t0;
            t[8] = t8;
            t
        };
        type Case = ([u8; 32], std::vec::Vec<[u8; 16]>, [u8; 16]);
        let cases: [Case; 7] = [
            (key(2, 0, 0), std::vec![ff], tag(3, 0)),                // #5
            (key(2, 0, 0xff), std::vec![two], tag(3, 0)),            // #6
            (key(1, 0, 0), std::vec![ff, f0, e11], tag(5, 0)),       // #7
            (key(1, 0, 0), std::vec![ff, fb, [1u8; 16]], tag(0, 0)), // #8
            (
                key(2, 0, 0),
                std::vec![fd],
                [0xfa, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
            ), // #9
            (key(1, 4, 0), std::vec![a, b, z, one], tag(0x14, 0x55)), // #10
            (key(1, 4, 0), std::vec![a, b, z], tag(0x13, 0)),        // #11
        ];
        for (n, (k, blocks, want)) in cases.iter().enumerate() {
            let msg: std::vec::Vec<u8> = blocks.concat();
            assert_eq!(poly1305_padded(k, &[&msg]), *want, "A.3 vector #{}", n + 5);
        }
    }

    /// Against the `poly1305` crate (an independent implementation) on random keys and
    /// lengths, in the AEAD layout.
    #[test]
    fn poly1305_tag_equals_poly1305_crate() {
        use poly1305::universal_hash::{KeyInit, UniversalHash};
        let mut x = 0x1234_5678_9abc_def1u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for i in 0..3000 {
            let mut otk = [0u8; 32];
            otk.iter_mut().for_each(|b| *b = next() as u8);
            if i % 7 == 0 {
                otk[..16].fill(0xff); // largest clamped r
            }
            let ad: std::vec::Vec<u8> = (0..next() % 40).map(|_| next() as u8).collect();
            let ct: std::vec::Vec<u8> =
                (0..next() % 300).map(|_| if i % 5 == 0 { 0xff } else { next() as u8 }).collect();
            let mut p = poly1305::Poly1305::new((&otk).into());
            p.update_padded(&ad);
            p.update_padded(&ct);
            let mut lens = [0u8; 16];
            lens[..8].copy_from_slice(&(ad.len() as u64).to_le_bytes());
            lens[8..].copy_from_slice(&(ct.len() as u64).to_le_bytes());
            p.update_padded(&lens);
            let want: [u8; 16] = p.finalize().into();
            assert_eq!(poly1305_tag(&otk, &ad, &ct), want, "case {i}");
        }
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
