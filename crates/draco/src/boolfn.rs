//! DRACO's Boolean functions, generic over a "lane" type so one transcription serves the
//! word-parallel single stream (`u64`: 64 consecutive clocks of one stream) and the bit-sliced
//! multi-stream variant (one stream per bit). `b(i)` / `s(i)` return the lanes of tap b_i / s_i.
//!
//! Source: `shared/specs/draco.md`. `f_core` is an algebraically regrouped form of f (see its
//! doc); the tests comparing every variant with the literal reference check the regrouping.

use core::ops::{BitAnd, BitOr, BitXor, Not};

/// A bundle of independent GF(2) values with bitwise operations.
pub trait Lane:
    Copy + BitAnd<Output = Self> + BitOr<Output = Self> + BitXor<Output = Self> + Not<Output = Self>
{
}
impl<T: Copy + BitAnd<Output = T> + BitOr<Output = T> + BitXor<Output = T> + Not<Output = T>> Lane for T {}

/// Output function z = L + Q + T1 + T2 + T3.
#[inline(always)]
pub fn z<T: Lane>(b: impl Fn(usize) -> T, s: impl Fn(usize) -> T) -> T {
    let l = b(7) ^ b(15) ^ b(32) ^ b(47) ^ b(66) ^ b(80) ^ b(92);
    let q = (b(5) & b(85)) ^ (b(12) & b(74)) ^ (b(20) & b(69)) ^ (b(34) & b(57));
    let t1 = b(53)
        ^ (b(38) & b(44))
        ^ (b(23) & b(49) & b(83))
        ^ (b(6) & b(33) & b(51) & b(73))
        ^ (b(4) & b(29) & b(43) & b(60) & b(81))
        ^ (b(9) & b(14) & b(35) & b(42) & b(55) & b(77))
        ^ (b(1) & b(16) & b(28) & b(45) & b(64) & b(75) & b(88));
    let t2 = s(26) ^ (s(5) & s(19)) ^ (s(11) & s(22) & b(31));
    let t3 = b(76) ^ (s(3) & b(10)) ^ (s(20) & b(21) & b(30)) ^ (s(6) & s(29) & b(62) & b(72));
    l ^ q ^ t1 ^ t2 ^ t3
}

/// Terms of g whose taps are all ≤ 31 (word-parallel code evaluates them 64 clocks ahead).
#[inline(always)]
pub fn g_low<T: Lane>(b: impl Fn(usize) -> T) -> T {
    b(0) ^ b(26) ^ (b(11) & b(13)) ^ (b(17) & b(18)) ^ (b(22) & b(24) & b(25))
}

/// Terms of g with a tap in 32 … 87.
#[inline(always)]
pub fn g_mid<T: Lane>(b: impl Fn(usize) -> T) -> T {
    b(56)
        ^ (b(3) & b(67))
        ^ (b(27) & b(59))
        ^ (b(36) & b(39))
        ^ (b(40) & b(48))
        ^ (b(50) & b(79))
        ^ (b(54) & b(71))
        ^ (b(58) & b(63))
        ^ (b(61) & b(65))
        ^ (b(68) & b(84))
        ^ (b(8) & b(46) & b(87))
        ^ (b(70) & b(78) & b(82))
}

/// The part of [`g_mid`] whose taps are ≤ 63.
#[inline(always)]
pub fn g_mid32<T: Lane>(b: impl Fn(usize) -> T) -> T {
    b(56) ^ (b(27) & b(59)) ^ (b(36) & b(39)) ^ (b(40) & b(48)) ^ (b(58) & b(63))
}

/// The part of [`g_mid`] with a tap in 64 … 79.
#[inline(always)]
pub fn g_mid16<T: Lane>(b: impl Fn(usize) -> T) -> T {
    (b(3) & b(67)) ^ (b(50) & b(79)) ^ (b(54) & b(71)) ^ (b(61) & b(65))
}

/// The part of [`g_mid`] with a tap in 80 … 87.
#[inline(always)]
pub fn g_mid8<T: Lane>(b: impl Fn(usize) -> T) -> T {
    (b(68) & b(84)) ^ (b(8) & b(46) & b(87)) ^ (b(70) & b(78) & b(82))
}

