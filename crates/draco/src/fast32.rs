//! Fast single-stream DRACO in 32-bit words ("rust-fast" on 32-bit targets): 32 clocks per step.
//!
//! The same formulation as [`crate::fast`] (read its module doc first), with every word 32 bits
//! wide, for cores without native 64-bit operations (Cortex-M0+/M4, RV32): there each u64
//! shift of the 64-bit variant costs several instructions or a compiler-runtime call.
//! [`crate::DracoFast`] is this type when `target_pointer_width = "32"`; on 64-bit hosts it is
//! always compiled too, so the tests check it there (`tests/fast32.rs`).
//!
//! * `x` holds x_t … x_{t+126} (four u32), `y` holds y_t … y_{t+96}; a step makes 32 new B bits
//!   x_{t+95} … x_{t+126} and 32 new S bits (4 groups of 8, exactly as in the 64-bit variant).
//! * An S group needs 33 consecutive bits (taps ≤ 25 on 8 lanes, s30 on 3, the all-zero test on
//!   s1 … s32), one more than a word: it reads two windows, 8 bits apart.
//! * The all-zero term's "first lane where s1 … s32 are zero" is found by smearing the bits
//!   downwards instead of `leading_zeros` (ARMv6-M and RV32IMC have no count-leading-zeros).

use lwcbench_core::{bits, CipherError, CipherInfo, StreamCipher};
use zeroize::{Zeroize, ZeroizeOnDrop};

use crate::boolfn;
use crate::provisional::{self as p, InitOps, SELECT_TAPS};
use crate::reference::{key_iv, INFO};

/// Fast single-stream DRACO on 32-bit words.
#[derive(Clone, Default, Zeroize, ZeroizeOnDrop)]
pub struct DracoFast32 {
    /// B sequence window: bit k (of the 128-bit little-endian number) = x_{t+k}; 0 … 94 valid
    /// between steps, higher bits zero.
    x: [u32; 4],
    /// S sequence window: bit k = y_{t+k}; 0 … 32 (or 0 … 64 when primed) valid, higher zero.
    y: [u32; 4],
    /// Non-volatile state, bit j = n_j.
    nv: [u32; 4],
    /// First two mux levels of the P1 selection, as the algebraic normal form of the 4 leaves
    /// n_{4g} … n_{4g+3} in (s2, s6): lane value = q[0] + q[1] s2 + q[2] s6 + q[3] s2 s6
    /// (each q a 0 / all-ones mask; adjacent so one LDM fetches them).
    sel: [[u32; 4]; 32],
    key: [u8; 16],
    /// Pending keystream bits, the next one in bit 31; bits below `avail` are zero.
    buf: u32,
    avail: u32,
    /// True when `y` holds 65 valid bits (the S sequence of the next 32 clocks).
    primed: bool,
    ready: bool,
}

/// 32 bits of a window starting at bit `i` (i < 128; bits past 127 read as zero).
#[inline(always)]
fn win(x: &[u32; 4], i: usize) -> u32 {
    let (w, sh) = (i / 32, i % 32);
    if sh == 0 {
        x[w]
    } else if w < 3 {
        (x[w] >> sh) | (x[w + 1] << (32 - sh))
    } else {
        x[w] >> sh
    }
}

/// OR the low 8 bits of `v` into the window at bit position `pos` (pos ≤ 119).
#[inline(always)]
fn or_byte(x: &mut [u32; 4], pos: usize, v: u32) {
    let (w, sh) = (pos / 32, pos % 32);
    x[w] |= v << sh;
    if sh > 24 {
        x[w + 1] |= v >> (32 - sh);
    }
}

