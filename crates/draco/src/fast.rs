//! Fast single-stream DRACO ("rust-fast"): state in machine words, 64 clocks per step.
//!
//! Same cipher as [`crate::reference`] (spec `shared/specs/draco.md`), reformulated:
//!
//! * The registers are windows onto two bit sequences: b_i at time t is x_{t+i}, s_i is
//!   y_{t+i}. `x` holds x_t … x_{t+158} (three u64), `y` holds y_t … y_{t+96} (a u128), bit k of
//!   the word = element t+k, so the taps of 64 consecutive clocks are one shifted word.
//! * S is autonomous. Its feedback without s30 and the all-zero term reads taps ≤ 25
//!   ([`boolfn::f_core`]), so 8 new S bits come from one word evaluation; the s30 term (distance
//!   3) and the all-zero term are then resolved serially in 8 cheap steps.
//! * P1 selection depends only on S: 64 selections at once through a 127-mux tree whose first
//!   level is precomputed from N (constant-time, no lane-dependent table lookup).
//! * B's feedback reads its newest bit (b94), so it is serial; the terms with taps ≤ 31 are
//!   evaluated for all 64 clocks at once, those with taps ≤ 87 for 8 clocks at once, and only
//!   b89 + b94 + b86 b90 b91 b93 run bit by bit, on single-bit values held in registers.
//! * z reads b taps ≤ 92 and s taps ≤ 29, so once the 64 new B bits exist, 64 outputs come
//!   from one evaluation of [`boolfn::z`] on shifted words.
//!
//! Initialization (P2) runs its 128 mixing clocks one at a time (z is fed back, so nothing can
//! be batched) and its 128 diffusion clocks as two 64-clock steps.

use lwcbench_core::{bits, CipherError, CipherInfo, StreamCipher};
use zeroize::{Zeroize, ZeroizeOnDrop};

use crate::boolfn;
use crate::provisional::{self as p, InitOps, SELECT_TAPS};
use crate::reference::{key_iv, INFO};

/// Fast single-stream DRACO. Implementation name "rust-fast".
#[derive(Clone, Zeroize, ZeroizeOnDrop)]
pub struct DracoFast {
    /// B sequence window: bit k (of the 192-bit little-endian number) = x_{t+k}; 0 … 94 valid
    /// between steps, higher bits zero.
    x: [u64; 3],
    /// S sequence window: bit k = y_{t+k}; 0 … 32 valid between steps, higher bits zero.
    y: u128,
    /// Non-volatile state, bit j = n_j.
    nv: u128,
    /// First mux level of the P1 selection: lane value = sel_a[k] ^ (sel_d[k] & s2-lanes).
    sel_a: [u64; 64],
    sel_d: [u64; 64],
    key: [u8; 16],
    /// Pending keystream bits, the next one in bit 63; bits below `avail` are zero.
    buf: u64,
    avail: u32,
    /// True when `y` holds 97 valid bits (the S sequence of the next 64 clocks), false when
    /// only the 33 register bits are valid (after loading or bit-serial clocks).
    primed: bool,
    ready: bool,
}

impl Default for DracoFast {
    fn default() -> Self {
        DracoFast {
            x: [0; 3],
            y: 0,
            nv: 0,
            sel_a: [0; 64],
            sel_d: [0; 64],
            key: [0; 16],
            buf: 0,
            avail: 0,
            primed: false,
            ready: false,
        }
    }
}

/// 64 bits of the B window starting at bit `i` (i ≤ 128).
#[inline(always)]
fn win(x: &[u64; 3], i: usize) -> u64 {
    let (w, sh) = (i / 64, i % 64);
    if sh == 0 {
        x[w]
    } else {
        (x[w] >> sh) | (x[w + 1] << (64 - sh))
    }
}

/// OR the low 8 bits of `v` into the window at bit position `pos`.
#[inline(always)]
fn or_byte(x: &mut [u64; 3], pos: usize, v: u64) {
    let (w, sh) = (pos / 64, pos % 64);
    x[w] |= v << sh;
    if sh > 56 {
        x[w + 1] |= v >> (64 - sh);
    }
}

