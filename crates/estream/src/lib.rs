//! Own `no_std` implementations of eSTREAM-portfolio stream ciphers (and Grain-128a), all
//! behind `lwcbench_core::StreamCipher`.
//!
//! The bit-oriented ciphers (Trivium, Grain v1, Grain-128a, MICKEY) are written
//! word-parallel where the feedback taps allow it: the register is kept as a bit sequence
//! and many clocks are computed at once with shifts. Each cipher core produces 64 keystream
//! bits at a time (first bit in bit 0); `BitBuf` turns that into a bit-granular stream in
//! the cipher's byte packing convention.
//!
//! Sources: the eSTREAM portfolio specifications (Trivium: De Cannière–Preneel; Grain v1:
//! Hell–Johansson–Meier; MICKEY 2.0: Babbage–Dodd; HC-128: Wu; Sosemanuk: Berbain et al.),
//! and Grain-128a: Ågren–Hell–Johansson–Meier, IJWMC 2011.
#![no_std]
// `unsafe` is allowed only in the x86-64 SIMD paths (`cpu`, `trivium::simd`,
// `grain128a::split`): calling a `#[target_feature]` function after the runtime check,
// `cpuid`/`xgetbv`, unaligned vector loads/stores inside local arrays, and one `rorx`.
#![deny(unsafe_code)]

#[cfg(test)]
extern crate std;

/// Implements `StreamCipher` for a type with fields `core` (a [`Words`] generator), `bb`
/// ([`BitBuf`]), `ready` (bool) and a method `setup(&mut self, key, iv)` that keys `core`.
macro_rules! stream_impl {
    ($ty:ty, $info:expr, $byte_granular:expr) => {
        impl lwcbench_core::StreamCipher for $ty {
            fn info(&self) -> lwcbench_core::CipherInfo {
                $info
            }
            fn init(&mut self, key: &[u8], iv: &[u8]) -> Result<(), lwcbench_core::CipherError> {
                self.ready = false;
                self.setup(key, iv)?;
                self.bb.reset();
                self.ready = true;
                Ok(())
            }
            fn keystream_bits(&mut self, out: &mut [u8], nbits: usize) -> Result<(), lwcbench_core::CipherError> {
                if !self.ready {
                    return Err(lwcbench_core::CipherError::NotInitialized);
                }
                self.bb.run(&mut self.core, out, nbits, $info.bit_order, false, $byte_granular)
            }
            fn apply_bits(&mut self, data: &mut [u8], nbits: usize) -> Result<(), lwcbench_core::CipherError> {
                if !self.ready {
                    return Err(lwcbench_core::CipherError::NotInitialized);
                }
                self.bb.run(&mut self.core, data, nbits, $info.bit_order, true, $byte_granular)
            }
        }
    };
}

pub mod grain128a;
pub mod grain_v1;
pub mod hc128;
pub mod mickey;
pub mod sosemanuk;
pub mod trivium;

pub use grain128a::Grain128a;
pub use grain_v1::GrainV1;
pub use hc128::Hc128;
pub use mickey::{Mickey128v2, MickeyV2};
pub use sosemanuk::Sosemanuk;
pub use trivium::Trivium;

use lwcbench_core::{bits, BitOrder, CipherError};
use zeroize::Zeroize;

/// A keystream generator that yields 64 bits per call, keystream bit `k` in bit `k`.
pub(crate) trait Words {
    fn next_word(&mut self) -> u64;

    /// Whole words into `body` (a multiple of 8 bytes), written or XORed, each word
    /// little-endian after `msb_pack` if `MSB`. A generator with a faster bulk path (SIMD)
    /// overrides this; the result must equal this loop.
    #[inline(always)]
    fn fill<const XOR: bool, const MSB: bool>(&mut self, body: &mut [u8]) {
        for chunk in body.chunks_exact_mut(8) {
            let w = self.next_word();
            put::<XOR>(chunk, if MSB { msb_pack(w) } else { w });
        }
    }
}

/// Runtime CPU feature detection for the SIMD paths, without `std` (cpuid + xgetbv, the
/// OS must have enabled the register state). Cached after the first call.
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
pub(crate) mod cpu {
    use core::sync::atomic::{AtomicU8, Ordering};

    pub(crate) const AVX2: u8 = 1;
    /// AVX-512F + VL + VBMI2 (variable funnel shifts `vpshrdvq`).
    pub(crate) const AVX512_VBMI2: u8 = 2;
    /// BMI1 + BMI2 (`andn`, `shrx`); no OS support needed.
    pub(crate) const BMI2: u8 = 4;
    const DETECTED: u8 = 0x80;