/// 8 new S bits from 33 existing ones: `w0` = bits 0 … 31 and `w1` = bits 8 … 39 of the
/// window (bits past 32 zero). Same algorithm as the 64-bit `s_step8`, see there.
#[inline(always)]
fn s_step8(w0: u32, w1: u32) -> u32 {
    let s = |i: usize| if i <= 24 { w0 >> i } else { w1 >> (i - 8) };
    // f_core for lanes 0..7, plus the s30 taps that are existing bits (lanes < 3: bits 30..32)
    let r = (boolfn::f_core(s) ^ (w1 >> 22)) & 0xFF;
    let pre3 = |v: u32| (v ^ (v << 3) ^ (v << 6)) & 0xFF;
    let n_lin = pre3(r);
    // u = bits 1 … 32; lane d has s1 … s32 all zero (among existing bits) iff u >> d == 0.
    let u = (w0 >> 1) | ((w1 >> 24) << 31);
    let mut sm = u; // bit i set iff u has a set bit at i or above
    sm |= sm >> 1;
    sm |= sm >> 2;
    sm |= sm >> 4;
    sm |= sm >> 8;
    sm |= sm >> 16;
    let zl = !sm & 0xFF; // lanes where the existing bits are all zero
    let m = zl & zl.wrapping_neg(); // the first such lane (0 if none)
    let first = m & (((n_lin & m.wrapping_sub(1)) == 0) as u32).wrapping_neg();
    let second = ((first & n_lin) << 1) & 0xFF;
    n_lin ^ pre3(first ^ second)
}

/// S group at window offset `o`: bits o+33 … o+40 from bits o … o+32.
#[inline(always)]
fn s_group(y: &mut [u32; 4], o: usize) {
    let n8 = s_step8(win(y, o), win(y, o + 8));
    or_byte(y, o + 33, n8);
}

/// B group K of a step: x_{t+95+8K} … x_{t+102+8K}; `acc` as in the 64-bit variant.
///
/// The serial part x_n = x_{n-1} + V_n with V_n = pre_n + x_{n-6} + x_{n-9} x_{n-5} x_{n-4} x_{n-2}
/// runs two clocks at a time on one word: V reads nothing newer than x_{n-2}, so V of two
/// consecutive clocks comes from one evaluation, and the x_{n-1} chain is a 2-lane prefix sum.
/// (No 0/1-per-register array: on the 8-low-register Cortex-M0+ it spilled to the stack.)
#[inline(always)]
fn b_group<const K: usize>(x: &mut [u32; 4], acc: u32) {
    let pre = (acc >> (8 * K)) ^ boolfn::g_mid8(|i| win(x, 8 * K + i));
    // bit i = x_{t+8K+86+i}: 0 … 8 exist, the group's new bits go to 9 … 16 (zero so far)
    let mut w = win(x, 86 + 8 * K);
    // unrolled by hand: at opt-level "s" a loop kept the shift amounts in registers
    #[inline(always)]
    fn two<const D: u32>(w: &mut u32, pre: u32) {
        let w0 = *w;
        let v = ((pre >> D) ^ (w0 >> (D + 3)) ^ ((w0 >> D) & (w0 >> (D + 4)) & (w0 >> (D + 5)) & (w0 >> (D + 7)))) & 3;
        let newest = ((w0 >> (D + 8)) & 1).wrapping_neg();
        *w = w0 | (((v ^ (v << 1) ^ newest) & 3) << (D + 9));
    }
    two::<0>(&mut w, pre);
    two::<2>(&mut w, pre);
    two::<4>(&mut w, pre);
    two::<6>(&mut w, pre);
    or_byte(x, 95 + 8 * K, (w >> 9) & 0xFF);
}

