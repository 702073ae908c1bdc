//! Grain-128AEADv2 (final round): Hell, Johansson, Maximov, Meier, Sönnerup, Yoshida,
//! "Grain-128AEADv2 — A lightweight AEAD stream cipher", NIST LWC finalist specification
//! (2021). 128-bit key, 96-bit nonce, 64-bit tag. State: 128-bit LFSR + 128-bit NFSR +
//! 64-bit accumulator + 64-bit shift register = 48 bytes.
//!
//! v2 differs from v1 (round 2) in the initialization: after 320 clocks with the output fed
//! back, the key is re-introduced during 64 more clocks (k64…k127 into the LFSR, k0…k63 into
//! the NFSR) before the accumulator and register are filled; v1 and v2 KATs differ for every
//! vector.
//!
//! Bit order (as the NIST KATs, shared README §2): every byte of key, nonce, AD, message and
//! output is consumed **LSB first**. Pre-output bits alternate: even ones are keystream, odd
//! ones feed the authentication register. The authenticated string is DER(|AD|) ‖ AD ‖ M ‖ 1.
//!
//! Implementation: the registers are `u128` with bit i = s_i / b_i, clocked up to 32 steps at a
//! time = two message bytes (every tap lies at index ≤ 96, so 32 steps need no bit that is not
//! yet computed).
//! Constant time: only shifts, xor and and; the accumulator update uses a mask instead of a
//! branch on message bits; the tag is compared without early exit.
use lwcbench_core::{check_len, iv_err, key_err, Aead, BitOrder, CipherError, CipherInfo, Family, Language, Origin};
use zeroize::{Zeroize, ZeroizeOnDrop};

/// Metadata of this Grain-128AEADv2 implementation.
pub const INFO: CipherInfo = CipherInfo {
    name: "Grain-128AEADv2",
    implementation: "rust-ref",
    family: Family::Aead,
    key_bits: 128,
    iv_bits: 96,
    block_bits: 8,
    tag_bits: 64,
    state_bytes: 48,
    origin: Origin::Own,
    language: Language::Rust,
    bit_order: BitOrder::LsbFirst,
    bit_granular: false,
    note: "final-round v2",
};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Op {
    AuthOnly,
    Encrypt,
    Decrypt,
}

/// Bits 0, 2, 4, … of `x` packed into bits 0…15 (unshuffle by masks, no branches).
#[inline(always)]
fn even_bits(x: u32) -> u32 {
    let mut x = x & 0x5555_5555;
    x = (x | (x >> 1)) & 0x3333_3333;
    x = (x | (x >> 2)) & 0x0f0f_0f0f;
    x = (x | (x >> 4)) & 0x00ff_00ff;
    (x | (x >> 8)) & 0x0000_ffff
}

#[derive(Zeroize, ZeroizeOnDrop)]
struct State {
    s: u128, // LFSR
    b: u128, // NFSR
    acc: u64,
    reg: u64,
}

/// Bits i+k for i = 0..31 of a register.
#[inline(always)]
fn t(r: u128, k: u32) -> u32 {
    (r >> k) as u32
}

impl State {
    /// Clock `n` ≤ 32 steps; returns the n pre-output bits (bit i = y_i). `fb` adds the
    /// output into both feedbacks (initialization); `kl`/`kn` are extra bits for the LFSR and
    /// NFSR feedback (key re-introduction).
    #[inline(always)]
    fn clock(&mut self, n: u32, fb: bool, kl: u32, kn: u32) -> u32 {
        let (s, b) = (self.s, self.b);
        let f = t(s, 0) ^ t(s, 7) ^ t(s, 38) ^ t(s, 70) ^ t(s, 81) ^ t(s, 96);
        let g = t(b, 0)
            ^ t(b, 26)
            ^ t(b, 56)
            ^ t(b, 91)
            ^ t(b, 96)
            ^ (t(b, 3) & t(b, 67))
            ^ (t(b, 11) & t(b, 13))
            ^ (t(b, 17) & t(b, 18))
            ^ (t(b, 27) & t(b, 59))
            ^ (t(b, 40) & t(b, 48))
            ^ (t(b, 61) & t(b, 65))
            ^ (t(b, 68) & t(b, 84))
            ^ (t(b, 22) & t(b, 24) & t(b, 25))
            ^ (t(b, 70) & t(b, 78) & t(b, 82))
            ^ (t(b, 88) & t(b, 92) & t(b, 93) & t(b, 95));
        let (x0, x1, x2, x3, x4) = (t(b, 12), t(s, 8), t(s, 13), t(s, 20), t(b, 95));
        let (x5, x6, x7, x8) = (t(s, 42), t(s, 60), t(s, 79), t(s, 94));
        let h = (x0 & x1) ^ (x2 & x3) ^ (x4 & x5) ^ (x6 & x7) ^ (x0 & x4 & x8);
        let y = h ^ t(s, 93) ^ t(b, 2) ^ t(b, 15) ^ t(b, 36) ^ t(b, 45) ^ t(b, 64) ^ t(b, 73) ^ t(b, 89);
        let mask = if n == 32 { u32::MAX } else { (1u32 << n) - 1 };
        let yf = if fb { y } else { 0 };
        let nl = (f ^ yf ^ kl) & mask;
        let nn = (t(s, 0) ^ g ^ yf ^ kn) & mask;
        self.s = (s >> n) | (u128::from(nl) << (128 - n));
        self.b = (b >> n) | (u128::from(nn) << (128 - n));
        y & mask
    }

