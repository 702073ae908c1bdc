//! MICKEY 2.0 (80-bit key, IV 0–80 bits) and MICKEY-128 2.0 (128-bit key, IV 0–128 bits):
//! S. Babbage, M. Dodd, "The stream cipher MICKEY 2.0" and "The stream cipher MICKEY-128
//! 2.0", eSTREAM portfolio specifications (2006).
//!
//! The two registers R and S (100 or 160 bits) are kept in three 64-bit words and clocked
//! word-wide (one keystream bit per clock; the irregular clocking does not allow running
//! several clocks at once). The clocking decisions use masks instead of branches, so the
//! code is constant-time.
//!
//! Byte convention (eSTREAM reference code, shared README §2): IV bits then key bits are
//! clocked in MSB-first (bit i = byte[i/8] >> (7 − i%8)); keystream bits are packed
//! MSB-first.
use lwcbench_core::{check_len, key_err, BitOrder, CipherError, CipherInfo, Family, Language, Origin};
use zeroize::{Zeroize, ZeroizeOnDrop};

use crate::{BitBuf, Words};

/// Per-variant constants: register length, clock-control tap positions and the feedback /
/// complement masks (RTAPS, COMP0, COMP1, FB0, FB1 of the specification).
pub(crate) struct Params {
    n: usize,
    key_bytes: usize,
    /// (S tap, R tap) for the R control bit, (S tap, R tap) for the S control bit, S tap
    /// mixed into R's input.
    ctrl_r: (usize, usize),
    ctrl_s: (usize, usize),
    mix: usize,
    r_mask: [u64; 3],
    comp0: [u64; 3],
    comp1: [u64; 3],
    fb0: [u64; 3],
    fb1: [u64; 3],
    /// Stages 0..n, and 1..n-1 (the stages with a COMP0/COMP1 term).
    len_mask: [u64; 3],
    mid: [u64; 3],
}

/// Pack a table of bits (index = register stage) into words.
const fn pack(bits: &[u8]) -> [u64; 3] {
    let mut w = [0u64; 3];
    let mut i = 0;
    while i < bits.len() {
        w[i / 64] |= (bits[i] as u64) << (i % 64);
        i += 1;
    }
    w
}

// Tables of the MICKEY 2.0 specification (§ "Definitions": RTAPS as a 0/1 table, COMP0,
// COMP1, FB0, FB1), transcribed as 0/1 per stage in the layout of the designers' bit-by-bit
// eSTREAM reference (submissions/mickey/v2/bit-by-bit/mickey-v2.c).
#[rustfmt::skip]
const R_MASK_80: [u8; 100] = [1,1,0,1,1,1,1,0,0,1,0,0,1,1,0,0,1,0,0,1,1,1,1,0,0,
    1,0,0,1,0,0,0,0,0,0,0,0,1,1,0,0,1,1,0,0,1,1,0,0,0,
    1,0,1,0,1,0,1,0,1,0,1,1,0,1,1,1,1,1,0,0,0,1,1,0,0,
    0,0,0,0,1,1,1,1,0,0,0,0,1,1,1,1,1,1,0,1,1,1,1,0,0];
#[rustfmt::skip]
const COMP0_80: [u8; 99] = [0,0,0,0,1,1,0,0,0,1,0,1,1,1,1,0,1,0,0,1,0,1,0,1,0,
    1,0,1,0,1,1,0,1,0,0,1,0,0,0,0,0,0,0,1,0,1,0,1,0,1,
    0,0,0,0,1,0,1,0,0,1,1,1,1,0,0,1,0,1,0,1,1,1,1,1,1,
    1,1,1,0,1,0,1,1,1,1,1,1,0,1,0,1,0,0,0,0,0,0,1,1];
#[rustfmt::skip]
const COMP1_80: [u8; 99] = [0,1,0,1,1,0,0,1,0,1,1,1,1,0,0,1,0,1,0,0,0,1,1,0,1,
    0,1,1,1,0,1,1,1,1,0,0,0,1,1,0,1,0,1,1,1,0,0,0,0,1,
    0,0,0,1,0,1,1,1,0,0,0,1,1,1,1,1,1,0,1,0,1,1,1,0,1,
    1,1,1,0,0,0,1,0,0,0,0,1,1,1,0,0,0,1,0,0,1,1,0,0];
