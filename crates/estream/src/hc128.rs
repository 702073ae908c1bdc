//! HC-128 (Hongjun Wu, "The Stream Cipher HC-128", eSTREAM portfolio specification, 2008),
//! 128-bit key, 128-bit IV.
//!
//! **Not constant-time by design**: the output filters h1/h2 index the tables P and Q with
//! bytes of secret state (secret-indexed table lookups), so cache-timing leakage is
//! inherent to the algorithm on CPUs with data caches. The implementation adds no
//! secret-dependent branches of its own.
//!
//! Byte convention (eSTREAM reference, shared README §2): key and IV are four little-endian
//! 32-bit words; keystream words are output little-endian.
use lwcbench_core::{check_len, iv_err, key_err, BitOrder, CipherError, CipherInfo, Family, Language, Origin};
use zeroize::{Zeroize, ZeroizeOnDrop};

use crate::{BitBuf, Words};

/// Metadata of this HC-128 implementation.
pub const INFO: CipherInfo = CipherInfo {
    name: "HC-128",
    implementation: "rust",
    family: Family::Stream,
    key_bits: 128,
    iv_bits: 128,
    block_bits: 0,
    tag_bits: 0,
    state_bytes: 4096, // tables P and Q, 2 × 512 × 32 bits
    origin: Origin::Own,
    language: Language::Rust,
    bit_order: BitOrder::LsbFirst,
    bit_granular: false,
    note: "secret-indexed table lookups (not constant-time by design)",
};

#[derive(Clone, Zeroize)]
pub(crate) struct Core {
    p: [u32; 512],
    q: [u32; 512],
    /// Step counter i mod 1024.
    i: usize,
}

impl Default for Core {
    fn default() -> Self {
        Core { p: [0; 512], q: [0; 512], i: 0 }
    }
}

#[inline(always)]
fn f1(x: u32) -> u32 {
    x.rotate_right(7) ^ x.rotate_right(18) ^ (x >> 3)
}
#[inline(always)]
fn f2(x: u32) -> u32 {
    x.rotate_right(17) ^ x.rotate_right(19) ^ (x >> 10)
}

impl Core {
    #[inline(always)]
    fn g1(x: u32, y: u32, z: u32) -> u32 {
        (x.rotate_right(10) ^ z.rotate_right(23)).wrapping_add(y.rotate_right(8))
    }
    #[inline(always)]
    fn g2(x: u32, y: u32, z: u32) -> u32 {
        (x.rotate_left(10) ^ z.rotate_left(23)).wrapping_add(y.rotate_left(8))
    }
    /// h1 looks up Q, h2 looks up P (bytes 0 and 2 of x).
    #[inline(always)]
    fn h(t: &[u32; 512], x: u32) -> u32 {
        t[(x & 0xff) as usize].wrapping_add(t[256 + ((x >> 16) & 0xff) as usize])
    }

    /// One step of the keystream generator: updates P[j] or Q[j], returns s_i.
    #[inline(always)]
    fn step(&mut self) -> u32 {
        let j = self.i & 511;
        let s = if self.i < 512 {
            let p = &mut self.p;
            p[j] = p[j].wrapping_add(Self::g1(p[(j + 509) & 511], p[(j + 502) & 511], p[(j + 1) & 511]));
            Self::h(&self.q, self.p[(j + 500) & 511]) ^ self.p[j]
        } else {
            let q = &mut self.q;
            q[j] = q[j].wrapping_add(Self::g2(q[(j + 509) & 511], q[(j + 502) & 511], q[(j + 1) & 511]));
            Self::h(&self.p, self.q[(j + 500) & 511]) ^ self.q[j]
        };
        self.i = (self.i + 1) & 1023;
        s
    }

    fn load(&mut self, key: &[u8], iv: &[u8]) {
        let mut w = [0u32; 1280];
        for i in 0..4 {
            let k = u32::from_le_bytes(key[4 * i..4 * i + 4].try_into().expect("4 bytes"));
            let v = u32::from_le_bytes(iv[4 * i..4 * i + 4].try_into().expect("4 bytes"));
            w[i] = k;
            w[i + 4] = k;
            w[i + 8] = v;
            w[i + 12] = v;
        }
        for i in 16..1280 {
            w[i] = f2(w[i - 2])
                .wrapping_add(w[i - 7])
                .wrapping_add(f1(w[i - 15]))
                .wrapping_add(w[i - 16])
                .wrapping_add(i as u32);
        }
        self.p.copy_from_slice(&w[256..768]);
        self.q.copy_from_slice(&w[768..1280]);
        w.zeroize();
        // 1024 steps whose output replaces the updated table entry.
        for j in 0..512 {
            let p = &mut self.p;
            p[j] = p[j].wrapping_add(Self::g1(p[(j + 509) & 511], p[(j + 502) & 511], p[(j + 1) & 511]));
            let x = p[(j + 500) & 511];
            p[j] ^= Self::h(&self.q, x);
        }
        for j in 0..512 {
            let q = &mut self.q;
            q[j] = q[j].wrapping_add(Self::g2(q[(j + 509) & 511], q[(j + 502) & 511], q[(j + 1) & 511]));
            let x = q[(j + 500) & 511];
            q[j] ^= Self::h(&self.p, x);
        }
        self.i = 0;
    }
}

impl Words for Core {
    #[inline(always)]
    fn next_word(&mut self) -> u64 {
        let a = self.step() as u64;
        let b = self.step() as u64;
        a | (b << 32)
    }
}

/// HC-128; keystream advances by whole bytes. Zeroized on drop.
#[derive(Clone, Default, Zeroize, ZeroizeOnDrop)]
pub struct Hc128 {
    core: Core,
    bb: BitBuf,
    ready: bool,
}

impl Hc128 {
    fn setup(&mut self, key: &[u8], iv: &[u8]) -> Result<(), CipherError> {
        check_len(key.len(), 16, key_err)?;
        check_len(iv.len(), 16, iv_err)?;
        self.core.load(key, iv);
        Ok(())
    }
}

stream_impl!(Hc128, INFO, true);

#[cfg(test)]
mod tests {
    use super::*;
    use lwcbench_core::StreamCipher;

    #[test]
    fn estream_set1_vector0_by_hand() {
        // ECRYPT HC-128 verified test vectors, Set 1, vector# 0 (first 16 bytes).
        let mut key = [0u8; 16];
        key[0] = 0x80;
        let mut c = Hc128::default();
        let mut ks = [0u8; 16];
        c.init(&key, &[0; 16]).unwrap();
        c.keystream(&mut ks).unwrap();
        assert_eq!(
            ks,
            [0x37, 0x86, 0x02, 0xB9, 0x8F, 0x32, 0xA7, 0x48, 0x47, 0x51, 0x56, 0x54, 0xAE, 0x0D, 0xE7, 0xED]
        );
    }
}
