/* Harness for one NIST LWC implementation (mcu/nistlwc.py builds it with the implementation's
 * own sources, its lwc_crypto_aead.c included, from the shared NIST LWC tree). Inputs are made
 * as the NIST framework makes them (src/lwc-benchmarking/src/utils.h buffer::init: byte i =
 * i & 0xff, in every buffer, before each trial); the emulator times lwc_encrypt only, the
 * framework's timed region being the one encrypt call through lwc_aead_cipher. */
#include <stdint.h>
#include "api.h"
#ifdef LWC_DIRECT /* the implementation's own lwc_crypto_aead.c does not build here */
#include "crypto_aead.h"
#else
#include "lwc_crypto_aead.h"
#endif

#define LWC_MAX_LEN 2048u /* the longest enc(x:y) input of the published tables */
#define LWC_MAX_A 32u     /* the framework's MaxABytes / MaxKeyBytes / MaxNonceBytes */

static unsigned char lwc_msg[LWC_MAX_LEN], lwc_ad[LWC_MAX_LEN], lwc_key[LWC_MAX_A], lwc_nonce[LWC_MAX_A];
unsigned char lwc_ct[LWC_MAX_LEN + LWC_MAX_A];
unsigned long long lwc_clen;

const uint32_t LWC_KEY_BYTES = CRYPTO_KEYBYTES;
const uint32_t LWC_IV_BYTES = CRYPTO_NPUBBYTES;
const uint32_t LWC_TAG_BYTES = CRYPTO_ABYTES;
const uint32_t LWC_MAX_INPUT = LWC_MAX_LEN;

static void lwc_fill(unsigned char *p, uint32_t n) {
    for (uint32_t i = 0; i < n; i++) p[i] = (unsigned char)(i & 0xff);
}

/* Not timed: the framework's msg/ad/key/nonce .init() before each trial. */
int lwc_prepare(uint32_t adlen, uint32_t mlen) {
    if (adlen > LWC_MAX_LEN || mlen > LWC_MAX_LEN) return -1;
    lwc_fill(lwc_msg, LWC_MAX_LEN);
    lwc_fill(lwc_ad, LWC_MAX_LEN);
    lwc_fill(lwc_key, LWC_MAX_A);
    lwc_fill(lwc_nonce, LWC_MAX_A);
    return 0;
}

/* Timed: enc(adlen:mlen) = one crypto_aead_encrypt call (nsec = NULL). */
int lwc_encrypt(uint32_t adlen, uint32_t mlen) {
#ifdef LWC_DIRECT
    return crypto_aead_encrypt(lwc_ct, &lwc_clen, lwc_msg, mlen, lwc_ad, adlen, 0, lwc_nonce, lwc_key);
#else
    return lwc_aead_cipher.encrypt(lwc_ct, &lwc_clen, lwc_msg, mlen, lwc_ad, adlen, 0, lwc_nonce, lwc_key);
#endif
}

void lwc_reset(void) {
    for (;;) {
    }
}

extern uint8_t __stack_top;
__attribute__((section(".vector_table"), used)) const void *const LWC_VECTORS[2] = {&__stack_top, (const void *)lwc_reset};
