//! SIMON, all ten block/key sizes: Beaulieu, Shors, Smith, Treatman-Clark, Weeks, Wingers,
//! "The SIMON and SPECK Families of Lightweight Block Ciphers", IACR ePrint 2013/404, §3
//! (round function, key schedule, constant sequences z0…z4 in Table 3.2 / §3).
//!
//! Byte convention (as Crypto++, Linux and the SIMON/SPECK implementation guide): words are
//! little-endian, the key is `k[0]` first, a block is y (right word) then x (left word); i.e.
//! the paper's printed hex strings reversed (shared README §2).
//!
//! Constant time: and/xor/rotate by constants on n-bit words; no tables, no data-dependent
//! branches. Words are kept in `u64` masked to n bits so one generic code serves every size.
//! Key schedule: T round keys of n bits (stored in a fixed 72-word array; `state_bytes`
//! reports the algorithm's T·n/8).
use core::marker::PhantomData;

use lwcbench_core::{check_len, key_err, BitOrder, BlockCipher, CipherError, CipherInfo, Family, Language, Origin};
use zeroize::Zeroize;

/// The five constant sequences z0…z4 of the paper (62 bits each, first bit first).
const Z: [&[u8; 62]; 5] = [
    b"11111010001001010110000111001101111101000100101011000011100110",
    b"10001110111110010011000010110101000111011111001001100001011010",
    b"10101111011100000011010010011000101000010001111110010110110011",
    b"11011011101011000110010111100000010010001010011100110100001111",
    b"11010001111001101011011000100000010111000011001010010011101111",
];

/// Parameters of one SIMON size: word bits n, key words m, rounds T, sequence index j.
pub trait Params {
    /// The algorithm name, e.g. "SIMON-64-128".
    const NAME: &'static str;
    /// Word size in bits (the block is two words).
    const N: u32;
    /// Key words.
    const M: usize;
    /// Rounds.
    const T: usize;
    /// Index of the round-constant sequence z_j.
    const J: usize;
}

macro_rules! sizes {
    ($($ty:ident, $name:literal, $n:literal, $m:literal, $t:literal, $j:literal;)*) => {$(
        #[doc = concat!("SIMON", stringify!($n), " parameter set ", $name)]
        pub struct $ty;
        impl Params for $ty {
            const NAME: &'static str = $name;
            const N: u32 = $n;
            const M: usize = $m;
            const T: usize = $t;
            const J: usize = $j;
        }
    )*};
}

// Paper Table 3.1: block 2n, key mn, rounds T, sequence z_j.
sizes! {
    Simon32_64, "SIMON-32-64", 16, 4, 32, 0;
    Simon48_72, "SIMON-48-72", 24, 3, 36, 0;
    Simon48_96, "SIMON-48-96", 24, 4, 36, 1;
    Simon64_96, "SIMON-64-96", 32, 3, 42, 2;
    Simon64_128, "SIMON-64-128", 32, 4, 44, 3;
    Simon96_96, "SIMON-96-96", 48, 2, 52, 2;
    Simon96_144, "SIMON-96-144", 48, 3, 54, 3;
    Simon128_128, "SIMON-128-128", 64, 2, 68, 2;
    Simon128_192, "SIMON-128-192", 64, 3, 69, 3;
    Simon128_256, "SIMON-128-256", 64, 4, 72, 4;
}

/// The SIMON block cipher with the parameter set `P`.
pub struct Simon<P: Params> {
    rk: [u64; 72],
    _p: PhantomData<P>,
}

impl<P: Params> Default for Simon<P> {
    fn default() -> Self {
        Simon { rk: [0; 72], _p: PhantomData }
    }
}

impl<P: Params> Drop for Simon<P> {
    fn drop(&mut self) {
        self.rk.zeroize();
    }
}
impl<P: Params> zeroize::ZeroizeOnDrop for Simon<P> {}

impl<P: Params> Simon<P> {
    const MASK: u64 = if P::N == 64 { u64::MAX } else { (1u64 << P::N) - 1 };
    const WB: usize = P::N as usize / 8;

