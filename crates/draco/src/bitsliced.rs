//! Bit-sliced multi-stream DRACO: many independent (key, IV) streams advanced together, one
//! stream per bit lane. Same cipher as [`crate::reference`] (spec `shared/specs/draco.md`);
//! every state bit is a lane word whose bit l belongs to stream l, and one evaluation of the
//! spec's Boolean functions ([`crate::boolfn`]) clocks all streams at once. Nothing is serial
//! across clocks except the clock itself, so the cost per stream-bit is the cost of one clock
//! divided by the lane width.
//!
//! Backends ([`Backend`]): portable `u64` (64 streams), AVX2 (`__m256i`, 256 streams) and
//! AVX-512F (`__m512i`, 512 streams), the SIMD ones through `core::arch` intrinsics inside
//! `#[target_feature]` functions, chosen at run time with `cpufeatures` (no_std). The P1
//! selection is a 127-multiplexer tree (constant-time); with AVX-512 the compiler fuses each
//! multiplexer into one `vpternlogq`.
//!
//! Registers are windows onto sequences (as in [`crate::fast`]): `b[k+i]` is b_i after k clocks
//! of the current 64-clock round, new bits are appended, and every 64 clocks the window is
//! moved back, so taps are fixed offsets from one base pointer. In keystream mode S is
//! autonomous, so each round is computed ahead in passes (S sequence, P1 selections, B bits, z)
//! that share loads between neighbouring clocks; the P2 mixing clocks (z feeds S) run one fused
//! clock at a time.
//!
//! This is the only module of the crate with `unsafe`: the SIMD wrappers and the calls into
//! `#[target_feature]` functions, each with a `// SAFETY:` comment.
#![allow(unsafe_code)]
// Index loops mirror the spec's bit indices (b_i, s_i, n_j) across lane words.
#![allow(clippy::needless_range_loop, clippy::manual_memcpy)]

use lwcbench_core::{bits, CipherError};
use zeroize::{Zeroize, ZeroizeOnDrop};

use crate::boolfn::{self, Lane};
use crate::provisional::{self as p, SELECT_TAPS};

/// How the lanes are processed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Backend {
    /// `u64` lanes, any CPU: 64 streams per group.
    Portable,
    /// AVX2 `__m256i` lanes: 256 streams per group.
    Avx2,
    /// AVX-512F `__m512i` lanes: 512 streams per group.
    Avx512,
}

#[cfg(target_arch = "x86_64")]
cpufeatures::new!(cpuid_avx2, "avx2");
#[cfg(target_arch = "x86_64")]
cpufeatures::new!(cpuid_avx512, "avx512f");

impl Backend {
    /// All backends, narrowest first.
    pub const ALL: [Backend; 3] = [Backend::Portable, Backend::Avx2, Backend::Avx512];

    /// Streams per group.
    pub const fn lanes(self) -> usize {
        match self {
            Backend::Portable => 64,
            Backend::Avx2 => 256,
            Backend::Avx512 => 512,
        }
    }

    /// The backend's name in tables and messages ("portable-u64", "avx2", "avx512").
    pub const fn name(self) -> &'static str {
        match self {
            Backend::Portable => "portable-u64",
            Backend::Avx2 => "avx2",
            Backend::Avx512 => "avx512",
        }
    }

    /// True if this CPU (and OS) can run the backend.
    pub fn available(self) -> bool {
        match self {
            Backend::Portable => true,
            #[cfg(target_arch = "x86_64")]
            Backend::Avx2 => cpuid_avx2::init_get().1,
            #[cfg(target_arch = "x86_64")]
            Backend::Avx512 => cpuid_avx512::init_get().1,
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }

    /// The widest available backend.
    pub fn best() -> Backend {
        *Self::ALL.iter().rev().find(|b| b.available()).unwrap_or(&Backend::Portable)
    }
}

/// Errors specific to the multi-stream API.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MultiError {
    /// The requested backend cannot run on this CPU.
    BackendUnavailable(Backend),
    /// More streams than lanes, zero streams, or keys and IVs of different counts.
    StreamCount {
        /// Keys given.
        keys: usize,
        /// IVs given.
        ivs: usize,
        /// Lanes of the backend.
        max: usize,
    },
    /// Output buffer / stride too small.
    Cipher(CipherError),
}

impl From<CipherError> for MultiError {
    fn from(e: CipherError) -> Self {
        MultiError::Cipher(e)
    }
}

/// A lane type holding `64·W` streams' bits, loaded from / stored to `[u64; W]`.
trait SimdLane<const W: usize>: Lane {
    fn load(w: &[u64; W]) -> Self;
    fn store(self, w: &mut [u64; W]);
    fn splat(v: u64) -> Self;
    /// Shift every 64-bit element left / right by `n` (< 64).
    fn shl(self, n: u32) -> Self;
    fn shr(self, n: u32) -> Self;
}