#[rustfmt::skip]
const FB0_80: [u8; 100] = [1,1,1,1,0,1,0,1,1,1,1,1,1,1,1,0,0,1,0,1,1,1,1,1,1,
    1,1,1,1,0,0,1,1,0,0,0,0,0,0,1,1,1,0,0,1,0,0,1,0,1,
    0,1,0,0,1,0,1,1,1,1,0,1,0,1,0,1,0,0,0,0,0,0,0,0,0,
    1,1,0,1,0,0,0,1,1,0,1,1,1,0,0,1,1,1,0,0,1,1,0,0,0];
#[rustfmt::skip]
const FB1_80: [u8; 100] = [1,1,1,0,1,1,1,0,0,0,0,1,1,1,0,1,0,0,1,1,0,0,0,1,0,
    0,1,1,0,0,1,0,1,1,0,0,0,1,1,0,0,0,0,0,1,1,0,1,1,0,
    0,0,1,0,0,0,1,0,0,1,0,0,1,0,1,1,0,1,0,1,0,0,1,0,1,
    0,0,0,1,1,1,1,0,1,1,1,1,1,0,0,0,0,0,0,1,0,0,0,0,1];

// MICKEY-128 2.0 tables, same layout (submissions/mickey/v2-128/bit-by-bit/mickey-128-v2.c).
#[rustfmt::skip]
const R_MASK_128: [u8; 160] = [1,0,0,0,1,1,0,0,1,0,1,1,0,0,1,0,1,0,0,0,1,0,0,0,0,1,0,0,0,0,1,0,
    1,0,0,1,1,0,1,0,0,0,1,1,0,0,1,0,0,0,1,1,0,1,1,1,1,1,0,0,1,1,1,1,
    0,1,1,0,0,1,0,0,0,1,1,0,1,0,0,1,1,1,1,0,0,1,1,0,0,0,1,1,1,0,0,1,
    0,1,0,0,1,1,0,0,0,1,1,1,1,1,0,1,1,1,0,1,1,1,0,0,0,0,0,0,0,0,0,1,
    1,1,1,1,0,1,0,1,1,1,0,0,1,0,1,0,0,1,0,0,1,0,1,0,1,1,1,0,1,1,0,0];
#[rustfmt::skip]
const COMP0_128: [u8; 159] = [0,1,1,1,1,0,1,0,0,1,0,0,1,1,1,1,0,1,1,0,1,0,1,1,1,0,1,1,1,0,1,0,
    1,0,1,0,1,0,1,0,1,0,0,1,0,0,0,0,0,1,1,0,0,1,0,0,1,0,0,1,1,1,1,0,
    0,1,0,0,0,1,1,0,0,0,0,0,1,1,1,0,0,0,0,0,0,0,0,0,1,0,0,1,1,1,1,0,
    1,0,0,0,1,1,0,0,1,0,0,1,1,0,1,1,1,1,1,1,0,1,0,1,1,1,1,0,1,1,0,0,
    0,1,1,1,1,1,0,1,0,1,1,0,0,0,0,0,0,1,1,1,1,1,0,1,1,1,1,1,0,0,0];
#[rustfmt::skip]
const COMP1_128: [u8; 159] = [0,0,0,0,1,1,0,0,1,1,1,1,1,0,0,0,1,0,0,1,1,0,0,0,1,0,1,1,1,1,1,0,
    0,0,0,1,1,0,0,1,0,0,1,1,1,1,0,0,0,1,1,0,1,1,0,1,0,1,1,1,1,1,1,1,
    0,0,0,0,0,1,1,1,1,1,0,0,0,0,1,1,0,0,0,0,0,0,0,0,0,0,1,1,1,1,1,0,
    1,0,1,0,0,0,1,0,1,1,0,0,0,1,1,1,0,0,0,0,0,1,1,0,0,1,1,0,0,1,1,0,
    1,0,1,0,1,1,0,1,1,1,0,1,1,0,1,0,0,0,1,0,1,1,1,1,1,1,1,1,1,1,1];
#[rustfmt::skip]
const FB0_128: [u8; 160] = [1,1,1,1,0,1,0,1,1,1,1,1,1,0,0,0,0,0,1,1,1,1,0,0,0,0,1,0,0,0,1,1,
    0,1,0,0,0,1,0,0,1,1,0,0,0,1,0,1,1,1,1,1,0,1,0,0,0,1,1,1,0,0,0,0,
    1,0,0,0,0,0,0,1,1,0,1,1,0,0,1,0,1,0,1,0,0,1,1,1,0,1,1,0,0,1,1,0,
    1,0,0,0,1,0,0,1,1,1,0,1,0,0,1,0,0,0,1,0,1,0,1,0,0,0,1,0,1,0,1,1,
    1,0,0,0,0,0,1,1,1,1,0,1,0,0,0,0,1,1,0,0,0,1,1,0,1,1,0,0,0,0,0,1];