    #[inline(always)]
    fn rol(x: u64, r: u32) -> u64 {
        ((x << r) | (x >> (P::N - r))) & Self::MASK
    }
    #[inline(always)]
    fn ror(x: u64, r: u32) -> u64 {
        ((x >> r) | (x << (P::N - r))) & Self::MASK
    }
    #[inline(always)]
    fn f(x: u64) -> u64 {
        (Self::rol(x, 1) & Self::rol(x, 8)) ^ Self::rol(x, 2)
    }
    fn word(b: &[u8]) -> u64 {
        let mut w = [0u8; 8];
        w[..b.len()].copy_from_slice(b);
        u64::from_le_bytes(w)
    }
    fn put(b: &mut [u8], w: u64) {
        b.copy_from_slice(&w.to_le_bytes()[..b.len()]);
    }
}

impl<P: Params> BlockCipher for Simon<P> {
    fn info(&self) -> CipherInfo {
        CipherInfo {
            name: P::NAME,
            implementation: "rust-ref",
            family: Family::Block,
            key_bits: (P::N as usize * P::M) as u16,
            iv_bits: 0,
            block_bits: 2 * P::N as u16,
            tag_bits: 0,
            state_bytes: (P::T * Self::WB) as u32,
            origin: Origin::Own,
            language: Language::Rust,
            bit_order: BitOrder::MsbFirst,
            bit_granular: false,
            note: "",
        }
    }
    fn set_key(&mut self, key: &[u8]) -> Result<(), CipherError> {
        let wb = Self::WB;
        check_len(key.len(), wb * P::M, key_err)?;
        let (m, k) = (P::M, &mut self.rk);
        for i in 0..m {
            k[i] = Self::word(&key[i * wb..(i + 1) * wb]);
        }
        let c = Self::MASK ^ 3; // 2^n − 4
        for i in m..P::T {
            let mut tmp = Self::ror(k[i - 1], 3);
            if m == 4 {
                tmp ^= k[i - 3];
            }
            tmp ^= Self::ror(tmp, 1);
            let z = u64::from(Z[P::J][(i - m) % 62] - b'0');
            k[i] = c ^ z ^ k[i - m] ^ tmp;
        }
        Ok(())
    }
    fn encrypt_block(&self, block: &mut [u8]) {
        let wb = Self::WB;
        let (mut y, mut x) = (Self::word(&block[..wb]), Self::word(&block[wb..2 * wb]));
        for &k in &self.rk[..P::T] {
            (x, y) = (y ^ Self::f(x) ^ k, x);
        }
        Self::put(&mut block[..wb], y);
        Self::put(&mut block[wb..2 * wb], x);
    }
    fn decrypt_block(&self, block: &mut [u8]) {
        let wb = Self::WB;
        let (mut y, mut x) = (Self::word(&block[..wb]), Self::word(&block[wb..2 * wb]));
        for &k in self.rk[..P::T].iter().rev() {
            (x, y) = (y, x ^ Self::f(y) ^ k);
        }
        Self::put(&mut block[..wb], y);
        Self::put(&mut block[wb..2 * wb], x);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paper_simon64_128() {
        // ePrint 2013/404 Appendix B, Simon64/128: key 1b1a1918 13121110 0b0a0908 03020100,
        // plaintext 656b696c 20646e75, ciphertext 44c8fc20 b9dfa07a (reversed into bytes).
        let mut key = [0x1b, 0x1a, 0x19, 0x18, 0x13, 0x12, 0x11, 0x10, 0x0b, 0x0a, 0x09, 0x08, 0x03, 0x02, 0x01, 0x00];
        key.reverse();
        let mut b = [0x65, 0x6b, 0x69, 0x6c, 0x20, 0x64, 0x6e, 0x75];
        b.reverse();
        let mut want = [0x44, 0xc8, 0xfc, 0x20, 0xb9, 0xdf, 0xa0, 0x7a];
        want.reverse();
        let mut c = Simon::<Simon64_128>::default();
        c.set_key(&key).unwrap();
        c.encrypt_block(&mut b);
        assert_eq!(b, want);
    }
}
