/* The project's own C/C++ stream ciphers on the LX106 (mcu/lx106_images.py, mcu/lx106_draco.py):
 * -DLWC_DRACO_REF, -DLWC_DRACO_FAST (cpp/draco), -DLWC_TRIVIUM (firmware/arduino/lwcbench) or
 * -DLWC_CHACHA20 (mcu/lx106/chacha) picks the cipher; -DLWC_NONE gives the baseline (same harness, no cipher) whose size and
 * stack are subtracted. Key and IV are the counts' fixed ones (mcu/emulate.py default_key /
 * default_iv). One untimed init + keystream first (the loop's steady state: what the board runs
 * once it has sent a message), then per entry of the cell list (its second word: keystream
 * bits) a timed init and a timed keystream call, each between lwc_mark_begin and lwc_mark_end.
 * Results go to the host as "ks NBITS RC HEX" lines and, last, "stack BYTES": the deepest
 * stack below the harness's frame over every call, found by painting. */
#include <stdint.h>
#include "lx106_stack.h"

#if defined(LWC_DRACO_REF) || defined(LWC_DRACO_FAST)
#include "draco.h"
#define LWC_KEY_BYTES DRACO_KEY_BYTES
#define LWC_IV_BYTES DRACO_IV_BYTES
#if defined(LWC_DRACO_REF)
static draco_ref_state st;
#define LWC_INIT(k, v) draco_ref_init(&st, k, v)
#define LWC_KS(o, n) draco_ref_keystream_bits(&st, o, n)
#else
static draco_fast_state st;
#define LWC_INIT(k, v) draco_fast_init(&st, k, v)
#define LWC_KS(o, n) draco_fast_keystream_bits(&st, o, n)
#endif
#elif defined(LWC_TRIVIUM)
#include "trivium.h"
#define LWC_KEY_BYTES TRIVIUM_KEY_BYTES
#define LWC_IV_BYTES TRIVIUM_IV_BYTES
static trivium_state st;
#define LWC_INIT(k, v) trivium_init(&st, k, v)
#define LWC_KS(o, n) trivium_keystream_bits(&st, o, n)
#elif defined(LWC_CHACHA20)
#include "chacha20.h"
#define LWC_KEY_BYTES CHACHA20_KEY_BYTES
#define LWC_IV_BYTES CHACHA20_NONCE_BYTES
static chacha20_state st;
#define LWC_INIT(k, v) chacha20_init(&st, k, v)
#define LWC_KS(o, n) chacha20_keystream_bits(&st, o, n)
#elif defined(LWC_NONE)
#define LWC_KEY_BYTES 16
#define LWC_IV_BYTES 16
/* the baseline's calls do nothing but keep their arguments alive */
static __attribute__((noinline)) int lwc_none(const void *a, const void *b) {
    __asm__ volatile("" : : "r"(a), "r"(b) : "memory");
    return 0;
}
#define LWC_INIT(k, v) lwc_none(k, v)
#define LWC_KS(o, n) lwc_none(o, (const void *)(uintptr_t)(n))
#else
#error "define LWC_DRACO_REF, LWC_DRACO_FAST, LWC_TRIVIUM, LWC_CHACHA20 or LWC_NONE"
#endif

#define MAX_BITS 32768u
#define MAX_CELLS 128u

extern volatile const uint32_t lwc_cells[];
void lwc_mark_begin(void);
void lwc_mark_end(void);
static uint8_t ks[MAX_BITS / 8];
static char line[MAX_BITS / 4 + 64];
static uint8_t key[LWC_KEY_BYTES], iv[LWC_IV_BYTES];

static void put(const char *p, int n) {
    register int a2 __asm__("a2") = 4; /* SYS_write */
    register int a3 __asm__("a3") = 1;
    register int a4 __asm__("a4") = (int)(intptr_t)p;
    register int a5 __asm__("a5") = n;
    __asm__ volatile("simcall" : "+r"(a2), "+r"(a3) : "r"(a4), "r"(a5) : "memory");
}

static char *put_u(char *p, uint32_t v) {
    char t[12];
    int n = 0;
    do {
        t[n++] = (char)('0' + v % 10u);
        v /= 10u;
    } while (v);
    while (n) *p++ = t[--n];
    *p++ = ' ';
    return p;
}

/* The calls run in frames below this one, so the painted stack sees only them. */
static __attribute__((noinline)) int cells(uint32_t n) {
    static const char hexd[] = "0123456789abcdef";
    (void)LWC_INIT(key, iv);
    (void)LWC_KS(ks, 128u);
    for (uint32_t c = 0; c < n; c++) {
        uint32_t bits = lwc_cells[2 + 2 * c];
        if (bits > MAX_BITS) return 4;
        lwc_mark_begin();
        int rc0 = LWC_INIT(key, iv);
        lwc_mark_end();
        lwc_mark_begin();
        int rc = LWC_KS(ks, bits);
        lwc_mark_end();
        char *p = line;
        *p++ = 'k';
        *p++ = 's';
        *p++ = ' ';
        p = put_u(p, bits);
        p = put_u(p, (uint32_t)(rc0 ? rc0 : rc));
        for (uint32_t k = 0; k < (bits + 7u) / 8u; k++) {
            *p++ = hexd[ks[k] >> 4];
            *p++ = hexd[ks[k] & 15];
        }
        *p++ = '\n';
        put(line, (int)(p - line));
    }
    return 0;
}

int lx106_main(void) {
    for (unsigned i = 0; i < LWC_KEY_BYTES; i++) key[i] = (uint8_t)(0x11u * i);
    for (unsigned i = 0; i < LWC_IV_BYTES; i++) iv[i] = (uint8_t)(0xF0u - 0x0Fu * i);
    uint32_t n = lwc_cells[0];
    if (n > MAX_CELLS) return 3;
    uintptr_t top = lx106_stack_paint();
    int rc = cells(n);
    char *p = line;
    const char *s = "stack ";
    while (*s) *p++ = *s++;
    p = put_u(p, lx106_stack_used(top));
    p[-1] = '\n';
    put(line, (int)(p - line));
    return rc;
}
