/* Known-answer harness for the AES-128-CCM / AES-128-GCM images (mcu/tests/test_lx106.py builds
 * it with ccm.c or gcm.c and runs it in QEMU). Unlike harness.c, whose inputs are fixed
 * (byte i = i & 0xff), the test chooses every input: the loader's words at lwc_cells are the
 * case count, then per case OP (0 encrypt, 1 decrypt), ADLEN, LEN, then the 16 key, 12 nonce,
 * ADLEN associated-data and LEN input bytes, one byte per word. Each case prints
 * "kat I RC OUTLEN HEX" over semihosting. */
#include <stdint.h>
#include "api.h"
#include "crypto_aead.h"

#define KAT_MAX 512u

extern volatile const uint32_t lwc_cells[];
static unsigned char kat_key[CRYPTO_KEYBYTES], kat_nonce[CRYPTO_NPUBBYTES], kat_ad[KAT_MAX], kat_in[KAT_MAX];
static unsigned char kat_out[KAT_MAX + CRYPTO_ABYTES];
static char kat_line[2 * (KAT_MAX + CRYPTO_ABYTES) + 64];

static int kat_simcall(int nr, int a, int b, int c) {
    register int a2 __asm__("a2") = nr;
    register int a3 __asm__("a3") = a;
    register int a4 __asm__("a4") = b;
    register int a5 __asm__("a5") = c;
    __asm__ volatile("simcall" : "+r"(a2), "+r"(a3) : "r"(a4), "r"(a5) : "memory");
    return a2;
}

static char *put_u(char *p, uint32_t v) {
    char tmp[12];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10u);
        v /= 10u;
    } while (v);
    while (n) *p++ = tmp[--n];
    *p++ = ' ';
    return p;
}

static uint32_t take(uint32_t *at, unsigned char *dst, uint32_t n) {
    for (uint32_t i = 0; i < n; i++) dst[i] = (unsigned char)lwc_cells[(*at)++];
    return n;
}

int lx106_main(void) {
    static const char hexd[] = "0123456789abcdef";
    uint32_t at = 1, cases = lwc_cells[0];
    for (uint32_t i = 0; i < cases; i++) {
        uint32_t op = lwc_cells[at++], adlen = lwc_cells[at++], len = lwc_cells[at++];
        if (op > 1 || adlen > KAT_MAX || len > KAT_MAX) return 3;
        take(&at, kat_key, CRYPTO_KEYBYTES);
        take(&at, kat_nonce, CRYPTO_NPUBBYTES);
        take(&at, kat_ad, adlen);
        take(&at, kat_in, len);
        unsigned long long outlen = 0;
        int rc = op == 0 ? crypto_aead_encrypt(kat_out, &outlen, kat_in, len, kat_ad, adlen, 0, kat_nonce, kat_key)
                         : crypto_aead_decrypt(kat_out, &outlen, 0, kat_in, len, kat_ad, adlen, kat_nonce, kat_key);
        if (rc) outlen = 0;
        char *p = kat_line;
        *p++ = 'k'; *p++ = 'a'; *p++ = 't'; *p++ = ' ';
        p = put_u(p, i);
        p = put_u(p, (uint32_t)(rc & 0xff));
        p = put_u(p, (uint32_t)outlen);
        for (uint32_t k = 0; k < outlen; k++) {
            *p++ = hexd[kat_out[k] >> 4];
            *p++ = hexd[kat_out[k] & 15];
        }
        *p++ = '\n';
        kat_simcall(4 /* SYS_write */, 1, (int)(intptr_t)kat_line, (int)(p - kat_line));
    }
    return 0;
}
