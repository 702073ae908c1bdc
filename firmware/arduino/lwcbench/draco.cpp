// DRACO stream cipher, provisional reconstruction — implementation of draco.h.
//
// Specification: shared/specs/draco.md (output function z, feedback functions f and g: third-
// party model; P1 selection, P2 initialization, P3 bit order: this project's provisional
// choices, all in `namespace provisional` below).
//
// Constraints (Arduino / ESP-IDF use): C++17, no heap, no exceptions, no RTTI, no STL, only
// fixed-width integer types (no __int128), so it builds unchanged for 32-bit targets.
#include "draco.h"

namespace {

// ---------------------------------------------------------------------------------------------
// Everything provisional (P1, P2, P3) lives here. Replace this block when the published
// definition becomes available; nothing else encodes these choices.
// ---------------------------------------------------------------------------------------------
namespace provisional {

// P1: c = n_j with j = s2 + 2·s6 + 4·s11 + 8·s17 + 16·s21 + 32·s25 + 64·s30
// (kSelTaps[k] is the S index of bit k of j).
constexpr int kSelTaps[7] = {2, 6, 11, 17, 21, 25, 30};
// P1: non-volatile state N = iv0..iv95 ‖ k0..k31.
constexpr int kNvIvBits = 96;
constexpr int kNvKeyBits = 32;
static_assert(kNvIvBits + kNvKeyBits == 128, "N has 128 bits");

// P2: load b_i = k_{kBLoadOffset+i}, s_i = k_{kSLoadOffset+i}; mix with z fed back; re-add
// the key the same way; diffuse.
constexpr int kBLoadOffset = 0;
constexpr int kSLoadOffset = 95;
constexpr int kMixClocks = 128;
constexpr int kDiffusionClocks = 128;

// P3: bit i of a byte string, most significant bit of each byte first.
inline uint32_t msb_bit(const uint8_t *bytes, int i) {
    return (bytes[i >> 3] >> (7 - (i & 7))) & 1u;
}

// P3: store the low 8·nbytes bits of w (bit t = keystream bit t) most significant bit first.
// XOR into out when Xor, else overwrite. Bits of w past the wanted count must be zero.
template <bool Xor>
inline void store_msb_first(uint64_t w, uint8_t *out, int nbytes) {
    // reverse the bits inside every byte, so keystream bit 8m+t lands at bit 7-t of byte m
    w = ((w >> 1) & 0x5555555555555555ull) | ((w & 0x5555555555555555ull) << 1);
    w = ((w >> 2) & 0x3333333333333333ull) | ((w & 0x3333333333333333ull) << 2);
    w = ((w >> 4) & 0x0F0F0F0F0F0F0F0Full) | ((w & 0x0F0F0F0F0F0F0F0Full) << 4);
    for (int m = 0; m < nbytes; ++m) {
        const uint8_t v = static_cast<uint8_t>(w >> (8 * m));
        if (Xor) {
            out[m] = static_cast<uint8_t>(out[m] ^ v);
        } else {
            out[m] = v;
        }
    }
}

// P3: XOR keystream bit i (0/1) into its place in out.
inline void xor_bit_msb_first(uint8_t *out, size_t i, uint32_t v) {
    out[i >> 3] = static_cast<uint8_t>(out[i >> 3] ^ (v << (7 - (i & 7))));
}

// P1 + P2: the one initialization routine, shared by both variants. V supplies the state
// primitives: set_n/set_b/set_s (load into a zeroed state), xor_b/xor_s, mix (clocks with z
// added to both new bits) and discard (plain keystream clocks, output dropped).
template <class V>
void initialize(typename V::State &st, const uint8_t *key, const uint8_t *iv) {
    for (int i = 0; i < kNvIvBits; ++i) V::set_n(st, i, msb_bit(iv, i));
    for (int i = 0; i < kNvKeyBits; ++i) V::set_n(st, kNvIvBits + i, msb_bit(key, i));
    for (int i = 0; i < 95; ++i) V::set_b(st, i, msb_bit(key, kBLoadOffset + i));
    for (int i = 0; i < 33; ++i) V::set_s(st, i, msb_bit(key, kSLoadOffset + i));
    V::mix(st, kMixClocks);
    for (int i = 0; i < 95; ++i) V::xor_b(st, i, msb_bit(key, kBLoadOffset + i));
    for (int i = 0; i < 33; ++i) V::xor_s(st, i, msb_bit(key, kSLoadOffset + i));
    V::discard(st, kDiffusionClocks);
}

}  // namespace provisional

// Zero memory through a volatile pointer so the compiler cannot drop the stores.
void wipe_bytes(void *p, size_t n) {
    volatile uint8_t *v = static_cast<volatile uint8_t *>(p);
    for (size_t i = 0; i < n; ++i) v[i] = 0;
}

// =============================================================================================
// Reference variant: one byte per state bit, formulas transcribed term by term from the spec.
// =============================================================================================
struct Ref {
    using State = draco_ref_state;

