/* AES-128-CCM (NIST SP 800-38C) behind the NIST LWC API for mcu/lx106/harness.c: by default a
 * 12-byte nonce (so a 3-byte length field, messages up to 2^24 - 1 bytes) and a 16-byte tag;
 * with -DLWC_CCM_STAR_MIC=M (api.h), CCM* as IEEE 802.15.4 uses it with a MIC: a 13-byte
 * nonce (2-byte length field, messages up to 2^16 - 1 bytes) and an M-byte MIC, M = 4, 8 or
 * 16. Written for this project; constant-time as aes128.c is (the tag check included). */
#include <stdint.h>
#include "aes128.h"
#include "api.h"
#include "crypto_aead.h"

#define CCM_L (15u - CRYPTO_NPUBBYTES) /* bytes of the length field and of the counter */

/* SP 800-38C A.1 allows a nonce of 7..13 bytes; put_len writes a 2- or 3-byte length field, so
 * 12 or 13 here. A tag of 4..16 even bytes (M = 0, CCM*'s encryption without authentication,
 * is not built here). */
_Static_assert(CRYPTO_NPUBBYTES == 12 || CRYPTO_NPUBBYTES == 13, "CCM nonce of 12 or 13 bytes");
_Static_assert(CRYPTO_ABYTES >= 4 && CRYPTO_ABYTES <= 16 && CRYPTO_ABYTES % 2 == 0, "CCM tag of 4..16 even bytes");

typedef struct {
    aes128_key key;
    uint8_t x[16];
    unsigned pos;
} ccm_mac;

/* CBC-MAC over a byte string that continues the previous one (the caller pads by flushing). */
static void mac_absorb(ccm_mac *s, const uint8_t *p, unsigned long long n) {
    for (unsigned long long i = 0; i < n; i++) {
        s->x[s->pos++] ^= p[i];
        if (s->pos == 16) {
            aes128_encrypt(&s->key, s->x, s->x);
            s->pos = 0;
        }
    }
}

/* Zero-pad to the block boundary. */
static void mac_flush(ccm_mac *s) {
    if (s->pos) {
        aes128_encrypt(&s->key, s->x, s->x);
        s->pos = 0;
    }
}

/* The last CCM_L bytes of a block: v big-endian. Inlined stores, as the 12-byte-nonce image
 * always had them (its committed cycles and size stay those of the same code). */
static inline __attribute__((always_inline)) void put_len(uint8_t b[16], uint32_t v) {
#if CCM_L == 3
    b[13] = (uint8_t)(v >> 16);
#endif
    b[14] = (uint8_t)(v >> 8);
    b[15] = (uint8_t)v;
}

static void ctr_block(uint8_t a[16], const uint8_t *npub, uint32_t i) {
    a[0] = (uint8_t)(CCM_L - 1u);
    for (unsigned j = 0; j < CRYPTO_NPUBBYTES; j++) a[1 + j] = npub[j];
    put_len(a, i);
}

/* The tag T (before encryption with S0) of the plaintext m and the associated data. */
static int ccm_tag(ccm_mac *s, uint8_t t[16], const uint8_t *m, unsigned long long mlen, const uint8_t *ad,
                   unsigned long long adlen, const uint8_t *npub) {
    uint8_t b[16];
    if (mlen >= (1ull << (8 * CCM_L)) || adlen > 0xffffffffull) return -1;
    b[0] = (uint8_t)((adlen ? 0x40u : 0u) | (((CRYPTO_ABYTES - 2u) / 2u) << 3) | (CCM_L - 1u));
    for (unsigned j = 0; j < CRYPTO_NPUBBYTES; j++) b[1 + j] = npub[j];
    put_len(b, (uint32_t)mlen);
    for (unsigned j = 0; j < 16; j++) s->x[j] = 0;
    s->pos = 0;
    mac_absorb(s, b, 16);
    if (adlen) {
        /* the length encoding of SP 800-38C A.2.2: two bytes below 2^16 - 2^8, else 0xfffe + four */
        unsigned n = 0;
        if (adlen < 0xff00u) {
            b[n++] = (uint8_t)(adlen >> 8);
        } else {
            b[n++] = 0xff;
            b[n++] = 0xfe;
            b[n++] = (uint8_t)(adlen >> 24);
            b[n++] = (uint8_t)(adlen >> 16);
            b[n++] = (uint8_t)(adlen >> 8);
        }
        b[n++] = (uint8_t)adlen;
        mac_absorb(s, b, n);
        mac_absorb(s, ad, adlen);
        mac_flush(s);
    }
    mac_absorb(s, m, mlen);
    mac_flush(s);
    for (unsigned j = 0; j < 16; j++) t[j] = s->x[j];
    return 0;
}

/* CTR with counters 1, 2, ... (counter 0 encrypts the tag). */
static void ccm_ctr(const aes128_key *k, uint8_t *out, const uint8_t *in, unsigned long long n, const uint8_t *npub) {
    uint8_t a[16], ks[16];
    uint32_t i = 1;
    for (unsigned long long off = 0; off < n; off += 16, i++) {
        ctr_block(a, npub, i);
        aes128_encrypt(k, ks, a);
        for (unsigned j = 0; j < 16 && off + j < n; j++) out[off + j] = in[off + j] ^ ks[j];
    }
}

int crypto_aead_encrypt(unsigned char *c, unsigned long long *clen, const unsigned char *m, unsigned long long mlen,
                        const unsigned char *ad, unsigned long long adlen, const unsigned char *nsec,
                        const unsigned char *npub, const unsigned char *k) {
    ccm_mac s;
    uint8_t t[16], a[16], s0[16];
    (void)nsec;
    aes128_expand(&s.key, k);
    if (ccm_tag(&s, t, m, mlen, ad, adlen, npub)) return -1;
    ccm_ctr(&s.key, c, m, mlen, npub);
    ctr_block(a, npub, 0);
    aes128_encrypt(&s.key, s0, a);
    for (unsigned j = 0; j < CRYPTO_ABYTES; j++) c[mlen + j] = t[j] ^ s0[j];
    *clen = mlen + CRYPTO_ABYTES;
    return 0;
}

int crypto_aead_decrypt(unsigned char *m, unsigned long long *mlen, unsigned char *nsec, const unsigned char *c,
                        unsigned long long clen, const unsigned char *ad, unsigned long long adlen,
                        const unsigned char *npub, const unsigned char *k) {
    ccm_mac s;
    uint8_t t[16], a[16], s0[16];
    (void)nsec;
    if (clen < CRYPTO_ABYTES) return -1;
    unsigned long long n = clen - CRYPTO_ABYTES;
    aes128_expand(&s.key, k);
    ccm_ctr(&s.key, m, c, n, npub);
    if (ccm_tag(&s, t, m, n, ad, adlen, npub)) return -1;
    ctr_block(a, npub, 0);
    aes128_encrypt(&s.key, s0, a);
    for (unsigned j = 0; j < CRYPTO_ABYTES; j++) t[j] ^= s0[j];
    if (aes_ct_diff(t, c + n, CRYPTO_ABYTES)) {
        /* no unauthenticated plaintext leaves */
        for (unsigned long long j = 0; j < n; j++) m[j] = 0;
        return -1;
    }
    *mlen = n;
    return 0;
}