#[rustfmt::skip]
const FB1_128: [u8; 160] = [1,1,0,1,0,1,0,1,1,1,1,0,1,1,1,0,0,0,1,0,1,1,1,1,1,1,0,1,1,0,0,1,
    0,0,0,0,1,0,0,1,0,0,1,1,0,0,0,1,1,0,0,1,1,1,1,0,0,0,0,0,1,1,1,0,
    0,1,1,0,1,1,0,1,0,0,0,1,1,0,0,0,0,1,0,1,1,0,0,1,1,1,1,1,0,1,1,0,
    1,1,1,0,0,1,1,1,0,1,1,1,1,1,1,0,1,1,0,1,0,0,1,0,0,0,1,1,0,1,1,0,
    1,1,1,1,0,1,1,1,0,0,0,0,0,0,0,1,1,1,1,0,0,1,0,1,1,0,0,0,1,0,0,0];

pub(crate) const P80: Params = Params {
    n: 100,
    key_bytes: 10,
    ctrl_r: (34, 67),
    ctrl_s: (67, 33),
    mix: 50,
    r_mask: pack(&R_MASK_80),
    comp0: pack(&COMP0_80),
    comp1: pack(&COMP1_80),
    fb0: pack(&FB0_80),
    fb1: pack(&FB1_80),
    len_mask: range_mask(0, 100),
    mid: range_mask(1, 99),
};

pub(crate) const P128: Params = Params {
    n: 160,
    key_bytes: 16,
    ctrl_r: (54, 106),
    ctrl_s: (106, 53),
    mix: 80,
    r_mask: pack(&R_MASK_128),
    comp0: pack(&COMP0_128),
    comp1: pack(&COMP1_128),
    fb0: pack(&FB0_128),
    fb1: pack(&FB1_128),
    len_mask: range_mask(0, 160),
    mid: range_mask(1, 159),
};

type Reg = [u64; 3];

#[inline(always)]
fn get(r: &Reg, i: usize) -> u64 {
    (r[i / 64] >> (i % 64)) & 1
}
#[inline(always)]
fn shl1(r: &Reg) -> Reg {
    [r[0] << 1, (r[1] << 1) | (r[0] >> 63), (r[2] << 1) | (r[1] >> 63)]
}
#[inline(always)]
fn shr1(r: &Reg) -> Reg {
    [(r[0] >> 1) | (r[1] << 63), (r[1] >> 1) | (r[2] << 63), r[2] >> 1]
}
/// Mask of register stages lo..hi (exclusive).
const fn range_mask(lo: usize, hi: usize) -> Reg {
    let mut w = [0u64; 3];
    let mut i = lo;
    while i < hi {
        w[i / 64] |= 1 << (i % 64);
        i += 1;
    }
    w
}

/// Registers R and S; `KEY_BITS` (80 or 128) selects the variant at compile time so that
/// every tap position and mask is a constant.
#[derive(Clone, Default, Zeroize)]
pub(crate) struct Core<const KEY_BITS: usize> {
    r: Reg,
    s: Reg,
}

impl<const KEY_BITS: usize> Core<KEY_BITS> {
    const P: &'static Params = if KEY_BITS == 80 { &P80 } else { &P128 };

    /// CLOCK_KG: returns the keystream bit r_0 ⊕ s_0 of the state before clocking.
    #[inline(always)]
    fn clock(&mut self, mixing: bool, input: u64) -> u64 {
        let p = Self::P;
        let n = p.n;
        let (r, s) = (self.r, self.s);
        let z = (r[0] ^ s[0]) & 1;
        let ctrl_r = get(&s, p.ctrl_r.0) ^ get(&r, p.ctrl_r.1);
        let ctrl_s = get(&s, p.ctrl_s.0) ^ get(&r, p.ctrl_s.1);
        let in_r = if mixing { input ^ get(&s, p.mix) } else { input };
        // CLOCK_R: shift (and XOR with the old state when the control bit is set), then
        // feed back RTAPS if r_{n-1} ⊕ input is set.
        let fb_r = 0u64.wrapping_sub(get(&r, n - 1) ^ in_r);
        let cr = 0u64.wrapping_sub(ctrl_r);
        let sh = shl1(&r);
        let mut nr = [0u64; 3];
        for k in 0..3 {
            nr[k] = sh[k] ^ (r[k] & cr) ^ (p.r_mask[k] & fb_r);
        }
        // CLOCK_S: s_hat_i = s_{i-1} ⊕ ((s_i ⊕ COMP0_i)(s_{i+1} ⊕ COMP1_i)) for 1 ≤ i ≤ n−2,
        // s_hat_0 = 0, s_hat_{n-1} = s_{n-2}; then FB0/FB1 feedback if s_{n-1} ⊕ input.
        let fb_s = 0u64.wrapping_sub(get(&s, n - 1) ^ input);
        let cs = 0u64.wrapping_sub(ctrl_s);
        let (ls, rs) = (shl1(&s), shr1(&s));
        let mut ns = [0u64; 3];
        for k in 0..3 {
            let t = (s[k] ^ p.comp0[k]) & (rs[k] ^ p.comp1[k]) & p.mid[k];
            let fb = (p.fb1[k] & cs) | (p.fb0[k] & !cs);
            ns[k] = ls[k] ^ t ^ (fb & fb_s);
        }
        for k in 0..3 {
            self.r[k] = nr[k] & p.len_mask[k];
            self.s[k] = ns[k] & p.len_mask[k];
        }
        z
    }