/// P1 selection for 32 lanes: `t` the 4-leaf normal forms (see `DracoFast32::sel`), `s` the
/// lanes of s2, s6, s11, s17, s21, s25, s30 (SELECT_TAPS). A balanced mux tree, depth-first.
///
/// The lower two tree levels run as a loop over 8 blocks of 4 quads: with the table walked
/// by a pointer every load has a small immediate offset (Thumb-1 `ldr` reaches 124 bytes;
/// the fully unrolled tree spent two extra instructions per load forming offsets).
#[inline(always)]
fn select32(t: &[[u32; 4]; 32], s: &[u32; 7]) -> u32 {
    #[inline(always)]
    fn mux(a: u32, b: u32, s: u32) -> u32 {
        a ^ ((a ^ b) & s)
    }
    let (s0, s1, s01) = (s[0], s[1], s[0] & s[1]);
    let q = |v: &[u32; 4]| v[0] ^ (v[1] & s0) ^ (v[2] & s1) ^ (v[3] & s01);
    // (from_fn, not a zeroed array filled in a loop: at opt-level "s" that was a memclr call)
    let m4: [u32; 8] = core::array::from_fn(|k| {
        let b = &t[4 * k..4 * k + 4];
        let lo = mux(q(&b[0]), q(&b[1]), s[2]);
        let hi = mux(q(&b[2]), q(&b[3]), s[2]);
        mux(lo, hi, s[3])
    });
    let m8 = |k: usize| mux(m4[2 * k], m4[2 * k + 1], s[4]);
    let m16 = |k: usize| mux(m8(2 * k), m8(2 * k + 1), s[5]);
    mux(m16(0), m16(1), s[6])
}

impl DracoFast32 {
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
        self.nv = [0; 4];
        for j in 0..128 {
            self.nv[j / 32] |= (p::nv_bit(key, iv, j) as u32) << (j % 32);
        }
        self.set_select_masks();
        self.buf = 0;
        self.avail = 0;
        p::run_init(self);
        self.ready = true;
    }

    /// Start from arbitrary registers and non-volatile state (one value 0/1 per byte), skipping
    /// P2. For cross-checks on hand-picked states.
    pub fn from_registers(b: &[u8; 95], s: &[u8; 33], n: &[u8; 128]) -> Self {
        let mut c = Self::default();
        for (i, &v) in b.iter().enumerate() {
            c.x[i / 32] |= ((v & 1) as u32) << (i % 32);
        }
        for (i, &v) in s.iter().enumerate() {
            c.y[i / 32] |= ((v & 1) as u32) << (i % 32);
        }
        for (j, &v) in n.iter().enumerate() {
            c.nv[j / 32] |= ((v & 1) as u32) << (j % 32);
        }
        c.set_select_masks();
        c.ready = true;
        c
    }

    fn set_select_masks(&mut self) {
        for g in 0..32 {
            let n = |i: usize| (self.nv[g / 8] >> (4 * (g % 8) + i)) & 1;
            let q = [n(0), n(0) ^ n(1), n(0) ^ n(2), n(0) ^ n(1) ^ n(2) ^ n(3)];
            self.sel[g] = q.map(|b| b.wrapping_neg());
        }
    }

    /// One clock on the registers, bit by bit (the P2 mixing clocks). Returns z.
    fn slow_clock(&mut self, mix: u32) -> u32 {
        let x = self.x;
        let s = self.y[0];
        let bb = |i: usize| (x[i / 32] >> (i % 32)) & 1;
        let ss = |i: usize| (s >> i) & 1;
        let z = boolfn::z(bb, ss);
        let mut j = 0u32;
        for (k, &t) in SELECT_TAPS.iter().enumerate() {
            j |= ss(t) << k;
        }
        // n_j without an index that depends on the state: every word read, one kept
        let mut c = 0u32;
        for (w, &n) in self.nv.iter().enumerate() {
            c |= (n >> (j & 31)) & ((j >> 5 == w as u32) as u32);
        }
        let u = (s >> 1) | (self.y[1] << 31); // s1 … s32
        let zero = (u == 0) as u32;
        let new_b = boolfn::g(bb) ^ ss(0) ^ c ^ (mix & z);
        let new_s = (boolfn::f_core(ss) ^ ss(30) ^ zero ^ (mix & z)) & 1;
        self.x = [(x[0] >> 1) | (x[1] << 31), (x[1] >> 1) | (x[2] << 31), (x[2] >> 1) | ((new_b & 1) << 30), 0];
        self.y = [u, new_s, 0, 0];
        self.primed = false;
        z & 1
    }

    /// S bits y_{t+33} … y_{t+64}, if not yet there.
    #[inline]
    fn prime(&mut self) {
        if !self.primed {
            let mut y = [self.y[0], self.y[1] & 1, 0, 0];
            s_group(&mut y, 0);
            s_group(&mut y, 8);
            s_group(&mut y, 16);
            s_group(&mut y, 24);
            self.y = y;
            self.primed = true;
        }
    }

    /// 32 clocks. Returns z_t … z_{t+31} with z_{t+d} in bit d.
    #[inline]
    fn step32(&mut self) -> u32 {
        self.prime();
        let y = self.y; // y_t … y_{t+64}
        let sy = |i: usize| win(&y, i);
        // y_{t+32} … y_{t+64}, extended below to y_{t+96} (same groups as `prime`)
        let mut yn = [y[1], y[2], 0, 0];

        // 1. P1 selection for the 32 clocks, and s0 + c.
        let sel: [u32; 7] = core::array::from_fn(|k| sy(SELECT_TAPS[k]));
        let c = select32(&self.sel, &sel);

        // 2. B: 32 new bits x_{t+95} … x_{t+126}; next step's S bits in between.
        let mut x = self.x;
        let m16 = |x: &[u32; 4], o: usize| boolfn::g_mid16(|i| win(x, o + i)) & 0xFFFF;
        let mut acc = boolfn::g_low(|i| win(&x, i)) ^ sy(0) ^ c ^ boolfn::g_mid32(|i| win(&x, i)) ^ m16(&x, 0);
        b_group::<0>(&mut x, acc);
        s_group(&mut yn, 0);
        b_group::<1>(&mut x, acc);
        s_group(&mut yn, 8);
        acc ^= m16(&x, 16) << 16;
        b_group::<2>(&mut x, acc);
        s_group(&mut yn, 16);
        b_group::<3>(&mut x, acc);
        s_group(&mut yn, 24);

        // 3. 32 outputs.
        let z = boolfn::z(|i| win(&x, i), sy);

        // 4. advance the windows by 32 clocks
        self.x = [x[1], x[2], x[3], 0];
        self.y = yn;
        z
    }

    /// The next `r` (1 … 32) keystream bits, first one in bit 31, lower bits zero.
    #[inline]
    fn take(&mut self, r: u32) -> u32 {
        debug_assert!((1..=32).contains(&r));
        let mask = !0u32 << (32 - r);
        if self.avail >= r {
            let w = self.buf & mask;
            self.buf = self.buf.checked_shl(r).unwrap_or(0);
            self.avail -= r;
            w
        } else {
            let fresh = self.step32().reverse_bits();
            let a = self.avail;
            let w = (self.buf | fresh.checked_shr(a).unwrap_or(0)) & mask;
            let used = r - a;
            self.buf = fresh.checked_shl(used).unwrap_or(0);
            self.avail = 32 - used;
            w
        }
    }
}