    static FLAGS: AtomicU8 = AtomicU8::new(0);
    /// Features the dispatchers may use (tests clear bits to reach the portable code).
    static ALLOWED: AtomicU8 = AtomicU8::new(0xff);

    #[inline]
    pub(crate) fn has(f: u8) -> bool {
        let mut v = FLAGS.load(Ordering::Relaxed);
        if v == 0 {
            v = detect() | DETECTED;
            FLAGS.store(v, Ordering::Relaxed);
        }
        v & ALLOWED.load(Ordering::Relaxed) & f == f
    }

    /// Restrict the SIMD paths to the features in `mask` (all paths give equal output, so
    /// this only changes speed; used by tests to check every path).
    #[cfg(test)]
    pub(crate) fn allow(mask: u8) {
        ALLOWED.store(mask, Ordering::Relaxed);
    }

    #[allow(unused_unsafe)]
    fn detect() -> u8 {
        use core::arch::x86_64::{__cpuid, __cpuid_count, __get_cpuid_max, _xgetbv};
        // SAFETY: cpuid exists on every x86-64 CPU; xgetbv only after OSXSAVE is reported.
        if unsafe { __get_cpuid_max(0) }.0 < 7 {
            return 0; // too old to report AVX2/BMI2 (leaf 7)
        }
        let l1 = unsafe { __cpuid(1) };
        let l7 = unsafe { __cpuid_count(7, 0) };
        let bmi = if (l7.ebx >> 3) & 1 == 1 && (l7.ebx >> 8) & 1 == 1 { BMI2 } else { 0 };
        if (l1.ecx >> 27) & 1 == 0 || (l1.ecx >> 28) & 1 == 0 {
            return bmi; // no OSXSAVE or no AVX
        }
        let xcr0 = unsafe { _xgetbv(0) };
        if xcr0 & 0x6 != 0x6 {
            return bmi; // OS does not save YMM state
        }
        let mut f = bmi;
        if (l7.ebx >> 5) & 1 == 1 {
            f |= AVX2;
        }
        let avx512 = xcr0 & 0xe0 == 0xe0 && (l7.ebx >> 16) & 1 == 1 && (l7.ebx >> 31) & 1 == 1;
        if avx512 && (l7.ecx >> 6) & 1 == 1 {
            f |= AVX512_VBMI2;
        }
        f
    }
}

/// Reverse the bit order inside each byte of `w` (stream order -> MSB-first packing).
#[inline(always)]
fn msb_pack(w: u64) -> u64 {
    w.reverse_bits().swap_bytes()
}

/// Buffer of keystream bits generated but not yet used, so that a request for any number
/// of bits can be followed by another that continues exactly where it stopped.
#[derive(Clone, Default, Zeroize)]
pub(crate) struct BitBuf {
    /// Unused bits, next bit in bit 0.
    buf: u64,
    /// Number of valid bits in `buf` (0..=63).
    avail: u32,
}

impl BitBuf {
    pub(crate) fn reset(&mut self) {
        self.buf = 0;
        self.avail = 0;
    }

    /// The next `n` (1..=64) keystream bits, in the low bits of the result.
    #[inline(always)]
    fn take<W: Words>(&mut self, g: &mut W, n: u32) -> u64 {
        debug_assert!((1..=64).contains(&n));
        let mask = if n == 64 { u64::MAX } else { (1u64 << n) - 1 };
        if n <= self.avail {
            let r = self.buf & mask;
            self.buf >>= n; // n < 64 here since avail <= 63
            self.avail -= n;
            return r;
        }
        let w = g.next_word();
        let r = (self.buf | (w << self.avail)) & mask;
        let used = n - self.avail; // bits of w consumed, 1..=64
        self.buf = if used == 64 { 0 } else { w >> used };
        self.avail = 64 - used;
        r
    }

    /// Write (`xor == false`) or XOR (`xor == true`) the next `nbits` keystream bits into
    /// `out`, packed in `order`. If `byte_granular`, the stream then skips to the next byte
    /// boundary (word-oriented ciphers, `bit_granular = false`).
    pub(crate) fn run<W: Words>(
        &mut self,
        g: &mut W,
        out: &mut [u8],
        nbits: usize,
        order: BitOrder,
        xor: bool,
        byte_granular: bool,
    ) -> Result<(), CipherError> {
        bits::check_room(out, nbits)?;
        let full = nbits / 64;
        let (body, tail) = out.split_at_mut(full * 8);
        // Separate loops per (xor, order) so the hot loop has no per-word branches.
        match (xor, order) {
            (false, BitOrder::LsbFirst) => self.words::<W, false, false>(g, body),
            (true, BitOrder::LsbFirst) => self.words::<W, true, false>(g, body),
            (false, BitOrder::MsbFirst) => self.words::<W, false, true>(g, body),
            (true, BitOrder::MsbFirst) => self.words::<W, true, true>(g, body),
        }
        let pack = |w: u64| if order == BitOrder::MsbFirst { msb_pack(w) } else { w };
        let rem = (nbits % 64) as u32;
        if rem > 0 {
            let k = pack(self.take(g, rem)).to_le_bytes();
            let nb = bits::bytes_for(rem as usize);
            for (o, b) in tail[..nb].iter_mut().zip(&k[..nb]) {
                if xor {
                    *o ^= *b
                } else {
                    *o = *b
                }
            }
            if byte_granular && !rem.is_multiple_of(8) {
                self.take(g, 8 - rem % 8);
            }
        }
        Ok(())
    }
}

