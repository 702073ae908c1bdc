//! Trivium (C. De Cannière, B. Preneel, "Trivium Specifications", eSTREAM 2005/2008),
//! 80-bit key, IV of 0–80 bits (80 nominal; the eSTREAM files also use 32 and 64).
//!
//! Word-parallel: every register is kept as the sequence of bits that entered it, so a tap
//! at position `s_j` of a register is "the bit that entered `lag` clocks ago". The smallest
//! lag used by any feedback or output tap is 66, so 64 clocks are computed at once with
//! 64-bit windows of each register's 128-bit history.
//!
//! Byte convention (eSTREAM reference code, see shared/vectors/README.md §2): the key is read
//! as a little-endian integer k and K1 is its most significant bit (bit 79), K80 its least;
//! the IV likewise over its own length L, with IV_{L+1..80} = 0. Keystream bit z1 is the
//! least significant bit of output byte 0. Constant-time: no secret-dependent branches or
//! indices.
use lwcbench_core::{check_len, key_err, BitOrder, CipherError, CipherInfo, Family, Language, Origin};
use zeroize::{Zeroize, ZeroizeOnDrop};

use crate::{BitBuf, Words};

/// Metadata of this Trivium implementation.
pub const INFO: CipherInfo = CipherInfo {
    name: "Trivium",
    implementation: "rust",
    family: Family::Stream,
    key_bits: 80,
    iv_bits: 80,
    block_bits: 0,
    tag_bits: 0,
    state_bytes: 36, // 288 bits
    origin: Origin::Own,
    language: Language::Rust,
    bit_order: BitOrder::LsbFirst,
    bit_granular: true,
    note: "also accepts IVs shorter than 80 bits (zero-extended as in the eSTREAM reference)",
};

/// The three registers as bit histories of 128 bits, held as four 32-bit quarters:
/// bit `j` of `q[0] | q[1] << 32 | …` is the bit that entered the register `128 - j` clocks
/// ago (`q[3]` = the 32 newest bits).
///
/// Why quarters and not a `u128`: a 64-bit window at an arbitrary offset of a `u128` is a
/// funnel shift, which LLVM lowers to `shld`/`shrd` — slow on AMD Zen. Here each 64-bit
/// window is computed as two independent 32-bit halves, each one plain shift of a pair of
/// quarters (the taps' minimum lag of 66 makes the halves independent).
#[derive(Clone, Default, Zeroize)]
pub(crate) struct Core {
    a: [u32; 4], // s1..s93
    b: [u32; 4], // s94..s177
    c: [u32; 4], // s178..s288
}

#[inline(always)]
fn pair(lo: u32, hi: u32) -> u64 {
    lo as u64 | (hi as u64) << 32
}

/// 32 consecutive history bits starting `off` bits above the oldest (0 ≤ off ≤ 96).
#[inline(always)]
fn at(q: &[u32; 4], off: u32) -> u32 {
    let (i, r) = ((off / 32) as usize, off % 32);
    if r == 0 {
        q[i]
    } else {
        (pair(q[i], q[i + 1]) >> r) as u32
    }
}

/// 64 consecutive bits (as two halves) starting with the bit that entered `lag` clocks ago.
#[inline(always)]
fn w(q: &[u32; 4], lag: u32) -> [u32; 2] {
    [at(q, 128 - lag), at(q, 160 - lag)]
}

#[inline(always)]
fn x(a: [u32; 2], b: [u32; 2]) -> [u32; 2] {
    [a[0] ^ b[0], a[1] ^ b[1]]
}
#[inline(always)]
fn n(a: [u32; 2], b: [u32; 2]) -> [u32; 2] {
    [a[0] & b[0], a[1] & b[1]]
}

impl Core {
    /// 64 clocks; returns z_t … z_{t+63} (bit k = z_{t+k}).
    #[inline(always)]
    fn step64(&mut self) -> u64 {
        let (a, b, c) = (&self.a, &self.b, &self.c);
        // s66 = a[-66], s93 = a[-93]; s162 = b[-69], s177 = b[-84]; s243 = c[-66], s288 = c[-111]
        let t1 = x(w(a, 66), w(a, 93));
        let t2 = x(w(b, 69), w(b, 84));
        let t3 = x(w(c, 66), w(c, 111));
        let z = x(x(t1, t2), t3);
        // t1 += s91 s92 + s171; t2 += s175 s176 + s264; t3 += s286 s287 + s69
        let na = x(x(t3, n(w(c, 109), w(c, 110))), w(a, 69));
        let nb = x(x(t1, n(w(a, 91), w(a, 92))), w(b, 78));
        let nc = x(x(t2, n(w(b, 82), w(b, 83))), w(c, 87));
        self.a = [self.a[2], self.a[3], na[0], na[1]];
        self.b = [self.b[2], self.b[3], nb[0], nb[1]];
        self.c = [self.c[2], self.c[3], nc[0], nc[1]];
        pair(z[0], z[1])
    }

