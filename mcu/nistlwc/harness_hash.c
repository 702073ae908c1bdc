/* Harness for one NIST LWC hash implementation (mcu/nistlwc.py builds it with the
 * implementation's own sources, its lwc_crypto_hash.c included). The message is made as the
 * framework makes it (buffer::init: byte i = i & 0xff, once before the trials); the emulator
 * times lwc_encrypt only, the framework's timed region being the one hash call through
 * lwc_hash_ctx (src/lwc-benchmarking/src/experiment_timing.cpp, benchmark_hash). The entry
 * points keep the AEAD harness's names and arguments (adlen unused) so one emulation loop
 * serves both tables. */
#include <stdint.h>
#include "api.h"
#ifdef LWC_DIRECT /* the implementation's own lwc_crypto_hash.c does not build here */
#include "crypto_hash.h"
#else
#include "lwc_crypto_hash.h"
#endif

#define LWC_MAX_LEN 2048u  /* the longest h(x) input of the published tables */
#define LWC_MAX_DIGEST 64u /* the framework's MaxDigestSize */

static unsigned char lwc_msg[LWC_MAX_LEN];
unsigned char lwc_ct[LWC_MAX_DIGEST];
unsigned long long lwc_clen;

const uint32_t LWC_KEY_BYTES = 0;
const uint32_t LWC_IV_BYTES = 0;
const uint32_t LWC_MAX_INPUT = LWC_MAX_LEN;

/* Not timed: the framework's msg.init(). */
int lwc_prepare(uint32_t adlen, uint32_t mlen) {
    (void)adlen;
    if (mlen > LWC_MAX_LEN || CRYPTO_BYTES > LWC_MAX_DIGEST) return -1;
    for (uint32_t i = 0; i < LWC_MAX_LEN; i++) lwc_msg[i] = (unsigned char)(i & 0xff);
    return 0;
}

/* Timed: h(mlen) = one crypto_hash call. */
int lwc_encrypt(uint32_t adlen, uint32_t mlen) {
    (void)adlen;
    lwc_clen = CRYPTO_BYTES;
#ifdef LWC_DIRECT
    return crypto_hash(lwc_ct, lwc_msg, mlen);
#else
    return lwc_hash_ctx.hash(lwc_ct, lwc_msg, mlen);
#endif
}

void lwc_reset(void) {
    for (;;) {
    }
}

extern uint8_t __stack_top;
__attribute__((section(".vector_table"), used)) const void *const LWC_VECTORS[2] = {&__stack_top, (const void *)lwc_reset};
