//! HIGHT: 64-bit block, 128-bit key, 32 rounds (Hong et al., "HIGHT: A New Block Cipher
//! Suitable for Low-Resource Device", CHES 2006; TTAS.KO-12.0040/R1, ISO/IEC 18033-3).
//!
//! Byte convention: array index = subscript (MK0 = key byte 0, P0 = block byte 0), as in the
//! KISA reference code and the Crypto++ vectors. The specification *prints* its examples from
//! the highest index down, so they must be reversed before use (shared README §2).
//!
//! Constant time: 8-bit ARX (add mod 2^8, xor, rotations by constants); the round constants
//! δ_i depend only on the round index, not on key or data.
//!
//! Key schedule: 8 whitening-key bytes + 128 subkey bytes = 136 bytes.
use lwcbench_core::{check_len, key_err, BitOrder, BlockCipher, CipherError, CipherInfo, Family, Language, Origin};
use zeroize::{Zeroize, ZeroizeOnDrop};

#[derive(Zeroize, ZeroizeOnDrop)]
/// The HIGHT block cipher; create it with `Default`, then set a key.
pub struct Hight {
    wk: [u8; 8],
    sk: [u8; 128],
}

impl Default for Hight {
    fn default() -> Self {
        Hight { wk: [0; 8], sk: [0; 128] }
    }
}

/// Metadata of this HIGHT implementation.
pub const INFO: CipherInfo = CipherInfo {
    name: "HIGHT",
    implementation: "rust-ref",
    family: Family::Block,
    key_bits: 128,
    iv_bits: 0,
    block_bits: 64,
    tag_bits: 0,
    state_bytes: 136,
    origin: Origin::Own,
    language: Language::Rust,
    bit_order: BitOrder::MsbFirst,
    bit_granular: false,
    note: "",
};

/// δ_0…δ_127: the spec's 7-bit LFSR s_{i+7} = s_{i+3} ⊕ s_i with (s_0…s_6) = 1011010 read
/// as δ_0 = 0x5A; δ_i = (s_{i+6}, …, s_i).
const fn deltas() -> [u8; 128] {
    let mut d = [0u8; 128];
    d[0] = 0x5a;
    let mut i = 1;
    while i < 128 {
        let p = d[i - 1];
        // new bit s_{i+6} = s_{i+2} ⊕ s_{i-1}: bits 3 and 0 of δ_{i-1}
        let nb = ((p >> 3) ^ p) & 1;
        d[i] = (p >> 1) | (nb << 6);
        i += 1;
    }
    d
}
const DELTA: [u8; 128] = deltas();

#[inline(always)]
fn f0(x: u8) -> u8 {
    x.rotate_left(1) ^ x.rotate_left(2) ^ x.rotate_left(7)
}
#[inline(always)]
fn f1(x: u8) -> u8 {
    x.rotate_left(3) ^ x.rotate_left(4) ^ x.rotate_left(6)
}

impl BlockCipher for Hight {
    fn info(&self) -> CipherInfo {
        INFO
    }
    fn set_key(&mut self, key: &[u8]) -> Result<(), CipherError> {
        check_len(key.len(), 16, key_err)?;
        // WK0..3 = MK12..15, WK4..7 = MK0..3
        self.wk[..4].copy_from_slice(&key[12..16]);
        self.wk[4..].copy_from_slice(&key[..4]);
        for i in 0..8 {
            for j in 0..8 {
                let m = (j + 8 - i) % 8;
                self.sk[16 * i + j] = key[m].wrapping_add(DELTA[16 * i + j]);
                self.sk[16 * i + j + 8] = key[m + 8].wrapping_add(DELTA[16 * i + j + 8]);
            }
        }
        Ok(())
    }
    fn encrypt_block(&self, block: &mut [u8]) {
        let (wk, sk) = (&self.wk, &self.sk);
        let mut x: [u8; 8] = block[..8].try_into().expect("8-byte block");
        x[0] = x[0].wrapping_add(wk[0]);
        x[2] ^= wk[1];
        x[4] = x[4].wrapping_add(wk[2]);
        x[6] ^= wk[3];
        for i in 0..32 {
            let k = &sk[4 * i..4 * i + 4];
            let n1 = x[1].wrapping_add(f1(x[0]) ^ k[0]);
            let n3 = x[3] ^ f0(x[2]).wrapping_add(k[1]);
            let n5 = x[5].wrapping_add(f1(x[4]) ^ k[2]);
            let n7 = x[7] ^ f0(x[6]).wrapping_add(k[3]);
            x = if i < 31 {
                // rotate the bytes one position left: X_{i+1,j} = X_{i,j-1}
                [n7, x[0], n1, x[2], n3, x[4], n5, x[6]]
            } else {
                [x[0], n1, x[2], n3, x[4], n5, x[6], n7]
            };
        }
        x[0] = x[0].wrapping_add(wk[4]);
        x[2] ^= wk[5];
        x[4] = x[4].wrapping_add(wk[6]);
        x[6] ^= wk[7];
        block[..8].copy_from_slice(&x);
    }
    fn decrypt_block(&self, block: &mut [u8]) {
        let (wk, sk) = (&self.wk, &self.sk);
        let mut y: [u8; 8] = block[..8].try_into().expect("8-byte block");
        y[0] = y[0].wrapping_sub(wk[4]);
        y[2] ^= wk[5];
        y[4] = y[4].wrapping_sub(wk[6]);
        y[6] ^= wk[7];
        for i in (0..32).rev() {
            let k = &sk[4 * i..4 * i + 4];
            // undo the byte rotation first (not done in the last round)
            let x: [u8; 8] = if i < 31 { [y[1], y[2], y[3], y[4], y[5], y[6], y[7], y[0]] } else { y };
            y = [
                x[0],
                x[1].wrapping_sub(f1(x[0]) ^ k[0]),
                x[2],
                x[3] ^ f0(x[2]).wrapping_add(k[1]),
                x[4],
                x[5].wrapping_sub(f1(x[4]) ^ k[2]),
                x[6],
                x[7] ^ f0(x[6]).wrapping_add(k[3]),
            ];
        }
        y[0] = y[0].wrapping_sub(wk[0]);
        y[2] ^= wk[1];
        y[4] = y[4].wrapping_sub(wk[2]);
        y[6] ^= wk[3];
        block[..8].copy_from_slice(&y);
        y.zeroize();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_deltas_by_hand() {
        // s_0..s_6 = 0,1,0,1,1,0,1; s_7 = s_3^s_0 = 1 → δ_1 = (s_7..s_1) = 1,1,0,1,1,0,1 = 0x6D
        assert_eq!(DELTA[0], 0x5a);
        assert_eq!(DELTA[1], 0x6d);
    }

    #[test]
    fn specification_example_reversed() {
        // HIGHT spec example: Key 00 11 22 … ff, P 00…00 → C 00 f4 18 ae d9 4f 03 f2, printed
        // from the highest index down; reversed here into array order (shared README §2).
        let mut key: [u8; 16] = core::array::from_fn(|i| 0x11 * i as u8);
        key.reverse();
        let mut b = [0u8; 8];
        let mut want = [0x00, 0xf4, 0x18, 0xae, 0xd9, 0x4f, 0x03, 0xf2];
        want.reverse();
        let mut c = Hight::default();
        c.set_key(&key).unwrap();
        c.encrypt_block(&mut b);
        assert_eq!(b, want);
        c.decrypt_block(&mut b);
        assert_eq!(b, [0u8; 8]);
    }
}