    fn load(&mut self, key: &[u8], iv: &[u8]) {
        let quarters = |v: u128| [v as u32, (v >> 32) as u32, (v >> 64) as u32, (v >> 96) as u32];
        let mut k = [0u8; 16];
        k[..10].copy_from_slice(key);
        // s_i (i = 1..80) sits at history bit 128 - i and equals bit 80 - i of k.
        self.a = quarters(u128::from_le_bytes(k) << 48);
        let mut v = [0u8; 16];
        v[..iv.len()].copy_from_slice(iv);
        // IV_i = bit L - i of the IV integer, s_{93+i} at history bit 128 - i.
        self.b = quarters(if iv.is_empty() { 0 } else { u128::from_le_bytes(v) << (128 - 8 * iv.len()) });
        // s286, s287, s288 = 1: c[-109], c[-110], c[-111]
        self.c = quarters(0b111 << 17);
        k.zeroize();
        v.zeroize();
        for _ in 0..18 {
            self.step64(); // 4 × 288 = 1152 clocks
        }
    }
}

impl Words for Core {
    #[inline(always)]
    fn next_word(&mut self) -> u64 {
        self.step64()
    }

    #[inline(always)]
    fn fill<const XOR: bool, const MSB: bool>(&mut self, body: &mut [u8]) {
        #[cfg(target_arch = "x86_64")]
        if body.len() >= 64 {
            if crate::cpu::has(crate::cpu::AVX512_VBMI2 | crate::cpu::AVX2) {
                return simd::fill_vbmi2::<XOR, MSB>(self, body);
            }
            if crate::cpu::has(crate::cpu::AVX2) {
                return simd::fill_avx2::<XOR, MSB>(self, body);
            }
        }
        for chunk in body.chunks_exact_mut(8) {
            let w = self.step64();
            crate::put::<XOR>(chunk, if MSB { crate::msb_pack(w) } else { w });
        }
    }
}

