//! Sosemanuk (C. Berbain, O. Billet, A. Canteaut, N. Courtois, H. Gilbert, L. Goubin,
//! A. Gouget, L. Granboulan, C. Lauradoux, M. Minier, T. Pornin, H. Sibert, "Sosemanuk, a
//! fast software-oriented stream cipher", eSTREAM portfolio specification, 2005/2008).
//! Registered with a 128-bit key and 128-bit IV; the key schedule (Serpent's) accepts 1–32
//! byte keys, available through [`Sosemanuk::any_key_length`].
//!
//! Structure: Serpent24 key schedule and IV setup, a 10-word LFSR over GF(2^32) (α defined
//! over GF(2^8) = `GF(2)[β]/(β^8+β^7+β^5+β^3+1)`), a 2-word FSM, and the Serpent S-box S2
//! applied bitsliced to four FSM outputs. S-boxes are evaluated from their algebraic normal
//! form on whole words (bitsliced, no table lookups on secrets). The α multiplications use
//! 256-entry tables indexed by a byte of LFSR state, as in the specification: **not
//! constant-time** on CPUs with data caches (secret-indexed table lookups).
//!
//! Byte convention: key, IV and keystream are little-endian 32-bit words (Serpent
//! convention); a key shorter than 256 bits is padded with a single 1 bit then zeros.
use lwcbench_core::{check_len, iv_err, key_err, BitOrder, CipherError, CipherInfo, Family, Language, Origin};
use zeroize::{Zeroize, ZeroizeOnDrop};

use crate::{BitBuf, Words};

/// Metadata of this Sosemanuk implementation.
pub const INFO: CipherInfo = CipherInfo {
    name: "Sosemanuk",
    implementation: "rust",
    family: Family::Stream,
    key_bits: 128,
    iv_bits: 128,
    block_bits: 0,
    tag_bits: 0,
    state_bytes: 48, // 10 LFSR words + R1 + R2
    origin: Origin::Own,
    language: Language::Rust,
    bit_order: BitOrder::LsbFirst,
    bit_granular: false,
    note: "alpha multiplication by table lookup on secret bytes (not constant-time)",
};

/// Serpent S-boxes S0..S7 (Anderson, Biham, Knudsen, "Serpent: A Proposal for the AES").
const SBOX: [[u8; 16]; 8] = [
    [3, 8, 15, 1, 10, 6, 5, 11, 14, 13, 4, 2, 7, 0, 9, 12],
    [15, 12, 2, 7, 9, 0, 5, 10, 1, 11, 14, 8, 6, 13, 3, 4],
    [8, 6, 7, 9, 3, 12, 10, 15, 13, 1, 14, 4, 0, 11, 5, 2],
    [0, 15, 11, 8, 12, 9, 6, 3, 13, 1, 2, 4, 10, 7, 5, 14],
    [1, 15, 8, 3, 12, 0, 11, 6, 2, 5, 4, 10, 9, 14, 7, 13],
    [15, 5, 2, 11, 4, 10, 9, 12, 0, 3, 14, 8, 13, 6, 7, 1],
    [7, 2, 12, 5, 8, 4, 6, 11, 14, 9, 1, 15, 13, 3, 10, 0],
    [1, 13, 15, 0, 14, 8, 2, 11, 7, 4, 12, 10, 9, 3, 5, 6],
];

/// Algebraic normal form of each S-box: `ANF[s][j]` bit `m` says whether monomial
/// Π_{i∈m} x_i appears in output bit j (Möbius transform of the truth table).
const ANF: [[u16; 4]; 8] = {
    let mut out = [[0u16; 4]; 8];
    let mut s = 0;
    while s < 8 {
        let mut j = 0;
        while j < 4 {
            let mut f = [0u8; 16];
            let mut x = 0;
            while x < 16 {
                f[x] = (SBOX[s][x] >> j) & 1;
                x += 1;
            }
            let mut i = 0;
            while i < 4 {
                let mut x = 0;
                while x < 16 {
                    if x & (1 << i) != 0 {
                        f[x] ^= f[x ^ (1 << i)];
                    }
                    x += 1;
                }
                i += 1;
            }
            let mut m = 0;
            while m < 16 {
                out[s][j] |= (f[m] as u16) << m;
                m += 1;
            }
            j += 1;
        }
        s += 1;
    }
    out
};

/// Serpent S-box `s` applied bitsliced: bit k of (x0, x1, x2, x3) is one 4-bit input,
/// x0 its least significant bit.
#[inline(always)]
fn sbox(s: usize, x: [u32; 4]) -> [u32; 4] {
    let mut m = [0u32; 16];
    m[0] = u32::MAX;
    for (i, xi) in x.iter().enumerate() {
        let b = 1 << i;
        for k in 0..b {
            m[b | k] = m[k] & xi;
        }
    }
    let mut y = [0u32; 4];
    for j in 0..4 {
        let a = ANF[s][j];
        for (k, mk) in m.iter().enumerate() {
            y[j] ^= mk & 0u32.wrapping_sub(((a >> k) & 1) as u32);
        }
    }
    y
}

