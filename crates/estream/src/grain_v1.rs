//! Grain v1 (M. Hell, T. Johansson, W. Meier, "Grain — A Stream Cipher for Constrained
//! Environments", eSTREAM v1 specification), 80-bit key, 64-bit IV.
//!
//! Word-parallel: the highest tap used is position 63 of an 80-bit register, so 16 clocks
//! are computed at once (the designers' "up to 16 times speed-up").
//!
//! Byte convention (eSTREAM reference code, shared/vectors/README.md §2): key bit k_i is bit
//! `i mod 8` of key byte `i / 8` (LSB-first) and goes to NFSR b_i; IV bits likewise into
//! LFSR s_0..s_63, s_64..s_79 = 1; keystream bit z_0 is the LSB of output byte 0.
//! Constant-time: no secret-dependent branches or indices.
use lwcbench_core::{check_len, iv_err, key_err, BitOrder, CipherError, CipherInfo, Family, Language, Origin};
use zeroize::{Zeroize, ZeroizeOnDrop};

use crate::{BitBuf, Words};

/// Metadata of this Grain v1 implementation.
pub const INFO: CipherInfo = CipherInfo {
    name: "Grain-v1",
    implementation: "rust",
    family: Family::Stream,
    key_bits: 80,
    iv_bits: 64,
    block_bits: 0,
    tag_bits: 0,
    state_bytes: 20, // 80-bit LFSR + 80-bit NFSR
    origin: Origin::Own,
    language: Language::Rust,
    bit_order: BitOrder::LsbFirst,
    bit_granular: true,
    note: "",
};

/// Registers as five 16-bit parts, bit `j` of `p[0] | p[1] << 16 | …` = register bit
/// `i + j` (80 bits). Windows are single shifts of a pair of parts (no funnel shifts).
#[derive(Clone, Default, Zeroize)]
pub(crate) struct Core {
    s: [u16; 5], // LFSR
    b: [u16; 5], // NFSR
}

/// 16 register bits starting at position `off` (0 ≤ off ≤ 64).
#[inline(always)]
fn at(p: &[u16; 5], off: u32) -> u16 {
    let (i, r) = ((off / 16) as usize, off % 16);
    if r == 0 {
        p[i]
    } else {
        ((p[i] as u32 | (p[i + 1] as u32) << 16) >> r) as u16
    }
}

fn parts(v: u128) -> [u16; 5] {
    [v as u16, (v >> 16) as u16, (v >> 32) as u16, (v >> 48) as u16, (v >> 64) as u16]
}

impl Core {
    /// 16 clocks: returns (z_i..z_{i+15}); `feedback` adds z into both registers (init).
    #[inline(always)]
    fn step16(&mut self, feedback: bool) -> u16 {
        let (s, b) = (&self.s, &self.b);
        let sw = |o: u32| at(s, o);
        let bw = |o: u32| at(b, o);
        let (x0, x1, x2, x3, x4) = (sw(3), sw(25), sw(46), sw(64), bw(63));
        let h = x1
            ^ x4
            ^ (x0 & x3)
            ^ (x2 & x3)
            ^ (x3 & x4)
            ^ (x0 & x1 & x2)
            ^ (x0 & x2 & x3)
            ^ (x0 & x2 & x4)
            ^ (x1 & x2 & x4)
            ^ (x2 & x3 & x4);
        let z = h ^ bw(1) ^ bw(2) ^ bw(4) ^ bw(10) ^ bw(31) ^ bw(43) ^ bw(56);
        let mut ns = sw(0) ^ sw(13) ^ sw(23) ^ sw(38) ^ sw(51) ^ sw(62);
        let (b9, b15, b21, b28, b33, b37, b45, b52, b60, b63) =
            (bw(9), bw(15), bw(21), bw(28), bw(33), bw(37), bw(45), bw(52), bw(60), bw(63));
        let mut nb = sw(0)
            ^ bw(62)
            ^ b60
            ^ b52
            ^ b45
            ^ b37
            ^ b33
            ^ b28
            ^ b21
            ^ bw(14)
            ^ b9
            ^ bw(0)
            ^ (b63 & b60)
            ^ (b37 & b33)
            ^ (b15 & b9)
            ^ (b60 & b52 & b45)
            ^ (b33 & b28 & b21)
            ^ (b63 & b45 & b28 & b9)
            ^ (b60 & b52 & b37 & b33)
            ^ (b63 & b60 & b21 & b15)
            ^ (b63 & b60 & b52 & b45 & b37)
            ^ (b33 & b28 & b21 & b15 & b9)
            ^ (b52 & b45 & b37 & b33 & b28 & b21);
        if feedback {
            ns ^= z;
            nb ^= z;
        }
        self.s = [self.s[1], self.s[2], self.s[3], self.s[4], ns];
        self.b = [self.b[1], self.b[2], self.b[3], self.b[4], nb];
        z
    }