impl BitBuf {
    /// Whole 64-bit keystream words into `body` (a multiple of 8 bytes).
    #[inline(always)]
    fn words<W: Words, const XOR: bool, const MSB: bool>(&mut self, g: &mut W, body: &mut [u8]) {
        let pack = |w: u64| if MSB { msb_pack(w) } else { w };
        if self.avail == 0 {
            // Aligned: whole generator words go straight out (bulk path of the generator).
            g.fill::<XOR, MSB>(body);
        } else {
            for chunk in body.chunks_exact_mut(8) {
                let k = pack(self.take(g, 64));
                put::<XOR>(chunk, k);
            }
        }
    }
}

#[inline(always)]
fn put<const XOR: bool>(chunk: &mut [u8], k: u64) {
    let v = if XOR { u64::from_le_bytes(chunk.try_into().expect("8 bytes")) ^ k } else { k };
    chunk.copy_from_slice(&v.to_le_bytes());
}

/// Bit `i` of a byte string read LSB-first (bit 0 of byte 0 first).
#[cfg(test)]
pub(crate) fn bit_lsb(b: &[u8], i: usize) -> u8 {
    (b[i / 8] >> (i % 8)) & 1
}

/// Bit `i` of a byte string read MSB-first (bit 7 of byte 0 first).
#[cfg(test)]
pub(crate) fn bit_msb(b: &[u8], i: usize) -> u8 {
    (b[i / 8] >> (7 - i % 8)) & 1
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts 0, 1, 2, … so every bit position is predictable.
    struct Counter(u64);
    impl Words for Counter {
        fn next_word(&mut self) -> u64 {
            let w = self.0.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x0123_4567_89AB_CDEF;
            self.0 += 1;
            w
        }
    }

    fn stream_bits(n_words: u64) -> std::vec::Vec<u8> {
        let mut c = Counter(0);
        (0..n_words).flat_map(|_| c.next_word().to_le_bytes()).collect()
    }

    #[test]
    fn odd_chunks_continue_the_stream() {
        let want = stream_bits(8);
        let mut g = Counter(0);
        let mut bb = BitBuf::default();
        let mut pos = 0;
        for n in [1usize, 7, 64, 3, 100, 13, 64, 65, 8] {
            let mut out = std::vec![0u8; bits::bytes_for(n)];
            bb.run(&mut g, &mut out, n, BitOrder::LsbFirst, false, false).unwrap();
            for i in 0..n {
                assert_eq!(bit_lsb(&out, i), bit_lsb(&want, pos + i), "n={n} i={i}");
            }
            if n % 8 != 0 {
                assert_eq!(out[out.len() - 1] & !bits::tail_mask(n, BitOrder::LsbFirst), 0);
            }
            pos += n;
        }
    }

    #[test]
    fn msb_packing_reverses_within_bytes() {
        assert_eq!(msb_pack(0x01), 0x80);
        assert_eq!(msb_pack(0x0100), 0x8000);
        let mut g = Counter(0);
        let mut bb = BitBuf::default();
        let mut out = [0u8; 2];
        bb.run(&mut g, &mut out, 11, BitOrder::MsbFirst, false, false).unwrap();
        let want = stream_bits(1);
        for i in 0..11 {
            assert_eq!(bit_msb(&out, i), bit_lsb(&want, i));
        }
        assert_eq!(out[1] & 0x1f, 0);
    }

    #[test]
    fn byte_granular_skips_to_byte_boundary() {
        let want = stream_bits(2);
        let mut g = Counter(0);
        let mut bb = BitBuf::default();
        let mut out = [0u8; 2];
        bb.run(&mut g, &mut out, 13, BitOrder::LsbFirst, false, true).unwrap();
        bb.run(&mut g, &mut out[..1], 8, BitOrder::LsbFirst, false, true).unwrap();
        assert_eq!(out[0], want[2]);
    }
}