/// Serpent linear transformation.
#[inline(always)]
fn lt(x: [u32; 4]) -> [u32; 4] {
    let [mut x0, mut x1, mut x2, mut x3] = x;
    x0 = x0.rotate_left(13);
    x2 = x2.rotate_left(3);
    x1 ^= x0 ^ x2;
    x3 ^= x2 ^ (x0 << 3);
    x1 = x1.rotate_left(1);
    x3 = x3.rotate_left(7);
    x0 ^= x1 ^ x3;
    x2 ^= x3 ^ (x1 << 7);
    x0 = x0.rotate_left(5);
    x2 = x2.rotate_left(22);
    [x0, x1, x2, x3]
}

/// GF(2^8) tables for α·x and α^{-1}·x on 32-bit words:
/// α^4 = β^23 α^3 + β^245 α^2 + β^48 α + β^239, α^{-1} = β^16 α^3 + β^39 α^2 + β^6 α + β^64.
const fn alpha_tables() -> ([u32; 256], [u32; 256]) {
    let mut exp = [0u32; 256];
    let mut log = [0usize; 256];
    let mut x: u32 = 1;
    let mut i = 0;
    while i < 255 {
        exp[i] = x;
        log[x as usize] = i;
        x <<= 1;
        if x > 0xff {
            x ^= 0x1a9;
        }
        i += 1;
    }
    let mut mul = [0u32; 256];
    let mut div = [0u32; 256];
    let mut v = 1;
    while v < 256 {
        let e = log[v];
        mul[v] = (exp[(e + 23) % 255] << 24)
            | (exp[(e + 245) % 255] << 16)
            | (exp[(e + 48) % 255] << 8)
            | exp[(e + 239) % 255];
        div[v] =
            (exp[(e + 16) % 255] << 24) | (exp[(e + 39) % 255] << 16) | (exp[(e + 6) % 255] << 8) | exp[(e + 64) % 255];
        v += 1;
    }
    (mul, div)
}
const ALPHA: ([u32; 256], [u32; 256]) = alpha_tables();

#[derive(Clone, Default, Zeroize)]
pub(crate) struct Core {
    /// s_t .. s_{t+9}
    s: [u32; 10],
    r1: u32,
    r2: u32,
}

impl Core {
    /// One FSM + LFSR step: returns (f_t, s_t).
    #[inline(always)]
    fn step(&mut self) -> (u32, u32) {
        let s = &mut self.s;
        let old_r1 = self.r1;
        let mux = s[8] & 0u32.wrapping_sub(old_r1 & 1); // lsb(R1) ? s_{t+8} : 0
        self.r1 = self.r2.wrapping_add(s[1] ^ mux);
        self.r2 = old_r1.wrapping_mul(0x5465_5307).rotate_left(7);
        let f = s[9].wrapping_add(self.r1) ^ self.r2;
        let st = s[0];
        let a = (st << 8) ^ ALPHA.0[(st >> 24) as usize];
        let d = (s[3] >> 8) ^ ALPHA.1[(s[3] & 0xff) as usize];
        let new = s[9] ^ d ^ a;
        s.copy_within(1..10, 0);
        s[9] = new;
        (f, st)
    }

    /// Four steps: 16 keystream bytes as four words.
    #[inline(always)]
    fn block(&mut self) -> [u32; 4] {
        let (f0, s0) = self.step();
        let (f1, s1) = self.step();
        let (f2, s2) = self.step();
        let (f3, s3) = self.step();
        let y = sbox(2, [f0, f1, f2, f3]);
        [y[0] ^ s0, y[1] ^ s1, y[2] ^ s2, y[3] ^ s3]
    }