    fn load(&mut self, key: &[u8], iv: &[u8]) {
        let mut k = [0u8; 16];
        k[..10].copy_from_slice(key);
        self.b = parts(u128::from_le_bytes(k));
        let mut v = [0u8; 16];
        v[..8].copy_from_slice(iv);
        v[8] = 0xff;
        v[9] = 0xff;
        self.s = parts(u128::from_le_bytes(v));
        k.zeroize();
        v.zeroize();
        for _ in 0..10 {
            self.step16(true); // 160 clocks
        }
    }
}

impl Words for Core {
    #[inline(always)]
    fn next_word(&mut self) -> u64 {
        let a = self.step16(false) as u64;
        let b = self.step16(false) as u64;
        let c = self.step16(false) as u64;
        let d = self.step16(false) as u64;
        a | (b << 16) | (c << 32) | (d << 48)
    }
}

/// Grain v1 with a bit-granular keystream. Zeroized on drop.
#[derive(Clone, Default, Zeroize, ZeroizeOnDrop)]
pub struct GrainV1 {
    core: Core,
    bb: BitBuf,
    ready: bool,
}

impl GrainV1 {
    fn setup(&mut self, key: &[u8], iv: &[u8]) -> Result<(), CipherError> {
        check_len(key.len(), 10, key_err)?;
        check_len(iv.len(), 8, iv_err)?;
        self.core.load(key, iv);
        Ok(())
    }
}

stream_impl!(GrainV1, INFO, false);

#[cfg(test)]
#[allow(clippy::needless_range_loop, clippy::too_many_arguments)]
mod tests {
    use super::*;
    use crate::bit_lsb;
    use lwcbench_core::StreamCipher;
    use std::vec::Vec;

    /// Bit-serial model from the specification's equations (one clock at a time, plain
    /// arrays), independent of the 16-way code above.
    fn reference(key: &[u8], iv: &[u8], nbits: usize) -> Vec<u8> {
        let mut b: Vec<u8> = (0..80).map(|i| bit_lsb(key, i)).collect();
        let mut s: Vec<u8> = (0..80).map(|i| if i < 64 { bit_lsb(iv, i) } else { 1 }).collect();
        let mut out = std::vec![0u8; nbits.div_ceil(8)];
        for t in 0..160 + nbits {
            let (x0, x1, x2, x3, x4) = (s[3], s[25], s[46], s[64], b[63]);
            let h = x1
                ^ x4
                ^ x0 & x3
                ^ x2 & x3
                ^ x3 & x4
                ^ x0 & x1 & x2
                ^ x0 & x2 & x3
                ^ x0 & x2 & x4
                ^ x1 & x2 & x4
                ^ x2 & x3 & x4;
            let z = [1, 2, 4, 10, 31, 43, 56].iter().fold(h, |a, &k| a ^ b[k]);
            let mut fs = s[62] ^ s[51] ^ s[38] ^ s[23] ^ s[13] ^ s[0];
            let mut fb = s[0]
                ^ b[62]
                ^ b[60]
                ^ b[52]
                ^ b[45]
                ^ b[37]
                ^ b[33]
                ^ b[28]
                ^ b[21]
                ^ b[14]
                ^ b[9]
                ^ b[0]
                ^ b[63] & b[60]
                ^ b[37] & b[33]
                ^ b[15] & b[9]
                ^ b[60] & b[52] & b[45]
                ^ b[33] & b[28] & b[21]
                ^ b[63] & b[45] & b[28] & b[9]
                ^ b[60] & b[52] & b[37] & b[33]
                ^ b[63] & b[60] & b[21] & b[15]
                ^ b[63] & b[60] & b[52] & b[45] & b[37]
                ^ b[33] & b[28] & b[21] & b[15] & b[9]
                ^ b[52] & b[45] & b[37] & b[33] & b[28] & b[21];
            if t < 160 {
                fs ^= z;
                fb ^= z;
            } else {
                let i = t - 160;
                out[i / 8] |= z << (i % 8);
            }
            s.remove(0);
            s.push(fs);
            b.remove(0);
            b.push(fb);
        }
        out
    }

    #[test]
    fn matches_bit_serial_model() {
        let mut c = GrainV1::default();
        for (key, iv) in [
            ([0u8; 10].to_vec(), [0u8; 8].to_vec()),
            ((1..=10).collect::<Vec<u8>>(), (100..108).collect::<Vec<u8>>()),
            ((0x80..0x8a).collect(), (0xf0..0xf8).collect()),
        ] {
            let want = reference(&key, &iv, 8 * 200);
            let mut got = std::vec![0u8; 200];
            c.init(&key, &iv).unwrap();
            c.keystream(&mut got).unwrap();
            assert_eq!(got, want, "key {key:?} iv {iv:?}");
        }
    }
}
