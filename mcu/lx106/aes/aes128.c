/* AES-128 (FIPS 197) encryption, constant-time: see aes128.h. The state is four column words,
 * row r of a column in byte r (little-endian), so SubBytes, xtime and MixColumns work on four
 * bytes of a word with shifts, masks and XOR (SWAR) and no lookup depends on a secret. */
#include "aes128.h"

static uint32_t ld32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void st32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

/* Each byte times x modulo x^8 + x^4 + x^3 + x + 1. */
static uint32_t xtime4(uint32_t a) {
    uint32_t hi = (a >> 7) & 0x01010101u;
    return ((a & 0x7f7f7f7fu) << 1) ^ ((hi << 4) | (hi << 3) | (hi << 1) | hi);
}

/* Each byte of a times the same-lane byte of b in GF(2^8): eight masked steps, no branch. */
static uint32_t gmul4(uint32_t a, uint32_t b) {
    uint32_t r = 0;
    for (int i = 0; i < 8; i++) {
        uint32_t m = (b >> i) & 0x01010101u;
        r ^= a & ((m << 8) - m);
        a = xtime4(a);
    }
    return r;
}

/* Each byte rotated left by n (1..7) inside its own byte. */
static uint32_t rotb(uint32_t x, int n) {
    uint32_t lo = 0x01010101u * ((1u << n) - 1u);
    return ((x << n) & ~lo) | ((x >> (8 - n)) & lo);
}

/* SubBytes on four bytes: the inverse as x^254 (0 -> 0), then the affine map. */
static uint32_t sub4(uint32_t x) {
    uint32_t x2 = gmul4(x, x);
    uint32_t x3 = gmul4(x2, x);
    uint32_t x6 = gmul4(x3, x3);
    uint32_t x12 = gmul4(x6, x6);
    uint32_t x15 = gmul4(x12, x3);
    uint32_t y = x15;
    for (int i = 0; i < 4; i++) y = gmul4(y, y); /* x^240 */
    y = gmul4(y, x12);                           /* x^252 */
    y = gmul4(y, x2);                            /* x^254 */
    return y ^ rotb(y, 1) ^ rotb(y, 2) ^ rotb(y, 3) ^ rotb(y, 4) ^ 0x63636363u;
}

void aes128_expand(aes128_key *k, const uint8_t key[16]) {
    uint32_t rcon = 1;
    for (int i = 0; i < 4; i++) k->rk[i] = ld32(key + 4 * i);
    for (int i = 4; i < 44; i++) {
        uint32_t t = k->rk[i - 1];
        if (i % 4 == 0) {
            /* RotWord then SubWord (byte order little-endian: rotate right by 8) */
            t = sub4(t >> 8 | t << 24) ^ rcon;
            rcon = xtime4(rcon);
        }
        k->rk[i] = k->rk[i - 4] ^ t;
    }
}

void aes128_encrypt(const aes128_key *k, uint8_t out[16], const uint8_t in[16]) {
    uint32_t s[4], t[4];
    for (int c = 0; c < 4; c++) s[c] = ld32(in + 4 * c) ^ k->rk[c];
    for (int r = 1; r <= 10; r++) {
        for (int c = 0; c < 4; c++) s[c] = sub4(s[c]);
        /* ShiftRows: row j of column c comes from column c + j */
        for (int c = 0; c < 4; c++)
            t[c] = (s[c] & 0x000000ffu) | (s[(c + 1) & 3] & 0x0000ff00u) | (s[(c + 2) & 3] & 0x00ff0000u) |
                   (s[(c + 3) & 3] & 0xff000000u);
        for (int c = 0; c < 4; c++) {
            uint32_t w = t[c];
            if (r != 10) {
                /* MixColumns: b_i = 2a_i ^ 3a_{i+1} ^ a_{i+2} ^ a_{i+3} */
                uint32_t r1 = w >> 8 | w << 24, r2 = w >> 16 | w << 16, r3 = w >> 24 | w << 8;
                w = xtime4(w ^ r1) ^ r1 ^ r2 ^ r3;
            }
            s[c] = w ^ k->rk[4 * r + c];
        }
    }
    for (int c = 0; c < 4; c++) st32(out + 4 * c, s[c]);
}

int aes_ct_diff(const uint8_t *a, const uint8_t *b, unsigned n) {
    uint8_t d = 0;
    for (unsigned i = 0; i < n; i++) d |= (uint8_t)(a[i] ^ b[i]);
    return d != 0;
}