    fn load(&mut self, key: &[u8], iv: &[u8]) {
        // Serpent key schedule (25 subkeys for Serpent24).
        let mut kb = [0u8; 32];
        kb[..key.len()].copy_from_slice(key);
        if key.len() < 32 {
            kb[key.len()] = 0x01;
        }
        let mut w = [0u32; 108];
        for i in 0..8 {
            w[i] = u32::from_le_bytes(kb[4 * i..4 * i + 4].try_into().expect("4 bytes"));
        }
        for i in 8..108 {
            w[i] = (w[i - 8] ^ w[i - 5] ^ w[i - 3] ^ w[i - 1] ^ 0x9e37_79b9 ^ (i as u32 - 8)).rotate_left(11);
        }
        let mut k = [[0u32; 4]; 25];
        for (j, kj) in k.iter_mut().enumerate() {
            let b = 8 + 4 * j;
            *kj = sbox((3 + 8 - j % 8) % 8, [w[b], w[b + 1], w[b + 2], w[b + 3]]);
        }
        // Serpent24 on the IV; outputs of rounds 12, 18 and 24 initialise the state.
        let mut x = [0u32; 4];
        for (i, xi) in x.iter_mut().enumerate() {
            *xi = u32::from_le_bytes(iv[4 * i..4 * i + 4].try_into().expect("4 bytes"));
        }
        for (r, kr) in k.iter().enumerate().take(24) {
            for i in 0..4 {
                x[i] ^= kr[i];
            }
            x = lt(sbox(r % 8, x));
            match r + 1 {
                12 => {
                    // (s7, s8, s9, s10) = (Y3, Y2, Y1, Y0)
                    self.s[6] = x[3];
                    self.s[7] = x[2];
                    self.s[8] = x[1];
                    self.s[9] = x[0];
                }
                18 => {
                    // (s5, s6) = (Y1, Y3), (R1, R2) = (Y0, Y2)
                    self.s[4] = x[1];
                    self.s[5] = x[3];
                    self.r1 = x[0];
                    self.r2 = x[2];
                }
                _ => {}
            }
        }
        for i in 0..4 {
            x[i] ^= k[24][i];
        }
        // (s1, s2, s3, s4) = (Y3, Y2, Y1, Y0)
        self.s[0] = x[3];
        self.s[1] = x[2];
        self.s[2] = x[1];
        self.s[3] = x[0];
        kb.zeroize();
        w.zeroize();
        k.zeroize();
        x.zeroize();
    }
}

/// 64-bit words over 16-byte blocks.
#[derive(Clone, Default, Zeroize)]
pub(crate) struct Gen {
    core: Core,
    blk: [u32; 4],
    /// Next unused half (0 or 2) of `blk`; 4 = empty.
    pos: usize,
}

impl Words for Gen {
    #[inline(always)]
    fn next_word(&mut self) -> u64 {
        if self.pos >= 4 {
            self.blk = self.core.block();
            self.pos = 0;
        }
        let w = self.blk[self.pos] as u64 | (self.blk[self.pos + 1] as u64) << 32;
        self.pos += 2;
        w
    }
}

/// Sosemanuk; keystream advances by whole bytes. Zeroized on drop.
#[derive(Clone, Default, Zeroize, ZeroizeOnDrop)]
pub struct Sosemanuk {
    core: Gen,
    bb: BitBuf,
    ready: bool,
    /// Accept keys of 1–32 bytes instead of exactly 16.
    any_key: bool,
}

impl Sosemanuk {
    /// An instance that accepts any key length from 1 to 32 bytes (Serpent key schedule),
    /// e.g. for the 40- and 256-bit-key reference vectors.
    pub fn any_key_length() -> Self {
        let mut s = Self::default();
        s.any_key = true;
        s
    }

    fn setup(&mut self, key: &[u8], iv: &[u8]) -> Result<(), CipherError> {
        if !(self.any_key && (1..=32).contains(&key.len())) {
            check_len(key.len(), 16, key_err)?;
        }
        check_len(iv.len(), 16, iv_err)?;
        self.core.core.load(key, iv);
        self.core.pos = 4;
        Ok(())
    }
}

stream_impl!(Sosemanuk, INFO, true);

#[cfg(test)]
#[allow(clippy::needless_range_loop)]
mod tests {
    use super::*;

    #[test]
    fn anf_reproduces_sbox_tables() {
        // Bitsliced evaluation on 16 lanes must match the lookup tables.
        for s in 0..8 {
            let x = [0xaaaa_u32, 0xcccc, 0xf0f0, 0xff00]; // lane k holds input k
            let y = sbox(s, x);
            for k in 0..16 {
                let v = (0..4).fold(0u8, |a, j| a | ((((y[j] >> k) & 1) as u8) << j));
                assert_eq!(v, SBOX[s][k], "S{s}({k})");
            }
        }
    }

    #[test]
    fn alpha_tables_by_hand() {
        // β^8 = β^7 + β^5 + β^3 + 1, so β·0x80 = 0xa9; α·α^-1 = 1 on a few words.
        let mul = |x: u32| (x << 8) ^ ALPHA.0[(x >> 24) as usize];
        let div = |x: u32| (x >> 8) ^ ALPHA.1[(x & 0xff) as usize];
        for x in [1u32, 0x8000_0000, 0xdead_beef, 0x0123_4567, 0xffff_ffff] {
            assert_eq!(div(mul(x)), x);
            assert_eq!(mul(div(x)), x);
        }
    }
}