    // Output function z (spec "Output function"), state before the clock.
    static uint8_t output_z(const State &st) {
        const uint8_t *b = st.b;
        const uint8_t *s = st.s;
        const uint8_t L = b[7] ^ b[15] ^ b[32] ^ b[47] ^ b[66] ^ b[80] ^ b[92];
        const uint8_t Q = (b[5] & b[85]) ^ (b[12] & b[74]) ^ (b[20] & b[69]) ^ (b[34] & b[57]);
        const uint8_t T1 = b[53] ^ (b[38] & b[44]) ^ (b[23] & b[49] & b[83]) ^ (b[6] & b[33] & b[51] & b[73]) ^
                           (b[4] & b[29] & b[43] & b[60] & b[81]) ^
                           (b[9] & b[14] & b[35] & b[42] & b[55] & b[77]) ^
                           (b[1] & b[16] & b[28] & b[45] & b[64] & b[75] & b[88]);
        const uint8_t T2 = s[26] ^ (s[5] & s[19]) ^ (s[11] & s[22] & b[31]);
        const uint8_t T3 = b[76] ^ (s[3] & b[10]) ^ (s[20] & b[21] & b[30]) ^ (s[6] & s[29] & b[62] & b[72]);
        return static_cast<uint8_t>(L ^ Q ^ T1 ^ T2 ^ T3);
    }

    // Feedback of S (spec "Feedback of S").
    static uint8_t feedback_f(const State &st) {
        const uint8_t *s = st.s;
        uint8_t v = s[0] ^ s[2] ^ s[7] ^ s[9] ^ s[10] ^ s[15] ^ s[23] ^ s[25] ^ s[30];
        v ^= (s[8] & s[15]) ^ (s[12] & s[16]) ^ (s[13] & s[15]) ^ (s[13] & s[25]);
        v ^= (s[1] & s[8] & s[14]) ^ (s[1] & s[8] & s[18]) ^ (s[8] & s[12] & s[16]) ^ (s[8] & s[14] & s[18]) ^
             (s[8] & s[15] & s[16]) ^ (s[8] & s[15] & s[17]) ^ (s[15] & s[17] & s[24]);
        v ^= (s[1] & s[8] & s[14] & s[17]) ^ (s[1] & s[8] & s[17] & s[18]) ^ (s[1] & s[14] & s[17] & s[24]) ^
             (s[1] & s[17] & s[18] & s[24]) ^ (s[8] & s[12] & s[16] & s[17]) ^ (s[8] & s[14] & s[17] & s[18]) ^
             (s[8] & s[15] & s[16] & s[17]) ^ (s[12] & s[16] & s[17] & s[24]) ^
             (s[14] & s[17] & s[18] & s[24]) ^ (s[15] & s[16] & s[17] & s[24]);
        // (1+s1)(1+s2)…(1+s32): 1 only when s1..s32 are all zero
        uint8_t any = 0;
        for (int i = 1; i <= 32; ++i) any |= s[i];
        return static_cast<uint8_t>(v ^ (any ^ 1));
    }

