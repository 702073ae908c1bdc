//! Every provisional choice of this DRACO reconstruction, in one place.
//!
//! Source: `shared/specs/draco.md`, sections P1, P2 and P3. The designers' paper (ToSC 2022(2))
//! was not reachable, so these parts are this project's own choices. When the published
//! definition is available, only this module (and the tests that hand-compute values from it)
//! should need to change; the output and feedback functions live elsewhere and are not
//! provisional.
//!
//! Every implementation (reference, fast, bit-sliced, C++) reads these constants instead of
//! repeating them, and runs its initialization through [`run_init`].

use lwcbench_core::BitOrder;

/// Shown wherever the cipher is listed.
pub const NOTE: &str = "DRACO (provisional reconstruction, not interoperable with the published cipher)";

// ---------------------------------------------------------------------------------------------
// P3 — bit order
// ---------------------------------------------------------------------------------------------

/// P3: key, IV and keystream bytes are read/written most-significant bit first.
pub const BIT_ORDER: BitOrder = BitOrder::MsbFirst;

/// P3: bit `i` (0-based) of a byte string: bit `7 - i % 8` of byte `i / 8`.
#[inline]
pub const fn bit_of(bytes: &[u8], i: usize) -> u8 {
    (bytes[i / 8] >> (7 - i % 8)) & 1
}

/// P3: set bit `i` of a packed keystream (the buffer must start zeroed).
#[inline]
pub fn put_bit(out: &mut [u8], i: usize, v: u8) {
    out[i / 8] |= (v & 1) << (7 - i % 8);
}

// ---------------------------------------------------------------------------------------------
// P1 — selection of the non-volatile bit
// ---------------------------------------------------------------------------------------------

/// P1: the selection index is `j = Σ_k 2^k · s_{SELECT_TAPS[k]}` (s2 is the least significant
/// bit of j, s30 the most significant).
pub const SELECT_TAPS: [usize; 7] = [2, 6, 11, 17, 21, 25, 30];

/// P1: the non-volatile state is `N = n0 … n127 = iv0 … iv95 ‖ k0 … k31`; this is how many
/// leading key bits it holds.
pub const NV_KEY_BITS: usize = 32;

/// P1: bit `n_j` of the non-volatile state, from the key and IV bytes (P3 bit order).
#[inline]
pub const fn nv_bit(key: &[u8; 16], iv: &[u8; 12], j: usize) -> u8 {
    if j < 96 {
        bit_of(iv, j)
    } else {
        bit_of(key, j - 96)
    }
}

/// P1: the selection index from the 33 S bits (one bit per byte, `s[i]` = s_i).
#[inline]
pub fn select_index(s: &[u8; 33]) -> usize {
    let mut j = 0usize;
    for (k, &tap) in SELECT_TAPS.iter().enumerate() {
        j |= ((s[tap] & 1) as usize) << k;
    }
    j
}

// ---------------------------------------------------------------------------------------------
// P2 — initialization
// ---------------------------------------------------------------------------------------------

/// P2 step 1: `b_i = k_{B_KEY_OFFSET + i}` for i = 0 … 94.
pub const B_KEY_OFFSET: usize = 0;
/// P2 step 1: `s_i = k_{S_KEY_OFFSET + i}` for i = 0 … 32.
pub const S_KEY_OFFSET: usize = 95;
/// P2 step 2: mixing clocks, keystream bit fed back into both registers.
pub const MIX_CLOCKS: usize = 128;
/// P2 step 3: whether the key is added to the state again after mixing.
pub const READD_KEY: bool = true;
/// P2 step 4: diffusion clocks, plain keystream clocks with the output discarded.
pub const DIFFUSION_CLOCKS: usize = 128;
/// Total clocks before the first keystream bit.
pub const INIT_CLOCKS: usize = MIX_CLOCKS + DIFFUSION_CLOCKS;

/// Key bit that initially fills (and is re-added to) b_i.
#[inline]
pub const fn b_key_bit(key: &[u8; 16], i: usize) -> u8 {
    bit_of(key, B_KEY_OFFSET + i)
}
/// Key bit that initially fills (and is re-added to) s_i.
#[inline]
pub const fn s_key_bit(key: &[u8; 16], i: usize) -> u8 {
    bit_of(key, S_KEY_OFFSET + i)
}

/// The state operations an implementation provides so that [`run_init`] can drive it.
/// The implementation must use [`b_key_bit`] / [`s_key_bit`] for loading and re-adding the key
/// and [`nv_bit`] / [`SELECT_TAPS`] for the non-volatile state.
pub trait InitOps {
    /// P2 step 1: registers := key bits (the non-volatile state must already be set).
    fn load_key(&mut self);
    /// One clock with the output bit added to both new register bits.
    fn mix_clock(&mut self);
    /// P2 step 3: registers ^= key bits.
    fn readd_key(&mut self);
    /// `n` plain keystream clocks with the output discarded.
    fn diffusion_clocks(&mut self, n: usize);
}

/// P2: the whole initialization sequence.
pub fn run_init<T: InitOps + ?Sized>(st: &mut T) {
    st.load_key();
    for _ in 0..MIX_CLOCKS {
        st.mix_clock();
    }
    if READD_KEY {
        st.readd_key();
    }
    st.diffusion_clocks(DIFFUSION_CLOCKS);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn p3_bit_order_by_hand() {
        // 0x80 = 1000_0000: bit 0 is the MSB. 0x01 in the second byte is bit 15.
        let b = [0x80u8, 0x01];
        assert_eq!(bit_of(&b, 0), 1);
        assert_eq!((1..15).map(|i| bit_of(&b, i)).sum::<u8>(), 0);
        assert_eq!(bit_of(&b, 15), 1);
        let mut out = [0u8; 2];
        put_bit(&mut out, 0, 1);
        put_bit(&mut out, 9, 1);
        assert_eq!(out, [0x80, 0x40]);
    }

    #[test]
    fn p1_nonvolatile_layout_by_hand() {
        // IV bit 95 is the last bit of iv[11]; n96 is key bit 0 (MSB of key[0]).
        let mut key = [0u8; 16];
        let mut iv = [0u8; 12];
        iv[11] = 0x01;
        key[0] = 0x80;
        key[4] = 0x80; // key bit 32: not part of N
        assert_eq!(nv_bit(&key, &iv, 95), 1);
        assert_eq!(nv_bit(&key, &iv, 96), 1);
        let ones: u32 = (0..128).map(|j| nv_bit(&key, &iv, j) as u32).sum();
        assert_eq!(ones, 2);
    }

    #[test]
    fn p1_select_index_by_hand() {
        let mut s = [0u8; 33];
        assert_eq!(select_index(&s), 0);
        // s2 -> 1, s30 -> 64: j = 65
        s[2] = 1;
        s[30] = 1;
        assert_eq!(select_index(&s), 65);
        // every selecting tap set: 127; non-selecting taps change nothing
        for t in SELECT_TAPS {
            s[t] = 1;
        }
        s[0] = 1;
        s[32] = 1;
        assert_eq!(select_index(&s), 127);
        // s17 alone -> 8
        let mut s = [0u8; 33];
        s[17] = 1;
        assert_eq!(select_index(&s), 8);
    }
}