    fn load(&mut self, key: &[u8], iv: &[u8]) {
        self.r = [0; 3];
        self.s = [0; 3];
        for &byte in iv.iter().chain(key) {
            for j in (0..8).rev() {
                self.clock(true, ((byte >> j) & 1) as u64);
            }
        }
        for _ in 0..Self::P.n {
            self.clock(true, 0); // preclock
        }
    }
}

impl<const KEY_BITS: usize> Words for Core<KEY_BITS> {
    #[inline]
    fn next_word(&mut self) -> u64 {
        let mut w = 0u64;
        for k in 0..64 {
            w |= self.clock(false, 0) << k;
        }
        w
    }
}

macro_rules! mickey {
    ($name:ident, $bits:expr, $info:expr, $max_iv:expr) => {
        /// Bit-granular MICKEY keystream generator. Zeroized on drop.
        #[derive(Clone, Default, Zeroize, ZeroizeOnDrop)]
        pub struct $name {
            core: Core<$bits>,
            bb: BitBuf,
            ready: bool,
        }

        impl $name {
            fn setup(&mut self, key: &[u8], iv: &[u8]) -> Result<(), CipherError> {
                check_len(key.len(), Core::<$bits>::P.key_bytes, key_err)?;
                if iv.len() > $max_iv {
                    return Err(CipherError::IvTooLong { max: $max_iv, got: iv.len() });
                }
                self.core.load(key, iv);
                Ok(())
            }
        }

        stream_impl!($name, $info, false);
    };
}

/// Metadata of the MICKEY 2.0 implementation (80-bit key).
pub const INFO_80: CipherInfo = CipherInfo {
    name: "MICKEY-2.0",
    implementation: "rust",
    family: Family::Stream,
    key_bits: 80,
    iv_bits: 80,
    block_bits: 0,
    tag_bits: 0,
    state_bytes: 25, // R and S, 100 bits each
    origin: Origin::Own,
    language: Language::Rust,
    bit_order: BitOrder::MsbFirst,
    bit_granular: true,
    note: "IV of 0-80 bits accepted (whole bytes)",
};

/// Metadata of the MICKEY-128 2.0 implementation (128-bit key).
pub const INFO_128: CipherInfo = CipherInfo {
    name: "MICKEY-128-2.0",
    key_bits: 128,
    iv_bits: 128,
    state_bytes: 40, // R and S, 160 bits each
    note: "IV of 0-128 bits accepted (whole bytes)",
    ..INFO_80
};

mickey!(MickeyV2, 80, INFO_80, 10);
mickey!(Mickey128v2, 128, INFO_128, 16);

#[cfg(test)]
#[allow(clippy::needless_range_loop, clippy::too_many_arguments)]
mod tests {
    use super::*;
    use lwcbench_core::StreamCipher;
    use std::vec::Vec;

    /// The same tables as 32-bit words, transcribed separately from the designers'
    /// "faster" eSTREAM reference (submissions/mickey/v2/faster/mickey-v2.c, ECRYPT_init):
    /// catches a transcription slip in the 0/1 tables above.
    #[test]
    fn tables_match_the_word_masks_of_the_fast_reference() {
        let w = |a: [u32; 4]| [a[0] as u64 | (a[1] as u64) << 32, a[2] as u64 | (a[3] as u64) << 32, 0];
        assert_eq!(P80.r_mask, w([0x1279327b, 0xb5546660, 0xdf87818f, 0x00000003]));
        assert_eq!(P80.comp0, w([0x6aa97a30, 0x7942a809, 0x057ebfea, 0x00000006]));
        assert_eq!(P80.comp1, w([0xdd629e9a, 0xe3a21d63, 0x91c23dd7, 0x00000001]));
        assert_eq!(P80.fb0, w([0x9ffa7faf, 0xaf4a9381, 0x9cec5802, 0x00000001]));
        assert_eq!(P80.fb1, w([0x4c8cb877, 0x4911b063, 0x40fbc52b, 0x00000008]));
    }