impl SimdLane<1> for u64 {
    #[inline(always)]
    fn splat(v: u64) -> Self {
        v
    }
    #[inline(always)]
    fn shl(self, n: u32) -> Self {
        self << n
    }
    #[inline(always)]
    fn shr(self, n: u32) -> Self {
        self >> n
    }
    #[inline(always)]
    fn load(w: &[u64; 1]) -> Self {
        w[0]
    }
    #[inline(always)]
    fn store(self, w: &mut [u64; 1]) {
        w[0] = self;
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    //! Lane wrappers. A value of these types is only ever created inside a function compiled
    //! with the matching `#[target_feature]`, which is only called after run-time detection;
    //! the operators are `#[inline(always)]` so they are compiled into that function.
    use core::arch::x86_64::*;
    use core::ops::{BitAnd, BitOr, BitXor, Not};

    use super::SimdLane;

    macro_rules! lane {
        ($name:ident, $t:ty, $w:literal, $and:ident, $or:ident, $xor:ident, $set1:ident, $load:ident, $store:ident, $sll:ident, $srl:ident) => {
            #[derive(Clone, Copy)]
            #[repr(transparent)]
            pub(super) struct $name($t);
            impl BitAnd for $name {
                type Output = Self;
                #[inline(always)]
                fn bitand(self, o: Self) -> Self {
                    // SAFETY: only reachable from code running with the feature enabled (see module doc).
                    $name(unsafe { $and(self.0, o.0) })
                }
            }
            impl BitOr for $name {
                type Output = Self;
                #[inline(always)]
                fn bitor(self, o: Self) -> Self {
                    // SAFETY: as above.
                    $name(unsafe { $or(self.0, o.0) })
                }
            }
            impl BitXor for $name {
                type Output = Self;
                #[inline(always)]
                fn bitxor(self, o: Self) -> Self {
                    // SAFETY: as above.
                    $name(unsafe { $xor(self.0, o.0) })
                }
            }
            impl Not for $name {
                type Output = Self;
                #[inline(always)]
                fn not(self) -> Self {
                    // SAFETY: as above.
                    $name(unsafe { $xor(self.0, $set1(-1)) })
                }
            }
            impl SimdLane<$w> for $name {
                #[inline(always)]
                fn load(w: &[u64; $w]) -> Self {
                    // SAFETY: `w` is $w u64 = one full vector of readable memory; unaligned load.
                    $name(unsafe { $load(w.as_ptr().cast()) })
                }
                #[inline(always)]
                fn store(self, w: &mut [u64; $w]) {
                    // SAFETY: `w` is $w u64 = one full vector of writable memory; unaligned store.
                    unsafe { $store(w.as_mut_ptr().cast(), self.0) }
                }
                #[inline(always)]
                fn splat(v: u64) -> Self {
                    // SAFETY: only reachable from code running with the feature enabled.
                    $name(unsafe { $set1(v as i64) })
                }
                #[inline(always)]
                fn shl(self, n: u32) -> Self {
                    // SAFETY: as above (`n` is a constant after inlining: immediate shift).
                    $name(unsafe { $sll(self.0, _mm_set_epi64x(0, n as i64)) })
                }
                #[inline(always)]
                fn shr(self, n: u32) -> Self {
                    // SAFETY: as above.
                    $name(unsafe { $srl(self.0, _mm_set_epi64x(0, n as i64)) })
                }
            }
        };
    }
    lane!(
        V256,
        __m256i,
        4,
        _mm256_and_si256,
        _mm256_or_si256,
        _mm256_xor_si256,
        _mm256_set1_epi64x,
        _mm256_loadu_si256,
        _mm256_storeu_si256,
        _mm256_sll_epi64,
        _mm256_srl_epi64
    );
    lane!(
        V512,
        __m512i,
        8,
        _mm512_and_si512,
        _mm512_or_si512,
        _mm512_xor_si512,
        _mm512_set1_epi64,
        _mm512_loadu_si512,
        _mm512_storeu_si512,
        _mm512_sll_epi64,
        _mm512_srl_epi64
    );
}

const BW: usize = 95 + 64;
const SW: usize = 33 + 64;

/// One group of `64·W` streams. State words: bit l of `b[k+i][l/64]` is b_i of stream l.
#[derive(Clone, Zeroize, ZeroizeOnDrop)]
#[repr(C, align(64))]
struct Group<const W: usize> {
    b: [[u64; W]; BW],
    s: [[u64; W]; SW],
    n: [[u64; W]; 128],
    /// Keystream mode, per clock of the current round: s0 + c (S's contribution to new b94),
    /// then, once the round's B bits exist, the round's keystream z.
    e: [[u64; W]; 64],
    /// Clocks done in the current 64-clock round.
    k: usize,
    /// True when the S sequence and `e` of the whole current round are already computed
    /// (keystream mode only: S is autonomous there).
    ahead: bool,
}

impl<const W: usize> Group<W> {
    fn zeroed() -> Self {
        Group { b: [[0; W]; BW], s: [[0; W]; SW], n: [[0; W]; 128], e: [[0; W]; 64], k: 0, ahead: false }
    }