    // Feedback of B (spec "Feedback of B").
    static uint8_t feedback_g(const State &st) {
        const uint8_t *b = st.b;
        return static_cast<uint8_t>(
            b[0] ^ b[26] ^ b[56] ^ b[89] ^ b[94] ^ (b[3] & b[67]) ^ (b[11] & b[13]) ^ (b[17] & b[18]) ^
            (b[27] & b[59]) ^ (b[36] & b[39]) ^ (b[40] & b[48]) ^ (b[50] & b[79]) ^ (b[54] & b[71]) ^
            (b[58] & b[63]) ^ (b[61] & b[65]) ^ (b[68] & b[84]) ^ (b[8] & b[46] & b[87]) ^
            (b[22] & b[24] & b[25]) ^ (b[70] & b[78] & b[82]) ^ (b[86] & b[90] & b[91] & b[93]));
    }

    // P1: the selected non-volatile bit.
    static uint8_t select_c(const State &st) {
        int j = 0;
        for (int k = 0; k < 7; ++k) j |= st.s[provisional::kSelTaps[k]] << k;
        return st.n[j];
    }

    // One clock; returns z. With mix, z is added to both new bits (initialization phase 2).
    static uint8_t clock(State &st, bool mix) {
        const uint8_t z = output_z(st);
        const uint8_t zf = mix ? z : 0;
        const uint8_t nb = static_cast<uint8_t>(feedback_g(st) ^ st.s[0] ^ select_c(st) ^ zf);
        const uint8_t ns = static_cast<uint8_t>(feedback_f(st) ^ zf);
        for (int i = 0; i < 94; ++i) st.b[i] = st.b[i + 1];
        for (int i = 0; i < 32; ++i) st.s[i] = st.s[i + 1];
        st.b[94] = nb;
        st.s[32] = ns;
        return z;
    }

