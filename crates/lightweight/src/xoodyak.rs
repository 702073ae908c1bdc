//! Xoodyak AEAD (final round): Daemen, Hoffert, Mella, Peeters, Van Assche, Van Keer,
//! "Xoodyak, a lightweight cryptographic scheme", NIST LWC finalist specification (2021).
//! The Cyclist mode in keyed use over the Xoodoo\[12\] permutation (384-bit state = 48 bytes):
//! final-round AEAD `Cyclist(K, id = N, ε)`, `Absorb(A)`, `C ← Encrypt(P)`, `T ← Squeeze(16)`
//! (round 2 used `Cyclist(K, ε, ε)`, `Absorb(N)`; the two give different KATs).
//! 128-bit key, nonce and tag. Lanes are little-endian 32-bit words.
//!
//! Constant time: Xoodoo is xor/and/not/rotate on 32-bit lanes with fixed indices; the tag is
//! compared without early exit.
use lwcbench_core::{check_len, iv_err, key_err, Aead, BitOrder, CipherError, CipherInfo, Family, Language, Origin};
use zeroize::{Zeroize, ZeroizeOnDrop};

/// Metadata of this Xoodyak implementation.
pub const INFO: CipherInfo = CipherInfo {
    name: "Xoodyak",
    implementation: "rust-ref",
    family: Family::Aead,
    key_bits: 128,
    iv_bits: 128,
    block_bits: 192, // keyed squeeze rate R_kout = 24 bytes
    tag_bits: 128,
    state_bytes: 48,
    origin: Origin::Own,
    language: Language::Rust,
    bit_order: BitOrder::MsbFirst,
    bit_granular: false,
    note: "",
};

/// Round constants of Xoodoo[12] (specification, Table 2), last 12 rounds.
const RC: [u32; 12] = [0x058, 0x038, 0x3c0, 0x0d0, 0x120, 0x014, 0x060, 0x02c, 0x380, 0x0f0, 0x1a0, 0x012];

const R_KIN: usize = 44; // keyed absorb rate
const R_KOUT: usize = 24; // keyed squeeze rate

/// Xoodoo[12] on lanes a[x + 4y] (plane y, column x).
fn xoodoo(a: &mut [u32; 12]) {
    for &rc in &RC {
        // θ: column parity, spread with offsets (1,5) and (1,14)
        let p: [u32; 4] = core::array::from_fn(|x| a[x] ^ a[x + 4] ^ a[x + 8]);
        let e: [u32; 4] = core::array::from_fn(|x| {
            let q = p[(x + 3) % 4];
            q.rotate_left(5) ^ q.rotate_left(14)
        });
        for (i, l) in a.iter_mut().enumerate() {
            *l ^= e[i % 4];
        }
        // ρ_west: plane 1 shifted by (1,0), plane 2 by (0,11)
        a[4..8].rotate_right(1);
        for l in &mut a[8..12] {
            *l = l.rotate_left(11);
        }
        // ι
        a[0] ^= rc;
        // χ
        for x in 0..4 {
            let (a0, a1, a2) = (a[x], a[x + 4], a[x + 8]);
            a[x] = a0 ^ (!a1 & a2);
            a[x + 4] = a1 ^ (!a2 & a0);
            a[x + 8] = a2 ^ (!a0 & a1);
        }
        // ρ_east: plane 1 by (0,1), plane 2 by (2,8)
        for l in &mut a[4..8] {
            *l = l.rotate_left(1);
        }
        let p2: [u32; 4] = core::array::from_fn(|x| a[8 + (x + 2) % 4].rotate_left(8));
        a[8..12].copy_from_slice(&p2);
    }
}

/// Cyclist state in keyed mode.
#[derive(Zeroize, ZeroizeOnDrop)]
struct Cyclist {
    s: [u32; 12],
    up: bool, // phase: true = up
}

