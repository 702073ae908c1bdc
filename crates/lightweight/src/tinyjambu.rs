//! TinyJAMBU-128, final-round version (v2): Wu & Huang, "TinyJAMBU: A Family of Lightweight
//! Authenticated Encryption Algorithms (Version 2)", NIST LWC finalist, May 2021.
//! 128-bit key, 96-bit nonce, 64-bit tag, 128-bit keyed-permutation state.
//!
//! v2 round counts: key setup P_1024, nonce setup P_640, associated data P_640, message
//! P_1024, first tag half P_1024, second tag half P_640 (round 2 used P_384 where v2 uses
//! P_640). Key, nonce, data and tag are little-endian 32-bit words (the KAT convention).
//!
//! Constant time: the permutation is an NLFSR of xor/and/not on 32-bit words with fixed
//! shifts; the tag is compared without early exit.
use lwcbench_core::{check_len, iv_err, key_err, Aead, BitOrder, CipherError, CipherInfo, Family, Language, Origin};
use zeroize::{Zeroize, ZeroizeOnDrop};

/// Metadata of this TinyJAMBU-128 implementation.
pub const INFO: CipherInfo = CipherInfo {
    name: "TinyJAMBU-128",
    implementation: "rust-ref",
    family: Family::Aead,
    key_bits: 128,
    iv_bits: 96,
    block_bits: 32,
    tag_bits: 64,
    state_bytes: 16,
    origin: Origin::Own,
    language: Language::Rust,
    bit_order: BitOrder::MsbFirst,
    bit_granular: false,
    note: "final-round v2",
};

// Frame bits, XORed into state bits 36..38 (= bits 4..6 of word 1).
const FB_NONCE: u32 = 1 << 4;
const FB_AD: u32 = 3 << 4;
const FB_MSG: u32 = 5 << 4;
const FB_TAG: u32 = 7 << 4;

#[derive(Default, Zeroize, ZeroizeOnDrop)]
/// The TinyJAMBU-128 AEAD; create it with `Default`, then set a key.
pub struct TinyJambu128 {
    key: [u32; 4],
    keyed: bool,
}

/// The keyed permutation P_n: n steps of the 128-bit NLFSR
/// f = s0 ⊕ s47 ⊕ ¬(s70 ∧ s85) ⊕ s91 ⊕ k_{i mod 128}, 32 steps per line and 128 per loop: the
/// new word overwrites the oldest one, so after four lines every word is back in its place
/// (n is 640 or 1024, a multiple of 128).
fn permute(s: &mut [u32; 4], k: &[u32; 4], steps: usize) {
    #[inline(always)]
    fn fb(a: u32, b: u32, c: u32, d: u32, k: u32) -> u32 {
        // a..d = state words 0..3 of the current window
        let t1 = (b >> 15) | (c << 17); // bits 47..78
        let t2 = (c >> 6) | (d << 26); // bits 70..101
        let t3 = (c >> 21) | (d << 11); // bits 85..116
        let t4 = (c >> 27) | (d << 5); // bits 91..122
        a ^ t1 ^ !(t2 & t3) ^ t4 ^ k
    }
    let [mut s0, mut s1, mut s2, mut s3] = *s;
    for _ in 0..steps / 128 {
        s0 = fb(s0, s1, s2, s3, k[0]);
        s1 = fb(s1, s2, s3, s0, k[1]);
        s2 = fb(s2, s3, s0, s1, k[2]);
        s3 = fb(s3, s0, s1, s2, k[3]);
    }
    *s = [s0, s1, s2, s3];
}

fn le_word(b: &[u8]) -> u32 {
    let mut w = [0u8; 4];
    w[..b.len()].copy_from_slice(b);
    u32::from_le_bytes(w)
}

impl TinyJambu128 {
    fn start(&self, nonce: &[u8], ad: &[u8]) -> [u32; 4] {
        let k = &self.key;
        let mut s = [0u32; 4];
        permute(&mut s, k, 1024);
        for n in nonce.chunks_exact(4) {
            s[1] ^= FB_NONCE;
            permute(&mut s, k, 640);
            s[3] ^= le_word(n);
        }
        for a in ad.chunks(4) {
            s[1] ^= FB_AD;
            permute(&mut s, k, 640);
            s[3] ^= le_word(a);
            if a.len() < 4 {
                s[1] ^= a.len() as u32; // partial block: its byte count into bits 32..33
            }
        }
        s
    }