/// 64 clocks per step with the three registers side by side in the lanes of one 256-bit
/// vector (lane 0 = A, 1 = B, 2 = C, 3 unused), as two halves: `old` = the older 64 history
/// bits of each register (quarters 0–1), `new` = the newest 64 (quarters 2–3). A tap window
/// at lag L is the 128-bit history shifted right by 128 - L; each lane gets its own shift, so
/// one vector window serves one tap of each register. The scalar code needs ~127 instructions
/// per 64 bits (15 windows of two halves), this ~26 (AVX2) or ~16 (AVX-512 VBMI2 funnel
/// shifts, one instruction per window).
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod simd {
    use core::arch::x86_64::*;

    use super::{pair, Core};
    use crate::{msb_pack, put};

    /// Per-lane right-shift amounts 128 - L for the lags (A, B, C).
    macro_rules! lags {
        ($a:expr, $b:expr, $c:expr) => {
            _mm256_set_epi64x(0, 128 - $c, 128 - $b, 128 - $a)
        };
    }

    macro_rules! body {
        ($core:ident, $body:ident, $XOR:ident, $MSB:ident, $win:ident) => {{
            let q = |r: &[u32; 4]| (pair(r[0], r[1]) as i64, pair(r[2], r[3]) as i64);
            let ((ao, an), (bo, bn), (co, cn)) = (q(&$core.a), q(&$core.b), q(&$core.c));
            let mut old = _mm256_set_epi64x(0, co, bo, ao);
            let mut new = _mm256_set_epi64x(0, cn, bn, an);
            // t = s66+s93 | s162+s177 | s243+s288
            let (r1, r2) = (lags!(66, 69, 66), lags!(93, 84, 111));
            // and-terms s91 s92 | s175 s176 | s286 s287
            let (r3, r4) = (lags!(91, 82, 109), lags!(92, 83, 110));
            // linear feedback term of the register being fed: s69 | s171 | s264
            let r5 = lags!(69, 78, 87);
            for chunk in $body.chunks_exact_mut(8) {
                let t = _mm256_xor_si256($win(old, new, r1), $win(old, new, r2));
                let m = _mm256_xor_si256(t, _mm256_and_si256($win(old, new, r3), $win(old, new, r4)));
                let v = $win(old, new, r5);
                // z = t1 ^ t2 ^ t3 (lanes 0..2; lane 3 is zero)
                let x = _mm_xor_si128(_mm256_castsi256_si128(t), _mm256_extracti128_si256::<1>(t));
                let z = _mm_cvtsi128_si64(_mm_xor_si128(x, _mm_unpackhi_epi64(x, x))) as u64;
                // A is fed from C's t3, B from A's t1, C from B's t2: rotate lanes (2, 0, 1, 3)
                old = new;
                new = _mm256_xor_si256(_mm256_permute4x64_epi64::<0b11_01_00_10>(m), v);
                put::<$XOR>(chunk, if $MSB { msb_pack(z) } else { z });
            }
            let mut o = [0i64; 4];
            let mut n = [0i64; 4];
            // SAFETY: unaligned stores into local arrays of exactly 32 bytes.
            unsafe {
                _mm256_storeu_si256(o.as_mut_ptr().cast(), old);
                _mm256_storeu_si256(n.as_mut_ptr().cast(), new);
            }
            let back = |o: i64, n: i64| [o as u32, (o >> 32) as u32, n as u32, (n >> 32) as u32];
            $core.a = back(o[0], n[0]);
            $core.b = back(o[1], n[1]);
            $core.c = back(o[2], n[2]);
        }};
    }

    #[target_feature(enable = "avx2")]
    #[inline]
    fn win_avx2(old: __m256i, new: __m256i, r: __m256i) -> __m256i {
        let l = _mm256_sub_epi64(_mm256_set1_epi64x(64), r);
        _mm256_or_si256(_mm256_srlv_epi64(old, r), _mm256_sllv_epi64(new, l))
    }

    #[target_feature(enable = "avx2")]
    fn fill_avx2_tf<const XOR: bool, const MSB: bool>(core: &mut Core, body: &mut [u8]) {
        body!(core, body, XOR, MSB, win_avx2)
    }

    #[target_feature(enable = "avx2,avx512f,avx512vl,avx512vbmi2")]
    #[inline]
    fn win_vbmi2(old: __m256i, new: __m256i, r: __m256i) -> __m256i {
        // low 64 bits of (new:old) >> r, per lane
        _mm256_shrdv_epi64(old, new, r)
    }

    #[target_feature(enable = "avx2,avx512f,avx512vl,avx512vbmi2")]
    fn fill_vbmi2_tf<const XOR: bool, const MSB: bool>(core: &mut Core, body: &mut [u8]) {
        body!(core, body, XOR, MSB, win_vbmi2)
    }

    pub(super) fn fill_avx2<const XOR: bool, const MSB: bool>(core: &mut Core, body: &mut [u8]) {
        debug_assert!(crate::cpu::has(crate::cpu::AVX2));
        // SAFETY: called only after the runtime check for AVX2.
        unsafe { fill_avx2_tf::<XOR, MSB>(core, body) }
    }

    pub(super) fn fill_vbmi2<const XOR: bool, const MSB: bool>(core: &mut Core, body: &mut [u8]) {
        debug_assert!(crate::cpu::has(crate::cpu::AVX512_VBMI2 | crate::cpu::AVX2));
        // SAFETY: called only after the runtime check for AVX-512 F/VL/VBMI2 (AVX2 implied).
        unsafe { fill_vbmi2_tf::<XOR, MSB>(core, body) }
    }
}

/// Trivium with a bit-granular keystream. Zeroized on drop.
#[derive(Clone, Default, Zeroize, ZeroizeOnDrop)]
pub struct Trivium {
    core: Core,
    bb: BitBuf,
    ready: bool,
}

impl Trivium {
    fn setup(&mut self, key: &[u8], iv: &[u8]) -> Result<(), CipherError> {
        check_len(key.len(), 10, key_err)?;
        if iv.len() > 10 {
            return Err(CipherError::IvTooLong { max: 10, got: iv.len() });
        }
        self.core.load(key, iv);
        Ok(())
    }
}

stream_impl!(Trivium, INFO, false);

#[cfg(test)]
#[allow(clippy::needless_range_loop, clippy::too_many_arguments)]
mod tests {
    use super::*;
    use lwcbench_core::StreamCipher;
    use std::vec::Vec;

