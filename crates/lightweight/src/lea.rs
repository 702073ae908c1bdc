//! LEA-128: the 128-bit-block, 128-bit-key member of LEA (Hong, Lee, Kim, Kwon, Ryu, Lee,
//! "LEA: A 128-Bit Block Cipher for Fast Encryption on Common Processors", WISA 2013; KISA /
//! TTAS.KO-12.0223). Words are little-endian 32-bit (KISA byte convention, as in the
//! Crypto++ vectors).
//!
//! Constant time: pure ARX (32-bit add, rotate by constants, xor) with no table look-ups or
//! data-dependent branches.
//!
//! Key schedule: each round key RK_i = (T0, T1, T2, T1, T3, T1) has only four distinct words,
//! so 24 × 4 words = 384 bytes are stored instead of the spec's 24 × 6.
use lwcbench_core::{check_len, key_err, BitOrder, BlockCipher, CipherError, CipherInfo, Family, Language, Origin};
use zeroize::{Zeroize, ZeroizeOnDrop};

const ROUNDS: usize = 24;

/// Key-schedule constants δ_0…δ_3 of the LEA specification (LEA-128 uses only these four).
const DELTA: [u32; 4] = [0xc3efe9db, 0x44626b02, 0x79e27c8a, 0x78df30ec];

#[derive(Zeroize, ZeroizeOnDrop)]
/// The LEA-128 block cipher; create it with `Default`, then set a key.
pub struct Lea128 {
    rk: [[u32; 4]; ROUNDS],
}

impl Default for Lea128 {
    fn default() -> Self {
        Lea128 { rk: [[0; 4]; ROUNDS] }
    }
}

/// Metadata of this LEA-128 implementation.
pub const INFO: CipherInfo = CipherInfo {
    name: "LEA-128",
    implementation: "rust-ref",
    family: Family::Block,
    key_bits: 128,
    iv_bits: 0,
    block_bits: 128,
    tag_bits: 0,
    state_bytes: (ROUNDS * 16) as u32,
    origin: Origin::Own,
    language: Language::Rust,
    bit_order: BitOrder::MsbFirst,
    bit_granular: false,
    note: "",
};

fn words(b: &[u8]) -> [u32; 4] {
    core::array::from_fn(|i| u32::from_le_bytes(b[4 * i..4 * i + 4].try_into().expect("4 bytes")))
}

fn store(b: &mut [u8], x: [u32; 4]) {
    for (c, w) in b.chunks_exact_mut(4).zip(x) {
        c.copy_from_slice(&w.to_le_bytes());
    }
}

impl BlockCipher for Lea128 {
    fn info(&self) -> CipherInfo {
        INFO
    }
    fn set_key(&mut self, key: &[u8]) -> Result<(), CipherError> {
        check_len(key.len(), 16, key_err)?;
        let mut t = words(key);
        for (i, rk) in self.rk.iter_mut().enumerate() {
            let d = DELTA[i % 4];
            t[0] = t[0].wrapping_add(d.rotate_left(i as u32)).rotate_left(1);
            t[1] = t[1].wrapping_add(d.rotate_left(i as u32 + 1)).rotate_left(3);
            t[2] = t[2].wrapping_add(d.rotate_left(i as u32 + 2)).rotate_left(6);
            t[3] = t[3].wrapping_add(d.rotate_left(i as u32 + 3)).rotate_left(11);
            *rk = t;
        }
        t.zeroize();
        Ok(())
    }
    fn encrypt_block(&self, block: &mut [u8]) {
        let mut x = words(block);
        for rk in &self.rk {
            // RK = (T0, T1, T2, T1, T3, T1)
            let n0 = ((x[0] ^ rk[0]).wrapping_add(x[1] ^ rk[1])).rotate_left(9);
            let n1 = ((x[1] ^ rk[2]).wrapping_add(x[2] ^ rk[1])).rotate_right(5);
            let n2 = ((x[2] ^ rk[3]).wrapping_add(x[3] ^ rk[1])).rotate_right(3);
            x = [n0, n1, n2, x[0]];
        }
        store(block, x);
    }
    fn decrypt_block(&self, block: &mut [u8]) {
        let mut y = words(block);
        for rk in self.rk.iter().rev() {
            let x0 = y[3];
            let x1 = y[0].rotate_right(9).wrapping_sub(x0 ^ rk[0]) ^ rk[1];
            let x2 = y[1].rotate_left(5).wrapping_sub(x1 ^ rk[2]) ^ rk[1];
            let x3 = y[2].rotate_left(3).wrapping_sub(x2 ^ rk[3]) ^ rk[1];
            y = [x0, x1, x2, x3];
        }
        store(block, y);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specification_example() {
        // LEA specification / KISA, LEA-128 example (shared README §2 quotes it).
        let key = [0x0f, 0x1e, 0x2d, 0x3c, 0x4b, 0x5a, 0x69, 0x78, 0x87, 0x96, 0xa5, 0xb4, 0xc3, 0xd2, 0xe1, 0xf0];
        let mut b: [u8; 16] = core::array::from_fn(|i| 0x10 + i as u8);
        let want = [0x9f, 0xc8, 0x4e, 0x35, 0x28, 0xc6, 0xc6, 0x18, 0x55, 0x32, 0xc7, 0xa7, 0x04, 0x64, 0x8b, 0xfd];
        let mut c = Lea128::default();
        c.set_key(&key).unwrap();
        c.encrypt_block(&mut b);
        assert_eq!(b, want);
        c.decrypt_block(&mut b);
        assert_eq!(b, core::array::from_fn::<u8, 16, _>(|i| 0x10 + i as u8));
    }
}