/// 8 new S bits y_{t+33} … y_{t+40} from `w` (bit i = y_{t+i}, bits 0 … 32 valid, rest zero).
///
/// n_d = f_core_d + s30_d + Z_d, where s30_d = y_{t+d+30} is an existing bit for d < 3 and
/// n_{d-3} otherwise, and Z_d (the all-zero term) is 1 iff y_{t+d+1} … y_{t+d+32} are all zero.
/// Z is resolved exactly and branch-free: it can fire at most at two consecutive clocks d1,
/// d1+1 in a group (when s1 … s32 = 0: if s0 = 0 the new bit is 1 and stays in the register for
/// 32 clocks; if s0 = 1 the new bit is 0, the register becomes all-zero and fires once more).
#[inline(always)]
fn s_step8(w: u64) -> u64 {
    // f_core for lanes d = 0..7, plus the s30 taps that are existing bits (d < 3)
    let r = (boolfn::f_core(|i| w >> i) ^ ((w >> 30) & 0b111)) & 0xFF;
    // the s30 chain n_d ^= n_{d-3}: prefix sum with stride 3 over 8 lanes
    let pre3 = |v: u64| (v ^ (v << 3) ^ (v << 6)) & 0xFF;
    let n_lin = pre3(r);
    // Z_d = 1 iff y_{t+d+1} … y_{t+d+32} are all zero: the existing bits d+1 … 32 of w
    // (true exactly for d >= h, h = bit length of u) and the new bits n_0 … n_{d-1}.
    let u = (w >> 1) & 0xFFFF_FFFF;
    let h = 64 - u.leading_zeros();
    // The first firing is therefore at lane h (if h < 8) provided n_lin has no one below h
    // (n_lin is exact up to the first firing).
    let m = (1u64 << h) & 0xFF;
    let first = m & (((n_lin & m.wrapping_sub(1)) == 0) as u64).wrapping_neg();
    // A second firing follows iff the first produced a 0, i.e. iff n_lin was 1 there.
    let second = (first & n_lin) << 1 & 0xFF;
    // Both flips propagate along the s30 chain (f_core reads no new bit within a group).
    n_lin ^ pre3(first ^ second)
}

/// S group K of a 64-clock step: y_{t+33+8K} … y_{t+40+8K}.
#[inline(always)]
fn s_group<const K: usize>(y: &mut u128) {
    let n8 = s_step8((*y >> (8 * K)) as u64);
    *y |= (n8 as u128) << (33 + 8 * K);
}

/// B group K of a 64-clock step: x_{t+95+8K} … x_{t+102+8K}. `acc` holds the g terms with
/// taps ≤ 79 plus s0 + c for (at least) these 8 clocks; `h` the 9 newest B bits as 0/1 values.
#[inline(always)]
fn b_group<const K: usize>(x: &mut [u64; 3], h: &mut [u64; 9], acc: u64) {
    let lo = win(x, 8 * K);
    let hi = win(x, 8 * K + 64);
    let v = (lo as u128) | ((hi as u128) << 64);
    let pre = (acc >> (8 * K)) ^ boolfn::g_mid8(|i| (v >> i) as u64);
    let mut vv = [0u64; 17];
    vv[..9].copy_from_slice(h);
    for d in 0..8 {
        // vv[i] = x_{t+8K+86+i}: taps 86, 89, 90, 91, 93, 94 of clock t+8K+d
        vv[9 + d] = ((pre >> d) & 1) ^ vv[d + 3] ^ vv[d + 8] ^ (vv[d] & vv[d + 4] & vv[d + 5] & vv[d + 7]);
    }
    let mut n8 = 0u64;
    for d in 0..8 {
        n8 |= vv[9 + d] << d;
    }
    or_byte(x, 95 + 8 * K, n8);
    h.copy_from_slice(&vv[8..17]);
}

impl DracoFast {
    /// An instance without key; `init` it before use.
    pub fn new() -> Self {
        Self::default()
    }

    /// An instance initialised with this key and IV.
    pub fn with_key_iv(key: &[u8; 16], iv: &[u8; 12]) -> Self {
        let mut c = Self::default();
        c.setup(key, iv);
        c
    }

    fn setup(&mut self, key: &[u8; 16], iv: &[u8; 12]) {
        self.key = *key;
        self.nv = 0;
        for j in 0..128 {
            self.nv |= (p::nv_bit(key, iv, j) as u128) << j;
        }
        self.set_select_masks();
        self.buf = 0;
        self.avail = 0;
        p::run_init(self);
        self.ready = true;
    }

    /// Start from arbitrary registers and non-volatile state (one value 0/1 per byte, as in
    /// [`crate::reference`]), skipping P2. For cross-checks on hand-picked states.
    pub fn from_registers(b: &[u8; 95], s: &[u8; 33], n: &[u8; 128]) -> Self {
        let mut c = Self::default();
        let mut bw = 0u128;
        for (i, &v) in b.iter().enumerate() {
            bw |= ((v & 1) as u128) << i;
        }
        c.x = [bw as u64, (bw >> 64) as u64, 0];
        for (i, &v) in s.iter().enumerate() {
            c.y |= ((v & 1) as u128) << i;
        }
        for (j, &v) in n.iter().enumerate() {
            c.nv |= ((v & 1) as u128) << j;
        }
        c.set_select_masks();
        c.ready = true;
        c
    }