    // Primitives for provisional::initialize.
    static void set_n(State &st, int i, uint32_t v) { st.n[i] = static_cast<uint8_t>(v); }
    static void set_b(State &st, int i, uint32_t v) { st.b[i] = static_cast<uint8_t>(v); }
    static void set_s(State &st, int i, uint32_t v) { st.s[i] = static_cast<uint8_t>(v); }
    static void xor_b(State &st, int i, uint32_t v) { st.b[i] = static_cast<uint8_t>(st.b[i] ^ v); }
    static void xor_s(State &st, int i, uint32_t v) { st.s[i] = static_cast<uint8_t>(st.s[i] ^ v); }
    static void mix(State &st, int n) {
        for (int t = 0; t < n; ++t) clock(st, true);
    }
    static void discard(State &st, int n) {
        for (int t = 0; t < n; ++t) clock(st, false);
    }
};

// =============================================================================================
// Fast variant.
//
// View each register as a bit stream x_0, x_1, …: at clock t the register holds x_t..x_{t+L-1}
// and the new bit is x_{t+L}. A tap at index i over 64 consecutive clocks is then the 64-bit
// window of the stream starting at i, so one word operation evaluates a term for many clocks.
// * S is autonomous in keystream mode. Without its s30 term and all-zero term, f reads only
//   s0..s25, so 8 new bits come from one word evaluation plus a lag-3 prefix XOR; the all-zero
//   term can only fire if 25 known bits are zero (checked, then a bit-serial fallback). S runs
//   128 clocks ahead of B, its stream buffered in s_a/s_b.
// * B's feedback reads b93 nonlinearly and b94 linearly, so B is inherently serial. Terms with
//   taps ≤ 31 are evaluated for all 64 clocks at once, those with taps ≤ 87 8 clocks at a
//   time; b89, b94 and b86·b90·b91·b93 bit by bit on 0/1 values held in registers.
// * c for 64 clocks is a 7-input multiplexer over N, evaluated bit-sliced on the 7 S windows
//   (first level precomputed per key/IV as masks: no secret-dependent memory address).
// * The only data-dependent branch is the all-zero fallback of S above (taken when 25 S bits
//   are zero, about once per 2^25 clocks).
// * z for 64 clocks: one evaluation of the output function on 64-bit windows.
// =============================================================================================

// Tap accessor over a 2-word register (lo = bits 0..63, hi = bits 64..): window at I,
// valid for the low W bits.
template <int W>
struct RegAcc {
    uint64_t lo, hi, s;
    template <int I>
    uint64_t bt() const {
        if constexpr (I >= 64) {
            return hi >> (I - 64);
        } else if constexpr (I == 0 || I + W <= 64) {
            return lo >> I;
        } else {
            return (lo >> I) | (hi << (64 - I));
        }
    }
    template <int I>
    uint64_t st() const { return s >> I; }
};

// Tap accessor over three stream words of B (W0 = x_T.., W1, W2) and two of S: 64-bit windows.
struct WinAcc {
    uint64_t w0, w1, w2, sa, sb;
    template <int I>
    uint64_t bt() const {
        if constexpr (I == 0) {
            return w0;
        } else if constexpr (I < 64) {
            return (w0 >> I) | (w1 << (64 - I));
        } else if constexpr (I == 64) {
            return w1;
        } else {
            return (w1 >> (I - 64)) | (w2 << (128 - I));
        }
    }
    template <int I>
    uint64_t st() const {
        if constexpr (I == 0) {
            return sa;
        } else {
            return (sa >> I) | (sb << (64 - I));
        }
    }
};

#define B(i) a.template bt<i>()
#define S(i) a.template st<i>()

// Output function z.
template <class A>
inline uint64_t fn_z(const A &a) {
    const uint64_t L = B(7) ^ B(15) ^ B(32) ^ B(47) ^ B(66) ^ B(80) ^ B(92);
    const uint64_t Q = (B(5) & B(85)) ^ (B(12) & B(74)) ^ (B(20) & B(69)) ^ (B(34) & B(57));
    const uint64_t T1 = B(53) ^ (B(38) & B(44)) ^ (B(23) & B(49) & B(83)) ^ (B(6) & B(33) & B(51) & B(73)) ^
                        (B(4) & B(29) & B(43) & B(60) & B(81)) ^ (B(9) & B(14) & B(35) & B(42) & B(55) & B(77)) ^
                        (B(1) & B(16) & B(28) & B(45) & B(64) & B(75) & B(88));
    const uint64_t T2 = S(26) ^ (S(5) & S(19)) ^ (S(11) & S(22) & B(31));
    const uint64_t T3 = B(76) ^ (S(3) & B(10)) ^ (S(20) & B(21) & B(30)) ^ (S(6) & S(29) & B(62) & B(72));
    return L ^ Q ^ T1 ^ T2 ^ T3;
}

// g split by top tap index, so each part can be evaluated as soon as its taps exist:
// fn_g31 (taps ≤ 31) for a whole 64-clock block, fn_g87 (taps ≤ 87) 8 clocks at a time, and
// b89 + b94 + b86·b90·b91·b93 bit by bit (see Fast::block).
template <class A>
inline uint64_t fn_g31(const A &a) {
    return B(0) ^ B(26) ^ (B(11) & B(13)) ^ (B(17) & B(18)) ^ (B(22) & B(24) & B(25));
}
template <class A>
inline uint64_t fn_g87(const A &a) {
    return B(56) ^ (B(3) & B(67)) ^ (B(27) & B(59)) ^ (B(36) & B(39)) ^ (B(40) & B(48)) ^ (B(50) & B(79)) ^
           (B(54) & B(71)) ^ (B(58) & B(63)) ^ (B(61) & B(65)) ^ (B(68) & B(84)) ^ (B(8) & B(46) & B(87)) ^
           (B(70) & B(78) & B(82));
}

// f without s30 and without the all-zero term: reads s0..s25 only. The 26 nonlinear terms of
// the spec factor (by hand, checked against the term-by-term reference) into
//   s12·s16 + s13·(s15 + s25) + K·(s8 + s17·(s8 + s24)),
//   K = s15·(1 + s16) + s1·(s14 + s18) + s12·s16 + s14·s18.
template <class A>
inline uint64_t fn_f_low(const A &a) {
    const uint64_t s8 = S(8), s12 = S(12), s15 = S(15), s16 = S(16), s25 = S(25);
    const uint64_t s12s16 = s12 & s16;
    const uint64_t k = (s15 & ~s16) ^ (S(1) & (S(14) ^ S(18))) ^ s12s16 ^ (S(14) & S(18));
    return S(0) ^ S(2) ^ S(7) ^ S(9) ^ S(10) ^ s15 ^ S(23) ^ s25 ^ s12s16 ^ (S(13) & (s15 ^ s25)) ^
           (k & (s8 ^ (S(17) & (s8 ^ S(24)))));
}

#undef B
#undef S

constexpr uint32_t kFlagInit = 1;
constexpr uint32_t kFlagPipelined = 2;
constexpr uint64_t kS33 = (1ull << 33) - 1;

struct Fast {
    using State = draco_fast_state;

