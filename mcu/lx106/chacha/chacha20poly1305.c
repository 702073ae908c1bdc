/* ChaCha20 and ChaCha20-Poly1305 (RFC 8439), portable C for the ESP8266 images: see chacha20.h.
 * Poly1305 works on five 26-bit limbs (products fit 64 bits on a 32-bit core). Not hardened
 * beyond constant-time arithmetic: a model of the cost, checked against an independent
 * implementation (mcu/tests/test_lx106.py). */
#include "chacha20.h"
#include "crypto_aead.h"

static uint32_t ld32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void st32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

#define ROTL(v, n) ((v) << (n) | (v) >> (32 - (n)))
#define QR(a, b, c, d)                                                                                   \
    a += b, d ^= a, d = ROTL(d, 16), c += d, b ^= c, b = ROTL(b, 12), a += b, d ^= a, d = ROTL(d, 8), \
        c += d, b ^= c, b = ROTL(b, 7)

static void chacha20_block(chacha20_state *st) {
    uint32_t x[16];
    for (int i = 0; i < 16; i++) x[i] = st->in[i];
    for (int r = 0; r < 10; r++) {
        QR(x[0], x[4], x[8], x[12]);
        QR(x[1], x[5], x[9], x[13]);
        QR(x[2], x[6], x[10], x[14]);
        QR(x[3], x[7], x[11], x[15]);
        QR(x[0], x[5], x[10], x[15]);
        QR(x[1], x[6], x[11], x[12]);
        QR(x[2], x[7], x[8], x[13]);
        QR(x[3], x[4], x[9], x[14]);
    }
    for (int i = 0; i < 16; i++) st32(st->buf + 4 * i, x[i] + st->in[i]);
    st->in[12]++;
    st->used = 0;
}

void chacha20_setup(chacha20_state *st, const uint8_t key[32], const uint8_t nonce[12], uint32_t counter) {
    st->in[0] = 0x61707865u; /* "expand 32-byte k" */
    st->in[1] = 0x3320646eu;
    st->in[2] = 0x79622d32u;
    st->in[3] = 0x6b206574u;
    for (int i = 0; i < 8; i++) st->in[4 + i] = ld32(key + 4 * i);
    st->in[12] = counter;
    for (int i = 0; i < 3; i++) st->in[13 + i] = ld32(nonce + 4 * i);
    st->used = 64;
}

void chacha20_xor(chacha20_state *st, uint8_t *out, const uint8_t *in, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (st->used == 64) chacha20_block(st);
        out[i] = in[i] ^ st->buf[st->used++];
    }
}

int chacha20_init(chacha20_state *st, const uint8_t key[32], const uint8_t nonce[12]) {
    chacha20_setup(st, key, nonce, 0);
    return 0;
}

int chacha20_keystream_bits(chacha20_state *st, uint8_t *out, size_t nbits) {
    size_t n = (nbits + 7) / 8;
    for (size_t i = 0; i < n; i++) {
        if (st->used == 64) chacha20_block(st);
        out[i] = st->buf[st->used++];
    }
    if (nbits % 8) out[n - 1] &= (uint8_t)(0xFFu << (8 - nbits % 8));
    return 0;
}

/* --- Poly1305 ------------------------------------------------------------------------------ */

typedef struct poly1305 {
    uint32_t r[5], s[4], h[5];
    uint8_t buf[16];
    uint32_t fill;
} poly1305;

#define M26 0x3ffffffu

static void poly_init(poly1305 *p, const uint8_t key[32]) {
    /* r clamped (RFC 8439 2.5.1) and split in 26-bit limbs */
    p->r[0] = ld32(key + 0) & 0x3ffffffu;
    p->r[1] = (ld32(key + 3) >> 2) & 0x3ffff03u;
    p->r[2] = (ld32(key + 6) >> 4) & 0x3ffc0ffu;
    p->r[3] = (ld32(key + 9) >> 6) & 0x3f03fffu;
    p->r[4] = (ld32(key + 12) >> 8) & 0x00fffffu;
    for (int i = 0; i < 4; i++) p->s[i] = ld32(key + 16 + 4 * i);
    for (int i = 0; i < 5; i++) p->h[i] = 0;
    p->fill = 0;
}