    fn set_select_masks(&mut self) {
        for k in 0..64 {
            let n0 = ((self.nv >> (2 * k)) & 1) as u64;
            let n1 = ((self.nv >> (2 * k + 1)) & 1) as u64;
            self.sel_a[k] = n0.wrapping_neg();
            self.sel_d[k] = (n0 ^ n1).wrapping_neg();
        }
    }

    /// One clock on the registers, bit by bit (used for the P2 mixing clocks). Returns z.
    fn slow_clock(&mut self, mix: u64) -> u64 {
        let b = (self.x[0] as u128) | ((self.x[1] as u128) << 64);
        let s = self.y as u64;
        let bb = |i: usize| (b >> i) as u64 & 1;
        let ss = |i: usize| (s >> i) & 1;
        let z = boolfn::z(bb, ss);
        let mut j = 0u32;
        for (k, &t) in SELECT_TAPS.iter().enumerate() {
            j |= (ss(t) as u32) << k;
        }
        let c = (self.nv >> j) as u64 & 1; // u128 shift: shrd/shr + cmov, no table lookup
        let zero = (((s >> 1) & 0xFFFF_FFFF) == 0) as u64;
        let new_b = boolfn::g(bb) ^ ss(0) ^ c ^ (mix & z);
        let new_s = (boolfn::f_core(ss) ^ ss(30) ^ zero ^ (mix & z)) & 1;
        let b = (b >> 1) | ((new_b as u128) << 94);
        self.x = [b as u64, (b >> 64) as u64, 0];
        self.y = (((s >> 1) & 0xFFFF_FFFF) | (new_s << 32)) as u128;
        self.primed = false;
        z
    }

    /// S bits y_{t+33} … y_{t+96} (the S sequence of the next 64 clocks), if not yet there.
    #[inline]
    fn prime(&mut self) {
        if !self.primed {
            let mut y = self.y & ((1u128 << 33) - 1);
            s_group::<0>(&mut y);
            s_group::<1>(&mut y);
            s_group::<2>(&mut y);
            s_group::<3>(&mut y);
            s_group::<4>(&mut y);
            s_group::<5>(&mut y);
            s_group::<6>(&mut y);
            s_group::<7>(&mut y);
            self.y = y;
            self.primed = true;
        }
    }

    /// 64 clocks. Returns z_t … z_{t+63} with z_{t+d} in bit d.
    ///
    /// The S sequence of these 64 clocks was computed by the previous step (or [`prime`]);
    /// this step computes the next 64 S bits, interleaved with the B groups: both are serial
    /// chains of 8 groups, independent of each other, so the CPU overlaps them.
    #[inline]
    fn step64(&mut self) -> u64 {
        self.prime();
        let y = self.y; // y_t … y_{t+96}
        let sy = |i: usize| (y >> i) as u64;
        let mut yn = y >> 64; // y_{t+64} … y_{t+96}, extended below to y_{t+160}

        // 1. P1 selection for the 64 clocks, and the S contribution s0 + c to each new b94.
        let sel: [u64; 7] = core::array::from_fn(|k| sy(SELECT_TAPS[k]));
        let (a, d) = (&self.sel_a, &self.sel_d);
        let c = boolfn::select_pairs(|k| a[k] ^ (d[k] & sel[0]), &sel);

        // 2. B: 64 new bits x_{t+95} … x_{t+158}; next step's S bits in between.
        let mut x = self.x;
        // Terms of g are evaluated as early as their taps exist: taps <= 31 for all 64 clocks,
        // taps <= 63 for 32 clocks, <= 79 for 16, <= 87 for 8, the rest serially.
        let m32 = |x: &[u64; 3], o: usize| boolfn::g_mid32(|i| win(x, o + i)) & 0xFFFF_FFFF;
        let m16 = |x: &[u64; 3], o: usize| boolfn::g_mid16(|i| win(x, o + i)) & 0xFFFF;
        let mut acc = boolfn::g_low(|i| win(&x, i)) ^ sy(0) ^ c ^ m32(&x, 0) ^ m16(&x, 0);
        // h[i] = x_{t+8k+86+i} as 0/1, carried from one group of 8 to the next
        let mut h: [u64; 9] = core::array::from_fn(|i| (x[1] >> (86 - 64 + i)) & 1);
        b_group::<0>(&mut x, &mut h, acc);
        s_group::<0>(&mut yn);
        b_group::<1>(&mut x, &mut h, acc);
        s_group::<1>(&mut yn);
        acc ^= m16(&x, 16) << 16;
        b_group::<2>(&mut x, &mut h, acc);
        s_group::<2>(&mut yn);
        b_group::<3>(&mut x, &mut h, acc);
        s_group::<3>(&mut yn);
        acc ^= (m32(&x, 32) ^ m16(&x, 32)) << 32;
        b_group::<4>(&mut x, &mut h, acc);
        s_group::<4>(&mut yn);
        b_group::<5>(&mut x, &mut h, acc);
        s_group::<5>(&mut yn);
        acc ^= m16(&x, 48) << 48;
        b_group::<6>(&mut x, &mut h, acc);
        s_group::<6>(&mut yn);
        b_group::<7>(&mut x, &mut h, acc);
        s_group::<7>(&mut yn);

        // 3. 64 outputs.
        let z = boolfn::z(|i| win(&x, i), sy);

        // 4. advance the windows by 64 clocks
        self.x = [x[1], x[2], 0];
        self.y = yn;
        z
    }

