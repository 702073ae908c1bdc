//! A SUPERCOP-style checksum: one SHA-256 digest over the keystreams of many (key, IV, length)
//! triples, so that two implementations can be compared by one 64-hex-digit string.
//!
//! The exact computation (also in `docs/draco.md`):
//!
//! * `PAIRS` = 256 triples, numbered i = 0 … 255.
//! * Words `w_m = splitmix64(SEED + (m+1)·0x9E3779B97F4A7C15)` (the standard SplitMix64
//!   output function; `SEED` = 0x4452_4143_4F5F_434B, "DRACO_CK").
//! * Triple i uses words m = 4i … 4i+3: key = big-endian bytes of w_{4i} ‖ w_{4i+1};
//!   IV = big-endian bytes of w_{4i+2} ‖ first 4 big-endian bytes of w_{4i+3};
//!   nbits = (151·i) mod 301 (256 distinct lengths in 0 … 300, most not multiples of 8).
//! * For each i in order: a fresh init with (key, IV), then `keystream_bits(out, nbits)` into
//!   `ceil(nbits/8)` bytes (P3 packing, unused tail bits zero); all these bytes are fed in order
//!   to one SHA-256. The digest is the checksum.
//!
//! The stored [`CHECKSUM_HEX`] was produced by the bit-serial reference; every other variant
//! must reproduce it. The reference itself is guarded by its hand-computed unit tests.

use sha2::{Digest, Sha256};

/// Number of (key, IV, length) triples.
pub const PAIRS: usize = 256;
/// Seed of the SplitMix64 sequence ("DRACO_CK").
pub const SEED: u64 = 0x4452_4143_4F5F_434B;
/// Longest keystream in the checksum, in bits.
pub const MAX_BITS: usize = 300;

/// SHA-256 checksum of the reference (`reference::DracoRef`), hex.
pub const CHECKSUM_HEX: &str = "be5ceb0481f6087947c0905bb079a926e7ca82b5082fe72b17e8e009f71beb62";

/// One checksum input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Input {
    /// The 128-bit key.
    pub key: [u8; 16],
    /// The 96-bit IV.
    pub iv: [u8; 12],
    /// Keystream bits to take.
    pub nbits: usize,
}

/// The m-th SplitMix64 output for [`SEED`].
pub const fn word(m: u64) -> u64 {
    let mut z = SEED.wrapping_add((m + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Triple `i` of the checksum.
pub fn input(i: usize) -> Input {
    let m = 4 * i as u64;
    let mut key = [0u8; 16];
    key[..8].copy_from_slice(&word(m).to_be_bytes());
    key[8..].copy_from_slice(&word(m + 1).to_be_bytes());
    let mut iv = [0u8; 12];
    iv[..8].copy_from_slice(&word(m + 2).to_be_bytes());
    iv[8..].copy_from_slice(&word(m + 3).to_be_bytes()[..4]);
    Input { key, iv, nbits: (151 * i) % 301 }
}

/// A keystream generator: `gen(key, iv, nbits, out)` must write the first `nbits` keystream
/// bits of a fresh instance into `out` (`ceil(nbits/8)` zeroed bytes).
pub type Generator<'a> = dyn FnMut(&[u8; 16], &[u8; 12], usize, &mut [u8]) + 'a;

/// Checksum from a [`Generator`].
pub fn checksum(gen: &mut Generator<'_>) -> [u8; 32] {
    checksum_indexed(&mut |i, out| {
        let inp = input(i);
        gen(&inp.key, &inp.iv, inp.nbits, out)
    })
}

/// Checksum when the caller already produced the outputs (e.g. all streams at once):
/// `out_for(i, out)` fills the output of triple `i` (see [`input`]).
pub fn checksum_indexed(out_for: &mut dyn FnMut(usize, &mut [u8])) -> [u8; 32] {
    let mut h = Sha256::new();
    let mut buf = [0u8; MAX_BITS.div_ceil(8)];
    for i in 0..PAIRS {
        let nb = input(i).nbits.div_ceil(8);
        buf[..nb].fill(0);
        out_for(i, &mut buf[..nb]);
        h.update(&buf[..nb]);
    }
    h.finalize().into()
}

/// Lower-case hex of a digest (no allocation).
pub fn to_hex(d: &[u8; 32]) -> [u8; 64] {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut s = [0u8; 64];
    for (i, &b) in d.iter().enumerate() {
        s[2 * i] = HEX[(b >> 4) as usize];
        s[2 * i + 1] = HEX[(b & 15) as usize];
    }
    s
}

/// True if `d` equals [`CHECKSUM_HEX`].
pub fn matches(d: &[u8; 32]) -> bool {
    to_hex(d).as_slice() == CHECKSUM_HEX.as_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix_by_published_value() {
        // SplitMix64 with state 0: first output 0xE220A8397B1DCDAF (the value published with
        // Vigna's reference splitmix64.c, seed 0). word() adds SEED, so check the mixer alone.
        let mut z = 0u64.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        assert_eq!(z ^ (z >> 31), 0xE220_A839_7B1D_CDAF);
    }

    #[test]
    fn lengths_distinct_and_cover_odd() {
        let mut seen = [false; MAX_BITS + 1];
        for i in 0..PAIRS {
            let n = input(i).nbits;
            assert!(n <= MAX_BITS && !seen[n]);
            seen[n] = true;
        }
        assert_eq!(input(0).nbits, 0);
        assert_eq!(input(1).nbits, 151);
        assert_eq!(input(2).nbits, 1);
    }

    #[test]
    fn hex_by_hand() {
        let mut d = [0u8; 32];
        d[0] = 0xab;
        d[31] = 0x01;
        let h = to_hex(&d);
        assert_eq!(&h[..4], b"ab00");
        assert_eq!(&h[60..], b"0001");
    }
}

#[cfg(test)]
mod reference_digest {
    use super::*;
    use crate::reference::DracoRef;
    use lwcbench_core::StreamCipher;

    /// The reference's own digest: the constant is *defined* as this value; this test keeps the
    /// constant and the reference in step (the reference is guarded by the hand-computed tests).
    #[test]
    fn reference_reproduces_constant() {
        let d = checksum(&mut |k, v, n, out| {
            let mut c = DracoRef::with_key_iv(k, v);
            c.keystream_bits(out, n).unwrap();
        });
        assert!(matches(&d), "reference digest {}", core::str::from_utf8(&to_hex(&d)).unwrap());
    }
}
