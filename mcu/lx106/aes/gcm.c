/* AES-128-GCM (NIST SP 800-38D) with a 12-byte IV and a 16-byte tag, behind the NIST LWC API for
 * mcu/lx106/harness.c. Written for this project. GHASH multiplies bit by bit with masks (no
 * table, no branch on data), so it is constant-time as aes128.c is, and slow. */
#include <stdint.h>
#include "aes128.h"
#include "api.h"
#include "crypto_aead.h"

static uint32_t be32(const uint8_t *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

typedef struct {
    uint32_t h[4]; /* H, big-endian words: h[0] holds bytes 0..3 */
    uint32_t y[4];
    uint8_t buf[16];
    unsigned pos;
} ghash;

/* y = y * H in GF(2^128), SP 800-38D Algorithm 1, with masks instead of branches. */
static void gf_mul(ghash *g) {
    uint32_t z0 = 0, z1 = 0, z2 = 0, z3 = 0;
    uint32_t v0 = g->h[0], v1 = g->h[1], v2 = g->h[2], v3 = g->h[3];
    for (int i = 0; i < 128; i++) {
        uint32_t m = 0u - ((g->y[i >> 5] >> (31 - (i & 31))) & 1u);
        z0 ^= v0 & m;
        z1 ^= v1 & m;
        z2 ^= v2 & m;
        z3 ^= v3 & m;
        uint32_t r = 0u - (v3 & 1u);
        v3 = v3 >> 1 | v2 << 31;
        v2 = v2 >> 1 | v1 << 31;
        v1 = v1 >> 1 | v0 << 31;
        v0 = (v0 >> 1) ^ (0xe1000000u & r);
    }
    g->y[0] = z0;
    g->y[1] = z1;
    g->y[2] = z2;
    g->y[3] = z3;
}

static void gh_block(ghash *g) {
    for (int j = 0; j < 4; j++) g->y[j] ^= be32(g->buf + 4 * j);
    gf_mul(g);
    for (int j = 0; j < 16; j++) g->buf[j] = 0;
    g->pos = 0;
}

static void gh_absorb(ghash *g, const uint8_t *p, unsigned long long n) {
    for (unsigned long long i = 0; i < n; i++) {
        g->buf[g->pos++] = p[i];
        if (g->pos == 16) gh_block(g);
    }
}

/* Zero-pad to the block boundary. */
static void gh_flush(ghash *g) {
    if (g->pos) gh_block(g);
}

static void put_be64(uint8_t *p, unsigned long long v) {
    for (int j = 7; j >= 0; j--, v >>= 8) p[j] = (uint8_t)v;
}

/* The tag of ciphertext c and associated data, j0 the pre-counter block. */
static void gcm_tag(const aes128_key *k, uint8_t t[16], const uint8_t *c, unsigned long long clen, const uint8_t *ad,
                    unsigned long long adlen, const uint8_t j0[16]) {
    ghash g;
    uint8_t zero[16] = {0}, h[16], len[16], ek[16];
    aes128_encrypt(k, h, zero);
    for (int j = 0; j < 4; j++) g.h[j] = be32(h + 4 * j), g.y[j] = 0;
    for (int j = 0; j < 16; j++) g.buf[j] = 0;
    g.pos = 0;
    gh_absorb(&g, ad, adlen);
    gh_flush(&g);
    gh_absorb(&g, c, clen);
    gh_flush(&g);
    put_be64(len, adlen * 8u);
    put_be64(len + 8, clen * 8u);
    gh_absorb(&g, len, 16);
    aes128_encrypt(k, ek, j0);
    for (int j = 0; j < 16; j++) t[j] = (uint8_t)(g.y[j >> 2] >> (24 - 8 * (j & 3))) ^ ek[j];
}

/* GCTR from inc32(J0). */
static void gcm_ctr(const aes128_key *k, uint8_t *out, const uint8_t *in, unsigned long long n, const uint8_t j0[16]) {
    uint8_t cb[16], ks[16];
    for (int j = 0; j < 16; j++) cb[j] = j0[j];
    for (unsigned long long off = 0; off < n; off += 16) {
        for (int j = 15; j >= 12; j--)
            if (++cb[j]) break; /* inc32: public counter, not a secret */
        aes128_encrypt(k, ks, cb);
        for (unsigned j = 0; j < 16 && off + j < n; j++) out[off + j] = in[off + j] ^ ks[j];
    }
}

static void gcm_j0(uint8_t j0[16], const uint8_t *npub) {
    for (int j = 0; j < 12; j++) j0[j] = npub[j];
    j0[12] = j0[13] = j0[14] = 0;
    j0[15] = 1;
}

/* Plaintext bound of SP 800-38D: 2^39 - 256 bits. */
#define GCM_MAX_BYTES ((1ull << 36) - 32u)

int crypto_aead_encrypt(unsigned char *c, unsigned long long *clen, const unsigned char *m, unsigned long long mlen,
                        const unsigned char *ad, unsigned long long adlen, const unsigned char *nsec,
                        const unsigned char *npub, const unsigned char *k) {
    aes128_key key;
    uint8_t j0[16];
    (void)nsec;
    if (mlen > GCM_MAX_BYTES || adlen > (1ull << 61) - 1u) return -1;
    aes128_expand(&key, k);
    gcm_j0(j0, npub);
    gcm_ctr(&key, c, m, mlen, j0);
    gcm_tag(&key, c + mlen, c, mlen, ad, adlen, j0);
    *clen = mlen + CRYPTO_ABYTES;
    return 0;
}

int crypto_aead_decrypt(unsigned char *m, unsigned long long *mlen, unsigned char *nsec, const unsigned char *c,
                        unsigned long long clen, const unsigned char *ad, unsigned long long adlen,
                        const unsigned char *npub, const unsigned char *k) {
    aes128_key key;
    uint8_t j0[16], t[16];
    (void)nsec;
    if (clen < CRYPTO_ABYTES || clen - CRYPTO_ABYTES > GCM_MAX_BYTES || adlen > (1ull << 61) - 1u) return -1;
    unsigned long long n = clen - CRYPTO_ABYTES;
    aes128_expand(&key, k);
    gcm_j0(j0, npub);
    gcm_tag(&key, t, c, n, ad, adlen, j0);
    if (aes_ct_diff(t, c + n, CRYPTO_ABYTES)) return -1;
    gcm_ctr(&key, m, c, n, j0);
    *mlen = n;
    return 0;
}
