/* Harness for one NIST LWC implementation on the Xtensa LX106 (mcu/lx106.py builds it with the
 * implementation's sources and runs it in QEMU's lx106 `sim` machine). Inputs as the NIST
 * framework makes them (src/lwc-benchmarking/src/utils.h: byte i = i & 0xff in every buffer,
 * before each trial). The cell list comes from QEMU's loader at lwc_cells (count, then ad/msg
 * pairs); each timed call sits between lwc_mark_begin and lwc_mark_end, and its result goes
 * to the host over semihosting as one text line: "cell I AD MSG RC CLEN HEX"; last, "stack BYTES",
 * the deepest stack below the harness's frame over every call (painted, lx106_stack.h).
 * -DLWC_NONE builds the baseline: the same harness without an implementation, whose size and
 * stack mcu/lx106_images.py subtracts. */
#include <stdint.h>
#include "lx106_stack.h"
#ifdef LWC_NONE
#define CRYPTO_KEYBYTES 16
#define CRYPTO_NPUBBYTES 16
#elif defined(LWC_DIRECT) /* the implementation's own lwc_crypto_aead.c does not build here */
#include "api.h"
#include "crypto_aead.h"
#else
#include "api.h"
#include "lwc_crypto_aead.h"
#endif

#define LWC_MAX_LEN 2048u
#define LWC_MAX_A 32u
#define LWC_MAX_CELLS 128u

static unsigned char lwc_msg[LWC_MAX_LEN], lwc_ad[LWC_MAX_LEN], lwc_key[LWC_MAX_A], lwc_nonce[LWC_MAX_A];
static unsigned char lwc_ct[LWC_MAX_LEN + LWC_MAX_A];
static unsigned long long lwc_clen;
static char lwc_line[2 * (LWC_MAX_LEN + LWC_MAX_A) + 96];

extern volatile const uint32_t lwc_cells[];
void lwc_mark_begin(void);
void lwc_mark_end(void);

static int lx106_simcall(int nr, int a, int b, int c) {
    register int a2 __asm__("a2") = nr;
    register int a3 __asm__("a3") = a;
    register int a4 __asm__("a4") = b;
    register int a5 __asm__("a5") = c;
    __asm__ volatile("simcall" : "+r"(a2), "+r"(a3) : "r"(a4), "r"(a5) : "memory");
    return a2;
}

/* The one call the board times: crypto_aead_encrypt through the framework's cipher record. */
void lx106_heap_reset(void);

static __attribute__((noinline)) int lwc_call(uint32_t ad, uint32_t mlen) {
#if defined(LWC_NONE)
    /* the baseline keeps every buffer the implementations' images keep (they write lwc_ct and
     * lwc_clen), so image minus baseline is the implementation alone */
    __asm__ volatile("" : : "r"(ad), "r"(mlen), "r"(lwc_ct), "r"(&lwc_clen), "r"(lwc_key), "r"(lwc_nonce)
                     : "memory");
    return 0;
#elif defined(LWC_DIRECT)
    return crypto_aead_encrypt(lwc_ct, &lwc_clen, lwc_msg, mlen, lwc_ad, ad, 0, lwc_nonce, lwc_key);
#else
    return lwc_aead_cipher.encrypt(lwc_ct, &lwc_clen, lwc_msg, mlen, lwc_ad, ad, 0, lwc_nonce, lwc_key);
#endif
}

static void lwc_fill(unsigned char *p, uint32_t n) {
    for (uint32_t i = 0; i < n; i++) p[i] = (unsigned char)(i & 0xff);
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

/* The calls run in frames below this one, so the painted stack sees only them. */
static __attribute__((noinline)) int lwc_cells_run(uint32_t n) {
    static const char hexd[] = "0123456789abcdef";
    /* One untimed call first: one-time set-up inside an implementation (mbedtls builds its AES
     * tables on first use) happens once on the board too, before the trials whose median the
     * table gives. */
    if (n) {
        lwc_fill(lwc_msg, LWC_MAX_LEN);
        lwc_fill(lwc_ad, LWC_MAX_LEN);
        lwc_fill(lwc_key, LWC_MAX_A);
        lwc_fill(lwc_nonce, LWC_MAX_A);
        lx106_heap_reset();
        (void)lwc_call(0, 0);
    }
    for (uint32_t i = 0; i < n; i++) {
        uint32_t ad = lwc_cells[1 + 2 * i], mlen = lwc_cells[2 + 2 * i];
        if (ad > LWC_MAX_LEN || mlen > LWC_MAX_LEN) return 4;
        lwc_fill(lwc_msg, LWC_MAX_LEN);
        lwc_fill(lwc_ad, LWC_MAX_LEN);
        lwc_fill(lwc_key, LWC_MAX_A);
        lwc_fill(lwc_nonce, LWC_MAX_A);
        lwc_clen = 0;
        lx106_heap_reset();
        lwc_mark_begin();
        int rc = lwc_call(ad, mlen);
        lwc_mark_end();
        uint32_t clen = lwc_clen > sizeof lwc_ct ? (uint32_t)sizeof lwc_ct : (uint32_t)lwc_clen;
        char *p = lwc_line;
        *p++ = 'c'; *p++ = 'e'; *p++ = 'l'; *p++ = 'l'; *p++ = ' ';
        p = put_u(p, i);
        p = put_u(p, ad);
        p = put_u(p, mlen);
        p = put_u(p, (uint32_t)rc);
        p = put_u(p, clen);
        for (uint32_t k = 0; k < clen; k++) {
            *p++ = hexd[lwc_ct[k] >> 4];
            *p++ = hexd[lwc_ct[k] & 15];
        }
        *p++ = '\n';
        lx106_simcall(4 /* SYS_write */, 1, (int)(intptr_t)lwc_line, (int)(p - lwc_line));
    }
    return 0;
}

int lx106_main(void) {
    uint32_t n = lwc_cells[0];
    if (n > LWC_MAX_CELLS) return 3;
    uintptr_t top = lx106_stack_paint();
    int rc = lwc_cells_run(n);
    char *p = lwc_line;
    const char *s = "stack ";
    while (*s) *p++ = *s++;
    p = put_u(p, lx106_stack_used(top));
    p[-1] = '\n';
    lx106_simcall(4 /* SYS_write */, 1, (int)(intptr_t)lwc_line, (int)(p - lwc_line));
    return rc;
}
