//! SCHWAEMM256-128, the primary AEAD of the SPARKLE family: Beierle, Biryukov, Cardoso dos
//! Santos, Großschädl, Perrin, Udovenko, Velichkov, Wang, "Schwaemm and Esch: Lightweight
//! Authenticated Encryption and Hashing using the Sparkle Permutation Family", NIST LWC
//! finalist specification v1.2 (2021). Sparkle384 (six Alzette branches, 384-bit state =
//! 48 bytes), rate 256 bits, capacity 128 bits; 128-bit key and tag, **256-bit nonce**.
//! 7 "slim" steps between blocks, 11 "big" steps at initialization and after the last AD and
//! message block. Words are little-endian 32-bit.
//!
//! Constant time: Alzette is 32-bit add/xor/rotate with constant rotation amounts; the tag is
//! compared without early exit.
use lwcbench_core::{check_len, iv_err, key_err, Aead, BitOrder, CipherError, CipherInfo, Family, Language, Origin};
use zeroize::{Zeroize, ZeroizeOnDrop};

/// Metadata of this SCHWAEMM256-128 implementation.
pub const INFO: CipherInfo = CipherInfo {
    name: "SCHWAEMM256-128",
    implementation: "rust-ref",
    family: Family::Aead,
    key_bits: 128,
    iv_bits: 256,
    block_bits: 256,
    tag_bits: 128,
    state_bytes: 48,
    origin: Origin::Own,
    language: Language::Rust,
    bit_order: BitOrder::MsbFirst,
    bit_granular: false,
    note: "",
};

/// Round constants c_0…c_7 (the fractional part of e, specification §2.1).
const RCON: [u32; 8] = [0xB7E15162, 0xBF715880, 0x38B4DA56, 0x324E7738, 0xBB1185EB, 0x4F7C7B57, 0xCFBFA1C8, 0xC2B3293D];
const BRANCHES: usize = 6;
const RATE_W: usize = 8;
const CAP_W: usize = 4;
const STEPS_SLIM: usize = 7;
const STEPS_BIG: usize = 11;
const RATE: usize = 32;
// Domain constants into the last capacity word: (i ⊕ 2^{c/64}) << 24 with c/64 = 2 (§2.3).
const CONST_A0: u32 = 0x0400_0000; // (0 ⊕ 4) << 24: last AD block padded
const CONST_A1: u32 = 0x0500_0000; // (1 ⊕ 4) << 24: last AD block full
const CONST_M2: u32 = 0x0600_0000; // (2 ⊕ 4) << 24: last message block padded
const CONST_M3: u32 = 0x0700_0000; // (3 ⊕ 4) << 24: last message block full

/// The ARX-box Alzette on one branch (x, y) with constant c.
#[inline(always)]
fn alzette(x: &mut u32, y: &mut u32, c: u32) {
    *x = x.wrapping_add(y.rotate_right(31));
    *y ^= x.rotate_right(24);
    *x ^= c;
    *x = x.wrapping_add(y.rotate_right(17));
    *y ^= x.rotate_right(17);
    *x ^= c;
    *x = x.wrapping_add(*y);
    *y ^= x.rotate_right(31);
    *x ^= c;
    *x = x.wrapping_add(y.rotate_right(24));
    *y ^= x.rotate_right(16);
    *x ^= c;
}

#[inline(always)]
fn ell(x: u32) -> u32 {
    (x ^ (x << 16)).rotate_right(16)
}

/// Sparkle384 with `steps` steps; state words are (x0, y0, x1, y1, …).
fn sparkle384(s: &mut [u32; 12], steps: usize) {
    const H: usize = BRANCHES / 2;
    for i in 0..steps {
        s[1] ^= RCON[i % 8];
        s[3] ^= i as u32;
        for j in 0..BRANCHES {
            let (a, b) = s.split_at_mut(2 * j + 1);
            alzette(&mut a[2 * j], &mut b[0], RCON[j]);
        }
        // linear layer: Feistel with ℓ, then swap halves rotating the right half by a branch
        let (mut tx, mut ty) = (0u32, 0u32);
        for j in 0..H {
            tx ^= s[2 * j];
            ty ^= s[2 * j + 1];
        }
        let (tx, ty) = (ell(tx), ell(ty));
        let mut left = [0u32; 2 * H];
        left.copy_from_slice(&s[..2 * H]);
        let mut right = [0u32; 2 * H];
        for j in 0..H {
            right[2 * j] = s[2 * (j + H)] ^ left[2 * j] ^ ty;
            right[2 * j + 1] = s[2 * (j + H) + 1] ^ left[2 * j + 1] ^ tx;
        }
        for j in 0..H {
            let k = (j + 1) % H;
            s[2 * j] = right[2 * k];
            s[2 * j + 1] = right[2 * k + 1];
        }
        s[2 * H..].copy_from_slice(&left);
    }
}

/// Absorb one (padded) 32-byte block `d`: rate ← ρ1(rate, d) ⊕ (capacity ‖ capacity).
/// ρ1(S1 ‖ S2, D) = (S2 ‖ S1 ⊕ S2) ⊕ D (Feistel swap of the rate halves).
fn absorb(s: &mut [u32; 12], d: &[u8; RATE]) {
    for i in 0..RATE_W / 2 {
        let j = i + RATE_W / 2;
        let (s1, s2) = (s[i], s[j]);
        let di = u32::from_le_bytes(d[4 * i..4 * i + 4].try_into().expect("4"));
        let dj = u32::from_le_bytes(d[4 * j..4 * j + 4].try_into().expect("4"));
        s[i] = s2 ^ di ^ s[RATE_W + i % CAP_W];
        s[j] = s1 ^ s2 ^ dj ^ s[RATE_W + j % CAP_W];
    }
}