    /// The next `r` (1 … 64) keystream bits, first one in bit 63, lower bits zero.
    #[inline]
    fn take(&mut self, r: u32) -> u64 {
        debug_assert!((1..=64).contains(&r));
        let mask = !0u64 << (64 - r);
        if self.avail >= r {
            let w = self.buf & mask;
            self.buf = self.buf.checked_shl(r).unwrap_or(0);
            self.avail -= r;
            w
        } else {
            let fresh = self.step64().reverse_bits();
            let a = self.avail;
            let w = (self.buf | fresh.checked_shr(a).unwrap_or(0)) & mask;
            let used = r - a;
            self.buf = fresh.checked_shl(used).unwrap_or(0);
            self.avail = 64 - used;
            w
        }
    }
}

impl InitOps for DracoFast {
    fn load_key(&mut self) {
        let mut b = 0u128;
        for i in 0..95 {
            b |= (p::b_key_bit(&self.key, i) as u128) << i;
        }
        let mut s = 0u128;
        for i in 0..33 {
            s |= (p::s_key_bit(&self.key, i) as u128) << i;
        }
        self.x = [b as u64, (b >> 64) as u64, 0];
        self.y = s;
        self.primed = false;
    }
    fn mix_clock(&mut self) {
        self.slow_clock(1);
    }
    fn readd_key(&mut self) {
        for i in 0..95 {
            self.x[i / 64] ^= (p::b_key_bit(&self.key, i) as u64) << (i % 64);
        }
        for i in 0..33 {
            self.y ^= (p::s_key_bit(&self.key, i) as u128) << i;
        }
        self.primed = false;
    }
    fn diffusion_clocks(&mut self, n: usize) {
        for _ in 0..n / 64 {
            self.step64();
        }
        for _ in 0..n % 64 {
            self.slow_clock(0);
        }
    }
}

impl StreamCipher for DracoFast {
    fn info(&self) -> CipherInfo {
        CipherInfo { implementation: "rust-fast", ..INFO }
    }
    fn init(&mut self, key: &[u8], iv: &[u8]) -> Result<(), CipherError> {
        let (mut k, v) = key_iv(key, iv)?;
        self.setup(&k, &v);
        k.zeroize();
        Ok(())
    }
    fn keystream_bits(&mut self, out: &mut [u8], nbits: usize) -> Result<(), CipherError> {
        bits::check_room(out, nbits)?;
        if !self.ready {
            return Err(CipherError::NotInitialized);
        }
        let mut pos = 0usize;
        for chunk in out[..nbits / 64 * 8].chunks_exact_mut(8) {
            chunk.copy_from_slice(&self.take(64).to_be_bytes());
            pos += 64;
        }
        let r = nbits - pos;
        if r > 0 {
            let w = self.take(r as u32).to_be_bytes();
            let nb = bits::bytes_for(r);
            out[pos / 8..pos / 8 + nb].copy_from_slice(&w[..nb]);
        }
        Ok(())
    }
    fn apply_bits(&mut self, data: &mut [u8], nbits: usize) -> Result<(), CipherError> {
        if !self.ready {
            return Err(CipherError::NotInitialized);
        }
        bits::xor_with_keystream(data, nbits, p::BIT_ORDER, |out, n| self.keystream_bits(out, n))
    }
}