    /// Bit-serial model written directly from the specification's pseudo-code (s[1..=288]),
    /// independent of the word-parallel code above.
    fn reference(key: &[u8], iv: &[u8], nbits: usize) -> Vec<u8> {
        let mut s = [0u8; 289];
        let kint = |b: &[u8], j: usize| (b[j / 8] >> (j % 8)) & 1; // bit j of LE integer
        for i in 1..=80 {
            s[i] = kint(key, 80 - i);
        }
        let l = iv.len() * 8;
        for i in 1..=l {
            s[93 + i] = kint(iv, l - i);
        }
        s[286] = 1;
        s[287] = 1;
        s[288] = 1;
        let mut out = std::vec![0u8; nbits.div_ceil(8)];
        for t in 0..(1152 + nbits) {
            let mut t1 = s[66] ^ s[93];
            let mut t2 = s[162] ^ s[177];
            let mut t3 = s[243] ^ s[288];
            let z = t1 ^ t2 ^ t3;
            t1 ^= (s[91] & s[92]) ^ s[171];
            t2 ^= (s[175] & s[176]) ^ s[264];
            t3 ^= (s[286] & s[287]) ^ s[69];
            s.copy_within(1..93, 2);
            s[1] = t3;
            s.copy_within(94..177, 95);
            s[94] = t1;
            s.copy_within(178..288, 179);
            s[178] = t2;
            if t >= 1152 {
                let i = t - 1152;
                out[i / 8] |= z << (i % 8);
            }
        }
        out
    }

    #[test]
    fn matches_bit_serial_model() {
        let mut c = Trivium::default();
        for (key, iv) in [
            ([0u8; 10].to_vec(), [0u8; 10].to_vec()),
            ((1..=10).collect::<Vec<u8>>(), (100..110).collect::<Vec<u8>>()),
            ((1..=10).collect(), (7..11).collect()),
            ((200..210).collect(), (50..58).collect()),
            ((3..13).collect(), Vec::new()),
        ] {
            let want = reference(&key, &iv, 8 * 300);
            let mut got = std::vec![0u8; 300];
            c.init(&key, &iv).unwrap();
            c.keystream(&mut got).unwrap();
            assert_eq!(got, want, "key {key:?} iv {iv:?}");
        }
    }

    /// Every code path (AVX-512 VBMI2, AVX2, portable) against the bit-serial model, on
    /// several keys/IVs and lengths, through both `keystream` and `apply`.
    #[test]
    fn every_simd_path_matches_model() {
        #[cfg(target_arch = "x86_64")]
        let masks = [0xffu8, crate::cpu::AVX2, 0];
        #[cfg(not(target_arch = "x86_64"))]
        let masks = [0u8];
        let mut c = Trivium::default();
        for (i, mask) in masks.into_iter().enumerate() {
            #[cfg(target_arch = "x86_64")]
            crate::cpu::allow(mask);
            let _ = mask;
            for seed in 0..4u8 {
                let key: Vec<u8> =
                    (0..10).map(|j| (j as u8).wrapping_mul(29).wrapping_add(seed * 77 + i as u8)).collect();
                let iv: Vec<u8> = (0..10).map(|j| (j as u8).wrapping_mul(41).wrapping_add(seed * 13)).collect();
                let n = 1000 + 37 * seed as usize;
                let want = reference(&key, &iv, 8 * n);
                let mut got = std::vec![0u8; n];
                c.init(&key, &iv).unwrap();
                c.keystream(&mut got[..517]).unwrap();
                c.apply(&mut got[517..]).unwrap();
                assert_eq!(got, want, "mask {mask:#x} seed {seed}");
            }
        }
        #[cfg(target_arch = "x86_64")]
        crate::cpu::allow(0xff);
    }

    #[test]
    fn estream_set1_vector0_by_hand() {
        // ECRYPT trivium test vectors, IV 32 bits, Set 1 vector# 0 (first 16 bytes).
        let mut c = Trivium::default();
        let mut ks = [0u8; 16];
        c.init(&[0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0], &[0; 4]).unwrap();
        c.keystream(&mut ks).unwrap();
        assert_eq!(
            ks,
            [0x38, 0xEB, 0x86, 0xFF, 0x73, 0x0D, 0x7A, 0x9C, 0xAF, 0x8D, 0xF1, 0x3A, 0x44, 0x20, 0x54, 0x0D]
        );
    }
}