/// Terms of g with a tap ≥ 88 (the serial part: they read the newest bits).
#[inline(always)]
pub fn g_high<T: Lane>(b: impl Fn(usize) -> T) -> T {
    b(89) ^ b(94) ^ (b(86) & b(90) & b(91) & b(93))
}

/// Feedback of B: g = g_low + g_mid + g_high.
#[inline(always)]
pub fn g<T: Lane>(b: impl Fn(usize) -> T) -> T {
    g_low(&b) ^ g_mid(&b) ^ g_high(&b)
}

/// f without its s30 term and without the all-zero term, regrouped:
/// with A = s15(1+s16) + s1(s14+s18) + s12 s16 + s14 s18,
/// f = s0+s2+s7+s9+s10+s15+s23+s25+s30 + s13(s15+s25) + s12 s16 + A·(s8 + s17(s8+s24)) + zero-term.
/// (Expanding A·s8 gives the six degree-2/3 terms with s8; A·s17·(s8+s24) the twelve terms
/// with s17.) Reads taps ≤ 25 only, so 8 consecutive clocks can be evaluated at once.
#[inline(always)]
pub fn f_core<T: Lane>(s: impl Fn(usize) -> T) -> T {
    let (s8, s12, s13, s15, s16) = (s(8), s(12), s(13), s(15), s(16));
    let a = (s15 & !s16) ^ (s(1) & (s(14) ^ s(18))) ^ (s12 & s16) ^ (s(14) & s(18));
    s(0) ^ s(2)
        ^ s(7)
        ^ s(9)
        ^ s(10)
        ^ s15
        ^ s(23)
        ^ s(25)
        ^ (s13 & (s15 ^ s(25)))
        ^ (s12 & s16)
        ^ (a & (s8 ^ (s(17) & (s8 ^ s(24)))))
}

#[inline(always)]
fn mux<T: Lane>(a: T, b: T, s: T) -> T {
    a ^ ((a ^ b) & s)
}

/// P1 multiplexer: `n(j)` lanes of the non-volatile bits, `sel[k]` lanes of `s_{SELECT_TAPS[k]}`;
/// returns n_j per lane with j = `Σ 2^k sel[k]`. A balanced tree of 127 two-way selections,
/// constant-time (no lane-dependent indexing).
#[inline(always)]
pub fn select<T: Lane>(n: impl Fn(usize) -> T, sel: &[T; 7]) -> T {
    select_pairs(|k| mux(n(2 * k), n(2 * k + 1), sel[0]), sel)
}

/// The same tree from its first level: `pair(k)` must be the selection between n_{2k} and
/// n_{2k+1} by `sel[0]` (callers with a constant N precompute it). Evaluated depth-first so
/// only a handful of values are live (no 64-entry temporary array); written as nested
/// `#[inline(always)]` functions rather than closures so that it is fully inlined into the
/// SIMD kernels.
#[inline(always)]
pub fn select_pairs<T: Lane, P: Fn(usize) -> T>(pair: P, sel: &[T; 7]) -> T {
    #[inline(always)]
    fn m4<T: Lane, P: Fn(usize) -> T>(p: &P, s: &[T; 7], k: usize) -> T {
        mux(p(2 * k), p(2 * k + 1), s[1])
    }
    #[inline(always)]
    fn m8<T: Lane, P: Fn(usize) -> T>(p: &P, s: &[T; 7], k: usize) -> T {
        mux(m4(p, s, 2 * k), m4(p, s, 2 * k + 1), s[2])
    }
    #[inline(always)]
    fn m16<T: Lane, P: Fn(usize) -> T>(p: &P, s: &[T; 7], k: usize) -> T {
        mux(m8(p, s, 2 * k), m8(p, s, 2 * k + 1), s[3])
    }
    #[inline(always)]
    fn m32<T: Lane, P: Fn(usize) -> T>(p: &P, s: &[T; 7], k: usize) -> T {
        mux(m16(p, s, 2 * k), m16(p, s, 2 * k + 1), s[4])
    }
    #[inline(always)]
    fn m64<T: Lane, P: Fn(usize) -> T>(p: &P, s: &[T; 7], k: usize) -> T {
        mux(m32(p, s, 2 * k), m32(p, s, 2 * k + 1), s[5])
    }
    mux(m64(&pair, sel, 0), m64(&pair, sel, 1), sel[6])
}