/* h = (h + block) * r mod 2^130 - 5; hibit = 2^128 for a full block, 0 for the padded last one */
static void poly_block(poly1305 *p, const uint8_t *m, uint32_t hibit) {
    const uint32_t r0 = p->r[0], r1 = p->r[1], r2 = p->r[2], r3 = p->r[3], r4 = p->r[4];
    const uint32_t s1 = r1 * 5, s2 = r2 * 5, s3 = r3 * 5, s4 = r4 * 5;
    uint32_t h0 = p->h[0] + (ld32(m + 0) & M26);
    uint32_t h1 = p->h[1] + ((ld32(m + 3) >> 2) & M26);
    uint32_t h2 = p->h[2] + ((ld32(m + 6) >> 4) & M26);
    uint32_t h3 = p->h[3] + ((ld32(m + 9) >> 6) & M26);
    uint32_t h4 = p->h[4] + ((ld32(m + 12) >> 8) | hibit);
    uint64_t d0 = (uint64_t)h0 * r0 + (uint64_t)h1 * s4 + (uint64_t)h2 * s3 + (uint64_t)h3 * s2 + (uint64_t)h4 * s1;
    uint64_t d1 = (uint64_t)h0 * r1 + (uint64_t)h1 * r0 + (uint64_t)h2 * s4 + (uint64_t)h3 * s3 + (uint64_t)h4 * s2;
    uint64_t d2 = (uint64_t)h0 * r2 + (uint64_t)h1 * r1 + (uint64_t)h2 * r0 + (uint64_t)h3 * s4 + (uint64_t)h4 * s3;
    uint64_t d3 = (uint64_t)h0 * r3 + (uint64_t)h1 * r2 + (uint64_t)h2 * r1 + (uint64_t)h3 * r0 + (uint64_t)h4 * s4;
    uint64_t d4 = (uint64_t)h0 * r4 + (uint64_t)h1 * r3 + (uint64_t)h2 * r2 + (uint64_t)h3 * r1 + (uint64_t)h4 * r0;
    uint32_t c;
    c = (uint32_t)(d0 >> 26), h0 = (uint32_t)d0 & M26;
    d1 += c, c = (uint32_t)(d1 >> 26), h1 = (uint32_t)d1 & M26;
    d2 += c, c = (uint32_t)(d2 >> 26), h2 = (uint32_t)d2 & M26;
    d3 += c, c = (uint32_t)(d3 >> 26), h3 = (uint32_t)d3 & M26;
    d4 += c, c = (uint32_t)(d4 >> 26), h4 = (uint32_t)d4 & M26;
    h0 += c * 5, c = h0 >> 26, h0 &= M26;
    h1 += c;
    p->h[0] = h0, p->h[1] = h1, p->h[2] = h2, p->h[3] = h3, p->h[4] = h4;
}

static void poly_update(poly1305 *p, const uint8_t *m, size_t n) {
    while (n) {
        if (p->fill == 0 && n >= 16) {
            poly_block(p, m, 1u << 24);
            m += 16, n -= 16;
            continue;
        }
        p->buf[p->fill++] = *m++, n--;
        if (p->fill == 16) poly_block(p, p->buf, 1u << 24), p->fill = 0;
    }
}

/* Zero bytes up to the next 16-byte boundary (RFC 8439 2.8: pad16 of the AEAD's MAC data). */
static void poly_pad16(poly1305 *p) {
    static const uint8_t zero[16] = {0};
    if (p->fill) poly_update(p, zero, 16 - p->fill);
}