    /// Set the non-volatile state and load the key (P1 layout, P2 step 1).
    /// Returns the key bits as lane words (for P2 step 3).
    fn load(&mut self, keys: &[[u8; 16]], ivs: &[[u8; 12]], kw: &mut [[u64; W]; 128]) {
        *self = Self::zeroed();
        // Per 64-lane chunk, row l = lane l's 64 bits (bit i = bit i of the string in P3
        // order), then one 64×64 transpose makes word i = bit i of every lane: 4 transposes per
        // chunk instead of 256 single-bit updates per lane (the batch opener inits a group per
        // batch, so this is on its path).
        const _: () = assert!(p::NV_KEY_BITS == 32 && matches!(p::BIT_ORDER, lwcbench_core::BitOrder::MsbFirst));
        let row = |bytes: [u8; 8]| u64::from_be_bytes(bytes).reverse_bits();
        let mut a = [0u64; 64];
        for w in 0..W {
            let lanes = keys.len().saturating_sub(w * 64).min(64);
            let at = |l: usize| w * 64 + l;
            for half in 0..2 {
                // key bits 64·half …
                for l in 0..64 {
                    a[l] = if l < lanes { row(keys[at(l)][8 * half..8 * half + 8].try_into().expect("8")) } else { 0 };
                }
                transpose64(&mut a);
                for j in 0..64 {
                    kw[64 * half + j][w] = a[j];
                }
                // N = IV ‖ k_0 … k_31 (P1): bits 0 … 63 = IV[0..8], 64 … 127 = IV[8..12] ‖ key[0..4]
                for l in 0..64 {
                    a[l] = if l >= lanes {
                        0
                    } else if half == 0 {
                        row(ivs[at(l)][..8].try_into().expect("8"))
                    } else {
                        let (iv, key) = (&ivs[at(l)], &keys[at(l)]);
                        row([iv[8], iv[9], iv[10], iv[11], key[0], key[1], key[2], key[3]])
                    };
                }
                transpose64(&mut a);
                for j in 0..64 {
                    self.n[64 * half + j][w] = a[j];
                }
            }
        }
        a.zeroize();
        for i in 0..95 {
            self.b[i] = kw[p::B_KEY_OFFSET + i];
        }
        for i in 0..33 {
            self.s[i] = kw[p::S_KEY_OFFSET + i];
        }
    }

