/* Trivium, bit-serial (see trivium.h). Specification: C. De Cannière, B. Preneel, "Trivium
 * Specifications", eSTREAM, 2005/2008 — the update equations below use its 1-based s_i. */
#include "trivium.h"

static inline uint8_t S(const trivium_state *st, unsigned i) {
    unsigned k = st->off + i - 1;
    return st->bit[k >= 288 ? k - 288 : k];
}

static inline void set_s(trivium_state *st, unsigned i, uint8_t v) {
    unsigned k = st->off + i - 1;
    st->bit[k >= 288 ? k - 288 : k] = v;
}

/* One clock; returns the output bit z. */
static uint8_t clock_bit(trivium_state *st) {
    uint8_t t1 = S(st, 66) ^ S(st, 93);
    uint8_t t2 = S(st, 162) ^ S(st, 177);
    uint8_t t3 = S(st, 243) ^ S(st, 288);
    uint8_t z = t1 ^ t2 ^ t3;
    t1 ^= (S(st, 91) & S(st, 92)) ^ S(st, 171);
    t2 ^= (S(st, 175) & S(st, 176)) ^ S(st, 264);
    t3 ^= (S(st, 286) & S(st, 287)) ^ S(st, 69);
    /* shift every register by one: s_{i+1} <- s_i, i.e. the ring start moves back */
    st->off = st->off == 0 ? 287 : st->off - 1;
    set_s(st, 1, t3);
    set_s(st, 94, t1);
    set_s(st, 178, t2);
    return z;
}

int trivium_init(trivium_state *st, const uint8_t key[TRIVIUM_KEY_BYTES], const uint8_t iv[TRIVIUM_IV_BYTES]) {
    if (!st || !key || !iv) return -2;
    for (unsigned i = 0; i < 288; i++) st->bit[i] = 0;
    st->off = 0;
    /* eSTREAM byte mapping: the bytes are a little-endian integer whose bit 80 - i is K_i,
     * so K1 is the most significant bit of byte 9 (shared/vectors/README.md, Trivium). */
    for (unsigned i = 0; i < 80; i++) {
        unsigned b = 79 - i;
        st->bit[i] = (key[b / 8] >> (b % 8)) & 1;      /* s1..s80 = K1..K80 */
        st->bit[93 + i] = (iv[b / 8] >> (b % 8)) & 1;  /* s94..s173 = IV1..IV80 */
    }
    st->bit[285] = st->bit[286] = st->bit[287] = 1;    /* s286..s288 = 1 */
    for (unsigned i = 0; i < 4 * 288; i++) clock_bit(st);
    st->ready = 1;
    return 0;
}

int trivium_keystream_bits(trivium_state *st, uint8_t *out, size_t nbits) {
    if (!st || !st->ready) return -1;
    for (size_t i = 0; i < (nbits + 7) / 8; i++) out[i] = 0;
    for (size_t i = 0; i < nbits; i++) out[i / 8] |= (uint8_t)(clock_bit(st) << (i % 8));
    return 0;
}

int trivium_apply_bits(trivium_state *st, uint8_t *data, size_t nbits) {
    if (!st || !st->ready) return -1;
    for (size_t i = 0; i < nbits; i++) data[i / 8] ^= (uint8_t)(clock_bit(st) << (i % 8));
    return 0;
}