    fn new(key: &[u8; 16], nonce: &[u8]) -> State {
        let mut iv = [0u8; 16];
        iv[..12].copy_from_slice(nonce);
        let k = u128::from_le_bytes(*key);
        let mut st = State { b: k, s: u128::from_le_bytes(iv) | (0x7fff_ffffu128 << 96), acc: 0, reg: 0 };
        for _ in 0..10 {
            st.clock(32, true, 0, 0); // 320 clocks, output fed back
        }
        for i in 0..2 {
            // v2: 64 clocks re-introducing the key
            st.clock(32, true, (k >> (64 + 32 * i)) as u32, (k >> (32 * i)) as u32);
        }
        let a = u64::from(st.clock(32, false, 0, 0)) | u64::from(st.clock(32, false, 0, 0)) << 32;
        let r = u64::from(st.clock(32, false, 0, 0)) | u64::from(st.clock(32, false, 0, 0)) << 32;
        st.acc = a;
        st.reg = r;
        st
    }

    /// Authenticate `m` (LSB first) with the authentication bits `au`, `n` bits.
    #[inline(always)]
    fn auth(&mut self, m: u32, au: u32, n: u32) {
        for i in 0..n {
            let bit = u64::from((m >> i) & 1);
            self.acc ^= self.reg & bit.wrapping_neg();
            self.reg = (self.reg >> 1) | (u64::from((au >> i) & 1) << 63);
        }
    }

    /// Run `data` through the cipher two bytes (32 pre-output bits) at a time: even bits are
    /// keystream, odd bits authentication bits. `op` chooses what happens to the bytes.
    fn process(&mut self, data: &mut [u8], op: Op) {
        for chunk in data.chunks_mut(2) {
            let n = 8 * chunk.len() as u32;
            let y = self.clock(2 * n, false, 0, 0);
            let (ks, au) = (even_bits(y), even_bits(y >> 1));
            let mut d = [0u8; 2];
            d[..chunk.len()].copy_from_slice(chunk);
            let x = u32::from(u16::from_le_bytes(d));
            let m = match op {
                Op::Encrypt | Op::AuthOnly => x,
                Op::Decrypt => x ^ ks,
            };
            self.auth(m, au, n);
            if op != Op::AuthOnly {
                let out = ((x ^ ks) as u16).to_le_bytes();
                chunk.copy_from_slice(&out[..chunk.len()]);
            }
        }
    }

    fn absorb_ad(&mut self, ad: &[u8]) {
        // DER encoding of the AD length in bytes
        let len = ad.len() as u64;
        let mut der = [0u8; 9];
        let der = if len < 128 {
            der[0] = len as u8;
            &der[..1]
        } else {
            let nb = 8 - (len.leading_zeros() / 8) as usize;
            der[0] = 0x80 | nb as u8;
            der[1..=nb].copy_from_slice(&len.to_be_bytes()[8 - nb..]);
            &der[..=nb]
        };
        let mut d = [0u8; 9];
        d[..der.len()].copy_from_slice(der);
        self.process(&mut d[..der.len()], Op::AuthOnly);
        // AD is only read: authenticate it in 32-byte pieces copied to the stack
        for a in ad.chunks(32) {
            let mut tmp = [0u8; 32];
            tmp[..a.len()].copy_from_slice(a);
            self.process(&mut tmp[..a.len()], Op::AuthOnly);
        }
    }

    fn tag(&mut self) -> [u8; 8] {
        self.acc ^= self.reg; // the final padding bit 1
        self.acc.to_le_bytes()
    }
}

#[derive(Default, Zeroize, ZeroizeOnDrop)]
/// The Grain-128AEADv2 AEAD; create it with `Default`, then set a key.
pub struct Grain128AeadV2 {
    key: [u8; 16],
    keyed: bool,
}

impl Grain128AeadV2 {
    fn start(&self, nonce: &[u8], ad: &[u8], tag_len: usize) -> Result<State, CipherError> {
        if !self.keyed {
            return Err(CipherError::NotInitialized);
        }
        check_len(nonce.len(), 12, iv_err)?;
        check_len(tag_len, 8, |e, g| CipherError::TagLength { expected: e, got: g })?;
        let mut st = State::new(&self.key, nonce);
        st.absorb_ad(ad);
        Ok(st)
    }
}

impl Aead for Grain128AeadV2 {
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
        let mut st = self.start(nonce, ad, tag.len())?;
        st.process(buf, Op::Encrypt);
        tag.copy_from_slice(&st.tag());
        Ok(())
    }
    fn decrypt(&mut self, nonce: &[u8], ad: &[u8], buf: &mut [u8], tag: &[u8]) -> Result<(), CipherError> {
        let mut st = self.start(nonce, ad, tag.len())?;
        st.process(buf, Op::Decrypt);
        crate::check_tag(&st.tag(), tag, buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn even_bits_by_hand() {
        assert_eq!(even_bits(0b0101), 0b11);
        assert_eq!(even_bits(0b1010), 0);
        assert_eq!(even_bits(0x8000_0001), 1);
        assert_eq!(even_bits(0x4000_0000), 1 << 15);
    }

    #[test]
    fn first_kat_vector_is_v2() {
        // First vector (empty PT/AD) of the designers' files, quoted in the shared README
        // §1.4: v2 D51FD5D16177B434, v1 F879CF00B4AFA099.
        let key: [u8; 16] = core::array::from_fn(|i| i as u8);
        let nonce: [u8; 12] = core::array::from_fn(|i| i as u8);
        let mut c = Grain128AeadV2::default();
        c.set_key(&key).unwrap();
        let mut tag = [0u8; 8];
        c.encrypt(&nonce, &[], &mut [], &mut tag).unwrap();
        assert_eq!(tag, [0xD5, 0x1F, 0xD5, 0xD1, 0x61, 0x77, 0xB4, 0x34]);
    }
}