impl Cyclist {
    fn xor_byte(&mut self, i: usize, b: u8) {
        self.s[i / 4] ^= u32::from(b) << (8 * (i % 4));
    }
    fn byte(&self, i: usize) -> u8 {
        (self.s[i / 4] >> (8 * (i % 4))) as u8
    }
    fn up(&mut self, cu: u8) {
        self.up = true;
        self.xor_byte(47, cu);
        xoodoo(&mut self.s);
    }
    fn down(&mut self, x: &[u8], cd: u8) {
        self.up = false;
        for (i, &b) in x.iter().enumerate() {
            self.xor_byte(i, b);
        }
        self.xor_byte(x.len(), 0x01);
        self.xor_byte(47, cd);
    }
    /// AbsorbAny(X, R_kin, Cd): at least one block, even for empty X.
    fn absorb_any(&mut self, x: &[u8], cd: u8) {
        let mut cd = cd;
        let mut blocks = x.chunks(R_KIN);
        let first = blocks.next().unwrap_or(&[]);
        for b in core::iter::once(first).chain(blocks) {
            if !self.up {
                self.up(0x00);
            }
            self.down(b, cd);
            cd = 0x00;
        }
    }
    /// Crypt in place, at least one block (an empty message still runs Up(0x80), Down(ε)).
    /// The plaintext is absorbed: the input when encrypting, the output when decrypting.
    /// `DECRYPT` is a const parameter so each direction compiles to its own loop whatever the
    /// caller inlines: a runtime flag leaves a per-byte branch wherever `crypt` is not inlined,
    /// e.g. behind a trait object (scripts/ci/parity/instructions.py checks the two agree).
    fn crypt<const DECRYPT: bool>(&mut self, buf: &mut [u8]) {
        let mut cu = 0x80;
        let mut p = [0u8; R_KOUT];
        let mut blocks = buf.chunks_mut(R_KOUT);
        let mut blk = blocks.next().unwrap_or(&mut []);
        loop {
            self.up(cu);
            for (i, b) in blk.iter_mut().enumerate() {
                let o = *b ^ self.byte(i);
                p[i] = if DECRYPT { o } else { *b };
                *b = o;
            }
            self.down(&p[..blk.len()], 0x00);
            cu = 0x00;
            match blocks.next() {
                Some(b) => blk = b,
                None => break,
            }
        }
        p.zeroize();
    }
    fn squeeze16(&mut self) -> [u8; 16] {
        self.up(0x40);
        core::array::from_fn(|i| self.byte(i))
    }
}

#[derive(Default, Zeroize, ZeroizeOnDrop)]
/// The Xoodyak AEAD; create it with `Default`, then set a key.
pub struct Xoodyak {
    key: [u8; 16],
    keyed: bool,
}

impl Xoodyak {
    fn start(&self, nonce: &[u8], ad: &[u8], tag_len: usize) -> Result<Cyclist, CipherError> {
        if !self.keyed {
            return Err(CipherError::NotInitialized);
        }
        check_len(nonce.len(), 16, iv_err)?;
        check_len(tag_len, 16, |e, g| CipherError::TagLength { expected: e, got: g })?;
        let mut c = Cyclist { s: [0; 12], up: true };
        // Final-round AEAD: the nonce is Cyclist's id, absorbed with the key in one block,
        // AbsorbKey: K ‖ N ‖ enc8(|N|) with Cd = 0x02 (round 2 absorbed N separately)
        let mut k = [0u8; 33];
        k[..16].copy_from_slice(&self.key);
        k[16..32].copy_from_slice(nonce);
        k[32] = 16;
        c.absorb_any(&k, 0x02);
        k.zeroize();
        c.absorb_any(ad, 0x03);
        Ok(c)
    }
}

impl Aead for Xoodyak {
    fn info(&self) -> CipherInfo {
        INFO
    }
    fn set_key(&mut self, key: &[u8]) -> Result<(), CipherError> {
        check_len(key.len(), 16, key_err)?;
        self.key.copy_from_slice(key);
        self.keyed = true;
        Ok(())
    }
    fn encrypt(&mut self, nonce: &[u8], ad: &[u8], buf: &mut [u8], tag: &mut [u8]) -> Result<(), CipherError> {
        let mut c = self.start(nonce, ad, tag.len())?;
        c.crypt::<false>(buf);
        tag.copy_from_slice(&c.squeeze16());
        Ok(())
    }
    fn decrypt(&mut self, nonce: &[u8], ad: &[u8], buf: &mut [u8], tag: &[u8]) -> Result<(), CipherError> {
        let mut c = self.start(nonce, ad, tag.len())?;
        c.crypt::<true>(buf);
        crate::check_tag(&c.squeeze16(), tag, buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_kat_vector() {
        // lwc-finalists-rweather/Xoodyak.txt Count = 1 (empty PT and AD)
        let key: [u8; 16] = core::array::from_fn(|i| i as u8);
        let mut c = Xoodyak::default();
        c.set_key(&key).unwrap();
        let mut tag = [0u8; 16];
        c.encrypt(&key, &[], &mut [], &mut tag).unwrap();
        assert_eq!(
            tag,
            [0x49, 0x68, 0xDC, 0x9C, 0x71, 0x4B, 0x06, 0xA9, 0x8D, 0x19, 0x05, 0xC6, 0x44, 0x7B, 0x49, 0x39]
        );
    }
}