impl InitOps for DracoFast32 {
    fn load_key(&mut self) {
        self.x = [0; 4];
        self.y = [0; 4];
        for i in 0..95 {
            self.x[i / 32] |= (p::b_key_bit(&self.key, i) as u32) << (i % 32);
        }
        for i in 0..33 {
            self.y[i / 32] |= (p::s_key_bit(&self.key, i) as u32) << (i % 32);
        }
        self.primed = false;
    }
    fn mix_clock(&mut self) {
        self.slow_clock(1);
    }
    fn readd_key(&mut self) {
        for i in 0..95 {
            self.x[i / 32] ^= (p::b_key_bit(&self.key, i) as u32) << (i % 32);
        }
        for i in 0..33 {
            self.y[i / 32] ^= (p::s_key_bit(&self.key, i) as u32) << (i % 32);
        }
        self.primed = false;
    }
    fn diffusion_clocks(&mut self, n: usize) {
        for _ in 0..n / 32 {
            self.step32();
        }
        for _ in 0..n % 32 {
            self.slow_clock(0);
        }
    }
}

impl StreamCipher for DracoFast32 {
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
        for chunk in out[..nbits / 32 * 4].chunks_exact_mut(4) {
            chunk.copy_from_slice(&self.take(32).to_be_bytes());
            pos += 32;
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