    fn finish(&self, s: &mut [u32; 4]) -> [u8; 8] {
        let k = &self.key;
        let mut tag = [0u8; 8];
        s[1] ^= FB_TAG;
        permute(s, k, 1024);
        tag[..4].copy_from_slice(&s[2].to_le_bytes());
        s[1] ^= FB_TAG;
        permute(s, k, 640);
        tag[4..].copy_from_slice(&s[2].to_le_bytes());
        s.zeroize();
        tag
    }

    fn check(&self, nonce: &[u8], tag_len: usize) -> Result<(), CipherError> {
        if !self.keyed {
            return Err(CipherError::NotInitialized);
        }
        check_len(nonce.len(), 12, iv_err)?;
        check_len(tag_len, 8, |e, g| CipherError::TagLength { expected: e, got: g })
    }
}

impl Aead for TinyJambu128 {
    fn info(&self) -> CipherInfo {
        INFO
    }
    fn set_key(&mut self, key: &[u8]) -> Result<(), CipherError> {
        check_len(key.len(), 16, key_err)?;
        self.key = core::array::from_fn(|i| le_word(&key[4 * i..4 * i + 4]));
        self.keyed = true;
        Ok(())
    }
    fn encrypt(&mut self, nonce: &[u8], ad: &[u8], buf: &mut [u8], tag: &mut [u8]) -> Result<(), CipherError> {
        self.check(nonce, tag.len())?;
        let mut s = self.start(nonce, ad);
        for m in buf.chunks_mut(4) {
            s[1] ^= FB_MSG;
            permute(&mut s, &self.key, 1024);
            let mw = le_word(m);
            s[3] ^= mw;
            let c = (s[2] ^ mw).to_le_bytes();
            m.copy_from_slice(&c[..m.len()]);
            if m.len() < 4 {
                s[1] ^= m.len() as u32;
            }
        }
        tag.copy_from_slice(&self.finish(&mut s));
        Ok(())
    }
    fn decrypt(&mut self, nonce: &[u8], ad: &[u8], buf: &mut [u8], tag: &[u8]) -> Result<(), CipherError> {
        self.check(nonce, tag.len())?;
        let mut s = self.start(nonce, ad);
        for c in buf.chunks_mut(4) {
            s[1] ^= FB_MSG;
            permute(&mut s, &self.key, 1024);
            let n = c.len();
            // keep only the n message bytes so the state absorbs the unpadded plaintext
            let mask = if n == 4 { u32::MAX } else { (1u32 << (8 * n)) - 1 };
            let mw = (s[2] ^ le_word(c)) & mask;
            s[3] ^= mw;
            c.copy_from_slice(&mw.to_le_bytes()[..n]);
            if n < 4 {
                s[1] ^= n as u32;
            }
        }
        let want = self.finish(&mut s);
        crate::check_tag(&want, tag, buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_kat_vectors() {
        // lwc-finalists-rweather/TinyJAMBU-128.txt, Count = 1 and Count = 35 (PT 00, AD 00).
        let key: [u8; 16] = core::array::from_fn(|i| i as u8);
        let nonce: [u8; 12] = core::array::from_fn(|i| i as u8);
        let mut c = TinyJambu128::default();
        c.set_key(&key).unwrap();
        let mut tag = [0u8; 8];
        c.encrypt(&nonce, &[], &mut [], &mut tag).unwrap();
        assert_eq!(tag, [0xED, 0x7B, 0x37, 0xCC, 0x6E, 0x9B, 0xDC, 0x7B]);
        let mut buf = [0u8; 1];
        c.encrypt(&nonce, &[0], &mut buf, &mut tag).unwrap();
        assert_eq!(buf, [0xA1]);
        assert_eq!(tag, [0x75, 0xD5, 0xB5, 0xC1, 0xEE, 0x4A, 0x0F, 0xA1]);
        c.decrypt(&nonce, &[0], &mut buf, &tag).unwrap();
        assert_eq!(buf, [0]);
    }
}