    fn readd(&mut self, kw: &[[u64; W]; 128]) {
        self.ahead = false;
        for i in 0..95 {
            for w in 0..W {
                self.b[self.k + i][w] ^= kw[p::B_KEY_OFFSET + i][w];
            }
        }
        for i in 0..33 {
            for w in 0..W {
                self.s[self.k + i][w] ^= kw[p::S_KEY_OFFSET + i][w];
            }
        }
    }
}

/// `out.len()` clocks; `out[t]` receives z of clock t for every lane. `MIX` adds z to both new
/// bits (P2 mixing clocks).
#[inline(always)]
fn run<L: SimdLane<W>, const W: usize, const MIX: bool>(g: &mut Group<W>, out: &mut [[u64; W]]) {
    for o in out.iter_mut() {
        if !MIX && g.k == 0 && !g.ahead {
            s_pass::<L, W>(g);
            c_pass::<L, W>(g);
            b_pass::<L, W>(g);
            z_pass::<L, W>(g);
            g.ahead = true;
        }
        if !MIX && g.ahead {
            *o = g.e[g.k];
        } else {
            fused_clock::<L, W, MIX>(g, o);
        }
        g.k += 1;
        if g.k == 64 {
            g.b.copy_within(64.., 0);
            g.s.copy_within(64.., 0);
            g.k = 0;
            g.ahead = false;
        }
    }
}

/// One whole clock, S and B together (P2 mixing clocks, where z feeds S, and any keystream
/// clock that starts mid-round).
#[inline(always)]
fn fused_clock<L: SimdLane<W>, const W: usize, const MIX: bool>(g: &mut Group<W>, o: &mut [u64; W]) {
    let k = g.k;
    let bw: &[[u64; W]; 95] = g.b[k..k + 95].try_into().expect("window");
    let sw: &[[u64; W]; 33] = g.s[k..k + 33].try_into().expect("window");
    let b = |i: usize| L::load(&bw[i]);
    let s = |i: usize| L::load(&sw[i]);
    let z = boolfn::z(b, s);
    let sel: [L; 7] = core::array::from_fn(|m| s(SELECT_TAPS[m]));
    let c = boolfn::select(|j| L::load(&g.n[j]), &sel);
    // all-zero term of f: 1 iff s1 … s32 are all zero
    let mut any = s(1);
    for i in 2..33 {
        any = any | s(i);
    }
    let mut new_b = boolfn::g(b) ^ s(0) ^ c;
    let mut new_s = boolfn::f_core(s) ^ s(30) ^ !any;
    if MIX {
        new_b = new_b ^ z;
        new_s = new_s ^ z;
    }
    new_b.store(&mut g.b[k + 95]);
    new_s.store(&mut g.s[k + 33]);
    z.store(o);
}

/// Keystream mode, round start: the 64 new S bits of the round. The all-zero term needs the OR
/// of the 32-bit window s1 … s32; it comes from suffix ORs of the aligned 32-blocks
/// [0, 32) and [32, 64) and a running OR of the block the window's end is in, so each clock
/// costs two ORs instead of 31.
#[inline(always)]
fn s_pass<L: SimdLane<W>, const W: usize>(g: &mut Group<W>) {
    debug_assert_eq!(g.k, 0);
    let s = |g: &Group<W>, i: usize| L::load(&g.s[i]);
    // suffix ORs of block 0: suf[a] = s_a | … | s_31
    let mut suf = [[0u64; W]; 33];
    let mut acc = s(g, 31);
    acc.store(&mut suf[31]);
    for a in (1..31).rev() {
        acc = acc | s(g, a);
        acc.store(&mut suf[a]);
    }
    let mut run_or = s(g, 32); // OR of s_32 … s_{k+32}
    for k in 0..64 {
        if k == 32 {
            // block 1 is complete (s_63 was made at clock 30): its suffix ORs, and restart
            // the running OR at s_64
            let mut acc = s(g, 63);
            acc.store(&mut suf[31]);
            for a in (33..63).rev() {
                acc = acc | s(g, a);
                acc.store(&mut suf[a - 32]);
            }
            run_or = s(g, 64);
        }
        // window s_{k+1} … s_{k+32}
        let any = if k == 31 || k == 63 { run_or } else { L::load(&suf[(k + 1) % 32]) | run_or };
        let sw: &[[u64; W]; 33] = g.s[k..k + 33].try_into().expect("window");
        let sl = |i: usize| L::load(&sw[i]);
        let new_s = boolfn::f_core(sl) ^ sl(30) ^ !any;
        new_s.store(&mut g.s[k + 33]);
        run_or = run_or | new_s;
    }
    suf.zeroize();
}

/// Four lane words processed together: the first three levels of the P1 tree for four clocks
/// share each load of an N word.
#[derive(Clone, Copy)]
struct Four<L>([L; 4]);
macro_rules! four_op {
    ($tr:ident, $f:ident, $op:tt) => {
        impl<L: Lane> core::ops::$tr for Four<L> {
            type Output = Self;
            #[inline(always)]
            fn $f(self, o: Self) -> Self {
                Four([self.0[0] $op o.0[0], self.0[1] $op o.0[1], self.0[2] $op o.0[2], self.0[3] $op o.0[3]])
            }
        }
    };
}
four_op!(BitAnd, bitand, &);
four_op!(BitOr, bitor, |);
four_op!(BitXor, bitxor, ^);
impl<L: Lane> core::ops::Not for Four<L> {
    type Output = Self;
    #[inline(always)]
    fn not(self) -> Self {
        Four([!self.0[0], !self.0[1], !self.0[2], !self.0[3]])
    }
}

#[inline(always)]
fn mux<T: Lane>(a: T, b: T, s: T) -> T {
    a ^ ((a ^ b) & s)
}
#[inline(always)]
fn tree2<T: Lane, F: Fn(usize) -> T>(v: &F, i: usize, s: &[T]) -> T {
    mux(v(i), v(i + 1), s[0])
}
#[inline(always)]
fn tree4<T: Lane, F: Fn(usize) -> T>(v: &F, i: usize, s: &[T]) -> T {
    mux(tree2(v, i, s), tree2(v, i + 2, s), s[1])
}
#[inline(always)]
fn tree8<T: Lane, F: Fn(usize) -> T>(v: &F, i: usize, s: &[T]) -> T {
    mux(tree4(v, i, s), tree4(v, i + 4, s), s[2])
}
#[inline(always)]
fn tree16<T: Lane, F: Fn(usize) -> T>(v: &F, i: usize, s: &[T]) -> T {
    mux(tree8(v, i, s), tree8(v, i + 8, s), s[3])
}

/// Keystream mode, round start (after [`s_pass`]): e_t = s0 + c for the 64 clocks. The same
/// 127-mux tree as [`boolfn::select`], split in two: the 16 subtrees over n_{8q} … n_{8q+7}
/// (selectors s2, s6, s11) for four clocks at once, so each N word is loaded once per four
/// clocks, then the top four levels (s17, s21, s25, s30) per clock. N loads were the
/// bottleneck of the one-clock-at-a-time tree.
#[inline(always)]
fn c_pass<L: SimdLane<W>, const W: usize>(g: &mut Group<W>) {
    let mut mid = [[[0u64; W]; 16]; 4];
    for t0 in (0..64).step_by(4) {
        let s = |i: usize| L::load(&g.s[i]);
        let sel4 = |m: usize| Four(core::array::from_fn(|d| s(t0 + d + SELECT_TAPS[m])));
        let low = [sel4(0), sel4(1), sel4(2)];
        let n = |j: usize| Four([L::load(&g.n[j]); 4]);
        for q in 0..16 {
            let r = tree8(&n, 8 * q, &low);
            for d in 0..4 {
                r.0[d].store(&mut mid[d][q]);
            }
        }
        for d in 0..4 {
            let t = t0 + d;
            let high = [s(t + SELECT_TAPS[3]), s(t + SELECT_TAPS[4]), s(t + SELECT_TAPS[5]), s(t + SELECT_TAPS[6])];
            let c = tree16(&|q: usize| L::load(&mid[d][q]), 0, &high);
            (s(t) ^ c).store(&mut g.e[t]);
        }
    }
    mid.zeroize();
}

/// Keystream mode, round start (after [`c_pass`]): the 64 new B bits. g's terms with taps
/// ≤ 87 are evaluated for four clocks at once (their taps exist: the newest is b94 of the
/// first clock), so neighbouring clocks share tap loads; b89 + b94 + b86 b90 b91 b93 clock by
/// clock.
#[inline(always)]
fn b_pass<L: SimdLane<W>, const W: usize>(g: &mut Group<W>) {
    for t0 in (0..64).step_by(4) {
        let pre = {
            let b4 = |i: usize| Four(core::array::from_fn(|d| L::load(&g.b[t0 + d + i])));
            boolfn::g_low(b4) ^ boolfn::g_mid(b4) ^ Four(core::array::from_fn(|d| L::load(&g.e[t0 + d])))
        };
        for d in 0..4 {
            let t = t0 + d;
            let new_b = pre.0[d] ^ boolfn::g_high(|i: usize| L::load(&g.b[t + i]));
            new_b.store(&mut g.b[t + 95]);
        }
    }
}

/// Keystream mode, round start (after [`b_pass`]): z of the 64 clocks, four at a time, into
/// `e` (no longer needed).
#[inline(always)]
fn z_pass<L: SimdLane<W>, const W: usize>(g: &mut Group<W>) {
    for t0 in (0..64).step_by(4) {
        let z = {
            let b4 = |i: usize| Four(core::array::from_fn(|d| L::load(&g.b[t0 + d + i])));
            let s4 = |i: usize| Four(core::array::from_fn(|d| L::load(&g.s[t0 + d + i])));
            boolfn::z(b4, s4)
        };
        for d in 0..4 {
            z.0[d].store(&mut g.e[t0 + d]);
        }
    }
}

/// Transpose the 64 rows of every 64-lane chunk at once: afterwards bit c of `a[r][w]` is the
/// former bit r of `a[c][w]` (same algorithm as [`transpose64`], on lane words).
#[inline(always)]
fn transpose_rows<L: SimdLane<W>, const W: usize>(a: &mut [[u64; W]; 64]) {
    let mut j = 32usize;
    let mut m = 0x0000_0000_FFFF_FFFFu64;
    while j != 0 {
        let mask = L::splat(m);
        let mut k = 0usize;
        while k < 64 {
            for i in k..k + j {
                let x = L::load(&a[i]);
                let y = L::load(&a[i + j]);
                let t = (x.shr(j as u32) ^ y) & mask;
                (x ^ t.shl(j as u32)).store(&mut a[i]);
                (y ^ t).store(&mut a[i + j]);
            }
            k += 2 * j;
        }
        j >>= 1;
        m ^= m << j;
    }
}

fn transpose_portable(a: &mut [[u64; 1]; 64]) {
    transpose_rows::<u64, 1>(a)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn transpose_avx2(a: &mut [[u64; 4]; 64]) {
    transpose_rows::<x86::V256, 4>(a)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn transpose_avx512(a: &mut [[u64; 8]; 64]) {
    transpose_rows::<x86::V512, 8>(a)
}

fn run_portable<const MIX: bool>(g: &mut Group<1>, out: &mut [[u64; 1]]) {
    run::<u64, 1, MIX>(g, out)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn run_avx2<const MIX: bool>(g: &mut Group<4>, out: &mut [[u64; 4]]) {
    run::<x86::V256, 4, MIX>(g, out)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn run_avx512<const MIX: bool>(g: &mut Group<8>, out: &mut [[u64; 8]]) {
    run::<x86::V512, 8, MIX>(g, out)
}

/// The backends' groups behind one type. Stored inline (no allocation in this crate); callers
/// that keep many groups can box them.
#[derive(Clone)]
#[allow(clippy::large_enum_variant)]
enum Inner {
    Portable(Group<1>),
    #[cfg(target_arch = "x86_64")]
    Avx2(Group<4>),
    #[cfg(target_arch = "x86_64")]
    Avx512(Group<8>),
}

/// Up to [`Backend::lanes`] independent DRACO streams advanced together.
///
/// ```
/// use lwcbench_draco::bitsliced::MultiDraco;
/// let keys = [[1u8; 16], [2u8; 16]];
/// let ivs = [[0u8; 12], [9u8; 12]];
/// let mut m = MultiDraco::new(&keys, &ivs).unwrap();
/// let mut out = [0u8; 2 * 32]; // 32 bytes per stream, stream i at out[32*i..]
/// m.keystream(&mut out, 32).unwrap();
/// ```
#[derive(Clone)]
pub struct MultiDraco {
    inner: Inner,
    streams: usize,
}

/// Scratch clocks per call into the SIMD kernel (one 64×64 transpose per 64-lane chunk).
const CHUNK: usize = 64;

impl MultiDraco {
    /// Streams on the widest available backend.
    pub fn new(keys: &[[u8; 16]], ivs: &[[u8; 12]]) -> Result<Self, MultiError> {
        Self::with_backend(Backend::best(), keys, ivs)
    }

    /// Streams on a given backend (error if unavailable or too many streams).
    pub fn with_backend(backend: Backend, keys: &[[u8; 16]], ivs: &[[u8; 12]]) -> Result<Self, MultiError> {
        Self::check(backend, keys.len(), ivs.len())?;
        let inner = match backend {
            Backend::Portable => Inner::Portable(Group::zeroed()),
            #[cfg(target_arch = "x86_64")]
            Backend::Avx2 => Inner::Avx2(Group::zeroed()),
            #[cfg(target_arch = "x86_64")]
            Backend::Avx512 => Inner::Avx512(Group::zeroed()),
            #[cfg(not(target_arch = "x86_64"))]
            _ => unreachable!("unavailable backends were rejected above"),
        };
        let mut m = MultiDraco { inner, streams: keys.len() };
        m.init(keys, ivs);
        Ok(m)
    }

    /// Streams started from arbitrary registers and non-volatile state (one value 0/1 per byte,
    /// as in [`crate::reference`]), skipping P2. For cross-checks on hand-picked states.
    pub fn from_registers(backend: Backend, regs: &[([u8; 95], [u8; 33], [u8; 128])]) -> Result<Self, MultiError> {
        Self::check(backend, regs.len(), regs.len())?;
        fn fill<const W: usize>(g: &mut Group<W>, regs: &[([u8; 95], [u8; 33], [u8; 128])]) {
            for (l, (b, s, n)) in regs.iter().enumerate() {
                let (w, bit) = (l / 64, 1u64 << (l % 64));
                for i in 0..95 {
                    g.b[i][w] |= (b[i] & 1) as u64 * bit;
                }
                for i in 0..33 {
                    g.s[i][w] |= (s[i] & 1) as u64 * bit;
                }
                for j in 0..128 {
                    g.n[j][w] |= (n[j] & 1) as u64 * bit;
                }
            }
        }
        let inner = match backend {
            Backend::Portable => {
                let mut g = Group::zeroed();
                fill(&mut g, regs);
                Inner::Portable(g)
            }
            #[cfg(target_arch = "x86_64")]
            Backend::Avx2 => {
                let mut g = Group::zeroed();
                fill(&mut g, regs);
                Inner::Avx2(g)
            }
            #[cfg(target_arch = "x86_64")]
            Backend::Avx512 => {
                let mut g = Group::zeroed();
                fill(&mut g, regs);
                Inner::Avx512(g)
            }
            #[cfg(not(target_arch = "x86_64"))]
            _ => unreachable!("unavailable backends were rejected above"),
        };
        Ok(MultiDraco { inner, streams: regs.len() })
    }

    fn check(backend: Backend, keys: usize, ivs: usize) -> Result<(), MultiError> {
        if !backend.available() {
            return Err(MultiError::BackendUnavailable(backend));
        }
        let max = backend.lanes();
        if keys != ivs || keys == 0 || keys > max {
            return Err(MultiError::StreamCount { keys, ivs, max });
        }
        Ok(())
    }

    /// The backend this instance runs on.
    pub fn backend(&self) -> Backend {
        match self.inner {
            Inner::Portable(_) => Backend::Portable,
            #[cfg(target_arch = "x86_64")]
            Inner::Avx2(_) => Backend::Avx2,
            #[cfg(target_arch = "x86_64")]
            Inner::Avx512(_) => Backend::Avx512,
        }
    }

    /// Number of streams (keys) in this group.
    pub fn streams(&self) -> usize {
        self.streams
    }

    /// P2 for all streams at once.
    fn init(&mut self, keys: &[[u8; 16]], ivs: &[[u8; 12]]) {
        fn init_group<const W: usize>(
            g: &mut Group<W>,
            keys: &[[u8; 16]],
            ivs: &[[u8; 12]],
            run_mix: &mut dyn FnMut(&mut Group<W>, &mut [[u64; W]]),
            run_plain: &mut dyn FnMut(&mut Group<W>, &mut [[u64; W]]),
        ) {
            let mut kw = [[0u64; W]; 128];
            g.load(keys, ivs, &mut kw);
            let mut sink = [[0u64; W]; CHUNK];
            let mut left = p::MIX_CLOCKS;
            while left > 0 {
                let n = left.min(CHUNK);
                run_mix(g, &mut sink[..n]);
                left -= n;
            }
            if p::READD_KEY {
                g.readd(&kw);
            }
            let mut left = p::DIFFUSION_CLOCKS;
            while left > 0 {
                let n = left.min(CHUNK);
                run_plain(g, &mut sink[..n]);
                left -= n;
            }
            kw.zeroize();
            sink.zeroize();
        }
        match &mut self.inner {
            Inner::Portable(g) => init_group(g, keys, ivs, &mut run_portable::<true>, &mut run_portable::<false>),
            #[cfg(target_arch = "x86_64")]
            Inner::Avx2(g) => init_group(
                g,
                keys,
                ivs,
                // SAFETY: this variant is only constructed after `Backend::Avx2.available()`.
                &mut |g, o| unsafe { run_avx2::<true>(g, o) },
                // SAFETY: as above.
                &mut |g, o| unsafe { run_avx2::<false>(g, o) },
            ),
            #[cfg(target_arch = "x86_64")]
            Inner::Avx512(g) => init_group(
                g,
                keys,
                ivs,
                // SAFETY: this variant is only constructed after `Backend::Avx512.available()`.
                &mut |g, o| unsafe { run_avx512::<true>(g, o) },
                // SAFETY: as above.
                &mut |g, o| unsafe { run_avx512::<false>(g, o) },
            ),
        }
    }

    /// Raw bit-sliced keystream: `clocks` clocks, calling `sink(t, lanes)` with the z of clock
    /// t for every lane (`lanes[l / 64] >> (l % 64) & 1` is stream l's bit; lanes beyond
    /// [`streams`](Self::streams) hold zero-key filler streams).
    pub fn keystream_lanes(&mut self, clocks: usize, sink: &mut dyn FnMut(usize, &[u64])) {
        fn go<const W: usize>(
            g: &mut Group<W>,
            clocks: usize,
            sink: &mut dyn FnMut(usize, &[u64]),
            run: &mut dyn FnMut(&mut Group<W>, &mut [[u64; W]]),
        ) {
            let mut buf = [[0u64; W]; CHUNK];
            let mut t = 0;
            while t < clocks {
                let n = (clocks - t).min(CHUNK);
                run(g, &mut buf[..n]);
                for (d, w) in buf[..n].iter().enumerate() {
                    sink(t + d, w);
                }
                t += n;
            }
            buf.zeroize();
        }
        match &mut self.inner {
            Inner::Portable(g) => go(g, clocks, sink, &mut run_portable::<false>),
            #[cfg(target_arch = "x86_64")]
            // SAFETY: variant only constructed when AVX2 is available.
            Inner::Avx2(g) => go(g, clocks, sink, &mut |g, o| unsafe { run_avx2::<false>(g, o) }),
            #[cfg(target_arch = "x86_64")]
            // SAFETY: variant only constructed when AVX-512F is available.
            Inner::Avx512(g) => go(g, clocks, sink, &mut |g, o| unsafe { run_avx512::<false>(g, o) }),
        }
    }

    /// The next `nbits` keystream bits of every stream: stream i's bits go to
    /// `out[i*stride .. i*stride + ceil(nbits/8)]`, packed as P3 says (first bit = MSB, unused
    /// tail bits zero). Streams continue across calls at any bit position, like
    /// `StreamCipher::keystream_bits`.
    pub fn keystream_bits(&mut self, out: &mut [u8], stride: usize, nbits: usize) -> Result<(), MultiError> {
        let nb = bits::bytes_for(nbits);
        if stride < nb {
            return Err(CipherError::BufferTooSmall { needed: nb, got: stride }.into());
        }
        let need = if self.streams == 0 { 0 } else { (self.streams - 1) * stride + nb };
        if out.len() < need {
            return Err(CipherError::BufferTooSmall { needed: need, got: out.len() }.into());
        }
        let streams = self.streams;
        fn go<const W: usize>(
            g: &mut Group<W>,
            streams: usize,
            out: &mut [u8],
            stride: usize,
            nbits: usize,
            run: &mut dyn FnMut(&mut Group<W>, &mut [[u64; W]]),
            transpose: &mut dyn FnMut(&mut [[u64; W]; 64]),
        ) {
            let mut buf = [[0u64; W]; CHUNK];
            let mut t = 0;
            while t < nbits {
                let n = (nbits - t).min(CHUNK);
                // clock d goes to row 63-d (rows of missing clocks stay zero), so that after
                // the transpose row l is stream l's 64 bits with the first one in the MSB
                buf[..CHUNK - n].fill([0; W]);
                run(g, &mut buf[CHUNK - n..]);
                buf[CHUNK - n..].reverse();
                transpose(&mut buf);
                let nbytes = bits::bytes_for(n);
                for (i, at) in (0..streams).map(|i| (i, i * stride + t / 8)) {
                    let bytes = buf[i % 64][i / 64].to_be_bytes();
                    if nbytes == 8 {
                        // fixed-size copy: one 8-byte store, no memcpy call
                        out[at..at + 8].copy_from_slice(&bytes);
                    } else {
                        out[at..at + nbytes].copy_from_slice(&bytes[..nbytes]);
                    }
                }
                t += n;
            }
            buf.zeroize();
        }
        match &mut self.inner {
            Inner::Portable(g) => {
                go(g, streams, out, stride, nbits, &mut run_portable::<false>, &mut transpose_portable)
            }
            #[cfg(target_arch = "x86_64")]
            Inner::Avx2(g) => go(
                g,
                streams,
                out,
                stride,
                nbits,
                // SAFETY: variant only constructed when AVX2 is available.
                &mut |g, o| unsafe { run_avx2::<false>(g, o) },
                // SAFETY: as above.
                &mut |a| unsafe { transpose_avx2(a) },
            ),
            #[cfg(target_arch = "x86_64")]
            Inner::Avx512(g) => go(
                g,
                streams,
                out,
                stride,
                nbits,
                // SAFETY: variant only constructed when AVX-512F is available.
                &mut |g, o| unsafe { run_avx512::<false>(g, o) },
                // SAFETY: as above.
                &mut |a| unsafe { transpose_avx512(a) },
            ),
        }
        Ok(())
    }

    /// `bytes_per_stream` whole keystream bytes for every stream, stream i at
    /// `out[i*bytes_per_stream ..]`.
    pub fn keystream(&mut self, out: &mut [u8], bytes_per_stream: usize) -> Result<(), MultiError> {
        self.keystream_bits(out, bytes_per_stream, bytes_per_stream * 8)
    }
}

/// Transpose a 64×64 bit matrix in place: afterwards bit c of `a[r]` is the former bit r of
/// `a[c]` (bits numbered from the least significant). Recursive block swaps (Hacker's
/// Delight §7-3), 6 rounds of 32 word pairs.
pub fn transpose64(a: &mut [u64; 64]) {
    let mut j = 32usize;
    let mut m = 0x0000_0000_FFFF_FFFFu64;
    while j != 0 {
        let mut k = 0usize;
        while k < 64 {
            // swap the upper-j bits of a[k] with the lower-j bits of a[k+j] (in block)
            let t = ((a[k] >> j) ^ a[k + j]) & m;
            a[k] ^= t << j;
            a[k + j] ^= t;
            k = (k + j + 1) & !j;
        }
        j >>= 1;
        m ^= m << j;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transpose64_matches_definition() {
        let mut a = [0u64; 64];
        let mut x = 0x1234_5678_9abc_def1u64;
        for r in a.iter_mut() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            *r = x;
        }
        let orig = a;
        transpose64(&mut a);
        for r in 0..64 {
            for c in 0..64 {
                assert_eq!((a[r] >> c) & 1, (orig[c] >> r) & 1, "r{r} c{c}");
            }
        }
    }
}