    // Full f of the S register r (33 bits), bit 0.
    static uint64_t f_bit(uint64_t r) {
        const RegAcc<1> a{0, 0, r};
        const uint64_t all_zero = static_cast<uint64_t>(((r >> 1) & 0xFFFFFFFFull) == 0);
        return (fn_f_low(a) ^ (r >> 30) ^ all_zero) & 1;
    }

    // Advance the S register r by 64 clocks, returning its s0 of those clocks (bit t = clock t).
    static uint64_t gen64(uint64_t &r) {
        uint64_t out = 0;
        for (int q = 0; q < 8; ++q) {
            uint64_t nw;
            if ((r >> 8) & 0x1FFFFFFull) {
                // s8..s32 not all zero, so the all-zero term is 0 for these 8 clocks.
                const RegAcc<8> a{0, 0, r};
                nw = fn_f_low(a) ^ ((r >> 30) & 7);  // x_{t+33} = x_{t+30} + f_low, lag 3:
                nw ^= nw << 3;                       // fold in the new bits that are s30 of
                nw ^= nw << 6;                       // the later clocks
                r |= (nw & 0xFF) << 33;
            } else {
                uint64_t x = r;  // bit-serial fallback, 8 clocks
                for (int k = 0; k < 8; ++k) {
                    const uint64_t cur = (x >> k) & kS33;
                    x |= f_bit(cur) << (33 + k);
                }
                r = x;
            }
            out |= (r & 0xFF) << (8 * q);
            r >>= 8;
        }
        return out;
    }

    // P1 for 64 clocks: c_t = n_{j_t}, a 7-level multiplexer tree with select planes
    // J_k = s_{kSelTaps[k]}. The first level is the key/IV-dependent masks prepared in
    // enter_pipeline, so no memory address depends on secret bits.
    // Node (L, I) is n_j for the j in [I·2^(L+1), (I+1)·2^(L+1)) picked by j's low L+1 bits.
    // Evaluated depth first and fully inlined: no array, few partial results live at a time.
    template <int L, int I>
    static uint64_t mux(const State &st, const uint64_t J[7]) {
        if constexpr (L == 0) {
            return st.sel_a[I] ^ (st.sel_d[I] & J[0]);
        } else {
            const uint64_t a = mux<L - 1, 2 * I>(st, J);
            const uint64_t b = mux<L - 1, 2 * I + 1>(st, J);
            return a ^ ((a ^ b) & J[L]);
        }
    }
    static uint64_t select_word(const State &st, const uint64_t J[7]) { return mux<6, 0>(st, J); }