    /// Bit-serial model following the specification's CLOCK_R / CLOCK_S / CLOCK_KG text
    /// with one array cell per stage and explicit branches, independent of the word code.
    fn reference(
        p: &Params,
        r_tab: &[u8],
        c0: &[u8],
        c1: &[u8],
        f0: &[u8],
        f1: &[u8],
        key: &[u8],
        iv: &[u8],
        nbits: usize,
    ) -> Vec<u8> {
        let n = p.n;
        let mut r = std::vec![0u8; n];
        let mut s = std::vec![0u8; n];
        let clock_kg = |r: &mut Vec<u8>, s: &mut Vec<u8>, mixing: bool, input: u8| -> u8 {
            let z = r[0] ^ s[0];
            let cr = s[p.ctrl_r.0] ^ r[p.ctrl_r.1];
            let cs = s[p.ctrl_s.0] ^ r[p.ctrl_s.1];
            let in_r = if mixing { input ^ s[p.mix] } else { input };
            // CLOCK_R
            let fb = r[n - 1] ^ in_r;
            let old = r.clone();
            for i in (1..n).rev() {
                r[i] = old[i - 1];
            }
            r[0] = 0;
            for i in 0..n {
                if fb == 1 {
                    r[i] ^= r_tab[i];
                }
                if cr == 1 {
                    r[i] ^= old[i];
                }
            }
            // CLOCK_S
            let fbs = s[n - 1] ^ input;
            let mut hat = std::vec![0u8; n];
            for i in 1..n - 1 {
                hat[i] = s[i - 1] ^ ((s[i] ^ c0[i]) & (s[i + 1] ^ c1[i]));
            }
            hat[n - 1] = s[n - 2];
            for i in 0..n {
                s[i] = hat[i]
                    ^ if fbs == 1 {
                        if cs == 1 {
                            f1[i]
                        } else {
                            f0[i]
                        }
                    } else {
                        0
                    };
            }
            z
        };
        let msb = |b: &[u8], i: usize| (b[i / 8] >> (7 - i % 8)) & 1;
        for i in 0..iv.len() * 8 {
            clock_kg(&mut r, &mut s, true, msb(iv, i));
        }
        for i in 0..key.len() * 8 {
            clock_kg(&mut r, &mut s, true, msb(key, i));
        }
        for _ in 0..n {
            clock_kg(&mut r, &mut s, true, 0);
        }
        let mut out = std::vec![0u8; nbits.div_ceil(8)];
        for i in 0..nbits {
            out[i / 8] |= clock_kg(&mut r, &mut s, false, 0) << (7 - i % 8);
        }
        out
    }

    #[test]
    fn mickey80_matches_bit_serial_model() {
        let mut c = MickeyV2::default();
        for (key, iv) in [
            ((0..10).collect::<Vec<u8>>(), Vec::new()),
            ((0x12..0x1c).collect(), (0x21..0x25).collect()),
            ([0xff; 10].to_vec(), (0..10).collect()),
        ] {
            let want = reference(&P80, &R_MASK_80, &COMP0_80, &COMP1_80, &FB0_80, &FB1_80, &key, &iv, 8 * 100);
            let mut got = std::vec![0u8; 100];
            c.init(&key, &iv).unwrap();
            c.keystream(&mut got).unwrap();
            assert_eq!(got, want, "key {key:?} iv {iv:?}");
        }
    }

    #[test]
    fn mickey128_matches_bit_serial_model() {
        let mut c = Mickey128v2::default();
        let (key, iv): (Vec<u8>, Vec<u8>) = ((0..16).collect(), (0x40..0x4c).collect());
        let want = reference(&P128, &R_MASK_128, &COMP0_128, &COMP1_128, &FB0_128, &FB1_128, &key, &iv, 8 * 100);
        let mut got = std::vec![0u8; 100];
        c.init(&key, &iv).unwrap();
        c.keystream(&mut got).unwrap();
        assert_eq!(got, want);
    }
}