static void poly_finish(poly1305 *p, uint8_t tag[16]) {
    if (p->fill) {
        p->buf[p->fill] = 1;
        for (uint32_t i = p->fill + 1; i < 16; i++) p->buf[i] = 0;
        poly_block(p, p->buf, 0);
    }
    uint32_t h0 = p->h[0], h1 = p->h[1], h2 = p->h[2], h3 = p->h[3], h4 = p->h[4], c;
    c = h1 >> 26, h1 &= M26, h2 += c;
    c = h2 >> 26, h2 &= M26, h3 += c;
    c = h3 >> 26, h3 &= M26, h4 += c;
    c = h4 >> 26, h4 &= M26, h0 += c * 5;
    c = h0 >> 26, h0 &= M26, h1 += c;
    /* g = h + 5 - 2^130; take g when it does not borrow (h >= p), without a branch */
    uint32_t g0 = h0 + 5;
    c = g0 >> 26, g0 &= M26;
    uint32_t g1 = h1 + c;
    c = g1 >> 26, g1 &= M26;
    uint32_t g2 = h2 + c;
    c = g2 >> 26, g2 &= M26;
    uint32_t g3 = h3 + c;
    c = g3 >> 26, g3 &= M26;
    uint32_t g4 = h4 + c - (1u << 26);
    uint32_t keep_g = (g4 >> 31) - 1u; /* all ones when g4 did not go negative */
    h0 = (h0 & ~keep_g) | (g0 & keep_g);
    h1 = (h1 & ~keep_g) | (g1 & keep_g);
    h2 = (h2 & ~keep_g) | (g2 & keep_g);
    h3 = (h3 & ~keep_g) | (g3 & keep_g);
    h4 = (h4 & ~keep_g) | (g4 & keep_g);
    /* 130 bits to 128, plus s */
    uint32_t w0 = h0 | h1 << 26, w1 = h1 >> 6 | h2 << 20, w2 = h2 >> 12 | h3 << 14, w3 = h3 >> 18 | h4 << 8;
    uint64_t f = (uint64_t)w0 + p->s[0];
    st32(tag + 0, (uint32_t)f);
    f = (uint64_t)w1 + p->s[1] + (f >> 32);
    st32(tag + 4, (uint32_t)f);
    f = (uint64_t)w2 + p->s[2] + (f >> 32);
    st32(tag + 8, (uint32_t)f);
    f = (uint64_t)w3 + p->s[3] + (f >> 32);
    st32(tag + 12, (uint32_t)f);
}

/* --- ChaCha20-Poly1305 (RFC 8439 2.8) ------------------------------------------------------ */

int crypto_aead_encrypt(unsigned char *c, unsigned long long *clen, const unsigned char *m,
                        unsigned long long mlen, const unsigned char *ad, unsigned long long adlen,
                        const unsigned char *nsec, const unsigned char *npub, const unsigned char *k) {
    (void)nsec;
    chacha20_state cs;
    poly1305 p;
    uint8_t otk[64] = {0}, lens[16];
    /* the one-time Poly1305 key: the first 32 bytes of block 0 */
    chacha20_setup(&cs, k, npub, 0);
    chacha20_xor(&cs, otk, otk, 64);
    poly_init(&p, otk);
    chacha20_xor(&cs, c, m, (size_t)mlen); /* block 1 on */
    poly_update(&p, ad, (size_t)adlen);
    poly_pad16(&p);
    poly_update(&p, c, (size_t)mlen);
    poly_pad16(&p);
    st32(lens + 0, (uint32_t)adlen);
    st32(lens + 4, (uint32_t)(adlen >> 32));
    st32(lens + 8, (uint32_t)mlen);
    st32(lens + 12, (uint32_t)(mlen >> 32));
    poly_update(&p, lens, 16);
    poly_finish(&p, c + mlen);
    *clen = mlen + 16;
    return 0;
}