    // 64 keystream clocks; returns z (bit t = clock t).
    static uint64_t block(State &st) {
        const uint64_t sa = st.s_a, sb = st.s_b;
        const WinAcc sw{0, 0, 0, sa, sb};
        using provisional::kSelTaps;
        const uint64_t J[7] = {sw.st<kSelTaps[0]>(), sw.st<kSelTaps[1]>(), sw.st<kSelTaps[2]>(),
                               sw.st<kSelTaps[3]>(), sw.st<kSelTaps[4]>(), sw.st<kSelTaps[5]>(),
                               sw.st<kSelTaps[6]>()};
        const uint64_t w0 = st.b_lo;
        uint64_t lo = st.b_lo, hi = st.b_hi;
        // Per clock: s0 + c + the g terms with taps <= 31 (they exist for all 64 clocks).
        const WinAcc bw{lo, hi, 0, 0, 0};
        const uint64_t ysc = sa ^ select_word(st, J) ^ fn_g31(bw);

        // h[i] = b_{86+i} (0/1) of the current 8-clock group, carried between groups so the
        // bit-serial chain runs on single-bit values in registers, not on packed words.
        uint64_t h[9];
        for (int i = 0; i < 9; ++i) h[i] = (hi >> (86 - 64 + i)) & 1;
        for (int k = 0; k < 8; ++k) {
            const RegAcc<8> a{lo, hi, 0};
            const uint64_t y = fn_g87(a) ^ (ysc >> (8 * k));
            uint64_t v[17];
            for (int i = 0; i < 9; ++i) v[i] = h[i];
            uint64_t nw = 0;
            for (int q = 0; q < 8; ++q) {
                // new b94 = b94 + b89 + b86·b90·b91·b93 + (everything else, in y)
                v[9 + q] = v[8 + q] ^ v[3 + q] ^ (v[q] & v[4 + q] & v[5 + q] & v[7 + q]) ^ ((y >> q) & 1);
                nw |= v[9 + q] << q;
            }
            for (int i = 0; i < 9; ++i) h[i] = v[8 + i];
            hi |= nw << 31;
            lo = (lo >> 8) | (hi << 56);
            hi >>= 8;
        }
        st.b_lo = lo;
        st.b_hi = hi;

        // w0 (B at the block start), lo, hi now hold the B stream x_T..x_{T+158}, and sa, sb the
        // S stream: every tap z reads over the 64 clocks (up to b92 and s29 at clock T+63).
        const WinAcc a{w0, lo, hi, sa, sb};
        const uint64_t z = fn_z(a);
        st.s_a = sb;
        st.s_b = gen64(st.s_gen);
        return z;
    }

    static void enter_pipeline(State &st) {
        // first multiplexer level of P1: pair (n_2i, n_2i+1) selected by J0 is
        // n_2i + (n_2i + n_2i+1)·J0; masks of all ones or zeros
        for (int i = 0; i < 64; ++i) {
            const uint64_t e = ((i < 32 ? st.n_lo : st.n_hi) >> (2 * (i & 31))) & 1;
            const uint64_t o = ((i < 32 ? st.n_lo : st.n_hi) >> (2 * (i & 31) + 1)) & 1;
            st.sel_a[i] = 0 - e;
            st.sel_d[i] = 0 - (e ^ o);
        }
        uint64_t r = st.s_gen;
        st.s_a = gen64(r);
        st.s_b = gen64(r);
        st.s_gen = r;
        st.flags |= kFlagPipelined;
    }

    // Next 64 keystream bits, after any buffered ones.
    static uint64_t next64(State &st) {
        const uint64_t blk = block(st);
        const uint32_t av = st.z_avail;
        if (av == 0) return blk;
        const uint64_t w = st.z_buf | (blk << av);
        st.z_buf = blk >> (64 - av);
        return w;
    }

    // Next r < 64 keystream bits in the low bits (upper bits zero).
    static uint64_t next_bits(State &st, uint32_t r) {
        const uint64_t mask = (1ull << r) - 1;
        const uint32_t av = st.z_avail;
        if (r <= av) {
            const uint64_t w = st.z_buf & mask;
            st.z_buf >>= r;
            st.z_avail = av - r;
            return w;
        }
        const uint64_t blk = block(st);
        const uint64_t w = (st.z_buf | (blk << av)) & mask;
        const uint32_t used = r - av;  // 1..63
        st.z_buf = blk >> used;
        st.z_avail = 64 - used;
        return w;
    }

    template <bool Xor>
    static void emit(State &st, uint8_t *out, size_t nbits) {
        size_t full = nbits / 64;
        while (full--) {
            provisional::store_msb_first<Xor>(next64(st), out, 8);
            out += 8;
        }
        const uint32_t r = static_cast<uint32_t>(nbits % 64);
        if (r) provisional::store_msb_first<Xor>(next_bits(st, r), out, static_cast<int>((r + 7) / 8));
    }