fn rate_bytes(s: &[u32; 12]) -> [u8; RATE] {
    let mut out = [0u8; RATE];
    for (o, w) in out.chunks_exact_mut(4).zip(&s[..RATE_W]) {
        o.copy_from_slice(&w.to_le_bytes());
    }
    out
}

#[derive(Default, Zeroize, ZeroizeOnDrop)]
/// The SCHWAEMM256-128 AEAD; create it with `Default`, then set a key.
pub struct Schwaemm256_128 {
    key: [u32; 4],
    keyed: bool,
}

impl Schwaemm256_128 {
    fn start(&self, nonce: &[u8], ad: &[u8], tag_len: usize) -> Result<[u32; 12], CipherError> {
        if !self.keyed {
            return Err(CipherError::NotInitialized);
        }
        check_len(nonce.len(), 32, iv_err)?;
        check_len(tag_len, 16, |e, g| CipherError::TagLength { expected: e, got: g })?;
        let mut s = [0u32; 12];
        for (w, n) in s[..RATE_W].iter_mut().zip(nonce.chunks_exact(4)) {
            *w = u32::from_le_bytes(n.try_into().expect("4"));
        }
        s[RATE_W..].copy_from_slice(&self.key);
        sparkle384(&mut s, STEPS_BIG);
        if !ad.is_empty() {
            let last = (ad.len() - 1) / RATE;
            for (n, a) in ad.chunks(RATE).enumerate() {
                let mut blk = [0u8; RATE];
                blk[..a.len()].copy_from_slice(a);
                if n < last {
                    absorb(&mut s, &blk);
                    sparkle384(&mut s, STEPS_SLIM);
                } else {
                    if a.len() < RATE {
                        blk[a.len()] = 0x80;
                    }
                    s[11] ^= if a.len() < RATE { CONST_A0 } else { CONST_A1 };
                    absorb(&mut s, &blk);
                    sparkle384(&mut s, STEPS_BIG);
                }
            }
        }
        Ok(s)
    }

    /// Encrypt or decrypt `buf` in place; the state always absorbs the padded plaintext.
    fn crypt(&self, s: &mut [u32; 12], buf: &mut [u8], decrypt: bool) {
        if buf.is_empty() {
            return;
        }
        let last = (buf.len() - 1) / RATE;
        for (n, b) in buf.chunks_mut(RATE).enumerate() {
            let ks = rate_bytes(s);
            let mut m = [0u8; RATE];
            for (i, x) in b.iter_mut().enumerate() {
                let out = *x ^ ks[i];
                m[i] = if decrypt { out } else { *x };
                *x = out;
            }
            if n < last {
                absorb(s, &m);
                sparkle384(s, STEPS_SLIM);
            } else {
                if b.len() < RATE {
                    m[b.len()] = 0x80;
                }
                s[11] ^= if b.len() < RATE { CONST_M2 } else { CONST_M3 };
                absorb(s, &m);
                sparkle384(s, STEPS_BIG);
            }
            m.zeroize();
        }
    }

    fn tag(&self, s: &mut [u32; 12]) -> [u8; 16] {
        let mut t = [0u8; 16];
        for i in 0..CAP_W {
            t[4 * i..4 * i + 4].copy_from_slice(&(s[RATE_W + i] ^ self.key[i]).to_le_bytes());
        }
        s.zeroize();
        t
    }
}

impl Aead for Schwaemm256_128 {
    fn info(&self) -> CipherInfo {
        INFO
    }
    fn set_key(&mut self, key: &[u8]) -> Result<(), CipherError> {
        check_len(key.len(), 16, key_err)?;
        self.key = core::array::from_fn(|i| u32::from_le_bytes(key[4 * i..4 * i + 4].try_into().expect("4")));
        self.keyed = true;
        Ok(())
    }
    fn encrypt(&mut self, nonce: &[u8], ad: &[u8], buf: &mut [u8], tag: &mut [u8]) -> Result<(), CipherError> {
        let mut s = self.start(nonce, ad, tag.len())?;
        self.crypt(&mut s, buf, false);
        tag.copy_from_slice(&self.tag(&mut s));
        Ok(())
    }
    fn decrypt(&mut self, nonce: &[u8], ad: &[u8], buf: &mut [u8], tag: &[u8]) -> Result<(), CipherError> {
        let mut s = self.start(nonce, ad, tag.len())?;
        self.crypt(&mut s, buf, true);
        crate::check_tag(&self.tag(&mut s), tag, buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_kat_vector() {
        // lwc-finalists-rweather/Schwaemm256-128.txt Count = 1 (empty PT and AD)
        let key: [u8; 16] = core::array::from_fn(|i| i as u8);
        let nonce: [u8; 32] = core::array::from_fn(|i| i as u8);
        let mut c = Schwaemm256_128::default();
        c.set_key(&key).unwrap();
        let mut tag = [0u8; 16];
        c.encrypt(&nonce, &[], &mut [], &mut tag).unwrap();
        let want: [u8; 16] =
            [0x9E, 0x3F, 0x9F, 0x2E, 0x8E, 0x26, 0xE7, 0xD0, 0x0A, 0x9E, 0xB9, 0x27, 0x30, 0x71, 0x7A, 0x51];
        assert_eq!(tag, want);
    }
}