    // n_j without a secret-dependent branch or address.
    static uint64_t nv_bit(const State &st, uint32_t j) {
        const uint64_t hi_half = 0 - static_cast<uint64_t>(j >> 6);
        return (((st.n_lo >> (j & 63)) & ~hi_half) | ((st.n_hi >> (j & 63)) & hi_half)) & 1;
    }

    // P1 index of lane L (0 or 1) of the S register s, i.e. of the clock L after s's.
    template <int L>
    static uint32_t select_index(uint64_t s) {
        uint32_t j = 0;
        for (int k = 0; k < 7; ++k) j |= static_cast<uint32_t>((s >> (provisional::kSelTaps[k] + L)) & 1) << k;
        return j;
    }

    // One bit-serial clock with z added to both new bits (initialization, before pipelining).
    static void clock_mix(State &st) {
        const uint64_t lo = st.b_lo, hi = st.b_hi, s = st.s_gen;
        const RegAcc<1> a{lo, hi, s};
        const uint64_t z = fn_z(a) & 1;
        const uint64_t g = (fn_g31(a) ^ fn_g87(a) ^ (hi >> (89 - 64)) ^ (hi >> (94 - 64)) ^
                            ((hi >> (86 - 64)) & (hi >> (90 - 64)) & (hi >> (91 - 64)) & (hi >> (93 - 64)))) &
                           1;
        const uint64_t nb = g ^ (s & 1) ^ nv_bit(st, select_index<0>(s)) ^ z;
        const uint64_t ns = f_bit(s) ^ z;
        st.b_lo = (lo >> 1) | (hi << 63);
        st.b_hi = (hi >> 1) | (nb << 30);
        st.s_gen = (s >> 1) | (ns << 32);
    }

    // Two mixing clocks at once, lane 0 = clock t, lane 1 = clock t+1, all read from the state
    // at t. Every tap of lane 1 exists already (z reads up to b92/s29, g without b94 up to b93,
    // f without its all-zero term up to s30, j up to s30) except b94 and the all-zero test at
    // t+1, which need clock t's new bits and are resolved after lane 0.
    static void clock_mix2(State &st) {
        const uint64_t lo = st.b_lo, hi = st.b_hi, s = st.s_gen;
        const RegAcc<2> a{lo, hi, s};
        const uint64_t z = fn_z(a);
        const uint64_t g = fn_g31(a) ^ fn_g87(a) ^ (hi >> (89 - 64)) ^
                           ((hi >> (86 - 64)) & (hi >> (90 - 64)) & (hi >> (91 - 64)) & (hi >> (93 - 64)));
        const uint64_t c = nv_bit(st, select_index<0>(s)) | nv_bit(st, select_index<1>(s)) << 1;
        // new b94: lane 0 adds the old b94, lane 1 adds lane 0's new bit (b94 at t+1)
        uint64_t nb = (g ^ s ^ c ^ z ^ ((hi >> (94 - 64)) & 1)) & 3;
        nb ^= (nb << 1) & 2;
        // new s32: the all-zero term of lane 0 needs s1..s32 = 0; of lane 1, s2..s32 = 0 and
        // lane 0's new bit = 0
        const uint64_t f = fn_f_low(a) ^ (s >> 30) ^ z;
        const uint64_t ns0 = (f ^ static_cast<uint64_t>(((s >> 1) & 0xFFFFFFFFull) == 0)) & 1;
        const uint64_t zero1 = static_cast<uint64_t>(((s >> 2) & 0x7FFFFFFFull) == 0) & (ns0 ^ 1);
        const uint64_t ns1 = ((f >> 1) ^ zero1) & 1;
        st.b_lo = (lo >> 2) | (hi << 62);
        st.b_hi = (hi >> 2) | (nb << 29);
        st.s_gen = (s >> 2) | (ns0 << 31) | (ns1 << 32);
    }

    static void mix(State &st, int n) {
        for (; n >= 2; n -= 2) clock_mix2(st);
        if (n) clock_mix(st);
    }

    // Primitives for provisional::initialize (the state starts zeroed).
    static void set_n(State &st, int i, uint32_t v) {
        if (i < 64) {
            st.n_lo |= static_cast<uint64_t>(v) << i;
        } else {
            st.n_hi |= static_cast<uint64_t>(v) << (i - 64);
        }
    }
    static void xor_b(State &st, int i, uint32_t v) {
        if (i < 64) {
            st.b_lo ^= static_cast<uint64_t>(v) << i;
        } else {
            st.b_hi ^= static_cast<uint64_t>(v) << (i - 64);
        }
    }
    static void set_b(State &st, int i, uint32_t v) { xor_b(st, i, v); }
    static void xor_s(State &st, int i, uint32_t v) { st.s_gen ^= static_cast<uint64_t>(v) << i; }
    static void set_s(State &st, int i, uint32_t v) { xor_s(st, i, v); }
    static void discard(State &st, int n) {
        if (!(st.flags & kFlagPipelined)) enter_pipeline(st);
        for (; n >= 64; n -= 64) next64(st);
        if (n > 0) next_bits(st, static_cast<uint32_t>(n));
    }
};

// Reference keystream: one clock per bit. Xor = apply, else overwrite (zero, then add).
template <bool Xor>
void ref_emit(draco_ref_state &st, uint8_t *out, size_t nbits) {
    if (!Xor) {
        for (size_t m = 0; m < (nbits + 7) / 8; ++m) out[m] = 0;
    }
    for (size_t i = 0; i < nbits; ++i) provisional::xor_bit_msb_first(out, i, Ref::clock(st, false));
}

}  // namespace

extern "C" {

size_t draco_ref_state_size(void) { return sizeof(draco_ref_state); }
size_t draco_fast_state_size(void) { return sizeof(draco_fast_state); }

int draco_ref_init(draco_ref_state *st, const uint8_t key[DRACO_KEY_BYTES], const uint8_t iv[DRACO_IV_BYTES]) {
    if (!st || !key || !iv) return DRACO_ERR_NULL;
    wipe_bytes(st, sizeof *st);
    provisional::initialize<Ref>(*st, key, iv);
    st->ready = 1;
    return DRACO_OK;
}

int draco_ref_keystream_bits(draco_ref_state *st, uint8_t *out, size_t nbits) {
    if (!st || (!out && nbits)) return DRACO_ERR_NULL;
    if (!st->ready) return DRACO_ERR_NOT_INITIALIZED;
    ref_emit<false>(*st, out, nbits);
    return DRACO_OK;
}

int draco_ref_apply_bits(draco_ref_state *st, uint8_t *data, size_t nbits) {
    if (!st || (!data && nbits)) return DRACO_ERR_NULL;
    if (!st->ready) return DRACO_ERR_NOT_INITIALIZED;
    ref_emit<true>(*st, data, nbits);
    return DRACO_OK;
}

void draco_ref_wipe(draco_ref_state *st) {
    if (st) wipe_bytes(st, sizeof *st);
}

int draco_fast_init(draco_fast_state *st, const uint8_t key[DRACO_KEY_BYTES], const uint8_t iv[DRACO_IV_BYTES]) {
    if (!st || !key || !iv) return DRACO_ERR_NULL;
    wipe_bytes(st, sizeof *st);
    provisional::initialize<Fast>(*st, key, iv);
    st->flags |= kFlagInit;
    return DRACO_OK;
}

int draco_fast_keystream_bits(draco_fast_state *st, uint8_t *out, size_t nbits) {
    if (!st || (!out && nbits)) return DRACO_ERR_NULL;
    if (!(st->flags & kFlagInit)) return DRACO_ERR_NOT_INITIALIZED;
    Fast::emit<false>(*st, out, nbits);
    return DRACO_OK;
}

int draco_fast_apply_bits(draco_fast_state *st, uint8_t *data, size_t nbits) {
    if (!st || (!data && nbits)) return DRACO_ERR_NULL;
    if (!(st->flags & kFlagInit)) return DRACO_ERR_NOT_INITIALIZED;
    Fast::emit<true>(*st, data, nbits);
    return DRACO_OK;
}

void draco_fast_wipe(draco_fast_state *st) {
    if (st) wipe_bytes(st, sizeof *st);
}

}  // extern "C"
